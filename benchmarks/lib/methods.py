"""The estimators the probability-quality suites compare, as factories ``seed -> estimator``.

Every factory takes the split's (or outer fold's) seed and returns an unfitted estimator.
The convexagg settings are built on a *pinned* model unless they name another value, so
that each method's records keep their meaning when the library's defaults change:

* :func:`ca`: version 0.2's model (one weight per binary classifier, ``alpha=1e-4``, no
  intercepts, one-vs-one, no column penalty, folds in row order);
* :func:`library`: the library's own defaults plus the given parameters;
  :func:`library_default` is ``ConvexAggregationClassifier()`` itself.

Prototypes that are not in the library (settings screened as candidate defaults):
:class:`CrossValidatedCAlpha` (the binaries' ``C`` and ``alpha`` cross-validated on the
out-of-fold outputs), :class:`FamilyC` (a ``C`` of their own for the one-vs-rest
binaries), :class:`Mixture`, :class:`LogPooled`, :class:`AlphaPerRow`; the peers:
scikit-learn's estimators and calibration methods. The method tables of the two suites
(``lib.ten_sets.METHODS``, ``lib.kull.METHODS``) name these factories.
"""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin

FOLDS = 5
LINEAR = "linear"  # family labels of the tables
NONLINEAR = "non-linear"


def base_lr():
    from sklearn.linear_model import LogisticRegression

    return LogisticRegression(max_iter=1000)


def shuffled_folds(seed):
    from sklearn.model_selection import StratifiedKFold

    return StratifiedKFold(FOLDS, shuffle=True, random_state=seed)


def holdout(seed):
    from sklearn.model_selection import StratifiedShuffleSplit

    return StratifiedShuffleSplit(1, test_size=0.2, random_state=seed)


# version 0.2's model: one weight per binary classifier (the paper's), alpha=1e-4, no
# intercepts, no zero entries; with ONE_VS_ONE_PARAMS, the model of ``ca``
SHARED_WEIGHTS_PARAMS = {
    "entry_weight_shrinkage": None,
    "alpha": 1e-4,
    "fit_intercept": False,
    "zero_entry_penalty": None,
}
ONE_VS_ONE_PARAMS = {"code": "ovo", "column_penalty": None}


def row_order(cv=FOLDS):
    """An int ``cv`` as the records were measured: stratified folds in row order (what
    ``check_cv`` makes of it; the library's int now shuffles them)."""
    from sklearn.model_selection import StratifiedKFold

    isint = isinstance(cv, int) and not isinstance(cv, bool)
    return StratifiedKFold(cv) if isint else cv


def ca(**params):
    """A ``ConvexAggregationClassifier`` with logistic-regression binaries on version
    0.2's default model -- one-vs-one, shared weights (``entry_weight_shrinkage=None``),
    no column penalty -- unless
    ``params`` say otherwise, so that each variant's records keep their meaning when the
    library's default changes; a callable ``cv`` is called with the split's seed."""

    def make(seed):
        from convexagg import ConvexAggregationClassifier

        given = {k: v(seed) if callable(v) else v for k, v in params.items()}
        given = {
            **SHARED_WEIGHTS_PARAMS,
            **ONE_VS_ONE_PARAMS,
            **given,
            "cv": row_order(given.get("cv", FOLDS)),
        }
        return ConvexAggregationClassifier(base_lr(), random_state=seed, **given)

    return make


def library_default(seed):
    """``ConvexAggregationClassifier()`` as the library defines it, its default learner
    included (a ``StandardScaler`` and a ``LogisticRegression`` per binary), seeded by the
    split."""
    from convexagg import ConvexAggregationClassifier

    return ConvexAggregationClassifier(random_state=seed)


def library(**params):
    """``ConvexAggregationClassifier(**params)`` on the library's other defaults: its own
    folds (shuffled by ``random_state``; each ``LogisticRegression`` column's folds
    fitted in turn, from the previous fold's solution)."""

    def make(seed):
        from convexagg import ConvexAggregationClassifier

        return ConvexAggregationClassifier(base_lr(), random_state=seed, **params)

    return make


