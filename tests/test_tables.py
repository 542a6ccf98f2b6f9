"""``X`` as given: tables with strings, categories and missing values, polars frames, sparse
matrices and lists reach the binary learners untouched, as scikit-learn's meta-estimators
pass them; the estimators check only the rows, the number of features and their names.

The references are the same models fitted on what the learner would have made of the
table (the encoded numeric array), or on the same data in another container.
"""

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from sklearn.compose import make_column_transformer
from sklearn.datasets import load_iris
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

from convexagg import (
    CodeMatrixClassifier,
    ConformalClassifier,
    ConvexAggregationClassifier,
    ConvexAggregationClassifierCV,
    CostSensitiveClassifier,
    PriorShiftClassifier,
)

TIGHT = dict(tol=1e-10, max_iter=10_000)  # lbfgs to its optimum: containers compared closely


@pytest.fixture(scope="module")
def table():
    """Iris with a string column ("region", three values on every class's rows, some
    signal in it) and an id column the learners drop."""
    X, y = load_iris(return_X_y=True, as_frame=True)
    region = np.array(["east", "west", "north"])[(np.arange(len(y)) + y.to_numpy()) % 3]
    frame = X.assign(region=region)
    return frame, y.to_numpy()


def _encoding_learner(**lr):
    encode = make_column_transformer(
        (OneHotEncoder(handle_unknown="ignore", sparse_output=False), ["region"]),
        remainder="passthrough",
    )
    return make_pipeline(encode, LogisticRegression(**lr))


def test_a_column_transformer_pipeline_fits_a_table_with_strings(table):
    frame, y = table
    clf = ConvexAggregationClassifier(_encoding_learner(**TIGHT), code="ovr").fit(frame, y)
    assert list(clf.feature_names_in_) == list(frame.columns) and clf.n_features_in_ == 5
    # the reference: the same model on the encoded array (every region is on the rows of
    # every binary, so each binary's encoder makes the same columns)
    encoded = np.column_stack(
        [(frame["region"].to_numpy()[:, None] == ["east", "north", "west"]).astype(float)]
        + [frame.drop(columns="region").to_numpy()]
    )
    ref = ConvexAggregationClassifier(LogisticRegression(**TIGHT), code="ovr").fit(encoded, y)
    # a bare LogisticRegression starts each fold from its previous fold's fit (the
    # pipeline's folds start cold): the optima agree to what lbfgs's tol=1e-10 leaves
    np.testing.assert_allclose(clf.predict_proba(frame), ref.predict_proba(encoded), atol=1e-6)
    # a category never seen in training is encoded as none of them: no error
    unseen = frame.head(5).assign(region="south")
    expected = ref.predict_proba(np.column_stack([np.zeros((5, 3)), encoded[:5, 3:]]))
    np.testing.assert_allclose(clf.predict_proba(unseen), expected, atol=1e-6)


def test_a_polars_frame_is_passed_as_given(table):
    pl = pytest.importorskip("polars")
    frame, y = table
    learner = _encoding_learner()
    pandas_fit = ConvexAggregationClassifier(learner, code="ovr").fit(frame, y)
    polars_frame = pl.DataFrame({name: frame[name].to_numpy() for name in frame.columns})
    clf = ConvexAggregationClassifier(learner, code="ovr").fit(polars_frame, y)
    assert list(clf.feature_names_in_) == list(frame.columns)
    np.testing.assert_allclose(
        clf.predict_proba(polars_frame), pandas_fit.predict_proba(frame), rtol=1e-12
    )
    assert clf.predict(polars_frame.head(3)).shape == (3,)


def test_gradient_boosting_takes_categories_and_missing_values(table):
    """A categorical column and NaN, as HistGradientBoostingClassifier takes them (its
    categories from the dtype); the same binaries as on the category codes."""
    frame, y = table
    frame = frame.assign(region=frame["region"].astype("category"))
    frame.iloc[::7, 0] = np.nan
    hgb = dict(max_iter=10, random_state=0)
    learner = HistGradientBoostingClassifier(categorical_features="from_dtype", **hgb)
    clf = CodeMatrixClassifier(learner, code="ovr").fit(frame, y)
    P = clf.predict_proba(frame)
    assert np.isfinite(P).all() and clf.score(frame, y) > 0.9
    codes = frame.assign(region=frame["region"].cat.codes.astype(float)).to_numpy()
    mask = [False] * 4 + [True]
    on_codes = HistGradientBoostingClassifier(categorical_features=mask, **hgb)
    ref = CodeMatrixClassifier(on_codes, code="ovr").fit(codes, y)
    np.testing.assert_allclose(P, ref.predict_proba(codes), rtol=1e-12)
    # an unseen category is a missing value to the trees: no error
    unseen = frame.head(4).copy()
    unseen["region"] = pd.Categorical(["south"] * 4)
    assert np.isfinite(clf.predict_proba(unseen)).all()


