"""WMAP, the spec's reconstruction (section 4.6): inner MAP problem and learned weights."""

import warnings

import numpy as np
import pytest
from scipy.optimize import minimize
from scipy.special import softmax

from convexagg.codes import one_vs_one, one_vs_rest
from convexagg.datasets import make_broken_classifier_outputs
from convexagg.decoders import BradleyTerryDecoder, WMAPDecoder
from convexagg.decoders.gbtm import generalized_bradley_terry
from convexagg.decoders.wmap import wmap_criterion_gradient

APS3 = one_vs_one(3)
OVA3 = one_vs_rest(3)


def wmap(Q, code, prior, weights="uniform", y=None, **kw):
    y = np.zeros(len(Q), dtype=int) if y is None else y
    return WMAPDecoder(weights=weights, prior_strength=prior, **kw).fit(Q, y, code)


def kl2(a, b):
    return a * np.log(a / b) + (1 - a) * np.log((1 - a) / (1 - b))


def generic_map(r, code, w, prior):
    """The inner problem by L-BFGS on theta with numerical gradients (independent)."""

    def F(theta):
        p = softmax(theta)
        total = 0.0
        for j in range(code.shape[1]):
            plus, minus = p[code[:, j] == 1].sum(), p[code[:, j] == -1].sum()
            total += w[j] * kl2(r[j], plus / (plus + minus))
        return total - prior * np.log(p).sum()

    res = minimize(F, np.zeros(code.shape[0]), method="BFGS", options={"gtol": 1e-11})
    return softmax(res.x)


ORACLES = [
    (OVA3, [0.6, 0.5, 0.2], 0.1, [0.4278437003, 0.3649885411, 0.2071677586]),
    (OVA3, [0.6, 0.5, 0.2], 1.0, [0.3566119941, 0.3420239135, 0.3013640923]),
    (APS3, [0.9, 0.4, 0.7], 0.1, [0.4334104129, 0.2690458749, 0.2975437122]),
    (APS3, [0.9, 0.4, 0.7], 1.0, [0.3601014078, 0.3155406811, 0.3243579112]),
]


@pytest.mark.parametrize("code, r, prior, expected", ORACLES)
def test_spec_oracles_and_generic_optimiser(code, r, prior, expected):
    dec = wmap([r], code, prior)  # uniform weights: 1/3 each
    np.testing.assert_allclose(dec.weights_, [1 / 3] * 3)
    P = dec.predict_proba([r])
    np.testing.assert_allclose(P, [expected], atol=1e-9)
    np.testing.assert_allclose(P[0], generic_map(np.array(r), code, dec.weights_, prior), atol=1e-7)


def test_no_prior_is_gbtm():
    rng = np.random.default_rng(0)
    code = one_vs_one(4)
    Q = rng.uniform(0.05, 0.95, size=(10, 6))
    y = rng.integers(4, size=10)
    for weights in ("uniform", "n_samples"):
        gbtm = BradleyTerryDecoder(weights=weights).fit(Q, y, code).predict_proba(Q)
        fixed = wmap(Q, code, 0.0, weights=weights, y=y)
        np.testing.assert_allclose(fixed.predict_proba(Q), gbtm, atol=1e-9)
    counts = fixed.n_samples_per_classifier_
    np.testing.assert_allclose(fixed.weights_, counts / counts.sum())


def test_prior_shrinks_towards_uniform_and_keeps_the_ova_argmax():
    rng = np.random.default_rng(1)
    Q = rng.uniform(0.02, 0.98, size=(20, 3))
    entropies = []
    for prior in (0.0, 1e-3, 0.1, 1.0, 10.0):
        P = wmap(Q, OVA3, prior).predict_proba(Q)
        np.testing.assert_array_equal(P.argmax(axis=1), Q.argmax(axis=1))
        entropies.append(-(P * np.log(P)).sum(axis=1))
    assert (np.diff(entropies, axis=0) >= -1e-12).all()
    P = wmap(Q, OVA3, 1e6).predict_proba(Q)
    np.testing.assert_allclose(P, 1 / 3, atol=1e-5)


def test_inner_objective_never_increases_over_sweeps():
    rng = np.random.default_rng(2)
    for code in (one_vs_one(4), one_vs_rest(5)):
        R = rng.uniform(0.02, 0.98, size=(30, code.shape[1]))
        w = rng.uniform(0.1, 1.0, size=code.shape[1])
        res = generalized_bradley_terry(
            R, code, w, prior=0.05, max_iter=2000, record_history=True, early_newton=False
        )
        steps = np.diff(res.objective, axis=0)
        valid = np.isfinite(steps)
        assert valid.sum() > 3 * len(R) and res.n_fallback == 0
        assert (steps[valid] <= 1e-12 * (1 + np.abs(res.objective[:-1][valid]))).all()


@pytest.mark.parametrize("criterion", ["log_likelihood", "expected_accuracy", "brier"])
@pytest.mark.parametrize("prior", [0.0, 0.05])
def test_implicit_gradient_matches_central_differences(criterion, prior):
    """The spec's check: a random 6-classifier code for 4 classes, step 1e-6, 1e-6 agreement."""
    rng = np.random.default_rng(3)
    code = np.array(
        [
            [1, -1, 1, 0],
            [1, 1, -1, -1],
            [0, 1, -1, 1],
            [-1, 0, 1, -1],
            [1, -1, -1, 1],
            [-1, 1, 0, 1],
        ]
    ).T
    R = rng.uniform(0.05, 0.95, size=(15, 6))
    y = rng.integers(4, size=15)
    w = rng.uniform(0.5, 1.5, size=6)

    def J(w):
        P = generalized_bradley_terry(R, code, w, prior=prior, tol=1e-14, max_iter=0).proba
        return wmap_criterion_gradient(R, code, w, P, y, prior, criterion)

    value, grad, _ = J(w)
    numeric = [(J(w + e)[0] - J(w - e)[0]) / 2e-6 for e in 1e-6 * np.eye(6)]
    np.testing.assert_allclose(grad, numeric, atol=1e-6)


def test_learned_weights_drop_the_broken_classifier_and_objective_decreases():
    """The paper's synthetic study: the third (useless) classifier gets the smallest weight."""
    Q, y, code = make_broken_classifier_outputs(n_per_class=40, random_state=0)
    dec = WMAPDecoder().fit(Q, y, code)
    w = dec.weights_
    assert w[2] < 0.2 * min(w[0], w[1])
    assert dec.n_iter_ >= 1
    history = dec.history_["objective"]
    assert len(history) == dec.n_iter_ + 1 == len(dec.history_["weights"])
    assert (np.diff(history) <= 1e-9 * np.abs(history[:-1])).all()
    fixed = WMAPDecoder(weights="n_samples").fit(Q, y, code)
    assert (dec.predict(Q) == y).mean() > (fixed.predict(Q) == y).mean()
    np.testing.assert_allclose(fixed.weights_, 1 / 3)


def test_learned_weights_without_prior_sum_to_one():
    Q, y, code = make_broken_classifier_outputs(n_per_class=20, random_state=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # degenerate optimum at the simplex boundary
        dec = WMAPDecoder(prior_strength=0.0, max_outer_iter=10).fit(Q, y, code)
    assert dec.weights_.sum() == pytest.approx(1.0)
    assert (dec.weights_ > 0).all()


def test_margins_are_refused():
    with pytest.raises(ValueError, match="needs probabilities"):
        WMAPDecoder().fit(np.zeros((3, 3)), [0, 1, 2], APS3, output="margin")
