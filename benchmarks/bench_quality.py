"""Probability quality: convexagg's settings and decoders against today's calibration methods.

    python benchmarks/bench_quality.py [--data-dir DIR] [--out benchmarks/results/quality]
    python benchmarks/bench_quality.py --suite kull [--kull-dir DIR] [--by-set]
        [--out benchmarks/results/quality/kull]

Two suites. ``--suite kull``: the 23 multiclass sets of Kull et al. (NeurIPS
2019) in ``--kull-dir`` (default ``<data-dir>/kull2019``), 3-fold stratified
cross-validation, classes under 6 rows dropped (listed per set), at most 3,000
rows (stratified subsample), the features standardised on the training part,
``LogisticRegression(max_iter=1000)`` binaries and base learner. Linear
peers: the default, multinomial ``LogisticRegression()``, ``code="ovr"``,
``LogisticRegressionCV`` (10 C, 5 folds, log-loss), LR + temperature
(``CalibratedClassifierCV``), LR + structured matrix scaling (``probmetrics``)
and LR + Dirichlet calibration (``dirichletcal``), both fitted as Kull et al.
do (3 inner folds: model on two, calibrator on the third, the 3 averaged), and
``CalibratedClassifierCV(OneVsOneClassifier(LR), method="temperature")``;
non-linear: HGB, HGB + temperature, HGB + Dirichlet, random forest, convexagg
on HGB binaries (one-vs-rest, cv=5); the default's ablations
(``fit_intercept=True``, ``cv=None``, ``ensemble=False``); the "left to
calibrate" check (temperature / Dirichlet fitted on the default's 3-fold
out-of-fold probabilities). Tables (``--out``/tables.md): average ranks of
log-loss, Brier and classwise ECE per family, win/loss counts, log-loss per
set, the check, run times and the issue-21 targets. ``_kull_suite.py`` holds
the methods (one line each) and the tables. ``--suite ten`` (the default),
described below.

On the data sets of ``--data-dir`` (the paper's: glass, segment, satimage,
pendigits, vowel, letter, all_leukemia_galgo; letter and pendigits subsampled
to ``--max-rows`` rows (2500: satimage too), stratified) and scikit-learn's bundled digits, wine
and iris: ``--splits`` stratified 80/20 splits, the features standardised on
the training part (gene-expression data: the 500 features of largest
training variance first). On every split, every method of :data:`METHODS`:

* ``convexagg`` (the default ``ConvexAggregationClassifier``) and its variants:
  the paper's in-sample weights (``cv=None``), out-of-fold weights with the
  fold binaries kept as an ensemble or refitted (5 or 3 folds), a 20 % held-out
  part, class intercepts, one-vs-rest and ECOC codes;
* the other decoders on the same one-vs-one binaries (``CodeMatrixClassifier``
  with the same folds and members): pairwise coupling, generalized
  Bradley-Terry, loss-based decoding;
* peers: ``LogisticRegressionCV`` (multinomial), ``OneVsRestClassifier(
  LogisticRegression())``, ``CalibratedClassifierCV(LinearSVC())`` with sigmoid
  and temperature scaling, ``CalibratedClassifierCV(SVC(), ensemble=False)``
  (scikit-learn 1.9's replacement of ``SVC(probability=True)``),
  ``CalibratedClassifierCV(OneVsOneClassifier(LogisticRegression()),
  method="temperature")``, ``HistGradientBoostingClassifier``,
  ``RandomForestClassifier``;
* issue 21's candidate defaults (``CANDIDATES``, ``CANDIDATES_2`` .. ``_6``, prototyped
  here: a penalty of their own on the one-vs-rest columns, a floor on the binaries'
  probabilities, the one-standard-error rule, cheaper grids, the one-vs-rest binaries at a
  ``C`` of their own; screened by ``diagnose_glass_wine.py --candidates``);
* convexagg with non-linear binaries: RBF ``SVC`` margins and
  ``HistGradientBoostingClassifier`` (one-vs-rest: a gradient-boosted model per
  class), in-sample and out-of-fold.

Scores on the test part: accuracy, Brier (sum over classes), log-loss,
top-label and classwise calibration error (15 equal-width bins), fit and
predict seconds. One JSON record per (data set, split, method) under
``--out`` (written atomically; a rerun computes only what is missing); the
tables (mean and standard deviation over the splits) and the targets' checks
are printed and written to ``--out``/tables.md.
"""

from __future__ import annotations

import json
import os
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C  # noqa: E402

PAPER_SETS = ("glass", "segment", "satimage", "pendigits", "vowel", "letter", "all_leukemia_galgo")
BUNDLED = ("digits", "wine", "iris")
FOLDS = 5
LINEAR = "linear"  # family labels of the tables
NONLINEAR = "non-linear"


def base_lr():
    from sklearn.linear_model import LogisticRegression

    return LogisticRegression(max_iter=1000)


def _shuffled_folds(seed):
    from sklearn.model_selection import StratifiedKFold

    return StratifiedKFold(FOLDS, shuffle=True, random_state=seed)


