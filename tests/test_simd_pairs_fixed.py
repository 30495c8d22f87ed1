"""The pairs at fixed steps in SIMD lanes (rotode/_lanes_erk.hpp `erk_fixed_block`): dop853,
dopri5, bs3 given `dt` and rkmk8/5/3 at fixed steps, on batches of rigid bodies (every compiled
torque kind, diagonal and full inertia) and of quaternion kinematics (a shared `Constant` or
`Sinusoid`, per-body constant rates, the body and the world frame), 4 bodies per AVX2 block.
Every body's rows, rates, counters, status and failure are the driver's `_erk_fixed` run of it
(the lanes "off"), bit for bit, on every instruction set this CPU runs, with any number of
threads and any block a body lands in (a continued rkmk run: tests/test_simd_batch.py)."""
import numpy as np
import pytest
from test_driver import ctrl_c_latency
from test_simd_batch import ISAS, N, _body, _models, _off, _states
from test_simd_kinematics_adaptive import _cases, _q0

import rotode
from rotode import dynamic, kinematic
from rotode._runplan import Plan

PAIRS = ["dop853", "dopri5", "bs3", "rkmk8", "rkmk5", "rkmk3"]   # (rkmk: the pairs on [v, w])


def _want(isa, model=None):
    """The `simd` a fixed-step pair's batch reports: AVX2's 4 lanes on AVX2 and AVX-512
    machines; "scalar" where the lanes do not take the bodies (a norm gain, another set)."""
    gain = model is not None and not (np.ndim(model.norm_gain) == 0 and model.norm_gain == 0.0)
    return "avx2" if isa in ("avx2", "avx512") and not gain else "scalar"


def _same(got, ref):
    """Two runs' rows, rates, counters and outcome, bit for bit."""
    assert np.array_equal(got.t, ref.t)
    assert np.array_equal(got.y, ref.y, equal_nan=True)
    assert np.array_equal(got.w, ref.w, equal_nan=True)
    for key in ("status", "message", "nfev", "n_steps"):
        assert got.stats.get(key) == ref.stats.get(key), key


@pytest.mark.parametrize("isa", ISAS, indirect=True)
@pytest.mark.parametrize("method", PAIRS)
@pytest.mark.parametrize("workers", [1, 2])
def test_rigid_batches_are_the_drivers_runs(isa, method, workers):
    """Every torque kind and inertia shape of `_models` (per-body parameters, a shared top, a
    norm gain that keeps the driver's loop): the batch is the driver's run of each body, and a
    body equals its own single run, wherever its block falls."""
    y0 = _states(N, seed=21)
    kw = dict(method=method, dt=0.01, save_every=7, workers=workers)
    for name, model in _models(N).items():
        got = rotode.integrate(model, (0.0, 0.37), y0, **kw)
        ref = _off(isa, rotode.integrate, model, (0.0, 0.37), y0, **kw)
        assert got.success and got.stats["simd"] == _want(isa, model), name
        assert "simd" not in ref.stats
        _same(got, ref)
        for i in (0, 3, 4, N - 1):
            one = rotode.integrate(_body(model, i), (0.0, 0.37), y0[i], method=method,
                                   dt=0.01, save_every=7)
            assert np.array_equal(got.y[i], one.y) and np.array_equal(got.w[i], one.w), name
            assert one.stats["nfev"] == got.stats["nfev"]


@pytest.mark.parametrize("isa", ISAS, indirect=True)
@pytest.mark.parametrize("method", PAIRS)
def test_rigid_grids_and_failures(isa, method):
    """A backward grid, an uneven grid with its own rows (`dynamic.run`), steps long enough that
    exp(v/2) and dexp^-1 leave their polynomial ranges in some lanes (rkmk), and a body whose
    state overflows: it fails alone with the driver's status, message, NaN rows and counters."""
    y0 = _states(N, seed=22)
    y0[:, 4:] *= np.linspace(0.2, 2.0, N)[:, None]
    bad = y0.copy()
    bad[9, 4:] = 1e154
    grid = np.cumsum(np.r_[0.0, 0.004 + 0.01 * np.random.default_rng(23).random(60)])
    save = np.array([0, 1, 2, 3, 17, 40, 60])
    for name in ("free", "top", "gravity", "world torque", "full inertia, gain"):
        model = _models(N)[name]
        for span, states, dt in (((0.5, 0.0), y0, 0.02), ((0.0, 1.2), y0, 0.1),
                                 ((0.0, 0.5), bad, 0.01)):
            kw = dict(method=method, dt=dt, save_every=3)
            got = rotode.integrate(model, span, states, **kw)
            _same(got, _off(isa, rotode.integrate, model, span, states, **kw))
            if states is bad:
                assert got.stats["status"] == 2 and "body 9" in got.stats["message"], name
                assert np.isnan(got.y[9, -1]).all() and np.isfinite(got.y[10]).all()
        got = dynamic.run(method, model, y0, grid, save)
        ref = _off(isa, dynamic.run, method, model, y0, grid, save)
        assert np.array_equal(got[0], ref[0]) and np.array_equal(got[1], ref[1]), name
        assert got[2]["nfev"] == ref[2]["nfev"] and got[2]["simd"] == _want(isa, model)


