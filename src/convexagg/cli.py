"""The ``convexagg`` command line.

::

    convexagg demo
    convexagg reproduce [--datasets ...] [--data-dir DIR] [--out DIR]   (the paper's tables)
    convexagg figures [--data-dir DIR] [--out DIR]                       (the paper's figures)
    convexagg fit TRAIN.csv --target COLUMN [--id COLUMN] [--drop COL,COL | --features COL,COL]
                  [--categorical COL,COL] [--no-preprocess]
                  [--code CODE] [--entry-weight-shrinkage S[,S...]|none]
                  [--zero-entry-penalty C|auto] --out MODEL.skops [-v]
    convexagg predict MODEL.skops DATA.csv [--out PRED.csv] [--id COLUMN]
    convexagg --version                                (also: python -m convexagg ...)

``fit`` trains a model on the feature columns of ``TRAIN.csv`` -- every column
but the target, the ``--id`` and the ``--drop`` columns, or the ``--features``
-- and saves it with :func:`convexagg.io.save`, together with the feature
names, which of them are categories, the target's name, the id columns and the
other columns it left out; it reports a held-out estimate (accuracy and
log-loss of a model fitted without ``--holdout`` of the rows) before refitting
on all rows. The model is a scikit-learn ``Pipeline``: a preprocessing step
(numbers scaled by their largest magnitude, missing ones imputed with the mean
and flagged; text columns one-hot encoded, a category unseen in training
encoded as none; ``--no-preprocess``: the scaling alone, every feature a
number in every row) and a :class:`~convexagg.ConvexAggregationClassifier`
whose binary learner is ``StandardScaler`` + ``LogisticRegression``. A column
is a category when ``--categorical`` names it or when at most half of its
values are numbers; a column of numbers with a few texts, or a text column
with more distinct values than 20 and than half the rows (an identifier), is
an error that names the way out. The options that set an estimator parameter
(``--code``, ``--alpha``, ``--loss``, ``--entry-weight-shrinkage``,
``--zero-entry-penalty``, ``--cv``) take the estimator's default when not
given. ``-v`` prints a line per stage on standard error (with the estimator's
own ``verbose`` lines; ``-vv`` passes ``verbose=2``). Target labels go through
:func:`convexagg.io.parse_labels` and the estimators' own checks: a continuous
target or a missing label is refused. ``predict`` writes, for every row of
``DATA.csv``, the ``--id`` columns, the predicted label (``prediction``) and the
class probabilities (``proba_<class>``, ``%.6g`` unless ``--float-format``), as
CSV to standard output unless ``--out`` names a file (``-`` is standard
output); ``DATA.csv`` must have the training features, matched by name in any
order, and may also have the target and the columns ``fit`` left out, which are
ignored (the training ``--id`` columns are copied). A model saved from Python
that records feature names gets the file's columns as they are (numbers, texts,
missing values as NaN); one that records none is applied by position, with a
warning.

Input files must be regular files (not a device or a pipe) of text, at most
:data:`convexagg.io.MAX_CSV_BYTES`; they may be gzip-compressed (recognised by
content); the separator is detected from the header (comma, semicolon, tab,
vertical bar) unless ``--sep`` gives it, and ``--decimal ,`` reads
decimal-comma numbers. An output is never an input, a directory or a device
node replaced by a file (:mod:`convexagg.io`).

User errors (a missing file or column, a text among numbers, a bad target,
columns that differ from training, an untrusted or crafted model file, an
unknown data set or method, an invalid number, a missing optional dependency)
end with a one-line ``convexagg: error: ...`` on standard error and exit status
1, in every subcommand, after any warnings; a malformed command line exits
with status 2 (argparse); SIGTERM, SIGHUP and Ctrl-C end with the same line and
status 128 + the signal's number. Nothing is written on failure or
interruption: outputs are written atomically once everything has succeeded.

The heavy modules (NumPy, pandas, scikit-learn, skops, the estimators) are
imported inside the commands, so ``convexagg --help`` starts at once; ``fit
--help`` reads the estimator's defaults from its source. The
paper's commands (``demo``, ``reproduce``, ``figures``) live with the
experiments they run, in :mod:`convexagg.experiments.commands`; this module
holds ``fit`` and ``predict`` and dispatches.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import math
import re
import signal
import sys
import threading
import time
import warnings
from typing import NamedTuple

from ._arguments import at_least, csv_list
from ._optional import MissingDependencyError, require
from ._utils import Reporter
from .experiments import commands

# the bundle `convexagg fit` saves: the model plus what predict needs to read a CSV;
# /1 has no "ids" and "ignored", /1 and /2 no "preprocess" and "categorical" (all
# features numbers, none missing): they are read too
BUNDLE_FORMAT = "convexagg-cli-model/3"
_BUNDLE_FORMATS = (BUNDLE_FORMAT, "convexagg-cli-model/2", "convexagg-cli-model/1")


def _flat(groups):
    """The names of a repeatable comma-separated option, in order."""
    return [name for group in groups or () for name in group]


class _CodeNames:
    """``--code``'s choices, read from :mod:`convexagg.codes` only when argparse
    needs them (``fit --help``: from its source, :func:`_source_values`; checking a
    value), not for ``convexagg --help``."""

    def _names(self):
        names = _source_values("convexagg.codes", {"CODE_NAMES"}).get("CODE_NAMES")
        if names is None:  # not a literal in the source: from the module
            from .codes import CODE_NAMES as names
        return names

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


# the estimator's constants `fit --help` quotes beside the defaults
_HELP_CONSTANTS = (
    "DEFAULT_ENTRY_WEIGHT_PRIOR",
    "ENTRY_WEIGHT_SHRINKAGE_RANGE",
    "ZERO_ENTRY_AUTO_MAX_ROWS",
    "ZERO_ENTRY_AUTO_MAX_WEIGHTS",
    "ZERO_ENTRY_PRIORS",
)


def _source_values(module, wanted, depth=0):
    """``{name: value}`` of the module-level literals of ``module`` (a convexagg module
    name) among ``wanted``, read from its source without importing it (scikit-learn
    would cost seconds): ``NAME = literal``, and names it imports from another
    convexagg module, read there. Names not found that way are left out."""
    import ast
    import importlib.util

    spec = importlib.util.find_spec(module)
    if spec is None or spec.origin is None or depth > 2:
        return {}
    with open(spec.origin, encoding="utf-8") as f:
        tree = ast.parse(f.read())
    found, imported = {}, {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            name = getattr(node.targets[0], "id", None)
            if name in wanted:
                with contextlib.suppress(ValueError, TypeError, SyntaxError, MemoryError):
                    found[name] = ast.literal_eval(node.value)
        elif isinstance(node, ast.ImportFrom) and node.level and node.module:
            source = importlib.util.resolve_name("." * node.level + node.module, spec.parent)
            for alias in node.names:
                if (alias.asname or alias.name) in wanted and alias.name != "*":
                    imported.setdefault(source, []).append(alias.name)
        elif isinstance(node, ast.ClassDef) and node.name in wanted:
            found[node.name] = node  # a class: its __init__'s defaults are read by the caller
    for source, names in imported.items():
        found.update(_source_values(source, set(names), depth + 1))
    return found


def _init_defaults(cls):
    """``{parameter: default}`` of a class's own ``__init__`` (an ``ast.ClassDef``),
    the literal ones; None when it has none of its own."""
    import ast

    init = next((n for n in cls.body if getattr(n, "name", None) == "__init__"), None)
    if init is None:
        return None
    args = init.args
    pairs = list(zip(args.args[len(args.args) - len(args.defaults) :], args.defaults))
    pairs += [(a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None]
    defaults = {}
    for arg, node in pairs:
        with contextlib.suppress(ValueError, TypeError, SyntaxError, MemoryError):
            defaults[arg.arg] = ast.literal_eval(node)
    return defaults


@functools.lru_cache(maxsize=1)
def _estimator_help_values():
    """The defaults of ``fit``'s estimator options and the constants its help quotes.

    Read from the source of :mod:`convexagg.estimator` (so that ``fit --help`` does
    not import scikit-learn), or, where the source does not state one as a literal,
    from the imported estimator.

    Returns
    -------
    values : dict
        ``{option or constant name: value}`` for ``_ESTIMATOR_OPTIONS`` and
        ``_HELP_CONSTANTS``.
    """
    found = _source_values("convexagg.estimator", {"ConvexAggregationClassifier", *_HELP_CONSTANTS})
    cls = found.pop("ConvexAggregationClassifier", None)
    defaults = _init_defaults(cls) if cls is not None else None
    values = {**found, **(defaults or {})}
    if all(name in values for name in (*_ESTIMATOR_OPTIONS, *_HELP_CONSTANTS)):
        return values
    from inspect import signature

    from . import estimator

    parameters = signature(estimator.ConvexAggregationClassifier).parameters
    values = {name: parameters[name].default for name in _ESTIMATOR_OPTIONS}
    return {**values, **{name: getattr(estimator, name) for name in _HELP_CONSTANTS}}


class _FitHelp(argparse.HelpFormatter):
    """``fit --help``: the estimator's default after each option of ``_ESTIMATOR_OPTIONS``
    (read by :func:`_estimator_help_values`, for that help only)."""

    def _get_help_string(self, action):
        text = super()._get_help_string(action)
        if action.dest not in _ESTIMATOR_OPTIONS:
            return text
        values = _estimator_help_values()
        default = values[action.dest]
        if action.dest == "entry_weight_shrinkage":
            low, high = values["ENTRY_WEIGHT_SHRINKAGE_RANGE"]
            prior = values["DEFAULT_ENTRY_WEIGHT_PRIOR"]
            default = f"{default}: {prior:g}/n within [{low:g}, {high:g}]"
        priors = values["ZERO_ENTRY_PRIORS"]
        text = text.replace("{priors}", "/n, ".join(f"{c:g}" for c in priors) + "/n")
        text = text.replace("{max_weights}", f"{values['ZERO_ENTRY_AUTO_MAX_WEIGHTS']:,}")
        text = text.replace("{max_rows}", f"{values['ZERO_ENTRY_AUTO_MAX_ROWS']:,}")
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
            "Fit a model on the feature columns of TRAIN.csv (every column but the target, "
            "--id and --drop, or the --features), report a held-out estimate, refit on every "
            "row and save the model with its column names: `convexagg predict` matches the "
            "columns by name. The model is a scikit-learn Pipeline: a preprocessing step "
            "(numeric columns: MaxAbsScaler, then SimpleImputer of missing values with "
            "missing-value indicators; text columns: OneHotEncoder, categories unseen in "
            "training ignored) and a ConvexAggregationClassifier whose binary learner is "
            "StandardScaler + LogisticRegression(max_iter=1000), one per column of the code."
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
        "--categorical",
        action="append",
        type=csv_list,
        default=[],
        metavar="COL[,COL]",
        help="feature columns to one-hot encode although they hold numbers (codes) or many "
        "distinct texts (repeatable); other text columns are encoded anyway",
    )
    fit.add_argument(
        "--no-preprocess",
        dest="preprocess",
        action="store_false",
        help="no encoding of text columns and no imputation: every feature must be a number "
        "in every row (the preprocessing step is MaxAbsScaler alone)",
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


def _feature_frame(frame, features, categorical):
    """The feature columns as a DataFrame, the numbers of an all-numeric table as one
    C-ordered float64 block (:func:`_matrix`), text columns as they were read."""
    import pandas as pd

    if categorical:
        return frame[features]
    return pd.DataFrame(_matrix(frame, features), columns=features)


def _preprocessing(preprocess, numeric, categorical):
    """The model's first step: what the binaries see of the CSV's feature columns."""
    from sklearn.preprocessing import MaxAbsScaler

    # MaxAbsScaler before anything that sums: standardising or averaging finite values
    # near 1e307 overflows, which scikit-learn then reports as "Input X contains NaN"
    if not preprocess:
        return MaxAbsScaler()
    from sklearn.compose import ColumnTransformer
    from sklearn.impute import SimpleImputer
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder

    parts = []
    if numeric:
        # MaxAbsScaler keeps NaN; the indicators let the binaries weigh a missing value
        impute = SimpleImputer(add_indicator=True, keep_empty_features=True)
        parts.append(("numbers", make_pipeline(MaxAbsScaler(), impute), numeric))
    if categorical:
        # dense: the binaries' StandardScaler centres, which a sparse matrix cannot take
        encode = OneHotEncoder(handle_unknown="ignore", sparse_output=False)
        parts.append(("categories", encode, categorical))
    return ColumnTransformer(parts, sparse_threshold=0.0)


def _make_model(args, numeric, categorical):
    """``Pipeline([("preprocess", ...), ("classifier", ConvexAggregationClassifier)])``."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import Pipeline, make_pipeline
    from sklearn.preprocessing import StandardScaler

    from .estimator import ConvexAggregationClassifier

    binary = make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000))
    # the options not given are absent: the estimator's defaults apply
    given = {name: getattr(args, name) for name in _ESTIMATOR_OPTIONS if hasattr(args, name)}
    classifier = ConvexAggregationClassifier(
        binary, **given, random_state=args.random_state, verbose=args.verbose
    )
    steps = [("preprocess", _preprocessing(args.preprocess, numeric, categorical))]
    return Pipeline([*steps, ("classifier", classifier)])


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


