"""Regression tests for the defects of the reliability issue (numbers are the issue's items).
Each failed on the commit before its fix."""
import numpy as np
import pytest

import rotode
from rotode import quaternion as Q
from rotode import so3


def test_11_exp_approx_of_huge_vectors_is_a_unit_quaternion():
    for scale in [1e50, 1e52, 1e100, 1e150]:
        x = np.array([scale, -2 * scale, 0.5 * scale])
        q = Q.exp_approx(x)
        assert np.linalg.norm(q) == pytest.approx(1.0, abs=1e-15)
        # the limit of the formula: the vector part points along -x
        np.testing.assert_allclose(q[1:], -x / np.linalg.norm(x), atol=1e-12)
    # no change below the rescaling threshold (|x|^2 <= 1e100)
    x = np.array([0.3, -0.2, 0.1])
    n2 = x @ x
    a, b = 1 - n2 / 2, 1 - n2 / 6
    expected = np.concatenate([[a], b * x]) / np.sqrt(a * a + b * b * n2)
    np.testing.assert_allclose(Q.exp_approx(x), expected, rtol=0, atol=1e-16)
    with pytest.raises(ValueError, match="1.34e154"):
        Q.exp_approx([1e160, 0.0, 0.0])


def test_21_coefficients_accept_scalars_like_ufuncs():
    s1, s2, s3, c = so3.coefficients(0.5)
    assert np.ndim(s1) == 0
    assert s1 == pytest.approx(np.sin(0.5) / 0.5, rel=1e-15)
    assert s2 == pytest.approx((1 - np.cos(0.5)) / 0.25, rel=1e-14)
    arr = so3.coefficients(np.array([0.5]))
    assert [float(x) for x in (s1, s2, s3, c)] == [float(x[0]) for x in arr]
    assert np.isnan(so3.coefficients(7.0)[3])
    with pytest.raises(ValueError, match="`angle` must be >= 0"):
        so3.coefficients(-1.0)


@pytest.mark.parametrize("gain, error", [(-5.0, ValueError), (np.nan, ValueError),
                                         ("0.1", TypeError), (True, TypeError)])
def test_27_norm_gain_validated_alike_everywhere(gain, error):
    w = rotode.omega.Constant([0.0, 0.0, 1.0])
    with pytest.raises(error, match="`norm_gain`") as by_rhs:
        rotode.QuaternionKinematics(w, norm_gain=gain)
    with pytest.raises(error, match="`norm_gain`") as by_integrate:
        rotode.integrate(w, (0, 1), [1.0, 0, 0, 0], method="rk4", dt=0.1, norm_gain=gain)
    assert str(by_rhs.value) == str(by_integrate.value)


def test_02_workers_validated_and_clamped():
    from rotode._validation import available_cores

    w = rotode.omega.Constant([0.0, 0.0, 1.0])

    def run(workers):
        return rotode.integrate(w, (0, 1), np.tile([1.0, 0, 0, 0], (8, 1)), method="magnus4",
                                dt=0.1, workers=workers).q

    reference = run(1)
    with pytest.warns(RuntimeWarning, match=r"`workers`=1000 is more than the \d+ available"):
        np.testing.assert_array_equal(run(1000), reference)
    np.testing.assert_array_equal(run(-1), reference)          # every core, as in SciPy
    for bad, error in [(0, ValueError), (-2, ValueError), (1.5, TypeError),
                       ("2", TypeError), (True, TypeError)]:
        with pytest.raises(error, match="`workers`"):
            run(bad)
    assert available_cores() >= 1


def test_13_complex_state_is_refused_by_every_right_hand_side():
    w = rotode.omega.Constant([0.0, 0.0, 1.0])
    for rhs, n in [(rotode.QuaternionKinematics(w), 4), (rotode.RigidBody([1.0, 2.0, 3.0]), 7),
                   (rotode.ExpCoordKinematics(w), 3)]:
        y = np.zeros(n, dtype=complex)
        y[0] = 1.0
        with pytest.raises(TypeError, match="`y` must be a real numeric array"):
            rhs(0.0, y)
        with pytest.raises(TypeError, match="`y` must be a real numeric array"):
            rhs.jac(0.0, y)


