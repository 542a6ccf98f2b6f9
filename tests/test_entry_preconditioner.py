"""The fit path of entry weights: losses once per classifier, the grouped Hessian and the
two-level (``"columns"``) preconditioner of the projected Newton method.

References: the objective built from the expanded outputs ``Q[:, columns]`` (the
losses once per entry), the dense Hessian folded by an explicit 0/1 matrix
``A' H A`` (the dense Hessian itself is checked against ``DenseObjective`` in
``test_entry_weights.py``), and the fit by the direct Newton system.
"""

import numpy as np
import pytest

from binary_outputs import noisy_code_outputs
from convexagg import ConvexDecoder
from convexagg.aggregation import BlockedObjective, Penalty, code_entries, expand_code
from convexagg.codes import dense_random, one_vs_one, one_vs_rest
from convexagg.solvers import ProjectedNewton

CODES = {
    "ovo": one_vs_one(4),
    "ovr": one_vs_rest(4),
    "dense_random": dense_random(5, n_candidates=20, random_state=1),
    "custom": np.array([[1, 1, 0, -1, 0], [-1, 0, 1, -1, 0], [0, -1, -1, 1, 1], [0, 0, 0, 1, -1]]),
}


def _fold_matrix(groups, n_groups):
    """The explicit 0/1 matrix ``A[j, groups[j]] = 1`` (rows of negative groups empty)."""
    A = np.zeros((groups.size, n_groups))
    keep = groups >= 0
    A[np.flatnonzero(keep), groups[keep]] = 1.0
    return A


@pytest.mark.parametrize("name", list(CODES))
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("loss", ["cross_entropy", "exponential"])
def test_losses_once_per_classifier_are_those_of_the_expanded_outputs(name, dtype, loss):
    code = CODES[name]
    Q, y = noisy_code_outputs(code, 70, 2)
    _, columns = code_entries(code)
    expanded = expand_code(code)
    kw = dict(dtype=dtype, loss=loss, chunk=16)
    per_entry = BlockedObjective.from_outputs(Q[:, columns], expanded, y, **kw)
    per_classifier = BlockedObjective.from_outputs(Q, expanded, y, columns=columns, **kw)
    np.testing.assert_array_equal(per_classifier.LT, per_entry.LT)


def test_losses_once_per_classifier_check_the_map():
    code = CODES["ovo"]
    Q, y = noisy_code_outputs(code, 20, 0)
    with pytest.raises(ValueError, match="columns must have one entry per code column"):
        BlockedObjective.from_outputs(Q, expand_code(code), y, columns=[0, 1])


@pytest.mark.parametrize("name", list(CODES))
@pytest.mark.parametrize("fit_intercept, weighted", [(False, False), (True, True)])
def test_grouped_hessian_is_the_folded_dense_hessian(name, fit_intercept, weighted):
    code = CODES[name]
    Q, y = noisy_code_outputs(code, 60, 1)
    rng = np.random.default_rng(4)
    _, columns = code_entries(code)
    penalty = Penalty.from_alpha(
        0.05, shrink=0.5, columns=columns, column_l2=rng.uniform(0, 0.2, code.shape[1])
    )
    s = rng.uniform(0.2, 3.0, size=y.size) if weighted else None
    objective = BlockedObjective.from_outputs(
        Q, expand_code(code), y, penalty, columns=columns, chunk=13,
        fit_intercept=fit_intercept, sample_weight=s,
    )  # fmt: skip
    nb = columns.size
    x = rng.uniform(0.1, 2.0, size=objective.n_variables)
    point = objective.evaluate(x)
    H = objective.hessian(point)[:nb, :nb]
    groups, n_groups = penalty.column_groups()
    np.testing.assert_array_equal(groups, columns)  # every column has entries here
    # some entries left out, as the solver leaves out the weights held at zero
    groups = np.where(rng.random(nb) < 0.3, -1, groups)
    A = _fold_matrix(groups, n_groups)
    np.testing.assert_allclose(
        objective.grouped_hessian(point, groups, n_groups), A.T @ H @ A, rtol=1e-10, atol=1e-12
    )
    # with the diagonal from the same pass: the same matrix, and hess_diag's diagonal
    both, diag = objective.grouped_hessian(point, groups, n_groups, diagonal=True)
    np.testing.assert_allclose(both, A.T @ H @ A, rtol=1e-10, atol=1e-12)
    np.testing.assert_array_equal(diag, objective.hess_diag(point))
    np.testing.assert_allclose(diag, np.diag(objective.hessian(point)), rtol=1e-10)


def test_grouped_hessian_of_shared_weights_in_any_groups():
    # shared weights, groups that put two stored columns of one class together
    code = CODES["custom"]
    Q, y = noisy_code_outputs(code, 50, 3)
    penalty = Penalty(l2=0.1, column_l2=(0.0, 0.3, 0.0, 0.1, 0.2))
    objective = BlockedObjective.from_outputs(Q, code, y, penalty, chunk=11)
    point = objective.evaluate(np.linspace(0.2, 1.5, code.shape[1]))
    groups = np.array([0, 0, 1, -1, 1])
    A = _fold_matrix(groups, 2)
    np.testing.assert_allclose(
        objective.grouped_hessian(point, groups, 2),
        A.T @ objective.hessian(point) @ A,
        rtol=1e-10,
    )


