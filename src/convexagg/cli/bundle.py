"""The file ``convexagg fit`` saves: the model with what ``predict`` needs to read a CSV.

A dictionary (:func:`make_bundle`) saved with :func:`convexagg.io.save`: the
model, its feature names, which of them are categories, the target's name, the
id columns and the other columns ``fit`` left out. :func:`unbundle` reads it
back, or a model saved from Python, checking what a crafted file could hold.
"""

from __future__ import annotations

from typing import NamedTuple

__all__ = ["BUNDLE_FORMAT", "Kinds", "make_bundle", "unbundle"]


# the bundle `convexagg fit` saves: the model plus what predict needs to read a CSV;
# /1 has no "ids" and "ignored", /1 and /2 no "preprocess" and "categorical" (all
# features numbers, none missing): they are read too
BUNDLE_FORMAT = "convexagg-cli-model/3"
_BUNDLE_FORMATS = (BUNDLE_FORMAT, "convexagg-cli-model/2", "convexagg-cli-model/1")


def make_bundle(model, *, features, target, ids, ignored, preprocess, categorical):
    """The dictionary ``fit`` saves.

    Parameters
    ----------
    model : Pipeline
        The fitted model.
    features : list of str
        Its feature columns, in training order.
    target : str
        The target column.
    ids : list of str
        The ``--id`` columns (``predict`` copies them).
    ignored : list of str
        The other columns left out (``predict`` ignores them).
    preprocess : bool
        Whether the model's first step encodes and imputes (``predict`` reads
        missing values then).
    categorical : list of str
        The features read as text.

    Returns
    -------
    bundle : dict
        Of format :data:`BUNDLE_FORMAT`.
    """
    return {
        "format": BUNDLE_FORMAT,
        "model": model,
        "features": features,
        "target": target,
        "ids": ids,
        "ignored": ignored,
        "preprocess": preprocess,
        "categorical": categorical,
    }


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


class Kinds(NamedTuple):
    """How ``predict`` reads a model's feature columns."""

    categorical: list  # read as text, missing values as NaN
    missing: bool  # numbers may be missing (NaN)
    inferred: bool  # categorical is what the file holds, not what the model says


def unbundle(obj, path):
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
        kinds = Kinds(categorical, preprocess, inferred=False)
    else:  # a model saved from Python: its feature names, if it was fitted on a DataFrame
        model, target, ids, ignored, kinds = obj, None, [], [], None
        names = getattr(obj, "feature_names_in_", None)
        features = None if names is None else [str(n) for n in names]
    _check_model(model, path, features)
    return model, features, target, ids, ignored, kinds
