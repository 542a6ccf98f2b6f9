"""What the quick reproduction says: no comparison with the paper where it has no number,
human table titles, and Fig. 3 drawn on a stand-in only with a message.

Tiny synthetic rows and data; nothing here reads the real data sets.
"""

import numpy as np
import pytest

from convexagg.datasets import Dataset, make_gaussian_classes
from convexagg.experiments.tables import render_all

CODES = ["ovo", "ovr", "ecoc"]
METHODS = ["lmr", "loss_based", "convex"]


def _rows(datasets, reps=2):
    """Result rows as ``convexagg reproduce`` writes them, with made-up values."""
    rows = []
    for ds in datasets:
        for rep in range(reps):
            for method in METHODS:
                for code in [""] if method == "lmr" else CODES:
                    rows.append(
                        {
                            "dataset": ds,
                            "base": "logreg",
                            "code": code,
                            "method": method,
                            "rep": rep,
                            "accuracy": 0.9 + 0.01 * rep,
                            "mse": 0.1,
                            "log_loss": 0.3,
                            "top_label_ece": 0.05,
                            "classwise_ece": 0.02,
                            "fit_seconds": 0.01,
                            "predict_seconds": 0.001,
                            "n_iter": 10,
                            "binary_seconds": 0.1,
                            "n_classifiers": 3,
                        }
                    )
    return rows


def test_embedded_data_sets_are_not_compared_with_the_paper():
    datasets = ["digits", "wine", "iris"]
    md = render_all(_rows(datasets), datasets, CODES, METHODS, "linear", 2)
    assert "No paper value: digits, wine, iris are not among the paper's data sets" in md
    assert "/ the paper's mean" not in md and "†" not in md.replace("† =", "")
    for ds in datasets:
        assert f"| {ds} (no paper value) |" in md
    # a measured cell stands alone: no " / published" part
    accuracy = md.split("### Classification accuracy")[1].split("###")[0]
    assert " / " not in accuracy


def test_paper_data_sets_are_compared_and_others_named():
    datasets = ["letter", "digits"]
    md = render_all(_rows(datasets), datasets, CODES, METHODS, "linear", 2)
    assert "for the data sets in the paper's tables (letter)" in md
    assert "No paper value for digits" in md
    accuracy = md.split("### Classification accuracy")[1].split("###")[0]
    letter = next(line for line in accuracy.splitlines() if line.startswith("| letter |"))
    assert " / " in letter  # the paper's value beside the measured one


def test_table_headings_are_titles_not_latex_labels():
    md = render_all(_rows(["letter"]), ["letter"], CODES, METHODS, "linear", 2)
    headings = [line for line in md.splitlines() if line.startswith("###")]
    assert headings and not any("tab:" in h or "peformance" in h for h in headings)
    assert "### Classification accuracy (the paper's accuracy table, linear base learners)" in md


def test_figure3_without_vowel_says_it_draws_a_stand_in(tmp_path, monkeypatch):
    pytest.importorskip("matplotlib")
    from convexagg.experiments import figures

    X, y, _, _ = make_gaussian_classes(6, 15, 0, scale=6.0, random_state=0)
    small = Dataset("digits", X, y, ["f0", "f1"], "sklearn")

    def load(name, data_dir=None):
        if name == "vowel":
            raise FileNotFoundError("data set 'vowel' not found (no data directory).")
        return small

    monkeypatch.setattr(figures, "load_dataset", load)
    messages = []
    f3 = figures.figure3(tmp_path, None, alphas=[1e-3, 1.0], ecoc_candidates=5, log=messages.append)
    assert f3["stand_in"] is True and f3["dataset"] == "digits"
    assert len(messages) == 1
    assert "'vowel' not found" in messages[0] and "stand-in, not the paper's Fig. 3" in messages[0]
    assert (tmp_path / "fig3_regularization_path.png").stat().st_size > 1000
    assert np.asarray(f3["path"]["weights"]).shape[0] == 2
