"""Working with SciPy: Rotations as inputs, rotode.state, as_rotation on every result, per-body
statistics and per-body events, and the defaults a SciPy user meets.

Independent references: SciPy's own Rotation conversions (``as_quat(scalar_first=True)``,
``as_matrix``, ``apply``, composition), closed forms of constant-rate rotations (the event
times), and each body's single run for the per-body counters and events (bit for bit).
"""
import pickle

import numpy as np
import pytest
import scipy.integrate
from scipy.spatial.transform import Rotation

import rotode
from rotode import events

X90 = Rotation.from_euler("x", 90, degrees=True)


def _dask():
    return pytest.importorskip("dask.array")


# ---- a Rotation wherever an orientation is ------------------------------------------------

def test_rotation_y0_runs_the_rotation_not_a_scalar_last_reading():
    """The issue's trap: 90 deg about x must stay about x (a scalar-last array read as
    scalar-first came back as 90 deg about z)."""
    res = rotode.integrate([0.0, 0.0, 0.0], (0, 1), X90, method="rk4", dt=0.5)
    np.testing.assert_allclose(rotode.as_rotation(res)[-1].as_rotvec(), [np.pi / 2, 0, 0],
                               atol=1e-15)
    np.testing.assert_array_equal(res.q[0], X90.as_quat(scalar_first=True))


def test_rotation_y0_equals_its_scalar_first_quaternions_and_the_closed_form():
    w = np.array([0.3, -0.2, 0.5])                  # constant body rate: q(T) = q0 exp(w T)
    stack = Rotation.from_rotvec([[0.1, 0.2, 0.3], [-1.0, 0.5, 2.0], [0.0, 0.0, 3.0]])
    res = rotode.integrate(w, (0, 2), stack, method="magnus4", dt=0.1)
    ref = rotode.integrate(w, (0, 2), stack.as_quat(scalar_first=True), method="magnus4",
                           dt=0.1)
    np.testing.assert_array_equal(res.y, ref.y)
    exact = stack * Rotation.from_rotvec(2 * w)
    got = rotode.as_rotation(res)
    assert got.shape == (3, res.t.size)
    for i in range(3):
        assert (got[i][-1].inv() * exact[i]).magnitude() < 1e-12


def test_solve_ivp_takes_a_rotation_for_quaternion_kinematics():
    qk = rotode.QuaternionKinematics([0.0, 0.0, 1.0])
    ours = rotode.solve_ivp(qk, (0, 1), X90, rtol=1e-10, atol=1e-12)
    ref = rotode.solve_ivp(qk, (0, 1), X90.as_quat(scalar_first=True), rtol=1e-10, atol=1e-12)
    np.testing.assert_array_equal(ours.y, ref.y)
    slow = rotode.solve_ivp(qk, (0, 1), X90, method="Radau")          # (SciPy's loop)
    np.testing.assert_allclose(slow.y[:, 0], X90.as_quat(scalar_first=True))


@pytest.mark.parametrize("call", [
    lambda: rotode.integrate(rotode.RigidBody([1, 2, 3]), (0, 1), X90, method="rk4", dt=0.1),
    lambda: rotode.solve_ivp(rotode.RigidBody([1, 2, 3]), (0, 1), X90),
], ids=["integrate", "solve_ivp"])
def test_a_rotation_is_not_a_rigid_body_state(call):
    with pytest.raises(TypeError, match=r"`y0` is a scipy Rotation.*rotode\.state\(rotation, "
                                        r"w_body\)"):
        call()


def test_a_rotation_for_a_python_fun_is_refused_naming_both_orders():
    with pytest.raises(TypeError, match=r"as_quat\(scalar_first=True\).*as_quat\(\)"):
        rotode.solve_ivp(lambda t, y: -y, (0, 1), X90)


def test_a_rotation_where_no_orientation_is_gets_a_message():
    with pytest.raises(TypeError, match=r"`model` must be a real numeric array, got a "
                                        r"scipy.spatial.transform.Rotation"):
        rotode.integrate(X90, (0, 1), [1.0, 0, 0, 0], method="rk4", dt=0.1)


