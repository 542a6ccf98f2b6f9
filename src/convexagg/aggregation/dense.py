"""The convex aggregation objective of the paper (eq. 12) in its textbook form.

With ``P = softmax(-rho)``, the one-hot labels ``Y``, sample weights ``s``
(ones by default, ``S = sum(s)``) and the kernel of
:mod:`~convexagg.aggregation.discrepancy` (``rho = L @ W + b``)::

    f(x)   = (1/S) sum_i s_i [rho[i, y_i] + logsumexp_k(-rho[i, k])] + R(x)
    grad f = (1/S) pullback(s * (Y - P)) + grad R
    H v    = (1/S) pullback(s * B) + hess R v,
             B = P * A - P * rowsum(P * A),  A = rho of the direction v

Every product is ``O(n K M)`` and no ``n x K x M`` tensor is formed. This is
the reference the fast storages are tested against
(:class:`~convexagg.aggregation.BlockedObjective`); the paper's appendix
writes the same Hessian with per-sample matrices ``Psi_i``, and
``tests/test_aggregation.py`` builds it that way and compares.
"""

from __future__ import annotations

import numpy as np
from scipy.special import logsumexp

from ..validation import check_sample_weight as validated_sample_weight
from .base import ObjectiveBase
from .discrepancy import discrepancies, pullback, side_indicators, side_weights
from .penalty import Penalty
from .point import Point

__all__ = ["DenseObjective", "check_sample_weight"]


def check_sample_weight(sample_weight, n_samples):
    """Validate sample weights (:func:`convexagg.validation.check_sample_weight`), scaled.

    Parameters
    ----------
    sample_weight : array-like of shape (n_samples,) or None
        The weights; ones when None.
    n_samples : int
        Number of samples.

    Returns
    -------
    sample_weight : ndarray of shape (n_samples,)
        The validated weights, divided by the largest: the criterion normalises
        them by their sum, so this changes nothing but keeps that sum finite and
        exact for weights near the float range's ends (1e308 overflows the sum,
        5e-324 loses every digit in it).
    """
    s = validated_sample_weight(sample_weight, n_samples)
    return s / s.max()


