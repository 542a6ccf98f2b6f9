"""
==================
Solver convergence
==================

The weights of the convex aggregation solve a smooth convex problem with
non-negativity constraints. ``solver`` chooses the algorithm: the projected
Newton method (the default, ``"auto"``), the paper's primal-dual interior point
method (its Algorithm 1, ``"interior_point"``), Mehrotra's predictor-corrector
variant of it, or scipy's L-BFGS-B. Each records its progress in the fitted
decoder's ``history_``, which :class:`~convexagg.ConvergenceDisplay` draws.
"""

# %%
# One problem for every solver
# ----------------------------
# The binary outputs of 45 one-vs-one logistic regressions on their training
# data: the problem :class:`~convexagg.ConvexAggregationClassifier` solves.
import time

import matplotlib.pyplot as plt
from sklearn.datasets import load_digits
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from convexagg import (
    CodeMatrixClassifier,
    ConvergenceDisplay,
    ConvexDecoder,
    HammingDecoder,
)
from convexagg.solvers import InteriorPoint

X, y = load_digits(return_X_y=True)
binary = make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000))
clf = CodeMatrixClassifier(binary, code="ovo", decoder=HammingDecoder()).fit(
    X, y
)
Q = clf.predict_binary_proba(X)  # (n_samples, 45) probabilities
code = clf.code_matrix_

# %%
# Fit the weights with each solver
# --------------------------------
# A name picks a solver with its default settings; a configuration object
# (:mod:`convexagg.solvers`) sets them.
solvers = {
    "projected Newton (default)": "auto",
    "interior point, Algorithm 1": "interior_point",
    "interior point, Mehrotra": InteriorPoint(method="predictor_corrector"),
    "L-BFGS-B": "lbfgsb",
}
fitted = {}
for name, solver in solvers.items():
    start = time.perf_counter()
    decoder = ConvexDecoder(solver=solver).fit(Q, y, code)
    seconds = time.perf_counter() - start
    fitted[name] = decoder
    print(
        f"{name:28s} {decoder.n_iter_:4d} iterations  "
        f"objective {decoder.objective_:.8f}  "
        f"converged {decoder.converged_}  ({seconds:.2f} s)"
    )

# %%
# They reach the same objective to about their tolerances (``tol=1e-4`` on
# the projected gradient, or on the KKT residual and duality gap; L-BFGS-B's
# default is tighter). The lines below are ``f - f*`` (``f*``: the lowest value
# of that run) and each solver's own stopping measure.
fig, axes = plt.subplots(2, 2, figsize=(10, 7), layout="constrained")
for ax, (name, decoder) in zip(axes.ravel(), fitted.items()):
    ConvergenceDisplay.from_estimator(decoder, name=name, ax=ax)
plt.show()

# %%
# The projected Newton method starts at the best equal weights and holds a
# weight at exactly zero once it is switched off; the interior point methods
# start at the paper's ``w = 1/M`` and keep every weight strictly positive,
# reducing the KKT residual and the duality gap together; L-BFGS-B records its
# objective only. An iteration costs different amounts in each:
# ``BENCHMARKS.md`` (in :doc:`/benchmarks`) compares them on larger problems.
