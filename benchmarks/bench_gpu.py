"""The convex aggregation fitted on a GPU through the array API, against the CPU.

    python benchmarks/bench_gpu.py [--rows 1000000,10000000] [--backend auto|torch|cupy]
        [--device cuda] [--repeat 3] [--cpu-rows 1000000,10000000]
        [--classifier-rows 100000,1000000] [--classifier-classes 10] [--features 64]
        [--classifier-cv 5] [--out FILE]

Synthetic one-vs-one outputs of 26 classes (``M = 325``,
``lib.workloads.synthetic_ovo_outputs``, seed 0, float32: the targets' setting) are
generated on the host and copied to the GPU (CuPy, or PyTorch with CUDA); then
``ConvexDecoder().fit`` runs under ``sklearn.config_context(array_api_dispatch=True)``
(the default solver: projected Newton; the losses, ``rho`` and the Hessian
products on the GPU, the Newton system on the host). The same fit on the NumPy
arrays (the CPU default, every core of the machine unless ``--blas-threads``)
gives the reference time and objective. Recorded: the device (name, memory,
driver/runtime versions), per size the GPU fit's best and median wall time (after
one untimed warm-up fit on 10,000 rows, so CUDA's start-up is not counted; the
copy of ``Q`` to the device is timed apart), the CPU fit's time, both objectives
and their relative difference, iterations, and the ratio CPU / GPU.

Then the classifier end to end (``--classifier-rows``; ``""`` skips it):
``ConvexAggregationClassifier(code="ovo")`` (logistic-regression binaries, one-vs-one,
``cv=--classifier-cv``) on Gaussian classes (``--classifier-classes`` of them in
``--features`` float32 features, seed 0) copied to the device: ``fit`` (the
binaries trained there, their out-of-fold outputs kept there, the decoder
fitted there) and ``predict_proba`` on the training rows, each timed once after
a warm-up fit on 2,000 rows, against the same two calls on the NumPy arrays.
Recorded per size: both times, their ratios, the largest difference of the
probabilities (float32 binaries fitted by L-BFGS on two devices: not equal to
rounding) and the share of rows whose predicted class agrees.

Without a GPU (no CuPy with a CUDA device, no CUDA build of PyTorch) it exits
with status 1 and says so; ``--device cpu`` runs the same code on PyTorch's CPU
tensors, for checking the script only (its times mean nothing about a GPU).
"""

from __future__ import annotations

import os

os.environ.setdefault("SCIPY_ARRAY_API", "1")  # scikit-learn's dispatch requires it

import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from lib import common as C  # noqa: E402
from lib import workloads as W  # noqa: E402

N_CLASSES = 26
TARGETS = {"gpu_1e7_s": 5.0, "speedup": 20.0, "objective_rel_diff": 1e-5}
NO_GPU = (
    "bench_gpu.py: no GPU found (neither CuPy with a CUDA device nor a CUDA build of "
    "PyTorch); nothing was measured. Run it on a machine with one, or pass --device cpu "
    "to check the script on PyTorch's CPU tensors."
)


def find_backend(backend, device):
    """``(name, to_device, info)`` for the first usable backend, or None."""
    if backend in ("auto", "cupy") and device != "cpu":
        try:
            import cupy

            if cupy.cuda.runtime.getDeviceCount() > 0:
                props = cupy.cuda.runtime.getDeviceProperties(0)
                info = {
                    "backend": f"cupy {cupy.__version__}",
                    "device": props["name"].decode(),
                    "device_memory_gib": props["totalGlobalMem"] / 2**30,
                    "cuda_runtime": cupy.cuda.runtime.runtimeGetVersion(),
                    "cuda_driver": cupy.cuda.runtime.driverGetVersion(),
                }
                return "cupy", cupy.asarray, info
        except Exception:  # noqa: BLE001 - no CuPy, or no CUDA device
            pass
    if backend in ("auto", "torch"):
        try:
            import torch
        except ImportError:
            return None
        if device == "cpu":
            info = {"backend": f"torch {torch.__version__}", "device": "cpu (plumbing only)"}
            return "torch", torch.asarray, info
        if torch.cuda.is_available():
            props = torch.cuda.get_device_properties(0)
            info = {
                "backend": f"torch {torch.__version__}",
                "device": props.name,
                "device_memory_gib": props.total_memory / 2**30,
                "cuda_runtime": torch.version.cuda,
            }
            return "torch", lambda a: torch.asarray(a, device=device), info
    return None


def synchronize(name, device):
    if name == "cupy":
        import cupy

        cupy.cuda.Device().synchronize()
    elif device != "cpu":
        import torch

        torch.cuda.synchronize()


