"""Logistic-regression binaries trained together: every column of a code, on every
fold, as one batched problem.

When every binary learner is scikit-learn's ``LogisticRegression`` with its L2 penalty
(alone, or after a ``StandardScaler`` in a ``Pipeline``), the binaries of a code differ
only in their rows and targets, and :func:`fit_logistic_binaries` solves them all at
once, fold after fold, by Newton's method:

* the rows of a fold are grouped by class: a class's rows serve every binary whose
  column uses the class, with the same target for all of them (the column's sign);
* all binaries' coefficients are one matrix, and each class's margins, gradients and
  Hessians are matrix products with its rows (BLAS-3): margins ``X_k @ U``, gradients
  ``X_k.T @ R``, and, for up to :data:`EXPLICIT_HESSIAN_FEATURES` features, the exact
  Hessians ``Z_k.T @ H`` with ``Z_k`` the rows' outer products (their upper triangles,
  flattened, kept in float32), solved for every binary by one batched ``linalg.solve``; with more
  features, Newton steps by batched conjugate gradients whose Hessian-vector products
  are matrix products too (taken on tall data only, :data:`ROWS_PER_FEATURE`: with
  few rows per feature scikit-learn's L-BFGS, one binary at a time, is as fast);
* a binary's ``StandardScaler`` is a reparametrisation: its model sees
  ``z = (x - mean) / scale``, so its margins are ``x @ (w / scale) + b - mean @ (w /
  scale)``; the means and variances of every binary's rows come from per-class sums
  (scikit-learn's ``StandardScaler`` fitted on those rows computes the same numbers),
  and no scaled copy of ``X`` is made;
* each binary stops at the optimum of scikit-learn's objective for its rows, ``C *
  sum_i s_i * loss_i + ||w||^2 / 2`` (the intercept unpenalised), Newton's decrement
  below ``1e-10`` of the objective: closer than ``LogisticRegression``'s own solvers
  stop at their ``tol``, which is not used here. A column's fold binaries start from
  its previous fold's solution, the first fold's from zero coefficients and the
  intercept of the weighted class balance.

The fitted binaries are the objects ``LogisticRegression.fit`` (``Pipeline.fit``) would
leave: clones of the learner with the attributes those fits set (``coef_``,
``intercept_``, ``classes_``, ``n_features_in_``, ``n_iter_``, the Newton iterations;
the scaler's ``mean_``, ``var_``, ``scale_``, ``n_samples_seen_``, ``n_features_in_``;
and, where ``X`` is a table with string column names, ``feature_names_in_`` on the step
that sees the table: the scaler, or the model alone). ``X`` is read as those fits
convert it (scikit-learn's ``check_array``): a numeric pandas or polars DataFrame, a
list of rows or a CPU tensor is trained as the float64 array their fits would see.

Which settings qualify is decided in one place, :func:`batched_columns`; everything
else, and within a batch any binary whose rows have one side, whose weights leave a
side empty, whose Newton system is singular in floating point, or whose Newton
iteration does not converge within its learner's ``max_iter``, is trained by
scikit-learn's own ``fit`` (the ``fallback`` of
:func:`fit_logistic_binaries`). :func:`per_binary_path` turns the batch off.

The computation is written on the array API standard (``xp``: ``matmul``, ``take``,
``exp``, ``linalg.solve``, ...), the per-binary bookkeeping on small NumPy arrays: under
``array_api_dispatch`` an ``X`` of another namespace (PyTorch, CuPy) is trained on its
device, and the binaries' fitted arrays live there, as scikit-learn's own fits there
leave them. The batch runs in the calling process, whatever ``n_jobs`` or joblib
backend: those apply to the binaries fitted one by one.

One file for one solver: its parts (the eligibility of the learners, the class-grouped
products of a fold, the Newton loop, and building the fitted estimators) share private
structures (``_Column``, ``_Block``, ``_Fold`` and the ``xp`` helpers) that no other
module reads; split, each part would import the others' private names.
"""

from __future__ import annotations

import copy
import numbers
from contextlib import contextmanager
from contextvars import ContextVar
from typing import NamedTuple

import numpy as np
from scipy.sparse import issparse
from sklearn import get_config
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils.metadata_routing import process_routing
from sklearn.utils.validation import FLOAT_DTYPES, check_array

from ._array_api import array_namespace, on_host
from ._sklearn import feature_names, routing_enabled

__all__ = [
    "EXPLICIT_HESSIAN_FEATURES",
    "ROWS_PER_FEATURE",
    "batched_columns",
    "fit_logistic_binaries",
    "per_binary_path",
]

# up to this many features (intercept included), Newton steps use exact Hessians
# (n x p(p+1)/2 outer products per fold, growing as the square of the features);
# above, conjugate gradients (BENCHMARKS.md, "The logistic-regression binaries trained
# together")
EXPLICIT_HESSIAN_FEATURES = 65
# conjugate gradients pay on tall data only: with fewer rows per feature (intercept
# included) than this, L-BFGS one binary at a time is as fast, and the batch is not taken
ROWS_PER_FEATURE = 20
# the solvers whose fit reaches the optimum of the L2-penalised objective
_SOLVERS = ("lbfgs", "newton-cg", "newton-cholesky")
# the dtypes LogisticRegression.fit converts X to, the first kept (StandardScaler's fit:
# scikit-learn's FLOAT_DTYPES)
_LOGISTIC_DTYPES = (np.float64, np.float32)
# a binary has converged when Newton's decrement lambda^2 / 2 is below this fraction
# of its objective (the objective's gap is about lambda^2 / 2 before the last step)
_DECREMENT = 1e-10
_ARMIJO = 1e-4  # sufficient decrease of the backtracking line search
_CG_TOLERANCE = 1e-4  # conjugate gradients stop at this residual, relative to the gradient
_SMALLEST_STEP = 1e-10  # a line search that needs a shorter step has failed
# the rows x binaries of one block of work (a class's rows, cut into pieces): its
# margins and weights stay in cache between the elementwise passes
_BLOCK_ELEMENTS = 1 << 16
# the cached outer products of a fold's rows are kept below this size; above, each
# block computes its own at every evaluation
_OUTER_BYTES = 1 << 28
# margins below -_MARGIN_FLOOR (a loss below 1e-304) are raised to it: exp stays finite
_MARGIN_FLOOR = 700.0

