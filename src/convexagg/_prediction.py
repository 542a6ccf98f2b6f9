"""Prediction of :class:`~convexagg.CodeMatrixClassifier` on NumPy, Dask and array-API inputs.

Every prediction method -- ``predict_binary_proba``, ``predict_proba``,
``predict_log_proba``, ``decision_function``, ``predict`` -- goes through one
dispatch, :meth:`CodeMatrixPrediction._predict`: a Dask array is mapped lazily
over its row blocks, an array-API ``X`` predicted on its device, anything else
on the host.
"""

from __future__ import annotations

import copy

import numpy as np
from scipy.special import logsumexp
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted

from ._array_api import array_namespace
from ._dask import is_dask_array, map_row_blocks
from .binary import predict_binaries, predict_binaries_on_device
from .linear_outputs import log_odds_input, predict_log_odds

__all__ = ["CodeMatrixPrediction"]


class _BlockMethod:
    """Picklable ``X -> estimator.method(X)`` for ``map_blocks``: runs on a Dask worker
    on one in-memory block of rows.

    The binaries of a block run one after the other (``n_jobs=1`` on a shallow
    copy of the fitted estimator): the parallelism is over the blocks.
    """

    def __init__(self, estimator, method):
        # one copy for every block: predicting changes nothing in the estimator
        self.estimator = copy.copy(estimator)
        self.estimator.n_jobs = 1
        self.method = method

    def __call__(self, X):
        return getattr(self.estimator, self.method)(X)


def _decoder_has(attr):
    """``available_if`` check: the (fitted or default) decoder has ``attr``."""

    def check(self):
        decoder = getattr(self, "decoder_", None)
        return hasattr(decoder if decoder is not None else self._make_decoder(), attr)

    return check


