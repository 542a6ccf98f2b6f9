"""Predictions do not depend on how the rows are batched.

The default's binaries (a ``StandardScaler`` and a ``LogisticRegression``, trained
together by :mod:`convexagg.batched_logistic`) predict through their stacked
log-odds (:class:`~convexagg.linear_outputs.LinearLogOdds`), which the convex decoder
reads in blocks of rows (:func:`~convexagg.aggregation.output_discrepancies`). On
pixel data some features are zero on both classes of a one-vs-one column and not on
the others: a binary whose scaler took such a feature for a varying one (a scale of
about ``1e-19``) has stacked coefficients near ``1e20``, and log-odds that cancel to
a few units and change with the rows' position in a block.

References: the same rows predicted at once, in blocks of several sizes (across the
decoder's internal blocks, at their real size and at a small one) and row by row;
and each binary's own ``predict_proba`` (its pipeline, one feature at a time)
decoded by the decoder.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import logsumexp
from sklearn.datasets import load_digits

import convexagg.aggregation.discrepancy as discrepancy
from convexagg import ConvexAggregationClassifier
from convexagg.solvers import ProjectedNewton

METHODS = ("predict_proba", "predict_log_proba", "decision_function", "predict")


@pytest.fixture(scope="module")
def digits_015():
    """The digits 0, 1 and 5 (pixels scaled into [0, 1]): several pixels are zero on
    both classes of a one-vs-one column and vary on the third class."""
    X, y = load_digits(return_X_y=True)
    rows = np.isin(y, [0, 1, 5])
    return X[rows] / 16.0, y[rows]


@pytest.fixture(scope="module", params=["float64", "float32"])
def model(request, digits_015):
    """The default model (its five fold members), decoding in ``dtype``."""
    X, y = digits_015
    solver = ProjectedNewton(dtype=request.param)
    return ConvexAggregationClassifier(solver=solver, random_state=0).fit(X, y)


def _in_blocks(clf, method, X, size):
    parts = [getattr(clf, method)(X[start : start + size]) for start in range(0, len(X), size)]
    return np.concatenate(parts)


def _check_blocks(clf, X, sizes, methods=METHODS):
    for method in methods:
        whole = getattr(clf, method)(X)
        for size in sizes:
            blocks = _in_blocks(clf, method, X, size)
            if method == "predict":
                np.testing.assert_array_equal(blocks, whole, err_msg=f"{method}, {size}")
            else:
                np.testing.assert_allclose(
                    blocks, whole, rtol=0, atol=1e-12, err_msg=f"{method}, {size}"
                )


def test_blocks_of_rows_predict_as_all_rows_at_once(model, digits_015, monkeypatch):
    """Internal blocks of 11 rows (the decoder's chunk size made small): every
    request crosses several of them, at different offsets."""
    X, _ = digits_015
    M = model.code_matrix_.shape[1]
    monkeypatch.setattr(discrepancy, "_CHUNK_BYTES", 11 * M * 8)
    _check_blocks(model, X[:60], sizes=(1, 7, 12))


def test_more_rows_than_one_block_predict_as_in_pieces(model, digits_015):
    """More rows than one of the decoder's blocks at its real size, predicted at once
    and in pieces (200, 595 and 596 rows, and a block and one more row): the two decodes
    (``decision_function`` is ``predict_log_proba`` here, ``predict`` the argmax of
    ``predict_proba``)."""
    X, _ = digits_015
    M = model.code_matrix_.shape[1]
    step = discrepancy._CHUNK_BYTES // (M * 8)  # rows of float64 log-odds per block
    X = np.tile(X, (-(-(step + 300) // len(X)), 1))
    assert len(X) > step
    methods = ("predict_proba", "predict_log_proba")
    _check_blocks(model, X, sizes=(200, 595, 596, step + 1), methods=methods)


def test_log_odds_path_decodes_the_binaries_own_outputs(model, digits_015):
    """The estimator's probabilities are the decoder's on each binary's own
    ``predict_proba`` (the pipeline scales each feature itself), averaged over the
    fold members in probability: the stacked log-odds lose nothing to cancellation."""
    X, _ = digits_015
    decoder = model.decoder_
    logs = []
    for member in model.estimators_:
        Q = np.column_stack([est.predict_proba(X)[:, 1] for est in member])
        logs.append(decoder.predict_log_proba(Q))
    reference = np.exp(logsumexp(np.stack(logs), axis=0) - np.log(len(logs)))
    atol = 1e-9 if decoder.solver_.storage_dtype(None) == np.float64 else 1e-5
    np.testing.assert_allclose(model.predict_proba(X), reference, rtol=0, atol=atol)
