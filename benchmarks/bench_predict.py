"""Target 2: decoding 2,000 letter rows -- the convex aggregation beside GBTM and WMAP.

    python benchmarks/bench_predict.py [--data-dir DIR] [--repeat 7] [--baseline-repeat 3]

The decoders are fitted on the 18,000 training rows' binary outputs (one-vs-one,
325 classifiers); ``predict_proba`` is timed on the 2,000 test rows' outputs.
GBTM (``BradleyTerryDecoder``) and WMAP (``WMAPDecoder(weights="n_samples")``,
the fixed weights the paper used on its larger data sets) are timed on the same
outputs.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C  # noqa: E402

BASELINES = [
    ("GBTM", "BradleyTerryDecoder", {}),
    ("WMAP (weights=n_samples)", "WMAPDecoder", {"weights": "n_samples"}),
]


def time_baselines(Q, y, code, Q_test, y_test, repeat):
    """Fit every baseline on the training outputs, time its predict_proba on the test ones."""
    import convexagg.decoders as decoders

    out = {}
    for name, cls_name, params in BASELINES:
        dec = getattr(decoders, cls_name)(**params).fit(Q, y, code)
        times = C.timed(lambda dec=dec: dec.predict_proba(Q_test), repeat, warmup=0)
        out[name] = {**C.summary(times), "accuracy": float(np.mean(dec.predict(Q_test) == y_test))}
    return out


def main():
    p = C.parser(__doc__.splitlines()[0])
    p.add_argument("--baseline-repeat", type=int, default=3)
    args = p.parse_args()
    repeat = 3 if args.quick else args.repeat
    C.limit_blas(args)
    info = C.machine()
    data = C.letter_workload(args)
    Q, y, code, Q_te, y_te = data["Q"], data["y"], data["code"], data["Q_test"], data["y_test"]

    from convexagg import ConvexDecoder

    rows = []
    for label, solver in [C.solver_settings()[k] for k in (0, 3)]:  # float64, float32
        label = f"convex aggregation, {label}"
        dec = ConvexDecoder(solver=solver).fit(Q, y, code)
        times = C.timed(lambda dec=dec: dec.predict_proba(Q_te), repeat, warmup=3)
        rows.append(
            {
                "decoder": label,
                **C.summary(times),
                "accuracy": float(np.mean(dec.predict(Q_te) == y_te)),
            }
        )

    n_rep = 1 if args.quick else args.baseline_repeat
    baselines = time_baselines(Q, y, code, Q_te, y_te, n_rep)
    for name, r in baselines.items():
        rows.append({"decoder": name, **r})

    paper = {
        "convex aggregation (paper's solver)": 0.133,
        "GBTM": 214.264,
        "WMAP (weights=n_samples)": 94.640,
    }
    for r in rows:
        r["paper"] = paper.get(r["decoder"])
    ours = rows[0]["best"]
    for r in rows:
        if r.get("best"):
            r["ratio"] = r["best"] / ours
    text = [
        f"## Decoding 2,000 letter rows (one-vs-one, M = {code.shape[1]}), "
        f"best / median of {repeat} (baselines: of {n_rep})",
        "",
        C.header(info),
        "",
    ]
    text.append(
        C.table(
            rows,
            [
                ("decoder", "decoder", None),
                ("best", "best s", "{:.4f}"),
                ("median", "median s", "{:.4f}"),
                ("ratio", "x convex (paper's solver)", "{:.2g}"),
                ("accuracy", "test accuracy", "{:.4f}"),
                ("paper", "paper (Matlab), s", "{:.3f}"),
            ],
        )
    )
    C.finish(args, info, {"rows": rows}, "\n".join(text))


if __name__ == "__main__":
    main()
