"""The ``convexagg`` command line.

::

    convexagg demo
    convexagg reproduce [--datasets ...] [--data-dir DIR] [--out DIR]   (the paper's tables)
    convexagg figures [--data-dir DIR] [--out DIR]                       (the paper's figures)
    convexagg fit TRAIN.csv --target COLUMN [--id COLUMN] [--drop COL,COL | --features COL,COL]
                  [--code CODE] [--entry-weight-shrinkage S[,S...]|none]
                  [--zero-entry-penalty C|auto] --out MODEL.skops [-v]
    convexagg predict MODEL.skops DATA.csv [--out PRED.csv] [--id COLUMN]
    convexagg --version                                (also: python -m convexagg ...)

``fit`` trains a :class:`~convexagg.ConvexAggregationClassifier` (binary
learner: scaling and logistic regression) on the feature columns of
``TRAIN.csv`` -- every column but the target, the ``--id`` and the ``--drop``
columns, or the ``--features`` -- and saves it with :func:`convexagg.io.save`,
together with the feature names, the target's name, the id columns and the
other columns it left out; it reports a held-out estimate (accuracy and
log-loss of a model fitted without ``--holdout`` of the rows) before refitting
on all rows. The options that set an estimator parameter (``--code``, ``--alpha``,
``--loss``, ``--entry-weight-shrinkage``, ``--zero-entry-penalty``, ``--cv``) take the
estimator's default when not given. ``-v`` prints a line per stage on standard error (with the
estimator's own ``verbose`` lines; ``-vv`` passes ``verbose=2``). Target labels
go through :func:`convexagg.io.parse_labels` and the estimators' own checks: a continuous
target or a missing label is refused. ``predict`` writes, for every row of
``DATA.csv``, the ``--id`` columns, the predicted label (``prediction``) and the
class probabilities (``proba_<class>``, ``%.6g`` unless ``--float-format``), as
CSV to standard output unless ``--out`` names a file (``-`` is standard
output); ``DATA.csv`` must have the training features, matched by name in any
order, and may also have the target and the columns ``fit`` left out, which are
ignored (the training ``--id`` columns are copied). A model saved from Python
that records no feature names is applied by position, with a warning.

Input files must be regular files (not a device or a pipe) of text, at most
:data:`convexagg.io.MAX_CSV_BYTES`; they may be gzip-compressed (recognised by
content); the separator is detected from the header (comma, semicolon, tab,
vertical bar) unless ``--sep`` gives it, and ``--decimal ,`` reads
decimal-comma numbers. An output is never an input, a directory or a device
node replaced by a file (:mod:`convexagg.io`).

User errors (a missing file or column, a non-numeric feature, a bad target,
columns that differ from training, an untrusted or crafted model file, an
unknown data set or method, an invalid number, a missing optional dependency)
end with a one-line ``convexagg: error: ...`` on standard error and exit status
1, in every subcommand, after any warnings; a malformed command line exits
with status 2 (argparse); SIGTERM, SIGHUP and Ctrl-C end with the same line and
status 128 + the signal's number. Nothing is written on failure or
interruption: outputs are written atomically once everything has succeeded.

The heavy modules (NumPy, pandas, scikit-learn, skops, the estimators) are
imported inside the commands, so ``convexagg --help`` starts at once. The
paper's commands (``demo``, ``reproduce``, ``figures``) live with the
experiments they run, in :mod:`convexagg.experiments.commands`; this module
holds ``fit`` and ``predict`` and dispatches.
"""

from __future__ import annotations

import argparse
import contextlib
import math
import re
import signal
import sys
import threading
import time
import warnings

from ._arguments import at_least, csv_list
from ._optional import MissingDependencyError, require
from ._utils import Reporter
from .experiments import commands

# the bundle `convexagg fit` saves: the model plus what predict needs to read a CSV
# (/1, written by 0.2, had no "ids" and "ignored"; it is still read)
BUNDLE_FORMAT = "convexagg-cli-model/2"
_BUNDLE_FORMATS = (BUNDLE_FORMAT, "convexagg-cli-model/1")


