"""scikit-learn estimators: encode with a code matrix, train binaries, decode."""

from __future__ import annotations

import copy
from dataclasses import dataclass
from numbers import Integral

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, MetaEstimatorMixin, _fit_context, clone
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import check_cv
from sklearn.preprocessing import LabelEncoder
from sklearn.utils import check_random_state, get_tags
from sklearn.utils._param_validation import HasMethods, StrOptions
from sklearn.utils.metaestimators import available_if
from sklearn.utils.multiclass import type_of_target
from sklearn.utils.validation import _num_samples, check_is_fitted, column_or_1d, validate_data

from ._dask import is_dask_array, map_row_blocks
from ._utils import restore_on_failure
from .binary import (
    binary_output_kind,
    column_seeds,
    fit_binaries,
    fit_predict_binaries,
    out_of_fold_outputs,
    predict_binaries,
)
from .codes import CODE_NAMES, make_code
from .decoders import ConvexDecoder

__all__ = ["CodeMatrixClassifier", "ConvexAggregationClassifier"]

_TARGET_HINTS = {
    "continuous": "its values look continuous (floats that are not whole numbers), "
    "a classifier needs discrete class labels",
    "unknown": "labels must be all strings or all numbers; object arrays of numbers "
    "or of mixed types are refused, as scikit-learn's classifiers refuse them",
}


def _check_lengths(X, y):
    """``X`` and ``y`` have one row per sample (checked before anything else)."""
    try:
        n_X, n_y = _num_samples(X), _num_samples(y)
    except TypeError:
        return  # malformed input: validate_data names the problem
    if n_X != n_y:
        raise ValueError(
            f"X has {n_X} samples but y has {n_y} labels; they must have the same length."
        )


def _check_targets(y):
    """Like scikit-learn's ``check_classification_targets`` (same message prefix,
    which its estimator checks look for), saying what is wrong with ``y``."""
    if getattr(y, "dtype", None) == np.dtype(object):  # type_of_target sorts mixed types
        kinds = sorted({type(v).__name__ for v in np.ravel(y)})
        if "NoneType" in kinds:
            i = next(i for i, v in enumerate(np.ravel(y)) if v is None)
            raise ValueError(f"y contains None (y[{i}]); every sample needs a class label.")
        if "str" in kinds and len(kinds) > 1:
            raise ValueError(
                f"y mixes label types ({', '.join(kinds)}); labels must be all strings or "
                "all numbers."
            )
    y_type = type_of_target(y, input_name="y")
    if y_type not in ("binary", "multiclass"):
        hint = _TARGET_HINTS.get(y_type, "y must be 1-D with one class label per sample")
        raise ValueError(f"Unknown label type: {y_type!r}. y must hold class labels: {hint}.")


class _BlockMethod:
    """Picklable ``X -> estimator.method(X)`` for ``map_blocks``: runs on a Dask worker
    on one in-memory block of rows.

    The binaries of a block run one after the other (``n_jobs=1`` on a shallow
    copy of the fitted estimator): the parallelism is over the blocks.
    """

    def __init__(self, estimator, method):
        self.estimator = estimator
        self.method = method

    def __call__(self, X):
        estimator = copy.copy(self.estimator)
        estimator.n_jobs = 1
        return getattr(estimator, self.method)(X)


def _decoder_has(attr):
    """``available_if`` check: the (fitted or default) decoder has ``attr``."""

    def check(self):
        decoder = getattr(self, "decoder_", None)
        return hasattr(decoder if decoder is not None else self._make_decoder(), attr)

    return check


