"""ONNX export of fitted convexagg classifiers, through skl2onnx.

:func:`to_onnx` converts a fitted :class:`~convexagg.ConvexAggregationClassifier`
(or :class:`~convexagg.ConvexAggregationClassifierCV`, or a
:class:`~convexagg.CodeMatrixClassifier` with a :class:`~convexagg.ConvexDecoder`
or :class:`~convexagg.LossBasedDecoder`), alone or as the last step of a
scikit-learn ``Pipeline``, into an ONNX graph that onnxruntime runs without
Python. Importing this module registers the converter with skl2onnx
(:func:`register_converters`), so that ``skl2onnx.to_onnx`` takes these models
too, anywhere in a pipeline.

The graph computes what ``predict_proba`` and ``predict`` compute:

* the **binary outputs** of each member (one member, or one per fold of an
  ensemble): the linear binaries that the library predicts in one product
  (scikit-learn's linear classifiers, alone or after a ``StandardScaler``; see
  :mod:`convexagg.binary`) as that same product, ``(x - center) @ W + b``;
  every other binary through skl2onnx's own converter (its probability of the
  positive side, or its raw score for margins, and for gradient boosting the
  sigmoid of its raw score in float64); a one-sided column's constant;
* the **losses** of the decoder (:mod:`convexagg.losses`), clipped and capped as
  there; where the library takes the cross-entropy from the log-odds of
  logistic regressions, so does the graph;
* the **aggregation** ``rho = [L_pos, L_neg] @ W + b`` with the decoder's side
  weights (shared, entry and zero-entry weights,
  :func:`convexagg.aggregation.side_weights`) and class intercepts, and the
  softmax of ``-rho``;
* an ensemble's **mean** of its members' probabilities;
* the **label**, ``classes_[argmax]``, and the probabilities, as skl2onnx's
  classifiers give them (``zipmap``, ``nocl`` and ``output_class_labels``
  options included).

The binaries read the input in float64 and the aggregation is computed in
float64, whatever the graph's input type. A float64 graph reproduces
``predict_proba`` to rounding (1e-15) when the binaries compute in float64
(linear models and their scalers). skl2onnx's other converters (tree
ensembles, SVMs) get the input in float32, as they are built for, and compute in
float32: the probabilities of models with such binaries agree to float32
precision (1e-7 on digits). A histogram gradient boosting tree compares float64
inputs with float64 thresholds, which float32 cannot reproduce: a value within
float32 rounding of a threshold (after a ``StandardScaler``, some lie one float64
unit from one) can take the other branch in the graph.

Helpers read from their homes: the fitted model's stacked linear binaries (its
``_linear_stacks``, of ``convexagg.linear_outputs.linear_stack``) and
``convexagg.linear_outputs.is_linear_class`` (which binaries the library stacks, their
stacked coefficients, what a linear classifier is: the one rule), and skl2onnx's
private classifier parser ``_parse_sklearn_classifier`` (the parser skl2onnx
registers for every classifier, wrapped here to check fitting first).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from sklearn.exceptions import NotFittedError
from sklearn.pipeline import Pipeline
from sklearn.utils.validation import check_is_fitted

from ._optional import require
from ._sklearn import parse_sklearn_classifier
from .aggregation import side_weights
from .binary import ConstantBinaryPredictor
from .decoders import ConvexDecoder, LossBasedDecoder
from .estimator import CodeMatrixClassifier
from .linear_outputs import is_linear_class
from .losses import LOSS_CAP, binary_losses

__all__ = ["NotExportableError", "register_converters", "to_onnx"]

# the operator's alias in skl2onnx's registry
ALIAS = "ConvexaggCodeMatrixClassifier"
# the graph's smallest opset: ReduceSum takes its axes as an input
MIN_OPSET = 13
# the cross-entropy's clip: probabilities into [eps, 1 - eps], log-odds into [-C, C]
_EPS = float(np.finfo(np.float64).eps)
_LOG_ODDS_CAP = float(-np.log(_EPS))
# the exponential loss's clip of margins (convexagg.losses: exp at most LOSS_CAP)
_MARGIN_CLIP = float(np.log(LOSS_CAP))
DTYPES = ("auto", "float64", "float32")


class NotExportableError(ValueError):
    """A part of a fitted model that the ONNX export cannot convert: a decoder, a
    binary learner or class labels; the message names it."""


# --------------------------------------------------------------------------- what the graph needs


@dataclass
class _Aggregation:
    """The decoder's model: ``rho = [L_pos, L_neg] @ W + intercept``, ``P = softmax(-rho)``."""

    W: np.ndarray  # (2M, K) side weights
    intercept: np.ndarray  # (K,)
    loss: str
    output: str  # "proba" or "margin"
    log_odds: bool  # takes the cross-entropy from linear binaries' log-odds