def _holdout(seed):
    from sklearn.model_selection import StratifiedShuffleSplit

    return StratifiedShuffleSplit(1, test_size=0.2, random_state=seed)


# version 0.2's default model: one weight per binary classifier (the paper's), alpha=1e-4,
# its weights on folds in row order (scikit-learn's int cv). Every convexagg setting here is
# built on it unless it names another value, so that the records keep their meaning when
# the library's defaults change (issue 21 switched to entry weights, then to shuffled folds
# and alpha=1e-3, then to intercepts).
SHARED_WEIGHTS = {
    "entry_weight_shrinkage": None,
    "alpha": 1e-4,
    "fit_intercept": False,
    "zero_entry_penalty": None,  # the sixth switch's "auto" where entry weights are given
}
# ... and its code: one-vs-one, no column penalty (the third switch made the library's
# default "ovo+ovr" with column_penalty="auto")
ONE_VS_ONE = {"code": "ovo", "column_penalty": None}


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
        given = {**SHARED_WEIGHTS, **ONE_VS_ONE, **given, "cv": row_order(given.get("cv", FOLDS))}
        return ConvexAggregationClassifier(base_lr(), random_state=seed, **given)

    return make


def library_default(seed):
    """``ConvexAggregationClassifier()`` as the library defines it (logistic-regression
    binaries as everywhere here)."""
    return library()(seed)


def library(**params):
    """``ConvexAggregationClassifier(**params)`` on the library's other defaults: its own
    folds (shuffled by ``random_state``; each ``LogisticRegression`` column's folds
    fitted in turn, from the previous fold's solution)."""

    def make(seed):
        from convexagg import ConvexAggregationClassifier

        return ConvexAggregationClassifier(base_lr(), random_state=seed, **params)

    return make


# issue 21, after each column's folds were chained: the second switch's default (ovo)
# fitted by the library as it stands. The one-vs-one-and-rest survivor measured beside it
# ("convexagg ovo+ovr, ovr penalty +0.1, the library's folds (chained)") became the default
# at the third switch; the default's records reproduced its records exactly, which were
# then removed
LIBRARY_OVO = "convexagg ovo, the library's folds (chained)"
# after the third switch, what the left-to-calibrate check still found (Dirichlet on car
# and balance-scale, optdigits underconfident): a smaller alpha, and class intercepts -- the
# fourth switch, whose candidate's records the default's rerun reproduced and replaced
THIRD_SWITCH = "convexagg ovo+ovr, no intercepts (the third switch)"
SHRINKAGE_CHOSEN = "convexagg entry shrinkage chosen from 0.01, 0.003, 0.001"
# the fifth switch's default ("auto": 2 / n within [0.001, 0.01]) was measured as a
# prototype (ShrinkagePerRow, in this file at beecf1a), whose records the default's then
# reproduced and replaced; the default before it keeps its records under this name
FOURTH_SWITCH = "convexagg ovo+ovr, intercepts, entry 0.01 (the fourth switch)"
# the settings measured when "auto" meant entry weights 0.01 pin it, and the zero entries
# off (the sixth switch's "auto"; their records keep their meaning)
ENTRY_0_01 = {"entry_weight_shrinkage": 0.01, "zero_entry_penalty": None}
ZERO_HELD = "convexagg zero entries held >= 0, 20/n"
ZERO_FREE_SIGN = "convexagg zero entries free in sign, 80/n"
ZERO_CHOSEN = "convexagg zero entries chosen from 80/n, 20/n, 5/n, 1.25/n"
# the sixth switch made ZERO_CHOSEN the default where the zero entries' fit is affordable
# (zero_entry_penalty="auto", ZERO_ENTRY_AUTO_MAX_WEIGHTS and _ROWS); the default's rerun
# reproduced ZERO_CHOSEN's records on every Kull set and on nine of the ten sets (letter,
# beyond the limit, reproduced this one's); the default before it keeps its records here
FIFTH_SWITCH = "convexagg, no zero entries (the fifth switch)"
LIBRARY_SETTINGS = {
    LIBRARY_OVO: {"code": "ovo", "fit_intercept": False, **ENTRY_0_01},
    "convexagg ovo+ovr, no intercepts, alpha=3e-4": {
        "alpha": 3e-4,
        "fit_intercept": False,
        **ENTRY_0_01,
    },
    THIRD_SWITCH: {"fit_intercept": False, **ENTRY_0_01},
    FOURTH_SWITCH: ENTRY_0_01,
    # after the fourth switch, what Dirichlet calibration still found on car, balance-scale
    # and segment: weights on the code's zero entries (20 / n, "auto" then),
    # measured while they were held >= 0 (a rerun would fit them free in sign, "auto" as
    # it is now)
    ZERO_HELD: {**ENTRY_0_01, "zero_entry_penalty": "auto"},
    # what was left after that: the shrinkage best for one set costs another, so the
    # aggregation chooses it on its training outputs (3 folds)
    SHRINKAGE_CHOSEN: {"entry_weight_shrinkage": [0.01, 0.003, 0.001]},
    # after the fifth switch, what Dirichlet still found on car: the zero entries' weights
    # free in sign (a classifier that does not separate a class may speak for it or against),
    # measured while "auto" was 80 / n (a rerun would now choose, as ZERO_CHOSEN)
    ZERO_FREE_SIGN: {"zero_entry_penalty": "auto"},
    # what was left after that: 80 / n held the large sets back (vowel, segment, car and
    # balance-scale gain most from the weakest prior), so "auto" chooses (3 folds); measured
    # before "auto" had its limits (a rerun on letter would now leave the zero entries out)
    ZERO_CHOSEN: {"zero_entry_penalty": "auto"},
    FIFTH_SWITCH: {"zero_entry_penalty": None},
}
# issue 21's second switch (one-vs-one, shuffled folds, alpha=1e-3), the default until the
# third (one-vs-one and one-vs-rest): its records were measured before each column's folds
# were chained (a rerun now chains them: LIBRARY_OVO's records)
SECOND_SWITCH = "convexagg ovo, shuffled folds, alpha=1e-3 (the second switch, folds fitted cold)"


