"""ONNX export (convexagg.export): onnxruntime's probabilities and labels against
``predict_proba`` and ``predict``, for each kind of binary learner and model, and the
clear errors of what does not export."""

import warnings

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.datasets import load_digits
from sklearn.dummy import DummyClassifier
from sklearn.ensemble import HistGradientBoostingClassifier, RandomForestClassifier
from sklearn.exceptions import ConvergenceWarning, NotFittedError
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC

pytest.importorskip("onnx")
skl2onnx = pytest.importorskip("skl2onnx")
ort = pytest.importorskip("onnxruntime")

from convexagg import (  # noqa: E402  (after the importorskips)
    BradleyTerryDecoder,
    CodeMatrixClassifier,
    ConvexAggregationClassifier,
    ConvexDecoder,
    HammingDecoder,
    LossBasedDecoder,
)
from convexagg.binary import ConstantBinaryPredictor  # noqa: E402
from convexagg.export import NotExportableError, to_onnx  # noqa: E402

# a float64 graph of float64 binaries computes what predict_proba computes, to rounding;
# skl2onnx's trees and SVMs compute in float32
FLOAT64_TOL, FLOAT32_TOL = 1e-9, 1e-5


@pytest.fixture(autouse=True)
def _quiet_learners():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # lbfgs on unscaled digits
        # skl2onnx's converters: SVC's reads SVC.probA_ (deprecated in scikit-learn 1.9), the
        # trees' give protobuf a bool where it wants an int (pyproject.toml bounds protobuf)
        warnings.filterwarnings("ignore", "Attribute `prob[AB]_` was deprecated", FutureWarning)
        warnings.filterwarnings("ignore", ".*Expected an int, got a boolean", DeprecationWarning)
        yield


@pytest.fixture(scope="module")
def digits():
    """300 training rows and 200 others of digits; the 4-class part for slower learners."""
    X, y = load_digits(return_X_y=True)
    rng = np.random.RandomState(0)
    rows = rng.permutation(len(y))
    train, test = rows[:300], rows[300:500]
    four = np.flatnonzero(y < 4)
    return X[train], y[train], X[test], X[four[:160]], y[four[:160]], X[four[160:260]]


def run(onx, X):
    """``(labels, probabilities)`` of onnxruntime on one thread; X cast to the input type."""
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    session = ort.InferenceSession(
        onx.SerializeToString(), options, providers=["CPUExecutionProvider"]
    )
    (first,) = session.get_inputs()
    X = np.asarray(X, dtype=np.float64 if first.type == "tensor(double)" else np.float32)
    labels, proba = session.run(None, {first.name: X})
    return labels, proba


def assert_same_predictions(model, onx, X, tol):
    labels, proba = run(onx, X)
    assert proba.shape == (X.shape[0], model.classes_.size)
    assert_allclose(proba, model.predict_proba(X), rtol=0, atol=tol)
    assert_array_equal(labels, model.predict(X))


def input_type(onx):
    return onx.graph.input[0].type.tensor_type.elem_type


@pytest.fixture(scope="module")
def default_model(digits):
    X, y = digits[:2]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return ConvexAggregationClassifier(random_state=0).fit(X, y)


def test_default_model_float64_graph(default_model, digits):
    from onnx import TensorProto

    model, X_test = default_model, digits[2]
    # the parts of the default model the graph must carry: an ensemble of fold members,
    # entry weights, zero-entry weights and intercepts
    assert model.ensemble_ and len(model.estimators_) == 5
    assert model.zero_entry_penalty_ is not None
    assert np.any(model.zero_entry_weights_ != 0) and np.any(model.intercept_ != 0)
    assert not np.allclose(model.entry_weights_, model.entry_weights_.max(axis=0))
    onx = to_onnx(model, options={"zipmap": False})  # X: n_features_in_ numbers
    assert input_type(onx) == TensorProto.DOUBLE
    assert_same_predictions(model, onx, X_test, FLOAT64_TOL)


def test_default_model_float32_graph(default_model, digits):
    from onnx import TensorProto

    model, X_test = default_model, digits[2].astype(np.float32)
    onx = to_onnx(model, X_test, dtype="float32", options={"zipmap": False})
    assert input_type(onx) == TensorProto.FLOAT
    labels, proba = run(onx, X_test)
    assert proba.dtype == np.float32
    assert_allclose(proba, model.predict_proba(X_test), rtol=0, atol=FLOAT32_TOL)
    assert_array_equal(labels, model.predict(X_test))


