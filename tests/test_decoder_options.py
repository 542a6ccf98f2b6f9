"""ConvexDecoder's solver settings: same optimum, warm starts, bounded memory."""

import gc
import tracemalloc
import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils._param_validation import InvalidParameterError

from convexagg import ConvexAggregationClassifier, ConvexDecoder
from convexagg.codes import one_vs_one

FAST = {"solver": "mehrotra", "newton": "cholesky", "dtype": "float32", "init": "subsample"}


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


@pytest.mark.parametrize("solver", ["paper", "mehrotra"])
@pytest.mark.parametrize("newton", ["cg", "cholesky"])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("init", ["paper", "uniform", "subsample"])
def test_every_setting_reaches_the_same_optimum(outputs, solver, newton, dtype, init):
    Q, y, code = outputs
    ref = ConvexDecoder(tol=1e-9, max_iter=200).fit(Q, y, code)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        dec = ConvexDecoder(tol=1e-7, solver=solver, newton=newton, dtype=dtype, init=init).fit(
            Q, y, code
        )
    assert dec.converged_
    assert abs(dec.objective_ - ref.objective_) <= 1e-6 * ref.objective_
    np.testing.assert_allclose(dec.predict_proba(Q[:50]), ref.predict_proba(Q[:50]), atol=1e-4)


def test_subsample_start_saves_full_data_iterations(outputs):
    Q, y, code = outputs
    cold = ConvexDecoder(solver="mehrotra", newton="cholesky").fit(Q, y, code)
    warm = ConvexDecoder(solver="mehrotra", newton="cholesky", init="subsample").fit(Q, y, code)
    assert warm.n_iter_ < cold.n_iter_
    # below twice the subsample size it is the equal-weights start
    small = ConvexDecoder(init="subsample").fit(Q[:3000], y[:3000], code)
    uniform = ConvexDecoder(init="uniform").fit(Q[:3000], y[:3000], code)
    np.testing.assert_array_equal(small.weights_, uniform.weights_)


@pytest.mark.parametrize("solver", ["paper", "mehrotra"])
def test_uniform_start_saves_iterations(outputs, solver):
    Q, y, code = outputs
    paper = ConvexDecoder(solver=solver, newton="cholesky").fit(Q, y, code)
    uniform = ConvexDecoder(solver=solver, newton="cholesky", init="uniform").fit(Q, y, code)
    assert uniform.n_iter_ < paper.n_iter_
    assert uniform.history_["objective"][0] < paper.history_["objective"][0]


@pytest.mark.parametrize("penalty", ["l2", "l1"])
def test_uniform_start_is_the_best_equal_weights(outputs, penalty):
    """c* of uniform_start against a fine grid of f(c 1) (an independent search)."""
    from convexagg.decoders.convex import penalty_strengths
    from convexagg.solvers import BlockedObjective, uniform_start

    Q, y, code = outputs
    l2, l1 = penalty_strengths(1e-2, penalty)
    objective = BlockedObjective.from_outputs(Q, code, y, l2, l1=l1)
    w0, z0 = uniform_start(objective)
    M = code.shape[1]
    assert np.all(w0 == w0[0]) and np.all(z0 > 0)
    grid = np.geomspace(1e-3, 10, 2001)  # steps of 0.5 %
    values = [objective.value(np.full(M, c)) for c in grid]
    c_grid = grid[int(np.argmin(values))]
    assert w0[0] == pytest.approx(c_grid, rel=0.02)
    assert objective.value(w0) <= min(values) + 1e-6


@pytest.mark.parametrize("solver", ["paper", "mehrotra"])
def test_warm_start_along_an_alpha_path(outputs, solver):
    Q, y, code = outputs
    dec = ConvexDecoder(alpha=1e-2, solver=solver, newton="cholesky", warm_start=True, tol=1e-6)
    dec.fit(Q, y, code)
    for alpha in (3e-3, 1e-3):
        dec.set_params(alpha=alpha).fit(Q, y, code)
        cold = ConvexDecoder(alpha=alpha, solver=solver, newton="cholesky", tol=1e-6)
        cold.fit(Q, y, code)
        assert dec.n_iter_ < cold.n_iter_
        assert dec.objective_ == pytest.approx(cold.objective_, rel=1e-6)
    # a different code: the previous weights do not fit, the fit starts afresh
    Q3, y3, code3 = synthetic_outputs(500, 4, seed=1)
    dec.fit(Q3, y3, code3)
    assert dec.weights_.shape == (6,)


