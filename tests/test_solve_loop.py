"""One fit, one validated problem, one solve loop: counted by spies on the input check,
the loop and the solver, for the decoder's fit, the estimator's fit and fit_decoder, the
regularisation path and the cross-validated estimator."""

from __future__ import annotations

import sys
from contextlib import contextmanager

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import load_iris
from sklearn.linear_model import LogisticRegression

from convexagg import (
    ConvexAggregationClassifier,
    ConvexAggregationClassifierCV,
    ConvexDecoder,
    regularization_path,
)
from convexagg.aggregation import BlockedObjective, Penalty
from convexagg.binary import fit_binaries, predict_binaries
from convexagg.codes import make_code
from convexagg.datasets import make_broken_classifier_outputs
from convexagg.decoders import base, fitting
from convexagg.decoders.selection import PENALTY_CV_FOLDS, PenaltyCandidates
from convexagg.solvers import ProjectedNewton, SolverConfig, uniform_start
from convexagg.solvers.contract import OPTIONAL, REQUIRED


class Spies:
    """Counts of the input check, the solve loop and the solver's solves; each solve
    records whether it ran inside the loop."""

    def __init__(self):
        self.checks = self.loops = 0
        self.solves = []  # True: called from inside the loop
        self._in_loop = 0


def _replace_everywhere(monkeypatch, original, replacement):
    """``original`` replaced by ``replacement`` in every convexagg module that holds it
    (a name imported elsewhere is another reference to the same function)."""
    for name, module in list(sys.modules.items()):
        if not name.startswith("convexagg"):
            continue
        for attr, value in list(vars(module).items()):
            if value is original:
                monkeypatch.setattr(module, attr, replacement)


@contextmanager
def spies(monkeypatch):
    s = Spies()
    check, loop, solve = base.check_fit_inputs, fitting.solve_path, SolverConfig.solve

    def counted_check(*args, **kwargs):
        s.checks += 1
        return check(*args, **kwargs)

    def counted_loop(*args, **kwargs):
        s.loops += 1
        s._in_loop += 1
        try:
            return loop(*args, **kwargs)
        finally:
            s._in_loop -= 1

    def counted_solve(self, *args, **kwargs):
        s.solves.append(s._in_loop > 0)
        return solve(self, *args, **kwargs)

    _replace_everywhere(monkeypatch, check, counted_check)
    _replace_everywhere(monkeypatch, loop, counted_loop)
    monkeypatch.setattr(SolverConfig, "solve", counted_solve)
    yield s


@pytest.fixture
def outputs():
    return make_broken_classifier_outputs(n_per_class=60, random_state=0)


@pytest.fixture
def iris():
    X, y = load_iris(return_X_y=True)
    return X, y


def _one(s, solves=1):
    assert s.checks == 1, f"{s.checks} input checks"
    assert s.loops == 1, f"{s.loops} solve loops"
    assert len(s.solves) == solves and all(s.solves), s.solves


@pytest.mark.parametrize(
    "params, solves",
    [
        ({}, 1),
        ({"solver": "interior_point", "fit_intercept": True}, 1),
        ({"entry_weight_shrinkage": 1.0}, 1),
        ({"formulation": "large_margin"}, 1),
        ({"formulation": "stiffness", "tau": 100.0}, 3),  # tau = 1, 10, 100
    ],
)
def test_a_decoder_fit_is_one_check_and_one_loop(monkeypatch, outputs, params, solves):
    Q, y, code = outputs
    with spies(monkeypatch) as s:
        ConvexDecoder(**params).fit(Q, y, code)
    _one(s, solves)


def test_a_warm_started_refit_is_one_loop_from_the_previous_solution(monkeypatch, outputs):
    Q, y, code = outputs
    dec = ConvexDecoder(warm_start=True).fit(Q, y, code)
    first = dec.n_iter_
    with spies(monkeypatch) as s:
        dec.fit(Q, y, code)
    _one(s)
    assert dec.n_iter_ < first  # started at the solution


def _choice_solves(clf):
    """The solves of the zero entries' choice: each prior fitted on each of its folds."""
    scores = clf.zero_entry_penalty_scores_
    assert scores is not None  # the default chose the zero entries' strength
    return int(np.count_nonzero(~np.isnan(scores))) * PENALTY_CV_FOLDS


@pytest.mark.parametrize("params", [{}, {"zero_entry_penalty": None}])
def test_the_estimator_fit_and_fit_decoder_are_one_check_and_one_loop(monkeypatch, iris, params):
    """The default fit (the zero entries' strength chosen by cross-validation, then the
    fit at it) validates its outputs once and solves every fit in one loop."""
    X, y = iris
    clf = ConvexAggregationClassifier(
        LogisticRegression(max_iter=500), cv=3, random_state=0, **params
    )
    with spies(monkeypatch) as s:
        clf.fit(X, y)
    choice = _choice_solves(clf) if not params else 0
    _one(s, choice + 1)
    with spies(monkeypatch) as s:
        clf.set_params(alpha=1e-2).fit_decoder(X, y)
    choice = _choice_solves(clf) if not params else 0
    _one(s, choice + 1)


