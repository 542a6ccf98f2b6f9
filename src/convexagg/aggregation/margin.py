"""The large-margin connection of the paper (section 4): the objectives of eqs. (27) and (30).

Both formulations live on the same *margin logits* ``(1 - delta(y_i, k)) - rho[i, k]``
(a misclassification cost of 1 for every wrong class, paper eq. 29)::

    f_LM(x)  = mean_i [rho[i, y_i] + max_k ((1 - delta_ik) - rho[i, k])] + R(x)        (eq. 27)
    f_tau(x) = mean_i [rho[i, y_i] + (1/tau) logsumexp_k tau ((1 - delta_ik) - rho[i, k])]
               + R(x)                                                                  (eq. 30)

The first is the mean multiclass hinge loss ``max_{k != y} [1 - (rho_k - rho_y)]_+``
(``eq:hw`` in the paper's LaTeX, written with its ``varphi_i^{k, y_i}``:
``w'varphi = rho_y - rho_k``); the second is the negative log-likelihood of the
cost-sensitive softmax (eq. 29) with stiffness ``tau``. Proposition 1:
``0 <= f_tau - f_LM <= log(K) / tau`` for every ``x``. (Means are weighted by
the sample weights, as in the likelihood.)

Both reuse :class:`~convexagg.aggregation.DenseObjective`'s algebra rather
than copying it: with ``P = softmax(tau (cost - rho))``,

* the gradient of ``f_tau`` is the likelihood's pull-back of ``Y - P`` with this ``P``;
* its Hessian is ``tau`` times the likelihood's data Hessian at this ``P``;

and a subgradient of ``f_LM`` is the same pull-back with ``P`` replaced by the
one-hot ``argmax_k`` of the margin logits (the ``tau -> infinity`` limit).

The solvers of these objectives (projected subgradient for eq. 27, the
interior point with continuation in ``tau`` for eq. 30) are in
:mod:`convexagg.solvers`.
"""

from __future__ import annotations

import numpy as np
from scipy.special import logsumexp

from .dense import DenseObjective
from .point import Point

__all__ = ["LargeMarginObjective", "StiffnessObjective"]


class _MarginBase(DenseObjective):
    """What both formulations share: data, penalty and the margin logits."""

    def __init__(self, L, code, y, penalty=None, *, fit_intercept=False, sample_weight=None):
        super().__init__(
            L, code, y, penalty, fit_intercept=fit_intercept, sample_weight=sample_weight
        )
        cost = np.ones((self.n_samples, self.n_classes))
        cost[self._rows, self.y] = 0.0
        self.cost = cost

    def _margin_logits(self, x):
        """``rho`` and ``(1 - delta_ik) - rho[i, k]`` at ``x``."""
        rho = self.rho(x)
        return rho, self.cost - rho

    def _finish(self, x, data_terms, P):
        """Point with value and gradient of ``data + penalty`` from the per-sample
        data terms and the data term's ``P``."""
        s = self.sample_weight
        R = -P
        R[self._rows, self.y] += 1.0
        grad = self._project(R * s[:, None]) + self.penalty.grad(x, self.n_weights)
        value = float(s @ data_terms) / self._scale + self.penalty.value(x, self.n_weights)
        return Point(x=x, value=value, grad=grad, P=P)


