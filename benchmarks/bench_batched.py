"""The batched trainer of logistic-regression binaries against scikit-learn's fits one by one.

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 PYTHONPATH=src python \\
        benchmarks/bench_batched.py [--data-dir ../shared/datasets] [--repeat 3] [--out FILE]

1. letter (the stratified 90 % training split, 18,000 x 16, ``random_state=0``), the
   binaries of the one-vs-one-and-rest code (325 + 26 columns) on 5 shuffled stratified
   folds (``random_state=0``), ``fold_binaries`` as the classifier calls it: batched
   (:mod:`convexagg.batched_logistic`) and per-binary
   (:func:`~convexagg.batched_logistic.per_binary_path`), the two alternating in one
   process, ``--repeat`` times each, for ``make_pipeline(StandardScaler(),
   LogisticRegression())`` on the raw features and ``LogisticRegression()`` on the
   standardised ones. Each binary's objective (scikit-learn's ``C * sum_i s_i loss_i +
   ||w||^2 / 2`` on its rows, computed from its coefficients) is compared between the
   two paths: the per-binary fits stop at L-BFGS's ``tol=1e-4``, the batched ones at the
   optimum, so their difference is the per-binary fits' distance from the optimum.
2. The whole fit of ``ConvexAggregationClassifier(make_pipeline(StandardScaler(),
   LogisticRegression()), code="ovo+ovr", random_state=0)`` on letter, once each path,
   and on two small sets of the Kull suite (vowel, yeast: all rows), split into stages
   (:func:`staged_fit`): the fold binaries, the zero entries' prior choice, the final
   aggregation fit and the rest.

One BLAS thread unless ``--blas-threads`` says otherwise (set before NumPy loads).
Prints Markdown tables; ``--out`` writes them and the numbers as JSON. Self-contained: it
imports convexagg, scikit-learn and NumPy only.
"""

from __future__ import annotations

import os
import sys


def _blas_threads(argv):
    """``--blas-threads N`` (default 1), read before NumPy loads its BLAS."""
    for i, arg in enumerate(argv):
        if arg.startswith("--blas-threads"):
            value = arg.partition("=")[2] or (argv[i + 1] if i + 1 < len(argv) else "1")
            return value
    return "1"


for _name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_name] = _blas_threads(sys.argv[1:])

import argparse  # noqa: E402
import csv  # noqa: E402
import gzip  # noqa: E402
import hashlib  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import sklearn  # noqa: E402
from sklearn.linear_model import LogisticRegression  # noqa: E402
from sklearn.model_selection import StratifiedKFold, train_test_split  # noqa: E402
from sklearn.pipeline import Pipeline, make_pipeline  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402

import convexagg  # noqa: E402
import convexagg._training as training  # noqa: E402
import convexagg.decoders.convex as convex_module  # noqa: E402
import convexagg.decoders.selection as selection_module  # noqa: E402
from convexagg import ConvexAggregationClassifier  # noqa: E402
from convexagg.batched_logistic import per_binary_path  # noqa: E402
from convexagg.codes import make_code  # noqa: E402
from convexagg.out_of_fold import fold_binaries  # noqa: E402


def load(data_dir, name):
    """``(X, y)`` of ``<name>.csv.gz`` (label last), its sha256 checked against the
    folder's MANIFEST.json."""
    data_dir = Path(data_dir)
    manifest = json.loads((data_dir / "MANIFEST.json").read_text())
    entry = next(e for e in manifest if e["name"] == name)
    path = data_dir / f"{name}.csv.gz"
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    if digest != entry["sha256"]:
        raise SystemExit(f"{path}: sha256 {digest} is not MANIFEST.json's {entry['sha256']}")
    with gzip.open(path, "rt", newline="") as f:
        rows = list(csv.reader(f))[1:]
    X = np.array([[float(v) for v in row[:-1]] for row in rows])
    y = np.unique([row[-1] for row in rows], return_inverse=True)[1]
    return X, y


def letter(data_dir):
    X, y = load(data_dir, "letter")
    X, _, y, _ = train_test_split(X, y, test_size=2000, stratify=y, random_state=0)
    return X, y


