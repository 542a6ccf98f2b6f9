"""A projected Newton method for ``min f(x) s.t. w >= 0``: no barrier, zeros exact.

Bertsekas' projected Newton method (*Projected Newton methods for optimization
problems with simple constraints*, SIAM J. Control Optim. 20, 1982) with
inexact Newton steps (Nocedal & Wright, *Numerical Optimization*, 2nd ed.,
section 7.1). Each iteration, at ``x = [w, b]`` with gradient ``g``:

1. the projected gradient ``pg = [w - max(w - g_w, 0), g_b]``; stop when
   ``|pg| <= tol`` (the first-order conditions of the bound-constrained problem);
2. the *epsilon-active* weights ``A = {l : w_l <= eps, g_l > 0}`` with
   ``eps = min(1e-3, |pg|)`` -- the weights the step holds at zero -- and the
   free variables ``F`` (every intercept is free);
3. the Newton step on ``F``: ``H_FF d_F = -g_F``, solved from the Hessian's
   block on ``F`` and a Cholesky factorisation (``direct``), or by PCG on
   Hessian-vector products (``cg``) to the forcing term
   ``min(0.5, sqrt|pg|) |g_F|``, which makes the steps superlinear; on ``A``
   the step to zero, ``d_A = -w_A``;
4. an Armijo backtracking search along the projection arc
   ``x(s) = [max(w + s d_w, 0), b + s d_b]``:
   ``f(x(s)) <= f(x) + 1e-4 g'(x(s) - x)``.

When the last step was cut short (``s < 1``: the projection moved the point
far from where the Newton model pointed, which happens while many weights are
still travelling to zero), the next iteration first finds the *Cauchy point*
of the quadratic model along the projected gradient path ``P(x - t g)``
(backtracking on ``t`` from the unconstrained Cauchy step, two or three
Hessian-vector products), takes the variables at zero there as held, and
makes the Newton step on the remaining face from the Cauchy point, with the
model's gradient there: the gradient projection and conjugate gradient
iteration of Moré & Toraldo (*On the solution of large quadratic programming
problems with bound constraints*, SIAM J. Optim. 1, 1991). A projected
gradient path can zero hundreds of weights in one step where the
epsilon-active set moves them a few at a time: on the complete code for 11
classes (1,023 weights, 973 zero at the optimum) it halves the iterations;
where the Newton steps are full (letter one-vs-one) it is never used.

Why not the interior point: a weight at zero is a zero here, not a barrier
term to be driven down over many iterations, and the steps near the optimum
are plain Newton steps on the free weights, so the method converges
quadratically once the zero weights are identified (Bertsekas, Prop. 2).

Which Newton system (``newton="auto"``, chosen anew each iteration because the
free set shrinks as weights reach zero): the block ``H_FF`` costs about
``n |F|^2`` multiply-adds (:meth:`BlockedObjective.hessian
<convexagg.aggregation.BlockedObjective.hessian>` with ``variables``), PCG a
few Hessian-vector products of ``O(n nnz)`` each. Up to
:data:`FRESH_BUDGET` and :data:`DENSE_MAX_FREE` free variables the block is
formed and factorised every iteration (``"direct"``). On at most
``subsample_rows`` samples the whole Hessian's factorisation is kept as the
preconditioner of PCG on the current Hessian (``"lagged"``) where a direct
step would form a block every iteration, or once PCG without it has spent as
many products as it costs (a rent-or-buy rule: its price is its multiply-adds
over :data:`FACTOR_SPEEDUP` products'); it is formed anew only after a PCG of
more than :data:`LAGGED_PRODUCTS` products, and handed, with the products
spent, to a solve warm-started from this one (:class:`NewtonMatrix`). The
problems with many weights free in sign (the zero entries', nearly collinear)
that need hundreds of products a solve with the diagonal then need tens, at one
or two factorisations a solve, where well-conditioned ones keep the diagonal. Up to
:data:`DIRECT_BUDGET` and :data:`DENSE_MAX_FREE` free variables (the block's
per-class parts take ``sum_k |F_k|^2`` floats) the block is formed and
factorised every iteration where none is kept (more samples, more than
:data:`LAGGED_MAX_VARIABLES` variables); above, PCG with a
preconditioner: ``"subsample"``, the same block on every k-th of about
``subsample_rows`` samples in single precision (``objective.take``) -- a
sub-sampled Newton matrix (Byrd, Chin, Neveitt & Nocedal, SIAM J. Optim. 21,
2011) used, as they suggest, inside CG on the exact Hessian, so its error
costs CG iterations, never accuracy -- for up to :data:`DENSE_MAX_FREE` free
variables, and the Hessian's diagonal beyond (no ``|F| x |F|`` matrix). Entry
weights beyond it (one weight per nonzero code entry) get ``"columns"``: the
subsample's diagonal plus a coarse correction by the Hessian of the shared
column weights, which moves a column's entries together (a two-level additive
Schwarz preconditioner, ``_NewtonStep._columns_preconditioner``) -- unless the
objective has weights free in sign (the zero entries'), which have no column:
then the diagonal.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from .contract import n_nonnegative
from .linalg import SymmetricSolver, pcg
from .result import History, check_start, finish, finite

__all__ = ["DENSE_MAX_FREE", "DIRECT_BUDGET", "NewtonMatrix", "projected_newton"]

HISTORY_KEYS = (
    "objective",
    "projected_gradient",
    "step",
    "cg_iter",
    "n_active",
    "newton",
    "weights",
)

WHY = {
    "max_iter": "increase max_iter or tol",
    "line_search": (
        "no step decreased the objective further (the tolerance may be below what "
        "floating point resolves for this problem); increase tol or alpha"
    ),
    "nonfinite_direction": (
        "the Newton direction was not finite (ill-conditioned Hessian); increase alpha"
    ),
}

# weights this close to 0 with a positive gradient are held at 0 (times |pg|)
_EPS_ACTIVE = 1e-3
# newton="auto": the Hessian block of the free variables is formed when n |F|^2 is
# at most this (multiply-adds), and PCG's subsample preconditioner is used up to
# DENSE_MAX_FREE free variables, beyond which a dense Newton system no longer pays
# (BENCHMARKS.md, "Where the default is not the fastest")
DIRECT_BUDGET = 3e8
DENSE_MAX_FREE = 700
# newton="auto" on at most subsample_rows samples and LAGGED_MAX_VARIABLES variables
# (a Hessian and its factor of 32 MB each), above FRESH_BUDGET (n |F|^2): a factorised
# Hessian is kept along the solve loop as PCG's preconditioner ("lagged") where a direct
# step would form one every iteration, or once PCG without one has spent the products
# one costs (its multiply-adds over FACTOR_SPEEDUP, the speed of level-3 BLAS against a
# product's passes); formed anew after a PCG of more than LAGGED_PRODUCTS products
# (BENCHMARKS.md, "Where the zero entries' choice spends its time")
FRESH_BUDGET = 3e7
LAGGED_MAX_VARIABLES = 2000
FACTOR_SPEEDUP = 4.0
LAGGED_PRODUCTS = 15
# trials of each of the two line searches of an iteration
_SEARCH_STEPS = 30
# PCG stops after this many products at most: past it, a step that PCG cannot
# improve further (single-precision products, a singular block) is good enough
_CG_MAXITER = 100


def _projected_gradient(x, g, nb):
    pg = g.copy()
    pg[:nb] = x[:nb] - np.maximum(x[:nb] - g[:nb], 0.0)
    return pg


def _project(x, nb):
    x[:nb] = np.maximum(x[:nb], 0.0)
    return x


def _cauchy_step(objective, point, pg):
    """The unconstrained Cauchy step length ``|pg|^2 / pg'H pg`` (1 without curvature)."""
    curvature = float(pg @ objective.hessp(point, pg))
    return float(pg @ pg) / curvature if curvature > 0 else 1.0


