"""Letter fits, in turn: the calibrated one-vs-one, the default, and the default's model on
the one-vs-one code without intercepts.

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python benchmarks/studies/time_letter_settings.py \
        [--data-dir DIR] [--n-jobs 1] [--rounds 3]

Backs BENCHMARKS.md, "Timing two versions".

bench_end_to_end.py's workload (letter, a stratified 90/10 split with seed 0, the attributes
standardised on the training rows, ``LogisticRegression()`` binaries). Each round fits
``CalibratedClassifierCV(OneVsOneClassifier(LogisticRegression()), method="temperature",
cv=5)``, ``ConvexAggregationClassifier()`` (``code="ovo+ovr"``, intercepts) and
``ConvexAggregationClassifier(code="ovo", fit_intercept=False)`` in turn (after one warm-up
fit of each on 2,000 rows), and prints each one's best and median and their ratios to the
calibrated one-vs-one (the target: at most 1.2x).
"""

import argparse
import os
import time
import warnings

import numpy as np
import pandas as pd
from sklearn.calibration import CalibratedClassifierCV
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.multiclass import OneVsOneClassifier
from sklearn.preprocessing import StandardScaler

from convexagg import ConvexAggregationClassifier


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--data-dir", default=os.environ.get("CONVEXAGG_DATA_DIR", "../shared/datasets")
    )
    parser.add_argument("--n-jobs", type=int, default=1)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    warnings.filterwarnings("ignore")  # lbfgs iteration limits of the binaries
    data = pd.read_csv(os.path.join(args.data_dir, "letter.csv.gz"))
    X, y = data.iloc[:, :-1].to_numpy(float), data.iloc[:, -1].to_numpy()
    X, _, y, _ = train_test_split(X, y, test_size=0.1, stratify=y, random_state=0)
    X = StandardScaler().fit(X).transform(X)
    nj = args.n_jobs
    makers = {
        "calibrated OvO": lambda: CalibratedClassifierCV(
            OneVsOneClassifier(LogisticRegression()), method="temperature", cv=5, n_jobs=nj
        ),
        "default (ovo+ovr)": lambda: ConvexAggregationClassifier(LogisticRegression(), n_jobs=nj),
        "ovo, no intercepts": lambda: ConvexAggregationClassifier(
            LogisticRegression(), code="ovo", fit_intercept=False, n_jobs=nj
        ),
    }
    for make in makers.values():
        make().fit(X[:2000], y[:2000])
    times = {name: [] for name in makers}
    for _ in range(args.rounds):
        for name, make in makers.items():
            start = time.perf_counter()
            make().fit(X, y)
            times[name].append(time.perf_counter() - start)
    base = times["calibrated OvO"]
    for name, ts in times.items():
        print(
            f"n_jobs={nj} {name}: best {min(ts):.2f} s, median {np.median(ts):.2f} s; "
            f"x calibrated OvO best {min(ts) / min(base):.2f}, "
            f"median {np.median(ts) / np.median(base):.2f}"
        )


if __name__ == "__main__":
    main()
