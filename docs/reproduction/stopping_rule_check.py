"""How the Bradley-Terry decoders' stopping rule moves their MSE (RESULTS.md, note 4).

    python docs/reproduction/stopping_rule_check.py --out results [--reps 5]

Reads the binary outputs that ``convexagg reproduce ... --out results`` cached for the
one-vs-one code (``results/cache/<protocol>/<data set>/logreg/ovo/repNN/binary.npz``) and
decodes the test part with GBTM and WMAP (fixed ``N_j`` weights) stopped at three
tolerances, the fixed point allowed 1,000 sweeps. Prints mean accuracy and MSE over the
first ``--reps`` splits.
"""

from __future__ import annotations

import argparse
import warnings
from pathlib import Path

import numpy as np

from convexagg import BradleyTerryDecoder, WMAPDecoder
from convexagg.experiments.protocol import metrics

DECODERS = {
    "GBTM": lambda tol: BradleyTerryDecoder(tol=tol, max_iter=1000),
    "WMAP": lambda tol: WMAPDecoder(weights="n_samples", tol=tol, max_iter=1000),
}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="results", help="the reproduce run's output folder")
    parser.add_argument("--datasets", default="letter,pendigits,segment")
    parser.add_argument("--reps", type=int, default=5)
    args = parser.parse_args()
    warnings.simplefilter("ignore")  # unconverged samples at loose tolerances are the point
    for dataset in args.datasets.split(","):
        for name, make in DECODERS.items():
            cells = []
            for tol in (1e-10, 1e-3, 1e-2):
                scores = []
                for rep in range(args.reps):
                    (path,) = Path(args.out).glob(
                        f"cache/*/{dataset}/logreg/ovo/rep{rep:02d}/binary.npz"
                    )
                    d = np.load(path)
                    dec = make(tol).fit(d["Q_train"], d["y_train"], d["code"])
                    m = metrics(d["y_test"], dec.predict_proba(d["Q_test"]))
                    scores.append((m["accuracy"], m["mse"]))
                acc, mse = np.mean(scores, axis=0)
                cells.append(f"tol={tol:g}: accuracy {acc:.3f}, MSE {mse:.3f}")
            print(f"{dataset} {name}: " + "; ".join(cells))


if __name__ == "__main__":
    main()
