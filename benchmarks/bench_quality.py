"""Probability quality: convexagg's settings and decoders against today's calibration methods.

    python benchmarks/bench_quality.py [--data-dir DIR] [--out benchmarks/results/quality]
    python benchmarks/bench_quality.py --suite kull [--kull-dir DIR] [--by-set]
        [--out benchmarks/results/quality/kull]

Two suites, reported in QUALITY.md.

``--suite kull``: the 23 multiclass sets of Kull et al. (NeurIPS 2019) in ``--kull-dir``
(default ``<data-dir>/kull2019``), 3-fold stratified cross-validation, classes under 6
rows dropped, at most 3,000 rows, ``LogisticRegression(max_iter=1000)`` binaries and base
learner. Linear and non-linear peers are ranked within their family, each convexagg
variant in the default's place; the "left to calibrate" check fits temperature and
Dirichlet calibration on a model's own out-of-fold probabilities (``lib/kull.py``).

``--suite ten`` (the default): the paper's data sets found in ``--data-dir`` and
scikit-learn's digits, wine and iris, ``--splits`` stratified 80/20 splits; convexagg's
settings, the other decoders on the same binaries and the peers (``lib/ten_sets.py``).

Scores on the test part: accuracy, Brier (sum over classes), log-loss, top-label and
classwise calibration error (15 equal-width bins), fit and predict seconds. The records
are kept by method (``lib/records.py``: ``--out``/records/<method>.json); a rerun computes
only what is missing. The tables are printed and written to ``--out``/tables.md.

``--methods`` (semicolon-separated) and ``--datasets`` (comma-separated) restrict a run;
``--tables-only`` rebuilds the tables from the records; ``--interleaved-times NAME``
(Kull) times the fits of ``--methods`` in turn on every set and fold
(``--out``/times/NAME.json). ``--quick``: a plumbing run -- two small sets, one split,
three methods, into a temporary folder unless ``--out`` is given.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from lib import common as C  # noqa: E402
from lib import kull as K  # noqa: E402
from lib import ten_sets as T  # noqa: E402
from lib.records import RecordStore  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results" / "quality"
QUICK_TEN = {"datasets": "iris,wine", "methods": T.QUICK_METHODS}
QUICK_KULL = {"datasets": "iris,zoo", "methods": K.QUICK_METHODS}


def main_kull(args, t0):
    names = args.datasets.split(",") if args.datasets else K.datasets(args.kull_dir)
    methods = args.methods.split(";") if args.methods else list(K.METHODS)
    unknown = [m for m in methods if m not in K.METHODS]
    if unknown:
        sys.exit(f"unknown methods {unknown}; known: {list(K.METHODS)}")
    info = C.machine()
    if args.interleaved_times:
        times = K.interleaved_times(args, names, methods)
        C.write_json(
            Path(args.out) / "times" / f"{args.interleaved_times}.json",
            {"machine": info, "loadavg_after": os.getloadavg(), "sets": names, "fit_s": times},
        )
        return
    store = RecordStore(args.out)
    if not args.tables_only:
        K.run(args, names, methods, store)
    rows = [
        r for r in store.all(list(K.METHODS)) if r["dataset"] in names and r["rep"] < K.OUTER_FOLDS
    ]
    infos = {n: K.load(n, args.kull_dir)[2] for n in names}
    text = "\n".join(
        [
            f"## Probability quality on the Kull et al. (2019) suite: {len(names)} sets, "
            "3-fold stratified cross-validation",
            "",
            C.header(info),
            "",
            "tables from the records only"
            if args.tables_only
            else f"run time: {time.perf_counter() - t0:.0f} s",
            "",
            K.tables(rows, names, infos),
        ]
    )
    print(text)
    Path(args.out).mkdir(parents=True, exist_ok=True)
    (Path(args.out) / "tables.md").write_text(text)


def main_ten(args, t0):
    if args.datasets:
        datasets = args.datasets.split(",")
    else:
        found = [n for n in T.PAPER_SETS if (Path(args.data_dir) / f"{n}.csv.gz").exists()]
        datasets = found + list(T.BUNDLED)
    methods = args.methods.split(";") if args.methods else list(T.METHODS)
    unknown = [m for m in methods if m not in T.METHODS]
    if unknown:
        sys.exit(f"unknown methods {unknown}; known: {list(T.METHODS)}")
    info = C.machine()
    store = RecordStore(args.out)
    if not args.tables_only:
        T.run(args, datasets, methods, store)
    rows = T.collect(store, datasets, methods, args.splits)
    table = T.summarise(rows, datasets, methods)
    text = "\n".join(
        [
            f"## Probability quality: {args.splits} stratified 80/20 splits, at most "
            f"{args.max_rows} rows per data set",
            "",
            C.header(info),
            "",
            "tables from the records only"
            if args.tables_only
            else f"run time: {time.perf_counter() - t0:.0f} s",
            "",
            "### The targets",
            "",
            T.targets(table, datasets),
            "",
            T.render(table, datasets, methods),
        ]
    )
    print(text)
    Path(args.out).mkdir(parents=True, exist_ok=True)
    (Path(args.out) / "tables.md").write_text(text)


def main():
    p = C.parser(__doc__.splitlines()[0])
    p.add_argument("--suite", choices=("ten", "kull"), default="ten")
    p.add_argument(
        "--kull-dir", default=None, help="the Kull et al. sets (default: <data-dir>/kull2019)"
    )
    p.add_argument(
        "--by-set",
        action="store_true",
        help="kull: every method on one set before the next set, cheapest sets first",
    )
    p.add_argument("--datasets", default=None, help="comma-separated (default: all available)")
    p.add_argument("--methods", default=None, help="semicolon-separated method names")
    p.add_argument("--splits", type=int, default=5)
    p.add_argument(
        "--max-rows",
        type=int,
        default=2500,
        help="subsample larger data sets (keeps segment whole)",
    )
    p.add_argument("--tables-only", action="store_true")
    p.add_argument(
        "--interleaved-times",
        metavar="NAME",
        default=None,
        help="kull: only time the fits of --methods, in turn on each set and fold "
        "(--out/times/NAME.json)",
    )
    args = p.parse_args()
    kull = args.suite == "kull"
    if args.quick:
        args.splits, args.max_rows = 1, 600
        quick = QUICK_KULL if kull else QUICK_TEN
        args.datasets = args.datasets or quick["datasets"]
        args.methods = args.methods or ";".join(quick["methods"])
        args.out = args.out or tempfile.mkdtemp(prefix="bench_quality_quick_")
    C.limit_blas(args)
    if kull:
        args.out = args.out or str(RESULTS / "kull")
        args.kull_dir = args.kull_dir or str(Path(args.data_dir) / "kull2019")
        return main_kull(args, time.perf_counter())
    args.out = args.out or str(RESULTS)
    return main_ten(args, time.perf_counter())


if __name__ == "__main__":
    main()
