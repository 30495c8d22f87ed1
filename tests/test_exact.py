"""Tests of rotode.exact: Jacobi functions near m = 1 and the exact torque-free rigid body.

References used, all independent of the module's formulas:

* ``mpmath.ellipfun``/``ellipk``/``ellipf``/``quad`` at 40+ digits for the elliptic functions;
* a tight DOP853 integration of Euler's equations plus quaternion kinematics (NumPy RHS below);
* ``mpmath.odefun`` (arbitrary-precision Taylor series) where DOP853 is not accurate enough,
  i.e. within 1 - m < 1e-5 of the separatrix, where DOP853 at rtol 1e-13 drifts by ~1e-7 rad
  over 100 s (its answer moves by that much when its own tolerances change);
* closed forms: steady rotation, the symmetric top (regular precession).
"""

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from scipy.integrate import solve_ivp
from scipy.spatial.transform import Rotation
from scipy.special import ellipj

from rotode.exact import ellipf, ellipk, free_rigid_body, jacobi_sn_cn_dn


@pytest.fixture(autouse=True)
def _restore_mpmath_precision():
    """Tests here raise mpmath's global precision; put it back for other modules."""
    dps = mpmath.mp.dps
    yield
    mpmath.mp.dps = dps

mpmath = pytest.importorskip("mpmath")

EPS = np.finfo(float).eps
T_HANDLE = np.array([2.5, 1.4, 1.3])
# w_z / w_x on the T-handle's separatrix L^2 = 2 E I_y (with any w_y):
# I_x (I_x - I_y) w_x^2 + I_z (I_z - I_y) w_z^2 = 0.
T_SEP = np.sqrt(2.5 * 1.1 / (1.3 * 0.1))


# ---------------------------------------------------------------------------------------------
# Plain-NumPy helpers (independent of rotode's compiled kernels)
# ---------------------------------------------------------------------------------------------

def qmul(p, q):
    """Hamilton product of quaternion arrays (..., 4)."""
    p, q = np.broadcast_arrays(p, q)
    out = np.empty(p.shape)
    out[..., 0] = p[..., 0] * q[..., 0] - np.sum(p[..., 1:] * q[..., 1:], axis=-1)
    out[..., 1:] = p[..., :1] * q[..., 1:] + q[..., :1] * p[..., 1:] + np.cross(p[..., 1:],
                                                                               q[..., 1:])
    return out


def qconj(q):
    return q * np.array([1.0, -1.0, -1.0, -1.0])


def rotation_angle(qa, qb):
    """Angle of the rotation ``qa^-1 qb``: ``2 asin(|vector part|)`` of unit quaternions."""
    qa = qa / np.linalg.norm(qa, axis=-1, keepdims=True)
    qb = qb / np.linalg.norm(qb, axis=-1, keepdims=True)
    vec = qmul(qconj(qa), qb)[..., 1:]
    return 2 * np.arcsin(np.minimum(1.0, np.linalg.norm(vec, axis=-1)))


def rotate(q, v):
    """``R(q) v`` for unit quaternions (..., 4) and vectors (..., 3)."""
    qv = np.concatenate([np.zeros(v.shape[:-1] + (1,)), v], axis=-1)
    return qmul(qmul(q, qv), qconj(q))[..., 1:]


def qexp(v):
    """``exp((0, v)) = (cos|v|, sin|v| v/|v|)`` for v (..., 3)."""
    n = np.linalg.norm(v, axis=-1, keepdims=True)
    return np.concatenate([np.cos(n), np.sinc(n / np.pi) * v], axis=-1)


def inertia_matrix(inertia):
    inertia = np.asarray(inertia, float)
    return np.diag(inertia) if inertia.ndim == 1 else inertia


