"""What ``convexagg fit`` / ``predict`` read and write: the target goes
through one label parser and the estimators' checks, CSV files of every common
shape are read (or refused with file, line and column), and the prediction file
has labels, ids and readable numbers."""

import bz2
import gzip
import io

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import load_iris

import convexagg.io as cio
from convexagg.cli import main


def _data(n=60, seed=0):
    rng = np.random.default_rng(seed)
    y = np.arange(n) % 3
    X = rng.normal(size=(n, 2)) + 3 * y[:, None]
    return X, y


def _csv(path, X, labels, header=("a", "b", "y"), sep=",", fmt=repr):
    lines = [sep.join(header)]
    lines += [sep.join([fmt(float(v)) for v in x] + [str(t)]) for x, t in zip(X, labels)]
    path.write_text("\n".join(lines) + "\n")
    return path


def _fit(tmp_path, train, *extra, target="y"):
    out = tmp_path / "m.skops"
    return main(["fit", str(train), "--target", target, "--out", str(out), *extra]), out


def _one_error(capsys, *fragments):
    err = capsys.readouterr().err.strip().splitlines()
    errors = [line for line in err if line.startswith("convexagg: error: ")]
    assert len(errors) == 1 and not any("Traceback" in line for line in err), err
    for fragment in fragments:
        assert fragment in errors[0], errors[0]
    return errors[0]


# --------------------------------------------------------------------------- the target


def test_a_continuous_target_is_refused_as_the_api_refuses_it(tmp_path, capsys):
    X, _ = _data(12)
    prices = [f"{p:.2f}" for p in np.linspace(1.99, 24.99, 12)]
    train = _csv(tmp_path / "prices.csv", X, prices, header=("a", "b", "price"))
    status, out = _fit(tmp_path, train, target="price")
    assert status == 1 and not out.exists()
    _one_error(capsys, "prices.csv, column 'price'", "Unknown label type: 'continuous'")


@pytest.mark.parametrize("missing", ["", "NA", "nan", "NaN", "null", "None", "n/a"])
def test_a_missing_label_names_file_line_and_column(tmp_path, capsys, missing):
    X, y = _data()
    labels = [str(t) for t in y]
    labels[6] = missing
    train = _csv(tmp_path / "t.csv", X, labels)
    status, out = _fit(tmp_path, train)
    assert status == 1 and not out.exists()
    _one_error(capsys, "t.csv, line 8, column 'y': missing class label")


@pytest.mark.parametrize(
    "labels, dtype",
    [
        ([0, 1, 2], np.int64),
        ([-1, 0, 1], np.int64),
        ([10, 20, 30], np.int64),
        ([2**63, 2**63 + 1, 2**63 + 2], np.uint64),  # IDs beyond int64
        ([10**30, 10**30 + 1, 10**30 + 2], np.str_),  # beyond 64 bits: kept as text
        (["1.0", "2.0", "3.0"], np.float64),
        (["a", "b", "c"], np.str_),
        (["07", "08", "09"], np.str_),  # not written as integers: codes, kept as text
    ],
)
def test_labels_keep_their_type(tmp_path, capsys, labels, dtype):
    X, y = _data()
    train = _csv(tmp_path / "t.csv", X, [labels[t] for t in y])
    status, out = _fit(tmp_path, train, "--holdout", "0")
    assert status == 0, capsys.readouterr().err
    classes = cio.load(out)["model"].classes_
    assert classes.dtype.type is dtype
    assert [str(c) for c in classes] == [str(v) for v in labels]
    capsys.readouterr()
    assert main(["predict", str(out), str(train)]) == 0
    predicted = pd.read_csv(io.StringIO(capsys.readouterr().out), dtype={"prediction": str})
    assert set(predicted["prediction"]) <= {str(v) for v in labels}
    assert list(predicted.columns[1:]) == [f"proba_{v}" for v in labels]


def test_parse_labels_is_the_one_label_parser():
    assert cio.parse_labels(["3", "1", "2"]).tolist() == [3, 1, 2]
    assert cio.parse_labels([" x", "y "]).tolist() == ["x", "y"]
    with pytest.raises(ValueError, match=r"y\[1\]: missing class label \('NA'\)"):
        cio.parse_labels(["a", "NA"])
    with pytest.raises(ValueError, match="prices: Unknown label type: 'continuous'"):
        cio.parse_labels(["1.5", "2.25", "3.125"], name="prices")


# --------------------------------------------------------------------------- reading CSV


