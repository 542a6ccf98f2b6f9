"""The convex aggregation objective stored by class, so that sparse codes cost ``O(n nnz)``.

:class:`~convexagg.solvers.ConvexObjective` writes ``rho = L @ (E.T * [w, w])``
as one dense product: ``O(n K 2M)`` work per evaluation, although a one-vs-one
column touches 2 of the ``K`` classes. :class:`BlockedObjective` computes the
same value, gradient, Hessian-vector product, Hessian diagonal and dense Hessian
(equal to rounding; ``tests/test_blocked.py`` compares them) from a re-encoded
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
   classes form one dense block handled as in ``ConvexObjective``.

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
"""

from __future__ import annotations

import numpy as np

from ..losses import binary_losses, check_loss, cross_entropy_into
from .objective import Point

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
        base_coef = np.array([_DVEC[b] for b in base[cols]]).reshape(-1, 2)
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


class BlockedObjective:
    """``f(w)`` of the paper's problem (12) on a class-blocked loss matrix.

    Same interface and results as :class:`~convexagg.solvers.ConvexObjective`
    (``evaluate``, ``value``, ``hessp``, ``hess_diag``, ``hessian``,
    ``predict_proba``, ``n_weights``, ``n_samples``, ``n_classes``), at
    ``O(n nnz)`` per product instead of ``O(n K M)``; see the module docstring.

    Parameters
    ----------
    L_pos, L_neg : ndarray of shape (n_samples, M)
        Losses of every binary output against the positive and the negative side.
    code : ndarray of shape (n_classes, M)
    y : ndarray of shape (n_samples,)
        Integer class indices.
    alpha : float
        L2 regularisation strength.
    dtype : {numpy.float64, numpy.float32}, default=numpy.float64
        Storage and product precision of the losses. ``float32`` halves the
        memory and the bytes read per product.
    chunk : int, default=None
        Samples per chunk of the kernels (default: about 4 MB of stored losses).
    l1 : float, default=0.0
        Strength of an added ``l1 * sum(w)`` (linear on ``w >= 0``: it adds
        ``l1`` to the gradient and nothing to the Hessian).

    Attributes
    ----------
    LT : ndarray of shape (n_stored, n_samples)
        The stored (baseline-shifted, class-blocked) losses.
    """

    def __init__(self, L_pos, L_neg, code, y, alpha, *, dtype=np.float64, chunk=None, l1=0.0):
        self._setup(code, y, alpha, dtype, chunk, np.shape(L_pos)[0], l1)
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
        alpha,
        *,
        loss="cross_entropy",
        output="proba",
        dtype=np.float64,
        chunk=None,
        l1=0.0,
    ):
        """Build from binary outputs ``Q``, computing the losses chunk by chunk.

        ``L_pos`` and ``L_neg`` are never held whole: apart from chunk-sized
        work buffers (allocated once: fresh memory per chunk costs page faults
        that doubled the build time), the only allocation that grows with
        ``n_samples x M`` is ``LT`` itself.
        """
        check_loss(loss, output)
        self = cls.__new__(cls)
        self._setup(code, y, alpha, dtype, chunk, Q.shape[0], l1)
        M = self.n_weights
        # build chunks of ~256 KB of Q: transposing them stays in cache (3x faster
        # on letter than chunks of the kernels' ~4 MB)
        step = int(max(32, min(self.chunk, (1 << 18) // (8 * M))))
        width = min(step, self.n_samples)
        # the losses of Q's float64 values (cross-entropy in single precision for
        # float32 storage, see cross_entropy_into)
        QT_buf = np.empty((M, width))
        pair_dtype = self.dtype if loss == "cross_entropy" else np.float64
        pair_buf = np.empty((2, M, width), dtype=pair_dtype)
        for cols in self._chunks(step):
            c = cols.stop - cols.start
            QT, pair = QT_buf[:, :c], pair_buf[:, :, :c]
            if loss == "cross_entropy":
                cross_entropy_into(Q[cols].T, pair, work=QT)
            else:
                np.copyto(QT, Q[cols].T)
                pair[0], pair[1] = binary_losses(QT, loss, output)
            self._fill(pair, cols)
        return self

    def _setup(self, code, y, alpha, dtype, chunk, n_samples, l1=0.0):
        code = np.asarray(code)
        self.code = code
        self.l1 = float(l1)
        self.dtype = np.dtype(dtype)
        if self.dtype not in (np.dtype(np.float32), np.dtype(np.float64)):
            raise ValueError(f"dtype must be float32 or float64, got {self.dtype}.")
        self.spec = spec = reencode(code)
        self.y = np.asarray(y, dtype=np.intp)
        self.alpha = float(alpha)
        self.n_samples = int(n_samples)
        self.n_classes, self.n_weights = code.shape
        K, M = code.shape
        weight = spec["weight"]
        m = weight.size
        self.chunk = int(chunk) if chunk else _default_chunk(m, self.dtype.itemsize)
        self.LT = np.empty((m, self.n_samples), dtype=self.dtype)
        self._work = None  # the Hessian kernels' buffers (_work_buffers)

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
        coef = spec["coef"]
        self._fill_combos = sorted({tuple(float(v) for v in c) for c in coef}, reverse=True)
        combo = {c: j for j, c in enumerate(self._fill_combos)}
        self._fill_src = np.array([combo[tuple(c)] * M for c in coef], dtype=np.intp) + weight
        # per class: the stored columns it enters (its block, then its shared columns)
        shared_ids = np.arange(m1, m)
        self._class_cols = [
            np.concatenate([np.arange(off[k], off[k + 1]), shared_ids[spec["classes"][m1:, k]]])
            for k in range(K)
        ]

    def take(self, rows):
        """The same objective on the samples ``rows`` (a copy of their stored losses).

        ``rows``: any numpy index of the samples; a slice copies fastest.
        """
        new = object.__new__(type(self))
        new.__dict__.update(self.__dict__)
        new.LT = np.ascontiguousarray(self.LT[:, rows])
        new._work = None
        new.y = self.y[rows]
        new.n_samples = new.LT.shape[1]
        return new

    def _fill(self, pair, cols):
        """Write the stored columns of the samples ``cols`` from ``pair = [L_pos; L_neg]``.

        ``pair`` has shape ``(2M, c)`` or ``(2, M, c)`` (losses transposed); stored
        column ``c`` is row ``_fill_src[c]`` of the stacked coefficient combinations.
        """
        M = self.n_weights
        pair = pair.reshape(2 * M, pair.shape[-1])
        if self._fill_combos == [(1.0, 0.0), (0.0, 1.0)]:
            stacked = pair  # the combinations are L_pos and L_neg themselves
        else:
            L_pos, L_neg = pair[:M], pair[M:]
            stacked = np.empty((len(self._fill_combos) * M, pair.shape[1]))
            for j, (a, b) in enumerate(self._fill_combos):
                np.multiply(L_pos, a, out=stacked[j * M : (j + 1) * M])
                if b:
                    stacked[j * M : (j + 1) * M] += b * L_neg
        # same dtype in and out: np.take writes straight into LT, unbuffered
        stacked = stacked.astype(self.dtype, copy=False)
        np.take(stacked, self._fill_src, axis=0, out=self.LT[:, cols], mode="clip")

    # -- chunked primitives ----------------------------------------------------------------

    def _chunks(self, step=None):
        step = step or self.chunk
        for start in range(0, self.n_samples, step):
            yield slice(start, min(start + step, self.n_samples))

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

    def _rho(self, LTc, w2):
        """Discrepancies ``(K, c)`` of a chunk (baseline-shifted), in the storage dtype."""
        m1, b = self._m_single, self._block_size
        K, c = self.n_classes, LTc.shape[1]
        if b is not None:
            out = np.matmul(w2[None, :m1].reshape(K, 1, b), LTc[:m1].reshape(K, b, c))[:, 0]
        else:
            out = np.zeros((K, c), dtype=LTc.dtype)
            for k, blk in enumerate(self._blocks):
                if blk.start < blk.stop:
                    out[k] = w2[blk] @ LTc[blk]
        if m1 < LTc.shape[0]:
            out += (self._ET_shared * w2[m1:, None]).T @ LTc[m1:]
        return out

    def _pullback(self, LTc, RT):
        """``g2[c] = sum_i LT[c, i] sum_k E[c, k] RT[k, i]`` for a chunk, in float64."""
        m1, b = self._m_single, self._block_size
        K = self.n_classes
        RT = RT.astype(LTc.dtype, copy=False)
        g2 = np.empty(LTc.shape[0])
        if b is not None:
            g2[:m1] = np.matmul(LTc[:m1].reshape(K, b, -1), RT[:, :, None]).ravel()
        else:
            for k, blk in enumerate(self._blocks):
                g2[blk] = LTc[blk] @ RT[k]
        if m1 < LTc.shape[0]:
            g2[m1:] = np.einsum("ck,ck->c", LTc[m1:] @ RT.T, self._ET_shared)
        return g2

    def _weighted(self, LTc, PT, out=None):
        """``X[c, i] = LT[c, i] sum_k E[c, k] P[i, k]`` for a chunk (into ``out`` if given)."""
        m1, b = self._m_single, self._block_size
        K, c = self.n_classes, LTc.shape[1]
        X = np.empty(LTc.shape, dtype=LTc.dtype) if out is None else out
        if b is not None:
            np.multiply(LTc[:m1].reshape(K, b, c), PT[:, None, :], out=X[:m1].reshape(K, b, c))
        else:
            for k, blk in enumerate(self._blocks):
                np.multiply(LTc[blk], PT[k], out=X[blk])
        if m1 < LTc.shape[0]:
            np.multiply(LTc[m1:], self._ET_shared @ PT, out=X[m1:])
        return X

    # -- the objective -----------------------------------------------------------------------

    def evaluate(self, w):
        """Value, gradient and class probabilities at ``w`` (one pass over ``LT``)."""
        w = np.asarray(w, dtype=np.float64)
        w2 = w[self._weight].astype(self.dtype)
        n = self.n_samples
        PT = np.empty((self.n_classes, n))
        g2 = np.zeros(self.LT.shape[0])
        total = 0.0
        for cols in self._chunks():
            LTc = self.LT[:, cols]
            # -rho + min_k rho (<= 0), in the storage dtype: rho carries that rounding
            # already, and float32 exp is vectorised where float64 exp is not
            shifted = np.negative(self._rho(LTc, w2))  # (K, c)
            shifted -= shifted.max(axis=0)
            yc = self.y[cols]
            idx = np.arange(shifted.shape[1])
            E = np.exp(shifted)
            s = E.sum(axis=0, dtype=np.float64)
            total += np.sum(np.log(s) - shifted[yc, idx])  # rho_y + log sum exp(-rho)
            P = np.divide(E, s, out=PT[:, cols])
            R = P.astype(self.dtype)
            R[yc, idx] -= 1.0  # P - Y
            g2 -= self._pullback(LTc, R)
        value = total / n + 0.5 * self.alpha * (w @ w) + self.l1 * np.sum(w)
        grad = self._fold(g2) / n + self.alpha * w + self.l1
        return Point(w=w, value=float(value), grad=grad, P=PT.T)

    def value(self, w):
        return self.evaluate(w).value

    def hessp(self, point, v):
        """Hessian-vector product ``H(w) v`` at ``point``."""
        v = np.asarray(v, dtype=np.float64)
        v2 = v[self._weight].astype(self.dtype)
        PTall = point.P.T
        g2 = np.zeros(self.LT.shape[0])
        for cols in self._chunks():
            LTc = self.LT[:, cols]
            PT = PTall[:, cols]
            PA = PT * self._rho(LTc, v2)
            PA -= PT * PA.sum(axis=0)
            g2 += self._pullback(LTc, PA)
        return self._fold(g2) / self.n_samples + self.alpha * v

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

    def hess_diag(self, point):
        """Diagonal of the Hessian (the paper's PCG preconditioner)."""
        PTall = point.P.T
        first = np.zeros(self.LT.shape[0])
        sq = np.zeros(self.n_weights)
        work = self._work_buffers()
        for cols in self._chunks():
            LTc = self.LT[:, cols]
            c = LTc.shape[1]
            X = self._weighted(LTc, self._probabilities(PTall, cols), out=work["X"][:, :c])
            first += np.einsum("ci,ci->c", X, LTc)
            S = self._fold(X, out=work["S"][:, :c], tmp=work["T"][:, :c])
            sq += np.einsum("li,li->l", S, S)
        return (self._fold(first) - sq) / self.n_samples + self.alpha

    def hessian(self, point):
        """Dense Hessian ``(M, M)``: per-class blocks minus the Gram ``S'S``.

        ``H = (1/n) [sum_k E_k' diag(P[:, k]) E_k - S'S] + alpha I`` as in
        :meth:`ConvexObjective.hessian`, on the stored columns: class ``k``'s block
        uses only the stored columns it enters (one-vs-one: ``K - 1``), and
        ``S = sum_k diag(P[:, k]) E_k`` is formed one chunk of samples at a time.
        """
        M, K = self.n_weights, self.n_classes
        m1, b = self._m_single, self._block_size
        PTall = point.P.T
        gram = np.zeros((M, M))
        batched = b is not None and m1 == self.LT.shape[0]
        if batched:
            blocks = np.zeros((K, b, b))
        else:
            blocks = [np.zeros((cc.size, cc.size)) for cc in self._class_cols]
        work = self._work_buffers()
        for cols in self._chunks():
            LTc = self.LT[:, cols]
            c = LTc.shape[1]
            PT = self._probabilities(PTall, cols)
            X = self._weighted(LTc, PT, out=work["X"][:, :c])
            S = self._fold(X, out=work["S"][:, :c], tmp=work["T"][:, :c])
            gram += S @ S.T  # symmetric rank-k update (numpy calls syrk)
            if batched:
                blocks += np.matmul(X.reshape(K, b, c), LTc.reshape(K, b, c).transpose(0, 2, 1))
            else:
                for k, cc in enumerate(self._class_cols):
                    if cc.size:
                        Gk = LTc[cc]
                        blocks[k] += (Gk * PT[k]) @ Gk.T
        # scatter the class blocks into H class by class: a flat index of all
        # blocks at once would hold sum_k |cols(k)|^2 entries (80 MB for a
        # 1,000-column sparse code), far more than the losses themselves
        H = -gram
        for k, cc in enumerate(self._class_cols):
            if cc.size:
                idx = self._weight[cc]
                H[np.ix_(idx, idx)] += blocks[k]
        H /= self.n_samples
        H[np.diag_indices(M)] += self.alpha
        return H

    def predict_proba(self, w):
        """Class probabilities ``softmax(-rho)`` (paper eq. 7) at ``w``."""
        return np.ascontiguousarray(self.evaluate(w).P)
