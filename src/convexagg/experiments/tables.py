"""Markdown tables shaped like the paper's (section 5.3), the published value beside
each measured one.

A cell reads ``0.842 (0.007) / 0.844 (0.007)``: measured mean (standard deviation
over splits), then the paper's. ``†`` marks accuracy / MSE cells where the two
means differ by more than one standard deviation (the paper's, or the measured one
where the paper gives none); ``n=7`` says a cell has fewer splits than asked for.
The paper's numbers are in ``paper_results.csv`` next to this module.
"""

from __future__ import annotations

import csv
from importlib import resources

import numpy as np

__all__ = [
    "PAPER_NAMES",
    "calibration_table",
    "differences",
    "load_paper_results",
    "render_all",
    "summarise",
]

# Our data set name -> the paper's (None: not in the paper).
PAPER_NAMES = {
    "glass": "glass",
    "segment": "segment",
    "satimage": "satimage",
    "pendigits": "pendigits",
    "letter": "letter",
    "isolet": "isolet",
    "gcm": "GCM",
    "all_leukemia": "ALL",
    "all_leukemia_galgo": "ALL",
}
# Stand-ins whose numbers are shown beside the paper's but are not comparable.
STAND_INS = {"all_leukemia_galgo"}

METHOD_TITLES = {
    "msvm": "M-SVM",
    "lmr": "LMR",
    "loss_based": "Loss-based",
    "gbtm": "GBTM",
    "wmap": "WMAP",
    "convex": "Convex (ours)",
    "hamming": "Hamming",
    "pairwise_coupling": "Pairwise coupling",
}
CODE_TITLES = {"ovo": "APs", "ovr": "OVA", "ecoc": "ECOC"}
DIRECT = ("msvm", "lmr")
METRICS = (
    "accuracy",
    "mse",
    "log_loss",
    "top_label_ece",
    "classwise_ece",
    "fit_seconds",
    "predict_seconds",
    "n_iter",
)
ECE_TITLES = {"top_label_ece": "top-label", "classwise_ece": "classwise"}


def load_paper_results():
    """``{(table, dataset, code, method, metric): (mean, std or nan)}``."""
    text = resources.files(__package__).joinpath("paper_results.csv").read_text()
    lines = [line for line in text.splitlines() if line and not line.startswith("#")]
    out = {}
    for row in csv.DictReader(lines):
        std = float(row["std"]) if row["std"] else np.nan
        key = (row["table"], row["dataset"], row["code"], row["method"], row["metric"])
        out[key] = (float(row["mean"]), std)
    return out


def summarise(rows):
    """``{(dataset, code, method): {metric: (mean, std, n)}}`` over splits."""
    groups = {}
    for row in rows:
        groups.setdefault((row["dataset"], row["code"], row["method"]), []).append(row)
    out = {}
    for key, group in groups.items():
        stats = {}
        for metric in (*METRICS, "binary_seconds", "n_classifiers"):
            values = np.array([r[metric] for r in group], dtype=float)
            values = values[np.isfinite(values)]
            if values.size:
                std = float(values.std(ddof=1)) if values.size > 1 else 0.0
                stats[metric] = (float(values.mean()), std, int(values.size))
        out[key] = stats
    return out


def _fmt(mean, std=None, digits=3):
    if mean is None or not np.isfinite(mean):
        return "—"
    if std is None or not np.isfinite(std):
        return f"{mean:.{digits}f}"
    return f"{mean:.{digits}f} ({std:.{digits}f})"


def _flag(measured, paper):
    """True when measured and published means differ by more than one std."""
    if measured is None or paper is None:
        return False
    m, m_std, _ = measured
    p, p_std = paper
    scale = p_std if np.isfinite(p_std) and p_std > 0 else m_std
    return abs(m - p) > scale + 1e-12


def _cell(summary, paper, dataset, code, method, metric, table, reps, digits=3, flag=True):
    measured = summary.get((dataset, code, method), {}).get(metric)
    pkey = (table, PAPER_NAMES.get(dataset, ""), code, method, metric)
    published = paper.get(pkey)
    text = _fmt(*measured[:2], digits=digits) if measured else "—"
    if measured and measured[2] < reps:
        text += f" n={measured[2]}"
    if published is not None:
        text += " / " + _fmt(*published, digits=digits)
        if flag and _flag(measured, published):
            text += " †"
    return text


def _markdown(header, body):
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in body]
    return "\n".join(lines)


