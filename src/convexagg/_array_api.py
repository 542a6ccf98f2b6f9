"""Array API inputs (PyTorch, CuPy, ...) under scikit-learn's ``array_api_dispatch``.

The one home of namespace handling: which namespace and device an input lives
on, moving arrays between it and the host, and the checks of what the
array-API path can do. Only :func:`array_namespace` decides that a path is
taken: with ``sklearn.set_config(array_api_dispatch=True)`` and an input that
is not a NumPy array; without dispatch every input goes through ``np.asarray``
(a CPU tensor converts, a GPU array raises NumPy's error).

scikit-learn's helpers (``sklearn.utils._array_api``) find the namespace and
move arrays, as scikit-learn's own estimators do; they are used here only.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.sparse import issparse
from sklearn import get_config
from sklearn.externals.array_api_compat import is_array_api_obj
from sklearn.frozen import FrozenEstimator
from sklearn.pipeline import Pipeline
from sklearn.utils import get_tags
from sklearn.utils._array_api import get_namespace_and_device, move_to, supported_float_dtypes

from ._dask import is_dask_array
from ._sklearn import safe_indexing

__all__ = [
    "Namespace",
    "array_namespace",
    "check_array_api_learners",
    "check_array_api_settings",
    "is_device_array",
    "namespace_of",
    "on_host",
    "take_rows",
]


def is_device_array(obj):
    """Whether ``obj`` is an array of another array-API namespace than NumPy's
    (a PyTorch tensor, a CuPy array, ...), whatever the dispatch setting."""
    return is_array_api_obj(obj) and not isinstance(obj, (np.ndarray, np.generic))


@dataclass(frozen=True)
class Namespace:
    """An array namespace and a device: where the array-API path computes.

    Attributes
    ----------
    xp : module
        The (array-API compatible) namespace.
    device : object
        The device of the inputs.
    """

    xp: object
    device: object

    def float_dtype(self, dtype):
        """The namespace's float dtype for the NumPy ``dtype`` (float32 where the
        device has no float64, e.g. Apple's MPS)."""
        supported = supported_float_dtypes(self.xp, device=self.device)
        if np.dtype(dtype) == np.float64 and self.xp.float64 in supported:
            return self.xp.float64
        return self.xp.float32

    def to_device(self, a, dtype=None):
        """A NumPy array (or ``None``) on this namespace and device."""
        if a is None:
            return None
        a = move_to(np.ascontiguousarray(a), xp=self.xp, device=self.device)
        return a if dtype is None else self.xp.astype(a, dtype)

    def to_host(self, a):
        """An array of this namespace as a NumPy array (NumPy arrays unchanged)."""
        if a is None or isinstance(a, np.ndarray):
            return a
        return np.asarray(move_to(a, xp=np, device="cpu"))

    def like_input(self, a):
        """``a`` (NumPy or this namespace) on this namespace and device."""
        if a is None or not isinstance(a, np.ndarray):
            return a
        return self.to_device(a)

    def take(self, a, rows):
        """The rows ``rows`` (a slice, NumPy indices or indices of this namespace) of
        ``a``, an array of this namespace: the standard indexes by integer arrays only
        through ``take``."""
        if isinstance(rows, slice):
            return a if rows == slice(None) else a[rows, ...]
        if isinstance(rows, np.ndarray):
            rows = self.to_device(rows.astype(np.int64, copy=False))
        return self.xp.take(a, rows, axis=0)

    def place_rows(self, blocks, rows, n_rows):
        """An array of ``n_rows`` rows with ``blocks[k]`` (arrays of this namespace) at
        the rows ``rows[k]`` (NumPy indices, disjoint) and zeros elsewhere: assembled
        by one ``take`` (the standard has no assignment through integer indices)."""
        xp = self.xp
        order = np.concatenate([np.asarray(r, dtype=np.int64) for r in rows])
        position = np.full(n_rows, order.size, dtype=np.int64)  # the zero row
        position[order] = np.arange(order.size)
        zero = xp.zeros((1, *blocks[0].shape[1:]), dtype=blocks[0].dtype, device=self.device)
        return self.take(xp.concat([*blocks, zero], axis=0), position)


def array_namespace(Q):
    """The :class:`Namespace` of ``Q`` when it takes the array-API path, else None.

    The path is taken under ``array_api_dispatch=True`` for an array that is
    not NumPy's (PyTorch, CuPy, ``array_api_strict``); NumPy arrays, lists,
    DataFrames and Dask arrays keep their own paths.

    Parameters
    ----------
    Q : object
        The binary outputs (the input that decides the namespace).

    Returns
    -------
    namespace : Namespace or None
        Where to compute, or None for the NumPy path.
    """
    if not get_config()["array_api_dispatch"]:
        return None
    if Q is None or isinstance(Q, (np.ndarray, list, tuple, str)) or is_dask_array(Q):
        return None
    if not hasattr(Q, "shape") or not hasattr(Q, "dtype"):
        return None  # a DataFrame or other container: converted to NumPy as usual
    xp, compliant, device = get_namespace_and_device(Q)
    if not compliant or xp.__name__.split(".")[-1] == "numpy":
        return None
    return Namespace(xp, device)


