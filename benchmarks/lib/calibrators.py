"""Post-hoc multiclass calibrators of the quality benchmark (benchmark-only dependencies).

Not part of the library. ``dirichletcal`` (Kull et al., NeurIPS 2019) and
``probmetrics`` (Berta et al., AISTATS 2026) are the ``bench`` extra; both map a
probability matrix ``P`` (rows summing to one) and integer labels ``0..K-1`` to
calibrated probabilities.

* :func:`dirichlet`: ``FullDirichletCalibrator`` with its L2 strength chosen
  from ``1e-1 .. 1e-5`` by 3-fold stratified cross-validated log-loss on the
  calibration rows, as the package's own example does (``GridSearchCV`` over
  ``reg_lambda`` with ``reg_mu=None``; written out here so that a fold whose
  fitting part lacks a class is skipped instead of failing). Its Newton
  solver's functions are compiled with ``jax.jit`` (:func:`_jit_dirichletcal`).
* :func:`matrix_scaling`: ``SMSCalibrator()`` (structured matrix scaling: the
  authors' defaults, ridge penalties, temperature scaling first).
* :func:`temperature`: ``TemperatureScalingCalibrator()`` of ``probmetrics``.

Two ways to use one:

* :class:`InnerFoldCalibrated`: the protocol of Kull et al.'s classical-model
  study: the training part split into 3 stratified folds, the model trained on
  two and the calibrator fitted on the third's predictions, the 3 calibrated
  models' test probabilities averaged.
* :class:`CalibratedOnOwnOOF`: the "left to calibrate" check: the model fitted
  on the whole training part (its test probabilities unchanged), the
  calibrator fitted on its 3-fold out-of-fold probabilities
  (``cross_val_predict``) and applied to them.
"""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.model_selection import StratifiedKFold, cross_val_predict
from sklearn.preprocessing import LabelEncoder

INNER_FOLDS = 3
DIRICHLET_L2 = (1e-1, 1e-2, 1e-3, 1e-4, 1e-5)
EPS = 1e-12


def _log_loss(P, y):
    return float(-np.mean(np.log(np.clip(P[np.arange(len(y)), y], EPS, 1.0))))


def _renormalise(P):
    """Rows clipped away from 0 and summing to 1 (the calibrators validate their input)."""
    P = np.clip(np.asarray(P, dtype=np.float64), EPS, 1.0)
    return P / P.sum(axis=1, keepdims=True)


_JITTED = []


def _jit_dirichletcal():
    """Compile ``dirichletcal``'s objective, gradient and Hessian with ``jax.jit``.

    The package evaluates them eagerly, op by op, inside its Newton loop and line
    search: 2 to 40 s per calibrator fit on this machine (each new row count
    recompiles every op). Compiled, the same functions with the same arguments
    run the same Newton iterations (float64) in well under a second after one
    compilation per shape. The static arguments are the class count, the method
    and the regularisation's format.
    """
    if _JITTED:
        return
    import jax
    from dirichletcal.calib import multinomial

    objective = multinomial._objective
    static = (4, 5, 7, 8, 9, 10)  # k, method, reg_mu, ref_row, initializer, reg_format
    multinomial._objective = jax.jit(objective, static_argnums=static)
    multinomial._gradient = jax.jit(jax.grad(objective, argnums=0), static_argnums=static)
    multinomial._hessian = jax.jit(jax.hessian(objective, argnums=0), static_argnums=static)
    _JITTED.append(True)


RESIDENT_LIMIT = 2.5 * 2**30


def _clear_jax_caches():
    """Drop the compiled functions once the process holds more than 2.5 GiB: every row
    count compiles anew, and a run over the suite kept them all (4.3 GB resident).
    Clearing after every fit instead makes each fit recompile (10x slower)."""
    import os

    import jax

    with open("/proc/self/statm") as fh:
        resident = int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    if resident > RESIDENT_LIMIT:
        jax.clear_caches()


