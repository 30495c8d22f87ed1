"""The specialised engine (rotode/_engine.hpp, _models.hpp, _tableaux.hpp; docs/architecture.md).

Its runs are compared with the driver's own loop (``dynamic._USE_ENGINE = False``), which was
rotode's only path before and which the golden outputs (tests/test_golden_engine.py) pin: the
same accepted and rejected steps, the same counters, the same values (equal as numbers: the
sums may differ in the sign of an exact zero, rotode/_engine.hpp), on every torque kind, both
inertia shapes, with and without the norm gain and the gyroscopic term, forwards and
backwards, with t_eval, batches and threads, and on failures.  The model's C++ equations are
checked against the Cython kernels evaluation by evaluation, the generated header against the
registry, and the thin call path (`dynamic.run_single`) against the general one.
"""
import signal

import numpy as np
import pytest
from test_driver import ctrl_c_latency

import rotode
from rotode import _codegen, dynamic, kinematic

PAIRS = tuple(dynamic.ENGINE_PAIRS)
FULL_I = np.array([[2.0, 0.1, -0.05], [0.1, 1.5, 0.2], [-0.05, 0.2, 1.0]])
TORQUES = {
    "none": None,
    "gravity": rotode.torque.Gravity(1.3, 9.81, [0.05, -0.02, 0.4]),
    "body": rotode.torque.Constant([0.1, -0.2, 0.3]),
    "world": rotode.torque.Constant([0.1, -0.2, 0.3], frame="world"),
}
Y0 = np.array([0.9, 0.1, -0.2, 0.3, 1.5, -0.4, 2.0])


def _both(model, t_span, y0, **kw):
    """The run by the engine and by the driver's loop."""
    out = []
    for use in (True, False):
        dynamic._USE_ENGINE = use
        try:
            out.append(rotode.integrate(model, t_span, y0, **kw))
        finally:
            dynamic._USE_ENGINE = True
    return out


def _same(a, b, ignore=("simd",)):
    """a and b the same run to the bit: rows, times, status, stats and per-body counters
    (the stats keys `ignore` aside: by default the adaptive lanes' set, the same bits;
    tests/test_engine_rkmk.py shares it)."""
    sa, sb = dict(a.stats), dict(b.stats)
    pa, pb = sa.pop("per_body", {}), sb.pop("per_body", {})
    for key in ignore:
        sa.pop(key, None)
        sb.pop(key, None)
    assert sa == sb
    assert pa.keys() == pb.keys()
    for key in pa:
        np.testing.assert_array_equal(pa[key], pb[key])
    np.testing.assert_array_equal(a.t, b.t)
    np.testing.assert_array_equal(a.y, b.y)
    np.testing.assert_array_equal(a.w, b.w)
    assert (a.status, a.message) == (b.status, b.message)


def test_the_generated_header_is_the_registry():
    with open(_codegen.HEADER) as f:
        assert f.read() == _codegen.tableaux_header(), \
            "rotode/_tableaux.hpp is stale: run `python -m rotode._codegen`"
    assert set(PAIRS) == {m.name for m in _codegen.pairs()}


@pytest.mark.parametrize("torque", TORQUES)
@pytest.mark.parametrize("inertia", ["diagonal", "full"])
@pytest.mark.parametrize("gain, gyroscopic", [(0.0, True), (0.7, True), (0.0, False)])
def test_the_equations_are_the_cython_kernels(torque, inertia, gain, gyroscopic):
    inertia = np.diag([2.0, 1.5, 1.0]) if inertia == "diagonal" else FULL_I
    body = rotode.RigidBody(inertia, torque=TORQUES[torque], norm_gain=gain,
                            gyroscopic=gyroscopic)
    rng = np.random.default_rng(3)
    for _ in range(50):
        y = rng.normal(size=7) * rng.choice([1e-3, 1.0, 1e3], size=7)
        t = float(rng.uniform(-5, 5))
        np.testing.assert_array_equal(dynamic._engine_eval(body, t, y), body(t, y))


