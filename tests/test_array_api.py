"""Array-API inputs under ``sklearn.set_config(array_api_dispatch=True)``.

The device path (:mod:`convexagg.aggregation.array_api`) is checked against
the NumPy path, an independent implementation of the same objective
(:class:`~convexagg.aggregation.DenseObjective`, the class-blocked storage the
decoder fits with, scipy's softmax): on ``array_api_strict`` (every function
outside the standard raises) and on PyTorch's CPU tensors where PyTorch is
installed (the namespaces and fixtures: ``tests/array_api_namespaces.py``).
``ConvexAggregationClassifier`` on array-API ``X``: ``tests/test_array_api_classifier.py``.
"""

from __future__ import annotations

import numpy as np
import pytest
import sklearn
from scipy.special import log_softmax, softmax

from array_api_namespaces import NAMESPACES, TORCH, host, of_namespace, to_xp, xps
from convexagg import ConvexDecoder, OutputDecoderClassifier
from convexagg._array_api import array_namespace
from convexagg.aggregation import DenseObjective, Penalty, stack_losses
from convexagg.aggregation.array_api import ArrayAPIObjective, array_api_losses
from convexagg.codes import make_code
from convexagg.losses import binary_losses
from convexagg.solvers import LBFGSB, InteriorPoint, ProjectedNewton

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def outputs(n=400, K=5, code_name="ovo", seed=0, dtype=np.float64):
    """Noisy binary outputs of the code's columns for labels ``y``."""
    rng = np.random.default_rng(seed)
    code = make_code(code_name, K)
    y = rng.integers(K, size=n)
    clean = np.where(code[y] == 1, 0.75, np.where(code[y] == -1, 0.25, 0.5))
    Q = np.clip(clean + rng.normal(0, 0.2, clean.shape), 0, 1).astype(dtype)
    Q[0, 0], Q[1, 0] = 0.0, 1.0  # the clipped ends of the cross-entropy
    return Q, y, code


# -- the kernels against the NumPy ones ----------------------------------------------------


@pytest.mark.parametrize("name", NAMESPACES)
@pytest.mark.parametrize(
    "loss, output",
    [("cross_entropy", "proba"), ("exponential", "proba"), ("exponential", "margin"),
     ("logistic", "margin"), ("hinge", "margin")],
)  # fmt: skip
def test_losses_match_numpy(name, loss, output, dispatch):
    rng = np.random.default_rng(1)
    if output == "proba":
        Q = np.concatenate([[[0.0, 1.0, 1e-20]], rng.uniform(size=(30, 3))])
    else:  # margins beyond the exponential's clip and the cap
        Q = np.concatenate([[[-50.0, 50.0, 1e14]], rng.normal(0, 5, (30, 3))])
    Qx = to_xp(name, Q)
    xp = array_namespace(Qx).xp  # the namespace the decoder computes with
    L = array_api_losses(Qx, loss, output, xp, xp.float64)
    assert of_namespace(name, L)
    np.testing.assert_allclose(host(L), stack_losses(*binary_losses(Q, loss, output)), rtol=1e-15)


@pytest.mark.parametrize("name", NAMESPACES)
def test_losses_in_row_blocks(name, dispatch, monkeypatch):
    """Blocks of rows written into the result give the losses of one whole-array pass."""
    import convexagg.aggregation.array_api as module

    Q, _, _ = outputs(n=101, K=4)
    Qx = to_xp(name, Q)
    xp = array_namespace(Qx).xp
    whole = host(array_api_losses(Qx, "cross_entropy", "proba", xp, xp.float32))
    monkeypatch.setattr(module, "CHUNK_VALUES", 3 * 2 * Q.shape[1])  # blocks of 3 rows
    blocked = host(array_api_losses(Qx, "cross_entropy", "proba", xp, xp.float32))
    np.testing.assert_array_equal(blocked, whole)
    # float32 losses of at most 36: rounding of q and of the logs, below 3e-6
    np.testing.assert_allclose(blocked, stack_losses(*binary_losses(Q)), rtol=1e-6, atol=3e-6)


