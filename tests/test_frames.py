"""Tests for rotode.frames: group laws, dynamics against finite differences, moving frames.

Every dynamics formula is checked against sixth-order central finite differences of the
*static* transforms it describes, for random smooth motions (polynomial translations,
rotations from the exponential of polynomial rotation vectors), batched.
"""

import numpy as np
import pytest
import scipy.linalg
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.integrate import solve_ivp

from rotode import so3
from rotode.frames import (
    DynamicTransform,
    MovingFrameParticle,
    MovingFrameRigidBody,
    Transform,
    cancel_inherited,
    chain_global_to_local,
    chain_local_to_global,
    global_to_local,
    inertial_accelerations,
    inherited_delta,
    local_acceleration,
    local_to_global,
    planar_rotation,
)
from rotode.inertia import validate_inertia

SEED = 6
BATCH = (7,)


# ------------------------------------------------------------------------------------------
# random smooth motions and finite differences
# ------------------------------------------------------------------------------------------

def rotation_of(dim, x):
    """Rotation matrices from rotation coordinates ``x``: angle (2-D), vector (3-D), skew."""
    if dim == 2:
        return planar_rotation(x)
    if dim == 3:
        return so3.exp(x)
    return scipy.linalg.expm(x)


class Motion:
    """A random smooth transform ``t -> (T(t), R(t), S)`` with a batch of independent ones."""

    def __init__(self, rng, dim, shape=BATCH, degree=3):
        self.dim = dim
        n_rot = {2: (), 3: (3,)}.get(dim, (dim, dim))
        self.ct = rng.normal(size=(degree + 1,) + shape + (dim,))
        cr = rng.normal(size=(degree + 1,) + shape + n_rot) * 0.8
        if dim > 3:
            cr = cr - np.swapaxes(cr, -1, -2)
        self.cr = cr
        self.scale = rng.uniform(0.5, 2.0, shape)

    @staticmethod
    def _poly(c, t):
        return sum(ck * t**k for k, ck in enumerate(c))

    def transform(self, t):
        return Transform(self._poly(self.ct, t), rotation_of(self.dim, self._poly(self.cr, t)),
                         self.scale)


def derivatives(f, t, h=2e-3):
    """First and second derivatives of an array-valued ``f`` by 6th-order central stencils."""
    fm3, fm2, fm1, f0, fp1, fp2, fp3 = (f(t + k * h) for k in range(-3, 4))
    d1 = (-fm3 + 9 * fm2 - 45 * fm1 + 45 * fp1 - 9 * fp2 + fp3) / (60 * h)
    d2 = (2 * fm3 - 27 * fm2 + 270 * fm1 - 490 * f0 + 270 * fp1 - 27 * fp2 + 2 * fp3) / (
        180 * h * h)
    return d1, d2


def skew_part(W):
    return 0.5 * (W - np.swapaxes(W, -1, -2))


def dynamics_by_fd(transform_of_t, t):
    """A DynamicTransform whose v, a, omega, alpha are finite differences of ``T(t), R(t)``."""
    A = transform_of_t(t)
    v, a = derivatives(lambda s: np.array(transform_of_t(s).translation), t)
    Rd, Rdd = derivatives(lambda s: np.array(transform_of_t(s).rotation), t)
    RT = np.swapaxes(A.rotation, -1, -2)
    w = Rd @ RT                                       # dR/dt = w R
    alpha = Rdd @ RT + Rd @ np.swapaxes(Rd, -1, -2)   # d/dt (dR/dt R^T)
    return DynamicTransform(A.translation, A.rotation, A.scale, v, a, skew_part(w),
                            skew_part(alpha), skew=True)


def assert_dynamics_close(D, ref, rtol=1e-6):
    """Every component of ``D`` equals ``ref`` to ``rtol`` relative to its largest entry."""
    pairs = {"translation": (D.translation, ref.translation),
             "rotation": (D.rotation, ref.rotation), "scale": (D.scale, ref.scale),
             "velocity": (D.velocity, ref.velocity),
             "acceleration": (D.acceleration, ref.acceleration),
             "angular_velocity": (D.angular_velocity_matrix, ref.angular_velocity_matrix),
             "angular_acceleration": (D.angular_acceleration_matrix,
                                      ref.angular_acceleration_matrix)}
    for name, (x, y) in pairs.items():
        x, y = np.broadcast_arrays(x, y)
        err = np.abs(x - y).max()
        assert err <= rtol * max(1.0, np.abs(y).max()), f"{name}: error {err:.3g}"


