import numpy as np
import pytest
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.datasets import load_iris, make_classification
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import StratifiedKFold
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import LinearSVC
from sklearn.utils.estimator_checks import parametrize_with_checks

from convexagg import CodeMatrixClassifier, ConvexAggregationClassifier, ConvexDecoder
from convexagg.codes import one_vs_one
from convexagg.estimator import ENTRY_WEIGHT_SHRINKAGE_RANGE, default_learner
from helpers import DECODERS, fit_default_decoder, make_decoder

# the decoder of ConvexAggregationClassifier's default model (entry weights)
# the classifier's default aggregation model, as ConvexDecoder parameters
DEFAULT_MODEL = {
    # "auto" on sets of at most 200 rows, as these tests' (auto_entry_weight_shrinkage)
    "entry_weight_shrinkage": ENTRY_WEIGHT_SHRINKAGE_RANGE[1],
    "alpha": ConvexAggregationClassifier().alpha,
    "fit_intercept": True,
}


def _expected_failures(estimator):
    """The default's zero entries are chosen by a 3-fold cross-validation of the
    aggregation, whose folds differ between repeated rows and their integer weights;
    ``code="ovr"`` (no zero entries) checks the weights' equivalence."""
    if isinstance(estimator, ConvexAggregationClassifier) and estimator.code == "ovo+ovr":
        why = "the zero entries' choice has other folds with repeated rows than with weights"
        return {
            "check_sample_weight_equivalence_on_dense_data": why,
            "check_sample_weight_equivalence_on_sparse_data": why,
        }
    return {}


@parametrize_with_checks(
    [
        CodeMatrixClassifier(),
        ConvexAggregationClassifier(),
        ConvexAggregationClassifier(code="ovr"),
        CodeMatrixClassifier(code="ecoc", cv=3),
    ],
    expected_failed_checks=_expected_failures,
)
def test_sklearn_compatible(estimator, check):
    check(estimator)


@pytest.fixture(scope="module")
def iris():
    return load_iris(return_X_y=True)


def test_any_label_type_and_predict_is_argmax(iris):
    X, y = iris
    names = np.array(["setosa", "versicolor", "virginica"])[y]
    clf = ConvexAggregationClassifier(code="ovo").fit(X, names)  # cv=5: 5 fold ensembles
    assert list(clf.classes_) == ["setosa", "versicolor", "virginica"]
    P = clf.predict_proba(X)
    assert P.shape == (150, 3) and np.allclose(P.sum(axis=1), 1)
    assert np.array_equal(clf.predict(X), clf.classes_[P.argmax(axis=1)])
    assert clf.score(X, names) > 0.95
    assert clf.weights_.shape == (3,) and (clf.weights_ >= 0).all()
    assert clf.n_iter_ >= 1 and len(clf.estimators_) == 5
    assert all(len(member) == 3 for member in clf.estimators_)
    assert np.array_equal(clf.code_matrix_, one_vs_one(3))


def test_convex_classifier_equals_code_matrix_with_convex_decoder(iris):
    X, y = iris
    a = ConvexAggregationClassifier(code="ovr", alpha=1e-2, random_state=0).fit(X, y)
    decoder = ConvexDecoder(**{**DEFAULT_MODEL, "alpha": 1e-2})
    b = CodeMatrixClassifier(code="ovr", decoder=decoder, random_state=0).fit(X, y)
    np.testing.assert_array_equal(a.predict_proba(X), b.predict_proba(X))


def test_margin_learner_needs_a_margin_loss(iris):
    X, y = iris
    with pytest.raises(ValueError, match="not defined for output='margin'"):
        ConvexAggregationClassifier(LinearSVC()).fit(X, y)
    clf = ConvexAggregationClassifier(LinearSVC(), loss="logistic").fit(X, y)
    assert clf.binary_output_ == "margin"
    assert clf.score(X, y) > 0.9


