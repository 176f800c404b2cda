"""Uncertainty of a fitted form's predictions: conformal intervals, intervals that widen with the extrapolation
distance and the splits that calibrate them, leverage, the fitted ranges, and the what-if of one column."""
