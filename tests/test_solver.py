"""The interior point method against an independent solver and known solutions."""

import warnings

import numpy as np
import pytest
from scipy.special import logit, softmax
from sklearn.datasets import load_digits
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression
from sklearn.preprocessing import StandardScaler

from convexagg import ConvexAggregationClassifier, ConvexDecoder
from convexagg.codes import one_vs_rest
from convexagg.datasets import make_broken_classifier_outputs
from convexagg.losses import binary_losses
from convexagg.solvers import (
    BlockedObjective,
    ConvexObjective,
    lbfgsb,
    solve,
    stack_losses,
)

# every solver setting the library offers: (solver, newton)
SETTINGS = [
    ("paper", "cg"),
    ("paper", "cholesky"),
    ("mehrotra", "cg"),
    ("mehrotra", "cholesky"),
]
OBJECTIVES = ["dense", "blocked", "blocked32"]


def _objective(kind, Q, y, C, alpha):
    if kind == "dense":
        return ConvexObjective(stack_losses(*binary_losses(Q)), C, y, alpha)
    dtype = np.float32 if kind == "blocked32" else np.float64
    return BlockedObjective.from_outputs(Q, C, y, alpha, dtype=dtype)


@pytest.fixture(scope="module")
def digits_outputs():
    X, y = load_digits(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    out = {}
    for code in ("ovr", "ovo", "ecoc"):
        clf = ConvexAggregationClassifier(
            LogisticRegression(max_iter=200), code=code, random_state=0
        ).fit(X, y)
        out[code] = (clf.predict_binary_proba(X), y, clf.code_matrix_)
    return out


@pytest.fixture(scope="module")
def lbfgsb_optima(digits_outputs):
    """The oracle: scipy's L-BFGS-B to 1e-10 on the dense objective, per code."""
    out = {}
    for code, (Q, y, C) in digits_outputs.items():
        obj = ConvexObjective(stack_losses(*binary_losses(Q)), C, y, 1e-4)
        out[code] = (obj, lbfgsb(obj, tol=1e-10).fun)
    return out


@pytest.mark.parametrize("kind", OBJECTIVES)
@pytest.mark.parametrize("solver, newton", SETTINGS)
@pytest.mark.parametrize("code", ["ovr", "ovo", "ecoc"])
def test_reaches_lbfgsb_optimum_and_kkt(digits_outputs, lbfgsb_optima, code, solver, newton, kind):
    Q, y, C = digits_outputs[code]
    obj, f_ref = lbfgsb_optima[code]
    # float32 products leave the gradient ~1e-9 noisy: 1e-8 is below what it resolves
    tol = 1e-7 if kind == "blocked32" else 1e-8
    result = solve(
        _objective(kind, Q, y, C, 1e-4), solver=solver, newton=newton, tol=tol, max_iter=200
    )
    assert result.converged
    # f - f* <= gap + ...: at tol 1e-7 an absolute 2 tol on top (ecoc: f* = 0.0136)
    slack = 2 * tol if kind == "blocked32" else 0.0
    assert abs(obj.value(result.w) - f_ref) <= 1e-6 * abs(f_ref) + slack
    w = result.w
    grad = obj.evaluate(w).grad
    tol = 1e-6
    assert (w >= 0).all()
    assert (grad >= -tol).all()
    assert np.abs(w * grad).max() <= tol


@pytest.mark.parametrize("kind", OBJECTIVES)
@pytest.mark.parametrize("solver, newton", SETTINGS)
@pytest.mark.parametrize("code", ["ovr", "ovo", "ecoc"])
def test_paper_tolerance_within_duality_bound(
    digits_outputs, lbfgsb_optima, code, solver, newton, kind
):
    """At tol=1e-4, f(w) - f* <= gap + |grad f - z|^2 / (2 alpha) (strong convexity)."""
    Q, y, C = digits_outputs[code]
    alpha = 1e-4
    obj, f_star = lbfgsb_optima[code]
    result = solve(_objective(kind, Q, y, C, alpha), solver=solver, newton=newton, tol=1e-4)
    point = obj.evaluate(result.w)
    bound = result.w @ result.z + np.sum((point.grad - result.z) ** 2) / (2 * alpha)
    assert 0 <= point.value - f_star + 1e-12 <= bound
    # the residual norm recorded is the one the stopping rule used
    assert result.history["residual"][-1] <= 1e-4 and result.history["gap"][-1] <= 1e-4


def test_history_is_recorded_and_objective_decreases_overall(digits_outputs):
    Q, y, C = digits_outputs["ovo"]
    dec = ConvexDecoder().fit(Q, y, C)
    h = dec.history_
    n = dec.n_iter_ + 1
    for key in ("objective", "gap", "residual", "step", "mu", "cg_iter"):
        assert h[key].shape == (n,)
    assert h["weights"].shape == (n, C.shape[1])
    assert h["objective"][-1] < h["objective"][0]
    assert (h["step"][1:] > 0).all() and (h["step"][1:] <= 1).all()


def test_ovr_equal_weights_is_temperature_scaling():
    """OVR + cross-entropy + w = t: P = softmax(t * logit(Q))."""
    rng = np.random.default_rng(0)
    K, t = 5, 1.7
    Q = rng.uniform(0.01, 0.99, size=(40, K))
    dec = ConvexDecoder().fit(Q, rng.integers(0, K, 40), one_vs_rest(K))
    dec.weights_ = np.full(K, t)
    np.testing.assert_allclose(dec.predict_proba(Q), softmax(t * logit(Q), axis=1), rtol=1e-10)


def test_convergence_warning_when_max_iter_is_reached(digits_outputs):
    Q, y, C = digits_outputs["ovr"]
    with pytest.warns(ConvergenceWarning, match="stopped after 2 iterations"):
        dec = ConvexDecoder(max_iter=2).fit(Q, y, C)
    assert not dec.converged_ and dec.n_iter_ == 2


@pytest.mark.parametrize("seed", range(5))
def test_paper_synthetic_three_class_study(seed):
    """Section 5.2: a broken third classifier is switched off.

    Paper: equal-weight loss-based decoding 0.78 -> convex aggregation 0.94, and
    w* = [8.31, 8.28, 0.016]. See make_broken_classifier_outputs for how the
    paper's generator was read.
    """
    Q, y, code = make_broken_classifier_outputs(random_state=seed)
    equal = ConvexDecoder(loss="exponential").fit(Q, y, code)
    equal.weights_ = np.full(3, 1 / 3)  # the paper's loss-based decoding (exponential loss)
    acc_equal = np.mean(equal.predict(Q) == y)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        dec = ConvexDecoder(alpha=1e-4).fit(Q, y, code)
    acc_convex = np.mean(dec.predict(Q) == y)
    assert acc_convex >= acc_equal + 0.08
    w = dec.weights_
    assert w[2] < 0.05 * min(w[0], w[1])


@pytest.mark.parametrize("solver, newton", SETTINGS)
def test_useless_binaries_converge_to_zero_weights(solver, newton):
    """When no classifier helps, the optimum is w = 0 (f = log K), an all-active
    corner. Out-of-fold outputs from folds that each miss a class give exactly
    that; this case stalled an earlier PCG tolerance tied to |g| instead of |r_mu|."""
    from sklearn.datasets import make_classification
    from sklearn.model_selection import check_cv

    from convexagg.binary import out_of_fold_outputs
    from convexagg.codes import one_vs_one

    X, y = make_classification(60, 4, n_informative=3, n_redundant=0, n_classes=3, random_state=0)
    order = np.argsort(y, kind="stable")
    X, y = X[order], y[order]
    cv = check_cv([(np.arange(30), np.arange(30, 60)), (np.arange(30, 60), np.arange(30))])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # one-sided folds, expected here
        Q = out_of_fold_outputs(LogisticRegression(), X, y, one_vs_one(3), cv, "proba")
    obj = ConvexObjective(stack_losses(*binary_losses(Q)), one_vs_one(3), y, 1e-4)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        result = solve(obj, solver=solver, newton=newton)
    ref = lbfgsb(obj)
    assert ref.fun == pytest.approx(np.log(3), rel=1e-6) and np.allclose(ref.x, 0)
    assert result.converged
    assert obj.value(result.w) - ref.fun <= 1e-4
    assert np.abs(result.w).max() < 1e-3


@pytest.mark.parametrize("reuse", [0, 1, 3])
def test_predictor_corrector_hessian_reuse_keeps_the_optimum(digits_outputs, lbfgsb_optima, reuse):
    from convexagg.solvers import predictor_corrector

    Q, y, C = digits_outputs["ovo"]
    obj, f_ref = lbfgsb_optima["ovo"]
    calls = []

    class Counting:
        n_weights = obj.n_weights

        def evaluate(self, w):
            return obj.evaluate(w)

        def hessian(self, point):
            calls.append(1)
            return obj.hessian(point)

    result = predictor_corrector(Counting(), tol=1e-8, reuse_hessian=reuse)
    assert result.converged
    assert abs(obj.value(result.w) - f_ref) <= 1e-6 * abs(f_ref)
    if reuse == 0:
        assert len(calls) == result.n_iter
    else:
        assert len(calls) < result.n_iter


def test_predictor_corrector_starts_with_a_given_hessian(digits_outputs, lbfgsb_optima):
    from convexagg.solvers import predictor_corrector

    obj, f_ref = lbfgsb_optima["ovo"]
    M = obj.n_weights
    calls = []

    class Counting:
        n_weights = M

        def evaluate(self, w):
            return obj.evaluate(w)

        def hessian(self, point):
            calls.append(1)
            return obj.hessian(point)

    w0 = np.full(M, 1.0 / M)
    plain = predictor_corrector(Counting(), tol=1e-8)
    n_plain = len(calls)
    calls.clear()
    given = predictor_corrector(Counting(), w0, tol=1e-8, hessian0=obj.hessian(obj.evaluate(w0)))
    assert given.converged and len(calls) < n_plain
    assert abs(obj.value(given.w) - f_ref) <= 1e-6 * abs(f_ref)
    np.testing.assert_allclose(given.w, plain.w, atol=1e-5)
