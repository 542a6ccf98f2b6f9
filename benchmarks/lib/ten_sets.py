"""The ten data sets of ``bench_quality.py`` (the default suite): data, methods, tables.

The paper's data sets found in ``--data-dir`` (glass, segment, satimage, pendigits,
vowel, letter, all_leukemia_galgo; those above ``--max-rows`` rows subsampled, stratified)
and scikit-learn's bundled digits, wine and iris; ``--splits`` stratified 80/20 splits,
the features standardised on the training part (gene-expression data: the 500 features
of largest training variance first). Every method of :data:`METHODS` on every split; the
tables give the mean and standard deviation over the splits.
"""

from __future__ import annotations

import numpy as np

from .methods import (
    CHEAP_C_GRID,
    CHEAP_GRID,
    CV_C_ALPHA_CANDIDATES,
    CV_C_CANDIDATES,
    CV_OVR_SHRUNK_CANDIDATES,
    ENTRY_0_01_PARAMS,
    ENTRY_0_01_ROW_ORDER,
    FOLDS,
    LIBRARY_SETTINGS,
    LINEAR,
    MIXTURE_CANDIDATES,
    NO_CV_CANDIDATES,
    NONLINEAR,
    OVO_SHUFFLED_COLD,
    OVR_PENALTY_ADDITIONS,
    PER_COLUMN_CHECK,
    SHARED_WEIGHTS,
    alpha_per_row,
    ca,
    calibrated_ovo,
    calibrated_svc,
    coded,
    cv_c_alpha,
    hgb,
    holdout,
    library,
    library_default,
    lrcv,
    nonlinear,
    ovr_lr,
    rf,
    shuffled_folds,
)
from .scoring import measure

PAPER_SETS = ("glass", "segment", "satimage", "pendigits", "vowel", "letter", "all_leukemia_galgo")
BUNDLED = ("digits", "wine", "iris")
# the methods of a plumbing run (``--quick``)
QUICK_METHODS = (
    "convexagg (default)",
    "LogisticRegressionCV (multinomial)",
    "pairwise coupling, same binaries",
)


