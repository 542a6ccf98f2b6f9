"""Data sets: real data from a data directory, scikit-learn's bundled sets, and the
paper's two synthetic studies.

Real data are CSV files ``<name>.csv.gz`` (or ``<name>.csv``) with a header row and
the class label in the **last** column; every other column is a numeric feature.
They are looked up in ``data_dir``, else in the directory named by the environment
variable ``CONVEXAGG_DATA_DIR``. Nothing is downloaded and nothing is copied.
"""

from __future__ import annotations

import csv
import gzip
import io
import os
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from sklearn.utils import check_random_state

from .codes import one_vs_one

__all__ = [
    "DATA_DIR_ENV",
    "EMBEDDED_DATASETS",
    "Dataset",
    "available_datasets",
    "load_csv_dataset",
    "load_dataset",
    "make_broken_classifier_outputs",
    "make_gaussian_classes",
    "resolve_data_dir",
]

DATA_DIR_ENV = "CONVEXAGG_DATA_DIR"
EMBEDDED_DATASETS = ("digits", "wine", "iris")
_LABEL_NAMES = {"label", "labels", "class", "classes", "target", "y"}


@dataclass
class Dataset:
    """A classification data set.

    Attributes
    ----------
    name : str
    X : ndarray of shape (n_samples, n_features), float64
    y : ndarray of shape (n_samples,)
        Class labels as read (strings for CSV files, integers for embedded sets).
    feature_names : list of str
    source : str
        The file it was read from, or ``"sklearn"``.
    """

    name: str
    X: np.ndarray
    y: np.ndarray
    feature_names: list = field(default_factory=list)
    source: str = ""

    @property
    def n_classes(self):
        return int(np.unique(self.y).size)


def resolve_data_dir(data_dir=None):
    """``data_dir``, else ``$CONVEXAGG_DATA_DIR``, else None."""
    if data_dir is None:
        data_dir = os.environ.get(DATA_DIR_ENV) or None
    return None if data_dir is None else Path(data_dir)


def _find_file(name, data_dir):
    for suffix in (".csv.gz", ".csv"):
        path = data_dir / f"{name}{suffix}"
        if path.is_file():
            return path
    return None


def available_datasets(data_dir=None):
    """Names of the embedded sets plus the CSV files found in the data directory."""
    names = list(EMBEDDED_DATASETS)
    data_dir = resolve_data_dir(data_dir)
    if data_dir is not None and data_dir.is_dir():
        for path in sorted(data_dir.iterdir()):
            for suffix in (".csv.gz", ".csv"):
                if path.name.endswith(suffix):
                    names.append(path.name[: -len(suffix)])
    return names


