"""Pairwise coupling (spec sections 4.4, 4.5): Hastie-Tibshirani and Wu-Lin-Weng."""

from itertools import combinations

import numpy as np
import pytest
from scipy.optimize import minimize

from convexagg.codes import one_vs_one, one_vs_rest
from convexagg.decoders import BradleyTerryDecoder, PairwiseCouplingDecoder
from convexagg.decoders.pairwise import pairwise_matrix


def ovo_outputs(upper):
    """One-vs-one outputs from the spec's upper triangle ``R_ab`` (a < b, lexicographic)."""
    return np.array([upper], dtype=float)


def coupler(Q, code=None, **kw):
    code = one_vs_one(round((1 + np.sqrt(1 + 8 * Q.shape[1])) / 2)) if code is None else code
    return PairwiseCouplingDecoder(**kw).fit(Q, np.zeros(len(Q), dtype=int), code)


R3 = ovo_outputs([0.9, 0.4, 0.7])  # R_12, R_13, R_23
R4 = ovo_outputs([0.6, 0.7, 0.8, 0.55, 0.65, 0.6])


def hastie_tibshirani_reference(Rmat, n_iter=20000):
    """Hastie & Tibshirani's iteration on the K x K matrix, one sample, plain loops."""
    K = Rmat.shape[0]
    p = np.full(K, 1.0 / K)
    for _ in range(n_iter):
        for a in range(K):
            num = sum(Rmat[a, b] for b in range(K) if b != a)
            den = sum(p[a] / (p[a] + p[b]) for b in range(K) if b != a)
            p[a] *= num / den
            p /= p.sum()
    return p


def wlw_reference(Rmat):
    """Wu-Lin-Weng method 2 from its definition: min sum_a sum_b!=a (R_ba p_a - R_ab p_b)^2."""
    K = Rmat.shape[0]
    Qm = np.zeros((K, K))
    for a in range(K):
        for b in range(K):
            if a == b:
                Qm[a, a] = sum(Rmat[c, a] ** 2 for c in range(K) if c != a)
            else:
                Qm[a, b] = -Rmat[b, a] * Rmat[a, b]
    A = np.block([[Qm, np.ones((K, 1))], [np.ones((1, K)), np.zeros((1, 1))]])
    return np.linalg.solve(A, np.r_[np.zeros(K), 1.0])[:K], Qm


def test_hastie_tibshirani_spec_oracles_and_gbtm_equivalence():
    np.testing.assert_allclose(
        coupler(R4, method="hastie_tibshirani").predict_proba(R4),
        [[0.4318566027, 0.2506047407, 0.1926848462, 0.1248538104]],
        atol=1e-9,
    )
    np.testing.assert_allclose(
        coupler(R3, method="hastie_tibshirani").predict_proba(R3),
        [[0.4810682373, 0.2416391743, 0.2772925885]],
        atol=1e-9,
    )


@pytest.mark.parametrize("K", [3, 5])
def test_gbtm_on_one_vs_one_is_hastie_tibshirani(K):
    """GBTM with a one-vs-one code equals an independent Hastie-Tibshirani iteration."""
    rng = np.random.default_rng(K)
    code = one_vs_one(K)
    Q = rng.uniform(0.05, 0.95, size=(4, code.shape[1]))
    P = BradleyTerryDecoder().fit(Q, np.zeros(4, dtype=int), code).predict_proba(Q)
    Rmat = pairwise_matrix(Q, code)
    for i in range(4):
        np.testing.assert_allclose(P[i], hastie_tibshirani_reference(Rmat[i], 3000), atol=1e-9)


def test_pairwise_matrix_orientation():
    Rmat = pairwise_matrix(R3, one_vs_one(3))[0]
    np.testing.assert_allclose(Rmat, [[0, 0.9, 0.4], [0.1, 0, 0.7], [0.6, 0.3, 0]])


def test_wu_lin_weng_spec_oracles():
    np.testing.assert_allclose(
        coupler(R3).predict_proba(R3), [[0.4572329319, 0.2021293090, 0.3406377591]], atol=1e-9
    )
    np.testing.assert_allclose(
        coupler(R4).predict_proba(R4),
        [[0.4247342632, 0.2601069631, 0.1927811957, 0.1223775780]],
        atol=1e-9,
    )
    # LIBSVM 3.37's own iterative solver, compiled and run by the spec's authors
    np.testing.assert_allclose(
        coupler(R3, solver="libsvm").predict_proba(R3),
        [[0.4574539278, 0.2019396718, 0.3406064004]],
        atol=1e-9,
    )
    np.testing.assert_allclose(
        coupler(R4, solver="libsvm").predict_proba(R4),
        [[0.4246929195, 0.2605390290, 0.1923887818, 0.1223792696]],
        atol=1e-9,
    )


