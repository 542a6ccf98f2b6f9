"""
======================================
Predictions when the class mix changes
======================================

A model is trained on one class mix and deployed on another: most samples of
a screening campaign are healthy, a sensor sees some classes more often in
winter. If only the class priors change (label shift), Bayes' rule gives the
new posteriors exactly: ``p'(k | x) ∝ p(k | x) pi'_k / pi_k`` -- for the
convex aggregation's softmax, a shift of the class scores.
:class:`~convexagg.decision.PriorShiftClassifier` applies it with known
deployment priors, or estimates them from the unlabelled deployment sample by
EM (Saerens, Latinne & Decaestecker 2002).

Here the digits' test set is resampled to class priors drawn from a
Dirichlet(1) distribution, as a deployment sample would differ from the
balanced training set.
"""

# %%
# One fitted model, a shifted test set
# ------------------------------------
import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_digits
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import log_loss
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from convexagg import ConvexAggregationClassifier
from convexagg.decision import PriorShiftClassifier, em_priors, shift_priors

X, y = load_digits(return_X_y=True)
X_train, X_test, y_train, y_test = train_test_split(
    X, y, stratify=y, random_state=0
)
binary = make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000))
clf = ConvexAggregationClassifier(binary, random_state=0).fit(X_train, y_train)
model = FrozenEstimator(clf)

rng = np.random.default_rng(0)


def resample(priors):
    """Test rows drawn (with replacement) to the class priors ``priors``."""
    counts = rng.multinomial(len(y_test), priors)
    rows = [
        rng.choice(np.flatnonzero(y_test == k), size=c)
        for k, c in enumerate(counts)
    ]
    return np.concatenate(rows)


true_priors = rng.dirichlet(np.ones(10))
rows = resample(true_priors)

# %%
# The priors EM finds
# -------------------
# ``priors="em"`` estimates the priors on the batch it predicts (the batch is
# the deployment sample). It starts from the training priors the model's
# probabilities reflect: by default the mean of its out-of-fold probabilities
# (``training_priors="auto"``; the class frequencies for a model without them),
# so that EM finds no shift on data like the training data.
adapted = PriorShiftClassifier(model, priors="em").fit(X_train, y_train)
estimate = adapted.estimate_priors(X_test[rows])
observed = np.bincount(y_test[rows], minlength=10) / len(rows)

fig, ax = plt.subplots(figsize=(8, 3.5))
width = 0.27
ax.bar(
    np.arange(10) - width,
    adapted.training_priors_,
    width,
    label="training (mean out-of-fold posterior)",
)
ax.bar(np.arange(10), observed, width, label="deployment (true)")
ax.bar(np.arange(10) + width, estimate, width, label="EM estimate")
ax.set_xticks(range(10))
ax.set_xlabel("digit")
ax.set_ylabel("class prior")
ax.legend()
fig.tight_layout()

# %%
# Log-loss over many shifted test sets
# ------------------------------------
# For 20 Dirichlet(1) draws: the log-loss of the unadapted probabilities
# against that of the EM-adapted ones, and of the shift to the true priors
# (known priors: ``PriorShiftClassifier(model, priors=...)``). The wrapper's
# computation is :func:`~convexagg.decision.em_priors` and
# :func:`~convexagg.decision.shift_priors` on ``predict_proba``: computed once
# on the test rows, the probabilities serve every resampled set.
P = clf.predict_proba(X_test)
pi = adapted.training_priors_
np.testing.assert_allclose(
    adapted.predict_proba(X_test[rows]),
    shift_priors(P[rows], pi, em_priors(P[rows], pi)[0]),
    atol=1e-9,
)
unadapted, em, known = [], [], []
for _ in range(20):
    priors = rng.dirichlet(np.ones(10))
    rows = resample(priors)
    Ps, ys = P[rows], y_test[rows]
    unadapted.append(log_loss(ys, Ps, labels=clf.classes_))
    em.append(
        log_loss(
            ys, shift_priors(Ps, pi, em_priors(Ps, pi)[0]), labels=clf.classes_
        )
    )
    known.append(
        log_loss(ys, shift_priors(Ps, pi, priors), labels=clf.classes_)
    )
print(
    f"EM-adapted better on {np.mean(np.array(em) < unadapted):.0%} "
    "of the draws"
)
print(
    f"mean log-loss: unadapted {np.mean(unadapted):.3f}, "
    f"EM {np.mean(em):.3f}, "
    f"true priors {np.mean(known):.3f}"
)

fig, ax = plt.subplots(figsize=(4.5, 4.5))
ax.scatter(unadapted, em, label="EM-adapted")
ax.scatter(unadapted, known, marker="x", label="true priors")
top = max(unadapted) * 1.05
ax.plot([0, top], [0, top], color="grey", ls="--")
ax.set_xlabel("log-loss, unadapted")
ax.set_ylabel("log-loss, adapted")
ax.legend()
fig.tight_layout()
plt.show()
