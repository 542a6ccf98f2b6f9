"""ConvexAggregationClassifierCV: alpha by cross-validated log-loss, binaries once per fold."""

import numpy as np
import pytest
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.datasets import load_iris
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import StratifiedKFold
from sklearn.utils.estimator_checks import parametrize_with_checks

from convexagg import ConvexAggregationClassifierCV, ConvexDecoder
from convexagg.binary import fit_binaries, predict_binaries


@parametrize_with_checks([ConvexAggregationClassifierCV(code="ovr", alphas=[1e-3, 1e-1], cv=3)])
def test_sklearn_compatible(estimator, check):
    check(estimator)


FIT_CALLS = []


class CountingLogisticRegression(ClassifierMixin, BaseEstimator):
    """LogisticRegression that records every fit (same process: n_jobs=None)."""

    def fit(self, X, y):
        FIT_CALLS.append(len(y))
        self.model_ = LogisticRegression().fit(X, y)
        self.classes_ = self.model_.classes_
        return self

    def predict_proba(self, X):
        return self.model_.predict_proba(X)


@pytest.fixture(scope="module")
def iris():
    X, y = load_iris(return_X_y=True)
    return X, y


def test_binaries_are_trained_once_per_fold_not_per_alpha(iris):
    X, y = iris
    FIT_CALLS.clear()
    clf = ConvexAggregationClassifierCV(CountingLogisticRegression(), alphas=7, cv=3).fit(X, y)
    n_columns = clf.code_matrix_.shape[1]
    assert len(FIT_CALLS) == (3 + 1) * n_columns  # 3 folds + the refit, whatever the grid
    assert clf.cv_scores_.shape == (7, 3)
    np.testing.assert_allclose(clf.alphas_, np.logspace(0, -6, 7))


def test_alpha_is_the_argmin_of_separately_computed_fold_log_losses(iris):
    X, y = iris
    alphas = [1.0, 1e-1, 1e-2, 1e-4]
    cv = StratifiedKFold(3, shuffle=True, random_state=0)
    clf = ConvexAggregationClassifierCV(code="ovr", alphas=alphas, cv=cv, tol=1e-9).fit(X, y)
    expected = np.empty((len(alphas), 3))
    for f, (train, val) in enumerate(cv.split(X, y)):
        binaries = fit_binaries(LogisticRegression(), X[train], y[train], clf.code_matrix_)
        Q_train = predict_binaries(binaries, X[train], "proba")
        Q_val = predict_binaries(binaries, X[val], "proba")
        for j, alpha in enumerate(alphas):
            dec = ConvexDecoder(alpha=alpha, tol=1e-9).fit(Q_train, y[train], clf.code_matrix_)
            P = dec.predict_proba(Q_val)
            expected[j, f] = -np.mean(np.log(P[np.arange(len(val)), y[val]]))
    np.testing.assert_allclose(clf.cv_scores_, expected, rtol=1e-6)
    assert clf.alpha_ == alphas[np.argmin(expected.mean(axis=1))]
    # refit on all data at alpha_
    binaries = fit_binaries(LogisticRegression(), X, y, clf.code_matrix_)
    dec = ConvexDecoder(alpha=clf.alpha_, tol=1e-9)
    dec.fit(predict_binaries(binaries, X, "proba"), y, clf.code_matrix_)
    np.testing.assert_allclose(clf.weights_, dec.weights_, rtol=1e-8)
    assert clf.score(X, y) > 0.9


def test_invalid_alphas(iris):
    X, y = iris
    with pytest.raises(ValueError, match="alphas"):
        ConvexAggregationClassifierCV(alphas=[]).fit(X, y)
    with pytest.raises(ValueError, match="alphas"):
        ConvexAggregationClassifierCV(alphas=[1e-2, -1.0]).fit(X, y)
