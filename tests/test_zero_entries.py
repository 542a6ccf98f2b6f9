"""``zero_entry_penalty``: weights on the code's zero entries, one per side.

Checked against independent references: the expanded code's discrepancy against
a tensor sum over classes, sides and classifiers; the penalty against its
definition (a least-squares minimum over the shared weights plus the free
weights' own quadratic); the class-blocked objective against the dense one; the
fit against scipy's L-BFGS-B on the model with explicit variables; and the
model without zero entries as the limit of a strong penalty.
"""

import numpy as np
import pytest
from scipy.optimize import approx_fprime, minimize
from scipy.special import logsumexp

from binary_outputs import noisy_code_outputs
from convexagg import ConvexAggregationClassifier, ConvexDecoder, regularization_path
from convexagg.aggregation import (
    BlockedObjective,
    DenseObjective,
    Penalty,
    code_entries,
    expand_code,
    model_entries,
    side_entry_weights,
    stack_losses,
    zero_entries,
)
from convexagg.codes import one_vs_one, one_vs_rest
from convexagg.losses import binary_losses
from convexagg.solvers import ProjectedNewton

OVO = one_vs_one(4)
MIXED = np.hstack([one_vs_one(4), one_vs_rest(4)])


def _tensor_rho(Q, S, b=None):
    """rho[i, k] = sum_l S[0, k, l] d(+1, Q[i, l]) + S[1, k, l] d(-1, Q[i, l]) + b_k."""
    L_pos, L_neg = binary_losses(Q)
    rho = np.einsum("il,kl->ik", L_pos, S[0]) + np.einsum("il,kl->ik", L_neg, S[1])
    return rho if b is None else rho + b


def _penalty_reference(x, code, l2, shrink, free_l2):
    """min_w l2/2 |w|^2 + shrink/2 sum (u - w_col)^2 over the code's entries, by least
    squares, plus (l2 + free_l2)/2 |v|^2 on the zero entries' weights."""
    columns = code_entries(code)[1]
    u, v = x[: columns.size], x[columns.size :]
    M = code.shape[1]
    A = np.vstack([np.sqrt(l2) * np.eye(M), np.sqrt(shrink) * np.eye(M)[columns]])
    rhs = np.concatenate([np.zeros(M), np.sqrt(shrink) * u])
    w = np.linalg.lstsq(A, rhs, rcond=None)[0]
    return 0.5 * float(np.sum((A @ w - rhs) ** 2)) + 0.5 * (l2 + free_l2) * float(v @ v)


def _penalty(code, l2=0.05, shrink=0.5, free_l2=0.3):
    classes, columns, _ = model_entries(code, zero=True)
    coupled = np.arange(columns.size) < np.count_nonzero(code)
    return Penalty.from_alpha(
        l2, shrink=shrink, columns=np.where(coupled, columns, -1), free_l2=free_l2
    )


def test_model_entries_and_side_weights():
    code = MIXED
    classes, columns, sides = model_entries(code, zero=True)
    nnz, n_zero = np.count_nonzero(code), np.count_nonzero(code == 0)
    assert classes.size == nnz + 2 * n_zero
    np.testing.assert_array_equal(sides[:nnz], code[code_entries(code)])
    np.testing.assert_array_equal(sides[nnz:], np.repeat([1, -1], n_zero))
    zc, zl = zero_entries(code)
    assert np.all(code[zc, zl] == 0)
    # without zero entries: the code's entries, as before
    for a, b in zip(model_entries(code)[:2], code_entries(code)):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(expand_code(code, zero=False), expand_code(code))
    # the expanded code's discrepancy is the tensor sum of the side weights
    Q, _ = noisy_code_outputs(code, 40, 0)
    u = np.random.default_rng(1).uniform(0, 2, classes.size)
    S = side_entry_weights(code, u, zero=True)
    L_pos, L_neg = binary_losses(Q[:, columns])
    E = expand_code(code, zero=True)
    rho = L_pos @ (u * (E == 1)).T + L_neg @ (u * (E == -1)).T
    np.testing.assert_allclose(rho, _tensor_rho(Q, S), rtol=1e-12)