class DenseObjective(ObjectiveBase):
    """``f(x)`` of the paper's problem (12) with its derivatives, dense and matrix-free.

    Parameters
    ----------
    L : ndarray of shape (n_samples, 2M)
        Stacked losses ``[L_pos, L_neg]``.
    code : ndarray of shape (n_classes, M)
        The code matrix.
    y : ndarray of shape (n_samples,)
        Integer class indices in ``0..n_classes-1``.
    penalty : Penalty, default=None
        ``Penalty()`` (none) when None.
    fit_intercept : bool, default=False
        Add a free intercept per class to ``rho`` (variables after the weights).
    sample_weight : ndarray of shape (n_samples,), default=None
        Weights of the samples in the likelihood (normalised by their sum).
    """

    def __init__(self, L, code, y, penalty=None, *, fit_intercept=False, sample_weight=None):
        self.L = np.asarray(L, dtype=np.float64)
        self.code = np.asarray(code)
        self.ET = side_indicators(code)
        self.y = np.asarray(y, dtype=np.intp)
        self.penalty = Penalty() if penalty is None else penalty
        self.n_samples = self.L.shape[0]
        self.n_classes, self.n_weights = self.code.shape
        self.n_intercepts = self.n_classes if fit_intercept else 0
        self.sample_weight = check_sample_weight(sample_weight, self.n_samples)
        self._scale = float(self.sample_weight.sum())
        self._rows = np.arange(self.n_samples)

    def _split(self, x):
        x = np.asarray(x, dtype=np.float64)
        M = self.n_weights
        return x[:M], (x[M:] if self.n_intercepts else None)

    def rho(self, x):
        """Compute the discrepancies ``rho`` at ``x`` (paper eq. 1).

        Parameters
        ----------
        x : ndarray of shape (n_variables,)
            Weights, then intercepts.

        Returns
        -------
        rho : ndarray of shape (n_samples, n_classes)
            The discrepancies.
        """
        w, b = self._split(x)
        return discrepancies(self.L, side_weights(self.code, w), b)

    def _project(self, R):
        """Pull an ``(n, K)`` matrix (already multiplied by the sample weights) back
        to the variables, divided by the weights' sum."""
        g = pullback(self.L, self.ET, R)
        if self.n_intercepts:
            g = np.concatenate([g, R.sum(axis=0)])
        return g / self._scale

    def evaluate(self, x):
        """Value, gradient and class probabilities at ``x`` (one pass over ``L``).

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
        rho = self.rho(x)
        lse = logsumexp(-rho, axis=1)
        s = self.sample_weight
        value = float(s @ (rho[self._rows, self.y] + lse)) / self._scale
        P = np.exp(-rho - lse[:, None])
        R = -P
        R[self._rows, self.y] += 1.0
        grad = self._project(R * s[:, None]) + self.penalty.grad(x, self.n_weights)
        return Point(x=x, value=value + self.penalty.value(x, self.n_weights), grad=grad, P=P)

    def _data_hessp(self, P, v):
        """The likelihood's Hessian at the class probabilities ``P`` times ``v``."""
        A = self.rho(v)
        PA = P * A
        B = PA - P * PA.sum(axis=1, keepdims=True)
        return self._project(B * self.sample_weight[:, None])

    def hessp(self, point, v):
        """Hessian-vector product ``H(x) v`` at ``point``.

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
        return self._data_hessp(point.P, v) + self.penalty.hessp(v, self.n_weights)

    def _class_columns(self, k):
        """``(cols, E_k)``: the variables class ``k`` enters and their ``(n, len(cols))``
        discrepancy columns (losses of the classifiers that use ``k``, then its intercept)."""
        M = self.n_weights
        pos, neg = self.ET[:M, k], self.ET[M:, k]
        cols = np.flatnonzero(pos + neg)
        Ek = np.where(pos[cols] > 0, self.L[:, cols], self.L[:, M + cols])
        if self.n_intercepts:
            cols = np.append(cols, M + k)
            Ek = np.column_stack([Ek, np.ones(self.n_samples)])
        return cols, Ek

    def _first_moments(self, P):
        """``S[i, j] = sum_k P_ik D_ikj`` for every variable ``j``: ``(n, n_variables)``."""
        M = self.n_weights
        PE = P @ self.ET.T  # (n, 2M): sum_k P_ik E_kl
        S = self.L[:, :M] * PE[:, :M] + self.L[:, M:] * PE[:, M:]
        return np.column_stack([S, P]) if self.n_intercepts else S

    def hess_diag(self, point):
        """Diagonal of the Hessian (the paper's PCG preconditioner).

        Parameters
        ----------
        point : Point
            The result of :meth:`evaluate` at ``x``.

        Returns
        -------
        diagonal : ndarray of shape (n_variables,)
            The Hessian's diagonal.
        """
        return self._data_hess_diag(point.P) + self.penalty.hess_diag(
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
        H = self.penalty.add_to_hessian(self._data_hessian(point.P), self.n_weights)
        return H if variables is None else H[np.ix_(variables, variables)]

    def _data_hess_diag(self, P):
        """``H_jj = (1/S) sum_i s_i [sum_k P_ik D_ikj^2 - (sum_k P_ik D_ikj)^2]``."""
        s = self.sample_weight
        diag = -(s @ self._first_moments(P) ** 2)
        for k in range(self.n_classes):
            cols, Ek = self._class_columns(k)
            diag[cols] += (s * P[:, k]) @ Ek**2
        return diag / self._scale

    def _data_hessian(self, P):
        """The likelihood's Hessian at the class probabilities ``P``, built per class.

        ``H = (1/S) [sum_k E_k' diag(s P[:, k]) E_k - S' diag(s) S]``: class
        ``k``'s term involves only the variables it enters (one-vs-one: ``K - 1``
        weights), so it costs ``n sum_k |cols(k)|^2`` instead of the paper's
        ``n K M^2``; ``S' diag(s) S`` is one Gram product.
        """
        s = self.sample_weight
        S = self._first_moments(P)
        H = -((S * s[:, None]).T @ S)
        for k in range(self.n_classes):
            cols, Ek = self._class_columns(k)
            H[np.ix_(cols, cols)] += (Ek * (s * P[:, k])[:, None]).T @ Ek
        return H / self._scale

    def predict_proba(self, x):
        """Class probabilities ``softmax(-rho)`` (paper eq. 7) at ``x``.

        Parameters
        ----------
        x : ndarray of shape (n_variables,)
            Weights, then intercepts.

        Returns
        -------
        P : ndarray of shape (n_samples, n_classes)
            Rows sum to 1.
        """
        rho = self.rho(x)
        return np.exp(-rho - logsumexp(-rho, axis=1)[:, None])
