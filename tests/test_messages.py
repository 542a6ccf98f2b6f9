"""Messages name the real problem: a binary learner's short output, a
learner that is not a scikit-learn estimator, values formatted away, mixed labels;
and the entry points (``--version``, ``python -m convexagg``)."""

import importlib.metadata
import subprocess
import sys

import numpy as np
import pytest
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.datasets import load_iris

import convexagg
from convexagg import CodeMatrixClassifier, ConvexAggregationClassifier, ConvexDecoder
from convexagg.cli import main
from convexagg.codes import check_code_matrix, one_vs_rest


@pytest.fixture(scope="module")
def iris():
    return load_iris(return_X_y=True)


class _Short(ClassifierMixin, BaseEstimator):
    """Outputs with one row too few (with ``only_new``: not on its training rows)."""

    def __init__(self, only_new=False):
        self.only_new = only_new

    def fit(self, X, y):
        self.classes_ = np.unique(y)
        self.n_fit_ = len(X)
        return self

    def _n(self, X):
        return len(X) - (0 if self.only_new and len(X) == self.n_fit_ else 1)


class _ShortProba(_Short):
    def predict_proba(self, X):
        p = np.full(self._n(X), 0.5)
        return np.column_stack([1 - p, p])


class _ShortMargin(_Short):
    def decision_function(self, X):
        return np.zeros(self._n(X))


@pytest.mark.parametrize("Learner", [_ShortProba, _ShortMargin])
@pytest.mark.parametrize("cv", ["in_sample", 3])
def test_a_short_binary_output_is_named_at_fit(iris, Learner, cv):
    loss = "logistic" if Learner is _ShortMargin else "cross_entropy"
    clf = CodeMatrixClassifier(Learner(), code="ovr", decoder=ConvexDecoder(loss=loss), cv=cv)
    name = Learner.__name__
    with pytest.raises(ValueError, match=f"binary classifier 0 \\({name}\\) returned") as e:
        clf.fit(*iris)
    assert "outputs for" in str(e.value) and "expected one per sample" in str(e.value)
    assert " y " not in str(e.value)


def test_a_short_binary_output_is_named_at_predict(iris):
    X, y = iris
    clf = ConvexAggregationClassifier(_ShortProba(only_new=True), code="ovr", cv="in_sample").fit(
        X, y
    )
    with pytest.raises(ValueError, match="returned 9 outputs for 10 samples"):
        clf.predict_proba(X[:10])


class _DuckLearner:
    """get_params / fit / predict, no scikit-learn base class, no probabilities or scores."""

    def get_params(self, deep=True):
        return {}

    def set_params(self, **params):
        return self

    def fit(self, X, y):
        return self

    def predict(self, X):
        return np.zeros(len(X))


@pytest.mark.parametrize("Estimator", [CodeMatrixClassifier, ConvexAggregationClassifier])
def test_a_duck_learner_without_outputs_gets_the_promised_type_error(iris, Estimator):
    with pytest.raises(TypeError, match="has neither predict_proba nor decision_function"):
        Estimator(_DuckLearner()).fit(*iris)


def test_values_are_not_formatted_away():
    code = np.array([[1, -1], [-1, 0.9999999], [0, 1]])
    with pytest.raises(ValueError, match="found 0.9999999 at row 1, column 1"):
        check_code_matrix(code)
    Q = np.full((6, 3), 0.5)
    Q[2, 1] = 1.0000000001
    with pytest.raises(ValueError, match="max 1.0000000001"):
        ConvexDecoder().fit(Q, np.arange(6) % 3, one_vs_rest(3))


class _SlightlyAboveOne(ClassifierMixin, BaseEstimator):
    def fit(self, X, y):
        self.classes_ = np.unique(y)
        return self

    def predict_proba(self, X):
        p = np.full(len(X), 1.0000000001)
        return np.column_stack([1 - p, p])


def test_binary_probabilities_slightly_above_one_are_shown(iris):
    with pytest.raises(ValueError, match="max 1.0000000001"):
        ConvexAggregationClassifier(_SlightlyAboveOne()).fit(*iris)


@pytest.mark.parametrize(
    "labels, message",
    [
        (["a", 1], "y mixes label types \\(int, str\\)"),
        ([1, "a"], "y mixes label types \\(int, str\\)"),
        (["a", None], "y contains None \\(y\\[1\\]\\)"),
        ([1, None], "y contains None \\(y\\[1\\]\\)"),
    ],
)
def test_mixed_labels_name_y(iris, labels, message):
    X, _ = iris
    y = np.array(labels * 75, dtype=object)
    with pytest.raises(ValueError, match=message):
        ConvexAggregationClassifier().fit(X, y)


# --------------------------------------------------------------------------- entry points


def test_version_comes_from_the_package_metadata(capsys):
    assert convexagg.__version__ == importlib.metadata.version("convexagg")
    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code == 0
    assert capsys.readouterr().out.strip() == f"convexagg {convexagg.__version__}"


def test_python_dash_m_runs_the_command_line():
    done = subprocess.run(
        [sys.executable, "-m", "convexagg", "--version"], capture_output=True, text=True
    )
    assert done.returncode == 0 and done.stdout.strip() == f"convexagg {convexagg.__version__}"
