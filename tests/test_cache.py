"""The reproduction's cache and command line: keyed on the data's content
and the library's version, healing unreadable entries, seeded direct baselines,
one error line for every user error, optional dependencies named."""

import csv
import gzip
import json
import sys

import numpy as np
import pytest

import convexagg
from convexagg.cli import main
from convexagg.datasets import load_dataset
from convexagg.experiments import protocol as protocol_mod
from convexagg.experiments import runner as runner_mod
from convexagg.experiments.direct import run_direct
from convexagg.experiments.protocol import Protocol, make_split
from convexagg.experiments.runner import RunConfig, plan, read_cached, run

SMALL = Protocol(c_grid=(0.5, 2.0), msvm_grid=(1.0, 100.0), lmr_n_lambdas=3, ecoc_candidates=20)


def _write_data(directory, shift=0.0, n_classes=8):
    rng = np.random.default_rng(0)
    y = np.repeat([f"c{k}" for k in range(n_classes)], 12)
    X = rng.normal(size=(y.size, 3)) + 3 * np.arange(y.size)[:, None] % n_classes + shift
    directory.mkdir(exist_ok=True)
    with gzip.open(directory / "tiny.csv.gz", "wt", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["f0", "f1", "f2", "label"])
        writer.writerows([[f"{v:.4f}" for v in x] + [label] for x, label in zip(X, y)])
    runner_mod._dataset.cache_clear()  # the runner keeps loaded data sets per process
    return directory


@pytest.fixture
def data_dir(tmp_path):
    return _write_data(tmp_path / "data")


def _config(data_dir, out, **kw):
    args = dict(
        datasets=["tiny"],
        codes=["ecoc"],
        methods=["convex"],
        reps=1,
        data_dir=str(data_dir),
        out=str(out),
        protocol=SMALL,
    )
    args.update(kw)
    return RunConfig(**args)


@pytest.fixture
def trainings(monkeypatch):
    """Counts the binary trainings the runner does (cache misses)."""
    calls = []
    real = runner_mod.fit_tuned_binaries

    def counting(*args, **kwargs):
        calls.append(args[1].rep)
        return real(*args, **kwargs)

    monkeypatch.setattr(runner_mod, "fit_tuned_binaries", counting)
    return calls


def _quiet_run(cfg):
    return run(cfg, progress=False, log=lambda s: None)


# --------------------------------------------------------------------------- keying


def test_changed_data_are_recomputed_not_reused(data_dir, tmp_path, trainings):
    cfg = _config(data_dir, tmp_path / "out")
    before, errors = _quiet_run(cfg)
    assert errors == [] and len(trainings) == 1
    _quiet_run(cfg)
    assert len(trainings) == 1  # same data: cached
    _write_data(data_dir, shift=0.5)  # same file name and protocol, other content
    after, errors = _quiet_run(cfg)
    assert errors == [] and len(trainings) == 2
    assert after[0]["accuracy"] != before[0]["accuracy"] or after[0]["mse"] != before[0]["mse"]
    assert len(list(cfg.cache.glob("tiny-*"))) == 2  # the old results are kept apart


def test_the_data_fingerprint_follows_the_content(data_dir):
    a = load_dataset("tiny", data_dir)
    b = load_dataset("tiny", data_dir)
    assert a.fingerprint() == b.fingerprint()
    b.X = b.X.copy()
    b.X[0, 0] += 1e-12
    b._fingerprint = None
    assert a.fingerprint() != b.fingerprint()


def test_another_library_version_gets_another_cache(data_dir, tmp_path, monkeypatch):
    cfg = _config(data_dir, tmp_path / "out")
    old = cfg.cache
    monkeypatch.setattr(protocol_mod, "__version__", convexagg.__version__ + ".post1")
    assert cfg.cache != old


# --------------------------------------------------------------------------- healing


