"""Convert quality records from one file per record to one file per method.

    python benchmarks/tools/convert_records.py benchmarks/results/quality [--remove]
    python benchmarks/tools/convert_records.py benchmarks/results/quality/kull [--remove]

Reads ``<root>/records/<data set>/rep<k>/<method>.json`` (the layout ``bench_quality.py``
wrote before its records were gathered by method) and puts every record into the
method's file of :mod:`lib.records` (``<root>/records/<method>.json``), replacing a record
of the same data set and split already there. Each converted record is then read back and
compared with its source, field by field; with ``--remove`` the source files (and their
emptied folders) are deleted once all compare equal.
"""

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from lib.records import RecordStore  # noqa: E402


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("root", help="a suite's folder (holding records/)")
    p.add_argument("--remove", action="store_true", help="delete the converted files")
    args = p.parse_args()
    sources = sorted(Path(args.root, "records").glob("*/rep*/*.json"))
    by_method = defaultdict(list)
    for path in sources:
        record = json.loads(path.read_text())
        by_method[record["method"]].append((path, record))
    store = RecordStore(args.root)
    for items in by_method.values():
        store.put(*(record for _, record in items))
    check = RecordStore(args.root)
    for method, items in by_method.items():
        for path, record in items:
            if check.get(record["dataset"], record["rep"], method) != record:
                sys.exit(f"{path}: the converted record differs; nothing removed")
    print(f"{len(sources)} records of {len(by_method)} methods converted and compared equal")
    if args.remove:
        for path, _ in (item for items in by_method.values() for item in items):
            path.unlink()
        for folder in sorted(Path(args.root, "records").glob("*/rep*")) + sorted(
            Path(args.root, "records").glob("*")
        ):
            if folder.is_dir() and not any(folder.iterdir()):
                folder.rmdir()


if __name__ == "__main__":
    main()
