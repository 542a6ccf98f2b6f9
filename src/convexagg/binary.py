"""Training the binary problems a code matrix defines, and collecting their outputs.

Column ``l`` of the code trains one clone of the user's estimator on the samples
whose class the column uses (``code[y, l] != 0``) with target ``1`` for the
positive side and ``0`` for the negative side. Its output on a sample is the
probability of the positive side (``predict_proba``) or, for learners without
``predict_proba``, the margin (``decision_function``, positive = positive side).

Outputs are checked as they come back: a binary classifier that returns NaN or
infinite values, probabilities outside ``[0, 1]`` or an output of the wrong
shape is named in a ``ValueError`` instead of corrupting the aggregation.

Linear binaries (scikit-learn's linear classifiers' ``decision_function``, and
``LogisticRegression``'s ``predict_proba``, its logistic sigmoid) predict
together: their coefficients are stacked and ``Q`` is one matrix product, the
values those methods compute one column at a time, without a call per binary. A pipeline of a
``StandardScaler`` and such a model is linear too: its scaling is folded into
the stacked coefficients (``x -> ((x - mean) / scale) @ coef + b``). For
``LogisticRegression`` binaries, :func:`predict_log_odds` gives the stacked
decision functions themselves, the log-odds of ``Q``, which the convex decoder
takes its cross-entropy losses from without the sigmoid.

Array API: under ``sklearn.set_config(array_api_dispatch=True)`` an ``X`` of
another array library (PyTorch, CuPy, ...) stays on its device. Each column's
rows and 0/1 targets are built there from the class indices moved there once,
the learners (which must declare scikit-learn's array API support, see
:func:`convexagg._array_api.check_array_api_learners`) are fitted on those
arrays, and ``Q`` is stacked there (:func:`predict_binaries_on_device`). The
binaries are trained one after another in the calling process: joblib workers
would copy the device arrays, and one device runs one fit at a time anyway.

Folds: a ``LogisticRegression`` column's fold binaries are fitted one after another,
each from the previous fold's solution (:func:`starts_folds_warm`); other learners'
are independent tasks, fold by fold.

Batched: where every learner is a ``LogisticRegression`` with its L2 penalty (alone or
after a ``StandardScaler``, :func:`~convexagg.batched_logistic.batched_columns`), all
columns' binaries of all folds (or of all rows) are trained together in the calling
process, to the optimum of their objectives, by
:func:`~convexagg.batched_logistic.fit_logistic_binaries`; the binaries it leaves (one
side, or no convergence within ``max_iter``) are fitted one by one as above.

Seeding: given one seed per column (:func:`column_seeds`), every
``random_state`` parameter of a clone that is left at ``None`` (its own or a
nested one, e.g. inside a pipeline) is set to its column's seed, so randomised
binary learners are reproducible; parameters the user set are never changed. (A
``LogisticRegression`` whose solver draws no random numbers keeps ``None``: its fit
would only build an unused generator from the seed.)
"""

from __future__ import annotations

import copy as _copy
import operator
import warnings
from contextlib import nullcontext
from typing import NamedTuple

import numpy as np
from joblib import Parallel, delayed
from scipy.sparse import issparse
from sklearn import config_context
from sklearn.base import BaseEstimator, clone
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils import check_random_state
from sklearn.utils.extmath import safe_sparse_dot
from sklearn.utils.validation import validate_data

from ._array_api import array_namespace, on_host, take_rows
from ._folds import cv_splits
from ._sklearn import check_method_params, num_samples
from .batched_logistic import fit_logistic_binaries

__all__ = [
    "ConstantBinaryPredictor",
    "binary_output_kind",
    "column_seeds",
    "fit_binaries",
    "fit_predict_binaries",
    "fold_binaries",
    "is_linear_class",
    "linear_stack",
    "log_odds_input",
    "out_of_fold_outputs",
    "predict_binaries",
    "predict_binaries_on_device",
    "predict_log_odds",
    "starts_folds_warm",
    "LinearLogOdds",
]


class ConstantBinaryPredictor(BaseEstimator):
    """Stands in for a binary problem whose training subset has at most one side.

    Predicts the fraction of positive targets it saw (0.5 when it saw none);
    its margin is the log-odds of that fraction, clipped to ``[-10, 10]``.
    """

    def fit(self, X, y, sample_weight=None):
        """Record the (weighted) fraction of positive targets.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Ignored but for its number of rows.
        y : array-like of shape (n_samples,)
            0/1 targets.
        sample_weight : array-like of shape (n_samples,), default=None
            Weights of the targets.

        Returns
        -------
        self : ConstantBinaryPredictor
            The fitted predictor.
        """
        y = np.asarray(on_host(y))  # a target of X's device (the array-API path): a few numbers
        sample_weight = on_host(sample_weight)
        if y.size and sample_weight is not None and np.sum(sample_weight) > 0:
            self.p_ = float(np.average(y == 1, weights=sample_weight))
        else:
            self.p_ = float(np.mean(y == 1)) if y.size else 0.5
        self.classes_ = np.array([0, 1])
        return self

    def predict_proba(self, X):
        """Return the constant probabilities of the negative and the positive side.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Samples (only their number is used).

        Returns
        -------
        proba : ndarray of shape (n_samples, 2)
            ``1 - p_`` and ``p_`` in every row.
        """
        n = num_samples(X)
        return _like(X, np.column_stack([np.full(n, 1.0 - self.p_), np.full(n, self.p_)]))

    def decision_function(self, X):
        """Return the constant margin: the log-odds of ``p_``, clipped to ``[-10, 10]``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Samples (only their number is used).

        Returns
        -------
        margin : ndarray of shape (n_samples,)
            The same value in every row.
        """
        p = min(max(self.p_, 1e-5), 1 - 1e-5)
        return _like(X, np.full(num_samples(X), np.clip(np.log(p / (1 - p)), -10.0, 10.0)))

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.array_api_support = True  # outputs in X's namespace, on its device
        return tags


def _like(X, values):
    """NumPy ``values`` in ``X``'s namespace, on its device, when ``X`` takes the
    array-API path (a constant binary's outputs, made there at the cost of a copy)."""
    namespace = array_namespace(X)
    return values if namespace is None else namespace.to_device(values)


def binary_output_kind(estimator, name="estimator"):
    """Say which binary outputs ``estimator`` gives: probabilities or margins.

    Parameters
    ----------
    estimator : object
        A binary classifier.
    name : str, default="estimator"
        How the ``TypeError`` names it.

    Returns
    -------
    output : {"proba", "margin"}
        ``"proba"`` if ``estimator`` has ``predict_proba``, ``"margin"`` if it has
        ``decision_function``; otherwise a ``TypeError``.
    """
    if hasattr(estimator, "predict_proba"):
        return "proba"
    if hasattr(estimator, "decision_function"):
        return "margin"
    raise TypeError(
        f"{name} {estimator!r} has neither predict_proba nor decision_function; "
        "a binary classifier giving probabilities or scores is needed."
    )


