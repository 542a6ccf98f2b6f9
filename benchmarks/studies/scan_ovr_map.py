"""A prototype beside the zero entries: a signed K x K map on the one-vs-rest outputs.

What the left-to-calibrate check still finds is mostly a signed linear map of the class
discrepancies (``diagnose_left_to_calibrate.py``). The zero entries free in sign supply one
at ``K^3`` weights with a one-vs-one part; this prototype tries a cheaper one, ``2 K^2``
weights: every class weighs both sides of every one-vs-rest classifier's output, free in
sign, penalised like the zero entries by ``(alpha + c / n) / 2 |t|^2``::

    rho[i, k] += sum_{l in ovr} t+_kl d(+1, Q[i, l]) + t-_kl d(-1, Q[i, l])

It is not in the library: the model is written here as an expanded code (the default's
entries, then one +1 and one -1 column per class and one-vs-rest column, free weights) and
fitted by the library's projected Newton method on its dense objective. On each Kull et al.
set and outer fold the default without zero entries (``default_without_zero_entries``) is
fitted once; its decoder's model (``alpha``, the shrinkage ``"auto"`` resolves to, the
one-vs-rest columns' extra 0.1, intercepts) is refitted on its training outputs with the map,
and with ``zero_entry_penalty = 80 / n`` beside it, and scored on the test fold's averaged
binary outputs, against the default's decoder refitted the same
way (as ``scan_zero_entry_prior.py`` scores).

Backs QUALITY.md, "Zero entries free in sign" (a cheaper form, tried as a prototype).

    OMP_NUM_THREADS=1 python benchmarks/studies/scan_ovr_map.py --data-dir ../shared/datasets \
        --out benchmarks/results/ovr_map.json

``--letter``: instead, the map's fit time on letter (26 classes: 1,352 map weights; the
workload of ``time_zero_entries.py``), on the class-blocked objective the library fits the
entries on, against the default's decoder refitted on the same outputs, in turn, best of
``--repeat``; on the first 2,000 rows and on all 18,000.
"""

import sys
from pathlib import Path

import numpy as np
from sklearn.base import clone
from sklearn.metrics import log_loss

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from lib import common as C  # noqa: E402
from lib import refit_scans as S  # noqa: E402
from lib import workloads as W  # noqa: E402

from convexagg.aggregation import (  # noqa: E402
    DenseObjective,
    Penalty,
    code_entries,
    expand_code,
    stack_losses,
)
from convexagg.estimator import ZERO_ENTRY_PRIORS  # noqa: E402
from convexagg.losses import binary_losses  # noqa: E402
from convexagg.solvers import ProjectedNewton  # noqa: E402

PRIORS = (20.0, 80.0)  # c of the map's c / n


def map_design(code, ovr):
    """``(expanded code, Q column of each of its columns, the entries' columns)``: the code's
    entries, then per side, one-vs-rest column and class a column with that side in that
    class's row."""
    K = code.shape[0]
    _, entry_columns = code_entries(code)
    extra, extra_columns = [], []
    for side in (1, -1):
        for column in ovr:
            for k in range(K):
                e = np.zeros(K, dtype=code.dtype)
                e[k] = side
                extra.append(e)
                extra_columns.append(column)
    expanded = np.hstack([expand_code(code), np.array(extra).T])
    return expanded, np.concatenate([entry_columns, extra_columns]), entry_columns


def _objective(Q, y, expanded, columns, penalty):
    L_pos, L_neg = binary_losses(Q[:, columns])
    return DenseObjective(stack_losses(L_pos, L_neg), expanded, y, penalty, fit_intercept=True)


def map_log_loss(decoder, Q, y, code, Q_test, labels, c):
    """Test log-loss of the default's model with the map, its strength ``c / n``."""
    n_classes, n_columns = code.shape
    ovr = np.arange(n_columns - n_classes, n_columns)  # code="ovo+ovr": the last K columns
    expanded, columns, entry_columns = map_design(code, ovr)
    free = np.full(expanded.shape[1] - entry_columns.size, -1)
    penalty = Penalty.from_alpha(
        decoder.alpha,
        shrink=decoder.entry_weight_shrinkage,
        columns=np.concatenate([entry_columns, free]),
        column_l2=decoder.column_penalty,
        free_l2=c / y.size,
    )
    result = ProjectedNewton().solve(_objective(Q, y, expanded, columns, penalty), None)
    test = _objective(Q_test, labels, expanded, columns, Penalty())
    return log_loss(labels, test.predict_proba(result.w), labels=range(n_classes))


