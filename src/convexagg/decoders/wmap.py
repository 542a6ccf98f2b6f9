"""WMAP (Yukinawa, Oba, Kato & Ishii 2009) -- a reconstruction (baselines spec section 4.6).

The original paper could not be retrieved beyond its abstract. What is known
(the SDM paper's section 5.1 and the abstract): WMAP links binary outputs to
class probabilities by the generalized Bradley-Terry model, gives every binary
classifier a weight tuned on the training data by maximising the concordance of
the class probabilities with the labels (a bilevel problem with ``NK + M``
parameters), needs an iterative optimisation per test point, reduces to GBTM
with uniform weights, and was run by the SDM paper with fixed weights
``N_j / sum_l N_l`` on all but the two smallest data sets. What is reconstructed
here (spec section 4.6 b): a symmetric Dirichlet prior of strength ``c`` on the
class probabilities -- needed to explain why, in the SDM tables, WMAP with
fixed weights has GBTM's accuracy but a higher Brier score on one-vs-rest codes
-- and the training log-likelihood as the concordance criterion. Unknown: the
exact prior, criterion, optimiser and the "user parameters" the SDM authors set
by hand.
"""

from __future__ import annotations

import warnings
from numbers import Integral, Real

import numpy as np
from scipy.optimize import minimize
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils._param_validation import Interval, StrOptions

from .._sklearn import fit_context
from .bradley_terry import BradleyTerryDecoder
from .gbtm import (
    check_bradley_terry_conditions,
    generalized_bradley_terry,
    resolve_weights,
    split_code,
    team_hessian,
    team_objective,
    team_sums,
)

__all__ = ["WMAPDecoder", "wmap_criterion_gradient"]

CRITERIA = ("log_likelihood", "expected_accuracy", "brier")


def _criterion(P, y, criterion):
    """Per-sample concordance (to maximise) and its gradient in ``theta``."""
    n, K = P.shape
    rows = np.arange(n)
    onehot = np.zeros_like(P)
    onehot[rows, y] = 1.0
    py = P[rows, y]
    if criterion == "log_likelihood":
        return np.log(py), onehot - P
    if criterion == "expected_accuracy":
        return py, py[:, None] * (onehot - P)
    # brier: maximise -sum_k (1[y = k] - p_k)^2
    resid = onehot - P
    value = -(resid**2).sum(axis=1)
    grad = 2.0 * (resid * P - P * (resid * P).sum(axis=1, keepdims=True))
    return value, grad


def wmap_criterion_gradient(R, code, w, P, y, prior, criterion="log_likelihood"):
    """Training criterion ``sum_i crit(p_i)`` and its gradient in ``w`` by implicit differentiation.

    ``P`` must hold the inner optima ``p_i(w)``. With ``g_ij`` the gradient of
    ``KL2(r_ij || mu_j)`` in ``theta`` and ``H_i`` the inner Hessian,
    ``d crit_i / d w_j = -u_i' g_ij`` where ``(H_i + 11'/K) u_i = grad_theta crit_i``
    (spec section 4.6; the rank-one term removes the shift direction of
    ``theta``).

    Returns
    -------
    value : float
    grad : ndarray of shape (n_classifiers,)
    n_indefinite : int
        Samples whose Hessian was not positive definite (``1e-8 I`` added).
    """
    n, K = P.shape
    value, g_theta = _criterion(P, y, criterion)
    H = team_hessian(R, code, w, P, prior) + 1.0 / K
    finite = np.isfinite(H).all(axis=(1, 2))
    H[~finite] = np.eye(K)  # overflowing curvature (a p near 0): sample left out below
    lowest = np.linalg.eigvalsh(H)[:, 0]
    bad = (lowest <= 1e-12 * np.abs(H).max(axis=(1, 2))) | ~finite
    if bad.any():
        H[bad] += 1e-8 * np.eye(K)
    u = np.linalg.solve(H, g_theta[:, :, None])[:, :, 0]
    u[~finite] = 0.0
    pos, neg = split_code(code)
    plus, minus, total = team_sums(P, pos, neg)
    up = u * P
    ug = (up @ (pos + neg)) / total - R * (up @ pos) / plus - (1 - R) * (up @ neg) / minus
    # every column, also those at w_j = 0: L-BFGS-B needs their gradient to
    # decide whether to leave the bound
    return float(value.sum()), -np.nan_to_num(ug).sum(axis=0), int(bad.sum())


