"""GBTM (generalized Bradley-Terry) against the baselines spec's oracles (section 4.3)."""

import numpy as np
import pytest

from convexagg.codes import complete, one_vs_one, one_vs_rest, sparse_random
from convexagg.decoders import BradleyTerryDecoder
from convexagg.decoders.gbtm import (
    generalized_bradley_terry,
    team_gradient,
    team_hessian,
    team_objective,
)

APS3 = one_vs_one(3)  # columns (0 v 1), (0 v 2), (1 v 2): the spec's rows 1v2, 1v3, 2v3
OVA3 = one_vs_rest(3)
# the spec's K = 4 code G (rows there = columns here)
G = np.array([[1, -1, 0, 0], [0, 1, -1, 0], [0, 0, 1, -1], [1, 1, -1, -1], [1, -1, 1, 0]]).T


def team_model(P, code):
    """mu_j(p) = pi+_j / pi_j, by explicit sums."""
    out = np.zeros((P.shape[0], code.shape[1]))
    for j in range(code.shape[1]):
        plus = P[:, code[:, j] == 1].sum(axis=1)
        minus = P[:, code[:, j] == -1].sum(axis=1)
        out[:, j] = plus / (plus + minus)
    return out


def gbtm(Q, code, weights="uniform", **kw):
    y = np.zeros(len(Q), dtype=int)
    return BradleyTerryDecoder(weights=weights, **kw).fit(Q, y, code)


@pytest.mark.parametrize(
    "code, p_star",
    [
        (APS3, [0.5, 0.3, 0.2]),
        (OVA3, [0.5, 0.3, 0.2]),
        (complete(3), [0.5, 0.3, 0.2]),
        (G, [0.4, 0.3, 0.2, 0.1]),
        (complete(5), [0.3, 0.25, 0.2, 0.15, 0.1]),
    ],
)
def test_recovers_consistent_probabilities(code, p_star):
    r = team_model(np.array([p_star]), code)
    P = gbtm(r, code).predict_proba(r)
    np.testing.assert_allclose(P, [p_star], atol=1e-8)


def test_spec_r_values_of_the_recovery_examples():
    p = np.array([[0.5, 0.3, 0.2]])
    np.testing.assert_allclose(team_model(p, APS3), [[0.625, 0.7142857143, 0.6]])
    np.testing.assert_allclose(team_model(p, complete(3)), [[0.5, 0.7, 0.8]])
    np.testing.assert_allclose(
        team_model(np.array([[0.4, 0.3, 0.2, 0.1]]), G),
        [[0.5714285714, 0.6, 0.6666666667, 0.7, 0.6666666667]],
    )


def test_spec_oracles_inconsistent_inputs():
    r = [[0.9, 0.4, 0.7]]
    P = gbtm(r, APS3).predict_proba(r)
    np.testing.assert_allclose(P, [[0.4810682373, 0.2416391743, 0.2772925885]], atol=1e-9)
    P = gbtm(r, APS3, weights=[10, 20, 30]).predict_proba(r)
    np.testing.assert_allclose(P, [[0.3814576503, 0.3543109274, 0.2642314224]], atol=1e-9)

    r = np.array([[0.6, 0.5, 0.2]])
    P = gbtm(r, OVA3).predict_proba(r)
    np.testing.assert_allclose(P, [[0.4765933048, 0.3830845766, 0.1403221186]], atol=1e-9)
    stationary = r / P - (1 - r) / (1 - P)  # OVA optimality: equal for all classes
    np.testing.assert_allclose(stationary, 0.4947, atol=1e-4)

    r = [[0.7, 0.6, 0.8, 0.65, 0.55]]
    expected = [[0.4146086657, 0.3028357354, 0.2219574750, 0.0605981240]]
    dec = gbtm(r, G)
    np.testing.assert_allclose(dec.predict_proba(r), expected, atol=1e-9)
    other_start = dec.decode(r, p0=[[0.1, 0.2, 0.3, 0.4]]).proba
    np.testing.assert_allclose(other_start, expected, atol=1e-9)


