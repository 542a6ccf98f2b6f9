"""Mehrotra's predictor-corrector primal-dual interior point for ``min f(x), w >= 0``.

The same perturbed KKT system as the paper's Algorithm 1
(:func:`convexagg.solvers.interior_point`), the same reduced Newton matrix
``H = hess f + diag(z / w, 0)``, the same residual-norm line search and stopping
rule (``|r_mu| <= tol`` and ``eta = z'w <= tol``); only the barrier parameter and
the direction differ (Mehrotra 1992; Nocedal & Wright, *Numerical Optimization*,
2nd ed., section 14.2, there for linear programs):

1. **predictor** (affine scaling): the Newton step for ``mu = 0``;
2. the longest steps ``s_w``, ``s_z`` that keep ``w, z >= 0`` along it give
   ``mu_aff = (w + s_w dw)'(z + s_z dz) / M``, and the centring parameter
   ``sigma = min(1, (mu_aff / mu)^3)`` with ``mu = z'w / M``;
3. **corrector**: the Newton step for the target ``sigma mu`` with the
   second-order term ``dw_aff * dz_aff`` of the complementarity equation,
   solved with the same matrix (one Hessian, two solves); if it finds no
   decrease of ``|r_target|`` the plain Newton step for the same target (a
   descent direction) is taken instead.

Where the paper's rule ``mu = eta / (2M)`` halves the gap per accepted step at
best, the corrector step lets the gap fall by orders of magnitude near the
optimum, which halves Algorithm 1's iterations (BENCHMARKS.md, "Which setting
is faster where"). With ``newton="direct"``
the Hessian of ``f`` is kept for one more iteration after a long step
(``reuse_hessian``).
"""

from __future__ import annotations

import numpy as np

from .interior_point import (
    NewtonSystem,
    converged,
    interior_finish,
    interior_setup,
    line_search,
    record,
)

__all__ = ["predictor_corrector"]


def _max_step(x, dx):
    """Largest ``s`` in ``[0, 1]`` with ``x + s dx >= 0``."""
    neg = dx < 0
    return min(1.0, float(np.min(-x[neg] / dx[neg]))) if neg.any() else 1.0


def _step(system, kkt, point, x, z, mu, constants):
    """Predictor, centring parameter, corrector and line search of one iteration.

    Returns ``(found, target, n_evaluations)``: ``found`` as
    :func:`~convexagg.solvers.interior_point.line_search` (its point None when
    no step was accepted) and the barrier target ``sigma mu`` of the step.
    """
    sufficient_decrease, backtrack, step_fraction = constants
    M = kkt.nb
    w = x[:M]
    # predictor: Newton step towards mu = 0
    r_aff = kkt.residual_norm(point.grad, x, z, 0.0)
    dx_aff = system.solve(-point.grad, r_aff)
    dz_aff = kkt.dual_step(x, z, dx_aff, 0.0)
    s_w, s_z = _max_step(w, dx_aff[:M]), _max_step(z, dz_aff)
    mu_aff = ((w + s_w * dx_aff[:M]) @ (z + s_z * dz_aff)) / M
    sigma = min(1.0, (mu_aff / mu) ** 3)

    # corrector: Newton step towards sigma mu with the second-order term
    target = sigma * mu
    r_norm = kkt.residual_norm(point.grad, x, z, target)
    evaluations = 0
    for second_order in (True, False):
        # without the second-order term the direction is the Newton step for
        # r_target, a descent direction for |r_target|: the fallback when the
        # corrected step finds no decrease (far from the central path)
        centre = (target - dx_aff[:M] * dz_aff) / w if second_order else target / w
        rhs = -point.grad.copy()
        rhs[:M] += centre
        dx = system.solve(rhs, r_norm)
        dz = kkt.dual_step(x, z, dx, centre)
        s = step_fraction * min(_max_step(w, dx[:M]), _max_step(z, dz))  # to the boundary
        found = line_search(
            system.objective, kkt, x, z, dx, dz, s, target, r_norm, sufficient_decrease, backtrack
        )
        evaluations += found[-1]
        if found[3] is not None:
            break
    return found, target, evaluations