@pytest.mark.parametrize("settings", [{}, FAST], ids=["paper", "fast"])
def test_fit_memory_is_bounded_by_four_times_Q(settings):
    """Issue 5, target 3: peak memory added by fit <= 4 Q.nbytes, no n x K x M tensor.

    tracemalloc sees numpy's allocations (numpy reports them to it).
    """
    Q, y, code = synthetic_outputs(30000, 10, seed=2)  # Q: 30000 x 45 float64, 10.8 MB
    gc.collect()
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    ConvexDecoder(**settings).fit(Q, y, code)
    peak = tracemalloc.get_traced_memory()[1] - base
    tracemalloc.stop()
    n, M = Q.shape
    assert peak <= 4 * Q.nbytes
    assert peak < n * code.shape[0] * M * 8 / 2


def test_options_are_validated():
    Q, y, code = synthetic_outputs(100, 3)
    for bad in ({"solver": "newton"}, {"newton": "lu"}, {"dtype": "float16"}, {"init": "zeros"}):
        with pytest.raises(InvalidParameterError):
            ConvexDecoder(**bad).fit(Q, y, code)


def test_classifier_passes_the_settings_on():
    from sklearn.datasets import load_iris

    X, y = load_iris(return_X_y=True)
    clf = ConvexAggregationClassifier(tol=1e-8, **FAST).fit(X, y)
    for key, value in FAST.items():
        assert getattr(clf.decoder_, key) == value
    ref = ConvexAggregationClassifier(tol=1e-8).fit(X, y)
    np.testing.assert_allclose(clf.predict_proba(X), ref.predict_proba(X), atol=1e-3)


@pytest.mark.parametrize("loss", ["cross_entropy", "exponential"])
def test_decision_function_is_minus_rho(outputs, loss):
    from convexagg.losses import binary_losses
    from convexagg.solvers import discrepancies, side_indicators, stack_losses

    Q, y, code = outputs
    dec = ConvexDecoder(loss=loss).fit(Q[:500], y[:500], code)
    Q_new = Q[500:700].copy()
    Q_new[:3] = np.array([0.0, 1.0, 0.5])[:, None]  # clipped at the same point as in fit
    rho = discrepancies(
        stack_losses(*binary_losses(Q_new, loss)), side_indicators(code), dec.weights_
    )
    np.testing.assert_allclose(dec.decision_function(Q_new), -rho, rtol=1e-12)
    np.testing.assert_array_equal(Q_new[:3, 0], [0.0, 1.0, 0.5])  # the input is untouched


@pytest.fixture(scope="module")
def fitted_pair(outputs):
    Q, y, code = outputs
    return [ConvexDecoder(dtype=d).fit(Q[:2000], y[:2000], code) for d in ("float64", "float32")]


@pytest.mark.parametrize("n", [1, 2183, 2184, 2185, 6000])
def test_decision_function_in_row_chunks_and_float32(outputs, fitted_pair, n):
    """Cross-entropy scores are computed in chunks of 2,184 rows for M = 15 (256 KB):
    every chunk boundary gives the reference rho; float32 agrees to single precision."""
    from convexagg.losses import binary_losses
    from convexagg.solvers import discrepancies, side_indicators, stack_losses

    Q, _, code = outputs
    Q = Q[:n]
    L = stack_losses(*binary_losses(Q))
    for dec, rtol in zip(fitted_pair, (1e-12, 1e-5)):
        rho = discrepancies(L, side_indicators(code), dec.weights_)
        scores = dec.decision_function(Q)
        assert scores.dtype == np.float64
        np.testing.assert_allclose(scores, -rho, rtol=rtol)
