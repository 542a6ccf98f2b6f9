"""The displays draw what they hold: artists, labels, legends, shared axes, errors.

matplotlib's Agg backend; small fits on iris and the paper's synthetic outputs.
"""

import sys

import matplotlib
import numpy as np
import pytest
from sklearn.datasets import load_iris
from sklearn.exceptions import NotFittedError
from sklearn.svm import LinearSVC
from sklearn.utils._param_validation import InvalidParameterError

from convexagg import (
    BradleyTerryDecoder,
    CodeMatrixClassifier,
    ConvergenceDisplay,
    ConvexAggregationClassifier,
    ConvexDecoder,
    RegularizationPathDisplay,
    ReliabilityDisplay,
    WeightsDisplay,
    regularization_path,
)
from convexagg._optional import MissingDependencyError
from convexagg.datasets import make_broken_classifier_outputs
from convexagg.metrics import classwise_calibration_error, top_label_calibration_error

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (after the backend is chosen)


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


@pytest.fixture(scope="module")
def iris():
    data = load_iris()
    X, y = data.data, data.target_names[data.target]  # string labels
    rng = np.random.default_rng(0)
    test = rng.permutation(y.size)[:50]
    train = np.setdiff1d(np.arange(y.size), test)
    return X[train], y[train], X[test], y[test]


@pytest.fixture(scope="module")
def clf(iris):
    X, y, _, _ = iris
    return ConvexAggregationClassifier(code="ovo", fit_intercept=False).fit(X, y)


@pytest.fixture(scope="module")
def broken():
    return make_broken_classifier_outputs(random_state=0)


def legend_texts(ax):
    return [t.get_text() for t in ax.get_legend().get_texts()]


# ----------------------------------------------------------------------------- reliability


def test_top_label_diagram_has_the_curve_the_diagonal_and_the_error(clf, iris):
    _, _, X_test, y_test = iris
    disp = ReliabilityDisplay.from_estimator(clf, X_test, y_test, n_bins=10)
    ece = top_label_calibration_error(y_test, clf.predict_proba(X_test), n_bins=10)
    assert disp.calibration_error == pytest.approx(ece) and disp.class_errors is None
    ax = disp.ax_
    assert disp.figure_ is ax.figure
    assert len(ax.get_lines()) == 2 and len(disp.lines_) == 1  # diagonal + curve
    assert len(disp.bin_markers_) == 1
    assert legend_texts(ax) == [
        "Perfectly calibrated",
        f"ConvexAggregationClassifier\ntop-label ECE = {ece:.3f}",
        "disc area: share of samples",
    ]
    assert ax.get_xlabel().startswith("Confidence") and ax.get_ylabel() == "Accuracy"
    # the curve is the non-empty bins, confidence on x and accuracy on y
    nonempty = disp.bin_weight > 0
    np.testing.assert_allclose(disp.lines_[0].get_xdata(), disp.prob_pred[nonempty])
    np.testing.assert_allclose(disp.lines_[0].get_ydata(), disp.prob_true[nonempty])


def test_classwise_diagram_has_one_curve_per_class(clf, iris):
    _, _, X_test, y_test = iris
    disp = ReliabilityDisplay.from_estimator(
        clf, X_test, y_test, kind="classwise", name="ovo", show_bin_weight=False
    )
    proba = clf.predict_proba(X_test)
    ece = classwise_calibration_error(y_test, proba)
    assert disp.calibration_error == pytest.approx(ece)
    assert disp.prob_true.shape == (3, 15) and disp.bin_markers_ is None
    assert len(disp.lines_) == 3 and len(disp.ax_.get_lines()) == 4
    legend = disp.ax_.get_legend()
    assert legend.get_title().get_text() == f"ovo\nclasswise ECE = {ece:.3f}"
    texts = legend_texts(disp.ax_)
    assert texts[1:] == [f"{c}: ECE = {e:.3f}" for c, e in zip(clf.classes_, disp.class_errors)]