# version 0.2's default (one weight per binary classifier, the paper's model), kept beside
# today's default (entry weights 0.01 since issue 21's switch): its records are the old
# default's, renamed
SHARED = "convexagg shared weights (0.2 default)"
ENTRY_DEFAULT = "convexagg entry weights 0.01, folds in row order (the first switch)"


# -- issue 21's candidate defaults, prototyped here (no library change) ---------------------


def _family_penalty(penalty, ovr_factor, ovr_extra=0.0):
    """``penalty`` (shared weights) with the one-vs-rest columns' quadratic term ``ovr_factor``
    times the one-vs-one columns' plus ``ovr_extra`` (the aggregation prefers one-vs-one):
    ``1/2 sum_l s_l w_l^2``, ``s_l = alpha`` on the one-vs-one columns and ``ovr_factor alpha
    + ovr_extra`` on the last ``K`` of the ``K(K-1)/2 + K`` columns of ``code="ovo+ovr"``
    (found from the number of weights, so only that code is accepted)."""
    from dataclasses import dataclass

    from convexagg.aggregation import Penalty

    @dataclass(frozen=True)
    class FamilyPenalty(Penalty):
        factor: float = 1.0
        extra: float = 0.0

        def _scale(self, n_weights):
            K = int(round((np.sqrt(1 + 8 * n_weights) - 1) / 2))
            if K * (K + 1) // 2 != n_weights or self.entry_weights:
                raise ValueError(f"not the shared weights of code='ovo+ovr': {n_weights}")
            s = np.ones(n_weights)
            s[n_weights - K :] = self.factor + self.extra / max(self.l2, 1e-300)
            return s

        def _diagonal(self, n_weights, n_variables):
            d = super()._diagonal(n_weights, n_variables)
            d[:n_weights] *= self._scale(n_weights)
            return d

        def _quadratic(self, v, n_weights):
            return self.l2 * self._scale(n_weights) * v[:n_weights]

        def value(self, x, n_weights):
            w, b = x[:n_weights], x[n_weights:]
            return (
                0.5 * self.l2 * float(w @ (self._scale(n_weights) * w))
                + self.l1 * float(np.sum(w))
                + 0.5 * self.intercept_l2 * float(b @ b)
            )

        def restrict(self, weights):  # the blocked solver's active sets: not prototyped
            raise NotImplementedError("the family penalty is prototyped for the dense solver")

    return FamilyPenalty(
        l2=penalty.l2,
        l1=penalty.l1,
        intercept_l2=penalty.intercept_l2,
        factor=ovr_factor,
        extra=ovr_extra,
    )


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
    the aggregation's cross-validated log-loss on the out-of-fold outputs (issue 21's
    check of the in-sample ``binary_param_grid`` choice): one
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
                    **{**SHARED_WEIGHTS, "alpha": a},
                ).fit(X, y)
            self.model_ = model
        self.classes_ = self.model_.classes_
        return self


def cv_c_alpha(code, Cs=(0.01, 0.1, 1.0, 10.0), alphas=7, **options):
    return lambda seed: CrossValidatedCAlpha(code, Cs, alphas, seed, **options)


class Mixture(ClassifierMixin, BaseEstimator):
    """The mean of the probabilities of several fitted models: a row's log-loss is then at
    most ``log(n_models)`` above that of the model that is best on it, so one model's
    confident mistake costs at most that much (candidate (a) of issue 21, fourth round)."""

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
    calibrated forecasts is: Ranjan & Gneiting 2010). Issue 21 prototype."""

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
    *sum* of the losses: the same scaling). Issue 21 prototype."""

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