class WMAPDecoder(BradleyTerryDecoder):
    """WMAP: weighted generalized Bradley-Terry aggregation (a reconstruction).

    **Status: a reconstruction** of Yukinawa et al. (2009), whose full text
    could not be retrieved; see the module docstring and the baselines spec,
    section 4.6, for what is known and what is assumed.

    Model (per sample, weights ``w`` fixed): the class probabilities are the
    MAP estimate of the generalized Bradley-Terry model (see
    :class:`BradleyTerryDecoder`) under a symmetric Dirichlet prior of strength
    ``c = prior_strength``::

        p(Q_i; w) = argmin_p  sum_j w_j KL2(Q[i, j] || mu_j(p))  -  c sum_k log p_k

    solved by the cyclic fixed point ``p_s <- (p_s a_s + c) / (b_s + c K)``
    (``c = 0``: GBTM with weights ``w``). Its monotonicity is observed, not
    proved, so the solver checks the objective and finishes any sample whose
    objective rises by L-BFGS (spec section 4.6).

    Weights:

    * ``weights="learned"`` (WMAP proper): maximise over ``w >= 0``
      ``J(w) = sum_i crit(p(Q_i; w), y_i) - alpha/2 |w|^2`` by L-BFGS-B, the
      gradient by implicit differentiation through the inner optima, starting
      from ``N_j / sum_l N_l`` and warm-starting the inner problems. Costly (the
      SDM paper used it only on its two smallest data sets). With
      ``prior_strength=0`` the inner optimum ignores the scale of ``w``, which is
      then parametrised as ``softmax(u)`` (sum 1).
    * ``weights="n_samples"``: fixed ``w_j = N_j / sum_l N_l`` (what the SDM paper
      used on every larger data set), ``N_j`` the training count of binary
      problem ``j`` counted in :meth:`fit` from ``y`` and the code.
    * ``weights="uniform"``: fixed ``w_j = 1 / M``.

    Parameters
    ----------
    weights : {"learned", "n_samples", "uniform"}, default="learned"
        The classifiers' weights ``w``: learned by maximising the criterion
        (WMAP proper), fixed at the binary problems' training shares, or
        uniform; see "Weights" above.
    prior_strength : float, default=1e-3
        ``c`` (the spec's reconstruction; 1e-3 reproduces the size of the SDM
        tables' Brier-score gap to GBTM; always report it).
    alpha : float, default=1e-4
        L2 penalty ``alpha`` on the learned weights (the spec's ``lambda_w``).
    criterion : {"log_likelihood", "expected_accuracy", "brier"}, default="log_likelihood"
        Concordance maximised when learning the weights: ``log p_y``, ``p_y`` or
        minus the Brier score.
    eps : float, default=1e-7
        Outputs are clipped to ``[eps, 1 - eps]``.
    tol : float, default=1e-10
        Inner (per-sample) stopping tolerance, as in :class:`BradleyTerryDecoder`.
    max_iter : int, default=100
        Inner fixed-point sweeps before the Newton safeguard (see
        :class:`BradleyTerryDecoder`). While learning, inner problems after the
        first are warm-started and solved by Newton directly.
    max_outer_iter : int, default=200
        L-BFGS-B iterations when learning the weights.

    Attributes
    ----------
    weights_ : ndarray of shape (n_classifiers,)
        The aggregation weights ``w``.
    n_samples_per_classifier_ : ndarray of shape (n_classifiers,)
    n_iter_ : int
        L-BFGS-B iterations (0 for fixed weights).
    converged_ : bool
    history_ : dict of ndarray
        ``"objective"``: ``-J(w)`` at the start and after every L-BFGS-B
        iteration; ``"weights"``: the iterates. Non-increasing when the inner
        problem is convex (one-vs-one codes, codes without zeros); otherwise
        the inner optimum may jump between stationary points, and ``weights_``
        is the best iterate.
    code_ : ndarray of shape (n_classes, n_classifiers)
    output_ : {"proba"}
    n_classes_ : int

    References
    ----------
    N. Yukinawa, S. Oba, K. Kato, S. Ishii. Optimal aggregation of binary
    classifiers for multiclass cancer diagnosis using gene expression profiles.
    IEEE/ACM TCBB 6(2):333-343, 2009.
    S. Park, T. Hwang, S. Choi. SDM 2014, section 5.1 (how WMAP was run).
    """

    _parameter_constraints = {
        "weights": [StrOptions({"learned", "n_samples", "uniform"})],
        "prior_strength": [Interval(Real, 0, None, closed="left")],
        "alpha": [Interval(Real, 0, None, closed="left")],
        "criterion": [StrOptions(set(CRITERIA))],
        "eps": BradleyTerryDecoder._parameter_constraints["eps"],
        "tol": [Interval(Real, 0, None, closed="neither")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "max_outer_iter": [Interval(Integral, 1, None, closed="left")],
    }

    def __init__(
        self,
        weights="learned",
        *,
        prior_strength=1e-3,
        alpha=1e-4,
        criterion="log_likelihood",
        eps=1e-7,
        tol=1e-10,
        max_iter=100,
        max_outer_iter=200,
    ):
        self.weights = weights
        self.prior_strength = prior_strength
        self.alpha = alpha
        self.criterion = criterion
        self.eps = eps
        self.tol = tol
        self.max_iter = max_iter
        self.max_outer_iter = max_outer_iter

    def _inner(self, R, w, p0=None, record_history=False, max_iter=None):
        return generalized_bradley_terry(
            R,
            self.code_,
            w,
            prior=self.prior_strength,
            tol=self.tol,
            max_iter=self.max_iter if max_iter is None else max_iter,
            p0=p0,
            record_history=record_history,
        )

    @fit_context(prefer_skip_nested_validation=True)
    def fit(self, Q, y, code, output="proba"):
        """Set (or learn) the aggregation weights.

        Parameters
        ----------
        Q : array-like of shape (n_samples, n_classifiers)
            Probabilities of each column's positive side on the training data.
        y : array-like of shape (n_samples,)
            Integer class indices ``0..n_classes-1``.
        code : array-like of shape (n_classes, n_classifiers)
            The code matrix the outputs come from.
        output : {"proba"}, default="proba"
            Only probabilities have a Bradley-Terry reading.

        Returns
        -------
        self : object
            The fitted decoder.
        """
        Q, y, code = self._validate_proba_fit(Q, y, code, output)
        start = "uniform" if self.weights == "uniform" else "n_samples"
        w0, counts = resolve_weights(start, code, y, normalise=True)
        check_bradley_terry_conditions(code, w0, self.prior_strength)
        self.n_samples_per_classifier_ = counts
        self.weights_ = w0
        self.n_iter_ = 0
        self.converged_ = True
        self.history_ = {"objective": np.empty(0), "weights": w0[None, :]}
        if self.weights == "learned":
            self._learn(np.clip(Q.astype(np.float64), self.eps, 1.0 - self.eps), y, w0)
        return self

    def _learn(self, R, y, w0):
        c = self.prior_strength
        softmax_param = c == 0
        state = {"P": None, "indefinite": 0, "f0": None}

        def weights_of(x):
            if softmax_param:
                e = np.exp(x - x.max())
                return e / e.sum()
            return x

        def fun(x):
            w = weights_of(x)
            # Warm start: after the first solve, the inner optima move little
            # between outer iterates, and Newton from the previous optima (no
            # fixed-point sweeps) converges in a few steps.
            warm = state["P"] is not None
            P = self._inner(R, w, p0=state["P"], max_iter=0 if warm else None).proba
            state["P"] = P
            value, grad_w, n_bad = wmap_criterion_gradient(
                R, self.code_, w, P, y, c, self.criterion
            )
            state["indefinite"] = max(state["indefinite"], n_bad)
            f = -value + 0.5 * self.alpha * (w @ w)
            if state["f0"] is None:
                state["f0"] = f
            g = -grad_w + self.alpha * w
            if softmax_param:
                g = w * (g - w @ g)
            return f, g

        x0 = np.log(w0) if softmax_param else w0.copy()
        objective, iterates = [], [w0]

        def callback(intermediate_result):
            objective.append(float(intermediate_result.fun))
            iterates.append(weights_of(intermediate_result.x))

        result = minimize(
            fun,
            x0,
            jac=True,
            method="L-BFGS-B",
            bounds=None if softmax_param else [(0.0, None)] * x0.size,
            callback=callback,
            options={"maxiter": self.max_outer_iter},
        )
        if state["indefinite"]:
            warnings.warn(
                f"WMAP: the inner Hessian was not positive definite for up to "
                f"{state['indefinite']} samples (saddle points of a non-convex inner "
                "problem); 1e-8 I was added.",
                ConvergenceWarning,
                stacklevel=3,
            )
        if not result.success:
            warnings.warn(
                f"WMAP weight learning stopped without converging: {result.message}",
                ConvergenceWarning,
                stacklevel=3,
            )
        objective.insert(0, state["f0"])
        # With codes whose inner problem is not convex (zeros and multi-class
        # teams) the inner optimum can jump between stationary points, so the
        # last iterate is not always the best: keep the best one.
        best = int(np.argmin(objective))
        self.weights_ = iterates[best]
        self.n_iter_ = int(result.nit)
        self.converged_ = bool(result.success)
        self.history_ = {"objective": np.array(objective), "weights": np.array(iterates)}

    def decode(self, Q, p0=None, record_history=False):
        """Run the inner fixed point and return the full :class:`BradleyTerryResult`.

        Parameters
        ----------
        Q : array-like of shape (n_samples, n_classifiers)
            Probabilities of each column's positive side.
        p0 : ndarray of shape (n_samples, n_classes), default=None
            Start of the fixed point; uniform when None.
        record_history : bool, default=False
            Record the objective after every sweep.

        Returns
        -------
        result : BradleyTerryResult
            Probabilities, sweeps, convergence flags (and the history).
        """
        return self._inner(self._clipped(Q), self.weights_, p0=p0, record_history=record_history)

    def objective(self, Q, P):
        """The inner objective ``F(p)`` of each row of ``P`` (prior included).

        Parameters
        ----------
        Q : array-like of shape (n_samples, n_classifiers)
            Probabilities of each column's positive side.
        P : ndarray of shape (n_samples, n_classes)
            Class probabilities, one row per sample.

        Returns
        -------
        F : ndarray of shape (n_samples,)
            The objective of every row.
        """
        return team_objective(self._clipped(Q), self.code_, self.weights_, P, self.prior_strength)
