"""Every fitted array of the default ``ConvexAggregationClassifier()``, to compare two versions.

    PYTHONPATH=<src of version A> python benchmarks/tools/dump_default_fits.py --out a.npz
    PYTHONPATH=<src of version B> python benchmarks/tools/dump_default_fits.py --out b.npz
    python benchmarks/tools/dump_default_fits.py --compare a.npz b.npz

What ``dump_fits.py`` leaves out: the default estimator, whose fit chooses the zero
entries' strength by cross-validation before it fits the aggregation. On wine, iris,
the first 600 rows of digits and the Kull et al. sets glass, ecoli and vehicle
(standardised; a quarter of the rows held out, seed 0), with ``cv=3`` and ``cv=5``
(``random_state=0``), and on the small sets also with a list of zero-entry strengths
and a list of shrinkages: the test probabilities, ``oof_proba_``, the decoder's
weights, intercepts, objective and iterations, and the chosen values and their
scores. ``--compare`` fails unless every array is equal, bit for bit (NaN equal
to NaN): refactorings of the fit must not change a number.
"""

from __future__ import annotations

import argparse
import sys
import warnings

import numpy as np

KULL = ("glass", "ecoli", "vehicle")
LISTS = ({}, {"zero_entry_penalty": [0.3, 0.01, 0.0]}, {"entry_weight_shrinkage": [0.01, 0.001]})


def _sets(kull_dir):
    import pandas as pd
    from sklearn.datasets import load_digits, load_iris, load_wine
    from sklearn.preprocessing import scale

    X, y = load_wine(return_X_y=True)
    yield "wine", scale(X), y
    X, y = load_iris(return_X_y=True)
    yield "iris", X, y
    X, y = load_digits(return_X_y=True)
    yield "digits", X[:600] / 16.0, y[:600]
    for name in KULL:
        frame = pd.read_csv(f"{kull_dir}/{name}.csv.gz")
        yield name, scale(frame.drop(columns="label").to_numpy(float)), frame["label"].to_numpy()


def dump(args):
    from convexagg import ConvexAggregationClassifier

    out = {}
    for name, X, y in _sets(args.kull_dir):
        test = np.random.RandomState(0).rand(len(y)) < 0.25
        for cv in (3, 5):
            for extra in LISTS if name != "digits" else LISTS[:1]:
                key = f"{name}/cv{cv}/{'+'.join(sorted(extra)) or 'default'}"
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    clf = ConvexAggregationClassifier(cv=cv, random_state=0, **extra)
                    clf.fit(X[~test], y[~test])
                out[f"{key}/proba"] = clf.predict_proba(X[test])
                out[f"{key}/oof_proba"] = clf.oof_proba_
                decoder = clf.decoder_
                for attr in ("weights_", "entry_weights_", "zero_entry_weights_", "intercept_"):
                    out[f"{key}/{attr}"] = getattr(decoder, attr)
                out[f"{key}/objective_"] = np.array([decoder.objective_, decoder.n_iter_])
                for attr in ("zero_entry_penalty", "entry_weight_shrinkage"):
                    value, scores = getattr(clf, f"{attr}_"), getattr(clf, f"{attr}_scores_")
                    out[f"{key}/{attr}_"] = np.array([np.nan if value is None else value])
                    out[f"{key}/{attr}_scores_"] = np.array([] if scores is None else scores)
    np.savez(args.out, **out)
    print(f"{len(out)} arrays written to {args.out}")


def compare(a, b):
    A, B = np.load(a), np.load(b)
    if set(A) != set(B):
        raise SystemExit(f"different keys: {sorted(set(A) ^ set(B))}")
    different = [
        key
        for key in sorted(A)
        if A[key].shape != B[key].shape or not np.array_equal(A[key], B[key], equal_nan=True)
    ]
    for key in different:
        print(f"{key}: different")
    print(f"{len(A) - len(different)} of {len(A)} arrays bit-identical")
    if different:
        raise SystemExit(1)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="default_fits.npz")
    parser.add_argument("--kull-dir", default="/work/shared/datasets/kull2019")
    parser.add_argument("--compare", nargs=2, metavar=("A", "B"))
    args = parser.parse_args()
    if args.compare:
        compare(*args.compare)
    else:
        dump(args)


if __name__ == "__main__":
    sys.exit(main())
