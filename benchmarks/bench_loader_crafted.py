"""The model loader against crafted and damaged files.

    python benchmarks/bench_loader_crafted.py [--pad-mib 32] [--flips 300] [--out FILE]

Two measurements of ``convexagg.io.load`` on a one-vs-rest iris model:

* **padded schema**: ``schema.json`` padded with ``--pad-mib`` MiB of spaces (the
  archive stays about 40 KB, deflated); the rise of the process's peak resident
  memory (``ru_maxrss``) across one ``load``, in a fresh process;
* **bit flips**: ``--flips`` copies of the file, each with one random bit flipped
  (seeded); what ``load`` (and ``predict_proba``) does with each, counted by
  outcome: ``loaded``, ``ValueError`` (the documented error) or any other exception
  type (an escape).

Run it with ``PYTHONPATH`` at another source tree to measure that version.
"""

from __future__ import annotations

import argparse
import collections
import random
import resource
import subprocess
import sys
import tempfile
import warnings
import zipfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from lib import common as C  # noqa: E402

import convexagg.io as cio  # noqa: E402


def _model(path):
    from sklearn.datasets import load_iris

    from convexagg import ConvexAggregationClassifier

    X, y = load_iris(return_X_y=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cio.save(ConvexAggregationClassifier(code="ovr", cv="in_sample").fit(X, y), path)
    return X


def _peak_rise(path):
    """In this process: the rise of the peak RSS (MiB) across ``load(path)``."""
    import skops.io  # noqa: F401 - imported first, so the rise is the load's

    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    try:
        cio.load(path)
        outcome = "loaded"
    except ValueError as exc:
        outcome = f"ValueError: {str(exc)[:60]}"
    rise = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    print(f"{rise:.0f} MiB ({outcome})")


def padded_schema(folder, pad_mib):
    plain, padded = folder / "plain.skops", folder / "padded.skops"
    _model(plain)
    with zipfile.ZipFile(plain) as old, zipfile.ZipFile(padded, "w", zipfile.ZIP_DEFLATED) as new:
        for info in old.infolist():
            data = old.read(info.filename)
            if info.filename == "schema.json":
                data = data[:-1] + b" " * (pad_mib * 2**20) + data[-1:]
            new.writestr(info.filename, data)
    done = subprocess.run(
        [sys.executable, __file__, "--peak-of", str(padded)], capture_output=True, text=True
    )
    size = padded.stat().st_size / 1000
    rise = done.stdout.strip() or done.stderr.strip()[-300:]
    line = f"padded schema ({pad_mib} MiB of spaces, file {size:.0f} KB): peak rise {rise}"
    print(line, flush=True)
    return {"pad_mib": pad_mib, "file_kb": size, "peak_rise": rise}, line


def bit_flips(folder, flips):
    path = folder / "model.skops"
    X = _model(path)
    data = path.read_bytes()
    rng = random.Random(0)
    outcomes = collections.Counter()
    flipped = folder / "flipped.skops"
    for _ in range(flips):
        copy = bytearray(data)
        copy[rng.randrange(len(copy))] ^= 1 << rng.randrange(8)
        flipped.write_bytes(bytes(copy))
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                cio.load(flipped).predict_proba(X)
            outcomes["loaded"] += 1
        except ValueError:
            outcomes["ValueError"] += 1
        except Exception as exc:  # noqa: BLE001 - counting the escapes is the point
            outcomes[type(exc).__name__] += 1
    line = f"bit flips ({flips} of a {len(data)}-byte file): {dict(outcomes.most_common())}"
    print(line, flush=True)
    return {"flips": flips, "file_bytes": len(data), "outcomes": dict(outcomes)}, line


def main():
    parser = C.parser(__doc__.splitlines()[0])
    parser.add_argument("--pad-mib", type=int, default=32)
    parser.add_argument("--flips", type=int, default=300)
    parser.add_argument("--peak-of", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.peak_of:
        _peak_rise(args.peak_of)
        return
    if args.quick:
        args.pad_mib, args.flips = 4, 20
    info = C.machine()
    with tempfile.TemporaryDirectory() as folder:
        padded, padded_line = padded_schema(Path(folder), args.pad_mib)
        flipped, flipped_line = bit_flips(Path(folder), args.flips)
    text = "\n".join(["## The model loader on crafted files", "", C.header(info), ""])
    text += f"\n- {padded_line}\n- {flipped_line}"
    C.finish(args, info, {"padded_schema": padded, "bit_flips": flipped}, text)


if __name__ == "__main__":
    main()
