"""Plumbing of the reproduction: loader, runner, cache/resume, tables, CLI, figures.

Tiny synthetic data written to tmp_path; nothing here reads the real data sets and
no number is checked against the paper.
"""

import csv
import gzip
import json

import numpy as np
import pytest

from convexagg.cli import main
from convexagg.datasets import (
    DATA_DIR_ENV,
    load_csv_dataset,
    load_dataset,
    make_gaussian_classes,
)
from convexagg.experiments import runner as runner_mod
from convexagg.experiments.protocol import Protocol, make_split
from convexagg.experiments.runner import ROW_KEYS, RunConfig, plan, read_csv, run, write_csv
from convexagg.experiments.tables import load_paper_results, render_all

SMALL = Protocol(c_grid=(0.5, 2.0), msvm_grid=(1.0, 100.0), lmr_n_lambdas=3, ecoc_candidates=20)
METHODS = ["msvm", "lmr", "loss_based", "convex"]
CODES = ["ovo", "ovr", "ecoc"]


def write_csv_gz(path, header, rows):
    with gzip.open(path, "wt", newline="") as f:
        w = csv.writer(f)
        w.writerow(header)
        w.writerows(rows)


@pytest.fixture
def data_dir(tmp_path):
    """A 4-class, 3-feature data set of 80 rows with string labels, as 'tiny.csv.gz'."""
    rng = np.random.default_rng(0)
    y = np.repeat(["a", "b", "c", "d"], 20)
    centers = {"a": (0, 0, 0), "b": (3, 0, 0), "c": (0, 3, 0), "d": (3, 3, 1)}
    X = np.array([centers[label] for label in y]) + rng.normal(size=(80, 3))
    rows = [[f"{v:.4f}" for v in x] + [label] for x, label in zip(X, y)]
    directory = tmp_path / "data"
    directory.mkdir()
    write_csv_gz(directory / "tiny.csv.gz", ["f0", "f1", "f2", "label"], rows)
    return directory


# ----------------------------------------------------------------------------- loader


def test_loader_reads_label_from_last_column(data_dir):
    ds = load_dataset("tiny", data_dir)
    assert ds.X.shape == (80, 3) and ds.n_classes == 4
    assert ds.feature_names == ["f0", "f1", "f2"]
    assert set(ds.y) == {"a", "b", "c", "d"}


def test_loader_uses_environment_variable(data_dir, monkeypatch):
    monkeypatch.setenv(DATA_DIR_ENV, str(data_dir))
    assert load_dataset("tiny").X.shape == (80, 3)


def test_loader_rejects_file_without_label_column(tmp_path):
    rng = np.random.default_rng(1)
    rows = [[f"{v:.5f}" for v in r] for r in rng.normal(size=(30, 3))]
    path = tmp_path / "nolabel.csv.gz"
    write_csv_gz(path, ["f0", "f1", "f2"], rows)
    with pytest.raises(ValueError, match="label column is missing"):
        load_csv_dataset(path)


def test_loader_rejects_rows_missing_the_label(tmp_path):
    path = tmp_path / "short.csv"
    path.write_text("f0,f1,label\n1,2,a\n3,4\n")
    with pytest.raises(ValueError, match="line 3: 2 fields, but the header has 3 columns"):
        load_csv_dataset(path)


def test_loader_rejects_empty_label_and_single_column(tmp_path):
    empty = tmp_path / "empty.csv"
    empty.write_text("f0,label\n1,a\n2,\n")
    with pytest.raises(
        ValueError, match="line 3, column 'label': the label .last column. is missing"
    ):
        load_csv_dataset(empty)
    single = tmp_path / "single.csv"
    single.write_text("label\na\nb\n")
    with pytest.raises(ValueError, match="only one column"):
        load_csv_dataset(single)


def test_missing_dataset_names_the_embedded_ones(tmp_path):
    with pytest.raises(FileNotFoundError, match="digits, wine, iris"):
        load_dataset("nonexistent", tmp_path)


def test_embedded_datasets_need_no_data_dir():
    assert load_dataset("iris").X.shape == (150, 4)


def test_gaussian_generator_shapes():
    X_tr, y_tr, X_te, y_te = make_gaussian_classes(5, 10, 20, random_state=0)
    assert X_tr.shape == (50, 2) and X_te.shape == (100, 2)
    assert np.bincount(y_tr).tolist() == [10] * 5


# ----------------------------------------------------------------------------- protocol


