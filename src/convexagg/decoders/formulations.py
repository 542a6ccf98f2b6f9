"""The convex decoder's training criteria: which solver fits each, and the objectives it solves.

The solvers (:mod:`convexagg.solvers`) know no formulation: they minimise an
objective through its contract. This table, on the decoder's side, says which
solver configurations each of :class:`~convexagg.ConvexDecoder`'s formulations
takes (``"auto"`` included), which of their settings it cannot use, and builds
the objectives of one point of a path (one ``alpha``): the likelihood (eq. 12),
the large-margin criterion (eq. 27), or the stiffness continuation (eq. 30, one
objective per ``tau``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sklearn.utils._param_validation import StrOptions

from ..aggregation import LargeMarginObjective, StiffnessObjective, stack_losses
from ..losses import binary_losses
from ..solvers import (
    LBFGSB,
    SOLVER_NAMES,
    InteriorPoint,
    ProjectedNewton,
    ProjectedSubgradient,
    SolverConfig,
    resolve_solver,
    tau_schedule,
)

__all__ = ["BY_NAME", "SOLVER_CONSTRAINT", "Formulation", "solver_for"]

#: ``_parameter_constraints`` of the ``solver`` parameter
SOLVER_CONSTRAINT = [StrOptions(set(SOLVER_NAMES)), SolverConfig]

_SMOOTH = (InteriorPoint, ProjectedNewton, LBFGSB)


@dataclass(frozen=True)
class Formulation:
    """A training criterion of the convex decoder and the solvers that minimise it.

    Attributes
    ----------
    name : str
        The ``formulation`` value.
    auto : type
        The configuration ``solver="auto"`` means.
    solvers : tuple of type
        The configurations that can minimise it.
    restricted : dict
        ``{configuration class: {setting: allowed values}}``: settings it cannot use.
    """

    name: str
    auto: type
    solvers: tuple
    restricted: dict = field(default_factory=dict)

    def check(self, config, restricted=None, what=None):
        """Raise a ``ValueError`` naming the formulation and the setting ``config`` cannot use.

        Parameters
        ----------
        config : SolverConfig
            The resolved configuration.
        restricted : dict, default=None
            ``{configuration class: {setting: allowed values}}`` of another
            context (a fit on Dask arrays); the formulation's own when None.
        what : str, default=None
            That context, for the message.
        """
        name = type(config).__name__
        # a configuration of the user's own (a SolverConfig subclass) minimises smooth objectives
        smooth = not isinstance(config, ProjectedSubgradient)
        if not (isinstance(config, self.solvers) or (smooth and self.solvers is _SMOOTH)):
            takes = (
                "ProjectedSubgradient (solver='projected_subgradient' or 'auto')"
                if self.auto is ProjectedSubgradient
                else "InteriorPoint, ProjectedNewton or LBFGSB"
            )
            raise ValueError(
                f"formulation={self.name!r} cannot be solved by {name}; it takes {takes}."
            )
        restricted = self.restricted if restricted is None else restricted
        what = f"formulation={self.name!r}" if what is None else what
        for setting, allowed in restricted.get(type(config), {}).items():
            value = getattr(config, setting)
            if value not in allowed:
                raise ValueError(
                    f"{what} cannot use {name}({setting}={value!r}); it allows "
                    f"{setting} in {sorted(allowed)}."
                )

    def objectives(self, problem, penalties, solver, tau=None, likelihood=None):
        """The objectives of each point of a path: one list per penalty, solved in order.

        Parameters
        ----------
        problem : AggregationProblem
            The validated data and model.
        penalties : iterable of Penalty
            One per point.
        solver : SolverConfig
            The configuration (the likelihood stores its losses in its
            ``storage_dtype``).
        tau : float, default=None
            The final stiffness of the continuation.
        likelihood : BlockedObjective or RecomputedObjective, default=None
            The problem's likelihood objective, when built already (by a choice
            among penalties): the likelihood's points swap its penalty rather
            than store the losses again.

        Yields
        ------
        stages : list of Objective
            The objectives of one point (several: the ``tau`` continuation).
        """
        if self.name == "likelihood":
            stored = likelihood
            for penalty in penalties:
                if stored is None:
                    stored = problem.likelihood(penalty, solver.storage_dtype(problem.n_losses))
                    yield [stored]
                else:
                    yield [stored.with_penalty(penalty)]
            return
        Q, code = problem.model_outputs()
        L = stack_losses(*binary_losses(Q, problem.loss, problem.output))
        kwargs = dict(fit_intercept=problem.fit_intercept, sample_weight=problem.sample_weight)
        for penalty in penalties:
            if self.name == "large_margin":
                yield [LargeMarginObjective(L, code, problem.y, penalty, **kwargs)]
            else:
                yield [
                    StiffnessObjective(L, code, problem.y, penalty, tau=t, **kwargs)
                    for t in tau_schedule(tau)
                ]


BY_NAME = {
    "likelihood": Formulation("likelihood", ProjectedNewton, _SMOOTH),
    "large_margin": Formulation("large_margin", ProjectedSubgradient, (ProjectedSubgradient,)),
    # the stiffness objectives store float64 losses and cannot be subsampled
    "stiffness": Formulation(
        "stiffness",
        ProjectedNewton,
        _SMOOTH,
        {
            InteriorPoint: {"init": {"fixed", "uniform"}, "dtype": {"float64"}},
            ProjectedNewton: {"dtype": {"auto", "float64"}},
            LBFGSB: {"dtype": {"float64"}},
        },
    ),
}

# out of core: a start that needs the data several times is refused
_DASK_RESTRICTED = {InteriorPoint: {"init": {"fixed"}}, LBFGSB: {"init": {"fixed"}}}


def solver_for(solver, formulation="likelihood", dask=False):
    """The configuration object for ``solver``, checked against ``formulation``.

    Parameters
    ----------
    solver : str or SolverConfig
        One of :data:`~convexagg.solvers.SOLVER_NAMES` or a configuration,
        returned as given (not copied).
    formulation : {"likelihood", "large_margin", "stiffness"}, default="likelihood"
        The decoder's training criterion (``"auto"`` depends on it).
    dask : bool, default=False
        Check the settings against a fit on Dask arrays.

    Returns
    -------
    solver : SolverConfig
        The validated configuration.
    """
    entry = BY_NAME[formulation]
    if isinstance(solver, str) and solver == "auto":
        solver = entry.auto()
    solver = resolve_solver(solver)
    if dask:
        entry.check(solver, _DASK_RESTRICTED, "a fit on Dask arrays")
    else:
        entry.check(solver)
    return solver
