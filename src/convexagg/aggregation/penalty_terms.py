"""The terms a :class:`~convexagg.aggregation.Penalty` is the sum of.

Each term is a small convex function of one block of the variables -- the
weights ``w`` (first) or the class intercepts ``b`` -- with what the objectives
ask of it, as a penalty of skglm offers what its solvers ask:

* a **separable** term (:class:`Ridge`, :class:`ColumnRidge`, :class:`L1`,
  :class:`InterceptRidge`) gives its ``value``, its Hessian's diagonal
  (``curvature``: a strength, or one per variable; None without a quadratic
  part) and its gradient at 0 (``slope``: the linear part, None without one).
  The penalty sums the curvatures of a block before it multiplies, so that
  ``l2 + column_l2[l]`` is one strength per weight;
* a **coupled** term (:class:`EntryShrinkage`) gives its ``value``, ``hessp``,
  ``hess_diag``, ``add_to_hessian`` and ``grouped_hessian`` on its block itself.

Every term also gives ``restrict(weights)``: the same term as a function of
those weights alone (the blocked objective's Hessian block on them). On
``w >= 0`` the L1 norm is the linear term ``sum(w)``, so the L1 and
elastic-net penalties are a quadratic plus a linear term, which every solver of
the likelihood solves unchanged.

**Entry weights** (:class:`EntryShrinkage`, see
:mod:`~convexagg.aggregation.entries`): the variables are one weight ``u_j`` per
nonzero code entry, ``column[j]`` the classifier of entry ``j``, and the model's
penalty is ``l2/2 |w|^2 + shrink/2 sum_j (u_j - w_column[j])^2`` with free
shared column weights ``w``. Minimised over ``w`` in closed form
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
one. Only the quadratic penalty has this form: with ``w >= 0`` under an L1 term
the minimum over ``w`` is only piecewise quadratic.

Free weights (the zero entries' weights, :mod:`~convexagg.aggregation.entries`)
are shrunk toward 0, not toward a shared weight: a weight of column ``-1``
has its own quadratic ``(l2 + free_l2)/2 u^2``, so the Hessian stays
block-diagonal by column with the free weights on the diagonal.

Per-column strengths (the decoders' ``column_penalty``) are an absolute
quadratic ``1/2 sum_l column_l2[l] w_l^2`` on the shared weights
(:class:`ColumnRidge`; ``l2`` scales with ``alpha``, ``column_l2`` does not).
With entry weights they are a term on the shared column weight ``w_l`` before
the minimisation, and the closed form above holds with ``l2 + column_l2[l]`` in
place of ``l2``: ``w_l = shrink S_l / (l2 + column_l2[l] + shrink n_l)``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cached_property

import numpy as np

__all__ = ["ColumnRidge", "EntryShrinkage", "InterceptRidge", "L1", "PenaltyTerm", "Ridge"]


def _strength(name, value):
    """``value`` as a float, checked finite and ``>= 0``."""
    value = float(value)
    if not (np.isfinite(value) and value >= 0):
        raise ValueError(f"penalty strength {name} must be finite and >= 0, got {value!r}.")
    return value


def _column_strengths(column_l2):
    """``column_l2`` as a tuple of floats, checked 1-D, finite and ``>= 0``."""
    extra = np.asarray(column_l2, dtype=np.float64)
    if extra.ndim != 1 or not (np.all(np.isfinite(extra)) and np.all(extra >= 0)):
        raise ValueError(
            f"penalty column_l2 must be a 1-D sequence of finite values >= 0, got {column_l2!r}."
        )
    return tuple(float(c) for c in extra)


class PenaltyTerm:
    """A term of a :class:`~convexagg.aggregation.Penalty`: a convex function of one block.

    A subclass sets ``block`` (``"weights"`` or ``"intercepts"``) and defines
    ``value``; a separable one ``curvature`` and ``slope``, a coupled one
    (``separable = False``) ``hessp``, ``hess_diag``, ``add_to_hessian`` and
    ``grouped_hessian``. ``l2``, ``l1`` and ``intercept_l2`` are the strengths
    the term reports to the solvers (0 unless it sets them); ``n_free`` counts
    its weights free in sign.
    """

    block = "weights"
    separable = True
    l2 = 0.0
    l1 = 0.0
    intercept_l2 = 0.0
    n_free = 0

    def value(self, z):
        """The term at ``z``.

        Parameters
        ----------
        z : ndarray of shape (n,)
            The term's block of the variables.

        Returns
        -------
        value : float
            The term's value.
        """
        raise NotImplementedError

    def curvature(self, n):
        """The Hessian's diagonal of a separable term (None: no quadratic part).

        Parameters
        ----------
        n : int
            Number of variables of the block.

        Returns
        -------
        curvature : float or ndarray of shape (n,) or None
            One strength, or one per variable.
        """
        return None

    def slope(self):
        """The gradient of a separable term's linear part (None: no linear part).

        Returns
        -------
        slope : float or None
            The same for every variable of the block.
        """
        return None

    def restrict(self, weights):
        """The term as a function of the weights ``weights`` alone (the others at 0).

        Parameters
        ----------
        weights : ndarray of int
            Indices of weights.

        Returns
        -------
        term : PenaltyTerm
            Itself unless it depends on which weights they are.
        """
        return self


@dataclass(frozen=True)
class Ridge(PenaltyTerm):
    """``l2 / 2 |w|^2`` on the weights (the paper's lambda, eq. 12).

    Parameters
    ----------
    l2 : float, default=0.0
        The strength, ``>= 0``.
    """

    l2: float = 0.0

    def __post_init__(self):
        object.__setattr__(self, "l2", _strength("l2", self.l2))

    def value(self, z):
        """The term at ``z``.

        Parameters
        ----------
        z : ndarray of shape (n_weights,)
            The weights.

        Returns
        -------
        value : float
            ``l2 / 2 |z|^2``.
        """
        return 0.5 * self.l2 * float(z @ z)

    def curvature(self, n):
        """The Hessian's diagonal.

        Parameters
        ----------
        n : int
            Number of weights.

        Returns
        -------
        curvature : float
            ``l2``.
        """
        return self.l2


@dataclass(frozen=True)
class ColumnRidge(PenaltyTerm):
    """``1/2 sum_l column_l2[l] w_l^2``: an absolute strength per weight.

    The decoders' ``column_penalty`` on shared weights (one weight per code
    column); it does not scale with ``alpha``.

    Parameters
    ----------
    column_l2 : tuple of float
        The strength of each weight, ``>= 0``.
    """

    column_l2: tuple

    def __post_init__(self):
        object.__setattr__(self, "column_l2", _column_strengths(self.column_l2))

    def _strengths(self, n):
        if len(self.column_l2) != n:
            raise ValueError(
                f"penalty column_l2 has {len(self.column_l2)} entries for {n} weights."
            )
        return np.asarray(self.column_l2)

    def value(self, z):
        """The term at ``z``.

        Parameters
        ----------
        z : ndarray of shape (n_weights,)
            The weights, one per entry of ``column_l2``.

        Returns
        -------
        value : float
            ``1/2 sum_l column_l2[l] z_l^2``.
        """
        return 0.5 * float(z @ (self._strengths(z.size) * z))

    def curvature(self, n):
        """The Hessian's diagonal.

        Parameters
        ----------
        n : int
            Number of weights (the length of ``column_l2``).

        Returns
        -------
        curvature : ndarray of shape (n,)
            ``column_l2``.
        """
        return self._strengths(n)

    def restrict(self, weights):
        """The term on the weights ``weights`` alone.

        Parameters
        ----------
        weights : ndarray of int
            Indices of weights.

        Returns
        -------
        term : ColumnRidge
            Their strengths.
        """
        return ColumnRidge(tuple(np.asarray(self.column_l2)[weights]))


@dataclass(frozen=True)
class L1(PenaltyTerm):
    """``l1 sum(w)``: the L1 norm of the weights on ``w >= 0``, a linear term.

    Parameters
    ----------
    l1 : float, default=0.0
        The strength, ``>= 0``.
    """

    l1: float = 0.0

    def __post_init__(self):
        object.__setattr__(self, "l1", _strength("l1", self.l1))

    def value(self, z):
        """The term at ``z``.

        Parameters
        ----------
        z : ndarray of shape (n_weights,)
            The weights.

        Returns
        -------
        value : float
            ``l1 sum(z)``.
        """
        return self.l1 * float(np.sum(z))

    def slope(self):
        """The gradient.

        Returns
        -------
        slope : float
            ``l1`` (no curvature).
        """
        return self.l1


@dataclass(frozen=True)
class InterceptRidge(PenaltyTerm):
    """``intercept_l2 / 2 |b|^2`` on the class intercepts.

    The softmax is invariant to adding one constant to every ``b_k``; this term
    makes the intercepts unique (it picks ``sum(b) = 0``) and finite even for a
    class absent from the training outputs.

    Parameters
    ----------
    intercept_l2 : float, default=0.0
        The strength, ``>= 0``.
    """

    block = "intercepts"

    intercept_l2: float = 0.0

    def __post_init__(self):
        object.__setattr__(self, "intercept_l2", _strength("intercept_l2", self.intercept_l2))

    def value(self, z):
        """The term at ``z``.

        Parameters
        ----------
        z : ndarray of shape (n_intercepts,)
            The intercepts.

        Returns
        -------
        value : float
            ``intercept_l2 / 2 |z|^2``.
        """
        return 0.5 * (self.intercept_l2 * float(z @ z))

    def curvature(self, n):
        """The Hessian's diagonal.

        Parameters
        ----------
        n : int
            Number of intercepts.

        Returns
        -------
        curvature : float
            ``intercept_l2``.
        """
        return self.intercept_l2


@dataclass(frozen=True, kw_only=True)
class EntryShrinkage(PenaltyTerm):
    """Entry weights shrunk toward shared column weights, minimised over those.

    ``R(u) = shrink/2 |u|^2 - sum_l g_l/2 S_l^2`` on the entry weights ``u``
    (see the module docstring), plus ``(l2 + free_l2)/2 u_j^2`` on the free
    weights (``columns`` -1).

    Parameters
    ----------
    shrink : float
        The shrinkage toward the shared weights, ``> 0`` and finite.
    columns : tuple of int
        The code column of each weight; ``-1`` for a free weight (a zero
        entry's), shrunk toward no shared weight and free in sign. The free
        weights come last.
    l2 : float, default=0.0
        The shared weights' quadratic strength.
    column_l2 : tuple of float, default=None
        Extra quadratic strength of each shared weight, one per code column
        (indexed by ``columns``); None: none.
    free_l2 : float, default=0.0
        Extra quadratic strength of the free weights: theirs is ``l2 + free_l2``.
    column_sizes : tuple of int, default=None
        The number of weights of each weight's column in the whole problem
        (counted from ``columns`` when None; :meth:`restrict` keeps them).
    """

    separable = False

    shrink: float
    columns: tuple
    l2: float = 0.0
    column_l2: tuple | None = None
    free_l2: float = 0.0
    column_sizes: tuple | None = None

    def __post_init__(self):
        for name in ("l2", "free_l2"):
            object.__setattr__(self, name, _strength(name, getattr(self, name)))
        shrink = float(self.shrink)
        if not (shrink > 0 and np.isfinite(shrink)):
            raise ValueError(
                f"penalty shrink must be > 0 and finite (shared weights: no EntryShrinkage), "
                f"got {shrink!r}."
            )
        object.__setattr__(self, "shrink", shrink)
        if self.column_l2 is not None:
            object.__setattr__(self, "column_l2", _column_strengths(self.column_l2))
        if self.columns is None:
            raise ValueError("a finite shrink needs columns: the classifier of each weight.")
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
        """The number of free weights (``columns`` -1, the zero entries' sides)."""
        return int(np.count_nonzero(np.asarray(self.columns) < 0))

    @cached_property
    def _coupled(self):
        # ``(column of each weight as 0..n_groups-1 (-1: free), g of each group)``, computed
        # once per term: every product and Hessian of a solve asks for it
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

    @cached_property
    def _coupled_pairs(self):
        # ``(rows, cols, g)``: the pairs of entry weights of one column and their ``g``,
        # the only entries of the coupling ``-g`` off zero. Subtracting them alone is the
        # dense subtraction of zeros elsewhere to the bit, without an M x M mask per
        # Hessian
        group, g = self._coupled
        members = [np.flatnonzero(group == j) for j in range(g.size)]
        rows = np.concatenate([np.repeat(m, m.size) for m in members] or [np.zeros(0, np.intp)])
        cols = np.concatenate([np.tile(m, m.size) for m in members] or [np.zeros(0, np.intp)])
        return rows, cols, g[group[rows]]

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

    def value(self, z):
        """The term at ``z``.

        Parameters
        ----------
        z : ndarray of shape (n_weights,)
            The entry weights, then the free weights.

        Returns
        -------
        value : float
            ``R(z)``.
        """
        return 0.5 * float(z @ self.hessp(z))

    def hessp(self, z):
        """``hess R @ z``.

        Parameters
        ----------
        z : ndarray of shape (n_weights,)
            The vector.

        Returns
        -------
        Hz : ndarray of shape (n_weights,)
            The product.
        """
        group, g = self._coupled
        coupled = group >= 0
        if coupled.all():
            sums = np.bincount(group, weights=z, minlength=g.size)
            return self.shrink * z - (g * sums)[group]
        sums = np.bincount(group[coupled], weights=z[coupled], minlength=g.size)
        out = (self.l2 + self.free_l2) * z
        out[coupled] = self.shrink * z[coupled] - (g * sums)[group[coupled]]
        return out

    def hess_diag(self, n):
        """The Hessian's diagonal.

        Parameters
        ----------
        n : int
            Number of weights (the length of ``columns``).

        Returns
        -------
        diagonal : ndarray of shape (n,)
            ``shrink - g`` of each entry weight's column, ``l2 + free_l2`` of the
            free weights.
        """
        group, g = self._coupled
        coupled = group >= 0
        return np.where(coupled, self.shrink - g[np.maximum(group, 0)], self.l2 + self.free_l2)

    def add_to_hessian(self, H):
        """Add ``hess R`` to the weights' block ``H`` of a dense Hessian, in place.

        Parameters
        ----------
        H : ndarray of shape (n_weights, n_weights)
            The block (a view of the Hessian).
        """
        rows, cols, g = self._coupled_pairs
        H[rows, cols] -= g
        # the diagonal: l2, then what the term adds to it (shrink - l2 on an entry
        # weight, free_l2 on a free one)
        diagonal = np.diag_indices(H.shape[0])
        H[diagonal] += self.l2
        H[diagonal] += np.where(self._coupled[0] >= 0, self.shrink - self.l2, self.free_l2)

    def grouped_hessian(self, groups, n_groups):
        """``A' hess R A``: the Hessian summed over groups of weights.

        Parameters
        ----------
        groups : ndarray of int, shape (n_weights,)
            The group of each weight, or a negative number (left out).
        n_groups : int
            Number of groups.

        Returns
        -------
        H : ndarray of shape (n_groups, n_groups)
            The grouped Hessian.
        """
        keep = groups >= 0
        # hess R = shrink I - sum_l g_l 1_l 1_l' (1_l: column l's weights), so
        # A' hess R A = shrink diag(sizes) - C diag(g) C', C[a, l] = weights of l in a
        column, g = self._coupled
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

    def column_groups(self):
        """The code column of each entry weight, numbered ``0 .. n_groups - 1``.

        Returns
        -------
        groups : ndarray of int, shape (n_weights,)
            The group of each weight (-1: a free weight, in none).
        n_groups : int
            The columns with at least one weight.
        """
        groups, g = self._coupled
        return groups, g.size

    def shared_weights(self, u):
        """The shared column weights ``w`` that minimise the term at entry weights ``u``.

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
        """The same quadratic form on the weights ``weights`` (its block of the Hessian).

        Parameters
        ----------
        weights : ndarray of int
            Indices of weights.

        Returns
        -------
        term : EntryShrinkage
            Their columns, with the column sizes of the whole problem.
        """
        return replace(
            self,
            columns=tuple(np.asarray(self.columns)[weights]),
            column_sizes=tuple(np.asarray(self.column_sizes)[weights]),
        )
