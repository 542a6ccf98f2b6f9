"""The decode's softmax over the classes in the kernel's transposed layout.

``ConvexDecoder.predict_proba`` takes ``softmax(-rho)`` from ``rho.T``
(:func:`convexagg.aggregation.softmax_classes`); checked against SciPy's
softmax of the decision function, the independent reference.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import softmax

from convexagg import ConvexDecoder
from convexagg.aggregation import output_discrepancies, softmax_classes
from convexagg.codes import make_code
from convexagg.solvers import ProjectedNewton


def _outputs(n, K, seed=0):
    rng = np.random.default_rng(seed)
    code = make_code("ovo", K)
    y = rng.integers(K, size=n)
    Q = np.clip(np.where(code[y] == 1, 0.8, 0.2) + rng.normal(0, 0.25, (n, code.shape[1])), 0, 1)
    Q[:5, :] = rng.integers(2, size=(5, code.shape[1]))  # outputs at 0 and 1: losses up to 36
    return Q, y, code


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("fit_intercept", [False, True])
def test_predict_proba_is_scipy_softmax_of_the_scores(dtype, fit_intercept):
    Q, y, code = _outputs(500, 6)
    dec = ConvexDecoder(
        alpha=1e-6, fit_intercept=fit_intercept, solver=ProjectedNewton(dtype=dtype)
    ).fit(Q, y, code)
    P = dec.predict_proba(Q)
    assert P.dtype == np.float64 and P.flags.c_contiguous
    np.testing.assert_allclose(
        P, softmax(dec.decision_function(Q), axis=1), rtol=1e-13, atol=1e-300
    )
    np.testing.assert_allclose(P.sum(axis=1), 1.0, rtol=1e-14)
    np.testing.assert_array_equal(dec.predict(Q), np.argmax(dec.decision_function(Q), axis=1))


def test_transposed_discrepancies_are_the_transpose():
    Q, _, code = _outputs(300, 5)
    w = np.random.default_rng(1).uniform(0, 2, code.shape[1])
    b = np.arange(5.0)
    for dtype in (np.float64, np.float32):
        rho = output_discrepancies(Q, code, w, b, dtype=dtype)
        rhoT = output_discrepancies(Q, code, w, b, dtype=dtype, transposed=True)
        assert rhoT.shape == (5, 300) and rhoT.dtype == np.float64
        np.testing.assert_array_equal(rhoT, rho.T)


def test_softmax_classes_far_from_zero():
    """Shifted by each row's smallest discrepancy: no overflow, underflow only to 0."""
    rho = np.array([[1e4, 1e4 + 1.0, 2e4], [-1e4, 0.0, 1e4], [3.0, 3.0, 3.0]])
    P = softmax_classes(np.ascontiguousarray(rho.T))
    np.testing.assert_allclose(P, softmax(-rho, axis=1), rtol=1e-15, atol=0)
    assert np.isfinite(P).all()


def test_reused_product_follows_the_weights():
    """The last product is reused only for the same side weights: decoding with other
    weights of the same shape, then the first again, matches the dense kernel each time."""
    from convexagg.aggregation import discrepancies, side_weights, stack_losses
    from convexagg.losses import binary_losses

    Q, _, code = _outputs(200, 5)
    L = stack_losses(*binary_losses(Q))
    rng = np.random.default_rng(2)
    w1, w2 = rng.uniform(0, 2, (2, code.shape[1]))
    for w in (w1, w1, w2, w1):
        np.testing.assert_allclose(
            output_discrepancies(Q, code, w), discrepancies(L, side_weights(code, w)), rtol=1e-12
        )
    w3 = w1.copy()
    output_discrepancies(Q, code, w3)
    w3[0] += 1.0  # changed in place after a decode
    np.testing.assert_allclose(
        output_discrepancies(Q, code, w3), discrepancies(L, side_weights(code, w3)), rtol=1e-12
    )
