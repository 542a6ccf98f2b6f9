"""skops' import through the cache of the scikit-learn estimator names it trusts
(``convexagg.io.models._skops_io``): the cache's key, file and validation in this
process, and in fresh processes that the trusted list, the models loaded and the
types refused are skops' own."""

import json
import os
import subprocess
import sys
import textwrap

import pytest
import sklearn
import skops

from convexagg.io import models

NAMES = [
    "sklearn.linear_model._logistic.LogisticRegression",
    "sklearn.naive_bayes.GaussianNB",
    "sklearn.preprocessing._data.StandardScaler",
]


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    return tmp_path / "convexagg"


@pytest.fixture
def key():
    return models._trusted_names_key()


def test_cache_folder_is_the_users_cache_directory(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert models._cache_folder() == str(tmp_path / "xdg" / "convexagg")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    for ignored in ("", "relative/cache"):  # the XDG specification: only absolute paths
        monkeypatch.setenv("XDG_CACHE_HOME", ignored)
        assert models._cache_folder() == str(tmp_path / "home" / ".cache" / "convexagg")


def test_key_names_the_installed_packages(cache_dir, key):
    assert key["sklearn"] == sklearn.__version__
    assert key["skops"] == skops.__version__
    assert key["python"].endswith(".".join(map(str, sys.version_info[:3])))
    path = models._trusted_names_path(key)
    assert len(key["sklearn_path"]) == 12 and key["sklearn_path"] in path
    assert os.path.dirname(path) == str(cache_dir)
    assert sklearn.__version__ in path and skops.__version__ in path
    # every part of the key names another file
    for part in key:
        assert models._trusted_names_path({**key, part: "0"}) != path
    other = {**key, "sklearn": "1.0/../../evil"}  # the name stays in the folder
    assert os.path.dirname(models._trusted_names_path(other)) == str(cache_dir)


def test_round_trip_writes_one_file(cache_dir, key):
    path = models._trusted_names_path(key)
    assert models._read_trusted_names(path, key) is None  # no cache yet
    models._write_trusted_names(path, key, NAMES)
    assert models._read_trusted_names(path, key) == NAMES
    assert os.listdir(cache_dir) == [os.path.basename(path)]  # no temporary file left
    assert json.loads(open(path).read()) == {"key": key, "sklearn_estimator_type_names": NAMES}
    # another environment's key does not read it
    assert models._read_trusted_names(path, {**key, "sklearn": "0.0"}) is None
    models._write_trusted_names(path, key, NAMES[:1])  # replaced
    assert models._read_trusted_names(path, key) == NAMES[:1]


@pytest.mark.parametrize(
    "text",
    [
        "",
        "{",
        "not json",
        "[" * 100_000,
        "[]",
        '{"key": KEY}',
        '{"key": KEY, "sklearn_estimator_type_names": []}',
        '{"key": KEY, "sklearn_estimator_type_names": "sklearn.a.B"}',
        '{"key": KEY, "sklearn_estimator_type_names": ["os.system"]}',
        '{"key": KEY, "sklearn_estimator_type_names": ["sklearn.B"]}',
        '{"key": KEY, "sklearn_estimator_type_names": ["sklearn.a.B", "sklearn.a.B C"]}',
        '{"key": KEY, "sklearn_estimator_type_names": ["sklearn.a.B", "sklearn..B"]}',
        '{"key": KEY, "sklearn_estimator_type_names": ["sklearn.a.B", "sklearnx.a.B"]}',
        '{"key": KEY, "sklearn_estimator_type_names": ["sklearn.a.B", 1]}',
        '{"key": KEY, "sklearn_estimator_type_names": ["sklearn.a.B\\n"]}',
        '{"key": {}, "sklearn_estimator_type_names": ["sklearn.a.B"]}',
    ],
)
def test_bad_content_is_rejected(cache_dir, key, text):
    path = models._trusted_names_path(key)
    cache_dir.mkdir()
    with open(path, "w") as f:
        f.write(text.replace("KEY", json.dumps(key)))
    assert models._read_trusted_names(path, key) is None


def test_invalid_names_are_not_written(cache_dir, key):
    path = models._trusted_names_path(key)
    for names in (None, [], ["os.system"], [*NAMES, "builtins.eval"]):
        models._write_trusted_names(path, key, names)
        assert not os.path.exists(path)


@pytest.mark.skipif(not hasattr(os, "getuid"), reason="file ownership is POSIX")
def test_a_file_others_can_write_is_rejected(cache_dir, key):
    path = models._trusted_names_path(key)
    models._write_trusted_names(path, key, NAMES)
    os.chmod(path, 0o666)
    assert models._read_trusted_names(path, key) is None
    os.chmod(path, 0o644)
    assert models._read_trusted_names(path, key) == NAMES


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes are POSIX")
def test_what_is_not_a_regular_file_is_neither_read_nor_replaced(cache_dir, key):
    path = models._trusted_names_path(key)
    cache_dir.mkdir()
    os.mkfifo(path)  # opening it blocks without O_NONBLOCK
    assert models._read_trusted_names(path, key) is None
    models._write_trusted_names(path, key, NAMES)
    assert not os.path.isfile(path)
    os.unlink(path)
    os.mkdir(path)
    assert models._read_trusted_names(path, key) is None
    models._write_trusted_names(path, key, NAMES)
    assert os.listdir(path) == []


def test_an_unwritable_cache_is_no_error(tmp_path, monkeypatch, key):
    blocker = tmp_path / "a file"  # no folder can be made below it, even by root
    blocker.write_text("")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))
    path = models._trusted_names_path(key)
    models._write_trusted_names(path, key, NAMES)
    assert models._read_trusted_names(path, key) is None
    assert sorted(os.listdir(tmp_path)) == ["a file"]


