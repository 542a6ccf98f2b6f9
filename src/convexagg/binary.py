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
values those methods compute one column at a time (letter, 325 one-vs-one
logistic regressions on 18,000 rows: 0.3 s -> 0.01 s).

Seeding: given one seed per column (:func:`column_seeds`), every
``random_state`` parameter of a clone that is left at ``None`` (its own or a
nested one, e.g. inside a pipeline) is set to its column's seed, so randomised
binary learners are reproducible; parameters the user set are never changed.
"""

from __future__ import annotations

import warnings

import numpy as np
from joblib import Parallel, delayed
from sklearn.base import BaseEstimator, clone
from sklearn.linear_model import LogisticRegression
from sklearn.utils import check_random_state
from sklearn.utils.extmath import safe_sparse_dot
from sklearn.utils.validation import _num_samples, validate_data

__all__ = [
    "ConstantBinaryPredictor",
    "binary_output_kind",
    "column_seeds",
    "fit_binaries",
    "fit_predict_binaries",
    "out_of_fold_outputs",
    "predict_binaries",
]


class ConstantBinaryPredictor(BaseEstimator):
    """Stands in for a binary problem whose training subset has at most one side.

    Predicts the fraction of positive targets it saw (0.5 when it saw none);
    its margin is the log-odds of that fraction, clipped to ``[-10, 10]``.
    """

    def fit(self, X, y):
        y = np.asarray(y)
        self.p_ = float(np.mean(y == 1)) if y.size else 0.5
        self.classes_ = np.array([0, 1])
        return self

    def predict_proba(self, X):
        n = _num_samples(X)
        return np.column_stack([np.full(n, 1.0 - self.p_), np.full(n, self.p_)])

    def decision_function(self, X):
        p = min(max(self.p_, 1e-5), 1 - 1e-5)
        return np.full(_num_samples(X), np.clip(np.log(p / (1 - p)), -10.0, 10.0))


def binary_output_kind(estimator):
    """``"proba"`` if ``estimator`` has ``predict_proba``, ``"margin"`` if it has
    ``decision_function``; otherwise a ``TypeError``."""
    if hasattr(estimator, "predict_proba"):
        return "proba"
    if hasattr(estimator, "decision_function"):
        return "margin"
    raise TypeError(
        f"estimator {estimator!r} has neither predict_proba nor decision_function; "
        "a binary classifier giving probabilities or scores is needed."
    )


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
    """One integer seed per code column, or ``None`` for each when ``random_state`` is None."""
    if random_state is None:
        return [None] * n_columns
    rng = check_random_state(random_state)
    return [int(s) for s in rng.randint(np.iinfo(np.int32).max, size=n_columns)]


def _seeded_clone(estimator, seed):
    """``clone(estimator)``, its unset (``None``) ``random_state`` parameters set to ``seed``."""
    est = clone(estimator)
    if seed is not None:
        unset = {
            name: seed
            for name, value in est.get_params(deep=True).items()
            if (name == "random_state" or name.endswith("__random_state")) and value is None
        }
        if unset:
            est.set_params(**unset)
    return est


def _fit_binary(estimator, X, y, column, seed=None):
    rows, target = _binary_problem(y, column)
    if np.unique(target).size < 2:
        return ConstantBinaryPredictor().fit(None, target)
    return _seeded_clone(estimator, seed).fit(X[rows], target)


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
    if values.shape[0] != _num_samples(X):  # before it blames y or fails to broadcast
        raise ValueError(
            f"binary classifier {index} ({type(estimator).__name__}) returned "
            f"{values.shape[0]} outputs for {_num_samples(X)} samples; expected one per sample."
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


def _is_linear_class(cls, output):
    """Whether ``cls``'s output is scikit-learn's linear map of ``X``: the
    ``decision_function`` of ``LinearClassifierMixin`` (and, for probabilities,
    ``LogisticRegression``'s ``predict_proba``, its sigmoid for binary problems)."""
    if getattr(cls, "decision_function", None) is not LogisticRegression.decision_function:
        return False
    return output == "margin" or cls.predict_proba is LogisticRegression.predict_proba


def _is_linear(estimator, output):
    """:func:`_is_linear_class`, fitted on a binary problem."""
    coef = getattr(estimator, "coef_", None)
    return (
        _is_linear_class(type(estimator), output)
        and isinstance(coef, np.ndarray)
        and coef.ndim == 2
        and coef.shape[0] == 1
        and len(getattr(estimator, "classes_", ())) == 2
    )


def _predict_linear(estimators, X, output, indices):
    """Outputs of linear binaries (:func:`_is_linear`) in one product, ``(n, len)``:
    what their ``decision_function`` (``predict_proba[:, 1]``) computes, as
    ``X @ coef.T + intercept`` (then the sigmoid), for all of them at once."""
    X = validate_data(estimators[0], X, accept_sparse="csr", reset=False)
    W = np.concatenate([est.coef_ for est in estimators]).T
    b = np.concatenate([np.ravel(est.intercept_) for est in estimators])
    values = np.asarray(safe_sparse_dot(X, W, dense_output=True), dtype=np.float64)
    values += b
    if output == "proba":  # scipy's expit, 1 / (1 + exp(-x)), with numpy's faster exp
        with np.errstate(over="ignore"):  # exp(-x) = inf gives 0, as expit does
            np.exp(np.negative(values, out=values), out=values)
        values += 1.0
        np.reciprocal(values, out=values)
    _check_outputs(values, estimators, output, indices)
    return values


def fit_binaries(estimator, X, y, code, n_jobs=None, seeds=None):
    """Fit one clone of ``estimator`` per code column.

    Parameters
    ----------
    estimator : classifier
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
    y : ndarray of shape (n_samples,)
        Integer class indices.
    code : ndarray of shape (n_classes, n_classifiers)
    n_jobs : int, default=None
        Parallel jobs (joblib; honours ``joblib.parallel_config``).
    seeds : list of int or None, default=None
        One seed per column for the clone's unset ``random_state`` parameters
        (see :func:`column_seeds`); None leaves them unset.

    Returns
    -------
    list of fitted estimators, one per column.
    """
    _warn_one_sided(y, code)
    seeds = [None] * code.shape[1] if seeds is None else seeds
    return Parallel(n_jobs=n_jobs)(
        delayed(_fit_binary)(estimator, X, y, code[:, l], seeds[l]) for l in range(code.shape[1])
    )


def _fit_predict_binary_all(estimator, X, y, column, output, seed, index):
    est = _fit_binary(estimator, X, y, column, seed)
    return est, _predict_binary(est, X, output, index)


def fit_predict_binaries(estimator, X, y, code, output, n_jobs=None, seeds=None):
    """:func:`fit_binaries`, and each binary's outputs on all of ``X``, in one pass.

    One parallel task per column fits the clone and predicts the training rows
    while it has them, so the estimators and ``X`` are not shipped to the
    workers a second time (the paper's protocol: the weights are fitted on the
    binaries' outputs on their own training data).

    seeds : list of int or None, default=None
        As in :func:`fit_binaries`.

    Returns
    -------
    estimators : list of fitted estimators, one per column
    Q : ndarray of shape (n_samples, n_classifiers)
    """
    if _is_linear_class(type(estimator), output):  # they predict faster together
        estimators = fit_binaries(estimator, X, y, code, n_jobs=n_jobs, seeds=seeds)
        return estimators, predict_binaries(estimators, X, output, n_jobs=n_jobs)
    _warn_one_sided(y, code)
    seeds = [None] * code.shape[1] if seeds is None else seeds
    pairs = Parallel(n_jobs=n_jobs)(
        delayed(_fit_predict_binary_all)(estimator, X, y, code[:, l], output, seeds[l], l)
        for l in range(code.shape[1])
    )
    estimators = [est for est, _ in pairs]
    Q = np.column_stack([col for _, col in pairs]).astype(np.float64, copy=False)
    return estimators, Q


def predict_binaries(estimators, X, output, n_jobs=None):
    """Binary outputs ``Q`` of shape ``(n_samples, n_classifiers)``, checked to be finite
    (and inside ``[0, 1]`` for probabilities). Linear binaries with the same number
    of features predict in one product (see the module docstring), the others in
    parallel, one task each."""
    linear = [l for l, est in enumerate(estimators) if _is_linear(est, output)]
    if len({estimators[l].coef_.shape[1] for l in linear}) != 1 or len(linear) < 2:
        linear = []
    others = sorted(set(range(len(estimators))) - set(linear))
    if linear:
        values = _predict_linear([estimators[l] for l in linear], X, output, linear)
        if not others:
            return values
    Q = np.empty((_num_samples(X), len(estimators)))
    if linear:
        Q[:, linear] = values
    columns = Parallel(n_jobs=n_jobs)(
        delayed(_predict_binary)(estimators[l], X, output, l) for l in others
    )
    for l, column in zip(others, columns):
        Q[:, l] = column
    return Q


def _fit_predict_binary(estimator, X, y, column, train, test, output, seed, index):
    est = _fit_binary(estimator, X[train], y[train], column, seed)
    return _predict_binary(est, X[test], output, index)


def out_of_fold_outputs(estimator, X, y, code, cv, output, n_jobs=None, seeds=None):
    """Binary outputs of every sample from binaries trained without its fold.

    Parameters
    ----------
    cv : cross-validation splitter
        Already checked (``sklearn.model_selection.check_cv``).
    seeds : list of int or None, default=None
        As in :func:`fit_binaries`; column ``l`` gets the same seed in every fold.

    Returns
    -------
    Q : ndarray of shape (n_samples, n_classifiers)
    """
    splits = list(cv.split(X, y))
    for f, (train, _) in enumerate(splits):
        _warn_one_sided(y[train], code, where=f" in cross-validation fold {f}")
    M = code.shape[1]
    seeds = [None] * M if seeds is None else seeds
    columns = Parallel(n_jobs=n_jobs)(
        delayed(_fit_predict_binary)(estimator, X, y, code[:, l], train, test, output, seeds[l], l)
        for train, test in splits
        for l in range(M)
    )
    Q = np.empty((_num_samples(X), M))
    for f, (_, test) in enumerate(splits):
        for l in range(M):
            Q[test, l] = columns[f * M + l]
    return Q