def euler_quaternion_rhs(inertias):
    """RHS of ``I w' = -w x I w`` and ``q' = q (0, w) / 2`` for a batch of bodies.

    State per body: ``[q (4), w (3)]`` (body-frame w), flattened over the batch so that one
    DOP853 run integrates all bodies (each body's error is controlled separately per component).
    """
    Is = np.array([inertia_matrix(i) for i in inertias])
    Iinv = np.linalg.inv(Is)
    n = len(Is)

    def rhs(t, y):
        y = y.reshape(n, 7)
        q, w = y[:, :4], y[:, 4:]
        wdot = np.einsum("nij,nj->ni", Iinv, -np.cross(w, np.einsum("nij,nj->ni", Is, w)))
        qdot = 0.5 * qmul(q, np.concatenate([np.zeros((n, 1)), w], axis=1))
        return np.concatenate([qdot, wdot], axis=1).ravel()

    return rhs


def random_unit_quaternions(n, seed):
    q = np.random.default_rng(seed).normal(size=(n, 4))
    return q / np.linalg.norm(q, axis=1, keepdims=True)


# ---------------------------------------------------------------------------------------------
# Jacobi elliptic functions and K near the separatrix
# ---------------------------------------------------------------------------------------------

def mp_parameter(m1):
    """mpmath working precision and the exact parameter ``1 - m1``."""
    mpmath.mp.dps = 30 + max(0, int(-np.log10(m1))) if m1 > 0 else 30
    return mpmath.mpf(1) - mpmath.mpf(m1)


@pytest.mark.parametrize("m1", [0.5, 1e-4, 1e-8, 1e-10, 1e-12, 1e-14, 1e-16, 1e-30, 1e-300])
def test_jacobi_vs_mpmath(m1):
    m = mp_parameter(m1)
    K = float(mpmath.ellipk(m))
    u = np.concatenate([np.linspace(-4 * K, 4 * K, 33), [K, 2 * K, 0.3, -7.7, 60.0]])
    sn, cn, dn = jacobi_sn_cn_dn(u, 1.0 - m1, m1)
    ref = np.array([[float(mpmath.ellipfun(f, mpmath.mpf(x), m=m)) for x in u]
                    for f in ("sn", "cn", "dn")])
    err = np.abs(np.array([sn, cn, dn]) - ref).max(axis=0)
    # Inherent: a double u carries eps |u| of phase; measured max ratio 1.5 (docstring).
    assert np.all(err <= 2 * EPS * (1 + np.abs(u))), err.max()
    assert err[np.abs(u) <= K].max() <= 1e-15
    assert abs(ellipk(1.0 - m1, m1) - K) <= 2 * EPS * K


def test_jacobi_on_the_separatrix_is_hyperbolic():
    u = np.linspace(-30, 30, 61)
    sn, cn, dn = jacobi_sn_cn_dn(u, 1.0, 0.0)
    np.testing.assert_allclose(sn, np.tanh(u), rtol=0, atol=1e-16)
    np.testing.assert_allclose(cn, 1 / np.cosh(u), rtol=1e-15, atol=0)
    np.testing.assert_array_equal(cn, dn)
    assert ellipk(1.0, 0.0) == np.inf


def test_jacobi_m_zero_and_shapes():
    u = np.linspace(-10, 10, 12).reshape(3, 4)
    sn, cn, dn = jacobi_sn_cn_dn(u, 0.0)
    assert sn.shape == cn.shape == dn.shape == (3, 4)
    np.testing.assert_allclose(sn, np.sin(u), rtol=0, atol=4 * EPS * 10)
    np.testing.assert_allclose(cn, np.cos(u), rtol=0, atol=4 * EPS * 10)
    np.testing.assert_array_equal(dn, 1.0)
    assert np.shape(jacobi_sn_cn_dn(0.5, 0.3)[0]) == ()


@pytest.mark.parametrize("m1", [0.7, 1e-6, 1e-12, 1e-40])
def test_ellipf_inverts_am(m1):
    m = mp_parameter(m1)
    phi = np.linspace(-np.pi / 2 + 1e-3, np.pi / 2 - 1e-3, 9)
    F = ellipf(phi, 1.0 - m1, m1)
    ref = np.array([float(mpmath.ellipf(mpmath.mpf(p), m)) for p in phi])
    np.testing.assert_allclose(F, ref, rtol=4 * EPS, atol=0)
    sn, _, _ = jacobi_sn_cn_dn(F, 1.0 - m1, m1)
    assert np.all(np.abs(sn - np.sin(phi)) <= 8 * EPS * (1 + np.abs(F)))


