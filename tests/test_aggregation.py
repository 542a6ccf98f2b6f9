"""The aggregation model: its objectives against dense algebra, the penalty, the contract.

References, each written independently of the library's kernels: the paper's
appendix (per-sample matrices Psi_i), an explicit n x K x n_variables tensor
for intercepts and sample weights, finite differences, and repeated rows for
integer sample weights. The class-blocked storage is then compared with the
dense objective on every kind of code.
"""

import itertools

import numpy as np
import pytest
from scipy.optimize import approx_fprime
from scipy.special import logsumexp

from convexagg.aggregation import (
    BlockedObjective,
    DenseObjective,
    Penalty,
    discrepancies,
    output_discrepancies,
    reencode,
    side_weights,
    stack_losses,
)
from convexagg.codes import (
    complete,
    dense_random,
    make_code,
    one_vs_one,
    one_vs_rest,
    sparse_random,
)
from convexagg.losses import binary_losses
from convexagg.solvers import Objective, check_objective

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


def _code(name, K=6):
    builders = {
        "ovr": one_vs_rest,
        "ovo": one_vs_one,
        "complete": complete,
        "sparse_random": lambda k: sparse_random(k, n_candidates=20, random_state=1),
        "dense_random": lambda k: dense_random(k, n_candidates=20, random_state=1),
        "custom": lambda k: CUSTOM,
        "majority": lambda k: MAJORITY,
    }
    return builders[name](K)


def _problem(code, seed=0, n=53, output="proba"):
    rng = np.random.default_rng(seed)
    K, M = code.shape
    Q = rng.uniform(0.02, 0.98, size=(n, M)) if output == "proba" else rng.normal(size=(n, M))
    y = rng.integers(0, K, size=n)
    y[:K] = np.arange(K)
    x = np.concatenate([rng.uniform(0.1, 2.0, size=M), rng.normal(size=K)])
    v = rng.normal(size=M + K)
    s = rng.uniform(0.2, 3.0, size=n)
    return Q, y, x, v, s


def _tensor_reference(L_pos, L_neg, code, y, x, penalty, fit_intercept, s):
    """f, gradient and Hessian from an explicit (n, K, n_variables) tensor J_i = [D_i, I]."""
    n, M = L_pos.shape
    K = code.shape[0]
    D = np.where(code[None] == 1, L_pos[:, None, :], 0.0) + np.where(
        code[None] == -1, L_neg[:, None, :], 0.0
    )
    J = np.concatenate([D, np.broadcast_to(np.eye(K), (n, K, K))], axis=2) if fit_intercept else D
    rho = J @ x
    lse = logsumexp(-rho, axis=1)
    P = np.exp(-rho - lse[:, None])
    rows = np.arange(n)
    S = s.sum()
    f = s @ (rho[rows, y] + lse) / S + penalty.value(x, M)
    mean_J = np.einsum("ik,ikl->il", P, J)  # E_P[J_i]
    g = np.einsum("i,il->l", s, J[rows, y] - mean_J) / S
    # the covariance of J_i under P_i, per sample
    Hi = np.einsum("ikl,ik,ikm->ilm", J, P, J) - np.einsum("il,im->ilm", mean_J, mean_J)
    H = np.einsum("i,ilm->lm", s, Hi) / S
    return f, g + penalty.grad(x, M), penalty.add_to_hessian(H, M)


def _appendix_reference(L_pos, L_neg, code, y, w, alpha):
    """f, grad and Hessian per the paper: varphi_i^{j,y_i}, Psi_i, u_i (appendix A)."""
    n, M = L_pos.shape
    K = code.shape[0]
    D = np.where(code[None] == 1, L_pos[:, None, :], 0.0) + np.where(
        code[None] == -1, L_neg[:, None, :], 0.0
    )
    f, g, H = 0.0, np.zeros(M), np.zeros((M, M))
    for i in range(n):
        Psi = np.stack([D[i, y[i]] - D[i, j] for j in range(K)])  # rows: varphi_i^{j,y_i}
        u = np.exp(Psi @ w)
        total = u.sum()
        f += np.log(total)
        g += Psi.T @ u / total
        H += Psi.T @ (np.diag(u) / total - np.outer(u, u) / total**2) @ Psi
    return f / n + alpha / 2 * w @ w, g / n + alpha * w, H / n + alpha * np.eye(M)


