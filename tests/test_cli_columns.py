"""``convexagg fit`` leaves columns out (``--id``, ``--drop``, ``--features``) and the
model records them, so ``predict`` reads a CSV's columns by name; the help and the
option checks a user meets first."""

import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import load_iris

import convexagg.io as cio
from convexagg.cli import main

FEATURES = ["a", "b", "c", "d"]
QUICK = ["--cv", "none", "--holdout", "0"]  # the folds are not what these tests are about


@pytest.fixture(scope="module")
def iris_frame():
    data = load_iris()
    frame = pd.DataFrame(data.data, columns=FEATURES)
    frame["species"] = data.target_names[data.target]
    frame.insert(0, "id", [f"W{i:04d}" for i in range(len(frame))])  # text: not a number
    frame["note"] = np.where(np.arange(len(frame)) % 2, "checked", "new")
    return frame


def _fit(tmp_path, frame, *options, name="model.skops"):
    train = tmp_path / f"train-{name}.csv"
    frame.to_csv(train, index=False)
    out = tmp_path / name
    argv = ["fit", str(train), "--target", "species", "--out", str(out), *QUICK, *options]
    assert main(argv) == 0
    return out


def _predict(tmp_path, model, frame, capsys, *options):
    data = tmp_path / "data.csv"
    frame.to_csv(data, index=False)
    capsys.readouterr()
    status = main(["predict", str(model), str(data), "--float-format", "%.17g", *options])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def _table(text):
    from io import StringIO

    return pd.read_csv(StringIO(text), dtype={"id": str})


def _one_error(status, err, *fragments):
    assert status == 1
    lines = err.strip().splitlines()
    assert lines[-1].startswith("convexagg: error: ") and "Traceback" not in err, err
    assert sum(line.startswith("convexagg: error: ") for line in lines) == 1
    for fragment in fragments:
        assert fragment in lines[-1], lines[-1]
    return lines[-1]


def test_id_and_drop_round_trip_by_name(iris_frame, tmp_path, capsys):
    model = _fit(tmp_path, iris_frame, "--id", "id", "--drop", "note")
    bundle = cio.load(model)
    assert bundle["features"] == FEATURES and bundle["ids"] == ["id"]
    assert bundle["ignored"] == ["note"] and bundle["target"] == "species"
    # the reference: the same model fitted on a file holding only the features
    clean = _fit(tmp_path, iris_frame[[*FEATURES, "species"]], name="clean.skops")
    new = iris_frame.sample(frac=1, random_state=1)
    status, expected, _ = _predict(tmp_path, clean, new[FEATURES], capsys)
    assert status == 0
    # columns reordered, the target and the dropped column present: matched by name
    shuffled = new[["note", "d", "species", "b", "id", "c", "a"]]
    status, out, err = _predict(tmp_path, model, shuffled, capsys)
    assert status == 0 and err == ""
    got, want = _table(out), _table(expected)
    assert list(got.columns) == ["id", *want.columns]  # the training id, passed through
    assert (got["id"] == new["id"].to_numpy()).all()
    pd.testing.assert_frame_equal(got.drop(columns="id"), want)


def test_features_selects_and_predict_ignores_the_rest(iris_frame, tmp_path, capsys):
    model = _fit(tmp_path, iris_frame, "--features", "c,a", "--id", "id")
    bundle = cio.load(model)
    assert bundle["features"] == ["a", "c"] and bundle["ignored"] == ["b", "d", "note"]
    assert bundle["model"].n_features_in_ == 2
    clean = _fit(tmp_path, iris_frame[["a", "c", "species"]], name="clean.skops")
    status, expected, _ = _predict(tmp_path, clean, iris_frame[["a", "c"]], capsys)
    status, out, _ = _predict(tmp_path, model, iris_frame[["d", "c", "id", "a"]], capsys)
    assert status == 0
    pd.testing.assert_frame_equal(_table(out).drop(columns="id"), _table(expected))


def test_missing_and_unknown_columns_at_predict(iris_frame, tmp_path, capsys):
    model = _fit(tmp_path, iris_frame, "--id", "id", "--drop", "note")
    status, _, err = _predict(tmp_path, model, iris_frame.drop(columns="c"), capsys)
    _one_error(status, err, "columns differ from training (matched by name)", "missing ['c']")
    extra = iris_frame.assign(batch=7)  # a column fit never saw
    status, _, err = _predict(tmp_path, model, extra, capsys)
    _one_error(status, err, "unexpected ['batch']", "--keep-extra")
    status, out, _ = _predict(tmp_path, model, extra, capsys, "--keep-extra")
    assert status == 0 and list(_table(out).columns[:4]) == ["id", "species", "note", "batch"]
    # without its id column the data still predicts: the id is copied when present
    status, out, _ = _predict(tmp_path, model, iris_frame[FEATURES], capsys)
    assert status == 0 and _table(out).columns[0] == "prediction"


