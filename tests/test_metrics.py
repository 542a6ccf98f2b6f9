"""Calibration metrics: hand-computed bins, perfect calibration, invariances, errors."""

import numpy as np
import pytest
import sklearn
from sklearn.calibration import calibration_curve
from sklearn.utils._param_validation import InvalidParameterError

from convexagg.metrics import (
    classwise_calibration_error,
    reliability_curve,
    top_label_calibration_error,
)

METRICS = [top_label_calibration_error, classwise_calibration_error]

# Five samples, three classes, four bins: (0, .25], (.25, .5], (.5, .75], (.75, 1] (0 in
# the first); the edges are exact in binary floating point.
Y = np.array([0, 2, 2, 1, 0])
P = np.array(
    [
        [0.60, 0.30, 0.10],
        [0.20, 0.70, 0.10],
        [0.10, 0.10, 0.80],
        [0.40, 0.35, 0.25],
        [0.90, 0.05, 0.05],
    ]
)


def test_top_label_error_by_hand():
    # confidences .6 .7 .8 .4 .9, predictions 0 1 2 0 0, hits 1 0 1 0 1
    # bin 2: {.4}, acc 0, conf .4            -> 1/5 * .4  = .08
    # bin 3: {.6, .7}, acc 1/2, conf .65     -> 2/5 * .15 = .06
    # bin 4: {.8, .9}, acc 1, conf .85       -> 2/5 * .15 = .06
    assert top_label_calibration_error(Y, P, n_bins=4) == pytest.approx(0.20)
    prob_true, prob_pred, weight = reliability_curve(Y, P, n_bins=4)
    np.testing.assert_allclose(prob_true, [np.nan, 0.0, 0.5, 1.0])
    np.testing.assert_allclose(prob_pred, [np.nan, 0.4, 0.65, 0.85])
    np.testing.assert_allclose(weight, [0.0, 0.2, 0.4, 0.4])


def test_classwise_error_by_hand():
    # class 0: p .6 .2 .1 .4 .9, y==0 at .6 and .9
    #   bin 1 {.2, .1}: 0 vs .15 -> .06; bin 2 {.4}: 0 vs .4 -> .08;
    #   bin 3 {.6}: 1 vs .6 -> .08; bin 4 {.9}: 1 vs .9 -> .02          sum .24
    # class 1: p .3 .7 .1 .35 .05, y==1 at .35
    #   bin 1 {.1, .05}: 0 vs .075 -> .03; bin 2 {.3, .35}: .5 vs .325 -> .07;
    #   bin 3 {.7}: 0 vs .7 -> .14                                       sum .24
    # class 2: p .1 .1 .8 .25 .05, y==2 at the second .1 and .8; .25 is a right edge:
    #   bin 1 {.1, .1, .25, .05}: 1/4 vs .125 -> .1; bin 4 {.8}: 1 vs .8 -> .04  sum .14
    expected = (0.24 + 0.24 + 0.14) / 3
    assert classwise_calibration_error(Y, P, n_bins=4) == pytest.approx(expected)
    prob_true, prob_pred, weight = reliability_curve(Y, P, kind="classwise", n_bins=4)
    assert prob_true.shape == prob_pred.shape == weight.shape == (3, 4)
    np.testing.assert_allclose(prob_true[2], [0.25, np.nan, np.nan, 1.0])
    np.testing.assert_allclose(prob_pred[2], [0.125, np.nan, np.nan, 0.8])
    np.testing.assert_allclose(weight.sum(axis=1), 1.0)


def test_binary_classwise_curve_matches_scikit_learns_calibration_curve():
    rng = np.random.default_rng(0)
    p = rng.uniform(size=200)
    y = (rng.uniform(size=200) < p).astype(int)
    prob_true, prob_pred, weight = reliability_curve(y, p, kind="classwise", n_bins=7)
    ref_true, ref_pred = calibration_curve(y, p, n_bins=7)
    nonempty = weight[1] > 0
    np.testing.assert_allclose(prob_true[1][nonempty], ref_true)
    np.testing.assert_allclose(prob_pred[1][nonempty], ref_pred)


@pytest.mark.parametrize("metric", METRICS)
def test_perfect_calibration_is_zero(metric):
    # p = (.75, .25) four times, class 0 three times out of four
    y = np.array([0, 0, 1, 0])
    assert metric(y, np.tile([0.75, 0.25], (4, 1))) == pytest.approx(0.0, abs=1e-15)
    assert metric([2, 0, 1], np.eye(3)[[2, 0, 1]]) == 0.0  # certain and right


@pytest.mark.parametrize("metric", METRICS)
def test_wrong_and_certain_is_one(metric):
    y_prob = np.eye(3)[[1, 2, 0]]
    expected = 1.0 if metric is top_label_calibration_error else 2 / 3
    assert metric([0, 1, 2], y_prob) == pytest.approx(expected)


def random_problem(n=60, K=4, seed=0):
    rng = np.random.default_rng(seed)
    y_prob = rng.dirichlet(np.ones(K), size=n)
    y = np.array([rng.choice(K, p=p) for p in y_prob])
    return y, y_prob


