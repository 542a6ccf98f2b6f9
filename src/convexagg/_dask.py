"""Optional Dask support shared by the decoders and the estimators.

Nothing here imports Dask at module level: :func:`is_dask_array` recognises a
Dask array by its type's module, and the other helpers import ``dask.array``
only when they are handed one (so the user already has Dask installed). The
core package therefore runs without Dask; ``pip install convexagg[dask]``
adds it.

Conventions of the Dask paths:

* data are chunked **by rows**: every block holds whole rows (all columns), so
  a block is a self-contained set of samples; arrays chunked along columns are
  rechunked to whole rows (lazily);
* fitting needs the row chunk sizes (``Q.chunks[0]``) to be known, to align
  the labels with the rows of ``Q``; predicting does not.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["aligned_labels", "import_dask_array", "is_dask_array", "map_row_blocks", "row_blocks"]


def is_dask_array(x):
    """Whether ``x`` is a Dask array, decided without importing Dask."""
    return type(x).__module__.startswith("dask.") and hasattr(x, "chunks") and hasattr(x, "dask")


def import_dask_array():
    """``dask.array``, or an ``ImportError`` naming the extra to install."""
    from ._optional import require

    return require("dask.array", "convexagg's Dask support", "dask")


def _has_unknown(sizes):
    return any(isinstance(s, float) and math.isnan(s) for s in sizes)


def row_blocks(X, name="Q", require_known_rows=False):
    """``X`` (a 2-D Dask array) with every block holding whole rows.

    Column chunks are merged (``X.rechunk({1: -1})``, lazy). With
    ``require_known_rows`` the row chunk sizes must be known.
    """
    if X.ndim != 2:
        raise ValueError(f"{name} must be 2-D (n_samples, n_columns), got shape {X.shape}.")
    if require_known_rows and _has_unknown(X.chunks[0]):
        raise ValueError(
            f"the row chunk sizes of the Dask array {name} are unknown; call "
            f"{name}.compute_chunk_sizes() (or build it with known chunks) first."
        )
    if len(X.chunks[1]) > 1:
        X = X.rechunk({1: -1})
    return X


def aligned_labels(y, row_chunks, n_rows, name="y", integer=True):
    """``y`` as a 1-D Dask array chunked exactly like the rows of ``Q``.

    A NumPy ``y`` is split into the row chunks of ``Q``; a Dask ``y`` with other
    chunks is rechunked (lazy, cheap for a 1-D array). ``name`` and ``integer``
    serve other per-row vectors (``sample_weight``: any numbers).
    """
    da = import_dask_array()
    if is_dask_array(y):
        if y.ndim != 1:
            raise ValueError(f"{name} must be 1-D, got shape {y.shape}.")
        if _has_unknown(y.chunks[0]):
            raise ValueError(
                f"the chunk sizes of the Dask array {name} are unknown; "
                f"call {name}.compute_chunk_sizes() first."
            )
    else:
        y = np.asarray(y)
        if y.ndim != 1:
            raise ValueError(f"{name} must be 1-D, got shape {y.shape}.")
    if y.shape[0] != n_rows:
        what = "label" if integer else "entry"
        raise ValueError(f"{name} must have one {what} per row of Q ({n_rows}), got {y.shape[0]}.")
    if integer and not np.issubdtype(y.dtype, np.integer):
        raise ValueError(f"{name} must hold integer class indices, got dtype {y.dtype}.")
    if not is_dask_array(y):
        return da.from_array(y, chunks=(tuple(row_chunks),))
    if tuple(y.chunks[0]) != tuple(row_chunks):
        y = y.rechunk((tuple(row_chunks),))
    return y


def map_row_blocks(func, X, n_columns, dtype, name="X"):
    """Lazy ``func(block)`` over the row blocks of the Dask array ``X``.

    ``func`` maps a NumPy block of rows to an array of shape
    ``(n_rows, n_columns)``, or ``(n_rows,)`` when ``n_columns`` is None.
    Nothing is computed here.
    """
    X = row_blocks(X, name=name)
    dtype = np.dtype(dtype)
    if n_columns is None:
        return X.map_blocks(func, drop_axis=1, dtype=dtype, meta=np.empty((0,), dtype=dtype))
    return X.map_blocks(
        func,
        chunks=(X.chunks[0], (n_columns,)),
        dtype=dtype,
        meta=np.empty((0, 0), dtype=dtype),
    )
