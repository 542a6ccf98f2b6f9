"""The batched trainer of logistic-regression binaries (:mod:`convexagg.batched_logistic`).

References: scikit-learn's own ``LogisticRegression`` fitted to ``tol=1e-10`` on each
binary's rows (its objective computed here from the coefficients), ``StandardScaler``
fitted on the same rows, repeated rows against integer sample weights, and the
per-binary path (:func:`~convexagg.batched_logistic.per_binary_path`).
"""

from __future__ import annotations

import pickle
import warnings
from unittest import mock

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn import config_context
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import StratifiedKFold
from sklearn.pipeline import Pipeline, make_pipeline
from sklearn.preprocessing import MinMaxScaler, StandardScaler
from sklearn.tree import DecisionTreeClassifier

import convexagg.batched_logistic as batched
import convexagg.binary as binary
import convexagg.out_of_fold as out_of_fold
from convexagg import ConvexAggregationClassifier
from convexagg.batched_logistic import batched_columns, per_binary_path
from convexagg.binary import ConstantBinaryPredictor, fit_binaries
from convexagg.codes import make_code, sparse_random
from convexagg.out_of_fold import fold_binaries
from helpers import assert_fitted_like, binary_parts

K = 4


@pytest.fixture(scope="module")
def data():
    """Features of different means and scales (a scaler matters), classes that overlap."""
    rng = np.random.default_rng(0)
    n, d = 160, 4
    y = np.arange(n) % K
    X = rng.normal(size=(n, d)) + 0.8 * rng.normal(size=(K, d))[y]
    X = X * np.array([1.0, 30.0, 0.2, 5.0]) + np.array([0.0, 100.0, -3.0, 20.0])
    weights = rng.integers(0, 4, size=n).astype(np.float64)
    return X, y, weights


CODES = {
    "ovr": make_code("ovr", K),
    "ovo": make_code("ovo", K),
    "ovo+ovr": make_code("ovo+ovr", K),
    "sparse_random": sparse_random(K, n_columns=8, n_candidates=5, random_state=0),
}


def _lr(**params):
    return LogisticRegression(**params)


def _scaled(**params):
    return make_pipeline(StandardScaler(), LogisticRegression(**params))


LEARNERS = {"lr": _lr, "scaled": _scaled}


def _objective(est, X, target, weight):
    """scikit-learn's LogisticRegression objective of a fitted binary on its rows:
    ``C * sum_i s_i * loss_i + ||w||^2 / 2``, computed here."""
    scaler, model = binary_parts(est)
    Z = X if scaler is None else scaler.transform(X)
    margin = Z @ model.coef_[0] + model.intercept_[0]
    loss = np.logaddexp(0.0, margin) - target * margin
    s = np.ones(target.size) if weight is None else weight
    return model.C * (s @ loss) + 0.5 * model.coef_[0] @ model.coef_[0]


def _weight_params(learner, weight):
    if weight is None:
        return {}
    if isinstance(learner, Pipeline):
        return {f"{name}__sample_weight": weight for name, _ in learner.steps}
    return {"sample_weight": weight}


def _reference(learner, X, target, weight):
    """The same binary by scikit-learn's own fit, to tol=1e-10 (its Newton solver: the
    unscaled features make L-BFGS take thousands of iterations to get there)."""
    ref = clone(learner)
    model = binary_parts(ref)[1]
    model.set_params(solver="newton-cholesky", tol=1e-10, max_iter=10000)
    return ref.fit(X, target, **_weight_params(ref, weight))


def _check_against_scikit_learn(members, trains, learner, X, y, code, weight):
    for train, fold in zip(trains, members):
        for l, est in enumerate(fold):
            rows = train[code[y[train], l] != 0]
            target = (code[y[rows], l] == 1).astype(np.int64)
            w = None if weight is None else weight[rows]
            ref = _reference(learner, X[rows], target, w)
            mine, theirs = _objective(est, X[rows], target, w), _objective(ref, X[rows], target, w)
            assert abs(mine - theirs) <= 1e-8 * abs(theirs), (l, mine, theirs)
            scaler, ref_scaler = binary_parts(est)[0], binary_parts(ref)[0]
            if scaler is not None:
                np.testing.assert_allclose(scaler.mean_, ref_scaler.mean_, rtol=1e-12, atol=1e-12)
                np.testing.assert_allclose(scaler.var_, ref_scaler.var_, rtol=1e-11)
                np.testing.assert_allclose(scaler.scale_, ref_scaler.scale_, rtol=1e-11)
                assert scaler.n_samples_seen_ == pytest.approx(ref_scaler.n_samples_seen_)


