"""Conformal class sets: sets of classes that hold the true class with
probability at least ``1 - error_rate`` on exchangeable data.

A *score* says how strange class ``y`` is for a sample (larger: stranger):

* ``"lac"`` (least ambiguous set-valued classifier; Sadinle, Lei & Wasserman
  2019): ``1 - p_y``; the smallest sets on average;
* ``"aps"`` (adaptive prediction sets; Romano, Sesia & Candès 2020): the
  probability mass of the classes more probable than ``y`` plus a uniform
  share of ``p_y``, ``sum_{j: p_j > p_y} p_j + u p_y`` with ``u ~ U(0, 1)``
  drawn per sample; larger sets where the model is unsure. The randomisation
  is what makes it exact: with ``u = 1`` (the whole ``p_y``) a confident
  model's correct calibration samples all score about 1, and the sets come
  out both larger and, for the most confident samples, empty (measured:
  segment, 2.4 classes per set against 1.2 for the randomised score).

The p-value of class ``y`` for a new sample compares its score with the scores
of calibration samples at their true class:
``p(y) = (1 + #{i: s_i >= s(x, y)}) / (n + 1)``, and the set is
``{y: p(y) > error_rate}``. With one calibration set (split conformal) this is
the rule "score at most the ``ceil((n + 1)(1 - error_rate))``-th smallest
calibration score" (MAPIE's and the textbook's), coverage at least
``1 - error_rate``. Cross-conformal (Vovk 2015) sums the counts over the folds,
each fold's calibration scores against the test scores of the model not
trained on that fold: the convex aggregation's default ``cv=5`` ensemble keeps
both, so the calibration costs no fit. Its guarantee is weaker
(``1 - 2 error_rate`` in the worst case; Barber et al. 2021) but its coverage
is close to ``1 - error_rate`` in practice (QUALITY.md measures it). With
``class_conditional=True`` (Mondrian) the counts use only the calibration
samples of class ``y``, so the coverage holds within each class.

References: V. Vovk. Cross-conformal predictors. Annals of Mathematics and
Artificial Intelligence 74, 2015. Y. Romano, M. Sesia, E. Candès.
Classification with valid and adaptive coverage. NeurIPS 2020. M. Sadinle,
J. Lei, L. Wasserman. Least ambiguous set-valued classifiers with bounded
error levels. JASA 114, 2019.
"""

from __future__ import annotations

from numbers import Real

import numpy as np
from sklearn.frozen import FrozenEstimator
from sklearn.model_selection import train_test_split
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from .._sklearn import num_samples
from ._base import DecisionClassifierBase, check_proba, out_of_fold_model

__all__ = ["SCORES", "ConformalClassifier", "class_scores", "conformal_pvalues"]

SCORES = ("lac", "aps")


def class_scores(proba, score="lac", u=None):
    """The nonconformity score of every class for every sample.

    Parameters
    ----------
    proba : array-like of shape (n_samples, n_classes)
        Class probabilities.
    score : {"lac", "aps"}, default="lac"
        ``"lac"``: ``1 - p_y``; ``"aps"``: ``sum_{j: p_j > p_y} p_j + u p_y``.
    u : array-like of shape (n_samples,), default=None
        APS's uniform draws, one per sample (shared by its classes); None
        is ``u = 1``, the non-randomised score. Ignored by LAC.

    Returns
    -------
    scores : ndarray of shape (n_samples, n_classes)
        Larger means stranger.
    """
    P = np.asarray(proba, dtype=float)
    if score == "lac":
        return 1.0 - P
    if score == "aps":
        # mass strictly above p_y, then p_y: sort once, cumulate, read back per class
        order = np.argsort(-P, axis=1, kind="stable")
        sorted_P = np.take_along_axis(P, order, axis=1)
        above = np.cumsum(sorted_P, axis=1) - sorted_P  # strictly before in the order
        # ties: classes of equal probability share the mass of the first of them
        first = np.maximum.accumulate(
            np.where(np.diff(sorted_P, axis=1, prepend=np.inf) != 0, np.arange(P.shape[1]), 0),
            axis=1,
        )
        above = np.take_along_axis(above, first, axis=1)
        scores = np.empty_like(P)
        share = 1.0 if u is None else np.asarray(u, dtype=float)[:, None]
        np.put_along_axis(scores, order, above + share * sorted_P, axis=1)
        return scores
    raise ValueError(f"score must be one of {SCORES}; got {score!r}.")


