"""``entry_weight_shrinkage`` or ``zero_entry_penalty`` as a list: the value chosen by
cross-validation on the decoder's training outputs (``ConvexDecoder.fit`` with
``candidates``).

Checked against an independent loop: cold fits of ``ConvexDecoder`` with each value
on scikit-learn's folds, scored by ``sklearn.metrics.log_loss``.
"""

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import load_wine
from sklearn.metrics import log_loss
from sklearn.model_selection import StratifiedKFold
from sklearn.preprocessing import scale

from convexagg import ConvexAggregationClassifier, ConvexDecoder
from convexagg.decoders.fitting import solve_path
from convexagg.decoders.selection import (
    PENALTY_CV_FOLDS,
    PenaltyCandidates,
    PenaltyChoice,
    select_penalty,
)
from convexagg.estimator import ZERO_ENTRY_PRIORS
from convexagg.solvers import ProjectedNewton, SolverResult

VALUES = [0.1, 0.003, 0.0003]
ZERO_VALUES = [3.0, 0.1, 0.003]
NAME = "entry_weight_shrinkage"


@pytest.fixture(scope="module")
def wine():
    X, y = load_wine(return_X_y=True)
    return scale(X), y


@pytest.fixture(scope="module")
def fitted(wine):
    X, y = wine
    # a tight tolerance: warm-started and cold fits then agree to far below the scores' gaps
    clf = ConvexAggregationClassifier(
        code="ovo+ovr", entry_weight_shrinkage=VALUES, solver=ProjectedNewton(tol=1e-10)
    )
    return clf.set_params(random_state=0).fit(X, y)


def _with_shrinkage(decoder, value, name="entry_weight_shrinkage"):
    """A new, cold ``ConvexDecoder`` with ``decoder``'s settings and ``name=value``."""
    return ConvexDecoder(**{**decoder.get_params(deep=False), name: value})


def _manual_scores(decoder, Q, y, code, seed, name="entry_weight_shrinkage", values=VALUES):
    folds = StratifiedKFold(PENALTY_CV_FOLDS, shuffle=True, random_state=seed)
    scores = []
    for value in values:
        total = 0.0
        for train, test in folds.split(Q, y):
            fold = _with_shrinkage(decoder, value, name)
            fold.fit(Q[train], y[train], code)
            P = fold.predict_proba(Q[test])
            total += test.size * log_loss(y[test], P, labels=range(code.shape[0]))
        scores.append(total / y.size)
    return np.array(scores)


def test_choice_equals_an_independent_loop(wine, fitted):
    X, y = wine
    Q, y_fit, _ = fitted.training_outputs(X, y)
    scores = _manual_scores(fitted.decoder_, Q, y_fit, fitted.code_matrix_, fitted._fold_seed)
    # warm-started fits against cold ones
    np.testing.assert_allclose(fitted.entry_weight_shrinkage_scores_, scores, rtol=1e-5)
    best = VALUES[int(np.argmin(scores))]
    assert fitted.entry_weight_shrinkage_ == best
    assert fitted.decoder_.entry_weight_shrinkage == best
    reference = _with_shrinkage(fitted.decoder_, best)
    reference.fit(Q, y_fit, fitted.code_matrix_)
    # the fit from the choice's start against a cold one, both at tol=1e-10
    np.testing.assert_allclose(fitted.decoder_.entry_weights_, reference.entry_weights_, rtol=1e-6)
    # the choice matters here: the three scores differ
    assert np.ptp(scores) > 1e-3


def test_the_order_of_the_values_changes_nothing_but_their_order(wine):
    """Each value's score is the same whichever value its fits were warm-started from."""
    X, y = wine
    orders = [[0.3, 0.01, 0.001], [0.001, 0.3, 0.01]]
    fits = [
        ConvexAggregationClassifier(
            code="ovo", entry_weight_shrinkage=v, solver=ProjectedNewton(tol=1e-10), random_state=0
        ).fit(X, y)
        for v in orders
    ]
    by_value = [dict(zip(v, f.entry_weight_shrinkage_scores_)) for v, f in zip(orders, fits)]
    for value in orders[0]:
        np.testing.assert_allclose(by_value[0][value], by_value[1][value], rtol=1e-6)
    assert fits[0].entry_weight_shrinkage_ == fits[1].entry_weight_shrinkage_


