"""The paper's experimental protocol (section 5.1 and the baselines spec, section 7).

One *split* of a data set is: a stratified random 90/10 train/test cut (one fold of a
shuffled 10-fold partition, as the paper's "random 10-fold cross-validation"), a
stratified 20 % validation part inside the training part for choosing the
regularisation, gene selection (gene-expression sets) and standardisation fitted on
the training part. Everything is seeded by ``(seed, rep)`` so every method of every
code sees the same split.

Base learners (:data:`BASE_LEARNERS`) and their grids follow the paper: L2 logistic
regression (LIBLINEAR), linear SVM and RBF SVM with Platt probabilities (LIBSVM), ``C``
over ``2^-3 .. 2^4`` and the RBF width over ``2^-6 .. 2^3``. The regularisation of
each binary classifier is chosen by its own accuracy on the validation samples of
its binary problem (the spec's default reading), ties going to the largest ``C``
(``Protocol.c_ties``), then the classifier is refitted on the whole training part.
"""

from __future__ import annotations

import hashlib
import json
import warnings
from dataclasses import asdict, dataclass

import numpy as np
from sklearn.calibration import CalibratedClassifierCV
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import StratifiedKFold, train_test_split
from sklearn.preprocessing import LabelEncoder, StandardScaler
from sklearn.svm import SVC

from .._version import __version__
from ..binary import ConstantBinaryPredictor, predict_binaries
from ..metrics import classwise_calibration_error, top_label_calibration_error

__all__ = [
    "BASE_LEARNERS",
    "PAPER_SOLVER",
    "DATASET_SETTINGS",
    "PROBABILITY_METRICS",
    "Protocol",
    "Split",
    "base_for",
    "fit_tuned_binaries",
    "gene_ranking",
    "make_split",
    "metrics",
]


# The reproduction fits the convex aggregation with the paper's algorithm (Algorithm 1:
# adaptive barrier, PCG Newton steps, start w = 1/M), not the library's default solver,
# so RESULTS.md stays the paper's method exactly.
PAPER_SOLVER = "interior_point"


@dataclass(frozen=True)
class Protocol:
    """Settings shared by every run; their hash (with the library's version) names
    the result cache.

    ``version`` is bumped whenever the computation behind a cached result changes,
    so results of older code are never mixed with new ones (2: the direct methods
    are seeded from ``seed``). The library's version is hashed too, so another
    release never reuses this one's results either.
    """

    version: int = 2
    seed: int = 0
    n_folds: int = 10  # test part = one fold of a shuffled n_folds partition
    val_fraction: float = 0.2
    c_grid: tuple = tuple(2.0 ** np.arange(-3, 5))
    # Validation-accuracy ties between C values (frequent: a few hundred validation
    # points per binary problem) go to the largest C. The paper does not say; the
    # smallest C (LIBLINEAR's own parameter search) over-regularises the letter
    # binaries (APs convex MSE 0.241 against the paper's 0.232, split 0) -- see RESULTS.md.
    c_ties: str = "largest"
    gamma_grid: tuple = tuple(2.0 ** np.arange(-6, 4))
    msvm_grid: tuple = tuple(10.0 ** np.arange(0, 7))  # SVM^multiclass -c values
    lmr_n_lambdas: int = 12
    alpha: float = 1e-4  # the paper's lambda for the convex aggregation
    ecoc_candidates: int = 20000  # random codes drawn for sparse ECOC (the paper's number)
    n_genes: int = 1000

    def fingerprint(self):
        """10 hex digits of a hash of the settings and the convexagg version."""
        settings = {**asdict(self), "convexagg": __version__}
        blob = json.dumps(settings, sort_keys=True, default=float)
        return hashlib.sha1(blob.encode()).hexdigest()[:10]

    def direct_seed(self, rep):
        """The seed of the direct methods' own randomness (saga's and LIBLINEAR's
        sample order) on split ``rep``."""
        return int(np.random.SeedSequence([self.seed, rep, 1]).generate_state(1)[0] % 2**31)


# Per-data-set settings of the paper (section 5.3): which linear base learner, gene
# selection, and the larger aggregation regularisation for glass / satimage with RBF.
DATASET_SETTINGS = {
    "all_leukemia_galgo": {"linear_base": "linsvm", "gene_selection": True},
    "all_leukemia": {"linear_base": "linsvm", "gene_selection": True},
    "gcm": {"linear_base": "linsvm", "gene_selection": True},
    "glass": {"rbf_alpha": 1e-1},
    "satimage": {"rbf_alpha": 1e-1},
}

