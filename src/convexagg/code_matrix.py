"""CodeMatrixClassifier: encode the classes with a code matrix, train binaries, decode.

The fit skeleton every estimator of the package shares -- validation, the code, the
binaries' training plan, the model resolved for the data (:mod:`convexagg.defaults`),
the decoder's fit, ``fit_decoder`` -- and prediction on NumPy, Dask and array-API
inputs, whose dispatch :meth:`CodeMatrixClassifier._predict` makes once for every
prediction method.
"""

from __future__ import annotations

import copy
from dataclasses import replace
from inspect import signature
from numbers import Integral

import numpy as np
from scipy.sparse import issparse
from sklearn.base import BaseEstimator, ClassifierMixin, MetaEstimatorMixin, clone
from sklearn.preprocessing import LabelEncoder
from sklearn.utils import check_random_state, get_tags
from sklearn.utils._param_validation import HasMethods, StrOptions
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
from ._dask import is_dask_array
from ._docstrings import fill_doc
from ._prediction import CodeMatrixPrediction
from ._sklearn import fit_context, num_samples, routing_enabled
from ._training import (
    Fitted,
    Plan,
    Problem,
    check_learners,
    decoder_outputs,
    decoder_rows,
    fit_parameters,
    fold_splits,
    plan,
    routing,
    train,
)
from ._utils import Reporter, restore_on_failure
from .binary import column_seeds
from .codes import CODE_NAMES, check_code_name, make_code_parts
from .decoders import ConvexDecoder
from .defaults import DataShape, default_decoder, default_learner, resolve_model
from .linear_outputs import linear_stack
from .validation import check_lengths, check_sample_weight, check_targets, encode_labels