def test_26_overflowing_numbers_name_their_argument():
    w = rotode.omega.Constant([0.0, 0.0, 1.0])
    with pytest.raises(ValueError, match="`t_span` must be finite"):
        rotode.integrate(w, (0, 10**400), [1.0, 0, 0, 0], method="rk4", dt=0.1)
    with pytest.raises(ValueError, match="`dt` must be finite"):
        rotode.integrate(w, (0, 1), [1.0, 0, 0, 0], method="rk4", dt=10**400)


def test_19_out_may_be_q_but_not_overlap_inputs_otherwise():
    from rotode import steps

    rng = np.random.default_rng(19)
    q = rng.normal(size=(5, 4))
    w = rng.normal(size=(5, 3))
    expected = steps.lie_euler(q, w, 0.1)
    inplace = q.copy()
    steps.lie_euler(inplace, w, 0.1, out=inplace)              # documented: in place
    np.testing.assert_array_equal(inplace, expected)
    buf = np.vstack([q, np.zeros((1, 4))])
    with pytest.raises(ValueError, match="`out` overlaps `q`"):
        steps.lie_euler(buf[:5], w, 0.1, out=buf[1:])          # shifted by a row
    packed = np.zeros(5 * 4 + 3 * 5)
    wv = packed[20:].reshape(5, 3)
    wv[:] = w
    with pytest.raises(ValueError, match="`out` overlaps `w`"):
        steps.lie_euler(q, wv, 0.1, out=packed[15:35].reshape(5, 4))


@pytest.mark.parametrize("t_eval", [[1e-12, 0.5], [0.5, 1.0 - 1e-12], [1e-300, 0.25, 1.0],
                                    [0.1 + 1e-12, 0.3]])
def test_10_t_eval_is_landed_on_exactly(t_eval):
    w = rotode.omega.Constant([0.0, 0.0, 1.0])
    res = rotode.integrate(w, (0, 1), [1.0, 0, 0, 0], method="magnus4", dt=0.1, t_eval=t_eval)
    np.testing.assert_array_equal(res.t, t_eval)
    angle = np.asarray(t_eval)        # constant rate 1 rad/s about z: exact at any time
    np.testing.assert_allclose(res.q[:, 0], np.cos(angle / 2), atol=1e-15)
    np.testing.assert_allclose(res.q[:, 3], np.sin(angle / 2), atol=1e-15)


def test_18_huge_step_with_t_eval():
    w = rotode.omega.Constant([0.0, 0.0, 1.0])
    res = rotode.integrate(w, (0, 1), [1.0, 0, 0, 0], method="magnus4", dt=1e300,
                           t_eval=[0.5, 1.0])
    np.testing.assert_array_equal(res.t, [0.5, 1.0])
    np.testing.assert_allclose(res.q[:, 3], np.sin([0.25, 0.5]), atol=1e-15)


def test_09_solve_expcoord_leaves_the_rhs_unchanged():
    w = rotode.omega.Constant([0.0, 0.0, 2.0])
    rhs = rotode.ExpCoordKinematics(w)
    before = rhs.base.copy()
    sol = rotode.solve_expcoord(rhs, (0, 10), [0.0, 0, 0], rtol=1e-10, atol=1e-12)
    assert sol.n_reanchor > 0                       # the chart was re-anchored ...
    np.testing.assert_array_equal(rhs.base, before)  # ... on a private copy


def test_22_solve_expcoord_takes_t_eval_as_a_list():
    w = rotode.omega.Constant([0.0, 0.0, 2.0])
    sol = rotode.solve_expcoord(rotode.ExpCoordKinematics(w), (0, 10), [0.0, 0, 0],
                                t_eval=[1, 2, 3, 9.5], rtol=1e-11, atol=1e-12)
    np.testing.assert_array_equal(sol.t, [1, 2, 3, 9.5])
    half = np.array([1, 2, 3, 9.5])                 # rate 2 rad/s about z: half angle = t
    exact = np.stack([np.cos(half), 0 * half, 0 * half, np.sin(half)], axis=1)
    np.testing.assert_allclose(np.abs(np.sum(sol.quaternion * exact, axis=1)), 1.0, atol=1e-9)


