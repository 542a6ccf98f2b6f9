"""scikit-learn estimators: encode with a code matrix, train binaries, decode."""

from __future__ import annotations

import copy
from dataclasses import replace
from inspect import signature
from numbers import Integral, Real

import numpy as np
from scipy.sparse import issparse
from scipy.special import logsumexp
from sklearn.base import BaseEstimator, ClassifierMixin, MetaEstimatorMixin, clone
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import LabelEncoder, StandardScaler
from sklearn.utils import check_random_state, get_tags
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import (
    check_is_fitted,
    column_or_1d,
    validate_data,
)

from ._array_api import (
    array_namespace,
    check_array_api_learners,
    check_array_api_settings,
    on_host,
    take_rows,
)
from ._binary_selection import check_param_grid, learners_with, select_binaries
from ._dask import is_dask_array, map_row_blocks
from ._docstrings import fill_doc
from ._sklearn import fit_context, num_samples, routing_enabled
from ._training import (
    Fitted,
    Plan,
    Problem,
    check_learners,
    decoder_outputs,
    fit_parameters,
    plan,
    routing,
    train,
)
from ._utils import Reporter, restore_on_failure
from .binary import (
    column_seeds,
    log_odds_input,
    predict_binaries,
    predict_binaries_on_device,
    predict_log_odds,
)
from .codes import CODE_NAMES, check_code_name, make_code_parts
from .decoders import ConvexDecoder
from .decoders.selection import CHOSEN_PENALTIES, PenaltyCandidates, check_candidates
from .validation import check_lengths, check_sample_weight, check_targets, encode_labels

__all__ = ["CodeMatrixClassifier", "ConvexAggregationClassifier"]

# entry_weight_shrinkage="auto" with penalty="l2": this prior over the number of rows the
# weights are fitted on (a fixed prior on the summed log-likelihood), kept within
# ENTRY_WEIGHT_SHRINKAGE_RANGE: small sets keep 0.01, large ones get 0.001 (QUALITY.md,
# "Why the default is what it is")
DEFAULT_ENTRY_WEIGHT_PRIOR = 2.0
ENTRY_WEIGHT_SHRINKAGE_RANGE = (0.001, 0.01)
# column_penalty="auto": the strength on the one-vs-rest columns of a combined code
DEFAULT_OVR_COLUMN_PENALTY = 0.1
# zero_entry_penalty="auto": one of these over the number of rows the weights are fitted
# on (fixed priors on the summed log-likelihood), chosen by a 3-fold cross-validation of
# the aggregation alone and fitted from the strongest until the held-out score rises: the
# best strength differs between data sets by more than a factor of 64 (QUALITY.md)
ZERO_ENTRY_PRIORS = (80.0, 20.0, 5.0, 1.25)
# ... but only where that fit is affordable: the zero-entry weights (2 per zero entry) of a
# one-vs-one code grow as the cube of the classes (15 classes 2,730, 26 classes 15,600),
# and each fit of the choice with the rows; beyond either limit "auto" is None, the model
# without them
ZERO_ENTRY_AUTO_MAX_WEIGHTS = 3000
ZERO_ENTRY_AUTO_MAX_ROWS = 3000


def default_learner(sparse=False):
    """The binary learner of ``estimator=None``: a logistic regression on standardised
    features, ``make_pipeline(StandardScaler(), LogisticRegression())``.

    Standardised, the features' scales matter neither to the fit's convergence (raw
    digits and wine fit without a warning) nor to what the L2 penalty of
    ``LogisticRegression`` (``C=1``) shrinks.

    Parameters
    ----------
    sparse : bool, default=False
        ``X`` is a sparse matrix: the scaler does not centre it
        (``StandardScaler(with_mean=False)``), which would make it dense.

    Returns
    -------
    learner : Pipeline
        A new, unfitted pipeline.
    """
    return make_pipeline(StandardScaler(with_mean=not sparse), LogisticRegression())


def auto_entry_weight_shrinkage(n_rows):
    """``entry_weight_shrinkage="auto"`` for ``n_rows`` rows (with ``penalty="l2"``).

    Parameters
    ----------
    n_rows : int
        The number of rows the weights are fitted on.

    Returns
    -------
    shrinkage : float
        ``DEFAULT_ENTRY_WEIGHT_PRIOR / n_rows`` kept within
        ``ENTRY_WEIGHT_SHRINKAGE_RANGE``: 0.01 up to 200 rows, 0.001 from 2,000.
    """
    low, high = ENTRY_WEIGHT_SHRINKAGE_RANGE
    return float(np.clip(DEFAULT_ENTRY_WEIGHT_PRIOR / n_rows, low, high))


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


class _CodeNames(StrOptions):
    """Constraint of ``code``: a code name, or several distinct names joined by ``+``."""

    def is_satisfied_by(self, val):
        try:
            return isinstance(val, str) and bool(check_code_name(val))
        except ValueError:
            return False

    def __str__(self):
        return f"{super().__str__()} or several of them joined by '+'"


