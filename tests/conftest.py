"""Fixtures shared by the test files: binary outputs trained once per session."""

import pytest
import sklearn

from binary_outputs import digits_complete_outputs, digits_outputs


@pytest.fixture(scope="session", autouse=True)
def cache_home(tmp_path_factory):
    """The user's cache directory, where ``convexagg.io`` keeps the names of the
    scikit-learn estimators skops trusts, in a temporary folder for the whole session
    (the command-line tests' processes inherit it): the suite never writes to the real one."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("cache-home")))
        yield


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


@pytest.fixture
def dispatch(monkeypatch):
    """scikit-learn's array API dispatch on for the test. scikit-learn requires
    ``SCIPY_ARRAY_API=1`` to enable it; set for the test only (convexagg's device path
    calls no SciPy function on a non-NumPy array, so SciPy's own mode does not matter)."""
    monkeypatch.setenv("SCIPY_ARRAY_API", "1")
    with sklearn.config_context(array_api_dispatch=True):
        yield


@pytest.fixture(scope="module")
def one_torch_thread():
    """Problems of a few hundred rows: PyTorch's thread pool only adds contention."""
    try:
        import torch
    except ImportError:  # pragma: no cover - depends on the environment
        yield
        return
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)