@pytest.mark.parametrize("name", NAMESPACES)
@pytest.mark.parametrize("fit_intercept", [False, True])
def test_objective_matches_dense_reference(name, fit_intercept, dispatch):
    Q, y, code = outputs(n=300, K=4)
    rng = np.random.default_rng(2)
    sw = rng.uniform(0.5, 3.0, size=y.size)
    L = stack_losses(*binary_losses(Q))
    penalty = Penalty.from_alpha(1e-2)
    ref = DenseObjective(L, code, y, penalty, fit_intercept=fit_intercept, sample_weight=sw)
    namespace = array_namespace(to_xp(name, L))
    dev = ArrayAPIObjective(
        to_xp(name, L),
        code,
        to_xp(name, y),
        penalty,
        namespace=namespace,
        fit_intercept=fit_intercept,
        sample_weight=to_xp(name, sw),
    )
    x = rng.uniform(0, 1, ref.n_variables)
    v = rng.normal(size=ref.n_variables)
    p_ref, p_dev = ref.evaluate(x), dev.evaluate(x)
    assert p_dev.value == pytest.approx(p_ref.value, rel=1e-14)
    np.testing.assert_allclose(p_dev.grad, p_ref.grad, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(dev.hessp(p_dev, v), ref.hessp(p_ref, v), rtol=1e-11, atol=1e-14)
    np.testing.assert_allclose(dev.hess_diag(p_dev), ref.hess_diag(p_ref), rtol=1e-11)
    np.testing.assert_allclose(dev.hessian(p_dev), ref.hessian(p_ref), rtol=1e-11, atol=1e-14)
    block = np.array([0, 2, ref.n_variables - 1])
    np.testing.assert_array_equal(
        dev.hessian(p_dev, block), dev.hessian(p_dev)[np.ix_(block, block)]
    )
    # a subset of the samples: the reference on those rows
    sub = dev.take(slice(0, None, 3))
    ref_sub = DenseObjective(
        L[::3], code, y[::3], penalty, fit_intercept=fit_intercept, sample_weight=sw[::3]
    )
    assert sub.value(x) == pytest.approx(ref_sub.value(x), rel=1e-14)
    rows = np.array([5, 1, 7, 200])
    assert dev.take(rows).value(x) == pytest.approx(
        DenseObjective(
            L[rows], code, y[rows], penalty, fit_intercept=fit_intercept, sample_weight=sw[rows]
        ).value(x),
        rel=1e-14,
    )


# -- ConvexDecoder ---------------------------------------------------------------------------

SETTINGS = [
    pytest.param({}, "proba", 1e-9, id="default"),
    pytest.param({"fit_intercept": True}, "proba", 1e-9, id="intercept"),
    pytest.param({"entry_weight_shrinkage": 1.0}, "proba", 1e-9, id="entry-weights"),
    pytest.param({"column_penalty": np.linspace(0, 1, 10)}, "proba", 1e-9, id="column-penalty"),
    pytest.param({"solver": InteriorPoint()}, "proba", 1e-9, id="interior-point"),
    pytest.param({"solver": LBFGSB(tol=1e-10)}, "proba", 1e-9, id="lbfgsb"),
    # PCG stops where its forcing term allows, at an iterate that depends on the rounding
    # of its float32 preconditioner: both fits are within tol / alpha of the optimum
    pytest.param({"solver": ProjectedNewton(newton="cg", tol=1e-9)}, "proba", 1e-7, id="newton-cg"),
    pytest.param({"loss": "logistic", "alpha": 1e-2}, "margin", 1e-9, id="margins"),
]


@pytest.mark.parametrize("name", NAMESPACES)
@pytest.mark.parametrize("params, output, rtol", SETTINGS)
def test_decoder_matches_numpy(name, params, output, rtol, dispatch):
    Q, y, code = outputs()
    if output == "margin":
        Q = np.log(np.clip(Q, 0.01, 0.99) / (1 - np.clip(Q, 0.01, 0.99)))
    sw = np.random.default_rng(3).integers(1, 4, size=y.size).astype(float)
    with sklearn.config_context(array_api_dispatch=False):
        ref = ConvexDecoder(**params).fit(Q, y, code, output=output, sample_weight=sw)
    dec = ConvexDecoder(**params).fit(
        to_xp(name, Q), to_xp(name, y), code, output=output, sample_weight=to_xp(name, sw)
    )
    assert isinstance(dec.weights_, np.ndarray)  # the fitted model lives on the host
    np.testing.assert_allclose(dec.weights_, ref.weights_, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(dec.intercept_, ref.intercept_, rtol=1e-8, atol=1e-10)
    assert dec.objective_ == pytest.approx(ref.objective_, rel=1e-12)
    Qx = to_xp(name, Q[:50])
    P, logP, S, pred = (
        dec.predict_proba(Qx),
        dec.predict_log_proba(Qx),
        dec.decision_function(Qx),
        dec.predict(Qx),
    )
    for a in (P, logP, S, pred):
        assert of_namespace(name, a)
    np.testing.assert_allclose(host(P), ref.predict_proba(Q[:50]), rtol=rtol, atol=1e-12)
    np.testing.assert_allclose(host(logP), ref.predict_log_proba(Q[:50]), rtol=rtol, atol=1e-9)
    np.testing.assert_allclose(host(S), ref.decision_function(Q[:50]), rtol=rtol, atol=1e-9)
    np.testing.assert_array_equal(host(pred), ref.predict(Q[:50]))


@pytest.mark.parametrize("name", NAMESPACES)
def test_decoder_on_device_with_numpy_labels_and_weights(name, dispatch):
    """``y`` and ``sample_weight`` may stay NumPy (moved to ``Q``'s device)."""
    Q, y, code = outputs(n=200, K=4)
    sw = np.arange(1, 201, dtype=float) % 3 + 1
    dec = ConvexDecoder().fit(to_xp(name, Q), y, code, sample_weight=sw)
    with sklearn.config_context(array_api_dispatch=False):
        ref = ConvexDecoder().fit(Q, y, code, sample_weight=sw)
    np.testing.assert_allclose(dec.weights_, ref.weights_, rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("name", NAMESPACES)
def test_float32_outputs_decode_in_float32(name, dispatch):
    """float32 losses (the solver's ``dtype``) give the NumPy path's result to float32's
    rounding, and the probabilities come back as float64 of the input's namespace."""
    Q, y, code = outputs(n=300, K=4, dtype=np.float32)
    solver = ProjectedNewton(dtype="float32")
    with sklearn.config_context(array_api_dispatch=False):
        ref = ConvexDecoder(solver=solver).fit(Q, y, code)
    dec = ConvexDecoder(solver=solver).fit(to_xp(name, Q), y, code)
    np.testing.assert_allclose(dec.weights_, ref.weights_, rtol=1e-4, atol=1e-5)
    P = dec.predict_proba(to_xp(name, Q))
    assert host(P).dtype == np.float64
    np.testing.assert_allclose(host(P), ref.predict_proba(Q), atol=1e-5)


# -- OutputDecoderClassifier -----------------------------------------------------------------


@pytest.mark.parametrize("name", NAMESPACES)
def test_output_decoder_classifier_matches_numpy(name, dispatch):
    Q, y, code = outputs(n=300, K=4)
    labels = np.array([10, 20, 30, 40])[y]
    with sklearn.config_context(array_api_dispatch=False):
        ref = OutputDecoderClassifier(code="ovo").fit(Q, labels)
    clf = OutputDecoderClassifier(code="ovo").fit(to_xp(name, Q), to_xp(name, labels))
    np.testing.assert_array_equal(clf.classes_, ref.classes_)
    Qx = to_xp(name, Q)
    P, pred = clf.predict_proba(Qx), clf.predict(Qx)
    assert of_namespace(name, P) and of_namespace(name, pred)
    np.testing.assert_allclose(host(P), ref.predict_proba(Q), rtol=1e-9, atol=1e-12)
    np.testing.assert_array_equal(host(pred), ref.predict(Q))
    np.testing.assert_allclose(
        host(clf.predict_log_proba(Qx)), ref.predict_log_proba(Q), rtol=1e-9, atol=1e-9
    )
    # string labels cannot live on a device: NumPy labels, the same predictions
    names = np.array(list("abcd"))[y]
    clf = OutputDecoderClassifier(code="ovo").fit(Qx, names)
    np.testing.assert_array_equal(clf.predict(Qx), np.array(list("abcd"))[ref.predict(Q) // 10 - 1])


@pytest.mark.parametrize("name", NAMESPACES)
def test_output_decoder_classifier_two_classes(name, dispatch):
    rng = np.random.default_rng(4)
    y = rng.integers(2, size=100)
    Q = np.clip(np.where(y == 1, 0.7, 0.3) + rng.normal(0, 0.2, 100), 0, 1)[:, None]
    with sklearn.config_context(array_api_dispatch=False):
        ref = OutputDecoderClassifier(code="ovo").fit(Q, y)
    clf = OutputDecoderClassifier(code="ovo").fit(to_xp(name, Q), y)
    scores = clf.decision_function(to_xp(name, Q))
    assert of_namespace(name, scores) and tuple(scores.shape) == (100,)
    np.testing.assert_allclose(host(scores), ref.decision_function(Q), rtol=1e-9, atol=1e-12)


# -- what the device path refuses, with the parameter named -----------------------------------


@pytest.mark.parametrize("name", NAMESPACES)
def test_errors_name_the_input(name, dispatch):
    Q, y, code = outputs(n=100, K=3)
    Qx = to_xp(name, Q)
    with pytest.raises(ValueError, match="formulation='likelihood' only; got formulation='large"):
        ConvexDecoder(formulation="large_margin").fit(Qx, y, code)
    with pytest.raises(ValueError, match="formulation='likelihood' only; got formulation='stiff"):
        ConvexDecoder(formulation="stiffness").fit(Qx, y, code)
    bad = Q.copy()
    bad[3, 1] = np.nan
    with pytest.raises(ValueError, match="Q contains NaN or infinite"):
        ConvexDecoder().fit(to_xp(name, bad), y, code)
    with pytest.raises(ValueError, match=r"outside \[0, 1\]"):
        ConvexDecoder().fit(to_xp(name, Q + 1.0), y, code)
    with pytest.raises(ValueError, match="y must hold integer class indices"):
        ConvexDecoder().fit(Qx, to_xp(name, y + 5), code)
    with pytest.raises(ValueError, match="y must be 1-D with one label per row"):
        ConvexDecoder().fit(Qx, y[:-1], code)
    with pytest.raises(ValueError, match="sample_weight must be finite and >= 0"):
        ConvexDecoder().fit(Qx, y, code, sample_weight=-np.ones(100))
    with pytest.raises(ValueError, match="columns but the code matrix has"):
        ConvexDecoder().fit(to_xp(name, Q[:, :2]), y, code)
    dec = ConvexDecoder().fit(Qx, y, code)
    with pytest.raises(ValueError, match="fitted with 3 classifiers"):
        dec.predict_proba(to_xp(name, Q[:, :2]))


def test_dask_labels_with_device_outputs_are_refused(dispatch):
    da = pytest.importorskip("dask.array")
    Q, y, code = outputs(n=100, K=3)
    with pytest.raises(ValueError, match="y and sample_weight cannot be Dask arrays"):
        ConvexDecoder().fit(xps.asarray(Q), da.from_array(y, chunks=50), code)


@pytest.mark.skipif(TORCH is None, reason="PyTorch is not installed")
def test_without_dispatch_tensors_take_the_numpy_path():
    """Without ``array_api_dispatch`` nothing changes: a CPU tensor converts to NumPy."""
    Q, y, code = outputs(n=200, K=4)
    ref = ConvexDecoder().fit(Q, y, code)
    dec = ConvexDecoder().fit(TORCH.asarray(Q), TORCH.asarray(y), code)
    P = dec.predict_proba(TORCH.asarray(Q))
    assert isinstance(P, np.ndarray)
    np.testing.assert_array_equal(P, ref.predict_proba(Q))
    np.testing.assert_array_equal(softmax(ref.decision_function(Q), axis=1), P)
    logP = dec.predict_log_proba(TORCH.asarray(Q))
    np.testing.assert_array_equal(logP, log_softmax(ref.decision_function(Q), axis=1))
