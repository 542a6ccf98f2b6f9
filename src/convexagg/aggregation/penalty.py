"""The penalty on the aggregation weights, one object for every objective.

On ``w >= 0`` the penalty of scikit-learn's elastic net,
``alpha * (r * |w|_1 + (1 - r) / 2 * |w|_2^2)``, is a quadratic plus a *linear*
term (``|w|_1 = sum(w)`` there): it adds ``l2 * w + l1`` to the gradient and
``l2`` to the Hessian diagonal, so every solver of the likelihood solves the L1
and elastic-net variants unchanged.

Class intercepts ``b`` (``fit_intercept=True``), the free variables after the
weights, carry only a quadratic term of strength ``intercept_l2``: the softmax
is invariant to adding one constant to every ``b_k``, and the quadratic term
makes them unique (it picks ``sum(b) = 0``) and finite even for a class absent
from the training outputs. It is ``max(l2, 1e-6)``: the weights' strength,
with a floor for ``alpha = 0`` and the pure L1 penalty.

Entry weights (``shrink`` finite, see :mod:`~convexagg.aggregation.entries`):
the variables are one weight ``u_j`` per nonzero code entry, ``column[j]`` the
classifier of entry ``j``, and the model's penalty is
``l2/2 |w|^2 + shrink/2 sum_j (u_j - w_column[j])^2`` with free shared column
weights ``w``. Minimised over ``w`` in closed form
(``w_l = shrink S_l / (l2 + shrink n_l)``, ``S_l`` the sum and ``n_l`` the
number of column ``l``'s entry weights) it is a quadratic in ``u`` alone::

    R(u) = shrink/2 |u|^2 - sum_l g_l/2 S_l^2,   g_l = shrink^2 / (l2 + shrink n_l)

convex (the partial minimum of a convex function; its Hessian
``shrink I - g_l 1 1'`` per column has eigenvalues ``shrink`` and
``shrink l2 / (l2 + shrink n_l) >= 0``), so the variables stay ``u >= 0`` and
every solver solves it unchanged. At ``u_l = c 1`` it is
``l2/2 c^2 * shrink n_l / (l2 + shrink n_l)``, tending to the shared-weight
penalty ``l2/2 c^2`` as ``shrink -> inf``, while a deviation from ``u_l = c 1``
costs ``shrink/2`` times its squared norm: the fit tends to the shared-weight
one. Only the quadratic penalty (``l1 = 0``) has this form: with ``w >= 0`` under an L1 term the
minimum over ``w`` is only piecewise quadratic.

Free weights (zero entries' weights, :mod:`~convexagg.aggregation.entries`): with
entry weights, a weight whose column is ``-1`` is shrunk toward 0, not toward a
shared weight; its
penalty is its own quadratic ``(l2 + free_l2)/2 u^2``, so the Hessian stays
block-diagonal by column with the free weights on the diagonal.

Per-column strengths (``column_l2``, the decoders' ``column_penalty``): an extra,
absolute quadratic term ``1/2 sum_l column_l2[l] w_l^2`` on the shared weights, so
weight ``l``'s quadratic strength is ``l2 + column_l2[l]`` (``l2`` scales with
``alpha``, ``column_l2`` does not). With entry weights it is a term on the shared
column weight ``w_l`` before the minimisation, and the closed form above holds with
``l2 + column_l2[l]`` in place of ``l2``:
``w_l = shrink S_l / (l2 + column_l2[l] + shrink n_l)``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cached_property

import numpy as np

__all__ = ["INTERCEPT_L2_FLOOR", "MAX_ALPHA", "PENALTIES", "Penalty"]

PENALTIES = ("l2", "l1", "elasticnet")

# largest alpha accepted: above about 1e6 the weights are already 0 to working precision,
# and every solver reaches the optimum up to 1e10 for every penalty, where the interior
# point ones stop far from it a few orders beyond (benchmarks/studies/scan_alpha_range.py)
MAX_ALPHA = 1e10

# smallest quadratic penalty on the intercepts (see the module docstring)
INTERCEPT_L2_FLOOR = 1e-6


@dataclass(frozen=True)
class Penalty:
    """``R(w, b) = l2 / 2 |w|^2 + l1 sum(w) + intercept_l2 / 2 |b|^2`` on ``w >= 0``.

    With ``column_l2``, plus ``1/2 sum_l column_l2[l] w_l^2``.

    Every method takes the full variable vector ``x = [w, b]`` with the
    ``n_weights`` weights first; without intercepts ``x = w``.

    Parameters
    ----------
    l2 : float, default=0.0
        Strength of the quadratic term on the weights (the paper's lambda, eq. 12).
    l1 : float, default=0.0
        Strength of the linear term ``sum(w)`` (the L1 norm on ``w >= 0``).
    intercept_l2 : float, default=0.0
        Strength of the quadratic term on the intercepts (:meth:`from_alpha`
        sets it to ``max(l2, 1e-6)``).
    shrink : float, default=inf
        Finite: the weights are entry weights shrunk toward shared column
        weights with this strength, ``> 0`` (see the module docstring); ``l1``
        must then be 0.
    columns : tuple of int, default=None
        With a finite ``shrink``: the code column of each weight; ``-1`` for a
        free weight (a zero entry's), shrunk toward no shared weight and free in
        sign; the free weights come last.
    column_sizes : tuple of int, default=None
        With a finite ``shrink``: the number of weights of each weight's column
        in the whole problem (counted from ``columns`` when None;
        :meth:`restrict` keeps them).
    column_l2 : tuple of float, default=None
        Extra quadratic strength of each shared weight (``>= 0``), one per
        weight, or with a finite ``shrink`` one per code column (indexed by
        ``columns``); None: none.
    free_l2 : float, default=0.0
        Extra quadratic strength of the free weights (``columns`` -1): theirs is
        ``l2 + free_l2``.
    """

    l2: float = 0.0
    l1: float = 0.0
    intercept_l2: float = 0.0
    shrink: float = np.inf
    columns: tuple | None = None
    column_sizes: tuple | None = None
    column_l2: tuple | None = None
    free_l2: float = 0.0

    def __post_init__(self):
        for name in ("l2", "l1", "intercept_l2", "free_l2"):
            value = float(getattr(self, name))
            if not (np.isfinite(value) and value >= 0):
                raise ValueError(f"penalty strength {name} must be finite and >= 0, got {value!r}.")
            object.__setattr__(self, name, value)
        shrink = float(self.shrink)
        if not shrink > 0:
            raise ValueError(f"penalty shrink must be > 0 (inf: shared weights), got {shrink!r}.")
        object.__setattr__(self, "shrink", shrink)
        if self.column_l2 is not None:
            extra = np.asarray(self.column_l2, dtype=np.float64)
            if extra.ndim != 1 or not (np.all(np.isfinite(extra)) and np.all(extra >= 0)):
                raise ValueError(
                    "penalty column_l2 must be a 1-D sequence of finite values >= 0, got "
                    f"{self.column_l2!r}."
                )
            object.__setattr__(self, "column_l2", tuple(float(c) for c in extra))
        if np.isfinite(shrink):
            if self.columns is None:
                raise ValueError("a finite shrink needs columns: the classifier of each weight.")
            if self.l1:
                raise ValueError(
                    "entry weights (a finite shrink) take the quadratic penalty only; got l1="
                    f"{self.l1!r}."
                )
            columns = tuple(int(c) for c in self.columns)
            free = np.asarray(columns) < 0
            if free.any() and not free[int(np.argmax(free)) :].all():
                raise ValueError("the free weights (columns -1) must come after the entry weights.")
            sizes = self.column_sizes
            if sizes is None:  # the sizes of the whole problem (kept by restrict)
                cols = np.asarray(columns, dtype=np.intp)
                counts = np.bincount(cols[cols >= 0], minlength=1)
                sizes = tuple(int(counts[c]) if c >= 0 else 1 for c in cols)
            if len(sizes) != len(columns):
                raise ValueError("column_sizes must have one entry per weight.")
            object.__setattr__(self, "columns", columns)
            object.__setattr__(self, "column_sizes", tuple(int(n) for n in sizes))

    @property
    def n_free(self):
        """The number of free weights (``columns`` -1, the zero entries' sides): they
        come after the entry weights and are free in sign too (the objectives'
        ``n_nonnegative`` leaves them out)."""
        if not self.entry_weights:
            return 0
        return int(np.count_nonzero(np.asarray(self.columns) < 0))

    @property
    def entry_weights(self):
        """Whether the weights are entry weights coupled by column (``shrink`` finite)."""
        return bool(np.isfinite(self.shrink))

    def _coupling(self):
        """``(column of each weight as 0..n_groups-1 (-1: free), g of each group)``."""
        return self._coupled

    @cached_property
    def _coupled(self):
        # computed once per penalty: every product and Hessian of a solve asks for it, and
        # np.unique over the columns' tuple each time showed in the zero entries' choice
        columns = np.asarray(self.columns, dtype=np.intp)
        coupled = columns >= 0
        cols, inverse = np.unique(columns[coupled], return_inverse=True)
        group = np.full(columns.size, -1, dtype=np.intp)
        group[coupled] = inverse
        sizes = np.zeros(cols.size)
        sizes[inverse] = np.asarray(self.column_sizes)[coupled]
        g = self.shrink**2 / (self._column_strength(cols) + self.shrink * sizes)
        group.setflags(write=False)
        g.setflags(write=False)
        return group, g

    def _entry_diagonal(self, group, g):
        """The entry weights' Hessian diagonal: ``shrink - g`` of their column, the free
        weights' ``l2 + free_l2``."""
        coupled = group >= 0
        return np.where(coupled, self.shrink - g[np.maximum(group, 0)], self.l2 + self.free_l2)

    def _column_strength(self, cols):
        """``l2 (+ column_l2[cols])``: the quadratic strength of shared weights ``cols``."""
        if self.column_l2 is None:
            return self.l2
        extra = np.asarray(self.column_l2)
        if cols.size and cols.max() >= extra.size:
            raise ValueError(
                f"penalty column_l2 has {extra.size} entries; weight or column {cols.max()} "
                "has none."
            )
        return self.l2 + extra[cols]

    def _weight_strength(self, n_weights):
        """The quadratic strength of each of ``n_weights`` shared weights."""
        if self.column_l2 is not None and len(self.column_l2) != n_weights:
            raise ValueError(
                f"penalty column_l2 has {len(self.column_l2)} entries for {n_weights} weights."
            )
        return self._column_strength(np.arange(n_weights))

    def _quadratic(self, v, n_weights):
        """``hess R @ v`` on the weights (the part that is not diagonal for entry weights)."""
        w = v[:n_weights]
        if not self.entry_weights:
            return self._weight_strength(n_weights) * w
        group, g = self._coupling()
        coupled = group >= 0
        if coupled.all():
            sums = np.bincount(group, weights=w, minlength=g.size)
            return self.shrink * w - (g * sums)[group]
        sums = np.bincount(group[coupled], weights=w[coupled], minlength=g.size)
        out = (self.l2 + self.free_l2) * w
        out[coupled] = self.shrink * w[coupled] - (g * sums)[group[coupled]]
        return out

    def column_groups(self):
        """The code column of each entry weight, numbered ``0 .. n_groups - 1``.

        Returns
        -------
        groups : ndarray of int, shape (n_weights,)
            The group of each weight (-1: a free weight, in none).
        n_groups : int
            The columns with at least one weight.
        """
        if not self.entry_weights:
            raise ValueError("column_groups needs entry weights (a finite shrink).")
        groups, g = self._coupling()
        return groups, g.size

    def grouped_hessian(self, groups, n_groups, n_weights):
        """``A' R A``: the weights' block of the penalty's Hessian summed over groups.

        ``A[j, groups[j]] = 1`` for each weight ``j`` with ``groups[j] >= 0``; a
        weight with a negative group is left out. The penalty's part of
        :meth:`BlockedObjective.grouped_hessian
        <convexagg.aggregation.BlockedObjective.grouped_hessian>`.

        Parameters
        ----------
        groups : ndarray of int, shape (n_weights,)
            The group of each weight, or a negative number.
        n_groups : int
            Number of groups.
        n_weights : int
            Number of weights.

        Returns
        -------
        H : ndarray of shape (n_groups, n_groups)
            The grouped Hessian.
        """
        groups = np.asarray(groups, dtype=np.intp)
        keep = groups >= 0
        if not self.entry_weights:
            strength = np.broadcast_to(self._weight_strength(n_weights), (n_weights,))
            return np.diag(np.bincount(groups[keep], weights=strength[keep], minlength=n_groups))
        # hess R = shrink I - sum_l g_l 1_l 1_l' (1_l: column l's weights), so
        # A' hess R A = shrink diag(sizes) - C diag(g) C', C[a, l] = weights of l in a
        column, g = self._coupling()
        coupled = keep & (column >= 0)
        pairs = groups[coupled] * g.size + column[coupled]
        counts = np.bincount(pairs, minlength=n_groups * g.size).reshape(n_groups, g.size)
        H = self.shrink * np.diag(counts.sum(axis=1)) - (counts * g) @ counts.T
        free = keep & (column < 0)
        if free.any():
            H[np.diag_indices(n_groups)] += (self.l2 + self.free_l2) * np.bincount(
                groups[free], minlength=n_groups
            )
        return H

    def shared_weights(self, u):
        """The shared column weights ``w`` that minimise the penalty at entry weights ``u``.

        Parameters
        ----------
        u : ndarray of shape (n_weights,)
            Entry weights.

        Returns
        -------
        w : ndarray of shape (n_columns,)
            ``w_l = shrink S_l / (l2 + column_l2[l] + shrink n_l)`` for each column ``l``
            (``n_columns`` is ``max(columns) + 1``; a column without weights gets 0;
            free weights count toward none).
        """
        columns = np.asarray(self.columns, dtype=np.intp)
        n = columns.max(initial=-1) + 1
        coupled = columns >= 0
        columns, u = columns[coupled], np.asarray(u)[coupled]
        sums = np.bincount(columns, weights=u, minlength=n)
        sizes = np.zeros(n)
        sizes[columns] = np.asarray(self.column_sizes)[coupled]
        strength = self._column_strength(np.flatnonzero(sizes > 0))
        w = np.zeros(n)
        w[sizes > 0] = self.shrink * sums[sizes > 0] / (strength + self.shrink * sizes[sizes > 0])
        return w

    def restrict(self, weights):
        """The penalty as a function of the weights ``weights`` alone (the others at 0).

        Parameters
        ----------
        weights : array-like of int
            Indices of weights.

        Returns
        -------
        penalty : Penalty
            Itself for the separable penalties (``column_l2`` taken at those
            weights); for entry weights, the same quadratic form on those
            weights (its block of the Hessian).
        """
        weights = np.asarray(weights, dtype=np.intp)
        if not self.entry_weights:
            if self.column_l2 is None:
                return self
            return replace(self, column_l2=tuple(np.asarray(self.column_l2)[weights]))
        return replace(
            self,
            columns=tuple(np.asarray(self.columns)[weights]),
            column_sizes=tuple(np.asarray(self.column_sizes)[weights]),
        )

    @classmethod
    def from_alpha(
        cls,
        alpha,
        penalty="l2",
        l1_ratio=0.5,
        shrink=np.inf,
        columns=None,
        column_l2=None,
        free_l2=0.0,
    ):
        """Split the total strength ``alpha`` as scikit-learn's elastic net does.

        ``r = 0`` for ``"l2"`` (the paper's ``lambda/2 |w|^2``), ``r = 1`` for
        ``"l1"`` and ``r = l1_ratio`` for ``"elasticnet"``; then
        ``l2 = alpha (1 - r)`` and ``l1 = alpha r``, and the intercepts'
        ``intercept_l2 = max(l2, 1e-6)``.

        Parameters
        ----------
        alpha : float
            Total strength, ``>= 0``.
        penalty : {"l2", "l1", "elasticnet"}, default="l2"
            The kind of penalty.
        l1_ratio : float, default=0.5
            The L1 share for ``"elasticnet"``.
        shrink : float, default=inf
            Entry weights shrunk toward shared column weights with this
            strength (see the module docstring); ``inf``: one weight per column.
        columns : array-like of int, default=None
            With a finite ``shrink``: the column of each entry weight (-1: free).
        column_l2 : array-like of float, default=None
            Extra quadratic strength of each shared weight (code column), not
            scaled by ``alpha``.
        free_l2 : float, default=0.0
            Extra quadratic strength of the free weights, not scaled by ``alpha``.

        Returns
        -------
        penalty : Penalty
            The split penalty.
        """
        if penalty not in PENALTIES:
            raise ValueError(f"penalty must be one of {PENALTIES}, got {penalty!r}.")
        if not 0.0 <= float(alpha) <= MAX_ALPHA:
            raise ValueError(f"alpha must be in [0, {MAX_ALPHA:g}], got {alpha!r}.")
        r = {"l2": 0.0, "l1": 1.0}.get(penalty, l1_ratio)
        if not 0.0 <= r <= 1.0:
            raise ValueError(f"l1_ratio must be in [0, 1], got {r!r}.")
        l2 = float(alpha) * (1.0 - r)
        if shrink is None or not np.isfinite(shrink):
            shrink, columns = np.inf, None
        elif penalty != "l2":
            raise ValueError(
                "entry weights (a finite shrinkage toward the shared weights) take "
                f"penalty='l2' only; got penalty={penalty!r}."
            )
        return cls(
            l2=l2,
            l1=float(alpha) * r,
            intercept_l2=max(l2, INTERCEPT_L2_FLOOR),
            shrink=shrink,
            columns=None if columns is None else tuple(int(c) for c in columns),
            column_l2=None if column_l2 is None else tuple(float(c) for c in column_l2),
            free_l2=free_l2,
        )

    def _diagonal(self, n_weights, n_variables):
        d = np.full(n_variables, self.intercept_l2)
        # entry weights: l2 here, their own diagonal set by the callers
        d[:n_weights] = self.l2 if self.entry_weights else self._weight_strength(n_weights)
        return d

    def value(self, x, n_weights):
        """Evaluate ``R(x)``.

        Parameters
        ----------
        x : ndarray of shape (n_variables,)
            Weights, then intercepts.
        n_weights : int
            Number of weights (the first entries of ``x``).

        Returns
        -------
        value : float
            The penalty.
        """
        w, b = x[:n_weights], x[n_weights:]
        # the shared-weight form keeps its own arithmetic, so that the paper's
        # reproduction is the same to the last bit
        quadratic = float(w @ self._quadratic(x, n_weights)) if self.entry_weights else None
        value = (
            (0.5 * self.l2 * float(w @ w) if quadratic is None else 0.5 * quadratic)
            + self.l1 * float(np.sum(w))
            + 0.5 * (self.intercept_l2 * float(b @ b))
        )
        if self.column_l2 is not None and not self.entry_weights:
            self._weight_strength(n_weights)  # checks the length
            value += 0.5 * float(w @ (np.asarray(self.column_l2) * w))
        return value

    def grad(self, x, n_weights):
        """Gradient of ``R`` at ``x``.

        Parameters
        ----------
        x : ndarray of shape (n_variables,)
            Weights, then intercepts.
        n_weights : int
            Number of weights (the first entries of ``x``).

        Returns
        -------
        grad : ndarray of shape (n_variables,)
            The gradient.
        """
        g = self.hessp(x, n_weights)
        g[:n_weights] += self.l1
        return g

    def hess_diag(self, n_weights, n_variables):
        """The (diagonal) Hessian of ``R``.

        Parameters
        ----------
        n_weights : int
            Number of weights.
        n_variables : int
            Number of variables (weights, then intercepts).

        Returns
        -------
        diagonal : ndarray of shape (n_variables,)
            The Hessian's diagonal.
        """
        d = self._diagonal(n_weights, n_variables)
        if self.entry_weights:
            d[:n_weights] = self._entry_diagonal(*self._coupling())
        return d

    def hessp(self, v, n_weights):
        """``hess R @ v`` (the linear term has no curvature).

        Parameters
        ----------
        v : ndarray of shape (n_variables,)
            The vector.
        n_weights : int
            Number of weights (the first entries of ``v``).

        Returns
        -------
        Hv : ndarray of shape (n_variables,)
            The product.
        """
        Hv = self._diagonal(n_weights, v.size) * v
        Hv[:n_weights] = self._quadratic(v, n_weights)
        return Hv

    def add_to_hessian(self, H, n_weights):
        """Add ``hess R`` to the dense Hessian ``H`` in place.

        Parameters
        ----------
        H : ndarray of shape (n_variables, n_variables)
            A dense Hessian.
        n_weights : int
            Number of weights (the first rows and columns of ``H``).

        Returns
        -------
        H : ndarray of shape (n_variables, n_variables)
            ``H`` itself.
        """
        if self.entry_weights:
            rows, cols, g = self._coupled_pairs
            H[rows, cols] -= g
        H[np.diag_indices_from(H)] += self._diagonal(n_weights, H.shape[0])
        if self.entry_weights:
            coupled = self._coupling()[0] >= 0
            H[np.diag_indices(n_weights)] += np.where(coupled, self.shrink - self.l2, self.free_l2)
        return H

    @cached_property
    def _coupled_pairs(self):
        # ``(rows, cols, g)``: the pairs of entry weights of one column and their ``g``,
        # the only entries of the coupling ``-g`` off zero. Subtracting them alone is the
        # dense subtraction of zeros elsewhere to the bit, without an M x M mask per
        # Hessian
        group, g = self._coupling()
        members = [np.flatnonzero(group == j) for j in range(g.size)]
        rows = np.concatenate([np.repeat(m, m.size) for m in members] or [np.zeros(0, np.intp)])
        cols = np.concatenate([np.tile(m, m.size) for m in members] or [np.zeros(0, np.intp)])
        return rows, cols, g[group[rows]]
