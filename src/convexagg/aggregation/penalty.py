"""The penalty on the aggregation variables, one object for every objective.

A :class:`Penalty` is a sum of terms (:mod:`~convexagg.aggregation.penalty_terms`),
each a convex function of the weights ``w`` or of the class intercepts ``b``:

* :class:`~convexagg.aggregation.penalty_terms.Ridge` ``l2/2 |w|^2`` and
  :class:`~convexagg.aggregation.penalty_terms.L1` ``l1 sum(w)``: on ``w >= 0``
  the penalty of scikit-learn's elastic net,
  ``alpha * (r * |w|_1 + (1 - r) / 2 * |w|_2^2)``, is a quadratic plus a linear
  term, so every solver of the likelihood solves the L1 and elastic-net
  variants unchanged;
* :class:`~convexagg.aggregation.penalty_terms.InterceptRidge`
  ``intercept_l2/2 |b|^2`` (``fit_intercept=True``), with ``intercept_l2 =
  max(l2, 1e-6)``: the weights' strength, with a floor for ``alpha = 0`` and
  the pure L1 penalty;
* :class:`~convexagg.aggregation.penalty_terms.ColumnRidge` (the decoders'
  ``column_penalty``) and, for entry weights,
  :class:`~convexagg.aggregation.penalty_terms.EntryShrinkage` in place of the
  ridge (the decoders' ``entry_weight_shrinkage`` and ``zero_entry_penalty``).

The objectives ask the sum for its value, gradient, Hessian-vector product,
Hessian diagonal and dense Hessian; it asks each term for its part.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .penalty_terms import (
    L1,
    ColumnRidge,
    EntryShrinkage,
    InterceptRidge,
    PenaltyTerm,
    Ridge,
)

__all__ = ["INTERCEPT_L2_FLOOR", "MAX_ALPHA", "PENALTIES", "Penalty"]

PENALTIES = ("l2", "l1", "elasticnet")

# largest alpha accepted: above about 1e6 the weights are already 0 to working precision,
# and every solver reaches the optimum up to 1e10 for every penalty, where the interior
# point ones stop far from it a few orders beyond (benchmarks/studies/scan_alpha_range.py)
MAX_ALPHA = 1e10

# smallest quadratic penalty on the intercepts (see the module docstring)
INTERCEPT_L2_FLOOR = 1e-6

_BLOCKS = ("weights", "intercepts")


@dataclass(frozen=True, init=False)
class Penalty:
    """A sum of penalty terms on ``x = [w, b]``; by default ``R(w, b) = l2 / 2 |w|^2 +
    l1 sum(w) + intercept_l2 / 2 |b|^2`` on ``w >= 0``.

    With ``column_l2``, plus ``1/2 sum_l column_l2[l] w_l^2``. Any other sum of
    terms (entry weights: :class:`~convexagg.aggregation.penalty_terms.EntryShrinkage`)
    is built by :meth:`from_terms` (or :meth:`from_alpha`, the decoders' way).

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
    column_l2 : tuple of float, default=None
        Extra quadratic strength of each weight (``>= 0``), one per weight;
        None: none.

    Attributes
    ----------
    terms : tuple of PenaltyTerm
        The terms, summed in this order.
    """

    terms: tuple

    def __init__(self, l2=0.0, l1=0.0, intercept_l2=0.0, *, column_l2=None):
        terms = [Ridge(l2), L1(l1), InterceptRidge(intercept_l2)]
        if column_l2 is not None:
            terms.append(ColumnRidge(column_l2))
        self._set_terms(terms)

    @classmethod
    def from_terms(cls, *terms):
        """The sum of ``terms``.

        Parameters
        ----------
        *terms : PenaltyTerm
            The terms (:mod:`~convexagg.aggregation.penalty_terms`), summed in
            this order; at most one of them coupled.

        Returns
        -------
        penalty : Penalty
            Their sum.
        """
        penalty = object.__new__(cls)
        penalty._set_terms(terms)
        return penalty

    def _set_terms(self, terms):
        terms = tuple(terms)
        for term in terms:
            if not isinstance(term, PenaltyTerm) or term.block not in _BLOCKS:
                raise TypeError(f"a penalty term must be a PenaltyTerm, got {term!r}.")
        coupled = [t for t in terms if not t.separable]
        if len(coupled) > 1:
            raise ValueError(f"a penalty takes one coupled term, got {len(coupled)}.")
        l1 = sum(t.l1 for t in terms)
        if coupled and l1:
            raise ValueError(
                f"entry weights (a finite shrink) take the quadratic penalty only; got l1={l1!r}."
            )
        object.__setattr__(self, "terms", terms)

    # -- what the solvers read ----------------------------------------------------------------

    @property
    def l2(self):
        """The weights' quadratic strength (``column_l2`` aside)."""
        return float(sum(t.l2 for t in self.terms))

    @property
    def l1(self):
        """The strength of the linear term ``sum(w)``."""
        return float(sum(t.l1 for t in self.terms))

    @property
    def intercept_l2(self):
        """The intercepts' quadratic strength."""
        return float(sum(t.intercept_l2 for t in self.terms))

    @property
    def n_free(self):
        """The number of free weights (the zero entries' sides): they come after the entry
        weights and are free in sign too (the objectives' ``n_nonnegative`` leaves them
        out)."""
        return sum(t.n_free for t in self.terms)

    @property
    def entry_weights(self):
        """Whether the weights are entry weights coupled by column (an
        :class:`~convexagg.aggregation.penalty_terms.EntryShrinkage` term)."""
        return any(isinstance(t, EntryShrinkage) for t in self.terms)

    def _entry_term(self, needed_by):
        for term in self.terms:
            if isinstance(term, EntryShrinkage):
                return term
        raise ValueError(f"{needed_by} needs entry weights (a finite shrink).")

    def column_groups(self):
        """The code column of each entry weight, numbered ``0 .. n_groups - 1``.

        Returns
        -------
        groups : ndarray of int, shape (n_weights,)
            The group of each weight (-1: a free weight, in none).
        n_groups : int
            The columns with at least one weight.
        """
        return self._entry_term("column_groups").column_groups()

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
        return self._entry_term("shared_weights").shared_weights(u)

    # -- the parts of the sum, block by block -------------------------------------------------

    def _split(self, x, n_weights):
        return {"weights": x[:n_weights], "intercepts": x[n_weights:]}

    def _curvature(self, block, n):
        """The summed Hessian diagonals of the separable terms on ``block`` (None: none)."""
        total = None
        for term in self.terms:
            if term.block == block and term.separable:
                c = term.curvature(n)
                if c is not None:
                    total = c if total is None else total + c
        return total

    def _coupled(self, block):
        return [t for t in self.terms if t.block == block and not t.separable]

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
            The penalty: the terms' values added in their order.
        """
        blocks = self._split(x, n_weights)
        return float(sum(term.value(blocks[term.block]) for term in self.terms))

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
        blocks = self._split(g, n_weights)
        for term in self.terms:
            slope = term.slope() if term.separable else None
            if slope is not None:
                blocks[term.block] += slope
        return g

    def hess_diag(self, n_weights, n_variables):
        """The Hessian's diagonal of ``R``.

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
        parts = []
        for block, n in zip(_BLOCKS, (n_weights, n_variables - n_weights)):
            d = self._curvature(block, n)
            diagonal = None if d is None else np.full(n, d, dtype=np.float64)
            for term in self._coupled(block):
                part = term.hess_diag(n)
                diagonal = part if diagonal is None else diagonal + part
            parts.append(np.zeros(n) if diagonal is None else diagonal)
        return np.concatenate(parts)

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
        parts = []
        for block, z in self._split(v, n_weights).items():
            d = self._curvature(block, z.size)
            product = None if d is None else d * z
            for term in self._coupled(block):
                part = term.hessp(z)
                product = part if product is None else product + part
            parts.append(np.zeros(z.shape) if product is None else product)
        return np.concatenate(parts)

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
        n_variables = H.shape[0]
        views = {"weights": H[:n_weights, :n_weights], "intercepts": H[n_weights:, n_weights:]}
        for block, n in zip(_BLOCKS, (n_weights, n_variables - n_weights)):
            for term in self._coupled(block):
                term.add_to_hessian(views[block])
            d = self._curvature(block, n)
            if d is not None:
                views[block][np.diag_indices(n)] += d
        return H

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
        H = None
        d = self._curvature("weights", n_weights)
        if d is not None:
            strength = np.broadcast_to(d, (n_weights,))
            H = np.diag(np.bincount(groups[keep], weights=strength[keep], minlength=n_groups))
        for term in self._coupled("weights"):
            part = term.grouped_hessian(groups, n_groups)
            H = part if H is None else H + part
        return np.zeros((n_groups, n_groups)) if H is None else H

    def restrict(self, weights):
        """The penalty as a function of the weights ``weights`` alone (the others at 0).

        Parameters
        ----------
        weights : array-like of int
            Indices of weights.

        Returns
        -------
        penalty : Penalty
            Each term restricted to those weights: ``column_l2`` taken at them;
            for entry weights, the same quadratic form on them (its block of the
            Hessian).
        """
        weights = np.asarray(weights, dtype=np.intp)
        return Penalty.from_terms(
            *(t.restrict(weights) if t.block == "weights" else t for t in self.terms)
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
            strength (:class:`~convexagg.aggregation.penalty_terms.EntryShrinkage`
            in place of the ridge); ``inf``: one weight per column.
        columns : array-like of int, default=None
            With a finite ``shrink``: the column of each entry weight (-1: free).
        column_l2 : array-like of float, default=None
            Extra quadratic strength of each shared weight (code column), not
            scaled by ``alpha``.
        free_l2 : float, default=0.0
            With a finite ``shrink``: extra quadratic strength of the free
            weights, not scaled by ``alpha``.

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
        l2, l1 = float(alpha) * (1.0 - r), float(alpha) * r
        intercept_l2 = max(l2, INTERCEPT_L2_FLOOR)
        if shrink is None or not np.isfinite(shrink):
            return cls(l2, l1, intercept_l2, column_l2=column_l2)
        if penalty != "l2":
            raise ValueError(
                "entry weights (a finite shrinkage toward the shared weights) take "
                f"penalty='l2' only; got penalty={penalty!r}."
            )
        shrinkage = EntryShrinkage(
            shrink=shrink,
            columns=columns,
            l2=l2,
            column_l2=column_l2,
            free_l2=free_l2,
        )
        return cls.from_terms(shrinkage, L1(l1), InterceptRidge(intercept_l2))
