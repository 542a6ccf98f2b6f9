"""The multiclass reliability diagram: top-label or per class, the calibration
error in the legend."""

from __future__ import annotations

import numpy as np
from sklearn.utils.validation import check_is_fitted

from ..metrics import KINDS, binned_error, check_calibration_inputs, reliability_curve
from .base import (
    axes as _axes,
)
from .base import (
    validate_style_kwargs as _validate_style_kwargs,
)

__all__ = ["ReliabilityDisplay"]

# marker area (points^2) of a reliability bin holding every sample
_BIN_AREA = 400.0


class ReliabilityDisplay:
    """Multiclass reliability diagram.

    ``kind="top_label"`` draws the accuracy of the predicted class against the
    mean confidence (largest probability) in each of ``n_bins`` equal-width
    bins; ``kind="classwise"`` draws one curve per class, the frequency of the
    class against its mean predicted probability. A perfectly calibrated model
    lies on the diagonal. The calibration error of
    :mod:`convexagg.metrics` (top-label or classwise ECE) is in the legend.
    scikit-learn's :class:`~sklearn.calibration.CalibrationDisplay` is the
    binary counterpart.

    Create it with :meth:`from_estimator` or :meth:`from_predictions`.

    Parameters
    ----------
    prob_true : ndarray of shape (n_bins,) or (n_classes, n_bins)
        Accuracy (top-label) or frequency of the class (classwise) in each
        bin; NaN for empty bins. See :func:`convexagg.metrics.reliability_curve`.
    prob_pred : ndarray of shape (n_bins,) or (n_classes, n_bins)
        Mean binned probability in each bin; NaN for empty bins.
    bin_weight : ndarray of shape (n_bins,) or (n_classes, n_bins)
        Share of the samples in each bin.
    kind : {"top_label", "classwise"}, default="top_label"
        What the curves are; the shapes above follow it.
    class_names : array-like of shape (n_classes,), default=None
        Legend labels of the classwise curves; the class indices when None.
    estimator_name : str, default=None
        Shown in the legend; nothing when None.

    Attributes
    ----------
    calibration_error : float
        Top-label ECE, or classwise ECE (the mean of ``class_errors``).
    class_errors : ndarray of shape (n_classes,) or None
        Calibration error of each class (classwise only).
    lines_ : list of matplotlib Line2D
        The curves, one per class for ``kind="classwise"``.
    bin_markers_ : list of matplotlib PathCollection or None
        The discs of the bins' shares of the samples, one collection per curve.
    ax_ : matplotlib Axes
    figure_ : matplotlib Figure

    See Also
    --------
    convexagg.metrics.top_label_calibration_error
    convexagg.metrics.classwise_calibration_error

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from convexagg import ConvexAggregationClassifier, ReliabilityDisplay
    >>> X, y = load_iris(return_X_y=True)
    >>> clf = ConvexAggregationClassifier().fit(X, y)
    >>> disp = ReliabilityDisplay.from_estimator(clf, X, y)  # doctest: +SKIP
    """

    def __init__(
        self,
        prob_true,
        prob_pred,
        bin_weight,
        *,
        kind="top_label",
        class_names=None,
        estimator_name=None,
    ):
        if kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS}; got {kind!r}.")
        self.prob_true = np.asarray(prob_true, dtype=np.float64)
        self.prob_pred = np.asarray(prob_pred, dtype=np.float64)
        self.bin_weight = np.asarray(bin_weight, dtype=np.float64)
        expected_ndim = 1 if kind == "top_label" else 2
        if not (self.prob_true.shape == self.prob_pred.shape == self.bin_weight.shape) or (
            self.prob_true.ndim != expected_ndim
        ):
            raise ValueError(
                f"prob_true, prob_pred and bin_weight must have one shape, "
                f"{'(n_bins,)' if expected_ndim == 1 else '(n_classes, n_bins)'} for "
                f"kind={kind!r}; got {self.prob_true.shape}, {self.prob_pred.shape}, "
                f"{self.bin_weight.shape}."
            )
        self.kind = kind
        self.class_names = class_names
        self.estimator_name = estimator_name
        errors = binned_error(self.prob_true, self.prob_pred, self.bin_weight)
        self.calibration_error = float(np.mean(errors))
        self.class_errors = errors if kind == "classwise" else None

    def _curve_labels(self, name):
        """Legend labels of the curves and the legend's title."""
        if self.kind == "top_label":
            label = f"top-label ECE = {self.calibration_error:.3f}"
            return [label if name is None else f"{name}\n{label}"], None  # narrow: fits inside
        names = self.class_names
        names = range(len(self.class_errors)) if names is None else names
        labels = [f"{c}: ECE = {e:.3f}" for c, e in zip(names, self.class_errors)]
        title = f"classwise ECE = {self.calibration_error:.3f}"
        return labels, title if name is None else f"{name}\n{title}"

    def _draw_curves(self, labels, show_bin_weight, kwargs):
        self.lines_, self.bin_markers_ = [], [] if show_bin_weight else None
        curves = zip(*(np.atleast_2d(a) for a in (self.prob_true, self.prob_pred, self.bin_weight)))
        for (true, pred, weight), label in zip(curves, labels):
            nonempty = weight > 0
            style = _validate_style_kwargs({"marker": "s", "markersize": 3, "label": label}, kwargs)
            (line,) = self.ax_.plot(pred[nonempty], true[nonempty], **style)
            self.lines_.append(line)
            if show_bin_weight:  # a bin of few samples must not look like a bin of many
                self.bin_markers_.append(
                    self.ax_.scatter(
                        pred[nonempty],
                        true[nonempty],
                        s=_BIN_AREA * weight[nonempty],
                        color=line.get_color(),
                        alpha=0.3,
                        linewidths=0,
                        clip_on=False,  # the disc of a bin at 0 or 1 is drawn whole
                        label="_bin_weight",
                    )
                )

    def plot(self, *, ax=None, name=None, ref_line=True, show_bin_weight=True, **kwargs):
        """Draw the reliability diagram.

        Parameters
        ----------
        ax : matplotlib Axes, default=None
            Axes to draw on (several estimators' curves can share one); a new
            figure when None. The legend is inside the axes, where it hides the
            fewest points (matplotlib's ``loc="best"``), so a figure saved from
            your own axes keeps the calibration errors it shows.
        name : str, default=None
            Shown in the legend; ``estimator_name`` when None.
        ref_line : bool, default=True
            Draw the diagonal of perfect calibration (once per axes).
        show_bin_weight : bool, default=True
            Draw a disc at each bin, its area proportional to the bin's share
            of the samples, so that sparse bins are seen as such.
        **kwargs : dict
            Passed to :meth:`matplotlib.axes.Axes.plot` for every curve.

        Returns
        -------
        display : ReliabilityDisplay
            This display, drawn (``ax_``, ``figure_`` and the artists set).
        """
        self.ax_, self.figure_ = _axes(self, ax, figsize=(5.6, 5.2))
        name = self.estimator_name if name is None else name
        ref_label = "Perfectly calibrated"
        if ref_line and ref_label not in self.ax_.get_legend_handles_labels()[1]:
            self.ax_.plot([0, 1], [0, 1], "k:", label=ref_label)
        labels, title = self._curve_labels(name)
        self._draw_curves(labels, show_bin_weight, kwargs)
        self._legend(title, show_bin_weight)
        if self.kind == "top_label":
            xlabel, ylabel = "Confidence (largest predicted probability)", "Accuracy"
        else:
            xlabel, ylabel = "Predicted probability of the class", "Frequency of the class"
        self.ax_.set(xlabel=xlabel, ylabel=ylabel, xlim=(-0.02, 1.02), ylim=(-0.02, 1.02))
        self.ax_.set_aspect("equal", adjustable="box")
        return self

    def _legend(self, title, show_bin_weight):
        from matplotlib.lines import Line2D

        handles, labels = self.ax_.get_legend_handles_labels()
        if show_bin_weight:
            disc = dict(marker="o", markersize=9, color="0.5", alpha=0.3, linestyle="none")
            handles.append(Line2D([], [], **disc))
            labels.append("disc area: share of samples")
        # inside the axes: beside them, a figure saved from the user's own axes (without
        # constrained layout) cuts it off, and with it the ECE the legend exists to show
        self.ax_.legend(
            handles,
            labels,
            loc="best",
            title=title,
            fontsize="small",
            title_fontsize="small",
        )

    @classmethod
    def from_predictions(
        cls,
        y_true,
        y_prob,
        *,
        kind="top_label",
        n_bins=15,
        labels=None,
        sample_weight=None,
        name=None,
        ax=None,
        ref_line=True,
        **kwargs,
    ):
        """Reliability diagram of predicted class probabilities.

        Parameters
        ----------
        y_true : array-like of shape (n_samples,)
            True labels.
        y_prob : array-like of shape (n_samples, n_classes)
            Predicted probabilities, one column per class in the sorted order
            of ``labels``; rows sum to 1.
        kind : {"top_label", "classwise"}, default="top_label"
            The confidence curve, or one curve per class.
        n_bins : int, default=15
            Number of equal-width bins of ``[0, 1]``.
        labels : array-like of shape (n_classes,), default=None
            The classes of ``y_prob``'s columns; the sorted unique values of
            ``y_true`` when None (as in :func:`sklearn.metrics.log_loss`).
        sample_weight : array-like of shape (n_samples,), default=None
            Sample weights.
        name : str, default=None
            Shown in the legend.
        ax : matplotlib Axes, default=None
            Axes to draw on; a new figure when None.
        ref_line : bool, default=True
            Draw the diagonal of perfect calibration.
        **kwargs : dict
            Passed to :meth:`plot` (``show_bin_weight``) and on to
            :meth:`matplotlib.axes.Axes.plot` for every curve.

        Returns
        -------
        display : ReliabilityDisplay
            This display, drawn (``ax_``, ``figure_`` and the artists set).
        """
        y, P, w, classes = check_calibration_inputs(y_true, y_prob, labels, sample_weight)
        curves = reliability_curve(
            y, P, kind=kind, n_bins=n_bins, labels=np.arange(classes.size), sample_weight=w
        )
        display = cls(*curves, kind=kind, class_names=classes, estimator_name=name)
        return display.plot(ax=ax, ref_line=ref_line, **kwargs)

    @classmethod
    def from_estimator(
        cls,
        estimator,
        X,
        y,
        *,
        kind="top_label",
        n_bins=15,
        sample_weight=None,
        name=None,
        ax=None,
        ref_line=True,
        **kwargs,
    ):
        """Reliability diagram of a fitted classifier's ``predict_proba`` on ``(X, y)``.

        Parameters
        ----------
        estimator : classifier
            Fitted, with ``predict_proba`` and ``classes_`` (any scikit-learn
            classifier, a pipeline ending in one).
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Samples, best not those it was fitted on.
        y : array-like of shape (n_samples,)
            Their labels.
        kind : {"top_label", "classwise"}, default="top_label"
            The confidence curve, or one curve per class.
        n_bins : int, default=15
            Number of equal-width bins of ``[0, 1]``.
        sample_weight : array-like of shape (n_samples,), default=None
            Sample weights.
        name : str, default=None
            Shown in the legend; the estimator's class name when None.
        ax : matplotlib Axes, default=None
            Axes to draw on; a new figure when None.
        ref_line : bool, default=True
            Draw the diagonal of perfect calibration.
        **kwargs : dict
            Passed to :meth:`plot` (``show_bin_weight``) and on to
            :meth:`matplotlib.axes.Axes.plot` for every curve.

        Returns
        -------
        display : ReliabilityDisplay
            This display, drawn (``ax_``, ``figure_`` and the artists set).
        """
        check_is_fitted(estimator)
        if not hasattr(estimator, "predict_proba"):
            raise TypeError(
                f"{cls.__name__} needs class probabilities: {type(estimator).__name__} has "
                "no predict_proba."
            )
        return cls.from_predictions(
            y,
            estimator.predict_proba(X),
            kind=kind,
            n_bins=n_bins,
            labels=estimator.classes_,
            sample_weight=sample_weight,
            name=type(estimator).__name__ if name is None else name,
            ax=ax,
            ref_line=ref_line,
            **kwargs,
        )
