"""Choosing a penalty of the convex aggregation among several values, by cross-validation
on the outputs the decoder is fitted on: ``entry_weight_shrinkage`` or
``zero_entry_penalty``.

How much the zero entries' weights should be held back depends on the data set: no
single prior serves every set of the Kull et al. suite (small sets such as ecoli,
autos and cleveland need 80 / n for ``n`` rows, the large ones gain most from the
weakest). Given several values (:class:`PenaltyCandidates`, the ``candidates`` of
:meth:`ConvexDecoder.fit <convexagg.ConvexDecoder.fit>`), each is scored by the
log-loss of the aggregation fitted on :data:`PENALTY_CV_FOLDS` - 1 folds of the
outputs, on the held-out fold, summed over the folds; the smallest wins (ties: the
first), and the decoder is fitted at it on every row. The estimator's
``zero_entry_penalty="auto"`` is such a choice among priors, from the strongest on,
stopping at the first whose score rises (QUALITY.md, "Why the default is what it
is"); a list of shrinkages is one too (QUALITY.md, "Settings measured that are not
the default").

The choice is part of the decoder's fit: the problem is validated once and its losses
stored once, each fold takes its rows of them, and every solve (each value on each
fold, then the fit at the chosen value) is a point of the fit's one solve loop
(:func:`~convexagg.decoders.fitting.solve_path`). Within a fold the values are fitted
in the order given, each fit warm-started from the same fold's fit of the value before
(:class:`~convexagg.decoders.fitting.PointFrom`); the first value's fits are chained
along the folds, each from the fold before's (the first fold's from the solver's own
start). The chosen value's fits also give every row's probabilities from weights not
fitted on it (the decoder's ``held_out_proba_``, the estimator's ``oof_proba_``), and the
fit at the chosen value starts from the mean of its fits on the folds.
"""

from __future__ import annotations

from dataclasses import dataclass
from numbers import Integral, Real

import numpy as np
from sklearn.base import clone

from .._array_api import on_host
from .._folds import shuffled_splits
from ..aggregation import Penalty
from ..solvers import SolverResult
from .fitting import PointFrom, solve_path

__all__ = [
    "CHOSEN_PENALTIES",
    "PENALTY_CV_FOLDS",
    "PenaltyCandidates",
    "PenaltyChoice",
    "check_candidates",
    "select_penalty",
]

PENALTY_CV_FOLDS = 3
# the decoder parameters that may be chosen among values, and whether 0 is a valid value
CHOSEN_PENALTIES = {"entry_weight_shrinkage": False, "zero_entry_penalty": True}


def check_candidates(name, values):
    """``values`` (several values of the penalty ``name``, one of :data:`CHOSEN_PENALTIES`)
    as a tuple of floats; raises a ``ValueError`` naming the parameter unless there are at
    least two, each finite and ``> 0`` (``>= 0`` where 0 is valid)."""
    values = tuple(values)
    zero_ok = CHOSEN_PENALTIES[name]
    if len(values) < 2 or not all(
        isinstance(v, Real)
        and not isinstance(v, bool)
        and np.isfinite(v)
        and (v >= 0 if zero_ok else v > 0)
        for v in values
    ):
        raise ValueError(
            f"{name} as a list chooses among its values by cross-validation: give at least "
            f"two finite values {'>=' if zero_ok else '>'} 0 (or one float); got "
            f"{list(values)!r}."
        )
    return tuple(float(v) for v in values)


