"""The large-margin connection of the paper (section 4): eqs. (27), (29) and (30).

Both formulations live on the same *margin logits* ``(1 - delta(y_i, k)) - rho[i, k]``
(a misclassification cost of 1 for every wrong class, paper eq. 29)::

    f_LM(w)  = mean_i [rho[i, y_i] + max_k ((1 - delta_ik) - rho[i, k])]
               + alpha/2 |w|^2 + l1 sum(w)                                  (eq. 27)
    f_tau(w) = mean_i [rho[i, y_i] + (1/tau) logsumexp_k tau ((1 - delta_ik) - rho[i, k])]
               + alpha/2 |w|^2 + l1 sum(w)                                  (eq. 30)

The first is the mean multiclass hinge loss ``max_{k != y} [1 - (rho_k - rho_y)]_+``
(``eq:hw`` in the paper's LaTeX, written with its ``varphi_i^{k, y_i}``:
``w'varphi = rho_y - rho_k``); the second is the negative log-likelihood of the
cost-sensitive softmax (eq. 29) with stiffness ``tau``. Proposition 1:
``0 <= f_tau - f_LM <= log(K) / tau`` for every ``w``.

Both reuse :class:`~convexagg.solvers.ConvexObjective`'s matrix-free algebra
rather than copying it: with ``P = softmax(tau (cost - rho))``,

* the gradient of ``f_tau`` is ``fold(sum_k E.T * (L.T @ (Y - P))) / n`` -- the
  same pull-back as the likelihood, with this ``P``;
* its Hessian is ``tau`` times the likelihood's data Hessian at this ``P``;

and a subgradient of ``f_LM`` is the same pull-back with ``P`` replaced by the
one-hot ``argmax_k`` of the margin logits (the ``tau -> infinity`` limit).
So :class:`StiffnessObjective` keeps an unregularised ``ConvexObjective`` for its
Hessian products and only computes its own ``P``, value and gradient.

Equation numbers follow the rest of the package (eq. 12 the likelihood problem,
eq. 27 the large-margin problem, eqs. 29-30 the stiffness model and problem);
equations cited nowhere else are named by their label in the paper's LaTeX
source (``eq:hw`` the multiclass hinge loss, ``eq:margin`` the margin).
"""

from __future__ import annotations

import numpy as np
from scipy.special import logsumexp

from .interior_point import SolverResult, interior_point
from .objective import ConvexObjective, Point, discrepancies
from .warm_start import interior_warm_start

__all__ = [
    "LargeMarginObjective",
    "StiffnessObjective",
    "projected_subgradient",
    "stiffness_continuation",
    "tau_schedule",
]


class _MarginBase:
    """What both formulations share: data, penalty and the margin logits."""

    def __init__(self, L, code, y, alpha, l1=0.0):
        # An unregularised likelihood objective on the same data: its pull-back
        # and Hessian products are reused, not re-implemented.
        self._data = ConvexObjective(L, code, y, 0.0)
        self.L = self._data.L
        self.ET = self._data.ET
        self.y = self._data.y
        self.alpha = float(alpha)
        self.l1 = float(l1)
        self.n_samples = self._data.n_samples
        self.n_weights = self._data.n_weights
        self.n_classes = self._data.n_classes
        self._rows = np.arange(self.n_samples)
        cost = np.ones((self.n_samples, self.n_classes))
        cost[self._rows, self.y] = 0.0
        self.cost = cost

    def _margin_logits(self, w):
        """``rho`` and ``(1 - delta_ik) - rho[i, k]`` at ``w``."""
        rho = discrepancies(self.L, self.ET, w)
        return rho, self.cost - rho

    def _penalty(self, w):
        return 0.5 * self.alpha * (w @ w) + self.l1 * np.sum(w)

    def _finish(self, w, data_value, P):
        """Point with value and gradient of ``data + penalty`` from the data term's ``P``."""
        R = -P
        R[self._rows, self.y] += 1.0
        grad = self._data._project(R) / self.n_samples + self.alpha * w + self.l1
        return Point(w=w, value=float(data_value + self._penalty(w)), grad=grad, P=P)

    def value(self, w):
        return self.evaluate(w).value


