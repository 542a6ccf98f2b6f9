"""The paper's data-dependent generalization bound (Proposition 2, section 4).

For aggregation weights ``w >= 0`` with ``|w|_2 <= B``, with probability at least
``1 - epsilon`` over the ``N`` training samples::

    P(y != y_hat) <= (1/N) sum_i phi(nu_i)                                  empirical
                     + (2B/N) sqrt(sum_i min_{k != y_i} |varphi_i^{k, y_i}|^2)  Rademacher
                     + sqrt(9 log(2/epsilon) / (2N))                          confidence

with the margin ``nu_i = min_{k != y_i} rho[i, k] - rho[i, y_i]`` (the paper's
``eq:margin``), the ramp loss ``phi(z) = min(1, max(0, 1 - z))`` and the discrepancy
differences ``varphi_i^{k, y} = D[i, y, :] - D[i, k, :]`` (``eq:varphi``; ``D[i, k, l] =
d(C[k, l], Q[i, l])``, 0 for don't-care entries).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from sklearn.utils.validation import check_is_fitted

from .aggregation import discrepancies, side_weights, stack_losses
from .losses import binary_losses, check_binary_outputs
from .validation import check_class_indices, check_columns_match_code

__all__ = [
    "GeneralizationBound",
    "generalization_bound",
    "margin_bound",
    "margins",
    "min_discrepancy_difference_norms",
    "ramp_loss",
]


@dataclass(frozen=True)
class GeneralizationBound:
    """The three terms of Proposition 2 and their sum.

    Attributes
    ----------
    empirical : float
        Mean ramp loss of the training margins, ``(1/N) sum_i phi(nu_i)``.
    rademacher : float
        ``(2B/N) sqrt(sum_i min_{k != y_i} |varphi_i^{k, y_i}|^2)``: twice the
        paper's bound on the empirical Rademacher complexity (the last display
        of its proof, ``eq:emp_Rademacher_com``).
    confidence : float
        ``sqrt(9 log(2/epsilon) / (2N))``.
    B : float
        The norm bound used.
    epsilon : float
    n_samples : int
    """

    empirical: float
    rademacher: float
    confidence: float
    B: float
    epsilon: float
    n_samples: int

    @property
    def total(self):
        """The bound on the misclassification probability ``P(y != y_hat)``."""
        return self.empirical + self.rademacher + self.confidence


def ramp_loss(z):
    """Compute ``phi(z) = min(1, max(0, 1 - z))``: the clipped hinge loss of Proposition 2.

    Parameters
    ----------
    z : array-like
        Margins.

    Returns
    -------
    loss : ndarray
        ``phi(z)``, in ``[0, 1]``.
    """
    return np.clip(1.0 - np.asarray(z, dtype=np.float64), 0.0, 1.0)


def margins(L, code, y, w):
    """``nu_i = min_{k != y_i} rho[i, k] - rho[i, y_i]`` (the paper's ``eq:margin``).

    Positive exactly when sample ``i`` is classified correctly with no tie.

    Parameters
    ----------
    L : ndarray of shape (n_samples, 2M)
        Stacked losses ``[L_pos, L_neg]``.
    code : ndarray of shape (n_classes, M)
        The code matrix.
    y : ndarray of shape (n_samples,)
        Integer class indices.
    w : ndarray of shape (M,)
        Aggregation weights.

    Returns
    -------
    nu : ndarray of shape (n_samples,)
        The margins.
    """
    y = np.asarray(y, dtype=np.intp)
    rows = np.arange(y.size)
    rho = discrepancies(L, side_weights(code, w))
    rho_y = rho[rows, y].copy()
    rho[rows, y] = np.inf
    return rho.min(axis=1) - rho_y


def min_discrepancy_difference_norms(L, code, y):
    """``min_{k != y_i} |varphi_i^{k, y_i}|_2^2`` for every sample, shape ``(n_samples,)``.

    ``varphi_i^{k, y} = D_i[y] - D_i[k]`` with ``D_i[k] = L_pos[i] [C_k = +1] +
    L_neg[i] [C_k = -1]``; computed one class at a time (``n x M`` temporaries,
    no ``n x K x M`` tensor).

    Parameters
    ----------
    L : ndarray of shape (n_samples, 2M)
        Stacked losses ``[L_pos, L_neg]``.
    code : ndarray of shape (n_classes, M)
        The code matrix.
    y : ndarray of shape (n_samples,)
        Integer class indices.

    Returns
    -------
    norms : ndarray of shape (n_samples,)
        The smallest squared norm for every sample.
    """
    code = np.asarray(code)
    y = np.asarray(y, dtype=np.intp)
    M = code.shape[1]
    Lp, Ln = L[:, :M], L[:, M:]
    pos, neg = (code == 1).astype(np.float64), (code == -1).astype(np.float64)
    D_y = Lp * pos[y] + Ln * neg[y]
    best = np.full(y.size, np.inf)
    for k in range(code.shape[0]):
        sq = np.sum((D_y - (Lp * pos[k] + Ln * neg[k])) ** 2, axis=1)
        sq[y == k] = np.inf
        np.minimum(best, sq, out=best)
    return best


def margin_bound(L, code, y, w, *, B=None, epsilon=0.05):
    """Proposition 2 for weights ``w`` on stacked losses ``L``; see :func:`generalization_bound`.

    Parameters
    ----------
    L : ndarray of shape (n_samples, 2M)
        Stacked losses ``[L_pos, L_neg]`` of the training outputs.
    code : ndarray of shape (n_classes, M)
        The code matrix.
    y : ndarray of shape (n_samples,)
        Integer class indices.
    w : ndarray of shape (M,)
        Aggregation weights.
    B : float, default=None
        Bound on ``|w|_2``; ``|w|_2`` when None.
    epsilon : float, default=0.05
        The bound holds with probability ``>= 1 - epsilon``.

    Returns
    -------
    bound : GeneralizationBound
        Its three terms and their ``total``.
    """
    if not 0 < epsilon < 1:
        raise ValueError(f"epsilon must be in (0, 1), got {epsilon!r}.")
    w = np.asarray(w, dtype=np.float64)
    n = L.shape[0]
    B = float(np.linalg.norm(w)) if B is None else float(B)
    if B < 0:
        raise ValueError(f"B must be >= 0, got {B!r}.")
    empirical = float(np.mean(ramp_loss(margins(L, code, y, w))))
    rademacher = 2.0 * B / n * float(np.sqrt(np.sum(min_discrepancy_difference_norms(L, code, y))))
    confidence = float(np.sqrt(9.0 * np.log(2.0 / epsilon) / (2.0 * n)))
    return GeneralizationBound(
        empirical=empirical,
        rademacher=rademacher,
        confidence=confidence,
        B=B,
        epsilon=float(epsilon),
        n_samples=n,
    )


def generalization_bound(decoder, Q, y, *, B=None, epsilon=0.05):
    """The data-dependent bound of the paper's Proposition 2 for a fitted decoder.

    Computed on the training data ``(Q, y)`` the weights were fitted on, with
    the decoder's weights and loss::

        empirical  = (1/N) sum_i phi(nu_i),   phi(z) = min(1, max(0, 1 - z))
        rademacher = (2B/N) sqrt(sum_i min_{k != y_i} |varphi_i^{k, y_i}|_2^2)
        confidence = sqrt(9 log(2/epsilon) / (2N))

    How to read it. The ramp loss asks for margins of 1 in the units of ``rho``
    while the Rademacher term grows with ``B``: the bound is informative for
    weights on the large-margin scale (``formulation="large_margin"`` or
    ``"stiffness"``), and it is often above 1 (vacuous) for small ``N``. Two
    caveats the paper does not state: (i) the bound holds for a ``B`` fixed
    before seeing the data, so with the default ``B = |w|_2`` of the fitted
    weights it is, strictly, an optimistic reading (a union bound over a grid of
    ``B`` would add a ``log log B`` term, Bartlett & Mendelson 2002); (ii) its
    Rademacher term takes, for each sample, the *smallest*
    ``|varphi_i^{k, y_i}|`` over ``k != y_i``, following the paper's proof
    (``eq:emp_Rademacher_com``), which replaces the ``w``-dependent nearest
    class by the nearest-norm one; it is reported as the paper states it.

    Parameters
    ----------
    decoder : fitted decoder with ``weights_``, ``code_``, ``loss`` and ``output_``
        E.g. a fitted :class:`~convexagg.decoders.ConvexDecoder`, or
        ``clf.decoder_`` of a fitted :class:`~convexagg.ConvexAggregationClassifier`
        (then ``Q = clf.predict_binary_proba(X)`` and ``y`` the positions of the
        labels in ``clf.classes_``).
    Q : array-like of shape (n_samples, n_classifiers)
        Training binary outputs.
    y : array-like of shape (n_samples,)
        Integer class indices.
    B : float, default=None
        Bound on ``|w|_2``; the fitted ``|weights_|_2`` when None.
    epsilon : float, default=0.05
        The bound holds with probability ``>= 1 - epsilon``.

    Returns
    -------
    GeneralizationBound
        ``empirical``, ``rademacher``, ``confidence`` and their ``total``.
    """
    check_is_fitted(decoder, "weights_")
    if np.any(getattr(decoder, "intercept_", 0.0) != 0):
        raise ValueError(
            "generalization_bound: Proposition 2 is stated for the paper's model, without "
            "class intercepts; this decoder was fitted with fit_intercept=True."
        )
    code = decoder.code_
    if np.any(getattr(decoder, "zero_entry_weights_", 0.0) != 0):
        raise ValueError(
            "generalization_bound: Proposition 2 is stated for the paper's model; this "
            "decoder was fitted with zero_entry_penalty: fit with zero_entry_penalty=None."
        )
    entry = getattr(decoder, "entry_weights_", None)
    if entry is not None and not np.array_equal(entry, (code != 0) * decoder.weights_):
        raise ValueError(
            "generalization_bound: Proposition 2 is stated for the paper's model, one weight "
            "per classifier; this decoder was fitted with entry_weight_shrinkage (as "
            "ConvexAggregationClassifier's default is): fit with entry_weight_shrinkage=None."
        )
    Q = check_binary_outputs(Q, decoder.output_)
    y = np.asarray(y)
    check_columns_match_code(Q, code)
    if y.shape != (Q.shape[0],):
        raise ValueError(f"y must have one label per row of Q ({Q.shape[0]}); got shape {y.shape}.")
    check_class_indices(y, code.shape[0])
    L = stack_losses(*binary_losses(Q, decoder.loss, decoder.output_))
    return margin_bound(L, code, y, decoder.weights_, B=B, epsilon=epsilon)
