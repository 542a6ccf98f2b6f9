"""Prior shift: Bayes' rule by hand, and EM against the published algorithm
(Saerens, Latinne & Decaestecker 2002, as QuaPy's ``EMQ.EM`` writes it)
reimplemented here as an oracle."""

import warnings

import numpy as np
import pytest
from scipy.stats import norm
from sklearn.datasets import load_iris
from sklearn.exceptions import ConvergenceWarning
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LogisticRegression
from sklearn.utils._param_validation import InvalidParameterError

from convexagg import ConvexAggregationClassifier
from convexagg.decision import PriorShiftClassifier, check_priors, em_priors, shift_priors


def _em_oracle(tr_prev, Px, epsilon):
    """The EM loop of Saerens et al. (2002): E step ``(qs / Ptr) * Px`` normalised,
    M step the mean; stop when the mean absolute change is below ``epsilon``."""
    Ptr = np.array(tr_prev, dtype=float)
    qs, prev = Ptr.copy(), None
    for s in range(100000):
        ps = (qs / Ptr) * Px
        ps /= ps.sum(axis=1, keepdims=True)
        qs = ps.mean(axis=0)
        if prev is not None and np.mean(np.abs(qs - prev)) < epsilon and s > 10:
            return qs
        prev = qs
    raise AssertionError("oracle did not converge")


def _gaussian_posteriors(x, priors, means):
    """Exact posteriors of a 1-D mixture of unit Gaussians."""
    dens = norm.pdf(x[:, None], loc=np.asarray(means)[None, :]) * np.asarray(priors)
    return dens / dens.sum(axis=1, keepdims=True)


def test_shift_is_bayes_rule_by_hand():
    rng = np.random.default_rng(0)
    P = rng.dirichlet(np.ones(3), size=50)
    pi, new = np.array([0.5, 0.3, 0.2]), np.array([0.1, 0.1, 0.8])
    expected = np.empty_like(P)
    for s in range(50):
        num = [P[s, k] * new[k] / pi[k] for k in range(3)]
        expected[s] = [v / sum(num) for v in num]
    np.testing.assert_allclose(shift_priors(P, pi, new), expected, rtol=1e-12)
    np.testing.assert_allclose(shift_priors(P, pi, pi), P, rtol=1e-12)


def test_wrapper_shifts_the_softmax_scores():
    X, y = load_iris(return_X_y=True)
    clf = ConvexAggregationClassifier(cv="in_sample").fit(X, y)
    new = np.array([0.2, 0.2, 0.6])
    wrapped = PriorShiftClassifier(FrozenEstimator(clf), priors=new).fit(X, y)
    np.testing.assert_allclose(wrapped.training_priors_, [1 / 3] * 3)
    # log p' - log p = log(new / pi) - (a constant per row): the additive score shift
    diff = wrapped.predict_log_proba(X) - clf.predict_log_proba(X)
    offset = diff - np.log(new / wrapped.training_priors_)
    np.testing.assert_allclose(offset, offset[:, :1].repeat(3, axis=1), atol=1e-9)
    np.testing.assert_allclose(wrapped.predict_proba(X).sum(axis=1), 1)
    np.testing.assert_array_equal(wrapped.predict(X), wrapped.predict_proba(X).argmax(axis=1))


def test_training_priors_are_weighted_class_frequencies():
    X, y = load_iris(return_X_y=True)
    w = np.where(y == 0, 3.0, 1.0)
    wrapped = PriorShiftClassifier(LogisticRegression(max_iter=1000), priors=[0.2, 0.3, 0.5])
    wrapped.fit(X, y, sample_weight=w)
    np.testing.assert_allclose(wrapped.training_priors_, [150 / 250, 50 / 250, 50 / 250])


def test_em_matches_the_published_algorithm():
    rng = np.random.default_rng(1)
    P = rng.dirichlet([2, 1, 1, 0.5], size=400)
    pi = np.array([0.4, 0.3, 0.2, 0.1])
    ours, n_iter = em_priors(P, pi, smoothing=0.0, tol=1e-13, max_iter=100000)
    np.testing.assert_allclose(ours, _em_oracle(pi, P, 1e-14), atol=1e-8)
    assert n_iter > 1
    # the fixed point: the priors are the mean of the posteriors they shift to
    np.testing.assert_allclose(shift_priors(P, pi, ours).mean(axis=0), ours, atol=1e-9)


