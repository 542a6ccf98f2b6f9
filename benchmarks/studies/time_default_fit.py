"""One timed fit of the default ``ConvexAggregationClassifier()`` on letter (for A/B runs).

Backs BENCHMARKS.md, "Timing two versions", and the fit times of the zero entries' limits in
QUALITY.md, "Why the default is what it is".

``--dataset`` takes another set of the data directory in letter's place (e.g. pendigits, the
largest within ``zero_entry_penalty="auto"``'s limits), ``--rows`` the first rows of its
training part, ``--zero-entry-penalty none`` the default without the zero entries' weights.

Prints the fit's wall time in seconds (``--repeat``: each fit's, in a row). Run it
alternately against two checkouts, so that the machine's load falls on both alike, e.g.::

    for i in 1 2 3 4; do
      PYTHONPATH=<old>/src python benchmarks/studies/time_default_fit.py --n-jobs 2
      PYTHONPATH=<new>/src python benchmarks/studies/time_default_fit.py --n-jobs 2
    done

The workload is bench_end_to_end.py's: letter, a stratified 90/10 split (seed 0), the
attributes standardised on the training rows, ``LogisticRegression()`` binaries.
"""

import argparse
import os
import time
import warnings

import pandas as pd
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler

from convexagg import ConvexAggregationClassifier


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--data-dir", default=os.environ.get("CONVEXAGG_DATA_DIR", "../shared/datasets")
    )
    parser.add_argument("--n-jobs", type=int, default=1)
    parser.add_argument(
        "--code", default=None, help="a code in the default's place (e.g. ovo+ovr); default: none"
    )
    parser.add_argument("--dataset", default="letter", help="a <name>.csv.gz of --data-dir")
    parser.add_argument("--rows", type=int, default=None, help="the first ROWS training rows")
    parser.add_argument(
        "--zero-entry-penalty", default=None, help="a value in the default's place ('none': None)"
    )
    parser.add_argument(
        "--entry-weight-shrinkage",
        default=None,
        help="comma-separated values in the default's place (several: chosen by the fit)",
    )
    parser.add_argument(
        "--repeat", type=int, default=1, help="fits in a row (each printed: a small set's is noisy)"
    )
    args = parser.parse_args()
    data = pd.read_csv(os.path.join(args.data_dir, f"{args.dataset}.csv.gz"))
    X, y = data.iloc[:, :-1].to_numpy(float), data.iloc[:, -1].to_numpy()
    X, _, y, _ = train_test_split(X, y, test_size=0.1, stratify=y, random_state=0)
    X, y = X[: args.rows], y[: args.rows]
    X = StandardScaler().fit_transform(X)
    given = {} if args.code is None else {"code": args.code}
    if args.entry_weight_shrinkage is not None:
        values = [float(v) for v in args.entry_weight_shrinkage.split(",")]
        given["entry_weight_shrinkage"] = values if len(values) > 1 else values[0]
    if args.zero_entry_penalty is not None:
        zero = args.zero_entry_penalty
        given["zero_entry_penalty"] = None if zero == "none" else float(zero)
    clf = ConvexAggregationClassifier(
        LogisticRegression(), n_jobs=args.n_jobs, random_state=0, **given
    )
    seconds = []
    for _ in range(args.repeat):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # lbfgs's ConvergenceWarning on some binaries
            start = time.perf_counter()
            clf.fit(X, y)
        seconds.append(time.perf_counter() - start)
    print(" ".join(f"{s:.3f}" for s in seconds))


if __name__ == "__main__":
    main()
