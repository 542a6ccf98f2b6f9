"""Every bad input gets a clear error that names the parameter, and nothing is
left half-fitted."""

import numpy as np
import pytest
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.datasets import load_iris
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.exceptions import NotFittedError
from sklearn.linear_model import LogisticRegression
from sklearn.svm import LinearSVC
from sklearn.utils._param_validation import InvalidParameterError
from sklearn.utils.validation import check_is_fitted

from convexagg import (
    CodeMatrixClassifier,
    ConvexAggregationClassifier,
    ConvexAggregationClassifierCV,
    ConvexDecoder,
)
from convexagg.codes import check_code_matrix, make_code, one_vs_one, one_vs_rest
from convexagg.decoders import PairwiseCouplingDecoder
from helpers import DECODERS, accepts_code, scores

ESTIMATORS = [CodeMatrixClassifier, ConvexAggregationClassifier]


@pytest.fixture(scope="module")
def iris():
    return load_iris(return_X_y=True)


def _fitted_attributes(obj):
    return sorted(k for k in vars(obj) if k.endswith("_") and not k.startswith("__"))


# --------------------------------------------------------------------------- X and y


@pytest.mark.parametrize("Estimator", ESTIMATORS)
@pytest.mark.parametrize(
    "value, message", [(np.nan, "Input X contains NaN"), (np.inf, "Input X contains infinity")]
)
def test_nonfinite_X_rejected_when_the_learner_cannot_take_it(iris, Estimator, value, message):
    X, y = iris
    X = X.copy()
    X[3, 1] = value
    clf = Estimator()
    with pytest.raises(ValueError, match=message):
        clf.fit(X, y)
    assert _fitted_attributes(clf) == []
    fitted = Estimator().fit(iris[0], y)
    with pytest.raises(ValueError, match=message):
        fitted.predict_proba(X)


def test_nan_in_X_passes_through_to_a_learner_that_takes_it(iris):
    X, y = iris
    X = X.copy()
    X[::7, 0] = np.nan
    clf = CodeMatrixClassifier(HistGradientBoostingClassifier(max_iter=5), code="ovr").fit(X, y)
    assert np.isfinite(clf.predict_proba(X)).all()


@pytest.mark.parametrize("Estimator", ESTIMATORS)
def test_y_with_one_class(iris, Estimator):
    with pytest.raises(ValueError, match="y contains 1 class"):
        Estimator().fit(iris[0], np.full(150, "a"))


@pytest.mark.parametrize("Estimator", ESTIMATORS)
def test_continuous_y(iris, Estimator):
    y = np.linspace(0.0, 1.0, 12)  # few samples: unchecked, it would fit 12 "classes" quickly
    with pytest.raises(ValueError, match="Unknown label type: 'continuous'. y must hold class"):
        Estimator().fit(iris[0][:12], y)


def test_y_with_nan(iris):
    y = iris[1].astype(float)
    y[0] = np.nan
    with pytest.raises(ValueError, match="Input y contains NaN"):
        ConvexAggregationClassifier().fit(iris[0], y)


@pytest.mark.parametrize("Estimator", ESTIMATORS)
def test_X_and_y_of_different_lengths(iris, Estimator):
    X, y = iris
    with pytest.raises(ValueError, match="X has 150 samples but y has 149 labels"):
        Estimator().fit(X, y[:-1])


@pytest.mark.parametrize("method", ["predict", "predict_proba", "decision_function"])
def test_predict_with_a_different_number_of_features(iris, method):
    X, y = iris
    clf = ConvexAggregationClassifier().fit(X, y)
    with pytest.raises(ValueError, match="X has 3 features, but .* is expecting 4 features"):
        getattr(clf, method)(X[:, :3])


# --------------------------------------------------------------------------- code matrices

