"""The fit skeleton of the estimators: which binaries are trained, with what, on which rows.

One home for what ``fit``, ``fit_decoder`` and the CV estimator's fit share:

* the **plan** (:class:`Plan`, from :func:`plan`): ``cv`` and ``ensemble``
  resolved once -- in-sample outputs, out-of-fold outputs (kept as an
  ensemble or not) or given binaries' outputs (``cv="prefit"``, or binaries
  wrapped in scikit-learn's ``FrozenEstimator``). Nothing else reads ``cv``;
  the fitted plan (:class:`Fitted`) says which outputs the decoder was
  fitted on, and :func:`decoder_outputs` computes them again for
  ``fit_decoder`` and the regularisation-path display;

* the **learners**: one binary learner for every code column, a list of
  learners (one per column), or fitted binaries (``cv="prefit"``);
* the **fit parameters**: ``sample_weight`` and, under scikit-learn's metadata
  routing, whatever the learners request (:func:`fit_parameters`); each
  learner gets its parameters taken on the rows of its column's problem;
* the **outputs** the decoder is fitted on (:func:`train`): the binaries'
  outputs on their own training rows (``cv="in_sample"``, the paper's protocol),
  out-of-fold outputs (a splitter), or the given binaries' outputs
  (``"prefit"``); with out-of-fold outputs the fold binaries are either kept
  as an ensemble (``ensemble=True``, as ``CalibratedClassifierCV`` does) or
  replaced by binaries refitted on all rows.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from sklearn.frozen import FrozenEstimator
from sklearn.pipeline import Pipeline
from sklearn.utils.metadata_routing import MetadataRouter, MethodMapping, process_routing
from sklearn.utils.validation import check_is_fitted, has_fit_parameter

from ._array_api import array_namespace, take_rows
from ._folds import cv_splits
from ._sklearn import check_method_params, num_samples
from .binary import (
    binary_output_kind,
    fit_binaries,
    fit_predict_binaries,
    predict_binaries,
    predict_binaries_on_device,
)
from .out_of_fold import fold_binaries, starts_folds_warm

__all__ = [
    "Fitted",
    "Plan",
    "Problem",
    "Training",
    "check_learners",
    "decoder_outputs",
    "decoder_rows",
    "fit_parameters",
    "fold_splits",
    "member_outputs",
    "out_of_fold",
    "plan",
    "routing",
    "rows_of",
    "subproblem",
    "train",
]


@dataclass
class Problem:
    """What every fit path prepares from ``(X, y)`` before training anything."""

    X: object
    y: np.ndarray  # class indices
    classes: np.ndarray
    code: np.ndarray
    seeds: list  # one per code column (None entries: the learners' own seeding)
    output: str  # "proba" or "margin"
    sample_weight: np.ndarray | None = None
    learner_params: list = field(default_factory=list)  # fit parameters, one dict per column
    split_params: dict = field(default_factory=dict)  # "cv" / "alpha_cv" -> their split params
    plan: Plan | None = None  # cv resolved (see plan)
    code_parts: dict = field(default_factory=dict)  # name -> its columns (make_code_parts)
    splits: list | None = None  # the (train, test) splits of new out-of-fold outputs


@dataclass
class Training:
    """The binaries (one list per ensemble member) and the outputs the decoder is fitted on."""

    members: list
    Q: np.ndarray
    rows: np.ndarray | slice  # the rows of Q (and y) the decoder is fitted on
    tests: list | None = None  # the fold test parts, for an ensemble (fit_decoder)


@dataclass(frozen=True)
class Plan:
    """``cv`` and ``ensemble`` resolved: which outputs the decoder is fitted on.

    ``kind`` is ``"in_sample"`` (the binaries' outputs on their own training
    rows), ``"out_of_fold"`` (``splitter``'s folds; the fold binaries kept as
    the members when ``ensemble``, else binaries refitted on all rows) or
    ``"prefit"`` (given binaries, never fitted).
    """

    kind: str
    splitter: object = None  # the cv of out-of-fold outputs (int, splitter or iterable)
    ensemble: bool = False
    fold_seed: int | None = None  # shuffles the folds of an int cv (see _folds.cv_splits)

    @property
    def prefit(self):
        return self.kind == "prefit"

    @property
    def in_sample(self):
        return self.kind == "in_sample"

    @property
    def out_of_fold(self):
        return self.kind == "out_of_fold"

    def splitters(self):
        """``{"cv": splitter}`` when the plan splits the rows, else ``{}``: what
        ``groups`` and the splitter's routed parameters go to."""
        return {"cv": self.splitter} if self.out_of_fold else {}


