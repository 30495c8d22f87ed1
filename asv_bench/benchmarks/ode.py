"""Users' own equations (``rotode.ODE``): the 16-state spacecraft of benchmarks/spacecraft.py
(two-body orbit, gravity gradient, full inertia, three reaction wheels under a PD law to LVLH,
T = 3600 s), its right-hand side a numba ``cfunc`` (or the same source as a Python function);
the final attitude's error against benchmarks/results/spacecraft_reference.json.
benchmarks/bench_ode.py measures the peers (CyRK, SciPy).  Every case is skipped (its setup
raises NotImplementedError) where rotode has no ``ODE`` yet or numba is not installed."""
import importlib.util
import json
import sys
import time
from pathlib import Path

import numpy as np

import rotode

# benchmarks/ of this checkout (asv imports this suite from the clone)
BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
_MODULES = {}


def _import(name, path):
    if name not in _MODULES:
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        _MODULES[name] = module
    return _MODULES[name]


def _spacecraft():
    """(benchmarks/spacecraft.py as a module, the reference final quaternion); raises
    NotImplementedError (asv: skipped) without rotode.ODE, numba or the reference."""
    if not hasattr(rotode, "ODE"):
        raise NotImplementedError("rotode.ODE (users' equations) is not in this build")
    try:
        import numba  # noqa: F401
    except ImportError:
        raise NotImplementedError("numba is not installed") from None
    reference = BENCHMARKS / "results" / "spacecraft_reference.json"
    if not reference.exists():
        raise NotImplementedError(f"no {reference} (python benchmarks/bench_ode.py --reference)")
    sc = _import("rotode_bench_spacecraft", BENCHMARKS / "spacecraft.py")
    return sc, np.array(json.loads(reference.read_text())["q"])


def _model(sc, python=False, params=None):
    p = sc.params() if params is None else params
    if python:
        return rotode.ODE(sc.py_fun, n=sc.N_STATE, quaternions=[sc.QUATERNION], args=(p,))
    return rotode.ODE(sc.make_cfunc(), n=sc.N_STATE, quaternions=[sc.QUATERNION], params=p)


def _final(res):
    y = getattr(res, "y_final", None)
    return np.asarray(res.y[-1] if y is None else y)


class SpacecraftODE:
    """One run over T = 3600 s, the cfunc right-hand side, atol = rtol * spacecraft.SCALE
    (rtol 1e-6: about 1e-6 deg for DOP853; 1e-9: about 1e-10 deg), only the final state
    kept."""

    params = (["rkmk8", "dop853", "dopri5"], [1e-6, 1e-9])
    param_names = ["method", "rtol"]
    timeout = 120

    def setup(self, method, rtol):
        self.sc, self.ref = _spacecraft()
        self.model, self.y0 = _model(self.sc), self.sc.initial_state()
        self.kw = dict(method=method, rtol=rtol, atol=self.sc.atol_of(rtol))
        rotode.integrate(self.model, (0.0, self.sc.T_END), self.y0, **self.kw)

    def time_integrate(self, method, rtol):
        rotode.integrate(self.model, (0.0, self.sc.T_END), self.y0, **self.kw)

    def track_attitude_error_deg(self, method, rtol):
        res = rotode.integrate(self.model, (0.0, self.sc.T_END), self.y0, **self.kw)
        return self.sc.angle_deg(_final(res)[6:10], self.ref)

    track_attitude_error_deg.unit = "deg"


class SpacecraftODEPython:
    """The same run with the right-hand side as a Python function (``args=(p,)``), rtol 1e-8;
    and |q| - 1 at T (rkmk8 keeps it at rounding; DOP853 drifts)."""

    params = [["rkmk8", "dop853"]]
    param_names = ["method"]
    timeout = 120

    def setup(self, method):
        self.sc, self.ref = _spacecraft()
        self.model, self.y0 = _model(self.sc, python=True), self.sc.initial_state()
        self.kw = dict(method=method, rtol=1e-8, atol=self.sc.atol_of(1e-8))

    def time_integrate_python(self, method):
        rotode.integrate(self.model, (0.0, self.sc.T_END), self.y0, **self.kw)

    def track_attitude_error_deg_python(self, method):
        res = rotode.integrate(self.model, (0.0, self.sc.T_END), self.y0, **self.kw)
        return self.sc.angle_deg(_final(res)[6:10], self.ref)

    track_attitude_error_deg_python.unit = "deg"

    def track_norm_drift(self, method):
        res = rotode.integrate(self.model, (0.0, self.sc.T_END), self.y0, **self.kw)
        return abs(float(np.linalg.norm(_final(res)[6:10])) - 1.0)

    track_norm_drift.unit = "|q| - 1"


class SpacecraftODEBatch:
    """64 spacecraft, per-body parameters (the inertia scaled by 0.5 .. 1.5 with the gains,
    params of shape (64, N_PARAMS)), rkmk8 at rtol 1e-8, on 1 and 2 workers."""

    params = [[1, 2]]
    param_names = ["workers"]
    timeout = 120

    def setup(self, workers):
        sc, _ = _spacecraft()
        self.sc = sc
        scales = np.linspace(0.5, 1.5, 64)
        p = np.stack([sc.params(inertia=s * sc.INERTIA) for s in scales])
        self.model = _model(sc, params=p)
        self.y0 = np.tile(sc.initial_state(), (64, 1))
        self.kw = dict(method="rkmk8", rtol=1e-8, atol=sc.atol_of(1e-8))
        rotode.integrate(self.model, (0.0, sc.T_END), self.y0, workers=workers, **self.kw)

    def time_batch(self, workers):
        rotode.integrate(self.model, (0.0, self.sc.T_END), self.y0, workers=workers,
                         **self.kw)


