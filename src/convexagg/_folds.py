"""The folds of every cross-validation inside a fit, made in one place.

Three things split the training rows: the binaries' out-of-fold outputs (``cv``,
:func:`~convexagg._training.out_of_fold` and
:func:`~convexagg.out_of_fold.out_of_fold_outputs`), the choice of ``alpha``
(``alpha_cv`` of :class:`~convexagg.ConvexAggregationClassifierCV`) and the
choice of a penalty of the aggregation among candidate values
(:mod:`convexagg.decoders.selection`). A number of folds means the same in all
three: stratified folds of the shuffled rows, seeded by the fit's fold seed. The
splits are lists, read once from a splitter or an iterable.
"""

from __future__ import annotations

import numbers

import numpy as np
from sklearn.model_selection import KFold, StratifiedKFold, check_cv

__all__ = ["CV_REMEDY", "cv_splits", "shuffled_splits", "stratified_folds"]

#: what the errors of ``cv`` advise
CV_REMEDY = (
    "pass fewer folds (cv=k with k at most the number of samples of the smallest class) "
    "or cv='in_sample' (weights fit on in-sample outputs)"
)


def stratified_folds(n_folds, seed):
    """``n_folds`` stratified folds of the rows shuffled by ``seed``.

    Not scikit-learn's folds in row order: outputs on the folds stand in for
    outputs on new rows, and folds in row order make them depend on how the rows
    were sorted (a file sorted by speaker or enumerating attribute values gives
    folds unlike a random test part; QUALITY.md, "Why the default is what it is").

    Parameters
    ----------
    n_folds : int
        Number of folds.
    seed : int or None
        Shuffles the rows.

    Returns
    -------
    splitter : StratifiedKFold
    """
    return StratifiedKFold(n_folds, shuffle=True, random_state=seed)


def cv_splits(cv, X, y, params, name="cv", remedy=CV_REMEDY, seed=None):
    """The ``(train, test)`` splits of the cv parameter ``name`` on ``(X, y)``, as a list.

    An int is that many :func:`stratified_folds`; a splitter or an iterable of
    splits is read once. The splitter's own errors (e.g. stratified folds with
    more folds than members of every class) are raised naming ``name`` and
    ``remedy``, since the user set ``name``, not scikit-learn's ``n_splits``.

    Parameters
    ----------
    cv : int, cross-validation splitter or iterable of splits
        The parameter's value.
    X : array-like of shape (n_samples, ...)
        What the splitter splits (its rows).
    y : ndarray of shape (n_samples,)
        Class labels (stratification).
    params : dict
        Further parameters of the splitter's ``split`` (e.g. ``groups``).
    name : str, default="cv"
        The parameter, for the messages.
    remedy : str, default=CV_REMEDY
        What the messages advise.
    seed : int or None, default=None
        Shuffles the folds of an int.

    Returns
    -------
    splits : list of (ndarray, ndarray)
        The training and test rows of each fold.
    """
    if isinstance(cv, numbers.Integral) and cv > len(y):
        raise ValueError(
            f"{name}={cv} folds need at least {cv} training samples, got {len(y)}; {remedy}."
        )
    splitter = cv
    if isinstance(cv, numbers.Integral) and not isinstance(cv, bool):
        splitter = stratified_folds(cv, seed)
    try:
        splits = list(check_cv(splitter, y, classifier=True).split(X, y, **params))
    except ValueError as e:
        raise ValueError(
            f"{name}={cv!r} cannot split these {len(y)} samples ({e}); {remedy}."
        ) from e
    if not splits:
        raise ValueError(
            f"{name}={cv!r} gave no splits; an iterator of splits is used up by one fit: "
            "pass a list of (train, test) pairs or a splitter such as KFold."
        )
    return splits


def shuffled_splits(y, n_folds, seed):
    """``n_folds`` shuffled folds of the rows of ``y``, as a list: :func:`stratified_folds`
    when every class present has at least ``n_folds`` rows, else plain shuffled folds
    (a fit's internal choice, which a class too small to stratify must not stop).

    Parameters
    ----------
    y : ndarray of int, shape (n_samples,)
        Class indices.
    n_folds : int
        Number of folds.
    seed : int or None
        Shuffles the rows.

    Returns
    -------
    splits : list of (ndarray, ndarray)
        The training and test rows of each fold.
    """
    counts = np.bincount(y)
    if counts[counts > 0].min() >= n_folds:
        splitter = stratified_folds(n_folds, seed)
    else:
        splitter = KFold(n_folds, shuffle=True, random_state=seed)
    return list(splitter.split(np.empty((len(y), 0)), y))