@pytest.mark.parametrize("method", PAIRS)
@pytest.mark.parametrize("torque", TORQUES)
@pytest.mark.parametrize("inertia", ["diagonal", "full"])
def test_runs_equal_the_drivers_loop(method, torque, inertia):
    inertia = np.diag([2.0, 1.5, 1.0]) if inertia == "diagonal" else FULL_I
    body = rotode.RigidBody(inertia, torque=TORQUES[torque], norm_gain=0.3)
    for t_span, kw in [((0.0, 7.0), {}), ((2.0, -5.0), {}),
                       ((0.0, 7.0), {"t_eval": np.linspace(0.0, 7.0, 9)}),
                       ((0.0, 7.0), {"t_eval": [1.5, 3.25], "rtol": 1e-10, "atol": 1e-12}),
                       ((0.0, 7.0), {"first_step": 0.01, "max_step": 0.3, "rtol": 1e-6})]:
        a, b = _both(body, t_span, Y0, method=method, **kw)
        assert a.success
        _same(a, b)


@pytest.mark.parametrize("method", PAIRS)
def test_without_gyroscopic_term_and_per_body_parameters(method):
    body = rotode.RigidBody(np.diag([2.0, 1.5, 1.0]), gyroscopic=False,
                            torque=TORQUES["gravity"])
    _same(*_both(body, (0, 5), Y0, method=method, rtol=1e-8, atol=1e-10))
    bodies = rotode.RigidBody(np.stack([np.diag([2.0, 1.5, 1.0]), FULL_I]),
                              torque=rotode.torque.Constant([[0.1, 0, 0], [0, 0.2, 0]]))
    y0 = np.stack([Y0, Y0[::-1] * [1, 1, 1, 1, 0.5, 0.5, 0.5]])
    _same(*_both(bodies, (0, 5), y0, method=method, rtol=1e-7, t_eval=[1.0, 5.0]))


def check_batch_equals_single_runs(method, seed):
    """A batch of 5 gravity tops with random states under `method` at rtol 1e-9: the same
    rows on 1 and 2 threads, and each body's rows and step count its single run's; returns
    (body, y0) for more checks (tests/test_engine_rkmk.py shares it)."""
    body = rotode.RigidBody(FULL_I, torque=TORQUES["gravity"])
    rng = np.random.default_rng(seed)
    y0 = np.hstack([rng.normal(size=(5, 4)), rng.normal(size=(5, 3))])
    batch = [rotode.integrate(body, (0, 4), y0, method=method, rtol=1e-9, atol=1e-11,
                              t_eval=[1.0, 2.5, 4.0], workers=w) for w in (1, 2)]
    np.testing.assert_array_equal(batch[0].y, batch[1].y)
    for i in range(5):
        one = rotode.integrate(body, (0, 4), y0[i], method=method, rtol=1e-9, atol=1e-11,
                               t_eval=[1.0, 2.5, 4.0])
        assert np.array_equal(batch[0].y[i], one.y)
        assert batch[0].stats["per_body"]["n_steps"][i] == one.stats["n_steps"]
    return body, y0


@pytest.mark.parametrize("method", PAIRS)
def test_batches_equal_single_runs_whatever_the_threads(method):
    body, y0 = check_batch_equals_single_runs(method, 0)
    _same(*_both(body, (0, 4), y0, method=method, rtol=1e-9, atol=1e-11))


@pytest.mark.parametrize("method", PAIRS)
def test_failures_are_reported_as_the_driver_reports_them(method):
    body = rotode.RigidBody(np.diag([2.0, 1.5, 1.0]), torque=TORQUES["gravity"])
    for kw in ({"max_steps": 3}, {"rtol": 1e-12, "atol": 1e-300, "max_steps": 5}):
        a, b = _both(body, (0, 50), Y0, method=method, **kw)
        assert not a.success and "max_steps" in a.message
        _same(a, b)
    # a state that overflows: every row after the failure is NaN
    wild = rotode.RigidBody(np.diag([1.0, 1.0, 1.0]), torque=rotode.torque.Constant([0, 1e308, 0]))
    a, b = _both(wild, (0, 1), Y0, method=method, t_eval=[0.0, 0.5, 1.0], first_step=0.5)
    assert not a.success
    _same(a, b)


