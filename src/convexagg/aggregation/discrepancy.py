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

from ..losses import binary_losses, cross_entropy_into

__all__ = [
    "discrepancies",
    "output_discrepancies",
    "pullback",
    "side_indicators",
    "side_weights",
    "stack_losses",
]

# row chunks of ~256 KB of Q in output_discrepancies: fresh arrays of the size of
# Q cost more in page faults than the logs themselves
_CHUNK_BYTES = 1 << 18


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
    if w.ndim == 2:
        return side_indicators(code) * np.vstack([w.T, w.T])
    return side_indicators(code) * np.concatenate([w, w])[:, None]


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
    rho = np.matmul(L, W.astype(L.dtype, copy=False), out=out)
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
    Q, code, w, intercept=None, *, loss="cross_entropy", output="proba", dtype=np.float64
):
    """``rho`` of binary outputs ``Q`` (validated), their losses computed chunk by chunk.

    The losses of a chunk of rows are taken in preallocated buffers and
    multiplied at once by ``[W_pos; W_neg]`` (one product per chunk); the two
    logs per output of the cross-entropy are the whole cost of
    ``predict_proba``.

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
        Precision of the losses and the product (``float32`` halves both; the
        result is float64).

    Returns
    -------
    rho : ndarray of shape (n_samples, K), float64
        The discrepancies.
    """
    dtype = np.dtype(dtype)
    W = side_weights(code, w).astype(dtype)
    n, M = Q.shape
    step = max(1, min(n, _CHUNK_BYTES // (8 * M)))
    rho = np.empty((n, W.shape[1]), dtype=dtype)
    if loss == "cross_entropy":
        q_buf = np.empty((step, M))
        loss_buf = np.empty((step, 2, M), dtype=dtype)  # rows [L_pos | L_neg]: one product
    for start in range(0, n, step):
        rows = slice(start, min(start + step, n))
        c = rows.stop - start
        if loss == "cross_entropy":
            losses = loss_buf[:c]
            cross_entropy_into(Q[rows], losses.transpose(1, 0, 2), work=q_buf[:c])
            losses = losses.reshape(c, 2 * M)
        else:
            losses = np.hstack(binary_losses(Q[rows], loss, output)).astype(dtype, copy=False)
        discrepancies(losses, W, out=rho[rows])
    rho = rho.astype(np.float64, copy=False)
    if intercept is not None:
        rho += intercept
    return rho
