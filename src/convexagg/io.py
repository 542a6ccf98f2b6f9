"""Safe writes, safe model persistence (skops) and the CSV tables of the command line.

Writes
------
Every file convexagg writes goes through :func:`atomic_write`, whose guard
(:func:`check_output_path`) refuses to destroy anything: an output that is the
same file as one of the inputs (by inode, so hard links and symbolic links are
caught too), an existing directory, or a node that is not a regular file and
cannot be written like one (a block device, a socket). A regular file is
replaced atomically: the bytes go to a temporary file in the target's directory,
which then replaces the target in one ``os.replace`` (through a symbolic link:
the file it points to, the link stays). A failure leaves the target as it was
(absent, or the previous complete file), never truncated. A character device or
a FIFO (``/dev/null``, ``/dev/stdout``, a named pipe) is written in place once
everything is ready, as a shell redirection would: the node is never replaced.
The name ``-`` means standard output; the CSV writer (:func:`write_table`)
writes there, a model file cannot go there.

Models
------
:func:`save` writes a model with :mod:`skops.io`, which stores the object tree
as data instead of pickle's instructions; :func:`load` reads it back only if
every type in the file is one skops trusts by default (numpy, scipy and
scikit-learn types) or one on convexagg's own list (:func:`trusted_types`:
every public convexagg class, the scikit-learn estimators convexagg uses by
default, numpy dtypes). Anything else, for instance a user-defined estimator
class, is refused with an :class:`UntrustedTypeError` naming the types; pass
``trusted=[...]`` to accept them once you have checked the file's origin.
Loading a pickle runs arbitrary code; loading through here does not. Before
skops sees the file, :func:`load` checks its shape against limits (a regular
file of at most ``max_bytes``, a ``schema.json`` of at most
:data:`MAX_SCHEMA_BYTES` nested at most :data:`MAX_SCHEMA_DEPTH` levels, every
member's checksum, and every array header against the bytes that hold it), so
a crafted or damaged file is a ``ValueError``, and cannot exhaust the stack or
the memory. :func:`save` loads what it wrote back before writing it, so a model
holding something that cannot be loaded (a lambda) is refused at save time.

CSV tables
----------
:class:`CSVFile` reads a delimited text file with a header row (plain or
gzip-compressed, recognised by its first bytes; separator detected from the
header or given) with pandas' C parser, after checking that it is a regular file
of at most :data:`MAX_CSV_BYTES` of text (also after decompression) and not
binary data; :meth:`CSVFile.read` returns the chosen
columns as float64 and the others as text. Problems are found with vectorised
checks after parsing and reported with the file, line and column: a missing,
non-numeric or non-finite value, a row with too many or too few fields.
:func:`parse_labels` turns a text column into class labels (integers when
every label is one, floats when every label is a number, else strings) and
checks them as the estimators do.
"""

from __future__ import annotations

import contextlib
import csv
import gzip
import importlib
import inspect
import io as _io
import os
import re
import stat
import sys
import tempfile
import warnings
import zipfile
import zlib
from pathlib import Path

import numpy as np

__all__ = [
    "MAX_CSV_BYTES",
    "MAX_SCHEMA_BYTES",
    "MAX_SCHEMA_DEPTH",
    "MISSING_LABELS",
    "STDOUT",
    "CSVFile",
    "UntrustedTypeError",
    "atomic_write",
    "check_output_path",
    "load",
    "parse_labels",
    "save",
    "trusted_types",
    "write_table",
]

STDOUT = "-"


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


# --------------------------------------------------------------------------- writes


def _same_file(a, b):
    return (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)


