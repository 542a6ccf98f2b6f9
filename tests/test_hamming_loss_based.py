"""Hamming and loss-based decoding against the baselines spec's oracles (section 4.1, 4.2)."""

import numpy as np
import pytest
from scipy.special import softmax

from convexagg.codes import complete, one_vs_one, one_vs_rest, sparse_random
from convexagg.decoders import ConvexDecoder, HammingDecoder, LossBasedDecoder

# one_vs_one(3) has columns (0 v 1), (0 v 2), (1 v 2): the spec's rows (1v2, 1v3, 2v3).
APS3 = one_vs_one(3)
OVA3 = one_vs_rest(3)


def fitted(decoder, code, output="proba"):
    n_classes = code.shape[0]
    Q = np.full((n_classes, code.shape[1]), 0.5 if output == "proba" else 0.0)
    return decoder.fit(Q, np.arange(n_classes), code, output=output)


@pytest.mark.parametrize(
    "code, r, distances",
    [(APS3, [0.9, 0.8, 0.3], [0.5, 2.5, 1.5]), (OVA3, [0.7, 0.4, 0.1], [0.0, 2.0, 2.0])],
)
def test_hamming_spec_oracles(code, r, distances):
    dec = fitted(HammingDecoder(), code)
    np.testing.assert_allclose(dec.hamming_distances([r]), [distances])
    np.testing.assert_allclose(dec.decision_function([r]), [np.negative(distances)])
    assert dec.predict([r]).tolist() == [0]
    assert not hasattr(dec, "predict_proba")


def test_hamming_undecided_and_margins_and_ties():
    dec = fitted(HammingDecoder(), OVA3)
    # r = 1/2 is no vote: it costs 1/2 against every codeword, like a zero entry
    np.testing.assert_allclose(dec.hamming_distances([[0.5, 0.5, 0.5]]), [[1.5, 1.5, 1.5]])
    assert dec.predict([[0.5, 0.5, 0.5]]).tolist() == [0]  # tie -> smallest index
    margins = fitted(HammingDecoder(), OVA3, output="margin")
    np.testing.assert_allclose(
        margins.hamming_distances([[2.0, -0.1, -3.0]]), dec.hamming_distances([[0.7, 0.4, 0.1]])
    )


def test_hamming_dont_care_costs_half():
    # class 2 is unused by column 0: it pays 1/2 there whatever the output
    code = np.array([[1, 1], [-1, 1], [0, -1]])
    dec = fitted(HammingDecoder(), code)
    np.testing.assert_allclose(dec.hamming_distances([[0.9, 0.2]]), [[1.0, 2.0, 0.5]])


LOSS_ORACLES = [
    (
        APS3,
        [0.9, 0.8, 0.3],
        [0.8037127556, 1.2377424853, 1.0561965202],
        [0.4124116407, 0.2671986124, 0.3203897469],
    ),
    (
        OVA3,
        [0.7, 0.4, 0.1],
        [0.7979627390, 0.9989645741, 1.2060216246],
        [0.4027628479, 0.3294241358, 0.2678130163],
    ),
]


@pytest.mark.parametrize("code, r, rho, p", LOSS_ORACLES)
def test_loss_based_spec_oracles(code, r, rho, p):
    dec = fitted(LossBasedDecoder(), code)
    np.testing.assert_allclose(dec.discrepancies([r]), [rho], rtol=1e-9)
    np.testing.assert_allclose(dec.predict_proba([r]), [p], rtol=1e-9)
    # hand check of rho_1 for the all-pairs code: (e^-0.4 + e^-0.3 + 1) / 3
    if code is APS3:
        assert dec.discrepancies([r])[0, 0] == pytest.approx((np.exp(-0.4) + np.exp(-0.3) + 1) / 3)


def test_loss_based_complete_code_is_negated_ova_and_extreme_outputs():
    # complete(3) = OVA with columns 2 and 3 negated (I1): r -> 1 - r there
    np.testing.assert_allclose(np.abs(complete(3)), np.ones((3, 3)))
    p_ova = fitted(LossBasedDecoder(), OVA3).predict_proba([[0.7, 0.4, 0.1]])
    C = OVA3 * np.array([1, -1, -1])
    np.testing.assert_allclose(
        fitted(LossBasedDecoder(), C).predict_proba([[0.7, 0.6, 0.9]]), p_ova
    )
    p = fitted(LossBasedDecoder(), OVA3).predict_proba([[1.0, 0.0, 0.0]])
    np.testing.assert_allclose(p, [[0.5004116399, 0.2497941800, 0.2497941800]], rtol=1e-9)
    assert p[0, 0] / p[0, 1] == pytest.approx(2.0032958, rel=1e-6)


