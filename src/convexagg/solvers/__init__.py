"""Solvers for the convex aggregation problem.

The objective (:class:`ConvexObjective`) owns the mathematics; a solver only asks
it for ``evaluate`` / ``hessp`` / ``hess_diag``.
"""

from .interior_point import SolverResult, interior_point
from .objective import ConvexObjective, Point, discrepancies, side_indicators, stack_losses
from .reference import lbfgsb

__all__ = [
    "ConvexObjective",
    "Point",
    "SolverResult",
    "discrepancies",
    "interior_point",
    "lbfgsb",
    "side_indicators",
    "stack_losses",
]
