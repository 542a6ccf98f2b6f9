"""The ``convexagg`` command line.

::

    convexagg demo
    convexagg reproduce [--datasets ...] [--data-dir DIR] [--out DIR]   (the paper's tables)
    convexagg figures [--data-dir DIR] [--out DIR]                       (the paper's figures)
    convexagg fit TRAIN.csv --target COLUMN --code ovo --out MODEL.skops
    convexagg predict MODEL.skops DATA.csv [--out PRED.csv] [--id COLUMN]
    convexagg --version                                (also: python -m convexagg ...)

``fit`` trains a :class:`~convexagg.ConvexAggregationClassifier` (binary
learner: scaling and logistic regression) on every column of ``TRAIN.csv``
except the target and saves it with :func:`convexagg.io.save`, together with
the feature names and the target's name; it reports a held-out estimate
(accuracy and log-loss of a model fitted without ``--holdout`` of the rows)
before refitting on all rows. Target labels go through
:func:`convexagg.io.parse_labels` and the estimators' own checks: a continuous
target or a missing label is refused. ``predict`` writes, for every row of
``DATA.csv``, the ``--id`` columns, the predicted label (``prediction``) and the
class probabilities (``proba_<class>``, ``%.6g`` unless ``--float-format``), as
CSV to standard output unless ``--out`` names a file (``-`` is standard
output); ``DATA.csv`` must have the training features, in any order, and may
also have the target column, which is ignored.

Input files may be gzip-compressed (recognised by content); the separator is
detected from the header (comma, semicolon, tab, vertical bar) unless ``--sep``
gives it, and ``--decimal ,`` reads decimal-comma numbers. An output is never an
input, a directory or a device node replaced by a file (:mod:`convexagg.io`).

User errors (a missing file or column, a non-numeric feature, a bad target,
columns that differ from training, an untrusted or crafted model file, an
unknown data set or method, an invalid number, a missing optional dependency)
end with a one-line ``convexagg: error: ...`` on standard error and exit status
1, in every subcommand; a malformed command line exits with status 2
(argparse). Nothing is written on failure: outputs are written atomically once
everything has succeeded.
"""

from __future__ import annotations

import argparse
import sys
import warnings

import numpy as np

from ._optional import MissingDependencyError
from ._version import __version__
from .codes import CODE_NAMES, check_code_name

# the bundle `convexagg fit` saves: the model plus what predict needs to read a CSV
BUNDLE_FORMAT = "convexagg-cli-model/1"

PAPER_DATASETS = (
    "all_leukemia_galgo",
    "glass",
    "segment",
    "satimage",
    "pendigits",
    "vowel",
    "letter",
)


def _code_name(name):
    """``--code``: a code name or several joined by ``+``."""
    try:
        check_code_name(name)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return name


def _csv_list(text):
    return [item.strip() for item in text.split(",") if item.strip()]


def _separator(text):
    return {"tab": "\t", "\\t": "\t", "comma": ",", "semicolon": ";"}.get(text, text)


def _add_csv_options(parser):
    parser.add_argument(
        "--sep",
        type=_separator,
        default=None,
        help="field separator: ',', ';', tab, '|' (default: detected from the header)",
    )
    parser.add_argument(
        "--decimal", default=".", help="decimal mark of the numbers (default '.'; ',' for 1,5)"
    )