def _output_plan(path, inputs=()):
    """``(where to write, "replace" or "in_place")`` for ``path``, or a ``ValueError``."""
    if str(path) == STDOUT:
        raise ValueError(
            "'-' means standard output, which cannot take this file; give a file name."
        )
    path = Path(path)
    try:
        st = os.stat(path)  # follows symbolic links
    except FileNotFoundError:
        st = None
    if st is None:
        target = Path(os.path.realpath(path))
        if not target.parent.is_dir():
            raise ValueError(f"cannot write {path}: directory {target.parent} does not exist.")
        return target, "replace"
    for name in inputs:
        with contextlib.suppress(OSError):
            if stat.S_ISREG(st.st_mode) and _same_file(os.stat(name), st):
                raise ValueError(
                    f"cannot write {path}: it is the input file {name}; writing it would "
                    "destroy the input. Choose another output path."
                )
    if stat.S_ISDIR(st.st_mode):
        raise ValueError(f"cannot write {path}: it is a directory; give a file name.")
    if stat.S_ISREG(st.st_mode):
        target = Path(os.path.realpath(path))
        with contextlib.suppress(OSError):
            if _same_file(os.stat(target), st):
                return target, "replace"
        return path, "in_place"  # a link its name cannot follow (/proc/self/fd/1)
    if stat.S_ISCHR(st.st_mode) or stat.S_ISFIFO(st.st_mode):
        return path, "in_place"
    kind = "a block device" if stat.S_ISBLK(st.st_mode) else "not a regular file"
    raise ValueError(f"cannot write {path}: it is {kind}; refusing to replace or write it.")


def check_output_path(path, inputs=()):
    """Raise a ``ValueError`` if writing ``path`` could destroy something.

    Refused: ``path`` is the same file as one of ``inputs`` (compared by
    device and inode, after following links), an existing directory, a block
    device or socket, or a new file in a directory that does not exist; also
    ``-`` (standard output is handled by the caller, see :func:`write_table`).
    Called by :func:`atomic_write`; call it early to fail before a long
    computation.

    Parameters
    ----------
    path : str or path-like
        The output to check.
    inputs : iterable of str or path-like, default=()
        Files the output must not replace.
    """
    _output_plan(path, inputs)


@contextlib.contextmanager
def atomic_write(path, mode="wb", inputs=()):
    """Open a file-like object for ``path``; on success its content lands there.

    A regular (or new) file is written through a temporary file beside it that
    replaces it in one ``os.replace``: if the ``with`` block (or the replace)
    raises, the temporary file is removed and ``path`` is untouched; the new
    file gets the permissions a new file would. A character device or FIFO is
    written in place, once the block has succeeded. Everything else
    :func:`check_output_path` refuses is refused.

    Parameters
    ----------
    path : str or path-like
        The output.
    mode : {"wb", "w"}, default="wb"
        Binary or text (UTF-8, no newline translation).
    inputs : iterable of str or path-like, default=()
        Files the output must not replace (see :func:`check_output_path`).

    Yields
    ------
    file : file object
        Write the content here; it lands at ``path`` when the ``with`` block ends
        without an exception.
    """
    target, how = _output_plan(path, inputs)
    binary = "b" in mode
    if how == "in_place":
        buffer = _io.BytesIO() if binary else _io.StringIO(newline="")
        yield buffer
        with open(target, "wb" if binary else "w", encoding=None if binary else "utf-8") as f:
            f.write(buffer.getvalue())
        return
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    except OSError as exc:  # name the output, not the temporary file
        raise OSError(exc.errno, exc.strerror, str(path)) from None
    try:
        with os.fdopen(
            fd, mode, encoding=None if binary else "utf-8", newline=None if binary else ""
        ) as f:
            umask = os.umask(0)
            os.umask(umask)
            os.fchmod(f.fileno(), 0o666 & ~umask)  # mkstemp's 0600 -> a new file's mode
            yield f
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


# --------------------------------------------------------------------------- reads

_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISFIFO, "a named pipe"),
    (stat.S_ISSOCK, "a socket"),
)


def _check_regular(path, st, what):
    if not stat.S_ISREG(st.st_mode):
        kind = next((k for test, k in _KINDS if test(st.st_mode)), "not a regular file")
        raise ValueError(f"{path} is {kind}, not a regular file; {what} must be a file.")


