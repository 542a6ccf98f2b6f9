"""The convex aggregation model: the class discrepancy, the objectives, the penalty.

The model of the paper (Park, Hwang & Choi, SDM 2014): class probabilities
``softmax(-rho)`` with ``rho[i, k] = sum_l w_l d(C[k, l], Q[i, l]) (+ b_k)``,
its weights fitted by penalised maximum likelihood. This package owns the
mathematics; :mod:`convexagg.solvers` owns the algorithms and sees an
objective only through the contract of :class:`convexagg.solvers.Objective`.

* :mod:`~convexagg.aggregation.discrepancy` -- the one ``rho`` kernel
  (:func:`discrepancies`, :func:`output_discrepancies`) and its adjoint;
* :class:`Penalty` -- L2 / L1 / elastic net on ``w >= 0`` (and the
  intercepts' quadratic term), one object for every objective: a sum of the
  terms of :mod:`~convexagg.aggregation.penalty_terms`;
* the likelihood (eq. 12) in three storages: :class:`DenseObjective` (the
  textbook form, the reference), :class:`BlockedObjective` (stored by class,
  ``O(n nnz)`` per product, float64 or float32: what the decoder fits with),
  :class:`RecomputedObjective` (the same, its losses recomputed from ``Q`` on
  every pass: for data whose losses do not fit in memory),
  :class:`~convexagg.aggregation.distributed.DaskObjective` (row blocks of a
  Dask array, one pass per evaluation; imported on use);
* entry weights, one per nonzero code entry (:mod:`~convexagg.aggregation.entries`):
  the same objectives on an expanded code;
* the section-4 objectives: :class:`StiffnessObjective` (eq. 30) and
  :class:`LargeMarginObjective` (eq. 27);
Every objective offers what :class:`convexagg.solvers.Objective` declares, the
contract the solvers rely on.
"""

from .blocked import BlockedObjective
from .class_blocks import reencode
from .dense import DenseObjective, check_sample_weight
from .discrepancy import (
    discrepancies,
    output_discrepancies,
    pullback,
    side_indicators,
    side_weights,
    softmax_classes,
    stack_losses,
)
from .entries import (
    code_entries,
    entry_matrix,
    expand_code,
    model_entries,
    side_entry_weights,
    zero_entries,
    zero_entry_sides,
)
from .margin import LargeMarginObjective, StiffnessObjective
from .penalty import MAX_ALPHA, PENALTIES, Penalty
from .penalty_terms import L1, ColumnRidge, EntryShrinkage, InterceptRidge, PenaltyTerm, Ridge
from .point import Point
from .recomputed import RecomputedObjective, losses_fit_in_memory

__all__ = [
    "MAX_ALPHA",
    "PENALTIES",
    "BlockedObjective",
    "ColumnRidge",
    "DenseObjective",
    "EntryShrinkage",
    "InterceptRidge",
    "L1",
    "LargeMarginObjective",
    "Penalty",
    "PenaltyTerm",
    "Point",
    "RecomputedObjective",
    "Ridge",
    "StiffnessObjective",
    "check_sample_weight",
    "code_entries",
    "discrepancies",
    "losses_fit_in_memory",
    "entry_matrix",
    "expand_code",
    "model_entries",
    "output_discrepancies",
    "pullback",
    "reencode",
    "side_indicators",
    "side_entry_weights",
    "side_weights",
    "softmax_classes",
    "stack_losses",
    "zero_entries",
    "zero_entry_sides",
]
