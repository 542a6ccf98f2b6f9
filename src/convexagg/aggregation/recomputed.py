"""The class-blocked objective with its losses recomputed from ``Q`` on every pass.

:class:`~convexagg.aggregation.BlockedObjective` stores the baseline-shifted
losses (``LT``): two per binary output for one-vs-one, ``8 n M`` bytes in
float32 -- twice a float32 ``Q``, and more than this machine's memory at
``n = 10^7``, ``M = 325`` (26 GB). :class:`RecomputedObjective` keeps a
reference to ``Q`` instead (no copy: a float32 ``Q`` stays float32) and
computes the stored columns of each chunk of samples when a kernel reads it,
with the same arithmetic as the stored path (:func:`~convexagg.losses.cross_entropy_into`
and the same combinations), so every value, gradient, product and Hessian
equals the stored objective's to the bit. The price is two logs per output on
every pass over the data (evaluation, Hessian-vector product, Hessian).

:func:`losses_fit_in_memory` is the automatic choice (:class:`~convexagg.decoders.ConvexDecoder`
uses it): the losses are stored while they take at most :data:`STORED_SHARE`
of the machine's physical memory.

**Memory** (beyond ``Q`` itself), for ``n`` samples, ``K`` classes, ``m``
stored columns (``2M`` for one-vs-one), chunks of ``c`` samples (about 4 MB of
losses, :attr:`BlockedObjective.chunk`) and storage itemsize ``s``::

    n K 8 per point the solver holds (its class probabilities, float64)
    + c (4 m s + 8 M + 2 M s)     the chunk's losses, the Hessian kernels' three
                                  work arrays, a float64 transposed chunk of Q
                                  and its two losses
    + M^2 8 (+ the solver's subsample of 4,000 rows: 4,000 m 4)

against ``m n s`` more for the stored objective. ``tests/test_aggregation.py``
checks the bound with ``tracemalloc`` on a fit.
"""

from __future__ import annotations

import os

import numpy as np

from ..losses import binary_losses, check_loss, cross_entropy_into
from .blocked import BlockedObjective

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


class _Losses:
    """Read-only stand-in for ``LT``: ``[:, cols]`` computes those samples' stored
    columns (into a buffer reused by the next read), ``[rows]`` selects stored
    columns lazily, any other sample index returns a new array."""

    def __init__(self, objective, Q, loss, output, rows=None):
        self._objective, self._Q, self._loss, self._output = objective, Q, loss, output
        self._rows = rows
        m = objective._fill_src.size if rows is None else len(rows)
        self.shape = (m, Q.shape[0])
        self.dtype = objective.dtype
        self._buffer = None

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
            out[:, start : start + part.size] = self._compute(part)
        return out

    def _chunk(self, cols):
        c = len(range(*cols.indices(self.shape[1])))
        if self._buffer is None or self._buffer.shape[1] < c:
            self._buffer = np.empty((self.shape[0], c), dtype=self.dtype)
        return self._compute(cols, self._buffer[:, :c])

    def _compute(self, samples, out=None):
        """The stored columns of ``samples`` as the stored objective fills them."""
        obj = self._objective
        M = obj.n_weights
        rows = self._Q[samples]
        QT = np.empty((M, rows.shape[0]))
        QT[...] = rows.T
        if self._loss == "cross_entropy":
            pair = cross_entropy_into(QT, np.empty((2, M, QT.shape[1]), dtype=obj.dtype), work=QT)
        else:
            pair = np.stack(binary_losses(QT, self._loss, self._output))
        src = obj._fill_src if self._rows is None else obj._fill_src[self._rows]
        stacked = obj._stack(pair).astype(obj.dtype, copy=False)
        return np.take(stacked, src, axis=0, out=out, mode="clip")


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
        Samples per chunk (default: about 4 MB of losses).
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
