"""Model files and start-up: size, load time, ``convexagg predict`` and ``--help`` wall
times, and the import of the estimators against scikit-learn's.

    python benchmarks/bench_model_files.py [--repeat 7] [--out results/model_files.json]

Measured, each against its target (BENCHMARKS.md):

* **size**: the default model on digits -- ``ConvexAggregationClassifier(make_pipeline(
  StandardScaler(), LogisticRegression()), random_state=0)`` fitted on ``load_digits``
  -- saved by ``convexagg.io.save``, against ``pickle.dumps`` of the same object
  (target: at most 2x) and against skops' own ``skops.io.dumps`` (for reference);
* **load**: ``convexagg.io.load`` of that file, in the process that saved it
  (the modules imported), interleaved with ``pickle.loads``; and once per fresh
  process: ``import convexagg.io``, the import of ``skops.io`` as ``load`` does it
  (the names of the scikit-learn estimators skops trusts read from convexagg's
  cache), the first call (which imports the classes the model needs), the whole
  process (target: the call within 0.5 s);
* **predict**: ``convexagg predict MODEL DATA.csv`` on 38 rows of digits, the model
  saved by ``convexagg fit`` on the digits as a CSV, wall time of the whole process
  (target: 1.5 s), with the cache of skops' trusted names in place (warm) and
  removed before each run (cold: ``import skops.io`` scans every scikit-learn module,
  and writes the cache); the same for a process that only loads the model
  (``convexagg.io.load``); interleaved with the floor it cannot go below: a process
  that only imports ``pandas`` and the scikit-learn modules the model needs;
* **help**: ``convexagg --help`` and every subcommand's ``--help`` (target: 0.5 s);
* **import**: ``from convexagg import ConvexAggregationClassifier`` against
  ``import sklearn.linear_model``, fresh processes interleaved (target: at most
  1.2x), and, from one ``python -X importtime`` run, what the estimators import
  beyond ``sklearn.linear_model`` (module, cumulative microseconds).

Processes are started interleaved (one of each alternative per round), so a load
change on a shared machine hits all alike; best and median per alternative and
their ratios. Temporary files live in a temporary folder (deleted afterwards), the
cache of skops' trusted names too (``XDG_CACHE_HOME``: nothing is written to the
user's own cache).
Self-contained: it imports nothing from the other benchmark scripts.
"""

from __future__ import annotations

import json
import os
import pickle
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from lib import common as C  # noqa: E402

# What a model of ``convexagg fit`` needs besides convexagg: its classes' modules.
FLOOR_MODULES = (
    "sklearn.linear_model",
    "sklearn.pipeline",
    "sklearn.preprocessing",
    "sklearn.compose",
    "sklearn.impute",
)

TARGETS = {
    "size_vs_pickle": 2.0,
    "load_s": 0.5,
    "predict_s": 1.5,
    "help_s": 0.5,
    "import_vs_sklearn": 1.2,
}


def _environment(folder):
    """The environment of the timed processes: one BLAS thread, this convexagg, its
    bytecode cached in ``folder / "pycache"`` as an installed package has it (a
    checkout run with PYTHONDONTWRITEBYTECODE would compile every module in every
    process), the user's cache directory ``folder / "cache"``."""
    import convexagg

    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(folder / "pycache")
    env["XDG_CACHE_HOME"] = str(folder / "cache")
    src = str(Path(convexagg.__file__).resolve().parent.parent)
    env["PYTHONPATH"] = os.pathsep.join([src, *filter(None, [env.get("PYTHONPATH")])])
    return env


def _wall(argv, env):
    """Wall time of one process, in seconds (its output discarded; it must succeed)."""
    start = time.perf_counter()
    done = subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(f"{argv} failed: {done.stderr.decode()[-2000:]}")
    return elapsed


def _summary(times):
    return {
        "best_s": min(times),
        "median_s": statistics.median(times),
        "times_s": [round(t, 4) for t in times],
    }


def _interleaved(commands, repeat, env, cold=()):
    """``{name: summary}`` of each command's wall time, the commands run in turn
    (after one untimed run of each, which caches its bytecode); the commands named
    in ``cold`` run without convexagg's cache (removed before each run)."""

    def run(name, argv):
        if name in cold:
            shutil.rmtree(Path(env["XDG_CACHE_HOME"]) / "convexagg", ignore_errors=True)
        return _wall(argv, env)

    for name, argv in commands.items():
        run(name, argv)
    times = {name: [] for name in commands}
    for _ in range(repeat):
        for name, argv in commands.items():
            times[name].append(run(name, argv))
    return {name: _summary(t) for name, t in times.items()}


