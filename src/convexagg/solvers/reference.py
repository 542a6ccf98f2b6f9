"""An independent solver for the same problem: scipy's L-BFGS-B with bounds.

Used as the test oracle for the interior point method and as the baseline a
user would write by hand (benchmarks).
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import minimize

__all__ = ["lbfgsb"]


def lbfgsb(objective, w0=None, *, tol=1e-10, max_iter=100_000):
    """Minimise ``objective`` over ``w >= 0`` with L-BFGS-B.

    Parameters
    ----------
    objective : object
        Provides ``n_weights`` and ``evaluate(w)`` returning a point with
        ``value`` and ``grad``.
    w0 : ndarray, default=None
        Start point (``1/M`` when None).
    tol : float, default=1e-10
        Used for both the projected-gradient and the relative-reduction tests.

    Returns
    -------
    scipy.optimize.OptimizeResult
    """
    M = objective.n_weights
    w0 = np.full(M, 1.0 / M) if w0 is None else np.asarray(w0, dtype=np.float64)

    def fun(w):
        point = objective.evaluate(w)
        return point.value, point.grad

    return minimize(
        fun,
        w0,
        jac=True,
        method="L-BFGS-B",
        bounds=[(0.0, None)] * M,
        options={"ftol": tol, "gtol": tol, "maxiter": max_iter, "maxfun": max_iter},
    )
