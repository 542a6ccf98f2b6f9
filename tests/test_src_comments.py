"""Comments and docstrings in src/ say what the code does and why, in the present.

Timings, "best of N" runs, speed ratios, issue numbers and the "switch" names of past
default changes belong in BENCHMARKS.md, QUALITY.md or CHANGELOG.md, not in src/; a
file or document section cited in src/ must exist. Only comments and docstrings are
scanned: messages the library prints (a fit's seconds under ``verbose``) are not logs.
"""

import ast
import functools
import io
import re
import tokenize
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "convexagg"

# (pattern, what it finds); matched against comment blocks and docstrings, whitespace
# (line breaks included) free between the words
TIMING = [
    (r"\b\d+(?:\.\d+)?\s*(?:us|µs|ms)\b", "a time in micro- or milliseconds"),
    (r"\b(?:best|median) of\s+\d[\d,]*", "a run count ('best of N')"),
    (r"\b\d+(?:\.\d+)?x\s+(?:faster|slower|less|more)\b", "a speed ratio"),
    (r"\b\d+(?:\.\d+)?\s*s\s+(?:against|a fit|best|median)\b", "a time in seconds"),
    (r"\bagainst\s+\d+(?:\.\d+)?\s*s\b", "a time in seconds"),
    (r"\b\d+(?:\.\d+)?\s*s\s*->\s*\d+(?:\.\d+)?\s*s\b", "a time in seconds"),
]
HISTORY = [
    (r"\bissues?\s*#?\d+", "an issue number"),
    (r"\bswitch", "'switch' (the name of a past default change)"),
]
SECTION = re.compile(r"\b((?:BENCHMARKS|QUALITY|RESULTS)\.md),\s*\"([^\"]+)\"")
PATH = re.compile(r"\b((?:tests|benchmarks|docs)/[\w./-]*\w\.(?:py|json|md|csv))\b")


@functools.cache
def _texts(path):
    """``(first line, text)`` of every comment block and docstring of ``path``.

    A comment block is a run of comment lines, joined without their ``#``; a
    docstring is any string statement (module, class, function, attribute), plus
    the docstring fragments of ``_docstrings.py``.
    """
    source = path.read_text()
    comments = [
        (tok.start[0], tok.string.lstrip("#").strip())
        for tok in tokenize.generate_tokens(io.StringIO(source).readline)
        if tok.type == tokenize.COMMENT
    ]
    texts, block = [], []
    for line, text in comments:
        if block and line != block[-1][0] + 1:
            texts.append((block[0][0], "\n".join(t for _, t in block)))
            block = []
        block.append((line, text))
    if block:
        texts.append((block[0][0], "\n".join(t for _, t in block)))
    fragments = path.name == "_docstrings.py"
    for node in ast.walk(ast.parse(source)):
        value = node.value if isinstance(node, (ast.Expr, ast.Assign)) else None
        if isinstance(value, ast.Constant) and isinstance(value.value, str):
            if isinstance(node, ast.Expr) or fragments:
                texts.append((value.lineno, value.value))
        elif fragments and isinstance(value, ast.Dict):
            texts.extend(
                (v.lineno, v.value)
                for v in value.values
                if isinstance(v, ast.Constant) and isinstance(v.value, str)
            )
    return texts


def _offences(patterns, texts):
    """``line: what -- the matched text`` for every match of ``patterns``."""
    found = []
    for start, text in texts:
        for pattern, what in patterns:
            for match in re.finditer(pattern, text, flags=re.IGNORECASE):
                line = start + text.count("\n", 0, match.start())
                found.append(f"{line}: {what} -- {' '.join(match.group().split())!r}")
    return found


@functools.cache
def _headings(document):
    lines = (ROOT / document).read_text().splitlines()
    return [re.sub(r"^#+\s*", "", line) for line in lines if re.match(r"^#{1,6}\s", line)]