DIMS = [2, 3, 4]


# ------------------------------------------------------------------------------------------
# Transform: group laws, representations, batching
# ------------------------------------------------------------------------------------------

def random_transform(rng, dim, shape=BATCH):
    return Motion(rng, dim, shape, degree=0).transform(0.0)


def assert_transform_close(A, B, atol=1e-13):
    np.testing.assert_allclose(A.translation, B.translation, rtol=0, atol=atol)
    np.testing.assert_allclose(A.rotation, B.rotation, rtol=0, atol=atol)
    np.testing.assert_allclose(A.scale, B.scale, rtol=0, atol=atol)


@pytest.mark.parametrize("dim", DIMS)
def test_group_laws(dim):
    rng = np.random.default_rng(SEED)
    A, B, C = (random_transform(rng, dim) for _ in range(3))
    assert_transform_close((A @ B) @ C, A @ (B @ C), atol=1e-12)
    eye = Transform.identity(dim)
    assert_transform_close(A @ eye, A, atol=0)
    assert_transform_close(eye @ A, A, atol=0)
    assert_transform_close(A @ A.inverse(), Transform.identity(dim, BATCH))
    assert_transform_close(A.inverse() @ A, Transform.identity(dim, BATCH))
    assert_transform_close(A.inverse().inverse(), A)
    assert_transform_close((A @ B).inverse(), B.inverse() @ A.inverse())
    # the augmented matrix is a group homomorphism and agrees with the action
    np.testing.assert_allclose((A @ B).as_matrix(), A.as_matrix() @ B.as_matrix(), atol=1e-13)
    np.testing.assert_allclose(A.inverse().as_matrix(), np.linalg.inv(A.as_matrix()),
                               atol=1e-12)
    x = rng.normal(size=BATCH + (dim,))
    xh = np.concatenate([x, np.ones(BATCH + (1,))], -1)
    np.testing.assert_allclose(A.apply(x), (A.as_matrix() @ xh[..., None])[..., :dim, 0],
                               atol=1e-13)
    np.testing.assert_allclose((A @ B)(x), A(B(x)), atol=1e-12)
    np.testing.assert_allclose(A.inverse()(A(x)), x, atol=1e-13)
    np.testing.assert_allclose(A.apply_vector(x), A(x) - A(np.zeros(dim)), atol=1e-13)
    np.testing.assert_allclose(A.linear, A.rotation * A.scale[:, None, None], atol=0)


rotvecs = st.lists(st.floats(-6.0, 6.0), min_size=3, max_size=3)
vectors = st.lists(st.floats(-1e3, 1e3), min_size=3, max_size=3)
scales = st.floats(1e-2, 1e2)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(vectors, rotvecs, scales), min_size=3, max_size=3))
def test_group_laws_property_3d(parts):
    A, B, C = (Transform(t, so3.exp(np.array(r)), s) for t, r, s in parts)
    size = max(1.0, *(np.abs(p.translation).max() for p in (A, B, C)))
    big = size * max(max(float(p.scale), 1 / float(p.scale)) for p in (A, B, C)) ** 3
    assert_transform_close((A @ B) @ C, A @ (B @ C), atol=1e-12 * big)
    assert_transform_close(A @ A.inverse(), Transform.identity(3), atol=1e-12 * big)


def test_quaternion_rotation_and_property():
    rng = np.random.default_rng(SEED)
    q = rng.normal(size=(5, 4))
    A = Transform(np.zeros(3), 2.5 * q)
    qn = q / np.linalg.norm(q, axis=1, keepdims=True) * np.sign(q[:, :1])
    np.testing.assert_allclose(A.quaternion, qn, atol=1e-14)
    from rotode import quaternion as rq
    np.testing.assert_allclose(A.rotation, rq.to_matrix(q), atol=0)