def _cauchy_point(objective, point, x, nb, pg):
    """``(xc, model gradient at xc)``: the Cauchy point of the quadratic model along the
    projected gradient path ``P(x - t g)``, ``t`` halved from the unconstrained
    Cauchy step until the model decreases by at least 1% of its linear part."""
    g = point.grad
    t = _cauchy_step(objective, point, pg)
    for _ in range(10):
        s = _project(x - t * g, nb) - x
        Hs = objective.hessp(point, s)
        linear = float(g @ s)
        if linear + 0.5 * float(s @ Hs) <= 0.01 * linear:
            break
        t *= 0.5
    return x + s, g + Hs


def _free_block_product(objective, point, free):
    """``p -> H_FF p``: the Hessian's free block times ``p``."""
    v = np.zeros(free.size)

    def product(p):
        v[free] = p
        return objective.hessp(point, v)[free]

    return product


@dataclasses.dataclass
class NewtonMatrix:
    """What the ``"lagged"`` Newton steps keep, and hand to a solve warm-started from
    theirs (a neighbouring problem on the same variables).

    Attributes
    ----------
    factor : SymmetricSolver or None
        The factorised Hessian kept, None until one pays.
    products : int
        Hessian-vector products PCG has spent without one (what one would save).
    n_variables : int
        The problems' variables.
    """

    factor: SymmetricSolver | None = None
    products: int = 0
    n_variables: int = 0


