"""Code matrices: how a multiclass problem is split into binary problems.

Convention (used everywhere in convexagg)
----------------------------------------
A code matrix has shape ``(n_classes, n_classifiers)``: row ``k`` is the
*codeword* of class ``k``, column ``l`` defines binary problem ``l``. Entries are

* ``+1``: class ``k`` is on the positive side of problem ``l``,
* ``-1``: class ``k`` is on the negative side,
* ``0``: class ``k`` is not used by problem ``l`` ("don't care").

This is the layout of scikit-learn's ``OutputCodeClassifier.code_book_`` and of
Allwein, Schapire & Singer (2000). The paper's ``C`` (``M x K``, entries
``1 / 0 / triangle``) is its transpose with ``0 -> -1`` and ``triangle -> 0``.

Validity rules enforced by :func:`check_code_matrix` (numbered as in the
baselines specification): R1 every column has a ``+1`` and a ``-1`` class, R2
every class is used by some column, R3 every pair of classes is separated by
some column (so, in particular, no two codewords are identical). Random codes
also satisfy R4: no column repeats another or its negation.

Several decompositions in one code
----------------------------------
Names joined by ``+`` (``make_code("ovo+ovr", K)``) concatenate the named codes
column-wise (:func:`concatenate_codes`), so that one aggregation weighs the
outputs of several decompositions. A column equal to an earlier one or to its
negation is dropped: it is the same binary problem (a negated column swaps the
sides, and the cross-entropy of ``1 - q`` against the swapped side is the same
loss), so its classifier would repeat an earlier one's outputs at twice the
training cost and its weight would only share that of the first copy. With
two classes ``"ovo"`` and ``"ovr"`` are the same single problem.

MATLAB (``designecoc``, ``fitcecoc``'s ``Coding``) uses the same layout and
signs: a ``K x L`` coding matrix, one row per class, ``+1`` for the positive
class of a binary learner, ``-1`` for the negative class, ``0`` for ignored.
Its designs map to ours as ``onevsall`` -> ``"ovr"``, ``onevsone`` ->
``"ovo"``, ``binarycomplete`` -> ``"complete"``, ``ternarycomplete`` ->
``"ternary_complete"``, ``ordinal`` -> ``"ordinal"``, ``sparserandom`` /
``denserandom`` -> ``"sparse_random"`` / ``"dense_random"``. The deterministic
designs have the same columns up to negation, but their order and signs can
differ, so to decode the outputs of binaries trained in MATLAB pass its
``Mdl.CodingMatrix`` as an array, not a name.
"""

from __future__ import annotations

import math
from itertools import combinations
from numbers import Integral

import numpy as np

__all__ = [
    "CODE_NAMES",
    "check_code_matrix",
    "check_code_name",
    "concatenate_codes",
    "complete",
    "dense_random",
    "make_code",
    "make_code_parts",
    "min_codeword_distance",
    "one_vs_one",
    "one_vs_rest",
    "ordinal",
    "sparse_random",
    "ternary_complete",
]

CODE_NAMES = (
    "ovr",
    "ovo",
    "ecoc",
    "complete",
    "ternary_complete",
    "ordinal",
    "sparse_random",
    "dense_random",
)


# The largest K for which ternary_complete builds its (3^K - 2^(K+1) + 1)/2 columns:
# 28,501 at K = 10, the scale of complete's limit (32,767 columns at K = 16); K = 11
# would need 86,526 binary classifiers.
TERNARY_COMPLETE_MAX_CLASSES = 10


def _check_n_classes(n_classes, minimum=2):
    if not isinstance(n_classes, Integral) or isinstance(n_classes, bool) or n_classes < minimum:
        raise ValueError(f"n_classes must be an integer >= {minimum}, got {n_classes!r}.")
    return int(n_classes)


def one_vs_rest(n_classes):
    """One-vs-rest (OVA) code: column ``k`` puts class ``k`` against all others.

    Parameters
    ----------
    n_classes : int
        Number of classes ``K``, at least 2.

    Returns
    -------
    code : ndarray of shape (n_classes, n_classes), dtype int8
        ``+1`` on the diagonal and ``-1`` elsewhere.
    """
    n_classes = _check_n_classes(n_classes)
    return 2 * np.eye(n_classes, dtype=np.int8) - 1