INVALID_CODES = [
    pytest.param([1, -1, 1], "code must be a 2-D array", id="1-D"),
    pytest.param([[1, -1], [-1, 1]], "code has 2 rows but there are 3 classes", id="rows"),
    pytest.param(np.zeros((3, 0)), "code needs at least 2 rows and 1 column", id="no-columns"),
    pytest.param([[1, 2], [-1, 0], [0, -1]], "code entries must be -1, 0 or \\+1; found 2", id="2"),
    pytest.param([[1, np.nan], [-1, 1], [0, -1]], "found nan", id="nan"),
    pytest.param([["a", "b"], ["c", "d"], ["e", "f"]], "code must be a numeric array", id="str"),
    pytest.param([[1, 1], [1, -1], [0, -1]], "code column 0 has no -1 class", id="one-sided"),
    pytest.param([[-1, 1], [-1, -1], [0, 1]], "code column 0 has no \\+1 class", id="no-plus"),
    pytest.param(
        [[1, -1], [1, -1], [-1, 1]], "classes 0 and 1 have identical codewords", id="same"
    ),
    pytest.param([[1], [-1], [0]], "class 2 is used by no column", id="unused-class"),
    pytest.param(
        [[1, 0], [1, -1], [-1, 1]],
        "no column of the code puts classes 0 and 1 on opposite sides",
        id="unseparated",
    ),
]


@pytest.mark.parametrize("code, message", INVALID_CODES)
def test_invalid_code_matrix(iris, code, message):
    X, y = iris
    clf = CodeMatrixClassifier(code=code)
    with pytest.raises(ValueError, match=message):
        clf.fit(X, y)
    assert _fitted_attributes(clf) == []
    with pytest.raises(ValueError, match=message):
        check_code_matrix(code, n_classes=3)


@pytest.mark.parametrize("Decoder", DECODERS, ids=lambda c: c.__name__)
@pytest.mark.parametrize("code, message", INVALID_CODES[2:])
def test_decoders_reject_invalid_codes(Decoder, code, message):
    n_cols = np.shape(code)[1]
    Q = np.full((6, n_cols), 0.5)
    dec = Decoder()
    with pytest.raises(ValueError, match=message):
        dec.fit(Q, np.arange(6) % 3, code)
    assert _fitted_attributes(dec) == []


def test_duplicate_code_columns_are_accepted():
    code = np.hstack([one_vs_rest(3), one_vs_rest(3)[:, :1]])
    assert np.array_equal(check_code_matrix(code), code)


# --------------------------------------------------------------------------- parameters


@pytest.mark.parametrize(
    "params, message",
    [
        ({"alpha": -1.0}, "The 'alpha' parameter of ConvexAggregationClassifier must be a float"),
        ({"loss": "squared"}, "The 'loss' parameter of ConvexAggregationClassifier must be a str"),
        ({"code": "ovx"}, "The 'code' parameter of ConvexAggregationClassifier must be a str"),
        ({"zero_entry_penalty": -1.0}, "The 'zero_entry_penalty' parameter"),
        ({"cv": "sometimes"}, "The 'cv' parameter"),
    ],
)
def test_invalid_estimator_parameters(iris, params, message):
    clf = ConvexAggregationClassifier(**params)
    with pytest.raises(InvalidParameterError, match=message):
        clf.fit(*iris)
    assert _fitted_attributes(clf) == []


@pytest.mark.parametrize(
    "params, message",
    [
        ({"alpha": -1.0}, "The 'alpha' parameter of ConvexDecoder"),
        ({"loss": "squared"}, "The 'loss' parameter of ConvexDecoder"),
    ],
)
def test_invalid_decoder_parameters(params, message):
    with pytest.raises(InvalidParameterError, match=message):
        ConvexDecoder(**params).fit(np.full((3, 3), 0.5), [0, 1, 2], one_vs_rest(3))


def test_invalid_decoder_parameters_fail_before_training(iris):
    clf = CodeMatrixClassifier(_MustNotBeTrained(), decoder=ConvexDecoder(alpha=-1))
    with pytest.raises(InvalidParameterError, match="The 'alpha' parameter of ConvexDecoder"):
        clf.fit(*iris)


def test_unknown_code_name():
    with pytest.raises(ValueError, match="code must be one of .* got 'ovx'"):
        make_code("ovx", 3)


