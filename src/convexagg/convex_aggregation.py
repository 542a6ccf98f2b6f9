"""The convex aggregation as estimators: binaries plus the default :class:`ConvexDecoder` model.

:class:`ConvexAggregationClassifier` and, in :mod:`convexagg.model_selection`,
:class:`~convexagg.ConvexAggregationClassifierCV` are siblings of one private base,
:class:`ConvexAggregationBase`: the decoder's parameters on the estimator, handed to
:class:`ConvexDecoder` by an explicit list (:data:`DECODER_PARAMETERS`), with the
parts that depend on the data resolved for it (:func:`convexagg.defaults.resolve_model`).
"""

from __future__ import annotations

from inspect import signature
from numbers import Real

from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from ._binary_selection import check_param_grid, learners_with, select_binaries
from ._docstrings import fill_doc
from ._training import check_learners, train
from ._utils import Reporter
from .code_matrix import CodeMatrixClassifier
from .decoders import ConvexDecoder
from .decoders.selection import CHOSEN_PENALTIES, PenaltyCandidates
from .defaults import resolve_model

__all__ = ["ConvexAggregationClassifier"]

#: the parameters ConvexAggregationClassifier and ConvexAggregationClassifierCV hand to
#: their ConvexDecoder, each meaning the same in both (``alpha`` aside: the CV estimator's
#: is chosen); ``entry_weight_shrinkage``, ``column_penalty`` and ``zero_entry_penalty``
#: as resolved for the data (:func:`convexagg.defaults.resolve_model`)
DECODER_PARAMETERS = (
    "loss",
    "penalty",
    "l1_ratio",
    "fit_intercept",
    "entry_weight_shrinkage",
    "column_penalty",
    "zero_entry_penalty",
    "solver",
    "warm_start",
    "verbose",
)


def aggregation_constraints(**own):
    """``_parameter_constraints`` of a convex-aggregation estimator: the fit skeleton's
    (:class:`CodeMatrixClassifier`'s, ``decoder`` aside), the decoder's for the
    parameters handed to it, the values only the estimators resolve ("auto", lists,
    parts), then the class's ``own``."""
    constraints = {
        k: v for k, v in CodeMatrixClassifier._parameter_constraints.items() if k != "decoder"
    }
    constraints.update({k: ConvexDecoder._parameter_constraints[k] for k in DECODER_PARAMETERS})
    constraints.update(
        {
            "column_penalty": ["array-like", dict, None, StrOptions({"auto"})],
            "entry_weight_shrinkage": [
                Interval(Real, 0, None, closed="right"),
                None,
                StrOptions({"auto"}),
                "array-like",
            ],
            "zero_entry_penalty": [
                Interval(Real, 0, None, closed="left"),
                None,
                StrOptions({"auto"}),
                "array-like",
            ],
        }
    )
    constraints.update(own)
    return constraints


