"""Weights and accuracy along a path of ``alpha`` (the paper's Fig. 3)."""

from __future__ import annotations

import numpy as np

from ..path import regularization_path
from ..validation import encode_labels
from .base import (
    axes as _axes,
)
from .base import (
    fitted_decoder as _fitted_decoder,
)
from .base import (
    validate_style_kwargs as _validate_style_kwargs,
)

__all__ = ["RegularizationPathDisplay"]


class RegularizationPathDisplay:
    """Aggregation weights and accuracy along a path of ``alpha`` (the paper's Fig. 3).

    One line per binary classifier's weight against ``alpha`` (log scale), and
    the training (and validation) accuracy on a second y axis: the paper reads
    its ``lambda`` off this figure, where accuracy is high and the weights have
    settled.

    Create it with :meth:`from_path` or :meth:`from_estimator`.

    Parameters
    ----------
    alphas : ndarray of shape (n_alphas,)
        Regularisation strengths; those ``<= 0`` are not drawn (log scale).
    weights : ndarray of shape (n_alphas, n_classifiers)
        Weights at each ``alpha``.
    train_accuracy : ndarray of shape (n_alphas,)
        Training accuracy at each ``alpha``.
    val_accuracy : ndarray of shape (n_alphas,), default=None
        Validation accuracy; not drawn when None.
    estimator_name : str, default=None
        The legend's title.

    Attributes
    ----------
    lines_ : list of matplotlib Line2D
        The weights, one line per classifier.
    accuracy_lines_ : list of matplotlib Line2D
        Training, then validation accuracy.
    ax_ : matplotlib Axes
        Axes of the weights.
    ax_accuracy_ : matplotlib Axes
        The twin axes of the accuracy (right y axis).
    figure_ : matplotlib Figure
    """

    def __init__(self, alphas, weights, train_accuracy, *, val_accuracy=None, estimator_name=None):
        self.alphas = np.asarray(alphas, dtype=np.float64)
        self.weights = np.asarray(weights, dtype=np.float64)
        self.train_accuracy = np.asarray(train_accuracy, dtype=np.float64)
        self.val_accuracy = None if val_accuracy is None else np.asarray(val_accuracy, float)
        n = self.alphas.shape
        shapes_ok = (
            self.alphas.ndim == 1
            and self.weights.ndim == 2
            and self.weights.shape[0] == n[0]
            and self.train_accuracy.shape == n
            and (self.val_accuracy is None or self.val_accuracy.shape == n)
        )
        if not shapes_ok:
            raise ValueError(
                "alphas (n_alphas,), weights (n_alphas, n_classifiers) and the accuracies "
                f"(n_alphas,) must agree; got alphas {self.alphas.shape}, weights "
                f"{self.weights.shape}, train_accuracy {self.train_accuracy.shape}."
            )
        self.estimator_name = estimator_name

    def plot(self, *, ax=None, name=None, **kwargs):
        """Draw the weights against ``alpha`` and the accuracy on a twin axis.

        Parameters
        ----------
        ax : matplotlib Axes, default=None
            Axes of the weights (the accuracy goes on its twin); a new figure
            when None.
        name : str, default=None
            The legend's title; ``estimator_name`` when None.
        **kwargs : dict
            Passed to :meth:`matplotlib.axes.Axes.plot` for the weights.

        Returns
        -------
        display : RegularizationPathDisplay
            This display, drawn (``ax_``, ``figure_`` and the artists set).
        """
        self.ax_, self.figure_ = _axes(self, ax)
        name = self.estimator_name if name is None else name
        shown = self.alphas > 0
        alphas = self.alphas[shown]
        style = _validate_style_kwargs({"linewidth": 1.0}, kwargs)
        self.lines_ = self.ax_.plot(alphas, self.weights[shown], **style)
        for i, line in enumerate(self.lines_):
            line.set_label(f"weights ({len(self.lines_)} classifiers)" if i == 0 else "_weight")
        self.ax_.set_xscale("log")
        self.ax_.set(xlabel="alpha (regularisation strength)", ylabel="aggregation weight")
        self.ax_accuracy_ = self.ax_.twinx()
        self.accuracy_lines_ = self.ax_accuracy_.plot(
            alphas, self.train_accuracy[shown], "k-s", markersize=4, label="training accuracy"
        )
        if self.val_accuracy is not None:
            self.accuracy_lines_ += self.ax_accuracy_.plot(
                alphas,
                self.val_accuracy[shown],
                "k--^",
                markersize=4,
                markerfacecolor="white",
                label="validation accuracy",
            )
        self.ax_accuracy_.set_ylabel("accuracy")
        self.ax_accuracy_.legend(
            handles=self.lines_[:1] + self.accuracy_lines_,
            loc="lower left",
            bbox_to_anchor=(0.0, 1.01),
            ncol=3,
            frameon=False,
            fontsize="small",
            title=name,
            title_fontsize="small",
            alignment="left",
        )
        return self

    @classmethod
    def from_path(cls, path, *, name=None, ax=None, **kwargs):
        """Draw a computed :class:`~convexagg.RegularizationPath`.

        Parameters
        ----------
        path : RegularizationPath
            From :func:`~convexagg.regularization_path`.
        name : str, default=None
            The legend's title.
        ax : matplotlib Axes, default=None
            Axes of the weights; a new figure when None.
        **kwargs : dict
            Passed to :meth:`matplotlib.axes.Axes.plot` for the weights.

        Returns
        -------
        display : RegularizationPathDisplay
            This display, drawn (``ax_``, ``figure_`` and the artists set).
        """
        display = cls(
            path.alphas,
            path.weights,
            path.train_accuracy,
            val_accuracy=path.val_accuracy,
            estimator_name=name,
        )
        return display.plot(ax=ax, **kwargs)

    @classmethod
    def from_estimator(
        cls,
        estimator,
        X,
        y,
        alphas,
        *,
        sample_weight=None,
        X_val=None,
        y_val=None,
        name=None,
        ax=None,
        **kwargs,
    ):
        """Regularisation path of a fitted classifier's convex aggregation.

        The weights are refitted for each ``alpha`` on the binary outputs of
        ``X`` the classifier's decoder was fitted on
        (:meth:`~convexagg.CodeMatrixClassifier.training_outputs`: with
        out-of-fold outputs, ``X`` must be the data of ``fit``) with its
        decoder settings, by :func:`~convexagg.regularization_path`: at the
        classifier's ``alpha``, the path is its weights, whatever ``cv``. The
        classifier is not changed. The validation outputs are those that
        predict (:meth:`~convexagg.CodeMatrixClassifier.predict_binary_proba`).

        Parameters
        ----------
        estimator : ConvexAggregationClassifier or CodeMatrixClassifier
            Fitted, with a :class:`~convexagg.ConvexDecoder` as ``decoder_``
            (formulation ``"likelihood"``).
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Samples the weights are fitted on (normally the training data).
        y : array-like of shape (n_samples,)
            Their labels, among the estimator's ``classes_``.
        alphas : array-like of shape (n_alphas,)
            Regularisation strengths, any order (drawn on a log scale).
        sample_weight : array-like of shape (n_samples,), default=None
            Weights of the samples, as given to ``fit``.
        X_val, y_val : array-like, default=None
            Validation samples and labels for the validation accuracy; given
            together.
        name : str, default=None
            The legend's title; the estimator's class name when None.
        ax : matplotlib Axes, default=None
            Axes of the weights; a new figure when None.
        **kwargs : dict
            Passed to :meth:`matplotlib.axes.Axes.plot` for the weights.

        Returns
        -------
        display : RegularizationPathDisplay
            This display, drawn (``ax_``, ``figure_`` and the artists set).
        """
        decoder = _fitted_decoder(estimator, cls.__name__)
        if decoder is estimator:
            raise TypeError(
                f"{cls.__name__}.from_estimator needs a classifier (it predicts the binary "
                "outputs of X); for binary outputs at hand, call regularization_path and "
                "from_path."
            )
        if (X_val is None) != (y_val is None):
            raise ValueError("X_val and y_val must be given together.")
        val = {}
        if X_val is not None:
            val = {
                "Q_val": estimator.predict_binary_proba(X_val),
                "y_val": encode_labels(y_val, estimator.classes_, "y_val"),
            }
        encode_labels(y, estimator.classes_, "y")  # the labels checked, as y_val's
        Q, y_idx, sw = estimator.training_outputs(X, y, sample_weight)
        path = regularization_path(
            Q,
            y_idx,
            estimator.code_matrix_,
            alphas,
            decoder=decoder,
            output=estimator.binary_output_,
            sample_weight=sw,
            **val,
        )
        name = type(estimator).__name__ if name is None else name
        return cls.from_path(path, name=name, ax=ax, **kwargs)