def _aggregation(decoder):
    """The :class:`_Aggregation` of a fitted decoder (its public fitted attributes), or
    :class:`NotExportableError` for a decoder the graph does not compute."""
    kind = type(decoder)
    if kind is ConvexDecoder:
        code = decoder.code_
        sides = decoder.zero_entry_weights_ + np.stack(
            [decoder.entry_weights_ * (code == 1), decoder.entry_weights_ * (code == -1)]
        )
        intercept = decoder.intercept_ if decoder.fit_intercept else np.zeros(code.shape[0])
        return _Aggregation(
            side_weights(code, sides),
            np.asarray(intercept, dtype=np.float64),
            decoder.loss,
            decoder.output_,
            decoder.loss == "cross_entropy",
        )
    if kind is LossBasedDecoder:
        code, w = decoder.code_, decoder.weights_
        intercept = np.zeros(code.shape[0])
        if decoder.dont_care == "loss_at_zero":  # a zero entry costs the loss of no margin
            neutral = np.full((1, 1), 0.5 if decoder.output_ == "proba" else 0.0)
            intercept = binary_losses(neutral, decoder.loss, decoder.output_)[0][0, 0] * (
                (code == 0) @ w
            )
        return _Aggregation(side_weights(code, w), intercept, decoder.loss, decoder.output_, False)
    raise NotExportableError(
        f"the decoder {kind.__name__} does not export to ONNX: only ConvexDecoder (the "
        "default, and ConvexAggregationClassifier's) and LossBasedDecoder do. Swap the "
        "decoder of the fitted model with set_params(decoder=ConvexDecoder()).fit_decoder(X, y) "
        "to export it."
    )


def _where(member, column, n_members):
    where = f"the binary classifier of code column {column}"
    return where + (f" in fold member {member}" if n_members > 1 else "")


def _binary_plans(model):
    """Per member, ``(linear columns, their stack or None)``: the binaries the library
    predicts as one product, as the fitted model keeps them (its ``_linear_stacks``, of
    :func:`convexagg.linear_outputs.linear_stack`)."""
    return [(list(stacked.linear), stacked.stack) for stacked in model._linear_stacks]


def _convertible(est, where):
    """Raise :class:`NotExportableError` naming ``where`` unless skl2onnx converts
    ``est`` (and every step of a pipeline, a column transformer or a feature union)."""
    from skl2onnx import get_model_alias
    from sklearn.compose import ColumnTransformer
    from sklearn.pipeline import FeatureUnion

    if isinstance(est, str) or est is None:  # "passthrough", "drop"
        return
    if type(est) is Pipeline:
        for _, step in est.steps:
            _convertible(step, where)
        return
    if isinstance(est, ColumnTransformer):
        for _, transformer, _ in est.transformers_:
            _convertible(transformer, where)
        return
    if isinstance(est, FeatureUnion):
        for _, transformer in est.transformer_list:
            _convertible(transformer, where)
        return
    try:
        get_model_alias(type(est))
    except RuntimeError:  # skl2onnx's "Unable to find alias for model"
        raise NotExportableError(
            f"{where} ({type(est).__name__}) cannot be exported to ONNX: skl2onnx has no "
            "converter for "
            f"{type(est).__module__}.{type(est).__name__}. Register one with "
            "skl2onnx.update_registered_converter, or use a learner skl2onnx converts "
            "(linear models and their pipelines, tree ensembles, SVC, ...)."
        ) from None


