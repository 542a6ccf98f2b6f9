import csv
import gzip

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import load_iris

import convexagg.io as cio
from convexagg.cli import main
from convexagg.estimator import ZERO_ENTRY_PRIORS


@pytest.mark.slow  # the whole demo, as a user runs it: about a minute (README.md)
def test_demo_prints_both_studies(capsys):
    assert main(["demo"]) == 0
    out = capsys.readouterr().out
    assert "convex aggregation:" in out and "(paper: 0.940)" in out
    for name in ("convexagg ovr", "convexagg ovo", "convexagg ecoc"):
        assert name in out
    assert "Decoders on identical one-vs-one binaries" in out
    for name in ("Hamming", "loss-based", "GBTM", "Hastie-Tibshirani", "Wu-Lin-Weng", "WMAP"):
        assert name in out


def test_unknown_command_is_an_argparse_error():
    with pytest.raises(SystemExit):
        main(["nonsense"])


# --------------------------------------------------------------------------- fit / predict


FEATURES = ["sepal length", "sepal width", "petal length", "petal width"]


def _write(path, header, rows):
    with open(path, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(header)
        writer.writerows(rows)
    return path


@pytest.fixture
def iris_csv(tmp_path):
    data = load_iris()
    names = data.target_names[data.target]
    rows = [[*map(repr, x), name] for x, name in zip(data.data.tolist(), names)]
    return _write(tmp_path / "iris.csv", [*FEATURES, "species"], rows)


@pytest.fixture
def model_file(iris_csv, tmp_path, capsys):
    out = tmp_path / "model.skops"
    assert main(["fit", str(iris_csv), "--target", "species", "--out", str(out)]) == 0
    summary = capsys.readouterr().out
    assert "150 samples, 4 features, 3 classes" in summary and str(out) in summary
    return out


def _read(path):
    """Header, predicted labels and probabilities of a ``predict`` output."""
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    return rows[0], np.array([r[0] for r in rows[1:]]), np.array([r[1:] for r in rows[1:]], float)


def _classifier(path):
    """The ConvexAggregationClassifier of a model file `convexagg fit` saved (the
    pipeline's last step, after the preprocessing)."""
    return cio.load(path)["model"][-1]


def _fails(capsys, argv, *fragments):
    assert main(argv) == 1
    err = capsys.readouterr().err.strip().splitlines()
    errors = [line for line in err if line.startswith("convexagg: error: ")]
    assert len(errors) == 1, err  # one line, no traceback
    for fragment in fragments:
        assert fragment in errors[0]
    assert not any("Traceback" in line for line in err)


PROBA = ["proba_setosa", "proba_versicolor", "proba_virginica"]


def test_fit_then_predict_round_trip(iris_csv, model_file, tmp_path, capsys):
    out = tmp_path / "proba.csv"
    argv = ["predict", str(model_file), str(iris_csv), "--out", str(out)]
    assert main([*argv, "--float-format", "%.17g"]) == 0
    header, labels, P = _read(out)
    assert header == ["prediction", *PROBA]
    assert P.shape == (150, 3) and np.allclose(P.sum(axis=1), 1)
    bundle = cio.load(model_file)
    assert bundle["features"] == FEATURES and bundle["target"] == "species"
    X = pd.DataFrame(load_iris().data, columns=FEATURES)
    np.testing.assert_array_equal(P, bundle["model"].predict_proba(X))
    np.testing.assert_array_equal(labels, bundle["model"].predict(X))
    assert (P.argmax(axis=1) == load_iris().target).mean() > 0.9
    # to standard output, columns in another order and without the target: same numbers
    shuffled = _write(
        tmp_path / "shuffled.csv",
        FEATURES[::-1],
        [list(map(repr, x[::-1])) for x in load_iris().data.tolist()],
    )
    capsys.readouterr()
    assert main(["predict", str(model_file), str(shuffled), "--float-format", "%.17g"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "prediction," + ",".join(PROBA)
    rows = [r.split(",") for r in lines[1:]]
    np.testing.assert_array_equal(np.array([r[1:] for r in rows], dtype=float), P)
    # the default format: 6 significant digits, rows still summing to 1
    assert main(["predict", str(model_file), str(shuffled)]) == 0
    rows = [r.split(",") for r in capsys.readouterr().out.splitlines()[1:]]
    short = np.array([r[1:] for r in rows], dtype=float)
    assert (
        np.allclose(short, P, rtol=1e-5, atol=1e-300)
        and max(len(v) for r in rows for v in r[1:]) <= 12
    )


def test_integer_labels_options_and_gzip(iris_csv, tmp_path):
    rows = [[*map(repr, x), str(t)] for x, t in zip(load_iris().data.tolist(), load_iris().target)]
    plain = _write(tmp_path / "numbers.csv", [*FEATURES, "label"], rows)
    train = tmp_path / "numbers.csv.gz"
    train.write_bytes(gzip.compress(plain.read_bytes()))
    out = tmp_path / "m.skops"
    argv = ["fit", str(train), "--target", "label", "--out", str(out), "--code", "ovr"]
    assert main([*argv, "--alpha", "1e-3", "--cv", "3"]) == 0
    model = _classifier(out)
    assert model.classes_.tolist() == [0, 1, 2] and model.alpha == 1e-3 and model.cv == 3
    assert main([*argv, "--cv", "in_sample"]) == 0 and _classifier(out).cv == "in_sample"
    assert main([*argv, "--cv", "None"]) == 0 and _classifier(out).cv == "in_sample"
    assert main(argv) == 0 and _classifier(out).cv == 5  # the library's default


def test_options_not_given_are_the_estimators_defaults(iris_csv, tmp_path, capsys):
    from inspect import signature

    from convexagg import ConvexAggregationClassifier

    defaults = signature(ConvexAggregationClassifier).parameters
    out = tmp_path / "m.skops"
    argv = ["fit", str(iris_csv), "--target", "species", "--out", str(out), "--holdout", "0"]
    assert main(argv) == 0
    model = _classifier(out)
    for name in ("code", "alpha", "loss", "entry_weight_shrinkage", "zero_entry_penalty", "cv"):
        assert getattr(model, name) == defaults[name].default, name
    assert model.decoder_.entry_weight_shrinkage == 0.01  # "auto" (L2 penalty): 2 / 150 rows
    # the paper's model: one weight per binary classifier
    assert main([*argv, "--entry-weight-shrinkage", "none"]) == 0
    model = _classifier(out)
    assert model.entry_weight_shrinkage is None and model.decoder_.entry_weight_shrinkage is None
    assert main([*argv, "--entry-weight-shrinkage", "0.5"]) == 0
    assert _classifier(out).decoder_.entry_weight_shrinkage == 0.5
    # several values: the estimator chooses among them
    assert main([*argv, "--entry-weight-shrinkage", "0.05,0.01"]) == 0
    model = _classifier(out)
    assert model.entry_weight_shrinkage == [0.05, 0.01]
    assert model.entry_weight_shrinkage_ in (0.05, 0.01)
    capsys.readouterr()
    for bad in ("0", "-1", "nan", "many", "0.1,0", "0.1,x", "0.1,", "0.1,inf"):
        with pytest.raises(SystemExit) as exc:
            main([*argv, "--entry-weight-shrinkage", bad])
        assert exc.value.code == 2
        err = " ".join(capsys.readouterr().err.split())
        assert "--entry-weight-shrinkage: must be a number > 0, several joined by ','" in err


def test_zero_entry_penalty_option(iris_csv, tmp_path, capsys):
    out = tmp_path / "m.skops"
    argv = ["fit", str(iris_csv), "--target", "species", "--out", str(out), "--holdout", "0"]
    assert main([*argv, "--zero-entry-penalty", "auto"]) == 0
    model = _classifier(out)
    assert model.zero_entry_penalty == "auto"
    # one of ZERO_ENTRY_PRIORS over n = 150 rows
    assert round(model.decoder_.zero_entry_penalty * 150, 9) in ZERO_ENTRY_PRIORS
    assert np.any(model.zero_entry_weights_ != 0)
    assert main([*argv, "--zero-entry-penalty", "0.5"]) == 0
    assert _classifier(out).decoder_.zero_entry_penalty == 0.5
    assert main([*argv, "--zero-entry-penalty", "none"]) == 0
    assert _classifier(out).zero_entry_penalty is None
    assert main([*argv, "--zero-entry-penalty", "1,0.1"]) == 0
    model = _classifier(out)
    assert model.zero_entry_penalty == [1.0, 0.1] and model.zero_entry_penalty_ in (1.0, 0.1)
    assert model.zero_entry_penalty_scores_.shape == (2,)
    capsys.readouterr()
    for bad in ("-1", "nan", "inf", "many", "0.1,-0.2"):
        with pytest.raises(SystemExit) as exc:
            main([*argv, "--zero-entry-penalty", bad])
        assert exc.value.code == 2
        err = " ".join(capsys.readouterr().err.split())
        assert "--zero-entry-penalty: must be a number >= 0, several joined by ','" in err
    # the estimator's own checks still apply: zero entries need entry weights
    assert main([*argv, "--zero-entry-penalty", "0.5", "--entry-weight-shrinkage", "none"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("convexagg: error:") and "entry weights" in err[-1]


@pytest.mark.parametrize("bad", ["1", "-3", "five", "2.5"])
def test_bad_folds(iris_csv, tmp_path, capsys, bad):
    out = tmp_path / "m.skops"
    assert main(["fit", str(iris_csv), "--target", "species", "--out", str(out), "--cv", bad]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("convexagg: error: --cv must be an integer >= 2") and not out.exists()


def test_missing_files(iris_csv, model_file, tmp_path, capsys):
    out = tmp_path / "m.skops"
    _fails(
        capsys,
        ["fit", str(tmp_path / "nope.csv"), "--target", "species", "--out", str(out)],
        "file not found",
        "nope.csv",
    )
    _fails(capsys, ["predict", str(tmp_path / "nope.skops"), str(iris_csv)], "file not found")
    _fails(capsys, ["predict", str(model_file), str(tmp_path / "nope.csv")], "file not found")
    _fails(
        capsys,
        [
            "fit",
            str(iris_csv),
            "--target",
            "species",
            "--out",
            str(tmp_path / "no-such-dir" / "m.skops"),
        ],
        "does not exist",
    )
    assert not out.exists()


def test_missing_target_column(iris_csv, tmp_path, capsys):
    out = tmp_path / "m.skops"
    _fails(
        capsys,
        ["fit", str(iris_csv), "--target", "Species", "--out", str(out)],
        "has no column 'Species'",
        "'species'",
    )
    assert not out.exists()


def test_columns_differ_from_training(model_file, tmp_path, capsys):
    data = load_iris().data.tolist()
    renamed = _write(
        tmp_path / "renamed.csv",
        [*FEATURES[:3], "petal breadth"],
        [list(map(repr, x)) for x in data],
    )
    out = tmp_path / "proba.csv"
    _fails(
        capsys,
        ["predict", str(model_file), str(renamed), "--out", str(out)],
        "columns differ from training",
        "missing ['petal width']",
        "unexpected ['petal breadth']",
    )
    fewer = _write(tmp_path / "fewer.csv", FEATURES[:3], [list(map(repr, x[:3])) for x in data])
    _fails(
        capsys,
        ["predict", str(model_file), str(fewer), "--out", str(out)],
        "missing ['petal width']",
    )
    assert not out.exists()


@pytest.mark.parametrize(
    "cell, message",
    [
        ("abc", "'abc' is not a number"),
        ("", "missing value"),
        ("nan", "missing value ('nan')"),
        ("NA", "missing value ('NA')"),
        ("inf", "'inf' is not a finite number"),
        ("-1e400", "'-1e400' is not a finite number"),
    ],
)
def test_non_numeric_features(tmp_path, capsys, cell, message):
    """A text among numbers or an infinite value is an error; a missing value is
    imputed, and an error only without preprocessing."""
    rows = [[*map(repr, x), str(t)] for x, t in zip(load_iris().data.tolist(), load_iris().target)]
    rows[4][1] = cell
    train = _write(tmp_path / "bad.csv", [*FEATURES, "label"], rows)
    out = tmp_path / "m.skops"
    argv = ["fit", str(train), "--target", "label", "--out", str(out)]
    if message.startswith("missing value"):
        assert main([*argv, "--holdout", "0", "--cv", "3"]) == 0
        out.unlink()
        argv.append("--no-preprocess")
    _fails(capsys, argv, message, "line 6", "'sepal width'")
    assert not out.exists()


def test_malformed_csv(tmp_path, capsys):
    out = tmp_path / "m.skops"
    empty = tmp_path / "empty.csv"
    empty.write_text("")
    _fails(capsys, ["fit", str(empty), "--target", "y", "--out", str(out)], "is empty")
    ragged = tmp_path / "ragged.csv"
    ragged.write_text("a,b,y\n1,2,x\n3,4\n")
    _fails(
        capsys,
        ["fit", str(ragged), "--target", "y", "--out", str(out)],
        "line 3: 2 fields, but the header has 3 columns",
    )
    one_class = tmp_path / "one.csv"
    one_class.write_text("a,b,y\n1,2,x\n3,4,x\n")
    _fails(
        capsys, ["fit", str(one_class), "--target", "y", "--out", str(out)], "y contains 1 class"
    )
    assert not out.exists()


def test_failure_leaves_existing_outputs_untouched(iris_csv, model_file, tmp_path, capsys):
    before = model_file.read_bytes()
    bad = tmp_path / "bad.csv"
    bad.write_text("a,b,species\n1,2,x\n3,4,x\n")
    _fails(capsys, ["fit", str(bad), "--target", "species", "--out", str(model_file)], "1 class")
    assert model_file.read_bytes() == before
    out = tmp_path / "proba.csv"
    out.write_text("previous\n")
    _fails(capsys, ["predict", str(model_file), str(bad), "--out", str(out)], "columns differ")
    assert out.read_text() == "previous\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ["iris.csv", "model.skops", "bad.csv", "proba.csv"]
    )  # no temporary files left behind


def test_untrusted_model_file_is_refused(iris_csv, tmp_path, capsys):
    evil = tmp_path / "evil.skops"
    cio.save({"format": "convexagg-cli-model/1", "model": np.lib.format.open_memmap}, evil)
    _fails(capsys, ["predict", str(evil), str(iris_csv)], "does not trust", "open_memmap")
    junk = tmp_path / "junk.skops"
    junk.write_bytes(b"not a model")
    _fails(capsys, ["predict", str(junk), str(iris_csv)], "not a skops model file")


def test_invalid_parameter_is_a_user_error(iris_csv, tmp_path, capsys):
    out = tmp_path / "m.skops"
    _fails(
        capsys,
        ["fit", str(iris_csv), "--target", "species", "--out", str(out), "--alpha", "-1"],
        "The 'alpha' parameter",
    )
    with pytest.raises(SystemExit) as exc:
        main(["fit", str(iris_csv), "--target", "species", "--out", str(out), "--code", "xyz"])
    assert exc.value.code == 2
    assert not out.exists()


def test_warnings_are_one_line_each(tmp_path, capsys):
    data = load_iris()
    keep = list(range(100)) + [100]  # class 2 has one sample: a fold trains without it
    rows = [[*map(repr, data.data[i].tolist()), str(data.target[i])] for i in keep]
    train = _write(tmp_path / "sparse.csv", [*FEATURES, "label"], rows)
    out = tmp_path / "m.skops"
    assert main(["fit", str(train), "--target", "label", "--out", str(out), "--cv", "3"]) == 0
    err = capsys.readouterr().err.splitlines()
    assert err and all(line.startswith("convexagg: warning: ") for line in err)
    assert any("UserWarning: binary problems" in line for line in err)
    assert len(err) == len(set(err))
    assert out.exists()
