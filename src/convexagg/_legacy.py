"""The keywords of version 0.1, translated in one place; version 0.3 deletes this module.

0.1 set the solver by separate keywords (``tol``, ``max_iter``, ``newton``,
``dtype``, ``init``, ``subgradient_iter``) and the names ``"paper"`` /
``"mehrotra"``, on the decoder, both estimators and
:func:`~convexagg.regularization_path` (which also took the model's ``loss``,
``penalty`` and ``l1_ratio``). 0.2 carries every solver setting on one
``solver`` object. Given, the old keywords mean what they meant in 0.1 (the
paper's interior point with those settings, or projected subgradient steps
for the large-margin formulation) and a ``FutureWarning`` says what to write.
"""

from __future__ import annotations

import warnings
from numbers import Integral, Real

from sklearn.utils._param_validation import Hidden, Interval, StrOptions

from .solvers import InteriorPoint, ProjectedSubgradient

__all__ = [
    "LEGACY_CONSTRAINTS",
    "LEGACY_DEFAULTS",
    "LEGACY_SOLVERS",
    "legacy_path_decoder",
    "legacy_solver",
    "not_given",
]

#: the solver keywords of version 0.1 and their defaults there
LEGACY_DEFAULTS = {
    "tol": 1e-4,
    "max_iter": 100,
    "newton": "cg",
    "dtype": "float64",
    "init": "paper",
    "subgradient_iter": 2000,
}
#: the 0.1 ``solver`` names and the interior point method each meant
LEGACY_SOLVERS = {"paper": "adaptive_barrier", "mehrotra": "predictor_corrector"}

_DEPRECATED = Hidden(StrOptions({"deprecated"}))

#: ``_parameter_constraints`` of the 0.1 keywords, for the estimators that keep them
LEGACY_CONSTRAINTS = {
    "tol": [Interval(Real, 0, None, closed="neither"), _DEPRECATED],
    "max_iter": [Interval(Integral, 1, None, closed="left"), _DEPRECATED],
    "newton": [StrOptions({"cg", "cholesky"}), _DEPRECATED],
    "dtype": [StrOptions({"float64", "float32"}), _DEPRECATED],
    "init": [StrOptions({"paper", "uniform", "subsample"}), _DEPRECATED],
    "subgradient_iter": [Interval(Integral, 1, None, closed="left"), _DEPRECATED],
}

# regularization_path's 0.1 keywords: the model's settings, then the solver's
_PATH_MODEL = ("loss", "penalty", "l1_ratio")
_PATH_SOLVER = ("tol", "max_iter", "newton")


def not_given():
    """Every 0.1 keyword at its "not given" value (for a clone that no longer uses them)."""
    return {name: "deprecated" for name in LEGACY_CONSTRAINTS}


def legacy_solver(solver, formulation, legacy):
    """The configuration the keywords of version 0.1 meant, with a ``FutureWarning``.

    ``legacy`` maps the 0.1 keywords (``tol``, ``max_iter``, ``newton``,
    ``dtype``, ``init``, ``subgradient_iter``) to their values, ``"deprecated"``
    meaning not given. Returns None when neither they nor an 0.1 ``solver`` value
    (``"paper"``, ``"mehrotra"``) are used. They meant the paper's interior point
    with those settings (0.1's defaults for the rest), or projected subgradient
    steps for the large-margin formulation; combining them with a new ``solver``
    value raises.
    """
    given = {k: v for k, v in legacy.items() if not (isinstance(v, str) and v == "deprecated")}
    old_name = isinstance(solver, str) and solver in LEGACY_SOLVERS
    if not given and not old_name:
        return None
    if not old_name and not (isinstance(solver, str) and solver == "auto"):
        raise ValueError(
            f"the keywords {sorted(given)} are deprecated and cannot be combined with "
            f"solver={solver!r}; set them on the solver object instead (e.g. "
            "solver=InteriorPoint(tol=1e-6))."
        )
    settings = {**LEGACY_DEFAULTS, **given}
    if formulation == "large_margin":
        config = ProjectedSubgradient(max_iter=settings["subgradient_iter"], tol=settings["tol"])
    else:
        newton = {"cg": "cg", "cholesky": "direct"}.get(settings["newton"], settings["newton"])
        init = {"paper": "fixed"}.get(settings["init"], settings["init"])
        config = InteriorPoint(
            method=LEGACY_SOLVERS[solver] if old_name else "adaptive_barrier",
            newton=newton,
            init=init,
            tol=settings["tol"],
            max_iter=settings["max_iter"],
            dtype=settings["dtype"],
        )
    used = sorted(given) + (["solver=" + repr(solver)] if old_name else [])
    warnings.warn(
        f"{', '.join(used)}: the separate solver keywords and the solver names 'paper' and "
        f"'mehrotra' are deprecated in convexagg 0.2 and will be removed in 0.3; pass "
        f"solver={config!r} instead.",
        FutureWarning,
        stacklevel=4,
    )
    return config


def legacy_path_decoder(decoder, legacy):
    """The decoder's parameters that :func:`~convexagg.regularization_path`'s 0.1 keywords
    described, with a ``FutureWarning``: a dict for ``ConvexDecoder(**params)``."""
    unknown = sorted(set(legacy) - set(_PATH_MODEL) - set(_PATH_SOLVER))
    if unknown:
        raise TypeError(f"regularization_path() got unexpected keyword arguments {unknown}.")
    if decoder is not None:
        raise ValueError(
            f"pass either decoder=... or the deprecated keywords {sorted(legacy)}, not both."
        )
    warnings.warn(
        f"regularization_path: the keywords {sorted(legacy)} are deprecated in convexagg 0.2 "
        "and will be removed in 0.3; pass decoder=ConvexDecoder(loss=..., penalty=..., "
        "solver=...) instead.",
        FutureWarning,
        stacklevel=3,
    )
    model = {k: v for k, v in legacy.items() if k in _PATH_MODEL}
    if model.get("penalty", "l2") != "elasticnet":
        model.pop("l1_ratio", None)
    solver = {k: v for k, v in legacy.items() if k in _PATH_SOLVER}
    # 0.1's path ran the paper's interior point with these settings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # said once, above
        config = legacy_solver("paper", "likelihood", solver)
    return {**model, "solver": config}