@dataclass(frozen=True)
class PenaltyCandidates:
    """Values of one penalty of :class:`~convexagg.ConvexDecoder` to choose among by
    cross-validation, and how: the ``candidates`` of its ``fit``.

    Parameters
    ----------
    name : {"entry_weight_shrinkage", "zero_entry_penalty"}
        The decoder parameter chosen.
    values : sequence of float
        At least two finite values (``> 0``; ``>= 0`` for ``zero_entry_penalty``),
        fitted in this order; kept as a tuple of floats.
    random_state : int or None, default=None
        Shuffles the folds (None: differently on each fit).
    n_folds : int, default=PENALTY_CV_FOLDS
        Number of folds: stratified where every class has a row in each, else
        plain shuffled folds.
    stop_when_worse : bool, default=False
        Stop at the first value that scores worse than the value before it: the
        choice is then the first minimum along ``values`` (a grid in order, from
        strong to weak, whose scores fall to one minimum and rise), and the values
        after it are not fitted.
    """

    name: str
    values: tuple
    random_state: int | None = None
    n_folds: int = PENALTY_CV_FOLDS
    stop_when_worse: bool = False

    def __post_init__(self):
        if self.name not in CHOSEN_PENALTIES:
            raise ValueError(
                f"candidates can choose {sorted(CHOSEN_PENALTIES)}; got name={self.name!r}."
            )
        object.__setattr__(self, "values", check_candidates(self.name, self.values))
        if not (isinstance(self.n_folds, Integral) and self.n_folds >= 2):
            raise ValueError(f"n_folds must be an int >= 2, got {self.n_folds!r}.")


class PenaltyChoice:
    """The choice among :class:`PenaltyCandidates` on a validated problem, as points of a
    solve loop.

    The likelihood objective of the problem is stored once (:attr:`likelihood`); each
    fold's training and held-out rows are taken from it for each value, one fold's
    losses held at a time rather than a second copy of all of them. :meth:`points`
    yields each value's fit on each fold; once they are solved, :attr:`best`,
    :attr:`scores` and :attr:`held_out_proba` hold the outcome, and
    :attr:`penalties` ``[best]`` is the chosen value's penalty.

    Parameters
    ----------
    decoder : ConvexDecoder
        The decoder whose model is fitted, each value of ``candidates`` set.
    problem : AggregationProblem
        The validated data, of the model of every candidate value.
    candidates : PenaltyCandidates
        The values and the folds.
    solver : SolverConfig
        The resolved configuration (the losses are stored in its ``storage_dtype``).

    Attributes
    ----------
    likelihood : BlockedObjective or RecomputedObjective
        The likelihood objective of all rows.
    penalties : list of Penalty
        One per value.
    best : int
        Index of the chosen value (once the points are solved).
    scores : ndarray of shape (n_values,)
        Each value's log-loss on the held-out folds (weighted mean over all rows);
        NaN for the values not fitted (``stop_when_worse``).
    held_out_proba : ndarray of shape (n_samples, n_classes)
        Each row's class probabilities under the chosen value, from the weights
        fitted on the other folds.
    start : SolverResult
        The mean of the chosen value's fits on the folds: where the fit at the chosen
        value on every row starts.
    """

    def __init__(self, decoder, problem, candidates, solver):
        name = candidates.name
        self.candidates = candidates
        self._verbose, self._who = decoder.verbose, type(decoder).__name__
        self.penalties = [
            clone(decoder).set_params(**{name: v}).penalty_for(code=problem.code)
            for v in candidates.values
        ]
        self._problem = problem
        self._dtype = solver.storage_dtype(problem.n_losses)
        self.likelihood = problem.likelihood(self.penalties[0], self._dtype)
        self.best = None
        self.start = None
        self.scores = np.full(len(candidates.values), np.nan)
        self.held_out_proba = None

    def _say(self, message):
        print(f"[{self._who}] {message}", flush=True)

    def _part(self, rows):
        """The objective on ``rows``: their stored losses, else computed anew."""
        if hasattr(self.likelihood, "take"):
            return self.likelihood.take(rows)
        return self._problem.take(rows).likelihood(self.penalties[0], self._dtype)

    def points(self):
        """Yield each value's fit on each fold, value after value.

        Each fold's fit of a value starts from the same fold's fit of the value
        before; the first value's fits from the fold before's (the first fold's from
        the solver's own start), since the folds share most of their rows; the values are
        scored once all their folds are solved.

        Yields
        ------
        point : PointFrom
            One value's fit on one fold's training rows.
        """
        problem, candidates = self._problem, self.candidates
        splits = shuffled_splits(problem.y, candidates.n_folds, candidates.random_state)
        sw = problem.sample_weight
        sizes = [float(t.size if sw is None else sw[t].sum()) for _, t in splits]
        last = [None] * len(splits)  # each fold's fit of the value before
        best_proba = None  # the held-out probabilities of the best value so far
        unpenalised = Penalty()
        for j, penalty in enumerate(self.penalties):
            score, proba = 0.0, []
            for f, (train, test) in enumerate(splits):
                start = last[f] if j > 0 or f == 0 else last[f - 1]
                point = PointFrom([self._part(train).with_penalty(penalty)], start=start)
                yield point
                last[f] = point.solved.result
                # the held-out log-loss is the unpenalised objective's value on the fold
                held_out = self._part(test).with_penalty(unpenalised).evaluate(last[f].w)
                score += sizes[f] * held_out.value
                proba.append(held_out.P)
                if self._verbose >= 2:
                    self._say(
                        f"{candidates.name}={candidates.values[j]:g}, fold {f + 1} of "
                        f"{len(splits)}: {last[f].n_iter} iterations, held-out log-loss "
                        f"{held_out.value:.6g}"
                    )
            self.scores[j] = score / sum(sizes)
            if not np.isnan(self.scores[j]) and int(np.nanargmin(self.scores)) == j:
                best_proba, best_fits = proba, list(last)
            if candidates.stop_when_worse and j > 0 and self.scores[j] > self.scores[j - 1]:
                break
        self.best = int(np.nanargmin(self.scores))
        if self._verbose:
            self._say(
                f"{candidates.name}={candidates.values[self.best]:g} chosen by "
                f"{len(splits)}-fold cross-validation; held-out log-loss of each value "
                f"{self.scores}"
            )
        # the mean of feasible points is feasible: the weights' bounds are convex
        mean = np.mean([on_host(fit.w) for fit in best_fits], axis=0)
        self.start = SolverResult(w=mean, z=None, n_iter=0, converged=True)
        self.held_out_proba = np.empty((problem.n_samples, problem.code.shape[0]))
        for (_, test), P in zip(splits, best_proba):
            self.held_out_proba[test] = on_host(P)