def test_cv_fits_decoder_on_out_of_fold_outputs(iris):
    X, y = iris
    cv = StratifiedKFold(3, shuffle=True, random_state=0)
    clf = ConvexAggregationClassifier(code="ovr", cv=cv, ensemble=False).fit(X, y)
    insample = ConvexAggregationClassifier(code="ovr", cv="in_sample").fit(X, y)
    # the binaries are the same (refit on all data), the weights differ
    np.testing.assert_allclose(clf.predict_binary_proba(X), insample.predict_binary_proba(X))
    assert not np.allclose(clf.weights_, insample.weights_)
    # out-of-fold weights are those of a decoder fitted on the out-of-fold Q
    from convexagg.out_of_fold import out_of_fold_outputs

    Q = out_of_fold_outputs(default_learner(), X, y, clf.code_matrix_, cv, "proba")
    np.testing.assert_allclose(
        ConvexDecoder(**DEFAULT_MODEL).fit(Q, y, clf.code_matrix_).weights_,
        clf.weights_,
        rtol=1e-10,
    )


def test_prefit_uses_given_binaries(iris):
    X, y = iris
    # the same random_state: the zero entries' prior is chosen on the same folds
    fitted = ConvexAggregationClassifier(code="ovo", cv="in_sample", random_state=0).fit(X, y)
    (binaries,) = fitted.estimators_  # one member
    prefit = ConvexAggregationClassifier(list(binaries), code="ovo", cv="prefit", random_state=0)
    prefit.fit(X, y)
    assert all(a is b for a, b in zip(prefit.estimators_[0], binaries))
    np.testing.assert_allclose(prefit.predict_proba(X), fitted.predict_proba(X))
    with pytest.raises(ValueError, match="one per code column"):
        ConvexAggregationClassifier(binaries[:2], cv="prefit").fit(X, y)


def test_custom_code_and_n_jobs(iris):
    X, y = iris
    code = np.array([[1, 1, 0], [-1, 0, 1], [0, -1, -1]])
    a = CodeMatrixClassifier(code=code, n_jobs=2, random_state=0).fit(X, y)
    b = CodeMatrixClassifier(code=code, random_state=0).fit(X, y)
    np.testing.assert_allclose(a.predict_proba(X), b.predict_proba(X))
    with pytest.raises(ValueError, match="code has 2 rows but there are 3 classes"):
        CodeMatrixClassifier(code=code[:2]).fit(X, y)


def test_one_sided_cv_fold_gives_constant_binary_and_warning():
    X, y = make_classification(60, 4, n_informative=3, n_redundant=0, n_classes=3, random_state=0)
    order = np.argsort(y, kind="stable")
    X, y = X[order], y[order]
    # unshuffled 2-fold split: the first fold sees classes 0 and part of 1 only
    with pytest.warns(UserWarning, match="only one side"):
        clf = ConvexAggregationClassifier(
            code="ovo", cv=[(np.arange(30), np.arange(30, 60)), (np.arange(30, 60), np.arange(30))]
        )
        clf.fit(X, y)
    assert np.isfinite(clf.predict_proba(X)).all()


def test_fit_failure_leaves_no_fitted_state(iris):
    X, y = iris
    clf = ConvexAggregationClassifier(LinearSVC())
    with pytest.raises(ValueError):
        clf.fit(X, y)
    assert not hasattr(clf, "classes_") and not hasattr(clf, "decoder_")
    assert clone(clf).get_params()["loss"] == "cross_entropy"  # parameters untouched


def test_fit_predict_binaries_is_fit_then_predict(iris):
    from convexagg.binary import fit_binaries, fit_predict_binaries, predict_binaries

    X, y = iris
    code = one_vs_one(3)
    estimators, Q = fit_predict_binaries(LogisticRegression(), X, y, code, "proba")
    separate = fit_binaries(LogisticRegression(), X, y, code)
    np.testing.assert_allclose(Q, predict_binaries(separate, X, "proba"), rtol=1e-12)
    np.testing.assert_allclose(Q, predict_binaries(estimators, X, "proba"), rtol=1e-12)