def build_parser():
    """Build the ``convexagg`` argument parser and its subcommands.

    Returns
    -------
    parser : argparse.ArgumentParser
        The parser of :func:`main`.
    """
    parser = argparse.ArgumentParser(
        prog="convexagg",
        description="Multiclass classification by binary decomposition with convex aggregation.",
    )
    parser.add_argument("--version", action="version", version=f"convexagg {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="the paper's synthetic study and a digits comparison")
    demo.add_argument("--random-state", type=int, default=0)

    fit = sub.add_parser("fit", help="fit a model on a CSV file and save it (skops)")
    fit.add_argument("train", metavar="TRAIN.csv", help="training data with a header row")
    fit.add_argument("--target", required=True, metavar="COLUMN", help="the class label column")
    fit.add_argument("--out", required=True, metavar="MODEL.skops", help="where to save the model")
    fit.add_argument(
        "--code",
        default="ovo",
        type=_code_name,
        metavar="{" + ",".join(CODE_NAMES) + "}",
        help="code matrix (default ovo); several joined by '+' (ovo+ovr) in one code",
    )
    fit.add_argument("--alpha", type=float, default=1e-4, help="L2 regularisation of the weights")
    fit.add_argument("--loss", default="cross_entropy", choices=["cross_entropy", "exponential"])
    fit.add_argument(
        "--cv",
        default="5",
        metavar="FOLDS",
        help="folds of the out-of-fold outputs the weights are fitted on (default 5); 'none': "
        "the binaries' outputs on their own training rows (the paper's protocol)",
    )
    fit.add_argument(
        "--holdout",
        type=float,
        default=0.2,
        metavar="FRACTION",
        help="rows held out for the reported estimate, in [0, 1) (default 0.2; 0: none); "
        "the saved model is fitted on every row",
    )
    fit.add_argument("--random-state", type=int, default=0)
    _add_csv_options(fit)

    predict = sub.add_parser(
        "predict", help="predicted labels and class probabilities for a CSV file, as CSV"
    )
    predict.add_argument("model", metavar="MODEL.skops", help="a model saved by `convexagg fit`")
    predict.add_argument("data", metavar="DATA.csv", help="rows to predict, with a header row")
    predict.add_argument(
        "--out", default="-", metavar="PRED.csv", help="output file ('-', the default: stdout)"
    )
    predict.add_argument(
        "--id",
        action="append",
        type=_csv_list,
        default=[],
        metavar="COLUMN",
        help="copy this column (not a feature) to the output, first; repeatable",
    )
    predict.add_argument(
        "--keep-extra",
        action="store_true",
        help="copy every column that is not a feature (ids, the target, ...) to the output",
    )
    predict.add_argument(
        "--float-format",
        default="%.6g",
        help="printf format of the probabilities (default %%.6g; %%.17g keeps every digit)",
    )
    _add_csv_options(predict)

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
        type=_csv_list,
        default=None,
        help="Fig. 5 class counts (default 3,5,10,15,20,30,40,50)",
    )
    fig.add_argument("--runs", type=int, default=None, help="Fig. 5 runs per K (default 20)")
    fig.add_argument("--jobs", type=int, default=1)
    fig.add_argument("--no-progress", action="store_true")
    return parser


# --------------------------------------------------------------------------- checks


def _at_least(value, low, option):
    if value is not None and value < low:
        raise ValueError(f"{option} must be an integer >= {low}, got {value}.")


def _check_jobs(jobs):
    if jobs == 0 or jobs < -1:
        raise ValueError(f"--jobs must be a positive integer or -1 (all cores), got {jobs}.")


def _check_float_format(fmt):
    try:
        float(fmt % 0.5)
    except (TypeError, ValueError):
        raise ValueError(
            f"--float-format must be one printf-style float format such as %.6g or %.17g, "
            f"got {fmt!r}."
        ) from None


# --------------------------------------------------------------------------- fit / predict


def _matrix(frame, columns):
    """``frame[columns]`` as a C-ordered float64 array: the order of arrays built from
    rows (pandas gives Fortran order; BLAS sums in another order, results differ in
    the last digit)."""
    return np.ascontiguousarray(frame[columns].to_numpy(dtype=np.float64))


def _make_model(args):
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import MaxAbsScaler, StandardScaler

    from .estimator import ConvexAggregationClassifier

    # MaxAbsScaler first: standardising finite values near 1e307 overflows (sums and
    # squares), which scikit-learn then reports as "Input X contains NaN".
    binary = make_pipeline(MaxAbsScaler(), StandardScaler(), LogisticRegression(max_iter=1000))
    return ConvexAggregationClassifier(
        binary,
        code=args.code,
        alpha=args.alpha,
        loss=args.loss,
        cv=args.cv,
        random_state=args.random_state,
    )


