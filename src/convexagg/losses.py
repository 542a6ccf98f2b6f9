"""Per-classifier discrepancies ``d(c, q)`` between a code entry and a binary output.

The paper's discrepancy of class ``k`` is ``rho_k = sum_l w_l d(C[k, l], Q[:, l])``.
Everything downstream only needs the two matrices

* ``L_pos = d(+1, Q)`` -- the loss if the sample's class is on the positive side,
* ``L_neg = d(-1, Q)`` -- the loss if it is on the negative side,

each of shape ``(n_samples, n_classifiers)``; a don't-care entry (``C = 0``)
contributes 0, which the decoders get by multiplying with the indicator matrices
``code == +1`` and ``code == -1``.

Binary outputs come in two kinds:

* ``"proba"``: ``Q`` is the probability of the positive side, in ``[0, 1]``;
* ``"margin"``: ``Q`` is a real score, positive for the positive side
  (``decision_function`` of a learner without ``predict_proba``).

==================  ==========  =========================================
loss                output      ``d(c, q)`` for ``c = +1 / -1``
==================  ==========  =========================================
``cross_entropy``   proba       ``-log q`` / ``-log(1 - q)`` (paper eq. 5)
``exponential``     proba       ``exp(-c (q - 1/2))`` (paper eq. 6)
``exponential``     margin      ``exp(-c q)`` (Allwein et al.)
``logistic``        margin      ``log(1 + exp(-c q))``
``hinge``           margin      ``max(0, 1 - c q)``
==================  ==========  =========================================

Probability outputs may also be given by their log-odds ``Z = logit(Q)``
(:func:`check_log_odds`; the binaries' decision function, for logistic models):
the cross-entropy losses are then ``log(1 + exp(-z))`` and ``log(1 + exp(z))``,
taken without forming ``Q`` and clipped as those of ``Q`` are
(``ConvexDecoder.predict_proba_from_log_odds``).

Every loss is computed in float64 (float32 outputs are upcast first, so they
give the same losses as the same values in float64) and is finite: probabilities
are clipped into ``[eps, 1 - eps]`` (:func:`clip_proba`, so cross-entropy is at
most ``-log(eps) = 36.04``), and margin losses are capped at
``LOSS_CAP = exp(30)`` (about ``1.07e13``): the exponential loss sees margins
clipped to ``[-30, 30]``, the logistic and hinge losses, which grow linearly,
are capped where they would exceed ``LOSS_CAP``. Without the cap a margin above
709 would overflow ``exp`` to ``inf`` and turn the aggregation into NaN; with it,
sums and squares of losses (the solver's gradient and Hessian) stay far below
the float64 range. Only margins beyond ``+-30`` (exponential) or ``+-1e13``
(logistic, hinge) are affected.
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "LOSSES",
    "LOSS_CAP",
    "OUTPUT_KINDS",
    "binary_losses",
    "check_binary_outputs",
    "check_log_odds",
    "check_loss",
    "clip_proba",
    "cross_entropy_into",
]

OUTPUT_KINDS = ("proba", "margin")

# loss name -> output kinds it is defined for
LOSSES = {
    "cross_entropy": ("proba",),
    "exponential": ("proba", "margin"),
    "logistic": ("margin",),
    "hinge": ("margin",),
}

# Largest value a per-classifier loss takes (see the module docstring).
_LOG_LOSS_CAP = 30.0
LOSS_CAP = float(np.exp(_LOG_LOSS_CAP))


def clip_proba(Q, out=None):
    """Clip probabilities into ``[eps, 1 - eps]`` (``eps`` = machine epsilon of the dtype
    of the result).

    The single place where convexagg moves probabilities away from 0 and 1, so
    that ``-log q`` stays finite (at most ``-log(2.2e-16) = 36`` in float64).

    Parameters
    ----------
    Q : ndarray
        Probabilities.
    out : ndarray, default=None
        Where to write (``Q`` itself for in place); a new array by default.

    Returns
    -------
    clipped : ndarray
        ``Q`` clipped, in ``out`` when given.
    """
    eps = np.finfo((Q if out is None else out).dtype).eps
    return np.clip(Q, eps, 1.0 - eps, out=out)


def cross_entropy_into(q, out, work=None):
    """Both cross-entropy losses of the probabilities ``q``, written into ``out``.

    ``out[0] = -log q`` and ``out[1] = -log(1 - q)``, ``out`` of shape
    ``(2,) + q.shape``. ``work``: a float64 array of ``q``'s shape for the clipped
    ``q`` and ``1 - q`` (``q`` is then only read); without it ``q`` must be float64
    and is overwritten. ``q`` is clipped as :func:`clip_proba` in float64; ``1 - q``
    is formed in float64 and its log taken directly (absolute error below 3e-16;
    ``log1p`` costs twice as much). A float32 ``out`` gets the logs of the float64
    ``q`` and ``1 - q`` rounded to float32, taken in single precision: numpy
    vectorises float32 ``log`` but not float64's on AVX2 machines; the
    absolute error, below 1.2e-7, stays under the rounding of the float32 losses
    themselves once they exceed 2.

    The fast paths (:class:`~convexagg.aggregation.BlockedObjective`, the convex
    decoder's ``predict_proba``) call it on cache-sized chunks with preallocated
    buffers; :func:`binary_losses` on the whole array.

    Parameters
    ----------
    q : ndarray
        Probabilities of the positive side.
    out : ndarray of shape ``(2,) + q.shape``
        Receives ``-log q`` and ``-log(1 - q)``; float64 or float32.
    work : ndarray of q's shape, default=None
        Float64 scratch space; ``q`` itself (float64, overwritten) when None.

    Returns
    -------
    out : ndarray of shape ``(2,) + q.shape``
        The array ``out``, filled.
    """
    work = clip_proba(q, out=q if work is None else work)
    out[0] = work
    np.subtract(1.0, work, out=work)
    out[1] = work
    np.log(out, out=out)
    np.negative(out, out=out)
    return out


def check_binary_outputs(Q, output="proba"):
    """Validate binary outputs ``Q``: finite, and inside ``[0, 1]`` for probabilities.

    Parameters
    ----------
    Q : array-like of shape (n_samples, n_classifiers)
        Binary outputs.
    output : {"proba", "margin"}, default="proba"
        What ``Q`` holds: probabilities of the positive side or real margins.

    Returns
    -------
    Q : ndarray of shape (n_samples, n_classifiers)
        ``Q`` as a floating array (float32 is kept, anything else becomes float64).
    """
    if output not in OUTPUT_KINDS:
        raise ValueError(f"output must be one of {OUTPUT_KINDS}, got {output!r}.")
    Q = _float_matrix(Q, "Q")
    # two passes, no temporary: min and max propagate NaN and are +-inf if any entry is
    check_output_range(Q.min(initial=0.0), Q.max(initial=0.0), output)
    return Q


def _float_matrix(A, name):
    """``A`` as a 2-D floating array (float32 kept, anything else float64), in its
    memory order; errors name it ``name``."""
    A = np.asarray(A)
    if A.dtype not in (np.float32, np.float64):
        try:
            A = A.astype(np.float64)
        except (TypeError, ValueError):
            raise ValueError(f"{name} must be numeric, got dtype {A.dtype}.") from None
    if A.ndim != 2:
        raise ValueError(f"{name} must be 2-D (n_samples, n_classifiers), got shape {A.shape}.")
    return A


def check_log_odds(Z):
    """Validate the log-odds ``Z = logit(Q)`` of probability outputs: no NaN.

    ``+-inf`` are the log-odds of the probabilities 1 and 0, which binary
    outputs may take.

    Parameters
    ----------
    Z : array-like of shape (n_samples, n_classifiers)
        Log-odds of the probabilities of the positive sides.

    Returns
    -------
    Z : ndarray of shape (n_samples, n_classifiers)
        ``Z`` as a floating array (float32 is kept, anything else becomes
        float64), in its memory order.
    """
    Z = _float_matrix(Z, "Z")
    if np.isnan(Z.min(initial=0.0)):  # one pass: min propagates NaN
        raise ValueError("Z contains NaN; log-odds must be numbers (+-inf for 1 and 0).")
    return Z


def check_output_range(lo, hi, output, all_finite=True):
    """Refuse outputs whose extremes are not finite, or outside ``[0, 1]`` for probabilities.

    The values check of :func:`check_binary_outputs` and of the array-API
    decoders, one message for both.

    Parameters
    ----------
    lo, hi : float
        The smallest and largest output.
    output : {"proba", "margin"}
        What the outputs are.
    all_finite : bool, default=True
        False where a namespace's min/max may not propagate NaN and some entry is
        not finite.
    """
    if not (np.isfinite(lo) and np.isfinite(hi) and all_finite):
        raise ValueError("Q contains NaN or infinite values; binary outputs must be finite.")
    if output == "proba" and (lo < 0.0 or hi > 1.0):
        raise ValueError(
            "Q holds probabilities (output='proba') but has values outside [0, 1] "
            f"(min {float(lo)!r}, max {float(hi)!r}); pass output='margin' for scores."
        )


def check_loss(loss, output):
    """Raise a ``ValueError`` unless ``loss`` is known and defined for ``output``.

    Parameters
    ----------
    loss : str
        A loss name, a key of :data:`LOSSES`.
    output : {"proba", "margin"}
        The kind of binary outputs it is applied to.
    """
    if output not in OUTPUT_KINDS:
        raise ValueError(f"output must be one of {OUTPUT_KINDS}, got {output!r}.")
    if loss not in LOSSES:
        raise ValueError(f"loss must be one of {tuple(LOSSES)}, got {loss!r}.")
    if output not in LOSSES[loss]:
        allowed = [name for name, kinds in LOSSES.items() if output in kinds]
        raise ValueError(
            f"loss={loss!r} is not defined for output={output!r} binary outputs; "
            f"use one of {allowed}."
        )


def binary_losses(Q, loss="cross_entropy", output="proba"):
    """Compute the losses of every binary output against both sides.

    Parameters
    ----------
    Q : ndarray of shape (n_samples, n_classifiers)
        Binary outputs, already validated (see :func:`check_binary_outputs`).
    loss : {"cross_entropy", "exponential", "logistic", "hinge"}
        The loss ``d``.
    output : {"proba", "margin"}
        What ``Q`` holds.

    Returns
    -------
    L_pos, L_neg : ndarray of shape (n_samples, n_classifiers)
        ``d(+1, Q)`` and ``d(-1, Q)``; float64, finite, non-negative and at
        most :data:`LOSS_CAP`.
    """
    check_loss(loss, output)
    Q = np.asarray(Q, dtype=np.float64)
    if loss == "cross_entropy":
        losses = cross_entropy_into(Q, np.empty((2,) + Q.shape), work=np.empty(Q.shape))
        return losses[0], losses[1]
    if loss == "exponential":
        m = Q - 0.5 if output == "proba" else np.clip(Q, -_LOG_LOSS_CAP, _LOG_LOSS_CAP)
        return np.exp(-m), np.exp(m)
    if loss == "logistic":
        L_pos, L_neg = np.logaddexp(0.0, -Q), np.logaddexp(0.0, Q)
    else:  # hinge
        L_pos, L_neg = np.maximum(0.0, 1.0 - Q), np.maximum(0.0, 1.0 + Q)
    return np.minimum(L_pos, LOSS_CAP), np.minimum(L_neg, LOSS_CAP)
