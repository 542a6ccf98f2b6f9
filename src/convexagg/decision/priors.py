"""Predictions under a change of class priors (label shift).

If only the class mix changes between training and deployment (``p(x | y)``
stays), Bayes' rule gives the deployment posteriors from the training ones:
``p'(k | x) ∝ p(k | x) pi'_k / pi_k`` with ``pi`` the training and ``pi'`` the
deployment priors. For a softmax model (the convex aggregation) this is exact
and cheap: an additive shift ``log(pi'_k / pi_k)`` of the class scores -- with
class intercepts fitted, a change of the intercepts only.

The training priors ``pi`` are those the probabilities reflect. With
calibrated probabilities they are the class frequencies; the mean of the
out-of-fold probabilities (``oof_proba_``, rows the model was not trained on)
estimates them for the model as it is, and is what ``PriorShiftClassifier``
uses when the classifier has them: EM from the frequencies would take a
model's calibration error in the mean for a shift of the priors.

Unknown deployment priors are estimated from unlabelled deployment samples by
the EM algorithm of Saerens, Latinne & Decaestecker (2002), the ``EMQ`` of
QuaPy: alternate the shift above (E step) and the mean of the shifted
posteriors (M step) until the priors move less than ``tol``. That is the
maximum-likelihood estimate, and on small deployment samples it drives the
prior of a class with few samples to 0 -- and their log-loss to infinity
(QUALITY.md: on glass, letter and vowel resampled to Dirichlet(1) priors it is
worse than no adaptation at all). ``smoothing`` adds that many pseudo-samples
to every class in the M step (the MAP estimate under a Dirichlet(1 +
smoothing) prior); ``smoothing=0`` is the published algorithm.

Reference: M. Saerens, P. Latinne, C. Decaestecker. Adjusting the outputs of a
classifier to new a priori probabilities: a simple procedure. Neural
Computation 14(1), 2002.
"""

from __future__ import annotations

import warnings
from numbers import Integral, Real

import numpy as np
from scipy.special import logsumexp
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from ..validation import check_sample_weight
from ._base import DecisionClassifierBase, check_proba, out_of_fold_model

__all__ = ["PriorShiftClassifier", "check_priors", "em_priors", "shift_priors"]

# Probabilities are clipped to at least this before logs and ratios: a zero
# posterior would otherwise stay zero under any prior and stall EM on it.
PROBA_FLOOR = 1e-12


