"""Decoding the binaries' log-odds (``ConvexDecoder.predict_proba_from_log_odds``) and
the estimator's path through it for logistic binaries (``linear_outputs.predict_log_odds``).

References, in the test: the losses ``log(1 + exp(-+z))`` by ``numpy.logaddexp``
(accurate in float64), capped at ``-log(eps)`` as those of probabilities are,
two dense products and SciPy's softmax; and the general path, the decoder on
``expit(Z)``, where the sigmoid does not round (``|z| <= 15``) and where both
clip (``|z| >= 40``).
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.special import expit, log_softmax, softmax
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.tree import DecisionTreeClassifier

from convexagg import ConvexAggregationClassifier, ConvexDecoder
from convexagg.binary import fit_binaries, predict_binaries
from convexagg.codes import make_code
from convexagg.linear_outputs import LinearLogOdds, predict_log_odds
from convexagg.solvers import ProjectedNewton

CAP = -np.log(np.finfo(np.float64).eps)  # the largest loss of a probability output


def _reference_rho(Z, code, w, b=None, zero=None):
    """rho of weights ``w``: one per column, or one per code entry (shape of ``code``);
    ``zero``: the zero entries' weights of each side, shape ``(2,) + code.shape``."""
    L_pos = np.minimum(np.logaddexp(0.0, -Z), CAP)
    L_neg = np.minimum(np.logaddexp(0.0, Z), CAP)
    if w.ndim == 2:  # entry weights
        rho = L_pos @ (w * (code == 1)).T + L_neg @ (w * (code == -1)).T
    else:
        rho = (L_pos * w) @ (code == 1).T + (L_neg * w) @ (code == -1).T
    if zero is not None:
        rho = rho + L_pos @ zero[0].T + L_neg @ zero[1].T
    return rho if b is None else rho + b


def _fitted(code_name, K, dtype, fit_intercept=False, loss="cross_entropy", seed=0):
    rng = np.random.default_rng(seed)
    code = make_code(code_name, K, random_state=0)
    y = rng.integers(K, size=400)
    Z = np.where(code[y] == 1, 2.0, -2.0) + rng.normal(0, 2.0, (400, code.shape[1]))
    dec = ConvexDecoder(
        alpha=1e-3, fit_intercept=fit_intercept, loss=loss, solver=ProjectedNewton(dtype=dtype)
    ).fit(expit(Z), y, code)
    return dec, code


def _log_odds(n, M, scale, seed=1):
    rng = np.random.default_rng(seed)
    return rng.normal(0, scale, (n, M))


@pytest.mark.parametrize("code_name, K", [("ovo", 10), ("ovr", 5), ("sparse_random", 6)])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("fit_intercept", [False, True])
def test_log_odds_decode_is_the_exact_decode(code_name, K, dtype, fit_intercept):
    """Against the reference decode of the log-odds, moderate and extreme (+-50,
    +-800, +-inf: the cap applies) alike, C- and Fortran-ordered."""
    dec, code = _fitted(code_name, K, dtype, fit_intercept)
    M = code.shape[1]
    Z = _log_odds(700, M, 6.0)
    Z[:6] = np.array([50.0, -50.0, 800.0, -800.0, np.inf, -np.inf])[:, None]
    Z[6, ::2], Z[6, 1::2] = 37.0, -37.0  # just beyond the cap (36.04)
    b = dec.intercept_ if fit_intercept else None
    rho = _reference_rho(Z, code, dec.weights_, b)
    P_ref = softmax(-rho, axis=1)
    rtol = 1e-12 if dtype == "float64" else 2e-6  # float32: each loss rounded once, summed
    atol = rtol * np.abs(rho).max()
    for layout in (Z, np.asfortranarray(Z)):
        P = dec.predict_proba_from_log_odds(layout)
        assert P.dtype == np.float64 and P.shape == (700, K)
        np.testing.assert_allclose(P.sum(axis=1), 1.0, rtol=1e-14)
        # probabilities from rho: |dP| <= P * |d rho| per class pair
        np.testing.assert_allclose(P, P_ref, rtol=4 * atol + 1e-14, atol=1e-300)
        logP = dec.predict_log_proba_from_log_odds(layout)
        np.testing.assert_allclose(logP, log_softmax(-rho, axis=1), rtol=0, atol=4 * atol + 1e-13)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_log_odds_decode_is_the_decode_of_the_probabilities(dtype):
    """The general path (the decoder on expit(Z)) where the sigmoid does not round
    (|z| <= 15) and where both clip (|z| >= 40: q is 0 or 1 in float64)."""
    dec, code = _fitted("ovo", 8, dtype)
    M = code.shape[1]
    Z = np.clip(_log_odds(500, M, 5.0), -15, 15)
    Z[:50] = (
        np.where(_log_odds(50, M, 1.0, seed=3) > 0, 1.0, -1.0)
        * np.array([40.0, 800.0])[np.arange(50) % 2][:, None]
    )
    # the sigmoid's rounding: 1 - q off by eps / (1 - q) relative, so each loss by up to
    # eps * (1 + exp(15)) = 7.3e-10, rho by the sum of the weights times that, and
    # each probability by twice that, relative
    bound = 2 * np.finfo(np.float64).eps * (1 + np.exp(15.0)) * dec.weights_.sum()
    for method, tol in [("predict_proba", "p"), ("predict_log_proba", "log")]:
        got = getattr(dec, method + "_from_log_odds")(Z)
        want = getattr(dec, method)(expit(Z))
        if dtype == "float64":
            if tol == "p":
                np.testing.assert_allclose(got, want, rtol=bound, atol=1e-300)
            else:
                np.testing.assert_allclose(got, want, rtol=0, atol=bound)
        else:  # the losses of q rounded to float32 against those of z rounded to float32
            rho = dec.decision_function(expit(Z))
            atol = 4e-6 * np.abs(rho).max()
            np.testing.assert_allclose(got, want, rtol=atol if tol == "p" else 0, atol=atol)


