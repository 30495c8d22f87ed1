"""Speed of rotode.dynamic's explicit rigid-body steppers.

Run from the repository root after building:  python benchmarks/bench_dynamic.py [--quick]
Prints
  - ns per step of one body for every method on the Lagrange top of Rucker 2018 sec. IV
    (I = diag(1, 1, 0.5), Gravity(m = g = 1, com = (0, 0, 1)), w0 = [1.5, 0, 1]), 10^5 steps,
    only the final state saved (the time is the driver's loop: no Python, no allocation);
  - batched throughput (body-steps per second) for N = 10^5 bodies with 1 and 2 workers
    (RK4 and the highest-order Crouch-Grossman method), 20 steps each.
  - a baseline: the same RK4 hand-written in C for this body (diagonal inertia and the gravity
    torque inlined), compiled with ``cc -O3 -ffp-contract=off`` when a C compiler is found.
The best of several repeats is reported.
"""
import os
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

import rotode
from rotode import dynamic, methods, torque

C_BASELINE = r"""
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
/* Hand-written RK4 for the Lagrange top (I = diag(1,1,0.5), m g com = (0,0,1)), non-unit q. */
static void rhs(const double *y, double *dy) {
    const double I[3] = {1.0, 1.0, 0.5};
    double q0 = y[0], q1 = y[1], q2 = y[2], q3 = y[3], w0 = y[4], w1 = y[5], w2 = y[6];
    double n2 = q0*q0 + q1*q1 + q2*q2 + q3*q3, s = 2.0 / n2;
    /* d = R^T (0,0,-1): third row of R, negated */
    double d0 = -s*(q1*q3 - q0*q2), d1 = -s*(q2*q3 + q0*q1), d2 = -(1.0 - s*(q1*q1 + q2*q2));
    double t0 = -d1, t1 = d0, t2 = 0.0 * d2;   /* com x d with com = (0,0,1) */
    dy[0] = 0.5*(-q1*w0 - q2*w1 - q3*w2);
    dy[1] = 0.5*( q0*w0 + q2*w2 - q3*w1);
    dy[2] = 0.5*( q0*w1 - q1*w2 + q3*w0);
    dy[3] = 0.5*( q0*w2 + q1*w1 - q2*w0);
    double L0 = I[0]*w0, L1 = I[1]*w1, L2 = I[2]*w2;
    dy[4] = (t0 - (w1*L2 - w2*L1)) / I[0];
    dy[5] = (t1 - (w2*L0 - w0*L2)) / I[1];
    dy[6] = (t2 - (w0*L1 - w1*L0)) / I[2];
}
int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 1000000; double h = 0.01;
    double y[7] = {1,0,0,0,1.5,0,1}, k1[7], k2[7], k3[7], k4[7], z[7];
    struct timespec a, b; clock_gettime(CLOCK_MONOTONIC, &a);
    for (long i = 0; i < n; i++) {
        rhs(y, k1); for (int j = 0; j < 7; j++) z[j] = y[j] + 0.5*h*k1[j];
        rhs(z, k2); for (int j = 0; j < 7; j++) z[j] = y[j] + 0.5*h*k2[j];
        rhs(z, k3); for (int j = 0; j < 7; j++) z[j] = y[j] + h*k3[j];
        rhs(z, k4); for (int j = 0; j < 7; j++) y[j] += h*(k1[j] + 2*(k2[j] + k3[j]) + k4[j])/6;
    }
    clock_gettime(CLOCK_MONOTONIC, &b);
    double dt = (b.tv_sec - a.tv_sec) + 1e-9*(b.tv_nsec - a.tv_nsec);
    printf("hand-written C rk4: %.1f ns/step (y4 = %.6f)\n", dt / n * 1e9, y[4]);
    return 0;
}
"""


def c_baseline(n):
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        return "no C compiler found"
    with tempfile.TemporaryDirectory() as d:
        c, exe = os.path.join(d, "rk4.c"), os.path.join(d, "rk4")
        with open(c, "w") as fh:
            fh.write(C_BASELINE)
        subprocess.run([cc, "-O3", "-ffp-contract=off", c, "-o", exe], check=True)
        runs = [subprocess.run([exe, str(n)], capture_output=True, text=True).stdout
                for _ in range(5)]
    return min(runs, key=lambda r: float(r.split(":")[1].split()[0])).strip()


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

    print("  baseline:", c_baseline(n * 10))

    N = 20_000 if quick else 100_000
    steps = 20
    rng = np.random.default_rng(0)
    q = rng.normal(size=(N, 4))
    q /= np.linalg.norm(q, axis=1)[:, None]
    Y0 = np.hstack([q, rng.normal(size=(N, 3))])
    tb = np.linspace(0.0, 0.2, steps + 1)
    sb = np.array([steps])
    print(f"batched, N = {N} bodies x {steps} steps (body-steps per second, best of 3)")
    # the classical RK4 and the highest-order Crouch-Grossman method of the registry
    for method in (methods.names("rigid body", "rk4")[0], methods.names("rigid body", "cg")[-1]):
        for workers in (1, 2):
            dt = best_time(3, method, top, Y0, tb, sb, {}, workers)
            print(f"  {method:4s} workers={workers}: {N * steps / dt:10.3e} body-steps/s "
                  f"({dt / (N * steps) * 1e9:.1f} ns per body-step)")


if __name__ == "__main__":
    main(quick="--quick" in sys.argv)
