"""Target 2: decoding 2,000 letter rows -- the convex aggregation beside GBTM and WMAP.

    python benchmarks/bench_predict.py [--data-dir DIR] [--repeat 50] [--baselines-src PATH]

The decoders are fitted on the 18,000 training rows' binary outputs (one-vs-one,
325 classifiers); ``predict_proba`` is timed on the 2,000 test rows' outputs.
GBTM (``BradleyTerryDecoder``) and WMAP (``WMAPDecoder(weights="n_samples")``,
the fixed weights the paper used on its larger data sets) are the baseline
decoders of issue 3. They are imported from ``convexagg.decoders`` when this
checkout has them; ``--baselines-src`` names another checkout's ``src`` folder
(e.g. ``../issue3/src``) whose decoders are then timed in a child process with
that folder on ``PYTHONPATH``, on the same ``Q``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C  # noqa: E402

BASELINES = [
    ("GBTM", "BradleyTerryDecoder", {}),
    ("WMAP (weights=n_samples)", "WMAPDecoder", {"weights": "n_samples"}),
]


def time_baselines(npz, repeat):
    """Fit and time every baseline importable here; {name: result or reason}."""
    import convexagg.decoders as decoders

    d = np.load(npz)
    out = {}
    for name, cls_name, params in BASELINES:
        cls = getattr(decoders, cls_name, None)
        if cls is None:
            out[name] = {"note": "not yet available in this checkout"}
            continue
        dec = cls(**params).fit(d["Q"], d["y"], d["code"])
        times = C.timed(lambda dec=dec: dec.predict_proba(d["Q_test"]), repeat, warmup=0)
        acc = float(np.mean(dec.predict(d["Q_test"]) == d["y_test"]))
        out[name] = {
            **C.summary(times),
            "accuracy": acc,
            "source": str(Path(decoders.__file__).resolve().parents[2]),
        }
    return out


def main():
    p = C.parser(__doc__.splitlines()[0])
    p.add_argument(
        "--baselines-src",
        default=None,
        help="src folder of a checkout with BradleyTerryDecoder and WMAPDecoder",
    )
    p.add_argument("--baseline-repeat", type=int, default=3)
    p.add_argument("--child", default=None, help=argparse_hidden())
    args = p.parse_args()
    if args.child:  # inside the child process: time the baselines, print JSON
        print(json.dumps(time_baselines(args.child, args.baseline_repeat)))
        return
    repeat = 3 if args.quick else args.repeat
    C.limit_blas(args)
    info = C.machine()
    data = C.letter_workload(args)
    Q, y, code, Q_te, y_te = data["Q"], data["y"], data["code"], data["Q_test"], data["y_test"]

    from convexagg import ConvexDecoder

    rows = []
    for label, settings in [
        ("convex aggregation (paper's solver)", {}),
        (
            "convex aggregation (fastest solver)",
            {"solver": "mehrotra", "newton": "cholesky", "dtype": "float32", "init": "subsample"},
        ),
    ]:
        dec = ConvexDecoder(**settings).fit(Q, y, code)
        times = C.timed(lambda dec=dec: dec.predict_proba(Q_te), repeat, warmup=3)
        rows.append(
            {
                "decoder": label,
                **C.summary(times),
                "accuracy": float(np.mean(dec.predict(Q_te) == y_te)),
            }
        )

    with tempfile.TemporaryDirectory() as tmp:
        npz = os.path.join(tmp, "q.npz")
        np.savez(npz, Q=Q, y=y, code=code, Q_test=Q_te, y_test=y_te)
        n_rep = 1 if args.quick else args.baseline_repeat
        if args.baselines_src:
            env = {**os.environ, "PYTHONPATH": str(Path(args.baselines_src).resolve())}
            if args.blas_threads:
                env["OPENBLAS_NUM_THREADS"] = env["OMP_NUM_THREADS"] = str(args.blas_threads)
            cmd = [sys.executable, __file__, "--child", npz, "--baseline-repeat", str(n_rep)]
            res = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
            if res.returncode:
                sys.exit(f"baseline child failed:\n{res.stderr}")
            baselines = json.loads(res.stdout.strip().splitlines()[-1])
        else:
            baselines = time_baselines(npz, n_rep)
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
                ("ratio", "x convex (paper's solver)", "{:.0f}"),
                ("accuracy", "test accuracy", "{:.4f}"),
                ("paper", "paper (Matlab), s", "{:.3f}"),
                ("note", "note", None),
                ("source", "code from", None),
            ],
        )
    )
    C.finish(args, info, {"rows": rows}, "\n".join(text))


def argparse_hidden():
    import argparse

    return argparse.SUPPRESS


if __name__ == "__main__":
    main()