def test_other_losses_decode_the_sigmoid():
    dec, code = _fitted("ovo", 5, "float64", loss="exponential")
    Z = _log_odds(100, code.shape[1], 3.0)
    np.testing.assert_array_equal(dec.predict_proba_from_log_odds(Z), dec.predict_proba(expit(Z)))


def test_log_odds_refused_where_they_cannot_apply():
    dec, code = _fitted("ovo", 4, "float64")
    Z = _log_odds(10, code.shape[1], 1.0)
    Z[3, 2] = np.nan
    with pytest.raises(ValueError, match="Z contains NaN"):
        dec.predict_proba_from_log_odds(Z)
    with pytest.raises(ValueError, match="Z has 5 columns but the decoder was fitted with 6"):
        dec.predict_proba_from_log_odds(np.zeros((3, 5)))
    with pytest.raises(ValueError, match="Z must be 2-D"):
        dec.predict_proba_from_log_odds(Z[0])
    margins = ConvexDecoder(loss="hinge").fit(
        _log_odds(60, 6, 1.0), np.arange(60) % 4, code, output="margin"
    )
    with pytest.raises(ValueError, match="fitted on margins"):
        margins.predict_proba_from_log_odds(np.zeros((2, 6)))


@pytest.fixture(scope="module")
def wide_iris():
    from sklearn.datasets import load_iris

    X, y = load_iris(return_X_y=True)
    return X * 100 + 1e3, y  # large means: the stack folds the scalers in


@pytest.mark.parametrize("scaled", [True, False])
def test_predict_log_odds_are_the_decision_functions(wide_iris, scaled):
    X, y = wide_iris
    base = make_pipeline(StandardScaler(), LogisticRegression()) if scaled else LogisticRegression()
    estimators = fit_binaries(base, X, y, make_code("ovo", 3))
    want = np.column_stack([est.decision_function(X) for est in estimators])
    Z = predict_log_odds(estimators, X)
    assert isinstance(Z, LinearLogOdds) and Z.shape == want.shape
    np.testing.assert_allclose(np.asarray(Z), want, rtol=1e-10, atol=1e-10 * np.abs(want).max())
    np.testing.assert_array_equal(Z[40:90], np.asarray(Z)[40:90])  # blocks as read
    assert Z[40:90].flags.f_contiguous
    np.testing.assert_allclose(
        expit(np.asarray(Z)), predict_binaries(estimators, X, "proba"), rtol=1e-12
    )
    if not scaled:  # sparse X: a Fortran-ordered array
        Zs = predict_log_odds(estimators, sp.csr_matrix(X))
        np.testing.assert_allclose(Zs, want, rtol=1e-10, atol=1e-10 * np.abs(want).max())


