"""Events on the specialised engine (rotode/_engine.hpp `EngineRun.on_step`, the driver's
`_engine_events`, rotode/_driver_loop.pxi; docs/architecture.md, "The specialised engine").

An error-controlled run of a pair the engine runs (on the state, or rkmk on the group) with
events takes the engine's loop; after each accepted step the driver locates the step's events
with its own code (SciPy's sign-change rule, Brent's method on the step's dense output) on the
engine's step, its stages and its interpolant's storage.  Every such run is compared with the
driver's own loop (``_USE_ENGINE = False``), which the golden outputs pin: the same event times
and rows, counts, final rows and terminal stops, the same output rows and counters, on the
rigid body (every compiled torque, both inertia shapes), the kinematics (both sources, both
frames) and a user's equations, forwards and backwards, with t_eval, terminal and repeated
events, directions, batches and threads; and the event times against closed forms.
"""
import numpy as np
import pytest
import test_engine
import test_engine_rkmk
from test_engine_rkmk import FULL_I, Q0, SOURCES, Y0

import rotode
from rotode import _lanes, dynamic, kinematic, ode

TORQUES = {key: test_engine_rkmk.TORQUES[key] for key in ("none", "gravity", "body")}
RIGID = tuple(dynamic.ENGINE_PAIRS) + tuple(dynamic.ENGINE_GROUP_PAIRS)
KIN = tuple(kinematic.ENGINE_PAIRS) + tuple(kinematic.ENGINE_GROUP_PAIRS)
ISAS = [name for name in _lanes.available() if name != "off"]


def _both(module, *args, **kw):
    """rotode.integrate(*args, **kw) by the engine and by the driver's loop of `module`."""
    out = []
    for use in (True, False):
        module._USE_ENGINE = use
        try:
            out.append(rotode.integrate(*args, **kw))
        finally:
            module._USE_ENGINE = True
    return out


def _same(a, b):
    """The same run to the bit, its events included."""
    np.testing.assert_array_equal(a.stats.pop("n_events", 0), b.stats.pop("n_events", 0))
    test_engine._same(a, b)
    assert (a.t_events is None) == (b.t_events is None)
    for ta, tb in zip(a.t_events, b.t_events, strict=True):
        np.testing.assert_array_equal(ta, tb)
    for ya, yb in zip(a.y_events, b.y_events, strict=True):
        np.testing.assert_array_equal(ya, yb)
    np.testing.assert_array_equal(a.t_stop, b.t_stop)
    np.testing.assert_array_equal(a.y_final, b.y_final)
    np.testing.assert_array_equal(a.w_final, b.w_final)


def _events(terminal):
    return [rotode.events.Component("w", 1, value=0.0, terminal=terminal),
            rotode.events.Component("q", 0, value=0.5, direction=-1),
            rotode.events.RotationAngle([1, 0, 0, 0], 1.0)]


@pytest.mark.parametrize("method", RIGID)
@pytest.mark.parametrize("torque", list(TORQUES))
@pytest.mark.parametrize("inertia", ["diagonal", "full"])
def test_rigid_runs_equal_the_drivers_loop(method, torque, inertia):
    inertia = np.diag([2.0, 1.5, 1.0]) if inertia == "diagonal" else FULL_I
    body = rotode.RigidBody(inertia, torque=TORQUES[torque])
    for terminal in (0, 1):
        a, b = _both(dynamic, body, (0, 8), Y0, method=method, rtol=1e-8, atol=1e-10,
                     events=_events(terminal))
        _same(a, b)
        assert a.status == (1 if terminal else 0)
        assert sum(len(t) for t in a.t_events) >= 2


@pytest.mark.parametrize("method", ["dop853", "rkmk8", "dopri5", "rkmk3"])
def test_t_eval_backwards_and_a_stop_on_an_output_time(method):
    body = rotode.RigidBody([2.5, 1.4, 1.3], torque=TORQUES["gravity"])
    ev = _events(0) + [rotode.events.Component("w", 1, value=-3.0, terminal=True)]
    for span, ts in [((0, 6), np.linspace(0, 6, 31)), ((6, -2), np.linspace(6, -2, 17))]:
        a, b = _both(dynamic, body, span, Y0, method=method, rtol=1e-8, atol=1e-10,
                     events=ev, t_eval=ts)
        _same(a, b)
        assert a.status == 1 and len(a.t) < len(ts)
    # the body ends at its event's time exactly when that is an output time
    t_stop = float(a.t_stop)
    grid = np.array([6.0, 0.5 * (t_stop + 6), t_stop, 0.5 * (t_stop - 2), -2.0])
    a, b = _both(dynamic, body, (6, -2), Y0, method=method, rtol=1e-8, atol=1e-10,
                 events=ev, t_eval=grid)
    _same(a, b)
    assert a.t[-1] == t_stop


