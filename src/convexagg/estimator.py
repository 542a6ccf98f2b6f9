"""scikit-learn estimators: encode with a code matrix, train binaries, decode."""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, MetaEstimatorMixin, _fit_context, clone
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import check_cv
from sklearn.preprocessing import LabelEncoder
from sklearn.utils import get_tags
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions
from sklearn.utils.metaestimators import available_if
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, column_or_1d, validate_data

from .binary import (
    binary_output_kind,
    fit_binaries,
    out_of_fold_outputs,
    predict_binaries,
)
from .codes import CODE_NAMES, make_code
from .decoders import ConvexDecoder
from .decoders.convex import PENALTIES
from .losses import LOSSES

__all__ = ["CodeMatrixClassifier", "ConvexAggregationClassifier"]


def _decoder_has(attr):
    """``available_if`` check: the (fitted or default) decoder has ``attr``."""

    def check(self):
        decoder = getattr(self, "decoder_", None)
        return hasattr(decoder if decoder is not None else self._make_decoder(), attr)

    return check


class CodeMatrixClassifier(MetaEstimatorMixin, ClassifierMixin, BaseEstimator):
    """Multiclass classifier from binary classifiers, a code matrix and a decoder.

    ``fit`` encodes the classes with a code matrix (one-vs-rest, one-vs-one,
    ECOC, or your own), trains one clone of ``estimator`` per column, and fits
    ``decoder`` on the binary outputs. ``predict_proba`` decodes the binary
    outputs of new samples.

    Parameters
    ----------
    estimator : classifier, or list of fitted binary classifiers, default=None
        Binary learner, cloned for each column; ``LogisticRegression()`` when
        None. Its outputs are ``predict_proba`` if it has one, else
        ``decision_function`` margins. With ``cv="prefit"``: one fitted binary
        classifier per code column, trained with the positive side as its larger
        class label (``1`` or ``True``).
    code : {"ovr", "ovo", "ecoc", "complete", "sparse_random", "dense_random"} or array-like, \
default="ovo"
        Code matrix or its name; see :func:`convexagg.codes.make_code`. An array
        has shape ``(n_classes, n_classifiers)`` with rows in the order of
        ``classes_`` (sorted labels).
    decoder : decoder, default=None
        Aggregation method with ``fit(Q, y, code, output)``; cloned.
        ``ConvexDecoder()`` when None.
    cv : int, cross-validation generator, iterable, "prefit" or None, default=None
        Which binary outputs the decoder is fitted on. None: the outputs of the
        binaries on their own training data (the paper's protocol). An int or
        splitter: out-of-fold outputs (the binaries are then refitted on all
        data, as in ``CalibratedClassifierCV``). "prefit": ``estimator`` holds
        already-fitted binaries and only the decoder is fitted.
    n_jobs : int, default=None
        Jobs for training and predicting the binaries (joblib).
    random_state : int, RandomState instance or None, default=None
        Seeds random codes and the cross-validation splitter.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    code_matrix_ : ndarray of shape (n_classes, n_classifiers)
    estimators_ : list of fitted binary classifiers
    decoder_ : fitted decoder
    binary_output_ : {"proba", "margin"}
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Only when ``X`` has string column names.
    """

    _parameter_constraints = {
        "estimator": [HasMethods(["fit"]), list, tuple, None],
        "code": [StrOptions(set(CODE_NAMES)), "array-like"],
        "decoder": [HasMethods(["fit"]), None],
        "cv": ["cv_object", StrOptions({"prefit"})],
        "n_jobs": [Integral, None],
        "random_state": ["random_state"],
    }

    def __init__(
        self, estimator=None, *, code="ovo", decoder=None, cv=None, n_jobs=None, random_state=None
    ):
        self.estimator = estimator
        self.code = code
        self.decoder = decoder
        self.cv = cv
        self.n_jobs = n_jobs
        self.random_state = random_state

    def _make_decoder(self):
        return ConvexDecoder() if self.decoder is None else clone(self.decoder)

    def _base_estimator(self):
        if self.estimator is None or isinstance(self.estimator, (list, tuple)):
            return LogisticRegression()
        return self.estimator

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        base = get_tags(self._base_estimator())
        tags.input_tags.sparse = base.input_tags.sparse
        tags.input_tags.allow_nan = base.input_tags.allow_nan
        return tags

    def _validate_X(self, X, y="no_validation", reset=True):
        """``validate_data`` with NaN allowed only where the binary learner takes it."""
        allow_nan = get_tags(self).input_tags.allow_nan
        return validate_data(
            self,
            X,
            y,
            accept_sparse=["csr", "csc"],
            ensure_all_finite="allow-nan" if allow_nan else True,
            reset=reset,
        )

    def _prefit_binaries(self, code):
        estimators = list(self.estimator) if isinstance(self.estimator, (list, tuple)) else None
        if estimators is None or len(estimators) != code.shape[1]:
            raise ValueError(
                "with cv='prefit', estimator must be a list of fitted binary classifiers, "
                f"one per code column ({code.shape[1]}); got {self.estimator!r}."
            )
        for est in estimators:
            check_is_fitted(est)
        return estimators

    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y):
        """Encode, train the binary classifiers, and fit the decoder.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            Class labels of any sortable type.

        Returns
        -------
        self
        """
        X, y = self._validate_X(X, y)
        y = column_or_1d(y, warn=True)
        check_classification_targets(y)
        encoder = LabelEncoder().fit(y)
        classes = encoder.classes_
        if classes.size < 2:
            raise ValueError(
                f"y contains 1 class ({classes[0]!r}); a classifier needs at least 2 classes."
            )
        y_enc = encoder.transform(y)
        code = make_code(self.code, classes.size, random_state=self.random_state)

        if self.cv == "prefit":
            estimators = self._prefit_binaries(code)
            output = binary_output_kind(estimators[0])
            Q = predict_binaries(estimators, X, output, n_jobs=self.n_jobs)
        else:
            base = self._base_estimator()
            output = binary_output_kind(base)
            estimators = fit_binaries(base, X, y_enc, code, n_jobs=self.n_jobs)
            if self.cv is None:
                Q = predict_binaries(estimators, X, output, n_jobs=self.n_jobs)
            else:
                cv = check_cv(self.cv, y_enc, classifier=True)
                Q = out_of_fold_outputs(base, X, y_enc, code, cv, output, n_jobs=self.n_jobs)
        decoder = self._make_decoder().fit(Q, y_enc, code, output=output)

        # Attributes are set only once everything has succeeded.
        self.classes_ = classes
        self.code_matrix_ = code
        self.estimators_ = estimators
        self.binary_output_ = output
        self.decoder_ = decoder
        return self

    def fit_decoder(self, X, y):
        """Refit only the decoder, on the binaries already trained.

        Swap the aggregation method of a fitted classifier without retraining
        its binary classifiers, so that decoders can be compared on identical
        binaries::

            clf.set_params(decoder=BradleyTerryDecoder()).fit_decoder(X, y)

        The current ``decoder`` parameter (for
        :class:`ConvexAggregationClassifier`, its ``alpha`` / ``loss`` / ...)
        is cloned and fitted on the binary outputs of ``X`` chosen by ``cv`` as
        in :meth:`fit`: those of ``estimators_`` (``cv=None`` or ``"prefit"``),
        or out-of-fold outputs (``cv`` a splitter: fold models are trained for
        the outputs, ``estimators_`` stay as they are). ``estimators_``,
        ``code_matrix_`` and ``classes_`` are not changed.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Normally the data ``fit`` was called with.
        y : array-like of shape (n_samples,)
            Labels, all among ``classes_``.

        Returns
        -------
        self
        """
        check_is_fitted(self)
        self._validate_params()
        X = self._validate_X(X, reset=False)
        y = column_or_1d(y, warn=True)
        if len(y) != X.shape[0]:
            raise ValueError(f"X has {X.shape[0]} samples but y has {len(y)}.")
        unknown = np.setdiff1d(y, self.classes_)
        if unknown.size:
            raise ValueError(f"y contains labels not seen in fit: {unknown[:5]!r}.")
        y_enc = np.searchsorted(self.classes_, y)
        if self.cv is None or self.cv == "prefit":
            Q = predict_binaries(self.estimators_, X, self.binary_output_, n_jobs=self.n_jobs)
        else:
            cv = check_cv(self.cv, y_enc, classifier=True)
            Q = out_of_fold_outputs(
                self._base_estimator(),
                X,
                y_enc,
                self.code_matrix_,
                cv,
                self.binary_output_,
                n_jobs=self.n_jobs,
            )
        self.decoder_ = self._make_decoder().fit(
            Q, y_enc, self.code_matrix_, output=self.binary_output_
        )
        return self

    def predict_binary_proba(self, X):
        """Binary outputs ``Q`` of shape ``(n_samples, n_classifiers)``.

        Probabilities of each column's positive side, or margins when the binary
        learner has no ``predict_proba`` (see ``binary_output_``).
        """
        check_is_fitted(self)
        X = self._validate_X(X, reset=False)
        return predict_binaries(self.estimators_, X, self.binary_output_, n_jobs=self.n_jobs)

    @available_if(_decoder_has("predict_proba"))
    def predict_proba(self, X):
        """Class membership probabilities, columns in the order of ``classes_``."""
        Q = self.predict_binary_proba(X)
        return self.decoder_.predict_proba(Q)

    @available_if(_decoder_has("decision_function"))
    def decision_function(self, X):
        """Decoder scores: larger means more likely.

        Shape ``(n_samples, n_classes)``, or ``(n_samples,)`` for two classes
        (positive means ``classes_[1]``), as in scikit-learn.
        """
        Q = self.predict_binary_proba(X)
        scores = self.decoder_.decision_function(Q)
        if scores.shape[1] == 2:
            return scores[:, 1] - scores[:, 0]
        return scores

    def predict(self, X):
        """Class labels: the argmax of ``predict_proba`` (of the decoder's scores
        for decoders without probabilities)."""
        Q = self.predict_binary_proba(X)
        return self.classes_[self.decoder_.predict(Q)]


