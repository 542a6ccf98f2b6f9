"""Safe model persistence (skops) and the CSV tables of the command line.

Models
------
:func:`save` writes a model with :mod:`skops.io`, which stores the object tree
as data instead of pickle's instructions; :func:`load` reads it back only if
every type in the file is one skops trusts by default (numpy, scipy and
scikit-learn types) or one on convexagg's own list (:func:`trusted_types`: the
convexagg estimators and decoders, the scikit-learn estimators convexagg uses
by default, numpy dtypes). Anything else, for instance a user-defined
estimator class, is refused with an :class:`UntrustedTypeError` naming the
types; pass ``trusted=[...]`` to accept them once you have checked the file's
origin. Loading a pickle runs arbitrary code; loading through here does not.

Files are written atomically: the bytes go to a temporary file in the target's
directory, which then replaces the target in one ``os.replace``. A failure
leaves the target as it was (absent, or the previous complete file), never
truncated.

CSV tables
----------
:func:`read_csv` reads a comma-separated file with a header row into column
names and rows of strings (numpy and the standard library only, no pandas);
:func:`numeric_matrix` turns chosen columns into a float64 array. Every error
names the file, the line and the column.
"""

from __future__ import annotations

import contextlib
import csv
import gzip
import inspect
import io as _io
import math
import os
import tempfile
import zipfile
from pathlib import Path

import numpy as np
import skops.io as sio

__all__ = [
    "UntrustedTypeError",
    "atomic_write",
    "load",
    "numeric_matrix",
    "read_csv",
    "save",
    "trusted_types",
    "write_csv",
]


class UntrustedTypeError(ValueError):
    """A model file holds types that are not trusted; ``types`` lists them."""

    def __init__(self, message, types):
        super().__init__(message)
        self.types = list(types)


def _type_name(cls):
    return f"{cls.__module__}.{cls.__qualname__}"


def trusted_types():
    """Type names (as skops writes them) that :func:`load` accepts beyond skops' defaults.

    The convexagg estimators, every decoder ``convexagg.decoders`` exports and
    every solver configuration ``convexagg.solvers`` exports, the constant
    stand-in for one-sided binary problems, the scikit-learn estimators
    convexagg builds by default (``LogisticRegression``; ``StandardScaler`` in a
    ``Pipeline`` for the command line) and ``numpy.dtype``.
    """
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import StandardScaler

    from . import decoders, solvers
    from .binary import ConstantBinaryPredictor
    from .estimator import CodeMatrixClassifier, ConvexAggregationClassifier
    from .model_selection import ConvexAggregationClassifierCV

    classes = [
        CodeMatrixClassifier,
        ConvexAggregationClassifier,
        ConvexAggregationClassifierCV,
        ConstantBinaryPredictor,
        LogisticRegression,
        Pipeline,
        StandardScaler,
    ]
    for name in decoders.__all__:
        obj = getattr(decoders, name)
        if inspect.isclass(obj) and issubclass(obj, decoders.BaseDecoder):
            classes.append(obj)
    for name in solvers.__all__:  # the solver configurations a fitted decoder keeps
        obj = getattr(solvers, name)
        if inspect.isclass(obj) and issubclass(obj, solvers.SolverConfig):
            classes.append(obj)
    return sorted({_type_name(cls) for cls in classes} | {"numpy.dtype"})


@contextlib.contextmanager
def atomic_write(path, mode="wb"):
    """Open a temporary file beside ``path``; on success it replaces ``path``.

    If the ``with`` block (or the replace) raises, the temporary file is removed
    and ``path`` is untouched. The file gets the permissions a new file would.
    """
    path = Path(path)
    directory = path.resolve().parent
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=directory)
    try:
        encoding = None if "b" in mode else "utf-8"
        newline = None if "b" in mode else ""
        with os.fdopen(fd, mode, encoding=encoding, newline=newline) as f:
            umask = os.umask(0)
            os.umask(umask)
            os.fchmod(f.fileno(), 0o666 & ~umask)  # mkstemp's 0600 -> a new file's mode
            yield f
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def save(model, path):
    """Write ``model`` to ``path`` with skops, atomically.

    Parameters
    ----------
    model : object
        Typically a fitted convexagg estimator; any object skops can persist.
    path : str or path-like
        Conventionally ending in ``.skops``.
    """
    data = sio.dumps(model)  # serialise first: nothing is written if this fails
    with atomic_write(path, "wb") as f:
        f.write(data)


