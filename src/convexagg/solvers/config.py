"""Solver configurations: one object carries every setting of a fit, passed on whole.

In the manner of skglm's solver objects, a configuration is a small
:class:`~sklearn.base.BaseEstimator` (so ``solver__tol`` is grid-searchable
from an estimator that holds it) with one method that matters,
``solve(objective, previous=None, callback=None)``. The decoder, both
estimators and the regularisation path take the same ``solver`` parameter --
a configuration or one of the names in :data:`SOLVER_NAMES` -- and hand it down
untouched; nothing copies its settings into other signatures.

================================  ==============================================
``"auto"`` (the default)          :class:`ProjectedNewton` with its automatic
                                  choices (a model may mean another by it: the
                                  decoder's large-margin formulation takes
                                  :class:`ProjectedSubgradient`)
``"projected_newton"``            ``ProjectedNewton()``
``"interior_point"``              ``InteriorPoint()``: the paper's Algorithm 1
                                  (adaptive barrier, PCG steps, ``w = 1/M``)
``"lbfgsb"``                      ``LBFGSB()``
``"projected_subgradient"``       ``ProjectedSubgradient()`` (large margin)
================================  ==============================================

``dtype`` (a setting of the first three) is the precision in which the fit
stores and multiplies the losses; the decoder builds the objective with it
(:meth:`SolverConfig.storage_dtype`).
"""

from __future__ import annotations

import functools
import warnings
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils._param_validation import Interval, StrOptions

from .contract import check_objective, n_nonnegative
from .interior_point import interior_point
from .lbfgsb import lbfgsb
from .predictor_corrector import predictor_corrector
from .projected_newton import projected_newton
from .result import SolverResult
from .subgradient import projected_subgradient
from .warm_start import gradient_duals, interior_warm_start, uniform_start

__all__ = [
    "SOLVER_NAMES",
    "InteriorPoint",
    "LBFGSB",
    "ProjectedNewton",
    "ProjectedSubgradient",
    "SolverConfig",
    "resolve_solver",
]

SOLVER_NAMES = ("auto", "projected_newton", "interior_point", "lbfgsb", "projected_subgradient")

# init="subsample": rows and tolerance of the first solve, the cheapest start in
# Hessian-equivalents among the row counts and tolerances measured (BENCHMARKS.md)
_SUBSAMPLE_ROWS = 2000
_SUBSAMPLE_TOL = 1e-2
# a start taken from another solution moves its w and z at least this far into
# the interior (a start on the boundary would give the barrier nothing to work with)
_START_FLOOR = 1e-3
# dtype="auto": float32 losses from this many values on (the in-memory fit and the
# Dask fit's Hessian sample alike). float32 halves the bytes each product reads and
# reaches the same objective value (BENCHMARKS.md, "Fitting the weights"); below
# about a million values a fit takes milliseconds and float64 costs nothing worth saving.
FLOAT32_FROM_VALUES = 2**20


class SolverConfig(BaseEstimator):
    """Base class of the solver configurations.

    Subclasses define ``_solve(objective, previous, callback)`` and
    ``required_methods(objective=None)`` (what they ask of the objective beyond
    the contract's required attributes). Which model criterion a configuration
    can minimise is the model's table, not the solver's.
    """

    #: a subclass without settings validates trivially
    _parameter_constraints: dict = {}

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        solve = cls.__dict__.get("solve")
        if solve is not None and not getattr(solve, "__checks_result__", False):
            cls.solve = _checking_result(solve)  # a subclass's own solve is checked too

    def solve(self, objective, previous=None, callback=None):
        """Minimise ``objective``; warm-start from ``previous`` if given.

        Parameters
        ----------
        objective : Objective
            The problem (see :class:`~convexagg.solvers.Objective`); the methods
            this configuration needs are checked first.
        previous : SolverResult, default=None
            A neighbouring problem's solution to start from, by the solver's
            warm-start policy.
        callback : callable, default=None
            Called with a dict of each iteration's record (``verbose`` uses it).

        Returns
        -------
        result : SolverResult
            The solution and the per-iteration history.
        """
        self._validate_params()
        check_objective(objective, self.required_methods(objective), type(self).__name__)
        result = self._solve(objective, previous, callback)
        check_result(result, objective, type(self).__name__)
        return result

    def storage_dtype(self, n_values):
        """The precision of the losses of a problem with ``n_values`` of them.

        ``dtype`` itself, or for ``"auto"``: float32 from
        ``FLOAT32_FROM_VALUES`` (2**20) values on, float64 below and when the
        size is not known in advance (``n_values=None``: data read block by
        block).

        Parameters
        ----------
        n_values : int or None
            Number of losses the problem stores (``n_samples x n_classifiers``);
            None when not known in advance.

        Returns
        -------
        dtype : numpy.dtype
            float32 or float64.
        """
        if self.dtype != "auto":
            return np.dtype(self.dtype)
        large = n_values is not None and n_values >= FLOAT32_FROM_VALUES
        return np.dtype(np.float32 if large else np.float64)