def test_batch_broadcasting_and_indexing():
    rng = np.random.default_rng(SEED)
    A = Transform(rng.normal(size=(4, 1, 3)), so3.exp(rng.normal(size=(5, 3))), 2.0)
    assert A.shape == (4, 5) and len(A) == 4
    B = Transform(rng.normal(size=3))
    assert (A @ B).shape == (4, 5) and (B @ A).shape == (4, 5)
    AB = A @ B
    sub = A[2, 3] @ B
    assert_transform_close(AB[2, 3], sub, atol=0)
    x = rng.normal(size=(5, 3))
    assert A(x).shape == (4, 5, 3)
    np.testing.assert_allclose(A(x)[1, 2], A[1, 2](x[2]), atol=0)
    assert Transform.identity(2, 3).shape == (3,)
    assert Transform.identity(2, (2, 3)).shape == (2, 3)
    assert repr(Transform.identity(2)) == "Transform(dim=2, shape=())"


# ------------------------------------------------------------------------------------------
# DynamicTransform against finite differences
# ------------------------------------------------------------------------------------------

T0 = 0.37


@pytest.mark.parametrize("dim", DIMS)
def test_composition_dynamics_match_finite_differences(dim):
    rng = np.random.default_rng(SEED + dim)
    m2, m1 = Motion(rng, dim), Motion(rng, dim)
    D3 = dynamics_by_fd(m2.transform, T0) @ dynamics_by_fd(m1.transform, T0)
    ref = dynamics_by_fd(lambda t: m2.transform(t) @ m1.transform(t), T0)
    assert_dynamics_close(D3, ref)
    # the same with a world-parented child that is static in its parent
    static = dynamics_by_fd(m2.transform, T0) @ m1.transform(T0)
    ref = dynamics_by_fd(lambda t: m2.transform(t) @ m1.transform(T0), T0)
    assert_dynamics_close(static, ref)
    assert_dynamics_close(m1.transform(T0) @ dynamics_by_fd(m2.transform, T0),
                          dynamics_by_fd(lambda t: m1.transform(T0) @ m2.transform(t), T0))


@pytest.mark.parametrize("dim", DIMS)
def test_inverse_dynamics_match_finite_differences(dim):
    rng = np.random.default_rng(SEED + 10 + dim)
    m = Motion(rng, dim)
    D = dynamics_by_fd(m.transform, T0)
    assert_dynamics_close(D.inverse(), dynamics_by_fd(lambda t: m.transform(t).inverse(), T0))
    # group laws with dynamics, to round-off
    eye = DynamicTransform.identity(dim)
    assert_dynamics_close(D @ D.inverse(), DynamicTransform.identity(dim, BATCH), rtol=1e-12)
    assert_dynamics_close(D.inverse() @ D, DynamicTransform.identity(dim, BATCH), rtol=1e-12)
    assert_dynamics_close(D @ eye, D, rtol=0)
    assert_dynamics_close(eye @ D, D, rtol=0)
    assert_dynamics_close(D.inverse().inverse(), D, rtol=1e-12)


@pytest.mark.parametrize("dim", DIMS)
def test_dynamic_associativity(dim):
    rng = np.random.default_rng(SEED + 20 + dim)
    A, B, C = (dynamics_by_fd(Motion(rng, dim).transform, T0) for _ in range(3))
    assert_dynamics_close((A @ B) @ C, A @ (B @ C), rtol=1e-12)


@pytest.mark.parametrize("dim", [2, 3])
def test_chain_of_depth_four(dim):
    rng = np.random.default_rng(SEED + 30 + dim)
    motions = [Motion(rng, dim) for _ in range(4)]
    locals_ = [dynamics_by_fd(m.transform, T0) for m in motions]
    globals_ = chain_local_to_global(locals_)
    for k in range(4):
        def prefix(t, k=k):
            out = motions[0].transform(t)
            for m in motions[1:k + 1]:
                out = out @ m.transform(t)
            return out
        assert_dynamics_close(globals_[k], dynamics_by_fd(prefix, T0))
    back = chain_global_to_local(globals_)
    for k in range(4):
        assert_dynamics_close(back[k], locals_[k], rtol=1e-10)
        if k:
            # [DTH]'s direct formula equals the inverse composed with the child
            assert_dynamics_close(global_to_local(globals_[k - 1], globals_[k]),
                                  globals_[k - 1].inverse() @ globals_[k], rtol=1e-12)
            assert_dynamics_close(local_to_global(globals_[k - 1], locals_[k]), globals_[k],
                                  rtol=0)


