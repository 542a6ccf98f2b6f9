"""Timed fits of ``ConvexDecoder(alpha=1e-4)`` on bench_fit.py's letter outputs (for A/B runs).

Backs BENCHMARKS.md, "Timing two versions".

The workload is bench_fit.py's (``lib/workloads.py``: letter's 18,000 training rows,
``LogisticRegression`` binaries, their outputs cached in ``--cache-dir`` on a first run) for
the one-vs-one, one-vs-rest and sparse random codes. Prints one line of JSON: per code, each
fit's seconds (``--repeat`` in a row), the final objective and the iterations, so that two
checkouts can be compared for time and for the same result. Run it alternately against
them, one thread::

    for i in 1 2 3 4; do
      PYTHONPATH=<old>/src python benchmarks/studies/time_decoder_fit.py
      PYTHONPATH=<new>/src python benchmarks/studies/time_decoder_fit.py
    done
"""

import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from lib import common as C  # noqa: E402
from lib import workloads as W  # noqa: E402

from convexagg import ConvexDecoder  # noqa: E402

CODES = ("ovo", "ovr", "sparse_random")


def main():
    parser = C.parser(__doc__.splitlines()[0])
    parser.set_defaults(repeat=3)
    args = parser.parse_args()
    C.limit_blas(args)
    out = {}
    for name in CODES:
        w = W.letter_workload(args, name)
        seconds = []
        for _ in range(1 if args.quick else args.repeat):
            start = time.perf_counter()
            decoder = ConvexDecoder(alpha=1e-4).fit(w["Q"], w["y"], w["code"])
            seconds.append(time.perf_counter() - start)
        out[name] = {
            "seconds": seconds,
            "objective": float(decoder.objective_),
            "n_iter": int(decoder.n_iter_),
        }
    print(json.dumps(out))


if __name__ == "__main__":
    main()
