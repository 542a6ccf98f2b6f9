"""An objective evaluated at a point: what every objective's ``evaluate`` returns."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["Point"]


@dataclass
class Point:
    """The objective evaluated at ``x``: value, gradient and the class probabilities ``P``.

    Attributes
    ----------
    x : ndarray of shape (n_variables,)
        Where the objective was evaluated.
    value : float
        The objective.
    grad : ndarray of shape (n_variables,)
        Its gradient (a subgradient for the large-margin objective).
    P : ndarray of shape (n_samples, n_classes) or None
        Class probabilities; objectives whose samples live elsewhere (Dask)
        leave it None and carry what their derivatives need.
    """

    x: np.ndarray
    value: float
    grad: np.ndarray
    P: np.ndarray | None = None

    @property
    def w(self):
        """Alias of ``x`` (kept for code written before intercepts)."""
        return self.x
