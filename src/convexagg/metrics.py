"""Calibration metrics for multiclass class probabilities.

How far predicted probabilities are from the frequencies they claim, measured
by binning, in scikit-learn's metric style (``metric(y_true, y_prob, ...)``,
lower is better):

* :func:`top_label_calibration_error` -- the confidence ECE (Guo et al. 2017):
  bins of the largest probability of each sample, ``|accuracy - mean confidence|``
  per bin weighted by the bin's share of the samples;
* :func:`classwise_calibration_error` -- the classwise ECE (Kull et al. 2019):
  the same for each class ``k`` with ``p_k`` against the frequency of ``y == k``,
  averaged over the classes;
* :func:`reliability_curve` -- the per-bin numbers behind both, for reliability
  diagrams (:class:`convexagg.display.ReliabilityDisplay`).

Bins are ``n_bins`` equal-width intervals of ``[0, 1]`` (15 by default, as in
both papers), closed on the right (``((m - 1) / n_bins, m / n_bins]``, 0 in the
first), as in scikit-learn's ``calibration_curve``.

Inputs follow :func:`sklearn.metrics.log_loss`: the columns of ``y_prob`` are
the classes in sorted order, ``labels`` (by default the sorted unique values of
``y_true``); a 1-D ``y_prob`` is the probability of the second of two classes.

**Brier score.** Not repeated here: scikit-learn's
``brier_score_loss(y_true, y_prob, labels=labels, scale_by_half=False)``
(scikit-learn >= 1.7) is the multiclass Brier score summed over classes, the
paper's MSE. Pass ``scale_by_half=False``: the default ``"auto"`` halves it for
two classes.

References
----------
C. Guo, G. Pleiss, Y. Sun, K. Q. Weinberger. On Calibration of Modern Neural
Networks. ICML 2017.

M. Kull, M. Perello-Nieto, M. Kängsepp, T. Silva Filho, H. Song, P. Flach.
Beyond temperature scaling: Obtaining well-calibrated multiclass probabilities
with Dirichlet calibration. NeurIPS 2019.
"""

from __future__ import annotations

from numbers import Integral

import numpy as np
from sklearn.utils import check_array
from sklearn.utils._param_validation import Interval, StrOptions, validate_params

from .decision.costs import check_cost_matrix
from .validation import check_no_missing_labels, check_sample_weight, encode_labels

__all__ = [
    "KINDS",
    "classwise_calibration_error",
    "expected_cost_score",
    "reliability_curve",
    "top_label_calibration_error",
]

KINDS = ("top_label", "classwise")

_PARAMETERS = {
    "y_true": ["array-like"],
    "y_prob": ["array-like"],
    "n_bins": [Interval(Integral, 1, None, closed="left")],
    "labels": ["array-like", None],
    "sample_weight": ["array-like", None],
}


# ----------------------------------------------------------------------------- inputs


def _check_proba(y_prob):
    """``y_prob`` as a float ``(n_samples, n_classes)`` array of probability rows."""
    P = check_array(y_prob, ensure_2d=False, dtype=(np.float64, np.float32), input_name="y_prob")
    if P.ndim == 1:  # the positive class of a binary problem, as in log_loss
        P = np.column_stack([1.0 - P, P])
    if P.shape[1] < 2:
        raise ValueError(
            f"y_prob must have one column per class (at least 2); got shape {P.shape}."
        )
    if P.min() < 0 or P.max() > 1:
        raise ValueError(
            f"y_prob must hold probabilities in [0, 1]; found min {float(P.min())!r}, "
            f"max {float(P.max())!r}."
        )
    sums = P.sum(axis=1)
    bad = ~np.isclose(sums, 1.0, rtol=np.sqrt(np.finfo(P.dtype).eps), atol=0.0)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(
            f"y_prob rows must sum to 1 (one probability per class); row {i} sums to "
            f"{float(sums[i])!r}."
        )
    return P


def _check_labels(labels, y_true, n_columns):
    """The sorted class labels of ``y_prob``'s columns."""
    if labels is None:
        found = np.unique(y_true)
        if found.size != n_columns:
            raise ValueError(
                f"y_true has {found.size} distinct labels but y_prob has {n_columns} "
                "columns; pass labels=... (one per column, e.g. the classifier's classes_)."
            )
        return found
    labels = np.asarray(labels)
    found = np.unique(labels)
    if labels.ndim != 1 or found.size != labels.size:
        raise ValueError(f"labels must be a 1-D array of distinct labels; got {labels!r}.")
    if found.size != n_columns:
        raise ValueError(
            f"labels has {found.size} classes but y_prob has {n_columns} columns; "
            "they must match (one column per class, in sorted order)."
        )
    return found