def on_host(a):
    """``a`` as NumPy when it takes the array-API path (moved from its device), else
    ``a`` unchanged (None, NumPy, lists, ...).

    Parameters
    ----------
    a : object
        An input.

    Returns
    -------
    a : object
        On the host.
    """
    namespace = array_namespace(a)
    return a if namespace is None else namespace.to_host(a)


def take_rows(a, rows):
    """The rows ``rows`` (a slice or integer indices) of ``a``: NumPy (or SciPy sparse)
    indexing (and Dask's), :meth:`Namespace.take` for an array that takes the array-API path, and
    scikit-learn's ``_safe_indexing`` for the rest -- pandas and polars DataFrames,
    lists -- which the estimators pass to their binary learners as given (None kept).

    Parameters
    ----------
    a : array-like, sparse matrix, DataFrame or None
        NumPy, SciPy sparse or array-API array, or a table or list of rows.
    rows : slice or ndarray of int
        The rows.

    Returns
    -------
    taken : array-like or None
        Of ``a``'s type (an array of ``a``'s namespace).
    """
    if a is None:
        return None
    if isinstance(a, np.ndarray) or issparse(a) or is_dask_array(a):
        return a[rows]
    namespace = array_namespace(a)
    if namespace is not None:
        return namespace.take(a, rows)
    return safe_indexing(a, rows)


def namespace_of(*arrays):
    """The :class:`Namespace` of the first array that takes the array-API path, else None.

    Parameters
    ----------
    *arrays : objects
        Candidate inputs, ``None`` allowed.

    Returns
    -------
    namespace : Namespace or None
        As :func:`array_namespace`.
    """
    for a in arrays:
        namespace = array_namespace(a)
        if namespace is not None:
            return namespace
    return None


def check_array_api_learners(learners, name="estimator"):
    """Raise a ``ValueError`` unless every learner declares scikit-learn's array API
    support (its ``__sklearn_tags__().array_api_support``; a ``Pipeline``: every
    step's), naming the parameter.

    Binaries of array-API ``X`` are trained and predict on ``X``'s device; a
    learner that computes with NumPy would need its data copied to the host,
    which convexagg never does behind the user's back.

    Parameters
    ----------
    learners : estimator or list of estimators
        The binary learner, or one per code column (fitted binaries with
        ``cv="prefit"``).
    name : str, default="estimator"
        The parameter the learners were given by.
    """
    many = isinstance(learners, (list, tuple))
    for l, learner in enumerate(learners if many else [learners]):
        if not _declares_array_api(learner):
            which = f"{name}[{l}]" if many else name
            raise ValueError(
                f"array-API X (array_api_dispatch=True) needs binary learners that support "
                f"the array API, to train and predict on X's device; {which}="
                f"{learner!r} does not declare it (its __sklearn_tags__().array_api_support, "
                "or a Pipeline step's, is False). Use one that does, such as "
                "LogisticRegression() (solver 'lbfgs'), or pass X as a NumPy array."
            )


def _declares_array_api(learner):
    """Whether ``learner`` declares scikit-learn's array API support; a ``Pipeline`` (the
    default learner, a ``StandardScaler`` and a logistic regression) runs its steps on
    ``X``'s device when every step declares it."""
    if isinstance(learner, FrozenEstimator):  # given binaries: the binary's own support
        return _declares_array_api(learner.estimator)
    if isinstance(learner, Pipeline):
        steps = [step for _, step in learner.steps if step not in (None, "passthrough")]
        return bool(steps) and all(_declares_array_api(step) for step in steps)
    try:
        return bool(get_tags(learner).array_api_support)
    except (AttributeError, TypeError):  # not a scikit-learn estimator
        return False


def check_array_api_settings(formulation, *others, inputs="Q", zero_entries=False):
    """Raise a ``ValueError`` for what the array-API path cannot do, naming the parameter.

    Parameters
    ----------
    formulation : str
        The decoder's training criterion: only ``"likelihood"`` is computed on
        the device (the section-4 criteria run on NumPy arrays).
    *others : objects
        ``y`` and ``sample_weight``: a Dask array among them cannot go with an
        array-API ``Q``.
    inputs : str, default="Q"
        The array-API input's name in the messages (``"X"`` for an estimator).
    zero_entries : bool, default=False
        Whether the decoder weighs the code's zero entries (``zero_entry_penalty``),
        which the device path does not.
    """
    if zero_entries:
        raise ValueError(
            f"zero_entry_penalty cannot apply to array-API {inputs} (array_api_dispatch="
            f"True): it is fitted and decoded on NumPy arrays; pass {inputs} as a NumPy "
            "array, or set zero_entry_penalty=None."
        )
    if formulation != "likelihood":
        raise ValueError(
            "array-API inputs (array_api_dispatch=True) are fitted with "
            f"formulation='likelihood' only; got formulation={formulation!r}. Pass NumPy "
            "arrays for the section-4 formulations."
        )
    if any(is_dask_array(a) for a in others):
        raise ValueError(
            f"y and sample_weight cannot be Dask arrays when {inputs} is an array-API array "
            f"(array_api_dispatch=True); pass them as arrays of {inputs}'s namespace or NumPy."
        )
