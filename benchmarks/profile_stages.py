"""Where the fastest fit and decoding spend their time (BENCHMARKS.md, the missed targets).

    python benchmarks/profile_stages.py [--data-dir DIR] [--repeat 7] [--out results/stages.json]

On the letter workload (one-vs-one, 18,000 x 325 training outputs, 2,000 test rows) and
the fastest setting (Mehrotra, Cholesky, float32, subsample start), each stage timed on
its own, best of ``--repeat``:

* fit: the whole ``ConvexDecoder.fit``; the losses (``BlockedObjective.from_outputs``);
  the subsample start; one objective evaluation; one dense Hessian;
* decoding: ``predict_proba`` of the 2,000 rows; NumPy's ``log`` of as many values as
  the decoding takes logs of (two per output), in float32 and float64; and the same
  ``predict_proba`` with the rows split over two threads (a trial that was not kept).
"""

from __future__ import annotations

import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C  # noqa: E402

FAST = {"solver": "mehrotra", "newton": "cholesky", "dtype": "float32", "init": "subsample"}


def main():
    from convexagg.decoders import ConvexDecoder
    from convexagg.solvers import BlockedObjective

    args = C.parser(__doc__.splitlines()[0]).parse_args()
    repeat = 1 if args.quick else args.repeat
    C.limit_blas(args)
    info = C.machine()
    data = C.letter_workload(args)
    Q, y, code, Q_te = data["Q"], data["y"], data["code"], data["Q_test"]

    def best(fn, n=repeat):
        return C.summary(C.timed(fn, n))["best"]

    dec = ConvexDecoder(**FAST)
    obj = BlockedObjective.from_outputs(Q, code, y, dec.alpha, dtype="float32")
    w = np.full(code.shape[1], 0.5)
    point = obj.evaluate(w)
    fit = {
        "fit": best(lambda: ConvexDecoder(**FAST).fit(Q, y, code)),
        "losses": best(
            lambda: BlockedObjective.from_outputs(Q, code, y, dec.alpha, dtype="float32")
        ),
        "subsample_start": best(lambda: dec._start(obj, code)),
        "evaluate": best(lambda: obj.evaluate(w)),
        "hessian": best(lambda: obj.hessian(point)),
    }
    fitted = ConvexDecoder(**FAST).fit(Q, y, code)

    n_logs = 2 * Q_te.size
    rng = np.random.default_rng(0)
    v64 = rng.uniform(1e-3, 1.0, n_logs)
    v32, o64, o32 = v64.astype(np.float32), np.empty(n_logs), np.empty(n_logs, np.float32)
    pool = ThreadPoolExecutor(2)
    half = Q_te.shape[0] // 2

    def two_threads():
        parts = pool.map(fitted.predict_proba, [Q_te[:half], Q_te[half:]])
        return np.vstack(list(parts))

    np.testing.assert_allclose(two_threads(), fitted.predict_proba(Q_te))
    many = 10 * repeat  # millisecond timings: more repetitions for a stable best
    decode = {
        "predict_proba": best(lambda: fitted.predict_proba(Q_te), many),
        "log_float32": best(lambda: np.log(v32, out=o32), many),
        "log_float64": best(lambda: np.log(v64, out=o64), many),
        "predict_proba_two_threads": best(two_threads, many),
    }
    pool.shutdown()

    results = {"fit_s": fit, "decode_s": decode, "n_logs": n_logs}
    text = [
        f"## Stages of the fastest fit (letter one-vs-one, {Q.shape[0]} x {Q.shape[1]}) "
        f"and of decoding {Q_te.shape[0]} rows, best of {repeat} / {many}",
        "",
        C.header(info),
        "",
        "fit: " + ", ".join(f"{k} {v:.3f} s" for k, v in fit.items()),
        f"decoding ({n_logs:,} logs): "
        + ", ".join(f"{k} {1e3 * v:.2f} ms" for k, v in decode.items()),
    ]
    C.finish(args, info, results, "\n".join(text))


if __name__ == "__main__":
    main()
