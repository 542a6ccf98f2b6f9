"""Entry weights (``entry_weight_shrinkage``): one weight per nonzero code entry.

References written independently of the library's expanded code: the
discrepancy as an explicit ``n x K x M`` tensor with a ``(K, M)`` weight
matrix, the shrinkage penalty minimised over the shared weights by least
squares, and the whole model -- entry weights, shared weights and intercepts
as explicit variables -- solved by scipy's L-BFGS-B.
"""

import numpy as np
import pytest
from scipy.optimize import approx_fprime, minimize
from scipy.special import logsumexp

from binary_outputs import noisy_code_outputs
from convexagg import ConvexAggregationClassifier, ConvexDecoder
from convexagg.aggregation import (
    L1,
    BlockedObjective,
    DenseObjective,
    EntryShrinkage,
    Penalty,
    code_entries,
    discrepancies,
    entry_matrix,
    expand_code,
    side_weights,
    stack_losses,
)
from convexagg.codes import dense_random, one_vs_one, one_vs_rest
from convexagg.losses import binary_losses
from convexagg.solvers import LBFGSB, ProjectedNewton

CODES = {
    "ovo": one_vs_one(4),
    "ovr": one_vs_rest(4),
    "dense_random": dense_random(5, n_candidates=20, random_state=1),
    "custom": np.array([[1, 1, 0, -1, 0], [-1, 0, 1, -1, 0], [0, -1, -1, 1, 1], [0, 0, 0, 1, -1]]),
}


def _data(code, n=60, seed=0):
    return noisy_code_outputs(code, n, seed)


def _tensor_rho(Q, code, U, b=None):
    """rho[i, k] = sum_l U[k, l] d(C[k, l], Q[i, l]) + b_k, from an n x K x M tensor."""
    L_pos, L_neg = binary_losses(Q)
    D = np.where(code[None] == 1, L_pos[:, None, :], 0.0) + np.where(
        code[None] == -1, L_neg[:, None, :], 0.0
    )
    rho = np.einsum("ikl,kl->ik", D, U)
    return rho if b is None else rho + b


def _penalty_reference(u, columns, l2, shrink):
    """min_w l2/2 |w|^2 + shrink/2 sum_j (u_j - w_columns[j])^2, by least squares."""
    M = columns.max() + 1
    A = np.vstack([np.sqrt(l2) * np.eye(M), np.sqrt(shrink) * np.eye(M)[columns]])
    rhs = np.concatenate([np.zeros(M), np.sqrt(shrink) * u])
    w = np.linalg.lstsq(A, rhs, rcond=None)[0]
    return 0.5 * float(np.sum((A @ w - rhs) ** 2)), w


@pytest.mark.parametrize("name", list(CODES))
def test_expanded_code_is_the_entry_weight_discrepancy(name):
    code = CODES[name]
    Q, _ = _data(code)
    rng = np.random.default_rng(1)
    classes, columns = code_entries(code)
    u = rng.uniform(0.1, 2.0, size=classes.size)
    U = entry_matrix(code, u)
    assert np.all(U[code == 0] == 0) and np.count_nonzero(U) == classes.size
    expanded = expand_code(code)
    assert expanded.shape == (code.shape[0], classes.size)
    assert np.all(np.count_nonzero(expanded, axis=0) == 1)
    L_exp = stack_losses(*binary_losses(Q[:, columns]))
    rho = discrepancies(L_exp, side_weights(expanded, u))
    reference = _tensor_rho(Q, code, U)
    np.testing.assert_allclose(rho, reference, rtol=1e-12)
    # the (K, M) side weights give the same product on the original losses
    L = stack_losses(*binary_losses(Q))
    np.testing.assert_allclose(discrepancies(L, side_weights(code, U)), reference, rtol=1e-12)


