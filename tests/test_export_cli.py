"""``convexagg export MODEL.skops --out MODEL.onnx``: the graph onnxruntime runs gives the
model's predictions; each failure is one ``convexagg: error:`` line and writes nothing."""

import csv
import json

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.datasets import load_iris
from sklearn.dummy import DummyClassifier

pytest.importorskip("onnx")
pytest.importorskip("skl2onnx")
ort = pytest.importorskip("onnxruntime")

import convexagg.io as cio  # noqa: E402  (after the importorskips)
from convexagg import (  # noqa: E402
    BradleyTerryDecoder,
    CodeMatrixClassifier,
    ConvexAggregationClassifier,
)
from convexagg.cli import main  # noqa: E402

FEATURES = ["sepal length", "sepal width", "petal length", "petal width"]


@pytest.fixture(scope="module")
def fitted(tmp_path_factory):
    """A model fitted by ``convexagg fit`` (a bundle with its feature names) on iris."""
    folder = tmp_path_factory.mktemp("export_cli")
    data = load_iris()
    train = folder / "iris.csv"
    with open(train, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow([*FEATURES, "species"])
        for x, label in zip(data.data.tolist(), data.target_names[data.target]):
            writer.writerow([*map(repr, x), label])
    model = folder / "model.skops"
    assert main(["fit", str(train), "--target", "species", "--out", str(model)]) == 0
    return model


def _session(path):
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])


def _frame(X):
    import pandas as pd

    return pd.DataFrame(np.asarray(X, dtype=np.float64), columns=FEATURES)


def _feeds(session, X):
    return {i.name: X[:, [j]] for j, i in enumerate(session.get_inputs())}


def _fails(capsys, argv, *fragments):
    assert main(argv) == 1
    err = capsys.readouterr().err.strip().splitlines()
    errors = [line for line in err if line.startswith("convexagg: error: ")]
    assert len(errors) == 1 and errors[0] == err[-1], err  # one line, the last
    for fragment in fragments:
        assert fragment in errors[0], errors[0]
    assert not any("Traceback" in line for line in err)


def test_export_then_serve_with_onnxruntime(fitted, tmp_path, capsys):
    import onnx

    capsys.readouterr()
    out = tmp_path / "model.onnx"
    assert main(["export", str(fitted), "--out", str(out)]) == 0
    said = capsys.readouterr().out
    # fit's preprocessing imputes, and onnxruntime's Imputer runs in float32 only
    assert said.startswith("exported ConvexAggregationClassifier (3 classes, 4 features, float32")
    assert str(out) in said
    model = cio.load(fitted)["model"]
    X = load_iris().data
    session = _session(out)
    # the preprocessing selects columns by name: one input per column, in the file's order
    assert len(session.get_inputs()) == len(FEATURES)
    labels, proba = session.run(None, _feeds(session, X.astype(np.float32)))
    assert_allclose(proba, model.predict_proba(_frame(X)), rtol=0, atol=1e-5)
    assert_array_equal(labels, model.predict(_frame(X)))  # the class names, as strings
    meta = {p.key: p.value for p in onnx.load(out).metadata_props}
    assert json.loads(meta["feature_names"]) == FEATURES
    assert json.loads(meta["target"]) == "species"


def test_float32_and_zipmap(fitted, tmp_path):
    out = tmp_path / "model32.onnx"
    assert main(["export", str(fitted), "--out", str(out), "--dtype", "float32", "--zipmap"]) == 0
    model = cio.load(fitted)["model"]
    X = load_iris().data.astype(np.float32)
    session = _session(out)
    labels, maps = session.run(None, _feeds(session, X))
    proba = np.array([[row[c] for c in model.classes_] for row in maps])
    assert_allclose(proba, model.predict_proba(_frame(X)), rtol=0, atol=1e-5)
    assert_array_equal(labels, model.predict(_frame(X)))


def test_a_model_saved_from_python(tmp_path):
    X, y = load_iris(return_X_y=True)
    model = ConvexAggregationClassifier(cv="in_sample", random_state=0).fit(X, y)
    cio.save(model, tmp_path / "m.skops")
    assert main(["export", str(tmp_path / "m.skops"), "--out", str(tmp_path / "m.onnx")]) == 0
    labels, proba = _session(tmp_path / "m.onnx").run(None, {"X": X})
    assert_allclose(proba, model.predict_proba(X), rtol=0, atol=1e-9)
    assert_array_equal(labels, model.predict(_frame(X)))


def test_what_does_not_export_is_one_error_line_and_nothing_written(tmp_path, capsys):
    X, y = load_iris(return_X_y=True)
    bradley_terry = CodeMatrixClassifier(decoder=BradleyTerryDecoder(), cv="in_sample").fit(X, y)
    dummy = ConvexAggregationClassifier(DummyClassifier(), code="ovo", cv="in_sample").fit(X, y)
    cases = {
        "bradley_terry.skops": (bradley_terry, ["decoder BradleyTerryDecoder does not export"]),
        "dummy.skops": (dummy, ["code column 0 (DummyClassifier)", "no converter"]),
        "unfitted.skops": (ConvexAggregationClassifier(), ["is not fitted yet"]),
    }
    out = tmp_path / "model.onnx"
    for name, (model, fragments) in cases.items():
        cio.save(model, tmp_path / name)
        _fails(capsys, ["export", str(tmp_path / name), "--out", str(out)], *fragments)
        assert not out.exists()
    # an existing output is left as it was, and no temporary file stays behind
    out.write_bytes(b"previous")
    _fails(
        capsys,
        ["export", str(tmp_path / "bradley_terry.skops"), "--out", str(out)],
        "BradleyTerryDecoder",
    )
    assert out.read_bytes() == b"previous"
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([*cases, "model.onnx"])


def test_the_input_is_never_the_output_and_missing_files(fitted, tmp_path, capsys):
    before = fitted.read_bytes()
    _fails(capsys, ["export", str(fitted), "--out", str(fitted)], "the input file")
    assert fitted.read_bytes() == before
    _fails(
        capsys,
        ["export", str(tmp_path / "none.skops"), "--out", str(tmp_path / "m.onnx")],
        "file not found",
    )
    assert not (tmp_path / "m.onnx").exists()
    with pytest.raises(SystemExit) as exc:  # --out is required: argparse's usage error
        main(["export", str(fitted)])
    assert exc.value.code == 2
