"""Choosing the regularisation strength of the convex aggregation by cross-validation."""

from __future__ import annotations

from numbers import Integral

import numpy as np
from sklearn.base import clone
from sklearn.utils._param_validation import Interval

from ._array_api import take_rows
from ._docstrings import fill_doc
from ._folds import cv_splits
from ._sklearn import fit_context
from ._training import Plan, check_learners, decoder_rows, rows_of, subproblem
from ._training import train as train_binaries
from ._utils import Reporter, progress, restore_on_failure
from .aggregation import MAX_ALPHA
from .binary import predict_binaries
from .convex_aggregation import DEFAULT_ALPHA, ConvexAggregationBase, aggregation_constraints
from .path import path_decoder, problem_path

__all__ = ["ConvexAggregationClassifierCV", "default_alphas"]


def default_alphas(n_alphas=13):
    """The default grid: ``n_alphas`` values log-spaced over ``[1e-6, 1]``.

    The paper found its method stable for ``lambda <= 1e-2`` and used ``1e-4``
    (section 5.1); the grid brackets both.

    Parameters
    ----------
    n_alphas : int, default=13
        Number of values.

    Returns
    -------
    alphas : ndarray of shape (n_alphas,)
        Increasing, from ``1e-6`` to ``1``.
    """
    return np.logspace(-6, 0, n_alphas)


