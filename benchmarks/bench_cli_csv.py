"""Reading a CSV file for ``convexagg fit``: a Python ``csv`` loop against the pandas reader.

    python benchmarks/bench_cli_csv.py [--rows 100000] [--features 20] [--repeat 5]

A synthetic file of ``--rows`` rows, ``--features`` float columns written with
``repr`` (17 significant digits, as ``numpy.savetxt``-style exports often are)
and an integer label column is read into the float64 feature matrix the CLI fits
on, by

* a Python loop (``csv.reader`` then ``float()`` field by field), and
* ``convexagg.io.CSVFile(path).read(features)``, the pandas C parser with its
  vectorised checks, as the CLI reads.

The two are interleaved (loop, pandas, loop, pandas, ...) so a load change on the shared
machine hits both; best and median per reader, and the arrays are checked to be
bit-for-bit equal. The file lives in a temporary folder (deleted afterwards).
"""

from __future__ import annotations

import csv
import io
import math
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from lib import common as C  # noqa: E402


def old_read_csv(path):
    """The baseline reader: ``csv.reader`` over the decoded file, rows kept as strings."""
    text = Path(path).read_bytes().decode("utf-8-sig")
    reader = csv.reader(io.StringIO(text, newline=""))
    columns, rows = None, []
    for record in reader:
        if not record or all(not field.strip() for field in record):
            continue
        if columns is None:
            columns = [field.strip() for field in record]
            continue
        if len(record) != len(columns):
            raise ValueError(f"line {reader.line_num}: ragged")
        rows.append((reader.line_num, record))
    return columns, rows


def old_numeric_matrix(path, columns, rows, use):
    """The baseline conversion: ``float()`` field by field."""
    index = [columns.index(name) for name in use]
    X = np.empty((len(rows), len(index)), dtype=np.float64)
    for i, (line, record) in enumerate(rows):
        for j, k in enumerate(index):
            field = record[k].strip()
            where = f"{path}, line {line}, column {columns[k]!r}"
            if not field:
                raise ValueError(f"{where}: missing value")
            value = float(field)
            if not math.isfinite(value):
                raise ValueError(f"{where}: not finite")
            X[i, j] = value
    return X


def read_old(path, features):
    columns, rows = old_read_csv(path)
    return old_numeric_matrix(path, columns, rows, features)


def read_new(path, features):
    from convexagg.io import CSVFile

    frame = CSVFile(path).read(features)
    return np.ascontiguousarray(frame[features].to_numpy(dtype=np.float64))


def write_file(path, n_rows, n_features, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_rows, n_features)) * 10.0 ** rng.integers(-3, 4, size=n_features)
    y = rng.integers(0, 5, size=n_rows)
    features = [f"x{j}" for j in range(n_features)]
    with open(path, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow([*features, "label"])
        for row, label in zip(X.tolist(), y.tolist()):
            writer.writerow([*map(repr, row), label])
    return X, features


def main():
    p = C.parser(__doc__.splitlines()[0])
    p.add_argument("--rows", type=int, default=100_000)
    p.add_argument("--features", type=int, default=20)
    p.set_defaults(repeat=5)
    args = p.parse_args()
    rows, repeat = (2_000, 1) if args.quick else (args.rows, args.repeat)
    info = C.machine()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "train.csv"
        X, features = write_file(path, rows, args.features)
        size_mb = path.stat().st_size / 1e6
        read_new(path, features)  # warm-up: imports pandas and convexagg.io once
        times = {"old": [], "new": []}
        for _ in range(repeat):
            for name, reader in (("old", read_old), ("new", read_new)):
                start = time.perf_counter()
                got = reader(path, features)
                times[name].append(time.perf_counter() - start)
                assert np.array_equal(got, X), f"{name} reader changed the values"
    results = []
    for name, label in (("old", "Python csv loop"), ("new", "pandas CSVFile")):
        t = times[name]
        results.append(
            {"reader": label, "best": min(t), "median": statistics.median(t), "times": t}
        )
    for r in results:
        r["speedup"] = results[0]["median"] / r["median"]
    text = [
        f"## Reading {rows:,} x {args.features} CSV ({size_mb:.1f} MB), interleaved, "
        f"best / median of {repeat}",
        "",
        C.header(info),
        "",
        C.table(
            results,
            [
                ("reader", "reader", None),
                ("best", "best s", "{:.2f}"),
                ("median", "median s", "{:.2f}"),
                ("speedup", "x faster (median)", "{:.1f}"),
            ],
        ),
    ]
    C.finish(
        args, info, {"rows": rows, "features": args.features, "readers": results}, "\n".join(text)
    )


if __name__ == "__main__":
    main()
