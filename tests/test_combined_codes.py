"""Several decompositions in one code (``code="ovo+ovr"``)."""

import numpy as np
import pytest
from sklearn.datasets import load_iris, load_wine
from sklearn.preprocessing import scale

from convexagg import ConvexAggregationClassifier, ConvexDecoder
from convexagg.cli import build_parser
from convexagg.codes import (
    check_code_name,
    complete,
    concatenate_codes,
    make_code,
    one_vs_one,
    one_vs_rest,
    sparse_random,
)
from convexagg.solvers import ProjectedNewton


@pytest.mark.parametrize("K", [3, 5])
def test_ovo_plus_ovr_is_the_concatenation(K):
    code = make_code("ovo+ovr", K)
    np.testing.assert_array_equal(code, np.hstack([one_vs_one(K), one_vs_rest(K)]))
    assert code.dtype == np.int8
    np.testing.assert_array_equal(
        make_code("ovr+ovo", K), np.hstack([one_vs_rest(K), one_vs_one(K)])
    )


def test_repeated_columns_are_dropped_up_to_sign():
    # two classes: one-vs-one and one-vs-rest are the same single problem
    ovr2 = one_vs_rest(2)
    np.testing.assert_array_equal(make_code("ovo+ovr", 2), one_vs_one(2))
    assert ovr2.shape[1] >= 1
    ovo = one_vs_one(4)
    # a negated, reordered copy adds nothing; the first occurrences stay in place
    np.testing.assert_array_equal(concatenate_codes(ovo, -ovo[:, ::-1]), ovo)
    # the complete code of 3 classes is one-vs-rest up to signs and order
    np.testing.assert_array_equal(concatenate_codes(one_vs_rest(3), complete(3)), one_vs_rest(3))
    assert make_code("ovr+complete", 3).shape == (3, 3)
    assert make_code("ovo+complete", 3).shape == (3, 6)


def test_random_parts_are_seeded_by_random_state():
    a = make_code("ovo+sparse_random", 6, random_state=0)
    b = make_code("ovo+sparse_random", 6, random_state=0)
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(
        a, concatenate_codes(one_vs_one(6), sparse_random(6, random_state=0))
    )


@pytest.mark.parametrize("name", ["ovo+ovx", "ovo+", "ovo+ovo"])
def test_bad_names_are_refused(name):
    with pytest.raises(ValueError, match="code"):
        make_code(name, 4)
    with pytest.raises(ValueError, match="code"):
        check_code_name(name)


def test_the_cli_takes_combined_names(capsys):
    parser = build_parser()
    args = parser.parse_args(
        ["fit", "x.csv", "--target", "y", "--out", "m.skops", "--code", "ovo+ovr"]
    )
    assert args.code == "ovo+ovr"
    with pytest.raises(SystemExit):
        parser.parse_args(["fit", "x.csv", "--target", "y", "--out", "m.skops", "--code", "ovo+x"])
    err = capsys.readouterr().err
    assert "invalid choice: 'ovo+x'" in err and "'ovr', 'ovo'" in err


def test_the_aggregation_weighs_both_decompositions():
    X, y = load_wine(return_X_y=True)
    X = scale(X)
    clf = ConvexAggregationClassifier(code="ovo+ovr", cv="in_sample").fit(X, y)
    K = 3
    assert clf.code_matrix_.shape == (K, K * (K - 1) // 2 + K)
    assert clf.weights_.shape == (clf.code_matrix_.shape[1],)
    # the combined model contains each part's (the other weights at 0): on the
    # same outputs its optimum is no worse than either part's
    Q = clf.predict_binary_proba(X)
    solver = ProjectedNewton(tol=1e-10)
    both = ConvexDecoder(solver=solver).fit(Q, np.searchsorted(clf.classes_, y), clf.code_matrix_)
    n_ovo = K * (K - 1) // 2
    parts = [slice(0, n_ovo), slice(n_ovo, None)]
    y_idx = np.searchsorted(clf.classes_, y)
    for part in parts:
        alone = ConvexDecoder(solver=solver).fit(Q[:, part], y_idx, clf.code_matrix_[:, part])
        assert both.objective_ <= alone.objective_ + 1e-9


@pytest.mark.parametrize("entry_weight_shrinkage", [None, 0.1])
def test_combined_code_with_intercepts_and_entry_weights(entry_weight_shrinkage):
    X, y = load_iris(return_X_y=True)
    clf = ConvexAggregationClassifier(
        code="ovo+ovr",
        fit_intercept=True,
        entry_weight_shrinkage=entry_weight_shrinkage,
        cv=3,
        random_state=0,
    ).fit(X, y)
    assert clf.decoder_.converged_
    assert np.any(clf.intercept_ != 0)
    U = clf.entry_weights_
    assert U.shape == clf.code_matrix_.shape and np.all(U[clf.code_matrix_ == 0] == 0)
    np.testing.assert_allclose(clf.predict_proba(X).sum(axis=1), 1.0)
