"""The class discrepancy ``rho`` of the paper's eq. (1), and its adjoint: the one kernel.

Notation. ``L = [L_pos, L_neg]`` stacks the per-classifier losses
(``n_samples x 2M``, :func:`stack_losses`); ``E = [code == +1, code == -1]``
stacks the side indicators (``K x 2M``, :func:`side_indicators`). For weights
``w`` (length ``M``) the discrepancies are one matrix product::

    rho = L @ W + b,    W = E.T * [w, w][:, None]               # (n_samples, K)

(:func:`side_weights` builds ``W``; ``b`` are the optional class intercepts,
zero in the paper's model). The adjoint pulls an ``(n_samples, K)`` matrix
``R`` back to the weights: ``fold(sum_k E.T * (L.T @ R))`` with ``fold``
adding the positive-side and negative-side halves (:func:`pullback`); the
intercepts' part is ``R.sum(axis=0)``.

Every consumer of ``rho`` calls this module: the decoder's ``predict_proba`` and
``decision_function`` (through :func:`output_discrepancies`, which computes the
losses of ``Q`` in cache-sized row chunks), the loss-based decoder, the
theory's margins, the regularisation path's scores, and the dense reference
objective and the section-4 objectives. The one other form of the same
product is the fit-time storage of
:class:`~convexagg.aggregation.BlockedObjective`, which computes a
baseline-shifted ``rho`` class block by class block; its tests compare it with
this kernel.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..losses import binary_losses

__all__ = [
    "discrepancies",
    "output_discrepancies",
    "pullback",
    "softmax_classes",
    "side_indicators",
    "side_weights",
    "stack_losses",
]

# row chunks of output_discrepancies: losses of ~256 KB per chunk, in buffers
# reused from chunk to chunk (fresh arrays of the size of Q cost more in page
# faults than the logs themselves)
_CHUNK_BYTES = 1 << 18

# output_discrepancies multiplies by a sparse W when at most this share of its entries
# is nonzero: one-vs-one's W on many classes is far sparser, and its sparse product far
# faster, while sparse random codes and one-vs-rest fill W too much for a sparse product
# to pay off (BENCHMARKS.md, "Decoding 2,000 letter rows")
SPARSE_DENSITY = 0.125

_EPS64 = float(np.finfo(np.float64).eps)


def stack_losses(L_pos, L_neg):
    """Stack ``[L_pos, L_neg]`` as one C-contiguous float64 array.

    Parameters
    ----------
    L_pos : ndarray of shape (n_samples, M)
        Losses against the positive sides.
    L_neg : ndarray of shape (n_samples, M)
        Losses against the negative sides.

    Returns
    -------
    L : ndarray of shape (n_samples, 2M)
        The stacked losses.
    """
    return np.ascontiguousarray(np.hstack([L_pos, L_neg]), dtype=np.float64)


def side_indicators(code):
    """``E.T``: the stacked indicators ``[code == +1; code == -1]``.

    Parameters
    ----------
    code : ndarray of shape (K, M)
        The code matrix.

    Returns
    -------
    ET : ndarray of shape (2M, K)
        The indicators.
    """
    code = np.asarray(code)
    return np.vstack([(code == 1).T, (code == -1).T]).astype(np.float64)


def side_weights(code, w):
    """Side weights ``W = E.T * [w, w][:, None]``, so that ``rho = L @ W``.

    With entry weights (a ``(K, M)`` matrix ``U``, see
    :mod:`~convexagg.aggregation.entries`) each entry has its own weight:
    ``W = E.T * [U.T; U.T]``. Side weights ``(2, K, M)`` (zero entries with weights,
    :func:`~convexagg.aggregation.side_entry_weights`) are ``W = [S[0].T; S[1].T]``.

    Parameters
    ----------
    code : ndarray of shape (K, M)
        The code matrix.
    w : ndarray of shape (M,), (K, M) or (2, K, M)
        Aggregation weights, one per column, one per entry, or one per class and
        side of each column.

    Returns
    -------
    W : ndarray of shape (2M, K)
        The side weights.
    """
    w = np.asarray(w, dtype=np.float64)
    if w.ndim == 3:  # side weights (2, K, M) already (zero entries carry weights)
        return np.ascontiguousarray(np.vstack([w[0].T, w[1].T]))
    # C order: the indicators come out Fortran-ordered, and a Fortran operand
    # of matmul (with out=) leaves NumPy's fastest BLAS path
    if w.ndim == 2:
        return np.ascontiguousarray(side_indicators(code) * np.vstack([w.T, w.T]))
    return np.ascontiguousarray(side_indicators(code) * np.concatenate([w, w])[:, None])


def discrepancies(L, W, intercept=None, out=None):
    """Paper eq. (1): ``rho[i, k] = sum_l w_l d(C[k, l], Q[i, l]) + b_k``.

    Parameters
    ----------
    L : ndarray of shape (n_samples, 2M)
        Stacked losses, see :func:`stack_losses`.
    W : ndarray of shape (2M, K)
        Side weights, see :func:`side_weights`.
    intercept : ndarray of shape (K,), default=None
        Class intercepts ``b``; none when None.
    out : ndarray of shape (n_samples, K), default=None
        Where to write ``rho``.

    Returns
    -------
    rho : ndarray of shape (n_samples, K)
        The discrepancies (``out`` when given).
    """
    rho = np.matmul(L, np.ascontiguousarray(W, dtype=L.dtype), out=out)
    if intercept is not None:
        rho += intercept
    return rho


def pullback(L, ET, R):
    """The adjoint of :func:`discrepancies` in ``w``: ``fold(sum_k E.T * (L.T @ R))``.

    With ``R = P - Y`` (one-hot labels) it is ``n`` times the likelihood's gradient.

    Parameters
    ----------
    L : ndarray of shape (n_samples, 2M)
        Stacked losses.
    ET : ndarray of shape (2M, K)
        Stacked indicators, see :func:`side_indicators`.
    R : ndarray of shape (n_samples, K)
        The vector to pull back.

    Returns
    -------
    g : ndarray of shape (M,)
        The pulled-back vector.
    """
    g2 = np.einsum("lk,lk->l", L.T @ R, ET)
    M = g2.size // 2
    return g2[:M] + g2[M:]


def output_discrepancies(
    Q,
    code,
    w,
    intercept=None,
    *,
    loss="cross_entropy",
    output="proba",
    dtype=np.float64,
    transposed=False,
    log_odds=False,
):
    """``rho`` of binary outputs ``Q`` (validated), their losses computed chunk by chunk.

    The fused decode of :func:`discrepancies` from ``Q``: the losses of a chunk
    of rows are taken, transposed (``2M x rows``), in buffers reused from chunk
    to chunk, and multiplied at once by ``W.T`` -- a sparse matrix when the
    code is sparse enough (:data:`SPARSE_DENSITY`; one-vs-one: each column
    touches two classes), a dense one otherwise. For the cross-entropy the
    logs are taken of ``q`` and ``1 - q`` clipped and formed as
    :func:`~convexagg.losses.cross_entropy_into` does, and their sign is folded
    into ``W``.

    Parameters
    ----------
    Q : ndarray of shape (n_samples, M)
        Binary outputs, validated.
    code : ndarray of shape (K, M)
        The code matrix.
    w : ndarray of shape (M,), (K, M) or (2, K, M)
        Aggregation weights, one per column, per entry or per side (:func:`side_weights`).
    intercept : ndarray of shape (K,), default=None
        Class intercepts; none when None.
    loss : str, default="cross_entropy"
        As in :func:`convexagg.losses.binary_losses`.
    output : {"proba", "margin"}, default="proba"
        What ``Q`` holds.
    dtype : {numpy.float64, numpy.float32}, default=numpy.float64
        Precision of the losses and the product (``float32`` halves both and
        takes the logs in single precision; the result is float64).
    transposed : bool, default=False
        Return ``rho.T`` (C-ordered ``K x n_samples``), the layout the kernel
        computes in: reductions over the classes then run along the long axis
        (:func:`softmax_classes`).
    log_odds : bool, default=False
        ``Q`` holds the log-odds ``z`` of the probabilities (``q = expit(z)``;
        NaN-free, ``+-inf`` allowed), cross-entropy only: the losses are taken
        from ``z`` directly (:func:`_losses_from_log_odds`), clipped as those
        of ``expit(z)`` are. A Fortran-ordered ``Q`` is read without a
        transposed copy; a :class:`~convexagg.linear_outputs.LinearLogOdds` writes its
        blocks where the losses are taken (:func:`_rho_of_log_odds_blocks`).

    Returns
    -------
    rho : ndarray of shape (n_samples, K), or (K, n_samples) when transposed; float64
        The discrepancies.
    """
    dtype = np.dtype(dtype)
    n, M = Q.shape
    cross_entropy = loss == "cross_entropy"
    if log_odds and not cross_entropy:
        raise ValueError(f"log_odds=True needs loss='cross_entropy', got loss={loss!r}.")
    # the logs of the cross-entropy carry its sign; the losses of the log-odds do not
    product, K = _transposed_product(code, w, cross_entropy and not log_odds, dtype)
    # log-odds computed block by block (linear_outputs.LinearLogOdds) write themselves
    write = getattr(Q, "negated_block_into", None) if log_odds else None
    if write is not None:
        rhoT = _rho_of_log_odds_blocks(write, n, M, product, K, dtype)
    else:
        rhoT = _rho_of_chunks(Q, M, product, K, dtype, cross_entropy, loss, output, log_odds)
    if transposed:
        rhoT = rhoT.astype(np.float64, copy=False)
        if intercept is not None:
            rhoT += np.asarray(intercept)[:, None]
        return rhoT
    rho = np.ascontiguousarray(rhoT.T, dtype=np.float64)
    if intercept is not None:
        rho += intercept
    return rho


def _rho_of_chunks(Q, M, product, K, dtype, cross_entropy, loss, output, log_odds):
    """The loop of :func:`output_discrepancies` over row chunks of an array ``Q``:
    ``rho.T`` (``K x n``) in ``dtype``."""
    n = Q.shape[0]
    # one chunk width whatever n, each product on the whole buffer: BLAS sums in
    # an order that depends on the width, and the first rows of a request then
    # decode to the bit as they do alone
    step = max(1, _CHUNK_BYTES // (2 * M * dtype.itemsize))
    rhoT = np.empty((K, n), dtype=dtype)
    buf = np.zeros((2, M, step), dtype=dtype)
    # float64 outputs decoded in float32 are clipped and complemented in float64
    narrowing = dtype == np.float32 and Q.dtype != np.float32 and not log_odds
    work_dtype = np.float64 if narrowing else dtype
    if cross_entropy:
        bounds = _Bounds((M, step), work_dtype, log_odds)
        work = np.empty((M, step), work_dtype) if narrowing else None
    for start in range(0, n, step):
        c = min(step, n - start)
        qT, losses = Q[start : start + c].T, buf[:, :, :c]
        if log_odds:
            _losses_from_log_odds(qT, losses, bounds.cut(c))
        elif cross_entropy:
            _log_sides(qT, losses, bounds.cut(c), None if work is None else work[:, :c])
        else:
            L_pos, L_neg = binary_losses(qT.T, loss, output)
            losses[0], losses[1] = L_pos.T, L_neg.T
        rhoT[:, start : start + c] = product(buf.reshape(2 * M, step))[:, :c]
    return rhoT


def _rho_of_log_odds_blocks(write, n, M, product, K, dtype):
    """``rho.T`` (``K x n``) in ``dtype`` of ``n`` rows of log-odds that
    ``write(start, stop, out)`` writes, negated and transposed, block by block
    (:meth:`convexagg.linear_outputs.LinearLogOdds.negated_block_into`).

    The blocks go straight into the losses' buffer, where
    :func:`_losses_from_negated_log_odds` wants them (float32: through float64
    scratch, rounded as a copy of ``Z`` is): no block of ``Z`` allocated, copied
    or negated. Blocks hold 256 KB of float64 log-odds, the size that decoded
    fastest (smaller blocks pay more per call, larger ones leave the cache), and
    the views of a full block are made once rather than sliced per block.
    """
    step = max(1, _CHUNK_BYTES // (M * 8))
    rhoT = np.empty((K, n), dtype=dtype)
    buf = np.zeros((2, M, step), dtype=dtype)
    flat = buf.reshape(2 * M, step)
    bounds = _Bounds((M, step), dtype, log_odds=True)
    scratch = None if dtype == np.float64 else np.empty((M, step))
    for start in range(0, n, step):
        c = min(step, n - start)
        if c < step:  # the last block, narrower: views of its width
            loss, u, cut = buf[0, :, :c], buf[1, :, :c], bounds.cut(c)
            block = None if scratch is None else scratch[:, :c]
        else:
            loss, u, cut, block = buf[0], buf[1], bounds, scratch
        if block is None:
            write(start, start + c, u)
        else:
            u[...] = write(start, start + c, block)
        _losses_from_negated_log_odds(loss, u, cut)
        rhoT[:, start : start + c] = product(flat)[:, :c]
    return rhoT


def softmax_classes(rhoT):
    """``softmax(-rho)`` by rows, from ``rho.T`` (``K x n``, float64; overwritten).

    The same arithmetic as :func:`scipy.special.softmax` (shift by the row's
    extreme, ``exp``, divide by the sum), with the reductions over the few
    classes taken along the long axis, faster than ``softmax(-rho, axis=1)``,
    whose per-row reductions over a few values dominate its time.

    Parameters
    ----------
    rhoT : ndarray of shape (K, n_samples)
        Transposed discrepancies (:func:`output_discrepancies` with ``transposed``).

    Returns
    -------
    P : ndarray of shape (n_samples, K)
        C-ordered class probabilities; rows sum to 1.
    """
    np.subtract(rhoT.min(axis=0), rhoT, out=rhoT)
    np.exp(rhoT, out=rhoT)
    rhoT /= rhoT.sum(axis=0)
    return np.ascontiguousarray(rhoT.T)


# the last products built, (code, w, negated, dtype, (product, K)), the latest first:
# decoders predicting batch after batch reuse theirs instead of rebuilding it on every
# decode (the cache compares code and w, so that a hit builds nothing); a few, so that
# models predicting in turn do not evict each other
_last_products = ()
_KEPT_PRODUCTS = 4


def _transposed_product(code, w, negated, dtype):
    """``(L.T -> W.T @ L.T, K)`` for transposed losses, ``W`` the :func:`side_weights`
    of ``code`` and ``w`` (negated when ``negated``), sparse when sparse enough."""
    global _last_products
    code, w = np.asarray(code), np.asarray(w, dtype=np.float64)
    kept = _last_products  # one read: another thread may replace it meanwhile
    for c, v, neg, dt, found in kept:
        if (
            neg == negated
            and dt == dtype
            and c.shape == code.shape
            and v.shape == w.shape
            and np.array_equal(v, w)
            and np.array_equal(c, code)
        ):
            return found
    W = side_weights(code, w)
    found = _build_product(-W if negated else W, dtype), W.shape[1]
    _last_products = ((code.copy(), w.copy(), negated, dtype, found),) + kept[: _KEPT_PRODUCTS - 1]
    return found


def _build_product(W, dtype):
    WT = np.ascontiguousarray(W.T, dtype=dtype)
    rows, cols = np.nonzero(WT)
    if rows.size > SPARSE_DENSITY * WT.size:
        return WT.__matmul__
    # CSR from its parts (rows come sorted): scipy's conversion from dense costs more
    indptr = np.searchsorted(rows, np.arange(WT.shape[0] + 1))
    return sp.csr_array((WT[rows, cols], cols, indptr), shape=WT.shape).__matmul__


class _Bounds:
    """The constants of a chunk's clipping: scalars in float64, arrays of the
    chunk's shape in float32.

    NumPy's float32 ``maximum`` / ``minimum`` / ``clip`` against a scalar (a
    zero-stride operand) do not vectorise, several times slower than against an
    array of the chunk's shape; in float64 ``np.clip`` with scalars is as fast as
    ``maximum`` and ``minimum`` with arrays. ``lo`` / ``hi``: the clip of ``q``
    (``[eps, 1 - eps]``, float64 ``eps``) or, for log-odds, of ``z`` (``[-C, C]``
    with ``C = -log(eps)`` in the dtype, see :func:`_losses_from_log_odds`).
    """

    def __init__(self, shape, dtype, log_odds=False):
        dtype = np.dtype(dtype)
        if log_odds:
            cap = -np.log(dtype.type(_EPS64))  # the largest loss, -log(eps), in dtype
            lo, hi = -cap, cap
        else:
            lo, hi = _EPS64, 1.0 - _EPS64
        self.vector = dtype == np.float32
        fill = (lambda v: np.full(shape, v, dtype)) if self.vector else dtype.type
        self.lo, self.hi = fill(lo), fill(hi)

    def cut(self, c):
        """The bounds of a chunk of ``c`` columns."""
        if not self.vector or c == self.lo.shape[1]:
            return self
        cut = object.__new__(_Bounds)
        cut.vector = True
        cut.lo, cut.hi = self.lo[:, :c], self.hi[:, :c]
        return cut

    def clip(self, x):
        """``x`` clipped into ``[lo, hi]``, in place."""
        if self.vector:
            np.minimum(x, self.hi, out=x)
            return np.maximum(x, self.lo, out=x)
        return np.clip(x, self.lo, self.hi, out=x)


def _log_sides(qT, out, bounds, work=None):
    """``out[0] = log q``, ``out[1] = log(1 - q)``, ``q`` clipped into ``[eps, 1 - eps]``.

    The logs of :func:`~convexagg.losses.cross_entropy_into` (clipped with the
    float64 ``eps``, ``1 - q`` formed in float64 or exactly), without its sign.
    ``bounds``: :class:`_Bounds` in ``out``'s dtype, or float64 with ``work``,
    float64 scratch of ``qT``'s shape when ``qT`` is float64 and ``out`` float32.
    """
    # the transposed rows are copied first: ufuncs on a strided operand do not
    # vectorise, a copy is blocked
    if work is None:  # clipped in out's dtype: float64, or float32 from float32 q
        out[0] = qT
        if out.dtype == np.float32:
            # in float32, 1 - q is exact (q >= 1/2) or correctly rounded, as it
            # is in float64 and rounded; clipping 1 - q at eps is clipping q at
            # 1 - eps (for q = 1, the only float32 above 1 - eps)
            np.subtract(np.float32(1.0), out[0], out=out[1])
            np.maximum(out, bounds.lo, out=out)
        else:
            bounds.clip(out[0])
            np.subtract(1.0, out[0], out=out[1])
    else:
        work[...] = qT
        bounds.clip(work)
        out[0] = work
        np.subtract(1.0, work, out=work)
        out[1] = work
    return np.log(out, out=out)


def _losses_from_log_odds(zT, out, bounds):
    """``out[0] = -log q``, ``out[1] = -log(1 - q)`` for ``q = expit(z)``, from ``z``.

    ``z`` is clipped into ``[-C, C]`` first, ``C = -log(eps)`` (float64 ``eps``)
    in ``out``'s dtype: ``q`` then lies in ``[eps, 1 - eps]``, the clip of
    :func:`_log_sides`, so that the losses are at most ``C``, the cap of the
    losses of ``expit(z)``. Then ``-log q = log1p(exp(-z))`` (``exp`` at most
    ``exp(C)``: no overflow) and ``-log(1 - q) = -log q + z``: one ``exp`` and one
    ``log1p`` per output, five passes over the chunk (six in float32, whose clip
    takes two; the first pass negates ``z``), half the passes of taking both
    losses from ``log1p(exp(-|z|))``. Each loss
    is within one unit in the last place of ``C`` (absolute; tested against
    ``numpy.logaddexp``), where the losses of ``expit(z)`` lose all
    precision on the side whose probability rounds to 1 (``z`` beyond about 20
    in float64).
    """
    if zT.dtype == out.dtype:
        np.negative(zT, out=out[1])  # contiguous rows when the log-odds are Fortran-ordered
    else:  # a cast then an in-place negation is cheaper than a negation that casts
        out[1] = zT
        np.negative(out[1], out=out[1])
    _losses_from_negated_log_odds(out[0], out[1], bounds)
    return out


def _losses_from_negated_log_odds(loss, u, bounds):
    """:func:`_losses_from_log_odds` into ``loss`` (``-log q``) and ``u`` (``-log(1 - q)``),
    ``u`` holding ``-z`` on entry (:meth:`convexagg.linear_outputs.LinearLogOdds.negated_block_into`
    writes it there).

    The same arithmetic, bit for bit: the clip is symmetric (``clip(-z) =
    -clip(z)``), ``exp`` takes ``-z`` clipped as before, and ``-log q - (-z)``
    is ``-log q + z``.
    """
    bounds.clip(u)
    np.exp(u, out=loss)
    np.log1p(loss, out=loss)
    np.subtract(loss, u, out=u)