class ConvexAggregationBase(CodeMatrixClassifier):
    """The private base of :class:`ConvexAggregationClassifier` and
    :class:`~convexagg.ConvexAggregationClassifierCV` (not public API; neither
    is a subclass of the other): binaries plus a
    :class:`ConvexDecoder` of the default aggregation model, whose data-dependent
    parts (``"auto"`` values, lists chosen by cross-validation, strengths by code
    part) are resolved for the data by :func:`~convexagg.defaults.resolve_model`.

    A sibling defines its own ``__init__`` (the parameters of
    :data:`DECODER_PARAMETERS` among them), ``_parameter_constraints`` and
    :meth:`_decoder_alpha`.
    """

    def _decoder_alpha(self):
        """The decoder's ``alpha``."""
        raise NotImplementedError

    def _choice_alpha(self):
        """The ``alpha`` at which the penalties given as "auto" or a list are chosen."""
        return self._decoder_alpha()

    def _make_decoder(self, **params):
        """The decoder of :data:`DECODER_PARAMETERS` and :meth:`_decoder_alpha`, with
        ``params`` set: the parameters the model resolved for the data (as the
        parameters give them, "auto" and lists included, without)."""
        given = {name: getattr(self, name) for name in DECODER_PARAMETERS}
        return ConvexDecoder(**given, alpha=self._decoder_alpha()).set_params(**params)

    def _resolve(self, p, rows):
        """``(model, decoder)``: the model resolved for the data once
        (:func:`~convexagg.defaults.resolve_model`) and the decoder built with it,
        checked before any binary is trained."""
        model = resolve_model(self.get_params(deep=False), self._data_shape(p, rows))
        decoder = self._make_decoder(**model.decoder_params)
        self._check_decoder(decoder, p.output)
        self._check_device_decoder(decoder, p)
        return model, decoder

    def _check_array_api(self, decoder=None, X=None):
        super()._check_array_api(decoder, X)
        if not isinstance(self.entry_weight_shrinkage, (str, Real, type(None))):
            raise ValueError(
                "entry_weight_shrinkage as a list cannot apply to array-API X "
                "(array_api_dispatch=True): its values are compared on NumPy arrays; pass X "
                "as a NumPy array or one entry_weight_shrinkage value."
            )

    def _fit_decoder(self, decoder, model, training, p):
        self._log_model(model)
        candidates = self._candidates(model, p)
        decoder = self._fit_on_outputs(decoder, training, p, candidates)
        self._record_choice(decoder, candidates, candidates and decoder.candidate_scores_)
        return decoder

    def _candidates(self, model, p):
        """The :class:`~convexagg.decoders.selection.PenaltyCandidates` of the penalty
        ``model`` leaves to the decoder's cross-validation (None if none), its folds
        seeded by the fit's fold seed: "auto"'s priors, strong to weak, fitted until
        the score rises; a list given, scored whole."""
        if model.choice is None:
            return None
        name, values, stop_when_worse = model.choice
        shown = ", ".join(f"{v:.3g}" for v in values)
        self._log(f"choosing {name} among [{shown}] at alpha={self._choice_alpha():g}")
        return PenaltyCandidates(name, values, p.plan.fold_seed, stop_when_worse=stop_when_worse)

    def _record_choice(self, decoder, candidates=None, scores=None):
        """``entry_weight_shrinkage_``, ``zero_entry_penalty_`` (the values ``decoder``'s
        weights are fitted with) and their ``_scores_`` (``scores``, of the penalty
        ``candidates`` chose). Fit is all-or-nothing (restore_on_failure): these go with
        the rest of the fit."""
        for name in CHOSEN_PENALTIES:
            setattr(self, f"{name}_", getattr(decoder, name))
            chosen = candidates is not None and candidates.name == name
            setattr(self, f"{name}_scores_", scores if chosen else None)
        return decoder

    @property
    def weights_(self):
        """Learned aggregation weights, one per binary classifier (the decoder's)."""
        check_is_fitted(self)
        return self.decoder_.weights_

    @property
    def entry_weights_(self):
        """The weight of each code entry, ``(n_classes, n_classifiers)`` (the decoder's)."""
        check_is_fitted(self)
        return self.decoder_.entry_weights_

    @property
    def zero_entry_weights_(self):
        """The zero entries' weights of each side, ``(2, n_classes, n_classifiers)`` (the
        decoder's)."""
        check_is_fitted(self)
        return self.decoder_.zero_entry_weights_

    @property
    def intercept_(self):
        """Learned class intercepts (zeros without ``fit_intercept``)."""
        check_is_fitted(self)
        return self.decoder_.intercept_

    @property
    def n_iter_(self):
        """Solver iterations of the fit."""
        check_is_fitted(self)
        return self.decoder_.n_iter_