@pytest.mark.parametrize(
    "base, output",
    [
        (LogisticRegression(), "proba"),
        (LogisticRegression(), "margin"),
        (LinearSVC(), "margin"),
        (make_pipeline(StandardScaler(), LogisticRegression()), "proba"),  # per column
    ],
)
def test_linear_binaries_predict_in_one_product_as_one_by_one(iris, base, output):
    """The stacked product gives each estimator's own predict_proba / decision_function,
    also for sparse X and beside a non-linear stand-in for a one-sided column."""
    from scipy import sparse

    from convexagg.binary import ConstantBinaryPredictor, fit_binaries, predict_binaries

    X, y = iris
    code = one_vs_one(3)
    estimators = fit_binaries(base, X, y, code)
    estimators.append(ConstantBinaryPredictor().fit(None, np.ones(4)))
    one_by_one = np.column_stack(
        [
            est.predict_proba(X)[:, 1] if output == "proba" else np.ravel(est.decision_function(X))
            for est in estimators
        ]
    )
    np.testing.assert_allclose(predict_binaries(estimators, X, output), one_by_one, rtol=1e-12)
    if not hasattr(base, "steps"):
        Q_sparse = predict_binaries(estimators, sparse.csr_matrix(X), output)
        np.testing.assert_allclose(Q_sparse, one_by_one, rtol=1e-12)


@pytest.mark.parametrize(
    "scaler, sparse_X",
    [
        (StandardScaler(), False),
        (StandardScaler(with_std=False), False),
        (StandardScaler(with_mean=False), False),
        (StandardScaler(with_mean=False), True),
    ],
)
@pytest.mark.parametrize("output", ["proba", "margin"])
def test_scaled_linear_pipelines_predict_in_one_product(iris, scaler, sparse_X, output):
    """Pipelines of a StandardScaler and a linear model predict through the stacked
    product (their own methods are disabled here, so only it can answer), as their own
    predict_proba / decision_function do: on features far from zero and of very
    different scales (the fold must not cancel large means), beside plain linear
    binaries and a non-linear stand-in."""
    from scipy import sparse

    from convexagg.binary import ConstantBinaryPredictor, fit_binaries, predict_binaries

    X, y = iris
    X = X * np.array([1e3, 1.0, 1e-3, 1.0]) + np.array([1e4, -50.0, 3.0, 0.0])
    code = one_vs_one(3)
    linear = LogisticRegression() if output == "proba" else LinearSVC()
    estimators = fit_binaries(make_pipeline(clone(scaler), linear), X, y, code)
    estimators += fit_binaries(make_pipeline(StandardScaler(), LogisticRegression()), X, y, code)
    estimators.append(fit_binaries(LogisticRegression(C=1e-3), X, y, code)[0])
    estimators.append(ConstantBinaryPredictor().fit(None, np.ones(4)))
    method = "predict_proba" if output == "proba" else "decision_function"
    one_by_one = np.column_stack(
        [
            est.predict_proba(X)[:, 1] if output == "proba" else np.ravel(est.decision_function(X))
            for est in estimators
        ]
    )

    def refuse(*args, **kwargs):
        raise AssertionError("the stacked product should have answered")

    for est in estimators[:-1]:
        setattr(est, method, refuse)
    X_in = sparse.csr_matrix(X) if sparse_X else X
    if sparse_X:  # the centring pipelines cannot take sparse X; the others stay stacked
        estimators = estimators[:3] + estimators[-2:]
        one_by_one = np.column_stack([one_by_one[:, :3], one_by_one[:, -2:]])
    Q = predict_binaries(estimators, X_in, output)
    assert np.ptp(one_by_one[:, :-1]) > 0.5  # outputs that vary
    np.testing.assert_allclose(Q, one_by_one, rtol=1e-11, atol=1e-14)


