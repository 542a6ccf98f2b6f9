"""ConvexAggregationClassifierCV: alpha by cross-validated log-loss, on the estimator's fit path."""

import inspect

import numpy as np
import pytest
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.datasets import load_iris
from sklearn.ensemble import RandomForestClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import StratifiedKFold
from sklearn.utils.estimator_checks import parametrize_with_checks

from convexagg import ConvexAggregationClassifier, ConvexAggregationClassifierCV, ConvexDecoder
from convexagg.binary import fit_binaries, predict_binaries
from convexagg.out_of_fold import out_of_fold_outputs
from convexagg.solvers import InteriorPoint, ProjectedNewton


@parametrize_with_checks(
    [
        ConvexAggregationClassifierCV(code="ovr", alphas=[1e-3, 1e-1], alpha_cv=3),
        ConvexAggregationClassifierCV(code="ovr", alphas=[1e-3, 1e-1], alpha_cv=2, cv=2),
    ]
)
def test_sklearn_compatible(estimator, check):
    check(estimator)


FIT_CALLS = []


class CountingLogisticRegression(ClassifierMixin, BaseEstimator):
    """LogisticRegression that records every fit (same process: n_jobs=None)."""

    def fit(self, X, y):
        FIT_CALLS.append(len(y))
        self.model_ = LogisticRegression().fit(X, y)
        self.classes_ = self.model_.classes_
        return self

    def predict_proba(self, X):
        return self.model_.predict_proba(X)


@pytest.fixture(scope="module")
def iris():
    X, y = load_iris(return_X_y=True)
    return X, y


# the paper's model, one weight per classifier: what ConvexDecoder(alpha=...) fits alone
PAPER = dict(
    fit_intercept=False, entry_weight_shrinkage=None, column_penalty=None, zero_entry_penalty=None
)


def test_it_is_the_default_model_with_alpha_chosen():
    """Siblings of one base: every parameter of ConvexAggregationClassifier but ``alpha``
    (chosen) and ``binary_param_grid``, with the same defaults, and no other."""
    assert not issubclass(ConvexAggregationClassifierCV, ConvexAggregationClassifier)
    parent = inspect.signature(ConvexAggregationClassifier).parameters
    child = inspect.signature(ConvexAggregationClassifierCV).parameters
    assert set(child) == set(parent) - {"alpha", "binary_param_grid"} | {"alphas", "alpha_cv"}
    for name in set(child) & set(parent):
        assert child[name].default == parent[name].default, name
    assert set(ConvexAggregationClassifierCV().get_params()) == set(child)


