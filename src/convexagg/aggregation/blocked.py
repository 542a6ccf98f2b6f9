"""The convex aggregation objective stored by class, so that sparse codes cost ``O(n nnz)``.

:class:`~convexagg.aggregation.DenseObjective` writes ``rho = L @ (E.T * [w, w])``
as one dense product: ``O(n K 2M)`` work per evaluation, although a one-vs-one
column touches 2 of the ``K`` classes. :class:`BlockedObjective` computes the
same value, gradient, Hessian-vector product, Hessian diagonal and dense Hessian
(equal to rounding; ``tests/test_aggregation.py`` compares them) from a re-encoded
loss matrix whose stored columns each enter as few classes as possible, grouped
by class:

1. **Baseline shift.** ``f`` does not change when the same amount is subtracted
   from every ``rho[i, k]`` of a sample (``rho[i, y_i] + logsumexp(-rho[i])`` is
   shift invariant, and so are ``P``, the gradient and the Hessian), so
   classifier ``l`` may subtract the loss of its most frequent code entry from
   every class. What is left is non-zero only for the classes whose entry
   differs: a one-vs-one column keeps ``L_pos`` for one class and ``L_neg`` for
   another (``2M`` stored columns, one class each), a one-vs-rest column keeps
   ``L_pos - L_neg`` for its one positive class (``M`` stored columns), a dense
   random column keeps one column for its minority side.
2. **Class blocks.** Stored columns that enter a single class are contiguous per
   class, so ``rho[:, k]`` and the gradient's pull-back are one matrix-vector
   product over class ``k``'s block (one batched product when all blocks have
   the same size, as for one-vs-one and one-vs-rest); columns shared by several
   classes form one dense block handled as in ``DenseObjective``.

The losses are stored transposed (``LT``: stored columns x samples, every class
block a contiguous slab) in ``float64`` or ``float32``. All kernels walk the
samples in chunks, so the temporaries are ``O(chunk (M + K))`` and nothing of
size ``n x K x M`` exists. In ``float32`` the products run in single precision
(sums of at most ``chunk`` terms), and so do the losses' logs and the softmax's
exponentials (``rho`` carries float32 rounding already); the sums over classes and
chunks -- log-sum-exp, value, gradient -- are accumulated in ``float64``. On letter
with 325 one-vs-one classifiers the float32 gradient differs from the ``float64``
one by ~1e-8.

The dense Hessian costs ``n M^2 / 2`` (the Gram ``S'S``, one symmetric rank-k
update per chunk) plus ``n sum_k |cols(k)|^2`` for the per-class blocks.

Class intercepts (``fit_intercept=True``) add ``b_k`` to ``rho[:, k]``; sample
weights multiply each sample's terms (normalised by their sum). Both leave the
kernels' structure as it is: the baseline shift changes every class of a sample
by the same amount, so ``f`` as a function of ``(w, b)`` -- and every derivative
-- is unchanged by it.
"""

from __future__ import annotations

import os
from collections import deque
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from ..losses import binary_losses, check_loss, cross_entropy_into
from .base import ObjectiveBase
from .dense import check_sample_weight
from .penalty import Penalty
from .point import Point

__all__ = ["BlockedObjective", "reencode"]

# float32 Hessian kernels treat class probabilities below this as 0 (_probabilities)
_P_FLOOR = 1e-20

# stored-column coefficients on (L_pos, L_neg) of the code entries +1, -1, 0
_DVEC = {1: (1.0, 0.0), -1: (0.0, 1.0), 0: (0.0, 0.0)}


