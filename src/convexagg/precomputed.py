"""A decoder as a scikit-learn classifier of binary outputs you already have.

The decoders' own interface, ``fit(Q, y, code, output)``, is not a
classifier's ``fit(X, y)``, so a decoder alone cannot go through
``cross_val_score``, ``GridSearchCV`` or a ``Pipeline``.
:class:`OutputDecoderClassifier` is that classifier: its ``X`` *is* the
matrix of binary outputs ``Q`` (from any model -- scikit-learn binaries, a
network with one head per code column, a remote service), and the code matrix
and the kind of output are its parameters.
"""

from __future__ import annotations

import inspect

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.preprocessing import LabelEncoder
from sklearn.utils._param_validation import HasMethods, StrOptions
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import (
    check_is_fitted,
    check_non_negative,
    column_or_1d,
    validate_data,
)

from ._array_api import array_namespace
from ._sklearn import fit_context, num_samples
from ._utils import restore_on_failure
from .codes import CODE_NAMES, check_code_matrix, make_code
from .decoders import ConvexDecoder
from .losses import OUTPUT_KINDS
from .validation import check_sample_weight, check_targets

__all__ = ["OutputDecoderClassifier"]

# Names whose code is drawn at random: a fresh draw is not the code the outputs came from.
_RANDOM_CODES = ("ecoc", "sparse_random", "dense_random")


def _decoder_has(attr):
    """``available_if`` check: the fitted decoder (the unfitted one before ``fit``) has ``attr``."""

    def check(self):
        decoder = getattr(self, "decoder_", None)
        if decoder is None:
            decoder = ConvexDecoder() if self.decoder is None else self.decoder
        return hasattr(decoder, attr)

    return check


def _accepts_sample_weight(decoder):
    """Whether ``decoder.fit`` takes a ``sample_weight`` argument."""
    try:
        return "sample_weight" in inspect.signature(decoder.fit).parameters
    except (TypeError, ValueError):  # a builtin without a signature
        return False


def _float_dtypes(namespace):
    """The float dtypes ``X`` may keep: NumPy's, or those of its array-API namespace."""
    xp = np if namespace is None else namespace.xp
    return [xp.float64, xp.float32]


