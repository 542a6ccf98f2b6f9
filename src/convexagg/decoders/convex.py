"""The paper's convex aggregation (Park, Hwang & Choi, SDM 2014, section 3)."""

from __future__ import annotations

from numbers import Integral, Real

from scipy.special import softmax
from sklearn.base import _fit_context
from sklearn.utils._param_validation import Interval, StrOptions

from ..losses import LOSSES, binary_losses, check_loss
from ..solvers import ConvexObjective, discrepancies, interior_point, side_indicators, stack_losses
from .base import BaseDecoder

__all__ = ["ConvexDecoder"]


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

    Attributes
    ----------
    weights_ : ndarray of shape (n_classifiers,)
        The aggregation weights ``w``.
    n_iter_ : int
        Interior point iterations taken.
    converged_ : bool
    history_ : dict of ndarray
        Per iteration: ``objective``, ``gap``, ``residual``, ``step``, ``mu``,
        ``cg_iter`` and ``weights`` (see :class:`convexagg.solvers.SolverResult`).
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
    }

    def __init__(self, alpha=1e-4, loss="cross_entropy", tol=1e-4, max_iter=100):
        self.alpha = alpha
        self.loss = loss
        self.tol = tol
        self.max_iter = max_iter

    def _check_output(self, output):
        super()._check_output(output)
        check_loss(self.loss, output)

    def _stacked_losses(self, Q):
        return stack_losses(*binary_losses(Q, self.loss, self.output_))

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
        objective = ConvexObjective(self._stacked_losses(Q), code, y, self.alpha)
        result = interior_point(objective, tol=self.tol, max_iter=self.max_iter)
        self.weights_ = result.w
        self.n_iter_ = result.n_iter
        self.converged_ = result.converged
        self.history_ = result.history
        self.objective_ = float(result.history["objective"][-1])
        return self

    def decision_function(self, Q):
        """``-rho``: minus each class's weighted discrepancy (log-probability + constant)."""
        Q = self._validate_predict(Q)
        return -discrepancies(self._stacked_losses(Q), side_indicators(self.code_), self.weights_)

    def predict_proba(self, Q):
        """Class membership probabilities ``softmax(-rho)`` (paper eq. 7)."""
        return softmax(self.decision_function(Q), axis=1)