def test_natural_angular_forms():
    D2 = DynamicTransform([0.0, 0.0], angular_velocity=1.5, angular_acceleration=[-2.0, 3.0])
    assert D2.shape == (2,)
    np.testing.assert_array_equal(D2.angular_velocity, [1.5, 1.5])
    np.testing.assert_array_equal(D2.angular_acceleration_matrix[1], [[0, -3.0], [3.0, 0]])
    w = np.array([0.1, -0.2, 0.3])
    D3 = DynamicTransform(np.zeros(3), angular_velocity=w)
    np.testing.assert_array_equal(D3.angular_velocity_matrix, so3.hat(w))
    np.testing.assert_array_equal(D3.angular_velocity, w)
    same = DynamicTransform(np.zeros(3), angular_velocity=so3.hat(w), skew=True)
    np.testing.assert_array_equal(same.angular_velocity, w)
    # a batch of three 3-vectors is not mistaken for one skew matrix
    assert DynamicTransform(np.zeros(3), angular_velocity=np.eye(3)).shape == (3,)
    D4 = DynamicTransform(np.zeros(4), angular_velocity=np.zeros((4, 4)))
    assert D4.angular_velocity.shape == (4, 4)
    assert D3[...].shape == () and DynamicTransform.identity(3, 5)[1:3].shape == (2,)


# ------------------------------------------------------------------------------------------
# deltas (impulses) and the inherited correction
# ------------------------------------------------------------------------------------------

def random_delta(rng, dim):
    ang = {2: BATCH, 3: BATCH + (3,)}[dim]
    return (rng.normal(size=BATCH + (dim,)), rng.normal(size=BATCH + (dim,)),
            rng.normal(size=ang), rng.normal(size=ang))


@pytest.mark.parametrize("dim", [2, 3])
def test_local_and_global_deltas(dim):
    rng = np.random.default_rng(SEED + 40 + dim)
    P, L = (dynamics_by_fd(Motion(rng, dim).transform, T0) for _ in range(2))
    d = random_delta(rng, dim)
    G_before, G_after = P @ L, P @ L.add_delta(*d)
    dg = P.delta_local_to_global(*d)
    assert_dynamics_close(G_before.add_delta(*dg), G_after, rtol=1e-12)
    back = P.delta_global_to_local(*dg)
    for x, y in zip(back, d, strict=True):
        np.testing.assert_allclose(x, y, atol=1e-12)
    # inherited from a change of the parent
    inh = inherited_delta(P, L, *d)
    assert_dynamics_close(G_before.add_delta(*inh), P.add_delta(*d) @ L, rtol=1e-12)


@pytest.mark.parametrize("dim", [2, 3])
def test_cancel_inherited(dim):
    rng = np.random.default_rng(SEED + 50 + dim)
    P, L, K = (dynamics_by_fd(Motion(rng, dim).transform, T0) for _ in range(3))
    d = random_delta(rng, dim)
    fix = cancel_inherited(P, L, *d)
    P_new, L_new = P.add_delta(*d), L.add_delta(*fix)
    assert_dynamics_close(P_new @ L_new, P @ L, rtol=1e-12)
    # grandchildren follow without correction
    assert_dynamics_close(P_new @ L_new @ K, P @ L @ K, rtol=1e-12)
    # [DTH]'s closed form for a change of the parent's velocity alone
    dv = rng.normal(size=BATCH + (dim,))
    fix = cancel_inherited(P, L, velocity=dv)
    Ji = np.linalg.inv(P.linear)
    np.testing.assert_allclose(fix.velocity, -np.einsum("...ij,...j->...i", Ji, dv), atol=1e-12)
    np.testing.assert_allclose(
        fix.acceleration,
        2 * np.einsum("...ij,...jk,...k->...i", Ji, P.angular_velocity_matrix, dv), atol=1e-12)
    np.testing.assert_allclose(fix.angular_velocity, 0.0, atol=1e-14)
    np.testing.assert_allclose(fix.angular_acceleration, 0.0, atol=1e-14)


