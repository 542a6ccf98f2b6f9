"""The loader and the command line against crafted files and faults: every
failure is one ``convexagg: error: ...`` line, nothing half-written."""

import contextlib
import os
import resource
import signal
import subprocess
import sys
import textwrap
import threading
import time

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import load_iris

import convexagg.io as cio
from convexagg import ConvexAggregationClassifier
from convexagg.cli import main

FEATURES = ["a", "b", "c", "d"]


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """A training CSV, a model `convexagg fit` saved from it, and rows to predict."""
    folder = tmp_path_factory.mktemp("crafted")
    data = load_iris()
    frame = pd.DataFrame(data.data, columns=FEATURES)
    frame["species"] = data.target_names[data.target]
    train = folder / "train.csv"
    frame.to_csv(train, index=False)
    model = folder / "model.skops"
    argv = ["fit", str(train), "--target", "species", "--out", str(model)]
    assert main([*argv, "--cv", "none", "--holdout", "0"]) == 0
    rows = folder / "rows.csv"
    frame[FEATURES].to_csv(rows, index=False)
    return {"folder": folder, "train": train, "model": model, "rows": rows}


def _one_error(capsys, argv, *fragments):
    capsys.readouterr()
    assert main([str(a) for a in argv]) == 1
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert "Traceback" not in err and lines[-1].startswith("convexagg: error: "), err
    assert sum(line.startswith("convexagg: error: ") for line in lines) == 1, err
    for fragment in fragments:
        assert fragment in lines[-1], lines[-1]
    return lines[-1]


# --------------------------------------------------------------------------- crafted bundles


def _bundle(files, **change):
    bundle = cio.load(files["model"])
    bundle.update(change)
    return bundle


@pytest.mark.parametrize(
    "change, message",
    [
        ({"features": None}, "its 'features' entry must be a list of column names, got nothing"),
        ({"features": "a,b,c,d"}, "its 'features' entry must be a list of column names, got str"),
        ({"features": [1, 2, 3, 4]}, "got a list with non-names"),
        ({"features": ["a", "a", "c", "d"]}, "its 'features' entry repeats a name"),
        ({"features": ["a", "b"]}, "names 2 features for a model of 4 features"),
        ({"target": 3}, "its 'target' entry is not a name"),
        ({"ids": "x"}, "its 'ids' entry must be a list"),
        ({"model": "a string"}, "holds a str, not a fitted classifier"),
        ({"model": ConvexAggregationClassifier()}, "without its fitted classes"),
        ({"format": "something/9"}, "does not hold a model saved by `convexagg fit`"),
    ],
)
def test_a_crafted_bundle_is_one_error_line(files, tmp_path, capsys, change, message):
    bundle = _bundle(files, **change)
    if change.get("features", 0) is None:
        del bundle["features"]
    crafted = tmp_path / "crafted.skops"
    cio.save(bundle, crafted)
    _one_error(capsys, ["predict", crafted, files["rows"]], f"{crafted} ", message)


def test_a_stripped_estimator_is_one_error_line(files, tmp_path, capsys):
    bundle = _bundle(files)
    del bundle["model"][-1].decoder_  # the classifier's fitted attributes removed, classes_ kept
    crafted = tmp_path / "stripped.skops"
    cio.save(bundle, crafted)
    _one_error(capsys, ["predict", crafted, files["rows"]], "its model cannot predict")


def test_a_bare_string_as_the_model_file(files, tmp_path, capsys):
    crafted = tmp_path / "string.skops"
    cio.save("not a model", crafted)
    _one_error(capsys, ["predict", crafted, files["rows"]], "holds a str, not a fitted classifier")


# --------------------------------------------------------------------------- files


def test_a_binary_file_is_not_a_text_csv(files, tmp_path, capsys):
    binary = tmp_path / "data.bin"
    binary.write_bytes(np.arange(300, dtype=np.int32).tobytes())
    argv = ["fit", binary, "--target", "y", "--out", tmp_path / "m.skops"]
    _one_error(capsys, argv, "is not a text CSV file: it holds binary data (a NUL byte")
    _one_error(capsys, ["predict", files["model"], binary], "is not a text CSV file")


def test_reads_are_bounded_before_parsing(tmp_path):
    import gzip

    bomb = tmp_path / "bomb.csv.gz"
    bomb.write_bytes(gzip.compress(b"a,b\n" + b"1,2\n" * 300_000))  # 1.2 MB of text
    assert bomb.stat().st_size < 100_000
    with pytest.raises(ValueError, match="decompresses to more than 100000 bytes"):
        cio.CSVFile(bomb, max_bytes=100_000)
    plain = tmp_path / "plain.csv"
    plain.write_text("a,b\n" + "1,2\n" * 100)
    with pytest.raises(ValueError, match=r"404 bytes, above the limit of 100 \(max_bytes\)"):
        cio.CSVFile(plain, max_bytes=100)


def test_a_named_pipe_is_refused_without_blocking(files, tmp_path, capsys):
    fifo = tmp_path / "pipe.csv"
    os.mkfifo(fifo)
    stop = threading.Event()

    def release_readers():  # a reader blocked on the pipe gets end-of-file: no hang
        while not stop.is_set():
            with contextlib.suppress(OSError):  # ENXIO: nobody is reading
                os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
            time.sleep(0.2)

    releaser = threading.Thread(target=release_readers, daemon=True)
    releaser.start()
    try:
        for argv in (["predict", files["model"], fifo], ["predict", fifo, files["rows"]]):
            _one_error(capsys, argv, "is a named pipe, not a regular file")
    finally:
        stop.set()
        releaser.join()