def _read_limited(path, max_bytes, what="the input", limit="max_bytes"):
    """The bytes of the regular file ``path``, refused before reading if larger than ``max_bytes``.

    A device (``/dev/zero``), a named pipe, a socket or a directory is refused
    without being opened (a device can be endless, a pipe blocks); the size is
    checked on the opened file before anything is read, and a file that grows
    or shrinks while being read is refused.

    Parameters
    ----------
    path : str or path-like
        The file.
    max_bytes : int
        Largest size accepted.
    what : str, default="the input"
        Names the file's role in messages (``"a model file"``).
    limit : str, default="max_bytes"
        Names the limit in messages (the parameter that sets it).

    Returns
    -------
    data : bytes
        The file's content.

    Raises
    ------
    FileNotFoundError
        If ``path`` does not exist.
    ValueError
        If ``path`` is not a regular file or is larger than ``max_bytes``.
    """
    _check_regular(path, os.stat(path), what)
    with open(path, "rb") as f:
        st = os.fstat(f.fileno())
        _check_regular(path, st, what)  # the file opened is the file checked
        if st.st_size > max_bytes:
            raise ValueError(
                f"{path} is {st.st_size} bytes, above the limit of {max_bytes} ({limit}) for "
                f"{what}; refusing to read it."
            )
        data = f.read(st.st_size)  # read(n) allocates n bytes: the size, not the limit
        grew = f.read(1)
    if grew or len(data) != st.st_size:
        raise ValueError(f"{path} changed while being read; try again once it is complete.")
    return data


# --------------------------------------------------------------------------- models