def test_skl2onnx_to_onnx_takes_the_model_with_zipmap(default_model, digits):
    """Importing convexagg.export registers the converter: skl2onnx's own to_onnx, its
    default ZipMap output (one {class: probability} per row, float32 as ZipMap holds)."""
    X_test = digits[2][:20]
    onx = skl2onnx.to_onnx(default_model, X_test[:1])
    labels, maps = run(onx, X_test)
    proba = np.array([[row[c] for c in default_model.classes_] for row in maps])
    assert_allclose(proba, default_model.predict_proba(X_test), rtol=0, atol=FLOAT32_TOL)
    assert_array_equal(labels, default_model.predict(X_test))


@pytest.mark.parametrize(
    "params",
    [
        {"estimator": make_pipeline(StandardScaler(), LogisticRegression()), "cv": 3},
        {"cv": "in_sample"},
        {"ensemble": False, "cv": 2},
        {"code": "ovo", "loss": "exponential", "cv": "in_sample"},
    ],
    ids=["scaled-logistic", "in-sample", "refitted-on-all-rows", "exponential-loss"],
)
def test_linear_variants_float64(params, digits):
    # ten classes for the scaled logistic regressions, four for the others
    X, y, X_test = digits[:3] if "estimator" in params else digits[3:]
    model = ConvexAggregationClassifier(random_state=0, **params).fit(X, y)
    assert_same_predictions(model, to_onnx(model, X, options={"zipmap": False}), X_test, 1e-9)


@pytest.mark.parametrize(
    "learner, loss",
    [
        (HistGradientBoostingClassifier(max_iter=10, random_state=0), "cross_entropy"),
        (RandomForestClassifier(n_estimators=5, random_state=0), "cross_entropy"),
        (SVC(), "hinge"),
        (SVC(), "logistic"),
    ],
    ids=["hist-gradient-boosting", "random-forest", "svc-hinge", "svc-logistic"],
)
def test_other_learners_through_skl2onnx_converters(learner, loss, digits):
    X, y, X_test = digits[3:]
    model = ConvexAggregationClassifier(learner, code="ovo", loss=loss, cv=3, random_state=0)
    model.fit(X, y)
    assert model.binary_output_ == ("margin" if isinstance(learner, SVC) else "proba")
    onx = to_onnx(model, X, options={"zipmap": False})
    assert_same_predictions(model, onx, X_test, FLOAT32_TOL)


def test_binaries_through_skl2onnx_converters_agree_with_the_stacked_product(digits):
    """stack_linear=False: every logistic regression through skl2onnx's converter (its
    raw scores, the log-odds), an independent computation of the same binaries."""
    X, y, X_test = digits[3:]
    model = ConvexAggregationClassifier(code="ovo", cv=2, random_state=0).fit(X, y)
    stacked = to_onnx(model, X, options={"zipmap": False})
    separate = to_onnx(model, X, options={"zipmap": False}, stack_linear=False)
    products = [[n for n in onx.graph.node if n.op_type == "MatMul"] for onx in (stacked, separate)]
    assert len(products[0]) == 2 + 2  # one per member, and the aggregation's two
    assert len(products[1]) == 2 * 6 + 2  # one per binary
    assert_same_predictions(model, separate, X_test, FLOAT64_TOL)
    assert_allclose(run(separate, X_test)[1], run(stacked, X_test)[1], rtol=0, atol=1e-12)


def test_column_transformer_pipeline_on_a_data_frame():
    """A pipeline whose ColumnTransformer reads a pandas frame (numbers and strings) before
    the classifier: one graph input per column, string labels."""
    pd = pytest.importorskip("pandas")
    from sklearn.compose import ColumnTransformer
    from sklearn.preprocessing import OneHotEncoder

    rng = np.random.RandomState(0)
    n = 240
    frame = pd.DataFrame(
        {"a": rng.randn(n), "b": rng.randn(n), "c": rng.choice(["x", "y", "z"], n)}
    )
    y = np.where(frame.a + (frame.c == "x") > 0.5, "high", np.where(frame.b > 0, "mid", "low"))
    columns = ColumnTransformer(
        [("numbers", StandardScaler(), ["a", "b"]), ("words", OneHotEncoder(), ["c"])]
    )
    model = make_pipeline(columns, ConvexAggregationClassifier(random_state=0)).fit(frame, y)
    onx = to_onnx(model, frame, options={"zipmap": False})
    session = ort.InferenceSession(onx.SerializeToString(), providers=["CPUExecutionProvider"])
    assert [i.name for i in session.get_inputs()] == ["a", "b", "c"]
    labels, proba = session.run(None, {c: frame[[c]].to_numpy() for c in frame.columns})
    assert_allclose(proba, model.predict_proba(frame), rtol=0, atol=FLOAT64_TOL)
    assert_array_equal(labels, model.predict(frame))


