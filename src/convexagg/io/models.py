"""Model persistence with skops: :func:`save` writes a model atomically after
loading it back, a convexagg classifier's binaries packed (:mod:`convexagg.io.packed`);
:func:`load` checks the file's shape against limits, then refuses every type
neither skops nor convexagg trusts (:func:`trusted_types`). Both import skops
through :func:`_skops_io`, which keeps the names of the scikit-learn estimators
skops trusts in the user's cache directory.
"""

from __future__ import annotations

import copy
import functools
import hashlib
import importlib
import inspect
import io as _io
import json
import os
import re
import stat
import sys
import threading
import zipfile
import zlib

import numpy as np

from .._array_api import is_device_array
from .files import atomic_write, read_limited
from .packed import PackedEstimators, pack

__all__ = [
    "MAX_SCHEMA_BYTES",
    "MAX_SCHEMA_DEPTH",
    "UntrustedTypeError",
    "json_depth",
    "load",
    "save",
    "trusted_types",
]


class UntrustedTypeError(ValueError):
    """A model file holds types that are not trusted; ``types`` lists them.

    Parameters
    ----------
    message : str
        The error message, naming the types and how to trust them.
    types : iterable of str
        The untrusted type names, kept as the ``types`` attribute.
    """

    def __init__(self, message, types):
        super().__init__(message)
        self.types = list(types)


# Limits :func:`load` checks before skops parses anything. A real convexagg model
# nests about 20 levels deep; skops' loader recurses a few Python frames per level
# (400 levels still load under Python's default recursion limit).
MAX_SCHEMA_DEPTH = 200
# The object tree's JSON: the default on the digits (275 fitted binaries, packed)
# has 0.13 MB, a binary stored unpacked about 30 KB; 256 MiB leaves room for codes of
# thousands of columns. It is read whole (and then parsed by skops), so it is bounded
# on its own.
MAX_SCHEMA_BYTES = 2**28
DEFAULT_MAX_BYTES = 2**33  # 8 GiB: the file, and its members uncompressed


def _type_name(cls):
    return f"{cls.__module__}.{cls.__qualname__}"


def _public_classes():
    """Every class the public convexagg modules export (``__all__``), exceptions aside.

    Read from the package rather than listed by hand, so a new estimator, decoder
    or solver configuration is trusted as soon as it is exported.
    """
    classes = set()
    for name in (
        "convexagg",
        "convexagg.decoders",
        "convexagg.binary",
        "convexagg.solvers",
        "convexagg.aggregation",
        "convexagg.model_selection",
        "convexagg.path",
    ):
        try:
            module = importlib.import_module(name)
        except ImportError:
            continue  # a subpackage this version does not have
        for attr in getattr(module, "__all__", ()):
            obj = getattr(module, attr, None)
            if (
                inspect.isclass(obj)
                and obj.__module__.startswith("convexagg")
                and not issubclass(obj, BaseException)
            ):
                classes.add(obj)
    return classes


def trusted_types():
    """Type names (as skops writes them) that :func:`load` accepts beyond skops' defaults.

    Every public convexagg class (the estimators, including
    ``ConvexAggregationClassifierCV``, every decoder, the result objects, the
    constant stand-in for one-sided binary problems), the container of a
    classifier's packed binaries (:class:`convexagg.io.packed.PackedEstimators`),
    the scikit-learn estimators convexagg builds by default (``LogisticRegression``
    after a ``StandardScaler`` in a ``Pipeline``; the command line's
    ``MaxAbsScaler``, and its ``ColumnTransformer`` of ``SimpleImputer`` (with
    its ``MissingIndicator``) and ``OneHotEncoder``) and ``numpy.dtype``.

    Returns
    -------
    names : list of str
        Sorted type names, such as
        ``"convexagg.convex_aggregation.ConvexAggregationClassifier"``.
    """
    from sklearn.compose import ColumnTransformer
    from sklearn.impute import MissingIndicator, SimpleImputer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import MaxAbsScaler, OneHotEncoder, StandardScaler

    classes = _public_classes() | {
        ColumnTransformer,
        LogisticRegression,
        MaxAbsScaler,
        MissingIndicator,
        OneHotEncoder,
        PackedEstimators,
        Pipeline,
        SimpleImputer,
        StandardScaler,
    }
    names = {_type_name(cls) for cls in classes} | {"numpy.dtype"}
    # convexagg.estimator names the classifiers of convexagg.code_matrix and
    # convexagg.convex_aggregation: a file that records them by that name loads too
    estimator = importlib.import_module("convexagg.estimator")
    names |= {f"{estimator.__name__}.{name}" for name in estimator.__all__}
    return sorted(names)


