"""Choosing the binary learners' parameters on the out-of-fold outputs (``binary_param_grid``).

The learner is ``LogisticRegression`` (its ``C``); the default learner, a pipeline, names
its steps' parameters (``test_pipeline_parameters_and_fitted_state``).

The reference is the loop a user would write: out-of-fold outputs built here
with scikit-learn alone (StratifiedKFold, one LogisticRegression per code
column on the rows of its two sides), the aggregation fitted on them, and its
log-loss; and the estimator fitted with each value as a plain parameter.
"""

import numpy as np
import pytest
from sklearn.datasets import load_wine, make_classification
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import StratifiedKFold
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler, scale
from sklearn.tree import DecisionTreeClassifier

from convexagg import ConvexAggregationClassifier, ConvexDecoder
from convexagg.codes import one_vs_one
from convexagg.estimator import ENTRY_WEIGHT_SHRINKAGE_RANGE


@pytest.fixture(scope="module")
def wine():
    X, y = load_wine(return_X_y=True)
    return scale(X), y


def _manual_oof_log_loss(X, y, C, code, n_splits=3):
    """Aggregated out-of-fold log-loss, everything but the decoder written here. Each
    binary is solved to its optimum (scikit-learn's Newton solver to ``tol=1e-12``), as
    the classifier trains ``LogisticRegression`` binaries (together, to the optimum)."""
    Q = np.zeros((y.size, code.shape[1]))
    models = [
        LogisticRegression(C=C, solver="newton-cholesky", tol=1e-12, max_iter=1000)
        for _ in range(code.shape[1])
    ]
    for train, test in StratifiedKFold(n_splits).split(X, y):
        for l, model in enumerate(models):
            rows = train[code[y[train], l] != 0]
            target = code[y[rows], l] == 1
            model.fit(X[rows], target)
            Q[test, l] = model.predict_proba(X[test])[:, 1]
    # the aggregation of the classifier's default model (entry weights, its alpha, intercepts)
    decoder = ConvexDecoder(
        alpha=ConvexAggregationClassifier().alpha,
        entry_weight_shrinkage=ENTRY_WEIGHT_SHRINKAGE_RANGE[1],  # "auto" on wine's 178 rows
        fit_intercept=True,
    ).fit(Q, y, code)
    return -np.mean(decoder.predict_log_proba(Q)[np.arange(y.size), y])


def test_choice_equals_the_manual_loop(wine):
    X, y = wine
    Cs = [0.003, 0.03, 1.0]
    folds = StratifiedKFold(3)  # the reference's folds (an int cv shuffles them)
    # the reference's decoder has no zero entries
    clf = ConvexAggregationClassifier(
        LogisticRegression(),
        code="ovo",
        binary_param_grid={"C": Cs},
        cv=folds,
        zero_entry_penalty=None,
    ).fit(X, y)
    manual = [_manual_oof_log_loss(X, y, C, one_vs_one(3)) for C in Cs]
    np.testing.assert_allclose(clf.binary_grid_results_["log_loss"], manual, rtol=1e-6)
    assert clf.binary_grid_results_["params"] == [{"C": C} for C in Cs]
    best = Cs[int(np.argmin(manual))]
    assert clf.best_binary_params_ == {"C": best}
    # the members and the aggregation are those of the plain fit at the chosen value
    plain = ConvexAggregationClassifier(
        LogisticRegression(C=best), code="ovo", cv=folds, zero_entry_penalty=None
    ).fit(X, y)
    assert all(est.C == best for member in clf.estimators_ for est in member)
    np.testing.assert_allclose(clf.weights_, plain.weights_, rtol=1e-10)
    np.testing.assert_allclose(clf.predict_proba(X), plain.predict_proba(X), rtol=1e-10)


