"""From class probabilities to decisions, with one fitted classifier.

Each decision kind is a small wrapper estimator in its own module, in the
manner of scikit-learn's ``FixedThresholdClassifier`` (fit a clone of the
classifier, or pass a fitted one in :class:`sklearn.frozen.FrozenEstimator`):

* :class:`CostSensitiveClassifier` (:mod:`~convexagg.decision.costs`): the
  class of least expected cost under a cost matrix;
* :class:`PriorShiftClassifier` (:mod:`~convexagg.decision.priors`):
  posteriors under known deployment priors, or priors estimated by EM on the
  deployment sample;
* :class:`ConformalClassifier` (:mod:`~convexagg.decision.conformal`):
  split and cross-conformal class sets (LAC, APS; Mondrian option), the
  cross-conformal ones from the out-of-fold outputs of the default ``cv=5``.

The functions behind them take probabilities computed anywhere. The user
guide's "From probabilities to decisions" says why wrappers and not
predict-time parameters.
"""

from .conformal import ConformalClassifier, class_scores, conformal_pvalues
from .costs import CostSensitiveClassifier, check_cost_matrix, expected_costs, min_cost_decision
from .priors import PriorShiftClassifier, check_priors, em_priors, shift_priors

__all__ = [
    "ConformalClassifier",
    "CostSensitiveClassifier",
    "PriorShiftClassifier",
    "check_cost_matrix",
    "check_priors",
    "class_scores",
    "conformal_pvalues",
    "em_priors",
    "expected_costs",
    "min_cost_decision",
    "shift_priors",
]
