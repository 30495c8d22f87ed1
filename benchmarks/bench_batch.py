"""Batches in SIMD lanes: rk4 on 10^5 Lagrange tops, 1000 steps, against a hand-written AVX2 loop.

Run from the clone's root after building rotode (``python setup.py build_ext --inplace``):

    python benchmarks/bench_batch.py [--quick] [--bodies N] [--steps S]
                                     [--kinematics [METHOD ...]] [--adaptive]
                                     [--group [METHOD ...]]

The tops: ``rotode.RigidBody([1, 1, 0.5], torque=rotode.torque.Gravity(1, 9.81, [0, 0, 0.1]))``,
upright, spinning at w = (0.1, 0, 20) (the first rate dispersed a little from body to body),
``integrate(top, (0, 1), Y0 (N, 7), method="rk4", dt=1e-3, save_every=1000, workers=...)``: the
rows at t0 and tf only (the default, a row at every step, would write 5.6 GB for 10^5 tops).
Compared, one thread each unless said:

- rotode "off": the driver's step of one body at a time (rotode/dynamic.pxd), what rotode ran
  before the lane kernels (``rotode._lanes.use("off")``);
- rotode on each instruction set this CPU runs ("scalar": the lane kernel's one-body instance;
  "sse2", "avx2", "avx512": blocks of 2, 4, 8 bodies in SIMD lanes, rotode/_lanes.hpp);
- the hand-written loop of benchmarks/engine/batch_avx2.cpp: struct-of-arrays blocks of 64
  tops, each operation a loop over the block that the compiler vectorises, rotode's flags plus
  ``-mavx2`` (built at run time by benchmarks/engine/build.py, cached), stepping rotode's time
  grid; its final states are checked against rotode's, bit for bit;
- rotode's best set with ``workers=2`` against ``workers=1``.

Then the kinematics rows: rk4 on N orientations under ``rotode.omega.Sinusoid([1, 0.5, 2], 3,
[0, 0.4, 1.1])`` (one shared source: a sine per component and node) and under constant per-body
rates (an (N, 3) array), ``integrate(model, (0, 1), Q0 (N, 4), method="rk4", dt=1e-3,
save_every=1000)``, "off" (the driver's step, rotode/kinematic.pxd) against each set, one thread.
``--kinematics``: those rows only, for each method given (default rk4, ab3, lie_euler, cg3,
exp2 and magnus4: every kernel the kinematics lanes have); every set's rows are checked against
"off"'s, bit for bit.

``--adaptive``: the error-controlled rows only (issue 31's adaptive lanes, rotode/_lanes_erk.hpp):
dop853 with rtol 1e-9, atol 1e-11 on N Lagrange tops with dispersed initial rates (w = (0.1 +
0.5 u1, 0.5 u2, 20 (1 + 0.5 u3)), u uniform in [-1, 1], seeded), over (0, 1), the rows at t0 and
tf only (``t_eval=[0, 1]``), one thread, "off" (the specialised engine's run of one body at a
time, as before the lanes) against each set; ns per body-step = seconds / (the bodies' accepted
steps summed, the same on every set).

``--group``: the Lie-group rows only (the rigid body's Lie-Euler and Crouch-Grossman kernels in
lanes): each method given (default lie_euler and cg3) on the N Lagrange tops above, dt 1e-3,
the rows at t0 and tf only, one thread, "off" (the driver's step, rotode/dynamic.pxd
`lie_euler_step`/`cg_step`) against each set; every set's rows are checked against "off"'s, bit
for bit.

How it measures: one process, every tool in turn, A B C ... A B C ..., the minimum over the
turns of each (`bench_engine.measure`: each turn is one run here, a run lasting 0.1-40 s);
OpenBLAS held to one thread.  Printed: ns per body-step (seconds / (N x steps)) and the ratio
to the hand-written loop.  ``--quick``: 10^4 bodies and 2 turns.  The issue's target (issue
31): rotode's rk4 within 2x of the hand-written AVX2 loop.
"""
import argparse
import os
import sys
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))                  # the clone's rotode (built in place) first
sys.path.insert(0, str(ROOT / "benchmarks"))

import numpy as np  # noqa: E402
from bench_engine import Run, measure  # noqa: E402
from engine import build  # noqa: E402

import rotode  # noqa: E402
from rotode import _lanes  # noqa: E402
from rotode._plan import time_grid  # noqa: E402

INERTIA = [1.0, 1.0, 0.5]
MASS, G, HEIGHT = 1.0, 9.81, 0.1
DT = 1e-3


def tops(n):
    """The batch's model and initial rows (N, 7): upright tops, w = (0.1 (1 + dispersion),
    0, 20)."""
    top = rotode.RigidBody(INERTIA, torque=rotode.torque.Gravity(MASS, G, [0.0, 0.0, HEIGHT]))
    y0 = np.zeros((n, 7))
    y0[:, 0] = 1.0
    y0[:, 4] = 0.1 * (1.0 + 0.01 * np.linspace(-1.0, 1.0, n))
    y0[:, 6] = 20.0
    return top, y0