def test_n_samples_weights_are_counted_from_the_labels():
    # one-vs-one counts N_j = n_a + n_b: (0 v 1) 10, (0 v 2) 20, (1 v 2) 30
    y = np.repeat([1, 2], [10, 20])
    Q = np.full((30, 3), 0.5)
    dec = BradleyTerryDecoder(weights="n_samples").fit(Q, y, APS3)
    np.testing.assert_array_equal(dec.n_samples_per_classifier_, [10, 20, 30])
    np.testing.assert_array_equal(dec.weights_, [10, 20, 30])
    np.testing.assert_allclose(
        dec.predict_proba([[0.9, 0.4, 0.7]]), [[0.3814576503, 0.3543109274, 0.2642314224]]
    )
    ova = BradleyTerryDecoder(weights="n_samples").fit(np.full((30, 3), 0.5), y, OVA3)
    np.testing.assert_array_equal(ova.weights_, [30, 30, 30])


def random_instances():
    rng = np.random.default_rng(0)
    codes = [
        one_vs_one(4),
        one_vs_rest(5),
        complete(4),
        G,
        sparse_random(6, n_candidates=10, random_state=0),
    ]
    for code in codes:
        R = rng.uniform(0.02, 0.98, size=(30, code.shape[1]))
        v = rng.uniform(0.5, 2.0, size=code.shape[1])
        yield code, R, v


@pytest.mark.parametrize("code, R, v", list(random_instances()))
def test_objective_never_increases_over_sweeps(code, R, v):
    res = generalized_bradley_terry(
        R, code, v, max_iter=3000, record_history=True, early_newton=False
    )
    F = res.objective
    steps = np.diff(F, axis=0)
    valid = np.isfinite(steps)
    assert valid.sum() > 3 * R.shape[0]
    assert (steps[valid] <= 1e-12 * (1 + np.abs(F[:-1][valid]))).all()
    # the recorded objective is team_objective at the returned point
    last = F[np.isfinite(F).sum(axis=0) - 1, np.arange(R.shape[0])]
    np.testing.assert_allclose(last, team_objective(R, code, v, res.proba), rtol=1e-10)


@pytest.mark.parametrize("code, R, v", list(random_instances()))
def test_stationary_and_newton_safeguard_agrees_with_the_fixed_point(code, R, v):
    slow = generalized_bradley_terry(R, code, v, max_iter=20000, early_newton=False)
    assert slow.converged.all() and slow.n_fallback == 0
    grad = team_gradient(R, code, v, slow.proba)
    assert np.abs(grad).max() <= 1e-9 * v.sum()
    # a few sweeps then Newton (and Newton alone) reach the same point
    for max_iter in (5, 0):
        fast = generalized_bradley_terry(R, code, v, max_iter=max_iter)
        assert fast.converged.all() and fast.n_fallback == R.shape[0]
        np.testing.assert_allclose(fast.proba, slow.proba, atol=1e-7)


def test_team_gradient_and_hessian_match_finite_differences():
    from scipy.special import softmax

    rng = np.random.default_rng(4)
    r = rng.uniform(0.1, 0.9, size=(1, G.shape[1]))
    v = rng.uniform(0.5, 2.0, size=G.shape[1])
    theta = rng.normal(size=4)
    for prior in (0.0, 0.3):

        def F(t, prior=prior):
            return team_objective(r, G, v, softmax(t)[None], prior)[0]

        def grad(t, prior=prior):
            return team_gradient(r, G, v, softmax(t)[None], prior)[0]

        eye = np.eye(4) * 1e-6
        num_g = np.array([(F(theta + e) - F(theta - e)) / 2e-6 for e in eye])
        num_h = np.array([(grad(theta + e) - grad(theta - e)) / 2e-6 for e in eye])
        np.testing.assert_allclose(grad(theta), num_g, atol=1e-8)
        H = team_hessian(r, G, v, softmax(theta)[None], prior)[0]
        np.testing.assert_allclose(H, num_h, atol=1e-8)
        np.testing.assert_allclose(H @ np.ones(4), 0, atol=1e-12)


