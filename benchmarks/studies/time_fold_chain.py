"""The fold binaries of LogisticRegression columns: each fold from the previous fold's
solution (the library's path) against independent cold fits. Backs BENCHMARKS.md, "The
classifier end to end".

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 PYTHONPATH=src python \
        benchmarks/studies/time_fold_chain.py [--data-dir DIR] [--repeat 3] [--out FILE]

letter (the standardised 18,000 training rows), 5 shuffled stratified folds (seed 0),
``LogisticRegression()`` binaries of the one-vs-one (325) and one-vs-rest (26) codes,
``fold_binaries`` as the classifier calls it on the per-binary path (each binary by its
learner's own ``fit``, as for the learners the batched trainer does not take;
:func:`convexagg.batched_logistic.per_binary_path`), in one process, the two paths
alternating: the chain (:func:`convexagg.out_of_fold.starts_folds_warm`) and the same call
with the chain switched off. Reports each path's best and median seconds, the mean
L-BFGS iterations per binary, and how far each path's out-of-fold outputs are from the
optimum (the same binaries solved to ``tol=1e-10`` by Newton's method, once, untimed:
max and mean absolute difference). Both paths stop within L-BFGS's ``tol=1e-4``; the
chain moves where, not how far from the optimum.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from unittest import mock

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from lib import common as C  # noqa: E402
from lib import workloads as W  # noqa: E402


def main():
    import warnings

    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import StratifiedKFold

    import convexagg.out_of_fold as out_of_fold
    from convexagg.batched_logistic import per_binary_path
    from convexagg.codes import make_code

    args = C.parser(__doc__.splitlines()[0]).parse_args()
    repeat = 1 if args.quick else args.repeat
    C.limit_blas(args)
    info = C.machine()
    warnings.filterwarnings("ignore")  # lbfgs iteration limits of a few binaries
    X, _, y, _ = W.letter_split(args.data_dir)
    if args.quick:
        X, y = X[:3000], y[:3000]
    splits = list(StratifiedKFold(5, shuffle=True, random_state=0).split(X, y))
    rows, results = [], {}
    for code_name in ["ovo", "ovr"]:
        code = make_code(code_name, 26)
        runs = {"chained": [], "cold": []}
        fits = {}
        for _ in range(repeat):
            for path in runs:
                chained = path == "chained"
                warm = mock.patch.object(out_of_fold, "starts_folds_warm", lambda e, c=chained: c)
                with warm, per_binary_path():
                    start = time.perf_counter()
                    fits[path] = out_of_fold.fold_binaries(
                        LogisticRegression(), X, y, code, splits, "proba"
                    )
                    runs[path].append(time.perf_counter() - start)
        iterations = {
            path: float(np.mean([est.n_iter_[0] for fold in members for est in fold]))
            for path, (members, _, _) in fits.items()
        }
        tight = LogisticRegression(solver="newton-cholesky", tol=1e-10, max_iter=500)
        optimum = out_of_fold.fold_binaries(tight, X, y, code, splits, "proba", keep=False)[1]
        gaps = {path: np.abs(fit[1] - optimum) for path, fit in fits.items()}
        results[code_name] = {
            path: {
                **C.summary(ts),
                "iterations": iterations[path],
                "max_abs_diff_from_optimum": float(gaps[path].max()),
                "mean_abs_diff_from_optimum": float(gaps[path].mean()),
            }
            for path, ts in runs.items()
        }
        for path, ts in runs.items():
            rows.append(
                {
                    "code": f"{code_name} ({code.shape[1]} columns x 5 folds)",
                    "path": path,
                    "best": min(ts),
                    "median": float(np.median(ts)),
                    "iterations": iterations[path],
                    "ratio": min(ts) / min(runs["cold"]),
                    "diff": f"{gaps[path].max():.1e} / {gaps[path].mean():.1e}",
                }
            )
    text = (
        C.header(info)
        + "\n\n"
        + C.table(
            rows,
            [
                ("code", "code", None),
                ("path", "fold binaries", None),
                ("best", "best (s)", "{:.2f}"),
                ("median", "median (s)", "{:.2f}"),
                ("iterations", "L-BFGS iterations per binary", "{:.1f}"),
                ("ratio", "best x cold", "{:.2f}"),
                ("diff", "outputs: max / mean abs. difference from the optimum", None),
            ],
        )
    )
    C.finish(args, info, results, text)


if __name__ == "__main__":
    main()