def test_state_builds_rigid_body_states_from_rotations():
    w = [0.1, 0.2, 3.0]
    np.testing.assert_array_equal(rotode.state(X90, w),
                                  np.r_[X90.as_quat(scalar_first=True), w])
    np.testing.assert_array_equal(rotode.state(X90), X90.as_quat(scalar_first=True))
    stack = Rotation.from_rotvec(np.eye(3))
    y0 = rotode.state(stack, w)                                   # w repeated per body
    assert y0.shape == (3, 7)
    np.testing.assert_array_equal(y0[:, :4], stack.as_quat(scalar_first=True))
    np.testing.assert_array_equal(y0[:, 4:], np.tile(w, (3, 1)))
    y13 = rotode.state(X90, np.ones((2, 3)), position=[1, 2, 3], velocity=[0, 0, 0])
    assert y13.shape == (2, 13)
    np.testing.assert_array_equal(y13[1, 7:10], [1, 2, 3])
    # quaternion arrays pass through (scalar first, as everywhere in rotode)
    np.testing.assert_array_equal(rotode.state([1, 0, 0, 0], w), np.r_[1.0, 0, 0, 0, w])
    # the state runs: a rigid body from a Rotation
    body = rotode.RigidBody([1.0, 2.0, 3.0])
    res = rotode.integrate(body, (0, 1), rotode.state(X90, [0, 0, 0]), method="rk4", dt=0.1)
    np.testing.assert_allclose(rotode.as_rotation(res)[-1].as_rotvec(), [np.pi / 2, 0, 0])


@pytest.mark.parametrize("args, kwargs, error, match", [
    ((X90, [1.0, 2.0]), {}, ValueError, r"`w_body` must have shape \(\.\.\., 3\)"),
    ((Rotation.from_rotvec(np.eye(3)), np.ones((2, 3))), {}, ValueError,
     r"same number N of rows.*`orientation`: 3, `w_body`: 2"),
    ((X90, [0, 0, 1]), {"position": [0, 0, 0]}, ValueError, r"both `position` and `velocity`"),
    ((X90,), {"position": [0, 0, 0], "velocity": [0, 0, 0]}, ValueError, r"need `w_body`"),
    (([0.0, 0, 0, 0], [0, 0, 1]), {}, ValueError, r"`orientation` must hold nonzero"),
    ((np.ones((2, 2, 4)),), {}, ValueError, r"`orientation` must hold one orientation or a "
                                            r"stack of them, shape \(4,\) or \(N, 4\)"),
    (("abc",), {}, TypeError, r"`orientation` must be a real numeric array"),
])
def test_state_bad_input(args, kwargs, error, match):
    with pytest.raises(error, match=match):
        rotode.state(*args, **kwargs)


def test_rotation_angle_reference_as_a_rotation_and_its_crossing_time():
    """y0 = the reference, a constant body rate w: the angle from the reference is |w| t, so
    the event at `angle` is at angle / |w| (closed form)."""
    ref = Rotation.from_rotvec([0.3, -0.1, 0.2])
    w = np.array([0.0, 0.4, 0.3])                       # |w| = 0.5
    ev = events.RotationAngle(ref, 0.6, terminal=True)
    same = events.RotationAngle(ref.as_quat(scalar_first=True), 0.6)
    q = (ref * Rotation.from_rotvec([0.2, 0.1, 0.0])).as_quat(scalar_first=True)
    assert ev(0.0, q) == same(0.0, q)
    res = rotode.integrate(w, (0, 5), ref, method="dopri5", rtol=1e-10, atol=1e-12, events=ev)
    np.testing.assert_allclose(res.t_stop, 0.6 / 0.5, rtol=1e-9)