class StiffnessObjective(_MarginBase):
    """``f_tau(w)`` of the paper's problem (30) with its derivatives, matrix-free.

    The cost-sensitive softmax of eq. (29) with stiffness ``tau``: at ``tau = 1``
    without the cost it would be the likelihood ``f_0`` of eq. (12); as
    ``tau -> infinity`` it tends to the large-margin objective (27) uniformly,
    ``0 <= f_tau(w) - f_LM(w) <= log(K) / tau`` (Proposition 1).

    Exposes ``evaluate`` / ``hessp`` / ``hess_diag`` / ``hessian`` like
    :class:`~convexagg.solvers.ConvexObjective`, so :func:`interior_point`
    solves it unchanged.

    Parameters
    ----------
    L : ndarray of shape (n_samples, 2M)
        Stacked losses ``[L_pos, L_neg]``.
    code : ndarray of shape (n_classes, M)
    y : ndarray of shape (n_samples,)
    alpha : float
        L2 strength (the paper's lambda).
    tau : float
        Stiffness, ``> 0``.
    l1 : float, default=0.0
        L1 strength (``l1 * sum(w)``).
    """

    def __init__(self, L, code, y, alpha, tau, l1=0.0):
        super().__init__(L, code, y, alpha, l1)
        if not tau > 0:
            raise ValueError(f"tau must be > 0, got {tau!r}.")
        self.tau = float(tau)

    def evaluate(self, w):
        """Value, gradient and the cost-sensitive softmax ``P`` (eq. 29) at ``w``."""
        w = np.asarray(w, dtype=np.float64)
        rho, logits = self._margin_logits(w)
        logits *= self.tau
        lse = logsumexp(logits, axis=1)
        data = np.mean(rho[self._rows, self.y] + lse / self.tau)
        P = np.exp(logits - lse[:, None])
        return self._finish(w, data, P)

    def hessp(self, point, v):
        """``H(w) v``: ``tau`` times the likelihood's data Hessian at ``P``, plus ``alpha v``."""
        return self.tau * self._data.hessp(point, v) + self.alpha * v

    def hess_diag(self, point):
        """Diagonal of the Hessian (the PCG preconditioner)."""
        return self.tau * self._data.hess_diag(point) + self.alpha

    def hessian(self, point):
        """Dense Hessian ``(M, M)``."""
        H = self.tau * self._data.hessian(point)
        H[np.diag_indices_from(H)] += self.alpha
        return H


class LargeMarginObjective(_MarginBase):
    """``f_LM(w)`` of the paper's large-margin problem (27) and a subgradient.

    ``f_LM(w) = mean_i max_{k != y_i} [1 - (rho_k - rho_{y_i})]_+ + alpha/2 |w|^2
    + l1 sum(w)`` -- the mean multiclass hinge loss (``eq:hw``) on the discrepancy
    differences. Not differentiable: ``evaluate`` returns a subgradient (the
    gradient of the active piece, ties to the smallest class index) in
    ``grad``, and the one-hot active class in ``P``.

    Parameters are those of :class:`StiffnessObjective` without ``tau``.
    """

    def evaluate(self, w):
        """Value and a subgradient at ``w``."""
        w = np.asarray(w, dtype=np.float64)
        rho, logits = self._margin_logits(w)
        active = np.argmax(logits, axis=1)
        data = np.mean(rho[self._rows, self.y] + logits[self._rows, active])
        P = np.zeros_like(logits)
        P[self._rows, active] = 1.0
        return self._finish(w, data, P)

    def hinge(self, w):
        """Per-sample multiclass hinge losses (``eq:hw``), shape ``(n_samples,)``."""
        rho, logits = self._margin_logits(np.asarray(w, dtype=np.float64))
        return rho[self._rows, self.y] + logits.max(axis=1)


