"""Loss-based decoding (Allwein, Schapire & Singer 2000) and its probabilistic form (SDM 2014)."""

from __future__ import annotations

import numpy as np
from scipy.special import softmax
from sklearn.utils._param_validation import StrOptions

from .._sklearn import fit_context
from ..aggregation import output_discrepancies
from ..losses import LOSSES, binary_losses
from .base import BaseDecoder

__all__ = ["LossBasedDecoder"]


class LossBasedDecoder(BaseDecoder):
    """Loss-based decoding with equal weights, and its softmax probabilities.

    Each class is scored by the average loss of its codeword against the binary
    outputs (Allwein et al.), and the probabilities are the softmax of minus
    that score -- the paper's model (its eq. 7) with every aggregation weight
    fixed to ``1/M`` (its section 5.1)::

        rho[i, k] = (1/M) sum_l d(C[k, l], Q[i, l]),    P[i] = softmax(-rho[i])

    With the default exponential loss on probabilities
    ``d(c, q) = exp(-c (q - 1/2))`` (paper eq. 6). The non-zero entries are
    exactly :func:`convexagg.aggregation.discrepancies` with ``w = 1/M``.

    **Don't-care entries.** Allwein et al. charge a zero entry the loss of a
    zero margin, ``L(0)`` (``exp(0) = 1`` for the exponential loss, ``log 2``
    for cross-entropy and logistic, ``1`` for hinge), which is also what the
    paper's eq. 6 gives at ``C = 0``; that is ``dont_care="loss_at_zero"``
    (default, the baselines spec's section 4.2). ``dont_care="ignore"`` charges
    0, the convention of the paper's convex model (:class:`ConvexDecoder` at
    ``w = 1/M``). The two differ by ``L(0) * (zeros in codeword k) / M``, a
    constant over classes -- hence the same probabilities -- for codes where
    every class has as many zeros (one-vs-rest, one-vs-one, complete), but not
    for sparse random codes.

    By construction the probabilities are close to uniform: with the exponential
    loss on probabilities ``rho`` lies in ``[e^-1/2, e^1/2]``, so
    ``p_k / p_l <= 2.835`` (spec section 4.2); this is the method, not a bug.

    Parameters
    ----------
    loss : {"exponential", "cross_entropy", "logistic", "hinge"}, default="exponential"
        Per-classifier loss ``d``; see :mod:`convexagg.losses` for the binary
        outputs (probabilities or margins) each accepts.
    dont_care : {"loss_at_zero", "ignore"}, default="loss_at_zero"
        What a zero code entry costs (see above).
    average : bool, default=True
        Divide by ``M`` (the paper's probabilistic form). ``False`` sums the
        losses (Allwein et al.'s ``d_L``): same prediction, sharper softmax.

    Attributes
    ----------
    weights_ : ndarray of shape (n_classifiers,)
        The fixed weights, ``1/M`` (or 1 with ``average=False``).
    code_ : ndarray of shape (n_classes, n_classifiers)
    output_ : {"proba", "margin"}
    n_classes_ : int

    References
    ----------
    E. L. Allwein, R. E. Schapire, Y. Singer. Reducing multiclass to binary: a
    unifying approach for margin classifiers. JMLR 1:113-141, 2000.
    S. Park, T. Hwang, S. Choi. Convex Optimization for Binary Classifier
    Aggregation in Multiclass Problems. SDM 2014, section 5.1.
    """

    _parameter_constraints = {
        "loss": [StrOptions(set(LOSSES))],
        "dont_care": [StrOptions({"loss_at_zero", "ignore"})],
        "average": ["boolean"],
    }

    def __init__(self, loss="exponential", dont_care="loss_at_zero", average=True):
        self.loss = loss
        self.dont_care = dont_care
        self.average = average

    @fit_context(prefer_skip_nested_validation=True)
    def fit(self, Q, y, code, output="proba"):
        """Record the code and the fixed weights (nothing is learned).

        Parameters
        ----------
        Q : array-like of shape (n_samples, n_classifiers)
            Binary outputs (validated, otherwise unused).
        y : array-like of shape (n_samples,)
            Integer class indices ``0..n_classes-1``.
        code : array-like of shape (n_classes, n_classifiers)
            The code matrix the outputs come from.
        output : {"proba", "margin"}, default="proba"
            What ``Q`` holds; ``loss`` must be defined for it.

        Returns
        -------
        self : object
            The fitted decoder.
        """
        Q, y, code = self._validate_fit(Q, y, code, output)
        binary_losses(Q[:0], self.loss, output)  # loss/output compatibility, named error
        n_classifiers = code.shape[1]
        self.weights_ = np.full(n_classifiers, 1.0 / n_classifiers if self.average else 1.0)
        return self

    def discrepancies(self, Q):
        """Compute ``rho``: each class's (averaged) loss.

        Parameters
        ----------
        Q : array-like of shape (n_samples, n_classifiers)
            Binary outputs of the kind the decoder was fitted on.

        Returns
        -------
        rho : ndarray of shape (n_samples, n_classes)
            The discrepancies (smaller = more likely).
        """
        Q = self._validate_predict(Q)
        rho = output_discrepancies(
            Q, self.code_, self.weights_, loss=self.loss, output=self.output_
        )
        if self.dont_care == "loss_at_zero":
            neutral = np.full((1, 1), 0.5 if self.output_ == "proba" else 0.0)
            loss_at_zero = binary_losses(neutral, self.loss, self.output_)[0][0, 0]
            rho += loss_at_zero * ((self.code_ == 0) @ self.weights_)
        return rho

    def decision_function(self, Q):
        """``-rho``: minus each class's loss (log-probability up to a constant).

        Parameters
        ----------
        Q : array-like of shape (n_samples, n_classifiers)
            Binary outputs of the kind the decoder was fitted on.

        Returns
        -------
        scores : ndarray of shape (n_samples, n_classes)
            ``-rho``.
        """
        return -self.discrepancies(Q)

    def predict_proba(self, Q):
        """Class probabilities ``softmax(-rho)`` (the paper's section 5.1).

        Parameters
        ----------
        Q : array-like of shape (n_samples, n_classifiers)
            Binary outputs of the kind the decoder was fitted on.

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
            Rows sum to 1.
        """
        return softmax(self.decision_function(Q), axis=1)
