"""The landing figure and the rank table of QUALITY.md, from the committed quality records.

    python docs/scripts/quality_figure.py

reads ``benchmarks/results/quality/records/<method>.json`` (written by
``benchmarks/bench_quality.py``; nothing is rerun), draws
``docs/_static/quality_logloss.png`` -- each calibration method's test log-loss on
every data set, as a multiple of the lowest one on that data set, the mean over the
splits -- and prints the rank table (the mean rank of each method over the data
sets, by log-loss and by Brier score) that QUALITY.md shows.
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
RECORDS = ROOT / "benchmarks" / "results" / "quality" / "records"
OUT = ROOT / "docs" / "_static" / "quality_logloss.png"

DEFAULT = "convexagg (default)"
# The linear methods a scikit-learn user would reach for, on the same binaries or the same
# learner: record name -> the words of the figure and the table.
METHODS = {
    DEFAULT: "ConvexAggregationClassifier (default)",
    "LogisticRegressionCV (multinomial)": "LogisticRegressionCV (multinomial)",
    "Calibrated OneVsOne(LR), temperature": "CalibratedClassifierCV(OvO LR), temperature",
    "Calibrated LinearSVC, temperature": "CalibratedClassifierCV(LinearSVC), temperature",
    "Calibrated LinearSVC, sigmoid": "CalibratedClassifierCV(LinearSVC), sigmoid",
    "OneVsRest(LogisticRegression)": "OneVsRestClassifier(LR), normalised",
    "pairwise coupling, same binaries": "pairwise coupling (same binaries)",
    "Bradley-Terry, same binaries": "generalized Bradley-Terry (same binaries)",
}


def load(records=RECORDS):
    """``{score: {method: {data set: mean over splits}}}`` for log-loss and Brier."""
    values = defaultdict(lambda: defaultdict(lambda: defaultdict(list)))
    for path in sorted(records.glob("*.json")):
        for record in json.loads(path.read_text()):
            if record["method"] not in METHODS:
                continue
            for score in ("log_loss", "brier"):
                values[score][record["method"]][record["dataset"]].append(record[score])
    return {
        score: {m: {d: float(np.mean(v)) for d, v in by_set.items()} for m, by_set in table.items()}
        for score, table in values.items()
    }


def ranks(table):
    """Mean rank of each method over the data sets (1 = the lowest score), and its wins."""
    datasets = sorted(set.intersection(*(set(v) for v in table.values())))
    methods = list(table)
    scores = np.array([[table[m][d] for d in datasets] for m in methods])
    order = scores.argsort(axis=0).argsort(axis=0) + 1  # ties do not occur in these floats
    return {
        m: (order[i].mean(), int((order[i] == 1).sum())) for i, m in enumerate(methods)
    }, datasets


def rank_table(means):
    """The Markdown rank table, best mean log-loss rank first."""
    by_loss, datasets = ranks(means["log_loss"])
    by_brier, _ = ranks(means["brier"])
    lines = [
        f"| method | mean rank, log-loss | best of {len(datasets)} | mean rank, Brier | best of "
        f"{len(datasets)} |",
        "| --- | --- | --- | --- | --- |",
    ]
    for m in sorted(by_loss, key=lambda m: by_loss[m][0]):
        (lr, lw), (br, bw) = by_loss[m], by_brier[m]
        lines.append(f"| {METHODS[m]} | {lr:.1f} | {lw} | {br:.1f} | {bw} |")
    return "\n".join(lines)


def figure(means, out=OUT):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    table = means["log_loss"]
    datasets = sorted(table[DEFAULT], key=lambda d: table[DEFAULT][d])
    best = {d: min(table[m][d] for m in table) for d in datasets}
    fig, ax = plt.subplots(figsize=(8.0, 4.6), layout="constrained")
    y = np.arange(len(datasets))
    markers = "osD^v<>p"
    for (method, label), marker in zip(METHODS.items(), markers):
        ratio = [table[method][d] / best[d] for d in datasets]
        if method == DEFAULT:
            ax.plot(ratio, y, "o", color="C3", ms=9, zorder=3, label=label)
        else:
            ax.plot(ratio, y, marker, ms=5, alpha=0.75, mfc="none", label=label)
    ax.axvline(1.0, color="0.6", lw=0.8)
    ax.set_xscale("log")
    ticks = [1, 1.25, 1.5, 2, 3, 4, 6, 8]
    ax.set_xticks(ticks, ["1 (best)", *map(str, ticks[1:])])
    ax.minorticks_off()
    ax.set_yticks(y, [f"{d} ({table[DEFAULT][d]:.2f})" for d in datasets])
    ax.invert_yaxis()
    ax.set_ylabel("data set (the default's log-loss)")
    ax.set_xlabel("test log-loss / lowest log-loss on the data set (mean of 5 splits)")
    ax.set_title(
        "Linear binaries: convexagg's default against scikit-learn's calibrators", fontsize=10
    )
    ax.legend(loc="lower right", fontsize="x-small", framealpha=0.9)
    ax.grid(axis="x", alpha=0.3)
    fig.savefig(out, dpi=110)
    print(f"wrote {out}")


if __name__ == "__main__":
    means = load()
    figure(means)
    print(rank_table(means))
