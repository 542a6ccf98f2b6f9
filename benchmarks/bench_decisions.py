"""Decisions from one fitted model: conformal class sets, prior shift, cost-sensitive predictions.

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python benchmarks/bench_decisions.py \
        [--data-dir DIR] [--splits 3] [--out benchmarks/results/decisions.json]

The data sets and splits of ``bench_quality.py`` (the paper's sets of
``--data-dir``, subsampled, stratified, to ``--max-rows`` = 2,500 rows, and
scikit-learn's digits, wine and iris; stratified 80/20 splits, features
standardised on the training part). On every split one model is fitted: the
default ``ConvexAggregationClassifier`` (one-vs-one ``LogisticRegression``
binaries, ``cv=5``, the fold binaries kept as an ensemble). Every decision
below comes from that fit, through :class:`sklearn.frozen.FrozenEstimator`:

* **Conformal sets** at error rate 0.1 (``ConformalClassifier``, cross-conformal
  from the out-of-fold outputs), LAC and APS scores, marginal and (LAC)
  class-conditional: coverage and mean set size on the test part. Beside them,
  MAPIE's ``SplitConformalClassifier`` (prefit) on the same probabilities: the
  out-of-fold probabilities as its calibration set, ``predict_proba`` on the
  test part (APS: MAPIE's randomised calibration scores with its default
  ``include_last_label=True`` at prediction; convexagg randomises both, seeded
  by the split, and its APS coverage is also given averaged over 20 draws of
  the uniforms: unseeded, two runs gave glass 0.888 and 0.901). The
  calibration rows, the coverage of split conformal with as many (mean, and sd
  given the calibration set: the noise a data set of that size allows), and on
  how many test rows convexagg's split rule on MAPIE's inputs gives other LAC
  sets than MAPIE (the quantile convention).
* **Prior shift**: each test part resampled (with replacement, as many rows) to
  class priors drawn from Dirichlet(1), ``--draws`` draws per split. Log-loss of
  the unadapted probabilities, of the EM-adapted ones (``em_priors`` +
  ``shift_priors`` from the training priors of ``PriorShiftClassifier``'s
  default, the mean out-of-fold posterior: the computation of
  ``PriorShiftClassifier(priors="em")``), of the same from the class
  frequencies (``training_priors="frequencies"``), of the same with
  ``smoothing=0`` (the maximum-likelihood EM of Saerens et al.), of QuaPy's
  ``EMQ.EM`` on the same probabilities (from the class frequencies, as QuaPy
  does; its default ``epsilon=1e-4``), and of the shift to the true priors.
* **Costs**: the cost matrix ``C = 1 - I`` with the row of the last class (in
  sorted order) set to 10 off the diagonal -- missing the last class costs 10,
  any other error 1. Mean realised cost (``convexagg.metrics.expected_cost_score``)
  of ``predict`` and of ``CostSensitiveClassifier``, their paired difference
  with its standard error over the splits, and the test rows decided differently.
* **Time**: the fit; the one added step of the fit (the decoder's pass over
  the out-of-fold outputs, which gives ``oof_proba_`` where no penalty is chosen;
  where one is, the choice's fits decode their held-out folds instead, at about
  the same cost); and on the test part ``predict_proba`` and each decision's
  prediction.

Prints Markdown tables (per data set: mean over splits; the targets) and writes the
per-split records to ``--out`` (JSON).
"""

from __future__ import annotations

import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from lib import common as C  # noqa: E402
from lib.ten_sets import BUNDLED, PAPER_SETS, load, split  # noqa: E402

ERROR_RATE = 0.1
APS_SEEDS = 20  # draws of APS's uniforms per split, for its coverage averaged over them


def _clock(f, *args, **kwargs):
    t = time.perf_counter()
    out = f(*args, **kwargs)
    return out, time.perf_counter() - t


def cost_matrix(n_classes):
    """Missing the last class costs 10, every other error 1."""
    C_ = 1.0 - np.eye(n_classes)
    C_[-1, :-1] = 10.0
    return C_


class _Probabilities:
    """A fitted 'classifier' whose input is its probabilities (MAPIE on given ones)."""

    _estimator_type = "classifier"

    def __init__(self, classes):
        self.classes_ = np.arange(len(classes))
        self.n_features_in_ = len(classes)

    def fit(self, X, y):
        return self

    def predict_proba(self, X):
        return np.asarray(X)

    def predict(self, X):
        return np.argmax(X, axis=1)

    def __sklearn_is_fitted__(self):
        return True

    def __sklearn_tags__(self):
        from sklearn.utils import ClassifierTags, Tags, TargetTags

        return Tags(
            estimator_type="classifier",
            target_tags=TargetTags(required=True),
            classifier_tags=ClassifierTags(),
        )


