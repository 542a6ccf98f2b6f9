"""docs/scripts/browser_check.py: renders built pages with Chromium, skips clearly without it."""

import importlib.util
import shutil
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "docs" / "scripts" / "browser_check.py"


@pytest.fixture()
def browser_check():
    spec = importlib.util.spec_from_file_location("browser_check", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_without_chromium_it_says_so_and_skips(browser_check, monkeypatch, capsys, tmp_path):
    monkeypatch.setattr(shutil, "which", lambda name: None)
    assert browser_check.main([str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "browser check skipped: no Chromium found" in out and "apt-get install chromium" in out
    assert browser_check.main([str(tmp_path), "--require"]) == 2
    assert not list(tmp_path.iterdir())  # nothing rendered


def test_a_site_that_was_not_built_is_an_error(browser_check, monkeypatch, capsys, tmp_path):
    monkeypatch.setattr(shutil, "which", lambda name: "/usr/bin/chromium")
    assert browser_check.main([str(tmp_path), "--out", str(tmp_path / "png")]) == 1
    assert "build the docs first" in capsys.readouterr().out


@pytest.mark.skipif(shutil.which("chromium") is None, reason="Chromium is not installed")
def test_a_page_is_rendered_to_png(browser_check, tmp_path):
    page = tmp_path / "page.html"
    page.write_text("<html><body><h1>convexagg</h1></body></html>")
    target = tmp_path / "page.png"
    browser_check.render(browser_check.find_browser(), page, target, 400, 300)
    assert target.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
