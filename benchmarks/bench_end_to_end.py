"""Target 5: ConvexAggregationClassifier against scikit-learn's OneVsOneClassifier, end to end.

    python benchmarks/bench_end_to_end.py [--data-dir DIR] [--repeat 7] [--n-jobs 1,2]

Both wrap ``LogisticRegression()`` with the same ``n_jobs`` and are fitted on the
18,000 standardised letter training rows (one-vs-one: 325 binary problems).
Repetitions alternate between the two, so a change in the machine's load hits
both alike. The convex aggregation is timed with the library's default solver
and with the paper's Algorithm 1 (``solver="interior_point"``); the script also records where
its extra time goes (fitting the binaries, their outputs on the training rows,
the weights) and that it gives probabilities where OneVsOneClassifier has none.
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C  # noqa: E402


def main():
    from sklearn.linear_model import LogisticRegression
    from sklearn.multiclass import OneVsOneClassifier

    from convexagg import ConvexAggregationClassifier

    p = C.parser(__doc__.splitlines()[0])
    p.add_argument("--n-jobs", default="1,2", help="comma-separated n_jobs values")
    args = p.parse_args()
    repeat = 1 if args.quick else args.repeat
    C.limit_blas(args)
    info = C.machine()
    X, X_te, y, y_te = C.letter_split(args.data_dir)
    if args.quick:
        X, y = X[::10], y[::10]

    makers = {
        "OneVsOneClassifier": lambda j: OneVsOneClassifier(LogisticRegression(), n_jobs=j),
        "ConvexAggregation (default solver)": lambda j: ConvexAggregationClassifier(
            LogisticRegression(), code="ovo", n_jobs=j
        ),
        "ConvexAggregation (paper's Algorithm 1)": lambda j: ConvexAggregationClassifier(
            LogisticRegression(), code="ovo", n_jobs=j, solver="interior_point"
        ),
    }
    rows, results = [], {}
    for n_jobs in [int(j) if j != "None" else None for j in args.n_jobs.split(",")]:
        for make in makers.values():  # warm-up: worker pools, imports, caches
            make(n_jobs).fit(X[:2000], y[:2000])
        times = {name: [] for name in makers}
        fitted = {}
        for _ in range(repeat):
            for name, make in makers.items():
                est = make(n_jobs)
                t0 = time.perf_counter()
                est.fit(X, y)
                times[name].append(time.perf_counter() - t0)
                fitted[name] = est
        base = min(times["OneVsOneClassifier"])
        base_median = statistics.median(times["OneVsOneClassifier"])
        for name, t in times.items():
            est = fitted[name]
            rows.append(
                {
                    "n_jobs": n_jobs,
                    "estimator": name,
                    "best": min(t),
                    "median": statistics.median(t),
                    "ratio": min(t) / base,
                    "median_ratio": statistics.median(t) / base_median,
                    "accuracy": float(np.mean(est.predict(X_te) == y_te)),
                    "predict_proba": hasattr(est, "predict_proba"),
                }
            )
        # where the convex aggregation's time goes (one more fit, timed by stage)
        from convexagg.binary import fit_binaries, predict_binaries
        from convexagg.codes import one_vs_one
        from convexagg.decoders import ConvexDecoder

        code = one_vs_one(26)
        t0 = time.perf_counter()
        est = fit_binaries(LogisticRegression(), X, y, code, n_jobs=n_jobs)
        t1 = time.perf_counter()
        Q = predict_binaries(est, X, "proba", n_jobs=n_jobs)
        t2 = time.perf_counter()
        ConvexDecoder().fit(Q, y, code)
        t3 = time.perf_counter()
        ConvexDecoder(solver="interior_point").fit(Q, y, code)
        t4 = time.perf_counter()
        results[f"stages_n_jobs_{n_jobs}"] = {
            "fit_binaries": t1 - t0,
            "predict_binaries": t2 - t1,
            "decoder_default": t3 - t2,
            "decoder_paper": t4 - t3,
        }
        print(
            f"n_jobs={n_jobs}: "
            + ", ".join(
                f"{r['estimator']} {r['best']:.2f} s" for r in rows if r["n_jobs"] == n_jobs
            ),
            flush=True,
        )
    results["rows"] = rows
    text = [
        f"## End to end: letter one-vs-one, {X.shape[0]} training rows, "
        f"LogisticRegression() binaries, best / median of {repeat}",
        "",
        C.header(info),
        "",
    ]
    text.append(
        C.table(
            rows,
            [
                ("n_jobs", "n_jobs", None),
                ("estimator", "estimator", None),
                ("best", "best s", "{:.2f}"),
                ("median", "median s", "{:.2f}"),
                ("ratio", "best / OvO best", "{:.2f}"),
                ("median_ratio", "median / OvO median", "{:.2f}"),
                ("accuracy", "test accuracy", "{:.4f}"),
                ("predict_proba", "predict_proba", None),
            ],
        )
    )
    text.append("")
    for key, st in results.items():
        if key.startswith("stages"):
            text.append(f"{key}: " + ", ".join(f"{k} {v:.3f} s" for k, v in st.items()))
    C.finish(args, info, results, "\n".join(text))


if __name__ == "__main__":
    main()
