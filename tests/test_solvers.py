"""Every solver setting against an independent solver (scipy's L-BFGS-B) and known solutions.

The L-BFGS-B optima of the digits problems are golden masters (``tests/golden.py``,
``tests/data/solver_optima.json``): computed once by ``tests/data/regenerate.py`` on the
session's in-sample binary outputs, and refused if those outputs change."""

import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression

from convexagg.aggregation import BlockedObjective, Penalty, stack_losses
from convexagg.decoders.formulations import solver_for
from convexagg.losses import binary_losses
from convexagg.solvers import (
    LBFGSB,
    InteriorPoint,
    ProjectedNewton,
    interior_point,
    predictor_corrector,
    projected_newton,
    resolve_solver,
)
from golden import ALPHA, PROBLEMS, load_solver_optima, problem_objective, stored_optimum
from golden import lbfgsb_optimum as _oracle

# every setting the library offers for the likelihood
SETTINGS = (
    [
        InteriorPoint(method=m, newton=n, init=i, tol=1e-8, max_iter=200)
        for m in ("adaptive_barrier", "predictor_corrector")
        for n in ("cg", "direct")
        for i in ("fixed", "uniform", "subsample")
    ]
    + [ProjectedNewton(newton="direct", init=i, tol=1e-8) for i in ("uniform", "fixed")]
    + [ProjectedNewton(newton="cg", preconditioner=p, tol=1e-8) for p in ("subsample", "diagonal")]
    + [ProjectedNewton(tol=1e-8), LBFGSB(tol=1e-11)]
)
IDS = [repr(s).replace(" ", "") for s in SETTINGS]


@pytest.fixture(scope="module")
def digits_outputs(digits_binary_outputs):
    return digits_binary_outputs


@pytest.fixture(scope="module")
def optima(golden_outputs):
    """Per code and intercept setting: the dense reference objective and its optimum."""
    stored = load_solver_optima()
    out = {}
    for code in ("ovr", "ovo", "ecoc"):
        for fit_intercept in (False, True):
            name = f"{code}_intercept={fit_intercept}"
            dense = problem_objective(name, golden_outputs)
            out[code, fit_intercept] = (dense, *stored_optimum(name, golden_outputs, stored))
    return out


@pytest.mark.parametrize("name", list(PROBLEMS))
def test_every_golden_optimum_is_the_optimum_of_its_problem_today(golden_outputs, name):
    """The stored L-BFGS-B optimum, on today's inputs and objective: its value is f*
    and it meets the KKT conditions; a stale master fails here, naming the fix."""
    x_star, f_star = stored_optimum(name, golden_outputs)
    objective = problem_objective(name, golden_outputs)
    assert objective.value(x_star) == pytest.approx(f_star, rel=1e-9)  # as the inputs match
    M = objective.n_weights
    grad = objective.evaluate(x_star).grad
    assert (x_star[:M] >= 0).all()
    lower = np.r_[np.zeros(M), np.full(objective.n_variables - M, -np.inf)]  # free intercepts
    projected_gradient = x_star - np.maximum(x_star - grad, lower)
    assert np.linalg.norm(projected_gradient) <= 1e-6  # L-BFGS-B's ftol stops it near 1e-8


def _blocked(digits_outputs, code, dtype="float64", fit_intercept=False):
    Q, y, C = digits_outputs[code]
    return BlockedObjective.from_outputs(
        Q, C, y, Penalty.from_alpha(ALPHA), dtype=dtype, fit_intercept=fit_intercept
    )


def _check_optimal(dense, f_star, x, slack=0.0):
    """Objective within 1e-6 (relative) of the oracle's, and the KKT conditions."""
    assert abs(dense.value(x) - f_star) <= 1e-6 * abs(f_star) + slack
    M = dense.n_weights
    grad = dense.evaluate(x).grad
    assert (x[:M] >= 0).all()
    assert (grad[:M] >= -1e-5).all() and np.abs(x[:M] * grad[:M]).max() <= 1e-5
    assert np.abs(grad[M:]).max(initial=0.0) <= 1e-5  # free intercepts: zero gradient