def test_linear_impulse_changes_local_acceleration():
    # [DTH]: dv1 = J2^-1 dp / m and da1 = -2 J2^-1 w2 dp / m
    rng = np.random.default_rng(SEED)
    P = dynamics_by_fd(Motion(rng, 3).transform, T0)
    dp, m = rng.normal(size=3), 2.0
    d = P.delta_global_to_local(velocity=dp / m)
    Ji = np.linalg.inv(P.linear)
    np.testing.assert_allclose(d.velocity, Ji @ dp / m, atol=1e-12)
    np.testing.assert_allclose(d.acceleration,
                               -2 / m * Ji @ P.angular_velocity_matrix @ dp, atol=1e-12)


# ------------------------------------------------------------------------------------------
# inertial accelerations
# ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("dim", [2, 3])
def test_inertial_accelerations_match_finite_differences(dim):
    rng = np.random.default_rng(SEED + 60 + dim)
    frame = Motion(rng, dim)
    cp = rng.normal(size=(4,) + BATCH + (dim,))  # world trajectory p(t), a cubic

    def p(t):
        return sum(c * t**k for k, c in enumerate(cp))

    def local(t):
        return frame.transform(t).inverse()(p(t))

    x = local(T0)
    v, a = derivatives(local, T0)
    P = dynamics_by_fd(frame.transform, T0)
    force_world = 2.0 * (2 * cp[2] + 6 * cp[3] * T0)   # m p'' with m = 2
    got = local_acceleration(P, x, v, force_world, 2.0, force_frame="world")
    np.testing.assert_allclose(got, a, rtol=0, atol=1e-6 * np.abs(a).max())
    # the four named terms in the familiar 3-D / 2-D forms
    terms = inertial_accelerations(P, x, v)
    R = P.rotation
    w = np.swapaxes(R, -1, -2) @ P.angular_velocity_matrix @ R
    al = np.swapaxes(R, -1, -2) @ P.angular_acceleration_matrix @ R
    if dim == 3:
        wv, alv = so3.vee(w), so3.vee(al)
        np.testing.assert_allclose(terms.centrifugal, -np.cross(wv, np.cross(wv, x)), atol=1e-12)
        np.testing.assert_allclose(terms.coriolis, -2 * np.cross(wv, v), atol=1e-12)
        np.testing.assert_allclose(terms.euler, -np.cross(alv, x), atol=1e-12)
    else:
        def perp(u):
            return np.stack([-u[..., 1], u[..., 0]], -1)
        ws, als = w[..., 1, 0][..., None], al[..., 1, 0][..., None]
        np.testing.assert_allclose(terms.centrifugal, ws**2 * x, atol=1e-12)
        np.testing.assert_allclose(terms.coriolis, -2 * ws * perp(v), atol=1e-12)
        np.testing.assert_allclose(terms.euler, -als * perp(x), atol=1e-12)
    frame_acc = -np.einsum("...ji,...j->...i", R, P.acceleration) / P.scale[..., None]
    np.testing.assert_allclose(terms.frame, frame_acc, atol=1e-12)


# ------------------------------------------------------------------------------------------
# moving-frame right-hand sides
# ------------------------------------------------------------------------------------------

TIGHT = {"method": "DOP853", "rtol": 1e-13, "atol": 1e-13}


def uniform_spin(w, R0, T=None, scale=1.0):
    """A frame spinning at constant ``w`` (world basis) about its fixed origin ``T``."""
    T = np.zeros(3) if T is None else T
    return lambda t: DynamicTransform(T, so3.exp(np.asarray(w) * t) @ R0, scale,
                                      angular_velocity=w)


def test_free_particle_in_uniformly_rotating_frame():
    rng = np.random.default_rng(SEED)
    w = np.array([0.3, -0.4, 1.2])
    R0 = so3.exp(rng.normal(size=3))
    T2, S = np.array([0.5, -1.0, 2.0]), 1.7
    frame = uniform_spin(w, R0, T2, S)
    p0, u = rng.normal(size=3), rng.normal(size=3)   # world straight line p0 + u t
    rhs = MovingFrameParticle(frame(0.0))               # constant snapshot suffices here
    y0 = rhs.local_state(frame(0.0), p0, u)
    ts = np.linspace(0, 8, 17)
    sol = solve_ivp(rhs, (0, 8), y0, t_eval=ts, **TIGHT)
    exact = np.stack([frame(t).inverse()(p0 + u * t) for t in ts], -1)
    np.testing.assert_allclose(sol.y[:3], exact, rtol=0, atol=1e-9)
    # back to the world
    for k in (0, 8, 16):
        pw, vw = rhs.world_state(frame(ts[k]), sol.y[:, k])
        np.testing.assert_allclose(pw, p0 + u * ts[k], atol=1e-9)
        np.testing.assert_allclose(vw, u, atol=1e-9)