def _ratio(a, b):
    return {
        "best": a["best_s"] / b["best_s"],
        "median": a["median_s"] / b["median_s"],
    }


def default_model():
    """The default model on digits, fitted."""
    from sklearn.datasets import load_digits
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from convexagg import ConvexAggregationClassifier

    X, y = load_digits(return_X_y=True)
    learner = make_pipeline(StandardScaler(), LogisticRegression())
    return ConvexAggregationClassifier(learner, random_state=0).fit(X, y), X


def measure_files(folder, repeat, env):
    import skops.io as sio

    import convexagg.io as cio

    model, X = default_model()
    path = folder / "digits.skops"
    cio.save(model, path)
    pickled = pickle.dumps(model)
    plain = sio.dumps(model)  # skops' own format: a node per attribute, uncompressed
    loaded = cio.load(path)
    identical = bool(np.array_equal(loaded.predict_proba(X), model.predict_proba(X)))
    size = {
        "convexagg_io_bytes": path.stat().st_size,
        "pickle_bytes": len(pickled),
        "skops_dumps_bytes": len(plain),
        "vs_pickle": path.stat().st_size / len(pickled),
        "predict_proba_identical_after_load": identical,
    }
    times = {"convexagg.io.load": [], "pickle.loads": []}
    for _ in range(repeat):
        start = time.perf_counter()
        cio.load(path)
        times["convexagg.io.load"].append(time.perf_counter() - start)
        start = time.perf_counter()
        pickle.loads(pickled)
        times["pickle.loads"].append(time.perf_counter() - start)
    start = time.perf_counter()
    sio.loads(plain, trusted=sio.get_untrusted_types(data=plain))
    skops_once = time.perf_counter() - start
    script = (
        "import time, sys\n"
        "t0 = time.perf_counter()\n"
        "import convexagg.io as cio\n"
        "t1 = time.perf_counter()\n"
        "cio.models._skops_io()\n"
        "t2 = time.perf_counter()\n"
        "cio.load(sys.argv[1])\n"
        "t3 = time.perf_counter()\n"
        "print(t1 - t0, t2 - t1, t3 - t2)\n"
    )
    calls, imports, skops_imports, processes = [], [], [], []
    subprocess.run([sys.executable, "-c", script, str(path)], env=env, capture_output=True)
    for _ in range(repeat):
        start = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-c", script, str(path)], env=env, capture_output=True, text=True
        )
        processes.append(time.perf_counter() - start)
        first_import, skops_import, first_call = map(float, done.stdout.split())
        imports.append(first_import)
        skops_imports.append(skops_import)
        calls.append(first_call)
    load = {
        "in_process": {name: _summary(t) for name, t in times.items()},
        "skops_loads_of_skops_dumps_once_s": skops_once,
        "fresh_process": {
            "load_call": _summary(calls),
            "import_convexagg_io": _summary(imports),
            "import_skops_io": _summary(skops_imports),
            "whole_process": _summary(processes),
        },
    }
    return size, load


def measure_predict(folder, repeat, env):
    from sklearn.datasets import load_digits

    from convexagg.cli import main

    digits = load_digits(as_frame=True)
    train = folder / "digits.csv"
    digits.frame.to_csv(train, index=False)
    rows = folder / "rows.csv"
    digits.data.iloc[:38].to_csv(rows, index=False)
    model = folder / "digits_cli.skops"
    argv = ["fit", str(train), "--target", "target", "--out", str(model), "--holdout", "0"]
    if main(argv) != 0:
        raise RuntimeError("convexagg fit failed")
    floor = f"import pandas, {', '.join(FLOOR_MODULES)}"
    predict = [sys.executable, "-m", "convexagg", "predict", str(model), str(rows)]
    load = [sys.executable, "-c", f"from convexagg.io import load; load({str(model)!r})"]
    commands = {
        "convexagg predict": predict,
        "convexagg predict, cold cache": predict,
        "load process": load,
        "load process, cold cache": load,
        "floor (imports only)": [sys.executable, "-c", floor],
    }
    cold = {"convexagg predict, cold cache", "load process, cold cache"}
    result = _interleaved(commands, repeat, env, cold=cold)
    result["floor_statement"] = floor
    result["model_file_bytes"] = model.stat().st_size
    result["predict_vs_floor"] = _ratio(result["convexagg predict"], result["floor (imports only)"])
    result["cold_vs_warm"] = {
        "predict": _ratio(result["convexagg predict, cold cache"], result["convexagg predict"]),
        "load process": _ratio(result["load process, cold cache"], result["load process"]),
    }
    return result


