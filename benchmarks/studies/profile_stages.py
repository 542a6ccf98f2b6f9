"""Where the default fit and decoding spend their time (BENCHMARKS.md, "Where the default fit
spends its time").

    python benchmarks/studies/profile_stages.py [--data-dir DIR] [--repeat 7] \\
        [--out benchmarks/results/stages.json]

On the letter workload (one-vs-one, 18,000 x 325 training outputs, 2,000 test rows)
and the default solver (the projected Newton method, float64), each stage timed on
its own, best of ``--repeat``:

* fit: the whole ``ConvexDecoder().fit``; the losses (``BlockedObjective.from_outputs``,
  on the threads it uses and on one); the equal-weights start; one objective
  evaluation; one Hessian-vector product; one Hessian of the ~4,000-row subsample
  (float32: the PCG preconditioner); one full dense Hessian (float64) for scale;
* decoding: ``predict_proba`` of the 2,000 rows; NumPy's ``log`` of as many values as
  the decoding takes logs of (two per output), in float32 and float64.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from lib import common as C  # noqa: E402
from lib import workloads as W  # noqa: E402


def main():
    import convexagg.aggregation.blocked as blocked_module
    from convexagg.aggregation import BlockedObjective, Penalty
    from convexagg.decoders import ConvexDecoder
    from convexagg.solvers import uniform_start

    args = C.parser(__doc__.splitlines()[0]).parse_args()
    repeat = 1 if args.quick else args.repeat
    C.limit_blas(args)
    info = C.machine()
    data = W.letter_workload(args)
    Q, y, code, Q_te = data["Q"], data["y"], data["code"], data["Q_test"]

    def best(fn, n=repeat):
        return C.summary(C.timed(fn, n))["best"]

    penalty = Penalty.from_alpha(W.ALPHA)

    def build():
        return BlockedObjective.from_outputs(Q, code, y, penalty)

    def build_one_thread():
        threads = blocked_module._build_threads
        blocked_module._build_threads = lambda: 1
        try:
            return build()
        finally:
            blocked_module._build_threads = threads

    obj = build()
    x0 = uniform_start(obj)
    point = obj.evaluate(x0)
    v = np.random.default_rng(0).normal(size=code.shape[1])
    sub = obj.take(slice(0, None, obj.n_samples // 4000), dtype=np.float32)
    sub_point = sub.evaluate(x0)
    fitted = ConvexDecoder().fit(Q, y, code)
    fit = {
        "fit": best(lambda: ConvexDecoder().fit(Q, y, code)),
        "losses": best(build),
        "losses_one_thread": best(build_one_thread),
        "uniform_start": best(lambda: uniform_start(obj)),
        "evaluate": best(lambda: obj.evaluate(x0)),
        "hessp": best(lambda: obj.hessp(point, v)),
        "subsample_hessian_float32": best(lambda: sub.hessian(sub_point)),
        "full_hessian_float64": best(lambda: obj.hessian(point)),
    }
    counts = {
        "iterations": int(fitted.n_iter_),
        "hessp": int(fitted.history_["cg_iter"].sum()),
    }

    n_logs = 2 * Q_te.size
    rng = np.random.default_rng(0)
    v64 = rng.uniform(1e-3, 1.0, n_logs)
    v32, o64, o32 = v64.astype(np.float32), np.empty(n_logs), np.empty(n_logs, np.float32)
    many = 10 * repeat  # millisecond timings: more repetitions for a stable best
    decode = {
        "predict_proba": best(lambda: fitted.predict_proba(Q_te), many),
        "log_float32": best(lambda: np.log(v32, out=o32), many),
        "log_float64": best(lambda: np.log(v64, out=o64), many),
    }

    results = {"fit_s": fit, "fit_counts": counts, "decode_s": decode, "n_logs": n_logs}
    text = [
        f"## Stages of the default fit (letter one-vs-one, {Q.shape[0]} x {Q.shape[1]}) "
        f"and of decoding {Q_te.shape[0]} rows, best of {repeat} / {many}",
        "",
        C.header(info),
        "",
        "fit: " + ", ".join(f"{k} {v:.4f} s" for k, v in fit.items()),
        "the default fit's work: " + ", ".join(f"{k} {v}" for k, v in counts.items()),
        f"decoding ({n_logs:,} logs): "
        + ", ".join(f"{k} {1e3 * v:.2f} ms" for k, v in decode.items()),
    ]
    C.finish(args, info, results, "\n".join(text))


if __name__ == "__main__":
    main()