def _flat(groups):
    """The names of a repeatable comma-separated option, in order."""
    return [name for group in groups or () for name in group]


class _CodeNames:
    """``--code``'s choices, read from :mod:`convexagg.codes` only when argparse
    needs them (``fit --help``, checking a value), not for ``convexagg --help``."""

    def _names(self):
        from .codes import CODE_NAMES

        return CODE_NAMES

    def __iter__(self):
        return iter(self._names())

    def __contains__(self, name):
        from .codes import check_code_name  # several names may be joined by "+"

        try:
            check_code_name(name)
        except ValueError:
            return False
        return True


# `fit` options that set the ConvexAggregationClassifier parameter of the same name: not
# given, they are absent from the parsed arguments (argparse.SUPPRESS) and not passed, so
# the estimator's own default applies (`fit --help` shows it, read from its signature)
_ESTIMATOR_OPTIONS = (
    "code",
    "alpha",
    "loss",
    "entry_weight_shrinkage",
    "zero_entry_penalty",
    "cv",
)


class _FitHelp(argparse.HelpFormatter):
    """``fit --help``: the estimator's default after each option of ``_ESTIMATOR_OPTIONS``
    (the estimator is imported only for that help, not for ``convexagg --help``)."""

    def _get_help_string(self, action):
        text = super()._get_help_string(action)
        if action.dest not in _ESTIMATOR_OPTIONS:
            return text
        from inspect import signature

        from .estimator import (
            DEFAULT_ENTRY_WEIGHT_PRIOR,
            ENTRY_WEIGHT_SHRINKAGE_RANGE,
            ZERO_ENTRY_AUTO_MAX_ROWS,
            ZERO_ENTRY_AUTO_MAX_WEIGHTS,
            ZERO_ENTRY_PRIORS,
            ConvexAggregationClassifier,
        )

        default = signature(ConvexAggregationClassifier).parameters[action.dest].default
        if action.dest == "entry_weight_shrinkage":
            low, high = ENTRY_WEIGHT_SHRINKAGE_RANGE
            default = f"{default}: {DEFAULT_ENTRY_WEIGHT_PRIOR:g}/n within [{low:g}, {high:g}]"
        text = text.replace("{priors}", "/n, ".join(f"{c:g}" for c in ZERO_ENTRY_PRIORS) + "/n")
        text = text.replace("{max_weights}", f"{ZERO_ENTRY_AUTO_MAX_WEIGHTS:,}")
        text = text.replace("{max_rows}", f"{ZERO_ENTRY_AUTO_MAX_ROWS:,}")
        return f"{text} (default {default}, the estimator's)"


def _penalty_values(text, zero_ok):
    """A penalty option's value: a number (``>= 0`` if ``zero_ok``, else ``> 0``), several
    joined by ``,`` (the estimator chooses among them), ``auto`` or ``none``."""
    word = text.strip().lower()
    if word in ("auto", "none"):
        return None if word == "none" else "auto"
    values = []
    for part in text.split(","):
        try:
            values.append(float(part))
        except ValueError:
            values.append(float("nan"))
    if not all(math.isfinite(v) and (v >= 0 if zero_ok else v > 0) for v in values):
        raise argparse.ArgumentTypeError(
            f"must be a number {'>=' if zero_ok else '>'} 0, several joined by ',' (chosen by "
            f"cross-validation), 'auto' or 'none', got {text!r}"
        )
    return values[0] if len(values) == 1 else values


def _shrinkage(text):
    """``--entry-weight-shrinkage``: a number > 0, several, ``auto`` or ``none``."""
    return _penalty_values(text, zero_ok=False)


def _zero_entry_penalty(text):
    """``--zero-entry-penalty``: a number >= 0, several, ``auto`` or ``none``."""
    return _penalty_values(text, zero_ok=True)