_forced = ContextVar("convexagg_per_binary_path", default=False)


@contextmanager
def per_binary_path():
    """Train every binary by its learner's own ``fit``, one by one, within the context.

    For tests and benchmarks that compare the batched trainer with scikit-learn's
    per-binary fits.

    Yields
    ------
    None
    """
    token = _forced.set(True)
    try:
        yield
    finally:
        _forced.reset(token)


class _Column(NamedTuple):
    """What the batch needs of one column's learner."""

    C: float
    fit_intercept: bool
    max_iter: int
    with_mean: bool  # the scaler subtracts its mean_ (False without a scaler)
    with_std: bool  # the scaler divides by its scale_ (False without a scaler)
    scaler: bool  # the learner is a Pipeline(StandardScaler, LogisticRegression)


class Batch(NamedTuple):
    """The columns of a batch (:func:`batched_columns`) and the weights their fits get.

    Attributes
    ----------
    columns : list of _Column
        One per code column.
    model_weight : ndarray of shape (n_samples,) or None
        ``sample_weight`` of the ``LogisticRegression`` fits.
    scaler_weight : ndarray of shape (n_samples,) or None
        ``sample_weight`` of the ``StandardScaler`` fits.
    X : array of shape (n_samples, n_features)
        The samples as the batch reads them: a float64 NumPy array (as the learners'
        fits convert a list of rows, a table, a sparse matrix or a CPU tensor), or a
        float64 array of another namespace under ``array_api_dispatch``.
    feature_names : ndarray of str or None
        The column names the first step of every binary stores as
        ``feature_names_in_`` (None: ``X`` has none).
    """

    columns: list
    model_weight: np.ndarray | None
    scaler_weight: np.ndarray | None
    X: object  # the samples as the batch reads them (dense)
    feature_names: np.ndarray | None = None


def _real(value, low=0.0):
    return (
        isinstance(value, numbers.Real)
        and not isinstance(value, bool)
        and np.isfinite(value)
        and value > low
    )


def _no_callbacks(*estimators):
    return not any(getattr(est, "_skl_callbacks", None) for est in estimators)


def _model_column(model, scaler):
    """The :class:`_Column` of a ``LogisticRegression`` (after ``scaler``, or alone), or
    None when its fit is not the batch's problem."""
    if type(model) is not LogisticRegression:
        return None
    params = model.get_params(deep=False)
    l1_ratio = params["l1_ratio"]
    if not (
        isinstance(params["penalty"], str)
        and params["penalty"] == "deprecated"  # penalty=... warns in every fit
        and isinstance(l1_ratio, numbers.Real)
        and l1_ratio == 0
        and _real(params["C"])
        and params["dual"] is False
        and params["class_weight"] is None
        and isinstance(params["solver"], str)
        and params["solver"] in _SOLVERS
        and not params["verbose"]
        and params["n_jobs"] is None  # n_jobs=... warns in every fit
        and isinstance(params["fit_intercept"], (bool, np.bool_))
        and isinstance(params["max_iter"], numbers.Integral)
        and params["max_iter"] >= 1
        and isinstance(params["tol"], numbers.Real)
        and params["tol"] >= 0
        and _no_callbacks(model)
    ):
        return None
    with_mean = bool(scaler is not None and scaler.with_mean)
    with_std = bool(scaler is not None and scaler.with_std)
    return _Column(
        float(params["C"]),
        bool(params["fit_intercept"]),
        int(params["max_iter"]),
        with_mean,
        with_std,
        scaler is not None,
    )


def _pipeline_parts(learner):
    """``(scaler, model)`` of a plain ``Pipeline`` of a ``StandardScaler`` and one more
    step, neither of which changes how it fits; None for anything else."""
    if type(learner) is not Pipeline or len(learner.steps) != 2:
        return None
    (_, scaler), (_, model) = learner.steps
    if type(scaler) is not StandardScaler or learner.memory is not None or learner.verbose:
        return None
    if getattr(learner, "transform_input", None) is not None:
        return None
    if not (isinstance(scaler.with_mean, bool) and isinstance(scaler.with_std, bool)):
        return None
    output = getattr(scaler, "_sklearn_output_config", {}) or {}
    if output.get("transform", "default") != "default":
        return None  # the model would see a DataFrame (feature names)
    if not _no_callbacks(learner, scaler):
        return None
    return scaler, model


def _weights_of(learner, params):
    """``(model weight, scaler weight)`` of a column's fit parameters, each an array or
    None, or False when the parameters go elsewhere than the two fits' ``sample_weight``."""
    params = {k: v for k, v in (params or {}).items() if v is not None}
    parts = _pipeline_parts(learner)
    if parts is None:  # a LogisticRegression: its own fit parameters
        if set(params) - {"sample_weight"}:
            return False
        return params.get("sample_weight"), None
    if not params:
        return None, None
    names = [name for name, _ in learner.steps]
    try:
        if routing_enabled():
            routed = process_routing(learner, "fit", **params)
            steps = [dict(routed[name].fit) for name in names]
        else:  # step__parameter, as Pipeline.fit reads them
            steps = [{}, {}]
            for key, value in params.items():
                step, _, name = key.partition("__")
                if step not in names or not name:
                    return False
                steps[names.index(step)][name] = value
    except Exception:  # what the pipeline's own fit would raise, raised by it
        return False
    steps = [{k: v for k, v in step.items() if v is not None} for step in steps]
    if any(set(step) - {"sample_weight"} for step in steps):
        return False
    return steps[1].get("sample_weight"), steps[0].get("sample_weight")


def _same(a, b):
    if a is None or b is None:
        return a is None and b is None
    return a is b or (np.shape(a) == np.shape(b) and np.array_equal(a, b))


def _weight_array(weight, n):
    """``weight`` as a float64 array of ``n`` finite non-negative values, else False."""
    if weight is None:
        return None
    try:
        weight = np.asarray(on_host(weight), dtype=np.float64)
    except (TypeError, ValueError):
        return False
    if weight.shape != (n,) or not np.all(np.isfinite(weight)) or np.any(weight < 0):
        return False
    return weight


