"""Speed of the native kinematic steppers (rotode.kinematic, rotode.steps).

Run:  python benchmarks/bench_kinematic.py [--quick] [--compare]

1. single body, Rucker 2018 benchmark w(t) (Sinusoid source): ns per step of rk4 and others;
2. magnus_ca with a given constant angular acceleration (game use): ns per step for one body
   in the driver, and ns per body-step of steps.magnus_ca over many bodies;
3. batched N = 1e5 bodies, 100 steps of magnus_ca: body-steps per second on 1 and 2 workers;
4. Rucker 2018 benchmark to an error <= 1e-8 deg at t = 100 s: fewest uniform steps and time for
   magnus4/6/8 and rk4 (reference: solve_ivp DOP853 rtol 1e-13, checked against magnus8);
   with --compare also CyRK's compiled DOP853 and numpy-quaternion, when installed.
"""
import argparse
import time
from math import pi

import numpy as np
from scipy.integrate import solve_ivp

from rotode import kinematic as K
from rotode import steps
from rotode.omega import Sinusoid

A, B = pi / 2, 2 * pi / 10
PHASE = np.array([0.0, 2 * pi / 3, 4 * pi / 3])
SRC = Sinusoid(A, B, PHASE)
ID = np.array([[1.0, 0.0, 0.0, 0.0]])


def best(f, repeat=7):
    ts = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        f()
        ts.append(time.perf_counter() - t0)
    return min(ts)


def qmul(p, q):
    return np.array([p[0] * q[0] - p[1:] @ q[1:],
                     *(p[0] * q[1:] + q[0] * p[1:] + np.cross(p[1:], q[1:]))])


def angle_deg(q, ref):
    q = q / np.linalg.norm(q)
    ref = ref / np.linalg.norm(ref)
    d = qmul(np.r_[ref[0], -ref[1:]], q)
    return np.degrees(2 * np.arctan2(np.linalg.norm(d[1:]), abs(d[0])))


def reference(T=100.0, frame="body"):
    def rhs(t, q):
        w = np.r_[0.0, A * np.sin(B * t + PHASE)]
        return 0.5 * (qmul(q, w) if frame == "body" else qmul(w, q))
    return solve_ivp(rhs, (0, T), [1.0, 0, 0, 0], method="DOP853", rtol=1e-13,
                     atol=1e-14).y[:, -1]


def run_final(method, n, T=100.0, **opts):
    t = np.linspace(0.0, T, n + 1)
    return K.run(method, SRC, ID, t, np.array([n]), opts, 1)[0][0, 0]


def single_body(n):
    print(f"\n1. single body, Rucker 2018 benchmark, {n} steps (ns per step, incl. w evaluations)")
    t = np.linspace(0.0, 100.0, n + 1)
    save = np.array([n])
    for m in K.METHODS:
        s = best(lambda m=m: K.run(m, SRC, ID, t, save, {}, 1))
        print(f"   {m:10s} {1e9 * s / n:8.1f} ns/step")


def game(n, nb):
    print("\n2. magnus_ca with given constant angular acceleration")
    t = np.linspace(0.0, 100.0, n + 1)
    w = np.array([[0.3, -0.2, 0.5]])
    al = np.array([[0.01, 0.02, -0.01]])
    s = best(lambda: K.run("magnus_ca", w, ID, t, np.array([n]), {"alpha": al}, 1))
    print(f"   driver, 1 body, array model + alpha: {1e9 * s / n:8.1f} ns/step")
    s = best(lambda: K.run("magnus_ca", w, ID, t, np.array([n]),
                           {"alpha": al, "exp": "approx"}, 1))
    print(f"   same, exp='approx':                  {1e9 * s / n:8.1f} ns/step")
    rng = np.random.default_rng(1)
    q = np.tile(ID, (nb, 1))
    W = rng.normal(size=(nb, 3))
    AL = 0.1 * rng.normal(size=(nb, 3))
    s = best(lambda: steps.magnus_ca(q, W, AL, 0.01, out=q))
    print(f"   steps.magnus_ca, {nb} bodies, out=q:  {1e9 * s / nb:8.1f} ns/body-step")
    q1, w1, a1 = q[0].copy(), W[0].copy(), AL[0].copy()
    s = best(lambda: [steps.magnus_ca(q1, w1, a1, 0.01, out=q1) for _ in range(1000)]) / 1000
    print(f"   steps.magnus_ca, 1 body per call:     {1e9 * s:8.1f} ns/call (Python call)")


