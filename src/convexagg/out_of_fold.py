"""Binaries trained on cross-validation folds, and their out-of-fold outputs.

Folds: a ``LogisticRegression`` column's fold binaries are fitted one after another,
each from the previous fold's solution (:func:`starts_folds_warm`); other learners'
are independent tasks, fold by fold.
"""

from __future__ import annotations

import copy as _copy
from contextlib import nullcontext

import numpy as np
from joblib import delayed
from sklearn import config_context
from sklearn.linear_model import LogisticRegression

from ._array_api import array_namespace, take_rows
from ._folds import cv_splits
from ._sklearn import check_method_params, num_samples
from .binary import (
    ConstantBinaryPredictor,
    batched_binaries,
    column_learner,
    column_params,
    fit_binary,
    predict_binaries,
    predict_binaries_on_device,
    predict_binary,
    repeated_progress,
    run_parallel,
    warn_one_sided,
)

__all__ = ["fold_binaries", "out_of_fold_outputs", "starts_folds_warm"]


def _fold_binary(estimator, X, y, column, train, test, output, seed, index, fit_params, keep):
    """Fit column ``index``'s binary on the fold's ``train`` rows, predict its ``test``
    rows: ``(binary or None, outputs)``. Only the rows the column uses are taken from
    ``X`` (a one-vs-one column uses a few classes' rows of the fold)."""
    rows = train[column[y[train]] != 0]
    params = check_method_params(X, params=fit_params or {}, indices=rows)
    est = fit_binary(estimator, take_rows(X, rows), y[rows], column, seed, params)
    return (est if keep else None), predict_binary(est, take_rows(X, test), output, index)


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
            est = fit_binary(
                estimator, take_rows(X, rows), y[rows], column, seed, params, warm, copy=False
            )
        previous = _as_learner(est, estimator, warm)
        done.append(previous)
    return done


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
        warn_one_sided(y[train], code, where=f" in cross-validation fold {f}")
    M = code.shape[1]
    seeds = [None] * M if seeds is None else seeds
    namespace = array_namespace(X)
    if namespace is not None:
        members, Q = _fold_on_device(
            estimator, X, y, code, splits, output, seeds, fit_params, keep, progress, namespace
        )
        return members, Q, covered
    trains = [train for train, _ in splits]
    members = batched_binaries(estimator, X, y, code, trains, seeds, fit_params, progress)
    if members is None and starts_folds_warm(estimator):
        order = _largest_first(y, code)
        tasks = (
            delayed(_fold_chain)(
                column_learner(estimator, l),
                X,
                y,
                code[:, l],
                splits,
                seeds[l],
                column_params(fit_params, l),
            )
            for l in order
        )
        each = None if progress is None else repeated_progress(progress, len(splits))
        chains = run_parallel(n_jobs, tasks, each)
        chains = [chains[i] for i in np.argsort(order)]  # back in column order
        members = [[chain[f] for chain in chains] for f in range(len(splits))]
    if members is not None:
        Q = np.zeros((n, M))
        for fold, (_, test) in zip(members, splits):
            Q[test] = predict_binaries(fold, take_rows(X, test), output)
        return (members if keep else None), Q, covered
    tasks = (
        delayed(_fold_binary)(
            column_learner(estimator, l),
            X,
            y,
            code[:, l],
            train,
            test,
            output,
            seeds[l],
            l,
            column_params(fit_params, l),
            keep,
        )
        for train, test in splits
        for l in range(M)
    )
    results = run_parallel(n_jobs, tasks, progress)
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
    batched = batched_binaries(estimator, X, y, code, trains, seeds, fit_params, progress)
    for f, (train, test) in enumerate(splits):
        fold = None if batched is None else batched[f]
        if fold is None:  # one binary after another
            fold = []
            X_train, y_train = namespace.take(X, train), namespace.take(y_device, train)
            for l in range(code.shape[1]):
                params = check_method_params(
                    X, params=column_params(fit_params, l) or {}, indices=train
                )
                learner, warm = column_learner(estimator, l), None
                if chained:
                    warm = _warm_start_from(previous[l])
                est = fit_binary(learner, X_train, y_train, code[:, l], seeds[l], params, warm)
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