@pytest.mark.parametrize("solver", SETTINGS, ids=IDS)
@pytest.mark.parametrize("code", ["ovr", "ovo", "ecoc"])
def test_every_setting_reaches_the_oracle(digits_outputs, optima, code, solver):
    dense, _, f_star = optima[code, False]
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        result = solver.solve(_blocked(digits_outputs, code))
    assert result.converged
    _check_optimal(dense, f_star, result.w)


@pytest.mark.parametrize(
    "solver",
    [
        InteriorPoint(newton="direct", tol=1e-8, max_iter=200),
        InteriorPoint(method="predictor_corrector", init="uniform", tol=1e-8),
        ProjectedNewton(tol=1e-8),
        ProjectedNewton(newton="cg", preconditioner="diagonal", tol=1e-8),
        LBFGSB(tol=1e-11),
    ],
    ids=lambda s: repr(s).replace(" ", ""),
)
@pytest.mark.parametrize("code", ["ovr", "ecoc"])
def test_intercepts_reach_the_oracle(digits_outputs, optima, code, solver):
    """w >= 0 and free intercepts: every solver family on the same oracle."""
    dense, x_star, f_star = optima[code, True]
    result = solver.solve(_blocked(digits_outputs, code, fit_intercept=True))
    assert result.converged and result.w.shape == (dense.n_variables,)
    _check_optimal(dense, f_star, result.w)
    # intercepts are unique (their L2 term): the solvers agree on them, not only on f
    np.testing.assert_allclose(result.w[dense.n_weights :], x_star[dense.n_weights :], atol=1e-3)


@pytest.mark.parametrize(
    "solver",
    [
        InteriorPoint(method="predictor_corrector", newton="direct", dtype="float32", tol=1e-7),
        ProjectedNewton(dtype="float32", tol=1e-7),
    ],
    ids=["interior_point", "projected_newton"],
)
def test_float32_storage_reaches_the_oracle_to_its_rounding(digits_outputs, optima, solver):
    dense, _, f_star = optima["ovo", False]
    result = solver.solve(_blocked(digits_outputs, "ovo", dtype=solver.dtype))
    assert result.converged
    _check_optimal(dense, f_star, result.w, slack=2e-7)


@pytest.mark.parametrize("method", ["adaptive_barrier", "predictor_corrector"])
@pytest.mark.parametrize("newton", ["cg", "direct"])
@pytest.mark.parametrize("code", ["ovr", "ovo", "ecoc"])
def test_paper_tolerance_within_duality_bound(digits_outputs, optima, code, method, newton):
    """At tol=1e-4, f(w) - f* <= gap + |grad f - z|^2 / (2 alpha) (strong convexity)."""
    dense, _, f_star = optima[code, False]
    solver = InteriorPoint(method=method, newton=newton)
    result = solver.solve(_blocked(digits_outputs, code))
    point = dense.evaluate(result.w)
    bound = result.w @ result.z + np.sum((point.grad - result.z) ** 2) / (2 * ALPHA)
    assert 0 <= point.value - f_star + 1e-12 <= bound
    # the residual norm recorded is the one the stopping rule used
    assert result.history["residual"][-1] <= 1e-4 and result.history["gap"][-1] <= 1e-4


def test_projected_newton_tolerance_is_the_projected_gradient(digits_outputs, optima):
    dense, x_star, f_star = optima["ovo", False]
    result = ProjectedNewton().solve(_blocked(digits_outputs, "ovo"))
    h = result.history
    assert h["projected_gradient"][-1] <= 1e-4 < h["projected_gradient"][-2]
    grad = dense.evaluate(result.w).grad
    pg = result.w - np.maximum(result.w - grad, 0.0)
    assert np.linalg.norm(pg) == pytest.approx(h["projected_gradient"][-1], rel=1e-6)
    # f - f* <= |pg| |x - x*| (convexity, x* feasible)
    assert (
        dense.value(result.w) - f_star
        <= np.linalg.norm(pg) * np.linalg.norm(result.w - x_star) + 1e-12
    )