BASE_LEARNERS = ("logreg", "linsvm", "rbfsvm")

# What :func:`metrics` measures on probabilities (besides accuracy); NaN for hard methods.
PROBABILITY_METRICS = ("mse", "log_loss", "top_label_ece", "classwise_ece")


def base_for(dataset, base):
    """The base learner actually used: ``"linear"`` means the paper's choice per data
    set (LIBSVM linear + Platt for the gene-expression sets, LIBLINEAR logistic
    regression otherwise)."""
    if base == "linear":
        return DATASET_SETTINGS.get(dataset, {}).get("linear_base", "logreg")
    if base not in BASE_LEARNERS:
        raise ValueError(f"unknown base learner {base!r}; choose from linear, {BASE_LEARNERS}.")
    return base


def aggregation_alpha(dataset, base, protocol):
    """The paper's lambda: 1e-4, except 1e-1 for glass and satimage with RBF SVMs."""
    if base == "rbfsvm":
        return DATASET_SETTINGS.get(dataset, {}).get("rbf_alpha", protocol.alpha)
    return protocol.alpha


def _param_grid(base, protocol):
    if base == "rbfsvm":
        return [{"C": c, "gamma": g} for g in protocol.gamma_grid for c in protocol.c_grid]
    return [{"C": c} for c in protocol.c_grid]


def _make_base(base, params, *, proba, random_state):
    if base == "logreg":
        return LogisticRegression(solver="liblinear", C=params["C"])
    kernel = "linear" if base == "linsvm" else "rbf"
    extra = {"gamma": params["gamma"]} if kernel == "rbf" else {}
    svm = SVC(kernel=kernel, C=params["C"], **extra)
    if not proba:  # the validation search compares accuracies: no probabilities needed
        return svm
    # Platt scaling as LIBSVM does it: a sigmoid fitted (with Platt's smoothed
    # targets) on 5-fold cross-validated decision values, the SVM itself refitted on
    # all points. (scikit-learn >= 1.9 deprecates SVC(probability=True) for this.)
    folds = StratifiedKFold(5, shuffle=True, random_state=random_state)
    return CalibratedClassifierCV(svm, method="sigmoid", cv=folds, ensemble=False)


@dataclass
class Split:
    """One repetition of the protocol, ready for the learners."""

    rep: int
    X_train: np.ndarray
    y_train: np.ndarray  # integer class indices 0..K-1
    X_test: np.ndarray
    y_test: np.ndarray
    val_mask: np.ndarray  # over the training part
    classes: np.ndarray
    n_features_used: int


def gene_ranking(X, y):
    """Dudoit et al.'s BSS/WSS ratio of every feature (larger = more discriminative)."""
    overall = X.mean(axis=0)
    bss = np.zeros(X.shape[1])
    wss = np.zeros(X.shape[1])
    for k in np.unique(y):
        Xk = X[y == k]
        mk = Xk.mean(axis=0)
        bss += Xk.shape[0] * (mk - overall) ** 2
        wss += ((Xk - mk) ** 2).sum(axis=0)
    return bss / np.maximum(wss, np.finfo(float).tiny)


def make_split(dataset, rep, protocol):
    """Cut, select genes and standardise repetition ``rep`` of ``dataset``.

    The test part is the first fold of a stratified shuffled ``n_folds`` partition
    seeded by ``(seed, rep)``; the validation part is a stratified
    ``val_fraction`` of the training part. Gene selection (BSS/WSS, top
    ``n_genes``) and standardisation are fitted on the training part only.
    """
    encoder = LabelEncoder().fit(dataset.y)
    y = encoder.transform(dataset.y)
    rs = np.random.SeedSequence([protocol.seed, rep]).generate_state(2)
    folds = StratifiedKFold(protocol.n_folds, shuffle=True, random_state=int(rs[0] % 2**31))
    with warnings.catch_warnings():
        # A class with fewer members than folds (glass: 9) is simply absent from some
        # test parts; it is always in the training part.
        warnings.filterwarnings("ignore", message="The least populated class", category=UserWarning)
        train, test = next(folds.split(dataset.X, y))
    _, val = train_test_split(
        np.arange(train.size),
        test_size=protocol.val_fraction,
        stratify=y[train],
        random_state=int(rs[1] % 2**31),
    )
    val_mask = np.zeros(train.size, dtype=bool)
    val_mask[val] = True
    X_train, X_test = dataset.X[train], dataset.X[test]
    settings = DATASET_SETTINGS.get(dataset.name, {})
    if settings.get("gene_selection") and X_train.shape[1] > protocol.n_genes:
        keep = np.sort(
            np.argsort(-gene_ranking(X_train, y[train]), kind="stable")[: protocol.n_genes]
        )
        X_train, X_test = X_train[:, keep], X_test[:, keep]
    scaler = StandardScaler().fit(X_train)
    scaler.scale_[scaler.var_ == 0] = 1.0  # constant attributes stay at 0
    return Split(
        rep=rep,
        X_train=scaler.transform(X_train),
        y_train=y[train],
        X_test=scaler.transform(X_test),
        y_test=y[test],
        val_mask=val_mask,
        classes=encoder.classes_,
        n_features_used=X_train.shape[1],
    )