def test_an_end_to_end_pipeline_classifier_predicts_as_its_binaries(iris):
    """ConvexAggregationClassifier with StandardScaler + LogisticRegression binaries:
    predict_proba is the decoder on the binaries' own outputs. It decodes their
    log-odds (the decision functions): the same as decoding their probabilities,
    but for the sigmoid's rounding, which this data shows (|z| up to 20: q
    within 2e-9 of 1, 1 - q off by up to 1e-7 relative); the reference is the
    exact decode of the decision functions, in the test."""
    from scipy.special import softmax

    from convexagg.binary import predict_binaries

    X, y = iris
    X = X * 100 + 1e3
    base = make_pipeline(StandardScaler(), LogisticRegression())
    clf = ConvexAggregationClassifier(base, cv="in_sample").fit(X, y)
    Q = np.column_stack([est.predict_proba(X)[:, 1] for est in clf.estimators_[0]])
    Z = np.column_stack([est.decision_function(X) for est in clf.estimators_[0]])
    np.testing.assert_allclose(predict_binaries(clf.estimators_[0], X, "proba"), Q, rtol=1e-11)
    # losses log(1 + exp(-+z)) (logaddexp: accurate), capped at -log(eps) as those of Q
    cap = -np.log(np.finfo(np.float64).eps)
    L_pos, L_neg = np.minimum(np.logaddexp(0, -Z), cap), np.minimum(np.logaddexp(0, Z), cap)
    code, U = clf.decoder_.code_, clf.decoder_.entry_weights_  # a weight per code entry
    rho = L_pos @ (U * (code == 1)).T + L_neg @ (U * (code == -1)).T + clf.intercept_
    # and weights on the zero entries, one per side of the classifier (zero_entry_penalty)
    V = clf.zero_entry_weights_
    assert np.any(V != 0) and np.all(V[:, code != 0] == 0)
    rho += L_pos @ V[0].T + L_neg @ V[1].T
    assert np.any(clf.intercept_ != 0)  # the default fits class intercepts
    P = clf.predict_proba(X)
    np.testing.assert_allclose(P, softmax(-rho, axis=1), rtol=1e-9)
    # the decoder on the probabilities: the sigmoid rounding moves only the tiny ones
    np.testing.assert_allclose(P, clf.decoder_.predict_proba(Q), rtol=1e-9, atol=1e-20)


def test_linear_binaries_name_the_one_with_nonfinite_outputs(iris):
    from convexagg.binary import fit_binaries, predict_binaries

    X, y = iris
    estimators = fit_binaries(LogisticRegression(), X, y, one_vs_one(3))
    estimators[2].coef_[0, 0] = np.nan
    with pytest.raises(ValueError, match="binary classifier 2 .LogisticRegression. returned NaN"):
        predict_binaries(estimators, X, "margin")
    with pytest.raises(ValueError, match="X has 3 features"):
        predict_binaries(estimators, X[:, :3], "proba")


def test_ensemble_keeps_the_fold_binaries_and_averages_their_probabilities(iris):
    from convexagg.binary import predict_binaries
    from convexagg.out_of_fold import fold_binaries

    X, y = iris
    cv = StratifiedKFold(3, shuffle=True, random_state=0)
    clf = ConvexAggregationClassifier(code="ovo", cv=cv).fit(X, y)  # ensemble="auto"
    assert clf.ensemble_ and len(clf.estimators_) == 3
    assert all(len(member) == 3 for member in clf.estimators_)
    splits = list(cv.split(X, y))
    members, Q, covered = fold_binaries(default_learner(), X, y, clf.code_matrix_, splits, "proba")
    assert covered.all()
    ref = fit_default_decoder(clf, Q, y, DEFAULT_MODEL)
    np.testing.assert_allclose(clf.weights_, ref.weights_, rtol=1e-10)
    P = np.mean([ref.predict_proba(predict_binaries(m, X, "proba")) for m in members], axis=0)
    # the estimator decodes the log-odds, the reference their sigmoid: probabilities of
    # 1e-18 agree to 1e-9 relatively (the sigmoid's rounding), so also an absolute 1e-15
    np.testing.assert_allclose(clf.predict_proba(X), P, rtol=1e-10, atol=1e-15)
    np.testing.assert_array_equal(clf.predict(X), clf.classes_[P.argmax(axis=1)])
    np.testing.assert_allclose(clf.predict_log_proba(X), np.log(P), rtol=1e-6, atol=1e-12)
    assert np.array_equal(np.argmax(clf.decision_function(X), axis=1), P.argmax(axis=1))
    # fit_decoder reuses the members on the rows each was not trained on: no retraining
    weights = clf.weights_.copy()
    clf.set_params(alpha=1e-2).fit_decoder(X, y)
    assert clf.decoder_.alpha == 1e-2 and not np.allclose(clf.weights_, weights)
    with pytest.raises(ValueError, match="needs the data fit was called with"):
        clf.fit_decoder(X[:100], y[:100])


def test_ensemble_with_in_sample_outputs_raises(iris):
    X, y = iris
    with pytest.raises(ValueError, match="ensemble=True applies to out-of-fold outputs only"):
        ConvexAggregationClassifier(ensemble=True, cv="in_sample").fit(X, y)


