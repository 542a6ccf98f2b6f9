"""The layout of benchmarks/: a library part that imports no entry point and has no cycle,
entry points listed in BENCHMARKS.md's table and run by `make bench`, studies that name the
section they back, and the quality records' store.

Only ``benchmarks/lib/records.py`` (JSON files, no numerical import) and
``benchmarks/tools/compare_records.py`` are imported; everything else is read as source.
"""

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "benchmarks"
LIB = BENCH / "lib"
ENTRY_POINTS = sorted(p.stem for p in BENCH.glob("bench_*.py"))


def _imports(path):
    """The modules ``path`` imports: absolute names, and ``.name`` for relative ones."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = node.module or ""
                names.update(f".{base}" if base else f".{a.name}" for a in node.names)
            else:
                names.add(node.module)
    return names


def _bench_target():
    """The recipe of the Makefile's ``bench`` target and the variables it names."""
    text = (ROOT / "Makefile").read_text()
    start = text.index("\nbench:")
    end = text.index("\n\n", text.index("endif", start))
    block = re.search(r"\nBENCHMARKS := (.*?)\n\S", text, re.S).group(1)
    return text[start:end], block.replace("\\", " ").split()


def test_library_imports_no_entry_point_and_has_no_cycle():
    modules = {p.stem: p for p in LIB.glob("*.py") if p.stem != "__init__"}
    graph = {}
    for name, path in modules.items():
        imported = _imports(path)
        outside = {
            m
            for m in imported
            if m.split(".")[0] in {"lib", "studies", "tools"}
            or m.split(".")[0].startswith("bench_")
            or m.split(".")[0] in {p.stem for p in BENCH.glob("*.py")}
        }
        assert not outside, f"lib/{name}.py imports {outside}"
        graph[name] = {m[1:] for m in imported if m.startswith(".")}
        assert graph[name] <= set(modules), f"lib/{name}.py: {graph[name] - set(modules)}"
    done, visiting = set(), []

    def visit(node):
        assert node not in visiting, "import cycle: " + " -> ".join([*visiting, node])
        if node in done:
            return
        visiting.append(node)
        for nxt in graph[node]:
            visit(nxt)
        visiting.pop()
        done.add(node)

    for node in graph:
        visit(node)


def test_entry_points_import_no_other_script():
    scripts = {p.stem for p in BENCH.glob("*.py")} | {"studies", "tools"}
    for path in [*BENCH.glob("*.py"), *BENCH.glob("studies/*.py"), *BENCH.glob("tools/*.py")]:
        other = {m for m in _imports(path) if m.split(".")[0] in scripts}
        assert not other, f"{path.relative_to(ROOT)} imports {other}"


def test_every_entry_point_is_in_the_table_and_in_make_bench():
    text = (ROOT / "BENCHMARKS.md").read_text()
    table = text[: text.index("\n## ", text.index("\n## ") + 1)]  # up to the second section
    listed = set(re.findall(r"benchmarks/(bench_\w+)\.py", table))
    assert listed == set(ENTRY_POINTS)
    recipe, quick = _bench_target()
    assert set(quick) | {"quality"} == {e.removeprefix("bench_") for e in ENTRY_POINTS}
    assert set(re.findall(r"(bench_\w+)\.py", recipe)) == set(ENTRY_POINTS)


def test_entry_points_take_quick_and_out():
    for name in ENTRY_POINTS:
        source = (BENCH / f"{name}.py").read_text()
        common = "C.parser(" in source or ('"--quick"' in source and '"--out"' in source)
        assert common, f"{name}: the common options (--quick, --out)"
        assert "args.quick" in source, f"{name}: --quick does nothing"
        assert 'if __name__ == "__main__":' in source


def test_studies_name_the_section_they_back():
    for path in BENCH.glob("studies/*.py"):
        doc = ast.get_docstring(ast.parse(path.read_text())) or ""
        assert re.search(r"(BENCHMARKS|QUALITY)\.md", doc), path.name


def test_record_store_round_trip(tmp_path):
    sys.path.insert(0, str(BENCH))
    try:
        from lib.records import RecordStore
        from tools.compare_records import compare
    finally:
        sys.path.remove(str(BENCH))

    def record(dataset, rep, log_loss):
        return {"dataset": dataset, "rep": rep, "method": "m, one", "log_loss": log_loss}

    store = RecordStore(tmp_path / "a")
    store.put(record("wine", 1, 0.5), record("iris", 0, 0.25))
    store.put(record("iris", 0, 0.125))  # replaces
    assert (tmp_path / "a" / "records" / "m__one.json").exists()
    again = RecordStore(tmp_path / "a")
    assert again.methods() == ["m, one"]
    assert [r["dataset"] for r in again.records("m, one")] == ["iris", "wine"]
    assert again.get("iris", 0, "m, one")["log_loss"] == 0.125
    assert again.get("iris", 1, "m, one") is None

    other = RecordStore(tmp_path / "b")
    other.put(record("iris", 0, 0.125), record("wine", 1, float.fromhex("0x1.0000000000001p-1")))
    same, changed = compare(other, again, "m, one")
    assert same == 1 and [r["dataset"] for r in changed] == ["wine"]


HELP_ALL = """
import contextlib, io, runpy, sys
for script in sys.argv[1:]:
    sys.argv = [script, "--help"]
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out):
            runpy.run_path(script, run_name="__main__")
    except SystemExit as exc:
        assert exc.code in (0, None), (script, exc.code)
    assert "usage:" in out.getvalue(), script
    print("ok", script)
"""


@pytest.mark.slow
def test_help():
    """Every entry point and tool answers ``--help`` (one process: the imports once)."""
    scripts = [BENCH / f"{n}.py" for n in ENTRY_POINTS] + sorted(BENCH.glob("tools/*.py"))
    done = subprocess.run(
        [sys.executable, "-c", HELP_ALL, *map(str, scripts)], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.count("ok ") == len(scripts)