class ConvexAggregationClassifier(CodeMatrixClassifier):
    """The paper's method as one estimator: binaries plus :class:`ConvexDecoder`.

    Equivalent to ``CodeMatrixClassifier(estimator, code=code,
    decoder=ConvexDecoder(alpha, loss, tol, max_iter, penalty=penalty,
    l1_ratio=l1_ratio), ...)`` with the decoder's parameters exposed for grid
    searches. The paper's other training criteria (large margin, stiffness) are
    ``CodeMatrixClassifier(decoder=ConvexDecoder(formulation=...))``; to choose
    ``alpha`` by cross-validation, see
    :class:`~convexagg.model_selection.ConvexAggregationClassifierCV`.

    Parameters
    ----------
    estimator : classifier, default=None
        Binary learner (``LogisticRegression()`` when None).
    code : str or array-like, default="ovo"
    alpha : float, default=1e-4
        Regularisation of the aggregation weights (the paper's lambda): the
        penalty is ``alpha/2 |w|^2`` for ``penalty="l2"`` (paper eq. 12),
        ``alpha sum(w)`` for ``"l1"``, and ``alpha (l1_ratio sum(w) +
        (1 - l1_ratio)/2 |w|^2)`` for ``"elasticnet"``.
    loss : {"cross_entropy", "exponential", "logistic", "hinge"}, default="cross_entropy"
    tol : float, default=1e-4
    max_iter : int, default=100
    penalty : {"l2", "l1", "elasticnet"}, default="l2"
        With ``w >= 0`` the L1 term is linear and the same interior point solves it.
    l1_ratio : float, default=0.5
        L1 share for ``penalty="elasticnet"``, in ``[0, 1]``.
    cv : int, cross-validation generator, iterable, "prefit" or None, default=None
    n_jobs : int, default=None
    random_state : int, RandomState instance or None, default=None

    Attributes
    ----------
    weights_ : ndarray of shape (n_classifiers,)
        Learned aggregation weights.
    n_iter_ : int
        Interior point iterations.
    classes_, code_matrix_, estimators_, decoder_, binary_output_, n_features_in_
        As in :class:`CodeMatrixClassifier`.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from convexagg import ConvexAggregationClassifier
    >>> X, y = load_iris(return_X_y=True)
    >>> clf = ConvexAggregationClassifier(code="ovo").fit(X, y)
    >>> clf.predict_proba(X[:2]).shape
    (2, 3)
    """

    _parameter_constraints = {
        **{k: v for k, v in CodeMatrixClassifier._parameter_constraints.items() if k != "decoder"},
        "alpha": [Interval(Real, 0, None, closed="left")],
        "loss": [StrOptions(set(LOSSES))],
        "tol": [Interval(Real, 0, None, closed="neither")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "penalty": [StrOptions(set(PENALTIES))],
        "l1_ratio": [Interval(Real, 0, 1, closed="both")],
    }

    def __init__(
        self,
        estimator=None,
        *,
        code="ovo",
        alpha=1e-4,
        loss="cross_entropy",
        tol=1e-4,
        max_iter=100,
        cv=None,
        n_jobs=None,
        random_state=None,
        penalty="l2",
        l1_ratio=0.5,
    ):
        self.estimator = estimator
        self.code = code
        self.alpha = alpha
        self.loss = loss
        self.tol = tol
        self.max_iter = max_iter
        self.cv = cv
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.penalty = penalty
        self.l1_ratio = l1_ratio

    def _make_decoder(self):
        return ConvexDecoder(
            alpha=self.alpha,
            loss=self.loss,
            tol=self.tol,
            max_iter=self.max_iter,
            penalty=self.penalty,
            l1_ratio=self.l1_ratio,
        )

    @property
    def weights_(self):
        check_is_fitted(self)
        return self.decoder_.weights_

    @property
    def n_iter_(self):
        check_is_fitted(self)
        return self.decoder_.n_iter_
