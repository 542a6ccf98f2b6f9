"""The learned aggregation weights under the code matrix they weigh."""

from __future__ import annotations

import numpy as np

from .base import (
    axes as _axes,
)
from .base import (
    fitted_decoder as _fitted_decoder,
)
from .base import (
    validate_style_kwargs as _validate_style_kwargs,
)

__all__ = ["WeightsDisplay"]

# code entry -> colour and legend text (ColorBrewer RdBu ends, a light grey between)
_CODE_COLOURS = {-1: "#d6604d", 0: "#e8e8e8", 1: "#4393c3"}
_CODE_NAMES = {1: "+1: positive side", -1: "-1: negative side", 0: "0: not used"}


class WeightsDisplay:
    """The learned aggregation weights under the code matrix they weigh.

    The code matrix is an image (a row per class, a column per binary
    classifier; blue ``+1``, red ``-1``, grey ``0``) with a bar chart of the
    weights aligned under its columns, so a classifier the aggregation
    turned off (weight near 0) is seen with the classes it separates. Class
    intercepts, when the model has non-zero ones, are bars beside the rows.
    With entry weights (``entry_weight_shrinkage``, the default of
    :class:`~convexagg.ConvexAggregationClassifier`) the bars are the shared
    weights ``weights_`` the entry weights (``entry_weights_``, not drawn) are
    shrunk toward.

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