def test_split_is_stratified_standardised_and_deterministic(data_dir):
    ds = load_dataset("tiny", data_dir)
    a, b = make_split(ds, 3, SMALL), make_split(ds, 3, SMALL)
    assert np.array_equal(a.X_test, b.X_test)
    assert a.y_test.size == 8 and np.bincount(a.y_test).tolist() == [2, 2, 2, 2]
    assert np.allclose(a.X_train.mean(axis=0), 0, atol=1e-12)
    assert a.val_mask.sum() == np.ceil(0.2 * a.y_train.size)


# ----------------------------------------------------------------------------- runner


def config(data_dir, out, **kw):
    args = dict(
        datasets=["tiny"],
        codes=CODES,
        methods=METHODS,
        reps=2,
        data_dir=str(data_dir),
        out=str(out),
        protocol=SMALL,
    )
    args.update(kw)
    return RunConfig(**args)


def test_run_produces_every_split_and_table_shapes(data_dir, tmp_path):
    cfg = config(data_dir, tmp_path / "out")
    rows, errors = run(cfg, progress=False, log=lambda s: None)
    assert errors == []
    # 2 splits x (3 codes x 2 aggregation methods + 2 direct methods)
    assert len(rows) == 2 * (3 * 2 + 2)
    write_csv(rows, tmp_path / "out" / "results.csv")
    back = read_csv(tmp_path / "out" / "results.csv")
    assert len(back) == len(rows) and list(back[0]) == list(ROW_KEYS)
    msvm = [r for r in back if r["method"] == "msvm"]
    assert all(np.isnan(r["mse"]) for r in msvm)  # labels only
    convex = [r for r in back if r["method"] == "convex"]
    assert all(0 <= r["accuracy"] <= 1 and r["mse"] >= 0 and r["n_iter"] > 0 for r in convex)
    assert all(np.isnan(r["top_label_ece"]) and np.isnan(r["classwise_ece"]) for r in msvm)
    assert all(0 <= r["top_label_ece"] <= 1 and 0 <= r["classwise_ece"] <= 1 for r in convex)

    md = render_all(rows, ["tiny"], CODES, METHODS, "linear", 2)
    acc = md.split("### Classification accuracy")[1].split("###")[0]
    lines = [line for line in acc.splitlines() if line.startswith("|")]
    assert lines[0].split("|")[1:-1] == [
        " Dataset ",
        " M-SVM ",
        " LMR ",
        " Encoding ",
        " Loss-based ",
        " Convex (ours) ",
    ]
    assert len(lines) == 2 + 3  # header, separator, one row per code
    assert "n=" not in acc  # every cell has both splits
    ece = md.split("### Calibration error (no paper value)")[1].split("###")[0]
    lines = [line.split("|")[1:-1] for line in ece.splitlines() if line.startswith("|")]
    assert [c.strip() for c in lines[0]] == [
        "Dataset",
        "LMR",  # M-SVM has no probabilities
        "Encoding",
        "ECE",
        "Loss-based",
        "Convex (ours)",
    ]
    assert [c.strip() for c in lines[2][2:4]] == ["APs", "top-label"]
    assert [c.strip() for c in lines[3][2:4]] == ["", "classwise"]
    assert len(lines) == 2 + 3 * 2 and "—" not in ece  # two rows per code, all measured


def test_resume_skips_finished_work_and_reuses_binaries(data_dir, tmp_path, monkeypatch):
    cfg = config(data_dir, tmp_path / "out")
    run(cfg, progress=False, log=lambda s: None)
    assert plan(cfg)[0] == []

    def no_training(*args, **kwargs):
        raise AssertionError("binaries retrained although cached")

    monkeypatch.setattr(runner_mod, "fit_tuned_binaries", no_training)
    # A second identical run does nothing.
    rows, errors = run(cfg, progress=False, log=lambda s: None)
    assert errors == [] and len(rows) == 16
    # A lost method result is recomputed from the cached binary outputs.
    lost = cfg.data_cache("tiny") / "logreg" / "ovo" / "rep01" / "convex.json"
    before = json.loads(lost.read_text())
    lost.unlink()
    tasks, done = plan(cfg)
    assert [(t.kind, t.code, t.rep, t.methods) for t in tasks] == [("agg", "ovo", 1, ("convex",))]
    rows, errors = run(cfg, progress=False, log=lambda s: None)
    assert errors == [] and len(rows) == 16
    after = json.loads(lost.read_text())
    assert after["accuracy"] == before["accuracy"] and after["mse"] == pytest.approx(before["mse"])


