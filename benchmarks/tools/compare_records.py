"""Compare a rerun's quality records with the committed ones, method by method.

    python benchmarks/tools/compare_records.py <scratch> benchmarks/results/quality/kull \
        [--methods "convexagg (default);default + temperature on its out-of-fold"] [--copy]

``<scratch>`` is the ``--out`` of a ``bench_quality.py`` rerun (the committed folder of the
same suite is the second argument). For every record of each method in the rerun, the
scores (log-loss, Brier, accuracy, both calibration errors) are compared with the committed
record of the same data set and split, to the bit; the ones that differ (or have no
committed record) are printed, and with ``--copy`` they are put into the committed records
(the others keep their records and fit times).
"""

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from lib.records import SCORES, RecordStore  # noqa: E402


def compare(rerun, committed, method, copy=False):
    """``(same, changed)``: the number of ``method``'s rerun records equal to the committed
    ones to the bit, and the rerun records that differ (put into ``committed`` if
    ``copy``)."""
    same, changed = 0, []
    for new in rerun.records(method):
        old = committed.get(new["dataset"], new["rep"], method)
        if old is not None and all(new.get(k) == old.get(k) for k in (*SCORES, "error")):
            same += 1
            continue
        changed.append(new)
        if old is None:
            print(f"{new['dataset']} rep{new['rep']}: no committed record")
        else:
            keys = (*SCORES, "error")
            diff = {k: (old.get(k), new.get(k)) for k in keys if old.get(k) != new.get(k)}
            print(f"{new['dataset']} rep{new['rep']}: {diff}")
    if copy and changed:
        committed.put(*changed)
    return same, changed


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("rerun", help="the rerun's --out directory")
    p.add_argument("records", help="the committed records' directory (the suite's folder)")
    p.add_argument(
        "--methods", default=None, help="semicolon-separated (default: every method of the rerun)"
    )
    p.add_argument("--copy", action="store_true", help="put the records that differ")
    args = p.parse_args()
    rerun, committed = RecordStore(args.rerun), RecordStore(args.records)
    methods = args.methods.split(";") if args.methods else rerun.methods()
    for method in methods:
        same, changed = compare(rerun, committed, method, copy=args.copy)
        print(
            f"{method}: {same} the same to the bit, {len(changed)} changed"
            + (" (copied)" if args.copy and changed else "")
        )


if __name__ == "__main__":
    main()
