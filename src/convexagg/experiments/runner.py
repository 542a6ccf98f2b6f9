"""Running the comparison: tasks, the on-disk cache, parallel execution, progress.

Work is cut into tasks:

* an **aggregation task** ``(dataset, base, code, rep)`` trains the binaries of one
  code on one split once (their outputs ``Q`` on the training and test parts are
  cached in ``binary.npz``) and then applies every requested aggregation method to
  those same outputs, one ``<method>.json`` per method;
* a **direct task** ``(dataset, rep, method)`` fits one direct multiclass method.

Everything lands under ``<out>/cache/<fingerprint>/<dataset>-<data fingerprint>/``
and is written atomically (temporary file, then ``os.replace``), so an interrupted
run resumes where it stopped: finished tasks are skipped, a task whose binaries are
cached only runs its missing methods, and methods added later (``--methods gbtm``)
reuse the cached binaries. The fingerprint hashes the protocol (seed, grids, ...)
and the library's version; the data fingerprint hashes the data set's content
(:meth:`~convexagg.datasets.Dataset.fingerprint`). A different protocol, another
convexagg version or changed data therefore never reuse older results: they are
recomputed beside them.

The cache heals itself: an entry that cannot be read back (a truncated or corrupt
JSON, NPZ or NPY file, say after a crash or a full disk) counts as missing
(:func:`read_cached`), is removed and recomputed; so does a method result that
lacks one of the metrics (a cache written by another convexagg), recomputed from
the cached binary outputs.
"""

from __future__ import annotations

import json
import time
import traceback
import zipfile
import zlib
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from pathlib import Path

import numpy as np
from joblib import Parallel, delayed

from .._optional import require
from .._version import __version__
from ..codes import make_code, sparse_random
from ..datasets import load_dataset
from ..io import atomic_write
from .direct import DIRECT_METHODS, run_direct
from .methods import AGGREGATION_METHODS, MethodContext, make_decoder
from .protocol import (
    PROBABILITY_METRICS,
    Protocol,
    aggregation_alpha,
    base_for,
    fit_tuned_binaries,
    make_split,
    metrics,
)
from .tables import METRICS

__all__ = [
    "RunConfig",
    "Task",
    "collect_rows",
    "json_dict",
    "plan",
    "read_cached",
    "run",
    "write_json",
]

CODES = ("ovo", "ovr", "ecoc")


@dataclass
class RunConfig:
    datasets: list
    codes: list = field(default_factory=lambda: list(CODES))
    methods: list = field(default_factory=list)
    base: str = "linear"
    reps: int = 20
    data_dir: str | None = None
    out: str = "results"
    jobs: int = 1
    protocol: Protocol = field(default_factory=Protocol)

    @property
    def cache(self):
        return Path(self.out) / "cache" / self.protocol.fingerprint()

    def data_cache(self, name):
        """The cache folder of data set ``name``: named by its content's fingerprint."""
        return self.cache / f"{name}-{_dataset(name, self.data_dir).fingerprint()}"

    def validate(self):
        """Raise a ``ValueError`` naming unknown methods, codes or base learner."""
        unknown = [m for m in self.methods if m not in AGGREGATION_METHODS | DIRECT_METHODS]
        if unknown or not self.methods:
            raise ValueError(
                f"unknown methods {unknown}; known: "
                f"{sorted(DIRECT_METHODS) + sorted(AGGREGATION_METHODS)}."
            )
        bad_codes = [c for c in self.codes if c not in CODES]
        if bad_codes:
            raise ValueError(f"unknown codes {bad_codes}; choose from {CODES}.")
        if self.reps < 1:
            raise ValueError(f"reps must be >= 1, got {self.reps}.")
        for name in self.datasets:
            base_for(name, self.base)


@dataclass(frozen=True)
class Task:
    kind: str  # "agg" or "direct"
    dataset: str
    rep: int
    base: str = ""
    code: str = ""
    methods: tuple = ()
    cost: float = 0.0


