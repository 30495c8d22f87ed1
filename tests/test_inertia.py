"""Tests for rotode.inertia: closed forms, density integrals, compound bodies, principal axes.

Independent references: Gauss quadrature of the density (exact for the polynomial integrands
here, so compared to round-off) and Monte-Carlo sampling of the density (compared within five
standard errors of the sample mean).
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.polynomial.legendre import leggauss
from scipy.spatial.transform import Rotation

from rotode import inertia as ri
from rotode import quaternion as rq
from rotode import so3

RNG_SEED = 20260206


def tensor_of_cloud(points, weights):
    """Mass, centre of mass and inertia about it of weighted points (the density integral)."""
    mass = weights.sum()
    c = weights @ points / mass
    r = points - c
    second = np.einsum("k,ki,kj->ij", weights, r, r)
    return mass, c, np.trace(second) * np.eye(3) - second


def gauss(a, b, n):
    x, w = leggauss(n)
    return 0.5 * (b - a) * x + 0.5 * (b + a), 0.5 * (b - a) * w


def revolution_cloud(z_pieces, n=24, n_phi=16):
    """Quadrature points of a solid of revolution about z.

    ``z_pieces`` is a list of ``(z0, z1, rho_in(z), rho_out(z))``; on each piece the integrands
    are polynomials in z after the radial integral, so Gauss-Legendre is exact.
    """
    pts, wts = [], []
    phi = np.arange(n_phi) * 2 * np.pi / n_phi  # trapezoid: exact for low trig degree
    for z0, z1, rin, rout in z_pieces:
        z, wz = gauss(z0, z1, n)
        for zk, wk in zip(z, wz, strict=True):
            rho, wr = gauss(rin(zk), rout(zk), n)
            R, P = np.meshgrid(rho, phi, indexing="ij")
            W = (wk * wr * rho)[:, None] * np.full(n_phi, 2 * np.pi / n_phi)
            pts.append(np.stack([R * np.cos(P), R * np.sin(P), np.full_like(R, zk)], -1)
                       .reshape(-1, 3))
            wts.append(W.reshape(-1))
    return np.concatenate(pts), np.concatenate(wts)


def box_cloud(a, b, c, n=6):
    (x, wx), (y, wy), (z, wz) = gauss(-a / 2, a / 2, n), gauss(-b / 2, b / 2, n), \
        gauss(-c / 2, c / 2, n)
    X, Y, Z = np.meshgrid(x, y, z, indexing="ij")
    W = wx[:, None, None] * wy[None, :, None] * wz[None, None, :]
    return np.stack([X, Y, Z], -1).reshape(-1, 3), W.reshape(-1)


def ball_cloud(radius, inner=0.0):
    if inner == 0.0:
        def rout(z):
            return np.sqrt(max(radius**2 - z * z, 0.0))
        return revolution_cloud([(-radius, radius, lambda z: 0.0, rout)])

    def rin(z):
        return np.sqrt(max(inner**2 - z * z, 0.0))

    def rout(z):
        return np.sqrt(max(radius**2 - z * z, 0.0))

    return revolution_cloud([(-radius, -inner, lambda z: 0.0, rout), (-inner, inner, rin, rout),
                             (inner, radius, lambda z: 0.0, rout)])


def sphere_surface_cloud(radius, n=12, n_phi=16):
    u, wu = gauss(-1.0, 1.0, n)  # u = cos(theta): uniform in u is uniform in area
    phi = np.arange(n_phi) * 2 * np.pi / n_phi
    U, P = np.meshgrid(u, phi, indexing="ij")
    S = np.sqrt(1 - U * U)
    pts = radius * np.stack([S * np.cos(P), S * np.sin(P), U], -1).reshape(-1, 3)
    return pts, (wu[:, None] * np.ones(n_phi)).reshape(-1)


def tube_surface_cloud(radius, height, n=8, n_phi=16):
    z, wz = gauss(-height / 2, height / 2, n)
    phi = np.arange(n_phi) * 2 * np.pi / n_phi
    Z, P = np.meshgrid(z, phi, indexing="ij")
    pts = np.stack([radius * np.cos(P), radius * np.sin(P), Z], -1).reshape(-1, 3)
    return pts, (wz[:, None] * np.ones(n_phi)).reshape(-1)


def rod_cloud(length, n=8):
    z, wz = gauss(-length / 2, length / 2, n)
    return np.stack([0 * z, 0 * z, z], -1), wz


# name -> (closed form tensor, quadrature cloud with the same shape, COM at the origin)
M = 2.5
SOLIDS = {
    "box": (lambda: ri.box(M, [0.7, 1.3, 2.1]), lambda: box_cloud(0.7, 1.3, 2.1)),
    "solid_cylinder": (lambda: ri.solid_cylinder(M, 0.4, 1.7),
                       lambda: revolution_cloud([(-0.85, 0.85, lambda z: 0.0,
                                                  lambda z: 0.4)])),
    "hollow_cylinder": (lambda: ri.hollow_cylinder(M, 0.5, 1.1, inner_radius=0.3),
                        lambda: revolution_cloud([(-0.55, 0.55, lambda z: 0.3,
                                                   lambda z: 0.5)])),
    "thin_tube": (lambda: ri.hollow_cylinder(M, 0.5, 1.1), lambda: tube_surface_cloud(0.5, 1.1)),
    "solid_sphere": (lambda: ri.solid_sphere(M, 0.9), lambda: ball_cloud(0.9)),
    "thick_shell": (lambda: ri.hollow_sphere(M, 0.9, inner_radius=0.6),
                    lambda: ball_cloud(0.9, 0.6)),
    "thin_shell": (lambda: ri.hollow_sphere(M, 0.9), lambda: sphere_surface_cloud(0.9)),
    "thin_rod": (lambda: ri.thin_rod(M, 1.9), lambda: rod_cloud(1.9)),
    "ellipsoid": (lambda: ri.ellipsoid(M, [0.5, 0.8, 1.3]),
                  lambda: (lambda p, w: (p * [0.5, 0.8, 1.3], w))(*ball_cloud(1.0))),
    # cone: base at z = -h/4, apex at z = 3h/4, radius shrinking linearly to the apex
    "cone": (lambda: ri.cone(M, 0.6, 1.6),
             lambda: revolution_cloud([(-0.4, 1.2, lambda z: 0.0,
                                        lambda z: 0.6 * (1.2 - z) / 1.6)])),
}


def test_closed_forms_by_hand():
    # values worked out by hand from the formulas in the docstrings
    np.testing.assert_allclose(ri.box(12.0, [1, 2, 3]), np.diag([13.0, 10.0, 5.0]))
    np.testing.assert_allclose(ri.solid_cylinder(12.0, 1.0, 2.0), np.diag([7.0, 7.0, 6.0]))
    np.testing.assert_allclose(ri.hollow_cylinder(12.0, 2.0, 2.0, 1.0),
                               np.diag([19.0, 19.0, 30.0]))
    np.testing.assert_allclose(ri.hollow_cylinder(12.0, 1.0, 2.0), np.diag([10, 10, 12.0]))
    np.testing.assert_allclose(ri.solid_sphere(5.0, 2.0), 8.0 * np.eye(3))
    np.testing.assert_allclose(ri.hollow_sphere(3.0, 2.0), 8.0 * np.eye(3))
    np.testing.assert_allclose(ri.hollow_sphere(5.0, 2.0, 0.0), 8.0 * np.eye(3))
    np.testing.assert_allclose(ri.hollow_sphere(5.0, 2.0, 1.0),
                               0.4 * 5 * (32 - 1) / (8 - 1) * np.eye(3))
    np.testing.assert_allclose(ri.thin_rod(12.0, 2.0), np.diag([4.0, 4.0, 0.0]))
    np.testing.assert_allclose(ri.ellipsoid(5.0, [1, 2, 3]), np.diag([13.0, 10.0, 5.0]))
    np.testing.assert_allclose(ri.cone(80.0, 1.0, 2.0), np.diag([24.0, 24.0, 24.0]))


def test_thick_shell_tends_to_thin_shell():
    thin = ri.hollow_sphere(1.0, 1.0)
    for gap in (1e-3, 1e-8, 1e-14):
        near = ri.hollow_sphere(1.0, 1.0, inner_radius=1 - gap)
        np.testing.assert_allclose(near, thin, rtol=2 * gap, atol=0)


@pytest.mark.parametrize("name", sorted(SOLIDS))
def test_solid_matches_quadrature_of_density(name):
    closed, cloud = SOLIDS[name]
    pts, w = cloud()
    mass, c, tens = tensor_of_cloud(pts, w * (M / w.sum()))
    np.testing.assert_allclose(c, 0.0, atol=1e-13)  # the centre of mass is the origin
    np.testing.assert_allclose(tens, closed(), rtol=0, atol=1e-13 * np.abs(closed()).max())


def inside(name, p):
    x, y, z = p.T
    rho2 = x * x + y * y
    return {
        "box": np.all(np.abs(p) <= [0.35, 0.65, 1.05], axis=1),
        "solid_cylinder": (rho2 <= 0.16) & (np.abs(z) <= 0.85),
        "hollow_cylinder": (rho2 <= 0.25) & (rho2 >= 0.09) & (np.abs(z) <= 0.55),
        "solid_sphere": rho2 + z * z <= 0.81,
        "thick_shell": (rho2 + z * z <= 0.81) & (rho2 + z * z >= 0.36),
        "ellipsoid": (x / 0.5) ** 2 + (y / 0.8) ** 2 + (z / 1.3) ** 2 <= 1,
        "cone": (z >= -0.4) & (z <= 1.2) & (np.sqrt(rho2) <= 0.6 * (1.2 - z) / 1.6),
    }[name]


# bounding boxes for rejection sampling (lower and upper corner)
BOUNDS = {
    "box": ([-0.35, -0.65, -1.05], [0.35, 0.65, 1.05]),
    "solid_cylinder": ([-0.4, -0.4, -0.85], [0.4, 0.4, 0.85]),
    "hollow_cylinder": ([-0.5, -0.5, -0.55], [0.5, 0.5, 0.55]),
    "solid_sphere": (-0.9, 0.9),
    "thick_shell": (-0.9, 0.9),
    "ellipsoid": ([-0.5, -0.8, -1.3], [0.5, 0.8, 1.3]),
    "cone": ([-0.6, -0.6, -0.4], [0.6, 0.6, 1.2]),
}


def monte_carlo(name, rng, n=40_000):
    """Uniform samples of the body (rejection from a bounding box, or surface/line draws)."""
    if name == "thin_shell":
        g = rng.standard_normal((n, 3))
        return 0.9 * g / np.linalg.norm(g, axis=1, keepdims=True)
    if name == "thin_tube":
        phi, z = rng.uniform(0, 2 * np.pi, n), rng.uniform(-0.55, 0.55, n)
        return np.stack([0.5 * np.cos(phi), 0.5 * np.sin(phi), z], -1)
    if name == "thin_rod":
        return np.stack([np.zeros(n), np.zeros(n), rng.uniform(-0.95, 0.95, n)], -1)
    lo, hi = BOUNDS.get(name, (-1.0, 1.0))
    p = rng.uniform(lo, hi, (n, 3))
    return p[inside(name, p)]


@pytest.mark.parametrize("name", sorted(SOLIDS))
def test_solid_matches_monte_carlo_of_density(name):
    rng = np.random.default_rng(RNG_SEED)
    p = monte_carlo(name, rng)
    # per-sample integrands of the mean position and of I / m
    f = np.einsum("ki,ki->k", p, p)[:, None, None] * np.eye(3) - p[:, :, None] * p[:, None, :]
    n = len(p)
    assert n > 8000
    se_c = p.std(axis=0) / np.sqrt(n) + 1e-15
    se_I = M * f.std(axis=0) / np.sqrt(n) + 1e-15
    assert np.all(np.abs(p.mean(axis=0)) < 5 * se_c), "centre of mass is not at the origin"
    err = np.abs(M * f.mean(axis=0) - SOLIDS[name][0]())
    assert np.all(err < 5 * se_I), (err / se_I).max()


def test_monte_carlo_tolerance_detects_a_wrong_coefficient():
    # the statistical test has power: a cone with Mandre's (2008) table coefficients perturbed by
    # 5 % (well below a typical textbook slip such as 3/20 -> 1/10) is rejected
    rng = np.random.default_rng(RNG_SEED)
    p = monte_carlo("cone", rng)
    f = np.einsum("ki,ki->k", p, p)[:, None, None] * np.eye(3) - p[:, :, None] * p[:, None, :]
    se = M * f.std(axis=0) / np.sqrt(len(p))
    wrong = 1.05 * ri.cone(M, 0.6, 1.6)
    assert np.any(np.abs(M * f.mean(axis=0) - wrong) > 5 * se)


def test_batched_solids_broadcast():
    m = np.array([1.0, 2.0, 3.0])
    out = ri.solid_cylinder(m[:, None], [0.5, 1.0], 2.0)
    assert out.shape == (3, 2, 3, 3)
    np.testing.assert_allclose(out[2, 1], ri.solid_cylinder(3.0, 1.0, 2.0))
    sizes = np.arange(1, 13, dtype=float).reshape(4, 3)
    np.testing.assert_allclose(ri.box(2.0, sizes)[3], ri.box(2.0, sizes[3]))
    assert ri.ellipsoid(1.0, [1, 2, 3]).shape == (3, 3)


def random_rotations(rng, n):
    return so3.exp(rng.normal(size=(n, 3)) * 1.5)


def test_rotate_and_parallel_axis_match_direct_integral():
    rng = np.random.default_rng(RNG_SEED)
    A = random_rotations(rng, 1)[0]
    r = np.array([0.3, -1.2, 0.7])
    pts, w = SOLIDS["cone"][1]()
    w = w * (M / w.sum())
    moved = pts @ A.T + r
    # about the body origin (not the centre of mass): integral of |x|^2 1 - x x^T
    second = np.einsum("k,ki,kj->ij", w, moved, moved)
    direct = np.trace(second) * np.eye(3) - second
    placed = ri.parallel_axis(ri.rotate_inertia(ri.cone(M, 0.6, 1.6), A), M, r)
    np.testing.assert_allclose(placed, direct, rtol=0, atol=1e-13 * np.abs(direct).max())
    # the quaternion form of the rotation gives the same tensor
    q = Rotation.from_matrix(A).as_quat(scalar_first=True)
    np.testing.assert_allclose(ri.rotate_inertia(ri.cone(M, 0.6, 1.6), 3.0 * q),
                               ri.rotate_inertia(ri.cone(M, 0.6, 1.6), A), atol=1e-14)


def test_compound_matches_direct_integral():
    rng = np.random.default_rng(RNG_SEED + 1)
    names = ["box", "solid_cylinder", "cone", "thick_shell", "thin_rod"]
    masses = np.array([1.0, 2.5, 0.7, 1.9, 0.4])
    A = random_rotations(rng, len(names))
    p = rng.uniform(-2, 2, (len(names), 3))
    clouds, tensors = [], []
    for k, name in enumerate(names):
        pts, w = SOLIDS[name][1]()
        clouds.append((pts @ A[k].T + p[k], w * (masses[k] / w.sum())))
        tensors.append(SOLIDS[name][0]() * masses[k] / M)
    mass, c, direct = tensor_of_cloud(np.concatenate([x for x, _ in clouds]),
                                      np.concatenate([w for _, w in clouds]))
    body = ri.compound(masses, tensors, positions=p, rotations=A)
    np.testing.assert_allclose(body.mass, mass, rtol=1e-14)
    np.testing.assert_allclose(body.center_of_mass, c, rtol=0, atol=1e-13)
    np.testing.assert_allclose(body.inertia, direct, rtol=0, atol=1e-13 * np.abs(direct).max())
    ri.validate_inertia(body.inertia)
    # quaternions for the part orientations, and a leading batch of two compounds
    qs = Rotation.from_matrix(A).as_quat(scalar_first=True)
    both = ri.compound(np.stack([masses, masses]), np.stack([tensors, tensors]),
                       positions=np.stack([p, p]), rotations=np.stack([qs, -qs]))
    assert both.inertia.shape == (2, 3, 3)
    np.testing.assert_allclose(both.inertia, [direct, direct], atol=1e-12)


def test_compound_defaults_and_monte_carlo():
    # two equal balls touching at the origin: a direct Monte-Carlo integral of the union
    rng = np.random.default_rng(RNG_SEED + 2)
    body = ri.compound([1.0, 1.0], [ri.solid_sphere(1.0, 1.0)] * 2,
                       positions=[[-1.0, 0, 0], [1.0, 0, 0]])
    p = rng.uniform(-1, 1, (80_000, 3))
    p = p[np.einsum("ki,ki->k", p, p) <= 1]
    p = np.concatenate([p - [1, 0, 0], p + [1, 0, 0]])
    f = np.einsum("ki,ki->k", p, p)[:, None, None] * np.eye(3) - p[:, :, None] * p[:, None, :]
    se = 2 * f.std(axis=0) / np.sqrt(len(p)) + 1e-15
    assert np.all(np.abs(2 * f.mean(axis=0) - body.inertia) < 5 * se)
    np.testing.assert_allclose(body.inertia, np.diag([0.8, 2.8, 2.8]), atol=1e-15)
    same = ri.compound([3.0], [np.eye(3)])
    assert float(same.mass) == 3.0 and np.all(same.center_of_mass == 0)


# ------------------------------------------------------------------------------------------
# principal axes
# ------------------------------------------------------------------------------------------

def spd_with_moments(rng, moments):
    Q = random_rotations(rng, len(moments))
    return np.einsum("kij,kj,klj->kil", Q, moments, Q)


def check_principal(tens, moments_expected=None):
    moments, B = ri.principal_axes(tens)
    scale = np.abs(tens).max(axis=(-2, -1))[..., None, None]
    D = np.einsum("...ji,...jk,...kl->...il", B, tens, B)
    off = D - np.einsum("...i,ij->...ij", np.diagonal(D, axis1=-2, axis2=-1), np.eye(3))
    assert np.all(np.abs(off) <= 1e-12 * scale)
    np.testing.assert_allclose(np.diagonal(D, axis1=-2, axis2=-1), moments, rtol=0,
                               atol=1e-12 * scale.max())
    assert np.all(np.diff(moments, axis=-1) >= 0)
    gram = np.einsum("...ki,...kj->...ij", B, B)
    assert np.abs(gram - np.eye(3)).max() < 1e-13
    np.testing.assert_allclose(np.linalg.det(B), 1.0, atol=1e-13)
    if moments_expected is not None:
        np.testing.assert_allclose(moments, np.sort(moments_expected, axis=-1), rtol=0,
                                   atol=1e-12 * np.max(moments_expected))
    return moments, B


def test_principal_axes_random_spd_distinct_and_repeated():
    rng = np.random.default_rng(RNG_SEED)
    n = 500
    distinct = rng.uniform(0.1, 10, (n, 3))
    check_principal(spd_with_moments(rng, distinct), distinct)
    a, b = rng.uniform(0.1, 10, (2, n))
    for repeated in (np.stack([a, a, b], -1), np.stack([b, a, a], -1), np.stack([a, b, a], -1),
                     np.stack([a, a, a], -1), np.stack([a, a * (1 + 1e-13), b], -1)):
        check_principal(spd_with_moments(rng, repeated), repeated)
    general = rng.normal(size=(n, 3, 3))
    check_principal(general @ np.swapaxes(general, -1, -2) + 1e-3 * np.eye(3))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(1e-3, 1e3), min_size=3, max_size=3),
       st.lists(st.floats(-4, 4), min_size=3, max_size=3),
       st.integers(0, 3))
def test_principal_axes_property(moments, rotvec, repeat):
    moments = np.array(moments)
    if repeat:
        moments[repeat % 3] = moments[(repeat + 1) % 3]
    Q = so3.exp(np.array(rotvec))
    check_principal(Q @ np.diag(moments) @ Q.T, moments)


def test_principal_axes_of_diagonal_tensors():
    moments, B = ri.principal_axes(np.diag([1.0, 2.0, 3.0]))
    np.testing.assert_array_equal(B, np.eye(3))
    moments, B = ri.principal_axes(np.diag([3.0, 1.0, 2.0]))
    assert moments.tolist() == [1.0, 2.0, 3.0]
    assert np.linalg.det(B) == pytest.approx(1.0)
    np.testing.assert_allclose(np.abs(B), [[0, 0, 1], [1, 0, 0], [0, 1, 0]], atol=0)
    moments, B = ri.principal_axes(2.0 * np.eye(3))
    np.testing.assert_array_equal(B, np.eye(3))


def test_body_state_to_principal_frame_and_back():
    rng = np.random.default_rng(RNG_SEED)
    n = 50
    tens = spd_with_moments(rng, rng.uniform(0.5, 3, (n, 3)))
    q = rng.normal(size=(n, 4))
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    w, tau = rng.normal(size=(2, n, 3))
    moments, B = ri.principal_axes(tens)
    s = ri.to_principal_frame(B, q, w, tau)
    R, Rp = rq.to_matrix(q), rq.to_matrix(s.orientation)
    # world quantities are unchanged
    np.testing.assert_allclose(np.einsum("kij,kj->ki", Rp, s.angular_velocity),
                               np.einsum("kij,kj->ki", R, w), atol=1e-13)
    np.testing.assert_allclose(np.einsum("kij,kj->ki", Rp, s.torque),
                               np.einsum("kij,kj->ki", R, tau), atol=1e-13)
    np.testing.assert_allclose(Rp * moments[:, None, :] @ np.swapaxes(Rp, 1, 2),
                               R @ tens @ np.swapaxes(R, 1, 2), atol=1e-12)
    # angular momentum in the principal frame is the diagonal product
    np.testing.assert_allclose(moments * s.angular_velocity,
                               np.einsum("kji,kjl,kl->ki", B, tens, w), atol=1e-12)
    back = ri.from_principal_frame(B, s.orientation, s.angular_velocity, s.torque)
    np.testing.assert_allclose(back.orientation * np.sign(back.orientation[:, :1] * q[:, :1]), q,
                               atol=1e-14)
    np.testing.assert_allclose(back.angular_velocity, w, atol=1e-14)
    np.testing.assert_allclose(back.torque, tau, atol=1e-14)
    only = ri.to_principal_frame(B[0], angular_velocity=w[0])
    assert only.orientation is None and only.torque is None


# ------------------------------------------------------------------------------------------
# validation and error paths
# ------------------------------------------------------------------------------------------

def test_validate_inertia_accepts_bodies_and_laminae():
    ri.validate_inertia(ri.box(1.0, [1, 2, 3]))
    lamina = np.diag([1.0, 2.0, 3.0])  # flat plate: I3 = I1 + I2 exactly
    Q = so3.exp([0.3, -1.0, 2.0])
    out = ri.validate_inertia(Q @ lamina @ Q.T)
    np.testing.assert_array_equal(out, np.swapaxes(out, -1, -2))


@pytest.mark.parametrize("bad, match", [
    (np.array([[1.0, 0.1, 0], [0, 1, 0], [0, 0, 1]]), "must be symmetric"),
    (np.diag([1.0, 1.0, -0.5]), "positive definite"),
    (ri.thin_rod(1.0, 1.0), "positive definite"),
    (np.diag([1.0, 1.0, 2.5]), "triangle inequality"),
    (np.eye(2), r"must have shape \(\.\.\., 3, 3\)"),
    (np.diag([1.0, np.nan, 1.0]), "finite"),
    ("abc", "real numeric"),
])
def test_validate_inertia_errors(bad, match):
    err = TypeError if match == "real numeric" else ValueError
    with pytest.raises(err, match=match):
        ri.validate_inertia(bad, name="I_body")


def test_validate_inertia_names_argument():
    with pytest.raises(ValueError, match="`I_body` must be symmetric"):
        ri.validate_inertia([[1, 2, 0], [0, 1, 0], [0, 0, 1]], name="I_body")


@pytest.mark.parametrize("call, match", [
    (lambda: ri.box(0.0, [1, 1, 1]), r"`mass` must be > 0"),
    (lambda: ri.box(-1.0, [1, 1, 1]), r"`mass` must be > 0"),
    (lambda: ri.box(1.0, [1, -1, 1]), r"`size` must be > 0"),
    (lambda: ri.box(1.0, [1, 1]), r"`size` must have shape \(\.\.\., 3\)"),
    (lambda: ri.box([1.0, 2.0], np.ones((3, 3))), r"cannot broadcast.*`mass` \(2,\)"),
    (lambda: ri.solid_cylinder(1.0, 0.0, 1.0), r"`radius` must be > 0"),
    (lambda: ri.hollow_cylinder(1.0, 1.0, 1.0, inner_radius=2.0), "`inner_radius` must be <="),
    (lambda: ri.hollow_cylinder(1.0, 1.0, 1.0, inner_radius=-0.1),
     r"`inner_radius` must be >= 0"),
    (lambda: ri.hollow_sphere(1.0, 1.0, inner_radius=1.5), "`inner_radius` must be <="),
    (lambda: ri.thin_rod(1.0, np.inf), "`length` must contain only finite"),
    (lambda: ri.cone(1.0, 1.0, 0.0), r"`height` must be > 0"),
    (lambda: ri.ellipsoid(1.0, [1, 0, 1]), r"`semi_axes` must be > 0"),
    (lambda: ri.rotate_inertia(np.eye(3), 2 * np.eye(3)), "`rotation` must hold rotation"),
    (lambda: ri.rotate_inertia(np.eye(3), np.diag([1.0, 1, -1])), "`rotation` must hold rot"),
    (lambda: ri.rotate_inertia(np.eye(3), np.zeros(4)), "`rotation` must hold nonzero"),
    (lambda: ri.parallel_axis(np.eye(3), 0.0, [1, 0, 0]), r"`mass` must be > 0"),
    (lambda: ri.parallel_axis(np.eye(3), 1.0, [1, 0]), r"`offset` must have shape"),
    (lambda: ri.compound([1.0, -1.0], [np.eye(3)] * 2), r"`masses` must be > 0"),
    (lambda: ri.compound([1.0, 1.0], [np.eye(3)] * 3), r"`inertias` must have shape"),
    (lambda: ri.compound(1.0, [np.eye(3)]), r"`masses` must have shape \(\.\.\., k\)"),
    (lambda: ri.compound([1.0], [np.eye(3)], positions=[[0, 0]]), r"`positions` must have"),
    (lambda: ri.compound([1.0], [np.eye(3)], rotations=np.eye(3)), r"`rotations` must have"),
    (lambda: ri.principal_axes([[1, 2, 0], [0, 1, 0], [0, 0, 1]]), "must be symmetric"),
    (lambda: ri.to_principal_frame(2 * np.eye(3)), "`axes` must hold rotation"),
    (lambda: ri.to_principal_frame(np.eye(3), orientation=np.zeros(4)), "`orientation` must"),
    (lambda: ri.from_principal_frame(np.eye(3), angular_velocity=[1, 2]),
     r"`angular_velocity` must have shape"),
])
def test_error_paths(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_type_errors():
    with pytest.raises(TypeError, match="`mass` must be a real numeric"):
        ri.solid_sphere("heavy", 1.0)