@dataclass
class _Problem:
    """What every fit path prepares from ``(X, y)`` before training anything."""

    X: object
    y: np.ndarray  # class indices
    classes: np.ndarray
    code: np.ndarray
    seeds: list  # one per code column (None entries: the learners' own seeding)
    output: str  # "proba" or "margin"


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
        Jobs for training and predicting the binaries (joblib). Under
        ``joblib.parallel_config(backend="dask")`` (with a ``distributed``
        client) the binary problems are trained on the Dask workers.
    random_state : int, RandomState instance or None, default=None
        Seeds random codes and the binary learners' own ``random_state``
        parameters where those are left at None (one seed per column, the same
        in every fold); an int makes ``fit`` reproducible. A cross-validation
        splitter passed as ``cv`` keeps its own seed.
    verbose : int, default=0
        ``> 0``: one line per stage of ``fit`` (and the decoder's per-iteration
        lines, for decoders with ``verbose``).

    Notes
    -----
    Dask (``pip install convexagg[dask]``): ``fit`` takes in-memory ``X`` and
    trains the binaries on a cluster under the joblib ``"dask"`` backend.
    ``predict_binary_proba``, ``predict_proba``, ``decision_function`` and
    ``predict`` take a Dask array ``X`` too and return lazy Dask arrays,
    computed block by block of rows (whole rows per block) by the fitted
    binaries and decoder; the binaries must predict on any block of rows
    (scikit-learn's do).

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
        "verbose": ["verbose"],
    }

    def __init__(
        self,
        estimator=None,
        *,
        code="ovo",
        decoder=None,
        cv=None,
        n_jobs=None,
        random_state=None,
        verbose=0,
    ):
        self.estimator = estimator
        self.code = code
        self.decoder = decoder
        self.cv = cv
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose

    def _make_decoder(self):
        decoder = ConvexDecoder() if self.decoder is None else clone(self.decoder)
        if self.verbose and "verbose" in decoder.get_params(deep=False):
            decoder.set_params(verbose=self.verbose)
        return decoder

    def _base_estimator(self):
        if self.estimator is None or isinstance(self.estimator, (list, tuple)):
            return LogisticRegression()
        return self.estimator

    def _log(self, message):
        if self.verbose:
            print(f"[{type(self).__name__}] {message}", flush=True)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        try:
            base = get_tags(self._base_estimator())
        except AttributeError:  # not a scikit-learn estimator: fit names what it lacks
            return tags
        tags.input_tags.sparse = base.input_tags.sparse
        tags.input_tags.allow_nan = base.input_tags.allow_nan
        return tags

    # -- the fit skeleton: validation, seeds, outputs; fit, fit_decoder and the CV fit --

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

    def _validate_training_data(self, X, y):
        """``(X, y as class indices, classes)`` after every check of ``X`` and ``y``."""
        _check_lengths(X, y)
        X, y = self._validate_X(X, y)
        y = column_or_1d(y, warn=True)
        _check_targets(y)
        encoder = LabelEncoder().fit(y)
        classes = encoder.classes_
        if classes.size < 2:
            raise ValueError(
                f"y contains 1 class ({classes[0]!r}); a classifier needs at least 2 classes."
            )
        return X, encoder.transform(y), classes

    def _prefit_binaries(self, code):
        """The given fitted binaries, checked, and the output kind they share."""
        estimators = list(self.estimator) if isinstance(self.estimator, (list, tuple)) else None
        if estimators is None or len(estimators) != code.shape[1]:
            raise ValueError(
                "with cv='prefit', estimator must be a list of fitted binary classifiers, "
                f"one per code column ({code.shape[1]}); got {self.estimator!r}."
            )
        for l, est in enumerate(estimators):
            binary_output_kind(est)  # TypeError naming the estimator
            check_is_fitted(est)
            n_classes = len(getattr(est, "classes_", ()))
            if n_classes != 2:
                raise ValueError(
                    f"with cv='prefit', estimator[{l}] must be a fitted binary classifier "
                    f"(classes_ of length 2); it has {n_classes} classes."
                )
        if all(hasattr(est, "predict_proba") for est in estimators):
            return estimators, "proba"
        if all(hasattr(est, "decision_function") for est in estimators):
            return estimators, "margin"
        raise TypeError(
            "with cv='prefit', the binary classifiers must all have predict_proba or all "
            "have decision_function; they mix the two."
        )

    @staticmethod
    def _check_decoder(decoder, output):
        """Fail fast: the decoder's parameters are valid and it takes ``output``."""
        if hasattr(decoder, "_validate_params"):
            decoder._validate_params()
        if hasattr(decoder, "_check_output"):
            decoder._check_output(output)

    def _problem(self, X, y, decoder):
        """Validate ``X`` and ``y``, build the code and the per-column seeds, and check
        the decoder against the binaries' output kind: everything before training."""
        X, y_enc, classes = self._validate_training_data(X, y)
        # One generator for the code and the binaries' seeds: a seed fixes both.
        rng = None if self.random_state is None else check_random_state(self.random_state)
        code = make_code(self.code, classes.size, random_state=rng)
        if self.cv == "prefit":
            output = self._prefit_binaries(code)[1]
        else:
            output = binary_output_kind(self._base_estimator())
        self._check_decoder(decoder, output)  # before any binary is trained
        seeds = column_seeds(rng, code.shape[1])
        return _Problem(X, y_enc, classes, code, seeds, output)

    def _train_outputs(self, p, estimators=None):
        """``(estimators, Q)``: the binaries and the outputs the decoder is fitted on.

        ``cv=None``: the binaries' outputs on their own training rows; a splitter:
        out-of-fold outputs (fold models seeded like the final ones); ``"prefit"``:
        the given binaries' outputs. ``estimators``: already-trained binaries
        (``fit_decoder``), trained here when None.
        """
        base = self._base_estimator()
        if self.cv == "prefit":
            estimators = self._prefit_binaries(p.code)[0] if estimators is None else estimators
            return estimators, predict_binaries(estimators, p.X, p.output, n_jobs=self.n_jobs)
        if self.cv is None:
            if estimators is not None:
                return estimators, predict_binaries(estimators, p.X, p.output, n_jobs=self.n_jobs)
            self._log(f"training {p.code.shape[1]} binary classifiers")
            return fit_predict_binaries(
                base, p.X, p.y, p.code, p.output, n_jobs=self.n_jobs, seeds=p.seeds
            )
        cv = check_cv(self.cv, p.y, classifier=True)
        self._log(f"out-of-fold outputs: {cv.get_n_splits(p.X, p.y)} folds x {p.code.shape[1]}")
        Q = out_of_fold_outputs(
            base, p.X, p.y, p.code, cv, p.output, n_jobs=self.n_jobs, seeds=p.seeds
        )
        if estimators is None:
            self._log(f"training {p.code.shape[1]} binary classifiers on all rows")
            estimators = fit_binaries(base, p.X, p.y, p.code, n_jobs=self.n_jobs, seeds=p.seeds)
        return estimators, Q

    def _fit_decoder(self, decoder, Q, p):
        self._log(f"fitting {type(decoder).__name__} on {Q.shape[0]} x {Q.shape[1]} outputs")
        return decoder.fit(Q, p.y, p.code, output=p.output)

    @_fit_context(prefer_skip_nested_validation=False)
    @restore_on_failure
    def fit(self, X, y):
        """Encode, train the binary classifiers, and fit the decoder.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training samples.
        y : array-like of shape (n_samples,)
            Class labels of any sortable type.

        Returns
        -------
        self : object
            The fitted classifier.

        Raises
        ------
        ValueError, TypeError
            Naming the offending parameter or input. ``fit`` is all-or-nothing:
            if it raises, the estimator is left exactly as it was before.
        """
        decoder = self._make_decoder()
        p = self._problem(X, y, decoder)
        estimators, Q = self._train_outputs(p)
        self._set_fitted(p, estimators, self._fit_decoder(decoder, Q, p))
        return self

    def _set_fitted(self, p, estimators, decoder):
        """Attributes are set only once everything has succeeded."""
        self.classes_ = p.classes
        self.code_matrix_ = p.code
        self.estimators_ = estimators
        self.binary_output_ = p.output
        self.decoder_ = decoder
        self._column_seeds = p.seeds

    def _refit_problem(self, X, y):
        """The training problem of ``fit_decoder``: the fitted code, classes and seeds."""
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
        seeds = getattr(self, "_column_seeds", [None] * self.code_matrix_.shape[1])
        return _Problem(X, y_enc, self.classes_, self.code_matrix_, seeds, self.binary_output_)

    @restore_on_failure
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
        the outputs, seeded as in ``fit``; ``estimators_`` stay as they are).
        ``estimators_``, ``code_matrix_`` and ``classes_`` are not changed.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Normally the data ``fit`` was called with.
        y : array-like of shape (n_samples,)
            Labels, all among ``classes_``.

        Returns
        -------
        self : object
            The classifier with its new decoder.
        """
        p = self._refit_problem(X, y)
        decoder = self._make_decoder()
        self._check_decoder(decoder, p.output)
        _, Q = self._train_outputs(p, estimators=self.estimators_)
        self.decoder_ = self._fit_decoder(decoder, Q, p)
        return self

    # -- prediction ------------------------------------------------------------------------

    def predict_binary_proba(self, X):
        """Binary outputs ``Q`` of shape ``(n_samples, n_classifiers)``.

        Parameters
        ----------
        X : {array-like, sparse matrix, dask.array.Array} of shape (n_samples, n_features)
            Samples.

        Returns
        -------
        Q : ndarray of shape (n_samples, n_classifiers)
            Probabilities of each column's positive side, or margins when the
            binary learner has no ``predict_proba`` (see ``binary_output_``).
        """
        check_is_fitted(self)
        if is_dask_array(X):
            return self._map_dask(X, "predict_binary_proba", len(self.estimators_), np.float64)
        X = self._validate_X(X, reset=False)
        return predict_binaries(self.estimators_, X, self.binary_output_, n_jobs=self.n_jobs)

    def _map_dask(self, X, method, n_columns, dtype):
        """Lazy ``method`` over the row blocks of the Dask array ``X``."""
        if X.ndim != 2 or X.shape[1] != self.n_features_in_:
            raise ValueError(
                f"X has shape {X.shape}, but {type(self).__name__} is expecting "
                f"{self.n_features_in_} features as input."
            )
        return map_row_blocks(_BlockMethod(self, method), X, n_columns, dtype)

    @available_if(_decoder_has("predict_proba"))
    def predict_proba(self, X):
        """Class membership probabilities.

        Parameters
        ----------
        X : {array-like, sparse matrix, dask.array.Array} of shape (n_samples, n_features)
            Samples.

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
            Columns in the order of ``classes_``; rows sum to 1.
        """
        if is_dask_array(X):
            check_is_fitted(self)
            return self._map_dask(X, "predict_proba", len(self.classes_), np.float64)
        Q = self.predict_binary_proba(X)  # checks that the estimator is fitted
        return self.decoder_.predict_proba(Q)

    @available_if(_decoder_has("predict_log_proba"))
    def predict_log_proba(self, X):
        """Log of the class membership probabilities, computed stably by the decoder.

        Parameters
        ----------
        X : {array-like, sparse matrix, dask.array.Array} of shape (n_samples, n_features)
            Samples.

        Returns
        -------
        log_proba : ndarray of shape (n_samples, n_classes)
            Columns in the order of ``classes_``.
        """
        if is_dask_array(X):
            check_is_fitted(self)
            return self._map_dask(X, "predict_log_proba", len(self.classes_), np.float64)
        Q = self.predict_binary_proba(X)
        return self.decoder_.predict_log_proba(Q)

    @available_if(_decoder_has("decision_function"))
    def decision_function(self, X):
        """Decoder scores: larger means more likely.

        Parameters
        ----------
        X : {array-like, sparse matrix, dask.array.Array} of shape (n_samples, n_features)
            Samples.

        Returns
        -------
        scores : ndarray of shape (n_samples, n_classes) or (n_samples,)
            ``(n_samples,)`` for two classes (positive means ``classes_[1]``), as
            in scikit-learn.
        """
        if is_dask_array(X):
            check_is_fitted(self)
            n_columns = None if len(self.classes_) == 2 else len(self.classes_)
            return self._map_dask(X, "decision_function", n_columns, np.float64)
        Q = self.predict_binary_proba(X)
        scores = self.decoder_.decision_function(Q)
        if scores.shape[1] == 2:
            return scores[:, 1] - scores[:, 0]
        return scores

    def predict(self, X):
        """Class labels: the argmax of ``predict_proba`` (of the decoder's scores for
        decoders without probabilities).

        Parameters
        ----------
        X : {array-like, sparse matrix, dask.array.Array} of shape (n_samples, n_features)
            Samples.

        Returns
        -------
        labels : ndarray of shape (n_samples,)
            Elements of ``classes_``.
        """
        if is_dask_array(X):
            check_is_fitted(self)
            return self._map_dask(X, "predict", None, self.classes_.dtype)
        Q = self.predict_binary_proba(X)
        return self.classes_[self.decoder_.predict(Q)]


def _shared_decoder_parameters(estimator_cls):
    """The parameters an estimator hands to its ``ConvexDecoder`` unchanged: those of
    its own signature that the decoder has too (they mean the same in both)."""
    decoder = set(ConvexDecoder._get_param_names())
    return [name for name in estimator_cls._get_param_names() if name in decoder]


class ConvexAggregationClassifier(CodeMatrixClassifier):
    """The paper's method as one estimator: binaries plus :class:`ConvexDecoder`.

    ``CodeMatrixClassifier(estimator, code=code, decoder=ConvexDecoder(alpha=alpha,
    ...))`` with the decoder's parameters on the estimator, so a grid search can
    set them (``alpha``, ``solver__tol``); they are handed to the decoder whole.
    The paper's other training criteria (large margin, stiffness) are
    ``CodeMatrixClassifier(decoder=ConvexDecoder(formulation=...))``; to choose
    ``alpha`` by cross-validation, see :class:`ConvexAggregationClassifierCV`.

    Parameters
    ----------
    estimator : classifier, or list of fitted binary classifiers, default=None
        Binary learner (``LogisticRegression()`` when None); see
        :class:`CodeMatrixClassifier`.
    code : str or array-like, default="ovo"
        Code matrix or its name; see :class:`CodeMatrixClassifier`.
    alpha, loss, penalty, l1_ratio, fit_intercept, solver
        The model and its solver, as in :class:`ConvexDecoder` (defaults
        ``1e-4``, ``"cross_entropy"``, ``"l2"``, None, False, ``"auto"``).
    cv : int, cross-validation generator, iterable, "prefit" or None, default=None
        Which binary outputs the weights are fitted on; see :class:`CodeMatrixClassifier`.
    n_jobs : int, default=None
        Jobs for training and predicting the binaries (joblib).
    random_state : int, RandomState instance or None, default=None
        Seeds random codes and the binary learners.
    verbose : int, default=0
        Progress lines for the stages of ``fit`` and the solver's iterations.
    tol, max_iter, newton, dtype, init : deprecated
        The solver settings of version 0.1, as in :class:`ConvexDecoder`.

    Attributes
    ----------
    weights_ : ndarray of shape (n_classifiers,)
        Learned aggregation weights.
    intercept_ : ndarray of shape (n_classes,)
        Learned class intercepts (zeros without ``fit_intercept``).
    n_iter_ : int
        Solver iterations.
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

    def __init__(
        self,
        estimator=None,
        *,
        code="ovo",
        alpha=1e-4,
        loss="cross_entropy",
        penalty="l2",
        l1_ratio=None,
        fit_intercept=False,
        solver="auto",
        cv=None,
        n_jobs=None,
        random_state=None,
        verbose=0,
        tol="deprecated",
        max_iter="deprecated",
        newton="deprecated",
        dtype="deprecated",
        init="deprecated",
    ):
        self.estimator = estimator
        self.code = code
        self.alpha = alpha
        self.loss = loss
        self.penalty = penalty
        self.l1_ratio = l1_ratio
        self.fit_intercept = fit_intercept
        self.solver = solver
        self.cv = cv
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose
        self.tol = tol
        self.max_iter = max_iter
        self.newton = newton
        self.dtype = dtype
        self.init = init

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls._complete_constraints()

    @classmethod
    def _complete_constraints(cls):
        """The decoder's constraints for the parameters handed to it, taken from it."""
        shared = _shared_decoder_parameters(cls)
        constraints = {
            k: v for k, v in CodeMatrixClassifier._parameter_constraints.items() if k != "decoder"
        }
        constraints.update({k: ConvexDecoder._parameter_constraints[k] for k in shared})
        cls._parameter_constraints = {**constraints, **cls.__dict__.get("_own_constraints", {})}

    def _make_decoder(self, **overrides):
        params = {name: getattr(self, name) for name in _shared_decoder_parameters(type(self))}
        return ConvexDecoder(**{**params, **overrides})

    @property
    def weights_(self):
        check_is_fitted(self)
        return self.decoder_.weights_

    @property
    def intercept_(self):
        check_is_fitted(self)
        return self.decoder_.intercept_

    @property
    def n_iter_(self):
        check_is_fitted(self)
        return self.decoder_.n_iter_


ConvexAggregationClassifier._complete_constraints()