class OutputDecoderClassifier(ClassifierMixin, BaseEstimator):
    """Classifier of precomputed binary outputs: a decoder with a classifier's API.

    ``X`` is the matrix ``Q`` of shape ``(n_samples, n_classifiers)`` of binary
    outputs, column ``l`` the output of the binary problem that column ``l`` of
    ``code`` defines (see :mod:`convexagg.codes`), however it was produced. ``fit``
    fits ``decoder`` on ``(X, y)``; ``predict_proba``, ``decision_function`` and
    ``predict`` decode new rows of outputs. Nothing is trained on features, so
    this is the way to cross-validate or grid-search a decoder (its ``alpha``,
    its loss, the decoder itself) on outputs you already have::

        clf = OutputDecoderClassifier(ConvexDecoder(), code="ovo")
        search = GridSearchCV(clf, {"decoder__alpha": [1e-4, 1e-2, 1]}).fit(Q, y)

    With the outputs of a :class:`~convexagg.CodeMatrixClassifier` and its
    ``code_matrix_`` it predicts what that classifier predicts with the same
    decoder. Fitting on outputs of the binaries on their own training rows is
    the paper's protocol; on out-of-fold outputs, ``CalibratedClassifierCV``'s.

    Parameters
    ----------
    decoder : decoder, default=None
        Aggregation method with ``fit(Q, y, code, output)`` (any decoder of
        :mod:`convexagg.decoders`); cloned. ``ConvexDecoder()`` when None. The
        parameters of a decoder given here are searchable as ``decoder__<name>``.
    code : {"ovr", "ovo", "complete", "ternary_complete", "ordinal"}, array-like \
or callable
        The code matrix the outputs come from. An array has shape
        ``(n_classes, n_classifiers)`` with rows in the order of ``classes_``
        (sorted labels). A name is built by :func:`~convexagg.codes.make_code`
        for the number of classes in ``y``, so it follows the classes of each
        training fold; random codes (``"sparse_random"``, ``"dense_random"``,
        ``"ecoc"``) are refused, since a fresh draw is not the code the outputs
        came from: pass that code as an array. A callable is called as
        ``code(n_classes, n_classifiers)`` at ``fit``, with the number of
        classes in ``y`` and of columns of ``X``, and returns the code.
    output : {"proba", "margin"}, default="proba"
        What ``X`` holds: probabilities of each column's positive side (in
        ``[0, 1]``) or real margins (``decision_function``); pick a decoder
        loss defined for it (for :class:`~convexagg.ConvexDecoder` on margins,
        ``loss="logistic"``, ``"exponential"`` or ``"hinge"``).

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        The labels, sorted; the code's rows follow them.
    code_matrix_ : ndarray of shape (n_classes, n_classifiers)
        The validated code matrix.
    decoder_ : decoder
        The fitted clone of ``decoder``.
    n_features_in_ : int
        Number of columns of ``X``: the number of binary classifiers.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Only when ``X`` has string column names.

    Notes
    -----
    **Sample weights** go to the decoder's ``fit`` when it takes them
    (:class:`~convexagg.ConvexDecoder` does: integer weights fit as repeated
    rows would); with a decoder that does not, ``fit`` raises a ``TypeError``
    rather than ignoring them.

    **Methods** follow the decoder: without ``predict_proba`` (e.g.
    :class:`~convexagg.HammingDecoder`) the classifier has none either, and
    ``predict_log_proba`` exists only where the decoder computes it stably
    (:class:`~convexagg.ConvexDecoder`). For two classes ``decision_function``
    returns one column, positive for ``classes_[1]``, as in scikit-learn.

    **Array API.** Under ``sklearn.set_config(array_api_dispatch=True)``, ``X``
    of another array library (PyTorch, CuPy) is decoded on its device by
    :class:`~convexagg.ConvexDecoder`; ``classes_`` and the fitted decoder stay
    on the host, and ``predict`` returns numeric labels in ``X``'s namespace
    (other labels as NumPy).

    **Input tags.** With ``output="proba"`` the estimator declares
    ``input_tags.positive_only`` (negative ``X`` raises scikit-learn's
    ``"Negative values in data"`` error); values above 1 are refused too, which
    no tag can declare. scikit-learn's estimator checks feed arbitrary real
    ``X`` with any number of columns, so they are run (``tests/
    test_precomputed.py``) on ``output="margin"`` with a margin loss and a
    callable ``code`` that builds a code as wide as ``X``. The estimator
    declares ``classifier_tags.poor_score``: on arbitrary features rather than
    binary outputs (the checks' blobs) a decoder is not a good classifier, and
    is not meant to be.

    Examples
    --------
    >>> import numpy as np
    >>> from convexagg import OutputDecoderClassifier
    >>> rng = np.random.default_rng(0)
    >>> y = rng.integers(3, size=60)
    >>> Q = np.clip(np.where(np.eye(3)[y] == 1, 0.8, 0.2) + rng.normal(0, 0.1, (60, 3)), 0, 1)
    >>> clf = OutputDecoderClassifier(code="ovr").fit(Q, y)  # one-vs-rest outputs
    >>> clf.predict_proba(Q[:2]).shape
    (2, 3)
    """

    _parameter_constraints = {
        "decoder": [HasMethods(["fit"]), None],
        "code": [StrOptions(set(CODE_NAMES)), "array-like", callable],
        "output": [StrOptions(set(OUTPUT_KINDS))],
    }

    def __init__(self, decoder=None, *, code, output="proba"):
        self.decoder = decoder
        self.code = code
        self.output = output

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.positive_only = self.output == "proba"
        # X must be binary outputs: on arbitrary features (the estimator checks' blobs)
        # a decoder, a few non-negative weights on fixed-sign losses, is no classifier
        tags.classifier_tags.poor_score = True
        # array-API X is decoded on its device, but the fitted attributes (the code, the
        # decoder's weights) stay NumPy on the host, where the solver computes them:
        # scikit-learn's check_array_api_input wants them in X's namespace, so the tag
        # stays False (tests/test_array_api.py checks the array-API path instead)
        return tags

    # -- validation -------------------------------------------------------------------------

    def _check_probabilities(self, Q):
        """With ``output="proba"``, ``Q`` must lie in ``[0, 1]``."""
        if self.output != "proba":
            return
        check_non_negative(Q, f"{type(self).__name__} (X holds probabilities)")
        namespace = array_namespace(Q)
        top = float(Q.max(initial=0.0) if namespace is None else namespace.xp.max(Q))
        if top > 1.0:
            raise ValueError(
                "X holds probabilities (output='proba') but has values above 1 "
                f"(max {top!r}); pass output='margin' for scores."
            )

    def _make_code(self, n_classes, n_columns):
        """The code matrix for ``n_classes`` classes, as wide as ``X`` (``n_columns``)."""
        if callable(self.code):
            code = check_code_matrix(self.code(n_classes, n_columns), n_classes)
        elif isinstance(self.code, str):
            if self.code in _RANDOM_CODES:
                hint = " ('ecoc' below 8 classes is code='complete')" if self.code == "ecoc" else ""
                raise ValueError(
                    f"code={self.code!r} is drawn at random, so a new draw is not the code "
                    "the outputs X came from; pass that code matrix as an array (e.g. the "
                    f"code_matrix_ of the fitted classifier that produced X){hint}."
                )
            code = make_code(self.code, n_classes)
        else:
            code = check_code_matrix(self.code, n_classes)
        if code.shape[1] != n_columns:
            raise ValueError(
                f"X has {n_columns} columns (binary outputs) but the code matrix for "
                f"{n_classes} classes has {code.shape[1]} columns (binary classifiers); "
                "column l of X must be the output of column l of code."
            )
        return code

    def _fit_params(self, decoder, X, sample_weight):
        """``sample_weight`` for ``decoder.fit``, if given; a ``TypeError`` if it cannot take it."""
        if sample_weight is None:
            return {}
        if not _accepts_sample_weight(decoder):
            raise TypeError(
                f"sample_weight was given but {type(decoder).__name__}.fit does not take "
                "sample_weight; use a decoder that does (ConvexDecoder) or fit without weights."
            )
        return {"sample_weight": check_sample_weight(sample_weight, num_samples(X))}

    # -- fit --------------------------------------------------------------------------------

    @fit_context(prefer_skip_nested_validation=False)  # the decoder validates its own
    @restore_on_failure  # validate_data sets n_features_in_ before the decoder can fail
    def fit(self, X, y, sample_weight=None):
        """Fit the decoder on binary outputs ``X`` and labels ``y``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_classifiers)
            Binary outputs ``Q``, one column per column of the code.
        y : array-like of shape (n_samples,)
            Class labels of any sortable type.
        sample_weight : array-like of shape (n_samples,), default=None
            Passed to the decoder's ``fit``; a ``TypeError`` if it takes none.

        Returns
        -------
        self : OutputDecoderClassifier
            The fitted classifier.

        Raises
        ------
        ValueError, TypeError
            Naming the offending parameter or input. ``fit`` is all-or-nothing:
            if it raises, the classifier is left exactly as it was before.
        """
        namespace = array_namespace(X)
        X, y = validate_data(self, X, y, dtype=_float_dtypes(namespace))
        if namespace is not None:  # labels on the host (any type); X stays on its device
            y = namespace.to_host(y) if array_namespace(y) is not None else y
        y = column_or_1d(y, warn=True)
        check_targets(y)
        self._check_probabilities(X)
        encoder = LabelEncoder().fit(y)
        if encoder.classes_.size < 2:
            raise ValueError(
                f"y contains 1 class ({encoder.classes_[0]!r}); a classifier needs at least "
                "2 classes."
            )
        code = self._make_code(encoder.classes_.size, X.shape[1])
        decoder = ConvexDecoder() if self.decoder is None else clone(self.decoder)
        fit_params = self._fit_params(decoder, X, sample_weight)
        decoder.fit(X, encoder.transform(y), code, output=self.output, **fit_params)
        # attributes only once the decoder has fitted
        self.classes_ = encoder.classes_
        self.code_matrix_ = code
        self.decoder_ = decoder
        return self

    # -- prediction -------------------------------------------------------------------------

    def _outputs(self, X):
        """``X`` validated against the fit (fitted first: ``NotFittedError`` otherwise)."""
        check_is_fitted(self)
        Q = validate_data(self, X, dtype=_float_dtypes(array_namespace(X)), reset=False)
        self._check_probabilities(Q)
        return Q

    @available_if(_decoder_has("predict_proba"))
    def predict_proba(self, X):
        """Class membership probabilities.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_classifiers)
            Binary outputs of the kind (``output``) the classifier was fitted on.

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
            Columns in the order of ``classes_``; rows sum to 1.
        """
        Q = self._outputs(X)  # checks that the classifier is fitted
        return self.decoder_.predict_proba(Q)

    @available_if(_decoder_has("predict_log_proba"))
    def predict_log_proba(self, X):
        """Log of the class membership probabilities, computed stably by the decoder.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_classifiers)
            Binary outputs of the kind (``output``) the classifier was fitted on.

        Returns
        -------
        log_proba : ndarray of shape (n_samples, n_classes)
            Columns in the order of ``classes_``.
        """
        Q = self._outputs(X)  # checks that the classifier is fitted
        return self.decoder_.predict_log_proba(Q)

    @available_if(_decoder_has("decision_function"))
    def decision_function(self, X):
        """Decoder scores: larger means more likely.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_classifiers)
            Binary outputs of the kind (``output``) the classifier was fitted on.

        Returns
        -------
        scores : ndarray of shape (n_samples, n_classes) or (n_samples,)
            ``(n_samples,)`` for two classes (positive means ``classes_[1]``), as
            in scikit-learn.
        """
        Q = self._outputs(X)
        scores = self.decoder_.decision_function(Q)
        if scores.shape[1] == 2:
            return scores[:, 1] - scores[:, 0]
        return scores

    def predict(self, X):
        """Class labels: the decoder's most likely class for each row of outputs.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_classifiers)
            Binary outputs of the kind (``output``) the classifier was fitted on.

        Returns
        -------
        labels : ndarray of shape (n_samples,)
            Elements of ``classes_``.
        """
        Q = self._outputs(X)
        index = self.decoder_.predict(Q)
        namespace = array_namespace(index)
        if namespace is None:
            return self.classes_[index]
        # array-API X: numeric labels in its namespace, on its device; others (strings) NumPy
        labels = self.classes_[namespace.to_host(index)]
        return namespace.to_device(labels) if labels.dtype.kind in "biuf" else labels
