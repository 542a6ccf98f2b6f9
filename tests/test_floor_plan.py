"""The floor plan of ``src/convexagg``: imports are cycle-free and never run back up a
floor, no module imports another module's private name, and each concept has one room
(the sample-weight check says the same thing wherever the weights come in)."""

from __future__ import annotations

import ast
import inspect
import re
from pathlib import Path

import numpy as np
import pytest

import convexagg
import convexagg.cli as cli
import convexagg.display as display
import convexagg.io as cio
from convexagg.experiments import commands

ROOT = Path(convexagg.__file__).parent

# Each module's floor (by the longest matching prefix of its dotted name, without
# "convexagg."): a module imports only from its own floor or below. The ground floor
# is the pure solvers; the command lines and the paper's experiments are on top.
FLOORS = [
    ("solvers",),
    (
        "_version",
        "_optional",
        "_docstrings",
        "_utils",
        "_sklearn",
        "_arguments",
        "_dask",
        "_array_api",
        "_folds",
        "validation",
        "codes",
        "losses",
        "io",
    ),
    (
        "aggregation",
        "binary",
        "linear_outputs",
        "out_of_fold",
        "output_checks",
        "batched_logistic",
        "decision",
    ),
    ("decoders", "_training", "_binary_selection", "metrics", "datasets", "theory", "defaults"),
    ("_prediction", "code_matrix", "convex_aggregation", "estimator", "precomputed", "path"),
    ("model_selection", "display", "export"),
    ("experiments", "cli", "__main__"),
]


def _modules():
    """``{dotted name: (path, is_package)}`` of every module under ``src/convexagg``."""
    found = {}
    for path in ROOT.rglob("*.py"):
        parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
        package = parts[-1] == "__init__"
        found[".".join(parts[:-1] if package else parts)] = (path, package)
    return found


MODULES = _modules()


def _owner(name):
    """The module of ``MODULES`` that ``name`` (a module or a name in one) lives in."""
    while name not in MODULES:
        name = name.rpartition(".")[0]
    return name