def conformal_pvalues(test_scores, calibration_scores, calibration_groups, calibration_labels=None):
    """Conformal p-values of every class, from calibration scores in groups.

    Parameters
    ----------
    test_scores : ndarray of shape (n_groups, n_samples, n_classes)
        The test samples' scores of every class, from the model of each group
        (one group: split conformal; a fold each: cross-conformal).
    calibration_scores : ndarray of shape (n_calibration,)
        The calibration samples' scores at their true class.
    calibration_groups : ndarray of shape (n_calibration,)
        The group (0 .. n_groups - 1) whose model scored each calibration sample.
    calibration_labels : ndarray of shape (n_calibration,), default=None
        Class indices of the calibration samples: class-conditional (Mondrian)
        p-values; None for marginal ones.

    Returns
    -------
    pvalues : ndarray of shape (n_samples, n_classes)
        ``(1 + #{i: s_i >= s(x, y)}) / (n + 1)``, the count summed over the
        groups (and ``n`` the calibration samples of class ``y`` with labels).
    """
    n_groups, n, K = test_scores.shape
    counts = np.zeros((n, K))
    totals = np.zeros(K)
    for g in range(n_groups):
        in_group = calibration_groups == g
        for k in range(K) if calibration_labels is not None else [None]:
            rows = in_group if k is None else in_group & (calibration_labels == k)
            cal = np.sort(calibration_scores[rows])
            cols = slice(None) if k is None else k
            t = test_scores[g][:, cols]
            counts[:, cols] += cal.size - np.searchsorted(cal, t, side="left")
            totals[cols] += cal.size
    return (1.0 + counts) / (1.0 + totals)


