"""``column_penalty``: an extra, absolute quadratic penalty on chosen classifiers' weights.

References written independently of :class:`~convexagg.aggregation.Penalty`'s
``column_l2``: the dense objective without it plus the per-column term, solved by
scipy's L-BFGS-B on ``w >= 0``; the entry-weight penalty minimised over the
shared weights by a linear solve of the explicit quadratic; and issue 21's
prototype (benchmarks/lib/methods.py's ``_family_penalty``: a penalty term that
scales the quadratic term of the one-vs-rest columns), reimplemented here
because ``benchmarks/`` is not importable from the tests.
"""

from dataclasses import dataclass

import numpy as np
import pytest
from scipy.optimize import approx_fprime, minimize
from sklearn.base import clone
from sklearn.datasets import load_iris, load_wine
from sklearn.preprocessing import StandardScaler

from binary_outputs import noisy_code_outputs
from convexagg import (
    ConvexAggregationClassifier,
    ConvexAggregationClassifierCV,
    ConvexDecoder,
    regularization_path,
)
from convexagg.aggregation import (
    L1,
    BlockedObjective,
    DenseObjective,
    InterceptRidge,
    Penalty,
    PenaltyTerm,
    stack_losses,
)
from convexagg.codes import make_code, make_code_parts, one_vs_one
from convexagg.estimator import DEFAULT_OVR_COLUMN_PENALTY
from convexagg.losses import binary_losses
from convexagg.solvers import InteriorPoint, ProjectedNewton


def _data(code, n=120, seed=0):
    return noisy_code_outputs(code, n, seed)


CODE = make_code("ovo+ovr", 4)  # 6 one-vs-one columns, then 4 one-vs-rest
EXTRA = np.array([0.0, 0.3, 0.0, 0.05, 0.0, 0.0, 0.1, 0.1, 2.0, 0.1])


# -- the penalty object ------------------------------------------------------------------


@pytest.mark.parametrize("fit_intercept", [False, True])
def test_penalty_is_the_explicit_quadratic(fit_intercept):
    rng = np.random.default_rng(1)
    M, n_b = EXTRA.size, 4 if fit_intercept else 0
    p = Penalty.from_alpha(0.02, column_l2=EXTRA)
    x = rng.random(M + n_b)
    w, b = x[:M], x[M:]
    expected = 0.01 * w @ w + 0.5 * w @ (EXTRA * w) + 0.5 * p.intercept_l2 * b @ b
    assert p.value(x, M) == pytest.approx(expected, rel=1e-14)
    H = np.diag(np.concatenate([0.02 + EXTRA, np.full(n_b, p.intercept_l2)]))
    np.testing.assert_allclose(p.grad(x, M), H @ x, rtol=1e-14)
    np.testing.assert_allclose(approx_fprime(x, p.value, 1e-7, M), H @ x, atol=1e-6)
    v = rng.normal(size=x.size)
    np.testing.assert_allclose(p.hessp(v, M), H @ v, rtol=1e-14)
    np.testing.assert_allclose(p.hess_diag(M, x.size), np.diag(H), rtol=1e-14)
    np.testing.assert_allclose(p.add_to_hessian(np.zeros_like(H), M), H, rtol=1e-14)
    # restricted to some weights: the same term on those
    keep = np.array([1, 3, 8])
    r = p.restrict(keep)
    np.testing.assert_allclose(r.hess_diag(3, 3), 0.02 + EXTRA[keep], rtol=1e-14)
    with pytest.raises(ValueError, match="column_l2 has 10 entries for 3 weights"):
        p.value(np.ones(3), 3)