def closed_form(Q, code, dont_care_cost=1.0):
    """Spec section 4.2, one sample and one class at a time."""
    n, M = Q.shape
    K = code.shape[0]
    rho = np.zeros((n, K))
    for i in range(n):
        for k in range(K):
            for j in range(M):
                c = code[k, j]
                rho[i, k] += np.exp(-c * (Q[i, j] - 0.5)) if c != 0 else dont_care_cost
    rho /= M
    e = np.exp(-(rho - rho.min(axis=1, keepdims=True)))
    return e / e.sum(axis=1, keepdims=True)


def test_loss_based_equals_closed_form_on_sparse_codes():
    rng = np.random.default_rng(0)
    code = sparse_random(8, n_candidates=20, random_state=0)
    Q = rng.uniform(size=(20, code.shape[1]))
    dec = LossBasedDecoder().fit(Q, rng.integers(8, size=20), code)
    np.testing.assert_allclose(dec.predict_proba(Q), closed_form(Q, code), rtol=1e-12)
    ignore = LossBasedDecoder(dont_care="ignore").fit(Q, np.zeros(20, dtype=int), code)
    np.testing.assert_allclose(ignore.predict_proba(Q), closed_form(Q, code, 0.0), rtol=1e-12)
    # near-uniform by construction: p_k / p_l <= exp(e^1/2 - e^-1/2)
    P = dec.predict_proba(Q)
    assert (P.max(axis=1) / P.min(axis=1)).max() <= np.exp(np.exp(0.5) - np.exp(-0.5))


def test_loss_based_is_the_convex_model_at_equal_weights():
    """The paper: its model with w = 1/M and the exponential loss is loss-based decoding."""
    rng = np.random.default_rng(1)
    for code in (one_vs_one(5), sparse_random(8, n_candidates=20, random_state=1)):
        Q = rng.uniform(size=(15, code.shape[1]))
        y = rng.integers(code.shape[0], size=15)
        convex = ConvexDecoder(loss="exponential").fit(Q, y, code)
        convex.weights_ = np.full(code.shape[1], 1.0 / code.shape[1])
        ignore = LossBasedDecoder(dont_care="ignore").fit(Q, y, code)
        np.testing.assert_allclose(ignore.predict_proba(Q), convex.predict_proba(Q), rtol=1e-12)
    # with as many zeros in every codeword (one-vs-one) the don't-care convention is a
    # constant shift: same probabilities
    code = one_vs_one(5)
    Q = rng.uniform(size=(15, code.shape[1]))
    a = LossBasedDecoder().fit(Q, np.zeros(15, dtype=int), code).predict_proba(Q)
    b = LossBasedDecoder(dont_care="ignore").fit(Q, np.zeros(15, dtype=int), code)
    np.testing.assert_allclose(a, b.predict_proba(Q), rtol=1e-12)


def test_loss_based_invariances_and_options():
    rng = np.random.default_rng(2)
    code = sparse_random(8, n_candidates=20, random_state=2)
    M = code.shape[1]
    Q = rng.uniform(size=(10, M))
    y = rng.integers(8, size=10)
    P = LossBasedDecoder().fit(Q, y, code).predict_proba(Q)
    # I1: negate column 0 and flip its output
    C1, Q1 = code.copy(), Q.copy()
    C1[:, 0] *= -1
    Q1[:, 0] = 1 - Q1[:, 0]
    np.testing.assert_allclose(LossBasedDecoder().fit(Q1, y, C1).predict_proba(Q1), P)
    # I2: permute columns with the outputs
    perm = rng.permutation(M)
    P2 = LossBasedDecoder().fit(Q[:, perm], y, code[:, perm]).predict_proba(Q[:, perm])
    np.testing.assert_allclose(P2, P)
    # I3: permute classes
    cls = rng.permutation(8)
    np.testing.assert_allclose(LossBasedDecoder().fit(Q, y, code[cls]).predict_proba(Q), P[:, cls])
    # average=False: Allwein's sum, same prediction, sharper probabilities
    total = LossBasedDecoder(average=False).fit(Q, y, code)
    np.testing.assert_array_equal(total.predict(Q), P.argmax(axis=1))
    assert total.predict_proba(Q).max() > P.max()


def test_loss_based_margin_losses():
    rng = np.random.default_rng(3)
    code = sparse_random(8, n_candidates=20, random_state=3)
    m = rng.normal(size=(6, code.shape[1]))
    dec = LossBasedDecoder(loss="hinge").fit(m, np.zeros(6, dtype=int), code, output="margin")
    hinge = np.maximum(0, 1 - code[None, :, :] * m[:, None, :])  # (n, K, M); zeros cost L(0) = 1
    np.testing.assert_allclose(dec.discrepancies(m), hinge.mean(axis=2))
    np.testing.assert_allclose(dec.predict_proba(m), softmax(-hinge.mean(axis=2), axis=1))
    with pytest.raises(ValueError, match="not defined for output='margin'"):
        LossBasedDecoder(loss="cross_entropy").fit(m, np.zeros(6, dtype=int), code, "margin")
