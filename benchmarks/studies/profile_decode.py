"""Where the float32 decode of 2,000 letter rows spends its time, part by part (BENCHMARKS.md,
"Predicting": where the decode's time goes).

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python benchmarks/studies/profile_decode.py \\
        [--data-dir DIR] [--repeat 200]

The best of ``--repeat`` calls of: ``ConvexDecoder.predict_proba`` and
``decision_function`` (float32 solver, one-vs-one letter outputs as in
``bench_predict.py``); the logs of the 2 x 325 x 2,000 float32 losses; the
transposed copy of ``Q``; the validation of ``Q``; the side weights; ``rho``
with the same weights on every call and with other weights on every call (its
sparse product rebuilt); SciPy's row softmax of ``-rho`` against
:func:`convexagg.aggregation.softmax_classes` on ``rho.T``. The log-odds path of
``ConvexAggregationClassifier.predict_proba`` (``make_pipeline(StandardScaler(),
LogisticRegression())`` binaries, the float32 solver, ``cv="in_sample"``): the whole
``predict_proba`` from ``X``, the stacked log-odds
(:func:`convexagg.linear_outputs.predict_log_odds`, read block by block), the decode of
them (``predict_proba_from_log_odds``), and of them computed whole first.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from lib import common as C  # noqa: E402
from lib import workloads as W  # noqa: E402


def best_ms(fn, repeat):
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return 1e3 * min(times)


def log_odds_parts(data):
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from convexagg import ConvexAggregationClassifier
    from convexagg.linear_outputs import predict_log_odds
    from convexagg.solvers import ProjectedNewton

    clf = ConvexAggregationClassifier(
        make_pipeline(StandardScaler(), LogisticRegression()),
        code="ovo",
        fit_intercept=False,
        cv="in_sample",
        solver=ProjectedNewton(dtype="float32"),
    ).fit(data["X"], data["y"])
    X, binaries, dec = data["X_test"], clf.estimators_[0], clf.decoder_
    Z = predict_log_odds(binaries, X)
    return {
        "end to end: predict_proba from X": lambda: clf.predict_proba(X),
        "end to end: predict_log_odds (stack found, X centred)": lambda: predict_log_odds(
            binaries, X, check_input=False
        ),
        "end to end: decode of the log-odds, read block by block": lambda: (
            dec.predict_proba_from_log_odds(Z)
        ),
        "end to end: decode of the log-odds, computed whole first": lambda: (
            dec.predict_proba_from_log_odds(np.asarray(Z))
        ),
    }


def main():
    p = C.parser(__doc__.splitlines()[0])
    p.set_defaults(repeat=200)
    args = p.parse_args()
    C.limit_blas(args)
    from scipy.special import softmax

    from convexagg import ConvexDecoder
    from convexagg.aggregation import output_discrepancies, side_weights, softmax_classes
    from convexagg.losses import check_binary_outputs
    from convexagg.solvers import ProjectedNewton

    data = W.letter_workload(args)
    code, Q = data["code"], data["Q_test"].astype(np.float32)
    dec = ConvexDecoder(solver=ProjectedNewton(dtype="float32")).fit(data["Q"], data["y"], code)
    rho = -dec.decision_function(Q)
    logs = np.random.default_rng(0).uniform(0.1, 1, (2, Q.shape[1], Q.shape[0])).astype(np.float32)
    pair, turn = [dec.weights_, dec.weights_ * (1 + 1e-9)], [0]

    def alternating():  # other weights on every call: the sparse product is rebuilt
        turn[0] ^= 1
        return output_discrepancies(Q, code, pair[turn[0]], dtype=np.float32)

    parts = {
        "predict_proba": lambda: dec.predict_proba(Q),
        "decision_function": lambda: dec.decision_function(Q),
        "logs of the float32 losses": lambda: np.log(logs),
        "transposed copy of Q": lambda: np.ascontiguousarray(Q.T),
        "validation of Q": lambda: check_binary_outputs(Q),
        "side weights": lambda: side_weights(code, dec.weights_),
        "rho, the same weights each call": lambda: output_discrepancies(
            Q, code, dec.weights_, dtype=np.float32
        ),
        "rho, other weights each call (product rebuilt)": alternating,
        "softmax, SciPy by rows": lambda: softmax(-rho, axis=1),
        "softmax_classes on rho.T": lambda: softmax_classes(np.ascontiguousarray(rho.T)),
    }
    parts.update(log_odds_parts(data))
    info = C.machine()
    rows = [{"part": name, "best_ms": best_ms(fn, args.repeat)} for name, fn in parts.items()]
    columns = [("part", "part", None), ("best_ms", "best ms", "{:.3f}")]
    text = C.header(info) + "\n\n" + C.table(rows, columns)
    C.finish(args, info, rows, text)


if __name__ == "__main__":
    main()
