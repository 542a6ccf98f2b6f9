"""Dask scale-out: binaries trained on a real LocalCluster, the aggregation fitted over
row-chunked Dask arrays (one pass per Newton iteration), lazy block-wise prediction.

One small ``distributed.LocalCluster`` (2 worker processes, 1 thread each) is started
for the module; the data are tiny so the whole module runs in seconds.
"""

import logging
import subprocess
import sys

import numpy as np
import pytest

da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")
distributed = pytest.importorskip("distributed")

import joblib  # noqa: E402
from sklearn.datasets import load_iris  # noqa: E402
from sklearn.linear_model import LogisticRegression  # noqa: E402
from sklearn.svm import LinearSVC  # noqa: E402

from convexagg import ConvexAggregationClassifier, ConvexDecoder  # noqa: E402
from convexagg.aggregation import DenseObjective, Penalty, stack_losses  # noqa: E402
from convexagg.aggregation.distributed import ChunkedPoint, DaskObjective  # noqa: E402
from convexagg.batched_logistic import per_binary_path  # noqa: E402
from convexagg.codes import make_code  # noqa: E402
from convexagg.estimator import ENTRY_WEIGHT_SHRINKAGE_RANGE  # noqa: E402
from convexagg.losses import binary_losses  # noqa: E402
from convexagg.solvers import (  # noqa: E402
    InteriorPoint,
    ProjectedNewton,
    interior_point,
    projected_newton,
)
from helpers import distance_to_optimum_bound  # noqa: E402


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        dashboard_address=":0",  # a free port: another cluster may hold 8787
        memory_limit="1GiB",
        silence_logs=logging.ERROR,
    )
    with distributed.Client(cluster) as c:
        yield c
    cluster.close()


def _outputs(seed=0, K=5, n=1200, code_name="ovo", noise=1.5):
    """Binary outputs that look like trained binaries': informative where the code
    uses the class, noise where it does not."""
    rng = np.random.default_rng(seed)
    code = make_code(code_name, K, random_state=seed)
    y = rng.integers(0, K, size=n)
    margin = 2.0 * code[y] + noise * rng.normal(size=(n, code.shape[1]))
    return 1.0 / (1.0 + np.exp(-margin)), y, code


def _poisoned(shape, chunks):
    """A Dask array whose every block raises when computed: proves laziness."""

    def boom():
        raise RuntimeError("this block was computed")

    rows = [da.from_delayed(dask.delayed(boom)(), shape=(c, shape[1]), dtype=float) for c in chunks]
    return da.concatenate(rows, axis=0)