# --------------------------------------------------------------------------- skops' import

# Importing skops.io lists the scikit-learn estimators it trusts with
# ``sklearn.utils.all_estimators()``, a scan that imports every scikit-learn module,
# and torch where installed (BENCHMARKS.md, "Model files and start-up"); the names
# depend only on the installed packages, so they are kept on disk per environment.
_TRUSTED_NAMES_KEY = "sklearn_estimator_type_names"
_SKLEARN_TYPE_NAME = re.compile(r"sklearn(?:\.[A-Za-z_][A-Za-z0-9_]*)+\.[A-Za-z_][A-Za-z0-9_]*")
_MAX_CACHE_BYTES = 2**20
_SKOPS_IMPORT_LOCK = threading.Lock()


def _cache_folder():
    """``convexagg`` in the user's cache directory (``$XDG_CACHE_HOME``, else
    ``~/.cache``), or None if there is no absolute one."""
    base = os.environ.get("XDG_CACHE_HOME", "")
    if not os.path.isabs(base):
        base = os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "convexagg") if os.path.isabs(base) else None


def _trusted_names_key():
    """What skops' trusted estimator names depend on: the scikit-learn and skops
    versions, the Python version and scikit-learn's install path."""
    import sklearn
    import skops

    where = os.path.dirname(os.path.abspath(sklearn.__file__))
    return {
        "sklearn": str(sklearn.__version__),
        "skops": str(skops.__version__),
        "python": f"{sys.implementation.name}-{'.'.join(map(str, sys.version_info[:3]))}",
        "sklearn_path": hashlib.sha256(where.encode("utf-8", "surrogateescape")).hexdigest()[:12],
    }


def _trusted_names_path(key):
    """The cache file of ``key``, or None without a cache directory."""
    folder = _cache_folder()
    if folder is None:
        return None
    safe = {name: re.sub(r"[^A-Za-z0-9.]+", "_", value) for name, value in key.items()}
    name = (
        f"skops-trusted-sklearn-{safe['sklearn']}-skops-{safe['skops']}-{safe['python']}-"
        f"{safe['sklearn_path']}.json"
    )
    return os.path.join(folder, name)


def _valid_names(names):
    return (
        isinstance(names, list)
        and bool(names)
        and all(isinstance(n, str) and _SKLEARN_TYPE_NAME.fullmatch(n) for n in names)
    )


