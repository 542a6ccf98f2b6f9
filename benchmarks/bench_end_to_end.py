"""End to end: ConvexAggregationClassifier against scikit-learn's one-vs-one estimators.

    python benchmarks/bench_end_to_end.py [--data-dir DIR] [--repeat 7] [--n-jobs 1,2]

The baselines wrap ``LogisticRegression()``; every estimator is fitted on the 18,000
standardised letter training rows (one-vs-one: 325 binary problems) with the
same ``n_jobs``; repetitions alternate between them, so a change in the
machine's load hits all alike. The baselines are ``OneVsOneClassifier`` (no
probabilities; the target: the paper's protocol at most 1.2x its time) and
``CalibratedClassifierCV(OneVsOneClassifier(...), method="temperature")`` with 5 folds
(probabilities out of fold, as the default's; the target: the default at most 1.2x its
time). The convex aggregation is timed as ``ConvexAggregationClassifier()`` gives it (its
default learner, a ``StandardScaler`` and a ``LogisticRegression`` per binary; its default
out-of-fold weights, the code ``"ovo+ovr"``: 351 binary problems), with the
paper's one-vs-one protocol (``cv="in_sample"``: weights on the training rows' outputs) and
with the paper's whole preset (``cv="in_sample", solver="interior_point"``). Test accuracy
and log-loss are recorded beside the times, and one more fit of the paper's protocol is
timed by stage (fitting the binaries, their outputs on the training rows, the weights).
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from lib import common as C  # noqa: E402
from lib import workloads as W  # noqa: E402

OVO = "OneVsOneClassifier"
CALIBRATED = "CalibratedClassifierCV(OneVsOneClassifier, temperature, cv=5)"
# the paper's model and alpha (one weight per binary classifier, 1e-4), whatever the
# classifier's defaults
PAPER_MODEL = {"code": "ovo", "entry_weight_shrinkage": None, "alpha": 1e-4, "fit_intercept": False}


def main():
    from sklearn.calibration import CalibratedClassifierCV
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import log_loss
    from sklearn.multiclass import OneVsOneClassifier

    from convexagg import ConvexAggregationClassifier

    p = C.parser(__doc__.splitlines()[0])
    p.add_argument("--n-jobs", default="1,2", help="comma-separated n_jobs values")
    args = p.parse_args()
    repeat = 1 if args.quick else args.repeat
    if args.quick:
        args.n_jobs = "1"
    C.limit_blas(args)
    info = C.machine()
    X, X_te, y, y_te = W.letter_split(args.data_dir, W.QUICK_ROWS if args.quick else None)

    makers = {
        OVO: lambda j: OneVsOneClassifier(LogisticRegression(), n_jobs=j),
        CALIBRATED: lambda j: CalibratedClassifierCV(
            OneVsOneClassifier(LogisticRegression()), method="temperature", cv=5, n_jobs=j
        ),
        "ConvexAggregationClassifier() (default)": lambda j: ConvexAggregationClassifier(n_jobs=j),
        "ConvexAggregation, cv='in_sample' (paper's protocol)": (
            lambda j: ConvexAggregationClassifier(
                LogisticRegression(), cv="in_sample", n_jobs=j, **PAPER_MODEL
            )
        ),
        "ConvexAggregation, cv='in_sample', interior_point (paper's preset)": (
            lambda j: ConvexAggregationClassifier(
                LogisticRegression(),
                cv="in_sample",
                n_jobs=j,
                solver="interior_point",
                **PAPER_MODEL,
            )
        ),
    }
    rows, results = [], {}
    for n_jobs in [int(j) if j != "None" else None for j in args.n_jobs.split(",")]:
        for make in makers.values() if not args.quick else ():  # warm-up: pools, imports
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
        for name, t in times.items():
            est = fitted[name]
            row = {"n_jobs": n_jobs, "estimator": name, "best": min(t)}
            row["median"] = statistics.median(t)
            for base, key in ((OVO, "ovo"), (CALIBRATED, "calibrated")):
                row[f"{key}_ratio"] = min(t) / min(times[base])
                row[f"{key}_median_ratio"] = row["median"] / statistics.median(times[base])
            row["accuracy"] = float(np.mean(est.predict(X_te) == y_te))
            if hasattr(est, "predict_proba"):
                row["log_loss"] = log_loss(y_te, est.predict_proba(X_te), labels=est.classes_)
            rows.append(row)
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
            "decoder_default_solver": t3 - t2,
            "decoder_interior_point": t4 - t3,
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
                ("ovo_ratio", "best / OvO best", "{:.2f}"),
                ("ovo_median_ratio", "median / OvO median", "{:.2f}"),
                ("calibrated_ratio", "best / calibrated OvO best", "{:.2f}"),
                ("calibrated_median_ratio", "median / calibrated OvO median", "{:.2f}"),
                ("accuracy", "test accuracy", "{:.4f}"),
                ("log_loss", "test log-loss", "{:.4f}"),
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
