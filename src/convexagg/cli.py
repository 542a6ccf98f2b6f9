"""The ``convexagg`` command line: ``demo``, ``reproduce`` and ``figures``."""

from __future__ import annotations

import argparse
import sys


def _csv_list(text):
    return [item.strip() for item in text.split(",") if item.strip()]


def build_parser():
    parser = argparse.ArgumentParser(
        prog="convexagg",
        description="Multiclass classification by binary decomposition with convex aggregation.",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="the paper's synthetic study and a digits comparison")
    demo.add_argument("--random-state", type=int, default=0)

    rep = sub.add_parser(
        "reproduce",
        help="the paper's comparison (section 5.3): tables beside the published numbers",
        description=(
            "Repeated random 90/10 splits; per split, binaries tuned on a validation part and "
            "every aggregation method applied to the same binary outputs; direct methods "
            "beside. Results are cached per split under OUT/cache, so an interrupted run "
            "resumes. Writes OUT/results.csv (every split) and OUT/tables.md."
        ),
    )
    rep.add_argument(
        "--datasets",
        type=_csv_list,
        default=None,
        help="comma-separated names; default: the paper's sets found in the data directory "
        "(all_leukemia_galgo, glass, segment, satimage, pendigits, vowel, letter), else the "
        "embedded digits, wine, iris",
    )
    rep.add_argument(
        "--codes",
        type=_csv_list,
        default=["ovo", "ovr", "ecoc"],
        help="ovo (APs), ovr (OVA), ecoc (default: all three)",
    )
    rep.add_argument(
        "--methods",
        type=_csv_list,
        default=None,
        help="msvm, lmr, loss_based, gbtm, wmap, convex, hamming, "
        "pairwise_coupling (default: the paper's six, those available)",
    )
    rep.add_argument(
        "--base",
        default="linear",
        help="linear (the paper's choice per data set), logreg, linsvm or rbfsvm",
    )
    rep.add_argument("--reps", type=int, default=20, help="random splits (default 20)")
    rep.add_argument(
        "--data-dir",
        default=None,
        help="folder of <name>.csv.gz files (default: $CONVEXAGG_DATA_DIR)",
    )
    rep.add_argument("--out", default="results", help="output folder (default: results)")
    rep.add_argument("--jobs", type=int, default=1, help="parallel tasks (default 1)")
    rep.add_argument("--seed", type=int, default=0, help="seeds the splits and random codes")
    rep.add_argument(
        "--ecoc-candidates",
        type=int,
        default=20000,
        help="random codes drawn for sparse ECOC (paper: 20000)",
    )
    rep.add_argument(
        "--c-ties",
        choices=["largest", "smallest"],
        default="largest",
        help="which C wins a tie in validation accuracy (default: largest)",
    )
    rep.add_argument("--no-progress", action="store_true", help="no progress bar")
    rep.add_argument(
        "--tables-only",
        action="store_true",
        help="compute nothing: write the CSV and tables from what is cached",
    )

    fig = sub.add_parser("figures", help="the paper's Figs. 3-5 as PNG files")
    fig.add_argument("--out", default="out/figures", help="output folder (default: out/figures)")
    fig.add_argument("--data-dir", default=None, help="folder holding vowel.csv.gz (Fig. 3)")
    fig.add_argument(
        "--quick",
        action="store_true",
        help="Fig. 5 with K in 3,5,10,20, 2 runs and 300 test points per class",
    )
    fig.add_argument(
        "--ks",
        type=lambda t: [int(k) for k in _csv_list(t)],
        default=None,
        help="Fig. 5 class counts (default 3,5,10,15,20,30,40,50)",
    )
    fig.add_argument("--runs", type=int, default=None, help="Fig. 5 runs per K (default 20)")
    fig.add_argument("--jobs", type=int, default=1)
    fig.add_argument("--no-progress", action="store_true")
    return parser


def _reproduce(args):
    from pathlib import Path

    from .datasets import resolve_data_dir
    from .experiments.methods import DEFAULT_METHODS, available_methods
    from .experiments.protocol import Protocol
    from .experiments.runner import RunConfig, collect_rows, run, write_csv
    from .experiments.tables import render_all

    data_dir = resolve_data_dir(args.data_dir)
    datasets = args.datasets
    if datasets is None:
        paper_sets = [
            "all_leukemia_galgo",
            "glass",
            "segment",
            "satimage",
            "pendigits",
            "vowel",
            "letter",
        ]
        found = (
            []
            if data_dir is None
            else [n for n in paper_sets if (data_dir / f"{n}.csv.gz").is_file()]
        )
        datasets = found or ["digits", "wine", "iris"]
    methods = args.methods
    if methods is None:
        available = set(available_methods())
        methods = [m for m in DEFAULT_METHODS if m in available]
        missing = [m for m in DEFAULT_METHODS if m not in available]
        if missing:
            print(f"note: {', '.join(missing)} not available in this build; running {methods}")
    cfg = RunConfig(
        datasets=datasets,
        codes=args.codes,
        methods=methods,
        base=args.base,
        reps=args.reps,
        data_dir=None if data_dir is None else str(data_dir),
        out=args.out,
        jobs=args.jobs,
        protocol=Protocol(seed=args.seed, ecoc_candidates=args.ecoc_candidates, c_ties=args.c_ties),
    )
    if args.tables_only:
        rows, errors = collect_rows(cfg), []
    else:
        rows, errors = run(cfg, progress=not args.no_progress)
    out = Path(args.out)
    write_csv(rows, out / "results.csv")
    tables = render_all(rows, datasets, args.codes, methods, args.base, args.reps)
    (out / "tables.md").write_text(tables)
    print(tables)
    print(f"wrote {out / 'results.csv'} ({len(rows)} rows) and {out / 'tables.md'}")
    if errors:
        print(f"{len(errors)} task(s) failed; rerun the same command to retry them.")
        return 1
    return 0


def _figures(args):
    from .datasets import resolve_data_dir
    from .experiments.figures import make_figures

    summary = make_figures(
        args.out,
        data_dir=resolve_data_dir(args.data_dir),
        quick=args.quick,
        ks=args.ks,
        runs=args.runs,
        jobs=args.jobs,
        progress=not args.no_progress,
    )
    print(summary)
    return 0


def main(argv=None):
    args = build_parser().parse_args(argv)
    if args.command == "demo":
        from .experiments.demo import main as demo

        demo(random_state=args.random_state)
        return 0
    if args.command == "reproduce":
        return _reproduce(args)
    return _figures(args)


if __name__ == "__main__":
    sys.exit(main())
