"""Decoders: from binary outputs ``Q`` to class probabilities.

All share the interface of :class:`BaseDecoder`: ``fit(Q, y, code, output)``,
``predict_proba(Q)``, ``decision_function(Q)``, ``predict(Q)``.
"""

from .base import BaseDecoder
from .convex import ConvexDecoder

__all__ = ["BaseDecoder", "ConvexDecoder"]