def projected_subgradient(objective, w0=None, *, max_iter=2000, step0=None, tol=0.0):
    """Minimise a convex ``objective`` over ``w >= 0`` by projected subgradient steps.

    The method the paper suggests for its large-margin problem (27). Iteration::

        w_{t+1} = max(0, w_t - s_t g_t / |g_t|),    s_t = step0 / sqrt(t + 1)

    a normalised subgradient step with a diminishing, square-summable-not-summable
    length (Bertsekas, Nonlinear Programming, 1999; Boyd's subgradient notes):
    with bounded subgradients the best value converges to the optimum at rate
    ``O(log t / sqrt t)``. Each step moves ``w`` by exactly ``s_t``, so ``step0``
    is a distance in weight space. The best iterate seen is returned (the
    objective does not decrease monotonically).

    Parameters
    ----------
    objective : object
        ``n_weights`` and ``evaluate(w)`` returning ``value`` and a subgradient
        ``grad``; e.g. :class:`LargeMarginObjective`.
    w0 : ndarray of shape (M,), default=None
        Start point (``1/M`` when None); projected onto ``w >= 0``.
    max_iter : int, default=2000
        Number of subgradient steps.
    step0 : float, default=None
        First step length; ``max(|w0|_2, 1)`` when None.
    tol : float, default=0.0
        Stop early when the projected subgradient (``g`` with the entries that
        point out of ``w >= 0`` zeroed) has norm ``<= tol`` -- a certificate of
        optimality when the objective is differentiable there.

    Returns
    -------
    SolverResult
        ``w`` the best iterate; ``z`` the positive part of its subgradient (a
        dual estimate, no guarantee); ``n_iter``; ``converged`` True only when
        the ``tol`` test stopped it; ``history`` with ``objective`` (value at
        each iterate, index 0 the start), ``best`` (best value so far) and
        ``step``.
    """
    M = objective.n_weights
    w = np.full(M, 1.0 / M) if w0 is None else np.maximum(np.array(w0, dtype=np.float64), 0.0)
    if step0 is None:
        step0 = max(float(np.linalg.norm(w)), 1.0)
    point = objective.evaluate(w)
    best = point
    values, bests, steps = [point.value], [point.value], [0.0]
    converged = False
    n_iter = 0
    for t in range(max_iter):
        g = point.grad
        projected = np.where((w <= 0) & (g > 0), 0.0, g)
        g_norm = float(np.linalg.norm(projected))
        if g_norm <= tol:
            converged = True
            break
        s = step0 / np.sqrt(t + 1.0)
        w = np.maximum(w - (s / g_norm) * projected, 0.0)
        point = objective.evaluate(w)
        n_iter += 1
        if point.value < best.value:
            best = point
        values.append(point.value)
        bests.append(best.value)
        steps.append(s)
    history = {
        "objective": np.asarray(values),
        "best": np.asarray(bests),
        "step": np.asarray(steps),
    }
    return SolverResult(
        w=best.w,
        z=np.maximum(best.grad, 0.0),
        n_iter=n_iter,
        converged=converged,
        history=history,
    )


def tau_schedule(tau, factor=10.0):
    """Stiffness values of the continuation: ``1, factor, factor^2, ...`` up to ``tau``.

    The last value is ``tau`` itself; ``[tau]`` alone when ``tau <= 1``. Total
    interior point iterations (tol 1e-4, alpha 1e-4) with ``factor`` 4 and 10,
    against one cold solve at the final ``tau``:

    ===================  ==========  ===========  ======
    problem, final tau   factor 4    factor 10    cold
    ===================  ==========  ===========  ======
    synthetic, 100       45          37           20
    synthetic, 1000      66          52           85
    digits ovr, 100      49          41           31
    digits ovr, 1000     64          53           91
    digits ovo, 100      67          53           52
    digits ovo, 1000     123         103          111
    ===================  ==========  ===========  ======

    Factor 10 is the default. The paper's continuation pays for itself only for
    large ``tau`` (where the barely smooth ``f_tau`` makes a cold start slow);
    for moderate ``tau`` a direct solve would be cheaper, but the paper's
    procedure is kept.
    """
    taus = [1.0]
    while taus[-1] * factor < tau:
        taus.append(taus[-1] * factor)
    if tau <= 1.0:
        return np.array([float(tau)])
    if taus[-1] != tau:
        taus.append(float(tau))
    return np.asarray(taus)


def stiffness_continuation(
    make_objective, taus, *, tol=1e-4, max_iter=100, newton="cg", shift=None
):
    """Solve problem (30) for increasing ``tau``, each solve warm-started at the last.

    The paper (section 4): "Starting from tau = 1, the primal-dual interior point
    method is used to determine the optimal w. This optimal value of w is used as
    an initial condition at the next iteration with increasing tau."

    Parameters
    ----------
    make_objective : callable
        ``tau -> objective`` (e.g. ``lambda t: StiffnessObjective(L, code, y, alpha, t)``).
    taus : sequence of float
        Increasing stiffness values; see :func:`tau_schedule`.
    tol, max_iter, newton
        Passed to :func:`interior_point` for every stage.
    shift : float, default=None
        Each warm start is moved this far into the interior, see
        :func:`~convexagg.solvers.warm_start.interior_warm_start`.

    Returns
    -------
    results : list of SolverResult
        One per ``tau``; the last is the answer.
    """
    results = []
    w0 = z0 = None
    for tau in taus:
        objective = make_objective(tau)
        if results:
            w0, z0 = interior_warm_start(objective, results[-1].w, shift=shift)
        results.append(interior_point(objective, w0, z0, tol=tol, max_iter=max_iter, newton=newton))
    return results
