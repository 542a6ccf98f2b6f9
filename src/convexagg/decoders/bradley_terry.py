"""Generalized Bradley-Terry decoding (GBTM; Huang, Weng & Lin 2006): the decoder.

The engine (the team model, its objective and derivatives, the fixed point) is
:mod:`.gbtm`, shared with the Hastie-Tibshirani coupling (:mod:`.pairwise`) and
WMAP (:mod:`.wmap`).
"""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
from sklearn.utils._param_validation import Interval, StrOptions

from .._sklearn import fit_context
from .base import BaseDecoder
from .gbtm import (
    check_bradley_terry_conditions,
    generalized_bradley_terry,
    resolve_weights,
    team_objective,
)

__all__ = ["BradleyTerryDecoder"]


class BradleyTerryDecoder(BaseDecoder):
    """GBTM: the generalized Bradley-Terry model of Huang, Weng & Lin (2006).

    Model: binary classifier ``j`` estimates the probability that the classes on
    its positive side (a "team") beat those on its negative side, and the class
    probabilities ``p`` are the individual skills::

        Q[i, j] ~ mu_j(p) = sum_{C[k,j]=+1} p_k / sum_{C[k,j]!=0} p_k

    For each sample ``p`` minimises the weighted Bernoulli KL divergence (the
    negative log-likelihood up to a constant) over the simplex::

        F(p) = sum_j v_j KL2(Q[i, j] || mu_j(p))

    by Huang et al.'s cyclic fixed point (their Algorithm 2; the update is
    re-derived in the baselines spec, section 4.3): ``p_s <- p_s a_s / b_s``
    for each class in turn, then renormalise (see
    :func:`generalized_bradley_terry`). All samples are iterated together.

    The fixed point is guaranteed well defined when the weights are positive,
    every class is used, the comparison graph of the code is connected, and the
    outputs lie strictly inside ``(0, 1)``; :meth:`fit` checks the first three
    (raising ``ValueError``) and the outputs are clipped to
    ``[eps, 1 - eps]``. For one-vs-one codes GBTM is Hastie & Tibshirani's
    pairwise coupling; for codes without zeros the objective is convex. For
    codes with zeros and multi-class teams it is not convex in general: the
    uniform start is used so results are reproducible.

    Parameters
    ----------
    weights : {"uniform", "n_samples"} or array-like of shape (n_classifiers,), \
default="uniform"
        Column weights ``v``. ``"uniform"``: ``v_j = 1`` (the paper's
        description of GBTM as WMAP with uniform weights; the spec's default
        for reproducing the paper). ``"n_samples"``: ``v_j = N_j``, the number of
        training samples of binary problem ``j`` (Huang et al.'s and
        Hastie-Tibshirani's convention), counted in :meth:`fit` from ``y`` and
        the code as ``N_j = sum_k n_k |C[k, j]|`` -- so fit the decoder on the
        labels the binaries were trained on. Only ratios matter.
    eps : float, default=1e-7
        Outputs are clipped to ``[eps, 1 - eps]`` (the spec's ``eps_r``).
    tol : float, default=1e-10
        Stopping tolerance on the change of ``p`` and on the scaled gradient.
    max_iter : int, default=100
        Sweeps of Algorithm 2 per sample. Samples not converged by then are
        finished by damped Newton steps on the same objective (see
        :func:`generalized_bradley_terry`): the cyclic updates converge only
        linearly, and on confident binaries (outputs near 0 and 1) take
        thousands of sweeps to reach ``tol``, which Newton does in a few steps. Larger
        values let Algorithm 2 do more of the work, at a cost.

    Attributes
    ----------
    weights_ : ndarray of shape (n_classifiers,)
        The weights ``v`` used.
    n_samples_per_classifier_ : ndarray of shape (n_classifiers,)
        ``N_j`` counted from the labels given to :meth:`fit`.
    code_ : ndarray of shape (n_classes, n_classifiers)
    output_ : {"proba"}
    n_classes_ : int

    References
    ----------
    T.-K. Huang, R. C. Weng, C.-J. Lin. Generalized Bradley-Terry models and
    multi-class probability estimates. JMLR 7:85-115, 2006.
    """

    _parameter_constraints = {
        "weights": [StrOptions({"uniform", "n_samples"}), "array-like"],
        # eps_r = 1e-7 is LIBSVM's min_prob, not losses.clip_proba's machine
        # epsilon: the fixed point divides by team sums, and outputs at 1e-16
        # push class probabilities to ~1e-16, where the multiplicative updates
        # crawl; 1e-7 also keeps the pairwise coupling identical to LIBSVM's.
        "eps": [Interval(Real, 0, 0.5, closed="neither")],
        "tol": [Interval(Real, 0, None, closed="neither")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
    }

    def __init__(self, weights="uniform", eps=1e-7, tol=1e-10, max_iter=100):
        self.weights = weights
        self.eps = eps
        self.tol = tol
        self.max_iter = max_iter

    def _validate_proba_fit(self, Q, y, code, output):
        Q, y, code = self._validate_fit(Q, y, code, output)
        if output != "proba":
            raise ValueError(
                f"{type(self).__name__} needs probabilities of the positive side "
                "(output='proba'); margins have no Bradley-Terry interpretation. Use a "
                "binary learner with predict_proba (e.g. wrap it in CalibratedClassifierCV)."
            )
        return Q, y, code

    @fit_context(prefer_skip_nested_validation=True)
    def fit(self, Q, y, code, output="proba"):
        """Resolve the column weights and check the convergence conditions.

        Parameters
        ----------
        Q : array-like of shape (n_samples, n_classifiers)
            Probabilities of each column's positive side.
        y : array-like of shape (n_samples,)
            Integer class indices ``0..n_classes-1`` (used for ``N_j``).
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
        v, counts = resolve_weights(self.weights, code, y)
        check_bradley_terry_conditions(code, v)
        self.weights_ = v
        self.n_samples_per_classifier_ = counts
        return self

    def _clipped(self, Q):
        Q = self._validate_predict(Q).astype(np.float64, copy=False)
        return np.clip(Q, self.eps, 1.0 - self.eps)

    def decode(self, Q, p0=None, record_history=False):
        """Run the fixed point and return the full :class:`BradleyTerryResult`.

        Use it for the per-sample sweep counts, convergence flags and (with
        ``record_history=True``) the objective after every sweep.

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
        return generalized_bradley_terry(
            self._clipped(Q),
            self.code_,
            self.weights_,
            tol=self.tol,
            max_iter=self.max_iter,
            p0=p0,
            record_history=record_history,
        )

    def objective(self, Q, P):
        """``F(p)`` of each row of ``P`` for the outputs ``Q`` (for diagnostics).

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
        return team_objective(self._clipped(Q), self.code_, self.weights_, P)

    def predict_proba(self, Q):
        """Class probabilities: the GBTM fit of every row of ``Q``.

        Parameters
        ----------
        Q : array-like of shape (n_samples, n_classifiers)
            Binary outputs of the kind the decoder was fitted on.

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
            Rows sum to 1.
        """
        return self.decode(Q).proba

    def decision_function(self, Q):
        """Return the log-probabilities ``log p``.

        Parameters
        ----------
        Q : array-like of shape (n_samples, n_classifiers)
            Binary outputs of the kind the decoder was fitted on.

        Returns
        -------
        scores : ndarray of shape (n_samples, n_classes)
            ``log`` of :meth:`predict_proba`.
        """
        return np.log(self.predict_proba(Q))