def fit_device(Q, y, code, to_device, name, device, repeat):
    """The copy of ``Q`` to the device, then ``repeat`` timed fits there."""
    import sklearn

    from convexagg import ConvexDecoder

    t = time.perf_counter()
    Qd, yd = to_device(Q), to_device(y)
    synchronize(name, device)
    copy_s = time.perf_counter() - t
    times, dec = [], None
    with sklearn.config_context(array_api_dispatch=True):
        for _ in range(repeat):
            synchronize(name, device)
            t = time.perf_counter()
            dec = ConvexDecoder().fit(Qd, yd, code)  # attributes on the host: synchronised
            times.append(time.perf_counter() - t)
    del Qd, yd
    return copy_s, times, dec


def gaussian_classes(n, n_classes, n_features, seed=0):
    """Float32 features of ``n_classes`` Gaussian classes with unit covariance."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(0.0, 1.0, size=(n_classes, n_features)).astype(np.float32)
    y = rng.integers(0, n_classes, size=n)
    X = rng.standard_normal((n, n_features), dtype=np.float32)
    X += centres[y]
    return X, y


def classifier_end_to_end(n, args, to_device, name, device):
    """The device fit and predict of ``ConvexAggregationClassifier`` against the CPU's."""
    import sklearn

    from convexagg import ConvexAggregationClassifier

    X, y = gaussian_classes(n, args.classifier_classes, args.features)
    cv = args.classifier_cv if args.classifier_cv == "in_sample" else int(args.classifier_cv)

    def sync(on_device):
        if on_device:
            synchronize(name, device)

    def run(Xa, ya, on_device):
        with sklearn.config_context(array_api_dispatch=on_device):
            sync(on_device)
            t = time.perf_counter()
            clf = ConvexAggregationClassifier(
                code="ovo", fit_intercept=False, cv=cv, random_state=0
            )
            clf.fit(Xa, ya)
            fit_s = time.perf_counter() - t
            t = time.perf_counter()
            proba = clf.predict_proba(Xa)
            sync(on_device)
            predict_s = time.perf_counter() - t
        if hasattr(proba, "get"):  # CuPy
            proba = proba.get()
        return fit_s, predict_s, np.asarray(proba.cpu() if hasattr(proba, "cpu") else proba)

    t = time.perf_counter()
    Xd, yd = to_device(X), to_device(y)
    synchronize(name, device)
    copy_s = time.perf_counter() - t
    gpu_fit, gpu_predict, P = run(Xd, yd, True)
    del Xd, yd
    cpu_fit, cpu_predict, P_cpu = run(X, y, False)
    return {
        "rows": n,
        "classes": args.classifier_classes,
        "features": args.features,
        "cv": cv,
        "copy_s": copy_s,
        "gpu_fit_s": gpu_fit,
        "gpu_predict_s": gpu_predict,
        "cpu_fit_s": cpu_fit,
        "cpu_predict_s": cpu_predict,
        "fit_speedup": cpu_fit / gpu_fit,
        "predict_speedup": cpu_predict / gpu_predict,
        "proba_max_abs_diff": float(np.max(np.abs(P - P_cpu))),
        "predict_agreement": float(np.mean(P.argmax(axis=1) == P_cpu.argmax(axis=1))),
    }


def _sizes(text):
    return [int(r) for r in text.split(",") if r]