def batched_columns(learners, X, fit_params):
    """Whether the columns' binaries can be trained together, and what with.

    The rules, every one needed:

    * every column's learner is ``LogisticRegression`` (the class itself), or a plain
      ``Pipeline`` (no ``memory``, ``verbose`` or ``transform_input``) of a
      ``StandardScaler`` (any ``with_mean``/``with_std``, no pandas output) and such
      a ``LogisticRegression``, none of them with callbacks;
    * the ``LogisticRegression`` has the L2 penalty (``l1_ratio=0``, ``penalty`` left
      at its default), a finite ``C > 0``, ``dual=False``, ``class_weight=None``, a
      solver among ``lbfgs``, ``newton-cg``, ``newton-cholesky`` (all reach the same
      optimum), ``verbose=0`` and ``n_jobs=None`` (the last two print or warn);
    * ``X`` is what the learners fit as a float64 array (:func:`_host_samples`): its
      values are numbers (scikit-learn's ``check_array`` reads no object array from it:
      no strings, categories or other objects), and the step that first sees it (the
      ``StandardScaler``, or the ``LogisticRegression`` alone) converts it to float64 --
      a NumPy array of float64, integers or booleans, a list of rows, a numeric pandas
      or polars DataFrame, a CPU tensor without ``array_api_dispatch``, or a sparse
      matrix with fewer than :data:`EXPLICIT_HESSIAN_FEATURES` features and scalers
      that scale without centring; finite, with at least one feature, and with at most
      :data:`EXPLICIT_HESSIAN_FEATURES` - 1 features or at least
      :data:`ROWS_PER_FEATURE` rows per feature (the intercept counted); or, under
      ``array_api_dispatch``, a float64 array of another namespace (its scalers
      centring or scaling: scikit-learn fits no other there);
    * the fit parameters are at most ``sample_weight`` for the model and, in a
      pipeline, for the scaler (routed by metadata routing, or ``step__sample_weight``
      without it), the same weights in every column, finite and non-negative;
    * :func:`per_binary_path` is not in effect.

    Parameters
    ----------
    learners : list of estimators
        One learner per code column.
    X : object
        The training samples.
    fit_params : list of dict
        Each column's fit parameters, on all rows.

    Returns
    -------
    batch : Batch or None
        The columns and the weights of their fits, or None: train them one by one.
    """
    if _forced.get() or get_config()["transform_output"] != "default":
        return None
    columns, weights, seen = [], None, {}
    for learner, params in zip(learners, fit_params):
        key = id(learner), id(params)  # the columns share a learner and its parameters
        if key not in seen:
            parts = _pipeline_parts(learner)
            model, scaler = (learner, None) if parts is None else (parts[1], parts[0])
            seen[key] = _model_column(model, scaler), _weights_of(learner, params)
        column, these = seen[key]
        if column is None:
            return None
        if these is False or (weights is not None and not all(map(_same, these, weights))):
            return None
        weights = these
        columns.append(column)
    if not columns:
        return None
    namespace = array_namespace(X)
    names = None
    if namespace is not None:
        if not _on_device(learners, X, namespace):
            return None
    else:
        try:
            names = feature_names(X)  # what the first step's fit stores
        except TypeError:  # mixed column name types: the learners' fits say so
            return None
        # the first step's conversion: the scaler's, or the model's when it is alone
        dtypes = FLOAT_DTYPES if any(c.scaler for c in columns) else _LOGISTIC_DTYPES
        X = _host_samples(_dense(X, learners) if issparse(X) else X, dtypes)
        if X is None:
            return None
    if len(X.shape) != 2 or X.shape[1] == 0 or X.shape[0] == 0:
        return None
    p = X.shape[1] + 1
    if p > EXPLICIT_HESSIAN_FEATURES and X.shape[0] < ROWS_PER_FEATURE * p:
        return None
    model_weight = _weight_array(weights[0], X.shape[0])
    scaler_weight = _weight_array(weights[1], X.shape[0])
    if model_weight is False or scaler_weight is False:
        return None
    if namespace is not None:
        finite = bool(_host(namespace.xp, namespace.xp.all(namespace.xp.isfinite(X))))
    else:
        finite = bool(np.all(np.isfinite(X)))
    if not finite:
        return None  # the learner's own fit names the problem
    return Batch(columns, model_weight, scaler_weight, X, names)


def _host_samples(X, dtypes):
    """``X`` as the learners' first step converts it (scikit-learn's ``check_array``
    with that step's ``dtypes``) when that is a float64 array of numbers, else None.

    Its values must be numbers: ``check_array`` keeping ``X``'s own dtype reads no
    object array from it (a string, categorical or object column, which the learners
    convert one value at a time or refuse, keeps their own fits). The conversion is
    the learners' own, so that a table, a list or a CPU tensor gives the batch the
    array their fits would see: a float32 table stays float32 in scikit-learn's
    conversion (and its fit), and is not taken."""
    if X is None:
        return None
    try:
        own = check_array(X, dtype=None, ensure_all_finite=False)
        if own.dtype.kind not in "fiub":
            return None
        if own.dtype == np.float64:  # the first of the steps' dtypes: kept by them
            return own
        X = check_array(X, dtype=dtypes, ensure_all_finite=False)
    except Exception:  # what the learners' fits would raise, raised by them
        return None
    return X if X.dtype == np.float64 else None


def _dense(X, learners):
    """A sparse ``X`` as a dense array where the batch takes it: few features (its
    rows are densified, as the exact Hessians need), no scaler that centres (scikit-
    learn's refuses a sparse matrix) and none that only counts rows (its sparse fit
    counts the weights); None otherwise."""
    if X.shape[1] + 1 > EXPLICIT_HESSIAN_FEATURES or X.dtype.kind not in "fiub":
        return None
    for learner in learners:
        parts = _pipeline_parts(learner)
        if parts is not None and (parts[0].with_mean or not parts[0].with_std):
            return None
    return X.toarray()


def _on_device(learners, X, namespace):
    """Whether the batch takes array-API ``X`` (on its device): float64, and learners
    whose fit scikit-learn runs there (a ``StandardScaler`` that neither centres nor
    scales does not)."""
    if X.dtype != namespace.xp.float64:
        return False
    parts = [_pipeline_parts(learner) for learner in learners]
    return all(part is None or part[0].with_mean or part[0].with_std for part in parts)


