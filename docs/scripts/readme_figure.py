"""Draw the README's figure: docs/_static/reliability_digits.png.

    python docs/scripts/readme_figure.py

The models and the split of the README's quick start (digits, half held out,
45 one-vs-one logistic regressions), drawn as one reliability diagram with
``convexagg.ReliabilityDisplay`` (15 bins, the default of the calibration-error metrics, so the
legend shows the numbers the quick start prints). The gallery example
``examples/plot_reliability.py`` draws the same figure with its explanation.
"""

from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
from sklearn.calibration import CalibratedClassifierCV  # noqa: E402
from sklearn.datasets import load_digits  # noqa: E402
from sklearn.linear_model import LogisticRegression  # noqa: E402
from sklearn.model_selection import train_test_split  # noqa: E402
from sklearn.multiclass import OneVsOneClassifier  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402

from convexagg import ConvexAggregationClassifier, ReliabilityDisplay  # noqa: E402

TARGET = Path(__file__).resolve().parents[1] / "_static" / "reliability_digits.png"


def main():
    X, y = load_digits(return_X_y=True)
    X_train, X_test, y_train, y_test = train_test_split(
        X, y, test_size=0.5, stratify=y, random_state=0
    )
    binary = make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000))
    models = {
        "convexagg (convex aggregation)": ConvexAggregationClassifier(
            binary, code="ovo", random_state=0
        ),
        "OvO + CalibratedClassifierCV(sigmoid)": CalibratedClassifierCV(
            OneVsOneClassifier(binary), method="sigmoid"
        ),
        "OvO + CalibratedClassifierCV(temperature)": CalibratedClassifierCV(
            OneVsOneClassifier(binary), method="temperature"
        ),
    }
    fig, ax = plt.subplots(figsize=(6.4, 5.6), layout="constrained")
    for name, model in models.items():
        model.fit(X_train, y_train)
        ReliabilityDisplay.from_estimator(model, X_test, y_test, n_bins=15, name=name, ax=ax)
    ax.set_title("Digits, 45 one-vs-one logistic regressions, test half", fontsize=10)
    fig.savefig(TARGET, dpi=100)
    print(f"wrote {TARGET}")


if __name__ == "__main__":
    main()
