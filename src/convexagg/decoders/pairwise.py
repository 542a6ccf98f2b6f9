"""Pairwise coupling for one-vs-one codes: Wu-Lin-Weng (method 2) and Hastie-Tibshirani."""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
from sklearn.utils._param_validation import Interval, StrOptions

from .._sklearn import fit_context
from .bradley_terry import BradleyTerryDecoder
from .gbtm import (
    check_bradley_terry_conditions,
    resolve_weights,
)

__all__ = [
    "PairwiseCouplingDecoder",
    "check_one_vs_one",
    "pairwise_matrix",
    "wu_lin_weng_libsvm",
    "wu_lin_weng_system",
]


def check_one_vs_one(code):
    """Raise ``ValueError`` unless ``code`` is a one-vs-one code.

    Every column must hold exactly one ``+1`` and one ``-1`` class, and every
    pair of classes must have exactly one column (in any order and orientation).
    """
    code = np.asarray(code)
    K, M = code.shape
    if not ((code == 1).sum(axis=0) == 1).all() or not ((code == -1).sum(axis=0) == 1).all():
        raise ValueError(
            "pairwise coupling needs a one-vs-one code: every column must oppose exactly "
            "one class (+1) to one other class (-1). Use BradleyTerryDecoder (GBTM) for "
            "other codes."
        )
    a, b = np.argmax(code == 1, axis=0), np.argmax(code == -1, axis=0)
    seen = np.zeros((K, K), dtype=int)
    np.add.at(seen, (np.minimum(a, b), np.maximum(a, b)), 1)
    upper = np.triu_indices(K, 1)
    if M != K * (K - 1) // 2 or not (seen[upper] == 1).all():
        raise ValueError(
            "pairwise coupling needs a one-vs-one code with exactly one column per pair "
            f"of classes ({K * (K - 1) // 2} columns for {K} classes); got {M} columns "
            "covering the pairs unevenly. Use BradleyTerryDecoder (GBTM) for other codes."
        )


def pairwise_matrix(Q, code):
    """``R[i, a, b]``: probability that class ``a`` beats class ``b`` (``R[i, a, a] = 0``).

    ``Q[:, j]`` is the probability of column ``j``'s positive class, so for a
    column with ``a`` on ``+1`` and ``b`` on ``-1``: ``R[:, a, b] = Q[:, j]`` and
    ``R[:, b, a] = 1 - Q[:, j]``.
    """
    code = np.asarray(code)
    n, K = Q.shape[0], code.shape[0]
    a, b = np.argmax(code == 1, axis=0), np.argmax(code == -1, axis=0)
    R = np.zeros((n, K, K))
    R[:, a, b] = Q
    R[:, b, a] = 1.0 - Q
    return R


def _wlw_matrix(R):
    """Wu-Lin-Weng's ``Q`` (batched): ``Q_aa = sum_{b != a} R_ba^2``, ``Q_ab = -R_ba R_ab``."""
    Rt = np.swapaxes(R, 1, 2)  # Rt[i, a, b] = R[i, b, a]
    Qm = -Rt * R
    diag = (R**2).sum(axis=1)  # sum_b R[i, b, a]^2 (the diagonal of R is 0)
    idx = np.arange(R.shape[1])
    Qm[:, idx, idx] = diag
    return Qm


def wu_lin_weng_system(R):
    """Wu-Lin-Weng method 2, exactly: solve ``[[Q, 1], [1', 0]] [p; b] = [0; 1]``.

    ``p`` minimises ``sum_a sum_{b != a} (R_ba p_a - R_ab p_b)^2`` subject to
    ``sum p = 1`` (the spec's recommended exact solver, ``O(K^3)`` per sample,
    batched over samples).

    Parameters
    ----------
    R : ndarray of shape (n_samples, n_classes, n_classes)
        Pairwise probabilities (see :func:`pairwise_matrix`), already clipped.

    Returns
    -------
    ndarray of shape (n_samples, n_classes)
    """
    n, K = R.shape[0], R.shape[1]
    A = np.zeros((n, K + 1, K + 1))
    A[:, :K, :K] = _wlw_matrix(R)
    A[:, :K, K] = 1.0
    A[:, K, :K] = 1.0
    rhs = np.zeros((n, K + 1, 1))
    rhs[:, K] = 1.0
    return np.linalg.solve(A, rhs)[:, :K, 0]


