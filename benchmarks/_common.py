"""What the benchmark scripts share: the letter workload, timing, machine facts, output.

Not part of the library and never imported by the tests. Every script takes
``--data-dir`` (default: ``$CONVEXAGG_DATA_DIR`` or ``/work/shared/datasets``),
``--repeat``, ``--out`` (a JSON file for the run) and prints Markdown tables.

The letter workload (issue 5): ``letter.csv.gz`` (label in the last column),
standardised on a stratified 90% training split (18,000 rows, ``random_state=0``;
the other 2,000 rows are the test rows), one-vs-one code (325 classifiers, 26
classes), ``LogisticRegression()`` binaries fitted on the training rows, ``Q``
their probabilities on the training rows, ``alpha = 1e-4``.
"""

from __future__ import annotations

import argparse
import csv
import gzip
import hashlib
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

DEFAULT_DATA_DIR = "/work/shared/datasets"
ALPHA = 1e-4


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


# -- data ---------------------------------------------------------------------------------------


def load_csv(name, data_dir):
    """``X`` (float) and ``y`` (str) of ``<data_dir>/<name>.csv.gz`` (label in the last column)."""
    path = Path(data_dir) / f"{name}.csv.gz"
    if not path.exists():
        sys.exit(f"{path} not found; pass --data-dir or set CONVEXAGG_DATA_DIR.")
    with gzip.open(path, "rt", newline="") as fh:
        rows = list(csv.reader(fh))
    body = rows[1:]
    X = np.array([r[:-1] for r in body], dtype=np.float64)
    y = np.array([r[-1] for r in body])
    return X, y


def letter_split(data_dir):
    """Standardised letter, stratified 90/10 split (18,000 / 2,000 rows), labels 0..25."""
    from sklearn.model_selection import train_test_split
    from sklearn.preprocessing import LabelEncoder, StandardScaler

    X, labels = load_csv("letter", data_dir)
    y = LabelEncoder().fit_transform(labels)
    X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.1, stratify=y, random_state=0)
    scaler = StandardScaler().fit(X_tr)
    return scaler.transform(X_tr), scaler.transform(X_te), y_tr, y_te


def letter_workload(args, code_name="ovo", n_jobs=None, n_classes=26):
    """Binary outputs of the letter workload (cached by content of the inputs).

    ``n_classes < 26`` keeps the rows of the first ``n_classes`` classes (for codes
    that grow exponentially with the classes, such as the complete code).

    Returns a dict with ``Q``, ``y`` (training rows), ``Q_test``, ``y_test``,
    ``code``, ``X``, ``X_test``.
    """
    from sklearn.linear_model import LogisticRegression

    from convexagg.binary import fit_binaries, predict_binaries
    from convexagg.codes import make_code

    X, X_te, y, y_te = letter_split(args.data_dir)
    if n_classes < 26:
        keep, keep_te = y < n_classes, y_te < n_classes
        X, y, X_te, y_te = X[keep], y[keep], X_te[keep_te], y_te[keep_te]
    code = make_code(code_name, n_classes, random_state=0)
    key = hashlib.sha1(
        b"".join([X.tobytes(), y.tobytes(), code.tobytes(), b"LogisticRegression()"])
    ).hexdigest()[:16]
    cache = Path(args.cache_dir) / f"letter-{code_name}-{key}.npz"
    if cache.exists() and not args.no_cache:
        d = np.load(cache)
        Q, Q_te = d["Q"], d["Q_test"]
    else:
        est = fit_binaries(LogisticRegression(), X, y, code, n_jobs=n_jobs)
        Q = predict_binaries(est, X, "proba")
        Q_te = predict_binaries(est, X_te, "proba")
        cache.parent.mkdir(parents=True, exist_ok=True)
        np.savez(cache, Q=Q, Q_test=Q_te)
    return {"Q": Q, "y": y, "Q_test": Q_te, "y_test": y_te, "code": code, "X": X, "X_test": X_te}


# -- the solver settings the scripts compare -------------------------------------------------------


def solver_settings():
    """``[(label, solver)]``: the default, the paper's preset, version 0.1's fastest
    setting and the default method in double precision (what ``dtype="auto"`` buys)."""
    from convexagg.solvers import InteriorPoint, ProjectedNewton

    return [
        ("default (auto)", "auto"),
        ("paper's Algorithm 1 (interior_point)", "interior_point"),
        (
            "0.1's fastest: Mehrotra, direct, float32, subsample start",
            InteriorPoint(
                method="predictor_corrector", newton="direct", dtype="float32", init="subsample"
            ),
        ),
        ("projected Newton, float64", ProjectedNewton(dtype="float64")),
    ]


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


def synthetic_ovo_outputs(n, n_classes, seed=0, chunk=100_000, dtype=np.float64):
    """One-vs-one probabilities that carry class information (for scaling runs).

    Classifier ``l`` has quality ``s_l ~ U(0.5, 3)``; a sample of class ``k``
    gets margin ``code[k, l] s_l + N(0, 1)`` (pure noise for classes the
    classifier does not use), negated for 10% of the samples (label noise).
    """
    from convexagg.codes import one_vs_one

    rng = np.random.default_rng(seed)
    code = one_vs_one(n_classes)
    M = code.shape[1]
    signal = rng.uniform(0.5, 3.0, size=M)
    y = rng.integers(0, n_classes, size=n)
    Q = np.empty((n, M), dtype=dtype)
    for start in range(0, n, chunk):
        rows = slice(start, min(start + chunk, n))
        margin = code[y[rows]] * signal + rng.standard_normal((rows.stop - start, M))
        flip = rng.random(rows.stop - start) < 0.1
        margin[flip] *= -1
        Q[rows] = 1.0 / (1.0 + np.exp(-margin))
    return Q, y, code
