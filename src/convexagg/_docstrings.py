"""Parameter descriptions shared by several estimators, written once.

A parameter that means the same in several classes (the estimators hand the
decoder's parameters to :class:`~convexagg.ConvexDecoder` unchanged) is described
here, and each class's docstring names it on a line of its own as
``%(name)s``; :func:`fill_doc` puts the text there, so every estimator's page
documents every parameter where the user reads it.
"""

from __future__ import annotations

import re

__all__ = ["PARAMETERS", "fill_doc"]

PARAMETERS = {
    # -- the estimators (CodeMatrixClassifier and its subclasses) --
    "estimator": """\
estimator : classifier, or list of classifiers, default=None
    Binary learner, cloned for each code column (and each fold). None: a
    logistic regression on standardised features,
    ``make_pipeline(StandardScaler(), LogisticRegression())``
    (:func:`~convexagg.defaults.default_learner`; the scaler does not centre a
    sparse ``X``), made anew by each ``fit``: it fits raw features of any
    scale, but no strings or missing values -- for a table with those, pass a
    pipeline that encodes and imputes them (a ``ColumnTransformer``) or a
    learner that takes them. A list holds one learner per code
    column (a different learner per binary problem, as MATLAB's ``fitcecoc``
    allows), or, with ``cv="prefit"``, one fitted binary classifier per
    column, trained with the positive side as its larger class label (``1``
    or ``True``). Fitted binaries each wrapped in
    :class:`~sklearn.frozen.FrozenEstimator` are given binaries too
    (scikit-learn's way of saying "prefit"; ``cv`` other than its default or
    ``"prefit"`` then raises). The outputs are
    ``predict_proba`` if every learner has one, else ``decision_function``
    margins.""",
    "code": """\
code : {"ovo+ovr", "ovo", "ovr", "ecoc", "complete", "ternary_complete", "ordinal", \
"sparse_random", "dense_random"}, names joined by "+", or array-like
    Code matrix or its name (:func:`convexagg.codes.make_code`): ``"ovo"``
    one-vs-one, a binary problem per pair of classes; ``"ovr"`` one-vs-rest,
    one per class against the others; ``"ovo+ovr"`` both in one code;
    ``"complete"`` every split of the classes in two; ``"ecoc"`` the paper's
    error-correcting code, ``"complete"`` below 8 classes and
    ``"sparse_random"`` from 8; ``"ternary_complete"`` and ``"ordinal"``
    MATLAB's designs of those names; ``"sparse_random"`` and
    ``"dense_random"`` random codes (seeded by ``random_state``). Names
    joined by ``+`` put several decompositions in one code, weighed by one
    aggregation (a column repeating an earlier one, up to sign, is dropped).
    An array has shape ``(n_classes, n_classifiers)`` with rows in the order
    of ``classes_`` (sorted labels); entries ``+1`` (positive side), ``-1``
    (negative side), ``0`` (class left out of that binary problem).""",
    "cv": """\
cv : int, cross-validation generator, iterable, "in_sample" or "prefit", default=5
    Which binary outputs the weights (the decoder) are fitted on. An int
    or a splitter: out-of-fold outputs, which look like the outputs the
    binaries give at test time (see ``ensemble``). An int is that many folds of
    :class:`~sklearn.model_selection.StratifiedKFold` *shuffled* (seeded by
    ``random_state``), unlike scikit-learn's int ``cv``, whose folds follow
    the row order: rows stored sorted (by speaker, by an enumeration of the
    attributes) then give folds unlike a random test part, and weights too
    timid (QUALITY.md). Pass ``StratifiedKFold(5)`` for folds
    in row order, a group splitter for grouped rows. "in_sample": the outputs
    of binaries trained on all rows, on those same rows (the paper's protocol: one set of binaries,
    but their outputs on their own training rows are more confident than at
    test time, and weights fitted on them give overconfident probabilities;
    QUALITY.md measures it). "prefit": ``estimator`` holds already-fitted
    binaries and only the decoder is fitted (so do binaries wrapped in
    :class:`~sklearn.frozen.FrozenEstimator`). None is the default, 5 folds,
    as in scikit-learn.""",
    "binary_param_grid": """\
binary_param_grid : dict or list of dicts, default=None
    Parameters of the binary learner to choose on the out-of-fold outputs,
    as ``GridSearchCV``'s ``param_grid``, named as the learner's
    ``get_params`` names them: ``{"logisticregression__C": [0.01, 0.1, 1,
    10]}`` for the default learner (a pipeline), ``{"C": [...]}`` for a
    ``LogisticRegression``; set on every binary learner. For each candidate
    the fold binaries are trained, the aggregation is fitted on their
    out-of-fold outputs, and the candidate of smallest aggregated
    out-of-fold log-loss is kept (its fold binaries as the ensemble, or
    refitted on all rows with ``ensemble=False``). Needs out-of-fold outputs
    (``cv`` an int or a splitter). None: the learner as given.""",
    "ensemble": """\
ensemble : bool or "auto", default="auto"
    With out-of-fold outputs: keep the binaries of every fold and average
    the members' predictions (``True``, as
    :class:`~sklearn.calibration.CalibratedClassifierCV` does:
    the test-time outputs come from the models whose outputs the decoder
    was fitted on), or refit the binaries on all rows (``False``). "auto"
    is True. Setting it with ``cv="in_sample"``, ``"prefit"`` or frozen
    binaries raises. ``estimators_`` holds the members: one list of
    binaries per fold with an ensemble, a single list otherwise.""",
    "n_jobs": """\
n_jobs : int, default=None
    Jobs for training and predicting the binaries (joblib). Under
    ``joblib.parallel_config(backend="dask")`` (with a ``distributed``
    client) the binary problems are trained on the Dask workers.""",
    "random_state": """\
random_state : int, RandomState instance or None, default=0
    Seeds random codes and the binary learners' own ``random_state``
    parameters where those are left at None (one seed per column, the same
    in every fold), and shuffles the folds of an int ``cv`` (and of the
    aggregation's own cross-validations). Fixed by default so that the same
    data gives the same model; None for a fresh draw (from NumPy's global
    generator). A cross-validation splitter passed as ``cv`` keeps its own
    seed.""",
    "verbose": """\
verbose : int, default=0
    Progress messages, at scikit-learn's levels: 0 is silent; 1 prints a
    line per stage of ``fit`` (the binaries: fold by fold, how many are
    trained and the time elapsed; the decoder: for
    :class:`~convexagg.ConvexDecoder`, its iterations and final objective)
    and, where standard error is a terminal and tqdm is installed, a
    progress bar over the binaries; 2 and above add a line per binary and
    the solver's line per iteration. The decoder gets this level
    where it has a ``verbose`` parameter.""",
    "warm_start": """\
warm_start : bool, default=False
    Refit reusing the previous fit when the classes and the code are the
    same: copies of its binaries are refitted rather than fresh clones (a
    learner's own ``warm_start`` then continues from its solution; a failed
    refit leaves the previous model as it was), and a decoder with
    ``warm_start`` (the convex aggregation's weights) starts from its
    previous solution. Binaries fitted per fold are always fresh.""",
    # -- the fitted attributes of every CodeMatrixClassifier --
    "fitted_attributes": """\
classes_ : ndarray of shape (n_classes,)
    The class labels, sorted; the rows of ``code_matrix_`` and the columns
    of ``predict_proba``.
code_matrix_ : ndarray of shape (n_classes, n_classifiers)
    The code matrix built from ``code``: column ``l`` is binary problem
    ``l`` (entries +1, -1, 0).
estimators_ : list of lists of fitted binary classifiers
    The members that predict, whatever ``cv``: one list per member, each
    with one fitted binary per code column. An ensemble (out-of-fold
    outputs, ``ensemble="auto"`` or True) has one member per fold; every
    other fit has one member (``estimators_[0]`` its binaries). The linear
    binaries predict from their coefficients as stacked at fit (and at
    load): a binary changed or replaced here afterwards is not seen.
ensemble_ : bool
    Whether the members are an ensemble of fold binaries.
decoder_ : fitted decoder
    The aggregation, fitted on the binary outputs ``cv`` names.
binary_output_ : {"proba", "margin"}
    What the binaries give the decoder: ``predict_proba`` when every
    learner has it, else ``decision_function`` margins.
oof_proba_ : ndarray of shape (n_samples, n_classes) or None
    Out-of-fold class probabilities of the training rows (NaN for a row
    in no test fold), from the outputs of the binaries not trained on
    each row. Where a penalty of the aggregation was chosen by
    cross-validation (``zero_entry_penalty="auto"`` within its limits, or
    a list of values), the aggregation too was not fitted on the row: its
    probabilities are those of the choice's fit on the other folds, at the
    chosen value. Otherwise they are the fitted decoder's, whose weights
    were fitted on these same rows (few weights: close to held-out
    probabilities; QUALITY.md measures both). The calibration scores of
    cross-conformal class sets
    (:class:`convexagg.decision.ConformalClassifier`), at no extra fit.
    None with ``cv="in_sample"`` or ``"prefit"`` (no out-of-fold outputs)
    or a decoder without ``predict_proba``.
oof_fold_ : ndarray of shape (n_samples,) or None
    With an ensemble, the member (fold) whose binaries gave each row's
    out-of-fold outputs (-1 for none); None otherwise.
resolved_ : dict
    The model the fit resolved for the data
    (:func:`convexagg.defaults.resolve_model`), option by option:
    ``{option: {"value": ..., "reason": str}}`` for the learner
    (``"estimator"``), ``"ensemble"``, the decoder (``"decoder"``; for the
    convex-aggregation estimators ``"entry_weight_shrinkage"``,
    ``"column_penalty"`` and ``"zero_entry_penalty"``) and its
    ``"solver"``: the value the fit used and why, ``"given"`` for a value set
    by the user. E.g. ``resolved_["zero_entry_penalty"]`` is ``{"value":
    None, "reason": "4,212 zero-entry weights above the limit of 3,000"}``
    where the zero entries were left out, and a penalty chosen by
    cross-validation holds the chosen value and the values it was chosen
    among.
n_features_in_ : int
    The number of features (columns) of ``X`` in ``fit``; not set when
    ``X`` has no columns to count (a list of texts for a vectorising
    pipeline).
feature_names_in_ : ndarray of shape (`n_features_in_`,)
    Only when ``X`` has string column names; ``predict`` checks them.""",
    # -- the fitted attributes of the convex-aggregation estimators --
    "model_attributes": """\
weights_ : ndarray of shape (n_classifiers,)
    Learned aggregation weights (with entry weights: the shared column
    weights the entry weights are shrunk toward).
entry_weights_ : ndarray of shape (n_classes, n_classifiers)
    The weight of each code entry (``weights_`` in every nonzero entry of
    its column without ``entry_weight_shrinkage``).
zero_entry_weights_ : ndarray of shape (2, n_classes, n_classifiers)
    The zero entries' weights of each side (zeros without
    ``zero_entry_penalty``).
intercept_ : ndarray of shape (n_classes,)
    Learned class intercepts (zeros without ``fit_intercept``).
n_iter_ : int
    Solver iterations of the final fit.
entry_weight_shrinkage_ : float or None
    The shrinkage the weights were fitted with: "auto" resolved for the
    rows, the value chosen from a list, or the value given (None: one
    weight per classifier).
entry_weight_shrinkage_scores_ : ndarray of shape (n_values,) or None
    With a list of ``entry_weight_shrinkage`` values: each one's
    cross-validated log-loss (sample-weighted mean over the held-out rows);
    else None.
zero_entry_penalty_ : float or None
    The zero entries' strength the weights were fitted with: "auto" resolved
    for the rows, the value chosen from a list, or the value given (None:
    the zero entries carry no weight).
zero_entry_penalty_scores_ : ndarray of shape (n_values,) or None
    With a list of ``zero_entry_penalty`` values, or ``"auto"`` within its
    limits: each one's cross-validated log-loss; NaN for the priors of
    ``"auto"`` not fitted (they are fitted from strong to weak until the
    score rises); else None.""",
    # -- the convex aggregation's model (ConvexDecoder and the estimators that hand them on) --
    "alpha": """\
alpha : float, default=1e-4
    Regularisation strength (the paper's lambda), in ``[0, 1e10]`` (above
    about 1e6 every weight is 0 to working precision). The penalty is
    ``alpha/2 |w|^2`` (``"l2"``), ``alpha sum(w)`` (``"l1"``), or
    ``alpha (l1_ratio sum(w) + (1 - l1_ratio)/2 |w|^2)`` (``"elasticnet"``,
    as in scikit-learn); see :class:`~convexagg.aggregation.Penalty`.""",
    "loss": """\
loss : {"cross_entropy", "exponential", "logistic", "hinge"}, default="cross_entropy"
    Discrepancy ``d`` between a code entry and a binary output, summed with
    the weights into each class's discrepancy; see :mod:`convexagg.losses`
    for which binary outputs (probabilities or margins) each accepts.""",
    "penalty": """\
penalty : {"l2", "l1", "elasticnet"}, default="l2"
    The regularisation of the weights (see ``alpha``). With ``w >= 0`` the
    L1 term is linear, so the same solvers solve all three.""",
    "l1_ratio": """\
l1_ratio : float, default=None
    L1 share of the elastic net, in ``[0, 1]`` (0.5 when None); setting it
    for another penalty raises.""",
    "fit_intercept": """\
fit_intercept : bool, default=False
    Add a free intercept per class to the class discrepancies (scikit-learn's
    name). The intercepts carry the L2 term (at least 1e-6; they are unique
    only up to a common constant otherwise) and are fitted with the weights
    by the same solvers.""",
    "entry_weight_shrinkage": """\
entry_weight_shrinkage : float, default=None
    Entry weights: with a value ``s > 0``, every nonzero code entry
    ``(k, l)`` gets its own weight ``u_kl >= 0``, so
    ``rho[i, k] = sum_l u_kl d(C[k, l], Q[i, l]) (+ b_k)``, and the
    penalty ``alpha/2 |w|^2`` on the shared weights becomes
    ``alpha/2 |w|^2 + s/2 sum_{k,l} (u_kl - w_l)^2``, minimised over the
    shared column weights ``w`` too: a classifier may count more for one
    of its classes than for another, shrunk toward one weight per
    classifier. The problem stays convex with box constraints and every
    solver fits it (see :mod:`convexagg.aggregation.entries`). None or
    ``inf``: one weight per classifier, the paper's model. Needs
    ``penalty="l2"``.""",
    "column_penalty": """\
column_penalty : array-like of shape (n_classifiers,), default=None
    An extra quadratic penalty ``column_penalty[l]/2 * w_l**2`` on classifier
    ``l``'s weight (finite, ``>= 0``), absolute: it does not scale with
    ``alpha``, so alpha paths and :class:`~convexagg.ConvexAggregationClassifierCV`
    keep it. With entry weights it penalises the shared column weight ``w_l``.
    None: none (the same fit as zeros).""",
    "zero_entry_penalty": """\
zero_entry_penalty : float, default=None
    Zero entries: with a value ``c >= 0``, every zero code entry ``(k, l)`` (a
    classifier that does not separate class ``k``, e.g. a one-vs-one
    classifier between two other classes) gets two weights ``v+_kl, v-_kl``,
    one per side of the classifier, free in sign (the code says nothing of
    which side speaks for ``k``; the code's own entries stay ``>= 0``):
    ``rho[i, k] += v+_kl d(+1, Q[i, l]) + v-_kl d(-1, Q[i, l])``, so class
    ``k``'s probability can rise or fall with how such a classifier behaves
    on its rows (unsure, or leaning to one side). They are shrunk toward 0 by
    ``(alpha + c)/2 * v**2``, ``c`` absolute like ``column_penalty``; at
    ``v = 0`` the model is the one without them. They are twice as many as
    the code's zero entries: with a one-vs-one code their number grows as the
    cube of the number of classes (26 classes: 15,600), and so does the fit.
    Needs entry weights (``entry_weight_shrinkage``). None: the zero entries
    carry no weight (the paper's model).""",
    "column_penalty_parts": """\
column_penalty : array-like of shape (n_classifiers,) or dict, default=None
    An extra quadratic penalty ``column_penalty[l]/2 * w_l**2`` on classifier
    ``l``'s weight (finite, ``>= 0``), absolute: it does not scale with
    ``alpha``. A dict maps the names of a string ``code`` (the parts of
    ``"ovo+ovr"``) to a strength for every column of that part, e.g.
    ``code="ovo+ovr", column_penalty={"ovr": 0.1}`` (a column two parts
    share takes the named part's strength; see
    :func:`~convexagg.codes.make_code_parts`). Handed to
    :class:`ConvexDecoder` as the array. None: none.""",
    "solver": """\
solver : {"auto", "projected_newton", "interior_point", "lbfgsb", \
"projected_subgradient"} or SolverConfig, default="auto"
    How the weights are fitted; one parameter carries every setting of the
    fit (:mod:`convexagg.solvers`). ``"auto"`` is the projected Newton method
    (:class:`~convexagg.solvers.ProjectedNewton`), the fastest reliable
    solver measured (``BENCHMARKS.md``); ``"interior_point"`` is the paper's
    Algorithm 1 exactly (:class:`~convexagg.solvers.InteriorPoint`, which
    ``convexagg reproduce`` pins). A configuration object sets the rest,
    e.g. ``solver=InteriorPoint(method="predictor_corrector", tol=1e-6)``,
    and its settings are grid-searchable (``solver__tol``). A setting the
    training criterion cannot use raises an error naming both.""",
}