def test_wu_lin_weng_is_its_linear_system_and_its_minimiser():
    rng = np.random.default_rng(0)
    K = 5
    code = one_vs_one(K)
    Q = rng.uniform(0.05, 0.95, size=(6, code.shape[1]))
    P = coupler(Q).predict_proba(Q)
    Rmat = pairwise_matrix(Q, code)
    for i in range(6):
        p_ref, Qm = wlw_reference(Rmat[i])
        np.testing.assert_allclose(P[i], p_ref, atol=1e-12)
        # optimality: Q p = (p'Q p) 1
        np.testing.assert_allclose(Qm @ P[i], P[i] @ Qm @ P[i], atol=1e-12)

        def objective(p, R=Rmat[i]):
            return sum((R[b, a] * p[a] - R[a, b] * p[b]) ** 2 for a in range(K) for b in range(K))

        res = minimize(
            objective,
            np.full(K, 1.0 / K),
            constraints=[{"type": "eq", "fun": lambda p: p.sum() - 1}],
            method="SLSQP",
            options={"ftol": 1e-14},
        )
        np.testing.assert_allclose(P[i], res.x, atol=1e-6)


@pytest.mark.parametrize("method", ["wu_lin_weng", "hastie_tibshirani"])
def test_consistent_pairwise_probabilities_are_recovered(method):
    rng = np.random.default_rng(1)
    K = 6
    p_true = rng.dirichlet(np.ones(K), size=5) + 0.01
    p_true /= p_true.sum(axis=1, keepdims=True)
    Q = np.array([[p[a] / (p[a] + p[b]) for a, b in combinations(range(K), 2)] for p in p_true])
    np.testing.assert_allclose(coupler(Q, method=method).predict_proba(Q), p_true, atol=1e-9)
    # the spec's example, and LIBSVM's loose tolerance on it
    Q3 = np.array([[0.5 / 0.8, 0.5 / 0.7, 0.3 / 0.5]])
    np.testing.assert_allclose(coupler(Q3, method=method).predict_proba(Q3), [[0.5, 0.3, 0.2]])
    np.testing.assert_allclose(
        coupler(Q3, solver="libsvm").predict_proba(Q3),
        [[0.5009005631, 0.2991209107, 0.1999785261]],
        atol=1e-9,
    )


@pytest.mark.parametrize("method", ["wu_lin_weng", "hastie_tibshirani"])
def test_column_order_and_orientation_do_not_matter(method):
    rng = np.random.default_rng(2)
    code = one_vs_one(4)
    Q = rng.uniform(0.05, 0.95, size=(5, 6))
    P = coupler(Q, method=method).predict_proba(Q)
    perm = rng.permutation(6)
    flip = np.array([1, -1, 1, -1, -1, 1])
    C2 = code[:, perm] * flip
    Q2 = np.where(flip == 1, Q[:, perm], 1 - Q[:, perm])
    np.testing.assert_allclose(coupler(Q2, C2, method=method).predict_proba(Q2), P, atol=1e-9)


def test_two_classes_and_extreme_outputs():
    two = np.array([[1], [-1]])
    for kw in ({}, {"method": "hastie_tibshirani"}):
        P = coupler(np.array([[0.3]]), two, **kw).predict_proba([[0.3]])
        np.testing.assert_allclose(P, [[0.3, 0.7]])
    Q = np.array([[1.0, 0.0, 1.0, 0.0, 1.0, 1.0]])
    for kw in ({}, {"solver": "libsvm"}, {"method": "hastie_tibshirani"}):
        dec = coupler(Q, **kw)
        P = dec.predict_proba(Q)
        assert np.isfinite(P).all() and np.isfinite(dec.decision_function(Q)).all()
        assert P.sum() == pytest.approx(1.0)


def test_only_one_vs_one_codes():
    Q = np.full((1, 3), 0.5)
    with pytest.raises(ValueError, match="needs a one-vs-one code"):
        coupler(Q, one_vs_rest(3))
    with pytest.raises(ValueError, match="exactly one column per pair"):
        PairwiseCouplingDecoder().fit(np.full((1, 4), 0.5), [0], one_vs_one(3)[:, [0, 1, 2, 2]])
    with pytest.raises(ValueError, match="needs probabilities"):
        PairwiseCouplingDecoder().fit(Q, [0], one_vs_one(3), output="margin")
