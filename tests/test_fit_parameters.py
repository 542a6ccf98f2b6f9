"""What fit takes besides X and y: sample weights, routed metadata, per-column learners,
warm starts; and predict_log_proba."""

import numpy as np
import pytest
import sklearn
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.datasets import load_iris
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GroupKFold, StratifiedKFold
from sklearn.neighbors import KNeighborsClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import PolynomialFeatures, StandardScaler
from sklearn.svm import LinearSVC
from sklearn.tree import DecisionTreeClassifier

from convexagg import (
    CodeMatrixClassifier,
    ConvexAggregationClassifier,
    ConvexAggregationClassifierCV,
    ConvexDecoder,
)
from convexagg.codes import one_vs_one
from convexagg.estimator import (
    ENTRY_WEIGHT_SHRINKAGE_RANGE,
    ZERO_ENTRY_PRIORS,
    auto_entry_weight_shrinkage,
)
from convexagg.solvers import ProjectedNewton
from helpers import fit_default_decoder

# the decoder of ConvexAggregationClassifier's default model (entry weights)
DEFAULT_MODEL = {
    # "auto" on sets of at most 200 rows, as these tests' (auto_entry_weight_shrinkage)
    "entry_weight_shrinkage": ENTRY_WEIGHT_SHRINKAGE_RANGE[1],
    "alpha": ConvexAggregationClassifier().alpha,
    "fit_intercept": True,
}

TIGHT = LogisticRegression(tol=1e-10, max_iter=10_000)


@pytest.fixture(scope="module")
def iris():
    X, y = load_iris(return_X_y=True)
    return StandardScaler().fit_transform(X), y


class Recording(ClassifierMixin, BaseEstimator):
    """A logistic regression that records the fit parameters it is given."""

    seen = []

    def __init__(self, C=1.0):
        self.C = C

    def fit(self, X, y, sample_weight=None, extra=None):
        Recording.seen.append({"n": len(y), "sample_weight": sample_weight, "extra": extra})
        self.model_ = LogisticRegression(C=self.C).fit(X, y, sample_weight=sample_weight)
        self.classes_ = self.model_.classes_
        return self

    def predict_proba(self, X):
        return self.model_.predict_proba(X)


# --------------------------------------------------------------------------- sample weights