def test_stopping_when_worse_is_the_first_minimum_of_the_whole_scan(wine):
    """``stop_when_worse`` fits the values up to the first whose score rises: those values'
    scores and fits are the whole scan's, to the bit, and the choice is the first minimum."""
    X, y = wine
    clf = ConvexAggregationClassifier(code="ovo", random_state=0).fit(X, y)
    Q, y_fit, _ = clf.training_outputs(X, y)
    code, decoder = clf.code_matrix_, clf.decoder_  # the default's model, zero entries and all
    values = tuple(c / y_fit.size for c in (320.0, 80.0, 20.0, 5.0, 1.25, 0.3))
    name = "zero_entry_penalty"
    whole = select_penalty(decoder, Q, y_fit, code, PenaltyCandidates(name, values, 0))
    stop = PenaltyCandidates(name, values, 0, stop_when_worse=True)
    stopped = select_penalty(decoder, Q, y_fit, code, stop)
    rises = np.flatnonzero(np.diff(whole.scores) > 0)
    assert rises.size and rises[0] + 2 < len(values)  # the scan does stop early here
    fitted = rises[0] + 2
    np.testing.assert_array_equal(stopped.scores[:fitted], whole.scores[:fitted])
    assert np.isnan(stopped.scores[fitted:]).all()
    assert stopped.best == int(np.argmin(whole.scores[:fitted]))
    if stopped.best == whole.best:  # the same choice: the same cross-fitted probabilities
        np.testing.assert_array_equal(stopped.held_out_proba, whole.held_out_proba)


def test_weights_enter_the_fits_and_the_scores(wine):
    X, y = wine
    clf = ConvexAggregationClassifier(code="ovo", random_state=0).fit(X, y)
    Q, y_fit, _ = clf.training_outputs(X, y)
    code, candidates = clf.code_matrix_, PenaltyCandidates(NAME, VALUES, 0)
    decoder = ConvexDecoder(alpha=1e-3, fit_intercept=True)
    plain = select_penalty(decoder, Q, y_fit, code, candidates)
    doubled = select_penalty(
        decoder, Q, y_fit, code, candidates, sample_weight=np.full(y.size, 2.0)
    )
    assert plain.best == doubled.best
    np.testing.assert_allclose(plain.scores, doubled.scores, rtol=1e-6)
    # no weight on one class's rows: other fits, other scores
    w = np.where(y_fit == 2, 0.0, 1.0)
    weighted = select_penalty(decoder, Q, y_fit, code, candidates, sample_weight=w)
    assert not np.allclose(weighted.scores, plain.scores)


def test_a_class_smaller_than_the_folds(wine):
    X, y = wine
    keep = np.concatenate([np.flatnonzero(y != 2), np.flatnonzero(y == 2)[:2]])
    clf = ConvexAggregationClassifier(code="ovo", cv=2, entry_weight_shrinkage=VALUES)
    clf.set_params(random_state=0).fit(X[keep], y[keep])
    assert clf.entry_weight_shrinkage_ in VALUES
    assert np.all(np.isfinite(clf.entry_weight_shrinkage_scores_))


@pytest.mark.parametrize(
    "given, message",
    [
        ([0.01], "give at least two finite values > 0"),
        ([0.01, 0.0], "give at least two finite values > 0"),
        ([0.01, np.inf], "give at least two finite values > 0"),
        ([0.01, "a"], "give at least two finite values > 0"),
    ],
)
def test_bad_lists_raise_before_training(wine, given, message):
    X, y = wine
    with pytest.raises(ValueError, match=message):
        ConvexAggregationClassifier(entry_weight_shrinkage=given).fit(X, y)


def test_a_penalty_without_entry_weights_raises(wine):
    X, y = wine
    clf = ConvexAggregationClassifier(entry_weight_shrinkage=VALUES, penalty="l1")
    with pytest.raises(ValueError, match="needs penalty='l2'"):
        clf.fit(X, y)


