"""Seeded problem set-up shared by every benchmark.

The problems and NumPy baselines are rotode.studies' (one definition for the demo, the studies
and these benchmarks): Rucker 2018 eq. 29, w(t) = A sin(B t + phase_i) in the body frame; the
T-handle of Mizerski 2020 sec. 11; the Lagrange top of Rucker 2018 sec. IV.
"""
import numpy as np

from rotode.studies import SEED004_A as A
from rotode.studies import SEED004_B as B
from rotode.studies import SEED004_PHASE as PHASE
from rotode.studies import (
    T_HANDLE,
    TOP_INERTIA,
    TOP_W0,
    angle_error_deg,
    numpy_quaternion_kinematics,
    numpy_rigid_body,
    seed004_omega,
)

SEED = 20261121


def rotation_vectors(n, scale=1.0):
    """n seeded rotation vectors with normally distributed components (times ``scale``)."""
    return scale * np.random.default_rng(SEED).normal(size=(n, 3))


def quaternions(n):
    """n seeded non-unit quaternions."""
    return np.random.default_rng(SEED + 1).normal(size=(n, 4))


T_END = 100.0
# spun near the middle axis
T_HANDLE_W0 = np.array([0.05, 5.0, 0.05])

__all__ = ["A", "B", "PHASE", "T_END", "T_HANDLE", "T_HANDLE_W0", "TOP_INERTIA", "TOP_W0",
           "angle_error_deg", "numpy_quaternion_kinematics", "numpy_rigid_body",
           "quaternions", "rotation_vectors", "seed004_omega", "seed004_reference"]


_CACHE = {}


def seed004_reference():
    """Unit quaternion at t = 100 of the Rucker 2018 benchmark (DOP853, rtol 1e-13, NumPy rhs)."""
    if "seed004" not in _CACHE:
        from scipy.integrate import solve_ivp

        sol = solve_ivp(numpy_quaternion_kinematics, (0.0, T_END), [1.0, 0, 0, 0],
                        method="DOP853", rtol=1e-13, atol=1e-14)
        q = sol.y[:, -1]
        _CACHE["seed004"] = q / np.linalg.norm(q)
    return _CACHE["seed004"]