def _frozen(estimator):
    """Whether ``estimator`` (a learner or a list) holds ``FrozenEstimator`` binaries:
    True when all of a list do; a single one or a mix raise."""
    if isinstance(estimator, FrozenEstimator):
        raise ValueError(
            "estimator is one FrozenEstimator; frozen binaries are a list of fitted binary "
            "classifiers, one per code column, each wrapped in FrozenEstimator."
        )
    if not isinstance(estimator, (list, tuple)):
        return False
    frozen = [isinstance(est, FrozenEstimator) for est in estimator]
    if any(frozen) and not all(frozen):
        raise ValueError(
            "estimator mixes FrozenEstimator binaries and learners; they must all be "
            "FrozenEstimator (fitted binaries, as with cv='prefit') or none."
        )
    return bool(frozen) and all(frozen)


def plan(cv, ensemble, estimator):
    """The :class:`Plan` of the parameters ``cv``, ``ensemble`` and ``estimator``.

    The one place ``cv`` is decoded; None is the default, 5 folds (as in
    scikit-learn). Binaries wrapped in ``sklearn.frozen.FrozenEstimator``
    (scikit-learn's replacement for ``cv="prefit"``) are given binaries: a frozen
    binary is not fitted, so folds would only repeat it; ``cv`` other than its
    default or ``"prefit"`` then raises. ``ensemble`` other than ``"auto"``
    without out-of-fold outputs raises.
    """
    cv = 5 if cv is None else cv
    frozen = _frozen(estimator)
    # A cv that asks for folds or in-sample outputs cannot apply to frozen binaries:
    # it raises rather than being ignored (only the default, 5, is indistinguishable).
    if (
        frozen
        and not (isinstance(cv, str) and cv == "prefit")
        and not (isinstance(cv, int) and not isinstance(cv, bool) and cv == 5)
    ):
        raise ValueError(
            f"cv={cv!r} cannot apply to FrozenEstimator binaries, which are used as given "
            "(as with cv='prefit'); leave cv at its default or pass cv='prefit'."
        )
    if frozen or (isinstance(cv, str) and cv == "prefit"):
        kind, why = "prefit", "frozen binaries have" if frozen else f"cv={cv!r} has"
    elif isinstance(cv, str) and cv == "in_sample":
        kind, why = "in_sample", f"cv={cv!r} has"
    else:
        return Plan("out_of_fold", cv, ensemble in ("auto", True))
    if ensemble != "auto":
        raise ValueError(f"ensemble={ensemble!r} applies to out-of-fold outputs only; {why} none.")
    return Plan(kind)


@dataclass
class Fitted:
    """What a fitted estimator keeps of its training: its :class:`Plan`, the members
    (one list of binaries each) and, for an ensemble, each member's test rows --
    enough to compute again the outputs its decoder was fitted on."""

    plan: Plan
    members: list
    tests: list | None = None  # an ensemble's test rows, one array per member
    n_samples: int = 0  # the rows of fit


def _names(n_columns, per_column):
    """Routing names of the learners: one for a shared learner, one per column otherwise."""
    return [f"estimator_{l}" for l in range(n_columns)] if per_column else ["estimator"]


def check_learners(estimator, n_columns, prefit):
    """The learners (a single learner, or one per column) and the output kind they share.

    A list must have one entry per code column; each entry (and a single
    learner) must be a classifier with ``fit`` and ``predict_proba`` or
    ``decision_function``; with ``prefit``, fitted binary classifiers.
    """
    if not isinstance(estimator, (list, tuple)):
        return estimator, binary_output_kind(estimator)
    learners = list(estimator)
    kind = "fitted binary classifiers" if prefit else "learners"
    if len(learners) != n_columns:
        raise ValueError(
            f"estimator is a list of {len(learners)} {kind}; it needs one per code column "
            f"({n_columns})."
        )
    for l, est in enumerate(learners):
        if not hasattr(est, "fit"):
            raise TypeError(f"estimator[{l}] is {est!r}, not a classifier with a fit method.")
        binary_output_kind(est, name=f"estimator[{l}]")  # TypeError naming it
        if prefit:
            check_is_fitted(est)
            classes = getattr(est, "classes_", ())  # an array-API binary's: no len()
            n_classes = classes.shape[0] if hasattr(classes, "shape") else len(classes)
            if n_classes != 2:
                raise ValueError(
                    f"with cv='prefit', estimator[{l}] must be a fitted binary classifier "
                    f"(classes_ of length 2); it has {n_classes} classes."
                )
    if all(hasattr(est, "predict_proba") for est in learners):
        return learners, "proba"
    if all(hasattr(est, "decision_function") for est in learners):
        return learners, "margin"
    raise TypeError(
        "the binary classifiers in estimator must all have predict_proba or all have "
        "decision_function; they mix the two."
    )