def rotode_run(top, y0, steps, isa, workers=1, method="rk4"):
    """A Run of rotode's `method` (rk4) on `isa` (a `rotode._lanes` choice)."""
    span = (0.0, steps * DT)

    def call():
        before = _lanes.use(isa)
        try:
            return rotode.integrate(top, span, y0, method=method, dt=DT, save_every=steps,
                                    workers=workers)
        finally:
            _lanes.use(before)

    return Run(call, call)


def grid(steps):
    """rotode's time grid of ``integrate(..., (0, steps dt), dt=dt)`` (`rotode._plan`)."""
    return time_grid((0.0, steps * DT), DT, None, None)[0]


def loop_run(loop, y0, steps):
    params, t = np.array(INERTIA + [MASS * G, HEIGHT]), grid(steps)

    def call():
        return loop.run(y0, params, t)

    return Run(call, call)


def kinematics_run(model, q0, steps, isa, method="rk4"):
    """A Run of rotode's `method` (rk4) kinematics under `model` on `isa`."""
    span = (0.0, steps * DT)

    def call():
        before = _lanes.use(isa)
        try:
            return rotode.integrate(model, span, q0, method=method, dt=DT, save_every=steps)
        finally:
            _lanes.use(before)

    return Run(call, call)


def kinematics(n, steps, turns, methods=("rk4",)):
    """Print the kinematics rows: ns per body-step of "off" and each set, per method and rate
    model; returns whether every set's rows are "off"'s, bit for bit."""
    rng = np.random.default_rng(0)
    q0 = rng.normal(size=(n, 4))
    q0 /= np.linalg.norm(q0, axis=1)[:, None]
    models = {"sinusoid": rotode.QuaternionKinematics(
                  rotode.omega.Sinusoid([1.0, 0.5, 2.0], 3.0, [0.0, 0.4, 1.1])),
              "per-body constant": rng.normal(size=(n, 3))}
    print(f"kinematics, {n} orientations, {steps} steps of {DT} s")
    print(f"{'':44s} {'ns/body-step':>12s} {'speed-up vs off':>15s}")
    same = True
    for method in methods:
        for label, model in models.items():
            ref = kinematics_run(model, q0, steps, "off", method).call()
            for isa in _lanes.available():
                got = kinematics_run(model, q0, steps, isa, method).call()
                same = same and np.array_equal(got.y, ref.y) and np.array_equal(got.w, ref.w)
            runs = {f"{method}, {label}, rotode {isa}": kinematics_run(model, q0, steps, isa,
                                                                        method)
                    for isa in _lanes.available()}
            seconds = measure(runs, turns)
            off = seconds[f"{method}, {label}, rotode off"]
            for name, sec in seconds.items():
                print(f"{name:44s} {sec / (n * steps) * 1e9:12.2f} {off / sec:15.1f}")
    print(f"every set's rows == off's, bit for bit: {same}")
    return same


def dispersed_tops(n, seed=0):
    """The adaptive rows' model and initial rows (N, 7): upright tops whose rates are dispersed
    (each body its own step sizes)."""
    top, y0 = tops(n)
    u = np.random.default_rng(seed).uniform(-1.0, 1.0, size=(n, 3))
    y0[:, 4] = 0.1 + 0.5 * u[:, 0]
    y0[:, 5] = 0.5 * u[:, 1]
    y0[:, 6] = 20.0 * (1.0 + 0.5 * u[:, 2])
    return top, y0


# --events: each sign change of w_x (body frame) and each crossing of a 10 degree tilt of the
# tops' symmetry axis (the body's e3 against the world's z)
TOP_EVENTS = [rotode.events.Component("w", 0, value=0.0),
              rotode.events.AxisAngle([0, 0, 1], [0, 0, 1], np.radians(10.0))]


def adaptive_run(top, y0, isa, rtol=1e-9, events=None):
    """A Run of rotode's dop853 (rtol, atol = rtol / 100) on `isa`, rows at t0 and tf only."""

    def call():
        before = _lanes.use(isa)
        try:
            return rotode.integrate(top, (0.0, 1.0), y0, method="dop853", rtol=rtol,
                                    atol=rtol / 100, t_eval=[0.0, 1.0], events=events)
        finally:
            _lanes.use(before)

    return Run(call, call)