def test_frames_quaternion_kernels_inertia_and_exact_take_rotations():
    r = Rotation.from_rotvec([0.4, -0.3, 1.1])
    v = np.array([0.3, -2.0, 1.5])
    np.testing.assert_allclose(rotode.quaternion.rotate(r, v), r.apply(v), atol=1e-15)
    np.testing.assert_allclose(rotode.quaternion.to_matrix(r), r.as_matrix(), atol=1e-15)
    tf = rotode.Transform([1.0, 2.0, 3.0], r)
    np.testing.assert_allclose(tf.apply(v), r.apply(v) + [1, 2, 3], atol=1e-14)
    inertia = np.diag([1.0, 2.0, 3.0])
    np.testing.assert_allclose(rotode.inertia.rotate_inertia(inertia, r),
                               r.as_matrix() @ inertia @ r.as_matrix().T, atol=1e-14)
    q, _ = rotode.exact.free_rigid_body([1.0, 2.0, 3.0], [0.1, 0.2, 0.3], 0.0, q0=r)
    np.testing.assert_allclose(q, r.as_quat(scalar_first=True), atol=1e-15)
    chart = rotode.ExpCoordKinematics([0.0, 0.0, 1.0])
    chart.base = r
    np.testing.assert_allclose(chart.base, r.as_quat(scalar_first=True), atol=1e-16)


def test_the_scalar_last_trap_is_documented_where_users_meet_it():
    for doc in (rotode.integrate.__doc__, rotode.solve_ivp.__doc__, rotode.state.__doc__,
                events.RotationAngle.__doc__, rotode.Transform.__doc__):
        assert "scalar LAST" in doc


# ---- as_rotation accepts what integrate returns -------------------------------------------

def test_as_rotation_of_integrate_results():
    w = np.array([0.3, -0.2, 0.5])
    one = rotode.integrate(w, (0, 1), [1.0, 0, 0, 0], method="rk4", dt=0.1)
    rot = rotode.as_rotation(one)
    assert len(rot) == one.t.size
    np.testing.assert_array_equal(rot.as_quat(scalar_first=True),
                                  Rotation.from_quat(one.q, scalar_first=True)
                                  .as_quat(scalar_first=True))
    batch = rotode.integrate(np.array([w, 2 * w]), (0, 1), np.tile([1.0, 0, 0, 0], (2, 1)),
                             method="rk4", dt=0.1)
    rots = rotode.as_rotation(batch)
    assert rots.shape == (2, batch.t.size)
    assert (rots[1][-1].inv() * Rotation.from_rotvec(2 * w)).magnitude() < 1e-6
    with pytest.raises(ValueError, match=r"`kind`='expcoord' does not apply"):
        rotode.as_rotation(one, kind="expcoord")
    with pytest.raises(ValueError, match=r"request others with `t_eval`"):
        rotode.as_rotation(one, t=0.5)


def test_as_rotation_of_a_dask_result():
    da = _dask()
    y0 = np.tile([1.0, 0, 0, 0], (4, 1))
    w = np.outer(np.arange(1, 5), [0.1, 0.2, 0.3])
    lazy = rotode.integrate(w, (0, 1), da.from_array(y0, chunks=(2, 4)), method="rk4",
                            dt=0.1)
    ref = rotode.integrate(w, (0, 1), y0, method="rk4", dt=0.1)
    np.testing.assert_array_equal(rotode.as_rotation(lazy).as_quat(),
                                  rotode.as_rotation(ref).as_quat())


def test_the_row_layout_of_y_is_documented_against_scipy_s():
    doc = rotode.IntegrationResult.__doc__
    assert "transpose of SciPy's ``OdeResult.y``" in doc
    # and it is the transpose: the same pair through both entry points
    qk = rotode.QuaternionKinematics([0.3, -0.2, 0.5])
    t = np.linspace(0, 2, 5)
    res = rotode.integrate(qk, (0, 2), [1.0, 0, 0, 0], method="dopri5", rtol=1e-10,
                           atol=1e-12, t_eval=t)
    sol = rotode.solve_ivp(qk, (0, 2), [1.0, 0, 0, 0], rtol=1e-10, atol=1e-12, t_eval=t)
    np.testing.assert_allclose(res.y.T, sol.y, atol=1e-12)


def test_the_default_atol_is_documented_in_integrate():
    doc = rotode.integrate.__doc__
    assert "``atol=1e-6``" in doc and "rtol=1e-9" in doc


# ---- per-body statistics ------------------------------------------------------------------

RATES = np.array([[0.1, 0.2, 0.3], [2.0, -1.0, 0.5], [5.0, 4.0, -3.0], [0.0, 0.0, 9.0]])


@pytest.mark.parametrize("method, step", [("dopri5", {"rtol": 1e-9, "atol": 1e-12}),
                                          ("magnus8", {"rtol": 1e-9, "atol": 1e-12}),
                                          ("rk4", {"dt": 0.01})])