# The named settings of the library (method name -> ``library`` parameters): each pins
# what it measured where the library's default has another value.
ENTRY_0_01_PARAMS = {"entry_weight_shrinkage": 0.01, "zero_entry_penalty": None}
OVO_CHAINED = "convexagg ovo, the library's folds (chained)"
OVO_OVR_NO_INTERCEPTS = "convexagg ovo+ovr, no intercepts (the third switch)"
OVO_OVR_ENTRY_0_01 = "convexagg ovo+ovr, intercepts, entry 0.01 (the fourth switch)"
SHRINKAGE_CHOSEN = "convexagg entry shrinkage chosen from 0.01, 0.003, 0.001"
ZERO_HELD = "convexagg zero entries held >= 0, 20/n"
ZERO_FREE_SIGN = "convexagg zero entries free in sign, 80/n"
ZERO_CHOSEN = "convexagg zero entries chosen from 80/n, 20/n, 5/n, 1.25/n"
NO_ZERO_ENTRIES = "convexagg, no zero entries (the fifth switch)"
LIBRARY_SETTINGS = {
    OVO_CHAINED: {"code": "ovo", "fit_intercept": False, **ENTRY_0_01_PARAMS},
    "convexagg ovo+ovr, no intercepts, alpha=3e-4": {
        "alpha": 3e-4,
        "fit_intercept": False,
        **ENTRY_0_01_PARAMS,
    },
    OVO_OVR_NO_INTERCEPTS: {"fit_intercept": False, **ENTRY_0_01_PARAMS},
    OVO_OVR_ENTRY_0_01: ENTRY_0_01_PARAMS,
    # the zero entries' weights at 20 / n, measured held >= 0 (a rerun fits them free in
    # sign, with the prior "auto" chooses)
    ZERO_HELD: {**ENTRY_0_01_PARAMS, "zero_entry_penalty": "auto"},
    # the entry weights' shrinkage chosen on the training outputs (3 folds)
    SHRINKAGE_CHOSEN: {"entry_weight_shrinkage": [0.01, 0.003, 0.001]},
    # the zero entries' weights free in sign at 80 / n, measured with that fixed prior (a
    # rerun chooses the prior, as ZERO_CHOSEN)
    ZERO_FREE_SIGN: {"zero_entry_penalty": "auto"},
    # the zero entries' prior chosen by 3 folds, measured without "auto"'s size limits (a
    # rerun on letter leaves the zero entries out)
    ZERO_CHOSEN: {"zero_entry_penalty": "auto"},
    NO_ZERO_ENTRIES: {"zero_entry_penalty": None},
}
# one-vs-one, shuffled folds, alpha=1e-3, each fold's binaries fitted from scratch (a rerun
# chains the folds: OVO_CHAINED)
OVO_SHUFFLED_COLD = (
    "convexagg ovo, shuffled folds, alpha=1e-3 (the second switch, folds fitted cold)"
)
# version 0.2's model (ca()), and the same with entry weights 0.01 (folds in row order)
SHARED_WEIGHTS = "convexagg shared weights (0.2 default)"
ENTRY_0_01_ROW_ORDER = "convexagg entry weights 0.01, folds in row order (the first switch)"


# -- prototypes of settings not in the library ---------------------------------------------


