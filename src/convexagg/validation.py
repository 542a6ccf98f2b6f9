"""Input checks shared by the estimators, the decoders' objectives, the metrics and
the readers: one home for each, so that every entry point accepts the same inputs
and says the same thing about a bad one.
"""

from __future__ import annotations

import numpy as np
from sklearn.utils.multiclass import type_of_target

from ._sklearn import num_samples

__all__ = [
    "check_class_indices",
    "check_columns_match_code",
    "check_fitted_columns",
    "check_lengths",
    "check_no_missing_labels",
    "check_sample_weight",
    "check_targets",
    "encode_labels",
]

_TARGET_HINTS = {
    "continuous": "its values look continuous (floats that are not whole numbers), "
    "a classifier needs discrete class labels",
    "unknown": "labels must be all strings or all numbers; object arrays of numbers "
    "or of mixed types are refused, as scikit-learn's classifiers refuse them",
}


def check_sample_weight(sample_weight, n_samples, *, allow_zero_sum=False):
    """Validate sample weights: float64 of length ``n_samples``, finite, ``>= 0``.

    Parameters
    ----------
    sample_weight : array-like of shape (n_samples,) or None
        The weights; ones when None.
    n_samples : int
        Number of samples.
    allow_zero_sum : bool, default=False
        Accept weights that are all 0 (one block of rows among several, whose
        sum is taken over all blocks); refused otherwise, since a weighted mean
        over no weight is undefined.

    Returns
    -------
    sample_weight : ndarray of shape (n_samples,)
        The weights as float64 (a new array: the caller's is never changed).

    Raises
    ------
    ValueError
        If the shape is not ``(n_samples,)``, a weight is negative, NaN or
        infinite, or (unless ``allow_zero_sum``) every weight is 0.
    """
    if sample_weight is None:
        return np.ones(n_samples)
    s = np.array(sample_weight, dtype=np.float64)
    if s.shape != (n_samples,):
        raise ValueError(
            f"sample_weight must have shape ({n_samples},), one weight per sample; "
            f"got shape {s.shape}."
        )
    bad = ~np.isfinite(s) | (s < 0)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(
            f"sample_weight must be finite and >= 0; sample_weight[{i}] is {float(s[i])!r}."
        )
    if not allow_zero_sum and not s.max(initial=0.0) > 0:
        raise ValueError(
            "sample_weight sums to 0: every weight is zero; at least one sample needs a "
            "positive weight (a positive sum)."
        )
    return s


def check_lengths(X, y):
    """Raise a ``ValueError`` if ``X`` and ``y`` do not have one row per sample.

    Checked before anything else, so that the message names the mismatch rather
    than what it breaks later; inputs whose length cannot be read pass (the full
    validation names what is wrong with them).

    Parameters
    ----------
    X : array-like
        The features.
    y : array-like
        The labels.
    """
    try:
        n_X, n_y = num_samples(X), num_samples(y)
    except TypeError:
        return  # malformed input: validate_data names the problem
    if n_X != n_y:
        raise ValueError(
            f"X has {n_X} samples but y has {n_y} labels; they must have the same length."
        )


def check_targets(y):
    """Raise a ``ValueError`` unless ``y`` holds class labels, saying what is wrong.

    Like scikit-learn's ``check_classification_targets`` (same message prefix,
    which its estimator checks look for), and naming the problem: a missing
    label (NaN, None), mixed label types, continuous values.

    Parameters
    ----------
    y : array-like of shape (n_samples,)
        The labels.
    """
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
    flat = np.ravel(y)
    if np.issubdtype(flat.dtype, np.floating) and not np.isfinite(flat).all():
        i = int(np.flatnonzero(~np.isfinite(flat))[0])
        what = "NaN" if np.isnan(flat[i]) else "infinity"
        raise ValueError(f"Input y contains {what} (y[{i}]); every sample needs a class label.")
    y_type = type_of_target(y, input_name="y")
    if y_type not in ("binary", "multiclass"):
        hint = _TARGET_HINTS.get(y_type, "y must be 1-D with one class label per sample")
        raise ValueError(f"Unknown label type: {y_type!r}. y must hold class labels: {hint}.")