def _dataset_title(name):
    paper = PAPER_NAMES.get(name)
    if name in STAND_INS:
        return f"{name} (stand-in for {paper})"
    if paper is None:  # digits, wine, iris, vowel: not in the paper's tables
        return f"{name} (no paper value)"
    return name


# Human titles of the paper's tables (its LaTeX labels, e.g. tab:acc_peformance_linear,
# are typos and internal names: they stay in paper_results.csv, out of the headings).
_BASE_TITLES = {"linear": "linear base learners", "rbf": "RBF-kernel SVM base learners"}


def _introduction(datasets, kind, base, reps):
    """The paragraph above the tables: what a cell holds, and which data sets the paper has."""
    compared = [ds for ds in datasets if PAPER_NAMES.get(ds)]
    others = [ds for ds in datasets if not PAPER_NAMES.get(ds)]
    where = f"Base learners: {kind} (`--base {base}`); n=k = only k of {reps} splits finished."
    if not compared:
        return (
            "Cells: measured mean (std over splits). No paper value: "
            f"{', '.join(others)} {'is' if len(others) == 1 else 'are'} not among the paper's "
            "data sets, so nothing here is compared with the paper (run with --data-dir and "
            f"the paper's data sets for that). {where}"
        )
    text = (
        "Cells: measured mean (std over splits) / the paper's mean (std), for the data sets "
        f"in the paper's tables ({', '.join(compared)}). † = differs from the paper by more "
        "than one standard deviation."
    )
    if others:
        text += f" No paper value for {', '.join(others)}: not in the paper's tables."
    return f"{text} {where}"


def performance_table(summary, paper, datasets, codes, methods, metric, family, reps):
    """The paper's accuracy or MSE table: direct methods per data set, aggregation
    methods per data set and code."""
    table = f"{'accuracy' if metric == 'accuracy' else metric}_{family}"
    direct = [m for m in methods if m in DIRECT and not (metric != "accuracy" and m == "msvm")]
    agg = [m for m in methods if m not in DIRECT]
    header = ["Dataset", *(METHOD_TITLES[m] for m in direct), "Encoding"]
    header += [METHOD_TITLES.get(m, m) for m in agg]
    body = []
    for ds in datasets:
        for i, code in enumerate(codes):
            row = [_dataset_title(ds) if i == 0 else ""]
            for m in direct:
                row.append(_cell(summary, paper, ds, "", m, metric, table, reps) if i == 0 else "")
            row.append(CODE_TITLES[code])
            row += [_cell(summary, paper, ds, code, m, metric, table, reps) for m in agg]
            body.append(row)
    return _markdown(header, body)


def calibration_table(summary, datasets, codes, methods, reps):
    """Top-label and classwise calibration errors (15 bins) of every method with
    probabilities: a row per data set, code and kind of error (no paper values)."""
    direct = [m for m in methods if m in DIRECT and m != "msvm"]  # M-SVM: labels only
    agg = [m for m in methods if m not in DIRECT]
    header = ["Dataset", *(METHOD_TITLES[m] for m in direct), "Encoding", "ECE"]
    header += [METHOD_TITLES.get(m, m) for m in agg]
    body = []
    for ds in datasets:
        for i, code in enumerate(codes):
            for j, (metric, title) in enumerate(ECE_TITLES.items()):
                first = i == 0 and j == 0
                row = [_dataset_title(ds) if first else ""]
                row += [
                    _cell(summary, {}, ds, "", m, metric, "", reps) if i == 0 else ""
                    for m in direct
                ]
                row += [CODE_TITLES[code] if j == 0 else "", title]
                row += [_cell(summary, {}, ds, code, m, metric, "", reps) for m in agg]
                body.append(row)
    return _markdown(header, body)


def train_time_table(summary, paper, datasets, codes, reps):
    """The paper's training-time table for the convex aggregation (plus our binaries)."""
    header = ["Dataset", "Encoding", "M", "iter", "time (s)", "binaries (s)"]
    body = []
    for ds in datasets:
        for i, code in enumerate(codes):
            stats = next((s for (d, c, _), s in summary.items() if d == ds and c == code and s), {})
            M = stats.get("n_classifiers")
            body.append(
                [
                    _dataset_title(ds) if i == 0 else "",
                    CODE_TITLES[code],
                    "" if M is None else f"{M[0]:.0f}",
                    _cell(
                        summary, paper, ds, code, "convex", "n_iter", "train_time", reps, 1, False
                    ),
                    _cell(
                        summary,
                        paper,
                        ds,
                        code,
                        "convex",
                        "fit_seconds",
                        "train_time",
                        reps,
                        3,
                        False,
                    ),
                    _fmt(*stats["binary_seconds"][:2], digits=1)
                    if "binary_seconds" in stats
                    else "—",
                ]
            )
    return _markdown(header, body)


