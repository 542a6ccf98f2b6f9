"""Safe writes, safe model persistence (skops) and the CSV tables of the command line.

Three modules, one concept each: :mod:`~convexagg.io.files` (guarded writes and
bounded reads), :mod:`~convexagg.io.models` (persistence) and
:mod:`~convexagg.io.tables` (CSV tables); the names below are re-exported here.

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
as data instead of pickle's instructions, its members deflate-compressed; the
binaries of a convexagg classifier are stored packed
(:mod:`~convexagg.io.packed`: per group of binaries of one structure, one of
them as a template and one stacked array per numeric attribute), and
:func:`load` rebuilds them bit for bit. :func:`load` reads a file back only if
every type in it is one skops trusts by default (numpy, scipy and scikit-learn
types) or one on convexagg's own list (:func:`trusted_types`: every public
convexagg class, the packed binaries' container, the scikit-learn estimators
convexagg uses by default, numpy dtypes). Anything else, for instance a
user-defined estimator class, is refused with an :class:`UntrustedTypeError`
naming the types; pass ``trusted=[...]`` to accept them once you have checked
the file's origin. Loading a pickle runs arbitrary code; loading through here
does not. Before skops sees the file, :func:`load` checks its shape against
limits (a regular file of at most ``max_bytes``, a ``schema.json`` of at most
:data:`MAX_SCHEMA_BYTES` nested at most :data:`MAX_SCHEMA_DEPTH` levels, every
member's checksum, and every array header against the bytes that hold it), so
a crafted or damaged file is a ``ValueError``, and cannot exhaust the stack or
the memory; the packed binaries are checked as they are rebuilt (values go
only into attributes the template has, of its type, dtype and shape).
:func:`save` loads what it wrote back before writing it, so a model holding
something that cannot be loaded (a lambda) is refused at save time.

CSV tables
----------
:class:`CSVFile` reads a delimited text file with a header row (plain or
gzip-compressed, recognised by its first bytes; separator detected from the
header or given) with pandas' C parser, after checking that it is a regular file
of at most :data:`MAX_CSV_BYTES` of text (also after decompression) and not
binary data; :meth:`CSVFile.read` returns the chosen
columns as float64 (missing values as NaN where allowed), the columns of
categories as text with missing values as NaN, and the others as text;
:meth:`CSVFile.number_shares` says which columns hold numbers. Problems are
found with vectorised checks after parsing and reported with the file, line and
column: a missing (where not allowed), non-numeric or infinite value, a row
with too many or too few fields.
:func:`parse_labels` turns a text column into class labels (integers when
every label is one, floats when every label is a number, else strings) and
checks them as the estimators do.
"""

from .files import STDOUT, atomic_write, check_output_path
from .models import (
    MAX_SCHEMA_BYTES,
    MAX_SCHEMA_DEPTH,
    UntrustedTypeError,
    load,
    save,
    trusted_types,
)
from .tables import MAX_CSV_BYTES, MISSING_LABELS, CSVFile, parse_labels, write_table

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
