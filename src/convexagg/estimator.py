"""The scikit-learn estimators and the default model's rules, under one import.

:class:`CodeMatrixClassifier` lives in :mod:`convexagg.code_matrix`,
:class:`ConvexAggregationClassifier` in :mod:`convexagg.convex_aggregation`, and
every "auto" rule of the default model with its constants in
:mod:`convexagg.defaults`; this module names them together.
"""

from __future__ import annotations

from .code_matrix import CodeMatrixClassifier as CodeMatrixClassifier
from .convex_aggregation import DECODER_PARAMETERS as DECODER_PARAMETERS
from .convex_aggregation import DEFAULT_ALPHA as DEFAULT_ALPHA
from .convex_aggregation import ConvexAggregationBase as ConvexAggregationBase
from .convex_aggregation import ConvexAggregationClassifier as ConvexAggregationClassifier
from .convex_aggregation import aggregation_constraints as aggregation_constraints
from .defaults import DEFAULT_ENTRY_WEIGHT_PRIOR as DEFAULT_ENTRY_WEIGHT_PRIOR
from .defaults import DEFAULT_OVR_COLUMN_PENALTY as DEFAULT_OVR_COLUMN_PENALTY
from .defaults import ENTRY_WEIGHT_SHRINKAGE_RANGE as ENTRY_WEIGHT_SHRINKAGE_RANGE
from .defaults import ZERO_ENTRY_AUTO_MAX_ROWS as ZERO_ENTRY_AUTO_MAX_ROWS
from .defaults import ZERO_ENTRY_AUTO_MAX_WEIGHTS as ZERO_ENTRY_AUTO_MAX_WEIGHTS
from .defaults import ZERO_ENTRY_PRIORS as ZERO_ENTRY_PRIORS
from .defaults import auto_entry_weight_shrinkage as auto_entry_weight_shrinkage
from .defaults import default_learner as default_learner

__all__ = ["CodeMatrixClassifier", "ConvexAggregationClassifier"]