def _params_of(fit_params, column):
    """Column ``column``'s fit parameters: ``fit_params`` itself, or its entry when it
    is a list (one dict per column)."""
    if isinstance(fit_params, list):
        return fit_params[column]
    return fit_params


def _binary_problem(y, column):
    """Rows used by a code column and their 0/1 targets."""
    side = column[y]
    rows = np.flatnonzero(side != 0)
    return rows, (side[rows] == 1).astype(np.int64)


def _warn_one_sided(y, code, where=""):
    """Warn, in the calling process, about columns whose training data has one side.

    Checked here rather than in the workers: warnings raised in joblib worker
    processes never reach the user.
    """
    present = np.zeros(code.shape[0], dtype=bool)
    present[np.unique(y)] = True
    used = code[present]
    one_sided = np.flatnonzero(~((used == 1).any(axis=0) & (used == -1).any(axis=0)))
    if one_sided.size:
        warnings.warn(
            f"binary problems {one_sided.tolist()} have training samples of only one "
            f"side{where}; they predict a constant.",
            UserWarning,
            stacklevel=3,
        )


def column_seeds(random_state, n_columns):
    """Draw one integer seed per code column.

    Parameters
    ----------
    random_state : int, RandomState instance or None
        The generator; None gives no seeds.
    n_columns : int
        Number of code columns.

    Returns
    -------
    seeds : list of int or None
        One seed per column, or ``None`` for each when ``random_state`` is None.
    """
    if random_state is None:
        return [None] * n_columns
    rng = check_random_state(random_state)
    return [int(s) for s in rng.randint(np.iinfo(np.int32).max, size=n_columns)]


def _seeded_clone(estimator, seed):
    """``clone(estimator)``, its unset (``None``) ``random_state`` parameters set to ``seed``
    (but a ``LogisticRegression``'s that draws no random numbers: :func:`_draws_no_numbers`)."""
    est = clone(estimator)
    if seed is None:
        return est
    params = est.get_params(deep=True)
    unset = {}
    for name, value in params.items():
        if value is None and (name == "random_state" or name.endswith("__random_state")):
            owner = est if name == "random_state" else params[name.rsplit("__", 1)[0]]
            if not _draws_no_numbers(owner):
                unset[name] = seed
    if unset:
        est.set_params(**unset)
    return est


# the LogisticRegression solvers that draw random numbers (from random_state)
_SEEDED_SOLVERS = ("liblinear", "sag", "saga")


def _draws_no_numbers(learner):
    """Whether ``learner`` is a ``LogisticRegression`` whose solver uses no random numbers:
    its ``fit`` builds a ``RandomState`` from an int seed anyway, unused, so it keeps
    ``random_state=None`` and each of the many small binaries of a fit skips that cost."""
    return type(learner) is LogisticRegression and learner.solver not in _SEEDED_SOLVERS


def _learner(estimator, column):
    """The learner of code column ``column``: ``estimator`` itself, or its entry when it
    is a list of learners, one per column."""
    return estimator[column] if isinstance(estimator, (list, tuple)) else estimator


def _fit_binary(estimator, X, y, column, seed=None, fit_params=None, warm=None, copy=True):
    """Fit the binary problem of ``column``: a seeded clone of ``estimator`` (or a
    copy of ``warm``, a binary fitted before) on the rows the column uses, with the
    sample-aligned ``fit_params`` taken on those rows.

    ``warm`` itself is never refitted: a fit that fails in another column must
    leave the previous model as it was (``copy=False``: ``warm`` is a copy already,
    refitted as it is). The fitted object is returned, not what
    its ``fit`` returns (scikit-learn's meta-estimators do the same; some
    learners' ``fit`` returns None).

    Array-API ``X`` (:mod:`convexagg._array_api`): ``y`` holds the class
    indices on ``X``'s device, and the rows and targets are built there."""
    namespace = array_namespace(X)
    if namespace is None:
        rows, target = _binary_problem(y, column)
        one_sided = target.size == 0 or target.min() == target.max()
    else:
        rows, target = _device_problem(y, column, namespace)
        n_positive = int(namespace.xp.sum(target))
        one_sided = n_positive in (0, int(target.shape[0]))
    params = check_method_params(X, params=fit_params or {}, indices=rows)
    if one_sided:
        return ConstantBinaryPredictor().fit(None, target, params.get("sample_weight"))
    if warm is None or isinstance(warm, ConstantBinaryPredictor):
        est = _seeded_clone(estimator, seed)
    else:
        est = _copy.deepcopy(warm) if copy else warm
    est.fit(take_rows(X, rows), target, **params)
    return est


def _device_problem(y, column, namespace):
    """:func:`_binary_problem` on the device: ``y`` and the results are arrays of
    ``namespace``, ``column`` (a code column, a few entries) is moved there."""
    xp = namespace.xp
    side = xp.take(namespace.to_device(column.astype(np.int64)), y)
    rows = xp.nonzero(side != 0)[0]
    return rows, xp.astype(xp.take(side, rows) == 1, xp.int64)


def _predict_binary(estimator, X, output, index=0):
    """Binary output of ``estimator`` on ``X`` (column ``index`` of ``Q``), checked."""
    if output == "proba":
        proba = np.asarray(estimator.predict_proba(X))
        if proba.ndim != 2 or proba.shape[1] != 2:
            raise ValueError(
                f"binary classifier {index} ({type(estimator).__name__}) returned "
                f"predict_proba of shape {proba.shape}; expected (n_samples, 2)."
            )
        values = proba[:, 1]  # the larger class label is the positive side
    else:
        values = np.asarray(estimator.decision_function(X))
        if values.ndim == 2 and values.shape[1] == 1:
            values = values[:, 0]
        if values.ndim != 1:
            raise ValueError(
                f"binary classifier {index} ({type(estimator).__name__}) returned "
                f"decision_function of shape {values.shape}; expected (n_samples,)."
            )
    if values.shape[0] != num_samples(X):  # before it blames y or fails to broadcast
        raise ValueError(
            f"binary classifier {index} ({type(estimator).__name__}) returned "
            f"{values.shape[0]} outputs for {num_samples(X)} samples; expected one per sample."
        )
    try:
        values = values.astype(np.float64)
    except (TypeError, ValueError):
        raise ValueError(
            f"binary classifier {index} ({type(estimator).__name__}) returned "
            f"non-numeric outputs (dtype {values.dtype})."
        ) from None
    _check_outputs(values[:, None], [estimator], output, [index])
    return values


