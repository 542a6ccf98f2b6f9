import numpy as np
import pytest

from convexagg.losses import binary_losses, check_binary_outputs


def test_cross_entropy_and_clipping():
    Q = np.array([[0.0, 0.25, 1.0]])
    L_pos, L_neg = binary_losses(Q, "cross_entropy", "proba")
    assert np.allclose(L_pos[0, 1], -np.log(0.25)) and np.allclose(L_neg[0, 1], -np.log(0.75))
    assert np.isfinite(L_pos).all() and np.isfinite(L_neg).all()
    assert L_pos[0, 0] == pytest.approx(-np.log(np.finfo(float).eps))


def test_exponential_on_probabilities_is_eq6():
    Q = np.array([[0.2, 0.9]])
    L_pos, L_neg = binary_losses(Q, "exponential", "proba")
    assert np.allclose(L_pos, np.exp(-(Q - 0.5)))
    assert np.allclose(L_neg, np.exp(Q - 0.5))


def test_margin_losses():
    m = np.array([[-2.0, 0.0, 3.0]])
    lp, ln = binary_losses(m, "logistic", "margin")
    assert np.allclose(lp, np.log1p(np.exp(-m))) and np.allclose(ln, np.log1p(np.exp(m)))
    hp, hn = binary_losses(m, "hinge", "margin")
    assert np.allclose(hp, [[3.0, 1.0, 0.0]]) and np.allclose(hn, [[0.0, 1.0, 4.0]])
    ep, en = binary_losses(m, "exponential", "margin")
    assert np.allclose(ep, np.exp(-m))


def test_loss_output_mismatch_is_a_clear_error():
    with pytest.raises(ValueError, match="not defined for output='margin'.*use one of"):
        binary_losses(np.zeros((1, 1)), "cross_entropy", "margin")
    with pytest.raises(ValueError, match="loss must be one of"):
        binary_losses(np.zeros((1, 1)), "squared", "proba")


def test_check_binary_outputs():
    with pytest.raises(ValueError, match="outside \\[0, 1\\]"):
        check_binary_outputs(np.array([[1.5]]), "proba")
    with pytest.raises(ValueError, match="NaN"):
        check_binary_outputs(np.array([[np.nan]]), "margin")
    assert check_binary_outputs(np.array([[3.0]]), "margin").dtype == np.float64


def test_cross_entropy_into_in_both_precisions():
    """float64: the reference -log q, -log1p(-q) to 3e-16 absolute; float32: within
    the stated 1.2e-7 absolute (plus float32 rounding of the result), at the extremes too."""
    from convexagg.losses import cross_entropy_into

    q = np.array([0.0, 1e-300, 1e-10, 0.3, 0.5, 0.7, 1 - 1e-10, 1.0])
    qc = np.clip(q, np.finfo(float).eps, 1 - np.finfo(float).eps)
    reference = np.stack([-np.log(qc), -np.log1p(-qc)])
    out64 = cross_entropy_into(q.copy(), np.empty((2, q.size)))
    np.testing.assert_allclose(out64, reference, rtol=1e-15, atol=3e-16)
    out32 = cross_entropy_into(q, np.empty((2, q.size), dtype=np.float32), work=np.empty(q.size))
    np.testing.assert_array_equal(q[[0, -1]], [0.0, 1.0])  # read only, given a work array
    assert out32.dtype == np.float32 and np.isfinite(out32).all()
    np.testing.assert_allclose(out32, reference, rtol=1.2e-7, atol=1.2e-7)