def reencode(code):
    """Stored columns of the baseline-shifted losses, grouped by class.

    Classifier ``l`` subtracts ``d(b_l, Q[:, l])`` from every class, ``b_l`` its
    most frequent code entry (ties: 0, then -1, then +1). For each other entry
    value ``v`` that occurs in column ``l`` it stores ``d(v) - d(b_l)`` once, for
    the classes with that entry.

    Parameters
    ----------
    code : ndarray of shape (K, M)
        The code matrix.

    Returns
    -------
    spec : dict
        ``weight`` (m,): classifier of each stored column; ``coef`` (m, 2): the
        stored column is ``coef[c, 0] L_pos + coef[c, 1] L_neg`` of that
        classifier; ``classes`` (m, K) bool: the classes it enters; ``offsets``
        (K + 1,): class ``k``'s single-class block is ``offsets[k]:offsets[k+1]``,
        and ``offsets[K]:m`` are the columns shared by several classes.
    """
    code = np.asarray(code)
    K, M = code.shape
    values = (0, -1, 1)  # argmax picks the first maximum: ties go to 0, then -1
    counts = np.stack([(code == v).sum(axis=0) for v in values])
    base = np.asarray(values)[counts.argmax(axis=0)]  # (M,)
    weight, coef, classes = [], [], []
    for v in (1, -1, 0):
        members = (code == v) & (base != v)[None, :]  # (K, M)
        cols = np.flatnonzero(members.any(axis=0))
        weight.append(cols)
        base_coef = np.array([_DVEC[b] for b in base[cols].tolist()]).reshape(-1, 2)
        coef.append(np.asarray(_DVEC[v])[None, :] - base_coef)
        classes.append(members[:, cols].T)
    weight = np.concatenate(weight)
    coef = np.concatenate(coef)
    classes = np.concatenate(classes)
    weight = weight.astype(np.intp)
    single = classes.sum(axis=1) == 1
    owner = np.where(single, classes.argmax(axis=1), K)  # shared columns sort last
    order = np.lexsort((weight, owner))
    sizes = np.bincount(owner[single], minlength=K)
    return {
        "weight": weight[order],
        "coef": coef[order],
        "classes": classes[order],
        "offsets": np.concatenate([[0], np.cumsum(sizes)]).astype(np.intp),
    }


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