def test_smoothing_is_the_map_fixed_point_and_keeps_rare_classes():
    rng = np.random.default_rng(4)
    means, pi = [-2.0, 0.0, 2.0], np.array([1 / 3] * 3)
    y = rng.choice(2, size=40)  # class 2 absent from the deployment sample
    P = _gaussian_posteriors(rng.normal(loc=np.asarray(means)[y]), pi, means)
    mle, _ = em_priors(P, pi, smoothing=0.0, tol=1e-12, max_iter=100000)
    smoothed, _ = em_priors(P, pi, smoothing=1.0, tol=1e-12)
    # MAP under Dirichlet(2): (sum of posteriors + 1) / (n + 3)
    np.testing.assert_allclose(
        (shift_priors(P, pi, smoothed).sum(axis=0) + 1) / (40 + 3), smoothed, atol=1e-9
    )
    assert mle[2] < 1e-3 < 1 / 43 <= smoothed[2]
    with pytest.raises(ValueError, match="smoothing"):
        em_priors(P, pi, smoothing=-1.0)


def test_em_recovers_known_priors_from_exact_posteriors():
    rng = np.random.default_rng(2)
    means, train, deploy = [-2.0, 0.0, 2.0], [1 / 3] * 3, np.array([0.6, 0.3, 0.1])
    y = rng.choice(3, size=20000, p=deploy)
    x = rng.normal(loc=np.asarray(means)[y])
    P = _gaussian_posteriors(x, train, means)  # posteriors under the training priors
    estimate, _ = em_priors(P, train)
    np.testing.assert_allclose(estimate, deploy, atol=0.02)
    # adapted posteriors are the exact deployment posteriors
    np.testing.assert_allclose(
        shift_priors(P, train, deploy), _gaussian_posteriors(x, deploy, means), atol=1e-12
    )


def test_em_wrapper_is_transductive_on_the_batch():
    X, y = load_iris(return_X_y=True)
    clf = ConvexAggregationClassifier(cv="in_sample").fit(X, y)
    wrapped = PriorShiftClassifier(FrozenEstimator(clf)).fit(X, y)
    batch = X[:70]  # 50 setosa, 20 versicolor
    priors = wrapped.estimate_priors(batch)
    np.testing.assert_allclose(
        priors, em_priors(clf.predict_proba(batch), [1 / 3] * 3)[0], atol=1e-12
    )
    assert priors[0] == pytest.approx(50 / 70, abs=0.05)
    np.testing.assert_allclose(
        wrapped.predict_proba(batch),
        shift_priors(clf.predict_proba(batch), [1 / 3] * 3, priors),
        atol=1e-9,
    )