def test_finite_features_near_the_float_limit_fit_and_predict(tmp_path, capsys):
    X, y = _data()
    X[:, 0] *= 1e307 / np.abs(X[:, 0]).max()  # finite, but standardising them overflows
    train = _csv(tmp_path / "huge.csv", X, y)
    status, out = _fit(tmp_path, train)
    assert status == 0, capsys.readouterr().err
    capsys.readouterr()
    assert main(["predict", str(out), str(train), "--float-format", "%.17g"]) == 0
    frame = pd.read_csv(io.StringIO(capsys.readouterr().out))
    P = frame.filter(like="proba_").to_numpy()
    assert np.isfinite(P).all() and np.allclose(P.sum(axis=1), 1)
    assert (frame["prediction"].to_numpy() == y).mean() > 0.8


def test_a_field_longer_than_the_csv_module_allows(tmp_path, capsys):
    X, y = _data()
    train = _csv(tmp_path / "long.csv", X, y)
    with open(train, "a") as f:
        f.write(f"1,{'9' * 200_000},1\n")  # 131,072 is the csv module's default limit
    status, _ = _fit(tmp_path, train)
    assert status == 1
    message = _one_error(capsys, "long.csv, line 62, column 'b'", "200000 characters")
    assert len(message) < 300
    ok = tmp_path / "text.csv"
    ok.write_text("a,y\n" + "".join(f"{i},{'x' * 200_000 if i % 2 else 'z'}\n" for i in range(6)))
    assert _fit(tmp_path, ok, "--holdout", "0", "--cv", "none")[0] == 0  # long labels are fine


def test_gzip_is_recognised_by_content_not_name(tmp_path, capsys):
    X, y = _data()
    plain = _csv(tmp_path / "plain.csv", X, y).read_bytes()
    named_csv = tmp_path / "really_gzip.csv"
    named_csv.write_bytes(gzip.compress(plain))
    assert _fit(tmp_path, named_csv, "--holdout", "0")[0] == 0
    named_gz = tmp_path / "not_gzip.csv.gz"
    named_gz.write_bytes(plain)
    assert _fit(tmp_path, named_gz, "--holdout", "0")[0] == 0
    compressed = tmp_path / "b.csv"
    compressed.write_bytes(bz2.compress(plain))
    assert _fit(tmp_path, compressed)[0] == 1
    _one_error(capsys, "b.csv is bzip2-compressed")


@pytest.mark.parametrize("sep", [";", "\t", "|"])
def test_the_separator_is_detected_or_given(tmp_path, capsys, sep):
    X, y = _data()
    train = _csv(tmp_path / "t.csv", X, y, sep=sep)
    assert _fit(tmp_path, train, "--holdout", "0")[0] == 0
    given = {"\t": "tab"}.get(sep, sep)
    assert _fit(tmp_path, train, "--holdout", "0", "--sep", given)[0] == 0
    assert _fit(tmp_path, train, "--sep", ",")[0] == 1
    _one_error(capsys, "has no column 'y'", "(the header was split on commas", "--sep")


def test_a_decimal_comma_file_gets_a_hint_and_reads_with_decimal(tmp_path, capsys):
    X, y = _data()
    train = _csv(tmp_path / "t.csv", X, y, sep=";", fmt=lambda v: f"{v:.6f}".replace(".", ","))
    assert _fit(tmp_path, train)[0] == 1
    _one_error(capsys, "t.csv, line 2, column 'a'", "is not a number", "--decimal ','")
    status, out = _fit(tmp_path, train, "--decimal", ",")
    assert status == 0
    X_read = cio.CSVFile(train, decimal=",").read(["a", "b"])[["a", "b"]].to_numpy()
    np.testing.assert_allclose(X_read, X, atol=1e-6)


@pytest.mark.parametrize(
    "text, message",
    [
        ("a,b,y\n1,2,x\n3,4\n5,6,z\n", "line 3: 2 fields, but the header has 3 columns"),
        ("a,y,b\n1,x,2\n3,z\n5,z,6\n", "line 3: 2 fields, but the header has 3 columns"),
        ("a,b,y\n1,2,x,5\n3,4,z,6\n", "line 2: 4 fields, but the header has 3 columns"),
        ("a,b,y\n1,2,x\n\n3,4,z,9\n", "line 4: 4 fields, but the header has 3 columns"),
        ("a,b,y\n", "has a header but no data rows"),
        ("a,a,y\n1,2,x\n", "duplicate column names in the header: ['a']"),
        ("a,,y\n1,2,x\n", "line 1: the header has an empty name"),
        ("\n\n", "is empty"),
    ],
)
def test_malformed_files_name_the_line(tmp_path, capsys, text, message):
    train = tmp_path / "t.csv"
    train.write_text(text)
    assert _fit(tmp_path, train)[0] == 1
    _one_error(capsys, message)


