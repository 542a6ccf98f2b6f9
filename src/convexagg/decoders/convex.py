"""The paper's convex aggregation (Park, Hwang & Choi, SDM 2014, section 3)."""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
from scipy.special import softmax
from sklearn.base import _fit_context
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from .._dask import aligned_labels, import_dask_array, is_dask_array, map_row_blocks
from ..codes import check_code_matrix
from ..losses import LOSSES, OUTPUT_KINDS, _check_loss, binary_losses
from ..solvers import ConvexObjective, discrepancies, interior_point, side_indicators, stack_losses
from .base import BaseDecoder

__all__ = ["ConvexDecoder"]


class ConvexDecoder(BaseDecoder):
    """Convex aggregation of binary classifiers (the paper's method).

    Class probabilities are a softmax of minus a non-negative weighted sum of
    per-classifier losses (paper eqs. 1 and 7)::

        rho[i, k] = sum_l w_l d(C[k, l], Q[i, l]),    P[i] = softmax(-rho[i])

    and the weights ``w >= 0`` minimise the L2-regularised mean negative
    log-likelihood (paper eq. 12)::

        f(w) = mean_i [rho[i, y_i] + log sum_k exp(-rho[i, k])] + alpha/2 |w|^2

    solved by the paper's primal-dual interior point method (Algorithm 1) with
    a matrix-free Newton system (see :mod:`convexagg.solvers`).

    **Dask arrays** (``pip install convexagg[dask]``): ``fit`` accepts ``Q`` and
    ``y`` as Dask arrays chunked by rows and never gathers ``Q``; each
    evaluation of the objective is one pass over the blocks that returns the
    partial sums of value, gradient and dense Hessian
    (:class:`convexagg.solvers.chunked.DaskObjective`), so the interior point
    takes one pass per Newton iteration (plus one per rejected line-search
    trial; ``n_passes_`` counts them). The Newton steps are solved as in memory
    (the Hessian-vector products read the cached Hessian), so the weights
    equal those of the in-memory fit on the same data to rounding.
    ``predict_proba``, ``decision_function`` and ``predict`` on a Dask array
    return lazy Dask arrays computed block by block.

    Parameters
    ----------
    alpha : float, default=1e-4
        Regularisation strength (the paper's lambda); ``>= 0``.
    loss : {"cross_entropy", "exponential", "logistic", "hinge"}, default="cross_entropy"
        Discrepancy ``d``; see :mod:`convexagg.losses` for which binary outputs
        (probabilities or margins) each accepts.
    tol : float, default=1e-4
        Stop when the KKT residual norm and the duality gap are both below it
        (the paper's tolerance).
    max_iter : int, default=100
        Maximum interior point iterations.

    Attributes
    ----------
    weights_ : ndarray of shape (n_classifiers,)
        The aggregation weights ``w``.
    n_iter_ : int
        Interior point iterations taken.
    converged_ : bool
    history_ : dict of ndarray
        Per iteration: ``objective``, ``gap``, ``residual``, ``step``, ``mu``,
        ``cg_iter`` and ``weights`` (see :class:`convexagg.solvers.SolverResult`).
    objective_ : float
        ``f(weights_)``.
    code_ : ndarray of shape (n_classes, n_classifiers)
    output_ : {"proba", "margin"}
    n_classes_ : int
    n_passes_ : int
        Passes over the data of a fit on Dask arrays (only set by such fits).

    References
    ----------
    S. Park, T. Hwang, S. Choi. Convex Optimization for Binary Classifier
    Aggregation in Multiclass Problems. SDM 2014.
    """

    _parameter_constraints = {
        "alpha": [Interval(Real, 0, None, closed="left")],
        "loss": [StrOptions(set(LOSSES))],
        "tol": [Interval(Real, 0, None, closed="neither")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
    }

    def __init__(self, alpha=1e-4, loss="cross_entropy", tol=1e-4, max_iter=100):
        self.alpha = alpha
        self.loss = loss
        self.tol = tol
        self.max_iter = max_iter

    def _stacked_losses(self, Q):
        return stack_losses(*binary_losses(Q, self.loss, self.output_))

    def _solve(self, objective):
        """The interior point on ``objective``; the same call for in-memory and Dask fits,
        so both follow the same iterates."""
        return interior_point(objective, tol=self.tol, max_iter=self.max_iter)

    def _set_result(self, result):
        self.weights_ = result.w
        self.n_iter_ = result.n_iter
        self.converged_ = result.converged
        self.history_ = result.history
        self.objective_ = float(result.history["objective"][-1])

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, Q, y, code, output="proba"):
        """Learn the aggregation weights.

        Parameters
        ----------
        Q : array-like or dask.array.Array of shape (n_samples, n_classifiers)
            Binary outputs (probabilities of the positive side, or margins).
            A Dask array is fitted out of core, one pass over its row blocks
            per Newton iteration; its row chunk sizes must be known.
        y : array-like or dask.array.Array of shape (n_samples,)
            Integer class indices ``0..n_classes-1``. With a Dask ``Q`` it is
            rechunked (or split) to the row chunks of ``Q``.
        code : array-like of shape (n_classes, n_classifiers)
        output : {"proba", "margin"}, default="proba"
            What ``Q`` holds.

        Returns
        -------
        self
        """
        if is_dask_array(Q) or is_dask_array(y):
            return self._fit_dask(Q, y, code, output)
        Q, y, code = self._validate_fit(Q, y, code, output)
        objective = ConvexObjective(self._stacked_losses(Q), code, y, self.alpha)
        self._set_result(self._solve(objective))
        return self

    def _fit_dask(self, Q, y, code, output):
        """Out-of-core fit: validation that needs the data happens inside the passes."""
        from ..solvers.chunked import DaskObjective

        da = import_dask_array()
        code = check_code_matrix(code)
        if output not in OUTPUT_KINDS:
            raise ValueError(f"output must be one of {OUTPUT_KINDS}, got {output!r}.")
        _check_loss(self.loss, output)
        if not is_dask_array(Q):  # a Dask y with in-memory Q: split Q like y
            Q = np.asarray(Q)
            if Q.ndim != 2:
                raise ValueError(f"Q must be 2-D (n_samples, n_classifiers), got shape {Q.shape}.")
            y = aligned_labels(y, y.chunks[0] if y.ndim == 1 else (), Q.shape[0])
            Q = da.from_array(Q, chunks=(y.chunks[0], -1))
        if not (np.issubdtype(Q.dtype, np.floating) or np.issubdtype(Q.dtype, np.integer)):
            raise ValueError(f"Q must be numeric, got dtype {Q.dtype}.")
        objective = DaskObjective(Q, y, code, self.alpha, loss=self.loss, output=output)
        result = self._solve(objective)  # a bad block raises here, before anything is set
        self.code_ = code
        self.output_ = output
        self.n_classes_ = code.shape[0]
        self._set_result(result)
        self.n_passes_ = objective.n_passes
        return self

    def _dask_predict_check(self, Q):
        check_is_fitted(self, "code_")
        if Q.ndim != 2 or Q.shape[1] != self.code_.shape[1]:
            raise ValueError(
                f"Q must have shape (n_samples, {self.code_.shape[1]}) like the binary outputs "
                f"the decoder was fitted with, got {Q.shape}."
            )

    def decision_function(self, Q):
        """``-rho``: minus each class's weighted discrepancy (log-probability + constant).

        Lazy and block-wise for a Dask ``Q``."""
        if is_dask_array(Q):
            self._dask_predict_check(Q)
            return map_row_blocks(self.decision_function, Q, self.n_classes_, np.float64, "Q")
        Q = self._validate_predict(Q)
        return -discrepancies(self._stacked_losses(Q), side_indicators(self.code_), self.weights_)

    def predict_proba(self, Q):
        """Class membership probabilities ``softmax(-rho)`` (paper eq. 7).

        Lazy and block-wise for a Dask ``Q``."""
        if is_dask_array(Q):
            self._dask_predict_check(Q)
            return map_row_blocks(self.predict_proba, Q, self.n_classes_, np.float64, "Q")
        return softmax(self.decision_function(Q), axis=1)
