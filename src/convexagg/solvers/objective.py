"""The convex aggregation objective of the paper (eq. 12), matrix-free.

Notation. ``L = [L_pos, L_neg]`` stacks the per-classifier losses
(``n_samples x 2M``); ``E = [code == +1, code == -1]`` stacks the side indicators
(``K x 2M``). For weights ``w`` (length ``M``) let ``w2 = [w, w]``. Then the
discrepancies (paper eq. 1) are one matrix product::

    rho = L @ (E.T * w2[:, None])                       # (n_samples, K)

and with ``P = softmax(-rho)`` and the one-hot labels ``Y``::

    f(w)      = mean_i [rho[i, y_i] + logsumexp_k(-rho[i, k])] + alpha/2 |w|^2
    grad f    = fold(sum_k E.T * (L.T @ (Y - P))) / n + alpha w
    H v       = fold(sum_k E.T * (L.T @ B)) / n + alpha v,
                B = P * A - P * rowsum(P * A),  A = L @ (E.T * [v, v])

where ``fold`` adds the positive-side and negative-side halves of a
``2M``-vector. Every product is ``O(n K M)`` and no ``n x K x M`` tensor is
formed. The paper's appendix writes the same Hessian with per-sample matrices
``Psi_i`` of discrepancy differences; ``tests/test_objective.py`` builds it that
way and compares.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import logsumexp, softmax

__all__ = ["ConvexObjective", "Point", "discrepancies", "stack_losses"]


def stack_losses(L_pos, L_neg):
    """``[L_pos, L_neg]`` as one C-contiguous float64 ``(n_samples, 2M)`` array."""
    return np.ascontiguousarray(np.hstack([L_pos, L_neg]), dtype=np.float64)


def side_indicators(code):
    """``E.T``: the ``(2M, K)`` stacked indicators ``[code == +1; code == -1]``."""
    code = np.asarray(code)
    return np.vstack([(code == 1).T, (code == -1).T]).astype(np.float64)


def discrepancies(L, ET, w):
    """Paper eq. (1): ``rho[i, k] = sum_l w_l d(C[k, l], Q[i, l])``.

    Parameters
    ----------
    L : ndarray of shape (n_samples, 2M)
        Stacked losses, see :func:`stack_losses`.
    ET : ndarray of shape (2M, K)
        Stacked side indicators, see :func:`side_indicators`.
    w : ndarray of shape (M,)
    """
    w2 = np.concatenate([w, w])
    return L @ (ET * w2[:, None])


@dataclass
class Point:
    """The objective evaluated at ``w``: value, gradient and the softmax ``P``."""

    w: np.ndarray
    value: float
    grad: np.ndarray
    P: np.ndarray


class ConvexObjective:
    """``f(w)`` of the paper's problem (12) with its derivatives, matrix-free.

    Parameters
    ----------
    L : ndarray of shape (n_samples, 2M)
        Stacked losses ``[L_pos, L_neg]``.
    code : ndarray of shape (n_classes, M)
    y : ndarray of shape (n_samples,)
        Integer class indices in ``0..n_classes-1``.
    alpha : float
        L2 regularisation strength (the paper's lambda).
    l1 : float, default=0.0
        Strength ``beta`` of an added L1 term ``beta * sum(w)``. On ``w >= 0`` it
        is linear: it adds ``beta`` to every gradient entry and nothing to the
        Hessian, so the same interior point solves the L1 and elastic-net
        variants (the penalty the authors' earlier work used).
    """

    def __init__(self, L, code, y, alpha, l1=0.0):
        self.l1 = float(l1)
        self.L = L
        self.ET = side_indicators(code)
        self.y = np.asarray(y, dtype=np.intp)
        self.alpha = float(alpha)
        self.n_samples = L.shape[0]
        self.n_weights = self.ET.shape[0] // 2
        self.n_classes = self.ET.shape[1]
        self._rows = np.arange(self.n_samples)

    def _fold(self, v2):
        M = self.n_weights
        return v2[:M] + v2[M:]

    def _project(self, R):
        """``fold(sum_k E.T * (L.T @ R))``: pulls an ``(n, K)`` matrix back to weight space."""
        return self._fold(np.einsum("lk,lk->l", self.L.T @ R, self.ET))

    def evaluate(self, w):
        """Value, gradient and class probabilities at ``w`` (one pass over ``L``)."""
        w = np.asarray(w, dtype=np.float64)
        rho = discrepancies(self.L, self.ET, w)
        neg = -rho
        lse = logsumexp(neg, axis=1)
        value = np.mean(rho[self._rows, self.y] + lse) + 0.5 * self.alpha * (w @ w)
        if self.l1:
            value += self.l1 * np.sum(w)
        P = np.exp(neg - lse[:, None])
        R = -P
        R[self._rows, self.y] += 1.0
        grad = self._project(R) / self.n_samples + self.alpha * w
        if self.l1:
            grad += self.l1
        return Point(w=w, value=float(value), grad=grad, P=P)

    def value(self, w):
        return self.evaluate(w).value

    def hessp(self, point, v):
        """Hessian-vector product ``H(w) v`` at ``point`` (does not touch ``point``)."""
        P = point.P
        A = discrepancies(self.L, self.ET, v)
        PA = P * A
        B = PA - P * PA.sum(axis=1, keepdims=True)
        return self._project(B) / self.n_samples + self.alpha * v

    def hess_diag(self, point, chunk_rows=8192):
        """Diagonal of the Hessian (the paper's PCG preconditioner).

        ``H_ll = mean_i [sum_k P_ik D_ikl^2 - (sum_k P_ik D_ikl)^2] + alpha`` with
        ``D_ikl = L_pos[i,l] [C_kl = +1] + L_neg[i,l] [C_kl = -1]``. Computed in row
        chunks so the temporaries stay at ``chunk_rows x 2M``.
        """
        M = self.n_weights
        diag = np.zeros(M)
        for start in range(0, self.n_samples, chunk_rows):
            Lc = self.L[start : start + chunk_rows]
            PE = point.P[start : start + chunk_rows] @ self.ET.T  # (rows, 2M): sum_k P_ik E_kl
            first = self._fold(np.einsum("il,il,il->l", Lc, Lc, PE))
            S = Lc * PE
            S = S[:, :M] + S[:, M:]
            diag += first - np.einsum("il,il->l", S, S)
        return diag / self.n_samples + self.alpha

    def hessian(self, point):
        """Dense Hessian ``(M, M)``, built per class from the columns that use it.

        ``H = (1/n) [sum_k E_k' diag(P[:, k]) E_k - S' S] + alpha I`` where
        ``E_k = L_pos [C_k = +1] + L_neg [C_k = -1]`` (``n x M``, non-zero only on
        the columns class ``k`` uses) and ``S = sum_k P[:, k] E_k``. The first sum
        costs ``n sum_k |cols(k)|^2`` (one-vs-one: ``n K (K-1)^2``) instead of the
        paper's ``n K M^2``; ``S' S`` is one ``n x M`` Gram product.
        """
        M = self.n_weights
        P = point.P
        Lp, Ln = self.L[:, :M], self.L[:, M:]
        pos, neg = self.ET[:M], self.ET[M:]  # (M, K) indicators
        PE = P @ self.ET.T
        S = Lp * PE[:, :M] + Ln * PE[:, M:]
        H = -(S.T @ S)
        for k in range(self.n_classes):
            cols = np.flatnonzero(pos[:, k] + neg[:, k])
            Ek = np.where(pos[cols, k] > 0, Lp[:, cols], Ln[:, cols])
            H[np.ix_(cols, cols)] += (Ek * P[:, k : k + 1]).T @ Ek
        H /= self.n_samples
        H[np.diag_indices(M)] += self.alpha
        return H

    def predict_proba(self, w):
        """Class probabilities ``softmax(-rho)`` (paper eq. 7) at ``w``."""
        return softmax(-discrepancies(self.L, self.ET, w), axis=1)
