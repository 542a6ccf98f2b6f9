"""What the benchmark scripts share: their command line, timing, machine facts, output.

Every entry point takes ``--data-dir`` (default: ``$CONVEXAGG_DATA_DIR`` or
``/work/shared/datasets``), ``--repeat``, ``--quick`` (a plumbing run on small sizes),
``--out`` (a JSON file for the run) and prints Markdown tables.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

DEFAULT_DATA_DIR = "/work/shared/datasets"


def parser(description):
    p = argparse.ArgumentParser(description=description)
    p.add_argument(
        "--data-dir",
        default=os.environ.get("CONVEXAGG_DATA_DIR", DEFAULT_DATA_DIR),
        help="folder holding letter.csv.gz (default: $CONVEXAGG_DATA_DIR or %(default)s)",
    )
    p.add_argument(
        "--cache-dir",
        default=os.environ.get(
            "CONVEXAGG_BENCH_CACHE", str(Path.home() / ".cache" / "convexagg-benchmarks")
        ),
        help="where the binary outputs Q of the workload are cached (outside the repository)",
    )
    p.add_argument("--no-cache", action="store_true", help="recompute Q, do not read the cache")
    p.add_argument("--repeat", type=int, default=7, help="timed repetitions (best and median)")
    p.add_argument("--out", default=None, help="write the results (JSON) to this file")
    p.add_argument("--quick", action="store_true", help="plumbing run: small sizes, 1 repetition")
    p.add_argument(
        "--blas-threads",
        type=int,
        default=None,
        help="limit BLAS to this many threads for the whole run (threadpoolctl); default: "
        "the libraries' own choice (all cores)",
    )
    return p


def limit_blas(args):
    """Apply ``--blas-threads`` for the rest of the process (a no-op when not given)."""
    if args.blas_threads:
        from threadpoolctl import threadpool_limits

        threadpool_limits(limits=args.blas_threads, user_api="blas")


# -- measuring ----------------------------------------------------------------------------------


class Times(list):
    """Wall seconds of each repetition, with the process CPU seconds in ``.cpu``."""

    cpu: list


def timed(fn, repeat, warmup=1):
    """Run ``fn`` ``warmup`` times untimed, then ``repeat`` times.

    Returns the wall seconds of each run (a list) whose ``.cpu`` holds the CPU
    seconds of this process (all its threads) for the same runs: on a machine
    shared with other jobs, CPU time is the less load-sensitive figure.
    """
    for _ in range(warmup):
        fn()
    times, cpu = Times(), []
    for _ in range(repeat):
        c0, t0 = time.process_time(), time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    times.cpu = cpu
    return times


def summary(times):
    out = {"best": min(times), "median": statistics.median(times), "n": len(times)}
    if getattr(times, "cpu", None):
        out["cpu_best"] = min(times.cpu)
    return out


def peak_memory(fn):
    """Peak bytes allocated (numpy and Python: tracemalloc) while ``fn`` runs, and its result."""
    import gc
    import tracemalloc

    gc.collect()
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        result = fn()
        peak = tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()
    return peak, result


def loadavg():
    return os.getloadavg()


def machine():
    """The facts BENCHMARKS.md states: cores, CPU, memory, load, versions, BLAS threads."""
    import numpy
    import scipy
    import sklearn
    from threadpoolctl import threadpool_info

    cpu = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = "unknown"
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                mem = f"{int(line.split()[1]) / 2**20:.1f} GiB"
    except OSError:
        pass
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=False
        ).stdout.strip()
    except OSError:
        commit = ""
    return {
        "nproc": os.cpu_count(),
        "cpu": cpu,
        "memory": mem,
        "loadavg_start": loadavg(),
        "python": platform.python_version(),
        "numpy": numpy.__version__,
        "scipy": scipy.__version__,
        "sklearn": sklearn.__version__,
        "blas": [(i.get("internal_api"), i.get("num_threads")) for i in threadpool_info()],
        "commit": commit,
        "command": " ".join([Path(sys.executable).name] + sys.argv),
    }


def header(info):
    la = info["loadavg_start"]
    return (
        f"machine: {info['nproc']} cores, {info['cpu']}, {info['memory']}; "
        f"load average at start {la[0]:.2f} / {la[1]:.2f} / {la[2]:.2f} (1/5/15 min); "
        f"numpy {info['numpy']}, scipy {info['scipy']}, scikit-learn {info['sklearn']}, "
        f"BLAS {info['blas']}; commit {info['commit']}"
    )


def table(rows, columns):
    """Markdown table of ``rows`` (dicts) with ``columns`` as (key, title, format)."""
    out = ["| " + " | ".join(t for _, t, _ in columns) + " |"]
    out.append("|" + "|".join(" --- " for _ in columns) + "|")
    for r in rows:
        cells = []
        for key, _, fmt in columns:
            v = r.get(key)
            cells.append("" if v is None else (fmt.format(v) if fmt else str(v)))
        out.append("| " + " | ".join(cells) + " |")
    return "\n".join(out)


def finish(args, info, results, text):
    info["loadavg_end"] = loadavg()
    la = info["loadavg_end"]
    text += f"\n\nload average at end {la[0]:.2f} / {la[1]:.2f} / {la[2]:.2f}"
    print(text)
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        with open(args.out, "w") as fh:
            json.dump({"machine": info, "results": results, "markdown": text}, fh, indent=1)


def write_json(path, obj):
    """Write ``obj`` to ``path`` as indented JSON, atomically (a temporary file, then a rename)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(obj, indent=1))
    os.replace(tmp, path)
