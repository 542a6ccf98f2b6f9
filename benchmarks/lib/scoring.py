"""Scoring a method's test probabilities, and one fit-predict-score run of it on a split."""

from __future__ import annotations

import time
import warnings

import numpy as np


def scores(y_test, proba, classes):
    from sklearn.metrics import log_loss

    from convexagg.metrics import classwise_calibration_error, top_label_calibration_error

    onehot = (y_test[:, None] == classes[None, :]).astype(float)
    proba = np.clip(proba, 0.0, 1.0)
    return {
        "accuracy": float(np.mean(classes[np.argmax(proba, axis=1)] == y_test)),
        "brier": float(np.mean(np.sum((onehot - proba) ** 2, axis=1))),
        "log_loss": float(log_loss(y_test, proba, labels=classes)),
        "ece_top": float(top_label_calibration_error(y_test, proba, labels=classes)),
        "ece_classwise": float(classwise_calibration_error(y_test, proba, labels=classes)),
    }


def run_one(name, make, X_tr, y_tr, X_te, y_te, seed):
    """Fit, predict and score one method on one split; an error is recorded, not raised."""
    estimator = make(seed)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t0 = time.perf_counter()
            estimator.fit(X_tr, y_tr)
            fit_s = time.perf_counter() - t0
            t0 = time.perf_counter()
            proba = estimator.predict_proba(X_te)
            predict_s = time.perf_counter() - t0
    except Exception as exc:  # noqa: BLE001 - a failure is a result to report
        return {"error": f"{type(exc).__name__}: {exc}"[:300]}
    record = scores(y_te, proba, estimator.classes_)
    record.update(fit_s=fit_s, predict_s=predict_s)
    return record


def measure(store, method, family, make, dataset, rep, split, n_classes):
    """``method``'s record on split ``rep`` of ``dataset`` (``split``: ``X_tr, y_tr, X_te,
    y_te``), with ``seed=rep``: the one in ``store`` if its training part had as many rows
    (another subsample makes another training part), else a new run, put into ``store``.
    Returns ``(record, new)``."""
    X_tr, y_tr, X_te, y_te = split
    old = store.get(dataset, rep, method)
    if old is not None and old["n_train"] == len(y_tr):
        return old, False
    record = run_one(method, make, X_tr, y_tr, X_te, y_te, seed=rep)
    record.update(dataset=dataset, rep=rep, method=method, family=family)
    record.update(n_train=int(len(y_tr)), n_classes=int(n_classes))
    store.put(record)
    return record, True