def routing(owner, learners, n_columns, splitters, prefit=False):
    """The :class:`~sklearn.utils.metadata_routing.MetadataRouter` of an estimator:
    itself (the aggregation consumes ``sample_weight``), its learners' ``fit``
    (unless ``prefit``: their ``fit`` is never called) and the ``split`` of each
    splitter in ``splitters`` (a dict, parameter name -> its value, e.g.
    ``{"cv": cv}``, the plan's :meth:`Plan.splitters` and the CV estimator's
    ``alpha_cv``; the name is the routing name).

    Only splitter objects are added: an int or None requests nothing, and an
    iterable of splits must not be consumed by asking it (a one-shot generator
    is then still there for the fit, as ``CalibratedClassifierCV`` has it).
    """
    router = MetadataRouter(owner=owner).add_self_request(owner)
    per_column = isinstance(learners, list)
    if not prefit:
        for name, learner in zip(
            _names(n_columns, per_column), learners if per_column else [learners]
        ):
            router.add(
                **{name: learner}, method_mapping=MethodMapping().add(caller="fit", callee="fit")
            )
    for name, cv in splitters.items():
        if hasattr(cv, "split"):
            router.add(
                **{name: cv}, method_mapping=MethodMapping().add(caller="fit", callee="split")
            )
    return router


def fit_parameters(
    owner, learners, n_columns, sample_weight, fit_params, routing_enabled, splitters, train=True
):
    """``(learner parameters, one dict per column; splitter parameters, by routing name)``.

    Under metadata routing, what each learner (and each splitter of
    ``splitters``, see :func:`routing`) requested
    (:func:`~sklearn.utils.metadata_routing.process_routing`). Without it,
    ``sample_weight`` goes to every learner, and a learner that cannot take it
    is named in a ``TypeError``; ``groups`` goes to the splitters (those the
    fit uses: ``splitters``, see :func:`routing`), as
    scikit-learn's ``GridSearchCV`` passes it; other fit parameters need
    routing. ``train=False`` (binaries that are not fitted: ``cv="prefit"``,
    ``fit_decoder`` on binaries already trained): the learners get nothing and
    are not asked whether they could. ``fit`` and ``fit_decoder`` both route
    through here, so the same call sends the same weights to the same places.
    """
    per_column = isinstance(learners, list)
    names = _names(n_columns, per_column)
    if routing_enabled:
        routed = process_routing(owner, "fit", sample_weight=sample_weight, **fit_params)
        params = [routed[name].fit if name in routed else {} for name in names]
        split = {name: routed[name].split for name in splitters if name in routed}
    else:
        fit_params = dict(fit_params)
        groups = fit_params.pop("groups", None)
        if fit_params:
            raise TypeError(
                f"{type(owner).__name__}.fit got {sorted(fit_params)}, which it can only pass "
                "on to the binary learner under metadata routing: "
                "sklearn.set_config(enable_metadata_routing=True) and request them from the "
                "learner (e.g. learner.set_fit_request(...))."
            )
        takers = list(splitters)
        if groups is not None and not takers:
            raise ValueError(
                f"groups was given but {type(owner).__name__} has no cross-validation "
                f"splitter to pass it to (cv={getattr(owner, 'cv', None)!r}); groups are for "
                "the folds of out-of-fold outputs."
            )
        split = {name: {} if groups is None else {"groups": groups} for name in takers}
        params = [{}] * len(names)
        if sample_weight is not None and train:
            params = []
            for name, learner in zip(names, learners if per_column else [learners]):
                weights = _weight_parameters(learner, sample_weight)
                if weights is None:
                    raise TypeError(
                        f"sample_weight was given but the binary learner {name} "
                        f"({type(learner).__name__}) does not take sample_weight in fit. For a "
                        "Pipeline with a step that does not, enable metadata routing "
                        "(sklearn.set_config(enable_metadata_routing=True)) and request it "
                        "from the steps that take it (set_fit_request(sample_weight=True))."
                    )
                params.append(weights)
    return (params if per_column else params * n_columns), split