class _Version(argparse.Action):
    """``--version``: the version is looked up when asked for, not on every start."""

    def __init__(self, option_strings, dest=argparse.SUPPRESS, **kwargs):
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kwargs)

    def __call__(self, parser, namespace, values, option_string=None):
        from ._version import __version__

        print(f"convexagg {__version__}")  # to standard output, as argparse's version action
        parser.exit()


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
    parser.add_argument("--version", action=_Version, help="show the version and exit")
    sub = parser.add_subparsers(dest="command", required=True)
    commands.add_demo_parser(sub)

    fit = sub.add_parser(
        "fit",
        formatter_class=_FitHelp,
        help="fit a model on a CSV file and save it (skops)",
        description=(
            "Fit a ConvexAggregationClassifier whose binary learner is MaxAbsScaler + "
            "StandardScaler + LogisticRegression(max_iter=1000), one per column of the code, "
            "on the feature columns of TRAIN.csv (every column but the target, --id and "
            "--drop, or the --features), report a held-out estimate, refit on every row and "
            "save the model with its column names: `convexagg predict` matches the columns "
            "by name."
        ),
    )
    fit.add_argument("train", metavar="TRAIN.csv", help="training data with a header row")
    fit.add_argument("--target", required=True, metavar="COLUMN", help="the class label column")
    fit.add_argument(
        "--id",
        action="append",
        type=csv_list,
        default=[],
        metavar="COLUMN",
        help="an identifier column: not a feature; `predict` copies it to its output "
        "(repeatable, or COL,COL)",
    )
    columns = fit.add_mutually_exclusive_group()
    columns.add_argument(
        "--drop",
        action="append",
        type=csv_list,
        default=[],
        metavar="COL[,COL]",
        help="columns to leave out (repeatable); `predict` ignores them",
    )
    columns.add_argument(
        "--features",
        action="append",
        type=csv_list,
        default=[],
        metavar="COL[,COL]",
        help="the feature columns, if not every other column (repeatable); `predict` "
        "ignores the columns left out",
    )
    fit.add_argument("--out", required=True, metavar="MODEL.skops", help="where to save the model")
    fit.add_argument(
        "--code",
        default=argparse.SUPPRESS,
        choices=_CodeNames(),
        metavar="CODE",
        help="code matrix: %(choices)s, or several joined by '+' (ovo+ovr) in one code; "
        "ovo: one binary classifier per pair of classes",
    )
    fit.add_argument(
        "--alpha",
        default=argparse.SUPPRESS,
        type=float,
        help="L2 regularisation strength of the aggregation weights",
    )
    fit.add_argument(
        "--loss",
        default=argparse.SUPPRESS,
        choices=["cross_entropy", "exponential"],
        help="loss of a binary classifier's output against a class's code entry, which the "
        "weights aggregate: %(choices)s",
    )
    fit.add_argument(
        "--entry-weight-shrinkage",
        default=argparse.SUPPRESS,
        type=_shrinkage,
        metavar="S",
        help="a weight per class and binary classifier, shrunk by S toward the classifier's "
        "weight; several values joined by ',' (e.g. 0.01,0.003,0.001): the one of the best "
        "cross-validated log-loss; 'none': one weight per binary classifier (the paper's model)",
    )
    fit.add_argument(
        "--zero-entry-penalty",
        default=argparse.SUPPRESS,
        type=_zero_entry_penalty,
        metavar="C",
        help="weights, free in sign, on the code's zero entries (what a classifier that does "
        "not separate a class says about it), held back by C; several values joined by ',' "
        "(e.g. 1,0.1,0.01): the one of the best cross-validated log-loss; "
        "'auto': the best of {priors} for n rows where that fit is affordable (at most "
        "{max_weights} such weights and {max_rows} rows), else none; their number grows as the "
        "cube of the classes (letter's 26: 15,600)",
    )
    fit.add_argument(
        "--cv",
        default=argparse.SUPPRESS,
        metavar="FOLDS",
        help="folds of the out-of-fold outputs the weights are fitted on; 'in_sample' "
        "(or 'none'): the binaries' outputs on their own training rows (the paper's protocol)",
    )
    fit.add_argument(
        "--holdout",
        type=float,
        default=0.2,
        metavar="FRACTION",
        help="rows held out for the reported estimate, in [0, 1) (default 0.2; 0: none); "
        "the saved model is fitted on every row",
    )
    fit.add_argument(
        "--random-state",
        type=int,
        default=0,
        help="seeds the held-out split, the folds, random codes and the learners "
        "(default %(default)s)",
    )
    fit.add_argument(
        "-v",
        "--verbose",
        action="count",
        default=0,
        help="a line per stage on standard error (-vv: the solver's iterations too)",
    )
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
        type=csv_list,
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
        help="printf float format of the probabilities: %%[flags][width][.precision] and one "
        "of e E f F g G (default %%.6g; %%.17g keeps every digit)",
    )
    _add_csv_options(predict)

    export = sub.add_parser(
        "export",
        help="export a fitted model to ONNX, for onnxruntime (needs convexagg[onnx])",
        description=(
            "Write MODEL.skops (saved by `convexagg fit` or convexagg.io.save) as an ONNX "
            "graph that onnxruntime runs without Python: one input X (n_rows x n_features, "
            "the features in training order, recorded in the file's feature_names "
            "metadata), outputs label and probabilities (columns in the order of the classes)."
        ),
    )
    export.add_argument("model", metavar="MODEL.skops", help="a fitted model (skops file)")
    export.add_argument("--out", required=True, metavar="MODEL.onnx", help="the ONNX file")
    export.add_argument(
        "--dtype",
        choices=("auto", "float64", "float32"),
        default="auto",
        help="the input type: float64 unless a binary's converter needs float32 (auto)",
    )
    export.add_argument(
        "--zipmap",
        action="store_true",
        help="probabilities as one {class: probability} map per row (skl2onnx's default) "
        "instead of one (n_rows x n_classes) tensor",
    )

    commands.add_paper_parsers(sub)
    return parser


