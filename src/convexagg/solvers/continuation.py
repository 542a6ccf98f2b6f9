"""Continuation in the stiffness ``tau`` of the paper's problem (30) (section 4)."""

from __future__ import annotations

import numpy as np

__all__ = ["continuation", "tau_schedule"]


def tau_schedule(tau, factor=10.0):
    """Stiffness values of the continuation: ``1, factor, factor^2, ...`` up to ``tau``.

    The last value is ``tau`` itself; ``[tau]`` alone when ``tau <= 1``.

    Factor 10, the default, takes fewer interior point iterations than factor 4
    on every problem measured (BENCHMARKS.md). The paper's continuation pays for
    itself only for large ``tau`` (where the barely smooth ``f_tau`` makes a cold start slow);
    for moderate ``tau`` a direct solve would be cheaper, but the paper's
    procedure is kept.

    Parameters
    ----------
    tau : float
        The final stiffness.
    factor : float, default=10.0
        Ratio of consecutive values.

    Returns
    -------
    taus : ndarray
        Increasing, ending at ``tau``.
    """
    taus = [1.0]
    while taus[-1] * factor < tau:
        taus.append(taus[-1] * factor)
    if tau <= 1.0:
        return np.array([float(tau)])
    if taus[-1] != tau:
        taus.append(float(tau))
    return np.asarray(taus)


def continuation(make_objective, taus, solve):
    """Solve problem (30) for increasing ``tau``, each solve warm-started at the last.

    The paper (section 4): "Starting from tau = 1, the primal-dual interior point
    method is used to determine the optimal w. This optimal value of w is used as
    an initial condition at the next iteration with increasing tau."

    Parameters
    ----------
    make_objective : callable
        ``tau -> objective`` (e.g. a
        :class:`~convexagg.aggregation.StiffnessObjective`).
    taus : sequence of float
        Increasing stiffness values; see :func:`tau_schedule`.
    solve : callable
        ``(objective, previous) -> SolverResult``: the solver of one stage,
        ``previous`` the last stage's result (None for the first), from which
        it warm-starts by its own policy
        (:meth:`~convexagg.solvers.SolverConfig.solve`).

    Returns
    -------
    results : list of SolverResult
        One per ``tau``; the last is the answer.
    """
    results = []
    for tau in taus:
        results.append(solve(make_objective(tau), results[-1] if results else None))
    return results