def test_penalty_with_free_weights_is_its_definition():
    code = MIXED
    penalty = _penalty(code)
    n = model_entries(code, zero=True)[0].size
    rng = np.random.default_rng(0)
    x = rng.uniform(0, 2, n + 4)  # four intercepts after the weights
    b = x[n:]
    ref = _penalty_reference(x[:n], code, 0.05, 0.5, 0.3) + 0.5 * 0.05 * b @ b
    assert penalty.value(x, n) == pytest.approx(ref, rel=1e-12)
    grad = approx_fprime(x, lambda z: penalty.value(z, n), 1e-7)
    np.testing.assert_allclose(penalty.grad(x, n), grad, rtol=1e-5, atol=1e-6)
    H = penalty.add_to_hessian(np.zeros((x.size, x.size)), n)
    np.testing.assert_allclose(np.column_stack([penalty.hessp(e, n) for e in np.eye(x.size)]), H)
    np.testing.assert_allclose(penalty.hess_diag(n, x.size), np.diag(H))
    # the free weights come last (the solvers hold the first n - n_free >= 0)
    assert penalty.n_free == 2 * np.count_nonzero(code == 0)
    with pytest.raises(ValueError, match="free weights .* must come after"):
        Penalty.from_alpha(0.05, shrink=0.5, columns=[0, -1, 1])
    # the grouped Hessian A'HA of a grouping that puts free weights in groups too
    groups = rng.integers(-1, 5, n)
    A = np.zeros((n, 5))
    A[np.flatnonzero(groups >= 0), groups[groups >= 0]] = 1
    np.testing.assert_allclose(penalty.grouped_hessian(groups, 5, n), A.T @ H[:n, :n] @ A)
    # the shared weights ignore the free weights
    nnz = np.count_nonzero(code)
    shared = penalty.shared_weights(x[:n])
    assert shared.size == code.shape[1]
    np.testing.assert_allclose(
        shared, _penalty(code, free_l2=7.0).shared_weights(x[:n] * (np.arange(n) < nnz))
    )