def test_entry_weight_penalty_is_the_minimum_over_shared_weights():
    """With entry weights the column term sits on the shared weight ``w_l``: the
    penalty in ``u`` is the explicit quadratic in ``(u, w)`` minimised over ``w``."""
    code = one_vs_one(4)
    columns = np.nonzero(code.T)[0]  # the column of each nonzero entry, column by column
    l2, shrink, extra = 0.05, 0.7, np.array([0.0, 0.4, 1.5, 0.0, 3.0, 0.2])
    p = Penalty.from_alpha(l2, shrink=shrink, columns=columns, column_l2=extra)
    rng = np.random.default_rng(2)
    u, n_u, M = rng.random(columns.size), columns.size, code.shape[1]
    # explicit quadratic 1/2 [u; w]' A [u; w]: A_uu = shrink I, A_uw = -shrink E, A_ww
    E = np.zeros((n_u, M))
    E[np.arange(n_u), columns] = 1.0
    A_ww = np.diag(l2 + extra) + shrink * E.T @ E
    w = np.linalg.solve(A_ww, shrink * E.T @ u)
    minimum = 0.5 * l2 * w @ w + 0.5 * w @ (extra * w) + 0.5 * shrink * np.sum((u - E @ w) ** 2)
    assert p.value(u, n_u) == pytest.approx(minimum, rel=1e-12)
    np.testing.assert_allclose(p.shared_weights(u), w, rtol=1e-12)
    schur = shrink * np.eye(n_u) - shrink**2 * E @ np.linalg.solve(A_ww, E.T)
    np.testing.assert_allclose(p.add_to_hessian(np.zeros((n_u, n_u)), n_u), schur, atol=1e-12)
    np.testing.assert_allclose(p.hess_diag(n_u, n_u), np.diag(schur), atol=1e-12)
    v = rng.normal(size=n_u)
    np.testing.assert_allclose(p.hessp(v, n_u), schur @ v, atol=1e-12)


def test_penalty_refuses_bad_column_l2():
    for bad in ([-1.0, 0.0], [np.nan], [[0.1]]):
        with pytest.raises(ValueError, match="column_l2"):
            Penalty(l2=1.0, column_l2=bad)


# -- the decoder's optimum against scipy ---------------------------------------------------


def _scipy_optimum(Q, y, code, alpha, extra, fit_intercept):
    """The dense objective without the column term, plus it, by L-BFGS-B on ``w >= 0``."""
    L = stack_losses(*binary_losses(Q))
    objective = DenseObjective(L, code, y, Penalty.from_alpha(alpha), fit_intercept=fit_intercept)
    M = code.shape[1]

    def f(x):
        point = objective.evaluate(x)
        g = point.grad.copy()
        g[:M] += extra * x[:M]
        return point.value + 0.5 * x[:M] @ (extra * x[:M]), g

    n = objective.n_variables
    bounds = [(0, None)] * M + [(None, None)] * (n - M)
    x0 = np.concatenate([np.ones(M), np.zeros(n - M)])
    res = minimize(
        f, x0, jac=True, method="L-BFGS-B", bounds=bounds,
        options={"ftol": 1e-15, "gtol": 1e-11, "maxiter": 20000, "maxcor": 30},
    )  # fmt: skip
    assert res.success, res.message
    return res.x[:M], res.x[M:], res.fun


@pytest.mark.parametrize(
    "solver, fit_intercept",
    [
        (ProjectedNewton(tol=1e-10), False),
        (ProjectedNewton(tol=1e-10), True),
        (InteriorPoint(tol=1e-10), False),
        (InteriorPoint(tol=1e-10), True),
    ],
)
def test_fit_equals_scipy_on_the_penalised_objective(solver, fit_intercept):
    Q, y = _data(CODE)
    alpha = 1e-3
    w, b, value = _scipy_optimum(Q, y, CODE, alpha, EXTRA, fit_intercept)
    dec = ConvexDecoder(
        alpha=alpha, column_penalty=EXTRA, fit_intercept=fit_intercept, solver=solver
    ).fit(Q, y, CODE)
    assert dec.converged_
    assert dec.objective_ == pytest.approx(value, rel=1e-9)
    np.testing.assert_allclose(dec.weights_, w, atol=1e-5)
    if fit_intercept:
        np.testing.assert_allclose(dec.intercept_, b, atol=1e-5)
    # and it is not the unpenalised optimum
    plain = ConvexDecoder(alpha=alpha, fit_intercept=fit_intercept, solver=solver).fit(Q, y, CODE)
    assert np.abs(plain.weights_ - dec.weights_).max() > 1e-2