def check_calibration_inputs(y_true, y_prob, labels=None, sample_weight=None):
    """Validated ``(y, P, w, classes)`` of a calibration metric's inputs.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        True labels.
    y_prob : array-like of shape (n_samples, n_classes) or (n_samples,)
        Predicted probabilities, as in :func:`top_label_calibration_error`.
    labels : array-like of shape (n_classes,), default=None
        The classes of ``y_prob``'s columns; the sorted unique values of
        ``y_true`` when None.
    sample_weight : array-like of shape (n_samples,), default=None
        Sample weights.

    Returns
    -------
    y : ndarray of int, shape (n_samples,)
        Class indices into the columns of ``P``.
    P : ndarray of shape (n_samples, n_classes)
        Probability rows (a 1-D ``y_prob`` made two columns).
    w : ndarray of shape (n_samples,)
        Sample weights (ones when None).
    classes : ndarray of shape (n_classes,)
        The labels of ``P``'s columns, sorted.
    """
    P = _check_proba(y_prob)
    y_true = np.asarray(y_true)
    if y_true.ndim != 1 or y_true.shape[0] != P.shape[0]:
        raise ValueError(
            f"y_true must be 1-D with one label per row of y_prob ({P.shape[0]}); "
            f"got shape {y_true.shape}."
        )
    check_no_missing_labels(y_true, "y_true")
    classes = _check_labels(labels, y_true, P.shape[1])
    y = encode_labels(y_true, classes)
    return y, P, check_sample_weight(sample_weight, P.shape[0]), classes


# ----------------------------------------------------------------------------- bins


def _binned(score, outcome, weight, n_bins):
    """Per bin of ``score``: mean outcome, mean score (NaN if empty), share of weight."""
    edges = np.linspace(0.0, 1.0, n_bins + 1)
    ids = np.searchsorted(edges[1:-1], score)  # side="left": bins closed on the right
    mass = np.bincount(ids, weights=weight, minlength=n_bins)
    with np.errstate(invalid="ignore", divide="ignore"):
        prob_true = np.bincount(ids, weights=weight * outcome, minlength=n_bins) / mass
        prob_pred = np.bincount(ids, weights=weight * score, minlength=n_bins) / mass
    empty = mass == 0
    prob_true[empty] = prob_pred[empty] = np.nan
    return prob_true, prob_pred, mass / weight.sum()


def _curves(y, P, w, kind, n_bins):
    """:func:`reliability_curve` on validated inputs (:func:`check_calibration_inputs`)."""
    if kind == "top_label":
        pred = np.argmax(P, axis=1)
        return _binned(P[np.arange(y.size), pred], pred == y, w, n_bins)
    per_class = [_binned(P[:, k], y == k, w, n_bins) for k in range(P.shape[1])]
    return tuple(np.array(arrays) for arrays in zip(*per_class))


def binned_error(prob_true, prob_pred, bin_weight):
    """Calibration error of each curve of :func:`reliability_curve`.

    ``sum_b bin_weight[b] |prob_true[b] - prob_pred[b]|`` over the last axis;
    empty bins (weight 0, NaN values) count 0.

    Parameters
    ----------
    prob_true, prob_pred, bin_weight : ndarray of shape (..., n_bins)
        As returned by :func:`reliability_curve`.

    Returns
    -------
    error : float or ndarray of shape (...,)
        One error per curve.
    """
    gaps = np.where(bin_weight > 0, np.abs(prob_true - prob_pred), 0.0)
    return np.sum(bin_weight * gaps, axis=-1)


# ----------------------------------------------------------------------------- metrics


# (a named dict: Sphinx's source reader cannot parse ``**`` inside a decorator's call)
_CURVE_PARAMETERS = {**_PARAMETERS, "kind": [StrOptions(set(KINDS))]}