# --------------------------------------------------------------------------- base learners


class _PredictOnly(ClassifierMixin, BaseEstimator):
    """A classifier with neither predict_proba nor decision_function."""

    def fit(self, X, y):
        self.classes_ = np.unique(y)
        return self

    def predict(self, X):
        return np.full(len(X), self.classes_[0])


class _MustNotBeTrained(ClassifierMixin, BaseEstimator):
    """Has decision_function; fails loudly if anyone trains it."""

    def fit(self, X, y):
        raise AssertionError("a binary classifier was trained before the inputs were checked")

    def decision_function(self, X):  # pragma: no cover - never reached
        return np.zeros(len(X))


class _BrokenProba(ClassifierMixin, BaseEstimator):
    """Returns a fixed, broken probability of the positive side."""

    def __init__(self, value=np.nan):
        self.value = value

    def fit(self, X, y):
        self.classes_ = np.unique(y)
        return self

    def predict_proba(self, X):
        p = np.full(len(X), self.value)
        return np.column_stack([1 - p, p])


@pytest.mark.parametrize("Estimator", ESTIMATORS)
def test_learner_with_neither_predict_proba_nor_decision_function(iris, Estimator):
    clf = Estimator(_PredictOnly())
    with pytest.raises(TypeError, match="has neither predict_proba nor decision_function"):
        clf.fit(*iris)
    assert _fitted_attributes(clf) == []


def test_margin_learner_with_a_probability_loss_fails_before_training(iris):
    with pytest.raises(ValueError, match="loss='cross_entropy' is not defined for output='margin'"):
        ConvexAggregationClassifier(_MustNotBeTrained()).fit(*iris)


@pytest.mark.parametrize(
    "value, message",
    [
        (np.nan, "binary classifier 0 \\(_BrokenProba\\) returned NaN or infinite outputs"),
        (1.5, "binary classifier 0 \\(_BrokenProba\\) returned probabilities outside \\[0, 1\\]"),
    ],
)
def test_broken_binary_classifier_is_named(iris, value, message):
    clf = ConvexAggregationClassifier(_BrokenProba(value))
    with pytest.raises(ValueError, match=message):
        clf.fit(*iris)
    assert _fitted_attributes(clf) == []


def test_prefit_binaries_are_checked(iris):
    X, y = iris
    multiclass = LogisticRegression(max_iter=1000).fit(X, y)
    with pytest.raises(ValueError, match="estimator\\[0\\] must be a fitted binary classifier"):
        ConvexAggregationClassifier([multiclass] * 3, code="ovo", cv="prefit").fit(X, y)
    with pytest.raises(NotFittedError):
        ConvexAggregationClassifier([LogisticRegression()] * 3, code="ovo", cv="prefit").fit(X, y)
    binary = y == 0
    # probabilities only, margins only: no output kind they share
    mixed = [_BrokenProba(0.3).fit(X, binary), LinearSVC().fit(X, binary)] * 2
    clf = CodeMatrixClassifier(mixed[:3], code="ovo", cv="prefit")
    with pytest.raises(TypeError, match="all have predict_proba or all have decision_function"):
        clf.fit(X, y)
    # both have decision_function: margins are used
    both = [LogisticRegression(max_iter=1000).fit(X, binary), LinearSVC().fit(X, binary)] * 2
    clf = CodeMatrixClassifier(both[:3], decoder=ConvexDecoder(loss="logistic"), cv="prefit")
    assert clf.fit(X, y).binary_output_ == "margin"
    with pytest.raises(TypeError, match="neither predict_proba nor decision_function"):
        CodeMatrixClassifier([_PredictOnly().fit(X, binary)] * 3, cv="prefit").fit(X, y)


# --------------------------------------------------------------------------- all-or-nothing fit