def _holdout_estimate(model, X, y, fraction, random_state):
    """Accuracy and log-loss on a stratified held-out part, as one line of text."""
    from sklearn.base import clone
    from sklearn.metrics import log_loss
    from sklearn.model_selection import train_test_split

    if fraction == 0:
        return "no held-out estimate (--holdout 0)"
    try:
        X_fit, X_out, y_fit, y_out = train_test_split(
            X, y, test_size=fraction, stratify=y, random_state=random_state
        )
    except ValueError as exc:  # a class too small to be on both sides
        return f"no held-out estimate ({str(exc).split('.')[0].strip()})"
    held = clone(model).fit(X_fit, y_fit)
    P = held.predict_proba(X_out)
    accuracy = float(np.mean(held.classes_[P.argmax(axis=1)] == y_out))
    loss = log_loss(y_out, P, labels=held.classes_)
    return (
        f"held-out estimate on {y_out.size} rows ({fraction:.0%}): accuracy {accuracy:.3f}, "
        f"log-loss {loss:.4f}"
    )


def _folds(text):
    """``--cv``: an integer >= 2, or None for 'none'."""
    if text.strip().lower() == "none":
        return None
    try:
        folds = int(text)
    except ValueError:
        folds = 0
    if folds < 2:
        raise ValueError(f"--cv must be an integer >= 2 (folds) or 'none', got {text!r}.")
    return folds