def one_vs_one(n_classes):
    """Build the all-pairs (one-vs-one) code: one column per pair ``a < b``.

    Columns are in lexicographic order ``(0,1), (0,2), ..., (K-2,K-1)`` (LIBSVM's
    and scikit-learn's order); class ``a`` is positive, ``b`` negative.

    Parameters
    ----------
    n_classes : int
        Number of classes ``K``, at least 2.

    Returns
    -------
    code : ndarray of shape (n_classes, n_classes * (n_classes - 1) / 2), dtype int8
        The one-vs-one code.
    """
    n_classes = _check_n_classes(n_classes)
    pairs = list(combinations(range(n_classes), 2))
    code = np.zeros((n_classes, len(pairs)), dtype=np.int8)
    for col, (a, b) in enumerate(pairs):
        code[a, col] = 1
        code[b, col] = -1
    return code


def complete(n_classes):
    """Complete (exhaustive) code: all ``2^(K-1) - 1`` bipartitions, no zeros.

    Column ``j`` (0-based) is the binary expansion of ``j`` over classes
    ``1..K-1`` (most significant bit = class 1; bit 0 -> -1, bit 1 -> +1), class 0
    always ``+1``; the all-``+1`` pattern is left out. Limited to ``K <= 16``
    (32,767 columns).

    Parameters
    ----------
    n_classes : int
        Number of classes ``K``, at least 2.

    Returns
    -------
    code : ndarray of shape (n_classes, 2**(n_classes - 1) - 1), dtype int8
        The complete code.
    """
    n_classes = _check_n_classes(n_classes)
    if n_classes > 16:
        raise ValueError(
            f"complete code for n_classes={n_classes} would need 2^{n_classes - 1}-1 "
            "columns; use 'sparse_random' or 'dense_random' for more than 16 classes."
        )
    n_cols = 2 ** (n_classes - 1) - 1
    j = np.arange(n_cols)
    code = np.ones((n_classes, n_cols), dtype=np.int8)
    for k in range(1, n_classes):
        bit = (j >> (n_classes - 1 - k)) & 1
        code[k] = np.where(bit == 1, 1, -1)
    return code


