"""Right-hand sides for solve_ivp: one call, the Jacobian, and solve_ivp end to end against the
same equations in plain NumPy (with the accuracy and evaluation counts each run buys)."""
import numpy as np
from scipy.integrate import solve_ivp

import rotode

from .common import (
    T_END,
    T_HANDLE,
    T_HANDLE_W0,
    angle_error_deg,
    numpy_quaternion_kinematics,
    numpy_rigid_body,
    seed004_omega,
    seed004_reference,
)

STATES = {
    "QuaternionKinematics": (lambda: rotode.QuaternionKinematics(seed004_omega()),
                             [0.9, 0.1, -0.3, 0.2]),
    "RigidBody": (lambda: rotode.RigidBody(T_HANDLE), [0.9, 0.1, -0.3, 0.2, 0.4, -1.0, 2.0]),
    "ExpCoordKinematics": (lambda: rotode.ExpCoordKinematics(seed004_omega()), [0.3, -0.2, 0.5]),
    "ExpCoordRigidBody": (lambda: rotode.ExpCoordRigidBody(T_HANDLE),
                          [0.3, -0.2, 0.5, 0.4, -1.0, 2.0]),
    "QuaternionSecondOrder": (lambda: rotode.QuaternionSecondOrder(T_HANDLE),
                              [1.0, 0.0, 0.0, 0.0, 0.0, 0.2, -0.5, 1.0]),
    "EulerAnglesXYZ": (lambda: rotode.EulerAnglesXYZ(T_HANDLE), [0.3, -0.2, 0.5, 0.4, -1.0, 2.0]),
    "RotationMatrix": (lambda: rotode.RotationMatrix(T_HANDLE),
                       list(np.eye(3).ravel()) + [0.4, -1.0, 2.0]),
}


class RhsCall:
    """One ``rhs(t, y)`` and one ``rhs.jac(t, y)`` per right-hand side."""

    params = list(STATES)
    param_names = ["rhs"]

    def setup(self, name):
        make, y = STATES[name]
        self.rhs = make()
        self.y = np.array(y, dtype=float)

    def time_call(self, name):
        self.rhs(1.3, self.y)

    def time_jac(self, name):
        self.rhs.jac(1.3, self.y)

    def track_jac_vs_central_difference(self, name):
        h = 1e-6
        J = self.rhs.jac(1.3, self.y)
        cols = []
        for i in range(self.y.size):
            e = np.zeros_like(self.y)
            e[i] = h
            cols.append((self.rhs(1.3, self.y + e) - self.rhs(1.3, self.y - e)) / (2 * h))
        return float(np.abs(J - np.array(cols).T).max())

    track_jac_vs_central_difference.unit = "abs"


class RhsCallNumpyBaseline:
    """The same equations in plain NumPy (what the rotode one-call ratios are measured against)."""

    def setup(self):
        self.q = np.array([0.9, 0.1, -0.3, 0.2])
        self.y = np.array([0.9, 0.1, -0.3, 0.2, 0.4, -1.0, 2.0])

    def time_quaternion_kinematics(self):
        numpy_quaternion_kinematics(1.3, self.q)

    def time_rigid_body(self):
        numpy_rigid_body(1.3, self.y)


class SolveIvpSeed004:
    """solve_ivp end to end on the Rucker 2018 benchmark, rotode rhs vs NumPy rhs, rtol 1e-10."""

    params = (["DOP853", "LSODA", "Radau"], ["rotode", "numpy"])
    param_names = ["method", "rhs"]
    timeout = 120

    def setup(self, method, rhs):
        qk = rotode.QuaternionKinematics(seed004_omega())
        self.fun = qk if rhs == "rotode" else numpy_quaternion_kinematics
        self.kw = dict(method=method, rtol=1e-10, atol=1e-12)
        if method == "Radau" and rhs == "rotode":
            self.kw["jac"] = qk.jac

    def _solve(self):
        return solve_ivp(self.fun, (0.0, T_END), [1.0, 0.0, 0.0, 0.0], **self.kw)

    def time_solve_ivp(self, method, rhs):
        self._solve()

    def track_nfev(self, method, rhs):
        return int(self._solve().nfev)

    track_nfev.unit = "evaluations"

    def track_error_deg(self, method, rhs):
        return angle_error_deg(self._solve().y[:, -1], seed004_reference())

    track_error_deg.unit = "degrees"


class SolveIvpTHandle:
    """Torque-free T-handle over 100 s with DOP853: time and the energy drift it buys."""

    params = ["rotode", "numpy"]
    param_names = ["rhs"]

    def setup(self, rhs):
        self.body = rotode.RigidBody(T_HANDLE)
        self.fun = self.body if rhs == "rotode" else numpy_rigid_body
        self.y0 = np.concatenate([[1.0, 0, 0, 0], T_HANDLE_W0])

    def _solve(self):
        return solve_ivp(self.fun, (0.0, T_END), self.y0, method="DOP853", rtol=1e-10,
                         atol=1e-12)

    def time_solve_ivp(self, rhs):
        self._solve()

    def track_relative_energy_drift(self, rhs):
        y = self._solve().y
        e = self.body.energy(y)
        return float(abs(e[-1] / e[0] - 1))

    track_relative_energy_drift.unit = "relative"


class SolveIvpPythonFunction:
    """`rotode.solve_ivp` as a drop-in: a plain Python right-hand side, which rotode hands to
    SciPy, timed beside `scipy.integrate.solve_ivp` on the same function; ``track_ratio`` is
    rotode's time over SciPy's, from alternated runs in one process (1.0: no cost)."""

    params = (["RK45", "LSODA"], ["rotode", "scipy"])
    param_names = ["method", "solver"]

    def setup(self, method, solver):
        self.solvers = {"rotode": rotode.solve_ivp, "scipy": solve_ivp}
        self.solve = self.solvers[solver]

    def _run(self, solve, method):
        return solve(numpy_quaternion_kinematics, (0.0, T_END), [1.0, 0.0, 0.0, 0.0],
                     method=method, rtol=1e-6)

    def time_solve_ivp(self, method, solver):
        self._run(self.solve, method)

    def track_ratio(self, method, solver):
        import time
        if solver == "scipy":
            return 1.0
        ratios = []
        for j in range(20):
            order = ("rotode", "scipy") if j % 2 else ("scipy", "rotode")
            spent = {}
            for name in order:
                t0 = time.perf_counter()
                self._run(self.solvers[name], method)
                spent[name] = time.perf_counter() - t0
            ratios.append(spent["rotode"] / spent["scipy"])
        return float(np.median(ratios))

    track_ratio.unit = "rotode / scipy"
