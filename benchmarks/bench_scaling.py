"""Fit time against the number of samples N and the number of classifiers M.

    python benchmarks/bench_scaling.py [--data-dir DIR] [--repeat 3] [--sizes 1e4,...,1e6]

N: synthetic one-vs-one outputs (``--classes`` classes, default 10: M = 45),
N = 10^4 ... 10^6; the slope of log(time) against log(N) is fitted by least
squares (1 = linear), for the total time and per iteration (the iteration count
itself may drift with N). M: letter with the one-vs-rest (26), ECOC (sparse random,
71) and one-vs-one (325) codes. Both for the default solver and version 0.1's fastest
setting (the interior point with direct Newton steps in float32, from a subsample).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from lib import common as C  # noqa: E402
from lib import workloads as W  # noqa: E402

# the default, and version 0.1's fastest setting
SETTINGS = [W.solver_settings()[k] for k in (0, 2)]


def fit_time(Q, y, code, solver, repeat):
    from convexagg import ConvexDecoder

    dec = ConvexDecoder(alpha=W.ALPHA, solver=solver)
    times = C.timed(lambda: dec.fit(Q, y, code), repeat)
    return min(times), dec.n_iter_


def slope(x, t):
    return float(np.polyfit(np.log(x), np.log(t), 1)[0])


def main():
    p = C.parser(__doc__.splitlines()[0])
    p.add_argument("--sizes", default="1e4,3e4,1e5,3e5,1e6")
    p.add_argument("--classes", type=int, default=10)
    args = p.parse_args()
    sizes = [int(float(s)) for s in args.sizes.split(",")]
    repeat = args.repeat
    if args.quick:
        sizes, repeat = [2000, 4000, 8000], 1
    C.limit_blas(args)
    info = C.machine()

    n_rows = []
    for n in sizes:
        Q, y, code = W.synthetic_ovo_outputs(n, args.classes, seed=0)
        for label, settings in SETTINGS:
            t, it = fit_time(Q, y, code, settings, repeat if n < 300_000 else max(1, repeat - 1))
            n_rows.append(
                {
                    "N": n,
                    "settings": label,
                    "seconds": t,
                    "n_iter": it,
                    "per_iter": t / it,
                    "M": code.shape[1],
                }
            )
            print(f"  N={n} {label}: {t:.3f} s, {it} it", flush=True)
        del Q
    slopes = {}
    for label, _ in SETTINGS:
        sel = [r for r in n_rows if r["settings"] == label]
        top = [r for r in sel if r["N"] >= 100_000] or sel  # past the fixed costs
        slopes[label] = {
            "total": slope([r["N"] for r in sel], [r["seconds"] for r in sel]),
            "per_iteration": slope([r["N"] for r in sel], [r["per_iter"] for r in sel]),
            "per_iteration_from_1e5": slope([r["N"] for r in top], [r["per_iter"] for r in top]),
        }

    m_rows = []
    for code_name in ("ovr", "ecoc", "ovo"):
        data = W.letter_workload(args, code_name)
        Q, y, code = data["Q"], data["y"], data["code"]
        for label, settings in SETTINGS:
            t, it = fit_time(Q, y, code, settings, repeat)
            m_rows.append(
                {
                    "code": code_name,
                    "M": code.shape[1],
                    "settings": label,
                    "seconds": t,
                    "n_iter": it,
                    "per_iter": t / it,
                }
            )
            print(f"  {code_name} {label}: {t:.3f} s", flush=True)

    text = [
        f"## Scaling (best of {repeat})",
        "",
        C.header(info),
        "",
        f"### N: synthetic one-vs-one outputs, K = {args.classes}, M = {n_rows[0]['M']}",
        "",
    ]
    text.append(
        C.table(
            n_rows,
            [
                ("N", "N", "{:,}"),
                ("settings", "settings", None),
                ("seconds", "fit s", "{:.3f}"),
                ("n_iter", "iterations", None),
                ("per_iter", "s / iteration", "{:.4f}"),
            ],
        )
    )
    text.append("")
    for label, s in slopes.items():
        text.append(
            f"fitted slope of log(time) on log(N), {label}: total {s['total']:.2f}, "
            f"per iteration {s['per_iteration']:.2f} (N >= 10^5: "
            f"{s['per_iteration_from_1e5']:.2f})"
        )
    text += ["", "### M: letter, 18,000 rows", ""]
    text.append(
        C.table(
            m_rows,
            [
                ("code", "code", None),
                ("M", "M", None),
                ("settings", "settings", None),
                ("seconds", "fit s", "{:.3f}"),
                ("n_iter", "iterations", None),
                ("per_iter", "s / iteration", "{:.4f}"),
            ],
        )
    )
    C.finish(args, info, {"N": n_rows, "slopes": slopes, "M": m_rows}, "\n".join(text))


if __name__ == "__main__":
    main()
