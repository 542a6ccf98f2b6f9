"""Choosing a penalty of the aggregation from several values on the decoder's training
outputs: ``entry_weight_shrinkage`` or ``zero_entry_penalty`` given as a list.

How much a class may lean on a classifier differently from the other classes
depends on the data set: on the Kull et al. suite the best fixed shrinkage for
one set (0.001: balance-scale, segment, vowel) costs another (ecoli, glass:
0.01), and the zero entries' best strength spans more than a factor of 64 (vowel,
segment, car: 1.25 / n or weaker; ecoli, autos, cleveland: 80 / n). Given several values, each
is scored by the log-loss of the aggregation fitted on :data:`PENALTY_CV_FOLDS` - 1
folds of the outputs the decoder is fitted on, on the held-out fold, summed over
the folds; the smallest wins (ties: the first). Only the aggregation is refitted:
the binaries and their outputs are those of the fit. Within a fold the values are
fitted in the order given, each fit warm-started from the previous value's
solution, on losses computed once. The chosen value's fits also give every row's
probabilities from weights not fitted on it (the estimator's ``oof_proba_``).

On the Kull et al. suite the 3-fold choice among 0.01, 0.003 and 0.001 lowers the
test log-loss on average and is worse on no set, where a fixed value is worse on some,
and 5 folds do no better (QUALITY.md, "Choosing the shrinkage"); the shrinkage's
"auto" (2 / n within [0.001, 0.01]) follows the same pattern at no cost, with less
gain (QUALITY.md, "What the defaults are, and why"). The zero entries' choice:
QUALITY.md, "Choosing the zero entries' strength". Computing the losses once and
warm-starting each value's fit keep the extra fits cheap.
"""

from __future__ import annotations

from numbers import Real

import numpy as np
from sklearn.base import clone

from ._array_api import on_host
from ._folds import shuffled_splits
from .decoders.fitting import solve_path
from .path import solution_scores

__all__ = ["CHOSEN_PENALTIES", "PENALTY_CV_FOLDS", "check_candidates", "select_penalty"]

PENALTY_CV_FOLDS = 3
# the decoder parameters that may be given as a list, and whether 0 is a valid value
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


def select_penalty(
    decoder,
    Q,
    y,
    code,
    output,
    sample_weight,
    name,
    values,
    seed,
    folds=PENALTY_CV_FOLDS,
    stop_when_worse=False,
):
    """Score each of ``values`` of the penalty ``name`` by the cross-validated log-loss of
    ``decoder``'s model.

    The losses are computed once for all rows and each fold takes its rows of them;
    within a fold only the penalty changes from one value to the next, as along a
    regularisation path (:func:`~convexagg.path.problem_path`): each value's fit starts
    from the same fold's fit of the value before.

    Parameters
    ----------
    decoder : ConvexDecoder
        The decoder whose model is fitted (with each of ``values`` as its ``name``).
    Q : ndarray of shape (n_samples, n_classifiers)
        The outputs the decoder is fitted on.
    y : ndarray of shape (n_samples,)
        Class indices.
    code : ndarray of shape (n_classes, n_classifiers)
        The code matrix.
    output : {"proba", "margin"}
        What ``Q`` holds.
    sample_weight : ndarray of shape (n_samples,) or None
        Weights of the rows, in the fits and the scores.
    name : str
        The penalty chosen: ``"entry_weight_shrinkage"`` or ``"zero_entry_penalty"``.
    values : tuple of float
        The candidates (:func:`check_candidates`), fitted in this order.
    seed : int or None
        Shuffles the folds.
    folds : int, default=PENALTY_CV_FOLDS
        Number of folds.
    stop_when_worse : bool, default=False
        Stop at the first value that scores worse than the value before it: the choice
        is then the first minimum along ``values`` (a grid in order, from strong to
        weak, whose scores fall to one minimum and rise), and the values after it are
        not fitted.

    Returns
    -------
    best : int
        Index of the chosen value.
    scores : ndarray of shape (n_values,)
        Each value's log-loss on the held-out folds (weighted mean over all rows); NaN
        for the values not fitted (``stop_when_worse``).
    held_out_proba : ndarray of shape (n_samples, n_classes)
        Each row's class probabilities under the chosen value, from the weights
        fitted on the other folds: cross-fitted probabilities of the model, at the
        cost of one evaluation per fold (the fits are the choice's).
    """
    decoders = [clone(decoder).set_params(**{name: v}) for v in values]
    config = decoders[0].solver_config()
    problem = decoders[0].aggregation_problem(Q, y, code, output, sample_weight)
    penalties = [d.penalty_for(code=problem.code) for d in decoders]
    dtype = config.storage_dtype(problem.n_losses)
    stored = problem.likelihood(penalties[0], dtype)

    def part(rows):  # the objective on ``rows``: their stored losses, else computed anew
        if hasattr(stored, "take"):
            return stored.take(rows)
        return problem.take(rows).likelihood(penalties[0], dtype)

    splits = shuffled_splits(y, folds, seed)
    sizes = [float(t.size if sample_weight is None else sample_weight[t].sum()) for _, t in splits]
    scores = np.full(len(values), np.nan)
    last = [None] * len(splits)  # each fold's fit of the value before
    solutions = []  # per value, each fold's weights
    # value after value, each fold's rows taken anew rather than kept: one fold's losses
    # held at a time, not a second copy of all of them, for takes that cost little next
    # to the fits
    for j, penalty in enumerate(penalties):
        score, fold_solutions = 0.0, []
        for f, (train, test) in enumerate(splits):
            (point,) = solve_path([[part(train).with_penalty(penalty)]], config, previous=last[f])
            last[f] = point.result
            fold_solutions.append(point.result.w)
            score += sizes[f] * solution_scores(part(test), [point.result.w])[1][0]
        scores[j] = score / sum(sizes)
        solutions.append(fold_solutions)
        if stop_when_worse and j > 0 and scores[j] > scores[j - 1]:
            break
    best = int(np.nanargmin(scores))
    held_out_proba = np.empty((len(y), code.shape[0]))
    for (_, test), weights in zip(splits, solutions[best]):
        held_out_proba[test] = on_host(part(test).evaluate(weights).P)
    return best, scores, held_out_proba