def test_results_without_calibration_errors_are_recomputed(data_dir, tmp_path, monkeypatch):
    cfg = config(data_dir, tmp_path / "out", codes=["ovr"], methods=["lmr", "convex"], reps=1)
    run(cfg, progress=False, log=lambda s: None)
    old = cfg.data_cache("tiny") / "logreg" / "ovr" / "rep00" / "convex.json"
    row = json.loads(old.read_text())
    del row["top_label_ece"], row["classwise_ece"]  # as an older convexagg wrote it
    old.write_text(json.dumps(row))

    def no_training(*args, **kwargs):
        raise AssertionError("binaries retrained although cached")

    monkeypatch.setattr(runner_mod, "fit_tuned_binaries", no_training)
    assert [(t.code, t.methods) for t in plan(cfg)[0]] == [("ovr", ("convex",))]
    rows, errors = run(cfg, progress=False, log=lambda s: None)
    convex = next(r for r in rows if r["method"] == "convex")
    assert errors == [] and np.isfinite(convex["top_label_ece"])
    assert convex["accuracy"] == row["accuracy"]


def test_a_failing_task_is_reported_and_the_rest_kept(data_dir, tmp_path, monkeypatch):
    cfg = config(data_dir, tmp_path / "out", codes=["ovr"], methods=["convex"])

    def boom(*args, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr(runner_mod, "fit_tuned_binaries", boom)
    rows, errors = run(cfg, progress=False, log=lambda s: None)
    assert rows == [] and len(errors) == 2 and "boom" in errors[0][1]
    assert not list(cfg.cache.rglob("*.tmp"))  # no half-written files


def test_protocol_changes_use_a_separate_cache(data_dir, tmp_path):
    a = config(data_dir, tmp_path / "out")
    b = config(data_dir, tmp_path / "out", protocol=Protocol(seed=1, c_grid=(1.0,)))
    assert a.cache != b.cache


def test_unknown_method_is_an_error(data_dir, tmp_path):
    with pytest.raises(ValueError, match="unknown methods"):
        run(config(data_dir, tmp_path, methods=["nonsense"]), progress=False)


# ----------------------------------------------------------------------------- tables, CLI


def test_paper_results_hold_the_published_tables():
    paper = load_paper_results()
    assert paper[("accuracy_linear", "letter", "ovo", "convex", "accuracy")] == (0.844, 0.007)
    assert paper[("mse_linear", "letter", "ovo", "convex", "mse")] == (0.232, 0.007)
    assert paper[("accuracy_linear", "letter", "", "msvm", "accuracy")] == (0.784, 0.009)
    n_acc = sum(1 for k in paper if k[0] == "accuracy_linear")
    assert n_acc == 8 * (2 + 3 * 4)  # 8 data sets, 2 direct + 3 codes x 4 aggregations


def test_cli_reproduce_writes_csv_and_tables(data_dir, tmp_path, capsys):
    out = tmp_path / "cli"
    code = main(
        [
            "reproduce",
            "--datasets",
            "tiny",
            "--data-dir",
            str(data_dir),
            "--reps",
            "2",
            "--codes",
            "ovo,ecoc",
            "--methods",
            "loss_based,convex,lmr",
            "--out",
            str(out),
            "--no-progress",
        ]
    )
    assert code == 0
    printed = capsys.readouterr().out
    assert "### Classification accuracy" in printed and "results.csv" in printed
    with open(out / "results.csv") as f:
        assert len(list(csv.DictReader(f))) == 2 * (2 * 2 + 1)
    # accuracy, MSE, log-loss, calibration error, training time, test time
    assert (out / "tables.md").read_text().count("| tiny (no paper value) |") == 6


# ----------------------------------------------------------------------------- figures


def test_figures_are_written(data_dir, tmp_path):
    pytest.importorskip("matplotlib")
    from convexagg.experiments.figures import figure3, figure4, figure5

    # a small stand-in for vowel: 6 classes, 2 features
    X_tr, y_tr, _, _ = make_gaussian_classes(6, 15, 0, scale=6.0, random_state=0)
    rows = [[f"{a:.4f}", f"{b:.4f}", str(k)] for (a, b), k in zip(X_tr, y_tr)]
    write_csv_gz(data_dir / "vowel.csv.gz", ["f0", "f1", "label"], rows)
    out = tmp_path / "figs"
    out.mkdir()
    f3 = figure3(out, data_dir, alphas=[1e-3, 1e0], ecoc_candidates=5)
    assert f3["dataset"] == "vowel" and f3["path"]["weights"].shape[0] == 2
    f4 = figure4(out)
    assert f4["objective"].size == f4["accuracy"].size == f4["n_iter"] + 1
    f5 = figure5(out, ks=(3,), runs=1, n_train=20, n_test=20, progress=False)
    assert set(f5["mean"]) == {f"{c}/{m}" for c in CODES for m in ("loss_based", "convex")}
    for name in (
        "fig3_regularization_path.png",
        "fig4_interior_point.png",
        "fig5_accuracy_vs_classes.png",
    ):
        assert (out / name).stat().st_size > 1000


def test_loss_based_method_matches_the_spec_oracles():
    """Spec section 4.2 oracles 1-2, and don't-care entries counting exp(0) = 1."""
    from convexagg.codes import one_vs_one, one_vs_rest
    from convexagg.experiments.methods import MethodContext, make_decoder

    ctx = MethodContext("x", "logreg", 3, 3)
    for code, q, expected in [
        (one_vs_one(3), [0.9, 0.8, 0.3], [0.4124116407, 0.2671986124, 0.3203897469]),
        (one_vs_rest(3), [0.7, 0.4, 0.1], [0.4027628479, 0.3294241358, 0.2678130163]),
    ]:
        Q = np.array([q] * 3)
        dec = make_decoder("loss_based", ctx).fit(Q, np.arange(3), code)
        assert np.allclose(dec.predict_proba(Q[:1]), expected, atol=1e-9)
    # A sparse code: class 2 has a zero, so its discrepancy is (d + d + 1) / 3.
    code = np.array([[1, 1, 1], [-1, 1, -1], [0, -1, 1]])
    Q = np.array([[0.5, 0.5, 0.5]] * 3)
    dec = make_decoder("loss_based", ctx).fit(Q, np.arange(3), code)
    assert np.allclose(dec.predict_proba(Q[:1]), 1 / 3)


def test_the_reproductions_convex_method_is_the_papers_model():
    """``convexagg reproduce`` builds its own decoder: one weight per classifier and the
    paper's Algorithm 1, whatever ConvexAggregationClassifier's default (entry weights)."""
    from convexagg.decoders import ConvexDecoder
    from convexagg.experiments.methods import MethodContext, make_decoder
    from convexagg.experiments.protocol import PAPER_SOLVER

    dec = make_decoder("convex", MethodContext("x", "logreg", 3, 3, alpha=1e-3))
    assert type(dec) is ConvexDecoder and dec.entry_weight_shrinkage is None
    assert dec.solver is PAPER_SOLVER and dec.alpha == 1e-3 and not dec.fit_intercept


def test_one_failing_method_keeps_the_others(data_dir, tmp_path, monkeypatch):
    from convexagg.experiments import methods

    def broken(ctx):
        raise np.linalg.LinAlgError("Singular matrix")

    monkeypatch.setitem(methods.AGGREGATION_METHODS, "gbtm", broken)
    cfg = config(data_dir, tmp_path / "out", codes=["ovr"], methods=["gbtm", "convex"], reps=1)
    rows, errors = run(cfg, progress=False, log=lambda s: None)
    assert [r["method"] for r in rows] == ["convex"]
    assert len(errors) == 1 and "method gbtm" in errors[0][1] and "Singular" in errors[0][1]


def test_validation_ties_go_to_the_configured_C():
    from convexagg.experiments.protocol import _break_ties

    tied = [{"C": 0.5}, {"C": 4.0}, {"C": 1.0}]
    assert _break_ties(tied, "largest") == {"C": 4.0}
    assert _break_ties(tied, "smallest") == {"C": 0.5}
    rbf = [{"C": 2.0, "gamma": 1.0}, {"C": 2.0, "gamma": 0.25}, {"C": 1.0, "gamma": 0.1}]
    assert _break_ties(rbf, "largest") == {"C": 2.0, "gamma": 0.25}
    assert Protocol(c_ties="smallest").fingerprint() != Protocol().fingerprint()


def test_a_hard_decoder_is_scored_by_its_labels(tmp_path):
    """Hamming decoding gives labels only: accuracy, and NaN for the probability scores."""
    from convexagg.experiments.protocol import Protocol
    from convexagg.experiments.runner import RunConfig, run

    cfg = RunConfig(
        datasets=["iris"],
        codes=["ovo"],
        methods=["hamming"],
        reps=1,
        out=str(tmp_path),
        protocol=Protocol(c_grid=(1.0,)),
    )
    rows, errors = run(cfg, progress=False, log=lambda text: None)
    assert not errors and len(rows) == 1
    assert 0.5 < rows[0]["accuracy"] <= 1.0 and np.isnan(rows[0]["log_loss"])
