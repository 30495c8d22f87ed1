"""Spacecraft torques on the specialised engine against the driver's loop, one process.

Run from the repository root after building:  python benchmarks/bench_torque_engine.py [--quick]

The gravity-gradient satellite of benchmarks/bench_torque.py (principal moments 90, 100, 40
kg m^2, orbit rate 1.1e-3 rad/s), its torque a `rotode.torque.GravityGradient`, a
`Sum(GravityGradient, Compiled damping)` needs a C compiler, so the sum here is
`GravityGradient + Constant` (both compiled).  Each case runs on the specialised engine
(rotode/_models.hpp: the pair's tableau compiled in; `GravityGradient` as TORQUE_GG, its
formula compiled in; the sum as TORQUE_CALL, each part's `evaluate` through its pointer) and
on the driver's own loop (``rotode.dynamic._USE_ENGINE = False``: the run-time tableau, the
same evaluations), alternated, best of the rounds, one thread:

- one satellite, 10 orbits, output at the end, rtol 1e-10: time per call and per step;
- 2000 satellites with dispersed rates and orbits (per-body parameters), 1 orbit, rtol 1e-9:
  ns per body-step in the adaptive SIMD lanes (rotode/_lanes_erk.hpp, the default lane set),
  on the engine one body at a time (lane set "off") and on the driver's loop;
- the same satellites at a fixed step (rk4, cg3, lie_euler, dt = 10 s): the fixed-step lane
  kernels (rotode/_lanes.hpp) against the driver's step (lane set "off").

Both paths give the same steps and bits (tests/test_engine_torque_call.py); the table prints
the steps of each so that a reader sees they are the same work.
"""
import os
import sys
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402

import rotode  # noqa: E402
from rotode import _lanes, dynamic, torque  # noqa: E402

N = 1.1e-3
INERTIA = np.array([90.0, 100.0, 40.0])
ORBIT = 2 * np.pi / N


def _single():
    gg = torque.GravityGradient(INERTIA, N, inclination=0.5)
    y0 = np.r_[np.cos(0.05), 0.0, np.sin(0.05), 0.0, 0.0, -N, 1e-4]
    return {"GravityGradient": rotode.RigidBody(INERTIA, torque=gg),
            "GravityGradient + Constant": rotode.RigidBody(
                INERTIA, torque=gg + torque.Constant([1e-6, 0, 0], frame="world"))}, y0


def _batch(n):
    rng = np.random.default_rng(1)
    inertia = INERTIA * (1 + 0.1 * rng.random((n, 3)))
    gg = torque.GravityGradient(inertia, N * (1 + 0.1 * rng.random(n)),
                                inclination=rng.uniform(0, 1, n), raan=rng.uniform(0, 6, n))
    q = rng.normal(size=(n, 4))
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    return rotode.RigidBody(inertia, torque=gg), np.c_[q, 1e-3 * rng.normal(size=(n, 3))]


def _time(fn, engine, rounds):
    """Best wall time of `fn` on the engine or the driver's loop, and its result."""
    best, res = np.inf, None
    for _ in range(rounds):
        dynamic._USE_ENGINE = engine
        try:
            t0 = time.perf_counter()
            res = fn()
            best = min(best, time.perf_counter() - t0)
        finally:
            dynamic._USE_ENGINE = True
    return best, res


def main(quick=False):
    rounds = 3 if quick else 7
    models, y0 = _single()
    print(f"one satellite, 10 orbits, rtol 1e-10 (best of {rounds}, alternated)")
    print(f"{'torque':>28} {'method':>7} {'steps':>6} {'engine us':>10} {'driver us':>10} "
          f"{'ns/step eng':>11} {'ns/step drv':>11} {'speed-up':>8}")
    for name, model in models.items():
        for method in ("dop853", "rkmk8"):
            def run(model=model, method=method):
                return rotode.integrate(model, (0, 10 * ORBIT), y0, method=method, rtol=1e-10,
                                        atol=1e-12, t_eval=[10 * ORBIT])
            te = td = np.inf
            for _ in range(rounds):                         # alternated
                te = min(te, _time(run, True, 1)[0])
                td = min(td, _time(run, False, 1)[0])
            res = run()
            steps = res.stats["n_steps"] + res.stats.get("n_rejected", 0)
            print(f"{name:>28} {method:>7} {steps:>6} {te * 1e6:>10.0f} {td * 1e6:>10.0f} "
                  f"{te / steps * 1e9:>11.0f} {td / steps * 1e9:>11.0f} {td / te:>7.2f}x")
    n = 500 if quick else 2000
    model, yb = _batch(n)
    print(f"\n{n} satellites, per-body GravityGradient, 1 orbit, rtol 1e-9, workers=1 "
          f"(lanes: {_lanes.get()})")
    print(f"{'method':>7} {'body-steps':>11} {'lanes ns':>9} {'one-body ns':>11} "
          f"{'driver ns':>10} {'vs one-body':>11} {'vs driver':>9}")
    lane_set = _lanes.get()
    for method in ("dop853", "rkmk8"):
        def run(method=method):
            return rotode.integrate(model, (0, ORBIT), yb, method=method, rtol=1e-9,
                                    atol=1e-11, t_eval=[ORBIT], workers=1)

        def one_body(run=run):
            _lanes.use("off")
            try:
                return run()
            finally:
                _lanes.use(lane_set)
        tl = to = td = np.inf
        for _ in range(max(1, rounds // 2)):
            tl = min(tl, _time(run, True, 1)[0])
            to = min(to, _time(one_body, True, 1)[0])
            td = min(td, _time(run, False, 1)[0])
        res = run()
        steps = int(np.sum(res.stats["per_body"]["n_steps"]))
        if "n_rejected" in res.stats["per_body"]:
            steps += int(np.sum(res.stats["per_body"]["n_rejected"]))
        print(f"{method:>7} {steps:>11} {tl / steps * 1e9:>9.0f} {to / steps * 1e9:>11.0f} "
              f"{td / steps * 1e9:>10.0f} {to / tl:>10.2f}x {td / tl:>8.2f}x")
    fixed(model, yb, rounds, lane_set)


def fixed(model, yb, rounds, lane_set):
    """The same satellites at a fixed step (dt = 10 s, one orbit): the fixed-step lane kernels
    (TORQUE_GG at the step's nodes) against the driver's step (lane set "off"), alternated."""
    n = len(yb)
    print(f"\n{n} satellites, per-body GravityGradient, 1 orbit, dt = 10 s, workers=1 "
          f"(lanes: {lane_set})")
    print(f"{'method':>9} {'body-steps':>11} {'lanes ns':>9} {'driver ns':>10} {'speed-up':>8}")
    for method in ("rk4", "cg3", "lie_euler"):
        def run(method=method):
            return rotode.integrate(model, (0, ORBIT), yb, method=method, dt=10.0,
                                    t_eval=[ORBIT], workers=1)

        def driver(run=run):
            _lanes.use("off")
            try:
                return run()
            finally:
                _lanes.use(lane_set)
        tl = td = np.inf
        for _ in range(max(1, rounds // 2)):
            tl = min(tl, _time(run, True, 1)[0])
            td = min(td, _time(driver, True, 1)[0])
        res = run()
        steps = int(np.sum(res.stats["per_body"]["n_steps"]))
        print(f"{method:>9} {steps:>11} {tl / steps * 1e9:>9.1f} {td / steps * 1e9:>10.1f} "
              f"{td / tl:>7.2f}x   (simd: {res.stats.get('simd', '-')})")


if __name__ == "__main__":
    main(quick="--quick" in sys.argv[1:])