def _looks_like_label(values, name):
    """Why a column cannot be a class label, or None if it can."""
    if name.strip().lower() in _LABEL_NAMES:
        return None
    try:
        numbers = np.asarray(values, dtype=np.float64)
    except ValueError:
        return None  # text labels
    n_distinct = np.unique(numbers).size
    if not np.all(numbers == np.round(numbers)):
        return f"it holds non-integer numbers ({n_distinct} distinct values)"
    if n_distinct > max(50, len(values) // 2):
        return f"it holds {n_distinct} distinct values in {len(values)} rows"
    return None


def load_csv_dataset(path, name=None):
    """Read a ``.csv`` or ``.csv.gz`` file: header row, label in the last column.

    Raises
    ------
    ValueError
        With the file name and the reason, when the file has no data rows, fewer
        than two columns, a row whose length differs from the header, a missing
        label, a non-numeric feature, or a last column that cannot be a class label
        (non-integer numbers or nearly one value per row: the label column is
        probably missing).
    """
    path = Path(path)
    name = name or path.name.split(".")[0]
    opener = gzip.open if path.name.endswith(".gz") else open
    with opener(path, "rt", newline="") as handle:
        rows = list(csv.reader(io.StringIO(handle.read())))
    rows = [r for r in rows if r]
    if len(rows) < 2:
        raise ValueError(f"{path}: needs a header row and at least one data row.")
    header = [h.strip() for h in rows[0]]
    if len(header) < 2:
        raise ValueError(
            f"{path}: only one column; expected features followed by the class label "
            "in the last column."
        )
    body = rows[1:]
    for i, row in enumerate(body, start=2):
        if len(row) != len(header):
            raise ValueError(
                f"{path}, line {i}: {len(row)} fields but the header has {len(header)}; "
                "every row needs all features and the label (last column)."
            )
    labels = [row[-1].strip() for row in body]
    if any(label == "" for label in labels):
        line = 2 + labels.index("")
        raise ValueError(f"{path}, line {line}: the label (last column) is empty.")
    reason = _looks_like_label(labels, header[-1])
    if reason is not None:
        raise ValueError(
            f"{path}: the last column {header[-1]!r} does not look like a class label "
            f"({reason}); the label column is missing or not last. convexagg expects the "
            "class label in the last column (name it 'label' to skip this check)."
        )
    try:
        X = np.array([[float(v) for v in row[:-1]] for row in body], dtype=np.float64)
    except ValueError as exc:
        raise ValueError(f"{path}: a feature value is not a number ({exc}).") from None
    y = np.asarray(labels)
    if np.unique(y).size < 2:
        raise ValueError(f"{path}: the label column has a single class.")
    return Dataset(name=name, X=X, y=y, feature_names=header[:-1], source=str(path))


def _load_embedded(name):
    from sklearn import datasets as skd

    loader = {"digits": skd.load_digits, "wine": skd.load_wine, "iris": skd.load_iris}[name]
    bunch = loader()
    names = list(getattr(bunch, "feature_names", [])) or [
        f"f{j}" for j in range(bunch.data.shape[1])
    ]
    return Dataset(
        name=name,
        X=np.asarray(bunch.data, dtype=np.float64),
        y=np.asarray(bunch.target),
        feature_names=[str(n) for n in names],
        source="sklearn",
    )


def load_dataset(name, data_dir=None):
    """Load a data set by name.

    ``data_dir`` (or ``$CONVEXAGG_DATA_DIR``) is searched first for ``<name>.csv.gz``
    / ``<name>.csv``; the embedded names ``digits``, ``wine`` and ``iris`` (scikit-learn's
    bundled copies) need no data directory. A path to a CSV file also works.
    """
    as_path = Path(name)
    if as_path.suffix in (".csv", ".gz") and as_path.is_file():
        return load_csv_dataset(as_path)
    directory = resolve_data_dir(data_dir)
    if directory is not None:
        path = _find_file(name, directory)
        if path is not None:
            return load_csv_dataset(path, name=name)
    if name in EMBEDDED_DATASETS:
        return _load_embedded(name)
    where = (
        f"in {directory}"
        if directory is not None
        else f"(no data directory: pass --data-dir or set {DATA_DIR_ENV})"
    )
    raise FileNotFoundError(
        f"data set {name!r} not found {where}; embedded sets are {', '.join(EMBEDDED_DATASETS)}."
    )


def make_gaussian_classes(
    n_classes, n_train_per_class=300, n_test_per_class=1000, *, scale=20.0, random_state=None
):
    """The paper's 2-D Gaussian study (section 5.2, Fig. 5).

    ``n_classes`` isotropic unit-variance Gaussians in the plane whose means are drawn
    uniformly from ``[0, scale]^2`` (classes may overlap); ``n_train_per_class``
    training and ``n_test_per_class`` test points from each. The unit covariance is
    this library's reading: the paper does not state it.

    Returns
    -------
    X_train, y_train, X_test, y_test : ndarrays
        Classes are ``0..n_classes-1``.
    """
    rng = check_random_state(random_state)
    means = rng.uniform(0.0, scale, size=(n_classes, 2))

    def draw(n):
        y = np.repeat(np.arange(n_classes), n)
        return means[y] + rng.standard_normal((y.size, 2)), y

    X_train, y_train = draw(n_train_per_class)
    X_test, y_test = draw(n_test_per_class)
    return X_train, y_train, X_test, y_test


def make_broken_classifier_outputs(n_per_class=100, random_state=None):
    """Binary outputs of the paper's synthetic 3-class study (section 5.2).

    Three one-vs-one classifiers: BC1 separates classes 1 and 2, BC2 classes 1
    and 3 (both work), BC3 classes 2 and 3 and fails. Outputs are generated
    directly, as in the paper (0-based classes here)::

        BC1 (0 vs 1): 0.9 + 0.1 u  on class 0,   0.1 + 0.1 u  on class 1
        BC2 (0 vs 2): 0.6 + 0.4 u  on class 0,   0.1 + 0.1 u  on class 2
        BC3 (1 vs 2): 0.5 + 0.5 r(v) u  on classes 1 and 2
        a classifier's output on the class it does not use: u

    with ``u, v ~ U[0, 1]`` drawn independently for every entry and
    ``r(a) = 1 if a > 0.5 else -1``. Reading of the paper's ambiguities: its
    ``r(v_{3,1})`` for class 3 is taken as the typo of ``r(v_{3,i})`` (one draw
    per sample, as for class 2), and its columns are ordered (0,1), (0,2), (1,2)
    as its text describes, not as its Table 1 lists them.

    Parameters
    ----------
    n_per_class : int, default=100
    random_state : int, RandomState instance or None

    Returns
    -------
    Q : ndarray of shape (3 * n_per_class, 3)
    y : ndarray of shape (3 * n_per_class,)
        Class indices 0, 1, 2 (``n_per_class`` of each, in blocks).
    code : ndarray of shape (3, 3)
        The one-vs-one code.
    """
    rng = check_random_state(random_state)
    n = n_per_class
    y = np.repeat(np.arange(3), n)
    Q = rng.uniform(size=(3 * n, 3))  # the don't-care entries stay uniform
    u = rng.uniform(size=(3 * n, 3))
    r = np.where(rng.uniform(size=3 * n) > 0.5, 1.0, -1.0)
    c0, c1, c2 = (y == 0), (y == 1), (y == 2)
    Q[c0, 0] = 0.9 + 0.1 * u[c0, 0]
    Q[c1, 0] = 0.1 + 0.1 * u[c1, 0]
    Q[c0, 1] = 0.6 + 0.4 * u[c0, 1]
    Q[c2, 1] = 0.1 + 0.1 * u[c2, 1]
    broken = c1 | c2
    Q[broken, 2] = 0.5 + 0.5 * r[broken] * u[broken, 2]
    return Q, y, one_vs_one(3)
