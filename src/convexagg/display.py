"""Figures of fitted models, in scikit-learn's display style.

Each display holds the numbers it draws. Build it with a class method
(``from_estimator``, ``from_predictions``, ``from_decoder``, ``from_path``),
which computes them and draws, or from the numbers themselves and call
``plot``; ``plot(ax=None, ...)`` draws on ``ax`` (a new figure when None) and
returns the display, with ``ax_``, ``figure_`` and the artists as attributes
(as :class:`sklearn.calibration.CalibrationDisplay` and
:class:`sklearn.metrics.ConfusionMatrixDisplay`):

* :class:`ReliabilityDisplay` -- multiclass reliability diagram, top-label or
  per class, the calibration error (:mod:`convexagg.metrics`) in the legend;
* :class:`WeightsDisplay` -- the learned aggregation weights under the code
  matrix they weigh (and the class intercepts beside it);
* :class:`ConvergenceDisplay` -- the solver's progress from ``history_``;
* :class:`RegularizationPathDisplay` -- weights and accuracy along a path of
  ``alpha`` (the paper's Fig. 3).

matplotlib is imported only when something is drawn; it comes with
``pip install "convexagg[experiments]"``.
"""

from __future__ import annotations

import numpy as np
from sklearn.utils._plotting import _validate_style_kwargs
from sklearn.utils.validation import check_is_fitted

from ._optional import require
from .decoders import ConvexDecoder
from .metrics import KINDS, binned_error, check_calibration_inputs, encode_labels, reliability_curve
from .path import regularization_path

__all__ = [
    "ConvergenceDisplay",
    "RegularizationPathDisplay",
    "ReliabilityDisplay",
    "WeightsDisplay",
]

# code entry -> colour and legend text (ColorBrewer RdBu ends, a light grey between)
_CODE_COLOURS = {-1: "#d6604d", 0: "#e8e8e8", 1: "#4393c3"}
_CODE_NAMES = {1: "+1: positive side", -1: "-1: negative side", 0: "0: not used"}

# marker area (points^2) of a reliability bin holding every sample
_BIN_AREA = 400.0

# history_ key -> legend text of the solvers' convergence measures
_MEASURES = {
    "projected_gradient": "projected gradient norm",
    "residual": "KKT residual norm",
    "gap": "duality gap",
    "best": "best objective - f*",
}


def _axes(display, ax, **subplots):
    """``(ax, figure)``: ``ax``, or the axes of a new figure (``subplots`` keywords;
    constrained layout by default, which keeps twin axes' labels and outer legends in)."""
    plt = require("matplotlib.pyplot", f"{type(display).__name__}.plot", "experiments")
    if ax is None:
        _, ax = plt.subplots(**{"layout": "constrained", **subplots})
    return ax, ax.figure


def _fitted_decoder(estimator, display, attribute=None):
    """The fitted decoder of ``estimator`` (a classifier's ``decoder_``, or a decoder
    itself): a ConvexDecoder, or any decoder that has ``attribute`` when given."""
    check_is_fitted(estimator)
    decoder = getattr(estimator, "decoder_", estimator)
    if attribute is not None and not hasattr(decoder, attribute):
        raise TypeError(
            f"{display} needs a fitted decoder with {attribute} (ConvexDecoder, for one) or "
            f"a classifier whose decoder has it; {type(decoder).__name__} has no {attribute}."
        )
    if attribute is None and not isinstance(decoder, ConvexDecoder):
        raise TypeError(
            f"{display} needs a fitted ConvexDecoder or a classifier whose decoder is one; "
            f"got {type(decoder).__name__}."
        )
    return decoder


def _positive(values):
    """``values`` as floats with the entries a log scale cannot show set to NaN."""
    values = np.asarray(values, dtype=np.float64)
    return np.where(values > 0, values, np.nan)


# ----------------------------------------------------------------------------- reliability


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


# ----------------------------------------------------------------------------- weights


