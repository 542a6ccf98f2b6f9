"""Out-of-core convex aggregation on a Dask ``LocalCluster``.

Synthetic binary outputs ``Q`` of the letter-sized problem (26 classes, the
one-vs-one code: 325 binary classifiers) are generated lazily, block by block,
from a seed (``make_block``): nothing the size of the data ever exists. The
cluster's workers have a memory limit far below the data size, so the fit must
stream. The script

1. fits the weights in memory on a sample (the first ``--sample-rows`` rows)
   with the solver (``--solver``: ``projected_newton``, the library's default,
   or ``interior_point``, the paper's Algorithm 1 with PCG and with exact
   Newton steps), and times the Newton iterations;
2. fits the same sample on the cluster (Dask path) and checks the weights (the
   interior point) or the objective value (projected Newton, whose in-memory
   start differs);
3. fits the full data on the cluster and records wall time, Newton
   iterations, passes over the data (and the extra passes rejected line-search
   trials cost), time per pass, the time spent on the client (the projected
   Newton method's Hessian sample of ``--hessian-rows`` rows, drawn in the
   first pass, and its Hessians), and the peak memory of each worker process.

It writes one JSON record (configuration snapshot included) to ``--out`` and
prints a summary; ``BENCHMARKS.md`` quotes it. Run it under ``nice``::

    nice -n 5 .venv/bin/python benchmarks/bench_dask_out_of_core.py --rows 10000000 \\
        --block-rows 10000 --workers 2 --memory-limit 1GiB --sample-rows 40000 \\
        --out benchmarks/results/dask_out_of_core_1e7.json

(the defaults; 24.2 GiB of data, about 8 minutes on 2 cores with the default solver, 2
hours with ``--solver interior_point``). The peak memory of a worker is set by
``--block-rows``, not by ``--rows``. ``--quick``: 40,000 rows.
"""

from __future__ import annotations

import functools
import json
import os
import platform
import sys
import time

import numpy as np
from scipy.special import expit

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib import common as C  # noqa: E402

N_CLASSES = 26  # the letter data set


@functools.cache
def letter_code():
    from convexagg.codes import make_code

    return make_code("ovo", N_CLASSES)


@functools.cache
def column_strengths(seed):
    """How informative each synthetic binary classifier is (heterogeneous on purpose,
    so the learned weights differ)."""
    return np.random.default_rng([seed, 2**31]).uniform(0.3, 2.5, size=letter_code().shape[1])


