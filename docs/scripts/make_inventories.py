"""Write the intersphinx inventories of scikit-learn, NumPy and SciPy, offline.

The documentation links names such as :class:`~sklearn.calibration.CalibratedClassifierCV`
to those projects' sites through intersphinx, which normally downloads each
project's ``objects.inv``. The build machine and CI have no network, so the
inventories are made here, from the installed packages, and kept in
``docs/_inventories/`` (``docs/conf.py`` reads them from there, never from the
network)::

    python docs/scripts/make_inventories.py

Each public name (a module's ``__all__``, or what a module without one defines)
gets the address of its page under the site's generated API pages, the layout the
three projects' stable sites use:

* scikit-learn: ``https://scikit-learn.org/stable/modules/generated/<name>.html``
  (public methods: an anchor on the class's page);
* NumPy: ``https://numpy.org/doc/stable/reference/generated/<name>.html``
  (``numpy`` and ``numpy.linalg``);
* SciPy: ``https://docs.scipy.org/doc/scipy/reference/generated/<name>.html``
  (the subpackages listed in ``SCIPY``).

The addresses are derived, not read from the sites: a name those sites
document on another kind of page would link to a missing page. Regenerate
after upgrading the packages (the inventories name the versions they list).
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import zlib
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "_inventories"
SCIPY = ["special", "optimize", "sparse", "sparse.linalg", "linalg", "stats"]


def _public_modules(package):
    """``package`` and its public submodules (no underscore anywhere, no tests)."""
    yield package.__name__
    for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
        parts = info.name.split(".")
        if any(p.startswith("_") or p in ("tests", "externals") for p in parts):
            continue
        yield info.name


def _entries(module_name, page, methods=False):
    """``(name, role, uri)`` for every name of ``module_name.__all__``."""
    try:
        module = importlib.import_module(module_name)
    except Exception:  # an optional dependency missing: that module is left out
        return
    names = getattr(module, "__all__", None)
    if names is None:  # the names the module itself defines
        names = [
            n
            for n, obj in vars(module).items()
            if not n.startswith("_") and getattr(obj, "__module__", None) == module_name
        ]
    for name in names:
        obj = getattr(module, name, None)
        if obj is None or inspect.ismodule(obj):
            continue
        full = f"{module_name}.{name}"
        if inspect.isclass(obj):
            role = "py:exception" if issubclass(obj, BaseException) else "py:class"
        elif callable(obj):
            role = "py:function"
        else:
            continue
        uri = page.format(full)
        yield full, role, f"{uri}#{full}"
        if methods and inspect.isclass(obj):
            for attr, member in vars(obj).items():
                if not attr.startswith("_") and callable(member):
                    yield f"{full}.{attr}", "py:method", f"{uri}#{full}.{attr}"


def _write(path, project, version, entries):
    seen, lines = set(), []
    for name, role, uri in entries:
        if (name, role) not in seen:
            seen.add((name, role))
            lines.append(f"{name} {role} 1 {uri} -")
    header = (
        "# Sphinx inventory version 2\n"
        f"# Project: {project}\n"
        f"# Version: {version}\n"
        "# The remainder of this file is compressed using zlib.\n"
    )
    body = zlib.compress(("\n".join(sorted(lines)) + "\n").encode("utf-8"))
    path.write_bytes(header.encode("utf-8") + body)
    print(f"{path}: {len(lines)} names of {project} {version}")


def main():
    import numpy
    import scipy
    import sklearn

    OUT.mkdir(exist_ok=True)
    sk_page = "modules/generated/{}.html"
    sk = [e for m in _public_modules(sklearn) for e in _entries(m, sk_page, methods=True)]
    _write(OUT / "sklearn-objects.inv", "scikit-learn", sklearn.__version__, sk)
    np_page = "reference/generated/{}.html"
    npy = [e for m in ("numpy", "numpy.linalg") for e in _entries(m, np_page)]
    _write(OUT / "numpy-objects.inv", "NumPy", numpy.__version__, npy)
    sp_page = "reference/generated/{}.html"
    sp = [e for sub in SCIPY for e in _entries(f"scipy.{sub}", sp_page)]
    _write(OUT / "scipy-objects.inv", "SciPy", scipy.__version__, sp)


if __name__ == "__main__":
    main()