def predictor_corrector(
    objective,
    x0=None,
    z0=None,
    *,
    tol=1e-4,
    max_iter=100,
    newton="direct",
    sufficient_decrease=0.01,
    backtrack=0.5,
    step_fraction=0.99,
    reuse_hessian=1,
    callback=None,
):
    """Mehrotra predictor-corrector on the problem of :func:`interior_point`.

    Parameters
    ----------
    objective : Objective
        ``evaluate``, and ``hessian(point)`` (``newton="direct"``) or
        ``hessp(point, v)`` and ``hess_diag(point)`` (``newton="cg"``).
    x0, z0 : ndarray, default=None
        Strictly positive start, as :func:`interior_point`.
    tol : float, default=1e-4
        Stop when ``|r_mu(x, z)|`` (at the step's target ``mu``) and ``z'w`` are
        both ``<= tol``: the paper's rule.
    max_iter : int, default=100
        Newton iterations.
    newton : {"direct", "cg"}, default="direct"
        The dense Hessian and a Cholesky solve (two solves per iteration for
        the price of one Hessian), or PCG with the Hessian diagonal.
    sufficient_decrease, backtrack : float, default=0.01, 0.5
        Backtracking on the residual norm, as in the paper.
    step_fraction : float, default=0.99
        Fraction of the distance to the boundary taken at most.
    reuse_hessian : int, default=1
        With ``newton="direct"``: after a step of length >= 0.9 the Hessian of
        ``f`` may serve up to this many further iterations (with the current
        ``diag(z / w)``); an iteration whose kept Hessian yields no acceptable
        step is redone with a fresh one. 0: a new Hessian every iteration.
    callback : callable, default=None
        Called with each iteration's record.

    Returns
    -------
    SolverResult
        As :func:`interior_point`; a :class:`~sklearn.exceptions.ConvergenceWarning`
        is emitted when ``max_iter`` is reached first.
    """
    kkt, x, z, point, history = interior_setup(objective, x0, z0, newton, callback)
    evaluations = 1
    M = kkt.nb
    constants = (sufficient_decrease, backtrack, step_fraction)
    target = kkt.gap(x, z) / M
    record(history, kkt, point, x, z, target, 0.0, 0)
    reason = "max_iter"
    n_iter = 0
    hessian, age, s = None, 0, 0.0
    while n_iter < max_iter:
        n_iter += 1
        mu = kkt.gap(x, z) / M
        zw = kkt.barrier_diagonal(x, z)
        # the Hessian of f from the last iteration is kept for one more when that
        # step was long (f's curvature moves little there); if the kept one gives
        # no acceptable step, the iteration is redone with a fresh Hessian
        reuse = newton == "direct" and reuse_hessian and hessian is not None
        reuse = reuse and s >= 0.9 and age < reuse_hessian
        for keep in (True, False) if reuse else (False,):
            system = NewtonSystem(objective, point, zw, newton, hessian if keep else None)
            found, target, n_eval = _step(system, kkt, point, x, z, mu, constants)
            evaluations += n_eval
            if found[3] is not None:
                break
        s, x_new, z_new, new_point, _ = found
        if new_point is None:  # no acceptable step: the iterate cannot be improved further
            reason = "line_search"
            break
        if newton == "direct":
            age = age + 1 if system.reused else 0
            hessian = system.hessian
        x, z, point = x_new, z_new, new_point
        record(history, kkt, point, x, z, target, s, system.cg_iter)
        if converged(history, tol):
            reason = "converged"
            break
    return interior_finish(
        x, z, n_iter, reason, history, tol, "predictor-corrector interior point", evaluations
    )
