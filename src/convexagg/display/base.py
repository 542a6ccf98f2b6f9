"""What the displays share: their axes, the fitted decoder they read, log-scale values."""

from __future__ import annotations

import numpy as np
from sklearn.utils.validation import check_is_fitted

from .._optional import require
from .._sklearn import validate_style_kwargs
from ..decoders import ConvexDecoder

__all__ = ["axes", "fitted_decoder", "positive", "validate_style_kwargs"]


def axes(display, ax, **subplots):
    """``(ax, figure)``: ``ax``, or the axes of a new figure (``subplots`` keywords;
    constrained layout by default, which keeps twin axes' labels and outer legends in)."""
    plt = require("matplotlib.pyplot", f"{type(display).__name__}.plot", "experiments")
    if ax is None:
        _, ax = plt.subplots(**{"layout": "constrained", **subplots})
    return ax, ax.figure


def fitted_decoder(estimator, display, attribute=None):
    """The fitted decoder of ``estimator`` (a classifier's ``decoder_``, or a decoder
    itself): a ConvexDecoder, or any decoder that has ``attribute`` when given."""
    check_is_fitted(estimator)
    decoder = getattr(estimator, "decoder_", estimator)
    if attribute is not None and not hasattr(decoder, attribute):
        raise TypeError(
            f"{display} needs a fitted decoder with {attribute} (ConvexDecoder, for one) or "
            f"a classifier whose decoder has it; {type(decoder).__name__} has no {attribute}."
        )
    if attribute is None and not isinstance(decoder, ConvexDecoder):
        raise TypeError(
            f"{display} needs a fitted ConvexDecoder or a classifier whose decoder is one; "
            f"got {type(decoder).__name__}."
        )
    return decoder


def positive(values):
    """``values`` as floats with the entries a log scale cannot show set to NaN."""
    values = np.asarray(values, dtype=np.float64)
    return np.where(values > 0, values, np.nan)
