"""The model forms: the thesis's generic model (eq. 4.4), the log-linear power law (its terms and solvers), the
hybrid form (analytic costs times fitted rates), symbolic regression and the step-time models of data-parallel
training. Each implements :class:`perfkit.model.base.PerformanceForm`."""
