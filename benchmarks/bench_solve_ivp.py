"""`rotode.solve_ivp` against `scipy.integrate.solve_ivp` on the same plain Python function.

Run from the repository root after building:  python benchmarks/bench_solve_ivp.py [--quick]

A drop-in must not cost time: for each SciPy method, the two calls run alternately in one
process (one BLAS thread) on the hand-written NumPy right-hand side of the Rucker 2018 benchmark
(rotode.studies.numpy_quaternion_kinematics, the cheapest realistic Python function, where a
per-evaluation cost shows most), and the script prints the median and quartiles of the ratio
rotode / SciPy over the pairs.  The asv benchmark ``SolveIvpPythonFunction``
(asv_bench/benchmarks/rhs.py) tracks the same ratio.
"""
import os
import sys
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402
import scipy.integrate  # noqa: E402

import rotode  # noqa: E402
from rotode.studies import numpy_quaternion_kinematics  # noqa: E402

METHODS = {"RK45": 1e-6, "DOP853": 1e-8, "Radau": 1e-6, "LSODA": 1e-6}


def paired_ratios(method, rtol, pairs):
    """rotode / SciPy time of `pairs` alternated runs (which goes first alternates too)."""
    def run(solver):
        t0 = time.perf_counter()
        solver(numpy_quaternion_kinematics, (0.0, 100.0), [1.0, 0.0, 0.0, 0.0], method=method,
               rtol=rtol)
        return time.perf_counter() - t0

    run(scipy.integrate.solve_ivp)
    run(rotode.solve_ivp)
    ratios = []
    for j in range(pairs):
        if j % 2:
            ours, theirs = run(rotode.solve_ivp), run(scipy.integrate.solve_ivp)
        else:
            theirs, ours = run(scipy.integrate.solve_ivp), run(rotode.solve_ivp)
        ratios.append(ours / theirs)
    return np.array(ratios), theirs


def main(quick=False):
    pairs = 10 if quick else 60
    print(f"{'method':7s} {'scipy ms':>9s} {'rotode/scipy':>13s} {'quartiles':>15s}")
    for method, rtol in METHODS.items():
        r, theirs = paired_ratios(method, rtol, pairs)
        q1, med, q3 = np.percentile(r, [25, 50, 75])
        print(f"{method:7s} {theirs * 1e3:9.2f} {med:13.4f} {q1:7.4f}-{q3:.4f}")


if __name__ == "__main__":
    main(quick="--quick" in sys.argv)
