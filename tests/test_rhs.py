"""Right-hand sides: equal to plain NumPy, exact Jacobians, strides, invariants, Rucker 2018."""
import numpy as np
import pytest
import reference as ref
from numpy.testing import assert_allclose
from scipy.integrate import solve_ivp
from scipy.spatial.transform import Rotation

from rotode import omega, torque
from rotode.rhs import (
    EulerAnglesXYZ,
    ExpCoordKinematics,
    ExpCoordRigidBody,
    QuaternionKinematics,
    QuaternionSecondOrder,
    RigidBody,
    RotationMatrix,
    check_inertia,
)
from rotode.solve import as_rotation

rng = np.random.default_rng(3)
BENCH = omega.Sinusoid(amplitude=np.pi / 2, rate=2 * np.pi / 10,
                       phase=[0, 2 * np.pi / 3, 4 * np.pi / 3])
I_FULL = np.array([[2.0, 0.3, -0.1], [0.3, 1.5, 0.2], [-0.1, 0.2, 1.2]])
GRAV = torque.Gravity(mass=1.3, g=9.81, com=[0.1, -0.2, 0.7])


def close(a, b, tol=1e-14):
    a, b = np.asarray(a), np.asarray(b)
    assert np.max(np.abs(a - b)) <= tol * max(1.0, np.max(np.abs(b))), (a, b)


def unit(q):
    return q / np.linalg.norm(q)


def rand_q(scale=1.7):
    return scale * unit(rng.normal(size=4))


# ---- equal to plain NumPy ----------------------------------------------------------------

@pytest.mark.parametrize("frame", ["body", "world"])
@pytest.mark.parametrize("gain", [0.0, 0.1])
def test_quaternion_kinematics_matches_numpy(frame, gain):
    f = QuaternionKinematics(BENCH, frame=frame, norm_gain=gain)
    for t in rng.uniform(0, 100, 5):
        q = rand_q()
        close(f(t, q), ref.quat_kin(q, ref.benchmark_w(t), frame, gain))


@pytest.mark.parametrize("inertia", [[2.5, 1.4, 1.3], I_FULL])
@pytest.mark.parametrize("gyroscopic", [True, False])
def test_rigid_body_matches_numpy(inertia, gyroscopic):
    Im = check_inertia(inertia)[0]
    f = RigidBody(inertia, GRAV, norm_gain=0.05, gyroscopic=gyroscopic)
    for _ in range(5):
        y = np.concatenate([rand_q(), rng.normal(size=3)])
        tau = ref.gravity(y[:4], 1.3, 9.81, np.array([0.1, -0.2, 0.7]))
        close(f(0.0, y), ref.rigid_body(y, Im, tau, 0.05, gyroscopic))


@pytest.mark.parametrize("frame", ["body", "world"])
def test_expcoord_kinematics_matches_numpy(frame):
    f = ExpCoordKinematics(BENCH, frame)
    for t, r in zip(rng.uniform(0, 100, 6), [1e-3, 0.5, 1.2, 2.0, 3.0, 5.0], strict=True):
        v = r * unit(rng.normal(size=3))
        w = ref.benchmark_w(t)
        close(f(t, v), ref.dexp_inv(v if frame == "world" else -v, w))


def test_expcoord_rigid_body_matches_numpy():
    f = ExpCoordRigidBody(I_FULL, GRAV)
    f.base = unit(np.array([0.3, -0.2, 0.9, 0.1]))
    for _ in range(5):
        v = rng.uniform(0.1, 3.0) * unit(rng.normal(size=3))
        w = rng.normal(size=3)
        q = ref.qmul(f.base, Rotation.from_rotvec(v).as_quat(scalar_first=True))
        tau = ref.gravity(q, 1.3, 9.81, np.array([0.1, -0.2, 0.7]))
        expect = np.concatenate([ref.dexp_inv(-v, w), ref.euler(w, tau, I_FULL)])
        close(f(0.0, np.concatenate([v, w])), expect)