@pytest.mark.parametrize("method", ["dop853", "rkmk5"])
def test_batches_and_threads(method):
    body = rotode.RigidBody([2.5, 1.4, 1.3])
    rng = np.random.default_rng(3)
    y0 = np.tile(Y0, (9, 1))
    y0[:, 4:] += rng.normal(0.0, 0.5, (9, 3))
    ev = _events(1)
    runs = [_both(dynamic, body, (0, 10), y0, method=method, rtol=1e-8, atol=1e-10,
                  events=ev, workers=w) for w in (1, 2)]
    for a, b in runs:
        _same(a, b)
    _same(runs[0][0], runs[1][0])
    for i in (0, 4, 8):
        one = rotode.integrate(body, (0, 10), y0[i], method=method, rtol=1e-8, atol=1e-10,
                               events=ev)
        assert float(one.t_stop) == runs[0][0].t_stop[i]
        for e in range(len(ev)):
            np.testing.assert_array_equal(one.t_events[e], runs[0][0].t_events[i][e])


def _lanes_off(call):
    before = _lanes.use("off")
    try:
        return call()
    finally:
        _lanes.use(before)


def _per_lane(batch, one, i):
    """Body i of a batch run with events is its single run `one`, to the bit."""
    for key in ("n_steps", "n_rejected", "nfev"):
        assert batch.stats["per_body"][key][i] == one.stats[key]
    shared = np.isin(batch.t, one.t)          # (a stopped body's later rows: NaN in a batch)
    np.testing.assert_array_equal(batch.y[i][shared], one.y[np.isin(one.t, batch.t)])
    assert np.isnan(batch.y[i][~shared]).all()
    np.testing.assert_array_equal(batch.t_stop[i], one.t_stop)
    for e in range(len(one.t_events)):
        np.testing.assert_array_equal(batch.t_events[i][e], one.t_events[e])
        np.testing.assert_array_equal(batch.y_events[i][e], one.y_events[e])
    np.testing.assert_array_equal(batch.y_final[i], one.y_final)


@pytest.mark.parametrize("isa", ISAS, indirect=True)
@pytest.mark.parametrize("method", RIGID)
@pytest.mark.parametrize("workers", [1, 2])
def test_events_per_lane_are_each_bodys_single_run(isa, method, workers):
    """The adaptive lanes locate each lane's events with the driver's code on that lane's
    steps: dispersed rates (the lanes' bodies stop at their own terminal events, at different
    times, refilled from the queue), every body's events, stop and rows its single run's, and
    the batch the lanes off's (the engine's run of one body at a time)."""
    n = 23
    rng = np.random.default_rng(11)
    y0 = np.tile(Y0, (n, 1))
    y0[:, 4:] = rng.normal(0.0, 1.5, (n, 3))
    body = rotode.RigidBody([2.5, 1.4, 1.3], torque=TORQUES["gravity"])
    ts = np.linspace(0, 5, 11)
    kw = dict(method=method, rtol=1e-8, atol=1e-10, t_eval=ts,
              events=_events(0) + [rotode.events.Component("w", 2, value=0.0, terminal=2)])
    batch = rotode.integrate(body, (0, 5), y0, workers=workers, **kw)
    want = "avx2" if isa in ("avx2", "avx512") else None
    assert batch.stats.get("simd") == want
    assert 0 < np.sum(np.isfinite(batch.t_stop)) < n                 # (some stop, not all)
    off = _lanes_off(lambda: rotode.integrate(body, (0, 5), y0, workers=workers, **kw))
    for e in range(4):
        for i in range(n):
            np.testing.assert_array_equal(batch.t_events[i][e], off.t_events[i][e])
    np.testing.assert_array_equal(batch.y, off.y)
    np.testing.assert_array_equal(batch.t_stop, off.t_stop)
    for i in (0, 1, 5, 12, n - 1):
        _per_lane(batch, rotode.integrate(body, (0, 5), y0[i], **kw), i)