def objective(est, X, target):
    """scikit-learn's ``LogisticRegression`` objective of a fitted binary on its rows."""
    if isinstance(est, Pipeline):
        X, model = est[:-1].transform(X), est[-1]
    else:
        model = est
    margin = X @ model.coef_[0] + model.intercept_[0]
    loss = np.logaddexp(0.0, margin) - target * margin
    return model.C * loss.sum() + 0.5 * model.coef_[0] @ model.coef_[0]


def objectives(members, X, y, code, splits):
    values = []
    for fold, (train, _) in zip(members, splits):
        for l, est in enumerate(fold):
            rows = train[code[y[train], l] != 0]
            values.append(objective(est, X[rows], (code[y[rows], l] == 1).astype(float)))
    return np.array(values)


def summary(times):
    return {"best": min(times), "median": statistics.median(times), "n": len(times)}


def trainer(X, y, learner, repeat):
    """The fold binaries of letter, batched and per-binary, interleaved."""
    code = make_code("ovo+ovr", 26)
    splits = list(StratifiedKFold(5, shuffle=True, random_state=0).split(X, y))
    times = {"batched": [], "per-binary": []}
    members = {}
    for _ in range(repeat):
        for path in times:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # L-BFGS's iteration limit, a few binaries
                if path == "batched":
                    start = time.perf_counter()
                    members[path] = fold_binaries(learner, X, y, code, splits, "proba")[0]
                else:
                    with per_binary_path():
                        start = time.perf_counter()
                        members[path] = fold_binaries(learner, X, y, code, splits, "proba")[0]
                times[path].append(time.perf_counter() - start)
    f_batched = objectives(members["batched"], X, y, code, splits)
    f_each = objectives(members["per-binary"], X, y, code, splits)
    gap = (f_each - f_batched) / np.abs(f_batched)
    model = [
        est[-1] if isinstance(est, Pipeline) else est for fold in members["batched"] for est in fold
    ]
    ratios = [e / b for e, b in zip(times["per-binary"], times["batched"])]
    return {
        "binaries": len(f_batched),
        "times": {path: summary(ts) for path, ts in times.items()},
        "speedup_best": min(times["per-binary"]) / min(times["batched"]),
        "speedup_median_of_pairs": statistics.median(ratios),
        "newton_iterations_mean": float(np.mean([m.n_iter_[0] for m in model])),
        "objective_per_binary_minus_batched_relative": {
            "min": float(gap.min()),
            "median": float(np.median(gap)),
            "max": float(gap.max()),
            "batched_lower_or_equal": int(np.sum(f_batched <= f_each * (1 + 1e-12))),
        },
    }


def staged_fit(make, X, y):
    """Seconds of a whole fit and of its stages, timed by wrapping what does them: the
    fold binaries (``fold_binaries``), the decoder's fit (``ConvexDecoder._fit_problem``:
    the zero entries' prior choice, its solves until ``PenaltyChoice.points`` ends, then
    the final aggregation fit), the rest (validation, the plan, the out-of-fold
    probabilities...)."""
    spent = {"binaries": 0.0, "zero-entry choice": 0.0, "final aggregation fit": 0.0}
    originals = (
        training.fold_binaries,
        convex_module.ConvexDecoder._fit_problem,
        selection_module.PenaltyChoice.points,
    )
    choice_end = []

    def binaries(*args, **kwargs):
        start = time.perf_counter()
        try:
            return originals[0](*args, **kwargs)
        finally:
            spent["binaries"] += time.perf_counter() - start

    def fit_problem(*args, **kwargs):
        start = time.perf_counter()
        choice_end.clear()
        try:
            return originals[1](*args, **kwargs)
        finally:
            end = time.perf_counter()
            middle = choice_end[0] if choice_end else start
            spent["zero-entry choice"] += middle - start
            spent["final aggregation fit"] += end - middle

    def points(self):
        yield from originals[2](self)
        choice_end.append(time.perf_counter())

    training.fold_binaries = binaries
    convex_module.ConvexDecoder._fit_problem = fit_problem
    selection_module.PenaltyChoice.points = points
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            start = time.perf_counter()
            clf = make().fit(X, y)
            total = time.perf_counter() - start
    finally:
        training.fold_binaries = originals[0]
        convex_module.ConvexDecoder._fit_problem = originals[1]
        selection_module.PenaltyChoice.points = originals[2]
    spent["rest"] = total - sum(spent.values())
    return {"total": total, **spent, "zero_entry_penalty_": clf.zero_entry_penalty_}


