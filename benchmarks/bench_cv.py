"""Choosing alpha by cross-validation: this version against version 0.1, on the same protocol.

    python benchmarks/bench_cv.py [--data-dir DIR] [--repeat 7] [--out benchmarks/results/cv.json]

``ConvexAggregationClassifierCV`` on the letter workload (18,000 training rows,
one-vs-one, ``LogisticRegression`` binaries), 13 alphas, 5 folds, the paper's
in-sample protocol (per fold: binaries trained on the fold's other rows, the
weights fitted on their outputs there, scored on the held-out rows; then the
binaries and the weights refitted on all rows):

* this version: ``ConvexAggregationClassifierCV(alphas=13, alpha_cv=5, cv="in_sample")``
  (the decoder's model and default solver, the path on the class-blocked objective);
* version 0.1 (``--baseline`` commit, default the last commit of 0.1): its
  ``ConvexAggregationClassifierCV(alphas=13, cv=5)`` (the path on the dense
  objective with the paper's interior point), its source extracted with
  ``git archive`` into a temporary folder.

Each run is a child process (the two versions share a package name); runs
alternate old, new, old, new. The breakdown is measured inside the child:
time in the binaries' fits (``convexagg.binary.fit_binary``, and the batched
``fit_logistic_binaries`` where the version has it), in the
regularisation paths, and the rest (the binaries' outputs, the final
weights, validation). "Aggregation" is everything but training binaries.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from lib import common as C  # noqa: E402
from lib import workloads as W  # noqa: E402

BASELINE = "d0f93c1"  # the last commit of version 0.1


def child(src, data_dir, version, quick):
    """Run one CV fit with the package under ``src``; print the timings as JSON."""
    sys.path.insert(0, src)
    from sklearn.linear_model import LogisticRegression

    import convexagg
    import convexagg.model_selection as ms

    assert convexagg.__file__.startswith(src), convexagg.__file__
    X, _, y, _ = W.letter_split(data_dir, W.QUICK_ROWS if quick else None)
    spent = {"binaries": 0.0, "path": 0.0}
    depth = {"binaries": 0, "path": 0}

    def timed(name, fn):
        # counted at the outermost call only: the batched trainer fits some binaries
        # one by one through the timed fit_binary
        def wrapper(*a, **k):
            depth[name] += 1
            t0 = time.perf_counter()
            try:
                return fn(*a, **k)
            finally:
                depth[name] -= 1
                if depth[name] == 0:
                    spent[name] += time.perf_counter() - t0

        return wrapper

    # the binaries' fit, one by one or batched, in each module that calls it (one module
    # before the split of binary.py, binary and out_of_fold after it)
    for name in ("convexagg.binary", "convexagg.out_of_fold"):
        if importlib.util.find_spec(name) is None:
            continue
        module = importlib.import_module(name)
        for attr in ("fit_binary", "_fit_binary", "fit_logistic_binaries"):
            if hasattr(module, attr):
                setattr(module, attr, timed("binaries", getattr(module, attr)))
    # the regularisation paths: by the name model_selection calls them (0.1 and 0.2 to
    # the engine rework: regularization_path; since: problem_path on validated folds)
    name = "problem_path" if hasattr(ms, "problem_path") else "regularization_path"
    setattr(ms, name, timed("path", getattr(ms, name)))
    alphas, folds = (4, 3) if quick else (13, 5)
    if version == "new":
        clf = ms.ConvexAggregationClassifierCV(
            LogisticRegression(), code="ovo", alphas=alphas, alpha_cv=folds, cv="in_sample"
        )
    else:
        clf = ms.ConvexAggregationClassifierCV(
            LogisticRegression(), code="ovo", alphas=alphas, cv=folds
        )
    t0 = time.perf_counter()
    clf.fit(X, y)
    total = time.perf_counter() - t0
    print(
        json.dumps(
            {
                "total": total,
                "binaries": spent["binaries"],
                "path": spent["path"],
                "aggregation": total - spent["binaries"],
                "alpha": clf.alpha_,
                "train_accuracy": float(clf.score(X, y)),
            }
        )
    )


def extract(commit, target):
    """``src/`` of ``commit`` into ``target`` (git archive; the repository is untouched)."""
    repo = Path(__file__).resolve().parents[1]
    archive = subprocess.run(
        ["git", "-C", str(repo), "archive", "--format=tar", commit, "src"],
        check=True,
        capture_output=True,
    ).stdout
    with tarfile.open(fileobj=__import__("io").BytesIO(archive)) as tar:
        tar.extractall(target, filter="data")
    return str(Path(target) / "src")


def main():
    p = C.parser(__doc__.splitlines()[0])
    p.add_argument("--baseline", default=BASELINE, help="commit of the version to compare with")
    p.add_argument("--child", choices=["old", "new"], help=argparse_suppress())
    p.add_argument("--src", help=argparse_suppress())
    args = p.parse_args()
    if args.child:
        child(args.src, args.data_dir, args.child, args.quick)
        return
    if args.quick:
        args.repeat = 1
    info = C.machine()
    new_src = str(Path(__file__).resolve().parents[1] / "src")
    runs = {"old": [], "new": []}
    with tempfile.TemporaryDirectory() as tmp:
        old_src = extract(args.baseline, tmp)
        for _ in range(args.repeat):
            for version, src in (("old", old_src), ("new", new_src)):
                out = subprocess.run(
                    [
                        sys.executable,
                        __file__,
                        "--child",
                        version,
                        "--src",
                        src,
                        "--data-dir",
                        args.data_dir,
                        *(["--quick"] if args.quick else []),
                    ],
                    check=True,
                    capture_output=True,
                    text=True,
                ).stdout
                runs[version].append(json.loads(out.strip().splitlines()[-1]))
                print(version, runs[version][-1], flush=True)
    rows = []
    for version, label in (("old", f"0.1 ({args.baseline})"), ("new", "this version")):
        best = min(runs[version], key=lambda r: r["aggregation"])
        rows.append(
            {
                "version": label,
                "aggregation_best": best["aggregation"],
                "aggregation_median": float(np.median([r["aggregation"] for r in runs[version]])),
                "path": best["path"],
                "rest": best["aggregation"] - best["path"],
                "binaries": best["binaries"],
                "total": best["total"],
                "alpha": best["alpha"],
                "train_accuracy": best["train_accuracy"],
            }
        )
    ratio = rows[0]["aggregation_best"] / rows[1]["aggregation_best"]
    ratio_median = rows[0]["aggregation_median"] / rows[1]["aggregation_median"]
    text = [
        "## ConvexAggregationClassifierCV: letter one-vs-one, 13 alphas, 5 folds",
        "",
        C.header(info),
        "",
        C.table(
            rows,
            [
                ("version", "version", None),
                ("aggregation_best", "aggregation s (best)", "{:.1f}"),
                ("aggregation_median", "aggregation s (median)", "{:.1f}"),
                ("path", "of which the paths s", "{:.1f}"),
                ("rest", "of which outputs, final fit s", "{:.1f}"),
                ("binaries", "training binaries s", "{:.1f}"),
                ("total", "total s", "{:.1f}"),
                ("alpha", "alpha_", "{:g}"),
                ("train_accuracy", "training accuracy", "{:.4f}"),
            ],
        ),
        "",
        f"aggregation, 0.1 / this version: {ratio:.1f}x (best), {ratio_median:.1f}x (median)",
    ]
    C.finish(args, info, {"runs": runs, "rows": rows, "ratio": ratio}, "\n".join(text))


def argparse_suppress():
    import argparse

    return argparse.SUPPRESS


if __name__ == "__main__":
    main()
