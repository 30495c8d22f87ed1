"""Events on the rotation group (rotode.events): located on the dense output of the
error-controlled methods, against closed forms and the exact free rigid body."""
import warnings

import numpy as np
import pytest
import scipy.integrate
from scipy.optimize import brentq

import rotode
from rotode import events as ev
from rotode.exact import free_rigid_body

PAIRS = ["dopri5", "dop853", "rkmk5", "rkmk8"]
THANDLE = np.array([2.5, 1.4, 1.3])
W0 = np.array([0.01, 5.0, 0.01])
Y_TH = np.r_[1.0, 0, 0, 0, W0]
TOP = rotode.RigidBody([1, 1, 0.5], torque=rotode.torque.Gravity(1.0, 1.0, [0, 0, 1]))


@pytest.fixture(scope="module")
def thandle_flips():
    """The exact times at which w_y of the T-handle changes sign downwards over 100 s."""
    ts = np.linspace(0, 100, 20001)
    wy = free_rigid_body(THANDLE, W0, ts)[1][:, 1]
    idx = np.flatnonzero((wy[:-1] > 0) & (wy[1:] <= 0))
    return np.array([brentq(lambda t: free_rigid_body(THANDLE, W0, t)[1][1], ts[k], ts[k + 1],
                            xtol=1e-14) for k in idx])


@pytest.mark.parametrize("method", PAIRS)
def test_thandle_flips_against_the_exact_solution(method, thandle_flips):
    flip = ev.Component("w", 1, value=0.0, direction=-1)
    res = rotode.integrate(rotode.RigidBody(THANDLE), (0, 100), Y_TH, method=method,
                           rtol=1e-12, atol=1e-14, events=flip)
    assert res.status == 0 and res.success
    assert len(res.t_events[0]) == len(thandle_flips) >= 3
    assert np.abs(res.t_events[0] - thandle_flips).max() < 1e-7
    assert np.abs(res.y_events[0][:, 5]).max() < 1e-12          # w_y = 0 there
    assert res.stats["n_events"].tolist() == [len(thandle_flips)]


@pytest.mark.parametrize("method", PAIRS + ["magnus6", "magnus8"])
def test_cone_crossings_of_a_constant_rotation_in_closed_form(method):
    """A body spinning at constant w about a tilted axis: its z axis moves on a cone and
    crosses the 60 degree cone around world z at times known in closed form.  The group
    methods integrate a constant rate exactly, so the located times are exact to round-off;
    the pairs on the quaternion carry their trajectory error (~2e-10 s at rtol 1e-10).
    (``max_step``: a method that is exact for the problem would otherwise step over pairs of
    crossings, as any solver that only compares signs at step ends would.)"""
    beta, rate = np.radians(50.0), 1.3                       # spin axis tilt, rad/s
    axis = np.array([np.sin(beta), 0.0, np.cos(beta)])
    res = rotode.integrate(rate * axis, (0, 20), [1.0, 0, 0, 0], method=method, rtol=1e-10,
                           atol=1e-13, max_step=0.5,
                           events=ev.AxisAngle([0, 0, 1], [0, 0, 1], np.radians(60.0)))
    # e_z rotated by phi about axis: z-component cos^2(beta) + sin^2(beta) cos(phi)
    c = (np.cos(np.radians(60.0)) - np.cos(beta) ** 2) / np.sin(beta) ** 2
    phi0 = np.arccos(c)
    k = np.arange(0, 5)
    exact = np.sort(np.r_[(phi0 + 2 * np.pi * k) / rate, (2 * np.pi * (k + 1) - phi0) / rate])
    exact = exact[exact <= 20]
    assert len(res.t_events[0]) == len(exact)
    bound = 5e-10 if method in ("dopri5", "dop853") else 1e-13
    error = np.abs(res.t_events[0] - exact).max()
    assert error < bound
    if method in ("dopri5", "dop853"):
        # the pairs' error is the method's: SciPy's own solver on the same equations (its
        # steps differ after the first, whose error estimate is round-off) is as far off
        ref = scipy.integrate.solve_ivp(rotode.QuaternionKinematics(rate * axis), (0, 20),
                                        [1.0, 0, 0, 0], method={"dopri5": "RK45"}.get(
                                            method, "DOP853"), rtol=1e-10, atol=1e-13,
                                        max_step=0.5, events=ev.AxisAngle([0, 0, 1], [0, 0, 1],
                                                                          np.radians(60.0)))
        scipy_error = np.abs(ref.t_events[0] - exact).max()
        assert 0.5 * scipy_error < error < 1.5 * scipy_error


