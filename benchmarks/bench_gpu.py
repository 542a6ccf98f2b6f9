"""Issue 26: the convex aggregation fitted on a GPU through the array API, against the CPU.

    python benchmarks/bench_gpu.py [--rows 1000000,10000000] [--backend auto|torch|cupy]
        [--device cuda] [--repeat 3] [--cpu-rows 1000000,10000000] [--out FILE]

Synthetic one-vs-one outputs of 26 classes (``M = 325``,
``_common.synthetic_ovo_outputs``, seed 0, float32: the issue's setting) are
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
import _common as C  # noqa: E402

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


def main():
    p = C.parser(__doc__.splitlines()[0])
    p.add_argument("--rows", default="1000000,10000000", help="sizes fitted on the GPU")
    p.add_argument("--cpu-rows", default=None, help="sizes fitted on the CPU (default: --rows)")
    p.add_argument("--backend", choices=("auto", "torch", "cupy"), default="auto")
    p.add_argument("--device", default="cuda", help="torch device (cpu: plumbing only)")
    p.set_defaults(repeat=3)
    args = p.parse_args()
    C.limit_blas(args)
    rows = [int(r) for r in args.rows.split(",")]
    cpu_rows = rows if args.cpu_rows is None else [int(r) for r in args.cpu_rows.split(",") if r]
    if args.quick:
        rows, cpu_rows, args.repeat = [20_000], [20_000], 1
    found = find_backend(args.backend, args.device)
    if found is None:
        sys.exit(NO_GPU)
    name, to_device, device_info = found
    from convexagg import ConvexDecoder

    info = {**C.machine(), "gpu": device_info, "targets": TARGETS}
    Q, y, code = C.synthetic_ovo_outputs(10_000, N_CLASSES, seed=1, dtype=np.float32)
    fit_device(Q, y, code, to_device, name, args.device, 1)  # warm-up: CUDA context, kernels
    results = []
    for n in sorted(set(rows) | set(cpu_rows)):
        Q, y, code = C.synthetic_ovo_outputs(n, N_CLASSES, seed=0, dtype=np.float32)
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
    C.finish(args, info, results, text)


if __name__ == "__main__":
    main()
