"""Hamming (hard) decoding (Allwein, Schapire & Singer 2000; baselines spec section 4.1)."""

from __future__ import annotations

import numpy as np

from .base import BaseDecoder

__all__ = ["HammingDecoder"]


class HammingDecoder(BaseDecoder):
    """Hard decoding: the class whose codeword is nearest to the signs of ``Q``.

    Each binary output is reduced to a vote ``s_l = sign(Q[:, l] - 1/2)`` for
    probabilities (``sign(Q[:, l])`` for margins), with ``sign(0) = 0``, and
    the generalised Hamming distance of Allwein et al. is::

        d_H[i, k] = sum_l (1 - C[k, l] s[i, l]) / 2

    so an agreeing vote costs 0, a disagreeing one 1, and a don't-care entry
    (``C[k, l] = 0``) or an undecided classifier (``s = 0``) costs 1/2 -- Allwein
    et al.'s convention for zeros. The prediction is ``argmin_k d_H`` (ties go to
    the smallest class index).

    A hard decoder: there is no ``predict_proba`` (so a
    :class:`~convexagg.CodeMatrixClassifier` using it has none either);
    ``decision_function`` returns ``-d_H``.

    Attributes
    ----------
    code_ : ndarray of shape (n_classes, n_classifiers)
    output_ : {"proba", "margin"}
    n_classes_ : int

    References
    ----------
    E. L. Allwein, R. E. Schapire, Y. Singer. Reducing multiclass to binary: a
    unifying approach for margin classifiers. JMLR 1:113-141, 2000.
    """

    def fit(self, Q, y, code, output="proba"):
        """Record the code matrix (nothing is learned).

        Parameters
        ----------
        Q : array-like of shape (n_samples, n_classifiers)
            Binary outputs (validated, otherwise unused).
        y : array-like of shape (n_samples,)
            Integer class indices ``0..n_classes-1``.
        code : array-like of shape (n_classes, n_classifiers)
            The code matrix the outputs come from.
        output : {"proba", "margin"}, default="proba"
            What ``Q`` holds (votes are ``Q - 1/2`` or ``Q``).

        Returns
        -------
        self : object
            The fitted decoder.
        """
        self._validate_fit(Q, y, code, output)
        return self

    def hamming_distances(self, Q):
        """Compute the generalised Hamming distance ``d_H`` to every codeword.

        Parameters
        ----------
        Q : array-like of shape (n_samples, n_classifiers)
            Binary outputs of the kind the decoder was fitted on.

        Returns
        -------
        d_H : ndarray of shape (n_samples, n_classes)
            Distances, in steps of 1/2.
        """
        Q = self._validate_predict(Q)
        votes = np.sign(Q - 0.5 if self.output_ == "proba" else Q)
        n_classifiers = self.code_.shape[1]
        return (n_classifiers - votes @ self.code_.T.astype(votes.dtype)) / 2.0

    def decision_function(self, Q):
        """Return minus the Hamming distance to each codeword (larger = nearer).

        Parameters
        ----------
        Q : array-like of shape (n_samples, n_classifiers)
            Binary outputs of the kind the decoder was fitted on.

        Returns
        -------
        scores : ndarray of shape (n_samples, n_classes)
            ``-d_H``.
        """
        return -self.hamming_distances(Q)
