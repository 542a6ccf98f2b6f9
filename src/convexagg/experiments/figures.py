"""The paper's three figures, as PNG files (matplotlib, no display needed).

* Fig. 3 ``fig3_regularization_path.png``: aggregation weights and training accuracy
  along the regularisation path, vowel data, sparse ECOC code (52 classifiers),
  LIBSVM linear + Platt binaries. Without ``vowel.csv.gz`` in the data directory
  it is drawn on scikit-learn's digits instead, and says so: in a logged line, in
  the figure's title and in the summary (``"stand_in": True``).
* Fig. 4 ``fig4_interior_point.png``: objective and training accuracy per interior
  point iteration on the synthetic 3-class problem with a broken classifier.
* Fig. 5 ``fig5_accuracy_vs_classes.png``: test accuracy of loss-based decoding and
  the convex aggregation on 2-D Gaussian classes as the number of classes grows,
  for APs, OVA and ECOC (plus one example data set, the paper's panel (a)).

Each study also returns its numbers; Fig. 5's per-run results are cached as JSON
(keyed on the study's settings and the library's version; an unreadable entry is
recomputed) so an interrupted run resumes. Needs matplotlib and tqdm
(``pip install "convexagg[experiments]"``).
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from .._optional import require
from .._version import __version__
from ..aggregation import discrepancies, side_weights, stack_losses
from ..binary import fit_binaries, predict_binaries
from ..codes import make_code, sparse_random
from ..datasets import load_dataset, make_broken_classifier_outputs, make_gaussian_classes
from ..decoders import ConvexDecoder
from ..io import atomic_write
from ..path import regularization_path
from .methods import MethodContext, make_decoder
from .protocol import PAPER_SOLVER, Protocol, fit_tuned_binaries, make_split
from .runner import json_dict, read_cached, write_json

__all__ = ["figure3", "figure4", "figure5", "make_figures"]


_FEATURE = "'convexagg figures'"


def _pyplot():
    matplotlib = require("matplotlib", _FEATURE, "experiments")
    matplotlib.use("Agg")
    return require("matplotlib.pyplot", _FEATURE, "experiments")


def _save(fig, target):
    """``fig`` as PNG at ``target``, through the guarded atomic write."""
    with atomic_write(target) as handle:
        fig.savefig(handle, format="png", dpi=120)


# ----------------------------------------------------------------------------- Fig. 3


def figure3(out_dir, data_dir=None, alphas=None, ecoc_candidates=20000, log=print):
    """Regularisation path on vowel (sparse ECOC, linear SVM + Platt binaries).

    Without vowel in ``data_dir`` the path is drawn on scikit-learn's digits, a
    stand-in that ``log`` announces and the title and the result
    (``"stand_in": True``) name: it is not the paper's figure.
    """
    try:
        ds = load_dataset("vowel", data_dir)
        stand_in = False
    except FileNotFoundError as exc:
        ds = load_dataset("digits")
        stand_in = True
        log(
            f"Fig. 3: {exc} Drawing the regularisation path on scikit-learn's digits "
            "instead: a stand-in, not the paper's Fig. 3 (vowel)."
        )
    alphas = np.logspace(-6, 2, 17) if alphas is None else np.asarray(alphas)
    split = make_split(ds, 0, Protocol())
    K = split.classes.size
    code = sparse_random(K, n_candidates=ecoc_candidates, random_state=0)
    Q_train, Q_test, _ = fit_tuned_binaries("linsvm", split, code, Protocol())
    result = regularization_path(
        Q_train,
        split.y_train,
        code,
        alphas,
        decoder=ConvexDecoder(solver=PAPER_SOLVER),
        Q_val=Q_test,
        y_val=split.y_test,
    )
    path = {
        "alphas": np.asarray(result.alphas),
        "weights": np.asarray(result.weights),
        "train_accuracy": np.asarray(result.train_accuracy),
        "val_accuracy": None if result.val_accuracy is None else np.asarray(result.val_accuracy),
        "n_iter": np.asarray(result.n_iter),
    }

    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7.5, 4.0))
    ax.plot(path["alphas"], path["weights"], lw=0.8)
    ax.set_xscale("log")
    ax.set_xlabel("regularisation parameter lambda (alpha)")
    ax.set_ylabel(f"aggregation weights w ({code.shape[1]} classifiers)")
    acc = ax.twinx()
    acc.plot(path["alphas"], path["train_accuracy"], "rs", ms=5, label="training accuracy")
    if path["val_accuracy"] is not None:
        acc.plot(path["alphas"], path["val_accuracy"], "b^", ms=4, label="test accuracy")
    acc.set_ylabel("accuracy")
    acc.set_ylim(0, 1.02)
    acc.legend(loc="lower left", fontsize=8)
    title = f"Fig. 3: regularisation path, {ds.name}, sparse ECOC (M={code.shape[1]})"
    if stand_in:
        title += "\na stand-in data set: the paper's Fig. 3 uses vowel"
    ax.set_title(title, fontsize=10 if stand_in else None)
    fig.tight_layout()
    target = Path(out_dir) / "fig3_regularization_path.png"
    _save(fig, target)
    plt.close(fig)
    return {"dataset": ds.name, "stand_in": stand_in, "path": path, "file": str(target)}


# ----------------------------------------------------------------------------- Fig. 4


def figure4(out_dir, random_state=0):
    """Interior point progress on the synthetic 3-class problem (section 5.2)."""
    Q, y, code = make_broken_classifier_outputs(random_state=random_state)
    dec = ConvexDecoder(solver=PAPER_SOLVER).fit(Q, y, code)
    L = stack_losses(*_cross_entropy(Q))
    weights = np.asarray(dec.history_["weights"])
    accuracy = np.array(
        [np.mean(np.argmin(discrepancies(L, side_weights(code, w)), axis=1) == y) for w in weights]
    )
    objective = np.asarray(dec.history_["objective"])
    loss_based = make_decoder("loss_based", MethodContext("broken3", "none", 3, 3)).fit(Q, y, code)

    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7.0, 3.8))
    iters = np.arange(objective.size)
    ax.plot(iters, objective, "k-o", ms=3, label="objective f0(w)")
    ax.set_xlabel("interior point iteration")
    ax.set_ylabel("objective")
    acc = ax.twinx()
    acc.plot(iters, accuracy, "rs", ms=5, label="training accuracy")
    acc.set_ylabel("training accuracy")
    acc.set_ylim(0.5, 1.0)
    ax.set_title("Fig. 4: primal-dual interior point, synthetic 3-class data")
    fig.legend(loc="center right", fontsize=8, bbox_to_anchor=(0.85, 0.5))
    fig.tight_layout()
    target = Path(out_dir) / "fig4_interior_point.png"
    _save(fig, target)
    plt.close(fig)
    return {
        "objective": objective,
        "accuracy": accuracy,
        "weights": dec.weights_,
        "loss_based_accuracy": float(np.mean(loss_based.predict(Q) == y)),
        "convex_accuracy": float(accuracy[-1]),
        "n_iter": dec.n_iter_,
        "file": str(target),
    }


def broken_classifier_study(n_draws=20):
    """Training accuracy of loss-based and convex decoding over ``n_draws`` draws of
    the synthetic 3-class data: mean and std, and the mean learned weights."""
    lb, cv, weights = [], [], []
    ctx = MethodContext("broken3", "none", 3, 3)
    for seed in range(n_draws):
        Q, y, code = make_broken_classifier_outputs(random_state=seed)
        dec = ConvexDecoder(solver=PAPER_SOLVER).fit(Q, y, code)
        cv.append(np.mean(dec.predict(Q) == y))
        weights.append(dec.weights_)
        lb.append(np.mean(make_decoder("loss_based", ctx).fit(Q, y, code).predict(Q) == y))
    return {
        "n_draws": n_draws,
        "loss_based": (float(np.mean(lb)), float(np.std(lb))),
        "convex": (float(np.mean(cv)), float(np.std(cv))),
        "weights": np.mean(weights, axis=0),
    }


def _cross_entropy(Q):
    from ..losses import binary_losses

    return binary_losses(Q, "cross_entropy", "proba")


# ----------------------------------------------------------------------------- Fig. 5

FIG5_CODES = ("ovo", "ovr", "ecoc")


def _predict_chunks(decoder, estimators, X, chunk=5000):
    """Decode in row blocks so the test outputs of many classifiers fit in memory."""
    preds = []
    for start in range(0, X.shape[0], chunk):
        Q = predict_binaries(estimators, X[start : start + chunk], "proba")
        preds.append(decoder.predict(Q))
    return np.concatenate(preds)


def _gaussian_run(K, run, n_train, n_test, ecoc_candidates):
    """Test accuracies of loss-based and convex decoding for every code, one data set."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.preprocessing import StandardScaler

    X_tr, y_tr, X_te, y_te = make_gaussian_classes(
        K, n_train, n_test, random_state=np.random.SeedSequence([K, run]).generate_state(1)[0]
    )
    scaler = StandardScaler().fit(X_tr)
    X_tr, X_te = scaler.transform(X_tr), scaler.transform(X_te)
    base = LogisticRegression(solver="liblinear", C=1.0)
    out = {}
    for code_name in FIG5_CODES:
        if code_name == "ecoc" and K >= 8:
            code = sparse_random(K, n_candidates=ecoc_candidates, random_state=run)
        else:
            code = make_code(code_name, K)
        estimators = fit_binaries(base, X_tr, y_tr, code)
        Q_tr = predict_binaries(estimators, X_tr, "proba")
        ctx = MethodContext(f"gauss{K}", "logreg", K, code.shape[1])
        for method in ("loss_based", "convex"):
            dec = make_decoder(method, ctx).fit(Q_tr, y_tr, code)
            out[f"{code_name}/{method}"] = float(
                np.mean(_predict_chunks(dec, estimators, X_te) == y_te)
            )
    return out


