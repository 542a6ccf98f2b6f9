"""The paper's convex aggregation (Park, Hwang & Choi, SDM 2014, sections 3 and 4)."""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
from scipy.special import softmax
from sklearn.base import _fit_context
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from .._dask import aligned_labels, import_dask_array, is_dask_array, map_row_blocks
from ..codes import check_code_matrix
from ..losses import LOSSES, OUTPUT_KINDS, binary_losses, check_loss, cross_entropy_into
from ..solvers import (
    BlockedObjective,
    LargeMarginObjective,
    StiffnessObjective,
    projected_subgradient,
    solve,
    stack_losses,
    stiffness_continuation,
    tau_schedule,
    uniform_start,
)
from .base import BaseDecoder

__all__ = ["FORMULATIONS", "PENALTIES", "ConvexDecoder", "penalty_strengths"]

FORMULATIONS = ("likelihood", "large_margin", "stiffness")
PENALTIES = ("l2", "l1", "elasticnet")


def penalty_strengths(alpha, penalty="l2", l1_ratio=0.5):
    """Split ``alpha`` into the L2 and L1 strengths of the objective.

    The penalty on ``w >= 0`` is, as in scikit-learn's elastic net,
    ``alpha * (r * |w|_1 + (1 - r) / 2 * |w|_2^2)`` with ``r = 0`` for ``"l2"``
    (the paper's ``lambda/2 |w|^2``, eq. 12), ``r = 1`` for ``"l1"`` and
    ``r = l1_ratio`` for ``"elasticnet"``. Since ``w >= 0``, ``|w|_1 = sum(w)``
    is linear.

    Returns
    -------
    l2, l1 : float
        ``alpha * (1 - r)`` and ``alpha * r``.
    """
    if penalty not in PENALTIES:
        raise ValueError(f"penalty must be one of {PENALTIES}, got {penalty!r}.")
    r = {"l2": 0.0, "l1": 1.0}.get(penalty, l1_ratio)
    if not 0.0 <= r <= 1.0:
        raise ValueError(f"l1_ratio must be in [0, 1], got {r!r}.")
    return float(alpha) * (1.0 - r), float(alpha) * r


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

    and a sample goes to the class of smallest discrepancy (``eq:predict_label``). The weights
    ``w >= 0`` minimise one of the paper's three training criteria
    (``formulation``), each plus the penalty ``R(w)``:

    * ``"likelihood"`` (eq. 12, the paper's method): the mean negative
      log-likelihood ``mean_i [rho[i, y_i] + log sum_k exp(-rho[i, k])]``, solved
      by the primal-dual interior point method (Algorithm 1) with a matrix-free
      Newton system (see :mod:`convexagg.solvers`);
    * ``"large_margin"`` (eq. 27): the mean multiclass hinge loss
      ``mean_i max_{k != y_i} [1 - (rho[i, k] - rho[i, y_i])]_+``, solved by
      projected subgradient (:func:`~convexagg.solvers.projected_subgradient`,
      ``subgradient_iter`` steps from ``w = 1/M``, the best iterate kept), as the
      paper suggests;
    * ``"stiffness"`` (eqs. 29-30): the negative log-likelihood of the
      cost-sensitive softmax with stiffness ``tau``, ``f_tau``, which tends to
      the large-margin objective as ``tau`` grows (``0 <= f_tau - f_LM <=
      log(K) / tau``, Proposition 1). Solved as the paper describes: the
      interior point at ``tau = 1, 10, 100, ...`` up to ``tau``, each stage
      warm-started at the previous solution
      (:func:`~convexagg.solvers.stiffness_continuation`).

    Why one decoder with a ``formulation`` option rather than three classes: all
    three learn the same model -- the weights of ``rho`` -- and predict with it
    in the same way; they differ only in the training criterion, as
    scikit-learn's ``SGDClassifier(loss=...)`` differs by its loss. One class
    keeps one set of fitted attributes and lets a grid search compare the
    formulations (``decoder__formulation``). ``predict_proba`` is the model's
    ``softmax(-rho)`` (eq. 7) for all three, but only the likelihood fits the
    weights for probabilities; the large-margin and stiffness weights are on
    the scale where margins are 1, and their probabilities are not calibrated
    (the cost-sensitive probabilities of eq. 29 need the true label, so cannot
    be evaluated at prediction time).

    **Dask arrays** (``pip install convexagg[dask]``): ``fit`` accepts ``Q`` and
    ``y`` as Dask arrays chunked by rows and never gathers ``Q``; each
    evaluation of the objective is one pass over the blocks that returns the
    partial sums of value, gradient and dense Hessian
    (:class:`convexagg.solvers.chunked.DaskObjective`), so both interior point
    solvers take one pass per Newton iteration (plus one per rejected
    line-search trial; ``n_passes_`` counts them). The Newton steps are solved
    as in memory (the Hessian-vector products read the cached Hessian), so the
    weights equal those of the in-memory fit on the same data to rounding
    (``dtype="float32"``: to single-precision rounding, ~1e-6). ``solver``,
    ``newton``, ``penalty`` and ``dtype`` apply; ``formulation`` must be
    ``"likelihood"`` and ``init`` ``"paper"``.
    ``predict_proba``, ``decision_function`` and ``predict`` on a Dask array
    return lazy Dask arrays computed block by block.

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
    ``init="uniform"``            start at the best equal weights ``c* 1``
                                  (1-D search): about half the iterations
    ``init="subsample"``          the same start on every k-th of about 2,000
                                  rows, solved to 1e-2, then the full problem
                                  from there
    ============================  ==============================================

    Parameters
    ----------
    alpha : float, default=1e-4
        Regularisation strength (the paper's lambda); ``>= 0``. The penalty is
        ``alpha/2 |w|^2`` (``"l2"``), ``alpha sum(w)`` (``"l1"``), or
        ``alpha (l1_ratio sum(w) + (1 - l1_ratio)/2 |w|^2)`` (``"elasticnet"``,
        as in scikit-learn); see :func:`penalty_strengths`.
    loss : {"cross_entropy", "exponential", "logistic", "hinge"}, default="cross_entropy"
        Discrepancy ``d``; see :mod:`convexagg.losses` for which binary outputs
        (probabilities or margins) each accepts.
    tol : float, default=1e-4
        Interior point stopping rule: the KKT residual norm and the duality gap
        are both below it (the paper's tolerance). For ``"large_margin"``: stop
        early when the projected subgradient has norm ``<= tol``.
    max_iter : int, default=100
        Maximum interior point iterations (per ``tau`` for ``"stiffness"``).
    formulation : {"likelihood", "large_margin", "stiffness"}, default="likelihood"
        Training criterion, see above.
    tau : float, default=100.0
        Final stiffness for ``formulation="stiffness"`` (``> 0``); ignored otherwise.
    penalty : {"l2", "l1", "elasticnet"}, default="l2"
        With ``w >= 0`` the L1 term is linear, so the same interior point solves
        all three (the L1 penalty is the one the authors' earlier work used).
    l1_ratio : float, default=0.5
        L1 share of the elastic net, in ``[0, 1]``; only for ``penalty="elasticnet"``.
    subgradient_iter : int, default=2000
        Projected subgradient steps for ``formulation="large_margin"``.
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
    init : {"paper", "uniform", "subsample"}, default="paper"
        Start point: the paper's ``w = 1/M, z = 1``; ``"uniform"``: the best
        equal weights ``w = c* 1`` (``c*`` minimises ``f(c 1)``) with duals
        ``|grad f|`` there (:func:`convexagg.solvers.uniform_start`);
        ``"subsample"``: the solution (to ``tol=1e-2``, from the uniform start)
        of the same problem on a deterministic subsample of about 2,000 rows
        (every k-th row) -- with fewer than 4,000 rows, the uniform start.
    warm_start : bool, default=False
        Start from the previous fit's weights and duals when refitting with
        the same code (e.g. along a path of ``alpha``), instead of ``init``.

    Attributes
    ----------
    weights_ : ndarray of shape (n_classifiers,)
        The aggregation weights ``w``.
    n_iter_ : int
        Interior point iterations taken (summed over the stages of the
        ``tau`` continuation), or subgradient steps for ``"large_margin"``.
    converged_ : bool
        The interior point met ``tol`` (at every stage). For ``"large_margin"``
        only True when the projected subgradient vanished (rare: subgradient
        methods have no practical stopping test; no warning is given).
    history_ : dict of ndarray
        Per iteration: ``objective``, ``gap``, ``residual``, ``step``, ``mu``,
        ``cg_iter`` and ``weights`` (see :class:`convexagg.solvers.SolverResult`),
        of the last stage for ``"stiffness"``; ``objective``, ``best`` and
        ``step`` for ``"large_margin"``.
    dual_ : ndarray of shape (n_classifiers,)
        Dual variables ``z`` of ``w >= 0`` (used by ``warm_start``).
    objective_ : float
        The formulation's objective (with the penalty) at ``weights_``.
    taus_ : ndarray
        Only for ``"stiffness"``: the continuation's ``tau`` values.
    stage_n_iter_ : ndarray of int
        Only for ``"stiffness"``: interior point iterations at each ``tau``.
    code_ : ndarray of shape (n_classes, n_classifiers)
    output_ : {"proba", "margin"}
    n_classes_ : int
    n_passes_ : int
        Passes over the data of a fit on Dask arrays (only set by such fits).

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
        "formulation": [StrOptions(set(FORMULATIONS))],
        "tau": [Interval(Real, 0, None, closed="neither")],
        "penalty": [StrOptions(set(PENALTIES))],
        "l1_ratio": [Interval(Real, 0, 1, closed="both")],
        "subgradient_iter": [Interval(Integral, 1, None, closed="left")],
        "solver": [StrOptions({"paper", "mehrotra"})],
        "newton": [StrOptions({"cg", "cholesky"})],
        "dtype": [StrOptions({"float64", "float32"})],
        "init": [StrOptions({"paper", "uniform", "subsample"})],
        "warm_start": ["boolean"],
    }

    def __init__(
        self,
        alpha=1e-4,
        loss="cross_entropy",
        tol=1e-4,
        max_iter=100,
        *,
        formulation="likelihood",
        tau=100.0,
        penalty="l2",
        l1_ratio=0.5,
        subgradient_iter=2000,
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
        self.formulation = formulation
        self.tau = tau
        self.penalty = penalty
        self.l1_ratio = l1_ratio
        self.subgradient_iter = subgradient_iter
        self.solver = solver
        self.newton = newton
        self.dtype = dtype
        self.init = init
        self.warm_start = warm_start

    def _check_output(self, output):
        super()._check_output(output)
        check_loss(self.loss, output)

    def _stacked_losses(self, Q):
        return stack_losses(*binary_losses(Q, self.loss, self.output_))

    def _objective(self, Q, y, code):
        """The likelihood objective (eq. 12) with this decoder's penalty, stored by class
        (:class:`~convexagg.solvers.BlockedObjective`, the fast form)."""
        l2, l1 = penalty_strengths(self.alpha, self.penalty, self.l1_ratio)
        return BlockedObjective.from_outputs(
            Q, code, y, l2, loss=self.loss, output=self.output_, dtype=self.dtype, l1=l1
        )

    def _margin_objective(self, L, code, y, tau=None):
        """The section-4 objectives (eq. 27 or eq. 30) on the stacked losses ``L``."""
        l2, l1 = penalty_strengths(self.alpha, self.penalty, self.l1_ratio)
        if self.formulation == "large_margin":
            return LargeMarginObjective(L, code, y, l2, l1=l1)
        return StiffnessObjective(L, code, y, l2, self.tau if tau is None else tau, l1=l1)

    def _start(self, objective, code):
        """Start point options: the previous fit (warm_start), the equal-weights start,
        a subsample solution from there, or {} (the paper's start)."""
        previous = getattr(self, "weights_", None)
        if self.warm_start and previous is not None and previous.shape == (code.shape[1],):
            return {
                "w0": np.maximum(previous, _START_FLOOR),
                "z0": np.maximum(self.dual_, _START_FLOOR),
            }
        if self.init == "paper":
            return {}
        if self.init == "uniform" or objective.n_samples < 2 * _SUBSAMPLE_ROWS:
            return dict(zip(("w0", "z0"), uniform_start(objective)))
        step = objective.n_samples // _SUBSAMPLE_ROWS
        sub = objective.take(slice(0, None, step))  # every step-th row
        result = solve(
            sub,
            *uniform_start(sub),
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

    def _solve(self, objective, code):
        return solve(
            objective,
            solver=self.solver,
            newton=self.newton,
            tol=self.tol,
            max_iter=self.max_iter,
            **self._start(objective, code),
        )

    def _set_result(self, result, objective_value=None):
        self.weights_ = result.w
        self.dual_ = getattr(result, "z", None)
        self.n_iter_ = result.n_iter
        self.converged_ = result.converged
        self.history_ = result.history
        if objective_value is None:
            objective_value = result.history["objective"][-1]
        self.objective_ = float(objective_value)

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, Q, y, code, output="proba"):
        """Learn the aggregation weights.

        Parameters
        ----------
        Q : array-like or dask.array.Array of shape (n_samples, n_classifiers)
            Binary outputs (probabilities of the positive side, or margins).
            A Dask array is fitted out of core, one pass over its row blocks
            per Newton iteration; its row chunk sizes must be known.
        y : array-like or dask.array.Array of shape (n_samples,)
            Integer class indices ``0..n_classes-1``. With a Dask ``Q`` it is
            rechunked (or split) to the row chunks of ``Q``.
        code : array-like of shape (n_classes, n_classifiers)
        output : {"proba", "margin"}, default="proba"
            What ``Q`` holds.

        Returns
        -------
        self
        """
        if is_dask_array(Q) or is_dask_array(y):
            return self._fit_dask(Q, y, code, output)
        Q, y, code = self._validate_fit(Q, y, code, output)
        if self.formulation == "likelihood":
            self._set_result(self._solve(self._objective(Q, y, code), code))
        elif self.formulation == "large_margin":
            objective = self._margin_objective(self._stacked_losses(Q), code, y)
            result = projected_subgradient(objective, max_iter=self.subgradient_iter, tol=self.tol)
            self._set_result(result, result.history["best"][-1])
        else:  # stiffness
            L = self._stacked_losses(Q)
            taus = tau_schedule(self.tau)
            stages = stiffness_continuation(
                lambda t: self._margin_objective(L, code, y, tau=t),
                taus,
                tol=self.tol,
                max_iter=self.max_iter,
            )
            result = stages[-1]
            self.taus_ = taus
            self.stage_n_iter_ = np.array([r.n_iter for r in stages])
            result.n_iter = int(self.stage_n_iter_.sum())
            result.converged = all(r.converged for r in stages)
            self._set_result(result)
        return self

    def _fit_dask(self, Q, y, code, output):
        """Out-of-core fit: validation that needs the data happens inside the passes."""
        from ..solvers.chunked import DaskObjective

        da = import_dask_array()
        code = check_code_matrix(code)
        if output not in OUTPUT_KINDS:
            raise ValueError(f"output must be one of {OUTPUT_KINDS}, got {output!r}.")
        check_loss(self.loss, output)
        unsupported = {
            name: value
            for name, value, default in [
                ("formulation", self.formulation, "likelihood"),
                ("init", self.init, "paper"),
            ]
            if value != default
        }
        if unsupported:
            raise ValueError(
                "Dask arrays are fitted with formulation='likelihood' and init='paper' "
                f"only; got {unsupported}."
            )
        if not is_dask_array(Q):  # a Dask y with in-memory Q: split Q like y
            Q = np.asarray(Q)
            if Q.ndim != 2:
                raise ValueError(f"Q must be 2-D (n_samples, n_classifiers), got shape {Q.shape}.")
            y = aligned_labels(y, y.chunks[0] if y.ndim == 1 else (), Q.shape[0])
            Q = da.from_array(Q, chunks=(y.chunks[0], -1))
        if not (np.issubdtype(Q.dtype, np.floating) or np.issubdtype(Q.dtype, np.integer)):
            raise ValueError(f"Q must be numeric, got dtype {Q.dtype}.")
        l2, l1 = penalty_strengths(self.alpha, self.penalty, self.l1_ratio)
        objective = DaskObjective(
            Q, y, code, l2, loss=self.loss, output=output, l1=l1, dtype=self.dtype
        )
        result = self._solve(objective, code)  # a bad block raises here, before anything is set
        self.code_ = code
        self.output_ = output
        self.n_classes_ = code.shape[0]
        self._set_result(result)
        self.n_passes_ = objective.n_passes
        return self

    def _dask_predict_check(self, Q):
        check_is_fitted(self, "code_")
        if Q.ndim != 2 or Q.shape[1] != self.code_.shape[1]:
            raise ValueError(
                f"Q must have shape (n_samples, {self.code_.shape[1]}) like the binary outputs "
                f"the decoder was fitted with, got {Q.shape}."
            )

    def decision_function(self, Q):
        """``-rho``: minus each class's weighted discrepancy (log-probability + constant).

        Lazy and block-wise for a Dask ``Q``."""
        if is_dask_array(Q):
            self._dask_predict_check(Q)
            return map_row_blocks(self.decision_function, Q, self.n_classes_, np.float64, "Q")
        Q = self._validate_predict(Q)
        code, w = self.code_, self.weights_
        W_pos = (code == 1).T * w[:, None]  # (M, K)
        W_neg = (code == -1).T * w[:, None]
        if self.loss == "cross_entropy":
            return self._cross_entropy_scores(Q, W_pos, W_neg)
        L_pos, L_neg = binary_losses(Q, self.loss, self.output_)
        return -(L_pos @ W_pos + L_neg @ W_neg)

    def _cross_entropy_scores(self, Q, W_pos, W_neg):
        """``-rho = -(L_pos @ W_pos + L_neg @ W_neg)`` for the cross-entropy loss.

        Two logs per output are the whole cost of ``predict_proba``: they are taken
        on row chunks of ~256 KB of ``Q`` in preallocated buffers (fresh arrays of
        the size of ``Q`` cost more in page faults than the logs themselves), in
        the decoder's ``dtype`` as ``fit`` stores its losses.
        """
        dtype = np.dtype(self.dtype)
        W = -np.concatenate([W_pos, W_neg]).astype(dtype)  # (2M, K)
        n, M = Q.shape
        step = max(1, min(n, (1 << 18) // (8 * M)))
        q_buf = np.empty((step, M))
        loss_buf = np.empty((step, 2, M), dtype=dtype)  # rows [L_pos | L_neg]: one product
        scores = np.empty((n, W.shape[1]), dtype=dtype)
        for start in range(0, n, step):
            rows = slice(start, min(start + step, n))
            c = rows.stop - start
            losses = loss_buf[:c]
            cross_entropy_into(Q[rows], losses.transpose(1, 0, 2), work=q_buf[:c])
            np.matmul(losses.reshape(c, 2 * M), W, out=scores[rows])
        return scores.astype(np.float64, copy=False)

    def predict_proba(self, Q):
        """Class membership probabilities ``softmax(-rho)`` (paper eq. 7).

        Lazy and block-wise for a Dask ``Q``."""
        if is_dask_array(Q):
            self._dask_predict_check(Q)
            return map_row_blocks(self.predict_proba, Q, self.n_classes_, np.float64, "Q")
        return softmax(self.decision_function(Q), axis=1)