def mapie_sets(P_cal, y_cal, P_test, score, seed):
    from mapie.classification import SplitConformalClassifier

    model = _Probabilities(range(P_cal.shape[1]))
    mapie = SplitConformalClassifier(
        model,
        confidence_level=1 - ERROR_RATE,
        conformity_score=score,
        prefit=True,
        random_state=seed,
    ).conformalize(P_cal, y_cal)
    return mapie.predict_set(P_test)[1][:, :, 0]


def log_loss(y, P):
    P = np.clip(P, 1e-15, 1)
    return float(-np.mean(np.log(P[np.arange(len(y)), y])))


def one_split(X, y, rep, draws):
    from quapy.method.aggregative import EMQ
    from sklearn.frozen import FrozenEstimator
    from sklearn.linear_model import LogisticRegression

    from convexagg import ConvexAggregationClassifier
    from convexagg.binary import predict_binaries
    from convexagg.decision import (
        ConformalClassifier,
        CostSensitiveClassifier,
        PriorShiftClassifier,
        class_scores,
        conformal_pvalues,
        em_priors,
        shift_priors,
    )
    from convexagg.metrics import expected_cost_score

    X_tr, y_tr, X_te, y_te = split(X, y, rep)
    clf, t_fit = _clock(
        ConvexAggregationClassifier(LogisticRegression(max_iter=1000), random_state=rep).fit,
        X_tr,
        y_tr,
    )
    classes = clf.classes_
    K = len(classes)
    yi_tr, yi_te = np.searchsorted(classes, y_tr), np.searchsorted(classes, y_te)
    # the fit's one added step: the decoder on the out-of-fold outputs (recomputed here)
    rows = clf.oof_fold_ >= 0
    Q_oof = np.zeros((len(y_tr), clf.code_matrix_.shape[1]))
    for k, member in enumerate(clf.estimators_):
        Q_oof[clf.oof_fold_ == k] = predict_binaries(
            member, X_tr[clf.oof_fold_ == k], clf.binary_output_
        )
    _, t_oof = _clock(clf.decoder_.predict_proba, Q_oof[rows])
    # each fold member's error on its held-out fold (the calibration rows) and on the
    # test part: exchangeable, so equal in expectation; a gap moves the coverage
    err_oof, err_test = [], []
    for k, member in enumerate(clf.estimators_):
        fold = clf.oof_fold_ == k
        err_oof.append(np.mean(clf.oof_proba_[fold].argmax(axis=1) != yi_tr[fold]))
        P_k = clf.decoder_.predict_proba(predict_binaries(member, X_te, clf.binary_output_))
        err_test.append(np.mean(P_k.argmax(axis=1) != yi_te))
    P_te, t_proba = _clock(clf.predict_proba, X_te)
    rec = {
        "fit_s": t_fit,
        "oof_pass_s": t_oof,
        "predict_proba_s": t_proba,
        "n_test": len(y_te),
        "member_error_oof": float(np.mean(err_oof)),
        "member_error_test": float(np.mean(err_test)),
    }

    frozen = FrozenEstimator(clf)
    for name, score, mondrian in [
        ("lac", "lac", False),
        ("aps", "aps", False),
        ("lac_mondrian", "lac", True),
    ]:
        try:
            conformal = ConformalClassifier(
                frozen,
                error_rate=ERROR_RATE,
                conformity_score=score,
                class_conditional=mondrian,
                random_state=rep,
            ).fit(X_tr, y_tr)
        except ValueError:  # Mondrian: a class with too few training rows for 0.1
            for key in ("coverage", "size", "worst_class_coverage", "s"):
                rec[f"{name}_{key}"] = float("nan")
            continue
        sets, t = _clock(conformal.predict_set, X_te)
        hit = sets[np.arange(len(y_te)), yi_te]
        rec[f"{name}_coverage"] = float(hit.mean())
        rec[f"{name}_size"] = float(sets.sum(axis=1).mean())
        rec[f"{name}_worst_class_coverage"] = float(min(hit[yi_te == k].mean() for k in range(K)))
        rec[f"{name}_s"] = t
    # APS is randomised: its coverage over APS_SEEDS draws of the uniforms (same fit)
    hits = []
    for seed in range(APS_SEEDS):
        aps = ConformalClassifier(
            frozen, error_rate=ERROR_RATE, conformity_score="aps", random_state=1000 * rep + seed
        ).fit(X_tr, y_tr)
        hits.append(aps.predict_set(X_te)[np.arange(len(y_te)), yi_te].mean())
    rec["aps_coverage_seeds"] = [float(h) for h in hits]
    P_oof = clf.oof_proba_[rows]
    rec["n_calibration"] = int(rows.sum())
    for score in ("lac", "aps"):
        sets = mapie_sets(P_oof, yi_tr[rows], P_te, score, rep)
        rec[f"mapie_{score}_coverage"] = float(sets[np.arange(len(y_te)), yi_te].mean())
        rec[f"mapie_{score}_size"] = float(sets.sum(axis=1).mean())
    # the split rule of convexagg on MAPIE's inputs (out-of-fold calibration, the
    # ensemble's test probabilities): which sets differ from MAPIE's (LAC; APS
    # randomises differently) -- the quantile convention, apart from cross-conformal
    cal = class_scores(P_oof, "lac")[np.arange(rows.sum()), yi_tr[rows]]
    ours = (
        conformal_pvalues(class_scores(P_te, "lac")[np.newaxis], cal, np.zeros(len(cal), dtype=int))
        > ERROR_RATE
    )
    mapie = mapie_sets(P_oof, yi_tr[rows], P_te, "lac", rep)
    rec["split_rule_rows_differing_from_mapie"] = int(np.any(ours != mapie, axis=1).sum())

    # prior shift: Dirichlet(1) test priors
    rng = np.random.default_rng(1000 + rep)
    pi_tr = np.bincount(yi_tr, minlength=K) / len(yi_tr)  # the class frequencies
    # the default training priors (the mean out-of-fold posterior)
    pi_fit = PriorShiftClassifier(frozen).fit(X_tr, y_tr).training_priors_
    rec["oof_mean_minus_frequencies_l1"] = float(np.abs(pi_fit - pi_tr).sum())
    shift = []
    for _ in range(draws):
        target = rng.dirichlet(np.ones(K))
        counts = rng.multinomial(len(y_te), target)
        idx = np.concatenate(
            [rng.choice(np.flatnonzero(yi_te == k), size=c) for k, c in enumerate(counts) if c]
        )
        P, yy = P_te[idx], yi_te[idx]
        (q, n_iter), t_em = _clock(em_priors, P, pi_fit)
        adapted = shift_priors(P, pi_fit, q)
        from_freq = shift_priors(P, pi_tr, em_priors(P, pi_tr)[0])
        mle = shift_priors(P, pi_fit, em_priors(P, pi_fit, smoothing=0.0)[0])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            _, emq = EMQ.EM(pi_tr, P, epsilon=1e-4)
        shift.append(
            {
                "unadapted": log_loss(yy, P),
                "em": log_loss(yy, adapted),
                "em_frequencies": log_loss(yy, from_freq),
                "em_mle": log_loss(yy, mle),
                "emq": log_loss(yy, emq),
                "true_priors": log_loss(yy, shift_priors(P, pi_fit, target)),
                "true_priors_frequencies": log_loss(yy, shift_priors(P, pi_tr, target)),
                "shift_l1": float(np.abs(target - pi_tr).sum()),
                "n": len(yy),
                "prior_error_em": float(np.abs(q - np.bincount(yy, minlength=K) / len(yy)).sum()),
                "em_iter": n_iter,
                "em_s": t_em,
            }
        )
    rec["shift"] = shift

    # costs
    Cm = cost_matrix(K)
    costly = CostSensitiveClassifier(frozen, cost_matrix=Cm).fit(X_tr, y_tr)
    pred, t_cost = _clock(costly.predict, X_te)
    rec["cost_predict"] = expected_cost_score(
        y_te, clf.predict(X_te), cost_matrix=Cm, labels=classes
    )
    rec["cost_decision"] = expected_cost_score(y_te, pred, cost_matrix=Cm, labels=classes)
    rec["accuracy_predict"] = float(np.mean(clf.predict(X_te) == y_te))
    rec["accuracy_decision"] = float(np.mean(pred == y_te))
    rec["cost_s"] = t_cost
    rec["cost_rows_changed"] = int(np.sum(pred != clf.predict(X_te)))
    return rec


