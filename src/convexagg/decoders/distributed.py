"""The convex decoder on Dask arrays: validation and the out-of-core objective.

:class:`~convexagg.decoders.ConvexDecoder` calls :func:`likelihood_on_dask` when
its ``Q``, ``y`` or ``sample_weight`` is a Dask array: what can be checked
without the data is checked here, the rest inside the objective's passes
(:class:`~convexagg.aggregation.distributed.DaskObjective`, one pass over the row
blocks per evaluation), so a bad block raises inside the solve, before the
decoder sets anything.
"""

from __future__ import annotations

import numpy as np

from .._dask import aligned_labels, import_dask_array, is_dask_array
from ..codes import check_code_matrix
from ..losses import OUTPUT_KINDS, check_loss
from ..solvers import ProjectedNewton

__all__ = ["likelihood_on_dask"]


def likelihood_on_dask(decoder, Q, y, code, output, sample_weight, config):
    """The likelihood objective of ``decoder``'s model on Dask arrays, and the code.

    Parameters
    ----------
    decoder : ConvexDecoder
        The decoder (its loss, penalty, intercepts and entry weights).
    Q : dask.array.Array or array-like of shape (n_samples, n_classifiers)
        Binary outputs; in memory, split like the Dask ``y`` or ``sample_weight``.
    y : dask.array.Array or array-like of shape (n_samples,)
        Integer class indices, rechunked (or split) to the row chunks of ``Q``.
    code : array-like of shape (n_classes, n_classifiers)
        The code matrix.
    output : {"proba", "margin"}
        What ``Q`` holds.
    sample_weight : dask.array.Array or array-like of shape (n_samples,) or None
        Weights of the samples.
    config : SolverConfig
        The resolved solver configuration (its storage precision; the projected
        Newton method takes its Hessian from a sample of rows).

    Returns
    -------
    objective : DaskObjective
        The objective, ready for the solver.
    code : ndarray of shape (n_classes, n_classifiers)
        The validated code matrix.
    """
    from ..aggregation.distributed import HESSIAN_ROWS, DaskObjective

    da = import_dask_array()
    if decoder.formulation != "likelihood":
        raise ValueError(
            "Dask arrays are fitted with formulation='likelihood' only; got "
            f"formulation={decoder.formulation!r}."
        )
    code = check_code_matrix(code)
    if output not in OUTPUT_KINDS:
        raise ValueError(f"output must be one of {OUTPUT_KINDS}, got {output!r}.")
    check_loss(decoder.loss, output)
    if not is_dask_array(Q):  # a Dask y with in-memory Q: split Q like y
        Q = np.asarray(Q)
        if Q.ndim != 2:
            raise ValueError(f"Q must be 2-D (n_samples, n_classifiers), got shape {Q.shape}.")
        chunks = y.chunks[0] if is_dask_array(y) else sample_weight.chunks[0]
        y = aligned_labels(y, chunks, Q.shape[0])
        Q = da.from_array(Q, chunks=(y.chunks[0], -1))
    if not (np.issubdtype(Q.dtype, np.floating) or np.issubdtype(Q.dtype, np.integer)):
        raise ValueError(f"Q must be numeric, got dtype {Q.dtype}.")
    if Q.shape[1] != code.shape[1]:
        raise ValueError(
            f"Q has {Q.shape[1]} columns but the code matrix has {code.shape[1]} "
            "classifiers (columns); they must match."
        )
    Q_model, model_code = decoder._expand(Q, code)
    objective = DaskObjective(
        Q_model,
        y,
        model_code,
        decoder.penalty_for(code=code),
        loss=decoder.loss,
        output=output,
        dtype=config.storage_dtype(None),
        fit_intercept=decoder.fit_intercept,
        sample_weight=sample_weight,
        # projected Newton only needs a descent direction: its Hessian from a
        # sample; the interior point's residual steps need the exact one
        hessian_rows=HESSIAN_ROWS if isinstance(config, ProjectedNewton) else None,
    )
    return objective, code