class BlockedObjective(ObjectiveBase):
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

    def _work_buffers(self):
        """Chunk-sized work arrays of the Hessian kernels, allocated once per objective.

        Kept between calls: fresh arrays of this size come from ``mmap`` and cost
        page faults on first write every call (half the time of a 2,000-row
        Hessian on letter). An objective therefore serves one thread at a time.
        """
        if self._work is None:
            width = min(self.chunk, self.n_samples)
            m, M = self.LT.shape[0], self.n_weights
            self._work = {
                "X": np.empty((m, width), dtype=self.dtype),
                "S": np.empty((M, width), dtype=self.dtype),
                "T": np.empty((M, width), dtype=self.dtype),
            }
        return self._work

    def _probabilities(self, PTall, cols):
        """Class probabilities of a chunk in the storage dtype, for the Hessian kernels.

        In float32, those below ``_P_FLOOR`` become 0: at the optimum on letter
        about 2% of them fall in float32's subnormal range, and products with
        subnormals run many times slower; they are far below float32's resolution
        of the Hessian entries they feed.
        """
        PT = PTall[:, cols].astype(self.dtype)
        if self.dtype == np.float32:
            PT[PT < _P_FLOOR] = 0.0
        return PT

    def _moments(self, PTall, cols, work):
        """``(LTc, PT, X, S, sw)`` of a chunk: the weighted losses ``X`` and their fold
        ``S[l, i] = sum_k P_ik D_ikl`` (the first moments), and the sample weights."""
        LTc = self.LT[:, cols]
        c = LTc.shape[1]
        PT = self._probabilities(PTall, cols)
        X = self._weighted(LTc, PT, out=work["X"][:, :c])
        S = self._fold(X, out=work["S"][:, :c], tmp=work["T"][:, :c])
        sw = self._weights_of(cols)
        return LTc, PT, X, S, (None if sw is None else sw.astype(self.dtype))

    def hess_diag(self, point):
        """Diagonal of the Hessian (the paper's PCG preconditioner).

        Parameters
        ----------
        point : Point
            The result of :meth:`evaluate` at ``x``.

        Returns
        -------
        diagonal : ndarray of shape (n_variables,)
            The Hessian's diagonal.
        """
        PTall = point.P.T
        sums = self._diagonal_sums()
        work = self._work_buffers()
        for cols in self._chunks():
            self._add_diagonal(sums, *self._moments(PTall, cols, work))
        return self._finish_diagonal(sums)

    def _diagonal_sums(self):
        """Accumulators of :meth:`hess_diag`: per stored column, per weight, per intercept."""
        return np.zeros(self.LT.shape[0]), np.zeros(self.n_weights), np.zeros(self.n_intercepts)

    def _add_diagonal(self, sums, LTc, PT, X, S, sw):
        """Add a chunk's terms of the Hessian's diagonal (:meth:`_moments`' outputs)."""
        first, sq, diag_b = sums
        if sw is None:
            first += np.einsum("ci,ci->c", X, LTc)
            sq += np.einsum("li,li->l", S, S)
        else:
            first += np.einsum("ci,ci,i->c", X, LTc, sw)
            sq += np.einsum("li,li,i->l", S, S, sw)
        if self.n_intercepts:
            PP = PT - PT * PT
            diag_b += PP.sum(axis=1) if sw is None else PP @ sw

    def _finish_diagonal(self, sums):
        first, sq, diag_b = sums
        diag = self._gradient(first, diag_b)
        diag[: self.n_weights] -= sq / self._scale
        return diag + self.penalty.hess_diag(self.n_weights, self.n_variables)

    def restrict(self, weights):
        """The same objective as a function of the weights ``weights`` alone (the
        others held at 0; the intercepts kept), sharing nothing it writes to.

        Its stored losses are this objective's rows of those weights (a copy), so
        its Hessian is the block of this one's on them at the same class
        probabilities: what a Newton step on the weights a bound does not hold
        at 0 needs, at ``n |F|^2`` instead of ``n M^2``.

        Parameters
        ----------
        weights : array-like of int
            Increasing indices of weights.

        Returns
        -------
        objective : BlockedObjective
            The restricted objective.
        """
        weights = np.asarray(weights, dtype=np.intp)
        new = object.__new__(type(self))
        new._setup(
            self.code[:, weights],
            self.y,
            self.penalty.restrict(weights),
            self.dtype,
            self.chunk,
            self.n_samples,
            self.n_intercepts > 0,
            None,
        )
        new.sample_weight, new._scale = self.sample_weight, self._scale
        # stored columns are (classifier, coefficients) pairs; the restricted code's
        # baselines are those of the same columns, so each is one of this objective's
        where = {
            (int(w), tuple(c)): i for i, (w, c) in enumerate(zip(self._weight, self.spec["coef"]))
        }
        rows = [where[int(weights[w]), tuple(c)] for w, c in zip(new._weight, new.spec["coef"])]
        new.LT = self.LT[rows]
        return new

    def _block_scatter(self):
        """The flat positions in the dense Hessian of every class block's entries, class
        after class (computed once), or None where they would outnumber the Hessian's own
        entries: the class-by-class loop is for those. One ``np.add.at`` of them adds the
        blocks in the loop's order, to the bit (a weight of several classes gets their
        blocks in turn), and costs one call where the loop costs ``K``."""
        if self._scatter is None:
            n = self.n_variables
            idx = [self._weight[cc] for cc in self._class_cols if cc.size]
            if not idx or sum(i.size**2 for i in idx) > n * n:
                self._scatter = False
            else:
                self._scatter = np.concatenate([(i[:, None] * n + i).ravel() for i in idx])
        return None if self._scatter is False else self._scatter

    def hessian(self, point, variables=None):
        """Dense Hessian: per-class blocks minus the Gram ``S'S``.

        When ``variables`` are at most a quarter of the weights, the block is
        computed from their stored losses alone (:meth:`restrict`, a copy of
        those rows of ``LT``), at ``n |F|^2`` instead of ``n M^2``.

        ``H = (1/S) [sum_k E_k' diag(s P[:, k]) E_k - S' diag(s) S]`` as in
        :meth:`DenseObjective.hessian`, on the stored columns: class ``k``'s block
        uses only the stored columns it enters (one-vs-one: ``K - 1``), and
        ``S = sum_k diag(P[:, k]) E_k`` is formed one chunk of samples at a time.
        With intercepts, the weights-intercepts block is
        ``(1/S) [fold(sum_i s_i LT[c, i] E[c, k] P_ik) - S diag(s) P]`` and the
        intercepts block ``(1/S) sum_i s_i (diag(P_i) - P_i P_i')``.

        Parameters
        ----------
        point : Point
            The result of :meth:`evaluate` at ``x``.
        variables : array-like of int, default=None
            Increasing indices of the variables whose block is wanted; all when None.

        Returns
        -------
        H : ndarray of shape (n, n)
            ``n = len(variables)``, or ``n_variables``.
        """
        M, K = self.n_weights, self.n_classes
        if variables is not None:
            variables = np.asarray(variables, dtype=np.intp)
            weights = variables[variables < M]
            if 4 * weights.size > M:  # a copy of most of LT would cost more than it saves
                return self.hessian(point)[np.ix_(variables, variables)]
            H = self.restrict(weights).hessian(point)
            local = np.concatenate(
                [np.arange(weights.size), weights.size - M + variables[variables >= M]]
            )
            return H[np.ix_(local, local)]
        m1, bs = self._m_single, self._block_size
        PTall = point.P.T
        gram = np.zeros((M, M))
        batched = bs is not None and m1 == self.LT.shape[0]
        if batched:
            blocks = np.zeros((K, bs, bs))
        else:
            blocks = [np.zeros((cc.size, cc.size)) for cc in self._class_cols]
        if self.n_intercepts:
            cross2 = np.zeros((self.LT.shape[0], K))  # stored columns x classes
            cross_S = np.zeros((M, K))
            bb = np.zeros((K, K))
        work = self._work_buffers()
        for cols in self._chunks():
            LTc, PT, X, S, sw = self._moments(PTall, cols, work)
            c = LTc.shape[1]
            if self.n_intercepts:
                PTs = PT if sw is None else PT * sw
                cross_S += S @ PTs.T
                bb += np.diag(PTs.sum(axis=1)) - PTs @ PT.T
                # sum_i LT[c, i] s_i P_ik on the classes each stored column enters
                cross2 += (LTc @ PTs.T) * self.spec["classes"]
            if sw is not None:
                gram += (S * sw) @ S.T
                X *= sw  # the blocks' first factor carries the sample weights
            else:
                gram += S @ S.T  # symmetric rank-k update (numpy calls syrk)
            if batched:
                blocks += np.matmul(X.reshape(K, bs, c), LTc.reshape(K, bs, c).transpose(0, 2, 1))
            else:
                for k, cc in enumerate(self._class_cols):
                    if cc.size:
                        Gk = LTc[cc]
                        blocks[k] += (Gk * (PT[k] if sw is None else PT[k] * sw)) @ Gk.T
        # scatter the class blocks into H class by class: a flat index of all
        # blocks at once would hold sum_k |cols(k)|^2 entries (80 MB for a
        # 1,000-column sparse code), far more than the losses themselves
        H = np.zeros((self.n_variables, self.n_variables))
        H[:M, :M] = -gram
        scatter = self._block_scatter()
        if scatter is not None:
            values = blocks if batched else [b for b in blocks if b.size]
            np.add.at(H.reshape(-1), scatter, np.concatenate([b.ravel() for b in values]))
        else:
            for k, cc in enumerate(self._class_cols):
                if cc.size:
                    idx = self._weight[cc]
                    H[np.ix_(idx, idx)] += blocks[k]
        if self.n_intercepts:
            H[:M, M:] = self._fold(cross2) - cross_S
            H[M:, :M] = H[:M, M:].T
            H[M:, M:] = bb
        H /= self._scale
        return self.penalty.add_to_hessian(H, self.n_weights)

    def grouped_hessian(self, point, groups, n_groups, diagonal=False):
        """``A' H A`` on the weights: the Hessian of the weights moved together in groups.

        ``A[j, groups[j]] = 1`` for each weight ``j`` with ``groups[j] >= 0`` (a
        weight with a negative group is left out; the intercepts are). With the
        entry weights of a code column as one group it is the Hessian of the
        shared column weights at the same probabilities: the coarse matrix of
        the projected Newton method's two-level preconditioner for entry weights.
        Its cost is that of :meth:`hessian` with ``n_groups`` weights:
        ``n n_groups^2 / 2`` for the Gram of the grouped first moments plus
        ``n sum_k |cols(k)|^2`` for the per-class blocks, not ``n M^2 / 2``.

        Parameters
        ----------
        point : Point
            The result of :meth:`evaluate` at ``x`` (its ``P`` is read).
        groups : ndarray of int, shape (n_weights,)
            The group of each weight, or a negative number.
        n_groups : int
            Number of groups.
        diagonal : bool, default=False
            Also return :meth:`hess_diag`, from the same pass over the losses
            (what the two-level preconditioner needs: on letter's ovo+ovr entry
            weights, 4,500 x 1,326 float32, the second pass cost as much again).

        Returns
        -------
        H : ndarray of shape (n_groups, n_groups)
            The grouped Hessian, the penalty's part included.
        diag : ndarray of shape (n_variables,)
            With ``diagonal``: the Hessian's diagonal.
        """
        import scipy.sparse

        groups = np.asarray(groups, dtype=np.intp)
        col_group = groups[self._weight]  # group of each stored column (< 0: left out)
        kept = np.flatnonzero(col_group >= 0)
        m, K = self.LT.shape[0], self.n_classes
        # group sums of the stored columns' first moments, a sparse 0/1 matrix
        fold = scipy.sparse.csr_matrix(
            (np.ones(kept.size, dtype=self.dtype), (col_group[kept], kept)), shape=(n_groups, m)
        )
        PTall = point.P.T
        gram = np.zeros((n_groups, n_groups))
        bs = self._block_size
        batched = bs is not None and self._m_single == m
        blocks = (
            np.zeros((K, bs, bs))
            if batched
            else [np.zeros((cc.size, cc.size)) for cc in self._class_cols]
        )
        work = self._work_buffers()
        sums = self._diagonal_sums() if diagonal else None
        for cols in self._chunks():
            if diagonal:
                LTc, PT, X, S_weights, sw = self._moments(PTall, cols, work)
                self._add_diagonal(sums, LTc, PT, X, S_weights, sw)
            else:
                LTc, PT = self.LT[:, cols], self._probabilities(PTall, cols)
                X = self._weighted(LTc, PT, out=work["X"][:, : LTc.shape[1]])
                sw = self._weights_of(cols)
                sw = None if sw is None else sw.astype(self.dtype)
            c = LTc.shape[1]
            S = fold @ X  # (n_groups, c)
            if sw is None:
                gram += S @ S.T
            else:
                gram += (S * sw) @ S.T
                X *= sw  # the blocks' first factor carries the weights (X is a work buffer)
            if batched:  # X is LT times its class's probabilities
                blocks += np.matmul(X.reshape(K, bs, c), LTc.reshape(K, bs, c).transpose(0, 2, 1))
                continue
            for k, cc in enumerate(self._class_cols):
                if cc.size:
                    Gk = LTc[cc]
                    Pk = PT[k] if sw is None else PT[k] * sw
                    blocks[k] += (Gk * Pk) @ Gk.T
        H = -gram
        for k, cc in enumerate(self._class_cols):
            gk = col_group[cc]
            keep = gk >= 0
            if keep.any():
                # np.add.at: two stored columns of a class may share a group
                rows, cols_ = np.meshgrid(gk[keep], gk[keep], indexing="ij")
                np.add.at(H, (rows, cols_), blocks[k][np.ix_(keep, keep)])
        H /= self._scale
        H += self.penalty.grouped_hessian(groups, n_groups, self.n_weights)
        return (H, self._finish_diagonal(sums)) if diagonal else H

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