def _break_ties(tied, c_ties):
    """Among parameter sets of equal validation accuracy: the largest (or smallest)
    ``C``, then the smallest RBF ``gamma`` (the smoothest kernel)."""
    sign = -1.0 if c_ties == "largest" else 1.0
    return min(tied, key=lambda p: (sign * p["C"], p.get("gamma", 0.0)))


def _tune_one(base, X, y, column, val_mask, grid, random_state, c_ties="largest"):
    """Fit binary problem ``column``: choose its parameters on the validation part,
    then refit with probabilities on the whole training part."""
    side = column[y]
    rows = side != 0
    target = (side == 1).astype(np.int64)
    if np.unique(target[rows]).size < 2:
        return ConstantBinaryPredictor().fit(None, target[rows]), None
    fit_rows, val_rows = rows & ~val_mask, rows & val_mask
    best = _break_ties(grid, c_ties)  # no validation data: the tie rule over the grid
    if len(grid) > 1 and val_rows.any() and np.unique(target[fit_rows]).size == 2:
        accs = []
        for params in grid:
            est = _make_base(base, params, proba=False, random_state=random_state)
            est.fit(X[fit_rows], target[fit_rows])
            accs.append(float(np.mean(est.predict(X[val_rows]) == target[val_rows])))
        top = max(accs)
        best = _break_ties([p for p, a in zip(grid, accs) if a == top], c_ties)
    final = _make_base(base, best, proba=True, random_state=random_state)
    return final.fit(X[rows], target[rows]), best


def fit_tuned_binaries(base, split, code, protocol, random_state=0):
    """Train the binaries of ``code`` on ``split`` with per-classifier tuning.

    Returns
    -------
    Q_train : ndarray of shape (n_train, M)
        In-sample outputs on the whole training part (what the paper's learned
        aggregation is fitted on).
    Q_test : ndarray of shape (n_test, M)
    chosen : list of dict or None
        The parameters chosen for each classifier (None for constant predictors).
    """
    grid = _param_grid(base, protocol)
    fitted = [
        _tune_one(
            base,
            split.X_train,
            split.y_train,
            code[:, l],
            split.val_mask,
            grid,
            random_state,
            protocol.c_ties,
        )
        for l in range(code.shape[1])
    ]
    estimators = [est for est, _ in fitted]
    Q_train = predict_binaries(estimators, split.X_train, "proba")
    Q_test = predict_binaries(estimators, split.X_test, "proba")
    return Q_train, Q_test, [params for _, params in fitted]


def metrics(y_true, proba=None, labels=None):
    """Accuracy, the paper's MSE (multiclass Brier score, summed over classes),
    log-loss and the top-label and classwise calibration errors (15 equal-width bins,
    :mod:`convexagg.metrics`); ``proba`` None (hard methods) leaves all but accuracy NaN.

    ``y_true`` holds class indices, ``proba`` one column per class."""
    y_true = np.asarray(y_true)
    if proba is None:
        return {"accuracy": float(np.mean(labels == y_true))} | dict.fromkeys(
            PROBABILITY_METRICS, np.nan
        )
    proba = np.asarray(proba, dtype=np.float64)
    onehot = np.zeros_like(proba)
    onehot[np.arange(y_true.size), y_true] = 1.0
    pred = np.argmax(proba, axis=1)
    p_true = proba[np.arange(y_true.size), y_true]
    classes = np.arange(proba.shape[1])
    return {
        "accuracy": float(np.mean(pred == y_true)),
        "mse": float(np.mean(np.sum((onehot - proba) ** 2, axis=1))),
        "log_loss": float(np.mean(-np.log(np.maximum(p_true, 1e-15)))),
        "top_label_ece": top_label_calibration_error(y_true, proba, labels=classes),
        "classwise_ece": classwise_calibration_error(y_true, proba, labels=classes),
    }