# Limits :func:`load` checks before skops parses anything. A real convexagg model
# nests about 20 levels deep; skops' loader recurses a few Python frames per level
# (400 levels still load under Python's default recursion limit).
MAX_SCHEMA_DEPTH = 200
# The object tree's JSON: a digits model (one-vs-one, 45 binaries, cv=5: 270
# fitted learners) has 2.8 MB; 256 MiB leaves room for codes of thousands of
# columns. It is read whole (and then parsed by skops), so it is bounded on its own.
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
    constant stand-in for one-sided binary problems), the scikit-learn
    estimators convexagg builds by default (``LogisticRegression``; the command
    line's ``MaxAbsScaler`` and ``StandardScaler`` in a ``Pipeline``) and
    ``numpy.dtype``.

    Returns
    -------
    names : list of str
        Sorted type names, such as ``"convexagg.estimator.ConvexAggregationClassifier"``.
    """
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import MaxAbsScaler, StandardScaler

    classes = _public_classes() | {LogisticRegression, Pipeline, MaxAbsScaler, StandardScaler}
    return sorted({_type_name(cls) for cls in classes} | {"numpy.dtype"})


def save(model, path, inputs=()):
    """Write ``model`` to ``path`` with skops, atomically.

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
        inside another function). Nothing is written then.
    """
    import skops.io as sio

    data = sio.dumps(model)  # serialise first: nothing is written if this fails
    try:  # the model's own types: trusting them runs nothing the caller did not have
        sio.loads(data, trusted=sio.get_untrusted_types(data=data))
    except Exception as exc:  # noqa: BLE001 - whatever skops raises, the file is unusable
        raise ValueError(
            f"cannot save the model to {path}: the file could not be loaded back "
            f"({type(exc).__name__}: {_first_line(exc)}); a lambda or a function defined "
            "inside another function cannot be saved: use a function defined at the top "
            "level of a module. Nothing was written."
        ) from exc
    with atomic_write(path, "wb", inputs=inputs) as f:
        f.write(data)


def _first_line(exc):
    lines = str(exc).strip().splitlines()
    return lines[0] if lines else ""


_JSON_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"', re.DOTALL)


_DEPTH_STEP = np.zeros(256, dtype=np.int8)
_DEPTH_STEP[[ord("["), ord("{")]] = 1
_DEPTH_STEP[[ord("]"), ord("}")]] = -1


def _json_depth(data, chunk=2**20):
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
    depth = _json_depth(archive.read("schema.json"))
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
    import skops.io as sio

    # read once (what is checked is what is loaded), bounded before reading
    data = _read_limited(path, max_bytes, "a model file")
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
        return sio.loads(data, trusted=list(untrusted))
    except MemoryError:
        raise
    except Exception as exc:  # noqa: BLE001 - a crafted or damaged tree of trusted types
        raise ValueError(
            f"{path} is a corrupt or crafted skops model file: loading it failed "
            f"({type(exc).__name__}: {_first_line(exc)})."
        ) from exc


# --------------------------------------------------------------------------- CSV

# Field texts that mean "no value" (pandas' defaults, compared case-insensitively).
MISSING_LABELS = frozenset(
    ["", "na", "n/a", "nan", "-nan", "null", "none", "#n/a", "<na>", "#na", "nil"]
)
# Largest CSV input, as text (after gunzip): pandas needs several times this in memory.
MAX_CSV_BYTES = 2**32
_NA_TEXTS = sorted({v for m in MISSING_LABELS for v in (m, m.upper(), m.capitalize())})
_SEPARATORS = {",": "comma", ";": "semicolon", "\t": "tab", "|": "vertical bar"}
_COMPRESSED = {
    b"BZh": "bzip2",
    b"\xfd7zXZ\x00": "xz",
    b"PK\x03\x04": "zip",
    b"\x28\xb5\x2f\xfd": "zstd",
}


def _shown(field, limit=40):
    """``repr(field)``, cut to ``limit`` characters (a field can be megabytes long)."""
    if len(field) <= limit:
        return repr(field)
    return f"{field[:limit]!r}... ({len(field)} characters)"


@contextlib.contextmanager
def _no_field_limit():
    """The csv module without its field size limit (pandas has none either)."""
    old = csv.field_size_limit()
    csv.field_size_limit(sys.maxsize)
    try:
        yield
    finally:
        csv.field_size_limit(old)


_BOM = b"\xef\xbb\xbf"


def _contents(path, data, max_bytes):
    """The text bytes of a plain or gzip file (recognised by its magic bytes, not its
    name), without a UTF-8 byte-order mark; decompressed up to ``max_bytes`` only."""
    if data[:2] == b"\x1f\x8b":
        try:
            with gzip.GzipFile(fileobj=_io.BytesIO(data)) as f:
                data = f.read(max_bytes + 1)
        except (OSError, EOFError, zlib.error) as exc:
            raise ValueError(f"{path} is a damaged gzip file ({exc}).") from None
        if len(data) > max_bytes:
            raise ValueError(
                f"{path} decompresses to more than {max_bytes} bytes, the limit for a CSV "
                "input; refusing to read it."
            )
    for magic, kind in _COMPRESSED.items():
        if data.startswith(magic):
            raise ValueError(
                f"{path} is {kind}-compressed; convexagg reads plain or gzip-compressed CSV."
            )
    nul = data.find(b"\x00")
    if nul >= 0:  # never in UTF-8 text; the first sign of a binary file (or UTF-16 text)
        raise ValueError(
            f"{path} is not a text CSV file: it holds binary data (a NUL byte at byte {nul}); "
            "give a CSV file saved as UTF-8 text."
        )
    return data[len(_BOM) :] if data.startswith(_BOM) else data


def _lines(data):
    """The lines of ``data`` (bytes, line ends kept), one at a time: no copy of the whole."""
    start = 0
    while start < len(data):
        end = data.find(b"\n", start)
        end = len(data) if end < 0 else end + 1
        yield data[start:end]
        start = end


def _sniff_separator(line):
    """The most frequent of ``, ; tab |`` outside quotes in the header line (comma if none)."""
    bare = re.sub(r'"[^"]*"', "", line)
    counts = {sep: bare.count(sep) for sep in _SEPARATORS}
    best = max(counts, key=counts.get)
    return best if counts[best] else ","


class CSVFile:
    """A delimited text file with a header row, read with pandas.

    Parameters
    ----------
    path : str or path-like
        Plain or gzip-compressed (recognised by its first bytes) UTF-8 text.
    sep : str, default=None
        Field separator; None detects it from the header line (the most
        frequent of comma, semicolon, tab and vertical bar; comma if none).
    decimal : str, default="."
        Decimal mark of the numbers (``","`` for decimal-comma files).
    max_bytes : int, default=MAX_CSV_BYTES
        Largest size of the text (the file, and its content after gunzip);
        checked before reading. A device, a named pipe or a directory is
        refused, as is a file holding binary data.

    Attributes
    ----------
    columns : list of str
        The header's names (stripped; unique and non-empty, else a ``ValueError``).
    sep : str
    """

    def __init__(self, path, sep=None, decimal=".", max_bytes=MAX_CSV_BYTES):
        self.path = path
        self.decimal = decimal
        data = _read_limited(path, max_bytes, "a CSV input")
        self._data = _contents(path, data, max_bytes)  # pandas parses the bytes
        first = next((line for line in self._text_lines() if line.strip()), None)
        if first is None:
            raise ValueError(f"{path} is empty; a header row of column names is expected.")
        self.sep = _sniff_separator(first) if sep is None else sep
        if len(self.sep) != 1:
            raise ValueError(f"the separator must be one character, got {self.sep!r}.")
        if self.sep == decimal:
            raise ValueError(f"the separator and the decimal mark are both {decimal!r}.")
        line, header = next(self._records())
        self.columns = [name.strip() for name in header]
        if any(not name for name in self.columns):
            raise ValueError(f"{path}, line {line}: the header has an empty name.")
        duplicates = sorted({n for n in self.columns if self.columns.count(n) > 1})
        if duplicates:
            raise ValueError(f"{path}: duplicate column names in the header: {duplicates}.")

    def _text_lines(self):
        """The decoded lines, one at a time (a UTF-8 sequence never spans a line end)."""
        offset = 0
        for number, line in enumerate(_lines(self._data), start=1):
            try:
                yield line.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise ValueError(
                    f"{self.path}, line {number}: not UTF-8 text ({exc.reason} at byte "
                    f"{offset + exc.start} of the file); save it as UTF-8."
                ) from None
            offset += len(line)

    def _records(self):
        """``(line number, fields)`` of every non-blank record, header first (csv module;
        used for the header and to locate problems, not to read the table)."""
        with _no_field_limit():
            reader = csv.reader(self._text_lines(), delimiter=self.sep)
            for record in reader:
                if record and any(field.strip() for field in record):
                    yield reader.line_num, record

    def _record(self, row):
        """``(line number, fields)`` of data row ``row`` (0-based, as pandas numbers them)."""
        for i, item in enumerate(self._records()):
            if i == row + 1:
                return item
        raise IndexError(row)  # pragma: no cover - pandas and csv agree on the rows

    def where(self, row, column):
        """Say where a value is, for messages: ``"FILE, line N, column 'NAME'"``.

        Parameters
        ----------
        row : int
            Data row, 0-based (the header is not counted).
        column : str
            Column name.

        Returns
        -------
        where : str
            File, line (1-based, as an editor shows it) and column.
        """
        return f"{self.path}, line {self._record(row)[0]}, column {column!r}"

    def separator_hint(self):
        """Advise on the separator when the header does not look split by the right one.

        Returns
        -------
        hint : str
            The advice, or ``""``.
        """
        if len(self.columns) > 1 or not any(sep in self.columns[0] for sep in _SEPARATORS):
            return ""
        used = _SEPARATORS.get(self.sep, repr(self.sep))
        return (
            f" (the header was split on {used}s; if the file uses another separator, "
            "give it: --sep)"
        )

    def _ragged(self, line, record):
        hint = ""
        if len(self.columns) == 1 and len(record) > 1:
            hint = self.separator_hint() or " (another separator? give it: --sep)"
        return ValueError(
            f"{self.path}, line {line}: {len(record)} fields, but the header has "
            f"{len(self.columns)} columns{hint}."
        )

    def _first_ragged(self, rows=None):
        """Raise for the first data row (of ``rows``, default all) whose field count
        differs from the header's."""
        wanted = None if rows is None else set(int(r) for r in rows)
        for i, (line, record) in enumerate(self._records()):
            if i and (wanted is None or i - 1 in wanted) and len(record) != len(self.columns):
                raise self._ragged(line, record)

    def read(self, numeric=(), hint=""):
        """The table: ``numeric`` columns as float64, every other column as text.

        Parameters
        ----------
        numeric : list of str
            Columns that must hold a finite number in every row.
        hint : str, default=""
            Appended to the message about a value that is not a number (the
            command line: how to leave a column out).

        Returns
        -------
        pandas.DataFrame
            One row per non-blank data line; text columns are stripped strings.

        Raises
        ------
        ValueError
            Naming the file, the line and the column of the first missing,
            non-numeric or non-finite value, or the first row whose number of
            fields differs from the header's; a file without data rows.
        """
        import pandas as pd

        numeric = list(numeric)
        options = {
            "sep": self.sep,
            "header": 0,
            "names": self.columns,
            "decimal": self.decimal,
            "keep_default_na": False,
            "skip_blank_lines": True,
            "engine": "c",
            "encoding": "utf-8",
            "index_col": False,  # never take a first column as the index (shifted columns)
        }
        if int(pd.__version__.split(".")[0]) < 3:  # pandas 3 parses round-trip by default
            options["float_precision"] = "round_trip"
        dtype = {c: (np.float64 if c in numeric else str) for c in self.columns}
        na = {c: _NA_TEXTS for c in numeric}
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always", pd.errors.ParserWarning)
                frame = pd.read_csv(_io.BytesIO(self._data), dtype=dtype, na_values=na, **options)
        except UnicodeDecodeError:
            for _ in self._text_lines():  # raises, naming the byte
                pass
            raise
        except pd.errors.ParserError:  # too many fields in some rows
            self._first_ragged()
            raise
        except ValueError:  # a value that is not a number: find it
            text = pd.read_csv(_io.BytesIO(self._data), dtype=str, na_filter=False, **options)
            self._raise_not_numbers(text, numeric, hint)
            raise
        if any(issubclass(w.category, pd.errors.ParserWarning) for w in caught):
            self._first_ragged()  # too many fields in every row: pandas dropped some
        if frame.shape[0] == 0:
            raise ValueError(f"{self.path} has a header but no data rows.")
        last = self.columns[-1]
        if last not in numeric:  # a row short of fields leaves its last field empty
            empty = np.flatnonzero(frame[last].isna().to_numpy() | (frame[last] == "").to_numpy())
            if empty.size:
                self._first_ragged(empty)
        for column in self.columns:
            if column not in numeric:
                frame[column] = frame[column].fillna("").str.strip()
        values = frame[numeric].to_numpy(dtype=np.float64)
        bad = ~np.isfinite(values)
        if bad.any():
            row = int(np.flatnonzero(bad.any(axis=1))[0])
            self._raise_not_finite(row, numeric[int(np.flatnonzero(bad[row])[0])])
        return frame

    def _raise_not_finite(self, row, column):
        line, record = self._record(row)
        if len(record) != len(self.columns):
            raise self._ragged(line, record)
        field = record[self.columns.index(column)].strip()
        where = f"{self.path}, line {line}, column {column!r}"
        if field.lower() in MISSING_LABELS:
            shown = f" ({field!r})" if field else ""
            raise ValueError(f"{where}: missing value{shown}; features must be numbers.")
        raise ValueError(f"{where}: {_shown(field)} is not a finite number.")

    def _raise_not_numbers(self, text, numeric, advice=""):
        """Raise for the first field of ``numeric`` columns in ``text`` (all strings)
        that is neither a number nor a missing value."""
        import pandas as pd

        first = None
        for column in numeric:
            values = text[column].str.strip()
            parsed = values if self.decimal == "." else values.str.replace(self.decimal, ".")
            missing = values.str.lower().isin(MISSING_LABELS).to_numpy()
            bad = pd.to_numeric(parsed, errors="coerce").isna().to_numpy() & ~missing
            rows = np.flatnonzero(bad)
            if rows.size and (first is None or rows[0] < first[0]):
                first = (int(rows[0]), column, values.iloc[rows[0]])
        if first is None:
            return
        row, column, field = first
        hint = ""
        if self.decimal == "." and re.fullmatch(r"[+-]?\d*,\d+", field):
            hint = " (it looks like a decimal comma: give the decimal mark, --decimal ',')"
        raise ValueError(
            f"{self.where(row, column)}: {_shown(field)} is not a number; features must be "
            f"numeric{hint}.{advice}"
        )


