"""
===========================================
Non-linear binaries and out-of-fold weights
===========================================

The paper fits the aggregation weights on the binary classifiers' outputs on
their own training data. That works for linear binaries, whose outputs on
training rows look like their outputs on new rows. A flexible learner -- here
a fully grown decision tree -- is (almost) always right and always sure on the
rows it was trained on, so its training outputs say nothing about how far to
trust it. ``cv=5`` fits the weights on out-of-fold outputs instead, as
scikit-learn's :class:`~sklearn.calibration.CalibratedClassifierCV` fits its
calibrators.
"""

# %%
# Three ways to fit the weights
# -----------------------------
# * ``cv="in_sample"`` (the paper's protocol): outputs of the binaries on
#   their own training rows;
# * ``cv=5`` (the default): each row's output comes from binaries trained on
#   the other four folds; the five sets of fold binaries are kept as an
#   ensemble whose probabilities are averaged at prediction
#   (``ensemble="auto"``);
# * ``cv=5, ensemble=False``: the same out-of-fold outputs for the weights,
#   then the binaries are refitted on all the rows.
import matplotlib.pyplot as plt
from sklearn.datasets import load_digits
from sklearn.metrics import log_loss
from sklearn.model_selection import train_test_split
from sklearn.tree import DecisionTreeClassifier

from convexagg import ConvexAggregationClassifier, ReliabilityDisplay

X, y = load_digits(return_X_y=True)
X_train, X_test, y_train, y_test = train_test_split(
    X, y, test_size=0.5, stratify=y, random_state=0
)
tree = DecisionTreeClassifier(random_state=0)

models = {
    "in-sample": ConvexAggregationClassifier(
        tree, code="ovo", cv="in_sample", random_state=0
    ),
    "cv=5, ensemble": ConvexAggregationClassifier(
        tree, code="ovo", cv=5, random_state=0
    ),
    "cv=5, refitted": ConvexAggregationClassifier(
        tree, code="ovo", cv=5, ensemble=False, random_state=0
    ),
}
for name, model in models.items():
    model.fit(X_train, y_train)
    proba = model.predict_proba(X_test)
    print(
        f"{name:20s} accuracy {model.score(X_test, y_test):.3f}  "
        f"log-loss {log_loss(y_test, proba):.3f}"
    )

# %%
# What went wrong in-sample
# -------------------------
# Every tree separates its training rows perfectly: its training outputs are
# 0 or 1. Fitted on them, the weights cannot learn which classifiers to trust
# on new data, and the test probabilities are badly off (a log-loss several
# times larger). On out-of-fold outputs the weights see the trees' real
# mistakes. Keeping the fold trees as an ensemble also averages five trees per
# binary problem, which here raises the accuracy as well.
#
# In the diagram, the in-sample weights are over-confident (below the
# diagonal); the ensemble's averaged probabilities lean the other way (above
# it), and the refitted trees lie closest to it.
fig, ax = plt.subplots(figsize=(6.4, 5.6), layout="constrained")
for name, model in models.items():
    ReliabilityDisplay.from_estimator(
        model, X_test, y_test, n_bins=10, name=name, ax=ax
    )
plt.show()
