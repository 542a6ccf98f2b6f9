"""The Kull et al. (2019) suite of ``bench_quality.py --suite kull``: data, methods, tables.

Protocol: every ``<name>.csv.gz`` of ``--kull-dir`` (default ``<data-dir>/kull2019``;
read where it lies, never copied). Classes with fewer than :data:`MIN_CLASS_ROWS`
rows are dropped (so that each class has at least 4 training rows in every outer
split and at least one row in every inner 3-fold part; the tables list what was
dropped per set), then sets above :data:`MAX_ROWS` rows are subsampled to
:data:`MAX_ROWS` (stratified, ``random_state=0``). Outer splits: 3-fold stratified
cross-validation (``shuffle=True, random_state=0``); the features standardised
on the training part; fold ``f``'s methods get ``random_state=f``. Base learner
``LogisticRegression(max_iter=1000)`` everywhere in the linear family.

Families (:data:`METHODS`): ``linear`` and ``non-linear`` peers are ranked
(Kull-style average ranks, 1 = best, ties averaged) within their family;
``variant`` entries (the default's ablations, and new convexagg settings) are
each ranked in place of the default among the linear peers; ``check`` entries
are the "left to calibrate" check (temperature and Dirichlet calibration fitted
on the default's own 3-fold out-of-fold probabilities), reported as the
relative log-loss change against the default's record of the same fold.

Adding a method is one line in :data:`METHODS`, e.g.
``"convexagg my-option": (VARIANT, ca(my_option=True)),``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from . import calibrators as CAL
from .methods import (
    CHEAP_GRID,
    CV_OVR_SHRUNK_CANDIDATES,
    ENTRY_0_01_PARAMS,
    ENTRY_0_01_ROW_ORDER,
    FOLDS,
    LIBRARY_SETTINGS,
    LINEAR,
    NO_CV_CANDIDATES,
    NONLINEAR,
    OVO_SHUFFLED_COLD,
    OVR_PENALTY_ADDITIONS,
    SHARED_WEIGHTS,
    alpha_per_row,
    base_lr,
    ca,
    calibrated_ovo,
    cv_c_alpha,
    hgb,
    library,
    library_default,
    log_pooled,
    nonlinear,
    rf,
    row_order,
)
from .scoring import measure

MIN_CLASS_ROWS = 6
MAX_ROWS = 3000
OUTER_FOLDS = 3
VARIANT = "variant"
NONLINEAR_VARIANT = "non-linear variant"  # ranked in place of NONLINEAR_CONVEXAGG
CHECK = "check"
DEFAULT = "convexagg (default)"
CV_VARIANT = "convexagg ovo+ovr, C4 and alpha cross-validated"
# the methods of a plumbing run (``--quick``)
QUICK_METHODS = (
    DEFAULT,
    "LogisticRegression (multinomial)",
    "LR + temperature (CalibratedClassifierCV)",
)


def _lrcv(seed):
    """``LogisticRegressionCV`` as Kull et al.'s peer: 10 ``C``, 5 folds, scored by log-loss."""
    from sklearn.linear_model import LogisticRegressionCV

    return LogisticRegressionCV(Cs=10, cv=FOLDS, scoring="neg_log_loss", max_iter=1000)


def _temperature(base):
    def make(seed):
        from sklearn.calibration import CalibratedClassifierCV

        return CalibratedClassifierCV(base(seed), method="temperature")

    return make


def _inner(base, calibrator):
    """``base`` calibrated as Kull et al. do: 3 inner folds, the 3 pairs averaged."""

    def make(seed):
        return CAL.InnerFoldCalibrated(base(seed), getattr(CAL, calibrator), random_state=seed)

    return make


def _own_oof(calibrator, base=None):
    """``calibrator`` on the out-of-fold outputs of ``base`` (a factory; the default's)."""
    base = base or library_default

    def make(seed):
        return CAL.CalibratedOnOwnOOF(base(seed), getattr(CAL, calibrator), random_state=seed)

    return make


def _plain_lr(seed):
    return base_lr()


def _hgb_binaries(seed):
    return nonlinear("hgb", FOLDS)(seed)


def _hgb_binaries_with(**params):
    """HGB binaries as :func:`_hgb_binaries` with the library's aggregation pinned to no
    intercepts and entry weights 0.01 without zero entries, and ``params``."""

    def make(seed):
        from sklearn.ensemble import HistGradientBoostingClassifier

        from convexagg import ConvexAggregationClassifier

        hgb = HistGradientBoostingClassifier(max_iter=100)
        given = {"fit_intercept": False, **ENTRY_0_01_PARAMS, **params}
        return ConvexAggregationClassifier(hgb, code="ovr", random_state=seed, **given)

    return make


def _hgb_binaries_library(seed):
    """HGB binaries (as :func:`_hgb_binaries_with`) with the library's whole default
    aggregation."""
    from sklearn.ensemble import HistGradientBoostingClassifier

    from convexagg import ConvexAggregationClassifier

    hgb = HistGradientBoostingClassifier(max_iter=100)
    return ConvexAggregationClassifier(hgb, code="ovr", random_state=seed)