@pytest.mark.parametrize("workers", [1, 2])
def test_per_body_counters_equal_single_runs(method, step, workers):
    rates = RATES
    y0 = np.tile([1.0, 0, 0, 0], (len(rates), 1))
    res = rotode.integrate(rates, (0, 3), y0, method=method, workers=workers, **step)
    per = res.stats["per_body"]
    keys = {"n_steps", "nfev"} | ({"n_rejected", "nfev_pair"} if "rtol" in step else set())
    assert set(per) == keys
    for i, w in enumerate(rates):
        one = rotode.integrate(w, (0, 3), y0[i], method=method, **step)
        assert "per_body" not in one.stats
        for key in keys:
            assert per[key][i] == one.stats[key], (key, i)
    for key in keys:
        assert per[key].shape == (len(rates),) and per[key].dtype == np.int64
        assert res.stats[key] == per[key].max()          # the scalar: the largest
    if "rtol" in step:
        assert len(set(per["n_steps"])) > 1              # the bodies differ


def test_per_body_counters_of_rigid_bodies_and_the_implicit_methods():
    inertia = np.array([[1.0, 2.0, 3.0], [2.0, 2.0, 1.0], [1.0, 1.5, 2.0], [1.0, 1.0, 1.0]])
    y0 = np.c_[np.tile([1.0, 0, 0, 0], (4, 1)), [[0.1, 5, 0.1], [1, 1, 1], [3, 0, 0.2], [0, 0, 1]]]
    model = rotode.RigidBody(inertia)
    for method, step in (("dop853", {"rtol": 1e-8}), ("implicit_midpoint", {"dt": 0.05})):
        res = rotode.integrate(model, (0, 2), y0, method=method, **step)
        for i in range(4):
            one = rotode.integrate(model[i], (0, 2), y0[i], method=method, **step)
            for key, values in res.stats["per_body"].items():
                assert values[i] == one.stats[key], (method, key, i)


def test_per_body_counters_on_dask_equal_numpy():
    da = _dask()
    y0 = np.tile([1.0, 0, 0, 0], (len(RATES), 1))
    ref = rotode.integrate(RATES, (0, 3), y0, method="dopri5", rtol=1e-9)
    lazy = rotode.integrate(da.from_array(RATES, chunks=(3, 3)), (0, 3), y0, method="dopri5",
                            rtol=1e-9)
    out = lazy.compute(scheduler="threads")
    for key, values in ref.stats["per_body"].items():
        np.testing.assert_array_equal(out.stats["per_body"][key], values)
        np.testing.assert_array_equal(lazy.stats["per_body"][key].compute(), values)


# ---- per-body events ----------------------------------------------------------------------

def _spinning_batch(n=5, seed=3):
    """n bodies at reference orientations, each turning at a constant body rate w_i."""
    rng = np.random.default_rng(seed)
    refs = Rotation.from_rotvec(rng.normal(size=(n, 3)))
    rates = rng.normal(size=(n, 3))
    return refs, rates, np.linalg.norm(rates, axis=1)


@pytest.mark.parametrize("workers", [1, 2])
def test_per_body_rotation_angle_hits_each_closed_form_and_equals_single_runs(workers):
    refs, rates, speed = _spinning_batch()
    angles = np.linspace(0.4, 1.2, len(rates))
    ev = events.RotationAngle(refs, angles, terminal=True, direction=1)
    assert ev.n_bodies == len(rates)
    np.testing.assert_array_equal(ev.angle, angles)
    res = rotode.integrate(rates, (0, 20), refs, method="dopri5", rtol=1e-10, atol=1e-12,
                           events=ev, workers=workers)
    np.testing.assert_allclose(res.t_stop, angles / speed, rtol=1e-8)
    for i in range(len(rates)):
        one_event = events.RotationAngle(refs[i], angles[i], terminal=True, direction=1)
        one = rotode.integrate(rates[i], (0, 20), refs[i], method="dopri5", rtol=1e-10,
                               atol=1e-12, events=one_event)
        assert one.t_stop == res.t_stop[i]
        np.testing.assert_array_equal(one.y_final, res.y_final[i])
        np.testing.assert_array_equal(one.t_events[0], res.t_events[i][0])
        np.testing.assert_array_equal(one.y_events[0], res.y_events[i][0])
        assert repr(ev[i]) == repr(one_event)
        np.testing.assert_array_equal(ev[i]._params(), one_event._params())


