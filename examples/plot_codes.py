"""
===============
Choosing a code
===============

The code matrix says which binary problems are solved: one row per class, one
column per binary classifier, ``+1`` for the classes on its positive side,
``-1`` for those on its negative side and ``0`` for classes it does not see.
This example fits the same binary learner and the convex aggregation with
one-vs-rest, one-vs-one, a sparse random ECOC code (the paper's ``"ecoc"`` for
8 classes or more), a dense random code, and a custom matrix.
"""

# %%
# The data and the binary learner
# -------------------------------
import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_digits
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import confusion_matrix, log_loss
from sklearn.model_selection import cross_val_predict, train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from convexagg import ConvexAggregationClassifier, WeightsDisplay
from convexagg.codes import one_vs_rest

X, y = load_digits(return_X_y=True)
X_train, X_test, y_train, y_test = train_test_split(
    X, y, test_size=0.5, stratify=y, random_state=0
)
binary = make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000))

# %%
# A custom code
# -------------
# Any matrix of -1/0/+1 with a row per class (in the order of ``classes_``, the
# sorted labels) is a code, as long as every column has both sides and every
# pair of classes is separated by some column
# (:func:`~convexagg.codes.check_code_matrix` says which rule a matrix breaks).
# Here: one-vs-rest, plus one column for each of the six pairs of digits that
# one-vs-rest confuses most, found from its out-of-fold predictions on the
# training part (the test part stays unseen).
confusion = confusion_matrix(
    y_train,
    cross_val_predict(
        ConvexAggregationClassifier(binary, code="ovr", random_state=0),
        X_train,
        y_train,
    ),
)
rows, cols = np.triu_indices(10, k=1)
errors = (confusion + confusion.T)[rows, cols]  # a mistaken for b or b for a
top = np.argsort(errors, kind="stable")[::-1][:6]
pairs = [(int(rows[k]), int(cols[k])) for k in top]
print("most confused pairs:", pairs)
columns = []
for a, b in pairs:
    column = np.zeros(10, dtype=int)
    column[a], column[b] = 1, -1
    columns.append(column)
custom = np.column_stack([one_vs_rest(10), *columns])
print(custom.shape)

# %%
# Fit one classifier per code
# ---------------------------
codes = {
    "one-vs-rest": "ovr",
    "one-vs-one": "ovo",
    "sparse random (ECOC)": "ecoc",
    "dense random": "dense_random",
    "custom": custom,
}
fitted = {}
for name, code in codes.items():
    clf = ConvexAggregationClassifier(binary, code=code, random_state=0).fit(
        X_train, y_train
    )
    fitted[name] = clf
    proba = clf.predict_proba(X_test)
    print(
        f"{name:22s} {clf.code_matrix_.shape[1]:3d} binary classifiers  "
        f"accuracy {clf.score(X_test, y_test):.3f}  "
        f"log-loss {log_loss(y_test, proba):.3f}"
    )

# %%
# One-vs-one solves 45 small, easy problems; one-vs-rest 10 hard ones; the
# random codes solve problems that mix several classes on each side, which a
# linear model finds harder, and the learned weights matter most there (the
# paper's finding: the largest gains of the convex aggregation over equal
# weights are on ECOC codes). The six pairwise columns of the custom code
# improve on one-vs-rest at little cost.
#
# The weights of the custom code
# ------------------------------
# Below each column, the weight the aggregation gave it (the last six columns
# are the pairs). A weight near 0 switches a binary classifier off.
WeightsDisplay.from_estimator(fitted["custom"], name="one-vs-rest + 6 pairs")
plt.show()
