"""Primal-dual interior point method of the paper (Algorithm 1, eqs. 15-25).

Solves ``min f(x) s.t. w >= 0`` for a smooth convex ``f`` of ``x = [w, b]``
(weights bounded below by 0, then free intercepts, none in the paper's model)
given by an objective with ``evaluate(x) -> point`` (``point.value``,
``point.grad``) and either ``hessp(point, v)`` and ``hess_diag(point)`` (PCG
steps) or ``hessian(point)`` (direct steps); see
:class:`convexagg.aggregation.Objective`. Nothing else is asked of it.

Each iteration:

1. ``mu = eta / (2M)`` if the last step length was ``>= s_min`` (eq. 25), where
   ``eta = z'w`` is the surrogate duality gap;
2. Newton step on the perturbed KKT conditions (eqs. 19-23): solve the reduced
   system ``H dx = -g`` with ``H = hess f + diag(z / w, 0)`` and
   ``g = grad f - [mu / w, 0]`` by preconditioned conjugate gradients
   (preconditioner: the diagonal of ``H``), then ``dz = -(z / w) dw - z + mu / w``;
3. step length: ``s_max`` keeps ``z >= 0`` (eq. 24); start at ``0.99 s_max`` and
   multiply by ``backtrack`` until ``w > 0`` and the residual norm drops by the
   factor ``1 - sufficient_decrease * s`` (eq. 25's line search, the paper's
   ``alpha = 0.01, beta = 0.5``).

It stops when the norm of the perturbed KKT residual ``r_mu`` and the gap
``eta`` are both ``<= tol``.

Numerical safeguards: the objective must be finite at the start point (a
``ValueError`` otherwise); a trial point is accepted only if its value and
gradient are finite, so no NaN or inf can enter the iterates; and when the line
search finds no acceptable step (the residual cannot be reduced further in
floating point, e.g. a ``tol`` below what float64 resolves) or the Newton
direction is not finite, the method stops at the last finite iterate with a
:class:`~sklearn.exceptions.ConvergenceWarning` saying why.
"""

from __future__ import annotations

import numpy as np

from .contract import n_nonnegative
from .linalg import SymmetricSolver, pcg
from .result import History, check_start, finish, finite

__all__ = ["interior_point"]

# PCG stops when its residual (the linearised KKT error) is below CG_FORCING |r_mu|
CG_FORCING = 0.1

HISTORY_KEYS = ("objective", "gap", "residual", "step", "mu", "cg_iter", "weights")

WHY = {
    "max_iter": "increase max_iter or tol",
    "line_search": (
        "no step reduced the KKT residual further (the tolerance may be below "
        "what floating point resolves for this problem, or the problem is "
        "badly scaled); increase tol or alpha"
    ),
    "nonfinite_direction": (
        "the Newton direction was not finite (ill-conditioned Hessian); increase alpha"
    ),
}


class KKT:
    """The perturbed KKT system of ``min f(x), w >= 0`` at ``(x, z)``: residuals and
    the reduced Newton matrix, shared by both interior point methods."""

    def __init__(self, objective):
        self.objective = objective
        self.nb = n_nonnegative(objective)  # bounded variables come first

    def residual_norm(self, grad, x, z, mu):
        """``|r_mu(x, z)|_2`` with ``r_mu = [grad_w f - z; grad_b f; z * w - mu]`` (eq. 19)."""
        nb = self.nb
        dual = np.sum((grad[:nb] - z) ** 2) + np.sum(grad[nb:] ** 2)
        return float(np.sqrt(dual + np.sum((z * x[:nb] - mu) ** 2)))

    def barrier_diagonal(self, x, z):
        """``diag(z / w, 0)``: the barrier's curvature on every variable."""
        d = np.zeros(x.size)
        d[: self.nb] = z / x[: self.nb]
        return d

    def dual_step(self, x, z, dx, centre):
        """``dz = -(z / w) dw - z + centre`` (``centre = mu / w`` or its corrected form)."""
        nb = self.nb
        return -(z / x[:nb]) * dx[:nb] - z + centre

    def gap(self, x, z):
        return float(x[: self.nb] @ z)


