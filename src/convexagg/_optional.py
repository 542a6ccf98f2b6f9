"""Optional dependencies: import them, or say in one line which extra installs them."""

from __future__ import annotations

import importlib

__all__ = ["MissingDependencyError", "require"]


class MissingDependencyError(ImportError):
    """An optional dependency is not installed; the message names the extra to install."""


def require(module, feature, extra, hint=""):
    """Import ``module`` (dotted names too), or raise :class:`MissingDependencyError`.

    Parameters
    ----------
    module : str
        For instance ``"matplotlib.pyplot"``.
    feature : str
        What needs it, as the message's subject (``"'convexagg figures'"``).
    extra : str
        The convexagg extra that installs it (``"experiments"``, ``"dask"``).
    hint : str, default=""
        Appended to the message (another way out, e.g. an option).

    Returns
    -------
    module
    """
    top = module.split(".")[0]
    try:
        importlib.import_module(top)  # a cached submodule must not hide a missing package
        return importlib.import_module(module)
    except ImportError as exc:
        raise MissingDependencyError(
            f'{feature} needs {top}: pip install "convexagg[{extra}]"{hint}'
        ) from exc