# Measured with SciPy 1.17 on 801 points of [0, 4K] (rotode.exact's module docstring keeps the
# full table): 1 - m = 1e-8: dn abs. error 1.6e-13 (relative 1.6e-9 near u = K); 2e-10: 1.6e-12;
# 1 - m < 1e-10: wrong by O(1) from u ~ K on (sn error 2, cn and dn up to 3e13), because Cephes'
# ellpj switches to a first-order expansion in 1 - m that holds only for small u.
@pytest.mark.parametrize("m1, scipy_at_least", [(1e-8, 5e-14), (2e-10, 5e-13), (1e-12, 0.1)])
def test_scipy_ellipj_measurement_near_separatrix(m1, scipy_at_least):
    """Canary for the docstring table: SciPy's ellipj at the double m = 1 - m1 vs mpmath.

    If this fails because SciPy got *more* accurate, update rotode.exact's docstring (the
    Jacobi functions there do not depend on SciPy either way).
    """
    m_double = 1.0 - m1
    mpmath.mp.dps = 40
    m = mpmath.mpf(m_double)
    K = float(mpmath.ellipk(m))
    # Points where the measured errors peak: just before K (dn) and 3K (sn, cn on the far side).
    u = np.concatenate([K * np.linspace(0.985, 0.999, 8), K * np.linspace(2.99, 3.01, 5)])
    ref = np.array([[float(mpmath.ellipfun(f, mpmath.mpf(x), m=m)) for x in u]
                    for f in ("sn", "cn", "dn")])
    scipy_err = np.abs(np.array(ellipj(u, m_double)[:3]) - ref).max()
    ours_err = np.abs(np.array(jacobi_sn_cn_dn(u, m_double)) - ref).max()
    assert ours_err <= 2 * EPS * (1 + u.max())
    assert scipy_err > scipy_at_least, f"scipy.special.ellipj improved: {scipy_err:.1e}"


# ---------------------------------------------------------------------------------------------
# The precession quadrature
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("m1", [0.6, 1e-3, 1e-12])
def test_precession_quadrature_vs_mpmath(m1):
    """The O(1)-per-time Gauss-Legendre integral of 1/(alpha + beta dn) vs mpmath.quad."""
    from rotode.exact import _PeriodicIntegral

    alpha, beta = 2.0, 1.7
    m = mp_parameter(m1)
    K = ellipk(1.0 - m1, m1)
    integral = _PeriodicIntegral(
        lambda v: 1.0 / (alpha + beta * jacobi_sn_cn_dn(v, 1.0 - m1, m1)[2]), 2 * K)
    u = np.array([0.37, 1.3 * K, 5.5 * K, -3.1 * K])

    def f(s):
        return 1 / (alpha + beta * mpmath.ellipfun("dn", s, m=m))

    mpmath.mp.dps = 20 if m1 > 1e-6 else 30
    period = mpmath.quad(f, mpmath.linspace(0, 2 * mpmath.ellipk(m), 25))
    for x, got in zip(u, integral(u), strict=True):
        n = int(np.floor(x / (2 * K)))
        r = mpmath.mpf(x) - n * 2 * mpmath.ellipk(m)
        ref = n * period + mpmath.quad(f, mpmath.linspace(0, r, 13))
        assert abs(got - float(ref)) <= 4 * EPS * (1 + abs(float(ref)))
    # Short spans are integrated directly, not as G(u0 + du) - G(u0).
    short = integral.span(K, np.array([1e-9, -1e-15]))
    ref = [float(f(mpmath.mpf(K) + 5e-10)) * 1e-9, -1e-15 * float(f(mpmath.mpf(K)))]
    np.testing.assert_allclose(short, ref, rtol=4 * EPS)


# ---------------------------------------------------------------------------------------------
# Agreement with DOP853 over 100 s (acceptance)
# ---------------------------------------------------------------------------------------------