def test_float_parsing_is_exact(tmp_path):
    rng = np.random.default_rng(3)
    values = np.concatenate(
        [rng.normal(size=500) * 10.0 ** rng.integers(-300, 300, size=500), [5e-324, 1.7e308]]
    )
    texts = [repr(float(v)) for v in values] + ["0.1", "1.0000000000000002", "2.5e-3", " 7 "]
    expected = np.concatenate([values, [0.1, 1.0000000000000002, 2.5e-3, 7.0]])
    path = tmp_path / "floats.csv"
    path.write_text("x,y\n" + "".join(f"{t},a\n" for t in texts))
    got = cio.CSVFile(path).read(["x"])["x"].to_numpy()
    np.testing.assert_array_equal(got, expected)  # bit for bit, as Python's float()


# --------------------------------------------------------------------------- predict's output


@pytest.fixture
def iris_files(tmp_path):
    data = load_iris()
    frame = pd.DataFrame(data.data, columns=["sl", "sw", "pl", "pw"])
    frame.insert(0, "id", [f"row{i}" for i in range(150)])
    frame["species"] = data.target_names[data.target]
    full = tmp_path / "full.csv"
    frame.to_csv(full, index=False)
    train = tmp_path / "train.csv"
    frame.drop(columns=["id"]).to_csv(train, index=False)
    model = tmp_path / "m.skops"
    assert main(["fit", str(train), "--target", "species", "--out", str(model)]) == 0
    return full, model


def _predict(capsys, *argv):
    capsys.readouterr()
    assert main(["predict", *map(str, argv)]) == 0
    return pd.read_csv(io.StringIO(capsys.readouterr().out), dtype={"id": str})


def test_predict_writes_labels_ids_and_readable_probabilities(iris_files, capsys):
    full, model = iris_files
    frame = _predict(capsys, model, full, "--id", "id")
    assert list(frame.columns) == [
        "id",
        "prediction",
        "proba_setosa",
        "proba_versicolor",
        "proba_virginica",
    ]
    assert frame["id"].tolist() == [f"row{i}" for i in range(150)]
    assert (frame["prediction"] == load_iris().target_names[load_iris().target]).mean() > 0.9
    P = frame.filter(like="proba_").to_numpy()
    assert np.allclose(P.sum(axis=1), 1, atol=1e-5)
    text = full.with_name("out.csv")
    assert main(["predict", str(model), str(full), "--id", "id", "--out", str(text)]) == 0
    longest = max(len(v) for line in text.read_text().splitlines()[1:] for v in line.split(","))
    assert longest <= 12  # %.6g, not 17 digits
    kept = _predict(capsys, model, full, "--keep-extra")
    assert list(kept.columns[:3]) == ["id", "species", "prediction"]


def test_extra_columns_are_refused_with_the_way_out(iris_files, capsys):
    full, model = iris_files
    assert main(["predict", str(model), str(full)]) == 1
    _one_error(capsys, "unexpected ['id']", "--id COLUMN", "--keep-extra")
    assert main(["predict", str(model), str(full), "--id", "nope"]) == 1
    _one_error(capsys, "has no column 'nope' (--id)")
    assert main(["predict", str(model), str(full), "--id", "sl", "--keep-extra"]) == 1
    _one_error(capsys, "--id 'sl' is a feature of the model")
    assert main(["predict", str(model), str(full), "--keep-extra", "--float-format", "%d%d"]) == 1
    _one_error(capsys, "--float-format must be one printf-style float format")


def test_fit_reports_a_held_out_estimate(tmp_path, capsys):
    X, y = _data(90)
    train = _csv(tmp_path / "t.csv", X, y)
    assert _fit(tmp_path, train)[0] == 0
    report = capsys.readouterr().out
    assert "held-out estimate on 18 rows (20%): accuracy " in report and "log-loss " in report
    assert "training accuracy" in report
    assert _fit(tmp_path, train, "--holdout", "1.5")[0] == 1
    _one_error(capsys, "--holdout must be a fraction in [0, 1)")


def test_encoding_problems_are_named(tmp_path, capsys):
    latin = tmp_path / "latin.csv"
    latin.write_bytes("a,b,y\n1,2,caf\xe9\n3,4,x\n".encode("latin-1"))
    assert _fit(tmp_path, latin)[0] == 1
    _one_error(capsys, "latin.csv, line 2: not UTF-8 text", "at byte 13 of the file")
    X, y = _data()
    bom = _csv(tmp_path / "bom.csv", X, y)
    bom.write_bytes(b"\xef\xbb\xbf" + bom.read_bytes())  # a byte-order mark, as Excel writes
    assert cio.CSVFile(bom).columns == ["a", "b", "y"]
