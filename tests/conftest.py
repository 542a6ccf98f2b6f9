"""Fixtures shared by the test files: binary outputs trained once per session."""

import pytest

from binary_outputs import digits_complete_outputs, digits_outputs


@pytest.fixture(scope="session")
def digits_binary_outputs():
    """``{code: (Q, y, code_matrix)}``: in-sample outputs on digits (ovr, ovo, ecoc)."""
    return digits_outputs()


@pytest.fixture(scope="session")
def digits_complete_binary_outputs():
    """``(Q, y, code_matrix)``: in-sample outputs of the complete code on the digits 0-8."""
    return digits_complete_outputs()


@pytest.fixture(scope="session")
def golden_outputs(digits_binary_outputs, digits_complete_binary_outputs):
    """The outputs the golden masters of ``tests/data/`` were computed on, by name."""
    return {"digits": digits_binary_outputs, "digits_complete": digits_complete_binary_outputs}
