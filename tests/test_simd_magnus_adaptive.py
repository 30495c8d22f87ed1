"""The adaptive Magnus methods (magnus6, magnus8 under error control) in the specialised engine and
its SIMD lanes (rotode/_lanes_magnus.hpp): one body by the engine equals the driver's controlled
loop with kinematic.pyx's Magnus trial step, to the bit (rows at t_eval inside the steps, counters,
status, failures), and a batch in the lanes (shared `Constant` or `Sinusoid`, per-body constant
rates, body or world frame, forward and backward) gives every body its single run's bits on every
instruction set this CPU runs, with any number of threads."""
import numpy as np
import pytest
from test_engine import _same
from test_simd_batch import ISAS, N, _off, _same_batch, quaternions
from test_simd_kinematics_adaptive import _cases, _q0, _want

import rotode
from rotode import kinematic
from rotode._runplan import Plan
from rotode._validation import as_control

METHODS = ["magnus8", "magnus6"]
FAST = rotode.omega.Sinusoid([20.0, 10.0, 30.0], 2.0, [0.0, 0.4, 1.1])   # steps past 2 rad
SOURCES = {
    "constant": rotode.omega.Constant([0.3, -1.2, 2.0]),
    "sinusoid": rotode.omega.Sinusoid([1.0, 0.5, 2.0], 3.0, [0.0, 0.4, 1.1]),
}


def _driver(call, *args, **kw):
    """call(*args, **kw) on the driver's controlled loop (the engine off)."""
    kinematic._USE_ENGINE = False
    try:
        return call(*args, **kw)
    finally:
        kinematic._USE_ENGINE = True


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("source", SOURCES)
@pytest.mark.parametrize("frame", ["body", "world"])
def test_one_body_is_the_drivers_loop(method, source, frame):
    """The engine's run of one body is the driver's loop with the Magnus trial step, bit for
    bit: rows inside steps and at t_eval's ends, a first step and max_step given, backward,
    rejections at loose tolerances past the step-angle bound, a continued run."""
    q0 = np.array([0.9, 0.1, -0.2, 0.3])
    src = SOURCES[source]
    fast = FAST
    for model, t_span, kw in [
            (src, (0.0, 6.0), {}),
            (src, (1.0, -4.0), {"rtol": 1e-10, "atol": 1e-12}),
            (src, (0.0, 6.0), {"t_eval": np.linspace(0.0, 6.0, 13)}),
            (src, (0.0, 6.0), {"t_eval": [2.5], "first_step": 0.1, "max_step": 0.5}),
            (fast, (0.0, 3.0), {"rtol": 1e-2, "atol": 1e-6, "t_eval": [0.0, 1.0, 3.0]})]:
        a = rotode.integrate(model, t_span, q0, method=method, frame=frame, **kw)
        b = _driver(rotode.integrate, model, t_span, q0, method=method, frame=frame, **kw)
        assert a.success
        _same(a, b)
        if model is fast and method == "magnus8":     # (magnus6 takes no rejection there)
            assert a.stats["n_rejected"] > 0
    control = as_control(1e-8, 1e-10, None, None, None, 4, 1.0)
    unit = q0 / np.linalg.norm(q0)
    for resume in (False, True):
        plan = Plan(method, src, unit[None], np.array([0.0, 0.5, 1.0]), np.array([0, 1, 2]),
                    control=control, resume=resume)
        got, ref = kinematic.run_plan(plan), _driver(kinematic.run_plan, plan)
        assert np.array_equal(got.y, ref.y) and np.array_equal(got.w, ref.w)


@pytest.mark.parametrize("method", METHODS)
def test_one_body_fails_as_the_drivers_loop(method):
    """Out of steps, an overflowing rate: the same status, message, NaN rows, counters."""
    q0 = np.array([1.0, 0.0, 0.0, 0.0])
    for model, kw in ((np.array([[3.0, 1.0, -2.0]]), {"max_steps": 2}),
                      (np.array([[1e300, 0.0, 0.0]]), {"max_steps": 1000})):
        kw = dict(method=method, rtol=1e-8, t_eval=[0.0, 0.5, 2.0], **kw)
        a = rotode.integrate(model, (0.0, 2.0), q0[None], **kw)
        b = _driver(rotode.integrate, model, (0.0, 2.0), q0[None], **kw)
        assert not a.success
        assert a.stats["message"] == b.stats["message"]
        assert np.array_equal(a.y, b.y, equal_nan=True) and np.isnan(a.y[0, -1]).all()
        _same(a, b)


