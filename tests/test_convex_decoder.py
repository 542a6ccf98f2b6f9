"""ConvexDecoder: one solver parameter, the 0.1 keywords, settings that cannot apply, the kernel."""

import gc
import tracemalloc

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import load_iris
from sklearn.model_selection import GridSearchCV
from sklearn.utils._param_validation import InvalidParameterError

from convexagg import (
    ConvexAggregationClassifier,
    ConvexAggregationClassifierCV,
    ConvexDecoder,
    regularization_path,
)
from convexagg.aggregation import discrepancies, side_weights, stack_losses
from convexagg.codes import one_vs_one, one_vs_rest
from convexagg.losses import binary_losses
from convexagg.solvers import LBFGSB, InteriorPoint, ProjectedNewton

FAST_IP = InteriorPoint(method="predictor_corrector", newton="direct", init="subsample")


def synthetic_outputs(n, K, seed=0):
    """One-vs-one outputs that carry class information, with label noise."""
    rng = np.random.default_rng(seed)
    code = one_vs_one(K)
    y = rng.integers(0, K, size=n)
    side = code[y]  # (n, M): +1 / -1 / 0 for the sample's class
    signal = rng.uniform(0.5, 3.0, size=code.shape[1])  # classifier quality
    margin = side * signal + rng.normal(size=side.shape)
    flip = rng.random(n) < 0.1
    margin[flip] = -margin[flip]
    return 1 / (1 + np.exp(-margin)), y, code


@pytest.fixture(scope="module")
def outputs():
    return synthetic_outputs(6000, 6)


@pytest.fixture(scope="module")
def reference(outputs):
    Q, y, code = outputs
    return ConvexDecoder(solver=LBFGSB(tol=1e-12)).fit(Q, y, code)


def test_the_default_is_the_projected_newton_method(outputs, reference):
    Q, y, code = outputs
    dec = ConvexDecoder().fit(Q, y, code)
    assert isinstance(dec.solver_, ProjectedNewton) and dec.solver_.dtype == "auto"
    assert dec.solver == "auto"  # the parameter is not changed by fit
    assert dec.converged_
    assert dec.objective_ - reference.objective_ <= 1e-6 * reference.objective_
    assert dec.history_["projected_gradient"][-1] <= 1e-4


@pytest.mark.parametrize(
    "solver",
    [
        "interior_point",
        "projected_newton",
        "lbfgsb",
        FAST_IP,
        InteriorPoint(dtype="float32", tol=1e-6),
        ProjectedNewton(newton="cg", preconditioner="diagonal"),
    ],
    ids=str,
)
def test_every_solver_reaches_the_same_model(outputs, reference, solver):
    Q, y, code = outputs
    dec = ConvexDecoder(solver=solver).fit(Q, y, code)
    assert dec.converged_
    assert abs(dec.objective_ - reference.objective_) <= 1e-4 * reference.objective_
    np.testing.assert_allclose(
        dec.predict_proba(Q[:50]), reference.predict_proba(Q[:50]), atol=1e-3
    )


@pytest.mark.parametrize("keyword", ["tol", "max_iter", "newton", "dtype", "init"])
def test_the_0_1_solver_keywords_are_gone(keyword):
    """The solver's settings live on the ``solver`` object alone: the 0.1 keywords are no
    parameter of the decoder, the estimators or the regularisation path."""
    Q, y, code = synthetic_outputs(100, 3)
    for cls in (ConvexDecoder, ConvexAggregationClassifier, ConvexAggregationClassifierCV):
        assert keyword not in cls().get_params()
        with pytest.raises(TypeError, match=keyword):
            cls(**{keyword: 1})
    with pytest.raises(TypeError, match=keyword):
        regularization_path(Q, y, code, [1e-2], **{keyword: 1})
    assert "subgradient_iter" not in ConvexDecoder().get_params()


def test_the_0_1_solver_names_are_refused():
    Q, y, code = synthetic_outputs(100, 3)
    for name in ("paper", "mehrotra"):
        with pytest.raises(InvalidParameterError, match=f"'solver' parameter.*Got '{name}'"):
            ConvexDecoder(solver=name).fit(Q, y, code)


