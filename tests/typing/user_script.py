"""A user's typed script: mypy must see rotode's real types, not ``Any``.

tests/test_typing.py runs mypy on this file and compares each ``reveal_type`` with the comment
on its line: ``# reveal: T`` is the exact type mypy must reveal, ``# reveal~: T`` a part of it
(for NumPy's types, spelled differently by NumPy versions).  The script also runs as written.
"""
import sys

import numpy as np
from scipy.integrate import solve_ivp as scipy_solve_ivp  # type: ignore[import-untyped]

import rotode
from rotode import methods, quaternion, so3, steps

if sys.version_info >= (3, 11):
    from typing import reveal_type
else:
    from typing_extensions import reveal_type

res = rotode.integrate([0.0, 0.0, 1.0], (0, 1), [1, 0, 0, 0], method="magnus4", dt=0.1)
reveal_type(res)  # reveal: rotode.integration.IntegrationResult
reveal_type(res.status)  # reveal: int
reveal_type(res.t)  # reveal~: numpy.dtype[numpy.float64]

top = rotode.RigidBody([1.0, 1.0, 0.5], torque=rotode.torque.Gravity(1.0, 1.0, [0, 0, 1]))
reveal_type(top)  # reveal: rotode.rhs.RigidBody
reveal_type(top(0.0, [1.0, 0, 0, 0, 1.5, 0, 1.0]))  # reveal~: numpy.dtype[numpy.float64]
batch = rotode.integrate(top, (0, 1), np.tile([1.0, 0, 0, 0, 1.5, 0, 1.0], (2, 1)),
                         method="rkmk5", rtol=1e-8, atol=1e-10)
reveal_type(batch)  # reveal: rotode.integration.IntegrationResult

sol = rotode.solve_ivp(top, (0, 1), [1.0, 0, 0, 0, 1.5, 0, 1.0], method="DOP853", rtol=1e-8)
reveal_type(sol)  # reveal: rotode.ivp.OdeResult
reveal_type(sol.success)  # reveal: bool
reveal_type(sol.y)  # reveal~: numpy.dtype[numpy.float64]

native = scipy_solve_ivp(top, (0, 1), [1.0, 0, 0, 0, 1.5, 0, 1.0], method=rotode.RKMK5)
reveal_type(rotode.as_rotation(native).magnitude())  # reveal: Any

reveal_type(quaternion.multiply([1, 0, 0, 0], [0, 1, 0, 0]))  # reveal~: numpy.ndarray
reveal_type(so3.exp([0.0, 0.0, 1.0]))  # reveal~: numpy.dtype[numpy.float64]
w = [0.0, 0.0, 1.0]
reveal_type(steps.rk4([1.0, 0, 0, 0], w, w, w, 0.1))  # reveal~: numpy.ndarray
reveal_type(methods.get("rk4"))  # reveal: rotode.methods.Method
reveal_type(rotode.get_include())  # reveal: str
