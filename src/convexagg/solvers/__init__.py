"""Solvers for the convex aggregation problem.

The objective owns the mathematics; a solver only asks it for ``evaluate`` /
``hessp`` / ``hess_diag`` (PCG) or ``hessian`` (dense Newton system).

* :class:`ConvexObjective` -- the dense, textbook form (two ``n x 2M`` by
  ``2M x K`` products); the reference the fast form is tested against.
* :class:`BlockedObjective` -- the same function stored by class, ``O(n nnz)``
  per product, in ``float64`` or ``float32``; what :class:`ConvexDecoder` uses.
* :func:`interior_point` -- the paper's Algorithm 1;
  :func:`predictor_corrector` -- Mehrotra's variant on the same KKT system;
  :func:`solve` -- either, by name; :func:`lbfgsb` -- independent reference.
* The large-margin connection of the paper's section 4 adds
  :class:`StiffnessObjective` (eq. 30, solved by the same interior point with
  continuation in ``tau``) and :class:`LargeMarginObjective` (eq. 27, solved by
  :func:`projected_subgradient`).
"""

from .blocked import BlockedObjective
from .interior_point import SolverResult, interior_point
from .margin import (
    LargeMarginObjective,
    StiffnessObjective,
    projected_subgradient,
    stiffness_continuation,
    tau_schedule,
)
from .objective import ConvexObjective, Point, discrepancies, side_indicators, stack_losses
from .predictor_corrector import predictor_corrector
from .reference import lbfgsb
from .warm_start import interior_warm_start, uniform_start

__all__ = [
    "BlockedObjective",
    "ConvexObjective",
    "LargeMarginObjective",
    "Point",
    "SOLVERS",
    "SolverResult",
    "StiffnessObjective",
    "discrepancies",
    "interior_point",
    "interior_warm_start",
    "lbfgsb",
    "projected_subgradient",
    "predictor_corrector",
    "side_indicators",
    "solve",
    "stack_losses",
    "stiffness_continuation",
    "tau_schedule",
    "uniform_start",
]

SOLVERS = {"paper": interior_point, "mehrotra": predictor_corrector}


def solve(objective, w0=None, z0=None, *, solver="paper", newton="cg", warn=True, **options):
    """Run the interior point ``solver`` (``"paper"`` or ``"mehrotra"``) on ``objective``.

    ``newton`` (``"cg"`` or ``"cholesky"``) and ``options`` (``tol``,
    ``max_iter``, ...) are passed on; ``warn=False`` silences the
    :class:`~sklearn.exceptions.ConvergenceWarning` (for inner solves whose
    result is only a start point).
    """
    import warnings

    from sklearn.exceptions import ConvergenceWarning

    if solver not in SOLVERS:
        raise ValueError(f"solver must be one of {sorted(SOLVERS)}, got {solver!r}.")
    with warnings.catch_warnings():
        if not warn:
            warnings.simplefilter("ignore", ConvergenceWarning)
        return SOLVERS[solver](objective, w0, z0, newton=newton, **options)
