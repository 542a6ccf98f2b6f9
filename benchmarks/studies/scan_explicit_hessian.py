"""Newton steps of the batched binaries by exact Hessians or by conjugate gradients, by the
number of features. Backs BENCHMARKS.md, "The logistic-regression binaries trained together".

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 PYTHONPATH=src python \
        benchmarks/studies/scan_explicit_hessian.py [--data-dir DIR] [--repeat 3] \
        [--out benchmarks/results/explicit_hessian.json]

The default learner's fold binaries (``StandardScaler`` + ``LogisticRegression``, the
one-vs-one-and-rest code, 5 shuffled stratified folds), ``fold_binaries`` as the classifier
calls it, with :data:`~convexagg.batched_logistic.EXPLICIT_HESSIAN_FEATURES` set so that
every fold takes one path and then the other, alternating in one process: on synthetic
sets of 2,000 rows and 4 classes with 24 to 128 features, and on the Kull et al. sets with
40 to 90 features (their first outer fold's training part, standardised). Reports each
path's best and median seconds and the ratio of the exact Hessians' best to the conjugate
gradients'; the two reach the same optimum (Newton's decrement below 1e-10 of the objective).
"""

from __future__ import annotations

import sys
import time
import warnings
from pathlib import Path
from unittest import mock

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from lib import common as C  # noqa: E402
from lib import kull as K  # noqa: E402

FEATURES = (24, 32, 40, 48, 56, 64, 80, 96, 128)
KULL_SETS = ("waveform-5000", "mfeat-zernike", "optdigits", "mfeat-karhunen", "libras")


def synthetic(n_features):
    from sklearn.datasets import make_classification

    return make_classification(
        2000,
        n_features,
        n_informative=n_features // 2,
        n_redundant=0,
        n_classes=4,
        n_clusters_per_class=1,
        random_state=0,
    )


def kull(name, data_dir):
    X, y, _ = K.load(name, str(Path(data_dir) / "kull2019"))
    X_train, y_train, _, _ = next(iter(K.splits(X, y)))
    return X_train, y_train


def scan(X, y, repeat):
    """Each path's seconds on ``X, y`` (alternating), as ``{path: [seconds]}``."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import StratifiedKFold
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    import convexagg.batched_logistic as batched
    from convexagg.codes import make_code
    from convexagg.out_of_fold import fold_binaries

    classes, y = np.unique(y, return_inverse=True)
    code = make_code("ovo+ovr", classes.size)
    splits = list(StratifiedKFold(5, shuffle=True, random_state=0).split(X, y))
    learner = make_pipeline(StandardScaler(), LogisticRegression())
    # the exact Hessians up to far more features than any set here, or none at all
    paths = {"exact Hessians": 10**6, "conjugate gradients": 0}
    times = {path: [] for path in paths}
    for _ in range(repeat + 1):  # the first pass warms up
        for path, limit in paths.items():
            with mock.patch.object(batched, "EXPLICIT_HESSIAN_FEATURES", limit):
                start = time.perf_counter()
                fold_binaries(learner, X, y, code, splits, "proba")
                times[path].append(time.perf_counter() - start)
    return {path: ts[1:] for path, ts in times.items()}


def main():
    parser = C.parser(__doc__.splitlines()[0])
    args = parser.parse_args()
    repeat = 1 if args.quick else args.repeat
    C.limit_blas(args)
    info = C.machine()
    warnings.filterwarnings("ignore")
    cases = [(f"synthetic, {d} features", lambda d=d: synthetic(d)) for d in FEATURES]
    if not args.quick:
        cases += [(name, lambda name=name: kull(name, args.data_dir)) for name in KULL_SETS]
    else:
        cases = cases[:2]
    rows, results = [], {}
    for name, load in cases:
        X, y = load()
        times = scan(X, y, repeat)
        exact, cg = times["exact Hessians"], times["conjugate gradients"]
        results[name] = {
            "rows": int(X.shape[0]),
            "features": int(X.shape[1]),
            **{path: C.summary(ts) for path, ts in times.items()},
            "ratio_best": min(exact) / min(cg),
            "ratio_median": float(np.median(exact) / np.median(cg)),
        }
        rows.append(
            {
                "set": name,
                "shape": f"{X.shape[0]} x {X.shape[1]}",
                "exact": f"{min(exact):.3f} / {np.median(exact):.3f}",
                "cg": f"{min(cg):.3f} / {np.median(cg):.3f}",
                "ratio": f"{results[name]['ratio_best']:.2f} / {results[name]['ratio_median']:.2f}",
            }
        )
        print(rows[-1], flush=True)
    text = (
        C.header(info)
        + "\n\n"
        + C.table(
            rows,
            [
                ("set", "set", None),
                ("shape", "training rows x features", None),
                ("exact", "exact Hessians, best / median (s)", None),
                ("cg", "conjugate gradients, best / median (s)", None),
                ("ratio", "exact / conjugate gradients, best / median", None),
            ],
        )
    )
    C.finish(args, info, results, text)


if __name__ == "__main__":
    main()
