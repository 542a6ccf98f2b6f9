"""Why the Kull-best settings lose to the default on glass and wine (issue 21).

The splits of ``bench_quality.py --suite ten`` where the setting
``code="ovo+ovr", entry_weight_shrinkage=0.01, alpha=1e-3, binary_param_grid={"C": [0.01,
0.1, 1, 10]}`` is worst (glass split 3, wine splits 1 and 2), refitted with its options
switched on one at a time. Printed per fit: the test log-loss, the smallest probability of
a test row's true class, the in-sample log-loss of the aggregation on the out-of-fold
outputs (``oof_proba_``), the chosen ``C`` with each candidate's score, and the weights
(one-vs-one columns first).

    OMP_NUM_THREADS=1 python benchmarks/diagnose_glass_wine.py [--data-dir ../shared/datasets]
"""

import argparse
import sys
import warnings
from pathlib import Path

import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import log_loss

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_quality as B  # noqa: E402

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


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument(
        "--data-dir", default=str(Path(__file__).resolve().parents[1] / "../shared/datasets")
    )
    args = p.parse_args()
    warnings.simplefilter("ignore")
    for name, reps in SPLITS.items():
        X, y = B.load(name, args.data_dir, 2500)
        for rep in reps:
            X_tr, y_tr, X_te, y_te = B.split(X, y, rep)
            for setting, params in SETTINGS.items():
                model = ConvexAggregationClassifier(
                    LogisticRegression(max_iter=1000), random_state=rep, **params
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
