"""Native steppers (rotode.integrate): cost per step, batched throughput, and the accuracy each
run buys (angular error against an independent reference, invariant drift, evaluations)."""
import inspect

import numpy as np

import rotode
from rotode import dynamic, implicit, integration, steps
from rotode.exact import free_rigid_body

from .common import T_HANDLE, T_HANDLE_W0, angle_error_deg, seed004_omega

try:
    from rotode.methods import get as _spec

    def _adaptive(method):
        return _spec(method).adaptive

    def _pair(method):              # an embedded Runge-Kutta pair (no fixed-step history)
        spec = _spec(method)
        return spec.adaptive and spec.tableau is not None
except ImportError:               # rotode before the method registry
    def _adaptive(method):
        return False

    _pair = _adaptive

# asv runs this suite against older commits too, and compares parameters by position: the
# fixed-step lists keep their order across versions (the methods that gained error control
# later, magnus6/magnus8, stay in them), the pairs have a benchmark of their own
KINEMATIC = [m for m in integration.methods_for("kinematics") if not _pair(m)]
RIGID = [m for m in integration.methods_for("rigid body") if not _pair(m)]
ADAPTIVE = [m for m in integration.METHODS if _adaptive(m)]
# one method per rigid-body kernel family: classical RK4, the highest-order Crouch-Grossman
# method, the first implicit method
BATCH = ["rk4", sorted(m for m in dynamic.METHODS if m.startswith("cg"))[-1],
         implicit.METHODS[0]]
T_KIN = 10.0
_REF = {}


def _seed004_reference_at(t):
    if t not in _REF:
        from scipy.integrate import solve_ivp

        from .common import numpy_quaternion_kinematics

        sol = solve_ivp(numpy_quaternion_kinematics, (0.0, t), [1.0, 0, 0, 0], method="DOP853",
                        rtol=1e-13, atol=1e-14)
        q = sol.y[:, -1]
        _REF[t] = q / np.linalg.norm(q)
    return _REF[t]


class KinematicSingleBody:
    """Rucker 2018 benchmark over 10 s at dt = 0.01 (1000 steps), one body, only the end kept."""

    params = KINEMATIC
    param_names = ["method"]

    def setup(self, method):
        self.source = seed004_omega()

    def _run(self, method):
        return rotode.integrate(self.source, (0.0, T_KIN), [1.0, 0, 0, 0], method=method,
                                dt=0.01, save_every=10**9)

    def time_integrate_1000_steps(self, method):
        self._run(method)

    def track_error_deg(self, method):
        return angle_error_deg(self._run(method).q[-1], _seed004_reference_at(T_KIN))

    track_error_deg.unit = "degrees"

    def track_w_evaluations(self, method):
        return int(self._run(method).stats["nfev"])

    track_w_evaluations.unit = "evaluations"


class KinematicBatch:
    """N = 1e5 bodies with constant per-body rates, 100 steps, 1 and 2 workers."""

    params = (["magnus_ca", "magnus4", "rk4"], [1, 2])
    param_names = ["method", "workers"]
    timeout = 120

    def setup(self, method, workers):
        rng = np.random.default_rng(7)
        self.w = rng.normal(size=(100_000, 3))
        self.q0 = np.tile([1.0, 0.0, 0.0, 0.0], (100_000, 1))

    def _run(self, method, workers):
        return rotode.integrate(self.w, (0.0, 1.0), self.q0, method=method, dt=0.01,
                                save_every=10**9, workers=workers)

    def time_100_steps(self, method, workers):
        self._run(method, workers)

    def peakmem_100_steps(self, method, workers):
        self._run(method, workers)

    def track_max_norm_drift(self, method, workers):
        return float(np.abs(np.linalg.norm(self._run(method, workers).q[:, -1], axis=1)
                            - 1).max())

    track_max_norm_drift.unit = "| |q| - 1 |"


def _nodes(n, k, rng):
    return [rng.normal(size=(n, 3)) for _ in range(k)]