def check_exportable(model, stack_linear=True):
    """Raise unless the graph can compute ``model``: fitted, a decoder it computes, class
    labels ONNX holds, and binaries that are stacked, constant or skl2onnx-convertible.

    Parameters
    ----------
    model : CodeMatrixClassifier
        The fitted estimator (not a pipeline).
    stack_linear : bool, default=True
        Whether linear binaries are computed as the library's stacked product.

    Raises
    ------
    NotFittedError
        ``model`` is not fitted.
    NotExportableError
        Naming the decoder, the binary learner and its code column, or the labels.
    """
    if not isinstance(model, CodeMatrixClassifier):
        raise NotExportableError(
            f"convexagg.export converts CodeMatrixClassifier and its subclasses, got "
            f"{type(model).__name__}."
        )
    check_is_fitted(model)
    _aggregation(model.decoder_)
    classes = np.asarray(model.classes_)
    if classes.dtype.kind == "f" and not np.all(classes == np.round(classes)):
        raise NotExportableError(
            f"classes_ holds non-integer numbers ({classes[:3].tolist()}...); ONNX labels "
            "are integers or strings: fit on integer or string labels to export."
        )
    if classes.dtype.kind not in "biufUSO":
        raise NotExportableError(f"classes_ of dtype {classes.dtype} cannot be ONNX labels.")
    n = len(model.estimators_)
    for m, ((linear, _), member) in enumerate(zip(_binary_plans(model), model.estimators_)):
        for l, est in enumerate(member):
            if (stack_linear and l in linear) or isinstance(est, ConstantBinaryPredictor):
                continue
            _convertible(est, _where(m, l, n))


# --------------------------------------------------------------------------- the graph


class _Graph:
    """Nodes and constants of one operator's graph: each call adds a node and returns
    its output's name."""

    def __init__(self, scope, container, prefix):
        self.scope, self.container, self.prefix = scope, container, prefix

    def name(self, hint):
        return self.scope.get_unique_variable_name(f"{self.prefix}_{hint}")

    def const(self, value, hint, dtype=np.float64):
        from onnx import TensorProto, numpy_helper

        name = self.name(hint)
        array = np.asarray(value, dtype=dtype)
        if array.dtype == object:  # strings: onnx stores them as bytes, not raw data
            values = [str(v).encode("utf-8") for v in array.ravel()]
            self.container.add_initializer(name, TensorProto.STRING, list(array.shape), values)
        else:
            tensor = numpy_helper.from_array(array, name=name)
            self.container.add_initializer(name, None, None, tensor)
        return name

    def __call__(self, op, inputs, hint=None, **attrs):
        out = self.name(hint or op.lower())
        self.container.add_node(
            op,
            inputs,
            out,
            name=self.scope.get_unique_operator_name(f"{self.prefix}_{op}"),
            **attrs,
        )
        return out

    def cast(self, x, to):
        return self("Cast", [x], "cast", to=to)

    def clip(self, x, lo, hi):
        return self("Clip", [x, self.const(lo, "lo"), self.const(hi, "hi")], "clipped")

    def softplus(self, x):
        """``log(1 + exp(x))`` in float64 (onnxruntime's Softplus has no float64 kernel):
        ``max(x, 0) + log(1 + exp(-|x|))``."""
        tail = self("Exp", [self("Neg", [self("Abs", [x])])])
        return self("Add", [self("Relu", [x]), self("Log", [self("Add", [tail, self.one])])])

    @property
    def one(self):
        if not hasattr(self, "_one"):
            self._one = self.const(1.0, "one")
        return self._one


def _losses(g, Q, agg, from_log_odds):
    """``(L_pos, L_neg)`` of the outputs ``Q`` (float64) as :mod:`convexagg.losses`
    computes them; ``from_log_odds``: ``Q`` holds log-odds (cross-entropy only)."""
    if from_log_odds:  # log1p(exp(-z)) and that + z, z clipped to [-C, C]: exp(C) is finite
        z = g.clip(Q, -_LOG_ODDS_CAP, _LOG_ODDS_CAP)
        pos = g("Log", [g("Add", [g("Exp", [g("Neg", [z])]), g.one])])
        return pos, g("Add", [pos, z])
    if agg.loss == "cross_entropy":  # -log q and -log(1 - q), q clipped to [eps, 1 - eps]
        q = g.clip(Q, _EPS, 1.0 - _EPS)
        return g("Neg", [g("Log", [q])]), g("Neg", [g("Log", [g("Sub", [g.one, q])])])
    if agg.loss == "exponential":
        if agg.output == "proba":
            m = g("Sub", [Q, g.const(0.5, "half")])
        else:
            m = g.clip(Q, -_MARGIN_CLIP, _MARGIN_CLIP)
        return g("Exp", [g("Neg", [m])]), g("Exp", [m])
    cap = g.const(LOSS_CAP, "cap")
    if agg.loss == "logistic":
        pos, neg = g.softplus(g("Neg", [Q])), g.softplus(Q)
    else:  # hinge
        pos, neg = g("Relu", [g("Sub", [g.one, Q])]), g("Relu", [g("Add", [g.one, Q])])
    return g("Min", [pos, cap]), g("Min", [neg, cap])


