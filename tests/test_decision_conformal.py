"""Conformal class sets: the scores and the quantile rule by hand, MAPIE on the same
probabilities, coverage on exchangeable data, and cross-conformal sets from the
out-of-fold outputs of the default cv (no extra fit)."""

import math

import numpy as np
import pytest
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.datasets import load_wine
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils._param_validation import InvalidParameterError

from convexagg import ConvexAggregationClassifier
from convexagg.decision import ConformalClassifier, class_scores, conformal_pvalues


class ProbaIdentity(ClassifierMixin, BaseEstimator):
    """A fitted classifier whose probabilities are its input: ``X`` is ``P``."""

    def fit(self, X, y):
        self.classes_ = np.unique(y)
        self.n_features_in_ = np.asarray(X).shape[1]
        return self

    def predict_proba(self, X):
        return np.asarray(X, dtype=float)

    def predict(self, X):
        return self.classes_[np.argmax(X, axis=1)]


def _aps_draws(random_state, n_calibration, n_test):
    """The uniform draws of ConformalClassifier's APS: calibration, then a seed for the test."""
    rng = np.random.RandomState(random_state)
    u_cal = rng.uniform(size=n_calibration)
    return u_cal, np.random.RandomState(rng.randint(np.iinfo(np.int32).max)).uniform(size=n_test)


def _draw(rng, n, K=4, concentration=0.7):
    """Exchangeable (probabilities, label drawn from them) pairs: the model is calibrated."""
    P = rng.dirichlet(np.full(K, concentration), size=n)
    y = (rng.random(n)[:, None] > np.cumsum(P, axis=1)).sum(axis=1)
    return P, np.minimum(y, K - 1)


def test_scores_by_hand():
    rng = np.random.default_rng(0)
    P = np.round(rng.dirichlet(np.ones(4), size=60), 1)  # ties on purpose
    P /= P.sum(axis=1, keepdims=True)
    aps = np.array([[sum(p for p in row if p > row[k]) + row[k] for k in range(4)] for row in P])
    np.testing.assert_allclose(class_scores(P, "aps"), aps, atol=1e-12)
    u = rng.uniform(size=60)
    randomised = [
        [sum(p for p in row if p > row[k]) + ui * row[k] for k in range(4)] for row, ui in zip(P, u)
    ]
    np.testing.assert_allclose(class_scores(P, "aps", u), randomised, atol=1e-12)
    np.testing.assert_allclose(class_scores(P, "lac"), 1 - P)
    with pytest.raises(ValueError, match="score must be one of"):
        class_scores(P, "raps")


@pytest.mark.parametrize("score", ["lac", "aps"])
def test_split_sets_are_the_finite_sample_quantile_rule(score):
    rng = np.random.default_rng(1)
    P_cal, y_cal = _draw(rng, 137)
    P_test, _ = _draw(rng, 200)
    error_rate = 0.1
    u_cal, u_test = _aps_draws(0, 137, 200) if score == "aps" else (None, None)
    s = class_scores(P_cal, score, u_cal)[np.arange(137), y_cal]
    # the ceil((n + 1)(1 - error_rate))-th smallest score, i.e. the quantile at level
    # ceil((n + 1)(1 - error_rate)) / n with numpy's "lower" method (MAPIE's rule)
    r = math.ceil((137 + 1) * (1 - error_rate))
    q = np.sort(s)[r - 1]
    assert q == np.quantile(s, r / 137, method="lower")
    expected = class_scores(P_test, score, u_test) <= q
    clf = ConformalClassifier(
        ProbaIdentity().fit(P_cal, y_cal),
        error_rate=error_rate,
        conformity_score=score,
        cv="prefit",
        random_state=0,
    ).fit(P_cal, y_cal)
    np.testing.assert_array_equal(clf.predict_set(P_test), expected)


def test_split_lac_sets_match_mapie():
    mapie = pytest.importorskip("mapie.classification")
    rng = np.random.default_rng(2)
    P_cal, y_cal = _draw(rng, 300)
    P_test, _ = _draw(rng, 300)
    model = ProbaIdentity().fit(P_cal, y_cal)
    theirs = mapie.SplitConformalClassifier(
        model, confidence_level=0.9, conformity_score="lac", prefit=True
    ).conformalize(P_cal, y_cal)
    ours = ConformalClassifier(model, error_rate=0.1, cv="prefit").fit(P_cal, y_cal)
    np.testing.assert_array_equal(ours.predict_set(P_test), theirs.predict_set(P_test)[1][:, :, 0])