def main():
    p = C.parser(__doc__.splitlines()[0])
    p.add_argument("--rows", default="1000000,10000000", help="sizes fitted on the GPU")
    p.add_argument("--cpu-rows", default=None, help="sizes fitted on the CPU (default: --rows)")
    p.add_argument("--backend", choices=("auto", "torch", "cupy"), default="auto")
    p.add_argument("--device", default="cuda", help="torch device (cpu: plumbing only)")
    p.add_argument(
        "--classifier-rows", default="100000,1000000", help="sizes of the classifier end to end"
    )
    p.add_argument("--classifier-classes", type=int, default=10)
    p.add_argument("--features", type=int, default=64, help="features of the classifier's data")
    p.add_argument("--classifier-cv", default="5", help="the classifier's cv (int or in_sample)")
    p.add_argument(
        "--skip-without-gpu",
        action="store_true",
        help="without a GPU, say so and exit with status 0 (make bench; implied by --quick)",
    )
    p.set_defaults(repeat=3)
    args = p.parse_args()
    C.limit_blas(args)
    rows = _sizes(args.rows)
    cpu_rows = rows if args.cpu_rows is None else _sizes(args.cpu_rows)
    classifier_rows = _sizes(args.classifier_rows)
    if args.quick:
        rows, cpu_rows, args.repeat = [20_000], [20_000], 1
        classifier_rows, args.classifier_classes, args.classifier_cv = [5_000], 4, "2"
    found = find_backend(args.backend, args.device)
    if found is None:
        if args.skip_without_gpu or args.quick:
            print(NO_GPU.replace("nothing was measured", "skipped"))
            return
        sys.exit(NO_GPU)
    name, to_device, device_info = found
    from convexagg import ConvexDecoder

    info = {**C.machine(), "gpu": device_info, "targets": TARGETS}
    Q, y, code = W.synthetic_ovo_outputs(10_000, N_CLASSES, seed=1, dtype=np.float32)
    fit_device(Q, y, code, to_device, name, args.device, 1)  # warm-up: CUDA context, kernels
    if classifier_rows:  # warm-up of the classifier's kernels (scikit-learn's, on 2,000 rows)
        classifier_end_to_end(2_000, args, to_device, name, args.device)
    results = []
    for n in sorted(set(rows) | set(cpu_rows)):
        Q, y, code = W.synthetic_ovo_outputs(n, N_CLASSES, seed=0, dtype=np.float32)
        r = {"rows": n, "Q_bytes": Q.nbytes}
        if n in rows:
            copy_s, times, dec = fit_device(Q, y, code, to_device, name, args.device, args.repeat)
            r.update(
                copy_s=copy_s,
                gpu_best_s=min(times),
                gpu_median_s=statistics.median(times),
                gpu_n_iter=int(dec.n_iter_),
                gpu_objective=float(dec.objective_),
                gpu_converged=bool(dec.converged_),
            )
            print(f"{n} rows: GPU fit {min(times):.3f} s (copy {copy_s:.2f} s)", flush=True)
        if n in cpu_rows:
            t = time.perf_counter()
            ref = ConvexDecoder().fit(Q, y, code)
            r.update(
                cpu_s=time.perf_counter() - t,
                cpu_n_iter=int(ref.n_iter_),
                cpu_objective=float(ref.objective_),
            )
            print(f"{n} rows: CPU fit {r['cpu_s']:.2f} s", flush=True)
        if "gpu_best_s" in r and "cpu_s" in r:
            r["speedup"] = r["cpu_s"] / r["gpu_best_s"]
            r["objective_rel_diff"] = abs(r["gpu_objective"] - r["cpu_objective"]) / abs(
                r["cpu_objective"]
            )
        results.append(r)
        del Q, y
    classifier = []
    for n in classifier_rows:
        r = classifier_end_to_end(n, args, to_device, name, args.device)
        print(
            f"{n} rows: classifier fit {r['gpu_fit_s']:.2f} s on the device, "
            f"{r['cpu_fit_s']:.2f} s on the CPU",
            flush=True,
        )
        classifier.append(r)
    info["classifier"] = classifier
    text = C.header(info) + f"\n\ndevice: {device_info}\n\n"
    text += C.table(
        results,
        [
            ("rows", "rows", "{:,}"),
            ("copy_s", "copy to device (s)", "{:.2f}"),
            ("gpu_best_s", "GPU fit best (s)", "{:.3f}"),
            ("gpu_median_s", "GPU fit median (s)", "{:.3f}"),
            ("gpu_n_iter", "GPU iterations", None),
            ("cpu_s", "CPU fit (s)", "{:.2f}"),
            ("cpu_n_iter", "CPU iterations", None),
            ("speedup", "CPU / GPU", "{:.1f}x"),
            ("objective_rel_diff", "objective rel. diff.", "{:.1e}"),
        ],
    )
    if classifier:
        text += "\n\nConvexAggregationClassifier end to end (fit, then predict_proba):\n\n"
        text += C.table(
            classifier,
            [
                ("rows", "rows", "{:,}"),
                ("classes", "classes", None),
                ("cv", "cv", None),
                ("gpu_fit_s", "device fit (s)", "{:.2f}"),
                ("cpu_fit_s", "CPU fit (s)", "{:.2f}"),
                ("fit_speedup", "CPU / device fit", "{:.1f}x"),
                ("gpu_predict_s", "device predict (s)", "{:.3f}"),
                ("cpu_predict_s", "CPU predict (s)", "{:.3f}"),
                ("proba_max_abs_diff", "max abs diff. of proba", "{:.1e}"),
                ("predict_agreement", "same class", "{:.4f}"),
            ],
        )
    C.finish(args, info, results, text)


if __name__ == "__main__":
    main()
