"""Choosing ``entry_weight_shrinkage`` on the training outputs: the default's aggregation
refitted with each fixed value, with ``c / n`` kept within [0.001, 0.01], and with the
value chosen by cross-validation.

On each Kull et al. set and outer fold (the protocol of ``bench_quality.py --suite
kull``) the default ``ConvexAggregationClassifier`` is fitted once; its decoder is then
refitted on the same training outputs (``training_outputs``) with each setting and
scored on the test fold by the estimator's own ``predict_proba`` (the fold members'
decodes averaged), so the binaries are the same for all: the change in test log-loss
is the shrinkage's alone. The chosen settings use ``select_penalty`` (the library's
selection) with 3 and 5 folds; the seconds of the 3-fold choice are timed as the library makes
it (the losses computed once, each value warm-started) and cold (each value fitted from
the solver's start on losses computed anew), in turn. The
numbers behind the shrinkage's "auto" (backs QUALITY.md, "Why the default is what it is").

    OMP_NUM_THREADS=1 python benchmarks/studies/scan_shrinkage_choice.py \\
        --data-dir ../shared/datasets \\
        --out benchmarks/results/shrinkage_choice.json
"""

import sys
import time
from pathlib import Path

import numpy as np
from sklearn.base import clone
from sklearn.metrics import log_loss

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from lib import common as C  # noqa: E402
from lib import kull as K  # noqa: E402
from lib import refit_scans as S  # noqa: E402
from lib.methods import library_default  # noqa: E402

from convexagg._folds import shuffled_splits  # noqa: E402
from convexagg.decoders.selection import PenaltyCandidates, select_penalty  # noqa: E402

VALUES = (0.01, 0.003, 0.001)  # 0.01 first: ties keep it
FIXED = VALUES[1:]
# a prior c on the summed log-likelihood: c / n for the n rows, within [0.001, 0.01] ("auto"
# is the library's, c = DEFAULT_ENTRY_WEIGHT_PRIOR)
PRIORS = (0.5, 1.0, 2.0, 3.0)


def _cold_choice(decoder, Q, y, code, seed):
    """The 3-fold choice with every fit started cold, its losses computed anew (for the
    timing only)."""
    for train, _ in shuffled_splits(y, 3, seed):
        for value in VALUES:
            clone(decoder).set_params(entry_weight_shrinkage=value).fit(Q[train], y[train], code)


def _test_log_loss(clf, decoder, value, Q, y_fit, X_test, labels):
    """``clf``'s test log-loss with ``decoder`` refitted at ``value`` in its place."""
    clf.decoder_ = clone(decoder).set_params(entry_weight_shrinkage=value)
    clf.decoder_.fit(Q, y_fit, clf.code_matrix_)
    return log_loss(labels, clf.predict_proba(X_test), labels=range(len(clf.classes_)))


def scan_set(name, kull_dir):
    """``({setting: [test log-loss per fold]}, {setting: [chosen value per fold]},
    {"warm": [s], "cold": [s]})``; ``"0.01"`` is the decoder at 0.01 refitted."""
    X, y, _ = K.load(name, kull_dir)
    scores, chosen, seconds = {}, {}, {"warm": [], "cold": []}
    for fold, (X_tr, y_tr, X_te, y_te) in enumerate(K.splits(X, y)):
        clf = library_default(fold).fit(X_tr, y_tr)
        Q, y_fit, _ = clf.training_outputs(X_tr, y_tr)
        labels = np.searchsorted(clf.classes_, y_te)
        decoder, code = clf.decoder_, clf.code_matrix_

        def score(value, clf=clf, decoder=decoder, data=(Q, y_fit, X_te, labels)):
            return _test_log_loss(clf, decoder, value, *data)

        scores.setdefault("0.01", []).append(score(VALUES[0]))
        for value in FIXED:
            scores.setdefault(f"{value:g}", []).append(score(value))
        for c in PRIORS:
            value = float(np.clip(c / y_fit.size, VALUES[-1], VALUES[0]))
            scores.setdefault(f"{c:g}/n", []).append(score(value))
        for folds in (3, 5):
            t0 = time.perf_counter()
            candidates = PenaltyCandidates("entry_weight_shrinkage", VALUES, fold, folds)
            best = select_penalty(decoder, Q, y_fit, code, candidates).best
            if folds == 3:
                seconds["warm"].append(time.perf_counter() - t0)
                t0 = time.perf_counter()
                _cold_choice(decoder, Q, y_fit, code, fold)
                seconds["cold"].append(time.perf_counter() - t0)
            key = f"chosen, {folds} folds"
            scores.setdefault(key, []).append(score(VALUES[best]))
            chosen.setdefault(key, []).append(VALUES[best])
    return scores, chosen, seconds


def main():
    args, kull_dir, names = S.scan_arguments(C.parser(__doc__.splitlines()[0]))
    info = C.machine()
    outputs, changes = S.scan_sets(names, kull_dir, scan_set, "0.01")
    results = {
        n: dict(zip(("log_loss", "chosen", "seconds"), outputs[n], strict=True)) for n in names
    }
    base = {n: np.mean(results[n]["log_loss"]["0.01"]) for n in names}
    chosen = {n: " ".join(f"{v:g}" for v in results[n]["chosen"]["chosen, 3 folds"]) for n in names}
    warm = [s for n in names for s in results[n]["seconds"]["warm"]]
    cold = [s for n in names for s in results[n]["seconds"]["cold"]]
    text = (
        "## entry_weight_shrinkage on the default's training outputs, Kull suite (test "
        "log-loss change against the decoder at 0.01, refitted on "
        "the same outputs)\n\n"
        + C.header(info)
        + "\n\n"
        + S.change_table(
            changes, base, "log-loss at 0.01", extra=("chosen (3 folds), per outer fold", chosen)
        )
        + f"\n\nThe 3-fold choice's seconds (median over sets and folds): warm-started "
        f"{np.median(warm):.3f} s, cold {np.median(cold):.3f} s.\n"
    )
    C.finish(args, info, results, text)


if __name__ == "__main__":
    main()
