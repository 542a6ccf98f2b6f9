"""The paper's convex aggregation (Park, Hwang & Choi, SDM 2014, section 3)."""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
from scipy.special import softmax
from sklearn.base import _fit_context
from sklearn.utils._param_validation import Interval, StrOptions

from ..losses import LOSSES, binary_losses
from ..solvers import BlockedObjective, solve
from .base import BaseDecoder

__all__ = ["ConvexDecoder"]

# init="subsample": rows and tolerance of the first solve (on letter/ovo and ecoc
# 2,000 rows to 1e-2 cost least in Hessian-equivalents among 1,000-3,000 rows and
# tolerances 1e-2 to 1e-3)
_SUBSAMPLE_ROWS = 2000
_SUBSAMPLE_TOL = 1e-2
# a start taken from another solution moves its w and z at least this far into
# the interior (a start on the boundary would give the barrier nothing to work with)
_START_FLOOR = 1e-3


class ConvexDecoder(BaseDecoder):
    """Convex aggregation of binary classifiers (the paper's method).

    Class probabilities are a softmax of minus a non-negative weighted sum of
    per-classifier losses (paper eqs. 1 and 7)::

        rho[i, k] = sum_l w_l d(C[k, l], Q[i, l]),    P[i] = softmax(-rho[i])

    and the weights ``w >= 0`` minimise the L2-regularised mean negative
    log-likelihood (paper eq. 12)::

        f(w) = mean_i [rho[i, y_i] + log sum_k exp(-rho[i, k])] + alpha/2 |w|^2

    solved by the paper's primal-dual interior point method (Algorithm 1) with
    a matrix-free Newton system (see :mod:`convexagg.solvers`).

    The defaults run the paper's algorithm as published: its barrier update,
    Newton steps by PCG with the Hessian diagonal, start ``w = 1/M``, in double
    precision. The other settings solve the same problem to the same stopping
    rule, faster (``BENCHMARKS.md`` has the measurements): on letter with 325
    one-vs-one classifiers ``solver="mehrotra", newton="cholesky",
    dtype="float32", init="subsample"`` is the fastest.

    ============================  ==============================================
    ``solver="paper"``            Algorithm 1: ``mu = z'w / 2M`` after long steps
    ``solver="mehrotra"``         predictor-corrector: about half the iterations
    ``newton="cg"``               PCG, diagonal preconditioner (the paper): needs
                                  only products, best when ``M`` is large
    ``newton="cholesky"``         dense Hessian (``n M^2 / 2``) and a direct
                                  solve: best for ``M`` up to a few hundred,
                                  where PCG needs many products
    ``dtype="float32"``           losses stored and multiplied in single
                                  precision (sums in double): half the memory
                                  and bytes read; gradient error ~1e-8
    ``init="subsample"``          first solve on every k-th of about 2,000 rows,
                                  then start the full problem there
    ============================  ==============================================

    Parameters
    ----------
    alpha : float, default=1e-4
        Regularisation strength (the paper's lambda); ``>= 0``.
    loss : {"cross_entropy", "exponential", "logistic", "hinge"}, default="cross_entropy"
        Discrepancy ``d``; see :mod:`convexagg.losses` for which binary outputs
        (probabilities or margins) each accepts.
    tol : float, default=1e-4
        Stop when the KKT residual norm and the duality gap are both below it
        (the paper's tolerance).
    max_iter : int, default=100
        Maximum interior point iterations.
    solver : {"paper", "mehrotra"}, default="paper"
        Barrier update and direction: the paper's Algorithm 1
        (:func:`convexagg.solvers.interior_point`) or Mehrotra's predictor-corrector
        (:func:`convexagg.solvers.predictor_corrector`) on the same KKT system.
    newton : {"cg", "cholesky"}, default="cg"
        How each Newton system is solved: the paper's PCG with the Hessian
        diagonal as preconditioner, or the dense Hessian built per class and a
        direct solve.
    dtype : {"float64", "float32"}, default="float64"
        Precision in which the losses are stored and multiplied. In float32
        the gradient carries rounding of order 1e-9 to 1e-8, so ``tol`` much
        below 1e-7 may not be reachable (a ConvergenceWarning says so).
    init : {"paper", "subsample"}, default="paper"
        Start point: the paper's ``w = 1/M, z = 1``, or the solution (to
        ``tol=1e-2``) of the same problem on a deterministic subsample of about
        2,000 rows (every k-th row), used when there are at least 4,000 rows.
    warm_start : bool, default=False
        Start from the previous fit's weights and duals when refitting with
        the same code (e.g. along a path of ``alpha``), instead of ``init``.

    Attributes
    ----------
    weights_ : ndarray of shape (n_classifiers,)
        The aggregation weights ``w``.
    n_iter_ : int
        Interior point iterations taken.
    converged_ : bool
    history_ : dict of ndarray
        Per iteration: ``objective``, ``gap``, ``residual``, ``step``, ``mu``,
        ``cg_iter`` and ``weights`` (see :class:`convexagg.solvers.SolverResult`)
        of the full-data solve.
    dual_ : ndarray of shape (n_classifiers,)
        Dual variables ``z`` of ``w >= 0`` (used by ``warm_start``).
    objective_ : float
        ``f(weights_)``.
    code_ : ndarray of shape (n_classes, n_classifiers)
    output_ : {"proba", "margin"}
    n_classes_ : int

    References
    ----------
    S. Park, T. Hwang, S. Choi. Convex Optimization for Binary Classifier
    Aggregation in Multiclass Problems. SDM 2014.
    """

    _parameter_constraints = {
        "alpha": [Interval(Real, 0, None, closed="left")],
        "loss": [StrOptions(set(LOSSES))],
        "tol": [Interval(Real, 0, None, closed="neither")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "solver": [StrOptions({"paper", "mehrotra"})],
        "newton": [StrOptions({"cg", "cholesky"})],
        "dtype": [StrOptions({"float64", "float32"})],
        "init": [StrOptions({"paper", "subsample"})],
        "warm_start": ["boolean"],
    }

    def __init__(
        self,
        alpha=1e-4,
        loss="cross_entropy",
        tol=1e-4,
        max_iter=100,
        *,
        solver="paper",
        newton="cg",
        dtype="float64",
        init="paper",
        warm_start=False,
    ):
        self.alpha = alpha
        self.loss = loss
        self.tol = tol
        self.max_iter = max_iter
        self.solver = solver
        self.newton = newton
        self.dtype = dtype
        self.init = init
        self.warm_start = warm_start

    def _objective(self, Q, y, code):
        return BlockedObjective.from_outputs(
            Q, code, y, self.alpha, loss=self.loss, output=self.output_, dtype=self.dtype
        )

    def _start(self, objective, code):
        """Start point options: the previous fit (warm_start), a subsample solution, or {}."""
        previous = getattr(self, "weights_", None)
        if self.warm_start and previous is not None and previous.shape == (code.shape[1],):
            return {
                "w0": np.maximum(previous, _START_FLOOR),
                "z0": np.maximum(self.dual_, _START_FLOOR),
            }
        if self.init == "subsample" and objective.n_samples >= 2 * _SUBSAMPLE_ROWS:
            step = objective.n_samples // _SUBSAMPLE_ROWS
            sub = objective.take(np.arange(0, objective.n_samples, step))
            result = solve(
                sub,
                solver=self.solver,
                newton=self.newton,
                tol=max(self.tol, _SUBSAMPLE_TOL),
                max_iter=self.max_iter,
                warn=False,
            )
            start = {
                "w0": np.maximum(result.w, _START_FLOOR),
                "z0": np.maximum(result.z, _START_FLOOR),
            }
            if self.solver == "mehrotra" and self.newton == "cholesky":
                # the subsample's Hessian at the start serves the first full iteration
                start["hessian0"] = sub.hessian(sub.evaluate(start["w0"]))
            return start
        return {}

    def _solve(self, objective, code):
        return solve(
            objective,
            solver=self.solver,
            newton=self.newton,
            tol=self.tol,
            max_iter=self.max_iter,
            **self._start(objective, code),
        )

    def _set_result(self, result):
        self.weights_ = result.w
        self.dual_ = result.z
        self.n_iter_ = result.n_iter
        self.converged_ = result.converged
        self.history_ = result.history
        self.objective_ = float(result.history["objective"][-1])

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, Q, y, code, output="proba"):
        """Learn the aggregation weights.

        Parameters
        ----------
        Q : array-like of shape (n_samples, n_classifiers)
            Binary outputs (probabilities of the positive side, or margins).
        y : array-like of shape (n_samples,)
            Integer class indices ``0..n_classes-1``.
        code : array-like of shape (n_classes, n_classifiers)
        output : {"proba", "margin"}, default="proba"
            What ``Q`` holds.

        Returns
        -------
        self
        """
        Q, y, code = self._validate_fit(Q, y, code, output)
        objective = self._objective(Q, y, code)
        self._set_result(self._solve(objective, code))
        return self

    def decision_function(self, Q):
        """``-rho``: minus each class's weighted discrepancy (log-probability + constant)."""
        Q = self._validate_predict(Q)
        code, w = self.code_, self.weights_
        W_pos = (code == 1).T * w[:, None]  # (M, K)
        W_neg = (code == -1).T * w[:, None]
        if self.loss == "cross_entropy":
            # -rho = log(q) @ W_pos + log(1 - q) @ W_neg, computed in place (this is
            # the whole cost of predict_proba: two logs and two small products)
            eps = np.finfo(Q.dtype).eps
            log_q = np.clip(Q, eps, 1.0 - eps)
            log_1mq = np.negative(log_q)
            np.log1p(log_1mq, out=log_1mq)
            np.log(log_q, out=log_q)
            scores = log_q @ W_pos
            scores += log_1mq @ W_neg
            return scores
        L_pos, L_neg = binary_losses(Q, self.loss, self.output_)
        return -(L_pos @ W_pos + L_neg @ W_neg)

    def predict_proba(self, Q):
        """Class membership probabilities ``softmax(-rho)`` (paper eq. 7)."""
        return softmax(self.decision_function(Q), axis=1)
