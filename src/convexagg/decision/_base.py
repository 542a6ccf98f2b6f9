"""What the decision wrappers share: the wrapped classifier, fitted in ``fit`` or
frozen, and its validated class probabilities."""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, MetaEstimatorMixin, clone
from sklearn.frozen import FrozenEstimator
from sklearn.utils._param_validation import HasMethods
from sklearn.utils.validation import check_is_fitted, column_or_1d

from ..validation import check_targets

__all__ = ["DecisionClassifierBase", "check_proba", "out_of_fold_model"]


def check_proba(proba, n_classes, name="predict_proba"):
    """``proba`` as a finite ``(n_samples, n_classes)`` float array, or a ValueError
    naming where it came from."""
    proba = np.asarray(proba, dtype=float)
    if proba.ndim != 2 or proba.shape[1] != n_classes:
        raise ValueError(
            f"{name} must have shape (n_samples, {n_classes}), one column per class; "
            f"got shape {proba.shape}."
        )
    if not np.all(np.isfinite(proba)) or np.any(proba < 0):
        raise ValueError(f"{name} must hold finite, non-negative probabilities.")
    return proba


def out_of_fold_model(estimator):
    """The fitted convexagg classifier behind ``estimator`` (frozen or not) when it
    keeps out-of-fold probabilities (``oof_proba_`` and ``oof_fold_``), else None."""
    model = estimator.estimator if isinstance(estimator, FrozenEstimator) else estimator
    if getattr(model, "oof_fold_", None) is None or getattr(model, "oof_proba_", None) is None:
        return None
    return model


class DecisionClassifierBase(MetaEstimatorMixin, ClassifierMixin, BaseEstimator):
    """A classifier that turns the probabilities of ``estimator`` into decisions.

    As scikit-learn's ``FixedThresholdClassifier``: ``fit`` fits a clone of
    ``estimator``; a classifier wrapped in :class:`sklearn.frozen.FrozenEstimator`
    is used as it is (its ``fit`` does nothing), so a model fitted once serves
    every decision without another fit of its binaries.
    """

    _parameter_constraints: dict = {"estimator": [HasMethods(["fit", "predict_proba"])]}

    def __init__(self, estimator):
        self.estimator = estimator

    def _validate_y(self, y):
        """``y`` as 1-D class labels (scikit-learn's messages), before any fit."""
        if y is None:
            raise ValueError(
                f"{type(self).__name__} requires y to be passed, but the target y is None."
            )
        y = column_or_1d(y, warn=True)
        check_targets(y)
        return y

    def _fit_estimator(self, X, y, sample_weight=None):
        kwargs = {} if sample_weight is None else {"sample_weight": sample_weight}
        self.estimator_ = clone(self.estimator).fit(X, y, **kwargs)
        return self.estimator_

    @property
    def classes_(self):
        """The classes of the fitted ``estimator``, in the order of the columns."""
        check_is_fitted(self, "estimator_")
        return self.estimator_.classes_

    @property
    def n_features_in_(self):
        """Number of features seen by the fitted ``estimator``."""
        check_is_fitted(self, "estimator_")
        return self.estimator_.n_features_in_

    def _proba(self, X):
        """The wrapped classifier's probabilities, checked."""
        check_is_fitted(self, "estimator_")
        return check_proba(
            self.estimator_.predict_proba(X), len(self.classes_), "estimator.predict_proba"
        )

    def predict_proba(self, X):
        """The wrapped classifier's class probabilities.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Samples.

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
            Columns in the order of ``classes_``.
        """
        return self._proba(X)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True  # the wrapped classifier validates X
        return tags