def _step_call(name):
    """One single-step call of rotode.steps, in place, with as many rates as it takes."""
    step = getattr(steps, name)
    n_rates = sum(p.kind is p.POSITIONAL_OR_KEYWORD
                  for p in inspect.signature(step).parameters.values()) - 3   # q, dt, out
    return lambda q, r, dt: step(q, *r[:n_rates], dt, out=q)


STEP_CALLS = {name: _step_call(name) for name in steps.__all__ if name != "NODES"}


class SingleStepInPlace:
    """rotode.steps: one in-place step over N bodies (the game-engine / controller API)."""

    params = (list(STEP_CALLS), [1, 100_000])
    param_names = ["step", "n"]

    def setup(self, step, n):
        rng = np.random.default_rng(3)
        self.q = np.tile([1.0, 0.0, 0.0, 0.0], (n, 1))
        self.rates = _nodes(n, 4, rng)

    def time_step(self, step, n):
        STEP_CALLS[step](self.q, self.rates, 0.01)


class RigidBodySingle:
    """T-handle spun near its intermediate axis, 10 s at dt = 1/60 s, one body."""

    params = RIGID
    param_names = ["method"]

    def setup(self, method):
        self.body = rotode.RigidBody(T_HANDLE)
        self.y0 = np.concatenate([[1.0, 0.0, 0.0, 0.0], T_HANDLE_W0])

    def _run(self, method):
        return rotode.integrate(self.body, (0.0, 10.0), self.y0, method=method, dt=1 / 60)

    def time_integrate_600_steps(self, method):
        self._run(method)

    def track_error_deg(self, method):
        res = self._run(method)
        q, _ = free_rigid_body(T_HANDLE, T_HANDLE_W0, res.t[-1:], q0=self.y0[:4])
        return angle_error_deg(res.q[-1], q[0])

    track_error_deg.unit = "degrees"

    def track_max_relative_energy_error(self, method):
        res = self._run(method)
        e = self.body.energy(res.y.T)
        return float(np.abs(e / e[0] - 1).max())

    track_max_relative_energy_error.unit = "relative"


class RigidBodyBatch:
    """N = 1e4 T-handles with random rates, 100 steps, 1 and 2 workers."""

    params = (BATCH, [1, 2])
    param_names = ["method", "workers"]
    timeout = 120

    def setup(self, method, workers):
        rng = np.random.default_rng(11)
        n = 10_000
        self.body = rotode.RigidBody(T_HANDLE)
        self.y0 = np.column_stack([np.tile([1.0, 0, 0, 0], (n, 1)), rng.normal(size=(n, 3))])

    def _run(self, method, workers):
        return rotode.integrate(self.body, (0.0, 1.0), self.y0, method=method, dt=0.01,
                                save_every=10**9, workers=workers)

    def time_100_steps(self, method, workers):
        self._run(method, workers)

    def peakmem_100_steps(self, method, workers):
        self._run(method, workers)


class ImplicitMidpointNewton:
    """Newton iterations and Kantorovich sub-steps of implicit midpoint, from calm to violent
    steps (dt |L| from 0.1 to 50 for the T-handle)."""

    params = [0.1, 5.0, 50.0]
    param_names = ["dt_L"]

    def setup(self, dt_l):
        self.body = rotode.RigidBody(T_HANDLE)
        L = dt_l * np.array([0.6, 0.8, 0.0])
        self.y0 = np.concatenate([[1.0, 0.0, 0.0, 0.0], L / T_HANDLE])

    def _run(self):
        return rotode.integrate(self.body, (0.0, 1.0), self.y0, method="implicit_midpoint",
                                dt=1.0)

    def time_one_step(self, dt_l):
        self._run()

    def track_newton_iterations_mean(self, dt_l):
        return float(self._run().stats["newton_iter_mean"])

    track_newton_iterations_mean.unit = "iterations"

    def track_substeps(self, dt_l):
        return int(self._run().stats["n_substeps"])

    track_substeps.unit = "sub-steps"


