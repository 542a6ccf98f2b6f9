"""No write ever destroys a file: outputs that are inputs,
directories, device nodes, FIFOs and links, through the one guard in
``convexagg.io.atomic_write`` that every write uses."""

import os
import stat
import threading

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import load_iris

import convexagg.io as cio
from convexagg.cli import main
from convexagg.experiments.runner import write_json

FEATURES = ["a", "b", "c", "d"]


@pytest.fixture
def train(tmp_path):
    data = load_iris()
    frame = pd.DataFrame(data.data, columns=FEATURES)
    frame["species"] = data.target_names[data.target]
    path = tmp_path / "train.csv"
    frame.to_csv(path, index=False)
    return path


@pytest.fixture
def model(train, tmp_path):
    out = tmp_path / "model.skops"
    argv = ["fit", str(train), "--target", "species", "--out", str(out), "--holdout", "0"]
    assert main(argv) == 0
    return out


def _one_error(capsys, argv, *fragments):
    assert main(argv) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("convexagg: error: "), err
    for fragment in fragments:
        assert fragment in err[0]
    return err[0]


def _snapshot(*paths):
    return {p: p.read_bytes() for p in paths}


# --------------------------------------------------------------------------- inputs


def test_fit_never_replaces_its_training_data(train, tmp_path, capsys):
    before = _snapshot(train)
    hard = tmp_path / "hard.csv"
    os.link(train, hard)
    soft = tmp_path / "soft.csv"
    soft.symlink_to(train)
    relative = os.path.relpath(train)  # the same file spelled differently
    for out in (train, hard, soft, relative):
        argv = ["fit", str(train), "--target", "species", "--out", str(out)]
        _one_error(capsys, argv, "it is the input file", "destroy the input")
    assert _snapshot(train) == before and soft.is_symlink()


@pytest.mark.parametrize("which", ["data", "model"])
def test_predict_never_replaces_its_inputs(train, model, capsys, which):
    capsys.readouterr()
    before = _snapshot(train, model)
    out = {"data": train, "model": model}[which]
    argv = ["predict", str(model), str(train), "--out", str(out)]
    _one_error(capsys, argv, f"cannot write {out}: it is the input file")
    assert _snapshot(train, model) == before


def test_the_guard_is_in_atomic_write(tmp_path):
    """Every writer inherits it: the API's save, the CSV writer, the cache writer."""
    path = tmp_path / "data.csv"
    path.write_text("precious\n")
    with pytest.raises(ValueError, match="it is the input file"):
        cio.save({"x": 1}, path, inputs=[path])
    with pytest.raises(ValueError, match="it is the input file"):
        cio.write_table(path, pd.DataFrame({"a": [1]}), inputs=[path])
    with pytest.raises(ValueError, match="it is the input file"):
        with cio.atomic_write(tmp_path / "." / "data.csv", inputs=[str(path)]):
            pass
    assert path.read_text() == "precious\n"


# --------------------------------------------------------------------------- non-regular files


def test_an_existing_directory_is_named(train, model, tmp_path, capsys):
    capsys.readouterr()
    folder = tmp_path / "folder"
    folder.mkdir()
    message = _one_error(
        capsys,
        ["fit", str(train), "--target", "species", "--out", str(folder)],
        f"cannot write {folder}: it is a directory",
    )
    assert ".tmp" not in message
    _one_error(
        capsys, ["predict", str(model), str(train), "--out", str(folder)], "it is a directory"
    )
    with pytest.raises(ValueError, match="it is a directory"):
        cio.save({"x": 1}, folder)
    assert folder.is_dir() and not list(folder.iterdir())


def test_a_character_device_is_written_in_place_never_replaced(tmp_path):
    """io.save through a link to /dev/null: the link and the device stay (a rename
    would have put a regular file where the link was)."""
    link = tmp_path / "null.skops"
    link.symlink_to(os.devnull)
    cio.save({"x": np.arange(3)}, link)
    assert link.is_symlink() and os.readlink(link) == os.devnull
    assert stat.S_ISCHR(os.stat(os.devnull).st_mode)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["null.skops"]  # no temp file


def test_dev_stdout_is_written_not_replaced(model, train, tmp_path, capfd):
    link = tmp_path / "stdout.csv"
    link.symlink_to("/dev/stdout")
    capfd.readouterr()
    assert main(["predict", str(model), str(train), "--out", str(link)]) == 0
    out = capfd.readouterr().out.splitlines()
    assert out[0].startswith("prediction,proba_setosa") and len(out) == 151
    assert link.is_symlink()


def test_a_fifo_is_written_in_place(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    received = []

    def reader():
        with open(fifo) as f:
            received.append(f.read())

    thread = threading.Thread(target=reader, daemon=True)
    thread.start()
    cio.write_table(fifo, pd.DataFrame({"a": [1.5, 2.0]}))
    thread.join(timeout=10)
    assert received == ["a\n1.5\n2\n"]
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)


def test_a_link_to_a_regular_file_keeps_the_link(tmp_path):
    target = tmp_path / "real.json"
    target.write_text("{}")
    link = tmp_path / "link.json"
    link.symlink_to(target.name)
    write_json(link, {"a": 1})  # the reproduction cache's writer
    assert link.is_symlink() and target.read_text().startswith("{")
    assert '"a": 1' in target.read_text()


def test_dash_means_standard_output(model, train, tmp_path, capsys):
    capsys.readouterr()
    assert main(["predict", str(model), str(train), "--out", "-"]) == 0
    assert capsys.readouterr().out.startswith("prediction,")
    assert not (tmp_path / "-").exists()
    _one_error(
        capsys,
        ["fit", str(train), "--target", "species", "--out", "-"],
        "'-' means standard output",
    )
    with pytest.raises(ValueError, match="standard output"):
        cio.save({"x": 1}, "-")
    assert not (tmp_path / "-").exists()