def test_a_held_out_part_fits_the_weights_on_it_alone(iris):
    from sklearn.model_selection import StratifiedShuffleSplit

    X, y = iris
    holdout = StratifiedShuffleSplit(1, test_size=0.3, random_state=0)
    clf = ConvexAggregationClassifier(cv=holdout).fit(X, y)
    ((train, test),) = holdout.split(X, y)
    assert len(clf.estimators_) == 1  # one member, trained on the 70 %
    from convexagg.binary import predict_binaries

    Q, y_fit, _ = clf.training_outputs(X, y)  # the held-out rows, in the order fitted
    np.testing.assert_array_equal(np.sort(y_fit), np.sort(y[test]))
    order = np.argsort(test)  # the rows in the order of X
    np.testing.assert_allclose(Q, predict_binaries(clf.estimators_[0], X[test[order]], "proba"))
    # the default code on iris: 3 one-vs-one columns, then 3 one-vs-rest ones penalised
    ovr_penalty = [0, 0, 0, 0.1, 0.1, 0.1]
    ref = fit_default_decoder(clf, Q, y_fit, {**DEFAULT_MODEL, "column_penalty": ovr_penalty})
    np.testing.assert_allclose(clf.weights_, ref.weights_, rtol=1e-10)
    with pytest.raises(ValueError, match="more than one split"):
        ConvexAggregationClassifier(cv=StratifiedShuffleSplit(3, random_state=0)).fit(X, y)


class _RefusesItsTrainingRows(ClassifierMixin, BaseEstimator):
    """A logistic regression that fails when asked for outputs on rows it was fitted on."""

    def fit(self, X, y):
        self.model_ = LogisticRegression().fit(X, y)
        self.classes_ = self.model_.classes_
        self.seen_ = {row.tobytes() for row in np.asarray(X)}
        return self

    def predict_proba(self, X):
        if any(row.tobytes() in self.seen_ for row in np.asarray(X)):
            raise AssertionError("asked for an in-sample output")
        return self.model_.predict_proba(X)


def test_the_default_fits_the_weights_on_out_of_fold_outputs_only():
    from convexagg.out_of_fold import fold_binaries

    X, y = make_classification(200, 5, n_informative=4, n_redundant=0, n_classes=3, random_state=0)
    clf = ConvexAggregationClassifier(_RefusesItsTrainingRows(), code="ovo", random_state=0)
    clf.fit(X, y)
    assert clf.ensemble_ and len(clf.estimators_) == 5  # cv=5, the fold binaries kept
    # an int cv: scikit-learn's stratified folds, shuffled by the seed drawn from random_state
    folds = StratifiedKFold(5, shuffle=True, random_state=clf._fold_seed)
    splits = list(folds.split(X, y))
    learner = _RefusesItsTrainingRows()  # a LogisticRegression each, fitted cold
    _, Q, covered = fold_binaries(learner, X, y, clf.code_matrix_, splits, "proba")
    assert covered.all()
    ref = fit_default_decoder(clf, Q, y, DEFAULT_MODEL)
    np.testing.assert_allclose(clf.weights_, ref.weights_, rtol=1e-10)
    with pytest.raises(AssertionError, match="in-sample"):  # the learner does refuse them
        ConvexAggregationClassifier(_RefusesItsTrainingRows(), code="ovo", cv="in_sample").fit(X, y)


def test_too_few_samples_for_the_folds_is_a_clear_error():
    X, y = make_classification(4, 3, n_informative=2, n_redundant=0, random_state=0)
    with pytest.raises(ValueError, match=r"cv=5 folds need at least 5 training samples, got 4"):
        ConvexAggregationClassifier().fit(X, y)
    assert ConvexAggregationClassifier(cv="in_sample").fit(X, y).predict(X).shape == (4,)


def test_cv_none_is_the_default_five_folds(iris):
    """``cv=None`` means 5 folds, as in scikit-learn: the fit of the default ``cv=5``."""
    X, y = iris
    default = ConvexAggregationClassifier(code="ovr").fit(X, y)
    none = ConvexAggregationClassifier(code="ovr", cv=None).fit(X, y)
    assert none.ensemble_ and len(none.estimators_) == 5
    np.testing.assert_array_equal(none.predict_proba(X), default.predict_proba(X))


