"""Solvers for the convex aggregation problem.

The objective owns the mathematics; a solver only asks it for ``evaluate`` /
``hessp`` / ``hess_diag`` (PCG) or ``hessian`` (Cholesky).

* :class:`ConvexObjective` -- the dense, textbook form (two ``n x 2M`` by
  ``2M x K`` products); the reference the fast form is tested against.
* :class:`BlockedObjective` -- the same function stored by class, ``O(n nnz)``
  per product, in ``float64`` or ``float32``; what :class:`ConvexDecoder` uses.
* :func:`interior_point` -- the paper's Algorithm 1; :func:`lbfgsb` --
  independent reference.
"""

from .blocked import BlockedObjective
from .interior_point import SolverResult, interior_point
from .objective import ConvexObjective, Point, discrepancies, side_indicators, stack_losses
from .reference import lbfgsb

__all__ = [
    "BlockedObjective",
    "ConvexObjective",
    "Point",
    "SolverResult",
    "discrepancies",
    "interior_point",
    "lbfgsb",
    "side_indicators",
    "stack_losses",
]
