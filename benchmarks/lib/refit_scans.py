"""What the refit scans of the Kull et al. suite share (``studies/scan_*.py``).

A refit scan fits the default once on each set's outer folds (the protocol of
``bench_quality.py --suite kull``), refits its decoder on the same training outputs with
each setting it scans, and scores each on the test fold: the binaries are the same for
all, so a change of the test log-loss is the setting's alone.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np

from . import common as C
from .kull import datasets, load, splits
from .methods import library


def scan_arguments(parser):
    """A refit scan's arguments (``--datasets`` added): ``(args, kull_dir, names)``."""
    parser.add_argument("--datasets", default=None, help="comma-separated (default: all 23)")
    args = parser.parse_args()
    kull_dir = str(Path(args.data_dir) / "kull2019")
    return args, kull_dir, args.datasets.split(",") if args.datasets else datasets(kull_dir)


def scan_sets(names, kull_dir, scan_set, base):
    """Run a refit scan's ``scan_set(name, kull_dir)`` on each set, warnings silenced:
    ``(outputs, changes)``. ``scan_set`` returns ``{setting: [test log-loss per fold]}``, or
    a tuple that starts with it; ``changes[name]`` holds each setting's change of the mean
    in % against ``base``'s."""
    outputs, changes = {}, {}
    for name in names:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = scan_set(name, kull_dir)
        scores = out[0] if isinstance(out, tuple) else out
        ref = np.mean(scores[base])
        outputs[name] = out
        changes[name] = {k: 100 * (np.mean(v) / ref - 1) for k, v in scores.items() if k != base}
        print(name, {k: round(v, 1) for k, v in changes[name].items()}, flush=True)
    return outputs, changes


def default_without_zero_entries(seed):
    """The library's default without the zero entries' weights: the refit scans' and the
    left-to-calibrate diagnosis's baseline (their records were measured on it)."""
    return library(zero_entry_penalty=None)(seed)


def default_refits(name, kull_dir):
    """For each outer fold of ``name``, the default without zero entries
    (:func:`default_without_zero_entries`) fitted on its training part and what a decoder refit
    needs: ``(clf, Q, y_fit, Q_test, labels)`` -- the training outputs, the test fold's
    averaged binary outputs and its labels as class indices."""
    X, y, _ = load(name, kull_dir)
    for fold, (X_tr, y_tr, X_te, y_te) in enumerate(splits(X, y)):
        clf = default_without_zero_entries(fold).fit(X_tr, y_tr)
        Q, y_fit, _ = clf.training_outputs(X_tr, y_tr)
        yield clf, Q, y_fit, clf.predict_binary_proba(X_te), np.searchsorted(clf.classes_, y_te)


def report_scan(parser, scan_set, base, title, signed=False):
    """A refit scan's whole run: its arguments, :func:`scan_sets` against ``base`` (the
    default's refitted decoder), the :func:`change_table` under ``title``, the record."""
    args, kull_dir, names = scan_arguments(parser)
    info = C.machine()
    results, changes = scan_sets(names, kull_dir, scan_set, base)
    base_losses = {n: np.mean(results[n][base]) for n in names}
    table = change_table(changes, base_losses, "default's log-loss", signed=signed)
    C.finish(args, info, results, f"## {title}\n\n" + C.header(info) + "\n\n" + table)


def change_table(changes, base_losses, base_title, signed=False, extra=None):
    """A refit scan's table: per set its base log-loss and each setting's change in %, then
    per setting the sets worse and better by more than 1 % (of the unrounded changes) and
    the mean change; ``extra``: ``(title, {set: text})``, a last column."""
    names, fmt = list(changes), "{:+.1f}" if signed else "{:.1f}"
    keys = list(changes[names[0]])
    rows = [
        {"set": n, "base": f"{base_losses[n]:.4f}"}
        | {k: fmt.format(changes[n][k]) for k in keys}
        | ({"extra": extra[1][n]} if extra else {})
        for n in names
    ]
    tests = (("worse by > 1 %", lambda v: v > 1), ("better by > 1 %", lambda v: v < -1))
    rows += [
        {"set": label} | {k: sum(test(c[k]) for c in changes.values()) for k in keys}
        for label, test in tests
    ]
    mean = {k: fmt.format(np.mean([c[k] for c in changes.values()])) for k in keys}
    rows.append({"set": "mean change %"} | mean)
    columns = [("set", "set", None), ("base", base_title, None)]
    columns += [(k, f"{k}: change %", None) for k in keys]
    columns += [("extra", extra[0], None)] if extra else []
    return C.table(rows, columns)
