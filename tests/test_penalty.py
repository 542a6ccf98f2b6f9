"""L1 and elastic-net penalties: with w >= 0 the L1 term is linear (same interior point)."""

import numpy as np
import pytest
from scipy.optimize import approx_fprime, minimize
from scipy.special import logsumexp

from convexagg import ConvexAggregationClassifier, ConvexDecoder
from convexagg.codes import make_code
from convexagg.datasets import make_broken_classifier_outputs
from convexagg.decoders.convex import penalty_strengths
from convexagg.losses import binary_losses
from convexagg.solvers import ConvexObjective, stack_losses


def _dense_objective(Q, code, y, l2, l1):
    """f(w) and its gradient written directly from the paper's eq. 12 plus ``l1 sum(w)``."""
    D = np.where(code[None] == 1, -np.log(Q)[:, None, :], 0.0) + np.where(
        code[None] == -1, -np.log1p(-Q)[:, None, :], 0.0
    )
    rows = np.arange(len(y))

    def fun(w):
        neg = -(D @ w)  # (n, K)
        P = np.exp(neg - logsumexp(neg, axis=1, keepdims=True))
        value = np.mean(logsumexp(neg, axis=1) - neg[rows, y]) + l2 / 2 * w @ w + l1 * w.sum()
        grad = np.einsum("ik,ikl->l", -P, D) / len(y) + D[rows, y].mean(axis=0)
        return value, grad + l2 * w + l1

    return fun


@pytest.mark.parametrize(("penalty", "alpha"), [("l1", 1e-2), ("l1", 1e-1), ("elasticnet", 5e-2)])
@pytest.mark.parametrize("code_name", ["ovo", "ecoc"])
def test_l1_solution_matches_an_independent_bounded_solver(penalty, alpha, code_name):
    rng = np.random.default_rng(0)
    K = 5
    code = make_code(code_name, K, random_state=0)
    y = np.repeat(np.arange(K), 20)
    # informative outputs for some columns, pure noise for the others
    Q = rng.uniform(0.05, 0.95, size=(y.size, code.shape[1]))
    good = rng.uniform(size=code.shape[1]) < 0.5
    side = code[y]
    Q[:, good] = np.where(side[:, good] == 1, 0.8, np.where(side[:, good] == -1, 0.2, 0.5))
    Q[:, good] += rng.uniform(-0.15, 0.15, size=Q[:, good].shape)
    dec = ConvexDecoder(alpha=alpha, penalty=penalty, l1_ratio=0.7, tol=1e-9).fit(Q, y, code)
    l2, l1 = penalty_strengths(alpha, penalty, 0.7)
    fun = _dense_objective(Q, code, y, l2, l1)
    M = code.shape[1]
    ref = minimize(
        fun,
        np.full(M, 1.0 / M),
        jac=True,
        method="L-BFGS-B",
        bounds=[(0, None)] * M,
        options={"ftol": 1e-14, "gtol": 1e-10, "maxiter": 10_000},
    )
    assert dec.converged_
    assert dec.objective_ == pytest.approx(ref.fun, rel=1e-8)
    assert fun(dec.weights_)[0] == pytest.approx(ref.fun, rel=1e-8)
    np.testing.assert_allclose(dec.weights_, ref.x, atol=1e-4)
    # KKT: grad >= 0 everywhere, = 0 where w > 0; L1 switches weights off exactly (up to tol)
    grad = fun(dec.weights_)[1]
    assert (grad >= -1e-6).all() and np.abs(grad * dec.weights_).max() < 1e-6
    if penalty == "l1" and alpha == 1e-1:
        assert (dec.weights_ < 1e-6).sum() >= 1


def test_penalty_strengths_and_l1_gradient():
    assert penalty_strengths(0.2, "l2") == (0.2, 0.0)
    assert penalty_strengths(0.2, "l1") == (0.0, 0.2)
    assert penalty_strengths(0.2, "elasticnet", 0.25) == pytest.approx((0.15, 0.05))
    with pytest.raises(ValueError, match="penalty"):
        penalty_strengths(0.2, "l0")
    Q, y, code = make_broken_classifier_outputs(n_per_class=10, random_state=0)
    obj = ConvexObjective(stack_losses(*binary_losses(Q)), code, y, 0.1, l1=0.3)
    w = np.array([0.5, 1.0, 2.0])
    np.testing.assert_allclose(obj.evaluate(w).grad, approx_fprime(w, obj.value, 1e-7), rtol=1e-5)
    base = ConvexObjective(obj.L, code, y, 0.1)
    assert obj.value(w) == pytest.approx(base.value(w) + 0.3 * w.sum(), rel=1e-14)
    point = obj.evaluate(w)
    np.testing.assert_array_equal(obj.hessp(point, w), base.hessp(point, w))


def test_classifier_passes_the_penalty_to_its_decoder():
    Q_X, y, _ = make_broken_classifier_outputs(n_per_class=20, random_state=0)
    clf = ConvexAggregationClassifier(penalty="elasticnet", l1_ratio=0.2, alpha=1e-2).fit(Q_X, y)
    assert clf.decoder_.penalty == "elasticnet" and clf.decoder_.l1_ratio == 0.2
    ref = ConvexDecoder(alpha=1e-2, penalty="elasticnet", l1_ratio=0.2)
    ref.fit(clf.predict_binary_proba(Q_X), y, clf.code_matrix_)
    np.testing.assert_allclose(clf.weights_, ref.weights_)