def test_terminal_event_stops_the_falling_top():
    tilt = ev.AxisAngle([0, 0, 1], [0, 0, 1], np.radians(60), terminal=True, direction=1)
    t_eval = np.linspace(0, 10, 101)
    res = rotode.integrate(TOP, (0, 10), [1.0, 0, 0, 0, 0.5, 0, 0.3], method="rkmk8",
                           rtol=1e-10, atol=1e-12, events=tilt, t_eval=t_eval)
    assert res.status == 1 and res.success and "termination event" in res.message
    t_stop = res.t_stop
    assert t_stop == res.t_events[0][0] and 0 < t_stop < 10
    # the axis is at 60 degrees there, and one body's output ends at the stop (the requested
    # times up to it, as solve_ivp's), its state there in y_final
    q = res.y_events[0][0, :4]
    z = rotode.quaternion.rotate(q / np.linalg.norm(q), [0, 0, 1])
    assert abs(z[2] - 0.5) < 1e-12
    np.testing.assert_array_equal(res.t, t_eval[t_eval <= t_stop])
    assert np.isfinite(res.y).all() and res.y.shape == (res.t.size, 7)
    np.testing.assert_array_equal(res.y_final, res.y_events[0][0])
    # the same time from SciPy's own event location on a reference run
    ref = scipy.integrate.solve_ivp(TOP, (0, 10), [1.0, 0, 0, 0, 0.5, 0, 0.3],
                                    method="DOP853", rtol=1e-12, atol=1e-14, events=tilt)
    assert abs(ref.t_events[0][0] - t_stop) < 1e-8


def test_terminal_count_and_direction_as_in_scipy():
    flip = ev.Component("w", 1, value=0.0, direction=-1, terminal=2)
    res = rotode.integrate(rotode.RigidBody(THANDLE), (0, 100), Y_TH, method="dop853",
                           rtol=1e-10, events=[flip, ev.Component("w", 1, 0.0, direction=+1)])
    assert res.status == 1 and len(res.t_events[0]) == 2
    assert res.t_stop == res.t_events[0][1]
    assert np.all(res.t_events[1] < res.t_stop) and len(res.t_events[1]) >= 1


@pytest.mark.parametrize("workers", [1, 2])
def test_batch_stops_each_body_at_its_own_event(workers):
    rng = np.random.default_rng(11)
    n = 64
    w0 = np.c_[rng.uniform(0.2, 0.8, n), np.zeros(n), rng.uniform(2.0, 10.0, n)]  # fast: stable
    y0 = np.c_[np.tile([1.0, 0, 0, 0], (n, 1)), w0]
    tilt = ev.AxisAngle([0, 0, 1], [0, 0, 1], np.radians(45), terminal=True, direction=1)
    batch = rotode.integrate(TOP, (0, 30), y0, method="dop853", rtol=1e-9, events=tilt,
                             workers=workers)
    assert batch.status == 1
    stopped = np.isfinite(batch.t_stop)
    assert 0 < stopped.sum() < n                    # some tops fall past 45 degrees, some not
    for i in range(0, n, 7):
        one = rotode.integrate(TOP, (0, 30), y0[i], method="dop853", rtol=1e-9, events=tilt)
        # a stopped body: the batch keeps the grid (NaN after the stop), the single run ends at
        # the stop; both give the state there as y_final
        np.testing.assert_array_equal(batch.y[i, 0], one.y[0])
        np.testing.assert_array_equal(batch.y_final[i], one.y_final)
        np.testing.assert_array_equal(one.y[-1], one.y_final)
        if not stopped[i]:
            np.testing.assert_array_equal(batch.y[i], one.y)
        np.testing.assert_array_equal(batch.t_events[i][0], one.t_events[0])
        assert (np.isnan(one.t_stop) and np.isnan(batch.t_stop[i])) or one.t_stop == \
            batch.t_stop[i]


