"""The workloads of the speed benchmarks: the letter data set's binary outputs, synthetic
one-vs-one outputs of any size, and the solver settings the fit benchmarks compare.

The letter workload: ``letter.csv.gz`` (label in the last column), standardised on a
stratified 90% training split (18,000 rows, ``random_state=0``; the other 2,000 rows
are the test rows), the one-vs-one code (325 classifiers, 26 classes),
``LogisticRegression()`` binaries fitted on the training rows, ``Q`` their
probabilities on the training rows, ``alpha = 1e-4``. ``Q`` is cached outside the
repository (``--cache-dir``), keyed by the content of its inputs.
"""

from __future__ import annotations

import csv
import gzip
import hashlib
import sys
from pathlib import Path

import numpy as np

ALPHA = 1e-4
# the training rows of a plumbing run (``--quick``): the first of the shuffled training part
QUICK_ROWS = 2000


def load_csv(name, data_dir):
    """``X`` (float) and ``y`` (str) of ``<data_dir>/<name>.csv.gz`` (label in the last column)."""
    path = Path(data_dir) / f"{name}.csv.gz"
    if not path.exists():
        sys.exit(f"{path} not found; pass --data-dir or set CONVEXAGG_DATA_DIR.")
    with gzip.open(path, "rt", newline="") as fh:
        rows = list(csv.reader(fh))
    body = rows[1:]
    X = np.array([r[:-1] for r in body], dtype=np.float64)
    y = np.array([r[-1] for r in body])
    return X, y


def letter_split(data_dir, max_rows=None):
    """Standardised letter, stratified 90/10 split (18,000 / 2,000 rows), labels 0..25;
    ``max_rows``: only the first ``max_rows`` training rows and a quarter as many test rows
    (a plumbing run's)."""
    from sklearn.model_selection import train_test_split
    from sklearn.preprocessing import LabelEncoder, StandardScaler

    X, labels = load_csv("letter", data_dir)
    y = LabelEncoder().fit_transform(labels)
    X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.1, stratify=y, random_state=0)
    if max_rows:
        X_tr, y_tr, X_te, y_te = (
            X_tr[:max_rows],
            y_tr[:max_rows],
            X_te[: max_rows // 4],
            y_te[: max_rows // 4],
        )
    scaler = StandardScaler().fit(X_tr)
    return scaler.transform(X_tr), scaler.transform(X_te), y_tr, y_te


def letter_workload(args, code_name="ovo", n_jobs=None, n_classes=26):
    """Binary outputs of the letter workload (cached by content of the inputs).

    ``n_classes < 26`` keeps the rows of the first ``n_classes`` classes (for codes
    that grow exponentially with the classes, such as the complete code). With
    ``args.quick``, the first :data:`QUICK_ROWS` training rows only.

    Returns a dict with ``Q``, ``y`` (training rows), ``Q_test``, ``y_test``,
    ``code``, ``X``, ``X_test``.
    """
    from sklearn.linear_model import LogisticRegression

    from convexagg.binary import fit_binaries, predict_binaries
    from convexagg.codes import make_code

    max_rows = QUICK_ROWS if getattr(args, "quick", False) else None
    X, X_te, y, y_te = letter_split(args.data_dir, max_rows)
    if n_classes < 26:
        keep, keep_te = y < n_classes, y_te < n_classes
        X, y, X_te, y_te = X[keep], y[keep], X_te[keep_te], y_te[keep_te]
    code = make_code(code_name, n_classes, random_state=0)
    key = hashlib.sha1(
        b"".join([X.tobytes(), y.tobytes(), code.tobytes(), b"LogisticRegression()"])
    ).hexdigest()[:16]
    cache = Path(args.cache_dir) / f"letter-{code_name}-{key}.npz"
    if cache.exists() and not args.no_cache:
        d = np.load(cache)
        Q, Q_te = d["Q"], d["Q_test"]
    else:
        est = fit_binaries(LogisticRegression(), X, y, code, n_jobs=n_jobs)
        Q = predict_binaries(est, X, "proba")
        Q_te = predict_binaries(est, X_te, "proba")
        cache.parent.mkdir(parents=True, exist_ok=True)
        np.savez(cache, Q=Q, Q_test=Q_te)
    return {"Q": Q, "y": y, "Q_test": Q_te, "y_test": y_te, "code": code, "X": X, "X_test": X_te}


def default_training_outputs(name, data_dir):
    """``(Q, y, code, decoder)`` of the default without zero entries fitted on ``name``'s
    training part (a stratified 90/10 split, seed 0, standardised; ``LogisticRegression()``
    binaries): its training outputs and its decoder, for refitting the aggregation alone."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import train_test_split
    from sklearn.preprocessing import StandardScaler

    from convexagg import ConvexAggregationClassifier

    X, y = load_csv(name, data_dir)
    X, _, y, _ = train_test_split(X, y, test_size=0.1, stratify=y, random_state=0)
    X = StandardScaler().fit_transform(X)
    clf = ConvexAggregationClassifier(LogisticRegression(), random_state=0, zero_entry_penalty=None)
    clf.fit(X, y)
    Q, y_fit, _ = clf.training_outputs(X, y)
    return Q, y_fit, clf.code_matrix_, clf.decoder_


# -- the solver settings the fit benchmarks compare ------------------------------------------


def solver_settings():
    """``[(label, solver)]``: the default, the paper's preset, version 0.1's fastest
    setting and the default method in double precision (what ``dtype="auto"`` buys)."""
    from convexagg.solvers import InteriorPoint, ProjectedNewton

    return [
        ("default (auto)", "auto"),
        ("paper's Algorithm 1 (interior_point)", "interior_point"),
        (
            "0.1's fastest: Mehrotra, direct, float32, subsample start",
            InteriorPoint(
                method="predictor_corrector", newton="direct", dtype="float32", init="subsample"
            ),
        ),
        ("projected Newton, float64", ProjectedNewton(dtype="float64")),
    ]


def synthetic_ovo_outputs(n, n_classes, seed=0, chunk=100_000, dtype=np.float64):
    """One-vs-one probabilities that carry class information (for scaling runs).

    Classifier ``l`` has quality ``s_l ~ U(0.5, 3)``; a sample of class ``k``
    gets margin ``code[k, l] s_l + N(0, 1)`` (pure noise for classes the
    classifier does not use), negated for 10% of the samples (label noise).
    """
    from convexagg.codes import one_vs_one

    rng = np.random.default_rng(seed)
    code = one_vs_one(n_classes)
    M = code.shape[1]
    signal = rng.uniform(0.5, 3.0, size=M)
    y = rng.integers(0, n_classes, size=n)
    Q = np.empty((n, M), dtype=dtype)
    for start in range(0, n, chunk):
        rows = slice(start, min(start + chunk, n))
        margin = code[y[rows]] * signal + rng.standard_normal((rows.stop - start, M))
        flip = rng.random(rows.stop - start) < 0.1
        margin[flip] *= -1
        Q[rows] = 1.0 / (1.0 + np.exp(-margin))
    return Q, y, code
