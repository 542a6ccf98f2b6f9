"""
===========================================
Conformal class sets: size against coverage
===========================================

Instead of one class, predict a *set* of classes that holds the true class
with a chosen probability -- 90 % at error rate 0.1 -- on data exchangeable
with the training data. :class:`~convexagg.decision.ConformalClassifier`
builds the sets from the out-of-fold outputs that the default ``cv=5`` of
:class:`~convexagg.ConvexAggregationClassifier` computes anyway
(cross-conformal): no held-out calibration set and no extra fit.

``predict_pvalues`` gives every class's conformal p-value; the set at error
rate ``e`` is ``pvalues > e``, so one call gives the sets at every error rate.
"""

# %%
# One fitted model
# ----------------
import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_digits
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from convexagg import ConvexAggregationClassifier
from convexagg.decision import ConformalClassifier

X, y = load_digits(return_X_y=True)
X_train, X_test, y_train, y_test = train_test_split(
    X, y, stratify=y, random_state=0
)
binary = make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000))
clf = ConvexAggregationClassifier(binary, random_state=0).fit(X_train, y_train)
model = FrozenEstimator(clf)
print(f"accuracy of predict: {np.mean(clf.predict(X_test) == y_test):.3f}")

# %%
# Coverage and set size at every error rate
# -----------------------------------------
# LAC (score ``1 - p_y``) gives the smallest sets and may give an empty set
# where no class is likely enough; APS (the probability mass of the classes
# at least as likely as ``y``) gives larger sets where the model is unsure.
rates = np.linspace(0.01, 0.3, 30)
fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 4))
for score in ("lac", "aps"):
    conformal = ConformalClassifier(model, conformity_score=score).fit(
        X_train, y_train
    )
    pvalues = conformal.predict_pvalues(X_test)
    sets = pvalues[None, :, :] > rates[:, None, None]
    coverage = sets[:, np.arange(len(y_test)), y_test].mean(axis=1)
    ax1.plot(1 - rates, coverage, "o-", ms=3, label=score.upper())
    ax2.plot(
        1 - rates,
        sets.sum(axis=2).mean(axis=1),
        "o-",
        ms=3,
        label=score.upper(),
    )
ax1.plot([0.7, 1], [0.7, 1], color="grey", ls="--", label="target")
ax1.set_xlabel("target coverage (1 - error rate)")
ax1.set_ylabel("test coverage")
ax1.legend()
ax2.set_xlabel("target coverage (1 - error rate)")
ax2.set_ylabel("mean set size")
ax2.legend()
fig.tight_layout()

# %%
# Coverage within each class
# --------------------------
# The guarantee is marginal: over all test samples. Hard digits can be
# covered less often than easy ones. ``class_conditional=True`` (Mondrian)
# calibrates each class on its own samples, so that every class is covered
# at the target rate -- with larger sets for the hard ones.
fig, ax = plt.subplots(figsize=(8, 3.5))
width = 0.4
for shift, mondrian in [(-width / 2, False), (width / 2, True)]:
    conformal = ConformalClassifier(
        model, error_rate=0.1, class_conditional=mondrian
    )
    sets = conformal.fit(X_train, y_train).predict_set(X_test)
    hit = sets[np.arange(len(y_test)), y_test]
    per_class = [hit[y_test == k].mean() for k in range(10)]
    label = "class-conditional" if mondrian else "marginal"
    ax.bar(
        np.arange(10) + shift,
        per_class,
        width,
        label=f"{label} (size {sets.sum(1).mean():.2f})",
    )
ax.axhline(0.9, color="grey", ls="--")
ax.set_ylim(0.6, 1.02)
ax.set_xticks(range(10))
ax.set_xlabel("digit")
ax.set_ylabel("coverage at error rate 0.1")
ax.legend(loc="lower right")
fig.tight_layout()
plt.show()