def _check_outputs(values, estimators, output, indices):
    """Raise for the first column of ``values`` that is not finite (or, for
    probabilities, outside ``[0, 1]``), naming its binary classifier."""
    lo, hi = values.min(axis=0, initial=0.0), values.max(axis=0, initial=0.0)
    _check_ranges(lo, hi, estimators, output, indices)


def _check_ranges(lo, hi, estimators, output, indices):
    """:func:`_check_outputs` on the columns' minima ``lo`` and maxima ``hi`` (NumPy)."""
    bad = np.flatnonzero(~(np.isfinite(lo) & np.isfinite(hi)))
    if bad.size:
        j = bad[0]
        raise ValueError(
            f"binary classifier {indices[j]} ({type(estimators[j]).__name__}) returned NaN "
            "or infinite outputs; convexagg needs finite probabilities or margins."
        )
    bad = np.flatnonzero((lo < 0.0) | (hi > 1.0)) if output == "proba" else []
    if len(bad):
        j = bad[0]
        raise ValueError(
            f"binary classifier {indices[j]} ({type(estimators[j]).__name__}) returned "
            f"probabilities outside [0, 1] (min {float(lo[j])!r}, max {float(hi[j])!r})."
        )


def is_linear_class(learner_class, output):
    """Whether ``cls``'s output is scikit-learn's linear map of ``X``.

    Parameters
    ----------
    learner_class : type
        A binary learner's class.
    output : {"proba", "margin"}
        The output read from it.

    Returns
    -------
    linear : bool
        True for the ``decision_function`` of ``LinearClassifierMixin`` and, for
        probabilities, ``LogisticRegression``'s ``predict_proba`` (its sigmoid for
        binary problems).
    """
    decision_function = getattr(learner_class, "decision_function", None)
    if decision_function is not LogisticRegression.decision_function:
        return False
    return output == "margin" or learner_class.predict_proba is LogisticRegression.predict_proba


def _scaled_parts(estimator):
    """``(scaler, model)`` of a ``Pipeline`` (not a subclass, which may predict
    otherwise) of a ``StandardScaler`` and one more step; ``(None, estimator)`` for
    anything else."""
    if type(estimator) is not Pipeline:
        return None, estimator
    steps = [step for _, step in estimator.steps if step not in (None, "passthrough")]
    if len(steps) != 2 or type(steps[0]).transform is not StandardScaler.transform:
        return None, estimator
    return steps[0], steps[1]


def _is_linear_learner(estimator, output):
    """:func:`is_linear_class` for an unfitted learner, seen through a scaling pipeline."""
    return is_linear_class(type(_scaled_parts(estimator)[1]), output)


def _linear_parts(estimator, output):
    """``(scaler, model)`` of a fitted linear binary (:func:`is_linear_class`, alone
    (``scaler`` None) or after a ``StandardScaler``); None for any other."""
    scaler, model = _scaled_parts(estimator)
    coef = getattr(model, "coef_", None)
    linear = (
        (scaler is None or hasattr(scaler, "scale_"))
        and is_linear_class(type(model), output)
        and isinstance(coef, np.ndarray)
        and coef.ndim == 2
        and coef.shape[0] == 1
        and len(getattr(model, "classes_", ())) == 2
    )
    return (scaler, model) if linear else None


def _mean(scaler):
    """The mean a fitted ``StandardScaler`` subtracts (None: it does not centre)."""
    return scaler.mean_ if scaler is not None and scaler.with_mean else None


class _Stack(NamedTuple):
    """The stacked linear binaries of :func:`_stacked_linear`."""

    W: np.ndarray  # (d, m)
    b: np.ndarray  # (m,)
    center: np.ndarray | None  # (d,)
    A: np.ndarray  # (m, d + 1), [W; b].T Fortran-ordered: LinearLogOdds's coefficients
    size: float  # the largest row sum of |A|: |z| <= size * max |x1|


def _stacked_linear(parts):
    """``_Stack(W, b, center, A, size)`` with ``(x - center) @ W + b`` the decision
    functions of the linear binaries of ``parts`` (:func:`_linear_parts`), scalers
    folded in (``A`` and ``size``: what :func:`predict_log_odds` needs of them,
    computed once per stack rather than once per call).

    ``((x - m) / s) @ c + b = (x - center) @ (c / s) + b + ((center - m) / s) @ c``;
    ``center``, the mean of the scalers' means, keeps ``center - m`` small, so
    that the product does not cancel large means against each other (None when
    no scaler centres)."""
    # one array operation per quantity, not a loop of small products
    coef = np.array([model.coef_[0] for _, model in parts], dtype=np.float64)  # (m, d)
    b = np.array([np.ravel(model.intercept_)[0] for _, model in parts], dtype=np.float64)
    scales = [getattr(scaler, "scale_", None) for scaler, _ in parts]
    if any(scale is not None for scale in scales):
        ones = np.ones(coef.shape[1])
        coef /= np.array([ones if scale is None else scale for scale in scales])
    means = [_mean(scaler) for scaler, _ in parts]
    centred = [mean for mean in means if mean is not None]
    center = np.mean(centred, axis=0) if centred else None
    if center is not None:
        shift = np.array([-center if mean is None else mean - center for mean in means])
        b -= np.einsum("md,md->m", shift, coef)
    A = np.vstack([coef.T, b]).T  # (m, d + 1), the intercepts last; Fortran-ordered
    return _Stack(coef.T, b, center, A, float(np.abs(A).sum(axis=1).max()))


# the last stacks built, (a _StackKey, its result), the latest first: a model
# predicting batch after batch reuses its own, since checking that nothing the
# stack read was replaced costs far less than finding and stacking the binaries. Fitting a
# binary again, replacing a step, a binary or a fitted attribute is seen; writing
# into a fitted array in place is not (as with any estimator's state derived from
# its fitted attributes). A few are kept: the members of an ensemble, models that
# predict in turn.
_last_stacks = ()
_KEPT_STACKS = 8  # an ensemble of cv=5 members, and a few models beside
# only stacks this small are kept (the cache holds them and their binaries alive):
# for larger ones, the products dwarf their rebuilding
_KEPT_STACK_BYTES = 1 << 24

# a fit assigns coef_ anew (classes_ with it); one getter per attribute: a getter of
# several builds a tuple per object, to be flattened
_MODEL_READS = tuple(map(operator.attrgetter, ("coef_", "intercept_")))
_SCALER_READS = tuple(map(operator.attrgetter, ("scale_", "mean_", "with_mean")))
_STEPS = operator.attrgetter("steps")


