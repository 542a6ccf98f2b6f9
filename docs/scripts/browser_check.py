"""Render built pages of the site to PNG with headless Chromium, so they are looked at.

    python docs/scripts/browser_check.py [HTML_DIR] [--out DIR] [--width 1280]

renders the landing page, the API page of ``ConvexAggregationClassifier`` and a
gallery page of a built site (``make docs`` or ``make docs-noplot`` first;
``HTML_DIR`` defaults to ``docs/_build/html``, else ``docs/_build/html-noplot``) at
a window 1280 px wide, the width at which the title and the right-hand menu were
once cut, and writes ``<page>.png`` into ``--out`` (default
``docs/_build/screenshots``). Open the PNGs and look: the title whole, the
right-hand menu whole, code lines not cut, the figures drawn.

Needs a Chromium binary (Debian: ``apt-get install chromium``); where there is
none the script says so and exits 0 without rendering (exit status 2 with
``--require``). A page missing from the build is an error.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

DOCS = Path(__file__).resolve().parents[1]
PAGES = {
    "landing": "index.html",
    "api_ConvexAggregationClassifier": "generated/convexagg.ConvexAggregationClassifier.html",
    "gallery_quick_start": "auto_examples/plot_quick_start.html",
}
BROWSERS = ("chromium", "chromium-browser", "google-chrome", "chrome")


def find_browser():
    """The first Chromium-like binary on ``PATH``, or None."""
    return next((path for name in BROWSERS if (path := shutil.which(name))), None)


def default_html_dir():
    for name in ("html", "html-noplot"):
        if (DOCS / "_build" / name / "index.html").is_file():
            return DOCS / "_build" / name
    return DOCS / "_build" / "html"


def render(browser, page, target, width, height):
    """Render ``page`` (a file) to ``target`` (PNG); a non-empty file or an error."""
    with tempfile.TemporaryDirectory() as profile:  # no state shared between runs
        command = [
            browser,
            "--headless",
            "--no-sandbox",  # root in containers
            "--disable-gpu",
            "--hide-scrollbars",
            f"--user-data-dir={profile}",
            f"--window-size={width},{height}",
            "--virtual-time-budget=5000",  # let MathJax and the theme's scripts run
            f"--screenshot={target}",
            page.as_uri(),
        ]
        done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    if done.returncode != 0 or not target.is_file() or target.stat().st_size == 0:
        raise RuntimeError(f"{browser} could not render {page}:\n{done.stderr[-2000:]}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("html_dir", nargs="?", type=Path, default=None)
    parser.add_argument("--out", type=Path, default=DOCS / "_build" / "screenshots")
    parser.add_argument("--width", type=int, default=1280)
    parser.add_argument("--height", type=int, default=1600)
    parser.add_argument("--require", action="store_true", help="fail where Chromium is absent")
    args = parser.parse_args(argv)
    browser = find_browser()
    if browser is None:
        print(
            "browser check skipped: no Chromium found (tried "
            f"{', '.join(BROWSERS)}); on Debian: apt-get install chromium"
        )
        return 2 if args.require else 0
    html = args.html_dir or default_html_dir()
    missing = [rel for rel in PAGES.values() if not (html / rel).is_file()]
    if missing:
        print(f"browser check: {html} lacks {', '.join(missing)}; build the docs first")
        return 1
    args.out.mkdir(parents=True, exist_ok=True)
    for name, rel in PAGES.items():
        target = args.out / f"{name}.png"
        render(browser, html / rel, target, args.width, args.height)
        print(f"{html / rel} -> {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
