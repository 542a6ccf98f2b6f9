"""The ``convexagg`` command line.

::

    convexagg demo
    convexagg reproduce [--datasets ...] [--data-dir DIR] [--out DIR]   (the paper's tables)
    convexagg figures [--data-dir DIR] [--out DIR]                       (the paper's figures)
    convexagg fit TRAIN.csv --target COLUMN --code ovo --out MODEL.skops
    convexagg predict MODEL.skops DATA.csv [--out PROBA.csv]

``fit`` trains a :class:`~convexagg.ConvexAggregationClassifier` (binary
learner: standardisation and logistic regression) on every column of
``TRAIN.csv`` except the target and saves it with :func:`convexagg.io.save`,
together with the feature names and the target's name. ``predict`` writes the
class probabilities of every row of ``DATA.csv`` as CSV with a header of class
names (to standard output unless ``--out`` is given); ``DATA.csv`` must have the
training features, in any order, and may also have the target column, which is
ignored. Input files may be gzip-compressed (``.csv.gz``).

User errors (a missing file or column, a non-numeric feature, columns that
differ from training, an untrusted model file, invalid parameters) end with a
one-line ``convexagg: error: ...`` on standard error and exit status 1;
command-line usage errors exit with status 2 (argparse). Nothing is written on
failure: outputs are written atomically once everything has succeeded.
"""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

import numpy as np

from .codes import CODE_NAMES

# the bundle `convexagg fit` saves: the model plus what predict needs to read a CSV
BUNDLE_FORMAT = "convexagg-cli-model/1"


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

    fit = sub.add_parser("fit", help="fit a model on a CSV file and save it (skops)")
    fit.add_argument("train", metavar="TRAIN.csv", help="training data with a header row")
    fit.add_argument("--target", required=True, metavar="COLUMN", help="the class label column")
    fit.add_argument("--out", required=True, metavar="MODEL.skops", help="where to save the model")
    fit.add_argument("--code", default="ovo", choices=CODE_NAMES, help="code matrix (default ovo)")
    fit.add_argument("--alpha", type=float, default=1e-4, help="L2 regularisation of the weights")
    fit.add_argument("--loss", default="cross_entropy", choices=["cross_entropy", "exponential"])
    fit.add_argument(
        "--cv", type=int, default=None, help="fit the weights on out-of-fold outputs (folds)"
    )
    fit.add_argument("--random-state", type=int, default=0)

    predict = sub.add_parser("predict", help="class probabilities for a CSV file, as CSV")
    predict.add_argument("model", metavar="MODEL.skops", help="a model saved by `convexagg fit`")
    predict.add_argument("data", metavar="DATA.csv", help="rows to predict, with a header row")
    predict.add_argument(
        "--out", default=None, metavar="PROBA.csv", help="output file (default: standard output)"
    )

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


def _check_output_dir(path):
    parent = Path(path).resolve().parent
    if not parent.is_dir():
        raise ValueError(f"cannot write {path}: directory {parent} does not exist.")


def _labels(path, columns, rows, target):
    """The target column: integers if every label is one (written canonically), else strings."""
    k = columns.index(target)
    values = []
    for line, record in rows:
        value = record[k].strip()
        if not value:
            raise ValueError(f"{path}, line {line}, column {target!r}: missing class label.")
        values.append(value)
    if all(v.lstrip("-").isdigit() and str(int(v)) == v for v in values):
        return np.array([int(v) for v in values])
    return np.array(values)


def _fit(args):
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from .estimator import ConvexAggregationClassifier
    from .io import numeric_matrix, read_csv, save

    _check_output_dir(args.out)
    columns, rows = read_csv(args.train)
    if args.target not in columns:
        raise ValueError(f"{args.train} has no column {args.target!r}; its columns are {columns}.")
    features = [c for c in columns if c != args.target]
    if not features:
        raise ValueError(f"{args.train} has no feature columns besides {args.target!r}.")
    X = numeric_matrix(args.train, columns, rows, features)
    y = _labels(args.train, columns, rows, args.target)
    clf = ConvexAggregationClassifier(
        make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000)),
        code=args.code,
        alpha=args.alpha,
        loss=args.loss,
        cv=args.cv,
        random_state=args.random_state,
    ).fit(X, y)
    bundle = {"format": BUNDLE_FORMAT, "model": clf, "features": features, "target": args.target}
    save(bundle, args.out)
    print(
        f"fitted on {X.shape[0]} samples, {X.shape[1]} features, {clf.classes_.size} classes "
        f"({args.code}: {clf.code_matrix_.shape[1]} binary classifiers); training accuracy "
        f"{clf.score(X, y):.3f}; saved {args.out}"
    )
    return 0


def _unbundle(obj, path):
    """``(model, feature names or None, target name or None)`` from a loaded file."""
    if isinstance(obj, dict) and obj.get("format") == BUNDLE_FORMAT:
        return obj["model"], list(obj["features"]), obj["target"]
    if hasattr(obj, "predict_proba") and hasattr(obj, "classes_"):
        names = getattr(obj, "feature_names_in_", None)
        return obj, None if names is None else [str(n) for n in names], None
    raise ValueError(f"{path} does not hold a fitted convexagg model.")


def _predict(args):
    from .io import load, numeric_matrix, read_csv, write_csv

    if args.out is not None:
        _check_output_dir(args.out)
    model, features, target = _unbundle(load(args.model), args.model)
    columns, rows = read_csv(args.data)
    if features is None:  # a bare model saved from Python: columns by position
        features = columns
        if len(features) != model.n_features_in_:
            raise ValueError(
                f"{args.data} has {len(features)} columns but the model was trained on "
                f"{model.n_features_in_} features."
            )
    else:
        present = [c for c in columns if c != target]
        missing = [f for f in features if f not in columns]
        unexpected = [c for c in present if c not in features]
        if missing or unexpected:
            raise ValueError(
                f"{args.data}: columns differ from training: missing {missing}, "
                f"unexpected {unexpected}."
            )
    X = numeric_matrix(args.data, columns, rows, features)
    P = model.predict_proba(X)
    write_csv(args.out, [str(c) for c in model.classes_], [[repr(float(p)) for p in r] for r in P])
    return 0


def _one_line(text):
    lines = str(text).strip().splitlines()
    return lines[0] if lines else ""


def _error_message(exc):
    if isinstance(exc, FileNotFoundError) and exc.filename is not None:
        return f"file not found: {exc.filename}"
    if isinstance(exc, OSError) and exc.filename is not None:
        return f"{exc.strerror}: {exc.filename}"
    return _one_line(exc)


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
    if args.command == "figures":
        return _figures(args)
    handler = {"fit": _fit, "predict": _predict}[args.command]
    with warnings.catch_warnings(record=True) as caught:
        try:
            status = handler(args)
        except (ValueError, OSError) as exc:
            print(f"convexagg: error: {_error_message(exc)}", file=sys.stderr)
            status = 1
    seen = set()
    for w in caught:  # one line per distinct warning, not the source line
        line = f"convexagg: warning: {w.category.__name__}: {_one_line(w.message)}"
        if line not in seen:
            seen.add(line)
            print(line, file=sys.stderr)
    return status


if __name__ == "__main__":
    sys.exit(main())