def test_the_default_models_path_and_refit(iris):
    """The default model (intercepts, entry weights, the column penalty, zero entries)
    along the path: each fold's scores are those of ConvexDecoder with the resolved
    settings fitted on the fold's out-of-fold outputs, and the fitted model is
    ConvexAggregationClassifier's at alpha_ with the same resolved values."""
    X, y = iris
    alphas = [1.0, 1e-2, 1e-4]
    alpha_cv = StratifiedKFold(3, shuffle=True, random_state=1)
    solver = ProjectedNewton(tol=1e-10)
    clf = ConvexAggregationClassifierCV(alphas=alphas, alpha_cv=alpha_cv, solver=solver)
    clf.fit(X, y)
    assert clf.zero_entry_penalty_ is not None  # the zero entries are on the path
    Q, y_rows, _ = clf.training_outputs(X, y)
    settings = dict(
        fit_intercept=True,
        entry_weight_shrinkage=clf.entry_weight_shrinkage_,
        zero_entry_penalty=clf.zero_entry_penalty_,
        column_penalty=clf.decoder_.column_penalty,
        solver=solver,
    )
    assert np.count_nonzero(settings["column_penalty"]) == 3  # "auto": the ovr columns
    expected = np.empty((3, 3))
    for f, (train, val) in enumerate(alpha_cv.split(Q, y_rows)):
        for j, alpha in enumerate(alphas):
            dec = ConvexDecoder(alpha=alpha, **settings)
            dec.fit(Q[train], y_rows[train], clf.code_matrix_)
            P = dec.predict_proba(Q[val])
            expected[j, f] = -np.mean(np.log(P[np.arange(len(val)), y_rows[val]]))
    np.testing.assert_allclose(clf.cv_scores_, expected, rtol=1e-5)
    assert clf.alpha_ == alphas[np.argmin(expected.mean(axis=1))]
    sibling = ConvexAggregationClassifier(
        alpha=clf.alpha_,
        entry_weight_shrinkage=clf.entry_weight_shrinkage_,
        zero_entry_penalty=clf.zero_entry_penalty_,
        solver=solver,
    ).fit(X, y)
    np.testing.assert_allclose(clf.entry_weights_, sibling.entry_weights_, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(clf.predict_proba(X), sibling.predict_proba(X), atol=1e-9)


def test_the_resolved_parts_are_the_siblings_at_its_default_alpha(iris):
    """``entry_weight_shrinkage="auto"`` and the zero entries' choice: resolved as
    ConvexAggregationClassifier (default alpha) resolves them on the same outputs."""
    X, y = iris
    clf = ConvexAggregationClassifierCV(alphas=[1e-2, 1.0], alpha_cv=3).fit(X, y)
    sibling = ConvexAggregationClassifier().fit(X, y)
    assert clf.entry_weight_shrinkage_ == sibling.entry_weight_shrinkage_
    assert clf.zero_entry_penalty_ == sibling.zero_entry_penalty_
    np.testing.assert_array_equal(
        clf.zero_entry_penalty_scores_, sibling.zero_entry_penalty_scores_
    )
    # oof_proba_: the fitted decoder's on the out-of-fold outputs (the choice was at 1e-3)
    Q, _, _ = clf.training_outputs(X, y)
    np.testing.assert_allclose(clf.oof_proba_, clf.decoder_.predict_proba(Q), rtol=1e-12)


def test_binaries_are_trained_once_per_fold_not_per_alpha(iris):
    X, y = iris
    FIT_CALLS.clear()
    clf = ConvexAggregationClassifierCV(
        CountingLogisticRegression(), alphas=7, alpha_cv=3, cv="in_sample", **PAPER
    )
    clf.fit(X, y)
    n_columns = clf.code_matrix_.shape[1]
    assert len(FIT_CALLS) == (3 + 1) * n_columns  # 3 folds + the refit, whatever the grid
    assert clf.cv_scores_.shape == (7, 3)
    np.testing.assert_allclose(clf.alphas_, np.logspace(0, -6, 7))


def test_out_of_fold_outputs_are_computed_once_and_cross_validated(iris):
    X, y = iris
    FIT_CALLS.clear()
    cv = StratifiedKFold(3, shuffle=True, random_state=0)
    alpha_cv = StratifiedKFold(4, shuffle=True, random_state=1)
    clf = ConvexAggregationClassifierCV(
        CountingLogisticRegression(),
        code="ovr",
        alphas=[1.0, 1e-2, 1e-4],
        cv=cv,
        alpha_cv=alpha_cv,
        solver=ProjectedNewton(tol=1e-10),
        **PAPER,
    ).fit(X, y)
    assert len(FIT_CALLS) == 3 * 3  # the out-of-fold folds (kept as an ensemble), no more
    Q = out_of_fold_outputs(CountingLogisticRegression(), X, y, clf.code_matrix_, cv, "proba")
    expected = np.empty((3, 4))
    for f, (train, val) in enumerate(alpha_cv.split(X, y)):
        for j, alpha in enumerate([1.0, 1e-2, 1e-4]):
            dec = ConvexDecoder(alpha=alpha, solver=ProjectedNewton(tol=1e-10))
            P = dec.fit(Q[train], y[train], clf.code_matrix_).predict_proba(Q[val])
            expected[j, f] = -np.mean(np.log(P[np.arange(len(val)), y[val]]))
    np.testing.assert_allclose(clf.cv_scores_, expected, rtol=1e-4)
    ref = ConvexDecoder(alpha=clf.alpha_, solver=ProjectedNewton(tol=1e-10))
    ref.fit(Q, y, clf.code_matrix_)
    np.testing.assert_allclose(clf.weights_, ref.weights_, rtol=1e-6)


def test_alpha_is_the_argmin_of_separately_computed_fold_log_losses(iris):
    X, y = iris
    alphas = [1.0, 1e-1, 1e-2, 1e-4]
    alpha_cv = StratifiedKFold(3, shuffle=True, random_state=0)
    solver = InteriorPoint(tol=1e-9)
    clf = ConvexAggregationClassifierCV(
        LogisticRegression(),
        code="ovr",
        alphas=alphas,
        alpha_cv=alpha_cv,
        solver=solver,
        cv="in_sample",
        **PAPER,
    ).fit(X, y)
    expected = np.empty((len(alphas), 3))
    for f, (train, val) in enumerate(alpha_cv.split(X, y)):
        binaries = fit_binaries(LogisticRegression(), X[train], y[train], clf.code_matrix_)
        Q_train = predict_binaries(binaries, X[train], "proba")
        Q_val = predict_binaries(binaries, X[val], "proba")
        for j, alpha in enumerate(alphas):
            dec = ConvexDecoder(alpha=alpha, solver=solver).fit(Q_train, y[train], clf.code_matrix_)
            P = dec.predict_proba(Q_val)
            expected[j, f] = -np.mean(np.log(P[np.arange(len(val)), y[val]]))
    np.testing.assert_allclose(clf.cv_scores_, expected, rtol=1e-6)
    assert clf.alpha_ == alphas[np.argmin(expected.mean(axis=1))]
    assert isinstance(clf.decoder_.solver_, InteriorPoint)
    # refit on all data at alpha_
    binaries = fit_binaries(LogisticRegression(), X, y, clf.code_matrix_)
    dec = ConvexDecoder(alpha=clf.alpha_, solver=solver)
    dec.fit(predict_binaries(binaries, X, "proba"), y, clf.code_matrix_)
    np.testing.assert_allclose(clf.weights_, dec.weights_, rtol=1e-8)
    assert clf.score(X, y) > 0.9


def test_fit_decoder_refits_at_the_chosen_alpha(iris):
    """0.1 refitted at alpha=1e-4 whatever alpha_ was."""
    X, y = iris
    clf = ConvexAggregationClassifierCV(code="ovr", alphas=[1e-2, 1.0], alpha_cv=3).fit(X, y)
    weights = clf.weights_.copy()
    assert clf.alpha_ in (1e-2, 1.0)
    clf.fit_decoder(X, y)
    assert clf.decoder_.alpha == clf.alpha_
    np.testing.assert_allclose(clf.weights_, weights, rtol=1e-10)


def test_binary_learners_are_seeded(iris):
    X, y = iris
    make = lambda: ConvexAggregationClassifierCV(  # noqa: E731
        RandomForestClassifier(n_estimators=5), alphas=3, alpha_cv=3, random_state=0
    )
    a, b = make().fit(X, y), make().fit(X, y)
    np.testing.assert_array_equal(a.predict_proba(X), b.predict_proba(X))
    np.testing.assert_array_equal(a.cv_scores_, b.cv_scores_)


def test_fit_is_all_or_nothing(iris):
    X, y = iris
    clf = ConvexAggregationClassifierCV(code="ovr", alphas=3, alpha_cv=3).fit(X, y)
    state = dict(clf.__dict__)
    with pytest.raises(ValueError, match="alphas"):
        clf.set_params(alphas=[1e-2, -1.0]).fit(X, y)
    clf.set_params(alphas=3)
    assert clf.__dict__.keys() == state.keys()
    assert all(clf.__dict__[k] is state[k] for k in state if k != "alphas")
    fresh = ConvexAggregationClassifierCV(alphas=[])
    with pytest.raises(ValueError, match="alphas"):
        fresh.fit(X, y)
    assert not hasattr(fresh, "classes_")


def test_verbose_reports_the_folds_and_the_stages(iris, capsys):
    X, y = iris
    clf = ConvexAggregationClassifierCV(
        code="ovr", alphas=3, alpha_cv=3, verbose=1, cv="in_sample"
    ).fit(X, y)
    out = capsys.readouterr().out
    assert out.count("alpha fold") == 3 and "training 3 binary classifiers" in out
    assert out.count("binaries: 3 of 3 trained") == 4  # per alpha fold, then on all rows
    assert f"[ConvexDecoder] weights: {clf.n_iter_} iterations" in out  # the final fit
    assert "[ConvexDecoder] iteration" not in out  # solver iterations: verbose >= 2


def test_fit_decoder_refits_the_default_model_as_fit_does(iris):
    """The zero entries chosen again at the sibling's alpha, the weights fitted at alpha_:
    fit_decoder on the same binaries gives fit's model and its oof_proba_."""
    X, y = iris
    clf = ConvexAggregationClassifierCV(alphas=[1e-2, 1.0], alpha_cv=3).fit(X, y)
    assert clf.zero_entry_penalty_ is not None
    P, oof = clf.predict_proba(X), clf.oof_proba_
    clf.fit_decoder(X, y)
    np.testing.assert_allclose(clf.predict_proba(X), P, rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(clf.oof_proba_, oof, rtol=1e-10, atol=1e-14)
