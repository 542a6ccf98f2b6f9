"""convexagg: multiclass classification by binary decomposition with honest probabilities.

Reference implementation of Park, Hwang & Choi, "Convex Optimization for Binary
Classifier Aggregation in Multiclass Problems" (SDM 2014).

Architecture: codes (encode) -> binary (train) -> decoders (aggregate, using
solvers) -> estimators (scikit-learn API). The paper's sections 4 and 5.1:
``ConvexDecoder(formulation="large_margin" | "stiffness")``,
:func:`generalization_bound` (Proposition 2), :func:`regularization_path` and
:class:`ConvexAggregationClassifierCV`. :class:`OutputDecoderClassifier` is a
decoder as a classifier of binary outputs computed elsewhere (``X`` is ``Q``).
Decisions from the probabilities (costs, prior shift, conformal class sets)
are the wrappers of :mod:`convexagg.decision`. Calibration and cost metrics
are in :mod:`convexagg.metrics`; figures of fitted models
(reliability diagram, weights, convergence, regularisation path) are the
``*Display`` classes of :mod:`convexagg.display`.
"""

import importlib
import importlib.util

# Where each public name lives. The names are imported on first use (PEP 562), so
# `import convexagg` -- and the `convexagg` command's `--help` -- do not pay for
# scikit-learn, SciPy and pandas until something needs them.
_HOMES = {
    "BradleyTerryDecoder": "decoders",
    "CodeMatrixClassifier": "estimator",
    "ConvexAggregationClassifier": "estimator",
    "ConvexAggregationClassifierCV": "model_selection",
    "ConvexDecoder": "decoders",
    "ConformalClassifier": "decision",
    "CostSensitiveClassifier": "decision",
    "PriorShiftClassifier": "decision",
    "ConvergenceDisplay": "display",
    "GeneralizationBound": "theory",
    "HammingDecoder": "decoders",
    "LossBasedDecoder": "decoders",
    "OutputDecoderClassifier": "precomputed",
    "PairwiseCouplingDecoder": "decoders",
    "RegularizationPath": "path",
    "RegularizationPathDisplay": "display",
    "ReliabilityDisplay": "display",
    "WMAPDecoder": "decoders",
    "WeightsDisplay": "display",
    "generalization_bound": "theory",
    "make_code": "codes",
    "regularization_path": "path",
    "__version__": "_version",
}

__all__ = [
    "BradleyTerryDecoder",
    "CodeMatrixClassifier",
    "ConvexAggregationClassifier",
    "ConvexAggregationClassifierCV",
    "ConvexDecoder",
    "ConformalClassifier",
    "ConvergenceDisplay",
    "CostSensitiveClassifier",
    "GeneralizationBound",
    "HammingDecoder",
    "LossBasedDecoder",
    "OutputDecoderClassifier",
    "PriorShiftClassifier",
    "PairwiseCouplingDecoder",
    "RegularizationPath",
    "RegularizationPathDisplay",
    "ReliabilityDisplay",
    "WMAPDecoder",
    "WeightsDisplay",
    "decision",
    "generalization_bound",
    "make_code",
    "metrics",
    "regularization_path",
    "__version__",
]


def __getattr__(name):
    if name in _HOMES:
        value = getattr(importlib.import_module(f".{_HOMES[name]}", __name__), name)
    elif not name.startswith("__") and importlib.util.find_spec(f"{__name__}.{name}"):
        value = importlib.import_module(f".{name}", __name__)  # a submodule, as before
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value  # once: later look-ups do not come here
    return value


def __dir__():
    return sorted(set(globals()) | set(__all__))
