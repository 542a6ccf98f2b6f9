"""The large-margin connection (paper section 4): eq. 27, eqs. 29-30, Proposition 1."""

import warnings

import numpy as np
import pytest
from scipy.optimize import linprog
from scipy.special import logsumexp
from sklearn.exceptions import ConvergenceWarning

from convexagg import ConvexDecoder
from convexagg.aggregation import LargeMarginObjective, Penalty, StiffnessObjective, stack_losses
from convexagg.codes import make_code
from convexagg.datasets import make_broken_classifier_outputs
from convexagg.losses import binary_losses
from convexagg.solvers import (
    InteriorPoint,
    ProjectedNewton,
    ProjectedSubgradient,
    continuation,
    projected_subgradient,
    tau_schedule,
)


def _problem(seed, K=4, code_name="ovo", n=25):
    rng = np.random.default_rng(seed)
    code = make_code(code_name, K, random_state=seed)
    Q = rng.uniform(0.02, 0.98, size=(n, code.shape[1]))
    y = rng.integers(0, K, size=n)
    y[:K] = np.arange(K)
    return Q, y, code


def _discrepancy_tensor(Q, code):
    """``D[i, k, l] = d(C[k, l], Q[i, l])`` from the paper's cross-entropy, 0 if don't-care."""
    n, M = Q.shape
    K = code.shape[0]
    D = np.zeros((n, K, M))
    for i in range(n):
        for k in range(K):
            for l in range(M):
                if code[k, l] == 1:
                    D[i, k, l] = -np.log(Q[i, l])
                elif code[k, l] == -1:
                    D[i, k, l] = -np.log(1 - Q[i, l])
    return D


def _hinge_direct(D, y, w):
    """Mean of eq:hw's first form, ``max_{k != y} [1 - (rho_k - rho_y)]_+``, by loops."""
    total = 0.0
    for i in range(len(y)):
        rho = D[i] @ w
        total += max(max(0.0, 1 - (rho[k] - rho[y[i]])) for k in range(len(rho)) if k != y[i])
    return total / len(y)


def _stiffness_dense(D, y, w, tau, alpha):
    """f_tau (eq. 30), gradient and Hessian from the paper's varphi_i^{j, y_i}."""
    n, K, M = D.shape
    f, g, H = 0.0, np.zeros(M), np.zeros((M, M))
    for i in range(n):
        Psi = np.stack([D[i, y[i]] - D[i, j] for j in range(K)])  # rows varphi_i^{j, y_i}
        xi = tau * ((np.arange(K) != y[i]) + Psi @ w)
        f += logsumexp(xi) / tau
        p = np.exp(xi - logsumexp(xi))
        g += Psi.T @ p
        H += tau * Psi.T @ (np.diag(p) - np.outer(p, p)) @ Psi
    return f / n + alpha / 2 * w @ w, g / n + alpha * w, H / n + alpha * np.eye(M)


@pytest.mark.parametrize("code_name", ["ovo", "complete"])
@pytest.mark.parametrize("tau", [0.5, 3.0, 40.0])
def test_stiffness_objective_equals_eq30_dense(code_name, tau):
    Q, y, code = _problem(1, code_name=code_name)
    D = _discrepancy_tensor(Q, code)
    w = np.random.default_rng(2).uniform(0.1, 1.5, code.shape[1])
    alpha = 0.01
    f_ref, g_ref, H_ref = _stiffness_dense(D, y, w, tau, alpha)
    obj = StiffnessObjective(stack_losses(*binary_losses(Q)), code, y, Penalty(alpha), tau=tau)
    point = obj.evaluate(w)
    assert point.value == pytest.approx(f_ref, rel=1e-12)
    np.testing.assert_allclose(point.grad, g_ref, rtol=1e-9, atol=1e-12)
    H_free = np.column_stack([obj.hessp(point, e) for e in np.eye(code.shape[1])])
    np.testing.assert_allclose(H_free, H_ref, rtol=1e-9, atol=1e-11)
    np.testing.assert_allclose(obj.hessian(point), H_ref, rtol=1e-9, atol=1e-11)
    np.testing.assert_allclose(obj.hess_diag(point), np.diag(H_ref), rtol=1e-9)


