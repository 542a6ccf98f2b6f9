"""What every solver returns, and the bookkeeping they share."""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np
from sklearn.exceptions import ConvergenceWarning

__all__ = ["SolverResult", "History"]


@dataclass
class SolverResult:
    """Outcome of a solver run.

    Attributes
    ----------
    w : ndarray of shape (n_variables,)
        The solution: the aggregation weights, then the class intercepts if
        the objective has them.
    z : ndarray of shape (n_weights,) or None
        Dual variables of ``w >= 0`` (interior point methods; an estimate
        ``max(grad, 0)`` for the others).
    n_iter : int
        Iterations taken.
    converged : bool
    message : str
        Why it stopped: ``"converged"``, ``"max_iter"``, ``"line_search"`` (no
        step reduced the merit function further) or ``"nonfinite_direction"``.
    history : dict of ndarray
        Per iteration (index 0 is the start point); the keys depend on the
        solver: ``objective`` always, ``weights`` (``x`` itself), and for
        instance ``gap``, ``residual``, ``step``, ``mu``, ``cg_iter``.
    n_evaluations : int
        Evaluations of the objective (passes over the data).
    newton_matrix : NewtonMatrix or None
        What the projected Newton method's ``"lagged"`` steps kept (a factorised
        Hessian, the products spent without one), for a run warm-started from
        this result; not part of the solution (the decoders' solve loop hands it
        on and keeps none).
    """

    w: np.ndarray
    z: np.ndarray | None
    n_iter: int
    converged: bool
    history: dict = field(default_factory=dict)
    message: str = ""
    n_evaluations: int = 0
    newton_matrix: object = field(default=None, repr=False, compare=False)


class History:
    """Per-iteration records of a run, reported to an optional ``callback``.

    ``callback(record)`` receives each record (a dict: ``iteration`` and the
    run's keys) as it is appended; the estimators' ``verbose`` prints them.
    """

    def __init__(self, keys, callback=None):
        self.keys = tuple(keys)
        self.data = {key: [] for key in self.keys}
        self.callback = callback

    def record(self, **values):
        for key in self.keys:
            value = values[key]
            self.data[key].append(value.copy() if isinstance(value, np.ndarray) else value)
        if self.callback is not None:
            record = {"iteration": len(self.data[self.keys[0]]) - 1}
            record.update({k: v for k, v in values.items() if k != "weights"})
            self.callback(record)

    def last(self, key):
        return self.data[key][-1]

    def arrays(self):
        return {key: np.asarray(val) for key, val in self.data.items()}


def finish(x, z, n_iter, reason, history, tol, name, why, n_evaluations, summary):
    """The :class:`SolverResult`; a ``ConvergenceWarning`` saying why unless converged.

    ``why`` maps a stop reason to advice; ``summary`` describes the last iterate.
    """
    converged = reason == "converged"
    if not converged:
        warnings.warn(
            f"the {name} stopped after {n_iter} iterations without reaching tol={tol} "
            f"({summary}): {why[reason]}.",
            ConvergenceWarning,
            stacklevel=3,
        )
    return SolverResult(
        w=x,
        z=z,
        n_iter=n_iter,
        converged=converged,
        history=history.arrays(),
        message=reason,
        n_evaluations=n_evaluations,
    )


def finite(point):
    """The objective's value and gradient at ``point`` are finite."""
    return bool(np.isfinite(point.value) and np.isfinite(point.grad).all())


def check_start(objective, x0):
    """``(x, point)`` at a start ``x0`` whose weights are ``>= 0`` and whose objective
    and gradient are finite; ``ValueError`` otherwise."""
    x = np.array(x0, dtype=np.float64)
    if x.shape != (objective.n_variables,):
        raise ValueError(
            f"the start point must have {objective.n_variables} entries, got shape {x.shape}."
        )
    point = objective.evaluate(x)
    if not finite(point):
        raise ValueError(
            "the objective or its gradient is not finite at the start point; the "
            "per-classifier losses must be finite."
        )
    return x, point
