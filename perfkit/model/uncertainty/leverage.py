"""Leverage of a least-squares fit, kept as a small basis that a model saves in its JSON.

:func:`leverage_basis` reduces the rows of a fit to a matrix L with L·Lᵀ = (DᵀD)⁺; :func:`leverage_of` gives
the leverage dᵀ(DᵀD)⁺d = ‖dᵀL‖² of new rows. The log-linear and hybrid forms keep L (``leverage_basis_``),
so their :meth:`leverage` needs no training rows.
"""
from __future__ import annotations

import numpy as np

__all__ = ["leverage_basis", "leverage_of"]


def leverage_basis(design) -> np.ndarray:
    """A matrix L with L·Lᵀ the pseudo-inverse of DᵀD, for the rows D of a least-squares fit (``design``).

    The leverage of a row d, dᵀ(DᵀD)⁺d = ‖dᵀL‖² (:func:`leverage_of`), is the variance of the fitted value at d
    in units of the residual variance. Directions with an eigenvalue below 1e-10 of the largest (terms the rows
    cannot tell apart) are left out, as the minimum-norm solution leaves them. An empty design gives an empty L.
    """
    D = np.asarray(design, dtype=float)
    if D.ndim != 2 or D.shape[1] == 0:
        return np.zeros((0 if D.ndim != 2 else D.shape[1], 0))
    w, V = np.linalg.eigh(D.T @ D)
    keep = w > 1e-10 * max(float(w.max()), np.finfo(float).tiny)
    return np.ascontiguousarray(V[:, keep] / np.sqrt(w[keep]))  # the layout a JSON round trip gives back


def leverage_of(rows, basis) -> np.ndarray:
    """Leverages ‖dᵀL‖² of the design rows ``rows`` under a :func:`leverage_basis` ``basis``."""
    R = np.asarray(rows, dtype=float)
    if R.shape[1] == 0:
        return np.zeros(len(R))
    Y = R @ basis
    return np.einsum("ij,ij->i", Y, Y)