def test_08_14_25_samples_pure_private_and_picklable():
    import pickle

    t = np.array([0.0, 1.0, 2.0, 3.0])
    w = np.array([[0, 0, 1.0], [0, 0, 3.0], [0, 0, 2.0], [0, 0, 5.0]])
    src = rotode.omega.Samples(t, w)
    # 8: the rate at a sample time is the right-hand slope, whatever was evaluated before
    rhs = rotode.QuaternionKinematics(src, frame="body")
    fresh = rotode.omega.Samples(t, w)
    for k, right_slope in [(1, -1.0), (2, 3.0)]:
        np.testing.assert_array_equal(src.derivative(t[k]), [0.0, 0.0, right_slope])
        rhs(2.9, np.array([1.0, 0, 0, 0]))              # leave any search state near the end
        got = rotode.integrate(src, (t[k], t[k] + 0.1), [1.0, 0, 0, 0], method="exp2",
                               dt=0.1).q[-1]
        again = rotode.integrate(fresh, (t[k], t[k] + 0.1), [1.0, 0, 0, 0], method="exp2",
                                 dt=0.1).q[-1]
        np.testing.assert_array_equal(got, again)
    # 14: later changes to the caller's arrays change nothing
    before = src(1.5).copy()
    t[1], w[1] = 1.9, 100.0
    np.testing.assert_array_equal(src(1.5), before)
    # 25: pickles (to a process pool or a dask worker) with the same values
    back = pickle.loads(pickle.dumps(src))
    np.testing.assert_array_equal(back(1.5), before)
    assert back.kind == src.kind


@pytest.mark.parametrize("scale", [1e-140, 1e-100, 1.0, 1e100, 1e150])
def test_12_to_matrix_jacobian_at_extreme_norms(scale):
    q = np.array([0.4, -0.3, 0.8, 0.2]) * scale
    R, J = Q.to_matrix_jacobian(q)
    np.testing.assert_array_equal(R, Q.to_matrix(q))
    R1, J1 = Q.to_matrix_jacobian(q / scale)
    # R(c q) = R(q), so dR/dq at c q is (dR/dq at q) / c
    np.testing.assert_allclose(J * scale, J1, rtol=1e-14, atol=1e-15)
    h = 1e-6 * scale                                    # central differences, same scale
    for k in range(4):
        e = np.zeros(4)
        e[k] = h
        fd = (Q.to_matrix(q + e) - Q.to_matrix(q - e)) / (2 * h)
        np.testing.assert_allclose(J[..., k] * scale, fd * scale, atol=1e-8)


@pytest.mark.parametrize("method", ["rk4", "magnus4", "lie_euler", "cg3", "exp2"])
def test_06_non_finite_kinematic_state_fails_the_run(method):
    # (magnus_ca refuses such a step before taking it, with a ValueError: tests/test_kinematic)
    huge = rotode.omega.Constant([0.0, 0.0, 1e308])       # w dt overflows in the step
    calm = np.array([1.0, 0, 0, 0])
    res = rotode.integrate(huge, (0, 1), np.stack([calm, calm]), method=method, dt=0.1)
    assert res.status == 2 and not res.success
    assert "body 0, step 0" in res.message and "non-finite" in res.message
    assert "to 0.1" in res.message
    assert np.isnan(res.q[:, 1:]).all() and np.isfinite(res.q[:, 0]).all()
    ok = rotode.integrate(rotode.omega.Constant([0.0, 0.0, 1.0]), (0, 1), calm, method=method,
                          dt=0.1)
    assert ok.status == 0 and ok.success


@pytest.mark.parametrize("method", rotode.methods.names("rigid body"))
def test_17_first_row_is_y0_and_solver_classes_match_integrate(method):
    # Every rigid-body method returns y0 itself at t0, as solve_ivp does (the implicit methods
    # and rkn4 returned their internal state read back: a normalised q, I^-1 (I w0)); the
    # solve_ivp classes then give integrate's numbers bit for bit (tests/test_integrate.py).
    body = rotode.RigidBody([2.5, 1.4, 1.3], torque=rotode.torque.Gravity(1.0, 1.0, [0, 0, 0.2]))
    y0 = np.array([2.0, 0.1, 0.0, 0.0, 0.01, 5.0, 0.01])
    spec = rotode.methods.get(method)
    step = {"rtol": 1e-6} if spec.embedded is not None else {"dt": 0.1}
    res = rotode.integrate(body, (0, 1), y0, method=method, **step)
    np.testing.assert_array_equal(res.y[0], y0)
    np.testing.assert_array_equal(res.w[0], y0[4:])
    assert np.isfinite(res.y).all() and res.success