# HGB binaries with entry weights 0.01 on version 0.2's alpha=1e-4 and folds in row order
_hgb_binaries_entry = _hgb_binaries_with(
    entry_weight_shrinkage=0.01, alpha=1e-4, cv=row_order(FOLDS)
)


def _shuffled(offset=0, **params):
    """:func:`ca` with entry weights 0.01 (or ``params``) on shuffled stratified folds
    (``random_state=seed + offset``) instead of folds in row order."""

    def make(seed):
        from sklearn.model_selection import StratifiedKFold

        folds = StratifiedKFold(FOLDS, shuffle=True, random_state=seed + offset)
        return ca(**{"entry_weight_shrinkage": 0.01, **params}, cv=folds)(seed)

    return make


_shuffled_default = _shuffled()
_shuffled_survivor = _shuffled(code="ovo+ovr", column_penalty={"ovr": 0.1}, alpha=1e-3)


_C4 = {"C": [0.01, 0.1, 1.0, 10.0]}
OVR_SHRUNK_CHEAP = "convexagg ovo+ovr CV, ovr penalty +1, cheap"
OVR_PENALTY_0_1 = "convexagg ovo+ovr, C=1, ovr penalty +0.1"
OVR_PENALTY_0_1_ENTRY = OVR_PENALTY_0_1 + ", entry 0.01"
SHARED_CHECK = "shared weights (0.2 default)"
LOG_POOLED = "convexagg entry 0.01, log-pooled ensemble"
LOG_POOLED_CHECK = "entry 0.01 log-pooled"
SHUFFLED = "convexagg entry 0.01, shuffled folds"
SHUFFLED_CHECK = "entry 0.01, shuffled folds,"
NONLINEAR_ENTRY = "convexagg HGB binaries (ovr), cv=5, entry weights 0.01, folds in row order"
NONLINEAR_DEFAULT = "convexagg HGB binaries (ovr), the default's aggregation"
NONLINEAR_INTERCEPTS = "convexagg HGB binaries (ovr), the default's aggregation with intercepts"
# the library's whole default aggregation (the two above pin entry weights 0.01)
NONLINEAR_LIBRARY = "convexagg HGB binaries (ovr), the fifth switch's aggregation"
ENTRY_CHECK = "entry weights 0.01, folds in row order"
OVR_PENALTY_SHUFFLED = (
    "convexagg ovo+ovr, C=1, ovr penalty +0.1, entry 0.01, shuffled folds, alpha=1e-3"
)
OVR_PENALTY_SHUFFLED_CHECK = "ovo+ovr, ovr penalty +0.1, entry 0.01, shuffled folds, alpha=1e-3,"
OVO_SHUFFLED_COLD_CHECK = "the second switch's default"
_ovr_shrunk_cheap = cv_c_alpha(
    **CV_OVR_SHRUNK_CANDIDATES["ovo+ovr CV, ovr penalty +1"], **CHEAP_GRID
)

