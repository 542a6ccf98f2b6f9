"""
===========================================
Decisions under a cost matrix on the digits
===========================================

Some mistakes cost more than others. When reading handwritten amounts, say,
mistaking one particular digit for another may be far more expensive than any
other error. :class:`~convexagg.decision.CostSensitiveClassifier` predicts, for
each sample, the class of least *expected* cost under the model's
probabilities -- ``argmin_j sum_i p_i C[i, j]`` with ``C[i, j]`` the cost of
predicting ``j`` when the truth is ``i`` -- and
:func:`convexagg.metrics.expected_cost_score` measures the realised cost.

The model is fitted once; every cost matrix below reuses it through
:class:`~sklearn.frozen.FrozenEstimator` (no other fit).
"""

# %%
# One fitted model
# ----------------
import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_digits
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import confusion_matrix
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from convexagg import ConvexAggregationClassifier
from convexagg.decision import CostSensitiveClassifier, min_cost_decision
from convexagg.metrics import expected_cost_score

X, y = load_digits(return_X_y=True)
X_train, X_test, y_train, y_test = train_test_split(
    X, y, stratify=y, random_state=0
)
binary = make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000))
clf = ConvexAggregationClassifier(binary, random_state=0).fit(X_train, y_train)

# %%
# The expensive confusion
# -----------------------
# Take the pair of digits the model confuses most often on its out-of-fold
# predictions of the training rows (``oof_proba_``: no test data is used to
# choose it), and make mistaking either for the other ``penalty`` times as
# expensive as any other error.
oof = confusion_matrix(y_train, clf.classes_[clf.oof_proba_.argmax(axis=1)])
np.fill_diagonal(oof, 0)
a, b = np.unravel_index(np.argmax(oof + oof.T), oof.shape)
print(
    f"most confused pair: {a} and {b} "
    f"({oof[a, b] + oof[b, a]} out-of-fold errors)"
)


def cost_matrix(penalty):
    C = 1.0 - np.eye(10)
    C[a, b] = C[b, a] = penalty
    return C


# %%
# Realised cost against the penalty
# ---------------------------------
# With penalty 1 the cost is the 0-1 loss and the decision is ``predict``. As
# the penalty grows, the decisions avoid the expensive pair: a few more cheap
# errors for fewer expensive ones.
#
# The wrapper's decision is :func:`~convexagg.decision.min_cost_decision` on
# ``predict_proba``: computed once, the probabilities serve every cost matrix.
costly = CostSensitiveClassifier(
    FrozenEstimator(clf), cost_matrix=cost_matrix(20)
)
costly.fit(X_train, y_train)
P = clf.predict_proba(X_test)
assert np.array_equal(
    costly.predict(X_test), min_cost_decision(P, cost_matrix(20))
)

penalties = [1, 2, 5, 10, 20, 50]
plain_pred = clf.predict(X_test)
plain, decided, accuracy = [], [], []
for penalty in penalties:
    C = cost_matrix(penalty)
    pred = min_cost_decision(P, C)
    plain.append(expected_cost_score(y_test, plain_pred, cost_matrix=C))
    decided.append(expected_cost_score(y_test, pred, cost_matrix=C))
    accuracy.append(np.mean(pred == y_test))
    print(
        f"penalty {penalty:>2}: cost {plain[-1]:.4f} (predict) "
        f"-> {decided[-1]:.4f}"
    )

fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 4))
ax1.plot(penalties, plain, "o-", label="predict (most probable class)")
ax1.plot(penalties, decided, "s-", label="least expected cost")
ax1.set_xscale("log")
ax1.set_xlabel(f"cost of confusing {a} and {b}")
ax1.set_ylabel("mean realised cost per test digit")
ax1.legend()
ax2.plot(penalties, accuracy, "s-", color="C1")
ax2.axhline(
    np.mean(plain_pred == y_test), color="C0", ls="--", label="predict"
)
ax2.set_xscale("log")
ax2.set_xlabel(f"cost of confusing {a} and {b}")
ax2.set_ylabel("accuracy")
ax2.legend()
fig.tight_layout()
plt.show()