def _fit(args):
    from .io import CSVFile, check_output_path, parse_labels, save

    args.cv = _folds(args.cv)
    if not 0 <= args.holdout < 1:
        raise ValueError(f"--holdout must be a fraction in [0, 1), got {args.holdout}.")
    _at_least(args.random_state, 0, "--random-state")
    check_output_path(args.out, inputs=[args.train])  # before the work, and again on writing
    table = CSVFile(args.train, sep=args.sep, decimal=args.decimal)
    if args.target not in table.columns:
        raise ValueError(
            f"{args.train} has no column {args.target!r}; its columns are {table.columns}"
            f"{table.separator_hint()}."
        )
    features = [c for c in table.columns if c != args.target]
    if not features:
        raise ValueError(f"{args.train} has no feature columns besides {args.target!r}.")
    frame = table.read(numeric=features)
    X = _matrix(frame, features)
    y = parse_labels(
        frame[args.target],
        name=f"{args.train}, column {args.target!r}",
        where=lambda i: table.where(i, args.target),
    )
    model = _make_model(args)
    model._validate_params()  # an invalid parameter fails before the held-out fit
    estimate = _holdout_estimate(model, X, y, args.holdout, args.random_state)
    model.fit(X, y)
    bundle = {"format": BUNDLE_FORMAT, "model": model, "features": features, "target": args.target}
    save(bundle, args.out, inputs=[args.train])
    print(
        f"fitted on {X.shape[0]} samples, {X.shape[1]} features, {model.classes_.size} classes "
        f"({args.code}: {model.code_matrix_.shape[1]} binary classifiers); {estimate}; "
        f"training accuracy {model.score(X, y):.3f}; saved {args.out}"
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


def _columns_to_copy(args, columns, features, target):
    """The columns ``predict`` copies to its output, in file order; checked."""
    ids = [c for group in args.id for c in group]
    unknown = [c for c in ids if c not in columns]
    if unknown:
        raise ValueError(
            f"{args.data} has no column {unknown[0]!r} (--id); its columns are {columns}."
        )
    used = [c for c in ids if c in features]
    if used:
        raise ValueError(f"--id {used[0]!r} is a feature of the model; copy other columns.")
    extra = [c for c in columns if c not in features and c != target and c not in ids]
    missing = [f for f in features if f not in columns]
    if missing or (extra and not args.keep_extra):
        parts = [f"missing {missing}"] if missing else []
        if extra and not args.keep_extra:
            parts.append(
                f"unexpected {extra} (--id COLUMN copies a column to the output, --keep-extra "
                "every such column)"
            )
        raise ValueError(f"{args.data}: columns differ from training: {'; '.join(parts)}.")
    return [c for c in columns if c in ids or (args.keep_extra and c not in features)]


def _predict(args):
    import pandas as pd

    from .io import CSVFile, check_output_path, load, write_table

    _check_float_format(args.float_format)
    inputs = [args.model, args.data]
    if args.out != "-":
        check_output_path(args.out, inputs=inputs)
    model, features, target = _unbundle(load(args.model), args.model)
    table = CSVFile(args.data, sep=args.sep, decimal=args.decimal)
    ids = {c for group in args.id for c in group}
    if features is None:  # a bare model saved from Python: the other columns by position
        features = [c for c in table.columns if c not in ids]
        if len(features) != model.n_features_in_:
            raise ValueError(
                f"{args.data} has {len(features)} feature columns but the model was trained "
                f"on {model.n_features_in_} features."
            )
    copied = _columns_to_copy(args, table.columns, features, target)
    frame = table.read(numeric=features)
    P = model.predict_proba(_matrix(frame, features))
    classes = [str(c) for c in model.classes_]
    out = pd.DataFrame({c: frame[c] for c in copied})
    out["prediction"] = np.array(classes, dtype=object)[P.argmax(axis=1)]
    for k, name in enumerate(classes):
        out[f"proba_{name}"] = P[:, k]
    clash = sorted({c for c in out.columns if list(out.columns).count(c) > 1})
    if clash:
        raise ValueError(f"the output would have two columns named {clash[0]!r}; rename it.")
    write_table(args.out, out, float_format=args.float_format, inputs=inputs)
    return 0


# --------------------------------------------------------------------------- experiments


def _demo(args):
    from .experiments.demo import main as demo

    _at_least(args.random_state, 0, "--random-state")
    demo(random_state=args.random_state)
    return 0


def _reproduce(args):
    from pathlib import Path

    from .datasets import resolve_data_dir
    from .experiments.methods import DEFAULT_METHODS, available_methods
    from .experiments.protocol import Protocol
    from .experiments.runner import RunConfig, collect_rows, run, write_csv
    from .experiments.tables import render_all
    from .io import atomic_write

    _at_least(args.reps, 1, "--reps")
    _at_least(args.seed, 0, "--seed")
    _at_least(args.ecoc_candidates, 1, "--ecoc-candidates")
    _check_jobs(args.jobs)
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


def _figures(args):
    from .datasets import resolve_data_dir
    from .experiments.figures import make_figures

    ks = None
    if args.ks is not None:
        try:
            ks = [int(k) for k in args.ks]
        except ValueError:
            raise ValueError(f"--ks must be integers >= 2, got {','.join(args.ks)}.") from None
        if not ks or min(ks) < 2:
            raise ValueError(f"--ks must be integers >= 2, got {','.join(args.ks)}.")
    _at_least(args.runs, 1, "--runs")
    _check_jobs(args.jobs)
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


# --------------------------------------------------------------------------- main


def _one_line(text):
    lines = str(text).strip().splitlines()
    return lines[0] if lines else ""


def _error_message(exc):
    if isinstance(exc, FileNotFoundError) and exc.filename is not None:
        return f"file not found: {exc.filename}"
    if isinstance(exc, OSError) and exc.filename is not None:
        return f"{exc.strerror}: {exc.filename}"
    return _one_line(exc)


HANDLERS = {
    "demo": _demo,
    "fit": _fit,
    "predict": _predict,
    "reproduce": _reproduce,
    "figures": _figures,
}


def main(argv=None):
    """Run the ``convexagg`` command line (also ``python -m convexagg``).

    Parameters
    ----------
    argv : list of str, default=None
        The arguments; ``sys.argv[1:]`` when None.

    Returns
    -------
    status : int
        0 on success, 1 after a one-line ``convexagg: error: ...`` message.
    """
    args = build_parser().parse_args(argv)
    handler = HANDLERS[args.command]
    quiet = args.command in ("fit", "predict")  # their warnings: one line each, at the end
    with warnings.catch_warnings(record=quiet) as caught:
        try:
            status = handler(args)
        except (ValueError, OSError, MissingDependencyError) as exc:
            print(f"convexagg: error: {_error_message(exc)}", file=sys.stderr)
            status = 1
    seen = set()
    for w in caught or ():  # one line per distinct warning, not the source line
        line = f"convexagg: warning: {w.category.__name__}: {_one_line(w.message)}"
        if line not in seen:
            seen.add(line)
            print(line, file=sys.stderr)
    return status


if __name__ == "__main__":
    sys.exit(main())
