"""The engine's cost per run and per call: rotode's dop853 on the upright Lagrange top, and its
time against the hand-written C++ DOP853 of benchmarks/engine/ (the same steps and, to the bit,
the same final state; benchmarks/bench_engine.py measures the other peers)."""
import importlib.util
import sys
import time
from pathlib import Path

import numpy as np

import rotode

from .common import T_END, T_HANDLE, T_HANDLE_W0, TOP_INERTIA, TOP_W0, seed004_omega

# benchmarks/engine/build.py of this checkout (asv imports this suite from the clone)
BUILD = Path(__file__).resolve().parents[2] / "benchmarks" / "engine" / "build.py"


def _top():
    gravity = rotode.torque.Gravity(1.0, 1.0, [0.0, 0.0, 1.0])
    return (rotode.RigidBody(TOP_INERTIA, torque=gravity),
            np.concatenate([[1.0, 0.0, 0.0, 0.0], TOP_W0]))


class EngineTop:
    """One run of dop853 over T = 100 s (164 steps at rtol 1e-5, 514 at 1e-9), atol = rtol/100,
    only the final state kept."""

    params = [1e-5, 1e-9]
    param_names = ["rtol"]

    def setup(self, rtol):
        self.top, self.y0 = _top()

    def time_dop853(self, rtol):
        rotode.integrate(self.top, (0.0, T_END), self.y0, method="dop853", rtol=rtol,
                         atol=rtol / 100)


class EngineOneStep:
    """A call that takes one step (a span of 1e-3 s at rtol 1e-5): the cost of the call."""

    def setup(self):
        self.top, self.y0 = _top()

    def time_dop853_one_step(self):
        rotode.integrate(self.top, (0.0, 1e-3), self.y0, method="dop853", rtol=1e-5,
                         atol=1e-7)


class FixedStepCall:
    """A call of one fixed step on one body (a game or control loop's frame), the thin path of
    a fixed-step call: rk4 on the upright top, implicit_midpoint on the T-handle at 60 Hz,
    magnus8 under the Rucker benchmark's rates, dop853 given dt on the top (the pairs'
    fixed-grid lanes), exp2 on one 100 Hz packet of 10 gyroscope samples (``dt="samples"``);
    and the same call on the general path (``workers=None``), the cost the thin path saves."""

    params = [["rk4 top", "implicit_midpoint T-handle", "magnus8 kinematics", "dop853 top",
               "exp2 gyro packet"],
              ["thin", "general"]]
    param_names = ["case", "path"]

    def setup(self, case, path):
        self.span = None
        if case in ("rk4 top", "dop853 top"):
            self.model, self.y0 = _top()
            self.method, self.dt = case.split()[0], 0.01
        elif case == "implicit_midpoint T-handle":
            self.model = rotode.RigidBody(T_HANDLE)
            self.y0 = np.concatenate([[1.0, 0.0, 0.0, 0.0], T_HANDLE_W0])
            self.method, self.dt = "implicit_midpoint", 1.0 / 60.0
        elif case == "exp2 gyro packet":
            t = np.arange(11) * 0.01
            w = np.c_[np.sin(t), 0.5 * np.cos(t), 0.2 + 0.1 * t]
            self.model = rotode.omega.Samples(t, w, kind="previous")
            self.y0 = np.array([1.0, 0.0, 0.0, 0.0])
            self.method, self.dt, self.span = "exp2", "samples", (0.0, 0.1)
        else:
            self.model, self.y0 = seed004_omega(), np.array([1.0, 0.0, 0.0, 0.0])
            self.method, self.dt = "magnus8", 0.1
        if self.span is None:
            self.span = (0.0, self.dt)
        self.workers = 1 if path == "thin" else None

    def time_one_step(self, case, path):
        rotode.integrate(self.model, self.span, self.y0, method=self.method, dt=self.dt,
                         workers=self.workers)


class EngineAgainstLoop:
    """rotode's dop853 time over the C++ loop's (rotode's compile flags), rtol 1e-9, on the top:
    alternated batches, the minimum of each.  Skipped where the loop cannot be built (no C++
    compiler, or a checkout without benchmarks/engine)."""

    timeout = 120

    def setup(self):
        try:
            spec = importlib.util.spec_from_file_location("rotode_bench_engine_build", BUILD)
            build = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(build)
            self.loop = build.loop()
        except Exception as exc:       # (asv reports a benchmark whose setup raises this as
            print(f"EngineAgainstLoop skipped: the C++ loop could not be built ({exc})",
                  file=sys.stderr)     # skipped, not failed)
            raise NotImplementedError("the C++ loop of benchmarks/engine could not be built") \
                from exc
        self.top, self.y0 = _top()
        params = np.concatenate([TOP_INERTIA, 1.0 / TOP_INERTIA, [1.0]])   # (exact inverses)
        self.run = self.loop.prepare(build.TOP, params, (0.0, T_END), self.y0, 1e-9, 1e-11)

    def track_time_ratio_to_cpp_loop(self):
        best_rotode = best_loop = np.inf
        for _ in range(5):
            start = time.perf_counter()
            for _ in range(3):
                rotode.integrate(self.top, (0.0, T_END), self.y0, method="dop853", rtol=1e-9,
                                 atol=1e-11)
            best_rotode = min(best_rotode, (time.perf_counter() - start) / 3)
            start = time.perf_counter()
            self.run(3)
            best_loop = min(best_loop, (time.perf_counter() - start) / 3)
        return best_rotode / best_loop

    track_time_ratio_to_cpp_loop.unit = "ratio"