_V = Rotation.from_rotvec([0.3, -1.2, 0.8]).as_matrix()
DOP853_CASES = {
    # T-handle spun at |w| ~ 5 near the intermediate axis, both sides of the separatrix:
    # L^2 > 2 E I_y (rotation about the largest axis, 1 - m = 2.0e-3 and 4.3e-5) and
    # L^2 < 2 E I_y (about the smallest axis, 1 - m = 1.3e-3 and 4.3e-5).
    "T-handle above": (T_HANDLE, [0.05, 5.0, 0.05]),
    "T-handle just above": (T_HANDLE, [0.05, 5.0, 0.05 * T_SEP * (1 - 1e-2)]),
    "T-handle below": (T_HANDLE, [0.02, 5.0, 0.2]),
    "T-handle just below": (T_HANDLE, [0.05, 5.0, 0.05 * T_SEP * (1 + 1e-2)]),
    "distinct": ([1.0, 2.0, 3.0], [0.5, 0.8, -0.2]),
    "oblate symmetric top": ([1.0, 1.0, 2.0], [0.3, -0.5, 2.0]),
    "prolate symmetric top": ([2.0, 1.0, 2.0], [0.3, -0.5, 2.0]),
    "near-spherical": ([1.0, 1.0 + 1e-6, 1.0 - 2e-6], [1.0, 2.0, -3.0]),
    "spherical": ([1.5, 1.5, 1.5], [1.0, -2.0, 0.5]),
    "full SPD": (_V @ np.diag([1.5, 2.0, 3.2]) @ _V.T, [0.7, -1.1, 0.4]),
    "full SPD symmetric": (_V @ np.diag([2.0, 2.0, 3.2]) @ _V.T, [0.7, -1.1, 0.4]),
}
T_END = 100.0
T_EVAL = np.linspace(0.0, T_END, 401)


@pytest.fixture(scope="module")
def dop853_reference():
    """One DOP853 run (rtol 1e-13, atol 1e-14) for all bodies at once: ~2 s instead of ~10."""
    names = list(DOP853_CASES)
    inertias = [DOP853_CASES[k][0] for k in names]
    q0 = random_unit_quaternions(len(names), seed=5)
    w0 = np.array([DOP853_CASES[k][1] for k in names], float)
    y0 = np.concatenate([q0, w0], axis=1).ravel()
    sol = solve_ivp(euler_quaternion_rhs(inertias), (0.0, T_END), y0, method="DOP853",
                    rtol=1e-13, atol=1e-14, t_eval=T_EVAL)
    assert sol.success
    y = sol.y.reshape(len(names), 7, -1)
    return {k: (q0[i], y[i, :4].T, y[i, 4:].T) for i, k in enumerate(names)}


@pytest.mark.parametrize("name", list(DOP853_CASES))
def test_agrees_with_dop853_over_100_s(name, dop853_reference):
    inertia, w0 = DOP853_CASES[name]
    q0, q_ref, w_ref = dop853_reference[name]
    q, w = free_rigid_body(inertia, w0, T_EVAL, q0)
    assert rotation_angle(q, q_ref).max() <= 1e-9
    assert np.abs(w - w_ref).max() <= 1e-9 * max(1.0, np.abs(w0).max())


# ---------------------------------------------------------------------------------------------
# Close to and on the separatrix: arbitrary-precision Taylor reference
# ---------------------------------------------------------------------------------------------

def taylor_reference(inertia, w0, q0, times, dps=30):
    """``mpmath.odefun`` (Taylor series at ``dps`` digits) of Euler + quaternion kinematics."""
    mpmath.mp.dps = dps
    Ix, Iy, Iz = (mpmath.mpf(float(x)) for x in inertia)

    def f(t, y):
        qw, qx, qy, qz, wx, wy, wz = y
        return [-(qx * wx + qy * wy + qz * wz) / 2, (qw * wx + qy * wz - qz * wy) / 2,
                (qw * wy + qz * wx - qx * wz) / 2, (qw * wz + qx * wy - qy * wx) / 2,
                (Iy - Iz) * wy * wz / Ix, (Iz - Ix) * wz * wx / Iy, (Ix - Iy) * wx * wy / Iz]

    sol = mpmath.odefun(f, 0, [mpmath.mpf(float(x)) for x in [*q0, *w0]])
    return np.array([[float(x) for x in sol(t)] for t in times])


