"""Checks of binary classifiers' outputs: finite, and probabilities in ``[0, 1]``.

A binary classifier that returns NaN or infinite values, or probabilities outside
``[0, 1]``, is named in a ``ValueError`` instead of corrupting the aggregation.
"""

from __future__ import annotations

import numpy as np

__all__ = ["check_outputs", "check_ranges"]


def check_outputs(values, estimators, output, indices):
    """Raise for the first column of ``values`` that is not finite (or, for
    probabilities, outside ``[0, 1]``), naming its binary classifier."""
    lo, hi = values.min(axis=0, initial=0.0), values.max(axis=0, initial=0.0)
    check_ranges(lo, hi, estimators, output, indices)


def check_ranges(lo, hi, estimators, output, indices):
    """:func:`check_outputs` on the columns' minima ``lo`` and maxima ``hi`` (NumPy)."""
    bad = np.flatnonzero(~(np.isfinite(lo) & np.isfinite(hi)))
    if bad.size:
        j = bad[0]
        raise ValueError(
            f"binary classifier {indices[j]} ({type(estimators[j]).__name__}) returned NaN "
            "or infinite outputs; convexagg needs finite probabilities or margins."
        )
    bad = np.flatnonzero((lo < 0.0) | (hi > 1.0)) if output == "proba" else []
    if len(bad):
        j = bad[0]
        raise ValueError(
            f"binary classifier {indices[j]} ({type(estimators[j]).__name__}) returned "
            f"probabilities outside [0, 1] (min {float(lo[j])!r}, max {float(hi[j])!r})."
        )