@pytest.mark.parametrize("Estimator", ESTIMATORS)
def test_failed_fit_leaves_the_estimator_as_it_was(iris, Estimator):
    X, y = iris
    clf = Estimator(LinearSVC(), code="ovr")
    with pytest.raises(ValueError):
        clf.fit(X, y)  # cross-entropy on margins (ConvexDecoder's default loss)
    with pytest.raises(NotFittedError):
        check_is_fitted(clf)  # validate_data had set n_features_in_ before the failure
    assert _fitted_attributes(clf) == []

    clf = Estimator(code="ovr").fit(X, y)
    before = {k: getattr(clf, k) for k in _fitted_attributes(clf)}
    P = clf.predict_proba(X)
    with pytest.raises(ValueError):
        clf.fit(X[:, :2], np.zeros(150))  # one class, two features
    assert _fitted_attributes(clf) == sorted(before)
    assert all(getattr(clf, k) is v for k, v in before.items())
    np.testing.assert_array_equal(clf.predict_proba(X), P)


# --------------------------------------------------------------------------- decoders


def _Q(n=9, M=3, seed=0):
    return np.random.default_rng(seed).uniform(size=(n, M))


@pytest.mark.parametrize("Decoder", DECODERS, ids=lambda c: c.__name__)
@pytest.mark.parametrize(
    "bad, message",
    [
        (1.5, "Q holds probabilities \\(output='proba'\\) but has values outside \\[0, 1\\]"),
        (-0.1, "outside \\[0, 1\\]"),
        (np.nan, "Q contains NaN or infinite values"),
        (np.inf, "Q contains NaN or infinite values"),
    ],
)
def test_decoders_reject_bad_Q(Decoder, bad, message):
    code = one_vs_one(3)
    Q = _Q()
    Q[4, 1] = bad
    dec = Decoder()
    with pytest.raises(ValueError, match=message):
        dec.fit(Q, np.arange(9) % 3, code)
    assert _fitted_attributes(dec) == []
    fitted = Decoder().fit(_Q(), np.arange(9) % 3, code)
    with pytest.raises(ValueError, match=message):
        scores(fitted, Q)


@pytest.mark.parametrize("Decoder", DECODERS, ids=lambda c: c.__name__)
def test_decoders_reject_inconsistent_shapes_and_labels(Decoder):
    code = one_vs_one(3)
    y = np.arange(9) % 3
    with pytest.raises(ValueError, match="Q has 2 columns but the code matrix has 3"):
        Decoder().fit(_Q(M=2), y, code)
    with pytest.raises(ValueError, match="Q must be 2-D"):
        Decoder().fit(_Q()[0], y, code)
    with pytest.raises(ValueError, match="Q has 0 rows"):
        Decoder().fit(np.empty((0, 3)), np.empty(0, dtype=int), code)
    with pytest.raises(ValueError, match="y must be 1-D with one label per row of Q"):
        Decoder().fit(_Q(), y[:-1], code)
    with pytest.raises(ValueError, match="y must hold integer class indices in 0..n_classes-1"):
        Decoder().fit(_Q(), y + 1, code)
    with pytest.raises(ValueError, match="output must be one of"):
        Decoder().fit(_Q(), y, code, output="logits")
    with pytest.raises(NotFittedError):
        scores(Decoder(), _Q())
    fitted = Decoder().fit(_Q(), y, code)
    with pytest.raises(ValueError, match="Q has 2 columns but the decoder was fitted with 3"):
        scores(fitted, _Q(M=2))


def test_convex_decoder_loss_output_mismatch_leaves_nothing_fitted():
    dec = ConvexDecoder()  # cross-entropy needs probabilities
    with pytest.raises(ValueError, match="loss='cross_entropy' is not defined for output='margin'"):
        dec.fit(_Q() * 4 - 2, np.arange(9) % 3, one_vs_one(3), output="margin")
    assert _fitted_attributes(dec) == []


def test_pairwise_coupling_needs_a_one_vs_one_code():
    assert not accepts_code(PairwiseCouplingDecoder, one_vs_rest(3))
    dec = PairwiseCouplingDecoder()
    with pytest.raises(ValueError, match="code"):
        dec.fit(_Q(), np.arange(9) % 3, one_vs_rest(3))
    assert _fitted_attributes(dec) == []