def test_the_thin_call_path_is_the_general_one():
    body = rotode.RigidBody(np.diag([1.0, 1.0, 0.5]), torque=TORQUES["gravity"])
    for method in PAIRS:
        fast = dynamic.run_single(body, (0.0, 3.0), Y0, method, 1e-8, 1e-10)
        assert fast is not None
        res = rotode.integrate(body, (0.0, 3.0), Y0, method=method, rtol=1e-8, atol=1e-10)
        general = rotode.integrate(body, (0.0, 3.0), Y0, method=method, rtol=1e-8,
                                   atol=1e-10, workers=None)      # (not the thin path)
        _same(res, general)
        assert "per_body" not in res.stats and res.method == method
        np.testing.assert_array_equal(fast[1], res.y)


@pytest.mark.parametrize("args", [
    dict(rtol=np.float64(1e-6)),                 # not a Python float: the general path
    dict(t_span=np.array([0.0, 1.0])),
    dict(y0=list(Y0.astype(np.float32))),      # (a list of Python or float64 numbers: taken)
    dict(y0=list(Y0)[:6]),
    dict(y0=Y0.astype(np.float32)),
    dict(model=rotode.RigidBody(np.eye(3), torque=lambda t, q, w: np.zeros(3))),
    dict(method="DOP853"),
    dict(model=rotode.RigidBody(np.stack([np.eye(3)] * 2))),
])
def test_the_thin_path_declines_what_it_does_not_check(args):
    call = dict(model=rotode.RigidBody(np.eye(3)), t_span=(0.0, 1.0), y0=Y0, method="dop853",
                rtol=1e-6, atol=1e-8)
    call.update(args)
    assert dynamic.run_single(call["model"], call["t_span"], call["y0"], call["method"],
                              call["rtol"], call["atol"]) is None


def test_the_thin_path_takes_lists_of_numbers():
    body = rotode.RigidBody(np.diag([1.0, 1.0, 0.5]), torque=TORQUES["gravity"])
    for y0 in (list(Y0), Y0.tolist(), tuple(Y0.tolist())):
        assert dynamic.run_single(body, (0.0, 3.0), y0, "dop853", 1e-8, 1e-10) is not None
        _same(rotode.integrate(body, (0.0, 3.0), y0, method="dop853", rtol=1e-8, atol=1e-10),
              rotode.integrate(body, (0.0, 3.0), Y0, method="dop853", rtol=1e-8, atol=1e-10,
                               workers=None))


@pytest.mark.parametrize("bad, error, match", [
    (dict(y0=np.array([0.0, 0, 0, 0, 1, 2, 3])), ValueError, "nonzero"),
    (dict(y0=np.array([1.0, 0, 0, 0, np.nan, 2, 3])), ValueError, "finite"),
    (dict(t_span=(1.0, 1.0)), ValueError, "t0 != tf"),
    (dict(t_span=(0.0, float("inf"))), ValueError, "finite"),
    (dict(rtol=-1.0), ValueError, "rtol"),
    (dict(atol=-1.0), ValueError, "atol"),
])
def test_bad_input_on_the_common_call_raises_the_general_error(bad, error, match):
    call = dict(t_span=(0.0, 1.0), y0=Y0, rtol=1e-6, atol=1e-8)
    call.update(bad)
    with pytest.raises(error, match=match):
        rotode.integrate(rotode.RigidBody(np.eye(3)), call["t_span"], call["y0"],
                         method="dop853", rtol=call["rtol"], atol=call["atol"])


def test_a_tiny_rtol_still_warns():
    with pytest.warns(UserWarning, match="rtol"):
        rotode.integrate(rotode.RigidBody(np.eye(3)), (0.0, 0.1), Y0, method="dop853",
                         rtol=1e-17)


@pytest.mark.skipif(not hasattr(signal, "pthread_kill"), reason="needs POSIX signals")
@pytest.mark.parametrize("batch", [False, True])
def test_ctrl_c_stops_the_engine_within_half_a_second(batch):
    body = rotode.RigidBody(np.diag([1.0, 2.0, 2.5]), torque=TORQUES["gravity"])
    y0 = np.tile(Y0, (2, 1)) if batch else Y0
    assert ctrl_c_latency(lambda: rotode.integrate(
        body, (0.0, 1e7), y0, method="dop853", rtol=1e-12, atol=1e-14,
        workers=2 if batch else 1)) < 0.5


# ---- kinematics ----------------------------------------------------------------------------