def _damage(path, how):
    data = path.read_bytes()
    path.write_bytes({"truncate": data[: len(data) // 2], "garbage": b"\x00garbage"}[how])


@pytest.mark.parametrize("how", ["truncate", "garbage"])
def test_unreadable_cache_entries_are_recomputed(data_dir, tmp_path, trainings, how):
    cfg = _config(data_dir, tmp_path / "out")
    rows, errors = _quiet_run(cfg)
    assert errors == [] and len(trainings) == 1
    folder = cfg.data_cache("tiny")
    result = folder / "logreg" / "ecoc" / "rep00" / "convex.json"
    binary = result.with_name("binary.npz")
    code = folder / "code_ecoc.npy"
    expected = json.loads(result.read_text())
    for path in (result, binary, code):
        _damage(path, how)
    assert len(plan(cfg)[0]) == 1  # the damaged result counts as missing
    again, errors = _quiet_run(cfg)
    assert errors == [] and len(trainings) == 2
    assert again[0]["accuracy"] == rows[0]["accuracy"]
    assert json.loads(result.read_text())["accuracy"] == expected["accuracy"]
    assert np.load(code).shape[0] == 8  # rewritten, readable
    with np.load(binary) as f:
        assert "Q_train" in f.files


def test_read_cached_treats_what_it_cannot_read_as_missing(tmp_path):
    path = tmp_path / "entry.json"
    assert read_cached(path, lambda p: json.loads(p.read_text())) is None
    path.write_text('{"a": 1')
    assert read_cached(path, lambda p: json.loads(p.read_text())) is None
    assert not path.exists()  # removed, to be rewritten
    path.write_text('{"a": 1}')
    assert read_cached(path, lambda p: json.loads(p.read_text())) == {"a": 1}


# --------------------------------------------------------------------------- seeding


@pytest.mark.parametrize("method", ["lmr", "msvm"])
def test_direct_baselines_are_seeded(data_dir, method):
    split = make_split(load_dataset("tiny", data_dir), 0, SMALL)
    np.random.seed(1)
    first = run_direct(method, split, SMALL)
    np.random.seed(2)  # the global generator is not what decides
    second = run_direct(method, split, SMALL)
    for key in ("accuracy", "mse", "log_loss", "chosen"):
        np.testing.assert_equal(first[key], second[key])
    assert SMALL.direct_seed(0) != SMALL.direct_seed(1)


def test_the_solvers_get_the_seed(data_dir, monkeypatch):
    from convexagg.experiments import direct

    seen = []
    real = direct._lasso_multinomial

    def spy(C, **kwargs):
        seen.append(kwargs.get("random_state"))
        return real(C, **kwargs)

    monkeypatch.setattr(direct, "_lasso_multinomial", spy)
    split = make_split(load_dataset("tiny", data_dir), 3, SMALL)
    run_direct("lmr", split, SMALL)
    assert seen and set(seen) == {SMALL.direct_seed(3)}


# --------------------------------------------------------------------------- one error line


def _one_error(capsys, argv, *fragments):
    assert main(argv) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("convexagg: error: "), err
    for fragment in fragments:
        assert fragment in err[0], err[0]


@pytest.mark.parametrize(
    "extra, fragments",
    [
        (["--datasets", "nonexistent"], ["data set 'nonexistent' not found"]),
        (["--methods", "convex,nonsense"], ["unknown methods ['nonsense']"]),
        (["--codes", "ovo,xyz"], ["unknown codes ['xyz']"]),
        (["--base", "forest"], ["unknown base learner 'forest'"]),
        (["--jobs", "0"], ["--jobs must be a positive integer or -1"]),
        (["--jobs", "-3"], ["--jobs must be a positive integer or -1"]),
        (["--reps", "-1"], ["--reps must be an integer >= 1, got -1"]),
        (["--reps", "0"], ["--reps must be an integer >= 1, got 0"]),
        (["--seed", "-1"], ["--seed must be an integer >= 0"]),
        (["--ecoc-candidates", "0"], ["--ecoc-candidates must be an integer >= 1"]),
    ],
)
def test_reproduce_user_errors_are_one_line(data_dir, tmp_path, capsys, extra, fragments):
    out = tmp_path / "out"
    base = ["reproduce", "--datasets", "tiny", "--data-dir", str(data_dir), "--out", str(out)]
    _one_error(capsys, [*base, "--no-progress", "--reps", "1", *extra], *fragments)
    assert not (out / "results.csv").exists()


@pytest.mark.parametrize(
    "extra, fragment",
    [
        (["--ks", "1,3"], "--ks must be integers >= 2"),
        (["--ks", "a"], "--ks must be integers >= 2"),
        (["--runs", "0"], "--runs must be an integer >= 1"),
        (["--jobs", "0"], "--jobs must be a positive integer or -1"),
    ],
)
def test_figures_user_errors_are_one_line(tmp_path, capsys, extra, fragment):
    _one_error(capsys, ["figures", "--out", str(tmp_path / "f"), *extra], fragment)


def test_demo_runs_inside_the_error_handling(capsys):
    _one_error(capsys, ["demo", "--random-state", "-1"], "--random-state must be an integer >= 0")


# --------------------------------------------------------------------------- optional dependencies

EXTRA = 'pip install "convexagg[experiments]"'


def test_figures_without_matplotlib_is_one_line(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # as if not installed
    _one_error(
        capsys,
        ["figures", "--out", str(tmp_path / "f")],
        f"'convexagg figures' needs matplotlib: {EXTRA}",
    )
    from convexagg.experiments.figures import _pyplot

    with pytest.raises(ImportError, match=r"needs matplotlib: pip install .convexagg\[exp"):
        _pyplot()


def test_missing_tqdm_is_one_line(data_dir, tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "tqdm", None)
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)  # a terminal: the bar is drawn
    argv = ["reproduce", "--datasets", "tiny", "--data-dir", str(data_dir), "--reps", "1"]
    _one_error(
        capsys,
        [*argv, "--methods", "convex", "--codes", "ovr", "--out", str(tmp_path / "o")],
        f"the progress bar of 'convexagg reproduce' needs tqdm: {EXTRA} (or pass --no-progress)",
    )


def test_missing_dask_is_named(monkeypatch):
    from convexagg._dask import import_dask_array

    monkeypatch.setitem(sys.modules, "dask", None)
    with pytest.raises(ImportError, match=r'needs dask: pip install "convexagg\[dask\]"'):
        import_dask_array()