@pytest.mark.parametrize("isa", ISAS, indirect=True)
@pytest.mark.parametrize("method", ["dop853", "rkmk5"])
def test_kinematic_events_per_lane(isa, method):
    n = 13
    rates = np.random.default_rng(5).normal(0.0, 1.0, (n, 3))
    ev = [rotode.events.RotationAngle([1, 0, 0, 0], 1.2, terminal=True),
          rotode.events.Component("w", 0, value=0.0), rotode.events.Component("q", 1, value=0.1)]
    kw = dict(method=method, rtol=1e-9, atol=1e-11, events=ev)
    q0 = np.tile(Q0, (n, 1))
    batch = rotode.integrate(rates, (0, 4), q0, **kw)            # (a rate per body)
    assert batch.stats.get("simd") == ("avx2" if isa in ("avx2", "avx512") else None)
    for i in (0, 3, n - 1):
        one = rotode.integrate(rates[i], (0, 4), Q0, **kw)
        assert one.status == 1
        _per_lane(batch, one, i)


@pytest.mark.parametrize("method", KIN)
@pytest.mark.parametrize("source", list(SOURCES))
@pytest.mark.parametrize("frame", ["body", "world"])
def test_kinematic_runs_equal_the_drivers_loop(method, source, frame):
    events = [rotode.events.RotationAngle([1, 0, 0, 0], 1.2, terminal=0),
              rotode.events.Component("q", 2, value=0.0),
              rotode.events.Component("w", 0, value=0.2)]          # (reads w: a rate each)
    for terminal in (0, 1):
        events[0] = rotode.events.RotationAngle([1, 0, 0, 0], 1.2, terminal=terminal)
        a, b = _both(kinematic, SOURCES[source], (0, 6), Q0, method=method, rtol=1e-9,
                     atol=1e-11, frame=frame, events=events)
        _same(a, b)
        assert a.status == terminal and sum(len(t) for t in a.t_events) >= 1


@pytest.mark.parametrize("method", ["dop853", "dopri5", "rkmk8", "rkmk5"])
def test_a_users_equations(method):
    def f(t, y, inertia):
        q, w = y[:4], y[4:7]
        dq = 0.5 * np.array([-q[1:] @ w, *(q[0] * w + np.cross(q[1:], w))])
        dw = -np.cross(w, inertia * w) / inertia
        return np.concatenate([dq, dw, w])

    model = rotode.ODE(f, n=10, quaternions=[0], args=(np.array([2.5, 1.4, 1.3]),))
    y0 = np.array([1, 0, 0, 0, 0.01, 5.0, 0.01, 0, 0, 0])
    for ev in ([rotode.events.Component("y", 5, value=0.0)],
               [rotode.events.Component("y", 5, value=0.0, terminal=3)]):
        a, b = _both(ode, model, (0, 40), y0, method=method, rtol=1e-9, atol=1e-11,
                     events=ev)
        _same(a, b)
        assert len(a.t_events[0]) >= 3


def test_the_t_handles_flips_against_the_closed_form():
    # the free T-handle of the README spun near its middle axis: w_y changes sign every half
    # period of the Jacobi elliptic solution, T/2 = 2 K(m) / omega_p (Landau & Lifshitz,
    # Mechanics sec. 37)
    from scipy.special import ellipk
    moments = np.array([2.5, 1.4, 1.3])
    w0 = np.array([0.01, 5.0, 0.01])
    body = rotode.RigidBody(moments)
    y0 = np.concatenate([[1, 0, 0, 0], w0])
    res = rotode.integrate(body, (0, 100), y0, method="rkmk8", rtol=1e-11, atol=1e-13,
                           events=rotode.events.Component("w", 1, value=0.0))
    half = np.diff(res.t_events[0])
    L2 = np.sum((moments * w0) ** 2)
    E2 = np.sum(moments * w0 ** 2)
    i1, i2, i3 = moments                        # I1 > I2 > I3, L^2 > 2 E I2 here
    assert L2 > E2 * i2
    wp = np.sqrt((i1 - i2) * (L2 - E2 * i3) / (i1 * i2 * i3))
    m = (i2 - i3) * (E2 * i1 - L2) / ((i1 - i2) * (L2 - E2 * i3))
    np.testing.assert_allclose(half, 2 * ellipk(m) / wp, rtol=1e-8)