def test_invariances():
    rng = np.random.default_rng(5)
    code = sparse_random(6, n_candidates=10, random_state=5)
    M = code.shape[1]
    R = rng.uniform(0.05, 0.95, size=(8, M))
    P = gbtm(R, code).predict_proba(R)
    # I1: negate a column and flip its outputs
    C1, R1 = code.copy(), R.copy()
    C1[:, [0, 3]] *= -1
    R1[:, [0, 3]] = 1 - R1[:, [0, 3]]
    np.testing.assert_allclose(gbtm(R1, C1).predict_proba(R1), P, atol=1e-8)
    # I2: permute columns (and weights) together
    perm = rng.permutation(M)
    v = rng.uniform(1, 3, size=M)
    Pv = gbtm(R, code, weights=v).predict_proba(R)
    Pv2 = gbtm(R[:, perm], code[:, perm], weights=v[perm]).predict_proba(R[:, perm])
    np.testing.assert_allclose(Pv2, Pv, atol=1e-8)
    # scaling the weights changes nothing
    np.testing.assert_allclose(gbtm(R, code, weights=7 * v).predict_proba(R), Pv, atol=1e-8)
    # I3: relabel the classes (uniform start: the same stationary point)
    cls = rng.permutation(6)
    np.testing.assert_allclose(gbtm(R, code[cls]).predict_proba(R), P[:, cls], atol=1e-8)


def test_extreme_outputs_are_clipped_and_two_classes():
    code = one_vs_one(4)
    R = np.array([[1.0, 0.0, 1.0, 0.0, 1.0, 1.0], [0.5] * 6])
    P = gbtm(R, code).predict_proba(R)
    assert np.isfinite(P).all() and np.allclose(P.sum(axis=1), 1)
    assert np.isfinite(gbtm(R, code).decision_function(R)).all()
    two = np.array([[1], [-1]])
    np.testing.assert_allclose(
        gbtm([[0.3]], two).predict_proba([[0.3], [0.9]]), [[0.3, 0.7], [0.9, 0.1]]
    )


def test_convergence_conditions_and_inputs_are_checked():
    Q = np.full((2, 3), 0.5)
    y = np.array([0, 1])
    with pytest.raises(ValueError, match="class 2 is used by no classifier"):
        BradleyTerryDecoder(weights=[1.0, 0.0, 0.0]).fit(Q, y, APS3)
    # weights leaving classes {0, 1} and {2, 3} never compared with each other
    code = one_vs_one(4)  # (01) (02) (03) (12) (13) (23)
    with pytest.raises(ValueError, match="never compared"):
        BradleyTerryDecoder(weights=[1, 0, 0, 0, 0, 1]).fit(np.full((2, 6), 0.5), y, code)
    with pytest.raises(ValueError, match="non-negative"):
        BradleyTerryDecoder(weights=[1.0, -1.0, 1.0]).fit(Q, y, APS3)
    with pytest.raises(ValueError, match="one entry per code column"):
        BradleyTerryDecoder(weights=[1.0, 1.0]).fit(Q, y, APS3)
    with pytest.raises(ValueError, match="needs probabilities"):
        BradleyTerryDecoder().fit(Q, y, APS3, output="margin")
    # the code itself must be valid (R1-R3)
    with pytest.raises(ValueError, match="identical codewords"):
        BradleyTerryDecoder().fit(np.full((2, 2), 0.5), y, [[1, -1], [-1, 1], [-1, 1]])


def test_vectorised_over_many_samples():
    """2,000 samples x 325 one-vs-one classifiers decode in one call (no per-sample loop)."""
    rng = np.random.default_rng(6)
    code = one_vs_one(26)
    y = rng.integers(26, size=2000)
    on_pos = code[y] == 1
    on_neg = code[y] == -1
    Q = np.where(on_pos, rng.beta(8, 1, size=on_pos.shape), rng.uniform(size=on_pos.shape))
    Q = np.where(on_neg, rng.beta(1, 8, size=on_pos.shape), Q)
    res = gbtm(Q, code).decode(Q)
    assert res.converged.all()
    assert np.allclose(res.proba.sum(axis=1), 1)
    assert (res.proba.argmax(axis=1) == y).mean() > 0.95