# --------------------------------------------------------------------------- checks


# one printf float conversion, nothing else: %d or %s would write 0/1 or text
_FLOAT_FORMAT = re.compile(r"%[-+ #0]*[0-9]*(?:\.[0-9]+)?[eEfFgG]")


def _check_float_format(fmt):
    if not _FLOAT_FORMAT.fullmatch(fmt):
        raise ValueError(
            "--float-format must be one printf-style float format "
            f"(%[flags][width][.precision] and one of e E f F g G, such as %.6g or %.17g), "
            f"got {fmt!r}."
        )


# --------------------------------------------------------------------------- fit / predict


class _Stages(Reporter):
    """``-v``: one line per stage of the command (the reporter's ``name``) on standard
    error, with the time since the start; the estimator's own ``verbose`` lines go to
    standard error too (standard output keeps the result)."""

    def __call__(self, message):
        if self.verbose:
            elapsed = time.perf_counter() - self.start
            print(f"convexagg {self.name}: [{elapsed:7.1f} s] {message}", file=sys.stderr)
            sys.stderr.flush()

    def quiet_stdout(self):
        return contextlib.redirect_stdout(sys.stderr)


def _matrix(frame, columns):
    """``frame[columns]`` as a C-ordered float64 array: the order of arrays built from
    rows (pandas gives Fortran order; BLAS sums in another order, results differ in
    the last digit)."""
    import numpy as np

    return np.ascontiguousarray(frame[columns].to_numpy(dtype=np.float64))


