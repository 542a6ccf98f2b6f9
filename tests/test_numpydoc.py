"""The public API's docstrings pass numpydoc's validation (the checks that matter to a reader).

Every class, function, method and property exported by a public module's ``__all__``
(and the command line's entry points) is validated with ``numpydoc.validate``. Methods
are those a class defines itself: what it inherits from scikit-learn (``get_params``,
``set_params``, ``score``, ``set_*_request``) is scikit-learn's to document, and what a
subclass inherits from a convexagg class is validated on that class.

Enforced (numpydoc's codes):

* GL06, GL07, GL08: known sections, in numpydoc's order; a docstring exists;
* SS01, SS02, SS03, SS05: a summary, starting with a capital, ending with a period, not
  with a third-person verb ("Return", not "Returns");
* PR01-PR07, PR10: every parameter documented, none that is not in the signature, in
  the signature's order, each with a type (no trailing period, ``int`` / ``bool``) and a
  description;
* RT01, RT03: a Returns section, with descriptions, for whatever returns a value;
  YD01: a Yields section for generators.

Not enforced: extended summaries, See Also and Examples sections on every object (ES01,
SA01, EX01), one-line summaries (SS06: the library's summaries may wrap), punctuation of
descriptions (PR08, PR09) and the layout of the Returns line (RT02).

Dataclasses (result objects) document their fields under Attributes rather than
Parameters: for them PR01/PR02 are replaced by "every field is documented" (under
Attributes or Parameters). A ``typing.Protocol`` (the solvers' objective contract) has
no constructor to document.
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect

import pytest

numpydoc_validate = pytest.importorskip("numpydoc.validate")
from numpydoc.docscrape import ClassDoc  # noqa: E402  (after the importorskip)

PUBLIC_MODULES = [
    "convexagg",
    "convexagg._prediction",  # CodeMatrixClassifier's prediction methods (a mixin)
    "convexagg.aggregation",
    "convexagg.aggregation.distributed",
    "convexagg.aggregation.array_api",
    "convexagg.binary",
    "convexagg.linear_outputs",
    "convexagg.out_of_fold",
    "convexagg.code_matrix",
    "convexagg.codes",
    "convexagg.convex_aggregation",
    "convexagg.datasets",
    "convexagg.decision",
    "convexagg.decision.conformal",
    "convexagg.decision.costs",
    "convexagg.decision.priors",
    "convexagg.decoders",
    "convexagg.decoders.fitting",
    "convexagg.decoders.formulations",
    "convexagg.defaults",
    "convexagg.display",
    "convexagg.estimator",
    "convexagg.export",
    "convexagg.io",
    "convexagg.losses",
    "convexagg.metrics",
    "convexagg.model_selection",
    "convexagg.path",
    "convexagg.precomputed",
    "convexagg.solvers",
    "convexagg.solvers.config",
    "convexagg.theory",
]
# Modules without __all__ whose entry points are public.
EXTRA = ["convexagg.cli.build_parser", "convexagg.cli.main"]

ENFORCED = {
    "GL06",
    "GL07",
    "GL08",
    "SS01",
    "SS02",
    "SS03",
    "SS05",
    "PR01",
    "PR02",
    "PR03",
    "PR04",
    "PR05",
    "PR06",
    "PR07",
    "PR10",
    "RT01",
    "RT03",
    "YD01",
}
# scikit-learn's, documented there (and any a class overrides only to pass through).
INHERITED = {"get_params", "set_params", "score", "fit_transform"}


def _is_method(value):
    if isinstance(value, (staticmethod, classmethod, property)):
        return True
    if type(value).__name__ == "_AvailableIfDescriptor":  # scikit-learn's available_if
        return True
    return inspect.isfunction(value)


def _public_names():
    names = {}
    for module_name in PUBLIC_MODULES:
        module = importlib.import_module(module_name)
        for attr in module.__all__:
            obj = getattr(module, attr)
            if not (inspect.isclass(obj) or inspect.isfunction(obj)):
                continue  # constants
            if not obj.__module__.startswith("convexagg"):
                continue
            qualname = f"{obj.__module__}.{obj.__qualname__}"
            names[qualname] = obj
            if not inspect.isclass(obj):
                continue
            for member, value in vars(obj).items():
                if member.startswith("_") or member in INHERITED:
                    continue
                if member.startswith("set_") and member.endswith("_request"):
                    continue
                if _is_method(value):
                    names[f"{qualname}.{member}"] = None
    for name in EXTRA:
        names[name] = None
    return sorted(names), names


NAMES, OBJECTS = _public_names()


def test_the_public_api_is_found():
    # a guard against validating nothing: the estimators, decoders and their methods
    assert "convexagg.convex_aggregation.ConvexAggregationClassifier" in NAMES
    assert "convexagg.code_matrix.CodeMatrixClassifier.fit" in NAMES
    assert "convexagg._prediction.CodeMatrixPrediction.predict_proba" in NAMES
    assert "convexagg.defaults.resolve_model" in NAMES
    assert "convexagg.decoders.convex.ConvexDecoder.fit" in NAMES
    assert len(NAMES) > 150


@pytest.mark.parametrize("name", NAMES)
def test_docstring(name):
    result = numpydoc_validate.validate(name)
    errors = [(code, message) for code, message in result["errors"] if code in ENFORCED]
    obj = OBJECTS.get(name)
    if obj is not None and getattr(obj, "_is_protocol", False):
        # a typing.Protocol has no constructor of its own (``*args, **kwargs``)
        errors = [(c, m) for c, m in errors if c not in ("PR01", "PR02")]
    if obj is not None and dataclasses.is_dataclass(obj):
        errors = [(c, m) for c, m in errors if c not in ("PR01", "PR02")]
        doc = ClassDoc(obj, config={"show_class_members": False})
        documented = {
            part.strip()
            for section in ("Parameters", "Attributes")
            for item in doc[section]
            for part in item.name.split(",")
        }
        missing = [f.name for f in dataclasses.fields(obj) if f.name not in documented]
        if missing:
            errors.append(
                ("PR01", f"fields documented neither as Parameters nor Attributes: {missing}")
            )
    assert not errors, "\n".join(f"{name}: {code} {message}" for code, message in errors)