@pytest.mark.parametrize("learner_name", sorted(LEARNERS))
@pytest.mark.parametrize("code_name", sorted(CODES))
def test_every_binary_reaches_scikit_learns_optimum(data, code_name, learner_name):
    """Every column of the code, on two folds, with and without sample weights and an
    intercept: each binary's objective within 1e-8 of scikit-learn's ``tol=1e-10`` fit."""
    X, y, weights = data
    code = CODES[code_name]
    splits = list(StratifiedKFold(2, shuffle=True, random_state=0).split(X, y))
    trains = [train for train, _ in splits]
    for weight in (None, weights):
        for fit_intercept in (True, False):
            learner = LEARNERS[learner_name](fit_intercept=fit_intercept, C=2.0)
            params = _weight_params(learner, weight)
            with (
                mock.patch.object(binary, "fit_binary", side_effect=AssertionError),
                mock.patch.object(out_of_fold, "fit_binary", side_effect=AssertionError),
            ):
                members, _, _ = fold_binaries(
                    learner, X, y, code, splits, "proba", fit_params=params
                )
            _check_against_scikit_learn(members, trains, learner, X, y, code, weight)


def test_the_binaries_are_the_objects_scikit_learns_fit_leaves(data):
    X, y, _ = data
    code = CODES["ovo+ovr"]
    for learner in (
        _lr(),
        _scaled(),
        make_pipeline(StandardScaler(with_mean=False), LogisticRegression()),
        make_pipeline(StandardScaler(with_std=False), LogisticRegression()),
        make_pipeline(StandardScaler(with_mean=False, with_std=False), LogisticRegression()),
    ):
        estimators = fit_binaries(learner, X, y, code)
        for l, est in enumerate(estimators):
            rows = np.flatnonzero(code[y, l] != 0)
            target = (code[y[rows], l] == 1).astype(np.int64)
            ref = _reference(learner, X[rows], target, None)
            assert_fitted_like(est, ref)
            for mine, theirs in zip(binary_parts(est), binary_parts(ref)):
                if isinstance(theirs, StandardScaler) and theirs.mean_ is not None:
                    np.testing.assert_allclose(mine.mean_, theirs.mean_, rtol=1e-12)
                if isinstance(theirs, StandardScaler):
                    assert mine.n_samples_seen_ == theirs.n_samples_seen_
            np.testing.assert_array_equal(binary_parts(est)[1].classes_, [0, 1])
            assert binary_parts(est)[1].n_iter_[0] >= 1
            # the fitted binary predicts as scikit-learn's (its own predict_proba)
            np.testing.assert_allclose(est.predict_proba(X), ref.predict_proba(X), atol=1e-8)


def test_features_constant_on_a_binarys_rows_are_scaled_as_scikit_learn_does(data):
    """A feature constant on both classes of a column and varying on the others (zero
    or another value, as pixels are), with and without weights: each binary's scaler
    takes it for constant, with the scale 1 that ``StandardScaler`` fitted on the
    binary's rows gives it, and the binary predicts every row as scikit-learn's."""
    X, y, weights = data
    X = X.copy()
    X[y < 2, 0] = 0.0
    X[(y == 1) | (y == 2), 2] = 0.3
    code = CODES["ovo+ovr"]
    for weight in (None, weights):
        learner = _scaled()
        estimators = fit_binaries(learner, X, y, code, fit_params=_weight_params(learner, weight))
        for l, est in enumerate(estimators):
            rows = np.flatnonzero(code[y, l] != 0)
            target = (code[y[rows], l] == 1).astype(np.int64)
            w = None if weight is None else weight[rows]
            ref = _reference(learner, X[rows], target, w)
            mine, theirs = binary_parts(est)[0], binary_parts(ref)[0]
            np.testing.assert_array_equal(mine.scale_ == 1.0, theirs.scale_ == 1.0)
            np.testing.assert_allclose(mine.scale_, theirs.scale_, rtol=1e-11)
            np.testing.assert_allclose(mine.mean_, theirs.mean_, rtol=1e-12, atol=1e-12)
            np.testing.assert_allclose(mine.var_, theirs.var_, rtol=1e-11, atol=1e-24)
            np.testing.assert_allclose(est.predict_proba(X), ref.predict_proba(X), atol=1e-8)
        assert any((binary_parts(est)[0].scale_ == 1.0).any() for est in estimators)


