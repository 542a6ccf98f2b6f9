"""What the left-to-calibrate check's Dirichlet gain uses: the discrepancies or the normaliser.

On each Kull et al. set and outer fold (the protocol of ``bench_quality.py --suite kull``),
the default ``ConvexAggregationClassifier`` without zero entries
(``lib.refit_scans.default_without_zero_entries``) is fitted and checked as ``bench_quality.py``
checks it ("default + Dirichlet on its out-of-fold": the calibrator fitted on its 3-fold
out-of-fold probabilities, applied to its test probabilities), with three calibrators:

* ``dirichlet``: the check's own (``lib.calibrators.dirichlet``);
* ``LR(log q)``: multinomial logistic regression on ``log q``, its ``C`` from 0.1 .. 1000 by
  3-fold log-loss -- the Dirichlet map with another choice of its L2 strength;
* ``LR(centred log q)``: the same on ``log q`` minus its row mean. ``log q_k = -rho_k - log Z``
  with ``rho`` the class discrepancies and ``Z`` the softmax's normaliser: centred, the
  features are ``-rho`` centred, so this calibrator is a linear map of the discrepancies and
  cannot use ``log Z``, which the other two can (through rows of the map that sum to
  different values).

Where the centred calibrator gains as much as the others, what is left is a (signed) linear
map of the class discrepancies -- the kind of term an aggregation linear in the losses can
hold; where it gains nothing, the gain comes from ``log Z``, a non-linear function of them.

Backs QUALITY.md, "Settings measured that are not the default" (what the zero entries take).

    OMP_NUM_THREADS=1 python benchmarks/studies/diagnose_left_to_calibrate.py \
        --data-dir ../shared/datasets --out benchmarks/results/left_to_calibrate_terms.json
"""

import sys
from pathlib import Path

import numpy as np
from sklearn.base import clone
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV, StratifiedKFold, cross_val_predict

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from lib import calibrators as CAL  # noqa: E402
from lib import common as C  # noqa: E402
from lib import kull as K  # noqa: E402
from lib import refit_scans as S  # noqa: E402

C_GRID = (0.1, 1.0, 10.0, 100.0, 1000.0)


class LogProbabilityLR:
    """Multinomial logistic regression on ``log q`` (``centred``: minus its row mean)."""

    def __init__(self, centred):
        self.centred = centred

    def _features(self, P):
        L = np.log(CAL._renormalise(P))
        return L - L.mean(axis=1, keepdims=True) if self.centred else L

    def fit(self, P, y):
        folds = StratifiedKFold(CAL.INNER_FOLDS, shuffle=True, random_state=0)
        search = GridSearchCV(
            LogisticRegression(max_iter=2000), {"C": list(C_GRID)}, cv=folds, scoring="neg_log_loss"
        )
        self.model_ = search.fit(self._features(P), y).best_estimator_
        return self

    def predict_proba(self, P):
        return self.model_.predict_proba(self._features(P))


CALIBRATORS = {
    "dirichlet": CAL.dirichlet,
    "LR(log q)": lambda: LogProbabilityLR(centred=False),
    "LR(centred log q)": lambda: LogProbabilityLR(centred=True),
}


def check_set(name, kull_dir):
    """``{"default": [test log-loss per fold], calibrator: [...]}``."""
    X, y, _ = K.load(name, kull_dir)
    scores = {}
    for fold, (X_tr, y_tr, X_te, y_te) in enumerate(K.splits(X, y)):
        classes, y_fit = np.unique(y_tr, return_inverse=True)
        labels = np.searchsorted(classes, y_te)
        # as CalibratedOnOwnOOF(the checked model, ..., random_state=fold) does
        folds = StratifiedKFold(CAL.INNER_FOLDS, shuffle=True, random_state=fold)
        oof = cross_val_predict(
            clone(S.default_without_zero_entries(fold)),
            X_tr,
            y_fit,
            cv=folds,
            method="predict_proba",
        )
        P = S.default_without_zero_entries(fold).fit(X_tr, y_fit).predict_proba(X_te)
        scores.setdefault("default", []).append(CAL._log_loss(P, labels))
        for key, make in CALIBRATORS.items():
            calibrated = make().fit(CAL._renormalise(oof), y_fit)
            Pc = calibrated.predict_proba(CAL._renormalise(P))
            scores.setdefault(key, []).append(CAL._log_loss(Pc, labels))
    return scores


def main():
    S.report_scan(
        C.parser(__doc__.splitlines()[0]),
        check_set,
        "default",
        "The default's test log-loss change with each calibrator fitted on its 3-fold "
        "out-of-fold probabilities, Kull suite",
        signed=True,
    )


if __name__ == "__main__":
    main()