def test_stand_ins_carry_the_names_skops_computes():
    from skops.io._utils import get_type_name

    def all_estimators(type_filter=None):
        return [("filtered", type_filter)]

    cached = models._stand_in_estimators(NAMES, all_estimators)
    assert [get_type_name(cls) for _, cls in cached()] == NAMES
    assert [name for name, _ in cached()] == [n.rpartition(".")[2] for n in NAMES]
    assert cached(type_filter="classifier") == [("filtered", "classifier")]


PROCESS = textwrap.dedent(
    """
    import json, sys
    import numpy as np
    import sklearn.utils
    import sklearn.utils.discovery

    real = sklearn.utils.all_estimators
    from convexagg.io import models

    folder, role = sys.argv[1:]
    if role == "stand-ins that differ":  # as if skops computed its names otherwise
        make = models._stand_in_estimators
        models._stand_in_estimators = lambda names, real: make(names[1:] + ["sklearn.x.Y"], real)
    scanned_before = "sklearn.cross_decomposition" in sys.modules
    sio = models._skops_io()
    from skops.io import _trusted_types

    report = {
        "names": _trusted_types.SKLEARN_ESTIMATOR_TYPE_NAMES,
        "scanned": "sklearn.cross_decomposition" in sys.modules and not scanned_before,
        "restored": sklearn.utils.all_estimators is real
        and sklearn.utils.discovery.all_estimators is real,
        "skops_io": sio is sys.modules["skops.io"],
    }
    from convexagg.io import UntrustedTypeError, load

    X = np.load(folder + "/X.npy")
    report["probas"] = [load(folder + f"/{name}.skops").predict_proba(X).tolist()
                        for name in ("default", "nb")]
    try:
        load(folder + "/untrusted.skops")
    except UntrustedTypeError as exc:
        report["refused"] = exc.types
    print(json.dumps(report))
    """
)


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """A folder with the iris features, two models and a file of an untrusted type;
    the models' probabilities."""
    import operator

    import numpy as np
    from sklearn.datasets import load_iris
    from sklearn.naive_bayes import GaussianNB
    from sklearn.preprocessing import FunctionTransformer

    from convexagg import ConvexAggregationClassifier
    from convexagg.io import save

    folder = tmp_path_factory.mktemp("models")
    X, y = load_iris(return_X_y=True)
    np.save(folder / "X.npy", X)
    probas = []
    # GaussianNB: trusted only through skops' list of scikit-learn estimators
    for name, learner in [("default", None), ("nb", GaussianNB())]:
        model = ConvexAggregationClassifier(learner).fit(X, y)
        save(model, folder / f"{name}.skops")
        probas.append(model.predict_proba(X).tolist())
    save(FunctionTransformer(operator.neg), folder / "untrusted.skops")
    return folder, probas


def _process(folder, cache, role):
    env = {**os.environ, "XDG_CACHE_HOME": str(cache), "OMP_NUM_THREADS": "1"}
    done = subprocess.run(
        [sys.executable, "-c", PROCESS, str(folder), role],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def _check(report, names, probas, scanned):
    assert report["names"] == names
    assert report["scanned"] is scanned
    assert report["restored"] and report["skops_io"]
    assert report["probas"] == probas  # bit for bit
    assert report["refused"] == ["_operator.neg"]


def test_a_fresh_process_trusts_the_same_names_through_the_cache(saved, tmp_path, monkeypatch):
    folder, probas = saved
    models._skops_io()  # this process's list, from skops' own scan
    names = models._skops_trusted_names()
    assert "sklearn.naive_bayes.GaussianNB" in names
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    key = models._trusted_names_key()
    models._write_trusted_names(models._trusted_names_path(key), key, names)
    _check(_process(folder, tmp_path, "through the cache"), names, probas, scanned=False)


@pytest.mark.slow
def test_fresh_processes_write_then_read_the_cache(saved, tmp_path):
    folder, probas = saved
    first = _process(folder, tmp_path, "no cache")  # scans, writes the cache
    names = first["names"]
    _check(first, names, probas, scanned=True)
    [cache] = os.listdir(tmp_path / "convexagg")
    _check(_process(folder, tmp_path, "cache"), names, probas, scanned=False)
    assert os.listdir(tmp_path / "convexagg") == [cache]
    # skops' list differs from the stand-ins': imported again, the ordinary way
    _check(_process(folder, tmp_path, "stand-ins that differ"), names, probas, scanned=True)
