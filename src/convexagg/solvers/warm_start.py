"""Start points for the interior point method: warm starts (regularisation paths,
continuation in tau) and the equal-weights start."""

from __future__ import annotations

import numpy as np
from scipy.optimize import minimize_scalar

from .contract import n_nonnegative

__all__ = ["DEFAULT_SHIFT", "gradient_duals", "interior_warm_start", "uniform_start"]

DEFAULT_SHIFT = 1e-4


def interior_warm_start(objective, w, shift=None):
    """A strictly interior start ``(x0, z0)`` for :func:`interior_point` near ``w``.

    ``w`` is the solution of a neighbouring problem (the previous ``alpha`` of a
    regularisation path, the previous ``tau`` of a continuation). It sits on the
    boundary -- the weights it turned off are ~0 -- and its duals belong to the
    old problem. The start keeps ``w`` but moves it a fixed distance into the
    interior, and takes the duals from the *new* problem's gradient (at the
    optimum, ``z = grad f``; that gradient already carries the change of
    ``alpha`` or ``tau``)::

        w0 = max(w, shift),    z0 = max(grad_w f(w0), shift)

    so every complementarity product ``w0_l z0_l`` is at least ``shift^2``.

    Why a shift: from a point too close to the boundary the Newton steps are
    cut short by ``w > 0`` and ``z >= 0`` (the classic difficulty of warm
    starting interior point methods), from a point too far the warm start is
    forgotten. ``1e-4`` (:data:`DEFAULT_SHIFT`) balances the two: on the
    regularisation paths measured it is never worse than a cold start and saves
    about half the iterations, where smaller shifts can lose to a cold start
    (BENCHMARKS.md).

    Parameters
    ----------
    objective : Objective
        The new problem (``evaluate(x).grad``).
    w : ndarray of shape (n_variables,)
        The neighbouring solution (weights, then intercepts, which are free and
        kept as they are).
    shift : float, default=None
        ``DEFAULT_SHIFT`` when None; must be ``> 0``.

    Returns
    -------
    x0 : ndarray of shape (n_variables,)
        The primal start: ``w`` moved into the interior.
    z0 : ndarray of shape (n_weights,)
        The dual start, from the new problem's gradient.
    """
    shift = DEFAULT_SHIFT if shift is None else float(shift)
    if not shift > 0:
        raise ValueError(f"shift must be > 0, got {shift!r}.")
    M = n_nonnegative(objective)
    x0 = np.array(w, dtype=np.float64)
    x0[:M] = np.maximum(x0[:M], shift)
    z0 = np.maximum(objective.evaluate(x0).grad[:M], shift)
    return x0, z0


def uniform_start(objective, search_rows=2000):
    """A start ``x0`` at the best equal weights: ``w0 = c* 1`` (intercepts 0).

    ``c*`` minimises ``f(c 1)`` over ``c > 0`` -- loss-based decoding with its
    temperature fitted by maximum likelihood -- found by a bounded Brent search
    on ``log c`` (``f`` is convex in ``c``, so unimodal in ``log c``) to 1%. On
    more than twice ``search_rows`` samples the search runs on every k-th of
    about ``search_rows`` of them (``objective.take``, when the objective has
    it): a start needs ``c*`` to a few percent, not the data's last digit, and
    the search's ~15 evaluations then cost about one pass over the data.

    The paper's start ``w = 1/M`` puts the weights two to three orders below
    their optimum on real problems (letter, one-vs-one: ``c* = 0.54`` against
    ``1/M = 0.003``), and the first interior point iterations are short steps
    spent closing that gap; from ``c* 1`` the interior point methods need about
    half the iterations (BENCHMARKS.md, "Which setting is faster where").

    Parameters
    ----------
    objective : Objective
        ``n_weights``, ``n_variables``, ``n_samples``, ``value(x)``; ``take``
        and ``penalty`` (the contract's optional attributes) are used when present.
    search_rows : int, default=2000
        Rows the search uses on large objectives.

    Returns
    -------
    x0 : ndarray of shape (n_variables,)
        ``c*`` for every weight, 0 for the intercepts.
    """
    M = objective.n_weights
    search = objective
    if getattr(objective, "take", None) is not None and objective.n_samples > 2 * search_rows:
        search = objective.take(slice(0, None, objective.n_samples // search_rows))
    x = np.zeros(objective.n_variables)

    def f(t):
        x[:M] = np.exp(t)
        return search.value(x)

    # the data term is >= 0 and f(0) is finite, so the penalty bounds c*:
    # (l2 / 2) M c^2 + l1 M c <= f(0)
    x[:M] = 0.0
    f0 = search.value(x)
    penalty = getattr(objective, "penalty", None)  # optional in the contract
    l2, l1 = getattr(penalty, "l2", 0.0), getattr(penalty, "l1", 0.0)
    hi = 1e4
    if l2 > 0:
        hi = min(hi, np.sqrt(2.0 * f0 / (l2 * M)))
    if l1 > 0:
        hi = min(hi, f0 / (l1 * M))
    res = minimize_scalar(
        f, bounds=(np.log(1e-6 * hi), np.log(hi)), method="bounded", options={"xatol": 1e-2}
    )
    x0 = np.zeros(objective.n_variables)
    x0[:M] = float(np.exp(res.x))
    return x0


def gradient_duals(grad, dual_floor=1e-3):
    """Compute duals for an interior point start: ``z0 = max(|g|, dual_floor * max |g|)``.

    At the optimum ``z = grad f``; its magnitudes give the scale where the
    paper's ``z = 1`` is far off (used with :func:`uniform_start`).

    Parameters
    ----------
    grad : ndarray of shape (n_weights,)
        The gradient with respect to the weights at the primal start.
    dual_floor : float, default=1e-3
        Smallest dual, relative to the largest.

    Returns
    -------
    z0 : ndarray of shape (n_weights,)
        Positive duals (ones when the gradient is zero).
    """
    g = np.abs(grad)
    top = g.max(initial=0.0)
    return np.maximum(g, dual_floor * top) if top > 0 else np.ones_like(g)