@validate_params(_CURVE_PARAMETERS, prefer_skip_nested_validation=True)
def reliability_curve(
    y_true, y_prob, *, kind="top_label", n_bins=15, labels=None, sample_weight=None
):
    """Observed frequency against mean predicted probability, per equal-width bin.

    The numbers of a multiclass reliability diagram. ``kind="top_label"`` bins
    the confidence ``max_k p_k`` of each sample and compares it with the
    accuracy of ``argmax_k p_k`` in the bin; ``kind="classwise"`` bins each
    class's probability ``p_k`` and compares it with the frequency of
    ``y == k`` in the bin. Empty bins are NaN (their weight is 0), so every
    curve has ``n_bins`` entries.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        True labels.
    y_prob : array-like of shape (n_samples, n_classes) or (n_samples,)
        Predicted probabilities, one column per class in the sorted order of
        ``labels``; rows sum to 1. A 1-D array is the probability of the
        larger of two labels.
    kind : {"top_label", "classwise"}, default="top_label"
        Which probabilities are binned, see above.
    n_bins : int, default=15
        Number of equal-width bins of ``[0, 1]``.
    labels : array-like of shape (n_classes,), default=None
        The classes of ``y_prob``'s columns (sorted). Needed when ``y_true``
        does not hold every class; the sorted unique values of ``y_true`` when
        None.
    sample_weight : array-like of shape (n_samples,), default=None
        Sample weights; integer weights count as repeated rows.

    Returns
    -------
    prob_true : ndarray of shape (n_bins,) or (n_classes, n_bins)
        Per bin: accuracy (top-label) or frequency of the class (classwise).
    prob_pred : ndarray of shape (n_bins,) or (n_classes, n_bins)
        Per bin: the mean of the binned probability.
    bin_weight : ndarray of shape (n_bins,) or (n_classes, n_bins)
        Per bin: its share of the (weighted) samples; each curve sums to 1.

    Examples
    --------
    >>> from convexagg.metrics import reliability_curve
    >>> y_prob = [[0.9, 0.1], [0.8, 0.2], [0.3, 0.7]]
    >>> prob_true, prob_pred, weight = reliability_curve([0, 1, 1], y_prob, n_bins=2)
    >>> prob_true.round(3), prob_pred, weight
    (array([  nan, 0.667]), array([nan, 0.8]), array([0., 1.]))
    """
    y, P, w, _ = check_calibration_inputs(y_true, y_prob, labels, sample_weight)
    return _curves(y, P, w, kind, n_bins)


@validate_params(_PARAMETERS, prefer_skip_nested_validation=True)
def top_label_calibration_error(y_true, y_prob, *, n_bins=15, labels=None, sample_weight=None):
    """Top-label (confidence) expected calibration error.

    ``sum_b (W_b / W) |acc_b - conf_b|`` over ``n_bins`` equal-width bins of the
    confidence ``max_k p_k``, where ``W_b`` is the bin's total sample weight,
    ``acc_b`` the (weighted) accuracy of ``argmax_k p_k`` in it and ``conf_b``
    its mean confidence (Guo et al. 2017). 0 for perfectly calibrated
    confidences; at most 1.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        True labels.
    y_prob : array-like of shape (n_samples, n_classes) or (n_samples,)
        Predicted probabilities, one column per class in the sorted order of
        ``labels``; rows sum to 1. A 1-D array is the probability of the
        larger of two labels.
    n_bins : int, default=15
        Number of equal-width bins of ``[0, 1]``.
    labels : array-like of shape (n_classes,), default=None
        The classes of ``y_prob``'s columns (sorted). Needed when ``y_true``
        does not hold every class; the sorted unique values of ``y_true`` when
        None.
    sample_weight : array-like of shape (n_samples,), default=None
        Sample weights; integer weights count as repeated rows.

    Returns
    -------
    error : float
        In ``[0, 1]``; lower is better.

    See Also
    --------
    classwise_calibration_error : Calibration of every class's probability.
    reliability_curve : The per-bin numbers.

    Examples
    --------
    >>> from convexagg.metrics import top_label_calibration_error
    >>> y_prob = [[0.9, 0.1], [0.8, 0.2], [0.3, 0.7]]
    >>> round(top_label_calibration_error([0, 1, 1], y_prob, n_bins=2), 4)
    0.1333
    """
    y, P, w, _ = check_calibration_inputs(y_true, y_prob, labels, sample_weight)
    return float(binned_error(*_curves(y, P, w, "top_label", n_bins)))