@pytest.mark.parametrize(
    "params, match",
    [
        ({"formulation": "large_margin", "solver": "projected_newton"}, "cannot be solved by"),
        ({"formulation": "stiffness", "solver": "projected_subgradient"}, "cannot be solved by"),
        ({"formulation": "stiffness", "solver": InteriorPoint(dtype="float32")}, "dtype"),
        ({"formulation": "stiffness", "solver": InteriorPoint(init="subsample")}, "init"),
        ({"formulation": "large_margin", "solver": InteriorPoint()}, "InteriorPoint"),
        ({"tau": 10.0}, "tau=10.0 applies only to formulation='stiffness'"),
        ({"l1_ratio": 0.3}, "l1_ratio=0.3 applies only to penalty='elasticnet'"),
    ],
)
def test_a_setting_that_cannot_apply_raises_naming_both(outputs, params, match):
    Q, y, code = outputs
    with pytest.raises(ValueError, match=match):
        ConvexDecoder(**params).fit(Q[:200], y[:200], code)


def test_bad_solver_values_are_refused():
    Q, y, code = synthetic_outputs(100, 3)
    for bad in (
        {"solver": "newton"},
        {"solver": InteriorPoint(newton="lu")},
        {"solver": InteriorPoint(dtype="float16")},
        {"solver": InteriorPoint(init="zeros")},
    ):
        with pytest.raises(InvalidParameterError):
            ConvexDecoder(**bad).fit(Q, y, code)
    with pytest.raises(InvalidParameterError, match="tol"):
        ConvexDecoder(solver=ProjectedNewton(tol=-1.0)).fit(Q, y, code)


def test_solver_settings_are_grid_searchable_through_the_estimator():
    X, y = load_iris(return_X_y=True)
    search = GridSearchCV(
        # in-sample outputs: the test is about the solver's parameters, not the folds
        ConvexAggregationClassifier(solver=ProjectedNewton(), cv="in_sample", random_state=0),
        {"solver__tol": [1e-3, 1e-8], "alpha": [1e-4, 1e-2]},
        cv=3,
    ).fit(X, y)
    assert search.best_estimator_.decoder_.solver_.tol in (1e-3, 1e-8)
    assert search.best_estimator_.get_params()["solver__tol"] == search.best_params_["solver__tol"]


def test_the_estimator_passes_its_parameters_on_whole():
    X, y = load_iris(return_X_y=True)
    solver = InteriorPoint(method="predictor_corrector", tol=1e-8)
    clf = ConvexAggregationClassifier(
        solver=solver,
        alpha=1e-3,
        penalty="elasticnet",
        l1_ratio=0.2,
        fit_intercept=True,
        cv="in_sample",
    ).fit(X, y)
    dec = clf.decoder_
    assert dec.solver.get_params() == solver.get_params()
    assert (dec.alpha, dec.penalty, dec.l1_ratio, dec.fit_intercept) == (
        1e-3,
        "elasticnet",
        0.2,
        True,
    )
    ovr_penalty = [0, 0, 0, 0.1, 0.1, 0.1]  # the default code, ovo+ovr, on iris
    ref = ConvexDecoder(
        alpha=1e-3,
        penalty="elasticnet",
        l1_ratio=0.2,
        fit_intercept=True,
        solver=solver,
        column_penalty=ovr_penalty,
    ).fit(clf.predict_binary_proba(X), np.searchsorted(clf.classes_, y), clf.code_matrix_)
    np.testing.assert_array_equal(clf.weights_, ref.weights_)
    np.testing.assert_array_equal(clf.intercept_, ref.intercept_)


