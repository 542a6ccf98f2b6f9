"""``convexagg fit`` takes tables as they come: text columns are one-hot encoded and
missing numbers imputed by a preprocessing step saved in the model, which ``predict``
applies (a category unseen in training is no error); ``--no-preprocess`` turns it off."""

import io
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from sklearn.compose import ColumnTransformer
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import Pipeline, make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

import convexagg.io as cio
from convexagg import ConvexAggregationClassifier
from convexagg.cli import main

FAST = ["--cv", "3", "--holdout", "0"]


def _table(n=90, seed=0):
    """Three classes; a numeric column, a text column (``region``) that carries the class,
    an integer code column, the label."""
    rng = np.random.default_rng(seed)
    y = np.arange(n) % 3
    frame = pd.DataFrame(
        {
            "size": rng.normal(size=n) + y,
            "region": np.array(["east", "west", "north"])[(y + (rng.random(n) < 0.2)) % 3],
            "code": rng.integers(1, 4, n),
            "label": np.array(["a", "b", "c"])[y],
        }
    )
    return frame.astype({"size": object, "region": object})


def _write(frame, path):
    frame.to_csv(path, index=False)
    return path


def _one_error(capsys, *fragments):
    err = capsys.readouterr().err.strip().splitlines()
    errors = [line for line in err if line.startswith("convexagg: error: ")]
    assert len(errors) == 1 and errors[0] == err[-1] and "Traceback" not in "".join(err), err
    for fragment in fragments:
        assert fragment in errors[0], errors[0]


def _predict(capsys, model, data):
    capsys.readouterr()
    assert main(["predict", str(model), str(data), "--float-format", "%.17g"]) == 0
    return pd.read_csv(io.StringIO(capsys.readouterr().out))


@pytest.fixture(scope="module")
def fitted(tmp_path_factory):
    """A table with a text column and missing cells (numbers and texts), fitted."""
    folder = tmp_path_factory.mktemp("tables")
    frame = _table()
    frame.loc[[3, 10, 40], "size"] = np.nan
    frame.loc[[5, 7], "region"] = "NA"
    train = _write(frame, folder / "train.csv")
    model = folder / "m.skops"
    assert main(["fit", str(train), "--target", "label", "--out", str(model), *FAST]) == 0
    return folder, frame, model


def test_a_text_column_and_missing_cells_fit_and_predict(fitted, capsys):
    folder, frame, model = fitted
    bundle = cio.load(model)
    assert bundle["categorical"] == ["region"] and bundle["preprocess"] is True
    pipeline = bundle["model"]
    assert type(pipeline) is Pipeline and type(pipeline[-1]) is ConvexAggregationClassifier
    got = _predict(capsys, model, folder / "train.csv")
    P = got.filter(like="proba_").to_numpy()
    assert np.isfinite(P).all() and np.allclose(P.sum(axis=1), 1)
    assert (got["prediction"] == frame["label"]).mean() > 0.75
    features = frame.drop(columns="label").replace({"NA": np.nan})
    features["size"] = features["size"].astype(float)
    np.testing.assert_array_equal(P, pipeline.predict_proba(features))


def test_the_preprocessing_is_imputation_and_one_hot_encoding(fitted):
    """The design matrix the binaries see, against one computed by hand: numbers scaled
    by their largest magnitude, missing ones replaced by the mean and flagged; one
    column per category seen, missing as a category of its own."""
    _, frame, model = fitted
    step = cio.load(model)["model"]["preprocess"]
    X = frame.drop(columns="label").replace({"NA": np.nan})
    size = X["size"].astype(float).to_numpy()
    scaled = size / np.nanmax(np.abs(size))
    missing = np.isnan(scaled)
    code = X["code"].to_numpy(float) / 3
    regions = X["region"].to_numpy(dtype=object)
    one_hot = [(regions == r) for r in ["east", "north", "west"]] + [pd.isna(regions)]
    expected = np.column_stack(
        [np.where(missing, np.nanmean(scaled), scaled), code, missing, *one_hot]
    )
    np.testing.assert_allclose(step.transform(X), expected, rtol=1e-15, atol=0)


def test_an_unseen_category_or_missing_number_at_predict_time(fitted, capsys):
    """An unseen category encodes as no category (as a missing one would, had training
    seen none: here the code column); a missing number as the training mean."""
    folder, frame, model = fitted
    rows = frame.drop(columns="label").iloc[:4].astype(object)
    rows.loc[rows.index[0], "region"] = "south"  # never seen
    rows.loc[rows.index[1], "size"] = ""
    rows.loc[rows.index[2], "code"] = "NA"  # missing where training had none
    rows.loc[rows.index[3], "code"] = 7  # a number outside the training range: a number
    got = _predict(capsys, model, _write(rows, folder / "rows.csv"))
    P = got.filter(like="proba_").to_numpy()
    assert np.isfinite(P).all() and np.allclose(P.sum(axis=1), 1)
    pipeline = cio.load(model)["model"]
    reference = rows.replace({"": np.nan, "NA": np.nan}).astype({"size": float, "code": float})
    reference.loc[reference.index[1], "size"] = np.nan
    np.testing.assert_array_equal(P, pipeline.predict_proba(reference))
    encoded = pipeline["preprocess"].transform(reference.iloc[:3])
    assert encoded[0, -4:].tolist() == [0, 0, 0, 0]  # no category
    means = pipeline["preprocess"].named_transformers_["numbers"][-1].statistics_
    assert encoded[1, 0] == means[0] and encoded[1, 2] == 1  # the mean, flagged missing
    assert encoded[2, 1] == means[1]  # the mean (no flag: training had no missing code)


