"""Numeric tables and CPU tensors trained by the batched logistic-regression binaries
(:mod:`convexagg.batched_logistic`), as the learners' own fits would leave them.

References: the same data as a NumPy array (the probabilities bit for bit), the
per-binary path (:func:`~convexagg.batched_logistic.per_binary_path`: scikit-learn's own
``fit`` on the table's rows, solved to ``tol=1e-10``) for every fitted attribute, and
scikit-learn's own feature-name checks at predict time, raised or warned as on the
per-binary path.
"""

from __future__ import annotations

import warnings
from unittest import mock

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.datasets import load_wine
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

import convexagg.batched_logistic as batched
import convexagg.binary as binary
import convexagg.out_of_fold as out_of_fold
from convexagg import ConvexAggregationClassifier
from convexagg.batched_logistic import batched_columns, per_binary_path
from convexagg.binary import fit_binaries
from convexagg.codes import make_code
from helpers import assert_fitted_like, binary_parts

CODE = make_code("ovo+ovr", 3)
M = CODE.shape[1]
# scikit-learn's Newton solver to its optimum: the per-binary path's reference fits
TIGHT = dict(solver="newton-cholesky", tol=1e-10, max_iter=1000)


@pytest.fixture(scope="module")
def wine():
    """Wine as a table of float64, int64 and bool columns (scikit-learn reads it as one
    float64 array), features of very different scales."""
    frame, y = load_wine(return_X_y=True, as_frame=True)
    frame = frame.astype({"magnesium": np.int64, "proline": np.int64})
    frame = frame.assign(strong=frame["alcohol"] > 13.0)
    return frame, y.to_numpy()


def _polars(frame):
    pl = pytest.importorskip("polars")
    return pl.DataFrame({name: frame[name].to_numpy() for name in frame.columns})


def _torch(frame):
    torch = pytest.importorskip("torch")
    return torch.asarray(frame.to_numpy(dtype=np.float64))


CONTAINERS = {"pandas": lambda frame: frame, "polars": _polars, "torch": _torch}


def _only_batched():
    """No binary fitted by its learner's own ``fit``."""
    return (
        mock.patch.object(binary, "fit_binary", side_effect=AssertionError),
        mock.patch.object(out_of_fold, "fit_binary", side_effect=AssertionError),
    )


@pytest.mark.parametrize("container", sorted(CONTAINERS))
def test_tables_and_tensors_take_the_batch_and_give_the_arrays_model(wine, container):
    """The default classifier on a numeric table (a CPU tensor without dispatch): its
    binaries from the batch, its probabilities those of the same data as an array."""
    frame, y = wine
    X = CONTAINERS[container](frame)
    array = frame.to_numpy(dtype=np.float64)
    reference = ConvexAggregationClassifier().fit(array, y)
    by_fit, by_oof = _only_batched()
    solve = mock.patch.object(batched, "_solve", wraps=batched._solve)
    with by_fit, by_oof, solve as solved, warnings.catch_warnings():
        warnings.simplefilter("error")  # no feature-name warning on the table's rows
        clf = ConvexAggregationClassifier().fit(X, y)
        proba = clf.predict_proba(X)
    assert solved.called
    np.testing.assert_array_equal(proba, reference.predict_proba(array))
    named = container != "torch"
    for members in clf.estimators_:
        for est in members:
            scaler, model = binary_parts(est)
            assert hasattr(scaler, "feature_names_in_") is named
            assert not hasattr(model, "feature_names_in_")  # it sees the scaler's array
            if named:
                np.testing.assert_array_equal(scaler.feature_names_in_, frame.columns)


