"""Shared by the tests: the decoders to parametrize over, rigorous distance-to-optimum
bounds for the convex aggregation problem, the default decoder's reference fit, and the
structure of a fitted binary against scikit-learn's own."""

from __future__ import annotations

import inspect

import numpy as np

import convexagg.decoders as decoders_module
from convexagg import ConvexDecoder
from convexagg.decoders import BaseDecoder
from convexagg.decoders.selection import PenaltyCandidates
from convexagg.defaults import ZERO_ENTRY_PRIORS


def decoder_classes():
    """Every concrete decoder ``convexagg.decoders`` exports (extends as decoders land)."""
    found = []
    for name in decoders_module.__all__:
        obj = getattr(decoders_module, name)
        if (
            inspect.isclass(obj)
            and issubclass(obj, BaseDecoder)
            and obj is not BaseDecoder
            and not inspect.isabstract(obj)
        ):
            found.append(obj)
    return found


DECODERS = decoder_classes()

# Parameters for the generic property tests. Learned WMAP runs L-BFGS-B on a
# reconstructed, non-convex criterion: its answer is neither exactly invariant to
# the order of the samples nor cheap enough for dozens of examples, so the
# generic tests use its fixed N_j weights; tests/test_wmap.py covers learning.
PROPERTY_PARAMS = {"WMAPDecoder": {"weights": "n_samples"}}


def make_decoder(decoder_cls, **params):
    """``decoder_cls`` with the property-test parameters, overridden by ``params``."""
    return decoder_cls(**{**PROPERTY_PARAMS.get(decoder_cls.__name__, {}), **params})


def scores(decoder, Q):
    """``predict_proba`` where the decoder has it, else its ``decision_function``."""
    if hasattr(decoder, "predict_proba"):
        return decoder.predict_proba(Q)
    return decoder.decision_function(Q)


def accepts_code(decoder_cls, code):
    """Whether ``decoder_cls`` handles this valid ``code`` (pairwise coupling: one-vs-one only).

    Only a ``ValueError`` that names the code counts as "not handled"; anything
    else is a bug and propagates.
    """
    K, M = code.shape
    Q = np.full((2 * K, M), 0.5)
    y = np.arange(2 * K) % K
    try:
        make_decoder(decoder_cls).fit(Q, y, code)
    except ValueError as exc:
        if "code" in str(exc):
            return False
        raise
    return True


def distance_to_optimum_bound(objective, w):
    """Upper bound on ``|w - w*|`` for any ``w >= 0``, from ``objective`` alone.

    ``f`` is ``alpha``-strongly convex (``alpha = objective.penalty.l2``;
    no intercepts), so for any ``z >= 0`` with ``r = grad f(w) - z``
    and ``gap = z'w``: ``0 >= f(w*) - f(w) >= -gap - |r| d + alpha/2 d^2`` with
    ``d = |w - w*|``, i.e. ``d <= (|r| + sqrt(|r|^2 + 2 alpha gap)) / alpha``.
    ``z = max(grad, 0)`` is the natural dual estimate. The bound is what the
    solver's ``tol`` guarantees, so tests compare solutions within it rather than
    within a tolerance picked by hand.
    """
    grad = objective.evaluate(w).grad
    z = np.maximum(grad, 0.0)
    r = float(np.linalg.norm(grad - z))
    gap = float(z @ w)
    alpha = objective.penalty.l2
    return (r + np.sqrt(r * r + 2 * alpha * gap)) / alpha


def suboptimality_bound(objective, w):
    """Upper bound on ``f(w) - f*`` for any ``w >= 0``: ``gap + |r|^2 / (2 alpha)``."""
    grad = objective.evaluate(w).grad
    z = np.maximum(grad, 0.0)
    r = float(np.linalg.norm(grad - z))
    return float(z @ w) + r * r / (2 * objective.penalty.l2)


def fit_default_decoder(clf, Q, y, params, sample_weight=None):
    """A ``ConvexDecoder(**params)`` fitted on ``Q`` as the fitted default ``clf`` fits its
    own: the zero entries' strength chosen among the same priors (per row, or per unit of
    ``sample_weight``) on the same folds, then the fit from the choice's start (the choice
    is checked against its own loop in test_penalty_selection.py)."""
    rows = y.size if sample_weight is None else float(np.sum(sample_weight))
    priors = [prior / rows for prior in ZERO_ENTRY_PRIORS]
    seed = clf._fold_seed
    candidates = PenaltyCandidates("zero_entry_penalty", priors, seed, stop_when_worse=True)
    decoder = ConvexDecoder(**params)
    decoder.fit(Q, y, clf.code_matrix_, sample_weight=sample_weight, candidates=candidates)
    assert decoder.zero_entry_penalty == clf.zero_entry_penalty_
    return decoder


def binary_parts(est):
    """``(scaler or None, model)`` of a fitted binary: a pipeline's first and last step, or
    the estimator itself."""
    from sklearn.pipeline import Pipeline

    if isinstance(est, Pipeline):
        return est.steps[0][1], est.steps[-1][1]
    return None, est


def assert_fitted_like(mine, theirs):
    """``mine`` is the kind of fitted binary ``theirs`` is: the same class, and in each part
    (:func:`binary_parts`) the same fitted attributes, of the same types, arrays of the same
    dtypes and shapes."""
    assert type(mine) is type(theirs)
    for a, b in zip(binary_parts(mine), binary_parts(theirs)):
        if b is None:
            continue
        assert sorted(vars(a)) == sorted(vars(b))
        for name, value in vars(b).items():
            assert type(getattr(a, name)) is type(value), name
            if isinstance(value, np.ndarray):
                assert getattr(a, name).dtype == value.dtype, name
                assert getattr(a, name).shape == value.shape, name
