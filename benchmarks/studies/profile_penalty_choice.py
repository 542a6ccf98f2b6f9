"""Where the default fit spends its time when it chooses the zero entries' strength, stage by stage.

    python benchmarks/studies/profile_penalty_choice.py [--sets vowel yeast vehicle] [--repeat 3]

For each Kull et al. set (loaded and split as ``bench_quality.py``'s suite: its first outer
fold's training part, standardised), the default ``ConvexAggregationClassifier()`` is fitted
once (its whole time, and the binaries' share: the whole less the decoder's fit), then its
decoder is fitted again on the same training outputs with the same candidates
(``ConvexDecoder.fit(..., candidates=...)``, what the estimator's fit calls), each of its
stages timed by wrappers on the library's functions: the input check, storing the losses,
taking the folds' rows, the choice's solves (each prior on each fold), the held-out
evaluations, the fit at the chosen prior, and the rest. Inside the solves: the
Hessian-vector products (PCG's), the objective's evaluations, the Hessian blocks formed,
their factorisations (the Newton systems and the preconditioners) and the solves with
those factors (a direct step's one, a kept factor's one per PCG iteration). Best of
``--repeat`` for every number; one thread. Backs BENCHMARKS.md, "Where the zero entries'
choice spends its time".
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from contextlib import contextmanager
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from lib import kull as K  # noqa: E402

STAGES = (
    "input check",
    "store losses",
    "take fold rows",
    "choice solves",
    "held-out evaluations",
    "final solve",
)
INSIDE = (
    "hessian-vector products",
    "evaluations",
    "hessian blocks",
    "factorisations",
    "factor solves",
)


class Clock:
    """Exclusive time per stage (a call inside a timed stage counts to the outer stage) and
    inclusive time of the solver's parts inside the solves."""

    def __init__(self, n_rows):
        self.n_rows = n_rows
        self.seconds = dict.fromkeys(STAGES + INSIDE, 0.0)
        self.counts = dict.fromkeys(STAGES + INSIDE, 0)
        self.stage = self.part = None

    def wrap(self, owner, attr, stage):
        original = getattr(owner, attr)
        clock = self

        def timed(*args, **kwargs):
            name = stage(*args) if callable(stage) else stage
            inner = clock.stage is not None
            if not inner and name == "evaluations":  # outside a solve: scoring a fold
                name = "held-out evaluations"
            in_solve = clock.stage in ("choice solves", "final solve")
            if inner and not (name in INSIDE and in_solve and clock.part is None):
                return original(*args, **kwargs)  # counted by the stage or part around it
            if not inner and name in INSIDE:
                return original(*args, **kwargs)
            level = "part" if inner else "stage"
            t = time.perf_counter()
            setattr(clock, level, name)
            try:
                return original(*args, **kwargs)
            finally:
                clock.seconds[name] += time.perf_counter() - t
                clock.counts[name] += 1
                setattr(clock, level, None)

        return owner, attr, original, timed


@contextmanager
def instrumented(n_rows):
    from convexagg.aggregation import BlockedObjective
    from convexagg.decoders import fitting
    from convexagg.solvers import SolverConfig, linalg

    clock = Clock(n_rows)

    def solve_stage(config, objective, *rest):
        return "final solve" if objective.n_samples == clock.n_rows else "choice solves"

    patches = [
        clock.wrap(fitting, "check_fit_inputs", "input check"),
        clock.wrap(fitting.AggregationProblem, "likelihood", "store losses"),
        clock.wrap(BlockedObjective, "take", "take fold rows"),
        clock.wrap(SolverConfig, "solve", solve_stage),
        clock.wrap(BlockedObjective, "hessp", "hessian-vector products"),
        clock.wrap(BlockedObjective, "evaluate", "evaluations"),
        clock.wrap(BlockedObjective, "hessian", "hessian blocks"),
        clock.wrap(linalg.SymmetricSolver, "__init__", "factorisations"),
        clock.wrap(linalg.SymmetricSolver, "solve", "factor solves"),
    ]
    for owner, attr, _, timed in patches:
        setattr(owner, attr, timed)
    try:
        yield clock
    finally:
        for owner, attr, original, _ in patches:
            setattr(owner, attr, original)


def profile_set(name, kull_dir, repeat):
    from sklearn.base import clone

    from convexagg import ConvexAggregationClassifier
    from convexagg.decoders.selection import PenaltyCandidates
    from convexagg.estimator import ZERO_ENTRY_PRIORS

    X, y, _ = K.load(name, kull_dir)
    X_tr, y_tr, _, _ = next(K.splits(X, y))
    wholes = []
    for _ in range(repeat):
        t = time.perf_counter()
        clf = ConvexAggregationClassifier(random_state=0).fit(X_tr, y_tr)
        wholes.append(time.perf_counter() - t)
    Q, y_fit, _ = clf.training_outputs(X_tr, y_tr)
    code = clf.code_matrix_
    row = {"set": name, "outputs": f"{Q.shape[0]} x {Q.shape[1]}", "whole": min(wholes)}
    if clf.zero_entry_penalty_scores_ is None:
        row["note"] = "no choice (beyond zero_entry_penalty='auto''s limits)"
        return row
    values = tuple(c / len(y_fit) for c in ZERO_ENTRY_PRIORS)
    candidates = PenaltyCandidates(
        "zero_entry_penalty", values, clf._fold_seed, stop_when_worse=True
    )
    best = None
    for _ in range(repeat):
        decoder = clone(clf.decoder_)
        with instrumented(len(y_fit)) as clock:
            t = time.perf_counter()
            decoder.fit(Q, y_fit, code, candidates=candidates)
            total = time.perf_counter() - t
        if best is None or total < best[0]:
            best = (total, clock, decoder)
    total, clock, decoder = best
    row.update(decoder=total, binaries=row["whole"] - total)
    row.update({stage: clock.seconds[stage] for stage in STAGES + INSIDE})
    row["rest"] = total - sum(clock.seconds[s] for s in STAGES)
    row["choice solves (count)"] = clock.counts["choice solves"]
    row["products (count)"] = clock.counts["hessian-vector products"]
    row["priors fitted"] = int(np.count_nonzero(~np.isnan(decoder.candidate_scores_)))
    return row


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kull-dir", default="../shared/datasets/kull2019")
    parser.add_argument("--sets", nargs="+", default=["vowel", "yeast", "vehicle", "glass"])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    try:
        from threadpoolctl import threadpool_limits

        threadpool_limits(1)
    except ImportError:
        pass
    for name in args.sets:
        row = profile_set(name, args.kull_dir, args.repeat)
        head = f"{row['set']} ({row['outputs']} outputs): whole fit {row['whole']:.3f} s"
        if "note" in row:
            print(f"{head}; {row['note']}")
            continue
        print(f"{head}, binaries {row['binaries']:.3f} s, decoder {row['decoder']:.3f} s")
        for stage in STAGES + ("rest",):
            print(f"  {stage:24s} {row[stage]:7.3f} s  {100 * row[stage] / row['decoder']:5.1f} %")
        solves = row["choice solves"] + row["final solve"]
        for part in INSIDE:
            print(f"    {part:22s} {row[part]:7.3f} s  {100 * row[part] / solves:5.1f} % of solves")
        print(
            f"  {row['priors fitted']} priors fitted, {row['choice solves (count)']} choice "
            f"solves, {row['products (count)']} Hessian-vector products",
            flush=True,
        )


if __name__ == "__main__":
    main()