# issue 21's candidates (name -> cv_c_alpha arguments), decided before any was run:
# (a) the one-vs-rest columns penalised more; (b) a floor on the binaries' probabilities;
# (c) the one-standard-error rule; (d) cheaper: 3 values of C, 5 of alpha, 3 alpha folds.
CANDIDATES = {
    "ovo+ovr CV, ovr penalty x10": dict(code="ovo+ovr", ovr_factor=10.0),
    "ovo+ovr CV, ovr penalty x100": dict(code="ovo+ovr", ovr_factor=100.0),
    "ovo+ovr CV, floor 0.01": dict(code="ovo+ovr", floor=0.01),
    "ovo+ovr CV, floor 0.05": dict(code="ovo+ovr", floor=0.05),
    "ovo+ovr CV, 1se": dict(code="ovo+ovr", rule="1se"),
    "ovo CV, 1se": dict(code="ovo", rule="1se"),
}
# the second round, chosen after the first screen (all failed it, on wine by the choice of
# alpha or the one-vs-rest columns): alpha kept at the default's 1e-4, only C cross-validated,
# and the one-vs-rest columns shrunk toward 0 at a strength of their own
CANDIDATES_2 = {
    "ovo+ovr, C CV": dict(code="ovo+ovr", alphas=[1e-4]),
    "ovo+ovr, C CV, ovr penalty +0.1": dict(code="ovo+ovr", alphas=[1e-4], ovr_extra=0.1),
    "ovo+ovr, C CV, ovr penalty +1": dict(code="ovo+ovr", alphas=[1e-4], ovr_extra=1.0),
    "ovo, C CV": dict(code="ovo", alphas=[1e-4]),
}
# the third, after the second (the one-vs-rest shrinkage kept wine, C=10 at alpha=1e-4 lost
# glass): the one-vs-rest columns shrunk toward 0 with C and alpha both cross-validated
CANDIDATES_3 = {
    "ovo+ovr CV, ovr penalty +1": dict(code="ovo+ovr", ovr_extra=1.0),
    "ovo+ovr CV, ovr penalty +0.1": dict(code="ovo+ovr", ovr_extra=0.1),
}
CHEAP = dict(Cs=(0.1, 1.0, 10.0), alphas=5, alpha_cv=3)
CHEAP_2 = dict(Cs=(0.1, 1.0, 10.0), alpha_cv=3)
# the fourth, after the Kull suite ranked the third's candidate 3.65 (the one-vs-rest columns
# shrunk away, the suite's gain went with them): one-vs-one alone and one-vs-one-and-rest
# fitted separately and their probabilities averaged (name -> factory)
CANDIDATES_4 = {
    "mean of ovo CV and ovo+ovr CV, cheap": mixture(
        cv_c_alpha("ovo", **CHEAP), cv_c_alpha("ovo+ovr", **CHEAP)
    ),
}


# the fifth, after the fourth (every setting that leads the Kull suite uses the one-vs-rest
# columns and loses wine by a one-vs-rest binary's confident mistake; every tuned fix costs
# several times the default's fit): cheap settings, no cross-validation of C or alpha --
# the one-vs-rest binaries less confident than the one-vs-one (a smaller C of their own),
# or the one-vs-rest columns shrunk toward 0 at C=1 and the default alpha


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
            **SHARED_WEIGHTS,
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
    ``params``: further options of the classifier (the sixth round's additions)."""

    def make(seed):
        from convexagg import ConvexAggregationClassifier

        return ConvexAggregationClassifier(
            base_lr(),
            code="ovo+ovr",
            column_penalty={"ovr": ovr_extra},
            random_state=seed,
            **{**SHARED_WEIGHTS, "cv": row_order(), **params},
        )

    return make


# name -> factory; "ovr binaries C=1" is plain code="ovo+ovr" through the per-column
# learners (the prototype's check: the same records to the last digit)
CANDIDATES_5 = {
    "ovo+ovr, ovr binaries C=0.1": family_c(0.1),
    "ovo+ovr, ovr binaries C=0.01": family_c(0.01),
    "ovo+ovr, C=1, ovr penalty +0.1": ovr_penalty(0.1),
    "ovo+ovr, C=1, ovr penalty +1": ovr_penalty(1.0),
}
CHECK_5 = {"ovo+ovr, ovr binaries C=1": family_c(1.0)}

# the sixth, after the fifth (its survivor ``ovr penalty +0.1`` ranks 4.00 on the Kull suite
# against the default's 4.48; on the default, entry weights 0.01, intercepts and alpha=1e-3
# each improved the Kull log-loss rank): each of the three added to that survivor, no
# cross-validation
CANDIDATES_6 = {
    "ovo+ovr, C=1, ovr penalty +0.1, entry 0.01": ovr_penalty(0.1, entry_weight_shrinkage=0.01),
    "ovo+ovr, C=1, ovr penalty +0.1, intercepts": ovr_penalty(0.1, fit_intercept=True),
    "ovo+ovr, C=1, ovr penalty +0.1, alpha=1e-3": ovr_penalty(0.1, alpha=1e-3),
}


def _coded(decoder, **params):
    def make(seed):
        from convexagg import CodeMatrixClassifier, decoders

        given = {**params, "cv": row_order(params.get("cv", FOLDS))}
        return CodeMatrixClassifier(
            base_lr(), decoder=getattr(decoders, decoder)(), random_state=seed, **given
        )

    return make


def _lrcv(seed):
    from sklearn.linear_model import LogisticRegressionCV

    return LogisticRegressionCV(Cs=10, cv=FOLDS, max_iter=1000)


def _ovr_lr(seed):
    from sklearn.multiclass import OneVsRestClassifier

    return OneVsRestClassifier(base_lr())


def _calibrated_svc(method, linear=True):
    def make(seed):
        from sklearn.calibration import CalibratedClassifierCV
        from sklearn.svm import SVC, LinearSVC

        if linear:
            return CalibratedClassifierCV(LinearSVC(), method=method, cv=FOLDS)
        return CalibratedClassifierCV(SVC(), method=method, cv=FOLDS, ensemble=False)

    return make


def calibrated_ovo(seed):
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
                **SHARED_WEIGHTS,
            )
        return ConvexAggregationClassifier(
            HistGradientBoostingClassifier(max_iter=100),
            code="ovr",
            cv=row_order(cv),
            random_state=seed,
            **SHARED_WEIGHTS,
        )

    return make