def test_projected_newton_holds_zero_weights_exactly(digits_outputs, golden_outputs):
    """Where the optimum has w_l = 0 (here, L1), the barrier-free method returns exact zeros."""
    Q, y, C = digits_outputs["ovo"]
    objective = BlockedObjective.from_outputs(Q, C, y, Penalty(1e-4, 2e-3))
    result = ProjectedNewton(tol=1e-9).solve(objective)
    x_star, _ = stored_optimum("ovo_l1", golden_outputs)
    zero = x_star < 1e-10
    assert zero.sum() >= 5
    assert np.all(result.w[zero] == 0.0)
    assert np.all(result.w[~zero] > 0.0)


@pytest.mark.parametrize("solver", SETTINGS[::3] + [ProjectedNewton()], ids=IDS[::3] + ["pn"])
def test_useless_binaries_converge_to_zero_weights(solver):
    """When no classifier helps, the optimum is w = 0 (f = log K), an all-active
    corner. Out-of-fold outputs from folds that each miss a class give exactly
    that; this case stalled an earlier PCG tolerance tied to |g| instead of |r_mu|."""
    from sklearn.datasets import make_classification
    from sklearn.model_selection import check_cv

    from convexagg.codes import one_vs_one
    from convexagg.out_of_fold import out_of_fold_outputs

    X, y = make_classification(60, 4, n_informative=3, n_redundant=0, n_classes=3, random_state=0)
    order = np.argsort(y, kind="stable")
    X, y = X[order], y[order]
    cv = check_cv([(np.arange(30), np.arange(30, 60)), (np.arange(30, 60), np.arange(30))])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # one-sided folds, expected here
        Q = out_of_fold_outputs(LogisticRegression(), X, y, one_vs_one(3), cv, "proba")
    objective = BlockedObjective.from_outputs(Q, one_vs_one(3), y, Penalty(1e-4))
    x_star, f_star = _oracle(objective)
    assert f_star == pytest.approx(np.log(3), rel=1e-6) and np.allclose(x_star, 0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        result = solver.solve(objective)
    assert result.converged
    assert objective.value(result.w) - f_star <= 1e-4
    assert np.abs(result.w).max() < 1e-3


def test_warm_starts_by_each_solvers_policy(digits_outputs):
    """From the solution at a neighbouring alpha: fewer iterations, the same optimum."""
    base = _blocked(digits_outputs, "ovo")
    settings = (
        InteriorPoint(method="predictor_corrector", newton="direct", tol=1e-7),
        ProjectedNewton(tol=1e-7),
    )
    for solver in settings:
        first = solver.solve(base.with_penalty(Penalty(1e-2)))
        nearby = base.with_penalty(Penalty(5e-3))
        warm, cold = solver.solve(nearby, first), solver.solve(nearby)
        assert warm.n_iter < cold.n_iter
        assert nearby.value(warm.w) == pytest.approx(nearby.value(cold.w), rel=1e-6)


@pytest.mark.parametrize("reuse", [0, 1, 3])
def test_predictor_corrector_hessian_reuse_keeps_the_optimum(digits_outputs, optima, reuse):
    dense, _, f_star = optima["ovo", False]
    objective = _blocked(digits_outputs, "ovo")
    calls = []

    class Counting:
        n_samples, n_weights, n_intercepts = objective.n_samples, objective.n_weights, 0
        n_variables = objective.n_weights
        value = staticmethod(objective.value)
        evaluate = staticmethod(objective.evaluate)

        def hessian(self, point):
            calls.append(1)
            return objective.hessian(point)

    result = predictor_corrector(Counting(), tol=1e-8, reuse_hessian=reuse)
    assert result.converged
    _check_optimal(dense, f_star, result.w)
    if reuse == 0:
        assert len(calls) == result.n_iter
    else:
        assert len(calls) < result.n_iter


def test_history_and_evaluations_are_recorded(digits_outputs):
    objective = _blocked(digits_outputs, "ovo")
    records = []
    result = interior_point(objective, callback=records.append)
    h = result.history
    n = result.n_iter + 1
    for key in ("objective", "gap", "residual", "step", "mu", "cg_iter"):
        assert h[key].shape == (n,)
    assert h["weights"].shape == (n, objective.n_weights)
    assert h["objective"][-1] < h["objective"][0]
    assert (h["step"][1:] > 0).all() and (h["step"][1:] <= 1).all()
    assert [r["iteration"] for r in records] == list(range(n))
    assert records[-1]["objective"] == h["objective"][-1] and "weights" not in records[-1]
    assert result.n_evaluations >= n


def test_convergence_warning_names_the_solver_and_why(digits_outputs):
    objective = _blocked(digits_outputs, "ovr")
    with pytest.warns(ConvergenceWarning, match="interior point method stopped after 2 iter"):
        result = interior_point(objective, max_iter=2)
    assert not result.converged and result.message == "max_iter"
    with pytest.warns(ConvergenceWarning, match="projected Newton method stopped after 1 iter"):
        result = projected_newton(objective, np.full(objective.n_weights, 0.1), max_iter=1)
    assert not result.converged


def test_a_setting_the_objective_cannot_serve_is_named(digits_outputs):
    from convexagg.aggregation import LargeMarginObjective

    Q, y, C = digits_outputs["ovr"]
    margin = LargeMarginObjective(stack_losses(*binary_losses(Q)), C, y, Penalty.from_alpha(ALPHA))
    with pytest.raises(TypeError, match="ProjectedNewton needs hessian"):
        ProjectedNewton(newton="direct").solve(margin)
    with pytest.raises(TypeError, match="InteriorPoint needs hessp, hess_diag"):
        InteriorPoint().solve(margin)


def test_names_resolve_and_formulations_are_checked():
    assert isinstance(resolve_solver("auto"), ProjectedNewton)
    assert isinstance(resolve_solver("interior_point"), InteriorPoint)
    given = InteriorPoint(tol=1e-6)
    assert resolve_solver(given) is given
    with pytest.raises(ValueError, match="solver must be one of"):
        resolve_solver("newton")
    with pytest.raises(TypeError, match="SolverConfig"):
        resolve_solver(object())
    with pytest.raises(ValueError, match="tol"):
        resolve_solver(InteriorPoint(tol=-1.0))
    # which solver a formulation takes is the decoder's table, not the solvers'
    assert type(solver_for("auto", "large_margin")).__name__ == "ProjectedSubgradient"
    assert solver_for(given, "stiffness") is given
    with pytest.raises(ValueError, match="formulation='large_margin' cannot be solved by"):
        solver_for(ProjectedNewton(), "large_margin")
    with pytest.raises(ValueError, match="formulation='likelihood' cannot be solved by"):
        solver_for("projected_subgradient", "likelihood")
    with pytest.raises(ValueError, match=r"formulation='stiffness' cannot use InteriorPoint\(init"):
        solver_for(InteriorPoint(init="subsample"), "stiffness")
    with pytest.raises(ValueError, match="dtype"):
        solver_for(ProjectedNewton(dtype="float32"), "stiffness")
    with pytest.raises(ValueError, match="a fit on Dask arrays cannot use InteriorPoint"):
        solver_for(InteriorPoint(init="uniform"), dask=True)


def test_projected_newton_with_most_weights_at_zero(digits_complete_binary_outputs, golden_outputs):
    """The complete code on 9 digit classes (255 weights, about 210 zero at the
    optimum): the iterations whose step was cut start from the Cauchy point of the
    projected gradient path, the free block is solved directly, and the answer is
    the oracle's, zeros included."""
    Q, y, C = digits_complete_binary_outputs
    objective = BlockedObjective.from_outputs(Q, C, y, Penalty(1e-4, 1e-3))
    x_star, f_star = stored_optimum("complete_l1", golden_outputs)
    result = ProjectedNewton(tol=1e-8).solve(objective)
    assert result.converged
    assert objective.value(result.w) - f_star <= 1e-9
    kinds = list(result.history["newton"])
    assert any("Cauchy point" in k for k in kinds) and "direct" in kinds
    zero = x_star < 1e-10
    assert zero.sum() > 150 and np.all(result.w[zero] == 0.0)


def _zero_entry_fit(monkeypatch, solver, fresh_budget=None, **kw):
    """A default-like fit (entry weights, zero entries, intercepts, sample weights) on
    one-vs-one outputs of 6 classes: 30 entries and 60 zero-entry weights."""
    import importlib

    from binary_outputs import noisy_code_outputs
    from convexagg import ConvexDecoder
    from convexagg.codes import one_vs_one

    module = importlib.import_module("convexagg.solvers.projected_newton")
    if fresh_budget is not None:
        monkeypatch.setattr(module, "FRESH_BUDGET", fresh_budget)
    code = one_vs_one(6)
    Q, y = noisy_code_outputs(code, 300, 2)
    s = np.random.default_rng(3).uniform(0.5, 2.0, size=y.size)
    params = dict(alpha=1e-3, entry_weight_shrinkage=0.05, zero_entry_penalty=0.05)
    params.update(fit_intercept=True, **kw)
    return ConvexDecoder(**params, solver=solver).fit(Q, y, code, sample_weight=s)


def test_lagged_newton_matrix_reaches_the_direct_optimum(monkeypatch):
    """The kept factorised Hessian only preconditions PCG on the current one: the fit is
    the one of a new Newton system at every iteration."""
    direct = _zero_entry_fit(monkeypatch, ProjectedNewton(newton="direct", tol=1e-9))
    lagged = _zero_entry_fit(monkeypatch, ProjectedNewton(tol=1e-9), fresh_budget=0)
    assert lagged.converged_ and direct.converged_
    assert {kind.split(",")[0] for kind in lagged.history_["newton"][1:]} == {"lagged"}
    assert lagged.objective_ == pytest.approx(direct.objective_, rel=1e-12)
    np.testing.assert_allclose(lagged.entry_weights_, direct.entry_weights_, atol=1e-6)
    np.testing.assert_allclose(lagged.zero_entry_weights_, direct.zero_entry_weights_, atol=1e-6)
    np.testing.assert_allclose(lagged.intercept_, direct.intercept_, atol=1e-6)


def test_lagged_newton_matrix_is_formed_anew_only_after_a_long_pcg(monkeypatch):
    """Each Hessian formed serves the iterations until a PCG needs more than
    ``LAGGED_PRODUCTS`` products; with none allowed, one is formed every iteration."""
    import importlib

    module = importlib.import_module("convexagg.solvers.projected_newton")
    formed = []
    hessian = BlockedObjective.hessian

    def counted(self, point, variables=None):
        formed.append(variables)
        return hessian(self, point, variables)

    monkeypatch.setattr(BlockedObjective, "hessian", counted)
    fit = _zero_entry_fit(monkeypatch, ProjectedNewton(tol=1e-9), fresh_budget=0)
    cg = np.asarray(fit.history_["cg_iter"][1:])
    assert all(v is None for v in formed)  # the whole Hessian, for any free set after it
    # the first iteration forms one, then each iteration after a PCG above the limit
    assert len(formed) == 1 + int(np.sum(cg[:-1] > module.LAGGED_PRODUCTS))
    assert len(formed) < cg.size
    formed.clear()
    monkeypatch.setattr(module, "LAGGED_PRODUCTS", 0)
    fit = _zero_entry_fit(monkeypatch, ProjectedNewton(tol=1e-9), fresh_budget=0)
    assert len(formed) == len(fit.history_["cg_iter"]) - 1


def test_auto_keeps_a_fresh_newton_system_where_it_is_cheap(monkeypatch):
    """Below ``FRESH_BUDGET`` multiply-adds every iteration solves its own system."""
    fit = _zero_entry_fit(monkeypatch, ProjectedNewton(tol=1e-9))
    assert {kind.split(",")[0] for kind in fit.history_["newton"][1:]} == {"direct"}


def test_a_kept_newton_matrix_goes_with_the_next_warm_start(monkeypatch):
    """A solve warm-started from one that kept a factorised Hessian (the decoders' solve
    loop hands it on) preconditions with it: no Hessian formed at its first iteration,
    the same optimum as a direct solve; the loop's results hold none."""
    import importlib

    from binary_outputs import noisy_code_outputs
    from convexagg.codes import one_vs_one
    from convexagg.decoders.fitting import solve_path

    module = importlib.import_module("convexagg.solvers.projected_newton")
    monkeypatch.setattr(module, "FRESH_BUDGET", 0)
    code = one_vs_one(6)
    Q, y = noisy_code_outputs(code, 300, 4)
    first = BlockedObjective.from_outputs(Q, code, y, Penalty(1e-3), fit_intercept=True)
    second = first.with_penalty(Penalty(3e-3, intercept_l2=1e-3))
    solver = ProjectedNewton(tol=1e-9)
    kept = solver.solve(first)
    assert kept.newton_matrix.factor is not None
    formed = []
    hessian = BlockedObjective.hessian
    monkeypatch.setattr(
        BlockedObjective,
        "hessian",
        lambda self, *a, **k: formed.append(1) or hessian(self, *a, **k),
    )
    result = solver.solve(second, kept)
    cg = np.asarray(result.history["cg_iter"][1:])
    assert {k.split(",")[0] for k in result.history["newton"][1:]} == {"lagged"}
    assert len(formed) == int(np.sum(cg[:-1] > module.LAGGED_PRODUCTS))
    direct = ProjectedNewton(newton="direct", tol=1e-9).solve(second)
    assert second.value(result.w) == pytest.approx(second.value(direct.w), rel=1e-12)
    formed.clear()
    points = solve_path([[first], [second]], solver)
    assert all(p.result.newton_matrix is None for p in points)
    first_cg = np.asarray(points[0].result.history["cg_iter"][1:])
    second_cg = np.asarray(points[1].result.history["cg_iter"][1:])
    # the first solve forms one at its start, the second none at its own
    assert len(formed) == 1 + int(np.sum(first_cg[:-1] > module.LAGGED_PRODUCTS)) + int(
        np.sum(second_cg[:-1] > module.LAGGED_PRODUCTS)
    )


def test_lagged_newton_matrix_is_taken_once_pcg_has_spent_its_price(monkeypatch):
    """Where a direct step would not form a Hessian every iteration, PCG starts with the
    diagonal and takes the kept factorisation once its products cost as much."""
    import importlib

    module = importlib.import_module("convexagg.solvers.projected_newton")
    monkeypatch.setattr(module, "DENSE_MAX_FREE", 10)
    direct = _zero_entry_fit(monkeypatch, ProjectedNewton(newton="direct", tol=1e-9))
    monkeypatch.setattr(module, "FACTOR_SPEEDUP", 1e12)  # a factorisation priced near 0
    cheap = _zero_entry_fit(monkeypatch, ProjectedNewton(tol=1e-9))
    kinds = [kind.split(",")[0] for kind in cheap.history_["newton"][1:]]
    assert kinds[0] == "diagonal" and set(kinds[1:]) == {"lagged"}
    assert cheap.objective_ == pytest.approx(direct.objective_, rel=1e-12)
    monkeypatch.setattr(module, "FACTOR_SPEEDUP", 1e-12)  # never worth it
    dear = _zero_entry_fit(monkeypatch, ProjectedNewton(tol=1e-9))
    assert {kind.split(",")[0] for kind in dear.history_["newton"][1:]} == {"diagonal"}
    assert dear.objective_ == pytest.approx(direct.objective_, rel=1e-10)