def ternary_complete(n_classes):
    """Ternary complete code: every column of ``-1 / 0 / +1`` with both signs, once.

    MATLAB's ``"ternarycomplete"`` design: all assignments of the classes to
    the positive side, the negative side or neither in which at least one class
    is positive and one negative, each column counted once up to negation --
    ``(3^K - 2^(K+1) + 1) / 2`` columns (6 for ``K = 3``, 25 for ``K = 4``,
    28,501 for ``K = 10``). It contains the one-vs-one and the complete code
    (up to the signs of their columns). Limited to
    ``K <= TERNARY_COMPLETE_MAX_CLASSES`` (10); MathWorks advises it instead of
    a sparse random code for ``K <= 4``.

    Of a column and its negation the one whose last non-zero entry (highest
    class index) is ``+1`` is kept, and columns are in the order of the base-3
    number with digits ``-1 / 0 / +1 -> 0 / 1 / 2`` and class 0 as the least
    significant digit. MathWorks documents the set of columns, not their order;
    this is, to our reading, the order ``designecoc`` returns, but it has not
    been checked against MATLAB itself. For ``K = 2`` the code is
    ``[[-1], [+1]]``, as ``designecoc`` returns for every design.

    Parameters
    ----------
    n_classes : int
        Number of classes ``K``, at least 2.

    Returns
    -------
    code : ndarray of shape (n_classes, (3**n_classes - 2**(n_classes + 1) + 1) / 2), dtype int8
        The ternary complete code.

    References
    ----------
    MathWorks. Statistics and Machine Learning Toolbox documentation:
    ``designecoc`` (https://www.mathworks.com/help/stats/designecoc.html) and
    the ``Coding`` argument of ``fitcecoc``
    (https://www.mathworks.com/help/stats/fitcecoc.html).
    S. Escalera, O. Pujol, P. Radeva. Separability of ternary codes for sparse
    designs of error-correcting output codes. Pattern Recognition Letters
    30(3):285-297, 2009.
    """
    n_classes = _check_n_classes(n_classes)
    if n_classes > TERNARY_COMPLETE_MAX_CLASSES:
        n_cols = _n_admissible_columns(n_classes, sparse=True)
        raise ValueError(
            f"ternary_complete code for n_classes={n_classes} would need "
            f"(3^{n_classes} - 2^{n_classes + 1} + 1)/2 = {n_cols} columns; use "
            f"'sparse_random' for more than {TERNARY_COMPLETE_MAX_CLASSES} classes."
        )
    # column j <-> the base-3 number j, class k's entry its digit k minus 1; negation
    # maps j to 3^K - 1 - j, so the upper half holds one of each pair (the all-zero
    # column is the middle) -- the half whose last non-zero digit is +1
    j = np.arange((3**n_classes - 1) // 2 + 1, 3**n_classes)
    code = (j // 3 ** np.arange(n_classes)[:, None]) % 3 - 1
    both_signs = (code == 1).any(axis=0) & (code == -1).any(axis=0)
    return code[:, both_signs].astype(np.int8)


def ordinal(n_classes):
    """Ordinal code: ``K - 1`` columns, each a threshold between consecutive classes.

    MATLAB's ``"ordinal"`` design: column ``l`` (0-based) puts classes ``0..l``
    on the negative side and ``l+1..K-1`` on the positive side, so the first
    binary problem is class 0 against the rest and the last the last class
    against the rest; with classes in their natural order each column asks "is
    the class above threshold ``l``?" (Frank & Hall's decomposition of ordinal
    regression). Class ``k``'s codeword is ``+1`` in columns ``l < k`` and
    ``-1`` in columns ``l >= k``; there are no zeros, and classes ``a < b`` are
    separated by columns ``a..b-1``.

    The layout and the signs are MATLAB's unchanged: ``designecoc(11,
    "ordinal")``, shown in its documentation as rows 2 to 12 and columns 4 to
    13 of the arrhythmia example's coding matrix, equals ``ordinal(11)``. Rows
    follow ``classes_`` (sorted labels), so the labels must sort in their
    ordinal order (e.g. integers ``0..K-1``, not ``"high" < "low"``).

    Parameters
    ----------
    n_classes : int
        Number of classes ``K``, at least 2.

    Returns
    -------
    code : ndarray of shape (n_classes, n_classes - 1), dtype int8
        The ordinal code.

    References
    ----------
    MathWorks. Statistics and Machine Learning Toolbox documentation:
    ``designecoc`` (https://www.mathworks.com/help/stats/designecoc.html) and
    the ``Coding`` argument of ``fitcecoc``
    (https://www.mathworks.com/help/stats/fitcecoc.html).
    E. Frank, M. Hall. A simple approach to ordinal classification. ECML 2001.
    """
    n_classes = _check_n_classes(n_classes)
    k = np.arange(n_classes)[:, None]
    return np.where(k > np.arange(n_classes - 1), 1, -1).astype(np.int8)


def min_codeword_distance(code):
    """Minimum Allwein distance between two codewords.

    ``Delta(u, v) = sum_l (1 - u_l v_l) / 2``: an agreeing non-zero position
    counts 0, a disagreeing one 1, a position with a zero 1/2. Used to rank random
    candidates, not to check validity (``Delta(u, u) > 0`` when ``u`` has zeros).

    Parameters
    ----------
    code : array-like of shape (n_classes, n_classifiers)
        A code matrix.

    Returns
    -------
    distance : float
        The smallest ``Delta`` over pairs of distinct classes.
    """
    code = np.asarray(code, dtype=np.float64)
    gram = code @ code.T
    np.fill_diagonal(gram, -np.inf)
    return (code.shape[1] - gram.max()) / 2.0


def _separation_counts(code):
    """``S[a, b]`` = number of columns putting ``a`` and ``b`` on opposite sides."""
    pos = (code == 1).astype(np.float64)
    neg = (code == -1).astype(np.float64)
    return pos @ neg.T + neg @ pos.T


def _random_code(n_classes, n_columns, probs, n_candidates, random_state, max_draws):
    """Best of ``n_candidates`` random codes by minimum codeword distance.

    Columns are drawn one at a time from ``{0, +1, -1}`` with probabilities
    ``probs`` and redrawn until they satisfy R1 (both signs) and R4 (not equal to
    an earlier column or its negation); a candidate violating R2 or R3 is
    discarded. One generator drives everything, so a seed gives one code.
    """
    # imported here: `convexagg fit --help` reads CODE_NAMES without loading scikit-learn
    from sklearn.utils import check_random_state

    rng = check_random_state(random_state)
    values = np.array([0, 1, -1], dtype=np.int8)
    # Canonical form for R4: the column times the sign of its first non-zero.
    best, best_rho = None, -np.inf
    for _ in range(n_candidates):
        cols, seen, draws = [], set(), 0
        # Draw columns in blocks; keep them in drawing order.
        while len(cols) < n_columns:
            block = values[rng.choice(3, size=(2 * n_columns, n_classes), p=probs)]
            draws += len(block)
            for z in block:
                if not ((z == 1).any() and (z == -1).any()):
                    continue
                first = z[np.flatnonzero(z)[0]]
                key = (z * first).tobytes()
                if key in seen:
                    continue
                seen.add(key)
                cols.append(z)
                if len(cols) == n_columns:
                    break
            if draws > max_draws:
                raise ValueError(
                    f"could not draw {n_columns} distinct admissible columns for "
                    f"n_classes={n_classes}; ask for fewer columns."
                )
        code = np.array(cols, dtype=np.int8).T
        if not (code != 0).any(axis=1).all():  # R2
            continue
        sep = _separation_counts(code)
        np.fill_diagonal(sep, 1)
        if not (sep > 0).all():  # R3
            continue
        rho = min_codeword_distance(code)
        if rho > best_rho:  # strict: the first best candidate wins
            best, best_rho = code, rho
    if best is None:
        raise ValueError(
            f"none of {n_candidates} random candidates for n_classes={n_classes} "
            "was a valid code; increase n_candidates."
        )
    return best


def _n_admissible_columns(n_classes, sparse):
    """Distinct columns (up to negation) with both signs."""
    if sparse:
        return (3**n_classes - 2 ** (n_classes + 1) + 1) // 2
    return 2 ** (n_classes - 1) - 1


def sparse_random(n_classes, n_columns=None, *, n_candidates=2000, random_state=None):
    """Sparse random code of Allwein, Schapire & Singer (2000).

    ``n_columns`` defaults to ``ceil(15 log2 K)``; each entry is ``0`` with
    probability 1/2 and ``+1`` / ``-1`` with probability 1/4 each. Of
    ``n_candidates`` valid random matrices the one with the largest minimum
    codeword distance is kept (the paper drew 20,000; 2,000 reach the same
    distance in practice and take a tenth of the time).

    Parameters
    ----------
    n_classes : int
        Number of classes ``K``, at least 2.
    n_columns : int, default=None
        Number of columns; ``ceil(15 log2 K)`` when None.
    n_candidates : int, default=2000
        Random codes drawn; the best by minimum codeword distance is kept.
    random_state : int, RandomState instance or None, default=None
        Seeds the draws; an int gives one code.

    Returns
    -------
    code : ndarray of shape (n_classes, n_columns), dtype int8
        A valid code: every column has both signs, no column repeats another or
        its negation, every pair of classes is separated.
    """
    n_classes = _check_n_classes(n_classes, minimum=2)
    if n_columns is None:
        n_columns = math.ceil(15 * math.log2(n_classes))
    if n_columns > _n_admissible_columns(n_classes, sparse=True):
        raise ValueError(
            f"a sparse random code for n_classes={n_classes} has at most "
            f"{_n_admissible_columns(n_classes, True)} distinct columns, "
            f"{n_columns} were asked for; use code='complete' for so few classes."
        )
    return _random_code(n_classes, n_columns, [0.5, 0.25, 0.25], n_candidates, random_state, 10**6)


def dense_random(n_classes, n_columns=None, *, n_candidates=2000, random_state=None):
    """Dense random code: ``ceil(10 log2 K)`` columns of ``+1`` / ``-1``.

    Candidate search as in :func:`sparse_random`. When more columns are asked for
    than distinct bipartitions exist (``K <= 5``), the complete code is returned.

    Parameters
    ----------
    n_classes : int
        Number of classes ``K``, at least 2.
    n_columns : int, default=None
        Number of columns; ``ceil(10 log2 K)`` when None.
    n_candidates : int, default=2000
        Random codes drawn; the best by minimum codeword distance is kept.
    random_state : int, RandomState instance or None, default=None
        Seeds the draws; an int gives one code.

    Returns
    -------
    code : ndarray of shape (n_classes, n_columns), dtype int8
        A valid code without zeros (the complete code when it has no more columns).
    """
    n_classes = _check_n_classes(n_classes, minimum=2)
    if n_columns is None:
        n_columns = math.ceil(10 * math.log2(n_classes))
    if n_columns >= _n_admissible_columns(n_classes, sparse=False):
        return complete(n_classes)
    return _random_code(n_classes, n_columns, [0.0, 0.5, 0.5], n_candidates, random_state, 10**6)


def check_code_matrix(code, n_classes=None):
    """Validate a code matrix and return it as an ``int8`` array.

    Parameters
    ----------
    code : array-like of shape (n_classes, n_classifiers)
        Entries in ``{-1, 0, +1}``.
    n_classes : int, default=None
        Expected number of rows (classes), if known.

    Returns
    -------
    code : ndarray of shape (n_classes, n_classifiers), dtype int8
        The validated code.

    Raises
    ------
    ValueError
        Naming the problem: wrong shape, entries outside ``{-1, 0, +1}``, a
        column without a ``+1`` or without a ``-1`` class, a class used by no
        column, identical codewords, or two classes that no column separates.
    """
    try:
        arr = np.asarray(code, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"code must be a numeric array of -1/0/+1 entries: {exc}") from None
    if arr.ndim != 2:
        raise ValueError(
            f"code must be a 2-D array of shape (n_classes, n_classifiers), got ndim={arr.ndim}."
        )
    if n_classes is not None and arr.shape[0] != n_classes:
        raise ValueError(
            f"code has {arr.shape[0]} rows but there are {n_classes} classes; "
            "the code matrix must have shape (n_classes, n_classifiers)."
        )
    if arr.shape[0] < 2 or arr.shape[1] < 1:
        raise ValueError(f"code needs at least 2 rows and 1 column, got shape {arr.shape}.")
    bad = ~np.isin(arr, (-1.0, 0.0, 1.0))
    if bad.any():
        r, c = np.argwhere(bad)[0]
        value = float(arr[r, c])  # short when exact, every digit otherwise (0.9999999)
        shown = f"{value:g}" if float(f"{value:g}") == value else repr(value)
        raise ValueError(f"code entries must be -1, 0 or +1; found {shown} at row {r}, column {c}.")
    code = arr.astype(np.int8)
    no_pos = ~(code == 1).any(axis=0)
    no_neg = ~(code == -1).any(axis=0)
    if (no_pos | no_neg).any():
        col = int(np.flatnonzero(no_pos | no_neg)[0])
        side = "+1" if no_pos[col] else "-1"
        raise ValueError(
            f"code column {col} has no {side} class; every binary problem needs "
            "a positive and a negative side."
        )
    unused = ~(code != 0).any(axis=1)
    if unused.any():
        raise ValueError(
            f"class {int(np.flatnonzero(unused)[0])} is used by no column of the code "
            "(its row is all zeros)."
        )
    sep = _separation_counts(code)
    np.fill_diagonal(sep, 1)
    if not (sep > 0).all():
        a, b = (int(i) for i in np.argwhere(sep == 0)[0])
        if np.array_equal(code[a], code[b]):
            raise ValueError(f"classes {a} and {b} have identical codewords in the code matrix.")
        raise ValueError(
            f"no column of the code puts classes {a} and {b} on opposite sides, so "
            "they cannot be told apart."
        )
    return code


def check_code_name(name):
    """Split a code name into the names it joins with ``+``, each checked.

    Parameters
    ----------
    name : str
        One of :data:`CODE_NAMES`, or several joined by ``+`` (``"ovo+ovr"``).

    Returns
    -------
    parts : list of str
        The names, in order.
    """
    parts = name.split("+")
    bad = [part for part in parts if part not in CODE_NAMES]
    if bad:
        raise ValueError(
            f"code must be one of {CODE_NAMES}, several of them joined by '+' (e.g. "
            f"'ovo+ovr'), or an array; got {name!r}."
        )
    if len(set(parts)) < len(parts):
        raise ValueError(f"code {name!r} names a code twice.")
    return parts


def concatenate_codes(*codes):
    """Concatenate code matrices column-wise, dropping repeated binary problems.

    A column equal to an earlier column or to its negation is dropped (see the
    module docstring); the first occurrence is kept, in place.

    Parameters
    ----------
    *codes : ndarray of shape (n_classes, n_classifiers_j)
        Valid code matrices of the same classes.

    Returns
    -------
    code : ndarray of shape (n_classes, n_classifiers), dtype int8
        The concatenation.
    """
    code = np.hstack([check_code_matrix(c) for c in codes]).astype(np.int8)
    # sign-normalise each column (its first nonzero entry +1) to find repeats up to negation
    first = code[np.argmax(code != 0, axis=0), np.arange(code.shape[1])]
    _, keep = np.unique((code * first).T, axis=0, return_index=True)
    return check_code_matrix(code[:, np.sort(keep)])


def make_code(spec, n_classes, random_state=None):
    """Build or validate a code matrix.

    Parameters
    ----------
    spec : {"ovr", "ovo", "ecoc", "complete", "ternary_complete", "ordinal", \
"sparse_random", "dense_random"}, several joined by "+", or array-like
        ``"ecoc"`` follows the paper: the complete code for ``K < 8``, the sparse
        random code for ``K >= 8``. ``"ternary_complete"`` and ``"ordinal"`` are
        MATLAB's designs of those names (:func:`ternary_complete`,
        :func:`ordinal`). Names joined by ``+`` (``"ovo+ovr"``) are the
        concatenation of those codes without repeated columns
        (:func:`concatenate_codes`). An array is validated and returned.
    n_classes : int
        Number of classes (rows of the code).
    random_state : int, RandomState instance or None
        Seeds the random codes.

    Returns
    -------
    code : ndarray of shape (n_classes, n_classifiers), dtype int8
        The code matrix.
    """
    n_classes = _check_n_classes(n_classes)
    if isinstance(spec, str) and "+" in spec:
        return make_code_parts(spec, n_classes, random_state)[0]
    if isinstance(spec, str):
        if spec == "ecoc":
            spec = "complete" if n_classes < 8 else "sparse_random"
        builders = {
            "ovr": one_vs_rest,
            "ovo": one_vs_one,
            "complete": complete,
            "ternary_complete": ternary_complete,
            "ordinal": ordinal,
            "sparse_random": lambda k: sparse_random(k, random_state=random_state),
            "dense_random": lambda k: dense_random(k, random_state=random_state),
        }
        if spec not in builders:
            raise ValueError(f"code must be one of {CODE_NAMES} or an array; got {spec!r}.")
        return builders[spec](n_classes)
    return check_code_matrix(spec, n_classes)


def make_code_parts(spec, n_classes, random_state=None):
    """Build a code matrix and say which of its columns each named part gives.

    :func:`make_code` of ``spec``, and for a name (or names joined by ``+``)
    the columns of the built code that solve each part's binary problems: a
    column a part shares with an earlier part (dropped from the
    concatenation, see :func:`concatenate_codes`) is counted in both.

    Parameters
    ----------
    spec : str or array-like
        As in :func:`make_code`.
    n_classes : int
        Number of classes (rows of the code).
    random_state : int, RandomState instance or None
        Seeds the random codes, as in :func:`make_code` (the same code).

    Returns
    -------
    code : ndarray of shape (n_classes, n_classifiers), dtype int8
        ``make_code(spec, n_classes, random_state)``.
    parts : dict of str to ndarray of int
        Each name of ``spec`` to the increasing indices of its columns in
        ``code``; empty for an array ``spec``.
    """
    if not isinstance(spec, str):
        return make_code(spec, n_classes, random_state), {}
    if "+" not in spec:
        code = make_code(spec, n_classes, random_state)
        return code, {spec: np.arange(code.shape[1])}
    from sklearn.utils import check_random_state  # not on `convexagg --help`'s path

    n_classes = _check_n_classes(n_classes)
    rng = check_random_state(random_state)  # one generator for every random part
    names = check_code_name(spec)
    codes = [make_code(name, n_classes, rng) for name in names]
    code = concatenate_codes(*codes)

    def normalised(matrix):  # each column's sign fixed (first nonzero +1): repeats match
        first = matrix[np.argmax(matrix != 0, axis=0), np.arange(matrix.shape[1])]
        return [column.tobytes() for column in (matrix * first).T.astype(np.int8)]

    index = {column: l for l, column in enumerate(normalised(code))}
    parts = {
        name: np.unique([index[column] for column in normalised(part)])
        for name, part in zip(names, codes)
    }
    return code, parts
