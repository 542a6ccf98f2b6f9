"""Data sets: real data from a data directory, scikit-learn's bundled sets, and the
paper's two synthetic studies.

Real data are CSV files ``<name>.csv.gz`` (or ``<name>.csv``) with a header row and
the class label in the **last** column; every other column is a numeric feature.
They are looked up in ``data_dir``, else in the directory named by the environment
variable ``CONVEXAGG_DATA_DIR``. Nothing is downloaded and nothing is copied.
"""

from __future__ import annotations

import hashlib
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
        """Number of distinct class labels."""
        return int(np.unique(self.y).size)

    def fingerprint(self):
        """12 hex digits of a hash of the content: ``X``'s values and shape, the
        labels and the feature names (not the file's bytes: recompressing a file
        keeps it). Names the data's results in the reproduction cache.

        Returns
        -------
        fingerprint : str
            12 hexadecimal digits.
        """
        digest = getattr(self, "_fingerprint", None)
        if digest is None:
            h = hashlib.sha1()
            X = np.ascontiguousarray(self.X, dtype=np.float64)
            h.update(repr(X.shape).encode())
            h.update(X.tobytes())
            h.update("\x00".join(map(str, self.y)).encode())
            h.update("\x00".join(map(str, self.feature_names)).encode())
            digest = self._fingerprint = h.hexdigest()[:12]
        return digest


def resolve_data_dir(data_dir=None):
    """Find the data directory: ``data_dir``, else ``$CONVEXAGG_DATA_DIR``, else None.

    Parameters
    ----------
    data_dir : str or path-like, default=None
        A folder given explicitly.

    Returns
    -------
    data_dir : Path or None
        The folder to search for data sets, if any.
    """
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
    """List the embedded data sets and the CSV files found in the data directory.

    Parameters
    ----------
    data_dir : str or path-like, default=None
        The data directory (``$CONVEXAGG_DATA_DIR`` when None).

    Returns
    -------
    names : list of str
        ``digits``, ``wine``, ``iris``, then the names of ``<name>.csv(.gz)`` files.
    """
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

    Read with :class:`convexagg.io.CSVFile` (gzip recognised by content, the
    separator detected from the header). Labels stay the strings of the file
    (the protocol's splits depend on their order).

    Parameters
    ----------
    path : str or path-like
        The file.
    name : str, default=None
        The data set's name; the file name without its extensions when None.

    Returns
    -------
    dataset : Dataset
        Features, labels, feature names and the file it was read from.

    Raises
    ------
    ValueError
        With the file name and the reason, when the file has no data rows, fewer
        than two columns, a row whose length differs from the header, a missing
        label (empty, ``NA``, ``nan``, ...), a missing or non-numeric feature
        (with its line and column), or a last column that cannot be a class
        label (non-integer numbers or nearly one value per row: the label column
        is probably missing).
    """
    from .io import MISSING_LABELS, CSVFile

    path = Path(path)
    name = name or path.name.split(".")[0]
    table = CSVFile(path)
    header = table.columns
    if len(header) < 2:
        raise ValueError(
            f"{path}: only one column; expected features followed by the class label "
            "in the last column."
        )
    frame = table.read(numeric=header[:-1])
    labels = frame[header[-1]].tolist()
    missing = [i for i, label in enumerate(labels) if label.lower() in MISSING_LABELS]
    if missing:
        raise ValueError(
            f"{table.where(missing[0], header[-1])}: the label (last column) is missing "
            f"({labels[missing[0]]!r})."
        )
    reason = _looks_like_label(labels, header[-1])
    if reason is not None:
        raise ValueError(
            f"{path}: the last column {header[-1]!r} does not look like a class label "
            f"({reason}); the label column is missing or not last. convexagg expects the "
            "class label in the last column (name it 'label' to skip this check)."
        )
    # C order, as arrays built row by row: BLAS sums in that order (the cached results)
    X = np.ascontiguousarray(frame[header[:-1]].to_numpy(dtype=np.float64))
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

    Parameters
    ----------
    name : str
        A data set's name, or a path to a CSV file.
    data_dir : str or path-like, default=None
        The data directory (``$CONVEXAGG_DATA_DIR`` when None).

    Returns
    -------
    dataset : Dataset
        The data set; a ``FileNotFoundError`` names where it was looked for.
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

    Parameters
    ----------
    n_classes : int
        Number of classes.
    n_train_per_class : int, default=300
        Training points per class.
    n_test_per_class : int, default=1000
        Test points per class.
    scale : float, default=20.0
        Side of the square the means are drawn from.
    random_state : int, RandomState instance or None, default=None
        Seeds the means and the points.

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
        Samples per class.
    random_state : int, RandomState instance or None, default=None
        Seeds the draws.

    Returns
    -------
    Q : ndarray of shape (3 * n_per_class, 3)
        The three classifiers' outputs (probabilities of their positive side).
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