# --------------------------------------------------------------------------------------
# the array-API helpers


def _host(xp, a):
    """``a`` (an array of ``xp``) as NumPy."""
    return a if xp is np else np.asarray(on_host(a))


def _device(xp, a, like=None):
    """A NumPy array on ``like``'s device (or ``xp``'s default)."""
    if xp is np:
        return a
    return xp.asarray(a, device=None if like is None else like.device)


def _take(xp, a, index, axis=0):
    return xp.take(a, _device(xp, np.asarray(index, dtype=np.int64), a), axis=axis)


def _embed(xp, values, where, n):
    """An array of ``n`` rows with ``values[i]`` at row ``where[i]`` and zeros elsewhere
    (integer-array assignment is no part of the standard: one ``take``)."""
    position = np.full(n, len(where), dtype=np.int64)
    position[where] = np.arange(len(where))
    zero = xp.zeros((1, *values.shape[1:]), dtype=values.dtype, device=values.device)
    return _take(xp, xp.concat([values, zero], axis=0), position)


def _sum_by_owner(xp, values, owner, n):
    """``out[b] = sum of values[i] with owner[i] == b`` (rows; ``owner`` a NumPy array).

    On NumPy one ``add.reduceat`` over the rows sorted by owner; on other namespaces
    (no ``reduceat`` in the array API) a ``take`` per group of owners with the same
    number of rows. A product with the owners' indicator matrix would cost ``n`` times
    the rows' size: far more where a batch holds hundreds of binaries.
    """
    order = np.argsort(owner, kind="stable")
    counts = np.bincount(owner, minlength=n)
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    if xp is np:
        out = np.zeros((n, *values.shape[1:]), dtype=values.dtype)
        present = counts > 0
        out[present] = np.add.reduceat(values[order], starts[present], axis=0)
        return out
    parts, owners = [], []
    for count in np.unique(counts[counts > 0]):
        ids = np.flatnonzero(counts == count)
        index = order[starts[ids][:, None] + np.arange(count)].ravel()
        part = xp.reshape(_take(xp, values, index), (ids.size, int(count), *values.shape[1:]))
        parts.append(xp.sum(part, axis=1))
        owners.append(ids)
    return _embed(xp, xp.concat(parts, axis=0), np.concatenate(owners), n)


# --------------------------------------------------------------------------------------
# one fold's problem


class _Block(NamedTuple):
    X: object  # (rows, p): the rows, centred, and a last column of ones
    outer: object  # (rows, p(p+1)/2) their outer products, or None (computed when needed)
    weight: object  # (rows,) the model's sample weights, or None
    columns: np.ndarray  # the binaries using these rows
    sign: np.ndarray  # per binary: +1 for the negative side, -1 for the positive side


def _outer_products(xp, X1, pairs):
    """The rows' outer products, their upper triangles flattened: ``(rows, p(p+1)/2)``."""
    iu, ju = pairs
    return _take(xp, X1, iu, axis=1) * _take(xp, X1, ju, axis=1)


