"""GBTM's Newton safeguard survives an exactly singular Hessian (seen on letter's sparse
ECOC code, where several class probabilities sit at the e^-300 floor)."""

import numpy as np

from convexagg.decoders.gbtm import solve_rows


def test_singular_rows_become_nan_and_the_others_are_solved():
    H = np.array([np.eye(3) * 2.0, np.zeros((3, 3)), [[2.0, 1, 0], [1, 2, 0], [0, 0, 1]]])
    g = np.ones((3, 3))
    d = solve_rows(H, g)
    assert np.allclose(d[0], 0.5) and np.isnan(d[1]).all()
    assert np.allclose(H[2] @ d[2], g[2])