@validate_params(_PARAMETERS, prefer_skip_nested_validation=True)
def classwise_calibration_error(y_true, y_prob, *, n_bins=15, labels=None, sample_weight=None):
    """Classwise expected calibration error (Kull et al. 2019).

    For each class ``k``: ``sum_b (W_bk / W) |freq_bk - mean_bk|`` over
    ``n_bins`` equal-width bins of ``p_k``, where ``freq_bk`` is the
    (weighted) frequency of ``y == k`` in the bin and ``mean_bk`` the bin's
    mean ``p_k``; then the mean over the classes. Unlike the top-label error it
    sees the probabilities of every class, not only the largest. 0 for
    perfectly calibrated probabilities; at most 1.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        True labels.
    y_prob : array-like of shape (n_samples, n_classes) or (n_samples,)
        Predicted probabilities, one column per class in the sorted order of
        ``labels``; rows sum to 1. A 1-D array is the probability of the
        larger of two labels.
    n_bins : int, default=15
        Number of equal-width bins of ``[0, 1]``.
    labels : array-like of shape (n_classes,), default=None
        The classes of ``y_prob``'s columns (sorted). Needed when ``y_true``
        does not hold every class; the sorted unique values of ``y_true`` when
        None.
    sample_weight : array-like of shape (n_samples,), default=None
        Sample weights; integer weights count as repeated rows.

    Returns
    -------
    error : float
        In ``[0, 1]``; lower is better.

    See Also
    --------
    top_label_calibration_error : Calibration of the confidence only.
    reliability_curve : The per-bin numbers.

    Examples
    --------
    >>> from convexagg.metrics import classwise_calibration_error
    >>> y_prob = [[0.9, 0.1], [0.8, 0.2], [0.3, 0.7]]
    >>> round(classwise_calibration_error([0, 1, 1], y_prob, n_bins=2), 4)
    0.3333
    """
    y, P, w, _ = check_calibration_inputs(y_true, y_prob, labels, sample_weight)
    return float(np.mean(binned_error(*_curves(y, P, w, "classwise", n_bins))))


# ----------------------------------------------------------------------------- decisions


@validate_params(
    {
        "y_true": ["array-like"],
        "y_pred": ["array-like"],
        "cost_matrix": ["array-like"],
        "labels": ["array-like", None],
        "sample_weight": ["array-like", None],
    },
    prefer_skip_nested_validation=True,
)
def expected_cost_score(y_true, y_pred, *, cost_matrix, labels=None, sample_weight=None):
    """Mean realised cost of decisions under a cost matrix (lower is better).

    The (weighted) mean of ``cost_matrix[true class, predicted class]``: an
    estimate of the expected cost of the decision rule on the distribution the
    samples come from. The decisions of
    :class:`convexagg.decision.CostSensitiveClassifier` minimise its expectation
    under the model's probabilities. As a scorer:
    ``make_scorer(expected_cost_score, greater_is_better=False, cost_matrix=C)``.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        True labels.
    y_pred : array-like of shape (n_samples,)
        Predicted labels.
    cost_matrix : array-like of shape (n_classes, n_classes)
        ``cost_matrix[i, j]``: the cost of predicting ``labels[j]`` when the true
        class is ``labels[i]``; finite, non-negative, not all zero (see
        :func:`convexagg.decision.check_cost_matrix`).
    labels : array-like of shape (n_classes,), default=None
        The classes of the cost matrix's rows and columns, sorted; the sorted
        unique values of ``y_true`` and ``y_pred`` when None.
    sample_weight : array-like of shape (n_samples,), default=None
        Sample weights.

    Returns
    -------
    cost : float
        The mean cost per sample.
    """
    y_true, y_pred = np.asarray(y_true), np.asarray(y_pred)
    if y_true.ndim != 1 or y_pred.shape != y_true.shape:
        raise ValueError(
            f"y_true and y_pred must be 1-D with one label per sample; got shapes "
            f"{y_true.shape} and {y_pred.shape}."
        )
    if labels is None:
        classes = np.unique(np.concatenate([y_true, y_pred]))
    else:
        classes = np.asarray(labels)
        if classes.ndim != 1 or np.unique(classes).size != classes.size:
            raise ValueError(f"labels must be a 1-D array of distinct labels; got {labels!r}.")
        if np.any(np.sort(classes) != classes):
            raise ValueError(f"labels must be sorted (the order of classes_); got {labels!r}.")
    C = check_cost_matrix(cost_matrix, classes.size)
    cost = C[encode_labels(y_true, classes), encode_labels(y_pred, classes, "y_pred")]
    return float(np.average(cost, weights=check_sample_weight(sample_weight, cost.size)))