def check_priors(priors, n_classes, name="priors", positive=False):
    """Validate a probability vector over the classes.

    Parameters
    ----------
    priors : array-like of shape (n_classes,)
        Class probabilities in the order of ``classes_``.
    n_classes : int
        Number of classes.
    name : str, default="priors"
        The parameter's name, for the error messages.
    positive : bool, default=False
        Require every entry to be positive (training priors divide).

    Returns
    -------
    priors : ndarray of shape (n_classes,)
        As floats, renormalised to sum to exactly 1.

    Raises
    ------
    ValueError
        Naming ``name``: wrong length, not finite, negative (or zero with
        ``positive``), or not summing to 1 (within 1e-6).
    """
    try:
        p = np.asarray(priors, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be a numeric array; got {priors!r}.") from exc
    if p.shape != (n_classes,):
        raise ValueError(
            f"{name} must have shape ({n_classes},), one probability per class in the order "
            f"of classes_; got shape {p.shape}."
        )
    if not np.all(np.isfinite(p)) or np.any(p < 0) or (positive and np.any(p == 0)):
        kind = "positive" if positive else "non-negative"
        raise ValueError(f"{name} must hold finite, {kind} probabilities; got {p}.")
    if abs(p.sum() - 1) > 1e-6:
        raise ValueError(f"{name} must sum to 1 (a probability vector); it sums to {p.sum()}.")
    return p / p.sum()


def _log(proba):
    return np.log(np.clip(proba, PROBA_FLOOR, None))


def shift_priors(proba, training_priors, priors):
    """Shift posteriors to new class priors by Bayes' rule.

    Parameters
    ----------
    proba : array-like of shape (n_samples, n_classes)
        Posteriors under ``training_priors``.
    training_priors : array-like of shape (n_classes,)
        The class priors ``proba`` reflects (positive).
    priors : array-like of shape (n_classes,)
        The new class priors.

    Returns
    -------
    proba : ndarray of shape (n_samples, n_classes)
        ``proba * priors / training_priors``, rows renormalised.
    """
    proba = np.asarray(proba, dtype=float)
    K = proba.shape[1] if proba.ndim == 2 else -1
    log_proba = _log(check_proba(proba, K, "proba"))
    return np.exp(_shifted_log(log_proba, training_priors, priors))


def _shifted_log(log_proba, training_priors, priors):
    """Log posteriors shifted by ``log(priors / training_priors)``, renormalised."""
    K = log_proba.shape[1]
    pi = check_priors(training_priors, K, "training_priors", positive=True)
    new = check_priors(priors, K, "priors")
    with np.errstate(divide="ignore"):  # a zero deployment prior: probability 0
        scores = log_proba + np.log(new) - np.log(pi)
    return scores - logsumexp(scores, axis=1, keepdims=True)


def em_priors(
    proba, training_priors, *, smoothing=1.0, max_iter=1000, tol=1e-6, sample_weight=None
):
    """Estimate the class priors of unlabelled samples by EM (Saerens et al. 2002).

    Parameters
    ----------
    proba : array-like of shape (n_samples, n_classes)
        Posteriors of the deployment samples under ``training_priors``;
        clipped to at least 1e-12 (a zero posterior would stay zero).
    training_priors : array-like of shape (n_classes,)
        The class priors ``proba`` reflects (positive).
    smoothing : float, default=1.0
        Pseudo-samples added to every class in the M step:
        ``priors = (sum of posteriors + smoothing) / (n + n_classes * smoothing)``
        (MAP under a Dirichlet prior); 0 is the maximum-likelihood EM of
        Saerens et al., which drives rare classes' priors to 0 on small samples.
    max_iter : int, default=1000
        Most EM iterations; a :class:`~sklearn.exceptions.ConvergenceWarning`
        says when they were all used.
    tol : float, default=1e-6
        Stop when no prior moves by more than ``tol`` in an iteration.
    sample_weight : array-like of shape (n_samples,), default=None
        Weights of the samples in the M step (counts, beside ``smoothing``).

    Returns
    -------
    priors : ndarray of shape (n_classes,)
        The estimated deployment priors.
    n_iter : int
        EM iterations run.
    """
    if not (isinstance(max_iter, Integral) and max_iter >= 1):
        raise ValueError(f"max_iter must be a positive integer; got {max_iter!r}.")
    if not (isinstance(tol, Real) and tol > 0):
        raise ValueError(f"tol must be a positive number; got {tol!r}.")
    if not (isinstance(smoothing, Real) and 0 <= smoothing < np.inf):
        raise ValueError(f"smoothing must be a finite number >= 0; got {smoothing!r}.")
    proba = np.asarray(proba, dtype=float)
    K = proba.shape[1] if proba.ndim == 2 else -1
    log_proba = _log(check_proba(proba, K, "proba"))
    pi = check_priors(training_priors, K, "training_priors", positive=True)
    w = check_sample_weight(sample_weight, log_proba.shape[0])
    q = pi
    for n_iter in range(1, max_iter + 1):
        posteriors = np.exp(_shifted_log(log_proba, pi, q))  # E step
        q_new = w @ posteriors + smoothing  # M step
        q_new /= q_new.sum()
        moved = np.max(np.abs(q_new - q))
        q = q_new
        if moved <= tol:
            return q, n_iter
    warnings.warn(
        f"EM for the class priors did not converge in max_iter={max_iter} iterations (the "
        f"priors still moved by {moved:.2e} > tol={tol}); raise max_iter.",
        ConvergenceWarning,
        stacklevel=2,
    )
    return q, max_iter


class PriorShiftClassifier(DecisionClassifierBase):
    """Predictions adapted to the class priors of deployment.

    ``predict_proba`` shifts the wrapped classifier's posteriors from the
    training priors to ``priors`` by Bayes' rule (exact for a softmax model:
    an additive shift of the class scores). With ``priors="em"`` the
    deployment priors are estimated by EM (Saerens et al. 2002) on the samples
    passed to ``predict_proba`` / ``predict``: that batch *is* the deployment
    sample (transductive, as QuaPy's ``EMQ``), so predict on the whole batch
    at once; :meth:`estimate_priors` returns the estimate.

    ``fit`` fits a clone of ``estimator``; wrap a fitted classifier in
    :class:`sklearn.frozen.FrozenEstimator` to use it as it is (then pass its
    training data to ``fit``, or ``training_priors``).

    Parameters
    ----------
    estimator : classifier with predict_proba
        The classifier whose probabilities are adapted. They should be
        calibrated (EM trusts them); the convex aggregation's are.
    priors : "em" or array-like of shape (n_classes,), default="em"
        Deployment priors in the order of ``classes_`` (a probability vector;
        zeros allowed), or "em" to estimate them on each batch predicted.
    smoothing : float, default=1.0
        EM's pseudo-samples per class (:func:`em_priors`); 0 is the
        maximum-likelihood EM of Saerens et al.
    training_priors : {"auto", "oof", "frequencies"} or array-like of shape (n_classes,), \
            default="auto"
        The priors the wrapped classifier's probabilities reflect, the
        denominator of Bayes' rule and EM's starting point. ``"oof"``: the
        (weighted) mean of the estimator's out-of-fold probabilities
        (``oof_proba_`` of a convexagg classifier with ``cv`` an int or a
        splitter) -- the mean posterior on rows the model was not trained
        on. It equals the class frequencies when the probabilities are
        calibrated; where they are not (small data sets), it is the prior
        under which EM estimates no shift on data like the training data,
        and EM from the frequencies would "find" the calibration error as a
        shift (QUALITY.md measures both). ``"frequencies"``: the (weighted)
        class frequencies of ``y`` in ``fit``. ``"auto"``: ``"oof"`` when the
        estimator has out-of-fold probabilities, else ``"frequencies"``. An array: these priors.
    max_iter : int, default=1000
        Most EM iterations (``priors="em"``).
    tol : float, default=1e-6
        EM stops when no prior moves by more than ``tol``.

    Attributes
    ----------
    estimator_ : classifier
        The fitted ``estimator``.
    training_priors_ : ndarray of shape (n_classes,)
        The training priors used (per ``training_priors``).
    classes_ : ndarray of shape (n_classes,)
        The classes of ``estimator_``.
    n_features_in_ : int
        Number of features seen by ``estimator_``.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from convexagg import ConvexAggregationClassifier
    >>> from convexagg.decision import PriorShiftClassifier
    >>> X, y = load_iris(return_X_y=True)
    >>> clf = PriorShiftClassifier(
    ...     ConvexAggregationClassifier(cv="in_sample"), priors=[0.8, 0.1, 0.1]
    ... )
    >>> clf.fit(X, y).predict_proba(X[:1]).round(2)
    array([[1., 0., 0.]])
    """

    _parameter_constraints: dict = {
        **DecisionClassifierBase._parameter_constraints,
        "priors": [StrOptions({"em"}), "array-like"],
        "training_priors": [StrOptions({"auto", "oof", "frequencies"}), "array-like"],
        "smoothing": [Interval(Real, 0, None, closed="left")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="neither")],
    }

    def __init__(
        self,
        estimator,
        *,
        priors="em",
        smoothing=1.0,
        training_priors="auto",
        max_iter=1000,
        tol=1e-6,
    ):
        self.estimator = estimator
        self.priors = priors
        self.smoothing = smoothing
        self.training_priors = training_priors
        self.max_iter = max_iter
        self.tol = tol

    def fit(self, X, y, sample_weight=None):
        """Fit ``estimator`` (a no-op for a frozen one); the training priors.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training samples.
        y : array-like of shape (n_samples,)
            Class labels.
        sample_weight : array-like of shape (n_samples,), default=None
            Passed to ``estimator.fit`` when given, and weighting the training
            priors (the class frequencies or the mean out-of-fold probabilities).

        Returns
        -------
        self : object
            The fitted classifier.
        """
        self._validate_params()
        y = self._validate_y(y)
        self._check_priors(np.unique(y).size)  # before any fit
        estimator = self._fit_estimator(X, y, sample_weight)
        K = len(estimator.classes_)
        self._check_priors(K)
        if not isinstance(self.training_priors, str):
            return self
        w = check_sample_weight(sample_weight, len(y))
        model = None if self.training_priors == "frequencies" else out_of_fold_model(estimator)
        rows = None
        if model is not None:
            proba, fold = model.oof_proba_, model.oof_fold_
            if len(fold) != len(y):
                raise ValueError(
                    f"y has {len(y)} labels but the estimator was fitted on {len(fold)} "
                    "samples; with out-of-fold training priors, fit needs the data it was "
                    "fitted with."
                )
            rows = (fold >= 0) & np.all(np.isfinite(proba), axis=1) & (w > 0)
        if rows is None or not rows.any():
            if self.training_priors == "oof":
                raise ValueError(
                    "training_priors='oof' needs a convexagg CodeMatrixClassifier or "
                    "ConvexAggregationClassifier with out-of-fold probabilities (oof_proba_; "
                    "cv an int or a splitter) on rows of positive weight; use "
                    "training_priors='frequencies' or 'auto'."
                )
            model = None  # "auto" without out-of-fold probabilities: the class frequencies
        if model is not None:  # "oof", or "auto" with out-of-fold probabilities
            mean = w[rows] @ proba[rows] / w[rows].sum()
            name = "the mean out-of-fold probabilities"
        else:
            y = np.asarray(y)
            mean = np.array([w[y == c].sum() for c in estimator.classes_]) / w.sum()
            name = "the class frequencies of y"
        self.training_priors_ = check_priors(mean / mean.sum(), K, name, positive=True)
        return self

    def _check_priors(self, K):
        """``priors`` (None for "em") and ``training_priors_`` when given, validated."""
        self._priors = None if isinstance(self.priors, str) else check_priors(self.priors, K)
        if not isinstance(self.training_priors, str):
            self.training_priors_ = check_priors(
                self.training_priors, K, "training_priors", positive=True
            )

    def _log_proba(self, X):
        check_is_fitted(self, "training_priors_")
        if hasattr(self.estimator_, "predict_log_proba"):
            log_proba = np.asarray(self.estimator_.predict_log_proba(X), dtype=float)
        else:
            log_proba = _log(self._proba(X))
        return log_proba

    def estimate_priors(self, X):
        """The deployment priors used for the batch ``X``.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            The deployment samples.

        Returns
        -------
        priors : ndarray of shape (n_classes,)
            ``priors`` as given, or the EM estimate on ``X``.
        """
        return self._estimate(self._log_proba(X))

    def _estimate(self, log_proba):
        if self._priors is not None:
            return self._priors
        priors, _ = em_priors(
            np.exp(log_proba),
            self.training_priors_,
            smoothing=self.smoothing,
            max_iter=self.max_iter,
            tol=self.tol,
        )
        return priors

    def predict_log_proba(self, X):
        """Log of the class probabilities under the deployment priors.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Samples (with ``priors="em"``, the deployment sample).

        Returns
        -------
        log_proba : ndarray of shape (n_samples, n_classes)
            ``-inf`` for a class of deployment prior 0.
        """
        log_proba = self._log_proba(X)
        return _shifted_log(log_proba, self.training_priors_, self._estimate(log_proba))

    def predict_proba(self, X):
        """Class probabilities under the deployment priors.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Samples (with ``priors="em"``, the deployment sample).

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
            Columns in the order of ``classes_``; rows sum to 1.
        """
        return np.exp(self.predict_log_proba(X))

    def predict(self, X):
        """The most probable class under the deployment priors.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Samples (with ``priors="em"``, the deployment sample).

        Returns
        -------
        labels : ndarray of shape (n_samples,)
            Elements of ``classes_``.
        """
        return self.classes_[np.argmax(self.predict_log_proba(X), axis=1)]