@pytest.mark.parametrize(
    "score, class_conditional", [("lac", False), ("aps", False), ("lac", True)]
)
def test_split_coverage_on_exchangeable_data(score, class_conditional):
    """Mean coverage over many calibration draws is ceil((n+1)(1-a))/(n+1) for continuous
    scores (marginal), and at least 1 - a within every class (Mondrian)."""
    rng = np.random.default_rng(3)
    n_cal = 150 if class_conditional else 60  # Mondrian: > 9 samples in every class
    n_test, reps, error_rate = 100, 600, 0.1
    covered, per_class = [], np.zeros((2, 3))
    for _ in range(reps):
        P, y = _draw(rng, n_cal + n_test, K=3, concentration=1.0)
        model = ProbaIdentity().fit(P, y)
        clf = ConformalClassifier(
            model,
            error_rate=error_rate,
            conformity_score=score,
            cv="prefit",
            class_conditional=class_conditional,
            random_state=rng.integers(2**31),
        ).fit(P[:n_cal], y[:n_cal])
        hit = clf.predict_set(P[n_cal:])[np.arange(n_test), y[n_cal:]]
        covered.append(hit.mean())
        np.add.at(per_class, (0, y[n_cal:]), hit)
        np.add.at(per_class, (1, y[n_cal:]), 1)
    mean = np.mean(covered)
    se = np.std(covered) / np.sqrt(reps)
    if class_conditional:
        assert np.all(per_class[0] / per_class[1] >= 1 - error_rate - 4 * se * np.sqrt(3))
    else:
        exact = math.ceil((n_cal + 1) * (1 - error_rate)) / (n_cal + 1)
        assert abs(mean - exact) < 4 * se, (mean, exact, se)


def test_pvalues_pool_the_groups():
    cal = np.array([0.1, 0.5, 0.9, 0.3, 0.7])
    groups = np.array([0, 0, 0, 1, 1])
    test = np.array([[[0.5]], [[0.2]]])  # group 0's model scores 0.5, group 1's 0.2
    # group 0: #{0.5, 0.9} >= 0.5 = 2; group 1: #{0.3, 0.7} >= 0.2 = 2
    np.testing.assert_allclose(conformal_pvalues(test, cal, groups), [[(1 + 4) / 6]])


@pytest.fixture(scope="module")
def wine():
    X, y = load_wine(return_X_y=True)
    rng = np.random.default_rng(0)
    order = rng.permutation(len(y))
    return X[order[:120]], y[order[:120]], X[order[120:]], y[order[120:]]


def _binary():
    return make_pipeline(StandardScaler(), LogisticRegression())


def test_out_of_fold_probabilities_are_the_fold_members(wine):
    """Without a penalty chosen by cross-validation, the fitted decoder on each fold
    member's outputs (with one: test_penalty_selection, the choice's fits)."""
    X, y, _, _ = wine
    clf = ConvexAggregationClassifier(_binary(), zero_entry_penalty=None, random_state=0)
    clf.fit(X, y)
    assert clf.oof_proba_.shape == (120, 3) and np.all(clf.oof_fold_ >= 0)
    for k, member in enumerate(clf.estimators_):
        rows = clf.oof_fold_ == k
        Q = np.column_stack([est.predict_proba(X[rows])[:, 1] for est in member])
        np.testing.assert_allclose(clf.oof_proba_[rows], clf.decoder_.predict_proba(Q))
    # a new decoder refreshes them
    clf.set_params(alpha=1.0).fit_decoder(X, y)
    Q = np.column_stack(
        [est.predict_proba(X[clf.oof_fold_ == 0])[:, 1] for est in clf.estimators_[0]]
    )
    np.testing.assert_allclose(clf.oof_proba_[clf.oof_fold_ == 0], clf.decoder_.predict_proba(Q))
    assert ConvexAggregationClassifier(cv="in_sample").fit(X, y).oof_proba_ is None