class CodeMatrixPrediction:
    """The prediction methods of :class:`~convexagg.CodeMatrixClassifier` (a mixin).

    They read the fitted estimator: ``estimators_`` (through ``_members``) and their
    stacked linear binaries ``_linear_stacks`` (one
    :class:`~convexagg.linear_outputs.LinearStack` per member, set with them),
    ``decoder_``, ``binary_output_``, ``ensemble_``, ``classes_``,
    ``code_matrix_``, ``n_features_in_``, and its ``_validate_X``.
    """

    def _predict(self, X, method):
        """``method`` (a prediction method's name) on ``X``: the one dispatch of every
        prediction method. A Dask array maps it lazily over its row blocks; array-API
        ``X`` is predicted on its device (:meth:`_on_device`), anything else on the host
        (:meth:`_on_host`). ``decision_function`` keeps one column for two classes, and
        ``predict`` is the class of the largest probability (score for decoders without
        probabilities), so that it is the argmax of what ``predict_proba`` returns."""
        check_is_fitted(self)
        if is_dask_array(X):
            return self._map_dask(X, method)
        namespace = array_namespace(X)
        compute = self._on_host if namespace is None else self._on_device
        if method == "decision_function":
            scores = compute(X, method)
            return scores[:, 1] - scores[:, 0] if scores.shape[1] == 2 else scores
        if method != "predict":
            return compute(X, method)
        has_proba = hasattr(self.decoder_, "predict_proba")
        scores = compute(X, "predict_proba" if has_proba else "decision_function")
        if namespace is None:  # ties: the first class
            return self.classes_[np.argmax(scores, axis=1)]
        index = namespace.xp.argmax(scores, axis=1)
        # scikit-learn's convention: numeric labels on X's device, strings on the host
        if self.classes_.dtype.kind in "biuf":
            return namespace.xp.take(namespace.to_device(self.classes_), index)
        return self.classes_[namespace.to_host(index)]

    def _map_dask(self, X, method):
        """Lazy ``method`` over the row blocks of the Dask array ``X`` (whole rows per
        block, each computed by :meth:`_predict` on the in-memory block)."""
        if X.ndim != 2 or X.shape[1] != self.n_features_in_:
            raise ValueError(
                f"X has shape {X.shape}, but {type(self).__name__} is expecting "
                f"{self.n_features_in_} features as input."
            )
        n_classes = len(self.classes_)
        n_columns, dtype = {
            "predict_binary_proba": (self.code_matrix_.shape[1], np.float64),
            "predict_proba": (n_classes, np.float64),
            "predict_log_proba": (n_classes, np.float64),
            "decision_function": (None if n_classes == 2 else n_classes, np.float64),
            "predict": (None, self.classes_.dtype),
        }[method]
        return map_row_blocks(_BlockMethod(self, method), X, n_columns, dtype)

    def _on_host(self, X, method):
        """``method`` for in-memory ``X`` (NumPy, sparse, a table), before
        :meth:`_predict`'s last step: the decoder's scores of ``decision_function``
        have a column per class."""
        if method == "predict_binary_proba":
            return np.mean(self._member_outputs(X), axis=0)
        if method == "predict_log_proba":
            return self._log_proba(X)
        if method == "predict_proba":
            if len(self._members()) > 1 and hasattr(self.decoder_, "predict_log_proba"):
                return np.exp(self._log_proba(X))
            probas = self._member_decodes(X, "predict_proba")  # one member: not exp of its logs
            return probas[0] if len(probas) == 1 else np.mean(probas, 0)
        # decision_function: for an ensemble, the log of the mean probabilities (decoders
        # with probabilities) or the mean scores
        if self.ensemble_ and hasattr(self.decoder_, "predict_log_proba"):
            return self._log_proba(X)
        if self.ensemble_ and hasattr(self.decoder_, "predict_proba"):
            with np.errstate(divide="ignore"):  # a probability of 0 scores -inf
                return np.log(self._on_host(X, "predict_proba"))
        return np.mean([self.decoder_.decision_function(Q) for Q in self._member_outputs(X)], 0)

    def _on_device(self, X, method):
        """``method`` for array-API ``X``, as :meth:`_on_host` computes it: the members'
        outputs, the decode and the mean over an ensemble computed on ``X``'s device."""
        X = self._validate_X(X, reset=False)
        xp = array_namespace(X).xp
        output = self.binary_output_
        outputs = [predict_binaries_on_device(member, X, output) for member in self._members()]
        if method == "predict_binary_proba":
            return xp.mean(xp.stack(outputs), axis=0)
        decoder, n = self.decoder_, len(outputs)
        if method == "predict_proba" and not hasattr(decoder, "predict_log_proba"):
            return xp.mean(xp.stack([decoder.predict_proba(Q) for Q in outputs]), axis=0)
        mean_scores = not (self.ensemble_ and hasattr(decoder, "predict_proba"))
        if method == "decision_function" and mean_scores:
            return xp.mean(xp.stack([decoder.decision_function(Q) for Q in outputs]), axis=0)
        if method == "decision_function" and not hasattr(decoder, "predict_log_proba"):
            return xp.log(self._on_device(X, "predict_proba"))
        log = decoder.predict_log_proba(outputs[0])
        if n > 1:  # the log of the members' mean probability, stably
            logs = xp.stack([decoder.predict_log_proba(Q) for Q in outputs])
            top = xp.max(logs, axis=0)
            log = top + xp.log(xp.sum(xp.exp(logs - top), axis=0)) - float(np.log(n))
        log = xp.where(log > 0, xp.zeros_like(log), log)  # as _log_proba: a log is <= 0
        return xp.exp(log) if method == "predict_proba" else log

    def _member_outputs(self, X):
        """Every ensemble member's binary outputs on ``X`` (validated here)."""
        X = self._validate_X(X, reset=False)
        output, n_jobs = self.binary_output_, self.n_jobs
        return [
            predict_binaries(member, X, output, n_jobs, stacked)
            for member, stacked in zip(self._members(), self._linear_stacks)
        ]

    def _member_decodes(self, X, method):
        """The decoder's ``method`` (``"predict_proba"`` or ``"predict_log_proba"``)
        on each member's outputs on ``X`` (validated here). Members whose binaries
        are all logistic regressions hand the decoder their log-odds where it takes
        them (``ConvexDecoder.predict_proba_from_log_odds``, ``X`` validated once by
        the binaries, :func:`~convexagg.linear_outputs.log_odds_input`): one ``exp`` and one
        ``log1p`` per output instead of the sigmoid and two logs."""
        X = self._validate_X(X, reset=False)
        decode = getattr(self.decoder_, method)
        from_log_odds = getattr(self.decoder_, method + "_from_log_odds", None)
        if self.binary_output_ != "proba":
            from_log_odds = None
        decoded, checked = [], None  # X checked once for every member's log-odds
        for member, stacked in zip(self._members(), self._linear_stacks):
            Z = None
            if from_log_odds is not None:
                checked = log_odds_input(member, X, stacked) if checked is None else checked
                Z = None if checked is None else predict_log_odds(member, checked, False, stacked)
            if Z is not None:
                decoded.append(from_log_odds(Z))
            else:
                Q = predict_binaries(member, X, self.binary_output_, self.n_jobs, stacked)
                decoded.append(decode(Q))
        return decoded

    def _log_proba(self, X):
        """Log of the class probabilities: the decoder's on each member's outputs,
        averaged over the members in probability (computed stably)."""
        logs = self._member_decodes(X, "predict_log_proba")
        log_proba = logs[0] if len(logs) == 1 else logsumexp(np.stack(logs), axis=0)
        if len(logs) > 1:
            log_proba -= np.log(len(logs))
        # a log-probability is <= 0; the mean's rounding gave 2.2e-16 (a probability of
        # 1.0000000000000002, which scikit-learn's log_loss refuses)
        return np.minimum(log_proba, 0.0, out=log_proba)

    def predict_binary_proba(self, X):
        """Binary outputs ``Q`` of shape ``(n_samples, n_classifiers)``.

        Parameters
        ----------
        X : {array-like, sparse matrix, dask.array.Array} of shape (n_samples, n_features)
            Samples.

        Returns
        -------
        Q : ndarray of shape (n_samples, n_classifiers)
            Probabilities of each column's positive side, or margins when the
            binary learner has no ``predict_proba`` (see ``binary_output_``);
            with an ensemble, the mean over its members.
        """
        return self._predict(X, "predict_binary_proba")

    @available_if(_decoder_has("predict_proba"))
    def predict_proba(self, X):
        """Class membership probabilities.

        Parameters
        ----------
        X : {array-like, sparse matrix, dask.array.Array} of shape (n_samples, n_features)
            Samples.

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
            Columns in the order of ``classes_``; rows sum to 1. With an
            ensemble, the mean of its members' probabilities.
        """
        return self._predict(X, "predict_proba")

    @available_if(_decoder_has("predict_log_proba"))
    def predict_log_proba(self, X):
        """Log of the class membership probabilities, computed stably by the decoder.

        Parameters
        ----------
        X : {array-like, sparse matrix, dask.array.Array} of shape (n_samples, n_features)
            Samples.

        Returns
        -------
        log_proba : ndarray of shape (n_samples, n_classes)
            Columns in the order of ``classes_``.
        """
        return self._predict(X, "predict_log_proba")

    @available_if(_decoder_has("decision_function"))
    def decision_function(self, X):
        """Decoder scores: larger means more likely.

        Parameters
        ----------
        X : {array-like, sparse matrix, dask.array.Array} of shape (n_samples, n_features)
            Samples.

        Returns
        -------
        scores : ndarray of shape (n_samples, n_classes) or (n_samples,)
            ``(n_samples,)`` for two classes (positive means ``classes_[1]``), as
            in scikit-learn. With an ensemble and a decoder with probabilities:
            the log of the members' mean probability.
        """
        return self._predict(X, "decision_function")

    def predict(self, X):
        """Class labels: the argmax of ``predict_proba`` (of the decoder's scores for
        decoders without probabilities).

        Parameters
        ----------
        X : {array-like, sparse matrix, dask.array.Array} of shape (n_samples, n_features)
            Samples.

        Returns
        -------
        labels : ndarray of shape (n_samples,)
            Elements of ``classes_``.
        """
        return self._predict(X, "predict")
