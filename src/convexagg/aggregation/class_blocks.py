"""The storage layout of the class-blocked objective: baseline-shifted losses by class.

:class:`~convexagg.aggregation.DenseObjective` writes ``rho = L @ (E.T * [w, w])``
as one dense product: ``O(n K 2M)`` work per evaluation, although a one-vs-one
column touches 2 of the ``K`` classes. :class:`~convexagg.aggregation.BlockedObjective`
stores a re-encoded loss matrix whose columns each enter as few classes as
possible, grouped by class (:func:`reencode`):

1. **Baseline shift.** ``f`` does not change when the same amount is subtracted
   from every ``rho[i, k]`` of a sample (``rho[i, y_i] + logsumexp(-rho[i])`` is
   shift invariant, and so are ``P``, the gradient and the Hessian), so
   classifier ``l`` may subtract the loss of its most frequent code entry from
   every class. What is left is non-zero only for the classes whose entry
   differs: a one-vs-one column keeps ``L_pos`` for one class and ``L_neg`` for
   another (``2M`` stored columns, one class each), a one-vs-rest column keeps
   ``L_pos - L_neg`` for its one positive class (``M`` stored columns), a dense
   random column keeps one column for its minority side.
2. **Class blocks.** Stored columns that enter a single class are contiguous per
   class, so ``rho[:, k]`` and the gradient's pull-back are one matrix-vector
   product over class ``k``'s block (one batched product when all blocks have
   the same size, as for one-vs-one and one-vs-rest); columns shared by several
   classes form one dense block handled as in ``DenseObjective``.

Class intercepts and sample weights leave this structure as it is: the baseline
shift changes every class of a sample by the same amount, so ``f`` as a function
of ``(w, b)`` -- and every derivative -- is unchanged by it.
"""

from __future__ import annotations

import numpy as np

__all__ = ["reencode"]

# stored-column coefficients on (L_pos, L_neg) of the code entries +1, -1, 0
_DVEC = {1: (1.0, 0.0), -1: (0.0, 1.0), 0: (0.0, 0.0)}


def reencode(code):
    """Stored columns of the baseline-shifted losses, grouped by class.

    Classifier ``l`` subtracts ``d(b_l, Q[:, l])`` from every class, ``b_l`` its
    most frequent code entry (ties: 0, then -1, then +1). For each other entry
    value ``v`` that occurs in column ``l`` it stores ``d(v) - d(b_l)`` once, for
    the classes with that entry.

    Parameters
    ----------
    code : ndarray of shape (K, M)
        The code matrix.

    Returns
    -------
    spec : dict
        ``weight`` (m,): classifier of each stored column; ``coef`` (m, 2): the
        stored column is ``coef[c, 0] L_pos + coef[c, 1] L_neg`` of that
        classifier; ``classes`` (m, K) bool: the classes it enters; ``offsets``
        (K + 1,): class ``k``'s single-class block is ``offsets[k]:offsets[k+1]``,
        and ``offsets[K]:m`` are the columns shared by several classes.
    """
    code = np.asarray(code)
    K, M = code.shape
    values = (0, -1, 1)  # argmax picks the first maximum: ties go to 0, then -1
    counts = np.stack([(code == v).sum(axis=0) for v in values])
    base = np.asarray(values)[counts.argmax(axis=0)]  # (M,)
    weight, coef, classes = [], [], []
    for v in (1, -1, 0):
        members = (code == v) & (base != v)[None, :]  # (K, M)
        cols = np.flatnonzero(members.any(axis=0))
        weight.append(cols)
        base_coef = np.array([_DVEC[b] for b in base[cols].tolist()]).reshape(-1, 2)
        coef.append(np.asarray(_DVEC[v])[None, :] - base_coef)
        classes.append(members[:, cols].T)
    weight = np.concatenate(weight)
    coef = np.concatenate(coef)
    classes = np.concatenate(classes)
    weight = weight.astype(np.intp)
    single = classes.sum(axis=1) == 1
    owner = np.where(single, classes.argmax(axis=1), K)  # shared columns sort last
    order = np.lexsort((weight, owner))
    sizes = np.bincount(owner[single], minlength=K)
    return {
        "weight": weight[order],
        "coef": coef[order],
        "classes": classes[order],
        "offsets": np.concatenate([[0], np.cumsum(sizes)]).astype(np.intp),
    }