def test_python_event_functions_and_their_errors():
    def g(t, y):
        return y[4] - 0.1

    g.terminal = True
    res = rotode.integrate(TOP, (0, 100), [1.0, 0, 0, 0, 0.5, 0, 0.3], method="dop853",
                           rtol=1e-10, events=g)
    compiled = rotode.integrate(TOP, (0, 100), [1.0, 0, 0, 0, 0.5, 0, 0.3], method="dop853",
                                rtol=1e-10, events=ev.Component("y", 4, 0.1, terminal=True))
    assert res.status == 1 and res.t_stop == compiled.t_stop

    def bad(t, y):
        raise ZeroDivisionError("in the event")

    with pytest.raises(ZeroDivisionError, match="in the event"):
        rotode.integrate(TOP, (0, 1), [1.0, 0, 0, 0, 0.5, 0, 0.3], method="dop853",
                         rtol=1e-8, events=bad)

    def nan(t, y):
        return float("nan")

    with pytest.raises(ValueError, match="returned NaN"):
        rotode.integrate(TOP, (0, 1), [1.0, 0, 0, 0, 0.5, 0, 0.3], method="dop853",
                         rtol=1e-8, events=nan)


def test_events_are_scipy_events_too():
    tilt = ev.AxisAngle([0, 0, 1], [0, 0, 1], np.radians(60), terminal=True, direction=1)
    y = np.array([1.0, 0, 0, 0, 0.5, 0, 0.3])
    assert tilt(0.0, y) == pytest.approx(np.cos(np.radians(60)) - 1.0)
    assert ev.KineticEnergy([1, 1, 0.5], 0.1)(0.0, y) == pytest.approx(
        0.5 * (0.25 + 0.5 * 0.09) - 0.1)
    assert ev.RotationAngle([1, 0, 0, 0], np.pi / 2)(0.0, [0.0, 1, 0, 0]) == pytest.approx(
        np.cos(np.pi / 4))


@pytest.mark.parametrize("bad, error, match", [
    (dict(events=[42]), TypeError, r"events\[0\]"),
    (dict(events=ev.Component("y", 9, 0.0)), ValueError, "has 7 entries"),
    (dict(events=ev.Component("q", 0), dt=0.1), ValueError, "error-controlled"),
    (dict(events=ev.Component("q", 0), max_events=0), ValueError, "max_events"),
])
def test_bad_events_are_refused(bad, error, match):
    kw = dict(method="dop853", rtol=1e-6)
    if "dt" in bad:
        kw = dict(method="rk4")
    kw.update(bad)
    with pytest.raises(error, match=match):
        rotode.integrate(TOP, (0, 1), [1.0, 0, 0, 0, 0.5, 0, 0.3], **kw)


@pytest.mark.parametrize("args, match", [
    (dict(direction=2), "direction"), (dict(terminal=-1), "terminal"),
])
def test_bad_event_attributes(args, match):
    with pytest.raises(ValueError, match=match):
        ev.Component("w", 0, 0.0, **args)
    with pytest.raises(ValueError, match="name"):
        ev.Component("v", 0)
    with pytest.raises(ValueError, match="angle"):
        ev.AxisAngle([0, 0, 1], [0, 0, 1], 4.0)


@pytest.mark.parametrize("method", PAIRS)
def test_symmetric_top_nutation_crossings_in_closed_form(method):
    """A free symmetric top (I1 = I2): w_x(t) = a cos(lambda t) with lambda = (I3 - I1)/I1 w3,
    so w_x changes sign at t = (pi/2 + k pi)/lambda."""
    inertia = np.array([1.0, 1.0, 1.8])
    w0 = np.array([0.4, 0.0, 2.0])
    lam = (inertia[2] - inertia[0]) / inertia[0] * w0[2]
    res = rotode.integrate(rotode.RigidBody(inertia), (0, 20), np.r_[1.0, 0, 0, 0, w0],
                           method=method, rtol=1e-12, atol=1e-14,
                           events=ev.Component("w", 0, 0.0))
    exact = (np.pi / 2 + np.pi * np.arange(20)) / lam
    exact = exact[exact <= 20]
    assert len(res.t_events[0]) == len(exact) >= 5
    assert np.abs(res.t_events[0] - exact).max() < 1e-10
    q_ex = free_rigid_body(inertia, w0, res.t_events[0])[1]
    assert np.abs(q_ex[:, 0]).max() < 1e-10                       # the exact w_x is 0 there


