"""One fit of the convex aggregation: the problem, validated once, and the one solve loop.

Every fit of the aggregation weights -- :meth:`ConvexDecoder.fit
<convexagg.ConvexDecoder.fit>` in each formulation, :func:`~convexagg.regularization_path`
and the folds of :class:`~convexagg.ConvexAggregationClassifierCV` -- is a path:
a sequence of penalties (one ``alpha`` for a fit, a grid for the path), each
point solved warm-started from the previous one, as scikit-learn's logistic
regression path and glum fit. Its data are validated once, into an
:class:`AggregationProblem` (outputs, labels, code, loss, sample weights,
intercepts, entry weights); rows of it (the folds of a cross-validation) are
taken without checking them again. :func:`solve_path` is the loop. A fit that
chooses a penalty among candidate values (:mod:`~convexagg.decoders.selection`)
is one path too: each value on each fold, each fold's fits a chain of their own
(:class:`PointFrom`), then the fit at the chosen value.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from ..aggregation import (
    BlockedObjective,
    RecomputedObjective,
    check_sample_weight,
    expand_code,
    losses_fit_in_memory,
    model_entries,
)
from ..losses import OUTPUT_KINDS, check_loss
from .base import check_fit_inputs

__all__ = ["AggregationProblem", "PathPoint", "PointFrom", "aggregation_problem", "solve_path"]


@dataclass(frozen=True)
class AggregationProblem:
    """The validated data and model settings of one aggregation fit.

    Build it with :func:`aggregation_problem` (which validates); :meth:`take`
    selects rows of it without validating again.

    Attributes
    ----------
    Q : ndarray of shape (n_samples, n_classifiers)
        Binary outputs (float).
    y : ndarray of shape (n_samples,)
        Class indices (``intp``).
    code : ndarray of shape (n_classes, n_classifiers)
        The validated code matrix (``int8``).
    output : {"proba", "margin"}
        What ``Q`` holds.
    loss : str
        The binary loss.
    sample_weight : ndarray of shape (n_samples,) or None
        Checked weights, as given (None: all equal).
    fit_intercept : bool
        Whether the model has class intercepts.
    entries : bool
        Whether the model has one weight per nonzero code entry.
    zero_entries : bool
        Whether the zero code entries carry weights too (two each; with ``entries``).
    """

    Q: np.ndarray
    y: np.ndarray
    code: np.ndarray
    output: str
    loss: str
    sample_weight: np.ndarray | None
    fit_intercept: bool
    entries: bool
    zero_entries: bool = False

    @property
    def n_samples(self):
        """Number of rows."""
        return self.Q.shape[0]

    @property
    def n_losses(self):
        """Number of losses the model's objective stores (two per output of its parametrisation)."""
        columns = self.model_columns().size if self.entries else self.code.shape[1]
        return 2 * self.n_samples * columns

    def model_columns(self):
        """Give the classifier of each weight of the entry-weight parametrisation.

        Returns
        -------
        columns : ndarray of int, shape (n_entries,)
            The columns of :func:`~convexagg.aggregation.model_entries`.
        """
        return model_entries(self.code, self.zero_entries)[1]

    def take(self, rows):
        """The problem on ``rows`` (indices or a mask), not validated again.

        Parameters
        ----------
        rows : array-like of int or bool
            The rows to keep.

        Returns
        -------
        problem : AggregationProblem
            The same model on those rows.
        """
        sw = None if self.sample_weight is None else self.sample_weight[rows]
        return replace(self, Q=self.Q[rows], y=self.y[rows], sample_weight=sw)

    def model_outputs(self):
        """Give the outputs and code of the model's parametrisation.

        With entry weights, one column per weighted code entry
        (:func:`~convexagg.aggregation.expand_code`); else ``Q`` and ``code``.

        Returns
        -------
        Q : ndarray of shape (n_samples, n_model_columns)
            The outputs of the model's columns.
        code : ndarray of shape (n_classes, n_model_columns)
            Their code.
        """
        if not self.entries:
            return self.Q, self.code
        return self.Q[:, self.model_columns()], expand_code(self.code, self.zero_entries)

    def likelihood(self, penalty, dtype):
        """The likelihood objective (eq. 12) under ``penalty``, its losses in ``dtype``.

        Stored by class (:class:`~convexagg.aggregation.BlockedObjective`) or, when
        the losses would take more than a quarter of the machine's memory,
        recomputed from ``Q`` on every pass
        (:class:`~convexagg.aggregation.RecomputedObjective`, the same values).

        Parameters
        ----------
        penalty : Penalty
            The penalty.
        dtype : numpy.dtype
            Storage of the losses.

        Returns
        -------
        objective : BlockedObjective or RecomputedObjective
            Ready for a solver's ``solve``.
        """
        columns = self.model_columns() if self.entries else None
        n_columns = self.Q.shape[1] if columns is None else columns.size
        store = losses_fit_in_memory(2 * self.Q.shape[0] * n_columns, dtype)
        kwargs = {
            "loss": self.loss,
            "output": self.output,
            "dtype": dtype,
            "fit_intercept": self.fit_intercept,
            "sample_weight": self.sample_weight,
        }
        if store and self.entries:
            # the losses of each classifier once, not once per entry, and no copy of Q
            # with a column per entry, which would cost a large share of the fit
            kwargs["columns"] = columns
            Q, code = self.Q, expand_code(self.code, self.zero_entries)
        else:
            Q, code = self.model_outputs()
        return (BlockedObjective if store else RecomputedObjective).from_outputs(
            Q, code, self.y, penalty, **kwargs
        )