def _weight_parameters(learner, sample_weight):
    """The fit parameters that give ``sample_weight`` to ``learner`` without metadata
    routing: its own ``sample_weight``, or every step's of a ``Pipeline`` whose steps all
    take it (such as the default learner, a ``StandardScaler`` and a logistic regression:
    weights then weigh the scaling too, as repeated rows would); None where it cannot."""
    if has_fit_parameter(learner, "sample_weight"):
        return {"sample_weight": sample_weight}
    if not isinstance(learner, Pipeline):
        return None
    steps = [(name, step) for name, step in learner.steps if step not in (None, "passthrough")]
    if not steps or not all(has_fit_parameter(step, "sample_weight") for _, step in steps):
        return None
    return {f"{name}__sample_weight": sample_weight for name, _ in steps}


def train(p, learners, plan, n_jobs, log, warm=None, oof=None):
    """The binaries and the outputs the decoder is fitted on, as ``plan`` says (see the
    module docstring).

    ``log``: a :class:`~convexagg._utils.Reporter`, told of each stage and
    each binary trained. ``warm``: binaries fitted before, one per column,
    whose copies are refitted (a learner's own ``warm_start`` then applies;
    the originals are not changed); only used when the binaries are trained
    on all rows. ``oof``: :func:`out_of_fold`'s result for these learners when
    already computed (kept members if ``ensemble``).
    """
    M = p.code.shape[1]
    if plan.prefit:
        return Training([learners], _outputs(learners, p.X, p.output, n_jobs), slice(None))
    if not plan.out_of_fold:
        log(f"training {M} binary classifiers")
        done = log.tasks(M, M, lambda k: f"binaries: {k} of {M} trained")
        estimators, Q = _fit_all(fit_predict_binaries, p, learners, n_jobs, warm, done, p.output)
        return Training([estimators], Q, slice(None))
    ensemble = plan.ensemble
    members, Q, rows, tests = oof or out_of_fold(
        p, learners, plan.splitter, n_jobs, keep=ensemble, log=log
    )
    if ensemble:
        return Training(members, Q, rows, tests=tests)
    log(f"training {M} binary classifiers on all rows")
    done = log.tasks(M, M, lambda k: f"binaries on all rows: {k} of {M} trained")
    estimators = _fit_all(fit_binaries, p, learners, n_jobs, warm, done)
    return Training([estimators], Q, rows)


def decoder_outputs(fitted, p, learners, n_jobs):
    """The outputs a fitted estimator's decoder is fitted on, computed again on ``p``
    (normally the data of fit) by its :class:`Fitted` plan, as a :class:`Training`.

    The members' outputs (in-sample and given binaries); with an ensemble, each
    member's outputs on the rows it was tested on (``p`` must have the rows of
    fit); with binaries refitted on all rows, out-of-fold outputs of new fold
    models (``learners``), seeded as in fit -- the same as fit's when the
    learners are deterministic given their seed.
    """
    if fitted.tests is not None:
        rows = decoder_rows(p, fitted)
        Q = member_outputs(fitted.members, fitted.tests, p.X, p.output, n_jobs)
        return Training(fitted.members, Q, rows, tests=fitted.tests)
    if not fitted.plan.out_of_fold:
        Q = _outputs(fitted.members[0], p.X, p.output, n_jobs)
        return Training(fitted.members, Q, slice(None))
    _, Q, rows, _ = out_of_fold(p, learners, fitted.plan.splitter, n_jobs, keep=False)
    return Training(fitted.members, Q, rows)


def _fold_lines(n_folds, M, chained):
    """The progress line after ``done`` fold binaries: fold by fold, or (``chained``,
    :func:`~convexagg.out_of_fold.starts_folds_warm`) column by column."""

    def describe(done):
        if chained:
            return (
                f"binaries: {done} of {n_folds * M} trained (each column's {n_folds} folds in turn)"
            )
        f, k = divmod(done - 1, M)
        return f"binaries: fold {f + 1} of {n_folds}, {k + 1} of {M} trained"

    return describe