def test_mixed_classes_and_the_engine_switch_keep_the_drivers_loop():
    """Bodies of two torque classes, a Python torque, and `_USE_ENGINE = False` take the
    driver's `_erk_fixed` body by body: the same bits, "scalar" (or no lanes) reported."""
    y0 = _states(8, seed=25)
    mixed = [rotode.RigidBody([1.0, 1.2, 0.5]) if i % 3 else
             rotode.RigidBody([1.0, 1.0, 0.5], torque=rotode.torque.Gravity(1.0, 9.81, [0, 0, 0.1]))
             for i in range(8)]
    out = rotode.integrate(mixed, (0.0, 0.2), y0, method="dop853", dt=0.01)
    assert out.stats.get("simd") in ("scalar", None)
    for i in (0, 3):
        one = rotode.integrate(mixed[i], (0.0, 0.2), y0[i], method="dop853", dt=0.01)
        assert np.array_equal(out.y[i], one.y)
    python = rotode.RigidBody([1.0, 2.0, 3.0], torque=lambda t, q, w: np.zeros(3))
    out = rotode.integrate(python, (0.0, 0.1), y0, method="rkmk5", dt=0.05)
    assert out.success and "simd" not in out.stats
    model = rotode.RigidBody([1.0, 2.0, 3.0])
    got = rotode.integrate(model, (0.0, 0.3), y0, method="dop853", dt=0.01)
    dynamic._USE_ENGINE = False
    try:
        ref = rotode.integrate(model, (0.0, 0.3), y0, method="dop853", dt=0.01)
    finally:
        dynamic._USE_ENGINE = True
    assert "simd" not in ref.stats
    _same(got, ref)


def test_the_lanes_agree_with_an_independent_solution():
    """Not only the driver's bits: dop853 and rkmk8 at dt = 0.01 on the torque-free
    axisymmetric top match its closed form (a steady precession) to 1e-11 in every body."""
    inertia = np.array([1.0, 1.0, 0.5])
    w0 = np.column_stack([np.linspace(0.1, 1.0, 9), np.zeros(9), np.linspace(1.0, 3.0, 9)])
    y0 = np.hstack([np.tile([1.0, 0.0, 0.0, 0.0], (9, 1)), w0])
    T = 2.0
    lam = (inertia[2] - inertia[0]) / inertia[0] * w0[:, 2]          # body-frame precession
    w_exact = np.column_stack([w0[:, 0] * np.cos(lam * T), w0[:, 0] * np.sin(lam * T), w0[:, 2]])
    for method in ("dop853", "rkmk8"):
        out = rotode.integrate(rotode.RigidBody(inertia), (0.0, T), y0, method=method, dt=0.01)
        assert out.stats["simd"] in ("avx2", "scalar")
        assert np.abs(out.w[:, -1] - w_exact).max() < 1e-11, method


@pytest.mark.parametrize("isa", ISAS, indirect=True)
@pytest.mark.parametrize("method", PAIRS)
@pytest.mark.parametrize("workers", [1, 2])
def test_kinematics_batches_are_the_drivers_runs(isa, method, workers):
    """Shared `Constant` and `Sinusoid` rates and per-body rates, both frames, forward and
    backward: the driver's run of each body, and each body its single run."""
    q0 = _q0(N, seed=26)
    for name, model, body in _cases(N):
        for frame in ("body", "world"):
            for span in ((0.0, 0.6), (0.6, 0.0)):
                kw = dict(method=method, dt=0.01, save_every=4, frame=frame, workers=workers)
                got = rotode.integrate(model, span, q0, **kw)
                ref = _off(isa, rotode.integrate, model, span, q0, **kw)
                assert got.success and got.stats["simd"] == _want(isa), (name, frame)
                assert "simd" not in ref.stats
                _same(got, ref)
                for i in (0, 5, N - 1):
                    one = rotode.integrate(body(i), span, q0[i], method=method, dt=0.01,
                                           save_every=4, frame=frame)
                    assert np.array_equal(got.y[i], one.y), (name, frame, i)
                    assert np.array_equal(got.w[i], one.w), (name, frame, i)


@pytest.mark.parametrize("isa", ISAS, indirect=True)
@pytest.mark.parametrize("method", PAIRS)
def test_kinematics_large_steps_failures_and_resume(isa, method):
    """Steps of several radians (rkmk beyond the polynomial ranges, lane by lane), a body whose
    rate overflows (it fails alone, as in the driver), and a continued run (`Plan.resume`)."""
    q0 = _q0(N, seed=27)
    rates = np.random.default_rng(28).normal(size=(N, 3)) * np.geomspace(0.5, 40.0, N)[:, None]
    kw = dict(method=method, dt=0.1, frame="world")
    got = rotode.integrate(rates, (0.0, 2.0), q0, **kw)
    _same(got, _off(isa, rotode.integrate, rates, (0.0, 2.0), q0, **kw))
    bad = rates.copy()
    bad[7] = 1e300
    got = rotode.integrate(bad, (0.0, 1.0), q0, method=method, dt=0.05)
    ref = _off(isa, rotode.integrate, bad, (0.0, 1.0), q0, method=method, dt=0.05)
    _same(got, ref)
    assert not got.success and "body 7" in got.stats["message"]
    assert np.isnan(got.y[7, -1]).all() and np.isfinite(got.y[8]).all()
    t = np.linspace(0.0, 0.4, 9)
    for resume in (False, True):
        plan = Plan(method, rates, q0 * (1.0 + 1e-15), t, np.array([0, 4, 8]), resume=resume)
        got = kinematic.run_plan(plan)
        ref = _off(isa, kinematic.run_plan, plan)
        assert np.array_equal(got.y, ref.y) and np.array_equal(got.w, ref.w)
        assert got.stats["nfev"] == ref.stats["nfev"] and got.stats["simd"] == _want(isa)


def test_ctrl_c_stops_a_long_batch():
    """Ctrl-C during a long batch of a pair in lanes raises KeyboardInterrupt within 0.5 s."""
    model = rotode.RigidBody([1.0, 2.0, 3.0])
    y0 = _states(400, seed=29)

    def run():
        rotode.integrate(model, (0.0, 1e4), y0, method="dop853", dt=0.01, save_every=10**6)

    assert ctrl_c_latency(run) < 0.5
