"""
==========================================
The decoders compared on the same binaries
==========================================

A decoder turns the outputs of the binary classifiers into a class (and, for
most, class probabilities). Because every decoder of :mod:`convexagg.decoders`
takes the same binary outputs, one fitted
:class:`~convexagg.CodeMatrixClassifier` can switch between them with
``fit_decoder``: the binaries are trained once and every decoder sees exactly
the same outputs, which is how the paper compares them.
"""

# %%
# One set of binaries: 45 one-vs-one logistic regressions
# --------------------------------------------------------
import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_digits
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import log_loss
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from convexagg import (
    BradleyTerryDecoder,
    CodeMatrixClassifier,
    ConvexDecoder,
    HammingDecoder,
    LossBasedDecoder,
    PairwiseCouplingDecoder,
    WMAPDecoder,
)
from convexagg.metrics import top_label_calibration_error

X, y = load_digits(return_X_y=True)
X_train, X_test, y_train, y_test = train_test_split(
    X, y, test_size=0.5, stratify=y, random_state=0
)
binary = make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000))
clf = CodeMatrixClassifier(binary, code="ovo", decoder=HammingDecoder()).fit(
    X_train, y_train
)

# %%
# Every decoder on the same outputs
# ---------------------------------
# ``set_params(decoder=...)`` then ``fit_decoder`` refits only the decoder. The
# Hamming decoder votes and gives no probabilities; the others do.
decoders = {
    "Hamming": HammingDecoder(),
    "loss-based": LossBasedDecoder(),
    "GBTM": BradleyTerryDecoder(),
    "pairwise (Wu-Lin-Weng)": PairwiseCouplingDecoder(),
    "WMAP (N_j weights)": WMAPDecoder(weights="n_samples"),
    "convex aggregation": ConvexDecoder(),
}
scores = {}
for name, decoder in decoders.items():
    clf.set_params(decoder=decoder).fit_decoder(X_train, y_train)
    accuracy = clf.score(X_test, y_test)
    if hasattr(clf, "predict_proba"):
        proba = clf.predict_proba(X_test)
        loss = log_loss(y_test, proba)
        ece = top_label_calibration_error(y_test, proba)
    else:
        loss = ece = np.nan
    scores[name] = (accuracy, loss, ece)
    print(
        f"{name:24s} accuracy {accuracy:.3f}  "
        f"log-loss {loss:.3f}  ECE {ece:.3f}"
    )

# %%
# The accuracies hardly differ: with one-vs-one binaries this good, every
# decoder finds the same class for almost every sample. The probabilities
# differ a lot. Loss-based decoding with equal weights ``1/M`` is nearly
# uniform by construction (the paper's section 5.1), hence its large log-loss.
# The coupling methods (GBTM, Wu-Lin-Weng, WMAP with fixed weights) solve, for
# each sample, for the class probabilities that best explain its binary
# outputs; the labels play no part, so their probabilities are as honest as the
# binary outputs happen to be. The convex aggregation learns from the labels
# how much each binary classifier counts, by maximum likelihood.
names = [name for name in scores if not np.isnan(scores[name][1])]
fig, axes = plt.subplots(
    1, 2, figsize=(10, 3.6), sharey=True, layout="constrained"
)
for ax, column, title in zip(axes, (1, 2), ("log-loss", "top-label ECE")):
    values = [scores[name][column] for name in names]
    ax.barh(names, values, color="tab:blue")
    ax.set_xscale("log")
    ax.set_xlabel(f"{title} on the test half (log scale, lower is better)")
    for i, v in enumerate(values):
        ax.text(v, i, f" {v:.3f}", va="center", fontsize=8)
    ax.set_xlim(right=3 * max(values))  # room for the labels
axes[0].invert_yaxis()
plt.show()
