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

from . import decision, metrics
from ._version import __version__
from .codes import make_code
from .decision import ConformalClassifier, CostSensitiveClassifier, PriorShiftClassifier
from .decoders import (
    BradleyTerryDecoder,
    ConvexDecoder,
    HammingDecoder,
    LossBasedDecoder,
    PairwiseCouplingDecoder,
    WMAPDecoder,
)
from .display import (
    ConvergenceDisplay,
    RegularizationPathDisplay,
    ReliabilityDisplay,
    WeightsDisplay,
)
from .estimator import CodeMatrixClassifier, ConvexAggregationClassifier
from .model_selection import ConvexAggregationClassifierCV
from .path import RegularizationPath, regularization_path
from .precomputed import OutputDecoderClassifier
from .theory import GeneralizationBound, generalization_bound

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