def test_predict_log_odds_only_for_logistic_binaries(wide_iris):
    X, y = wide_iris
    code = make_code("ovo", 3)
    assert predict_log_odds(fit_binaries(DecisionTreeClassifier(), X, y, code), X) is None
    estimators = fit_binaries(LogisticRegression(), X, y, code)
    estimators[1].coef_ = np.full_like(estimators[1].coef_, 1e300)  # could overflow
    assert predict_log_odds(estimators, X) is None
    with pytest.raises(ValueError, match="X has 3 features"):
        predict_log_odds(fit_binaries(LogisticRegression(), X, y, code), X[:, :3])


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_estimator_decodes_log_odds_as_the_general_path(dtype):
    """predict_proba / predict_log_proba / predict of the estimator (log-odds path)
    against the decoder on the binaries' own probabilities (the general path), on
    data whose margins stay moderate, and against the exact decode."""
    from sklearn.datasets import load_wine

    X, y = load_wine(return_X_y=True)
    clf = ConvexAggregationClassifier(
        make_pipeline(StandardScaler(), LogisticRegression(C=0.05)),
        cv="in_sample",
        solver=ProjectedNewton(dtype=dtype),
    ).fit(X, y)
    Z = np.column_stack([est.decision_function(X) for est in clf.estimators_[0]])
    assert np.abs(Z).max() < 15
    Q = expit(Z)
    P = clf.predict_proba(X)
    general = clf.decoder_.predict_proba(Q)
    dec = clf.decoder_  # the default's model: entry weights, class intercepts, zero entries
    assert np.any(dec.zero_entry_weights_ != 0)
    rho = _reference_rho(Z, dec.code_, dec.entry_weights_, dec.intercept_, dec.zero_entry_weights_)
    if dtype == "float64":
        np.testing.assert_allclose(P, general, rtol=1e-10, atol=1e-300)
        np.testing.assert_allclose(P, softmax(-rho, axis=1), rtol=1e-10, atol=1e-300)
    else:
        atol = 4e-6 * np.abs(rho).max()
        np.testing.assert_allclose(P, general, rtol=atol, atol=atol)
    np.testing.assert_allclose(
        clf.predict_log_proba(X), clf.decoder_.predict_log_proba(Q), rtol=0, atol=1e-5
    )
    np.testing.assert_array_equal(clf.predict(X), clf.classes_[np.argmax(P, axis=1)])


def test_binaries_refitted_are_read_as_they_are(wide_iris):
    """Given no stack, ``predict_binaries`` and ``predict_log_odds`` stack the binaries
    as they are at each call: after a binary is fitted again or a pipeline step
    replaced, their outputs are those of the binaries one by one (nothing kept
    between calls)."""
    X, y = wide_iris
    binaries = fit_binaries(
        make_pipeline(StandardScaler(), LogisticRegression()), X, y, make_code("ovo", 3)
    )

    def check():
        Q = np.column_stack([est.predict_proba(X)[:, 1] for est in binaries])
        Z = np.column_stack([est.decision_function(X) for est in binaries])
        np.testing.assert_allclose(predict_binaries(binaries, X, "proba"), Q, rtol=1e-9)
        np.testing.assert_allclose(np.asarray(predict_log_odds(binaries, X)), Z, rtol=1e-9)
        return Q

    before = check()
    rows = np.isin(y, [0, 1])
    binaries[0].set_params(logisticregression__C=1e-3).fit(X[rows], (y[rows] == 1).astype(int))
    assert np.abs(check() - before).max() > 1e-3
    binaries[1].steps[0] = ("standardscaler", StandardScaler(with_mean=False).fit(X))
    rows = np.isin(y, [0, 2])
    binaries[1].steps[1][1].fit(binaries[1].steps[0][1].transform(X[rows]), y[rows] == 2)
    check()


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_linear_log_odds_decode_is_the_decode_of_its_blocks(dtype):
    """A LinearLogOdds decoded block by block (written into the decoder's buffer,
    the last block narrower) is the decode of the same blocks as an array, bit for
    bit (one-vs-one on 16 classes: the sparse product, column by column)."""
    dec, code = _fitted("ovo", 16, dtype)
    M = code.shape[1]
    rng = np.random.default_rng(5)
    X1 = np.hstack([rng.normal(0, 2.0, (700, 4)), np.ones((700, 1))])
    A = rng.normal(0, 3.0, (M, 5))
    A[:3] *= 20.0  # some log-odds beyond the cap
    Z = LinearLogOdds(X1, A)
    from convexagg.aggregation.discrepancy import _CHUNK_BYTES

    step = _CHUNK_BYTES // (M * 8)  # the decode's blocks of float64 log-odds
    assert step < 700 and 700 % step
    blocks = np.vstack([Z[start : start + step] for start in range(0, 700, step)])
    for method in ("predict_proba_from_log_odds", "predict_log_proba_from_log_odds"):
        np.testing.assert_array_equal(getattr(dec, method)(Z), getattr(dec, method)(blocks))