@pytest.mark.parametrize("code_name", ["ovr", "ovo", "complete"])
def test_proposition1_f_tau_within_log_k_over_tau_of_f_lm(code_name):
    """0 <= f_tau(w) - f_LM(w) <= log(K)/tau for every w; the gap closes as tau grows."""
    K = 4
    Q, y, code = _problem(3, K=K, code_name=code_name, n=30)
    D = _discrepancy_tensor(Q, code)
    L = stack_losses(*binary_losses(Q))
    lm = LargeMarginObjective(L, code, y, Penalty(0.1))
    rng = np.random.default_rng(0)
    ws = [rng.exponential(scale, code.shape[1]) for scale in (0.01, 0.3, 1.0, 5.0, 50.0)]
    # at w = 0 the logits are tau * (0, 1, ..., 1): the gap is log(K - 1 + e^-tau) / tau,
    # close to the bound's log(K) / tau, which is reached only when all K logits tie
    ws.append(np.zeros(code.shape[1]))
    previous = np.inf
    for tau in [1.0, 10.0, 100.0, 1000.0]:
        st = StiffnessObjective(L, code, y, Penalty(0.1), tau=tau)
        gaps = []
        for w in ws:
            f_lm = _hinge_direct(D, y, w) + 0.05 * w @ w
            assert lm.value(w) == pytest.approx(f_lm, rel=1e-12, abs=1e-12)
            gaps.append(st.value(w) - f_lm)
        gaps = np.array(gaps)
        assert (gaps >= -1e-12).all() and (gaps <= np.log(K) / tau + 1e-12).all()
        assert gaps[-1] == pytest.approx(np.log(K - 1 + np.exp(-tau)) / tau, rel=1e-9)
        assert gaps.max() < previous
        previous = gaps.max()


def _large_margin_lp(objective):
    """min mean_i xi_i + l1 sum(w) s.t. xi_i >= (1 - delta_ik) + rho_y - rho_k, w >= 0 (HiGHS)."""
    n, M, K = objective.n_samples, objective.n_weights, objective.n_classes
    A = np.zeros((n, K, M))  # rho_y - rho_k = w . A[i, k]
    for l in range(M):
        e = np.zeros(M)
        e[l] = 1.0
        rho = objective._margin_logits(e)[0]
        A[:, :, l] = rho[np.arange(n), objective.y][:, None] - rho
    A_ub = np.zeros((n * K, M + n))
    A_ub[:, :M] = A.reshape(n * K, M)
    A_ub[np.arange(n * K), M + np.repeat(np.arange(n), K)] = -1.0
    c = np.r_[np.full(M, objective.penalty.l1), np.full(n, 1.0 / n)]
    res = linprog(c, A_ub=A_ub, b_ub=-objective.cost.ravel(), bounds=[(0, None)] * (M + n))
    assert res.status == 0
    return res.fun


@pytest.fixture(scope="module")
def synthetic_lp():
    Q, y, code = make_broken_classifier_outputs(n_per_class=30, random_state=0)
    L = stack_losses(*binary_losses(Q))
    l1 = 1e-3
    f_star = _large_margin_lp(LargeMarginObjective(L, code, y, Penalty(0.0, l1)))
    return L, code, y, l1, f_star


def test_projected_subgradient_reaches_the_lp_optimum(synthetic_lp):
    L, code, y, l1, f_star = synthetic_lp
    objective = LargeMarginObjective(L, code, y, Penalty(0.0, l1))
    result = projected_subgradient(objective, max_iter=3000)
    assert (result.w >= 0).all()
    assert objective.value(result.w) == pytest.approx(result.history["best"][-1], rel=1e-12)
    assert f_star <= objective.value(result.w) <= f_star + 1e-3 * f_star
    assert np.all(np.diff(result.history["best"]) <= 0)
    assert result.w[2] < 1e-2 * result.w[:2].min()  # the broken classifier is switched off


