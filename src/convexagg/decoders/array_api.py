"""The convex decoder on array-API inputs: validation, the objective and the decode.

:class:`~convexagg.decoders.ConvexDecoder` calls these when
:func:`convexagg._array_api.array_namespace` says its ``Q`` takes the array-API
path (``array_api_dispatch=True`` and a PyTorch, CuPy, ... array): the inputs
are checked on their device with the NumPy path's messages, the losses and the
decode stay there (:mod:`convexagg.aggregation.array_api`), and the fitted
attributes are NumPy arrays on the host, as the solver leaves them.
"""

from __future__ import annotations

import numpy as np

from .._array_api import check_array_api_settings
from ..aggregation import code_entries, expand_code
from ..aggregation.array_api import (
    ArrayAPIObjective,
    array_api_discrepancies,
    array_api_losses,
)
from ..codes import check_code_matrix
from ..losses import OUTPUT_KINDS, check_output_range
from ..validation import check_fitted_columns

__all__ = ["check_outputs", "decision_on_device", "likelihood_on_device", "softmax_on_device"]


def check_outputs(Q, output, namespace, n_columns=None):
    """``Q`` of ``namespace`` validated as :func:`convexagg.losses.check_binary_outputs` does.

    Parameters
    ----------
    Q : array of shape (n_samples, n_classifiers)
        Binary outputs on the device.
    output : {"proba", "margin"}
        What ``Q`` holds.
    namespace : Namespace
        ``Q``'s namespace and device.
    n_columns : int, default=None
        The number of columns ``Q`` must have (a fitted decoder's classifiers).

    Returns
    -------
    Q : array
        Floating (float32 kept, other dtypes become the device's widest float).
    """
    xp = namespace.xp
    if output not in OUTPUT_KINDS:
        raise ValueError(f"output must be one of {OUTPUT_KINDS}, got {output!r}.")
    if not xp.isdtype(Q.dtype, "real floating"):
        if not xp.isdtype(Q.dtype, ("integral", "bool")):
            raise ValueError(f"Q must be numeric, got dtype {Q.dtype}.")
        Q = xp.astype(Q, namespace.float_dtype(np.float64))
    if Q.ndim != 2:
        raise ValueError(f"Q must be 2-D (n_samples, n_classifiers), got shape {tuple(Q.shape)}.")
    if n_columns is not None:
        check_fitted_columns(Q, n_columns)
    if Q.shape[0] == 0:
        return Q
    lo, hi = float(xp.min(Q)), float(xp.max(Q))
    check_output_range(lo, hi, output, all_finite=bool(xp.all(xp.isfinite(Q))))
    return Q


def _check_labels(y, n_samples, n_classes, namespace):
    """``y`` (either namespace) checked as :func:`~convexagg.decoders.base.check_fit_inputs`
    does, returned on the device."""
    xp = namespace.xp
    host = isinstance(y, np.ndarray) or not hasattr(y, "__array_namespace__")
    if host:
        y = np.asarray(y)
        integral = np.issubdtype(y.dtype, np.integer)
    else:
        integral = xp.isdtype(y.dtype, "integral")
    shape = tuple(y.shape)
    if len(shape) != 1 or shape[0] != n_samples:
        raise ValueError(
            f"y must be 1-D with one label per row of Q ({n_samples}), got shape {shape}."
        )
    lo, hi = (int(y.min()), int(y.max())) if host and integral else (None, None)
    if integral and not host:
        lo, hi = int(xp.min(y)), int(xp.max(y))
    if not integral or lo < 0 or hi >= n_classes:
        raise ValueError(
            "y must hold integer class indices in 0..n_classes-1 "
            f"(n_classes={n_classes} rows of the code)."
        )
    return namespace.to_device(y) if host else y


def _check_weights(sample_weight, n_samples, namespace):
    """Sample weights on the device, checked as
    :func:`~convexagg.aggregation.check_sample_weight` checks them."""
    if sample_weight is None:
        return None
    xp = namespace.xp
    if isinstance(sample_weight, np.ndarray) or not hasattr(sample_weight, "__array_namespace__"):
        sample_weight = namespace.to_device(np.asarray(sample_weight, dtype=np.float64))
    s = xp.astype(sample_weight, namespace.float_dtype(np.float64))
    if tuple(s.shape) != (n_samples,):
        raise ValueError(
            f"sample_weight must have shape ({n_samples},), one weight per sample; "
            f"got shape {tuple(s.shape)}."
        )
    if not bool(xp.all(xp.isfinite(s))) or float(xp.min(s)) < 0:
        raise ValueError("sample_weight must be finite and >= 0.")
    if not float(xp.max(s)) > 0:
        raise ValueError("sample_weight sums to 0; at least one sample needs a positive weight.")
    return s