def batched(nb, n, worker_counts=(1, 2)):
    print(f"\n3. batched magnus_ca, N = {nb}, {n} steps")
    rng = np.random.default_rng(2)
    q0 = rng.normal(size=(nb, 4))
    q0 /= np.linalg.norm(q0, axis=1)[:, None]
    W = rng.normal(size=(nb, 3))
    AL = 0.1 * rng.normal(size=(nb, 3))
    t = np.linspace(0.0, 1.0, n + 1)
    save = np.array([n])
    for model, opts, label in ((W, {"alpha": AL}, "array model + alpha"),
                               (SRC, {}, "Sinusoid source (w and w' per step)")):
        r1 = None
        for workers in worker_counts:
            s = best(lambda a=(model, opts, workers): K.run("magnus_ca", a[0], q0, t, save,
                                                               dict(a[1]), a[2]), 3)
            rate = nb * n / s
            r1 = r1 or rate
            print(f"   {label:38s} workers={workers}: {rate:.3g} body-steps/s "
                  f"({rate / r1:.2f}x)")


def accuracy(compare):
    print("\n4. Rucker 2018 benchmark to error <= 1e-8 deg at t = 100 s")
    ref = reference()
    chk = run_final("magnus8", 20000)
    print(f"   reference DOP853 vs magnus8 (20000 steps): {angle_deg(chk, ref):.2e} deg")
    for m in ("magnus8", "magnus6", "magnus4", "rk4"):
        lo, hi = 10, 10
        while angle_deg(run_final(m, hi), ref) > 1e-8:
            lo, hi = hi, hi * 2
        while hi - lo > max(1, hi // 100):
            mid = (lo + hi) // 2
            if angle_deg(run_final(m, mid), ref) > 1e-8:
                lo = mid
            else:
                hi = mid
        t = np.linspace(0.0, 100.0, hi + 1)
        s = best(lambda a=(m, t, hi): K.run(a[0], SRC, ID, a[1], np.array([a[2]]), {}, 1))
        e = angle_deg(run_final(m, hi), ref)
        print(f"   {m:8s} {hi:7d} steps  error {e:.2e} deg  {1e3 * s:8.3f} ms")
    if not compare:
        return
    try:
        import numba  # noqa: F401
        from CyRK import pysolve_ivp  # noqa: F401
    except ImportError:
        print("   CyRK/numba not installed")
    else:
        _cyrk(ref)
    try:
        import quaternion  # noqa: F401
    except ImportError:
        print("   numpy-quaternion not installed")
    else:
        _npq(reference(frame="world"))


def _cyrk(ref):
    from CyRK import nbsolve_ivp
    from numba import njit

    @njit
    def rhs(t, y):
        w0 = A * np.sin(B * t)
        w1 = A * np.sin(B * t + 2 * pi / 3)
        w2 = A * np.sin(B * t + 4 * pi / 3)
        out = np.empty(4)
        out[0] = 0.5 * (-y[1] * w0 - y[2] * w1 - y[3] * w2)
        out[1] = 0.5 * (y[0] * w0 + y[2] * w2 - y[3] * w1)
        out[2] = 0.5 * (y[0] * w1 - y[1] * w2 + y[3] * w0)
        out[3] = 0.5 * (y[0] * w2 + y[1] * w1 - y[2] * w0)
        return out
    y0 = np.array([1.0, 0.0, 0.0, 0.0])
    for rtol in (1e-10, 1e-11, 1e-12):
        res = nbsolve_ivp(rhs, (0.0, 100.0), y0, rk_method=2, rtol=rtol, atol=1e-14,
                          warnings=False)
        s = best(lambda rtol=rtol: nbsolve_ivp(rhs, (0.0, 100.0), y0, rk_method=2, rtol=rtol,
                                     warnings=False, atol=1e-14), 5)
        print(f"   CyRK nbsolve_ivp DOP853 rtol={rtol:g}: error "
              f"{angle_deg(res.y[:, -1], ref):.2e} deg  {1e3 * s:8.3f} ms")


def _npq(ref):
    import quaternion

    def w(t):
        return A * np.sin(B * t + PHASE)
    for tol in (1e-10, 1e-12):
        f = lambda tol=tol: quaternion.integrate_angular_velocity(  # noqa: E731
            w, 0.0, 100.0, R0=quaternion.one, tolerance=tol)
        T, R = f()
        s = best(f, 3)
        # numpy-quaternion integrates a WORLD-frame rate: compared with the world reference
        e = angle_deg(quaternion.as_float_array(R[len(R) - 1]), ref)
        t = np.linspace(0.0, 100.0, 981)
        y = K.run("magnus8", SRC, ID, t, np.array([980]), {"frame": "world"}, 1)[0][0, 0]
        print(f"   numpy-quaternion tol={tol:g}: error {e:.2e} deg  {1e3 * s:8.2f} ms "
              f"(world frame; rotode magnus8 980 steps, world: {angle_deg(y, ref):.2e} deg)")


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--compare", action="store_true")
    ap.add_argument("--parts", default="1234", help="which sections to run, e.g. 3")
    ap.add_argument("--workers", default="1,2", help="worker counts for section 3")
    a = ap.parse_args()
    n = 10_000 if a.quick else 100_000
    if "1" in a.parts:
        single_body(n)
    if "2" in a.parts:
        game(n, n)
    if "3" in a.parts:
        batched(n, 100, [int(x) for x in a.workers.split(",")])
    if "4" in a.parts:
        accuracy(a.compare)
