"""The spacecraft of benchmarks/bench_ode.py (benchmarks/spacecraft.py): its equations'
invariants and conventions, and its numba, Python and Cython versions agreeing.

- without the orbit's coupling (the gravity-gradient switch off) the wheels' motor torques are
  internal: the total angular momentum R(q) (I w + h) is conserved (an accurate SciPy run);
- q' = 1/2 q (x) (0, w) with w in body axes: a constant body rate turns R(t) = R0 exp([w t]x);
- R(q) maps body to world (rotode's and SciPy's convention), the gravity-gradient torque is
  3 mu / |r|^5 (r_b x I r_b), the PD law is zero on the LVLH target and restoring off it;
- one evaluation: numba njit == cfunc == plain Python (== Cython, where it builds).
"""
import ctypes

import benchmark_modules
import numpy as np
import pytest
from scipy.integrate import solve_ivp
from scipy.spatial.transform import Rotation

import rotode

pytestmark = benchmark_modules.needs("spacecraft")


@pytest.fixture(scope="module")
def sc():
    return benchmark_modules.load("spacecraft")


def f(sc, t, y, p):
    return sc.py_fun(t, np.asarray(y, dtype=float), p)


def random_states(sc, n, seed=20261126):
    rng = np.random.default_rng(seed)
    y0 = sc.initial_state()
    return [(rng.uniform(0, sc.T_END),
             y0 * (1 + 0.3 * rng.normal(size=16)) + 0.1 * rng.normal(size=16) * sc.SCALE)
            for _ in range(n)]


def test_momentum_is_conserved_without_gravity_gradient(sc):
    p = sc.params(gravity_gradient=False)
    y0 = sc.initial_state()
    sol = solve_ivp(sc.py_fun, (0.0, 300.0), y0, method="DOP853", rtol=1e-12,
                    atol=sc.atol_of(1e-12), args=(p,), t_eval=[100.0, 200.0, 300.0])
    assert sol.success
    H0 = sc.momentum_world(y0, p)
    for y in sol.y.T:
        assert np.linalg.norm(sc.momentum_world(y, p) - H0) <= 1e-9 * np.linalg.norm(H0)
    # not trivially: the slew moved momentum between the body and the wheels
    assert np.linalg.norm(sol.y[13:16, -1] - y0[13:16]) > 1.0
    # and the switch matters: with the gravity gradient the momentum changes
    with_gg = solve_ivp(sc.py_fun, (0.0, 300.0), y0, method="DOP853", rtol=1e-12,
                        atol=sc.atol_of(1e-12), args=(sc.params(),))
    drift = np.linalg.norm(sc.momentum_world(with_gg.y[:, -1], sc.params()) - H0)
    assert drift > 1e-5 * np.linalg.norm(H0)


def test_quaternion_rate_is_half_q_times_body_rate(sc, rng):
    p = sc.params()
    for t, y in random_states(sc, 20):
        want = 0.5 * rotode.quaternion.multiply(y[6:10], np.concatenate([[0.0], y[10:13]]))
        np.testing.assert_allclose(f(sc, t, y, p)[6:10], want, rtol=1e-14, atol=1e-17)


def test_constant_body_rate_turns_in_body_axes(sc):
    # isotropic inertia, no control, no gravity gradient, no wheels: w stays constant
    p = sc.params(inertia=1000.0 * np.eye(3), wn=0.0, gravity_gradient=False)
    y0 = sc.initial_state(wheels=(0.0, 0.0, 0.0))
    w = y0[10:13]
    dy = f(sc, 0.0, y0, p)
    assert np.abs(dy[10:16]).max() < 1e-18                    # (w x I w: rounding)
    T = 200.0
    sol = solve_ivp(sc.py_fun, (0.0, T), y0, method="DOP853", rtol=1e-12,
                    atol=sc.atol_of(1e-12), args=(p,))
    R0 = Rotation.from_quat(y0[6:10], scalar_first=True).as_matrix()
    want = R0 @ Rotation.from_rotvec(w * T).as_matrix()           # body frame: on the right
    np.testing.assert_allclose(sc.rotation_matrix(sol.y[6:10, -1]), want, atol=1e-10)
    # q' = 1/2 q (0, w), w constant: q(T) = q0 exp((0, w T / 2)), the same sign
    np.testing.assert_allclose(
        sol.y[6:10, -1], rotode.quaternion.multiply(y0[6:10], rotode.quaternion.exp(w * T / 2)),
        atol=1e-10)