@pytest.mark.parametrize("method", ["rk4", "cg3", "dop853", "rkmk8", "implicit_midpoint"])
def test_15_16_overflowing_parameters_fail_the_run_with_a_message(method):
    """Huge torques (and, for kinematics, huge rates or amplitudes) overflow the state: the
    run reports it (status != 0, success False, a message with the step), never success with
    NaN."""
    body = rotode.RigidBody([1, 1, 0.5], torque=rotode.torque.Constant([1e308, 0, 0]))
    step = {"rtol": 1e-6} if rotode.methods.get(method).adaptive else {"dt": 0.1}
    res = rotode.integrate(body, (0, 1), [1.0, 0, 0, 0, 1, 1, 1], method=method, **step)
    assert not res.success and res.status not in (0, 1)
    assert "body 0, step 0" in res.message
    assert not np.isfinite(res.y[-1]).all()
    if method != "implicit_midpoint":
        for model in ([1e200, 1e200, 0.0],
                      rotode.omega.Sinusoid(amplitude=1e300, rate=1.0, phase=[0, 0, 0])):
            kin = rotode.integrate(model, (0, 1), [1.0, 0, 0, 0],
                                   method=method if method != "cg3" else "magnus4",
                                   max_steps=1000 if "rtol" in step else None, **step)
            assert not kin.success and "body 0" in kin.message


# ---- gyroscope data (IMU): zero-order hold, clock offset, stepping on the samples -----------

def _gyro(kind="previous", offset=0.0):
    t = np.linspace(0.0, 1.0, 101) + 0.003 * np.sin(np.arange(101))   # jittered 100 Hz clock
    w = np.c_[np.sin(3 * t), np.cos(2 * t), 0.5 * t]
    return t, w, rotode.omega.Samples(t, w, kind=kind, offset=offset)


def test_imu_zero_order_hold_at_every_knot():
    t, w, s = _gyro()
    for k in range(len(t) - 1):
        np.testing.assert_array_equal(s(t[k]), w[k])                       # the sample itself
        np.testing.assert_array_equal(s(0.5 * (t[k] + t[k + 1])), w[k])    # held until t[k+1]
    np.testing.assert_array_equal(s(t[-1]), w[-1])
    from scipy.interpolate import interp1d
    ref = interp1d(t, w, kind="previous", axis=0)
    probe = np.linspace(t[0], t[-1], 777)
    np.testing.assert_array_equal(np.array([s(x) for x in probe]), ref(probe))


def test_imu_clock_offset_shifts_the_samples():
    t, w, s0 = _gyro("linear")
    _, _, s = _gyro("linear", offset=0.02)
    np.testing.assert_array_equal(s.times, t - 0.02)
    for x in (0.1, 0.37, 0.9):
        np.testing.assert_allclose(s(x - 0.02), s0(x), rtol=0, atol=1e-15)
    with pytest.raises(ValueError, match="outside"):
        s(t[-1])                                                   # beyond t[-1] - offset
    import pickle
    back = pickle.loads(pickle.dumps(s))
    assert back.offset == 0.02 and back.kind == "linear"
    with pytest.raises(ValueError, match="offset"):
        rotode.omega.Samples(t, w, offset=float("nan"))


def test_imu_steps_exactly_on_the_samples():
    t, w, s = _gyro()
    res = rotode.integrate(s, (t[0], t[-1]), [1.0, 0, 0, 0], method="lie_euler", dt="samples")
    np.testing.assert_array_equal(res.t, t)
    # zero-order hold + Lie-Euler on the sample grid: the exact product of the held rotations
    q = np.array([1.0, 0, 0, 0])
    for k in range(len(t) - 1):
        q = rotode.quaternion.multiply(q, rotode.quaternion.exp(0.5 * (t[k + 1] - t[k]) * w[k]))
    assert np.abs(res.q[-1] - q).max() < 1e-15
    te = [0.25, t[40], 0.5]
    out = rotode.integrate(rotode.QuaternionKinematics(s), (t[0], t[-1]), [1.0, 0, 0, 0],
                           method="magnus4", dt="samples", t_eval=te)
    np.testing.assert_array_equal(out.t, te)
    assert out.stats["n_steps"] == len(t) - 1 + 2                 # two outputs between samples
    with pytest.raises(ValueError, match="Samples"):
        rotode.integrate([0, 0, 1.0], (0, 1), [1.0, 0, 0, 0], method="rk4", dt="samples")
    with pytest.raises(ValueError, match="'samples'"):
        rotode.integrate(s, (0, 1), [1.0, 0, 0, 0], method="rk4", dt="sample")