@fill_doc
class CodeMatrixClassifier(MetaEstimatorMixin, ClassifierMixin, BaseEstimator):
    """Multiclass classifier from binary classifiers, a code matrix and a decoder.

    ``fit`` encodes the classes with a code matrix (one-vs-rest, one-vs-one,
    ECOC, or your own), trains one clone of ``estimator`` per column, and fits
    ``decoder`` on the binary outputs. ``predict_proba`` decodes the binary
    outputs of new samples.

    Parameters
    ----------
    %(estimator)s
    code : {"ovo+ovr", "ovo", "ovr", "ecoc", "complete", "ternary_complete", "ordinal", \
"sparse_random", "dense_random"}, names joined by "+", or array-like, default="ovo"
        %(code.description)s
        The default is one-vs-one, the paper's code for the convex
        aggregation; :class:`ConvexAggregationClassifier`'s default is
        ``"ovo+ovr"``, which its default aggregation model is made for.
    decoder : decoder, default=None
        Aggregation method with ``fit(Q, y, code, output)``; cloned.
        ``ConvexDecoder()`` (the paper's model) when None.
    %(cv)s
    %(ensemble)s
    %(n_jobs)s
    %(random_state)s
    %(verbose)s
    %(warm_start)s

    Attributes
    ----------
    %(fitted_attributes)s

    Notes
    -----
    ``X`` is passed to the binary learners as given -- a NumPy array, a
    sparse matrix, a pandas or polars DataFrame with string, categorical or
    missing values, a list of rows -- as scikit-learn's meta-estimators pass
    it: only its number of rows, its number of features and its column names
    are checked here (the same at ``predict`` as in ``fit``). What the learner
    cannot take it refuses itself (the default learner: no strings, no
    missing values); a learner that encodes or imputes columns (a
    ``Pipeline`` with a ``ColumnTransformer``,
    ``HistGradientBoostingClassifier(categorical_features="from_dtype")``)
    fits tables as they come.

    Sample weights (``fit(X, y, sample_weight=...)``) weight the binary
    learners' fits (each on the rows of its problem) and the decoder's
    training criterion. With scikit-learn's metadata routing enabled, the
    estimator is a router: fit parameters the learners request reach them
    (``learner.set_fit_request(sample_weight=True)``), ``groups`` and the
    like reach the splitter, and ``sample_weight`` still weights the
    aggregation.

    Dask (``pip install convexagg[dask]``): ``fit`` takes in-memory ``X`` and
    trains the binaries on a cluster under the joblib ``"dask"`` backend.
    ``predict_binary_proba``, ``predict_proba``, ``decision_function`` and
    ``predict`` take a Dask array ``X`` too and return lazy Dask arrays,
    computed block by block of rows (whole rows per block) by the fitted
    binaries and decoder; the binaries must predict on any block of rows
    (scikit-learn's do).

    Array API: under ``sklearn.set_config(array_api_dispatch=True)`` an ``X``
    of another array library (PyTorch, CuPy) stays on its device: the binaries
    are trained there (one after another), their outputs kept there and
    :class:`ConvexDecoder` fitted there; the predictions are arrays of ``X``'s
    namespace (``predict``: numeric labels; others as NumPy), ``classes_`` and
    the decoder's attributes NumPy. The learners must declare scikit-learn's
    array API support (a ``Pipeline``: every step; the default learner's
    ``StandardScaler`` and ``LogisticRegression`` do): another learner, a
    decoder other than :class:`ConvexDecoder`, ``n_jobs`` above 1 and
    ``binary_param_grid`` raise a ``ValueError`` naming them. See the user
    guide's array-API page.
    """

    _parameter_constraints = {
        "estimator": [HasMethods(["fit"]), list, tuple, None],
        "code": [_CodeNames(set(CODE_NAMES)), "array-like"],
        "decoder": [HasMethods(["fit"]), None],
        "cv": ["cv_object", StrOptions({"prefit", "in_sample"})],
        "ensemble": ["boolean", StrOptions({"auto"})],
        "n_jobs": [Integral, None],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
        "warm_start": ["boolean"],
    }

    def __init__(
        self,
        estimator=None,
        *,
        code="ovo",
        decoder=None,
        cv=5,
        ensemble="auto",
        n_jobs=None,
        random_state=0,
        verbose=0,
        warm_start=False,
    ):
        self.estimator = estimator
        self.code = code
        self.decoder = decoder
        self.cv = cv
        self.ensemble = ensemble
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose
        self.warm_start = warm_start

    def _make_decoder(self):
        decoder = ConvexDecoder() if self.decoder is None else clone(self.decoder)
        if self.verbose and "verbose" in decoder.get_params(deep=False):
            decoder.set_params(verbose=self.verbose)
        return decoder

    def _learners(self, X=None):
        """The learner, or the list of per-column learners (or fitted binaries); for
        ``estimator=None`` a new :func:`default_learner` for ``X`` (sparse or not)."""
        if self.estimator is None:
            return default_learner(sparse=issparse(X))
        if isinstance(self.estimator, tuple):
            return list(self.estimator)
        return self.estimator

    def _log(self, message):
        if self.verbose:
            print(f"[{type(self).__name__}] {message}", flush=True)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        if self.estimator is None:  # the default learner: sparse X (not centred), no NaN
            tags.input_tags.sparse, tags.input_tags.allow_nan = True, False
            return tags
        learners = self._learners()
        learners = learners if isinstance(learners, list) else [learners]
        try:
            learner_tags = [get_tags(est) for est in learners if hasattr(est, "fit")]
        except AttributeError:  # not a scikit-learn estimator: fit names what it lacks
            return tags
        tags.input_tags.sparse = all(t.input_tags.sparse for t in learner_tags)
        tags.input_tags.allow_nan = all(t.input_tags.allow_nan for t in learner_tags)
        # array-API X is fitted and predicted on its device (the learners permitting), but
        # classes_ and the decoder's attributes stay NumPy on the host, where the solver
        # computes them: scikit-learn's check_array_api_input wants them in X's namespace,
        # so array_api_support stays False (tests/test_array_api_classifier.py checks it)
        return tags

    def get_metadata_routing(self):
        """Get the metadata routing of this object.

        The estimator consumes ``sample_weight`` itself (the aggregation's
        criterion) and routes ``fit`` parameters to its binary learners' ``fit``
        (and to the splitter's ``split`` with out-of-fold outputs); with
        ``cv="prefit"`` the binaries are never fitted and nothing is routed to
        them. See scikit-learn's user guide on metadata routing.

        Returns
        -------
        routing : MetadataRouter
            A :class:`~sklearn.utils.metadata_routing.MetadataRouter` encapsulating
            the routing information.
        """
        learners = self._learners()
        n_columns = len(learners) if isinstance(learners, list) else 1
        plan = self._plan()
        return routing(self, learners, n_columns, self._splitters(plan), plan.prefit)

    def _plan(self):
        """``cv``, ``ensemble`` and ``estimator`` resolved (:func:`convexagg._training.plan`):
        which outputs the decoder is fitted on."""
        return plan(self.cv, self.ensemble, self.estimator)

    def _splitters(self, plan):
        """The splitters the fit uses, by routing name (``groups`` and the like go to their
        ``split``): ``cv`` with out-of-fold outputs."""
        return plan.splitters()

    # -- the fit skeleton: validation, seeds, fit parameters; fit, fit_decoder, the CV fit --

    def _check_array_api(self, decoder=None, X=None):
        """Raise for what the array-API path (``X`` on a device, see the user guide's
        array-API page) cannot do, naming the parameter: a learner without scikit-learn's
        array API support, ``n_jobs`` above 1, a decoder other than
        :class:`ConvexDecoder`'s likelihood fit, a subclass with its own ``fit``
        (:class:`ConvexAggregationClassifierCV`); subclasses add their parameters'."""
        name = type(self).__name__
        if type(self).fit is not CodeMatrixClassifier.fit:
            raise ValueError(
                f"{name} does not take array-API X (array_api_dispatch=True): its fit "
                "computes on NumPy arrays. Pass X as a NumPy array, or use "
                "ConvexAggregationClassifier, whose fit keeps X on its device."
            )
        if self.n_jobs not in (None, 1):
            raise ValueError(
                f"n_jobs={self.n_jobs!r} cannot apply to array-API X (array_api_dispatch="
                "True): its binaries are trained one after another on X's device (joblib "
                "workers would copy the device arrays); leave n_jobs=None or 1."
            )
        if decoder is not None and not isinstance(decoder, ConvexDecoder):
            raise ValueError(
                f"array-API X (array_api_dispatch=True) is decoded on its device by "
                f"ConvexDecoder only; decoder={decoder!r} computes on NumPy arrays. Leave "
                "decoder=None (ConvexDecoder()) or pass X as a NumPy array."
            )
        check_array_api_learners(self._learners(X), "estimator")

    def _validate_X(self, X, y="no_validation", reset=True):
        """``X`` as given, with its number of features and its column names set
        (``reset``) or checked against ``fit``'s: what the aggregation needs of it; the
        binary learners validate the rest. Rows are taken from it: a sparse matrix is
        CSR or CSC, an object without rows (no ``__getitem__``) and a Dask array (``fit``
        takes in-memory ``X``) an array. Array-API ``X`` is validated on its device
        (checked by :meth:`_check_array_api`)."""
        if array_namespace(X) is not None:
            # a fitted decoder decodes X's outputs on the device (predict, fit_decoder);
            # fit checks the decoder it is about to fit (_problem)
            self._check_array_api(None if reset else self.decoder_, X)
            allow_nan = get_tags(self).input_tags.allow_nan
            finite = "allow-nan" if allow_nan else True
            X = validate_data(self, X, ensure_all_finite=finite, reset=reset)
            return X if isinstance(y, str) else (X, on_host(y))  # labels on the host
        if not reset and getattr(X, "ndim", None) == 1 and hasattr(self, "n_features_in_"):
            raise ValueError(
                f"Expected 2D array, got 1D array instead (shape {X.shape}) where "
                f"{type(self).__name__} was fitted on {self.n_features_in_} features. Reshape "
                "your data either using array.reshape(-1, 1) if your data has a single "
                "feature or array.reshape(1, -1) if it contains a single sample."
            )
        if is_dask_array(X) or not (issparse(X) or hasattr(X, "__getitem__")):
            X = np.asarray(X)  # rows are taken from it (scikit-learn's indexable)
        elif issparse(X) and X.format not in ("csr", "csc"):
            X = X.tocsr()
        return validate_data(self, X, y, reset=reset, skip_check_array=True)

    def _validate_training_data(self, X, y):
        """``(X, y as class indices, classes)`` after every check of ``X`` and ``y``."""
        check_lengths(X, y)
        X, y = self._validate_X(X, y)
        y = column_or_1d(y, warn=True)
        if y.size == 0:
            raise ValueError(
                "X and y have 0 samples (shape=(0,)) while a minimum of 1 is required; a "
                "classifier needs samples of at least 2 classes."
            )
        check_targets(y)
        encoder = LabelEncoder().fit(y)
        classes = encoder.classes_
        if classes.size < 2:
            raise ValueError(
                f"y contains 1 class ({classes[0]!r}); a classifier needs at least 2 classes."
            )
        return X, encoder.transform(y), classes

    @staticmethod
    def _check_decoder(decoder, output):
        """Fail fast, before any binary is trained: the decoder's parameters are
        valid, consistent (its solver configuration included) and it takes ``output``."""
        if hasattr(decoder, "_validate_params"):
            decoder._validate_params()
        if hasattr(decoder, "_check_settings"):
            decoder._check_settings()
        if hasattr(decoder, "_check_output"):
            decoder._check_output(output)

    def _check_device_fit(self, X, y, decoder, sample_weight):
        """For array-API ``X``, before anything is moved or trained: what cannot apply
        (:meth:`_check_array_api`), the decoder's formulation and Dask ``y`` or weights."""
        if array_namespace(X) is not None:
            self._check_array_api(decoder, X)
            check_array_api_settings(
                decoder.formulation,
                y,
                sample_weight,
                inputs="X",
                zero_entries=decoder._zero_entries(),
            )

    def _check_weights(self, sample_weight, X):
        """``sample_weight`` checked (:func:`convexagg.validation.check_sample_weight`),
        on ``X``'s device for array-API ``X`` (weights given on the host are moved there)."""
        if sample_weight is None:
            return None
        namespace = array_namespace(X)
        if namespace is None:
            return check_sample_weight(sample_weight, num_samples(X))
        host = check_sample_weight(on_host(sample_weight), num_samples(X))
        return namespace.to_device(host, dtype=namespace.float_dtype(np.float64))

    def _problem(self, X, y, decoder, sample_weight=None, fit_params=None):
        """Validate ``X``, ``y`` and the learners, build the code, the per-column
        seeds and fit parameters, and check the decoder against the binaries'
        output kind: everything before training anything."""
        plan = self._plan()
        self._check_device_fit(X, y, decoder, sample_weight)
        X, y_enc, classes = self._validate_training_data(X, y)
        sample_weight = self._check_weights(sample_weight, X)
        # One generator for the code and the binaries' seeds: a seed fixes both.
        rng = None if self.random_state is None else check_random_state(self.random_state)
        code, parts = make_code_parts(self.code, classes.size, random_state=rng)
        prefit = plan.prefit
        if prefit and not isinstance(self.estimator, (list, tuple)):
            raise ValueError(
                "with cv='prefit', estimator must be a list of fitted binary classifiers, "
                f"one per code column ({code.shape[1]}); got {self.estimator!r}."
            )
        learners, output = check_learners(self._learners(X), code.shape[1], prefit)
        self._decoder_for_code(decoder, code, parts)
        self._check_decoder(decoder, output)  # before any binary is trained
        learner_params, split_params = fit_parameters(
            self,
            learners,
            code.shape[1],
            sample_weight,
            fit_params or {},
            routing_enabled(),
            self._splitters(plan),
            train=not prefit,
        )
        seeds = column_seeds(rng, code.shape[1])
        # drawn after the columns' seeds, which a seed fixes as before
        plan = replace(plan, fold_seed=int(check_random_state(rng).randint(2**31 - 1)))
        return Problem(
            X,
            y_enc,
            classes,
            code,
            seeds,
            output,
            sample_weight,
            learner_params,
            split_params,
            plan,
            parts,
        )

    def _decoder_for_code(self, decoder, code, parts):
        """Set the decoder's parameters that depend on the built code (``code`` and the
        columns of each named part, :func:`~convexagg.codes.make_code_parts`), in place."""

    def _warm_binaries(self, p):
        """The previous fit's binaries to refit (copies of them), with ``warm_start`` and the
        same classes and code (None otherwise)."""
        if not (self.warm_start and hasattr(self, "estimators_")):
            return None
        same = np.array_equal(self.classes_, p.classes) and np.array_equal(
            self.code_matrix_, p.code
        )
        return self.estimators_[0] if same and not self.ensemble_ else None

    def _warm_decoder(self, decoder, p):
        """``decoder`` starting from the previous fit's solution, where it can."""
        previous = getattr(self, "decoder_", None)
        warmable = "warm_start" in decoder.get_params(deep=False)
        if not (self.warm_start and warmable and type(previous) is type(decoder)):
            return decoder
        warm = copy.deepcopy(previous)  # the fitted state; the new parameters
        return warm.set_params(**{**decoder.get_params(deep=False), "warm_start": True})

    def _fit_decoder(self, decoder, training, p):
        """Fit ``decoder`` on the training outputs: where a subclass resolves the
        decoder's parameters that depend on them first."""
        return self._fit_on_outputs(decoder, training, p)

    def _fit_on_outputs(self, decoder, training, p, candidates=None):
        """Fit ``decoder``, as it is, on the training outputs (the rows that have one);
        ``candidates``: the values of a penalty it chooses among
        (:class:`~convexagg.ConvexDecoder`)."""
        Q, rows = take_rows(training.Q, training.rows), training.rows
        self._log(f"fitting {type(decoder).__name__} on {Q.shape[0]} x {Q.shape[1]} outputs")
        kwargs = {}
        if p.sample_weight is not None:
            if "sample_weight" not in signature(decoder.fit).parameters:
                raise TypeError(
                    f"sample_weight was given but the decoder {type(decoder).__name__} does "
                    "not take sample weights in fit."
                )
            kwargs["sample_weight"] = take_rows(p.sample_weight, rows)
        if candidates is not None:
            kwargs["candidates"] = candidates
        return decoder.fit(Q, p.y[rows], p.code, output=p.output, **kwargs)

    def _train(self, p, warm=None):
        return train(
            p,
            check_learners(self._learners(p.X), p.code.shape[1], p.plan.prefit)[0],
            p.plan,
            self.n_jobs,
            Reporter(type(self).__name__, self.verbose),
            warm,
        )

    @fit_context(prefer_skip_nested_validation=False)
    @restore_on_failure
    def fit(self, X, y, sample_weight=None, **fit_params):
        """Encode, train the binary classifiers, and fit the decoder.

        Parameters
        ----------
        X : {array-like, sparse matrix, DataFrame} of shape (n_samples, n_features)
            Training samples, passed to the binary learners as given (a table
            with strings or missing values needs a learner that takes them).
        y : array-like of shape (n_samples,)
            Class labels of any sortable type.
        sample_weight : array-like of shape (n_samples,), default=None
            Weights of the samples: passed to every binary learner on the rows
            of its problem, and weighting the decoder's training criterion.
        **fit_params : dict
            Further parameters for the binary learners' ``fit`` (and the
            splitter's ``split``), only under metadata routing, as requested.

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
        p = self._problem(X, y, decoder, sample_weight, fit_params)
        training = self._train(p, warm=self._warm_binaries(p))
        decoder = self._fit_decoder(self._warm_decoder(decoder, p), training, p)
        self._set_fitted(p, training, decoder)
        return self

    def _set_fitted(self, p, training, decoder):
        """Attributes are set only once everything has succeeded."""
        self.classes_ = p.classes
        self.code_matrix_ = p.code
        # the fitted plan, in plain types (a model file holds only trusted types)
        self._plan_kind, self._plan_splitter = p.plan.kind, p.plan.splitter
        self._fold_seed = p.plan.fold_seed
        self._fold_tests = training.tests
        self._n_samples_fit = p.y.size
        self.ensemble_ = training.tests is not None
        self.estimators_ = training.members
        self.binary_output_ = p.output
        self.decoder_ = decoder
        self._column_seeds = p.seeds
        # plain types (a model file holds only trusted types); fit_decoder reads them
        self._code_parts = {name: [int(l) for l in cols] for name, cols in p.code_parts.items()}
        self._set_out_of_fold(training, decoder)

    @property
    def _fitted(self):
        """The fitted plan (:class:`convexagg._training.Fitted`): which outputs the decoder
        was fitted on, the members and, for an ensemble, their test rows."""
        seed = getattr(self, "_fold_seed", None)
        plan = Plan(self._plan_kind, self._plan_splitter, self.ensemble_, seed)
        return Fitted(plan, self.estimators_, self._fold_tests, self._n_samples_fit)

    def _set_out_of_fold(self, training, decoder):
        """``oof_proba_`` and ``oof_fold_``: what the decisions of
        :mod:`convexagg.decision` calibrate on (cross-conformal sets), at the cost
        of at most one decoder pass over outputs computed anyway."""
        self.oof_proba_ = self.oof_fold_ = None
        if not self._fitted.plan.out_of_fold or not hasattr(decoder, "predict_proba"):
            return
        n = training.Q.shape[0]
        self.oof_proba_ = np.full((n, len(self.classes_)), np.nan)
        # a penalty chosen by cross-validation gives each row's probabilities from the
        # aggregation fitted on the other folds (ConvexDecoder's held_out_proba_)
        proba = getattr(decoder, "held_out_proba_", None)
        if proba is None:
            proba = decoder.predict_proba(take_rows(training.Q, training.rows))
        namespace = array_namespace(proba)  # array-API X: fitted attributes live on the host
        self.oof_proba_[training.rows] = proba if namespace is None else namespace.to_host(proba)
        if training.tests is not None:
            self.oof_fold_ = np.full(n, -1)
            for k, test in enumerate(training.tests):
                self.oof_fold_[test] = k

    def _members(self):
        """The fitted binaries, one list per member."""
        return self.estimators_

    def _refit_problem(self, X, y, sample_weight=None, fit_params=None):
        """The training problem of ``fit_decoder``: the fitted code, classes and seeds,
        and the fit parameters routed as :meth:`fit` routes them."""
        check_is_fitted(self)
        self._validate_params()
        if array_namespace(X) is not None:
            X, y = self._validate_X(X, y, reset=False)
        else:
            X = self._validate_X(X, reset=False)
        y = column_or_1d(y, warn=True)
        check_lengths(X, y)
        y_enc = encode_labels(y, self.classes_, "y")
        sample_weight = self._check_weights(sample_weight, X)
        M = self.code_matrix_.shape[1]
        seeds = getattr(self, "_column_seeds", [None] * M)
        fitted = self._fitted
        learners = self._learners(X)
        if not fitted.plan.prefit:
            learners = check_learners(learners, M, False)[0]
        new_folds = fitted.plan.out_of_fold and fitted.tests is None
        learner_params, split_params = fit_parameters(
            self,
            learners,
            M,
            sample_weight,
            fit_params or {},
            routing_enabled(),
            self._splitters(fitted.plan),
            train=new_folds,  # only new fold models are fitted
        )
        return Problem(
            X,
            y_enc,
            self.classes_,
            self.code_matrix_,
            seeds,
            self.binary_output_,
            sample_weight,
            learner_params,
            split_params,
            fitted.plan,
        )

    def _decoder_outputs(self, X, y, sample_weight=None, fit_params=None):
        """``(problem, training)``: the outputs of ``X`` the decoder is fitted on by the
        fitted plan (see :meth:`training_outputs`)."""
        p = self._refit_problem(X, y, sample_weight, fit_params)
        learners = None
        if p.plan.out_of_fold and self._fitted.tests is None:
            learners = check_learners(self._learners(p.X), p.code.shape[1], False)[0]
        return p, decoder_outputs(self._fitted, p, learners, self.n_jobs)

    def training_outputs(self, X, y, sample_weight=None, **fit_params):
        """The binary outputs the decoder is fitted on, by the fitted ``cv``.

        What :meth:`fit` fitted the decoder on, computed again on ``X``: the
        outputs of ``estimators_`` (``cv="in_sample"``, ``"prefit"``, frozen
        binaries), each ensemble member's outputs on the rows it was not
        trained on (``X`` must be the data of ``fit``), or the out-of-fold
        outputs of new fold models (``ensemble=False``; seeded as in ``fit``,
        so the same outputs when the learner is deterministic given its
        seed). :meth:`fit_decoder` and
        :meth:`RegularizationPathDisplay.from_estimator
        <convexagg.RegularizationPathDisplay.from_estimator>` fit on them;
        with :func:`~convexagg.regularization_path` they give the path whose
        point at the fitted ``alpha`` is the fitted weights.
        (:meth:`predict_binary_proba` is what predicts: with an ensemble, the
        members' mean on every row -- not what the decoder saw.)

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Normally the data ``fit`` was called with.
        y : array-like of shape (n_samples,)
            Labels, all among ``classes_``.
        sample_weight : array-like of shape (n_samples,), default=None
            Weights of the samples (in the new fold models' fits, if any).
        **fit_params : dict
            Further parameters for the new fold models' ``fit`` (and the
            splitter's ``split``), as in :meth:`fit`.

        Returns
        -------
        Q : ndarray of shape (n_rows, n_classifiers)
            The outputs, on the rows that have one (every row but those in no
            test fold of the splitter).
        y : ndarray of shape (n_rows,)
            Their class indices (into ``classes_``).
        sample_weight : ndarray of shape (n_rows,) or None
            Their weights.
        """
        p, training = self._decoder_outputs(X, y, sample_weight, fit_params)
        rows = training.rows
        return take_rows(training.Q, rows), p.y[rows], take_rows(p.sample_weight, rows)

    @restore_on_failure
    def fit_decoder(self, X, y, sample_weight=None, **fit_params):
        """Refit only the decoder, on the binaries already trained.

        Swap the aggregation method of a fitted classifier without retraining
        its binary classifiers, so that decoders can be compared on identical
        binaries::

            clf.set_params(decoder=BradleyTerryDecoder()).fit_decoder(X, y)

        The current ``decoder`` parameter (for
        :class:`ConvexAggregationClassifier`, its ``alpha`` / ``loss`` / ...)
        is cloned and fitted on the binary outputs of ``X`` that :meth:`fit`
        fitted its decoder on (:meth:`training_outputs`): those of
        ``estimators_`` (``cv="in_sample"``, ``"prefit"``, frozen binaries),
        the ensemble members' outputs on the rows each was not trained on
        (``X`` must then be the data of ``fit``), or out-of-fold outputs of new
        fold models (``ensemble=False``; seeded as in ``fit``). ``estimators_``,
        ``code_matrix_`` and ``classes_`` are not changed.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Normally the data ``fit`` was called with.
        y : array-like of shape (n_samples,)
            Labels, all among ``classes_``.
        sample_weight : array-like of shape (n_samples,), default=None
            Weights of the samples in the decoder's criterion (and in the fold
            models' fits), routed as :meth:`fit` routes them.
        **fit_params : dict
            Further parameters for the new fold models' ``fit`` (and the
            splitter's ``split``), as in :meth:`fit`.

        Returns
        -------
        self : object
            The classifier with its new decoder.
        """
        check_is_fitted(self)
        decoder = self._make_decoder()
        parts = {name: np.asarray(cols) for name, cols in getattr(self, "_code_parts", {}).items()}
        self._decoder_for_code(decoder, self.code_matrix_, parts)
        self._check_device_fit(X, y, decoder, sample_weight)
        self._check_decoder(decoder, self.binary_output_)  # before any fold model is trained
        p, training = self._decoder_outputs(X, y, sample_weight, fit_params)
        self.decoder_ = self._fit_decoder(decoder, training, p)
        self._set_out_of_fold(training, self.decoder_)
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
            binary learner has no ``predict_proba`` (see ``binary_output_``);
            with an ensemble, the mean over its members.
        """
        check_is_fitted(self)
        n_columns = self.code_matrix_.shape[1]
        if is_dask_array(X):
            return self._map_dask(X, "predict_binary_proba", n_columns, np.float64)
        if array_namespace(X) is not None:
            return self._on_device(X, "predict_binary_proba")
        return np.mean(self._member_outputs(X), axis=0)

    def _member_outputs(self, X):
        """Every ensemble member's binary outputs on ``X`` (validated here)."""
        X = self._validate_X(X, reset=False)
        return [
            predict_binaries(member, X, self.binary_output_, n_jobs=self.n_jobs)
            for member in self._members()
        ]

    def _on_device(self, X, method):
        """``method`` (a prediction method's name) for array-API ``X``: the members'
        outputs, the decode and the mean over an ensemble computed on ``X``'s device,
        as the NumPy methods compute them."""
        X = self._validate_X(X, reset=False)
        xp = array_namespace(X).xp
        output = self.binary_output_
        outputs = [predict_binaries_on_device(member, X, output) for member in self._members()]
        if method == "predict_binary_proba":
            return xp.mean(xp.stack(outputs), axis=0)
        decoder, n = self.decoder_, len(outputs)
        if method == "predict_proba" and not hasattr(decoder, "predict_log_proba"):
            return xp.mean(xp.stack([decoder.predict_proba(Q) for Q in outputs]), axis=0)
        mean_scores = not (self.ensemble_ and hasattr(decoder, "predict_proba"))
        if method == "decision_function" and mean_scores:
            return xp.mean(xp.stack([decoder.decision_function(Q) for Q in outputs]), axis=0)
        if method == "decision_function" and not hasattr(decoder, "predict_log_proba"):
            return xp.log(self._on_device(X, "predict_proba"))
        log = decoder.predict_log_proba(outputs[0])
        if n > 1:  # the log of the members' mean probability, stably
            logs = xp.stack([decoder.predict_log_proba(Q) for Q in outputs])
            top = xp.max(logs, axis=0)
            log = top + xp.log(xp.sum(xp.exp(logs - top), axis=0)) - float(np.log(n))
        log = xp.where(log > 0, xp.zeros_like(log), log)  # as _log_proba: a log is <= 0
        return xp.exp(log) if method == "predict_proba" else log

    def _map_dask(self, X, method, n_columns, dtype):
        """Lazy ``method`` over the row blocks of the Dask array ``X``."""
        if X.ndim != 2 or X.shape[1] != self.n_features_in_:
            raise ValueError(
                f"X has shape {X.shape}, but {type(self).__name__} is expecting "
                f"{self.n_features_in_} features as input."
            )
        return map_row_blocks(_BlockMethod(self, method), X, n_columns, dtype)

    def _member_decodes(self, X, method):
        """The decoder's ``method`` (``"predict_proba"`` or ``"predict_log_proba"``)
        on each member's outputs on ``X`` (validated here). Members whose binaries
        are all logistic regressions hand the decoder their log-odds where it takes
        them (``ConvexDecoder.predict_proba_from_log_odds``, ``X`` validated once by
        the binaries, :func:`~convexagg.binary.log_odds_input`): one ``exp`` and one
        ``log1p`` per output instead of the sigmoid and two logs."""
        X = self._validate_X(X, reset=False)
        decode = getattr(self.decoder_, method)
        from_log_odds = getattr(self.decoder_, method + "_from_log_odds", None)
        if self.binary_output_ != "proba":
            from_log_odds = None
        decoded, checked = [], None  # X checked once for every member's log-odds
        for member in self._members():
            Z = None
            if from_log_odds is not None:
                checked = log_odds_input(member, X) if checked is None else checked
                Z = None if checked is None else predict_log_odds(member, checked, False)
            if Z is not None:
                decoded.append(from_log_odds(Z))
            else:
                Q = predict_binaries(member, X, self.binary_output_, n_jobs=self.n_jobs)
                decoded.append(decode(Q))
        return decoded

    def _log_proba(self, X):
        """Log of the class probabilities: the decoder's on each member's outputs,
        averaged over the members in probability (computed stably)."""
        logs = self._member_decodes(X, "predict_log_proba")
        log_proba = logs[0] if len(logs) == 1 else logsumexp(np.stack(logs), axis=0)
        if len(logs) > 1:
            log_proba -= np.log(len(logs))
        # a log-probability is <= 0; the mean's rounding gave 2.2e-16 (a probability of
        # 1.0000000000000002, which scikit-learn's log_loss refuses)
        return np.minimum(log_proba, 0.0, out=log_proba)

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
            Columns in the order of ``classes_``; rows sum to 1. With an
            ensemble, the mean of its members' probabilities.
        """
        check_is_fitted(self)
        if is_dask_array(X):
            return self._map_dask(X, "predict_proba", len(self.classes_), np.float64)
        if array_namespace(X) is not None:
            return self._on_device(X, "predict_proba")
        if len(self._members()) > 1 and hasattr(self.decoder_, "predict_log_proba"):
            return np.exp(self._log_proba(X))
        probas = self._member_decodes(X, "predict_proba")  # one member: not exp of its logs
        return probas[0] if len(probas) == 1 else np.mean(probas, 0)

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
        check_is_fitted(self)
        if is_dask_array(X):
            return self._map_dask(X, "predict_log_proba", len(self.classes_), np.float64)
        if array_namespace(X) is not None:
            return self._on_device(X, "predict_log_proba")
        return self._log_proba(X)

    def _scores(self, X):
        """The decoder's scores, ``(n_samples, n_classes)``: for an ensemble, the log of
        the mean probabilities (decoders with probabilities) or the mean scores."""
        if self.ensemble_ and hasattr(self.decoder_, "predict_log_proba"):
            return self._log_proba(X)
        if self.ensemble_ and hasattr(self.decoder_, "predict_proba"):
            with np.errstate(divide="ignore"):  # a probability of 0 scores -inf
                return np.log(self.predict_proba(X))
        return np.mean([self.decoder_.decision_function(Q) for Q in self._member_outputs(X)], 0)

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
            in scikit-learn. With an ensemble and a decoder with probabilities:
            the log of the members' mean probability.
        """
        check_is_fitted(self)
        if is_dask_array(X):
            n_columns = None if len(self.classes_) == 2 else len(self.classes_)
            return self._map_dask(X, "decision_function", n_columns, np.float64)
        namespace = array_namespace(X)
        scores = self._scores(X) if namespace is None else self._on_device(X, "decision_function")
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
        check_is_fitted(self)
        if is_dask_array(X):
            return self._map_dask(X, "predict", None, self.classes_.dtype)
        # the argmax of the very probabilities predict_proba returns, so that the
        # invariant holds for every decoder and every cv (ties: the first class)
        namespace = array_namespace(X)
        if namespace is not None:
            has_proba = hasattr(self.decoder_, "predict_proba")
            scores = self._on_device(X, "predict_proba" if has_proba else "decision_function")
            index = namespace.xp.argmax(scores, axis=1)
            # scikit-learn's convention: numeric labels on X's device, strings on the host
            if self.classes_.dtype.kind in "biuf":
                return namespace.xp.take(namespace.to_device(self.classes_), index)
            return self.classes_[namespace.to_host(index)]
        if hasattr(self.decoder_, "predict_proba"):
            return self.classes_[np.argmax(self.predict_proba(X), axis=1)]
        return self.classes_[np.argmax(self._scores(X), axis=1)]


def _auto_column_penalty(parts, n_classifiers):
    """``column_penalty="auto"``: ``DEFAULT_OVR_COLUMN_PENALTY`` on the columns of the
    "ovr" part of a combined code that no other part shares, or None where there are
    none (a single code, an array code, two classes)."""
    if "ovr" not in parts or len(parts) < 2:
        return None
    others = [cols for name, cols in parts.items() if name != "ovr"]
    own = np.setdiff1d(parts["ovr"], np.concatenate(others))
    if own.size == 0:
        return None
    strengths = np.zeros(n_classifiers)
    strengths[own] = DEFAULT_OVR_COLUMN_PENALTY
    return strengths


def _column_penalty_of_parts(by_part, code, parts, n_classifiers):
    """The per-column array of a ``column_penalty`` given by part (a dict).

    Parameters
    ----------
    by_part : dict of str to float
        Names of the parts of ``code`` to a strength (finite, ``>= 0``).
    code : str or array-like
        The ``code`` parameter the parts come from.
    parts : dict of str to ndarray of int
        The columns of each part (:func:`~convexagg.codes.make_code_parts`).
    n_classifiers : int
        Columns of the built code.

    Returns
    -------
    column_penalty : ndarray of shape (n_classifiers,)
        The strength of each column: its part's, 0 for a column of no named part.
    """
    if not isinstance(code, str):
        raise ValueError(
            "column_penalty as a dict maps the parts of a code name (e.g. code='ovo+ovr', "
            "column_penalty={'ovr': 0.1}) to strengths; with an array code give an array "
            "of one strength per column instead."
        )
    unknown = sorted(str(name) for name in by_part if name not in parts)
    if unknown:
        raise ValueError(
            f"column_penalty names {unknown}, not parts of code={code!r}; its parts are "
            f"{list(parts)}."
        )
    strengths = np.zeros(n_classifiers)
    named = np.zeros(n_classifiers, dtype=bool)
    for name, value in by_part.items():
        try:
            value = float(value)
        except (TypeError, ValueError):
            value = np.nan
        if not (np.isfinite(value) and value >= 0):
            raise ValueError(
                f"column_penalty[{name!r}] must be a finite number >= 0, got {by_part[name]!r}."
            )
        cols = parts[name]
        clash = named[cols] & (strengths[cols] != value)
        if np.any(clash):
            raise ValueError(
                f"column_penalty gives different strengths to parts of code={code!r} that "
                f"share columns {cols[clash].tolist()} (the same binary problem); give them "
                "one strength."
            )
        strengths[cols], named[cols] = value, True
    return strengths


#: the parameters ConvexAggregationClassifier and ConvexAggregationClassifierCV hand to
#: their ConvexDecoder, each meaning the same in both (``alpha`` aside: the CV estimator's
#: is chosen); ``entry_weight_shrinkage``, ``column_penalty`` and ``zero_entry_penalty``
#: as resolved for the data (:meth:`ConvexAggregationBase._resolve_penalties`)
DECODER_PARAMETERS = (
    "loss",
    "penalty",
    "l1_ratio",
    "fit_intercept",
    "entry_weight_shrinkage",
    "column_penalty",
    "zero_entry_penalty",
    "solver",
    "warm_start",
    "verbose",
)


def aggregation_constraints(**own):
    """``_parameter_constraints`` of a convex-aggregation estimator: the fit skeleton's
    (:class:`CodeMatrixClassifier`'s, ``decoder`` aside), the decoder's for the
    parameters handed to it, the values only the estimators resolve ("auto", lists,
    parts), then the class's ``own``."""
    constraints = {
        k: v for k, v in CodeMatrixClassifier._parameter_constraints.items() if k != "decoder"
    }
    constraints.update({k: ConvexDecoder._parameter_constraints[k] for k in DECODER_PARAMETERS})
    constraints.update(
        {
            "column_penalty": ["array-like", dict, None, StrOptions({"auto"})],
            "entry_weight_shrinkage": [
                Interval(Real, 0, None, closed="right"),
                None,
                StrOptions({"auto"}),
                "array-like",
            ],
            "zero_entry_penalty": [
                Interval(Real, 0, None, closed="left"),
                None,
                StrOptions({"auto"}),
                "array-like",
            ],
        }
    )
    constraints.update(own)
    return constraints


class ConvexAggregationBase(CodeMatrixClassifier):
    """The private base of :class:`ConvexAggregationClassifier` and
    :class:`~convexagg.ConvexAggregationClassifierCV` (not public API; neither
    is a subclass of the other): binaries plus a
    :class:`ConvexDecoder` of the default aggregation model, whose data-dependent
    parts (``"auto"`` values, lists chosen by cross-validation, strengths by code
    part) are resolved for the data by :meth:`_resolve_penalties`.

    A sibling defines its own ``__init__`` (the parameters of
    :data:`DECODER_PARAMETERS` among them), ``_parameter_constraints`` and
    :meth:`_decoder_alpha`.
    """

    def _decoder_alpha(self):
        """The decoder's ``alpha``."""
        raise NotImplementedError

    def _choice_alpha(self):
        """The ``alpha`` at which the penalties given as "auto" or a list are chosen."""
        return self._decoder_alpha()

    def _make_decoder(self, **overrides):
        params = {name: getattr(self, name) for name in DECODER_PARAMETERS}
        params["alpha"] = self._decoder_alpha()
        if isinstance(params["column_penalty"], (dict, str)):
            params["column_penalty"] = None  # by part or "auto": set once the code is built
        chosen = self._penalty_candidates()  # checks the lists before any training
        given = params["entry_weight_shrinkage"]
        if isinstance(given, str) or "entry_weight_shrinkage" in chosen:
            # "auto" or several values: _resolve_penalties resolves them
            values = chosen.get("entry_weight_shrinkage")
            params["entry_weight_shrinkage"] = self._fitted_or_placeholder_shrinkage(values)
        if isinstance(params["zero_entry_penalty"], str):
            # "auto": none until _resolve_penalties knows whether the zero entries apply
            params["zero_entry_penalty"] = None
        elif "zero_entry_penalty" in chosen:
            # several values: a float for the checks before training; chosen on the outputs
            params["zero_entry_penalty"] = chosen["zero_entry_penalty"][0]
        return ConvexDecoder(**{**params, **overrides})

    def _check_array_api(self, decoder=None, X=None):
        super()._check_array_api(decoder, X)
        if not isinstance(self.entry_weight_shrinkage, (str, Real, type(None))):
            raise ValueError(
                "entry_weight_shrinkage as a list cannot apply to array-API X "
                "(array_api_dispatch=True): its values are compared on NumPy arrays; pass X "
                "as a NumPy array or one entry_weight_shrinkage value."
            )

    def _fit_decoder(self, decoder, training, p):
        decoder, candidates = self._resolve_penalties(decoder, training, p)
        decoder = self._fit_on_outputs(decoder, training, p, candidates)
        self._record_choice(decoder, candidates, candidates and decoder.candidate_scores_)
        return decoder

    def _resolve_penalties(self, decoder, training, p):
        """``(decoder, candidates)``: ``decoder`` with ``entry_weight_shrinkage="auto"``
        resolved for the number of training outputs, and the values among which the
        decoder's fit chooses a penalty by cross-validation on them
        (:class:`~convexagg.decoders.selection.PenaltyCandidates`, its ``held_out_proba_``
        then ``oof_proba_``): the penalty given as a list, or ``zero_entry_penalty="auto"``'s
        priors where the zero entries apply; None when nothing is chosen."""
        # the "auto" priors hold for the rows the weights are fitted on: their number, or
        # the sum of their sample weights (integer weights fit as repeated rows)
        rows = training.rows
        n_rows = (
            p.y[rows].size
            if p.sample_weight is None
            else float(on_host(take_rows(p.sample_weight, rows)).sum())
        )
        if isinstance(self.entry_weight_shrinkage, str) and self.penalty == "l2":
            decoder.set_params(entry_weight_shrinkage=auto_entry_weight_shrinkage(n_rows))
        chosen = self._penalty_candidates()
        auto = isinstance(self.zero_entry_penalty, str) and self._zero_entries_apply(
            decoder, p, chosen, rows
        )
        if auto:
            chosen["zero_entry_penalty"] = tuple(c / n_rows for c in ZERO_ENTRY_PRIORS)
        candidates = None
        for name, values in chosen.items():  # at most one (_penalty_candidates)
            shown = ", ".join(f"{v:.3g}" for v in values)
            self._log(f"choosing {name} among [{shown}] at alpha={self._choice_alpha():g}")
            # "auto"'s priors (then the only values chosen), strong to weak, are fitted until
            # the score rises (ZERO_ENTRY_PRIORS); a list given is scored whole
            candidates = PenaltyCandidates(name, values, p.plan.fold_seed, stop_when_worse=auto)
        return decoder, candidates

    def _record_choice(self, decoder, candidates=None, scores=None):
        """``entry_weight_shrinkage_``, ``zero_entry_penalty_`` (the values ``decoder``'s
        weights are fitted with) and their ``_scores_`` (``scores``, of the penalty
        ``candidates`` chose). Fit is all-or-nothing (restore_on_failure): these go with
        the rest of the fit."""
        for name in CHOSEN_PENALTIES:
            setattr(self, f"{name}_", getattr(decoder, name))
            chosen = candidates is not None and candidates.name == name
            setattr(self, f"{name}_scores_", scores if chosen else None)
        return decoder

    def _penalty_candidates(self):
        """``{name: values}`` for each penalty of ``CHOSEN_PENALTIES`` given as a list
        (checked). Both at once raise: each is chosen with the other fixed."""
        chosen = {}
        for name in CHOSEN_PENALTIES:
            given = getattr(self, name)
            if given is not None and not isinstance(given, (str, Real)):
                chosen[name] = check_candidates(name, given)
        if len(chosen) == len(CHOSEN_PENALTIES):
            raise ValueError(
                "entry_weight_shrinkage as a list cannot go with zero_entry_penalty as a list "
                "(both chosen by cross-validation, each with the other fixed); give one "
                "entry_weight_shrinkage value (e.g. 'auto') or one zero_entry_penalty value."
            )
        return chosen

    def _zero_entries_apply(self, decoder, p, chosen, rows):
        """``zero_entry_penalty="auto"``: whether the zero entries get weights (chosen
        among ``ZERO_ENTRY_PRIORS``), logged when they do not. Not with a list of
        shrinkages (chosen without them), without entry weights or on array-API inputs
        (where they cannot apply), nor beyond ``ZERO_ENTRY_AUTO_MAX_WEIGHTS`` weights or
        ``ZERO_ENTRY_AUTO_MAX_ROWS`` rows, where their fit is not affordable."""
        n_weights = 2 * int(np.count_nonzero(p.code == 0))
        n_rows = int(np.asarray(p.y[rows]).size)
        reasons = {
            "a list of entry_weight_shrinkage": "entry_weight_shrinkage" in chosen,
            "no entry weights": not decoder._entries(),
            "array-API inputs": array_namespace(p.X) is not None,
            "no zero entries": n_weights == 0,
            f"{n_weights} zero-entry weights > {ZERO_ENTRY_AUTO_MAX_WEIGHTS}": (
                n_weights > ZERO_ENTRY_AUTO_MAX_WEIGHTS
            ),
            f"{n_rows} rows > {ZERO_ENTRY_AUTO_MAX_ROWS}": n_rows > ZERO_ENTRY_AUTO_MAX_ROWS,
        }
        why = [reason for reason, holds in reasons.items() if holds]
        if why:
            self._log(f"zero_entry_penalty='auto': none ({'; '.join(why)})")
        return not why

    def _fitted_or_placeholder_shrinkage(self, values):
        """The decoder's shrinkage before :meth:`_resolve_penalties` resolves "auto" or a
        list (``values``, checked; None for "auto"): the fitted
        ``entry_weight_shrinkage_``, else the range's top ("auto") or the list's first
        value, for the checks before training. "auto" is None (one weight per
        classifier) under ``"l1"`` and ``"elasticnet"``: the shrinkage is an L2 term,
        which the fit adds to the L2 penalty only."""
        if values is None and self.penalty != "l2":  # "auto"
            return None
        placeholder = ENTRY_WEIGHT_SHRINKAGE_RANGE[1] if values is None else values[0]
        return getattr(self, "entry_weight_shrinkage_", None) or placeholder

    def _decoder_for_code(self, decoder, code, parts):
        """``column_penalty`` given by part or "auto": the decoder's array, one per column
        (None: "auto" on a code with no one-vs-rest columns of its own)."""
        by_part = self.column_penalty
        if isinstance(by_part, str):  # "auto"
            decoder.set_params(column_penalty=_auto_column_penalty(parts, code.shape[1]))
        elif isinstance(by_part, dict):
            strengths = _column_penalty_of_parts(by_part, self.code, parts, code.shape[1])
            decoder.set_params(column_penalty=strengths)

    @property
    def weights_(self):
        """Learned aggregation weights, one per binary classifier (the decoder's)."""
        check_is_fitted(self)
        return self.decoder_.weights_

    @property
    def entry_weights_(self):
        """The weight of each code entry, ``(n_classes, n_classifiers)`` (the decoder's)."""
        check_is_fitted(self)
        return self.decoder_.entry_weights_

    @property
    def zero_entry_weights_(self):
        """The zero entries' weights of each side, ``(2, n_classes, n_classifiers)`` (the
        decoder's)."""
        check_is_fitted(self)
        return self.decoder_.zero_entry_weights_

    @property
    def intercept_(self):
        """Learned class intercepts (zeros without ``fit_intercept``)."""
        check_is_fitted(self)
        return self.decoder_.intercept_

    @property
    def n_iter_(self):
        """Solver iterations of the fit."""
        check_is_fitted(self)
        return self.decoder_.n_iter_


@fill_doc
class ConvexAggregationClassifier(ConvexAggregationBase):
    """The paper's method as one estimator: binaries plus :class:`ConvexDecoder`.

    ``CodeMatrixClassifier(estimator, code=code, decoder=ConvexDecoder(alpha=alpha,
    ...))`` with the decoder's parameters on the estimator, so a grid search can
    set them (``alpha``, ``solver__tol``); they are handed to the decoder whole
    (:data:`DECODER_PARAMETERS`), with what depends on the data resolved for it.

    The default model extends the paper's by a weight per class and binary
    classifier (per nonzero code entry), shrunk toward the classifier's weight
    (``entry_weight_shrinkage="auto"``: 2 / n within [0.001, 0.01] for ``n``
    rows, with the L2 penalty): a classifier may count more for one of its two
    sides than for the other; by weights on the zero code entries where their
    fit is affordable (``zero_entry_penalty="auto"``); by class intercepts; and
    by a weaker voice for the one-vs-rest columns of its ``"ovo+ovr"`` code
    (``column_penalty="auto"``). It is the measured better default
    (QUALITY.md); ``entry_weight_shrinkage=None, zero_entry_penalty=None,
    fit_intercept=False`` fits the paper's model, one weight per binary
    classifier, as :class:`ConvexDecoder` does by default. The paper's other
    training criteria (large margin, stiffness) are
    ``CodeMatrixClassifier(decoder=ConvexDecoder(formulation=...))``; the same
    model with ``alpha`` chosen by cross-validation is
    :class:`ConvexAggregationClassifierCV`.

    Parameters
    ----------
    %(estimator)s
    %(model_code)s
    alpha : float, default=1e-3
        %(alpha.description)s
        The default is ten times :class:`ConvexDecoder`'s: with the weights
        fitted on shuffled out-of-fold outputs it keeps sets of few rows per
        class from confident mistakes (QUALITY.md).
    %(loss)s
    %(penalty)s
    %(l1_ratio)s
    %(model_fit_intercept)s
    %(model_entry_weight_shrinkage)s
    %(model_column_penalty)s
    %(model_zero_entry_penalty)s
    %(solver)s
    %(cv)s
    %(binary_param_grid)s
    %(ensemble)s
    %(n_jobs)s
    %(random_state)s
    %(verbose)s
    %(warm_start)s

    Attributes
    ----------
    %(model_attributes)s
    best_binary_params_ : dict
        With ``binary_param_grid``: the chosen parameters of the binary learner.
    binary_grid_results_ : dict
        With ``binary_param_grid``: ``"params"`` (the candidates, in order) and
        ``"log_loss"`` (ndarray, each one's aggregated out-of-fold log-loss).
    %(fitted_attributes)s

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from convexagg import ConvexAggregationClassifier
    >>> X, y = load_iris(return_X_y=True)
    >>> clf = ConvexAggregationClassifier(code="ovo").fit(X, y)
    >>> clf.predict_proba(X[:2]).shape
    (2, 3)
    """

    _parameter_constraints = aggregation_constraints(
        alpha=ConvexDecoder._parameter_constraints["alpha"],
        binary_param_grid=[dict, list, None],
    )

    def __init__(
        self,
        estimator=None,
        *,
        code="ovo+ovr",
        alpha=1e-3,
        loss="cross_entropy",
        penalty="l2",
        l1_ratio=None,
        fit_intercept=True,
        entry_weight_shrinkage="auto",
        column_penalty="auto",
        zero_entry_penalty="auto",
        solver="auto",
        cv=5,
        binary_param_grid=None,
        ensemble="auto",
        n_jobs=None,
        random_state=0,
        verbose=0,
        warm_start=False,
    ):
        self.estimator = estimator
        self.code = code
        self.alpha = alpha
        self.loss = loss
        self.penalty = penalty
        self.l1_ratio = l1_ratio
        self.fit_intercept = fit_intercept
        self.entry_weight_shrinkage = entry_weight_shrinkage
        self.column_penalty = column_penalty
        self.zero_entry_penalty = zero_entry_penalty
        self.solver = solver
        self.cv = cv
        self.binary_param_grid = binary_param_grid
        self.ensemble = ensemble
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose
        self.warm_start = warm_start

    def _decoder_alpha(self):
        return self.alpha

    def _check_array_api(self, decoder=None, X=None):
        super()._check_array_api(decoder, X)
        if self.binary_param_grid is not None:
            raise ValueError(
                "binary_param_grid cannot apply to array-API X (array_api_dispatch=True): "
                "the candidates are compared on NumPy arrays; pass X as a NumPy array or "
                "leave binary_param_grid=None."
            )

    def _learners(self, X=None):
        """The learner(s), with the chosen ``binary_param_grid`` parameters once fitted
        (``fit_decoder``'s new fold models use them)."""
        learners = super()._learners(X)
        chosen = getattr(self, "best_binary_params_", None)  # a fitted attribute
        if chosen is None or self.binary_param_grid is None:
            return learners
        return learners_with(learners, chosen)

    def _train(self, p, warm=None):
        if self.binary_param_grid is None:
            return super()._train(p, warm)
        learners = check_learners(super()._learners(p.X), p.code.shape[1], p.plan.prefit)[0]
        candidates = check_param_grid(self.binary_param_grid, learners, p.plan, self.cv)

        def fit_decoder(training):
            return self._fit_decoder(self._make_decoder(), training, p)

        log = Reporter(type(self).__name__, self.verbose)
        best, scores, chosen, oof = select_binaries(
            p, learners, candidates, p.plan, self.n_jobs, fit_decoder, log
        )
        # no warm binaries: refitted in place they would keep their previous parameters
        training = train(p, chosen, p.plan, self.n_jobs, log, None, oof=oof)
        # fit is all-or-nothing (restore_on_failure): these go with the rest of the fit
        self.best_binary_params_ = candidates[best]
        self.binary_grid_results_ = {"params": candidates, "log_loss": scores}
        return training


#: ConvexAggregationClassifier's default ``alpha`` (its signature's, a literal that the
#: command line's help reads); ConvexAggregationClassifierCV chooses its "auto" penalties
#: and lists at this alpha before its path
DEFAULT_ALPHA = signature(ConvexAggregationClassifier).parameters["alpha"].default