def _linear_block(g, X64, stack, output, log_odds):
    """The stacked linear binaries' outputs, ``(n, len)``: the product of
    :func:`convexagg.linear_outputs.predict_linear` (then its sigmoid, for probabilities
    not taken as log-odds)."""
    if stack.center is not None:
        X64 = g("Sub", [X64, g.const(stack.center, "center")])
    z = g("Add", [g("MatMul", [X64, g.const(stack.W, "coef")]), g.const(stack.b, "intercept")])
    return z if output == "margin" or log_odds else _sigmoid(g, z)


def _sigmoid(g, z):
    """``1 / (1 + exp(-z))``, as the library computes the sigmoid."""
    return g("Reciprocal", [g("Add", [g("Exp", [g("Neg", [z])]), g.one])])


def _probability_of_raw_score(est):
    """Whether ``est``'s probability of the positive side is the sigmoid of its raw score:
    scikit-learn's gradient boosting with the log-loss. skl2onnx computes trees in float32,
    where a probability within 6e-8 of 1 rounds to 1 (and its cross-entropy loss from 17 to
    36); the graph takes the raw score (float32-close) and its sigmoid in float64."""
    from sklearn.ensemble import GradientBoostingClassifier, HistGradientBoostingClassifier

    final = est.steps[-1][1] if type(est) is Pipeline else est
    boosting = (HistGradientBoostingClassifier, GradientBoostingClassifier)
    return (
        any(type(final).predict_proba is cls.predict_proba for cls in boosting)
        and getattr(final, "loss", "log_loss") == "log_loss"
    )


def _constant_column(g, X, value):
    """An ``(n, 1)`` column of ``value``, ``n`` the rows of ``X``."""
    from onnx import TensorProto, helper

    n = g("Slice", [g("Shape", [X]), g.const([0], "zero", np.int64), g.const([1], "one", np.int64)])
    return g(
        "ConstantOfShape",
        [g("Concat", [n, g.const([1], "width", np.int64)], "rows", axis=0)],
        "constant",
        value=helper.make_tensor("value", TensorProto.DOUBLE, [1], [float(value)]),
    )


class _Inputs:
    """The operator's input as float64 (what the library's binaries read) and, made
    when first asked for, as float32 (what skl2onnx's other converters are built for)."""

    def __init__(self, g, variable):
        from onnx import TensorProto
        from skl2onnx.common.data_types import DoubleTensorType, FloatTensorType

        self.g, self.given, self._x32 = g, variable, None
        self.float64 = self._as(DoubleTensorType, TensorProto.DOUBLE, "X64")
        self._float32 = lambda: self._as(FloatTensorType, TensorProto.FLOAT, "X32")

    def _as(self, kind, to, hint):
        """The input as a variable of type ``kind``: itself, or cast (ONNX type ``to``)."""
        if isinstance(self.given.type, kind):
            return self.given
        cast = self.g.scope.declare_local_variable(f"convexagg_{hint}", kind())
        self.g.container.add_node(
            "Cast",
            [self.given.full_name],
            [cast.onnx_name],
            name=self.g.scope.get_unique_operator_name("convexagg_Cast"),
            to=to,
        )
        return cast

    @property
    def float32(self):
        """The input as float32 (cast once, on first use)."""
        if self._x32 is None:
            self._x32 = self._float32()
        return self._x32

    def of(self, est):
        """The input ``est`` reads: float64 if every step of it computes in float64
        under skl2onnx (linear classifiers and scalers), else float32 -- its trees, for
        instance, compare float32 inputs with float32 thresholds, as scikit-learn's
        forests compare theirs; a float64 input would be compared differently."""
        return self.float64 if _computes_in_float64(est) else self.float32