@pytest.mark.parametrize("metric", METRICS)
def test_permuting_the_samples_changes_nothing(metric):
    y, y_prob = random_problem()
    order = np.random.default_rng(1).permutation(y.size)
    assert metric(y[order], y_prob[order]) == pytest.approx(metric(y, y_prob), rel=1e-12)


@pytest.mark.parametrize("metric", METRICS)
def test_integer_sample_weight_equals_repeated_rows(metric):
    y, y_prob = random_problem()
    w = np.random.default_rng(2).integers(0, 4, size=y.size)
    repeated = metric(np.repeat(y, w), np.repeat(y_prob, w, axis=0), labels=np.arange(4))
    assert metric(y, y_prob, sample_weight=w) == pytest.approx(repeated, rel=1e-12)
    scaled = metric(y, y_prob, sample_weight=2.5 * w)
    assert scaled == pytest.approx(repeated, rel=1e-12)


@pytest.mark.parametrize("metric", METRICS)
def test_labels_map_strings_and_missing_classes(metric):
    y, y_prob = random_problem()
    names = np.array(["ant", "bee", "cat", "dog"])
    assert metric(names[y], y_prob) == pytest.approx(metric(y, y_prob))
    # y_true without class 3: the columns are named by labels
    keep = y != 3
    subset = metric(y[keep], y_prob[keep], labels=[0, 1, 2, 3])
    assert subset == pytest.approx(metric(names[y[keep]], y_prob[keep], labels=names))


@pytest.mark.parametrize("metric", METRICS)
def test_one_dimensional_proba_is_the_second_class(metric):
    y, y_prob = random_problem(K=2)
    assert metric(y, y_prob[:, 1]) == pytest.approx(metric(y, y_prob))


def test_one_bin_is_accuracy_minus_mean_confidence():
    y, y_prob = random_problem(n=200)
    errors = [top_label_calibration_error(y, y_prob, n_bins=b) for b in (1, 15, 1000)]
    assert all(0.0 <= e <= 1.0 for e in errors)
    # one bin: |accuracy - mean confidence| over everything
    acc = np.mean(np.argmax(y_prob, axis=1) == y)
    assert errors[0] == pytest.approx(abs(acc - y_prob.max(axis=1).mean()))


@pytest.mark.skipif(
    tuple(int(v) for v in sklearn.__version__.split(".")[:2]) < (1, 7),
    reason="multiclass brier_score_loss needs scikit-learn >= 1.7",
)
def test_the_documented_brier_score_is_the_sum_over_classes():
    from sklearn.metrics import brier_score_loss

    onehot = np.eye(3)[Y]
    expected = np.mean(np.sum((onehot - P) ** 2, axis=1))
    assert brier_score_loss(Y, P, labels=[0, 1, 2], scale_by_half=False) == pytest.approx(expected)


@pytest.mark.parametrize("metric", METRICS)
@pytest.mark.parametrize(
    "args, kwargs, error, match",
    [
        ((Y, P), {"n_bins": 0}, InvalidParameterError, "'n_bins' parameter"),
        ((Y, P * 1.1), {}, ValueError, "rows must sum to 1.*row 0 sums to 1.1"),
        ((Y, P - 0.1), {}, ValueError, r"in \[0, 1\]; found min -0.05"),
        ((Y, np.where(P == 0.6, np.nan, P)), {}, ValueError, "y_prob contains NaN"),
        ((Y[:4], P), {}, ValueError, r"one label per row of y_prob \(5\); got shape \(4,\)"),
        ((Y, P[:, :1]), {}, ValueError, "one column per class"),
        ((Y, P), {"labels": [0, 1]}, ValueError, "labels has 2 classes but y_prob has 3"),
        ((Y, P), {"labels": [0, 1, 1]}, ValueError, "distinct labels"),
        ((Y, P), {"labels": [0, 1, 3]}, ValueError, r"not among the classes \[0, 1, 3\]: \[2\]"),
        ((Y[Y > 0], P[Y > 0]), {}, ValueError, "2 distinct labels but y_prob has 3.*labels="),
        ((Y, P), {"sample_weight": [1, 1]}, ValueError, r"shape \(5,\)"),
        (
            (Y, P),
            {"sample_weight": [1, -1, 1, 1, 1]},
            ValueError,
            "sample_weight must be finite and >= 0",
        ),
        ((Y, P), {"sample_weight": np.zeros(5)}, ValueError, "positive sum"),
    ],
)
def test_bad_inputs_name_the_argument(metric, args, kwargs, error, match):
    with pytest.raises(error, match=match):
        metric(*args, **kwargs)


def test_unknown_kind_is_refused():
    with pytest.raises(InvalidParameterError, match="'kind' parameter"):
        reliability_curve(Y, P, kind="confidence")


@pytest.mark.parametrize("metric", [*METRICS, reliability_curve])
@pytest.mark.parametrize("missing", [np.nan, None])
def test_a_missing_label_in_y_true_is_named(metric, missing):
    """NaN in y_true was counted as a fourth label: '4 distinct labels ... pass labels='."""
    y = Y.astype(object if missing is None else float)
    y[3] = missing
    with pytest.raises(ValueError, match="y_true contains NaN or None \\(y_true\\[3\\]\\)"):
        metric(y, P)
    with pytest.raises(ValueError, match="y_true contains NaN or None"):
        metric(y, P, labels=[0, 1, 2])
