"""The paper's convex aggregation (Park, Hwang & Choi, SDM 2014, sections 3 and 4).

One estimator, :class:`ConvexDecoder`, in one file of more than 800 lines: its
docstring (the three training criteria, the solver, Dask and the array API,
every parameter and attribute) is a fifth of it, and the rest is the methods of
one scikit-learn estimator. What they dispatch to has its own modules: the
validated problem and the solve loop (:mod:`~convexagg.decoders.fitting`), the
criteria (:mod:`~convexagg.decoders.formulations`), the penalty's choice by
cross-validation (:mod:`~convexagg.decoders.selection`), the array-API and Dask
paths (:mod:`~convexagg.decoders.array_api`, :mod:`~convexagg.decoders.distributed`).
"""

from __future__ import annotations

from numbers import Real

import numpy as np
from scipy.special import expit, log_softmax
from sklearn.base import clone
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from .._array_api import array_namespace
from .._dask import is_dask_array, map_row_blocks
from .._docstrings import fill_doc
from .._sklearn import fit_context
from ..aggregation import (
    MAX_ALPHA,
    PENALTIES,
    Penalty,
    code_entries,
    entry_matrix,
    expand_code,
    model_entries,
    output_discrepancies,
    softmax_classes,
    zero_entries,
    zero_entry_sides,
)
from ..linear_outputs import LinearLogOdds
from ..losses import LOSSES, check_log_odds, check_loss
from ..solvers import SolverResult, tau_schedule
from ..validation import check_fitted_columns
from .array_api import decision_on_device, likelihood_on_device, softmax_on_device
from .base import BaseDecoder
from .distributed import likelihood_on_dask
from .fitting import PointFrom, aggregation_problem, solve_path
from .formulations import BY_NAME, SOLVER_CONSTRAINT, solver_for
from .selection import PenaltyCandidates, PenaltyChoice

__all__ = ["FORMULATIONS", "ConvexDecoder"]

FORMULATIONS = tuple(BY_NAME)