class _StackKey:
    """What :func:`_linear_parts` and :func:`_stacked_linear` read of the binaries:
    the binaries, the steps of the pipelines, and the fitted attributes of the
    scalers and of the models of a linear class.

    Each read is kept in a list per attribute (the steps: a copy of each
    pipeline's list) and compared as a list: in C, each item passing at once
    when it is the same object (``list.__eq__`` checks identity first), else
    by ``==`` (a step's ``(name, estimator)`` passes with the same estimator),
    which no array of two or more elements passes (NumPy refuses its truth
    value: a mismatch). Comparing whole lists keeps the loop in C, cheaper than
    flattening the reads and comparing each with ``operator.is_`` in Python."""

    def __init__(self, estimators, output):
        self.output, self.estimators = output, tuple(estimators)
        self.pipelines = [est for est in estimators if type(est) is Pipeline]
        pairs = [_scaled_parts(est) for est in estimators]
        self.models = [m for _, m in pairs if is_linear_class(type(m), output)]
        self.scalers = [s for s, m in pairs if s is not None and is_linear_class(type(m), output)]
        try:
            # copies of the steps' lists: a step replaced in place is seen
            self.steps = [list(steps) for steps in map(_STEPS, self.pipelines)]
            self.attributes = self._attributes()
        except AttributeError:  # an unfitted model or scaler: nothing to reuse
            self.steps = None

    def _attributes(self):
        """The fitted attributes read, one list per attribute."""
        return [list(map(get, self.models)) for get in _MODEL_READS] + [
            list(map(get, self.scalers)) for get in _SCALER_READS
        ]

    def matches(self, estimators, output):
        """Whether ``estimators`` are the same binaries, with the same state."""
        if output != self.output or len(estimators) != len(self.estimators):
            return False
        if self.steps is None or not all(map(operator.is_, estimators, self.estimators)):
            return False
        try:
            return (
                list(map(_STEPS, self.pipelines)) == self.steps
                and self._attributes() == self.attributes
            )
        except (AttributeError, TypeError, ValueError):  # a read gone, or arrays compared
            return False


def linear_stack(estimators, output):
    """The linear binaries of ``estimators`` and their coefficients stacked.

    Parameters
    ----------
    estimators : list of estimators
        Fitted binaries, in the code's column order.
    output : {"proba", "margin"}
        The output read from them.

    Returns
    -------
    parts : list
        Each binary's ``(scaler, model)`` when it is linear, else None.
    linear : list of int
        The indices of the linear ones (empty unless there are two or more, all
        with the same number of features).
    stack : tuple or None
        Their coefficients and intercepts stacked for one product (None when
        ``linear`` is empty).
    """
    global _last_stacks
    kept = _last_stacks  # one read: another thread may replace it meanwhile
    for key, result in kept:
        if key.matches(estimators, output):
            return result
    parts = [_linear_parts(est, output) for est in estimators]
    linear = [l for l, part in enumerate(parts) if part is not None]
    if len({parts[l][1].coef_.shape[1] for l in linear}) != 1 or len(linear) < 2:
        linear = []
    result = parts, linear, _stacked_linear([parts[l] for l in linear]) if linear else None
    if linear and result[2][0].nbytes <= _KEPT_STACK_BYTES:
        _last_stacks = ((_StackKey(estimators, output), result),) + kept[: _KEPT_STACKS - 1]
    return result


def _predict_linear(estimators, parts, X, output, indices, stack=None):
    """Outputs of linear binaries (their :func:`_linear_parts`) in one product,
    ``(n, len)``: what their ``decision_function`` (``predict_proba[:, 1]``)
    computes, as ``X @ coef.T + intercept`` (then the sigmoid), for all at once.
    ``stack``: their :func:`_stacked_linear`, when known."""
    checker = parts[0][0] or estimators[0]
    X = validate_data(checker, X, accept_sparse="csr", reset=False)
    W, b, center = (_stacked_linear(parts) if stack is None else stack)[:3]
    if center is not None:
        X = X - center
    values = np.asarray(safe_sparse_dot(X, W, dense_output=True), dtype=np.float64)
    values += b
    if output == "proba":  # scipy's expit, 1 / (1 + exp(-x)), with numpy's faster exp
        with np.errstate(over="ignore"):  # exp(-x) = inf gives 0, as expit does
            np.exp(np.negative(values, out=values), out=values)
        values += 1.0
        np.reciprocal(values, out=values)
    _check_outputs(values, estimators, output, indices)
    return values


class LinearLogOdds:
    """Log-odds ``Z = X1 @ A.T`` of stacked linear binaries, computed by blocks of rows.

    What :func:`predict_log_odds` returns for a dense ``X``: an array-like of
    shape ``(n_samples, n_classifiers)`` (``numpy.asarray`` computes it whole)
    whose blocks of rows ``Z[start:stop]`` are computed when read. A decoder
    reading it block by block keeps each block in cache with its losses, where the
    whole ``Z`` would go through memory (BENCHMARKS.md, "Decoding 2,000 letter
    rows"). The convex decoder has each block
    written, negated and transposed, into its own buffer
    (:meth:`negated_block_into`).

    Parameters
    ----------
    X1 : ndarray of shape (n_samples, n_features + 1)
        The samples, centred, with a last column of ones.
    A : ndarray of shape (n_classifiers, n_features + 1)
        The stacked coefficients, the intercepts last.

    Attributes
    ----------
    shape : tuple of int
        ``(n_samples, n_classifiers)``.
    dtype : numpy.dtype
        float64.
    ndim : int
        2.
    """

    ndim = 2
    dtype = np.dtype(np.float64)

    def __init__(self, X1, A):
        # A Fortran-ordered: OpenBLAS then sums each entry in the same order whatever
        # the block's width (a C-ordered A with a C-ordered X1.T does not: the first
        # rows of a request would not decode to the bit as they do alone), and the
        # blocks' products are no slower than with a C-ordered A
        self._X1, self._A = X1, np.asfortranarray(A)
        self._X1T = X1.T  # a view: the blocks' right-hand side, sliced once
        self._negA = np.negative(self._A)  # its products are those of A negated, bit for bit
        self.shape = (X1.shape[0], A.shape[0])

    def __getitem__(self, rows):
        """The block ``Z[rows]`` (a slice of rows), Fortran-ordered (each column contiguous)."""
        if not isinstance(rows, slice):
            raise TypeError(f"LinearLogOdds takes a slice of rows, got {rows!r}.")
        return (self._A @ self._X1[rows].T).T

    def negated_block_into(self, start, stop, out):
        """Write ``-Z[start:stop].T`` into ``out``: the same product as
        ``Z[start:stop]``, negated exactly, where a decoder keeps it.

        Parameters
        ----------
        start, stop : int
            The rows of the block.
        out : ndarray of shape (n_classifiers, stop - start)
            float64, each row contiguous.

        Returns
        -------
        out : ndarray
            ``out``, filled.
        """
        return np.matmul(self._negA, self._X1T[:, start:stop], out=out)

    def __array__(self, dtype=None, copy=None):
        Z = self[:]
        return Z if dtype is None else Z.astype(dtype)