def test_per_body_axis_angle_component_and_kinetic_energy():
    """Closed forms: turning about body x at rate s from the identity, the body z axis leaves
    the world z axis at angle s t and q_x = sin(s t / 2); a body spun up about its z axis by
    a constant torque tau has w_z = w0 + tau t / I3, so E = I3 w_z^2 / 2."""
    s = np.array([0.5, 1.0, 2.0])
    rates = np.c_[s, np.zeros(3), np.zeros(3)]
    y0 = np.tile([1.0, 0, 0, 0], (3, 1))
    tilt = np.array([0.3, 0.7, 1.1])
    ax = events.AxisAngle([0, 0, 1], [0, 0, 1], tilt, terminal=True, direction=1)
    res = rotode.integrate(rates, (0, 10), y0, method="dop853", rtol=1e-10, atol=1e-12,
                           events=ax)
    np.testing.assert_allclose(res.t_stop, tilt / s, rtol=1e-8)
    values = np.array([0.1, 0.2, 0.4])
    comp = events.Component("q", 1, values, terminal=True)
    res = rotode.integrate(rates, (0, 10), y0, method="dop853", rtol=1e-10, atol=1e-12,
                           events=comp)
    np.testing.assert_allclose(res.t_stop, 2 * np.arcsin(values) / s, rtol=1e-8)
    moments = np.array([[1.0, 1.0, 2.0], [1.5, 1.5, 1.0], [2.0, 2.5, 3.0], [1.0, 1.0, 1.0]])
    tau, w0 = 0.5, 1.0
    energy = np.array([2.0, 3.0, 5.0, 4.0])
    body = rotode.RigidBody(moments, torque=rotode.torque.Constant([0.0, 0.0, tau]))
    ke = events.KineticEnergy(moments, energy, terminal=True)
    yb = np.tile([1.0, 0, 0, 0, 0, 0, w0], (4, 1))
    res = rotode.integrate(body, (0, 50), yb, method="dop853", rtol=1e-10, atol=1e-12,
                           events=ke)
    i3 = moments[:, 2]
    np.testing.assert_allclose(res.t_stop, (np.sqrt(2 * energy / i3) - w0) * i3 / tau,
                               rtol=1e-8)
    for i in range(4):
        one = rotode.integrate(body[i], (0, 50), yb[i], method="dop853", rtol=1e-10,
                               atol=1e-12, events=ke[i])
        assert one.t_stop == res.t_stop[i]