def test_second_order_matches_numpy():
    f = QuaternionSecondOrder(I_FULL, GRAV)
    for _ in range(5):
        q = unit(rng.normal(size=4))
        p = 0.5 * ref.qmul(q, ref.pure(rng.normal(size=3)))
        y = np.concatenate([q, p])

        tau = ref.gravity(q, 1.3, 9.81, np.array([0.1, -0.2, 0.7]))
        close(f(0.0, y), ref.second_order(y, I_FULL, tau))


def test_euler_angles_and_matrix_match_numpy():
    fe = EulerAnglesXYZ(I_FULL, GRAV)
    fm = RotationMatrix(I_FULL, GRAV)
    com = np.array([0.1, -0.2, 0.7])
    for _ in range(5):
        e = rng.uniform(-1.2, 1.2, 3)
        w = rng.normal(size=3)
        Rm = Rotation.from_euler("XYZ", e).as_matrix()
        q = Rotation.from_euler("XYZ", e).as_quat(scalar_first=True)
        tau = ref.gravity(q, 1.3, 9.81, com)
        close(fe(0.0, np.concatenate([e, w])),
              np.concatenate([ref.euler_xyz_rates(e, w), ref.euler(w, tau, I_FULL)]))
        close(fm(0.0, np.concatenate([Rm.ravel(), w])),
              np.concatenate([(Rm @ ref.hat(w)).ravel(), ref.euler(w, tau, I_FULL)]))


def test_second_order_consistent_with_rigid_body():
    # q'' from RigidBody's q' and w' equals QuaternionSecondOrder's (unit q)
    Im = np.array([2.5, 1.4, 1.3])
    q, w = unit(rng.normal(size=4)), rng.normal(size=3)
    f1 = RigidBody(Im, GRAV)
    d = f1(0, np.concatenate([q, w]))
    qdd = 0.5 * (ref.qmul(d[:4], ref.pure(w)) + ref.qmul(q, ref.pure(d[4:])))
    f2 = QuaternionSecondOrder(Im, GRAV)
    close(f2(0, np.concatenate([q, d[:4]]))[4:], qdd, 1e-13)


# ---- calling conventions -----------------------------------------------------------------

def test_strided_and_vectorized_calls():
    f = RigidBody(I_FULL, GRAV)
    Y = rng.normal(size=(7, 5))
    col = Y[:, 2]
    assert not col.flags.c_contiguous
    out = f(0.3, Y)
    assert out.shape == (7, 5)
    assert_allclose(out[:, 2], f(0.3, np.ascontiguousarray(col)), rtol=0, atol=0)
    assert_allclose(f(0.3, col), out[:, 2], rtol=0, atol=0)
    assert_allclose(f(0.3, Y[:, ::2]), out[:, ::2], rtol=0, atol=0)
    assert_allclose(f(0.3, col.tolist()), out[:, 2], rtol=0, atol=0)   # list input
    sol_v = solve_ivp(f, (0, 2), Y[:, 0], method="Radau", vectorized=True)
    sol = solve_ivp(f, (0, 2), Y[:, 0], method="Radau")
    assert sol_v.success and sol.success


# ---- Jacobians ---------------------------------------------------------------------------

def fd_jac(f, t, y, h=1e-6):
    J = np.empty((y.size, y.size))
    for j in range(y.size):
        e = np.zeros(y.size)
        e[j] = h
        J[:, j] = (f(t, y + e) - f(t, y - e)) / (2 * h)
    return J


def _cases():
    q, w = rand_q(1.2), rng.normal(size=3)
    v = 1.3 * unit(rng.normal(size=3))
    qu = unit(rng.normal(size=4))
    p = 0.5 * ref.qmul(qu, ref.pure(w))
    R = Rotation.from_rotvec(v).as_matrix()
    cb = torque.Callable(lambda t, q, w: np.array([q[1] * w[2], np.sin(t) + q[0], w[0] ** 2]))
    wt = torque.Constant([0.2, -0.4, 0.9], frame="world")
    return [
        (QuaternionKinematics(BENCH, "body", 0.1), q),
        (QuaternionKinematics(BENCH, "world", 0.0), q),
        (ExpCoordKinematics(BENCH, "body"), v),
        (ExpCoordKinematics(BENCH, "world"), 1e-3 * v),
        (RigidBody(I_FULL, GRAV, norm_gain=0.1), np.concatenate([q, w])),
        (RigidBody([2.5, 1.4, 1.3], wt), np.concatenate([q, w])),
        (RigidBody([2.5, 1.4, 1.3], cb), np.concatenate([q, w])),
        (ExpCoordRigidBody(I_FULL, GRAV), np.concatenate([v, w])),
        (QuaternionSecondOrder(I_FULL, GRAV), np.concatenate([qu, p])),
        (EulerAnglesXYZ(I_FULL, GRAV), np.concatenate([[0.3, -0.7, 1.1], w])),
        (RotationMatrix(I_FULL, GRAV), np.concatenate([R.ravel(), w])),
    ]