def test_time_table(summary, paper, datasets, codes, methods, reps):
    """The paper's decoding (test) time table."""
    agg = [m for m in methods if m not in DIRECT]
    header = ["Dataset", "Encoding", *(METHOD_TITLES.get(m, m) for m in agg)]
    body = []
    for ds in datasets:
        for i, code in enumerate(codes):
            row = [_dataset_title(ds) if i == 0 else "", CODE_TITLES[code]]
            row += [
                _cell(summary, paper, ds, code, m, "predict_seconds", "test_time", reps, 3, False)
                for m in agg
            ]
            body.append(row)
    return _markdown(header, body)


def differences(summary, paper, datasets, codes, methods, family):
    """Accuracy / MSE cells where measured and published means differ by more than
    one standard deviation: a list of dicts."""
    out = []
    for metric in ("accuracy", "mse"):
        table = f"{metric}_{family}"
        for ds in datasets:
            for method in methods:
                for code in [""] if method in DIRECT else codes:
                    measured = summary.get((ds, code, method), {}).get(metric)
                    published = paper.get((table, PAPER_NAMES.get(ds, ""), code, method, metric))
                    if _flag(measured, published):
                        out.append(
                            {
                                "metric": metric,
                                "dataset": ds,
                                "code": code,
                                "method": method,
                                "measured": measured,
                                "paper": published,
                                "stand_in": ds in STAND_INS,
                            }
                        )
    return out


def render_all(rows, datasets, codes, methods, base, reps):
    """All tables as one markdown document (str)."""
    summary = summarise(rows)
    paper = load_paper_results()
    family = "rbf" if base == "rbfsvm" else "linear"
    kind = "RBF-kernel SVM + Platt" if family == "rbf" else "linear"
    learners = _BASE_TITLES[family]
    parts = [
        _introduction(datasets, kind, base, reps),
        "",
        f"### Classification accuracy (the paper's accuracy table, {learners})",
        "",
        performance_table(summary, paper, datasets, codes, methods, "accuracy", family, reps),
        "",
        f"### MSE = Brier score (the paper's MSE table, {learners})",
        "",
        performance_table(summary, paper, datasets, codes, methods, "mse", family, reps),
        "",
        "### Log-loss (not in the paper)",
        "",
        performance_table(summary, {}, datasets, codes, methods, "log_loss", family, reps),
        "",
        "### Calibration error (no paper value)",
        "",
        "Expected calibration error, 15 equal-width bins (`convexagg.metrics`): top-label "
        "bins the largest probability against the accuracy, classwise bins every class's "
        "probability against its frequency (Kull et al. 2019); lower is better.",
        "",
        calibration_table(summary, datasets, codes, methods, reps),
    ]
    if "convex" in methods:
        parts += [
            "",
            "### Training time of the convex aggregation (the paper's training-time table)",
            "",
            "Interior point iterations and seconds to fit the weights; `binaries` is our time "
            "to tune and train the binary classifiers of the code (not in the paper).",
            "",
            train_time_table(summary, paper, datasets, codes, reps),
        ]
    parts += [
        "",
        "### Decoding time on the test part, seconds (the paper's test-time table)",
        "",
        test_time_table(summary, paper, datasets, codes, methods, reps),
    ]
    diffs = differences(summary, paper, datasets, codes, methods, family)
    if diffs:
        parts += ["", "### Cells differing from the paper by more than one standard deviation", ""]
        for d in diffs:
            code = f"/{CODE_TITLES[d['code']]}" if d["code"] else ""
            note = " (stand-in data set: not comparable)" if d["stand_in"] else ""
            m, s, n = d["measured"]
            p, ps = d["paper"]
            title = METHOD_TITLES.get(d["method"], d["method"])
            parts.append(
                f"- {d['metric']} {d['dataset']}{code} {title}: "
                f"measured {m:.3f} ({s:.3f}, n={n}) vs paper {_fmt(p, ps)}; "
                f"difference {m - p:+.3f}{note}"
            )
    return "\n".join(parts) + "\n"