class WeightsDisplay:
    """The learned aggregation weights under the code matrix they weigh.

    The code matrix is an image (a row per class, a column per binary
    classifier; blue ``+1``, red ``-1``, grey ``0``) with a bar chart of the
    weights aligned under its columns, so a classifier the aggregation
    switched off (weight near 0) is seen with the classes it separates. Class
    intercepts, when the model has non-zero ones, are bars beside the rows.

    Create it with :meth:`from_estimator` or :meth:`from_decoder`.

    Parameters
    ----------
    weights : ndarray of shape (n_classifiers,)
        Aggregation weights.
    code : ndarray of shape (n_classes, n_classifiers)
        Code matrix, entries -1, 0, +1.
    intercept : ndarray of shape (n_classes,), default=None
        Class intercepts; not drawn when None.
    class_names : array-like of shape (n_classes,), default=None
        Row labels; the class indices when None.
    estimator_name : str, default=None
        The legend's title.

    Attributes
    ----------
    im_ : matplotlib AxesImage
        The code matrix.
    bars_ : matplotlib BarContainer
        The weights.
    intercept_bars_ : matplotlib BarContainer or None
        The intercepts.
    ax_ : matplotlib Axes
        Axes of the code matrix (the one passed to :meth:`plot`).
    ax_weights_ : matplotlib Axes
        Axes of the weights, below ``ax_``.
    ax_intercept_ : matplotlib Axes or None
        Axes of the intercepts, right of ``ax_``.
    figure_ : matplotlib Figure
    """

    def __init__(self, weights, code, *, intercept=None, class_names=None, estimator_name=None):
        self.weights = np.asarray(weights, dtype=np.float64)
        self.code = np.asarray(code)
        if self.code.ndim != 2 or self.weights.shape != (self.code.shape[1],):
            raise ValueError(
                "weights must have one entry per column of code (n_classes, n_classifiers); "
                f"got weights of shape {self.weights.shape} and code of shape {self.code.shape}."
            )
        # the colour map has three colours: any other entry would be drawn as one of them
        valid = np.isin(self.code, (-1, 0, 1))
        if not valid.all():
            bad = np.ravel(self.code)[np.flatnonzero(~np.ravel(valid))[0]]
            raise ValueError(f"code must hold only -1, 0 and +1 entries; found {bad.item()!r}.")
        self.intercept = None if intercept is None else np.asarray(intercept, dtype=np.float64)
        if self.intercept is not None and self.intercept.shape != (self.code.shape[0],):
            raise ValueError(
                f"intercept must have one entry per class ({self.code.shape[0]}); got shape "
                f"{self.intercept.shape}."
            )
        self.class_names = class_names
        self.estimator_name = estimator_name

    def _draw_code(self, im_kw):
        from matplotlib.colors import ListedColormap
        from matplotlib.patches import Patch

        K, M = self.code.shape
        cmap = ListedColormap([_CODE_COLOURS[v] for v in (-1, 0, 1)])
        style = {"cmap": cmap, "vmin": -1.5, "vmax": 1.5, "aspect": "auto"}
        style = _validate_style_kwargs({**style, "interpolation": "nearest"}, im_kw or {})
        self.im_ = self.ax_.imshow(self.code, **style)
        names = range(K) if self.class_names is None else self.class_names
        self.ax_.set_yticks(np.arange(K), labels=[str(c) for c in names])
        self.ax_.set_ylabel("class")
        self.ax_.tick_params(labelbottom=False)
        if M <= 60 and K <= 60:  # cell borders, where cells are wide enough to see them
            self.ax_.set_xticks(np.arange(M + 1) - 0.5, minor=True)
            self.ax_.set_yticks(np.arange(K + 1) - 0.5, minor=True)
            self.ax_.grid(which="minor", color="white", linewidth=1)
            self.ax_.tick_params(which="minor", length=0)
        handles = [Patch(color=_CODE_COLOURS[v], label=_CODE_NAMES[v]) for v in (1, -1, 0)]
        self.ax_.legend(
            handles=handles,
            loc="lower left",
            bbox_to_anchor=(0.0, 1.01),
            ncol=3,
            frameon=False,
            fontsize="small",
            title=self.estimator_name,
            title_fontsize="small",
            alignment="left",
        )

    def plot(self, *, ax=None, im_kw=None, **kwargs):
        """Draw the code matrix, the weights below it and the intercepts beside it.

        Parameters
        ----------
        ax : matplotlib Axes, default=None
            Axes to draw in; it holds the code matrix and gives room for the
            weights (below) and the intercepts (right). A new figure when None.
        im_kw : dict, default=None
            Passed to :meth:`matplotlib.axes.Axes.imshow` for the code matrix.
        **kwargs : dict
            Passed to :meth:`matplotlib.axes.Axes.bar` for the weights.

        Returns
        -------
        display : WeightsDisplay
            This display, drawn (``ax_``, ``figure_`` and the artists set).
        """
        K, M = self.code.shape
        width = float(np.clip(2.5 + 0.3 * M, 6.4, 14.0))
        # axes_grid1 places the weights and intercepts: tight layout, not constrained
        self.ax_, self.figure_ = _axes(self, ax, figsize=(width, 4.8), layout=None)
        new_figure = ax is None
        from matplotlib.ticker import MaxNLocator
        from mpl_toolkits.axes_grid1 import make_axes_locatable

        divider = make_axes_locatable(self.ax_)
        self.ax_weights_ = divider.append_axes("bottom", size="70%", pad=0.1, sharex=self.ax_)
        self._draw_code(im_kw)
        style = _validate_style_kwargs({"color": "0.35", "width": 0.7}, kwargs)
        self.bars_ = self.ax_weights_.bar(np.arange(M), self.weights, **style)
        self.ax_weights_.set(xlabel="binary classifier (code column)", ylabel="weight")
        self.ax_weights_.xaxis.set_major_locator(MaxNLocator(integer=True, nbins=min(M, 20)))
        self.ax_weights_.axhline(0.0, color="black", linewidth=0.8)
        self.ax_intercept_ = self.intercept_bars_ = None
        if self.intercept is not None:
            self.ax_intercept_ = divider.append_axes("right", size="20%", pad=0.1, sharey=self.ax_)
            self.intercept_bars_ = self.ax_intercept_.barh(
                np.arange(K), self.intercept, height=0.7, color="0.35"
            )
            self.ax_intercept_.axvline(0.0, color="black", linewidth=0.8)
            self.ax_intercept_.set_xlabel("intercept")
            self.ax_intercept_.tick_params(labelleft=False)
        if new_figure:
            self.figure_.tight_layout()
        return self

    @classmethod
    def from_decoder(cls, decoder, *, class_names=None, name=None, ax=None, **kwargs):
        """Weights of a fitted :class:`~convexagg.ConvexDecoder` under its code.

        Parameters
        ----------
        decoder : ConvexDecoder
            Fitted.
        class_names : array-like of shape (n_classes,), default=None
            Row labels; the class indices when None.
        name : str, default=None
            The legend's title.
        ax : matplotlib Axes, default=None
            Axes to draw in; a new figure when None.
        **kwargs : dict
            Passed to :meth:`matplotlib.axes.Axes.bar` for the weights.

        Returns
        -------
        display : WeightsDisplay
            This display, drawn (``ax_``, ``figure_`` and the artists set).
        """
        decoder = _fitted_decoder(decoder, cls.__name__)
        intercept = getattr(decoder, "intercept_", None)
        if intercept is not None and not np.any(intercept):
            intercept = None  # no intercepts fitted: nothing to show
        display = cls(
            decoder.weights_,
            decoder.code_,
            intercept=intercept,
            class_names=class_names,
            estimator_name=name,
        )
        return display.plot(ax=ax, **kwargs)

    @classmethod
    def from_estimator(cls, estimator, *, name=None, ax=None, **kwargs):
        """Weights of a fitted classifier whose decoder is a ConvexDecoder.

        Parameters
        ----------
        estimator : ConvexAggregationClassifier or CodeMatrixClassifier
            Fitted, with a :class:`~convexagg.ConvexDecoder` as ``decoder_``
            (also :class:`~convexagg.ConvexAggregationClassifierCV`); rows are
            labelled by its ``classes_``.
        name : str, default=None
            The legend's title; the estimator's class name when None.
        ax : matplotlib Axes, default=None
            Axes to draw in; a new figure when None.
        **kwargs : dict
            Passed to :meth:`matplotlib.axes.Axes.bar` for the weights.

        Returns
        -------
        display : WeightsDisplay
            This display, drawn (``ax_``, ``figure_`` and the artists set).
        """
        decoder = _fitted_decoder(estimator, cls.__name__)
        return cls.from_decoder(
            decoder,
            class_names=getattr(estimator, "classes_", None),
            name=type(estimator).__name__ if name is None else name,
            ax=ax,
            **kwargs,
        )