def test_interior_point_starts_save_iterations(outputs):
    Q, y, code = outputs
    fixed, uniform, subsample = (
        ConvexDecoder(solver=clone(FAST_IP).set_params(init=init))
        for init in ("fixed", "uniform", "subsample")
    )
    n_fixed = fixed.fit(Q, y, code).n_iter_
    assert uniform.fit(Q, y, code).n_iter_ < n_fixed
    assert subsample.fit(Q, y, code).n_iter_ < n_fixed
    assert uniform.history_["objective"][0] < fixed.history_["objective"][0]


@pytest.mark.parametrize(
    "solver", [InteriorPoint(newton="direct", tol=1e-6), ProjectedNewton(tol=1e-7)]
)
def test_warm_start_along_an_alpha_path(outputs, solver):
    Q, y, code = outputs
    dec = ConvexDecoder(alpha=1e-2, solver=solver, warm_start=True).fit(Q, y, code)
    for alpha in (3e-3, 1e-3):
        dec.set_params(alpha=alpha).fit(Q, y, code)
        cold = ConvexDecoder(alpha=alpha, solver=solver).fit(Q, y, code)
        # the interior point's measured policy halves its iterations; projected Newton
        # from the uniform start is already within three iterations here
        if isinstance(solver, InteriorPoint):
            assert dec.n_iter_ < cold.n_iter_
        else:
            assert dec.n_iter_ <= cold.n_iter_
        assert dec.objective_ == pytest.approx(cold.objective_, rel=1e-6)
    # a different code: the previous weights do not fit, the fit starts afresh
    Q3, y3, code3 = synthetic_outputs(500, 4, seed=1)
    dec.fit(Q3, y3, code3)
    assert dec.weights_.shape == (6,)


@pytest.mark.parametrize("solver", ["auto", clone(FAST_IP).set_params(dtype="float32")], ids=str)
def test_fit_memory_is_bounded_by_four_times_Q(solver):
    """Peak memory added by fit <= 4 Q.nbytes, no n x K x M tensor.

    tracemalloc sees numpy's allocations (numpy reports them to it).
    """
    Q, y, code = synthetic_outputs(30000, 10, seed=2)  # Q: 30000 x 45 float64, 10.8 MB
    gc.collect()
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    ConvexDecoder(solver=solver).fit(Q, y, code)
    peak = tracemalloc.get_traced_memory()[1] - base
    tracemalloc.stop()
    n, M = Q.shape
    assert peak <= 4 * Q.nbytes
    assert peak < n * code.shape[0] * M * 8 / 2


@pytest.mark.parametrize("loss", ["cross_entropy", "exponential"])
@pytest.mark.parametrize("fit_intercept", [False, True])
def test_decision_function_is_minus_rho(outputs, loss, fit_intercept):
    Q, y, code = outputs
    dec = ConvexDecoder(loss=loss, fit_intercept=fit_intercept).fit(Q[:500], y[:500], code)
    Q_new = Q[500:700].copy()
    Q_new[:3] = np.array([0.0, 1.0, 0.5])[:, None]  # clipped at the same point as in fit
    rho = discrepancies(
        stack_losses(*binary_losses(Q_new, loss)),
        side_weights(code, dec.weights_),
        dec.intercept_,
    )
    np.testing.assert_allclose(dec.decision_function(Q_new), -rho, rtol=1e-12)
    np.testing.assert_array_equal(Q_new[:3, 0], [0.0, 1.0, 0.5])  # the input is untouched
    assert np.any(dec.intercept_ != 0) == fit_intercept