_INTEGER = re.compile(r"-?(?:0|[1-9][0-9]*)")  # as str(int) writes it
_DIGITS = re.compile(r"[+-]?[0-9]+")


def parse_labels(values, name="y", where=None):
    """Class labels from their texts: the one label parser of convexagg's CSV readers.

    Integers when every label is written as one (canonically: ``7``; labels
    such as ``007`` or ``+7`` are codes and stay texts), int64 or uint64 when
    they fit, else the texts (IDs beyond 64 bits); floats when every label is a
    number; else the texts. The result is then checked as the estimators check
    ``y`` (so continuous numbers are refused with the same message).

    Parameters
    ----------
    values : array-like of str
        The labels as written.
    name : str, default="y"
        Names the labels in messages (the command line: file and column).
    where : callable, default=None
        ``where(i)`` names label ``i`` in a message (file, line and column);
        ``name[i]`` when None.

    Returns
    -------
    labels : ndarray of shape (n_samples,)
        Integers, floats or texts, as described above.

    Raises
    ------
    ValueError
        For a missing label (empty, ``NA``, ``nan``, ``null``, ``None``, ...;
        see :data:`MISSING_LABELS`), naming where it is, or labels that are
        not classes.
    """
    from .estimator import _check_targets

    where = where or (lambda i: f"{name}[{i}]")
    texts = np.array([str(v).strip() for v in values], dtype=object)
    missing = np.flatnonzero(np.isin(np.char.lower(texts.astype(str)), list(MISSING_LABELS)))
    if missing.size:
        i = int(missing[0])
        shown = f" ({texts[i]!r})" if texts[i] else ""
        raise ValueError(f"{where(i)}: missing class label{shown}; every row needs one.")
    labels = _typed_labels(texts)
    try:
        _check_targets(labels)
    except ValueError as exc:
        raise ValueError(f"{name}: {exc}") from None
    return labels


