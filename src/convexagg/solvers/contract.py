"""What the solvers ask of an objective: the contract, declared and checked.

The solvers import nothing else of the library; they work on any object with
the attributes of :class:`Objective` (the model's objectives in
:mod:`convexagg.aggregation` are such objects). Which of the
optional methods a solver needs depends on its settings (a dense Newton system
needs ``hessian``, PCG needs ``hessp`` and ``hess_diag``, a subsample start
needs ``take``); each solver configuration lists them
(``SolverConfig.required_methods``) and :func:`check_objective` names what an
objective lacks before any work is done.

Variables. ``x = [w, b]``: the ``n_weights`` aggregation weights, constrained
to ``w >= 0``, then ``n_intercepts`` free class intercepts (0 in the paper's
model). An objective may free the last of its weights in sign (the model's
zero entries): its optional ``n_nonnegative`` counts the weights held
``>= 0``, which come first (:func:`n_nonnegative`); the solvers treat the rest
as they treat intercepts.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np

__all__ = ["Objective", "check_objective", "n_nonnegative"]

# every objective has these; the optional methods are named by the solver
REQUIRED = ("n_samples", "n_weights", "n_intercepts", "n_variables", "evaluate", "value")
# what an objective may offer besides, and nothing else is read of it
OPTIONAL = ("hessp", "hess_diag", "hessian", "take", "with_penalty", "penalty", "n_nonnegative")


@runtime_checkable
class Objective(Protocol):
    """A smooth convex ``f(x)`` over ``x = [w >= 0, b free]``, as the solvers see it.

    Required: ``n_samples``, ``n_weights``, ``n_intercepts``, ``n_variables``,
    ``evaluate(x) -> point`` (a point with ``x``, ``value`` and ``grad``, and
    whatever the objective's derivatives need), ``value(x) -> float``. Optional, by solver setting:
    ``hessp(point, v)``, ``hess_diag(point)``, ``hessian(point, variables=None)``
    (dense; its block on the increasing indices ``variables`` when given),
    ``take(rows, dtype=None)`` (the same objective on a subset of the samples,
    optionally stored in another precision),
    ``with_penalty(penalty)`` (the same data under another penalty) and
    ``penalty`` (an object with ``l2`` and ``l1``: the objective contains
    ``l2 / 2 |w|^2 + l1 sum(w)``; the equal-weights start bounds its search
    with it, and searches up to ``1e4`` without it), ``n_nonnegative`` (the
    weights held ``>= 0``, first; all ``n_weights`` without it).
    """

    n_samples: int
    n_weights: int
    n_intercepts: int

    @property
    def n_variables(self) -> int:
        """Number of variables: ``n_weights + n_intercepts``."""
        ...

    def evaluate(self, x: np.ndarray):
        """Evaluate the objective and its gradient at ``x``.

        Parameters
        ----------
        x : ndarray of shape (n_variables,)
            Weights, then intercepts.
        """
        ...

    def value(self, x: np.ndarray) -> float:
        """Evaluate the objective alone at ``x``.

        Parameters
        ----------
        x : ndarray of shape (n_variables,)
            Weights, then intercepts.
        """
        ...


def n_nonnegative(objective):
    """The number of variables held ``>= 0``: the first ``n_nonnegative`` weights.

    Parameters
    ----------
    objective : object
        An objective of the contract.

    Returns
    -------
    n : int
        ``objective.n_nonnegative`` when it has it, else ``objective.n_weights``.
    """
    n = getattr(objective, "n_nonnegative", None)
    return objective.n_weights if n is None else int(n)


def check_objective(objective, methods=(), solver=None):
    """Raise a ``TypeError`` naming every attribute of the contract ``objective`` lacks.

    Parameters
    ----------
    objective : object
        The objective to check.
    methods : iterable of str
        The optional methods the caller needs beyond :data:`REQUIRED`.
    solver : str, default=None
        Who asks, for the message.

    Returns
    -------
    objective : object
        ``objective`` itself, when it has everything.
    """
    missing = [name for name in (*REQUIRED, *methods) if getattr(objective, name, None) is None]
    if missing:
        who = f"{solver} needs" if solver else "the solvers need"
        raise TypeError(
            f"{type(objective).__name__} is not a usable objective: {who} "
            f"{', '.join(missing)}, which it lacks (see convexagg.solvers.Objective)."
        )
    return objective