def test_no_preprocess_refuses_text_in_one_line(tmp_path, capsys):
    train = _write(_table(), tmp_path / "t.csv")
    argv = ["fit", str(train), "--target", "label", "--out", str(tmp_path / "m.skops")]
    assert main([*argv, "--no-preprocess", *FAST]) == 1
    _one_error(capsys, "t.csv, line 2, column 'region'", "is not a number", "--no-preprocess")
    assert not (tmp_path / "m.skops").exists()
    assert main([*argv, "--no-preprocess", "--categorical", "code"]) == 1
    _one_error(capsys, "--categorical needs the preprocessing --no-preprocess turns off")


def test_no_preprocess_fits_numbers_as_before(tmp_path, capsys):
    frame = _table().drop(columns="region")
    model = tmp_path / "m.skops"
    train = _write(frame, tmp_path / "t.csv")
    argv = ["fit", str(train), "--target", "label", "--out", str(model), *FAST]
    assert main([*argv, "--no-preprocess"]) == 0
    bundle = cio.load(model)
    assert bundle["preprocess"] is False and bundle["categorical"] == []
    assert type(bundle["model"]["preprocess"]).__name__ == "MaxAbsScaler"
    got = _predict(capsys, model, train)
    X = frame[["size", "code"]].to_numpy(float)
    np.testing.assert_array_equal(
        got.filter(like="proba_").to_numpy(), bundle["model"].predict_proba(X)
    )
    frame.loc[4, "size"] = "NA"
    assert main(["predict", str(model), str(_write(frame, tmp_path / "gap.csv"))]) == 1
    _one_error(capsys, "gap.csv, line 6, column 'size': missing value ('NA')")


def test_categorical_encodes_a_code_column(tmp_path, capsys):
    frame = _table()
    model = tmp_path / "m.skops"
    train = _write(frame, tmp_path / "t.csv")
    argv = ["fit", str(train), "--target", "label", "--out", str(model), *FAST]
    assert main([*argv, "--categorical", "code"]) == 0
    assert cio.load(model)["categorical"] == ["region", "code"]
    rows = frame.drop(columns="label").iloc[:2].copy()
    rows["code"] = [9, 2]  # 9: a code never seen
    got = _predict(capsys, model, _write(rows, tmp_path / "rows.csv"))
    assert np.allclose(got.filter(like="proba_").sum(axis=1), 1)
    for bad in ("nope", "label"):
        assert main([*argv, "--categorical", bad]) == 1
        _one_error(capsys, f"--categorical {bad!r} is not a feature column")


def test_a_text_among_numbers_is_an_error_naming_it(tmp_path, capsys):
    frame = _table()
    frame.loc[6, "size"] = "1.2.3"
    train = _write(frame, tmp_path / "t.csv")
    argv = ["fit", str(train), "--target", "label", "--out", str(tmp_path / "m.skops"), *FAST]
    assert main(argv) == 1
    _one_error(capsys, "line 8, column 'size': '1.2.3' is not a number", "--categorical COLUMN")
    assert main([*argv, "--categorical", "size"]) == 0  # categories, as asked: one per value
    assert "(2 categorical)" in capsys.readouterr().out  # region and size


def test_a_model_saved_from_python_with_text_columns(tmp_path, capsys):
    """``predict`` takes a scikit-learn pipeline saved from Python that encodes its own
    text columns: the columns as the file has them."""
    frame = _table()
    X, y = frame.drop(columns="label"), frame["label"].to_numpy()
    X["size"] = X["size"].astype(float)
    encode = ColumnTransformer(
        [("region", OneHotEncoder(handle_unknown="ignore"), ["region"])],
        remainder="passthrough",
        sparse_threshold=0,
    )
    learner = make_pipeline(StandardScaler(), LogisticRegression())
    model = Pipeline(
        [("encode", encode), ("classifier", ConvexAggregationClassifier(learner, cv=3))]
    )
    model.fit(X, y)
    path = tmp_path / "python.skops"
    cio.save(model, path)
    got = _predict(capsys, path, _write(X, tmp_path / "rows.csv"))
    np.testing.assert_array_equal(got.filter(like="proba_").to_numpy(), model.predict_proba(X))
    numbers = X.assign(region=X["region"].map({"east": 0, "west": 1, "north": 2}))
    cio.save(ConvexAggregationClassifier(learner, cv=3).fit(numbers, y), path)  # no text
    assert main(["predict", str(path), str(tmp_path / "rows.csv")]) == 1
    _one_error(capsys, "cannot predict from", "its columns ['region'] hold text")


def test_fit_help_imports_no_heavy_module():
    """``fit --help`` shows the estimator's defaults without importing scikit-learn."""
    script = (
        "import sys\n"
        "from convexagg.cli import main\n"
        "try:\n"
        "    main(['fit', '--help'])\n"
        "except SystemExit:\n"
        "    pass\n"
        "heavy = ('pandas', 'sklearn', 'scipy', 'skops', 'matplotlib')\n"
        "print(sorted(m for m in heavy if m in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "(default ovo+ovr, the estimator's)" in " ".join(done.stdout.split())
    assert done.stdout.strip().splitlines()[-1] == "[]"


def test_the_help_values_are_the_estimators():
    """What ``fit --help`` reads from the source is what the estimator has."""
    from inspect import signature

    from convexagg import estimator
    from convexagg.cli.parser import ESTIMATOR_OPTIONS, HELP_CONSTANTS, estimator_help_values

    values = estimator_help_values()
    parameters = signature(estimator.ConvexAggregationClassifier).parameters
    for name in ESTIMATOR_OPTIONS:
        assert values[name] == parameters[name].default, name
    for name in HELP_CONSTANTS:
        assert values[name] == getattr(estimator, name), name
