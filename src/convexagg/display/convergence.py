"""The solver's progress, from a fitted decoder's ``history_``."""

from __future__ import annotations

import numpy as np

from .base import (
    axes as _axes,
)
from .base import (
    fitted_decoder as _fitted_decoder,
)
from .base import (
    positive as _positive,
)
from .base import (
    validate_style_kwargs as _validate_style_kwargs,
)

__all__ = ["ConvergenceDisplay"]

# history_ key -> legend text of the solvers' convergence measures
_MEASURES = {
    "projected_gradient": "projected gradient norm",
    "residual": "KKT residual norm",
    "gap": "duality gap",
    "best": "best objective - f*",
}


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
