"""The ``convexagg`` argument parser: its subcommands, options and their types.

Nothing heavy is imported here: ``convexagg --help`` starts at once, and ``fit
--help`` reads the estimator's defaults and the constants it quotes from the
source of :mod:`convexagg.estimator` (:func:`estimator_help_values`), not from
the imported module.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import math

from .._arguments import csv_list
from ..experiments import commands

__all__ = ["ESTIMATOR_OPTIONS", "HELP_CONSTANTS", "build_parser", "estimator_help_values"]


class _CodeNames:
    """``--code``'s choices, read from :mod:`convexagg.codes` only when argparse
    needs them (``fit --help``: from its source, :func:`_source_values`; checking a
    value), not for ``convexagg --help``."""

    def _names(self):
        names = _source_values("convexagg.codes", {"CODE_NAMES"}).get("CODE_NAMES")
        if names is None:  # not a literal in the source: from the module
            from ..codes import CODE_NAMES as names
        return names

    def __iter__(self):
        return iter(self._names())

    def __contains__(self, name):
        from ..codes import check_code_name  # several names may be joined by "+"

        try:
            check_code_name(name)
        except ValueError:
            return False
        return True


# `fit` options that set the ConvexAggregationClassifier parameter of the same name: not
# given, they are absent from the parsed arguments (argparse.SUPPRESS) and not passed, so
# the estimator's own default applies (`fit --help` shows it, read from its signature)
ESTIMATOR_OPTIONS = (
    "code",
    "alpha",
    "loss",
    "entry_weight_shrinkage",
    "zero_entry_penalty",
    "cv",
)


# the estimator's constants `fit --help` quotes beside the defaults
HELP_CONSTANTS = (
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
def estimator_help_values():
    """The defaults of ``fit``'s estimator options and the constants its help quotes.

    Read from the source of :mod:`convexagg.estimator` (so that ``fit --help`` does
    not import scikit-learn), or, where the source does not state one as a literal,
    from the imported estimator.

    Returns
    -------
    values : dict
        ``{option or constant name: value}`` for ``ESTIMATOR_OPTIONS`` and
        ``HELP_CONSTANTS``.
    """
    found = _source_values("convexagg.estimator", {"ConvexAggregationClassifier", *HELP_CONSTANTS})
    cls = found.pop("ConvexAggregationClassifier", None)
    defaults = _init_defaults(cls) if cls is not None else None
    values = {**found, **(defaults or {})}
    if all(name in values for name in (*ESTIMATOR_OPTIONS, *HELP_CONSTANTS)):
        return values
    from inspect import signature

    from .. import estimator

    parameters = signature(estimator.ConvexAggregationClassifier).parameters
    values = {name: parameters[name].default for name in ESTIMATOR_OPTIONS}
    return {**values, **{name: getattr(estimator, name) for name in HELP_CONSTANTS}}


class _FitHelp(argparse.HelpFormatter):
    """``fit --help``: the estimator's default after each option of ``ESTIMATOR_OPTIONS``
    (read by :func:`estimator_help_values`, for that help only)."""

    def _get_help_string(self, action):
        text = super()._get_help_string(action)
        if action.dest not in ESTIMATOR_OPTIONS:
            return text
        values = estimator_help_values()
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
        from .._version import __version__

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