@pytest.mark.parametrize("workers", [1, 2])
def test_ten_thousand_tops_stop_at_their_own_events(workers):
    rng = np.random.default_rng(3)
    n = 10_000
    w0 = np.c_[rng.uniform(0.2, 0.8, n), rng.uniform(-0.1, 0.1, n), rng.uniform(2.0, 10.0, n)]
    y0 = np.c_[np.tile([1.0, 0, 0, 0], (n, 1)), w0]
    tilt = ev.AxisAngle([0, 0, 1], [0, 0, 1], np.radians(45), terminal=True, direction=1)
    batch = rotode.integrate(TOP, (0, 20), y0, method="rkmk8", rtol=1e-8, events=tilt,
                             workers=workers)
    assert 0 < np.isfinite(batch.t_stop).sum() < n
    for i in rng.choice(n, 25, replace=False):
        one = rotode.integrate(TOP, (0, 20), y0[i], method="rkmk8", rtol=1e-8, events=tilt)
        # (a stopped single run ends at its stop; the batch keeps the grid, NaN after it)
        np.testing.assert_array_equal(batch.y[i, 0], one.y[0])
        np.testing.assert_array_equal(batch.y_final[i], one.y_final)
        if np.isnan(one.t_stop):
            np.testing.assert_array_equal(batch.y[i], one.y)
        np.testing.assert_array_equal(batch.t_events[i][0], one.t_events[0])


def test_needs_w_of_the_builtin_events():
    """Events that never read the body angular velocity say so (`Event.needs_w`), so that
    a kinematic run skips the rate evaluation behind w when it locates them."""
    assert not ev.AxisAngle([0, 0, 1], [0, 0, 1], 1.0).needs_w
    assert not ev.RotationAngle([1, 0, 0, 0], 1.0).needs_w
    assert not ev.Component("q", 1).needs_w and not ev.Component("y", 2).needs_w
    assert ev.Component("w", 1).needs_w
    assert ev.KineticEnergy([1, 2, 3], 1.0).needs_w
    assert not ev.PythonEvent(lambda t, y: y[0]).needs_w           # it sees the row y only


@pytest.mark.parametrize("method", ["dop853", "rkmk8", "magnus8"])
def test_kinematic_events_with_and_without_w(method):
    """A kinematic run (Rucker's gyro) with an event on q only skips the rate evaluations
    behind w (fewer evaluations in stats['nfev']), and gives the same occurrences as with an
    event on w beside it; the w event's times are the closed-form zeros of
    w_x = a sin(b t) (t = 0 included: zero there, as SciPy records it)."""
    a, b = np.pi / 2, 2 * np.pi / 10
    gyro = rotode.omega.Sinusoid(amplitude=a, rate=b, phase=[0, 2 * np.pi / 3, 4 * np.pi / 3])
    tilt = ev.AxisAngle([0, 0, 1], [0, 0, 1], np.radians(60))
    wx = ev.Component("w", 0, 0.0)
    kw = dict(method=method, rtol=1e-10, frame="body", max_step=0.5)
    alone = rotode.integrate(gyro, (0, 29), [1.0, 0, 0, 0], events=tilt, **kw)
    both = rotode.integrate(gyro, (0, 29), [1.0, 0, 0, 0], events=[tilt, wx], **kw)
    assert len(alone.t_events[0]) >= 6
    np.testing.assert_array_equal(alone.t_events[0], both.t_events[0])
    np.testing.assert_array_equal(alone.y_events[0], both.y_events[0])
    exact = np.arange(0, 6) * np.pi / b                            # sin(b t) = 0 in [0, 29]
    np.testing.assert_allclose(both.t_events[1], exact, rtol=0, atol=1e-12)
    assert alone.stats["nfev"] < both.stats["nfev"]


@pytest.mark.parametrize("method", ["RK45", "DOP853"])
def test_roots_are_on_the_runs_own_dense_output_to_a_few_ulp(method):
    """rotode's root search (Brent's method, its last point accepted by g's residual) puts
    each located time within a few ulp of the root of g on the run's own dense output, found
    here independently by SciPy's brentq on ``sol.sol``."""
    tilt = ev.AxisAngle([0, 0, 1], [0, 0, 1], np.radians(60), direction=1)
    res = rotode.solve_ivp(TOP, (0, 60), [1.0, 0, 0, 0, 1.5, 0.0, 1.0], method=method,
                           rtol=1e-10, atol=1e-12, events=tilt, dense_output=True)
    times = res.t_events[0]
    assert len(times) >= 15

    def g(t):
        return tilt(t, res.sol(t))

    for te in times:
        a, b = te - 1e-7, te + 1e-7
        assert g(a) < 0 < g(b)
        root = brentq(g, a, b, xtol=1e-300, rtol=4 * np.finfo(float).eps, maxiter=500)
        assert abs(root - te) <= 4 * np.spacing(te)


