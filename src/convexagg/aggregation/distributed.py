"""The convex aggregation objective over row-chunked data: one pass per Newton iteration.

The objective of the paper's problem (12) is a (weighted) mean over samples plus
the penalty, so its value, gradient and Hessian are sums of per-block terms::

    f(x)   = (1/S) sum_b S_b f_b(x)     + R(x)
    grad f = (1/S) sum_b S_b grad f_b   + grad R
    hess f = (1/S) sum_b S_b hess f_b   + hess R

where ``f_b`` is the likelihood term of block ``b`` and ``S_b`` its rows' total
weight (its row count without sample weights). :func:`block_sums` computes the
three ``S_b``-weighted terms of one block with the in-memory storage,
:class:`~convexagg.aggregation.BlockedObjective` (built with no penalty; no
algebra is re-derived here), the losses computed from the block's ``Q`` inside
the block (the loss matrix of the whole data is never formed).
:class:`DaskObjective` maps it over the row blocks of a Dask array and
tree-reduces the partial sums in **one** Dask computation, adds the penalty
once, and returns a point that carries the dense Hessian. Its ``hessian`` /
``hessp`` / ``hess_diag`` read that cached matrix, so a solver takes exactly
one pass over the data per evaluation of ``f``: the start point, then one per
line-search trial (the accepted trial of an iteration is the next iteration's
point, so an iteration whose first trial is accepted costs one pass).
``n_passes`` counts them.

The dense Hessian is what makes one pass per iteration possible (a
matrix-free PCG step would need a pass per CG iteration); it costs
``O(n_b M^2)`` per block and ``O(M^2)`` memory per partial sum, which is the
right trade for codes of up to a few thousand columns.

**A Hessian from a row sample** (``hessian_rows``; the projected Newton
method, the default solver, fits with :data:`HESSIAN_ROWS`). The first pass
also brings ``hessian_rows`` rows back to the client, drawn without
replacement in every block in proportion to its size (seeded by
``random_state`` and the block's index); every pass after it sums only the
value and the gradient, ``O(n_b M)`` per block instead of ``O(n_b M^2)``, and
the Hessian at a point is the in-memory
:class:`~convexagg.aggregation.BlockedObjective` of the sample evaluated
there (a sub-sampled Newton matrix, Byrd, Chin, Neveitt & Nocedal, SIAM J.
Optim. 21, 2011). The line search and the stopping test see the exact value
and gradient of all rows, so the sample changes the steps, never the solution.
The sample is held in float32 from ``FLOAT32_FROM_VALUES`` (2**20) losses on
(:mod:`~convexagg.solvers.config`, as the in-memory fit stores them): about
``12 * hessian_rows * M`` bytes on the client while it is built (float32 outputs
and their two losses; 780 MB for 200,000 rows x 325), ``8 * hessian_rows * M`` after.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._dask import aligned_labels, import_dask_array, row_blocks
from ..losses import check_binary_outputs
from ..solvers.config import FLOAT32_FROM_VALUES
from ..validation import check_class_indices, check_columns_match_code, check_sample_weight
from .base import ObjectiveBase
from .blocked import BlockedObjective
from .penalty import Penalty
from .point import Point

__all__ = ["HESSIAN_ROWS", "BlockSums", "DaskObjective", "block_sample", "block_sums"]

#: rows of the Hessian's sample in a fit by the projected Newton method
HESSIAN_ROWS = 200_000


@dataclass
class BlockSums:
    """Weighted sums over the rows of some blocks (not means), added with ``+``.

    Attributes
    ----------
    n : float
        Total weight of the rows.
    value : float
        ``n * f``.
    grad : ndarray of shape (n_variables,)
        ``n * grad f``.
    hess : ndarray of shape (n_variables, n_variables) or None
        ``n * hess f``; None when not asked for.
    """

    n: float
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


def block_sums(
    Q,
    y,
    x,
    code,
    loss,
    output,
    with_hessian=True,
    dtype=np.float64,
    fit_intercept=False,
    sample_weight=None,
):
    """Weighted row sums of the unpenalised objective's value, gradient and Hessian
    on one block.

    Validates the block (``Q`` finite, probabilities in ``[0, 1]``; ``y`` valid
    class indices; ``sample_weight`` finite and ``>= 0``) and raises
    ``ValueError`` with the in-memory messages.

    Parameters
    ----------
    Q : ndarray of shape (n_b, M)
        The block's binary outputs.
    y : ndarray of shape (n_b,)
        The block's integer class indices.
    x : ndarray of shape (n_variables,)
        Weights, then intercepts.
    code : ndarray of shape (K, M)
        The code matrix.
    loss, output : str
        As in :func:`convexagg.losses.binary_losses`.
    with_hessian : bool, default=True
        Also sum the dense Hessian.
    dtype : {numpy.float64, numpy.float32}, default=numpy.float64
        Storage and product precision of the block's losses.
    fit_intercept : bool, default=False
        Free class intercepts after the weights.
    sample_weight : ndarray of shape (n_b,), default=None
        The block's sample weights.

    Returns
    -------
    sums : BlockSums
        The block's weighted sums, to be added over blocks.
    """
    Q = check_binary_outputs(Q, output)
    y = np.asarray(y)
    K = code.shape[0]
    check_class_indices(y, K)
    n_vars = code.shape[1] + (K if fit_intercept else 0)
    if sample_weight is not None:
        s = check_sample_weight(sample_weight, Q.shape[0], allow_zero_sum=True)
        if not s.sum() > 0:  # nothing to add, and BlockedObjective refuses all-zero weights
            hess = np.zeros((n_vars, n_vars)) if with_hessian else None
            return BlockSums(0.0, 0.0, np.zeros(n_vars), hess)
    if Q.shape[0] == 0:
        hess = np.zeros((n_vars, n_vars)) if with_hessian else None
        return BlockSums(0.0, 0.0, np.zeros(n_vars), hess)
    objective = BlockedObjective.from_outputs(
        Q,
        code,
        y,
        loss=loss,
        output=output,
        dtype=dtype,
        fit_intercept=fit_intercept,
        sample_weight=sample_weight,
    )
    n = objective._scale  # the block's total weight, in units of its largest weight:
    if sample_weight is not None:  # the objective divides them by it; blocks must agree
        n *= float(s.max())
    point = objective.evaluate(x)
    hess = objective.hessian(point) * n if with_hessian else None
    return BlockSums(n, point.value * n, point.grad * n, hess)


def block_sample(Q, y, sample_weight, size, seed, dtype):
    """``size`` rows of one block drawn without replacement (in their order), as
    ``(Q, y, sample_weight)`` with ``Q`` in ``dtype``.

    Parameters
    ----------
    Q : ndarray of shape (n_b, M)
        The block's binary outputs.
    y : ndarray of shape (n_b,)
        The block's labels.
    sample_weight : ndarray of shape (n_b,) or None
        The block's sample weights.
    size : int
        Rows to draw, at most ``n_b``.
    seed : sequence of int
        Seed of the draw.
    dtype : numpy dtype
        Precision of the returned outputs.

    Returns
    -------
    Q, y, sample_weight : ndarrays
        The drawn rows (``sample_weight`` None when given None).
    """
    rows = np.sort(np.random.default_rng(seed).choice(len(y), size=size, replace=False))
    s = None if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)[rows]
    return np.asarray(Q)[rows].astype(dtype), np.asarray(y)[rows], s


def _sample_sizes(row_chunks, n_rows):
    """Rows drawn from each block: ``n_rows`` in all, in proportion to the block sizes
    (cumulative rounding)."""
    total = sum(row_chunks)
    bounds = np.rint(np.cumsum([0, *row_chunks]) * (n_rows / total)).astype(int)
    return np.minimum(np.diff(bounds), row_chunks).tolist()


@dataclass
class ChunkedPoint(Point):
    """The objective evaluated at ``x`` over all blocks; ``hessian`` is ``None`` when
    it was not asked for. There is no ``P``: class probabilities stay on the workers."""

    hessian: np.ndarray | None = None


class DaskObjective(ObjectiveBase):
    """``f(x)`` of the paper's problem (12) over a row-chunked Dask array of binary outputs.

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
    penalty : Penalty, default=None
        ``Penalty()`` (none) when None.
    loss, output : str
        As in :func:`convexagg.losses.binary_losses`.
    dtype : {"float64", "float32"}, default="float64"
        Precision of the per-block losses and products.
    fit_intercept : bool, default=False
        Free class intercepts after the weights.
    sample_weight : dask.array.Array or ndarray of shape (n_samples,), default=None
        Aligned with the rows of ``Q`` like ``y``.
    split_every : int, default=8
        Fan-in of the tree reduction of the partial sums (on the workers).
    hessian_rows : int, default=None
        Take the Hessian from a sample of this many rows (all rows when there
        are fewer), gathered in the first pass, instead of summing it over
        every row in every pass (None); see the module docstring.
    random_state : int, default=0
        Seed of the Hessian's sample.

    Attributes
    ----------
    n_samples, n_weights, n_intercepts, n_classes, n_blocks : int
    n_passes : int
        Passes over the data so far (one per ``evaluate`` / ``value``).
    sample : BlockedObjective or None
        The objective of the Hessian's sample, once the first pass has drawn it.
    """

    def __init__(
        self,
        Q,
        y,
        code,
        penalty=None,
        loss="cross_entropy",
        output="proba",
        *,
        dtype="float64",
        fit_intercept=False,
        sample_weight=None,
        split_every=8,
        hessian_rows=None,
        random_state=0,
    ):
        import_dask_array()
        import dask

        Q = row_blocks(Q, require_known_rows=True)
        self.code = np.asarray(code)
        check_columns_match_code(Q, self.code)
        row_chunks = tuple(int(c) for c in Q.chunks[0])
        y = aligned_labels(y, row_chunks, Q.shape[0])
        self.n_samples = int(sum(row_chunks))
        if self.n_samples == 0:
            raise ValueError("Q has no rows.")
        self.n_classes, self.n_weights = self.code.shape
        self.n_intercepts = self.n_classes if fit_intercept else 0
        self.penalty = Penalty() if penalty is None else penalty
        self.dtype = np.dtype(dtype)
        self.loss = loss
        self.output = output
        self.fit_intercept = bool(fit_intercept)
        self.split_every = int(split_every)
        q_blocks = Q.to_delayed().ravel()
        y_blocks = y.to_delayed().ravel()
        if sample_weight is None:
            s_blocks = [None] * len(q_blocks)
        else:
            s = aligned_labels(sample_weight, row_chunks, Q.shape[0], "sample_weight", False)
            s_blocks = s.to_delayed().ravel()
        self._blocks = [
            (q, yb, sb) for q, yb, sb, n in zip(q_blocks, y_blocks, s_blocks, row_chunks) if n > 0
        ]
        self._block_rows = [n for n in row_chunks if n > 0]
        self.n_blocks = len(self._blocks)
        self.n_passes = 0
        if hessian_rows is not None and not int(hessian_rows) >= 1:
            raise ValueError(f"hessian_rows must be a positive int or None, got {hessian_rows!r}.")
        self.hessian_rows = None if hessian_rows is None else int(hessian_rows)
        self.random_state = int(random_state)
        self.sample = None
        # one graph node for the code, shared by the block tasks of every pass
        self._code = dask.delayed(self.code, pure=True)

    def _pass(self, x, with_hessian):
        """One Dask computation: the partial sums of all blocks, tree-reduced."""
        import dask

        block = dask.delayed(block_sums, pure=True)
        parts = [
            block(
                q,
                yb,
                x,
                self._code,
                self.loss,
                self.output,
                with_hessian,
                self.dtype,
                self.fit_intercept,
                sb,
            )
            for q, yb, sb in self._blocks
        ]
        reduce = dask.delayed(_sum_blocks, pure=True)
        while len(parts) > 1:
            parts = [
                reduce(*parts[i : i + self.split_every])
                for i in range(0, len(parts), self.split_every)
            ]
        draw = self.hessian_rows is not None and self.sample is None
        # the sample's blocks come in the same computation: the blocks are read once
        total, *drawn = dask.compute(parts[0], *(self._draws() if draw else ()))
        self.n_passes += 1
        if not total.n > 0:
            raise ValueError(
                "sample_weight sums to 0; at least one sample needs a positive weight."
            )
        if draw:
            self.sample = self._sample_objective(drawn)
        return total

    def _draws(self):
        """The delayed blocks of the Hessian's sample."""
        import dask

        take = _sample_sizes(self._block_rows, min(self.hessian_rows, self.n_samples))
        M = self.n_weights
        # float32 from as many losses on as the in-memory default stores in float32
        dtype = np.float32 if 2 * sum(take) * M >= FLOAT32_FROM_VALUES else np.float64
        draw = dask.delayed(block_sample, pure=True)
        return [
            draw(q, yb, sb, k, (self.random_state, b), dtype)
            for b, ((q, yb, sb), k) in enumerate(zip(self._blocks, take))
            if k > 0
        ]

    def _sample_objective(self, drawn):
        Q = np.concatenate([part[0] for part in drawn])
        y = np.concatenate([part[1] for part in drawn])
        s = None if drawn[0][2] is None else np.concatenate([part[2] for part in drawn])
        return BlockedObjective.from_outputs(  # unpenalised: with_penalty may change it
            Q,
            self.code,
            y,
            loss=self.loss,
            output=self.output,
            dtype=Q.dtype,
            fit_intercept=self.fit_intercept,
            sample_weight=s,
        )

    def evaluate(self, x, with_hessian=True):
        """Value, gradient and (by default) dense Hessian at ``x``: one pass over the data.

        Parameters
        ----------
        x : ndarray of shape (n_variables,)
            Weights, then intercepts.
        with_hessian : bool, default=True
            Also compute the dense Hessian (cached on the point).

        Returns
        -------
        point : Point
            Value and gradient, and the Hessian the derivatives use (with
            ``hessian_rows``, computed from the sample when first asked for).
        """
        x = np.asarray(x, dtype=np.float64)
        with_hessian = with_hessian and self.hessian_rows is None
        total = self._pass(x, with_hessian)
        M, n = self.n_weights, total.n
        value = total.value / n + self.penalty.value(x, M)
        grad = total.grad / n + self.penalty.grad(x, M)
        hess = None
        if with_hessian:
            hess = self.penalty.add_to_hessian(total.hess / n, M)
        return ChunkedPoint(x=x, value=float(value), grad=grad, hessian=hess)

    def value(self, x):
        """``f(x)`` alone (one pass, without the Hessian).

        Parameters
        ----------
        x : ndarray of shape (n_variables,)
            Weights, then intercepts.

        Returns
        -------
        value : float
            The objective.
        """
        return self.evaluate(x, with_hessian=False).value

    def _cached(self, point):
        if point.hessian is None and self.sample is not None:
            # the sample's objective at x (no pass over the data), kept on the point
            H = self.sample.hessian(self.sample.evaluate(point.x))
            point.hessian = self.penalty.add_to_hessian(H, self.n_weights)
        if point.hessian is None:
            raise ValueError("this point was evaluated without its Hessian.")
        return point.hessian

    def hessian(self, point, variables=None):
        """The dense Hessian at ``point`` (a copy; no pass over the data).

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
        H = self._cached(point)
        return H.copy() if variables is None else H[np.ix_(variables, variables)]

    def hessp(self, point, v):
        """``H v`` from the cached Hessian (no pass over the data).

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
        return self._cached(point) @ v

    def hess_diag(self, point):
        """Diagonal of the cached Hessian (no pass over the data).

        Parameters
        ----------
        point : Point
            The result of :meth:`evaluate` at ``x``.

        Returns
        -------
        diagonal : ndarray of shape (n_variables,)
            The Hessian's diagonal.
        """
        return np.diag(self._cached(point)).copy()