def _computes_in_float64(est):
    """Whether skl2onnx converts every step of ``est`` into float64 arithmetic on a
    float64 input: scikit-learn's linear classifiers and scalers, alone or in a pipeline."""
    from sklearn.preprocessing import MaxAbsScaler, MinMaxScaler, RobustScaler, StandardScaler

    steps = [step for _, step in est.steps] if type(est) is Pipeline else [est]
    scalers = (StandardScaler, MaxAbsScaler, MinMaxScaler, RobustScaler)
    return all(
        step is None
        or isinstance(step, str)  # "passthrough"
        or isinstance(step, scalers)
        or is_linear_class(type(step), "margin")
        for step in steps
    )


def _converted_column(g, X, est, raw, where):
    """The output on ``X`` (an input variable) of a binary converted by skl2onnx's own
    converter, as an ``(n, 1)`` float64 column: its probability of the positive side, or
    (``raw``) its raw score, the decision function (a logistic regression's log-odds)."""
    from onnx import TensorProto
    from skl2onnx import get_model_alias
    from skl2onnx.common.data_types import Int64TensorType

    scope, container = g.scope, g.container
    final = est.steps[-1][1] if type(est) is Pipeline else est
    if raw:
        if not container.has_options(final, "raw_scores"):
            raise NotExportableError(
                f"{where} ({type(final).__name__}) gives margins (decision_function), but "
                "its skl2onnx converter has no raw scores; use a learner with predict_proba."
            )
        container.add_options(id(final), {"raw_scores": True})
        scope.add_options(id(final), {"raw_scores": True})
    sub = scope.declare_local_operator(get_model_alias(type(est)), raw_model=est)
    sub.inputs = [X]
    label = scope.declare_local_variable("binary_label", Int64TensorType())
    scores = scope.declare_local_variable("binary_scores", X.type.__class__())
    sub.outputs.extend([label, scores])
    # the positive side's probability or raw score: the last column
    column = g(
        "Slice",
        [
            scores.onnx_name,
            g.const([-1], "start", np.int64),
            g.const([2], "stop", np.int64),
            g.const([1], "axis", np.int64),
        ],
        "positive",
    )
    return g.cast(column, TensorProto.DOUBLE)


def _member_outputs(g, model, m, plan, agg, inputs, stack_linear):
    """Member ``m``'s binary outputs on the :class:`_Inputs`, ``(n, M)`` float64, and
    whether they are log-odds (where the library takes the cross-entropy from them:
    every binary linear), else probabilities or margins."""
    member, output = model.estimators_[m], model.binary_output_
    linear, stack = plan
    log_odds = agg.log_odds and len(linear) == len(member)
    stacked = linear if stack_linear else []
    pieces, order = [], []
    if stacked:
        pieces.append(_linear_block(g, inputs.float64.onnx_name, stack, output, log_odds))
        order.extend(stacked)
    for l, est in enumerate(member):
        if l in stacked:
            continue
        if isinstance(est, ConstantBinaryPredictor):
            dummy = np.zeros((1, 1))
            value = (
                est.predict_proba(dummy)[0, 1]
                if output == "proba"
                else est.decision_function(dummy)[0]
            )
            pieces.append(_constant_column(g, inputs.given.full_name, value))
        else:
            where = _where(m, l, len(model.estimators_))
            of_raw = output == "proba" and not log_odds and _probability_of_raw_score(est)
            raw = output == "margin" or log_odds or of_raw
            column = _converted_column(g, inputs.of(est), est, raw, where)
            pieces.append(_sigmoid(g, column) if of_raw else column)
        order.append(l)
    Q = pieces[0] if len(pieces) == 1 else g("Concat", pieces, "outputs", axis=1)
    if order != sorted(order):  # back into the code's column order
        Q = g("Gather", [Q, g.const(np.argsort(order), "columns", np.int64)], axis=1)
    return Q, log_odds