def test_the_shrinkage_used_is_always_reported(wine):
    """``entry_weight_shrinkage_`` is the value of the last fit, whatever was given."""
    X, y = wine
    clf = ConvexAggregationClassifier(code="ovo", entry_weight_shrinkage=VALUES, random_state=0)
    clf.fit(X, y)
    assert clf.entry_weight_shrinkage_ in VALUES and clf.entry_weight_shrinkage_scores_.size == 3
    clf.set_params(entry_weight_shrinkage=0.05).fit(X, y)
    assert clf.entry_weight_shrinkage_ == 0.05 and clf.entry_weight_shrinkage_scores_ is None
    clf.set_params(entry_weight_shrinkage="auto").fit(X, y)
    assert clf.entry_weight_shrinkage_ == 0.01  # 2 / 178 rows, at the range's top
    clf.set_params(entry_weight_shrinkage=None).fit(X, y)
    assert clf.entry_weight_shrinkage_ is None


@pytest.fixture(scope="module")
def zero_chosen(wine):
    """The zero entries' strength chosen among ``ZERO_VALUES``, and the outputs of the fit."""
    X, y = wine
    clf = ConvexAggregationClassifier(
        code="ovo", zero_entry_penalty=ZERO_VALUES, solver=ProjectedNewton(tol=1e-10)
    ).set_params(random_state=0)
    clf.fit(X, y)
    Q, y_fit, _ = clf.training_outputs(X, y)
    return clf, Q, y_fit


def test_zero_entry_choice_equals_an_independent_loop(zero_chosen):
    clf, Q, y_fit = zero_chosen
    scores = _manual_scores(
        clf.decoder_, Q, y_fit, clf.code_matrix_, clf._fold_seed, "zero_entry_penalty", ZERO_VALUES
    )
    np.testing.assert_allclose(clf.zero_entry_penalty_scores_, scores, rtol=1e-5)
    best = ZERO_VALUES[int(np.argmin(scores))]
    assert clf.zero_entry_penalty_ == best == clf.decoder_.zero_entry_penalty
    assert np.ptp(scores) > 1e-3
    reference = _with_shrinkage(clf.decoder_, best, "zero_entry_penalty")
    reference.fit(Q, y_fit, clf.code_matrix_)
    np.testing.assert_allclose(clf.zero_entry_weights_, reference.zero_entry_weights_, atol=1e-6)
    # the shrinkage was "auto", resolved for the rows, and not chosen
    assert clf.entry_weight_shrinkage_ == 0.01 and clf.entry_weight_shrinkage_scores_ is None


def test_oof_proba_comes_from_the_choice_fits_on_the_other_folds(wine, zero_chosen):
    """With a penalty chosen, each row's ``oof_proba_`` is that of aggregation weights not
    fitted on it: the independent loop's cold fit, at the chosen value, on the other folds.
    Without a choice it is the fitted decoder on the out-of-fold outputs."""
    clf, Q, y_fit = zero_chosen
    folds = StratifiedKFold(PENALTY_CV_FOLDS, shuffle=True, random_state=clf._fold_seed)
    expected = np.full_like(clf.oof_proba_, np.nan)
    for train, test in folds.split(Q, y_fit):
        fold = _with_shrinkage(clf.decoder_, clf.zero_entry_penalty_, "zero_entry_penalty")
        expected[test] = fold.fit(Q[train], y_fit[train], clf.code_matrix_).predict_proba(Q[test])
    np.testing.assert_allclose(clf.oof_proba_, expected, atol=1e-7)
    # not the decoder fitted on these rows: its probabilities are another model's
    assert np.abs(clf.oof_proba_ - clf.decoder_.predict_proba(Q)).max() > 1e-2
    # the decoder's record of its choice, not a side channel of the estimator
    np.testing.assert_array_equal(clf.oof_proba_, clf.decoder_.held_out_proba_)
    np.testing.assert_array_equal(clf.zero_entry_penalty_scores_, clf.decoder_.candidate_scores_)
    assert not hasattr(clf, "_held_out_proba")
    X, y = wine
    plain = clone(clf).set_params(zero_entry_penalty=None).fit(X, y)
    Q, _, _ = plain.training_outputs(X, y)
    np.testing.assert_allclose(plain.oof_proba_, plain.decoder_.predict_proba(Q), rtol=1e-12)


@pytest.mark.parametrize(
    "given, message",
    [
        ([0.01], "give at least two finite values >= 0"),
        ([0.01, -1.0], "give at least two finite values >= 0"),
        ([0.01, np.nan], "give at least two finite values >= 0"),
    ],
)
def test_bad_zero_entry_lists_raise_before_training(wine, given, message):
    X, y = wine
    with pytest.raises(ValueError, match="zero_entry_penalty as a list.*" + message):
        ConvexAggregationClassifier(zero_entry_penalty=given).fit(X, y)