class _Dirichlet:
    """Full Dirichlet calibration, L2 strength by inner 3-fold log-loss."""

    def fit(self, P, y):
        from dirichletcal.calib.fulldirichlet import FullDirichletCalibrator

        _jit_dirichletcal()

        k = P.shape[1]
        folds = StratifiedKFold(INNER_FOLDS, shuffle=True, random_state=0)
        losses = []
        for reg in DIRICHLET_L2:
            fold_losses = []
            for fit_idx, val_idx in folds.split(P, y):
                if len(np.unique(y[fit_idx])) < k:
                    continue  # a class of fewer rows than folds: this fold cannot fit K classes
                cal = FullDirichletCalibrator(reg_lambda=reg, reg_mu=None)
                cal.fit(P[fit_idx], y[fit_idx])
                fold_losses.append(_log_loss(cal.predict_proba(P[val_idx]), y[val_idx]))
            losses.append(np.mean(fold_losses) if fold_losses else np.inf)
        self.reg_lambda_ = DIRICHLET_L2[int(np.argmin(losses))]
        self.calibrator_ = FullDirichletCalibrator(reg_lambda=self.reg_lambda_, reg_mu=None)
        self.calibrator_.fit(P, y)
        _clear_jax_caches()
        return self

    def predict_proba(self, P):
        return self.calibrator_.predict_proba(P)


class _Probmetrics:
    def __init__(self, make):
        self.make = make

    def fit(self, P, y):
        self.calibrator_ = self.make().fit(P, y)
        return self

    def predict_proba(self, P):
        return np.asarray(self.calibrator_.predict_proba(P))


def dirichlet():
    return _Dirichlet()


def matrix_scaling():
    from probmetrics.calibrators.logistic import SMSCalibrator

    return _Probmetrics(lambda: SMSCalibrator(print_init_info=False))


def temperature():
    from probmetrics.calibrators.temperature_scaling import TemperatureScalingCalibrator

    return _Probmetrics(TemperatureScalingCalibrator)


def _check_all_classes(y, k, where):
    if len(np.unique(y)) < k:
        raise ValueError(f"{where} lacks a class: {np.bincount(y, minlength=k).tolist()}")


class InnerFoldCalibrated(ClassifierMixin, BaseEstimator):
    """``estimator`` + ``calibrator`` the way Kull et al. (2019) fit it: 3 inner folds.

    Parameters
    ----------
    estimator : classifier
        The model to calibrate.
    calibrator : callable
        Makes a fresh calibrator (:func:`dirichlet`, :func:`matrix_scaling`, ...).
    random_state : int, default=0
        Seeds the inner folds.
    """

    def __init__(self, estimator, calibrator, random_state=0):
        self.estimator = estimator
        self.calibrator = calibrator
        self.random_state = random_state

    def fit(self, X, y):
        self.encoder_ = LabelEncoder().fit(y)
        self.classes_ = self.encoder_.classes_
        yi = self.encoder_.transform(y)
        k = len(self.classes_)
        folds = StratifiedKFold(INNER_FOLDS, shuffle=True, random_state=self.random_state)
        self.pairs_ = []
        for fit_idx, cal_idx in folds.split(X, yi):
            _check_all_classes(yi[fit_idx], k, "an inner training fold")
            _check_all_classes(yi[cal_idx], k, "an inner calibration fold")
            model = clone(self.estimator).fit(X[fit_idx], yi[fit_idx])
            cal = self.calibrator().fit(_renormalise(model.predict_proba(X[cal_idx])), yi[cal_idx])
            self.pairs_.append((model, cal))
        return self

    def predict_proba(self, X):
        return np.mean(
            [cal.predict_proba(_renormalise(m.predict_proba(X))) for m, cal in self.pairs_], axis=0
        )


class CalibratedOnOwnOOF(ClassifierMixin, BaseEstimator):
    """``estimator`` fitted on all rows, ``calibrator`` on its 3-fold out-of-fold probabilities.

    Parameters
    ----------
    estimator : classifier
        The model to check (deterministic given its ``random_state``, so its test
        probabilities are those of its own record).
    calibrator : callable
        Makes a fresh calibrator.
    random_state : int, default=0
        Seeds the folds of ``cross_val_predict``.
    """

    def __init__(self, estimator, calibrator, random_state=0):
        self.estimator = estimator
        self.calibrator = calibrator
        self.random_state = random_state

    def fit(self, X, y):
        self.encoder_ = LabelEncoder().fit(y)
        self.classes_ = self.encoder_.classes_
        yi = self.encoder_.transform(y)
        folds = StratifiedKFold(INNER_FOLDS, shuffle=True, random_state=self.random_state)
        oof = cross_val_predict(clone(self.estimator), X, yi, cv=folds, method="predict_proba")
        self.model_ = clone(self.estimator).fit(X, yi)
        self.calibrator_ = self.calibrator().fit(_renormalise(oof), yi)
        return self

    def predict_proba(self, X):
        return self.calibrator_.predict_proba(_renormalise(self.model_.predict_proba(X)))