@pytest.mark.parametrize("l2", [0.0, 0.3])
def test_shrinkage_penalty_is_the_minimum_over_shared_weights(l2):
    code = CODES["custom"]
    columns = code_entries(code)[1]
    shrink = 0.7
    penalty = Penalty.from_alpha(l2, shrink=shrink, columns=columns)
    n_w, K = columns.size, code.shape[0]
    rng = np.random.default_rng(2)
    x = np.concatenate([rng.uniform(0.0, 2.0, size=n_w), rng.normal(size=K)])
    value, w = _penalty_reference(x[:n_w], columns, l2, shrink)
    b_term = 0.5 * max(l2, 1e-6) * x[n_w:] @ x[n_w:]
    assert penalty.value(x, n_w) == pytest.approx(value + b_term, rel=1e-10)
    np.testing.assert_allclose(penalty.shared_weights(x[:n_w]), w, rtol=1e-8, atol=1e-12)
    grad = penalty.grad(x, n_w)
    fd = approx_fprime(x, lambda z: penalty.value(z, n_w), 1e-7)
    np.testing.assert_allclose(grad, fd, rtol=1e-5, atol=1e-6)
    H = penalty.add_to_hessian(np.zeros((x.size, x.size)), n_w)
    H_cols = np.column_stack([penalty.hessp(e, n_w) for e in np.eye(x.size)])
    np.testing.assert_allclose(H_cols, H, atol=1e-14)
    np.testing.assert_allclose(penalty.hess_diag(n_w, x.size), np.diag(H), atol=1e-14)
    np.testing.assert_allclose(H @ x, grad, atol=1e-12)  # a quadratic form
    assert np.linalg.eigvalsh(H).min() > -1e-12  # convex
    # the restriction to some weights is the Hessian's block on them
    keep = np.array([0, 2, 3, 6])
    sub = penalty.restrict(keep)
    np.testing.assert_allclose(
        sub.add_to_hessian(np.zeros((keep.size, keep.size)), keep.size), H[np.ix_(keep, keep)]
    )


def test_shrinkage_penalty_refuses_what_it_cannot_be():
    with pytest.raises(ValueError, match="penalty='l2' only"):
        Penalty.from_alpha(1.0, "l1", shrink=1.0, columns=[0, 0])
    with pytest.raises(ValueError, match="needs columns"):
        EntryShrinkage(l2=1.0, shrink=1.0, columns=None)
    with pytest.raises(ValueError, match="shrink must be > 0"):
        EntryShrinkage(shrink=0.0, columns=(0,))
    with pytest.raises(ValueError, match="quadratic penalty only"):
        Penalty.from_terms(EntryShrinkage(shrink=1.0, columns=(0, 0)), L1(0.1))


