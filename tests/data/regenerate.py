"""Regenerate the golden masters of ``tests/data/`` (see CONTRIBUTING.md).

    .venv/bin/python tests/data/regenerate.py

``solver_optima.json``: for every problem of ``tests/golden.py``'s ``PROBLEMS``, the
optimum of scipy's L-BFGS-B (to 1e-12; a minute in all) and the fingerprint of the
binary outputs it was computed on (``tests/binary_outputs.py``). The tests compare
the library's solvers with these numbers and refuse them if the outputs changed.
Run it when ``binary_outputs.py``, a problem, or the objective itself changes (a test
of ``tests/test_solvers.py`` then fails, saying so), and review the diff.
"""

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: the shared modules

from binary_outputs import digits_complete_outputs, digits_outputs, fingerprint  # noqa: E402
from golden import (  # noqa: E402
    PROBLEMS,
    SOLVER_OPTIMA,
    lbfgsb_optimum,
    problem_inputs,
    problem_objective,
)


def main():
    outputs = {"digits": digits_outputs(), "digits_complete": digits_complete_outputs()}
    optima = {}
    for name in PROBLEMS:
        x, f = lbfgsb_optimum(problem_objective(name, outputs))
        optima[name] = {
            "inputs": fingerprint(*problem_inputs(name, outputs)),
            "f": float(f),
            "x": [float(v) for v in x],
        }
        print(f"{name}: f* = {f!r}")
    with open(SOLVER_OPTIMA, "w") as out:  # a problem a line: reviewable diffs
        lines = ",\n".join(f"{json.dumps(k)}: {json.dumps(v)}" for k, v in optima.items())
        out.write("{\n" + lines + "\n}\n")
    print(f"wrote {SOLVER_OPTIMA}")


if __name__ == "__main__":
    main()
