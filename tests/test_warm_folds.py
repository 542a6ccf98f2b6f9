"""A ``LogisticRegression`` column's fold binaries start from the previous fold's
solution (:func:`convexagg.out_of_fold.starts_folds_warm`).

References: scikit-learn's own ``warm_start`` (one model refitted fold after fold, the
chain's semantics), independent cold fits (the same optimum at a tight ``tol``), and
independent clones for every other learner (unchanged, exactly).
"""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import load_iris
from sklearn.linear_model import LogisticRegression, LogisticRegressionCV
from sklearn.model_selection import StratifiedKFold
from sklearn.tree import DecisionTreeClassifier

from convexagg import ConvexAggregationClassifier
from convexagg.batched_logistic import per_binary_path
from convexagg.codes import one_vs_one
from convexagg.out_of_fold import fold_binaries, starts_folds_warm


@pytest.fixture(autouse=True)
def one_by_one():
    """The chain is the per-binary path's: the batched trainer (which solves a column's
    folds in turn too) has its own tests, tests/test_batched_logistic.py."""
    with per_binary_path():
        yield


@pytest.fixture(scope="module")
def iris():
    X, y = load_iris(return_X_y=True)
    return (X - X.mean(0)) / X.std(0), y


def _manual(make, X, y, code, splits, warm):
    """Out-of-fold outputs and each fold's coefficients, written here: one model per
    column refitted fold after fold (``warm``), or a new model per fold."""
    Q, coefs = np.zeros((y.size, code.shape[1])), []
    models = [make() for _ in range(code.shape[1])]
    for train, test in splits:
        fold = []
        for l in range(code.shape[1]):
            rows = train[code[y[train], l] != 0]
            model = models[l] if warm else make()
            model.fit(X[rows], code[y[rows], l] == 1)
            Q[test, l] = model.predict_proba(X[test])[:, 1]
            fold.append(getattr(model, "coef_", None))
        coefs.append(fold)
    return Q, coefs


def test_the_chain_is_scikit_learns_warm_start_fold_after_fold(iris):
    X, y = iris
    code, splits = one_vs_one(3), list(StratifiedKFold(5, shuffle=True, random_state=0).split(X, y))
    members, Q, _ = fold_binaries(LogisticRegression(), X, y, code, splits, "proba")
    ref, coefs = _manual(lambda: LogisticRegression(warm_start=True), X, y, code, splits, True)
    np.testing.assert_allclose(Q, ref, rtol=1e-12, atol=1e-15)
    for fold, expected in zip(members, coefs):
        for est, coef in zip(fold, expected):
            np.testing.assert_allclose(est.coef_, coef, rtol=1e-12)
            assert est.warm_start is False  # the learner's own setting, kept
    assert len({id(est) for fold in members for est in fold}) == 5 * 3  # one object each
    for earlier, later in zip(members, members[1:]):  # a refit writes into no earlier array
        for a, b in zip(earlier, later):
            assert not any(
                np.shares_memory(u, v)
                for u in vars(a).values()
                if isinstance(u, np.ndarray)
                for v in vars(b).values()
                if isinstance(v, np.ndarray)
            )
    cold, _ = _manual(LogisticRegression, X, y, code, splits, False)
    assert not np.allclose(Q, cold, rtol=1e-8, atol=0)  # the starts do move the stops


def test_the_chain_reaches_the_cold_fits_optimum(iris):
    """Solved to machine precision (Newton's method), the chained and the independent
    fits are the same solution: a start moves only where a solver stops."""
    X, y = iris
    code, splits = one_vs_one(3), list(StratifiedKFold(5, shuffle=True, random_state=1).split(X, y))

    def make():
        return LogisticRegression(solver="newton-cholesky", tol=1e-12, max_iter=1000)

    _, Q, _ = fold_binaries(make(), X, y, code, splits, "proba")
    cold, _ = _manual(make, X, y, code, splits, False)
    np.testing.assert_allclose(Q, cold, rtol=1e-10, atol=1e-14)


@pytest.mark.filterwarnings("ignore::FutureWarning")  # LogisticRegressionCV's transitions
@pytest.mark.parametrize(
    "learner",
    [
        LogisticRegression(solver="liblinear"),  # ignores warm_start
        DecisionTreeClassifier(random_state=0),  # no warm_start
        LogisticRegressionCV(Cs=3),  # a subclass: its own fit
    ],
    ids=["liblinear", "tree", "lrcv"],
)
def test_other_learners_are_fitted_cold(iris, learner):
    X, y = iris
    assert not starts_folds_warm(learner)
    code, splits = one_vs_one(3), list(StratifiedKFold(3, shuffle=True, random_state=0).split(X, y))
    _, Q, _ = fold_binaries(learner, X, y, code, splits, "proba")
    ref, _ = _manual(lambda: clone(learner), X, y, code, splits, False)
    np.testing.assert_array_equal(Q, ref)


def test_which_learners_chain():
    assert starts_folds_warm(LogisticRegression())
    assert starts_folds_warm(LogisticRegression(solver="newton-cholesky", warm_start=True))
    assert starts_folds_warm([LogisticRegression(), LogisticRegression(C=0.1)])
    assert not starts_folds_warm([LogisticRegression(), DecisionTreeClassifier()])


def test_fit_decoder_reuses_the_chained_outputs(iris):
    """fit_decoder recomputes the out-of-fold outputs of binaries refitted on all rows:
    the chain is deterministic, so the weights are fit's (to the solver's rounding)."""
    X, y = iris
    clf = ConvexAggregationClassifier(code="ovo", cv=4, ensemble=False, random_state=0)
    weights = clf.fit(X, y).weights_.copy()
    np.testing.assert_allclose(clf.fit_decoder(X, y).weights_, weights, rtol=1e-12)
