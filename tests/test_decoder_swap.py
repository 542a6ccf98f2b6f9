"""All decoders on the same binaries: common contract and CodeMatrixClassifier.fit_decoder."""

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import load_iris
from sklearn.exceptions import NotFittedError
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import StratifiedKFold
from sklearn.preprocessing import StandardScaler

from convexagg import (
    BradleyTerryDecoder,
    CodeMatrixClassifier,
    ConvexAggregationClassifier,
    ConvexDecoder,
    HammingDecoder,
    LossBasedDecoder,
    PairwiseCouplingDecoder,
    WMAPDecoder,
)
from convexagg.codes import complete, one_vs_one, one_vs_rest, sparse_random
from convexagg.estimator import default_learner
from convexagg.out_of_fold import out_of_fold_outputs

# WMAP learning is cut to 5 L-BFGS-B iterations here to keep the tests fast.
pytestmark = pytest.mark.filterwarnings(
    "ignore:WMAP weight learning stopped:sklearn.exceptions.ConvergenceWarning"
)

PROBABILISTIC = [
    ConvexDecoder(),
    LossBasedDecoder(),
    BradleyTerryDecoder(),
    BradleyTerryDecoder(weights="n_samples"),
    WMAPDecoder(weights="n_samples"),
    WMAPDecoder(max_outer_iter=5),
]
PAIRWISE = [
    PairwiseCouplingDecoder(),
    PairwiseCouplingDecoder(solver="libsvm"),
    PairwiseCouplingDecoder("hastie_tibshirani"),
]
CODES = {
    "ovr": one_vs_rest(4),
    "ovo": one_vs_one(4),
    "complete": complete(4),
    "sparse": sparse_random(8, n_candidates=10, random_state=0),
}


def noisy_outputs(code, n=40, seed=0):
    """Binary outputs that mostly agree with the true class, with exact 0s and 1s."""
    rng = np.random.default_rng(seed)
    y = rng.integers(code.shape[0], size=n)
    side = code[y]  # (n, M): +1 / -1 / 0
    Q = np.clip(0.5 + 0.35 * side + rng.normal(0, 0.25, size=side.shape), 0, 1)
    return Q, y


def cases():
    for name, code in CODES.items():
        for dec in PROBABILISTIC + (PAIRWISE if name == "ovo" else []):
            yield pytest.param(dec, code, id=f"{name}-{dec!r}")


@pytest.mark.parametrize("decoder, code", list(cases()))
def test_probabilities_are_finite_rows_summing_to_one(decoder, code):
    Q, y = noisy_outputs(code)
    dec = clone(decoder).fit(Q, y, code)
    P = dec.predict_proba(Q)
    assert P.shape == (len(Q), code.shape[0])
    assert np.isfinite(P).all() and (P >= 0).all()
    np.testing.assert_allclose(P.sum(axis=1), 1.0, atol=1e-12)
    np.testing.assert_array_equal(dec.predict(Q), P.argmax(axis=1))
    scores = dec.decision_function(Q)
    assert np.isfinite(scores).all()
    np.testing.assert_array_equal(scores.argmax(axis=1), P.argmax(axis=1))
    assert (dec.predict(Q) == y).mean() > 0.8


@pytest.mark.parametrize("code", list(CODES.values()), ids=list(CODES))
def test_hamming_predict_is_argmax_of_its_scores(code):
    Q, y = noisy_outputs(code)
    dec = HammingDecoder().fit(Q, y, code)
    np.testing.assert_array_equal(dec.predict(Q), dec.decision_function(Q).argmax(axis=1))
    assert (dec.predict(Q) == y).mean() > 0.7


def test_decoders_are_sklearn_estimators():
    for dec in PROBABILISTIC + PAIRWISE + [HammingDecoder()]:
        params = dec.get_params()
        assert clone(dec).get_params() == params
    with pytest.raises(ValueError, match="weights"):
        BradleyTerryDecoder(weights="bogus").fit(*noisy_outputs(one_vs_one(3)), one_vs_one(3))
    with pytest.raises(ValueError, match="method"):
        PairwiseCouplingDecoder("bogus").fit(*noisy_outputs(one_vs_one(3)), one_vs_one(3))
    with pytest.raises(NotFittedError):
        BradleyTerryDecoder().predict_proba(np.full((1, 3), 0.5))