def test_blocked_objective_equals_dense_with_column_penalty():
    Q, y = _data(CODE)
    L_pos, L_neg = binary_losses(Q)
    L = stack_losses(L_pos, L_neg)
    penalty = Penalty.from_alpha(1e-3, column_l2=EXTRA)
    dense = DenseObjective(L, CODE, y, penalty, fit_intercept=True)
    blocked = BlockedObjective(L_pos, L_neg, CODE, y, penalty, chunk=17, fit_intercept=True)
    x = np.random.default_rng(3).random(dense.n_variables)
    a, c = dense.evaluate(x), blocked.evaluate(x)
    assert c.value == pytest.approx(a.value, rel=1e-12)
    np.testing.assert_allclose(c.grad, a.grad, rtol=1e-10, atol=1e-13)
    np.testing.assert_allclose(blocked.hessian(c), dense.hessian(a), rtol=1e-10, atol=1e-13)
    keep = np.array([0, 4, 8, 9])
    restricted = blocked.restrict(keep)
    xr = np.concatenate([x[keep], x[CODE.shape[1] :]])
    sub = DenseObjective(
        L[:, np.concatenate([keep, CODE.shape[1] + keep])],
        CODE[:, keep],
        y,
        Penalty.from_alpha(1e-3, column_l2=EXTRA[keep]),
        fit_intercept=True,
    )
    assert restricted.evaluate(xr).value == pytest.approx(sub.evaluate(xr).value, rel=1e-12)


def test_zeros_are_no_column_penalty_to_the_bit():
    Q, y = _data(CODE)
    for settings in ({}, {"fit_intercept": True}, {"entry_weight_shrinkage": 0.5}):
        plain = ConvexDecoder(**settings).fit(Q, y, CODE)
        zeros = ConvexDecoder(column_penalty=np.zeros(CODE.shape[1]), **settings).fit(Q, y, CODE)
        assert np.array_equal(zeros.entry_weights_, plain.entry_weights_), settings
        assert np.array_equal(zeros.predict_proba(Q), plain.predict_proba(Q)), settings
        assert zeros.objective_ == plain.objective_


def test_a_huge_strength_drives_those_weights_to_zero():
    Q, y = _data(CODE)
    ovr = np.arange(6, 10)
    extra = np.zeros(CODE.shape[1])
    extra[ovr] = 1e8
    plain = ConvexDecoder().fit(Q, y, CODE)
    assert plain.weights_[ovr].max() > 0.1
    for settings in ({}, {"entry_weight_shrinkage": 0.5}):
        dec = ConvexDecoder(column_penalty=extra, **settings).fit(Q, y, CODE)
        # (entry weights: the shared w_l; its entries are then ridge-penalised by shrink)
        assert dec.weights_[ovr].max() < 1e-6, settings
        assert dec.weights_[:6].max() > 0.1


def test_the_alpha_path_keeps_the_column_penalty():
    """Absolute: at every alpha of a path the same column term (each point equals a
    decoder fitted at that alpha)."""
    Q, y = _data(CODE)
    decoder = ConvexDecoder(column_penalty=EXTRA, solver=ProjectedNewton(tol=1e-10))
    path = regularization_path(Q, y, CODE, alphas=[1e-2, 1e-4], decoder=decoder)
    for j, alpha in enumerate(path.alphas):
        dec = clone(decoder).set_params(alpha=alpha).fit(Q, y, CODE)
        assert path.objective[j] == pytest.approx(dec.objective_, rel=1e-9)
        np.testing.assert_allclose(path.weights[j], dec.weights_, rtol=1e-5, atol=1e-6)


def test_dask_fit_equals_the_in_memory_fit():
    da = pytest.importorskip("dask.array")
    dask = pytest.importorskip("dask")
    Q, y = _data(CODE, n=300)
    for settings in ({"fit_intercept": True}, {"entry_weight_shrinkage": 0.5}):
        decoder = ConvexDecoder(column_penalty=EXTRA, solver=InteriorPoint(tol=1e-10), **settings)
        ref = clone(decoder).fit(Q, y, CODE)
        with dask.config.set(scheduler="sync"):
            dec = clone(decoder).fit(
                da.from_array(Q, chunks=(100, -1)), da.from_array(y, 100), CODE
            )
        assert dec.objective_ == pytest.approx(ref.objective_, rel=1e-10), settings
        np.testing.assert_allclose(dec.entry_weights_, ref.entry_weights_, atol=1e-7)


# -- the classifiers ----------------------------------------------------------------------


