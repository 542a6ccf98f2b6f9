"""The class-blocked objective against the dense one (itself checked against the appendix)."""

import numpy as np
import pytest

from convexagg.codes import complete, dense_random, one_vs_one, one_vs_rest, sparse_random
from convexagg.losses import binary_losses
from convexagg.solvers import BlockedObjective, ConvexObjective, stack_losses
from convexagg.solvers.blocked import reencode

# a custom code with unequal class blocks, a class in no single-class column and
# columns that use every class
CUSTOM = np.array(
    [
        [1, 1, 0, -1, 1, 0],
        [-1, 0, 1, -1, 1, 1],
        [0, -1, -1, 1, -1, -1],
        [0, 0, 0, 1, -1, 0],
    ]
)


def _code(name, K=6):
    builders = {
        "ovr": one_vs_rest,
        "ovo": one_vs_one,
        "complete": complete,
        "sparse_random": lambda k: sparse_random(k, n_candidates=20, random_state=1),
        "dense_random": lambda k: dense_random(k, n_candidates=20, random_state=1),
    }
    if name in ("custom", "majority"):
        return CUSTOM if name == "custom" else MAJORITY
    return builders[name](K)


def _problem(code, seed=0, n=53, output="proba", loss="cross_entropy"):
    rng = np.random.default_rng(seed)
    K, M = code.shape
    Q = rng.uniform(0.02, 0.98, size=(n, M)) if output == "proba" else rng.normal(size=(n, M))
    y = rng.integers(0, K, size=n)
    y[:K] = np.arange(K)
    w = rng.uniform(0.1, 2.0, size=M)
    v = rng.normal(size=M)
    return Q, y, w, v


# class 0 is on the majority side of every column: after the baseline shift it
# enters no stored column at all
MAJORITY = np.array(
    [
        [1, 1, -1, 1],
        [1, -1, -1, -1],
        [-1, 1, 1, 1],
        [1, 1, -1, -1],
        [-1, -1, -1, 1],
    ]
)
CODES = ["ovr", "ovo", "complete", "sparse_random", "dense_random", "custom", "majority"]


@pytest.mark.parametrize("chunk", [None, 7])
@pytest.mark.parametrize("code_name", CODES)
@pytest.mark.parametrize("dtype, rtol", [(np.float64, 1e-10), (np.float32, 2e-5)])
def test_blocked_equals_dense_objective(code_name, dtype, rtol, chunk):
    code = _code(code_name)
    Q, y, w, v = _problem(code)
    L_pos, L_neg = binary_losses(Q)
    alpha = 0.01
    dense = ConvexObjective(stack_losses(L_pos, L_neg), code, y, alpha)
    blocked = BlockedObjective(L_pos, L_neg, code, y, alpha, dtype=dtype, chunk=chunk)
    a, b = dense.evaluate(w), blocked.evaluate(w)
    assert b.value == pytest.approx(a.value, rel=rtol)
    scale = np.abs(a.grad).max()
    np.testing.assert_allclose(b.grad, a.grad, rtol=rtol, atol=rtol * scale)
    np.testing.assert_allclose(b.P, a.P, rtol=rtol, atol=rtol)
    hv = dense.hessp(a, v)
    np.testing.assert_allclose(blocked.hessp(b, v), hv, rtol=rtol, atol=rtol * np.abs(hv).max())
    np.testing.assert_allclose(blocked.hess_diag(b), dense.hess_diag(a), rtol=10 * rtol)
    H = dense.hessian(a)
    np.testing.assert_allclose(blocked.hessian(b), H, rtol=rtol, atol=rtol * np.abs(H).max())
    P = dense.predict_proba(w)
    np.testing.assert_allclose(blocked.predict_proba(w), P, rtol=rtol, atol=rtol)


@pytest.mark.parametrize(
    "loss, output",
    [
        ("exponential", "proba"),
        ("logistic", "margin"),
        ("hinge", "margin"),
        ("exponential", "margin"),
    ],
)
def test_from_outputs_for_every_loss(loss, output):
    code = _code("sparse_random", 7)
    Q, y, w, _ = _problem(code, output=output)
    L_pos, L_neg = binary_losses(Q, loss, output)
    dense = ConvexObjective(stack_losses(L_pos, L_neg), code, y, 1e-3)
    blocked = BlockedObjective.from_outputs(Q, code, y, 1e-3, loss=loss, output=output, chunk=10)
    a, b = dense.evaluate(w), blocked.evaluate(w)
    assert b.value == pytest.approx(a.value, rel=1e-12)
    np.testing.assert_allclose(b.grad, a.grad, rtol=1e-10, atol=1e-12)