SEPARATRIX_CASES = {
    # 1 - m = 2e-11 (L^2 just below 2 E I_y): DOP853 at rtol 1e-13 is off by ~1e-3 rad here.
    "T-handle 1 - m = 2e-11": (T_HANDLE, [0.01, 5.0, 0.0459933110103231]),
    # Exactly on the separatrix in double arithmetic: 1*(1-4)*2^2 + 6*(6-4)*1^2 = 0.
    "separatrix": ([1.0, 4.0, 6.0], [2.0, 0.3, -1.0]),
    "separatrix, w_y = 0": ([1.0, 4.0, 6.0], [-2.0, 0.0, 1.0]),
}


@pytest.mark.parametrize("name", list(SEPARATRIX_CASES))
def test_near_and_on_separatrix_vs_taylor(name):
    inertia, w0 = SEPARATRIX_CASES[name]
    q0 = random_unit_quaternions(1, seed=11)[0]
    times = [2.5, 8.0]
    ref = taylor_reference(inertia, w0, q0, times, dps=25)
    q, w = free_rigid_body(inertia, w0, times, q0)
    assert rotation_angle(q, ref[:, :4]).max() <= 1e-13
    assert np.abs(w - ref[:, 4:]).max() <= 1e-13


@pytest.mark.slow
@pytest.mark.parametrize("w0", [[1e-3, 5.0, 1e-3], [0.01, 5.0, 0.0459933110103231],
                                [0.05, 5.0, 0.05 * T_SEP * (1 + 1e-5)]])
def test_t_handle_near_separatrix_vs_taylor_40_s(w0):
    """The cases where DOP853 drifts by 1e-7 .. 1e-3 rad, over several flips."""
    q0 = random_unit_quaternions(1, seed=3)[0]
    times = [10.0, 25.0, 40.0]
    ref = taylor_reference(T_HANDLE, w0, q0, times)
    q, w = free_rigid_body(T_HANDLE, w0, times, q0)
    assert rotation_angle(q, ref[:, :4]).max() <= 1e-12
    assert np.abs(w - ref[:, 4:]).max() <= 1e-12


# ---------------------------------------------------------------------------------------------
# Invariants, closed forms, structure
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", list(DOP853_CASES) + list(SEPARATRIX_CASES))
def test_invariants_at_round_off(name):
    inertia, w0 = {**DOP853_CASES, **SEPARATRIX_CASES}[name]
    I = inertia_matrix(inertia)  # noqa: E741
    q0 = random_unit_quaternions(1, seed=2)[0]
    t = np.linspace(-50.0, 200.0, 2001)
    q, w = free_rigid_body(inertia, w0, t, q0)
    Iw = w @ I.T
    energy = 0.5 * np.sum(w * Iw, axis=1)
    L_world = rotate(q, Iw)
    E0 = 0.5 * np.dot(w0, I @ w0)
    L0 = rotate(q0, I @ np.asarray(w0, float))
    assert np.abs(energy - E0).max() <= 16 * EPS * E0
    # psi grows like |L| t / I_c: its rounding (eps psi) bounds the orientation error.
    assert np.abs(L_world - L0).max() <= 64 * EPS * np.linalg.norm(L0) * (1 + np.abs(t).max())
    assert np.abs(np.linalg.norm(q, axis=1) - 1).max() <= 4 * EPS