def test_auto_precision_stores_large_problems_in_float32():
    # 2**20 losses (n x 2M) and more: float32; fewer: float64
    Q, y, code = synthetic_outputs(2**20 // 30, 6)  # M = 15: 2 * 15 * n < 2**20
    small = ConvexDecoder().likelihood_objective(Q, y, code)
    Q2 = np.vstack([Q, Q[:100]])
    large = ConvexDecoder().likelihood_objective(Q2, np.r_[y, y[:100]], code)
    assert small.LT.dtype == np.float64 and large.LT.dtype == np.float32
    explicit = ConvexDecoder(solver=ProjectedNewton(dtype="float64"))
    exact = explicit.likelihood_objective(Q2, np.r_[y, y[:100]], code)
    assert exact.LT.dtype == np.float64
    # the large problem in float32 reaches the float64 solution's objective value
    fit32 = ConvexDecoder().fit(Q2, np.r_[y, y[:100]], code)
    fit64 = clone(explicit).fit(Q2, np.r_[y, y[:100]], code)
    f32, f64 = exact.value(fit32.weights_), exact.value(fit64.weights_)
    assert fit32.converged_ and abs(f32 - f64) <= 1e-6 * f64
    # predictions do not depend on the number of rows asked for
    np.testing.assert_array_equal(fit32.predict_proba(Q2[:10]), fit32.predict_proba(Q2)[:10])


def test_float32_decodes_to_single_precision(outputs):
    Q, y, code = outputs
    ref = ConvexDecoder().fit(Q[:2000], y[:2000], code)
    single = ConvexDecoder(solver=ProjectedNewton(dtype="float32")).fit(Q[:2000], y[:2000], code)
    single.weights_ = ref.weights_  # the same model, decoded in each precision
    scores = single.decision_function(Q)
    assert scores.dtype == np.float64
    np.testing.assert_allclose(scores, ref.decision_function(Q), rtol=1e-5)


def test_predict_log_proba_is_stable(outputs):
    Q, y, code = outputs
    dec = ConvexDecoder(alpha=0.0).fit(Q[:300], y[:300], code)
    dec.weights_ = dec.weights_ * 200  # so confident that probabilities underflow
    log_p = dec.predict_log_proba(Q[:100])
    P = dec.predict_proba(Q[:100])
    assert np.isfinite(log_p).all() and (P == 0).any()
    finite = P > 1e-300
    np.testing.assert_allclose(log_p[finite], np.log(P[finite]), rtol=1e-10, atol=1e-12)
    np.testing.assert_array_equal(np.argmax(log_p, axis=1), dec.predict(Q[:100]))


def test_intercepts_fit_class_priors_equal_weights_cannot():
    """One-vs-rest outputs that carry no information about two rare classes: the
    intercepts learn the class frequencies, and the likelihood improves."""
    rng = np.random.default_rng(0)
    K, n = 4, 4000
    y = rng.choice(K, size=n, p=[0.55, 0.35, 0.05, 0.05])
    Q = rng.uniform(0.2, 0.8, size=(n, K))  # uninformative
    plain = ConvexDecoder().fit(Q, y, one_vs_rest(K))
    with_b = ConvexDecoder(fit_intercept=True).fit(Q, y, one_vs_rest(K))
    assert with_b.objective_ < plain.objective_ - 0.1
    np.testing.assert_allclose(with_b.predict_proba(Q).mean(axis=0), np.bincount(y) / n, atol=0.01)


def test_sample_weight_equals_repeated_rows(outputs):
    Q, y, code = outputs
    Q, y = Q[:400], y[:400]
    counts = np.random.default_rng(0).integers(0, 3, size=400)
    rows = np.repeat(np.arange(400), counts)
    solver = ProjectedNewton(tol=1e-10)
    weighted = ConvexDecoder(solver=solver, fit_intercept=True)
    weighted.fit(Q, y, code, sample_weight=counts)
    repeated = ConvexDecoder(solver=solver, fit_intercept=True).fit(Q[rows], y[rows], code)
    np.testing.assert_allclose(weighted.weights_, repeated.weights_, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(weighted.intercept_, repeated.intercept_, rtol=1e-6, atol=1e-8)


def test_verbose_prints_one_line_per_iteration(outputs, capsys):
    Q, y, code = outputs
    dec = ConvexDecoder(verbose=2).fit(Q[:500], y[:500], code)
    lines = [line for line in capsys.readouterr().out.splitlines() if "[ConvexDecoder]" in line]
    assert len(lines) == dec.n_iter_ + 2  # the start, each iteration, the summary
    assert "projected_gradient" in lines[-2] and "objective" in lines[-2]
    assert lines[-1].startswith(f"[ConvexDecoder] weights: {dec.n_iter_} iterations")