# name -> (family, factory(seed) -> estimator)
METHODS = {
    "convexagg (default)": (LINEAR, library_default),
    SHARED: (LINEAR, ca()),
    # issue 21's first switch (entry weights; alpha=1e-4 and folds in row order as in 0.2),
    # the default from then until shuffled folds and alpha=1e-3: its records renamed
    ENTRY_DEFAULT: (LINEAR, ca(entry_weight_shrinkage=0.01)),
    SECOND_SWITCH: (LINEAR, library(code="ovo", fit_intercept=False, **ENTRY_0_01)),
    "convexagg cv=None (paper)": (LINEAR, ca(cv="in_sample")),
    "convexagg cv=5 ensemble": (LINEAR, ca(cv=FOLDS, ensemble=True)),
    "convexagg cv=5 refit": (LINEAR, ca(cv=FOLDS, ensemble=False)),
    "convexagg cv=3 ensemble": (LINEAR, ca(cv=3, ensemble=True)),
    "convexagg held-out 20%": (LINEAR, ca(cv=_holdout)),
    "convexagg cv=5 ensemble, intercepts": (LINEAR, ca(cv=FOLDS, fit_intercept=True)),
    "convexagg cv=None, intercepts": (LINEAR, ca(cv="in_sample", fit_intercept=True)),
    "convexagg ovr cv=5": (LINEAR, ca(code="ovr", cv=FOLDS)),
    "convexagg ecoc cv=5": (LINEAR, ca(code="ecoc", cv=FOLDS)),
    # the best setting on the Kull et al. suite (issue 21), checked on these ten
    "convexagg ovo+ovr, entry 0.01, C4, alpha=1e-3": (
        LINEAR,
        ca(
            code="ovo+ovr",
            entry_weight_shrinkage=0.01,
            alpha=1e-3,
            binary_param_grid={"C": [0.01, 0.1, 1.0, 10.0]},
        ),
    ),
    "convexagg ovo+ovr, C4": (
        LINEAR,
        ca(code="ovo+ovr", binary_param_grid={"C": [0.01, 0.1, 1.0, 10.0]}),
    ),
    # C and alpha by cross-validated log-loss on the out-of-fold outputs (not in sample)
    "convexagg ovo+ovr, C4 and alpha cross-validated": (LINEAR, cv_c_alpha("ovo+ovr")),
    "convexagg ovo, C4 and alpha cross-validated": (LINEAR, cv_c_alpha("ovo")),
    **{f"convexagg {n}": (LINEAR, cv_c_alpha(**o)) for n, o in CANDIDATES.items()},
    **{f"convexagg {n}, cheap": (LINEAR, cv_c_alpha(**o, **CHEAP)) for n, o in CANDIDATES.items()},
    **{f"convexagg {n}": (LINEAR, cv_c_alpha(**o)) for n, o in CANDIDATES_2.items()},
    **{
        f"convexagg {n}, cheap": (LINEAR, cv_c_alpha(**o, **CHEAP_2))
        for n, o in CANDIDATES_2.items()
    },
    **{f"convexagg {n}": (LINEAR, cv_c_alpha(**o)) for n, o in CANDIDATES_3.items()},
    **{
        f"convexagg {n}, cheap": (LINEAR, cv_c_alpha(**o, **CHEAP)) for n, o in CANDIDATES_3.items()
    },
    **{f"convexagg {n}": (LINEAR, make) for n, make in CANDIDATES_4.items()},
    **{f"convexagg {n}": (LINEAR, make) for n, make in {**CANDIDATES_5, **CHECK_5}.items()},
    **{f"convexagg {n}": (LINEAR, make) for n, make in CANDIDATES_6.items()},
    "convexagg ovo+ovr": (LINEAR, ca(code="ovo+ovr")),
    **{name: (LINEAR, library(**params)) for name, params in LIBRARY_SETTINGS.items()},
    # issue 21 after the first switch: its default on shuffled folds (not in row order)
    **{
        f"convexagg entry 0.01, shuffled folds{n}": (
            LINEAR,
            ca(cv=_shuffled_folds, entry_weight_shrinkage=0.01, **o),
        )
        for n, o in (("", {}), (", alpha=3e-4", {"alpha": 3e-4}), (", alpha=1e-3", {"alpha": 1e-3}))
    },
    "convexagg ovo+ovr, C=1, ovr penalty +0.1, entry 0.01, shuffled folds, alpha=1e-3": (
        LINEAR,
        ca(
            code="ovo+ovr",
            column_penalty={"ovr": 0.1},
            entry_weight_shrinkage=0.01,
            alpha=1e-3,
            cv=_shuffled_folds,
        ),
    ),
    **{
        f"convexagg entry 0.01, shuffled folds, alpha={c}/n": (
            LINEAR,
            alpha_per_row(ca(cv=_shuffled_folds, entry_weight_shrinkage=0.01), c),
        )
        for c in (0.2, 0.4)
    },
    # candidate (d) alone on the previous round's Kull-best (the name as in _kull_suite.py)
    "convexagg ovo+ovr, C4 and alpha cross-validated, cheap": (
        LINEAR,
        cv_c_alpha("ovo+ovr", **CHEAP),
    ),
    "pairwise coupling, same binaries": (LINEAR, _coded("PairwiseCouplingDecoder", cv=FOLDS)),
    "pairwise coupling, binaries on all rows": (
        LINEAR,
        _coded("PairwiseCouplingDecoder", cv="in_sample"),
    ),
    "Bradley-Terry, same binaries": (LINEAR, _coded("BradleyTerryDecoder", cv=FOLDS)),
    "loss-based, same binaries": (LINEAR, _coded("LossBasedDecoder", cv=FOLDS)),
    "LogisticRegressionCV (multinomial)": (LINEAR, _lrcv),
    "OneVsRest(LogisticRegression)": (LINEAR, _ovr_lr),
    "Calibrated LinearSVC, sigmoid": (LINEAR, _calibrated_svc("sigmoid")),
    "Calibrated LinearSVC, temperature": (LINEAR, _calibrated_svc("temperature")),
    "Calibrated OneVsOne(LR), temperature": (LINEAR, calibrated_ovo),
    "Calibrated SVC (RBF), sigmoid, ensemble=False": (
        NONLINEAR,
        _calibrated_svc("sigmoid", linear=False),
    ),
    "HistGradientBoosting": (NONLINEAR, hgb),
    "RandomForest": (NONLINEAR, rf),
    "convexagg RBF SVC margins, cv=None": (NONLINEAR, nonlinear("svc", None)),
    "convexagg RBF SVC margins, cv=5": (NONLINEAR, nonlinear("svc", FOLDS)),
    "convexagg HGB binaries (ovr), cv=None": (NONLINEAR, nonlinear("hgb", None)),
    "convexagg HGB binaries (ovr), cv=5": (NONLINEAR, nonlinear("hgb", FOLDS)),
}


