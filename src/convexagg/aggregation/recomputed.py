"""The class-blocked objective with its losses recomputed from ``Q`` on every pass.

:class:`~convexagg.aggregation.BlockedObjective` stores the baseline-shifted
losses (``LT``): two per binary output for one-vs-one, ``8 n M`` bytes in
float32 -- twice a float32 ``Q``, and more than a workstation's memory at
``n = 10^7``, ``M = 325`` (26 GB). :class:`RecomputedObjective` keeps a
reference to ``Q`` instead (no copy: a float32 ``Q`` stays float32) and
computes the stored columns of each chunk of samples when a kernel reads it,
with the same arithmetic as the stored path (:func:`~convexagg.losses.cross_entropy_into`
and the same combinations), so every value, gradient, product and Hessian
equals the stored objective's to the bit at the same ``chunk`` (its default
chunk is smaller, see :func:`recomputed_chunk`: the sums then differ in
rounding only). The price is two logs per output on every pass over the data
(evaluation, Hessian-vector product, Hessian).

:func:`losses_fit_in_memory` is the automatic choice (:class:`~convexagg.decoders.ConvexDecoder`
uses it): the losses are stored while they take at most :data:`STORED_SHARE`
of the machine's physical memory.

**Memory** (beyond ``Q`` itself), for ``n`` samples, ``K`` classes, ``M``
binaries, ``m`` stored columns (``2M`` for one-vs-one), chunks of ``c``
samples (about 1 MB of losses, :func:`recomputed_chunk`), pieces of ``p =``
``_PIECE`` samples, storage itemsize ``s``, ``T`` threads
(``n_threads``) and ``q`` the itemsize of the work copy
of ``Q`` (4 for float32 ``Q`` and storage, else 8)::

    n K 8 per point the solver holds (its class probabilities, float64)
    + T [c m s + p M (q + 2 s)]   each thread's chunk of losses and its piece's
                                  transposed Q and two losses
    + 3 c m s                     the Hessian kernels' three work arrays
    + M^2 8 (+ the solver's subsample of 4,000 rows: 4,000 m 4)

against ``m n s`` more for the stored objective. ``tests/test_aggregation.py``
checks the bound with ``tracemalloc`` on a fit.

**Speed.** A pass (an evaluation or a Hessian-vector product) computes the
losses one piece at a time into preallocated per-thread buffers (fresh
chunk-sized arrays cost page faults on every pass), in single precision when
``Q`` and the storage are float32 (``_losses32``, the same bits), and the
threads share the chunks (``BlockedObjective._pass``).
"""

from __future__ import annotations

import os
import threading

import numpy as np

from ..losses import binary_losses, check_loss, cross_entropy_into
from .blocked import BlockedObjective
from .class_blocks import reencode

__all__ = ["STORED_SHARE", "RecomputedObjective", "losses_fit_in_memory"]

#: the losses are stored while they take at most this share of physical memory
STORED_SHARE = 0.25


def physical_memory():
    """Bytes of physical memory (None where the system does not say)."""
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):  # pragma: no cover - not POSIX
        return None


def losses_fit_in_memory(n_values, dtype):
    """Whether ``n_values`` stored losses of ``dtype`` take at most
    :data:`STORED_SHARE` of the physical memory (True where it is unknown).

    Parameters
    ----------
    n_values : int
        Stored losses (two per binary output for one-vs-one).
    dtype : numpy dtype
        Their storage precision.

    Returns
    -------
    store : bool
        Store them (:class:`~convexagg.aggregation.BlockedObjective`), or
        recompute them on every pass (:class:`RecomputedObjective`).
    """
    total = physical_memory()
    return total is None or n_values * np.dtype(dtype).itemsize <= STORED_SHARE * total


