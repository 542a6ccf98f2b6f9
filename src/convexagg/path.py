"""Regularisation paths of the convex aggregation (the paper's section 5.1, Fig. 3).

The paper chooses its ``lambda`` by looking at the path of the optimal weights
and the training accuracy over a grid of ``lambda`` (its Fig. 3, Vowel data,
sparse random ECOC code). :func:`regularization_path` computes both, and the
accuracy and log-loss on a validation set if one is given, on the decoder's
own model and solver: the losses are stored once
(:meth:`ConvexDecoder.likelihood_objective <convexagg.ConvexDecoder.likelihood_objective>`)
and each ``alpha`` only swaps the penalty, solved by the decoder's solver
warm-started from the previous ``alpha`` by that solver's policy.
:class:`~convexagg.ConvexAggregationClassifierCV` chooses ``alpha`` with it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from sklearn.base import clone

from ._utils import progress
from .aggregation import Penalty, entry_matrix, model_entries, zero_entry_sides
from .decoders.convex import ConvexDecoder
from .decoders.fitting import solve_path

__all__ = ["RegularizationPath", "path_decoder", "problem_path", "regularization_path"]


@dataclass
class RegularizationPath:
    """Weights and scores along a regularisation path.

    Attributes
    ----------
    alphas : ndarray of shape (n_alphas,)
        The regularisation strengths, in **decreasing** order (strongest first,
        as the path was computed; as in scikit-learn's ``lasso_path``).
    weights : ndarray of shape (n_alphas, M)
        The aggregation weights at each ``alpha`` (with entry weights: the
        shared column weights ``w``, as the decoder's ``weights_``).
    intercepts : ndarray of shape (n_alphas, n_classes)
        The class intercepts at each ``alpha`` (zeros without ``fit_intercept``).
    train_accuracy : ndarray of shape (n_alphas,)
        Accuracy of ``argmin_k rho`` on the training outputs (the paper's squares
        in Fig. 3); weighted by ``sample_weight`` when given.
    val_accuracy : ndarray of shape (n_alphas,) or None
        The same on ``(Q_val, y_val)``; None without validation data.
    n_iter : ndarray of int, shape (n_alphas,)
        Solver iterations at each ``alpha``.
    converged : ndarray of bool, shape (n_alphas,)
    objective : ndarray of shape (n_alphas,)
        The penalised objective at each solution.
    train_log_loss : ndarray of shape (n_alphas,)
        Mean negative log-likelihood of ``softmax(-rho)`` on the training outputs.
    val_log_loss : ndarray of shape (n_alphas,) or None
        The same on the validation outputs.
    entry_weights : ndarray of shape (n_alphas, n_classes, M)
        The weight of each code entry at each ``alpha`` (``weights`` in every
        nonzero entry of its column without ``entry_weight_shrinkage``), as the
        decoder's ``entry_weights_``.
    zero_entry_weights : ndarray of shape (n_alphas, 2, n_classes, M) or None
        The zero entries' weights of each side at each ``alpha``, as the
        decoder's ``zero_entry_weights_`` (zeros without ``zero_entry_penalty``).
    """

    alphas: np.ndarray
    weights: np.ndarray
    intercepts: np.ndarray
    train_accuracy: np.ndarray
    val_accuracy: np.ndarray | None
    n_iter: np.ndarray
    converged: np.ndarray
    objective: np.ndarray
    train_log_loss: np.ndarray
    val_log_loss: np.ndarray | None
    entry_weights: np.ndarray | None = None
    zero_entry_weights: np.ndarray | None = None


def solution_scores(objective, X):
    """Accuracy and log-loss of every solution (row of ``X``) on ``objective``'s data,
    without the penalty: its value is the mean negative log-likelihood."""
    data = objective.with_penalty(Penalty())
    s = data.sample_weight
    acc, logloss = [], []
    for x in X:
        point = data.evaluate(x)
        correct = np.argmax(point.P, axis=1) == data.y
        acc.append(float(np.mean(correct) if s is None else s @ correct / s.sum()))
        logloss.append(point.value)
    return np.asarray(acc), np.asarray(logloss)


def regularization_path(
    Q,
    y,
    code,
    alphas,
    *,
    decoder=None,
    Q_val=None,
    y_val=None,
    output="proba",
    sample_weight=None,
    sample_weight_val=None,
    warm_start=True,
    verbose=0,
):
    """Solve the paper's problem (12) over a grid of ``alpha`` (its Fig. 3).

    The path runs from the largest ``alpha`` to the smallest on the model of
    ``decoder`` (its loss, penalty, intercepts and solver, ``alpha`` aside): the
    losses are stored once and each ``alpha`` is solved warm-started from the
    previous solution by the solver's policy -- for the interior point, moved
    into the interior by :func:`~convexagg.solvers.interior_warm_start` (a
    boundary start stalls it; this halved the iterations of 13-point paths), for
    the projected Newton and L-BFGS-B methods, the previous solution itself.

    Parameters
    ----------
    Q : array-like of shape (n_samples, n_classifiers)
        Binary outputs the weights are fitted on.
    y : array-like of shape (n_samples,)
        Integer class indices ``0..n_classes-1``.
    code : array-like of shape (n_classes, n_classifiers)
        The code matrix the outputs come from.
    alphas : array-like of shape (n_alphas,)
        Regularisation strengths ``>= 0``, any order; the result is sorted
        decreasingly.
    decoder : ConvexDecoder, default=None
        The model and solver (``ConvexDecoder()`` when None); its ``alpha`` is
        not used. Its formulation must be ``"likelihood"``.
    Q_val, y_val : array-like, default=None
        Validation outputs and labels for ``val_accuracy`` / ``val_log_loss``.
    output : {"proba", "margin"}, default="proba"
        What ``Q`` holds.
    sample_weight : array-like of shape (n_samples,), default=None
        Weights of the training samples (in the fits and the training scores).
    sample_weight_val : array-like of shape (n_val_samples,), default=None
        Weights of the validation samples in the validation scores.
    warm_start : bool, default=True
        False solves every ``alpha`` from the solver's own start (the same as
        separate fits; for comparisons).
    verbose : int, default=0
        ``> 0``: a progress bar over the alphas (with tqdm, on a terminal), or
        one line per alpha.

    Returns
    -------
    path : RegularizationPath
        Weights, intercepts, scores and solver diagnostics at every ``alpha``.

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
    decoder = path_decoder(decoder)
    alphas = np.sort(np.asarray(alphas, dtype=np.float64).ravel())[::-1]
    if alphas.size == 0 or not np.all(np.isfinite(alphas)) or alphas.min() < 0:
        raise ValueError("alphas must be a non-empty sequence of finite values >= 0.")
    if (Q_val is None) != (y_val is None):
        raise ValueError("Q_val and y_val must be given together.")
    if sample_weight_val is not None and Q_val is None:
        raise ValueError("sample_weight_val needs validation data (Q_val, y_val).")
    problem = decoder.aggregation_problem(Q, y, code, output, sample_weight)
    val = None
    if Q_val is not None:
        try:
            val = decoder.aggregation_problem(Q_val, y_val, problem.code, output, sample_weight_val)
        except ValueError as exc:
            raise ValueError(f"validation data (Q_val, y_val): {exc}") from None
    return problem_path(decoder, problem, alphas, val, warm_start=warm_start, verbose=verbose)


def path_decoder(decoder=None):
    """The decoder a regularisation path runs on: checked, its solver resolved.

    Parameters
    ----------
    decoder : ConvexDecoder, default=None
        The model and solver (``ConvexDecoder()`` when None); its formulation
        must be ``"likelihood"``.

    Returns
    -------
    decoder : ConvexDecoder
        An unfitted clone whose ``solver`` is the resolved configuration.
    """
    if decoder is not None and not isinstance(decoder, ConvexDecoder):
        raise TypeError(f"decoder must be a ConvexDecoder, got {decoder!r}.")
    decoder = ConvexDecoder() if decoder is None else clone(decoder)
    decoder._validate_params()
    if decoder.formulation != "likelihood":
        raise ValueError(
            "regularization_path solves the likelihood (eq. 12); the decoder has "
            f"formulation={decoder.formulation!r}."
        )
    return decoder.with_solver_resolved()


def problem_path(decoder, problem, alphas, val=None, *, warm_start=True, verbose=0):
    """The regularisation path of a validated problem (what :func:`regularization_path` runs).

    Parameters
    ----------
    decoder : ConvexDecoder
        From :func:`path_decoder`.
    problem : AggregationProblem
        The training data (:meth:`ConvexDecoder.aggregation_problem
        <convexagg.ConvexDecoder.aggregation_problem>`).
    alphas : ndarray of shape (n_alphas,)
        Decreasing, finite, ``>= 0``.
    val : AggregationProblem, default=None
        The validation data.
    warm_start : bool, default=True
        Each ``alpha`` from the previous one's solution.
    verbose : int, default=0
        As in :func:`regularization_path`.

    Returns
    -------
    path : RegularizationPath
        As :func:`regularization_path` returns it.
    """
    config = decoder.solver
    penalties = [decoder.penalty_for(alpha, problem.code) for alpha in alphas]
    # the losses stored once; each alpha swaps the penalty
    stored = problem.likelihood(penalties[0], config.storage_dtype(problem.n_losses))
    n_alphas, M, K = alphas.size, problem.code.shape[1], problem.code.shape[0]
    points = ([stored.with_penalty(p)] for p in penalties)
    done = iter(alphas)

    def report(point):
        if verbose:
            alpha = next(done)
            print(f"[regularization_path] alpha {alpha:.3g}: {point.result.n_iter} iterations")

    points = progress(points, n_alphas, "regularization path", verbose)
    solved = solve_path(points, config, warm_start=warm_start, report=report)
    solutions = np.array([point.result.w for point in solved])
    train_acc, train_ll = solution_scores(stored, solutions)
    val_acc = val_ll = None
    if val is not None:
        data = val.likelihood(penalties[0], config.storage_dtype(val.n_losses))
        val_acc, val_ll = solution_scores(data, solutions)
    code = problem.code
    zeros = np.zeros((n_alphas, 2) + code.shape)
    if problem.entries:  # the variables: one weight per nonzero code entry (then, with
        # zero entries, the two sides of each zero entry), as the decoder's
        nnz = int(np.count_nonzero(code))
        n = model_entries(code, problem.zero_entries)[0].size
        entries = np.array([entry_matrix(code, x[:nnz]) for x in solutions])
        weights = np.array([p.shared_weights(x[:n]) for p, x in zip(penalties, solutions)])
        if problem.zero_entries:
            zeros = np.array([zero_entry_sides(code, x) for x in solutions])
    else:
        n = M
        weights = solutions[:, :M]
        entries = (code != 0) * weights[:, None, :]
    return RegularizationPath(
        alphas=alphas,
        weights=weights,
        entry_weights=entries,
        zero_entry_weights=zeros,
        intercepts=solutions[:, n:] if decoder.fit_intercept else np.zeros((n_alphas, K)),
        train_accuracy=train_acc,
        val_accuracy=val_acc,
        n_iter=np.array([point.result.n_iter for point in solved], dtype=int),
        converged=np.array([point.result.converged for point in solved], dtype=bool),
        objective=np.array([point.result.history["objective"][-1] for point in solved]),
        train_log_loss=train_ll,
        val_log_loss=val_ll,
    )