def _read_trusted_names(path, key):
    """The names cached at ``path`` for ``key``; None if the file is missing, not a
    regular file of this user that only they can write, unreadable, or holds
    anything but a list of ``sklearn.``-dotted names under ``key``."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        with os.fdopen(fd, "rb") as f:
            st = os.fstat(f.fileno())
            mine = not hasattr(os, "getuid") or (
                st.st_uid == os.getuid() and not st.st_mode & 0o022
            )
            if not (stat.S_ISREG(st.st_mode) and mine and st.st_size <= _MAX_CACHE_BYTES):
                return None
            content = json.loads(f.read(_MAX_CACHE_BYTES))
    except (OSError, ValueError, RecursionError):
        return None
    if not isinstance(content, dict) or content.get("key") != key:
        return None
    names = content.get(_TRUSTED_NAMES_KEY)
    return names if _valid_names(names) else None


def _write_trusted_names(path, key, names):
    """Cache ``names`` for ``key`` at ``path``, atomically; any failure is ignored
    (the next import scans again)."""
    if not _valid_names(names):
        return
    try:
        if os.path.lexists(path) and not os.path.isfile(path):
            return  # a device or pipe stays as it is
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with atomic_write(path, "w") as f:
            json.dump({"key": key, _TRUSTED_NAMES_KEY: list(names)}, f)
    except (OSError, ValueError):
        pass


def _stand_in_estimators(names, all_estimators):
    """A replacement for ``all_estimators`` returning ``(name, class)`` pairs whose
    classes carry only the ``__module__`` and ``__name__`` of ``names``."""
    pairs = []
    for name in names:
        module, _, class_name = name.rpartition(".")
        pairs.append((class_name, type(class_name, (), {"__module__": module})))

    def cached(type_filter=None):
        return list(pairs) if type_filter is None else all_estimators(type_filter)

    return cached


def _skops_trusted_names():
    module = sys.modules.get("skops.io._trusted_types")
    names = getattr(module, "SKLEARN_ESTIMATOR_TYPE_NAMES", None)
    return list(names) if isinstance(names, list) else None


@functools.cache
def _skops_io():
    """``skops.io``, imported with the names of scikit-learn's estimators it trusts
    read from the cache (:func:`_read_trusted_names`) when there is one, written to
    it otherwise.

    The trusted types are skops' own: with the cache, skops computes its list from
    stand-ins of the cached names, and if that list differs from them, ``skops.io``
    is imported again the ordinary way.
    """
    with _SKOPS_IMPORT_LOCK:  # one thread replaces all_estimators at a time
        if "skops.io._trusted_types" in sys.modules:
            import skops.io

            return skops.io
        import sklearn.utils

        key = _trusted_names_key()
        path = _trusted_names_path(key)
        names = None if path is None else _read_trusted_names(path, key)
        if names is not None:
            real = sklearn.utils.all_estimators
            sklearn.utils.all_estimators = _stand_in_estimators(names, real)
            try:
                import skops.io
            finally:
                sklearn.utils.all_estimators = real
            if _skops_trusted_names() == names:
                return skops.io
            for name in [m for m in sys.modules if m == "skops.io" or m.startswith("skops.io.")]:
                del sys.modules[name]
        import skops.io

        if path is not None:
            _write_trusted_names(path, key, _skops_trusted_names())
        return skops.io


def _with_packed_binaries(obj, memo, depth=0):
    """``obj`` with the binaries of every convexagg classifier in it packed
    (:func:`convexagg.io.packed.pack`): the estimators, lists, tuples and
    dictionaries on the way to one are shallow copies, everything else is shared;
    ``obj`` itself when there is nothing to pack. ``memo`` maps ``id`` to result,
    so an object reached twice is copied once."""
    from sklearn.base import BaseEstimator

    if id(obj) in memo:
        return memo[id(obj)]
    memo[id(obj)] = obj  # a cycle sees the original
    kind, result = type(obj), obj
    if depth > MAX_SCHEMA_DEPTH:
        return obj
    if kind in (list, tuple):
        items = [_with_packed_binaries(v, memo, depth + 1) for v in obj]
        if any(new is not old for new, old in zip(items, obj)):
            result = kind(items)
    elif kind is dict:
        items = {k: _with_packed_binaries(v, memo, depth + 1) for k, v in obj.items()}
        if any(items[k] is not v for k, v in obj.items()):
            result = items
    elif isinstance(obj, BaseEstimator):
        state = vars(obj)
        changed = {}
        for name, value in state.items():
            if name == "estimators_" and kind.__module__.startswith("convexagg."):
                new = _packed_members(value)
            else:
                new = _with_packed_binaries(value, memo, depth + 1)
            if new is not value:
                changed[name] = new
        if changed:
            result = copy.copy(obj)
            vars(result).update(changed)
    memo[id(obj)] = result
    return result


def _packed_members(value):
    """A convexagg classifier's ``estimators_`` packed, or ``value`` itself."""
    if not (isinstance(value, list) and value and all(isinstance(m, list) for m in value)):
        return value
    packed = pack(value)
    return value if packed is None else packed


