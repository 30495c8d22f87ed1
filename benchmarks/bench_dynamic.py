"""Speed of rotode.dynamic's explicit rigid-body steppers.

Run from the repository root after building:  python benchmarks/bench_dynamic.py [--quick]
Prints
  - ns per step of one body for every method on the Lagrange top of seed 004 sec. IV
    (I = diag(1, 1, 0.5), Gravity(m = g = 1, com = (0, 0, 1)), w0 = [1.5, 0, 1]), 10^5 steps,
    only the final state saved (the time is the driver's loop: no Python, no allocation);
  - batched throughput (body-steps per second) for N = 10^5 bodies with 1 and 2 workers
    (rk4 and cg3), 20 steps each.
The best of several repeats is reported.
"""
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import rotode  # noqa: E402
from rotode import dynamic, torque  # noqa: E402


def best_time(repeat, *args):
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        dynamic.run(*args)
        times.append(time.perf_counter() - t0)
    return min(times)


def main(quick=False):
    top = rotode.RigidBody([1.0, 1.0, 0.5], torque.Gravity(1.0, 1.0, [0.0, 0.0, 1.0]))
    y0 = np.array([[1.0, 0.0, 0.0, 0.0, 1.5, 0.0, 1.0]])
    n = 20_000 if quick else 100_000
    t = np.linspace(0.0, n * 0.01, n + 1)
    save = np.array([n])
    print(f"single body, Lagrange top, {n} steps of 0.01 s (ns per step, best of 5)")
    for method in dynamic.METHODS:
        dt = best_time(5, method, top, y0, t, save, {}, 1)
        _, _, stats = dynamic.run(method, top, y0, t, save, {}, 1)
        print(f"  {method:10s} {dt / n * 1e9:8.1f} ns/step  ({stats['nfev']/n:.0f} torque "
              f"evaluations per step)")
    # translation (rkn4 with a constant force): the 13-state variant
    y13 = np.concatenate([y0, np.zeros((1, 6))], axis=1)
    opts = {"force": np.array([0.0, 0.0, -9.81]), "mass": 1.0}
    dt = best_time(5, "rkn4", top, y13, t, save, opts, 1)
    print(f"  {'rkn4+force':10s} {dt / n * 1e9:8.1f} ns/step")

    N = 20_000 if quick else 100_000
    steps = 20
    rng = np.random.default_rng(0)
    q = rng.normal(size=(N, 4))
    q /= np.linalg.norm(q, axis=1)[:, None]
    Y0 = np.hstack([q, rng.normal(size=(N, 3))])
    tb = np.linspace(0.0, 0.2, steps + 1)
    sb = np.array([steps])
    print(f"batched, N = {N} bodies x {steps} steps (body-steps per second, best of 3)")
    for method in ("rk4", "cg3"):
        for workers in (1, 2):
            dt = best_time(3, method, top, Y0, tb, sb, {}, workers)
            print(f"  {method:4s} workers={workers}: {N * steps / dt:10.3e} body-steps/s "
                  f"({dt / (N * steps) * 1e9:.1f} ns per body-step)")


if __name__ == "__main__":
    main(quick="--quick" in sys.argv)
