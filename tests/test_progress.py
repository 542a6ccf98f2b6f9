"""Progress bars: shown by tqdm when it is installed and verbose is set, never required."""

import sys

import numpy as np
import pytest
from sklearn.datasets import load_iris

from convexagg import ConvexAggregationClassifierCV, regularization_path
from convexagg._utils import progress
from convexagg.datasets import make_broken_classifier_outputs


def test_progress_is_the_iterable_itself_when_off_or_without_tqdm(monkeypatch):
    items = [1, 2, 3]
    assert progress(items, enabled=False) is items
    monkeypatch.setitem(sys.modules, "tqdm.auto", None)  # import fails: not installed
    assert progress(items, enabled=True) is items


def test_regularization_path_shows_a_bar_with_verbose(capsys):
    pytest.importorskip("tqdm")
    Q, y, code = make_broken_classifier_outputs(random_state=0)
    alphas = np.logspace(-4, 0, 5)
    quiet = regularization_path(Q, y, code, alphas)
    assert "alphas" not in capsys.readouterr().err
    loud = regularization_path(Q, y, code, alphas, verbose=1)
    assert "alphas" in capsys.readouterr().err
    np.testing.assert_array_equal(quiet.weights, loud.weights)


def test_cv_estimator_shows_a_bar_over_folds_with_verbose(capsys):
    pytest.importorskip("tqdm")
    X, y = load_iris(return_X_y=True)
    clf = ConvexAggregationClassifierCV(alphas=[1e-2, 1.0], alpha_cv=2, verbose=1).fit(X, y)
    captured = capsys.readouterr()
    assert "alpha folds" in captured.err
    assert "alpha fold 2: best alpha" in captured.out
    assert clf.cv_scores_.shape == (2, 2)