def adaptive(n, turns, events=None):
    """Print the adaptive rows: ns per body-step of "off" and each set (dop853, rtol 1e-9),
    with `events` located in each lane (TOP_EVENTS) or none."""
    top, y0 = dispersed_tops(n)
    ref = adaptive_run(top, y0, "off", events=events).call()
    steps = int(ref.stats["per_body"]["n_steps"].sum())
    print(f"dop853, rtol 1e-9, atol 1e-11, {n} Lagrange tops with dispersed rates over (0, 1): "
          f"{steps} accepted steps ({steps / n:.1f} per body, "
          f"{ref.stats['per_body']['n_rejected'].sum()} rejected)"
          + (f"; events located: {int(ref.stats['n_events'].sum())}" if events else ""))
    same = True
    for isa in _lanes.available()[1:]:
        got = adaptive_run(top, y0, isa, events=events).call()
        same = same and np.array_equal(got.y, ref.y) and np.array_equal(
            got.stats["per_body"]["nfev_pair"], ref.stats["per_body"]["nfev_pair"])
        if events:
            same = same and all(np.array_equal(a, b) for ta, tb in zip(
                got.t_events, ref.t_events, strict=True) for a, b in zip(ta, tb, strict=True))
    print(f"every set's rows and counters == off's, bit for bit: {same}")
    seconds = measure({f"dop853, rotode {isa}": adaptive_run(top, y0, isa, events=events)
                       for isa in _lanes.available()}, turns)
    off = seconds["dop853, rotode off"]
    print(f"{'':34s} {'ns/body-step':>12s} {'total s':>8s} {'speed-up vs off':>15s}")
    for name, sec in seconds.items():
        print(f"{name:34s} {sec / steps * 1e9:12.2f} {sec:8.3f} {off / sec:15.1f}")
    return same


def group(n, steps, turns, methods):
    """Print the Lie-group rows: ns per body-step of "off" and each set, per method; returns
    whether every set's rows are "off"'s, bit for bit."""
    top, y0 = tops(n)
    same = True
    print(f"Lie-group methods, {n} Lagrange tops, {steps} steps of {DT} s")
    print(f"{'':34s} {'ns/body-step':>12s} {'speed-up vs off':>15s}")
    for method in methods:
        ref = rotode_run(top, y0, steps, "off", method=method).call()
        for isa in _lanes.available()[1:]:
            got = rotode_run(top, y0, steps, isa, method=method).call()
            same = same and np.array_equal(got.y, ref.y) and np.array_equal(got.w, ref.w)
        seconds = measure({f"{method}, rotode {isa}": rotode_run(top, y0, steps, isa,
                                                                 method=method)
                           for isa in _lanes.available()}, turns)
        off = seconds[f"{method}, rotode off"]
        for name, sec in seconds.items():
            print(f"{name:34s} {sec / (n * steps) * 1e9:12.2f} {off / sec:15.1f}")
    print(f"every set's rows == off's, bit for bit: {same}")
    return same


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="10^4 bodies, 2 turns")
    parser.add_argument("--bodies", type=int, default=None)
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--kinematics", nargs="*", metavar="METHOD", default=None,
                        help="the kinematics rows only (default: rk4 ab3 lie_euler cg3 exp2 "
                             "magnus4)")
    parser.add_argument("--adaptive", action="store_true",
                        help="the error-controlled rows only (dop853 in lanes)")
    parser.add_argument("--events", action="store_true",
                        help="with --adaptive: two events located per lane (TOP_EVENTS)")
    parser.add_argument("--group", nargs="*", metavar="METHOD", default=None,
                        help="the Lie-group rows only (default: lie_euler cg3)")
    args = parser.parse_args(argv)
    n = args.bodies or (10_000 if args.quick else 100_000)
    turns = 2 if args.quick else 3
    if args.kinematics is not None:
        methods = args.kinematics or ["rk4", "ab3", "lie_euler", "cg3", "exp2", "magnus4"]
        return 0 if kinematics(n, args.steps, turns, methods) else 1
    if args.adaptive:
        return 0 if adaptive(n, turns, TOP_EVENTS if args.events else None) else 1
    if args.group is not None:
        return 0 if group(n, args.steps, turns, args.group or ["lie_euler", "cg3"]) else 1
    top, y0 = tops(n)
    loop = build.batch_loop(verbose=True)
    best = _lanes.available()[-1]
    final = loop_run(loop, y0, args.steps).call()
    ours = rotode_run(top, y0, args.steps, best).call()
    same = np.array_equal(ours.y[:, -1], final)
    print(f"rk4, {n} Lagrange tops, {args.steps} steps of {DT} s; CPU runs {_lanes.available()}")
    print(f"hand-written AVX2 loop's final states == rotode's ({best}), bit for bit: {same}")
    runs = {f"rotode {isa}": rotode_run(top, y0, args.steps, isa) for isa in _lanes.available()}
    runs["hand-written AVX2 SoA loop"] = loop_run(loop, y0, args.steps)
    runs[f"rotode {best}, workers=2"] = rotode_run(top, y0, args.steps, best, workers=2)
    seconds = measure(runs, turns)
    body_steps = n * args.steps
    ref = seconds["hand-written AVX2 SoA loop"]
    print(f"{'':34s} {'ns/body-step':>12s} {'x hand AVX2':>11s} {'speed-up vs off':>15s}")
    for name, s in seconds.items():
        print(f"{name:34s} {s / body_steps * 1e9:12.2f} {s / ref:11.2f} "
              f"{seconds['rotode off'] / s:15.1f}")
    print(f"workers=2 / workers=1 ({best}): "
          f"{seconds[f'rotode {best}'] / seconds[f'rotode {best}, workers=2']:.2f}x")
    same = kinematics(n, args.steps, turns) and same
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