def likelihood_on_device(decoder, Q, y, code, output, sample_weight, config, namespace):
    """The likelihood objective of ``decoder``'s model with its samples on the device.

    Parameters
    ----------
    decoder : ConvexDecoder
        The decoder being fitted (its loss, penalty, intercepts, entry weights).
    Q : array of shape (n_samples, n_classifiers)
        Binary outputs of ``namespace``.
    y : array-like of shape (n_samples,)
        Integer class indices (NumPy or ``namespace``).
    code : array-like of shape (n_classes, n_classifiers)
        The code matrix.
    output : {"proba", "margin"}
        What ``Q`` holds.
    sample_weight : array-like of shape (n_samples,) or None
        Weights of the samples (NumPy or ``namespace``).
    config : SolverConfig
        The solver (its storage precision).
    namespace : Namespace
        Where ``Q`` lives.

    Returns
    -------
    objective : ArrayAPIObjective
        The objective (variables: entry weights with ``entry_weight_shrinkage``).
    code : ndarray of shape (n_classes, n_classifiers)
        The validated code matrix.
    """
    check_array_api_settings(
        decoder.formulation, y, sample_weight, zero_entries=decoder._zero_entries()
    )
    code = check_code_matrix(code)
    Q = check_outputs(Q, output, namespace)
    if Q.shape[0] == 0:
        raise ValueError("Q has 0 rows (samples); at least one is needed to fit a decoder.")
    if Q.shape[1] != code.shape[1]:
        raise ValueError(
            f"Q has {Q.shape[1]} columns but the code matrix has {code.shape[1]} "
            "classifiers (columns); they must match."
        )
    n = int(Q.shape[0])
    y = _check_labels(y, n, code.shape[0], namespace)
    sample_weight = _check_weights(sample_weight, n, namespace)
    penalty = decoder.penalty_for(code=code)
    model_code = code
    if penalty.entry_weights:  # one column per nonzero code entry
        index = namespace.xp.asarray(code_entries(code)[1], device=namespace.device)
        Q, model_code = namespace.xp.take(Q, index, axis=1), expand_code(code)
    dtype = namespace.float_dtype(config.storage_dtype(2 * n * int(Q.shape[1])))
    L = array_api_losses(Q, decoder.loss, output, namespace.xp, dtype)
    objective = ArrayAPIObjective(
        L,
        model_code,
        y,
        penalty,
        namespace=namespace,
        fit_intercept=decoder.fit_intercept,
        sample_weight=sample_weight,
    )
    return objective, code


def decision_on_device(decoder, Q, namespace):
    """``-rho`` of a fitted ``decoder`` for ``Q`` of ``namespace``, on its device.

    Parameters
    ----------
    decoder : ConvexDecoder
        Fitted.
    Q : array of shape (n_samples, n_classifiers)
        Binary outputs of the kind the decoder was fitted on.
    namespace : Namespace
        Where ``Q`` lives.

    Returns
    -------
    scores : array of shape (n_samples, n_classes)
        Of ``namespace``, float64 where the device has it (float32 otherwise),
        the losses and the product in the precision the NumPy decode uses.
    """
    check_array_api_settings(
        decoder.formulation, zero_entries=getattr(decoder, "_fitted_zero", False)
    )
    Q = check_outputs(Q, decoder.output_, namespace, decoder.code_.shape[1])
    rho = array_api_discrepancies(
        Q,
        decoder.code_,
        decoder.entry_weights_,  # weights_ in every nonzero entry without entry weights
        decoder.intercept_ if decoder.fit_intercept else None,
        loss=decoder.loss,
        output=decoder.output_,
        namespace=namespace,
        dtype=namespace.float_dtype(decoder.solver_.storage_dtype(None)),
    )
    return -namespace.xp.astype(rho, namespace.float_dtype(np.float64))


def softmax_on_device(scores, namespace, log=False):
    """``softmax`` (or ``log_softmax``) of each row of ``scores``, on their device.

    Parameters
    ----------
    scores : array of shape (n_samples, n_classes)
        Of ``namespace``.
    namespace : Namespace
        Where ``scores`` live.
    log : bool, default=False
        Return the log-probabilities (finite where the probabilities underflow).

    Returns
    -------
    proba : array of shape (n_samples, n_classes)
        Rows sum to 1 (or their exponentials do).
    """
    xp = namespace.xp
    shifted = scores - xp.max(scores, axis=1, keepdims=True)
    if log:
        return shifted - xp.log(xp.sum(xp.exp(shifted), axis=1, keepdims=True))
    e = xp.exp(shifted)
    return e / xp.sum(e, axis=1, keepdims=True)