def scan_set(name, kull_dir):
    """``{setting: [test log-loss per fold]}``, with ``"none"`` the default's decoder."""
    scores = {}
    for clf, Q, y_fit, Q_test, labels in S.default_refits(name, kull_dir):
        code, decoder, n_classes = clf.code_matrix_, clf.decoder_, len(clf.classes_)
        scores.setdefault("none", []).append(
            log_loss(labels, decoder.predict_proba(Q_test), labels=range(n_classes))
        )
        zero = clone(decoder).set_params(zero_entry_penalty=ZERO_ENTRY_PRIORS[0] / y_fit.size)
        P = zero.fit(Q, y_fit, code).predict_proba(Q_test)
        scores.setdefault("zero entries 80/n", []).append(
            log_loss(labels, P, labels=range(n_classes))
        )
        for c in PRIORS:
            scores.setdefault(f"ovr map {c:g}/n", []).append(
                map_log_loss(decoder, Q, y_fit, code, Q_test, labels, c)
            )
    return scores


def time_letter(args):
    """Seconds of the map's fit (c = 80) and of the default's decoder on letter's outputs."""
    import time

    from convexagg.aggregation import BlockedObjective

    Q, y, code, decoder = W.default_training_outputs("letter", args.data_dir)
    n_classes, n_columns = code.shape
    expanded, columns, entry_columns = map_design(code, np.arange(n_columns - n_classes, n_columns))
    free = np.full(expanded.shape[1] - entry_columns.size, -1)
    rows = []
    for n in (2000, y.size):
        penalty = Penalty.from_alpha(
            decoder.alpha,
            shrink=decoder.entry_weight_shrinkage,
            columns=np.concatenate([entry_columns, free]),
            column_l2=decoder.column_penalty,
            free_l2=80.0 / n,
        )
        # as the decoder stores them: float32 from 2**20 losses on
        dtype = decoder.solver_config().storage_dtype(2 * n * expanded.shape[1])
        objective = BlockedObjective.from_outputs(
            Q[:n], expanded, y[:n], penalty, columns=columns, fit_intercept=True, dtype=dtype
        )
        times = {"map": [], "default": []}
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            result = ProjectedNewton().solve(objective, None)
            times["map"].append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            clone(decoder).fit(Q[:n], y[:n], code)
            times["default"].append(time.perf_counter() - t0)
        row = {"rows": n, "map s": min(times["map"]), "default s": min(times["default"])}
        row |= {"iterations": result.n_iter, "PCG products": int(np.sum(result.history["cg_iter"]))}
        print(row, flush=True)
        rows.append(row)
    columns = [("rows", "rows", None), ("map s", "map: s (best)", "{:.2f}")]
    columns += [("iterations", "iterations", None), ("PCG products", "PCG products", None)]
    columns += [("default s", "default's decoder: s (best)", "{:.2f}")]
    return rows, "## The map's fit on letter's training outputs\n\n" + C.table(rows, columns)


def main():
    parser = C.parser(__doc__.splitlines()[0])
    parser.add_argument("--letter", action="store_true", help="time the map on letter instead")
    parser.set_defaults(repeat=2)
    if "--letter" in sys.argv:
        args = parser.parse_args()
        info = C.machine()
        rows, text = time_letter(args)
        C.finish(args, info, rows, C.header(info) + "\n\n" + text)
        return
    S.report_scan(
        parser,
        scan_set,
        "none",
        "A signed map on the one-vs-rest outputs (a prototype) beside the zero entries, on "
        "the default's training outputs, Kull suite (test log-loss change against the "
        "default's decoder refitted on the same outputs)",
    )


if __name__ == "__main__":
    main()