def test_reencode_keeps_one_class_per_column_for_sparse_codes():
    K = 7
    spec = reencode(one_vs_one(K))  # L_pos for class a, L_neg for class b
    assert spec["weight"].size == K * (K - 1)
    assert (spec["classes"].sum(axis=1) == 1).all()
    assert np.array_equal(np.diff(spec["offsets"]), np.full(K, K - 1))
    spec = reencode(one_vs_rest(K))  # baseline L_neg: one column L_pos - L_neg per class
    assert spec["weight"].size == K and (spec["classes"].sum(axis=1) == 1).all()
    assert np.array_equal(spec["coef"], np.tile([1.0, -1.0], (K, 1)))
    dense = _code("dense_random", K)  # one column per classifier
    spec = reencode(dense)
    assert spec["weight"].size == dense.shape[1]
    assert (spec["classes"].sum(axis=1) <= K // 2).all()


def test_take_is_the_objective_on_those_rows():
    code = one_vs_one(5)
    Q, y, w, _ = _problem(code, n=80)
    full = BlockedObjective.from_outputs(Q, code, y, 0.1)
    rows = np.arange(3, 80, 4)
    sub = BlockedObjective.from_outputs(Q[rows], code, y[rows], 0.1)
    a, b = full.take(rows).evaluate(w), sub.evaluate(w)
    assert a.value == pytest.approx(b.value, rel=1e-14)
    np.testing.assert_allclose(a.grad, b.grad, rtol=1e-12)
    assert full.n_samples == 80  # untouched


def test_l1_adds_a_constant_to_the_gradient():
    code = one_vs_one(4)
    Q, y, w, v = _problem(code)
    plain = BlockedObjective.from_outputs(Q, code, y, 0.1)
    l1 = BlockedObjective.from_outputs(Q, code, y, 0.1, l1=0.3)
    a, b = plain.evaluate(w), l1.evaluate(w)
    assert b.value == pytest.approx(a.value + 0.3 * w.sum(), rel=1e-14)
    np.testing.assert_allclose(b.grad, a.grad + 0.3, rtol=1e-14)
    np.testing.assert_allclose(l1.hessp(b, v), plain.hessp(a, v), rtol=1e-14)


def test_no_tensor_and_storage_size():
    """Storage is the stored columns x samples, in the requested precision."""
    code = one_vs_one(6)
    Q, y, _, _ = _problem(code, n=40)
    for dtype, itemsize in [(np.float64, 8), (np.float32, 4)]:
        obj = BlockedObjective.from_outputs(Q, code, y, 0.1, dtype=dtype)
        assert obj.LT.shape == (2 * code.shape[1], 40)
        assert obj.LT.dtype.itemsize == itemsize


def test_rejects_other_dtypes():
    code = one_vs_one(3)
    Q, y, _, _ = _problem(code, n=10)
    with pytest.raises(ValueError, match="float32 or float64"):
        BlockedObjective.from_outputs(Q, code, y, 0.1, dtype=np.int64)


def test_float32_outputs_are_clipped_as_binary_losses_does():
    code = one_vs_one(4)
    Q, y, w, _ = _problem(code)
    Q = Q.astype(np.float32)
    Q[:2] = np.array([0.0, 1.0], dtype=np.float32)[:, None]
    L_pos, L_neg = binary_losses(Q)  # clipped at float32's epsilon
    dense = ConvexObjective(stack_losses(L_pos, L_neg), code, y, 0.1)
    blocked = BlockedObjective.from_outputs(Q, code, y, 0.1)
    assert blocked.value(w) == pytest.approx(dense.value(w), rel=1e-12)


def test_from_outputs_checks_the_loss_against_the_output_kind():
    code = one_vs_one(3)
    Q, y, _, _ = _problem(code, n=10, output="margin")
    with pytest.raises(ValueError, match="not defined for output='margin'"):
        BlockedObjective.from_outputs(Q, code, y, 0.1, loss="cross_entropy", output="margin")
