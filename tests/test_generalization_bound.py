"""The generalization bound of Proposition 2, against a direct computation."""

import numpy as np
import pytest

from convexagg import ConvexAggregationClassifier, ConvexDecoder, generalization_bound
from convexagg.aggregation import stack_losses
from convexagg.codes import make_code
from convexagg.datasets import make_broken_classifier_outputs
from convexagg.losses import binary_losses
from convexagg.solvers import ProjectedSubgradient
from convexagg.theory import margins, ramp_loss


def _direct_terms(Q, code, y, w, B, epsilon):
    """Proposition 2 with explicit loops over samples, classes and classifiers."""
    n, M = Q.shape
    K = code.shape[0]

    def d(c, q):  # the paper's cross-entropy discrepancy; 0 for don't-care
        return {1: -np.log(q), -1: -np.log(1 - q), 0: 0.0}[c]

    ramp_sum, norm_sum = 0.0, 0.0
    for i in range(n):
        rho = [sum(w[l] * d(code[k, l], Q[i, l]) for l in range(M)) for k in range(K)]
        nu = min(rho[k] for k in range(K) if k != y[i]) - rho[y[i]]
        ramp_sum += min(1.0, max(0.0, 1.0 - nu))
        sq = []
        for k in range(K):
            if k == y[i]:
                continue
            varphi = [d(code[y[i], l], Q[i, l]) - d(code[k, l], Q[i, l]) for l in range(M)]
            sq.append(sum(v * v for v in varphi))
        norm_sum += min(sq)
    return (
        ramp_sum / n,
        2 * B / n * np.sqrt(norm_sum),
        np.sqrt(9 * np.log(2 / epsilon) / (2 * n)),
    )


@pytest.mark.parametrize("code_name", ["ovo", "ovr", "complete"])
@pytest.mark.parametrize("B", [None, 3.0])
def test_bound_terms_match_direct_computation(code_name, B):
    rng = np.random.default_rng(4)
    K, n = 4, 12
    code = make_code(code_name, K, random_state=0)
    Q = rng.uniform(0.03, 0.97, size=(n, code.shape[1]))
    y = np.r_[np.arange(K), rng.integers(0, K, n - K)]
    dec = ConvexDecoder(formulation="large_margin", solver=ProjectedSubgradient(max_iter=200))
    dec.fit(Q, y, code)
    bound = generalization_bound(dec, Q, y, B=B, epsilon=0.1)
    B_used = np.linalg.norm(dec.weights_) if B is None else B
    empirical, rademacher, confidence = _direct_terms(Q, code, y, dec.weights_, B_used, 0.1)
    assert bound.B == pytest.approx(B_used, rel=1e-14)
    assert bound.empirical == pytest.approx(empirical, rel=1e-12)
    assert bound.rademacher == pytest.approx(rademacher, rel=1e-12)
    assert bound.confidence == pytest.approx(confidence, rel=1e-14)
    assert bound.total == pytest.approx(empirical + rademacher + confidence, rel=1e-12)
    assert bound.n_samples == n and bound.epsilon == 0.1


def test_margins_ramp_and_misclassification():
    Q, y, code = make_broken_classifier_outputs(n_per_class=30, random_state=0)
    dec = ConvexDecoder(alpha=1e-3).fit(Q, y, code)
    nu = margins(stack_losses(*binary_losses(Q)), code, y, dec.weights_)
    np.testing.assert_array_equal(nu > 0, dec.predict(Q) == y)
    # the ramp loss is an upper bound on the 0-1 loss: the empirical term >= training error
    bound = generalization_bound(dec, Q, y)
    assert bound.empirical >= np.mean(dec.predict(Q) != y)
    np.testing.assert_array_equal(ramp_loss([-1.0, 0.0, 0.25, 1.0, 2.0]), [1, 1, 0.75, 0, 0])
    with pytest.raises(ValueError, match="epsilon"):
        generalization_bound(dec, Q, y, epsilon=1.5)
    with pytest.raises(ValueError, match="class indices"):
        generalization_bound(dec, Q, y + 1)
    with pytest.raises(ValueError, match="columns"):
        generalization_bound(dec, Q[:, :2], y)


def test_bound_from_a_fitted_classifier():
    X, y, _ = make_broken_classifier_outputs(n_per_class=20, random_state=0)
    # the paper's model: one weight per classifier, no intercepts
    clf = ConvexAggregationClassifier(entry_weight_shrinkage=None, fit_intercept=False).fit(X, y)
    y_idx = np.searchsorted(clf.classes_, y)
    bound = generalization_bound(clf.decoder_, clf.predict_binary_proba(X), y_idx)
    assert bound.total == bound.empirical + bound.rademacher + bound.confidence
    assert 0 <= bound.empirical <= 1 and bound.rademacher > 0


def test_the_bound_is_refused_for_a_model_with_intercepts():
    Q, y, code = make_broken_classifier_outputs(n_per_class=20, random_state=0)
    dec = ConvexDecoder(fit_intercept=True).fit(Q, y, code)
    with pytest.raises(ValueError, match="without\n? ?class intercepts|without class intercepts"):
        generalization_bound(dec, Q, y)
