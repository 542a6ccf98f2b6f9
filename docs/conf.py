"""Sphinx configuration of the convexagg documentation.

``make docs`` builds it (installing the ``docs`` extra first) with warnings as
errors and runs the gallery (``examples/plot_*.py``); ``make docs-noplot`` builds
it without running the gallery, as CI does.
"""

from __future__ import annotations

import functools
import importlib
import re
from pathlib import Path

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent

# A missing documentation dependency is one line naming the extra that installs it.
for _module in ("sphinx_gallery", "numpydoc", "myst_parser", "pydata_sphinx_theme"):
    try:
        importlib.import_module(_module)
    except ImportError as exc:  # pragma: no cover - only without the extra
        raise RuntimeError(
            f'building the documentation needs {_module}: pip install -e ".[docs]" '
            "(or run `make docs`)"
        ) from exc

from sphinx_gallery.sorting import ExplicitOrder  # noqa: E402
from threadpoolctl import threadpool_limits  # noqa: E402  (scikit-learn's dependency)

# The gallery fits many small models in this process. On a few shared cores the
# BLAS threads of such small products only contend with one another (a
# one-vs-one fit on the digits took 4 s with them and 0.4 s without, on 2 cores),
# so the examples run with one thread each.
threadpool_limits(limits=1)

project = "convexagg"
author = "the convexagg developers"
copyright = "2026, the convexagg developers"
# The version is written once, in pyproject.toml; read from there, the site never shows
# the stale metadata of an older install (convexagg.__version__ reads the installed one).
release = re.search(
    r'^version = "([^"]+)"$', (ROOT / "pyproject.toml").read_text(encoding="utf-8"), re.M
).group(1)
version = release

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "sphinx.ext.viewcode",
    "sphinx.ext.intersphinx",
    "numpydoc",
    "myst_parser",
    "sphinx_gallery.gen_gallery",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = [
    "_build",
    "**.ipynb_checkpoints",
    # kept where scripts expect them; shown through reproduction/index.md
    "reproduction/results.csv",
    "reproduction/tables.md",
    "reproduction/stopping_rule_check.py",
    "auto_examples/*.py",
    "auto_examples/*.ipynb",
    "auto_examples/*.zip",
    "auto_examples/*.md5",
    "auto_examples/*.json",
]
templates_path = ["_templates"]
html_static_path = ["_static"]
html_css_files = ["custom.css"]
# the right-hand menu shows "fit", not "ConvexAggregationClassifierCV.fit"
toc_object_entries_show_parents = "hide"

# -- autodoc, autosummary, numpydoc --------------------------------------------------------

autosummary_generate = True
autodoc_default_options = {"members": True, "member-order": "bysource"}
autodoc_typehints = "none"  # the numpydoc sections carry the types
numpydoc_show_class_members = False  # the class template lists the methods
numpydoc_class_members_toctree = False
numpydoc_attributes_as_param_list = True
# scikit-learn's own methods (get_params, set_params, score, set_*_request) are
# documented by scikit-learn; convexagg's pages list what convexagg defines.
_REQUEST = re.compile(r"set_\w+_request$")


def _skip_sklearn_members(app, what, name, obj, skip, options):
    function = getattr(obj, "__func__", obj)
    module = getattr(function, "__module__", None) or ""
    if _REQUEST.match(name) or module.startswith("sklearn."):
        return True
    return None


# -- intersphinx: links to scikit-learn, NumPy and SciPy, offline ------------------------------
# The build machine and CI have no network: the inventories are files of the repository,
# written from the installed packages by docs/scripts/make_inventories.py (which says how
# the addresses are derived). A missing file leaves those names as code, without a warning.

_INVENTORIES = {
    "sklearn": "https://scikit-learn.org/stable/",
    "numpy": "https://numpy.org/doc/stable/",
    "scipy": "https://docs.scipy.org/doc/scipy/",
}
intersphinx_mapping = {
    name: (url, str(DOCS / "_inventories" / f"{name}-objects.inv"))
    for name, url in _INVENTORIES.items()
    if (DOCS / "_inventories" / f"{name}-objects.inv").is_file()
}
intersphinx_timeout = 1


# -- sphinx-gallery ------------------------------------------------------------------------

sphinx_gallery_conf = {
    "examples_dirs": str(ROOT / "examples"),
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"/plot_",
    # from the first steps to scale-out
    "within_subsection_order": ExplicitOrder(
        [
            "plot_quick_start.py",
            "plot_reliability.py",
            "plot_decoders.py",
            "plot_codes.py",
            "plot_broken_classifier.py",
            "plot_regularization_path.py",
            "plot_out_of_fold.py",
            "plot_costs.py",
            "plot_prior_shift.py",
            "plot_conformal.py",
            "plot_convergence.py",
            "plot_dask.py",
            "*",
        ]
    ),
    "doc_module": ("convexagg",),
    "backreferences_dir": "generated/backreferences",
    "remove_config_comments": True,
    "download_all_examples": False,
    "abort_on_example_error": False,
    "only_warn_on_example_error": False,
    "image_scrapers": ("matplotlib",),
    "matplotlib_animations": False,
    "show_memory": False,
    "min_reported_time": 1,
}

