"""A classifier's binaries are stored packed (one template, stacked arrays): loading
gives the same binaries bit for bit, the container is trusted and checked, and a
tampered file is refused."""

import io
import json
import pickle
import zipfile

import numpy as np
import pytest
import skops.io as sio
from sklearn.datasets import load_iris
from sklearn.ensemble import ExtraTreesClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import LinearSVC

import convexagg.io as cio
from convexagg import ConvexAggregationClassifier
from convexagg.io.packed import PackedEstimators, pack


@pytest.fixture(scope="module")
def iris():
    return load_iris(return_X_y=True)


@pytest.fixture(scope="module")
def default_model(iris):
    """The default model's shape: scaled logistic regressions, ovo+ovr, an ensemble of
    3 folds (3 members of 6 binaries)."""
    learner = make_pipeline(StandardScaler(), LogisticRegression())
    return ConvexAggregationClassifier(learner, cv=3, random_state=0).fit(*iris)


@pytest.fixture(scope="module")
def saved(default_model, tmp_path_factory):
    path = tmp_path_factory.mktemp("packed") / "model.skops"
    cio.save(default_model, path)
    return path


def _pickled_in_full(obj):
    """``obj`` pickled without the memo, every value written out where it occurs: the
    bytes do not depend on whether two equal strings (an attribute name in two
    estimators' ``__dict__``) are one object or two, which interning decides and earlier
    tests can change."""
    buffer = io.BytesIO()
    pickler = pickle.Pickler(buffer)
    pickler.fast = True
    pickler.dump(obj)
    return buffer.getvalue()


def _same_binaries(a, b):
    """Every binary of ``a`` and ``b`` pickles to the same bytes: the same attributes,
    values, dtypes and memory orders."""
    assert [len(m) for m in a] == [len(m) for m in b]
    for x, y in zip((e for m in a for e in m), (e for m in b for e in m)):
        assert x is not y and _pickled_in_full(x) == _pickled_in_full(y)


def test_a_saved_model_loads_bit_for_bit(iris, default_model, saved):
    X, _ = iris
    loaded = cio.load(saved)
    assert type(loaded.estimators_) is list and all(type(m) is list for m in loaded.estimators_)
    _same_binaries(loaded.estimators_, default_model.estimators_)
    np.testing.assert_array_equal(loaded.predict_proba(X), default_model.predict_proba(X))
    ids = {id(est) for member in loaded.estimators_ for est in member}
    assert len(ids) == 18  # each binary its own object


def test_the_file_holds_one_template_and_stacked_arrays(default_model, saved):
    schema = zipfile.ZipFile(saved).read("schema.json")
    assert schema.count(b'"PackedEstimators"') == 1
    assert schema.count(b'"LogisticRegression"') == 2  # the template's and the learner's
    assert saved.stat().st_size < len(sio.dumps(default_model)) / 4
    assert "convexagg.io.packed.PackedEstimators" in cio.trusted_types()
    assert default_model.estimators_[0][0].__class__.__name__ == "Pipeline"  # not replaced


class _Holder(LogisticRegression):
    """A logistic regression with attributes of every kind the packing handles."""


def _varied_binaries(iris):
    """Binaries of two structures, values of every kind, and ones left as they are."""
    X, y = iris
    y = (y == 2).astype(int)
    members = []
    for member in range(2):
        binaries = []
        for column in range(3):
            seed = 10 * member + column
            rows = np.random.default_rng(seed).choice(150, 120, replace=False)
            lr = _Holder(random_state=seed, C=1.0 + column).fit(X[rows], y[rows])
            lr.extra_ = {
                "fortran": np.asfortranarray(np.arange(6.0).reshape(2, 3) * seed),
                "zero_d": np.array(seed * 0.5),
                "scalar": np.float32(seed / 3),
                "flag": bool(seed % 2),
                "same": "text",
                "nested": [np.int16(seed), [None, float(seed) / 7]],
                "fixed": (1, 2.5, "x"),
            }
            binaries.append(lr)
        binaries.append(LinearSVC().fit(X, y))  # a second structure, alone per member
        binaries.append(ExtraTreesClassifier(n_estimators=2, random_state=0).fit(X, y))
        members.append(binaries)
    return members


def test_values_of_every_kind_come_back_as_they_were(iris):
    X, _ = iris
    members = _varied_binaries(iris)
    packed = pack(members)
    groups = packed.__getstate__()["groups"]
    assert sorted(len(g["members"]) for g in groups) == [2, 6]  # trees: stored as they are
    loaded = sio.loads(sio.dumps(packed), trusted=sio.get_untrusted_types(data=sio.dumps(packed)))
    rebuilt = loaded.unpack()
    _same_binaries([m[:4] for m in rebuilt], [m[:4] for m in members])  # the grouped ones
    for trees, original in zip((m[4] for m in rebuilt), (m[4] for m in members)):
        np.testing.assert_array_equal(trees.predict_proba(X), original.predict_proba(X))
    extra = rebuilt[1][2].extra_
    assert extra["fortran"].flags.f_contiguous and not extra["fortran"].flags.c_contiguous
    assert type(extra["zero_d"]) is np.ndarray and extra["zero_d"].ndim == 0
    assert type(extra["scalar"]) is np.float32 and type(extra["flag"]) is bool
    assert type(rebuilt[1][2].random_state) is int and rebuilt[1][2].random_state == 12
    assert type(extra["nested"][0]) is np.int16 and extra["nested"][1][0] is None
    # not loaded: rebuilt from the same state
    _same_binaries([m[:4] for m in packed.unpack()], [m[:4] for m in members])


