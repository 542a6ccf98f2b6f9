"""Regularisation paths of the convex aggregation (the paper's section 5.1, Fig. 3).

The paper chooses its ``lambda`` by looking at the path of the optimal weights
and the training accuracy over a grid of ``lambda`` (its Fig. 3, Vowel data,
sparse random ECOC code). :func:`regularization_path` computes both, and the
accuracy (and log-loss) on a validation set if one is given; the figure itself
is drawn by the experiments (``convexagg figures``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import logsumexp

from .decoders.convex import ConvexDecoder, penalty_strengths
from .losses import check_binary_outputs
from .solvers import ConvexObjective, discrepancies, interior_point, interior_warm_start

__all__ = ["RegularizationPath", "regularization_path"]


@dataclass
class RegularizationPath:
    """Weights and accuracies along a regularisation path.

    Attributes
    ----------
    alphas : ndarray of shape (n_alphas,)
        The regularisation strengths, in **decreasing** order (strongest first,
        as the path was computed; as in scikit-learn's ``lasso_path``).
    weights : ndarray of shape (n_alphas, M)
        The aggregation weights at each ``alpha``.
    train_accuracy : ndarray of shape (n_alphas,)
        Accuracy of ``argmin_k rho`` on the training outputs (the paper's squares
        in Fig. 3).
    val_accuracy : ndarray of shape (n_alphas,) or None
        The same on ``(Q_val, y_val)``; None without validation data.
    n_iter : ndarray of int, shape (n_alphas,)
        Interior point iterations at each ``alpha``.
    converged : ndarray of bool, shape (n_alphas,)
    objective : ndarray of shape (n_alphas,)
        The penalised objective at each solution.
    train_log_loss : ndarray of shape (n_alphas,)
        Mean negative log-likelihood of ``softmax(-rho)`` on the training outputs.
    val_log_loss : ndarray of shape (n_alphas,) or None
        The same on the validation outputs.
    """

    alphas: np.ndarray
    weights: np.ndarray
    train_accuracy: np.ndarray
    val_accuracy: np.ndarray | None
    n_iter: np.ndarray
    converged: np.ndarray
    objective: np.ndarray
    train_log_loss: np.ndarray
    val_log_loss: np.ndarray | None


def _scores(L, ET, y, W):
    """Accuracy and log-loss of every row of ``W`` (weights) on stacked losses ``L``."""
    rows = np.arange(y.size)
    acc, logloss = [], []
    for w in W:
        neg = -discrepancies(L, ET, w)
        acc.append(np.mean(np.argmax(neg, axis=1) == y))
        logloss.append(np.mean(logsumexp(neg, axis=1) - neg[rows, y]))
    return np.asarray(acc), np.asarray(logloss)


def regularization_path(
    Q,
    y,
    code,
    alphas,
    *,
    Q_val=None,
    y_val=None,
    loss="cross_entropy",
    output="proba",
    tol=1e-4,
    penalty="l2",
    l1_ratio=0.5,
    max_iter=100,
    warm_start=True,
    newton="cg",
):
    """Solutions of the paper's problem (12) over a grid of ``alpha`` (its Fig. 3).

    The path runs from the largest ``alpha`` to the smallest, each solve of the
    interior point warm-started at the previous solution, moved into the
    interior by :func:`~convexagg.solvers.interior_warm_start` (``w0 = max(w,
    1e-4)``, duals from the new problem's gradient): a boundary point as start
    stalls the interior point, and this start halved the iterations of 13-point
    paths on digits and the paper's synthetic study (about 660 against 1410
    from cold starts; measurements in that function's docstring).

    Parameters
    ----------
    Q : array-like of shape (n_samples, n_classifiers)
        Binary outputs the weights are fitted on.
    y : array-like of shape (n_samples,)
        Integer class indices ``0..n_classes-1``.
    code : array-like of shape (n_classes, n_classifiers)
    alphas : array-like of shape (n_alphas,)
        Regularisation strengths ``>= 0``, any order; the result is sorted
        decreasingly.
    Q_val, y_val : array-like, default=None
        Validation outputs and labels for ``val_accuracy`` / ``val_log_loss``.
    loss, output
        As in :class:`~convexagg.decoders.ConvexDecoder`.
    tol : float, default=1e-4
        Interior point tolerance at every ``alpha``.
    penalty : {"l2", "l1", "elasticnet"}, default="l2"
    l1_ratio : float, default=0.5
        The meaning of ``alpha`` per penalty is that of
        :func:`~convexagg.decoders.convex.penalty_strengths`.
    max_iter : int, default=100
        Interior point iterations per ``alpha``.
    warm_start : bool, default=True
        False solves every ``alpha`` from the cold start ``w = 1/M, z = 1``
        (the same as separate fits; for comparisons).
    newton : {"cg", "cholesky"}, default="cg"

    Returns
    -------
    RegularizationPath

    Examples
    --------
    >>> import numpy as np
    >>> from convexagg.datasets import make_broken_classifier_outputs
    >>> from convexagg.path import regularization_path
    >>> Q, y, code = make_broken_classifier_outputs(random_state=0)
    >>> path = regularization_path(Q, y, code, np.logspace(-4, 0, 5))
    >>> path.weights.shape, path.alphas[0]
    ((5, 3), np.float64(1.0))
    """
    decoder = ConvexDecoder(loss=loss, tol=tol, penalty=penalty, l1_ratio=l1_ratio)
    Q, y, code = decoder._validate_fit(Q, y, code, output)
    alphas = np.sort(np.asarray(alphas, dtype=np.float64).ravel())[::-1]
    if alphas.size == 0 or not np.all(np.isfinite(alphas)) or alphas.min() < 0:
        raise ValueError("alphas must be a non-empty sequence of finite values >= 0.")
    if (Q_val is None) != (y_val is None):
        raise ValueError("Q_val and y_val must be given together.")
    L = decoder._stacked_losses(Q)

    n_alphas, M = alphas.size, code.shape[1]
    weights = np.empty((n_alphas, M))
    n_iter = np.empty(n_alphas, dtype=int)
    converged = np.empty(n_alphas, dtype=bool)
    objective_values = np.empty(n_alphas)
    w = None
    for j, alpha in enumerate(alphas):
        l2, l1 = penalty_strengths(alpha, penalty, l1_ratio)
        objective = ConvexObjective(L, code, y, l2, l1=l1)
        w0 = z0 = None
        if warm_start and w is not None:
            w0, z0 = interior_warm_start(objective, w)
        result = interior_point(objective, w0, z0, tol=tol, max_iter=max_iter, newton=newton)
        w = result.w
        weights[j] = w
        n_iter[j] = result.n_iter
        converged[j] = result.converged
        objective_values[j] = result.history["objective"][-1]

    ET = objective.ET
    train_acc, train_ll = _scores(L, ET, y, weights)
    val_acc = val_ll = None
    if Q_val is not None:
        Q_val = check_binary_outputs(Q_val, output)
        y_val = np.asarray(y_val)
        if Q_val.shape[1] != M or y_val.shape != (Q_val.shape[0],):
            raise ValueError(
                f"Q_val must have {M} columns and y_val one label per row; got shapes "
                f"{Q_val.shape} and {y_val.shape}."
            )
        integer = np.issubdtype(y_val.dtype, np.integer)
        if not integer or y_val.min(initial=0) < 0 or y_val.max(initial=0) >= code.shape[0]:
            raise ValueError("y_val must hold integer class indices in 0..n_classes-1.")
        L_val = decoder._stacked_losses(Q_val)
        val_acc, val_ll = _scores(L_val, ET, y_val.astype(np.intp), weights)
    return RegularizationPath(
        alphas=alphas,
        weights=weights,
        train_accuracy=train_acc,
        val_accuracy=val_acc,
        n_iter=n_iter,
        converged=converged,
        objective=objective_values,
        train_log_loss=train_ll,
        val_log_loss=val_ll,
    )
