"""The default's fit with and without the projected Newton method's kept factorised Hessian
("lagged"), and with it formed anew after fewer or more PCG products. Backs BENCHMARKS.md,
"Where the zero entries' choice spends its time".

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 PYTHONPATH=src python \
        benchmarks/studies/time_lagged_newton.py [--data-dir DIR] [--repeat 3] \
        [--sets vowel yeast ...] [--whole] [--out benchmarks/results/lagged_newton.json]

``ConvexAggregationClassifier().fit`` on each Kull et al. set's first outer fold's training
part (standardised, as ``bench_quality.py``'s suite), the settings alternating in one process
by patching the solver's module constants: as the library is (a kept factorisation once PCG
without it has spent what it costs, formed anew after a PCG of more than ``LAGGED_PRODUCTS``
products), without the kept factorisation (``LAGGED_MAX_VARIABLES = -1``: a new Newton
system each iteration up to ``DIRECT_BUDGET``, PCG with the subsample or the diagonal above),
and with it formed anew after 8 or after 30 products. Reports each setting's best and
median seconds, their ratios to the setting without, and each setting's log-loss on the
fold's test part (the same model to the solver's tolerance). ``--whole``: every row of each
set as loaded instead, the features as given, the log-loss on those rows.
"""

from __future__ import annotations

import importlib
import sys
import time
import warnings
from contextlib import nullcontext
from pathlib import Path
from unittest import mock

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from lib import common as C  # noqa: E402
from lib import kull as K  # noqa: E402

KEPT = "kept (the library's)"
SETTINGS = {
    "without": {"LAGGED_MAX_VARIABLES": -1},
    KEPT: {},
    "anew after 8": {"LAGGED_PRODUCTS": 8},
    "anew after 30": {"LAGGED_PRODUCTS": 30},
}


def time_fits(X, y, X_test, y_test, repeat):
    """Each setting's fit seconds (alternating) and test log-loss."""
    from sklearn.metrics import log_loss

    from convexagg import ConvexAggregationClassifier

    module = importlib.import_module("convexagg.solvers.projected_newton")
    times = {name: [] for name in SETTINGS}
    losses = {}
    for _ in range(repeat + 1):  # the first pass warms up
        for name, patch in SETTINGS.items():
            with mock.patch.multiple(module, **patch) if patch else nullcontext():
                start = time.perf_counter()
                model = ConvexAggregationClassifier().fit(X, y)
                times[name].append(time.perf_counter() - start)
            losses[name] = log_loss(y_test, model.predict_proba(X_test), labels=model.classes_)
    return {name: ts[1:] for name, ts in times.items()}, losses


def main():
    parser = C.parser(__doc__.splitlines()[0])
    parser.add_argument("--sets", nargs="+", default=None, help="Kull sets (default: all 23)")
    parser.add_argument(
        "--whole",
        action="store_true",
        help="fit each set's every row as loaded (features as given; the log-loss on them)",
    )
    args = parser.parse_args()
    repeat = 1 if args.quick else args.repeat
    C.limit_blas(args)
    info = C.machine()
    warnings.filterwarnings("ignore")
    kull_dir = str(Path(args.data_dir) / "kull2019")
    sets = args.sets or (["iris", "glass"] if args.quick else K.datasets(kull_dir))
    rows, results = [], {}
    for name in sets:
        X, y, _ = K.load(name, kull_dir)
        if args.whole:
            X_train = X_test = X
            y_train = y_test = y
        else:
            X_train, y_train, X_test, y_test = next(iter(K.splits(X, y)))
        times, losses = time_fits(X_train, y_train, X_test, y_test, repeat)
        base = times["without"]
        results[name] = {
            "rows": int(X_train.shape[0]),
            **{
                setting: {
                    **C.summary(ts),
                    "ratio_best": min(ts) / min(base),
                    "ratio_median": float(np.median(ts) / np.median(base)),
                    "log_loss": float(losses[setting]),
                }
                for setting, ts in times.items()
            },
        }
        row = {"set": name, "base": f"{min(base):.3f} / {np.median(base):.3f}"}
        for setting in list(SETTINGS)[1:]:
            r = results[name][setting]
            row[setting] = f"{r['ratio_best']:.2f} / {r['ratio_median']:.2f}"
        gap = max(abs(v - losses["without"]) / losses["without"] for v in losses.values())
        row["loss"] = f"{losses[KEPT]:.6f} ({gap:.0e})"
        rows.append(row)
        print(row, flush=True)
    loss_name = "log-loss" if args.whole else "test log-loss"
    columns = [
        ("set", "set", None),
        ("base", "without, best / median (s)", None),
        *[(s, f"{s}, best / median ratio", None) for s in list(SETTINGS)[1:]],
        ("loss", f"{loss_name} (largest relative difference)", None),
    ]
    text = C.header(info) + "\n\n" + C.table(rows, columns)
    C.finish(args, info, results, text)


if __name__ == "__main__":
    main()