# ------------------------------------------------------------------ all-or-nothing, invariants


class _FailsWhenArmed(LogisticRegression):
    """Refits raise once ``armed_`` is set on a fitted copy (a fault in one binary)."""

    def fit(self, X, y, sample_weight=None):
        if getattr(self, "armed_", False):
            raise RuntimeError("binary refit failed")
        return super().fit(X, y, sample_weight=sample_weight)


@pytest.mark.parametrize("n_jobs", [None, 2])
def test_a_failed_warm_refit_leaves_the_previous_model_exactly(iris, n_jobs):
    """The warm binaries were refitted in place before the failing one raised: the
    kept model's predictions moved by 0.9."""
    X, y = iris
    clf = ConvexAggregationClassifier(
        _FailsWhenArmed(warm_start=True), code="ovr", cv="in_sample", warm_start=True, n_jobs=n_jobs
    ).fit(X[::3], y[::3])
    P = clf.predict_proba(X)
    coefs = [est.coef_.copy() for est in clf.estimators_[0]]
    clf.estimators_[0][2].armed_ = True  # column 2 fails, after columns 0 and 1 refit
    with pytest.raises(RuntimeError, match="binary refit failed"):
        clf.fit(X, y)
    np.testing.assert_array_equal(clf.predict_proba(X), P)
    for est, coef in zip(clf.estimators_[0], coefs):
        np.testing.assert_array_equal(est.coef_, coef)


def _invariant_data():
    # 1 row in 400 disagreed here for the fold ensemble with PairwiseCouplingDecoder
    # and BradleyTerryDecoder (predict took the argmax of the mean scores)
    return make_classification(
        400,
        8,
        n_informative=4,
        n_classes=4,
        n_clusters_per_class=1,
        flip_y=0.2,
        random_state=5,
    )


@pytest.fixture(scope="module")
def invariant_data():
    X, y = _invariant_data()
    prefit = ConvexAggregationClassifier(code="ovo", cv="in_sample").fit(X, y).estimators_[0]
    return X, y, prefit


@pytest.mark.parametrize(
    "cv, ensemble", [("in_sample", "auto"), (5, "auto"), (5, False), ("prefit", "auto")]
)
@pytest.mark.parametrize(
    "Decoder", [D for D in DECODERS if hasattr(D, "predict_proba")], ids=lambda d: d.__name__
)
def test_predict_is_the_argmax_of_predict_proba_for_every_decoder_and_cv(
    invariant_data, Decoder, cv, ensemble
):
    X, y, prefit = invariant_data
    estimator = prefit if cv == "prefit" else None
    clf = CodeMatrixClassifier(
        estimator,
        code="ovo",
        decoder=make_decoder(Decoder),
        cv=cv,
        ensemble=ensemble,
        random_state=0,
    ).fit(X, y)
    np.testing.assert_array_equal(clf.predict(X), clf.classes_[clf.predict_proba(X).argmax(1)])


def test_probabilities_of_a_fold_ensemble_never_exceed_one():
    """The members' mean, taken in log space, rounded up to 1.0000000000000002 on this
    split (entry weights, wine): scikit-learn's log_loss then refused it."""
    from sklearn.datasets import load_wine
    from sklearn.metrics import log_loss
    from sklearn.model_selection import StratifiedShuffleSplit
    from sklearn.preprocessing import StandardScaler

    X, y = load_wine(return_X_y=True)
    train, test = next(StratifiedShuffleSplit(5, test_size=0.2, random_state=0).split(X, y))
    scaler = StandardScaler().fit(X[train])
    clf = ConvexAggregationClassifier(
        LogisticRegression(max_iter=1000), entry_weight_shrinkage=0.01, random_state=0
    ).fit(scaler.transform(X[train]), y[train])
    P = clf.predict_proba(scaler.transform(X[test]))
    assert P.max() <= 1.0 and clf.predict_log_proba(scaler.transform(X[test])).max() <= 0.0
    np.testing.assert_allclose(P.sum(axis=1), 1.0, rtol=1e-12)
    assert np.isfinite(log_loss(y[test], P, labels=clf.classes_))