def test_symmetric_top_is_regular_precession():
    """``q(t) = exp(t L_w / (2 I_t)) q0 exp(-Omega t e_s / 2)``, Omega = (I_s - I_t) w_s / I_t."""
    It, Is = 1.3, 2.9
    w0 = np.array([0.4, -0.7, 1.9])
    q0 = random_unit_quaternions(1, seed=8)[0]
    t = np.linspace(0.0, 50.0, 501)
    q, w = free_rigid_body([It, It, Is], w0, t, q0)
    L_world = rotate(q0, np.array([It, It, Is]) * w0)
    omega = (Is - It) * w0[2] / It
    q_ref = qmul(qmul(qexp(np.outer(t, L_world) / (2 * It)), q0),
                 qexp(np.outer(-omega * t / 2, [0.0, 0.0, 1.0])))
    assert rotation_angle(q, q_ref).max() <= 1e-12
    w_ref = np.stack([w0[0] * np.cos(omega * t) - w0[1] * np.sin(omega * t),
                      w0[0] * np.sin(omega * t) + w0[1] * np.cos(omega * t),
                      np.full_like(t, w0[2])], axis=1)
    np.testing.assert_allclose(w, w_ref, rtol=0, atol=1e-13)


@pytest.mark.parametrize("inertia, w0", [
    (T_HANDLE, [0.0, 5.0, 0.0]),               # the unstable intermediate axis, exactly
    (T_HANDLE, [0.0, 0.0, -3.0]),
    ([1.0, 2.0, 2.0], [0.0, 1.0, -2.0]),       # in the plane of two equal moments
    ([1.5, 1.5, 1.5], [1.0, -2.0, 0.5]),       # spherical
    ([1.0, 2.0, 3.0], [0.0, 0.0, 0.0]),        # at rest
])
def test_steady_rotation(inertia, w0):
    q0 = random_unit_quaternions(1, seed=4)[0]
    t = np.linspace(0.0, 30.0, 31)
    q, w = free_rigid_body(inertia, w0, t, q0)
    np.testing.assert_array_equal(w, np.broadcast_to(w0, w.shape))
    q_ref = qmul(q0, qexp(0.5 * np.outer(t, w0)))
    assert rotation_angle(q, q_ref).max() <= 1e-13


def test_shapes_scalar_time_and_initial_state():
    q0 = random_unit_quaternions(1, seed=1)[0]
    w0 = [0.05, 5.0, 0.05]
    q, w = free_rigid_body(T_HANDLE, w0, 0.0, 2 * q0)      # q0 need not be unit
    assert q.shape == (4,) and w.shape == (3,)
    np.testing.assert_allclose(q, q0, rtol=0, atol=4 * EPS)
    np.testing.assert_allclose(w, w0, rtol=4 * EPS, atol=0)
    q, w = free_rigid_body(T_HANDLE, w0, [3.0, -1.0, 0.0, 7.5])   # unsorted, negative times
    assert q.shape == (4, 4) and w.shape == (4, 3)
    np.testing.assert_allclose(q[2], [1, 0, 0, 0], atol=4 * EPS)
    q1, w1 = free_rigid_body(T_HANDLE, w0, 7.5)
    np.testing.assert_allclose(q1, q[3], rtol=0, atol=1e-14)
    np.testing.assert_allclose(w1, w[3], rtol=0, atol=1e-14)
    q, w = free_rigid_body(T_HANDLE, w0, np.empty(0))
    assert q.shape == (0, 4) and w.shape == (0, 3)


def test_quaternion_is_continuous_in_time():
    t = np.linspace(0.0, 100.0, 20001)
    q, _ = free_rigid_body(T_HANDLE, [0.05, 5.0, 0.05], t)
    assert np.min(np.sum(q[1:] * q[:-1], axis=1)) > 0.99


MOMENT = st.one_of(st.floats(0.2, 5.0), st.sampled_from([1.0, 2.0, 1.0 + 1e-15]))
RATE = st.one_of(st.floats(-4.0, 4.0), st.sampled_from([0.0, 1e-15, 2.0]))


@settings(max_examples=100, deadline=None)
@given(moments=st.lists(MOMENT, min_size=3, max_size=3),
       w0=st.lists(RATE, min_size=3, max_size=3),
       t1=st.floats(-20.0, 20.0), t2=st.floats(-20.0, 20.0))
