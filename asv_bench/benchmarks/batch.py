"""Batches in SIMD lanes (rotode/_lanes.hpp): rk4 on 10^5 Lagrange tops over 1000 steps, one
thread, the rows at t0 and tf only; per instruction set, and rotode's time over the
hand-written AVX2 struct-of-arrays loop of benchmarks/engine/batch_avx2.cpp (the same final
states, bit for bit; benchmarks/bench_batch.py measures the rest)."""
import importlib.util
import sys
import time
from pathlib import Path

import numpy as np

import rotode

try:
    from rotode import _lanes
    ISAS = list(_lanes.ISAS)
except ImportError:     # a rotode before the SIMD lanes (asv runs the suite on its history):
    _lanes = None       # "off", the run of one body at a time, is the one set it has
    ISAS = ["off", "scalar", "sse2", "avx2", "avx512"]

BUILD = Path(__file__).resolve().parents[2] / "benchmarks" / "engine" / "build.py"
N, STEPS, DT = 100_000, 1000, 1e-3


def _tops():
    top = rotode.RigidBody([1.0, 1.0, 0.5], torque=rotode.torque.Gravity(1.0, 9.81, [0, 0, 0.1]))
    y0 = np.zeros((N, 7))
    y0[:, 0] = 1.0
    y0[:, 4] = 0.1 * (1.0 + 0.01 * np.linspace(-1.0, 1.0, N))
    y0[:, 6] = 20.0
    return top, y0


def _rk4(top, y0, workers=1):
    return rotode.integrate(top, (0.0, STEPS * DT), y0, method="rk4", dt=DT, save_every=STEPS,
                            workers=workers)


class _OnLaneSet:
    """A benchmark run on one lane instruction set, its first parameter (`use`), the set
    before restored after it."""

    def use(self, simd):
        if _lanes is None:
            if simd != "off":
                raise NotImplementedError(f"this rotode has no SIMD lanes ({simd})")
            return
        if simd not in _lanes.available():
            raise NotImplementedError(f"this CPU does not run {simd}")
        self.before = _lanes.use(simd)

    def teardown(self, simd, *params):
        if hasattr(self, "before"):      # (setup skipped: a lane set this CPU lacks)
            _lanes.use(self.before)


class BatchTops(_OnLaneSet):
    """rk4 on 10^5 tops, 1000 steps, on each instruction set this CPU runs ("off": the
    driver's step of one body at a time)."""

    params = [ISAS]
    param_names = ["simd"]
    timeout = 300
    number = 1
    repeat = 2

    def setup(self, simd):
        self.use(simd)
        self.top, self.y0 = _tops()

    def time_rk4(self, simd):
        _rk4(self.top, self.y0)


def _dispersed_tops():
    top, y0 = _tops()
    u = np.random.default_rng(0).uniform(-1.0, 1.0, size=(N, 3))
    y0[:, 4] = 0.1 + 0.5 * u[:, 0]
    y0[:, 5] = 0.5 * u[:, 1]
    y0[:, 6] = 20.0 * (1.0 + 0.5 * u[:, 2])
    return top, y0


class BatchAdaptiveTops(_OnLaneSet):
    """dop853 (rtol 1e-9, atol 1e-11) on 10^5 tops with dispersed rates over (0, 1), one thread,
    the rows at t0 and tf, on each instruction set this CPU runs ("off": the specialised
    engine's run of one body at a time; the others: the adaptive lanes, rotode/_lanes_erk.hpp)."""

    params = [ISAS]
    param_names = ["simd"]
    timeout = 600
    number = 1
    repeat = 2

    def setup(self, simd):
        self.use(simd)
        self.top, self.y0 = _dispersed_tops()

    def time_dop853(self, simd):
        rotode.integrate(self.top, (0.0, 1.0), self.y0, method="dop853", rtol=1e-9, atol=1e-11,
                         t_eval=[0.0, 1.0])


class BatchAdaptiveEvents(_OnLaneSet):
    """dop853 (rtol 1e-9, atol 1e-11) on 2 x 10^4 of those tops with two events located in
    each lane (each sign change of w_x, each crossing of a 10 degree tilt of the symmetry
    axis; the driver's root search on each lane's steps), one thread: the engine's run of one
    body at a time ("off") against the adaptive lanes."""

    params = [["off", "avx2"]]
    param_names = ["simd"]
    timeout = 300
    number = 1
    repeat = 2

    def setup(self, simd):
        self.use(simd)
        self.top, y0 = _dispersed_tops()
        self.y0 = y0[:20000]
        self.events = [rotode.events.Component("w", 0, value=0.0),
                       rotode.events.AxisAngle([0, 0, 1], [0, 0, 1], np.radians(10.0))]

    def time_dop853(self, simd):
        rotode.integrate(self.top, (0.0, 1.0), self.y0, method="dop853", rtol=1e-9, atol=1e-11,
                         t_eval=[0.0, 1.0], events=self.events, workers=1)