def _make_model(args):
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import MaxAbsScaler, StandardScaler

    from .estimator import ConvexAggregationClassifier

    # MaxAbsScaler first: standardising finite values near 1e307 overflows (sums and
    # squares), which scikit-learn then reports as "Input X contains NaN".
    binary = make_pipeline(MaxAbsScaler(), StandardScaler(), LogisticRegression(max_iter=1000))
    # the options not given are absent: the estimator's defaults apply
    given = {name: getattr(args, name) for name in _ESTIMATOR_OPTIONS if hasattr(args, name)}
    return ConvexAggregationClassifier(
        binary, **given, random_state=args.random_state, verbose=args.verbose
    )


def _holdout_estimate(model, X, y, fraction, random_state, log):
    """Accuracy and log-loss on a stratified held-out part, as one line of text."""
    import numpy as np
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
    log(f"held-out estimate: fitting on {y_fit.size} rows, {y_out.size} held out")
    with log.quiet_stdout():
        held = clone(model).fit(X_fit, y_fit)
    P = held.predict_proba(X_out)
    accuracy = float(np.mean(held.classes_[P.argmax(axis=1)] == y_out))
    loss = log_loss(y_out, P, labels=held.classes_)
    return (
        f"held-out estimate on {y_out.size} rows ({fraction:.0%}): accuracy {accuracy:.3f}, "
        f"log-loss {loss:.4f}"
    )


def _folds(text):
    """``--cv``: an integer >= 2, or ``"in_sample"`` for 'in_sample' (or 'none', its 0.1 name)."""
    if text.strip().lower() in ("in_sample", "none"):
        return "in_sample"
    try:
        folds = int(text)
    except ValueError:
        folds = 0
    if folds < 2:
        raise ValueError(f"--cv must be an integer >= 2 (folds) or 'in_sample', got {text!r}.")
    return folds


def _select_columns(args, table):
    """``(features, ids, ignored)`` of the training file, from ``--id``, ``--drop`` and
    ``--features``; every name checked against the header."""
    columns = table.columns
    ids, dropped, chosen = _flat(args.id), _flat(args.drop), _flat(args.features)
    for option, names in (("--id", ids), ("--drop", dropped), ("--features", chosen)):
        for name in names:
            if name not in columns:
                raise ValueError(
                    f"{args.train} has no column {name!r} ({option}); its columns are "
                    f"{columns}{table.separator_hint()}."
                )
            if name == args.target:
                raise ValueError(f"{option} names the target column {args.target!r}.")
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise ValueError(f"{option} names {twice[0]!r} twice.")
    both = [c for c in ids if c in dropped or c in chosen]
    if both:
        other = "--drop" if both[0] in dropped else "--features"
        raise ValueError(f"{both[0]!r} is given to both --id and {other}.")
    if chosen:
        features = [c for c in columns if c in chosen]  # in file order
    else:
        features = [c for c in columns if c != args.target and c not in ids + dropped]
    if not features:
        raise ValueError(
            f"{args.train} has no feature columns besides the target {args.target!r}"
            f"{' and the --id / --drop columns' if ids or dropped else ''}."
        )
    ignored = [c for c in columns if c not in features and c != args.target and c not in ids]
    return features, ids, ignored


