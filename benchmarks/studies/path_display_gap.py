"""How far ``RegularizationPathDisplay.from_estimator``'s path is from the classifier's own
``weights_`` at its own ``alpha`` (the getting-started model: wine's training split, one-vs-one,
scaled logistic regressions), for each meaning of ``cv``. It should be 0 up to rounding: the path
is drawn on the outputs the weights were fitted on.

    OMP_NUM_THREADS=1 python benchmarks/studies/path_display_gap.py

Backs BENCHMARKS.md, "Checks".
"""

import matplotlib
import numpy as np
from sklearn.datasets import load_wine
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from convexagg import ConvexAggregationClassifier, RegularizationPathDisplay

matplotlib.use("Agg")


def main():
    X, y = load_wine(return_X_y=True)
    X, _, y, _ = train_test_split(X, y, stratify=y, random_state=0)
    binary = make_pipeline(StandardScaler(), LogisticRegression())
    for cv, ensemble in [("in_sample", "auto"), (5, "auto"), (5, False)]:
        clf = ConvexAggregationClassifier(
            binary, code="ovo", cv=cv, ensemble=ensemble, random_state=0
        ).fit(X, y)
        display = RegularizationPathDisplay.from_estimator(clf, X, y, [clf.alpha])
        gap = np.abs(display.weights[0] - clf.weights_).max()
        print(f"cv={cv!r} ensemble={ensemble!r}: max |path - weights_| = {gap:.3g}")


if __name__ == "__main__":
    main()
