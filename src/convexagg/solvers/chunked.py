"""The convex aggregation objective over row-chunked data: one pass per Newton iteration.

The objective of the paper's problem (12) is a mean over samples plus the
penalty, so its value, gradient and Hessian are sums of per-block terms::

    f(w)   = (1/n) sum_b n_b f_b(w)   + alpha/2 |w|^2 + l1 sum(w)
    grad f = (1/n) sum_b n_b grad f_b + alpha w       + l1
    hess f = (1/n) sum_b n_b hess f_b + alpha I

where ``f_b`` is the mean negative log-likelihood of block ``b`` (``n_b`` rows).
:func:`block_sums` computes the three ``n_b``-weighted terms of one block with
the in-memory objective the decoder uses,
:class:`~convexagg.solvers.BlockedObjective` (built with no penalty; no algebra
is re-derived here), the losses computed from the block's ``Q`` inside the
block (the loss matrix of the whole data is never formed). :class:`DaskObjective`
maps it over the row blocks of a Dask array and tree-reduces the partial sums in
**one** Dask computation, adds the penalty once, and returns a point that
carries the dense Hessian. Its ``hessian`` / ``hessp`` / ``hess_diag`` read that
cached matrix, so the interior point solvers take exactly one pass over the data
per evaluation of ``f``: the start point, then one per line-search trial (the
accepted trial of an iteration is the next iteration's point, so an iteration
whose first trial is accepted costs one pass). ``n_passes`` counts them.

The dense ``(M, M)`` Hessian is what makes one pass per iteration possible
(a matrix-free PCG step would need a pass per CG iteration); it costs
``O(n_b M^2)`` per block and ``O(M^2)`` memory per partial sum, which is the
right trade for codes of up to a few thousand columns.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._dask import aligned_labels, import_dask_array, row_blocks
from ..losses import check_binary_outputs
from .blocked import BlockedObjective

__all__ = ["BlockSums", "ChunkedPoint", "DaskObjective", "block_sums"]


@dataclass
class BlockSums:
    """Sums over the rows of some blocks (not means): ``n`` rows, ``n * f``, ``n * grad``,
    ``n * hess`` (``None`` when the Hessian was not asked for)."""

    n: int
    value: float
    grad: np.ndarray
    hess: np.ndarray | None

    def __add__(self, other):
        hess = None if self.hess is None else self.hess + other.hess
        return BlockSums(self.n + other.n, self.value + other.value, self.grad + other.grad, hess)


def _sum_blocks(*parts):
    total = parts[0]
    for part in parts[1:]:
        total = total + part
    return total


def block_sums(Q, y, w, code, loss, output, with_hessian=True, dtype=np.float64):
    """Row sums of the unpenalised objective's value, gradient and Hessian on one block.

    Validates the block (``Q`` finite, probabilities in ``[0, 1]``; ``y`` valid
    class indices) and raises ``ValueError`` with the in-memory messages.

    Parameters
    ----------
    Q : ndarray of shape (n_b, M)
    y : ndarray of shape (n_b,)
    w : ndarray of shape (M,)
    code : ndarray of shape (K, M)
    loss, output : str
        As in :func:`convexagg.losses.binary_losses`.
    with_hessian : bool, default=True
    dtype : {numpy.float64, numpy.float32}, default=numpy.float64
        Storage and product precision of the block's losses
        (see :class:`~convexagg.solvers.BlockedObjective`).

    Returns
    -------
    BlockSums
    """
    Q = check_binary_outputs(Q, output)
    y = np.asarray(y)
    K = code.shape[0]
    if y.size and (y.min() < 0 or y.max() >= K):
        raise ValueError(
            f"y must hold integer class indices in 0..n_classes-1 (n_classes={K} rows of the "
            f"code); a block holds labels in [{y.min()}, {y.max()}]."
        )
    n = Q.shape[0]
    objective = BlockedObjective.from_outputs(
        Q, code, y, 0.0, loss=loss, output=output, dtype=dtype
    )
    point = objective.evaluate(w)
    hess = objective.hessian(point) * n if with_hessian else None
    return BlockSums(n, point.value * n, point.grad * n, hess)


@dataclass
class ChunkedPoint:
    """The objective evaluated at ``w`` over all blocks; ``hessian`` is ``None`` when
    it was not asked for. There is no ``P``: class probabilities stay on the workers."""

    w: np.ndarray
    value: float
    grad: np.ndarray
    hessian: np.ndarray | None


class DaskObjective:
    """``f(w)`` of the paper's problem (12) over a row-chunked Dask array of binary outputs.

    Offers what the solvers ask of an objective (``n_weights``, ``evaluate``,
    ``value``, ``hessian``, ``hessp``, ``hess_diag``); every ``evaluate`` is one
    Dask computation over the row blocks of ``Q`` (value, gradient and dense
    Hessian together), run by the active Dask scheduler (a ``distributed``
    client if one is set up). ``Q`` is never gathered: only the ``O(M^2)``
    partial sums leave the workers.

    Parameters
    ----------
    Q : dask.array.Array of shape (n_samples, M)
        Binary outputs, chunked by rows (column chunks are merged).
        Validated block by block during each pass.
    y : dask.array.Array or ndarray of shape (n_samples,)
        Integer class indices; rechunked (or split) to the row chunks of ``Q``.
    code : ndarray of shape (n_classes, M)
        A valid code matrix (see :func:`convexagg.codes.check_code_matrix`).
    alpha : float
        L2 regularisation strength.
    loss, output : str
        As in :func:`convexagg.losses.binary_losses`.
    l1 : float, default=0.0
        Strength of an added ``l1 * sum(w)`` (linear on ``w >= 0``).
    dtype : {"float64", "float32"}, default="float64"
        Precision of the per-block losses and products.
    split_every : int, default=8
        Fan-in of the tree reduction of the partial sums (on the workers).

    Attributes
    ----------
    n_samples, n_weights, n_classes, n_blocks : int
    n_passes : int
        Passes over the data so far (one per ``evaluate`` / ``value``).
    """

    def __init__(
        self,
        Q,
        y,
        code,
        alpha,
        loss="cross_entropy",
        output="proba",
        *,
        l1=0.0,
        dtype="float64",
        split_every=8,
    ):
        import_dask_array()
        import dask

        Q = row_blocks(Q, require_known_rows=True)
        self.code = np.asarray(code)
        if Q.shape[1] != self.code.shape[1]:
            raise ValueError(
                f"Q has {Q.shape[1]} columns but the code matrix has {self.code.shape[1]} "
                "classifiers (columns); they must match."
            )
        row_chunks = tuple(int(c) for c in Q.chunks[0])
        y = aligned_labels(y, row_chunks, Q.shape[0])
        self.n_samples = int(sum(row_chunks))
        if self.n_samples == 0:
            raise ValueError("Q has no rows.")
        self.n_weights = self.code.shape[1]
        self.n_classes = self.code.shape[0]
        self.alpha = float(alpha)
        self.l1 = float(l1)
        self.dtype = np.dtype(dtype)
        self.loss = loss
        self.output = output
        self.split_every = int(split_every)
        q_blocks = Q.to_delayed().ravel()
        y_blocks = y.to_delayed().ravel()
        self._blocks = [(q, yb) for q, yb, n in zip(q_blocks, y_blocks, row_chunks) if n > 0]
        self.n_blocks = len(self._blocks)
        self.n_passes = 0
        # one graph node for the code, shared by the block tasks of every pass
        self._code = dask.delayed(self.code, pure=True)

    def _pass(self, w, with_hessian):
        """One Dask computation: the partial sums of all blocks, tree-reduced."""
        import dask

        block = dask.delayed(block_sums, pure=True)
        parts = [
            block(q, yb, w, self._code, self.loss, self.output, with_hessian, self.dtype)
            for q, yb in self._blocks
        ]
        reduce = dask.delayed(_sum_blocks, pure=True)
        while len(parts) > 1:
            parts = [
                reduce(*parts[i : i + self.split_every])
                for i in range(0, len(parts), self.split_every)
            ]
        (total,) = dask.compute(parts[0])
        self.n_passes += 1
        return total

    def evaluate(self, w, with_hessian=True):
        """Value, gradient and (by default) dense Hessian at ``w``: one pass over the data."""
        w = np.asarray(w, dtype=np.float64)
        total = self._pass(w, with_hessian)
        n, alpha = self.n_samples, self.alpha
        value = total.value / n + 0.5 * alpha * (w @ w) + self.l1 * np.sum(w)
        grad = total.grad / n + alpha * w + self.l1
        hess = None
        if with_hessian:
            hess = total.hess / n
            hess[np.diag_indices_from(hess)] += alpha
        return ChunkedPoint(w=w, value=float(value), grad=grad, hessian=hess)

    def value(self, w):
        """``f(w)`` alone (one pass, without the Hessian)."""
        return self.evaluate(w, with_hessian=False).value

    def _cached(self, point):
        if point.hessian is None:
            raise ValueError("this point was evaluated without its Hessian.")
        return point.hessian

    def hessian(self, point):
        """The dense Hessian computed with ``point`` (a copy; no pass over the data)."""
        return self._cached(point).copy()

    def hessp(self, point, v):
        """``H v`` from the cached Hessian (no pass over the data)."""
        return self._cached(point) @ v

    def hess_diag(self, point):
        """Diagonal of the cached Hessian (no pass over the data)."""
        return np.diag(self._cached(point)).copy()
