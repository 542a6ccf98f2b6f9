"""Invariants of every decoder, over random codes, binary outputs and labels (hypothesis):
probabilities are a distribution, predictions their argmax, class and sample permutations
carried through, the convex objective never above its start.

Deterministic: ``derandomize=True`` makes hypothesis draw the same examples on
every run, so CI never sees a new counterexample by chance.
"""

import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from scipy.special import softmax
from sklearn.exceptions import ConvergenceWarning

from convexagg import ConvexDecoder
from convexagg.aggregation import DenseObjective, Penalty, stack_losses
from convexagg.codes import _separation_counts, check_code_matrix, complete, one_vs_one, one_vs_rest
from convexagg.losses import binary_losses
from convexagg.solvers import InteriorPoint, ProjectedNewton
from helpers import (
    DECODERS,
    accepts_code,
    distance_to_optimum_bound,
    make_decoder,
    scores,
    suboptimality_bound,
)

SETTINGS = settings(
    max_examples=30,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@st.composite
def codes(draw, max_classes=5, max_columns=7):
    """A valid code matrix: random entries, then repaired (both signs in every
    column; a one-vs-one column added for each pair no column separates)."""
    K = draw(st.integers(2, max_classes))
    M = draw(st.integers(1, max_columns))
    code = np.array(draw(st.lists(st.sampled_from([-1, 0, 1]), min_size=K * M, max_size=K * M)))
    code = code.reshape(K, M).astype(np.int8)
    for l in range(M):
        if not ((code[:, l] == 1).any() and (code[:, l] == -1).any()):
            code[l % K, l], code[(l + 1) % K, l] = 1, -1
    sep = _separation_counts(code)
    extra = []
    for a in range(K):
        for b in range(a + 1, K):
            if sep[a, b] == 0:
                col = np.zeros(K, dtype=np.int8)
                col[a], col[b] = 1, -1
                extra.append(col)
    if extra:
        code = np.column_stack([code, *extra])
    return check_code_matrix(code)


@st.composite
def problems(draw, max_samples=24):
    """(Q, y, code): probabilities in [0, 1] (exact 0 and 1 included) and labels."""
    code = draw(codes())
    K, M = code.shape
    n = draw(st.integers(2, max_samples))
    values = st.one_of(st.sampled_from([0.0, 1.0, 0.5]), st.floats(0.0, 1.0))
    Q = draw(arrays(np.float64, (n, M), elements=values))
    y = draw(arrays(np.int64, n, elements=st.integers(0, K - 1)))
    return Q, y, code


def _fit(Decoder, Q, y, code, **params):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # checked in test_numerics
        return make_decoder(Decoder, **params).fit(Q, y, code)


def _supported(Decoder, code):
    """The code itself, or one-vs-one for a decoder that only takes one-vs-one."""
    return code if accepts_code(Decoder, code) else one_vs_one(code.shape[0])


# --------------------------------------------------------------------------- every decoder


@pytest.mark.parametrize("Decoder", DECODERS, ids=lambda c: c.__name__)
@SETTINGS
@given(problem=problems(), Q_new=arrays(np.float64, (5, 64), elements=st.floats(0.0, 1.0)))
def test_probabilities_are_a_distribution_and_predict_is_their_argmax(Decoder, problem, Q_new):
    Q, y, code = problem
    code = _supported(Decoder, code)
    Q = np.resize(Q, (Q.shape[0], code.shape[1]))
    dec = _fit(Decoder, Q, y, code)
    for X in (Q, Q_new[:, : code.shape[1]]):
        if not hasattr(dec, "predict_proba"):  # hard decoders: scores and their argmax
            S = dec.decision_function(X)
            assert S.shape == (X.shape[0], code.shape[0]) and np.isfinite(S).all()
            np.testing.assert_array_equal(dec.predict(X), np.argmax(S, axis=1))
            continue
        P = dec.predict_proba(X)
        assert P.shape == (X.shape[0], code.shape[0])
        assert np.isfinite(P).all() and (P >= 0).all()
        np.testing.assert_allclose(P.sum(axis=1), 1.0, rtol=0, atol=1e-12)
        np.testing.assert_array_equal(dec.predict(X), np.argmax(P, axis=1))


STANDARD_CODES = {"ovr": one_vs_rest, "ovo": one_vs_one, "complete": complete}


@pytest.mark.parametrize("Decoder", DECODERS, ids=lambda c: c.__name__)
@pytest.mark.parametrize("code_name", STANDARD_CODES)
@SETTINGS
@given(data=st.data())
def test_permuting_classes_permutes_probability_columns(Decoder, code_name, data):
    """Renaming the classes (rows of the code and labels together) renames the
    probability columns. Checked for every decoder on the standard codes, whose
    decoding problems have a unique solution for all the baselines."""
    K = data.draw(st.integers(3, 5), label="K")
    code = STANDARD_CODES[code_name](K)
    if not accepts_code(Decoder, code):
        return
    n = data.draw(st.integers(K, 20), label="n")
    Q = data.draw(arrays(np.float64, (n, code.shape[1]), elements=st.floats(0.01, 0.99)), label="Q")
    y = data.draw(arrays(np.int64, n, elements=st.integers(0, K - 1)), label="y")
    perm = np.array(data.draw(st.permutations(range(K)), label="perm"))
    inv = np.argsort(perm)  # new class j is old class perm[j]
    P = scores(_fit(Decoder, Q, y, code), Q)
    P_perm = scores(_fit(Decoder, Q, inv[y], code[perm]), Q)
    np.testing.assert_allclose(P_perm, P[:, perm], atol=1e-6)


@pytest.mark.parametrize("Decoder", DECODERS, ids=lambda c: c.__name__)
@SETTINGS
@given(problem=problems(), data=st.data())
def test_permuting_training_samples_changes_no_prediction(Decoder, problem, data):
    Q, y, code = problem
    code = _supported(Decoder, code)
    Q = np.resize(Q, (Q.shape[0], code.shape[1]))
    order = np.array(data.draw(st.permutations(range(len(y))), label="order"))
    P = scores(_fit(Decoder, Q, y, code), Q)
    P_perm = scores(_fit(Decoder, Q[order], y[order], code), Q)
    np.testing.assert_allclose(P_perm, P, atol=1e-6)


# --------------------------------------------------------------------------- the convex decoder
# Tolerances below come from the solver's own stopping rule, via the strong
# convexity bound in helpers.distance_to_optimum_bound: two runs that both stop
# within tol of the KKT conditions are within d1 + d2 of each other, however
# their iterates were rounded.

TIGHT = {"alpha": 1e-2, "solver": ProjectedNewton(tol=1e-10, max_iter=200)}


def _objective(Q, y, code, alpha=TIGHT["alpha"]):
    return DenseObjective(stack_losses(*binary_losses(Q)), code, y, Penalty(alpha))


def _probability_bound(Q, dw):
    """``|P(w) - P(w')|`` elementwise: ``rho`` moves by at most ``c_i = sum_l
    (L_pos + L_neg)_il |dw_l|`` and a softmax entry by at most ``2 c_i``."""
    L_pos, L_neg = binary_losses(Q)
    return 2 * ((L_pos + L_neg) @ np.abs(dw))[:, None]


@SETTINGS
@given(problem=problems(), data=st.data())
def test_convex_class_permutation_on_any_code(problem, data):
    Q, y, code = problem
    K = code.shape[0]
    perm = np.array(data.draw(st.permutations(range(K)), label="perm"))
    inv = np.argsort(perm)
    a = _fit(ConvexDecoder, Q, y, code, **TIGHT)
    b = _fit(ConvexDecoder, Q, inv[y], code[perm], **TIGHT)
    d = distance_to_optimum_bound(_objective(Q, y, code), a.weights_)
    d += distance_to_optimum_bound(_objective(Q, inv[y], code[perm]), b.weights_)
    assert np.linalg.norm(a.weights_ - b.weights_) <= d
    P, P_perm = a.predict_proba(Q), b.predict_proba(Q)
    slack = _probability_bound(Q, a.weights_ - b.weights_) + 1e-12
    assert (np.abs(P_perm - P[:, perm]) <= slack).all()


@SETTINGS
@given(problem=problems(), data=st.data())
def test_convex_sample_permutation_leaves_the_weights(problem, data):
    Q, y, code = problem
    order = np.array(data.draw(st.permutations(range(len(y))), label="order"))
    a = _fit(ConvexDecoder, Q, y, code, **TIGHT)
    b = _fit(ConvexDecoder, Q[order], y[order], code, **TIGHT)
    obj = _objective(Q, y, code)  # the same function for both orders
    d = distance_to_optimum_bound(obj, a.weights_) + distance_to_optimum_bound(obj, b.weights_)
    assert np.linalg.norm(a.weights_ - b.weights_) <= d
    assert d < 1e-3  # the bound is informative at this tolerance


@SETTINGS
@given(
    problem=problems(),
    alpha=st.sampled_from([1e-6, 1e-4, 1e-2, 1.0]),
    loss=st.sampled_from(["cross_entropy", "exponential"]),
    solver=st.sampled_from(
        [
            InteriorPoint(newton="cg", tol=1e-8),
            InteriorPoint(newton="direct", tol=1e-8),
            ProjectedNewton(newton="direct", init="fixed", tol=1e-8),
            ProjectedNewton(newton="cg", init="fixed", tol=1e-8),
        ]
    ),
)
def test_objective_at_the_weights_is_never_above_the_start(problem, alpha, loss, solver):
    """``f(w_final) <= f(w0)``, ``w0 = 1/M`` the paper's start, up to what the
    stopping rule allows: ``f(w) - f* <= gap + |grad f - z|^2 / (2 alpha)`` at the
    returned point (helpers.suboptimality_bound) and ``f* <= f(w0)``."""
    Q, y, code = problem
    obj = DenseObjective(stack_losses(*binary_losses(Q, loss)), code, y, Penalty(alpha))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        result = solver.solve(obj)
    M = code.shape[1]
    f0 = obj.value(np.full(M, 1.0 / M))
    assert np.isfinite(result.w).all() and (result.w >= 0).all()
    assert result.history["objective"][0] == f0
    assert obj.value(result.w) <= f0 + suboptimality_bound(obj, result.w)
    # the decoder's record of its own run says the same (it evaluates with
    # BlockedObjective, whose summation order differs: equal to rounding)
    dec = _fit(ConvexDecoder, Q, y, code, alpha=alpha, loss=loss, solver=solver)
    h = dec.history_["objective"]
    assert h[0] == pytest.approx(f0, rel=1e-12, abs=1e-15) and dec.objective_ == h[-1]
    assert h[-1] <= f0 + suboptimality_bound(obj, dec.weights_)


@SETTINGS
@given(problem=problems())
def test_convex_probabilities_are_the_softmax_of_minus_rho(problem):
    Q, y, code = problem
    dec = _fit(ConvexDecoder, Q, y, code)
    L_pos, L_neg = binary_losses(Q)
    rho = (L_pos * dec.weights_) @ (code == 1).T + (L_neg * dec.weights_) @ (code == -1).T
    np.testing.assert_allclose(dec.predict_proba(Q), softmax(-rho, axis=1), rtol=1e-10, atol=1e-14)