@fill_doc
class ConvexDecoder(BaseDecoder):
    """Convex aggregation of binary classifiers (the paper's method).

    Class probabilities are a softmax of minus a non-negative weighted sum of
    per-classifier losses (paper eqs. 1 and 7)::

        rho[i, k] = sum_l w_l d(C[k, l], Q[i, l]) (+ b_k),    P[i] = softmax(-rho[i])

    and a sample goes to the class of smallest discrepancy. The weights
    ``w >= 0`` (and, with ``fit_intercept``, free class intercepts ``b``)
    minimise one of the paper's three training criteria (``formulation``),
    each plus the penalty ``R(w)``:

    * ``"likelihood"`` (eq. 12, the paper's method): the mean negative
      log-likelihood ``mean_i [rho[i, y_i] + log sum_k exp(-rho[i, k])]``;
    * ``"large_margin"`` (eq. 27): the mean multiclass hinge loss
      ``mean_i max_{k != y_i} [1 - (rho[i, k] - rho[i, y_i])]_+``, solved by
      projected subgradient steps as the paper suggests;
    * ``"stiffness"`` (eqs. 29-30): the negative log-likelihood of the
      cost-sensitive softmax with stiffness ``tau``, which tends to the
      large-margin objective as ``tau`` grows (``0 <= f_tau - f_LM <= log(K) /
      tau``, Proposition 1), solved as the paper describes: at ``tau = 1, 10,
      100, ...`` up to ``tau``, each stage warm-started at the previous solution.

    All three learn the same model and predict with it in the same way; they
    differ in the training criterion, as scikit-learn's ``SGDClassifier(loss=...)``
    differs by its loss, so a grid search can compare them
    (``decoder__formulation``). Only the likelihood fits the weights for
    probabilities; the large-margin and stiffness weights are on the scale
    where margins are 1, and their probabilities are not calibrated.

    **Solver.** ``solver`` is one parameter carrying every setting of the fit
    (see :mod:`convexagg.solvers.config`): ``"auto"`` (the default) is the
    projected Newton method (:class:`~convexagg.solvers.ProjectedNewton`), the
    fastest reliable solver measured (``BENCHMARKS.md``); ``"interior_point"`` is
    the paper's Algorithm 1 exactly (:class:`~convexagg.solvers.InteriorPoint`,
    which ``convexagg reproduce`` pins); a configuration object sets the rest,
    e.g. ``solver=InteriorPoint(method="predictor_corrector", tol=1e-6)``, and
    its settings are grid-searchable (``solver__tol``). A setting the
    formulation cannot use raises an error naming both.

    **Dask arrays** (``pip install convexagg[dask]``): ``fit`` accepts ``Q`` and
    ``y`` (and ``sample_weight``) as Dask arrays chunked by rows and never
    gathers ``Q``; each evaluation of the objective is one pass over the blocks
    that returns the partial sums of value and gradient
    (:class:`convexagg.aggregation.distributed.DaskObjective`), so the solvers
    take one pass per Newton iteration (plus one per rejected line-search
    trial; ``n_passes_`` counts them). The projected Newton method (the
    default) takes its Hessian from a sample of 200,000 rows drawn in the
    first pass; the other solvers sum the dense Hessian over every row in
    every pass. The weights equal those of the in-memory
    fit on the same data to rounding. ``formulation`` must be ``"likelihood"``;
    starts that need the data several times (``init="uniform"`` of the interior
    point, ``"subsample"``) are refused. ``predict_proba``,
    ``decision_function`` and ``predict`` on a Dask array return lazy Dask
    arrays computed block by block.

    **Array API** (PyTorch, CuPy, ...): under
    ``sklearn.set_config(array_api_dispatch=True)`` a ``Q`` of another array
    library is fitted and decoded on its device -- the losses, ``rho``, the
    likelihood's value, gradient and Hessian products
    (:class:`~convexagg.aggregation.array_api.ArrayAPIObjective`) -- while the
    solver and its Newton system stay on the host; the fitted attributes are
    NumPy arrays and the predictions arrays of ``Q``'s namespace. The likelihood
    only (another ``formulation`` raises); see the user guide's "Array API" page.

    Parameters
    ----------
    %(alpha)s
    %(loss)s
    formulation : {"likelihood", "large_margin", "stiffness"}, default="likelihood"
        Training criterion, see above.
    tau : float, default=None
        Final stiffness for ``formulation="stiffness"`` (``> 0``; 100 when
        None). Setting it for another formulation raises.
    %(penalty)s
    %(l1_ratio)s
    %(fit_intercept)s
    %(entry_weight_shrinkage)s
    %(column_penalty)s
    %(zero_entry_penalty)s
    %(solver)s
    warm_start : bool, default=False
        Start from the previous fit's solution when refitting with the same
        code and intercept setting (e.g. along a path of ``alpha``), by the
        solver's warm-start policy, instead of its ``init``. With ``candidates`` in
        ``fit``, the fit at the chosen value starts from the choice's own fits instead.
    verbose : int, default=0
        Progress messages, at scikit-learn's levels: 0 is silent; 1 prints
        one line when the weights are fitted (solver iterations, final
        objective, converged or not) and, with ``candidates`` in ``fit``, one
        for the choice (the value chosen, each value's held-out log-loss); 2 and
        above also one line per solver iteration (objective and convergence
        measure) of every fit, the choice's included, and one per fit of the
        choice (value, fold, iterations, held-out log-loss).

    Attributes
    ----------
    weights_ : ndarray of shape (n_classifiers,)
        The aggregation weights ``w`` (with entry weights: the shared column
        weights the entry weights are shrunk toward).
    entry_weights_ : ndarray of shape (n_classes, n_classifiers)
        The weight of each code entry in ``rho`` (0 where the code is 0): the
        fitted ``u`` with ``entry_weight_shrinkage``, else ``weights_`` in
        every nonzero entry of its column.
    zero_entry_weights_ : ndarray of shape (2, n_classes, n_classifiers)
        With ``zero_entry_penalty``: the weights ``v+`` (``[0]``) and ``v-``
        (``[1]``) of the zero code entries, free in sign (0 where the code is
        not 0); else zeros.
    intercept_ : ndarray of shape (n_classes,)
        The class intercepts ``b`` (zeros without ``fit_intercept``).
    solver_ : SolverConfig
        The solver configuration that fitted (``"auto"`` and names resolved).
    n_iter_ : int
        Solver iterations (summed over the stages of the ``tau`` continuation).
    converged_ : bool
        The solver met its tolerance (at every stage). For ``"large_margin"``
        only True when the projected subgradient vanished (rare).
    history_ : dict of ndarray
        Per iteration, by solver: ``objective`` always, and e.g.
        ``projected_gradient``, ``gap``, ``residual``, ``step``, ``cg_iter``,
        ``weights`` (of the last stage for ``"stiffness"``); see
        :class:`convexagg.solvers.SolverResult`.
    dual_ : ndarray of shape (n_classifiers,) or (n_classes, n_classifiers)
        Dual variables of ``w >= 0`` (exact for the interior point, the
        gradient's positive part for the others); of ``u >= 0`` in the code's
        layout with entry weights (of the nonzero entries only).
    objective_ : float
        The formulation's objective (with the penalty) at the solution.
    taus_ : ndarray
        Only for ``"stiffness"``: the continuation's ``tau`` values.
    stage_n_iter_ : ndarray of int
        Only for ``"stiffness"``: solver iterations at each ``tau``.
    candidate_scores_ : ndarray of shape (n_values,) or None
        With ``candidates`` in ``fit``: each value's held-out log-loss (NaN for
        the values not fitted); None otherwise.
    held_out_proba_ : ndarray of shape (n_samples, n_classes) or None
        With ``candidates`` in ``fit``: each row's class probabilities under the
        chosen value from the weights fitted on the other folds (cross-fitted
        probabilities of the model, from the choice's own fits); None otherwise.
    code_ : ndarray of shape (n_classes, n_classifiers)
    output_ : {"proba", "margin"}
    n_classes_ : int
    n_passes_ : int
        Passes over the data of a fit on Dask arrays (only set by such fits).

    References
    ----------
    S. Park, T. Hwang, S. Choi. Convex Optimization for Binary Classifier
    Aggregation in Multiclass Problems. SDM 2014.

    Examples
    --------
    >>> from convexagg import ConvexDecoder
    >>> from convexagg.datasets import make_broken_classifier_outputs
    >>> Q, y, code = make_broken_classifier_outputs(random_state=0)
    >>> dec = ConvexDecoder().fit(Q, y, code)
    >>> dec.predict_proba(Q[:2]).shape
    (2, 3)
    """

    _parameter_constraints = {
        "alpha": [Interval(Real, 0, MAX_ALPHA, closed="both")],
        "loss": [StrOptions(set(LOSSES))],
        "formulation": [StrOptions(set(FORMULATIONS))],
        "tau": [Interval(Real, 0, None, closed="neither"), None],
        "penalty": [StrOptions(set(PENALTIES))],
        "l1_ratio": [Interval(Real, 0, 1, closed="both"), None],
        "fit_intercept": ["boolean"],
        "entry_weight_shrinkage": [Interval(Real, 0, None, closed="right"), None],
        "column_penalty": ["array-like", None],
        "zero_entry_penalty": [Interval(Real, 0, None, closed="left"), None],
        "solver": SOLVER_CONSTRAINT,
        "warm_start": ["boolean"],
        "verbose": ["verbose"],
    }

    def __init__(
        self,
        alpha=1e-4,
        loss="cross_entropy",
        *,
        formulation="likelihood",
        tau=None,
        penalty="l2",
        l1_ratio=None,
        fit_intercept=False,
        entry_weight_shrinkage=None,
        column_penalty=None,
        zero_entry_penalty=None,
        solver="auto",
        warm_start=False,
        verbose=0,
    ):
        self.alpha = alpha
        self.loss = loss
        self.formulation = formulation
        self.tau = tau
        self.penalty = penalty
        self.l1_ratio = l1_ratio
        self.fit_intercept = fit_intercept
        self.entry_weight_shrinkage = entry_weight_shrinkage
        self.column_penalty = column_penalty
        self.zero_entry_penalty = zero_entry_penalty
        self.solver = solver
        self.warm_start = warm_start
        self.verbose = verbose

    # -- the model and its solver, public for the regularisation path and the CV estimator --

    def _entries(self):
        """Whether the model has entry weights (a finite ``entry_weight_shrinkage``)."""
        s = self.entry_weight_shrinkage
        return s is not None and bool(np.isfinite(s))

    def _zero_entries(self):
        """Whether the zero code entries carry weights (``zero_entry_penalty`` given)."""
        return self.zero_entry_penalty is not None

    def penalty_for(self, alpha=None, code=None):
        """The :class:`~convexagg.aggregation.Penalty` of ``alpha`` under this decoder's settings.

        Parameters
        ----------
        alpha : float, default=None
            The strength; this decoder's ``alpha`` when None.
        code : ndarray of shape (n_classes, n_classifiers), default=None
            The (validated) code matrix; needed with ``entry_weight_shrinkage``
            (the fitted ``code_`` when None), and ``column_penalty``'s length
            is checked against it.

        Returns
        -------
        penalty : Penalty
            Of this decoder's ``penalty``, ``l1_ratio``, ``entry_weight_shrinkage``
            and ``column_penalty``.
        """
        l1_ratio = 0.5 if self.l1_ratio is None else self.l1_ratio
        alpha = self.alpha if alpha is None else alpha
        if code is None and (self._entries() or self.column_penalty is not None):
            check_is_fitted(self, "code_")
            code = self.code_
        column_l2 = self._column_penalty(None if code is None else code.shape[1])
        if not self._entries():
            return Penalty.from_alpha(alpha, self.penalty, l1_ratio, column_l2=column_l2)
        columns = code_entries(code)[1]
        free_l2 = 0.0
        if self._zero_entries():  # two free weights per zero entry, after the entries
            n_zero = int(np.count_nonzero(np.asarray(code) == 0))
            columns = np.concatenate([columns, np.full(2 * n_zero, -1)])
            free_l2 = float(self.zero_entry_penalty)
        return Penalty.from_alpha(
            alpha,
            self.penalty,
            l1_ratio,
            shrink=self.entry_weight_shrinkage,
            columns=columns,
            column_l2=column_l2,
            free_l2=free_l2,
        )

    def _column_penalty(self, n_classifiers=None):
        """``column_penalty`` validated (a float array, or None), its length against
        ``n_classifiers`` when given."""
        if self.column_penalty is None:
            return None
        try:
            extra = np.asarray(self.column_penalty, dtype=np.float64)
        except (TypeError, ValueError):
            extra = None
        if extra is None or extra.ndim != 1 or not np.all(np.isfinite(extra) & (extra >= 0)):
            raise ValueError(
                "column_penalty must be a 1-D array of finite values >= 0, one per classifier; "
                f"got {self.column_penalty!r}."
            )
        if n_classifiers is not None and extra.size != n_classifiers:
            raise ValueError(
                f"column_penalty has {extra.size} entries but the code has {n_classifiers} "
                "classifiers (columns); give one per classifier."
            )
        return extra

    def _expand(self, Q, code):
        """``(Q, code)`` of the model's parametrisation: with entry weights, one column
        per weighted code entry (:func:`~convexagg.aggregation.expand_code`)."""
        if not self._entries():
            return Q, code
        zero = self._zero_entries()
        return Q[:, model_entries(code, zero)[1]], expand_code(code, zero)

    def solver_config(self, dask=False):
        """The :class:`~convexagg.solvers.SolverConfig` that fits this decoder.

        ``"auto"`` and names resolved, and checked against ``formulation``: a
        setting the formulation cannot use raises a ``ValueError`` naming both.

        Parameters
        ----------
        dask : bool, default=False
            Check the settings against a fit on Dask arrays.

        Returns
        -------
        solver : SolverConfig
            The configuration object.
        """
        return solver_for(self.solver, self.formulation, dask)

    def with_solver_resolved(self):
        """A clone whose ``solver`` is :meth:`solver_config` (``"auto"`` and names
        resolved): for code that fits the decoder many times, such as a
        regularisation path.

        Returns
        -------
        decoder : ConvexDecoder
            An unfitted clone with a configuration object as ``solver``.
        """
        config = self.solver_config()
        return clone(self).set_params(solver=config)

    def likelihood_objective(self, Q, y, code, output="proba", sample_weight=None, alpha=None):
        """The likelihood objective (eq. 12) of this decoder's model on ``(Q, y)``.

        Inputs are validated as in :meth:`fit`; the losses are stored by class
        (:class:`~convexagg.aggregation.BlockedObjective`) in the solver's
        ``dtype``, or, when they would take more than a quarter of the
        machine's memory, recomputed from ``Q`` on every pass
        (:class:`~convexagg.aggregation.RecomputedObjective`, the same values).
        What :meth:`fit` minimises for ``formulation="likelihood"``, and what
        :func:`~convexagg.regularization_path` minimises for each ``alpha``
        (``objective.with_penalty(decoder.penalty_for(alpha))``).

        Parameters
        ----------
        Q : array-like of shape (n_samples, n_classifiers)
            Binary outputs, as in :meth:`fit`.
        y : array-like of shape (n_samples,)
            Integer class indices, as in :meth:`fit`.
        code : array-like of shape (n_classes, n_classifiers)
            The code matrix, as in :meth:`fit`.
        output : {"proba", "margin"}, default="proba"
            What ``Q`` holds.
        sample_weight : array-like of shape (n_samples,), default=None
            Weights of the samples, as in :meth:`fit`.
        alpha : float, default=None
            The penalty's strength; this decoder's ``alpha`` when None.

        Returns
        -------
        objective : BlockedObjective or RecomputedObjective
            The objective, ready for a solver's ``solve``. With
            ``entry_weight_shrinkage`` its variables are the entry weights
            (:mod:`convexagg.aggregation.entries`), its ``code`` the expanded code.
        """
        config = self.solver_config()
        problem = self.aggregation_problem(Q, y, code, output, sample_weight)
        penalty = self.penalty_for(alpha, problem.code)
        return problem.likelihood(penalty, config.storage_dtype(problem.n_losses))

    def aggregation_problem(self, Q, y, code, output="proba", sample_weight=None):
        """The data of a fit, validated once, with this decoder's model settings.

        Parameters
        ----------
        Q : array-like of shape (n_samples, n_classifiers)
            Binary outputs, as in :meth:`fit`.
        y : array-like of shape (n_samples,)
            Integer class indices, as in :meth:`fit`.
        code : array-like of shape (n_classes, n_classifiers)
            The code matrix, as in :meth:`fit`.
        output : {"proba", "margin"}, default="proba"
            What ``Q`` holds.
        sample_weight : array-like of shape (n_samples,), default=None
            Weights of the samples, as in :meth:`fit`.

        Returns
        -------
        problem : AggregationProblem
            What :meth:`fit_problem` and the regularisation path solve; its
            rows (folds) are taken without validating them again.
        """
        return aggregation_problem(
            Q,
            y,
            code,
            output,
            loss=self.loss,
            sample_weight=sample_weight,
            fit_intercept=self.fit_intercept,
            entries=self._entries(),
            zero_entries=self._zero_entries(),
        )

    def _check_output(self, output):
        super()._check_output(output)
        check_loss(self.loss, output)

    def _tau(self):
        return 100.0 if self.tau is None else self.tau

    def _check_settings(self, dask=False):
        """Every check that needs no data, before any work: a setting the model does
        not use raises rather than being ignored, and the solver configuration is
        resolved and validated (its own parameters, and against ``formulation``).
        Returns the configuration; the estimators call it before they train any
        binary classifier."""
        if self.tau is not None and self.formulation != "stiffness":
            raise ValueError(
                f"tau={self.tau!r} applies only to formulation='stiffness'; "
                f"got formulation={self.formulation!r}."
            )
        if self.l1_ratio is not None and self.penalty != "elasticnet":
            raise ValueError(
                f"l1_ratio={self.l1_ratio!r} applies only to penalty='elasticnet'; "
                f"got penalty={self.penalty!r}."
            )
        if self._entries() and self.penalty != "l2":
            raise ValueError(
                f"entry_weight_shrinkage={self.entry_weight_shrinkage!r} needs penalty='l2' "
                f"(the shrinkage is a quadratic penalty); got penalty={self.penalty!r}."
            )
        if self._zero_entries() and not self._entries():
            raise ValueError(
                # (no value: the estimator's "auto" is a placeholder here until the rows are known)
                "zero_entry_penalty needs entry weights (the zero entries' weights are entry "
                "weights): set entry_weight_shrinkage; got "
                f"entry_weight_shrinkage={self.entry_weight_shrinkage!r}."
            )
        self._column_penalty()
        return self.solver_config(dask=dask)

    def _callback(self):
        if self.verbose < 2:
            return None

        def report(record):
            fields = ", ".join(
                f"{k} {v:.4g}" if isinstance(v, float) else f"{k} {v}"
                for k, v in record.items()
                if k != "iteration"
            )
            print(f"[ConvexDecoder] iteration {record['iteration']}: {fields}", flush=True)

        return report

    def _previous(self, code):
        """The last fit's solution as a warm start, when ``warm_start`` and it fits the problem."""
        if not (self.warm_start and hasattr(self, "weights_")):
            return None
        same_model = (
            getattr(self, "_fitted_intercept", False) == self.fit_intercept
            and getattr(self, "_fitted_entries", False) == self._entries()
            and getattr(self, "_fitted_zero", False) == self._zero_entries()
        )
        if not (same_model and np.array_equal(self.code_, code)):
            return None
        x, z = self.weights_, self.dual_
        if self._entries():  # the solver's variables: one per entry
            entries = code_entries(code)
            x, z = self.entry_weights_[entries], None if z is None else z[entries]
            if self._zero_entries():  # then the zero entries' sides (no duals kept)
                zeros = zero_entries(code)
                x = np.concatenate([x, self.zero_entry_weights_[0][zeros]])
                x, z = np.concatenate([x, self.zero_entry_weights_[1][zeros]]), None
        if self.fit_intercept:
            x = np.concatenate([x, self.intercept_])
        return SolverResult(w=x, z=z, n_iter=0, converged=True)

    def _set_result(self, result, objective_value=None):
        code = self.code_
        self._fitted_intercept = self.fit_intercept
        self._fitted_entries = self._entries()
        self._fitted_zero = self._zero_entries()
        self.zero_entry_weights_ = np.zeros((2,) + code.shape)
        if self._fitted_entries:
            nnz = int(np.count_nonzero(code))
            n = model_entries(code, self._fitted_zero)[0].size
            self.entry_weights_ = entry_matrix(code, result.w[:nnz])
            self.weights_ = self.penalty_for(code=code).shared_weights(result.w[:n])
            if self._fitted_zero:
                self.zero_entry_weights_ = zero_entry_sides(code, result.w)
            self.dual_ = None if result.z is None else entry_matrix(code, result.z[:nnz])
        else:
            n = code.shape[1]
            self.weights_ = result.w[:n]
            self.entry_weights_ = (code != 0) * self.weights_
            self.dual_ = result.z
        self.intercept_ = result.w[n:] if result.w.size > n else np.zeros(code.shape[0])
        self.n_iter_ = result.n_iter
        self.converged_ = result.converged
        self.history_ = result.history
        if objective_value is None:
            objective_value = result.history["objective"][-1]
        self.objective_ = float(objective_value)
        if self.verbose:
            state = "converged" if self.converged_ else "not converged"
            print(
                f"[ConvexDecoder] weights: {self.n_iter_} iterations, final objective "
                f"{self.objective_:.6g}, {state}",
                flush=True,
            )

    @fit_context(prefer_skip_nested_validation=True)
    def fit(self, Q, y, code, output="proba", sample_weight=None, *, candidates=None):
        """Learn the aggregation weights.

        With ``candidates``, first choose the value of one penalty among several by
        cross-validation on ``(Q, y)`` (:mod:`convexagg.decoders.selection`), then
        fit at the chosen value; every solve of it is one loop over one validated
        problem, its losses stored once.

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
            The code matrix the binary outputs come from.
        output : {"proba", "margin"}, default="proba"
            What ``Q`` holds.
        sample_weight : array-like of shape (n_samples,), default=None
            Weights of the samples in the training criterion (normalised by
            their sum): integer weights fit as repeated rows would.
        candidates : PenaltyCandidates, default=None
            Values of ``entry_weight_shrinkage`` or ``zero_entry_penalty`` to
            choose among (in-memory NumPy outputs only). The decoder's parameter
            is set to the chosen value, and ``candidate_scores_`` and
            ``held_out_proba_`` record the choice.

        Returns
        -------
        self : ConvexDecoder
            The fitted decoder.
        """
        namespace = array_namespace(Q)  # None: NumPy (or array_api_dispatch off)
        if sample_weight is not None and namespace is None and not is_dask_array(sample_weight):
            sample_weight = np.asarray(sample_weight)
        dask = namespace is None and any(map(is_dask_array, (Q, y, sample_weight)))
        model = self._candidate_model(candidates)
        config = model._check_settings(dask)  # before the data: a bad setting fails fast
        if candidates is not None and (dask or namespace is not None):
            raise ValueError(
                "candidates are chosen on in-memory NumPy outputs; pass Q, y and "
                "sample_weight as NumPy arrays, or fit one value without candidates."
            )
        if dask:  # out of core: validation that needs the data happens inside the passes
            objective, code = likelihood_on_dask(self, Q, y, code, output, sample_weight, config)
            self._fit_stages([[objective]], code, output, config)
            self.n_passes_ = objective.n_passes
            return self
        if namespace is not None:  # array-API inputs: the samples' work on their device
            self._check_output(output)
            objective, code = likelihood_on_device(
                self, Q, y, code, output, sample_weight, config, namespace
            )
            return self._fit_stages([[objective]], code, output, config)
        problem = model.aggregation_problem(Q, y, code, output, sample_weight)
        return self._fit_problem(problem, config, candidates)

    def _candidate_model(self, candidates):
        """This decoder, or with ``candidates`` a clone at their first value: the model
        of every candidate value (the same variables, another penalty)."""
        if candidates is None:
            return self
        if not isinstance(candidates, PenaltyCandidates):
            raise TypeError(
                f"candidates must be a PenaltyCandidates or None, got {type(candidates).__name__}."
            )
        return clone(self).set_params(**{candidates.name: candidates.values[0]})

    def fit_problem(self, problem, candidates=None):
        """Learn the aggregation weights of a validated problem.

        What :meth:`fit` does once it has validated its inputs; the
        cross-validated estimator fits its final weights on the problem it
        validated for its folds.

        Parameters
        ----------
        problem : AggregationProblem
            From :meth:`aggregation_problem` (of a decoder with the same
            ``loss``, ``fit_intercept`` and ``entry_weight_shrinkage``).
        candidates : PenaltyCandidates, default=None
            Values of a penalty to choose among first, as in :meth:`fit`.

        Returns
        -------
        self : ConvexDecoder
            The fitted decoder.
        """
        model = self._candidate_model(candidates)
        config = model._check_settings()
        built = (problem.loss, problem.fit_intercept, problem.entries, problem.zero_entries)
        if built != (model.loss, model.fit_intercept, model._entries(), model._zero_entries()):
            raise ValueError(
                "the problem was built for another model (loss, fit_intercept, entry weights, "
                f"zero entries {built}); build it with this decoder's aggregation_problem."
            )
        return self._fit_problem(problem, config, candidates)

    def _fit_problem(self, problem, config, candidates=None):
        """Fit the formulation's objectives of a validated problem; with ``candidates``,
        at the value chosen among them, the choice's solves first in the same loop."""
        formulation, tau = BY_NAME[self.formulation], self._tau()
        if candidates is None:
            penalty = self.penalty_for(code=problem.code)
            points = formulation.objectives(problem, [penalty], config, tau=tau)
            return self._fit_stages(points, problem.code, problem.output, config)
        choice = PenaltyChoice(self, problem, candidates, config)

        def points():
            yield from choice.points()
            chosen = choice.penalties[choice.best]
            for stages in formulation.objectives(
                problem, [chosen], config, tau=tau, likelihood=choice.likelihood
            ):
                stages = list(stages)
                # the choice fitted the likelihood's variables: a start for a formulation
                # with the same ones
                same = stages[0].n_variables == choice.start.w.size
                yield PointFrom(stages, start=choice.start) if same else stages

        return self._fit_stages(points(), problem.code, problem.output, config, choice)

    def _fit_stages(self, points, code, output, config, choice=None):
        """The solve loop (:func:`~convexagg.decoders.fitting.solve_path`): the points of
        ``choice`` (each from its own start) when given, then the fit's point, from the
        choice's start, else the previous fit's solution (``warm_start``) or the
        solver's own start."""
        *_, point = solve_path(
            points,
            config,
            previous=self._previous(code),
            warm_start=False,
            callback=self._callback(),
        )
        result = point.result
        # attributes (and the chosen value) only once the solve has succeeded
        if choice is not None:
            candidates = choice.candidates
            self.set_params(**{candidates.name: candidates.values[choice.best]})
        self.code_, self.output_, self.n_classes_ = code, output, code.shape[0]
        self.solver_ = config
        best = result.history["best"][-1] if self.formulation == "large_margin" else None
        self._set_result(result, best)
        self.candidate_scores_ = None if choice is None else choice.scores
        self.held_out_proba_ = None if choice is None else choice.held_out_proba
        if self.formulation == "stiffness":
            self.taus_ = tau_schedule(self._tau())
            self.stage_n_iter_ = point.stage_n_iter
        return self

    def _map_dask(self, method, Q):
        """``method`` on each block of rows of the Dask array ``Q``, its shape checked first."""
        check_is_fitted(self, "code_")
        if Q.ndim != 2 or Q.shape[1] != self.code_.shape[1]:
            raise ValueError(
                f"Q must have shape (n_samples, {self.code_.shape[1]}) like the binary outputs "
                f"the decoder was fitted with, got {Q.shape}."
            )
        return map_row_blocks(method, Q, self.n_classes_, np.float64, "Q")

    def decision_function(self, Q):
        """``-rho``: minus each class's weighted discrepancy (log-probability + constant).

        Parameters
        ----------
        Q : array-like or dask.array.Array of shape (n_samples, n_classifiers)
            Binary outputs of the kind the decoder was fitted on.

        Returns
        -------
        scores : ndarray of shape (n_samples, n_classes)
            Lazy and block-wise for a Dask ``Q``.
        """
        if is_dask_array(Q):
            return self._map_dask(self.decision_function, Q)
        namespace = array_namespace(Q)
        if namespace is not None:
            check_is_fitted(self, "code_")
            return decision_on_device(self, Q, namespace)
        rho = self._discrepancies(Q)
        return np.negative(rho, out=rho)

    def _discrepancies(self, Q, transposed=False, log_odds=False):
        """``rho`` of NumPy-path outputs ``Q`` (``rho.T`` when ``transposed``; ``Q``
        validated log-odds when ``log_odds``)."""
        if not log_odds:
            Q = self._validate_predict(Q)
        return output_discrepancies(
            Q,
            self.code_,
            self._model_weights(),
            self.intercept_ if self.fit_intercept else None,
            loss=self.loss,
            output=self.output_,
            dtype=self.solver_.storage_dtype(None),  # the same for every block of rows
            transposed=transposed,
            log_odds=log_odds,
        )

    def _model_weights(self):
        """The weights ``rho`` is taken with: one per classifier, one per code entry,
        or with zero entries the side weights ``(2, K, M)``
        (:func:`~convexagg.aggregation.side_weights`)."""
        if not getattr(self, "_fitted_entries", False):
            return self.weights_
        if not getattr(self, "_fitted_zero", False):
            return self.entry_weights_
        code, U = self.code_, self.entry_weights_
        return self.zero_entry_weights_ + np.stack([U * (code == 1), U * (code == -1)])

    def predict_proba(self, Q):
        """Class membership probabilities ``softmax(-rho)`` (paper eq. 7).

        Parameters
        ----------
        Q : array-like or dask.array.Array of shape (n_samples, n_classifiers)
            Binary outputs of the kind the decoder was fitted on.

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
            Rows sum to 1. Lazy and block-wise for a Dask ``Q``.
        """
        if is_dask_array(Q):
            return self._map_dask(self.predict_proba, Q)
        namespace = array_namespace(Q)
        if namespace is not None:
            return softmax_on_device(self.decision_function(Q), namespace)
        return softmax_classes(self._discrepancies(Q, transposed=True))

    def predict_log_proba(self, Q):
        """Log of the class probabilities, ``log_softmax(-rho)`` computed stably.

        Parameters
        ----------
        Q : array-like or dask.array.Array of shape (n_samples, n_classifiers)
            Binary outputs of the kind the decoder was fitted on.

        Returns
        -------
        log_proba : ndarray of shape (n_samples, n_classes)
            Finite even where ``predict_proba`` underflows to 0.
        """
        if is_dask_array(Q):
            return self._map_dask(self.predict_log_proba, Q)
        namespace = array_namespace(Q)
        if namespace is not None:
            return softmax_on_device(self.decision_function(Q), namespace, log=True)
        return log_softmax(self.decision_function(Q), axis=1)

    def _validate_log_odds(self, Z):
        check_is_fitted(self, "code_")
        if not isinstance(Z, LinearLogOdds) and (
            is_dask_array(Z) or array_namespace(Z) is not None
        ):
            raise TypeError(
                "Z must be a NumPy array: log-odds are decoded on the host. Pass "
                "scipy.special.expit(Z) to predict_proba for Dask or array-API inputs."
            )
        if self.output_ != "proba":
            raise ValueError(
                "the decoder was fitted on margins (output='margin'), not probabilities: "
                "log-odds do not apply; pass the margins to predict_proba."
            )
        if not isinstance(Z, LinearLogOdds):  # finite by construction
            Z = check_log_odds(Z)
        check_fitted_columns(Z, self.code_.shape[1], "Z")
        return Z

    def predict_proba_from_log_odds(self, Z):
        """Class probabilities from the log-odds of the binary outputs, ``Z = logit(Q)``.

        The same as ``predict_proba(scipy.special.expit(Z))`` to the rounding of
        the losses, without forming the probabilities: with the cross-entropy
        loss, the two losses of an output are ``log(1 + exp(-z))`` and
        ``log(1 + exp(z))``, one ``exp`` and one ``log1p`` per output instead of
        the sigmoid's ``exp`` and two logs, clipped as those of ``Q`` are (at most
        ``-log(eps)``). Where the sigmoid rounds (``1 - q`` for ``z`` beyond about
        20 in float64), these losses are the more accurate. It is the path of
        :class:`~convexagg.ConvexAggregationClassifier` when its binaries are
        logistic regressions (see :func:`convexagg.linear_outputs.predict_log_odds`).
        Other losses decode ``expit(Z)``.

        Parameters
        ----------
        Z : ndarray of shape (n_samples, n_classifiers) or LinearLogOdds
            Log-odds of the probabilities of the positive sides, for a decoder
            fitted on probabilities; ``+-inf`` for 1 and 0, NaN refused. Read
            fastest Fortran-ordered, or as the
            :class:`~convexagg.linear_outputs.LinearLogOdds` of
            :func:`convexagg.linear_outputs.predict_log_odds`, computed block by block.

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
            Rows sum to 1.
        """
        Z = self._validate_log_odds(Z)
        if self.loss != "cross_entropy":
            return self.predict_proba(expit(Z))
        return softmax_classes(self._discrepancies(Z, transposed=True, log_odds=True))

    def predict_log_proba_from_log_odds(self, Z):
        """Log of the class probabilities from the log-odds ``Z = logit(Q)``.

        ``predict_log_proba(scipy.special.expit(Z))`` to the rounding of the
        losses; see :meth:`predict_proba_from_log_odds`.

        Parameters
        ----------
        Z : ndarray of shape (n_samples, n_classifiers) or LinearLogOdds
            Log-odds of the probabilities of the positive sides.

        Returns
        -------
        log_proba : ndarray of shape (n_samples, n_classes)
            Finite even where the probabilities underflow to 0.
        """
        Z = self._validate_log_odds(Z)
        if self.loss != "cross_entropy":
            return self.predict_log_proba(expit(Z))
        rho = np.negative(self._discrepancies(Z, log_odds=True))
        return log_softmax(rho, axis=1)