def _subcommands():
    from convexagg.cli import build_parser

    parser = build_parser()
    actions = [a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction"]
    return sorted(actions[0].choices) if actions else []


def measure_help(repeat, env):
    commands = {"--help": [sys.executable, "-m", "convexagg", "--help"]}
    for name in _subcommands():
        commands[f"{name} --help"] = [sys.executable, "-m", "convexagg", name, "--help"]
    return _interleaved(commands, repeat, env)


def _importtime(statement, env):
    """``{module: cumulative microseconds}`` of one ``python -X importtime`` run."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", statement],
        env=env,
        capture_output=True,
        text=True,
    )
    cumulative = {}
    for line in done.stderr.splitlines():
        parts = line.removeprefix("import time:").split("|")
        if len(parts) == 3 and parts[1].strip().isdigit():
            cumulative.setdefault(parts[2].strip(), int(parts[1]))
    return cumulative


def measure_import(repeat, env):
    ours = "from convexagg import ConvexAggregationClassifier"
    theirs = "import sklearn.linear_model"
    commands = {ours: [sys.executable, "-c", ours], theirs: [sys.executable, "-c", theirs]}
    result = _interleaved(commands, repeat, env)
    result["ratio"] = _ratio(result[ours], result[theirs])
    sklearn_modules = set(_importtime(theirs, env))
    beyond = {m: us for m, us in _importtime(ours, env).items() if m not in sklearn_modules}
    top = sorted(beyond.items(), key=lambda item: -item[1])[:25]
    result["importtime_beyond_sklearn_linear_model_us"] = dict(top)
    return result


def _machine():
    import sklearn

    import convexagg

    try:
        commit = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            cwd=Path(__file__).resolve().parent,
        ).stdout.strip()
    except OSError:
        commit = None
    return {
        "nproc": os.cpu_count(),
        "loadavg_start": list(os.getloadavg()) if hasattr(os, "getloadavg") else None,
        "python": platform.python_version(),
        "numpy": np.__version__,
        "sklearn": sklearn.__version__,
        "convexagg": convexagg.__version__,
        "commit": commit,
        "command": " ".join(["python", *sys.argv]),
    }


def _verdicts(result):
    size = result["size"]["vs_pickle"]
    load = result["load"]["fresh_process"]["load_call"]["median_s"]
    predict = result["predict"]["convexagg predict"]["median_s"]
    helps = max(v["median_s"] for v in result["help"].values())
    ratio = result["import"]["ratio"]["median"]
    rows = [
        ("file size / pickle", size, TARGETS["size_vs_pickle"]),
        ("first convexagg.io.load call, fresh process (s)", load, TARGETS["load_s"]),
        ("convexagg predict, 38 rows (s)", predict, TARGETS["predict_s"]),
        ("slowest --help (s)", helps, TARGETS["help_s"]),
        ("import / sklearn.linear_model", ratio, TARGETS["import_vs_sklearn"]),
    ]
    return [
        {"measure": name, "median": value, "target": target, "met": bool(value <= target)}
        for name, value, target in rows
    ]


def main(argv=None):
    # the common options; the model is fitted on scikit-learn's digits (no --data-dir read)
    args = C.parser(__doc__.splitlines()[0]).parse_args(argv)
    if args.quick:
        args.repeat = 2
    result = {"machine": _machine(), "targets": TARGETS}
    with tempfile.TemporaryDirectory() as folder:
        folder = Path(folder)
        env = _environment(folder)
        result["size"], result["load"] = measure_files(folder, args.repeat, env)
        result["predict"] = measure_predict(folder, args.repeat, env)
        result["help"] = measure_help(args.repeat, env)
        result["import"] = measure_import(args.repeat, env)
    result["verdicts"] = _verdicts(result)
    result["machine"]["loadavg_end"] = list(os.getloadavg()) if hasattr(os, "getloadavg") else None
    print("| measure | median | best | target | met |")
    print("|---|---|---|---|---|")
    best = {
        "file size / pickle": result["size"]["vs_pickle"],
        "first convexagg.io.load call, fresh process (s)": result["load"]["fresh_process"][
            "load_call"
        ]["best_s"],
        "convexagg predict, 38 rows (s)": result["predict"]["convexagg predict"]["best_s"],
        "slowest --help (s)": max(v["best_s"] for v in result["help"].values()),
        "import / sklearn.linear_model": result["import"]["ratio"]["best"],
    }
    for row in result["verdicts"]:
        print(
            f"| {row['measure']} | {row['median']:.3g} | {best[row['measure']]:.3g} | "
            f"{row['target']:g} | {'yes' if row['met'] else 'no'} |"
        )
    if args.out:
        Path(args.out).write_text(json.dumps(result, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
