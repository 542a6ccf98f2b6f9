"""The version, read from the installed package's metadata: it is written only in pyproject.toml."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("convexagg")
except PackageNotFoundError:  # pragma: no cover - a source tree that was never installed
    __version__ = "0+unknown"