def _fit(args):
    from .io import CSVFile, check_output_path, parse_labels, save

    log = _Stages("fit", args.verbose)
    if hasattr(args, "cv"):
        args.cv = _folds(args.cv)
    if not 0 <= args.holdout < 1:
        raise ValueError(f"--holdout must be a fraction in [0, 1), got {args.holdout}.")
    at_least(args.random_state, 0, "--random-state")
    check_output_path(args.out, inputs=[args.train])  # before the work, and again on writing
    table = CSVFile(args.train, sep=args.sep, decimal=args.decimal)
    if args.target not in table.columns:
        raise ValueError(
            f"{args.train} has no column {args.target!r}; its columns are {table.columns}"
            f"{table.separator_hint()}."
        )
    features, ids, ignored = _select_columns(args, table)
    frame = table.read(
        numeric=features,
        hint=" If the column is not a feature, leave it out: --id COLUMN (an identifier, "
        "copied by predict) or --drop COLUMN.",
    )
    X = _matrix(frame, features)
    y = parse_labels(
        frame[args.target],
        name=f"{args.train}, column {args.target!r}",
        where=lambda i: table.where(i, args.target),
    )
    left_out = f"; left out: {ids + ignored}" if ids or ignored else ""
    log(f"read {args.train}: {X.shape[0]} rows, {X.shape[1]} features{left_out}")
    model = _make_model(args)
    model._validate_params()  # an invalid parameter fails before the held-out fit
    estimate = _holdout_estimate(model, X, y, args.holdout, args.random_state, log)
    log(f"{estimate}; fitting on all {X.shape[0]} rows")
    with log.quiet_stdout():
        model.fit(X, y)
    bundle = {
        "format": BUNDLE_FORMAT,
        "model": model,
        "features": features,
        "target": args.target,
        "ids": ids,
        "ignored": ignored,
    }
    log(f"fitted; saving {args.out}")
    save(bundle, args.out, inputs=[args.train])
    print(
        f"fitted on {X.shape[0]} samples, {X.shape[1]} features, {model.classes_.size} classes "
        f"({model.code}: {model.code_matrix_.shape[1]} binary classifiers); {estimate}; "
        f"training accuracy {model.score(X, y):.3f}; saved {args.out}"
    )
    return 0


def _names(value, key, path, optional=False):
    """A bundle's list of column names, checked: a crafted file gives a message, not a
    KeyError or TypeError."""
    if value is None and optional:
        return []
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        shown = type(value).__name__ if not isinstance(value, list) else "a list with non-names"
        raise ValueError(
            f"{path} is damaged or crafted: its {key!r} entry must be a list of column names, "
            f"got {'nothing' if value is None else shown}."
        )
    if len(set(value)) != len(value):
        raise ValueError(f"{path} is damaged or crafted: its {key!r} entry repeats a name.")
    return value


def _check_model(model, path, features):
    """A loaded model can predict ``len(features)`` columns (a crafted file holding a
    string or a stripped estimator is refused here, not with an AttributeError later)."""
    import numpy as np

    where = f"{path} is damaged or crafted: it"
    if not callable(getattr(model, "predict_proba", None)):
        raise ValueError(f"{where} holds a {type(model).__name__}, not a fitted classifier.")
    classes = getattr(model, "classes_", None)
    if not isinstance(classes, np.ndarray) or classes.ndim != 1 or classes.size < 2:
        raise ValueError(f"{where} holds a {type(model).__name__} without its fitted classes.")
    n_features = getattr(model, "n_features_in_", None)
    if not isinstance(n_features, (int, np.integer)) or n_features < 1:
        raise ValueError(f"{where} holds a {type(model).__name__} without n_features_in_.")
    if features is not None and len(features) != n_features:
        raise ValueError(
            f"{where} names {len(features)} features for a model of {n_features} features."
        )


def _unbundle(obj, path):
    """``(model, features or None, target or None, ids, ignored)`` from a loaded file."""
    if isinstance(obj, dict):
        if obj.get("format") not in _BUNDLE_FORMATS:
            raise ValueError(
                f"{path} does not hold a model saved by `convexagg fit` (a dictionary of "
                f"format {obj.get('format')!r})."
            )
        model = obj.get("model")
        features = _names(obj.get("features"), "features", path)
        target = obj.get("target")
        if not isinstance(target, str):
            raise ValueError(f"{path} is damaged or crafted: its 'target' entry is not a name.")
        ids = _names(obj.get("ids"), "ids", path, optional=True)
        ignored = _names(obj.get("ignored"), "ignored", path, optional=True)
    else:  # a model saved from Python: its feature names, if it was fitted on a DataFrame
        model, target, ids, ignored = obj, None, [], []
        names = getattr(obj, "feature_names_in_", None)
        features = None if names is None else [str(n) for n in names]
    _check_model(model, path, features)
    return model, features, target, ids, ignored