def test_particle_on_orbiting_spinning_planet_under_world_gravity():
    # planet on a circular orbit (radius 3, rate 0.5) spinning at a tilted constant rate
    Om, rad = 0.5, 3.0
    w = np.array([0.0, 0.6, 0.8]) * 2.0
    R0 = so3.exp([0.2, 0.1, -0.3])

    def planet(t):
        c, s = np.cos(Om * t), np.sin(Om * t)
        return DynamicTransform(rad * np.array([c, s, 0]), so3.exp(w * t) @ R0,
                                velocity=rad * Om * np.array([-s, c, 0]),
                                acceleration=-rad * Om**2 * np.array([c, s, 0]),
                                angular_velocity=w)

    g = np.array([0.0, 0.0, -9.81])
    m = 3.0
    rhs = MovingFrameParticle(planet, force=lambda t, x, v: m * g + 0 * x, mass=m,
                              force_frame="world")
    p0, u = np.array([3.5, 0.2, 0.1]), np.array([0.1, 1.0, 2.0])
    ts = np.linspace(0, 4, 9)
    sol = solve_ivp(rhs, (0, 4), rhs.local_state(planet(0.0), p0, u), t_eval=ts, **TIGHT)
    exact = np.stack([planet(t).inverse()(p0 + u * t + 0.5 * g * t * t) for t in ts], -1)
    np.testing.assert_allclose(sol.y[:3], exact, rtol=0, atol=1e-9)


@pytest.mark.parametrize("Om", [0.05, -0.3])
def test_foucault_precession_rate_2d(Om):
    # an isotropic oscillator seen from a frame rotating at Om: the swing line, fixed in the
    # world, turns at -Om in the frame (the pole case of Foucault's pendulum)
    w0, amp = 2.0, 0.7
    frame = DynamicTransform([0.0, 0.0], angular_velocity=Om)
    rhs = MovingFrameParticle(frame, force=lambda t, x, v: -w0**2 * x)
    y0 = rhs.local_state(frame, [amp, 0.0], [0.0, 0.0])
    t_turn = np.arange(1, 9) * np.pi / w0               # turning points of the swing
    sol = solve_ivp(rhs, (0, t_turn[-1]), y0, t_eval=t_turn, **TIGHT)
    x, y = sol.y[0], sol.y[1]
    np.testing.assert_allclose(np.hypot(x, y), amp, atol=1e-9)
    azimuth = np.arctan2(y, x)
    expected = np.angle(np.exp(1j * (-Om * t_turn + np.pi * np.arange(1, 9))))
    np.testing.assert_allclose(np.angle(np.exp(1j * (azimuth - expected))), 0.0, atol=1e-9)
    rate = np.polyfit(t_turn[1::2], np.unwrap(azimuth[1::2]), 1)[0]
    assert rate == pytest.approx(-Om, abs=1e-9)


def test_foucault_swing_direction_3d():
    # the same in 3-D with a tilted spin axis: a swing perpendicular to the axis turns about
    # it at -|w| (exact for an isotropic restoring force centred on the axis)
    w = np.array([0.1, -0.2, 0.25])
    R0 = so3.exp([0.4, 0.0, 0.3])
    frame = uniform_spin(w, R0)
    w0 = 3.0
    rhs = MovingFrameParticle(frame, force=lambda t, x, v: -w0**2 * x)
    e = np.cross(w, [1.0, 0, 0])
    e /= np.linalg.norm(e)
    ts = np.linspace(0, 6, 13)
    sol = solve_ivp(rhs, (0, 6), rhs.local_state(frame(0.0), e, np.zeros(3)), t_eval=ts, **TIGHT)
    exact = np.stack([frame(t).inverse()(e * np.cos(w0 * t)) for t in ts], -1)
    np.testing.assert_allclose(sol.y[:3], exact, rtol=0, atol=1e-9)