def convert(scope, operator, container):
    """skl2onnx converter of a fitted :class:`~convexagg.CodeMatrixClassifier`.

    Parameters
    ----------
    scope : skl2onnx.common._topology.Scope
    operator : skl2onnx.common._topology.Operator
        Its ``raw_operator`` is the fitted model; one input, two outputs (label,
        probabilities).
    container : skl2onnx.common._container.ModelComponentContainer
    """
    from skl2onnx.common.data_types import guess_proto_type
    from skl2onnx.common.utils_classifier import get_label_classes

    model = operator.raw_operator
    if container.target_opset < MIN_OPSET:
        raise NotExportableError(
            f"target_opset={container.target_opset}: the export needs opset {MIN_OPSET} or later."
        )
    options = container.get_options(model, dict(stack_linear=True))
    stack_linear = bool(options["stack_linear"])
    check_exportable(model, stack_linear)
    agg = _aggregation(model.decoder_)
    g = _Graph(scope, container, "convexagg")
    inputs = _Inputs(g, operator.inputs[0])
    members = [
        _member_outputs(g, model, m, plan, agg, inputs, stack_linear)
        for m, plan in enumerate(_binary_plans(model))
    ]
    M, K = model.code_matrix_.shape[1], agg.W.shape[1]
    W_pos = g.const(agg.W[:M], "positive_side_weights")
    W_neg = g.const(agg.W[M:], "negative_side_weights")
    intercept = g.const(agg.intercept, "class_intercepts")
    probas = []
    for from_log_odds in (True, False):
        group = [Q for Q, kind in members if kind == from_log_odds]
        if not group:
            continue
        # the group's members as rows (n * members, M), row i * members + m: one pass of
        # the losses and two matrix products for all
        Q = group[0]
        if len(group) > 1:
            Q = g("Concat", group, "members", axis=1)
            Q = g("Reshape", [Q, g.const([-1, M], "member_rows", np.int64)])
        pos, neg = _losses(g, Q, agg, from_log_odds)
        rho = g("Add", [g("MatMul", [pos, W_pos]), g("MatMul", [neg, W_neg])])
        rho = g("Add", [rho, intercept], "rho")
        P = g("Softmax", [g("Neg", [rho])], "member_proba", axis=1)
        if len(group) > 1:
            P = g("Reshape", [P, g.const([-1, len(group), K], "by_member", np.int64)])
            P = g("ReduceSum", [P, g.const([1], "member_axis", np.int64)], "sum", keepdims=0)
        probas.append(P)
    P = probas[0] if len(probas) == 1 else g("Add", probas)
    if len(members) > 1:  # the members' mean
        P = g("Mul", [P, g.const(1.0 / len(members), "mean")], "proba")
    container.add_node(
        "Cast",
        [P],
        operator.outputs[1].full_name,
        name=scope.get_unique_operator_name("convexagg_Cast"),
        to=guess_proto_type(operator.outputs[1].type),
    )
    # labels: classes_[argmax], the first of ties, as predict
    index = g("ArgMax", [P], "index", axis=1, keepdims=0)
    classes = np.asarray(get_label_classes(scope, model))
    if classes.dtype.kind in "USO":
        labels = g.const(np.array([str(c) for c in classes], dtype=object), "classes", object)
    else:
        labels = g.const(classes.astype(np.int64), "classes", np.int64)
    container.add_node(
        "Gather",
        [labels, index],
        operator.outputs[0].full_name,
        name=scope.get_unique_operator_name("convexagg_Gather"),
        axis=0,
    )


def calculate_output_shapes(operator):
    """skl2onnx shape calculator: checks that the model exports (fitted, its decoder,
    learners and labels; see :func:`check_exportable`), then types the label and the
    probabilities as skl2onnx's classifiers do."""
    from skl2onnx.common.data_types import DoubleTensorType, FloatTensorType
    from skl2onnx.common.shape_calculator import calculate_linear_classifier_output_shapes

    model = operator.raw_operator
    options = operator.scope_inst.get_options(model, dict(stack_linear=True, zipmap=True))
    check_exportable(model, bool(options["stack_linear"]))
    calculate_linear_classifier_output_shapes(operator)
    probabilities = operator.outputs[1]
    if options["zipmap"] is not False and isinstance(probabilities.type, DoubleTensorType):
        # onnx's ZipMap takes float probabilities only
        probabilities.type = FloatTensorType(shape=probabilities.type.shape)


