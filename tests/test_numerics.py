"""Numerics never silently break: infinite losses, overflowing
margins, separable data, duplicate columns, folds without some classes, float32,
1,000-column codes, label types."""

import tracemalloc
import warnings

import numpy as np
import pytest
from sklearn.datasets import load_iris, make_blobs
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression

from convexagg import CodeMatrixClassifier, ConvexAggregationClassifier, ConvexDecoder
from convexagg.aggregation import DenseObjective, Penalty, Point, stack_losses
from convexagg.codes import one_vs_one, one_vs_rest, sparse_random
from convexagg.losses import LOSS_CAP, binary_losses
from convexagg.solvers import InteriorPoint, ProjectedNewton, interior_point, projected_newton
from helpers import DECODERS, distance_to_optimum_bound, scores


@pytest.fixture(scope="module")
def iris():
    return load_iris(return_X_y=True)


def _assert_probabilities(P, n, K):
    assert P.shape == (n, K) and P.dtype == np.float64
    assert np.isfinite(P).all() and (P >= 0).all()
    np.testing.assert_allclose(P.sum(axis=1), 1.0, atol=1e-12)


# --------------------------------------------------------------------------- infinite losses


@pytest.mark.parametrize("Decoder", DECODERS, ids=lambda c: c.__name__)
def test_outputs_of_exactly_zero_and_one(Decoder):
    rng = np.random.default_rng(0)
    code = one_vs_one(4)
    y = np.arange(40) % 4
    Q = rng.integers(0, 2, size=(40, code.shape[1])).astype(float)  # only 0 and 1
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # no overflow, no log(0)
        dec = Decoder().fit(Q, y, code)
        P = scores(dec, Q)
    if hasattr(dec, "predict_proba"):
        _assert_probabilities(P, 40, 4)
    else:  # hard decoders: finite scores
        assert P.shape == (40, 4) and np.isfinite(P).all()
    if hasattr(dec, "weights_"):
        assert np.isfinite(dec.weights_).all()


@pytest.mark.parametrize("loss", ["exponential", "logistic", "hinge"])
def test_huge_margins_give_capped_finite_losses(loss):
    m = np.array([[-1e300, -800.0, -31.0, -3.0, 0.0, 3.0, 31.0, 800.0, 1e300]])
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        L_pos, L_neg = binary_losses(m, loss, "margin")
    for L in (L_pos, L_neg):
        assert np.isfinite(L).all() and (L >= 0).all() and L.max() <= LOSS_CAP
    # moderate margins are untouched
    exact = {
        "exponential": np.exp(-m[0, 3:6]),
        "logistic": np.log1p(np.exp(-m[0, 3:6])),
        "hinge": np.maximum(0, 1 - m[0, 3:6]),
    }[loss]
    np.testing.assert_allclose(L_pos[0, 3:6], exact, rtol=1e-15)
    if loss == "exponential":  # margins clipped to [-30, 30]
        assert L_pos[0, 6] == L_pos[0, 7] == np.exp(-30.0)
        assert L_pos[0, 2] == L_pos[0, 1] == LOSS_CAP


@pytest.mark.parametrize("loss", ["exponential", "logistic", "hinge"])
def test_decoder_on_overflowing_margins(loss):
    rng = np.random.default_rng(1)
    code = one_vs_one(3)
    y = np.arange(30) % 3
    M = np.where(code[y] == 1, 800.0, -800.0) * rng.uniform(0.5, 1.5, size=(30, 3))
    M[::4] *= -1  # some confidently wrong outputs
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        warnings.simplefilter("ignore", ConvergenceWarning)
        dec = ConvexDecoder(loss=loss).fit(M, y, code, output="margin")
        P = dec.predict_proba(M * 1e100)
    assert np.isfinite(dec.weights_).all()
    _assert_probabilities(P, 30, 3)


# --------------------------------------------------------------------------- separable data