# name -> (family, factory(seed) -> estimator); run in this order (the cheap peers first)
METHODS = {
    DEFAULT: (LINEAR, library_default),
    "LogisticRegression (multinomial)": (LINEAR, _plain_lr),
    "convexagg ovr": (LINEAR, ca(code="ovr")),
    "LogisticRegressionCV (10 C, 5 folds, log-loss)": (LINEAR, _lrcv),
    "LR + temperature (CalibratedClassifierCV)": (LINEAR, _temperature(_plain_lr)),
    "LR + structured matrix scaling (probmetrics)": (LINEAR, _inner(_plain_lr, "matrix_scaling")),
    "Calibrated OneVsOne(LR), temperature": (LINEAR, calibrated_ovo),
    "default + temperature on its out-of-fold": (CHECK, _own_oof("temperature")),
    "convexagg fit_intercept=True": (VARIANT, ca(fit_intercept=True)),
    "convexagg cv=None": (
        VARIANT,
        ca(cv="in_sample"),
    ),  # the records' name for cv="in_sample"
    "convexagg ensemble=False": (VARIANT, ca(ensemble=False)),
    "LR + Dirichlet (dirichletcal)": (LINEAR, _inner(_plain_lr, "dirichlet")),
    # options alone and together (C4: the binaries' C chosen from 0.01..10 on the out-of-fold
    # outputs; C3: from 0.1..10)
    "convexagg alpha=1e-3": (VARIANT, ca(alpha=1e-3)),
    "convexagg ovo+ovr": (VARIANT, ca(code="ovo+ovr")),
    SHARED_WEIGHTS: (VARIANT, ca()),  # version 0.2's model
    "convexagg C4": (VARIANT, ca(binary_param_grid=_C4)),
    "convexagg ovo+ovr, C4": (VARIANT, ca(code="ovo+ovr", binary_param_grid=_C4)),
    "convexagg ovo+ovr, entry 0.01, C4": (
        VARIANT,
        ca(code="ovo+ovr", entry_weight_shrinkage=0.01, binary_param_grid=_C4),
    ),
    "convexagg ovo+ovr, entry 0.01, C4, alpha=1e-3": (
        VARIANT,
        ca(code="ovo+ovr", entry_weight_shrinkage=0.01, alpha=1e-3, binary_param_grid=_C4),
    ),
    "convexagg ovo+ovr, C4, alpha=1e-3": (
        VARIANT,
        ca(code="ovo+ovr", alpha=1e-3, binary_param_grid=_C4),
    ),
    "convexagg ovo+ovr, entry 0.01, C3": (
        VARIANT,
        ca(code="ovo+ovr", entry_weight_shrinkage=0.01, binary_param_grid={"C": [0.1, 1.0, 10.0]}),
    ),
    # C and alpha chosen by the aggregation's cross-validated log-loss on the out-of-fold
    # outputs, not in sample (the glass / wine check of the ten sets)
    CV_VARIANT: (VARIANT, cv_c_alpha("ovo+ovr")),
    "convexagg ovo, C4 and alpha cross-validated": (VARIANT, cv_c_alpha("ovo")),
    # the cross-validated candidate closest to passing the glass / wine screen
    # (methods.CV_OVR_SHRUNK_CANDIDATES)
    OVR_SHRUNK_CHEAP: (VARIANT, _ovr_shrunk_cheap),
    # the Kull-best variant with the cheap grid (fit time)
    CV_VARIANT + ", cheap": (VARIANT, cv_c_alpha("ovo+ovr", **CHEAP_GRID)),
    OVR_SHRUNK_CHEAP + " + temperature on its out-of-fold": (
        CHECK,
        _own_oof("temperature", _ovr_shrunk_cheap),
    ),
    OVR_SHRUNK_CHEAP + " + Dirichlet on its out-of-fold": (
        CHECK,
        _own_oof("dirichlet", _ovr_shrunk_cheap),
    ),
    # the cheap candidates that passed the glass / wine screen
    # (methods.NO_CV_CANDIDATES)
    **{
        f"convexagg {n}": (VARIANT, NO_CV_CANDIDATES[n])
        for n in (
            "ovo+ovr, ovr binaries C=0.01",
            "ovo+ovr, C=1, ovr penalty +0.1",
            "ovo+ovr, C=1, ovr penalty +1",
        )
    },
    # the left-to-calibrate check of the best-ranked of them
    **{
        f"{OVR_PENALTY_0_1} + {c} on its out-of-fold": (
            CHECK,
            _own_oof(c.lower(), NO_CV_CANDIDATES["ovo+ovr, C=1, ovr penalty +0.1"]),
        )
        for c in ("temperature", "Dirichlet")
    },
    # additions to the one-vs-rest penalty +0.1
    # (methods.OVR_PENALTY_ADDITIONS)
    **{f"convexagg {n}": (VARIANT, make) for n, make in OVR_PENALTY_ADDITIONS.items()},
    # the left-to-calibrate check of the best-ranked of them
    **{
        f"{OVR_PENALTY_0_1_ENTRY} + {c} on its out-of-fold": (
            CHECK,
            _own_oof(
                c.lower(), OVR_PENALTY_ADDITIONS["ovo+ovr, C=1, ovr penalty +0.1, entry 0.01"]
            ),
        )
        for c in ("temperature", "Dirichlet")
    },
    # the left-to-calibrate check of version 0.2's model
    **{
        f"{SHARED_CHECK} + {c} on its out-of-fold": (CHECK, _own_oof(c.lower(), ca()))
        for c in ("temperature", "Dirichlet")
    },
    "HistGradientBoosting": (NONLINEAR, hgb),
    "RandomForest": (NONLINEAR, rf),
    "default + Dirichlet on its out-of-fold": (CHECK, _own_oof("dirichlet")),
    "HGB + temperature (CalibratedClassifierCV)": (NONLINEAR, _temperature(hgb)),
    "convexagg HGB binaries (ovr), cv=5": (NONLINEAR, _hgb_binaries),
    "HGB + Dirichlet (dirichletcal)": (NONLINEAR, _inner(hgb, "dirichlet")),
    # the left-to-calibrate check of the Kull-best variant (its temperature first: cheaper)
    CV_VARIANT + " + temperature on its out-of-fold": (
        CHECK,
        _own_oof("temperature", cv_c_alpha("ovo+ovr")),
    ),
    CV_VARIANT + " + Dirichlet on its out-of-fold": (
        CHECK,
        _own_oof("dirichlet", cv_c_alpha("ovo+ovr")),
    ),
}
# On entry weights 0.01 (version 0.2's model otherwise): the entry weights' strength,
# alpha, the fold ensemble pooled in log space (methods.LogPooled), shuffled folds (and
# alpha with them: fixed, or per training row, methods.AlphaPerRow); and the HGB binaries
# on the library's aggregation
METHODS.update(
    {
        **{
            f"convexagg entry {s}": (VARIANT, ca(entry_weight_shrinkage=s))
            for s in (0.001, 0.003, 0.03, 0.1)
        },
        "convexagg entry 0.01, alpha=1e-5": (VARIANT, ca(entry_weight_shrinkage=0.01, alpha=1e-5)),
        LOG_POOLED: (VARIANT, log_pooled(ca(entry_weight_shrinkage=0.01))),
        **{
            f"{LOG_POOLED_CHECK} + {c} on its out-of-fold": (
                CHECK,
                _own_oof(c.lower(), log_pooled(ca(entry_weight_shrinkage=0.01))),
            )
            for c in ("temperature", "Dirichlet")
        },
        NONLINEAR_ENTRY: (NONLINEAR_VARIANT, _hgb_binaries_entry),
        NONLINEAR_DEFAULT: (NONLINEAR_VARIANT, _hgb_binaries_with()),
        NONLINEAR_INTERCEPTS: (NONLINEAR_VARIANT, _hgb_binaries_with(fit_intercept=True)),
        NONLINEAR_LIBRARY: (NONLINEAR_VARIANT, _hgb_binaries_library),
        ENTRY_0_01_ROW_ORDER: (VARIANT, ca(entry_weight_shrinkage=0.01)),
        **{
            f"{ENTRY_CHECK} + {c} on its out-of-fold": (
                CHECK,
                _own_oof(c.lower(), ca(entry_weight_shrinkage=0.01)),
            )
            for c in ("temperature", "Dirichlet")
        },
        SHUFFLED: (VARIANT, _shuffled_default),
        SHUFFLED + ", another seed": (VARIANT, _shuffled(offset=100)),
        SHUFFLED + ", alpha=3e-4": (VARIANT, _shuffled(alpha=3e-4)),
        SHUFFLED + ", alpha=1e-3": (VARIANT, _shuffled(alpha=1e-3)),
        SHUFFLED + ", alpha=1e-3, another seed": (VARIANT, _shuffled(offset=100, alpha=1e-3)),
        **{
            f"{SHUFFLED}, alpha={c}/n": (VARIANT, alpha_per_row(_shuffled_default, c))
            for c in (0.1, 0.2, 0.4)
        },
        **{
            f"{SHUFFLED_CHECK} alpha={c}/n, + {k} on its out-of-fold": (
                CHECK,
                _own_oof(k.lower(), alpha_per_row(_shuffled_default, c)),
            )
            for c in (0.2, 0.4)
            for k in ("temperature", "Dirichlet")
        },
        # the one-vs-rest penalty +0.1 on shuffled folds and alpha=1e-3
        OVR_PENALTY_SHUFFLED: (VARIANT, _shuffled_survivor),
        **{
            f"{OVR_PENALTY_SHUFFLED_CHECK} + {c} on its out-of-fold": (
                CHECK,
                _own_oof(c.lower(), _shuffled_survivor),
            )
            for c in ("temperature", "Dirichlet")
        },
        **{name: (VARIANT, library(**params)) for name, params in LIBRARY_SETTINGS.items()},
        OVO_SHUFFLED_COLD: (VARIANT, library(code="ovo", fit_intercept=False, **ENTRY_0_01_PARAMS)),
        **{
            f"{OVO_SHUFFLED_COLD_CHECK} + {c} on its out-of-fold": (
                CHECK,
                _own_oof(c.lower(), library(code="ovo", fit_intercept=False, **ENTRY_0_01_PARAMS)),
            )
            for c in ("temperature", "Dirichlet")
        },
        **{
            f"{name} + {c} on its out-of-fold": (CHECK, _own_oof(c.lower(), library(**params)))
            for name, params in LIBRARY_SETTINGS.items()
            for c in ("temperature", "Dirichlet")
        },
        "convexagg entry 0.003, shuffled folds": (
            VARIANT,
            _shuffled(entry_weight_shrinkage=0.003),
        ),
        **{
            f"{SHUFFLED_CHECK} alpha={a}, + {c} on its out-of-fold": (
                CHECK,
                _own_oof(c.lower(), _shuffled(alpha=float(a))),
            )
            for a in ("3e-4", "1e-3")
            for c in ("temperature", "Dirichlet")
        },
        **{
            f"{SHUFFLED_CHECK} + {c} on its out-of-fold": (
                CHECK,
                _own_oof(c.lower(), _shuffled_default),
            )
            for c in ("temperature", "Dirichlet")
        },
    }
)
# the checks: checked method -> its (temperature, Dirichlet) check entries
CHECKED = {
    DEFAULT: ("default + temperature on its out-of-fold", "default + Dirichlet on its out-of-fold"),
    CV_VARIANT: tuple(
        f"{CV_VARIANT} + {c} on its out-of-fold" for c in ("temperature", "Dirichlet")
    ),
    OVR_SHRUNK_CHEAP: tuple(
        f"{OVR_SHRUNK_CHEAP} + {c} on its out-of-fold" for c in ("temperature", "Dirichlet")
    ),
    OVR_PENALTY_0_1: tuple(
        f"{OVR_PENALTY_0_1} + {c} on its out-of-fold" for c in ("temperature", "Dirichlet")
    ),
    OVR_PENALTY_0_1_ENTRY: tuple(
        f"{OVR_PENALTY_0_1_ENTRY} + {c} on its out-of-fold" for c in ("temperature", "Dirichlet")
    ),
    SHARED_WEIGHTS: tuple(
        f"{SHARED_CHECK} + {c} on its out-of-fold" for c in ("temperature", "Dirichlet")
    ),
    SHUFFLED: tuple(
        f"{SHUFFLED_CHECK} + {c} on its out-of-fold" for c in ("temperature", "Dirichlet")
    ),
    **{
        f"{SHUFFLED}, alpha={a}": tuple(
            f"{SHUFFLED_CHECK} alpha={a}, + {c} on its out-of-fold"
            for c in ("temperature", "Dirichlet")
        )
        for a in ("3e-4", "1e-3")
    },
    **{
        f"{SHUFFLED}, alpha={c}/n": tuple(
            f"{SHUFFLED_CHECK} alpha={c}/n, + {k} on its out-of-fold"
            for k in ("temperature", "Dirichlet")
        )
        for c in (0.2, 0.4)
    },
    OVR_PENALTY_SHUFFLED: tuple(
        f"{OVR_PENALTY_SHUFFLED_CHECK} + {c} on its out-of-fold"
        for c in ("temperature", "Dirichlet")
    ),
    ENTRY_0_01_ROW_ORDER: tuple(
        f"{ENTRY_CHECK} + {c} on its out-of-fold" for c in ("temperature", "Dirichlet")
    ),
    LOG_POOLED: tuple(
        f"{LOG_POOLED_CHECK} + {c} on its out-of-fold" for c in ("temperature", "Dirichlet")
    ),
    **{
        name: tuple(f"{name} + {c} on its out-of-fold" for c in ("temperature", "Dirichlet"))
        for name in LIBRARY_SETTINGS
    },
    OVO_SHUFFLED_COLD: tuple(
        f"{OVO_SHUFFLED_COLD_CHECK} + {c} on its out-of-fold" for c in ("temperature", "Dirichlet")
    ),
}
# "convexagg ovr" is both a linear peer and one of the default's ablations.
ABLATIONS = ("convexagg fit_intercept=True", "convexagg cv=None", "convexagg ensemble=False")
NONLINEAR_CONVEXAGG = "convexagg HGB binaries (ovr), cv=5"