# -- data ---------------------------------------------------------------------------------------


def load(name, data_dir, max_rows, seed=0):
    """``(X, y)`` of ``name``; at most ``max_rows`` rows, a stratified subsample."""
    from sklearn.model_selection import train_test_split

    from convexagg.datasets import load_dataset

    ds = load_dataset(name, data_dir)
    X, y = np.asarray(ds.X, dtype=np.float64), np.asarray(ds.y)
    if max_rows and X.shape[0] > max_rows:
        X, _, y, _ = train_test_split(X, y, train_size=max_rows, stratify=y, random_state=seed)
    return X, y


def split(X, y, rep, max_features=500):
    """The ``rep``-th stratified 80/20 split, standardised on its training part."""
    from sklearn.model_selection import StratifiedShuffleSplit
    from sklearn.preprocessing import StandardScaler

    train, test = next(StratifiedShuffleSplit(1, test_size=0.2, random_state=rep).split(X, y))
    X_tr, X_te = X[train], X[test]
    if X.shape[1] > max_features:  # gene expression: the most variable features
        keep = np.argsort(-X_tr.var(axis=0), kind="stable")[:max_features]
        X_tr, X_te = X_tr[:, keep], X_te[:, keep]
    scaler = StandardScaler().fit(X_tr)
    return scaler.transform(X_tr), y[train], scaler.transform(X_te), y[test]


# -- scoring ------------------------------------------------------------------------------------


def scores(y_test, proba, classes):
    from sklearn.metrics import log_loss

    from convexagg.metrics import classwise_calibration_error, top_label_calibration_error

    onehot = (y_test[:, None] == classes[None, :]).astype(float)
    proba = np.clip(proba, 0.0, 1.0)
    return {
        "accuracy": float(np.mean(classes[np.argmax(proba, axis=1)] == y_test)),
        "brier": float(np.mean(np.sum((onehot - proba) ** 2, axis=1))),
        "log_loss": float(log_loss(y_test, proba, labels=classes)),
        "ece_top": float(top_label_calibration_error(y_test, proba, labels=classes)),
        "ece_classwise": float(classwise_calibration_error(y_test, proba, labels=classes)),
    }


