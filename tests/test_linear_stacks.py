"""The stacked coefficients of a fitted estimator's linear binaries are its own fitted
state (``_linear_stacks``, one :class:`~convexagg.linear_outputs.LinearStack` per
member): set at fit and at load, read by every prediction, never rebuilt while
predicting, and kept in no module.

References: each binary's own ``predict_proba`` / ``decision_function`` fed to the
fitted decoder (the general path), and the model before a save, a pickle or a copy.
"""

from __future__ import annotations

import copy
import pickle
import zipfile

import numpy as np
import pytest
from sklearn.datasets import load_iris
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

import convexagg.binary
import convexagg.code_matrix
import convexagg.linear_outputs
from convexagg import CodeMatrixClassifier
from convexagg import io as cio
from convexagg.linear_outputs import LinearStack

METHODS = ("predict_proba", "predict_log_proba", "decision_function", "predict_binary_proba")


@pytest.fixture(scope="module")
def iris():
    X, y = load_iris(return_X_y=True)
    return X * 10 + 50, y  # means away from zero: the stacks fold the scalers' centring in


def _fit(X, y, seed=0, **params):
    learner = make_pipeline(StandardScaler(), LogisticRegression(max_iter=200))
    return CodeMatrixClassifier(learner, code="ovo", cv=3, random_state=seed, **params).fit(X, y)


def _predictions(clf, X):
    return {method: getattr(clf, method)(X) for method in METHODS}


def _assert_same(a, b):
    for method in METHODS:
        np.testing.assert_array_equal(a[method], b[method], err_msg=method)


def _model_of(binary):
    return binary.steps[-1][1]


def test_stacks_are_fitted_state_and_predicting_stacks_nothing(iris, monkeypatch):
    """One stack per member, of that member's own binaries; with stacking made to fail,
    every prediction method still answers, as the binaries one by one do."""
    X, y = iris
    clf = _fit(X, y)
    assert clf.ensemble_ and len(clf.estimators_) == 3
    assert len(clf._linear_stacks) == len(clf.estimators_)
    for member, stacked in zip(clf.estimators_, clf._linear_stacks):
        assert isinstance(stacked, LinearStack)
        assert stacked.linear == list(range(len(member)))
        assert all(part[1] is _model_of(est) for part, est in zip(stacked.parts, member))

    def refuse(*args, **kwargs):
        raise AssertionError("a prediction stacked the binaries again")

    for module, name in [
        (convexagg.linear_outputs, "linear_stack"),
        (convexagg.linear_outputs, "_stacked_linear"),
        (convexagg.binary, "linear_stack"),
        (convexagg.code_matrix, "linear_stack"),
    ]:
        monkeypatch.setattr(module, name, refuse)
    got = _predictions(clf, X)
    Q = [np.column_stack([est.predict_proba(X)[:, 1] for est in m]) for m in clf.estimators_]
    np.testing.assert_allclose(got["predict_binary_proba"], np.mean(Q, axis=0), rtol=1e-12)
    proba = np.mean([clf.decoder_.predict_proba(q) for q in Q], axis=0)
    np.testing.assert_allclose(got["predict_proba"], proba, rtol=1e-9, atol=1e-15)
    np.testing.assert_array_equal(clf.predict(X), clf.classes_[np.argmax(proba, axis=1)])


def _module_state():
    modules = (convexagg.linear_outputs, convexagg.binary, convexagg.code_matrix)
    return {(m.__name__, k): id(v) for m in modules for k, v in vars(m).items()}


def test_models_predicting_in_turn_predict_as_each_alone(iris):
    """Two models, fresh from a pickle, predicting in turn give what each gives alone,
    bit for bit, and no module's state changes meanwhile."""
    X, y = iris
    rows = np.random.RandomState(1).rand(len(y)) < 0.7
    first, second = _fit(X, y, seed=0), _fit(X[rows], y[rows], seed=1)
    alone = [_predictions(clf, X) for clf in (first, second)]
    first, second = (pickle.loads(pickle.dumps(clf)) for clf in (first, second))
    state = _module_state()
    for _ in range(2):
        for clf, want in zip((first, second), alone):
            _assert_same(_predictions(clf, X), want)
    assert _module_state() == state


@pytest.mark.parametrize("how", ["skops", "pickle", "deepcopy"])
def test_a_loaded_model_stacks_its_own_binaries(iris, tmp_path, how):
    """Saved (packed binaries) and loaded, pickled or deep-copied: the model predicts as
    before, bit for bit, from stacks of its own (new) binaries equal to the original's;
    the stacks are not in the file or the pickle."""
    X, y = iris
    clf = _fit(X, y)
    if how == "skops":
        path = tmp_path / "model.skops"
        cio.save(clf, path)
        with zipfile.ZipFile(path) as archive:
            assert b"_linear_stacks" not in archive.read("schema.json")
        loaded = cio.load(path)
    elif how == "pickle":
        data = pickle.dumps(clf)
        assert b"_linear_stacks" not in data
        loaded = pickle.loads(data)
    else:
        loaded = copy.deepcopy(clf)
    _assert_same(_predictions(loaded, X), _predictions(clf, X))
    for member, stacked, original in zip(
        loaded.estimators_, loaded._linear_stacks, clf._linear_stacks
    ):
        assert all(part[1] is _model_of(est) for part, est in zip(stacked.parts, member))
        assert stacked.linear == original.linear
        for new, old in zip(stacked.stack, original.stack):
            np.testing.assert_array_equal(new, old)


def test_an_unfitted_model_pickles_without_stacks():
    """Unpickling an unfitted estimator derives nothing: it has no binaries."""
    clf = pickle.loads(pickle.dumps(CodeMatrixClassifier()))
    assert not hasattr(clf, "_linear_stacks")