@pytest.mark.parametrize("n_features", [4, 1])
def test_fitted_attributes_replaced_are_read_as_they_are(wide_iris, n_features):
    """Each fitted attribute a stack reads, replaced by another value (an array of one
    element too), or a scaler's parameter changed, is seen by the next call of
    ``predict_binaries`` given no stack: its outputs are those of the binaries as they are."""
    X, y = wide_iris
    X = X[:, :n_features]
    binaries = fit_binaries(
        make_pipeline(StandardScaler(), LogisticRegression()), X, y, make_code("ovo", 3)
    )
    scaler, model = binaries[1].steps[0][1], binaries[1].steps[1][1]
    changes = [
        lambda: setattr(model, "coef_", model.coef_ * 1.5),
        lambda: setattr(model, "intercept_", model.intercept_ + 0.5),
        lambda: setattr(scaler, "scale_", scaler.scale_ * 2.0),
        lambda: setattr(scaler, "mean_", scaler.mean_ + 0.5 * scaler.scale_),
        lambda: scaler.set_params(with_mean=False),
        lambda: binaries[2].steps.__setitem__(1, ("logisticregression", model)),
    ]
    before = predict_binaries(binaries, X, "proba")
    for change in changes:
        change()
        after = predict_binaries(binaries, X, "proba")
        assert np.abs(after - before).max() > 1e-6
        Q = np.column_stack([est.predict_proba(X)[:, 1] for est in binaries])
        np.testing.assert_allclose(after, Q, rtol=1e-9, atol=1e-300)
        before = after


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_log_odds_losses_within_one_ulp_of_the_cap(dtype):
    """Each loss of a log-odds (``-log q = log1p(exp(-z))`` and ``-log q + z``) against
    ``numpy.logaddexp`` in float64 on the clipped ``z``: within one unit in the last
    place of the cap ``C`` (absolute), never above it, on ``z`` across and beyond the
    clip (``+-inf`` included)."""
    from convexagg.aggregation.discrepancy import _Bounds, _losses_from_log_odds

    z = np.concatenate([np.linspace(-45.0, 45.0, 9001), [-np.inf, np.inf, 1e-300, -1e-300]])
    out = np.empty((2, 1, z.size), dtype)
    _losses_from_log_odds(z[None, :], out, _Bounds((1, z.size), dtype, log_odds=True))
    cap = dtype(-np.log(dtype(np.finfo(np.float64).eps)))
    zc = np.clip(z, -float(cap), float(cap))
    want = np.stack([np.logaddexp(0.0, -zc), np.logaddexp(0.0, zc)])
    assert np.all(out <= cap)
    np.testing.assert_allclose(out[:, 0], want, rtol=0, atol=np.spacing(cap))


def test_linear_log_odds_negated_blocks_are_the_blocks():
    """The blocks the decoder has written into its buffer (a row stride of its own)
    are ``-Z[start:stop].T`` bit for bit: the decode is that of the blocks."""
    from sklearn.datasets import make_classification

    X, y = make_classification(
        500, 12, n_informative=8, n_classes=6, n_clusters_per_class=1, random_state=0
    )
    estimators = fit_binaries(
        make_pipeline(StandardScaler(), LogisticRegression()), X, y, make_code("ovo", 6)
    )
    Z = predict_log_odds(estimators, X)
    buffer = np.empty((Z.shape[1], X.shape[0] + 3))
    for start, stop in [(0, 100), (100, 137), (137, 138), (0, X.shape[0])]:
        out = buffer[:, : stop - start]
        assert Z.negated_block_into(start, stop, out) is out
        np.testing.assert_array_equal(out, -Z[start:stop].T)
        whole = np.asarray(Z)[start:stop]
        np.testing.assert_allclose(Z[start:stop], whole, rtol=0, atol=1e-14 * np.abs(whole).max())
