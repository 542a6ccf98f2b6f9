"""Verbosity levels, as in scikit-learn: what ``fit`` prints at 0, 1 and 2 (content, not timing)."""

import re
import sys

import numpy as np
import pytest
from sklearn.datasets import load_iris
from sklearn.linear_model import LogisticRegression
from sklearn.tree import DecisionTreeClassifier

from convexagg import ConvexAggregationClassifier, ConvexDecoder
from convexagg.datasets import make_broken_classifier_outputs

ELAPSED = r", \d+\.\d s elapsed$"
CHAINED_TEXT = "(each column's 3 folds in turn)"
CHAINED = re.escape(CHAINED_TEXT)


@pytest.fixture(scope="module")
def iris():
    return load_iris(return_X_y=True)


def _lines(text, tag):
    return [line for line in text.splitlines() if line.startswith(f"[{tag}]")]


def _fit(iris, capsys, **params):
    """A fit whose output is read; a ``LogisticRegression`` learner unless given, whose
    folds are chained column by column (the lines say so)."""
    X, y = iris
    params = {"estimator": LogisticRegression(), **params}
    clf = ConvexAggregationClassifier(code="ovo", random_state=0, **params).fit(X, y)
    return clf, capsys.readouterr()


def test_level_0_is_silent(iris, capsys):
    _, captured = _fit(iris, capsys, cv=3, verbose=0)
    assert captured.out == "" and captured.err == ""


def test_level_1_a_line_per_stage(iris, capsys):
    clf, captured = _fit(iris, capsys, cv=3, verbose=1)
    own = _lines(captured.out, "ConvexAggregationClassifier")
    first = "[ConvexAggregationClassifier] out-of-fold outputs: 3 folds x 3 binary classifiers"
    assert own[0] == first
    folds = [line for line in own if "binaries:" in line]
    assert len(folds) == 3  # one line per fold's worth of binaries, none per binary
    for f, line in enumerate(folds, 1):  # LogisticRegression: each column's folds in turn
        assert re.search(rf"binaries: {3 * f} of 9 trained {CHAINED}{ELAPSED}", line), line
    assert own[-1] == "[ConvexAggregationClassifier] fitting ConvexDecoder on 150 x 3 outputs"
    assert own[-2].startswith("[ConvexAggregationClassifier] choosing zero_entry_penalty among")
    # the decoder's choice, then its weights; no solver iterations at level 1
    choice, weights = _lines(captured.out, "ConvexDecoder")
    value, scores = clf.zero_entry_penalty_, clf.zero_entry_penalty_scores_
    assert choice.startswith(f"[ConvexDecoder] zero_entry_penalty={value:g} chosen by 3-fold")
    assert choice.endswith(f"held-out log-loss of each value {scores}")
    assert weights == (
        f"[ConvexDecoder] weights: {clf.n_iter_} iterations, final objective "
        f"{clf.decoder_.objective_:.6g}, converged"
    )
    assert captured.err == ""  # no progress bar: standard error is not a terminal


def _binary_lines(out):
    lines = [line for line in out.splitlines() if "binaries:" in line]
    return [re.sub(ELAPSED, "", line.split("] ", 1)[1]) for line in lines]


def test_level_1_fold_by_fold_for_learners_fitted_cold(iris, capsys):
    """A learner whose folds are independent tasks is reported fold by fold."""
    _, captured = _fit(iris, capsys, cv=3, verbose=1, estimator=DecisionTreeClassifier())
    assert _binary_lines(captured.out) == [
        f"binaries: fold {f} of 3, 3 of 3 trained" for f in (1, 2, 3)
    ]


def test_level_2_adds_each_binary_and_the_solver_iterations(iris, capsys):
    clf, captured = _fit(iris, capsys, cv=3, verbose=2)
    expected = [f"binaries: {k} of 9 trained {CHAINED_TEXT}" for k in range(1, 10)]
    assert _binary_lines(captured.out) == expected
    lines = captured.out.splitlines()
    # a line per fit of the zero entries' choice (each prior fitted, on each of 3 folds)
    folds = [k for k, line in enumerate(lines) if re.search(r"zero_entry_penalty=\S+, fold", line)]
    assert len(folds) == 3 * np.count_nonzero(~np.isnan(clf.zero_entry_penalty_scores_))
    # the final fit's: the start and each iteration
    iterations = [line for line in lines[folds[-1] :] if "] iteration " in line]
    assert len(iterations) == clf.n_iter_ + 1
    assert all(line.startswith("[ConvexDecoder] iteration") for line in iterations)
    assert f"[ConvexDecoder] weights: {clf.n_iter_} iterations" in captured.out


def test_in_sample_and_refitted_binaries_are_reported(iris, capsys):
    _, captured = _fit(iris, capsys, cv="in_sample", verbose=1)
    assert re.search(rf"binaries: 3 of 3 trained{ELAPSED}", captured.out, re.M)
    # no folds for the binaries (the decoder's choice of the zero entries has its own)
    assert not any("fold" in line for line in _lines(captured.out, "ConvexAggregationClassifier"))
    _, captured = _fit(iris, capsys, cv=3, ensemble=False, verbose=1)
    assert len(re.findall(rf"binaries: \d of 9 trained {CHAINED}", captured.out)) == 3
    assert re.search(rf"binaries on all rows: 3 of 3 trained{ELAPSED}", captured.out, re.M)


def test_parallel_jobs_report_the_same_lines(iris, capsys):
    _, serial = _fit(iris, capsys, cv=3, verbose=1)
    _, parallel = _fit(iris, capsys, cv=3, verbose=1, n_jobs=2)

    def stages(text):
        return [re.sub(ELAPSED, "", line) for line in text.splitlines()]

    assert stages(parallel.out) == stages(serial.out)


def test_a_progress_bar_on_a_terminal_only(iris, capsys, monkeypatch):
    pytest.importorskip("tqdm")
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    _, captured = _fit(iris, capsys, cv=3, verbose=1)
    assert "binaries" in captured.err and "/9" in captured.err  # 3 folds x 3 binaries
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    _, captured = _fit(iris, capsys, cv=3, verbose=0)
    assert captured.err == ""


@pytest.mark.parametrize("verbose", [0, 1, 2])
def test_the_decoder_alone(verbose, capsys):
    Q, y, code = make_broken_classifier_outputs(random_state=0)
    dec = ConvexDecoder(verbose=verbose).fit(Q, y, code)
    lines = _lines(capsys.readouterr().out, "ConvexDecoder")
    summary = [line for line in lines if "weights:" in line]
    iterations = [line for line in lines if "] iteration " in line]
    assert len(summary) == (verbose >= 1)
    assert len(iterations) == (dec.n_iter_ + 1 if verbose >= 2 else 0)
    assert len(lines) == len(summary) + len(iterations)
