"""Packaging: the license, the citation file, the one place the version is written, and
the test extra installing what the tests import."""

import ast
import importlib.metadata
import re
import sys
from pathlib import Path

import pytest

import convexagg

ROOT = Path(__file__).resolve().parents[1]


def test_license_file_is_bsd_3_clause_of_the_developers():
    text = (ROOT / "LICENSE").read_text()
    assert text.startswith("BSD 3-Clause License")
    assert "Copyright (c) 2026, the convexagg developers" in text
    assert importlib.metadata.metadata("convexagg")["License-Expression"] == "BSD-3-Clause"


def test_the_version_is_written_only_in_pyproject():
    assert convexagg.__version__ == importlib.metadata.version("convexagg")
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert re.search(r'^version = "([^"]+)"$', pyproject, re.MULTILINE)
    assert not re.search(r"^version:", (ROOT / "CITATION.cff").read_text(), re.MULTILINE)
    assert "__version__ =" not in (ROOT / "src/convexagg/__init__.py").read_text()


def test_the_changelog_describes_the_version_being_built():
    version = re.search(r'^version = "([^"]+)"$', (ROOT / "pyproject.toml").read_text(), re.M)
    newest = re.search(r"^## \[([^\]]+)\]", (ROOT / "CHANGELOG.md").read_text(), re.M)
    assert newest.group(1) == version.group(1)


def test_citation_file_cites_the_paper():
    text = (ROOT / "CITATION.cff").read_text()
    assert "cff-version: 1.2.0" in text and "preferred-citation:" in text
    title = "Convex Optimization for Binary Classifier Aggregation in Multiclass Problems"
    assert title in text
    for name in ("Park", "Hwang", "Choi"):
        assert f"family-names: {name}" in text


def _test_requirements():
    """Distribution names ``pip install ".[test]"`` installs: the core dependencies and the
    test extra (its ``convexagg[...]`` extras expanded), closed over installed metadata."""
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    from packaging.markers import default_environment
    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extras = project["optional-dependencies"]
    todo = [(Requirement(r), "") for r in project["dependencies"] + extras["test"]]
    found = set()
    while todo:
        req, extra = todo.pop()
        if req.marker is not None and not req.marker.evaluate(
            {**default_environment(), "extra": extra}
        ):
            continue
        name = canonicalize_name(req.name)
        if name == "convexagg":
            todo += [(Requirement(r), "") for e in req.extras for r in extras[e]]
            continue
        for wanted in [""] + sorted(req.extras):
            if (name, wanted) in found:
                continue
            found.add((name, wanted))
            try:
                requires = importlib.metadata.requires(name) or []
            except importlib.metadata.PackageNotFoundError:
                continue  # not installed here: the import check below then names it
            todo += [(Requirement(r), wanted) for r in requires]
    return {name for name, _ in found}


def _modules_the_tests_import():
    """Top-level names the test files import (``import``, ``from``, ``importorskip``)."""
    names = set()
    for path in (ROOT / "tests").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names.add(node.module.split(".")[0])
            elif (
                isinstance(node, ast.Call)
                and getattr(node.func, "attr", None) == "importorskip"
                and isinstance(node.args[0], ast.Constant)
            ):
                names.add(node.args[0].value.split(".")[0])
    local = {p.stem for p in (ROOT / "tests").rglob("*.py")}
    return names - set(sys.stdlib_module_names) - local - {"convexagg"}


# Optional on purpose, each skipped with its reason where absent: PyTorch's CPU build is large
# (an array-API namespace beside array-api-strict, which the test extra does install).
OPTIONAL_TEST_MODULES = {"torch"}
# the benchmarks' own library and tools, imported from benchmarks/ by the layout tests
BENCHMARK_MODULES = {path.name for path in (ROOT / "benchmarks").iterdir() if path.is_dir()}


def test_the_test_extra_installs_every_module_the_tests_import():
    """`make test` installs ``.[test]`` alone: a module a test imports (or skips without)
    must come with it, or the suite fails to collect, or silently skips, elsewhere."""
    from packaging.utils import canonicalize_name

    installed = {
        module: {canonicalize_name(d) for d in dists}
        for module, dists in importlib.metadata.packages_distributions().items()
    }
    requirements = _test_requirements()
    missing = sorted(
        module
        for module in _modules_the_tests_import() - OPTIONAL_TEST_MODULES - BENCHMARK_MODULES
        if not installed.get(module, set()) & requirements
    )
    assert missing == [], f"imported by the tests but not installed by .[test]: {missing}"