# ----------------------------------------------------------------------------- files


def _atomic_write(path, write):
    """Write through ``write(handle)`` atomically (:func:`convexagg.io.atomic_write`),
    creating the folder first."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_write(path) as handle:
        write(handle)


# Errors that mean "this cache entry cannot be read back": truncated or corrupt JSON,
# NPZ (a zip archive) or NPY files, or an entry missing what it should hold.
_UNREADABLE = (OSError, ValueError, EOFError, KeyError, TypeError, zipfile.BadZipFile, zlib.error)


def read_cached(path, read):
    """``read(path)`` for a cache entry, or None if it is missing or unreadable.

    An unreadable entry is removed so that it is recomputed (and rewritten) like
    a missing one; a run never fails or reuses garbage because of it.
    """
    path = Path(path)
    if not path.is_file():
        return None
    try:
        return read(path)
    except _UNREADABLE:
        path.unlink(missing_ok=True)
        return None


def json_dict(path):
    """The JSON object (a dict) stored at ``path``; a ``ValueError`` for any other value."""
    value = json.loads(Path(path).read_text())
    if not isinstance(value, dict):
        raise ValueError(f"{path} does not hold a JSON object")
    return value


def _result_dict(path):
    """A cached method result; one without every metric of :func:`metrics` is
    outdated: recomputed, from the cached binary outputs for aggregation methods."""
    row = json_dict(path)
    missing = [key for key in PROBABILITY_METRICS if key not in row]
    if missing:
        raise KeyError(f"{path} lacks {missing}")
    return row


def write_json(path, obj):
    """Write ``obj`` as JSON to ``path`` atomically (NumPy numbers and arrays as JSON's)."""
    data = json.dumps(obj, indent=1, sort_keys=True, default=_json_default).encode()
    _atomic_write(path, lambda h: h.write(data))


def _json_default(value):
    if isinstance(value, (np.floating, np.integer)):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    raise TypeError(f"not JSON serialisable: {type(value)}")


def _agg_dir(cfg, dataset, base, code, rep):
    return cfg.data_cache(dataset) / base / code / f"rep{rep:02d}"


def _direct_dir(cfg, dataset, rep):
    return cfg.data_cache(dataset) / "direct" / f"rep{rep:02d}"


# ----------------------------------------------------------------------------- codes


@lru_cache(maxsize=16)
def _dataset(name, data_dir):
    return load_dataset(name, data_dir)


def _code_file(path, n_classes):
    code = np.load(path)
    if code.ndim != 2 or code.shape[0] != n_classes:
        raise ValueError(f"{path}: a code of shape {code.shape} for {n_classes} classes")
    return code


def code_matrix(cfg, dataset, code_name, n_classes):
    """The code of ``code_name`` for ``dataset``; a random (sparse ECOC) code is drawn
    once per data set from ``protocol.ecoc_candidates`` candidates and cached, so all
    splits and methods share it."""
    if code_name != "ecoc" or n_classes < 8:
        return make_code(code_name, n_classes)
    path = cfg.data_cache(dataset) / "code_ecoc.npy"
    code = read_cached(path, lambda p: _code_file(p, n_classes))
    if code is not None:
        return code
    protocol = cfg.protocol
    seed = (zlib.crc32(dataset.encode()) + protocol.seed) % 2**31
    code = sparse_random(n_classes, n_candidates=protocol.ecoc_candidates, random_state=seed)
    _atomic_write(path, lambda h: np.save(h, code))
    return code


# ----------------------------------------------------------------------------- tasks


def plan(cfg, datasets_info=None):
    """Tasks still to do and the number of method results already finished.

    Split by split (every data set's first split, then the second, ...), the largest
    task first within a split: an interrupted run leaves every data set with the
    same number of finished splits, and the pool stays busy to the end.
    """
    tasks, done = [], 0
    for name in cfg.datasets:
        if datasets_info is not None:
            n_samples, n_classes = datasets_info[name]
        else:
            ds = _dataset(name, cfg.data_dir)
            n_samples, n_classes = ds.X.shape[0], ds.n_classes
        base = base_for(name, cfg.base)
        agg = [m for m in cfg.methods if m in AGGREGATION_METHODS]
        direct = [m for m in cfg.methods if m in DIRECT_METHODS]
        for rep in range(cfg.reps):
            for code in cfg.codes:
                missing = tuple(
                    m
                    for m in agg
                    if read_cached(_agg_dir(cfg, name, base, code, rep) / f"{m}.json", _result_dict)
                    is None
                )
                done += len(agg) - len(missing)
                if missing:
                    M = {"ovr": n_classes, "ovo": n_classes * (n_classes - 1) / 2}.get(
                        code, 15 * np.log2(n_classes)
                    )
                    cost = n_samples * M * (1 + n_classes / 10)
                    tasks.append(Task("agg", name, rep, base, code, missing, cost))
            for m in direct:
                if read_cached(_direct_dir(cfg, name, rep) / f"{m}.json", _result_dict) is not None:
                    done += 1
                else:
                    tasks.append(
                        Task("direct", name, rep, "", "", (m,), n_samples * n_classes * 20)
                    )
    tasks.sort(key=lambda t: (t.rep, -t.cost))
    return tasks, done


_BINARY_KEYS = ("Q_train", "Q_test", "y_train", "y_test", "code", "chosen_C", "binary_seconds")


def _binary_file(path):
    with np.load(path) as f:
        data = {k: f[k] for k in _BINARY_KEYS}  # KeyError: an incomplete entry
    if data["Q_train"].shape[0] != data["y_train"].size:
        raise ValueError(f"{path}: Q_train and y_train disagree")
    return data


def _binary_outputs(task, cfg, code):
    """Cached (or freshly trained) binary outputs of one code on one split."""
    path = _agg_dir(cfg, task.dataset, task.base, task.code, task.rep) / "binary.npz"
    data = read_cached(path, _binary_file)
    if data is not None:
        return data
    split = make_split(_dataset(task.dataset, cfg.data_dir), task.rep, cfg.protocol)
    start = time.perf_counter()
    Q_train, Q_test, chosen = fit_tuned_binaries(
        task.base, split, code, cfg.protocol, random_state=task.rep
    )
    seconds = time.perf_counter() - start
    Cs = np.array([np.nan if c is None else c["C"] for c in chosen])
    data = {
        "Q_train": Q_train,
        "Q_test": Q_test,
        "y_train": split.y_train,
        "y_test": split.y_test,
        "code": code,
        "chosen_C": Cs,
        "binary_seconds": np.array(seconds),
    }
    _atomic_write(path, lambda h: np.savez(h, **data))
    return data


def _run_agg(task, cfg):
    n_classes = _dataset(task.dataset, cfg.data_dir).n_classes
    code = code_matrix(cfg, task.dataset, task.code, n_classes)
    data = _binary_outputs(task, cfg, code)
    ctx = MethodContext(
        dataset=task.dataset,
        base=task.base,
        n_classes=code.shape[0],
        n_classifiers=code.shape[1],
        alpha=aggregation_alpha(task.dataset, task.base, cfg.protocol),
    )
    Cs = data["chosen_C"]
    common = {
        "n_classes": code.shape[0],
        "n_classifiers": code.shape[1],
        "n_train": int(data["y_train"].size),
        "n_test": int(data["y_test"].size),
        "binary_seconds": float(data["binary_seconds"]),
        "median_log2_C": float(np.nanmedian(np.log2(Cs))) if np.isfinite(Cs).any() else np.nan,
    }
    failures = []
    for method in task.methods:
        # One method failing must not cost the others their results.
        try:
            row = _apply_decoder(method, ctx, data)
        except Exception:  # noqa: BLE001 - reported by run()
            failures.append(f"method {method}:\n{traceback.format_exc()}")
            continue
        row.update(common)
        path = _agg_dir(cfg, task.dataset, task.base, task.code, task.rep) / f"{method}.json"
        write_json(path, row)
    if failures:
        raise _MethodFailures("\n".join(failures))


class _MethodFailures(RuntimeError):
    """Some methods of a task failed; the others' results were written."""


def _apply_decoder(method, ctx, data):
    """Fit one aggregation method on the training outputs, score it on the test outputs."""
    decoder = make_decoder(method, ctx)
    start = time.perf_counter()
    decoder.fit(data["Q_train"], data["y_train"], data["code"], output="proba")
    fit_seconds = time.perf_counter() - start
    start = time.perf_counter()
    if hasattr(decoder, "predict_proba"):
        row = metrics(data["y_test"], decoder.predict_proba(data["Q_test"]))
    else:  # a hard decoder (Hamming): labels only, the probability scores stay NaN
        row = metrics(data["y_test"], labels=decoder.predict(data["Q_test"]))
    predict_seconds = time.perf_counter() - start
    row.update(
        fit_seconds=fit_seconds,
        predict_seconds=predict_seconds,
        n_iter=float(getattr(decoder, "n_iter_", np.nan)),
        alpha=ctx.alpha if method == "convex" else np.nan,
    )
    return row


def _run_direct(task, cfg):
    split = make_split(_dataset(task.dataset, cfg.data_dir), task.rep, cfg.protocol)
    (method,) = task.methods
    row = run_direct(method, split, cfg.protocol)
    row.update(
        n_classes=int(split.classes.size),
        n_train=int(split.y_train.size),
        n_test=int(split.y_test.size),
    )
    write_json(_direct_dir(cfg, task.dataset, task.rep) / f"{method}.json", row)


def _execute(task, cfg, single_thread):
    """Run one task; never raises (an error is returned, the other tasks go on)."""
    from threadpoolctl import threadpool_limits

    start = time.perf_counter()
    try:
        if single_thread:
            with threadpool_limits(1):
                (_run_agg if task.kind == "agg" else _run_direct)(task, cfg)
        else:
            (_run_agg if task.kind == "agg" else _run_direct)(task, cfg)
    except _MethodFailures as exc:
        return task, time.perf_counter() - start, str(exc)
    except Exception:  # noqa: BLE001 - reported to the user by run()
        return task, time.perf_counter() - start, traceback.format_exc()
    return task, time.perf_counter() - start, None


# ----------------------------------------------------------------------------- results

ROW_KEYS = (
    "dataset",
    "base",
    "code",
    "method",
    "rep",
    *METRICS,
    "binary_seconds",
    "median_log2_C",
    "chosen",
    "alpha",
    "n_classes",
    "n_classifiers",
    "n_train",
    "n_test",
)


def collect_rows(cfg):
    """Every cached result of the configured grid, one dict per (split, method)."""
    rows = []
    for name in cfg.datasets:
        base = base_for(name, cfg.base)
        for rep in range(cfg.reps):
            for method in cfg.methods:
                if method in DIRECT_METHODS:
                    paths = [("", _direct_dir(cfg, name, rep) / f"{method}.json", "")]
                else:
                    paths = [
                        (code, _agg_dir(cfg, name, base, code, rep) / f"{method}.json", base)
                        for code in cfg.codes
                    ]
                for code, path, row_base in paths:
                    cached = read_cached(path, json_dict)
                    if cached is None:
                        continue
                    row = {k: np.nan for k in ROW_KEYS}
                    row.update(cached)
                    row.update(dataset=name, base=row_base, code=code, method=method, rep=rep)
                    rows.append({k: row[k] for k in ROW_KEYS})
    return rows


def write_csv(rows, path):
    """One line per (split, method), columns :data:`ROW_KEYS`; NaN as an empty field."""
    import csv
    import io

    def fmt(v):
        if isinstance(v, float):
            return "" if np.isnan(v) else repr(v)
        return v

    text = io.StringIO()
    writer = csv.DictWriter(text, fieldnames=ROW_KEYS, lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({k: fmt(row[k]) for k in ROW_KEYS})
    data = text.getvalue().encode()
    _atomic_write(path, lambda h: h.write(data))


def read_csv(path):
    import csv

    rows = []
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            out = {}
            for k, v in row.items():
                if k in ("dataset", "base", "code", "method"):
                    out[k] = v
                elif k == "rep":
                    out[k] = int(v)
                else:
                    out[k] = float(v) if v != "" else np.nan
            rows.append(out)
    return rows


# ----------------------------------------------------------------------------- driver


class _LineProgress:
    """Progress as one line per finished task (for logs: no carriage returns)."""

    def __init__(self, total, log):
        self.total, self.n, self.log, self.start = total, 0, log, time.perf_counter()

    def update(self, n=1):
        self.n += n

    def set_postfix_str(self, text, refresh=False):
        elapsed = time.perf_counter() - self.start
        eta = elapsed / max(self.n, 1) * (self.total - self.n)
        self.log(f"[{self.n}/{self.total}] {text} (elapsed {elapsed:.0f}s, eta {eta:.0f}s)")

    def write(self, text):
        self.log(text)

    def close(self):
        pass


def _progress(total, enabled, log):
    """A tqdm bar on a terminal, one line per task in a log file, or nothing."""
    import sys

    if not enabled:
        return _LineProgress(total, lambda text: None)
    if not sys.stderr.isatty():
        return _LineProgress(total, lambda text: print(text, flush=True))
    tqdm = require(
        "tqdm.auto",
        "the progress bar of 'convexagg reproduce'",
        "experiments",
        " (or pass --no-progress)",
    ).tqdm
    return tqdm(total=total, desc="tasks", unit="task", mininterval=1.0, dynamic_ncols=True)


def run(cfg, progress=True, log=print):
    """Do what is missing of ``cfg``'s grid; return ``(rows, errors)``.

    ``rows`` are all cached results of the grid (finished earlier or now);
    ``errors`` lists ``(task, traceback)`` for tasks that failed (their results
    are missing, everything else is kept).
    """
    cfg.validate()
    cfg.cache.mkdir(parents=True, exist_ok=True)
    write_json(
        cfg.cache / "protocol.json",
        {
            "protocol": asdict(cfg.protocol),
            "convexagg": __version__,
            "fingerprint": cfg.protocol.fingerprint(),
        },
    )
    info = {}
    for name in cfg.datasets:  # load once here: fail early on a missing data set
        ds = _dataset(name, cfg.data_dir)
        info[name] = (ds.X.shape[0], ds.n_classes)
        if "ecoc" in cfg.codes and any(m in AGGREGATION_METHODS for m in cfg.methods):
            code_matrix(cfg, name, "ecoc", ds.n_classes)
    tasks, done = plan(cfg, info)
    log(
        f"{len(tasks)} tasks to run ({done} method results already cached) "
        f"with {cfg.jobs} job(s); cache: {cfg.cache}"
    )
    errors = []
    if tasks:
        single_thread = cfg.jobs != 1
        bar = _progress(len(tasks), progress, log)
        results = Parallel(n_jobs=cfg.jobs, return_as="generator_unordered")(
            delayed(_execute)(t, cfg, single_thread) for t in tasks
        )
        for task, seconds, error in results:
            bar.update(1)
            where = task.code or task.methods[0]
            label = f"{task.dataset}/{task.base or 'direct'}/{where}/rep{task.rep}"
            bar.set_postfix_str(f"{label} {seconds:.0f}s", refresh=False)
            if error is not None:
                errors.append((task, error))
                bar.write(f"FAILED {label} {task.methods}:\n{error}")
        bar.close()
    return collect_rows(cfg), errors
