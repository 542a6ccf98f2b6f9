"""Which ``alpha`` every solver solves: the objective each solver reaches, against the
best of them, for ``alpha = 1 .. 1e20`` and the three penalties.

The numbers behind ``convexagg.aggregation.MAX_ALPHA = 1e10``: up to 1e10 every
solver lands within 1e-4 of the best objective; from 1e12 (L1) and 1e14 (elastic
net) the interior point methods stop far from it (excess 1e12 at alpha=1e12, L1).
The predictor-corrector also fails with L1 at alpha = 1e2 and 1e4 (excess 2e3 and
6e5, with a ConvergenceWarning), a separate defect.

    python benchmarks/studies/scan_alpha_range.py

Backs BENCHMARKS.md, "Which alpha every solver solves".
"""

import warnings

import numpy as np

from convexagg import ConvexDecoder
from convexagg.aggregation import Penalty
from convexagg.datasets import make_broken_classifier_outputs
from convexagg.solvers import InteriorPoint, resolve_solver

SOLVERS = {
    "projected_newton": "projected_newton",
    "interior_point": "interior_point",
    "lbfgsb": "lbfgsb",
    "predictor_corrector": InteriorPoint(method="predictor_corrector"),
    "interior_point_direct": InteriorPoint(newton="direct"),
    "interior_point_uniform": InteriorPoint(init="uniform"),
}


def main():
    Q, y, code = make_broken_classifier_outputs(random_state=0)
    base = ConvexDecoder(alpha=1.0).likelihood_objective(Q, y, code)
    print("penalty, log10(alpha), best objective, excess of:", ", ".join(SOLVERS))
    for penalty, (r2, r1) in {"l2": (1, 0), "l1": (0, 1), "elasticnet": (0.5, 0.5)}.items():
        for e in range(0, 22, 2):
            alpha = 10.0**e
            # the objective built directly: the decoder refuses alpha beyond MAX_ALPHA
            objective = base.with_penalty(Penalty(l2=r2 * alpha, l1=r1 * alpha))
            values = []
            for solver in SOLVERS.values():
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    try:
                        result = resolve_solver(solver).solve(objective)
                        values.append(objective.value(result.w))
                    except ValueError:  # a solver that ends without a usable result
                        values.append(np.inf)
            values = np.array(values)
            best = values.min()
            excess = ", ".join(f"{v - best:.1e}" for v in values)
            print(f"{penalty}, {e}, {best:.12g}, {excess}")


if __name__ == "__main__":
    main()
