"""The probability-quality records: one JSON file per method and suite.

``<root>/records/<method>.json`` (the method's name with every character other than a
letter or digit replaced by ``_``) holds the method's records as a list, one per data set
and split (or outer fold), sorted by both. A record is the dict ``bench_quality.py``
writes: the test scores (``log_loss``, ``brier``, ``accuracy``, ``ece_top``,
``ece_classwise``), ``fit_s`` and ``predict_s`` (or ``error``), and ``dataset``, ``rep``,
``method``, ``family``, ``n_train``, ``n_classes``. ``<root>`` is the suite's folder
(``benchmarks/results/quality`` for the ten sets, ``benchmarks/results/quality/kull`` for
the Kull et al. suite), which also holds its ``tables.md``.

A method's file is rewritten whole (atomically) for every record put into it: one process
at a time per method.
"""

from __future__ import annotations

import json
from pathlib import Path

from .common import write_json

SCORES = ("log_loss", "brier", "accuracy", "ece_top", "ece_classwise")


def file_name(method):
    """The file of ``method``'s records: its name with non-alphanumerics as ``_``."""
    return "".join(c if c.isalnum() else "_" for c in method) + ".json"


def _key(record):
    return record["dataset"], record["rep"]


class RecordStore:
    """The records of one suite under ``root`` (see the module's docstring)."""

    def __init__(self, root):
        self.root = Path(root)
        self._records = {}  # method -> its records, as read or last written

    def path(self, method):
        return self.root / "records" / file_name(method)

    def records(self, method):
        """``method``'s records (a list; empty if it has none)."""
        if method not in self._records:
            path = self.path(method)
            self._records[method] = json.loads(path.read_text()) if path.exists() else []
        return self._records[method]

    def get(self, dataset, rep, method):
        """The record of ``method`` on ``dataset``'s split ``rep``, or None."""
        return next((r for r in self.records(method) if _key(r) == (dataset, rep)), None)

    def put(self, *records):
        """Add ``records`` (of one method) to its file, each replacing the record of the same
        data set and split."""
        (method,) = {r["method"] for r in records}
        new = {_key(r): r for r in records}
        kept = [r for r in self.records(method) if _key(r) not in new]
        self._records[method] = sorted([*kept, *new.values()], key=_key)
        write_json(self.path(method), self._records[method])

    def methods(self):
        """The methods with a file of records, by their names in the records."""
        names = []
        for path in sorted((self.root / "records").glob("*.json")):
            records = json.loads(path.read_text())
            if records:
                names.append(records[0]["method"])
                self._records.setdefault(records[0]["method"], records)
        return names

    def all(self, methods=None):
        """Every record of ``methods`` (default: every method with a file)."""
        return [
            r for m in (self.methods() if methods is None else methods) for r in self.records(m)
        ]
