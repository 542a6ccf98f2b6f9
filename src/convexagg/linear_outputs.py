"""Linear binaries' outputs in one product, and their log-odds.

Linear binaries (scikit-learn's linear classifiers' ``decision_function``, and
``LogisticRegression``'s ``predict_proba``, its logistic sigmoid) predict
together: their coefficients are stacked and ``Q`` is one matrix product, the
values those methods compute one column at a time, without a call per binary. A pipeline of a
``StandardScaler`` and such a model is linear too: its scaling is folded into
the stacked coefficients (``x -> ((x - mean) / scale) @ coef + b``). For
``LogisticRegression`` binaries, :func:`predict_log_odds` gives the stacked
decision functions themselves, the log-odds of ``Q``, which the convex decoder
takes its cross-entropy losses from without the sigmoid.

The stacked coefficients (:func:`linear_stack`) are a fitted estimator's derived
state: it computes them once when its binaries are fitted or loaded and passes them
to every prediction, which then stacks nothing.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from scipy.sparse import issparse
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils.extmath import safe_sparse_dot
from sklearn.utils.validation import validate_data

from .output_checks import check_outputs

__all__ = [
    "LinearLogOdds",
    "LinearStack",
    "is_linear_class",
    "linear_stack",
    "log_odds_input",
    "predict_log_odds",
]


def is_linear_class(learner_class, output):
    """Whether ``cls``'s output is scikit-learn's linear map of ``X``.

    Parameters
    ----------
    learner_class : type
        A binary learner's class.
    output : {"proba", "margin"}
        The output read from it.

    Returns
    -------
    linear : bool
        True for the ``decision_function`` of ``LinearClassifierMixin`` and, for
        probabilities, ``LogisticRegression``'s ``predict_proba`` (its sigmoid for
        binary problems).
    """
    decision_function = getattr(learner_class, "decision_function", None)
    if decision_function is not LogisticRegression.decision_function:
        return False
    return output == "margin" or learner_class.predict_proba is LogisticRegression.predict_proba


def _scaled_parts(estimator):
    """``(scaler, model)`` of a ``Pipeline`` (not a subclass, which may predict
    otherwise) of a ``StandardScaler`` and one more step; ``(None, estimator)`` for
    anything else."""
    if type(estimator) is not Pipeline:
        return None, estimator
    steps = [step for _, step in estimator.steps if step not in (None, "passthrough")]
    if len(steps) != 2 or type(steps[0]).transform is not StandardScaler.transform:
        return None, estimator
    return steps[0], steps[1]


def is_linear_learner(estimator, output):
    """:func:`is_linear_class` for an unfitted learner, seen through a scaling pipeline."""
    return is_linear_class(type(_scaled_parts(estimator)[1]), output)


def _linear_parts(estimator, output):
    """``(scaler, model)`` of a fitted linear binary (:func:`is_linear_class`, alone
    (``scaler`` None) or after a ``StandardScaler``); None for any other."""
    scaler, model = _scaled_parts(estimator)
    coef = getattr(model, "coef_", None)
    linear = (
        (scaler is None or hasattr(scaler, "scale_"))
        and is_linear_class(type(model), output)
        and isinstance(coef, np.ndarray)
        and coef.ndim == 2
        and coef.shape[0] == 1
        and len(getattr(model, "classes_", ())) == 2
    )
    return (scaler, model) if linear else None


def scaler_mean(scaler):
    """The mean a fitted ``StandardScaler`` subtracts (None: it does not centre)."""
    return scaler.mean_ if scaler is not None and scaler.with_mean else None


class _Stack(NamedTuple):
    """The stacked linear binaries of :func:`_stacked_linear`."""

    W: np.ndarray  # (d, m)
    b: np.ndarray  # (m,)
    center: np.ndarray | None  # (d,)
    A: np.ndarray  # (m, d + 1), [W; b].T Fortran-ordered: LinearLogOdds's coefficients
    size: float  # the largest row sum of |A|: |z| <= size * max |x1|


def _stacked_linear(parts):
    """``_Stack(W, b, center, A, size)`` with ``(x - center) @ W + b`` the decision
    functions of the linear binaries of ``parts`` (:func:`_linear_parts`), scalers
    folded in (``A`` and ``size``: what :func:`predict_log_odds` needs of them,
    computed once per stack rather than once per call).

    ``((x - m) / s) @ c + b = (x - center) @ (c / s) + b + ((center - m) / s) @ c``;
    ``center``, the mean of the scalers' means, keeps ``center - m`` small, so
    that the product does not cancel large means against each other (None when
    no scaler centres)."""
    # one array operation per quantity, not a loop of small products
    coef = np.array([model.coef_[0] for _, model in parts], dtype=np.float64)  # (m, d)
    b = np.array([np.ravel(model.intercept_)[0] for _, model in parts], dtype=np.float64)
    scales = [getattr(scaler, "scale_", None) for scaler, _ in parts]
    if any(scale is not None for scale in scales):
        ones = np.ones(coef.shape[1])
        coef /= np.array([ones if scale is None else scale for scale in scales])
    means = [scaler_mean(scaler) for scaler, _ in parts]
    centred = [mean for mean in means if mean is not None]
    center = np.mean(centred, axis=0) if centred else None
    if center is not None:
        shift = np.array([-center if mean is None else mean - center for mean in means])
        b -= np.einsum("md,md->m", shift, coef)
    A = np.vstack([coef.T, b]).T  # (m, d + 1), the intercepts last; Fortran-ordered
    return _Stack(coef.T, b, center, A, float(np.abs(A).sum(axis=1).max()))


class LinearStack(NamedTuple):
    """What :func:`linear_stack` returns for one list of binaries: a fitted estimator
    keeps one per ensemble member, so that predicting stacks nothing.

    Parameters
    ----------
    parts : list
        Each binary's ``(scaler, model)`` when it is linear, else None.
    linear : list of int
        The indices of the linear binaries stacked (empty: none is).
    stack : tuple or None
        Their coefficients and intercepts stacked for one product (None when
        ``linear`` is empty).
    """

    parts: list
    linear: list
    stack: _Stack | None


def linear_stack(estimators, output):
    """The linear binaries of ``estimators`` and their coefficients stacked.

    Parameters
    ----------
    estimators : list of estimators
        Fitted binaries, in the code's column order.
    output : {"proba", "margin"}
        The output read from them.

    Returns
    -------
    stacked : LinearStack
        ``parts``, ``linear`` (empty unless two or more binaries are linear, all
        with the same number of features) and ``stack``.
    """
    parts = [_linear_parts(est, output) for est in estimators]
    linear = [l for l, part in enumerate(parts) if part is not None]
    if len({parts[l][1].coef_.shape[1] for l in linear}) != 1 or len(linear) < 2:
        linear = []
    stack = _stacked_linear([parts[l] for l in linear]) if linear else None
    return LinearStack(parts, linear, stack)


def predict_linear(estimators, parts, X, output, indices, stack=None):
    """Outputs of linear binaries (their :func:`_linear_parts`) in one product,
    ``(n, len)``: what their ``decision_function`` (``predict_proba[:, 1]``)
    computes, as ``X @ coef.T + intercept`` (then the sigmoid), for all at once.
    ``stack``: their :func:`_stacked_linear`, when known."""
    checker = parts[0][0] or estimators[0]
    X = validate_data(checker, X, accept_sparse="csr", reset=False)
    W, b, center = (_stacked_linear(parts) if stack is None else stack)[:3]
    if center is not None:
        X = X - center
    values = np.asarray(safe_sparse_dot(X, W, dense_output=True), dtype=np.float64)
    values += b
    if output == "proba":  # scipy's expit, 1 / (1 + exp(-x)), with numpy's faster exp
        with np.errstate(over="ignore"):  # exp(-x) = inf gives 0, as expit does
            np.exp(np.negative(values, out=values), out=values)
        values += 1.0
        np.reciprocal(values, out=values)
    check_outputs(values, estimators, output, indices)
    return values


class LinearLogOdds:
    """Log-odds ``Z = X1 @ A.T`` of stacked linear binaries, computed by blocks of rows.

    What :func:`predict_log_odds` returns for a dense ``X``: an array-like of
    shape ``(n_samples, n_classifiers)`` (``numpy.asarray`` computes it whole)
    whose blocks of rows ``Z[start:stop]`` are computed when read. A decoder
    reading it block by block keeps each block in cache with its losses, where the
    whole ``Z`` would go through memory (BENCHMARKS.md, "Decoding 2,000 letter
    rows"). The convex decoder has each block
    written, negated and transposed, into its own buffer
    (:meth:`negated_block_into`).

    Parameters
    ----------
    X1 : ndarray of shape (n_samples, n_features + 1)
        The samples, centred, with a last column of ones.
    A : ndarray of shape (n_classifiers, n_features + 1)
        The stacked coefficients, the intercepts last.

    Attributes
    ----------
    shape : tuple of int
        ``(n_samples, n_classifiers)``.
    dtype : numpy.dtype
        float64.
    ndim : int
        2.
    """

    ndim = 2
    dtype = np.dtype(np.float64)

    def __init__(self, X1, A):
        # A Fortran-ordered: OpenBLAS then sums each entry in the same order whatever
        # the block's width (a C-ordered A with a C-ordered X1.T does not: the first
        # rows of a request would not decode to the bit as they do alone), and the
        # blocks' products are no slower than with a C-ordered A
        self._X1, self._A = X1, np.asfortranarray(A)
        self._X1T = X1.T  # a view: the blocks' right-hand side, sliced once
        self._negA = np.negative(self._A)  # its products are those of A negated, bit for bit
        self.shape = (X1.shape[0], A.shape[0])

    def __getitem__(self, rows):
        """The block ``Z[rows]`` (a slice of rows), Fortran-ordered (each column contiguous)."""
        if not isinstance(rows, slice):
            raise TypeError(f"LinearLogOdds takes a slice of rows, got {rows!r}.")
        return (self._A @ self._X1[rows].T).T

    def negated_block_into(self, start, stop, out):
        """Write ``-Z[start:stop].T`` into ``out``: the same product as
        ``Z[start:stop]``, negated exactly, where a decoder keeps it.

        Parameters
        ----------
        start, stop : int
            The rows of the block.
        out : ndarray of shape (n_classifiers, stop - start)
            float64, each row contiguous.

        Returns
        -------
        out : ndarray
            ``out``, filled.
        """
        return np.matmul(self._negA, self._X1T[:, start:stop], out=out)

    def __array__(self, dtype=None, copy=None):
        Z = self[:]
        return Z if dtype is None else Z.astype(dtype)


# log-odds beyond this bound (of |x| times the largest sum of |coef|) might overflow
# and turn into NaN (inf - inf): those take the checked path of predict_binaries
_SAFE_BOUND = 1e300


def log_odds_input(estimators, X, stacked=None):
    """``X`` validated against linear binaries as :func:`predict_log_odds` validates it,
    for several ensemble members of such binaries to share one check
    (``check_input=False`` then); None when the binaries are not all linear.

    Parameters
    ----------
    estimators : list of fitted binary classifiers
        One per code column.
    X : {array-like, sparse matrix, DataFrame} of shape (n_samples, n_features)
        Samples.
    stacked : LinearStack, default=None
        ``linear_stack(estimators, "proba")``, as a fitted estimator keeps it;
        computed here when None.

    Returns
    -------
    X : ndarray, sparse matrix or None
        A finite 2-D array (CSR matrix) with the binaries' features.
    """
    parts, linear, _ = linear_stack(estimators, "proba") if stacked is None else stacked
    if len(linear) != len(estimators):
        return None
    checker = parts[0][0] or estimators[0]
    return validate_data(checker, X, accept_sparse="csr", reset=False)


def predict_log_odds(estimators, X, check_input=True, stacked=None):
    """The log-odds ``Z = logit(Q)`` of linear binaries' probabilities, in one product.

    Where every binary is scikit-learn's ``LogisticRegression`` (alone or after a
    ``StandardScaler``, see the module docstring), its probability is
    ``expit(x @ coef + intercept)``: this returns the decision functions, stacked,
    so that a decoder can take the cross-entropy losses from them directly
    (:meth:`~convexagg.decoders.ConvexDecoder.predict_proba_from_log_odds`)
    instead of from ``Q = expit(Z)``.

    Parameters
    ----------
    estimators : list of fitted binary classifiers
        One per code column.
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
        Samples.
    check_input : bool, default=True
        Validate ``X`` against the binaries; False where the caller has
        validated it already (a finite 2-D array or CSR/CSC matrix with their
        features).
    stacked : LinearStack, default=None
        ``linear_stack(estimators, "proba")``, as a fitted estimator keeps it;
        computed here when None.

    Returns
    -------
    Z : LinearLogOdds, ndarray of shape (n_samples, n_classifiers), or None
        Column ``l`` is ``logit(estimators[l].predict_proba(X)[:, 1])``, computed
        without the sigmoid, in float64: a :class:`LinearLogOdds` (computed when
        read) for a dense ``X``, a Fortran-ordered array for a sparse one. None
        when some binary is not such a model, when ``X`` is sparse and a scaler
        centres (as for :func:`predict_binaries`), or when the coefficients are
        not finite or large enough for the product to overflow (the binaries'
        outputs are then checked one by one by :func:`predict_binaries`).
    """
    stacked = linear_stack(estimators, "proba") if stacked is None else stacked
    if len(stacked.linear) != len(estimators):
        return None
    W, b, center, A, size = stacked.stack
    if issparse(X) and center is not None:
        return None
    if check_input:
        X = log_odds_input(estimators, X, stacked)
    if issparse(X):
        if not size * abs(X).max() < _SAFE_BOUND:  # False for NaN too
            return None
        ZT = np.asarray(safe_sparse_dot(X, W, dense_output=True).T, dtype=np.float64, order="C")
        ZT += b[:, None]
        return ZT.T
    X1 = np.empty((X.shape[0], X.shape[1] + 1))
    if center is None:
        X1[:, :-1] = X
    else:
        np.subtract(X, center, out=X1[:, :-1])
    X1[:, -1] = 1.0
    if not size * np.abs(X1).max(initial=0.0) < _SAFE_BOUND:
        return None
    return LinearLogOdds(X1, A)
