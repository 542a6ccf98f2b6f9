"""What every decoder shares: input validation and ``predict``.

A decoder turns binary outputs ``Q`` of shape ``(n_samples, n_classifiers)``
into class scores or probabilities for the classes ``0..n_classes-1`` of a code
matrix. Its interface::

    decoder.fit(Q, y, code, output="proba")   # y: integer class indices
    decoder.predict_proba(Q)                  # (n_samples, n_classes), rows sum to 1
    decoder.decision_function(Q)              # larger = more likely
    decoder.predict(Q)                        # argmax of predict_proba

Decoders that learn nothing still take ``fit`` (it records the code) so every
decoder can be swapped for another inside a fitted classifier.

Guarantees every subclass inherits: ``fit`` is all-or-nothing (a subclass's
``fit`` is wrapped by :func:`convexagg._utils.restore_on_failure` when the class
is created, so a failed fit leaves no half-fitted decoder), and the inputs are
validated here with errors that name ``Q``, ``y`` or ``code``. A decoder that
only handles some codes (pairwise coupling: one-vs-one) or some outputs checks
that in ``fit`` too; ``_check_output`` and ``_check_settings`` let an estimator
ask before it trains any binary classifier.
"""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

from .._array_api import array_namespace
from .._utils import restore_on_failure
from ..codes import check_code_matrix
from ..losses import OUTPUT_KINDS, check_binary_outputs
from ..validation import check_class_indices, check_columns_match_code, check_fitted_columns

__all__ = ["BaseDecoder", "check_fit_inputs"]


def check_fit_inputs(Q, y, code, output="proba"):
    """``(Q, y, code)`` validated for fitting a decoder, with errors naming each.

    ``Q``: finite (probabilities in ``[0, 1]``), at least one row, one column per
    code column; ``y``: 1-D integer class indices ``0..n_classes-1``, one per row
    of ``Q``; ``code``: a valid code matrix. Returns ``Q`` as float, ``y`` as
    ``intp`` and the code as ``int8``.
    """
    code = check_code_matrix(code)
    Q = check_binary_outputs(Q, output)
    if Q.shape[0] == 0:
        raise ValueError("Q has 0 rows (samples); at least one is needed to fit a decoder.")
    check_columns_match_code(Q, code)
    y = np.asarray(y)
    if y.ndim != 1 or y.shape[0] != Q.shape[0]:
        raise ValueError(
            f"y must be 1-D with one label per row of Q ({Q.shape[0]}), got shape {y.shape}."
        )
    check_class_indices(y, code.shape[0])
    return Q, y.astype(np.intp), code


class BaseDecoder(BaseEstimator):
    """Base class: validation of ``(Q, y, code)`` and ``predict``."""

    # Decoders without parameters validate trivially (the estimators call
    # ``_validate_params`` on every decoder before training any binary).
    _parameter_constraints: dict = {}

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        fit = cls.__dict__.get("fit")
        if fit is not None and not getattr(fit, "__restore_on_failure__", False):
            cls.fit = restore_on_failure(fit)

    def _check_settings(self):
        """Raise if the decoder's settings cannot fit, whatever the data (a no-op here).

        Called by the estimators before any binary classifier is trained;
        subclasses with settings that depend on each other override it.
        """

    def _check_output(self, output):
        """Raise a ``ValueError`` if this decoder cannot take ``output`` binary outputs.

        Called by the estimators before any binary classifier is trained;
        subclasses with output-dependent parameters (a loss) extend it.
        """
        if output not in OUTPUT_KINDS:
            raise ValueError(f"output must be one of {OUTPUT_KINDS}, got {output!r}.")

    def _validate_fit(self, Q, y, code, output):
        """Validate the inputs (:func:`check_fit_inputs`) and record the code and output kind."""
        self._check_output(output)
        Q, y, code = check_fit_inputs(Q, y, code, output)
        self.code_ = code
        self.output_ = output
        self.n_classes_ = code.shape[0]
        return Q, y, code

    def _validate_predict(self, Q):
        check_is_fitted(self, "code_")
        Q = check_binary_outputs(Q, self.output_)
        check_fitted_columns(Q, self.code_.shape[1])
        return Q

    def predict(self, Q):
        """Most probable class index for each row of ``Q``.

        Ties go to the smallest class index (``numpy.argmax``).

        Parameters
        ----------
        Q : array-like of shape (n_samples, n_classifiers)
            Binary outputs of the kind the decoder was fitted on.

        Returns
        -------
        y : ndarray of shape (n_samples,)
            Class indices ``0..n_classes-1``.
        """
        scores = self.predict_proba(Q) if hasattr(self, "predict_proba") else None
        if scores is None:
            scores = self.decision_function(Q)
        namespace = array_namespace(scores)  # array-API scores: argmax on their device
        return (
            np.argmax(scores, axis=1) if namespace is None else namespace.xp.argmax(scores, axis=1)
        )