# -- data ---------------------------------------------------------------------------------------


def datasets(kull_dir):
    names = sorted(p.name[: -len(".csv.gz")] for p in Path(kull_dir).glob("*.csv.gz"))
    if not names:
        raise SystemExit(f"no <name>.csv.gz in {kull_dir}; pass --kull-dir")
    return names


def load(name, kull_dir):
    """``(X, y, info)``: small classes dropped, then at most ``MAX_ROWS`` rows (stratified)."""
    from sklearn.model_selection import train_test_split

    from convexagg.datasets import load_dataset

    ds = load_dataset(name, kull_dir)
    X, y = np.asarray(ds.X, dtype=np.float64), np.asarray(ds.y)
    labels, counts = np.unique(y, return_counts=True)
    small = {str(c): int(n) for c, n in zip(labels, counts) if n < MIN_CLASS_ROWS}
    keep = ~np.isin(y, list(small)) if small else np.ones(len(y), bool)
    info = {"rows": int(len(y)), "features": int(X.shape[1]), "classes": int(len(labels))}
    X, y = X[keep], y[keep]
    if len(y) > MAX_ROWS:
        X, _, y, _ = train_test_split(X, y, train_size=MAX_ROWS, stratify=y, random_state=0)
    info.update(dropped=small, rows_used=int(len(y)), classes_used=int(len(np.unique(y))))
    return X, y, info