@pytest.mark.parametrize("code", ["ovo", "ecoc"])
def test_integer_sample_weights_equal_repeated_rows(iris, code):
    X, y = iris
    counts = np.random.default_rng(0).integers(0, 4, size=len(y))
    rows = np.repeat(np.arange(len(y)), counts)
    make = lambda: ConvexAggregationClassifier(  # noqa: E731
        TIGHT,
        code=code,
        fit_intercept=True,
        solver=ProjectedNewton(tol=1e-10),
        random_state=0,
        cv="in_sample",  # repeated rows would change the folds
    )
    weighted = make().fit(X, y, sample_weight=counts)
    repeated = make().fit(X[rows], y[rows])
    np.testing.assert_allclose(weighted.weights_, repeated.weights_, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(weighted.intercept_, repeated.intercept_, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(weighted.predict_proba(X), repeated.predict_proba(X), atol=1e-6)
    unweighted = make().fit(X, y)
    assert not np.allclose(unweighted.weights_, weighted.weights_, rtol=1e-3)


def test_sample_weights_reach_every_binary_on_its_rows_and_the_folds(iris):
    X, y = iris
    w = np.random.default_rng(1).uniform(0.5, 2.0, size=len(y))
    Recording.seen.clear()
    clf = ConvexAggregationClassifier(Recording(), code="ovo", cv=3).fit(X, y, sample_weight=w)
    assert len(Recording.seen) == 3 * 3  # 3 folds x 3 columns, ensemble kept
    for record in Recording.seen:
        assert record["sample_weight"] is not None and len(record["sample_weight"]) == record["n"]
    assert set(np.round(np.concatenate([r["sample_weight"] for r in Recording.seen]), 12)) <= set(
        np.round(w, 12)
    )
    assert clf.decoder_.converged_


@pytest.mark.parametrize(
    "learner", [KNeighborsClassifier(), make_pipeline(PolynomialFeatures(), LogisticRegression())]
)
def test_a_learner_without_sample_weight_is_named(iris, learner):
    X, y = iris
    with pytest.raises(TypeError, match=f"{type(learner).__name__}.*does not take sample_weight"):
        ConvexAggregationClassifier(learner).fit(X, y, sample_weight=np.ones(len(y)))
    ConvexAggregationClassifier(learner).fit(X, y)  # without weights it fits


def test_fit_parameters_other_than_weights_need_routing(iris):
    X, y = iris
    with pytest.raises(TypeError, match=r"\['extra'\].*metadata routing"):
        ConvexAggregationClassifier(Recording()).fit(X, y, extra=np.ones(len(y)))


@pytest.mark.parametrize("estimator", [None, make_pipeline(StandardScaler(), TIGHT)])
def test_sample_weight_reaches_every_step_of_a_pipeline_that_takes_it(iris, estimator):
    """Without routing, the weights go to the scaler and the logistic regression of the
    default learner (and of any pipeline whose steps all take them): integer weights
    give the binaries of repeated rows."""
    X, y = iris
    counts = np.random.default_rng(0).integers(0, 3, size=len(y))
    kwargs = dict(code="ovr", cv="in_sample")
    weighted = CodeMatrixClassifier(estimator, **kwargs).fit(X, y, sample_weight=counts)
    repeated = CodeMatrixClassifier(estimator, **kwargs).fit(X.repeat(counts, 0), y.repeat(counts))
    for a, b in zip(weighted.estimators_[0], repeated.estimators_[0]):
        np.testing.assert_allclose(a[0].mean_, b[0].mean_, rtol=1e-12)
        np.testing.assert_allclose(a[0].scale_, b[0].scale_, rtol=1e-12)
    tol = 1e-6 if estimator is not None else 1e-3  # the default stops at lbfgs' tol=1e-4
    np.testing.assert_allclose(
        weighted.predict_binary_proba(X), repeated.predict_binary_proba(X), atol=tol
    )


def test_sample_weights_weight_the_cv_estimator_like_repeated_rows(iris):
    X, y = iris
    counts = np.random.default_rng(0).integers(1, 3, size=len(y))
    solver = ProjectedNewton(tol=1e-10)
    # repeated rows would change the folds: the weights are checked on prefit
    # binaries, against the weighted decoder at the alpha chosen
    binaries = CodeMatrixClassifier(TIGHT, code="ovr", cv="in_sample").fit(X, y).estimators_[0]
    alpha_cv = StratifiedKFold(3, shuffle=True, random_state=0)
    paper = dict(  # one weight per classifier: ConvexDecoder's default model
        fit_intercept=False,
        entry_weight_shrinkage=None,
        column_penalty=None,
        zero_entry_penalty=None,
    )
    weighted = ConvexAggregationClassifierCV(
        list(binaries),
        code="ovr",
        cv="prefit",
        alphas=5,
        alpha_cv=alpha_cv,
        solver=solver,
        **paper,
    ).fit(X, y, sample_weight=counts)
    assert weighted.cv_scores_.shape == (5, 3)
    unweighted = ConvexAggregationClassifierCV(
        list(binaries),
        code="ovr",
        cv="prefit",
        alphas=5,
        alpha_cv=alpha_cv,
        solver=solver,
        **paper,
    ).fit(X, y)
    assert not np.allclose(weighted.cv_scores_, unweighted.cv_scores_)
    ref = ConvexDecoder(alpha=weighted.alpha_, solver=solver).fit(
        weighted.predict_binary_proba(X), y, weighted.code_matrix_, sample_weight=counts
    )
    np.testing.assert_allclose(weighted.weights_, ref.weights_, rtol=1e-8)


# --------------------------------------------------------------------------- metadata routing


def test_routing_sends_requested_weights_to_the_binaries(iris):
    """0.1 dropped them silently: in a Pipeline with routing on, the learner's request
    is honoured (the same model as passing the weights directly), and the weights
    weight the aggregation too."""
    X, y = iris
    w = np.random.default_rng(2).uniform(0.2, 3.0, size=len(y))
    Xs = StandardScaler().fit(X, sample_weight=w).transform(X)  # the pipeline's first step
    direct = ConvexAggregationClassifier(LogisticRegression(), random_state=0)
    direct.fit(Xs, y, sample_weight=w)
    unweighted = ConvexAggregationClassifier(LogisticRegression(), random_state=0).fit(Xs, y)
    with sklearn.config_context(enable_metadata_routing=True):
        pipe = make_pipeline(
            StandardScaler().set_fit_request(sample_weight=True),
            ConvexAggregationClassifier(
                LogisticRegression().set_fit_request(sample_weight=True), random_state=0
            ).set_fit_request(sample_weight=True),
        ).fit(X, y, sample_weight=w)
        routed = pipe[-1]
        np.testing.assert_allclose(
            routed.predict_binary_proba(Xs), direct.predict_binary_proba(Xs), rtol=1e-6
        )
        np.testing.assert_allclose(routed.weights_, direct.weights_, rtol=1e-6)
        assert not np.allclose(routed.weights_, unweighted.weights_, rtol=1e-3)


def test_routing_delivers_what_each_learner_requests(iris):
    X, y = iris
    extra = np.arange(len(y), dtype=float)
    with sklearn.config_context(enable_metadata_routing=True):
        Recording.seen.clear()
        learner = Recording().set_fit_request(extra=True, sample_weight=False)
        clf = ConvexAggregationClassifier(learner, code="ovr", cv="in_sample")
        clf.fit(X, y, sample_weight=np.ones(len(y)), extra=extra)
        assert len(Recording.seen) == 3
        for record in Recording.seen:
            assert record["sample_weight"] is None and len(record["extra"]) == record["n"]
        unrequested = ConvexAggregationClassifier(Recording(), code="ovr")
        with pytest.raises(Exception, match="sample_weight"):
            unrequested.fit(X, y, sample_weight=np.ones(len(y)))
        # per-column learners each get their own request honoured
        Recording.seen.clear()
        learners = [
            Recording().set_fit_request(extra=True, sample_weight=False),
            Recording().set_fit_request(extra=False, sample_weight=False),
            Recording().set_fit_request(extra=True, sample_weight=False),
        ]
        CodeMatrixClassifier(learners, code="ovr", cv="in_sample").fit(X, y, extra=extra)
        assert [r["extra"] is not None for r in Recording.seen] == [True, False, True]


def test_routing_reaches_the_splitter(iris):
    from sklearn.model_selection import GroupKFold

    X, y = iris
    groups = np.arange(len(y)) % 5
    with sklearn.config_context(enable_metadata_routing=True):
        clf = ConvexAggregationClassifier(code="ovr", cv=GroupKFold(5))
        clf.fit(X, y, groups=groups)
    assert clf.ensemble_ and len(clf.estimators_) == 5


# --------------------------------------------------------------------------- per-column learners


def test_a_list_of_learners_trains_one_per_column(iris):
    """0.1 replaced it with LogisticRegression silently."""
    X, y = iris
    learners = [
        DecisionTreeClassifier(max_depth=2),
        LogisticRegression(),
        LogisticRegression(C=0.1),
    ]
    clf = CodeMatrixClassifier(learners, code="ovo", random_state=0, cv="in_sample").fit(X, y)
    (binaries,) = clf.estimators_
    assert [type(est) for est in binaries] == [type(est) for est in learners]
    assert binaries[2].C == 0.1 and binaries[0] is not learners[0]
    assert binaries[0].random_state is not None  # seeded per column
    assert clf.score(X, y) > 0.9
    with pytest.raises(
        ValueError, match="list of 2 learners; it needs one per code column \\(3\\)"
    ):
        CodeMatrixClassifier(learners[:2], code="ovo").fit(X, y)
    with pytest.raises(TypeError, match=r"estimator\[1\] is 'tree', not a classifier"):
        CodeMatrixClassifier([learners[0], "tree", learners[2]], code="ovo").fit(X, y)
    with pytest.raises(TypeError, match="mix the two"):
        CodeMatrixClassifier([learners[0], LinearSVC(), learners[2]], code="ovo").fit(X, y)


def test_per_column_margin_learners(iris):
    X, y = iris
    clf = ConvexAggregationClassifier(
        [LinearSVC(), LinearSVC(C=0.1), LinearSVC()], code="ovr", loss="logistic"
    ).fit(X, y)
    assert clf.binary_output_ == "margin" and clf.score(X, y) > 0.8


# --------------------------------------------------------------------------- warm start


def test_warm_start_refits_copies_of_the_binaries_and_starts_the_weights_warm(iris):
    X, y = iris
    clf = ConvexAggregationClassifier(
        LogisticRegression(warm_start=True),
        alpha=1e-2,
        warm_start=True,
        solver=ProjectedNewton(tol=1e-8),
        cv="in_sample",  # binaries fitted per fold are always fresh
        random_state=0,  # the zero entries' strength is chosen on shuffled folds
    ).fit(X, y)
    binaries = list(clf.estimators_[0])
    coefs = [est.coef_.copy() for est in binaries]
    first_iter = [est.n_iter_[0] for est in binaries]
    clf.set_params(alpha=5e-3).fit(X, y)
    # copies were refitted, from the previous solutions (a cold fit takes more
    # iterations); the previous binaries are untouched
    assert not any(a is b for a, b in zip(clf.estimators_[0], binaries))
    assert all(new.n_iter_[0] < old for new, old in zip(clf.estimators_[0], first_iter))
    for est, coef in zip(binaries, coefs):
        np.testing.assert_array_equal(est.coef_, coef)
    cold = ConvexAggregationClassifier(
        LogisticRegression(),
        alpha=5e-3,
        solver=ProjectedNewton(tol=1e-8),
        cv="in_sample",
        random_state=0,
    ).fit(X, y)
    assert clf.n_iter_ <= cold.n_iter_
    np.testing.assert_allclose(clf.weights_, cold.weights_, rtol=1e-4, atol=1e-6)
    # another code: fresh binaries
    clf.set_params(code="ovr").fit(X, y)
    assert not any(a is b for a, b in zip(clf.estimators_[0], binaries))


def test_without_warm_start_binaries_are_fresh(iris):
    X, y = iris
    clf = ConvexAggregationClassifier().fit(X, y)
    binaries = [est for member in clf.estimators_ for est in member]
    clf.fit(X, y)
    assert not any(a is b for member in clf.estimators_ for a in member for b in binaries)


# --------------------------------------------------------------------------- predict_log_proba


def test_predict_log_proba_is_stable(iris):
    X, y = iris
    clf = ConvexAggregationClassifier(LogisticRegression(C=1e4), alpha=0.0).fit(X, y)
    log_p, P = clf.predict_log_proba(X), clf.predict_proba(X)
    assert np.isfinite(log_p).all()
    keep = P > 1e-300
    np.testing.assert_allclose(log_p[keep], np.log(P[keep]), rtol=1e-9, atol=1e-12)
    np.testing.assert_array_equal(clf.classes_[log_p.argmax(axis=1)], clf.predict(X))


# ------------------------------------------------------------------- routing, everywhere alike


@pytest.mark.parametrize("routing", [False, True])
def test_fit_and_fit_decoder_route_the_weights_the_same_way(iris, routing):
    """With routing on and the learner declining the weights, fit_decoder sent them
    to its new fold models anyway: its weights differed from fit's on the same call."""
    X, y = iris
    w = np.random.default_rng(3).uniform(0.2, 3.0, size=len(y))
    with sklearn.config_context(enable_metadata_routing=routing):
        learner = Recording(C=0.5)
        if routing:
            learner.set_fit_request(sample_weight=False, extra=False)
        clf = ConvexAggregationClassifier(learner, cv=3, ensemble=False, random_state=0)
        Recording.seen.clear()
        clf.fit(X, y, sample_weight=w)
        in_fit = [r["sample_weight"] is not None for r in Recording.seen]
        weights = clf.weights_.copy()
        Recording.seen.clear()
        clf.fit_decoder(X, y, sample_weight=w)  # new fold models, the same seeds
        in_fit_decoder = [r["sample_weight"] is not None for r in Recording.seen]
    assert in_fit_decoder == in_fit[: len(in_fit_decoder)]  # fit also refits on all rows
    assert set(in_fit) == {not routing}
    np.testing.assert_allclose(clf.weights_, weights, rtol=1e-12)


def test_a_one_shot_generator_as_cv_with_routing(iris):
    """get_metadata_routing consumed the generator, and fit found no splits."""
    X, y = iris
    splits = list(StratifiedKFold(3, shuffle=True, random_state=0).split(X, y))
    listed = ConvexAggregationClassifier(cv=splits, random_state=0).fit(X, y)
    with sklearn.config_context(enable_metadata_routing=True):
        clf = ConvexAggregationClassifier(cv=(s for s in splits), random_state=0)
        clf.get_metadata_routing()  # asking must not use it up
        clf.fit(X, y)
    np.testing.assert_allclose(clf.weights_, listed.weights_, rtol=1e-12)
    with pytest.raises(ValueError, match="gave no splits; an iterator of splits is used up"):
        clf.fit(X, y)  # the same generator, now used up


class _RecordingGroupKFold(GroupKFold):
    seen = []

    def split(self, X, y=None, groups=None):
        _RecordingGroupKFold.seen.append(groups)
        return super().split(X, y, groups)


@pytest.mark.parametrize("routing", [False, True])
def test_groups_reach_alpha_cv(iris, routing):
    X, y = iris
    groups = np.arange(len(y)) % 7
    _RecordingGroupKFold.seen.clear()
    with sklearn.config_context(enable_metadata_routing=routing):
        clf = ConvexAggregationClassifierCV(alphas=[1e-3, 1.0], alpha_cv=_RecordingGroupKFold(3))
        clf.fit(X, y, groups=groups)
    assert clf.cv_scores_.shape == (2, 3)
    np.testing.assert_array_equal(_RecordingGroupKFold.seen[-1], groups)


def test_groups_without_a_splitter_is_an_error(iris):
    with pytest.raises(
        ValueError, match="groups was given but .* splitter to pass it to \\(cv='in_sample'\\)"
    ):
        ConvexAggregationClassifier(cv="in_sample").fit(*iris, groups=np.zeros(150))


class _NoWeights(LogisticRegression):
    """A learner whose fit takes no sample_weight."""

    def fit(self, X, y):
        return super().fit(X, y)


@pytest.mark.parametrize("routing", [False, True])
@pytest.mark.parametrize("Learner", [_NoWeights, LogisticRegression])
def test_prefit_binaries_are_not_asked_for_fit_parameters(iris, routing, Learner):
    """cv='prefit' never fits the binaries, but refused sample_weight for a learner that
    cannot take it, and under routing raised UnsetMetadataPassedError for the fit of
    one that can (its request left unset)."""
    X, y = iris
    w = np.random.default_rng(4).uniform(0.2, 3.0, size=len(y))
    code = one_vs_one(3)
    binaries = []
    for column in code.T:
        rows = column[y] != 0
        binaries.append(Learner().fit(X[rows], column[y[rows]] == 1))
    with sklearn.config_context(enable_metadata_routing=routing):
        clf = ConvexAggregationClassifier(binaries, code=code, cv="prefit", random_state=0)
        clf.fit(X, y, sample_weight=w)
        Q = np.column_stack([b.predict_proba(X)[:, 1] for b in binaries])
        # "auto" for the weights' sum, the rows they stand for
        shrinkage = auto_entry_weight_shrinkage(w.sum())
        assert shrinkage < ENTRY_WEIGHT_SHRINKAGE_RANGE[1]
        assert clf.entry_weight_shrinkage_ == shrinkage
        assert round(clf.zero_entry_penalty_ * w.sum(), 9) in ZERO_ENTRY_PRIORS
        model = {**DEFAULT_MODEL, "entry_weight_shrinkage": shrinkage}
        ref = fit_default_decoder(clf, Q, y, model, sample_weight=w)
        np.testing.assert_allclose(clf.weights_, ref.weights_, rtol=1e-12)
        clf.fit_decoder(X, y, sample_weight=w)
        np.testing.assert_allclose(clf.weights_, ref.weights_, rtol=1e-12)