@example(moments=[1.0, 0.25, 2.0], w0=[5e-324, 1.0, 0.0], t1=0.0, t2=0.0)  # A_a rounds to 0
def test_flow_property(moments, w0, t1, t2):
    """The exact flow composes: phi_{t1 + t2}(x0) = phi_{t2}(phi_{t1}(x0)), any inertia.

    Round-off in the intermediate state shifts the period by ~ eps L^2 / |D_b| relative
    (D_b = L^2 - 2 E I_mid, the distance to the separatrix), so the tolerance carries that
    condition number; 4000 examples pass at this tolerance (equal moments, zero and 1e-15 rates
    included).
    """
    I, w = np.array(moments), np.array(w0)  # noqa: E741
    L2 = np.sum((I * w) ** 2)
    D_mid = np.sum(I * (I - np.sort(I)[1]) * w * w)
    condition = 1.0 if np.ptp(I) == 0 else 1.0 + L2 / max(abs(D_mid), 1e-300)
    q0 = random_unit_quaternions(1, seed=6)[0]
    q1, w1 = free_rigid_body(moments, w0, t1, q0)
    q12, w12 = free_rigid_body(moments, w0, t1 + t2, q0)
    q2, w2 = free_rigid_body(moments, w1, t2, q1)
    tol = 1e-13 * (1.0 + np.abs(w).max() * (abs(t1) + abs(t2))) * condition
    assert rotation_angle(q2, q12) <= tol
    assert np.abs(w2 - w12).max() <= tol


@pytest.mark.parametrize("tiny", [5e-324, -5e-324, 1e-310, 1e-200])
@pytest.mark.parametrize("where", [0, 2])
@pytest.mark.parametrize("moments", [[1.0, 0.25, 2.0], [2.0, 0.25, 1.0], [0.25, 1.0, 2.0]])
def test_subnormal_rate_component(moments, where, tiny):
    """A subnormal (or tiny) rate component beside a principal rate is a finite motion.

    The amplitudes of the small components then round to 0 or to subnormals; the initial phase
    must come from the exact ratios, not from 0/0.  About an extreme axis the motion is the
    steady rotation to round-off (the tiny component moves it by far less than 1e-16).  About
    the intermediate axis (moments [0.25, 1, 2]) the steady rotation is unstable: the result is
    the exact motion of a ``w0`` moved by round-off, whose departure grows as exp(lambda |t|)
    (lambda = 1.22 here: 3.6e-15 at t = -3, 4.9e-13 at t = 7).
    """
    t = np.linspace(-3.0, 7.0, 11)
    I1, I2, I3 = sorted(moments)
    lam = np.sqrt((I2 - I1) * (I3 - I2) / (I1 * I3))        # the unstable rate, |w| = 1
    intermediate = np.argsort(moments)[1] == 1
    tol = 1e-14 * np.exp(lam * np.abs(t).max()) if intermediate else 1e-15
    w0 = np.zeros(3)
    w0[1] = 1.0
    w0[where] = tiny
    q, w = free_rigid_body(moments, w0, t)
    assert np.all(np.isfinite(q)) and np.all(np.isfinite(w))
    expected = np.column_stack([np.cos(t / 2), np.zeros_like(t), np.sin(t / 2), np.zeros_like(t)])
    assert rotation_angle(q, expected).max() <= 10 * tol
    assert np.abs(w - [0.0, 1.0, 0.0]).max() <= tol


def test_nearly_steady_symmetric_body():
    """lambda ~ 1e-15: the precession integral must not be formed as G(u0 + du) - G(u0)."""
    q0 = random_unit_quaternions(1, seed=9)[0]
    t = np.array([1.0, 2.0, 50.0])
    q, w = free_rigid_body([1.0, 1.0, 2.0], [0.0, 1.0, 1e-15], t, q0)
    q_steady = qmul(q0, qexp(0.5 * np.outer(t, [0.0, 1.0, 1e-15])))
    assert rotation_angle(q, q_steady).max() <= 1e-13