@pytest.mark.parametrize("isa", ISAS, indirect=True)
@pytest.mark.parametrize("method", METHODS)
def test_a_batch_is_the_drivers_loop(isa, method):
    """A batch in the lanes equals the driver's loop of each body, to the bit (every body its
    single run: tests/test_simd_kinematics_adaptive.py `test_every_body_is_its_single_run`,
    which runs these methods too)."""
    q0 = _q0(N)
    for name, model, _ in _cases(N):
        for frame in ("body", "world"):
            kw = dict(method=method, rtol=1e-9, atol=1e-11, t_eval=[0.0, 0.4, 1.5], frame=frame)
            batch = rotode.integrate(model, (0.0, 1.5), q0, **kw)
            assert batch.success and batch.stats.get("simd") == _want(isa), (name, frame)
            _same(batch, _driver(rotode.integrate, model, (0.0, 1.5), q0, **kw))


@pytest.mark.parametrize("isa", ISAS, indirect=True)
@pytest.mark.parametrize("method", METHODS)
def test_large_steps_in_lanes(isa, method):
    """Fast rates at a loose tolerance: steps past 2 rad (exp(Omega/2) beyond its Taylor range,
    lane by lane), rejections at the step-angle bound, the lanes' bases re-anchored at
    different steps: the bits of one body at a time (the other widths' checks, failures
    included: tests/test_simd_kinematics_adaptive.py `test_widths_agree_with_one_body_at_a_time`,
    which runs these methods too)."""
    q0 = quaternions(np.random.default_rng(3), N)
    for frame in ("body", "world"):
        run = dict(method=method, frame=frame, t_eval=[0.0, 0.7, 2.0], rtol=1e-2, atol=1e-6)
        got = rotode.integrate(FAST, (0.0, 2.0), q0, **run)
        ref = _off(isa, rotode.integrate, FAST, (0.0, 2.0), q0, **run)
        _same_batch(got, ref)
        assert got.success and got.stats.get("simd") == _want(isa)
        if method == "magnus8":
            assert ref.stats["per_body"]["n_rejected"].sum() > 0


@pytest.mark.parametrize("method", METHODS)
def test_the_tolerance_holds(method):
    """An independent check: a constant rate's exact orientation q0 exp(w t / 2); the error
    stays within a small multiple of the tolerance and shrinks with it."""
    w = np.array([0.4, -1.1, 2.3])
    q0 = np.array([1.0, 0.0, 0.0, 0.0])
    tf = 5.0
    angle = np.linalg.norm(w) * tf
    exact = np.r_[np.cos(angle / 2), np.sin(angle / 2) * w / np.linalg.norm(w)]
    sine = rotode.omega.Sinusoid([1.0, 0.5, 2.0], 3.0, [0.0, 0.4, 1.1])
    ref = rotode.integrate(sine, (0, tf), q0, method="rkmk8", rtol=1e-13, atol=1e-15).y[-1]
    errs = []
    for rtol in (1e-5, 1e-7, 1e-9):
        res = rotode.integrate(w, (0, tf), q0, method=method, rtol=rtol, atol=rtol * 1e-2)
        assert np.abs(res.y[-1] - exact).max() < 1e-12    # no commutator: exact but round-off
        res = rotode.integrate(sine, (0, tf), q0, method=method, rtol=rtol, atol=rtol * 1e-2)
        errs.append(np.abs(res.y[-1] - ref).max())
        assert errs[-1] < 50 * rtol, (rtol, errs[-1])
    assert errs[2] < errs[0]


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("source", SOURCES)
@pytest.mark.parametrize("frame", [None, "world"])
def test_the_thin_path_is_the_general_one(method, source, frame):
    """One body's call without options takes the thin path (`kinematic.run_single`): the same
    rows and counters as the general path (`workers=None`) and the driver's loop."""
    q0 = np.array([0.9, 0.1, -0.2, 0.3])
    src = SOURCES[source]
    assert kinematic.run_single(src, (0.0, 3.0), q0, method, 1e-8, 1e-10, frame) is not None
    kw = dict(method=method, rtol=1e-8, atol=1e-10, frame=frame)
    res = rotode.integrate(src, (0.0, 3.0), q0, **kw)
    general = rotode.integrate(src, (0.0, 3.0), q0, workers=None, **kw)
    assert "per_body" not in res.stats
    _same(res, general)
    _same(res, _driver(rotode.integrate, src, (0.0, 3.0), q0, **kw))
