"""The library's commands: ``convexagg fit``, ``predict`` and ``export``.

Each handler takes the parsed arguments and returns the exit status; what it
needs of the CSV's columns is in :mod:`convexagg.cli.tables`, of the saved file
in :mod:`convexagg.cli.bundle`. The heavy modules (NumPy, pandas, scikit-learn,
skops, the estimators) are imported inside the handlers.
"""

from __future__ import annotations

import contextlib
import re
import sys
import time

from .._arguments import at_least
from .._optional import require
from .._utils import Reporter
from .bundle import Kinds, make_bundle, unbundle
from .parser import ESTIMATOR_OPTIONS
from .tables import (
    by_position,
    check_categories,
    columns_to_copy,
    feature_frame,
    feature_kinds,
    float_matrix,
    preprocessing,
    select_columns,
)

__all__ = ["check_float_format", "export_command", "fit_command", "one_line", "predict_command"]


# one printf float conversion, nothing else: %d or %s would write 0/1 or text
_FLOAT_FORMAT = re.compile(r"%[-+ #0]*[0-9]*(?:\.[0-9]+)?[eEfFgG]")


def check_float_format(fmt):
    if not _FLOAT_FORMAT.fullmatch(fmt):
        raise ValueError(
            "--float-format must be one printf-style float format "
            f"(%[flags][width][.precision] and one of e E f F g G, such as %.6g or %.17g), "
            f"got {fmt!r}."
        )


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


def _make_model(args, numeric, categorical):
    """``Pipeline([("preprocess", ...), ("classifier", ConvexAggregationClassifier)])``."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import Pipeline, make_pipeline
    from sklearn.preprocessing import StandardScaler

    from ..estimator import ConvexAggregationClassifier

    binary = make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000))
    # the options not given are absent: the estimator's defaults apply
    given = {name: getattr(args, name) for name in ESTIMATOR_OPTIONS if hasattr(args, name)}
    classifier = ConvexAggregationClassifier(
        binary, **given, random_state=args.random_state, verbose=args.verbose
    )
    steps = [("preprocess", preprocessing(args.preprocess, numeric, categorical))]
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


def fit_command(args):
    from ..io import CSVFile, check_output_path, parse_labels, save

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
    features, ids, ignored = select_columns(args, table)
    numeric, categorical = feature_kinds(args, table, features)
    hint = (
        " If the column is not a feature, leave it out: --id COLUMN (an identifier, "
        "copied by predict) or --drop COLUMN."
    )
    if not args.preprocess:
        hint += " Without --no-preprocess, text columns are one-hot encoded."
    frame = table.read(numeric=numeric, hint=hint, missing=args.preprocess, categorical=categorical)
    check_categories(args, frame, categorical)
    y = parse_labels(
        frame[args.target],
        name=f"{args.train}, column {args.target!r}",
        where=lambda i: table.where(i, args.target),
    )
    if args.preprocess:
        X = feature_frame(frame, features, categorical)
    else:
        X = float_matrix(frame, features)
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
    bundle = make_bundle(
        model,
        features=features,
        target=args.target,
        ids=ids,
        ignored=ignored,
        preprocess=args.preprocess,
        categorical=categorical,
    )
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


def _probabilities(model, X, path):
    """``model.predict_proba(X)``, checked: a damaged model from a file gives a message."""
    import numpy as np
    from sklearn.exceptions import NotFittedError

    try:
        P = model.predict_proba(X)
    except (AttributeError, TypeError, KeyError, IndexError, NotFittedError) as exc:
        raise ValueError(
            f"{path} is damaged or crafted: its model cannot predict "
            f"({type(exc).__name__}: {one_line(exc)}); refit it."
        ) from None
    P = np.asarray(P)
    if P.shape != (X.shape[0], model.classes_.size) or not np.isfinite(P).all():
        raise ValueError(
            f"{path} is damaged or crafted: its model returned probabilities of shape "
            f"{P.shape} (or non-finite ones) for {X.shape[0]} rows and "
            f"{model.classes_.size} classes."
        )
    return P


def predict_command(args):
    import numpy as np
    import pandas as pd

    from ..io import CSVFile, check_output_path, load, write_table

    check_float_format(args.float_format)
    inputs = [args.model, args.data]
    if args.out != "-":
        check_output_path(args.out, inputs=inputs)
    model, features, target, bundle_ids, ignored, kinds = unbundle(load(args.model), args.model)
    table = CSVFile(args.data, sep=args.sep, decimal=args.decimal)
    named = getattr(model, "feature_names_in_", None) is not None  # fitted on a DataFrame
    if features is None:
        features = by_position(args, model, table.columns)
    skipped = set(ignored) | {target}
    copied = columns_to_copy(args, table.columns, bundle_ids, features, skipped)
    if kinds is None:  # from Python: with names, the columns as the file has them
        kinds = Kinds([], False, inferred=False)
        if named:
            shares = table.number_shares(features)
            texts = [f for f, share in zip(features, shares) if share < 1]
            kinds = Kinds(texts, True, inferred=True)
    numeric = [f for f in features if f not in kinds.categorical]
    frame = table.read(numeric=numeric, missing=kinds.missing, categorical=kinds.categorical)
    if named:
        X = feature_frame(frame, features, kinds.categorical)
    else:
        X = float_matrix(frame, features)
    try:
        P = _probabilities(model, X, args.model)
    except ValueError as exc:
        if not (kinds.inferred and kinds.categorical):
            raise
        raise ValueError(
            f"{args.model} cannot predict from {args.data} ({one_line(exc)}); its columns "
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


def export_command(args):
    import json

    from sklearn.utils.validation import check_is_fitted

    from ..export import to_onnx
    from ..io import atomic_write, check_output_path, load

    onnx = require("onnx", "'convexagg export'", "onnx")

    check_output_path(args.out, inputs=[args.model])  # before the work, and again on writing
    loaded = load(args.model)
    if not isinstance(loaded, dict) and hasattr(loaded, "fit"):  # saved from Python
        check_is_fitted(loaded)
    model, features, target, _, _, kinds = unbundle(loaded, args.model)
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


def one_line(text):
    lines = str(text).strip().splitlines()
    return lines[0] if lines else ""