# a text column with more distinct values than this and than half the rows is taken
# for an identifier or free text, not categories (--categorical encodes it anyway)
_MANY_CATEGORIES = 20


def _feature_kinds(args, table, features):
    """``(numeric, categorical)``: the feature columns read as numbers and as categories.

    With preprocessing, a column is categorical if ``--categorical`` names it or if
    at most half of its values are numbers; a column of numbers but for a few texts
    (a typo?) or of decimal-comma numbers read with ``.`` is an error naming the
    first such field.
    """
    chosen = _flat(args.categorical)
    for name in chosen:
        if name not in features:
            raise ValueError(
                f"--categorical {name!r} is not a feature column of {args.train}; its "
                f"features are {features}."
            )
    if len(set(chosen)) != len(chosen):
        raise ValueError(f"--categorical names {chosen[0]!r} twice.")
    if not args.preprocess:
        if chosen:
            raise ValueError("--categorical needs the preprocessing --no-preprocess turns off.")
        return features, []
    others = [f for f in features if f not in chosen]
    shares = dict(zip(others, table.number_shares(others)))
    texts = [f for f in others if shares[f] <= 0.5]
    unsure = [f for f in others if 0.5 < shares[f] < 1]
    if table.decimal == ".":  # numbers with a decimal comma
        unsure += [f for f, s in zip(texts, table.number_shares(texts, decimal=",")) if s == 1]
    if unsure:  # raises at the first text among numbers, naming it
        table.read(
            numeric=unsure,
            missing=True,
            hint=" If the column holds categories, encode it as such: --categorical COLUMN.",
        )
    categorical = [f for f in features if f in chosen or f in texts or f in unsure]
    return [f for f in features if f not in categorical], categorical