# ---------------------------------------------------------------------------------------------
# Bad input
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("inertia, match", [
    ([1.0, -2.0, 3.0], "principal moments must be positive"),
    ([1.0, 0.0, 3.0], "principal moments must be positive"),
    ([[1.0, 0.0, 0.0], [0.0, 2.0, 0.0], [0.0, 0.0, -3.0]], "positive definite"),
    ([[1.0, 2.0, 0.0], [2.0, 1.0, 0.0], [0.0, 0.0, 1.0]], "positive definite"),
    ([[1.0, 0.5, 0.0], [0.0, 2.0, 0.0], [0.0, 0.0, 3.0]], "symmetric"),
    ([1.0, 2.0], r"shape \(3,\) .* or \(3, 3\), got \(2,\)"),
    (np.eye(4), r"or \(3, 3\), got \(4, 4\)"),
    ([1.0, np.nan, 3.0], "finite"),
])
def test_bad_inertia(inertia, match):
    with pytest.raises(ValueError, match=match):
        free_rigid_body(inertia, [1.0, 2.0, 3.0], 1.0)


@pytest.mark.parametrize("kwargs, exc, match", [
    ({"w0": [1.0, 2.0]}, ValueError, r"`w0` must have shape \(3,\), got \(2,\)"),
    ({"w0": [[1.0, 2.0, 3.0]]}, ValueError, r"`w0` must have shape \(3,\)"),
    ({"w0": [1.0, np.inf, 3.0]}, ValueError, "`w0` must contain only finite"),
    ({"w0": ["a", "b", "c"]}, TypeError, "`w0` must be a real numeric array"),
    ({"t": [[0.0, 1.0]]}, ValueError, r"`t` must be a scalar or have shape \(n,\)"),
    ({"t": [0.0, np.nan]}, ValueError, "`t` must contain only finite"),
    ({"q0": [1.0, 0.0, 0.0]}, ValueError, r"`q0` must have shape \(4,\)"),
    ({"q0": [0.0, 0.0, 0.0, 0.0]}, ValueError, "`q0` must hold nonzero quaternions"),
    ({"q0": [1.0, 0.0, np.nan, 0.0]}, ValueError, "`q0` must contain only finite"),
])
def test_bad_state(kwargs, exc, match):
    args = {"inertia": T_HANDLE, "w0": [1.0, 2.0, 3.0], "t": 1.0, **kwargs}
    with pytest.raises(exc, match=match):
        free_rigid_body(**args)


@pytest.mark.parametrize("call, exc, match", [
    (lambda: jacobi_sn_cn_dn(1.0, 1.5), ValueError, r"`m` must lie in \[0, 1\]"),
    (lambda: jacobi_sn_cn_dn(1.0, 0.5, 0.4), ValueError, "`m1` must equal 1 - `m`"),
    (lambda: jacobi_sn_cn_dn(1.0, 1.0, -1e-3), ValueError, r"must lie in \[0, 1\]"),
    (lambda: jacobi_sn_cn_dn([1.0, np.inf], 0.5), ValueError, "`u` must contain only finite"),
    (lambda: jacobi_sn_cn_dn(1.0, [0.1, 0.2]), ValueError, r"`m` must have shape \(\)"),
    (lambda: ellipk("x"), TypeError, "`m` must be a real numeric"),
    (lambda: ellipf(2.0, 0.5), ValueError, r"`phi` must lie in \[-pi/2, pi/2\]"),
])
def test_bad_elliptic_input(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


def test_tiny_rate_component_does_not_underflow_to_nan():
    """Hypothesis found 0/0 when a component of 1e-161 made L^2 - 2 E I_x ~ 1e-322: the
    amplitudes, frequency and parameter are now formed in exact arithmetic."""
    t = np.array([0.0, 1.0, 2.0])
    q, w = free_rigid_body([1.625, 1.75, 1.75], [1.9767956709984184e-161, 0.0, 1.0], t,
                           q0=[1.0, 0.0, 0.0, 0.0])
    assert np.all(np.isfinite(q)) and np.all(np.isfinite(w))
    # symmetric body (axis x): w_x constant, (w_y, w_z) precess at (I_x - I_y)/I_y w_x
    np.testing.assert_array_equal(w[:, 0], 1.9767956709984184e-161)
    rate = (1.625 - 1.75) / 1.75 * 1.9767956709984184e-161
    np.testing.assert_allclose(w[:, 1], -rate * t, rtol=1e-12)
    np.testing.assert_allclose(q[:, 3], np.sin(t / 2), rtol=1e-15)