@pytest.mark.parametrize("name", list(CODES))
@pytest.mark.parametrize("fit_intercept, weighted", [(False, False), (True, True)])
def test_blocked_equals_dense_with_entry_weights(name, fit_intercept, weighted):
    code = CODES[name]
    Q, y = _data(code)
    rng = np.random.default_rng(3)
    classes, columns = code_entries(code)
    expanded = expand_code(code)
    penalty = Penalty.from_alpha(0.05, shrink=0.5, columns=columns)
    s = rng.uniform(0.2, 3.0, size=y.size) if weighted else None
    n_var = classes.size + (code.shape[0] if fit_intercept else 0)
    x = rng.uniform(0.1, 2.0, size=n_var)
    v = rng.normal(size=n_var)
    L_pos, L_neg = binary_losses(Q[:, columns])
    kw = dict(fit_intercept=fit_intercept, sample_weight=s)
    dense = DenseObjective(stack_losses(L_pos, L_neg), expanded, y, penalty, **kw)
    blocked = BlockedObjective(L_pos, L_neg, expanded, y, penalty, chunk=17, **kw)
    a, b = dense.evaluate(x), blocked.evaluate(x)
    assert b.value == pytest.approx(a.value, rel=1e-10)
    np.testing.assert_allclose(b.grad, a.grad, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(blocked.hessp(b, v), dense.hessp(a, v), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(blocked.hess_diag(b), dense.hess_diag(a), rtol=1e-10)
    H = dense.hessian(a)
    np.testing.assert_allclose(blocked.hessian(b), H, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(np.column_stack([dense.hessp(a, e) for e in np.eye(n_var)]), H)
    few = np.array([0, 3])  # a small block: computed from a restricted copy
    np.testing.assert_allclose(blocked.hessian(b, few), H[np.ix_(few, few)], atol=1e-12)
    # the value is the likelihood of the tensor reference plus the penalty
    U = entry_matrix(code, x[: classes.size])
    rho = _tensor_rho(Q, code, U, x[classes.size :] if fit_intercept else None)
    sw = np.ones(y.size) if s is None else s
    nll = sw @ (rho[np.arange(y.size), y] + logsumexp(-rho, axis=1)) / sw.sum()
    assert a.value == pytest.approx(nll + penalty.value(x, classes.size), rel=1e-12)


def _reference_fit(Q, y, code, alpha, shrink, fit_intercept, column_l2=0.0):
    """The model with explicit variables (u >= 0, w >= 0, free b), by scipy's L-BFGS-B;
    ``column_l2``: each column weight's extra strength (``column_penalty``)."""
    classes, columns = code_entries(code)
    c = alpha + np.broadcast_to(np.asarray(column_l2, dtype=float), (code.shape[1],))
    n_u, M, K = classes.size, code.shape[1], code.shape[0]
    n_b = K if fit_intercept else 0
    b_l2 = max(alpha, 1e-6)
    rows = np.arange(y.size)

    def f(z):
        u, w, b = z[:n_u], z[n_u : n_u + M], z[n_u + M :]
        U = entry_matrix(code, u)
        rho = _tensor_rho(Q, code, U, b if n_b else None)
        lse = logsumexp(-rho, axis=1)
        P = np.exp(-rho - lse[:, None])
        R = -P
        R[rows, y] += 1.0
        # d rho[i, k] / d U[k, l] = D[i, k, l]: the gradient through the tensor
        L_pos, L_neg = binary_losses(Q)
        D = np.where(code[None] == 1, L_pos[:, None, :], 0.0) + np.where(
            code[None] == -1, L_neg[:, None, :], 0.0
        )
        gU = np.einsum("ik,ikl->kl", R, D) / y.size
        diff = u - w[columns]
        value = np.mean(rho[rows, y] + lse) + c @ w**2 / 2 + shrink / 2 * diff @ diff
        value += b_l2 / 2 * b @ b
        g_u = gU[classes, columns] + shrink * diff
        g_w = c * w - shrink * np.bincount(columns, weights=diff, minlength=M)
        g_b = R.sum(axis=0)[:n_b] / y.size + b_l2 * b
        return value, np.concatenate([g_u, g_w, g_b])

    z0 = np.concatenate([np.ones(n_u + M), np.zeros(n_b)])
    bounds = [(0, None)] * (n_u + M) + [(None, None)] * n_b
    res = minimize(
        f, z0, jac=True, method="L-BFGS-B", bounds=bounds,
        options={"ftol": 1e-15, "gtol": 1e-11, "maxiter": 20000, "maxcor": 30},
    )  # fmt: skip
    assert res.success, res.message
    return entry_matrix(code, res.x[:n_u]), res.x[n_u : n_u + M], res.x[n_u + M :], res.fun


@pytest.mark.parametrize("name, fit_intercept", [("ovo", False), ("ovr", True), ("custom", True)])
def test_fit_equals_scipy_on_the_explicit_model(name, fit_intercept):
    code = CODES[name]
    Q, y = _data(code, n=80)
    alpha, shrink = 0.02, 0.3
    U, w, b, value = _reference_fit(Q, y, code, alpha, shrink, fit_intercept)
    dec = ConvexDecoder(
        alpha=alpha,
        entry_weight_shrinkage=shrink,
        fit_intercept=fit_intercept,
        solver=ProjectedNewton(tol=1e-10),
    ).fit(Q, y, code)
    assert dec.converged_
    assert dec.objective_ == pytest.approx(value, rel=1e-9)
    np.testing.assert_allclose(dec.entry_weights_, U, atol=2e-5)
    np.testing.assert_allclose(dec.weights_, w, atol=2e-5)
    if fit_intercept:
        np.testing.assert_allclose(dec.intercept_, b, atol=2e-5)
    # entry weights are >= 0, and 0 exactly where the code is 0
    assert dec.entry_weights_.min() >= 0
    assert np.all(dec.entry_weights_[code == 0] == 0)
    # predictions use the entry weights
    rho = _tensor_rho(Q, code, dec.entry_weights_, dec.intercept_ if fit_intercept else None)
    np.testing.assert_allclose(dec.decision_function(Q), -rho, rtol=1e-10, atol=1e-12)


def test_every_solver_fits_entry_weights():
    code = CODES["ovo"]
    Q, y = _data(code, n=80)
    reference = ConvexDecoder(entry_weight_shrinkage=0.3, solver=LBFGSB(tol=1e-12)).fit(Q, y, code)
    for solver in ("interior_point", "projected_newton"):
        dec = ConvexDecoder(entry_weight_shrinkage=0.3, solver=solver).fit(Q, y, code)
        np.testing.assert_allclose(
            dec.predict_proba(Q), reference.predict_proba(Q), atol=1e-3, err_msg=solver
        )


def test_strong_shrinkage_is_the_shared_weight_model():
    code = CODES["ovo"]
    Q, y = _data(code, n=80)
    solver = ProjectedNewton(tol=1e-10)
    shared = ConvexDecoder(alpha=0.01, solver=solver).fit(Q, y, code)
    strong = ConvexDecoder(alpha=0.01, entry_weight_shrinkage=1e5, solver=solver).fit(Q, y, code)
    np.testing.assert_allclose(strong.weights_, shared.weights_, rtol=1e-3)
    np.testing.assert_allclose(strong.entry_weights_, shared.entry_weights_, rtol=1e-3)
    np.testing.assert_allclose(strong.predict_proba(Q), shared.predict_proba(Q), atol=1e-4)
    # inf and None are the shared-weight model itself
    same = ConvexDecoder(alpha=0.01, entry_weight_shrinkage=np.inf, solver=solver).fit(Q, y, code)
    np.testing.assert_array_equal(same.weights_, shared.weights_)
    np.testing.assert_array_equal(same.predict_proba(Q), shared.predict_proba(Q))
    # weak shrinkage fits the training data at least as well
    weak = ConvexDecoder(alpha=0.01, entry_weight_shrinkage=1e-3, solver=solver).fit(Q, y, code)
    assert weak.objective_ <= shared.objective_ + 1e-12


@pytest.mark.parametrize("formulation", ["large_margin", "stiffness"])
def test_section4_formulations_take_entry_weights(formulation):
    code = CODES["ovr"]
    Q, y = _data(code, n=60)
    dec = ConvexDecoder(formulation=formulation, entry_weight_shrinkage=0.5).fit(Q, y, code)
    assert dec.entry_weights_.shape == code.shape
    assert np.all(dec.entry_weights_[code == 0] == 0) and dec.entry_weights_.min() >= 0


def test_warm_start_and_settings_that_cannot_apply():
    code = CODES["ovo"]
    Q, y = _data(code, n=80)
    dec = ConvexDecoder(entry_weight_shrinkage=0.3, warm_start=True).fit(Q, y, code)
    first = dec.entry_weights_.copy()
    dec.fit(Q, y, code)
    assert dec.n_iter_ <= 1
    np.testing.assert_allclose(dec.entry_weights_, first, atol=1e-6)
    with pytest.raises(ValueError, match="entry_weight_shrinkage=0.3 needs penalty='l2'"):
        ConvexDecoder(entry_weight_shrinkage=0.3, penalty="l1").fit(Q, y, code)
    with pytest.raises(ValueError, match="entry_weight_shrinkage"):
        ConvexDecoder(entry_weight_shrinkage=-1.0).fit(Q, y, code)


def test_dask_fit_equals_in_memory():
    da = pytest.importorskip("dask.array")
    code = CODES["custom"]
    Q, y = _data(code, n=90)
    dec = ConvexDecoder(entry_weight_shrinkage=0.3, fit_intercept=True, solver="projected_newton")
    local = dec.fit(Q, y, code).entry_weights_
    lazy = dec.fit(da.from_array(Q, chunks=(30, -1)), da.from_array(y, chunks=30), code)
    np.testing.assert_allclose(lazy.entry_weights_, local, rtol=1e-6, atol=1e-8)


def test_estimator_with_entry_weights_and_intercepts(tmp_path):
    from sklearn.datasets import load_wine
    from sklearn.preprocessing import scale

    from convexagg.io import load, save

    X, y = load_wine(return_X_y=True)
    X = scale(X)
    clf = ConvexAggregationClassifier(entry_weight_shrinkage=0.1, fit_intercept=True, cv=3)
    clf.fit(X, y)
    assert clf.entry_weights_.shape == clf.code_matrix_.shape
    assert clf.decoder_.entry_weight_shrinkage == 0.1
    P = clf.predict_proba(X)
    np.testing.assert_allclose(P.sum(axis=1), 1.0)
    save(clf, tmp_path / "model.skops")
    np.testing.assert_array_equal(load(tmp_path / "model.skops").predict_proba(X), P)


def test_what_is_stated_for_shared_weights_refuses_entry_weights():
    from convexagg.theory import generalization_bound

    code = CODES["ovo"]
    Q, y = _data(code, n=60)
    dec = ConvexDecoder(entry_weight_shrinkage=0.3)
    with pytest.raises(ValueError, match="entry_weight_shrinkage=None"):  # the fix named
        generalization_bound(dec.fit(Q, y, code), Q, y)
    shared = ConvexDecoder(entry_weight_shrinkage=np.inf).fit(Q, y, code)
    assert generalization_bound(shared, Q, y).total > 0


# -- ConvexAggregationClassifier's default: entry_weight_shrinkage="auto" (0.01 under L2) --


def _scaled(loader):
    from sklearn.preprocessing import scale

    X, y = loader(return_X_y=True)
    return scale(X), y


def test_the_classifiers_default_is_entry_weights_at_the_documented_shrinkage():
    from sklearn.datasets import load_iris, make_classification

    from convexagg.estimator import (
        DEFAULT_ENTRY_WEIGHT_PRIOR,
        ENTRY_WEIGHT_SHRINKAGE_RANGE,
        auto_entry_weight_shrinkage,
    )

    low, high = ENTRY_WEIGHT_SHRINKAGE_RANGE
    # a prior of 2 on the summed log-likelihood, within [0.001, 0.01]
    assert (DEFAULT_ENTRY_WEIGHT_PRIOR, low, high) == (2.0, 0.001, 0.01)
    assert [auto_entry_weight_shrinkage(n) for n in (50, 200, 500, 2000, 20_000)] == [
        0.01,
        0.01,
        0.004,
        0.001,
        0.001,
    ]
    iris = _scaled(load_iris)
    blobs = make_classification(500, 6, n_informative=4, n_classes=3, random_state=0)
    for (X, y), expected in ((iris, 0.01), (blobs, 0.004)):
        default = ConvexAggregationClassifier(cv=3, random_state=0).fit(X, y)
        explicit = ConvexAggregationClassifier(
            cv=3, random_state=0, entry_weight_shrinkage=expected
        ).fit(X, y)
        assert default.entry_weight_shrinkage == "auto"  # the parameter is left as given
        assert default.entry_weight_shrinkage_ == default.decoder_.entry_weight_shrinkage
        assert default.decoder_.entry_weight_shrinkage == expected
        np.testing.assert_array_equal(default.entry_weights_, explicit.entry_weights_)
        np.testing.assert_array_equal(default.predict_proba(X), explicit.predict_proba(X))
    # the docstring states the constants
    doc = " ".join(ConvexAggregationClassifier.__doc__.split())
    assert f"{DEFAULT_ENTRY_WEIGHT_PRIOR:g} / n" in doc and f"[{low:g}, {high:g}]" in doc


@pytest.mark.parametrize("loader", ["iris", "two classes"])
def test_the_default_fit_is_the_explicit_entry_weight_model(loader):
    """The default's weights against scipy's L-BFGS-B on the explicit model (u, w and the
    class intercepts as variables, the tensor discrepancy), fitted on the same
    out-of-fold outputs: the
    entry weights differ from one weight per classifier. Iris: the one-vs-one and the
    one-vs-rest columns, the latter's weights penalised by 0.1 more. Two classes: one
    column (the parts' one problem, not penalised), two entries, so the two classes'
    sides get weights of their own. The zero entries are left out (their model is checked
    against its own reference in test_zero_entries.py)."""
    from sklearn.datasets import load_breast_cancer, load_iris

    X, y = _scaled(load_iris if loader == "iris" else load_breast_cancer)
    solver = ProjectedNewton(tol=1e-10)
    clf = ConvexAggregationClassifier(cv=3, random_state=0, solver=solver, zero_entry_penalty=None)
    clf.fit(X, y)
    code = clf.code_matrix_
    Q, y_idx, _ = clf.training_outputs(X, y)
    column_l2 = [0.0] * 3 + [0.1] * 3 if loader == "iris" else 0.0
    shrinkage = clf.entry_weight_shrinkage_  # "auto": 0.01 on iris, 2 / 569 on breast cancer
    assert shrinkage == (0.01 if loader == "iris" else 2 / 569)
    U, w, b, value = _reference_fit(Q, y_idx, code, clf.alpha, shrinkage, True, column_l2)
    assert clf.alpha == 1e-3  # the default
    assert code.shape == ((3, 6) if loader == "iris" else (2, 1))  # ovo+ovr
    assert clf.decoder_.converged_
    assert clf.decoder_.objective_ == pytest.approx(value, rel=1e-9)
    # a small alpha leaves the weights' common scale weakly determined (strong convexity
    # about alpha): the probabilities are what the objective pins down
    rho = _tensor_rho(Q, code, U, b)  # the default's class intercepts too
    np.testing.assert_allclose(
        clf.decoder_.predict_proba(Q), np.exp(-rho - logsumexp(-rho, 1)[:, None]), atol=1e-4
    )
    # the entries differ from their column's weight by far more than the solver's accuracy
    # (|projected gradient| <= 1e-10 over a curvature of at least alpha: 1e-7), and the
    # probabilities from the paper's model's on the same outputs
    assert np.abs(clf.entry_weights_ - (code != 0) * clf.weights_).max() > 1e-2
    paper = ConvexDecoder(solver=solver).fit(Q, y_idx, code)
    assert np.abs(paper.predict_proba(Q) - clf.decoder_.predict_proba(Q)).max() > 1e-3
    if loader == "two classes":
        assert code.shape == (2, 1) and clf.decision_function(X).shape == (y.size,)
        assert clf.entry_weights_[0, 0] != clf.entry_weights_[1, 0]


@pytest.mark.parametrize("penalty, l1_ratio", [("l1", None), ("elasticnet", 0.3)])
def test_the_default_has_entry_weights_only_with_the_l2_penalty(penalty, l1_ratio):
    from sklearn.datasets import load_iris

    X, y = _scaled(load_iris)
    settings = {"penalty": penalty, "l1_ratio": l1_ratio, "cv": "in_sample"}
    clf = ConvexAggregationClassifier(**settings).fit(X, y)
    assert clf.decoder_.entry_weight_shrinkage is None  # one weight per classifier
    paper = ConvexAggregationClassifier(**settings, entry_weight_shrinkage=None).fit(X, y)
    np.testing.assert_array_equal(clf.weights_, paper.weights_)
    np.testing.assert_array_equal(clf.entry_weights_, (clf.code_matrix_ != 0) * clf.weights_)
    # given explicitly, entry weights with another penalty are refused, naming both
    with pytest.raises(
        ValueError, match=f"entry_weight_shrinkage=0.01 needs penalty='l2'.*{penalty}"
    ):
        ConvexAggregationClassifier(**settings, entry_weight_shrinkage=0.01).fit(X, y)
    with pytest.raises(ValueError, match="entry_weight_shrinkage"):
        ConvexAggregationClassifier(entry_weight_shrinkage="none").fit(X, y)


def test_entry_weight_path_is_the_separate_fits():
    """regularization_path with entry weights: at each alpha, the fit of a decoder at that
    alpha (solved from scratch); the display of a default classifier draws it."""
    from convexagg.path import regularization_path

    code = CODES["ovo"]
    Q, y = _data(code, n=80)
    solver = ProjectedNewton(tol=1e-10)
    dec = ConvexDecoder(entry_weight_shrinkage=0.3, fit_intercept=True, solver=solver)
    path = regularization_path(Q, y, code, [1e-1, 1e-2], decoder=dec)
    for i, alpha in enumerate(path.alphas):
        alone = ConvexDecoder(
            alpha=alpha, entry_weight_shrinkage=0.3, fit_intercept=True, solver=solver
        ).fit(Q, y, code)
        assert path.objective[i] == pytest.approx(alone.objective_, rel=1e-10)
        np.testing.assert_allclose(path.entry_weights[i], alone.entry_weights_, atol=1e-6)
        np.testing.assert_allclose(path.weights[i], alone.weights_, atol=1e-6)
        np.testing.assert_allclose(path.intercepts[i], alone.intercept_, atol=1e-6)
    shared = regularization_path(Q, y, code, [1e-2], decoder=ConvexDecoder(solver=solver))
    np.testing.assert_array_equal(shared.entry_weights[0], (code != 0) * shared.weights[0])
