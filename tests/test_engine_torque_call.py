"""The spacecraft torques on the specialised engine: `GravityGradient`, `Compiled` and `Sum`.

The engine's one-body models evaluate `Compiled` and `Sum` through their compiled `evaluate`
(rotode/_models.hpp TORQUE_CALL) and `GravityGradient` by its formula compiled in (TORQUE_GG),
with the pair's tableau compiled in; the driver's own loop (``dynamic._USE_ENGINE = False``)
evaluates each source's `evaluate` between its run-time tableau's stages.  The two are compared
to the bit (steps, counters, rows, failures), on one body and on per-body batches with threads
and every lane set (a TORQUE_CALL queue runs body by body, TORQUE_GG in the adaptive lanes); the
model's equation against the Cython kernel of `RigidBody.__call__`; and what stays off the
engine (a Python callable, a sum with one, the tangent models) stays off it.
"""
import c_library
import numpy as np
import pytest
from test_engine import _both, _same
from test_torque_spacecraft import C_SOURCE, INERTIA, N_ORBIT

import rotode
from rotode import _lanes, dynamic, torque

PAIRS = tuple(dynamic.ENGINE_PAIRS) + tuple(dynamic.ENGINE_GROUP_PAIRS)
FULL_I = np.array([[90.0, 2.0, -1.0], [2.0, 100.0, 3.0], [-1.0, 3.0, 40.0]])


@pytest.fixture(scope="module")
def clib(tmp_path_factory):
    return c_library.build(tmp_path_factory.mktemp("callc"), C_SOURCE,
                           ("damping", "damping_failing"), 4)


def _sources(clib, inertia):
    gg = torque.GravityGradient(inertia, N_ORBIT, argument_of_latitude=0.3, inclination=0.9,
                                raan=-0.4)
    return {
        "gravity_gradient": gg,
        "compiled": torque.Compiled(clib.damping, [0.02]),
        "sum": torque.Sum(gg, torque.Constant([1e-4, 0.0, -2e-4], frame="world"),
                          torque.Compiled(clib.damping, [0.01])),
    }


def _y0(n, seed=11):
    rng = np.random.default_rng(seed)
    q = rng.normal(size=(n, 4))
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    return np.c_[q, 0.01 * rng.normal(size=(n, 3))]


@pytest.mark.parametrize("name", ["gravity_gradient", "compiled", "sum"])
@pytest.mark.parametrize("inertia", ["diagonal", "full"])
def test_the_equations_are_the_cython_kernels(clib, name, inertia):
    inertia = np.diag(INERTIA) if inertia == "diagonal" else FULL_I
    for gain in (0.0, 0.5):
        body = rotode.RigidBody(inertia, torque=_sources(clib, inertia)[name], norm_gain=gain)
        for t, y in zip(np.linspace(0, 3000, 20), _y0(20), strict=True):
            y = y * np.r_[np.full(4, 1.1), np.ones(3)]          # a non-unit q
            np.testing.assert_array_equal(dynamic._engine_eval(body, t, y), body(t, y))


@pytest.mark.parametrize("method", PAIRS)
@pytest.mark.parametrize("name", ["gravity_gradient", "compiled", "sum"])
def test_runs_equal_the_drivers_loop(clib, method, name):
    for inertia in (np.diag(INERTIA), FULL_I):
        body = rotode.RigidBody(inertia, torque=_sources(clib, inertia)[name])
        for kw in ({"rtol": 1e-9}, {"rtol": 1e-6, "t_eval": np.linspace(4000, 0, 7)}):
            span = (0, 4000) if "t_eval" not in kw else (4000, 0)
            a, b = _both(body, span, _y0(1)[0], method=method, **kw)
            assert a.success
            _same(a, b)


@pytest.mark.parametrize("method", PAIRS)
@pytest.mark.parametrize("full", [False, True])
def test_per_body_batches_equal_single_runs_on_every_lane_set(method, full):
    # GravityGradient runs in the adaptive lanes (TORQUE_GG), each lane on its own orbit and
    # its own times; every body equal to its single run (one-body engine) and to the driver
    n = 9
    rng = np.random.default_rng(2)
    inertia = np.abs(rng.normal(50.0, 10.0, size=(n, 3)))
    if full:
        inertia = np.array([np.diag(i) + 0.02 * (FULL_I - np.diag(np.diag(FULL_I)))
                            for i in inertia])
    gg = torque.GravityGradient(inertia, np.linspace(1.0e-3, 1.2e-3, n),
                                argument_of_latitude=np.linspace(0, 3, n),
                                inclination=np.linspace(0.0, 1.5, n))
    model = rotode.RigidBody(inertia, torque=gg)
    y0 = _y0(n)
    kw = {"method": method, "rtol": 1e-9, "t_eval": [0, 1000, 2500.5, 3000]}
    singles = [rotode.integrate(
        rotode.RigidBody(inertia[i], torque=torque.GravityGradient(
            inertia[i], gg.mean_motion[i], argument_of_latitude=gg.argument_of_latitude[i],
            inclination=gg.inclination[i])), (0, 3000), y0[i], **kw) for i in range(n)]
    driver = _both(model, (0, 3000), y0, **kw)[1]
    before = _lanes.get()
    try:
        for isa in _lanes.available():
            _lanes.use(isa)
            for workers in (1, 2):
                res = rotode.integrate(model, (0, 3000), y0, workers=workers, **kw)
                _same(res, driver)
                lanes = isa in ("avx2", "avx512")
                assert res.stats.get("simd") == ("avx2" if lanes else None), isa
                for i, one in enumerate(singles):
                    np.testing.assert_array_equal(res.y[i], one.y)
                    np.testing.assert_array_equal(res.w[i], one.w)
    finally:
        _lanes.use(before)


