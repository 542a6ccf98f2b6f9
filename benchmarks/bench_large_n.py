"""The in-memory fit of many rows, losses stored or recomputed from ``Q``.

    python benchmarks/bench_large_n.py [--rows 1000000] [--modes recomputed,stored]
        [--baseline-src PATH] [--repeat 1] [--passes-by-threads] [--profile] [--out FILE]

Synthetic one-vs-one outputs of 26 classes (``M = 325``, ``lib.workloads.synthetic_ovo_outputs``,
seed 0) are generated in float32, then ``ConvexDecoder().fit`` runs in a fresh
process per mode: ``"stored"`` (``BlockedObjective``: the losses stored, float32
from 2**20 of them), ``"recomputed"`` (``RecomputedObjective``: the losses
recomputed from ``Q`` on every pass), or ``"auto"`` (the decoder's choice: stored
while they take at most a quarter of physical memory). Each records the wall and
CPU time of the fit, its iterations and objective, its passes over the data
(``evaluate`` and ``hessp`` on all rows) and their mean time, and the peak
resident memory of the fit (``VmHWM`` after resetting it once ``Q`` exists, so
``Q`` itself is counted and its generation is not), beside ``Q``'s bytes and the
stored losses' bytes.

``--passes-by-threads`` times one evaluation and one Hessian-vector product of the
recomputed objective on one thread and on its default ``n_threads`` (the cores),
interleaved in one process for ``--repeat`` rounds.

``--profile`` fits the recomputed objective on one thread and times its parts
(calls, wall and CPU seconds of ``evaluate``, ``hessp``, the loss recomputation,
the products with the weights).

``--baseline-src`` (the ``src`` folder of another version, e.g. from
``git worktree add /tmp/main main``) runs every mode with that version too, in
alternating order for ``--repeat`` rounds: an A/B in one session, for a loaded
machine.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from lib import common as C  # noqa: E402
from lib import workloads as W  # noqa: E402

N_CLASSES = 26


def _status(field):
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) * 1024
    return None


def _count_passes(rows):
    """Record (method, seconds) of every ``evaluate`` / ``hessp`` over all ``rows``."""
    from convexagg.aggregation import BlockedObjective

    passes = []
    for name in ("evaluate", "hessp"):
        method = getattr(BlockedObjective, name)

        def timed(self, *args, _method=method, _name=name):
            t = time.perf_counter()
            out = _method(self, *args)
            if self.n_samples == rows:
                passes.append((_name, time.perf_counter() - t))
            return out

        setattr(BlockedObjective, name, timed)
    return passes


def child(mode, rows):
    """Fit in this process and print one JSON line."""
    import convexagg.aggregation.recomputed as recomputed
    from convexagg import ConvexDecoder

    Q, y, code = W.synthetic_ovo_outputs(rows, N_CLASSES, seed=0, dtype=np.float32)
    if mode != "auto":  # force the storage
        recomputed.STORED_SHARE = 0.0 if mode == "recomputed" else float("inf")
    objective = ConvexDecoder().likelihood_objective(Q[:10], y[:10], code)
    del objective
    passes = _count_passes(rows)
    Path("/proc/self/clear_refs").write_text("5")  # VmHWM := VmRSS
    rss_before = _status("VmRSS")
    load = os.getloadavg()[0]
    t, cpu = time.perf_counter(), time.process_time()
    dec = ConvexDecoder().fit(Q, y, code)
    wall, cpu = time.perf_counter() - t, time.process_time() - cpu
    objective = ConvexDecoder().likelihood_objective(Q[:1000], y[:1000], code)
    kind = type(objective).__name__
    print(
        json.dumps(
            {
                "mode": mode,
                "rows": rows,
                "objective_class": kind if mode != "auto" else None,
                "fit_s": wall,
                "cpu_s": cpu,
                "threads": int(getattr(objective, "n_threads", 1)),
                "passes": len(passes),
                "evaluate_passes": sum(kind == "evaluate" for kind, _ in passes),
                "pass_s": float(np.mean([s for _, s in passes])) if passes else None,
                "loadavg_1min_start": load,
                "n_iter": int(dec.n_iter_),
                "converged": bool(dec.converged_),
                "objective": float(dec.objective_),
                "weights": dec.weights_.tolist(),
                "rss_before_fit_bytes": rss_before,
                "peak_rss_bytes": _status("VmHWM"),
                "Q_bytes": Q.nbytes,
                "stored_losses_bytes": 2 * Q.size * 4,
            }
        )
    )


def profile(rows):
    """Fit the recomputed objective on one thread, timing its parts (calls, wall and
    CPU seconds of each method), and return the rows of a table."""
    import convexagg.aggregation.blocked as blocked
    import convexagg.aggregation.recomputed as recomputed
    from convexagg import ConvexDecoder

    Q, y, code = W.synthetic_ovo_outputs(rows, N_CLASSES, seed=0, dtype=np.float32)
    recomputed.STORED_SHARE = 0.0
    blocked._build_threads = lambda: 1  # one thread: each part's time is its own
    spent = {}
    parts = [(blocked.BlockedObjective, n) for n in ("evaluate", "hessp", "hessian", "take")]
    parts += [(blocked.BlockedObjective, n) for n in ("_rho", "_pullback")]
    parts += [(recomputed._Losses, "_compute")]
    for owner, name in parts:
        method = getattr(owner, name)
        label = f"{owner.__name__}.{name}"

        def timed(*args, _method=method, _label=label, **kwargs):
            t, cpu = time.perf_counter(), time.process_time()
            out = _method(*args, **kwargs)
            s = spent.setdefault(_label, [0, 0.0, 0.0])
            s[0] += 1
            s[1] += time.perf_counter() - t
            s[2] += time.process_time() - cpu
            return out

        setattr(owner, name, timed)
    t, cpu = time.perf_counter(), time.process_time()
    dec = ConvexDecoder().fit(Q, y, code)
    spent["fit"] = [1, time.perf_counter() - t, time.process_time() - cpu]
    print("iterations", dec.n_iter_, "CG products per iteration", dec.history_["cg_iter"][1:])
    return [
        {"part": k, "rows": rows, "calls": n, "wall_s": w, "cpu_s": c}
        for k, (n, w, c) in sorted(spent.items(), key=lambda kv: -kv[1][2])
    ]


def passes_by_threads(rows, rounds):
    """One process: a pass pair (``evaluate`` and ``hessp``) of the recomputed
    objective on one thread and on ``n_threads`` (the default), interleaved for
    ``rounds`` rounds; wall and CPU seconds, median over the rounds."""
    from convexagg.aggregation import RecomputedObjective

    Q, y, code = W.synthetic_ovo_outputs(rows, N_CLASSES, seed=0, dtype=np.float32)
    M = code.shape[1]
    rng = np.random.default_rng(0)
    x, v = rng.uniform(0.5, 1.5, M) * 20 / M, rng.normal(size=M)
    objectives = {}
    for threads in (1, None):
        objective = RecomputedObjective.from_outputs(Q, code, y, dtype=np.float32)
        objective.n_threads = threads or objective.n_threads
        objectives[f"{objective.n_threads} thread(s)"] = objective
    times = {name: [] for name in objectives}
    loads = []
    for round_ in range(rounds):
        for name in list(objectives)[:: 1 if round_ % 2 == 0 else -1]:
            objective = objectives[name]
            t, cpu = time.perf_counter(), time.process_time()
            objective.hessp(objective.evaluate(x), v)
            times[name].append((time.perf_counter() - t, time.process_time() - cpu))
        loads.append(os.getloadavg()[0])
    return [
        {
            "threads": name,
            "rows": rows,
            "chunk": objectives[name].chunk,
            "wall_s_median": float(np.median([w for w, _ in spent])),
            "wall_s_min": float(min(w for w, _ in spent)),
            "cpu_s_median": float(np.median([c for _, c in spent])),
            "loadavg_1min": loads,
        }
        for name, spent in times.items()
    ]


def main():
    p = C.parser(__doc__.splitlines()[0])
    p.add_argument("--rows", type=int, default=1_000_000)
    p.add_argument("--modes", default="recomputed,stored")
    p.add_argument("--baseline-src", default=None, help="src folder of a version to compare")
    p.add_argument(
        "--passes-by-threads",
        action="store_true",
        help="time evaluate + hessp on one thread and on n_threads, interleaved (--repeat rounds)",
    )
    p.add_argument(
        "--profile", action="store_true", help="time the parts of a one-thread recomputed fit"
    )
    p.add_argument("--child", default=None, help=argparse_hidden())
    p.set_defaults(repeat=1)
    args = p.parse_args()
    if args.child:
        child(args.child, args.rows)
        return
    if args.quick:
        args.rows, args.repeat = 20_000, 1
    info = C.machine()
    if args.profile:
        rows = profile(args.rows)
        text = "\n".join(
            [
                f"## Profile of the recomputed fit, {args.rows:,} x 325, one thread",
                "",
                C.header(info),
                "",
                C.table(
                    rows,
                    [
                        ("part", "part", None),
                        ("calls", "calls", None),
                        ("wall_s", "wall s", "{:.2f}"),
                        ("cpu_s", "CPU s", "{:.2f}"),
                    ],
                ),
            ]
        )
        C.finish(args, info, {"rows": rows}, text)
        return
    if args.passes_by_threads:
        rows = passes_by_threads(args.rows, args.repeat)
        text = "\n".join(
            [
                f"## evaluate + hessp of the recomputed objective, {args.rows:,} x 325, "
                f"median of {args.repeat} interleaved rounds",
                "",
                C.header(info),
                "",
                C.table(
                    rows,
                    [
                        ("threads", "threads", None),
                        ("chunk", "chunk", None),
                        ("wall_s_median", "wall s", "{:.3f}"),
                        ("wall_s_min", "best wall s", "{:.3f}"),
                        ("cpu_s_median", "CPU s", "{:.3f}"),
                    ],
                ),
            ]
        )
        C.finish(args, info, {"rows": rows}, text)
        return
    versions = [("this", None)]
    if args.baseline_src:
        versions.append(("baseline", str(Path(args.baseline_src).resolve())))
        info["baseline_src"] = versions[-1][1]
    rows = []
    for round_ in range(args.repeat):
        for version, src in versions[:: 1 if round_ % 2 == 0 else -1]:
            env = dict(os.environ)
            if src is not None:
                env["PYTHONPATH"] = src
            for mode in args.modes.split(","):
                out = subprocess.run(
                    [sys.executable, __file__, "--child", mode, "--rows", str(args.rows)],
                    capture_output=True,
                    text=True,
                    check=True,
                    env=env,
                )
                rows.append(json.loads(out.stdout.strip().splitlines()[-1]))
                rows[-1]["version"] = version
                print({k: v for k, v in rows[-1].items() if k != "weights"}, flush=True)
    first = {}
    for r in rows:
        first.setdefault(r["version"], r)
    for r in rows:
        other = [o for v, o in first.items() if v != r["version"]]
        if other:
            o = other[0]
            r["objective_rel_diff"] = abs(r["objective"] - o["objective"]) / abs(o["objective"])
            r["weights_max_diff"] = float(np.max(np.abs(np.subtract(r["weights"], o["weights"]))))
    for r in rows:
        r["peak_GB"] = r["peak_rss_bytes"] / 1e9
        r["Q_GB"] = r["Q_bytes"] / 1e9
        r["stored_GB"] = r["stored_losses_bytes"] / 1e9
    text = "\n".join(
        [
            f"## In-memory fit of {args.rows:,} x 325 float32 outputs (one-vs-one, 26 classes)",
            "",
            C.header(info),
            "",
            C.table(
                rows,
                [
                    ("version", "version", None),
                    ("mode", "losses", None),
                    ("fit_s", "fit s", "{:.1f}"),
                    ("cpu_s", "CPU s", "{:.1f}"),
                    ("threads", "threads", None),
                    ("passes", "passes", None),
                    ("pass_s", "s per pass", "{:.2f}"),
                    ("loadavg_1min_start", "load", "{:.1f}"),
                    ("n_iter", "iterations", None),
                    ("objective", "objective", "{:.10f}"),
                    *(
                        [
                            ("objective_rel_diff", "objective rel. diff", "{:.1e}"),
                            ("weights_max_diff", "max weight diff", "{:.1e}"),
                        ]
                        if args.baseline_src
                        else []
                    ),
                    ("peak_GB", "peak RSS GB (Q included)", "{:.2f}"),
                    ("Q_GB", "Q GB", "{:.2f}"),
                    ("stored_GB", "stored losses GB", "{:.2f}"),
                ],
            ),
        ]
    )
    C.finish(args, info, {"rows": rows}, text)


def argparse_hidden():
    import argparse

    return argparse.SUPPRESS


if __name__ == "__main__":
    main()