FILES = sorted(SRC.rglob("*.py"))
IDS = [str(p.relative_to(SRC)) for p in FILES]


@pytest.mark.parametrize("path", FILES, ids=IDS)
def test_no_timing_logs_in_comments(path):
    offences = _offences(TIMING, _texts(path))
    assert not offences, (
        f"{path.relative_to(ROOT)} logs measurements (give the reason in a sentence and "
        "name the BENCHMARKS.md / QUALITY.md section instead):\n" + "\n".join(offences)
    )


@pytest.mark.parametrize("path", FILES, ids=IDS)
def test_no_issue_numbers_or_switch_names_in_comments(path):
    offences = _offences(HISTORY, _texts(path))
    assert not offences, (
        f"{path.relative_to(ROOT)} tells history (it belongs in CHANGELOG.md):\n"
        + "\n".join(offences)
    )


def _missing_citations(path):
    """``line: citation`` for every file or document section ``path`` cites that does
    not exist (a section is cited as ``(BENCHMARKS.md, "Heading")``, a prefix of it)."""
    missing = []
    for start, text in _texts(path):
        for match in PATH.finditer(text):
            if not (ROOT / match.group(1)).exists():
                missing.append(f"{start}: {match.group(1)}")
        for match in SECTION.finditer(text):
            document, section = match.group(1), " ".join(match.group(2).split())
            if not any(h.startswith(section) for h in _headings(document)):
                missing.append(f'{start}: {document}, "{section}"')
    return missing


@pytest.mark.parametrize("path", FILES, ids=IDS)
def test_cited_files_and_sections_exist(path):
    missing = _missing_citations(path)
    assert not missing, f"{path.relative_to(ROOT)} cites what does not exist:\n" + "\n".join(
        missing
    )


LOGS = [
    "# 4 us against 81 us a refit, best of 10,000",
    "# the whole _setup on letter: 3.6 ms -> 0.8 ms",
    "# threads made the fit 1.15x slower (0.279 s against 0.237 s best of 7,\n# in turn)",
    "# 0.17 s -> 0.09 s on 2 cores",
    "# the default's median fit 0.407 s against 0.471 s",
    "# (BENCHMARKS.md, 'Issue 21: the zero entries by default')",
    "# shuffled folds (QUALITY.md, 'The second switch')",
    '"""Since the fifth\nswitch the shrinkage follows the rows."""',
]
PRESENT = [
    "# stop when the projected gradient has norm <= tol (1e-4)",
    "# chunks of about 256 KB of losses, 4 MB of stored columns",
    "# the logs release the GIL, so threads divide a pass's time (BENCHMARKS.md)",
    "# 2**20 values and more: float32; a 200,000-row sample takes 780 MB",
    "# the rank-one term removes the shift direction of the classes",
    '"""Timing of a fit, in seconds (``fit_time_``): the sum of its stages."""',
    "# ms = the mean score of each fold",
]


@pytest.mark.parametrize("source", LOGS)
def test_the_patterns_flag_a_log(tmp_path, source):
    path = tmp_path / "module.py"
    path.write_text(source + "\n")
    assert _offences(TIMING + HISTORY, _texts(path))


@pytest.mark.parametrize("source", PRESENT)
def test_the_patterns_leave_present_tense_text_alone(tmp_path, source):
    path = tmp_path / "module.py"
    path.write_text(source + "\n")
    assert not _offences(TIMING + HISTORY, _texts(path))


def test_a_missing_section_or_file_is_found(tmp_path):
    path = tmp_path / "module.py"
    path.write_text(
        '"""See tests/test_no_such_file.py and (BENCHMARKS.md, "No such heading");\n'
        'tests/test_src_comments.py and (BENCHMARKS.md, "Reproduce") exist."""\n'
    )
    missing = _missing_citations(path)
    assert [m.split(": ", 1)[1] for m in missing] == [
        "tests/test_no_such_file.py",
        'BENCHMARKS.md, "No such heading"',
    ]
