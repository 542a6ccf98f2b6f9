"""OutputDecoderClassifier: a decoder as a classifier of precomputed binary outputs."""

import numpy as np
import pytest
from scipy.special import log_softmax, logit
from sklearn.datasets import load_iris
from sklearn.exceptions import NotFittedError
from sklearn.model_selection import GridSearchCV, cross_val_score
from sklearn.utils import get_tags
from sklearn.utils.estimator_checks import parametrize_with_checks

from convexagg import (
    CodeMatrixClassifier,
    ConvexDecoder,
    HammingDecoder,
    LossBasedDecoder,
    OutputDecoderClassifier,
)
from convexagg.codes import one_vs_one, one_vs_rest, ordinal, ternary_complete
from convexagg.io import load, save


def ordinal_as_wide_as(n_classes, n_columns):
    """The ordinal code's columns repeated up to ``n_columns``: a valid code of any width
    from ``n_classes - 1`` on, for the estimator checks (X of 1 to 30 columns, 2 to 4
    classes)."""
    return ordinal(n_classes)[:, np.arange(n_columns) % (n_classes - 1)]


# Arbitrary real X: margins, with a margin loss (see the class's Notes).
@parametrize_with_checks(
    [
        OutputDecoderClassifier(
            ConvexDecoder(loss="logistic"), code=ordinal_as_wide_as, output="margin"
        )
    ]
)
def test_sklearn_compatible(estimator, check):
    check(estimator)


LABELS = np.array(["ant", "bee", "cat", "dog"])


def noisy_outputs(code, n=120, seed=0):
    """Binary outputs that mostly agree with the class's codeword, and the class indices."""
    rng = np.random.default_rng(seed)
    y = np.arange(n) % code.shape[0]
    side = code[y]  # (n, M): +1 / -1 / 0
    Q = np.clip(0.5 + 0.3 * side + rng.normal(0, 0.2, size=side.shape), 0, 1)
    return Q, y


@pytest.mark.parametrize(
    "decoder, output, transform",
    [
        (ConvexDecoder(alpha=1e-3), "proba", None),
        (ConvexDecoder(loss="logistic", fit_intercept=True), "margin", logit),
        (LossBasedDecoder(), "proba", None),
    ],
)
def test_equals_the_decoder_on_class_indices(decoder, output, transform):
    code = one_vs_one(4)
    Q, y = noisy_outputs(code)
    if transform is not None:
        Q = transform(np.clip(Q, 0.01, 0.99))
    clf = OutputDecoderClassifier(decoder, code=code, output=output).fit(Q, LABELS[y])
    reference = decoder.fit(Q, y, code, output=output)
    assert list(clf.classes_) == list(LABELS)  # the code's rows follow the sorted labels
    np.testing.assert_array_equal(clf.code_matrix_, code)
    np.testing.assert_allclose(clf.predict_proba(Q), reference.predict_proba(Q), rtol=1e-12)
    np.testing.assert_allclose(clf.decision_function(Q), reference.decision_function(Q))
    np.testing.assert_array_equal(clf.predict(Q), LABELS[reference.predict(Q)])
    assert clf.n_features_in_ == code.shape[1]
    assert clf.score(Q, LABELS[y]) > 0.9


def test_predicts_what_a_code_matrix_classifier_predicts_from_its_outputs():
    X, y = load_iris(return_X_y=True)
    names = np.array(["setosa", "versicolor", "virginica"])[y]
    model = CodeMatrixClassifier(code="ovo", decoder=ConvexDecoder(alpha=1e-3), cv="in_sample")
    model.fit(X, names)
    Q = model.predict_binary_proba(X)  # the outputs the decoder was fitted on (cv="in_sample")
    clf = OutputDecoderClassifier(ConvexDecoder(alpha=1e-3), code="ovo").fit(Q, names)
    np.testing.assert_array_equal(clf.code_matrix_, model.code_matrix_)
    np.testing.assert_allclose(clf.predict_proba(Q), model.predict_proba(X), atol=1e-8)
    np.testing.assert_array_equal(clf.predict(Q), model.predict(X))


@pytest.mark.parametrize(
    "name, build",
    [("ovr", one_vs_rest), ("ordinal", ordinal), ("ternary_complete", ternary_complete)],
)
def test_a_code_name_follows_the_classes_of_y(name, build):
    clf = OutputDecoderClassifier(code=name)
    for K in (3, 4):
        Q, y = noisy_outputs(build(K))
        clf.fit(Q, LABELS[y])
        np.testing.assert_array_equal(clf.code_matrix_, build(K))
        assert clf.predict_proba(Q).shape == (len(Q), K)


