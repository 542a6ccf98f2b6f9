"""The class-blocked objective's assembled Hessians: its diagonal, dense and grouped forms.

What a Newton step needs beyond the matrix-free products of
:class:`~convexagg.aggregation.BlockedObjective` (value, gradient,
Hessian-vector product): the Hessian's diagonal (the PCG preconditioner), the
dense Hessian or its block on some weights (the direct Newton system) and the
Hessian of weights moved together in groups (the coarse space of the entry
weights' two-level preconditioner), each summed over chunks of samples from the
stored losses and the class probabilities of a point.

The dense Hessian costs ``n M^2 / 2`` (the Gram ``S'S``, one symmetric rank-k
update per chunk) plus ``n sum_k |cols(k)|^2`` for the per-class blocks.
"""

from __future__ import annotations

import numpy as np

__all__ = ["BlockedHessians"]

# float32 Hessian kernels treat class probabilities below this as 0 (_probabilities)
_P_FLOOR = 1e-20


class BlockedHessians:
    """The assembled Hessians of :class:`~convexagg.aggregation.BlockedObjective`.

    A base of that class, apart because the assembly is a concept of its own: it
    reads the objective's stored losses (``LT``, their class blocks and folding
    maps, ``_setup``'s attributes) and its chunked primitives (``_chunks``,
    ``_weighted``, ``_fold``, ``_gradient``, ``_weights_of``), and keeps only its
    work buffers and where the class blocks go in the dense Hessian.
    """

    def _work_buffers(self):
        """Chunk-sized work arrays of the Hessian kernels, allocated once per objective.

        Kept between calls: fresh arrays of this size come from ``mmap`` and cost
        page faults on first write every call (half the time of a 2,000-row
        Hessian on letter). An objective therefore serves one thread at a time.
        """
        if self._work is None:
            width = min(self.chunk, self.n_samples)
            m, M = self.LT.shape[0], self.n_weights
            self._work = {
                "X": np.empty((m, width), dtype=self.dtype),
                "S": np.empty((M, width), dtype=self.dtype),
                "T": np.empty((M, width), dtype=self.dtype),
            }
        return self._work

    def _probabilities(self, PTall, cols):
        """Class probabilities of a chunk in the storage dtype, for the Hessian kernels.

        In float32, those below ``_P_FLOOR`` become 0: at the optimum on letter
        about 2% of them fall in float32's subnormal range, and products with
        subnormals run many times slower; they are far below float32's resolution
        of the Hessian entries they feed.
        """
        PT = PTall[:, cols].astype(self.dtype)
        if self.dtype == np.float32:
            PT[PT < _P_FLOOR] = 0.0
        return PT

    def _moments(self, PTall, cols, work):
        """``(LTc, PT, X, S, sw)`` of a chunk: the weighted losses ``X`` and their fold
        ``S[l, i] = sum_k P_ik D_ikl`` (the first moments), and the sample weights."""
        LTc = self.LT[:, cols]
        c = LTc.shape[1]
        PT = self._probabilities(PTall, cols)
        X = self._weighted(LTc, PT, out=work["X"][:, :c])
        S = self._fold(X, out=work["S"][:, :c], tmp=work["T"][:, :c])
        sw = self._weights_of(cols)
        return LTc, PT, X, S, (None if sw is None else sw.astype(self.dtype))

    def hess_diag(self, point):
        """Diagonal of the Hessian (the paper's PCG preconditioner).

        Parameters
        ----------
        point : Point
            The result of :meth:`evaluate` at ``x``.

        Returns
        -------
        diagonal : ndarray of shape (n_variables,)
            The Hessian's diagonal.
        """
        PTall = point.P.T
        sums = self._diagonal_sums()
        work = self._work_buffers()
        for cols in self._chunks():
            self._add_diagonal(sums, *self._moments(PTall, cols, work))
        return self._finish_diagonal(sums)

    def _diagonal_sums(self):
        """Accumulators of :meth:`hess_diag`: per stored column, per weight, per intercept."""
        return np.zeros(self.LT.shape[0]), np.zeros(self.n_weights), np.zeros(self.n_intercepts)

    def _add_diagonal(self, sums, LTc, PT, X, S, sw):
        """Add a chunk's terms of the Hessian's diagonal (:meth:`_moments`' outputs)."""
        first, sq, diag_b = sums
        if sw is None:
            first += np.einsum("ci,ci->c", X, LTc)
            sq += np.einsum("li,li->l", S, S)
        else:
            first += np.einsum("ci,ci,i->c", X, LTc, sw)
            sq += np.einsum("li,li,i->l", S, S, sw)
        if self.n_intercepts:
            PP = PT - PT * PT
            diag_b += PP.sum(axis=1) if sw is None else PP @ sw

    def _finish_diagonal(self, sums):
        first, sq, diag_b = sums
        diag = self._gradient(first, diag_b)
        diag[: self.n_weights] -= sq / self._scale
        return diag + self.penalty.hess_diag(self.n_weights, self.n_variables)

    def restrict(self, weights):
        """The same objective as a function of the weights ``weights`` alone (the
        others held at 0; the intercepts kept), sharing nothing it writes to.

        Its stored losses are this objective's rows of those weights (a copy), so
        its Hessian is the block of this one's on them at the same class
        probabilities: what a Newton step on the weights a bound does not hold
        at 0 needs, at ``n |F|^2`` instead of ``n M^2``.

        Parameters
        ----------
        weights : array-like of int
            Increasing indices of weights.

        Returns
        -------
        objective : BlockedObjective
            The restricted objective.
        """
        weights = np.asarray(weights, dtype=np.intp)
        new = object.__new__(type(self))
        new._setup(
            self.code[:, weights],
            self.y,
            self.penalty.restrict(weights),
            self.dtype,
            self.chunk,
            self.n_samples,
            self.n_intercepts > 0,
            None,
        )
        new.sample_weight, new._scale = self.sample_weight, self._scale
        # stored columns are (classifier, coefficients) pairs; the restricted code's
        # baselines are those of the same columns, so each is one of this objective's
        where = {
            (int(w), tuple(c)): i for i, (w, c) in enumerate(zip(self._weight, self.spec["coef"]))
        }
        rows = [where[int(weights[w]), tuple(c)] for w, c in zip(new._weight, new.spec["coef"])]
        new.LT = self.LT[rows]
        return new

    @property
    def hessian_floats(self):
        """The floats :meth:`hessian` holds at once: the Hessian and its per-class blocks
        (more than twice the Hessian's own: the blocks are added class by class)."""
        return self.n_variables**2 + sum(cc.size**2 for cc in self._class_cols)

    def _block_scatter(self):
        """The flat positions in the dense Hessian of every class block's entries, class
        after class (computed once), or None where they would outnumber the Hessian's own
        entries: the class-by-class loop is for those. One ``np.add.at`` of them adds the
        blocks in the loop's order, to the bit (a weight of several classes gets their
        blocks in turn), and costs one call where the loop costs ``K``."""
        if self._scatter is None:
            n = self.n_variables
            idx = [self._weight[cc] for cc in self._class_cols if cc.size]
            if not idx or self.hessian_floats > 2 * n * n:
                self._scatter = False
            else:
                self._scatter = np.concatenate([(i[:, None] * n + i).ravel() for i in idx])
        return None if self._scatter is False else self._scatter

    def hessian(self, point, variables=None):
        """Dense Hessian: per-class blocks minus the Gram ``S'S``.

        When ``variables`` are at most a quarter of the weights, the block is
        computed from their stored losses alone (:meth:`restrict`, a copy of
        those rows of ``LT``), at ``n |F|^2`` instead of ``n M^2``.

        ``H = (1/S) [sum_k E_k' diag(s P[:, k]) E_k - S' diag(s) S]`` as in
        :meth:`DenseObjective.hessian`, on the stored columns: class ``k``'s block
        uses only the stored columns it enters (one-vs-one: ``K - 1``), and
        ``S = sum_k diag(P[:, k]) E_k`` is formed one chunk of samples at a time.
        With intercepts, the weights-intercepts block is
        ``(1/S) [fold(sum_i s_i LT[c, i] E[c, k] P_ik) - S diag(s) P]`` and the
        intercepts block ``(1/S) sum_i s_i (diag(P_i) - P_i P_i')``.

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
        M, K = self.n_weights, self.n_classes
        if variables is not None:
            variables = np.asarray(variables, dtype=np.intp)
            weights = variables[variables < M]
            if 4 * weights.size > M:  # a copy of most of LT would cost more than it saves
                return self.hessian(point)[np.ix_(variables, variables)]
            H = self.restrict(weights).hessian(point)
            local = np.concatenate(
                [np.arange(weights.size), weights.size - M + variables[variables >= M]]
            )
            return H[np.ix_(local, local)]
        m1, bs = self._m_single, self._block_size
        PTall = point.P.T
        gram = np.zeros((M, M))
        batched = bs is not None and m1 == self.LT.shape[0]
        if batched:
            blocks = np.zeros((K, bs, bs))
        else:
            blocks = [np.zeros((cc.size, cc.size)) for cc in self._class_cols]
        if self.n_intercepts:
            cross2 = np.zeros((self.LT.shape[0], K))  # stored columns x classes
            cross_S = np.zeros((M, K))
            bb = np.zeros((K, K))
        work = self._work_buffers()
        for cols in self._chunks():
            LTc, PT, X, S, sw = self._moments(PTall, cols, work)
            c = LTc.shape[1]
            if self.n_intercepts:
                PTs = PT if sw is None else PT * sw
                cross_S += S @ PTs.T
                bb += np.diag(PTs.sum(axis=1)) - PTs @ PT.T
                # sum_i LT[c, i] s_i P_ik on the classes each stored column enters
                cross2 += (LTc @ PTs.T) * self.spec["classes"]
            if sw is not None:
                gram += (S * sw) @ S.T
                X *= sw  # the blocks' first factor carries the sample weights
            else:
                gram += S @ S.T  # symmetric rank-k update (numpy calls syrk)
            if batched:
                blocks += np.matmul(X.reshape(K, bs, c), LTc.reshape(K, bs, c).transpose(0, 2, 1))
            else:
                for k, cc in enumerate(self._class_cols):
                    if cc.size:
                        Gk = LTc[cc]
                        blocks[k] += (Gk * (PT[k] if sw is None else PT[k] * sw)) @ Gk.T
        # scatter the class blocks into H class by class: a flat index of all
        # blocks at once would hold sum_k |cols(k)|^2 entries (80 MB for a
        # 1,000-column sparse code), far more than the losses themselves
        H = np.zeros((self.n_variables, self.n_variables))
        H[:M, :M] = -gram
        scatter = self._block_scatter()
        if scatter is not None:
            values = blocks if batched else [b for b in blocks if b.size]
            np.add.at(H.reshape(-1), scatter, np.concatenate([b.ravel() for b in values]))
        else:
            for k, cc in enumerate(self._class_cols):
                if cc.size:
                    idx = self._weight[cc]
                    H[np.ix_(idx, idx)] += blocks[k]
        if self.n_intercepts:
            H[:M, M:] = self._fold(cross2) - cross_S
            H[M:, :M] = H[:M, M:].T
            H[M:, M:] = bb
        H /= self._scale
        return self.penalty.add_to_hessian(H, self.n_weights)

    def grouped_hessian(self, point, groups, n_groups, diagonal=False):
        """``A' H A`` on the weights: the Hessian of the weights moved together in groups.

        ``A[j, groups[j]] = 1`` for each weight ``j`` with ``groups[j] >= 0`` (a
        weight with a negative group is left out; the intercepts are). With the
        entry weights of a code column as one group it is the Hessian of the
        shared column weights at the same probabilities: the coarse matrix of
        the projected Newton method's two-level preconditioner for entry weights.
        Its cost is that of :meth:`hessian` with ``n_groups`` weights:
        ``n n_groups^2 / 2`` for the Gram of the grouped first moments plus
        ``n sum_k |cols(k)|^2`` for the per-class blocks, not ``n M^2 / 2``.

        Parameters
        ----------
        point : Point
            The result of :meth:`evaluate` at ``x`` (its ``P`` is read).
        groups : ndarray of int, shape (n_weights,)
            The group of each weight, or a negative number.
        n_groups : int
            Number of groups.
        diagonal : bool, default=False
            Also return :meth:`hess_diag`, from the same pass over the losses
            (what the two-level preconditioner needs: on letter's ovo+ovr entry
            weights, 4,500 x 1,326 float32, the second pass cost as much again).

        Returns
        -------
        H : ndarray of shape (n_groups, n_groups)
            The grouped Hessian, the penalty's part included.
        diag : ndarray of shape (n_variables,)
            With ``diagonal``: the Hessian's diagonal.
        """
        import scipy.sparse

        groups = np.asarray(groups, dtype=np.intp)
        col_group = groups[self._weight]  # group of each stored column (< 0: left out)
        kept = np.flatnonzero(col_group >= 0)
        m, K = self.LT.shape[0], self.n_classes
        # group sums of the stored columns' first moments, a sparse 0/1 matrix
        fold = scipy.sparse.csr_matrix(
            (np.ones(kept.size, dtype=self.dtype), (col_group[kept], kept)), shape=(n_groups, m)
        )
        PTall = point.P.T
        gram = np.zeros((n_groups, n_groups))
        bs = self._block_size
        batched = bs is not None and self._m_single == m
        blocks = (
            np.zeros((K, bs, bs))
            if batched
            else [np.zeros((cc.size, cc.size)) for cc in self._class_cols]
        )
        work = self._work_buffers()
        sums = self._diagonal_sums() if diagonal else None
        for cols in self._chunks():
            if diagonal:
                LTc, PT, X, S_weights, sw = self._moments(PTall, cols, work)
                self._add_diagonal(sums, LTc, PT, X, S_weights, sw)
            else:
                LTc, PT = self.LT[:, cols], self._probabilities(PTall, cols)
                X = self._weighted(LTc, PT, out=work["X"][:, : LTc.shape[1]])
                sw = self._weights_of(cols)
                sw = None if sw is None else sw.astype(self.dtype)
            c = LTc.shape[1]
            S = fold @ X  # (n_groups, c)
            if sw is None:
                gram += S @ S.T
            else:
                gram += (S * sw) @ S.T
                X *= sw  # the blocks' first factor carries the weights (X is a work buffer)
            if batched:  # X is LT times its class's probabilities
                blocks += np.matmul(X.reshape(K, bs, c), LTc.reshape(K, bs, c).transpose(0, 2, 1))
                continue
            for k, cc in enumerate(self._class_cols):
                if cc.size:
                    Gk = LTc[cc]
                    Pk = PT[k] if sw is None else PT[k] * sw
                    blocks[k] += (Gk * Pk) @ Gk.T
        H = -gram
        for k, cc in enumerate(self._class_cols):
            gk = col_group[cc]
            keep = gk >= 0
            if keep.any():
                # np.add.at: two stored columns of a class may share a group
                rows, cols_ = np.meshgrid(gk[keep], gk[keep], indexing="ij")
                np.add.at(H, (rows, cols_), blocks[k][np.ix_(keep, keep)])
        H /= self._scale
        H += self.penalty.grouped_hessian(groups, n_groups, self.n_weights)
        return (H, self._finish_diagonal(sums)) if diagonal else H
