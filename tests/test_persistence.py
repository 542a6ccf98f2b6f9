"""Determinism (the same random_state gives the same code and model) and persistence
(pickle and skops round trips give the same outputs; untrusted types refused; saving
atomic, with normal permissions, and refusing what could not be loaded back)."""

import os
import pickle
import warnings

import numpy as np
import pytest
import skops.io as sio
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.datasets import load_iris, make_classification
from sklearn.ensemble import ExtraTreesClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

import convexagg.io as cio
from convexagg import CodeMatrixClassifier, ConvexAggregationClassifier
from convexagg.codes import dense_random, sparse_random
from helpers import DECODERS


@pytest.fixture(scope="module")
def iris():
    return load_iris(return_X_y=True)


@pytest.fixture(scope="module")
def eight_classes():
    return make_classification(
        96, 6, n_informative=5, n_redundant=0, n_classes=8, n_clusters_per_class=1, random_state=0
    )


def _outputs(clf, X):
    """Every output the model has (hard decoders have no ``predict_proba``)."""
    methods = ("predict_proba", "decision_function", "predict")
    return [getattr(clf, m)(X) for m in methods if hasattr(clf, m)]


def _assert_same_outputs(a, b, X):
    for u, v in zip(_outputs(a, X), _outputs(b, X)):
        np.testing.assert_array_equal(u, v)


# --------------------------------------------------------------------------- determinism


@pytest.mark.parametrize("build", [sparse_random, dense_random], ids=lambda f: f.__name__)
def test_same_random_state_same_code(build):
    a = build(9, n_candidates=20, random_state=3)
    np.testing.assert_array_equal(a, build(9, n_candidates=20, random_state=3))
    np.testing.assert_array_equal(
        a, build(9, n_candidates=20, random_state=np.random.RandomState(3))
    )
    assert not np.array_equal(a, build(9, n_candidates=20, random_state=4))


def test_same_random_state_same_model(eight_classes):
    X, y = eight_classes
    fits = [
        ConvexAggregationClassifier(
            LogisticRegression(max_iter=500), code="ecoc", random_state=7
        ).fit(X, y)
        for _ in range(2)
    ]
    a, b = fits
    assert a.code_matrix_.shape == (8, 45)  # sparse random for K >= 8
    np.testing.assert_array_equal(a.code_matrix_, b.code_matrix_)
    np.testing.assert_array_equal(a.weights_, b.weights_)
    _assert_same_outputs(a, b, X)


def test_random_state_seeds_randomised_binary_learners(iris):
    """A learner whose own random_state is None gets one seed per column; one the
    user seeded keeps its seed; n_jobs does not change the result."""
    X, y = iris
    kwargs = {"code": "ovr", "cv": 3, "ensemble": False, "random_state": 0}
    forest = ExtraTreesClassifier(n_estimators=3, max_features=1)
    a = ConvexAggregationClassifier(forest, **kwargs).fit(X, y)
    b = ConvexAggregationClassifier(forest, n_jobs=2, **kwargs).fit(X, y)
    np.testing.assert_array_equal(a.weights_, b.weights_)
    _assert_same_outputs(a, b, X)
    seeds = [est.random_state for est in a.estimators_[0]]
    assert all(isinstance(s, int) for s in seeds) and len(set(seeds)) == 3
    assert forest.random_state is None  # the parameter itself is never modified
    seeded = ExtraTreesClassifier(n_estimators=3, random_state=5)
    own = ConvexAggregationClassifier(seeded, **kwargs).fit(X, y)
    assert [est.random_state for est in own.estimators_[0]] == [5, 5, 5]