def _m(records, key):
    return float(np.mean([r[key] for r in records]))


def split_coverage(n):
    """Coverage of split conformal with ``n`` calibration rows (continuous scores):
    the mean ``ceil((n + 1)(1 - e)) / (n + 1)`` and the sd of the coverage given
    the calibration set, Beta(n + 1 - l, l) with ``l = floor((n + 1) e)``."""
    ell = int(np.floor((n + 1) * ERROR_RATE))
    a, b = n + 1 - ell, ell
    return a / (a + b), float(np.sqrt(a * b / ((a + b) ** 2 * (a + b + 1))))


def _sd(records, key):
    return float(np.std([r[key] for r in records], ddof=1)) if len(records) > 1 else float("nan")


def tables(results, splits, draws):
    lines = [
        f"### Conformal sets at error rate {ERROR_RATE} (cross-conformal, cv=5 out-of-fold; "
        "mean over the splits)",
        "",
        "| data set | splits | calibration rows | split conformal: coverage ± sd given the "
        "calibration set | LAC coverage (sd over splits) | LAC size | MAPIE LAC coverage "
        "| MAPIE LAC size | APS coverage (mean over 20 draws of its uniforms) | APS size "
        "| MAPIE APS coverage | MAPIE APS size | Mondrian LAC coverage (worst class) "
        "| Mondrian size | fold members' error: held-out fold / test part |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for name, recs in results.items():
        n_cal = int(np.median([r["n_calibration"] for r in recs]))
        mean, sd = split_coverage(n_cal)
        lines.append(
            f"| {name} | {len(recs)} | {n_cal} | {mean:.3f} ± {sd:.3f} "
            f"| {_m(recs, 'lac_coverage'):.3f} ({_sd(recs, 'lac_coverage'):.3f}) "
            f"| {_m(recs, 'lac_size'):.2f} "
            f"| {_m(recs, 'mapie_lac_coverage'):.3f} | {_m(recs, 'mapie_lac_size'):.2f} "
            f"| {_m(recs, 'aps_coverage'):.3f} "
            f"({np.mean([r['aps_coverage_seeds'] for r in recs]):.3f}) "
            f"| {_m(recs, 'aps_size'):.2f} | {_m(recs, 'mapie_aps_coverage'):.3f} "
            f"| {_m(recs, 'mapie_aps_size'):.2f} | {_m(recs, 'lac_mondrian_coverage'):.3f} "
            f"({_m(recs, 'lac_mondrian_worst_class_coverage'):.3f}) "
            f"| {_m(recs, 'lac_mondrian_size'):.2f} "
            f"| {_m(recs, 'member_error_oof'):.3f} / {_m(recs, 'member_error_test'):.3f} |"
        )
    lines += [
        "",
        f"### Prior shift: Dirichlet(1) test priors, {draws} draws per split (the first "
        f"{splits} splits); log-loss "
        "(mean ± sd over draws and splits)",
        "",
        "| data set | unadapted | EM (default: from the mean out-of-fold posterior, "
        "smoothing=1) | EM from the class frequencies | EM, smoothing=0 (the MLE) "
        "| QuaPy EMQ (from the class frequencies) | true priors | true priors, from the class "
        "frequencies | better than unadapted: EM / EM from the frequencies / EMQ / true "
        "priors | L1 of mean out-of-fold posterior - class frequencies "
        "| L1 error of the EM priors | EM iterations |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for name, recs in results.items():
        d = [s for r in recs for s in r["shift"]]

        def ms(key, d=d):
            v = np.array([s[key] for s in d])
            return f"{v.mean():.3f} ± {v.std():.3f}"

        wins = "/".join(
            f"{np.mean([s[k] < s['unadapted'] for s in d]):.0%}"
            for k in ("em", "em_frequencies", "emq", "true_priors")
        )
        lines.append(
            f"| {name} | {ms('unadapted')} | {ms('em')} | {ms('em_frequencies')} "
            f"| {ms('em_mle')} | {ms('emq')} | {ms('true_priors')} "
            f"| {ms('true_priors_frequencies')} | {wins} "
            f"| {_m(recs[:splits], 'oof_mean_minus_frequencies_l1'):.3f} "
            f"| {np.mean([s['prior_error_em'] for s in d]):.3f} "
            f"| {np.median([s['em_iter'] for s in d]):.0f} |"
        )
    lines += [
        "",
        "### Costs: missing the last class costs 10, any other error 1 (mean realised cost "
        "per test row)",
        "",
        "| data set | last class | predict: cost | decision: cost | decision - predict "
        "(± se over splits) | test rows decided differently (per split) "
        "| predict: accuracy | decision: accuracy |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name, recs in results.items():
        diff = np.array([r["cost_decision"] - r["cost_predict"] for r in recs])
        se = diff.std(ddof=1) / np.sqrt(len(diff)) if len(diff) > 1 else float("nan")
        lines.append(
            f"| {name} | {recs[0]['last_class']} | {_m(recs, 'cost_predict'):.4f} "
            f"| {_m(recs, 'cost_decision'):.4f} | {diff.mean():+.4f} ± {se:.4f} "
            f"| {_m(recs, 'cost_rows_changed'):.1f} of {recs[0]['n_test']} "
            f"| {_m(recs, 'accuracy_predict'):.3f} | {_m(recs, 'accuracy_decision'):.3f} |"
        )
    lines += [
        "",
        "### Time (seconds, mean over splits; one core)",
        "",
        "| data set | fit | of which oof_proba_ (decoder pass) | predict_proba (test) "
        "| cost decision | EM priors | conformal sets (LAC) |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, recs in results.items():
        em = np.mean([s["em_s"] for r in recs for s in r["shift"]])
        lines.append(
            f"| {name} | {_m(recs, 'fit_s'):.2f} | {_m(recs, 'oof_pass_s'):.4f} "
            f"| {_m(recs, 'predict_proba_s'):.3f} | {_m(recs, 'cost_s'):.3f} | {em:.4f} "
            f"| {_m(recs, 'lac_s'):.3f} |"
        )
    return "\n".join(lines)


def targets(results):
    cov = {n: _m(r, "lac_coverage") for n, r in results.items()}
    cov_aps = {n: _m(r, "aps_coverage") for n, r in results.items()}
    cov_aps_seeds = {n: np.mean([x["aps_coverage_seeds"] for x in r]) for n, r in results.items()}
    in_range_seeds = [n for n in cov_aps_seeds if 0.89 <= cov_aps_seeds[n] <= 0.92]
    in_range = [n for n in cov if 0.89 <= cov[n] <= 0.92]
    in_range_aps = [n for n in cov_aps if 0.89 <= cov_aps[n] <= 0.92]
    smaller = [n for n, r in results.items() if _m(r, "lac_size") <= _m(r, "mapie_lac_size")]
    smaller_aps = [n for n, r in results.items() if _m(r, "aps_size") <= _m(r, "mapie_aps_size")]
    draws = [s for r in results.values() for rec in r for s in rec["shift"]]
    wins = np.mean([s["em"] < s["unadapted"] for s in draws])
    big = [s for s in draws if s["shift_l1"] >= 0.5]
    small = [s for s in draws if s["shift_l1"] < 0.5]

    def rate(ds, key):
        return f"{np.mean([s[key] < s['unadapted'] for s in ds]):.0%}" if ds else "-"

    not_worse = []
    for n, r in results.items():
        d = [s for rec in r for s in rec["shift"]]
        em = np.array([s["em"] for s in d])
        emq = np.array([s["emq"] for s in d])
        if em.mean() <= emq.mean() + em.std():
            not_worse.append(n)
    cheaper = [n for n, r in results.items() if _m(r, "cost_decision") < _m(r, "cost_predict")]
    within = []  # dearer, but within two standard errors of the paired difference
    for n, r in results.items():
        diff = np.array([x["cost_decision"] - x["cost_predict"] for x in r])
        if n not in cheaper and len(diff) > 1:
            if diff.mean() <= 2 * diff.std(ddof=1) / np.sqrt(len(diff)):
                within.append(n)
    differing = sum(x["split_rule_rows_differing_from_mapie"] for r in results.values() for x in r)
    n_rows = sum(x["n_test"] for r in results.values() for x in r)
    ties = [n for n, r in results.items() if _m(r, "cost_decision") == _m(r, "cost_predict")]
    N = len(results)

    def verdict(ok):
        return "met" if ok else "missed"

    def outside(coverage, in_range):
        """The data sets outside the range, with their coverage ("none" if none)."""
        return ", ".join(f"{n} {c:.3f}" for n, c in coverage.items() if n not in in_range) or "none"

    return "\n".join(
        [
            f"- LAC coverage in [0.89, 0.92]: {len(in_range)}/{N} "
            f"({verdict(len(in_range) == N)}; outside: "
            f"{outside(cov, in_range)})",
            f"- APS coverage in [0.89, 0.92]: {len(in_range_aps)}/{N} "
            f"({verdict(len(in_range_aps) == N)}; outside: "
            f"{outside(cov_aps, in_range_aps)}"
            f"; averaged over {APS_SEEDS} draws of the uniforms: {len(in_range_seeds)}/{N}, "
            f"outside: {outside(cov_aps_seeds, in_range_seeds)})",
            f"- LAC set size <= MAPIE's on the same probabilities: {len(smaller)}/{N} "
            f"({verdict(len(smaller) == N)}); APS: {len(smaller_aps)}/{N} "
            f"({verdict(len(smaller_aps) == N)})",
            f"- the split rule of convexagg on MAPIE's inputs (LAC): sets differing from MAPIE's "
            f"on {differing} of {n_rows} test rows",
            f"- EM-adapted log-loss below unadapted: {wins:.0%} of {len(draws)} draws "
            f"({verdict(wins >= 0.9)}; the true priors: {rate(draws, 'true_priors')}; EM from "
            f"the class frequencies: {rate(draws, 'em_frequencies')}; QuaPy's EMQ: "
            f"{rate(draws, 'emq')}). Draws with an L1 shift of the priors >= 0.5: EM "
            f"{rate(big, 'em')}, true priors {rate(big, 'true_priors')} ({len(big)} draws); "
            f"< 0.5: EM {rate(small, 'em')}, true priors {rate(small, 'true_priors')} "
            f"({len(small)} draws)",
            f"- EM no worse than QuaPy's EMQ (within one sd): {len(not_worse)}/{N} "
            f"({verdict(len(not_worse) == N)})",
            f"- cost-sensitive decisions cheaper than predict: {len(cheaper)}/{N}, ties "
            f"{len(ties)} ({verdict(len(cheaper) + len(ties) == N and len(cheaper) > 0)}; "
            f"ties: {', '.join(ties) or 'none'}; dearer but within two standard errors of the "
            f"paired difference over splits: {', '.join(within) or 'none'})",
        ]
    )


def main():
    p = C.parser(__doc__.splitlines()[0])
    p.add_argument("--datasets", default=None, help="comma-separated (default: all available)")
    p.add_argument("--splits", type=int, default=3)
    p.add_argument(
        "--min-test-rows",
        type=int,
        default=1500,
        help="more splits (at most 30) for small data sets, until the test parts hold this "
        "many rows: coverage is a proportion",
    )
    p.add_argument("--draws", type=int, default=5, help="Dirichlet(1) test priors per split")
    p.add_argument("--max-rows", type=int, default=2500)
    args = p.parse_args()
    if args.quick:
        args.splits, args.max_rows, args.draws, args.min_test_rows = 1, 600, 2, 0
        args.datasets = args.datasets or "iris,wine"
    C.limit_blas(args)
    if args.datasets:
        datasets = args.datasets.split(",")
    else:
        found = [n for n in PAPER_SETS if (Path(args.data_dir) / f"{n}.csv.gz").exists()]
        datasets = found + list(BUNDLED)
    info = C.machine()
    t0 = time.perf_counter()
    results = {}
    for name in datasets:
        X, y = load(name, args.data_dir, args.max_rows)
        recs = []
        n_test = int(np.ceil(0.2 * len(y)))
        n_splits = min(30, max(args.splits, int(np.ceil(args.min_test_rows / n_test))))
        for rep in range(n_splits):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)
                rec = one_split(X, y, rep, args.draws if rep < args.splits else 0)
            rec["last_class"] = str(np.unique(y)[-1])
            recs.append(rec)
        results[name] = recs
        print(f"{name}: {time.perf_counter() - t0:.0f} s", file=sys.stderr, flush=True)
    text = "\n".join(
        [
            f"## Decisions from one fit: stratified 80/20 splits ({args.splits}, or more until "
            f"the test parts hold {args.min_test_rows} rows, at most 30), at most "
            f"{args.max_rows} rows per data set",
            "",
            C.header(info),
            "",
            f"run time: {time.perf_counter() - t0:.0f} s",
            "",
            "### The targets",
            "",
            targets(results),
            "",
            tables(results, args.splits, args.draws),
        ]
    )
    C.finish(args, info, results, text)


if __name__ == "__main__":
    main()
