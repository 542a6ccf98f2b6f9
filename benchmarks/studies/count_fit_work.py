"""Count the work of one ConvexAggregationClassifierCV fit: input checks, solver resolutions,
solver-configuration validations and solves.

    PYTHONPATH=<src> python benchmarks/studies/count_fit_work.py

On iris, ``ConvexAggregationClassifierCV(LogisticRegression(max_iter=500), random_state=0)``
(13 alphas, 5 alpha folds, ``cv=5``); each counted function is wrapped wherever the
library holds a reference to it. Prints a dict of the counts. Backs BENCHMARKS.md, "Checks".
"""

import sys
from collections import Counter

from sklearn.datasets import load_iris
from sklearn.linear_model import LogisticRegression

import convexagg.solvers.config as cfg
from convexagg import ConvexAggregationClassifierCV
from convexagg.decoders import base
from convexagg.solvers import SolverConfig

n = Counter()


def everywhere(orig, key):
    def wrapped(*a, **k):
        n[key] += 1
        return orig(*a, **k)

    for name, mod in list(sys.modules.items()):
        if name.startswith("convexagg"):
            for attr, v in list(vars(mod).items()):
                if v is orig:
                    setattr(mod, attr, wrapped)


everywhere(base.check_fit_inputs, "input checks")
everywhere(cfg.resolve_solver, "solver resolutions")
solve = SolverConfig.solve


def s(self, *a, **k):
    n["solves"] += 1
    return solve(self, *a, **k)


SolverConfig.solve = s
vp = SolverConfig._validate_params


def v(self, *a, **k):
    n["config validations"] += 1
    return vp(self, *a, **k)


SolverConfig._validate_params = v
X, y = load_iris(return_X_y=True)
ConvexAggregationClassifierCV(LogisticRegression(max_iter=500), random_state=0).fit(X, y)
print(dict(n))
