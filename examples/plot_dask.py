"""
=====================
Scale-out with Dask
=====================

Two things can outgrow one machine: training many binary classifiers, and the
binary outputs ``Q`` (``n_samples x n_classifiers``) the aggregation is fitted
on. With ``pip install ".[dask]"``:

* under ``joblib.parallel_config(backend="dask")`` the binary classifiers are
  trained on the Dask workers;
* :class:`~convexagg.ConvexDecoder` fits on ``Q`` as a Dask array chunked by
  rows without ever gathering it: each evaluation of the objective is one pass
  over the blocks, which send back only sums of size ``n_classifiers^2``;
* ``predict_binary_proba``, ``predict_proba`` and ``predict`` on a Dask array
  return lazy Dask arrays, computed block by block.

Here a small in-process cluster stands in for a real one
(``Client("scheduler-address:8786")``).
"""

# %%
# A cluster
# ---------
# ``processes=False`` keeps the workers as threads of this process, so the
# example runs anywhere (in a script that starts a process-based
# ``LocalCluster``, put the cluster code under ``if __name__ == "__main__":``).
import dask.array as da
import joblib
import matplotlib.pyplot as plt
import numpy as np
from distributed import Client, LocalCluster
from sklearn.base import clone
from sklearn.datasets import load_digits
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from convexagg import ConvexAggregationClassifier

cluster = LocalCluster(
    processes=False, n_workers=2, threads_per_worker=1, dashboard_address=None
)
client = Client(cluster)

# %%
# Binaries trained on the workers
# -------------------------------
# ``cv="in_sample"``: the weights are fitted on the binaries' outputs on the
# training rows, the outputs the out-of-core fit below sees (with the default
# out-of-fold outputs, the two fits would see different outputs).
X, y = load_digits(return_X_y=True)
binary = make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000))
with joblib.parallel_config(backend="dask"):
    clf = ConvexAggregationClassifier(binary, code="ovo", cv="in_sample")
    clf.fit(X, y)

# %%
# The aggregation fitted out of core
# ----------------------------------
# ``X`` as a Dask array of row blocks (in practice read with ``da.from_zarr``,
# ``dd.read_parquet(...).to_dask_array(lengths=True)`` and the like). The
# binary outputs are lazy; ``persist`` computes them once and keeps the blocks
# in the workers' memory (spread over the cluster, never gathered). Without it,
# every pass would recompute them from ``X`` -- the way to go when even ``Q``
# does not fit in the cluster's memory. Every evaluation of the objective is
# one pass over the blocks; ``n_passes_`` counts them (the search for the start
# point and the line searches take passes too).
X_blocks = da.from_array(X, chunks=(300, -1))
y_blocks = da.from_array(np.searchsorted(clf.classes_, y), chunks=300)
Q = clf.predict_binary_proba(
    X_blocks
).persist()  # (n_samples, 45), in blocks of 300 rows
# the classifier's model and solver (its default: entry weights), unfitted
decoder = clone(clf.decoder_).fit(Q, y_blocks, clf.code_matrix_)
print(
    f"{Q.numblocks[0]} blocks, {decoder.n_iter_} iterations, "
    f"{decoder.n_passes_} passes"
)

# %%
# The same weights as in memory
# -----------------------------
# The estimator fitted its weights on the in-memory outputs of the same
# binaries; the out-of-core fit agrees with them to rounding.
in_memory = clf.weights_
print(f"largest difference {np.max(np.abs(decoder.weights_ - in_memory)):.1e}")
proba = decoder.predict_proba(Q)  # lazy
print(type(proba).__name__, proba.shape, "->", proba.compute()[:2].round(3))

fig, ax = plt.subplots(figsize=(4.5, 4.5), layout="constrained")
ax.plot(in_memory, decoder.weights_, "o")
ax.axline((0, 0), slope=1, color="0.6", ls=":")
ax.set(xlabel="weights, in memory", ylabel="weights, Dask (out of core)")
plt.show()

client.close()
cluster.close()
