"""The default model in one place: :func:`convexagg.defaults.resolve_model` is pure, its
rules give the closed forms they state, and the fitted estimator's ``resolved_`` holds
each option's value and why (the zero entries left out above the limits, on array-API
``X``, with a list of shrinkages)."""

import copy

import numpy as np
import pytest
import sklearn
from sklearn.datasets import load_iris, load_wine
from sklearn.preprocessing import scale

from convexagg import (
    CodeMatrixClassifier,
    ConvexAggregationClassifier,
    ConvexAggregationClassifierCV,
    WMAPDecoder,
)
from convexagg.codes import make_code_parts
from convexagg.defaults import (
    ZERO_ENTRY_AUTO_MAX_ROWS,
    ZERO_ENTRY_AUTO_MAX_WEIGHTS,
    ZERO_ENTRY_PRIORS,
    DataShape,
    resolve_model,
)


def _params(**changed):
    """ConvexAggregationClassifier's default parameters, as ``get_params`` gives them, with
    ``changed``: no estimator is made."""
    params = {
        "estimator": None,
        "code": "ovo+ovr",
        "alpha": 1e-3,
        "loss": "cross_entropy",
        "penalty": "l2",
        "l1_ratio": None,
        "fit_intercept": True,
        "entry_weight_shrinkage": "auto",
        "column_penalty": "auto",
        "zero_entry_penalty": "auto",
        "solver": "auto",
        "cv": 5,
        "binary_param_grid": None,
        "ensemble": "auto",
        "n_jobs": None,
        "random_state": 0,
        "verbose": 0,
        "warm_start": False,
    }
    return {**params, **changed}


def _shape(n_classes, n_rows, code="ovo+ovr", weighted=None, **kwargs):
    built, parts = make_code_parts(code, n_classes)
    weighted = n_rows if weighted is None else weighted
    return DataShape(built, parts, n_rows, weighted, **kwargs)


def _same(a, b):
    """Options equal, arrays by value."""
    assert a.keys() == b.keys()
    for name in a:
        va, vb = a[name]["value"], b[name]["value"]
        assert a[name]["reason"] == b[name]["reason"], name
        if isinstance(va, np.ndarray):
            np.testing.assert_array_equal(va, vb)
        else:
            assert va == vb, name


@pytest.mark.parametrize(
    "params, shape",
    [
        (_params(), _shape(3, 150)),
        (_params(entry_weight_shrinkage=[0.01, 0.001]), _shape(4, 90, weighted=123.5)),
        (_params(column_penalty={"ovr": 0.3}, zero_entry_penalty=[1.0, 0.1]), _shape(5, 40)),
        (_params(code="ovo"), _shape(16, 500, code="ovo", array_api=True)),
        (
            {"estimator": None, "decoder": None, "cv": "in_sample", "ensemble": "auto"},
            _shape(3, 30, code="ovo", sparse=True),
        ),
    ],
    ids=["default", "shrinkage-list", "parts-and-zero-list", "array-api", "code-matrix"],
)
def test_the_resolution_is_pure(params, shape):
    """Same inputs, same model; the inputs are not changed; no estimator is needed."""
    kept_params, kept_shape = copy.deepcopy(params), copy.deepcopy(shape)
    first, second = resolve_model(params, shape), resolve_model(params, shape)
    _same(first.options, second.options)
    assert first.choice == second.choice and first.given == second.given
    assert first.decoder_params.keys() == second.decoder_params.keys()
    for name, value in first.decoder_params.items():
        np.testing.assert_array_equal(value, second.decoder_params[name])
    # nothing it was given was written to
    assert params.keys() == kept_params.keys()
    for name in params:
        assert repr(params[name]) == repr(kept_params[name])
    np.testing.assert_array_equal(shape.code, kept_shape.code)
    assert (shape.n_rows, shape.weighted_rows) == (kept_shape.n_rows, kept_shape.weighted_rows)


@pytest.mark.parametrize("n_rows, expected", [(50, 0.01), (500, 2 / 500), (5000, 0.001)])
def test_the_shrinkage_is_the_prior_over_the_rows_within_its_range(n_rows, expected):
    model = resolve_model(_params(), _shape(3, 10 * n_rows, weighted=float(n_rows)))
    # the summed sample weights count, not the rows
    assert model.decoder_params["entry_weight_shrinkage"] == pytest.approx(expected, rel=1e-15)
    assert model.options["entry_weight_shrinkage"]["reason"].startswith(f"2 / {n_rows:,}")
    l1 = resolve_model(_params(penalty="l1"), _shape(3, n_rows))
    assert l1.decoder_params["entry_weight_shrinkage"] is None
    assert "penalty='l1'" in l1.options["entry_weight_shrinkage"]["reason"]