def test_em_convergence_safeguards():
    rng = np.random.default_rng(3)
    P = rng.dirichlet(np.ones(3), size=100)
    with pytest.warns(ConvergenceWarning, match="max_iter=2"):
        _, n_iter = em_priors(P, [0.2, 0.3, 0.5], max_iter=2, tol=1e-15)
    assert n_iter == 2
    # zeros are clipped: finite priors and posteriors, no warning about division
    P[:, 2] = 0.0
    P /= P.sum(axis=1, keepdims=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        q, _ = em_priors(P, [0.2, 0.3, 0.5])
    assert np.all(np.isfinite(q)) and q.sum() == pytest.approx(1)
    with pytest.raises(ValueError, match="max_iter"):
        em_priors(P, [0.2, 0.3, 0.5], max_iter=0)
    with pytest.raises(ValueError, match="tol"):
        em_priors(P, [0.2, 0.3, 0.5], tol=-1.0)


@pytest.mark.parametrize(
    "priors, match",
    [
        ([0.5, 0.5], r"priors must have shape \(3,\)"),
        ([0.5, 0.6, -0.1], "priors must hold finite, non-negative"),
        ([0.5, 0.2, 0.2], "priors must sum to 1"),
        ([np.nan, 0.5, 0.5], "priors must hold finite"),
    ],
)
def test_priors_are_validated(priors, match):
    X, y = load_iris(return_X_y=True)
    with pytest.raises(ValueError, match=match):
        PriorShiftClassifier(LogisticRegression(max_iter=1000), priors=priors).fit(X, y)


def test_training_priors_must_be_positive_and_params_validated():
    X, y = load_iris(return_X_y=True)
    with pytest.raises(ValueError, match="training_priors must hold finite, positive"):
        PriorShiftClassifier(
            LogisticRegression(max_iter=1000), training_priors=[0.5, 0.5, 0.0]
        ).fit(X, y)
    with pytest.raises(InvalidParameterError, match="max_iter"):
        PriorShiftClassifier(LogisticRegression(max_iter=1000), max_iter=0).fit(X, y)
    with pytest.raises(InvalidParameterError, match="'priors'"):
        PriorShiftClassifier(LogisticRegression(max_iter=1000), priors="uniform").fit(X, y)
    assert check_priors([0.25, 0.75], 2).sum() == 1.0


def _imbalanced_wine():
    """Wine with class 2 cut to 12 rows: few rows, so the out-of-fold probabilities'
    mean is off the class frequencies (the model's calibration error in the mean)."""
    from sklearn.datasets import load_wine

    X, y = load_wine(return_X_y=True)
    keep = np.concatenate([np.flatnonzero(y != 2), np.flatnonzero(y == 2)[:12]])
    X = (X - X.mean(axis=0)) / X.std(axis=0)
    return X[keep], y[keep]


def test_oof_training_priors_are_the_mean_out_of_fold_posterior():
    X, y = _imbalanced_wine()
    w = np.where(y == 1, 2.0, 1.0)
    clf = ConvexAggregationClassifier(random_state=0).fit(X, y)
    rows = clf.oof_fold_ >= 0
    assert rows.all()
    by_hand = (w[:, None] * clf.oof_proba_).sum(axis=0) / w.sum()
    for setting in ("auto", "oof"):
        wrapped = PriorShiftClassifier(FrozenEstimator(clf), training_priors=setting)
        np.testing.assert_allclose(wrapped.fit(X, y, sample_weight=w).training_priors_, by_hand)
    freq = PriorShiftClassifier(FrozenEstimator(clf), training_priors="frequencies").fit(X, y)
    np.testing.assert_allclose(freq.training_priors_, np.bincount(y) / len(y))
    # the difference this setting is about: the mean posterior is not the frequencies here
    assert np.abs(by_hand - np.bincount(y, weights=w) / w.sum()).sum() > 1e-3


def test_em_from_oof_priors_finds_no_shift_on_the_training_distribution():
    # EM on the out-of-fold probabilities themselves (data like the training data):
    # from the mean out-of-fold posterior, the published algorithm (the oracle) stays
    # there; from the class frequencies it moves by the model's calibration error.
    X, y = _imbalanced_wine()
    # without intercepts, whose fit would bring the mean out-of-fold posterior to the
    # class frequencies: the two starts must differ for the test to tell them apart
    clf = ConvexAggregationClassifier(fit_intercept=False, random_state=0).fit(X, y)
    oof = PriorShiftClassifier(FrozenEstimator(clf)).fit(X, y).training_priors_
    freq = np.bincount(y) / len(y)
    P = clf.oof_proba_
    q_oof, n_iter = em_priors(P, oof, smoothing=0.0, tol=1e-12)
    np.testing.assert_allclose(q_oof, oof, atol=1e-12)
    assert n_iter == 1
    np.testing.assert_allclose(_em_oracle(oof, P, 1e-14), oof, atol=1e-10)
    q_freq = _em_oracle(freq, P, 1e-14)
    assert np.abs(q_freq - freq).sum() > 1e-3


def test_oof_training_priors_need_out_of_fold_probabilities():
    X, y = load_iris(return_X_y=True)
    clf = ConvexAggregationClassifier(cv="in_sample").fit(X, y)
    with pytest.raises(ValueError, match="training_priors='oof' needs"):
        PriorShiftClassifier(FrozenEstimator(clf), training_priors="oof").fit(X, y)
    # "auto" falls back to the class frequencies
    auto = PriorShiftClassifier(FrozenEstimator(clf)).fit(X, y)
    np.testing.assert_allclose(auto.training_priors_, [1 / 3] * 3)
    fitted = ConvexAggregationClassifier(random_state=0).fit(X, y)
    with pytest.raises(ValueError, match="fit needs the data it was fitted with"):
        PriorShiftClassifier(FrozenEstimator(fitted)).fit(X[:100], y[:100])
    with pytest.raises(InvalidParameterError, match="training_priors"):
        PriorShiftClassifier(FrozenEstimator(fitted), training_priors="mean").fit(X, y)


def test_oof_training_priors_use_only_rows_out_of_fold_with_weight():
    # a splitter that leaves rows out of every test fold: those rows have no out-of-fold
    # probability (oof_fold_ -1) and do not enter the mean; nor do rows of weight 0
    X, y = _imbalanced_wine()
    perm = np.random.default_rng(0).permutation(len(y))
    splits = [(perm[:100], perm[100:]), (perm[50:], perm[:50])]
    clf = ConvexAggregationClassifier(cv=splits, random_state=0).fit(X, y)
    rows = clf.oof_fold_ >= 0
    assert 0 < rows.sum() < len(y)
    w = np.ones(len(y))
    w[np.flatnonzero(rows)[:10]] = 0.0
    keep = rows & (w > 0)
    wrapped = PriorShiftClassifier(FrozenEstimator(clf), training_priors="oof")
    np.testing.assert_allclose(
        wrapped.fit(X, y, sample_weight=w).training_priors_, clf.oof_proba_[keep].mean(axis=0)
    )
    # no row out of fold with a positive weight: "oof" cannot apply, "auto" takes frequencies
    w_none = np.where(rows, 0.0, 1.0)
    with pytest.raises(ValueError, match="on rows of positive weight"):
        wrapped.fit(X, y, sample_weight=w_none)
    auto = PriorShiftClassifier(FrozenEstimator(clf)).fit(X, y, sample_weight=w_none)
    np.testing.assert_allclose(auto.training_priors_, np.bincount(y, weights=w_none) / w_none.sum())
