"""Decoders: from binary outputs ``Q`` to class probabilities.

All share the interface of :class:`BaseDecoder`: ``fit(Q, y, code, output)``,
``predict_proba(Q)``, ``decision_function(Q)``, ``predict(Q)``.

* :class:`ConvexDecoder` -- the paper's method: softmax of learned weighted losses;
* :class:`HammingDecoder` -- hard decoding (labels, no probabilities);
* :class:`LossBasedDecoder` -- equal-weight losses and their softmax;
* :class:`BradleyTerryDecoder` -- GBTM, the generalized Bradley-Terry model;
* :class:`PairwiseCouplingDecoder` -- Wu-Lin-Weng / Hastie-Tibshirani, one-vs-one codes;
* :class:`WMAPDecoder` -- weighted Bradley-Terry with learned or fixed weights.

All work on the same binary outputs, so a fitted
:class:`~convexagg.CodeMatrixClassifier` can swap one for another with
``fit_decoder``.
"""

from .base import BaseDecoder
from .bradley_terry import BradleyTerryDecoder
from .convex import ConvexDecoder
from .hamming import HammingDecoder
from .loss_based import LossBasedDecoder
from .pairwise import PairwiseCouplingDecoder
from .wmap import WMAPDecoder

__all__ = [
    "BaseDecoder",
    "BradleyTerryDecoder",
    "ConvexDecoder",
    "HammingDecoder",
    "LossBasedDecoder",
    "PairwiseCouplingDecoder",
    "WMAPDecoder",
]
