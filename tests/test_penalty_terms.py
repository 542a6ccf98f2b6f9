"""A :class:`~convexagg.aggregation.Penalty` is the sum of its terms.

Each derivative the objectives ask of the sum is checked against dense algebra on the
materialised Hessian (``hessp`` of every unit vector), finite differences of ``value``,
and the sum of the terms' own values; the grouped Hessian against ``A' H A`` and the
restriction against the Hessian's block.
"""

import numpy as np
import pytest
from scipy.optimize import approx_fprime

from convexagg.aggregation import (
    L1,
    ColumnRidge,
    EntryShrinkage,
    InterceptRidge,
    Penalty,
    PenaltyTerm,
    Ridge,
)

COLUMNS = (0, 0, 1, 1, 1, 2, -1, -1)  # three code columns' entry weights, two free weights


def _separable():
    return Penalty.from_terms(
        Ridge(0.3), ColumnRidge((0.0, 1.5, 0.2, 0.7, 0.0)), L1(0.05), InterceptRidge(0.4)
    )


def _entries():
    shrink = EntryShrinkage(
        shrink=0.8, columns=COLUMNS, l2=0.3, column_l2=(0.1, 0.0, 2.0), free_l2=0.5
    )
    return Penalty.from_terms(shrink, InterceptRidge(0.4))


CASES = {"separable": (_separable, 5), "entries": (_entries, len(COLUMNS))}


@pytest.mark.parametrize("name", list(CASES))
def test_the_sum_and_its_derivatives(name):
    make, n_weights = CASES[name]
    penalty = make()
    n = n_weights + 3  # three intercepts
    rng = np.random.default_rng(0)
    x = rng.uniform(0.1, 2.0, size=n)
    blocks = {"weights": x[:n_weights], "intercepts": x[n_weights:]}
    assert penalty.value(x, n_weights) == pytest.approx(
        sum(t.value(blocks[t.block]) for t in penalty.terms), rel=1e-15
    )
    H = np.column_stack([penalty.hessp(e, n_weights) for e in np.eye(n)])
    np.testing.assert_allclose(H, H.T, atol=1e-14)
    np.testing.assert_allclose(penalty.add_to_hessian(np.zeros((n, n)), n_weights), H, atol=1e-14)
    np.testing.assert_allclose(penalty.hess_diag(n_weights, n), np.diag(H), atol=1e-14)
    grad = penalty.grad(x, n_weights)
    fd = approx_fprime(x, lambda z: penalty.value(z, n_weights), 1e-7)
    np.testing.assert_allclose(grad, fd, rtol=1e-5, atol=1e-6)
    linear = grad - H @ x  # a quadratic plus a linear term: the slope alone is left
    np.testing.assert_allclose(linear[:n_weights], penalty.l1, atol=1e-12)
    np.testing.assert_allclose(linear[n_weights:], 0.0, atol=1e-12)
    # the grouped Hessian is A' H A, a weight of group -1 left out
    groups = np.arange(n_weights) % 3
    groups[1] = -1
    A = np.zeros((n_weights, 3))
    A[np.flatnonzero(groups >= 0), groups[groups >= 0]] = 1.0
    W = H[:n_weights, :n_weights]
    np.testing.assert_allclose(penalty.grouped_hessian(groups, 3, n_weights), A.T @ W @ A)
    # the restriction to some weights is the Hessian's block on them
    keep = np.array([0, 2, 3, n_weights - 1])
    sub = penalty.restrict(keep)
    np.testing.assert_allclose(
        sub.add_to_hessian(np.zeros((keep.size, keep.size)), keep.size), W[np.ix_(keep, keep)]
    )


def test_the_default_sum_is_the_constructors():
    p = Penalty(0.3, 0.05, 0.4, column_l2=[0.0, 1.5])
    assert p == Penalty.from_terms(Ridge(0.3), L1(0.05), InterceptRidge(0.4), ColumnRidge((0, 1.5)))
    assert (p.l2, p.l1, p.intercept_l2, p.n_free, p.entry_weights) == (0.3, 0.05, 0.4, 0, False)
    e = _entries()
    assert (e.l2, e.l1, e.n_free, e.entry_weights) == (0.3, 0.0, 2, True)
    groups, n_groups = e.column_groups()
    assert n_groups == 3 and list(groups) == [0, 0, 1, 1, 1, 2, -1, -1]
    with pytest.raises(ValueError, match="shared_weights needs entry weights"):
        p.shared_weights(np.ones(2))


def test_a_term_of_ones_own():
    """A term written outside the library joins the sum as the library's own do."""

    class Scaled(PenaltyTerm):
        def __init__(self, s):
            self.s = np.asarray(s)

        def value(self, z):
            return 0.5 * float(z @ (self.s * z))

        def curvature(self, n):
            return self.s

    p = Penalty.from_terms(Ridge(0.5), Scaled([1.0, 2.0, 3.0]), InterceptRidge(1.0))
    x = np.array([1.0, 2.0, 3.0, 4.0])
    assert p.value(x, 3) == pytest.approx(0.25 * 14 + 0.5 * (1 + 8 + 27) + 8.0, rel=1e-15)
    np.testing.assert_allclose(p.grad(x, 3), [1.5, 5.0, 10.5, 4.0], rtol=1e-15)
    np.testing.assert_allclose(p.hess_diag(3, 4), [1.5, 2.5, 3.5, 1.0], rtol=1e-15)


def test_what_a_sum_refuses():
    shrink = EntryShrinkage(shrink=1.0, columns=(0, 0))
    with pytest.raises(TypeError, match="must be a PenaltyTerm"):
        Penalty.from_terms(Ridge(1.0), 0.5)
    with pytest.raises(ValueError, match="one coupled term, got 2"):
        Penalty.from_terms(shrink, shrink)
    with pytest.raises(ValueError, match="quadratic penalty only"):
        Penalty.from_terms(shrink, L1(0.1))
    with pytest.raises(ValueError, match="strength l2 must be finite and >= 0"):
        Ridge(-1.0)
    with pytest.raises(ValueError, match="column_l2 has 2 entries for 3 weights"):
        Penalty(column_l2=[1.0, 2.0]).hessp(np.ones(3), 3)
    with pytest.raises(ValueError, match="free weights .* must come after"):
        EntryShrinkage(shrink=1.0, columns=(0, -1, 1))
