"""scikit-learn's non-public helpers that convexagg relies on, reached from this one
module: every other module imports them from here under public names, so that a
change in scikit-learn (a helper renamed or moved) is fixed in one place.

``fit_context`` validates an estimator's parameters once per ``fit`` (the
decorator scikit-learn's own estimators use); ``routing_enabled`` says whether
metadata routing is on; ``num_samples`` and ``check_method_params`` read the
length of an input and slice fit parameters by rows as scikit-learn's
cross-validation does; ``safe_indexing`` takes rows of a table or list as scikit-learn's
meta-estimators do; ``feature_names`` reads the column names a fit stores as
``feature_names_in_`` (None for containers without string names);
``validate_style_kwargs`` merges a display's style keywords as scikit-learn's
displays do. ``parse_sklearn_classifier`` is skl2onnx's
parser of a classifier's outputs (label, probabilities, ZipMap), imported on use
(skl2onnx is optional).
"""

from sklearn.base import _fit_context as fit_context
from sklearn.utils import _safe_indexing as safe_indexing
from sklearn.utils._plotting import _validate_style_kwargs as validate_style_kwargs
from sklearn.utils.metadata_routing import _routing_enabled as routing_enabled
from sklearn.utils.validation import _check_method_params as check_method_params
from sklearn.utils.validation import _get_feature_names as feature_names
from sklearn.utils.validation import _num_samples as num_samples

__all__ = [
    "check_method_params",
    "feature_names",
    "fit_context",
    "num_samples",
    "parse_sklearn_classifier",
    "routing_enabled",
    "safe_indexing",
    "validate_style_kwargs",
]


def parse_sklearn_classifier(scope, model, inputs, custom_parsers=None):
    """skl2onnx's parser of a classifier's outputs (its non-public one)."""
    from skl2onnx._parse import _parse_sklearn_classifier

    return _parse_sklearn_classifier(scope, model, inputs, custom_parsers=custom_parsers)