def load(path, trusted=None):
    """Read a model written by :func:`save`, refusing untrusted types.

    Parameters
    ----------
    path : str or path-like
    trusted : list of str, default=None
        Extra type names (as in the error message) to accept for this file.

    Returns
    -------
    object

    Raises
    ------
    FileNotFoundError
        If ``path`` does not exist.
    UntrustedTypeError
        If the file holds a type neither skops nor convexagg trusts and that is
        not in ``trusted``; nothing from the file is instantiated.
    ValueError
        If ``path`` is not a skops file.
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
    data = Path(path).read_bytes()  # read once: what is checked is what is loaded
    try:
        untrusted = sio.get_untrusted_types(data=data)
    except (zipfile.BadZipFile, KeyError, ValueError) as exc:
        raise ValueError(f"{path} is not a skops model file ({exc}).") from None
    refused = sorted(set(untrusted) - set(trusted_types()) - set(trusted))
    if refused:
        raise UntrustedTypeError(
            f"{path} contains types convexagg does not trust: {refused}. Loading them "
            "could run code from the file; if you trust its origin, pass "
            f"trusted={refused!r}.",
            refused,
        )
    return sio.loads(data, trusted=list(untrusted))


# --------------------------------------------------------------------------- CSV


def read_csv(path):
    """Read a CSV file with a header row (gzip-compressed if the name ends in ``.gz``).

    Returns
    -------
    columns : list of str
        The header's column names (unique, non-empty).
    rows : list of (int, list of str)
        Each data row with its line number in the file; blank lines are skipped.
    """
    path = Path(path)
    data = path.read_bytes()
    if path.suffix == ".gz":
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError) as exc:
            raise ValueError(f"{path} is not a readable gzip file ({exc}).") from None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path} is not UTF-8 text ({exc.reason} at byte {exc.start}).") from None
    reader = csv.reader(_io.StringIO(text, newline=""))
    columns = None
    rows = []
    for record in reader:
        if not record or all(not field.strip() for field in record):
            continue
        if columns is None:
            columns = [field.strip() for field in record]
            if any(not name for name in columns):
                raise ValueError(f"{path}, line {reader.line_num}: the header has an empty name.")
            duplicates = sorted({n for n in columns if columns.count(n) > 1})
            if duplicates:
                raise ValueError(f"{path}: duplicate column names in the header: {duplicates}.")
            continue
        if len(record) != len(columns):
            raise ValueError(
                f"{path}, line {reader.line_num}: {len(record)} fields, but the header "
                f"has {len(columns)} columns."
            )
        rows.append((reader.line_num, record))
    if columns is None:
        raise ValueError(f"{path} is empty; a header row of column names is expected.")
    if not rows:
        raise ValueError(f"{path} has a header but no data rows.")
    return columns, rows


def numeric_matrix(path, columns, rows, use):
    """The columns named in ``use`` as a float64 array; every entry a finite number.

    Raises a ``ValueError`` naming the file, line and column of the first
    missing, non-numeric or non-finite value.
    """
    index = [columns.index(name) for name in use]
    X = np.empty((len(rows), len(index)), dtype=np.float64)
    for i, (line, record) in enumerate(rows):
        for j, k in enumerate(index):
            field = record[k].strip()
            where = f"{path}, line {line}, column {columns[k]!r}"
            if not field:
                raise ValueError(f"{where}: missing value; features must be numbers.")
            try:
                value = float(field)
            except ValueError:
                raise ValueError(
                    f"{where}: {field!r} is not a number; features must be numeric."
                ) from None
            if not math.isfinite(value):
                raise ValueError(f"{where}: {field!r} is not a finite number.")
            X[i, j] = value
    return X


def write_csv(path, header, rows):
    """Write ``header`` and ``rows`` as CSV: to ``path`` atomically, or to stdout
    when ``path`` is None (the whole text at once, after it is complete)."""
    buffer = _io.StringIO(newline="")
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    text = buffer.getvalue()
    if path is None:
        import sys

        sys.stdout.write(text)
        return
    with atomic_write(path, "w") as f:
        f.write(text)
