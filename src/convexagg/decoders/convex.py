"""The paper's convex aggregation (Park, Hwang & Choi, SDM 2014, sections 3 and 4)."""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
from scipy.special import softmax
from sklearn.base import _fit_context
from sklearn.utils._param_validation import Interval, StrOptions

from ..losses import LOSSES, binary_losses
from ..solvers import (
    ConvexObjective,
    LargeMarginObjective,
    StiffnessObjective,
    discrepancies,
    interior_point,
    projected_subgradient,
    side_indicators,
    stack_losses,
    stiffness_continuation,
    tau_schedule,
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
    objective_ : float
        The formulation's objective (with the penalty) at ``weights_``.
    taus_ : ndarray
        Only for ``"stiffness"``: the continuation's ``tau`` values.
    stage_n_iter_ : ndarray of int
        Only for ``"stiffness"``: interior point iterations at each ``tau``.
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
        "formulation": [StrOptions(set(FORMULATIONS))],
        "tau": [Interval(Real, 0, None, closed="neither")],
        "penalty": [StrOptions(set(PENALTIES))],
        "l1_ratio": [Interval(Real, 0, 1, closed="both")],
        "subgradient_iter": [Interval(Integral, 1, None, closed="left")],
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

    def _stacked_losses(self, Q):
        return stack_losses(*binary_losses(Q, self.loss, self.output_))

    def _objective(self, L, code, y, tau=None):
        """The objective of this decoder's formulation and penalty on ``(L, code, y)``."""
        l2, l1 = penalty_strengths(self.alpha, self.penalty, self.l1_ratio)
        if self.formulation == "large_margin":
            return LargeMarginObjective(L, code, y, l2, l1=l1)
        if self.formulation == "stiffness":
            return StiffnessObjective(L, code, y, l2, self.tau if tau is None else tau, l1=l1)
        return ConvexObjective(L, code, y, l2, l1=l1)

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
        L = self._stacked_losses(Q)
        if self.formulation == "large_margin":
            objective = self._objective(L, code, y)
            result = projected_subgradient(objective, max_iter=self.subgradient_iter, tol=self.tol)
            objective_value = float(result.history["best"][-1])
        elif self.formulation == "stiffness":
            taus = tau_schedule(self.tau)
            stages = stiffness_continuation(
                lambda t: self._objective(L, code, y, tau=t),
                taus,
                tol=self.tol,
                max_iter=self.max_iter,
            )
            result = stages[-1]
            self.taus_ = taus
            self.stage_n_iter_ = np.array([r.n_iter for r in stages])
            result.n_iter = int(self.stage_n_iter_.sum())
            result.converged = all(r.converged for r in stages)
            objective_value = float(result.history["objective"][-1])
        else:
            objective = self._objective(L, code, y)
            result = interior_point(objective, tol=self.tol, max_iter=self.max_iter)
            objective_value = float(result.history["objective"][-1])
        self.weights_ = result.w
        self.n_iter_ = result.n_iter
        self.converged_ = result.converged
        self.history_ = result.history
        self.objective_ = objective_value
        return self

    def decision_function(self, Q):
        """``-rho``: minus each class's weighted discrepancy (log-probability + constant)."""
        Q = self._validate_predict(Q)
        return -discrepancies(self._stacked_losses(Q), side_indicators(self.code_), self.weights_)

    def predict_proba(self, Q):
        """Class membership probabilities ``softmax(-rho)`` (paper eq. 7)."""
        return softmax(self.decision_function(Q), axis=1)