def test_zero_is_a_valid_zero_entry_strength(wine):
    X, y = wine
    clf = ConvexAggregationClassifier(code="ovo", zero_entry_penalty=[0.0, 1.0], random_state=0)
    assert clf.fit(X, y).zero_entry_penalty_ in (0.0, 1.0)


def test_two_lists_at_once_raise(wine):
    """Each penalty is chosen with the other fixed (a list of shrinkages with "auto" zero
    entries fits them without zero entries: test_zero_entries)."""
    X, y = wine
    clf = ConvexAggregationClassifier(entry_weight_shrinkage=VALUES, zero_entry_penalty=ZERO_VALUES)
    with pytest.raises(ValueError, match="cannot go with zero_entry_penalty as a list"):
        clf.fit(X, y)


def test_the_zero_entry_strength_used_is_always_reported(wine):
    X, y = wine
    clf = ConvexAggregationClassifier(code="ovo", zero_entry_penalty="auto", random_state=0)
    assert round(clf.fit(X, y).zero_entry_penalty_ * y.size, 9) in ZERO_ENTRY_PRIORS
    assert clf.zero_entry_penalty_scores_.shape == (len(ZERO_ENTRY_PRIORS),)
    assert clf.set_params(zero_entry_penalty=0.5).fit(X, y).zero_entry_penalty_ == 0.5
    assert clf.zero_entry_penalty_scores_ is None
    assert clf.set_params(zero_entry_penalty=None).fit(X, y).zero_entry_penalty_ is None


def test_the_decoder_chooses_then_fits_at_the_choice(zero_chosen):
    """``ConvexDecoder.fit`` with candidates: the choice of ``select_penalty``, then a fit
    at the chosen value from the mean of its fits on the folds: equal, bit for bit, to
    the solver's run on the same objective from that start, and within the solver's
    tolerance of a plain fit at it (from the solver's own start)."""
    _, Q, y_fit = zero_chosen
    code = zero_chosen[0].code_matrix_
    decoder = ConvexDecoder(entry_weight_shrinkage=0.01, fit_intercept=True)
    candidates = PenaltyCandidates("zero_entry_penalty", ZERO_VALUES, random_state=0)
    dec = clone(decoder).fit(Q, y_fit, code, candidates=candidates)
    choice = select_penalty(decoder, Q, y_fit, code, candidates)
    assert dec.zero_entry_penalty == ZERO_VALUES[choice.best]  # set to the chosen value
    np.testing.assert_array_equal(dec.candidate_scores_, choice.scores)
    np.testing.assert_array_equal(dec.held_out_proba_, choice.held_out_proba)
    fits = [point.solved.result for point in _choice_points(decoder, Q, y_fit, code, candidates)]
    n = candidates.n_folds
    start = np.mean([fit.w for fit in fits[choice.best * n : (choice.best + 1) * n]], axis=0)
    plain = clone(decoder).set_params(zero_entry_penalty=dec.zero_entry_penalty)
    problem = plain.aggregation_problem(Q, y_fit, code)
    config = plain.solver_config()
    objective = problem.likelihood(plain.penalty_for(code=code), config.storage_dtype(Q.shape[1]))
    from_start = config.solve(objective, SolverResult(w=start, z=None, n_iter=0, converged=True))
    np.testing.assert_array_equal(dec.objective_, from_start.history["objective"][-1])
    assert dec.n_iter_ == from_start.n_iter
    # both the fit from the choice's start and a plain one stop within the solver's
    # tolerance (a projected gradient below 1e-4) of the optimum, which a far tighter
    # tolerance reaches: their objectives above it by far less than 1e-4
    plain.fit(Q, y_fit, code)
    tight = clone(plain).set_params(solver=ProjectedNewton(tol=1e-12)).fit(Q, y_fit, code)
    for fit in (dec, plain):
        assert 0 <= fit.objective_ - tight.objective_ <= 1e-5
    # on a problem validated beforehand: the same fit
    problem = clone(decoder).set_params(zero_entry_penalty=0.0).aggregation_problem(Q, y_fit, code)
    again = clone(decoder).fit_problem(problem, candidates)
    np.testing.assert_array_equal(again.zero_entry_weights_, dec.zero_entry_weights_)
    np.testing.assert_array_equal(again.held_out_proba_, dec.held_out_proba_)
    # a fit without candidates keeps nothing of the last choice
    dec.fit(Q, y_fit, code)
    assert dec.candidate_scores_ is None and dec.held_out_proba_ is None


