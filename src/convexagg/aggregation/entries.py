"""Entry weights: one aggregation weight per nonzero code entry instead of one per column.

The paper's discrepancy gives classifier ``l`` one weight ``w_l`` in every
class. With entry weights each nonzero entry ``(k, l)`` of the code has its own
weight ``u_kl >= 0``::

    rho[i, k] = sum_l u_kl d(C[k, l], Q[i, l]) (+ b_k)

so a classifier may count more for one of its classes than for another (a
``K x K``-like map, as Dirichlet calibration and matrix scaling learn, but
convex). The weights are shrunk toward shared column weights (the penalty term
:class:`~convexagg.aggregation.EntryShrinkage`); ``u_kl = w_l`` is the paper's
model.

This is a change of the discrepancy's parametrisation only: ``rho`` is the
paper's ``rho`` of an **expanded code** with one column per nonzero entry,
holding that entry's value in its class's row and 0 (don't care) elsewhere,
on the outputs ``Q[:, columns]``. Every objective (dense, class-blocked,
Dask) and every solver therefore fits entry weights as they are; this module
maps between the two layouts. Entries are ordered by column, then class.

**Zero entries** (the decoders' ``zero_entry_penalty``): a classifier that does
not separate class ``k`` (``C[k, l] = 0``, "don't care") still says something
about it -- a one-vs-one classifier between two other classes is unsure on
``k``'s rows. With zero entries each of them gets two more weights, one per
side, ``v+_kl, v-_kl``, free in sign: the code does not say which side speaks
for ``k``, and held ``>= 0`` the pair could only add to ``rho[i, k]`` (a penalty
that a confident output removes at most), never take from it::

    rho[i, k] += sum_{l: C[k, l] = 0} v+_kl d(+1, Q[i, l]) + v-_kl d(-1, Q[i, l])

In the expanded code they are two more columns per zero entry, holding +1 and
-1 in their class's row, after the code's entries (all +1 sides, then all -1
sides). They are not shrunk toward the shared column weights (a zero entry has
none): their penalty is their own quadratic (:class:`~convexagg.aggregation.EntryShrinkage`,
weights of column -1, free in sign: the objectives' ``n_nonnegative`` leaves
them out, and the solvers treat them as they treat intercepts). At ``v = 0``
the model is the one without them.
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "code_entries",
    "entry_matrix",
    "expand_code",
    "model_entries",
    "side_entry_weights",
    "zero_entries",
    "zero_entry_sides",
]


def code_entries(code):
    """The nonzero entries of a code, ordered by column then class.

    Parameters
    ----------
    code : ndarray of shape (K, M)
        The code matrix.

    Returns
    -------
    classes : ndarray of int, shape (nnz,)
        The class (row) of each entry.
    columns : ndarray of int, shape (nnz,)
        The classifier (column) of each entry.
    """
    return _by_column(np.asarray(code) != 0)


def _by_column(mask):
    """``(rows, columns)`` of the true entries of ``mask``, ordered by column then row."""
    columns, classes = np.nonzero(mask.T)
    return classes.astype(np.intp), columns.astype(np.intp)


def zero_entries(code):
    """The zero entries of a code, ordered by column then class.

    Parameters
    ----------
    code : ndarray of shape (K, M)
        The code matrix.

    Returns
    -------
    classes : ndarray of int, shape (n_zero,)
        The class (row) of each zero entry.
    columns : ndarray of int, shape (n_zero,)
        The classifier (column) of each.
    """
    return _by_column(np.asarray(code) == 0)


def model_entries(code, zero=False):
    """The entries that carry a weight: the nonzero ones, then (``zero``) each zero
    entry's +1 side and each zero entry's -1 side.

    Parameters
    ----------
    code : ndarray of shape (K, M)
        The code matrix.
    zero : bool, default=False
        Whether the zero entries carry weights.

    Returns
    -------
    classes : ndarray of int, shape (n_entries,)
        The class of each weight.
    columns : ndarray of int, shape (n_entries,)
        The classifier whose output it weighs.
    sides : ndarray of shape (n_entries,)
        The side (+1 or -1) whose loss it weighs, of the dtype of ``code``.
    """
    code = np.asarray(code)
    classes, columns = code_entries(code)
    sides = code[classes, columns]
    if not zero:
        return classes, columns, sides
    zc, zl = zero_entries(code)
    ones = np.ones(zc.size, dtype=code.dtype)
    return (
        np.concatenate([classes, zc, zc]),
        np.concatenate([columns, zl, zl]),
        np.concatenate([sides, ones, -ones]),
    )


def expand_code(code, zero=False):
    """The code with one column per weighted entry (its side in its class, 0 elsewhere).

    With the outputs ``Q[:, columns]`` (:func:`model_entries`) its discrepancy
    at weights ``u`` is the entry-weight discrepancy of ``code`` at
    ``entry_matrix(code, u)`` (plus, with ``zero``, the zero entries' terms).

    Parameters
    ----------
    code : ndarray of shape (K, M)
        The code matrix.
    zero : bool, default=False
        Whether the zero entries carry weights (two columns each).

    Returns
    -------
    expanded : ndarray of shape (K, n_entries)
        The expanded code, of the dtype of ``code``.
    """
    code = np.asarray(code)
    classes, _, sides = model_entries(code, zero)
    expanded = np.zeros((code.shape[0], classes.size), dtype=code.dtype)
    expanded[classes, np.arange(classes.size)] = sides
    return expanded


def side_entry_weights(code, u, zero=False):
    """The weights ``u`` of :func:`model_entries` as side weights ``(2, K, M)``: the
    weight of each class's loss against each classifier's +1 side, then -1 side.

    Parameters
    ----------
    code : ndarray of shape (K, M)
        The code matrix.
    u : ndarray of shape (n_entries,)
        One weight per entry of :func:`model_entries`.
    zero : bool, default=False
        Whether ``u`` holds the zero entries' weights.

    Returns
    -------
    sides : ndarray of shape (2, K, M)
        The side weights (:func:`~convexagg.aggregation.side_weights` takes them).
    """
    classes, columns, signs = model_entries(code, zero)
    sides = np.zeros((2,) + np.shape(code))
    sides[(signs < 0).astype(np.intp), classes, columns] = u
    return sides


def zero_entry_sides(code, x):
    """The zero entries' side weights ``(2, K, M)`` in a solution's variables ``x``: the
    weights of :func:`model_entries` with ``zero=True`` (the nonzero entries', then each
    zero entry's two sides) and any variables after them (intercepts), which are ignored.

    Parameters
    ----------
    code : ndarray of shape (K, M)
        The code matrix.
    x : ndarray of shape (n_variables,)
        The solver's variables.

    Returns
    -------
    sides : ndarray of shape (2, K, M)
        The zero entries' weights of each side, zeros on the nonzero entries.
    """
    nnz = int(np.count_nonzero(code))
    n = model_entries(code, zero=True)[0].size
    return side_entry_weights(code, np.concatenate([np.zeros(nnz), x[nnz:n]]), zero=True)


def entry_matrix(code, u):
    """Entry weights as a ``(K, M)`` matrix: ``U[k, l] = u`` of entry ``(k, l)``, 0 where
    the code is 0.

    Parameters
    ----------
    code : ndarray of shape (K, M)
        The code matrix.
    u : ndarray of shape (nnz,)
        One weight per nonzero entry, in the order of :func:`code_entries`.

    Returns
    -------
    U : ndarray of shape (K, M)
        The weights in the code's layout.
    """
    code = np.asarray(code)
    classes, columns = code_entries(code)
    u = np.asarray(u, dtype=np.float64)
    if u.shape != classes.shape:
        raise ValueError(
            f"entry weights must have one value per nonzero code entry ({classes.size}); "
            f"got shape {u.shape}."
        )
    U = np.zeros(code.shape)
    U[classes, columns] = u
    return U