def wu_lin_weng_libsvm(R):
    """Wu-Lin-Weng method 2 as LIBSVM solves it (``multiclass_probability`` in ``svm.cpp``).

    Coordinate updates from ``p = 1/K``, at most ``max(100, K)`` passes, stopping
    when ``max_t |(Q p)_t - p'Q p| < 0.005 / K`` -- a loose tolerance, so results
    differ from :func:`wu_lin_weng_system` in the 4th decimal. Vectorised over
    samples; a sample stops updating as soon as it meets the test, as in LIBSVM.
    """
    n, K = R.shape[0], R.shape[1]
    Qm = _wlw_matrix(R)
    p = np.full((n, K), 1.0 / K)
    eps = 0.005 / K
    running = np.ones(n, dtype=bool)
    for _ in range(max(100, K)):
        Qp = np.einsum("ntj,nj->nt", Qm, p)
        pQp = np.einsum("nt,nt->n", p, Qp)
        running &= np.abs(Qp - pQp[:, None]).max(axis=1) >= eps
        if not running.any():
            break
        rows = np.flatnonzero(running)
        pr, Qpr, pQpr, Qr = p[rows], Qp[rows], pQp[rows], Qm[rows]
        for t in range(K):
            Qtt = Qr[:, t, t]
            diff = (-Qpr[:, t] + pQpr) / Qtt
            pr[:, t] += diff
            pQpr = (pQpr + diff * (diff * Qtt + 2.0 * Qpr[:, t])) / (1.0 + diff) / (1.0 + diff)
            Qpr = (Qpr + diff[:, None] * Qr[:, t, :]) / (1.0 + diff[:, None])
            pr /= 1.0 + diff[:, None]
        p[rows] = pr
    return p


