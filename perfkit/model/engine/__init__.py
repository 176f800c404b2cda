"""How eq. 4.4 is fitted (internal: used through :class:`perfkit.model.forms.generic.GenericPerformanceModel`):
the problem and its exact objective, the varpro search with its compiled kernels, the bounded Newton refinement,
screening of starts, hops between basins, canonical forms of a fit, and the disk cache of fits."""