# log-odds beyond this bound (of |x| times the largest sum of |coef|) might overflow
# and turn into NaN (inf - inf): those take the checked path of predict_binaries
_SAFE_BOUND = 1e300


def log_odds_input(estimators, X):
    """``X`` validated against linear binaries as :func:`predict_log_odds` validates it,
    for several ensemble members of such binaries to share one check
    (``check_input=False`` then); None when the binaries are not all linear.

    Parameters
    ----------
    estimators : list of fitted binary classifiers
        One per code column.
    X : {array-like, sparse matrix, DataFrame} of shape (n_samples, n_features)
        Samples.

    Returns
    -------
    X : ndarray, sparse matrix or None
        A finite 2-D array (CSR matrix) with the binaries' features.
    """
    parts, linear, _ = linear_stack(estimators, "proba")
    if len(linear) != len(estimators):
        return None
    checker = parts[0][0] or estimators[0]
    return validate_data(checker, X, accept_sparse="csr", reset=False)


def predict_log_odds(estimators, X, check_input=True):
    """The log-odds ``Z = logit(Q)`` of linear binaries' probabilities, in one product.

    Where every binary is scikit-learn's ``LogisticRegression`` (alone or after a
    ``StandardScaler``, see the module docstring), its probability is
    ``expit(x @ coef + intercept)``: this returns the decision functions, stacked,
    so that a decoder can take the cross-entropy losses from them directly
    (:meth:`~convexagg.decoders.ConvexDecoder.predict_proba_from_log_odds`)
    instead of from ``Q = expit(Z)``.

    Parameters
    ----------
    estimators : list of fitted binary classifiers
        One per code column.
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
        Samples.
    check_input : bool, default=True
        Validate ``X`` against the binaries; False where the caller has
        validated it already (a finite 2-D array or CSR/CSC matrix with their
        features).

    Returns
    -------
    Z : LinearLogOdds, ndarray of shape (n_samples, n_classifiers), or None
        Column ``l`` is ``logit(estimators[l].predict_proba(X)[:, 1])``, computed
        without the sigmoid, in float64: a :class:`LinearLogOdds` (computed when
        read) for a dense ``X``, a Fortran-ordered array for a sparse one. None
        when some binary is not such a model, when ``X`` is sparse and a scaler
        centres (as for :func:`predict_binaries`), or when the coefficients are
        not finite or large enough for the product to overflow (the binaries'
        outputs are then checked one by one by :func:`predict_binaries`).
    """
    parts, linear, stack = linear_stack(estimators, "proba")
    if len(linear) != len(estimators):
        return None
    W, b, center, A, size = stack
    if issparse(X) and center is not None:
        return None
    if check_input:
        X = log_odds_input(estimators, X)
    if issparse(X):
        if not size * abs(X).max() < _SAFE_BOUND:  # False for NaN too
            return None
        ZT = np.asarray(safe_sparse_dot(X, W, dense_output=True).T, dtype=np.float64, order="C")
        ZT += b[:, None]
        return ZT.T
    X1 = np.empty((X.shape[0], X.shape[1] + 1))
    if center is None:
        X1[:, :-1] = X
    else:
        np.subtract(X, center, out=X1[:, :-1])
    X1[:, -1] = 1.0
    if not size * np.abs(X1).max(initial=0.0) < _SAFE_BOUND:
        return None
    return LinearLogOdds(X1, A)


def _per_column(code, seeds, warm):
    M = code.shape[1]
    return [None] * M if seeds is None else seeds, [None] * M if warm is None else warm


def _parallel(n_jobs, tasks, progress=None):
    """``Parallel(n_jobs)(tasks)``, calling ``progress()`` as each task finishes (in
    order; at the end where the joblib backend cannot return results as they come)."""
    if progress is None:
        return Parallel(n_jobs=n_jobs)(tasks)
    try:
        results = Parallel(n_jobs=n_jobs, return_as="generator")(tasks)
    except ValueError:  # a backend without generators (e.g. multiprocessing)
        results = Parallel(n_jobs=n_jobs)(tasks)
    done = []
    for result in results:
        done.append(result)
        progress()
    return done


def fit_binaries(
    estimator, X, y, code, n_jobs=None, seeds=None, fit_params=None, warm=None, progress=None
):
    """Fit one clone of ``estimator`` per code column.

    Parameters
    ----------
    estimator : classifier, or list of classifiers
        The binary learner, or one learner per code column.
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
        Training samples.
    y : ndarray of shape (n_samples,)
        Integer class indices.
    code : ndarray of shape (n_classes, n_classifiers)
        The code matrix; column ``l`` defines binary problem ``l``.
    n_jobs : int, default=None
        Parallel jobs (joblib; honours ``joblib.parallel_config``).
    seeds : list of int or None, default=None
        One seed per column for the clone's unset ``random_state`` parameters
        (see :func:`column_seeds`); None leaves them unset.
    fit_params : dict or list of dict, default=None
        Passed to every learner's ``fit`` (a list: one dict per column);
        sample-aligned values (such as ``sample_weight``) are taken on the rows
        of each column's problem.
    warm : list of fitted binaries, default=None
        One per column: copies of them are refitted instead of fresh clones (a
        learner with its own ``warm_start`` then continues from its previous
        solution); the binaries given are not changed.
    progress : callable, default=None
        Called with no argument as each binary's training finishes.

    Returns
    -------
    estimators : list of fitted estimators
        One per column.
    """
    _warn_one_sided(y, code)
    seeds, warm = _per_column(code, seeds, warm)
    every = [np.arange(len(y))]
    batched = _batched(estimator, X, y, code, every, seeds, fit_params, progress, warm)
    if batched is not None:
        return batched[0]
    namespace = array_namespace(X)
    if namespace is not None:
        y = namespace.to_device(y)  # once: every column's targets are built from it there
    tasks = (
        delayed(_fit_binary)(
            _learner(estimator, l), X, y, code[:, l], seeds[l], _params_of(fit_params, l), warm[l]
        )
        for l in range(code.shape[1])
    )
    if namespace is not None:
        return _in_turn(tasks, progress)
    return _parallel(n_jobs, tasks, progress)


def _repeated(progress, times):
    """``progress`` called ``times`` times per call: a task that trains that many binaries."""

    def each():
        for _ in range(times):
            progress()

    return each


def _in_turn(tasks, progress=None):
    """The ``delayed`` tasks run one after another in this process (the array-API
    path: see the module docstring), calling ``progress()`` after each."""
    done = []
    for function, args, kwargs in tasks:
        done.append(function(*args, **kwargs))
        if progress is not None:
            progress()
    return done