def block_sizes(n_rows, block_rows):
    sizes = [block_rows] * (n_rows // block_rows)
    if n_rows % block_rows:
        sizes.append(n_rows % block_rows)
    return sizes


def block_labels(seed, block, n_rows):
    """Labels of one block: the first draw of the block's generator."""
    return np.random.default_rng([seed, block]).integers(0, N_CLASSES, size=n_rows)


def make_block(seed, block, n_rows):
    """Binary outputs of one block: ``expit(strength * code[y] + N(0, 1))``, the labels
    drawn first from the same generator as :func:`block_labels`."""
    code, strengths = letter_code(), column_strengths(seed)
    rng = np.random.default_rng([seed, block])
    y = rng.integers(0, N_CLASSES, size=n_rows)
    Q = rng.standard_normal((n_rows, code.shape[1]))
    Q += strengths * code[y]
    expit(Q, out=Q)
    return Q


def dask_data(n_rows, block_rows, seed):
    """Lazy ``(Q, y)`` Dask arrays chunked by rows; each block is generated on the
    worker that needs it, every time it is needed."""
    import dask
    import dask.array as da

    code = letter_code()
    M = code.shape[1]
    Q_blocks, y_blocks = [], []
    for b, n in enumerate(block_sizes(n_rows, block_rows)):
        Q_blocks.append(
            da.from_delayed(
                dask.delayed(make_block, pure=True)(seed, b, n),
                shape=(n, M),
                dtype=np.float64,
            )
        )
        y_blocks.append(
            da.from_delayed(
                dask.delayed(block_labels, pure=True)(seed, b, n), shape=(n,), dtype=np.int64
            )
        )
    return da.concatenate(Q_blocks, axis=0), da.concatenate(y_blocks), code


def memory_data(n_rows, block_rows, seed):
    """The first ``n_rows`` rows of the same data, in memory."""
    code = letter_code()
    sizes = block_sizes(n_rows, block_rows)
    Q = np.vstack([make_block(seed, b, n) for b, n in enumerate(sizes)])
    y = np.concatenate([block_labels(seed, b, n) for b, n in enumerate(sizes)])
    return Q, y, code


def log(msg):
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


def timed_objective(base):
    """A subclass of the Dask objective that logs every pass."""

    class Timed(base):
        pass_times = []

        def _pass(self, w, with_hessian):
            t = time.perf_counter()
            out = super()._pass(w, with_hessian)
            self.pass_times.append(time.perf_counter() - t)
            log(f"pass {self.n_passes}: {self.pass_times[-1]:.1f} s")
            return out

    Timed.pass_times = []
    return Timed


def fit_dask(Q, y, code, alpha, tol, newton, max_iter=100, solver="projected_newton", **kw):
    """``kw``: ``hessian_rows`` and ``random_state`` of the projected Newton method's sample."""
    from convexagg.aggregation import Penalty
    from convexagg.aggregation.distributed import DaskObjective
    from convexagg.solvers import ProjectedNewton, interior_point

    t = time.perf_counter()
    if solver == "projected_newton":  # what ConvexDecoder().fit does on Dask arrays
        objective = timed_objective(DaskObjective)(Q, y, code, Penalty(alpha), **kw)
        result = ProjectedNewton(tol=tol, max_iter=max_iter).solve(objective)
    else:
        objective = timed_objective(DaskObjective)(Q, y, code, Penalty(alpha))
        result = interior_point(objective, tol=tol, newton=newton, max_iter=max_iter)
    wall = time.perf_counter() - t
    n_rejected = objective.n_passes - 1 - result.n_iter
    return result, {
        "solver": solver,
        "hessian_rows": kw.get("hessian_rows"),
        "client_s": wall - float(np.sum(objective.pass_times)),
        "wall_s": wall,
        "n_iter": int(result.n_iter),
        "converged": bool(result.converged),
        "n_passes": objective.n_passes,
        "rejected_trial_passes": int(n_rejected),
        "pass_s": objective.pass_times,
        "mean_pass_s": float(np.mean(objective.pass_times)),
        "s_per_newton_iter": wall / max(result.n_iter, 1),
        "objective": float(result.history["objective"][-1]),
        "n_blocks": objective.n_blocks,
    }


def fit_memory(Q, y, code, alpha, tol, newton, solver="interior_point"):
    """The in-memory fit as ``ConvexDecoder`` does it (``BlockedObjective``; Algorithm 1,
    or the projected Newton method, ``newton`` then unused)."""
    from convexagg.aggregation import BlockedObjective, Penalty
    from convexagg.solvers import ProjectedNewton, interior_point

    t = time.perf_counter()
    objective = BlockedObjective.from_outputs(Q, code, y, Penalty(alpha))
    setup = time.perf_counter() - t
    t = time.perf_counter()
    if solver == "projected_newton":
        result = ProjectedNewton(tol=tol).solve(objective)
    else:
        result = interior_point(objective, tol=tol, newton=newton)
    wall = time.perf_counter() - t
    return result, {
        "losses_s": setup,
        "wall_s": wall,
        "n_iter": int(result.n_iter),
        "converged": bool(result.converged),
        "s_per_newton_iter": wall / max(result.n_iter, 1),
        "objective": float(result.history["objective"][-1]),
    }


def _vm_hwm():
    """Peak resident memory of this process (``VmHWM``, bytes). Unlike ``ru_maxrss``,
    which Linux carries over ``execve`` (a spawned worker would report its parent's
    peak), ``VmHWM`` belongs to the process's own address space."""
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    return None


def worker_peak_rss(client):
    """Peak resident memory of every worker process since it started (bytes)."""
    return client.run(_vm_hwm)


def main(argv=None):
    parser = C.parser(__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--block-rows", type=int, default=10_000)
    parser.add_argument("--sample-rows", type=int, default=40_000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--memory-limit", default="1GiB", help="per worker")
    parser.add_argument("--alpha", type=float, default=1e-4)
    parser.add_argument("--tol", type=float, default=1e-4)
    parser.add_argument("--newton", default="cg", choices=["cg", "direct"], help="interior point")
    parser.add_argument(
        "--solver", default="projected_newton", choices=["projected_newton", "interior_point"]
    )
    parser.add_argument(
        "--hessian-rows", type=int, default=200_000, help="projected Newton's Hessian sample"
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--max-iter", type=int, default=100, help="of the full-data fit")
    parser.add_argument("--skip-sample", action="store_true", help="only the full-data fit")
    parser.add_argument("--skip-full", action="store_true", help="only the sample runs")
    args = parser.parse_args(argv)
    if args.quick:
        args.rows, args.sample_rows = 40_000, 20_000

    import dask
    import distributed
    from dask.utils import parse_bytes
    from distributed.diagnostics import MemorySampler

    import convexagg

    M = letter_code().shape[1]
    record = {
        "config": vars(args),
        "data_bytes": args.rows * M * 8,
        "memory_limit_bytes": parse_bytes(args.memory_limit),
        "versions": {
            "python": platform.python_version(),
            "numpy": np.__version__,
            "dask": dask.__version__,
            "distributed": distributed.__version__,
            "convexagg": convexagg.__version__,
        },
        "cpu_count": os.cpu_count(),
        "loadavg_start": os.getloadavg(),
        "started": time.strftime("%Y-%m-%d %H:%M:%S"),
        "argv": sys.argv,
    }
    log(
        f"data {args.rows} x {M} float64 = {record['data_bytes'] / 2**30:.1f} GiB; "
        f"{args.workers} workers x {args.memory_limit}"
    )

    # 1. in memory, on a sample that fits
    code = letter_code()
    sampling = (
        {"hessian_rows": args.hessian_rows, "random_state": args.seed}
        if args.solver == "projected_newton"
        else {}
    )
    results = {}
    if not args.skip_sample:
        Qs, ys, code = memory_data(args.sample_rows, args.block_rows, args.seed)
        record["memory_sample"] = {}
        settings = ("cg", "direct") if args.solver == "interior_point" else ("default",)
        for newton in settings:
            results[newton], stats = fit_memory(
                Qs, ys, code, args.alpha, args.tol, newton, args.solver
            )
            record["memory_sample"][newton] = stats
            log(f"in memory ({newton}), {args.sample_rows} rows: {stats}")
        del Qs, ys

    cluster = distributed.LocalCluster(
        n_workers=args.workers,
        threads_per_worker=1,
        processes=True,
        memory_limit=args.memory_limit,
        dashboard_address=":0",  # a free port: another cluster may hold 8787
    )
    client = distributed.Client(cluster)
    workers = set(client.scheduler_info()["workers"])
    try:
        # 2. the same sample on the cluster
        if not args.skip_sample:
            Q, y, _ = dask_data(args.sample_rows, args.block_rows, args.seed)
            res, stats = fit_dask(
                Q, y, code, args.alpha, args.tol, args.newton, solver=args.solver, **sampling
            )
            key = args.newton if args.solver == "interior_point" else "default"
            ref = results[key]
            stats["max_abs_weight_diff_vs_memory"] = float(np.abs(res.w - ref.w).max())
            f_ref = float(ref.history["objective"][-1])
            stats["objective_rel_diff_vs_memory"] = (stats["objective"] - f_ref) / f_ref
            record["dask_sample"] = stats
            log(f"dask ({args.solver}), {args.sample_rows} rows: {stats}")

        # 3. the full data
        if not args.skip_full:
            Q, y, _ = dask_data(args.rows, args.block_rows, args.seed)
            sampler = MemorySampler()
            with sampler.sample("fit", measure="process", interval=1.0):
                res, stats = fit_dask(
                    Q,
                    y,
                    code,
                    args.alpha,
                    args.tol,
                    args.newton,
                    max_iter=args.max_iter,
                    solver=args.solver,
                    **sampling,
                )
            samples = sampler.samples["fit"]
            stats["cluster_process_memory_max_bytes"] = max(v for _, v in samples)
            stats["weights_summary"] = {
                "min": float(res.w.min()),
                "max": float(res.w.max()),
                "n_zero": int((res.w < 1e-6).sum()),
            }
            record["dask_full"] = stats
            log(f"dask ({args.solver}), {args.rows} rows: wall {stats['wall_s']:.0f} s")
        record["worker_peak_rss_bytes"] = worker_peak_rss(client)
        record["workers_restarted"] = set(client.scheduler_info()["workers"]) != workers
    finally:
        client.close()
        cluster.close()
    record["loadavg_end"] = os.getloadavg()
    record["finished"] = time.strftime("%Y-%m-%d %H:%M:%S")
    log(json.dumps({k: v for k, v in record.items() if k != "config"}, default=str)[:4000])
    if args.out:
        os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
        with open(args.out, "w") as fh:
            json.dump(record, fh, indent=1, default=str)
    return record


if __name__ == "__main__":
    main()