def _letter_like(seed=0):
    """Outputs of one-vs-one on 6 classes: 30 entries, enough for the "columns" kind."""
    code = one_vs_one(6)
    Q, y = noisy_code_outputs(code, 300, seed)
    return Q, y, code


def test_columns_preconditioner_fits_what_the_direct_system_fits():
    Q, y, code = _letter_like()
    kw = dict(alpha=1e-3, entry_weight_shrinkage=0.05)
    direct = ConvexDecoder(**kw, solver=ProjectedNewton(newton="direct", tol=1e-10)).fit(Q, y, code)
    cg = ProjectedNewton(newton="cg", preconditioner="columns", tol=1e-10)
    dec = ConvexDecoder(**kw, solver=cg).fit(Q, y, code)
    assert dec.converged_ and direct.converged_
    assert set(dec.history_["newton"][1:]) <= {"columns", "columns, Cauchy point"}
    assert dec.objective_ == pytest.approx(direct.objective_, rel=1e-12)
    np.testing.assert_allclose(dec.entry_weights_, direct.entry_weights_, atol=1e-6)


def test_columns_preconditioner_with_intercepts_and_sample_weights():
    Q, y, code = _letter_like(1)
    s = np.random.default_rng(5).uniform(0.5, 2.0, size=y.size)
    kw = dict(alpha=1e-3, entry_weight_shrinkage=0.05, fit_intercept=True)
    direct = ConvexDecoder(**kw, solver=ProjectedNewton(newton="direct", tol=1e-9))
    direct.fit(Q, y, code, sample_weight=s)
    cg = ProjectedNewton(newton="cg", preconditioner="columns", tol=1e-9)
    dec = ConvexDecoder(**kw, solver=cg).fit(Q, y, code, sample_weight=s)
    assert dec.converged_ and direct.converged_
    assert dec.objective_ == pytest.approx(direct.objective_, rel=1e-12)
    np.testing.assert_allclose(dec.intercept_, direct.intercept_, atol=1e-6)


def test_columns_preconditioner_needs_entry_weights():
    Q, y, code = _letter_like()
    solver = ProjectedNewton(newton="cg", preconditioner="columns")
    with pytest.raises(ValueError, match="preconditioner='columns' needs entry weights"):
        ConvexDecoder(solver=solver).fit(Q, y, code)


def test_auto_takes_the_columns_preconditioner_above_the_dense_limit(monkeypatch):
    import importlib

    module = importlib.import_module("convexagg.solvers.projected_newton")
    Q, y, code = _letter_like()  # 30 entries in 15 columns
    kw = dict(alpha=1e-3, entry_weight_shrinkage=0.05)
    direct = ConvexDecoder(**kw, solver=ProjectedNewton(newton="direct", tol=1e-9)).fit(Q, y, code)
    monkeypatch.setattr(module, "DENSE_MAX_FREE", 20)
    monkeypatch.setattr(module, "LAGGED_MAX_VARIABLES", 0)  # no Hessian kept
    dec = ConvexDecoder(**kw, solver=ProjectedNewton(tol=1e-9)).fit(Q, y, code)
    assert "columns" in set(dec.history_["newton"])
    assert dec.objective_ == pytest.approx(direct.objective_, rel=1e-12)
    # shared weights (15 of them) above the same limit: the diagonal, as before
    monkeypatch.setattr(module, "DENSE_MAX_FREE", 10)
    shared = ConvexDecoder(alpha=1e-3, solver=ProjectedNewton(tol=1e-9)).fit(Q, y, code)
    assert "diagonal" in set(shared.history_["newton"])


def test_auto_takes_the_diagonal_with_zero_entries(monkeypatch):
    """Weights free in sign have no column: "auto" preconditions by the diagonal, and the
    fit is the direct solve's."""
    import importlib

    module = importlib.import_module("convexagg.solvers.projected_newton")
    Q, y, code = _letter_like()
    kw = dict(alpha=1e-3, entry_weight_shrinkage=0.05, zero_entry_penalty=0.1)
    direct = ConvexDecoder(**kw, solver=ProjectedNewton(newton="direct", tol=1e-9)).fit(Q, y, code)
    monkeypatch.setattr(module, "DENSE_MAX_FREE", 20)
    monkeypatch.setattr(module, "LAGGED_MAX_VARIABLES", 0)
    dec = ConvexDecoder(**kw, solver=ProjectedNewton(tol=1e-9)).fit(Q, y, code)
    kinds = {kind.split(",")[0] for kind in dec.history_["newton"][1:]}
    assert kinds == {"diagonal"}
    assert dec.objective_ == pytest.approx(direct.objective_, rel=1e-10)
    np.testing.assert_allclose(dec.zero_entry_weights_, direct.zero_entry_weights_, atol=1e-5)