@pytest.mark.parametrize(
    "decoder, code",
    [
        (ConvexDecoder(alpha=1e-3, fit_intercept=True), "ecoc"),
        (LossBasedDecoder(), "ovo"),
        # classes with different numbers of zero entries: loss_at_zero differs by class
        (
            LossBasedDecoder(loss="cross_entropy"),
            np.array([[1, 1, 0, -1], [-1, 0, 1, -1], [0, -1, -1, -1], [0, 0, -1, 1]]),
        ),
    ],
    ids=["convex-ecoc", "loss-based", "loss-based-cross-entropy"],
)
def test_code_matrix_classifier(decoder, code, digits):
    X, y, X_test = digits[3:]
    model = CodeMatrixClassifier(decoder=decoder, code=code, cv="in_sample", random_state=0)
    model.fit(X, y)
    assert_same_predictions(model, to_onnx(model, X, options={"zipmap": False}), X_test, 1e-9)


def test_one_sided_fold_binaries_are_constants():
    """A class too rare for every fold leaves some fold binaries one-sided: constants,
    and their members decode probabilities while the others decode log-odds."""
    X, y = load_digits(n_class=4, return_X_y=True)
    keep = np.flatnonzero(y != 3)[:150]
    X, y = np.vstack([X[keep], X[y == 3][:1]]), np.append(y[keep], 3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # the class of 1 member and 2 folds
        model = ConvexAggregationClassifier(code="ovo", cv=2, random_state=0).fit(X, y)
    constants = [any(isinstance(b, ConstantBinaryPredictor) for b in m) for m in model.estimators_]
    assert any(constants) and not all(constants)
    assert_same_predictions(model, to_onnx(model, X, options={"zipmap": False}), X, 1e-9)


@pytest.mark.parametrize("decoder", [HammingDecoder(), BradleyTerryDecoder()])
def test_a_decoder_that_does_not_export_says_so(decoder, digits):
    X, y = digits[3], digits[4]
    model = CodeMatrixClassifier(decoder=decoder, code="ovo", cv="in_sample").fit(X, y)
    name = type(decoder).__name__
    with pytest.raises(NotExportableError, match=f"decoder {name} does not export"):
        to_onnx(model, X)
    with pytest.raises(NotExportableError, match=f"decoder {name} does not export"):
        skl2onnx.to_onnx(model, X[:1])


def test_an_unsupported_learner_is_named_with_its_column(digits):
    X, y = digits[3], digits[4]
    learners = [LogisticRegression()] * 3 + [DummyClassifier(strategy="prior")] * 3
    model = ConvexAggregationClassifier(learners, code="ovo", cv="in_sample").fit(X, y)
    message = r"code column 3 \(DummyClassifier\).*no converter for sklearn.dummy.DummyClassifier"
    with pytest.raises(NotExportableError, match=message):
        to_onnx(model, X)
    with pytest.raises(NotExportableError, match=message):
        skl2onnx.to_onnx(make_pipeline(StandardScaler(), model).fit(X, y), X[:1])


def test_a_model_not_fitted(digits):
    X = digits[3]
    for model in (ConvexAggregationClassifier(), make_pipeline(ConvexAggregationClassifier())):
        with pytest.raises(NotFittedError, match="not fitted yet: call fit before exporting"):
            to_onnx(model, X)
    with pytest.raises(NotFittedError, match="not fitted yet"):
        skl2onnx.to_onnx(ConvexAggregationClassifier(), X[:1])


def test_bad_arguments(default_model, digits):
    with pytest.raises(ValueError, match="dtype must be one of"):
        to_onnx(default_model, digits[2], dtype="float16")
    with pytest.raises(ValueError, match="X_sample must be 2-D"):
        to_onnx(default_model, digits[2][0])
    with pytest.raises(NotExportableError, match="Pipeline ending in one; got LogisticRegression"):
        to_onnx(LogisticRegression().fit(digits[3], digits[4]), digits[3])
