"""The README's quick start prints what the README says it prints, and the README stays short.

The quick start is the first ``python`` block under the heading "## Quick start"; the
``text`` block that follows it is its expected output, compared as exact text (trailing
spaces and the final newline aside). When the code's numbers change, the failure message
shows the block to paste into README.md.
"""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

from threadpoolctl import threadpool_limits

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
MAX_LINES = 150

_FENCE = re.compile(r"^```(\w*)[^\n]*\n(.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)
_LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")


def quick_start(text):
    """``(code, expected output)``: the first ``python`` block after "## Quick start"
    and the ``text`` block right after it."""
    start = text.index("\n## Quick start\n")
    end = text.find("\n## ", start + 1)
    blocks = [(m.group(1), m.group(2)) for m in _FENCE.finditer(text[start:end])]
    for (language, code), (next_language, output) in zip(blocks, blocks[1:]):
        if language == "python":
            assert next_language == "text", "the quick start's code must be followed by its output"
            return code, output
    raise AssertionError("README.md has no python block under '## Quick start'")


def _lines(text):
    return [line.rstrip() for line in text.strip("\n").splitlines()]


def test_quick_start_prints_what_the_readme_shows(tmp_path, monkeypatch):
    code, expected = quick_start(README.read_text(encoding="utf-8"))
    monkeypatch.chdir(tmp_path)
    printed = io.StringIO()
    with threadpool_limits(limits=1), contextlib.redirect_stdout(printed):
        exec(compile(code, "README.md (quick start)", "exec"), {"__name__": "__main__"})
    actual = printed.getvalue()
    assert _lines(actual) == _lines(expected), (
        "README.md's quick start prints other numbers than its output block shows; "
        "if the change is intended, replace that block by:\n\n```text\n"
        + "\n".join(_lines(actual))
        + "\n```"
    )


def test_quick_start_runs_the_default_model():
    code, _ = quick_start(README.read_text(encoding="utf-8"))
    assert "ConvexAggregationClassifier()" in code


def test_readme_is_short():
    n_lines = len(README.read_text(encoding="utf-8").splitlines())
    assert n_lines <= MAX_LINES, f"README.md has {n_lines} lines; at most {MAX_LINES}"


def test_readme_links_point_at_files_of_the_repository():
    text = README.read_text(encoding="utf-8")
    targets = {t for t in _LINK.findall(text) if "://" not in t}
    missing = sorted(t for t in targets if not (ROOT / t).exists())
    assert not missing, f"README.md links to paths that do not exist: {missing}"