def splits(X, y):
    """The outer folds, standardised on their training part."""
    from sklearn.model_selection import StratifiedKFold
    from sklearn.preprocessing import StandardScaler

    folds = StratifiedKFold(OUTER_FOLDS, shuffle=True, random_state=0)
    for train, test in folds.split(X, y):
        scaler = StandardScaler().fit(X[train])
        yield scaler.transform(X[train]), y[train], scaler.transform(X[test]), y[test]


# -- the run ------------------------------------------------------------------------------------


def interleaved_times(args, names, methods):
    """Fit seconds of ``methods`` taken in turn on each set and fold (one process, so a
    shared machine's load falls on all of them alike): ``{method: [seconds, ...]}``, with
    each method's median and its ratio to the first method's printed."""
    import time
    import warnings

    times = {m: [] for m in methods}
    for name in names:
        X, y, _ = load(name, args.kull_dir)
        for fold, (X_tr, y_tr, _, _) in enumerate(splits(X, y)):
            for m in methods:
                estimator = METHODS[m][1](fold)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    t0 = time.perf_counter()
                    estimator.fit(X_tr, y_tr)
                    times[m].append(time.perf_counter() - t0)
        print(name, {m: round(t[-OUTER_FOLDS:][0], 2) for m, t in times.items()}, flush=True)
    ref = np.median(times[methods[0]])
    for m, t in times.items():
        print(f"{m}: median fit {np.median(t):.3f} s ({np.median(t) / ref:.2f} x {methods[0]})")
    return times