def _typed_labels(texts):
    if all(_DIGITS.fullmatch(t) for t in texts):
        if not all(_INTEGER.fullmatch(t) for t in texts):
            return texts.astype(str)  # 007, +7: codes written as text, kept as text
        for dtype in (np.int64, np.uint64):
            with contextlib.suppress(OverflowError, ValueError):
                return np.array([int(t) for t in texts], dtype=dtype)
        return texts.astype(str)  # IDs beyond 64 bits: labels, not numbers
    try:
        return texts.astype(np.float64)
    except ValueError:
        return texts.astype(str)


def write_table(path, frame, float_format="%.6g", inputs=()):
    """Write a pandas DataFrame as CSV (header, no index) to ``path`` or standard output.

    Parameters
    ----------
    path : str, path-like or None
        ``None`` or ``"-"``: standard output (the whole text at once, after it
        is complete); otherwise through :func:`atomic_write`.
    frame : pandas.DataFrame
        The table.
    float_format : str, default="%.6g"
        printf-style format of floats (``"%.17g"`` keeps every digit).
    inputs : iterable of str or path-like, default=()
        Files ``path`` must not replace.
    """
    text = frame.to_csv(index=False, float_format=float_format, lineterminator="\n")
    if path is None or str(path) == STDOUT:
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    with atomic_write(path, "w", inputs=inputs) as f:
        f.write(text)