def _family_penalty(penalty, ovr_factor, ovr_extra=0.0):
    """``penalty`` (shared weights) with the one-vs-rest columns' quadratic term ``ovr_factor``
    times the one-vs-one columns' plus ``ovr_extra`` (the aggregation prefers one-vs-one):
    ``1/2 sum_l s_l w_l^2``, ``s_l = alpha`` on the one-vs-one columns and ``ovr_factor alpha
    + ovr_extra`` on the last ``K`` of the ``K(K-1)/2 + K`` columns of ``code="ovo+ovr"``
    (found from the number of weights, so only that code is accepted)."""
    from dataclasses import dataclass

    from convexagg.aggregation import L1, InterceptRidge, Penalty, PenaltyTerm

    if penalty.entry_weights:
        raise ValueError("the family penalty is prototyped for shared weights")

    @dataclass(frozen=True)
    class FamilyRidge(PenaltyTerm):
        l2: float = 0.0
        factor: float = 1.0
        extra: float = 0.0

        def _scale(self, n_weights):
            K = int(round((np.sqrt(1 + 8 * n_weights) - 1) / 2))
            if K * (K + 1) // 2 != n_weights:
                raise ValueError(f"not the shared weights of code='ovo+ovr': {n_weights}")
            s = np.ones(n_weights)
            s[n_weights - K :] = self.factor + self.extra / max(self.l2, 1e-300)
            return s

        def value(self, z):
            return 0.5 * self.l2 * float(z @ (self._scale(z.size) * z))

        def curvature(self, n):
            return self.l2 * self._scale(n)

        def restrict(self, weights):  # the blocked solver's active sets: not prototyped
            raise NotImplementedError("the family penalty is prototyped for the dense solver")

    ridge = FamilyRidge(l2=penalty.l2, factor=ovr_factor, extra=ovr_extra)
    return Penalty.from_terms(ridge, L1(penalty.l1), InterceptRidge(penalty.intercept_l2))


def _family_decoder(ovr_factor, ovr_extra):
    from convexagg import ConvexDecoder

    class FamilyDecoder(ConvexDecoder):
        def penalty_for(self, alpha=None, code=None):
            return _family_penalty(super().penalty_for(alpha, code), ovr_factor, ovr_extra)

    return FamilyDecoder


def _with_family(cls, ovr_factor, ovr_extra=0.0):
    """``cls`` (a convexagg estimator) with the family penalty; ``cls`` itself at 1, 0."""
    if ovr_factor == 1 and ovr_extra == 0:
        return cls
    decoder_cls = _family_decoder(ovr_factor, ovr_extra)

    class Family(cls):
        def _make_decoder(self, **overrides):
            return decoder_cls(**super()._make_decoder(**overrides).get_params(deep=False))

    Family.__name__ = cls.__name__
    return Family


def floored_lr(floor):
    """``LogisticRegression`` whose probabilities are clipped into ``[floor, 1 - floor]``
    (a bounded loss: one output adds at most ``-log(floor)`` times its weight)."""
    from sklearn.linear_model import LogisticRegression

    if not floor:
        return LogisticRegression

    class FlooredLR(LogisticRegression):
        def predict_proba(self, X):
            P = super().predict_proba(X)
            if P.shape[1] == 2:
                q = np.clip(P[:, 1], floor, 1.0 - floor)
                return np.column_stack([1.0 - q, q])
            P = np.clip(P, floor, None)
            return P / P.sum(axis=1, keepdims=True)

    FlooredLR.__name__ = "LogisticRegression"
    return FlooredLR


class _PredictsWithModel:
    """The prototypes' predictions: those of the fitted ``model_`` they wrap."""

    def predict_proba(self, X):
        return self.model_.predict_proba(X)

    def predict(self, X):
        return self.model_.predict(X)