def test_sparse_and_lists_reach_the_default_learner(table):
    frame, y = table
    X = frame.drop(columns="region").to_numpy()
    dense = ConvexAggregationClassifier().fit(X, y)
    # a list of rows: the same numbers, the same model
    listed = ConvexAggregationClassifier().fit(X.tolist(), y)
    np.testing.assert_array_equal(listed.predict_proba(X.tolist()), dense.predict_proba(X))
    # a sparse matrix: the default learner scales it without centring it
    sparse = ConvexAggregationClassifier().fit(sp.csr_matrix(X), y)
    assert sparse.estimators_[0][0][0].with_mean is False
    uncentred = make_pipeline(StandardScaler(with_mean=False), LogisticRegression())
    ref = ConvexAggregationClassifier(uncentred).fit(X, y)
    # lbfgs stops (at its tol=1e-4) at iterates that differ with the sums' order
    np.testing.assert_allclose(
        sparse.predict_proba(sp.csr_matrix(X)), ref.predict_proba(X), atol=1e-6
    )
    coo = ConvexAggregationClassifier().fit(sp.coo_matrix(X), y)  # rows taken as CSR
    np.testing.assert_array_equal(coo.predict_proba(X), sparse.predict_proba(X))


@pytest.mark.parametrize(
    "make",
    [
        lambda: ConvexAggregationClassifier(_encoding_learner(), code="ovr"),
        lambda: ConvexAggregationClassifierCV(_encoding_learner(), code="ovr", alphas=2),
        lambda: ConformalClassifier(ConvexAggregationClassifier(_encoding_learner(), code="ovr")),
    ],
    ids=["ConvexAggregationClassifier", "ConvexAggregationClassifierCV", "ConformalClassifier"],
)
def test_feature_names_are_checked_at_predict(table, make):
    """Renamed or reordered columns: scikit-learn's error, before any binary predicts."""
    frame, y = table
    clf = make().fit(frame, y)
    with pytest.raises(ValueError, match="feature names should match those that were passed"):
        clf.predict_proba(frame.rename(columns={"region": "area"}))
    with pytest.raises(ValueError, match="Feature names must be in the same order"):
        clf.predict(frame[frame.columns[::-1]])


def test_a_table_the_learner_cannot_take_is_refused_by_it(table):
    """The default learner takes numbers only: its own error, and nothing is fitted."""
    frame, y = table
    clf = ConvexAggregationClassifier()
    with pytest.raises(ValueError, match="could not convert string to float: '(east|west|north)'"):
        clf.fit(frame, y)
    assert not hasattr(clf, "classes_")
    numeric = frame.drop(columns="region")
    with pytest.raises(ValueError, match="Input X contains NaN"):
        clf.fit(numeric.mask(numeric > 7), y)
    fitted = ConvexAggregationClassifier().fit(numeric, y)
    with pytest.raises(ValueError, match="could not convert string to float"):
        fitted.predict_proba(numeric.assign(**{numeric.columns[0]: "x"}))


@pytest.mark.parametrize(
    "Wrapper, params",
    [(CostSensitiveClassifier, {"cost_matrix": 1 - np.eye(3)}), (PriorShiftClassifier, {})],
)
def test_the_decision_wrappers_pass_tables_through(table, Wrapper, params):
    frame, y = table
    model = ConvexAggregationClassifier(_encoding_learner(), code="ovr")
    clf = Wrapper(model, **params).fit(frame, y)
    assert clf.predict(frame.assign(region="south")).shape == (len(y),)
    assert clf.n_features_in_ == 5


def test_a_list_of_texts_reaches_a_vectorising_pipeline():
    """1-D ``X`` (texts) has no feature count: none is kept, and the learner vectorises."""
    from sklearn.feature_extraction.text import TfidfVectorizer

    docs = ["red apple", "green apple", "blue sky", "grey sky", "red car", "blue car"] * 5
    y = ["fruit", "fruit", "sky", "sky", "car", "car"] * 5
    learner = make_pipeline(TfidfVectorizer(), LogisticRegression())
    clf = ConvexAggregationClassifier(learner, cv=3).fit(docs, y)
    assert not hasattr(clf, "n_features_in_")
    np.testing.assert_array_equal(clf.predict(["yellow apple", "dark sky"]), ["fruit", "sky"])
