"""Regularisation paths (paper section 5.1, Fig. 3) on the decoder's model and solver."""

import numpy as np
import pytest

from convexagg import ConvexDecoder, regularization_path
from convexagg.datasets import make_broken_classifier_outputs
from convexagg.solvers import InteriorPoint, ProjectedNewton


@pytest.fixture(scope="module")
def data():
    Q, y, code = make_broken_classifier_outputs(n_per_class=40, random_state=0)
    Q_val, y_val, _ = make_broken_classifier_outputs(n_per_class=40, random_state=1)
    return Q, y, code, Q_val, y_val


@pytest.mark.parametrize("solver", [ProjectedNewton(tol=1e-10), InteriorPoint(tol=1e-9)], ids=str)
@pytest.mark.parametrize(
    "model",
    [
        {"penalty": "l2"},
        {"penalty": "l1"},
        {"penalty": "elasticnet", "l1_ratio": 0.3},
        {"fit_intercept": True},
    ],
    ids=str,
)
def test_path_endpoints_match_separate_fits(data, model, solver):
    Q, y, code, _, _ = data
    alphas = [1e-5, 1.0, 1e-3, 1e-1]  # any order in, decreasing out
    decoder = ConvexDecoder(**model, solver=solver)
    path = regularization_path(Q, y, code, alphas, decoder=decoder)
    np.testing.assert_array_equal(path.alphas, [1.0, 1e-1, 1e-3, 1e-5])
    assert path.converged.all()
    for j in (0, -1):
        dec = ConvexDecoder(alpha=path.alphas[j], **model, solver=solver).fit(Q, y, code)
        assert path.objective[j] == pytest.approx(dec.objective_, rel=1e-9)
        np.testing.assert_allclose(path.weights[j], dec.weights_, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(path.intercepts[j], dec.intercept_, rtol=1e-5, atol=1e-6)
        assert path.train_accuracy[j] == np.mean(dec.predict(Q) == y)


def test_path_scores_and_shapes(data):
    Q, y, code, Q_val, y_val = data
    path = regularization_path(Q, y, code, np.logspace(-4, 0, 5), Q_val=Q_val, y_val=y_val)
    assert path.weights.shape == (5, 3) and (path.weights >= 0).all()
    assert path.intercepts.shape == (5, 3) and not path.intercepts.any()
    for field in ("train_accuracy", "val_accuracy", "n_iter", "train_log_loss", "val_log_loss"):
        assert getattr(path, field).shape == (5,)
    dec = ConvexDecoder(alpha=1e-4).fit(Q, y, code)
    P = dec.predict_proba(Q_val)
    assert path.val_log_loss[-1] == pytest.approx(
        -np.mean(np.log(P[np.arange(len(y_val)), y_val])), rel=1e-3
    )
    assert path.val_accuracy[-1] == pytest.approx(np.mean(dec.predict(Q_val) == y_val), abs=0.01)
    # weaker regularisation: larger weights, better training likelihood
    assert np.all(np.diff(np.linalg.norm(path.weights, axis=1)) > 0)
    assert np.all(np.diff(path.train_log_loss) < 0)
    no_val = regularization_path(Q, y, code, [1e-2])
    assert no_val.val_accuracy is None and no_val.val_log_loss is None


def test_path_errors(data):
    Q, y, code, Q_val, y_val = data
    with pytest.raises(ValueError, match="together"):
        regularization_path(Q, y, code, [1e-2], Q_val=Q_val)
    with pytest.raises(ValueError, match="alphas"):
        regularization_path(Q, y, code, [-1.0])
    with pytest.raises(ValueError, match=r"validation data \(Q_val, y_val\): y must hold"):
        regularization_path(Q, y, code, [1e-2], Q_val=Q_val, y_val=y_val + 5)
    with pytest.raises(ValueError, match="formulation='stiffness'"):
        regularization_path(Q, y, code, [1e-2], decoder=ConvexDecoder(formulation="stiffness"))
    with pytest.raises(TypeError, match="decoder must be a ConvexDecoder"):
        regularization_path(Q, y, code, [1e-2], decoder=object())


def test_sample_weights_weight_the_path(data):
    Q, y, code, _, _ = data
    counts = np.random.default_rng(0).integers(1, 4, size=len(y))
    rows = np.repeat(np.arange(len(y)), counts)
    decoder = ConvexDecoder(solver=ProjectedNewton(tol=1e-10))
    weighted = regularization_path(Q, y, code, [1e-2, 1e-4], decoder=decoder, sample_weight=counts)
    repeated = regularization_path(Q[rows], y[rows], code, [1e-2, 1e-4], decoder=decoder)
    np.testing.assert_allclose(weighted.weights, repeated.weights, rtol=1e-6)
    np.testing.assert_allclose(weighted.train_log_loss, repeated.train_log_loss, rtol=1e-9)
    np.testing.assert_allclose(weighted.train_accuracy, repeated.train_accuracy)


def test_interior_point_warm_starts_save_iterations(data):
    Q, y, code, _, _ = data
    alphas = np.logspace(-6, 0, 13)
    decoder = ConvexDecoder(solver="interior_point")
    warm = regularization_path(Q, y, code, alphas, decoder=decoder)
    cold = regularization_path(Q, y, code, alphas, decoder=decoder, warm_start=False)
    assert warm.converged.all() and cold.converged.all()
    assert warm.n_iter.sum() < 0.6 * cold.n_iter.sum()
    np.testing.assert_allclose(warm.objective, cold.objective, rtol=1e-4)


def test_the_model_is_the_decoders_alone(data):
    """The model's settings are the decoder's: the path takes no loose keywords."""
    Q, y, code, _, _ = data
    for keyword in ("penalty", "l1_ratio", "tol", "tolerance"):
        with pytest.raises(TypeError, match="unexpected keyword"):
            regularization_path(Q, y, code, [1e-2], **{keyword: 1})


def test_verbose_reports_every_alpha(data, capsys):
    Q, y, code, _, _ = data
    regularization_path(Q, y, code, [1e-1, 1e-3], verbose=1)
    lines = [line for line in capsys.readouterr().out.splitlines() if "regularization_path" in line]
    assert [line.split("alpha ")[1].split(":")[0] for line in lines] == ["0.1", "0.001"]
