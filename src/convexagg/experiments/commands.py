"""The paper's commands of the ``convexagg`` command line: ``demo``, ``reproduce``
(the paper's tables) and ``figures`` (its figures), with the experiments they run.

:mod:`convexagg.cli` only dispatches to them. Their arguments are declared here
(:func:`add_demo_parser`, :func:`add_paper_parsers`); the heavy modules are
imported inside the commands, so ``convexagg --help`` starts at once.
"""

from __future__ import annotations

from .._arguments import at_least, check_jobs, csv_list

__all__ = [
    "HANDLERS",
    "PAPER_DATASETS",
    "add_demo_parser",
    "add_paper_parsers",
    "demo",
    "figures",
    "reproduce",
]

PAPER_DATASETS = (
    "all_leukemia_galgo",
    "glass",
    "segment",
    "satimage",
    "pendigits",
    "vowel",
    "letter",
)


def add_demo_parser(sub):
    """Add the ``demo`` subcommand to ``sub``.

    Parameters
    ----------
    sub : argparse._SubParsersAction
        The command line's subcommands.
    """
    demo = sub.add_parser("demo", help="the paper's synthetic study and a digits comparison")
    demo.add_argument(
        "--random-state", type=int, default=0, help="seeds the data and the models (default 0)"
    )


def add_paper_parsers(sub):
    """Add the ``reproduce`` and ``figures`` subcommands to ``sub``.

    Parameters
    ----------
    sub : argparse._SubParsersAction
        The command line's subcommands.
    """
    rep = sub.add_parser(
        "reproduce",
        help="the paper's comparison (section 5.3): tables beside the published numbers",
        description=(
            "Repeated random 90/10 splits; per split, binaries tuned on a validation part and "
            "every aggregation method applied to the same binary outputs; direct methods "
            "beside. Results are cached per split under OUT/cache, keyed on the protocol, "
            "the library version and each data set's content, so an interrupted run "
            "resumes and changed data are recomputed. Writes OUT/results.csv (every split) "
            "and OUT/tables.md."
        ),
    )
    rep.add_argument(
        "--datasets",
        type=csv_list,
        default=None,
        help="comma-separated names; default: the paper's sets found in the data directory "
        "(all_leukemia_galgo, glass, segment, satimage, pendigits, vowel, letter), else the "
        "embedded digits, wine, iris",
    )
    rep.add_argument(
        "--codes",
        type=csv_list,
        default=["ovo", "ovr", "ecoc"],
        help="ovo (APs), ovr (OVA), ecoc (default: all three)",
    )
    rep.add_argument(
        "--methods",
        type=csv_list,
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
    rep.add_argument("--jobs", type=int, default=1, help="parallel tasks (default 1; -1: all)")
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
        type=csv_list,
        default=None,
        help="Fig. 5 class counts (default 3,5,10,15,20,30,40,50)",
    )
    fig.add_argument("--runs", type=int, default=None, help="Fig. 5 runs per K (default 20)")
    fig.add_argument("--jobs", type=int, default=1)
    fig.add_argument("--no-progress", action="store_true")


def demo(args):
    """``convexagg demo``: the paper's synthetic study and a digits comparison.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed command line.

    Returns
    -------
    status : int
        0 on success.
    """
    from .demo import main

    at_least(args.random_state, 0, "--random-state")
    main(random_state=args.random_state)
    return 0


def reproduce(args):
    """``convexagg reproduce``: the paper's comparison (section 5.3) and its tables.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed command line.

    Returns
    -------
    status : int
        0 on success, 1 when some task failed (rerun to retry it).
    """
    from pathlib import Path

    from ..datasets import resolve_data_dir
    from ..io import atomic_write
    from .methods import DEFAULT_METHODS, available_methods
    from .protocol import Protocol
    from .runner import RunConfig, collect_rows, run, write_csv
    from .tables import render_all

    at_least(args.reps, 1, "--reps")
    at_least(args.seed, 0, "--seed")
    at_least(args.ecoc_candidates, 1, "--ecoc-candidates")
    check_jobs(args.jobs)
    data_dir = resolve_data_dir(args.data_dir)
    datasets = args.datasets
    if datasets is None:
        found = (
            []
            if data_dir is None
            else [n for n in PAPER_DATASETS if (data_dir / f"{n}.csv.gz").is_file()]
        )
        datasets = found or ["digits", "wine", "iris"]
    if not datasets or not args.codes:
        raise ValueError("--datasets and --codes need at least one name each.")
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
    cfg.validate()  # unknown methods, codes or base learner: before anything runs
    if args.tables_only:
        rows, errors = collect_rows(cfg), []
    else:
        rows, errors = run(cfg, progress=not args.no_progress)
    out = Path(args.out)
    write_csv(rows, out / "results.csv")
    tables = render_all(rows, datasets, args.codes, methods, args.base, args.reps)
    with atomic_write(out / "tables.md", "w") as f:
        f.write(tables)
    print(tables)
    print(f"wrote {out / 'results.csv'} ({len(rows)} rows) and {out / 'tables.md'}")
    if errors:
        print(f"{len(errors)} task(s) failed; rerun the same command to retry them.")
        return 1
    return 0


def figures(args):
    """``convexagg figures``: the paper's Figs. 3-5 as PNG files.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed command line.

    Returns
    -------
    status : int
        0 on success.
    """
    from ..datasets import resolve_data_dir
    from .figures import make_figures

    ks = None
    if args.ks is not None:
        try:
            ks = [int(k) for k in args.ks]
        except ValueError:
            raise ValueError(f"--ks must be integers >= 2, got {','.join(args.ks)}.") from None
        if not ks or min(ks) < 2:
            raise ValueError(f"--ks must be integers >= 2, got {','.join(args.ks)}.")
    at_least(args.runs, 1, "--runs")
    check_jobs(args.jobs)
    summary = make_figures(
        args.out,
        data_dir=resolve_data_dir(args.data_dir),
        quick=args.quick,
        ks=ks,
        runs=args.runs,
        jobs=args.jobs,
        progress=not args.no_progress,
    )
    print(summary)
    return 0


HANDLERS = {"demo": demo, "reproduce": reproduce, "figures": figures}