class _FailsAfterFitting(ConvexDecoder):
    """A decoder subclass whose fit fails after the base fit has set everything."""

    def fit(self, Q, y, code, output="proba"):
        super().fit(Q, y, code, output)
        raise RuntimeError("failed late (simulated)")


def test_every_decoder_fit_is_all_or_nothing(monkeypatch):
    y = np.arange(9) % 3
    dec = _FailsAfterFitting()
    with pytest.raises(RuntimeError, match="simulated"):
        dec.fit(_Q(), y, one_vs_one(3))
    assert _fitted_attributes(dec) == []  # wrapped by BaseDecoder.__init_subclass__

    fitted = ConvexDecoder().fit(_Q(), y, one_vs_one(3))
    weights, P = fitted.weights_, fitted.predict_proba(_Q())

    def solver_failure(*args, **kwargs):
        raise FloatingPointError("solver failed (simulated)")

    monkeypatch.setattr("convexagg.solvers.config.ProjectedNewton._solve", solver_failure)
    with pytest.raises(FloatingPointError):
        fitted.fit(_Q(seed=1), y, one_vs_rest(3))  # the inputs are validated, then the solve fails
    assert fitted.weights_ is weights and np.array_equal(fitted.code_, one_vs_one(3))
    np.testing.assert_array_equal(fitted.predict_proba(_Q()), P)


# ------------------------------------------------------------------- settings, before training


def _late_settings():
    from convexagg.solvers import InteriorPoint, ProjectedNewton

    return [
        (
            lambda L: ConvexAggregationClassifier(
                L, loss="logistic", solver=ProjectedNewton(tol=0)
            ),
            InvalidParameterError,
            "The 'tol' parameter of ProjectedNewton",
        ),
        (
            lambda L: CodeMatrixClassifier(
                L,
                decoder=ConvexDecoder(
                    loss="logistic", formulation="large_margin", solver="projected_newton"
                ),
            ),
            ValueError,
            "formulation='large_margin' cannot be solved by ProjectedNewton",
        ),
        (
            lambda L: CodeMatrixClassifier(
                L,
                decoder=ConvexDecoder(
                    loss="logistic", formulation="stiffness", solver=InteriorPoint(dtype="float32")
                ),
            ),
            ValueError,
            "formulation='stiffness' cannot use InteriorPoint\\(dtype='float32'\\)",
        ),
        (
            lambda L: CodeMatrixClassifier(L, decoder=ConvexDecoder(loss="logistic", tau=10.0)),
            ValueError,
            "tau=10.0 applies only to formulation='stiffness'",
        ),
        (
            lambda L: ConvexAggregationClassifierCV(
                L, loss="logistic", solver=InteriorPoint(max_iter=0)
            ),
            InvalidParameterError,
            "The 'max_iter' parameter of InteriorPoint",
        ),
        (
            lambda L: ConvexAggregationClassifier(L, loss="logistic", alpha=1e308),
            InvalidParameterError,
            "The 'alpha' parameter of ConvexAggregationClassifier",
        ),
    ]


@pytest.mark.parametrize("cv", ["in_sample", 3])
@pytest.mark.parametrize("make, error, message", _late_settings())
def test_every_setting_is_validated_before_any_binary_is_trained(iris, make, error, message, cv):
    """Bad solver settings were refused only after every binary of every fold was trained."""
    clf = make(_MustNotBeTrained()).set_params(cv=cv)
    with pytest.raises(error, match=message):
        clf.fit(*iris)
    assert _fitted_attributes(clf) == []


# --------------------------------------------------------------------------- solver results


