"""Solvers for the convex aggregation problem.

The objective (:class:`ConvexObjective`) owns the mathematics; a solver only asks
it for ``evaluate`` / ``hessp`` / ``hess_diag``. The large-margin connection of
the paper's section 4 adds :class:`StiffnessObjective` (eq. 30, solved by the same
interior point with continuation in ``tau``) and :class:`LargeMarginObjective`
(eq. 27, solved by :func:`projected_subgradient`).
"""

from .interior_point import SolverResult, interior_point
from .margin import (
    LargeMarginObjective,
    StiffnessObjective,
    projected_subgradient,
    stiffness_continuation,
    tau_schedule,
)
from .objective import ConvexObjective, Point, discrepancies, side_indicators, stack_losses
from .reference import lbfgsb
from .warm_start import interior_warm_start

__all__ = [
    "ConvexObjective",
    "LargeMarginObjective",
    "Point",
    "SolverResult",
    "StiffnessObjective",
    "discrepancies",
    "interior_point",
    "interior_warm_start",
    "lbfgsb",
    "projected_subgradient",
    "side_indicators",
    "stack_losses",
    "stiffness_continuation",
    "tau_schedule",
]