def test_diagrams_share_an_existing_axes(clf, iris):
    X, y, X_test, y_test = iris
    other = ConvexAggregationClassifier(code="ovr").fit(X, y)
    fig, ax = plt.subplots()
    first = ReliabilityDisplay.from_estimator(clf, X_test, y_test, ax=ax, name="ovo")
    second = ReliabilityDisplay.from_estimator(other, X_test, y_test, ax=ax, name="ovr")
    assert first.ax_ is second.ax_ is ax and second.figure_ is fig
    assert len(ax.get_lines()) == 3  # one diagonal, two curves
    texts = legend_texts(ax)
    assert texts[0] == "Perfectly calibrated" and texts.count("disc area: share of samples") == 1
    assert texts[1].startswith("ovo\ntop-label ECE") and texts[2].startswith("ovr\ntop-label")


@pytest.mark.parametrize("kind", ["top_label", "classwise"])
def test_the_legend_is_inside_a_users_own_axes(clf, iris, kind):
    """A figure saved from the user's axes (no constrained layout) keeps the ECE."""
    _, _, X_test, y_test = iris
    fig, ax = plt.subplots(figsize=(4, 4))
    disp = ReliabilityDisplay.from_estimator(clf, X_test, y_test, kind=kind, ax=ax)
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    legend = ax.get_legend().get_window_extent(renderer)
    axes = ax.get_window_extent(renderer)
    assert axes.x0 <= legend.x0 and legend.x1 <= axes.x1
    assert axes.y0 <= legend.y0 and legend.y1 <= axes.y1
    assert any("ECE" in t for t in [*legend_texts(ax), ax.get_legend().get_title().get_text()])
    assert disp.figure_ is fig


def test_from_predictions_passes_labels_and_weights_to_the_metric(clf, iris):
    _, _, X_test, y_test = iris
    proba = clf.predict_proba(X_test)
    keep = y_test != "virginica"  # a class absent from y_true: labels name the columns
    w = np.arange(keep.sum()) % 3
    disp = ReliabilityDisplay.from_predictions(
        y_test[keep], proba[keep], labels=clf.classes_, sample_weight=w, kind="classwise"
    )
    expected = classwise_calibration_error(
        y_test[keep], proba[keep], labels=clf.classes_, sample_weight=w
    )
    assert disp.calibration_error == pytest.approx(expected)
    assert legend_texts(disp.ax_)[-2].startswith("virginica: ECE")


def test_reliability_errors(clf, iris):
    X, y, X_test, y_test = iris
    with pytest.raises(NotFittedError):
        ReliabilityDisplay.from_estimator(ConvexAggregationClassifier(), X_test, y_test)
    with pytest.raises(TypeError, match="LinearSVC has no predict_proba"):
        ReliabilityDisplay.from_estimator(LinearSVC().fit(X, y), X_test, y_test)
    with pytest.raises(InvalidParameterError, match="'kind' parameter"):
        ReliabilityDisplay.from_estimator(clf, X_test, y_test, kind="confidence")
    with pytest.raises(ValueError, match="y_true contains labels that are not among"):
        ReliabilityDisplay.from_estimator(clf, X_test, np.where(y_test == "setosa", "x", y_test))
    with pytest.raises(ValueError, match=r"one shape, \(n_bins,\) for kind='top_label'"):
        ReliabilityDisplay(np.zeros(3), np.zeros(3), np.zeros((2, 3)))


# ----------------------------------------------------------------------------- weights


def test_weights_display_draws_the_code_and_one_bar_per_classifier(clf):
    disp = WeightsDisplay.from_estimator(clf)
    K, M = clf.code_matrix_.shape
    np.testing.assert_array_equal(disp.im_.get_array(), clf.code_matrix_)
    assert len(disp.ax_.get_images()) == 1 and len(disp.bars_) == M
    np.testing.assert_allclose([b.get_height() for b in disp.bars_], clf.weights_)
    assert [t.get_text() for t in disp.ax_.get_yticklabels()] == list(clf.classes_)
    assert disp.ax_weights_.get_shared_x_axes().joined(disp.ax_, disp.ax_weights_)
    assert disp.ax_weights_.get_ylabel() == "weight"
    assert disp.ax_intercept_ is None and disp.intercept_bars_ is None  # no intercepts
    legend = disp.ax_.get_legend()
    assert legend.get_title().get_text() == "ConvexAggregationClassifier"
    assert legend_texts(disp.ax_) == ["+1: positive side", "-1: negative side", "0: not used"]
    assert len(disp.figure_.axes) == 2