def test_imu_project_noisy_matrices_onto_rotations():
    from scipy.spatial.transform import Rotation
    rng = np.random.default_rng(4)
    R = Rotation.random(6, random_state=2).as_matrix() + 1e-3 * rng.normal(size=(6, 3, 3))
    with pytest.raises(ValueError, match="rotation matrices"):
        Q.from_matrix(R)                                       # refused unless asked
    q = Q.from_matrix(R, project=True)
    ref = Rotation.from_matrix(R).as_quat(scalar_first=True)  # SciPy projects too
    assert np.abs(np.abs(np.sum(q * ref, axis=1)) - 1).max() < 1e-14
    np.testing.assert_allclose(so3.log(R, project=True),
                               Rotation.from_matrix(R).as_rotvec(), rtol=0, atol=1e-12)
    exact = Rotation.random(3, random_state=5).as_matrix()
    np.testing.assert_allclose(Q.from_matrix(exact, project=True), Q.from_matrix(exact),
                               rtol=0, atol=1e-15)
    for far, what in [(np.diag([1.0, 1.0, -1.0]), "determinant -1"),
                      (np.diag([1.0, 1.0, 1.5]), "singular values")]:
        with pytest.raises(ValueError, match=what):
            Q.from_matrix(far, project=True)
        with pytest.raises(ValueError, match="too far from a rotation"):
            so3.log(np.stack([exact[0], far]), project=True)


def test_28_magnus_ca_alpha_may_be_shared_by_every_body():
    rates = np.array([[0.1, 0.2, 0.3], [0.3, -0.1, 0.2]])
    q0 = np.tile([1.0, 0, 0, 0], (2, 1))
    shared = rotode.integrate(rates, (0, 1), q0, method="magnus_ca", dt=0.1, alpha=[0, 0, 0.5])
    rows = rotode.integrate(rates, (0, 1), q0, method="magnus_ca", dt=0.1,
                            alpha=[[0, 0, 0.5], [0, 0, 0.5]])
    np.testing.assert_array_equal(shared.q, rows.q)
    with pytest.raises(ValueError, match=r"\(3,\) or \(2, 3\)"):
        rotode.integrate(rates, (0, 1), q0, method="magnus_ca", dt=0.1, alpha=[1.0, 2.0])


def test_imu_synthetic_recording_integrates_within_the_methods_error():
    """A synthetic 1 kHz gyroscope recording (rates of a few rad/s, 0.02 rad/s white noise,
    a bias): exp2 and magnus_ca on the sample grid against DOP853 at rtol 1e-12 on the same
    interpolant (max_step = one sample: the kinks of the linear interpolant), results
    independent of workers and of call history (the defects of the reliability issue: a shared
    search hint and one-sided slopes chosen by call history cost 0.75-1.4 deg)."""
    rng = np.random.default_rng(2024)
    fs = 1000.0
    t = np.arange(0, 10 + 1e-9, 1 / fs)
    w = np.c_[1.5 * np.sin(1.1 * t), 0.8 * np.cos(0.7 * t + 0.3), 0.4 * np.sin(2.3 * t)]
    w = w + rng.normal(scale=0.02, size=w.shape) + [0.003, -0.002, 0.001]
    s = rotode.omega.Samples(t, w)
    ref = rotode.integrate(s, (0, 10), [1.0, 0, 0, 0], method="dop853", rtol=1e-12,
                           atol=1e-14, max_step=1 / fs, t_eval=[10.0]).q[-1]

    def deg(q):
        q = q / np.linalg.norm(q)
        return np.degrees(2 * np.arcsin(min(1.0, np.linalg.norm(
            Q.multiply(Q.conjugate(ref), q)[1:]))))

    first = {m: rotode.integrate(s, (0, 10), [1.0, 0, 0, 0], method=m, dt="samples").q[-1]
             for m in ("exp2", "magnus_ca")}
    assert deg(first["exp2"]) < 1e-4 and deg(first["magnus_ca"]) < 1e-8
    q0 = np.tile([1.0, 0, 0, 0], (4, 1))
    for m in ("magnus_ca", "exp2"):                       # again, after the other method ran
        for workers in (1, 2):
            batch = rotode.integrate(s, (0, 10), q0, method=m, dt="samples", workers=workers)
            for i in range(4):
                np.testing.assert_array_equal(batch.q[i, -1], first[m])