def _gaussian_task(K, run, n_train, n_test, ecoc_candidates, cache_dir):
    path = Path(cache_dir) / f"K{K:02d}_run{run:02d}.json"
    cached = read_cached(path, json_dict)
    if cached is not None:
        return K, run, cached
    start = time.perf_counter()
    result = _gaussian_run(K, run, n_train, n_test, ecoc_candidates)
    result["seconds"] = time.perf_counter() - start
    write_json(path, result)
    return K, run, result


def figure5(
    out_dir,
    ks=(3, 5, 10, 15, 20, 30, 40, 50),
    runs=20,
    n_train=300,
    n_test=1000,
    ecoc_candidates=2000,
    jobs=1,
    progress=True,
):
    """Accuracy versus number of classes, 2-D Gaussians (section 5.2, Fig. 5)."""
    from joblib import Parallel, delayed

    tqdm = require("tqdm.auto", _FEATURE, "experiments").tqdm
    settings = f"fig5_tr{n_train}_te{n_test}_c{ecoc_candidates}_v{__version__}"
    cache_dir = Path(out_dir) / "cache" / settings
    todo = [(K, r) for K in ks for r in range(runs)]
    todo.sort(key=lambda kr: -kr[0])
    results = {}
    bar = tqdm(total=len(todo), desc="fig5", unit="run", disable=not progress)
    for K, run, res in Parallel(n_jobs=jobs, return_as="generator_unordered")(
        delayed(_gaussian_task)(K, r, n_train, n_test, ecoc_candidates, cache_dir) for K, r in todo
    ):
        results[(K, run)] = res
        bar.update(1)
    bar.close()
    keys = [f"{c}/{m}" for c in FIG5_CODES for m in ("loss_based", "convex")]
    mean = {
        k: np.array([np.mean([results[(K, r)][k] for r in range(runs)]) for K in ks]) for k in keys
    }
    std = {
        k: np.array([np.std([results[(K, r)][k] for r in range(runs)]) for K in ks]) for k in keys
    }

    plt = _pyplot()
    fig, axes = plt.subplots(2, 2, figsize=(10, 7))
    X_tr, y_tr, _, _ = make_gaussian_classes(11, n_train, 0, random_state=0)
    axes[0, 0].scatter(X_tr[:, 0], X_tr[:, 1], c=y_tr, s=3, cmap="tab20")
    axes[0, 0].set_title("(a) example, K = 11")
    titles = {"ovo": "(b) APs", "ovr": "(c) OVA", "ecoc": "(d) ECOC"}
    for ax, code_name in zip([axes[0, 1], axes[1, 0], axes[1, 1]], FIG5_CODES):
        for method, style in (("loss_based", "b--o"), ("convex", "r-s")):
            k = f"{code_name}/{method}"
            label = "loss-based" if method == "loss_based" else "convex (ours)"
            ax.errorbar(ks, mean[k], yerr=std[k], fmt=style, ms=4, capsize=2, label=label)
        ax.set_title(titles[code_name])
        ax.set_xlabel("number of classes K")
        ax.set_ylabel("test accuracy")
        ax.legend(fontsize=8)
    fig.suptitle(f"Fig. 5: 2-D Gaussian classes, mean (std) over {runs} runs")
    fig.tight_layout()
    target = Path(out_dir) / "fig5_accuracy_vs_classes.png"
    _save(fig, target)
    plt.close(fig)
    return {"ks": list(ks), "runs": runs, "mean": mean, "std": std, "file": str(target)}