def test_event_calls_from_scipy_take_the_fast_path_with_the_same_values(rng):
    """Called as SciPy calls it (a float t and a float64 row), an event skips the argument
    conversion: the same value as through the checked path (a list), and bad rows still
    raise the checked path's errors."""
    events = [ev.AxisAngle([0, 0, 1], [0.3, 0, 1], 1.0),
              ev.RotationAngle([0.5, 0.5, 0.5, 0.5], 2.0), ev.Component("w", 2, 0.1),
              ev.Component("q", 3), ev.KineticEnergy([1, 2, 3], 0.5)]
    for _ in range(20):
        y = np.r_[rng.normal(size=4), rng.normal(size=3)]
        for e in events:
            assert e(0.25, y) == e(0.25, y.tolist())
            if not (isinstance(e, ev.Component) and e.name == "w") and \
                    not isinstance(e, ev.KineticEnergy):
                assert e(0.25, y[:4].copy()) == e(0.25, y[:4].tolist())
    for bad, match in [(np.zeros(7), "nonzero quaternions"),
                       (np.r_[1.0, 0, 0, 0, 0, np.nan, 0], "finite"),
                       (np.r_[np.inf, 0, 0, 0], "finite"), (np.ones(5), "shape")]:
        with pytest.raises(ValueError, match=match):
            events[2](0.0, bad)


SPIN = rotode.RigidBody([1.0, 1.0, 1.0])
Y_SPIN = np.array([1.0, 0, 0, 0, 0, 0, 2 * np.pi * 100])       # 100 Hz about z: q_z = 0 every 10 ms