@pytest.mark.parametrize("grid", [[1e-5, 1.0], [1.0, 1e-5]])
def test_picks_the_informative_setting_whatever_its_position(grid):
    # informative features: the nearly unregularised binaries are far better than
    # binaries shrunk to the class priors
    X, y = make_classification(
        n_samples=150, n_features=6, n_informative=4, n_classes=3, class_sep=2.0, random_state=0
    )
    clf = ConvexAggregationClassifier(
        LogisticRegression(), binary_param_grid={"C": grid}, cv=3
    ).fit(X, y)
    scores = dict(zip(grid, clf.binary_grid_results_["log_loss"]))
    assert clf.best_binary_params_ == {"C": 1.0}
    assert scores[1.0] < 0.5 * scores[1e-5]


def test_without_ensemble_the_chosen_binaries_are_refitted(wine):
    X, y = wine
    clf = ConvexAggregationClassifier(
        LogisticRegression(),
        binary_param_grid=[{"C": [0.01]}, {"C": [1.0]}],
        cv=3,
        ensemble=False,
        random_state=0,
    ).fit(X, y)
    C = clf.best_binary_params_["C"]
    assert all(est.C == C for est in clf.estimators_[0])
    plain = ConvexAggregationClassifier(
        LogisticRegression(C=C), cv=3, ensemble=False, random_state=0
    ).fit(X, y)
    np.testing.assert_allclose(clf.predict_proba(X), plain.predict_proba(X), rtol=1e-10)
    # fit_decoder's new fold models use the chosen value too
    np.testing.assert_allclose(
        clf.fit_decoder(X, y).weights_, plain.fit_decoder(X, y).weights_, rtol=1e-10
    )


def test_pipeline_parameters_and_fitted_state(wine):
    X, y = wine
    pipe = make_pipeline(StandardScaler(), LogisticRegression())
    clf = ConvexAggregationClassifier(
        pipe, binary_param_grid={"logisticregression__C": [0.1, 1.0]}, cv=3
    ).fit(X, y)
    assert set(clf.best_binary_params_) == {"logisticregression__C"}
    assert clf.estimator is pipe and pipe.get_params()["logisticregression__C"] == 1.0


def test_settings_that_cannot_apply(wine):
    X, y = wine
    with pytest.raises(ValueError, match="binary_param_grid .*cv='in_sample'"):
        ConvexAggregationClassifier(
            LogisticRegression(), binary_param_grid={"C": [1.0]}, cv="in_sample"
        ).fit(X, y)
    with pytest.raises(ValueError, match=r"\['max_depth'\].*LogisticRegression"):
        ConvexAggregationClassifier(
            LogisticRegression(), binary_param_grid={"max_depth": [2]}, cv=3
        ).fit(X, y)
    with pytest.raises(ValueError, match="no candidate"):
        ConvexAggregationClassifier(LogisticRegression(), binary_param_grid=[], cv=3).fit(X, y)
    with pytest.raises(ValueError, match="param_grid.*non-empty"):
        ConvexAggregationClassifier(LogisticRegression(), binary_param_grid={"C": []}, cv=3).fit(
            X, y
        )
    with pytest.raises(ValueError, match="param_grid"):
        ConvexAggregationClassifier(LogisticRegression(), binary_param_grid={"C": 1.0}, cv=3).fit(
            X, y
        )
    # a learner that has the parameter
    tree = ConvexAggregationClassifier(
        DecisionTreeClassifier(random_state=0), binary_param_grid={"max_depth": [1, 3]}, cv=3
    ).fit(X, y)
    assert tree.best_binary_params_["max_depth"] in (1, 3)
    # a failed fit leaves nothing behind
    clf = ConvexAggregationClassifier(
        LogisticRegression(), binary_param_grid={"C": [1.0]}, cv="in_sample"
    )
    with pytest.raises(ValueError):
        clf.fit(X, y)
    assert not hasattr(clf, "best_binary_params_")


def test_a_refit_with_warm_start_uses_the_new_choice(wine):
    X, y = wine
    clf = ConvexAggregationClassifier(
        LogisticRegression(), binary_param_grid={"C": [0.01]}, cv=3, ensemble=False, warm_start=True
    ).fit(X, y)
    clf.set_params(binary_param_grid={"C": [1.0]}).fit(X, y)
    assert clf.best_binary_params_ == {"C": 1.0}
    assert all(est.C == 1.0 for est in clf.estimators_[0])