def test_core_package_does_not_import_dask():
    code = (
        "import sys, numpy as np\n"
        "from sklearn.datasets import load_iris\n"
        "import convexagg, convexagg.solvers, convexagg.decoders\n"
        "X, y = load_iris(return_X_y=True)\n"
        "convexagg.ConvexAggregationClassifier().fit(X, y).predict_proba(X)\n"
        "assert not [m for m in sys.modules if m.split('.')[0] in ('dask', 'distributed')]\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.parametrize(
    "code_name, fit_intercept, weighted", [("ovo", False, False), ("ecoc", True, True)]
)
def test_partial_sums_equal_in_memory_objective(code_name, fit_intercept, weighted):
    """Value, gradient and Hessian over uneven, column-split blocks with labels chunked
    differently equal the in-memory objective (synchronous scheduler); with intercepts
    and sample weights as well."""
    Q, y, code = _outputs(seed=1, n=500, code_name=code_name)
    penalty = Penalty(0.01)
    rng = np.random.default_rng(2)
    w = rng.uniform(0.1, 1.0, size=code.shape[1] + (code.shape[0] if fit_intercept else 0))
    s = rng.uniform(0.5, 2.0, size=500) if weighted else None
    kw = dict(fit_intercept=fit_intercept, sample_weight=s)
    ref = DenseObjective(stack_losses(*binary_losses(Q)), code, y, penalty, **kw)
    p_ref = ref.evaluate(w)
    Qd = da.from_array(Q, chunks=((0, 123, 200, 177), (3, Q.shape[1] - 3)))
    yd = da.from_array(y, chunks=100)
    if weighted:
        kw["sample_weight"] = da.from_array(s, chunks=250)
    with dask.config.set(scheduler="sync"):
        obj = DaskObjective(Qd, yd, code, penalty, split_every=2, **kw)
        point = obj.evaluate(w)
        assert obj.n_blocks == 3 and obj.n_passes == 1
        assert point.value == pytest.approx(p_ref.value, rel=1e-13)
        np.testing.assert_allclose(point.grad, p_ref.grad, rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(obj.hessian(point), ref.hessian(p_ref), rtol=1e-11, atol=1e-15)
        np.testing.assert_allclose(obj.hess_diag(point), ref.hess_diag(p_ref), rtol=1e-11)
        v = np.arange(w.size, dtype=float)
        np.testing.assert_allclose(obj.hessp(point, v), ref.hessp(p_ref, v), rtol=1e-10)
        assert obj.value(w) == pytest.approx(p_ref.value, rel=1e-13)
        assert obj.n_passes == 2


def test_interior_point_one_pass_per_newton_iteration(client):
    """Exact Newton (Cholesky) on the chunked and on the in-memory objective follows
    the same iterates; every pass is a start point or a line-search trial."""
    Q, y, code = _outputs(seed=3)
    penalty = Penalty(1e-3)
    ref = interior_point(
        DenseObjective(stack_losses(*binary_losses(Q)), code, y, penalty),
        tol=1e-8,
        newton="direct",
    )
    Qd, yd = da.from_array(Q, chunks=(250, -1)), da.from_array(y, chunks=250)
    obj = DaskObjective(Qd, yd, code, penalty)
    res = interior_point(obj, tol=1e-8, newton="direct")
    assert res.converged and res.n_iter == ref.n_iter
    np.testing.assert_allclose(res.w, ref.w, rtol=0, atol=1e-8)
    np.testing.assert_allclose(res.history["weights"], ref.history["weights"], rtol=0, atol=1e-8)
    # start point + at least one trial per iteration; rejected trials are the extra passes
    assert res.n_iter + 1 <= obj.n_passes <= 3 * res.n_iter + 1


def test_decoder_fit_on_dask_equals_in_memory(client, monkeypatch):
    """ConvexDecoder.fit on Dask arrays: same weights as in memory within 1e-8 for
    the same solver, one dask.compute per pass, and Q is never turned into a
    NumPy array."""
    Q, y, code = _outputs(seed=4)
    same = ProjectedNewton(newton="direct", init="fixed", tol=1e-8)
    mem = ConvexDecoder(alpha=1e-3, solver=same).fit(Q, y, code)

    Qd = da.from_array(Q, chunks=(300, -1)).persist()
    yd = da.from_array(y, chunks=500)  # not aligned with Q's rows: rechunked

    def gathered(*args, **kwargs):
        raise AssertionError("Q was gathered")

    n_computes = 0
    compute = dask.compute

    def counting_compute(*args, **kwargs):
        nonlocal n_computes
        n_computes += 1
        return compute(*args, **kwargs)

    monkeypatch.setattr(da.Array, "__array__", gathered)
    monkeypatch.setattr(da.Array, "compute", gathered)
    monkeypatch.setattr(dask, "compute", counting_compute)
    dec = ConvexDecoder(alpha=1e-3, solver=same).fit(Qd, yd, code)
    monkeypatch.undo()

    assert dec.converged_ and dec.n_iter_ == mem.n_iter_
    np.testing.assert_allclose(dec.weights_, mem.weights_, rtol=0, atol=1e-8)
    assert dec.objective_ == pytest.approx(mem.objective_, rel=1e-12)
    assert dec.n_passes_ == n_computes >= dec.n_iter_ + 1
    assert dec.code_.shape == code.shape and dec.n_classes_ == code.shape[0]

    # the default solver on Dask (fixed start: a uniform one would cost ~15 passes)
    # and in memory (uniform start) agree within what their tolerance guarantees:
    # each is within the strong-convexity bound of w*
    default = ConvexDecoder(alpha=1e-3).fit(Qd, yd, code)
    in_memory = ConvexDecoder(alpha=1e-3).fit(Q, y, code)
    objective = DenseObjective(stack_losses(*binary_losses(Q)), code, y, Penalty(1e-3))
    bound = distance_to_optimum_bound(objective, default.weights_)
    bound += distance_to_optimum_bound(objective, in_memory.weights_)
    assert np.linalg.norm(default.weights_ - in_memory.weights_) <= bound


def test_default_solver_on_dask_takes_its_hessian_from_a_sample(client, monkeypatch):
    """The projected Newton method on Dask: the Hessian from a seeded row sample drawn
    in the first pass (in proportion to the blocks), the exact value and gradient in
    every pass, one pass per line-search trial; it reaches the in-memory default's
    objective value within what the two stopping tests guarantee."""
    import convexagg.aggregation.distributed as distributed_module

    Q, y, code = _outputs(seed=11, n=5000)
    penalty = Penalty(1e-3)
    Qd, yd = da.from_array(Q, chunks=(700, -1)), da.from_array(y, chunks=700)
    with pytest.raises(ValueError, match="hessian_rows must be a positive int"):
        DaskObjective(Qd, yd, code, penalty, hessian_rows=0)
    obj = DaskObjective(Qd, yd, code, penalty, hessian_rows=900, random_state=1)
    point = obj.evaluate(np.full(code.shape[1], 0.5))
    assert obj.n_passes == 1 and obj.sample.n_samples == 900
    again = DaskObjective(Qd, yd, code, penalty, hessian_rows=900, random_state=1)
    again.evaluate(np.zeros(code.shape[1]))
    np.testing.assert_array_equal(again.sample.y, obj.sample.y)  # seeded
    ref = DenseObjective(stack_losses(*binary_losses(Q)), code, y, penalty)
    full = ref.hessian(ref.evaluate(point.x))
    H = obj.hessian(point)
    assert obj.n_passes == 1  # the Hessian costs no pass
    assert 0 < np.abs(H - full).max() <= 0.2 * np.abs(full).max()  # a sample's, close
    # the penalty is the objective's own, also after with_penalty
    heavier = obj.with_penalty(Penalty(0.1))
    H2 = heavier.hessian(ChunkedPoint(x=point.x, value=point.value, grad=point.grad))
    np.testing.assert_allclose(H2 - H, (0.1 - 1e-3) * np.eye(H.shape[0]), atol=1e-12)
    # every evaluation the solver makes (start point, line-search trials) is one pass
    res = projected_newton(obj, np.full(code.shape[1], 1 / code.shape[1]), tol=1e-6)
    assert res.converged and obj.n_passes == 1 + res.n_evaluations

    monkeypatch.setattr(distributed_module, "HESSIAN_ROWS", 900)
    tol = 1e-7
    solver = ProjectedNewton(tol=tol)
    dec = ConvexDecoder(alpha=1e-3, solver=solver).fit(Qd, yd, code)
    mem = ConvexDecoder(alpha=1e-3, solver=solver).fit(Q, y, code)
    assert dec.converged_ and mem.converged_
    assert dec.n_passes_ >= dec.n_iter_ + 1
    f_dask, f_mem = ref.value(dec.weights_), ref.value(mem.weights_)
    assert dec.objective_ == pytest.approx(f_dask, rel=1e-12)
    # f - f* <= |pg|^2 / (2 alpha) for each (alpha-strongly convex), plus rounding
    assert abs(f_dask - f_mem) <= tol**2 / (2 * 1e-3) + 1e-12 * f_mem


FIXED = dict(newton="direct", init="fixed")


@pytest.mark.parametrize(
    "options, atol",
    [
        ({"solver": InteriorPoint(method="predictor_corrector", newton="direct")}, 1e-8),
        ({"solver": InteriorPoint(newton="cg")}, 1e-8),
        ({"penalty": "elasticnet", "alpha": 1e-2, "solver": ProjectedNewton(**FIXED)}, 1e-8),
        ({"fit_intercept": True, "solver": ProjectedNewton(**FIXED)}, 1e-8),
        # float32 products: the blocks accumulate in other chunks than in memory
        ({"solver": ProjectedNewton(**FIXED, dtype="float32")}, 1e-5),
    ],
    ids=str,
)
def test_decoder_options_on_dask_equal_in_memory(client, options, atol):
    Q, y, code = _outputs(seed=9, n=800)
    mem = ConvexDecoder(**options).fit(Q, y, code)
    dec = ConvexDecoder(**options).fit(da.from_array(Q, chunks=(300, -1)), y, code)
    assert dec.n_iter_ == mem.n_iter_ and dec.n_passes_ >= dec.n_iter_ + 1
    np.testing.assert_allclose(dec.weights_, mem.weights_, rtol=0, atol=atol)
    np.testing.assert_allclose(dec.intercept_, mem.intercept_, rtol=0, atol=atol)


def test_sample_weights_on_dask_equal_in_memory(client):
    Q, y, code = _outputs(seed=10, n=600)
    s = np.random.default_rng(0).integers(0, 4, size=600).astype(float)
    solver = ProjectedNewton(**FIXED, tol=1e-9)
    mem = ConvexDecoder(solver=solver).fit(Q, y, code, sample_weight=s)
    dec = ConvexDecoder(solver=solver).fit(
        da.from_array(Q, chunks=(200, -1)), y, code, sample_weight=da.from_array(s, chunks=150)
    )
    np.testing.assert_allclose(dec.weights_, mem.weights_, rtol=0, atol=1e-8)


def test_decoder_numpy_labels_and_margins(client):
    """A NumPy y is split like Q's rows; margin outputs with a margin loss."""
    Q, y, code = _outputs(seed=5, n=600)
    margins = np.log(Q / (1 - Q))
    solver = ProjectedNewton(**FIXED)
    mem = ConvexDecoder(loss="logistic", solver=solver).fit(margins, y, code, output="margin")
    dec = ConvexDecoder(loss="logistic", solver=solver).fit(
        da.from_array(margins, chunks=(250, -1)), y, code, output="margin"
    )
    np.testing.assert_allclose(dec.weights_, mem.weights_, rtol=0, atol=1e-8)
    # and a Dask y with an in-memory Q
    dec2 = ConvexDecoder(loss="logistic", solver=solver).fit(
        margins, da.from_array(y, chunks=200), code, output="margin"
    )
    np.testing.assert_allclose(dec2.weights_, mem.weights_, rtol=0, atol=1e-8)


def test_decoder_validates_blocks_in_the_pass(client):
    Q, y, code = _outputs(seed=6, n=400)
    bad = Q.copy()
    bad[350, 2] = np.nan
    with pytest.raises(ValueError, match="NaN or infinite"):
        ConvexDecoder().fit(da.from_array(bad, chunks=(100, -1)), y, code)
    bad[350, 2] = 1.5
    with pytest.raises(ValueError, match=r"outside \[0, 1\]"):
        ConvexDecoder().fit(da.from_array(bad, chunks=(100, -1)), y, code)
    y_bad = y.copy()
    y_bad[-1] = code.shape[0]
    with pytest.raises(ValueError, match="class indices"):
        ConvexDecoder().fit(da.from_array(Q, chunks=(100, -1)), da.from_array(y_bad), code)


def test_decoder_dask_errors_before_any_pass():
    Q, y, code = _outputs(seed=7, n=200)
    Qd = da.from_array(Q, chunks=(50, -1))
    with pytest.raises(ValueError, match="one label per row"):
        ConvexDecoder().fit(Qd, y[:-1], code)
    with pytest.raises(ValueError, match="integer class indices"):
        ConvexDecoder().fit(Qd, y.astype(float), code)
    with pytest.raises(ValueError, match="compute_chunk_sizes"):
        ConvexDecoder().fit(Qd[Qd[:, 0] > 0.5], y, code)
    yd = da.from_array(y, chunks=50)
    with pytest.raises(ValueError, match="compute_chunk_sizes"):
        ConvexDecoder().fit(Q, yd[yd >= 0], code)
    with pytest.raises(ValueError, match="one label per row"):
        ConvexDecoder().fit(Q[:-1], yd, code)
    with pytest.raises(ValueError, match="columns but the code matrix"):
        ConvexDecoder().fit(Qd[:, :-1], y, code)
    with pytest.raises(ValueError, match="not defined for output"):
        ConvexDecoder(loss="hinge").fit(Qd, y, code)
    with pytest.raises(ValueError, match="Dask arrays cannot use InteriorPoint.init='subsample'"):
        ConvexDecoder(solver=InteriorPoint(init="subsample")).fit(Qd, y, code)
    with pytest.raises(TypeError, match="ProjectedNewton needs take, which it lacks"):
        ConvexDecoder(solver=ProjectedNewton(newton="cg", preconditioner="subsample")).fit(
            Qd, y, code
        )
    with pytest.raises(ValueError, match="formulation='likelihood'"):
        ConvexDecoder(formulation="large_margin").fit(Qd, y, code)


def test_decoder_predict_on_dask_is_lazy_and_blockwise(client):
    Q, y, code = _outputs(seed=8, n=700)
    dec = ConvexDecoder().fit(Q, y, code)
    lazy = _poisoned((700, Q.shape[1]), [300, 400])
    for method in ("predict_proba", "decision_function", "predict"):
        out = getattr(dec, method)(lazy)  # builds a graph, computes nothing
        assert isinstance(out, da.Array)
        with pytest.raises(RuntimeError, match="computed"):
            out.compute()
        got = getattr(dec, method)(da.from_array(Q, chunks=(300, 7))).compute()
        np.testing.assert_allclose(got, getattr(dec, method)(Q), rtol=1e-13, atol=1e-15)
    with pytest.raises(ValueError, match="shape"):
        dec.predict_proba(lazy[:, :-1])


def test_estimator_trains_binaries_on_the_cluster(client):
    """Under joblib's dask backend the binary problems fitted one by one are fitted on
    the workers (the batched trainer runs in the calling process: forced off here)."""
    X, y = load_iris(return_X_y=True)
    worker_addresses = set(client.scheduler_info()["workers"])
    with distributed.get_task_stream(client) as tasks, per_binary_path():
        with joblib.parallel_config(backend="dask"):
            clf = ConvexAggregationClassifier(LogisticRegression(), code="ovo", random_state=0)
            clf.fit(X, y)
    # _fold_chain: the default fits each column's binaries on the folds (cv=5) in turn
    fitted_on = {t["worker"] for t in tasks.data if "_fold_chain" in str(t["key"])}
    assert fitted_on and fitted_on <= worker_addresses
    with per_binary_path():
        clf_ref = ConvexAggregationClassifier(LogisticRegression(), code="ovo", random_state=0)
        ref = clf_ref.fit(X, y)
    np.testing.assert_allclose(clf.weights_, ref.weights_, rtol=0, atol=1e-10)


@pytest.mark.parametrize(
    "estimator, code, loss",
    [(LogisticRegression(), "ovo", "cross_entropy"), (LinearSVC(), "ovr", "logistic")],
)
def test_estimator_predicts_dask_X_blockwise(client, estimator, code, loss):
    X, y = load_iris(return_X_y=True)
    labels = np.array(["setosa", "versicolor", "virginica"])[y]
    clf = ConvexAggregationClassifier(estimator, code=code, loss=loss, n_jobs=2).fit(X, labels)
    Xd = da.from_array(X, chunks=(60, 2))
    for method in ("predict_proba", "predict", "decision_function", "predict_binary_proba"):
        out = getattr(clf, method)(Xd)
        assert isinstance(out, da.Array)
        expected = getattr(clf, method)(X)
        got = out.compute()
        assert got.shape == expected.shape and got.dtype == expected.dtype
        if got.dtype.kind == "f":
            np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-15)
        else:
            assert np.array_equal(got, expected)
    assert isinstance(clf.predict_proba(_poisoned(X.shape, [75, 75])), da.Array)  # lazy
    with pytest.raises(ValueError, match="expecting 4 features"):
        clf.predict_proba(Xd[:, :3])