def test_repeated_rows_are_integer_weights(data):
    X, y, weights = data
    code = CODES["ovo+ovr"]
    learner = _scaled(C=0.5)
    weighted = fit_binaries(learner, X, y, code, fit_params=_weight_params(learner, weights))
    repeat = weights.astype(int)
    repeated = fit_binaries(learner, np.repeat(X, repeat, axis=0), np.repeat(y, repeat), code)
    for a, b in zip(weighted, repeated):
        (sa, ma), (sb, mb) = binary_parts(a), binary_parts(b)
        np.testing.assert_allclose(sa.mean_, sb.mean_, rtol=1e-12)
        np.testing.assert_allclose(sa.var_, sb.var_, rtol=1e-10)
        assert sa.n_samples_seen_ == sb.n_samples_seen_
        np.testing.assert_allclose(ma.coef_, mb.coef_, rtol=1e-7, atol=1e-9)
        np.testing.assert_allclose(ma.intercept_, mb.intercept_, rtol=1e-7, atol=1e-9)


def test_routed_weights_reach_the_steps_that_request_them(data):
    """Under metadata routing, the scaler weighted or not as it requested, as in
    ``Pipeline.fit``."""
    X, y, weights = data
    code = CODES["ovo"]
    with config_context(enable_metadata_routing=True):
        learner = make_pipeline(
            StandardScaler().set_fit_request(sample_weight=False),
            LogisticRegression().set_fit_request(sample_weight=True),
        )
        params = {"sample_weight": weights}
        estimators = fit_binaries(learner, X, y, code, fit_params=params)
        with per_binary_path():
            expected = fit_binaries(learner, X, y, code, fit_params=params)
    for l, (est, ref) in enumerate(zip(estimators, expected)):
        np.testing.assert_allclose(est[0].mean_, ref[0].mean_, rtol=1e-12)  # unweighted
        assert est[0].n_samples_seen_ == ref[0].n_samples_seen_
        rows = np.flatnonzero(code[y, l] != 0)
        target = (code[y[rows], l] == 1).astype(np.int64)
        mine, theirs = (_objective(e, X[rows], target, weights[rows]) for e in (est, ref))
        assert mine <= theirs * (1 + 1e-12)  # the optimum, at most lbfgs's stop at tol


def test_one_sided_and_unconverged_binaries_take_the_learners_own_fit(data):
    X, y, _ = data
    code = CODES["ovo+ovr"]
    # a fold without class 3: the columns of class 3 against nothing are one-sided
    keep = y != 3
    splits = [(np.flatnonzero(keep), np.flatnonzero(~keep))]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        members, Q, _ = fold_binaries(_scaled(), X, y, code, splits, "proba")
        with per_binary_path():
            expected, Q_ref, _ = fold_binaries(_scaled(), X, y, code, splits, "proba")
    for est, ref in zip(members[0], expected[0]):
        assert type(est) is type(ref)
        if isinstance(ref, ConstantBinaryPredictor):
            assert est.p_ == ref.p_
    np.testing.assert_allclose(Q, Q_ref, atol=1e-3)
    # max_iter=1: Newton's method does not stop in one step, scikit-learn's fit takes
    # over (and warns, as it does one by one)
    learner = _lr(max_iter=1)
    with pytest.warns(ConvergenceWarning):
        estimators = fit_binaries(learner, X, y, code)
    with per_binary_path(), warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        expected = fit_binaries(learner, X, y, code)
    for est, ref in zip(estimators, expected):
        np.testing.assert_array_equal(est.coef_, ref.coef_)


def test_a_singular_hessian_hands_its_binary_to_the_learners_own_fit(data):
    """A Newton system ``linalg.solve`` cannot factorise (here: every system of column 2)
    ends that binary's batched iteration; scikit-learn's fit takes it, the others stay
    batched and unchanged."""
    X, y, _ = data
    code = CODES["ovo"]
    learner = _lr()
    reference = fit_binaries(learner, X, y, code)
    solve = np.linalg.solve
    poisoned = []

    def singular_for_column_2(H, b):
        if H.ndim == 3:  # the batch: fails when it holds column 2's system
            if any(np.array_equal(h, p) for h in H for p in poisoned):
                raise np.linalg.LinAlgError("Singular matrix")
            return solve(H, b)
        if any(np.array_equal(H, p) for p in poisoned):
            raise np.linalg.LinAlgError("Singular matrix")
        return solve(H, b)

    hessians = batched._Fold.hessians

    def record(fold, packed, act, theta):
        H = hessians(fold, packed, act, theta)
        poisoned.extend(H[i] for i in np.flatnonzero(act == 2))
        return H

    with (
        mock.patch.object(batched._Fold, "hessians", record),
        mock.patch.object(np.linalg, "solve", singular_for_column_2),
    ):
        estimators = fit_binaries(learner, X, y, code)
    with per_binary_path():
        own = fit_binaries(learner, X, y, code)
    np.testing.assert_array_equal(estimators[2].coef_, own[2].coef_)  # scikit-learn's fit
    assert estimators[2].n_iter_[0] == own[2].n_iter_[0]
    for est, ref in zip(estimators[:2], reference[:2]):  # still batched, as without the failure
        np.testing.assert_array_equal(est.coef_, ref.coef_)


