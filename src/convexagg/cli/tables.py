"""How ``convexagg fit`` and ``predict`` read a CSV file's columns.

Which columns are features, ids and left out (``--id``, ``--drop``,
``--features``), which features are numbers and which categories (the column
kinds), the preprocessing step the kinds call for, and the features as the model
takes them; for ``predict``, the columns copied to its output and those of a
model that records no names.
"""

from __future__ import annotations

import warnings

__all__ = [
    "by_position",
    "check_categories",
    "columns_to_copy",
    "feature_frame",
    "feature_kinds",
    "float_matrix",
    "preprocessing",
    "select_columns",
]


def _flat(groups):
    """The names of a repeatable comma-separated option, in order."""
    return [name for group in groups or () for name in group]


def float_matrix(frame, columns):
    """``frame[columns]`` as a C-ordered float64 array: the order of arrays built from
    rows (pandas gives Fortran order; BLAS sums in another order, results differ in
    the last digit)."""
    import numpy as np

    return np.ascontiguousarray(frame[columns].to_numpy(dtype=np.float64))


def feature_frame(frame, features, categorical):
    """The feature columns as a DataFrame, the numbers of an all-numeric table as one
    C-ordered float64 block (:func:`float_matrix`), text columns as they were read."""
    import pandas as pd

    if categorical:
        return frame[features]
    return pd.DataFrame(float_matrix(frame, features), columns=features)


def preprocessing(preprocess, numeric, categorical):
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


def select_columns(args, table):
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


def feature_kinds(args, table, features):
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


def check_categories(args, frame, categorical):
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


def columns_to_copy(args, columns, bundle_ids, features, skipped):
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


def by_position(args, model, columns):
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