class CrossValidatedCAlpha(_PredictsWithModel, ClassifierMixin, BaseEstimator):
    """convexagg with the binaries' ``C`` and the aggregation's ``alpha`` both chosen by
    the aggregation's cross-validated log-loss on the out-of-fold outputs (a check of
    the in-sample ``binary_param_grid`` choice): one
    ``ConvexAggregationClassifierCV`` per ``C``. ``rule="min"``: the one of smallest mean
    validation log-loss (over its ``alpha`` grid) kept; ``"1se"``: glmnet's
    ``lambda.1se`` -- of the ``(C, alpha)`` whose mean is within one standard error
    (over the ``alpha_cv`` folds) of the smallest, the smallest ``C``, then the largest
    ``alpha``, refitted there. ``ovr_factor``, ``ovr_extra``: the one-vs-rest columns'
    penalty that many times the one-vs-one columns', plus that much (``code="ovo+ovr"``);
    ``floor``: the binaries' probabilities clipped into ``[floor, 1 - floor]``."""

    def __init__(
        self,
        code,
        Cs,
        alphas,
        seed,
        alpha_cv=5,
        rule="min",
        ovr_factor=1.0,
        ovr_extra=0.0,
        floor=0.0,
    ):
        self.code, self.Cs, self.alphas, self.seed = code, Cs, alphas, seed
        self.alpha_cv, self.rule, self.floor = alpha_cv, rule, floor
        self.ovr_factor, self.ovr_extra = ovr_factor, ovr_extra

    def fit(self, X, y):
        from convexagg import ConvexAggregationClassifier, ConvexAggregationClassifierCV

        learner = floored_lr(self.floor)
        cv_cls = _with_family(ConvexAggregationClassifierCV, self.ovr_factor, self.ovr_extra)
        fits = []
        for c in self.Cs:
            model = cv_cls(
                learner(C=c, max_iter=1000),
                code=self.code,
                alphas=self.alphas,
                alpha_cv=row_order(self.alpha_cv),
                cv=row_order(),
                random_state=self.seed,
            ).fit(X, y)
            fits.append((c, model))
        means = np.array([m.cv_scores_.mean(axis=1) for _, m in fits])  # (n_C, n_alphas)
        i, j = np.unravel_index(np.argmin(means), means.shape)
        if self.rule == "min":
            self.model_ = fits[i][1]
            self.C_, self.alpha_ = fits[i][0], float(fits[i][1].alpha_)
        else:
            scores = fits[i][1].cv_scores_[j]
            bound = means[i, j] + scores.std(ddof=1) / np.sqrt(scores.size)
            order = sorted(
                ((c, -a, k, a) for k, (c, m) in enumerate(fits) for a in m.alphas_),
            )
            c_, _, k, a = next(
                o for o in order if means[o[2], list(fits[o[2]][1].alphas_).index(o[3])] <= bound
            )
            self.C_, self.alpha_ = c_, float(a)
            model = fits[k][1]
            if a != model.alpha_:
                model = _with_family(ConvexAggregationClassifier, self.ovr_factor, self.ovr_extra)(
                    learner(C=c_, max_iter=1000),
                    code=self.code,
                    column_penalty=None,  # the family's own penalty only
                    random_state=self.seed,
                    cv=row_order(),
                    **{**SHARED_WEIGHTS_PARAMS, "alpha": a},
                ).fit(X, y)
            self.model_ = model
        self.classes_ = self.model_.classes_
        return self


def cv_c_alpha(code, Cs=(0.01, 0.1, 1.0, 10.0), alphas=7, **options):
    return lambda seed: CrossValidatedCAlpha(code, Cs, alphas, seed, **options)


class Mixture(ClassifierMixin, BaseEstimator):
    """The mean of the probabilities of several fitted models: a row's log-loss is then at
    most ``log(n_models)`` above that of the model that is best on it, so one model's
    confident mistake costs at most that much."""

    def __init__(self, models):
        self.models = models

    def fit(self, X, y):
        self.models_ = [m.fit(X, y) for m in self.models]
        self.classes_ = self.models_[0].classes_
        return self

    def predict_proba(self, X):
        return np.mean([m.predict_proba(X) for m in self.models_], axis=0)

    def predict(self, X):
        return self.classes_[np.argmax(self.predict_proba(X), axis=1)]


def mixture(*factories):
    return lambda seed: Mixture([f(seed) for f in factories])