def test_stiffness_continuation_approaches_large_margin_optimum(synthetic_lp):
    """Prop. 1 at the minimisers: f_LM(w_tau) - f_LM* <= log(K)/tau (+ the solver tolerance)."""
    L, code, y, l1, f_star = synthetic_lp
    lm = LargeMarginObjective(L, code, y, Penalty(0.0, l1))
    for solver in (InteriorPoint(tol=1e-7), ProjectedNewton(tol=1e-9)):
        excess = []
        for tau in (1.0, 10.0, 100.0):
            with warnings.catch_warnings():
                warnings.simplefilter("error", ConvergenceWarning)
                stages = continuation(
                    lambda t: StiffnessObjective(L, code, y, Penalty(0.0, l1), tau=t),
                    tau_schedule(tau),
                    solver.solve,
                )
            excess.append(lm.value(stages[-1].w) - f_star)
            assert -1e-9 <= excess[-1] <= np.log(3) / tau + 1e-6
        assert excess[2] < excess[1] < excess[0]


def test_tau_schedule():
    np.testing.assert_array_equal(tau_schedule(100.0, factor=4), [1, 4, 16, 64, 100])
    np.testing.assert_array_equal(tau_schedule(16.0, factor=4), [1, 4, 16])
    np.testing.assert_array_equal(tau_schedule(0.5), [0.5])
    np.testing.assert_array_equal(tau_schedule(1000.0), [1, 10, 100, 1000])
    np.testing.assert_array_equal(tau_schedule(50.0), [1, 10, 50])


@pytest.mark.parametrize("seed", range(3))
def test_large_margin_decoder_hinge_no_larger_than_convex_decoders(seed):
    """At its own solution the large-margin decoder's objective (eq. 27) is no larger
    than at the likelihood decoder's solution (eq. 12), for the same alpha."""
    Q, y, code = make_broken_classifier_outputs(n_per_class=40, random_state=seed)
    alpha = 1e-3
    lm = ConvexDecoder(alpha=alpha, formulation="large_margin").fit(Q, y, code)
    ml = ConvexDecoder(alpha=alpha).fit(Q, y, code)
    objective = LargeMarginObjective(stack_losses(*binary_losses(Q)), code, y, Penalty(alpha))
    assert lm.objective_ == pytest.approx(objective.value(lm.weights_), rel=1e-12)
    assert lm.objective_ <= objective.value(ml.weights_)
    assert lm.n_iter_ == 2000 and lm.history_["objective"].shape == (2001,)
    # the three formulations predict alike on this problem (the paper's remark)
    st = ConvexDecoder(alpha=alpha, formulation="stiffness", tau=50.0).fit(Q, y, code)
    assert st.objective_ <= objective.value(ml.weights_) + np.log(3) / 50
    for dec in (lm, st):
        assert np.mean(dec.predict(Q) == ml.predict(Q)) >= 0.9
        assert np.allclose(dec.predict_proba(Q).sum(axis=1), 1.0)


def test_stiffness_decoder_records_the_continuation():
    Q, y, code = make_broken_classifier_outputs(n_per_class=30, random_state=0)
    dec = ConvexDecoder(formulation="stiffness", tau=20.0).fit(Q, y, code)
    np.testing.assert_array_equal(dec.taus_, [1, 10, 20])
    assert dec.stage_n_iter_.shape == (3,) and dec.n_iter_ == dec.stage_n_iter_.sum()
    assert dec.converged_
    objective = StiffnessObjective(
        stack_losses(*binary_losses(Q)), code, y, Penalty.from_alpha(dec.alpha), tau=20.0
    )
    assert dec.objective_ == pytest.approx(objective.value(dec.weights_), rel=1e-12)
    with pytest.raises(ValueError, match="formulation"):
        ConvexDecoder(formulation="svm").fit(Q, y, code)
    with pytest.raises(ValueError, match="tau"):
        ConvexDecoder(formulation="stiffness", tau=0.0).fit(Q, y, code)


@pytest.mark.parametrize("formulation", ["large_margin", "stiffness"])
def test_formulations_inside_a_classifier(formulation):
    from sklearn.datasets import load_iris

    from convexagg import CodeMatrixClassifier

    X, y = load_iris(return_X_y=True)
    if formulation == "stiffness":
        decoder = ConvexDecoder(formulation=formulation, tau=10.0)
    else:
        decoder = ConvexDecoder(formulation=formulation, solver=ProjectedSubgradient(max_iter=300))
    clf = CodeMatrixClassifier(code="ovo", decoder=decoder).fit(X, y)
    assert clf.decoder_.formulation == formulation
    assert clf.score(X, y) > 0.9
    assert np.allclose(clf.predict_proba(X[:5]).sum(axis=1), 1.0)
