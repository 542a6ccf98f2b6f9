"""Packaging: the license, the citation file and the one place the version is written."""

import importlib.metadata
import re
from pathlib import Path

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