__all__ = ["CodeMatrixClassifier"]


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
class CodeMatrixClassifier(
    CodeMatrixPrediction, MetaEstimatorMixin, ClassifierMixin, BaseEstimator
):
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

    def _make_decoder(self, **params):
        """The decoder to fit: a clone of ``decoder`` (None:
        :func:`~convexagg.defaults.default_decoder`) with ``params`` set, the parameters
        the model resolved for the data."""
        decoder = default_decoder() if self.decoder is None else clone(self.decoder)
        if self.verbose and "verbose" in decoder.get_params(deep=False):
            decoder.set_params(verbose=self.verbose)
        return decoder.set_params(**params) if params else decoder

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

    def _check_device_fit(self, X, y, sample_weight):
        """For array-API ``X``, before anything is moved or trained: what cannot apply
        (:meth:`_check_array_api`), the decoder's formulation and Dask ``y`` or weights
        (the zero entries once the model is resolved: :meth:`_resolve`)."""
        if array_namespace(X) is not None:
            decoder = self._make_decoder()
            self._check_array_api(decoder, X)
            check_array_api_settings(decoder.formulation, y, sample_weight, inputs="X")

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

    def _problem(self, X, y, sample_weight=None, fit_params=None):
        """Validate ``X``, ``y`` and the learners, build the code, the per-column seeds,
        fit parameters and the folds of out-of-fold outputs: everything before the model
        is resolved (:meth:`_resolve`) and any binary trained."""
        plan = self._plan()
        self._check_device_fit(X, y, sample_weight)
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
        p = Problem(
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
        p.splits = fold_splits(p)
        return p

    def _data_shape(self, p, rows):
        """The :class:`~convexagg.defaults.DataShape` of problem ``p`` whose decoder is
        fitted on ``rows``: the model's "auto" rules hold for the number of those rows,
        or the sum of their sample weights (integer weights fit as repeated rows)."""
        n_rows = int(np.asarray(p.y[rows]).size)
        weighted = n_rows
        if p.sample_weight is not None:
            weighted = float(on_host(take_rows(p.sample_weight, rows)).sum())
        return DataShape(
            p.code,
            p.code_parts,
            n_rows,
            weighted,
            sparse=issparse(p.X),
            array_api=array_namespace(p.X) is not None,
        )

    def _resolve(self, p, rows):
        """``(model, decoder)``: the model of this fit, resolved for the data once
        (:func:`~convexagg.defaults.resolve_model`), and its decoder, checked before any
        binary is trained. A decoder given whole is checked first: the model's record
        reads its settings."""
        decoder = self._make_decoder()
        self._check_decoder(decoder, p.output)
        model = resolve_model(self.get_params(deep=False), self._data_shape(p, rows))
        self._check_device_decoder(decoder, p)
        return model, decoder

    @staticmethod
    def _check_device_decoder(decoder, p):
        """Array-API ``X``: the resolved decoder weighs no zero entries (they are fitted
        and decoded on NumPy arrays)."""
        if array_namespace(p.X) is not None:
            check_array_api_settings(
                decoder.formulation, inputs="X", zero_entries=decoder._zero_entries()
            )

    def _log_model(self, model):
        """Under ``verbose``: each option the model resolved for the data, and why."""
        for line in model.messages():
            self._log(line)

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

    def _fit_decoder(self, decoder, model, training, p):
        """Fit ``decoder``, of the resolved ``model``, on the training outputs (a subclass
        chooses the penalty ``model`` leaves to cross-validation)."""
        self._log_model(model)
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

    def _train(self, p, warm=None, fit_decoder=None):
        """The binaries and the outputs the decoder is fitted on
        (:func:`~convexagg._training.train`); ``fit_decoder``, ``training -> fitted
        decoder``, for a subclass that compares binaries by their aggregation."""
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
        p = self._problem(X, y, sample_weight, fit_params)
        model, decoder = self._resolve(p, decoder_rows(p))

        def fit_decoder(training):
            return self._fit_decoder(clone(decoder), model, training, p)

        training = self._train(p, warm=self._warm_binaries(p), fit_decoder=fit_decoder)
        decoder = self._fit_decoder(self._warm_decoder(decoder, p), model, training, p)
        self._set_fitted(p, training, decoder, model)
        return self

    def _set_fitted(self, p, training, decoder, model):
        """Attributes are set only once everything has succeeded."""
        self.resolved_ = model.record(decoder)
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
        self._set_linear_stacks()
        self.decoder_ = decoder
        self._column_seeds = p.seeds
        # plain types (a model file holds only trusted types); fit_decoder reads them
        self._code_parts = {name: [int(l) for l in cols] for name, cols in p.code_parts.items()}
        self._set_out_of_fold(training, decoder)

    def _set_linear_stacks(self):
        """``_linear_stacks``: each member's linear binaries and their coefficients
        stacked (:func:`~convexagg.linear_outputs.linear_stack`), which every prediction
        reads. Derived from ``estimators_`` when they are fitted or loaded, as
        scikit-learn's derived fitted state is: replacing ``estimators_`` or refitting a
        binary in place afterwards leaves it stale."""
        output = self.binary_output_
        self._linear_stacks = [linear_stack(member, output) for member in self.estimators_]

    def __getstate__(self):
        # the stacks are derived from the binaries: a pickle or model file holds these once
        state = super().__getstate__()
        return {name: value for name, value in state.items() if name != "_linear_stacks"}

    def __setstate__(self, state):
        super().__setstate__(state)
        # fitted binaries (a model file's packed ones are rebuilt by convexagg.io.load first)
        members = self.__dict__.get("estimators_")
        if isinstance(members, list) and all(isinstance(member, list) for member in members):
            self._set_linear_stacks()

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
        """The training problem of ``fit_decoder``: the fitted code, its parts, classes
        and seeds, the fit parameters routed as :meth:`fit` routes them, and the folds
        of new fold models (seeded as in ``fit``)."""
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
        # plain types in the fitted estimator (a model file holds only trusted types)
        parts = {name: np.asarray(cols) for name, cols in getattr(self, "_code_parts", {}).items()}
        p = Problem(
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
            parts,
        )
        if new_folds:
            p.splits = fold_splits(p)
        return p

    def _decoder_outputs(self, p):
        """The outputs of problem ``p`` (:meth:`_refit_problem`) the decoder is fitted on
        by the fitted plan (see :meth:`training_outputs`), as a
        :class:`~convexagg._training.Training`."""
        learners = None
        if p.plan.out_of_fold and self._fitted.tests is None:
            learners = check_learners(self._learners(p.X), p.code.shape[1], False)[0]
        return decoder_outputs(self._fitted, p, learners, self.n_jobs)

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
        p = self._refit_problem(X, y, sample_weight, fit_params)
        training = self._decoder_outputs(p)
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
        self._check_device_fit(X, y, sample_weight)
        p = self._refit_problem(X, y, sample_weight, fit_params)
        # the model resolved for these rows, before any fold model is trained
        model, decoder = self._resolve(p, decoder_rows(p, self._fitted))
        training = self._decoder_outputs(p)
        self.decoder_ = self._fit_decoder(decoder, model, training, p)
        self.resolved_ = model.record(self.decoder_)
        self._set_out_of_fold(training, self.decoder_)
        return self
