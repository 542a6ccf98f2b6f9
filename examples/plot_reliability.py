"""
=====================================================
Reliability diagram beside scikit-learn's calibrators
=====================================================

Are the probabilities honest? A reliability diagram bins the test samples by
the probability a model gives its predicted class (its *confidence*) and plots,
per bin, how often that prediction is right. Honest probabilities lie on the
diagonal; the top-label expected calibration error (ECE) in the legend is the
mean distance to it, weighted by the bins' sizes.

All three models below use the same 45 one-vs-one logistic regressions on the
digits data; they differ in how the binary outputs become class probabilities:

* the convex aggregation (:class:`~convexagg.ConvexAggregationClassifier`);
* scikit-learn's :class:`~sklearn.multiclass.OneVsOneClassifier`, whose vote
  scores :class:`~sklearn.calibration.CalibratedClassifierCV` maps to
  probabilities with a sigmoid per class (``method="sigmoid"``), or with one
  shared temperature (``method="temperature"``).

:class:`~convexagg.ReliabilityDisplay` draws multiclass reliability diagrams
(scikit-learn's :class:`~sklearn.calibration.CalibrationDisplay` is binary).
"""

# %%
# Data and the shared binary learner
# ----------------------------------
import matplotlib.pyplot as plt
from sklearn.calibration import CalibratedClassifierCV
from sklearn.datasets import load_digits
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import log_loss
from sklearn.model_selection import train_test_split
from sklearn.multiclass import OneVsOneClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from convexagg import ConvexAggregationClassifier, ReliabilityDisplay
from convexagg.metrics import top_label_calibration_error

X, y = load_digits(return_X_y=True)
X_train, X_test, y_train, y_test = train_test_split(
    X, y, test_size=0.5, stratify=y, random_state=0
)
binary = make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000))

models = {
    "convex aggregation": ConvexAggregationClassifier(
        binary, code="ovo", random_state=0
    ),
    "OvO + sigmoid": CalibratedClassifierCV(
        OneVsOneClassifier(binary), method="sigmoid"
    ),
    "OvO + temperature": CalibratedClassifierCV(
        OneVsOneClassifier(binary), method="temperature"
    ),
}
for model in models.values():
    model.fit(X_train, y_train)

# %%
# Scores on the test part
# -----------------------
# Log-loss and the top-label ECE over 10 bins (as in the diagram below):
# lower is better. The accuracies are close; the probabilities are not. The
# sigmoids, fitted per class on the one-vs-one vote scores, are under-confident
# (accuracy above confidence); one temperature does much better; the convex
# aggregation, fitted by maximum likelihood on the binary outputs themselves,
# best.
for name, model in models.items():
    proba = model.predict_proba(X_test)
    print(
        f"{name:20s} accuracy {model.score(X_test, y_test):.3f}  "
        f"log-loss {log_loss(y_test, proba):.3f}  "
        f"ECE {top_label_calibration_error(y_test, proba, n_bins=10):.3f}"
    )

# %%
# The reliability diagrams
# ------------------------
# The three models on one diagram; the marker area is the share of the test
# samples in the bin. Most test samples get a confidence near 1, so the bins
# at the right carry most of the weight.
fig, ax = plt.subplots(figsize=(6.4, 5.6), layout="constrained")
for name, model in models.items():
    ReliabilityDisplay.from_estimator(
        model, X_test, y_test, n_bins=10, name=name, ax=ax
    )
plt.show()