class StiffnessObjective(_MarginBase):
    """``f_tau(x)`` of the paper's problem (30) with its derivatives, matrix-free.

    The cost-sensitive softmax of eq. (29) with stiffness ``tau``: as
    ``tau -> infinity`` it tends to the large-margin objective (27) uniformly,
    ``0 <= f_tau(x) - f_LM(x) <= log(K) / tau`` (Proposition 1). Offers what the
    interior point asks of an objective (``evaluate``, ``hessp``, ``hess_diag``,
    ``hessian``), so it is solved unchanged.

    Parameters
    ----------
    L : ndarray of shape (n_samples, 2M)
        Stacked losses ``[L_pos, L_neg]``.
    code : ndarray of shape (n_classes, M)
        The code matrix.
    y : ndarray of shape (n_samples,)
        Integer class indices.
    penalty : Penalty, default=None
        ``Penalty()`` (none) when None.
    tau : float
        Stiffness, ``> 0``.
    fit_intercept : bool, default=False
        Free class intercepts after the weights.
    sample_weight : ndarray of shape (n_samples,), default=None
        Weights of the samples.
    """

    def __init__(self, L, code, y, penalty=None, *, tau, fit_intercept=False, sample_weight=None):
        super().__init__(
            L, code, y, penalty, fit_intercept=fit_intercept, sample_weight=sample_weight
        )
        if not tau > 0:
            raise ValueError(f"tau must be > 0, got {tau!r}.")
        self.tau = float(tau)

    def evaluate(self, x):
        """Value, gradient and the cost-sensitive softmax ``P`` (eq. 29) at ``x``.

        Parameters
        ----------
        x : ndarray of shape (n_variables,)
            Weights, then intercepts.

        Returns
        -------
        point : Point
            Value, gradient and what the derivatives need.
        """
        x = np.asarray(x, dtype=np.float64)
        rho, logits = self._margin_logits(x)
        logits *= self.tau
        lse = logsumexp(logits, axis=1)
        P = np.exp(logits - lse[:, None])
        return self._finish(x, rho[self._rows, self.y] + lse / self.tau, P)

    def hessp(self, point, v):
        """``H(x) v``: ``tau`` times the likelihood's data Hessian at ``P``, plus the penalty's.

        Parameters
        ----------
        point : Point
            The result of :meth:`evaluate` at ``x``.
        v : ndarray of shape (n_variables,)
            The vector.

        Returns
        -------
        Hv : ndarray of shape (n_variables,)
            The product.
        """
        v = np.asarray(v, dtype=np.float64)
        return self.tau * self._data_hessp(point.P, v) + self.penalty.hessp(v, self.n_weights)

    def hess_diag(self, point):
        """Diagonal of the Hessian (the PCG preconditioner).

        Parameters
        ----------
        point : Point
            The result of :meth:`evaluate` at ``x``.

        Returns
        -------
        diagonal : ndarray of shape (n_variables,)
            The Hessian's diagonal.
        """
        return self.tau * self._data_hess_diag(point.P) + self.penalty.hess_diag(
            self.n_weights, self.n_variables
        )

    def hessian(self, point, variables=None):
        """Dense Hessian, or its block on ``variables``.

        Parameters
        ----------
        point : Point
            The result of :meth:`evaluate` at ``x``.
        variables : array-like of int, default=None
            Increasing indices of the variables whose block is wanted; all when None.

        Returns
        -------
        H : ndarray of shape (n, n)
            ``n = len(variables)``, or ``n_variables``.
        """
        H = self.penalty.add_to_hessian(self.tau * self._data_hessian(point.P), self.n_weights)
        return H if variables is None else H[np.ix_(variables, variables)]


class LargeMarginObjective(_MarginBase):
    """``f_LM(x)`` of the paper's large-margin problem (27) and a subgradient.

    ``f_LM = mean_i max_{k != y_i} [1 - (rho_k - rho_{y_i})]_+ + R(x)`` -- the
    mean multiclass hinge loss (``eq:hw``) on the discrepancy differences. Not
    differentiable: ``evaluate`` returns a subgradient (the gradient of the
    active piece, ties to the smallest class index) in ``grad``, and the
    one-hot active class in ``P``.

    Parameters
    ----------
    L : ndarray of shape (n_samples, 2M)
        Stacked losses ``[L_pos, L_neg]``.
    code : ndarray of shape (n_classes, M)
        The code matrix.
    y : ndarray of shape (n_samples,)
        Integer class indices.
    penalty : Penalty, default=None
        ``Penalty()`` (none) when None.
    fit_intercept : bool, default=False
        Free class intercepts after the weights.
    sample_weight : ndarray of shape (n_samples,), default=None
        Weights of the samples.
    """

    def evaluate(self, x):
        """Value and a subgradient at ``x``.

        Parameters
        ----------
        x : ndarray of shape (n_variables,)
            Weights, then intercepts.

        Returns
        -------
        point : Point
            Value, a subgradient and the one-hot active class.
        """
        x = np.asarray(x, dtype=np.float64)
        rho, logits = self._margin_logits(x)
        active = np.argmax(logits, axis=1)
        P = np.zeros_like(logits)
        P[self._rows, active] = 1.0
        return self._finish(x, rho[self._rows, self.y] + logits[self._rows, active], P)

    def hinge(self, x):
        """Per-sample multiclass hinge losses (the paper's ``eq:hw``).

        Parameters
        ----------
        x : ndarray of shape (n_variables,)
            Weights, then intercepts.

        Returns
        -------
        hinge : ndarray of shape (n_samples,)
            The losses.
        """
        rho, logits = self._margin_logits(np.asarray(x, dtype=np.float64))
        return rho[self._rows, self.y] + logits.max(axis=1)

    # not differentiable: no Hessian to offer
    hessp = hess_diag = hessian = None