def _choice_points(decoder, Q, y, code, candidates):
    """The points of the choice among ``candidates``, each solved (its ``start`` and
    ``solved`` set), in the order of the solve loop."""
    model = clone(decoder).set_params(**{candidates.name: candidates.values[0]})
    solver = model.solver_config()
    choice = PenaltyChoice(model, model.aggregation_problem(Q, y, code), candidates, solver)
    points = []

    def record(points_of_choice):
        for point in points_of_choice:
            points.append(point)
            yield point

    solve_path(record(choice.points()), solver)
    return points


def test_each_fit_starts_from_the_nearest_solution(zero_chosen):
    """The first value's fold fits are chained along the folds (each from the fold
    before's solution, the first from the solver's own start); every later value's from
    the same fold's fit of the value before."""
    _, Q, y_fit = zero_chosen
    code = zero_chosen[0].code_matrix_
    decoder = ConvexDecoder(entry_weight_shrinkage=0.01, fit_intercept=True)
    candidates = PenaltyCandidates("zero_entry_penalty", ZERO_VALUES, random_state=0)
    points = _choice_points(decoder, Q, y_fit, code, candidates)
    n = candidates.n_folds
    assert len(points) == n * len(ZERO_VALUES)
    assert points[0].start is None
    for i, point in enumerate(points[1:], start=1):
        source = points[i - 1] if i < n else points[i - n]
        assert point.start is source.solved.result


def test_the_choice_scores_by_likelihood_and_fits_the_formulation(zero_chosen):
    """Another formulation: the values are scored by the likelihood's held-out log-loss
    and the decoder is fitted by its own criterion (the stiffness continuation) at the
    chosen value, as a plain fit at it."""
    clf, Q, y_fit = zero_chosen
    code = clf.code_matrix_
    decoder = ConvexDecoder(formulation="stiffness", tau=10.0, entry_weight_shrinkage=0.01)
    candidates = PenaltyCandidates("zero_entry_penalty", ZERO_VALUES, random_state=0)
    dec = clone(decoder).fit(Q, y_fit, code, candidates=candidates)
    likelihood = clone(decoder).set_params(formulation="likelihood", tau=None)
    choice = select_penalty(likelihood, Q, y_fit, code, candidates)
    np.testing.assert_array_equal(dec.candidate_scores_, choice.scores)
    plain = clone(decoder).set_params(zero_entry_penalty=ZERO_VALUES[choice.best])
    plain.fit(Q, y_fit, code)
    # the continuation starts from the choice's likelihood fits, the plain fit from the
    # solver's start: the same optimum, within the solver's tolerance
    np.testing.assert_allclose(dec.objective_, plain.objective_, rtol=1e-5)
    assert dec.stage_n_iter_.shape == plain.stage_n_iter_.shape


@pytest.mark.parametrize(
    "make, error, message",
    [
        (lambda: PenaltyCandidates("alpha", [1.0, 0.1]), ValueError, "candidates can choose"),
        (lambda: PenaltyCandidates(NAME, [0.1]), ValueError, "give at least two finite"),
        (lambda: PenaltyCandidates(NAME, VALUES, n_folds=1), ValueError, "n_folds must be"),
        (lambda: {NAME: VALUES}, TypeError, "candidates must be a PenaltyCandidates"),
        # zero entries need entry weights, which the decoder does not have
        (lambda: PenaltyCandidates("zero_entry_penalty", ZERO_VALUES), ValueError, "needs entry"),
    ],
)
def test_bad_candidates_raise(zero_chosen, make, error, message):
    _, Q, y_fit = zero_chosen
    with pytest.raises(error, match=message):
        ConvexDecoder().fit(Q, y_fit, zero_chosen[0].code_matrix_, candidates=make())


def test_candidates_need_in_memory_outputs(zero_chosen):
    da = pytest.importorskip("dask.array")
    _, Q, y_fit = zero_chosen
    candidates = PenaltyCandidates(NAME, VALUES)
    with pytest.raises(ValueError, match="candidates are chosen on in-memory NumPy outputs"):
        ConvexDecoder().fit(
            da.from_array(Q), y_fit, zero_chosen[0].code_matrix_, candidates=candidates
        )
