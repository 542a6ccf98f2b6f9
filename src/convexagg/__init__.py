"""convexagg: multiclass classification by binary decomposition with honest probabilities.

Reference implementation of Park, Hwang & Choi, "Convex Optimization for Binary
Classifier Aggregation in Multiclass Problems" (SDM 2014).

Architecture: codes (encode) -> binary (train) -> decoders (aggregate, using
solvers) -> estimators (scikit-learn API).
"""

from .codes import make_code
from .decoders import (
    BradleyTerryDecoder,
    ConvexDecoder,
    HammingDecoder,
    LossBasedDecoder,
    PairwiseCouplingDecoder,
    WMAPDecoder,
)
from .estimator import CodeMatrixClassifier, ConvexAggregationClassifier

__version__ = "0.1.0"

__all__ = [
    "BradleyTerryDecoder",
    "CodeMatrixClassifier",
    "ConvexAggregationClassifier",
    "ConvexDecoder",
    "HammingDecoder",
    "LossBasedDecoder",
    "PairwiseCouplingDecoder",
    "WMAPDecoder",
    "__version__",
    "make_code",
]
