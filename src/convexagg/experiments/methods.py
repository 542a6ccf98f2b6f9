"""Registry of the methods an experiment can compare, by name.

*Aggregation methods* are decoders (``fit(Q, y, code, output)`` /
``predict_proba(Q)``) applied to the **same** binary outputs of a split; a factory
takes a :class:`MethodContext` (data set, base learner, sizes) so that the paper's
per-data-set settings live here and nowhere else. *Direct methods* are multiclass
learners fitted on the split itself (:mod:`convexagg.experiments.direct`).

The paper's names: ``loss_based`` (Allwein et al.'s loss-based decoding, made
probabilistic), ``gbtm`` (Huang et al.'s generalized Bradley-Terry model, uniform
weights), ``wmap`` (Yukinawa et al.; weights learned on the small gene-expression
sets, fixed ``N_j / sum N_j`` elsewhere), ``convex`` (the paper's method).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..decoders import ConvexDecoder
from .direct import DIRECT_METHODS

__all__ = [
    "AGGREGATION_METHODS",
    "DEFAULT_METHODS",
    "DIRECT_METHODS",
    "MethodContext",
    "available_methods",
    "make_decoder",
]

# Data sets small enough for WMAP's learned weights (the paper: GCM and ALL only).
WMAP_LEARNED = {"gcm", "all_leukemia", "all_leukemia_galgo"}


@dataclass(frozen=True)
class MethodContext:
    dataset: str
    base: str
    n_classes: int
    n_classifiers: int
    alpha: float = 1e-4


class _EqualWeightsExponential(ConvexDecoder):
    """Loss-based decoding as the paper defines it (section 5.1, eq. 6): every weight
    ``1/M``, the exponential discrepancy ``exp(-c (q - 1/2))``, and ``exp(0) = 1`` for
    a don't-care entry (``c = 0``) -- unlike the convex model, whose discrepancies
    are 0 there; it matters for sparse codes, whose codewords differ in their number
    of zeros.

    Only used while :class:`convexagg.decoders.LossBasedDecoder` is not available.
    """

    def __init__(self):
        super().__init__(loss="exponential")

    def fit(self, Q, y, code, output="proba"):
        self._validate_fit(Q, y, code, output)
        self.weights_ = np.full(self.code_.shape[1], 1.0 / self.code_.shape[1])
        self.n_iter_ = 0
        return self

    def decision_function(self, Q):
        dont_care = (self.code_ == 0).sum(axis=1) / self.code_.shape[1]
        return super().decision_function(Q) - dont_care[None, :]


def _loss_based(ctx):
    try:
        from ..decoders import LossBasedDecoder
    except ImportError:
        return _EqualWeightsExponential()
    return LossBasedDecoder()


def _gbtm(ctx):
    from ..decoders import BradleyTerryDecoder

    return BradleyTerryDecoder()


def _wmap(ctx):
    from ..decoders import WMAPDecoder

    if ctx.dataset in WMAP_LEARNED:
        return WMAPDecoder(learn_weights=True)
    return WMAPDecoder()


def _convex(ctx):
    return ConvexDecoder(alpha=ctx.alpha)


def _hamming(ctx):
    from ..decoders import HammingDecoder

    return HammingDecoder()


def _pairwise_coupling(ctx):
    from ..decoders import PairwiseCouplingDecoder

    return PairwiseCouplingDecoder()


AGGREGATION_METHODS = {
    "loss_based": _loss_based,
    "gbtm": _gbtm,
    "wmap": _wmap,
    "convex": _convex,
    "hamming": _hamming,
    "pairwise_coupling": _pairwise_coupling,
}

# The paper's comparison (section 5.3), in its column order.
DEFAULT_METHODS = ("msvm", "lmr", "loss_based", "gbtm", "wmap", "convex")


def make_decoder(name, ctx):
    """A fresh decoder for aggregation method ``name``."""
    return AGGREGATION_METHODS[name](ctx)


def available_methods():
    """Names whose implementation can be imported now."""
    names = list(DIRECT_METHODS)
    ctx = MethodContext("probe", "logreg", 3, 3)
    for name in AGGREGATION_METHODS:
        try:
            make_decoder(name, ctx)
        except ImportError:
            continue
        names.append(name)
    return names