@fill_doc
class ConvexAggregationClassifier(ConvexAggregationBase):
    """The paper's method as one estimator: binaries plus :class:`ConvexDecoder`.

    ``CodeMatrixClassifier(estimator, code=code, decoder=ConvexDecoder(alpha=alpha,
    ...))`` with the decoder's parameters on the estimator, so a grid search can
    set them (``alpha``, ``solver__tol``); they are handed to the decoder whole
    (:data:`DECODER_PARAMETERS`), with what depends on the data resolved for it.

    The default model extends the paper's by a weight per class and binary
    classifier (per nonzero code entry), shrunk toward the classifier's weight
    (``entry_weight_shrinkage="auto"``: 2 / n within [0.001, 0.01] for ``n``
    rows, with the L2 penalty): a classifier may count more for one of its two
    sides than for the other; by weights on the zero code entries where their
    fit is affordable (``zero_entry_penalty="auto"``); by class intercepts; and
    by a weaker voice for the one-vs-rest columns of its ``"ovo+ovr"`` code
    (``column_penalty="auto"``). It is the measured better default
    (QUALITY.md); ``entry_weight_shrinkage=None, zero_entry_penalty=None,
    fit_intercept=False`` fits the paper's model, one weight per binary
    classifier, as :class:`ConvexDecoder` does by default. The paper's other
    training criteria (large margin, stiffness) are
    ``CodeMatrixClassifier(decoder=ConvexDecoder(formulation=...))``; the same
    model with ``alpha`` chosen by cross-validation is
    :class:`ConvexAggregationClassifierCV`.

    Parameters
    ----------
    %(estimator)s
    %(model_code)s
    alpha : float, default=1e-3
        %(alpha.description)s
        The default is ten times :class:`ConvexDecoder`'s: with the weights
        fitted on shuffled out-of-fold outputs it keeps sets of few rows per
        class from confident mistakes (QUALITY.md).
    %(loss)s
    %(penalty)s
    %(l1_ratio)s
    %(model_fit_intercept)s
    %(model_entry_weight_shrinkage)s
    %(model_column_penalty)s
    %(model_zero_entry_penalty)s
    %(solver)s
    %(cv)s
    %(binary_param_grid)s
    %(ensemble)s
    %(n_jobs)s
    %(random_state)s
    %(verbose)s
    %(warm_start)s

    Attributes
    ----------
    %(model_attributes)s
    best_binary_params_ : dict
        With ``binary_param_grid``: the chosen parameters of the binary learner.
    binary_grid_results_ : dict
        With ``binary_param_grid``: ``"params"`` (the candidates, in order) and
        ``"log_loss"`` (ndarray, each one's aggregated out-of-fold log-loss).
    %(fitted_attributes)s

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from convexagg import ConvexAggregationClassifier
    >>> X, y = load_iris(return_X_y=True)
    >>> clf = ConvexAggregationClassifier(code="ovo").fit(X, y)
    >>> clf.predict_proba(X[:2]).shape
    (2, 3)
    """

    _parameter_constraints = aggregation_constraints(
        alpha=ConvexDecoder._parameter_constraints["alpha"],
        binary_param_grid=[dict, list, None],
    )

    def __init__(
        self,
        estimator=None,
        *,
        code="ovo+ovr",
        alpha=1e-3,
        loss="cross_entropy",
        penalty="l2",
        l1_ratio=None,
        fit_intercept=True,
        entry_weight_shrinkage="auto",
        column_penalty="auto",
        zero_entry_penalty="auto",
        solver="auto",
        cv=5,
        binary_param_grid=None,
        ensemble="auto",
        n_jobs=None,
        random_state=0,
        verbose=0,
        warm_start=False,
    ):
        self.estimator = estimator
        self.code = code
        self.alpha = alpha
        self.loss = loss
        self.penalty = penalty
        self.l1_ratio = l1_ratio
        self.fit_intercept = fit_intercept
        self.entry_weight_shrinkage = entry_weight_shrinkage
        self.column_penalty = column_penalty
        self.zero_entry_penalty = zero_entry_penalty
        self.solver = solver
        self.cv = cv
        self.binary_param_grid = binary_param_grid
        self.ensemble = ensemble
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose
        self.warm_start = warm_start

    def _decoder_alpha(self):
        return self.alpha

    def _check_array_api(self, decoder=None, X=None):
        super()._check_array_api(decoder, X)
        if self.binary_param_grid is not None:
            raise ValueError(
                "binary_param_grid cannot apply to array-API X (array_api_dispatch=True): "
                "the candidates are compared on NumPy arrays; pass X as a NumPy array or "
                "leave binary_param_grid=None."
            )

    def _learners(self, X=None):
        """The learner(s), with the chosen ``binary_param_grid`` parameters once fitted
        (``fit_decoder``'s new fold models use them)."""
        learners = super()._learners(X)
        chosen = getattr(self, "best_binary_params_", None)  # a fitted attribute
        if chosen is None or self.binary_param_grid is None:
            return learners
        return learners_with(learners, chosen)

    def _train(self, p, warm=None, fit_decoder=None):
        """With ``binary_param_grid``: the candidates' fold binaries, each scored by the
        out-of-fold log-loss of its aggregation (``fit_decoder``, the fit's model), and
        the best one's binaries."""
        if self.binary_param_grid is None:
            return super()._train(p, warm)
        learners = check_learners(super()._learners(p.X), p.code.shape[1], p.plan.prefit)[0]
        candidates = check_param_grid(self.binary_param_grid, learners, p.plan, self.cv)
        log = Reporter(type(self).__name__, self.verbose)
        best, scores, chosen, oof = select_binaries(
            p, learners, candidates, p.plan, self.n_jobs, fit_decoder, log
        )
        # no warm binaries: refitted in place they would keep their previous parameters
        training = train(p, chosen, p.plan, self.n_jobs, log, None, oof=oof)
        # fit is all-or-nothing (restore_on_failure): these go with the rest of the fit
        self.best_binary_params_ = candidates[best]
        self.binary_grid_results_ = {"params": candidates, "log_loss": scores}
        return training


#: ConvexAggregationClassifier's default ``alpha`` (its signature's, a literal that the
#: command line's help reads); ConvexAggregationClassifierCV chooses its "auto" penalties
#: and lists at this alpha before its path
DEFAULT_ALPHA = signature(ConvexAggregationClassifier).parameters["alpha"].default
