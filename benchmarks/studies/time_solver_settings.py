"""The interior point's options one at a time on letter one-vs-one: iterations and time.

Backs BENCHMARKS.md, "Which setting is faster where".

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python benchmarks/studies/time_solver_settings.py \\
        [--data-dir DIR] [--repeat 3] [--out benchmarks/results/solver_settings.json]

On the letter workload's training outputs (``lib/workloads.py``: 18,000 x 325, ``alpha =
1e-4``), ``ConvexDecoder(solver=...).fit`` with the paper's Algorithm 1
(``InteriorPoint()``), then one option changed at a time toward version 0.1's fastest
setting -- the best uniform start, Mehrotra's predictor-corrector, direct (Cholesky) Newton
steps, float32 losses, the subsample start -- and the default solver beside them. The
settings are fitted in turn, ``--repeat`` rounds after one untimed round; reported per
setting: the Newton iterations (the same every round), best and median seconds, and the
objective's relative gap to the lowest of them.
"""

from __future__ import annotations

import statistics
import sys
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from lib import common as C  # noqa: E402
from lib import workloads as W  # noqa: E402


def settings():
    """``[(label, solver)]``: Algorithm 1, the options added one at a time, the default."""
    from convexagg.solvers import InteriorPoint

    pc = {"method": "predictor_corrector"}
    return [
        ("Algorithm 1 (InteriorPoint())", InteriorPoint()),
        ("Algorithm 1, uniform start", InteriorPoint(init="uniform")),
        ("predictor-corrector", InteriorPoint(**pc)),
        ("predictor-corrector, direct", InteriorPoint(**pc, newton="direct")),
        (
            "predictor-corrector, direct, float32",
            InteriorPoint(**pc, newton="direct", dtype="float32"),
        ),
        (
            "predictor-corrector, direct, float32, uniform start",
            InteriorPoint(**pc, newton="direct", dtype="float32", init="uniform"),
        ),
        (
            "predictor-corrector, direct, float32, subsample start",
            InteriorPoint(**pc, newton="direct", dtype="float32", init="subsample"),
        ),
        ("default (auto)", "auto"),
    ]


def main():
    from convexagg import ConvexDecoder

    p = C.parser(__doc__.splitlines()[0])
    p.set_defaults(repeat=3)
    args = p.parse_args()
    repeat = 1 if args.quick else args.repeat
    C.limit_blas(args)
    info = C.machine()
    data = W.letter_workload(args)
    Q, y, code = data["Q"], data["y"], data["code"]
    chosen = settings()
    times = {label: [] for label, _ in chosen}
    fitted = {}
    for round_ in range(repeat + 1):  # the first round warms up
        for label, solver in chosen:
            t0 = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # float32 at tol 1e-4: reported, not fatal
                fitted[label] = ConvexDecoder(alpha=W.ALPHA, solver=solver).fit(Q, y, code)
            if round_:
                times[label].append(time.perf_counter() - t0)
        print(f"round {round_}: " + ", ".join(f"{t[-1]:.2f} s" for t in times.values() if t))
    best_f = min(float(d.objective_) for d in fitted.values())
    rows = [
        {
            "setting": label,
            "n_iter": int(fitted[label].n_iter_),
            "best": min(times[label]),
            "median": statistics.median(times[label]),
            "rel_gap": (float(fitted[label].objective_) - best_f) / abs(best_f),
        }
        for label, _ in chosen
    ]
    text = "\n".join(
        [
            f"## Solver settings on letter one-vs-one ({Q.shape[0]} x {Q.shape[1]}), best / "
            f"median of {repeat}, in turn",
            "",
            C.header(info),
            "",
            C.table(
                rows,
                [
                    ("setting", "ConvexDecoder(solver=...)", None),
                    ("n_iter", "iterations", None),
                    ("best", "best s", "{:.3f}"),
                    ("median", "median s", "{:.3f}"),
                    ("rel_gap", "(f - lowest f) / f", "{:.1e}"),
                ],
            ),
        ]
    )
    C.finish(args, info, {"rows": rows}, text)


if __name__ == "__main__":
    main()