def test_make_code_parts():
    code, parts = make_code_parts("ovo+ovr", 4)
    assert np.array_equal(code, make_code("ovo+ovr", 4))
    assert {k: v.tolist() for k, v in parts.items()} == {"ovo": list(range(6)), "ovr": [6, 7, 8, 9]}
    # a part whose columns repeat an earlier part's: those columns
    code, parts = make_code_parts("complete+ovr", 4)
    assert code.shape[1] == 7
    for l in parts["ovr"]:
        assert np.sum(code[:, l] != 0) == 4 and abs(np.sum(code[:, l])) == 2  # one class apart
    # random parts: the same code as make_code with the same seed
    code, parts = make_code_parts("sparse_random+ovr", 9, random_state=0)
    assert np.array_equal(code, make_code("sparse_random+ovr", 9, random_state=0))
    assert np.array_equal(code[:, parts["ovr"]] != 0, np.ones((9, 9), dtype=bool))
    assert make_code_parts(np.array([[1, -1], [-1, 1]]), 2)[1] == {}


def _wine():
    X, y = load_wine(return_X_y=True)
    return StandardScaler().fit_transform(X), y


def test_dict_form_equals_the_array():
    X, y = _wine()
    # a seed: the zero entries' strength is chosen on shuffled folds
    by_part = ConvexAggregationClassifier(
        code="ovo+ovr", column_penalty={"ovr": 0.1}, cv="in_sample", random_state=0
    ).fit(X, y)
    array = ConvexAggregationClassifier(
        code="ovo+ovr", column_penalty=[0, 0, 0, 0.1, 0.1, 0.1], cv="in_sample", random_state=0
    ).fit(X, y)
    assert np.array_equal(by_part.decoder_.column_penalty, [0, 0, 0, 0.1, 0.1, 0.1])
    assert np.array_equal(by_part.predict_proba(X), array.predict_proba(X))
    # fit_decoder translates again (here after a change of strength)
    by_part.set_params(column_penalty={"ovr": 0.0}).fit_decoder(X, y)
    plain = ConvexAggregationClassifier(
        code="ovo+ovr", column_penalty=None, cv="in_sample", random_state=0
    )
    assert np.array_equal(by_part.predict_proba(X), plain.fit(X, y).predict_proba(X))


@pytest.mark.parametrize(
    "code, n_classes, expected",
    [
        ("ovo+ovr", 3, [0, 0, 0, 0.1, 0.1, 0.1]),  # the default: the ovr columns
        ("ovr+ovo", 3, [0.1, 0.1, 0.1, 0, 0, 0]),
        ("ovo+ovr", 2, None),  # one column, both parts' problem: not penalised
        ("ovo", 3, None),
        ("ovr", 3, None),  # a single code: nothing to lean away from
        ("ecoc+ovo", 3, None),
    ],
)
def test_auto_penalises_the_one_vs_rest_columns_of_a_combined_code(code, n_classes, expected):
    X, y = _wine()
    keep = y < n_classes
    clf = ConvexAggregationClassifier(code=code, cv="in_sample", random_state=0)
    clf.fit(X[keep], y[keep])
    assert clf.column_penalty == "auto"  # the parameter is left as given
    got = clf.decoder_.column_penalty
    if expected is None:
        assert got is None
        return
    np.testing.assert_array_equal(got, expected)
    explicit = ConvexAggregationClassifier(
        code=code, column_penalty={"ovr": 0.1}, cv="in_sample", random_state=0
    ).fit(X[keep], y[keep])
    np.testing.assert_array_equal(clf.predict_proba(X), explicit.predict_proba(X))
    assert DEFAULT_OVR_COLUMN_PENALTY == 0.1


def test_cv_estimator_keeps_the_column_penalty():
    X, y = load_iris(return_X_y=True)
    settings = {"code": "ovo+ovr", "alphas": [1e-4, 1e-2], "alpha_cv": 3, "cv": "in_sample"}
    settings["random_state"] = 0  # the same alpha_cv folds (an int shuffles them)
    by_part = ConvexAggregationClassifierCV(column_penalty={"ovr": 1e8}, **settings).fit(X, y)
    assert by_part.weights_[3:].max() < 1e-6
    array = ConvexAggregationClassifierCV(column_penalty=[0, 0, 0, 1e8, 1e8, 1e8], **settings)
    np.testing.assert_array_equal(array.fit(X, y).cv_scores_, by_part.cv_scores_)