class _NewtonStep:
    """The Newton direction on the free variables, by the system ``newton`` names."""

    def __init__(self, objective, newton, preconditioner, subsample_rows, kept=None):
        self.objective, self.newton, self.preconditioner = objective, newton, preconditioner
        self.subsample_rows = subsample_rows
        self._sub = None
        # "lagged": what is kept (or given, from the solve this one is warm-started
        # from, on the same variables), and whether the last PCG asked for a new factor
        same = kept is not None and kept.n_variables == objective.n_variables
        self.kept = (
            dataclasses.replace(kept) if same else NewtonMatrix(n_variables=objective.n_variables)
        )
        self._stale = self.kept.factor is None

    @property
    def sub(self):
        """The subsample of the preconditioner, copied on first use."""
        if self._sub is None:
            step = max(1, self.objective.n_samples // self.subsample_rows)
            self._rows = slice(0, None, step)
            # single precision: the preconditioner's rounding only costs CG iterations
            self._sub = self.objective.take(self._rows, dtype=np.float32)
        return self._sub

    def sub_point(self, point):
        """The subsample at ``point.x``, for its Hessian.

        The subsample's class probabilities are rows of ``point``'s, and they are
        all its Hessian reads: taken from there, which saves a pass over the
        subsample per iteration. They are the same bits where the objective
        stores float32, as the default does from 1M values on; a float64
        objective's probabilities are more accurate than the float32 subsample's
        own but not the same bits, so the subsample evaluates its own there.
        Evaluated too where
        the point holds none (Dask) or holds them on another array library's device.
        """
        sub = self.sub
        # (NumPy's P first: another array library's dtype does not compare with NumPy's)
        if not (
            isinstance(point.P, np.ndarray) and getattr(self.objective, "dtype", None) == np.float32
        ):
            return sub.evaluate(point.x)
        # value and gradient are the full objective's: not the subsample's, so left out
        return dataclasses.replace(point, value=float("nan"), grad=None, P=point.P[self._rows, ...])

    def kind(self, n_free):
        """``"direct"``, ``"lagged"``, ``"subsample"``, ``"columns"`` or ``"diagonal"``
        for ``n_free`` free variables."""
        if self.newton == "direct":
            return "direct"
        n = self.objective.n_samples
        if self.newton == "auto":
            dense = n_free <= DENSE_MAX_FREE
            if dense and n * n_free**2 <= FRESH_BUDGET:
                return "direct"
            each_iteration = dense and n * n_free**2 <= DIRECT_BUDGET
            if n <= self.subsample_rows and self._lagged_fits():
                kept = self.kept
                if each_iteration or kept.factor is not None or kept.products >= self._price():
                    return "lagged"
            if each_iteration:
                return "direct"
        if self.preconditioner == "auto":
            if n_free <= DENSE_MAX_FREE:
                return "subsample"
            # weights free in sign (zero entries') have no column: the coarse space leaves
            # them to the diagonal and costs more to form than it saves (measured in
            # BENCHMARKS.md)
            if self._has_columns() and n_nonnegative(self.objective) == self.objective.n_weights:
                return "columns"
            return "diagonal"
        return self.preconditioner

    def _lagged_fits(self):
        """Whether the whole Hessian may be kept: at most :data:`LAGGED_MAX_VARIABLES`
        variables, its assembly holding at most twice its own floats (codes whose
        stored columns enter many classes have per-class blocks far larger)."""
        N = self.objective.n_variables
        floats = getattr(self.objective, "hessian_floats", N**2)
        return N <= LAGGED_MAX_VARIABLES and floats <= 2 * N**2

    def _price(self):
        """Forming and factorising the whole Hessian, in Hessian-vector products:
        ``n N^2 / 2 + N^3 / 6`` multiply-adds for ``N`` variables against ``2 n m``
        per product (``m`` stored loss columns), over :data:`FACTOR_SPEEDUP`."""
        n, N = self.objective.n_samples, self.objective.n_variables
        m = getattr(getattr(self.objective, "LT", None), "shape", (N,))[0]
        return (n * N**2 / 2 + N**3 / 6) / (2 * n * m) / FACTOR_SPEEDUP

    def _has_columns(self):
        """Entry weights on an objective with a grouped Hessian, at most
        :data:`DENSE_MAX_FREE` code columns (the ``"columns"`` kind)."""
        penalty = getattr(self.objective, "penalty", None)
        return (
            getattr(penalty, "entry_weights", False)
            and getattr(self.objective, "grouped_hessian", None) is not None
            and penalty.column_groups()[1] <= DENSE_MAX_FREE
        )

    def _columns_preconditioner(self, point, free):
        """Two-level preconditioner of entry weights: ``r -> r / d + A (A'HA)^-1 A' r``.

        ``d`` the Hessian's diagonal and ``A'HA`` the Hessian of the shared column
        weights (:meth:`~convexagg.aggregation.BlockedObjective.grouped_hessian`,
        ``A`` the 0/1 map of the free entry weights to their code columns), both
        on the subsample in single precision: an additive Schwarz preconditioner
        with the shared weights as coarse space (Toselli & Widlund, *Domain
        Decomposition Methods*, 2005, ch. 2). The diagonal alone leaves the
        directions that move a column's entries together -- the shared-weight
        problem, which needs the subsample Hessian there too -- to PCG: on letter
        with ovo+ovr (18,000 x 1,326 entries, shrinkage 0.01) 74 products over 5
        iterations, 30 with the coarse space.
        """
        nb = self.objective.n_weights
        groups, n_groups = self.objective.penalty.column_groups()
        free_groups = np.where(free[:nb], groups, -1)
        sub_point = self.sub_point(point)
        coarse, diag = self.sub.grouped_hessian(sub_point, free_groups, n_groups, diagonal=True)
        live = np.bincount(free_groups[free_groups >= 0], minlength=n_groups) > 0
        solver = SymmetricSolver(coarse[np.ix_(live, live)])
        # the free variables' coarse index (-1: an intercept or a weight of no column,
        # a zero entry's side, no coarse part)
        renumber = np.cumsum(live) - 1
        index = np.flatnonzero(free)
        group = np.where(index < nb, groups[np.minimum(index, nb - 1)], -1)
        local = np.where(group >= 0, renumber[group], -1)
        weights = local >= 0
        n_live = int(live.sum())
        diag = diag[free]

        def precondition(r):
            z = r / diag
            coarse_r = np.bincount(local[weights], weights=r[weights], minlength=n_live)
            z[weights] += solver.solve(coarse_r)[local[weights]]
            return z

        return precondition

    def _lagged(self, point, g, free, pg_norm):
        """The Newton direction by PCG preconditioned by a kept factorised Hessian.

        The Hessian of every variable is formed and factorised at the first
        iteration (unless the solve this one is warm-started from kept one: a
        neighbouring problem's, on the same variables) and again after a PCG that
        needed more than :data:`LAGGED_PRODUCTS` products; in between it is kept.
        PCG on the current Hessian's free block is preconditioned by the kept
        inverse's free block (a principal block of a positive definite inverse,
        itself positive definite, whatever the free set): near the solution the
        Hessian moves little between iterations, and PCG then needs a few products
        where a new factorisation costs ``n N^2 / 2 + N^3 / 6`` multiply-adds for
        ``N`` variables (a lagged Newton matrix, as in Shamanskii's method, used
        inside PCG so that its age costs products, never accuracy).
        """
        if self.kept.factor is None or self._stale:
            self.kept.factor = SymmetricSolver(self.objective.hessian(point))
            self._stale = False
        solver, padded = self.kept.factor, np.zeros(free.size)

        def precondition(r):
            padded[free] = r
            return solver.solve(padded)[free]

        forcing = min(0.5, np.sqrt(pg_norm)) * float(np.linalg.norm(g[free]))
        hessp = _free_block_product(self.objective, point, free)
        d, cg_iter = pcg(hessp, -g[free], forcing, precondition, maxiter=_CG_MAXITER)
        self._stale = cg_iter > LAGGED_PRODUCTS
        return d, "lagged", cg_iter

    def __call__(self, point, g, free, pg_norm):
        """``(d_F, kind, cg_iter)``."""
        index = np.flatnonzero(free)
        kind = self.kind(index.size)
        if kind == "lagged":
            return self._lagged(point, g, free, pg_norm)
        if kind == "direct":
            H = self.objective.hessian(point, variables=index)
            return SymmetricSolver(H).solve(-g[free]), kind, 0
        if kind == "subsample":
            H = self.sub.hessian(self.sub_point(point), variables=index)
            precondition = SymmetricSolver(H).solve
        elif kind == "columns":
            precondition = self._columns_preconditioner(point, free)
        else:
            diag = self.objective.hess_diag(point)[free]
            precondition = lambda r: r / diag  # noqa: E731
        forcing = min(0.5, np.sqrt(pg_norm)) * float(np.linalg.norm(g[free]))
        hessp = _free_block_product(self.objective, point, free)
        d, cg_iter = pcg(hessp, -g[free], forcing, precondition, maxiter=_CG_MAXITER)
        self.kept.products += cg_iter
        return d, kind, cg_iter


def projected_newton(
    objective,
    x0,
    *,
    tol=1e-4,
    max_iter=100,
    newton="auto",
    preconditioner="auto",
    subsample_rows=4000,
    sufficient_decrease=1e-4,
    backtrack=0.5,
    callback=None,
    newton_matrix=None,
):
    """Minimise ``objective`` over ``w >= 0`` (intercepts free) by projected Newton steps.

    Parameters
    ----------
    objective : Objective
        ``evaluate`` and, by the Newton system, ``hessian`` (with ``variables``),
        ``hessp``, ``take`` or ``hess_diag``.
    x0 : ndarray of shape (n_variables,)
        Start point; its weights are projected onto ``w >= 0``.
    tol : float, default=1e-4
        Stop when the projected gradient has norm ``<= tol``.
    max_iter : int, default=100
        Newton iterations.
    newton : {"auto", "direct", "cg"}, default="auto"
        The Newton system on the free variables, see the module docstring.
    preconditioner : {"auto", "subsample", "columns", "diagonal"}, default="auto"
        For PCG, see the module docstring; ``"columns"`` needs entry weights.
    subsample_rows : int, default=4000
        Rows of the ``"subsample"`` preconditioner's Hessian.
    sufficient_decrease, backtrack : float, default=1e-4, 0.5
        Armijo constants.
    callback : callable, default=None
        Called with each iteration's record.
    newton_matrix : NewtonMatrix, default=None
        What a solve of a neighbouring problem on the same variables kept (a warm
        start's ``newton_matrix``): its factorised Hessian preconditions the
        ``"lagged"`` steps until PCG asks for a new one, and its PCG products
        count toward paying for one.

    Returns
    -------
    SolverResult
        ``z = max(g_w, 0)`` at the solution (the duals of ``w >= 0`` at an
        optimum); ``history["newton"]`` says which system each iteration solved;
        ``newton_matrix`` what the ``"lagged"`` steps kept (:class:`NewtonMatrix`).
        A :class:`~sklearn.exceptions.ConvergenceWarning` is emitted when it
        stops before ``tol``.
    """
    if newton not in ("auto", "cg", "direct"):
        raise ValueError(f"newton must be 'auto', 'cg' or 'direct', got {newton!r}.")
    if preconditioner not in ("auto", "subsample", "columns", "diagonal"):
        raise ValueError(
            "preconditioner must be 'auto', 'subsample', 'columns' or 'diagonal', "
            f"got {preconditioner!r}."
        )
    if preconditioner == "columns" and not getattr(
        getattr(objective, "penalty", None), "entry_weights", False
    ):
        raise ValueError(
            "preconditioner='columns' needs entry weights (entry_weight_shrinkage); "
            "use 'auto', 'subsample' or 'diagonal'."
        )
    nb = n_nonnegative(objective)
    x, point = check_start(objective, _project(np.array(x0, dtype=np.float64), nb))
    evaluations = 1
    newton_step = _NewtonStep(objective, newton, preconditioner, subsample_rows, newton_matrix)
    history = History(HISTORY_KEYS, callback)

    def record(step, cg_iter, n_active, kind):
        pg = _projected_gradient(x, point.grad, nb)
        history.record(
            objective=point.value,
            projected_gradient=float(np.linalg.norm(pg)),
            step=step,
            cg_iter=cg_iter,
            n_active=n_active,
            newton=kind,
            weights=x,
        )

    record(0.0, 0, 0, "")
    reason = "max_iter"
    n_iter = 0
    cauchy = False  # the last step was full: no Cauchy point needed
    while True:
        pg_norm = history.last("projected_gradient")
        if pg_norm <= tol:
            reason = "converged"
            break
        if n_iter >= max_iter:
            break
        n_iter += 1
        g = point.grad
        active = np.zeros(x.size, dtype=bool)
        if cauchy:  # the face of the Cauchy point, the Newton step from there
            base, model_grad = _cauchy_point(objective, point, x, nb, _projected_gradient(x, g, nb))
            active[:nb] = base[:nb] <= 0
        else:  # the epsilon-active set, the Newton step from x
            base, model_grad = x, g
            active[:nb] = (x[:nb] <= min(_EPS_ACTIVE, pg_norm)) & (g[:nb] > 0)
        free = ~active
        d = np.zeros_like(x)
        d[free], kind, cg_iter = newton_step(point, model_grad, free, pg_norm)
        d[active] = -base[active]  # the held weights go to zero
        if not np.isfinite(d).all():
            reason = "nonfinite_direction"
            break

        # the projection arc of the Newton step; then, where the quadratic model
        # misleads (a nearly non-smooth f, as the stiffness objective at large tau),
        # the projected gradient arc P(x - t g), on which a short enough step
        # always decreases f (Bertsekas, Prop. 1)
        t = None
        accepted = None
        for k in range(2 * _SEARCH_STEPS):
            if k < _SEARCH_STEPS:
                s = backtrack**k
                trial = _project(base + s * d, nb)
            else:
                if t is None:
                    t = _cauchy_step(objective, point, _projected_gradient(x, g, nb))
                s = 0.0
                trial = _project(x - t * backtrack ** (k - _SEARCH_STEPS) * g, nb)
            trial_point = objective.evaluate(trial)
            evaluations += 1
            decrease = float(g @ (trial - x))
            if finite(trial_point) and (
                trial_point.value <= point.value + sufficient_decrease * decrease
            ):
                accepted = trial, trial_point
                break
        if accepted is None:
            reason = "line_search"
            break
        x, point = accepted
        record(s, cg_iter, int(active.sum()), kind + (", Cauchy point" if cauchy else ""))
        cauchy = s < 1.0
    summary = f"projected gradient {history.last('projected_gradient'):.2e}"
    z = np.maximum(point.grad[:nb], 0.0)
    result = finish(
        x, z, n_iter, reason, history, tol, "projected Newton method", WHY, evaluations, summary
    )
    result.newton_matrix = newton_step.kept
    return result