class SpacecraftAgainstCysolve:
    """rotode's dop853 time over CyRK's ``cysolve_ivp`` DOP853 (the same equations in Cython,
    benchmarks/engine/cyrk_spacecraft.pyx), both at rtol 3e-8 (about 1e-8 deg): alternated
    batches, the minimum of each.  Skipped where the Cython module cannot be built."""

    timeout = 180

    def setup(self):
        self.sc, _ = _spacecraft()
        try:
            build = _import("rotode_bench_engine_build", BENCHMARKS / "engine" / "build.py")
            self.cy = build.cyrk("cyrk_spacecraft")
        except Exception as exc:       # (asv reports a benchmark whose setup raises this as
            print(f"SpacecraftAgainstCysolve skipped: cyrk_spacecraft not built ({exc})",
                  file=sys.stderr)     # skipped, not failed)
            raise NotImplementedError("benchmarks/engine/cyrk_spacecraft.pyx not built") \
                from exc
        self.model, self.y0, self.p = _model(self.sc), self.sc.initial_state(), self.sc.params()
        self.rtol = 3e-8

    def track_time_ratio_to_cysolve_ivp(self):
        sc, atol = self.sc, self.sc.atol_of(self.rtol)
        best_rotode = best_cy = np.inf
        for _ in range(7):
            start = time.perf_counter()
            for _ in range(10):
                rotode.integrate(self.model, (0.0, sc.T_END), self.y0, method="dop853",
                                 rtol=self.rtol, atol=atol)
            best_rotode = min(best_rotode, (time.perf_counter() - start) / 10)
            start = time.perf_counter()
            for _ in range(10):
                self.cy.solve(self.p, 0.0, sc.T_END, self.y0, self.rtol, atol, "DOP853")
            best_cy = min(best_cy, (time.perf_counter() - start) / 10)
        return best_rotode / best_cy

    track_time_ratio_to_cysolve_ivp.unit = "ratio"


class SpacecraftODEBatchPerBody:
    """A batch of spacecraft with per-body parameters (benchmarks/spacecraft.py `ensemble`:
    inertia, gains and wheel momenta of each body its own, params (N, N_PARAMS)), rkmk8 at
    rtol 1e-8 over T = 3600 s: the time on 1 and 2 workers and the speed-up of 2 workers
    (benchmarks/bench_ode_batch.py runs 10^4 of them; here 2000)."""

    params = [[1, 2]]
    param_names = ["workers"]
    timeout = 300
    n = 2000

    def setup(self, workers):
        sc, _ = _spacecraft()
        self.sc = sc
        self.y0, P = sc.ensemble(self.n)
        self.model = _model(sc, params=P)
        self.kw = dict(method="rkmk8", rtol=1e-8, atol=sc.atol_of(1e-8), t_eval=[sc.T_END])

    def _run(self, workers):
        return rotode.integrate(self.model, (0.0, self.sc.T_END), self.y0, workers=workers,
                                **self.kw)

    def time_batch_per_body_params(self, workers):
        self._run(workers)

    def track_speedup_over_one_worker(self, workers):
        best = {1: np.inf, workers: np.inf}
        for _ in range(2):
            for w in best:
                start = time.perf_counter()
                self._run(w)
                best[w] = min(best[w], time.perf_counter() - start)
        return best[1] / best[workers]

    track_speedup_over_one_worker.unit = "x"


class RigidBodyAsODE:
    """The built-in rigid body written as a user's ODE (benchmarks/rigid_ode.py, a numba
    cfunc, params = inertia and a constant torque): its time over the built-in
    ``rotode.RigidBody``'s for each generic method (one body, T = 20 s; alternated batches,
    the minimum of each; benchmarks/bench_ode_rigid.py prints the table)."""

    params = [list(rotode.methods.names("ode")) if hasattr(rotode, "ODE") else []]
    param_names = ["method"]
    timeout = 120

    def setup(self, method):
        _spacecraft()                    # (skipped without rotode.ODE or numba)
        rb = _import("rotode_bench_rigid_ode", BENCHMARKS / "rigid_ode.py")
        kw, opts = rb.settings(method)
        inertia, torque = np.array([1.0, 2.0, 2.5]), np.array([0.05, -0.02, 0.1])
        y0 = np.array([1.0, 0.0, 0.0, 0.0, 0.3, 1.1, -0.4])
        ode = rotode.ODE(rb.make_cfunc(), n=7, quaternions=[0],
                         params=rb.params(inertia, torque))
        self.calls = [
            lambda: rotode.integrate(rb.built_in(inertia, torque), (0.0, 20.0), y0,
                                     method=method, **kw),
            lambda: rotode.integrate(ode, (0.0, 20.0), y0, method=method, **kw, **opts)]
        for call in self.calls:
            call()

    def time_ode(self, method):
        self.calls[1]()

    def track_time_ratio_to_built_in(self, method):
        best = [np.inf, np.inf]
        for _ in range(7):
            for k, call in enumerate(self.calls):
                start = time.perf_counter()
                for _ in range(10):
                    call()
                best[k] = min(best[k], (time.perf_counter() - start) / 10)
        return best[1] / best[0]

    track_time_ratio_to_built_in.unit = "ratio"