class AdaptiveSolve:
    """Error-controlled runs over 100 s: the Rucker 2018 kinematics and the Lagrange top of
    Rucker 2018 sec. IV, at a loose and a tight tolerance (steps chosen by the method); the
    adaptive Magnus methods integrate the kinematics only."""

    params = (ADAPTIVE, ["kinematics", "top"], [1e-6, 1e-10])
    param_names = ["method", "case", "rtol"]

    def setup(self, method, case, rtol):
        if case == "kinematics":
            self.model, self.y0 = seed004_omega(), np.array([1.0, 0, 0, 0])
        elif "rigid body" not in _spec(method).models:
            raise NotImplementedError(f"{method} integrates kinematics only")   # asv: skipped
        else:
            self.model = rotode.RigidBody([1.0, 1.0, 0.5],
                                          torque=rotode.torque.Gravity(1.0, 1.0, [0, 0, 1]))
            self.y0 = np.array([1.0, 0, 0, 0, 1.5, 0.0, 1.0])

    def _run(self, method, rtol):
        return rotode.integrate(self.model, (0.0, 100.0), self.y0, method=method, rtol=rtol,
                                atol=rtol * 1e-3)

    def time_solve(self, method, case, rtol):
        self._run(method, rtol)

    def track_steps(self, method, case, rtol):
        return int(self._run(method, rtol).stats["n_steps"])

    track_steps.unit = "steps"


class SolveIvp:
    """``rotode.solve_ivp`` (the compiled loop) beside ``scipy.integrate.solve_ivp`` on the same
    rotode right-hand side: the Rucker 2018 kinematics over 100 s at rtol 1e-10, every step
    returned, with and without dense output (the same accepted steps in both)."""

    params = (["RK45", "DOP853"], [False, True])
    param_names = ["method", "dense_output"]

    def setup(self, method, dense_output):
        if not hasattr(rotode, "solve_ivp"):
            raise NotImplementedError("rotode.solve_ivp is newer than this commit")
        self.rhs = rotode.QuaternionKinematics(seed004_omega())
        self.kw = dict(method=method, rtol=1e-10, atol=1e-12, dense_output=dense_output)

    def time_rotode(self, method, dense_output):
        rotode.solve_ivp(self.rhs, (0.0, 100.0), [1.0, 0, 0, 0], **self.kw)

    def time_scipy(self, method, dense_output):
        from scipy.integrate import solve_ivp

        solve_ivp(self.rhs, (0.0, 100.0), [1.0, 0, 0, 0], **self.kw)

    def track_steps(self, method, dense_output):
        return len(rotode.solve_ivp(self.rhs, (0.0, 100.0), [1.0, 0, 0, 0], **self.kw).t) - 1

    track_steps.unit = "steps"


