"""An independent solver for the same problem: scipy's L-BFGS-B with bounds.

The test oracle for the other solvers, the quasi-Newton baseline a user would
build from the library's objectives (BENCHMARKS.md, "Fitting the weights"), and a
solver in its own right (``solver=LBFGSB()``).
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import minimize

from .contract import n_nonnegative
from .result import History, check_start, finish

__all__ = ["lbfgsb"]

WHY = {
    "max_iter": "increase max_iter or tol",
    "line_search": "L-BFGS-B's line search failed (ill-conditioned problem); increase alpha",
}


def lbfgsb(objective, x0=None, *, tol=1e-10, max_iter=100_000, callback=None):
    """Minimise ``objective`` over ``w >= 0`` (intercepts free) with L-BFGS-B.

    Parameters
    ----------
    objective : Objective
        ``n_weights``, ``n_variables`` and ``evaluate(x)`` returning a point with
        ``value`` and ``grad``.
    x0 : ndarray, default=None
        Start point (``w = 1/M``, ``b = 0`` when None).
    tol : float, default=1e-10
        scipy's ``pgtol`` (projected gradient, max-norm) and ``ftol``.
    max_iter : int, default=100000
        Iterations (and at most twice as many evaluations).
    callback : callable, default=None
        Called with each iteration's record.

    Returns
    -------
    SolverResult
        ``z = max(g_w, 0)``; ``history`` holds the objective after each iteration.
    """
    nb = n_nonnegative(objective)
    if x0 is None:
        x0 = np.zeros(objective.n_variables)
        x0[:nb] = 1.0 / nb
    x0 = np.array(x0, dtype=np.float64)
    x0[:nb] = np.maximum(x0[:nb], 0.0)
    x0, point = check_start(objective, x0)
    history = History(("objective", "weights"), callback)
    history.record(objective=point.value, weights=x0)
    last = {}
    evaluations = 0

    def fun(x):
        nonlocal evaluations
        evaluations += 1
        p = objective.evaluate(x)
        last["point"] = p
        return p.value, p.grad

    def each(intermediate_result):
        history.record(objective=float(intermediate_result.fun), weights=intermediate_result.x)

    bounds = [(0.0, None)] * nb + [(None, None)] * (objective.n_variables - nb)
    res = minimize(
        fun,
        x0,
        jac=True,
        method="L-BFGS-B",
        bounds=bounds,
        callback=each,
        options={"ftol": tol, "gtol": tol, "maxiter": max_iter, "maxfun": 2 * max_iter},
    )
    reason = "converged" if res.success else ("max_iter" if res.status == 1 else "line_search")
    grad = last["point"].grad if "point" in last else point.grad
    z = np.maximum(grad[:nb], 0.0)
    summary = f"{res.message}"
    return finish(
        np.asarray(res.x),
        z,
        int(res.nit),
        reason,
        history,
        tol,
        "L-BFGS-B solver",
        WHY,
        evaluations + 1,
        summary,
    )