@pytest.mark.parametrize("case", range(11))
def test_jacobian_matches_finite_differences(case):
    f, y = _cases()[case]
    J = f.jac(1.7, y)
    assert J.shape == (y.size, y.size)
    assert_allclose(J, fd_jac(f, 1.7, y), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("method", ["Radau", "BDF"])
def test_implicit_solvers_with_jac_use_fewer_evaluations(method):
    # SciPy's `nfev` leaves out the evaluations of its finite-difference Jacobian, so count
    # every call of the right-hand side.
    f = RigidBody([1.0, 1.0, 0.5], torque.Gravity(1, 1, [0, 0, 1]))
    calls = [0]

    def counted(t, y):
        calls[0] += 1
        return f(t, y)
    y0 = [1, 0, 0, 0, 1.5, 0, 1]
    kw = dict(method=method, rtol=1e-6, atol=1e-8)
    s0 = solve_ivp(counted, (0, 10), y0, **kw)
    n0, calls[0] = calls[0], 0
    s1 = solve_ivp(counted, (0, 10), y0, jac=f.jac, **kw)
    n1 = calls[0]
    assert s0.njev > 0 and s1.njev > 0
    assert n1 < n0
    ang = (as_rotation(s0)[-1].inv() * as_rotation(s1)[-1]).magnitude()
    assert ang < 1e-8
    assert_allclose(s1.y[4:, -1], s0.y[4:, -1], atol=1e-8)


def test_lsoda_accepts_jac():
    f = QuaternionKinematics(BENCH)
    s = solve_ivp(f, (0, 10), [1, 0, 0, 0], method="LSODA", jac=f.jac, rtol=1e-9, atol=1e-11)
    assert s.success


# ---- Rucker 2018 benchmark ------------------------------------------------------------------

def _reference_rotation_at_100():
    """Independent reference: rotation-matrix ODE R' = R [w]x in plain NumPy, DOP853 1e-13,
    re-orthonormalised at the end."""
    def f(t, y):
        R = y.reshape(3, 3)
        return (R @ ref.hat(ref.benchmark_w(t))).ravel()
    s = solve_ivp(f, (0, 100), np.eye(3).ravel(), method="DOP853", rtol=1e-13, atol=1e-14)
    U, _, Vt = np.linalg.svd(s.y[:, -1].reshape(3, 3))
    return Rotation.from_matrix(U @ Vt)


def test_seed004_benchmark_against_reference():
    rhs = QuaternionKinematics(BENCH, frame="body", norm_gain=0.0)
    sol = solve_ivp(rhs, (0, 100), [1, 0, 0, 0], method="DOP853", rtol=1e-12, atol=1e-12)
    err = (as_rotation(sol)[-1].inv() * _reference_rotation_at_100()).magnitude()
    assert np.degrees(err) <= 1e-8


def rk4(f, y, dt, n, normalise=False):
    t = 0.0
    norms = []
    for _ in range(n):
        k1 = f(t, y)
        k2 = f(t + dt / 2, y + dt / 2 * k1)
        k3 = f(t + dt / 2, y + dt / 2 * k2)
        k4 = f(t + dt, y + dt * k3)
        y = y + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        if normalise:
            y = y / np.linalg.norm(y)
        t += dt
        norms.append(np.linalg.norm(y))
    return y, np.array(norms)


@pytest.mark.parametrize("dt", [1.0, 0.2])
def test_nonunit_equals_stepwise_normalised_rk4(dt):
    f = QuaternionKinematics(BENCH, frame="body", norm_gain=0.0)
    n = round(100 / dt)
    y0 = np.array([1.0, 0, 0, 0])
    q_free, norms = rk4(f, y0, dt, n)
    q_norm, _ = rk4(f, y0, dt, n, normalise=True)
    err = (as_rotation(q_free).inv() * as_rotation(q_norm)).magnitude()
    assert np.degrees(err) <= 1e-10
    if dt == 1.0:   # Rucker 2018 sec. III-A: the norm drifts by about a third at t = 100
        assert 0.2 < abs(norms[-1] - 1) < 0.5


def test_norm_gain_bounds_drift():
    y0 = np.array([1.0, 0, 0, 0])
    _, free = rk4(QuaternionKinematics(BENCH, norm_gain=0.0), y0, 1.0, 100)
    _, ctrl = rk4(QuaternionKinematics(BENCH, norm_gain=0.1), y0, 1.0, 100)
    d_free, d_ctrl = np.abs(free - 1), np.abs(ctrl - 1)
    assert d_ctrl.max() < d_free.max()
    assert d_ctrl[-1] < 0.5 * d_free[-1]
    assert d_ctrl[50:].max() <= 1.2 * d_ctrl[:50].max() + 1e-3   # bounded, not growing


# ---- invariants --------------------------------------------------------------------------

def test_lagrange_top_conserves_energy_and_vertical_momentum():
    rhs = RigidBody([1.0, 1.0, 0.5], torque.Gravity(mass=1, g=1, com=[0, 0, 1]))
    y0 = np.array([1, 0, 0, 0, 1.5, 0, 1.0])
    sol = solve_ivp(rhs, (0, 100), y0, method="DOP853", rtol=1e-12, atol=1e-12)
    E, L = rhs.energy(sol.y), rhs.angular_momentum(sol.y)
    assert np.max(np.abs(E / E[0] - 1)) <= 1e-8
    assert np.max(np.abs(L[2] / L[2, 0] - 1)) <= 1e-8
    assert np.ptp(sol.y[6]) < 1e-8         # w_z constant for a symmetric top


def test_torque_free_t_handle_conserves_energy_and_momentum():
    rhs = RigidBody([2.5, 1.4, 1.3])
    y0 = np.array([1, 0, 0, 0, 0.01, 3.0, 0.01])       # near the intermediate axis
    sol = solve_ivp(rhs, (0, 100), y0, method="DOP853", rtol=1e-12, atol=1e-12)
    E, L = rhs.energy(sol.y), rhs.angular_momentum(sol.y)
    assert np.ptp(sol.y[5]) > 1.0                          # it does tumble (Dzhanibekov)
    assert np.max(np.abs(E / E[0] - 1)) <= 1e-9
    assert np.max(np.linalg.norm(L - L[:, :1], axis=0)) <= 1e-9 * np.linalg.norm(L[:, 0])


def test_gyroscopic_false_drops_precession():
    rhs = RigidBody([2.5, 1.4, 1.3], gyroscopic=False)
    assert_allclose(rhs(0, [1, 0, 0, 0, 1, 2, 3])[4:], 0.0)


def test_energy_of_other_formulations_agree():
    Im = np.array([2.5, 1.4, 1.3])
    q, w = unit(rng.normal(size=4)), rng.normal(size=3)
    rot = Rotation.from_quat(q, scalar_first=True)
    rb = RigidBody(Im, GRAV)
    E, L = rb.energy(np.concatenate([q, w])), rb.angular_momentum(np.concatenate([q, w]))
    forms = [
        (QuaternionSecondOrder(Im, GRAV), np.concatenate([q, 0.5 * ref.qmul(q, ref.pure(w))])),
        (EulerAnglesXYZ(Im, GRAV), np.concatenate([rot.as_euler("XYZ"), w])),
        (RotationMatrix(Im, GRAV), np.concatenate([rot.as_matrix().ravel(), w])),
        (ExpCoordRigidBody(Im, GRAV), np.concatenate([rot.as_rotvec(), w])),
    ]
    for f, y in forms:
        assert_allclose(f.energy(y), E, rtol=1e-12)
        assert_allclose(f.angular_momentum(y), L, rtol=1e-12, atol=1e-12)


def test_euler_angles_gimbal_lock_raises():
    f = EulerAnglesXYZ([2.5, 1.4, 1.3])
    with pytest.raises(ValueError, match="gimbal lock"):
        f(0, [0.1, np.pi / 2, 0.2, 1, 2, 3])


# ---- bad input ---------------------------------------------------------------------------

@pytest.mark.parametrize("inertia, match", [
    ([1, 2], r"shape \(3,\)"),
    ([1, -1, 1], "must be > 0"),
    ([[1, 0.5, 0], [0, 1, 0], [0, 0, 1]], "symmetric"),
    ([[1, 2, 0], [2, 1, 0], [0, 0, 1]], "positive definite"),
    ([1, 1, 3], "triangle"),
    ([1, np.nan, 1], "finite"),
])
def test_bad_inertia(inertia, match):
    with pytest.raises(ValueError, match=match):
        RigidBody(inertia)


def test_bad_arguments():
    with pytest.raises(ValueError, match="`frame` must be 'body' or 'world'"):
        QuaternionKinematics([0, 0, 1], frame="space")
    with pytest.raises(ValueError, match="`frame` must be 'body' or 'world'"):
        ExpCoordKinematics([0, 0, 1], frame="inertial")
    with pytest.raises(ValueError, match="norm_gain"):
        QuaternionKinematics([0, 0, 1], norm_gain=-1)
    with pytest.raises(ValueError, match=r"`omega` must have shape \(3,\)"):
        QuaternionKinematics([0, 1])
    with pytest.raises(ValueError, match="finite"):
        QuaternionKinematics([0, np.inf, 1])
    with pytest.raises(TypeError, match="omega"):
        QuaternionKinematics("fast")
    with pytest.raises(ValueError, match=r"`tau` must have shape \(3,\)"):
        torque.Constant([1, 2, 3, 4])
    with pytest.raises(ValueError, match="`frame` must be"):
        torque.Constant([1, 2, 3], frame="lab")
    with pytest.raises(ValueError, match="`mass` must be finite and > 0"):
        torque.Gravity(0, 9.81, [0, 0, 1])
    with pytest.raises(ValueError, match=r"`y` must have shape \(4,\) or \(4, k\)"):
        QuaternionKinematics([0, 0, 1])(0.0, np.zeros(3))
    with pytest.raises(ValueError, match=r"`y` must have shape \(7,\)"):
        RigidBody([1, 1, 1]).jac(0.0, np.zeros((7, 2)))
    with pytest.raises(ValueError, match="nonzero"):
        ExpCoordKinematics([0, 0, 1]).base = [0, 0, 0, 0]


def test_callable_errors_are_reraised():
    f = QuaternionKinematics(lambda t: [1.0, 2.0])
    with pytest.raises(ValueError, match=r"must return shape \(3,\), got \(2,\)"):
        f(0.0, np.array([1.0, 0, 0, 0]))
    g = QuaternionKinematics(lambda t: [1.0, np.nan, 0])
    with pytest.raises(ValueError, match="non-finite"):
        g(0.0, np.array([1.0, 0, 0, 0]))

    def boom(t):
        raise RuntimeError("sensor offline")
    with pytest.raises(RuntimeError, match="sensor offline"):
        QuaternionKinematics(boom)(0.0, np.array([1.0, 0, 0, 0]))
    rb = RigidBody([1, 1, 1], lambda t, q, w: np.zeros(4))
    with pytest.raises(ValueError, match=r"torque callable must return shape \(3,\)"):
        rb(0.0, np.array([1.0, 0, 0, 0, 1, 2, 3]))
    with pytest.raises(ValueError, match=r"torque callable must return shape \(3,\)"):
        rb.jac(0.0, np.array([1.0, 0, 0, 0, 1, 2, 3]))
    # the error state is cleared: a good call afterwards works
    ok = RigidBody([1, 1, 1], lambda t, q, w: np.ones(3))
    assert_allclose(ok(0.0, np.array([1.0, 0, 0, 0, 0, 0, 0]))[4:], 1.0)