@dataclass(frozen=True)
class _PrototypeRidge(PenaltyTerm):
    """benchmarks/lib/methods.py's ``_family_penalty(penalty, 1.0, extra)``: the
    quadratic term of the last ``K`` of the ``K(K-1)/2 + K`` columns of ``"ovo+ovr"``
    scaled by ``1 + extra / l2``, a term in place of the ridge."""

    l2: float = 0.0
    extra: float = 0.0

    def _scale(self, n_weights):
        K = int(round((np.sqrt(1 + 8 * n_weights) - 1) / 2))
        assert K * (K + 1) // 2 == n_weights
        s = np.ones(n_weights)
        s[n_weights - K :] = 1.0 + self.extra / max(self.l2, 1e-300)
        return s

    def value(self, z):
        return 0.5 * self.l2 * float(z @ (self._scale(z.size) * z))

    def curvature(self, n):
        return self.l2 * self._scale(n)


class _PrototypeDecoder(ConvexDecoder):
    def penalty_for(self, alpha=None, code=None):
        p = super().penalty_for(alpha, code)
        ridge = _PrototypeRidge(l2=p.l2, extra=0.1)
        return Penalty.from_terms(ridge, L1(p.l1), InterceptRidge(p.intercept_l2))


class _Prototype(ConvexAggregationClassifier):
    def _make_decoder(self, **overrides):
        return _PrototypeDecoder(**super()._make_decoder(**overrides).get_params(deep=False))


def test_the_prototype_of_issue_21():
    """``code="ovo+ovr", column_penalty={"ovr": 0.1}`` is the prototype that QUALITY.md
    measured (the default's folds and ensemble), to the solver's tolerance. One weight per
    classifier, as measured (the prototype's penalty has no entry weights)."""
    X, y = _wine()
    library = ConvexAggregationClassifier(
        code="ovo+ovr", column_penalty={"ovr": 0.1}, entry_weight_shrinkage=None, random_state=0
    ).fit(X, y)
    prototype = _Prototype(code="ovo+ovr", entry_weight_shrinkage=None, random_state=0).fit(X, y)
    np.testing.assert_allclose(library.weights_, prototype.weights_, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(
        library.predict_proba(X), prototype.predict_proba(X), rtol=1e-9, atol=1e-12
    )


# -- bad input ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "column_penalty, match",
    [
        ([0.1, 0.1], "column_penalty has 2 entries but the code has 10"),
        (np.r_[np.zeros(9), -1.0], "column_penalty must be a 1-D array of finite values >= 0"),
        (np.r_[np.zeros(9), np.nan], "column_penalty must be a 1-D array of finite values >= 0"),
        (np.zeros((2, 5)), "column_penalty must be a 1-D array"),
    ],
)
def test_decoder_refuses_bad_column_penalty(column_penalty, match):
    Q, y = _data(CODE, n=40)
    with pytest.raises(ValueError, match=match):
        ConvexDecoder(column_penalty=column_penalty).fit(Q, y, CODE)


@pytest.mark.parametrize(
    "code, column_penalty, match",
    [
        ("ovo+ovr", {"ecoc": 0.1}, r"column_penalty names \['ecoc'\], not parts of "
         r"code='ovo\+ovr'; its parts are \['ovo', 'ovr'\]"),
        (make_code("ovo", 3), {"ovo": 0.1}, "column_penalty as a dict .* with an array code"),
        ("ovo+ovr", {"ovr": -0.1}, r"column_penalty\['ovr'\] must be a finite number >= 0"),
        ("ovo+ovr", {"ovr": np.nan}, r"column_penalty\['ovr'\] must be a finite number >= 0"),
        ("ovo+ovr", [0.1] * 5, "column_penalty has 5 entries but the code has 6"),
        ("complete+ovr", {"complete": 0.0, "ovr": 1.0}, "share columns"),
        ("ovo+ovr", "ovr", "column_penalty"),
    ],
)  # fmt: skip
def test_classifier_refuses_bad_column_penalty(code, column_penalty, match):
    X, y = load_iris(return_X_y=True)
    clf = ConvexAggregationClassifier(code=code, column_penalty=column_penalty, cv="in_sample")
    with pytest.raises(ValueError, match=match):
        clf.fit(X, y)