def _capped(argv, cap=2**31):
    """Run the command line in a process whose address space is capped at ``cap``: an
    unbounded read fails there quickly instead of filling the machine's memory."""

    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))

    env = {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}
    code = "import sys; from convexagg.cli import main; sys.exit(main(sys.argv[1:]))"
    return subprocess.run(
        [sys.executable, "-c", code, *map(str, argv)],
        capture_output=True,
        text=True,
        preexec_fn=limit,
        env=env,
        timeout=300,
    )


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")
@pytest.mark.parametrize("which", ["model", "data"])
def test_dev_zero_is_refused_before_reading(files, which):
    argv = ["predict", files["model"], files["rows"]]
    argv[1 if which == "model" else 2] = "/dev/zero"
    done = _capped(argv)
    assert done.returncode == 1, done.stderr[-2000:]
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("convexagg: error: /dev/zero is a character device, not a regular")


# --------------------------------------------------------------------------- signals


def test_sigterm_during_predict_out_leaves_no_temporary_file(files, tmp_path):
    """The write is held inside ``atomic_write`` (its fsync waits), the process gets
    SIGTERM there: it ends with one error line and status 143, and removes its
    temporary file as it does on an error."""
    ready = tmp_path / "ready"
    out = tmp_path / "pred.csv"
    script = textwrap.dedent(
        f"""
        import os, sys, time
        def held_fsync(fd):
            open({str(ready)!r}, "w").close()
            time.sleep(120)
        os.fsync = held_fsync
        from convexagg.cli import main
        sys.exit(main(["predict", {str(files["model"])!r}, {str(files["rows"])!r},
                       "--out", {str(out)!r}]))
        """
    )
    env = {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}
    child = subprocess.Popen(
        [sys.executable, "-c", script], stderr=subprocess.PIPE, text=True, env=env
    )
    try:
        deadline = time.monotonic() + 240
        while not ready.exists() and child.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert ready.exists(), "the child never reached the write"
        assert [p.name for p in tmp_path.glob(".pred.csv.*.tmp")]  # the write is under way
        child.send_signal(signal.SIGTERM)
        _, err = child.communicate(timeout=60)
    finally:
        if child.poll() is None:
            child.kill()
    assert child.returncode == 128 + signal.SIGTERM, err
    assert err.strip().splitlines()[-1] == (
        "convexagg: error: terminated by SIGTERM; no file was left half-written"
    )
    assert not out.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ready"]  # no .tmp left


# --------------------------------------------------------------------------- feature names


@pytest.fixture(scope="module")
def frame():
    data = load_iris()
    return pd.DataFrame(data.data, columns=FEATURES), data.target


def test_a_model_with_feature_names_reorders_by_name(frame, tmp_path, capsys):
    X, y = frame
    model = ConvexAggregationClassifier(cv="in_sample").fit(X, y)  # a DataFrame: names recorded
    path = tmp_path / "named.skops"
    cio.save(model, path)
    data = tmp_path / "rows.csv"
    X[["d", "b", "a", "c"]].to_csv(data, index=False)
    out = tmp_path / "p.csv"
    argv = ["predict", str(path), str(data), "--out", str(out), "--float-format", "%.17g"]
    assert main(argv) == 0
    assert capsys.readouterr().err == ""
    got = pd.read_csv(out)
    expected = model.predict_proba(X)  # the training order, not the file's
    np.testing.assert_array_equal(got[["proba_0", "proba_1", "proba_2"]].to_numpy(), expected)
    X[["d", "b", "a"]].to_csv(data, index=False)
    _one_error(capsys, ["predict", path, data], "missing ['c']")


def test_a_model_without_feature_names_warns_that_it_goes_by_position(frame, tmp_path, capsys):
    X, y = frame
    model = ConvexAggregationClassifier(cv="in_sample").fit(X.to_numpy(), y)  # no names
    path = tmp_path / "bare.skops"
    cio.save(model, path)
    data = tmp_path / "rows.csv"
    X[["d", "b", "a", "c"]].to_csv(data, index=False)
    capsys.readouterr()
    assert main(["predict", str(path), str(data)]) == 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("convexagg: warning: UserWarning: ")
    assert "records no feature names" in err[0] and "taken by position, unchecked" in err[0]
    assert "['d', 'b', 'a', 'c']" in err[0]


def test_warnings_come_before_the_error_line(frame, tmp_path, capsys):
    X, y = frame
    path = tmp_path / "bare.skops"
    cio.save(ConvexAggregationClassifier(cv="in_sample").fit(X.to_numpy(), y), path)
    data = tmp_path / "rows.csv"
    bad = X.astype(object)
    bad.iloc[3, 1] = "abc"
    bad.to_csv(data, index=False)
    capsys.readouterr()
    assert main(["predict", str(path), str(data)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err[0].startswith("convexagg: warning: UserWarning: ") and len(err) == 2, err
    assert err[1].startswith("convexagg: error: ") and "'abc' is not a number" in err[1]


def test_ctrl_c_is_one_error_line(monkeypatch, capsys):
    import convexagg.cli as cli

    def interrupted(args):
        raise KeyboardInterrupt

    monkeypatch.setitem(cli.HANDLERS, "predict", interrupted)
    assert main(["predict", "m.skops", "d.csv"]) == 130
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["convexagg: error: interrupted (SIGINT); no file was left half-written"]