def test_out_of_core_pipeline_on_the_cluster(client):
    """Binaries on the cluster, their outputs on a Dask X, weights fitted out of core:
    the same weights as the in-memory estimator (whose fit starts from its zero entries'
    choice, the out-of-core one from the solver's start: both solved tightly)."""
    X, y = load_iris(return_X_y=True)
    solver = ProjectedNewton(**FIXED, tol=1e-10)
    with joblib.parallel_config(backend="dask"):
        clf = ConvexAggregationClassifier(code="ovo", alpha=1e-3, solver=solver, cv="in_sample")
        clf.fit(X, y)
    Q = clf.predict_binary_proba(da.from_array(X, chunks=(50, -1)))
    # the classifier's model (its default: entry weights, class intercepts, zero entries)
    shrinkage = clf.decoder_.entry_weight_shrinkage
    assert shrinkage == ENTRY_WEIGHT_SHRINKAGE_RANGE[1] and clf.decoder_.fit_intercept  # 150 rows
    assert clf.zero_entry_penalty_ is not None
    decoder = ConvexDecoder(
        alpha=1e-3,
        solver=solver,
        entry_weight_shrinkage=shrinkage,
        fit_intercept=True,
        zero_entry_penalty=clf.zero_entry_penalty_,
    )
    decoder.fit(Q, da.from_array(y, chunks=50), clf.code_matrix_)
    # two starts, one optimum: a projected gradient below 1e-10 leaves weights within 1e-7
    np.testing.assert_allclose(decoder.weights_, clf.weights_, rtol=0, atol=1e-7)
    np.testing.assert_allclose(decoder.entry_weights_, clf.entry_weights_, rtol=0, atol=1e-7)
    np.testing.assert_allclose(
        decoder.zero_entry_weights_, clf.zero_entry_weights_, rtol=0, atol=1e-7
    )
