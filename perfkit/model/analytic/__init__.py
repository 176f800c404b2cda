"""Chapter 3's analytic model: the S-SGD phase equations (eqs. 3.1-3.8), their application to measured phase
tables, the eq. 3.9 load-imbalance regression and scaling exponents."""