def check_result(result, objective, name):
    """Raise a ``ValueError`` naming the solver unless ``result`` is a solution the
    model can use: a :class:`SolverResult` whose ``w`` has one finite entry per
    variable of ``objective`` and non-negative weights.

    Checked for every solver, the library's and a user's subclass alike: a NaN or
    a negative weight would otherwise make every prediction NaN or wrong.
    """
    w = getattr(result, "w", None)
    if not isinstance(result, SolverResult) or w is None:
        raise ValueError(f"the solver {name} returned {type(result).__name__}, not a SolverResult.")
    w = np.asarray(w, dtype=np.float64)
    if w.shape != (objective.n_variables,):
        raise ValueError(
            f"the solver {name} returned w of shape {w.shape}; the objective has "
            f"{objective.n_variables} variables."
        )
    if not np.all(np.isfinite(w)):
        raise ValueError(f"the solver {name} returned non-finite (NaN or infinite) weights.")
    weights = w[: n_nonnegative(objective)]
    if weights.min(initial=0.0) < 0:
        raise ValueError(
            f"the solver {name} returned negative weights (min {float(weights.min())!r}); "
            "the aggregation weights must be >= 0."
        )
    result.w = w


def _checking_result(solve):
    """``solve`` followed by :func:`check_result`."""

    @functools.wraps(solve)
    def wrapper(self, objective, *args, **kwargs):
        result = solve(self, objective, *args, **kwargs)
        check_result(result, objective, type(self).__name__)
        return result

    wrapper.__checks_result__ = True
    return wrapper


def _start_weights(objective, init):
    """``x0`` for ``init`` ``"fixed"`` (``w = 1/M``, ``b = 0``) or ``"uniform"``."""
    if init == "uniform":
        return uniform_start(objective)
    x0 = np.zeros(objective.n_variables)
    x0[: objective.n_weights] = 1.0 / objective.n_weights
    return x0