def test_nothing_to_pack(iris):
    X, y = iris
    lone = [[LogisticRegression().fit(X, y == 1)]]
    assert pack(lone) is None
    twice = LogisticRegression().fit(X, y == 1)
    assert pack([[twice, twice]]) is None  # one object in two places: identity kept


def test_a_model_of_trees_is_stored_as_it_is(iris, tmp_path):
    X, y = iris
    forest = ExtraTreesClassifier(n_estimators=2, random_state=0)
    model = ConvexAggregationClassifier(forest, code="ovr", cv="in_sample").fit(X, y)
    path = tmp_path / "trees.skops"
    cio.save(model, path)
    assert b"PackedEstimators" not in zipfile.ZipFile(path).read("schema.json")
    loaded = cio.load(path, trusted=sio.get_untrusted_types(file=path))
    np.testing.assert_array_equal(loaded.predict_proba(X), model.predict_proba(X))


# --------------------------------------------------------------------------- tampered files


def _packed_node(node):
    """The PackedEstimators node of a skops schema (depth-first)."""
    if isinstance(node, dict):
        if node.get("__class__") == "PackedEstimators":
            return node
        children = node.values()
    elif isinstance(node, list):
        children = node
    else:
        return None
    for child in children:
        found = _packed_node(child)
        if found is not None:
            return found
    return None


def _tampered(saved, target, change_group=None, change_coef=None):
    """A copy of ``saved`` whose group of packed binaries went through
    ``change_group(group node)``, and whose stacked ``coef_`` went through
    ``change_coef(array)``; every zip checksum still right."""
    with zipfile.ZipFile(saved) as old:
        schema = json.loads(old.read("schema.json"))
        state = _packed_node(schema)["content"]["content"]
        (group,) = (g["content"] for g in state["groups"]["content"])
        coef = [p[-1] for p in _paths(group)].index(["a", "coef_"])
        coef_file = group["values"]["content"][coef]["file"]
        if change_group is not None:
            change_group(group)
        with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as new:
            for info in old.infolist():
                data = old.read(info.filename)
                if info.filename == "schema.json":
                    data = json.dumps(schema).encode()
                elif info.filename == coef_file and change_coef is not None:
                    buffer = io.BytesIO()
                    np.save(buffer, change_coef(np.load(io.BytesIO(data))))
                    data = buffer.getvalue()
                new.writestr(info.filename, data)
    return target


def _set_paths(group, paths):
    group["paths"]["content"] = json.dumps(json.dumps(paths))


def _paths(group):
    return json.loads(json.loads(group["paths"]["content"]))


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda g, p: _set_paths(g, [[["a", "no_such_attribute_"]]] + p[1:]), "has no"),
        (lambda g, p: _set_paths(g, [[["a", "steps"]]] + p[1:]), "replaces a list"),
        (lambda g, p: _set_paths(g, [[["a", "__class__"]]] + p[1:]), "has no"),
        (lambda g, p: _set_paths(g, p[1:]), "paths and values differ in number"),
        (lambda g, p: g["paths"].update(content=json.dumps("not json[")), "not JSON"),
    ],
    ids=["unknown attribute", "not a leaf", "class", "count", "json"],
)
def test_a_tampered_path_is_refused(saved, tmp_path, change, message):
    path = _tampered(saved, tmp_path / "t.skops", lambda group: change(group, _paths(group)))
    with pytest.raises(ValueError, match=f"corrupt or crafted.*{message}"):
        cio.load(path)


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda a: a[:-1], "not an array of 18 rows"),
        (lambda a: a.astype(np.float32), "differs in dtype or shape"),
        (lambda a: a[:, :, :2], "differs in dtype or shape"),
    ],
    ids=["rows", "dtype", "shape"],
)
def test_a_tampered_array_is_refused(saved, tmp_path, change, message):
    path = _tampered(saved, tmp_path / "t.skops", change_coef=change)
    with pytest.raises(ValueError, match=f"corrupt or crafted.*{message}"):
        cio.load(path)


def test_tampered_members_are_refused(saved, tmp_path):
    def swap_members(group):  # the members' array replaced by a stacked array
        group["members"]["file"] = group["values"]["content"][-1]["file"]

    path = _tampered(saved, tmp_path / "m.skops", swap_members)
    with pytest.raises(ValueError, match="corrupt or crafted.*(members|stored twice)"):
        cio.load(path)


def test_an_untrusted_template_is_refused_before_anything_is_built(saved, tmp_path):
    def popen(group):
        group["template"].update({"__module__": "subprocess", "__class__": "Popen"})

    path = _tampered(saved, tmp_path / "u.skops", popen)
    with pytest.raises(cio.UntrustedTypeError, match="subprocess.Popen"):
        cio.load(path)


def test_the_container_checks_its_state():
    with pytest.raises(ValueError, match="damaged or crafted"):
        PackedEstimators.__new__(PackedEstimators).__setstate__({"format": 1})
    state = {"format": 1, "sizes": [2], "loose_members": np.array([0]), "loose": [1]}
    with pytest.raises(ValueError, match="1 of the 2 binaries are missing"):
        PackedEstimators.__new__(PackedEstimators).__setstate__({**state, "groups": []})
