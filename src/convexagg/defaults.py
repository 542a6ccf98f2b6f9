"""The default model on a data set: every "auto" rule of the estimators, in one place.

What ``ConvexAggregationClassifier()`` fits depends on the data: the rows its
weights are fitted on, the classes and the code built for them, where ``X``
lives. :func:`resolve_model`, a pure function, turns an estimator's parameters
and the data's shape (:class:`DataShape`) into the model a fit uses
(:class:`ResolvedModel`). Each fit calls it once, before any binary is trained,
and keeps its record -- each option's value and why -- in the fitted
attribute ``resolved_``; ``verbose`` prints the options resolved for the data.

The rules and their constants (``n``: the rows the weights are fitted on, the
sum of their sample weights when given):

``estimator=None``
    :func:`default_learner`: ``make_pipeline(StandardScaler(),
    LogisticRegression())``, the scaler not centring a sparse ``X``.
``decoder=None`` (:class:`~convexagg.CodeMatrixClassifier`)
    :func:`default_decoder`, the paper's model: ``ConvexDecoder()``.
``ensemble="auto"``
    With out-of-fold outputs the fold binaries predict as an ensemble
    (``cv`` and ``ensemble`` are decoded by :func:`convexagg._training.plan`).
``entry_weight_shrinkage="auto"``
    With ``penalty="l2"``: ``DEFAULT_ENTRY_WEIGHT_PRIOR / n`` kept within
    ``ENTRY_WEIGHT_SHRINKAGE_RANGE`` (:func:`auto_entry_weight_shrinkage`);
    None under ``"l1"`` and ``"elasticnet"``, whose penalty the shrinkage's
    L2 term does not join.
``column_penalty="auto"``
    ``DEFAULT_OVR_COLUMN_PENALTY`` on the one-vs-rest columns of a combined
    code that no other part shares (:func:`auto_column_penalty`); a dict
    gives a strength by part (:func:`column_penalty_of_parts`).
``zero_entry_penalty="auto"``
    Chosen among ``ZERO_ENTRY_PRIORS`` / n by the decoder's cross-validation
    of the aggregation (``PENALTY_CV_FOLDS`` folds,
    :mod:`convexagg.decoders.selection`), fitted from the strongest until the
    held-out log-loss rises; None -- the model without them -- beyond
    ``ZERO_ENTRY_AUTO_MAX_WEIGHTS`` zero-entry weights or
    ``ZERO_ENTRY_AUTO_MAX_ROWS`` rows, without entry weights, with a list of
    ``entry_weight_shrinkage`` and on array-API ``X``.
``solver="auto"``
    The decoder's formulation table (``BY_NAME`` in
    ``decoders/formulations.py``): :class:`~convexagg.solvers.ProjectedNewton`
    for the likelihood and the stiffness continuation,
    :class:`~convexagg.solvers.ProjectedSubgradient` for the large margin.
    Its own ``"auto"`` settings: ``dtype``, float32 losses from
    ``FLOAT32_FROM_VALUES`` (2**20) of them on (``SolverConfig.storage_dtype``
    in ``solvers/config.py``; resolved here for the data); ``init``, the best
    equal weights unless the objective cannot be subsampled
    (``ProjectedNewton.resolved``); ``newton`` and ``preconditioner``, chosen
    at each iteration by the number of free weights and samples
    (``FRESH_BUDGET``, ``FACTOR_SPEEDUP``, ``DIRECT_BUDGET`` and
    ``DENSE_MAX_FREE`` in ``solvers/projected_newton.py``). Whether the losses
    are stored or recomputed from the outputs on every pass depends on the
    machine's memory (``STORED_SHARE`` in ``aggregation/recomputed.py``), and
    is left to the fit.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from numbers import Real
from typing import NamedTuple

import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from ._training import plan
from .aggregation import model_entries
from .decoders import ConvexDecoder
from .decoders.formulations import solver_for
from .decoders.selection import CHOSEN_PENALTIES, PENALTY_CV_FOLDS, check_candidates
from .solvers.config import FLOAT32_FROM_VALUES

__all__ = [
    "DEFAULT_ENTRY_WEIGHT_PRIOR",
    "DEFAULT_OVR_COLUMN_PENALTY",
    "ENTRY_WEIGHT_SHRINKAGE_RANGE",
    "ZERO_ENTRY_AUTO_MAX_ROWS",
    "ZERO_ENTRY_AUTO_MAX_WEIGHTS",
    "ZERO_ENTRY_PRIORS",
    "Choice",
    "DataShape",
    "ResolvedModel",
    "auto_column_penalty",
    "auto_entry_weight_shrinkage",
    "column_penalty_of_parts",
    "default_decoder",
    "default_learner",
    "resolve_model",
]

# entry_weight_shrinkage="auto" with penalty="l2": this prior over the number of rows the
# weights are fitted on (a fixed prior on the summed log-likelihood), kept within
# ENTRY_WEIGHT_SHRINKAGE_RANGE: small sets keep 0.01, large ones get 0.001 (QUALITY.md,
# "Why the default is what it is")
DEFAULT_ENTRY_WEIGHT_PRIOR = 2.0
ENTRY_WEIGHT_SHRINKAGE_RANGE = (0.001, 0.01)
# column_penalty="auto": the strength on the one-vs-rest columns of a combined code
DEFAULT_OVR_COLUMN_PENALTY = 0.1
# zero_entry_penalty="auto": one of these over the number of rows the weights are fitted
# on (fixed priors on the summed log-likelihood), chosen by a cross-validation of the
# aggregation alone and fitted from the strongest until the held-out score rises: the
# best strength differs between data sets by more than a factor of 64 (QUALITY.md)
ZERO_ENTRY_PRIORS = (80.0, 20.0, 5.0, 1.25)
# ... but only where that fit is affordable: the zero-entry weights (2 per zero entry) of a
# one-vs-one code grow as the cube of the classes (15 classes 2,730, 26 classes 15,600),
# and each fit of the choice with the rows; beyond either limit "auto" is None, the model
# without them
ZERO_ENTRY_AUTO_MAX_WEIGHTS = 3000
ZERO_ENTRY_AUTO_MAX_ROWS = 3000

#: the reason of an option given as a value, not resolved for the data
GIVEN = "given"


def default_learner(sparse=False):
    """The binary learner of ``estimator=None``: a logistic regression on standardised
    features, ``make_pipeline(StandardScaler(), LogisticRegression())``.

    Standardised, the features' scales matter neither to the fit's convergence (raw
    digits and wine fit without a warning) nor to what the L2 penalty of
    ``LogisticRegression`` (``C=1``) shrinks.

    Parameters
    ----------
    sparse : bool, default=False
        ``X`` is a sparse matrix: the scaler does not centre it
        (``StandardScaler(with_mean=False)``), which would make it dense.

    Returns
    -------
    learner : Pipeline
        A new, unfitted pipeline.
    """
    return make_pipeline(StandardScaler(with_mean=not sparse), LogisticRegression())


def default_decoder():
    """The decoder of :class:`~convexagg.CodeMatrixClassifier`'s ``decoder=None``.

    Returns
    -------
    decoder : ConvexDecoder
        ``ConvexDecoder()``: the paper's model, one weight per binary classifier.
    """
    return ConvexDecoder()


def auto_entry_weight_shrinkage(n_rows):
    """``entry_weight_shrinkage="auto"`` for ``n_rows`` rows (with ``penalty="l2"``).

    Parameters
    ----------
    n_rows : int or float
        The number of rows the weights are fitted on (the sum of their sample
        weights when given).

    Returns
    -------
    shrinkage : float
        ``DEFAULT_ENTRY_WEIGHT_PRIOR / n_rows`` kept within
        ``ENTRY_WEIGHT_SHRINKAGE_RANGE``: 0.01 up to 200 rows, 0.001 from 2,000.
    """
    low, high = ENTRY_WEIGHT_SHRINKAGE_RANGE
    return float(np.clip(DEFAULT_ENTRY_WEIGHT_PRIOR / n_rows, low, high))


def auto_column_penalty(parts, n_classifiers):
    """``column_penalty="auto"``: the strength of each column of a built code.

    Parameters
    ----------
    parts : dict of str to ndarray of int
        The columns of each named part of the code
        (:func:`~convexagg.codes.make_code_parts`).
    n_classifiers : int
        Columns of the code.

    Returns
    -------
    column_penalty : ndarray of shape (n_classifiers,) or None
        ``DEFAULT_OVR_COLUMN_PENALTY`` on the columns of the ``"ovr"`` part
        that no other part shares, 0 elsewhere; None where there are none (a
        single code, an array code, two classes).
    """
    own = _own_ovr_columns(parts)
    if own is None:
        return None
    strengths = np.zeros(n_classifiers)
    strengths[own] = DEFAULT_OVR_COLUMN_PENALTY
    return strengths


def _own_ovr_columns(parts):
    """The columns of the "ovr" part of a combined code that no other part shares (None
    where there are none)."""
    if "ovr" not in parts or len(parts) < 2:
        return None
    others = [cols for name, cols in parts.items() if name != "ovr"]
    own = np.setdiff1d(parts["ovr"], np.concatenate(others))
    return own if own.size else None


def column_penalty_of_parts(by_part, code, parts, n_classifiers):
    """The per-column array of a ``column_penalty`` given by part (a dict).

    Parameters
    ----------
    by_part : dict of str to float
        Names of the parts of ``code`` to a strength (finite, ``>= 0``).
    code : str or array-like
        The ``code`` parameter the parts come from.
    parts : dict of str to ndarray of int
        The columns of each part (:func:`~convexagg.codes.make_code_parts`).
    n_classifiers : int
        Columns of the built code.

    Returns
    -------
    column_penalty : ndarray of shape (n_classifiers,)
        The strength of each column: its part's, 0 for a column of no named part.
    """
    if not isinstance(code, str):
        raise ValueError(
            "column_penalty as a dict maps the parts of a code name (e.g. code='ovo+ovr', "
            "column_penalty={'ovr': 0.1}) to strengths; with an array code give an array "
            "of one strength per column instead."
        )
    unknown = sorted(str(name) for name in by_part if name not in parts)
    if unknown:
        raise ValueError(
            f"column_penalty names {unknown}, not parts of code={code!r}; its parts are "
            f"{list(parts)}."
        )
    strengths = np.zeros(n_classifiers)
    named = np.zeros(n_classifiers, dtype=bool)
    for name, value in by_part.items():
        try:
            value = float(value)
        except (TypeError, ValueError):
            value = np.nan
        if not (np.isfinite(value) and value >= 0):
            raise ValueError(
                f"column_penalty[{name!r}] must be a finite number >= 0, got {by_part[name]!r}."
            )
        cols = parts[name]
        clash = named[cols] & (strengths[cols] != value)
        if np.any(clash):
            raise ValueError(
                f"column_penalty gives different strengths to parts of code={code!r} that "
                f"share columns {cols[clash].tolist()} (the same binary problem); give them "
                "one strength."
            )
        strengths[cols], named[cols] = value, True
    return strengths


@dataclass(frozen=True)
class DataShape:
    """What of the data the default model depends on, known before any binary is trained.

    Attributes
    ----------
    code : ndarray of shape (n_classes, n_classifiers)
        The code matrix built for the classes.
    parts : dict of str to ndarray of int
        The columns of each named part of the code
        (:func:`~convexagg.codes.make_code_parts`; empty for an array code).
    n_rows : int
        The rows the weights are fitted on (those with a binary output).
    weighted_rows : float
        Their number, or the sum of their sample weights when given.
    sparse : bool, default=False
        ``X`` is a sparse matrix.
    array_api : bool, default=False
        ``X`` is an array of another library (array API), fitted on its device.
    dask : bool, default=False
        The outputs are read block by block (a Dask array), their number not
        known in advance.
    """

    code: np.ndarray
    parts: dict
    n_rows: int
    weighted_rows: float
    sparse: bool = False
    array_api: bool = False
    dask: bool = False


class Choice(NamedTuple):
    """A penalty of the aggregation chosen among values by the decoder's cross-validation.

    The estimator makes it a :class:`~convexagg.decoders.selection.PenaltyCandidates`
    with the fit's fold seed.

    Parameters
    ----------
    name : {"entry_weight_shrinkage", "zero_entry_penalty"}
        The decoder parameter chosen.
    values : tuple of float
        The values, fitted in this order.
    stop_when_worse : bool
        Stop at the first value scoring worse than the one before ("auto"'s
        priors, strong to weak); a list given is scored whole.
    """

    name: str
    values: tuple
    stop_when_worse: bool


@dataclass(frozen=True)
class ResolvedModel:
    """The model a fit uses: what :func:`resolve_model` returns.

    Attributes
    ----------
    decoder_params : dict
        The decoder parameters the data decide, as the decoder is built with
        them (a penalty chosen by ``choice`` at its value before the choice: a
        list's first value, None for ``zero_entry_penalty="auto"``); empty
        for a decoder given whole.
    choice : Choice or None
        The penalty chosen by cross-validation, if any (at most one).
    options : dict
        ``{option: {"value": ..., "reason": str}}``: each option's value
        (for a chosen penalty, None until :meth:`record` reads it from the
        fitted decoder) and why it is what it is (``"given"``: set by the
        user, not resolved).
    given : dict
        ``{option: the parameter's value}`` of the options resolved for the
        data (for the messages).
    """

    decoder_params: dict
    choice: Choice | None
    options: dict
    given: dict = field(default_factory=dict)

    def record(self, decoder):
        """The fitted estimator's ``resolved_``: :attr:`options`, with the values of the
        decoder's parameters read from the fitted ``decoder`` (a chosen penalty's choice).

        Parameters
        ----------
        decoder : estimator
            The fitted decoder.

        Returns
        -------
        resolved : dict
            ``{option: {"value": ..., "reason": str}}``, plain types (a model file
            holds only trusted types).
        """
        params = decoder.get_params(deep=False)
        record = {}
        for name, option in self.options.items():
            value = params[name] if name in self.decoder_params else option["value"]
            record[name] = {"value": value, "reason": option["reason"]}
        return record

    def messages(self):
        """The lines ``verbose`` prints before the decoder's fit: each option resolved for
        the data by a rule (a chosen penalty is announced by the estimator).

        Returns
        -------
        lines : list of str
            ``option='given': value (reason)``, one per option.
        """
        chosen = None if self.choice is None else self.choice.name
        return [
            f"{name}={self.given[name]!r}: {_describe(self.options[name]['value'])} "
            f"({self.options[name]['reason']})"
            for name in self.given
            if name != chosen
        ]


def _describe(value):
    """``value`` in a message: a float to 3 digits, an array by its nonzero entries."""
    if isinstance(value, np.ndarray):
        nonzero = np.flatnonzero(value)
        strengths = ", ".join(f"{v:.3g}" for v in np.unique(value[nonzero]))
        return f"{strengths} on columns {nonzero.tolist()}" if nonzero.size else "zeros"
    if isinstance(value, float):
        return f"{value:.3g}"
    return str(value)


def resolve_model(params, data):
    """The model a fit uses: the estimator's parameters resolved for the data.

    Pure: the same parameters and data give the same model; nothing is fitted,
    read from an estimator or changed. The rules are the module's (see its
    docstring); a value given explicitly is kept.

    Parameters
    ----------
    params : dict
        The estimator's parameters (``get_params(deep=False)``):
        :class:`~convexagg.CodeMatrixClassifier`'s (with ``decoder``), or the
        convex-aggregation estimators' (``code``, ``penalty``,
        ``entry_weight_shrinkage``, ``column_penalty``, ``zero_entry_penalty``,
        ``solver`` and the rest, without ``decoder``).
    data : DataShape
        The data's shape.

    Returns
    -------
    model : ResolvedModel
        The decoder's parameters, the penalty chosen by cross-validation, and
        every option's value and reason.

    Raises
    ------
    ValueError
        A list of penalty values that is not one (naming the parameter), both
        penalties given as lists, or a ``column_penalty`` by part that does not
        fit the code.
    """
    options = {"estimator": _learner_option(params["estimator"], data.sparse)}
    options["ensemble"] = _ensemble_option(params)
    given = {}
    if "decoder" in params:  # CodeMatrixClassifier: the decoder as given, or the default
        decoder = params["decoder"]
        resolved = default_decoder() if decoder is None else decoder
        why = "the paper's model, one weight per binary classifier" if decoder is None else GIVEN
        options["decoder"] = {"value": type(resolved).__name__, "reason": why}
        if isinstance(resolved, ConvexDecoder):
            options["solver"] = _solver_option(
                resolved.solver,
                resolved.formulation,
                data,
                resolved._entries(),
                resolved._zero_entries(),
            )
        return ResolvedModel({}, None, options)

    lists = _lists(params)
    shrinkage, options["entry_weight_shrinkage"] = _shrinkage(params, data, lists)
    column_penalty, options["column_penalty"] = _column_penalty(params, data)
    entries = ConvexDecoder(entry_weight_shrinkage=shrinkage)._entries()
    zero, choice, options["zero_entry_penalty"] = _zero_entry_penalty(params, data, lists, entries)
    if choice is None and lists:  # a list of entry_weight_shrinkage
        ((name, values),) = lists.items()
        choice = Choice(name, values, False)
        options[name] = {"value": None, "reason": _chosen_reason(values)}
    zero_entries = zero is not None or (choice is not None and choice.name == "zero_entry_penalty")
    options["solver"] = _solver_option(params["solver"], "likelihood", data, entries, zero_entries)
    for name in ("entry_weight_shrinkage", "column_penalty", "zero_entry_penalty"):
        if options[name]["reason"] != GIVEN:
            given[name] = params[name]
    decoder_params = {
        "entry_weight_shrinkage": shrinkage,
        "column_penalty": column_penalty,
        "zero_entry_penalty": zero,
    }
    return ResolvedModel(decoder_params, choice, options, given)


def _learner_option(estimator, sparse):
    if estimator is not None:
        kind = f"{len(estimator)} binaries" if isinstance(estimator, (list, tuple)) else None
        return {"value": kind or type(estimator).__name__, "reason": GIVEN}
    steps = ", ".join(repr(step) for _, step in default_learner(sparse).steps)
    why = "sparse X: not centred" if sparse else "standardised features"
    return {"value": f"make_pipeline({steps})", "reason": f"the default learner ({why})"}


def _ensemble_option(params):
    resolved = plan(params["cv"], params["ensemble"], params["estimator"])
    if not isinstance(params["ensemble"], str):
        return {"value": resolved.ensemble, "reason": GIVEN}
    if resolved.out_of_fold:
        why = "out-of-fold outputs: the fold binaries predict as an ensemble"
    elif resolved.prefit:
        why = "given binaries"
    else:
        why = "in-sample outputs: one set of binaries"
    return {"value": resolved.ensemble, "reason": why}


def _lists(params):
    """``{name: values}`` of each penalty of ``CHOSEN_PENALTIES`` given as a list
    (checked); both at once raise: each is chosen with the other fixed."""
    lists = {}
    for name in CHOSEN_PENALTIES:
        given = params[name]
        if given is not None and not isinstance(given, (str, Real)):
            lists[name] = check_candidates(name, given)
    if len(lists) == len(CHOSEN_PENALTIES):
        raise ValueError(
            "entry_weight_shrinkage as a list cannot go with zero_entry_penalty as a list "
            "(both chosen by cross-validation, each with the other fixed); give one "
            "entry_weight_shrinkage value (e.g. 'auto') or one zero_entry_penalty value."
        )
    return lists


def _chosen_reason(values):
    shown = ", ".join(f"{v:.3g}" for v in values)
    return (
        f"chosen among [{shown}] by the held-out log-loss of a {PENALTY_CV_FOLDS}-fold "
        "cross-validation of the aggregation"
    )


def _shrinkage(params, data, lists):
    """``(the decoder's entry_weight_shrinkage, its option)``."""
    given = params["entry_weight_shrinkage"]
    if "entry_weight_shrinkage" in lists:  # its option is the choice's
        return lists["entry_weight_shrinkage"][0], None
    if not isinstance(given, str):
        return given, {"value": given, "reason": GIVEN}
    if params["penalty"] != "l2":
        why = f"penalty={params['penalty']!r}, which the shrinkage's L2 term does not join"
        return None, {"value": None, "reason": why}
    value = auto_entry_weight_shrinkage(data.weighted_rows)
    low, high = ENTRY_WEIGHT_SHRINKAGE_RANGE
    rows = "rows" if data.weighted_rows == data.n_rows else "rows' summed sample weights"
    why = (
        f"{DEFAULT_ENTRY_WEIGHT_PRIOR:g} / {data.weighted_rows:,g} {rows} kept within "
        f"[{low:g}, {high:g}]"
    )
    return value, {"value": value, "reason": why}


def _column_penalty(params, data):
    """``(the decoder's column_penalty, its option)``."""
    given = params["column_penalty"]
    M = data.code.shape[1]
    if isinstance(given, dict):
        value = column_penalty_of_parts(given, params["code"], data.parts, M)
        return value, {"value": value, "reason": f"by part of code={params['code']!r}"}
    if not isinstance(given, str):
        return given, {"value": given, "reason": GIVEN}
    value = auto_column_penalty(data.parts, M)
    if value is None:
        why = f"code={params['code']!r} has no one-vs-rest columns of its own"
    else:
        why = f"the one-vs-rest columns of code={params['code']!r} that no other part has"
    return value, {"value": value, "reason": why}


def _zero_entry_penalty(params, data, lists, entries):
    """``(the decoder's zero_entry_penalty, the choice or None, its option)``."""
    given = params["zero_entry_penalty"]
    if "zero_entry_penalty" in lists:
        values = lists["zero_entry_penalty"]
        choice = Choice("zero_entry_penalty", values, False)
        return values[0], choice, {"value": None, "reason": _chosen_reason(values)}
    if not isinstance(given, str):
        return given, None, {"value": given, "reason": GIVEN}
    why = _zero_entries_left_out(data, lists, entries)
    if why:
        return None, None, {"value": None, "reason": "; ".join(why)}
    values = tuple(c / data.weighted_rows for c in ZERO_ENTRY_PRIORS)
    choice = Choice("zero_entry_penalty", values, True)
    priors = ", ".join(f"{c:g}" for c in ZERO_ENTRY_PRIORS)
    why = (
        f"chosen among [{priors}] / {data.weighted_rows:,g} by the held-out log-loss of a "
        f"{PENALTY_CV_FOLDS}-fold cross-validation of the aggregation, from the strongest "
        "until it rises"
    )
    return None, choice, {"value": None, "reason": why}


def _zero_entries_left_out(data, lists, entries):
    """Why ``zero_entry_penalty="auto"`` leaves the zero entries out (empty: it does
    not): where they cannot apply, or beyond the limits where their fit is affordable."""
    n_weights = 2 * int(np.count_nonzero(data.code == 0))
    reasons = {
        "a list of entry_weight_shrinkage (chosen without them)": bool(lists),
        "no entry weights": not entries,
        "array-API X (fitted on its device without them)": data.array_api,
        "no zero entries in the code": n_weights == 0,
        f"{n_weights:,} zero-entry weights above the limit of {ZERO_ENTRY_AUTO_MAX_WEIGHTS:,}": (
            n_weights > ZERO_ENTRY_AUTO_MAX_WEIGHTS
        ),
        f"{data.n_rows:,} rows above the limit of {ZERO_ENTRY_AUTO_MAX_ROWS:,}": (
            data.n_rows > ZERO_ENTRY_AUTO_MAX_ROWS
        ),
    }
    return [reason for reason, holds in reasons.items() if holds]


def _solver_option(solver, formulation, data, entries, zero_entries):
    """The solver configuration the decoder resolves ``solver`` to for ``formulation``,
    and the precision of the losses it stores on this data."""
    config = solver_for(solver, formulation, data.dask)
    why = GIVEN
    if isinstance(solver, str):
        why = f"solver={solver!r} for formulation={formulation!r}"
    if formulation != "likelihood":
        return {"value": repr(config), "reason": why}
    M = data.code.shape[1]
    columns = model_entries(data.code, zero_entries)[1].size if entries else M
    n_losses = None if data.dask else 2 * data.n_rows * columns
    dtype = config.storage_dtype(n_losses).name
    setting = getattr(config, "dtype", None)
    if n_losses is None:
        stored = f"losses in {dtype} (their number not known in advance)"
    elif setting == "auto":
        stored = (
            f"{n_losses:,} losses in {dtype} (dtype='auto': float32 from "
            f"{FLOAT32_FROM_VALUES:,} on)"
        )
    else:
        stored = f"{n_losses:,} losses in {dtype}"
    if data.array_api:
        stored += ", in that precision on X's device"
    return {"value": repr(config), "reason": f"{why}; {stored}"}
