"""The ``convexagg`` command line.

::

    convexagg demo
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


def main(argv=None):
    args = build_parser().parse_args(argv)
    if args.command == "demo":
        from .experiments.demo import main as demo

        demo(random_state=args.random_state)
        return 0
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