def test_weights_display_shows_fitted_intercepts_beside_the_rows(iris):
    X, y, _, _ = iris
    clf = ConvexAggregationClassifier(code="ovr", fit_intercept=True).fit(X, y)
    disp = WeightsDisplay.from_estimator(clf)
    assert len(disp.intercept_bars_) == 3
    np.testing.assert_allclose([b.get_width() for b in disp.intercept_bars_], clf.intercept_)
    assert disp.ax_intercept_.get_shared_y_axes().joined(disp.ax_, disp.ax_intercept_)


def test_weights_display_from_a_decoder_on_existing_axes(broken):
    Q, y, code = broken
    decoder = ConvexDecoder().fit(Q, y, code)
    fig, ax = plt.subplots()
    disp = WeightsDisplay.from_decoder(decoder, class_names=["a", "b", "c"], ax=ax, color="C2")
    assert disp.ax_ is ax and disp.figure_ is fig
    np.testing.assert_allclose([b.get_height() for b in disp.bars_], decoder.weights_)
    assert disp.weights[2] < 0.05 * disp.weights.max()  # the broken classifier is off
    assert [t.get_text() for t in ax.get_yticklabels()] == ["a", "b", "c"]


def test_weights_display_errors(iris):
    X, y, _, _ = iris
    with pytest.raises(NotFittedError):
        WeightsDisplay.from_estimator(ConvexAggregationClassifier())
    coupling = CodeMatrixClassifier(decoder=BradleyTerryDecoder()).fit(X, y)
    with pytest.raises(TypeError, match="needs a fitted ConvexDecoder.*got BradleyTerryDecoder"):
        WeightsDisplay.from_estimator(coupling)
    with pytest.raises(ValueError, match="one entry per column of code"):
        WeightsDisplay(np.ones(2), np.ones((3, 3)))
    with pytest.raises(ValueError, match=r"intercept must have one entry per class \(3\)"):
        WeightsDisplay(np.ones(3), np.ones((3, 3)), intercept=np.ones(2))


# ----------------------------------------------------------------------------- convergence


@pytest.mark.parametrize(
    "solver, labels",
    [
        ("projected_newton", ["objective - f*", "projected gradient norm"]),
        ("interior_point", ["objective - f*", "KKT residual norm", "duality gap"]),
        ("lbfgsb", ["objective - f*"]),
    ],
)
def test_convergence_draws_each_solvers_measures(broken, solver, labels):
    Q, y, code = broken
    decoder = ConvexDecoder(solver=solver).fit(Q, y, code)
    disp = ConvergenceDisplay.from_estimator(decoder)
    assert legend_texts(disp.ax_) == labels and len(disp.ax_.get_lines()) == len(labels)
    assert disp.ax_.get_yscale() == "log" and disp.ax_.get_xlabel() == "iteration"
    title = disp.ax_.get_legend().get_title().get_text()
    assert title == f"ConvexDecoder, {type(decoder.solver_).__name__}"
    objective = decoder.history_["objective"]
    np.testing.assert_allclose(disp.suboptimality, objective - objective.min())
    # log scale: the optimum itself (0) is not drawn
    assert np.isnan(disp.lines_[0].get_ydata()[np.argmin(objective)])


def test_convergence_of_a_classifier_and_of_a_history(clf):
    disp = ConvergenceDisplay.from_estimator(clf, name="iris")
    assert disp.ax_.get_legend().get_title().get_text().startswith("iris, ")
    history = {"objective": [3.0, 2.0, 1.5, 1.5], "best": [3.0, 2.0, 1.5, 1.5]}
    fig, ax = plt.subplots()
    disp = ConvergenceDisplay(history).plot(ax=ax)
    assert disp.ax_ is ax and legend_texts(ax) == ["objective - f*", "best objective - f*"]
    np.testing.assert_allclose(disp.suboptimality, [1.5, 0.5, 0.0, 0.0])
    assert ax.get_legend().get_title().get_text() == ""


def test_convergence_errors():
    with pytest.raises(NotFittedError):
        ConvergenceDisplay.from_estimator(ConvexDecoder())
    with pytest.raises(ValueError, match="'objective' entry"):
        ConvergenceDisplay({"gap": [1.0]})


# ----------------------------------------------------------------------------- path