def _unpacked(obj):
    """``obj`` (just loaded) with every :class:`PackedEstimators` attribute of an
    estimator replaced by the binaries it holds, set by the estimator's
    ``__setstate__``; in place, by an explicit stack."""
    from sklearn.base import BaseEstimator

    stack, seen = [obj], set()
    while stack:
        item = stack.pop()
        if id(item) in seen:
            continue
        seen.add(id(item))
        if type(item) in (list, tuple):
            stack.extend(item)
        elif type(item) is dict:
            stack.extend(item.values())
        elif isinstance(item, BaseEstimator):
            state = vars(item)
            packed = {k: v.unpack() for k, v in state.items() if type(v) is PackedEstimators}
            stack.extend(value for name, value in state.items() if name not in packed)
            if packed:  # through the estimator's __setstate__, which derives its state from them
                item.__setstate__({**item.__getstate__(), **packed})
    return obj


def save(model, path, inputs=()):
    """Write ``model`` to ``path`` with skops, atomically.

    The binaries of a convexagg classifier in ``model`` are stored packed
    (:mod:`convexagg.io.packed`: one template and stacked arrays per group of
    binaries of one structure), and the file's members are deflate-compressed;
    :func:`load` gives back the same object, bit for bit.

    Parameters
    ----------
    model : object
        Typically a fitted convexagg estimator; any object skops can persist.
    path : str or path-like
        Conventionally ending in ``.skops``. Refused as :func:`check_output_path`
        says (``-``, a directory, an input, a block device); a character device
        such as ``/dev/null`` is written in place, never replaced.
    inputs : iterable of str or path-like, default=()
        Files ``path`` must not replace (the data the model was fitted on).

    Raises
    ------
    ValueError
        If the file could not be loaded back: the model holds an object skops
        stores by name but cannot find again (a lambda, a function defined
        inside another function); or if it holds arrays of another array-API
        namespace than NumPy's (fitted on PyTorch or CuPy input), which skops
        cannot store. Nothing is written then.
    """
    sio = _skops_io()

    found = _device_array(model)
    if found is not None:
        where, array = found
        raise ValueError(
            f"cannot save the model to {path}: {where} is a {_type_name(type(array))} "
            "(the model was fitted on array-API input); skops files hold NumPy arrays "
            "only: refit on NumPy arrays to save it, or pickle it. Nothing was written."
        )
    # serialised first: nothing is written if this fails
    data = sio.dumps(_with_packed_binaries(model, {}), compression=zipfile.ZIP_DEFLATED)
    try:  # the model's own types: trusting them runs nothing the caller did not have
        _unpacked(sio.loads(data, trusted=sio.get_untrusted_types(data=data)))
    except Exception as exc:  # noqa: BLE001 - whatever skops raises, the file is unusable
        raise ValueError(
            f"cannot save the model to {path}: the file could not be loaded back "
            f"({type(exc).__name__}: {_first_line(exc)}); a lambda or a function defined "
            "inside another function cannot be saved: use a function defined at the top "
            "level of a module. Nothing was written."
        ) from exc
    with atomic_write(path, "wb", inputs=inputs) as f:
        f.write(data)