class NewtonSystem:
    """``(hess f + diag(zw)) d = rhs`` at one point, for several right-hand sides:
    the dense Hessian and a Cholesky solve (``"direct"``) or PCG (``"cg"``)."""

    def __init__(self, objective, point, zw, newton, hessian=None):
        self.objective, self.point, self.zw, self.newton = objective, point, zw, newton
        self.cg_iter = 0
        self.reused = hessian is not None
        if newton == "direct":
            self.hessian = objective.hessian(point) if hessian is None else hessian
            self._solver = SymmetricSolver(self.hessian + np.diag(zw))
        else:  # the paper's PCG, the diagonal computed once for every solve
            self._diag = objective.hess_diag(point) + zw

    def solve(self, rhs, r_norm):
        """Solve for ``rhs``; PCG stops at ``CG_FORCING r_norm``.

        Inexact Newton: the PCG residual ``H d - rhs`` is exactly the error in
        the first block of the linearised KKT system, so it is bounded against
        ``|r_mu|`` itself (not against ``|g|``, which carries ``(zw - mu) / w``
        and can be far larger): ``|e| <= 0.1 |r|`` (a constant forcing term)
        keeps the step a descent direction for the residual norm. A forcing
        term shrinking with ``|r|`` would make the Newton steps superlinear, but
        the iteration count is set by the barrier update, not by the accuracy of
        the steps, so the constant takes the same iterations with about half the
        PCG products (measured in BENCHMARKS.md).
        """
        if self.newton == "direct":
            return self._solver.solve(rhs)
        d, n_iter = pcg(
            lambda v: self.objective.hessp(self.point, v) + self.zw * v,
            rhs,
            atol=CG_FORCING * r_norm,
            precondition=lambda v: v / self._diag,
        )
        self.cg_iter += n_iter
        return d


def interior_start(objective, x0, z0):
    """``(x, z, point)``: the paper's ``w = 1/M, b = 0, z = 1`` unless given;
    ``ValueError`` unless ``w`` and ``z`` are strictly positive with a finite objective."""
    nb = n_nonnegative(objective)
    if x0 is None:
        x0 = np.zeros(objective.n_variables)
        x0[:nb] = 1.0 / nb
    z = np.ones(nb) if z0 is None else np.array(z0, dtype=np.float64)
    x0 = np.asarray(x0, dtype=np.float64)
    if not (np.all(x0[:nb] > 0) and z.shape == (nb,) and np.all(z > 0)):
        raise ValueError("the interior point start (w0, z0) must be strictly positive.")
    x, point = check_start(objective, x0)
    return x, z, point


def interior_setup(objective, x0, z0, newton, callback):
    """``(kkt, x, z, point, history)`` for both interior-point methods: ``newton``
    checked first, then the KKT system, the start of :func:`interior_start` and an
    empty history that calls ``callback``."""
    if newton not in ("cg", "direct"):
        raise ValueError(f"newton must be 'cg' or 'direct', got {newton!r}.")
    kkt = KKT(objective)
    x, z, point = interior_start(objective, x0, z0)
    return kkt, x, z, point, History(HISTORY_KEYS, callback)


def converged(history, tol):
    """The paper's stopping rule on the last recorded iterate: ``|r_mu|`` and ``z'w``
    both ``<= tol``."""
    return history.last("residual") <= tol and history.last("gap") <= tol


def interior_finish(x, z, n_iter, reason, history, tol, method, evaluations):
    """The result of either interior-point method (this module's reasons and summary)."""
    return finish(x, z, n_iter, reason, history, tol, method, WHY, evaluations, summary(history))


def line_search(objective, kkt, x, z, dx, dz, s, mu, r_norm, sufficient_decrease, backtrack):
    """Backtracking from step ``s`` until ``w, z > 0``, the new point is finite and
    ``|r_mu|`` has dropped by the factor ``1 - sufficient_decrease s`` (eq. 25).

    Returns ``(s, x_new, z_new, point, n_evaluations)``; ``point`` is None when
    ``s`` fell below 1e-12.
    """
    nb = kkt.nb
    evaluations = 0
    while s >= 1e-12:
        x_new, z_new = x + s * dx, z + s * dz
        if np.all(x_new[:nb] > 0) and np.all(z_new > 0):
            point = objective.evaluate(x_new)
            evaluations += 1
            # NaN compares False, but say it: a non-finite point is never accepted.
            if finite(point) and (
                kkt.residual_norm(point.grad, x_new, z_new, mu)
                <= (1 - sufficient_decrease * s) * r_norm
            ):
                return s, x_new, z_new, point, evaluations
        s *= backtrack
    return s, x, z, None, evaluations


