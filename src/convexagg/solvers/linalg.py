"""The linear algebra of the Newton steps: a dense symmetric solve and PCG."""

from __future__ import annotations

import numpy as np
from scipy.linalg import solve_triangular

__all__ = ["SymmetricSolver", "pcg"]


class SymmetricSolver:
    """Solves ``A x = b`` for a dense symmetric positive (semi)definite ``A``, many ``b``.

    A Cholesky factorisation by NumPy's LAPACK (``potrf``), then two triangular
    solves (SciPy's ``trsv``). Not SciPy's ``cho_factor``: SciPy links its own
    OpenBLAS, whose threads compete with NumPy's still-spinning BLAS threads for
    the same cores, so that a factorisation right after NumPy's products can take
    tens of times longer than NumPy's own ``cholesky``; the triangular solves are
    level-2 BLAS, unthreaded. A matrix that is not positive definite (singular: ``alpha = 0``
    with vanishing curvature) gets the minimum-norm least-squares solution; a
    non-finite one non-finite solutions, which the solvers treat as a failed
    direction.
    """

    def __init__(self, A):
        self.A = A
        self._L = None
        if not np.isfinite(A).all():
            self.kind = "nonfinite"
            return
        try:
            self._L = np.linalg.cholesky(A)
            self.kind = "cholesky"
        except np.linalg.LinAlgError:
            self.kind = "lstsq"

    def solve(self, b):
        if self.kind == "cholesky":
            y = solve_triangular(self._L, b, lower=True, check_finite=False)
            return solve_triangular(self._L, y, lower=True, trans="T", check_finite=False)
        if self.kind == "lstsq":
            return np.linalg.lstsq(self.A, b, rcond=None)[0]
        return np.full_like(b, np.nan)


def pcg(matvec, rhs, atol, precondition=None, maxiter=None):
    """Preconditioned conjugate gradients for ``A d = rhs`` (``A`` given by ``matvec``).

    Stops when ``|A d - rhs| <= atol``, after ``maxiter`` iterations (``10 n``
    by default), or at a direction of non-positive curvature (a singular
    ``A``, or rounding): the iterate so far -- the preconditioned right-hand
    side if that happens at once -- is still a descent direction for the
    quadratic model. That test is why this is written out rather than taken
    from :func:`scipy.sparse.linalg.cg`, which has none. Returns ``(d, n_iter)``
    with ``n_iter`` the products with ``A``.
    """
    precondition = (lambda r: r) if precondition is None else precondition
    maxiter = 10 * rhs.size if maxiter is None else maxiter
    d = np.zeros_like(rhs)
    r = rhs.copy()
    if np.linalg.norm(r) <= atol:
        return d, 0
    z = precondition(r)
    p, rz = z.copy(), float(r @ z)
    n_iter = 0
    while n_iter < maxiter:
        Ap = matvec(p)
        n_iter += 1
        curvature = float(p @ Ap)
        if not curvature > 0:
            return (z if n_iter == 1 else d), n_iter
        step = rz / curvature
        d += step * p
        r -= step * Ap
        if np.linalg.norm(r) <= atol:
            break
        z = precondition(r)
        rz_new = float(r @ z)
        p = z + (rz_new / rz) * p
        rz = rz_new
    return d, n_iter
