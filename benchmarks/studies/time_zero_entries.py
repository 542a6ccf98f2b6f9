"""What the zero entries cost the aggregation's fit: letter (26 classes) and pendigits (10).

The default ``ConvexAggregationClassifier`` is fitted once on each data set's training part
(a stratified 90/10 split, seed 0, standardised; ``LogisticRegression()`` binaries: the
workload of ``bench_end_to_end.py`` on letter). Its decoder is then refitted on its own
training outputs (``training_outputs``), on the first 2,000 and 5,000 rows and on all of
them, as it is and with ``zero_entry_penalty = 80 / n`` (the strongest of ``"auto"``'s
priors, the quickest to fit), the two in turn, ``--repeat``
times each (one thread): the seconds, Newton iterations and PCG products. The binaries are
not retrained, so the times are the aggregation's alone; ``"auto"``'s choice fits the
aggregation 13 times more (4 priors on 3 folds), with weaker priors.

Backs BENCHMARKS.md, "What the zero entries cost the fit".

    OMP_NUM_THREADS=1 python benchmarks/studies/time_zero_entries.py --data-dir ../shared/datasets \
        --out benchmarks/results/zero_entries_fit_time.json
"""

import sys
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.base import clone

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from lib import common as C  # noqa: E402
from lib import workloads as W  # noqa: E402

from convexagg.estimator import ZERO_ENTRY_PRIORS  # noqa: E402

ROWS = (2000, 5000, None)  # None: every training row


def timed_fit(decoder, Q, y, code):
    t0 = time.perf_counter()
    fitted = clone(decoder).fit(Q, y, code)
    seconds = time.perf_counter() - t0
    cg = fitted.history_.get("cg_iter")
    return seconds, int(fitted.n_iter_), None if cg is None else int(np.sum(cg))


def main():
    parser = C.parser(__doc__.splitlines()[0])
    parser.add_argument("--datasets", default="pendigits,letter")
    parser.set_defaults(repeat=2)  # letter's full fit with zero entries takes minutes
    args = parser.parse_args()
    info = C.machine()
    results, rows = {}, []
    for name in args.datasets.split(","):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            Q, y, code, decoder = W.default_training_outputs(name, args.data_dir)
            for limit in ROWS:
                n = y.size if limit is None else min(limit, y.size)
                settings = {
                    "default": decoder,
                    "zero entries": clone(decoder).set_params(
                        zero_entry_penalty=ZERO_ENTRY_PRIORS[0] / n
                    ),
                }
                runs = {key: [] for key in settings}
                for _ in range(args.repeat):
                    for key, dec in settings.items():
                        runs[key].append(timed_fit(dec, Q[:n], y[:n], code))
                results[f"{name}, {n} rows"] = runs
                best = {key: min(r[0] for r in v) for key, v in runs.items()}
                row = {"set": name, "rows": n, "ratio": best["zero entries"] / best["default"]}
                for key, v in runs.items():
                    row[f"{key} s"] = best[key]
                    row[f"{key} it"] = v[0][1]
                    row[f"{key} cg"] = v[0][2]
                rows.append(row)
                print(row, flush=True)
    columns = [("set", "set", None), ("rows", "rows", None)]
    for key in ("default", "zero entries"):
        columns += [
            (f"{key} s", f"{key}: s (best)", "{:.2f}"),
            (f"{key} it", "iterations", None),
            (f"{key} cg", "PCG products", None),
        ]
    columns.append(("ratio", "ratio", "{:.1f}"))
    text = (
        "## The aggregation's fit with and without zero entries (80 / n), on the default's "
        "training outputs\n\n" + C.header(info) + "\n\n" + C.table(rows, columns)
    )
    C.finish(args, info, results, text)


if __name__ == "__main__":
    main()