# --------------------------------------------------------------------------- registration


def parse(scope, model, inputs, custom_parsers=None):
    """skl2onnx parser: skl2onnx's own for classifiers (label, probabilities, ZipMap),
    after a clear ``NotFittedError`` for a model not fitted."""
    _check_fitted(model)
    return parse_sklearn_classifier(scope, model, inputs, custom_parsers=custom_parsers)


def _check_fitted(model):
    try:
        check_is_fitted(model)
    except NotFittedError:
        raise NotFittedError(
            f"This {type(model).__name__} is not fitted yet: call fit before exporting it to ONNX."
        ) from None


def register_converters():
    """Register the converter with skl2onnx for :class:`~convexagg.CodeMatrixClassifier`,
    :class:`~convexagg.ConvexAggregationClassifier` and
    :class:`~convexagg.ConvexAggregationClassifierCV` (idempotent; done when this
    module is imported with skl2onnx installed).

    The options are skl2onnx's classifier options (``zipmap``, ``nocl``,
    ``output_class_labels``) and ``stack_linear`` (default True: the linear binaries
    as one product, as the library predicts them; False: each through skl2onnx's
    converter).
    """
    skl2onnx = require("skl2onnx", "ONNX export", "onnx")
    from .estimator import ConvexAggregationClassifier
    from .model_selection import ConvexAggregationClassifierCV

    for cls in (CodeMatrixClassifier, ConvexAggregationClassifier, ConvexAggregationClassifierCV):
        skl2onnx.update_registered_converter(
            cls,
            ALIAS,
            calculate_output_shapes,
            convert,
            parser=parse,
            options={
                "zipmap": [True, False, "columns"],
                "nocl": [True, False],
                "output_class_labels": [False, True],
                "stack_linear": [True, False],
            },
        )


def _final_estimator(model):
    return model.steps[-1][1] if isinstance(model, Pipeline) else model


def _sample(X, dtype):
    """The first row of ``X`` (a DataFrame's float columns, an array) in ``dtype``."""
    if hasattr(X, "dtypes") and hasattr(X, "iloc"):  # a DataFrame: one input per column
        X = X.iloc[:1].copy()
        for column, kind in X.dtypes.items():
            if getattr(kind, "kind", None) == "f":
                X[column] = X[column].astype(dtype)
        return X
    X = np.asarray(X)
    if X.ndim != 2 or X.shape[0] < 1:
        raise ValueError(
            f"X_sample must be 2-D with at least one row (n_samples, n_features), got shape "
            f"{X.shape}."
        )
    return X[:1].astype(dtype) if X.dtype.kind in "biuf" else X[:1]


def _check_runs(onx):
    """Build an onnxruntime session of ``onx`` where onnxruntime is installed: some
    operators pass the checker in float64 but have no float64 kernel (``Imputer``)."""
    try:
        import onnxruntime
    except ImportError:
        return
    onnxruntime.InferenceSession(onx.SerializeToString(), providers=["CPUExecutionProvider"])


