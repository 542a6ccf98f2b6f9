"""Data sets: the paper's synthetic studies (real data loaders come with the experiments)."""

from __future__ import annotations

import numpy as np
from sklearn.utils import check_random_state

from .codes import one_vs_one

__all__ = ["make_broken_classifier_outputs"]


def make_broken_classifier_outputs(n_per_class=100, random_state=None):
    """Binary outputs of the paper's synthetic 3-class study (section 5.2).

    Three one-vs-one classifiers: BC1 separates classes 1 and 2, BC2 classes 1
    and 3 (both work), BC3 classes 2 and 3 and fails. Outputs are generated
    directly, as in the paper (0-based classes here)::

        BC1 (0 vs 1): 0.9 + 0.1 u  on class 0,   0.1 + 0.1 u  on class 1
        BC2 (0 vs 2): 0.6 + 0.4 u  on class 0,   0.1 + 0.1 u  on class 2
        BC3 (1 vs 2): 0.5 + 0.5 r(v) u  on classes 1 and 2
        a classifier's output on the class it does not use: u

    with ``u, v ~ U[0, 1]`` drawn independently for every entry and
    ``r(a) = 1 if a > 0.5 else -1``. Reading of the paper's ambiguities: its
    ``r(v_{3,1})`` for class 3 is taken as the typo of ``r(v_{3,i})`` (one draw
    per sample, as for class 2), and its columns are ordered (0,1), (0,2), (1,2)
    as its text describes, not as its Table 1 lists them.

    Parameters
    ----------
    n_per_class : int, default=100
    random_state : int, RandomState instance or None

    Returns
    -------
    Q : ndarray of shape (3 * n_per_class, 3)
    y : ndarray of shape (3 * n_per_class,)
        Class indices 0, 1, 2 (``n_per_class`` of each, in blocks).
    code : ndarray of shape (3, 3)
        The one-vs-one code.
    """
    rng = check_random_state(random_state)
    n = n_per_class
    y = np.repeat(np.arange(3), n)
    Q = rng.uniform(size=(3 * n, 3))  # the don't-care entries stay uniform
    u = rng.uniform(size=(3 * n, 3))
    r = np.where(rng.uniform(size=3 * n) > 0.5, 1.0, -1.0)
    c0, c1, c2 = (y == 0), (y == 1), (y == 2)
    Q[c0, 0] = 0.9 + 0.1 * u[c0, 0]
    Q[c1, 0] = 0.1 + 0.1 * u[c1, 0]
    Q[c0, 1] = 0.6 + 0.4 * u[c0, 1]
    Q[c2, 1] = 0.1 + 0.1 * u[c2, 1]
    broken = c1 | c2
    Q[broken, 2] = 0.5 + 0.5 * r[broken] * u[broken, 2]
    return Q, y, one_vs_one(3)