def test_a_logistic_regression_that_draws_no_numbers_stays_unseeded(iris):
    """Its fit would only build a generator from the seed and not use it: the same fit,
    unseeded; the solvers that shuffle (saga), alone or in a pipeline, get their seeds."""
    X, y = iris
    kwargs = {"code": "ovr", "cv": "in_sample", "random_state": 0}
    lbfgs = ConvexAggregationClassifier(LogisticRegression(), **kwargs).fit(X, y)
    assert [est.random_state for est in lbfgs.estimators_[0]] == [None] * 3
    seeded = ConvexAggregationClassifier(LogisticRegression(random_state=3), **kwargs).fit(X, y)
    np.testing.assert_array_equal(lbfgs.predict_proba(X), seeded.predict_proba(X))
    saga = make_pipeline(StandardScaler(), LogisticRegression(solver="saga", max_iter=50))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # saga's ConvergenceWarning
        fitted = ConvexAggregationClassifier(saga, **kwargs).fit(X, y)
    seeds = [est[-1].random_state for est in fitted.estimators_[0]]
    assert all(isinstance(s, int) for s in seeds) and len(set(seeds)) == 3


# --------------------------------------------------------------------------- pickle


@pytest.fixture(scope="module")
def models(iris):
    X, y = iris
    models = [
        ConvexAggregationClassifier(code="ovo").fit(X, y),
        ConvexAggregationClassifier(code="ecoc", cv=3, random_state=0).fit(X, y),
    ]
    for Decoder in DECODERS:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            models.append(CodeMatrixClassifier(code="ovo", decoder=Decoder()).fit(X, y))
    return models


def test_pickle_round_trip(iris, models):
    X, y = iris
    for model in models:
        _assert_same_outputs(pickle.loads(pickle.dumps(model)), model, X)


# --------------------------------------------------------------------------- skops


def test_skops_round_trip(iris, models, tmp_path):
    X, y = iris
    for i, model in enumerate(models):
        path = tmp_path / f"model{i}.skops"
        cio.save(model, path)
        loaded = cio.load(path)
        assert type(loaded) is type(model)
        _assert_same_outputs(loaded, model, X)
        np.testing.assert_array_equal(loaded.decoder_.code_, model.decoder_.code_)


class UserEstimator(ClassifierMixin, BaseEstimator):
    """A user-defined binary learner: its class is not on any trusted list."""

    def fit(self, X, y):
        self.inner_ = LogisticRegression().fit(X, y)
        self.classes_ = self.inner_.classes_
        return self

    def predict_proba(self, X):
        return self.inner_.predict_proba(X)


def test_untrusted_type_is_refused(iris, tmp_path):
    X, y = iris
    model = ConvexAggregationClassifier(UserEstimator(), code="ovr").fit(X, y)
    path = tmp_path / "custom.skops"
    cio.save(model, path)
    name = f"{UserEstimator.__module__}.UserEstimator"
    refused = "contains types convexagg does not trust"
    with pytest.raises(cio.UntrustedTypeError, match=refused) as e:
        cio.load(path)
    assert e.value.types == [name] and name in str(e.value)
    # the user can vouch for it explicitly
    loaded = cio.load(path, trusted=[name])
    np.testing.assert_array_equal(loaded.predict_proba(X), model.predict_proba(X))
    with pytest.raises(TypeError, match="trusted must be a list of type names"):
        cio.load(path, trusted=True)


def test_a_function_smuggled_into_the_file_is_refused(tmp_path):
    path = tmp_path / "evil.skops"
    cio.save({"model": os.system}, path)
    with pytest.raises(cio.UntrustedTypeError, match="system"):
        cio.load(path)


def test_convexagg_trusts_its_own_types_only():
    names = cio.trusted_types()
    assert "convexagg.convex_aggregation.ConvexAggregationClassifier" in names
    # the name convexagg.estimator gives it, which files may record
    assert "convexagg.estimator.ConvexAggregationClassifier" in names
    assert "convexagg.decoders.convex.ConvexDecoder" in names
    assert "convexagg.binary.ConstantBinaryPredictor" in names
    assert "sklearn.linear_model._logistic.LogisticRegression" in names
    assert "numpy.dtype" in names
    assert all(n.split(".")[0] in {"convexagg", "sklearn", "numpy"} for n in names)
    for Decoder in DECODERS:
        assert f"{Decoder.__module__}.{Decoder.__qualname__}" in names