def run_one(name, make, X_tr, y_tr, X_te, y_te, seed):
    """Fit, predict and score one method on one split; an error is recorded, not raised."""
    estimator = make(seed)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t0 = time.perf_counter()
            estimator.fit(X_tr, y_tr)
            fit_s = time.perf_counter() - t0
            t0 = time.perf_counter()
            proba = estimator.predict_proba(X_te)
            predict_s = time.perf_counter() - t0
    except Exception as exc:  # noqa: BLE001 - a failure is a result to report
        return {"error": f"{type(exc).__name__}: {exc}"[:300]}
    record = scores(y_te, proba, estimator.classes_)
    record.update(fit_s=fit_s, predict_s=predict_s)
    return record


# -- the run --------------------------------------------------------------------------------------


def record_path(out, dataset, rep, method):
    safe = "".join(c if c.isalnum() else "_" for c in method)
    return Path(out) / "records" / dataset / f"rep{rep}" / f"{safe}.json"


def write_json(path, obj):
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(obj, indent=1))
    os.replace(tmp, path)


def run(args, datasets, methods):
    for dataset in datasets:
        X, y = load(dataset, args.data_dir, args.max_rows)
        for rep in range(args.splits):
            X_tr, y_tr, X_te, y_te = split(X, y, rep)
            for method in methods:
                path = record_path(args.out, dataset, rep, method)
                if path.exists() and json.loads(path.read_text())["n_train"] == len(y_tr):
                    continue  # done (another --max-rows makes another training part)
                family, make = METHODS[method]
                record = run_one(method, make, X_tr, y_tr, X_te, y_te, seed=rep)
                record.update(dataset=dataset, rep=rep, method=method, family=family)
                record.update(n_train=int(len(y_tr)), n_classes=int(len(np.unique(y))))
                write_json(path, record)
                shown = record.get("log_loss", record.get("error"))
                print(f"{dataset} rep{rep} {method}: {shown}", flush=True)


def collect(args, datasets, methods):
    rows = []
    for dataset in datasets:
        for rep in range(args.splits):
            for method in methods:
                path = record_path(args.out, dataset, rep, method)
                if path.exists():
                    rows.append(json.loads(path.read_text()))
    return rows


METRICS = ("log_loss", "brier", "accuracy", "ece_top", "ece_classwise", "fit_s", "predict_s")


def summarise(rows, datasets, methods):
    """``{(dataset, method): {metric: (mean, std)}}`` over the splits without errors."""
    table = {}
    for dataset in datasets:
        for method in methods:
            recs = [r for r in rows if r["dataset"] == dataset and r["method"] == method]
            ok = [r for r in recs if "error" not in r]
            if not ok:
                table[dataset, method] = {"error": recs[0]["error"] if recs else "missing"}
                continue
            table[dataset, method] = {
                m: (float(np.mean([r[m] for r in ok])), float(np.std([r[m] for r in ok])))
                for m in METRICS
            }
    return table


def render(table, datasets, methods):
    out = []
    for metric, title, fmt in [
        ("log_loss", "Log-loss (lower is better)", "{:.3f} ({:.3f})"),
        ("brier", "Brier score, summed over classes (lower is better)", "{:.3f} ({:.3f})"),
        ("accuracy", "Accuracy", "{:.3f} ({:.3f})"),
        ("ece_top", "Top-label calibration error, 15 bins", "{:.3f} ({:.3f})"),
        ("ece_classwise", "Classwise calibration error, 15 bins", "{:.4f} ({:.4f})"),
        ("fit_s", "Fit seconds", "{:.2f} ({:.2f})"),
        ("predict_s", "Predict seconds", "{:.3f} ({:.3f})"),
    ]:
        out += [f"### {title}", "", "| method | " + " | ".join(datasets) + " |"]
        out.append("|" + " --- |" * (len(datasets) + 1))
        for method in methods:
            cells = []
            for dataset in datasets:
                entry = table[dataset, method]
                cells.append("error" if "error" in entry else fmt.format(*entry[metric]))
            out.append(f"| {method} | " + " | ".join(cells) + " |")
        out.append("")
    errors = [(d, m, e["error"]) for (d, m), e in table.items() if "error" in e]
    if errors:
        out += ["### Errors", ""] + [f"- {d}, {m}: {e}" for d, m, e in errors] + [""]
    return "\n".join(out)


def targets(table, datasets, default="convexagg (default)"):
    """The issue's checks, in words (a method without records counts as not run)."""

    def get(d, m):
        return table.get((d, m), {"error": "not run"})

    def mean(d, m, metric):
        entry = get(d, m)
        return np.inf if "error" in entry else entry[metric][0]

    lines = []
    coupling = ["pairwise coupling, same binaries", "Bradley-Terry, same binaries"]
    ok = []
    for d in datasets:
        mine = get(d, default)
        if "error" in mine:
            continue
        worse = [
            m
            for m in coupling
            if "error" not in get(d, m)
            and mine["log_loss"][0] > get(d, m)["log_loss"][0] + get(d, m)["log_loss"][1]
        ]
        ok.append(not worse)
        if worse:
            lines.append(
                f"- {d}: the default's log-loss is worse than {', '.join(worse)} by more "
                "than one standard deviation"
            )
    lines.insert(
        0,
        f"- log-loss no worse than pairwise coupling and Bradley-Terry on the same "
        f"binaries (within one std): {sum(ok)} of {len(ok)} data sets",
    )
    linear = [
        m
        for m in {m for _, m in table}
        if m.startswith(("Logistic", "OneVsRest", "Calibrated LinearSVC", "Calibrated OneVsOne"))
    ] + [default]
    for metric in ("log_loss", "brier"):
        wins = sum(min(linear, key=lambda m: mean(d, m, metric)) == default for d in datasets)
        lines.append(
            f"- best {metric} among the linear methods ({', '.join(sorted(linear))}): "
            f"{wins} of {len(datasets)} data sets"
        )
    return "\n".join(lines)