@fill_doc
class ConvexAggregationClassifierCV(ConvexAggregationBase):
    """The default convex aggregation with ``alpha`` chosen by cross-validated log-loss.

    :class:`ConvexAggregationClassifier`'s model -- the same parameters, with
    the same defaults and meanings, ``cv`` included (which binary outputs the
    weights are fitted on) -- with ``alphas`` and ``alpha_cv`` in place of
    ``alpha``. ``alpha`` is the paper's ``lambda`` of eq. 12 (with
    ``penalty="l2"``), which the paper set by inspecting the regularisation
    path (section 5.1, Fig. 3); here it is chosen from the data.

    Each ``alpha`` of the grid is scored on the ``alpha_cv`` folds by the
    log-loss, on the fold's held-out rows, of weights fitted on the other rows
    (the whole grid as one regularisation path, :func:`~convexagg.regularization_path`,
    on the decoder's model and solver, each ``alpha`` warm-started from the
    previous one); ``alpha_`` minimises the mean over folds (ties go to the
    larger ``alpha``). Which outputs those are follows ``cv``:

    * ``cv`` a number of folds (the default, 5) or a splitter (out-of-fold
      outputs): the out-of-fold outputs are computed once, as in the sibling's
      ``fit``, and the aggregation alone is cross-validated on them -- no
      binary is trained per ``alpha`` fold. The weights at ``alpha_`` are fitted
      on all of them.
    * ``cv="in_sample"`` (the paper's protocol: weights fitted on the binaries'
      outputs on their own training rows): the binaries are trained **once per
      fold** on the fold's other rows; the weights are fitted on their outputs
      on those rows and scored on their outputs on the held-out rows, which they
      never saw. The binaries and the weights at ``alpha_`` are then refitted
      on all the data.
    * ``cv="prefit"`` (or binaries wrapped in ``FrozenEstimator``): the same on the
      given binaries' outputs.

    **What the path carries, and what is chosen before it.** Every part of
    the model that does not depend on ``alpha``'s value is on the path: the
    code, the loss and penalty, the intercepts, the entry weights, the column
    penalty (absolute: it does not scale with ``alpha``) and the zero entries'
    weights. The parts the sibling resolves for the data are resolved once, on
    the outputs the weights at ``alpha_`` are fitted on, as
    :class:`ConvexAggregationClassifier` resolves them, and held fixed along
    the path: ``column_penalty="auto"`` for the code; ``entry_weight_shrinkage``
    ``"auto"`` for their number of rows; a list of ``entry_weight_shrinkage``
    or ``zero_entry_penalty``, and ``zero_entry_penalty="auto"``, chosen by the
    sibling's 3-fold cross-validation at its default ``alpha``
    (``DEFAULT_ALPHA``, 1e-3), before the path, since choosing them at every
    ``alpha`` would multiply the path by the candidates. The resolved values
    are in ``entry_weight_shrinkage_`` and ``zero_entry_penalty_``: with them,
    ``ConvexAggregationClassifier(alpha=alpha_, entry_weight_shrinkage=...,
    zero_entry_penalty=...)`` on the same binaries is the fitted model.

    Parameters
    ----------
    %(estimator)s
    %(model_code)s
    alphas : int or array-like, default=13
        Grid of regularisation strengths, or its size ``n`` for
        ``np.logspace(-6, 0, n)`` (:func:`default_alphas`).
    alpha_cv : int, cross-validation generator or iterable, default=5
        Folds on which each ``alpha`` is scored (for an int, ``StratifiedKFold``
        shuffled by ``random_state``, as an int ``cv``).
    %(loss)s
    %(penalty)s
    %(l1_ratio)s
    %(model_fit_intercept)s
    %(model_entry_weight_shrinkage)s
    %(model_column_penalty)s
    %(model_zero_entry_penalty)s
    %(solver)s
    %(cv)s
    %(ensemble)s
    %(n_jobs)s
    %(random_state)s
    %(verbose)s
    %(warm_start)s

    Attributes
    ----------
    alpha_ : float
        The chosen regularisation strength.
    alphas_ : ndarray of shape (n_alphas,)
        The grid, in decreasing order (the order of the path).
    cv_scores_ : ndarray of shape (n_alphas, n_folds)
        Validation log-loss (lower is better) of every ``alpha`` on every fold.
    %(model_attributes)s
    %(fitted_attributes)s

    Notes
    -----
    ``oof_proba_`` holds the fitted decoder's probabilities of the
    out-of-fold outputs: a penalty chosen before the path was chosen at
    another ``alpha`` than ``alpha_``, so its held-out probabilities are not
    those of the fitted model.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from convexagg import ConvexAggregationClassifierCV
    >>> X, y = load_iris(return_X_y=True)
    >>> clf = ConvexAggregationClassifierCV(alphas=[1e-4, 1e-2, 1.0], alpha_cv=3).fit(X, y)
    >>> clf.cv_scores_.shape
    (3, 3)
    """

    _parameter_constraints = aggregation_constraints(
        alphas=[Interval(Integral, 1, None, closed="left"), "array-like"],
        alpha_cv=["cv_object"],
    )

    def __init__(
        self,
        estimator=None,
        *,
        code="ovo+ovr",
        alphas=13,
        alpha_cv=5,
        loss="cross_entropy",
        penalty="l2",
        l1_ratio=None,
        fit_intercept=True,
        entry_weight_shrinkage="auto",
        column_penalty="auto",
        zero_entry_penalty="auto",
        solver="auto",
        cv=5,
        ensemble="auto",
        n_jobs=None,
        random_state=0,
        verbose=0,
        warm_start=False,
    ):
        self.estimator = estimator
        self.code = code
        self.alphas = alphas
        self.alpha_cv = alpha_cv
        self.loss = loss
        self.penalty = penalty
        self.l1_ratio = l1_ratio
        self.fit_intercept = fit_intercept
        self.entry_weight_shrinkage = entry_weight_shrinkage
        self.column_penalty = column_penalty
        self.zero_entry_penalty = zero_entry_penalty
        self.solver = solver
        self.cv = cv
        self.ensemble = ensemble
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose
        self.warm_start = warm_start

    def _decoder_alpha(self):
        """``alpha_`` once fitted (``fit_decoder`` refits there), else ``DEFAULT_ALPHA``."""
        return getattr(self, "alpha_", DEFAULT_ALPHA)

    def _choice_alpha(self):
        return DEFAULT_ALPHA

    def _fit_decoder(self, decoder, model, training, p):
        """``fit_decoder``'s fit: the penalty of ``model`` left to cross-validation chosen
        as in :meth:`fit`, the weights fitted at ``decoder``'s ``alpha`` (``alpha_``)."""
        self._log_model(model)
        candidates = self._candidates(model, p)
        decoder = self._choose(decoder, candidates, training, p)
        return self._fit_on_outputs(decoder, training, p)

    def _choose(self, decoder, candidates, training, p, problem=None):
        """``decoder`` with the penalty of ``candidates`` set to the value
        :class:`~convexagg.ConvexAggregationClassifier` would choose: the choice of a
        decoder at ``DEFAULT_ALPHA`` fitted on the training outputs (on ``problem``, their
        validated aggregation problem, when given). Its held-out probabilities, at
        another ``alpha`` than the fitted model's, are not kept: ``oof_proba_`` is the
        fitted decoder's."""
        scores = None
        if candidates is not None:
            chooser = clone(decoder).set_params(alpha=DEFAULT_ALPHA)
            if problem is None:
                chooser = self._fit_on_outputs(chooser, training, p, candidates)
            else:
                chooser = chooser.fit_problem(problem, candidates)
            decoder.set_params(**{candidates.name: getattr(chooser, candidates.name)})
            scores = chooser.candidate_scores_
        self._record_choice(decoder, candidates, scores)
        return decoder

    def _splitters(self, plan):
        """``cv`` (with out-of-fold outputs) and ``alpha_cv``, by routing name: both get
        ``groups`` (routing off), or what each requests (routing on)."""
        return {**super()._splitters(plan), "alpha_cv": self.alpha_cv}

    def _alpha_grid(self):
        if isinstance(self.alphas, Integral):
            return default_alphas(self.alphas)
        alphas = np.asarray(self.alphas, dtype=np.float64).ravel()
        if alphas.size == 0 or not (alphas.min() >= 0 and alphas.max() <= MAX_ALPHA):
            raise ValueError(
                f"alphas must be an int or a non-empty array of values in [0, {MAX_ALPHA:g}]; "
                f"got {self.alphas!r}."
            )
        return alphas

    def _alpha_folds(self, p, rows):
        """The ``alpha_cv`` splits of ``rows`` (positions into ``rows``)."""
        params = rows_of(p.X, p.split_params.get("alpha_cv", {}), rows)
        return cv_splits(
            self.alpha_cv, rows, p.y[rows], params, "alpha_cv", "pass fewer folds", p.plan.fold_seed
        )

    def _fold_outputs(self, p, train, val):
        """Outputs on a fold's training and held-out rows of binaries trained on its
        training rows (``cv="in_sample"``: the paper's protocol, honestly validated)."""
        fold = subproblem(p, train)
        learners = check_learners(self._learners(p.X), p.code.shape[1], False)[0]
        log = Reporter(type(self).__name__, self.verbose)
        training = train_binaries(fold, learners, Plan("in_sample"), self.n_jobs, log)
        members = training.members[0]
        X_val = take_rows(p.X, val)
        return training.Q, predict_binaries(members, X_val, p.output, n_jobs=self.n_jobs)

    @staticmethod
    def _aggregation_problem(decoder, Q, p, rows):
        """The validated aggregation problem of outputs ``Q`` on ``rows`` of ``p``."""
        sw = None if p.sample_weight is None else p.sample_weight[rows]
        return decoder.aggregation_problem(Q, p.y[rows], p.code, p.output, sw)

    @fit_context(prefer_skip_nested_validation=False)
    @restore_on_failure
    def fit(self, X, y, sample_weight=None, **fit_params):
        """Choose ``alpha`` by cross-validation, then fit on all data.

        Parameters
        ----------
        X : {array-like, sparse matrix, DataFrame} of shape (n_samples, n_features)
            Training samples, passed to the binary learners as given.
        y : array-like of shape (n_samples,)
            Class labels of any sortable type.
        sample_weight : array-like of shape (n_samples,), default=None
            Weights of the samples, in the binaries' fits, the aggregation's
            criterion and the validation log-loss.
        **fit_params : dict
            Further parameters for the binary learners (metadata routing only).

        Returns
        -------
        self : object
            The fitted classifier.
        """
        alphas = np.sort(self._alpha_grid())[::-1]  # the path's order
        p = self._problem(X, y, sample_weight, fit_params)
        if isinstance(self.alpha_cv, Integral) or hasattr(self.alpha_cv, "split"):
            # a dry run on all rows: folds that cannot split them cannot split the rows
            # with out-of-fold outputs either, and fail before any binary is trained
            self._alpha_folds(p, np.arange(p.y.size))
        # the model's data-dependent parts resolved for the rows the final weights are
        # fitted on, as the sibling resolves them
        resolved, decoder = self._resolve(p, decoder_rows(p))
        decoder = path_decoder(decoder)
        # the binaries the final weights are fitted on: out-of-fold (or prefit) outputs,
        # or (cv="in_sample") binaries trained on all rows
        training = self._train(p, warm=self._warm_binaries(p))
        self._log_model(resolved)
        candidates = self._candidates(resolved, p)
        own = p.plan.in_sample  # the binaries trained per alpha fold
        rows = np.arange(p.y.size) if own else np.arange(p.y.size)[training.rows]
        folds = self._alpha_folds(p, rows)
        problem = None
        if not own:  # the outputs validated once: the choice's, and the folds are rows of them
            model = decoder  # the problem's model: with a chosen penalty, its first value
            if candidates is not None:
                model = clone(decoder).set_params(**{candidates.name: candidates.values[0]})
            problem = self._aggregation_problem(model, training.Q[rows], p, rows)
        decoder = self._choose(decoder, candidates, training, p, problem)
        scores = []
        folds = progress(enumerate(folds), None, "alpha folds", self.verbose)
        for f, (train_part, val_part) in folds:
            if own:
                fit_rows, val_rows = rows[train_part], rows[val_part]
                Q_train, Q_val = self._fold_outputs(p, fit_rows, val_rows)
                fit = self._aggregation_problem(decoder, Q_train, p, fit_rows)
                val = self._aggregation_problem(decoder, Q_val, p, val_rows)
            else:
                fit, val = problem.take(train_part), problem.take(val_part)
            path = problem_path(decoder, fit, alphas, val)
            scores.append(path.val_log_loss)
            best = path.alphas[np.argmin(path.val_log_loss)]
            self._log(f"alpha fold {f + 1}: best alpha {best:.3g}")
        cv_scores = np.column_stack(scores)
        alpha = float(path.alphas[np.argmin(cv_scores.mean(axis=1))])  # ties: the larger
        final = self._warm_decoder(clone(decoder).set_params(alpha=alpha), p)
        if own:
            final = self._fit_on_outputs(final, training, p)
        else:  # on the problem the folds were taken from
            n, M = problem.Q.shape
            self._log(f"fitting {type(final).__name__} on {n} x {M} outputs")
            final = final.fit_problem(problem)
        self._set_fitted(p, training, final, resolved)
        self.alpha_ = alpha
        self.alphas_ = path.alphas
        self.cv_scores_ = cv_scores
        return self