@pytest.mark.parametrize(
    "options, message",
    [
        (["--id", "ID"], "has no column 'ID' (--id); its columns are"),
        (["--drop", "note,nothing"], "has no column 'nothing' (--drop)"),
        (["--features", "a,zz"], "has no column 'zz' (--features)"),
        (["--drop", "species"], "--drop names the target column 'species'"),
        (["--features", "a,a"], "--features names 'a' twice"),
        (["--id", "a", "--features", "a,b"], "'a' is given to both --id and --features"),
        (["--id", "id", "--drop", "a,b,c,d,note"], "no feature columns besides the target"),
    ],
)
def test_bad_column_options(iris_frame, tmp_path, capsys, options, message):
    train = tmp_path / "train.csv"
    iris_frame.to_csv(train, index=False)
    out = tmp_path / "m.skops"
    status = main(["fit", str(train), "--target", "species", "--out", str(out), *options])
    _one_error(status, capsys.readouterr().err, message)
    assert not out.exists()


def test_drop_and_features_exclude_each_other(iris_frame, tmp_path):
    with pytest.raises(SystemExit) as exit_:
        main(["fit", "t.csv", "--target", "y", "--out", "m", "--drop", "a", "--features", "b"])
    assert exit_.value.code == 2


def test_a_text_column_suggests_leaving_it_out(iris_frame, tmp_path, capsys):
    """An identifier left among the features is not one-hot encoded: one error line with
    the ways out (without preprocessing: it is not a number)."""
    train = tmp_path / "train.csv"
    iris_frame.drop(columns="note").to_csv(train, index=False)
    argv = ["fit", str(train), "--target", "species", "--out", str(tmp_path / "m")]
    status = main(argv)
    err = capsys.readouterr().err
    _one_error(status, err, "column 'id': 150 distinct texts in 150 rows", "--id id", "--drop id")
    status = main([*argv, "--no-preprocess"])
    _one_error(status, capsys.readouterr().err, "'W0000' is not a number", "--id COLUMN")


# --------------------------------------------------------------------------- help, options


def _help(*argv):
    with pytest.raises(SystemExit):
        main([*argv, "--help"])


def test_fit_help_documents_every_option(capsys):
    _help("fit")
    text = " ".join(capsys.readouterr().out.split())
    assert "LogisticRegression" in text and "StandardScaler" in text  # the binary learner
    # the options that set an estimator parameter show the estimator's default
    assert "weights (default 0.001, the estimator's)" in text  # --alpha
    # --entry-weight-shrinkage
    assert "(default auto: 2/n within [0.001, 0.01], the estimator's)" in text
    assert "(default ovo+ovr, the estimator's)" in text and "(default 5, the estimator's)" in text
    assert "--loss {cross_entropy,exponential} loss of a binary classifier" in text
    assert "--random-state RANDOM_STATE seeds the held-out split" in text
    for option in ("--id", "--drop", "--features", "--verbose"):
        assert option in text
    assert "ovr, ovo, ecoc" in text  # --code's choices, read from convexagg.codes


@pytest.mark.parametrize("fmt", ["%d", "%i", "%s", "%r", "%x", "%.3f%%", "p=%g", "%g %g", "%"])
def test_float_format_accepts_only_float_formats(tmp_path, capsys, fmt):
    status = main(["predict", "m.skops", "d.csv", "--float-format", fmt])
    _one_error(status, capsys.readouterr().err, "--float-format must be one printf-style float")


@pytest.mark.parametrize("fmt", ["%.3f", "%e", "%10.4G", "%-8.2F", "%+.17g"])
def test_float_formats_are_accepted(fmt):
    from convexagg.cli.handlers import check_float_format

    check_float_format(fmt)


def test_fit_verbose_shows_the_stages_on_stderr(iris_frame, tmp_path, capsys):
    train = tmp_path / "train.csv"
    iris_frame.to_csv(train, index=False)
    out = tmp_path / "m.skops"
    argv = ["fit", str(train), "--target", "species", "--id", "id", "--drop", "note"]
    assert main([*argv, "--out", str(out), "--cv", "3", "-v"]) == 0
    captured = capsys.readouterr()
    assert captured.out.startswith("fitted on 150 samples") and captured.out.count("\n") == 1
    stages = [line for line in captured.err.splitlines() if line.startswith("convexagg fit: [")]
    assert len(stages) == 4, captured.err
    expected = ["read", "held-out estimate: fitting on 120", "held-out", "saving"]
    for stage, text in zip(stages, expected):
        assert text in stage
    assert "[ConvexAggregationClassifier] out-of-fold outputs: 3 folds" in captured.err
    assert main([*argv, "--out", str(out), "--cv", "none", "--holdout", "0"]) == 0
    assert capsys.readouterr().err == ""  # quiet without -v


def test_help_imports_no_heavy_module():
    """``convexagg --help`` and ``--version`` start without NumPy, pandas, scikit-learn,
    skops or matplotlib (they cost seconds to import); the commands import them."""
    script = (
        "import sys\n"
        "from convexagg.cli import main\n"
        "for argv in (['--help'], ['--version'], ['predict', '--help']):\n"
        "    try:\n"
        "        main(argv)\n"
        "    except SystemExit:\n"
        "        pass\n"
        "heavy = ('numpy', 'pandas', 'sklearn', 'scipy', 'skops', 'matplotlib')\n"
        "print(sorted(m for m in heavy if m in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "[]"