def test_the_column_penalty_is_on_the_own_one_vs_rest_columns():
    model = resolve_model(_params(), _shape(4, 100))
    strengths = model.decoder_params["column_penalty"]
    # ovo+ovr of 4 classes: 6 one-vs-one columns, then the 4 one-vs-rest ones
    np.testing.assert_array_equal(strengths, [0.0] * 6 + [0.1] * 4)
    # two classes: every part is the same column, nothing of its own
    two = resolve_model(_params(), _shape(2, 100))
    assert two.decoder_params["column_penalty"] is None
    assert "no one-vs-rest columns of its own" in two.options["column_penalty"]["reason"]
    by_part = resolve_model(_params(column_penalty={"ovo": 0.5}), _shape(4, 100))
    np.testing.assert_array_equal(by_part.decoder_params["column_penalty"], [0.5] * 6 + [0] * 4)
    with pytest.raises(ValueError, match="not parts of code"):
        resolve_model(_params(column_penalty={"ecoc": 0.5}), _shape(4, 100))


def test_the_zero_entries_within_and_beyond_their_limits():
    # one-vs-one of K classes: K (K-1) / 2 columns, each with K - 2 zero entries, two
    # weights each: K (K-1) (K-2) zero-entry weights, 2,730 for 15 classes, 3,360 for 16
    within = resolve_model(_params(), _shape(15, 400, weighted=200.0))
    assert within.choice.name == "zero_entry_penalty" and within.choice.stop_when_worse
    assert within.choice.values == tuple(c / 200.0 for c in ZERO_ENTRY_PRIORS)
    assert within.decoder_params["zero_entry_penalty"] is None  # until the choice
    assert 15 * 14 * 13 <= ZERO_ENTRY_AUTO_MAX_WEIGHTS < 16 * 15 * 14
    beyond = resolve_model(_params(), _shape(16, 400))
    assert beyond.choice is None and beyond.decoder_params["zero_entry_penalty"] is None
    assert beyond.options["zero_entry_penalty"] == {
        "value": None,
        "reason": f"3,360 zero-entry weights above the limit of {ZERO_ENTRY_AUTO_MAX_WEIGHTS:,}",
    }
    rows = ZERO_ENTRY_AUTO_MAX_ROWS + 1
    many = resolve_model(_params(), _shape(3, rows))
    assert many.options["zero_entry_penalty"]["reason"] == (
        f"{rows:,} rows above the limit of {ZERO_ENTRY_AUTO_MAX_ROWS:,}"
    )
    both = resolve_model(_params(code="ovo"), _shape(17, rows, code="ovo", array_api=True))
    assert both.options["zero_entry_penalty"]["reason"].split("; ") == [
        "array-API X (fitted on its device without them)",
        "4,080 zero-entry weights above the limit of 3,000",
        f"{rows:,} rows above the limit of 3,000",
    ]
    # a value given is kept, whatever the limits
    given = resolve_model(_params(zero_entry_penalty=0.5), _shape(16, 400))
    assert given.decoder_params["zero_entry_penalty"] == 0.5 and given.choice is None
    assert given.options["zero_entry_penalty"] == {"value": 0.5, "reason": "given"}


def test_lists_are_chosen_and_not_both():
    model = resolve_model(_params(entry_weight_shrinkage=[0.01, 0.001]), _shape(3, 100))
    assert model.choice == ("entry_weight_shrinkage", (0.01, 0.001), False)
    assert model.decoder_params["entry_weight_shrinkage"] == 0.01  # the first, until chosen
    assert model.options["zero_entry_penalty"]["reason"] == (
        "a list of entry_weight_shrinkage (chosen without them)"
    )
    with pytest.raises(ValueError, match="cannot go with zero_entry_penalty as a list"):
        resolve_model(
            _params(entry_weight_shrinkage=[0.01, 0.001], zero_entry_penalty=[1, 0.1]),
            _shape(3, 100),
        )
    with pytest.raises(ValueError, match="zero_entry_penalty as a list"):
        resolve_model(_params(zero_entry_penalty=[0.1]), _shape(3, 100))


def test_the_losses_precision_follows_their_number():
    # 2 losses per row and weight; float32 from 2**20 of them (dtype="auto")
    params = _params(code="ovr", entry_weight_shrinkage=None)  # one weight per column
    small = resolve_model(params, _shape(4, 1000, "ovr"))
    assert small.options["solver"]["value"] == "ProjectedNewton()"
    assert "8,000 losses in float64" in small.options["solver"]["reason"]
    large = resolve_model(params, _shape(4, 2**17, "ovr"))
    assert f"{2**20:,} losses in float32" in large.options["solver"]["reason"]
    # with entry weights, a weight per nonzero entry (16 for one-vs-rest of 4 classes)
    entries = resolve_model(_params(code="ovr"), _shape(4, 1000, "ovr"))
    assert "32,000 losses in float64" in entries.options["solver"]["reason"]
    dask = resolve_model(_params(), _shape(3, 10**6, dask=True))
    assert "float64 (their number not known in advance)" in dask.options["solver"]["reason"]