class LogPooled(ClassifierMixin, BaseEstimator):
    """A convexagg model whose fold ensemble is pooled in log space -- the normalised
    geometric mean of the members' probabilities -- instead of the mean of the
    probabilities, which is underconfident when the members differ (a linear pool of
    calibrated forecasts is: Ranjan & Gneiting 2010)."""

    def __init__(self, model):
        self.model = model

    def fit(self, X, y):
        from sklearn.base import clone

        self.model_ = clone(self.model).fit(X, y)
        self.classes_ = self.model_.classes_
        return self

    def predict_proba(self, X):
        from scipy.special import softmax

        logs = self.model_._member_decodes(X, "predict_log_proba")
        return softmax(np.mean(logs, axis=0), axis=1)

    def predict(self, X):
        return self.classes_[np.argmax(self.predict_proba(X), axis=1)]


def log_pooled(factory):
    return lambda seed: LogPooled(factory(seed))


class AlphaPerRow(_PredictsWithModel, ClassifierMixin, BaseEstimator):
    """A convexagg model whose ``alpha`` is ``per_row / n_samples`` at fit: the
    objective is the *mean* log-loss plus ``alpha/2 |w|^2``, so a fixed prior on the
    weights is an ``alpha`` that falls as ``1 / n`` (scikit-learn's ``C`` multiplies the
    *sum* of the losses: the same scaling)."""

    def __init__(self, model, per_row):
        self.model = model
        self.per_row = per_row

    def fit(self, X, y):
        from sklearn.base import clone

        alpha = self.per_row / len(y)
        self.model_ = clone(self.model).set_params(alpha=alpha).fit(X, y)
        self.classes_ = self.model_.classes_
        return self


def alpha_per_row(factory, per_row):
    return lambda seed: AlphaPerRow(factory(seed), per_row)


# Candidate defaults, screened on the ten sets' glass and wine splits where the Kull-best
# setting is worst, and ranked on both suites. C and alpha cross-validated (name ->
# cv_c_alpha arguments): the one-vs-rest columns penalised more, a floor on the binaries'
# probabilities, the one-standard-error rule; with CHEAP_GRID, 3 values of C, 5 of alpha,
# 3 alpha folds.
CV_C_ALPHA_CANDIDATES = {
    "ovo+ovr CV, ovr penalty x10": dict(code="ovo+ovr", ovr_factor=10.0),
    "ovo+ovr CV, ovr penalty x100": dict(code="ovo+ovr", ovr_factor=100.0),
    "ovo+ovr CV, floor 0.01": dict(code="ovo+ovr", floor=0.01),
    "ovo+ovr CV, floor 0.05": dict(code="ovo+ovr", floor=0.05),
    "ovo+ovr CV, 1se": dict(code="ovo+ovr", rule="1se"),
    "ovo CV, 1se": dict(code="ovo", rule="1se"),
}
# alpha kept at 1e-4, only C cross-validated, and the one-vs-rest columns shrunk toward 0 at
# a strength of their own
CV_C_CANDIDATES = {
    "ovo+ovr, C CV": dict(code="ovo+ovr", alphas=[1e-4]),
    "ovo+ovr, C CV, ovr penalty +0.1": dict(code="ovo+ovr", alphas=[1e-4], ovr_extra=0.1),
    "ovo+ovr, C CV, ovr penalty +1": dict(code="ovo+ovr", alphas=[1e-4], ovr_extra=1.0),
    "ovo, C CV": dict(code="ovo", alphas=[1e-4]),
}
# the one-vs-rest columns shrunk toward 0, C and alpha both cross-validated
CV_OVR_SHRUNK_CANDIDATES = {
    "ovo+ovr CV, ovr penalty +1": dict(code="ovo+ovr", ovr_extra=1.0),
    "ovo+ovr CV, ovr penalty +0.1": dict(code="ovo+ovr", ovr_extra=0.1),
}
CHEAP_GRID = dict(Cs=(0.1, 1.0, 10.0), alphas=5, alpha_cv=3)
CHEAP_C_GRID = dict(Cs=(0.1, 1.0, 10.0), alpha_cv=3)
# one-vs-one alone and one-vs-one-and-rest fitted separately and their probabilities
# averaged (name -> factory)
MIXTURE_CANDIDATES = {
    "mean of ovo CV and ovo+ovr CV, cheap": mixture(
        cv_c_alpha("ovo", **CHEAP_GRID), cv_c_alpha("ovo+ovr", **CHEAP_GRID)
    ),
}


