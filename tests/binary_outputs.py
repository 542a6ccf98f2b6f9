"""Binary outputs shared by the tests, built once per session (``conftest.py``).

In-sample outputs (``cv="in_sample"``): the tests that use them are about the
aggregation problem and its solvers, not about the folds, and one set of binaries
trains in seconds where five folds of them take minutes. The golden masters of
``tests/data/`` are computed on these same outputs (``tests/data/regenerate.py``).
"""

import numpy as np
from sklearn.datasets import load_digits
from sklearn.linear_model import LogisticRegression
from sklearn.preprocessing import StandardScaler

from convexagg import CodeMatrixClassifier
from convexagg.batched_logistic import per_binary_path


def _in_sample(X, y, code, random_state=None):
    # scikit-learn's own fits, one by one: the golden masters were computed on their
    # outputs (the batched trainer stops at the exact optimum instead)
    with per_binary_path():
        clf = CodeMatrixClassifier(
            LogisticRegression(max_iter=200), code=code, cv="in_sample", random_state=random_state
        ).fit(X, y)
    return clf.predict_binary_proba(X), y, clf.code_matrix_


def digits_outputs():
    """``{code: (Q, y, code_matrix)}`` on the standardised digits, for ovr, ovo and ecoc."""
    X, y = load_digits(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    return {code: _in_sample(X, y, code, random_state=0) for code in ("ovr", "ovo", "ecoc")}


def digits_complete_outputs():
    """``(Q, y, code_matrix)`` of the complete code on the digits 0-8 (255 binaries)."""
    X, y = load_digits(return_X_y=True)
    keep = y < 9
    return _in_sample(StandardScaler().fit_transform(X[keep]), y[keep], "complete")


def fingerprint(Q, y, code):
    """What identifies a problem's inputs: shapes, the code, the labels' counts, and the
    outputs' column means and row-weighted sums (which also see a reordering of rows)."""
    Q = np.asarray(Q, dtype=np.float64)
    rows = np.linspace(0.0, 1.0, Q.shape[0])
    return {
        "Q_shape": list(Q.shape),
        "code": np.asarray(code).astype(int).tolist(),
        "y_counts": np.unique(y, return_counts=True)[1].tolist(),
        "Q_column_means": Q.mean(axis=0).tolist(),
        "Q_row_weighted": (rows @ Q / Q.shape[0]).tolist(),
    }


def noisy_code_outputs(code, n, seed=0):
    """``(Q, y)``: ``n`` synthetic binary outputs that carry the label (0.8 / 0.2 on
    a column's two sides, 0.5 off it), noisier for odd classes, every class present."""
    rng = np.random.default_rng(seed)
    K, M = code.shape
    y = rng.integers(0, K, size=n)
    y[:K] = np.arange(K)
    truth = np.where(code[y] == 1, 0.8, np.where(code[y] == -1, 0.2, 0.5))
    Q = np.clip(truth + rng.normal(scale=0.25, size=(n, M)) * (1 + y[:, None] % 2), 0.02, 0.98)
    return Q, y
