"""Why the Kull-best settings lose to the default on glass and wine, and the screen of the
candidate defaults on the same splits.

Backs QUALITY.md, "the first round" (the cause, split by split) and the candidate screens
of the rounds after it ("The second round", "The third round", "The fourth round"); the
screens' outputs are in ``benchmarks/results/quality/candidates/``.

The splits of ``bench_quality.py --suite ten`` where the setting
``code="ovo+ovr", entry_weight_shrinkage=0.01, alpha=1e-3, binary_param_grid={"C": [0.01,
0.1, 1, 10]}`` is worst (glass split 3, wine splits 1 and 2), refitted with its options
turned on one at a time. Printed per fit: the test log-loss, the smallest probability of
a test row's true class, the in-sample log-loss of the aggregation on the out-of-fold
outputs (``oof_proba_``), the chosen ``C`` with each candidate's score, and the weights
(one-vs-one columns first).

    OMP_NUM_THREADS=1 python benchmarks/studies/diagnose_glass_wine.py \\
        [--data-dir ../shared/datasets] [--candidates 1 (or 2 .. 6)]

``--candidates N`` screens one group of candidate defaults (``lib/methods.py``) on the same
splits, beside the default; a candidate passes where its test log-loss on each of the
three splits is at most the default's on that split plus the default's standard deviation
over the 5 splits of that set (glass 0.094, wine 0.009: ``benchmarks/results/quality/tables.md``).
The groups, in the order they were screened (:data:`CANDIDATE_GROUPS`): 1, ``C`` and
``alpha`` cross-validated on the out-of-fold outputs, and their cheap forms (beside the two
cross-validated settings); 2, only ``C`` cross-validated; 3, the one-vs-rest columns shrunk
toward 0, both cross-validated; 4, mixtures; 5, cheap settings without cross-validation
(beside plain ``code="ovo+ovr"`` and the per-column prototype at ``C=1``, the same numbers:
its check); 6, the one-vs-rest penalty +0.1 with entry weights 0.01, intercepts or
``alpha=1e-3`` added (beside that setting itself).
``--check-prototype``: that check on every set and fold of the Kull suite, against plain
``code="ovo+ovr"`` fitted in the same process (every score equal to the last digit), and the
largest gap to the committed Kull records of ``convexagg ovo+ovr``.
"""

import argparse
import sys
import warnings
from pathlib import Path

import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import log_loss

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from lib import methods as M  # noqa: E402
from lib import ten_sets as T  # noqa: E402

from convexagg import ConvexAggregationClassifier  # noqa: E402

C4 = {"C": [0.01, 0.1, 1.0, 10.0]}
SETTINGS = {
    "default": {},
    "ovr": dict(code="ovr"),
    "ovo+ovr": dict(code="ovo+ovr"),
    "ovo+ovr, alpha=1e-2": dict(code="ovo+ovr", alpha=1e-2),
    "C4": dict(binary_param_grid=C4),
    "ovo+ovr, C4": dict(code="ovo+ovr", binary_param_grid=C4),
    "ovo+ovr, entry 0.01, alpha=1e-3": dict(
        code="ovo+ovr", entry_weight_shrinkage=0.01, alpha=1e-3
    ),
    "ovo+ovr, entry 0.01, C4, alpha=1e-3": dict(
        code="ovo+ovr", entry_weight_shrinkage=0.01, alpha=1e-3, binary_param_grid=C4
    ),
}
SPLITS = {"glass": [3], "wine": [1, 2]}
DEFAULT_STD = {"glass": 0.094, "wine": 0.009}
# --candidates N -> (candidates, the grid of their cheap forms or None)
CANDIDATE_GROUPS = {
    1: (M.CV_C_ALPHA_CANDIDATES, M.CHEAP_GRID),
    2: (M.CV_C_CANDIDATES, M.CHEAP_C_GRID),
    3: (M.CV_OVR_SHRUNK_CANDIDATES, M.CHEAP_GRID),
    4: (M.MIXTURE_CANDIDATES, None),
    5: (M.NO_CV_CANDIDATES, None),
    6: (M.OVR_PENALTY_ADDITIONS, None),
}