class _Rows:
    """What every fold takes its rows from: all rows centred on their mean, with a last
    column of ones, and their outer products (for exact Hessians, when they fit in
    :data:`_OUTER_BYTES`), computed once for all folds."""

    def __init__(self, xp, X, explicit):
        if xp is np:
            X = X.astype(np.float64, copy=False)
        self.center = xp.mean(X, axis=0)
        self.centred = X - self.center
        ones = xp.ones((X.shape[0], 1), dtype=X.dtype, device=self.centred.device)
        self.with_ones = xp.concat([self.centred, ones], axis=1)
        p = X.shape[1] + 1
        self.pairs = np.triu_indices(p) if explicit else None
        cached = explicit and X.shape[0] * (p * (p + 1) // 2) * 8 <= _OUTER_BYTES
        # stored in float32: they only shape the Newton steps (the gradient stays float64,
        # so the iteration reaches the same optimum), and reading them is most of a step's
        # time (BENCHMARKS.md, "The logistic-regression binaries trained together")
        outer = _outer_products(xp, self.with_ones, self.pairs) if cached else None
        self.outer = None if outer is None else xp.astype(outer, xp.float32)


class _Fold:
    """The binaries of one fold: their rows grouped by class into blocks, and what maps
    each binary's coefficients (those of its model, after its scaler) to the centred
    rows'.

    The unknowns of binary ``b`` are ``theta = (w, intercept)`` of its
    ``LogisticRegression``; its margins are ``X1 @ T_b.T @ theta`` with ``X1 = (x - c,
    1)`` (``c`` the mean of all the folds' rows, :class:`_Rows`) and ``T_b.T @ theta =
    (w / s, intercept + (c - m) @ (w / s))``, ``m`` and ``s`` the mean and scale its
    scaler applies (0 and 1 where it does not)."""

    def __init__(self, xp, rows_of, y, rows, code, columns, batch):
        self.like = rows_of.centred  # the device of every array made here
        yf = y[rows]
        self.center = _host(xp, rows_of.center)
        n_classes, B = code.shape
        d = rows_of.centred.shape[1]
        self.d, self.p, self.B, self.xp = d, d + 1, B, xp
        model_w = None if batch.model_weight is None else batch.model_weight[rows]
        scaler_w = None if batch.scaler_weight is None else batch.scaler_weight[rows]
        uses = code != 0  # (classes, binaries)
        order = np.argsort(yf, kind="stable")
        bounds = np.concatenate([[0], np.cumsum(np.bincount(yf, minlength=n_classes))])
        self.pairs = rows_of.pairs
        self.blocks = []
        class_sums = np.zeros((n_classes, 3, d))  # weight, mean, M2 of the scaler's rows
        for k in range(n_classes):
            members = order[bounds[k] : bounds[k + 1]]
            if members.size == 0:
                continue
            Xk = _take(xp, rows_of.centred, rows[members])
            wk = None if scaler_w is None else scaler_w[members]
            total = float(members.size if wk is None else wk.sum())
            if total > 0:
                wk_ = None if wk is None else self.device(wk)
                mean = (xp.sum(Xk, axis=0) if wk is None else wk_ @ Xk) / total
                spread = (Xk - mean) ** 2
                class_sums[k, 1] = _host(xp, mean)
                class_sums[k, 2] = _host(xp, xp.sum(spread, axis=0) if wk is None else wk_ @ spread)
            class_sums[k, 0] = total
            binaries = np.flatnonzero(uses[k])
            if binaries.size == 0:
                continue
            sign = np.where(code[k, binaries] == 1, -1.0, 1.0)
            step = max(1, _BLOCK_ELEMENTS // binaries.size)
            for start in range(0, members.size, step):
                stop = min(start + step, members.size)
                chunk = rows[members[start:stop]]
                Xb = _take(xp, rows_of.with_ones, chunk)
                outer = None if rows_of.outer is None else _take(xp, rows_of.outer, chunk)
                wb = None if model_w is None else self.device(model_w[members[start:stop]])
                self.blocks.append(_Block(Xb, outer, wb, binaries, sign))
        self._scalers(uses, class_sums, columns, scaler_w is not None)

    def device(self, a):
        """A NumPy array on the fold's device."""
        return _device(self.xp, a, self.like)

    def _outer(self, Xb):
        return _outer_products(self.xp, Xb, self.pairs)

    def _scalers(self, uses, class_sums, columns, weighted):
        """Every binary's scaler (what ``StandardScaler.fit`` on its rows computes) and
        the shift and scale its model's features get."""
        A = uses.T.astype(np.float64)  # (binaries, classes)
        total, mean, M2 = class_sums[:, 0, 0], class_sums[:, 1], class_sums[:, 2]
        W = A @ total
        with np.errstate(invalid="ignore", divide="ignore"):
            mu = (A * total) @ mean / W[:, None]  # centred by self.center
        # the pooled second moment about each binary's mean: within plus between classes
        var = np.empty_like(mu)
        for b in range(mu.shape[0]):
            used = A[b] > 0
            between = total[used] @ (mean[used] - mu[b]) ** 2
            var[b] = (A[b, used] @ M2[used] + between) / W[b]
        self.scaler_mean = mu + self.center
        self.scaler_var = var
        self.scaler_n = W
        self.scaler_weighted = weighted
        # the constant features' scale is 1, as StandardScaler decides it: its bound on
        # the rounding of a variance, taken with the larger of the rows' mean and their
        # mean about self.center (the values summed here), so that a feature
        # constant on a binary's rows is constant whatever the other classes' values
        eps = np.finfo(np.float64).eps
        size = np.maximum(np.abs(self.scaler_mean), np.abs(mu))
        constant = var <= W[:, None] * eps * var + (W[:, None] * size * eps) ** 2
        self.scaler_scale = np.where(constant, 1.0, np.sqrt(var))
        with_mean = np.array([c.with_mean for c in columns], dtype=bool)
        with_std = np.array([c.with_std for c in columns], dtype=bool)
        self.scale = np.where(with_std[:, None], self.scaler_scale, 1.0)
        shift = np.where(with_mean[:, None], self.scaler_mean, 0.0)  # what is subtracted
        self.delta = self.center - shift  # c - m
        self.C = np.array([c.C for c in columns])
        self.intercept = np.array([c.fit_intercept for c in columns], dtype=np.float64)
        self.max_iter = np.array([c.max_iter for c in columns], dtype=np.int64)

    # the map between a model's coefficients and the centred rows'
    def coefficients(self, theta, act):
        """``(len(act), p)``: the centred rows' coefficients of the binaries ``act``."""
        xp, d = self.xp, self.d
        inv = _device(xp, 1.0 / self.scale[act], theta)
        delta = _device(xp, self.delta[act], theta)
        v = theta[:, :d] * inv
        b = theta[:, d] + xp.sum(delta * v, axis=1)
        return xp.concat([v, b[:, None]], axis=1)

    def to_model(self, G, act):
        """``T @ G`` for each binary: a gradient of the centred rows' coefficients as
        one of the model's."""
        xp, d = self.xp, self.d
        inv = _device(xp, 1.0 / self.scale[act], G)
        delta = _device(xp, self.delta[act], G)
        return xp.concat([(G[:, :d] + delta * G[:, d:]) * inv, G[:, d:]], axis=1)

    def evaluate(self, U, act, hessian):
        """Objective terms of the binaries ``act`` at the centred rows' coefficients
        ``U`` (``(len(act), p)``): ``(sum of weighted losses, gradient (len(act), p),
        Hessian terms)`` -- the Hessians packed ``(len(act), p(p+1)/2)`` when
        ``hessian == "explicit"``, else the blocks' weighted curvatures for
        :meth:`hvp` and the Jacobi diagonal ``(len(act), p)``."""
        xp = self.xp
        where = np.full(self.B, -1)
        where[act] = np.arange(act.size)
        losses, grads, curves, owners, kept = [], [], [], [], []
        for block in self.blocks:
            pos = where[block.columns]
            keep = pos >= 0
            if not keep.any():
                kept.append(None)
                continue
            pos = pos[keep]
            sign = _device(xp, block.sign[keep], U)
            margins = block.X @ _take(xp, U, pos).T
            # t = sign * margin, the loss log(1 + exp(t)) = t + log1p(exp(-t))
            t = xp.clip(margins * sign, min=-_MARGIN_FLOOR)
            e = xp.exp(-t)
            loss = t + xp.log1p(e)
            slope = 1.0 / (1.0 + e)  # sigmoid(t), the loss's derivative in t
            curve = slope * (1.0 - slope)
            slope = slope * sign
            if block.weight is not None:
                loss = loss * block.weight[:, None]
                slope = slope * block.weight[:, None]
                curve = curve * block.weight[:, None]
            losses.append(xp.sum(loss, axis=0))
            grads.append(slope.T @ block.X)
            if hessian == "explicit":
                if block.outer is not None:  # float32 (_Rows)
                    sums = xp.astype(curve.T, block.outer.dtype) @ block.outer
                    curves.append(xp.astype(sums, curve.dtype))
                else:
                    curves.append(curve.T @ self._outer(block.X))
            else:
                curves.append(xp.concat([curve.T @ block.X, curve.T @ (block.X**2)], axis=1))
                kept.append((pos, curve))
            owners.append(pos)
        owner = np.concatenate(owners)
        n = act.size
        loss = _sum_by_owner(xp, xp.concat(losses)[:, None], owner, n)[:, 0]
        grad = _sum_by_owner(xp, xp.concat(grads, axis=0), owner, n)
        curve = _sum_by_owner(xp, xp.concat(curves, axis=0), owner, n)
        if hessian == "explicit":
            return loss, grad, curve
        return loss, grad, (kept, curve)

    def hessians(self, packed, act, theta):
        """The model's Hessians ``(len(act), p, p)``: ``C T H T.T`` plus the penalty,
        the intercept's row and column replaced by the identity's where there is none."""
        xp, d, p = self.xp, self.d, self.p
        iu, ju = self.pairs
        sym = np.zeros((p, p), dtype=np.int64)
        sym[iu, ju] = np.arange(iu.size)
        sym[ju, iu] = np.arange(iu.size)
        H = xp.reshape(_take(xp, packed, sym.ravel(), axis=1), (act.size, p, p))
        A, a, alpha = H[:, :d, :d], H[:, :d, d], H[:, d, d]
        inv = _device(xp, 1.0 / self.scale[act], theta)
        delta = _device(xp, self.delta[act], theta)
        C = _device(xp, self.C[act], theta)
        fi = _device(xp, self.intercept[act], theta)
        a2 = a + alpha[:, None] * delta
        A2 = A + delta[:, :, None] * a[:, None, :] + a2[:, :, None] * delta[:, None, :]
        eye = xp.eye(d, dtype=theta.dtype, device=theta.device)
        Hww = C[:, None, None] * A2 * inv[:, :, None] * inv[:, None, :] + eye
        Hwb = (C * fi)[:, None] * a2 * inv
        Hbb = C * fi * alpha + (1.0 - fi)
        top = xp.concat([Hww, Hwb[:, :, None]], axis=2)
        bottom = xp.concat([Hwb, Hbb[:, None]], axis=1)[:, None, :]
        return xp.concat([top, bottom], axis=1)

    def hvp(self, kept, V, act):
        """Hessian-vector products ``(len(act), p)`` of the model's coefficients ``V``
        (curvatures ``kept`` from :meth:`evaluate`)."""
        xp = self.xp
        where = np.full(self.B, -1)
        where[act] = np.arange(act.size)
        d = self.d
        inv = _device(xp, 1.0 / self.scale[act], V)
        delta = _device(xp, self.delta[act], V)
        fi = _device(xp, self.intercept[act], V)
        v = V[:, :d] * inv
        U = xp.concat([v, (V[:, d] * fi + xp.sum(delta * v, axis=1))[:, None]], axis=1)
        parts, owners = [], []
        for block, entry in zip(self.blocks, kept):
            if entry is None:
                continue
            pos, curve = entry
            direction = block.X @ _take(xp, U, pos).T
            parts.append((curve * direction).T @ block.X)
            owners.append(pos)
        HU = _sum_by_owner(xp, xp.concat(parts, axis=0), np.concatenate(owners), act.size)
        C = _device(xp, self.C[act], V)
        out = C[:, None] * self.to_model(HU, act)
        penalty = xp.concat([V[:, :d], xp.zeros_like(V[:, d:])], axis=1)
        return (out + penalty) * xp.concat([xp.ones_like(V[:, :d]), fi[:, None]], axis=1)

    def jacobi(self, diagonal_terms, act, theta):
        """The diagonal of the model's Hessians ``(len(act), p)``, from the curvatures'
        sums ``X.T h`` and ``(X**2).T h``: a preconditioner."""
        xp, d, p = self.xp, self.d, self.p
        first, second = diagonal_terms[:, :p], diagonal_terms[:, p:]
        inv = _device(xp, 1.0 / self.scale[act], theta)
        delta = _device(xp, self.delta[act], theta)
        C = _device(xp, self.C[act], theta)
        alpha = first[:, d]
        ww = second[:, :d] + 2.0 * delta * first[:, :d] + alpha[:, None] * delta**2
        diag_w = C[:, None] * ww * inv**2 + 1.0
        diag_b = C * alpha
        return xp.concat([diag_w, xp.clip(diag_b, min=1e-300)[:, None]], axis=1)


# --------------------------------------------------------------------------------------
# Newton's method for every binary of a fold


def _objective(fold, theta, loss, act):
    xp, d = fold.xp, fold.d
    C = _device(xp, fold.C[act], theta)
    return C * loss + 0.5 * xp.sum(theta[:, :d] ** 2, axis=1)


def _gradient(fold, theta, grad, act):
    xp, d = fold.xp, fold.d
    C = _device(xp, fold.C[act], theta)
    fi = _device(xp, fold.intercept[act], theta)
    g = C[:, None] * fold.to_model(grad, act)
    g = g + xp.concat([theta[:, :d], xp.zeros_like(theta[:, d:])], axis=1)
    return g * xp.concat([xp.ones_like(theta[:, :d]), fi[:, None]], axis=1)


def _pcg(fold, kept, diagonal, g, act, tolerance):
    """Batched preconditioned conjugate gradients for ``H s = -g`` of the binaries
    ``act``, each stopped when its residual is below ``tolerance`` times ``|g|``."""
    xp = fold.xp
    p = fold.p
    s = xp.zeros_like(g)
    r = -g
    z = r / diagonal
    direction = z
    rz = xp.sum(r * z, axis=1)
    target = tolerance * xp.sqrt(xp.sum(g * g, axis=1))
    active = xp.ones_like(rz)
    for _ in range(max(2 * p, 10)):
        Hd = fold.hvp(kept, direction, act)
        curvature = xp.sum(direction * Hd, axis=1)
        alpha = xp.where(curvature > 0, rz / xp.where(curvature > 0, curvature, 1.0), 0.0)
        alpha = alpha * active
        s = s + alpha[:, None] * direction
        r = r - alpha[:, None] * Hd
        active = active * xp.astype(xp.sqrt(xp.sum(r * r, axis=1)) > target, r.dtype)
        if not bool(_host(xp, xp.any(active > 0))):
            break
        z = r / diagonal
        rz_new = xp.sum(r * z, axis=1)
        beta = rz_new / xp.where(rz > 0, rz, 1.0)
        direction = z + beta[:, None] * direction
        rz = rz_new
    return s


def _is_singular(error):
    """Whether ``error`` is a namespace's ``LinAlgError`` (NumPy's, PyTorch's): a matrix
    its ``linalg.solve`` could not factorise."""
    return type(error).__name__ == "LinAlgError" or isinstance(error, np.linalg.LinAlgError)


def _newton_step(fold, theta, g, terms, act, explicit):
    xp = fold.xp
    if explicit:
        H = fold.hessians(terms, act, theta)
        try:
            return -xp.linalg.solve(H, g[:, :, None])[:, :, 0]
        except Exception as error:
            if not _is_singular(error):
                raise
        # a Hessian singular in floating point: the others' steps, and a NaN step for it,
        # which ends its Newton iteration unconverged (its learner's own fit takes over)
        steps = []
        for b in range(H.shape[0]):
            try:
                steps.append(-xp.linalg.solve(H[b, ...], g[b, :, None])[:, 0])
            except Exception as error:
                if not _is_singular(error):
                    raise
                steps.append(xp.full_like(g[b, :], float("nan")))
        return xp.stack(steps, axis=0)
    kept, diagonal_terms = terms
    diagonal = fold.jacobi(diagonal_terms, act, theta)
    return _pcg(fold, kept, diagonal, g, act, _CG_TOLERANCE)


def _solve(fold, theta, explicit):
    """Newton's method with a backtracking line search, every binary in step: returns
    ``(theta, iterations, converged)``; ``theta`` ``(B, p)`` is the start."""
    xp, B = fold.xp, fold.B
    hessian = "explicit" if explicit else "cg"
    iterations = np.zeros(B, dtype=np.int64)
    done = np.zeros(B, dtype=bool)
    converged = np.zeros(B, dtype=bool)
    first = np.ones(B, dtype=bool)
    accepted_value = np.full(B, np.inf)
    slope = np.zeros(B)
    length = np.ones(B)
    accepted = theta
    step = xp.zeros_like(theta)
    while not done.all():
        act = np.flatnonzero(~done)
        here = _take(xp, theta, act)
        loss, grad, terms = fold.evaluate(fold.coefficients(here, act), act, hessian)
        value = _host(xp, _objective(fold, here, loss, act))
        ok = first[act] | (value <= accepted_value[act] + _ARMIJO * length[act] * slope[act])
        ok &= np.isfinite(value)
        # accepted points: a new Newton direction there
        good = act[ok]
        if good.size:
            g = _gradient(fold, here, grad, act)
            sub = np.flatnonzero(ok)
            g_ok = _take(xp, g, sub)
            if explicit:
                terms_ok = _take(xp, terms, sub)
            else:
                kept, diag = terms
                keep = [None if e is None else _subset(xp, e, sub, act.size) for e in kept]
                terms_ok = (keep, _take(xp, diag, sub))
            here_ok = _take(xp, here, sub)
            direction = _newton_step(fold, here_ok, g_ok, terms_ok, good, explicit)
            decrement = _host(xp, -xp.sum(g_ok * direction, axis=1))
            accepted_value[good] = value[ok]
            iterations[good] += 1
            finished = (decrement <= 2.0 * _DECREMENT * value[ok]) | (decrement <= 0)
            failed = ~np.isfinite(decrement)
            out_of_steps = (iterations[good] >= fold.max_iter[good]) & ~finished
            done[good[finished | failed | out_of_steps]] = True
            converged[good[finished & ~failed]] = True
            slope[good] = -decrement
            length[good] = 1.0
            first[good] = False
            direction = xp.where(
                _device(xp, np.isfinite(decrement)[:, None], direction), direction, 0.0
            )
            new_accepted = _embed(xp, here_ok, good, B)
            new_step = _embed(xp, direction, good, B)
            mask = _device(xp, np.isin(np.arange(B), good)[:, None], theta)
            accepted = xp.where(mask, new_accepted, accepted)
            step = xp.where(mask, new_step, step)
        # rejected points: a shorter step along the same direction
        bad = act[~ok]
        length[bad] *= 0.5
        lost = bad[length[bad] < _SMALLEST_STEP]
        done[lost] = True  # not converged: its learner's own fit takes over
        # the points evaluated next (and the last step of those just finished)
        lengths = _device(xp, length[:, None], theta)
        trial = accepted + lengths * step
        mask = _device(xp, np.isin(np.arange(B), act)[:, None], theta)
        theta = xp.where(mask, trial, theta)
    return theta, iterations, converged


def _subset(xp, entry, sub, n):
    """A block's ``(pos, curve)`` restricted to the active binaries ``sub`` (positions
    among ``n``), renumbered; None when it serves none of them."""
    pos, curve = entry
    where = np.full(n, -1)
    where[sub] = np.arange(sub.size)
    new = where[pos]
    keep = np.flatnonzero(new >= 0)
    if keep.size == 0:
        return None
    return new[keep], _take(xp, curve, keep, axis=1)


# --------------------------------------------------------------------------------------
# the binaries of every fold


def _sides(code, y, weight, n_classes):
    """Per column: the rows and the (model-)weighted rows of each side, in these rows."""
    counts = np.bincount(y, minlength=n_classes).astype(np.float64)
    weights = counts if weight is None else np.bincount(y, weights=weight, minlength=n_classes)
    positive, negative = (code == 1).T.astype(np.float64), (code == -1).T.astype(np.float64)
    return positive @ counts, negative @ counts, positive @ weights, negative @ weights


def _start_of(estimator, d):
    """The model's ``(w, intercept)`` of a fitted binary, to start from; None if it is
    no fitted linear model of ``d`` features."""
    model = estimator.steps[-1][1] if type(estimator) is Pipeline else estimator
    coef = getattr(model, "coef_", None)
    intercept = getattr(model, "intercept_", None)
    if not isinstance(coef, np.ndarray) or coef.shape != (1, d) or intercept is None:
        return None
    start = np.append(coef[0], np.ravel(intercept)[:1])
    return start if np.all(np.isfinite(start)) else None


def _unfitted_copy(template):
    """A clone of the unfitted learner ``template``: its parameters are numbers,
    strings, None and, for a pipeline, its steps (:func:`batched_columns`), so shallow
    copies of it and its steps are (their metadata requests copied too)."""
    est = type(template).__new__(type(template))
    est.__dict__.update(vars(template))
    if "_metadata_request" in vars(est):
        est._metadata_request = copy.deepcopy(est._metadata_request)
    if type(est) is Pipeline:
        est.steps = [(name, _unfitted_copy(step)) for name, step in template.steps]
    return est


def _fitted(estimator, theta, iterations, fold, i, n_rows, namespace=None, names=None):
    """``estimator`` (an unfitted clone) with the attributes its ``fit`` on binary
    ``i``'s rows sets, its model's coefficients ``theta`` (arrays of ``X``'s namespace,
    on its device, where ``X`` takes the array-API path), and ``X``'s column ``names``
    (or None) as the ``feature_names_in_`` of the step that sees ``X`` itself: the
    scaler of a pipeline (its model sees the scaler's array), else the model."""
    d = fold.d
    if type(estimator) is Pipeline:
        scaler, model = estimator.steps[0][1], estimator.steps[1][1]
        scaler.n_features_in_ = d
        if scaler.with_mean or scaler.with_std:
            scaler.n_samples_seen_ = np.float64(fold.scaler_n[i])
            scaler.mean_ = fold.scaler_mean[i].copy()
            scaler.var_ = fold.scaler_var[i].copy() if scaler.with_std else None
            scaler.scale_ = fold.scaler_scale[i].copy() if scaler.with_std else None
        else:  # StandardScaler counts the rows, in the weights' dtype when weighted
            kind = np.float64 if fold.scaler_weighted else np.int64
            scaler.n_samples_seen_ = kind(n_rows)
            scaler.mean_ = scaler.var_ = scaler.scale_ = None
    else:
        model = estimator
    if names is not None:  # each binary its own array, as each fit stores one
        first = model if model is estimator else scaler
        first.feature_names_in_ = names.copy()
    model.n_features_in_ = d
    model.classes_ = np.array([0, 1])
    model.n_iter_ = np.array([iterations], dtype=np.int32)
    model.coef_ = np.array(theta[None, :d])
    model.intercept_ = np.array(theta[d:]) if model.fit_intercept else np.zeros(1)
    if namespace is not None:  # as scikit-learn's fits on X's device leave them
        for name in ("classes_", "n_iter_", "coef_", "intercept_"):
            setattr(model, name, fold.device(getattr(model, name)))
        if model is not estimator:
            for name in ("mean_", "var_", "scale_", "n_samples_seen_"):
                value = getattr(scaler, name)
                if value is not None:
                    setattr(scaler, name, fold.device(np.asarray(value, dtype=np.float64)))
    return estimator


def fit_logistic_binaries(learners, X, y, code, trains, fit_params, *, make, fallback, starts=None):
    """Train every column's binary on each training part, batched (see the module
    docstring), or return None when :func:`batched_columns` says no.

    Parameters
    ----------
    learners : list of estimators
        One learner per code column.
    X : array-like of shape (n_samples, n_features)
        All samples, as the learners' ``fit`` takes them (:func:`batched_columns`).
    y : ndarray of shape (n_samples,)
        Their class indices.
    code : ndarray of shape (n_classes, n_columns)
        The code matrix.
    trains : list of ndarray of int
        The training rows of each fold (one part of all rows for a single fit), in
        the order the binaries start from the previous part's solution.
    fit_params : list of dict
        Each column's fit parameters on all rows.
    make : callable
        ``make(column)``: an unfitted clone of the column's learner, seeded as its
        fit by ``fallback`` would be; called once per learner object, whose copies
        serve all its columns (seeds set none of the batch's parameters: its solvers
        draw no random numbers).
    fallback : callable
        ``fallback(column, train)``: the column's binary fitted on the rows ``train``
        by its learner's own ``fit`` (or the constant of a one-sided problem), for the
        binaries the batch leaves.
    starts : list of fitted binaries, default=None
        One per column: the first part starts from their coefficients.

    Returns
    -------
    binaries : list of lists of fitted estimators, or None
        One list per training part, one binary per column; None when the columns do
        not qualify.
    """
    batch = batched_columns(learners, X, fit_params)
    if batch is None:
        return None
    X, names = batch.X, batch.feature_names
    namespace = array_namespace(X)
    xp = np if namespace is None else namespace.xp
    n_classes, M = code.shape
    d = X.shape[1]
    explicit = d + 1 <= EXPLICIT_HESSIAN_FEATURES
    rows_of = _Rows(xp, X, explicit)
    previous = [None] * M if starts is None else [_start_of(est, d) for est in starts]
    templates = {}  # one clone per learner, copied for each of its binaries
    parts = []
    for train in trains:
        yf = y[train]
        weight = None if batch.model_weight is None else batch.model_weight[train]
        n_pos, n_neg, w_pos, w_neg = _sides(code, yf, weight, n_classes)
        usable = (n_pos > 0) & (n_neg > 0) & (w_pos > 0) & (w_neg > 0)
        if batch.scaler_weight is not None:
            scaler_sides = _sides(code, yf, batch.scaler_weight[train], n_classes)
            usable &= scaler_sides[2] + scaler_sides[3] > 0
        columns = np.flatnonzero(usable)
        binaries = [None] * M
        if columns.size:
            chosen = [batch.columns[c] for c in columns]
            fold = _Fold(xp, rows_of, y, train, code[:, columns], chosen, batch)
            theta = np.zeros((columns.size, d + 1))
            for i, c in enumerate(columns):
                if previous[c] is not None:
                    theta[i] = previous[c]
                elif batch.columns[c].fit_intercept:  # the optimum of zero coefficients
                    theta[i, d] = np.log(w_pos[c] / w_neg[c])
            theta, iterations, converged = _solve(fold, fold.device(theta), explicit)
            theta = _host(xp, theta)
            for i, c in enumerate(columns):
                if converged[i]:
                    n_rows = n_pos[c] + n_neg[c]
                    key = id(learners[c])
                    if key not in templates:
                        templates[key] = make(c)
                    unfitted = _unfitted_copy(templates[key])
                    binaries[c] = _fitted(
                        unfitted, theta[i], iterations[i], fold, i, n_rows, namespace, names
                    )
                    previous[c] = theta[i]
        for c in range(M):
            if binaries[c] is None:
                binaries[c] = fallback(c, train)
                previous[c] = _start_of(binaries[c], d)
        parts.append(binaries)
    return parts
