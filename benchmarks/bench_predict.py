"""Decoding 2,000 letter rows: the convex aggregation against the fused NumPy floor,
beside GBTM and WMAP, and ``predict_proba`` end to end from ``X``.

    python benchmarks/bench_predict.py [--data-dir DIR] [--repeat 7] [--decode-repeat 60]
        [--baseline-repeat 3]

The decoders are fitted on the 18,000 training rows' binary outputs (one-vs-one,
325 classifiers); ``predict_proba`` is timed on the 2,000 test rows' outputs, in
float64 and in float32. The *fused NumPy floor* is the plain decode written
directly: a clip, two logs, two matrix products with precomputed C-ordered
weights, a softmax (``floor`` below), in the dtype of the outputs. The convex decoders and
the floor are timed interleaved (one call of each per round, ``--decode-repeat``
rounds), so their ratios come from the same minutes; best and median are
reported. End to end: ``ConvexAggregationClassifier`` with
``make_pipeline(StandardScaler(), LogisticRegression())`` binaries (``code="ovo"``, no
intercepts, ``cv="in_sample"``, the paper's protocol: one set of binaries), ``predict_proba``
of the 2,000 test rows of ``X`` (the binaries' stacked-linear product and the decode); and
the same with the classifier's default code and intercepts (``"ovo+ovr"``,
``fit_intercept=True``), decoded in float32.
GBTM (``BradleyTerryDecoder``) and WMAP (``WMAPDecoder(weights="n_samples")``,
the fixed weights the paper used on its larger data sets) are timed on the same
outputs.
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

BASELINES = [
    ("GBTM", "BradleyTerryDecoder", {}),
    ("WMAP (weights=n_samples)", "WMAPDecoder", {"weights": "n_samples"}),
]

TARGETS = {"decode_float32_s": 0.002, "decode_over_floor": 1.5, "end_to_end_s": 0.003}


def time_baselines(Q, y, code, Q_test, y_test, repeat):
    """Fit every baseline on the training outputs, time its predict_proba on the test ones."""
    import convexagg.decoders as decoders

    out = {}
    for name, cls_name, params in BASELINES:
        dec = getattr(decoders, cls_name)(**params).fit(Q, y, code)
        times = C.timed(lambda dec=dec: dec.predict_proba(Q_test), repeat, warmup=0)
        out[name] = {**C.summary(times), "accuracy": float(np.mean(dec.predict(Q_test) == y_test))}
    return out


def floor(code, weights, dtype):
    """The fused NumPy decode of ``softmax(-rho)``: two logs, two products, a softmax."""
    from scipy.special import softmax

    pos = np.ascontiguousarray(((code == 1) * weights).T, dtype=dtype)
    neg = np.ascontiguousarray(((code == -1) * weights).T, dtype=dtype)

    lo, hi = np.finfo(np.float64).eps, 1 - np.finfo(dtype).epsneg  # log(0) never taken

    def decode(Q):
        Q = np.clip(Q, lo, hi)
        return softmax(np.log(Q) @ pos + np.log(1 - Q) @ neg, axis=1)

    return decode


def interleaved(fns, rounds):
    """``{name: times}``: one call of each function per round, after one untimed round."""
    for fn in fns.values():
        fn()
    times = {name: [] for name in fns}
    for _ in range(rounds):
        for name, fn in fns.items():
            t0 = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - t0)
    return times


def main():
    p = C.parser(__doc__.splitlines()[0])
    p.add_argument("--baseline-repeat", type=int, default=3)
    p.add_argument("--decode-repeat", type=int, default=60)
    args = p.parse_args()
    rounds = 3 if args.quick else args.decode_repeat
    C.limit_blas(args)
    info = C.machine()
    data = W.letter_workload(args)
    Q, y, code, Q_te, y_te = data["Q"], data["y"], data["code"], data["Q_test"], data["y_test"]
    Q_te32 = Q_te.astype(np.float32)

    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from convexagg import ConvexAggregationClassifier, ConvexDecoder
    from convexagg.solvers import ProjectedNewton

    decoders = {
        "float64": ConvexDecoder().fit(Q, y, code),  # "auto": predictions in float64
        "float32": ConvexDecoder(solver=ProjectedNewton(dtype="float32")).fit(Q, y, code),
    }
    X_te = data["X_test"]
    workload = {"code": "ovo", "fit_intercept": False}  # the records' one-vs-one model
    settings = [
        ("float64 decode", workload, "auto"),
        ("float32 decode", workload, ProjectedNewton(dtype="float32")),
        (
            "float32 decode, the default's code and intercepts (351 classifiers)",
            {},
            ProjectedNewton(dtype="float32"),
        ),
    ]
    pipes = {
        name: ConvexAggregationClassifier(
            make_pipeline(StandardScaler(), LogisticRegression()),
            cv="in_sample",
            solver=solver,
            **params,
        ).fit(data["X"], y)
        for name, params, solver in settings
    }
    fns, outputs = {}, {"float64": Q_te, "float32": Q_te32}
    for name, dec in decoders.items():
        fused = floor(code, dec.weights_, outputs[name].dtype)
        fns[f"convex aggregation, {name}"] = lambda d=dec, q=outputs[name]: d.predict_proba(q)
        fns[f"fused NumPy floor, {name}"] = lambda f=fused, q=outputs[name]: f(q)
    end_to_end = {}  # row name -> pipe
    for name, clf in pipes.items():
        row_name = f"end to end from X (StandardScaler + LogisticRegression), {name}"
        fns[row_name], end_to_end[row_name] = (lambda c=clf: c.predict_proba(X_te)), clf
    times = interleaved(fns, rounds)
    rows = []
    for name, ts in times.items():
        row = {"decoder": name, "best": min(ts), "median": statistics.median(ts), "n": len(ts)}
        if name.startswith("convex aggregation"):
            dtype = name.rsplit(", ", 1)[1]
            fl = times[f"fused NumPy floor, {dtype}"]
            row["over_floor_best"] = min(ts) / min(fl)
            row["over_floor_median"] = statistics.median(ts) / statistics.median(fl)
            dec = decoders[dtype]
            row["accuracy"] = float(np.mean(dec.predict(outputs[dtype]) == y_te))
            ref = floor(code, dec.weights_, np.float64)(Q_te)
            P = dec.predict_proba(outputs[dtype])
            row["max_abs_diff_vs_float64_floor"] = float(np.abs(P - ref).max())
        elif name in end_to_end:
            row["accuracy"] = float(np.mean(end_to_end[name].predict(X_te) == y_te))
        rows.append(row)

    n_rep = 1 if args.quick else args.baseline_repeat
    baselines = time_baselines(Q, y, code, Q_te, y_te, n_rep)
    for name, r in baselines.items():
        rows.append({"decoder": name, **r})
    paper = {"GBTM": 214.264, "WMAP (weights=n_samples)": 94.640}
    for r in rows:
        r["paper"] = paper.get(r["decoder"])

    by = {r["decoder"]: r for r in rows}
    d32 = by["convex aggregation, float32"]
    e2e = by["end to end from X (StandardScaler + LogisticRegression), float32 decode"]
    verdicts = {
        "decode_float32_best_s": d32["best"],
        "decode_float32_met": d32["best"] <= TARGETS["decode_float32_s"],
        "decode_over_floor_best": d32["over_floor_best"],
        "decode_over_floor_met": d32["over_floor_best"] <= TARGETS["decode_over_floor"],
        "end_to_end_float32_best_s": e2e["best"],
        "end_to_end_met": e2e["best"] <= TARGETS["end_to_end_s"],
    }
    for r in rows:  # the table shows milliseconds
        r["best_ms"], r["median_ms"] = r["best"] * 1e3, r["median"] * 1e3
    text = [
        f"## Decoding 2,000 letter rows (one-vs-one, M = {code.shape[1]}), best / median of "
        f"{rounds} interleaved rounds (baselines: of {n_rep})",
        "",
        C.header(info),
        "",
        C.table(
            rows,
            [
                ("decoder", "decoder", None),
                ("best_ms", "best ms", "{:.3f}"),
                ("median_ms", "median ms", "{:.3f}"),
                ("over_floor_best", "x floor (best)", "{:.2f}"),
                ("over_floor_median", "x floor (median)", "{:.2f}"),
                ("accuracy", "test accuracy", "{:.4f}"),
                ("max_abs_diff_vs_float64_floor", "max abs diff of P vs float64 floor", "{:.1e}"),
                ("paper", "paper (Matlab), s", "{:.3f}"),
            ],
        ),
        "",
        "targets: decode float32 <= 2 ms: "
        f"{'met' if verdicts['decode_float32_met'] else 'missed'} ({d32['best'] * 1e3:.3f} ms); "
        "<= 1.5x the floor: "
        f"{'met' if verdicts['decode_over_floor_met'] else 'missed'} "
        f"({d32['over_floor_best']:.2f}x best, {d32['over_floor_median']:.2f}x median); "
        "end to end <= 3 ms: "
        f"{'met' if verdicts['end_to_end_met'] else 'missed'} ({e2e['best'] * 1e3:.3f} ms)",
    ]
    C.finish(args, info, {"rows": rows, "targets": TARGETS, "verdicts": verdicts}, "\n".join(text))


if __name__ == "__main__":
    main()