def _fit_predict_binary_all(estimator, X, y, column, output, seed, index, fit_params, warm):
    est = _fit_binary(estimator, X, y, column, seed, fit_params, warm)
    return est, _predict_binary(est, X, output, index)


def fit_predict_binaries(
    estimator,
    X,
    y,
    code,
    output,
    n_jobs=None,
    seeds=None,
    fit_params=None,
    warm=None,
    progress=None,
):
    """:func:`fit_binaries`, and each binary's outputs on all of ``X``, in one pass.

    One parallel task per column fits the clone and predicts the training rows
    while it has them, so the estimators and ``X`` are not shipped to the
    workers a second time (the paper's protocol: the weights are fitted on the
    binaries' outputs on their own training data).

    Parameters
    ----------
    estimator : classifier, or list of classifiers
        The binary learner, or one learner per code column.
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
        Training samples.
    y : ndarray of shape (n_samples,)
        Integer class indices.
    code : ndarray of shape (n_classes, n_classifiers)
        The code matrix; column ``l`` defines binary problem ``l``.
    output : {"proba", "margin"}
        Which outputs to predict (``predict_proba`` or ``decision_function``).
    n_jobs : int, default=None
        Parallel jobs (joblib).
    seeds : list of int or None, default=None
        One seed per column, as in :func:`fit_binaries`.
    fit_params : dict or list of dict, default=None
        Passed to the learners' ``fit``, as in :func:`fit_binaries`.
    warm : list of fitted binaries, default=None
        Copies of them refitted, as in :func:`fit_binaries`.
    progress : callable, default=None
        Called with no argument as each binary's training finishes.

    Returns
    -------
    estimators : list of fitted estimators
        One per column.
    Q : ndarray of shape (n_samples, n_classifiers)
        Their outputs on ``X``.
    """
    learners = [_learner(estimator, l) for l in range(code.shape[1])]
    if array_namespace(X) is not None:  # trained and predicting on X's device
        estimators = fit_binaries(estimator, X, y, code, n_jobs, seeds, fit_params, warm, progress)
        return estimators, predict_binaries_on_device(estimators, X, output)
    if all(_is_linear_learner(est, output) for est in learners):  # they predict faster together
        estimators = fit_binaries(estimator, X, y, code, n_jobs, seeds, fit_params, warm, progress)
        return estimators, predict_binaries(estimators, X, output, n_jobs=n_jobs)
    _warn_one_sided(y, code)
    seeds, warm = _per_column(code, seeds, warm)
    tasks = (
        delayed(_fit_predict_binary_all)(
            learners[l], X, y, code[:, l], output, seeds[l], l, _params_of(fit_params, l), warm[l]
        )
        for l in range(code.shape[1])
    )
    pairs = _parallel(n_jobs, tasks, progress)
    estimators = [est for est, _ in pairs]
    Q = np.column_stack([col for _, col in pairs]).astype(np.float64, copy=False)
    return estimators, Q


def predict_binaries(estimators, X, output, n_jobs=None):
    """Predict the binary outputs ``Q``, checked to be finite (in ``[0, 1]`` for probabilities).

    Linear binaries with the same number of features predict in one product
    (see the module docstring), the others in parallel, one task each.

    Parameters
    ----------
    estimators : list of fitted binary classifiers
        One per code column.
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
        Samples.
    output : {"proba", "margin"}
        Which outputs to predict (``predict_proba`` or ``decision_function``).
    n_jobs : int, default=None
        Parallel jobs (joblib).

    Returns
    -------
    Q : ndarray of shape (n_samples, n_classifiers)
        Column ``l`` is the output of ``estimators[l]``.
    """
    parts, linear, stack = linear_stack(estimators, output)
    if issparse(X) and any(_mean(parts[l][0]) is not None for l in linear):
        # a sparse X is not centred (the scalers' own transform refuses it)
        linear = [l for l in linear if _mean(parts[l][0]) is None]
        if len({parts[l][1].coef_.shape[1] for l in linear}) != 1 or len(linear) < 2:
            linear = []
        stack = None
    others = sorted(set(range(len(estimators))) - set(linear))
    if linear:
        chosen = [estimators[l] for l in linear]
        values = _predict_linear(chosen, [parts[l] for l in linear], X, output, linear, stack)
        if not others:
            return values
    Q = np.empty((num_samples(X), len(estimators)))
    if linear:
        Q[:, linear] = values
    columns = Parallel(n_jobs=n_jobs)(
        delayed(_predict_binary)(estimators[l], X, output, l) for l in others
    )
    for l, column in zip(others, columns):
        Q[:, l] = column
    return Q


def predict_binaries_on_device(estimators, X, output):
    """:func:`predict_binaries` for an ``X`` that takes the array-API path: each binary
    predicts on ``X``'s device and ``Q`` is stacked there, checked as
    :func:`predict_binaries` checks its outputs (shape, finite, probabilities in
    ``[0, 1]``), only the columns' minima and maxima crossing to the host.

    Parameters
    ----------
    estimators : list of fitted binary classifiers
        One per code column, each predicting arrays of ``X``'s namespace.
    X : array of shape (n_samples, n_features)
        Samples of an array-API namespace (``array_api_dispatch=True``).
    output : {"proba", "margin"}
        Which outputs to predict (``predict_proba`` or ``decision_function``).

    Returns
    -------
    Q : array of shape (n_samples, n_classifiers)
        In ``X``'s namespace and on its device (float64 where the device has it).
    """
    namespace = array_namespace(X)
    xp, n = namespace.xp, num_samples(X)
    dtype = namespace.float_dtype(np.float64)
    columns = [_device_output(est, X, output, l, n, namespace) for l, est in enumerate(estimators)]
    Q = xp.stack([xp.astype(c, dtype) for c in columns], axis=1)
    lo, hi = namespace.to_host(xp.min(Q, axis=0)), namespace.to_host(xp.max(Q, axis=0))
    _check_ranges(lo, hi, estimators, output, list(range(len(estimators))))
    return Q


def _device_output(estimator, X, output, index, n, namespace):
    """:func:`_predict_binary` on ``X``'s device: the column, checked for its shape and
    for being an array of ``X``'s namespace (not computed elsewhere)."""
    name = f"binary classifier {index} ({type(estimator).__name__})"
    method = "predict_proba" if output == "proba" else "decision_function"
    values = getattr(estimator, method)(X)
    if array_namespace(values) is None or array_namespace(values).xp is not namespace.xp:
        raise ValueError(
            f"{name} returned {method} as {type(values).__name__}, not an array of X's "
            "namespace: it does not compute on X's device."
        )
    shape = tuple(values.shape)
    if output == "proba":
        if len(shape) != 2 or shape[1] != 2:
            raise ValueError(
                f"{name} returned predict_proba of shape {shape}; expected (n_samples, 2)."
            )
        values = values[:, 1]  # the larger class label is the positive side
    elif len(shape) == 2 and shape[1] == 1:
        values = values[:, 0]
    if values.ndim != 1 or values.shape[0] != n:
        raise ValueError(
            f"{name} returned {method} of shape {shape}; expected one output per sample ({n})."
        )
    return values