class BatchFixedPairs(_OnLaneSet):
    """dop853 and rkmk8 given dt = 0.01 (fixed steps) on 2 x 10^4 tops with dispersed rates over
    (0, 1), one thread, the rows at t0 and tf: the driver's `_erk_fixed` of one body at a time
    ("off") against the pairs' fixed-grid lanes (AVX2's kernel, rotode/_lanes_erk.hpp
    `erk_fixed_block`)."""

    params = [["off", "avx2"], ["dop853", "rkmk8"]]
    param_names = ["simd", "method"]
    timeout = 300
    number = 1
    repeat = 2

    def setup(self, simd, method):
        self.use(simd)
        self.top, y0 = _dispersed_tops()
        self.y0 = y0[:20000]

    def time_integrate(self, simd, method):
        rotode.integrate(self.top, (0.0, 1.0), self.y0, method=method, dt=0.01,
                         t_eval=[0.0, 1.0], workers=1)


class BatchAdaptiveKinematics(_OnLaneSet):
    """dop853, rkmk8 and the adaptive magnus8 (rtol 1e-9, atol 1e-11) on 2 x 10^4 orientations
    under dispersed constant body rates over (0, 10), one thread, the rows at t0 and tf: the
    specialised engine's run of one body at a time ("off") against the adaptive lanes (AVX2's
    kernel, which AVX-512 machines run too)."""

    params = [["off", "avx2"], ["dop853", "rkmk8", "magnus8"]]
    param_names = ["simd", "method"]
    timeout = 600
    number = 1
    repeat = 2

    def setup(self, simd, method):
        self.use(simd)
        rng = np.random.default_rng(0)
        self.rates = rng.normal(size=(20000, 3))
        self.q0 = np.tile([1.0, 0.0, 0.0, 0.0], (20000, 1))

    def time_integrate(self, simd, method):
        rotode.integrate(self.rates, (0.0, 10.0), self.q0, method=method, rtol=1e-9,
                         atol=1e-11, t_eval=[0.0, 10.0], workers=1)


class BatchFixedKinematics(BatchAdaptiveKinematics):
    """magnus_ca (its rotation-angle bound checked per lane), magnus4 and rk4 at dt = 0.01 on
    2 x 10^4 orientations under dispersed constant body rates over (0, 10), one thread, the
    rows at t0 and tf: the driver's one body at a time ("off") against the AVX2 lanes."""

    params = [["off", "avx2"], ["magnus_ca", "magnus4", "rk4"]]

    def time_integrate(self, simd, method):
        rotode.integrate(self.rates, (0.0, 10.0), self.q0, method=method, dt=0.01,
                         t_eval=[0.0, 10.0], workers=1)


class BatchAgainstLoop:
    """rotode's rk4 time (its best instruction set) over the hand-written AVX2 loop's, and
    workers=1 over workers=2.  Skipped where the loop cannot be built."""

    timeout = 300

    def setup(self):
        try:
            spec = importlib.util.spec_from_file_location("rotode_bench_batch_build", BUILD)
            build = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(build)
            self.loop = build.batch_loop()
        except Exception as exc:       # (asv reports a benchmark whose setup raises this as
            print(f"BatchAgainstLoop skipped: the AVX2 loop could not be built ({exc})",
                  file=sys.stderr)     # skipped, not failed)
            raise NotImplementedError("benchmarks/engine/batch_avx2.cpp could not be built") \
                from exc
        self.top, self.y0 = _tops()
        self.t = np.arange(STEPS + 1) * DT
        self.params = np.array([1.0, 1.0, 0.5, 9.81, 0.1])

    def _best(self, call):
        best = np.inf
        for _ in range(2):
            start = time.perf_counter()
            call()
            best = min(best, time.perf_counter() - start)
        return best

    def track_time_ratio_to_avx2_loop(self):
        return (self._best(lambda: _rk4(self.top, self.y0))
                / self._best(lambda: self.loop.run(self.y0, self.params, self.t)))

    track_time_ratio_to_avx2_loop.unit = "ratio"

    def track_workers_2_speedup(self):
        return (self._best(lambda: _rk4(self.top, self.y0))
                / self._best(lambda: _rk4(self.top, self.y0, workers=2)))

    track_workers_2_speedup.unit = "ratio"