def recomputed_chunk(n_stored, itemsize):
    """Samples per chunk of :class:`RecomputedObjective`: about 1 MB of losses, in
    whole pieces of ``_PIECE`` samples (at least one). Smaller than the stored
    objective's 4 MB: a chunk's losses are written, then read by the kernels, and
    stay in the core's cache between the two.

    Parameters
    ----------
    n_stored : int
        Stored columns (two per binary output for one-vs-one).
    itemsize : int
        Bytes per stored loss.

    Returns
    -------
    chunk : int
        Samples per chunk.
    """
    per_chunk = min(16384, (1 << 20) // max(1, n_stored * itemsize))
    return int(max(1, per_chunk // _PIECE) * _PIECE)


class _Losses:
    """Read-only stand-in for ``LT``: ``[:, cols]`` computes those samples' stored
    columns (into a buffer of the calling thread, reused by its next read),
    ``[rows]`` selects stored columns lazily, any other sample index returns a
    new array."""

    def __init__(self, objective, Q, loss, output, rows=None):
        self._objective, self._Q, self._loss, self._output = objective, Q, loss, output
        self._rows = rows
        m = objective._fill_src.size if rows is None else len(rows)
        self.shape = (m, Q.shape[0])
        self.dtype = objective.dtype
        # float32 outputs and storage: the losses in single precision (_losses32)
        self._single = loss == "cross_entropy" and Q.dtype == self.dtype == np.float32
        self._local = threading.local()  # each thread's work buffers (_buffers)

    def __getitem__(self, key):
        if not isinstance(key, tuple):  # stored columns (restrict)
            rows = np.arange(self.shape[0])[key]
            if self._rows is not None:
                rows = np.asarray(self._rows)[rows]
            return _Losses(self._objective, self._Q, self._loss, self._output, rows)
        everything, cols = key
        if everything != slice(None):
            raise IndexError("only [:, samples] and [stored columns] are supported.")
        if isinstance(cols, slice) and cols.step in (None, 1):
            return self._chunk(cols)
        samples = np.arange(self.shape[1])[cols]  # a copy of any other selection
        out = np.empty((self.shape[0], samples.size), dtype=self.dtype)
        step = self._objective.chunk
        for start in range(0, samples.size, step):
            part = samples[start : start + step]
            self._compute(part, out[:, start : start + part.size])
        return out

    def _buffers(self):
        """This thread's work arrays, allocated once per thread: fresh arrays of a
        chunk's size come from ``mmap`` and can pay page faults on every chunk."""
        buf = getattr(self._local, "buffers", None)
        if buf is None:
            M, width = self._objective.n_weights, min(self._objective.chunk, self.shape[1])
            buf = self._local.buffers = {
                "out": np.empty((self.shape[0], width), dtype=self.dtype),
                "QT": np.empty((M, _PIECE), dtype=np.float32 if self._single else np.float64),
                "pair": np.empty((2, M, _PIECE), dtype=self.dtype),
            }
        return buf

    def _chunk(self, cols):
        start, stop, _ = cols.indices(self.shape[1])
        out = self._buffers()["out"]
        if out.shape[1] < stop - start:  # pragma: no cover - chunks are at most objective.chunk
            out = np.empty((self.shape[0], stop - start), dtype=self.dtype)
        return self._compute(cols, out[:, : stop - start])

    def _compute(self, samples, out):
        """Write the stored columns of ``samples`` into ``out`` as the stored objective
        fills them, ``_PIECE`` samples at a time."""
        obj = self._objective
        src = obj._fill_src if self._rows is None else obj._fill_src[self._rows]
        rows = self._Q[samples]
        buf = self._buffers()
        for a in range(0, rows.shape[0], _PIECE):
            piece = rows[a : a + _PIECE]
            c = piece.shape[0]
            QT = buf["QT"][:, :c]
            QT[...] = piece.T
            if self._single:
                pair = _losses32(QT, buf["pair"][:, :, :c])
            elif self._loss == "cross_entropy":
                pair = cross_entropy_into(QT, buf["pair"][:, :, :c], work=QT)
            else:
                pair = np.stack(binary_losses(QT, self._loss, self._output))
            stacked = obj._stack(pair).astype(obj.dtype, copy=False)
            np.take(stacked, src, axis=0, out=out[:, a : a + c], mode="clip")
        return out


def _losses32(q, out):
    """:func:`~convexagg.losses.cross_entropy_into` of float32 probabilities into
    float32 losses, in single precision throughout, with the same result to the
    bit: clipping ``q`` to ``[eps, 1 - eps]`` (``eps = 2**-52``, float64's) and
    rounding to float32 gives ``max(q, eps)``, and ``1 - q`` in float32 equals
    float64's ``1 - q`` rounded (exact in float64 for float32 ``q >= 2**-29``;
    below, both round to 1); 1 only becomes ``1 - eps``, whose complement is
    ``eps``. Saves the float64 copy of the chunk and two conversions."""
    np.maximum(q, _EPS64, out=out[0])
    np.subtract(np.float32(1.0), q, out=out[1])
    np.maximum(out[1], _EPS64, out=out[1])
    np.log(out, out=out)
    np.negative(out, out=out)
    return out


#: samples whose losses are computed at a time (a kernel's chunk is cut into such
#: pieces): their work arrays, about 1 MB, stay in the core's cache
_PIECE = 512

#: float64's machine epsilon (2**-52, exact in float32): where probabilities are clipped
_EPS64 = np.float32(np.finfo(np.float64).eps)


class RecomputedObjective(BlockedObjective):
    """:class:`~convexagg.aggregation.BlockedObjective` that recomputes its losses from
    ``Q`` on every pass instead of storing them (see the module docstring).

    ``LT`` is a stand-in that computes the stored columns of a chunk of samples
    when a kernel reads it; everything else is the stored objective's.

    Parameters
    ----------
    Q : ndarray of shape (n_samples, M)
        Binary outputs, validated; kept by reference (no copy), not to be
        changed while the objective is in use.
    code : ndarray of shape (n_classes, M)
        The code matrix.
    y : ndarray of shape (n_samples,)
        Integer class indices.
    penalty : Penalty, default=None
        ``Penalty()`` (none) when None.
    loss : str, default="cross_entropy"
        As in :func:`convexagg.losses.binary_losses`.
    output : {"proba", "margin"}, default="proba"
        What ``Q`` holds.
    dtype : {numpy.float64, numpy.float32}, default=numpy.float64
        Precision of the losses and the products.
    chunk : int, default=None
        Samples per chunk (default: about 1 MB of losses, :func:`recomputed_chunk`).
    fit_intercept : bool, default=False
        Free class intercepts after the weights.
    sample_weight : ndarray of shape (n_samples,), default=None
        Weights of the samples in the likelihood.

    Attributes
    ----------
    LT : object
        The stand-in for the stored losses (``shape`` and ``dtype`` as
        :attr:`BlockedObjective.LT`).
    """

    # the logs dominate a pass and release the GIL, so threads sharing the chunks
    # divide its time (BENCHMARKS.md, "Many rows in memory: losses stored or recomputed")
    threaded_passes = True

    def __init__(
        self,
        Q,
        code,
        y,
        penalty=None,
        *,
        loss="cross_entropy",
        output="proba",
        dtype=np.float64,
        chunk=None,
        fit_intercept=False,
        sample_weight=None,
    ):
        check_loss(loss, output)
        if not chunk:
            m = reencode(code)["weight"].size
            chunk = recomputed_chunk(m, np.dtype(dtype).itemsize)
        self._setup(code, y, penalty, dtype, chunk, Q.shape[0], fit_intercept, sample_weight)
        self.LT = _Losses(self, Q, loss, output)

    def _new_losses(self, m):
        return None  # set by __init__ / restrict: nothing of size m x n

    @classmethod
    def from_outputs(
        cls,
        Q,
        code,
        y,
        penalty=None,
        *,
        loss="cross_entropy",
        output="proba",
        dtype=np.float64,
        chunk=None,
        fit_intercept=False,
        sample_weight=None,
    ):
        """The objective of ``Q``, as :meth:`BlockedObjective.from_outputs` builds it.

        Parameters
        ----------
        Q : ndarray of shape (n_samples, M)
            Binary outputs, validated; kept by reference.
        code : ndarray of shape (n_classes, M)
            The code matrix.
        y : ndarray of shape (n_samples,)
            Integer class indices.
        penalty : Penalty, default=None
            ``Penalty()`` (none) when None.
        loss : str, default="cross_entropy"
            As in :func:`convexagg.losses.binary_losses`.
        output : {"proba", "margin"}, default="proba"
            What ``Q`` holds.
        dtype : {numpy.float64, numpy.float32}, default=numpy.float64
            Precision of the losses and the products.
        chunk : int, default=None
            Samples per chunk (default: about 4 MB of losses).
        fit_intercept : bool, default=False
            Free class intercepts after the weights.
        sample_weight : ndarray of shape (n_samples,), default=None
            Weights of the samples in the likelihood.

        Returns
        -------
        objective : RecomputedObjective
            The objective on those outputs.
        """
        return cls(
            Q,
            code,
            y,
            penalty,
            loss=loss,
            output=output,
            dtype=dtype,
            chunk=chunk,
            fit_intercept=fit_intercept,
            sample_weight=sample_weight,
        )
