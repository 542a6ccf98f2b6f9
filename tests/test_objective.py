"""The matrix-free objective against dense algebra written from the paper's appendix."""

import numpy as np
import pytest
from scipy.optimize import approx_fprime
from scipy.special import logsumexp

from convexagg.codes import make_code
from convexagg.losses import binary_losses
from convexagg.solvers import ConvexObjective, stack_losses


def _problem(seed, K=4, code_name="ovo", n=30, loss="cross_entropy"):
    rng = np.random.default_rng(seed)
    code = make_code(code_name, K, random_state=seed)
    Q = rng.uniform(0.02, 0.98, size=(n, code.shape[1]))
    y = rng.integers(0, K, size=n)
    y[:K] = np.arange(K)
    L_pos, L_neg = binary_losses(Q, loss, "proba")
    w = rng.uniform(0.1, 2.0, size=code.shape[1])
    return L_pos, L_neg, code, y, w


def _dense_reference(L_pos, L_neg, code, y, w, alpha):
    """f, grad and Hessian per the paper: varphi_i^{j,y_i}, Psi_i, u_i (appendix A)."""
    n, M = L_pos.shape
    K = code.shape[0]
    # d(C_{l,k}, Q_{l,i}) as an explicit n x K x M tensor; don't-care entries are 0.
    D = np.where(code[None] == 1, L_pos[:, None, :], 0.0) + np.where(
        code[None] == -1, L_neg[:, None, :], 0.0
    )
    f, g, H = 0.0, np.zeros(M), np.zeros((M, M))
    for i in range(n):
        Psi = np.stack([D[i, y[i]] - D[i, j] for j in range(K)])  # rows: varphi_i^{j,y_i}
        u = np.exp(Psi @ w)
        s = u.sum()
        f += np.log(s)
        g += Psi.T @ u / s
        H += Psi.T @ (np.diag(u) / s - np.outer(u, u) / s**2) @ Psi
    return f / n + alpha / 2 * w @ w, g / n + alpha * w, H / n + alpha * np.eye(M)


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("code_name", ["ovr", "ovo", "complete"])
def test_matrix_free_equals_appendix_formulas(seed, code_name):
    L_pos, L_neg, code, y, w = _problem(seed, code_name=code_name)
    alpha = 0.01
    f_ref, g_ref, H_ref = _dense_reference(L_pos, L_neg, code, y, w, alpha)
    obj = ConvexObjective(stack_losses(L_pos, L_neg), code, y, alpha)
    point = obj.evaluate(w)
    assert point.value == pytest.approx(f_ref, rel=1e-12)
    np.testing.assert_allclose(point.grad, g_ref, rtol=1e-10, atol=1e-13)
    M = code.shape[1]
    H_free = np.column_stack([obj.hessp(point, e) for e in np.eye(M)])
    np.testing.assert_allclose(H_free, H_ref, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(obj.hess_diag(point, chunk_rows=7), np.diag(H_ref), rtol=1e-9)
    np.testing.assert_allclose(obj.hessian(point), H_ref, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("loss", ["cross_entropy", "exponential"])
def test_gradient_matches_finite_differences(loss):
    L_pos, L_neg, code, y, w = _problem(5, K=5, code_name="ovr", n=50, loss=loss)
    obj = ConvexObjective(stack_losses(L_pos, L_neg), code, y, 1e-3)
    numeric = approx_fprime(w, obj.value, 1e-7)
    np.testing.assert_allclose(obj.evaluate(w).grad, numeric, rtol=1e-5, atol=1e-7)


def test_value_is_mean_negative_log_likelihood():
    L_pos, L_neg, code, y, w = _problem(1)
    obj = ConvexObjective(stack_losses(L_pos, L_neg), code, y, 0.0)
    logp = obj.predict_proba(w)[np.arange(len(y)), y]
    assert obj.value(w) == pytest.approx(-np.mean(np.log(logp)), rel=1e-12)
    rho = -np.log(obj.predict_proba(w))  # = rho + lse: rows of exp(-.) sum to 1
    assert np.allclose(logsumexp(-rho, axis=1), 0.0)
