"""The CSV tables of the command line: :class:`CSVFile` reads a delimited text file
(plain or gzip) with pandas and reports problems by file, line and column;
:func:`parse_labels` turns a text column into class labels; :func:`write_table`
writes a table to a file or standard output.
"""

from __future__ import annotations

import contextlib
import csv
import gzip
import io as _io
import re
import sys
import warnings
import zlib

import numpy as np

from ..validation import check_targets
from .files import STDOUT, atomic_write, read_limited

__all__ = ["MAX_CSV_BYTES", "MISSING_LABELS", "CSVFile", "parse_labels", "write_table"]

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
        data = read_limited(path, max_bytes, "a CSV input")
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

    def read(self, numeric=(), hint="", missing=False, categorical=()):
        """The table: ``numeric`` columns as float64, every other column as text.

        Parameters
        ----------
        numeric : list of str
            Columns that must hold a finite number in every row (or a missing
            value, with ``missing``).
        hint : str, default=""
            Appended to the message about a value that is not a number (the
            command line: how to leave a column out).
        missing : bool, default=False
            Whether a ``numeric`` column may hold missing values (an empty field
            or one of :data:`MISSING_LABELS`, any case), read as NaN; an error
            otherwise.
        categorical : list of str, default=()
            Text columns of categories: their missing values become NaN, their
            other values stay stripped texts (an object column).

        Returns
        -------
        pandas.DataFrame
            One row per non-blank data line; text columns are stripped strings.

        Raises
        ------
        ValueError
            Naming the file, the line and the column of the first missing
            (unless ``missing``), non-numeric or infinite value, or the first
            row whose number of fields differs from the header's; a file without
            data rows.
        """
        import pandas as pd

        numeric, categorical = list(numeric), list(categorical)
        options = self._options()
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
            self._raise_not_numbers(self._text_frame(), numeric, hint)
            raise
        if any(issubclass(w.category, pd.errors.ParserWarning) for w in caught):
            self._first_ragged()  # too many fields in every row: pandas dropped some
        if frame.shape[0] == 0:
            raise ValueError(f"{self.path} has a header but no data rows.")
        last = self.columns[-1]
        if last not in numeric or missing:  # a row short of fields leaves its last field empty
            empty = frame[last].isna().to_numpy()
            if last not in numeric:
                empty = empty | (frame[last] == "").to_numpy()
            if empty.any():
                self._first_ragged(np.flatnonzero(empty))
        for column in self.columns:
            if column not in numeric:
                frame[column] = frame[column].fillna("").str.strip()
        for column in categorical:
            texts = frame[column].to_numpy(dtype=object)
            absent = np.isin(np.char.lower(texts.astype(str)), list(MISSING_LABELS))
            texts[absent] = np.nan
            frame[column] = pd.Series(texts, index=frame.index, dtype=object)
        values = frame[numeric].to_numpy(dtype=np.float64)
        bad = np.isinf(values) if missing else ~np.isfinite(values)
        if bad.any():
            row = int(np.flatnonzero(bad.any(axis=1))[0])
            self._raise_not_finite(row, numeric[int(np.flatnonzero(bad[row])[0])])
        return frame

    def _options(self):
        """``pandas.read_csv``'s options for this file."""
        import pandas as pd

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
        return options

    def number_shares(self, columns, decimal=None):
        """The share of numbers among the fields of each of ``columns`` that are not missing.

        Parameters
        ----------
        columns : list of str
            Column names.
        decimal : str, default=None
            The decimal mark to read them with; None: the file's. A mark that is
            the separator gives 0.0 for every column.

        Returns
        -------
        shares : list of float
            In the order of ``columns``; 1.0 for a column of numbers (or missing
            values only), which :meth:`read` reads as ``numeric`` with
            ``missing=True``. A file pandas cannot split into rows gives 1.0 for
            every column, for :meth:`read` to report where.
        """
        import pandas as pd

        columns = list(columns)
        decimal = self.decimal if decimal is None else decimal
        if decimal == self.sep:  # no field holds such a number
            return [0.0] * len(columns)
        options = {**self._options(), "decimal": decimal, "usecols": columns}
        try:  # one pass of the C parser: columns of numbers come out as numbers
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # mixed types, short rows: read() reports them
                inferred = pd.read_csv(_io.BytesIO(self._data), na_values=_NA_TEXTS, **options)
            texts = [c for c in columns if inferred[c].dtype.kind not in "iuf"]
            if texts:
                options["usecols"] = texts
                text = pd.read_csv(_io.BytesIO(self._data), dtype=str, na_filter=False, **options)
        except (pd.errors.ParserError, ValueError, IndexError):  # a ragged file
            return [1.0] * len(columns)
        shares = []
        for column in columns:
            if column not in texts:
                shares.append(1.0)
                continue
            not_numbers, missing = self._not_numbers(text[column], decimal)
            present = int((~missing).sum())
            shares.append(1.0 - int(not_numbers.sum()) / present if present else 1.0)
        return shares

    def _text_frame(self):
        """Every field as read, as text (``""`` for an empty one)."""
        import pandas as pd

        return pd.read_csv(_io.BytesIO(self._data), dtype=str, na_filter=False, **self._options())

    def _not_numbers(self, values, decimal=None):
        """``(not_numbers, missing)``: where a text column holds neither a number nor a
        missing value, and where it holds a missing value (bool arrays). The fields that
        do not parse as they are (few in a column of numbers) are looked at again,
        stripped."""
        import pandas as pd

        decimal = self.decimal if decimal is None else decimal

        def numbers(texts):
            texts = texts if decimal == "." else texts.str.replace(decimal, ".", regex=False)
            return pd.to_numeric(texts, errors="coerce").notna().to_numpy()

        bad = ~numbers(values)
        missing = np.zeros(len(values), dtype=bool)
        rows = np.flatnonzero(bad)
        if rows.size:
            texts = values.iloc[rows].str.strip()
            absent = texts.str.lower().isin(MISSING_LABELS).to_numpy()
            missing[rows[absent]] = True
            bad[rows[absent | numbers(texts)]] = False
        return bad, missing

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

        first = None
        for column in numeric:
            rows = np.flatnonzero(self._not_numbers(text[column])[0])
            if rows.size and (first is None or rows[0] < first[0]):
                first = (int(rows[0]), column, text[column].iloc[rows[0]].strip())
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
    where = where or (lambda i: f"{name}[{i}]")
    texts = np.array([str(v).strip() for v in values], dtype=object)
    missing = np.flatnonzero(np.isin(np.char.lower(texts.astype(str)), list(MISSING_LABELS)))
    if missing.size:
        i = int(missing[0])
        shown = f" ({texts[i]!r})" if texts[i] else ""
        raise ValueError(f"{where(i)}: missing class label{shown}; every row needs one.")
    labels = _typed_labels(texts)
    try:
        check_targets(labels)
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