def _device_array(obj, name="model", depth=0, seen=None):
    """``(attribute path, array)`` of the first array of another namespace than
    NumPy's inside ``obj`` (its attributes, lists, tuples, dicts), or None."""
    seen = set() if seen is None else seen
    if depth > 30 or id(obj) in seen:
        return None
    seen.add(id(obj))
    if isinstance(obj, type):  # a class, such as a dtype parameter (np.float64)
        return None
    if is_device_array(obj):
        return name, obj
    if isinstance(obj, dict):
        items = [(f"{name}[{k!r}]", v) for k, v in obj.items()]
    elif isinstance(obj, (list, tuple)):
        items = [(f"{name}[{i}]", v) for i, v in enumerate(obj)]
    elif hasattr(obj, "__dict__") and not isinstance(obj, type):
        items = [(f"{name}.{k}", v) for k, v in vars(obj).items()]
    else:
        return None
    for path, value in items:
        found = _device_array(value, path, depth + 1, seen)
        if found is not None:
            return found
    return None


def _first_line(exc):
    lines = str(exc).strip().splitlines()
    return lines[0] if lines else ""


_JSON_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"', re.DOTALL)


_DEPTH_STEP = np.zeros(256, dtype=np.int8)
_DEPTH_STEP[[ord("["), ord("{")]] = 1
_DEPTH_STEP[[ord("]"), ord("}")]] = -1


def json_depth(data, chunk=2**20):
    """Deepest nesting of ``[`` / ``{`` in JSON bytes, without parsing (no recursion).

    By chunks of ``chunk`` bytes: a few MiB of work arrays whatever the size (the
    whole-file arrays cost 18 bytes per byte, 593 MiB for a 32 MiB schema).
    """
    bare = _JSON_STRING.sub(b'""', data)
    depth = deepest = 0
    for start in range(0, len(bare), chunk):
        step = _DEPTH_STEP[np.frombuffer(bare, np.uint8, min(chunk, len(bare) - start), start)]
        levels = np.cumsum(step, dtype=np.int64)
        if levels.size:
            deepest = max(deepest, depth + int(levels.max()))
            depth += int(levels[-1])
    return deepest


def _read_npy_header(handle):
    version = np.lib.format.read_magic(handle)
    reader = getattr(np.lib.format, "_read_array_header", None)
    if reader is not None:
        return version, reader(handle, version)
    read = np.lib.format.read_array_header_1_0
    return version, (read if version == (1, 0) else np.lib.format.read_array_header_2_0)(handle)


# What zipfile raises on damaged bytes: a bad header, a bad stream, an unknown method,
# an encrypted member (RuntimeError).
_DAMAGED_ZIP = (
    zipfile.BadZipFile,
    zlib.error,
    EOFError,
    OSError,
    RuntimeError,
    NotImplementedError,
)


def _check_model_file(path, data, max_bytes):
    """Refuse a skops file that would exhaust the stack or the memory when loaded."""
    try:
        archive = zipfile.ZipFile(_io.BytesIO(data))
        members = archive.infolist()
    except (zipfile.BadZipFile, ValueError, EOFError) as exc:
        raise ValueError(f"{path} is not a skops model file ({exc}).") from None
    total = sum(m.file_size for m in members)
    if total > max_bytes:
        raise ValueError(
            f"{path}: its content claims {total} bytes uncompressed, above the limit of "
            f"{max_bytes} (max_bytes); refusing to load it."
        )
    names = {m.filename: m for m in members}
    if "schema.json" not in names:
        raise ValueError(f"{path} is not a skops model file (no schema.json).")
    if names["schema.json"].file_size > MAX_SCHEMA_BYTES:
        raise ValueError(
            f"{path}: its schema.json claims {names['schema.json'].file_size} bytes, above the "
            f"limit of {MAX_SCHEMA_BYTES} (MAX_SCHEMA_BYTES); refusing to load it."
        )
    try:  # every member's checksum, by chunks (each at most its claimed size)
        bad = archive.testzip()
    except _DAMAGED_ZIP as exc:
        raise ValueError(f"{path} is a corrupt skops model file ({exc}).") from None
    if bad is not None:
        raise ValueError(f"{path} is a corrupt skops model file (bad checksum in {bad}).")
    depth = json_depth(archive.read("schema.json"))
    if depth > MAX_SCHEMA_DEPTH:
        raise ValueError(
            f"{path}: its object tree is nested {depth} levels deep, above the limit of "
            f"{MAX_SCHEMA_DEPTH}; refusing to load it (a model convexagg writes has about 20)."
        )
    for member in members:
        if not member.filename.endswith(".npy"):
            continue
        with archive.open(member) as handle:
            try:
                _, (shape, _, dtype) = _read_npy_header(handle)
            except Exception as exc:  # noqa: BLE001 - any parse failure of untrusted bytes
                raise ValueError(
                    f"{path}: array {member.filename} has a corrupt header ({exc})."
                ) from None
            size = handle.tell()
        n_values = int(np.prod(shape, dtype=object))
        if n_values * dtype.itemsize > member.file_size - size:
            raise ValueError(
                f"{path}: array {member.filename} claims {n_values} values of {dtype} "
                f"({n_values * dtype.itemsize} bytes) but holds {member.file_size - size} "
                "bytes; refusing to load a corrupt or crafted file."
            )