@pytest.fixture(scope="module")
def iris():
    X, y = load_iris(return_X_y=True)
    return StandardScaler().fit_transform(X), np.array(["setosa", "versicolor", "virginica"])[y]


ALL_DECODERS = PROBABILISTIC + PAIRWISE + [HammingDecoder()]


def test_fit_decoder_swaps_without_retraining(iris):
    X, y = iris
    clf = CodeMatrixClassifier(LogisticRegression(), code="ovo", cv="in_sample").fit(X, y)
    binaries = list(clf.estimators_[0])
    Q = clf.predict_binary_proba(X)
    y_enc = np.searchsorted(clf.classes_, y)
    for decoder in ALL_DECODERS:
        assert clf.set_params(decoder=decoder).fit_decoder(X, y) is clf
        assert all(a is b for a, b in zip(clf.estimators_[0], binaries))
        assert len(clf.estimators_) == 1 and len(clf.estimators_[0]) == len(binaries)
        assert clf.decoder_ is not decoder  # cloned
        standalone = clone(decoder).fit(Q, y_enc, clf.code_matrix_)
        expected = clf.classes_[standalone.predict(Q)]
        np.testing.assert_array_equal(clf.predict(X), expected)
        if isinstance(decoder, HammingDecoder):
            assert not hasattr(clf, "predict_proba")
        else:
            np.testing.assert_allclose(clf.predict_proba(X), standalone.predict_proba(Q))
        assert clf.score(X, y) > 0.9


def test_fit_decoder_equals_fitting_with_that_decoder(iris):
    X, y = iris
    for decoder in (BradleyTerryDecoder(), WMAPDecoder(max_outer_iter=5), LossBasedDecoder()):
        swapped = CodeMatrixClassifier(code="ovr", random_state=0).fit(X, y)
        swapped.set_params(decoder=decoder).fit_decoder(X, y)
        direct = CodeMatrixClassifier(code="ovr", decoder=decoder, random_state=0).fit(X, y)
        np.testing.assert_allclose(swapped.predict_proba(X), direct.predict_proba(X))
    # the convex classifier: change alpha, refit only the weights
    conv = ConvexAggregationClassifier(code="ovr", random_state=0).fit(X, y)
    binaries = list(conv.estimators_)
    conv.set_params(alpha=1e-1).fit_decoder(X, y)
    assert all(a is b for a, b in zip(conv.estimators_, binaries))
    np.testing.assert_allclose(
        conv.weights_,
        ConvexAggregationClassifier(code="ovr", alpha=1e-1, random_state=0).fit(X, y).weights_,
    )


def test_fit_decoder_with_cv_uses_out_of_fold_outputs(iris):
    X, y = iris
    cv = StratifiedKFold(3, shuffle=True, random_state=0)
    clf = CodeMatrixClassifier(code="ovr", cv=cv).fit(X, y)
    binaries = list(clf.estimators_)
    clf.set_params(decoder=WMAPDecoder(max_outer_iter=5)).fit_decoder(X, y)
    assert all(a is b for a, b in zip(clf.estimators_, binaries))
    y_enc = np.searchsorted(clf.classes_, y)
    Q = out_of_fold_outputs(default_learner(), X, y_enc, clf.code_matrix_, cv, "proba")
    ref = WMAPDecoder(max_outer_iter=5).fit(Q, y_enc, clf.code_matrix_)
    np.testing.assert_allclose(clf.decoder_.weights_, ref.weights_)


def test_fit_decoder_errors(iris):
    X, y = iris
    with pytest.raises(NotFittedError):
        CodeMatrixClassifier().fit_decoder(X, y)
    clf = CodeMatrixClassifier(code="ovo").fit(X, y)
    with pytest.raises(ValueError, match=r"not among the classes \[.*\]: \[.rose.\]"):
        clf.fit_decoder(X, np.where(y == "setosa", "rose", y))
    with pytest.raises(ValueError, match="samples"):
        clf.fit_decoder(X, y[:10])
    with pytest.raises(ValueError, match="one-vs-one"):
        CodeMatrixClassifier(code="ovr").fit(X, y).set_params(
            decoder=PairwiseCouplingDecoder()
        ).fit_decoder(X, y)