@pytest.mark.parametrize("score", ["lac", "aps"])
def test_cross_conformal_pvalues_by_hand(wine, score):
    X, y, X_test, _ = wine
    clf = ConvexAggregationClassifier(_binary(), random_state=0)
    conformal = ConformalClassifier(clf, conformity_score=score, random_state=0).fit(X, y)
    model = conformal.estimator_
    u_cal, u_test = _aps_draws(0, 120, 5) if score == "aps" else (None, None)
    cal = class_scores(model.oof_proba_, score, u_cal)[np.arange(120), y]
    np.testing.assert_allclose(conformal.calibration_scores_, cal)
    x = X_test[:5]
    expected = np.zeros((5, 3))
    for k, member in enumerate(model.estimators_):
        Q = np.column_stack([est.predict_proba(x)[:, 1] for est in member])
        s_test = class_scores(model.decoder_.predict_proba(Q), score, u_test)
        for i in np.flatnonzero(model.oof_fold_ == k):
            expected += cal[i] >= s_test
    np.testing.assert_allclose(conformal.predict_pvalues(x), (1 + expected) / 121)
    np.testing.assert_array_equal(conformal.predict_set(x), (1 + expected) / 121 > 0.1)
    np.testing.assert_array_equal(conformal.predict(x), model.predict(x))


def test_cross_conformal_needs_no_extra_fit(wine):
    X, y, X_test, y_test = wine
    fits = []

    class Counting(LogisticRegression):
        def fit(self, X, y, sample_weight=None):
            fits.append(1)
            return super().fit(X, y, sample_weight)

    learner = make_pipeline(StandardScaler(), Counting())
    ConvexAggregationClassifier(learner, random_state=0).fit(X, y)
    alone = len(fits)
    fits.clear()
    conformal = ConformalClassifier(ConvexAggregationClassifier(learner, random_state=0))
    conformal.fit(X, y)
    assert len(fits) == alone
    # a frozen fitted model gives the same sets, with no fit at all
    fits.clear()
    frozen = ConformalClassifier(FrozenEstimator(conformal.estimator_)).fit(X, y)
    assert not fits
    np.testing.assert_array_equal(frozen.predict_set(X_test), conformal.predict_set(X_test))
    assert conformal.predict_set(X_test)[np.arange(len(y_test)), y_test].mean() >= 0.8


def test_float_cv_holds_out_a_stratified_share(wine):
    X, y, X_test, _ = wine
    conformal = ConformalClassifier(_binary(), cv=0.5, random_state=0).fit(X, y)
    assert conformal.calibration_scores_.shape == (60,)
    held_out = np.bincount(conformal.calibration_labels_)
    assert np.all(np.abs(held_out - np.bincount(y) / 2) <= 1)
    assert conformal.predict_set(X_test).shape == (len(X_test), 3)


def test_errors(wine):
    X, y, _, _ = wine
    with pytest.raises(ValueError, match="cv='out_of_fold' needs a convexagg"):
        ConformalClassifier(_binary()).fit(X, y)
    with pytest.raises(ValueError, match="cv='out_of_fold' needs a convexagg"):
        ConformalClassifier(ConvexAggregationClassifier(cv="in_sample")).fit(X, y)
    with pytest.raises(ValueError, match=r"error_rate=0.01 needs more than 99 calibration"):
        ConformalClassifier(_binary(), cv=0.5, error_rate=0.01).fit(X, y)
    with pytest.raises(ValueError, match="in the smallest class"):
        ConformalClassifier(_binary(), cv=0.2, error_rate=0.1, class_conditional=True).fit(X, y)
    with pytest.raises(InvalidParameterError, match="'error_rate'"):
        ConformalClassifier(_binary(), error_rate=1.0).fit(X, y)
    with pytest.raises(InvalidParameterError, match="'conformity_score'"):
        ConformalClassifier(_binary(), conformity_score="raps").fit(X, y)
    fitted = ConvexAggregationClassifier(_binary(), random_state=0).fit(X, y)
    with pytest.raises(ValueError, match="fit needs the data it was fitted with"):
        ConformalClassifier(FrozenEstimator(fitted)).fit(X[:100], y[:100])
    with pytest.raises(ValueError, match="labels that the estimator's classes_ do not"):
        ConformalClassifier(fitted, cv="prefit").fit(X, y + 5)
