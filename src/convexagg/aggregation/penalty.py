"""The penalty on the aggregation weights, one object for every objective.

On ``w >= 0`` the penalty of scikit-learn's elastic net,
``alpha * (r * |w|_1 + (1 - r) / 2 * |w|_2^2)``, is a quadratic plus a *linear*
term (``|w|_1 = sum(w)`` there): it adds ``l2 * w + l1`` to the gradient and
``l2`` to the Hessian diagonal, so every solver of the likelihood solves the L1
and elastic-net variants unchanged.

Class intercepts ``b`` (``fit_intercept=True``), the free variables after the
weights, carry only a quadratic term of strength ``intercept_l2``: the softmax
is invariant to adding one constant to every ``b_k``, and the quadratic term
makes them unique (it picks ``sum(b) = 0``) and finite even for a class absent
from the training outputs. It is ``max(l2, 1e-6)``: the weights' strength,
with a floor for ``alpha = 0`` and the pure L1 penalty.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["INTERCEPT_L2_FLOOR", "MAX_ALPHA", "PENALTIES", "Penalty"]

PENALTIES = ("l2", "l1", "elasticnet")

# largest alpha accepted. Above about 1e6 the weights are 0 to working precision
# (probabilities uniform); the solvers agree to 1e-4 in objective up to 1e10 for every
# penalty, and from 1e12 (L1) / 1e14 (elastic net) the interior point ones stop far
# from the optimum, and at 1e308 alpha * |w|^2 overflows
# (benchmarks/scan_alpha_range.py: make_broken_classifier_outputs, alpha = 1 .. 1e20).
MAX_ALPHA = 1e10

# smallest quadratic penalty on the intercepts (see the module docstring)
INTERCEPT_L2_FLOOR = 1e-6


@dataclass(frozen=True)
class Penalty:
    """``R(w, b) = l2 / 2 |w|^2 + l1 sum(w) + intercept_l2 / 2 |b|^2`` on ``w >= 0``.

    Every method takes the full variable vector ``x = [w, b]`` with the
    ``n_weights`` weights first; without intercepts ``x = w``.

    Parameters
    ----------
    l2 : float, default=0.0
        Strength of the quadratic term on the weights (the paper's lambda, eq. 12).
    l1 : float, default=0.0
        Strength of the linear term ``sum(w)`` (the L1 norm on ``w >= 0``).
    intercept_l2 : float, default=0.0
        Strength of the quadratic term on the intercepts (:meth:`from_alpha`
        sets it to ``max(l2, 1e-6)``).
    """

    l2: float = 0.0
    l1: float = 0.0
    intercept_l2: float = 0.0

    def __post_init__(self):
        for name in ("l2", "l1", "intercept_l2"):
            value = float(getattr(self, name))
            if not (np.isfinite(value) and value >= 0):
                raise ValueError(f"penalty strength {name} must be finite and >= 0, got {value!r}.")
            object.__setattr__(self, name, value)

    @classmethod
    def from_alpha(cls, alpha, penalty="l2", l1_ratio=0.5):
        """Split the total strength ``alpha`` as scikit-learn's elastic net does.

        ``r = 0`` for ``"l2"`` (the paper's ``lambda/2 |w|^2``), ``r = 1`` for
        ``"l1"`` and ``r = l1_ratio`` for ``"elasticnet"``; then
        ``l2 = alpha (1 - r)`` and ``l1 = alpha r``, and the intercepts'
        ``intercept_l2 = max(l2, 1e-6)``.

        Parameters
        ----------
        alpha : float
            Total strength, ``>= 0``.
        penalty : {"l2", "l1", "elasticnet"}, default="l2"
            The kind of penalty.
        l1_ratio : float, default=0.5
            The L1 share for ``"elasticnet"``.

        Returns
        -------
        penalty : Penalty
            The split penalty.
        """
        if penalty not in PENALTIES:
            raise ValueError(f"penalty must be one of {PENALTIES}, got {penalty!r}.")
        if not 0.0 <= float(alpha) <= MAX_ALPHA:
            raise ValueError(f"alpha must be in [0, {MAX_ALPHA:g}], got {alpha!r}.")
        r = {"l2": 0.0, "l1": 1.0}.get(penalty, l1_ratio)
        if not 0.0 <= r <= 1.0:
            raise ValueError(f"l1_ratio must be in [0, 1], got {r!r}.")
        l2 = float(alpha) * (1.0 - r)
        return cls(l2=l2, l1=float(alpha) * r, intercept_l2=max(l2, INTERCEPT_L2_FLOOR))

    def _diagonal(self, n_weights, n_variables):
        d = np.full(n_variables, self.intercept_l2)
        d[:n_weights] = self.l2
        return d

    def value(self, x, n_weights):
        """Evaluate ``R(x)``.

        Parameters
        ----------
        x : ndarray of shape (n_variables,)
            Weights, then intercepts.
        n_weights : int
            Number of weights (the first entries of ``x``).

        Returns
        -------
        value : float
            The penalty.
        """
        w, b = x[:n_weights], x[n_weights:]
        return (
            0.5 * self.l2 * float(w @ w)
            + self.l1 * float(np.sum(w))
            + 0.5 * (self.intercept_l2 * float(b @ b))
        )

    def grad(self, x, n_weights):
        """Gradient of ``R`` at ``x``.

        Parameters
        ----------
        x : ndarray of shape (n_variables,)
            Weights, then intercepts.
        n_weights : int
            Number of weights (the first entries of ``x``).

        Returns
        -------
        grad : ndarray of shape (n_variables,)
            The gradient.
        """
        g = self._diagonal(n_weights, x.size) * x
        g[:n_weights] += self.l1
        return g

    def hess_diag(self, n_weights, n_variables):
        """The (diagonal) Hessian of ``R``.

        Parameters
        ----------
        n_weights : int
            Number of weights.
        n_variables : int
            Number of variables (weights, then intercepts).

        Returns
        -------
        diagonal : ndarray of shape (n_variables,)
            The Hessian's diagonal.
        """
        return self._diagonal(n_weights, n_variables)

    def hessp(self, v, n_weights):
        """``hess R @ v`` (the linear term has no curvature).

        Parameters
        ----------
        v : ndarray of shape (n_variables,)
            The vector.
        n_weights : int
            Number of weights (the first entries of ``v``).

        Returns
        -------
        Hv : ndarray of shape (n_variables,)
            The product.
        """
        return self._diagonal(n_weights, v.size) * v

    def add_to_hessian(self, H, n_weights):
        """Add ``hess R`` to the dense Hessian ``H`` in place.

        Parameters
        ----------
        H : ndarray of shape (n_variables, n_variables)
            A dense Hessian.
        n_weights : int
            Number of weights (the first rows and columns of ``H``).

        Returns
        -------
        H : ndarray of shape (n_variables, n_variables)
            ``H`` itself.
        """
        H[np.diag_indices_from(H)] += self._diagonal(n_weights, H.shape[0])
        return H
