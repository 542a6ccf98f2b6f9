"""``cv`` has one meaning: the training plan resolved from it says which outputs the
decoder is fitted on, and everything that refits the aggregation (``fit_decoder``,
the regularisation-path display) reads those outputs from the fitted plan."""

from __future__ import annotations

import matplotlib
import numpy as np
import pytest
from sklearn.datasets import load_iris
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import KFold, StratifiedKFold
from sklearn.tree import DecisionTreeClassifier

from convexagg import (
    CodeMatrixClassifier,
    ConvexAggregationClassifier,
    ConvexAggregationClassifierCV,
    ConvexDecoder,
    RegularizationPathDisplay,
)
from convexagg._training import plan
from convexagg.solvers import ProjectedNewton

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (after the backend is chosen)

# solved to 1e-10 in double precision: the path (warm-started) and the fit (cold) then
# agree to 1e-7, far below what a different set of outputs moves (1e-3 and more)
SOLVER = ProjectedNewton(tol=1e-10, dtype="float64")


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


@pytest.fixture(scope="module")
def iris():
    X, y = load_iris(return_X_y=True)
    rng = np.random.default_rng(0)
    order = rng.permutation(y.size)
    return X[order], y[order]


def _binaries(X, y):
    """Three one-vs-rest binaries fitted on half the rows (prefit material)."""
    half = slice(0, X.shape[0] // 2)
    return [LogisticRegression().fit(X[half], (y[half] == k).astype(int)) for k in range(3)]


# one case per meaning of cv: (cv, ensemble, estimator); prefit takes fitted binaries
CASES = {
    "in_sample": ("in_sample", "auto", None),
    "int_ensemble": (3, "auto", None),
    "int_refit": (3, False, None),
    "splitter": (KFold(3, shuffle=True, random_state=1), "auto", None),
    "splitter_refit": (StratifiedKFold(4, shuffle=True, random_state=2), False, None),
    "prefit": ("prefit", "auto", "binaries"),
    "frozen": (5, "auto", "frozen"),
}


def _fit(iris, case, sample_weight=None, **params):
    X, y = iris
    cv, ensemble, given = CASES[case]
    estimator = LogisticRegression()
    if given is not None:
        binaries = _binaries(X, y)
        estimator = binaries if given == "binaries" else [FrozenEstimator(b) for b in binaries]
    clf = ConvexAggregationClassifier(
        estimator,
        code="ovr",
        cv=cv,
        ensemble=ensemble,
        alpha=1e-2,
        solver=SOLVER,
        random_state=0,
        **params,
    )
    return clf.fit(X, y, sample_weight=sample_weight)


@pytest.mark.parametrize("case", list(CASES))
def test_the_path_display_at_alpha_is_the_fitted_weights(iris, case):
    """The path is drawn on the outputs the weights were fitted on: at the classifier's
    own alpha it is its weights, whatever cv (with cv=5 it missed them by 1.56 when it
    drew the path on predict_binary_proba, the ensemble's mean on all rows)."""
    X, y = iris
    clf = _fit(iris, case)
    alphas = [1.0, clf.alpha, 1e-4]
    disp = RegularizationPathDisplay.from_estimator(clf, X, y, alphas)
    at = int(np.flatnonzero(disp.alphas == clf.alpha)[0])
    np.testing.assert_allclose(disp.weights[at], clf.weights_, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("case", ["in_sample", "int_ensemble", "int_refit", "prefit"])
def test_the_path_display_weighs_the_samples_as_fit_did(iris, case):
    X, y = iris
    sw = np.random.default_rng(3).integers(1, 4, y.size).astype(float)
    clf = _fit(iris, case, sample_weight=sw)
    disp = RegularizationPathDisplay.from_estimator(clf, X, y, [clf.alpha], sample_weight=sw)
    np.testing.assert_allclose(disp.weights[0], clf.weights_, rtol=1e-5, atol=1e-7)
    unweighted = RegularizationPathDisplay.from_estimator(clf, X, y, [clf.alpha])
    assert not np.allclose(unweighted.weights[0], clf.weights_, rtol=1e-5, atol=1e-7)


def test_the_path_display_misses_the_weights_on_the_ensembles_mean_outputs(iris):
    """The check above can fail: the path on the members' mean outputs on all rows
    (what the display drew before) is not the fitted weights."""
    from convexagg import regularization_path

    X, y = iris
    clf = _fit(iris, "int_ensemble")
    wrong = regularization_path(
        clf.predict_binary_proba(X), y, clf.code_matrix_, [clf.alpha], decoder=clf.decoder_
    )
    assert np.abs(wrong.weights[0] - clf.weights_).max() > 1e-3


@pytest.mark.parametrize("case", list(CASES))
def test_estimators_is_one_list_of_binaries_per_member(iris, case):
    X = iris[0]
    clf = _fit(iris, case)
    n_members = {"int_ensemble": 3, "splitter": 3}.get(case, 1)  # the ensembles' folds
    assert isinstance(clf.estimators_, list) and len(clf.estimators_) == n_members
    for member in clf.estimators_:
        assert isinstance(member, list) and len(member) == clf.code_matrix_.shape[1]
        assert all(hasattr(b, "predict_proba") for b in member)
    # the members are what predicts: the mean of their outputs
    outputs = [np.column_stack([b.predict_proba(X)[:, 1] for b in m]) for m in clf.estimators_]
    np.testing.assert_allclose(clf.predict_binary_proba(X), np.mean(outputs, axis=0))


def test_fit_decoder_refits_on_the_plans_outputs(iris):
    """fit_decoder at the same alpha gives the fitted weights back, for every cv."""
    X, y = iris
    for case in CASES:
        clf = _fit(iris, case)
        weights = clf.weights_.copy()
        clf.fit_decoder(X, y)
        np.testing.assert_allclose(clf.weights_, weights, rtol=1e-6, atol=1e-8, err_msg=case)


def test_frozen_binaries_are_not_refitted_and_match_prefit(iris):
    X, y = iris
    binaries = _binaries(X, y)
    before = [b.coef_.copy() for b in binaries]
    prefit = ConvexAggregationClassifier(binaries, code="ovr", cv="prefit").fit(X, y)
    frozen = ConvexAggregationClassifier(
        [FrozenEstimator(b) for b in binaries],
        code="ovr",  # the default cv: nothing is fitted
    ).fit(X, y)
    assert all(np.array_equal(b.coef_, c) for b, c in zip(binaries, before))
    np.testing.assert_allclose(frozen.weights_, prefit.weights_, rtol=1e-12)
    np.testing.assert_allclose(frozen.predict_proba(X), prefit.predict_proba(X), rtol=1e-10)
    assert frozen.oof_proba_ is None and len(frozen.estimators_) == 1
    # with cv="prefit" too
    frozen_prefit = ConvexAggregationClassifier(
        [FrozenEstimator(b) for b in binaries], code="ovr", cv="prefit"
    ).fit(X, y)
    np.testing.assert_allclose(frozen_prefit.weights_, prefit.weights_, rtol=1e-12)


def test_frozen_binaries_in_the_cv_estimator_and_a_code_matrix_classifier(iris):
    X, y = iris
    binaries = _binaries(X, y)
    frozen = [FrozenEstimator(b) for b in binaries]
    settings = {"code": "ovr", "alphas": [1e-3, 1e-1], "alpha_cv": 3, "random_state": 0}
    cv_est = ConvexAggregationClassifierCV(frozen, **settings)
    prefit = ConvexAggregationClassifierCV(binaries, cv="prefit", **settings)
    np.testing.assert_allclose(cv_est.fit(X, y).cv_scores_, prefit.fit(X, y).cv_scores_)
    cmc = CodeMatrixClassifier(frozen, code="ovr", decoder=ConvexDecoder()).fit(X, y)
    assert cmc.estimators_ == [list(frozen)]


def test_frozen_binaries_are_checked(iris):
    X, y = iris
    binaries = _binaries(X, y)
    mixed = [FrozenEstimator(binaries[0]), LogisticRegression(), LogisticRegression()]
    with pytest.raises(ValueError, match="all be FrozenEstimator"):
        ConvexAggregationClassifier(mixed, code="ovr").fit(X, y)
    with pytest.raises(ValueError, match="one per code column"):
        ConvexAggregationClassifier(FrozenEstimator(binaries[0]), code="ovr").fit(X, y)
    with pytest.raises(ValueError, match="ensemble=True applies to out-of-fold outputs only"):
        ConvexAggregationClassifier(
            [FrozenEstimator(b) for b in binaries], code="ovr", ensemble=True
        ).fit(X, y)
    for cv in ("in_sample", 3, StratifiedKFold(3)):  # folds of frozen binaries cannot apply
        with pytest.raises(ValueError, match="cannot apply to FrozenEstimator"):
            ConvexAggregationClassifier(
                [FrozenEstimator(b) for b in binaries], code="ovr", cv=cv
            ).fit(X, y)
    multiclass = FrozenEstimator(DecisionTreeClassifier().fit(X, y))
    with pytest.raises(ValueError, match="classes_ of length 2"):
        ConvexAggregationClassifier([multiclass] * 3, code="ovr").fit(X, y)


@pytest.mark.parametrize("cv", ["in_sample", 3])
def test_the_cv_estimators_path_display_at_alpha_is_its_weights(iris, cv):
    """The CV estimator refits at alpha_ on the outputs of its plan; the display reads
    the same outputs."""
    X, y = iris
    clf = ConvexAggregationClassifierCV(
        code="ovr", cv=cv, alphas=[1e-3, 1e-1], alpha_cv=3, solver=SOLVER, random_state=0
    ).fit(X, y)
    disp = RegularizationPathDisplay.from_estimator(clf, X, y, [clf.alpha_])
    np.testing.assert_allclose(disp.weights[0], clf.weights_, rtol=1e-5, atol=1e-7)
    assert len(clf.estimators_) == (3 if cv == 3 else 1)


def test_cv_none_is_five_folds():
    """``cv=None`` is the default's plan, 5 shuffled folds, as scikit-learn's ``cv=None``
    is 5 folds."""
    assert plan(None, "auto", None) == plan(5, "auto", None)
    assert plan(None, "auto", None).splitter == 5


def _fold_of_each_row(splits, n):
    fold = np.full(n, -1)
    for k, (_, test) in enumerate(splits):
        fold[test] = k
    return fold


def test_an_int_cv_is_shuffled_stratified_folds():
    """An int ``cv`` is scikit-learn's ``StratifiedKFold`` shuffled by a seed drawn from
    ``random_state``, not its folds in row order: on rows sorted by class and, within
    a class, by a feature, those would be blocks of the feature's range."""
    from sklearn.datasets import make_classification

    X, y = make_classification(120, 4, n_informative=3, n_redundant=0, n_classes=3, random_state=0)
    order = np.lexsort((X[:, 0], y))
    X, y = X[order], y[order]
    clf = ConvexAggregationClassifier(cv=4, random_state=0).fit(X, y)
    shuffled = StratifiedKFold(4, shuffle=True, random_state=clf._fold_seed)
    np.testing.assert_array_equal(clf.oof_fold_, _fold_of_each_row(shuffled.split(X, y), y.size))
    in_order = _fold_of_each_row(StratifiedKFold(4).split(X, y), y.size)
    assert (clf.oof_fold_ != in_order).mean() > 0.5
    # the same as that splitter passed explicitly; a seed fixes the folds, another moves them
    explicit = ConvexAggregationClassifier(cv=shuffled, random_state=0).fit(X, y)
    np.testing.assert_array_equal(explicit.predict_proba(X), clf.predict_proba(X))
    again = ConvexAggregationClassifier(cv=4, random_state=0).fit(X, y)
    np.testing.assert_array_equal(again.predict_proba(X), clf.predict_proba(X))
    other = ConvexAggregationClassifier(cv=4, random_state=1).fit(X, y)
    assert (other.oof_fold_ != clf.oof_fold_).any()
    # fit_decoder's new fold models are trained on the fit's folds
    refit = ConvexAggregationClassifier(cv=4, ensemble=False, random_state=0).fit(X, y)
    weights = refit.weights_.copy()
    np.testing.assert_allclose(refit.fit_decoder(X, y).weights_, weights, rtol=1e-12)
    # alpha_cv's folds are shuffled by the same seed
    cv_est = ConvexAggregationClassifierCV(cv="in_sample", alphas=[1e-3, 1e-1], alpha_cv=4)
    scores = [cv_est.set_params(random_state=s).fit(X, y).cv_scores_ for s in (0, 0, 1)]
    np.testing.assert_array_equal(scores[0], scores[1])
    assert not np.array_equal(scores[0], scores[2])