def test_every_occurrence_is_kept_by_default_in_solve_ivp_as_in_scipy():
    """70044 zero crossings of q_z (SciPy finds the same number); the driver's records grow,
    where they used to stop at 65536 with a warning."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = rotode.solve_ivp(SPIN, (0, 700), Y_SPIN, method="RK45", max_step=0.004,
                               events=ev.Component("q", 3))
    assert res.status == 0 and len(res.t_events[0]) == len(res.y_events[0]) == 70044
    q = res.y_events[0][:, :4]                  # (its norm drifts at the default rtol)
    assert np.all(np.diff(res.t_events[0]) > 0)
    assert np.abs(q[:, 3] / np.linalg.norm(q, axis=1)).max() < 1e-9


@pytest.mark.parametrize("workers", [1, 2])
def test_batch_keeps_as_many_occurrences_as_single_runs_by_default(workers):
    rates = np.array([95.0, 100.0, 105.0, 100.0, 80.0]) * 2 * np.pi
    y0 = np.c_[np.tile([1.0, 0, 0, 0], (5, 1)), np.zeros((5, 2)), rates]
    kw = dict(method="dopri5", max_step=0.004, events=[ev.Component("q", 3),
                                                       ev.Component("w", 0, 1.0)])
    with warnings.catch_warnings():
        warnings.simplefilter("error")                  # nothing dropped: no warning
        batch = rotode.integrate(SPIN, (0, 13), y0, workers=workers, **kw)
        for i in range(5):
            one = rotode.integrate(SPIN, (0, 13), y0[i], **kw)
            assert len(one.t_events[0]) == one.stats["n_events"][0] > 1000   # (old: 1000, 16)
            assert len(one.t_events[1]) == 0
            np.testing.assert_array_equal(batch.t_events[i][0], one.t_events[0])
            np.testing.assert_array_equal(batch.y_events[i][0], one.y_events[0])
            assert batch.y_events[i][1].shape == (0, 7)
            np.testing.assert_array_equal(batch.stats["n_events"][i], one.stats["n_events"])


def test_max_events_keeps_the_first_ones_and_counts_all():
    kw = dict(method="dop853", max_step=0.004, events=ev.Component("q", 3))
    every = rotode.integrate(SPIN, (0, 1), Y_SPIN, **kw)
    n = every.stats["n_events"][0]
    assert len(every.t_events[0]) == n > 7
    with pytest.warns(RuntimeWarning, match="max_events`=7"):
        some = rotode.integrate(SPIN, (0, 1), np.tile(Y_SPIN, (2, 1)), max_events=7, **kw)
    for i in range(2):
        np.testing.assert_array_equal(some.t_events[i][0], every.t_events[0][:7])
        np.testing.assert_array_equal(some.y_events[i][0], every.y_events[0][:7])
        assert some.stats["n_events"][i, 0] == n
    huge = rotode.integrate(SPIN, (0, 1), Y_SPIN, max_events=10 ** 400, **kw)
    np.testing.assert_array_equal(huge.t_events[0], every.t_events[0])


GYRO_KIN = rotode.QuaternionKinematics(rotode.omega.Sinusoid([1, .5, .2], 0.7, [.3, .2, .1]))


@pytest.mark.parametrize("event", [ev.Component("w", 0), ev.KineticEnergy([1, 2, 3], 0.1)])
def test_w_events_on_a_kinematic_state_refuse_scipy_instead_of_nan(event):
    """SciPy calls an event on the 4-entry state [q] of a kinematic run, which has no w: the
    event says so (a NaN would be taken for 'no sign change' and the events lost); rotode's
    own runs supply w and find them."""
    with pytest.raises(ValueError, match=r"has no body angular velocity w.*rotode\.solve_ivp"):
        scipy.integrate.solve_ivp(GYRO_KIN, (0, 20), [1, 0, 0, 0], method="DOP853", events=event)
    with pytest.raises(ValueError, match=r"out of range of the state y of 4 entries"):
        ev.Component("y", 4)(0.0, np.array([1.0, 0, 0, 0]))
    res = rotode.solve_ivp(GYRO_KIN, (0, 20), [1, 0, 0, 0], method="DOP853",
                           events=ev.Component("w", 0))
    assert len(res.t_events[0]) == 4


def test_python_subclass_overriding_call_is_run_through_call_as_in_scipy():
    """A Python subclass of an event whose __call__ is overridden is a Python event to rotode
    as it is to SciPy: its __call__ decides, not the compiled evaluate of its base."""
    class Shifted(ev.Component):
        def __call__(self, t, y):
            return y[4] - 0.1

    def g(t, y):
        return y[4] - 0.1

    y0 = [1.0, 0, 0, 0, 0.5, 0, 0.3]
    kw = dict(method="dop853", rtol=1e-10, atol=1e-12)
    sub = rotode.integrate(TOP, (0, 20), y0, events=Shifted("w", 1), **kw)
    plain = rotode.integrate(TOP, (0, 20), y0, events=g, **kw)
    assert len(plain.t_events[0]) >= 1
    np.testing.assert_array_equal(sub.t_events[0], plain.t_events[0])
    ref = scipy.integrate.solve_ivp(TOP, (0, 20), y0, events=Shifted("w", 1), method="DOP853",
                                    rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(sub.t_events[0], ref.t_events[0], atol=1e-7)

    class OnlyCall(ev.Event):          # a Python subclass of the base: its __call__ only
        def __call__(self, t, y):
            return y[4] - 0.1

    only = rotode.integrate(TOP, (0, 20), y0, events=OnlyCall(terminal=True), **kw)
    assert only.status == 1 and only.t_stop == plain.t_events[0][0]

    class Nothing(ev.Event):
        pass

    for bad in [ev.Event(), Nothing()]:
        with pytest.raises(TypeError, match=r"`events\[1\]` .* has no `evaluate`"):
            rotode.integrate(TOP, (0, 1), y0, events=[g, bad], **kw)
        with pytest.raises(TypeError, match=r"`events\[0\]` .* has no `evaluate`"):
            rotode.solve_ivp(TOP, (0, 1), y0, events=bad, method="DOP853")


def test_event_attributes_of_python_functions_as_scipy_takes_them():
    """terminal None (False) and an integral float (its integer) as SciPy >= 1.11 takes them;
    what SciPy refuses is refused naming the entry of `events`."""
    y0 = [1.0, 0, 0, 0, 0.5, 0, 0.3]
    kw = dict(method="dop853", rtol=1e-10, atol=1e-12)

    def make(**attributes):
        def g(t, y):
            return y[4] - 0.1
        g.__dict__.update(attributes)
        return g

    for terminal, same in [(None, False), (1.0, 1), (np.float64(2.0), 2), (0.0, False)]:
        a = rotode.integrate(TOP, (0, 20), y0, events=[make(), make(terminal=terminal)], **kw)
        b = rotode.integrate(TOP, (0, 20), y0, events=[make(), make(terminal=same)], **kw)
        assert a.status == b.status and a.t_events[1].tolist() == b.t_events[1].tolist()
        ref = scipy.integrate.solve_ivp(TOP, (0, 20), y0, events=make(terminal=terminal),
                                        method="DOP853", rtol=1e-10, atol=1e-12)
        assert ref.status == a.status
        assert ev.Component("q", 0, terminal=terminal).terminal == int(same)
    for attributes, match in [(dict(direction=2), r"`events\[1\]\.direction`"),
                              (dict(terminal=-1), r"`events\[1\]\.terminal`"),
                              (dict(terminal=1.5), r"`events\[1\]\.terminal`"),
                              (dict(terminal=float("nan")), r"`events\[1\]\.terminal`"),
                              (dict(terminal="1"), r"`events\[1\]\.terminal`")]:
        with pytest.raises(ValueError, match=match):
            rotode.integrate(TOP, (0, 1), y0, events=[make(), make(**attributes)], **kw)
        if "terminal" in attributes:             # SciPy refuses them too (it takes any
            with pytest.raises(ValueError):       # direction, by its sign)
                scipy.integrate.solve_ivp(TOP, (0, 1), y0, events=make(**attributes),
                                          method="DOP853")


@pytest.mark.parametrize("inertia", [[-1, 1, 1], [1, 1, 0], np.diag([1.0, 2, -1]),
                                     np.triu(np.ones((3, 3))) + np.eye(3), [1, 1, 3],
                                     np.ones((2, 3, 3))])
def test_kinetic_energy_inertia_is_checked_as_rigid_bodys(inertia):
    with pytest.raises(ValueError, match="`inertia`"):
        ev.KineticEnergy(inertia, 1.0)
    with pytest.raises(ValueError, match="`inertia`"):
        rotode.RigidBody(inertia)


def test_python_event_returning_complex_is_named():
    with pytest.raises(TypeError, match=r"the event .* must return a real number, got a "
                                         r"complex number \(0\.5\+0j\) at t = 0\.0"):
        rotode.integrate(TOP, (0, 1), [1.0, 0, 0, 0, 0.5, 0, 0.3], method="dop853",
                         rtol=1e-8, events=lambda t, y: complex(y[4], 0))


def test_event_identically_zero_is_not_recorded_unlike_scipy():
    """g = w_x stays 0 for a body spinning about its symmetry axis: no sign change, so rotode
    records nothing, while SciPy records it at every step (docs/events.md: documented)."""
    body = rotode.RigidBody([1, 1, 2])
    y0 = [1.0, 0, 0, 0, 0, 0, 3.0]
    res = rotode.integrate(body, (0, 5), y0, method="dop853", rtol=1e-8,
                           events=ev.Component("w", 0))
    assert len(res.t_events[0]) == 0
    ref = scipy.integrate.solve_ivp(body, (0, 5), y0, method="DOP853", rtol=1e-8,
                                    events=ev.Component("w", 0))
    assert len(ref.t_events[0]) == ref.t.size - 1


def test_reprs_show_the_parameters_so_that_errors_name_the_event():
    shown = [repr(ev.AxisAngle([0, 0, 2], [0, 1, 0], 0.5, terminal=True, direction=1)),
             repr(ev.RotationAngle([2.0, 0, 0, 0], 0.25)),
             repr(ev.KineticEnergy([1, 2, 2.5], 0.3)),
             repr(ev.KineticEnergy([[2, 0.1, 0], [0.1, 2, 0], [0, 0, 3]], 0.3))]
    assert shown[0] == ("AxisAngle(body_axis=[0.0, 0.0, 1.0], world_axis=[0.0, 1.0, 0.0], "
                        "angle=0.5, terminal=1, direction=1)")
    assert shown[1].startswith("RotationAngle(reference=[1.0, 0.0, 0.0, 0.0], angle=0.25,")
    assert shown[2] == "KineticEnergy([1.0, 2.0, 2.5], value=0.3, terminal=0, direction=0)"
    assert "[0.1, 2.0, 0.0]" in shown[3]
    with pytest.raises(ValueError, match=r"KineticEnergy\(\[1.0, 2.0, 2.5\], value=0.3"):
        scipy.integrate.solve_ivp(GYRO_KIN, (0, 1), [1.0, 0, 0, 0],
                                  events=ev.KineticEnergy([1, 2, 2.5], 0.3))
