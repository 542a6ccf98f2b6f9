"""Compare a rerun's quality records with the committed ones, method by method.

    python benchmarks/compare_records.py <scratch> benchmarks/results/quality/kull \
        --methods "convexagg (default);default + temperature on its out-of-fold" [--copy]

``<scratch>`` is the ``--out`` of a ``bench_quality.py`` rerun. For every record of each
method there, the scores (log-loss, Brier, accuracy, both calibration errors) are compared
with the committed record's, to the bit; the ones that differ are printed, and with
``--copy`` they replace the committed ones (the others keep their records and fit times).
"""

import argparse
import json
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_quality import record_path  # noqa: E402

SCORES = ("log_loss", "brier", "accuracy", "ece_top", "ece_classwise")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("rerun", help="the rerun's --out directory")
    p.add_argument("records", help="the committed records' directory")
    p.add_argument("--methods", required=True, help="semicolon-separated method names")
    p.add_argument("--copy", action="store_true", help="replace the records that differ")
    args = p.parse_args()
    for method in args.methods.split(";"):
        name = record_path("", "x", 0, method).name
        same, changed = 0, []
        for new in sorted(Path(args.rerun).glob(f"records/*/*/{name}")):
            old = Path(args.records) / new.relative_to(args.rerun)
            a, b = json.loads(new.read_text()), json.loads(old.read_text())
            if all(a[k] == b[k] for k in SCORES):
                same += 1
                continue
            changed.append(new.relative_to(args.rerun))
            diff = {k: (b[k], a[k]) for k in SCORES if a[k] != b[k]}
            print(f"{new.parent.relative_to(Path(args.rerun) / 'records')}: {diff}")
            if args.copy:
                shutil.copyfile(new, old)
        print(
            f"{method}: {same} the same to the bit, {len(changed)} changed"
            + (" (copied)" if args.copy and changed else "")
        )


if __name__ == "__main__":
    main()
