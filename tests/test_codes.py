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
    ordinal,
    sparse_random,
    ternary_complete,
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


def _canonical_columns(code):
    """Each column times the sign of its first non-zero entry (R4's canonical form)."""
    return [tuple(c * c[np.flatnonzero(c)[0]]) for c in code.T]


@pytest.mark.parametrize("K", range(2, 8))
def test_ternary_complete_is_every_column_with_both_signs_once(K):
    code = ternary_complete(K)
    assert code.dtype == np.int8
    assert code.shape == (K, (3**K - 2 ** (K + 1) + 1) // 2)
    _valid(code)
    assert np.array_equal(check_code_matrix(code), code)
    canon = _canonical_columns(code)
    assert len(set(canon)) == len(canon)  # no column repeats another or its negation
    # independent oracle: all 3^K columns, kept if they have both signs, up to negation
    grid = np.array(np.meshgrid(*[[-1, 0, 1]] * K, indexing="ij")).reshape(K, -1)
    admissible = grid[:, (grid == 1).any(axis=0) & (grid == -1).any(axis=0)]
    assert set(canon) == set(_canonical_columns(admissible))
    # MATLAB's representative: the last non-zero entry of every column is +1
    last = [c[np.flatnonzero(c)[-1]] for c in code.T]
    assert set(last) == {1}
    # it holds the one-vs-one and the complete code, up to column signs
    assert set(_canonical_columns(one_vs_one(K))) <= set(canon)
    assert set(_canonical_columns(complete(K))) <= set(canon)


def test_ternary_complete_small_codes_by_hand():
    assert np.array_equal(ternary_complete(2), [[-1], [1]])
    expected = np.array(
        [
            [-1, 1, 0],
            [-1, -1, 1],
            [0, -1, 1],
            [1, -1, 1],
            [-1, 0, 1],
            [-1, 1, 1],
        ]
    ).T  # base-3 order, class 0 the least significant digit
    assert np.array_equal(ternary_complete(3), expected)


def test_ternary_complete_limit_names_the_columns_it_would_need():
    assert ternary_complete(10).shape == (10, 28501)
    with pytest.raises(ValueError, match=r"n_classes=11 would need .* = 86526 columns"):
        ternary_complete(11)
    with pytest.raises(ValueError, match="more than 10 classes"):
        make_code("ternary_complete", 12)


@pytest.mark.parametrize("K", range(2, 9))
def test_ordinal_thresholds(K):
    code = ordinal(K)
    assert code.dtype == np.int8 and code.shape == (K, K - 1)
    _valid(code)
    assert np.array_equal(check_code_matrix(code), code)
    for l in range(K - 1):
        assert (code[: l + 1, l] == -1).all() and (code[l + 1 :, l] == 1).all()
    assert len(set(_canonical_columns(code))) == K - 1
    # classes a < b are separated exactly by the thresholds between them
    for a in range(K):
        for b in range(a + 1, K):
            assert np.flatnonzero(code[a] != code[b]).tolist() == list(range(a, b))


def test_ordinal_matches_matlab_documentation_example():
    # designecoc's documented example: Coding = [class1VSOrd class1VSClass16
    # OrdVSClass16, [zeros(1, 10); designecoc(11, "ordinal"); zeros(1, 10)]], of
    # which the documentation prints the first 10 of 13 rows.
    shown = np.array(
        [
            [1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0],
            [-1, 0, 1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1],
            [-1, 0, 1, 1, -1, -1, -1, -1, -1, -1, -1, -1, -1],
            [-1, 0, 1, 1, 1, -1, -1, -1, -1, -1, -1, -1, -1],
            [-1, 0, 1, 1, 1, 1, -1, -1, -1, -1, -1, -1, -1],
            [-1, 0, 1, 1, 1, 1, 1, -1, -1, -1, -1, -1, -1],
            [-1, 0, 1, 1, 1, 1, 1, 1, -1, -1, -1, -1, -1],
            [-1, 0, 1, 1, 1, 1, 1, 1, 1, -1, -1, -1, -1],
            [-1, 0, 1, 1, 1, 1, 1, 1, 1, 1, -1, -1, -1],
            [-1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, -1, -1],
        ]
    )
    first = np.r_[1, -np.ones(11), 0]
    second = np.r_[1, np.zeros(11), -1]
    third = np.r_[0, np.ones(11), -1]
    ordinal_block = np.vstack([np.zeros((1, 10)), ordinal(11), np.zeros((1, 10))])
    coding = np.column_stack([first, second, third, ordinal_block])
    assert coding.shape == (13, 13)
    assert np.array_equal(coding[:10], shown)
    assert np.array_equal(ordinal(2), [[-1], [1]])  # designecoc's answer for K = 2


def test_make_code_names():
    assert np.array_equal(make_code("ternary_complete", 4), ternary_complete(4))
    assert np.array_equal(make_code("ordinal", 5), ordinal(5))
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