def test_a_given_decoder_is_recorded_as_given():
    params = {"estimator": None, "decoder": WMAPDecoder(), "cv": 3, "ensemble": "auto"}
    model = resolve_model(params, _shape(3, 100, code="ovo"))
    assert model.options["decoder"] == {"value": "WMAPDecoder", "reason": "given"}
    assert "solver" not in model.options and model.decoder_params == {}
    sparse = resolve_model({**params, "decoder": None}, _shape(3, 100, code="ovo", sparse=True))
    assert sparse.options["estimator"]["value"] == (
        "make_pipeline(StandardScaler(with_mean=False), LogisticRegression())"
    )
    assert sparse.options["decoder"]["value"] == "ConvexDecoder"
    assert sparse.options["ensemble"]["value"] is True


@pytest.fixture(scope="module")
def wine():
    X, y = load_wine(return_X_y=True)
    return scale(X), y


def test_the_fitted_record_is_the_resolution_of_its_data(wine):
    """``resolved_`` is the resolution of the fit's parameters and data shape (computed
    here from the fitted code), with the chosen value read back from the fit."""
    X, y = wine
    w = np.random.default_rng(0).uniform(0.5, 2.0, y.size)
    clf = ConvexAggregationClassifier(cv=3).fit(X, y, sample_weight=w)
    built, parts = make_code_parts("ovo+ovr", 3)
    np.testing.assert_array_equal(clf.code_matrix_, built)
    model = resolve_model(clf.get_params(deep=False), DataShape(built, parts, y.size, w.sum()))
    record = clf.resolved_
    assert record.keys() == model.options.keys()
    assert record["zero_entry_penalty"]["value"] == clf.zero_entry_penalty_
    assert clf.zero_entry_penalty_ in model.choice.values
    assert record["entry_weight_shrinkage"]["value"] == clf.entry_weight_shrinkage_
    np.testing.assert_array_equal(record["column_penalty"]["value"], clf.decoder_.column_penalty)
    for name in record:
        assert record[name]["reason"] == model.options[name]["reason"], name


def test_the_record_says_why_the_zero_entries_were_left_out(wine):
    X, y = wine
    listed = ConvexAggregationClassifier(cv=3, entry_weight_shrinkage=[0.01, 0.001]).fit(X, y)
    assert listed.resolved_["zero_entry_penalty"] == {
        "value": None,
        "reason": "a list of entry_weight_shrinkage (chosen without them)",
    }
    assert listed.resolved_["entry_weight_shrinkage"]["value"] == listed.entry_weight_shrinkage_
    assert "chosen among [0.01, 0.001]" in listed.resolved_["entry_weight_shrinkage"]["reason"]
    # the CV sibling and fit_decoder keep their record too
    cv = ConvexAggregationClassifierCV(alphas=[1e-3, 1e-1], alpha_cv=2, cv=3).fit(X, y)
    assert cv.resolved_["zero_entry_penalty"]["value"] == cv.zero_entry_penalty_
    clf = ConvexAggregationClassifier(cv=3).fit(X, y)
    clf.set_params(zero_entry_penalty=None).fit_decoder(X, y)
    assert clf.resolved_["zero_entry_penalty"] == {"value": None, "reason": "given"}


def test_the_record_on_array_api_inputs(dispatch):
    xps = pytest.importorskip("array_api_strict")
    rng = np.random.default_rng(0)
    y = np.repeat(np.arange(3), 40)
    X = rng.normal(size=(y.size, 4)) + 1.5 * rng.normal(size=(3, 4))[y]
    clf = ConvexAggregationClassifier(cv=3).fit(xps.asarray(X), xps.asarray(y))
    assert clf.resolved_["zero_entry_penalty"] == {
        "value": None,
        "reason": "array-API X (fitted on its device without them)",
    }
    assert clf.resolved_["solver"]["reason"].endswith(", in that precision on X's device")
    with sklearn.config_context(array_api_dispatch=False):
        host = ConvexAggregationClassifier(cv=3).fit(X, y)
    assert host.resolved_["zero_entry_penalty"]["value"] is not None


def test_code_matrix_classifier_records_its_defaults():
    X, y = load_iris(return_X_y=True)
    clf = CodeMatrixClassifier(cv="in_sample").fit(X, y)
    assert clf.resolved_["decoder"]["value"] == "ConvexDecoder"
    assert clf.resolved_["ensemble"] == {
        "value": False,
        "reason": "in-sample outputs: one set of binaries",
    }
    assert clf.resolved_["estimator"]["reason"] == "the default learner (standardised features)"