def _imports(module):
    """``[(line, imported module, imported name or None)]`` of ``module``, function-level
    imports included (a lazy import still runs back up if it goes up)."""
    path, package = MODULES[module]
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name, None) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".")[: None if package else -1]
                base = base[: len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module
            for alias in node.names:
                full = f"{target}.{alias.name}"
                found.append((node.lineno, full if full in MODULES else target, alias.name))
    return found


def _edges():
    """``{module: {convexagg module it imports}}``."""
    edges = {}
    for module in MODULES:
        targets = {_owner(t) for _, t, _ in _imports(module) if t.split(".")[0] == "convexagg"}
        edges[module] = targets - {module}
    return edges


def _floor(module):
    short = module.removeprefix("convexagg").lstrip(".")
    best = None
    for level, prefixes in enumerate(FLOORS):
        for prefix in prefixes:
            if short == prefix or short.startswith(prefix + "."):
                if best is None or len(prefix) > best[1]:
                    best = (level, len(prefix))
    return None if best is None else best[0]


def test_every_module_has_a_floor():
    missing = sorted(m for m in MODULES if m != "convexagg" and _floor(m) is None)
    assert not missing, f"give these modules a floor in FLOORS: {missing}"


def test_the_import_graph_is_cycle_free():
    edges, state, stack = _edges(), {}, []

    def visit(module):
        state[module] = "open"
        stack.append(module)
        for target in sorted(edges[module]):
            if state.get(target) == "open":
                cycle = stack[stack.index(target) :] + [target]
                pytest.fail("import cycle: " + " -> ".join(cycle))
            if target not in state:
                visit(target)
        stack.pop()
        state[module] = "done"

    for module in sorted(edges):
        if module not in state:
            visit(module)


def test_nothing_runs_back_up():
    upward = []
    for module, targets in _edges().items():
        if module == "convexagg":
            continue  # the package's front door may name anything
        for target in targets:
            if target == "convexagg" or _floor(target) > _floor(module):
                upward.append(f"{module} (floor {_floor(module)}) imports {target}")
    assert not upward, upward


def test_no_module_imports_a_private_name_of_another():
    found = []
    for module in MODULES:
        if module == "convexagg._sklearn":  # the one door to scikit-learn's private helpers
            continue
        for line, target, name in _imports(module):
            if name is not None and name.startswith("_") and not name.startswith("__"):
                found.append(f"{MODULES[module][0].relative_to(ROOT)}:{line}: {target} {name}")
    assert not found, found


def test_the_rooms_keep_their_public_names():
    assert set(cio.__all__) == {
        "MAX_CSV_BYTES",
        "MAX_SCHEMA_BYTES",
        "MAX_SCHEMA_DEPTH",
        "MISSING_LABELS",
        "STDOUT",
        "CSVFile",
        "UntrustedTypeError",
        "atomic_write",
        "check_output_path",
        "load",
        "parse_labels",
        "save",
        "trusted_types",
        "write_table",
    }
    assert all(hasattr(cio, name) for name in cio.__all__)
    classes = [getattr(display, name) for name in display.__all__]
    assert len(classes) == 4 and all(inspect.isclass(c) for c in classes)
    # one module per display
    assert len({c.__module__ for c in classes}) == 4
    assert {c.__module__.rpartition(".")[0] for c in classes} == {"convexagg.display"}


def test_the_command_line_only_dispatches_the_papers_commands():
    assert set(commands.HANDLERS) == {"demo", "reproduce", "figures"}
    for name, handler in commands.HANDLERS.items():
        assert cli.HANDLERS[name] is handler
        assert handler.__module__ == "convexagg.experiments.commands"
    parser = cli.build_parser()
    assert parser.parse_args(["reproduce", "--reps", "3"]).reps == 3
    assert parser.parse_args(["figures", "--quick"]).quick
    assert parser.parse_args(["demo"]).random_state == 0


def _weight_errors(sample_weight):
    """The message each entry point gives for ``sample_weight`` (None if it accepts it)."""
    from convexagg import ConvexAggregationClassifier
    from convexagg.aggregation import BlockedObjective
    from convexagg.codes import one_vs_rest
    from convexagg.metrics import top_label_calibration_error
    from convexagg.validation import check_sample_weight

    rng = np.random.default_rng(0)
    code = one_vs_rest(3)
    Q = rng.uniform(0.05, 0.95, (6, 3))
    y = np.array([0, 1, 2, 0, 1, 2])
    P = np.full((6, 3), 1 / 3)
    entry_points = {
        "validation": lambda: check_sample_weight(sample_weight, 6),
        "objective": lambda: BlockedObjective.from_outputs(Q, code, y, sample_weight=sample_weight),
        "estimator": lambda: ConvexAggregationClassifier(code="ovr", cv="in_sample").fit(
            Q, y, sample_weight=sample_weight
        ),
        "metric": lambda: top_label_calibration_error(y, P, sample_weight=sample_weight),
    }
    messages = {}
    for name, call in entry_points.items():
        try:
            call()
            messages[name] = None
        except ValueError as exc:
            messages[name] = str(exc)
    return messages


@pytest.mark.parametrize(
    "sample_weight, expected",
    [
        ([1, 1, -1, 1, 1, 1], r"sample_weight must be finite and >= 0; sample_weight\[2\] is -1.0"),
        ([1, 1, np.nan, 1, 1, 1], r"sample_weight\[2\] is nan"),
        (np.zeros(6), "sums to 0: every weight is zero"),
        (np.ones(5), r"sample_weight must have shape \(6,\)"),
    ],
)
def test_one_sample_weight_check_says_the_same_everywhere(sample_weight, expected):
    messages = _weight_errors(sample_weight)
    assert len(set(messages.values())) == 1, messages
    assert re.search(expected, messages["validation"])


def test_valid_sample_weights_pass_everywhere_unchanged():
    weights = np.array([1.0, 2.0, 0.0, 1.0, 3.0, 1.0])
    kept = weights.copy()
    assert set(_weight_errors(weights).values()) == {None}
    np.testing.assert_array_equal(weights, kept)  # never written to