def _solvers_with_bad_results():
    from convexagg.solvers import ProjectedNewton, SolverConfig, SolverResult

    class NaNWeights(SolverConfig):  # through the documented _solve
        dtype = "float64"

        def required_methods(self, objective=None):
            return ()

        def _solve(self, objective, previous, callback):
            w = np.full(objective.n_variables, np.nan)
            return SolverResult(w, None, 1, True, {"objective": np.zeros(1)})

    class NegativeWeights(ProjectedNewton):  # overriding solve itself
        def solve(self, objective, previous=None, callback=None):
            result = super().solve(objective, previous, callback)
            result.w = result.w - 1.0
            return result

    class WrongShape(ProjectedNewton):
        def _solve(self, objective, previous, callback):
            result = super()._solve(objective, previous, callback)
            result.w = result.w[:-1]
            return result

    class NotAResult(ProjectedNewton):
        def _solve(self, objective, previous, callback):
            return super()._solve(objective, previous, callback).w

    return [
        (NaNWeights(), "the solver NaNWeights returned non-finite"),
        (NegativeWeights(), "the solver NegativeWeights returned negative weights"),
        (WrongShape(), "the solver WrongShape returned w of shape \\(2,\\); the objective has 3"),
        (NotAResult(), "the solver NotAResult returned ndarray, not a SolverResult"),
    ]


@pytest.mark.parametrize("solver, message", _solvers_with_bad_results())
def test_a_solver_result_is_checked_whoever_wrote_the_solver(iris, solver, message):
    """A user's SolverConfig returning NaN weights was accepted: every prediction NaN."""
    Q = np.random.default_rng(0).uniform(0.05, 0.95, size=(30, 3))
    y = np.arange(30) % 3
    decoder = ConvexDecoder(solver=solver)
    with pytest.raises(ValueError, match=message):
        decoder.fit(Q, y, one_vs_rest(3))
    assert _fitted_attributes(decoder) == []
    # the decoder's model (one weight per classifier, no intercepts): the same shapes
    clf = ConvexAggregationClassifier(
        code="ovr", solver=solver, cv="in_sample", entry_weight_shrinkage=None, fit_intercept=False
    )
    with pytest.raises(ValueError, match=message):
        clf.fit(*iris)


# --------------------------------------------------------------------------- extreme numbers


def test_alpha_beyond_the_solvable_range_is_refused_by_name():
    """alpha=1e308 ended in scipy's 'Optimization bounds must be finite scalars'."""
    from convexagg import regularization_path
    from convexagg.aggregation import MAX_ALPHA

    Q = np.random.default_rng(0).uniform(0.05, 0.95, size=(30, 3))
    y, code = np.arange(30) % 3, one_vs_rest(3)
    with pytest.raises(InvalidParameterError, match="The 'alpha' parameter of ConvexDecoder"):
        ConvexDecoder(alpha=1e308).fit(Q, y, code)
    with pytest.raises(ValueError, match="alphas must be .* values in \\[0, 1e\\+10\\]"):
        ConvexAggregationClassifierCV(alphas=[1.0, 1e308], cv="in_sample").fit(
            *load_iris(return_X_y=True)
        )
    with pytest.raises(ValueError, match="alpha must be in \\[0, 1e\\+10\\]"):
        regularization_path(Q, y, code, alphas=[1e308])
    # the largest accepted value solves: every weight 0 to working precision
    assert ConvexDecoder(alpha=MAX_ALPHA).fit(Q, y, code).weights_.max() < 1e-9


@pytest.mark.parametrize(
    "solver", ["projected_newton", "interior_point", "lbfgsb", "predictor_corrector"]
)
@pytest.mark.parametrize("penalty", ["l2", "l1", "elasticnet"])
def test_every_solver_solves_the_largest_accepted_alpha(solver, penalty):
    """Beyond MAX_ALPHA the interior point methods stop far from the optimum (at 1e12,
    L1: 1e12 above it); up to it every solver lands near w = 0, the optimum's limit."""
    from convexagg.aggregation import MAX_ALPHA
    from convexagg.datasets import make_broken_classifier_outputs
    from convexagg.solvers import InteriorPoint

    Q, y, code = make_broken_classifier_outputs(random_state=0)
    if solver == "predictor_corrector":
        solver = InteriorPoint(method="predictor_corrector")
    decoder = ConvexDecoder(alpha=MAX_ALPHA, penalty=penalty, solver=solver).fit(Q, y, code)
    objective = decoder.likelihood_objective(Q, y, code)
    at_zero = objective.value(np.zeros(code.shape[1]))
    assert objective.value(decoder.weights_) <= at_zero + 1e-4