def run(args, names, methods, store):
    """Method by method over all sets (the cheap peers' records come first); with
    ``args.by_set``, set by set from the cheapest (rows x classes), every method on each:
    a run stopped early then leaves complete comparisons on the smaller sets. The records
    go to ``store``; a fold already measured on the same training part is skipped."""
    cache = {}
    for name in names:
        X, y, _ = load(name, args.kull_dir)
        cache[name] = list(splits(X, y))
    if args.by_set:
        cost = {n: len(cache[n][0][1]) * len(np.unique(cache[n][0][1])) for n in names}
        order = [(m, n) for n in sorted(names, key=cost.get) for m in methods]
    else:
        order = [(m, n) for m in methods for n in names]
    for method, name in order:
        family, make = METHODS[method]
        for fold, part in enumerate(cache[name]):
            n_classes = len(np.unique(part[1]))
            record, new = measure(store, method, family, make, name, fold, part, n_classes)
            if new:
                shown = record.get("log_loss", record.get("error"))
                secs = record.get("fit_s", float("nan"))
                print(f"{name} fold{fold} {method}: {shown} ({secs:.1f} s)", flush=True)


# -- tables -------------------------------------------------------------------------------------


def _means(rows, names, methods, metric):
    """``{(set, method): (mean, std)}`` over the folds; missing when a fold failed or is absent."""
    out = {}
    for name in names:
        for method in methods:
            recs = [r for r in rows if r["dataset"] == name and r["method"] == method]
            if len(recs) == OUTER_FOLDS and all("error" not in r for r in recs):
                vals = [r[metric] for r in recs]
                out[name, method] = (float(np.mean(vals)), float(np.std(vals)))
    return out


def average_ranks(rows, names, group, metric):
    """Average rank (1 = best) of each method of ``group`` over the sets where all have records."""
    from scipy.stats import rankdata

    m = _means(rows, names, group, metric)
    used = [n for n in names if all((n, g) in m for g in group)] if group else []
    if not used:
        return {}, used
    ranks = np.array([rankdata([m[n, g][0] for g in group]) for n in used])
    return dict(zip(group, ranks.mean(axis=0))), used


def _family(family):
    return [m for m, (f, _) in METHODS.items() if f == family]