# ----------------------------------------------------------------------------- all


def make_figures(
    out_dir, data_dir=None, quick=False, ks=None, runs=None, jobs=1, progress=True, log=print
):
    """Draw the three figures into ``out_dir``; return a markdown summary.

    ``quick``: Fig. 5 with K in 3, 5, 10, 20, 2 runs and 300 test points per class,
    and 2,000 random ECOC candidates for Fig. 3. ``ks`` / ``runs`` override Fig. 5's.
    """
    _pyplot()  # a missing dependency fails now, not after the first study
    require("tqdm", _FEATURE, "experiments")
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    lines = []
    f4 = figure4(out_dir)
    log(f"wrote {f4['file']}")
    lines.append(
        "- Fig. 4 (synthetic 3-class): training accuracy loss-based "
        f"{f4['loss_based_accuracy']:.3f} "
        f"(paper 0.780), convex {f4['convex_accuracy']:.3f} (paper 0.940) after {f4['n_iter']} "
        f"iterations; weights {np.array2string(f4['weights'], precision=4)} "
        "(paper [8.3146 8.2828 0.0161])."
    )
    draws = broken_classifier_study(n_draws=20)
    lines.append(
        f"- Synthetic 3-class over {draws['n_draws']} draws: training accuracy loss-based "
        f"{draws['loss_based'][0]:.3f} ({draws['loss_based'][1]:.3f}), convex "
        f"{draws['convex'][0]:.3f} ({draws['convex'][1]:.3f}); mean weights "
        f"{np.array2string(draws['weights'], precision=3)}."
    )
    f3 = figure3(out_dir, data_dir, ecoc_candidates=2000 if quick else 20000, log=log)
    log(f"wrote {f3['file']}")
    p = f3["path"]
    best = int(np.argmax(p["train_accuracy"]))
    dataset = f3["dataset"]
    if f3["stand_in"]:
        dataset += " -- a stand-in: vowel.csv.gz was not found, the paper's Fig. 3 uses vowel"
    lines.append(
        f"- Fig. 3 ({dataset}, sparse ECOC, M={p['weights'].shape[1]}): training accuracy "
        f"{p['train_accuracy'][0]:.3f} at lambda={p['alphas'][0]:.0e}, "
        f"{p['train_accuracy'][-1]:.3f} at lambda={p['alphas'][-1]:.0e}; best "
        f"{p['train_accuracy'][best]:.3f} at lambda={p['alphas'][best]:.0e}."
    )
    f5_args = {"ks": (3, 5, 10, 20), "runs": 2, "n_test": 300} if quick else {}
    if ks is not None:
        f5_args["ks"] = tuple(ks)
    if runs is not None:
        f5_args["runs"] = runs
    f5 = figure5(out_dir, jobs=jobs, progress=progress, **f5_args)
    log(f"wrote {f5['file']}")
    for code_name in FIG5_CODES:
        lb, cv = f5["mean"][f"{code_name}/loss_based"], f5["mean"][f"{code_name}/convex"]
        pairs = ", ".join(f"K={k}: {a:.3f}/{b:.3f}" for k, a, b in zip(f5["ks"], lb, cv))
        lines.append(f"- Fig. 5 {code_name} (loss-based/convex test accuracy): {pairs}.")
    return "\n".join(lines) + "\n"
