"""Primal-dual interior point method of the paper (Algorithm 1, eqs. 15-25).

Solves ``min f(w) s.t. w >= 0`` for a smooth convex ``f`` given by an objective
object with ``evaluate(w) -> point`` (``point.value``, ``point.grad``),
``hessp(point, v)`` and ``hess_diag(point)``. Nothing else is asked of it.

Each iteration:

1. ``mu = eta / (2M)`` if the last step length was ``>= s_min`` (eq. 25), where
   ``eta = z'w`` is the surrogate duality gap;
2. Newton step on the perturbed KKT conditions (eqs. 19-23): solve the reduced
   system ``H dw = -g`` with ``H = hess f + diag(z / w)`` and
   ``g = grad f - mu / w`` by preconditioned conjugate gradients (preconditioner:
   the diagonal of ``H``), then ``dz = -(z / w) dw - z + mu / w``;
3. step length: ``s_max`` keeps ``z >= 0`` (eq. 24); start at ``0.99 s_max`` and
   multiply by ``beta`` until ``w > 0`` and the residual norm drops by the factor
   ``1 - alpha s`` (eq. 25's line search).

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

import warnings
from dataclasses import dataclass, field

import numpy as np
from scipy.sparse.linalg import LinearOperator, cg
from sklearn.exceptions import ConvergenceWarning

__all__ = ["SolverResult", "interior_point"]

# PCG stops when its residual (the linearised KKT error) is below CG_FORCING |r_mu|
CG_FORCING = 0.1

HISTORY_KEYS = ("objective", "gap", "residual", "step", "mu", "cg_iter", "weights")


@dataclass
class SolverResult:
    """Outcome of a solver run.

    Attributes
    ----------
    w : ndarray of shape (M,)
        Primal solution (the aggregation weights).
    z : ndarray of shape (M,)
        Dual variables of ``w >= 0``.
    n_iter : int
        Newton iterations taken.
    converged : bool
    message : str
        Why it stopped: ``"converged"``, ``"max_iter"``, ``"line_search"`` (no
        step reduced the residual) or ``"nonfinite_direction"``.
    history : dict of ndarray
        Per iteration (index 0 is the start point): ``objective`` ``f(w)``,
        ``gap`` ``z'w``, ``residual`` ``|r_mu(w, z)|``, ``step`` length, ``mu``,
        ``cg_iter`` (PCG iterations of the step), ``weights`` (``w`` itself).
    """

    w: np.ndarray
    z: np.ndarray
    n_iter: int
    converged: bool
    history: dict = field(default_factory=dict)
    message: str = ""


def _residual_norm(grad, w, z, mu):
    """``|r_mu(w, z)|_2`` with ``r_mu = [grad f - z ; z * w - mu]`` (eq. 19)."""
    return float(np.sqrt(np.sum((grad - z) ** 2) + np.sum((z * w - mu) ** 2)))


def _finite(point):
    """The objective's value and gradient at ``point`` are finite."""
    return bool(np.isfinite(point.value) and np.isfinite(point.grad).all())


def _dense_solve(H, rhs):
    """Solve the dense reduced system ``H x = rhs`` directly.

    numpy's LAPACK (``gesv``) rather than scipy's ``cho_factor``: scipy links its
    own OpenBLAS, whose threads then compete with numpy's still-spinning BLAS
    threads for the same cores -- on a shared 2-core machine one 325 x 325
    factorisation took up to 0.8 s that way, against 1 ms here. A singular
    matrix (``alpha = 0`` and vanishing ``z / w``) gets the minimum-norm
    least-squares solution; a non-finite one a non-finite direction.
    """
    try:
        return np.linalg.solve(H, rhs)
    except np.linalg.LinAlgError:
        if not (np.isfinite(H).all() and np.isfinite(rhs).all()):
            return np.full_like(rhs, np.nan)
        return np.linalg.lstsq(H, rhs, rcond=None)[0]


def _newton_direction_cholesky(objective, point, zw, g):
    """Solve the reduced system exactly: the dense Hessian and a direct solve."""
    H = objective.hessian(point)
    H[np.diag_indices_from(H)] += zw
    return _dense_solve(H, -g), 0


