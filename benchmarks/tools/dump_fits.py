"""Every fitted number of bench_fit.py's settings, to compare two versions of the library.

    PYTHONPATH=<src of version A> python benchmarks/tools/dump_fits.py --out a.npz
    PYTHONPATH=<src of version B> python benchmarks/tools/dump_fits.py --out b.npz
    python benchmarks/tools/dump_fits.py --compare a.npz b.npz

On the letter workload's binary outputs (``lib/workloads.py``; the codes of
bench_fit.py), for each of its solver settings: ``ConvexDecoder().fit``'s
weights, intercepts and objective; the section-4 formulations (large margin,
stiffness) on one-vs-rest; a 13-point regularisation path (weights and
objectives, validation log-loss on the test outputs); and
``ConvexAggregationClassifierCV`` on scikit-learn's digits. ``--compare``
prints the largest difference of every array and fails above ``--atol``
(1e-12). Refactorings that must not change a number are checked with it.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from lib import common as C  # noqa: E402
from lib import workloads as W  # noqa: E402


def dump(args):
    from sklearn.datasets import load_digits
    from sklearn.linear_model import LogisticRegression

    from convexagg import ConvexAggregationClassifierCV, ConvexDecoder, regularization_path
    from convexagg.solvers import InteriorPoint

    out = {}
    for code_name, n_classes in (("ovo", 26), ("ovr", 26), ("sparse_random", 26), ("complete", 11)):
        data = W.letter_workload(args, code_name, n_classes=n_classes)
        Q, y, code = data["Q"], data["y"], data["code"]
        for i, (_, solver) in enumerate(W.solver_settings()):
            dec = ConvexDecoder(solver=solver).fit(Q, y, code)
            key = f"{code_name}/setting{i}"
            out[f"{key}/weights"] = dec.weights_
            out[f"{key}/objective"] = np.array([dec.objective_])
            out[f"{key}/n_iter"] = np.array([dec.n_iter_])
        if code_name == "ovr":
            for formulation in ("large_margin", "stiffness"):
                dec = ConvexDecoder(formulation=formulation, fit_intercept=True).fit(Q, y, code)
                out[f"ovr/{formulation}/weights"] = dec.weights_
                out[f"ovr/{formulation}/intercept"] = dec.intercept_
                out[f"ovr/{formulation}/objective"] = np.array([dec.objective_])
            # what 0.1's ConvexDecoder(tol=1e-6) meant: the paper's interior point at that tol
            dec = ConvexDecoder(solver=InteriorPoint(tol=1e-6)).fit(Q, y, code)
            out["ovr/legacy/weights"] = dec.weights_
        if code_name in ("ovo", "ovr"):
            path = regularization_path(
                Q, y, code, np.logspace(-6, 0, 13), Q_val=data["Q_test"], y_val=data["y_test"]
            )
            for name in ("weights", "objective", "val_log_loss", "n_iter"):
                out[f"{code_name}/path/{name}"] = np.asarray(getattr(path, name), dtype=float)
    X, y = load_digits(return_X_y=True)
    X = X / 16.0
    for cv in ("in_sample", 3):
        # a seed: without one the folds are shuffled anew each run, and the weights differ
        clf = ConvexAggregationClassifierCV(
            LogisticRegression(max_iter=200),
            code="ovr",
            alphas=5,
            alpha_cv=3,
            cv=cv,
            random_state=0,
        ).fit(X, y)
        out[f"digits/cv{cv}/cv_scores"] = clf.cv_scores_
        out[f"digits/cv{cv}/weights"] = clf.weights_
    np.savez(args.out, **out)
    print(f"{len(out)} arrays written to {args.out}")


def compare(a, b, atol):
    A, B = np.load(a), np.load(b)
    if set(A) != set(B):
        raise SystemExit(f"different keys: {sorted(set(A) ^ set(B))}")
    worst = 0.0
    for key in sorted(A):
        diff = float(np.max(np.abs(A[key] - B[key]), initial=0.0))
        worst = max(worst, diff)
        print(f"{key:40s} {diff:.3g}")
    print(f"largest difference over {len(A)} arrays: {worst:.3g}")
    if worst > atol:
        raise SystemExit(f"above atol={atol:g}")


def main():
    p = C.parser(__doc__.splitlines()[0])
    p.add_argument("--compare", nargs=2, metavar=("A", "B"))
    p.add_argument("--atol", type=float, default=1e-12)
    args = p.parse_args()
    if args.compare:
        compare(*args.compare, args.atol)
    else:
        dump(args)


if __name__ == "__main__":
    main()