def aggregation_problem(
    Q,
    y,
    code,
    output="proba",
    *,
    loss,
    sample_weight=None,
    fit_intercept=False,
    entries=False,
    zero_entries=False,
):
    """Validate the data of one aggregation fit: the one input check of a fit.

    Raises a ``ValueError`` naming ``output``, ``loss``, ``Q``, ``y``, ``code``
    or ``sample_weight`` when it is not what the fit needs.

    Parameters
    ----------
    Q : array-like of shape (n_samples, n_classifiers)
        Binary outputs.
    y : array-like of shape (n_samples,)
        Integer class indices ``0..n_classes-1``.
    code : array-like of shape (n_classes, n_classifiers)
        The code matrix.
    output : {"proba", "margin"}, default="proba"
        What ``Q`` holds.
    loss : str
        The binary loss (checked against ``output``).
    sample_weight : array-like of shape (n_samples,), default=None
        Weights of the samples.
    fit_intercept : bool, default=False
        Whether the model has class intercepts.
    entries : bool, default=False
        Whether the model has entry weights.
    zero_entries : bool, default=False
        Whether the zero code entries carry weights too.

    Returns
    -------
    problem : AggregationProblem
        The validated problem.
    """
    if output not in OUTPUT_KINDS:
        raise ValueError(f"output must be one of {OUTPUT_KINDS}, got {output!r}.")
    check_loss(loss, output)
    Q, y, code = check_fit_inputs(Q, y, code, output)
    if sample_weight is not None:
        sample_weight = np.asarray(sample_weight)
        check_sample_weight(sample_weight, Q.shape[0])
    return AggregationProblem(
        Q, y, code, output, loss, sample_weight, fit_intercept, entries, zero_entries
    )


@dataclass
class PathPoint:
    """The solution at one point of a path.

    Attributes
    ----------
    result : SolverResult
        The solution (of the last stage; ``n_iter`` summed and ``converged``
        over every stage).
    stage_n_iter : ndarray of int
        Solver iterations of each stage (one stage but for a continuation).
    """

    result: object
    stage_n_iter: np.ndarray


@dataclass
class PointFrom:
    """A point of a path that starts from a given solution, not from the last one found.

    Several chains of warm starts in one loop: the folds of a cross-validation,
    each fitted along the same values, each fold's fit starting from its own fit
    of the value before. :func:`solve_path` sets ``solved`` once the point is
    solved, so that a lazy sequence of points can start the next one from it.

    Attributes
    ----------
    stages : list of Objective
        The objectives of the point, as a plain point's.
    start : SolverResult or None
        The solution its first stage starts from (None: the solver's own start).
    solved : PathPoint or None
        The point's solution, once solved.
    """

    stages: list
    start: object = None
    solved: PathPoint | None = None


def solve_path(points, solver, *, previous=None, warm_start=True, callback=None, report=None):
    """The solve loop: every point of a path, each warm-started from the last solution.

    Each point is a list of stages (one objective, or a continuation's
    objectives in order); every stage starts from the last solution found --
    the previous stage's, else the previous point's (with ``warm_start``), else
    ``previous`` -- by the solver's warm-start policy. A :class:`PointFrom`
    starts from its own ``start`` instead. What the last solve's Newton steps kept
    (``SolverResult.newton_matrix``: a factorised Hessian, the products spent without
    one) goes with the next warm start, whichever it is: the points' problems share
    their variables, and it only preconditions; the results returned hold none, so
    that one is alive at a time.

    Parameters
    ----------
    points : iterable of list of Objective or PointFrom
        The objectives of each point, built lazily (a path's losses are stored
        once and each point only swaps the penalty).
    solver : SolverConfig
        The resolved configuration.
    previous : SolverResult, default=None
        A solution to start the first point from (a decoder's ``warm_start``).
    warm_start : bool, default=True
        Start each point from the previous point's solution; False starts
        each from ``previous``.
    callback : callable, default=None
        Passed to every solve.
    report : callable, default=None
        Called with each :class:`PathPoint` once solved (progress messages).

    Returns
    -------
    points : list of PathPoint
        One per point, in order.
    """
    out = []
    last = previous
    matrix = None  # what the last solve's Newton steps kept
    for point in points:
        stages, start = point, last
        if isinstance(point, PointFrom):
            stages, start = point.stages, point.start
        results = []
        for objective in stages:
            begin = results[-1] if results else start
            if begin is not None and matrix is not None:
                begin = replace(begin, newton_matrix=matrix)
            results.append(solver.solve(objective, begin, callback))
            matrix, results[-1].newton_matrix = results[-1].newton_matrix, None
        result = results[-1]
        stage_n_iter = np.array([r.n_iter for r in results])
        if len(results) > 1:
            result.n_iter = int(stage_n_iter.sum())
            result.converged = all(r.converged for r in results)
        out.append(PathPoint(result, stage_n_iter))
        if isinstance(point, PointFrom):
            point.solved = out[-1]
        if report is not None:
            report(out[-1])
        last = result if warm_start else previous
    return out