def _fitted_attributes_match(mine, theirs):
    assert_fitted_like(mine, theirs)
    for a, b in zip(binary_parts(mine), binary_parts(theirs)):
        if b is None:
            continue
        if hasattr(b, "feature_names_in_"):
            np.testing.assert_array_equal(a.feature_names_in_, b.feature_names_in_)
            assert a.feature_names_in_ is not b.feature_names_in_
        assert a.n_features_in_ == b.n_features_in_
        if isinstance(b, StandardScaler):
            np.testing.assert_allclose(a.mean_, b.mean_, rtol=1e-12)
            np.testing.assert_allclose(a.var_, b.var_, rtol=1e-11)
            np.testing.assert_allclose(a.scale_, b.scale_, rtol=1e-11)
            assert a.n_samples_seen_ == b.n_samples_seen_
        else:
            np.testing.assert_allclose(a.coef_, b.coef_, rtol=1e-7, atol=1e-9)
            np.testing.assert_allclose(a.intercept_, b.intercept_, rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize(
    "learner",
    [make_pipeline(StandardScaler(), LogisticRegression(**TIGHT)), LogisticRegression(**TIGHT)],
    ids=["scaled", "alone"],
)
@pytest.mark.parametrize("container", ["pandas", "pandas numeric categories", "polars float32"])
def test_the_binaries_are_those_of_the_per_binary_path(wine, learner, container):
    """Every attribute the learners' own fits on the table's rows set, ``feature_names_in_``
    on the step that sees the table (the scaler, or the model alone). scikit-learn reads
    a category column of numbers as those numbers, and converts a polars float32 table to
    float64 (it keeps a pandas one's float32, which keeps the per-binary path)."""
    frame, y = wine
    if container == "pandas numeric categories":
        frame = frame.astype({"magnesium": "category"})
    elif container == "polars float32":
        frame = frame.astype({"alcohol": np.float32, "ash": np.float32})
        frame = _polars(frame)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        by_fit, by_oof = _only_batched()
        with by_fit, by_oof:
            estimators = fit_binaries(learner, frame, y, CODE)
        with per_binary_path():
            expected = fit_binaries(learner, frame, y, CODE)
    names = np.asarray(frame.columns, dtype=object)
    for est, ref in zip(estimators, expected):
        _fitted_attributes_match(est, ref)
        first = binary_parts(est)[0] or binary_parts(est)[1]  # the step that sees the table
        np.testing.assert_array_equal(first.feature_names_in_, names)
        assert binary_parts(est)[1].n_iter_[0] < 20  # Newton's iterations, not scikit-learn's


def _with_nan(frame):
    return frame.assign(ash=frame["ash"].where(frame.index % 7 != 0))


OTHER_TABLES = {
    # what each table's fit by the default learner raises (None: it fits)
    "float32": (lambda frame: frame.astype(np.float32), None),
    "strings": (lambda frame: frame.assign(region="east"), "could not convert string"),
    "categories": (
        lambda frame: frame.assign(region=pd.Categorical(["east", "west"] * 89)),
        "could not convert string|Cannot cast str",  # pandas' message for categories
    ),
    "NaN": (_with_nan, "Input X contains NaN"),
    "missing integers": (
        lambda frame: frame.assign(n=pd.array([None] + [1] * 177, dtype="Int64")),
        "Input X contains NaN",
    ),
}


@pytest.mark.parametrize("table", sorted(OTHER_TABLES))
def test_other_tables_keep_the_per_binary_path(wine, table):
    """Tables the learners fit otherwise (float32) or refuse (strings, categories, missing
    values): the learners' own fits, their own errors."""
    frame, y = wine
    make, error = OTHER_TABLES[table]
    X = make(frame)
    learners = [make_pipeline(StandardScaler(), LogisticRegression())] * M
    assert batched_columns(learners, X, [{}] * M) is None
    assert batched_columns([LogisticRegression()] * M, X, [{}] * M) is None
    clf = ConvexAggregationClassifier()
    with mock.patch.object(batched, "_solve", side_effect=AssertionError):
        if error is None:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # lbfgs in float32
                clf.fit(X, y)
            assert clf.estimators_[0][0][-1].coef_.dtype == np.float32
        else:
            with pytest.raises(ValueError, match=error):
                clf.fit(X, y)


def _outcome(method, X):
    """What ``method(X)`` raises, or the warnings it gives and its result."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = method(X)
        except Exception as error:  # noqa: BLE001 - the outcome compared
            return type(error), str(error)
    return [(w.category, str(w.message)) for w in caught], result


def test_feature_names_are_checked_as_on_the_per_binary_path(wine):
    """The same, renamed, reordered and unnamed columns at predict time: the estimator
    and each of its binaries raise or warn as those of the per-binary path do."""
    frame, y = wine
    clf = ConvexAggregationClassifier(make_pipeline(StandardScaler(), LogisticRegression(**TIGHT)))
    with mock.patch.object(batched, "_solve", wraps=batched._solve) as solved:
        clf.fit(frame, y)
        batched_solves = solved.call_count
        with per_binary_path():
            ref = clone(clf).fit(frame, y)
    assert batched_solves > 0 and solved.call_count == batched_solves
    variants = {
        "same": frame,
        "renamed": frame.rename(columns={"ash": "ashes"}),
        "reordered": frame[frame.columns[::-1]],
        "unnamed": frame.to_numpy(dtype=np.float64),
    }
    outcomes = {}
    for name, X in variants.items():
        for a, b in [(clf, ref), (clf.estimators_[0][3], ref.estimators_[0][3])]:
            mine, theirs = _outcome(a.predict_proba, X), _outcome(b.predict_proba, X)
            assert mine[0] == theirs[0], name
            if not isinstance(mine[0], type):
                np.testing.assert_allclose(mine[1], theirs[1], atol=1e-6)
        outcomes[name] = _outcome(clf.predict_proba, X)
    assert outcomes["same"][0] == []
    assert outcomes["renamed"][0] is ValueError and "should match" in outcomes["renamed"][1]
    assert outcomes["reordered"][0] is ValueError and "same order" in outcomes["reordered"][1]
    unnamed = outcomes["unnamed"][0]
    assert unnamed and all("does not have valid feature names" in m for _, m in unnamed)