@pytest.mark.parametrize(
    "learner",
    [
        LogisticRegression(class_weight="balanced"),
        LogisticRegression(l1_ratio=1.0, solver="saga"),
        LogisticRegression(solver="liblinear"),
        LogisticRegression(solver="sag"),
        LogisticRegression(C=np.inf),
        LogisticRegression(verbose=1),
        LogisticRegression(penalty="l2"),
        make_pipeline(MinMaxScaler(), LogisticRegression()),
        make_pipeline(StandardScaler(), StandardScaler(), LogisticRegression()),
        make_pipeline(StandardScaler().set_output(transform="pandas"), LogisticRegression()),
        DecisionTreeClassifier(),
        type("MyLogisticRegression", (LogisticRegression,), {})(),
    ],
    ids=lambda est: repr(est)[:40],
)
def test_other_learners_keep_the_per_binary_path(data, learner):
    X, y, _ = data
    X = (X - X.mean(axis=0)) / X.std(axis=0)  # scikit-learn's solvers converge quickly
    code = CODES["ovo"]
    M = code.shape[1]
    assert batched_columns([learner] * M, X, [{}] * M) is None
    with mock.patch.object(batched, "_solve", side_effect=AssertionError):
        spy = mock.patch.object(binary, "fit_binary", wraps=binary.fit_binary)
        with spy as fitted, warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fit_binaries(learner, X, y, code)
    assert fitted.call_count == M


def test_other_inputs_keep_the_per_binary_path(data):
    X, y, weights = data
    M = 3
    lr = [LogisticRegression()] * M
    assert batched_columns(lr, X, [{}] * M) is not None
    assert batched_columns(lr, X.astype(int), [{}] * M) is not None
    assert batched_columns(lr, X.astype(np.float32), [{}] * M) is None
    np.testing.assert_array_equal(batched_columns(lr, sp.csr_matrix(X), [{}] * M).X, X)
    uncentred = [make_pipeline(StandardScaler(with_mean=False), LogisticRegression())] * M
    assert batched_columns(uncentred, sp.csr_matrix(X), [{}] * M) is not None
    assert batched_columns([_scaled()] * M, sp.csr_matrix(X), [{}] * M) is None  # centres
    assert batched_columns(lr, sp.csr_matrix(X.astype(np.float32)), [{}] * M) is None
    np.testing.assert_array_equal(batched_columns(lr, X.tolist(), [{}] * M).X, X)  # rows
    assert batched_columns(lr, [[1.0, 2.0], [3.0]], [{}] * M) is None  # ragged
    assert batched_columns(lr, X.astype(object), [{}] * M) is None
    with_nan = X.copy()
    with_nan[0, 0] = np.nan
    assert batched_columns(lr, with_nan, [{}] * M) is None
    assert batched_columns(lr, X, [{"sample_weight": weights}] * M) is not None
    assert batched_columns(lr, X, [{"sample_weight": -weights}] * M) is None
    other = [{"sample_weight": weights}, {"sample_weight": weights + 1}, {}]
    assert batched_columns(lr, X, other) is None  # the columns' weights differ
    scaled = [_scaled()] * M
    assert batched_columns(scaled, X, [{"pipeline__x": 1}] * M) is None
    assert batched_columns(scaled, X, [{"standardscaler__copy": True}] * M) is None
    with per_binary_path():
        assert batched_columns(lr, X, [{}] * M) is None
    p = batched.EXPLICIT_HESSIAN_FEATURES + 20  # conjugate gradients' width, intercept included
    wide = np.random.default_rng(0).normal(size=(batched.ROWS_PER_FEATURE * p, p - 1))
    assert batched_columns(lr, wide, [{}] * M) is not None
    assert batched_columns(lr, wide[:-1], [{}] * M) is None  # fewer rows per feature
    pd = pytest.importorskip("pandas")  # tables as the learners convert them
    np.testing.assert_array_equal(batched_columns(lr, pd.DataFrame(X), [{}] * M).X, X)
    assert batched_columns(lr, pd.DataFrame(X, dtype=np.float32), [{}] * M) is None