SOURCES = {
    "constant": rotode.omega.Constant([0.3, -1.2, 0.7]),
    "sinusoid": rotode.omega.Sinusoid(amplitude=[1.0, 0.5, -0.8], rate=2.0,
                                      phase=[0.0, 1.0, 2.0]),
}
Q0 = np.array([0.9, 0.1, -0.2, 0.3])


def _both_kinematics(model, t_span, q0, **kw):
    out = []
    for use in (True, False):
        kinematic._USE_ENGINE = use
        try:
            out.append(rotode.integrate(model, t_span, q0, **kw))
        finally:
            kinematic._USE_ENGINE = True
    return out


@pytest.mark.parametrize("source", SOURCES)
@pytest.mark.parametrize("frame", ["body", "world"])
@pytest.mark.parametrize("gain", [0.0, 0.8])
def test_the_kinematic_equations_are_the_cython_kernels(source, frame, gain):
    model = rotode.QuaternionKinematics(SOURCES[source], frame=frame, norm_gain=gain)
    code = 1 if frame == "world" else 0
    rng = np.random.default_rng(5)
    for _ in range(50):
        q = rng.normal(size=4) * rng.choice([1e-3, 1.0, 1e3])
        t = float(rng.uniform(-5, 5))
        np.testing.assert_array_equal(
            kinematic._engine_eval(SOURCES[source], code, gain, t, q), model(t, q))


@pytest.mark.parametrize("method", PAIRS)
@pytest.mark.parametrize("source", SOURCES)
@pytest.mark.parametrize("frame", ["body", "world"])
def test_kinematic_runs_equal_the_drivers_loop(method, source, frame):
    for t_span, kw in [((0.0, 6.0), {}), ((1.0, -4.0), {"rtol": 1e-9, "atol": 1e-11}),
                       ((0.0, 6.0), {"t_eval": np.linspace(0.0, 6.0, 7)}),
                       ((0.0, 6.0), {"t_eval": [2.5], "first_step": 0.1, "max_step": 0.5})]:
        a, b = _both_kinematics(SOURCES[source], t_span, Q0, method=method, frame=frame, **kw)
        assert a.success
        _same(a, b)
    model = rotode.QuaternionKinematics(SOURCES[source], frame=frame, norm_gain=0.5)
    _same(*_both_kinematics(model, (0, 3), Q0 * 1.1, method=method, rtol=1e-7))


@pytest.mark.parametrize("method", PAIRS)
def test_per_body_constant_rates_and_batches(method):
    rates = np.array([[0.1, 0.2, 0.3], [-1.0, 0.5, 2.0], [0.0, 0.0, 0.0]])
    q0 = np.stack([Q0, Q0[::-1], [1.0, 0, 0, 0]])
    a, b = _both_kinematics(rates, (0, 4), q0, method=method, rtol=1e-8, t_eval=[1.0, 4.0],
                            workers=2)
    _same(a, b)
    for i in range(3):
        one = rotode.integrate(rates[i], (0, 4), q0[i], method=method, rtol=1e-8,
                               t_eval=[1.0, 4.0])
        assert np.array_equal(a.y[i], one.y)


@pytest.mark.parametrize("source", SOURCES)
@pytest.mark.parametrize("frame", [None, "world"])
def test_the_kinematic_thin_path_is_the_general_one(source, frame):
    for method in PAIRS:
        fast = kinematic.run_single(SOURCES[source], (0.0, 3.0), Q0, method, 1e-8, 1e-10, frame)
        assert fast is not None
        res = rotode.integrate(SOURCES[source], (0.0, 3.0), Q0, method=method, rtol=1e-8,
                               atol=1e-10, frame=frame)
        general = rotode.integrate(SOURCES[source], (0.0, 3.0), Q0, method=method, rtol=1e-8,
                                   atol=1e-10, frame=frame, workers=None)
        _same(res, general)
        assert "per_body" not in res.stats
        np.testing.assert_array_equal(fast[2], res.w)
    # what it declines: a callable, a QuaternionKinematics, samples, a frame it does not know
    for model, frame_ in [(lambda t: np.ones(3), None), (rotode.QuaternionKinematics(
            SOURCES[source]), None), (SOURCES[source], "World")]:
        assert kinematic.run_single(model, (0.0, 1.0), Q0, "dop853", None, None, frame_) is None
