"""The folds of a fit are made in one module (``convexagg._folds``): the binaries'
out-of-fold outputs, the penalty choice and ``alpha``'s choice split the rows by its
rules, checked against scikit-learn's splitters."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest
from sklearn.model_selection import KFold, StratifiedKFold

import convexagg
from convexagg._folds import cv_splits, shuffled_splits, stratified_folds

ROOT = Path(convexagg.__file__).parent
# the paper's experiments split off their test part as the paper's protocol does
OWN_SPLITS = {"_folds.py", "experiments/protocol.py"}


def _same(splits, reference):
    splits, reference = list(splits), list(reference)
    assert len(splits) == len(reference)
    for (a, b), (c, d) in zip(splits, reference):
        np.testing.assert_array_equal(a, c)
        np.testing.assert_array_equal(b, d)


@pytest.fixture
def labels():
    rng = np.random.RandomState(0)
    return rng.randint(0, 4, size=60)


def test_an_int_is_shuffled_stratified_folds(labels):
    X = np.zeros((labels.size, 2))
    _same(
        cv_splits(5, X, labels, {}, seed=7),
        StratifiedKFold(5, shuffle=True, random_state=7).split(X, labels),
    )
    _same(
        stratified_folds(3, 1).split(X, labels),
        StratifiedKFold(3, shuffle=True, random_state=1).split(X, labels),
    )
    # a splitter is read as given, once
    given = KFold(4)
    _same(cv_splits(given, X, labels, {}), given.split(X))


def test_the_choice_stratifies_unless_a_class_is_too_small(labels):
    X = np.zeros((labels.size, 1))
    _same(
        shuffled_splits(labels, 3, 5),
        StratifiedKFold(3, shuffle=True, random_state=5).split(X, labels),
    )
    small = np.concatenate([labels, [4, 4]])  # a class of two rows: not in every fold
    X = np.zeros((small.size, 1))
    _same(shuffled_splits(small, 3, 5), KFold(3, shuffle=True, random_state=5).split(X))


def test_a_bad_cv_names_the_parameter(labels):
    X = np.zeros((labels.size, 1))
    with pytest.raises(ValueError, match="alpha_cv=100 folds need at least 100"):
        cv_splits(100, X, labels, {}, name="alpha_cv")
    with pytest.raises(ValueError, match="cv=.* gave no splits"):
        cv_splits(iter([]), X, labels, {})


def _makes_folds(path):
    """The lines of ``path`` that name a scikit-learn splitter or ``check_cv``."""
    names = {"KFold", "StratifiedKFold", "GroupKFold", "ShuffleSplit", "check_cv"}
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Name) and node.id in names:
            found.append(node.lineno)
        elif isinstance(node, ast.ImportFrom) and any(a.name in names for a in node.names):
            found.append(node.lineno)
    return found


def test_no_other_module_makes_folds():
    makers = {
        str(path.relative_to(ROOT)): lines
        for path in ROOT.rglob("*.py")
        if (lines := _makes_folds(path)) and str(path.relative_to(ROOT)) not in OWN_SPLITS
    }
    assert not makers, f"folds made outside convexagg._folds: {makers}"
