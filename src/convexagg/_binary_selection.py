"""Choosing the binary learners' parameters on the out-of-fold outputs (``binary_param_grid``).

With out-of-fold outputs the binaries are trained on folds anyway; the same
outputs score a setting of the learners (e.g. their ``C``) by what the user
gets: the aggregation fitted on them, and its log-loss on them. For each
candidate of the grid the fold binaries are trained and their out-of-fold
outputs aggregated; the candidate of smallest (sample-weighted) mean log-loss
wins (ties: the first). The log-loss, not the penalised objective, is the
criterion: the penalty is the same function of the weights for every
candidate and says nothing about the probabilities, while the log-loss on
out-of-fold outputs is the quantity the defaults are chosen on. The
aggregation sees those outputs in sample, as ``fit`` does: the binaries are
scored out of sample, the few weights in sample. With many weights (many
classes, one-vs-one) that is optimistic, more so for confident binaries; each
fold scored by the aggregation fitted on the other folds is as far off the other
way (its aggregation has a third fewer rows), at several decoder fits more per
candidate. On small sets the in-sample score keeps falling with ``C`` and picks
the largest, where choosing ``C`` and ``alpha`` by
``ConvexAggregationClassifierCV``'s cross-validated log-loss per ``C`` does
better, at a higher fit time (measured in QUALITY.md).
"""

from __future__ import annotations

import numpy as np
from sklearn.base import clone
from sklearn.model_selection import ParameterGrid

from ._training import Training, out_of_fold

__all__ = ["check_param_grid", "learners_with", "select_binaries"]


def learners_with(learners, params):
    """Clones of ``learners`` (one learner or a list) with ``params`` set."""
    if isinstance(learners, list):
        return [clone(est).set_params(**params) for est in learners]
    return clone(learners).set_params(**params)


def check_param_grid(grid, learners, plan, cv):
    """The candidates of ``grid`` (scikit-learn's ``ParameterGrid``), each checked
    against the learners' parameters; raises a ``ValueError`` naming what is wrong
    (``plan``: the fit's :class:`~convexagg._training.Plan`, of the parameter ``cv``)."""
    if not plan.out_of_fold:
        given = "frozen binaries do" if plan.prefit and cv != "prefit" else f"cv={cv!r} does"
        raise ValueError(
            f"binary_param_grid chooses the binaries' parameters on out-of-fold outputs, "
            f"which {given} not give; pass cv=5 (an int) or a splitter."
        )
    try:
        candidates = list(ParameterGrid(grid))
    except (TypeError, ValueError) as exc:
        raise ValueError(
            f"binary_param_grid must be a dict of parameter names to lists of values (or a "
            f"list of such dicts), as GridSearchCV's param_grid: {exc}"
        ) from None
    if not candidates or candidates == [{}]:
        raise ValueError(f"binary_param_grid={grid!r} has no candidate values.")
    for est in learners if isinstance(learners, list) else [learners]:
        known = est.get_params(deep=True)
        for params in candidates:
            unknown = sorted(set(params) - set(known))
            if unknown:
                raise ValueError(
                    f"binary_param_grid sets {unknown}, which the binary learner "
                    f"{type(est).__name__} does not have; its parameters are "
                    f"{sorted(known)}."
                )
    return candidates


def _log_loss(decoder, Q, y, sample_weight):
    """Mean negative log-likelihood of ``decoder`` on ``(Q, y)`` (weighted when given)."""
    logp = decoder.predict_log_proba(Q)[np.arange(y.size), y]
    return float(-np.average(logp, weights=sample_weight))


def select_binaries(p, learners, candidates, plan, n_jobs, fit_decoder, log):
    """Train the fold binaries of every candidate and keep the best one's.

    Parameters
    ----------
    p : Problem
        The training problem.
    learners : estimator or list of estimators
        The binary learner(s) the candidates are set on.
    candidates : list of dict
        Parameter settings (:func:`check_param_grid`).
    plan : Plan
        The fit's out-of-fold plan: its folds, and whether the fold binaries
        are kept (as ``fit`` does for an ensemble).
    n_jobs : int or None
        Jobs for the binaries.
    fit_decoder : callable
        ``fit_decoder(training) -> fitted decoder`` on a :class:`Training`.
    log : callable
        Progress messages.

    Returns
    -------
    best : int
        Index of the chosen candidate.
    scores : ndarray of shape (n_candidates,)
        Each candidate's aggregated out-of-fold log-loss.
    learners : estimator or list of estimators
        The chosen candidate's learners (unfitted).
    outputs : tuple
        ``out_of_fold``'s result for the chosen candidate.
    """
    scores = np.empty(len(candidates))
    best = kept = None
    for j, params in enumerate(candidates):
        candidate = learners_with(learners, params)
        outputs = out_of_fold(p, candidate, plan.splitter, n_jobs, keep=plan.ensemble, log=log)
        members, Q, rows, tests = outputs
        decoder = fit_decoder(Training(members or [None], Q, rows, tests))
        sw = None if p.sample_weight is None else p.sample_weight[rows]
        scores[j] = _log_loss(decoder, Q[rows], p.y[rows], sw)
        log(f"binary parameters {params}: out-of-fold log-loss {scores[j]:.5g}")
        if best is None or scores[j] < scores[best]:
            best, kept = j, (candidate, outputs)
    return best, scores, kept[0], kept[1]