# -- MyST (the Markdown pages and the repository's own Markdown files) ---------------------

myst_enable_extensions = ["dollarmath", "colon_fence"]
myst_heading_anchors = 3

# Repository files shown as pages: read at build time, so they are never copied and
# never stale. Their links point at repository paths; these become site links.
ROOT_PAGES = {
    "reproduction/results": "RESULTS.md",
    "benchmarks": "BENCHMARKS.md",
    "changelog": "CHANGELOG.md",
    "contributing": "CONTRIBUTING.md",
}
_LINKS = {
    "](docs/reproduction/)": "](index.md)",
    "](BENCHMARKS.md)": "](../benchmarks.md)",
    "](RESULTS.md)": "](reproduction/results.md)",
    "](docs/reproduction/figures/": "](figures/",
    "](README.md)": "](index.rst)",
    "](CHANGELOG.md)": "](changelog.md)",
    "](CONTRIBUTING.md)": "](contributing.md)",
    "](QUALITY.md)": "](quality.md)",
    "](LICENSE)": "](citing.rst)",
    "](docs/_static/": "](_static/",  # figures of pages at the site's root (QUALITY.md)
}
# QUALITY.md (the probability-quality benchmark's report, "Which settings give the best
# probabilities") leads the site's table of contents once the repository has it.
HAS_QUALITY = (ROOT / "QUALITY.md").is_file()
if HAS_QUALITY:
    ROOT_PAGES["quality"] = "QUALITY.md"
else:
    exclude_patterns.append("quality.md")


def _root_markdown(app, docname, source):
    """Replace a placeholder page by the repository file it stands for."""
    if docname == "citing":  # the software's citation names this version
        source[0] = source[0].replace("@VERSION@", release)
    if docname not in ROOT_PAGES:
        return
    path = ROOT / ROOT_PAGES[docname]
    app.env.note_dependency(str(path))
    text = path.read_text(encoding="utf-8")
    for old, new in _LINKS.items():
        text = text.replace(old, new)
    if "/" not in docname:  # a page at the site's root: its neighbours are beside it
        text = text.replace("](../benchmarks.md)", "](benchmarks.md)")
    source[0] = text


# -- HTML ----------------------------------------------------------------------------------

html_theme = "pydata_sphinx_theme"
html_title = f"convexagg {release}"
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "secondary_sidebar_items": ["page-toc"],
    "footer_start": ["copyright"],
    "footer_end": ["sphinx-version"],
}
html_sidebars = {"index": [], "quality": [], "getting_started": [], "citing": []}
html_show_sourcelink = False
html_copy_source = False


_BACKLINK = re.compile(
    r'(<a class="viewcode-back" href=")([^"#]*generated/([^"#/]+)\.html)#([^"]+)"'
)


def _backlink(page, match):
    """The back-link of ``match`` (on the source page ``page``) with a working anchor."""
    start, href, obj, anchor = match.groups()
    target = (page.parent / href).resolve()
    if not target.is_file() or f'id="{anchor}"' in target.read_text(encoding="utf-8"):
        return match.group(0)
    short = obj.rsplit(".", 1)[-1]
    tail = anchor.split(f".{short}", 1)[1] if f".{short}" in anchor else ""
    return f'{start}{href}#{obj}{tail}"'


def _repair_viewcode_backlinks(app, exception):
    """Point the "[docs]" links of the source pages at the objects' anchors.

    viewcode keeps one module prefix per source module for all its back-links
    (the prefix of the first object of that module it met), so when a module's
    objects are documented under two names -- ``convexagg.make_code`` beside
    ``convexagg.codes.one_vs_rest`` -- the others link to an anchor that does not
    exist. An API page documents one object, named like the page: the anchor is
    the page's name plus what follows the object's own name (a method).
    """
    if exception is not None or app.builder.format != "html":
        return
    out = Path(app.outdir)
    for page in (out / "_modules").rglob("*.html"):
        text = page.read_text(encoding="utf-8")
        fixed = _BACKLINK.sub(functools.partial(_backlink, page), text)
        if fixed != text:
            page.write_text(fixed, encoding="utf-8")


def setup(app):
    app.connect("build-finished", _repair_viewcode_backlinks)
    app.connect("autodoc-skip-member", _skip_sklearn_members)
    app.connect("source-read", _root_markdown)