def _fold_binary(estimator, X, y, column, train, test, output, seed, index, fit_params, keep):
    """Fit column ``index``'s binary on the fold's ``train`` rows, predict its ``test``
    rows: ``(binary or None, outputs)``. Only the rows the column uses are taken from
    ``X`` (a one-vs-one column uses a few classes' rows of the fold)."""
    rows = train[column[y[train]] != 0]
    params = check_method_params(X, params=fit_params or {}, indices=rows)
    est = _fit_binary(estimator, take_rows(X, rows), y[rows], column, seed, params)
    return (est if keep else None), _predict_binary(est, take_rows(X, test), output, index)


def starts_folds_warm(estimator):
    """Whether a column's fold binaries of ``estimator`` (one learner, or one per
    column) are fitted in turn, each starting from the previous fold's solution.

    Only for ``LogisticRegression`` (not its subclasses) with a solver that honours
    ``warm_start``: its problem is convex with one solution, so a start only moves
    where the solver stops within its ``tol`` (a learner whose ``warm_start`` adds
    trees or epochs would change its model). The folds share most of their rows, so
    the previous fold's coefficients are close. On letter's five folds
    (``benchmarks/studies/time_fold_chain.py``): 19.2 -> 11.8 L-BFGS iterations per one-vs-one
    binary, 20.8 -> 11.5 per one-vs-rest one, the fold binaries 0.71x and 0.65x the
    time, the outputs as far from the optimum as the independent fits'.

    Parameters
    ----------
    estimator : classifier, or list of classifiers
        The binary learner, or one learner per code column.

    Returns
    -------
    bool
        True when every learner is such a ``LogisticRegression``.
    """
    learners = estimator if isinstance(estimator, (list, tuple)) else [estimator]
    return all(
        type(learner) is LogisticRegression and learner.solver != "liblinear"
        for learner in learners
    )


def _fold_chain(estimator, X, y, column, splits, seed, fit_params):
    """Column ``column``'s binary on every fold's training rows in turn, each refitting a
    copy of the previous fold's with ``warm_start`` (see :func:`starts_folds_warm`): the
    fitted binaries, one per fold, with the learner's own ``warm_start``. They predict
    their test rows together afterwards, fold by fold (:func:`fold_binaries`)."""
    done, previous = [], None
    for train, _ in splits:
        rows = train[column[y[train]] != 0]
        params = check_method_params(X, params=fit_params or {}, indices=rows)
        warm = _warm_start_from(previous)
        # a warm copy's parameters are those the first fold's fit validated (and
        # warm_start=True): not checked again, since on small sets that check is a
        # visible share of each fold's fit
        with nullcontext() if warm is None else config_context(skip_parameter_validation=True):
            est = _fit_binary(
                estimator, take_rows(X, rows), y[rows], column, seed, params, warm, copy=False
            )
        previous = _as_learner(est, estimator, warm)
        done.append(previous)
    return done


def _batched(estimator, X, y, code, trains, seeds, fit_params, progress, warm=None):
    """Every column's binary on each part of ``trains`` (one list per part), trained
    together by :func:`~convexagg.batched_logistic.fit_logistic_binaries` when the
    learners qualify (:func:`~convexagg.batched_logistic.batched_columns`), else None.
    The binaries it leaves are fitted one by one here (``warm``: a single part's)."""
    M = code.shape[1]
    learners = [_learner(estimator, l) for l in range(M)]
    params = [_params_of(fit_params, l) or {} for l in range(M)]
    namespace = array_namespace(X)
    on_device = []  # y on X's device, made for the first binary left on the device

    def fallback(l, train):
        start = None if warm is None else warm[l]
        if namespace is not None:  # as _fold_on_device fits it
            on_device[:] = on_device or [namespace.to_device(y)]
            X_train, y_train = namespace.take(X, train), namespace.take(on_device[0], train)
            train_params = check_method_params(X, params=params[l], indices=train)
            return _fit_binary(
                learners[l], X_train, y_train, code[:, l], seeds[l], train_params, start
            )
        rows = train[code[y[train], l] != 0]
        rows_params = check_method_params(X, params=params[l], indices=rows)
        X_rows = take_rows(X, rows)
        return _fit_binary(learners[l], X_rows, y[rows], code[:, l], seeds[l], rows_params, start)

    parts = fit_logistic_binaries(
        learners,
        X,
        y,
        code,
        trains,
        params,
        make=lambda l: _seeded_clone(learners[l], seeds[l]),
        fallback=fallback,
        starts=warm,
    )
    if parts is not None and progress is not None:
        for _ in range(len(trains) * M):
            progress()
    return parts


def _largest_first(y, code):
    """The code columns by the rows their binary problems use, most first (ties in column
    order): parallel workers given the long tasks first finish together. One-vs-rest
    columns use every row, one-vs-one columns two classes'; in column order the long ones
    would come last, after joblib had grown its batches on the short ones."""
    counts = np.bincount(y, minlength=code.shape[0])
    rows = (code != 0).T.astype(np.int64) @ counts
    return np.argsort(-rows, kind="stable")


def _warm_start_from(previous):
    """A copy of the previous fold's binary that starts its fit from its solution (None
    for the first fold, or after a one-sided fold's constant).

    A shallow copy, its ``warm_start`` set as an attribute: the chain is for
    ``LogisticRegression`` itself (:func:`starts_folds_warm`), whose ``fit`` assigns new
    arrays to its fitted attributes and writes into none of the previous ones, and
    ``warm_start`` is a plain parameter (``set_params`` would read every parameter's
    signature for it): far cheaper than ``deepcopy`` and ``set_params``, and a fit makes
    one such copy per fold and column."""
    if previous is None or isinstance(previous, ConstantBinaryPredictor):
        return None
    warm = _copy.copy(previous)
    warm.warm_start = True
    return warm


def _as_learner(est, learner, warm):
    """``est`` with the learner's own ``warm_start`` back, once fitted from ``warm``."""
    if warm is None or isinstance(est, ConstantBinaryPredictor):
        return est
    est.warm_start = learner.warm_start
    return est


