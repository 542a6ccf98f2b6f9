"""Guarded file access: every write goes through :func:`atomic_write` (refusing to
destroy an input, a directory or a device), every read of untrusted input through
:func:`read_limited` (a regular file, bounded before it is read).
"""

from __future__ import annotations

import contextlib
import io as _io
import os
import stat
import tempfile
from pathlib import Path

__all__ = ["STDOUT", "atomic_write", "check_output_path", "read_limited"]

STDOUT = "-"

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


def read_limited(path, max_bytes, what="the input", limit="max_bytes"):
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