@pytest.mark.parametrize("name", ["sparse_random", "dense_random", "ecoc"])
def test_random_code_names_are_refused(name):
    Q, y = noisy_outputs(one_vs_rest(3))
    with pytest.raises(ValueError, match="drawn at random.*pass that code matrix as an array"):
        OutputDecoderClassifier(code=name).fit(Q, y)


def test_the_code_must_be_as_wide_as_X_and_have_a_row_per_class():
    Q, y = noisy_outputs(one_vs_rest(4))
    with pytest.raises(ValueError, match="X has 4 columns .* 4 classes has 6 columns"):
        OutputDecoderClassifier(code="ovo").fit(Q, y)
    with pytest.raises(ValueError, match="code has 3 rows but there are 4 classes"):
        OutputDecoderClassifier(code=one_vs_rest(3)).fit(Q, y)
    with pytest.raises(ValueError, match="y contains 1 class"):
        OutputDecoderClassifier(code=one_vs_rest(4)).fit(Q, np.zeros(len(Q)))


def test_a_callable_code_gets_the_number_of_classes_and_of_columns():
    calls = []

    def code(n_classes, n_columns):
        calls.append((n_classes, n_columns))
        return one_vs_one(n_classes)

    Q, y = noisy_outputs(one_vs_one(4))
    clf = OutputDecoderClassifier(code=code).fit(Q, y)
    assert calls == [(4, 6)]
    np.testing.assert_array_equal(clf.code_matrix_, one_vs_one(4))
    with pytest.raises(ValueError, match="column 0 has no -1 class"):
        OutputDecoderClassifier(code=lambda K, M: np.ones((K, M))).fit(Q, y)


