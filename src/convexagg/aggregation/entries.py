"""Entry weights: one aggregation weight per nonzero code entry instead of one per column.

The paper's discrepancy gives classifier ``l`` one weight ``w_l`` in every
class. With entry weights each nonzero entry ``(k, l)`` of the code has its own
weight ``u_kl >= 0``::

    rho[i, k] = sum_l u_kl d(C[k, l], Q[i, l]) (+ b_k)

so a classifier may count more for one of its classes than for another (a
``K x K``-like map, as Dirichlet calibration and matrix scaling learn, but
convex). The weights are shrunk toward shared column weights (the penalty of
:class:`~convexagg.aggregation.Penalty` with a finite ``shrink``); ``u_kl = w_l``
is the paper's model.

This is a change of the discrepancy's parametrisation only: ``rho`` is the
paper's ``rho`` of an **expanded code** with one column per nonzero entry,
holding that entry's value in its class's row and 0 (don't care) elsewhere,
on the outputs ``Q[:, columns]``. Every objective (dense, class-blocked,
Dask) and every solver therefore fits entry weights as they are; this module
maps between the two layouts. Entries are ordered by column, then class.
"""

from __future__ import annotations

import numpy as np

__all__ = ["code_entries", "entry_matrix", "expand_code"]


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
    columns, classes = np.nonzero(np.asarray(code).T)
    return classes.astype(np.intp), columns.astype(np.intp)


def expand_code(code):
    """The code with one column per nonzero entry (its value in its class, 0 elsewhere).

    With the outputs ``Q[:, columns]`` (:func:`code_entries`) its discrepancy
    at weights ``u`` is the entry-weight discrepancy of ``code`` at
    ``entry_matrix(code, u)``.

    Parameters
    ----------
    code : ndarray of shape (K, M)
        The code matrix.

    Returns
    -------
    expanded : ndarray of shape (K, nnz)
        The expanded code, of the dtype of ``code``.
    """
    code = np.asarray(code)
    classes, columns = code_entries(code)
    expanded = np.zeros((code.shape[0], classes.size), dtype=code.dtype)
    expanded[classes, np.arange(classes.size)] = code[classes, columns]
    return expanded


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
