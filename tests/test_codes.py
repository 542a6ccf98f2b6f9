import math

import numpy as np
import pytest

from convexagg.codes import (
    check_code_matrix,
    complete,
    dense_random,
    make_code,
    min_codeword_distance,
    one_vs_one,
    one_vs_rest,
    sparse_random,
)


def _valid(code):
    """R1-R3 checked independently of check_code_matrix."""
    K, M = code.shape
    assert set(np.unique(code)) <= {-1, 0, 1}
    for l in range(M):
        assert (code[:, l] == 1).any() and (code[:, l] == -1).any()
    for a in range(K):
        assert (code[a] != 0).any()
        for b in range(a + 1, K):
            assert (code[a] * code[b] == -1).any()


def test_one_vs_rest_and_one_vs_one_shapes():
    assert np.array_equal(one_vs_rest(3), [[1, -1, -1], [-1, 1, -1], [-1, -1, 1]])
    ovo = one_vs_one(4)
    assert ovo.shape == (4, 6)
    # lexicographic pairs (0,1),(0,2),(0,3),(1,2),(1,3),(2,3)
    assert np.array_equal(ovo[:, 3], [0, 1, -1, 0])
    assert (np.abs(ovo).sum(axis=0) == 2).all()


def test_complete_matches_spec_oracle_for_k4():
    expected = np.array(
        [
            [1, -1, -1, -1],
            [1, -1, -1, 1],
            [1, -1, 1, -1],
            [1, -1, 1, 1],
            [1, 1, -1, -1],
            [1, 1, -1, 1],
            [1, 1, 1, -1],
        ]
    ).T
    assert np.array_equal(complete(4), expected)


@pytest.mark.parametrize("K", range(3, 9))
def test_deterministic_codes_valid_with_known_distances(K):
    for code in (one_vs_rest(K), one_vs_one(K), complete(K)):
        _valid(code)
        assert np.array_equal(check_code_matrix(code), code)
    assert min_codeword_distance(one_vs_rest(K)) == 2
    assert min_codeword_distance(one_vs_one(K)) == (K - 1) + (K - 2) * (K - 3) / 4
    assert min_codeword_distance(complete(K)) == 2 ** (K - 2)
    full = complete(K)
    assert full.shape == (K, 2 ** (K - 1) - 1)
    # each bipartition once, up to complement
    canon = {tuple(c * c[0]) for c in full.T}
    assert len(canon) == full.shape[1]


@pytest.mark.parametrize("K", [8, 10, 14, 26])
def test_sparse_random(K):
    code = sparse_random(K, n_candidates=200, random_state=K)
    assert code.shape == (K, math.ceil(15 * math.log2(K)))
    _valid(code)
    assert 0.4 <= (code == 0).mean() <= 0.6
    canon = {tuple(c * c[np.flatnonzero(c)[0]]) for c in code.T}
    assert len(canon) == code.shape[1]  # R4: no repeated or negated column
    again = sparse_random(K, n_candidates=200, random_state=K)
    assert np.array_equal(code, again)


def test_sparse_random_more_candidates_never_worse():
    few = sparse_random(8, n_candidates=50, random_state=3)
    many = sparse_random(8, n_candidates=400, random_state=3)
    assert min_codeword_distance(many) >= min_codeword_distance(few)


def test_sparse_random_rejects_impossible_request():
    with pytest.raises(ValueError, match="at most 6 distinct columns"):
        sparse_random(3)


def test_dense_random():
    code = dense_random(10, n_candidates=100, random_state=0)
    assert code.shape == (10, math.ceil(10 * math.log2(10)))
    assert (code != 0).all()
    _valid(code)
    # too few classes for that many distinct columns: the complete code
    assert np.array_equal(dense_random(4), complete(4))


def test_make_code_names():
    assert np.array_equal(make_code("ovr", 4), one_vs_rest(4))
    assert np.array_equal(make_code("ovo", 4), one_vs_one(4))
    assert np.array_equal(make_code("ecoc", 7), complete(7))
    ecoc8 = make_code("ecoc", 8, random_state=1)
    assert ecoc8.shape == (8, 45)
    assert np.array_equal(ecoc8, make_code("ecoc", 8, random_state=1))
    with pytest.raises(ValueError, match="code must be one of"):
        make_code("one-vs-all", 4)


@pytest.mark.parametrize(
    "code, n_classes, message",
    [
        ([[1, -1], [-1, 1]], 3, "code has 2 rows but there are 3 classes"),
        ([1, -1, 0], None, "2-D array"),
        ([[1, 2], [-1, 1], [0, -1]], None, "found 2 at row 0, column 1"),
        ([[1, 1], [-1, 1], [0, 1]], None, "column 1 has no -1 class"),
        ([[-1, 1], [-1, 1], [-1, -1]], None, "column 0 has no \\+1 class"),
        ([[1, 1], [-1, -1], [0, 0]], None, "class 2 is used by no column"),
        ([[1, 1], [-1, -1], [-1, -1]], None, "classes 1 and 2 have identical codewords"),
        ([[1, 1], [-1, 0], [0, -1]], None, "puts classes 1 and 2 on opposite sides"),
    ],
)
def test_check_code_matrix_errors(code, n_classes, message):
    with pytest.raises(ValueError, match=message):
        check_code_matrix(code, n_classes)