@pytest.mark.parametrize("alpha", [1e-12, 0.0])
@pytest.mark.parametrize("code", ["ovr", "ovo"])
def test_separable_data_with_tiny_alpha(code, alpha):
    X, y = make_blobs(90, 2, centers=[[-10, 0], [10, 0], [0, 10]], random_state=0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        clf = ConvexAggregationClassifier(
            LogisticRegression(C=1e8, max_iter=1000), code=code, alpha=alpha
        ).fit(X, y)
    assert np.isfinite(clf.weights_).all()
    _assert_probabilities(clf.predict_proba(X), 90, 3)
    assert clf.score(X, y) == 1.0
    assert clf.n_iter_ <= clf.decoder_.solver_.max_iter
    converged = clf.decoder_.converged_
    assert converged or any(issubclass(w.category, ConvergenceWarning) for w in caught)


def _separable_outputs():
    rng = np.random.default_rng(0)
    code = one_vs_rest(3)
    y = rng.integers(0, 3, 60)
    return np.where(code[y] == 1, 0.6, 0.4), y, code


@pytest.mark.parametrize("solver", [InteriorPoint, ProjectedNewton])
def test_separable_outputs_stop_at_max_iter_with_finite_weights_and_a_warning(solver):
    Q, y, code = _separable_outputs()  # alpha=0: the weights grow without bound
    # (from the equal-weights start the projected Newton method lands where f = 0 in
    # float64, a point its tolerance accepts; from w = 1/M it has to climb)
    settings = dict(tol=1e-12, max_iter=3, init="fixed")
    with pytest.warns(ConvergenceWarning, match="stopped after 3 iterations.*increase max_iter"):
        dec = ConvexDecoder(alpha=0.0, solver=solver(**settings)).fit(Q, y, code)
    assert not dec.converged_ and np.isfinite(dec.weights_).all()
    assert np.isfinite(dec.history_["objective"]).all()
    _assert_probabilities(dec.predict_proba(Q), 60, 3)


class _NaNAwayFromStart:
    """A convex objective that returns NaN everywhere except at its start point."""

    def __init__(self, objective):
        self.inner = objective
        self.n_samples, self.n_weights = objective.n_samples, objective.n_weights
        self.n_intercepts, self.n_variables = 0, objective.n_weights
        self.start = np.full(self.n_weights, 1.0 / self.n_weights)

    def evaluate(self, w):
        point = self.inner.evaluate(w)
        if np.array_equal(w, self.start):
            return point
        return Point(x=w, value=np.nan, grad=np.full_like(point.grad, np.nan), P=point.P)

    def value(self, w):
        return self.evaluate(w).value

    def hessian(self, point, variables=None):
        return self.inner.hessian(point, variables)

    def hessp(self, point, v):
        return self.inner.hessp(point, v)

    def hess_diag(self, point):
        return self.inner.hess_diag(point)


def test_line_search_failure_exit_keeps_nan_out():
    Q, y, code = _separable_outputs()
    obj = _NaNAwayFromStart(DenseObjective(stack_losses(*binary_losses(Q)), code, y))
    with pytest.warns(ConvergenceWarning, match="no step reduced the KKT residual"):
        result = interior_point(obj)
    assert result.message == "line_search" and not result.converged
    np.testing.assert_array_equal(result.w, obj.start)
    assert np.isfinite(result.z).all()
    with pytest.warns(ConvergenceWarning, match="no step decreased the objective"):
        result = projected_newton(obj, obj.start, newton="direct")
    assert result.message == "line_search" and not result.converged
    np.testing.assert_array_equal(result.w, obj.start)


@pytest.mark.filterwarnings("ignore:invalid value:RuntimeWarning")  # inf * 0 in the check
def test_nonfinite_start_point_is_a_clear_error():
    Q, y, code = _separable_outputs()
    L = stack_losses(*binary_losses(Q))
    L[0, 0] = np.inf
    with pytest.raises(ValueError, match="not finite at the start point"):
        interior_point(DenseObjective(L, code, y, Penalty(1e-4)))
    with pytest.raises(ValueError, match="not finite at the start point"):
        projected_newton(DenseObjective(L, code, y, Penalty(1e-4)), np.ones(3))


@pytest.mark.parametrize(
    "solver",
    [
        InteriorPoint(newton="cg", tol=1e-8),
        InteriorPoint(newton="direct", tol=1e-8),
        ProjectedNewton(newton="direct", tol=1e-8),
        ProjectedNewton(newton="cg", tol=1e-8),
    ],
    ids=str,
)
def test_singular_newton_system_with_zero_alpha(solver):
    """alpha = 0 and all-zero outputs (found by hypothesis): the Hessian is singular
    and rounding makes it indefinite; Cholesky falls back to least squares."""
    code = np.array([[-1, 1], [-1, -1], [1, 0]])
    Q = np.zeros((2, 2))
    obj = DenseObjective(stack_losses(*binary_losses(Q)), code, np.array([0, 0]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        result = solver.set_params(init="fixed").solve(obj)
    assert np.isfinite(result.w).all() and (result.w >= 0).all()
    assert obj.value(result.w) <= obj.value(np.full(2, 0.5))


# --------------------------------------------------------------------------- duplicate columns


def test_duplicate_columns_share_the_weight():
    """With every column doubled, f2(w, w') = f(w + w') + alpha/2 (|w|^2 + |w'|^2) is
    minimised at w = w' = u/2 where u minimises f with alpha/2: the duplicated
    problem must give the same probabilities as the original one with half the
    regularisation, and equal weights on the twins."""
    rng = np.random.default_rng(0)
    code = one_vs_one(4)
    y = rng.integers(0, 4, 80)
    Q = np.clip(0.5 + 0.3 * code[y] + 0.25 * rng.standard_normal((80, 6)), 0, 1)
    alpha, solver = 1e-2, ProjectedNewton(tol=1e-10)
    twice = ConvexDecoder(alpha=alpha, solver=solver)
    twice.fit(np.hstack([Q, Q]), y, np.hstack([code, code]))
    once = ConvexDecoder(alpha=alpha / 2, solver=solver).fit(Q, y, code)
    w2, u = twice.weights_, once.weights_
    # both within the distance the KKT conditions at tol guarantee from their optimum
    L2 = stack_losses(*binary_losses(np.hstack([Q, Q])))
    obj2 = DenseObjective(L2, twice.code_, y, Penalty(alpha))
    obj1 = DenseObjective(stack_losses(*binary_losses(Q)), code, y, Penalty(alpha / 2))
    d2, d1 = distance_to_optimum_bound(obj2, w2), distance_to_optimum_bound(obj1, u)
    assert d1 < 1e-3 and d2 < 1e-3
    assert np.linalg.norm(w2[:6] - w2[6:]) <= 2 * d2
    assert np.linalg.norm(w2[:6] + w2[6:] - u) <= np.sqrt(2) * d2 + d1
    np.testing.assert_allclose(
        twice.predict_proba(np.hstack([Q, Q])), once.predict_proba(Q), atol=1e-3
    )


def test_duplicate_columns_in_a_classifier(iris):
    X, y = iris
    code = np.hstack([one_vs_rest(3), one_vs_rest(3)])
    clf = ConvexAggregationClassifier(LogisticRegression(max_iter=1000), code=code).fit(X, y)
    Q = clf.predict_binary_proba(X)
    np.testing.assert_array_equal(Q[:, :3], Q[:, 3:])  # identical classifiers
    np.testing.assert_allclose(clf.weights_[:3], clf.weights_[3:], rtol=1e-3)
    _assert_probabilities(clf.predict_proba(X), 150, 3)


# --------------------------------------------------------------------------- CV folds


@pytest.mark.parametrize("code", ["ovr", "ovo", "ecoc"])
def test_classes_missing_from_a_cv_fold(iris, code):
    X, y = iris
    keep = np.r_[0:50, 50:100, 100:102]  # class 2 has two samples
    X, y = X[keep], y[keep]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # sparse class, one-sided folds: expected
        clf = ConvexAggregationClassifier(
            LogisticRegression(max_iter=1000), code=code, cv=3, random_state=0
        ).fit(X, y)
    P = clf.predict_proba(X)
    _assert_probabilities(P, 102, 3)
    assert list(clf.classes_) == [0, 1, 2]
    assert np.isfinite(clf.weights_).all()


def test_fold_with_one_class_only(iris):
    X, y = iris
    folds = [(np.arange(50), np.arange(50, 150)), (np.arange(50, 150), np.arange(50))]
    with pytest.warns(UserWarning, match="only one side in cross-validation fold"):
        clf = ConvexAggregationClassifier(code="ovo", cv=folds).fit(X, y)
    _assert_probabilities(clf.predict_proba(X), 150, 3)


# --------------------------------------------------------------------------- float32


def test_float32_X(iris):
    X, y = iris
    P64 = ConvexAggregationClassifier(random_state=0).fit(X, y).predict_proba(X)
    clf = ConvexAggregationClassifier(random_state=0).fit(X.astype(np.float32), y)
    P32 = clf.predict_proba(X.astype(np.float32))
    _assert_probabilities(P32, 150, 3)
    np.testing.assert_allclose(P32, P64, atol=1e-2)  # the binaries' own float32 rounding


@pytest.mark.parametrize("loss, output", [("cross_entropy", "proba"), ("exponential", "margin")])
def test_float32_Q_gives_the_losses_of_its_float64_values(loss, output):
    rng = np.random.default_rng(0)
    code = one_vs_one(3)
    y = np.arange(30) % 3
    if output == "proba":
        Q = rng.uniform(size=(30, 3))
        Q[::5] = 0.0  # clipped at the float64 eps, not float32's
        Q[1::5] = 1.0
    else:
        Q = 3.0 * code[y] + rng.normal(scale=3.0, size=(30, 3))  # float32 exp rounds differently
    Q32 = Q.astype(np.float32)
    for a, b in zip(
        binary_losses(Q32, loss, output), binary_losses(Q32.astype(float), loss, output)
    ):
        assert a.dtype == np.float64
        np.testing.assert_array_equal(a, b)
    dec32 = ConvexDecoder(loss=loss).fit(Q32, y, code, output=output)
    dec64 = ConvexDecoder(loss=loss).fit(Q32.astype(float), y, code, output=output)
    np.testing.assert_array_equal(dec32.weights_, dec64.weights_)


# --------------------------------------------------------------------------- 1,000 columns


def test_thousand_column_code_without_memory_blow_up():
    """The matrix-free objective keeps memory at a few (n, 2M) arrays; the
    (n, K, M) tensor of the textbook formula would be K/2 = 20 times larger."""
    K, M, n = 40, 1000, 200
    code = sparse_random(K, M, n_candidates=1, random_state=0)
    rng = np.random.default_rng(0)
    y = rng.integers(0, K, n)
    Q = np.clip(0.5 + 0.3 * code[y] + 0.2 * rng.standard_normal((n, M)), 0, 1)
    losses_bytes = n * 2 * M * 8
    tracemalloc.start()
    try:
        dec = ConvexDecoder(alpha=1e-2).fit(Q, y, code)
        P = dec.predict_proba(Q)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    tensor_bytes = n * K * M * 8
    assert peak < 8 * losses_bytes < tensor_bytes / 2, (peak, losses_bytes)
    assert dec.weights_.shape == (M,) and np.isfinite(dec.weights_).all()
    _assert_probabilities(P, n, K)


# --------------------------------------------------------------------------- label types

LABELS = {
    "strings": np.array(["setosa", "versicolor", "virginica"]),
    "mixed-list": [1, "b", 2.5],  # numpy makes these strings, as in scikit-learn
    "object-mixed": np.array([1, "b", 2.5], dtype=object),
    "object-ints": np.array([1, 2, 3], dtype=object),
    "object-strings": np.array(["a", "b", "c"], dtype=object),
    "bools-and-none": np.array([True, False, None], dtype=object),
    "negative-ints": np.array([-5, 0, 7]),
    "integral-floats": np.array([1.0, 2.0, 3.0]),
    "uint8": np.array([3, 1, 2], dtype=np.uint8),
}


@pytest.mark.parametrize("name", LABELS)
def test_label_types_handled_like_scikit_learn(iris, name):
    X, y = iris
    labels = LABELS[name]
    y_any = [labels[k] for k in y] if isinstance(labels, list) else labels[y]
    try:
        ref = LogisticRegression(max_iter=1000).fit(X, y_any)
    except Exception as exc:  # noqa: BLE001 - the reference decides what is an error
        with pytest.raises(type(exc)):
            CodeMatrixClassifier(code="ovr").fit(X, y_any)
        return
    clf = CodeMatrixClassifier(code="ovr").fit(X, y_any)
    np.testing.assert_array_equal(clf.classes_, ref.classes_)
    assert clf.classes_.dtype == ref.classes_.dtype
    assert set(clf.predict(X)) <= set(ref.classes_)
