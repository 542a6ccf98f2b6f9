"""``ConvexAggregationClassifier`` on array-API ``X`` (``array_api_dispatch=True``).

The binaries (``LogisticRegression``, which declares scikit-learn's array API
support) are trained on ``X``'s device and the decoder fitted there; the
reference is the same estimator fitted on the NumPy copy of the data, an
independent path (NumPy targets and fold indexing, the stacked-linear
prediction, the class-blocked NumPy objective). scikit-learn's
``LogisticRegression`` runs the same L-BFGS on either namespace, so on a CPU
the two fits agree to rounding: the probabilities to 1e-9 (measured: 5e-16).
Namespaces and fixtures: ``tests/array_api_namespaces.py``.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import sklearn
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import KFold
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from array_api_namespaces import NAMESPACES, TORCH, host, of_namespace, to_xp
from convexagg import (
    CodeMatrixClassifier,
    ConvexAggregationClassifier,
    ConvexAggregationClassifierCV,
    ConvexDecoder,
    HammingDecoder,
)
from convexagg.binary import ConstantBinaryPredictor

pytestmark = pytest.mark.usefixtures("one_torch_thread")

RTOL, ATOL = 1e-9, 1e-12


def data(n=120, K=4, seed=0):
    """Gaussian classes in 5 features, labels ``10 * (k + 1)`` (not indices)."""
    rng = np.random.default_rng(seed)
    y = np.repeat(np.arange(K), n // K)
    X = rng.normal(size=(y.size, 5)) + 1.5 * rng.normal(size=(K, 5))[y]
    return X, 10 * (y + 1)


def weights(n):
    return np.arange(n) % 3 + 1.0


def host_model(*args, **params):
    """The NumPy fit an array-API fit must equal: zero_entry_penalty="auto" (the default)
    is None on array-API inputs, where the zero entries cannot apply."""
    return ConvexAggregationClassifier(*args, zero_entry_penalty=None, **params)


def assert_predictions_match(name, clf, ref, X):
    """Every prediction of ``clf`` on ``X``'s device, in its namespace, equal to ``ref``'s."""
    Xx = to_xp(name, X)
    with sklearn.config_context(array_api_dispatch=False):
        expected = {
            "predict_proba": ref.predict_proba(X),
            "predict_log_proba": ref.predict_log_proba(X),
            "decision_function": ref.decision_function(X),
            "predict_binary_proba": ref.predict_binary_proba(X),
            "predict": ref.predict(X),
        }
    for method, value in expected.items():
        got = getattr(clf, method)(Xx)
        assert of_namespace(name, got), method
        np.testing.assert_allclose(host(got), value, rtol=RTOL, atol=ATOL, err_msg=method)


@pytest.mark.parametrize("name", NAMESPACES)
@pytest.mark.parametrize(
    "cv, ensemble",
    [("in_sample", "auto"), (3, "auto"), (KFold(3, shuffle=True, random_state=1), False)],
    ids=["in-sample", "ensemble", "refit"],
)
def test_device_fit_matches_numpy(name, cv, ensemble, dispatch):
    X, y = data()
    sw = weights(y.size)
    with sklearn.config_context(array_api_dispatch=False):
        ref = host_model(cv=cv, ensemble=ensemble, random_state=0)
        ref.fit(X, y, sample_weight=sw)
    clf = ConvexAggregationClassifier(cv=cv, ensemble=ensemble, random_state=0).fit(
        to_xp(name, X), to_xp(name, y), sample_weight=to_xp(name, sw)
    )
    # fitted attributes on the host, as ConvexDecoder and OutputDecoderClassifier keep them
    assert isinstance(clf.classes_, np.ndarray) and isinstance(clf.weights_, np.ndarray)
    np.testing.assert_array_equal(clf.classes_, ref.classes_)
    assert clf.zero_entry_penalty_ is None
    np.testing.assert_allclose(clf.weights_, ref.weights_, rtol=1e-8, atol=1e-10)
    # the binaries (the default learner: a scaler and a logistic regression) were fitted
    # on the device: their coefficients and scales live there
    assert all(of_namespace(name, est[-1].coef_) for est in clf.estimators_[0])
    assert all(of_namespace(name, est[0].scale_) for est in clf.estimators_[0])
    assert clf.ensemble_ == ref.ensemble_
    if ref.oof_proba_ is not None:
        assert isinstance(clf.oof_proba_, np.ndarray)
        np.testing.assert_allclose(clf.oof_proba_, ref.oof_proba_, rtol=RTOL, atol=ATOL)
    assert_predictions_match(name, clf, ref, X)


@pytest.mark.parametrize("name", NAMESPACES)
def test_weights_on_the_host_and_routed_weights(name, dispatch):
    """NumPy ``sample_weight`` is moved to ``X``'s device; under metadata routing the
    weights reach the learners that request them, on the device."""
    X, y = data(n=80, K=4)
    sw = weights(y.size)
    with sklearn.config_context(array_api_dispatch=False):
        ref = host_model(cv=2, random_state=0).fit(X, y, sample_weight=sw)
    clf = ConvexAggregationClassifier(cv=2, random_state=0).fit(to_xp(name, X), y, sample_weight=sw)
    np.testing.assert_allclose(
        host(clf.predict_proba(to_xp(name, X))), ref.predict_proba(X), rtol=RTOL, atol=ATOL
    )
    with sklearn.config_context(enable_metadata_routing=True):
        learner = LogisticRegression().set_fit_request(sample_weight=True)
        with sklearn.config_context(array_api_dispatch=False):
            routed = host_model(learner, cv=2, random_state=0).fit(X, y, sample_weight=sw)
        clf = ConvexAggregationClassifier(learner, cv=2, random_state=0).fit(
            to_xp(name, X), y, sample_weight=to_xp(name, sw)
        )
    np.testing.assert_allclose(
        host(clf.predict_proba(to_xp(name, X))), routed.predict_proba(X), rtol=RTOL, atol=ATOL
    )
    # the routed fit is the unrouted one's (the learners get the weights either way)
    with sklearn.config_context(array_api_dispatch=False):
        unrouted = host_model(LogisticRegression(), cv=2, random_state=0)
        unrouted.fit(X, y, sample_weight=sw)
    np.testing.assert_allclose(routed.predict_proba(X), unrouted.predict_proba(X), rtol=1e-12)


@pytest.mark.parametrize("name", NAMESPACES)
def test_string_labels_and_two_classes(name, dispatch):
    """Labels that cannot live on a device stay NumPy (``classes_`` and ``predict``), as
    scikit-learn's array-API classifiers do; two classes give one decision column."""
    X, y = data(n=90, K=3)
    names = np.array(["ant", "bee", "cat"])[y // 10 - 1]
    with sklearn.config_context(array_api_dispatch=False):
        ref = host_model(cv="in_sample").fit(X, names)
    clf = ConvexAggregationClassifier(cv="in_sample").fit(to_xp(name, X), names)
    pred = clf.predict(to_xp(name, X))
    assert isinstance(pred, np.ndarray)
    np.testing.assert_array_equal(pred, ref.predict(X))
    two = y < 30
    with sklearn.config_context(array_api_dispatch=False):
        ref = host_model(cv="in_sample").fit(X[two], y[two])
    clf = ConvexAggregationClassifier(cv="in_sample").fit(to_xp(name, X[two]), y[two])
    scores = clf.decision_function(to_xp(name, X[two]))
    assert of_namespace(name, scores) and tuple(scores.shape) == (int(two.sum()),)
    np.testing.assert_allclose(host(scores), ref.decision_function(X[two]), rtol=RTOL, atol=1e-9)


@pytest.mark.parametrize("name", NAMESPACES)
def test_given_binaries_and_refitted_decoders(name, dispatch):
    """``cv="prefit"`` and ``FrozenEstimator`` binaries fitted on the device are decoded
    there; ``training_outputs`` and ``fit_decoder`` give the NumPy fit's results."""
    X, y = data(n=90, K=3)
    Xx = to_xp(name, X)
    base = ConvexAggregationClassifier(cv="in_sample").fit(Xx, y)
    binaries = list(base.estimators_[0])
    for clf in (
        ConvexAggregationClassifier(binaries, cv="prefit").fit(Xx, y),
        ConvexAggregationClassifier([FrozenEstimator(b) for b in binaries]).fit(Xx, y),
    ):
        P = clf.predict_proba(Xx)
        assert of_namespace(name, P)
        np.testing.assert_array_equal(host(P), host(base.predict_proba(Xx)))
    with sklearn.config_context(array_api_dispatch=False):
        ref = host_model(cv=3, random_state=0).fit(X, y)
        Q_ref, y_ref, _ = ref.training_outputs(X, y)
        ref.set_params(alpha=1e-2).fit_decoder(X, y)
    clf = ConvexAggregationClassifier(cv=3, random_state=0).fit(Xx, y)
    Q, y_enc, sw = clf.training_outputs(Xx, y)
    assert of_namespace(name, Q) and sw is None
    np.testing.assert_allclose(host(Q), Q_ref, rtol=RTOL, atol=ATOL)
    np.testing.assert_array_equal(y_enc, y_ref)
    clf.set_params(alpha=1e-2).fit_decoder(Xx, y)
    np.testing.assert_allclose(clf.weights_, ref.weights_, rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("name", NAMESPACES)
def test_one_sided_fold_binaries_predict_on_the_device(name, dispatch):
    """Unshuffled folds of sorted labels leave a class out of each fold's training rows:
    the one-vs-one problems of that class have one side, and their constant stand-ins
    predict on the device too."""
    X, y = data(n=90, K=3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # "have training samples of only one side"
        with sklearn.config_context(array_api_dispatch=False):
            ref = host_model(code="ovo", cv=KFold(3)).fit(X, y)
        clf = ConvexAggregationClassifier(code="ovo", cv=KFold(3)).fit(to_xp(name, X), y)
    constants = [isinstance(b, ConstantBinaryPredictor) for b in clf.estimators_[0]]
    assert constants == [isinstance(b, ConstantBinaryPredictor) for b in ref.estimators_[0]]
    assert sum(constants) == 2
    assert_predictions_match(name, clf, ref, X)


@pytest.mark.parametrize("name", NAMESPACES)
def test_what_cannot_apply_raises(name, dispatch):
    X, y = data(n=60, K=3)
    Xx = to_xp(name, X)
    unsupported = [
        ("estimator=LogisticRegression\\(solver='liblinear'\\) does not declare it",
         ConvexAggregationClassifier(LogisticRegression(solver="liblinear"))),
        ("estimator=Pipeline", ConvexAggregationClassifier(
            make_pipeline(StandardScaler(), LogisticRegression(solver="liblinear")))),
        ("n_jobs=2 cannot apply to array-API X", ConvexAggregationClassifier(n_jobs=2)),
        ("binary_param_grid cannot apply to array-API X",
         ConvexAggregationClassifier(binary_param_grid={"C": [0.1, 1.0]})),
        ("zero_entry_penalty cannot apply to array-API X",
         ConvexAggregationClassifier(zero_entry_penalty=0.1)),
        ("entry_weight_shrinkage as a list cannot apply to array-API X",
         ConvexAggregationClassifier(entry_weight_shrinkage=[0.01, 0.001])),
        ("decoded on its device by ConvexDecoder only; decoder=HammingDecoder",
         CodeMatrixClassifier(decoder=HammingDecoder())),
        ("formulation='likelihood' only",
         CodeMatrixClassifier(decoder=ConvexDecoder(formulation="large_margin"))),
        ("ConvexAggregationClassifierCV does not take array-API X",
         ConvexAggregationClassifierCV()),
    ]  # fmt: skip
    for message, clf in unsupported:
        with pytest.raises(ValueError, match=message):
            clf.fit(Xx, y)
    per_column = [LogisticRegression(), LogisticRegression(solver="liblinear")] * 2
    with pytest.raises(ValueError, match=r"estimator\[1\]=LogisticRegression\(solver='liblinear'"):
        ConvexAggregationClassifier(per_column).fit(Xx, y)
    fitted = CodeMatrixClassifier(cv="in_sample").fit(Xx, y)  # ConvexDecoder()
    with pytest.raises(ValueError, match="ConvexDecoder only; decoder=HammingDecoder"):
        fitted.set_params(decoder=HammingDecoder()).fit_decoder(Xx, y)
    # binaries fitted on NumPy arrays do not predict device arrays: scikit-learn says so
    with sklearn.config_context(array_api_dispatch=False):
        clf = ConvexAggregationClassifier(LogisticRegression(), cv="in_sample").fit(X, y)
    with pytest.raises(ValueError, match="same namespace and the same device"):
        clf.predict_proba(Xx)
    da = pytest.importorskip("dask.array")
    with pytest.raises(ValueError, match="cannot be Dask arrays when X is an array-API array"):
        ConvexAggregationClassifier().fit(Xx, da.from_array(y, chunks=30))


@pytest.mark.skipif(TORCH is None, reason="PyTorch is not installed")
def test_without_dispatch_tensors_take_the_numpy_path():
    """Without ``array_api_dispatch`` nothing changes: CPU tensors convert to NumPy."""
    X, y = data(n=60, K=3)
    # a seed: the zero entries' strength is chosen on shuffled folds
    ref = ConvexAggregationClassifier(cv="in_sample", random_state=0).fit(X, y)
    clf = ConvexAggregationClassifier(cv="in_sample", random_state=0)
    clf.fit(TORCH.asarray(X), TORCH.asarray(y))
    assert clf.zero_entry_penalty_ is not None  # the zero entries apply on NumPy
    P = clf.predict_proba(TORCH.asarray(X))
    assert isinstance(P, np.ndarray)
    np.testing.assert_array_equal(P, ref.predict_proba(X))


@pytest.mark.parametrize("name", NAMESPACES)
def test_saving_a_device_fit_is_refused_by_name(name, dispatch, tmp_path):
    """skops stores NumPy arrays only: ``io.save`` names the device array and writes
    nothing (it used to fail inside skops with the array library's own error)."""
    from convexagg.io import save

    X, y = data(n=60, K=3)
    clf = ConvexAggregationClassifier(cv="in_sample").fit(to_xp(name, X), to_xp(name, y))
    path = tmp_path / "model.skops"
    with pytest.raises(ValueError, match=r"model\.estimators_\[0\]\[0\]\..* fitted on array-API"):
        save(clf, path)
    assert not path.exists()