def select_penalty(decoder, Q, y, code, candidates, output="proba", sample_weight=None):
    """The choice among ``candidates`` alone, without the fit at the chosen value.

    What :meth:`ConvexDecoder.fit <convexagg.ConvexDecoder.fit>` with
    ``candidates`` solves before its last point, for studies of the choice.

    Parameters
    ----------
    decoder : ConvexDecoder
        The decoder whose model is fitted at each value (not fitted itself).
    Q : array-like of shape (n_samples, n_classifiers)
        Binary outputs, as in ``fit``.
    y : array-like of shape (n_samples,)
        Integer class indices, as in ``fit``.
    code : array-like of shape (n_classes, n_classifiers)
        The code matrix, as in ``fit``.
    candidates : PenaltyCandidates
        The values and the folds.
    output : {"proba", "margin"}, default="proba"
        What ``Q`` holds.
    sample_weight : array-like of shape (n_samples,), default=None
        Weights of the samples, in the fits and the scores.

    Returns
    -------
    choice : PenaltyChoice
        Its ``best``, ``scores`` and ``held_out_proba``.
    """
    model = clone(decoder).set_params(**{candidates.name: candidates.values[0]})
    solver = model.solver_config()
    problem = model.aggregation_problem(Q, y, code, output, sample_weight)
    choice = PenaltyChoice(model, problem, candidates, solver)
    solve_path(choice.points(), solver)
    return choice
