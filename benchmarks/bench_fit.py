"""Targets 1 and 3: fitting the aggregation weights on letter / one-vs-one, side by side.

    python benchmarks/bench_fit.py [--data-dir DIR] [--repeat 7] [--out results/fit.json]

In one run, on the same binary outputs ``Q`` (18,000 x 325) and ``alpha = 1e-4``:

* ``ConvexDecoder.fit`` in each solver setting, at the paper's tolerance
  (``tol=1e-4``) and at ``tol=1e-6`` (which ends within 1e-6, relative, of the
  optimum that L-BFGS-B reaches at 1e-10 -- the script checks and prints it);
* scipy's L-BFGS-B handed a straightforward numpy objective and gradient (the
  formulas of DESIGN.md: ``rho = (L_pos * w) @ Pos.T + (L_neg * w) @ Neg.T`` ...),
  at scipy's default tolerances, at 1e-10 (the reference optimum ``f*``), and
  the time at which it first reaches the objective value of our fit; its times
  are given for the optimiser alone and from ``Q`` (plus the setup: the losses
  and indicator matrices), since ``ConvexDecoder.fit`` starts from ``Q`` too;
* CVXPY with Clarabel on the log-sum-exp model, on subsamples of the rows
  (``--cvxpy-rows``; each solve runs in a child process stopped after
  ``--cvxpy-timeout`` seconds), with our fit timed on the same rows;
* the peak memory each fit adds (tracemalloc: numpy reports its allocations to
  it) against ``Q.nbytes`` and against an ``n x K x M`` float64 tensor.
"""

from __future__ import annotations

import multiprocessing as mp
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C  # noqa: E402

from convexagg import ConvexDecoder  # noqa: E402
from convexagg.losses import binary_losses  # noqa: E402

# (name, ConvexDecoder settings); the first is the library's default (the paper's algorithm)
CONFIGS = [
    ("paper (default): PCG, float64", {}),
    ("paper, uniform start", {"init": "uniform"}),
    ("paper, Cholesky", {"newton": "cholesky"}),
    ("mehrotra, PCG", {"solver": "mehrotra"}),
    ("mehrotra, Cholesky", {"solver": "mehrotra", "newton": "cholesky"}),
    (
        "mehrotra, Cholesky, float32",
        {"solver": "mehrotra", "newton": "cholesky", "dtype": "float32"},
    ),
    (
        "mehrotra, Cholesky, float32, uniform start",
        {"solver": "mehrotra", "newton": "cholesky", "dtype": "float32", "init": "uniform"},
    ),
    (
        "mehrotra, Cholesky, float32, subsample start",
        {"solver": "mehrotra", "newton": "cholesky", "dtype": "float32", "init": "subsample"},
    ),
]
FASTEST = CONFIGS[-1]


def straightforward_objective(Q, y, code, alpha):
    """What a user would write for scipy: value and gradient from DESIGN.md's formulas."""
    L_pos, L_neg = binary_losses(Q)
    Pos = (code == 1).astype(np.float64)  # (K, M)
    Neg = (code == -1).astype(np.float64)
    n, K = Q.shape[0], code.shape[0]
    Y = np.eye(K)[y]

    def fun(w):
        rho = (L_pos * w) @ Pos.T + (L_neg * w) @ Neg.T
        m = (-rho).max(axis=1, keepdims=True)
        lse = m[:, 0] + np.log(np.exp(-rho - m).sum(axis=1))
        value = np.mean(np.sum(Y * rho, axis=1) + lse) + 0.5 * alpha * (w @ w)
        G = Y - np.exp(-rho - lse[:, None])
        grad = (np.sum(L_pos * (G @ Pos), axis=0) + np.sum(L_neg * (G @ Neg), axis=0)) / n
        return value, grad + alpha * w

    return fun


def run_lbfgsb(fun, M, options, trace=None):
    """Returns (result, wall s, CPU s); ``trace`` collects (wall s, f) per evaluation."""
    from scipy.optimize import minimize

    c0, t0 = time.process_time(), time.perf_counter()

    def wrapped(w):
        out = fun(w)
        if trace is not None:
            trace.append((time.perf_counter() - t0, out[0], time.process_time() - c0))
        return out

    res = minimize(
        wrapped,
        np.full(M, 1.0 / M),
        jac=True,
        method="L-BFGS-B",
        bounds=[(0.0, None)] * M,
        options=options,
    )
    return res, time.perf_counter() - t0, time.process_time() - c0