@pytest.mark.parametrize("fit_intercept, weighted", [(False, False), (True, True)])
def test_blocked_equals_dense_with_zero_entries(fit_intercept, weighted):
    code = MIXED
    Q, y = noisy_code_outputs(code, 70, 2)
    rng = np.random.default_rng(3)
    classes, columns, _ = model_entries(code, zero=True)
    expanded = expand_code(code, zero=True)
    penalty = _penalty(code)
    s = rng.uniform(0.2, 3.0, size=y.size) if weighted else None
    n_var = classes.size + (code.shape[0] if fit_intercept else 0)
    x, v = rng.uniform(0.1, 2.0, size=n_var), rng.normal(size=n_var)
    L_pos, L_neg = binary_losses(Q[:, columns])
    kw = dict(fit_intercept=fit_intercept, sample_weight=s)
    dense = DenseObjective(stack_losses(L_pos, L_neg), expanded, y, penalty, **kw)
    blocked = BlockedObjective.from_outputs(Q, expanded, y, penalty, columns=columns, **kw)
    a, b = dense.evaluate(x), blocked.evaluate(x)
    assert b.value == pytest.approx(a.value, rel=1e-10)
    np.testing.assert_allclose(b.grad, a.grad, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(blocked.hessp(b, v), dense.hessp(a, v), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(blocked.hessian(b), dense.hessian(a), rtol=1e-9, atol=1e-12)
    # the block of a few zero entries' weights alone (the projected Newton method's free
    # set when every entry weight is held at 0): from their stored losses, no coupling
    few = np.arange(np.count_nonzero(code), classes.size)[:3]
    np.testing.assert_allclose(
        blocked.hessian(b, variables=few), dense.hessian(a)[np.ix_(few, few)], rtol=1e-9
    )


def _reference_fit(Q, y, code, alpha, shrink, zero_l2):
    """The model with explicit variables (u, w >= 0; v+, v- and b free) by scipy's L-BFGS-B."""
    classes, columns = code_entries(code)
    zc, zl = zero_entries(code)
    n_u, n_z, M, K = classes.size, zc.size, code.shape[1], code.shape[0]
    rows = np.arange(y.size)
    L_pos, L_neg = binary_losses(Q)

    def unpack(z):
        u, w = z[:n_u], z[n_u : n_u + M]
        vp, vm = z[n_u + M : n_u + M + n_z], z[n_u + M + n_z : n_u + M + 2 * n_z]
        S = np.zeros((2, K, M))
        S[(code[classes, columns] < 0).astype(int), classes, columns] = u
        S[0, zc, zl], S[1, zc, zl] = vp, vm
        return u, w, vp, vm, S, z[n_u + M + 2 * n_z :]

    def f(z):
        u, w, vp, vm, S, b = unpack(z)
        rho = _tensor_rho(Q, S, b)
        lse = logsumexp(-rho, axis=1)
        R = -np.exp(-rho - lse[:, None])
        R[rows, y] += 1.0
        gS = np.stack([R.T @ L_pos, R.T @ L_neg]) / y.size
        diff = u - w[columns]
        value = np.mean(rho[rows, y] + lse) + alpha / 2 * w @ w + shrink / 2 * diff @ diff
        value += (alpha + zero_l2) / 2 * (vp @ vp + vm @ vm) + max(alpha, 1e-6) / 2 * b @ b
        side = (code[classes, columns] < 0).astype(int)
        g = [
            gS[side, classes, columns] + shrink * diff,
            alpha * w - shrink * np.bincount(columns, weights=diff, minlength=M),
            gS[0, zc, zl] + (alpha + zero_l2) * vp,
            gS[1, zc, zl] + (alpha + zero_l2) * vm,
            R.sum(axis=0) / y.size + max(alpha, 1e-6) * b,
        ]
        return value, np.concatenate(g)

    z0 = np.concatenate([np.ones(n_u + M), np.zeros(2 * n_z + K)])
    bounds = [(0, None)] * (n_u + M) + [(None, None)] * (2 * n_z + K)
    res = minimize(
        f, z0, jac=True, method="L-BFGS-B", bounds=bounds,
        options={"ftol": 1e-15, "gtol": 1e-11, "maxiter": 20000, "maxcor": 30},
    )  # fmt: skip
    assert res.success, res.message
    _, w, _, _, S, b = unpack(res.x)
    return S, w, b, res.fun


@pytest.mark.parametrize("code", [OVO, MIXED], ids=["ovo", "ovo+ovr"])
def test_fit_equals_scipy_on_the_explicit_model(code):
    Q, y = noisy_code_outputs(code, 90, 5)
    alpha, shrink, zero_l2 = 0.02, 0.3, 0.05
    S, w, b, value = _reference_fit(Q, y, code, alpha, shrink, zero_l2)
    dec = ConvexDecoder(
        alpha=alpha,
        entry_weight_shrinkage=shrink,
        zero_entry_penalty=zero_l2,
        fit_intercept=True,
        solver=ProjectedNewton(tol=1e-10),
    ).fit(Q, y, code)
    assert dec.converged_
    assert dec.objective_ == pytest.approx(value, rel=1e-9)
    np.testing.assert_allclose(dec.zero_entry_weights_, S * (code == 0), atol=2e-5)
    assert (S * (code == 0)).min() < -1e-3  # the optimum has zero-entry weights below 0
    U = S[0] + S[1]
    np.testing.assert_allclose(dec.entry_weights_, U * (code != 0), atol=2e-5)
    np.testing.assert_allclose(dec.weights_, w, atol=2e-5)
    np.testing.assert_allclose(dec.intercept_, b, atol=2e-5)
    assert dec.zero_entry_weights_.max() > 1e-3  # the zero entries are used
    side = dec.zero_entry_weights_ + np.stack([U * (code == 1), U * (code == -1)])
    # the zero entries weigh both sides, so the losses of outputs near 0 and 1 count, whose
    # 1 - q the fused decode forms otherwise than binary_losses: agreement to 1e-6
    np.testing.assert_allclose(
        dec.decision_function(Q), -_tensor_rho(Q, side, dec.intercept_), rtol=1e-6
    )


def test_every_solver_fits_zero_entries():
    Q, y = noisy_code_outputs(OVO, 90, 6)
    kw = dict(entry_weight_shrinkage=0.3, zero_entry_penalty=0.01, fit_intercept=True)
    reference = ConvexDecoder(solver=ProjectedNewton(tol=1e-10), **kw).fit(Q, y, OVO)
    for solver in ("interior_point", "lbfgsb"):
        dec = ConvexDecoder(solver=solver, **kw).fit(Q, y, OVO)
        np.testing.assert_allclose(
            dec.predict_proba(Q), reference.predict_proba(Q), atol=1e-3, err_msg=solver
        )


def test_integer_sample_weights_fit_as_repeated_rows():
    Q, y = noisy_code_outputs(MIXED, 60, 9)
    counts = np.random.default_rng(9).integers(1, 4, size=y.size)
    kw = dict(entry_weight_shrinkage=0.2, zero_entry_penalty=0.02, fit_intercept=True)
    kw["solver"] = ProjectedNewton(tol=1e-10)
    weighted = ConvexDecoder(**kw).fit(Q, y, MIXED, sample_weight=counts)
    repeated = ConvexDecoder(**kw).fit(np.repeat(Q, counts, axis=0), np.repeat(y, counts), MIXED)
    assert np.abs(repeated.zero_entry_weights_).max() > 1e-2  # the zero entries are used
    for name in ("zero_entry_weights_", "entry_weights_", "intercept_"):
        np.testing.assert_allclose(
            getattr(weighted, name), getattr(repeated, name), atol=1e-6, err_msg=name
        )


def test_a_strong_zero_entry_penalty_is_the_model_without_them():
    Q, y = noisy_code_outputs(MIXED, 80, 7)
    solver = ProjectedNewton(tol=1e-10)
    kw = dict(alpha=0.01, entry_weight_shrinkage=0.1, fit_intercept=True, solver=solver)
    without = ConvexDecoder(**kw).fit(Q, y, MIXED)
    # (free in sign, the sides are fitted, not held at 0: at 1e8 the Newton steps on them
    # fall below what float64 resolves at tol=1e-10)
    strong = ConvexDecoder(zero_entry_penalty=1e6, **kw).fit(Q, y, MIXED)
    np.testing.assert_allclose(strong.predict_proba(Q), without.predict_proba(Q), atol=1e-6)
    assert np.all(without.zero_entry_weights_ == 0)
    assert np.abs(strong.zero_entry_weights_).max() < 1e-6
    # a weak penalty fits the training data at least as well
    weak = ConvexDecoder(zero_entry_penalty=0.0, **kw).fit(Q, y, MIXED)
    assert weak.objective_ <= without.objective_ + 1e-12


def test_warm_start_dask_and_settings_that_cannot_apply():
    Q, y = noisy_code_outputs(OVO, 90, 8)
    kw = dict(entry_weight_shrinkage=0.3, zero_entry_penalty=0.01, fit_intercept=True)
    dec = ConvexDecoder(warm_start=True, **kw).fit(Q, y, OVO)
    first = dec.predict_proba(Q)
    dec.fit(Q, y, OVO)
    assert dec.n_iter_ <= 1
    np.testing.assert_allclose(dec.predict_proba(Q), first, atol=1e-6)
    with pytest.raises(ValueError, match="zero_entry_penalty needs entry weights"):
        ConvexDecoder(zero_entry_penalty=0.01).fit(Q, y, OVO)
    with pytest.raises(ValueError, match="zero_entry_penalty"):
        ConvexDecoder(entry_weight_shrinkage=0.3, zero_entry_penalty=-1.0).fit(Q, y, OVO)
    da = pytest.importorskip("dask.array")
    lazy = ConvexDecoder(solver="projected_newton", **kw)
    lazy.fit(da.from_array(Q, chunks=(30, -1)), da.from_array(y, chunks=30), OVO)
    local = ConvexDecoder(solver="projected_newton", **kw).fit(Q, y, OVO)
    np.testing.assert_allclose(lazy.zero_entry_weights_, local.zero_entry_weights_, atol=1e-6)


def test_the_path_follows_the_zero_entries_as_fits_at_each_alpha():
    """The regularisation path with zero entries (each alpha warm-started from the last)
    against a cold fit of the decoder at each alpha."""
    Q, y = noisy_code_outputs(OVO, 90, 8)
    kw = dict(
        entry_weight_shrinkage=0.3,
        zero_entry_penalty=0.01,
        fit_intercept=True,
        solver=ProjectedNewton(tol=1e-10),  # both to the same precision
    )
    alphas = [1e-1, 1e-2, 1e-3]
    path = regularization_path(Q, y, OVO, decoder=ConvexDecoder(**kw), alphas=alphas)
    assert np.any(path.zero_entry_weights != 0)
    for i, alpha in enumerate(path.alphas):
        fit = ConvexDecoder(alpha=alpha, **kw).fit(Q, y, OVO)
        for name, got in [
            ("zero_entry_weights_", path.zero_entry_weights[i]),
            ("entry_weights_", path.entry_weights[i]),
            ("weights_", path.weights[i]),
            ("intercept_", path.intercepts[i]),
        ]:
            np.testing.assert_allclose(got, getattr(fit, name), atol=1e-5, err_msg=name)
        assert path.objective[i] == pytest.approx(fit.objective_, rel=1e-8)
    without = regularization_path(
        Q, y, OVO, decoder=ConvexDecoder(**{**kw, "zero_entry_penalty": None}), alphas=alphas
    )
    assert np.all(without.zero_entry_weights == 0)


def test_the_classifier_auto_chooses_among_the_priors_over_the_rows():
    from sklearn.datasets import load_wine
    from sklearn.preprocessing import scale

    from convexagg.estimator import ZERO_ENTRY_PRIORS

    X, y = load_wine(return_X_y=True)
    X = scale(X)
    clf = ConvexAggregationClassifier(zero_entry_penalty="auto", random_state=0).fit(X, y)
    candidates = [c / X.shape[0] for c in ZERO_ENTRY_PRIORS]
    best = candidates[int(np.nanargmin(clf.zero_entry_penalty_scores_))]  # NaN: not fitted
    assert clf.decoder_.zero_entry_penalty == clf.zero_entry_penalty_ == pytest.approx(best)
    assert clf.zero_entry_weights_.shape == (2,) + clf.code_matrix_.shape
    assert np.all(clf.zero_entry_weights_[:, clf.code_matrix_ != 0] == 0)
    P = clf.predict_proba(X)
    np.testing.assert_allclose(P.sum(axis=1), 1.0)
    # the decoder refitted on the same outputs is the same fit
    before = clf.predict_proba(X)
    clf.fit_decoder(X, y)
    np.testing.assert_allclose(clf.predict_proba(X), before, atol=1e-8)
    # a fixed value is passed on as it is; None keeps the model without them
    fixed = ConvexAggregationClassifier(zero_entry_penalty=0.5, cv=3).fit(X, y)
    assert fixed.decoder_.zero_entry_penalty == 0.5
    plain = ConvexAggregationClassifier(zero_entry_penalty=None, cv=3).fit(X, y)
    assert plain.decoder_.zero_entry_penalty is None
    assert np.all(plain.zero_entry_weights_ == 0)
    with pytest.raises(ValueError, match="zero_entry_penalty"):
        ConvexAggregationClassifier(zero_entry_penalty="always").fit(X, y)


@pytest.mark.parametrize(
    "params, limit, why",
    [
        ({}, ("ZERO_ENTRY_AUTO_MAX_WEIGHTS", 5), "6 zero-entry weights above the limit of 5"),
        ({}, ("ZERO_ENTRY_AUTO_MAX_ROWS", 100), "178 rows above the limit of 100"),
        ({"entry_weight_shrinkage": None}, None, "no entry weights"),
        ({"penalty": "l1"}, None, "no entry weights"),
        ({"code": "ovr"}, None, "no zero entries in the code"),
        (
            {"entry_weight_shrinkage": [0.01, 0.001]},
            None,
            "a list of entry_weight_shrinkage (chosen without them)",
        ),
    ],
)
def test_auto_is_none_where_the_zero_entries_cannot_apply_or_cost_too_much(
    params, limit, why, monkeypatch, capsys
):
    """The default "auto" weighs the zero entries only within its limits and where they
    apply; elsewhere it is the fit with zero_entry_penalty=None, and resolved_ and verbose
    say why."""
    from sklearn.datasets import load_wine
    from sklearn.preprocessing import scale

    from convexagg import defaults

    X, y = load_wine(return_X_y=True)
    X = scale(X)
    kw = dict(cv=3, random_state=0, **params)
    within = ConvexAggregationClassifier(**kw).fit(X, y)
    if limit is not None:  # within the limits (wine: 6 zero-entry weights, 178 rows)
        assert within.zero_entry_penalty_ is not None
        assert (
            "chosen among [80, 20, 5, 1.25] / 178"
            in within.resolved_["zero_entry_penalty"]["reason"]
        )
        monkeypatch.setattr(defaults, *limit)
    auto = ConvexAggregationClassifier(verbose=1, **kw).fit(X, y)
    assert auto.zero_entry_penalty_ is None and auto.zero_entry_penalty_scores_ is None
    assert np.all(auto.zero_entry_weights_ == 0)
    assert auto.resolved_["zero_entry_penalty"] == {"value": None, "reason": why}
    assert f"zero_entry_penalty='auto': None ({why})" in capsys.readouterr().out
    none = ConvexAggregationClassifier(zero_entry_penalty=None, **kw).fit(X, y)
    np.testing.assert_array_equal(auto.predict_proba(X), none.predict_proba(X))