def _described(first_line, name, *more):
    """An entry of its own first line, ``PARAMETERS[name]``'s description, then ``more``."""
    description = PARAMETERS[name].split("\n", 1)[1]
    return "\n".join([first_line, description, *("    " + line for line in more)])


# -- the default aggregation model, shared by ConvexAggregationClassifier and its CV sibling --
PARAMETERS["model_code"] = _described(
    PARAMETERS["code"].split("\n", 1)[0] + ', default="ovo+ovr"',
    "code",
    "The default weighs the one-vs-one and the one-vs-rest binaries in one",
    "aggregation: on the Kull et al. suite it ranks before every calibrated",
    "multinomial logistic regression measured (QUALITY.md).",
)
PARAMETERS["model_fit_intercept"] = _described(
    "fit_intercept : bool, default=True",
    "fit_intercept",
    "On by default: the intercepts carry the class priors that the binaries'",
    "losses leave out (QUALITY.md).",
)
PARAMETERS["model_entry_weight_shrinkage"] = _described(
    'entry_weight_shrinkage : float, None, "auto" or list of float, default="auto"',
    "entry_weight_shrinkage",
    '"auto" with ``penalty="l2"``: ``DEFAULT_ENTRY_WEIGHT_PRIOR / n`` (2 / n',
    "for the ``n`` rows the weights are fitted on, the sum of their sample",
    "weights when given: a fixed prior on the summed log-likelihood) kept",
    "within ``ENTRY_WEIGHT_SHRINKAGE_RANGE``, [0.001, 0.01]: 0.01 up to 200",
    "rows, where a weaker shrinkage loses, and 0.001 from 2,000 (QUALITY.md).",
    'None with ``"l1"`` and ``"elasticnet"``, whose penalty the shrinkage\'s',
    "L2 term does not join. A list of at least two values (e.g. ``[0.01,",
    "0.003, 0.001]``): the one of smallest log-loss in a 3-fold",
    "cross-validation of the aggregation alone on the outputs it is fitted on",
    "(the binaries are not retrained; ties go to the first value; each",
    "fold's fits warm-started along the list); the best shrinkage differs",
    "between data sets. The value used is in ``entry_weight_shrinkage_``.",
)
PARAMETERS["model_column_penalty"] = _described(
    'column_penalty : array-like of shape (n_classifiers,), dict or "auto", default="auto"',
    "column_penalty_parts",
    '"auto": ``DEFAULT_OVR_COLUMN_PENALTY`` (0.1) on the one-vs-rest columns',
    'of a combined code (``"ovo+ovr"``) that no other part has, so that the',
    "aggregation leans on the one-vs-one binaries and takes from the",
    "one-vs-rest ones what they add (QUALITY.md); none for any other code",
    "(with two classes every part is the same column).",
)
PARAMETERS["model_zero_entry_penalty"] = _described(
    'zero_entry_penalty : float, None, "auto" or list of float, default="auto"',
    "zero_entry_penalty",
    "A list of at least two values (e.g. ``[1, 0.1, 0.01]``): the one of",
    "smallest log-loss in a 3-fold cross-validation of the aggregation",
    "alone, as for a list of ``entry_weight_shrinkage`` (not together with",
    'one). "auto": such a choice among ``c / n`` for ``c`` in',
    "``ZERO_ENTRY_PRIORS`` (80, 20, 5, 1.25) and the ``n`` rows the weights",
    "are fitted on (the sum of their sample weights when given): fixed priors",
    "on the summed log-likelihood, fitted from the strongest until the",
    "held-out log-loss rises; the best strength differs between data sets by",
    'more than a factor of 64 (QUALITY.md). "auto" weighs the zero entries',
    "only where their fit is affordable: at most",
    "``ZERO_ENTRY_AUTO_MAX_WEIGHTS`` (3,000) zero-entry weights -- up to 15",
    "classes with the default code -- and at most ``ZERO_ENTRY_AUTO_MAX_ROWS``",
    "(3,000) rows; beyond either, and without entry weights, with a list of",
    "``entry_weight_shrinkage`` or on array-API inputs, it is None (the model",
    "without them; ``verbose`` says why). Give a float or a list to weigh",
    "them regardless. The value used is in ``zero_entry_penalty_``.",
)


_PLACEHOLDER = re.compile(r"^([ \t]*)%\((\w+)(\.description)?\)s[ \t]*$", re.MULTILINE)


def fill_doc(obj):
    """Replace each line ``%(name)s`` of ``obj.__doc__`` by ``PARAMETERS[name]``,
    indented as the line was; an unknown name raises (a typo must not ship).

    ``%(name.description)s`` puts the text without its first line (``name : type,
    default=...``): a class whose default differs writes its own first line (and what
    its default means) above it, and shares the rest."""

    def entry(match):
        indent, name, description = match.groups()
        if name not in PARAMETERS:
            raise KeyError(f"{obj.__qualname__}'s docstring names an unknown parameter {name!r}")
        lines = PARAMETERS[name].split("\n")
        if description:  # the shared lines are indented by 4 under their own first line
            lines = [line[4:] for line in lines[1:]]
        return "\n".join(indent + line if line else line for line in lines)

    obj.__doc__ = _PLACEHOLDER.sub(entry, obj.__doc__)
    return obj