def _columns_to_copy(args, columns, bundle_ids, features, skipped):
    """The columns ``predict`` copies to its output, in file order; checked.

    ``bundle_ids`` are ``fit``'s ``--id`` columns (copied when present), ``skipped``
    the columns ``fit`` saw and left out, and the target (ignored when present).
    """
    ids = _flat(args.id)
    unknown = [c for c in ids if c not in columns]
    if unknown:
        raise ValueError(
            f"{args.data} has no column {unknown[0]!r} (--id); its columns are {columns}."
        )
    used = [c for c in ids if c in features]
    if used:
        raise ValueError(f"--id {used[0]!r} is a feature of the model; copy other columns.")
    ids += [c for c in bundle_ids if c in columns and c not in ids]
    extra = [c for c in columns if c not in features and c not in skipped and c not in ids]
    missing = [f for f in features if f not in columns]
    if missing or (extra and not args.keep_extra):
        parts = [f"missing {missing}"] if missing else []
        if extra and not args.keep_extra:
            parts.append(
                f"unexpected {extra} (--id COLUMN copies a column to the output, --keep-extra "
                "every such column)"
            )
        raise ValueError(
            f"{args.data}: columns differ from training (matched by name): {'; '.join(parts)}."
        )
    return [c for c in columns if c in ids or (args.keep_extra and c not in features)]


def _by_position(args, model, columns):
    """The feature columns of a model that records no names: every column but --id, in
    file order, with a warning (the CLI cannot check them)."""
    ids = set(_flat(args.id))
    features = [c for c in columns if c not in ids]
    if len(features) != model.n_features_in_:
        raise ValueError(
            f"{args.data} has {len(features)} feature columns but the model was trained "
            f"on {model.n_features_in_} features (it records no feature names: fitted on "
            "an array)."
        )
    warnings.warn(
        f"{args.model} records no feature names (fitted on an array, not a DataFrame), so "
        f"the columns of {args.data} are taken by position, unchecked: {features}. Fit on a "
        "pandas DataFrame or with `convexagg fit` to have them matched by name.",
        UserWarning,
        stacklevel=2,
    )
    return features


def _probabilities(model, X, path):
    """``model.predict_proba(X)``, checked: a damaged model from a file gives a message."""
    import numpy as np
    from sklearn.exceptions import NotFittedError

    try:
        P = model.predict_proba(X)
    except (AttributeError, TypeError, KeyError, IndexError, NotFittedError) as exc:
        raise ValueError(
            f"{path} is damaged or crafted: its model cannot predict "
            f"({type(exc).__name__}: {_one_line(exc)}); refit it."
        ) from None
    P = np.asarray(P)
    if P.shape != (X.shape[0], model.classes_.size) or not np.isfinite(P).all():
        raise ValueError(
            f"{path} is damaged or crafted: its model returned probabilities of shape "
            f"{P.shape} (or non-finite ones) for {X.shape[0]} rows and "
            f"{model.classes_.size} classes."
        )
    return P


def _predict(args):
    import numpy as np
    import pandas as pd

    from .io import CSVFile, check_output_path, load, write_table

    _check_float_format(args.float_format)
    inputs = [args.model, args.data]
    if args.out != "-":
        check_output_path(args.out, inputs=inputs)
    model, features, target, bundle_ids, ignored = _unbundle(load(args.model), args.model)
    table = CSVFile(args.data, sep=args.sep, decimal=args.decimal)
    if features is None:
        features = _by_position(args, model, table.columns)
    skipped = set(ignored) | {target}
    copied = _columns_to_copy(args, table.columns, bundle_ids, features, skipped)
    frame = table.read(numeric=features)
    X = _matrix(frame, features)
    if getattr(model, "feature_names_in_", None) is not None:  # fitted on a DataFrame
        X = pd.DataFrame(X, columns=features)
    P = _probabilities(model, X, args.model)
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