def _pcg(objective, point, zw, rhs, r_norm, diag=None):
    """Solve ``(hess f + diag(zw)) d = rhs`` by PCG with the diagonal as preconditioner.

    Returns ``(d, n_iter)``. ``diag``: the Hessian's diagonal plus ``zw``, if
    already computed (the predictor-corrector solves twice with one matrix).

    Inexact Newton: the PCG residual ``H d - rhs`` is exactly the error in the
    first block of the linearised KKT system, so it is bounded against
    ``|r_mu|`` itself (not against ``|g|``, which carries ``(zw - mu) / w`` and
    can be far larger): ``|e| <= 0.1 |r|`` (a constant forcing term) keeps the
    step a descent direction for the residual norm. A forcing term shrinking
    with ``|r|`` (``min(0.1, |r|)``, the first version) would make the Newton
    steps superlinear, but the iteration count is set by the barrier update,
    not by the accuracy of the steps: on letter (one-vs-one, ECOC, one-vs-rest)
    both take the same iterations to the same objective, and 0.1 needs half the
    PCG products (93 instead of 174 on one-vs-one at tol 1e-4, 168 instead of
    399 at 1e-6).
    """
    M = zw.size
    if diag is None:
        diag = objective.hess_diag(point) + zw
    H = LinearOperator((M, M), matvec=lambda v: objective.hessp(point, v) + zw * v, dtype=float)
    precond = LinearOperator((M, M), matvec=lambda v: v / diag, dtype=float)
    n_iter = 0

    def count(_):
        nonlocal n_iter
        n_iter += 1

    atol = CG_FORCING * r_norm
    d, _ = cg(H, rhs, rtol=0.0, atol=atol, maxiter=10 * M, M=precond, callback=count)
    return d, n_iter


def _start(objective, w0, z0):
    """``(w, z, point)`` at the start: the paper's ``w = 1/M, z = 1`` unless given;
    ``ValueError`` unless strictly positive with a finite objective and gradient."""
    M = objective.n_weights
    w = np.full(M, 1.0 / M) if w0 is None else np.array(w0, dtype=np.float64)
    z = np.ones(M) if z0 is None else np.array(z0, dtype=np.float64)
    if not (np.all(w > 0) and np.all(z > 0)):
        raise ValueError("the interior point start (w0, z0) must be strictly positive.")
    point = objective.evaluate(w)
    if not _finite(point):
        raise ValueError(
            "the objective or its gradient is not finite at the start point; the "
            "per-classifier losses must be finite."
        )
    return w, z, point


def _record(history, point, w, z, mu, step, cg_iter):
    """Append one iterate to ``history`` (see :class:`SolverResult`)."""
    history["objective"].append(point.value)
    history["gap"].append(float(w @ z))
    history["residual"].append(_residual_norm(point.grad, w, z, mu))
    history["step"].append(step)
    history["mu"].append(mu)
    history["cg_iter"].append(cg_iter)
    history["weights"].append(w.copy())


def _line_search(objective, w, z, dw, dz, s, mu, r_norm, alpha, beta):
    """Backtracking from step ``s`` until ``w, z > 0``, the new point is finite and
    ``|r_mu|`` has dropped by the factor ``1 - alpha s`` (eq. 25).

    Returns ``(s, w_new, z_new, point)``, or None when ``s`` falls below 1e-12.
    """
    while s >= 1e-12:
        w_new, z_new = w + s * dw, z + s * dz
        if np.all(w_new > 0) and np.all(z_new > 0):
            point = objective.evaluate(w_new)
            # NaN compares False, but say it: a non-finite point is never accepted.
            if _finite(point) and (
                _residual_norm(point.grad, w_new, z_new, mu) <= (1 - alpha * s) * r_norm
            ):
                return s, w_new, z_new, point
        s *= beta
    return None


