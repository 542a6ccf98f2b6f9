"""Training the binary problems a code matrix defines, and collecting their outputs.

Column ``l`` of the code trains one clone of the user's estimator on the samples
whose class the column uses (``code[y, l] != 0``) with target ``1`` for the
positive side and ``0`` for the negative side. Its output on a sample is the
probability of the positive side (``predict_proba``) or, for learners without
``predict_proba``, the margin (``decision_function``, positive = positive side).
"""

from __future__ import annotations

import warnings

import numpy as np
from joblib import Parallel, delayed
from sklearn.base import BaseEstimator, clone
from sklearn.utils.validation import _num_samples

__all__ = [
    "ConstantBinaryPredictor",
    "binary_output_kind",
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


def _fit_binary(estimator, X, y, column):
    rows, target = _binary_problem(y, column)
    if np.unique(target).size < 2:
        return ConstantBinaryPredictor().fit(None, target)
    return clone(estimator).fit(X[rows], target)


def _predict_binary(estimator, X, output):
    if output == "proba":
        proba = estimator.predict_proba(X)
        return proba[:, list(estimator.classes_).index(1)]
    return np.ravel(estimator.decision_function(X))


def fit_binaries(estimator, X, y, code, n_jobs=None):
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

    Returns
    -------
    list of fitted estimators, one per column.
    """
    _warn_one_sided(y, code)
    return Parallel(n_jobs=n_jobs)(
        delayed(_fit_binary)(estimator, X, y, code[:, l]) for l in range(code.shape[1])
    )


def _fit_predict_binary_all(estimator, X, y, column, output):
    est = _fit_binary(estimator, X, y, column)
    return est, _predict_binary(est, X, output)


def fit_predict_binaries(estimator, X, y, code, output, n_jobs=None):
    """:func:`fit_binaries`, and each binary's outputs on all of ``X``, in one pass.

    One parallel task per column fits the clone and predicts the training rows
    while it has them, so the estimators and ``X`` are not shipped to the
    workers a second time (the paper's protocol: the weights are fitted on the
    binaries' outputs on their own training data).

    Returns
    -------
    estimators : list of fitted estimators, one per column
    Q : ndarray of shape (n_samples, n_classifiers)
    """
    _warn_one_sided(y, code)
    pairs = Parallel(n_jobs=n_jobs)(
        delayed(_fit_predict_binary_all)(estimator, X, y, code[:, l], output)
        for l in range(code.shape[1])
    )
    estimators = [est for est, _ in pairs]
    Q = np.column_stack([col for _, col in pairs]).astype(np.float64, copy=False)
    return estimators, Q


def predict_binaries(estimators, X, output, n_jobs=None):
    """Binary outputs ``Q`` of shape ``(n_samples, n_classifiers)``."""
    columns = Parallel(n_jobs=n_jobs)(
        delayed(_predict_binary)(est, X, output) for est in estimators
    )
    return np.column_stack(columns).astype(np.float64, copy=False)


def _fit_predict_binary(estimator, X, y, column, train, test, output):
    est = _fit_binary(estimator, X[train], y[train], column)
    return _predict_binary(est, X[test], output)


def out_of_fold_outputs(estimator, X, y, code, cv, output, n_jobs=None):
    """Binary outputs of every sample from binaries trained without its fold.

    Parameters
    ----------
    cv : cross-validation splitter
        Already checked (``sklearn.model_selection.check_cv``).

    Returns
    -------
    Q : ndarray of shape (n_samples, n_classifiers)
    """
    splits = list(cv.split(X, y))
    for f, (train, _) in enumerate(splits):
        _warn_one_sided(y[train], code, where=f" in cross-validation fold {f}")
    M = code.shape[1]
    columns = Parallel(n_jobs=n_jobs)(
        delayed(_fit_predict_binary)(estimator, X, y, code[:, l], train, test, output)
        for train, test in splits
        for l in range(M)
    )
    Q = np.empty((_num_samples(X), M))
    for f, (_, test) in enumerate(splits):
        for l in range(M):
            Q[test, l] = columns[f * M + l]
    return Q
