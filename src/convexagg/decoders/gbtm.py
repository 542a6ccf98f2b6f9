"""The generalized Bradley-Terry engine (GBTM; Huang, Weng & Lin 2006).

:func:`generalized_bradley_terry` serves the GBTM decoder (:mod:`.bradley_terry`),
the Hastie-Tibshirani coupling (the one-vs-one special case, :mod:`.pairwise`) and WMAP (the same
model with a Dirichlet prior and learned weights, :mod:`.wmap`).

Notation (baselines spec section 4.3, in the library's layout): for sample ``i``
and column ``j`` of the code, with class probabilities ``p`` (a row of ``P``),
the team sums are ``pi+_j = sum_{C[k,j]=+1} p_k``, ``pi-_j = sum_{C[k,j]=-1} p_k``,
``pi_j = pi+_j + pi-_j``, and the team model is ``mu_j = pi+_j / pi_j``. The
per-sample objective, with binary outputs ``r`` and column weights ``v``, is::

    F(p) = sum_j v_j KL2(r_j || mu_j(p))  -  c sum_k log p_k

(``KL2`` the Bernoulli KL divergence; ``c = 0`` for GBTM, the WMAP prior
strength otherwise). With

    a_s = sum_{C[s,j]=+1} v_j r_j / pi+_j + sum_{C[s,j]=-1} v_j (1 - r_j) / pi-_j
    b_s = sum_{C[s,j]!=0} v_j / pi_j

the gradient in the softmax parameters ``p = softmax(theta)`` is
``p * (b - a) + c (K p - 1)``, and the cyclic fixed point (one class at a time,
then renormalise) is ``p_s <- (p_s a_s + c) / (b_s + c K)``.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
from scipy.special import softmax
from sklearn.exceptions import ConvergenceWarning

__all__ = [
    "BradleyTerryResult",
    "check_bradley_terry_conditions",
    "classifier_sample_counts",
    "generalized_bradley_terry",
    "resolve_weights",
    "solve_rows",
    "split_code",
    "team_gradient",
    "team_hessian",
    "team_objective",
    "team_sums",
]


@dataclass
class BradleyTerryResult:
    """Output of :func:`generalized_bradley_terry`.

    Attributes
    ----------
    proba : ndarray of shape (n_samples, n_classes)
        The class probabilities ``p`` of every sample.
    n_iter : ndarray of shape (n_samples,)
        Sweeps (updates of every class once) each sample took.
    converged : ndarray of shape (n_samples,)
        Whether each sample met the stopping rule.
    objective : ndarray of shape (n_sweeps + 1, n_samples) or None
        With ``record_history=True``: ``F(p)`` at the start and after every
        sweep; NaN once a sample has stopped.
    n_fallback : int
        Samples finished by the Newton safeguard instead of the fixed point.
    """

    proba: np.ndarray
    n_iter: np.ndarray
    converged: np.ndarray
    objective: np.ndarray | None = None
    n_fallback: int = 0


def classifier_sample_counts(code, y):
    """``N_j``: training samples whose class column ``j`` of ``code`` uses.

    This is the size of binary problem ``j``'s training set:
    ``N_j = sum_k n_k |C[k, j]|`` with ``n_k`` the count of class ``k`` in ``y``.
    """
    code = np.asarray(code)
    counts = np.bincount(np.asarray(y), minlength=code.shape[0]).astype(np.float64)
    return counts @ np.abs(code).astype(np.float64)


def _comparison_graph_connected(code):
    """Is the graph "classes a, b are on opposite sides of some column" connected?"""
    pos = (code == 1).astype(np.float64)
    neg = (code == -1).astype(np.float64)
    adjacency = (pos @ neg.T + neg @ pos.T) > 0
    n_classes = code.shape[0]
    reached = np.zeros(n_classes, dtype=bool)
    reached[0] = True
    frontier = reached.copy()
    while frontier.any():
        new = adjacency[frontier].any(axis=0) & ~reached
        reached |= new
        frontier = new
    return bool(reached.all())


def check_bradley_terry_conditions(code, weights, prior=0.0):
    """Raise ``ValueError`` when the fixed point is not guaranteed to be well defined.

    Huang, Weng & Lin's conditions (spec section 4.3): weights ``v_j >= 0``
    and finite; among the columns with ``v_j > 0``, every class is used (R2)
    and the comparison graph (an edge between two classes on opposite sides of a
    column) is connected. Outputs strictly inside ``(0, 1)`` -- the third
    condition -- are ensured by clipping. A positive ``prior`` (WMAP) makes the
    problem well defined without the graph conditions.
    """
    code = np.asarray(code)
    v = np.asarray(weights, dtype=np.float64)
    if v.shape != (code.shape[1],):
        raise ValueError(
            f"weights must have one entry per code column ({code.shape[1]}), got shape {v.shape}."
        )
    if not np.isfinite(v).all() or (v < 0).any():
        raise ValueError("Bradley-Terry weights must be finite and non-negative.")
    if prior > 0:
        return  # the prior alone makes the problem well posed (all-zero weights: uniform)
    if not (v > 0).any():
        raise ValueError("Bradley-Terry weights are all zero; no classifier would be used.")
    active = code[:, v > 0]
    unused = ~(active != 0).any(axis=1)
    if unused.any():
        raise ValueError(
            f"Bradley-Terry convergence condition violated: class {int(np.flatnonzero(unused)[0])} "
            "is used by no classifier with a positive weight (a class without comparisons "
            "has no finite maximum-likelihood probability)."
        )
    if not _comparison_graph_connected(active):
        raise ValueError(
            "Bradley-Terry convergence condition violated: the classifiers with positive "
            "weight split the classes into groups that are never compared with each other, "
            "so the probabilities of the groups are not identifiable."
        )


def team_sums(P, pos, neg):
    """``(pi+, pi-, pi)`` of shape ``(n, M)`` from ``P`` ``(n, K)`` and indicators ``(K, M)``."""
    plus = P @ pos
    minus = P @ neg
    return plus, minus, plus + minus


def split_code(code):
    code = np.asarray(code)
    return (code == 1).astype(np.float64), (code == -1).astype(np.float64)


def _weighted_columns(R, code, weights):
    """Drop zero-weight columns (their team sums may vanish; they contribute nothing)."""
    v = np.asarray(weights, dtype=np.float64)
    keep = v > 0
    if keep.all():
        return R, np.asarray(code), v
    return R[:, keep], np.asarray(code)[:, keep], v[keep]


def team_objective(R, code, weights, P, prior=0.0):
    """``F(p)`` for every row: ``sum_j v_j KL2(r_j || mu_j(p)) - c sum_k log p_k``.

    Parameters
    ----------
    R : ndarray of shape (n_samples, n_classifiers)
        Binary probabilities, strictly inside ``(0, 1)``.
    code : ndarray of shape (n_classes, n_classifiers)
    weights : ndarray of shape (n_classifiers,)
    P : ndarray of shape (n_samples, n_classes)
        Strictly positive; normalised to sum 1 first.
    prior : float, default=0.0

    Returns
    -------
    ndarray of shape (n_samples,)
    """
    R, code, v = _weighted_columns(R, code, weights)
    P = P / P.sum(axis=1, keepdims=True)
    pos, neg = split_code(code)
    plus, minus, total = team_sums(P, pos, neg)
    kl = R * (np.log(R) - np.log(plus / total)) + (1 - R) * (np.log1p(-R) - np.log(minus / total))
    return kl @ v - prior * np.log(P).sum(axis=1)


def team_gradient(R, code, weights, P, prior=0.0):
    """Gradient of :func:`team_objective` in ``theta`` (``p = softmax(theta)``).

    ``p * (b - a) + c (K p - 1)``, shape ``(n_samples, n_classes)``; every row is
    orthogonal to the all-ones vector.
    """
    R, code, v = _weighted_columns(R, code, weights)
    P = P / P.sum(axis=1, keepdims=True)
    pos, neg = split_code(code)
    plus, minus, total = team_sums(P, pos, neg)
    a = (v * R / plus) @ pos.T + (v * (1 - R) / minus) @ neg.T
    b = (v / total) @ (pos + neg).T
    K = P.shape[1]
    return P * (b - a) + prior * (K * P - 1.0)


def _outer_columns(ind):
    """``(M, K*K)``: row ``j`` is the flattened outer product of column ``j`` of ``ind``."""
    K, M = ind.shape
    return (ind.T[:, :, None] * ind.T[:, None, :]).reshape(M, K * K)


def team_hessian(R, code, weights, P, prior=0.0):
    """Hessian of :func:`team_objective` in ``theta``, shape ``(n_samples, K, K)``.

    ``H = diag(p (b - a + c K)) - (p p') * [U D U' - Pos D+ Pos' - Neg D- Neg' + c K]``
    with ``U = Pos + Neg``, ``D = v / pi^2``, ``D+ = v r / pi+^2``,
    ``D- = v (1 - r) / pi-^2`` (diagonal, per sample) -- the spec's
    ``sum_j v_j (Sigma^S - r Sigma^+ - (1 - r) Sigma^-) + c K Sigma`` written
    with matrix products: each bracketed term is one ``(n, M) @ (M, K^2)``
    product with the columns' flattened outer products. ``H 1 = 0`` (shift
    invariance of ``theta``).
    """
    R, code, v = _weighted_columns(R, code, weights)
    P = P / P.sum(axis=1, keepdims=True)
    pos, neg = split_code(code)
    use = pos + neg
    plus, minus, total = team_sums(P, pos, neg)
    a = (v * R / plus) @ pos.T + (v * (1 - R) / minus) @ neg.T
    b = (v / total) @ use.T
    n, K = P.shape
    G = (
        (v / total**2) @ _outer_columns(use)
        - (v * R / plus**2) @ _outer_columns(pos)
        - (v * (1 - R) / minus**2) @ _outer_columns(neg)
        + prior * K
    ).reshape(n, K, K)
    H = -P[:, :, None] * P[:, None, :] * G
    idx = np.arange(K)
    H[:, idx, idx] += P * (b - a + prior * K)
    return H


def solve_rows(H, g):
    """``H^-1 g`` row by row; NaN for a row whose ``H`` is exactly singular (several
    ``p_k`` at the ``e^-300`` floor, seen with sparse codes), which then takes the
    ``|H|^-1`` route of :func:`_newton_polish`."""
    try:
        return np.linalg.solve(H, g[:, :, None])[:, :, 0]
    except np.linalg.LinAlgError:
        out = np.full_like(g, np.nan)
        for i in range(H.shape[0]):
            try:
                out[i] = np.linalg.solve(H[i], g[i])
            except np.linalg.LinAlgError:
                pass
        return out


def _newton_polish(R, code, v, prior, P, tol, max_steps=100):
    """Finish rows of the fixed point by damped Newton steps in ``theta`` (batched).

    The safeguard for rows the cyclic updates leave unconverged or, with a
    prior, whose objective rose. Direction ``-(H + 11'/K)^-1 g`` (the rank-one
    term fixes the shift of ``theta``); where that is not a descent direction
    (non-convex codes) ``-|H + 11'/K|^-1 g`` with eigenvalues taken by absolute
    value, floored, which also leaves saddle points. Armijo backtracking per
    row; a row stops when its scaled gradient is below ``tol``. Returns
    ``(P, ok)``.
    """
    n, K = P.shape
    scale = v.sum() + prior * K
    # a probability the fixed point drove to exactly 0 starts at log(tiny), not at
    # -inf, where Newton could never move it (and numpy would warn)
    theta = np.log(np.maximum(P / P.sum(axis=1, keepdims=True), np.finfo(float).tiny))
    ok = np.zeros(n, dtype=bool)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore", under="ignore"):
        for _ in range(max_steps):
            P = softmax(theta, axis=1)
            g = team_gradient(R, code, v, P, prior)
            ok = np.abs(g).max(axis=1) <= tol * scale
            todo = np.flatnonzero(~ok)
            if todo.size == 0:
                break
            Rt, Pt, gt = R[todo], P[todo], g[todo]
            H = team_hessian(Rt, code, v, Pt, prior) + 1.0 / K
            finite = np.isfinite(H).all(axis=(1, 2))
            H[~finite] = np.eye(K)  # overflowing curvature (tiny p): gradient step
            d = -solve_rows(H, gt)
            slope = (gt * d).sum(axis=1)
            uphill = np.flatnonzero(~(slope < 0) | ~np.isfinite(d).all(axis=1))
            if uphill.size:
                # H not positive definite (non-convex codes): |H|^-1 g, eigenvalues
                # by absolute value, so the step also leaves saddle points.
                lam, V = np.linalg.eigh(H[uphill])
                lam = np.maximum(np.abs(lam), 1e-8 * scale)
                coef = np.einsum("nkl,nk->nl", V, gt[uphill]) / lam
                d[uphill] = -np.einsum("nkl,nl->nk", V, coef)
                slope[uphill] = (gt[uphill] * d[uphill]).sum(axis=1)
            F = team_objective(Rt, code, v, Pt, prior)
            step = np.ones(todo.size)
            accept = np.zeros(todo.size, dtype=bool)
            for _ in range(50):
                trial = softmax(theta[todo] + step[:, None] * d, axis=1)
                F_new = team_objective(Rt, code, v, trial, prior)
                # Armijo, with a slack at the rounding level of F: near the optimum
                # the predicted decrease is below what F can resolve.
                accept |= F_new <= F + 1e-4 * step * slope + 1e-13 * (1.0 + np.abs(F))
                if accept.all():
                    break
                step = np.where(accept, step, step / 2)
            if not accept.any():
                break
            theta[todo[accept]] += step[accept, None] * d[accept]
            # Keep p_k >= e^-300 max p (~1e-130): beyond that the curvature
            # terms v / pi^2 overflow. Never binds at an optimum for r in [eps, 1-eps]
            # unless classes differ by a factor e^300.
            theta = np.maximum(theta, theta.max(axis=1, keepdims=True) - 300.0)
    return softmax(theta, axis=1), ok


# Rows still iterating after _NEWTON_AFTER sweeps, once they are at most
# _NEWTON_FRACTION of the batch or _NEWTON_ROWS rows, go to the Newton safeguard.
_NEWTON_AFTER = 50
_NEWTON_FRACTION = 0.01
_NEWTON_ROWS = 32


def generalized_bradley_terry(
    R,
    code,
    weights,
    *,
    prior=0.0,
    tol=1e-10,
    max_iter=100,
    p0=None,
    record_history=False,
    early_newton=True,
):
    """Fit the generalized Bradley-Terry model to every row of ``R``.

    Huang, Weng & Lin's cyclic fixed point ("Algorithm 2"): for each class ``s``
    in turn ``p_s <- (p_s a_s + c) / (b_s + c K)``, then renormalise ``p``
    (notation in the module docstring). All rows are updated in lock-step, and a
    row leaves the active set as soon as it meets the stopping rule::

        max_s |p_s - p_s(previous sweep)| <= tol   and
        max_s |grad_theta F|_s / (sum_j v_j + c K) <= tol

    where the gradient of class ``s`` is the one its own update computed during
    the sweep (Huang et al.'s stationarity ``dF/dp_s = 0``, made scale free;
    the tolerances are the spec's choice, the paper gives none).

    Implementation. The state is kept transposed -- ``(classes, samples)`` and
    ``(columns, samples)`` -- so that each class update is a handful of numpy
    operations over the columns using that class. Team sums are updated
    incrementally after every class (``O(nnz(code) n)`` per sweep), and a team
    of one class is never summed: its ``p_s / pi_j`` is 1, so its share of
    ``p_s a_s`` is a constant (for one-vs-one codes ``p_s a_s`` is constant and
    the update is Hastie & Tibshirani's). Since ``a_s / b_s`` does not depend on
    the scale of ``p``, the state is renormalised only when its scale drifts
    (the running scale ``Z`` enters the prior term, which makes the update the
    same as normalising after every class, as Huang et al. do).

    With ``prior == 0`` (GBTM) no update increases ``F`` (Huang et al.'s
    convergence argument). With ``prior > 0`` (WMAP, a reconstruction)
    monotonicity is only observed, not proved, so ``F`` is checked every 10
    sweeps. Safeguard (spec section 4.6, applied to both): a row whose ``F``
    rose, or which has not converged after ``max_iter`` sweeps -- the cyclic
    updates converge only linearly, and slowly when some classes get tiny
    probabilities -- is finished by damped Newton steps on ``theta``
    (``n_fallback`` counts them); a ``ConvergenceWarning`` is emitted only if
    that fails too. For speed the same happens to the last rows still running
    after 50 sweeps once they are at most 1 % of the batch or 32 rows (a sweep
    over a handful of rows costs as much Python overhead as one over all of
    them); they reach the same optimum, to ``tol``, when it is unique.

    Parameters
    ----------
    R : array-like of shape (n_samples, n_classifiers)
        Binary probabilities, strictly inside ``(0, 1)`` (clip them first).
    code : array-like of shape (n_classes, n_classifiers)
    weights : array-like of shape (n_classifiers,)
        Non-negative column weights ``v``; zero-weight columns are ignored.
    prior : float, default=0.0
        Dirichlet prior strength ``c`` (0: plain GBTM).
    tol : float, default=1e-10
    max_iter : int, default=100
        Sweeps of the fixed point before the Newton safeguard finishes the rows
        still running (0: Newton from ``p0`` directly).
    p0 : array-like of shape (n_samples, n_classes), default=None
        Strictly positive starting points (uniform when None).
    record_history : bool, default=False
        Record ``F`` after every sweep (costs ``O(n M)`` logarithms per sweep).
    early_newton : bool, default=True
        Hand the last few slow rows to Newton after 50 sweeps (see above);
        ``False`` runs the fixed point up to ``max_iter`` for every row.

    Returns
    -------
    BradleyTerryResult
    """
    R = np.asarray(R, dtype=np.float64)
    code = np.asarray(code)
    v = np.asarray(weights, dtype=np.float64)
    check_bradley_terry_conditions(code, v, prior)
    n, K = R.shape[0], code.shape[0]
    keep = v > 0
    code, v, R = code[:, keep], v[keep], R[:, keep]
    M = code.shape[1]
    pos, neg = split_code(code)  # (K, M)
    scale = v.sum() + prior * K

    # Sides: row q < M is column q's positive team, row M + q its negative team.
    members = np.hstack([pos, neg])  # (K, 2M)
    single = members.sum(axis=0) == 1
    multi = np.flatnonzero(~single)  # teams of several classes: their sums are kept
    multi_idx = [np.flatnonzero(members[s, multi]) for s in range(K)]
    use_idx = [np.flatnonzero(code[s] != 0) for s in range(K)]
    use_v = [v[idx] for idx in use_idx]

    if p0 is None:
        P_start = np.full((n, K), 1.0 / K)
    else:
        P_start = np.asarray(p0, dtype=np.float64)
        if P_start.shape != (n, K) or not (P_start > 0).all():
            raise ValueError(f"p0 must be strictly positive with shape {(n, K)}.")
        P_start = P_start / P_start.sum(axis=1, keepdims=True)
    proba = P_start.copy()
    n_iter = np.zeros(n, dtype=np.intp)
    converged = np.zeros(n, dtype=bool)
    fallback = np.zeros(n, dtype=bool)

    # Working state of the active rows, transposed (samples last).
    active = np.arange(n)
    p = P_start.T.copy()  # (K, n_act), sums to Z
    W = np.vstack([v[:, None] * R.T, v[:, None] * (1.0 - R.T)])  # (2M, n_act): team "wins"
    fixed = (members * single) @ W  # (K, n_act): wins of one-class teams (p_s / pi = 1)
    W_multi = W[multi]
    const = (W[:M] * np.log(R.T) + W[M:] * np.log1p(-R.T)).sum(axis=0)

    def objective(p, const, W):
        Z = p.sum(axis=0)
        plus, minus = pos.T @ p, neg.T @ p
        return (
            const
            - (W[:M] * np.log(plus)).sum(axis=0)
            - (W[M:] * np.log(minus)).sum(axis=0)
            + v @ np.log(plus + minus)
            - prior * (np.log(p).sum(axis=0) - K * np.log(Z))
        )

    def rebuild(p):
        """Normalise ``p`` and recompute the kept team sums from it (no drift)."""
        p /= p.sum(axis=0)
        sums = members[:, multi].T @ p
        return p, sums, pos.T @ p + neg.T @ p, np.ones(p.shape[1])

    p, S_multi, total, Z = rebuild(p)
    check_every = 1 if record_history else 10
    track = record_history or prior > 0
    F = objective(p, const, W) if track else None
    history = [np.full(n, np.nan)] if record_history else None
    if record_history:
        history[0][:] = F

    for sweep in range(1, max_iter + 1):
        p_old = p / Z
        gmax = np.zeros(active.size)
        for s in range(K):
            mi, ui = multi_idx[s], use_idx[s]
            pa = fixed[s]  # p_s a_s
            if mi.size:
                team = S_multi[mi]
                pa = pa + p[s] * (W_multi[mi] / team).sum(axis=0)
            pair = total[ui]
            b = use_v[s] @ (1.0 / pair)
            if prior == 0:
                new = pa / b
                g = p[s] * b - pa
            else:
                # p_s <- (p_s a_s + c) / (b_s + c K) on the normalised vector p / Z,
                # written for the unnormalised p (a_s and b_s scale as 1 / Z).
                new = Z * (pa + prior) / (Z * b + prior * K)
                g = p[s] * b - pa + prior * (K * p[s] / Z - 1.0)
                Z = Z + (new - p[s])
            np.maximum(gmax, np.abs(g), out=gmax)
            delta = new - p[s]
            p[s] = new
            if mi.size:
                S_multi[mi] = team + delta  # (faster than a fancy-indexed +=)
            total[ui] = pair + delta
        if prior == 0:
            Z = p.sum(axis=0)
        n_iter[active] = sweep
        done = (np.abs(p / Z - p_old).max(axis=0) <= tol) & (gmax <= tol * scale)
        stop = done
        if track and (sweep % check_every == 0 or sweep == max_iter):
            F_new = objective(p, const, W)
            if record_history:
                row = np.full(n, np.nan)
                row[active] = F_new
                history.append(row)
            if prior > 0:
                rose = F_new > F + 1e-12 * (1.0 + np.abs(F))
                fallback[active[rose & ~done]] = True
                stop = done | rose
            F = F_new
        if stop.any():
            converged[active[done]] = True
            proba[active[stop]] = (p[:, stop] / Z[stop]).T
            rows = ~stop
            active = active[rows]
            p, S_multi, total, Z = p[:, rows], S_multi[:, rows], total[:, rows], Z[rows]
            W, W_multi, fixed, const = W[:, rows], W_multi[:, rows], fixed[:, rows], const[rows]
            if track:
                F = F[rows]
            if active.size == 0:
                break
        few = active.size <= max(_NEWTON_FRACTION * n, _NEWTON_ROWS)
        if early_newton and sweep >= _NEWTON_AFTER and few:
            break  # a few slow rows: sweeps cost Python overhead, Newton is cheaper
        if np.any(np.abs(np.log(Z)) > 1.0) or sweep % 50 == 0:
            p, S_multi, total, Z = rebuild(p)
    if active.size:
        proba[active] = (p / Z).T
        fallback[active] = True
    rows = np.flatnonzero(fallback)
    if rows.size:
        proba[rows], ok = _newton_polish(R[rows], code, v, prior, proba[rows], tol)
        converged[rows] = ok
        if not ok.all():
            warnings.warn(
                f"Generalized Bradley-Terry: {int((~ok).sum())} of {n} samples did not "
                f"converge (tol={tol}) in {max_iter} sweeps and the Newton safeguard.",
                ConvergenceWarning,
                stacklevel=2,
            )
    objective_history = np.array(history) if record_history else None
    return BradleyTerryResult(proba, n_iter, converged, objective_history, int(rows.size))


def resolve_weights(weights, code, y, *, normalise=False):
    """Column weights from ``"uniform"``, ``"n_samples"`` (``N_j``) or an array.

    Returns ``(weights, counts)``: the weights (scaled to sum 1 when
    ``normalise``) and the per-column training counts ``N_j``.
    """
    counts = classifier_sample_counts(code, y)
    n_classifiers = code.shape[1]
    if isinstance(weights, str):
        if weights == "uniform":
            v = np.ones(n_classifiers)
        else:  # "n_samples"
            v = counts.copy()
    else:
        v = np.asarray(weights, dtype=np.float64)
        if v.shape != (n_classifiers,):
            raise ValueError(
                f"weights must have one entry per code column ({n_classifiers}), got shape "
                f"{v.shape}."
            )
    if normalise and v.sum() > 0:
        v = v / v.sum()
    return v, counts
