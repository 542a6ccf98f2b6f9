"""The defaults: a learner that fits raw features without a warning, and the same model
from the same data (a fixed ``random_state``), in every estimator and decision wrapper."""

import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import load_digits, load_wine
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import StandardScaler

from convexagg import (
    CodeMatrixClassifier,
    ConformalClassifier,
    ConvexAggregationClassifier,
    ConvexAggregationClassifierCV,
    CostSensitiveClassifier,
    PriorShiftClassifier,
)
from convexagg.estimator import default_learner

ESTIMATORS = {
    "CodeMatrixClassifier": CodeMatrixClassifier(),
    "ConvexAggregationClassifier": ConvexAggregationClassifier(),
    "ConvexAggregationClassifierCV": ConvexAggregationClassifierCV(),
    "ConformalClassifier": ConformalClassifier(ConvexAggregationClassifier()),
    "CostSensitiveClassifier": CostSensitiveClassifier(
        ConvexAggregationClassifier(), cost_matrix=1 - np.eye(3)
    ),
    "PriorShiftClassifier": PriorShiftClassifier(ConvexAggregationClassifier()),
}


@pytest.fixture(scope="module")
def wine():
    return load_wine(return_X_y=True)  # raw: features from 0.1 to 1,680


def test_the_default_learner_is_resolved_in_fit(wine):
    X, y = wine
    clf = ConvexAggregationClassifier()
    clf.fit(X, y)
    assert clf.estimator is None and clf.get_params()["estimator"] is None
    binary = clf.estimators_[0][0]
    assert isinstance(binary, Pipeline) and isinstance(binary[0], StandardScaler)
    assert binary[0].with_mean and type(binary[-1]).__name__ == "LogisticRegression"
    assert default_learner(sparse=True)[0].with_mean is False


def test_raw_wine_fits_without_a_warning(wine):
    X, y = wine
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        clf = ConvexAggregationClassifier().fit(X, y)
        P = clf.predict_proba(X)
    # the scaled learner fits raw wine as well as it fits it scaled
    mean_log_loss = -np.mean(np.log(P[np.arange(len(y)), y]))
    assert mean_log_loss < 0.05


@pytest.mark.slow  # 65 binaries on 5 folds of 1,797 rows and the zero entries' choice: ~3 s
def test_raw_digits_fits_without_a_warning_in_at_most_30_lines(capsys):
    X, y = load_digits(return_X_y=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ConvexAggregationClassifier(verbose=1).fit(X, y)
    out = capsys.readouterr().out
    assert 0 < len(out.splitlines()) <= 30, out


@pytest.mark.parametrize("name", sorted(ESTIMATORS))
def test_the_same_data_gives_the_same_model(wine, name):
    """Two fits with the default parameters: bit-identical probabilities."""
    X, y = wine
    first = clone(ESTIMATORS[name]).fit(X, y).predict_proba(X)
    second = clone(ESTIMATORS[name]).fit(X, y).predict_proba(X)
    np.testing.assert_array_equal(first, second)


def test_random_state_none_draws_fresh_folds(wine):
    """What the fixed default prevents: with None the shuffled folds differ per fit."""
    X, y = wine
    fits = [ConvexAggregationClassifier(code="ovr", random_state=None).fit(X, y) for _ in "ab"]
    assert not np.array_equal(fits[0].oof_fold_, fits[1].oof_fold_)
    assert not np.array_equal(fits[0].predict_proba(X), fits[1].predict_proba(X))
