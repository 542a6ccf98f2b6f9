"""The API pages: every estimator documents every parameter of its ``__init__`` and every
attribute its ``fit`` sets where the user reads it (not "as in" another class)."""

import ast
import inspect
import re

import pytest
from numpydoc.docscrape import ClassDoc
from sklearn.base import BaseEstimator
from sklearn.datasets import load_iris

import convexagg
from convexagg import solvers
from convexagg._docstrings import PARAMETERS, fill_doc


def _estimators():
    found = {}
    for module in (convexagg, solvers):
        for name in module.__all__:
            obj = getattr(module, name)
            if inspect.isclass(obj) and issubclass(obj, BaseEstimator):
                found[f"{module.__name__}.{name}"] = obj
    return found


ESTIMATORS = _estimators()


def _documented(cls):
    """``{parameter name: description}`` of the numpydoc Parameters section."""
    documented = {}
    for entry in ClassDoc(cls)["Parameters"]:
        for name in entry.name.split(","):
            documented[name.strip()] = " ".join(entry.desc).strip()
    return documented


def test_the_estimators_are_found():
    names = {cls.__name__ for cls in ESTIMATORS.values()}
    assert {"ConvexAggregationClassifier", "ConvexAggregationClassifierCV"} <= names
    assert {"CodeMatrixClassifier", "ConvexDecoder", "WMAPDecoder", "InteriorPoint"} <= names


@pytest.mark.parametrize("name", sorted(ESTIMATORS))
def test_every_parameter_is_documented_on_the_estimators_own_page(name):
    cls = ESTIMATORS[name]
    documented = _documented(cls)
    for parameter in inspect.signature(cls).parameters:
        assert parameter in documented, f"{name} does not document {parameter!r}"
        text = documented[parameter]
        assert len(text) >= 10, f"{name}.{parameter}: no description ({text!r})"
        # a description that only sends the reader to another page is not one
        assert not re.match(r"(as in|see|like)\b", text, re.IGNORECASE), (name, parameter, text)


@pytest.mark.parametrize(
    "make",
    [
        lambda: convexagg.CodeMatrixClassifier(),
        lambda: convexagg.ConvexAggregationClassifier(),
        lambda: convexagg.ConvexAggregationClassifier(
            binary_param_grid={"logisticregression__C": [0.1, 1.0]}
        ),
        lambda: convexagg.ConvexAggregationClassifierCV(alphas=2, alpha_cv=2),
    ],
    ids=["CodeMatrixClassifier", "ConvexAggregationClassifier", "binary_param_grid", "CV"],
)
def test_every_fitted_attribute_is_documented(make):
    """Every public attribute a fit sets (and each property of the fitted model) is in the
    class's Attributes section, with a description."""
    X, y = load_iris(return_X_y=True, as_frame=True)
    clf = make().fit(X, y)
    cls = type(clf)
    documented = {}
    for entry in ClassDoc(cls)["Attributes"]:
        for name in entry.name.split(","):
            documented[name.strip()] = " ".join(entry.desc).strip()
    fitted = {k for k in vars(clf) if k.endswith("_") and not k.startswith("_")}
    properties = {
        k
        for k, v in inspect.getmembers(cls)
        if isinstance(v, property) and k.endswith("_") and not k.startswith("_")
    }
    assert "feature_names_in_" in fitted  # fitted on a DataFrame: every attribute is set
    for name in sorted(fitted | properties):
        assert name in documented, f"{cls.__name__} does not document {name!r}"
        assert len(documented[name]) >= 10, f"{cls.__name__}.{name}: no description"


def test_fill_doc_puts_the_shared_text_at_the_placeholders_indentation():
    class Example:
        """Summary.

        Parameters
        ----------
        %(alpha)s
        """

    fill_doc(Example)
    first, second = PARAMETERS["alpha"].split("\n")[:2]
    assert f"\n        {first}\n        {second}\n" in Example.__doc__
    assert "%(" not in Example.__doc__

    class Typo:
        """%(alpah)s"""

    with pytest.raises(KeyError, match="alpah"):
        fill_doc(Typo)


def test_fill_doc_description_only_under_the_classs_own_first_line():
    """A class whose default differs writes its own ``name : type, default=...`` line and
    takes the shared description under it (indented as the placeholder)."""

    class Example:
        """Summary.

        Parameters
        ----------
        alpha : float, default=1.0
            %(alpha.description)s
            Here 1.0, as the signature says.
        """

    fill_doc(Example)
    shared = PARAMETERS["alpha"].split("\n")
    assert "alpha : float, default=1.0\n" in Example.__doc__
    assert shared[0] not in Example.__doc__  # the shared first line is not repeated
    assert f"\n            {shared[1].strip()}\n" in Example.__doc__
    assert "%(" not in Example.__doc__


@pytest.mark.parametrize("name", sorted(ESTIMATORS))
def test_the_documented_defaults_are_the_signatures(name):
    """``default=...`` on a parameter's line is the signature's default (a shared text
    whose default differs in one class, such as ``entry_weight_shrinkage``, must not
    show the other's)."""
    cls = ESTIMATORS[name]
    signature = inspect.signature(cls).parameters
    checked = 0
    for entry in ClassDoc(cls)["Parameters"]:
        shown = re.search(r"default=(.*)$", entry.type)
        if shown is None:
            continue
        try:
            documented = ast.literal_eval(shown.group(1).strip())
        except (ValueError, SyntaxError):  # an expression, not a value
            continue
        for parameter in (p.strip() for p in entry.name.split(",")):
            if parameter in signature:
                assert signature[parameter].default == documented, (name, parameter)
                checked += 1
    assert checked or all(p.default is inspect.Parameter.empty for p in signature.values())