def record(history, kkt, point, x, z, mu, step, cg_iter):
    history.record(
        objective=point.value,
        gap=kkt.gap(x, z),
        residual=kkt.residual_norm(point.grad, x, z, mu),
        step=step,
        mu=mu,
        cg_iter=cg_iter,
        weights=x,
    )


def summary(history):
    return f"residual {history.last('residual'):.2e}, gap {history.last('gap'):.2e}"


def interior_point(
    objective,
    x0=None,
    z0=None,
    *,
    tol=1e-4,
    max_iter=100,
    newton="cg",
    sufficient_decrease=0.01,
    backtrack=0.5,
    s_min=0.5,
    callback=None,
):
    """Run Algorithm 1 of the paper on ``objective``.

    Parameters
    ----------
    objective : Objective
        See :class:`convexagg.aggregation.Objective`.
    x0 : ndarray of shape (n_variables,), default=None
        Start point, ``w`` strictly positive; the paper's ``w = 1/M`` (and
        ``b = 0``) when None.
    z0 : ndarray of shape (n_weights,), default=None
        Start duals, strictly positive; ``z = 1`` when None.
    tol : float, default=1e-4
        The paper's ``epsilon_fea = epsilon``.
    max_iter : int, default=100
        Newton iterations.
    newton : {"cg", "direct"}, default="cg"
        How the reduced Newton system is solved: the paper's PCG with the Hessian
        diagonal as preconditioner (needs ``hessp`` and ``hess_diag``), or the
        dense Hessian and a Cholesky solve (needs ``hessian``; exact, and cheaper
        when ``M`` is small).
    sufficient_decrease, backtrack : float, default=0.01, 0.5
        The paper's backtracking constants ``alpha`` and ``beta``.
    s_min : float, default=0.5
        Step length above which ``mu`` is reduced.
    callback : callable, default=None
        Called with each iteration's record (see
        :class:`~convexagg.solvers.result.History`).

    Returns
    -------
    SolverResult
        A :class:`~sklearn.exceptions.ConvergenceWarning` is emitted when the
        method stops before reaching ``tol``; the solution returned is then the
        last accepted iterate, always finite.

    Raises
    ------
    ValueError
        If the start point is not strictly positive or the objective (value or
        gradient) is not finite there.
    """
    kkt, x, z, point, history = interior_setup(objective, x0, z0, newton, callback)
    evaluations = 1
    M = kkt.nb
    mu = kkt.gap(x, z) / (2 * M)
    s = 1.0
    record(history, kkt, point, x, z, mu, 0.0, 0)
    reason = "max_iter"
    n_iter = 0
    while n_iter < max_iter:
        n_iter += 1
        if s >= s_min:
            mu = kkt.gap(x, z) / (2 * M)
        r_norm = kkt.residual_norm(point.grad, x, z, mu)

        # Newton step on the reduced system H dx = -g (eq. 22).
        zw = kkt.barrier_diagonal(x, z)
        g = point.grad.copy()
        g[:M] -= mu / x[:M]
        system = NewtonSystem(objective, point, zw, newton)
        dx = system.solve(-g, r_norm)
        dz = kkt.dual_step(x, z, dx, mu / x[:M])
        if not (np.isfinite(dx).all() and np.isfinite(dz).all()):
            reason = "nonfinite_direction"
            break

        # Step length (eqs. 24-25): s_max keeps z >= 0, the line search w > 0.
        neg = dz < 0
        s_max = min(1.0, float(np.min(-z[neg] / dz[neg]))) if neg.any() else 1.0
        s, x_new, z_new, new_point, n_eval = line_search(
            objective, kkt, x, z, dx, dz, 0.99 * s_max, mu, r_norm, sufficient_decrease, backtrack
        )
        evaluations += n_eval
        if new_point is None:  # no acceptable step: the iterate cannot be improved further
            reason = "line_search"
            break
        x, z, point = x_new, z_new, new_point
        record(history, kkt, point, x, z, mu, s, system.cg_iter)
        if converged(history, tol):
            reason = "converged"
            break
    return interior_finish(x, z, n_iter, reason, history, tol, "interior point method", evaluations)
