"""Figures of fitted models, in scikit-learn's display style.

Each display holds the numbers it draws. Build it with a class method
(``from_estimator``, ``from_predictions``, ``from_decoder``, ``from_path``),
which computes them and draws, or from the numbers themselves and call
``plot``; ``plot(ax=None, ...)`` draws on ``ax`` (a new figure when None) and
returns the display, with ``ax_``, ``figure_`` and the artists as attributes
(as :class:`sklearn.calibration.CalibrationDisplay` and
:class:`sklearn.metrics.ConfusionMatrixDisplay`):

* :class:`ReliabilityDisplay` -- multiclass reliability diagram, top-label or
  per class, the calibration error (:mod:`convexagg.metrics`) in the legend;
* :class:`WeightsDisplay` -- the learned aggregation weights under the code
  matrix they weigh (and the class intercepts beside it);
* :class:`ConvergenceDisplay` -- the solver's progress from ``history_``;
* :class:`RegularizationPathDisplay` -- weights and accuracy along a path of
  ``alpha`` (the paper's Fig. 3).

matplotlib is imported only when something is drawn; it comes with
``pip install "convexagg[experiments]"``.

One module per display (:mod:`~convexagg.display.reliability`,
:mod:`~convexagg.display.weights`, :mod:`~convexagg.display.convergence`,
:mod:`~convexagg.display.path`); what they share (the axes, the fitted decoder)
in :mod:`~convexagg.display.base`.
"""

from .convergence import ConvergenceDisplay
from .path import RegularizationPathDisplay
from .reliability import ReliabilityDisplay
from .weights import WeightsDisplay

__all__ = [
    "ConvergenceDisplay",
    "RegularizationPathDisplay",
    "ReliabilityDisplay",
    "WeightsDisplay",
]