def _dense_derivatives(obj, x):
    point = obj.evaluate(x)
    n_var = obj.n_variables
    H_free = np.column_stack([obj.hessp(point, e) for e in np.eye(n_var)])
    return point, H_free, obj.hess_diag(point), obj.hessian(point)


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("code_name", ["ovr", "ovo", "complete"])
def test_dense_objective_equals_appendix_formulas(seed, code_name):
    code = make_code(code_name, 4, random_state=seed)
    Q, y, x, _, _ = _problem(code, seed, n=30)
    L_pos, L_neg = binary_losses(Q)
    w = x[: code.shape[1]]
    f_ref, g_ref, H_ref = _appendix_reference(L_pos, L_neg, code, y, w, 0.01)
    obj = DenseObjective(stack_losses(L_pos, L_neg), code, y, Penalty(0.01))
    point, H_free, diag, H = _dense_derivatives(obj, w)
    assert point.value == pytest.approx(f_ref, rel=1e-12)
    np.testing.assert_allclose(point.grad, g_ref, rtol=1e-10, atol=1e-13)
    np.testing.assert_allclose(H_free, H_ref, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(diag, np.diag(H_ref), rtol=1e-9)
    np.testing.assert_allclose(H, H_ref, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("fit_intercept", [False, True])
@pytest.mark.parametrize("code_name", ["ovo", "custom"])
def test_dense_objective_equals_tensor_reference(code_name, fit_intercept, weighted):
    code = _code(code_name, 4)
    Q, y, x, _, s = _problem(code, n=25)
    M = code.shape[1]
    x = x if fit_intercept else x[:M]
    penalty = Penalty(0.02, 0.05)
    L_pos, L_neg = binary_losses(Q)
    f_ref, g_ref, H_ref = _tensor_reference(
        L_pos, L_neg, code, y, x, penalty, fit_intercept, s if weighted else np.ones(len(y))
    )
    obj = DenseObjective(
        stack_losses(L_pos, L_neg),
        code,
        y,
        penalty,
        fit_intercept=fit_intercept,
        sample_weight=s if weighted else None,
    )
    point, H_free, diag, H = _dense_derivatives(obj, x)
    assert point.value == pytest.approx(f_ref, rel=1e-12)
    np.testing.assert_allclose(point.grad, g_ref, rtol=1e-10, atol=1e-13)
    np.testing.assert_allclose(H_free, H_ref, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(diag, np.diag(H_ref), rtol=1e-9, atol=1e-13)
    np.testing.assert_allclose(H, H_ref, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("loss", ["cross_entropy", "exponential"])
@pytest.mark.parametrize("fit_intercept", [False, True])
def test_gradient_matches_finite_differences(loss, fit_intercept):
    code = one_vs_rest(5)
    Q, y, x, _, s = _problem(code, 5, n=50)
    x = x if fit_intercept else x[:5]
    obj = DenseObjective(
        stack_losses(*binary_losses(Q, loss)),
        code,
        y,
        Penalty(1e-3, 0.01),
        fit_intercept=fit_intercept,
        sample_weight=s,
    )
    numeric = approx_fprime(x, obj.value, 1e-7)
    np.testing.assert_allclose(obj.evaluate(x).grad, numeric, rtol=1e-5, atol=1e-7)


def test_value_is_mean_negative_log_likelihood():
    code = one_vs_one(4)
    Q, y, x, _, _ = _problem(code, 1, n=30)
    obj = DenseObjective(stack_losses(*binary_losses(Q)), code, y)
    w = x[: code.shape[1]]
    p_true = obj.predict_proba(w)[np.arange(len(y)), y]
    assert obj.value(w) == pytest.approx(-np.mean(np.log(p_true)), rel=1e-12)


@pytest.mark.parametrize("storage", ["dense", "blocked"])
def test_integer_sample_weights_equal_repeated_rows(storage):
    code = _code("custom")
    Q, y, x, v, _ = _problem(code, 3, n=20)
    counts = np.random.default_rng(3).integers(0, 4, size=20)
    counts[0] = 1
    rows = np.repeat(np.arange(20), counts)

    def build(Qb, yb, s):
        if storage == "dense":
            return DenseObjective(
                stack_losses(*binary_losses(Qb)),
                code,
                yb,
                Penalty(0.01),
                fit_intercept=True,
                sample_weight=s,
            )
        return BlockedObjective.from_outputs(
            Qb, code, yb, Penalty(0.01), fit_intercept=True, sample_weight=s
        )

    weighted, repeated = build(Q, y, counts.astype(float)), build(Q[rows], y[rows], None)
    a, b = weighted.evaluate(x), repeated.evaluate(x)
    assert a.value == pytest.approx(b.value, rel=1e-12)
    np.testing.assert_allclose(a.grad, b.grad, rtol=1e-10, atol=1e-13)
    np.testing.assert_allclose(weighted.hessp(a, v), repeated.hessp(b, v), rtol=1e-10, atol=1e-13)
    np.testing.assert_allclose(weighted.hessian(a), repeated.hessian(b), rtol=1e-10, atol=1e-13)


@pytest.mark.parametrize("chunk", [None, 7])
@pytest.mark.parametrize("code_name", CODES)
@pytest.mark.parametrize("dtype, rtol", [(np.float64, 1e-10), (np.float32, 2e-5)])
@pytest.mark.parametrize("fit_intercept, weighted", [(False, False), (True, True)])
def test_blocked_equals_dense_objective(code_name, dtype, rtol, chunk, fit_intercept, weighted):
    code = _code(code_name)
    Q, y, x, v, s = _problem(code)
    M = code.shape[1]
    if not fit_intercept:
        x, v = x[:M], v[:M]
    s = s if weighted else None
    L_pos, L_neg = binary_losses(Q)
    penalty = Penalty(0.01, 0.02)
    kw = dict(fit_intercept=fit_intercept, sample_weight=s)
    dense = DenseObjective(stack_losses(L_pos, L_neg), code, y, penalty, **kw)
    blocked = BlockedObjective(L_pos, L_neg, code, y, penalty, dtype=dtype, chunk=chunk, **kw)
    a, b = dense.evaluate(x), blocked.evaluate(x)
    assert b.value == pytest.approx(a.value, rel=rtol)
    scale = np.abs(a.grad).max()
    np.testing.assert_allclose(b.grad, a.grad, rtol=rtol, atol=rtol * scale)
    np.testing.assert_allclose(b.P, a.P, rtol=rtol, atol=rtol)
    hv = dense.hessp(a, v)
    np.testing.assert_allclose(blocked.hessp(b, v), hv, rtol=rtol, atol=rtol * np.abs(hv).max())
    np.testing.assert_allclose(blocked.hess_diag(b), dense.hess_diag(a), rtol=10 * rtol)
    H = dense.hessian(a)
    np.testing.assert_allclose(blocked.hessian(b), H, rtol=rtol, atol=rtol * np.abs(H).max())
    np.testing.assert_allclose(
        blocked.predict_proba(x), dense.predict_proba(x), rtol=rtol, atol=rtol
    )


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
    Q, y, x, _, _ = _problem(code, output=output)
    w = x[: code.shape[1]]
    dense = DenseObjective(stack_losses(*binary_losses(Q, loss, output)), code, y, Penalty(1e-3))
    blocked = BlockedObjective.from_outputs(
        Q, code, y, Penalty(1e-3), loss=loss, output=output, chunk=10
    )
    a, b = dense.evaluate(w), blocked.evaluate(w)
    assert b.value == pytest.approx(a.value, rel=1e-12)
    np.testing.assert_allclose(b.grad, a.grad, rtol=1e-10, atol=1e-12)


def test_built_by_several_threads_equals_one_thread(monkeypatch):
    import convexagg.aggregation.blocked as blocked_module

    code = one_vs_one(5)
    Q, y, _, _, _ = _problem(code, n=3000)
    threaded = BlockedObjective.from_outputs(Q, code, y, chunk=64)
    monkeypatch.setattr(blocked_module, "_build_threads", lambda: 1)
    single = BlockedObjective.from_outputs(Q, code, y, chunk=64)
    np.testing.assert_array_equal(threaded.LT, single.LT)


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


@pytest.mark.parametrize("weighted", [False, True])
def test_take_is_the_objective_on_those_rows(weighted):
    code = one_vs_one(5)
    Q, y, x, _, s = _problem(code, n=80)
    s = s if weighted else None
    w = x[: code.shape[1]]
    full = BlockedObjective.from_outputs(Q, code, y, Penalty(0.1), sample_weight=s)
    rows = np.arange(3, 80, 4)
    sub = BlockedObjective.from_outputs(
        Q[rows], code, y[rows], Penalty(0.1), sample_weight=None if s is None else s[rows]
    )
    a, b = full.take(rows).evaluate(w), sub.evaluate(w)
    assert a.value == pytest.approx(b.value, rel=1e-14)
    np.testing.assert_allclose(a.grad, b.grad, rtol=1e-12)
    single = full.take(rows, dtype=np.float32)
    assert single.LT.dtype == np.float32 and full.LT.dtype == np.float64
    assert single.value(w) == pytest.approx(b.value, rel=1e-6)
    assert full.n_samples == 80  # untouched


def test_with_penalty_shares_the_data():
    code = one_vs_one(4)
    Q, y, x, v, _ = _problem(code)
    w = x[: code.shape[1]]
    plain = BlockedObjective.from_outputs(Q, code, y, Penalty(0.1))
    l1 = plain.with_penalty(Penalty(0.1, 0.3))
    assert l1.LT is plain.LT and plain.penalty == Penalty(0.1)
    a, b = plain.evaluate(w), l1.evaluate(w)
    assert b.value == pytest.approx(a.value + 0.3 * w.sum(), rel=1e-14)
    np.testing.assert_allclose(b.grad, a.grad + 0.3, rtol=1e-14)
    np.testing.assert_allclose(l1.hessp(b, v[:6]), plain.hessp(a, v[:6]), rtol=1e-14)


def test_penalty_from_alpha_and_its_derivatives():
    assert Penalty.from_alpha(0.2, "l2") == Penalty(0.2, 0.0, 0.2)
    assert Penalty.from_alpha(0.2, "l1") == Penalty(0.0, 0.2, 1e-6)
    p = Penalty.from_alpha(0.2, "elasticnet", 0.25)
    assert (p.l2, p.l1) == pytest.approx((0.15, 0.05))
    assert p.intercept_l2 == pytest.approx(0.15)
    assert Penalty.from_alpha(0.0).intercept_l2 == 1e-6  # the floor: intercepts stay unique
    assert Penalty().value(np.ones(3), 2) == 0.0
    with pytest.raises(ValueError, match="penalty"):
        Penalty.from_alpha(0.2, "l0")
    with pytest.raises(ValueError, match="l1_ratio"):
        Penalty.from_alpha(0.2, "elasticnet", 1.5)
    with pytest.raises(ValueError, match="l2 must be finite"):
        Penalty(-1.0)
    x = np.array([0.5, 2.0, -1.0])  # two weights, one intercept
    p = Penalty(0.4, 0.3, 0.1)
    assert p.value(x, 2) == pytest.approx(0.2 * 4.25 + 0.3 * 2.5 + 0.05 * 1.0)
    np.testing.assert_allclose(
        p.grad(x, 2), approx_fprime(x, lambda z: p.value(z, 2), 1e-7), rtol=1e-6
    )
    np.testing.assert_allclose(p.hess_diag(2, 3), [0.4, 0.4, 0.1])


def test_output_discrepancies_is_the_kernel_on_losses():
    """The chunked kernel from outputs equals the product on the stacked losses at
    every chunk boundary (M = 15: chunks of 2,184 rows), with intercepts."""
    code = one_vs_one(6)
    rng = np.random.default_rng(0)
    Q = rng.uniform(0, 1, size=(4400, code.shape[1]))
    Q[:3] = np.array([0.0, 1.0, 0.5])[:, None]
    w, b = rng.uniform(0, 2, size=code.shape[1]), rng.normal(size=6)
    L = stack_losses(*binary_losses(Q))
    rho = discrepancies(L, side_weights(code, w), b)
    np.testing.assert_allclose(output_discrepancies(Q, code, w, b), rho, rtol=1e-12)
    rho32 = output_discrepancies(Q, code, w, b, dtype=np.float32)
    assert rho32.dtype == np.float64
    np.testing.assert_allclose(rho32, rho, rtol=1e-5, atol=1e-6 * np.abs(rho).max())
    margins = rng.normal(size=(50, code.shape[1]))
    L = stack_losses(*binary_losses(margins, "hinge", "margin"))
    np.testing.assert_allclose(
        output_discrepancies(margins, code, w, loss="hinge", output="margin"),
        discrepancies(L, side_weights(code, w)),
        rtol=1e-12,
    )


def _reference_rho(Q, code, w, b=None):
    """DESIGN.md's two products, in float64, from the losses of a float64 Q."""
    L_pos, L_neg = binary_losses(np.asarray(Q, dtype=np.float64))
    Pos, Neg = (code == 1).astype(float), (code == -1).astype(float)
    rho = (L_pos * w) @ Pos.T + (L_neg * w) @ Neg.T
    return rho if b is None else rho + b


@pytest.mark.parametrize(
    "code",
    [one_vs_one(10), one_vs_one(5), one_vs_rest(7), sparse_random(9, random_state=1)],
    ids=["ovo10-sparse-product", "ovo5-dense-product", "ovr7", "sparse-random9"],
)
@pytest.mark.parametrize("q_dtype", [np.float64, np.float32])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("intercept", [False, True])
def test_the_fused_decode_is_the_two_dense_products(code, q_dtype, dtype, intercept):
    """output_discrepancies (losses of transposed row chunks, a sparse W for
    one-vs-one on 10 classes, a dense one for the others) against DESIGN.md's
    rho = (L_pos * w) @ Pos.T + (L_neg * w) @ Neg.T, with outputs at 0 and 1
    and a last chunk shorter than the others; the first rows decode to the bit
    as they do alone."""
    from convexagg.aggregation.discrepancy import SPARSE_DENSITY

    density = np.count_nonzero(code) / (2 * code.size)
    assert (density <= SPARSE_DENSITY) == (code.shape == (10, 45))  # both products are tested
    rng = np.random.default_rng(3)
    Q = rng.uniform(0, 1, size=(1000, code.shape[1])).astype(q_dtype)
    Q[:4] = np.array([0.0, 1.0, 0.5, 1e-30])[:, None]
    w = rng.uniform(0, 2, size=code.shape[1])
    b = rng.normal(size=code.shape[0]) if intercept else None
    rho = _reference_rho(Q, code, w, b)
    got = output_discrepancies(Q, code, w, b, dtype=dtype)
    assert got.dtype == np.float64 and got.flags.c_contiguous
    if dtype == np.float64:
        np.testing.assert_allclose(got, rho, rtol=1e-13, atol=1e-13 * np.abs(rho).max())
    else:  # each loss rounded to float32 once, then summed in float32
        np.testing.assert_allclose(got, rho, rtol=2e-6, atol=2e-6 * np.abs(rho).max())
    np.testing.assert_array_equal(output_discrepancies(Q[:7], code, w, b, dtype=dtype), got[:7])
    np.testing.assert_array_equal(Q[:2, 0], [0.0, 1.0])  # the input is untouched


@pytest.mark.parametrize("code", [one_vs_one(5), CUSTOM, MAJORITY, one_vs_rest(4)], ids=str)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize(
    "loss, output, q_dtype",
    [
        ("cross_entropy", "proba", np.float32),
        ("cross_entropy", "proba", np.float64),
        ("hinge", "margin", np.float64),
    ],
)
def test_recomputed_losses_give_the_stored_objective_to_the_bit(code, dtype, loss, output, q_dtype):
    """RecomputedObjective (losses from Q on every pass) against BlockedObjective
    (losses stored) on chunks that do not divide the samples: every value,
    derivative, restricted Hessian (a quarter of the weights) and subsample equal,
    with intercepts and sample weights; Q is not copied."""
    from convexagg.aggregation import RecomputedObjective

    Q, y, x, v, s = _problem(code, seed=4, n=1000, output=output)
    if output == "proba":  # the clipped ends, float32's subnormals, a value above 2**-52
        Q[5:11] = np.array([0.0, 1.0, 1e-30, 1e-40, 2.0**-53, 1.0 - 2.0**-24])[:, None]
    Q = Q.astype(q_dtype)
    kw = dict(loss=loss, output=output, dtype=dtype, chunk=96, fit_intercept=True)
    kw.update(sample_weight=s)
    stored = BlockedObjective.from_outputs(Q, code, y, Penalty(0.01), **kw)
    lazy = RecomputedObjective.from_outputs(Q, code, y, Penalty(0.01), **kw)
    assert not isinstance(lazy.LT, np.ndarray) and lazy.LT.shape == stored.LT.shape
    p, q = stored.evaluate(x), lazy.evaluate(x)
    assert p.value == q.value
    for a, b in [
        (p.grad, q.grad),
        (p.P, q.P),
        (stored.hessp(p, v), lazy.hessp(q, v)),
        (stored.hess_diag(p), lazy.hess_diag(q)),
        (stored.hessian(p), lazy.hessian(q)),
        (stored.hessian(p, [0, code.shape[1]]), lazy.hessian(q, [0, code.shape[1]])),
        (stored.take(slice(1, None, 3), np.float32).LT, lazy.take(slice(1, None, 3), "f4").LT),
    ]:
        np.testing.assert_array_equal(a, b)


def test_single_precision_losses_are_the_float64_path_to_the_bit():
    """The recomputed objective's float32 losses of float32 outputs (all in single
    precision) against cross_entropy_into (clipped and complemented in float64),
    on every float32 exponent, both clipped ends and the values next to them."""
    from convexagg.aggregation.recomputed import _losses32
    from convexagg.losses import cross_entropy_into

    rng = np.random.default_rng(0)
    q = np.concatenate(
        [
            rng.uniform(0, 1, 5000),
            2.0 ** -rng.uniform(0, 149, 5000),  # every exponent, subnormals included
            1.0 - 2.0 ** -rng.uniform(0, 24, 2000),  # close to 1
            [0.0, 1.0, 2.0**-52, 2.0**-53, 2.0**-149, 1.0 - 2.0**-24, 0.5, 2.0**-29],
        ]
    ).astype(np.float32)
    q = np.concatenate([q, np.nextafter(q, np.float32(0)), np.nextafter(q, np.float32(1))])
    q = q.reshape(-1, 8)
    expected = cross_entropy_into(q, np.empty((2,) + q.shape, np.float32), work=np.empty(q.shape))
    got = _losses32(q, np.empty((2,) + q.shape, np.float32))
    np.testing.assert_array_equal(got, expected)
    assert np.isfinite(got).all() and got.max() == -np.log(np.float32(2.0**-52))


@pytest.mark.parametrize("recomputed", [False, True])
@pytest.mark.parametrize("code", [one_vs_one(6), CUSTOM], ids=["ovo", "custom"])
def test_threads_sum_the_chunks_as_one_thread(code, recomputed):
    """evaluate and hessp on three threads (chunks computed out of order) equal the
    one-thread loop to the bit, with intercepts and sample weights; a worker's
    error reaches the caller."""
    from convexagg.aggregation import RecomputedObjective

    Q, y, x, v, s = _problem(code, seed=5, n=700)
    kind = RecomputedObjective if recomputed else BlockedObjective
    kw = dict(dtype=np.float32, chunk=64, fit_intercept=True, sample_weight=s)
    one, many = (
        kind.from_outputs(Q.astype(np.float32), code, y, Penalty(0.01), **kw) for _ in "ab"
    )
    one.n_threads, many.n_threads = 1, 3
    p, q = one.evaluate(x), many.evaluate(x)
    assert p.value == q.value
    np.testing.assert_array_equal(p.grad, q.grad)
    np.testing.assert_array_equal(p.P, q.P)
    np.testing.assert_array_equal(one.hessp(p, v), many.hessp(q, v))
    calls = itertools.count()

    def failing(*args):  # the fifth chunk's kernel fails on its worker thread
        if next(calls) == 4:
            raise FloatingPointError("chunk 5")
        return BlockedObjective._rho(many, *args)

    many._rho = failing
    with pytest.raises(FloatingPointError, match="chunk 5"):
        many.evaluate(x)


def test_losses_that_do_not_fit_are_recomputed_within_the_memory_formula(monkeypatch):
    """When the stored losses would exceed the machine's share, the decoder fits a
    RecomputedObjective: the same weights, and a peak (tracemalloc) within the
    formula of convexagg.aggregation.recomputed, below the stored losses alone."""
    import tracemalloc

    import convexagg.aggregation.blocked as blocked
    import convexagg.aggregation.recomputed as recomputed
    from convexagg import ConvexDecoder
    from convexagg.aggregation import RecomputedObjective

    rng = np.random.default_rng(0)
    code = one_vs_one(12)
    K, M = code.shape
    n = 200_000
    y = rng.integers(0, K, size=n)
    strength = rng.uniform(0.1, 3.0, size=M)  # unequal binaries: unequal weights
    Q = 1.0 / (1.0 + np.exp(-(strength * code[y] + 2.0 * rng.normal(size=(n, M)))))
    Q = Q.astype(np.float32)
    monkeypatch.setattr(recomputed, "STORED_SHARE", 0.0)
    objective = ConvexDecoder().likelihood_objective(Q, y, code)
    assert isinstance(objective, RecomputedObjective)
    m, c, s = objective.LT.shape[0], objective.chunk, objective.dtype.itemsize
    T, p, q = objective.n_threads, recomputed._PIECE, 4  # float32 Q and losses

    # the stored fit at the recomputed objective's (smaller) chunk: the same sums
    monkeypatch.setattr(recomputed, "STORED_SHARE", 1.0)
    monkeypatch.setattr(blocked, "_default_chunk", lambda *args: c)
    objective = ConvexDecoder().likelihood_objective(Q, y, code)
    assert not isinstance(objective, RecomputedObjective) and objective.chunk == c
    stored = ConvexDecoder(alpha=1e-3).fit(Q, y, code)

    monkeypatch.setattr(recomputed, "STORED_SHARE", 0.0)
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    fit = ConvexDecoder(alpha=1e-3).fit(Q, y, code)
    peak = tracemalloc.get_traced_memory()[1] - base
    tracemalloc.stop()
    np.testing.assert_array_equal(fit.weights_, stored.weights_)
    assert fit.n_iter_ >= 2
    # three points' probabilities, each thread's buffers, the Hessian kernels' work
    # arrays, the Hessian and the subsample (the module docstring's formula)
    threads = T * (c * m * s + p * M * (q + 2 * s))
    bound = 3 * n * K * 8 + threads + 3 * c * m * s + 8 * (M + K) ** 2 + 4000 * m * 4
    assert peak <= bound < m * n * s


def test_the_contract_is_declared_and_checked():
    code = one_vs_one(3)
    Q, y, _, _, _ = _problem(code, n=10)
    blocked = BlockedObjective.from_outputs(Q, code, y)
    assert isinstance(blocked, Objective)
    assert check_objective(blocked, ("hessp", "hess_diag", "hessian", "take")) is blocked

    class ValueOnly:
        n_samples, n_weights, n_intercepts, n_variables = 10, 3, 0, 3

        def evaluate(self, x):
            return blocked.evaluate(x)

    with pytest.raises(TypeError, match="lacks") as info:
        check_objective(ValueOnly(), ("hessian",), "ProjectedNewton")
    assert "value, hessian" in str(info.value) and "ProjectedNewton" in str(info.value)


def test_rejects_other_dtypes_and_bad_sample_weights():
    code = one_vs_one(3)
    Q, y, _, _, _ = _problem(code, n=10)
    with pytest.raises(ValueError, match="float32 or float64"):
        BlockedObjective.from_outputs(Q, code, y, dtype=np.int64)
    with pytest.raises(ValueError, match="sample_weight must have shape"):
        BlockedObjective.from_outputs(Q, code, y, sample_weight=np.ones(3))
    with pytest.raises(ValueError, match="finite and >= 0"):
        BlockedObjective.from_outputs(Q, code, y, sample_weight=-np.ones(10))
    with pytest.raises(ValueError, match="sums to 0"):
        BlockedObjective.from_outputs(Q, code, y, sample_weight=np.zeros(10))
    with pytest.raises(ValueError, match="not defined for output='margin'"):
        BlockedObjective.from_outputs(Q, code, y, loss="cross_entropy", output="margin")


def test_float32_outputs_are_clipped_as_binary_losses_does():
    code = one_vs_one(4)
    Q, y, x, _, _ = _problem(code)
    Q = Q.astype(np.float32)
    Q[:2] = np.array([0.0, 1.0], dtype=np.float32)[:, None]
    w = x[: code.shape[1]]
    dense = DenseObjective(stack_losses(*binary_losses(Q)), code, y, Penalty(0.1))
    blocked = BlockedObjective.from_outputs(Q, code, y, Penalty(0.1))
    assert blocked.value(w) == pytest.approx(dense.value(w), rel=1e-12)


def test_storage_size_and_no_tensor():
    """Storage is the stored columns x samples, in the requested precision."""
    code = one_vs_one(6)
    Q, y, _, _, _ = _problem(code, n=40)
    for dtype, itemsize in [(np.float64, 8), (np.float32, 4)]:
        obj = BlockedObjective.from_outputs(Q, code, y, dtype=dtype)
        assert obj.LT.shape == (2 * code.shape[1], 40)
        assert obj.LT.dtype.itemsize == itemsize
