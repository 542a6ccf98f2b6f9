"""Cost-sensitive decisions: for each sample, the class of least expected cost.

Convention (MATLAB's ``fitcecoc`` ``'Cost'``, the layout of scikit-learn's
confusion matrix): ``cost_matrix[i, j]`` is the cost of predicting class ``j``
when the true class is ``i``, rows and columns in the order of ``classes_``.
The expected cost of predicting ``j`` is ``sum_i p_i cost_matrix[i, j]``, i.e.
``proba @ cost_matrix``, and the decision is its argmin (ties: the first class,
as ``argmax`` breaks them). Under the 0-1 cost (``1 - eye``) it is ``predict``.

Entries must be finite and non-negative. A nonzero diagonal is allowed (a
correct decision can cost something, e.g. a treatment): adding a constant to a
row changes every decision's expected cost by the same ``p_i * constant``, so
only the differences within a row matter. An all-zero matrix is refused: it
makes every decision equal.
"""

from __future__ import annotations

import numpy as np

from ._base import DecisionClassifierBase, check_proba

__all__ = ["CostSensitiveClassifier", "check_cost_matrix", "expected_costs", "min_cost_decision"]


def check_cost_matrix(cost_matrix, n_classes, name="cost_matrix"):
    """Validate a cost matrix.

    Parameters
    ----------
    cost_matrix : array-like of shape (n_classes, n_classes)
        ``cost_matrix[i, j]``: the cost of predicting class ``j`` when the true
        class is ``i``.
    n_classes : int
        Number of classes.
    name : str, default="cost_matrix"
        The parameter's name, for the error messages.

    Returns
    -------
    cost_matrix : ndarray of shape (n_classes, n_classes)
        As floats.

    Raises
    ------
    ValueError
        Naming ``name``: not square of side ``n_classes``, not finite,
        negative, or all zero.
    """
    try:
        C = np.asarray(cost_matrix, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be a numeric array; got {cost_matrix!r}.") from exc
    if C.shape != (n_classes, n_classes):
        raise ValueError(
            f"{name} must have shape ({n_classes}, {n_classes}): rows the true class, "
            f"columns the predicted class, in the order of classes_; got shape {C.shape}."
        )
    if not np.all(np.isfinite(C)):
        raise ValueError(f"{name} must be finite; it holds NaN or infinite entries.")
    if np.any(C < 0):
        i, j = np.argwhere(C < 0)[0]
        raise ValueError(f"{name} must be non-negative; {name}[{i}, {j}] = {C[i, j]}.")
    if not np.any(C):
        raise ValueError(f"{name} is all zero: every decision would cost the same.")
    return C


def expected_costs(proba, cost_matrix):
    """Expected cost of predicting each class.

    Parameters
    ----------
    proba : array-like of shape (n_samples, n_classes)
        Class probabilities.
    cost_matrix : array-like of shape (n_classes, n_classes)
        ``cost_matrix[i, j]``: the cost of predicting ``j`` when the truth is ``i``.

    Returns
    -------
    costs : ndarray of shape (n_samples, n_classes)
        ``costs[s, j] = sum_i proba[s, i] * cost_matrix[i, j]``.
    """
    proba = np.asarray(proba, dtype=float)
    n_classes = proba.shape[1] if proba.ndim == 2 else -1
    C = check_cost_matrix(cost_matrix, n_classes)
    return check_proba(proba, C.shape[0], "proba") @ C


def min_cost_decision(proba, cost_matrix):
    """Index of the class of least expected cost, per sample.

    Parameters
    ----------
    proba : array-like of shape (n_samples, n_classes)
        Class probabilities.
    cost_matrix : array-like of shape (n_classes, n_classes)
        ``cost_matrix[i, j]``: the cost of predicting ``j`` when the truth is ``i``.

    Returns
    -------
    decision : ndarray of shape (n_samples,)
        Class indices (the first class on ties).
    """
    return np.argmin(expected_costs(proba, cost_matrix), axis=1)


class CostSensitiveClassifier(DecisionClassifierBase):
    """Predict the class of least expected cost under ``predict_proba``.

    A wrapper in the manner of scikit-learn's ``FixedThresholdClassifier``:
    ``fit`` fits a clone of ``estimator``; wrap a fitted classifier in
    :class:`sklearn.frozen.FrozenEstimator` to use it as it is. The cost matrix
    is a constructor parameter, so grid searches, pipelines and scorers see an
    ordinary classifier (see the user guide, "From probabilities to decisions").

    Parameters
    ----------
    estimator : classifier with predict_proba
        The classifier whose probabilities are acted on.
    cost_matrix : array-like of shape (n_classes, n_classes)
        ``cost_matrix[i, j]``: the cost of predicting class ``j`` when the true
        class is ``i`` (order of ``classes_``); finite, non-negative, not all
        zero. A nonzero diagonal is allowed.

    Attributes
    ----------
    estimator_ : classifier
        The fitted ``estimator``.
    cost_matrix_ : ndarray of shape (n_classes, n_classes)
        The validated cost matrix.
    classes_ : ndarray of shape (n_classes,)
        The classes of ``estimator_``.
    n_features_in_ : int
        Number of features seen by ``estimator_``.

    See Also
    --------
    convexagg.metrics.expected_cost_score : Mean realised cost of decisions.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from convexagg import ConvexAggregationClassifier
    >>> from convexagg.decision import CostSensitiveClassifier
    >>> X, y = load_iris(return_X_y=True)
    >>> C = [[0, 1, 1], [1, 0, 10], [1, 1, 0]]  # versicolor called virginica: 10
    >>> clf = CostSensitiveClassifier(ConvexAggregationClassifier(cv="in_sample"), cost_matrix=C)
    >>> clf.fit(X, y).predict(X[:3])
    array([0, 0, 0])
    """

    _parameter_constraints: dict = {
        **DecisionClassifierBase._parameter_constraints,
        "cost_matrix": ["array-like"],
    }

    def __init__(self, estimator, *, cost_matrix):
        self.estimator = estimator
        self.cost_matrix = cost_matrix

    def fit(self, X, y, sample_weight=None):
        """Fit ``estimator`` (a no-op for a frozen one) and check the cost matrix.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training samples.
        y : array-like of shape (n_samples,)
            Class labels.
        sample_weight : array-like of shape (n_samples,), default=None
            Passed to ``estimator.fit`` when given.

        Returns
        -------
        self : object
            The fitted classifier.
        """
        self._validate_params()
        y = self._validate_y(y)
        if np.unique(y).size > 1:  # before any fit (one class: the estimator says so)
            check_cost_matrix(self.cost_matrix, np.unique(y).size)
        estimator = self._fit_estimator(X, y, sample_weight)
        self.cost_matrix_ = check_cost_matrix(self.cost_matrix, len(estimator.classes_))
        return self

    def predict_costs(self, X):
        """Expected cost of predicting each class.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Samples.

        Returns
        -------
        costs : ndarray of shape (n_samples, n_classes)
            ``predict_proba(X) @ cost_matrix_``.
        """
        return self._proba(X) @ self.cost_matrix_

    def predict(self, X):
        """The class of least expected cost.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Samples.

        Returns
        -------
        labels : ndarray of shape (n_samples,)
            Elements of ``classes_``.
        """
        return self.classes_[np.argmin(self.predict_costs(X), axis=1)]
