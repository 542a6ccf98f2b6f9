"""Cost-sensitive decisions and the expected-cost metric, against brute force."""

import numpy as np
import pytest
from sklearn.datasets import load_iris
from sklearn.frozen import FrozenEstimator

from convexagg import ConvexAggregationClassifier
from convexagg.decision import (
    CostSensitiveClassifier,
    check_cost_matrix,
    expected_costs,
    min_cost_decision,
)
from convexagg.metrics import expected_cost_score


def _brute_force(P, C):
    """Per row and candidate class, the expected cost by explicit sums; the argmin."""
    n, K = P.shape
    out = np.empty(n, dtype=int)
    for s in range(n):
        costs = [sum(P[s, i] * C[i][j] for i in range(K)) for j in range(K)]
        out[s] = min(range(K), key=lambda j: (costs[j], j))
    return out


@pytest.fixture(scope="module")
def fitted():
    X, y = load_iris(return_X_y=True)
    return X, y, ConvexAggregationClassifier(cv="in_sample").fit(X, y)


def test_decision_is_brute_force_argmin():
    rng = np.random.default_rng(0)
    P = rng.dirichlet(np.ones(4), size=300)
    C = rng.uniform(0, 5, size=(4, 4))
    np.testing.assert_array_equal(min_cost_decision(P, C), _brute_force(P, C))
    np.testing.assert_allclose(expected_costs(P, C)[7], [P[7] @ C[:, j] for j in range(4)])


def test_wrapper_on_a_fitted_model(fitted):
    X, y, clf = fitted
    C = np.array([[0, 1, 1], [1, 0, 20], [1, 1, 0]], dtype=float)
    wrapped = CostSensitiveClassifier(FrozenEstimator(clf), cost_matrix=C).fit(X, y)
    P = clf.predict_proba(X)
    np.testing.assert_array_equal(wrapped.predict(X), clf.classes_[_brute_force(P, C)])
    np.testing.assert_allclose(wrapped.predict_proba(X), P)
    # the expensive confusion (versicolor called virginica) is avoided more often
    pred = wrapped.predict(X)
    assert np.sum((y == 1) & (pred == 2)) <= np.sum((y == 1) & (clf.predict(X) == 2))
    assert expected_cost_score(y, pred, cost_matrix=C) <= expected_cost_score(
        y, clf.predict(X), cost_matrix=C
    )


def test_zero_one_cost_is_predict(fitted):
    X, y, clf = fitted
    wrapped = CostSensitiveClassifier(FrozenEstimator(clf), cost_matrix=1 - np.eye(3)).fit(X, y)
    np.testing.assert_array_equal(wrapped.predict(X), clf.predict(X))


def test_nonzero_diagonal_and_row_constants_do_not_change_decisions():
    rng = np.random.default_rng(1)
    P = rng.dirichlet(np.ones(3), size=200)
    C = rng.uniform(0, 3, size=(3, 3))
    shifted = C + rng.uniform(0, 2, size=(3, 1))  # a constant per true class (row)
    np.testing.assert_array_equal(min_cost_decision(P, C), min_cost_decision(P, shifted))


@pytest.mark.parametrize(
    "C, match",
    [
        (np.ones((2, 3)), r"shape \(3, 3\)"),
        ([[0, 1, np.nan], [1, 0, 1], [1, 1, 0]], "finite"),
        ([[0, -1, 1], [1, 0, 1], [1, 1, 0]], r"non-negative; cost_matrix\[0, 1\] = -1"),
        (np.zeros((3, 3)), "all zero"),
        ([["a", "b", "c"]] * 3, "numeric"),
    ],
)
def test_cost_matrix_is_validated(fitted, C, match):
    X, y, clf = fitted
    with pytest.raises(ValueError, match=f"cost_matrix.*{match}|{match}.*cost_matrix"):
        CostSensitiveClassifier(FrozenEstimator(clf), cost_matrix=C).fit(X, y)
    with pytest.raises(ValueError, match="cost_matrix"):
        check_cost_matrix(C, 3)


def test_expected_cost_score_by_hand_and_weights():
    y_true = np.array(["a", "b", "c", "b", "a"])
    y_pred = np.array(["a", "c", "c", "a", "b"])
    C = np.array([[0, 2, 3], [4, 0, 5], [6, 7, 0]], dtype=float)
    assert expected_cost_score(y_true, y_pred, cost_matrix=C) == pytest.approx(
        (0 + 5 + 0 + 4 + 2) / 5
    )
    w = np.array([1, 2, 0, 3, 1])
    repeated = np.repeat(np.arange(5), w)
    assert expected_cost_score(y_true, y_pred, cost_matrix=C, sample_weight=w) == pytest.approx(
        expected_cost_score(y_true[repeated], y_pred[repeated], cost_matrix=C)
    )
    # labels fix the matrix's classes when a class is never seen
    assert expected_cost_score(
        ["a", "a"], ["a", "b"], cost_matrix=C, labels=["a", "b", "c"]
    ) == pytest.approx(1.0)


def test_expected_cost_score_errors():
    C = np.array([[0, 1], [1, 0]])
    with pytest.raises(ValueError, match=r"cost_matrix must have shape \(3, 3\)"):
        expected_cost_score([0, 1, 2], [0, 1, 1], cost_matrix=C)
    with pytest.raises(ValueError, match="y_pred contains labels"):
        expected_cost_score([0, 1], [0, 5], cost_matrix=C, labels=[0, 1])
    with pytest.raises(ValueError, match="labels must be sorted"):
        expected_cost_score([0, 1], [0, 1], cost_matrix=C, labels=[1, 0])
    with pytest.raises(ValueError, match="one label per sample"):
        expected_cost_score([0, 1], [0], cost_matrix=C)