def test_path_display_from_an_estimator_draws_weights_and_accuracies(clf, iris):
    X, y, X_test, y_test = iris
    alphas = np.logspace(-4, 0, 5)
    disp = RegularizationPathDisplay.from_estimator(clf, X, y, alphas, X_val=X_test, y_val=y_test)
    M = clf.code_matrix_.shape[1]
    assert len(disp.lines_) == len(disp.ax_.get_lines()) == M
    assert len(disp.accuracy_lines_) == len(disp.ax_accuracy_.get_lines()) == 2
    assert disp.ax_.get_xscale() == "log" and disp.ax_accuracy_.get_ylabel() == "accuracy"
    assert legend_texts(disp.ax_accuracy_) == [
        f"weights ({M} classifiers)",
        "training accuracy",
        "validation accuracy",
    ]
    # the path of the classifier's own decoder on the outputs it was fitted on (with
    # cv=5 not predict_binary_proba: tests/test_training_plan.py checks the weights_)
    Q, y_idx, _ = clf.training_outputs(X, y)
    path = regularization_path(Q, y_idx, clf.code_matrix_, alphas, decoder=clf.decoder_)
    np.testing.assert_allclose(disp.weights, path.weights)
    np.testing.assert_allclose(disp.accuracy_lines_[0].get_ydata(), path.train_accuracy)
    np.testing.assert_allclose(disp.lines_[0].get_xdata(), path.alphas)


def test_path_display_from_a_path_on_existing_axes(broken):
    Q, y, code = broken
    path = regularization_path(Q, y, code, [0.0, 1e-3, 1e-1])
    fig, ax = plt.subplots()
    disp = RegularizationPathDisplay.from_path(path, ax=ax, name="broken")
    assert disp.ax_ is ax and disp.figure_ is fig and len(disp.accuracy_lines_) == 1
    assert disp.lines_[0].get_xdata().tolist() == [1e-1, 1e-3]  # alpha = 0: not on a log axis
    assert disp.ax_accuracy_.get_legend().get_title().get_text() == "broken"


def test_path_display_errors(clf, iris, broken):
    X, y, X_test, _ = iris
    with pytest.raises(ValueError, match="X_val and y_val must be given together"):
        RegularizationPathDisplay.from_estimator(clf, X, y, [1.0], X_val=X_test)
    with pytest.raises(ValueError, match="y contains labels that are not among the classes"):
        RegularizationPathDisplay.from_estimator(clf, X, np.where(y == "setosa", "x", y), [1.0])
    Q, y_b, code = broken
    with pytest.raises(TypeError, match="needs a classifier"):
        RegularizationPathDisplay.from_estimator(ConvexDecoder().fit(Q, y_b, code), Q, y_b, [1])
    with pytest.raises(ValueError, match="must agree"):
        RegularizationPathDisplay([1.0, 0.1], np.ones((3, 2)), [0.5, 0.6])


# ----------------------------------------------------------------------------- all


def test_a_missing_matplotlib_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib fails
    with pytest.raises(MissingDependencyError) as info:
        ConvergenceDisplay({"objective": [1.0, 0.5]}).plot()
    assert str(info.value) == (
        'ConvergenceDisplay.plot needs matplotlib: pip install "convexagg[experiments]"'
    )


def test_every_display_renders_to_png(clf, iris, tmp_path):
    X, y, X_test, y_test = iris
    displays = {
        "reliability": ReliabilityDisplay.from_estimator(clf, X_test, y_test),
        "classwise": ReliabilityDisplay.from_estimator(clf, X_test, y_test, kind="classwise"),
        "weights": WeightsDisplay.from_estimator(clf),
        "convergence": ConvergenceDisplay.from_estimator(clf),
        "path": RegularizationPathDisplay.from_estimator(clf, X, y, np.logspace(-4, 0, 5)),
    }
    for name, disp in displays.items():
        target = tmp_path / f"{name}.png"
        disp.figure_.savefig(target, dpi=60)
        assert target.stat().st_size > 1000


@pytest.mark.parametrize("entry", [2, np.nan, 0.5])
def test_weights_display_refuses_a_code_with_other_entries(entry):
    """A 2 was drawn in the colour of +1 and NaN as a blank, with no word."""
    code = np.array([[1.0, -1.0], [-1.0, 0.0], [0.0, 1.0]])
    code[1, 1] = entry
    with pytest.raises(ValueError, match="code must hold only -1, 0 and \\+1 entries; found"):
        WeightsDisplay(np.ones(2), code)
