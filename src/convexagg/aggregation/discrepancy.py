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

# output_discrepancies multiplies by a sparse W when at most this share of its
# entries is nonzero: the product of one-vs-one's on 26 classes (3.8%) with
# 2,000 x 650 float32 losses took 0.13 ms sparse against 1.0 ms dense (one core,
# the two products timed alone); with a sparse random code (24%) and with
# one-vs-rest (50%) the dense product was as fast or faster
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
    ``W = E.T * [U.T; U.T]``.

    Parameters
    ----------
    code : ndarray of shape (K, M)
        The code matrix.
    w : ndarray of shape (M,) or (K, M)
        Aggregation weights, one per column or one per entry.

    Returns
    -------
    W : ndarray of shape (2M, K)
        The side weights.
    """
    w = np.asarray(w, dtype=np.float64)
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
    w : ndarray of shape (M,) or (K, M)
        Aggregation weights, one per column or one per entry (:func:`side_weights`).
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

    Returns
    -------
    rho : ndarray of shape (n_samples, K), or (K, n_samples) when transposed; float64
        The discrepancies.
    """
    dtype = np.dtype(dtype)
    W = side_weights(code, w)
    n, M = Q.shape
    cross_entropy = loss == "cross_entropy"
    product = _transposed_product(-W if cross_entropy else W, dtype)
    # one chunk width whatever n, each product on the whole buffer: BLAS sums in
    # an order that depends on the width, and the first rows of a request then
    # decode to the bit as they do alone
    step = max(1, _CHUNK_BYTES // (2 * M * dtype.itemsize))
    rhoT = np.empty((W.shape[1], n), dtype=dtype)
    buf = np.zeros((2, M, step), dtype=dtype)
    # float64 outputs decoded in float32 are clipped and complemented in float64
    narrowing = cross_entropy and dtype == np.float32 and Q.dtype != np.float32
    work = np.empty((M, step)) if narrowing else None
    for start in range(0, n, step):
        c = min(step, n - start)
        qT, losses = Q[start : start + c].T, buf[:, :, :c]
        if cross_entropy:
            _log_sides(qT, losses, None if work is None else work[:, :c])
        else:
            L_pos, L_neg = binary_losses(qT.T, loss, output)
            losses[0], losses[1] = L_pos.T, L_neg.T
        rhoT[:, start : start + c] = product(buf.reshape(2 * M, step))[:, :c]
    if transposed:
        rhoT = rhoT.astype(np.float64, copy=False)
        if intercept is not None:
            rhoT += np.asarray(intercept)[:, None]
        return rhoT
    rho = np.ascontiguousarray(rhoT.T, dtype=np.float64)
    if intercept is not None:
        rho += intercept
    return rho


def softmax_classes(rhoT):
    """``softmax(-rho)`` by rows, from ``rho.T`` (``K x n``, float64; overwritten).

    The same arithmetic as :func:`scipy.special.softmax` (shift by the row's
    extreme, ``exp``, divide by the sum), with the reductions over the few
    classes taken along the long axis: for 2,000 x 26 it took 0.16 ms (a copy
    of ``rho.T`` included) against 0.25 ms for ``softmax(-rho, axis=1)``, whose
    per-row reductions over 26 values dominate (one core,
    ``benchmarks/profile_decode.py``).

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


# the last product built, (W, dtype, product): a decoder predicting batch after batch
# reuses it (rebuilding it cost 0.17 ms of a 1.8 ms decode, benchmarks/profile_decode.py)
_last_product = None


def _transposed_product(W, dtype):
    """``L.T -> W.T @ L.T`` for transposed losses, sparse when ``W`` is sparse enough."""
    global _last_product
    last = _last_product  # one read: another thread may replace it meanwhile
    if last is not None and last[1] == dtype and np.array_equal(last[0], W):
        return last[2]
    product = _build_product(W, dtype)
    _last_product = (W.copy(), dtype, product)
    return product


def _build_product(W, dtype):
    WT = np.ascontiguousarray(W.T, dtype=dtype)
    rows, cols = np.nonzero(WT)
    if rows.size > SPARSE_DENSITY * WT.size:
        return WT.__matmul__
    # CSR from its parts (rows come sorted): scipy's conversion from dense costs more
    indptr = np.searchsorted(rows, np.arange(WT.shape[0] + 1))
    return sp.csr_array((WT[rows, cols], cols, indptr), shape=WT.shape).__matmul__


def _log_sides(qT, out, work=None):
    """``out[0] = log q``, ``out[1] = log(1 - q)``, ``q`` clipped into ``[eps, 1 - eps]``.

    The logs of :func:`~convexagg.losses.cross_entropy_into` (clipped with the
    float64 ``eps``, ``1 - q`` formed in float64 or exactly), without its sign.
    ``work``: float64 scratch of ``qT``'s shape when ``qT`` is float64 and
    ``out`` float32.
    """
    # the transposed rows are copied first: ufuncs on a strided operand do not
    # vectorise, a copy is blocked
    if work is None:  # clipped in out's dtype: float64, or float32 from float32 q
        out[0] = qT
        if out.dtype == np.float32:
            # in float32, 1 - q is exact (q >= 1/2) or correctly rounded, as it
            # is in float64 and rounded; clipping 1 - q at eps is clipping q at
            # 1 - eps (for q = 1, the only float32 above 1 - eps)
            eps = np.float32(_EPS64)
            np.subtract(np.float32(1.0), out[0], out=out[1])
            np.maximum(out, eps, out=out)
        else:
            np.clip(out[0], _EPS64, 1.0 - _EPS64, out=out[0])
            np.subtract(1.0, out[0], out=out[1])
    else:
        work[...] = qT
        np.clip(work, _EPS64, 1.0 - _EPS64, out=work)
        out[0] = work
        np.subtract(1.0, work, out=work)
        out[1] = work
    return np.log(out, out=out)
