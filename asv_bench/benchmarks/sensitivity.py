"""The cost of an exact sensitivity (docs/sensitivity.md): the upright Lagrange top over
T = 10 s at rtol 1e-10, atol 1e-12, plain and with its full 6x6 ``y0`` sensitivity
(benchmarks/bench_sensitivity.py measures central differences and jax beside them)."""
import numpy as np

import rotode

from .batch import _OnLaneSet
from .common import TOP_INERTIA, TOP_W0


class SensitivityTop:
    """One run of `method`, plain or with ``sensitivity=["y0"]``."""

    params = (["dop853", "rkmk8"], [False, True])
    param_names = ["method", "sensitivity"]

    def setup(self, method, sensitivity):
        gravity = rotode.torque.Gravity(1.0, 1.0, [0.0, 0.0, 1.0])
        self.top = rotode.RigidBody(TOP_INERTIA, torque=gravity)
        self.y0 = np.concatenate([[1.0, 0.0, 0.0, 0.0], TOP_W0])
        self.sens = ["y0"] if sensitivity else None

    def time_run(self, method, sensitivity):
        rotode.integrate(self.top, (0.0, 10.0), self.y0, method=method, rtol=1e-10,
                         atol=1e-12, sensitivity=self.sens)


class SensitivityOnLaneSet(_OnLaneSet):
    """`SensitivityTop`'s run with its sensitivity on each instruction set of the tangent
    entries this CPU runs (the baseline "sse2", also ARM's; "avx2"; "avx512"): the dual numbers
    of each set must stay in its registers (docs/architecture.md), a regression there is a
    several-fold one."""

    params = (["dop853", "rkmk8"], ["sse2", "avx2", "avx512"])
    param_names = ["method", "simd"]

    def setup(self, method, simd):
        self.use(simd)
        gravity = rotode.torque.Gravity(1.0, 1.0, [0.0, 0.0, 1.0])
        self.top = rotode.RigidBody(TOP_INERTIA, torque=gravity)
        self.y0 = np.concatenate([[1.0, 0.0, 0.0, 0.0], TOP_W0])

    def teardown(self, method, simd):
        super().teardown(simd)

    def time_run(self, method, simd):
        rotode.integrate(self.top, (0.0, 10.0), self.y0, method=method, rtol=1e-10,
                         atol=1e-12, sensitivity=["y0"])
