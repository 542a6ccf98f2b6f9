"""Shared by the array-API tests: the namespaces to parametrize over (``array_api_strict``,
PyTorch's CPU tensors where PyTorch is installed), moving arrays to and from them, and
their fixtures (``dispatch``, ``one_torch_thread``) live in ``conftest.py``.
"""

from __future__ import annotations

import numpy as np
import pytest

xps = pytest.importorskip("array_api_strict")


def _torch():
    try:
        import torch
    except ImportError:  # pragma: no cover - depends on the environment
        return None
    return torch


TORCH = _torch()
NAMESPACES = [
    pytest.param("strict", id="array_api_strict"),
    pytest.param(
        "torch",
        id="torch-cpu",
        marks=pytest.mark.skipif(TORCH is None, reason="PyTorch is not installed"),
    ),
]


def to_xp(name, a):
    """``a`` (NumPy) as an array of the namespace ``name``."""
    if a is None:
        return None
    return xps.asarray(a) if name == "strict" else TORCH.asarray(a)


def of_namespace(name, a):
    """Whether ``a`` is an array of namespace ``name`` (not NumPy)."""
    if name == "strict":
        return a.__array_namespace__() is xps
    return isinstance(a, TORCH.Tensor)


def host(a):
    if isinstance(a, np.ndarray):
        return a
    if TORCH is not None and isinstance(a, TORCH.Tensor):
        return a.numpy()
    return np.from_dlpack(a)