def tables(rows, names, infos):
    linear, nonlinear = _family(LINEAR), _family(NONLINEAR)
    variants = _family(VARIANT)
    ll = _means(rows, names, list(METHODS), "log_loss")
    out, checks = [], {}

    out += ["### Data sets (after dropping classes under 6 rows, at most 3,000 rows)", ""]
    out += ["| set | rows (used) | features | classes (used) | dropped classes (rows) |"]
    out += ["| --- | --- | --- | --- | --- |"]
    for n in names:
        i = infos[n]
        dropped = ", ".join(f"{c} ({k})" for c, k in i["dropped"].items()) or "none"
        out.append(
            f"| {n} | {i['rows']} ({i['rows_used']}) | {i['features']} | "
            f"{i['classes']} ({i['classes_used']}) | {dropped} |"
        )
    out.append("")

    for fam_name, family in (("linear", linear), ("non-linear", nonlinear)):
        group = [g for g in family if any((n, g) in ll for n in names)]
        res = {
            mt: average_ranks(rows, names, group, mt)
            for mt in ("log_loss", "brier", "ece_classwise")
        }
        used = res["log_loss"][1]
        ref = DEFAULT if fam_name == "linear" else NONLINEAR_CONVEXAGG
        partial = [g for g in family if sum((n, g) in ll for n in names) < len(names)]
        counts = "; ".join(f"{g}: {sum((n, g) in ll for n in names)}" for g in partial)
        out += [
            f"### Average ranks, {fam_name} family (1 = best; over the {len(used)} of "
            f"{len(names)} sets where every ranked method has all folds' records)",
            "",
            f"Sets with records, where fewer than all: {counts}." if partial else "",
            "",
            f"| method | log-loss rank | Brier rank | classwise-ECE rank | {ref}'s log-loss "
            "wins / losses against it |",
            "| --- | --- | --- | --- | --- |",
        ]
        order = sorted(family, key=lambda g: res["log_loss"][0].get(g, np.inf))
        for g in order:
            cells = [f"{res[mt][0][g]:.2f}" if g in res[mt][0] else "-" for mt in res]
            out.append(f"| {g} | " + " | ".join(cells) + f" | {_wins(ll, names, ref, g)} |")
        out.append("")
        checks[fam_name] = {mt: res[mt][0] for mt in res}

    nl_peers = [g for g in nonlinear if g != NONLINEAR_CONVEXAGG]
    out += [
        f"### Non-linear variants, each ranked in place of {NONLINEAR_CONVEXAGG} among "
        "the non-linear peers",
        "",
        "| variant | log-loss rank | Brier rank | classwise-ECE rank | wins / losses against "
        f"{NONLINEAR_CONVEXAGG} (log-loss) | best peer's log-loss / Brier rank beside it |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for v in [NONLINEAR_CONVEXAGG] + _family(NONLINEAR_VARIANT):
        if not all((n, v) in ll for n in names):
            continue
        group = nl_peers + [v]
        r = {mt: average_ranks(rows, names, group, mt)[0] for mt in ("log_loss", "brier")}
        r["ece_classwise"] = average_ranks(rows, names, group, "ece_classwise")[0]
        best = [min(r[mt][g] for g in nl_peers) for mt in ("log_loss", "brier")]
        wins = "" if v == NONLINEAR_CONVEXAGG else _wins(ll, names, v, NONLINEAR_CONVEXAGG)
        out.append(
            f"| {v} | {r['log_loss'][v]:.2f} | {r['brier'][v]:.2f} | "
            f"{r['ece_classwise'][v]:.2f} | {wins} | {best[0]:.2f} / {best[1]:.2f} |"
        )
    out.append("")

    peers = [g for g in linear if g != DEFAULT and all((n, g) in ll for n in names)]
    out += [
        "### The default's variants, each ranked in place of the default among the linear peers",
        "",
        f"(peers: {', '.join(peers)})",
        "",
        "| variant | log-loss rank | Brier rank | classwise-ECE rank | wins / losses against "
        "the default (log-loss) | best peer's log-loss rank beside it | best peer's Brier rank "
        "beside it | sets no worse than multinomial LR (within its std) |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    lr = "LogisticRegression (multinomial)"
    for v in [DEFAULT, "convexagg ovr"] + variants:
        cells, best_peer = [], {"log_loss": "-", "brier": "-"}
        for mt in ("log_loss", "brier", "ece_classwise"):
            complete = all((n, v) in ll for n in names)
            group = [g for g in peers if g != v] + [v]
            r = average_ranks(rows, names, group, mt)[0] if complete else {}
            cells.append(f"{r[v]:.2f}" if v in r else "-")
            if mt in best_peer and v in r and len(group) > 1:  # would it lead the family
                peer = min((g for g in group if g != v), key=lambda g: r[g])
                best_peer[mt] = f"{peer} {r[peer]:.2f}"
        wins = "" if v == DEFAULT else _wins(ll, names, v, DEFAULT)
        both = [n for n in names if (n, v) in ll and (n, lr) in ll]
        fine = sum(ll[n, v][0] <= ll[n, lr][0] + ll[n, lr][1] for n in both)
        out.append(
            f"| {v} | " + " | ".join(cells) + f" | {wins} | {best_peer['log_loss']} | "
            f"{best_peer['brier']} | {fine} of {len(both)} |"
        )
    out.append("")

    shown = linear + variants + nonlinear
    out += ["### Log-loss per set, mean (std) over the 3 outer folds", ""]
    out += ["| set | " + " | ".join(shown) + " |", "|" + " --- |" * (len(shown) + 1)]
    for n in names:
        best = min((ll[n, g][0] for g in linear if (n, g) in ll), default=np.nan)
        cells = []
        for g in shown:
            if (n, g) not in ll:
                cells.append("-")
                continue
            text = f"{ll[n, g][0]:.3f} ({ll[n, g][1]:.3f})"
            cells.append(f"**{text}**" if g in linear and ll[n, g][0] == best else text)
        out.append(f"| {n} | " + " | ".join(cells) + " |")
    out += ["", "(bold: the best linear log-loss of the set)", ""]

    for checked in CHECKED:
        left_of = _left_to_calibrate(rows, names, checked)
        if checked == DEFAULT:
            left = left_of
        elif not left_of:
            continue
        out += [
            f"### Left to calibrate: relative log-loss change of {checked} when a calibrator "
            "is fitted on its own 3-fold out-of-fold probabilities (mean over the folds' "
            "log-losses)",
            "",
            "| set | its log-loss | + temperature | + Dirichlet |",
            "| --- | --- | --- | --- |",
        ]
        for n in names:
            if n not in left_of:
                continue
            d, t, r = left_of[n]
            out.append(f"| {n} | {d:.3f} | {_pct(t, d)} | {_pct(r, d)} |")
        out += ["", _lowered(left_of, checked), ""]

    out += _times(rows)
    out += ["### The targets", ""] + _targets(checks, ll, names, left, rows) + [""]
    return "\n".join(out)


def _pct(x, ref):
    return "-" if x is None else f"{100 * (x - ref) / ref:+.1f} %"


def _wins(ll, names, mine, other):
    both = [n for n in names if (n, mine) in ll and (n, other) in ll]
    if mine == other or not both:
        return ""
    wins = sum(ll[n, mine][0] < ll[n, other][0] for n in both)
    losses = sum(ll[n, mine][0] > ll[n, other][0] for n in both)
    return f"{wins} / {losses}"


def _left_to_calibrate(rows, names, checked=DEFAULT):
    """``{set: (checked, temperature or None, Dirichlet or None)}`` mean test log-losses."""
    methods = [checked, *CHECKED[checked]]
    ll = _means(rows, names, methods, "log_loss")
    return {
        n: (ll[n, checked][0], *[ll[n, m][0] if (n, m) in ll else None for m in methods[1:]])
        for n in names
        if (n, checked) in ll and any((n, m) in ll for m in methods[1:])
    }


def _lowered(left, checked):
    """The sets where a calibrator lowers ``checked``'s log-loss by more than 1 %."""
    lowered = [
        n for n, (d, t, r) in left.items() if any(x is not None and x < 0.99 * d for x in (t, r))
    ]
    complete = [n for n, (d, t, r) in left.items() if t is not None and r is not None]
    return (
        f"{checked}: a calibrator lowers the log-loss by more than 1 % on {len(lowered)} of "
        f"{len(left)} sets with a check ({len(complete)} with both calibrators): "
        f"{', '.join(lowered) or 'none'}"
    )


def _times(rows):
    out = [
        "### Run time per method (all sets and folds of these records)",
        "",
        "| method | median fit s | total fit + predict s | records |",
        "| --- | --- | --- | --- |",
    ]
    for m in METHODS:
        recs = [r for r in rows if r["method"] == m and "error" not in r]
        if recs:
            fit = [r["fit_s"] for r in recs]
            total = sum(r["fit_s"] + r["predict_s"] for r in recs)
            out.append(f"| {m} | {np.median(fit):.3f} | {total:.0f} | {len(recs)} |")
    errors = sorted({(r["dataset"], r["method"], r["error"]) for r in rows if "error" in r})
    out.append("")
    if errors:
        out += ["Errors:", ""] + [f"- {d}, {m}: {e}" for d, m, e in errors] + [""]
    return out


def _targets(checks, ll, names, left, rows):
    def verdict(ok, measured=True):  # a partial run has nothing to compare for some targets
        return "**not measured**" if not measured else "**met**" if ok else "**missed**"

    lines = []
    for fam, ref in (("linear", DEFAULT), ("non-linear", NONLINEAR_CONVEXAGG)):
        for mt in ("log_loss", "brier"):
            r = checks[fam][mt]
            if ref not in r or len(r) < 2:
                lines.append(
                    f"- {ref}: best average {mt} rank of the {fam} methods: **not measured** "
                    "(no records of it or of its peers)"
                )
                continue
            best = min(r, key=r.get)
            lines.append(
                f"- {ref}: best average {mt} rank of the {fam} methods: "
                f"{verdict(r[ref] <= r[best])} ({r[ref]:.2f}; best {best} {r[best]:.2f})"
            )
    lr = "LogisticRegression (multinomial)"
    both = [n for n in names if (n, DEFAULT) in ll and (n, lr) in ll]
    ok = [n for n in both if ll[n, DEFAULT][0] <= ll[n, lr][0] + ll[n, lr][1]]
    worse = ", ".join(n for n in both if n not in ok)
    lines.append(
        f"- log-loss no worse than multinomial LogisticRegression() (within its std over the "
        f"folds) on >= 90 % of the sets: {verdict(len(ok) >= 0.9 * len(both), bool(both))} "
        f"({len(ok)} of {len(both)}; worse: {worse or 'none'})"
    )
    lowered = [
        n for n, (d, t, r) in left.items() if any(x is not None and x < 0.99 * d for x in (t, r))
    ]
    complete = [n for n, (d, t, r) in left.items() if t is not None and r is not None]
    calibrated = verdict(len(lowered) <= 0.1 * len(left), bool(left))
    lines.append(
        f"- temperature or Dirichlet on the default's out-of-fold outputs lowers its log-loss by "
        f"more than 1 % on <= 10 % of the sets: {calibrated} "
        f"({len(lowered)} of {len(left)} sets, {len(complete)} with both calibrators: "
        f"{', '.join(lowered) or 'none'})"
    )
    fit = {
        m: np.median(
            [r["fit_s"] for r in rows if r["method"] == m and "error" not in r] or [np.nan]
        )
        for m in (DEFAULT, "LogisticRegressionCV (10 C, 5 folds, log-loss)")
    }
    d, c = fit.values()
    timed = verdict(d <= c, not np.isnan([d, c]).any())
    lines.append(
        f"- the default's median fit time at most LogisticRegressionCV's: {timed} "
        f"({d:.3f} s against {c:.3f} s; this machine, one thread, shared with other jobs)"
    )
    lines.append(
        "- the current ten sets: see `bench_quality.py --suite ten` (benchmarks/results/quality)"
    )
    return lines