def main_kull(args, t0):
    import _kull_suite as K

    names = args.datasets.split(",") if args.datasets else K.datasets(args.kull_dir)
    methods = args.methods.split(";") if args.methods else list(K.METHODS)
    unknown = [m for m in methods if m not in K.METHODS]
    if unknown:
        sys.exit(f"unknown methods {unknown}; known: {list(K.METHODS)}")
    info = C.machine()
    if args.interleaved_times:
        times = K.interleaved_times(args, names, methods)
        load = os.getloadavg()
        write_json(
            Path(args.out) / "times" / f"{args.interleaved_times}.json",
            {"machine": info, "loadavg_after": load, "sets": names, "fit_s": times},
        )
        return
    if not args.tables_only:
        K.run(args, names, methods, run_one, record_path, write_json)
    rows = []
    for name in names:
        for fold in range(K.OUTER_FOLDS):
            for method in K.METHODS:
                path = record_path(args.out, name, fold, method)
                if path.exists():
                    rows.append(json.loads(path.read_text()))
    infos = {n: K.load(n, args.kull_dir)[2] for n in names}
    text = "\n".join(
        [
            f"## Probability quality on the Kull et al. (2019) suite: {len(names)} sets, "
            "3-fold stratified cross-validation",
            "",
            C.header(info),
            "",
            "tables from the records only"
            if args.tables_only
            else f"run time: {time.perf_counter() - t0:.0f} s",
            "",
            K.tables(rows, names, infos),
        ]
    )
    print(text)
    Path(args.out).mkdir(parents=True, exist_ok=True)
    (Path(args.out) / "tables.md").write_text(text)


def main():
    p = C.parser(__doc__.splitlines()[0])
    p.add_argument("--suite", choices=("ten", "kull"), default="ten")
    p.add_argument(
        "--kull-dir", default=None, help="the Kull et al. sets (default: <data-dir>/kull2019)"
    )
    p.add_argument(
        "--by-set",
        action="store_true",
        help="kull: every method on one set before the next set, cheapest sets first",
    )
    p.add_argument("--datasets", default=None, help="comma-separated (default: all available)")
    p.add_argument("--methods", default=None, help="semicolon-separated method names")
    p.add_argument("--splits", type=int, default=5)
    p.add_argument(
        "--max-rows",
        type=int,
        default=2500,
        help="subsample larger data sets (keeps segment whole)",
    )
    p.add_argument("--tables-only", action="store_true")
    p.add_argument(
        "--interleaved-times",
        metavar="NAME",
        default=None,
        help="kull: only time the fits of --methods, in turn on each set and fold "
        "(--out/times/NAME.json)",
    )
    args = p.parse_args()
    if args.quick:
        args.splits, args.max_rows = 1, 600
    C.limit_blas(args)
    if args.suite == "kull":
        args.out = args.out or "benchmarks/results/quality/kull"
        args.kull_dir = args.kull_dir or str(Path(args.data_dir) / "kull2019")
        return main_kull(args, time.perf_counter())
    args.out = args.out or "benchmarks/results/quality"
    if args.datasets:
        datasets = args.datasets.split(",")
    else:
        found = [n for n in PAPER_SETS if (Path(args.data_dir) / f"{n}.csv.gz").exists()]
        datasets = found + list(BUNDLED)
    methods = args.methods.split(";") if args.methods else list(METHODS)
    unknown = [m for m in methods if m not in METHODS]
    if unknown:
        sys.exit(f"unknown methods {unknown}; known: {list(METHODS)}")
    info = C.machine()
    t0 = time.perf_counter()
    if not args.tables_only:
        run(args, datasets, methods)
    rows = collect(args, datasets, methods)
    table = summarise(rows, datasets, methods)
    text = "\n".join(
        [
            f"## Probability quality: {args.splits} stratified 80/20 splits, at most "
            f"{args.max_rows} rows per data set",
            "",
            C.header(info),
            "",
            "tables from the records only"
            if args.tables_only
            else f"run time: {time.perf_counter() - t0:.0f} s",
            "",
            "### The targets",
            "",
            targets(table, datasets),
            "",
            render(table, datasets, methods),
        ]
    )
    print(text)
    Path(args.out).mkdir(parents=True, exist_ok=True)
    (Path(args.out) / "tables.md").write_text(text)


if __name__ == "__main__":
    main()