def default(random_state=0):
    return ConvexAggregationClassifier(
        make_pipeline(StandardScaler(), LogisticRegression()),
        code="ovo+ovr",
        random_state=random_state,
    )


def whole_fits(sets):
    results = {}
    for name, (X, y) in sets.items():
        results[name] = {"batched": staged_fit(default, X, y)}
        with per_binary_path():
            results[name]["per-binary"] = staged_fit(default, X, y)
    return results


def machine(command):
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=True
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        commit = None
    return {
        "nproc": os.cpu_count(),
        "loadavg": list(os.getloadavg()),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "sklearn": sklearn.__version__,
        "convexagg": convexagg.__version__,
        "threads": {k: os.environ.get(k) for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS")},
        "commit": commit,
        "command": command,
    }


def markdown(results):
    lines = [
        "| letter, 5 folds x 351 binaries | batched best / median (s) | per-binary best / "
        "median (s) | speed-up best / median of pairs | Newton iterations | objective: "
        "per-binary minus batched, relative (min / median / max) |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for name, r in results["trainer"].items():
        t, g = r["times"], r["objective_per_binary_minus_batched_relative"]
        lines.append(
            f"| {name} | {t['batched']['best']:.2f} / {t['batched']['median']:.2f} | "
            f"{t['per-binary']['best']:.2f} / {t['per-binary']['median']:.2f} | "
            f"{r['speedup_best']:.1f}x / {r['speedup_median_of_pairs']:.1f}x | "
            f"{r['newton_iterations_mean']:.1f} | "
            f"{g['min']:.1e} / {g['median']:.1e} / {g['max']:.1e} |"
        )
    lines += [
        "",
        "| whole fit (once each) | path | total (s) | fold binaries | zero-entry choice | "
        "final aggregation fit | rest |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for name, paths in results["whole_fit"].items():
        for path, r in paths.items():
            lines.append(
                f"| {name} | {path} | {r['total']:.2f} | {r['binaries']:.2f} | "
                f"{r['zero-entry choice']:.2f} | {r['final aggregation fit']:.2f} | "
                f"{r['rest']:.2f} |"
            )
    return "\n".join(lines)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument(
        "--data-dir",
        default=os.environ.get("CONVEXAGG_DATA_DIR", "../shared/datasets"),
        help="folder of letter.csv.gz and kull2019/ (default: $CONVEXAGG_DATA_DIR or %(default)s)",
    )
    p.add_argument("--repeat", type=int, default=3, help="timed repetitions of the trainer")
    p.add_argument("--out", default=None, help="write the results (JSON) to this file")
    p.add_argument("--quick", action="store_true", help="3,000 letter rows, one repetition")
    p.add_argument("--blas-threads", default="1", help="BLAS threads (default 1)")
    args = p.parse_args()
    info = machine(" ".join(["python", *sys.argv]))
    X, y = letter(args.data_dir)
    repeat = args.repeat
    if args.quick:
        X, y, repeat = X[:3000], y[:3000], 1
    standardised = (X - X.mean(axis=0)) / X.std(axis=0)
    results = {
        "trainer": {
            "StandardScaler + LogisticRegression, raw features": trainer(
                X, y, make_pipeline(StandardScaler(), LogisticRegression()), repeat
            ),
            "LogisticRegression, standardised features": trainer(
                standardised, y, LogisticRegression(), repeat
            ),
        }
    }
    kull = Path(args.data_dir) / "kull2019"
    sets = {"letter": (X, y)}
    if not args.quick:
        sets.update({name: load(kull, name) for name in ("vowel", "yeast")})
    results["whole_fit"] = whole_fits(sets)
    info["loadavg_end"] = list(os.getloadavg())
    table = markdown(results)
    print(table)
    if args.out:
        record = {"machine": info, "results": results, "markdown": table}
        Path(args.out).write_text(json.dumps(record, indent=1, default=float) + "\n")


if __name__ == "__main__":
    main()