class Events:
    """The cost of events (rotode.events) on error-controlled runs over 100 s: the T-handle's
    w_y sign changes (10 occurrences, 5 each way, two compiled events), the Lagrange top's
    60 degree tilt crossings (32 occurrences) and the 60 degree tilt crossings of Rucker's
    gyro (kinematics, 30 occurrences), none / compiled / a Python function, with dop853 and
    the group method rkmk8.  Compiled events cost about +7 % (T-handle), +13 % (top) and
    +18..21 % (gyro) with dop853 over none, +6/+13/+27 % with rkmk8 (docs/events.md)."""

    params = (["t-handle", "top", "gyro"], ["none", "compiled", "python"])
    param_names = ["case", "events"]

    def setup(self, case, events):
        if not hasattr(rotode, "events"):
            raise NotImplementedError("rotode.events is newer than this commit")
        ev = rotode.events
        self.options = {}
        if case == "t-handle":
            self.model = rotode.RigidBody(T_HANDLE)
            self.y0 = np.r_[1.0, 0, 0, 0, T_HANDLE_W0]
            compiled = [ev.Component("w", 1, 0.0, direction=-1),
                        ev.Component("w", 1, 0.0, direction=+1)]

            def python(t, y):
                return y[5]
        elif case == "top":
            self.model = rotode.RigidBody([1.0, 1.0, 0.5],
                                          torque=rotode.torque.Gravity(1.0, 1.0, [0, 0, 1]))
            self.y0 = np.array([1.0, 0, 0, 0, 1.5, 0.0, 1.0])
            compiled = [ev.AxisAngle([0, 0, 1], [0, 0, 1], np.radians(60), direction=+1)]

            def python(t, y):
                q = y[:4] / np.linalg.norm(y[:4])
                return 0.5 - (1 - 2 * (q[1] ** 2 + q[2] ** 2))

            python.direction = +1
        else:
            self.model = rotode.omega.Sinusoid(amplitude=np.pi / 2, rate=2 * np.pi / 10,
                                               phase=[0, 2 * np.pi / 3, 4 * np.pi / 3])
            self.y0 = np.array([1.0, 0, 0, 0])
            self.options = {"frame": "body"}
            compiled = [ev.AxisAngle([0, 0, 1], [0, 0, 1], np.radians(60))]

            def python(t, y):
                q = y[:4] / np.linalg.norm(y[:4])
                return 0.5 - (1 - 2 * (q[1] ** 2 + q[2] ** 2))
        self.events = {"none": None, "compiled": compiled, "python": python}[events]

    def _run(self, method):
        rotode.integrate(self.model, (0.0, 100.0), self.y0, method=method, rtol=1e-10,
                         events=self.events, **self.options)

    def time_dop853(self, case, events):
        self._run("dop853")

    def time_rkmk8(self, case, events):
        self._run("rkmk8")


class Ensemble:
    """An ensemble of 10^4 Lagrange tops for 2 s with rk4 (dt = 0.01): one shared model, per-body
    inertias and centres of mass (NumPy), and the per-body model on dask arrays (4 chunks, the
    threaded scheduler, so dask's own cost shows; benchmarks/bench_dask.py times a cluster)."""

    params = (["shared", "per-body", "dask"],)
    param_names = ["model"]

    def setup(self, kind):
        if not hasattr(rotode.RigidBody([1.0, 1.0, 1.0]), "n_bodies"):
            raise NotImplementedError("per-body parameters are newer than this commit")
        n = 10_000
        rng = np.random.default_rng(11)
        self.y0 = np.tile([1.0, 0, 0, 0, 0.0, 0.0, 5.0], (n, 1))
        self.y0[:, 4:] += 0.5 * rng.normal(size=(n, 3))
        inertia = np.array([1.0, 1.0, 0.5]) * rng.uniform(0.95, 1.05, (n, 3))
        com = np.c_[np.zeros((n, 2)), rng.uniform(0.45, 0.55, n)]
        if kind == "shared":
            self.model = rotode.RigidBody([1.0, 1.0, 0.5],
                                          torque=rotode.torque.Gravity(1.0, 9.81, [0, 0, 0.5]))
        elif kind == "per-body":
            self.model = rotode.RigidBody(inertia, torque=rotode.torque.Gravity(1.0, 9.81, com))
        else:
            try:
                import dask.array as da
            except ImportError:
                raise NotImplementedError("dask is not installed") from None
            self.model = rotode.RigidBody(da.from_array(inertia, chunks=2500),
                                          torque=rotode.torque.Gravity(
                                              1.0, 9.81, da.from_array(com, chunks=2500)))
            self.y0 = da.from_array(self.y0, chunks=(2500, 7))
        self.kind = kind

    def time_rk4(self, kind):
        res = rotode.integrate(self.model, (0.0, 2.0), self.y0, method="rk4", dt=0.01,
                               t_eval=[0.0, 2.0])
        if kind == "dask":
            res.compute(scheduler="threads")