def to_onnx(
    model,
    X_sample=None,
    *,
    dtype="auto",
    target_opset=None,
    options=None,
    name=None,
    stack_linear=True,
):
    """Export a fitted convexagg classifier (or a pipeline ending in one) to ONNX.

    The graph's outputs are those of skl2onnx's classifiers: ``label`` (the
    class of ``predict``) and ``probabilities`` (``predict_proba``; a list of
    dictionaries unless the ``zipmap`` option is False).

    Parameters
    ----------
    model : CodeMatrixClassifier or Pipeline
        Fitted; a :class:`~convexagg.CodeMatrixClassifier` with a
        :class:`~convexagg.ConvexDecoder` or :class:`~convexagg.LossBasedDecoder`
        (every :class:`~convexagg.ConvexAggregationClassifier`), or a pipeline
        whose last step is one.
    X_sample : array-like or pandas DataFrame of shape (n_samples, n_features), \
default=None
        Rows like those the model predicts: their type and width (a DataFrame:
        one input per column, by name) define the graph's inputs. None: one
        numeric input ``X`` of ``model.n_features_in_`` columns (give a frame
        for a pipeline that selects columns by name).
    dtype : {"auto", "float64", "float32"}, default="auto"
        The graph's floating input and output type; inside, the binaries read
        the input in float64 and the aggregation is float64 in either. "auto":
        float64, or float32 where skl2onnx cannot build or check a float64
        graph, or onnxruntime (when installed) has no float64 kernel for one
        of its operators (``SimpleImputer``'s, say).
    target_opset : int or dict, default=None
        As in ``skl2onnx.to_onnx`` (its latest tested opset when None); at
        least 13.
    options : dict, default=None
        skl2onnx's conversion options, e.g. ``{"zipmap": False}``
        (probabilities as one tensor) for the final classifier.
    name : str, default=None
        The graph's name.
    stack_linear : bool, default=True
        Compute the linear binaries (logistic regressions, alone or after a
        ``StandardScaler``) as one product, as ``predict_proba`` does; False
        converts each through skl2onnx's converter (larger, slower graphs).

    Returns
    -------
    onx : onnx.ModelProto
        The model; ``onx.SerializeToString()`` is the ``.onnx`` file.

    Raises
    ------
    NotFittedError
        ``model`` is not fitted.
    NotExportableError
        A part of the model does not export, named (the decoder, a binary
        learner with its code column, the labels).
    MissingDependencyError
        skl2onnx (``pip install "convexagg[onnx]"``) is not installed.

    Notes
    -----
    What exports: every ``cv`` (out-of-fold ensembles, binaries refitted on all
    rows, ``"in_sample"``, ``"prefit"``), code, loss (probabilities or margins),
    entry and zero-entry weights and intercepts; binary learners that skl2onnx
    converts -- scikit-learn's linear classifiers alone or after scalers (as
    the library's own stacked product with ``stack_linear``), tree ensembles
    (random forests, extra trees, gradient boosting, histogram gradient
    boosting), ``SVC`` margins, k-nearest neighbours, naive Bayes, MLPs,
    pipelines and column transformers of those, and any learner registered
    with ``skl2onnx.update_registered_converter``; class labels that are
    integers or strings.
    """
    if dtype not in DTYPES:
        raise ValueError(f"dtype must be one of {DTYPES}, got {dtype!r}.")
    skl2onnx = require("skl2onnx", "ONNX export", "onnx")
    onnx = require("onnx", "ONNX export", "onnx")
    register_converters()
    final = _final_estimator(model)
    if not isinstance(final, CodeMatrixClassifier):
        raise NotExportableError(
            "convexagg.export.to_onnx converts a fitted CodeMatrixClassifier (or "
            "ConvexAggregationClassifier), or a Pipeline ending in one; got "
            f"{type(final).__name__}."
        )
    _check_fitted(model)
    check_exportable(final, stack_linear)
    if X_sample is None:
        X_sample = np.zeros((1, model.n_features_in_))
    model_options = {} if options is None else dict(options)
    if not all(isinstance(k, (int, type)) for k in model_options):  # options of the final step
        model_options = {id(final): model_options}
    model_options.setdefault(id(final), {})
    if model_options[id(final)] is None:
        model_options[id(final)] = {}
    model_options[id(final)] = {**model_options[id(final)], "stack_linear": stack_linear}

    def convert_as(numpy_dtype):
        return skl2onnx.to_onnx(
            model,
            _sample(X_sample, numpy_dtype),
            name=name,
            target_opset=target_opset,
            options=model_options,
        )

    if dtype != "auto":
        onx = convert_as(np.float64 if dtype == "float64" else np.float32)
    else:
        try:
            onx = convert_as(np.float64)
            onnx.checker.check_model(onx, full_check=True)
            _check_runs(onx)
        except (NotExportableError, NotFittedError):
            raise
        except Exception:  # noqa: BLE001 - a converter without float64: the float32 graph
            onx = convert_as(np.float32)
    onx.doc_string = (
        f"{type(model).__name__} exported by convexagg.export.to_onnx: outputs label and "
        "probabilities, as predict and predict_proba."
    )
    return onx


try:  # skl2onnx.to_onnx takes these models once this module is imported
    register_converters()
except ImportError:
    pass
