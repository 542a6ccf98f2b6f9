"""The likelihood and the decode on an array-API namespace (PyTorch, CuPy, ...).

The same mathematics as :class:`~convexagg.aggregation.DenseObjective` (the
reference it is tested against) written with the array API standard's
functions only, so the ``n_samples``-sized work -- the losses, ``rho``, the
softmax, the gradient's and the Hessian's products -- runs where the outputs
live (a GPU), and only vectors and matrices of the size of the variables come
back to the host, where the solver and its small dense Newton system stay
(NumPy). :mod:`convexagg._array_api` says when this path is taken.
"""

from __future__ import annotations

import numpy as np

from ..losses import LOSS_CAP, check_loss
from .base import ObjectiveBase
from .discrepancy import side_indicators, side_weights
from .penalty import Penalty
from .point import Point

__all__ = ["CHUNK_VALUES", "ArrayAPIObjective", "array_api_discrepancies", "array_api_losses"]

_EPS64 = float(np.finfo(np.float64).eps)
_LOG_CAP = float(np.log(LOSS_CAP))
#: losses computed per block of rows by :func:`array_api_losses` (256 MB in float32)
CHUNK_VALUES = 1 << 26


def array_api_losses(Q, loss, output, xp, dtype):
    """The stacked losses ``[L_pos, L_neg]`` of ``Q`` (``n x 2M``) in ``dtype``, on ``Q``'s device.

    The losses of :func:`convexagg.losses.binary_losses`: probabilities clipped
    into ``[eps, 1 - eps]`` (float64's ``eps``) and ``1 - q`` formed before the
    cast to a float32 ``dtype``, margin losses capped at ``LOSS_CAP``. Computed
    in blocks of rows written into the result (:data:`CHUNK_VALUES` losses
    each): the standard has no ``out=``, and a whole-array expression would hold
    several temporaries of the result's size (10^7 x 650 float32 losses take
    26 GB of a GPU's memory already).

    Parameters
    ----------
    Q : array of shape (n_samples, M)
        Binary outputs of namespace ``xp``, validated.
    loss : str
        As in :func:`convexagg.losses.binary_losses`.
    output : {"proba", "margin"}
        What ``Q`` holds.
    xp : module
        The namespace.
    dtype : dtype of xp
        Precision of the losses.

    Returns
    -------
    L : array of shape (n_samples, 2M)
        The losses.
    """
    check_loss(loss, output)
    n, M = (int(d) for d in Q.shape)
    step = max(1, CHUNK_VALUES // (2 * M))
    if n <= step:
        return _losses(Q, loss, output, xp, dtype)
    L = xp.empty((n, 2 * M), dtype=dtype, device=Q.device)
    for start in range(0, n, step):
        stop = min(n, start + step)
        L[start:stop, :] = _losses(Q[start:stop, :], loss, output, xp, dtype)
    return L


def _losses(Q, loss, output, xp, dtype):
    """:func:`array_api_losses` of one block of rows."""
    if loss == "cross_entropy":
        # clipped and complemented in the wider of the two precisions, then logged, as
        # the NumPy kernels do (in float32, 1 - q is clipped at eps rather than q at 1 - eps)
        if Q.dtype == xp.float64 or dtype == xp.float64:
            q = xp.clip(xp.astype(Q, xp.float64), min=_EPS64, max=1.0 - _EPS64)
            sides = xp.astype(xp.concat([q, 1.0 - q], axis=1), dtype)
        else:
            sides = xp.clip(xp.concat([Q, 1.0 - Q], axis=1), min=_EPS64)
        return -xp.log(sides)
    q = xp.astype(Q, dtype)
    if loss == "exponential":
        m = q - 0.5 if output == "proba" else xp.clip(q, min=-_LOG_CAP, max=_LOG_CAP)
        return xp.exp(xp.concat([-m, m], axis=1))
    if loss == "logistic":
        zero = xp.zeros_like(q)
        L = xp.concat([xp.logaddexp(zero, -q), xp.logaddexp(zero, q)], axis=1)
    else:  # hinge
        L = xp.clip(xp.concat([1.0 - q, 1.0 + q], axis=1), min=0.0)
    return xp.clip(L, max=LOSS_CAP)


def array_api_discrepancies(Q, code, w, intercept, *, loss, output, namespace, dtype):
    """``rho`` of binary outputs ``Q`` on their namespace: the losses, one product.

    Parameters
    ----------
    Q : array of shape (n_samples, M)
        Binary outputs of namespace ``xp``, validated.
    code : ndarray of shape (K, M)
        The code matrix.
    w : ndarray of shape (M,) or (K, M)
        Weights, one per column or one per entry (:func:`~convexagg.aggregation.side_weights`).
    intercept : ndarray of shape (K,) or None
        Class intercepts.
    loss, output : str
        As in :func:`convexagg.losses.binary_losses`.
    namespace : Namespace
        Namespace and device of ``Q``.
    dtype : dtype of the namespace
        Precision of the losses and the product.

    Returns
    -------
    rho : array of shape (n_samples, K)
        The discrepancies, on ``Q``'s namespace and device, in ``dtype``.
    """
    xp, device = namespace.xp, namespace.device
    L = array_api_losses(Q, loss, output, xp, dtype)
    W = xp.asarray(side_weights(code, w), dtype=dtype, device=device)
    rho = L @ W
    if intercept is not None:
        rho = rho + xp.asarray(intercept, dtype=dtype, device=device)
    return rho


class ArrayAPIObjective(ObjectiveBase):
    """The likelihood (paper eq. 12) with its samples on an array-API device.

    What :class:`~convexagg.aggregation.DenseObjective` computes, written in the
    array API: the stacked losses ``L`` (``n x 2M``) stay on the device; value,
    gradient, Hessian-vector products, the Hessian's diagonal and its dense
    per-class form are reduced there and returned as float64 NumPy arrays
    (``n_variables`` long, or ``n_variables`` square) for the host solver.

    Parameters
    ----------
    L : array of shape (n_samples, 2M)
        Stacked losses on the device (:func:`array_api_losses`).
    code : ndarray of shape (n_classes, M)
        The code matrix (host).
    y : array of shape (n_samples,)
        Integer class indices, on ``L``'s device.
    penalty : Penalty, default=None
        ``Penalty()`` (none) when None.
    namespace : Namespace
        Namespace and device of ``L``.
    fit_intercept : bool, default=False
        Free class intercepts after the weights.
    sample_weight : array of shape (n_samples,), default=None
        Weights of the samples (validated, non-negative, on the device).
    """

    def __init__(
        self,
        L,
        code,
        y,
        penalty=None,
        *,
        namespace,
        fit_intercept=False,
        sample_weight=None,
    ):
        self.namespace, self.L = namespace, L
        self.xp, self.device = xp, device = namespace.xp, namespace.device
        self.dtype = L.dtype
        self.code = np.asarray(code)
        self.penalty = Penalty() if penalty is None else penalty
        self.n_samples = int(L.shape[0])
        self.n_classes, self.n_weights = self.code.shape
        self.n_intercepts = self.n_classes if fit_intercept else 0
        self.y = y
        classes = xp.arange(self.n_classes, device=device)
        self.Y = xp.astype(xp.reshape(y, (-1, 1)) == classes, self.dtype)
        if sample_weight is None:
            self.s = xp.ones(self.n_samples, dtype=self.dtype, device=device)
        else:
            s = xp.astype(sample_weight, self.dtype)
            self.s = s / xp.max(s)
        self._scale = float(xp.sum(self.s))
        ET = side_indicators(self.code)
        self.ET = ET
        self._ET = xp.asarray(ET, dtype=self.dtype, device=device)
        # per class: the variables it enters and the columns of L they read
        M = self.n_weights
        self._classes = []
        for k in range(self.n_classes):
            pos, neg = ET[:M, k] > 0, ET[M:, k] > 0
            cols = np.flatnonzero(pos | neg)
            source = np.where(pos[cols], cols, M + cols)
            self._classes.append((cols, xp.asarray(source, device=device)))

    def _host(self, a):
        return self.namespace.to_host(a)

    def _W(self, x):
        """Side weights and intercepts of ``x`` on the device."""
        xp, M = self.xp, self.n_weights
        x = np.asarray(x, dtype=np.float64)
        W = xp.asarray(side_weights(self.code, x[:M]), dtype=self.dtype, device=self.device)
        b = None
        if self.n_intercepts:
            b = xp.asarray(x[M:], dtype=self.dtype, device=self.device)
        return W, b

    def rho(self, x):
        """The discrepancies ``rho`` at ``x`` (paper eq. 1), on the device.

        Parameters
        ----------
        x : ndarray of shape (n_variables,)
            Weights, then intercepts.

        Returns
        -------
        rho : array of shape (n_samples, n_classes)
            The discrepancies.
        """
        W, b = self._W(x)
        rho = self.L @ W
        return rho if b is None else rho + b

    def _project(self, R):
        """Pull an ``(n, K)`` device matrix (times the sample weights) back to the
        variables, on the host, divided by the weights' sum."""
        xp = self.xp
        G = self._host(xp.matmul(xp.permute_dims(self.L, (1, 0)), R)).astype(np.float64)
        g2 = np.einsum("lk,lk->l", G, self.ET)
        M = self.n_weights
        g = g2[:M] + g2[M:]
        if self.n_intercepts:
            g = np.concatenate([g, self._host(xp.sum(R, axis=0)).astype(np.float64)])
        return g / self._scale

    def evaluate(self, x):
        """Value, gradient and class probabilities at ``x``.

        Parameters
        ----------
        x : ndarray of shape (n_variables,)
            Weights, then intercepts.

        Returns
        -------
        point : Point
            ``P`` on the device; value and gradient on the host.
        """
        xp = self.xp
        x = np.asarray(x, dtype=np.float64)
        rho = self.rho(x)
        top = xp.max(-rho, axis=1, keepdims=True)
        lse = xp.log(xp.sum(xp.exp(-rho - top), axis=1, keepdims=True)) + top
        per_sample = xp.sum(rho * self.Y, axis=1) + lse[:, 0]
        value = float(xp.sum(self.s * per_sample)) / self._scale
        P = xp.exp(-rho - lse)
        s = xp.reshape(self.s, (-1, 1))
        grad = self._project((self.Y - P) * s) + self.penalty.grad(x, self.n_weights)
        return Point(x=x, value=value + self.penalty.value(x, self.n_weights), grad=grad, P=P)

    def hessp(self, point, v):
        """Hessian-vector product ``H(x) v`` at ``point``.

        Parameters
        ----------
        point : Point
            The result of :meth:`evaluate` at ``x``.
        v : ndarray of shape (n_variables,)
            The vector.

        Returns
        -------
        Hv : ndarray of shape (n_variables,)
            The product.
        """
        xp = self.xp
        v = np.asarray(v, dtype=np.float64)
        P = point.P
        PA = P * self.rho(v)
        B = PA - P * xp.sum(PA, axis=1, keepdims=True)
        Hv = self._project(B * xp.reshape(self.s, (-1, 1)))
        return Hv + self.penalty.hessp(v, self.n_weights)

    def _class_columns(self, k):
        """``(cols, E_k)``: the variables class ``k`` enters and their discrepancy columns."""
        xp = self.xp
        cols, source = self._classes[k]
        Ek = xp.take(self.L, source, axis=1)
        if self.n_intercepts:
            cols = np.append(cols, self.n_weights + k)
            ones = xp.ones((self.n_samples, 1), dtype=self.dtype, device=self.device)
            Ek = xp.concat([Ek, ones], axis=1)
        return cols, Ek

    def _first_moments(self, P):
        """``S[i, j] = sum_k P_ik D_ikj`` per variable (``n x n_variables``, on the device)."""
        xp, M = self.xp, self.n_weights
        PE = P @ xp.permute_dims(self._ET, (1, 0))
        S = self.L[:, :M] * PE[:, :M] + self.L[:, M:] * PE[:, M:]
        return xp.concat([S, P], axis=1) if self.n_intercepts else S

    def hess_diag(self, point):
        """Diagonal of the Hessian.

        Parameters
        ----------
        point : Point
            The result of :meth:`evaluate` at ``x``.

        Returns
        -------
        diagonal : ndarray of shape (n_variables,)
            The Hessian's diagonal.
        """
        P = point.P
        S = self._first_moments(P)
        diag = -self._host(self.s @ (S * S)).astype(np.float64)
        for k in range(self.n_classes):
            cols, Ek = self._class_columns(k)
            diag[cols] += self._host((self.s * P[:, k]) @ (Ek * Ek))
        diag /= self._scale
        return diag + self.penalty.hess_diag(self.n_weights, self.n_variables)

    def hessian(self, point, variables=None):
        """Dense Hessian (on the host), or its block on ``variables``.

        ``H = (1/S) [sum_k E_k' diag(s P[:, k]) E_k - S' diag(s) S]``, each
        product reduced on the device, as :meth:`DenseObjective.hessian
        <convexagg.aggregation.DenseObjective.hessian>` builds it.

        Parameters
        ----------
        point : Point
            The result of :meth:`evaluate` at ``x``.
        variables : array-like of int, default=None
            Increasing indices of the variables whose block is wanted; all when None.

        Returns
        -------
        H : ndarray of shape (n, n)
            ``n = len(variables)``, or ``n_variables``.
        """
        xp = self.xp
        P = point.P
        S = self._first_moments(P)
        s = xp.reshape(self.s, (-1, 1))
        H = -self._host(xp.permute_dims(S * s, (1, 0)) @ S).astype(np.float64)
        for k in range(self.n_classes):
            cols, Ek = self._class_columns(k)
            weighted = Ek * (s * P[:, k : k + 1])
            H[np.ix_(cols, cols)] += self._host(xp.permute_dims(weighted, (1, 0)) @ Ek)
        H = self.penalty.add_to_hessian(H / self._scale, self.n_weights)
        return H if variables is None else H[np.ix_(variables, variables)]

    def take(self, rows, dtype=None):
        """The same objective on the samples ``rows``, optionally in another precision.

        Parameters
        ----------
        rows : slice or array-like of int
            The samples kept.
        dtype : numpy dtype, default=None
            Storage precision of the copy (float32 or float64); this one's when None.

        Returns
        -------
        objective : ArrayAPIObjective
            On the selected samples.
        """
        xp = self.xp
        if isinstance(rows, slice):
            L, y, s = self.L[rows, :], self.y[rows], self.s[rows]
        else:
            index = xp.asarray(np.asarray(rows), device=self.device)
            L, y, s = (xp.take(a, index, axis=0) for a in (self.L, self.y, self.s))
        if dtype is not None:
            target = xp.float32 if np.dtype(dtype) == np.float32 else self.dtype
            L = xp.astype(L, target)
        return ArrayAPIObjective(
            L,
            self.code,
            y,
            self.penalty,
            namespace=self.namespace,
            fit_intercept=bool(self.n_intercepts),
            sample_weight=s,
        )