# Cheap settings, no cross-validation of C or alpha: the one-vs-rest binaries less confident
# than the one-vs-one (a smaller C of their own), or the one-vs-rest columns shrunk toward 0
# at C=1 and alpha=1e-4


class FamilyC(_PredictsWithModel, ClassifierMixin, BaseEstimator):
    """``ConvexAggregationClassifier(code="ovo+ovr")`` with the one-vs-one binaries at
    ``C_ovo`` and the one-vs-rest binaries at ``C_ovr``: the library's list of per-column
    learners, built at ``fit`` from the number of classes (a column of
    ``make_code("ovo+ovr", K)`` without a 0 is a one-vs-rest column, ``K >= 3``).
    ``ovr_extra``: the one-vs-rest columns' extra penalty of :func:`_family_penalty`."""

    def __init__(self, C_ovr, seed, C_ovo=1.0, ovr_extra=0.0):
        self.C_ovr, self.seed, self.C_ovo, self.ovr_extra = C_ovr, seed, C_ovo, ovr_extra

    def fit(self, X, y):
        from sklearn.linear_model import LogisticRegression

        from convexagg import ConvexAggregationClassifier
        from convexagg.codes import make_code

        code = make_code("ovo+ovr", np.unique(y).size)
        if code.shape[0] < 3:
            raise ValueError("the families of code='ovo+ovr' coincide under 3 classes")
        learners = [
            LogisticRegression(C=self.C_ovr if np.all(col != 0) else self.C_ovo, max_iter=1000)
            for col in code.T
        ]
        cls = _with_family(ConvexAggregationClassifier, 1.0, self.ovr_extra)
        self.model_ = cls(
            learners,
            code="ovo+ovr",
            column_penalty=None,  # the family's own penalty only
            random_state=self.seed,
            cv=row_order(),
            **SHARED_WEIGHTS_PARAMS,
        )
        self.model_.fit(X, y)
        self.classes_ = self.model_.classes_
        return self


def family_c(C_ovr, **options):
    return lambda seed: FamilyC(C_ovr, seed, **options)


def ovr_penalty(ovr_extra, **params):
    """``code="ovo+ovr"`` at ``C=1`` and the default ``alpha``, the one-vs-rest columns'
    penalty ``+ovr_extra`` (no cross-validation): the library's
    ``column_penalty={"ovr": ovr_extra}``, which gives the probabilities of the
    prototype ``_with_family(..., 1.0, ovr_extra)`` bit for bit on iris, wine and
    digits (tests/test_column_penalty.py checks it to the solver's tolerance).
    ``params``: further options of the classifier."""

    def make(seed):
        from convexagg import ConvexAggregationClassifier

        return ConvexAggregationClassifier(
            base_lr(),
            code="ovo+ovr",
            column_penalty={"ovr": ovr_extra},
            random_state=seed,
            **{**SHARED_WEIGHTS_PARAMS, "cv": row_order(), **params},
        )

    return make


# name -> factory; "ovr binaries C=1" is plain code="ovo+ovr" through the per-column
# learners (the prototype's check: the same records to the last digit)
NO_CV_CANDIDATES = {
    "ovo+ovr, ovr binaries C=0.1": family_c(0.1),
    "ovo+ovr, ovr binaries C=0.01": family_c(0.01),
    "ovo+ovr, C=1, ovr penalty +0.1": ovr_penalty(0.1),
    "ovo+ovr, C=1, ovr penalty +1": ovr_penalty(1.0),
}
PER_COLUMN_CHECK = {"ovo+ovr, ovr binaries C=1": family_c(1.0)}