def test_alpha_of_the_smallest_subnormal_is_alpha_zero():
    from convexagg.datasets import make_broken_classifier_outputs

    Q, y, code = make_broken_classifier_outputs(random_state=0)
    tiny = ConvexDecoder(alpha=5e-324).fit(Q, y, code)
    zero = ConvexDecoder(alpha=0.0).fit(Q, y, code)
    np.testing.assert_allclose(tiny.weights_, zero.weights_, rtol=1e-10)


@pytest.mark.parametrize("scale", [1e307, 5e-324])
def test_sample_weights_at_the_ends_of_the_float_range(scale):
    """Weights of 1e308 overflowed their sum ('the per-classifier losses must be
    finite'); 5e-324 lost every digit of it (weights off by 2.1). Only their ratios
    matter: integer weights times the scale fit as the integer weights."""
    from convexagg.datasets import make_broken_classifier_outputs

    Q, y, code = make_broken_classifier_outputs(random_state=0)
    counts = np.random.default_rng(0).integers(1, 4, size=len(y)).astype(float)
    ref = ConvexDecoder().fit(Q, y, code, sample_weight=counts)
    scaled = ConvexDecoder().fit(Q, y, code, sample_weight=counts * scale)
    np.testing.assert_allclose(scaled.weights_, ref.weights_, rtol=1e-10)


# --------------------------------------------------------------------------- folds


def test_more_folds_than_the_classes_have_rows_names_cv():
    """scikit-learn's 'n_splits=5 cannot be greater than the number of members in each
    class' named a parameter the user never set."""
    X = np.random.default_rng(0).normal(size=(12, 3))
    y = np.repeat([0, 1, 2], 4)
    with pytest.raises(ValueError, match="cv=5 cannot split .* fewer folds .* or cv=.in_sample."):
        ConvexAggregationClassifier().fit(X, y)
    from sklearn.model_selection import StratifiedKFold

    with pytest.raises(ValueError, match="cv=StratifiedKFold.* cannot split .* cv=.in_sample."):
        ConvexAggregationClassifier(cv=StratifiedKFold(5)).fit(X, y)
    with pytest.raises(ValueError, match="alpha_cv=5 cannot split .* pass fewer folds"):
        ConvexAggregationClassifierCV(alphas=[1.0], cv="in_sample").fit(X, y)
    with pytest.raises(ValueError, match="alpha_cv=5 cannot split"):  # before the folds of cv=3
        ConvexAggregationClassifierCV(_MustNotBeTrained(), loss="logistic", cv=3).fit(X, y)
    assert ConvexAggregationClassifier(cv="in_sample").fit(X, y).predict(X).shape == (12,)
    assert ConvexAggregationClassifier(cv=3).fit(X, y).predict(X).shape == (12,)


# --------------------------------------------------------------------------- learners


class _FitReturnsNone(LogisticRegression):
    """A learner whose fit returns None (scikit-learn's meta-estimators fit it)."""

    def fit(self, X, y, sample_weight=None):
        super().fit(X, y, sample_weight=sample_weight)


class _FitReturnsSelf(LogisticRegression):
    """The reference: the same learner, its fit returning the fitted object."""


@pytest.mark.parametrize("cv, warm_start", [("in_sample", False), ("in_sample", True), (3, False)])
def test_a_learner_whose_fit_returns_none(iris, cv, warm_start):
    X, y = iris
    clf = ConvexAggregationClassifier(
        _FitReturnsNone(max_iter=1000), cv=cv, random_state=0, warm_start=warm_start
    )
    # a subclass too, so that its folds are fitted the same way (cold, not in a warm chain)
    ref = ConvexAggregationClassifier(_FitReturnsSelf(max_iter=1000), cv=cv, random_state=0)
    clf.fit(X, y)
    clf.fit(X, y)  # a warm refit too
    np.testing.assert_allclose(clf.predict_proba(X), ref.fit(X, y).predict_proba(X), rtol=1e-6)