_WHY = {
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


def _result(w, z, n_iter, reason, history, tol, name):
    """The :class:`SolverResult`; a ``ConvergenceWarning`` saying why unless converged."""
    converged = reason == "converged"
    if not converged:
        warnings.warn(
            f"the {name} stopped after {n_iter} iterations without reaching tol={tol} "
            f"(residual {history['residual'][-1]:.2e}, gap {history['gap'][-1]:.2e}): "
            f"{_WHY[reason]}.",
            ConvergenceWarning,
            stacklevel=3,
        )
    history = {key: np.asarray(val) for key, val in history.items()}
    return SolverResult(
        w=w, z=z, n_iter=n_iter, converged=converged, history=history, message=reason
    )


def interior_point(
    objective,
    w0=None,
    z0=None,
    *,
    tol=1e-4,
    max_iter=100,
    alpha=0.01,
    beta=0.5,
    s_min=0.5,
    newton="cg",
):
    """Run Algorithm 1 of the paper on ``objective``.

    Parameters
    ----------
    objective : object
        Provides ``n_weights``, ``evaluate(w)``, ``hessp(point, v)`` and
        ``hess_diag(point)``; see :class:`convexagg.solvers.ConvexObjective`.
    w0, z0 : ndarray of shape (M,), default=None
        Start point; the paper's ``w = 1/M``, ``z = 1`` when None. Both must be
        strictly positive.
    tol : float, default=1e-4
        The paper's ``epsilon_fea = epsilon``.
    max_iter : int, default=100
    alpha, beta : float, default=0.01, 0.5
        Backtracking constants of the paper.
    s_min : float, default=0.5
        Step length above which ``mu`` is reduced.
    newton : {"cg", "cholesky"}, default="cg"
        How the reduced Newton system is solved: the paper's PCG with the Hessian
        diagonal as preconditioner (needs ``hessp`` and ``hess_diag``), or the
        dense Hessian and a direct solve (needs ``hessian``; exact, and cheaper
        when ``M`` is small; the name is kept from the first version, which
        factorised with scipy's Cholesky -- see :func:`_dense_solve`).

    Returns
    -------
    SolverResult
        A :class:`~sklearn.exceptions.ConvergenceWarning` is emitted when the
        method stops before reaching ``tol`` (``max_iter`` reached, or no step
        could reduce the residual); the weights returned are then the last
        accepted iterate, always finite.

    Raises
    ------
    ValueError
        If the start point is not strictly positive or the objective (value or
        gradient) is not finite there.
    """
    if newton not in ("cg", "cholesky"):
        raise ValueError(f"newton must be 'cg' or 'cholesky', got {newton!r}.")
    w, z, point = _start(objective, w0, z0)
    M = w.size
    mu = (w @ z) / (2 * M)
    s = 1.0
    history = {key: [] for key in HISTORY_KEYS}
    _record(history, point, w, z, mu, 0.0, 0)
    reason = "max_iter"
    n_iter = 0
    while n_iter < max_iter:
        n_iter += 1
        eta = w @ z
        if s >= s_min:
            mu = eta / (2 * M)
        r_norm = _residual_norm(point.grad, w, z, mu)

        # Newton step on the reduced system H dw = -g (eq. 22).
        zw = z / w
        g = point.grad - mu / w
        if newton == "cg":
            dw, cg_iter = _pcg(objective, point, zw, -g, r_norm)
        else:
            dw, cg_iter = _newton_direction_cholesky(objective, point, zw, g)
        dz = -zw * dw - z + mu / w
        if not (np.isfinite(dw).all() and np.isfinite(dz).all()):
            reason = "nonfinite_direction"
            break

        # Step length (eqs. 24-25): s_max keeps z >= 0, the line search w > 0.
        neg = dz < 0
        s_max = min(1.0, float(np.min(-z[neg] / dz[neg]))) if neg.any() else 1.0
        found = _line_search(objective, w, z, dw, dz, 0.99 * s_max, mu, r_norm, alpha, beta)
        if found is None:  # no acceptable step: the iterate cannot be improved further
            reason = "line_search"
            break
        s, w, z, point = found
        _record(history, point, w, z, mu, s, cg_iter)
        if history["residual"][-1] <= tol and history["gap"][-1] <= tol:
            reason = "converged"
            break
    return _result(w, z, n_iter, reason, history, tol, "interior point method")