def test_rhs_shapes_strides_and_vectorized():
    rng = np.random.default_rng(SEED)
    frame = DynamicTransform(rng.normal(size=3), so3.exp(rng.normal(size=3)), 1.3,
                             rng.normal(size=3), rng.normal(size=3), rng.normal(size=3),
                             rng.normal(size=3))
    rhs = MovingFrameParticle(frame, force=lambda t, x, v: -x - 0.1 * v, mass=2.0)
    Y = rng.normal(size=(6, 5))
    out = rhs(0.0, Y)
    assert out.shape == (6, 5)
    for k in range(5):
        np.testing.assert_array_equal(out[:, k], rhs(0.0, Y[:, k]))  # strided column
    big = rng.normal(size=12)
    np.testing.assert_array_equal(rhs(0.0, big[::2]), rhs(0.0, big[::2].copy()))
    y0 = rng.normal(size=6)
    a = solve_ivp(rhs, (0, 1), y0, method="Radau", vectorized=True, rtol=1e-10, atol=1e-12)
    b = solve_ivp(rhs, (0, 1), y0, method="Radau", rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(a.y[:, -1], b.y[:, -1], atol=1e-8)


def test_rigid_body_in_rotating_frame_matches_closed_form():
    # torque-free symmetric top (I = diag(a, a, c)): R3(t) = exp(t [L]/a) R3(0) exp(-t mu e_z)
    # with mu = L_bz (1/a - 1/c); seen from a uniformly spinning, tilted frame
    a, c = 2.0, 3.0
    inertia = np.diag([a, a, c])
    R30 = so3.exp([0.3, -0.5, 0.9])
    wb0 = np.array([0.4, -0.7, 1.1])
    L = R30 @ (inertia @ wb0)
    mu = (inertia @ wb0)[2] * (1 / a - 1 / c)

    def R3(t):
        return so3.exp(L / a * t) @ R30 @ so3.exp(np.array([0, 0, -mu * t]))

    frame = uniform_spin(np.array([0.2, 0.3, -0.5]), so3.exp([1.0, 0.2, 0.0]))
    body = MovingFrameRigidBody(frame, inertia, mass=1.5)
    from scipy.spatial.transform import Rotation
    q0 = Rotation.from_matrix(frame(0.0).rotation.T @ R30).as_quat(scalar_first=True)
    p0, u = np.array([1.0, 2.0, 0.5]), np.array([-0.3, 0.2, 0.1])
    y0 = np.concatenate([MovingFrameParticle.local_state(frame(0.0), p0, u), q0, wb0])
    ts = np.linspace(0, 5, 11)
    sol = solve_ivp(body, (0, 5), y0, t_eval=ts, **TIGHT)
    from rotode import quaternion as rq
    for k, t in enumerate(ts):
        R1 = rq.to_matrix(sol.y[6:10, k])
        np.testing.assert_allclose(R1, frame(t).rotation.T @ R3(t), atol=1e-9)
        np.testing.assert_allclose(sol.y[10:, k], np.linalg.solve(inertia, R3(t).T @ L),
                                   atol=1e-9)
        np.testing.assert_allclose(sol.y[:3, k], frame(t).inverse()(p0 + u * t), atol=1e-9)
    out = body(0.0, np.stack([y0, y0], -1))
    np.testing.assert_array_equal(out[:, 1], body(0.0, y0))
    validate_inertia(body.inertia)


# ------------------------------------------------------------------------------------------
# error paths
# ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("call, err, match", [
    (lambda: Transform([0, 0], [[1, 0], [0.1, 1]]), ValueError, "must hold rotation matrices"),
    (lambda: Transform([0, 0], [[1, 0], [0, -1]]), ValueError, "det \\+1"),
    (lambda: Transform(np.zeros(3), 1.01 * np.eye(3)), ValueError, "orthonormal"),
    (lambda: Transform([0, 0], scale=0.0), ValueError, "`scale` must be > 0"),
    (lambda: Transform([0, 0], scale=-2.0), ValueError, "`scale` must be > 0"),
    (lambda: Transform([0, 0], np.eye(3)), ValueError,
     r"`rotation` must have shape \(\.\.\., 2, 2\)"),
    (lambda: Transform([0, 0], [1.0, 0, 0, 0]), ValueError, r"`rotation` must have shape"),
    (lambda: Transform(np.zeros(3), np.zeros(4)), ValueError, "nonzero quaternions"),
    (lambda: Transform(1.0), ValueError, r"`translation` must have shape \(\.\.\., n\)"),
    (lambda: Transform([0, np.nan]), ValueError, "finite"),
    (lambda: Transform(np.zeros((2, 3)), scale=[1.0, 2.0, 3.0]), ValueError,
     "batch shapes do not broadcast"),
    (lambda: Transform([0, 0]) @ Transform([0, 0, 0]), ValueError, "dimension 2 and 3"),
    (lambda: Transform([0, 0]).compose("x"), TypeError, "Transform or DynamicTransform"),
    (lambda: Transform([0, 0]).apply([1, 2, 3]), ValueError, r"`points` must have shape"),
    (lambda: Transform(np.zeros((3, 2))).apply(np.zeros((4, 2))), ValueError, "broadcast"),
    (lambda: Transform([0, 0]).quaternion, ValueError, "3-D rotations"),
    (lambda: Transform.identity(0), ValueError, "`dim` must be >= 1"),
    (lambda: Transform([0, 0])[0], IndexError, "too many indices"),
    (lambda: len(Transform([0, 0])), TypeError, "no len"),
    (lambda: DynamicTransform([0, 0, 0], angular_velocity=[1, 2]), ValueError,
     r"`angular_velocity` must have shape \(\.\.\., 3\)"),
    (lambda: DynamicTransform([0, 0], velocity=[1, 2, 3]), ValueError, "`velocity` must have"),
    (lambda: DynamicTransform(np.zeros(3), angular_acceleration=np.eye(3), skew=True),
     ValueError, "skew-symmetric"),
    (lambda: DynamicTransform(np.zeros(2)) @ DynamicTransform(np.zeros(3)), ValueError,
     "dimension 2 and 3"),
    (lambda: global_to_local(DynamicTransform(np.zeros(2)), DynamicTransform(np.zeros(3))),
     ValueError, "dimension 2 and 3"),
    (lambda: global_to_local(Transform(np.zeros(2)), DynamicTransform(np.zeros(2))), TypeError,
     "`parent` must be a DynamicTransform"),
    (lambda: DynamicTransform.from_transform([0, 0]), TypeError, "must be a Transform"),
    (lambda: inertial_accelerations(DynamicTransform(np.zeros(3)), [0, 0], [0, 0]), ValueError,
     r"`position` must have shape \(\.\.\., 3\)"),
    (lambda: local_acceleration(DynamicTransform(np.zeros(2)), [0, 0], [0, 0], [1, 0],
                                mass=0.0), ValueError, "`mass` must be finite and > 0"),
    (lambda: local_acceleration(DynamicTransform(np.zeros(2)), [0, 0], [0, 0], [1, 0],
                                force_frame="body"), ValueError, "`force_frame`"),
    (lambda: MovingFrameParticle(DynamicTransform(np.zeros(2)), mass=-1.0), ValueError,
     "`mass` must be finite and > 0"),
    (lambda: MovingFrameParticle(DynamicTransform(np.zeros((2, 2)))), ValueError,
     "single DynamicTransform"),
    (lambda: MovingFrameParticle(3.0), TypeError, "`parent` must be a DynamicTransform"),
    (lambda: MovingFrameParticle(lambda t: 3.0)(0.0, np.zeros(4)), TypeError,
     "callable t -> DynamicTransform, got float"),
    (lambda: MovingFrameParticle(DynamicTransform(np.zeros(2)), force=1.0), TypeError,
     "`force` must be callable"),
    (lambda: MovingFrameParticle(DynamicTransform(np.zeros(2)))(0.0, np.zeros(6)), ValueError,
     r"`y` must have shape \(4,\) or \(4, k\)"),
    (lambda: MovingFrameRigidBody(DynamicTransform(np.zeros(3)), np.diag([1.0, 1.0, 3.0])),
     ValueError, "triangle inequality"),
    (lambda: MovingFrameRigidBody(DynamicTransform(np.zeros(2)), np.eye(3)), ValueError,
     "must be 3-D"),
    (lambda: MovingFrameRigidBody(DynamicTransform(np.zeros(3)), np.eye(3), mass=0), ValueError,
     "`mass` must be finite and > 0"),
])
def test_error_paths(call, err, match):
    with pytest.raises(err, match=match):
        call()