def _check_categories(args, frame, categorical):
    """Refuse a text column that looks like an identifier or free text (its one-hot
    columns would be as many as its rows, and unseen at predict time)."""
    chosen, n = set(_flat(args.categorical)), len(frame)
    for column in categorical:
        distinct = int(frame[column].nunique(dropna=True))
        if column not in chosen and distinct > max(_MANY_CATEGORIES, n / 2):
            raise ValueError(
                f"{args.train}, column {column!r}: {distinct} distinct texts in {n} rows, an "
                "identifier or free text rather than categories; leave it out (--id "
                f"{column}: predict copies it, or --drop {column}) or encode it anyway "
                f"(--categorical {column})."
            )


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
    numeric, categorical = _feature_kinds(args, table, features)
    hint = (
        " If the column is not a feature, leave it out: --id COLUMN (an identifier, "
        "copied by predict) or --drop COLUMN."
    )
    if not args.preprocess:
        hint += " Without --no-preprocess, text columns are one-hot encoded."
    frame = table.read(numeric=numeric, hint=hint, missing=args.preprocess, categorical=categorical)
    _check_categories(args, frame, categorical)
    y = parse_labels(
        frame[args.target],
        name=f"{args.train}, column {args.target!r}",
        where=lambda i: table.where(i, args.target),
    )
    if args.preprocess:
        X = _feature_frame(frame, features, categorical)
    else:
        X = _matrix(frame, features)
    n_missing = int(frame[numeric].isna().to_numpy().sum())
    log(
        f"read {args.train}: {X.shape[0]} rows, {X.shape[1]} features"
        + (f"; one-hot encoded: {categorical}" if categorical else "")
        + (f"; {n_missing} missing numbers, imputed" if n_missing else "")
        + (f"; left out: {ids + ignored}" if ids or ignored else "")
    )
    model = _make_model(args, numeric, categorical)
    classifier = model[-1]
    classifier._validate_params()  # an invalid parameter fails before the held-out fit
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
        "preprocess": args.preprocess,
        "categorical": categorical,
    }
    log(f"fitted; saving {args.out}")
    save(bundle, args.out, inputs=[args.train])
    kinds = f" ({len(categorical)} categorical)" if categorical else ""
    print(
        f"fitted on {X.shape[0]} samples, {X.shape[1]} features{kinds}, "
        f"{classifier.classes_.size} classes ({classifier.code}: "
        f"{classifier.code_matrix_.shape[1]} binary classifiers); {estimate}; "
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


class _Kinds(NamedTuple):
    """How ``predict`` reads a model's feature columns."""

    categorical: list  # read as text, missing values as NaN
    missing: bool  # numbers may be missing (NaN)
    inferred: bool  # categorical is what the file holds, not what the model says


def _unbundle(obj, path):
    """``(model, features or None, target or None, ids, ignored, kinds)`` from a loaded
    file; ``kinds`` None for a model saved from Python (read from the data)."""
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
        categorical = _names(obj.get("categorical"), "categorical", path, optional=True)
        preprocess = obj.get("preprocess", False)  # absent before convexagg-cli-model/3
        if not isinstance(preprocess, bool) or any(c not in features for c in categorical):
            raise ValueError(
                f"{path} is damaged or crafted: its 'preprocess' entry is not a bool or its "
                "'categorical' columns are not features."
            )
        kinds = _Kinds(categorical, preprocess, inferred=False)
    else:  # a model saved from Python: its feature names, if it was fitted on a DataFrame
        model, target, ids, ignored, kinds = obj, None, [], [], None
        names = getattr(obj, "feature_names_in_", None)
        features = None if names is None else [str(n) for n in names]
    _check_model(model, path, features)
    return model, features, target, ids, ignored, kinds


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
    model, features, target, bundle_ids, ignored, kinds = _unbundle(load(args.model), args.model)
    table = CSVFile(args.data, sep=args.sep, decimal=args.decimal)
    named = getattr(model, "feature_names_in_", None) is not None  # fitted on a DataFrame
    if features is None:
        features = _by_position(args, model, table.columns)
    skipped = set(ignored) | {target}
    copied = _columns_to_copy(args, table.columns, bundle_ids, features, skipped)
    if kinds is None:  # from Python: with names, the columns as the file has them
        kinds = _Kinds([], False, inferred=False)
        if named:
            shares = table.number_shares(features)
            texts = [f for f, share in zip(features, shares) if share < 1]
            kinds = _Kinds(texts, True, inferred=True)
    numeric = [f for f in features if f not in kinds.categorical]
    frame = table.read(numeric=numeric, missing=kinds.missing, categorical=kinds.categorical)
    X = _feature_frame(frame, features, kinds.categorical) if named else _matrix(frame, features)
    try:
        P = _probabilities(model, X, args.model)
    except ValueError as exc:
        if not (kinds.inferred and kinds.categorical):
            raise
        raise ValueError(
            f"{args.model} cannot predict from {args.data} ({_one_line(exc)}); its columns "
            f"{kinds.categorical} hold text."
        ) from None
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


def _selects_columns(model):
    from sklearn.compose import ColumnTransformer

    steps = [step for _, step in getattr(model, "steps", [])]
    return any(isinstance(step, ColumnTransformer) for step in steps)


def _export_sample(model, features, kinds):
    """One row shaped like what ``predict`` gives the model: for a model that selects
    columns by name (``fit``'s preprocessing) a frame, one graph input per column (texts
    as strings), else None (one numeric input ``X``)."""
    if features is None or not _selects_columns(model):
        return None
    import pandas as pd

    categorical = [] if kinds is None else kinds.categorical

    return pd.DataFrame(
        {
            f: pd.Series(
                [""] if f in categorical else [0.0], dtype=object if f in categorical else "float64"
            )
            for f in features
        }
    )


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
    model, features, target, _, _, kinds = _unbundle(loaded, args.model)
    onx = to_onnx(
        model,
        _export_sample(model, features, kinds),
        dtype=args.dtype,
        options={"zipmap": args.zipmap},
    )
    names = features or [f"x{j}" for j in range(model.n_features_in_)]
    meta = {"feature_names": json.dumps(names), "target": json.dumps(target)}
    for key, value in meta.items():
        onx.metadata_props.add(key=key, value=value)
    data = onx.SerializeToString()
    with atomic_write(args.out, "wb", inputs=[args.model]) as f:
        f.write(data)
    double = onx.graph.input[0].type.tensor_type.elem_type == onnx.TensorProto.DOUBLE
    print(
        f"exported {type(model[-1] if hasattr(model, 'steps') else model).__name__} "
        f"({model.classes_.size} classes, "
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