def test_load_errors(tmp_path):
    with pytest.raises(FileNotFoundError):
        cio.load(tmp_path / "missing.skops")
    junk = tmp_path / "junk.skops"
    junk.write_bytes(b"certainly not a zip file")
    with pytest.raises(ValueError, match="is not a skops model file"):
        cio.load(junk)


def test_save_is_atomic(iris, tmp_path, monkeypatch):
    X, y = iris
    model = ConvexAggregationClassifier(code="ovr").fit(X, y)
    path = tmp_path / "model.skops"
    cio.save(model, path)
    before = path.read_bytes()

    def fail(src, dst):
        raise OSError("disk full (simulated)")

    monkeypatch.setattr(os, "replace", fail)
    with pytest.raises(OSError, match="simulated"):
        cio.save(ConvexAggregationClassifier(code="ovo").fit(X, y), path)
    with pytest.raises(OSError, match="simulated"):
        cio.save(model, tmp_path / "new.skops")
    assert path.read_bytes() == before  # the previous complete file survives
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model.skops"]  # no temp files

    monkeypatch.undo()

    def unserialisable(obj, **kwargs):
        raise TypeError("cannot serialise (simulated)")

    monkeypatch.setattr(sio, "dumps", unserialisable)
    with pytest.raises(TypeError, match="simulated"):
        cio.save(model, tmp_path / "other.skops")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model.skops"]


def test_saved_file_gets_normal_permissions(iris, tmp_path):
    X, y = iris
    path = tmp_path / "model.skops"
    cio.save(ConvexAggregationClassifier(code="ovr").fit(X, y), path)
    umask = os.umask(0)
    os.umask(umask)
    assert path.stat().st_mode & 0o777 == 0o666 & ~umask


def test_save_refuses_what_cannot_be_loaded_back(tmp_path):
    """A lambda (or a function local to another) is stored by name and can never be
    loaded again: refused when saving, nothing written."""
    from convexagg import OutputDecoderClassifier
    from convexagg.codes import make_code

    rng = np.random.default_rng(0)
    Q, y = rng.uniform(size=(60, 3)), np.repeat([0, 1, 2], 20)
    model = OutputDecoderClassifier(code=lambda k, m: make_code("ovr", k)).fit(Q, y)
    path = tmp_path / "lambda.skops"
    with pytest.raises(ValueError, match="could not be loaded back.*a lambda"):
        cio.save(model, path)
    assert list(tmp_path.iterdir()) == []
    model.set_params(code="ovr")  # a name instead: saved and loaded
    cio.save(model, path)
    np.testing.assert_array_equal(cio.load(path).predict_proba(Q), model.predict_proba(Q))


def test_a_file_naming_the_estimator_module_loads(iris, tmp_path):
    """A file that records the classifier as ``convexagg.estimator.ConvexAggregationClassifier``
    (the name that module gives it) loads, as the same model."""
    import zipfile

    X, y = iris
    clf = ConvexAggregationClassifier(code="ovr", cv=3).fit(X, y)
    path, renamed = tmp_path / "model.skops", tmp_path / "renamed.skops"
    cio.save(clf, path)
    with zipfile.ZipFile(path) as src, zipfile.ZipFile(renamed, "w") as dst:
        for item in src.infolist():
            data = src.read(item)
            if item.filename == "schema.json":
                text = data.decode()
                assert '"convexagg.convex_aggregation"' in text
                data = text.replace('"convexagg.convex_aggregation"', '"convexagg.estimator"')
                data = data.encode()
            dst.writestr(item, data)
    loaded = cio.load(renamed)
    assert type(loaded) is ConvexAggregationClassifier
    np.testing.assert_array_equal(loaded.predict_proba(X), clf.predict_proba(X))