def out_of_fold(p, learners, cv, n_jobs, keep, log=None):
    """``(fold binaries or None, out-of-fold outputs, rows that have one, test parts)``;
    the folds of ``cv``: ``p.splits`` when made (:func:`fold_splits`). ``log``: a
    :class:`~convexagg._utils.Reporter` told of each fold's binaries."""
    splits = p.splits
    if splits is None:
        splits = cv_splits(cv, p.X, p.y, p.split_params.get("cv", {}), seed=p.plan.fold_seed)
    M, done = p.code.shape[1], None
    if log is not None:
        log(f"out-of-fold outputs: {len(splits)} folds x {M} binary classifiers")
        chained = starts_folds_warm(learners)
        done = log.tasks(len(splits) * M, M, _fold_lines(len(splits), M, chained))
    members, Q, covered = fold_binaries(
        learners,
        p.X,
        p.y,
        p.code,
        splits,
        p.output,
        n_jobs,
        p.seeds,
        _per_column_params(p),
        keep=keep,
        progress=done,
    )
    return members, Q, _rows_with_output(covered), [test for _, test in splits]


def _rows_with_output(covered):
    """The rows marked in ``covered``: every row (a K-fold partition) as ``slice(None)``,
    all of ``Q`` rather than a copy of its rows, else their sorted indices."""
    return slice(None) if covered.all() else np.flatnonzero(covered)


def fold_splits(p):
    """The ``(train, test)`` splits of ``p``'s out-of-fold outputs, made once per fit
    before any binary is trained (None for other plans); :func:`out_of_fold` trains on
    them (``p.splits``)."""
    if not p.plan.out_of_fold:
        return None
    return cv_splits(p.plan.splitter, p.X, p.y, p.split_params.get("cv", {}), seed=p.plan.fold_seed)


def decoder_rows(p, fitted=None):
    """The rows of ``p`` the decoder is fitted on, known before any binary is trained:
    those in a test part of ``p.splits`` (or of the test parts of a :class:`Fitted`
    ensemble's members, sorted: ``p`` must then have the rows of fit), every row
    (``slice(None)``) where they cover them all or where there are no folds."""
    if fitted is not None and fitted.tests is not None:
        if num_samples(p.X) != fitted.n_samples:
            raise ValueError(
                "with an ensemble, the outputs the decoder is fitted on are each member's "
                "outputs on the rows it was not trained on: this needs the data fit was "
                f"called with ({fitted.n_samples} samples); got {num_samples(p.X)} samples."
            )
        return np.sort(np.concatenate(fitted.tests))
    if p.splits is None:
        return slice(None)
    covered = np.zeros(p.y.size, dtype=bool)
    for _, test in p.splits:
        covered[test] = True
    return _rows_with_output(covered)


def rows_of(X, params, rows):
    """``params`` with its sample-aligned values (one per row of ``X``) taken on ``rows``."""
    return check_method_params(X, params=params, indices=rows)


def subproblem(p, rows):
    """``p`` on the samples ``rows``: data, labels, weights and sample-aligned fit
    parameters taken on them."""
    learner_params = [check_method_params(p.X, params=d, indices=rows) for d in p.learner_params]
    return Problem(
        take_rows(p.X, rows),
        p.y[rows],
        p.classes,
        p.code,
        p.seeds,
        p.output,
        None if p.sample_weight is None else p.sample_weight[rows],
        learner_params,
        p.split_params,
        p.plan,
        p.code_parts,
    )


def _per_column_params(p):
    """The columns' fit parameters: one dict when they share it (a single learner),
    else the list (per-column learners under routing); :mod:`~convexagg.binary` takes
    either."""
    first = p.learner_params[0] if p.learner_params else {}
    return first if all(d is first for d in p.learner_params) else list(p.learner_params)


def _fit_all(fit, p, learners, n_jobs, warm, progress, *output):
    return fit(
        learners,
        p.X,
        p.y,
        p.code,
        *output,
        n_jobs=n_jobs,
        seeds=p.seeds,
        fit_params=_per_column_params(p),
        warm=warm,
        progress=progress,
    )


def _outputs(estimators, X, output, n_jobs):
    """The binaries' outputs on ``X``: on its device for array-API ``X``."""
    if array_namespace(X) is not None:
        return predict_binaries_on_device(estimators, X, output)
    return predict_binaries(estimators, X, output, n_jobs)


def member_outputs(members, tests, X, output, n_jobs):
    """Out-of-fold outputs of an ensemble's members on the rows each was tested on."""
    namespace = array_namespace(X)
    if namespace is not None:  # on X's device, assembled there
        parts = [
            predict_binaries_on_device(member, namespace.take(X, test), output)
            for member, test in zip(members, tests)
        ]
        return namespace.place_rows(parts, tests, num_samples(X))
    Q = np.zeros((num_samples(X), len(members[0])))
    for member, test in zip(members, tests):
        Q[test] = predict_binaries(member, take_rows(X, test), output, n_jobs)
    return Q
