"""``convexagg.io.load`` has limits: a crafted file cannot exhaust the
stack or the memory, and the library's own classes are all trusted."""

import inspect
import io
import zipfile

import numpy as np
import pytest
from sklearn.datasets import load_iris

import convexagg
import convexagg.io as cio
from convexagg import ConvexAggregationClassifier, ConvexAggregationClassifierCV
from convexagg.io.models import json_depth


@pytest.fixture(scope="module")
def iris():
    return load_iris(return_X_y=True)


@pytest.fixture(scope="module")
def saved(iris, tmp_path_factory):
    path = tmp_path_factory.mktemp("model") / "model.skops"
    cio.save(ConvexAggregationClassifier(code="ovr").fit(*iris), path)
    return path


def _rewrite(source, target, change):
    """Copy the zip ``source`` to ``target`` with ``change(name, data)`` applied."""
    with zipfile.ZipFile(source) as old, zipfile.ZipFile(target, "w") as new:
        for info in old.infolist():
            new.writestr(info, change(info.filename, old.read(info.filename)))
    return target


def test_a_file_nested_20000_levels_is_refused_before_parsing(saved, tmp_path):
    deep = b'{"content": ' * 20_000 + b"1" + b"}" * 20_000

    def nest(name, data):
        return deep if name == "schema.json" else data

    path = _rewrite(saved, tmp_path / "deep.skops", nest)
    with pytest.raises(ValueError, match="nested 20000 levels deep, above the limit of 200"):
        cio.load(path)


def test_brackets_inside_strings_do_not_count():
    assert json_depth(b'{"a": "[[[[{{{{", "b": [1, {"c": "]]]\\"["}]}') == 3
    assert json_depth(b"[" * 5000 + b"]" * 5000) == 5000  # no recursion either


def test_an_array_claiming_1e12_values_is_refused_before_allocating(saved, tmp_path):
    def inflate(name, data):
        if not name.endswith(".npy") or b"'shape': (3," not in data[:128]:
            return data
        header_end = data.index(b"\n") + 1
        header = data[:header_end].replace(b"'shape': (3,", b"'shape': (1000000000000,")
        return header + data[header_end:]

    path = _rewrite(saved, tmp_path / "huge.skops", inflate)
    with pytest.raises(ValueError, match="claims 1000000000000 values of "):
        cio.load(path)


def test_total_size_limit(saved):
    with pytest.raises(ValueError, match="above the limit of 100 .max_bytes."):
        cio.load(saved, max_bytes=100)
    assert cio.load(saved) is not None


def test_a_corrupt_array_header_is_named(saved, tmp_path):
    def corrupt(name, data):
        return b"\x93NUMPY\x01\x00\x10\x00{'descr': <garbage" if name.endswith(".npy") else data

    with pytest.raises(ValueError, match="has a corrupt header"):
        cio.load(_rewrite(saved, tmp_path / "corrupt.skops", corrupt))


def test_not_a_zip_is_named(tmp_path):
    path = tmp_path / "x.skops"
    path.write_bytes(b"PK\x03\x04 not really")
    with pytest.raises(ValueError, match="is not a skops model file"):
        cio.load(path)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("other.txt", "hello")
    path.write_bytes(buffer.getvalue())
    with pytest.raises(ValueError, match="no schema.json"):
        cio.load(path)


# --------------------------------------------------------------------------- trust


def test_the_cv_estimator_round_trips(iris, tmp_path):
    X, y = iris
    model = ConvexAggregationClassifierCV(code="ovr", alphas=3, cv=2).fit(X, y)
    path = tmp_path / "cv.skops"
    cio.save(model, path)
    loaded = cio.load(path)
    assert type(loaded) is ConvexAggregationClassifierCV
    np.testing.assert_array_equal(loaded.predict_proba(X), model.predict_proba(X))


def test_every_public_class_is_trusted():
    names = set(cio.trusted_types())
    public = [getattr(convexagg, n) for n in convexagg.__all__]
    for cls in filter(inspect.isclass, public):
        assert f"{cls.__module__}.{cls.__qualname__}" in names, cls
    assert "convexagg.model_selection.ConvexAggregationClassifierCV" in names


# ------------------------------------------------------------------------------------ damaged


def test_a_bit_flipped_file_is_a_value_error(saved, tmp_path):
    """Flipped bits anywhere give the documented ValueError (zipfile's BadZipFile, a
    zlib error or a skops KeyError before), or a file that still loads."""
    data = saved.read_bytes()
    path = tmp_path / "flipped.skops"
    outcomes = []
    for position in range(7, len(data), len(data) // 60):
        flipped = bytearray(data)
        flipped[position] ^= 0x10
        path.write_bytes(bytes(flipped))
        try:
            cio.load(path)
            outcomes.append("loaded")
        except ValueError as exc:
            outcomes.append("checksum" if "bad checksum" in str(exc) else "ValueError")
    assert "checksum" in outcomes and len(outcomes) >= 60


def test_schema_json_is_bounded_before_it_is_read(saved, monkeypatch):
    monkeypatch.setattr("convexagg.io.models.MAX_SCHEMA_BYTES", 1000)
    with pytest.raises(ValueError, match=r"schema.json claims \d+ bytes, above the limit of 1000"):
        cio.load(saved)


def test_the_depth_check_works_in_bounded_memory():
    """A 16 MiB schema is scanned with a few MiB of work arrays (the whole-file arrays
    took 18 bytes per byte: 593 MiB for a padded 32 MiB schema)."""
    import tracemalloc

    schema = b"[" * 300 + b" " * 2**24 + b"]" * 300
    tracemalloc.start()
    try:
        assert json_depth(schema) == 300
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 3 * len(schema), peak  # a copy without strings, and the chunks
    assert json_depth(b'[{"a": "]]]"}, [[]]]', chunk=3) == 3  # levels across chunks