FIXED = ("rk3", "rk4", "ab3", "lie_euler", "cg1", "cg2", "cg3")


@pytest.mark.parametrize("method", FIXED)
@pytest.mark.parametrize("full", [False, True])
def test_fixed_step_gravity_gradient_batches_run_in_the_lanes(method, full):
    # GravityGradient in the fixed-step lane kernels (TORQUE_GG at the step's nodes t0,
    # t0 + h/2, t0 + h, or a Crouch-Grossman stage's t0 + c h): every body equal to its single
    # run and the batch to the driver's own step (lanes "off"), on every lane set, 1 and 2
    # threads, a backward grid and rows at t_eval, with and without the norm gain
    n = 11
    rng = np.random.default_rng(3)
    inertia = np.abs(rng.normal(50.0, 10.0, size=(n, 3)))
    if full:
        inertia = np.array([np.diag(i) + 0.02 * (FULL_I - np.diag(np.diag(FULL_I)))
                            for i in inertia])
    rates = np.linspace(1.0e-3, 1.3e-3, n)
    u0, inc = np.linspace(0, 3, n), np.linspace(0.0, 1.5, n)
    y0 = _y0(n, seed=4)
    before = _lanes.get()
    try:
        for gain, span in ((0.0, (3000.0, 500.0)), (0.01, (0.0, 3000.0))):
            gg = torque.GravityGradient(inertia, rates, argument_of_latitude=u0, inclination=inc)
            model = rotode.RigidBody(inertia, torque=gg, norm_gain=gain)
            rows = np.linspace(span[0], span[1], 6)
            kw = {"method": method, "dt": 20.0, "t_eval": rows}
            _lanes.use("off")
            driver = rotode.integrate(model, span, y0, **kw)
            assert driver.success and "simd" not in driver.stats
            singles = [rotode.integrate(rotode.RigidBody(inertia[i], norm_gain=gain,
                                                         torque=torque.GravityGradient(
                inertia[i], rates[i], argument_of_latitude=u0[i], inclination=inc[i])),
                span, y0[i], **kw) for i in range(n)]
            for isa in _lanes.available():
                if isa == "off":
                    continue
                _lanes.use(isa)
                for workers in (1, 2):
                    res = rotode.integrate(model, span, y0, workers=workers, **kw)
                    _same(res, driver)
                    assert res.stats.get("simd") == isa, (isa, gain)
                    for i, one in enumerate(singles):
                        np.testing.assert_array_equal(res.y[i], one.y)
                        np.testing.assert_array_equal(res.w[i], one.w)
    finally:
        _lanes.use(before)


@pytest.mark.parametrize("method", ["dop853", "rkmk5"])
@pytest.mark.parametrize("nan", [False, True])
def test_failures_are_reported_as_the_driver_reports_them(clib, method, nan):
    n, bad = 6, 4
    params = np.tile([0.3, 0.0, 0.0], (n, 1))
    params[bad] = [0.3, 1.0, 1.0 if nan else 0.0]       # body 4 fails from t = 1
    model = rotode.RigidBody(INERTIA, torque=torque.Compiled(clib.damping_failing, params))
    a, b = _both(model, (0, 2), _y0(n), method=method, rtol=1e-8)
    assert not a.success and f"body {bad}," in a.message
    _same(a, b)
    one = rotode.RigidBody(INERTIA, torque=torque.Compiled(clib.damping_failing, params[bad]))
    a, b = _both(one, (0, 2), _y0(n)[bad], method=method, rtol=1e-8)     # (the thin path)
    assert not a.success
    _same(a, b)


def test_python_torques_and_the_tangent_models_stay_off_the_engine(clib):
    python = torque.Callable(lambda t, q, w: -0.1 * w)
    for tq in (python, torque.Sum(torque.Compiled(clib.damping, [0.1]), python)):
        body = rotode.RigidBody(INERTIA, torque=tq)
        assert dynamic._engine_eval(body, 0.0, _y0(1)[0]) is None
        a, b = _both(body, (0, 3), _y0(1)[0], method="dop853", rtol=1e-9)
        _same(a, b)
    body = rotode.RigidBody(INERTIA, torque=_sources(clib, np.diag(INERTIA))["sum"])
    assert dynamic._engine_eval(body, 0.0, _y0(1)[0]) is not None
    # a source called through its pointer is not in the fixed-step lanes: the driver's step
    fixed = rotode.integrate(body, (0, 50), _y0(5), method="rk4", dt=5.0)
    assert fixed.success and "simd" not in fixed.stats
    plan = rotode.integrate(body, (0, 50), _y0(1)[0], method="dop853", rtol=1e-9,
                            sensitivity=["y0"])
    ref = rotode.integrate(body, (0, 50), _y0(1)[0], method="dop853", rtol=1e-9)
    np.testing.assert_array_equal(plan.y, ref.y)
    assert plan.sensitivity["y0"].shape == (2, 6, 6)