def test_the_estimator_predicts_as_with_the_per_binary_path(data):
    """Both paths solved to the optimum (scikit-learn's Newton solver to ``tol=1e-10``):
    the binaries agree to about 1e-9 and the probabilities to 1e-6 (the decoder's own
    solver stops at its tolerance on slightly different outputs). With the learner's
    default L-BFGS at ``tol=1e-4`` the per-binary path stops short of the optimum: the
    probabilities then differ by a few ten-thousandths."""
    X, y, _ = data
    for params, atol in (({"solver": "newton-cholesky", "tol": 1e-10}, 1e-6), ({}, 2e-3)):
        learner = _scaled(**params)
        clf = ConvexAggregationClassifier(learner, code="ovo+ovr", random_state=0)
        proba = clf.fit(X, y).predict_proba(X)
        with per_binary_path():
            reference = clone(clf).fit(X, y).predict_proba(X)
        np.testing.assert_allclose(proba, reference, atol=atol)
    restored = pickle.loads(pickle.dumps(clf))
    np.testing.assert_array_equal(restored.predict_proba(X), proba)


def test_many_features_take_conjugate_gradients(data, monkeypatch):
    """Above EXPLICIT_HESSIAN_FEATURES, Newton steps by batched conjugate gradients: the
    same optimum."""
    X, y, weights = data
    monkeypatch.setattr(batched, "EXPLICIT_HESSIAN_FEATURES", 2)
    code = CODES["ovo+ovr"]
    for learner in (_lr(C=2.0), _scaled(C=2.0, fit_intercept=False)):
        params = _weight_params(learner, weights)
        with mock.patch.object(batched._Fold, "hessians", side_effect=AssertionError):
            estimators = fit_binaries(learner, X, y, code, fit_params=params)
        every = np.arange(y.size)
        _check_against_scikit_learn([estimators], [every], learner, X, y, code, weights)


@pytest.mark.parametrize("name", ["strict"])
def test_array_api_X_is_trained_batched_on_its_device(data, name, dispatch):
    """The same computation on ``X``'s namespace (array_api_strict: the standard's
    functions only): the binaries' coefficients there, equal to NumPy's."""
    from array_api_namespaces import host, of_namespace, to_xp

    X, y, weights = data
    X = (X - X.mean(axis=0)) / X.std(axis=0)
    code = CODES["ovo+ovr"]
    for learner in (LogisticRegression(), _scaled()):
        params = _weight_params(learner, weights)
        with mock.patch.object(binary, "fit_binary", side_effect=AssertionError):
            estimators = fit_binaries(learner, to_xp(name, X), y, code, fit_params=params)
            expected = fit_binaries(learner, X, y, code, fit_params=params)
        for est, ref in zip(estimators, expected):
            (scaler, model), (ref_scaler, ref_model) = binary_parts(est), binary_parts(ref)
            assert of_namespace(name, model.coef_) and of_namespace(name, model.intercept_)
            np.testing.assert_allclose(host(model.coef_), ref_model.coef_, rtol=1e-12, atol=1e-14)
            np.testing.assert_allclose(
                host(model.intercept_), ref_model.intercept_, rtol=1e-12, atol=1e-14
            )
            if scaler is not None:
                for attribute in ("mean_", "var_", "scale_", "n_samples_seen_"):
                    value = getattr(scaler, attribute)
                    assert of_namespace(name, value), attribute
                    expected_value = getattr(ref_scaler, attribute)
                    np.testing.assert_allclose(host(value), expected_value, rtol=1e-12)


def test_sparse_X_is_trained_as_the_dense_one(data):
    """A sparse matrix (scalers that do not centre it): the dense rows' batch, the scaler's
    attributes as scikit-learn's sparse fit sets them."""
    X, y, weights = data
    X = np.where(X > X.mean(axis=0), X, 0.0)
    code = CODES["ovo+ovr"]
    learner = make_pipeline(StandardScaler(with_mean=False), LogisticRegression())
    params = _weight_params(learner, weights)
    with mock.patch.object(binary, "fit_binary", side_effect=AssertionError):
        sparse = fit_binaries(learner, sp.csr_matrix(X), y, code, fit_params=params)
        dense = fit_binaries(learner, X, y, code, fit_params=params)
    for l, (a, b) in enumerate(zip(sparse, dense)):
        np.testing.assert_array_equal(a[-1].coef_, b[-1].coef_)
        rows = np.flatnonzero(code[y, l] != 0)
        ref = clone(learner[0]).fit(sp.csr_matrix(X[rows]), sample_weight=weights[rows])
        np.testing.assert_allclose(a[0].var_, ref.var_, rtol=1e-11)
        assert type(a[0].n_samples_seen_) is type(ref.n_samples_seen_)
        assert a[0].n_samples_seen_ == pytest.approx(ref.n_samples_seen_, rel=1e-12)