# name -> (family, factory(seed) -> estimator)
METHODS = {
    "convexagg (default)": (LINEAR, library_default),
    SHARED_WEIGHTS: (LINEAR, ca()),
    ENTRY_0_01_ROW_ORDER: (LINEAR, ca(entry_weight_shrinkage=0.01)),
    OVO_SHUFFLED_COLD: (LINEAR, library(code="ovo", fit_intercept=False, **ENTRY_0_01_PARAMS)),
    "convexagg cv=None (paper)": (LINEAR, ca(cv="in_sample")),
    "convexagg cv=5 ensemble": (LINEAR, ca(cv=FOLDS, ensemble=True)),
    "convexagg cv=5 refit": (LINEAR, ca(cv=FOLDS, ensemble=False)),
    "convexagg cv=3 ensemble": (LINEAR, ca(cv=3, ensemble=True)),
    "convexagg held-out 20%": (LINEAR, ca(cv=holdout)),
    "convexagg cv=5 ensemble, intercepts": (LINEAR, ca(cv=FOLDS, fit_intercept=True)),
    "convexagg cv=None, intercepts": (LINEAR, ca(cv="in_sample", fit_intercept=True)),
    "convexagg ovr cv=5": (LINEAR, ca(code="ovr", cv=FOLDS)),
    "convexagg ecoc cv=5": (LINEAR, ca(code="ecoc", cv=FOLDS)),
    # the best setting on the Kull et al. suite, checked on these ten
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
    **{f"convexagg {n}": (LINEAR, cv_c_alpha(**o)) for n, o in CV_C_ALPHA_CANDIDATES.items()},
    **{
        f"convexagg {n}, cheap": (LINEAR, cv_c_alpha(**o, **CHEAP_GRID))
        for n, o in CV_C_ALPHA_CANDIDATES.items()
    },
    **{f"convexagg {n}": (LINEAR, cv_c_alpha(**o)) for n, o in CV_C_CANDIDATES.items()},
    **{
        f"convexagg {n}, cheap": (LINEAR, cv_c_alpha(**o, **CHEAP_C_GRID))
        for n, o in CV_C_CANDIDATES.items()
    },
    **{f"convexagg {n}": (LINEAR, cv_c_alpha(**o)) for n, o in CV_OVR_SHRUNK_CANDIDATES.items()},
    **{
        f"convexagg {n}, cheap": (LINEAR, cv_c_alpha(**o, **CHEAP_GRID))
        for n, o in CV_OVR_SHRUNK_CANDIDATES.items()
    },
    **{f"convexagg {n}": (LINEAR, make) for n, make in MIXTURE_CANDIDATES.items()},
    **{
        f"convexagg {n}": (LINEAR, make)
        for n, make in {**NO_CV_CANDIDATES, **PER_COLUMN_CHECK}.items()
    },
    **{f"convexagg {n}": (LINEAR, make) for n, make in OVR_PENALTY_ADDITIONS.items()},
    "convexagg ovo+ovr": (LINEAR, ca(code="ovo+ovr")),
    **{name: (LINEAR, library(**params)) for name, params in LIBRARY_SETTINGS.items()},
    # entry weights 0.01 on shuffled folds (not in row order)
    **{
        f"convexagg entry 0.01, shuffled folds{n}": (
            LINEAR,
            ca(cv=shuffled_folds, entry_weight_shrinkage=0.01, **o),
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
            cv=shuffled_folds,
        ),
    ),
    **{
        f"convexagg entry 0.01, shuffled folds, alpha={c}/n": (
            LINEAR,
            alpha_per_row(ca(cv=shuffled_folds, entry_weight_shrinkage=0.01), c),
        )
        for c in (0.2, 0.4)
    },
    # the cheap grid alone on the Kull-best setting (the name as in lib.kull)
    "convexagg ovo+ovr, C4 and alpha cross-validated, cheap": (
        LINEAR,
        cv_c_alpha("ovo+ovr", **CHEAP_GRID),
    ),
    "pairwise coupling, same binaries": (LINEAR, coded("PairwiseCouplingDecoder", cv=FOLDS)),
    "pairwise coupling, binaries on all rows": (
        LINEAR,
        coded("PairwiseCouplingDecoder", cv="in_sample"),
    ),
    "Bradley-Terry, same binaries": (LINEAR, coded("BradleyTerryDecoder", cv=FOLDS)),
    "loss-based, same binaries": (LINEAR, coded("LossBasedDecoder", cv=FOLDS)),
    "LogisticRegressionCV (multinomial)": (LINEAR, lrcv),
    "OneVsRest(LogisticRegression)": (LINEAR, ovr_lr),
    "Calibrated LinearSVC, sigmoid": (LINEAR, calibrated_svc("sigmoid")),
    "Calibrated LinearSVC, temperature": (LINEAR, calibrated_svc("temperature")),
    "Calibrated OneVsOne(LR), temperature": (LINEAR, calibrated_ovo),
    "Calibrated SVC (RBF), sigmoid, ensemble=False": (
        NONLINEAR,
        calibrated_svc("sigmoid", linear=False),
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


# -- the run and the tables ---------------------------------------------------------------------


def run(args, datasets, methods, store):
    """Every method of ``methods`` on every split of every data set, its records in ``store``
    (a split already measured on the same training part is skipped)."""
    for dataset in datasets:
        X, y = load(dataset, args.data_dir, args.max_rows)
        for rep in range(args.splits):
            part = split(X, y, rep)
            for method in methods:
                family, make = METHODS[method]
                record, new = measure(
                    store, method, family, make, dataset, rep, part, len(np.unique(y))
                )
                if new:
                    shown = record.get("log_loss", record.get("error"))
                    print(f"{dataset} rep{rep} {method}: {shown}", flush=True)


def collect(store, datasets, methods, splits):
    """The records of ``methods`` on the first ``splits`` splits of ``datasets``."""
    return [r for r in store.all(methods) if r["dataset"] in datasets and r["rep"] < splits]


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
    """The targets' checks, in words (a method without records counts as not run)."""

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
