"""Which model: the form search by cross-validation, the black-box reference, the baselines, repeated fits and
regularisation sweeps, the error metrics and paired comparisons of frameworks."""
