"""Algorithms for the convex aggregation problem ``min f(x) s.t. w >= 0``.

Nothing here knows the model: a solver sees an objective only through the
contract of :class:`convexagg.aggregation.Objective` (``evaluate``, and by
setting ``hessp`` / ``hess_diag`` / ``hessian`` / ``take``), and this package
imports nothing else of the library.

* :func:`projected_newton` -- projected Newton steps, zeros held exactly (the
  default, through :class:`ProjectedNewton`);
* :func:`interior_point` -- the paper's Algorithm 1; :func:`predictor_corrector`
  -- Mehrotra's variant on the same KKT system (both through :class:`InteriorPoint`);
* :func:`lbfgsb` -- scipy's L-BFGS-B, the independent reference (:class:`LBFGSB`);
* :func:`projected_subgradient` -- for the large-margin problem
  (:class:`ProjectedSubgradient`); :func:`continuation` and :func:`tau_schedule`
  -- the stiffness continuation of the paper's section 4;
* start points: :func:`uniform_start`, :func:`interior_warm_start`;
* configurations (:mod:`~convexagg.solvers.config`): the ``solver`` parameter
  of the decoder, the estimators and the regularisation path;
* :class:`Objective`, :func:`check_objective` and :func:`n_nonnegative`: the contract,
  declared and checked, and the weights it holds ``>= 0``.
"""

from .config import (
    LBFGSB,
    SOLVER_NAMES,
    InteriorPoint,
    ProjectedNewton,
    ProjectedSubgradient,
    SolverConfig,
    resolve_solver,
)
from .continuation import continuation, tau_schedule
from .contract import Objective, check_objective, n_nonnegative
from .interior_point import interior_point
from .lbfgsb import lbfgsb
from .predictor_corrector import predictor_corrector
from .projected_newton import projected_newton
from .result import SolverResult
from .subgradient import projected_subgradient
from .warm_start import gradient_duals, interior_warm_start, uniform_start

__all__ = [
    "LBFGSB",
    "SOLVER_NAMES",
    "InteriorPoint",
    "Objective",
    "ProjectedNewton",
    "ProjectedSubgradient",
    "SolverConfig",
    "SolverResult",
    "check_objective",
    "continuation",
    "gradient_duals",
    "interior_point",
    "interior_warm_start",
    "lbfgsb",
    "n_nonnegative",
    "predictor_corrector",
    "projected_newton",
    "projected_subgradient",
    "resolve_solver",
    "tau_schedule",
    "uniform_start",
]