def test_python_event_gets_the_body_index():
    refs, rates, speed = _spinning_batch(4)
    angles = np.array([0.3, 0.5, 0.7, 0.9])
    cos_half = np.cos(angles / 2)
    r = refs.as_quat(scalar_first=True)
    seen = set()

    def g(t, y, body=0):
        seen.add(body)
        return cos_half[body] - abs(r[body] @ y[:4]) / np.linalg.norm(y[:4])
    g.terminal = True
    assert events.PythonEvent(g).takes_body
    res = rotode.integrate(rates, (0, 20), refs, method="dopri5", rtol=1e-10, atol=1e-12,
                           events=g, workers=2)
    assert seen == {0, 1, 2, 3}
    compiled = rotode.integrate(rates, (0, 20), refs, method="dopri5", rtol=1e-10, atol=1e-12,
                                events=events.RotationAngle(refs, angles, terminal=True))
    np.testing.assert_allclose(res.t_stop, compiled.t_stop, rtol=1e-12)
    np.testing.assert_allclose(res.t_stop, angles / speed, rtol=1e-8)
    # SciPy calls g(t, y): the default body
    sol = scipy.integrate.solve_ivp(rotode.QuaternionKinematics(rates[0]), (0, 20), r[0],
                                    events=g, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(sol.t_events[0][0], angles[0] / speed[0], rtol=1e-8)


def test_per_body_events_on_dask_split_per_chunk():
    da = _dask()
    refs, rates, _ = _spinning_batch(7)
    angles = np.linspace(0.2, 1.4, 7)
    ev = events.RotationAngle(refs, angles, terminal=True)

    def g(t, y, body=0):                       # the global index, not the chunk's
        return y[0] - 0.5 + 0.01 * body
    kw = dict(method="dopri5", rtol=1e-9, events=[ev, g])
    ref = rotode.integrate(rates, (0, 20), refs, **kw)
    y0 = refs.as_quat(scalar_first=True)
    lazy = rotode.integrate(rates, (0, 20), da.from_array(y0, chunks=(3, 4)), **kw)
    out = lazy.compute(scheduler="threads")
    np.testing.assert_array_equal(out.t_stop, ref.t_stop)
    np.testing.assert_array_equal(out.y_final, ref.y_final)
    for a, b in zip(out.t_events, ref.t_events, strict=True):
        for ea, eb in zip(a, b, strict=True):
            np.testing.assert_array_equal(ea, eb)


def test_per_body_event_calls_indexing_and_pickling():
    refs, _, _ = _spinning_batch(3)
    ev = events.RotationAngle(refs, [0.1, 0.2, 0.3])
    q = Rotation.from_rotvec([0.5, 0.1, 0.0]).as_quat(scalar_first=True)
    for i in range(3):
        assert ev(0.0, q, body=i) == ev[i](0.0, q)
    assert ev[-1](0.0, q) == ev(0.0, q, body=2)
    with pytest.raises(ValueError, match=r"per-body parameters for 3 bodies: call it with "
                                         r"body=i, or take event\[i\]"):
        ev(0.0, q)
    with pytest.raises(IndexError, match="body index 3 out of range for 3 bodies"):
        ev[3]
    with pytest.raises(TypeError, match="holds one body's parameters"):
        ev[0][0]
    back = pickle.loads(pickle.dumps(ev))
    assert back.n_bodies == 3 and back(0.0, q, body=1) == ev(0.0, q, body=1)
    assert "per-body parameters of 3 bodies" in repr(ev)
    comp = events.Component("w", 2, [0.0, 1.0])
    assert pickle.loads(pickle.dumps(comp))[1].value == 1.0 and comp.needs_w


@pytest.mark.parametrize("call, error, match", [
    (lambda: events.RotationAngle(np.tile([1.0, 0, 0, 0], (3, 1)), [0.1, 0.2]), ValueError,
     r"same number of bodies.*`reference`: 3, `angle`: 2"),
    (lambda: events.RotationAngle([1.0, 0, 0, 0], [0.1, 4.0]), ValueError,
     r"`angle` must be in \[0, pi\] for every body, got 4\.0"),
    (lambda: events.RotationAngle(np.tile([0.0, 0, 0, 0], (2, 1)), 0.1), ValueError,
     r"`reference` must be a nonzero quaternion \(body 0\)"),
    (lambda: events.AxisAngle(np.ones((2, 2)), [0, 0, 1], 0.5), ValueError,
     r"`body_axis` must have shape \(3,\) or \(N, 3\)"),
    (lambda: events.KineticEnergy(np.ones((2, 3)), [1.0, 2.0, 3.0]), ValueError,
     r"`inertia`: 2, `value`: 3"),
    (lambda: events.Component("q", 0, [1.0, [2.0, 3.0]]), ValueError,
     r"`value` must be a real array, got a ragged nested list"),
    (lambda: rotode.integrate(RATES, (0, 1), np.tile([1.0, 0, 0, 0], (4, 1)), method="dopri5",
                              events=events.Component("q", 0, [0.5, 0.6, 0.7])), ValueError,
     r"`events\[0\]` holds per-body parameters for 3 bodies but `y0` holds 4"),
    (lambda: rotode.integrate(RATES[0], (0, 1), [1.0, 0, 0, 0], method="dopri5",
                              events=events.Component("q", 0, [0.5, 0.6])), ValueError,
     r"take the event of one body, events\[0\]\[i\]"),
])
def test_per_body_event_bad_input(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_per_body_event_parameters_as_dask_arrays_are_refused():
    da = _dask()
    with pytest.raises(TypeError, match=r"`angle` must be a NumPy array"):
        events.RotationAngle([1.0, 0, 0, 0], da.from_array(np.array([0.1, 0.2])))
