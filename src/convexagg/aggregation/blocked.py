"""The convex aggregation objective stored by class, so that sparse codes cost ``O(n nnz)``.

:class:`BlockedObjective` computes the value, gradient, Hessian-vector product,
Hessian diagonal and dense Hessian of :class:`~convexagg.aggregation.DenseObjective`
(equal to rounding; ``tests/test_aggregation.py`` compares them) from a
re-encoded loss matrix whose stored columns each enter as few classes as
possible, grouped by class: the baseline-shifted losses of
:mod:`~convexagg.aggregation.class_blocks`. This module holds the storage and
the matrix-free products (value, gradient, Hessian-vector product);
:mod:`~convexagg.aggregation.blocked_hessian` the assembled Hessians.

The losses are stored transposed (``LT``: stored columns x samples, every class
block a contiguous slab) in ``float64`` or ``float32``. All kernels walk the
samples in chunks, so the temporaries are ``O(chunk (M + K))`` and nothing of
size ``n x K x M`` exists. In ``float32`` the products run in single precision
(sums of at most ``chunk`` terms), and so do the losses' logs and the softmax's
exponentials (``rho`` carries float32 rounding already); the sums over classes and
chunks -- log-sum-exp, value, gradient -- are accumulated in ``float64``. On letter
with 325 one-vs-one classifiers the float32 gradient differs from the ``float64``
one by ~1e-8.

Class intercepts (``fit_intercept=True``) add ``b_k`` to ``rho[:, k]``; sample
weights multiply each sample's terms (normalised by their sum). Both leave the
kernels' structure as it is (see :mod:`~convexagg.aggregation.class_blocks`).
"""

from __future__ import annotations

import os
from collections import deque
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from ..losses import binary_losses, check_loss, cross_entropy_into
from .base import ObjectiveBase
from .blocked_hessian import BlockedHessians
from .class_blocks import reencode
from .dense import check_sample_weight
from .penalty import Penalty
from .point import Point

__all__ = ["BlockedObjective"]


