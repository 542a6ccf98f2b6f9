"""Training the binary problems a code matrix defines, and collecting their outputs.

Column ``l`` of the code trains one clone of the user's estimator on the samples
whose class the column uses (``code[y, l] != 0``) with target ``1`` for the
positive side and ``0`` for the negative side. Its output on a sample is the
probability of the positive side (``predict_proba``) or, for learners without
``predict_proba``, the margin (``decision_function``, positive = positive side).

Outputs are checked as they come back: a binary classifier that returns NaN or
infinite values, probabilities outside ``[0, 1]`` or an output of the wrong
shape is named in a ``ValueError`` instead of corrupting the aggregation.

Linear binaries predict in one product (:mod:`convexagg.linear_outputs`); the
binaries of cross-validation folds and their out-of-fold outputs are
:mod:`convexagg.out_of_fold`'s.

Array API: under ``sklearn.set_config(array_api_dispatch=True)`` an ``X`` of
another array library (PyTorch, CuPy, ...) stays on its device. Each column's
rows and 0/1 targets are built there from the class indices moved there once,
the learners (which must declare scikit-learn's array API support, see
:func:`convexagg._array_api.check_array_api_learners`) are fitted on those
arrays, and ``Q`` is stacked there (:func:`predict_binaries_on_device`). The
binaries are trained one after another in the calling process: joblib workers
would copy the device arrays, and one device runs one fit at a time anyway.

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
import warnings

import numpy as np
from joblib import Parallel, delayed
from scipy.sparse import issparse
from sklearn.base import BaseEstimator, clone
from sklearn.linear_model import LogisticRegression
from sklearn.utils import check_random_state

from ._array_api import array_namespace, on_host, take_rows
from ._sklearn import check_method_params, num_samples
from .batched_logistic import fit_logistic_binaries
from .linear_outputs import is_linear_learner, linear_stack, predict_linear, scaler_mean
from .output_checks import check_outputs, check_ranges

__all__ = [
    "ConstantBinaryPredictor",
    "binary_output_kind",
    "column_seeds",
    "fit_binaries",
    "fit_predict_binaries",
    "predict_binaries",
    "predict_binaries_on_device",
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


def column_params(fit_params, column):
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


def warn_one_sided(y, code, where=""):
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


def seeded_clone(estimator, seed):
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


def column_learner(estimator, column):
    """The learner of code column ``column``: ``estimator`` itself, or its entry when it
    is a list of learners, one per column."""
    return estimator[column] if isinstance(estimator, (list, tuple)) else estimator


def fit_binary(estimator, X, y, column, seed=None, fit_params=None, warm=None, copy=True):
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
        est = seeded_clone(estimator, seed)
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


def predict_binary(estimator, X, output, index=0):
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
    check_outputs(values[:, None], [estimator], output, [index])
    return values


def _per_column(code, seeds, warm):
    M = code.shape[1]
    return [None] * M if seeds is None else seeds, [None] * M if warm is None else warm


def run_parallel(n_jobs, tasks, progress=None):
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
    warn_one_sided(y, code)
    seeds, warm = _per_column(code, seeds, warm)
    every = [np.arange(len(y))]
    batched = batched_binaries(estimator, X, y, code, every, seeds, fit_params, progress, warm)
    if batched is not None:
        return batched[0]
    namespace = array_namespace(X)
    if namespace is not None:
        y = namespace.to_device(y)  # once: every column's targets are built from it there
    tasks = (
        delayed(fit_binary)(
            column_learner(estimator, l),
            X,
            y,
            code[:, l],
            seeds[l],
            column_params(fit_params, l),
            warm[l],
        )
        for l in range(code.shape[1])
    )
    if namespace is not None:
        return _in_turn(tasks, progress)
    return run_parallel(n_jobs, tasks, progress)


def repeated_progress(progress, times):
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
    est = fit_binary(estimator, X, y, column, seed, fit_params, warm)
    return est, predict_binary(est, X, output, index)


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
    learners = [column_learner(estimator, l) for l in range(code.shape[1])]
    if array_namespace(X) is not None:  # trained and predicting on X's device
        estimators = fit_binaries(estimator, X, y, code, n_jobs, seeds, fit_params, warm, progress)
        return estimators, predict_binaries_on_device(estimators, X, output)
    if all(is_linear_learner(est, output) for est in learners):  # they predict faster together
        estimators = fit_binaries(estimator, X, y, code, n_jobs, seeds, fit_params, warm, progress)
        return estimators, predict_binaries(estimators, X, output, n_jobs=n_jobs)
    warn_one_sided(y, code)
    seeds, warm = _per_column(code, seeds, warm)
    tasks = (
        delayed(_fit_predict_binary_all)(
            learners[l],
            X,
            y,
            code[:, l],
            output,
            seeds[l],
            l,
            column_params(fit_params, l),
            warm[l],
        )
        for l in range(code.shape[1])
    )
    pairs = run_parallel(n_jobs, tasks, progress)
    estimators = [est for est, _ in pairs]
    Q = np.column_stack([col for _, col in pairs]).astype(np.float64, copy=False)
    return estimators, Q


def predict_binaries(estimators, X, output, n_jobs=None, stacked=None):
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
    stacked : LinearStack, default=None
        ``linear_stack(estimators, output)``
        (:func:`~convexagg.linear_outputs.linear_stack`), as a fitted estimator keeps
        it; computed here when None.

    Returns
    -------
    Q : ndarray of shape (n_samples, n_classifiers)
        Column ``l`` is the output of ``estimators[l]``.
    """
    parts, linear, stack = linear_stack(estimators, output) if stacked is None else stacked
    if issparse(X) and any(scaler_mean(parts[l][0]) is not None for l in linear):
        # a sparse X is not centred (the scalers' own transform refuses it)
        linear = [l for l in linear if scaler_mean(parts[l][0]) is None]
        if len({parts[l][1].coef_.shape[1] for l in linear}) != 1 or len(linear) < 2:
            linear = []
        stack = None
    others = sorted(set(range(len(estimators))) - set(linear))
    if linear:
        chosen = [estimators[l] for l in linear]
        values = predict_linear(chosen, [parts[l] for l in linear], X, output, linear, stack)
        if not others:
            return values
    Q = np.empty((num_samples(X), len(estimators)))
    if linear:
        Q[:, linear] = values
    columns = Parallel(n_jobs=n_jobs)(
        delayed(predict_binary)(estimators[l], X, output, l) for l in others
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
    check_ranges(lo, hi, estimators, output, list(range(len(estimators))))
    return Q


def _device_output(estimator, X, output, index, n, namespace):
    """:func:`predict_binary` on ``X``'s device: the column, checked for its shape and
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


def batched_binaries(estimator, X, y, code, trains, seeds, fit_params, progress, warm=None):
    """Every column's binary on each part of ``trains`` (one list per part), trained
    together by :func:`~convexagg.batched_logistic.fit_logistic_binaries` when the
    learners qualify (:func:`~convexagg.batched_logistic.batched_columns`), else None.
    The binaries it leaves are fitted one by one here (``warm``: a single part's)."""
    M = code.shape[1]
    learners = [column_learner(estimator, l) for l in range(M)]
    params = [column_params(fit_params, l) or {} for l in range(M)]
    namespace = array_namespace(X)
    on_device = []  # y on X's device, made for the first binary left on the device

    def fallback(l, train):
        start = None if warm is None else warm[l]
        if namespace is not None:  # as _fold_on_device fits it
            on_device[:] = on_device or [namespace.to_device(y)]
            X_train, y_train = namespace.take(X, train), namespace.take(on_device[0], train)
            train_params = check_method_params(X, params=params[l], indices=train)
            return fit_binary(
                learners[l], X_train, y_train, code[:, l], seeds[l], train_params, start
            )
        rows = train[code[y[train], l] != 0]
        rows_params = check_method_params(X, params=params[l], indices=rows)
        X_rows = take_rows(X, rows)
        return fit_binary(learners[l], X_rows, y[rows], code[:, l], seeds[l], rows_params, start)

    parts = fit_logistic_binaries(
        learners,
        X,
        y,
        code,
        trains,
        params,
        make=lambda l: seeded_clone(learners[l], seeds[l]),
        fallback=fallback,
        starts=warm,
    )
    if parts is not None and progress is not None:
        for _ in range(len(trains) * M):
            progress()
    return parts
