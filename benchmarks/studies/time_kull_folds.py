"""The default's fits on some Kull et al. sets' folds, timed in a row (for A/B runs).

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 PYTHONPATH=<src> \
        python benchmarks/studies/time_kull_folds.py \
        [--data-dir ../shared/datasets] [--sets page-blocks,glass,...] [--repeat 2]

Backs BENCHMARKS.md, "Timing two versions".

Fits ``bench_quality.py``'s "convexagg (default)" on the three outer folds of each set (the
Kull suite's protocol: small classes dropped, standardised on the training part), once to
warm up and then ``--repeat`` times, and prints each pass's seconds. The default sets are
six whose folds lie around the suite's median fit time. Run it alternately against two
checkouts, so that the machine's load falls on both alike::

    for i in 1 2 3 4; do
      PYTHONPATH=<old>/src python benchmarks/studies/time_kull_folds.py
      PYTHONPATH=<new>/src python benchmarks/studies/time_kull_folds.py
    done
"""

import argparse
import os
import sys
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from lib import kull as K  # noqa: E402

MEDIAN_SETS = "page-blocks,glass,cleveland,dermatology,ecoli,autos"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--data-dir", default=os.environ.get("CONVEXAGG_DATA_DIR", "../shared/datasets")
    )
    parser.add_argument("--sets", default=MEDIAN_SETS, help="comma-separated Kull set names")
    parser.add_argument("--repeat", type=int, default=2, help="timed passes over the folds")
    args = parser.parse_args()
    kull_dir = os.path.join(args.data_dir, "kull2019")
    folds = []
    for name in args.sets.split(","):
        X, y, _ = K.load(name, kull_dir)
        folds += [(k, X_tr, y_tr) for k, (X_tr, y_tr, _, _) in enumerate(K.splits(X, y))]
    make = K.METHODS[K.DEFAULT][1]
    seconds = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # lbfgs's ConvergenceWarning on some binaries
        make(folds[0][0]).fit(*folds[0][1:])  # imports and caches, untimed
        for _ in range(args.repeat):
            start = time.perf_counter()
            for k, X_tr, y_tr in folds:
                make(k).fit(X_tr, y_tr)
            seconds.append(time.perf_counter() - start)
    print(" ".join(f"{s:.3f}" for s in seconds))


if __name__ == "__main__":
    main()