def check_no_missing_labels(y, name="y"):
    """Raise a ``ValueError`` naming the first missing label (NaN or None) of ``y``.

    Checked before the labels are counted: NaN is a distinct value to
    ``np.unique``, which would blame the count instead.

    Parameters
    ----------
    y : array-like
        The labels.
    name : str, default="y"
        How the message names ``y``.
    """
    flat = np.ravel(y)
    if flat.dtype == object:
        missing = np.array([v is None or (isinstance(v, float) and v != v) for v in flat], bool)
    elif np.issubdtype(flat.dtype, np.floating):
        missing = np.isnan(flat)
    else:
        return
    if missing.any():
        i = int(np.flatnonzero(missing)[0])
        raise ValueError(
            f"{name} contains NaN or None ({name}[{i}]); every sample needs a class label."
        )


def check_columns_match_code(Q, code):
    """Raise a ``ValueError`` unless ``Q`` has one column per column of ``code``.

    Parameters
    ----------
    Q : array-like of shape (n_samples, n_classifiers)
        Binary outputs (anything with a ``shape``: a NumPy or Dask array).
    code : ndarray of shape (n_classes, n_classifiers)
        The code matrix.
    """
    if Q.shape[1] != code.shape[1]:
        raise ValueError(
            f"Q has {Q.shape[1]} columns but the code matrix has {code.shape[1]} "
            "classifiers (columns); they must match."
        )


def check_fitted_columns(Q, n_classifiers, name="Q"):
    """Raise a ``ValueError`` unless ``Q`` has the ``n_classifiers`` columns a decoder
    was fitted with.

    Parameters
    ----------
    Q : array-like of shape (n_samples, n_classifiers)
        Binary outputs or their log-odds (anything with a ``shape``).
    n_classifiers : int
        The fitted decoder's number of classifiers (code columns).
    name : str, default="Q"
        What the message calls ``Q``.
    """
    if Q.shape[1] != n_classifiers:
        raise ValueError(
            f"{name} has {Q.shape[1]} columns but the decoder was fitted with "
            f"{n_classifiers} classifiers."
        )


def check_class_indices(y, n_classes):
    """Raise a ``ValueError`` unless ``y`` holds integer class indices ``0..n_classes-1``.

    Parameters
    ----------
    y : ndarray
        The labels as class indices (an empty array passes: a block with no rows).
    n_classes : int
        Number of classes (rows of the code).
    """
    found = None
    if y.size and not np.issubdtype(y.dtype, np.integer):
        found = f"dtype {y.dtype}"
    elif y.size and (y.min() < 0 or y.max() >= n_classes):
        found = f"labels in [{y.min()}, {y.max()}]"
    if found is not None:
        raise ValueError(
            f"y must hold integer class indices in 0..n_classes-1 (n_classes={n_classes} "
            f"rows of the code); found {found}."
        )


def encode_labels(y, classes, name="y_true"):
    """Map the labels ``y`` to their indices in the sorted array ``classes``.

    Parameters
    ----------
    y : array-like of shape (n_samples,)
        Labels, each one of ``classes``.
    classes : ndarray of shape (n_classes,)
        Sorted distinct labels (a classifier's ``classes_``).
    name : str, default="y_true"
        How errors name ``y``.

    Returns
    -------
    indices : ndarray of int, shape (n_samples,)
        ``classes[indices] == y``.
    """
    y = np.asarray(y)
    if y.ndim != 1:
        raise ValueError(f"{name} must be 1-D (one label per sample); got shape {y.shape}.")
    check_no_missing_labels(y, name)
    unknown = np.setdiff1d(y, classes)
    if unknown.size:
        raise ValueError(
            f"{name} contains labels that are not among the classes {classes.tolist()}: "
            f"{unknown[:5].tolist()}."
        )
    return np.searchsorted(classes, y)