def _cvxpy_child(Q, y, code, alpha, conn):
    """Solve the model with CVXPY + Clarabel; send ("ok", wall s, solver s, value, w) or
    ("failed", wall s, message)."""
    import cvxpy as cp
    import scipy.sparse as sp

    t0 = time.perf_counter()
    try:
        L_pos, L_neg = binary_losses(Q)
        n, M = Q.shape
        K = code.shape[0]
        # rho[:, k] = A_k w with A_k = L_pos * [code[k] == 1] + L_neg * [code[k] == -1]
        blocks = [sp.csr_matrix(L_pos * (code[k] == 1) + L_neg * (code[k] == -1)) for k in range(K)]
        B = sp.vstack(blocks).tocsr()  # (K n, M), row k n + i = sample i, class k
        c = np.asarray(sum(blocks[k][y == k].sum(axis=0) for k in range(K))).ravel() / n
        w = cp.Variable(M, nonneg=True)
        rho = cp.reshape(B @ w, (n, K), order="F")
        objective = (
            c @ w + cp.sum(cp.log_sum_exp(-rho, axis=1)) / n + 0.5 * alpha * cp.sum_squares(w)
        )
        prob = cp.Problem(cp.Minimize(objective))
        prob.solve(solver=cp.CLARABEL)
        conn.send(
            ("ok", time.perf_counter() - t0, prob.solver_stats.solve_time, prob.value, w.value)
        )
    except Exception as exc:  # a solver failure is a result to report, not a crash
        conn.send(("failed", time.perf_counter() - t0, f"{type(exc).__name__}: {exc}"))
    conn.close()


def run_cvxpy(Q, y, code, alpha, timeout):
    """The child's message, or ("timeout", timeout, ...) when it ran past ``timeout`` s."""
    ctx = mp.get_context("spawn")
    parent, child = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_cvxpy_child, args=(Q, y, code, alpha, child))
    proc.start()
    child.close()  # so that a child dying without a message reads as EOF here
    try:
        result = parent.recv() if parent.poll(timeout) else ("timeout", timeout, "")
    except EOFError:
        result = ("failed", None, f"child exited with code {proc.exitcode}")
    proc.join(5)
    if proc.is_alive():
        proc.kill()  # the child this function started
        proc.join()
    return result


def fit_seconds(Q, y, code, settings, tol, repeat):
    dec = ConvexDecoder(alpha=C.ALPHA, tol=tol, **settings)
    times = C.timed(lambda: dec.fit(Q, y, code), repeat)
    return C.summary(times), dec