def test_rotation_matrix_and_measures_follow_rotode(sc, rng):
    q = rng.normal(size=(10, 4))
    for qi in q:
        np.testing.assert_allclose(sc.rotation_matrix(qi), rotode.quaternion.to_matrix(qi),
                                   atol=1e-15)
        R = rotode.quaternion.to_matrix(qi)
        mine, theirs = sc._quaternion_from_matrix(R), rotode.quaternion.from_matrix(R)
        np.testing.assert_allclose(mine * np.sign(mine @ theirs), theirs, atol=1e-15)
    for a, b in zip(q[:5], q[5:], strict=True):
        assert sc.angle_deg(a, b) == pytest.approx(
            np.degrees(rotode.quaternion.angle_between(b, a)), rel=1e-12)


def test_gravity_gradient_torque(sc, rng):
    p = sc.params(wn=0.0)                         # no control torque
    inertia = sc.INERTIA
    for t, y in random_states(sc, 10):
        y[10:16] = 0.0                            # at rest, no wheel momentum
        r = y[:3]
        rb = rotode.quaternion.to_matrix(y[6:10]).T @ r
        tau = 3 * sc.MU_EARTH / np.linalg.norm(r) ** 5 * np.cross(rb, inertia @ rb)
        np.testing.assert_allclose(f(sc, t, y, p)[10:13], np.linalg.solve(inertia, tau),
                                   rtol=1e-12, atol=1e-12 * np.abs(tau).max())


@pytest.mark.parametrize("axis", [0, 1, 2])
def test_controller_is_zero_on_target_and_restoring_off_it(sc, axis):
    p = sc.params()
    y = sc.initial_state()
    Rt, wt = sc.lvlh(y[:3], y[3:6])
    y[6:10] = sc._quaternion_from_matrix(Rt)
    y[10:13] = Rt.T @ wt
    assert np.abs(f(sc, 0.0, y, p)[13:16]).max() < 1e-15 * np.abs(p[sc.P_KD:]).max()
    theta = 0.3
    R = Rt @ Rotation.from_rotvec(theta * np.eye(3)[axis]).as_matrix()
    y[6:10], y[10:13] = sc._quaternion_from_matrix(R), R.T @ wt
    # h' = -tau_c = Kp e, e = dq0 dq_v = sin(theta)/2 about the axis: the wheels take the
    # momentum that turns the body back
    want = np.zeros(3)
    want[axis] = p[sc.P_KP + axis] * 0.5 * np.sin(theta)
    np.testing.assert_allclose(f(sc, 0.0, y, p)[13:16], want, atol=1e-14 * want.max())


def test_initial_state(sc):
    y0 = sc.initial_state()
    assert np.linalg.norm(y0[6:10]) == pytest.approx(1.0, abs=1e-15)
    Rt, _ = sc.lvlh(y0[:3], y0[3:6])
    assert np.degrees(rotode.quaternion.angle_between(
        y0[6:10], sc._quaternion_from_matrix(Rt))) == pytest.approx(40.0, abs=1e-9)
    assert np.linalg.norm(y0[:3]) == pytest.approx(7000.0)
    assert not np.allclose(sc.INERTIA, np.diag(np.diag(sc.INERTIA)))      # a full tensor


def test_numba_versions_equal_python(sc):
    pytest.importorskip("numba")
    p = sc.params()
    core, cfunc = sc.make_njit(), sc.make_cfunc()
    diffeq = sc.make_nbsolve_diffeq()
    ptr = ctypes.POINTER(ctypes.c_double)
    for t, y in random_states(sc, 20):
        want = f(sc, t, y, p)
        got = np.empty(16)
        core(t, y, got, p)
        np.testing.assert_allclose(got, want, rtol=1e-15, atol=0)
        np.testing.assert_allclose(diffeq(t, y, p), want, rtol=1e-15, atol=0)
        out = np.empty(16)
        assert cfunc.ctypes(t, y.ctypes.data_as(ptr), out.ctypes.data_as(ptr),
                            p.ctypes.data_as(ptr)) == 0
        np.testing.assert_allclose(out, want, rtol=1e-15, atol=0)


@pytest.mark.slow
def test_cython_version_equals_python(sc):
    """(slow only on the first run: it builds benchmarks/engine/cyrk_spacecraft.pyx, about
    20 s, then reuses the build from the temporary directory)"""
    pytest.importorskip("CyRK")
    build = benchmark_modules.load("engine", "build")
    try:
        cy = build.cyrk("cyrk_spacecraft")
    except build.BuildError as exc:
        pytest.skip(f"cyrk_spacecraft not built: {exc}")
    p = sc.params()
    for t, y in random_states(sc, 20):
        np.testing.assert_allclose(cy.rhs(p, t, y), f(sc, t, y, p), rtol=1e-15, atol=0)