def fold_binaries(
    estimator,
    X,
    y,
    code,
    splits,
    output,
    n_jobs=None,
    seeds=None,
    fit_params=None,
    keep=True,
    progress=None,
):
    """Train binaries on each fold's training rows and predict its test rows.

    Parameters
    ----------
    estimator : classifier, or list of classifiers
        The binary learner, or one learner per code column.
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
        Training samples.
    y : ndarray of shape (n_samples,)
        Integer class indices.
    code : ndarray of shape (n_classes, n_classifiers)
        The code matrix; column ``l`` defines binary problem ``l``.
    splits : list of (train, test) index arrays
        A row may be in at most one test part; rows in none get no output.
    output : {"proba", "margin"}
        Which outputs to predict.
    n_jobs : int, default=None
        Parallel jobs (joblib).
    seeds : list of int or None, default=None
        One seed per column; column ``l`` gets the same seed in every fold.
    fit_params : dict or list of dict, default=None
        Passed to the learners' ``fit`` on each fold's training rows.
    keep : bool, default=True
        Return the fitted binaries (an ensemble member per fold), not only the outputs.
    progress : callable, default=None
        Called with no argument as each binary finishes (fold by fold, column by
        column; column by column, fold by fold where :func:`starts_folds_warm`).

    Returns
    -------
    members : list of lists of fitted binaries, or None
        One list per fold (None without ``keep``).
    Q : ndarray of shape (n_samples, n_classifiers)
        Out-of-fold outputs (zeros on rows that are in no test part).
    covered : ndarray of bool, shape (n_samples,)
        The rows with an output.
    """
    n = num_samples(X)
    covered = np.zeros(n, dtype=bool)
    for f, (train, test) in enumerate(splits):
        if covered[test].any():
            raise ValueError(
                "the cross-validation splits put a sample in the test part of more than one "
                "split; the out-of-fold outputs need each sample at most once (a KFold-like "
                "partition or a single held-out part)."
            )
        covered[test] = True
        _warn_one_sided(y[train], code, where=f" in cross-validation fold {f}")
    M = code.shape[1]
    seeds = [None] * M if seeds is None else seeds
    namespace = array_namespace(X)
    if namespace is not None:
        members, Q = _fold_on_device(
            estimator, X, y, code, splits, output, seeds, fit_params, keep, progress, namespace
        )
        return members, Q, covered
    trains = [train for train, _ in splits]
    members = _batched(estimator, X, y, code, trains, seeds, fit_params, progress)
    if members is None and starts_folds_warm(estimator):
        order = _largest_first(y, code)
        tasks = (
            delayed(_fold_chain)(
                _learner(estimator, l),
                X,
                y,
                code[:, l],
                splits,
                seeds[l],
                _params_of(fit_params, l),
            )
            for l in order
        )
        each = None if progress is None else _repeated(progress, len(splits))
        chains = _parallel(n_jobs, tasks, each)
        chains = [chains[i] for i in np.argsort(order)]  # back in column order
        members = [[chain[f] for chain in chains] for f in range(len(splits))]
    if members is not None:
        Q = np.zeros((n, M))
        for fold, (_, test) in zip(members, splits):
            Q[test] = predict_binaries(fold, take_rows(X, test), output)
        return (members if keep else None), Q, covered
    tasks = (
        delayed(_fold_binary)(
            _learner(estimator, l),
            X,
            y,
            code[:, l],
            train,
            test,
            output,
            seeds[l],
            l,
            _params_of(fit_params, l),
            keep,
        )
        for train, test in splits
        for l in range(M)
    )
    results = _parallel(n_jobs, tasks, progress)
    Q = np.zeros((n, M))
    members = [] if keep else None
    for f, (_, test) in enumerate(splits):
        fold = results[f * M : (f + 1) * M]
        for l, (_, column) in enumerate(fold):
            Q[test, l] = column
        if keep:
            members.append([est for est, _ in fold])
    return members, Q, covered


def _fold_on_device(
    estimator, X, y, code, splits, output, seeds, fit_params, keep, progress, namespace
):
    """:func:`fold_binaries` on ``X``'s device, one binary after another: each fold's
    rows are taken once, its outputs stacked there, and ``Q`` assembled there; a
    column's binary starts from its previous fold's where :func:`starts_folds_warm`."""
    y_device = namespace.to_device(y)
    members, parts = [], []
    chained = starts_folds_warm(estimator)
    previous = [None] * code.shape[1]
    trains = [train for train, _ in splits]
    batched = _batched(estimator, X, y, code, trains, seeds, fit_params, progress)
    for f, (train, test) in enumerate(splits):
        fold = None if batched is None else batched[f]
        if fold is None:  # one binary after another
            fold = []
            X_train, y_train = namespace.take(X, train), namespace.take(y_device, train)
            for l in range(code.shape[1]):
                params = check_method_params(
                    X, params=_params_of(fit_params, l) or {}, indices=train
                )
                learner, warm = _learner(estimator, l), None
                if chained:
                    warm = _warm_start_from(previous[l])
                est = _fit_binary(learner, X_train, y_train, code[:, l], seeds[l], params, warm)
                previous[l] = _as_learner(est, learner, warm)
                fold.append(previous[l])
                if progress is not None:
                    progress()
        parts.append(predict_binaries_on_device(fold, namespace.take(X, test), output))
        members.append(fold)
    Q = namespace.place_rows(parts, [test for _, test in splits], num_samples(X))
    return (members if keep else None), Q


def out_of_fold_outputs(
    estimator, X, y, code, cv, output, n_jobs=None, seeds=None, fit_params=None
):
    """Binary outputs of every sample from binaries trained without its fold.

    Parameters
    ----------
    estimator : classifier, or list of classifiers
        The binary learner, or one learner per code column.
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
        Training samples.
    y : ndarray of shape (n_samples,)
        Integer class indices.
    code : ndarray of shape (n_classes, n_classifiers)
        The code matrix; column ``l`` defines binary problem ``l``.
    cv : cross-validation splitter
        Already checked (``sklearn.model_selection.check_cv``); a partition of
        the rows (every row in exactly one test part).
    output : {"proba", "margin"}
        Which outputs to predict.
    n_jobs : int, default=None
        Parallel jobs (joblib).
    seeds : list of int or None, default=None
        One seed per column, the same in every fold.
    fit_params : dict or list of dict, default=None
        Passed to the learners' ``fit`` on each fold's training rows.

    Returns
    -------
    Q : ndarray of shape (n_samples, n_classifiers)
        The out-of-fold outputs.
    """
    splits = cv_splits(cv, X, y, {})
    _, Q, covered = fold_binaries(
        estimator, X, y, code, splits, output, n_jobs, seeds, fit_params, keep=False
    )
    if not covered.all():
        raise ValueError(
            f"cv left {int((~covered).sum())} samples out of every test part; out-of-fold "
            "outputs need a splitter that partitions the samples (KFold-like)."
        )
    return Q