def screen(data_dir, group):
    """The candidates' test log-loss on the three splits, and whether each passes."""
    cands = {}
    if group == 1:
        cands["ovo+ovr, C4 and alpha cross-validated"] = M.cv_c_alpha("ovo+ovr")
        cands["ovo, C4 and alpha cross-validated"] = M.cv_c_alpha("ovo")
    candidates, cheap = CANDIDATE_GROUPS[group]
    if group == 5:
        cands["ovo+ovr (plain)"] = M.ca(code="ovo+ovr")
        cands.update(M.PER_COLUMN_CHECK)
    if group == 6:  # the setting the additions are made to
        cands["ovo+ovr, C=1, ovr penalty +0.1"] = M.NO_CV_CANDIDATES[
            "ovo+ovr, C=1, ovr penalty +0.1"
        ]
    for name, options in candidates.items():
        if callable(options):  # groups 4 to 6: factories
            cands[name] = options
            continue
        cands[name] = M.cv_c_alpha(**options)
        cands[name + ", cheap"] = M.cv_c_alpha(**options, **cheap)
    default, results = {}, {name: {} for name in cands}
    for name, reps in SPLITS.items():
        X, y = T.load(name, data_dir, 2500)
        for rep in reps:
            X_tr, y_tr, X_te, y_te = T.split(X, y, rep)
            model = ConvexAggregationClassifier(
                LogisticRegression(max_iter=1000),
                random_state=rep,
                **M.SHARED_WEIGHTS_PARAMS,
                **M.ONE_VS_ONE_PARAMS,
            ).fit(X_tr, y_tr)  # the reference: version 0.2's model
            default[name, rep] = log_loss(y_te, model.predict_proba(X_te))
            print(f"{name} split {rep} default: {default[name, rep]:.3f}", flush=True)
            for cand, make in cands.items():
                model = make(rep).fit(X_tr, y_tr)
                P = model.predict_proba(X_te)
                results[cand][name, rep] = ll = log_loss(y_te, P, labels=model.classes_)
                print(
                    f"{name} split {rep} {cand:40s} test {ll:.3f} "
                    + (f"C={model.C_:g} alpha={model.alpha_:.3g}" if hasattr(model, "C_") else ""),
                    flush=True,
                )
    print("\n| candidate | glass 3 | wine 1 | wine 2 | passes |\n| --- | --- | --- | --- | --- |")
    keys = [(n, r) for n, reps in SPLITS.items() for r in reps]
    print("| default | " + " | ".join(f"{default[k]:.3f}" for k in keys) + " | |")
    for cand, res in results.items():
        ok = all(res[k] <= default[k] + DEFAULT_STD[k[0]] for k in keys)
        cells = " | ".join(f"{res[k]:.3f}" for k in keys)
        print(f"| {cand} | {cells} | {'yes' if ok else 'no'} |")


def check_prototype(data_dir):
    """The per-column prototype at ``C_ovr=1`` against plain ovo+ovr refitted here (equal
    to the last digit?) and against the committed Kull records of ovo+ovr (largest gap)."""
    from lib import kull as K
    from lib.records import RecordStore
    from lib.scoring import run_one

    kull_dir = str(Path(data_dir) / "kull2019")
    store = RecordStore(Path(__file__).resolve().parents[1] / "results" / "quality" / "kull")
    keys = ("log_loss", "brier", "accuracy", "ece_top", "ece_classwise")
    plain, proto = M.ca(code="ovo+ovr"), M.PER_COLUMN_CHECK["ovo+ovr, ovr binaries C=1"]
    same, gap, n = 0, 0.0, 0
    for name in K.datasets(kull_dir):
        X, y, _ = K.load(name, kull_dir)
        for fold, (X_tr, y_tr, X_te, y_te) in enumerate(K.splits(X, y)):
            rec = store.get(name, fold, "convexagg ovo+ovr")
            mine = run_one("", proto, X_tr, y_tr, X_te, y_te, fold)
            ref = run_one("", plain, X_tr, y_tr, X_te, y_te, fold)
            equal = all(mine[k] == ref[k] for k in keys)
            rel = max(abs(mine[k] - rec[k]) / max(abs(rec[k]), 1e-300) for k in keys)
            same, gap, n = same + equal, max(gap, rel), n + 1
            print(
                f"{name} fold {fold}: {'equal' if equal else 'DIFFERENT'} to plain ovo+ovr "
                f"(log-loss {mine['log_loss']!r}, {ref['log_loss']!r}); largest relative gap "
                f"to the committed record {rel:.1e}",
                flush=True,
            )
    print(f"{same} of {n} folds: every score equal to plain ovo+ovr fitted in the same process")
    print(f"largest relative gap of a score to the committed records of ovo+ovr: {gap:.1e}")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument(
        "--data-dir", default=str(Path(__file__).resolve().parents[2] / "../shared/datasets")
    )
    p.add_argument(
        "--candidates",
        type=int,
        choices=(1, 2, 3, 4, 5, 6),
        help="screen a group of candidate defaults (CANDIDATE_GROUPS)",
    )
    p.add_argument(
        "--check-prototype",
        action="store_true",
        help="the per-column prototype at C=1 against the Kull records of ovo+ovr",
    )
    args = p.parse_args()
    warnings.simplefilter("ignore")
    if args.check_prototype:
        return check_prototype(args.data_dir)
    if args.candidates:
        return screen(args.data_dir, args.candidates)
    for name, reps in SPLITS.items():
        X, y = T.load(name, args.data_dir, 2500)
        for rep in reps:
            X_tr, y_tr, X_te, y_te = T.split(X, y, rep)
            for setting, params in SETTINGS.items():
                model = ConvexAggregationClassifier(
                    LogisticRegression(max_iter=1000),
                    random_state=rep,
                    **{**M.SHARED_WEIGHTS_PARAMS, **M.ONE_VS_ONE_PARAMS, **params},
                ).fit(X_tr, y_tr)
                P = model.predict_proba(X_te)
                p_true = P[np.arange(len(y_te)), np.searchsorted(model.classes_, y_te)]
                line = (
                    f"{name} split {rep} {setting:38s} test {log_loss(y_te, P):.3f} "
                    f"min p(true) {p_true.min():.2g} in-sample oof "
                    f"{log_loss(y_tr, model.oof_proba_):.3f}"
                )
                if hasattr(model, "best_binary_params_"):
                    scores = np.round(model.binary_grid_results_["log_loss"], 3)
                    line += f" C={model.best_binary_params_['C']:g} {scores}"
                print(line + f" w {np.round(model.weights_, 2)}", flush=True)


if __name__ == "__main__":
    main()
