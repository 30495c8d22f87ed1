"""rotode.integrate (the facade over the native steppers) and the OdeSolver classes."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.integrate import solve_ivp
from scipy.spatial.transform import Rotation

import rotode
from rotode import methods
from rotode.integration import _time_grid, methods_for

BENCH = rotode.omega.Sinusoid(amplitude=np.pi / 2, rate=2 * np.pi / 10,
                              phase=[0.0, 2 * np.pi / 3, 4 * np.pi / 3])
T_HANDLE = [2.5, 1.4, 1.3]
Y0_BODY = [1.0, 0.0, 0.0, 0.0, 0.01, 5.0, 0.01]


def test_every_method_is_reachable_and_kinds_are_separate():
    kin, rb = methods_for("kinematics"), methods_for("rigid body")
    assert {"magnus4", "magnus_ca", "rk4", "ab3"} <= set(kin)
    assert {"implicit_midpoint", "rkn4", "cg3"} <= set(rb)
    assert set(rotode.integration.METHODS) == set(kin) | set(rb)


@pytest.mark.parametrize("method", methods_for("kinematics"))
def test_constant_rate_kinematics_against_closed_form(method):
    w = np.array([0.3, -1.1, 2.0])
    res = rotode.integrate(w, (0.0, 2.0), [1.0, 0, 0, 0], method=method, dt=0.01)
    exact = Rotation.from_rotvec(np.outer(res.t, w))
    err = (res.rotation.inv() * exact).magnitude()
    # a Lie-group method is exact on a constant rate; a vector-space one has its order's error
    m = methods.get(method)
    tol = 1e-12 if m.group or m.order >= 5 else 1e-6
    assert err.max() < tol
    np.testing.assert_allclose(res.w, np.tile(w, (res.t.size, 1)), atol=1e-15)
    assert res.success and res.status == 0 and res.stats["n_steps"] == 200


def test_result_shapes_single_and_batch(rng):
    q0 = rng.normal(size=(5, 4))
    res = rotode.integrate(BENCH, (0, 1), q0, method="magnus6", dt=0.1)
    assert res.q.shape == (5, 11, 4) and res.w.shape == (5, 11, 3) and res.t.shape == (11,)
    one = rotode.integrate(BENCH, (0, 1), q0[2], method="magnus6", dt=0.1)
    assert one.q.shape == (11, 4)
    np.testing.assert_array_equal(one.q, res.q[2])
    rot = res.rotation
    assert len(rot) == 5 or rot.shape == (5, 11)


def test_t_eval_lands_on_output_times_without_interpolation():
    t_eval = [0.0, 0.37, 1.0, 2.5]
    res = rotode.integrate(BENCH, (0, 2.5), [1.0, 0, 0, 0], method="rk4", dt=0.1,
                           t_eval=t_eval)
    np.testing.assert_array_equal(res.t, t_eval)
    # the state at 0.37 is the one of a run that ends there on the same uniform grid
    short = rotode.integrate(BENCH, (0, 0.37), [1.0, 0, 0, 0], method="rk4", dt=0.1)
    np.testing.assert_array_equal(res.q[1], short.q[-1])


def test_time_grid_rules():
    grid, save = _time_grid((0.0, 1.0), 0.3, None, None)
    np.testing.assert_allclose(grid, [0, 0.3, 0.6, 0.9, 1.0], atol=1e-15)
    assert grid[-1] == 1.0 and list(save) == [0, 1, 2, 3, 4]
    grid, save = _time_grid((0.0, 1.0), 0.1, None, 3)
    assert list(save) == [0, 3, 6, 9, 10]
    grid, save = _time_grid((1.0, 0.0), 0.25, [1.0, 0.6, 0.0], None)
    np.testing.assert_allclose(grid, [1.0, 0.75, 0.6, 0.5, 0.25, 0.0])
    assert list(grid[save]) == [1.0, 0.6, 0.0]
    # an output time within round-off of a grid point replaces it (no sliver step)
    grid, _ = _time_grid((0.0, 1.0), 0.1, [0.30000000000000004 - 1e-13], None)
    assert np.diff(grid).min() > 0.09


def _uniform_grid_reference(t_span, dt, save_every):
    """`rotode._plan.time_grid` without t_eval as it was written in NumPy before the compiled
    builder (`rotode._driver.uniform_grid`) took its place: the grid and the indices to save."""
    t0, tf = (float(t) for t in t_span)
    direction, length = (1.0 if tf > t0 else -1.0), abs(tf - t0)
    n = int(np.floor(length / dt))
    grid = t0 + direction * dt * np.arange(n + 1, dtype=np.float64)
    if n > 0 and abs(tf - grid[n]) <= 1e-9 * dt:
        grid[n] = tf
    else:
        grid = np.append(grid, tf)
    save = np.arange(0, grid.size, save_every or 1, dtype=np.intp)
    if save[-1] != grid.size - 1:
        save = np.append(save, grid.size - 1)
    return grid, save


@settings(max_examples=400, deadline=None)
@given(st.floats(-1e6, 1e6), st.floats(1e-3, 100.0), st.sampled_from([1.0, -1.0]),
       st.sampled_from([0.5, 1.0, 1.0 + 1e-10, 1.0 - 1e-10, 3.0, 7.3, 100.0, 1000.5]),
       st.floats(0.9, 1.1), st.sampled_from([None, 1, 2, 3, 7, 10**9]))
def test_uniform_grid_is_the_numpy_rules(t0, length, direction, steps, jitter, save_every):
    # the compiled builder of the grid without t_eval (both paths') against the NumPy rules:
    # the same points to the bit, tf in place of a last point within round-off, the saved
    # indices every k-th and the last
    tf = t0 + direction * length
    if tf == t0:
        return
    dt = length / steps * jitter
    grid, save = _time_grid((t0, tf), dt, None, save_every)
    ref_grid, ref_save = _uniform_grid_reference((t0, tf), dt, save_every)
    np.testing.assert_array_equal(grid, ref_grid)
    np.testing.assert_array_equal(save, ref_save)
    assert grid.dtype == np.float64 and save.dtype == np.intp and grid.flags.c_contiguous


def test_uniform_grid_leaves_the_errors_to_the_python_rules():
    # a grid that would not advance or has too many steps: the compiled builder declines and
    # time_grid raises its own error
    from rotode._driver import uniform_grid
    assert uniform_grid(1e16, 1e16 + 40.0, 0.01, 1) is None
    assert uniform_grid(0.0, 1.0, 3e-9, 1) is None
    with pytest.raises(ValueError, match="spacing of floats"):
        _time_grid((1e16, 1e16 + 40.0), 0.01, None, None)
    with pytest.raises(ValueError, match="the limit is 2e8"):
        _time_grid((0.0, 1.0), 3e-9, None, None)
    with pytest.raises(ValueError, match="save_every"):
        _time_grid((0.0, 1.0), 0.1, None, 0)


def _time_grid_reference(t_span, dt, t_eval):
    """`rotode._plan.time_grid` with t_eval as it was written in NumPy before its merge
    (`rotode._loops.snap_times`): the grid and the indices to save (wrong where two requested
    times are within round-off of one grid point)."""
    t0, tf = (float(t) for t in t_span)
    direction, length = (1.0 if tf > t0 else -1.0), abs(tf - t0)
    grid, _ = _uniform_grid_reference(t_span, dt, None)
    te = np.asarray(t_eval, dtype=np.float64)
    s_grid, s_eval = direction * (grid - t0), direction * (te - t0)
    pos = np.searchsorted(s_grid, s_eval)
    tol, last = 1e-9 * min(dt, length), s_grid.size - 1
    cand = np.stack([pos, pos - 1])
    valid = (cand >= 0) & (cand <= last)
    c = np.clip(cand, 0, last)
    d = np.abs(s_grid[c] - s_eval)
    ok = valid & ((d == 0) | ((c > 0) & (c < last) & (d <= tol)))
    snapped = np.where(ok[0], c[0], np.where(ok[1], c[1], -1)).astype(np.intp)
    keep = snapped >= 0
    grid[snapped[keep]] = te[keep]
    if (~keep).any():
        grid = np.concatenate([grid, te[~keep]])
        grid = grid[np.argsort(direction * (grid - t0), kind="stable")]
    save = np.searchsorted(direction * (grid - t0), direction * (te - t0)).astype(np.intp)
    return grid, save


@settings(max_examples=300, deadline=None)
@given(st.floats(-1e3, 1e3), st.floats(1e-3, 50.0), st.sampled_from([1.0, -1.0]),
       st.floats(1e-3, 1.0), st.lists(st.tuples(st.floats(0.0, 1.0),
                                                 st.sampled_from([0.0, 1e-13, -1e-13, 1e-3])),
                                       min_size=1, max_size=40),
       st.booleans())
def test_time_grid_snaps_output_times_as_the_numpy_rules(t0, length, direction, dt, picks,
                                                          on_grid):
    # the merge of rotode._loops.snap_times against the vectorised NumPy rules it replaced:
    # output times on grid points, within round-off of them (snapped), off them (extra
    # steps), at and near both ends, both directions
    tf = t0 + direction * length
    dt = min(dt, length)
    n = int(np.floor(length / dt))
    times = []
    for u, off in picks:
        base = round(u * n) * dt if on_grid else u * length
        times.append(min(max(base + off * dt, 0.0), length))
    s = np.unique(times)
    t_eval = t0 + direction * s
    t_eval = t_eval[(direction * (t_eval - t0) >= 0) & (direction * (t_eval - tf) <= 0)]
    t_eval = np.unique(t_eval)[::int(direction)]
    if t_eval.size == 0 or np.any(direction * np.diff(t_eval) <= 0):
        return
    grid, save = _time_grid((t0, tf), dt, t_eval, None)
    # every requested time is a grid point, saved in order, and the grid advances
    np.testing.assert_array_equal(grid[save], t_eval)
    assert np.all(np.diff(save) > 0) and np.all(direction * np.diff(grid) > 0)
    assert grid[0] == t0 and grid[-1] == tf
    ref_grid, ref_save = _time_grid_reference((t0, tf), dt, t_eval)
    if np.array_equal(ref_grid[ref_save], t_eval):
        np.testing.assert_array_equal(grid, ref_grid)
        np.testing.assert_array_equal(save, ref_save)
    else:
        # two requested times within round-off of one grid point: the NumPy rules moved the
        # point onto the later one and saved it for both (the earlier time's row reported the
        # later time); now the nearer keeps the point and each other one gets a step of its own
        assert grid.size == ref_grid.size + np.setdiff1d(t_eval, ref_grid).size


def test_time_grid_on_a_recording():
    # a 200 Hz recording as t_eval (every sample a grid point to round-off): the fast path
    t = np.arange(12001) / 200.0
    grid, save = _time_grid((t[0], t[-1]), 1 / 200, t, None)
    ref_grid, ref_save = _time_grid_reference((t[0], t[-1]), 1 / 200, t)
    np.testing.assert_array_equal(grid, ref_grid)
    np.testing.assert_array_equal(save, ref_save)
    assert save.dtype == np.intp and list(save[:3]) == [0, 1, 2]


def test_output_grid_of_error_controlled_runs(rng):
    # t0, the requested times strictly inside, tf; each requested time's index: against the
    # concatenation and searchsorted it replaced, with t0 and tf requested or not, both ways
    from rotode._plan import output_grid
    for _ in range(500):
        t0, tf = rng.uniform(-5.0, 5.0, 2)
        te = np.sort(rng.uniform(min(t0, tf), max(t0, tf), rng.integers(1, 8)))
        if rng.random() < 0.3:
            te[0] = min(t0, tf)
        if rng.random() < 0.3:
            te[-1] = max(t0, tf)
        te = np.unique(te)[::1 if tf > t0 else -1]
        grid, save = output_grid((t0, tf), te, None)
        inner = te[(te != t0) & (te != tf)]
        want = np.concatenate([[t0], inner, [tf]])
        direction = 1.0 if tf > t0 else -1.0
        np.testing.assert_array_equal(grid, want)
        np.testing.assert_array_equal(
            save, np.searchsorted(direction * (want - t0), direction * (te - t0)))
        assert save.dtype == np.intp and grid.flags.c_contiguous


def test_backward_integration_inverts_forward():
    fwd = rotode.integrate(BENCH, (0.0, 3.0), [1.0, 0, 0, 0], method="magnus4", dt=0.01)
    back = rotode.integrate(BENCH, (3.0, 0.0), fwd.q[-1], method="magnus4", dt=0.01)
    assert (Rotation.from_quat(back.q[-1], scalar_first=True).magnitude()) < 1e-12


def test_quaternion_kinematics_model_passes_frame_and_gain():
    qk = rotode.QuaternionKinematics(BENCH, frame="world", norm_gain=0.5)
    a = rotode.integrate(qk, (0, 5), [1.0, 0, 0, 0], method="rk4", dt=0.05)
    b = rotode.integrate(BENCH, (0, 5), [1.0, 0, 0, 0], method="rk4", dt=0.05, frame="world",
                         norm_gain=0.5)
    np.testing.assert_array_equal(a.q, b.q)
    c = rotode.integrate(BENCH, (0, 5), [1.0, 0, 0, 0], method="rk4", dt=0.05, frame="body")
    assert np.abs(a.q - c.q).max() > 1e-3   # the frame matters
    with pytest.raises(ValueError, match="contradicts"):
        rotode.integrate(qk, (0, 1), [1.0, 0, 0, 0], method="rk4", dt=0.1, frame="body")


def test_per_body_constant_rates_and_per_body_rigid_bodies(rng):
    w = rng.normal(size=(4, 3))
    res = rotode.integrate(w, (0, 1), np.tile([1.0, 0, 0, 0], (4, 1)), method="lie_euler",
                           dt=0.1)
    for i in range(4):
        one = rotode.integrate(w[i], (0, 1), [1.0, 0, 0, 0], method="lie_euler", dt=0.1)
        np.testing.assert_array_equal(res.q[i], one.q)
    bodies = [rotode.RigidBody([1.0 + i, 2.0, 2.5]) for i in range(3)]
    y0 = np.tile(Y0_BODY, (3, 1))
    res = rotode.integrate(bodies, (0, 1), y0, method="implicit_midpoint", dt=0.05)
    for i, b in enumerate(bodies):
        one = rotode.integrate(b, (0, 1), Y0_BODY, method="implicit_midpoint", dt=0.05)
        np.testing.assert_array_equal(res.y[i], one.y)


def test_rigid_body_result_matches_exact_solution():
    res = rotode.integrate(rotode.RigidBody(T_HANDLE), (0, 10), Y0_BODY, method="rk4",
                           dt=1e-3, save_every=1000)
    q, w = rotode.exact.free_rigid_body(T_HANDLE, Y0_BODY[4:], res.t, q0=Y0_BODY[:4])
    assert np.abs(res.w - w).max() < 1e-9
    err = (res.rotation.inv() * Rotation.from_quat(q, scalar_first=True)).magnitude()
    assert err.max() < 1e-9


def test_rkn4_continued_from_its_final_qdot_is_one_run():
    from rotode import dynamic

    body = rotode.RigidBody(T_HANDLE, torque=rotode.torque.Gravity(1.0, 1.0, [0, 0, 0.2]))
    t = np.arange(201) * 0.01
    y0 = np.array([Y0_BODY])

    def run(grid, start, **options):
        y, _, stats = dynamic.run("rkn4", body, start, grid, [len(grid) - 1], options)
        return y[:, -1], stats["qdot"]

    whole, _ = run(t, y0)
    half, qdot = run(t[:101], y0)
    np.testing.assert_array_equal(run(t[100:], half, qdot0=qdot)[0], whole)
    # restarting from [q, w] alone loses the radial part q.q' of the carried q'
    assert not np.array_equal(run(t[100:], half)[0], whole)
    # the default q' is 1/2 q0 w0
    qdot0 = 0.5 * rotode.quaternion.multiply(y0[0, :4], np.concatenate([[0.0], y0[0, 4:]]))
    np.testing.assert_array_equal(run(t, y0, qdot0=qdot0)[0], whole)
    res = rotode.integrate(body, (0, 1), Y0_BODY, method="rkn4", dt=0.01)
    assert res.stats["qdot"].shape == (4,)


@pytest.mark.parametrize("options, error, match", [
    (dict(method="rk4", qdot0=[0.0, 0, 0, 0]), TypeError, "only accepted by 'rkn4'"),
    (dict(method="rkn4", qdot0=[0.0, 0, 0]), ValueError, "qdot0"),
    (dict(method="rkn4", qdot0=[[0.0, 0, 0, 0]] * 2), ValueError, r"\(4,\) or \(N, 4\)"),
    (dict(method="rkn4", qdot0=[np.nan, 0, 0, 0]), ValueError, "finite"),
])
def test_rkn4_qdot0_is_checked(options, error, match):
    body = rotode.RigidBody(T_HANDLE)
    with pytest.raises(error, match=match):
        rotode.integrate(body, (0, 1), Y0_BODY, dt=0.1, **options)


def test_rkn4_translation_state_is_exposed():
    res = rotode.integrate(rotode.RigidBody(T_HANDLE), (0, 1), Y0_BODY + [0, 0, 0, 1, 0, 0],
                           method="rkn4", dt=0.01, force=[0.0, 0.0, -9.81], mass=2.0)
    assert res.p.shape == (101, 3) and res.v.shape == (101, 3)
    np.testing.assert_allclose(res.p[-1], [1.0, 0.0, -9.81 / 2.0 / 2.0], atol=1e-12)  # a = F/m
    assert rotode.integrate(BENCH, (0, 1), [1.0, 0, 0, 0], dt=0.1).p is None


@pytest.mark.parametrize("kwargs, exc, match", [
    (dict(method="nope"), ValueError, "unknown method"),
    (dict(method="implicit_midpoint"), ValueError, "rigid body method"),
    (dict(method=4), TypeError, "string"),
    (dict(dt=0.0), ValueError, "dt"),
    (dict(dt=-1.0), ValueError, "dt"),
    (dict(dt=None), TypeError, "dt"),
    (dict(y0=[1.0, 0, 0]), ValueError, "y0"),
    (dict(y0=[0.0, 0, 0, 0]), ValueError, "nonzero"),
    (dict(y0=[np.nan, 0, 0, 0]), ValueError, "finite"),
    (dict(t_span=(0, 0)), ValueError, "t_span"),
    (dict(t_span=(0, np.inf)), ValueError, "finite"),
    (dict(t_eval=[0.5, 0.2]), ValueError, "monotonic"),
    (dict(t_eval=[0.5, 2.0]), ValueError, "within"),
    (dict(t_eval=[0.5], save_every=2), ValueError, "either"),
    (dict(save_every=0), ValueError, "save_every"),
    (dict(workers=0), ValueError, "workers"),
    (dict(workers=1.5), TypeError, "workers"),
    (dict(frame="sideways"), ValueError, "frame"),
    (dict(bogus=1), TypeError, "bogus"),
])
def test_bad_input_kinematics(kwargs, exc, match):
    args = dict(model=BENCH, t_span=(0, 1), y0=[1.0, 0, 0, 0], method="rk4", dt=0.1)
    args.update(kwargs)
    with pytest.raises(exc, match=match):
        rotode.integrate(**args)


def test_bad_input_models():
    with pytest.raises(TypeError, match="model"):
        rotode.integrate("fast", (0, 1), [1.0, 0, 0, 0], dt=0.1)
    with pytest.raises(ValueError, match=r"\(N, 3\)"):
        rotode.integrate(np.ones((2, 2)), (0, 1), [1.0, 0, 0, 0], dt=0.1)
    with pytest.raises(ValueError, match="per-body rates"):
        rotode.integrate(np.ones((3, 3)), (0, 1), np.tile([1.0, 0, 0, 0], (2, 1)), dt=0.1)
    body = rotode.RigidBody(T_HANDLE)
    with pytest.raises(ValueError, match="frame"):
        rotode.integrate(body, (0, 1), Y0_BODY, dt=0.1, frame="body")
    with pytest.raises(ValueError, match="kinematics method"):
        rotode.integrate(body, (0, 1), Y0_BODY, method="magnus4", dt=0.1)
    with pytest.raises(ValueError, match="lists 2 rigid bodies"):
        rotode.integrate([body, body], (0, 1), np.tile(Y0_BODY, (3, 1)), dt=0.1)
    with pytest.raises(ValueError, match=r"\(7,\)"):
        rotode.integrate(body, (0, 1), [1.0, 0, 0, 0], dt=0.1)


# ---- OdeSolver classes ---------------------------------------------------------------------

@pytest.mark.parametrize("cls, method", [(rotode.Magnus4, "magnus4"), (rotode.RK4, "rk4"),
                                         (rotode.CG3, "cg3"), (rotode.MagnusCA, "magnus_ca"),
                                         (rotode.Exp2, "exp2"), (rotode.Magnus8, "magnus8")])
def test_solver_class_equals_integrate_kinematics(cls, method):
    rhs = rotode.QuaternionKinematics(BENCH)
    sol = solve_ivp(rhs, (0, 10), [1.0, 0, 0, 0], method=cls, step=0.03)
    res = rotode.integrate(rhs, (0, 10), [1.0, 0, 0, 0], method=method, dt=0.03)
    np.testing.assert_array_equal(sol.t, res.t)
    np.testing.assert_array_equal(sol.y.T, res.q)
    assert sol.success


@pytest.mark.parametrize("cls, method", [(rotode.RK4, "rk4"), (rotode.CG3, "cg3"),
                                         (rotode.RKN4, "rkn4"),
                                         (rotode.ImplicitMidpoint, "implicit_midpoint"),
                                         (rotode.Trapezoid, "trapezoid"),
                                         (rotode.ObjectTrapezoid, "object_trapezoid")])
@pytest.mark.parametrize("t_eval", [None, np.linspace(0, 2, 13)])
def test_solver_class_equals_integrate_rigid_body(cls, method, t_eval):
    # issue 17 item 17: bit for bit, also for the implicit methods (the solver carries the body
    # angular momentum L_b = I w from step to step as rkn4 carries q'), and with t_eval on the
    # step grid (the dense output returns the step's end points exactly)
    body = rotode.RigidBody(T_HANDLE, torque=rotode.torque.Gravity(1.0, 1.0, [0, 0, 0.2]))
    sol = solve_ivp(body, (0, 2), Y0_BODY, method=cls, step=1 / 6, t_eval=t_eval)
    res = rotode.integrate(body, (0, 2), Y0_BODY, method=method, dt=1 / 6, t_eval=t_eval)
    np.testing.assert_array_equal(sol.t, res.t)
    np.testing.assert_array_equal(sol.y.T, res.y)


def test_solver_class_with_a_plain_kinematic_function():
    def fun(t, q):
        w = np.array(BENCH(t))
        return 0.5 * rotode.quaternion.multiply(q, np.concatenate([[0.0], w]))

    sol = solve_ivp(fun, (0, 10), [1.0, 0, 0, 0], method=rotode.Magnus6, step=0.05)
    res = rotode.integrate(BENCH, (0, 10), [1.0, 0, 0, 0], method="magnus6", dt=0.05)
    np.testing.assert_allclose(sol.y.T, res.q, atol=1e-13)


def test_solver_dense_output_is_cubic_hermite():
    rhs = rotode.QuaternionKinematics(BENCH)
    t_eval = np.linspace(0, 5, 37)
    sol = solve_ivp(rhs, (0, 5), [1.0, 0, 0, 0], method=rotode.Magnus8, step=0.05,
                    t_eval=t_eval)
    ref = solve_ivp(rhs, (0, 5), [1.0, 0, 0, 0], method="DOP853", rtol=1e-13, atol=1e-14,
                    t_eval=t_eval)
    assert np.abs(sol.y - ref.y).max() < 1e-6      # O(h^4) interpolation between exact nodes


def test_solver_class_errors():
    rhs = rotode.QuaternionKinematics(BENCH)
    with pytest.raises(TypeError, match="step"):
        solve_ivp(rhs, (0, 1), [1.0, 0, 0, 0], method=rotode.Magnus4)
    with pytest.raises(TypeError, match="RigidBody"):
        solve_ivp(lambda t, y: -y, (0, 1), np.ones(7), method=rotode.RK4, step=0.1)
    with pytest.raises(ValueError, match="does not integrate"):
        solve_ivp(rhs, (0, 1), [1.0, 0, 0, 0], method=rotode.ImplicitMidpoint, step=0.1)
