"""Projected subgradient steps: the method the paper suggests for its large-margin problem."""

from __future__ import annotations

import numpy as np

from .contract import n_nonnegative
from .result import History, SolverResult

__all__ = ["projected_subgradient"]


def projected_subgradient(objective, x0=None, *, max_iter=2000, step0=None, tol=0.0, callback=None):
    """Minimise a convex ``objective`` over ``w >= 0`` by projected subgradient steps.

    The method the paper suggests for its large-margin problem (27). Iteration::

        x_{t+1} = P(x_t - s_t g_t / |g_t|),    s_t = step0 / sqrt(t + 1)

    (``P`` projects the weights onto ``w >= 0``; intercepts are free), a
    normalised subgradient step with a diminishing, square-summable-not-summable
    length (Bertsekas, Nonlinear Programming, 1999; Boyd's subgradient notes):
    with bounded subgradients the best value converges to the optimum at rate
    ``O(log t / sqrt t)``. Each step moves ``x`` by exactly ``s_t``, so ``step0``
    is a distance. The best iterate seen is returned (the objective does not
    decrease monotonically).

    Parameters
    ----------
    objective : Objective
        ``n_weights``, ``n_variables`` and ``evaluate(x)`` returning ``value`` and
        a subgradient ``grad``; e.g.
        :class:`~convexagg.aggregation.LargeMarginObjective`.
    x0 : ndarray of shape (n_variables,), default=None
        Start point (``w = 1/M``, ``b = 0`` when None); projected.
    max_iter : int, default=2000
        Number of subgradient steps.
    step0 : float, default=None
        First step length; ``max(|x0|_2, 1)`` when None.
    tol : float, default=0.0
        Stop early when the projected subgradient (``g`` with the entries that
        point out of ``w >= 0`` zeroed) has norm ``<= tol`` -- a certificate of
        optimality when the objective is differentiable there.
    callback : callable, default=None
        Called with each iteration's record.

    Returns
    -------
    SolverResult
        ``w`` the best iterate; ``z`` the positive part of its subgradient (a
        dual estimate, no guarantee); ``converged`` True only when the ``tol``
        test stopped it; ``history`` with ``objective`` (value at each iterate,
        index 0 the start), ``best`` (best value so far) and ``step``.
    """
    nb = n_nonnegative(objective)
    if x0 is None:
        x = np.zeros(objective.n_variables)
        x[:nb] = 1.0 / nb
    else:
        x = np.array(x0, dtype=np.float64)
        x[:nb] = np.maximum(x[:nb], 0.0)
    if step0 is None:
        step0 = max(float(np.linalg.norm(x)), 1.0)
    point = objective.evaluate(x)
    best = point
    history = History(("objective", "best", "step"), callback)
    history.record(objective=point.value, best=point.value, step=0.0)
    converged = False
    n_iter = 0
    for t in range(max_iter):
        g = point.grad
        projected = g.copy()
        projected[:nb] = np.where((x[:nb] <= 0) & (g[:nb] > 0), 0.0, g[:nb])
        g_norm = float(np.linalg.norm(projected))
        if g_norm <= tol:
            converged = True
            break
        s = step0 / np.sqrt(t + 1.0)
        x = x - (s / g_norm) * projected
        x[:nb] = np.maximum(x[:nb], 0.0)
        point = objective.evaluate(x)
        n_iter += 1
        if point.value < best.value:
            best = point
        history.record(objective=point.value, best=best.value, step=s)
    return SolverResult(
        w=best.x,
        z=np.maximum(best.grad[:nb], 0.0),
        n_iter=n_iter,
        converged=converged,
        history=history.arrays(),
        message="converged" if converged else "max_iter",
        n_evaluations=n_iter + 1,
    )