def test_a_decoder_fit_with_candidates_is_one_check_and_one_loop(monkeypatch, outputs):
    Q, y, code = outputs
    values = (3.0, 0.1, 0.003)
    candidates = PenaltyCandidates("zero_entry_penalty", values, random_state=0)
    dec = ConvexDecoder(entry_weight_shrinkage=0.01)
    with spies(monkeypatch) as s:
        dec.fit(Q, y, code, candidates=candidates)
    _one(s, len(values) * PENALTY_CV_FOLDS + 1)


def test_the_path_is_one_check_and_one_loop_over_its_alphas(monkeypatch, outputs):
    Q, y, code = outputs
    alphas = np.logspace(-4, 0, 5)
    with spies(monkeypatch) as s:
        regularization_path(Q, y, code, alphas)
    _one(s, solves=alphas.size)
    # validation data is data of its own: checked once more, solved not at all
    with spies(monkeypatch) as s:
        regularization_path(Q, y, code, alphas, Q_val=Q[::2], y_val=y[::2])
    assert (s.checks, s.loops, len(s.solves)) == (2, 1, alphas.size)
    # one loop, warm-started: each alpha the optimum a separate cold fit finds
    tight = ConvexDecoder(solver=ProjectedNewton(tol=1e-10))
    path = regularization_path(Q, y, code, alphas, decoder=tight)
    for alpha, w in zip(path.alphas, path.weights):
        dec = clone(tight).set_params(alpha=alpha).fit(Q, y, code)
        np.testing.assert_allclose(w, dec.weights_, rtol=1e-7, atol=1e-9)


# the paper's model, without the zero entries' choice (a path of its own on each fold)
PAPER = dict(
    fit_intercept=False, entry_weight_shrinkage=None, column_penalty=None, zero_entry_penalty=None
)


@pytest.mark.parametrize("cv", [3, "prefit"])
def test_the_cv_fit_validates_its_outputs_once(monkeypatch, iris, cv):
    X, y = iris
    n_folds, n_alphas = 3, 4
    code = make_code("ovo", 3)
    learner = LogisticRegression(max_iter=500)
    binaries = fit_binaries(learner, X, y, code) if cv == "prefit" else learner
    clf = ConvexAggregationClassifierCV(
        binaries, code=code, alphas=n_alphas, alpha_cv=n_folds, cv=cv, **PAPER
    )
    with spies(monkeypatch) as s:
        clf.fit(X, y)
    assert s.checks == 1  # the folds are rows of the checked outputs
    assert s.loops == n_folds + 1  # one path per fold, then the fit at alpha_
    assert len(s.solves) == n_folds * n_alphas + 1 and all(s.solves)
    if cv == "prefit":  # the final fit is the decoder's fit at alpha_ on the same outputs
        Q = predict_binaries(binaries, X, "proba")
        ref = ConvexDecoder(alpha=clf.alpha_).fit(Q, y, code)
        np.testing.assert_array_equal(ref.weights_, clf.weights_)


def test_in_sample_cv_checks_each_folds_own_outputs(monkeypatch, iris):
    X, y = iris
    clf = ConvexAggregationClassifierCV(
        LogisticRegression(max_iter=500), alphas=3, alpha_cv=2, cv="in_sample", **PAPER
    )
    with spies(monkeypatch) as s:
        clf.fit(X, y)
    # each fold's binaries give outputs of their own (fit and held-out rows), then the refit
    assert (s.checks, s.loops, len(s.solves)) == (2 * 2 + 1, 3, 2 * 3 + 1)
    assert all(s.solves)


def test_fit_problem_refuses_a_problem_of_another_model(outputs):
    Q, y, code = outputs
    problem = ConvexDecoder(fit_intercept=True).aggregation_problem(Q, y, code)
    with pytest.raises(ValueError, match="another model"):
        ConvexDecoder().fit_problem(problem)
    # the same model: the same weights as fit, bit for bit
    rows = np.arange(0, y.size, 2)
    taken = ConvexDecoder(fit_intercept=True).fit_problem(problem.take(rows))
    direct = ConvexDecoder(fit_intercept=True).fit(Q[rows], y[rows], code)
    np.testing.assert_array_equal(taken.weights_, direct.weights_)
    np.testing.assert_array_equal(taken.intercept_, direct.intercept_)


class _ContractOnly:
    """An objective with the contract's required attributes and nothing else."""

    def __init__(self, objective):
        for name in REQUIRED:
            setattr(self, name, getattr(objective, name))


def test_the_equal_weights_start_reads_only_the_contract(outputs):
    Q, y, code = outputs
    full = BlockedObjective.from_outputs(Q, code, y, Penalty())
    bare = _ContractOnly(full)
    assert not any(hasattr(bare, name) for name in OPTIONAL)
    c = uniform_start(bare)[0]
    # independent reference: the best equal weight on a fine grid of f(c 1)
    grid = np.exp(np.linspace(np.log(1e-2), np.log(1e3), 4001))
    values = [full.value(np.full(full.n_variables, g)) for g in grid]
    best = grid[int(np.argmin(values))]
    assert abs(np.log(c / best)) < 0.02
    # with the optional penalty the search is bounded by it, to the same answer
    assert abs(np.log(uniform_start(full)[0] / best)) < 0.02