class InteriorPoint(SolverConfig):
    """Primal-dual interior point methods; the defaults are the paper's Algorithm 1.

    Parameters
    ----------
    method : {"adaptive_barrier", "predictor_corrector"}, default="adaptive_barrier"
        The barrier update and direction: the paper's ``mu = z'w / 2M`` after
        long steps (:func:`~convexagg.solvers.interior_point`), or Mehrotra's
        predictor-corrector on the same KKT system
        (:func:`~convexagg.solvers.predictor_corrector`, about half the iterations).
    newton : {"cg", "direct"}, default="cg"
        The reduced Newton system by PCG with the Hessian diagonal (the paper;
        needs only products) or by the dense Hessian and a Cholesky solve
        (built per class; best for up to a few hundred classifiers).
    init : {"fixed", "uniform", "subsample"}, default="fixed"
        Start point: the paper's ``w = 1/M, z = 1``; the best equal weights
        ``w = c* 1`` with duals ``|grad f|`` (:func:`~convexagg.solvers.uniform_start`,
        about half the iterations); or the solution, to ``tol=1e-2`` from that
        start, of the same problem on every k-th of about 2,000 rows (with fewer
        than 4,000 rows: the uniform start).
    tol : float, default=1e-4
        Stop when the KKT residual norm and the duality gap are both ``<= tol``.
    max_iter : int, default=100
        Newton iterations (per solve).
    dtype : {"float64", "float32"}, default="float64"
        Precision in which the losses are stored and multiplied. In float32 the
        gradient carries rounding of order 1e-9 to 1e-8, so ``tol`` much below
        1e-7 may not be reachable (a ConvergenceWarning says so).
    """

    _parameter_constraints = {
        "method": [StrOptions({"adaptive_barrier", "predictor_corrector"})],
        "newton": [StrOptions({"cg", "direct"})],
        "init": [StrOptions({"fixed", "uniform", "subsample"})],
        "tol": [Interval(Real, 0, None, closed="neither")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "dtype": [StrOptions({"float64", "float32"})],
    }

    def __init__(
        self,
        method="adaptive_barrier",
        newton="cg",
        init="fixed",
        tol=1e-4,
        max_iter=100,
        dtype="float64",
    ):
        self.method = method
        self.newton = newton
        self.init = init
        self.tol = tol
        self.max_iter = max_iter
        self.dtype = dtype

    def required_methods(self, objective=None):
        """Name the optional methods of the objective this configuration needs.

        Parameters
        ----------
        objective : Objective, default=None
            The objective to be solved, for choices that depend on it; the
            configured settings alone when None.

        Returns
        -------
        methods : tuple of str
            Checked by :func:`~convexagg.solvers.check_objective` before a solve.
        """
        needed = ("hessian",) if self.newton == "direct" else ("hessp", "hess_diag")
        return needed + (("take",) if self.init == "subsample" else ())

    def _run(self, objective, x0, z0, tol, callback=None):
        run = interior_point if self.method == "adaptive_barrier" else predictor_corrector
        return run(
            objective,
            x0,
            z0,
            tol=tol,
            max_iter=self.max_iter,
            newton=self.newton,
            callback=callback,
        )

    def _start(self, objective):
        """``(x0, z0)`` of ``init`` (None, None: the paper's start)."""
        if self.init == "fixed":
            return None, None
        if self.init == "uniform" or objective.n_samples < 2 * _SUBSAMPLE_ROWS:
            x0 = uniform_start(objective)
            return x0, gradient_duals(objective.evaluate(x0).grad[: n_nonnegative(objective)])
        sub = objective.take(slice(0, None, objective.n_samples // _SUBSAMPLE_ROWS))
        x0 = uniform_start(sub)
        z0 = gradient_duals(sub.evaluate(x0).grad[: n_nonnegative(sub)])
        with warnings.catch_warnings():  # only a start point: its accuracy is not the answer
            warnings.simplefilter("ignore", ConvergenceWarning)
            result = self._run(sub, x0, z0, max(self.tol, _SUBSAMPLE_TOL))
        return self.warm_start(objective, result, floor=_START_FLOOR)

    def warm_start(self, objective, previous, floor=None):
        """The interior start near a neighbouring solution (the measured policy).

        Parameters
        ----------
        objective : Objective
            The new problem.
        previous : SolverResult
            The neighbouring problem's solution.
        floor : float, default=None
            How far into the interior to move it; see
            :func:`~convexagg.solvers.interior_warm_start`.

        Returns
        -------
        x0 : ndarray of shape (n_variables,)
            The primal start.
        z0 : ndarray of shape (n_weights,)
            The dual start.
        """
        return interior_warm_start(objective, previous.w, shift=floor)

    def _solve(self, objective, previous, callback):
        if previous is not None:
            x0, z0 = self.warm_start(objective, previous)
        else:
            x0, z0 = self._start(objective)
        return self._run(objective, x0, z0, self.tol, callback)


class ProjectedNewton(SolverConfig):
    """Projected Newton steps on ``w >= 0`` (:func:`~convexagg.solvers.projected_newton`).

    No barrier: a weight at zero is held at zero exactly, and near the optimum
    the steps are Newton steps on the free weights, so the method converges
    quadratically. The library's default (``solver="auto"``).

    Parameters
    ----------
    newton : {"auto", "direct", "cg"}, default="auto"
        The Newton system on the variables not held at zero (``F``):
        ``"direct"``, their Hessian block and a Cholesky solve; ``"cg"``, PCG on
        Hessian-vector products. ``"auto"`` chooses each iteration, by cost:
        direct while ``n_samples |F|^2 <= 3e7``; on up to 4,000 samples, PCG
        preconditioned by a factorised Hessian kept along the solve and handed
        to the next warm-started one (``"lagged"`` in the history) where a
        direct step would form one every iteration or PCG without it has spent
        what it costs; otherwise direct up to ``3e8``, PCG above (see
        :mod:`~convexagg.solvers.projected_newton`).
    preconditioner : {"auto", "subsample", "columns", "diagonal"}, default="auto"
        For PCG: the Hessian block of every k-th of about 4,000 samples
        (factorised once per iteration); for entry weights, ``"columns"``: that
        subsample's Hessian diagonal plus the Hessian of the shared column
        weights (a two-level preconditioner, no ``|F| x |F|`` matrix); or the
        Hessian's diagonal. ``"auto"``: the subsample up to 700 free
        variables, above it ``"columns"`` for entry weights of up to 700 code
        columns and the diagonal otherwise -- also with weights free in sign
        (``zero_entry_penalty``), which have no column -- (and always the
        diagonal on objectives that cannot be subsampled).
    init : {"auto", "uniform", "fixed"}, default="auto"
        Start at the best equal weights (:func:`~convexagg.solvers.uniform_start`)
        or at ``w = 1/M``. ``"auto"``: uniform, except on objectives that cannot
        be subsampled (data read in passes: the search would cost ~15 of them).
    tol : float, default=1e-4
        Stop when the projected gradient has norm ``<= tol`` (as scikit-learn's
        ``LogisticRegression`` does with its ``tol``). Convergence is quadratic
        at the end, so the last iteration usually lands well below: on letter
        one-vs-one, ``|pg| = 8e-5`` and 4e-7 relative above the optimum,
        where the interior point at its ``tol=1e-4`` stops 4e-5 above it.
    max_iter : int, default=100
        Newton iterations.
    dtype : {"auto", "float64", "float32"}, default="auto"
        Precision in which the losses are stored and multiplied (sums and the
        solver's own arithmetic are float64 either way). ``"auto"``: float32
        for 2**20 losses and more (e.g. 18,000 samples x 325 binaries), which
        reaches the same objective value faster, float64 below and when the
        size is not known in advance.
    """

    _parameter_constraints = {
        "newton": [StrOptions({"auto", "direct", "cg"})],
        "preconditioner": [StrOptions({"auto", "subsample", "columns", "diagonal"})],
        "init": [StrOptions({"auto", "uniform", "fixed"})],
        "tol": [Interval(Real, 0, None, closed="neither")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "dtype": [StrOptions({"auto", "float64", "float32"})],
    }

    def __init__(
        self,
        newton="auto",
        preconditioner="auto",
        init="auto",
        tol=1e-4,
        max_iter=100,
        dtype="auto",
    ):
        self.newton = newton
        self.preconditioner = preconditioner
        self.init = init
        self.tol = tol
        self.max_iter = max_iter
        self.dtype = dtype

    def resolved(self, objective):
        """Resolve the choices that depend on what ``objective`` offers.

        The per-iteration choice of ``newton="auto"`` is the solver's.

        Parameters
        ----------
        objective : Objective
            The problem to be solved.

        Returns
        -------
        newton : str
            As configured.
        preconditioner : {"subsample", "diagonal", "auto"}
            ``"diagonal"`` when the objective cannot be subsampled.
        init : {"uniform", "fixed"}
            The start point.
        """
        subsample = getattr(objective, "take", None) is not None
        newton = self.newton
        preconditioner = self.preconditioner
        if preconditioner == "auto" and not subsample:
            preconditioner = "diagonal"
        init = self.init
        if init == "auto":
            init = "uniform" if subsample or objective.n_samples <= 2 * _SUBSAMPLE_ROWS else "fixed"
        return newton, preconditioner, init

    def required_methods(self, objective=None):
        """Name the optional methods of the objective this configuration needs.

        Parameters
        ----------
        objective : Objective, default=None
            The objective to be solved, for choices that depend on it; the
            configured settings alone when None.

        Returns
        -------
        methods : tuple of str
            Checked by :func:`~convexagg.solvers.check_objective` before a solve.
        """
        newton, preconditioner, _ = (
            (self.newton, self.preconditioner, self.init)
            if objective is None
            else self.resolved(objective)
        )
        direct = ("hessian",) if newton in ("direct", "auto") else ()
        if newton == "direct":
            return direct
        by_preconditioner = {
            "subsample": ("take", "hessian"),
            "columns": ("take", "grouped_hessian", "hess_diag"),
            "diagonal": ("hess_diag",),
            "auto": ("take", "hessian", "hess_diag"),
        }
        return tuple(dict.fromkeys(direct + ("hessp",) + by_preconditioner[preconditioner]))

    def _solve(self, objective, previous, callback):
        newton, preconditioner, init = self.resolved(objective)
        x0 = previous.w if previous is not None else _start_weights(objective, init)
        return projected_newton(
            objective,
            x0,
            tol=self.tol,
            max_iter=self.max_iter,
            newton=newton,
            preconditioner=preconditioner,
            callback=callback,
            newton_matrix=getattr(previous, "newton_matrix", None),
        )


class LBFGSB(SolverConfig):
    """SciPy's L-BFGS-B on the library's objective (:func:`~convexagg.solvers.lbfgsb`).

    A quasi-Newton method: only values and gradients, no Hessian. Slower than
    :class:`ProjectedNewton` on every problem measured (``BENCHMARKS.md``);
    offered as the independent reference and for objectives without
    second derivatives.

    Parameters
    ----------
    init : {"uniform", "fixed"}, default="uniform"
        Start at the best equal weights or at ``w = 1/M``.
    tol : float, default=1e-8
        scipy's ``pgtol`` (projected gradient, max-norm) and ``ftol``.
    max_iter : int, default=15000
        L-BFGS-B iterations.
    dtype : {"float64", "float32"}, default="float64"
        Precision in which the losses are stored and multiplied.
    """

    _parameter_constraints = {
        "init": [StrOptions({"uniform", "fixed"})],
        "tol": [Interval(Real, 0, None, closed="neither")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "dtype": [StrOptions({"float64", "float32"})],
    }

    def __init__(self, init="uniform", tol=1e-8, max_iter=15000, dtype="float64"):
        self.init = init
        self.tol = tol
        self.max_iter = max_iter
        self.dtype = dtype

    def required_methods(self, objective=None):
        """Name the optional methods of the objective this configuration needs.

        Parameters
        ----------
        objective : Objective, default=None
            The objective to be solved, for choices that depend on it; the
            configured settings alone when None.

        Returns
        -------
        methods : tuple of str
            Checked by :func:`~convexagg.solvers.check_objective` before a solve.
        """
        return ()

    def _solve(self, objective, previous, callback):
        x0 = previous.w if previous is not None else _start_weights(objective, self.init)
        return lbfgsb(objective, x0, tol=self.tol, max_iter=self.max_iter, callback=callback)


class ProjectedSubgradient(SolverConfig):
    """Projected subgradient steps, for objectives with a subgradient only (the paper's eq. 27).

    Parameters
    ----------
    max_iter : int, default=2000
        Subgradient steps from ``w = 1/M`` (the best iterate is kept).
    tol : float, default=1e-4
        Stop early when the projected subgradient has norm ``<= tol`` (rare:
        subgradient methods have no practical stopping test).
    """

    _parameter_constraints = {
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
    }

    def __init__(self, max_iter=2000, tol=1e-4):
        self.max_iter = max_iter
        self.tol = tol

    dtype = "float64"

    def required_methods(self, objective=None):
        """Name the optional methods of the objective this configuration needs.

        Parameters
        ----------
        objective : Objective, default=None
            The objective to be solved, for choices that depend on it; the
            configured settings alone when None.

        Returns
        -------
        methods : tuple of str
            Checked by :func:`~convexagg.solvers.check_objective` before a solve.
        """
        return ()

    def _solve(self, objective, previous, callback):
        x0 = None if previous is None else previous.w
        return projected_subgradient(
            objective, x0, max_iter=self.max_iter, tol=self.tol, callback=callback
        )


_NAMED = {
    "projected_newton": ProjectedNewton,
    "interior_point": InteriorPoint,
    "lbfgsb": LBFGSB,
    "projected_subgradient": ProjectedSubgradient,
}


def resolve_solver(solver):
    """The configuration object for ``solver``, its settings validated.

    Which configuration a model's criterion takes (and what ``"auto"`` means
    for it) is the model's business: the convex decoder's table is
    :mod:`convexagg.decoders.formulations`.

    Parameters
    ----------
    solver : str or SolverConfig
        One of :data:`SOLVER_NAMES` (``"auto"``: :class:`ProjectedNewton`) or a
        configuration, returned as given (not copied).

    Returns
    -------
    solver : SolverConfig
        The validated configuration.
    """
    if isinstance(solver, str):
        if solver == "auto":
            solver = ProjectedNewton()
        elif solver in _NAMED:
            solver = _NAMED[solver]()
        else:
            raise ValueError(
                f"solver must be one of {SOLVER_NAMES} or a SolverConfig; got {solver!r}."
            )
    if not isinstance(solver, SolverConfig):
        raise TypeError(
            f"solver must be one of {SOLVER_NAMES} or a SolverConfig (InteriorPoint(), "
            f"ProjectedNewton(), ...); got {solver!r}."
        )
    solver._validate_params()
    return solver