class PairwiseCouplingDecoder(BradleyTerryDecoder):
    """Pairwise coupling of one-vs-one classifiers into class probabilities.

    ``Q[:, j]`` for the column opposing classes ``a`` (``+1``) and ``b`` (``-1``)
    estimates ``r_ab = P(y = a | y in {a, b}, x)``; coupling finds ``p`` with
    ``p_a / (p_a + p_b) ~ r_ab`` for all pairs.

    * ``method="wu_lin_weng"`` -- Wu, Lin & Weng's second method, the one LIBSVM
      (and so scikit-learn's ``SVC(probability=True)``) uses::

          min_p sum_a sum_{b != a} (r_ba p_a - r_ab p_b)^2   s.t.  sum_a p_a = 1

      solved exactly from its ``(K+1) x (K+1)`` linear system
      (``solver="exact"``), or by LIBSVM's own coordinate iteration with its
      loose stopping rule (``solver="libsvm"``, for bit-compatibility).
    * ``method="hastie_tibshirani"`` -- Hastie & Tibshirani's coupling: minimise
      ``sum_{a<b} v_ab KL2(r_ab || p_a / (p_a + p_b))`` by their iterative scaling.
      This is exactly GBTM on a one-vs-one code, and is computed by the same
      engine (:func:`~convexagg.decoders.gbtm.generalized_bradley_terry`).

    Only one-vs-one codes are accepted (any column order and orientation);
    :meth:`fit` raises ``ValueError`` otherwise. Outputs are clipped to
    ``[eps, 1 - eps]`` (LIBSVM's ``min_prob = 1e-7``).

    Parameters
    ----------
    method : {"wu_lin_weng", "hastie_tibshirani"}, default="wu_lin_weng"
        The coupling: Wu, Lin & Weng's least-squares method (LIBSVM's) or
        Hastie & Tibshirani's iterative scaling; both described above.
    weights : {"uniform", "n_samples"} or array-like, default="uniform"
        Pair weights ``v_ab`` of Hastie-Tibshirani (their paper uses the pair's
        training count, ``"n_samples"``). Wu-Lin-Weng's method is unweighted and
        ignores it.
    solver : {"exact", "libsvm"}, default="exact"
        Wu-Lin-Weng only.
    eps : float, default=1e-7
        Outputs are clipped to ``[eps, 1 - eps]``.
    tol : float, default=1e-10
        Hastie-Tibshirani only (see :class:`BradleyTerryDecoder`).
    max_iter : int, default=100
        Hastie-Tibshirani only (see :class:`BradleyTerryDecoder`).

    Attributes
    ----------
    weights_ : ndarray of shape (n_classifiers,)
    n_samples_per_classifier_ : ndarray of shape (n_classifiers,)
        ``N_j`` counted from the labels given to :meth:`fit`.
    code_ : ndarray of shape (n_classes, n_classifiers)
    output_ : {"proba"}
    n_classes_ : int

    References
    ----------
    T.-F. Wu, C.-J. Lin, R. C. Weng. Probability estimates for multi-class
    classification by pairwise coupling. JMLR 5:975-1005, 2004.
    T. Hastie, R. Tibshirani. Classification by pairwise coupling. Annals of
    Statistics 26(2):451-471, 1998.
    C.-C. Chang, C.-J. Lin. LIBSVM, ``svm.cpp``: ``multiclass_probability``.
    """

    _parameter_constraints = {
        **BradleyTerryDecoder._parameter_constraints,
        "method": [StrOptions({"wu_lin_weng", "hastie_tibshirani"})],
        "solver": [StrOptions({"exact", "libsvm"})],
        "tol": [Interval(Real, 0, None, closed="neither")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
    }

    def __init__(
        self,
        method="wu_lin_weng",
        *,
        weights="uniform",
        solver="exact",
        eps=1e-7,
        tol=1e-10,
        max_iter=100,
    ):
        self.method = method
        self.weights = weights
        self.solver = solver
        self.eps = eps
        self.tol = tol
        self.max_iter = max_iter

    @fit_context(prefer_skip_nested_validation=True)
    def fit(self, Q, y, code, output="proba"):
        """Check the code is one-vs-one and resolve the pair weights.

        Parameters
        ----------
        Q : array-like of shape (n_samples, n_classifiers)
            Probabilities of each column's positive class.
        y : array-like of shape (n_samples,)
            Integer class indices ``0..n_classes-1``.
        code : array-like of shape (n_classes, n_classifiers)
            A one-vs-one code.
        output : {"proba"}, default="proba"
            Only probabilities can be coupled.

        Returns
        -------
        self : object
            The fitted decoder.
        """
        Q, y, code = self._validate_proba_fit(Q, y, code, output)
        check_one_vs_one(code)
        v, counts = resolve_weights(self.weights, code, y)
        if self.method == "hastie_tibshirani":
            check_bradley_terry_conditions(code, v)
        self.weights_ = v
        self.n_samples_per_classifier_ = counts
        return self

    def decode(self, Q, p0=None, record_history=False):
        """Hastie-Tibshirani only: the full :class:`BradleyTerryResult`.

        Parameters
        ----------
        Q : array-like of shape (n_samples, n_classifiers)
            Probabilities of each column's positive side.
        p0 : ndarray of shape (n_samples, n_classes), default=None
            Start of the fixed point; uniform when None.
        record_history : bool, default=False
            Record the objective after every sweep.

        Returns
        -------
        result : BradleyTerryResult
            Probabilities, sweeps, convergence flags (and the history).
        """
        if self.method != "hastie_tibshirani":
            raise AttributeError("decode is only available for method='hastie_tibshirani'.")
        return super().decode(Q, p0=p0, record_history=record_history)

    def predict_proba(self, Q):
        """Coupled class probabilities.

        Parameters
        ----------
        Q : array-like of shape (n_samples, n_classifiers)
            Binary outputs of the kind the decoder was fitted on.

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
            Rows sum to 1.
        """
        if self.method == "hastie_tibshirani":
            return self.decode(Q).proba
        R = pairwise_matrix(self._clipped(Q), self.code_)
        P = wu_lin_weng_system(R) if self.solver == "exact" else wu_lin_weng_libsvm(R)
        # Wu et al. show the solution is non-negative; guard against rounding.
        P = np.clip(P, np.finfo(np.float64).tiny, None)
        return P / P.sum(axis=1, keepdims=True)