# the one-vs-rest penalty +0.1 at C=1 with entry weights 0.01, intercepts or alpha=1e-3
# added, no cross-validation
OVR_PENALTY_ADDITIONS = {
    "ovo+ovr, C=1, ovr penalty +0.1, entry 0.01": ovr_penalty(0.1, entry_weight_shrinkage=0.01),
    "ovo+ovr, C=1, ovr penalty +0.1, intercepts": ovr_penalty(0.1, fit_intercept=True),
    "ovo+ovr, C=1, ovr penalty +0.1, alpha=1e-3": ovr_penalty(0.1, alpha=1e-3),
}


def coded(decoder, **params):
    """``CodeMatrixClassifier`` with the decoder ``decoder`` (a class of
    ``convexagg.decoders``) on the one-vs-one binaries and folds of :func:`ca`."""

    def make(seed):
        from convexagg import CodeMatrixClassifier, decoders

        given = {**params, "cv": row_order(params.get("cv", FOLDS))}
        return CodeMatrixClassifier(
            base_lr(), decoder=getattr(decoders, decoder)(), random_state=seed, **given
        )

    return make


def lrcv(seed):
    """Multinomial ``LogisticRegressionCV``: 10 values of ``C``, 5 folds, its default score."""
    from sklearn.linear_model import LogisticRegressionCV

    return LogisticRegressionCV(Cs=10, cv=FOLDS, max_iter=1000)


def ovr_lr(seed):
    """``OneVsRestClassifier(LogisticRegression())``: its normalised probabilities."""
    from sklearn.multiclass import OneVsRestClassifier

    return OneVsRestClassifier(base_lr())


def calibrated_svc(method, linear=True):
    """``CalibratedClassifierCV`` of ``LinearSVC()`` (or of an RBF ``SVC()``, one calibrator
    on the 5 folds' outputs) with ``method``."""

    def make(seed):
        from sklearn.calibration import CalibratedClassifierCV
        from sklearn.svm import SVC, LinearSVC

        if linear:
            return CalibratedClassifierCV(LinearSVC(), method=method, cv=FOLDS)
        return CalibratedClassifierCV(SVC(), method=method, cv=FOLDS, ensemble=False)

    return make


def calibrated_ovo(seed):
    """The temperature-scaled one-vs-one: the end-to-end benchmark's baseline."""
    from sklearn.calibration import CalibratedClassifierCV
    from sklearn.multiclass import OneVsOneClassifier

    return CalibratedClassifierCV(OneVsOneClassifier(base_lr()), method="temperature", cv=FOLDS)


def hgb(seed):
    from sklearn.ensemble import HistGradientBoostingClassifier

    return HistGradientBoostingClassifier(random_state=seed)


def rf(seed):
    from sklearn.ensemble import RandomForestClassifier

    return RandomForestClassifier(n_estimators=300, random_state=seed, n_jobs=1)


def nonlinear(kind, cv):
    """convexagg on RBF ``SVC`` margins (``kind="svc"``, one-vs-one, logistic loss) or on
    gradient-boosted one-vs-rest binaries (``"hgb"``), version 0.2's model otherwise."""

    def make(seed):
        from sklearn.ensemble import HistGradientBoostingClassifier
        from sklearn.svm import SVC

        from convexagg import ConvexAggregationClassifier

        if kind == "svc":  # margins: decision_function, a margin loss
            return ConvexAggregationClassifier(
                SVC(),
                code="ovo",
                loss="logistic",
                cv=row_order(cv),
                random_state=seed,
                **SHARED_WEIGHTS_PARAMS,
            )
        return ConvexAggregationClassifier(
            HistGradientBoostingClassifier(max_iter=100),
            code="ovr",
            cv=row_order(cv),
            random_state=seed,
            **SHARED_WEIGHTS_PARAMS,
        )

    return make
