"""How strongly to hold the zero entries' weights back: the default's aggregation
refitted on its own training outputs with ``zero_entry_penalty`` fixed or ``c / n``.

On each Kull et al. set and outer fold (the protocol of ``bench_quality.py --suite
kull``) the default ``ConvexAggregationClassifier`` without zero entries
(``lib.refit_scans.default_without_zero_entries``) is fitted once; its decoder is
then refitted on the same training outputs (``training_outputs``) with each
setting, and scored on the test fold's averaged binary outputs
(``predict_binary_proba``). Every setting is compared with the default's decoder
refitted the same way, so the binaries are the same for all: the change in test
log-loss is the zero entries' alone. The numbers behind the zero entries' priors: 80 / n,
the smallest fixed prior with no set worse, and "auto"'s 3-fold choice among the priors
(``select_penalty``, as the estimator does); backs QUALITY.md, "Why the default is what it
is" and "Settings measured that are not the default".

    OMP_NUM_THREADS=1 python benchmarks/studies/scan_zero_entry_prior.py \
        --data-dir ../shared/datasets \
        --out benchmarks/results/zero_entry_prior_free_sign.json
"""

import sys
from pathlib import Path

from sklearn.base import clone
from sklearn.metrics import log_loss

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from lib import common as C  # noqa: E402
from lib import refit_scans as S  # noqa: E402

from convexagg.decoders.selection import PenaltyCandidates, select_penalty  # noqa: E402
from convexagg.estimator import ZERO_ENTRY_PRIORS  # noqa: E402

# fixed strengths (absolute, as column_penalty) and priors c / n (n: the rows fitted on)
FIXED = (0.003, 0.01, 0.03)
PRIORS = (5.0, 20.0, 40.0, 80.0)


def settings(n_rows):
    out = {f"{c:g}": c for c in FIXED}
    out.update({f"{c:g}/n": c / n_rows for c in PRIORS})
    return out


def scan_set(name, kull_dir):
    """``{setting: [test log-loss per fold]}``, with ``"none"`` the default's decoder."""
    scores = {}
    for clf, Q, y_fit, Q_test, labels in S.default_refits(name, kull_dir):
        K_ = len(clf.classes_)
        decoder = clf.decoder_
        scores.setdefault("none", []).append(
            log_loss(labels, decoder.predict_proba(Q_test), labels=range(K_))
        )
        strengths = settings(len(y_fit))
        # "auto": the estimator's choice, on the rows and folds it would use
        values = tuple(c / len(y_fit) for c in ZERO_ENTRY_PRIORS)
        zero = clone(decoder).set_params(zero_entry_penalty=values[0])
        candidates = PenaltyCandidates("zero_entry_penalty", values, clf._fold_seed)
        best = select_penalty(zero, Q, y_fit, clf.code_matrix_, candidates).best
        strengths["auto (chosen)"] = values[best]
        for key, strength in strengths.items():
            refit = clone(decoder).set_params(zero_entry_penalty=strength)
            refit.fit(Q, y_fit, clf.code_matrix_)
            P = refit.predict_proba(Q_test)
            scores.setdefault(key, []).append(log_loss(labels, P, labels=range(K_)))
    return scores


def main():
    S.report_scan(
        C.parser(__doc__.splitlines()[0]),
        scan_set,
        "none",
        "zero_entry_penalty on the default's training outputs, Kull suite (test log-loss "
        "change against the default's decoder refitted on the same outputs)",
    )


if __name__ == "__main__":
    main()