def load(path, trusted=None, *, max_bytes=DEFAULT_MAX_BYTES):
    """Read a model written by :func:`save`, refusing untrusted types and crafted files.

    Parameters
    ----------
    path : str or path-like
        A file written by :func:`save`.
    trusted : list of str, default=None
        Extra type names (as in the error message) to accept for this file.
    max_bytes : int, default=2**33
        Largest size of the file, and largest total uncompressed size of its members.

    Returns
    -------
    model : object
        The object that was saved.

    Raises
    ------
    FileNotFoundError
        If ``path`` does not exist.
    UntrustedTypeError
        If the file holds a type neither skops nor convexagg trusts and that is
        not in ``trusted``; nothing from the file is instantiated.
    ValueError
        If ``path`` is not a regular file (a device, a named pipe), is not a
        skops file or is damaged (a bad checksum, a tree skops cannot build),
        or breaks a limit: the file or its content is larger than
        ``max_bytes``, its ``schema.json`` larger than :data:`MAX_SCHEMA_BYTES`
        or nested deeper than :data:`MAX_SCHEMA_DEPTH`, or an array header
        claims more values than its bytes hold. The limits are checked before
        anything is parsed or allocated.
    """
    if trusted is None:
        trusted = []
    elif not isinstance(trusted, (list, tuple, set, frozenset)) or not all(
        isinstance(t, str) for t in trusted
    ):
        raise TypeError(
            f"trusted must be a list of type names (str), got {trusted!r}; "
            "trusting everything at once is not supported."
        )
    sio = _skops_io()

    # read once (what is checked is what is loaded), bounded before reading
    data = read_limited(path, max_bytes, "a model file")
    _check_model_file(path, data, max_bytes)
    try:
        untrusted = sio.get_untrusted_types(data=data)
    except Exception as exc:  # noqa: BLE001 - any parse failure of untrusted bytes
        raise ValueError(f"{path} is not a skops model file ({exc}).") from None
    refused = sorted(set(untrusted) - set(trusted_types()) - set(trusted))
    if refused:
        raise UntrustedTypeError(
            f"{path} contains types convexagg does not trust: {refused}. Loading them "
            "could run code from the file; if you trust its origin, pass "
            f"trusted={refused!r}.",
            refused,
        )
    try:
        return _unpacked(sio.loads(data, trusted=list(untrusted)))
    except MemoryError:
        raise
    except Exception as exc:  # noqa: BLE001 - a crafted or damaged tree of trusted types
        raise ValueError(
            f"{path} is a corrupt or crafted skops model file: loading it failed "
            f"({type(exc).__name__}: {_first_line(exc)})."
        ) from exc


# --------------------------------------------------------------------------- CSV

# Field texts that mean "no value" (pandas' defaults, compared case-insensitively).