def test_sample_weight_reaches_the_decoder():
    code = one_vs_one(3)
    Q, y = noisy_outputs(code, n=60)
    weights = (np.arange(60) // 3) % 3  # 0, 1, 2: removed, kept, repeated
    clf = OutputDecoderClassifier(code=code)
    weighted = clf.fit(Q, y, sample_weight=weights).predict_proba(Q)
    repeated = clf.fit(Q.repeat(weights, axis=0), y.repeat(weights)).predict_proba(Q)
    np.testing.assert_allclose(weighted, repeated, rtol=1e-6)
    unweighted = clf.fit(Q, y).predict_proba(Q)
    assert not np.allclose(weighted, unweighted, rtol=1e-3)
    with pytest.raises(ValueError, match="sample_weight"):
        clf.fit(Q, y, sample_weight=np.ones(59))


def test_a_failed_fit_leaves_the_classifier_as_it_was():
    Q, y = noisy_outputs(one_vs_rest(3))
    clf = OutputDecoderClassifier(code="ovr")
    with pytest.raises(ValueError, match="X has 6 columns"):
        clf.fit(np.hstack([Q, Q]), y)
    assert not hasattr(clf, "n_features_in_")  # unfitted stays unfitted
    before = clf.fit(Q, y).predict_proba(Q)
    with pytest.raises(ValueError, match="X has 6 columns"):
        clf.fit(np.hstack([Q, Q]), y)
    assert clf.n_features_in_ == 3  # a fitted one keeps its fit
    np.testing.assert_array_equal(clf.predict_proba(Q), before)


def test_sample_weight_for_a_decoder_without_it_raises():
    Q, y = noisy_outputs(one_vs_rest(3))
    clf = OutputDecoderClassifier(HammingDecoder(), code="ovr")
    with pytest.raises(TypeError, match="HammingDecoder.fit does not take sample_weight"):
        clf.fit(Q, y, sample_weight=np.ones(len(y)))
    assert not hasattr(clf, "decoder_")  # nothing fitted
    assert clf.fit(Q, y).score(Q, y) > 0.9  # without weights it fits


def test_methods_follow_the_decoder():
    Q, y = noisy_outputs(one_vs_rest(3))
    hard = OutputDecoderClassifier(HammingDecoder(), code="ovr")
    assert not hasattr(hard, "predict_proba") and not hasattr(hard, "predict_log_proba")
    hard.fit(Q, y)
    assert not hasattr(hard, "predict_proba")
    np.testing.assert_array_equal(hard.predict(Q), hard.decision_function(Q).argmax(axis=1))

    soft = OutputDecoderClassifier(LossBasedDecoder(), code="ovr").fit(Q, y)
    assert hasattr(soft, "predict_proba") and not hasattr(soft, "predict_log_proba")

    convex = OutputDecoderClassifier(code="ovr").fit(Q, y)  # ConvexDecoder by default
    assert isinstance(convex.decoder_, ConvexDecoder)
    log_proba = convex.predict_log_proba(Q)
    np.testing.assert_allclose(log_proba, log_softmax(convex.decision_function(Q), axis=1))
    np.testing.assert_allclose(np.exp(log_proba), convex.predict_proba(Q), rtol=1e-12)


def test_two_classes_give_one_decision_column():
    Q, y = noisy_outputs(one_vs_rest(2))
    clf = OutputDecoderClassifier(code="ovr").fit(Q, LABELS[y])
    scores = clf.decision_function(Q)
    assert scores.shape == (len(Q),)
    np.testing.assert_array_equal(clf.classes_[(scores > 0).astype(int)], clf.predict(Q))


def test_probabilities_must_lie_in_the_unit_interval():
    Q, y = noisy_outputs(one_vs_rest(3))
    proba = OutputDecoderClassifier(code="ovr")
    assert get_tags(proba).input_tags.positive_only
    with pytest.raises(ValueError, match="Negative values in data"):
        proba.fit(Q - 0.5, y)
    with pytest.raises(ValueError, match="values above 1 .* pass output='margin'"):
        proba.fit(Q + 0.5, y)
    proba.fit(Q, y)
    with pytest.raises(ValueError, match="values above 1"):
        proba.predict(Q + 0.5)

    margin = OutputDecoderClassifier(ConvexDecoder(loss="logistic"), code="ovr", output="margin")
    assert not get_tags(margin).input_tags.positive_only
    assert margin.fit(4 * (Q - 0.5), y).score(4 * (Q - 0.5), y) > 0.9
    with pytest.raises(ValueError, match="not defined for output='margin'"):
        OutputDecoderClassifier(code="ovr", output="margin").fit(Q, y)  # cross-entropy


def test_the_decoder_is_cloned_and_unfitted_before_fit():
    decoder = ConvexDecoder(alpha=0.1)
    clf = OutputDecoderClassifier(decoder, code="ovr")
    with pytest.raises(NotFittedError):
        clf.predict(np.full((2, 3), 0.5))
    Q, y = noisy_outputs(one_vs_rest(3))
    clf.fit(Q, y)
    assert clf.decoder_ is not decoder and not hasattr(decoder, "weights_")
    assert clf.get_params()["decoder__alpha"] == 0.1


def test_saved_and_loaded_with_the_safe_format(tmp_path):
    Q, y = noisy_outputs(one_vs_rest(3))
    clf = OutputDecoderClassifier(code="ovr").fit(Q, LABELS[y])
    save(clf, tmp_path / "model.skops")
    back = load(tmp_path / "model.skops")  # trusted: exported from convexagg
    np.testing.assert_array_equal(back.predict_proba(Q), clf.predict_proba(Q))
    np.testing.assert_array_equal(back.predict(Q), clf.predict(Q))


def test_cross_val_score_and_grid_search_over_the_decoder():
    code = one_vs_one(4)
    Q, y = noisy_outputs(code, n=160, seed=1)
    labels = LABELS[y]
    scores = cross_val_score(OutputDecoderClassifier(code="ovo"), Q, labels, cv=4)
    assert scores.shape == (4,) and (scores > 0.8).all()

    grid = {"decoder__alpha": [1e-4, 1e-2, 1.0]}
    clf = OutputDecoderClassifier(ConvexDecoder(), code="ovo")  # named, so that it has params
    search = GridSearchCV(clf, grid, cv=3, scoring="neg_log_loss")
    search.fit(Q, labels)
    assert search.best_params_["decoder__alpha"] in grid["decoder__alpha"]
    assert search.best_estimator_.decoder_.alpha == search.best_params_["decoder__alpha"]
    assert len(search.cv_results_["mean_test_score"]) == 3
    assert np.isfinite(search.cv_results_["mean_test_score"]).all()
    # the decoders themselves compete too
    search = GridSearchCV(
        OutputDecoderClassifier(code="ovo"), {"decoder": [ConvexDecoder(), HammingDecoder()]}, cv=3
    ).fit(Q, labels)
    assert search.best_score_ > 0.8