# ----------------------------------------------------------------------------- convergence


class ConvergenceDisplay:
    """The solver's progress, iteration by iteration, on a log scale.

    Draws ``f(w_t) - f*``, the objective minus the lowest value recorded (the
    final one for the descent methods; the point at the optimum itself is not
    drawn on a log scale), and the solver's own convergence measures from its
    history: the projected gradient norm (projected Newton), the KKT residual
    norm and the duality gap (interior point), the best objective so far
    (projected subgradient). L-BFGS-B records the objective only.

    Create it with :meth:`from_estimator`, or from a history:
    ``ConvergenceDisplay(decoder.history_).plot()``.

    Parameters
    ----------
    history : dict of array-like
        Per-iteration records with at least ``"objective"`` (a fitted
        decoder's ``history_``, a :class:`~convexagg.solvers.SolverResult`'s
        ``history``); the keys of the measures above are drawn where present.
    solver_name : str, default=None
        Shown in the legend's title.
    estimator_name : str, default=None
        Shown in the legend's title.

    Attributes
    ----------
    suboptimality : ndarray of shape (n_iterations,)
        ``f(w_t) - f*``.
    measures : dict of ndarray
        Legend text -> per-iteration values of the convergence measures.
    lines_ : list of matplotlib Line2D
        The suboptimality first, then the measures.
    ax_ : matplotlib Axes
    figure_ : matplotlib Figure

    Notes
    -----
    For ``ConvexDecoder(formulation="stiffness")`` the history is that of the
    last stage of the continuation in ``tau``.
    """

    def __init__(self, history, *, solver_name=None, estimator_name=None):
        if "objective" not in history:
            raise ValueError(
                "history must hold an 'objective' entry per iteration (a fitted decoder's "
                f"history_); got keys {sorted(history)}."
            )
        self.history = history
        self.solver_name = solver_name
        self.estimator_name = estimator_name
        objective = np.asarray(history["objective"], dtype=np.float64)
        f_star = np.nanmin(objective)
        if "best" in history:
            f_star = min(f_star, np.nanmin(np.asarray(history["best"], dtype=np.float64)))
        self.suboptimality = objective - f_star
        self.measures = {
            text: np.asarray(history[key], dtype=np.float64) - (f_star if key == "best" else 0.0)
            for key, text in _MEASURES.items()
            if key in history
        }

    def plot(self, *, ax=None, name=None, **kwargs):
        """Draw the suboptimality and the convergence measures against the iteration.

        Parameters
        ----------
        ax : matplotlib Axes, default=None
            Axes to draw on; a new figure when None.
        name : str, default=None
            Shown in the legend's title (with the solver's name);
            ``estimator_name`` when None.
        **kwargs : dict
            Passed to :meth:`matplotlib.axes.Axes.plot` for every line.

        Returns
        -------
        display : ConvergenceDisplay
            This display, drawn (``ax_``, ``figure_`` and the artists set).
        """
        self.ax_, self.figure_ = _axes(self, ax)
        name = self.estimator_name if name is None else name
        iterations = np.arange(self.suboptimality.size)
        series = {"objective - f*": self.suboptimality, **self.measures}
        self.lines_ = []
        every = max(1, iterations.size // 40)  # markers stay legible on long runs
        for (label, values), style in zip(series.items(), ("-o", "--s", "-.^", ":v", "--D")):
            defaults = {"marker": style[-1], "linestyle": style[:-1], "markersize": 3}
            defaults["markevery"] = every
            line_kw = _validate_style_kwargs({**defaults, "label": label}, kwargs)
            self.lines_ += self.ax_.plot(iterations, _positive(values), **line_kw)
        self.ax_.set_yscale("log")
        self.ax_.set(xlabel="iteration", ylabel="value (log scale)")
        from matplotlib.ticker import MaxNLocator

        self.ax_.xaxis.set_major_locator(MaxNLocator(integer=True))
        title = ", ".join(str(t) for t in (name, self.solver_name) if t is not None) or None
        self.ax_.legend(title=title, fontsize="small", title_fontsize="small")
        return self

    @classmethod
    def from_estimator(cls, estimator, *, name=None, ax=None, **kwargs):
        """Convergence of the solver that fitted a decoder or a classifier's decoder.

        Parameters
        ----------
        estimator : ConvexDecoder or classifier
            A fitted :class:`~convexagg.ConvexDecoder`, or a fitted classifier
            whose ``decoder_`` is one (:class:`~convexagg.ConvexAggregationClassifier`,
            :class:`~convexagg.CodeMatrixClassifier`).
        name : str, default=None
            Shown in the legend's title; the estimator's class name when None.
        ax : matplotlib Axes, default=None
            Axes to draw on; a new figure when None.
        **kwargs : dict
            Passed to :meth:`matplotlib.axes.Axes.plot` for every line.

        Returns
        -------
        display : ConvergenceDisplay
            This display, drawn (``ax_``, ``figure_`` and the artists set).
        """
        decoder = _fitted_decoder(estimator, cls.__name__, "history_")
        solver = getattr(decoder, "solver_", None)
        display = cls(
            decoder.history_,
            solver_name=None if solver is None else type(solver).__name__,
            estimator_name=type(estimator).__name__ if name is None else name,
        )
        return display.plot(ax=ax, **kwargs)


# ----------------------------------------------------------------------------- path


class RegularizationPathDisplay:
    """Aggregation weights and accuracy along a path of ``alpha`` (the paper's Fig. 3).

    One line per binary classifier's weight against ``alpha`` (log scale), and
    the training (and validation) accuracy on a second y axis: the paper reads
    its ``lambda`` off this figure, where accuracy is high and the weights have
    settled.

    Create it with :meth:`from_path` or :meth:`from_estimator`.

    Parameters
    ----------
    alphas : ndarray of shape (n_alphas,)
        Regularisation strengths; those ``<= 0`` are not drawn (log scale).
    weights : ndarray of shape (n_alphas, n_classifiers)
        Weights at each ``alpha``.
    train_accuracy : ndarray of shape (n_alphas,)
        Training accuracy at each ``alpha``.
    val_accuracy : ndarray of shape (n_alphas,), default=None
        Validation accuracy; not drawn when None.
    estimator_name : str, default=None
        The legend's title.

    Attributes
    ----------
    lines_ : list of matplotlib Line2D
        The weights, one line per classifier.
    accuracy_lines_ : list of matplotlib Line2D
        Training, then validation accuracy.
    ax_ : matplotlib Axes
        Axes of the weights.
    ax_accuracy_ : matplotlib Axes
        The twin axes of the accuracy (right y axis).
    figure_ : matplotlib Figure
    """

    def __init__(self, alphas, weights, train_accuracy, *, val_accuracy=None, estimator_name=None):
        self.alphas = np.asarray(alphas, dtype=np.float64)
        self.weights = np.asarray(weights, dtype=np.float64)
        self.train_accuracy = np.asarray(train_accuracy, dtype=np.float64)
        self.val_accuracy = None if val_accuracy is None else np.asarray(val_accuracy, float)
        n = self.alphas.shape
        shapes_ok = (
            self.alphas.ndim == 1
            and self.weights.ndim == 2
            and self.weights.shape[0] == n[0]
            and self.train_accuracy.shape == n
            and (self.val_accuracy is None or self.val_accuracy.shape == n)
        )
        if not shapes_ok:
            raise ValueError(
                "alphas (n_alphas,), weights (n_alphas, n_classifiers) and the accuracies "
                f"(n_alphas,) must agree; got alphas {self.alphas.shape}, weights "
                f"{self.weights.shape}, train_accuracy {self.train_accuracy.shape}."
            )
        self.estimator_name = estimator_name

    def plot(self, *, ax=None, name=None, **kwargs):
        """Draw the weights against ``alpha`` and the accuracy on a twin axis.

        Parameters
        ----------
        ax : matplotlib Axes, default=None
            Axes of the weights (the accuracy goes on its twin); a new figure
            when None.
        name : str, default=None
            The legend's title; ``estimator_name`` when None.
        **kwargs : dict
            Passed to :meth:`matplotlib.axes.Axes.plot` for the weights.

        Returns
        -------
        display : RegularizationPathDisplay
            This display, drawn (``ax_``, ``figure_`` and the artists set).
        """
        self.ax_, self.figure_ = _axes(self, ax)
        name = self.estimator_name if name is None else name
        shown = self.alphas > 0
        alphas = self.alphas[shown]
        style = _validate_style_kwargs({"linewidth": 1.0}, kwargs)
        self.lines_ = self.ax_.plot(alphas, self.weights[shown], **style)
        for i, line in enumerate(self.lines_):
            line.set_label(f"weights ({len(self.lines_)} classifiers)" if i == 0 else "_weight")
        self.ax_.set_xscale("log")
        self.ax_.set(xlabel="alpha (regularisation strength)", ylabel="aggregation weight")
        self.ax_accuracy_ = self.ax_.twinx()
        self.accuracy_lines_ = self.ax_accuracy_.plot(
            alphas, self.train_accuracy[shown], "k-s", markersize=4, label="training accuracy"
        )
        if self.val_accuracy is not None:
            self.accuracy_lines_ += self.ax_accuracy_.plot(
                alphas,
                self.val_accuracy[shown],
                "k--^",
                markersize=4,
                markerfacecolor="white",
                label="validation accuracy",
            )
        self.ax_accuracy_.set_ylabel("accuracy")
        self.ax_accuracy_.legend(
            handles=self.lines_[:1] + self.accuracy_lines_,
            loc="lower left",
            bbox_to_anchor=(0.0, 1.01),
            ncol=3,
            frameon=False,
            fontsize="small",
            title=name,
            title_fontsize="small",
            alignment="left",
        )
        return self

    @classmethod
    def from_path(cls, path, *, name=None, ax=None, **kwargs):
        """Draw a computed :class:`~convexagg.RegularizationPath`.

        Parameters
        ----------
        path : RegularizationPath
            From :func:`~convexagg.regularization_path`.
        name : str, default=None
            The legend's title.
        ax : matplotlib Axes, default=None
            Axes of the weights; a new figure when None.
        **kwargs : dict
            Passed to :meth:`matplotlib.axes.Axes.plot` for the weights.

        Returns
        -------
        display : RegularizationPathDisplay
            This display, drawn (``ax_``, ``figure_`` and the artists set).
        """
        display = cls(
            path.alphas,
            path.weights,
            path.train_accuracy,
            val_accuracy=path.val_accuracy,
            estimator_name=name,
        )
        return display.plot(ax=ax, **kwargs)

    @classmethod
    def from_estimator(
        cls,
        estimator,
        X,
        y,
        alphas,
        *,
        sample_weight=None,
        X_val=None,
        y_val=None,
        name=None,
        ax=None,
        **kwargs,
    ):
        """Regularisation path of a fitted classifier's convex aggregation.

        The weights are refitted for each ``alpha`` on the binary outputs of
        ``X`` the classifier's decoder was fitted on
        (:meth:`~convexagg.CodeMatrixClassifier.training_outputs`: with
        out-of-fold outputs, ``X`` must be the data of ``fit``) with its
        decoder settings, by :func:`~convexagg.regularization_path`: at the
        classifier's ``alpha``, the path is its weights, whatever ``cv``. The
        classifier is not changed. The validation outputs are those that
        predict (:meth:`~convexagg.CodeMatrixClassifier.predict_binary_proba`).

        Parameters
        ----------
        estimator : ConvexAggregationClassifier or CodeMatrixClassifier
            Fitted, with a :class:`~convexagg.ConvexDecoder` as ``decoder_``
            (formulation ``"likelihood"``).
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Samples the weights are fitted on (normally the training data).
        y : array-like of shape (n_samples,)
            Their labels, among the estimator's ``classes_``.
        alphas : array-like of shape (n_alphas,)
            Regularisation strengths, any order (drawn on a log scale).
        sample_weight : array-like of shape (n_samples,), default=None
            Weights of the samples, as given to ``fit``.
        X_val, y_val : array-like, default=None
            Validation samples and labels for the validation accuracy; given
            together.
        name : str, default=None
            The legend's title; the estimator's class name when None.
        ax : matplotlib Axes, default=None
            Axes of the weights; a new figure when None.
        **kwargs : dict
            Passed to :meth:`matplotlib.axes.Axes.plot` for the weights.

        Returns
        -------
        display : RegularizationPathDisplay
            This display, drawn (``ax_``, ``figure_`` and the artists set).
        """
        decoder = _fitted_decoder(estimator, cls.__name__)
        if decoder is estimator:
            raise TypeError(
                f"{cls.__name__}.from_estimator needs a classifier (it predicts the binary "
                "outputs of X); for binary outputs at hand, call regularization_path and "
                "from_path."
            )
        if (X_val is None) != (y_val is None):
            raise ValueError("X_val and y_val must be given together.")
        val = {}
        if X_val is not None:
            val = {
                "Q_val": estimator.predict_binary_proba(X_val),
                "y_val": encode_labels(y_val, estimator.classes_, "y_val"),
            }
        encode_labels(y, estimator.classes_, "y")  # the labels checked, as y_val's
        Q, y_idx, sw = estimator.training_outputs(X, y, sample_weight)
        path = regularization_path(
            Q,
            y_idx,
            estimator.code_matrix_,
            alphas,
            decoder=decoder,
            output=estimator.binary_output_,
            sample_weight=sw,
            **val,
        )
        name = type(estimator).__name__ if name is None else name
        return cls.from_path(path, name=name, ax=ax, **kwargs)
