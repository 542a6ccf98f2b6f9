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

from ..decoders import (
    BradleyTerryDecoder,
    ConvexDecoder,
    HammingDecoder,
    LossBasedDecoder,
    PairwiseCouplingDecoder,
    WMAPDecoder,
)
from .direct import DIRECT_METHODS
from .protocol import PAPER_SOLVER

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


def _loss_based(ctx):
    # exp(-c (q - 1/2)) averaged over all M columns, exp(0) = 1 for a don't-care entry
    return LossBasedDecoder(loss="exponential", dont_care="loss_at_zero", average=True)


def _gbtm(ctx):
    return BradleyTerryDecoder(weights="uniform")  # the paper: WMAP with uniform weights


def _wmap(ctx):
    if ctx.dataset in WMAP_LEARNED:
        return WMAPDecoder(weights="learned")
    return WMAPDecoder(weights="n_samples")  # fixed N_j / sum N_j, as the paper did


def _convex(ctx):
    return ConvexDecoder(alpha=ctx.alpha, solver=PAPER_SOLVER)


def _hamming(ctx):
    return HammingDecoder()


def _pairwise_coupling(ctx):
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
    """Every method name: the direct ones, then the aggregation ones."""
    return [*DIRECT_METHODS, *AGGREGATION_METHODS]