def main():
    p = C.parser(__doc__.splitlines()[0])
    p.add_argument("--cvxpy-rows", default="250,500,1000,2000", help="subsample sizes for CVXPY")
    p.add_argument("--cvxpy-timeout", type=float, default=600.0, help="seconds per CVXPY solve")
    p.add_argument("--lbfgsb-repeat", type=int, default=3)
    p.add_argument(
        "--cvxpy-continue",
        action="store_true",
        help="try the larger subsamples after a CVXPY failure or timeout",
    )
    args = p.parse_args()
    if args.quick:
        args.repeat, args.lbfgsb_repeat, args.cvxpy_rows = 1, 1, "200"
    C.limit_blas(args)
    info = C.machine()
    data = C.letter_workload(args)
    Q, y, code = data["Q"], data["y"], data["code"]
    if args.quick:  # plumbing only: a tenth of the rows
        Q, y = Q[::10], y[::10]
    n, M = Q.shape
    K = code.shape[0]
    results = {"n": n, "M": M, "K": K}
    fun = straightforward_objective(Q, y, code, C.ALPHA)

    # reference optimum: L-BFGS-B at 1e-10
    ref, _, _ = run_lbfgsb(
        fun, M, {"ftol": 1e-10, "gtol": 1e-10, "maxiter": 100000, "maxfun": 100000}
    )
    f_star = float(ref.fun)
    results["f_star"] = f_star

    def rel(f):
        return (f - f_star) / abs(f_star)

    # ours
    ours = []
    for name, settings in CONFIGS:
        for tol in (1e-4, 1e-6):
            t, dec = fit_seconds(Q, y, code, settings, tol, args.repeat)
            f = float(fun(dec.weights_)[0])

            def fit(s=settings, tol=tol):
                return ConvexDecoder(alpha=C.ALPHA, tol=tol, **s).fit(Q, y, code)

            peak, _ = C.peak_memory(fit)
            ours.append(
                {
                    "config": name,
                    "tol": tol,
                    "best": t["best"],
                    "median": t["median"],
                    "cpu": t["cpu_best"],
                    "n_iter": dec.n_iter_,
                    "objective": f,
                    "rel_gap": rel(f),
                    "peak_bytes": peak,
                    "peak_over_Q": peak / Q.nbytes,
                }
            )
            print(
                f"  {name} tol={tol:g}: {t['best']:.3f} s, {dec.n_iter_} it, rel {rel(f):.1e}, "
                f"peak {peak / Q.nbytes:.2f} Q",
                flush=True,
            )
    results["ours"] = ours
    fast = next(r for r in ours if r["config"] == FASTEST[0] and r["tol"] == 1e-4)
    default = next(r for r in ours if r["config"] == CONFIGS[0][0] and r["tol"] == 1e-4)

    # L-BFGS-B, straightforward objective; the setup (losses from Q) timed apart
    setup = min(C.timed(lambda: straightforward_objective(Q, y, code, C.ALPHA), args.lbfgsb_repeat))
    lb = []
    for label, options in [
        ("scipy defaults", {}),
        ("ftol = gtol = 1e-10", {"ftol": 1e-10, "gtol": 1e-10}),
    ]:
        options = {"maxiter": 100000, "maxfun": 100000, **options}
        runs = []
        for _ in range(args.lbfgsb_repeat):
            trace = []
            res, secs, cpu = run_lbfgsb(fun, M, options, trace)
            runs.append((secs, res, trace, cpu))
        secs = [r[0] for r in runs]
        res, trace, cpu = runs[int(np.argmin(secs))][1:]
        lb.append(
            {
                "config": label,
                "best": min(secs),
                "median": float(np.median(secs)),
                "setup": setup,
                "from_q": min(secs) + setup,
                "cpu": min(r[3] for r in runs),
                "nfev": int(res.nfev),
                "objective": float(res.fun),
                "rel_gap": rel(res.fun),
            }
        )
        if label == "ftol = gtol = 1e-10":
            for target_name, target in [
                ("same objective as ours at tol=1e-4", fast["objective"]),
                ("within 1e-6 of f*", f_star * (1 + 1e-6)),
            ]:
                hit = next(
                    ((t, k + 1, c) for k, (t, f, c) in enumerate(trace) if f <= target), None
                )
                if hit:
                    lb.append(
                        {
                            "config": f"time to reach {target_name}",
                            "best": hit[0],
                            "setup": setup,
                            "from_q": hit[0] + setup,
                            "cpu": hit[2],
                            "nfev": hit[1],
                            "objective": None,
                            "rel_gap": None,
                        }
                    )
        print(f"  L-BFGS-B {label}: {min(secs):.2f} s", flush=True)
    results["lbfgsb"] = lb

    # CVXPY + Clarabel on subsamples, ours on the same rows
    cv = []
    for rows in [int(r) for r in args.cvxpy_rows.split(",") if r]:
        idx = np.arange(0, n, max(1, n // rows))[:rows]
        Qs, ys = Q[idx], y[idx]
        got = run_cvxpy(Qs, ys, code, C.ALPHA, args.cvxpy_timeout)
        sub_fun = straightforward_objective(Qs, ys, code, C.ALPHA)
        t_def, d_def = fit_seconds(Qs, ys, code, CONFIGS[0][1], 1e-4, args.repeat)
        t_fast, d_fast = fit_seconds(Qs, ys, code, FASTEST[1], 1e-4, args.repeat)
        t_tight, d_tight = fit_seconds(Qs, ys, code, FASTEST[1], 1e-6, args.repeat)
        row = {
            "rows": int(idx.size),
            "ours_default": t_def["best"],
            "ours_fast": t_fast["best"],
            "ours_tight": t_tight["best"],
            "ours_fast_objective": float(sub_fun(d_fast.weights_)[0]),
            "ours_tight_objective": float(sub_fun(d_tight.weights_)[0]),
        }
        if got[0] == "ok":
            _, wall, solver_s, value, w = got
            row.update(
                {
                    "cvxpy": wall,
                    "clarabel": solver_s,
                    "cvxpy_objective": float(sub_fun(np.maximum(w, 0))[0]),
                    "ratio_fast": wall / t_fast["best"],
                    "ratio_default": wall / t_def["best"],
                    "ratio_tight": wall / t_tight["best"],
                }
            )
        elif got[0] == "timeout":
            row["note"] = f"CVXPY did not finish in {args.cvxpy_timeout:.0f} s"
        else:
            after = "" if got[1] is None else f" after {got[1]:.0f} s"
            row["note"] = f"CVXPY failed{after}: {got[2][:120]}"
        cv.append(row)
        print(f"  CVXPY rows={idx.size}: {got[:2]}", flush=True)
        if got[0] == "timeout":  # larger subsamples would take longer still
            break
    results["cvxpy"] = cv

    # report
    lb_default = next(r for r in lb if r["config"] == "scipy defaults")
    lb_match = next((r for r in lb if r["config"].startswith("time to reach same")), None)
    text = [
        f"## Fit: letter one-vs-one, n = {n}, M = {M}, K = {K}, alpha = {C.ALPHA:g}",
        "",
        C.header(info),
        "",
        f"f* (L-BFGS-B at 1e-10) = {f_star:.12f}",
        "",
    ]
    text.append(
        C.table(
            ours,
            [
                ("config", "ConvexDecoder", None),
                ("tol", "tol", "{:g}"),
                ("best", "best s", "{:.3f}"),
                ("median", "median s", "{:.3f}"),
                ("cpu", "CPU s (best)", "{:.3f}"),
                ("n_iter", "iterations", None),
                ("rel_gap", "(f - f*) / f*", "{:.1e}"),
                ("peak_over_Q", "peak memory / Q.nbytes", "{:.2f}"),
            ],
        )
    )
    text += [
        "",
        C.table(
            lb,
            [
                ("config", "L-BFGS-B, straightforward numpy objective", None),
                ("best", "optimiser best s", "{:.3f}"),
                ("median", "optimiser median s", "{:.3f}"),
                ("setup", "setup s", "{:.3f}"),
                ("from_q", "from Q best s", "{:.3f}"),
                ("cpu", "CPU s (best)", "{:.3f}"),
                ("nfev", "evaluations", None),
                ("rel_gap", "(f - f*) / f*", "{:.1e}"),
            ],
        ),
    ]
    text += [
        "",
        C.table(
            cv,
            [
                ("rows", "rows", None),
                ("cvxpy", "CVXPY + Clarabel s", "{:.2f}"),
                ("clarabel", "of which Clarabel s", "{:.2f}"),
                ("ours_default", "ours default s", "{:.4f}"),
                ("ours_fast", "ours fastest s", "{:.4f}"),
                ("ours_tight", "ours fastest, tol 1e-6, s", "{:.4f}"),
                ("ratio_default", "CVXPY / default", "{:.0f}x"),
                ("ratio_fast", "CVXPY / fastest", "{:.0f}x"),
                ("ratio_tight", "CVXPY / fastest at 1e-6", "{:.0f}x"),
                ("cvxpy_objective", "CVXPY f", "{:.8f}"),
                ("ours_fast_objective", "ours f (tol 1e-4)", "{:.8f}"),
                ("ours_tight_objective", "ours f (tol 1e-6)", "{:.8f}"),
                ("note", "note", None),
            ],
        ),
    ]
    # from Q against from Q (our fit computes the losses too); optimiser alone beside
    ratios = {
        "lbfgsb_defaults_over_fastest": lb_default["from_q"] / fast["best"],
        "lbfgsb_defaults_over_default": lb_default["from_q"] / default["best"],
    }
    if lb_match:
        ratios["lbfgsb_same_objective_over_fastest"] = lb_match["from_q"] / fast["best"]
        ratios["lbfgsb_same_objective_over_default"] = lb_match["from_q"] / default["best"]
        ratios["lbfgsb_same_objective_optimiser_only_over_fastest"] = (
            lb_match["best"] / fast["best"]
        )
        ratios["cpu_lbfgsb_same_objective_over_fastest"] = lb_match["cpu"] / fast["cpu"]
    ratios["cpu_lbfgsb_defaults_over_fastest"] = lb_default["cpu"] / fast["cpu"]
    peak_nkm = n * K * M * 8
    text += [
        "",
        "ratios (best times): " + ", ".join(f"{k} = {v:.1f}x" for k, v in ratios.items()),
        f"an n x K x M float64 tensor would take {peak_nkm / 2**20:.0f} MiB; Q takes "
        f"{Q.nbytes / 2**20:.0f} MiB; the largest peak above is "
        f"{max(r['peak_bytes'] for r in ours) / 2**20:.0f} MiB",
    ]
    results["ratios"] = ratios
    C.finish(args, info, results, "\n".join(text))


if __name__ == "__main__":
    main()
