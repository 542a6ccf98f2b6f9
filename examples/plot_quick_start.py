"""
===========
Quick start
===========

A multiclass classifier from binary logistic regressions: one per pair of
classes (one-vs-one), their outputs aggregated into class probabilities by the
convex aggregation of Park, Hwang & Choi (SDM 2014).
"""

# %%
# Fit
# ---
# :class:`~convexagg.ConvexAggregationClassifier` is a scikit-learn classifier:
# ``fit`` trains one clone of the binary learner per column of the code matrix
# (here 45 one-vs-one problems for the 10 digits) and then learns
# non-negative weights: one per binary classifier and, by default, one per
# class it uses, shrunk toward the classifier's weight (``entry_weights_``).
import matplotlib.pyplot as plt
from sklearn.datasets import load_digits
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import log_loss
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from convexagg import (
    ConvexAggregationClassifier,
    ReliabilityDisplay,
    WeightsDisplay,
)

X, y = load_digits(return_X_y=True)
X_train, X_test, y_train, y_test = train_test_split(
    X, y, test_size=0.5, stratify=y, random_state=0
)
binary = make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000))
clf = ConvexAggregationClassifier(binary, code="ovo", random_state=0).fit(
    X_train, y_train
)
print(clf.code_matrix_.shape, "code matrix (classes x binary classifiers)")

# %%
# Predict
# -------
# ``predict_proba`` gives one probability per class (rows sum to 1),
# ``predict`` the most probable class.
proba = clf.predict_proba(X_test)
print(proba[:3].round(3))
print(
    f"accuracy {clf.score(X_test, y_test):.3f}  "
    f"log-loss {log_loss(y_test, proba):.3f}"
)

# %%
# How honest are the probabilities?
# ---------------------------------
# A reliability diagram: per bin of the largest predicted probability, how
# often the prediction is right. Honest probabilities lie on the diagonal.
ReliabilityDisplay.from_estimator(clf, X_test, y_test, n_bins=10)
plt.show()

# %%
# What the aggregation learned
# ----------------------------
# One weight per binary classifier, drawn under the code matrix: each column is
# a binary problem (blue: its positive class, red: its negative class), and the
# bar below it is how much that classifier counts in the class probabilities
# (the weight its two entry weights, one per class, are shrunk toward).
WeightsDisplay.from_estimator(clf)
plt.show()