def _default_chunk(n_stored, itemsize):
    """Samples per chunk: about 4 MB of stored losses, at least 512 samples."""
    return int(max(512, min(16384, (4 << 20) // max(1, n_stored * itemsize))))


def _build_threads():
    """Threads that compute the stored losses, and that share the chunks of a pass
    where :attr:`BlockedObjective.threaded_passes`: numpy's ``log`` runs on one core and
    releases the GIL, so row chunks on several threads divide the time."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not on Linux
        cores = os.cpu_count() or 1
    return max(1, min(4, cores))


def _ordered_map(function, items, n_threads):
    """``function(item)`` for each item on ``n_threads`` worker threads, yielded in
    the items' order (at most ``2 n_threads`` computed ahead), so that a caller
    summing the results adds them in the same order as a serial loop."""
    items = iter(items)
    with ThreadPoolExecutor(n_threads) as pool:
        pending = deque(pool.submit(function, item) for _, item in zip(range(2 * n_threads), items))
        while pending:
            result = pending.popleft().result()  # re-raises a worker's error
            for item in items:
                pending.append(pool.submit(function, item))
                break
            yield result


class BlockedObjective(BlockedHessians, ObjectiveBase):
    """``f(x)`` of the paper's problem (12) on a class-blocked loss matrix.

    Same interface and results as :class:`~convexagg.aggregation.DenseObjective`
    (``evaluate``, ``value``, ``hessp``, ``hess_diag``, ``hessian``,
    ``predict_proba``, ``take``, ``with_penalty``), at ``O(n nnz)`` per product
    instead of ``O(n K M)``; see the module docstring.

    Parameters
    ----------
    L_pos, L_neg : ndarray of shape (n_samples, M)
        Losses of every binary output against the positive and the negative side.
    code : ndarray of shape (n_classes, M)
        The code matrix.
    y : ndarray of shape (n_samples,)
        Integer class indices.
    penalty : Penalty, default=None
        ``Penalty()`` (none) when None.
    dtype : {numpy.float64, numpy.float32}, default=numpy.float64
        Storage and product precision of the losses. ``float32`` halves the
        memory and the bytes read per product.
    chunk : int, default=None
        Samples per chunk of the kernels (default: about 4 MB of stored losses).
    fit_intercept : bool, default=False
        Free class intercepts after the weights.
    sample_weight : ndarray of shape (n_samples,), default=None
        Weights of the samples in the likelihood.

    Attributes
    ----------
    LT : ndarray of shape (n_stored, n_samples)
        The stored (baseline-shifted, class-blocked) losses.
    n_threads : int
        Threads that share the chunks of :meth:`evaluate` and :meth:`hessp`:
        1 (the calling thread) for stored losses, the cores (at most 4) where
        :attr:`threaded_passes`. The chunks' sums are added in the chunks' order
        whatever the threads, so every result is the same to the bit.
    """

    # passes over stored losses are too light for threads to pay off (measured in
    # BENCHMARKS.md); a subclass whose passes recompute the losses sets it
    threaded_passes = False

    def __init__(
        self,
        L_pos,
        L_neg,
        code,
        y,
        penalty=None,
        *,
        dtype=np.float64,
        chunk=None,
        fit_intercept=False,
        sample_weight=None,
    ):
        self._setup(
            code, y, penalty, dtype, chunk, np.shape(L_pos)[0], fit_intercept, sample_weight
        )
        M = self.n_weights
        for cols in self._chunks():
            pair = np.empty((2 * M, cols.stop - cols.start))
            pair[:M], pair[M:] = L_pos[cols].T, L_neg[cols].T
            self._fill(pair, cols)

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
        columns=None,
    ):
        """Build from binary outputs ``Q``, computing the losses chunk by chunk.

        ``L_pos`` and ``L_neg`` are never held whole: apart from chunk-sized
        work buffers (allocated once per thread: fresh memory per chunk costs
        page faults that doubled the build time), the only allocation that
        grows with ``n_samples x M`` is ``LT`` itself. The chunks are shared
        among a few threads (:func:`_build_threads`).

        Parameters
        ----------
        Q : ndarray of shape (n_samples, M)
            Binary outputs, validated.
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
            Storage and product precision of the losses.
        chunk : int, default=None
            Samples per chunk (default: about 4 MB of stored losses).
        fit_intercept : bool, default=False
            Free class intercepts after the weights.
        sample_weight : ndarray of shape (n_samples,), default=None
            Weights of the samples in the likelihood.
        columns : ndarray of int, shape (M,), default=None
            The column of ``Q`` that each column of ``code`` reads (``Q`` has
            ``code``'s columns when None). Entry weights' expanded code
            (:mod:`~convexagg.aggregation.entries`) reads each classifier's
            outputs in one column per entry: given ``Q`` itself and this map, the
            losses are taken once per classifier, not once per entry.

        Returns
        -------
        objective : BlockedObjective
            The objective on those outputs.
        """
        check_loss(loss, output)
        self = cls.__new__(cls)
        self._setup(code, y, penalty, dtype, chunk, Q.shape[0], fit_intercept, sample_weight)
        if columns is not None:
            columns = np.asarray(columns, dtype=np.intp)
            if columns.shape != (self.n_weights,):
                raise ValueError(
                    f"columns must have one entry per code column ({self.n_weights}); "
                    f"got shape {columns.shape}."
                )
            # row src of the stacked combinations of code's columns -> of Q's columns
            combo, weight = np.divmod(self._fill_src, self.n_weights)
            self._fill_src = combo * Q.shape[1] + columns[weight]
        M = Q.shape[1]
        # build chunks of ~256 KB of Q, so that transposing them stays in cache
        step = int(max(32, min(self.chunk, (1 << 18) // (8 * M))))
        width = min(step, self.n_samples)
        # the losses of Q's float64 values (cross-entropy in single precision for
        # float32 storage, see cross_entropy_into)
        pair_dtype = self.dtype if loss == "cross_entropy" else np.float64
        chunks = list(self._chunks(step))
        n_threads = min(_build_threads(), len(chunks))

        def build(part):
            QT_buf = np.empty((M, width))
            pair_buf = np.empty((2, M, width), dtype=pair_dtype)
            stored_buf = np.empty((self.LT.shape[0], width), dtype=self.dtype)
            for cols in chunks[part::n_threads]:
                c = cols.stop - cols.start
                QT, pair = QT_buf[:, :c], pair_buf[:, :, :c]
                if loss == "cross_entropy":
                    cross_entropy_into(Q[cols].T, pair, work=QT)
                else:
                    np.copyto(QT, Q[cols].T)
                    pair[0], pair[1] = binary_losses(QT, loss, output)
                self._fill(pair, cols, stored_buf[:, :c])

        if n_threads == 1:
            build(0)
        else:
            with ThreadPoolExecutor(n_threads) as pool:
                list(pool.map(build, range(n_threads)))  # list(): re-raise a worker's error
        return self

    def _setup(self, code, y, penalty, dtype, chunk, n_samples, fit_intercept, sample_weight):
        code = np.asarray(code)
        self.code = code
        self.penalty = Penalty() if penalty is None else penalty
        self.dtype = np.dtype(dtype)
        if self.dtype not in (np.dtype(np.float32), np.dtype(np.float64)):
            raise ValueError(f"dtype must be float32 or float64, got {self.dtype}.")
        self.spec = spec = reencode(code)
        self.y = np.asarray(y, dtype=np.intp)
        self.n_samples = int(n_samples)
        self.n_classes, self.n_weights = code.shape
        self.n_intercepts = self.n_classes if fit_intercept else 0
        self._set_sample_weight(None if sample_weight is None else sample_weight)
        K, M = code.shape
        weight = spec["weight"]
        m = weight.size
        self.chunk = int(chunk) if chunk else _default_chunk(m, self.dtype.itemsize)
        self.LT = self._new_losses(m)
        self._work = None  # the Hessian kernels' buffers (_work_buffers)
        self._scatter = None  # where the class blocks go in the Hessian (_block_scatter)
        self.n_threads = _build_threads() if self.threaded_passes else 1

        off = spec["offsets"]
        self._m_single = m1 = int(off[K])
        self._blocks = [slice(int(off[k]), int(off[k + 1])) for k in range(K)]
        sizes = np.diff(off)
        # every class has the same block size (one-vs-one, one-vs-rest): batched products
        self._block_size = int(sizes[0]) if np.all(sizes == sizes[0]) and sizes[0] > 0 else None
        self._ET_shared = spec["classes"][m1:].astype(self.dtype)  # (m - m1, K)
        self._weight = weight
        self._owner = np.repeat(np.arange(K), sizes)  # class of each single-class column
        # folding stored columns onto weights: each weight owns one or two columns
        _, first = np.unique(weight, return_index=True)
        if first.size != M:
            raise ValueError("every classifier needs a +1 and a -1 class (see check_code_matrix).")
        second = np.full(M, -1)
        rest = np.setdiff1d(np.arange(m), first)
        second[weight[rest]] = rest
        self._fold_first = first  # (M,): a stored column of each weight
        self._fold_two = np.flatnonzero(second >= 0)  # weights with a second column
        self._fold_second = second[self._fold_two]
        # filling LT: stored column c is row src[c] of the stacked combinations
        # [a_1 L_pos + b_1 L_neg; a_2 L_pos + b_2 L_neg; ...] (transposed, M rows each)
        # tolist(): Python floats, not numpy scalars, in these per-column loops, which
        # numpy scalars would make several times slower
        coef = [tuple(c) for c in spec["coef"].tolist()]
        self._fill_combos = sorted(set(coef), reverse=True)
        combo = {c: j for j, c in enumerate(self._fill_combos)}
        self._fill_src = np.array([combo[c] * M for c in coef], dtype=np.intp) + weight
        # per class: the stored columns it enters (its block, then its shared columns)
        shared_ids = np.arange(m1, m)
        self._class_cols = [
            np.concatenate([np.arange(off[k], off[k + 1]), shared_ids[spec["classes"][m1:, k]]])
            for k in range(K)
        ]

    def _new_losses(self, m):
        """The storage of ``m`` stored columns (a subclass may compute them instead)."""
        return np.empty((m, self.n_samples), dtype=self.dtype)

    def _set_sample_weight(self, sample_weight):
        """Sample weights (None: all ones, and the kernels skip the multiplications)."""
        if sample_weight is None:
            self.sample_weight = None
            self._scale = float(self.n_samples)
        else:
            self.sample_weight = check_sample_weight(sample_weight, self.n_samples)
            self._scale = float(self.sample_weight.sum())

    def take(self, rows, dtype=None):
        """The same objective on the samples ``rows`` (a copy of their stored losses).

        Parameters
        ----------
        rows : slice or array-like
            Any numpy index of the samples; a slice copies fastest.
        dtype : numpy dtype, default=None
            The copy's storage precision (this objective's when None).

        Returns
        -------
        objective : BlockedObjective
            The objective on those samples.
        """
        new = object.__new__(type(self))
        new.__dict__.update(self.__dict__)
        new.dtype = self.dtype if dtype is None else np.dtype(dtype)
        new.LT = np.ascontiguousarray(self.LT[:, rows], dtype=new.dtype)
        new._ET_shared = self._ET_shared.astype(new.dtype)
        new._work = None
        new.y = self.y[rows]
        new.n_samples = new.LT.shape[1]
        new._set_sample_weight(None if self.sample_weight is None else self.sample_weight[rows])
        return new

    def _fresh(self):
        self._work = None  # work buffers serve one objective at a time

    def _fill(self, pair, cols, buf=None):
        """Write the stored columns of the samples ``cols`` from ``pair = [L_pos; L_neg]``.

        ``pair`` has shape ``(2M, c)`` or ``(2, M, c)`` (losses transposed); stored
        column ``c`` is row ``_fill_src[c]`` of the stacked coefficient combinations.
        ``buf``: an optional contiguous ``(m, c)`` work array of the storage dtype.
        """
        stacked = self._stack(pair).astype(self.dtype, copy=False)
        if buf is None:
            np.take(stacked, self._fill_src, axis=0, out=self.LT[:, cols], mode="clip")
            return
        # np.take into the strided LT[:, cols] goes through a temporary of its own
        # and copies it back, slower than a copy from a contiguous buffer
        np.take(stacked, self._fill_src, axis=0, out=buf, mode="clip")
        np.copyto(self.LT[:, cols], buf)

    def _stack(self, pair):
        """The coefficient combinations ``[a_1 L_pos + b_1 L_neg; ...]`` of ``pair``."""
        M = pair.size // (2 * pair.shape[-1])  # the outputs' columns
        pair = pair.reshape(2 * M, pair.shape[-1])
        if self._fill_combos == [(1.0, 0.0), (0.0, 1.0)]:
            return pair  # the combinations are L_pos and L_neg themselves
        L_pos, L_neg = pair[:M], pair[M:]
        stacked = np.empty((len(self._fill_combos) * M, pair.shape[1]))
        for j, (a, b) in enumerate(self._fill_combos):
            np.multiply(L_pos, a, out=stacked[j * M : (j + 1) * M])
            if b:
                stacked[j * M : (j + 1) * M] += b * L_neg
        return stacked

    # -- chunked primitives ----------------------------------------------------------------

    def _chunks(self, step=None):
        step = step or self.chunk
        for start in range(0, self.n_samples, step):
            yield slice(start, min(start + step, self.n_samples))

    def _pass(self, kernel):
        """``kernel(cols)`` of every chunk, in the chunks' order: on :attr:`n_threads`
        worker threads (numpy's ufuncs, copies and products release the GIL, so
        the chunks run in parallel), or in this thread for one thread or chunk."""
        chunks = list(self._chunks())
        n_threads = min(int(self.n_threads), len(chunks))
        if n_threads <= 1:
            return map(kernel, chunks)
        return _ordered_map(kernel, chunks, n_threads)

    def _fold(self, v2, out=None, tmp=None):
        """Sum the stored columns of each weight: ``(m, ...) -> (M, ...)``.

        ``out`` and ``tmp`` (shape ``(M, ...)``, v2's dtype) are optional work buffers.
        """
        out = np.take(v2, self._fold_first, axis=0, out=out, mode="clip")
        if self._fold_two.size == self.n_weights:
            out += np.take(v2, self._fold_second, axis=0, out=tmp, mode="clip")
        elif self._fold_two.size:
            out[self._fold_two] += np.take(v2, self._fold_second, axis=0)
        return out

    def _rho(self, LTc, w2, b=None):
        """Discrepancies ``(K, c)`` of a chunk (baseline-shifted), in the storage dtype."""
        m1, bs = self._m_single, self._block_size
        K, c = self.n_classes, LTc.shape[1]
        if bs is not None:
            out = np.matmul(w2[None, :m1].reshape(K, 1, bs), LTc[:m1].reshape(K, bs, c))[:, 0]
        else:
            out = np.zeros((K, c), dtype=LTc.dtype)
            for k, blk in enumerate(self._blocks):
                if blk.start < blk.stop:
                    out[k] = w2[blk] @ LTc[blk]
        if m1 < LTc.shape[0]:
            out += (self._ET_shared * w2[m1:, None]).T @ LTc[m1:]
        if b is not None:
            out += b[:, None]
        return out

    def _pullback(self, LTc, RT):
        """``g2[c] = sum_i LT[c, i] sum_k E[c, k] RT[k, i]`` for a chunk, in float64."""
        m1, bs = self._m_single, self._block_size
        K = self.n_classes
        RT = RT.astype(LTc.dtype, copy=False)
        g2 = np.empty(LTc.shape[0])
        if bs is not None:
            g2[:m1] = np.matmul(LTc[:m1].reshape(K, bs, -1), RT[:, :, None]).ravel()
        else:
            for k, blk in enumerate(self._blocks):
                g2[blk] = LTc[blk] @ RT[k]
        if m1 < LTc.shape[0]:
            g2[m1:] = np.einsum("ck,ck->c", LTc[m1:] @ RT.T, self._ET_shared)
        return g2

    def _weighted(self, LTc, PT, out=None):
        """``X[c, i] = LT[c, i] sum_k E[c, k] P[i, k]`` for a chunk (into ``out`` if given)."""
        m1, bs = self._m_single, self._block_size
        K, c = self.n_classes, LTc.shape[1]
        X = np.empty(LTc.shape, dtype=LTc.dtype) if out is None else out
        if bs is not None:
            np.multiply(LTc[:m1].reshape(K, bs, c), PT[:, None, :], out=X[:m1].reshape(K, bs, c))
        else:
            for k, blk in enumerate(self._blocks):
                np.multiply(LTc[blk], PT[k], out=X[blk])
        if m1 < LTc.shape[0]:
            np.multiply(LTc[m1:], self._ET_shared @ PT, out=X[m1:])
        return X

    def _split(self, x):
        x = np.asarray(x, dtype=np.float64)
        M = self.n_weights
        w2 = x[:M][self._weight].astype(self.dtype)
        b = x[M:].astype(self.dtype) if self.n_intercepts else None
        return x, w2, b

    def _weights_of(self, cols):
        return None if self.sample_weight is None else self.sample_weight[cols]

    def _gradient(self, g2, gb):
        """Variables' gradient (without the penalty) from the stored columns' and the
        intercepts' accumulated sums."""
        g = self._fold(g2)
        if self.n_intercepts:
            g = np.concatenate([g, gb])
        return g / self._scale

    # -- the objective -----------------------------------------------------------------------

    def _likelihood_terms(self, LTc, w2, b, cols):
        """``(E, s, terms)`` of a chunk: ``E = exp(-rho + min_k rho)`` (K, c), its column
        sums ``s`` and each sample's ``rho_y + log sum_k exp(-rho_k)``."""
        # -rho + min_k rho (<= 0), in the storage dtype: rho carries that rounding
        # already, and float32 exp is vectorised where float64 exp is not
        shifted = np.negative(self._rho(LTc, w2, b))  # (K, c)
        shifted -= shifted.max(axis=0)
        E = np.exp(shifted)
        s = E.sum(axis=0, dtype=np.float64)
        terms = np.log(s) - shifted[self.y[cols], np.arange(shifted.shape[1])]
        return E, s, terms

    def value(self, x):
        """``f(x)`` alone: :meth:`evaluate`'s pass without the gradient, the same number.

        Half the reads of ``LT`` (no pull-back), for the start's search of the
        equal weights (:func:`~convexagg.solvers.uniform_start`).

        Parameters
        ----------
        x : ndarray of shape (n_variables,)
            Weights, then intercepts.

        Returns
        -------
        value : float
            The objective at ``x``.
        """
        x, w2, b = self._split(x)

        def chunk_value(cols):
            terms = self._likelihood_terms(self.LT[:, cols], w2, b, cols)[2]
            sw = self._weights_of(cols)
            return np.sum(terms) if sw is None else float(sw @ terms)

        total = 0.0
        for value in self._pass(chunk_value):
            total += value
        return float(total / self._scale + self.penalty.value(x, self.n_weights))

    def evaluate(self, x):
        """Value, gradient and class probabilities at ``x`` (one pass over ``LT``).

        Parameters
        ----------
        x : ndarray of shape (n_variables,)
            Weights, then intercepts.

        Returns
        -------
        point : Point
            Value, gradient and what the derivatives need.
        """
        x, w2, b = self._split(x)
        n = self.n_samples
        PT = np.empty((self.n_classes, n))
        g2 = np.zeros(self.LT.shape[0])
        gb = np.zeros(self.n_intercepts)
        total = 0.0

        def chunk_sums(cols):
            LTc = self.LT[:, cols]
            E, s, terms = self._likelihood_terms(LTc, w2, b, cols)
            yc = self.y[cols]
            P = np.divide(E, s, out=PT[:, cols])
            R = P.astype(self.dtype)
            R[yc, np.arange(yc.size)] -= 1.0  # P - Y
            sw = self._weights_of(cols)
            if sw is None:
                value = np.sum(terms)
            else:
                value = float(sw @ terms)
                R *= sw.astype(self.dtype)
            pulled = self._pullback(LTc, R)
            return value, pulled, R.sum(axis=1, dtype=np.float64) if self.n_intercepts else None

        for value, pulled, intercepts in self._pass(chunk_sums):
            total += value
            g2 -= pulled
            if self.n_intercepts:
                gb -= intercepts
        grad = self._gradient(g2, gb) + self.penalty.grad(x, self.n_weights)
        value = total / self._scale + self.penalty.value(x, self.n_weights)
        return Point(x=x, value=float(value), grad=grad, P=PT.T)

    def hessp(self, point, v):
        """Hessian-vector product ``H(x) v`` at ``point``.

        Parameters
        ----------
        point : Point
            The result of :meth:`evaluate` at ``x``.
        v : ndarray of shape (n_variables,)
            The vector.

        Returns
        -------
        Hv : ndarray of shape (n_variables,)
            The product.
        """
        v, v2, vb = self._split(v)
        PTall = point.P.T
        g2 = np.zeros(self.LT.shape[0])
        gb = np.zeros(self.n_intercepts)

        def chunk_sums(cols):
            LTc = self.LT[:, cols]
            PT = PTall[:, cols]
            PA = PT * self._rho(LTc, v2, vb)
            PA -= PT * PA.sum(axis=0)
            sw = self._weights_of(cols)
            if sw is not None:
                PA *= sw
            return self._pullback(LTc, PA), PA.sum(axis=1) if self.n_intercepts else None

        for pulled, intercepts in self._pass(chunk_sums):
            g2 += pulled
            if self.n_intercepts:
                gb += intercepts
        return self._gradient(g2, gb) + self.penalty.hessp(v, self.n_weights)

    def predict_proba(self, x):
        """Class probabilities ``softmax(-rho)`` (paper eq. 7) at ``x``.

        Parameters
        ----------
        x : ndarray of shape (n_variables,)
            Weights, then intercepts.

        Returns
        -------
        P : ndarray of shape (n_samples, n_classes)
            Rows sum to 1.
        """
        return np.ascontiguousarray(self.evaluate(x).P)
