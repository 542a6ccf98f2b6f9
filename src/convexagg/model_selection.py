"""Choosing the regularisation strength of the convex aggregation by cross-validation."""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
from sklearn.base import _fit_context
from sklearn.model_selection import check_cv
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from .binary import binary_output_kind, fit_binaries, predict_binaries
from .codes import CODE_NAMES, make_code
from .decoders import ConvexDecoder
from .decoders.convex import PENALTIES
from .estimator import CodeMatrixClassifier
from .losses import LOSSES
from .path import regularization_path

__all__ = ["ConvexAggregationClassifierCV", "default_alphas"]


def default_alphas(n_alphas=13):
    """The default grid: ``n_alphas`` values log-spaced over ``[1e-6, 1]``.

    The paper found its method stable for ``lambda <= 1e-2`` and used ``1e-4``
    (section 5.1); the grid brackets both.
    """
    return np.logspace(-6, 0, n_alphas)


class ConvexAggregationClassifierCV(CodeMatrixClassifier):
    """Convex aggregation with ``alpha`` chosen by cross-validated log-loss.

    ``alpha`` is the paper's ``lambda`` of eq. 12 (with ``penalty="l2"``), which
    the paper set by inspecting the regularisation path (section 5.1, Fig. 3)
    and then fixed at ``1e-4``; here it is chosen from the data.

    For each fold the binary classifiers are trained **once** on the fold's
    training part; the aggregation weights are fitted, as in the paper, on the
    binaries' outputs on that same training part, along the whole regularisation
    path (:func:`~convexagg.path.regularization_path`: decreasing ``alpha``, each
    interior point solve warm-started at the previous one), and every weight
    vector is scored by the log-loss of ``softmax(-rho)`` on the fold's held-out
    part. ``alpha_`` minimises the mean over folds (ties go to the larger
    ``alpha``). The binaries and the weights at ``alpha_`` are then refitted on
    all the data.

    Parameters
    ----------
    estimator : classifier, default=None
        Binary learner, cloned for every column and fold
        (``LogisticRegression()`` when None).
    code : str or array-like, default="ovo"
        Code matrix or its name, see :class:`~convexagg.CodeMatrixClassifier`.
    alphas : int or array-like, default=13
        Grid of regularisation strengths, or its size ``n`` for
        ``np.logspace(-6, 0, n)`` (:func:`default_alphas`).
    cv : int, cross-validation generator or iterable, default=5
        Folds for choosing ``alpha`` (``StratifiedKFold`` for an int).
    loss : {"cross_entropy", "exponential", "logistic", "hinge"}, default="cross_entropy"
    tol : float, default=1e-4
        Interior point tolerance.
    max_iter : int, default=100
        Interior point iterations per ``alpha``.
    penalty : {"l2", "l1", "elasticnet"}, default="l2"
    l1_ratio : float, default=0.5
        As in :class:`~convexagg.ConvexAggregationClassifier`.
    n_jobs : int, default=None
        Jobs for training and predicting the binaries (joblib).
    random_state : int, RandomState instance or None, default=None
        Seeds random codes.

    Attributes
    ----------
    alpha_ : float
        The chosen regularisation strength.
    alphas_ : ndarray of shape (n_alphas,)
        The grid, in decreasing order (the order of the path).
    cv_scores_ : ndarray of shape (n_alphas, n_folds)
        Validation log-loss (lower is better) of every ``alpha`` on every fold.
    weights_ : ndarray of shape (n_classifiers,)
        The aggregation weights refitted at ``alpha_`` on all data.
    n_iter_ : int
        Interior point iterations of that refit.
    classes_, code_matrix_, estimators_, decoder_, binary_output_, n_features_in_
        As in :class:`~convexagg.CodeMatrixClassifier`.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from convexagg import ConvexAggregationClassifierCV
    >>> X, y = load_iris(return_X_y=True)
    >>> clf = ConvexAggregationClassifierCV(alphas=[1e-4, 1e-2, 1.0], cv=3).fit(X, y)
    >>> clf.cv_scores_.shape
    (3, 3)
    """

    _parameter_constraints = {
        "estimator": [HasMethods(["fit"]), None],
        "code": [StrOptions(set(CODE_NAMES)), "array-like"],
        "alphas": [Interval(Integral, 1, None, closed="left"), "array-like"],
        "cv": ["cv_object"],
        "loss": [StrOptions(set(LOSSES))],
        "tol": [Interval(Real, 0, None, closed="neither")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "penalty": [StrOptions(set(PENALTIES))],
        "l1_ratio": [Interval(Real, 0, 1, closed="both")],
        "n_jobs": [Integral, None],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        estimator=None,
        *,
        code="ovo",
        alphas=13,
        cv=5,
        loss="cross_entropy",
        tol=1e-4,
        max_iter=100,
        penalty="l2",
        l1_ratio=0.5,
        n_jobs=None,
        random_state=None,
    ):
        self.estimator = estimator
        self.code = code
        self.alphas = alphas
        self.cv = cv
        self.loss = loss
        self.tol = tol
        self.max_iter = max_iter
        self.penalty = penalty
        self.l1_ratio = l1_ratio
        self.n_jobs = n_jobs
        self.random_state = random_state

    def _make_decoder(self, alpha=1e-4):
        return ConvexDecoder(
            alpha=alpha,
            loss=self.loss,
            tol=self.tol,
            max_iter=self.max_iter,
            penalty=self.penalty,
            l1_ratio=self.l1_ratio,
        )

    def _alpha_grid(self):
        if isinstance(self.alphas, Integral):
            return default_alphas(self.alphas)
        alphas = np.asarray(self.alphas, dtype=np.float64).ravel()
        if alphas.size == 0 or not np.all(np.isfinite(alphas)) or alphas.min() < 0:
            raise ValueError(
                f"alphas must be an int or a non-empty array of finite values >= 0; "
                f"got {self.alphas!r}."
            )
        return alphas

    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y):
        """Choose ``alpha`` by cross-validation, then fit on all data.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)

        Returns
        -------
        self
        """
        X, y_enc, classes = self._validate_training_data(X, y)
        code = make_code(self.code, classes.size, random_state=self.random_state)
        alphas = self._alpha_grid()
        base = self._base_estimator()
        output = binary_output_kind(base)
        cv = check_cv(self.cv, y_enc, classifier=True)

        scores = []
        for train, val in cv.split(X, y_enc):
            fold_binaries = fit_binaries(base, X[train], y_enc[train], code, n_jobs=self.n_jobs)
            path = regularization_path(
                predict_binaries(fold_binaries, X[train], output, n_jobs=self.n_jobs),
                y_enc[train],
                code,
                alphas,
                Q_val=predict_binaries(fold_binaries, X[val], output, n_jobs=self.n_jobs),
                y_val=y_enc[val],
                loss=self.loss,
                output=output,
                tol=self.tol,
                penalty=self.penalty,
                l1_ratio=self.l1_ratio,
                max_iter=self.max_iter,
            )
            scores.append(path.val_log_loss)
        alphas_sorted = path.alphas
        cv_scores = np.column_stack(scores)
        alpha = float(alphas_sorted[np.argmin(cv_scores.mean(axis=1))])

        estimators = fit_binaries(base, X, y_enc, code, n_jobs=self.n_jobs)
        Q = predict_binaries(estimators, X, output, n_jobs=self.n_jobs)
        decoder = self._make_decoder(alpha).fit(Q, y_enc, code, output=output)

        self.classes_ = classes
        self.code_matrix_ = code
        self.estimators_ = estimators
        self.binary_output_ = output
        self.decoder_ = decoder
        self.alpha_ = alpha
        self.alphas_ = alphas_sorted
        self.cv_scores_ = cv_scores
        return self

    @property
    def weights_(self):
        check_is_fitted(self)
        return self.decoder_.weights_

    @property
    def n_iter_(self):
        check_is_fitted(self)
        return self.decoder_.n_iter_
