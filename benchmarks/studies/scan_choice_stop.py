"""Stopping the zero entries' choice at the first rise: what it saves and what it changes.

On each Kull et al. set and outer fold (the protocol of ``bench_quality.py --suite
kull``) the default ``ConvexAggregationClassifier`` is fitted, and its choice among
``ZERO_ENTRY_PRIORS`` is made again on its training outputs (``training_outputs``,
``select_penalty`` on its rows, folds and seed, as the estimator does) twice: every
prior fitted and scored, and ``stop_when_worse`` (the estimator's way since the
priors' fits stop once the held-out score rises). Reported per fold: the four scores,
the prior each way chooses, the priors fitted; in total the folds whose choice
differs, with the held-out score given up, and the priors fitted of all.

Backs QUALITY.md, "Why the default is what it is" (the zero entries' choice).

    OMP_NUM_THREADS=1 python benchmarks/studies/scan_choice_stop.py --data-dir ../shared/datasets \
        --out benchmarks/results/choice_stop.json
"""

import sys
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from lib import common as C  # noqa: E402
from lib import kull as K  # noqa: E402
from lib import refit_scans as S  # noqa: E402

from convexagg.decoders.selection import PenaltyCandidates, select_penalty  # noqa: E402
from convexagg.estimator import ZERO_ENTRY_PRIORS  # noqa: E402


def scan_fold(clf, X_tr, y_tr):
    """``{"scores", "whole", "stopped", "fitted"}`` of one fitted default."""
    Q, y_fit, _ = clf.training_outputs(X_tr, y_tr)
    values = tuple(c / len(y_fit) for c in ZERO_ENTRY_PRIORS)
    args = (clf.decoder_, Q, y_fit, clf.code_matrix_)
    name, seed, output = "zero_entry_penalty", clf._fold_seed, clf.binary_output_
    whole_choice = select_penalty(*args, PenaltyCandidates(name, values, seed), output)
    stop = PenaltyCandidates(name, values, seed, stop_when_worse=True)
    stopped_choice = select_penalty(*args, stop, output)
    whole, scores = whole_choice.best, whole_choice.scores
    stopped, stopped_scores = stopped_choice.best, stopped_choice.scores
    fitted = int(np.count_nonzero(np.isfinite(stopped_scores)))
    if not np.array_equal(stopped_scores[:fitted], scores[:fitted]):
        raise AssertionError("the stopped choice's fits differ from the whole scan's")
    if stopped != int(np.argmin(clf.zero_entry_penalty_scores_[:fitted])):
        raise AssertionError("the estimator's choice is not the stopped scan's")
    return {"scores": scores.tolist(), "whole": whole, "stopped": stopped, "fitted": fitted}


def main():
    parser = C.parser(__doc__.splitlines()[0])
    args, kull_dir, names = S.scan_arguments(parser)
    info = C.machine()
    results, rows = {}, []
    for name in names:
        X, y, _ = K.load(name, kull_dir)
        for fold, (X_tr, y_tr, _, _) in enumerate(K.splits(X, y)):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                clf = K.METHODS[K.DEFAULT][1](fold).fit(X_tr, y_tr)
            if clf.zero_entry_penalty_scores_ is None:  # beyond the limits: no choice
                continue
            r = results[f"{name}/{fold}"] = scan_fold(clf, X_tr, y_tr)
            print(name, fold, r, flush=True)
            if r["whole"] != r["stopped"]:
                lost = r["scores"][r["stopped"]] / r["scores"][r["whole"]] - 1
                rows.append(
                    {
                        "set, fold": f"{name}, {fold}",
                        "whole scan": f"{ZERO_ENTRY_PRIORS[r['whole']]:g} / n",
                        "stopped": f"{ZERO_ENTRY_PRIORS[r['stopped']]:g} / n",
                        "given up": f"{100 * lost:+.4f} %",
                    }
                )
    fitted = sum(r["fitted"] for r in results.values())
    summary = (
        f"{len(results)} folds chose; priors fitted {fitted} of "
        f"{len(ZERO_ENTRY_PRIORS) * len(results)}; choices changed on {len(rows)}"
    )
    print(summary)
    text = "## Stopping the zero entries' choice at the first rise\n\n" + C.header(info)
    columns = [(k, k, None) for k in ("set, fold", "whole scan", "stopped")]
    columns.append(("given up", "held-out log-loss given up", None))
    text += "\n\n" + summary + ("\n\n" + C.table(rows, columns) if rows else "")
    C.finish(args, info, results, text)


if __name__ == "__main__":
    main()