def _export(args):
    import json

    from sklearn.utils.validation import check_is_fitted

    from .export import to_onnx
    from .io import atomic_write, check_output_path, load

    onnx = require("onnx", "'convexagg export'", "onnx")

    check_output_path(args.out, inputs=[args.model])  # before the work, and again on writing
    loaded = load(args.model)
    if not isinstance(loaded, dict) and hasattr(loaded, "fit"):  # saved from Python
        check_is_fitted(loaded)
    model, features, target, _, _ = _unbundle(loaded, args.model)
    onx = to_onnx(model, dtype=args.dtype, options={"zipmap": args.zipmap})
    names = features or [f"x{j}" for j in range(model.n_features_in_)]
    meta = {"feature_names": json.dumps(names), "target": json.dumps(target)}
    for key, value in meta.items():
        onx.metadata_props.add(key=key, value=value)
    data = onx.SerializeToString()
    with atomic_write(args.out, "wb", inputs=[args.model]) as f:
        f.write(data)
    double = onx.graph.input[0].type.tensor_type.elem_type == onnx.TensorProto.DOUBLE
    print(
        f"exported {type(model).__name__} ({model.classes_.size} classes, "
        f"{model.n_features_in_} features, {'float64' if double else 'float32'} input) "
        f"to {args.out}: {len(data)} bytes"
    )
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


# the library's commands here; the paper's with the experiments they run
HANDLERS = {"fit": _fit, "predict": _predict, "export": _export, **commands.HANDLERS}


class _Signal(BaseException):
    """Raised by a termination signal, so cleanups run (``atomic_write`` removes its
    temporary file) as they do on an error; a BaseException, as KeyboardInterrupt is,
    so that no ``except Exception`` swallows it."""

    def __init__(self, signum):
        super().__init__(signum)
        self.signum = signum


def _raise_signal(signum, frame):
    raise _Signal(signum)


@contextlib.contextmanager
def _signals_raise():
    """SIGTERM and SIGHUP raise :class:`_Signal` (their default kills the process
    before any cleanup, leaving a temporary file behind); restored afterwards."""
    if threading.current_thread() is not threading.main_thread():
        yield  # signal handlers can only be set from the main thread
        return
    names = [n for n in ("SIGTERM", "SIGHUP") if hasattr(signal, n)]
    previous = {n: signal.signal(getattr(signal, n), _raise_signal) for n in names}
    try:
        yield
    finally:
        for name, handler in previous.items():
            signal.signal(getattr(signal, name), handler)


def main(argv=None):
    """Run the ``convexagg`` command line (also ``python -m convexagg``).

    Parameters
    ----------
    argv : list of str, default=None
        The arguments; ``sys.argv[1:]`` when None.

    Returns
    -------
    status : int
        0 on success; after a one-line ``convexagg: error: ...`` message (the
        last line on standard error), 1 for an error, 128 + the signal's number
        when interrupted (130 for Ctrl-C, 143 for SIGTERM).
    """
    args = build_parser().parse_args(argv)
    handler = HANDLERS[args.command]
    quiet = args.command in ("fit", "predict", "export")  # warnings: one line each, at the end
    error = None
    with warnings.catch_warnings(record=quiet) as caught:
        try:
            with _signals_raise():
                status = handler(args)
        except (ValueError, OSError, MissingDependencyError) as exc:
            error, status = _error_message(exc), 1
        except KeyboardInterrupt:
            error, status = "interrupted (SIGINT); no file was left half-written", 130
        except _Signal as exc:
            name = signal.Signals(exc.signum).name
            error = f"terminated by {name}; no file was left half-written"
            status = 128 + exc.signum
    seen = set()
    for w in caught or ():  # one line per distinct warning, not the source line
        line = f"convexagg: warning: {w.category.__name__}: {_one_line(w.message)}"
        if line not in seen:
            seen.add(line)
            print(line, file=sys.stderr)
    if error is not None:  # last, so that the final line says what happened
        print(f"convexagg: error: {error}", file=sys.stderr)
    return status


if __name__ == "__main__":
    sys.exit(main())