class ConformalClassifier(DecisionClassifierBase):
    """Conformal class sets at a chosen error rate, from one fitted classifier.

    ``predict_set`` returns, for each sample, the classes whose conformal
    p-value exceeds ``error_rate``; on exchangeable data the set holds the
    true class with probability at least ``1 - error_rate`` (split) or close
    to it (cross-conformal). ``predict`` and ``predict_proba`` are the wrapped
    classifier's.

    Parameters
    ----------
    estimator : classifier with predict_proba
        The classifier. With ``cv="out_of_fold"``, a
        :class:`~convexagg.CodeMatrixClassifier` or
        :class:`~convexagg.ConvexAggregationClassifier` with out-of-fold
        outputs kept as an ensemble (the default ``cv=5``); fitted here, or
        wrapped fitted in :class:`sklearn.frozen.FrozenEstimator` (then ``fit``
        must get the data it was fitted with).
    error_rate : float, default=0.1
        The miscoverage allowed, in (0, 1): sets miss the true class with
        probability at most about ``error_rate``.
    conformity_score : {"lac", "aps"}, default="lac"
        The nonconformity score (module docstring; MAPIE's name): ``"lac"`` gives the
        smallest sets, ``"aps"`` (randomised) sets that adapt to the sample's
        difficulty. Either may give an empty set.
    cv : "out_of_fold", "prefit" or float, default="out_of_fold"
        Where the calibration scores come from. ``"out_of_fold"``:
        cross-conformal, from the estimator's out-of-fold probabilities
        (``oof_proba_``) and its fold members, at no extra fit.
        ``"prefit"``: split conformal; ``estimator`` is already fitted and the
        data passed to ``fit`` is the held-out calibration set (as in
        scikit-learn's ``TunedThresholdClassifierCV``). A float in (0, 1):
        split conformal; that share of the data passed to ``fit`` (stratified)
        is held out for calibration and a clone of ``estimator`` is fitted on
        the rest.
    class_conditional : bool, default=False
        Mondrian sets: calibrate each class on its own samples, so that the
        coverage holds within every class (larger sets for hard classes).
    random_state : int, RandomState instance or None, default=0
        The held-out split of a float ``cv``, and APS's uniform draws: those of
        the calibration samples, and a seed for those of the samples predicted
        (the same on every call; a sample's draw depends on its row in ``X``).
        Fixed by default so that the same data gives the same model; None for
        a fresh draw.

    Attributes
    ----------
    estimator_ : classifier
        The fitted ``estimator``.
    calibration_scores_ : ndarray of shape (n_calibration,)
        The calibration samples' scores at their true class.
    calibration_labels_ : ndarray of shape (n_calibration,)
        Their classes, as indices into ``classes_``.
    calibration_groups_ : ndarray of shape (n_calibration,)
        The fold whose model scored each (0 for split conformal).
    classes_ : ndarray of shape (n_classes,)
        The classes of ``estimator_``.
    n_features_in_ : int
        Number of features seen by ``estimator_``.

    Notes
    -----
    Sample weights (``fit(X, y, sample_weight)``) weight the estimator's fit,
    not the calibration: the guarantee is about unweighted exchangeable draws.
    With ``cv="out_of_fold"``, the aggregation behind ``oof_proba_`` is
    either the decoder fitted on the calibration rows' out-of-fold outputs
    too (few weights: close to held-out), or, where a penalty of the
    aggregation is chosen by cross-validation (the default's zero entries),
    its fits on the other folds' rows: held out, but weaker than the final
    aggregation, so the sets err on the large side. The measured coverage
    is in QUALITY.md.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from convexagg import ConvexAggregationClassifier
    >>> from convexagg.decision import ConformalClassifier
    >>> X, y = load_iris(return_X_y=True)
    >>> clf = ConformalClassifier(ConvexAggregationClassifier(), error_rate=0.1)
    >>> clf.fit(X, y).predict_set(X[:2])
    array([[ True, False, False],
           [ True, False, False]])
    """

    _parameter_constraints: dict = {
        **DecisionClassifierBase._parameter_constraints,
        "error_rate": [Interval(Real, 0, 1, closed="neither")],
        "conformity_score": [StrOptions(set(SCORES))],
        "cv": [StrOptions({"out_of_fold", "prefit"}), Interval(Real, 0, 1, closed="neither")],
        "class_conditional": ["boolean"],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        estimator,
        *,
        error_rate=0.1,
        conformity_score="lac",
        cv="out_of_fold",
        class_conditional=False,
        random_state=0,
    ):
        self.estimator = estimator
        self.error_rate = error_rate
        self.conformity_score = conformity_score
        self.cv = cv
        self.class_conditional = class_conditional
        self.random_state = random_state

    def fit(self, X, y, sample_weight=None):
        """Fit the estimator (per ``cv``) and compute the calibration scores.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training samples (``cv="prefit"``: the calibration samples).
        y : array-like of shape (n_samples,)
            Class labels.
        sample_weight : array-like of shape (n_samples,), default=None
            Passed to ``estimator.fit`` when it is fitted here.

        Returns
        -------
        self : object
            The fitted classifier.

        Raises
        ------
        ValueError
            ``cv="out_of_fold"`` with an estimator without out-of-fold
            members; too few calibration samples for ``error_rate`` (a set
            would then hold every class).
        """
        self._validate_params()
        y = self._validate_y(y)
        if self.cv == "out_of_fold":
            self._fit_estimator(X, y, sample_weight)
            model = self._fitted_model()
            proba, groups = model.oof_proba_, model.oof_fold_
            rows = np.flatnonzero((groups >= 0) & np.all(np.isfinite(proba), axis=1))
            if len(y) != len(groups):
                raise ValueError(
                    f"y has {len(y)} labels but the estimator was fitted on {len(groups)} "
                    "samples; with cv='out_of_fold', fit needs the data it was fitted with."
                )
            proba, y, groups = proba[rows], y[rows], groups[rows]
        else:
            if self.cv == "prefit":
                check_is_fitted(self.estimator)
                self.estimator_ = self.estimator
                X_cal, y_cal = X, y
            else:
                split = train_test_split(
                    X,
                    y,
                    *(() if sample_weight is None else (sample_weight,)),
                    test_size=self.cv,
                    stratify=y,
                    random_state=self.random_state,
                )
                X_fit, X_cal, y_fit, y_cal = split[:4]
                self._fit_estimator(X_fit, y_fit, None if sample_weight is None else split[4])
            proba, y = self._proba(X_cal), y_cal
            groups = np.zeros(len(y), dtype=int)
        labels = np.searchsorted(self.classes_, y)
        if np.any(labels >= len(self.classes_)) or np.any(self.classes_[labels] != y):
            raise ValueError("y holds labels that the estimator's classes_ do not.")
        rng = check_random_state(self.random_state)
        u = rng.uniform(size=len(y)) if self.conformity_score == "aps" else None
        self._predict_seed = rng.randint(np.iinfo(np.int32).max)  # test draws: another stream
        scores = class_scores(proba, self.conformity_score, u)
        self.calibration_scores_ = scores[np.arange(len(y)), labels]
        self.calibration_labels_ = labels
        self.calibration_groups_ = groups
        self._check_size()
        return self

    def _fitted_model(self):
        """The fitted convexagg classifier behind ``estimator_`` (frozen or not), checked
        for out-of-fold members."""
        model = out_of_fold_model(self.estimator_)
        if model is None:
            model = self.estimator_
            if isinstance(model, FrozenEstimator):
                model = model.estimator
            raise ValueError(
                "cv='out_of_fold' needs a convexagg CodeMatrixClassifier or "
                "ConvexAggregationClassifier that keeps its out-of-fold members (cv an int or a "
                f"splitter, ensemble=True or 'auto'); {type(model).__name__} has none. Use "
                "cv='prefit' with a held-out calibration set, or a float cv."
            )
        return model

    def _check_size(self):
        """Refuse calibration sets too small for ``error_rate``: every p-value would be
        at least ``1 / (n + 1) > error_rate``, so every set every class."""
        counts = (
            np.bincount(self.calibration_labels_, minlength=len(self.classes_))
            if self.class_conditional
            else np.array([len(self.calibration_labels_)])
        )
        n = counts.min()
        if (n + 1) * self.error_rate <= 1:
            where = "in the smallest class " if self.class_conditional else ""
            raise ValueError(
                f"error_rate={self.error_rate} needs more than {1 / self.error_rate - 1:.0f} "
                f"calibration samples {where}(n + 1 > 1 / error_rate); there are {n}. Every set "
                "would hold every class: use more calibration data or a larger error_rate."
            )

    def _test_scores(self, X):
        """``(n_groups, n_samples, n_classes)``: each group's model's scores of ``X``."""
        check_is_fitted(self, "calibration_scores_")
        u = None
        if self.conformity_score == "aps":  # one draw per sample, shared by every fold
            u = np.random.RandomState(self._predict_seed).uniform(size=num_samples(X))
        if self.cv != "out_of_fold":
            return class_scores(self._proba(X), self.conformity_score, u)[np.newaxis]
        model = self._fitted_model()
        K = len(self.classes_)
        return np.stack(
            [
                class_scores(
                    check_proba(model.decoder_.predict_proba(Q), K, "the decoder's predict_proba"),
                    self.conformity_score,
                    u,
                )
                for Q in model._member_outputs(X)
            ]
        )

    def predict_pvalues(self, X):
        """Conformal p-value of every class.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Samples.

        Returns
        -------
        pvalues : ndarray of shape (n_samples, n_classes)
            In ``(0, 1]``; the set at error rate ``e`` is ``pvalues > e``.
        """
        labels = self.calibration_labels_ if self.class_conditional else None
        return conformal_pvalues(
            self._test_scores(X), self.calibration_scores_, self.calibration_groups_, labels
        )

    def predict_set(self, X):
        """Conformal class sets at ``error_rate``.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Samples.

        Returns
        -------
        sets : ndarray of bool of shape (n_samples, n_classes)
            ``sets[i, k]``: class ``classes_[k]`` is in sample ``i``'s set.
        """
        return self.predict_pvalues(X) > self.error_rate

    def predict(self, X):
        """The wrapped classifier's predictions.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Samples.

        Returns
        -------
        labels : ndarray of shape (n_samples,)
            Elements of ``classes_``.
        """
        check_is_fitted(self, "estimator_")
        return self.estimator_.predict(X)
