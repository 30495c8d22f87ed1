"""SO(3) kernels: accuracy against mpmath, identities, Jacobians, and error paths."""
import mpmath as mp
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from scipy.spatial.transform import Rotation

from rotode import so3

PI = np.pi

# Branch thresholds of the kernels in angle a: x = a^2 = 1, 4 (R, T) and 6.25 (dexp_inv).
THRESHOLDS = [1.0, 2.0, 2.5]


def _grid():
    dense = np.linspace(0.0, PI, 3001)
    special = [0.0, 1e-8, 1e-4, PI - 1e-9, PI]
    for t in THRESHOLDS:
        special += [t * (1 - 1e-12), t, t * (1 + 1e-12)]
    return np.unique(np.concatenate([dense, special]))


def _mp_coefficients(a):
    with mp.workdps(60):  # other test modules may change the global precision
        return [+c for c in _mp_coefficients_at_working_precision(a)]


def _mp_coefficients_at_working_precision(a):
    a = mp.mpf(float(a))
    if a == 0:
        return [mp.mpf(1), mp.mpf(1) / 2, mp.mpf(1) / 6, mp.mpf(1) / 12]
    s1 = mp.sin(a) / a
    s2 = (1 - mp.cos(a)) / a**2
    s3 = (a - mp.sin(a)) / a**3
    c = (1 - (a / 2) * mp.cot(a / 2)) / a**2
    return [s1, s2, s3, c]


def _ulp_error(computed, exact):
    exact_d = np.array([float(e) for e in exact])
    err = np.array([abs(mp.mpf(float(c)) - e) for c, e in zip(computed, exact, strict=True)],
                   dtype=float)
    return err / np.spacing(np.abs(exact_d))


def test_sqrt_of_square_recovers_angle():
    # the kernels see a^2 and take sqrt: exact in binary floating point, so the grid angle is
    # the angle the closed-form branches use
    a = _grid()
    assert np.array_equal(np.sqrt(a * a), a)


@pytest.mark.parametrize("index,name", [(0, "S1"), (1, "S2"), (2, "S3"), (3, "C")])
def test_coefficients_within_4_ulp_of_mpmath(index, name):
    a = _grid()
    got = so3.coefficients(a)[index]
    exact = [_mp_coefficients(x)[index] for x in a]
    ulps = _ulp_error(got, exact)
    worst = int(np.argmax(ulps))
    assert ulps.max() <= 4.0, f"{name}: {ulps.max():.2f} ulp at a = {a[worst]!r}"


@pytest.mark.parametrize("index,name", [(0, "S1"), (1, "S2"), (2, "S3"), (3, "C")])
def test_coefficients_beyond_a_half_turn_within_4_ulp_of_mpmath(index, name):
    # pi < a <= 6: the complement range (x <= 16), its threshold a = 4, and the library range
    a = np.concatenate([np.linspace(PI, 6.0, 801), [4 * (1 - 1e-12), 4.0, 4 * (1 + 1e-12)]])
    a = np.unique(a[np.sqrt(a * a) == a])  # angles the kernels see exactly
    got = so3.coefficients(a)[index]
    exact = [_mp_coefficients(x)[index] for x in a]
    ulps = _ulp_error(got, exact)
    worst = int(np.argmax(ulps))
    assert ulps.max() <= 4.0, f"{name}: {ulps.max():.2f} ulp at a = {a[worst]!r}"


def _vectors_in_every_range(rng):
    # around the thresholds a = 1, 2, 4 of the four ranges, 0, tiny, large, and random angles
    angles = np.concatenate([
        [0.0, 1e-300, 1e-8, PI, 2 * PI, 10.0, 1e3],
        [t * (1 + s * 1e-15) for t in (1.0, 2.0, 4.0) for s in (-1, 0, 1)],
        rng.uniform(0.0, 6.0, 3000)])
    d = rng.normal(size=(angles.size, 3))
    d /= np.linalg.norm(d, axis=1, keepdims=True)
    return d * angles[:, None]


@pytest.mark.parametrize("level", [0, 1, 2])
def test_batch_exp_is_the_scalar_kernel_bit_for_bit(level, rng):
    # so3.exp runs the branch-free block loop of _rows.hpp (portable, AVX2 or AVX-512F, as far
    # as the CPU goes); exp_and_dexp runs the branching scalar kernels: the bits must agree in
    # every range, for partial blocks, chunks, threads and the non-temporal stores
    v = _vectors_in_every_range(rng)
    R_scalar, _ = so3.exp_and_dexp(v)
    try:
        isa = so3._rows_isa(level)
        assert isa in ("portable", "avx2", "avx512")[:level + 1]
        np.testing.assert_array_equal(so3.exp(v), R_scalar)
        for n in (1, 63, 64, 65, 1025):  # partial blocks and chunks
            np.testing.assert_array_equal(so3.exp(v[:n]), R_scalar[:n])
        big = np.tile(v, (7, 1))  # > 16384 rows: the threaded path
        np.testing.assert_array_equal(so3.exp(big), np.tile(R_scalar, (7, 1, 1)))
        huge = np.tile(v, (80, 1))  # 9 x 240000 doubles > 2**21: non-temporal stores
        np.testing.assert_array_equal(so3.exp(huge), np.tile(R_scalar, (80, 1, 1)))
        out = np.empty((len(huge) + 1, 9))[1:].reshape(-1, 3, 3)  # not 16-byte aligned rows
        np.testing.assert_array_equal(so3.exp(huge, out=out), np.tile(R_scalar, (80, 1, 1)))
    finally:
        so3._rows_isa(2)


def test_matrices_use_the_coefficients():
    # so3.exp/dexp/dexp_inv of a vector along z expose the coefficients exactly
    a = _grid()[1:]
    v = np.zeros((a.size, 3))
    v[:, 2] = a
    s1, s2, s3, c = so3.coefficients(a)
    R, T = so3.exp_and_dexp(v)
    np.testing.assert_array_equal(R, so3.exp(v))
    np.testing.assert_array_equal(T, so3.dexp(v))
    np.testing.assert_array_equal(R[:, 1, 0], s1 * a)
    np.testing.assert_array_equal(T[:, 1, 0], s2 * a)
    np.testing.assert_array_equal(T[:, 0, 0], s1)
    Ti = so3.dexp_inv(v)
    np.testing.assert_array_equal(Ti[:, 0, 0], 1.0 - c * (a * a))


def _random_vectors(rng, n=400):
    d = rng.normal(size=(n, 3))
    d /= np.linalg.norm(d, axis=1, keepdims=True)
    angles = np.concatenate([[0.0, 1e-8, 1e-4, 0.3, 1.0, 1.9, 2.0, 2.1, 2.5, PI - 1e-9, PI],
                             rng.uniform(0, PI, n - 11)])
    return d * angles[:, None]


def test_exp_matches_scipy(rng):
    v = _random_vectors(rng)
    np.testing.assert_allclose(so3.exp(v), Rotation.from_rotvec(v).as_matrix(), atol=2e-15)


def test_exp_is_a_rotation(rng):
    R = so3.exp(_random_vectors(rng) * 2.0)
    np.testing.assert_allclose(np.swapaxes(R, -1, -2) @ R, np.broadcast_to(np.eye(3), R.shape),
                               atol=2e-15)
    np.testing.assert_allclose(np.linalg.det(R), 1.0, atol=2e-15)


def test_log_inverts_exp(rng):
    v = _random_vectors(rng)
    inside = np.linalg.norm(v, axis=1) < PI - 1e-6
    back = so3.log(so3.exp(v[inside]))
    rel = np.linalg.norm(back - v[inside], axis=1) / np.maximum(
        np.linalg.norm(v[inside], axis=1), 1e-300)
    rel[np.linalg.norm(v[inside], axis=1) == 0] = np.linalg.norm(back[np.linalg.norm(
        v[inside], axis=1) == 0], axis=1)
    assert rel.max() <= 1e-14


@pytest.mark.parametrize("axis", [[1, 0, 0], [0, 1, 0], [0, 0, 1], [1, 1, 1], [-1, 2, -3]])
def test_log_at_half_turn_is_a_valid_rotation_vector(axis):
    u = np.asarray(axis, float) / np.linalg.norm(axis)
    R = so3.exp(PI * u)
    v = so3.log(R)
    assert abs(np.linalg.norm(v) - PI) < 1e-14
    assert min(np.linalg.norm(v - PI * u), np.linalg.norm(v + PI * u)) < 1e-14
    np.testing.assert_allclose(so3.exp(v), R, atol=1e-15)


def test_log_near_identity_is_relative_accurate():
    for a in [1e-300, 1e-100, 1e-12, 1e-8]:
        v = np.array([a, -2 * a, 0.5 * a])
        np.testing.assert_allclose(so3.log(so3.exp(v)), v, rtol=1e-15)
    np.testing.assert_array_equal(so3.log(np.eye(3)), np.zeros(3))


def test_T_identities(rng):
    v = _random_vectors(rng) * 1.5  # up to 1.5 pi < 2 pi
    R, T = so3.exp_and_dexp(v)
    Tm = so3.dexp(-v)
    eye = np.broadcast_to(np.eye(3), T.shape)
    np.testing.assert_allclose(np.einsum("nij,nj->ni", T, v), v, atol=1e-14)  # T(v) v = v
    np.testing.assert_allclose(np.swapaxes(T, -1, -2), Tm, atol=1e-15)  # T^T = T(-v)
    np.testing.assert_allclose(R @ Tm, T, atol=2e-15)  # reflectivity R(v) T(-v) = T(v)
    np.testing.assert_allclose(T @ so3.dexp_inv(v), eye, atol=1e-13)
    # double angle for T: T(v) = (1 + R(v/2)) T(v/2) / 2
    Rh, Th = so3.exp_and_dexp(v / 2)
    np.testing.assert_allclose(T, 0.5 * (eye + Rh) @ Th, atol=2e-15)


def test_T_is_the_average_of_rotations(rng):
    # T(v) = int_0^1 R(s v) ds, by Gauss-Legendre quadrature
    v = _random_vectors(rng, 20) * 1.2
    s, w = np.polynomial.legendre.leggauss(30)
    s, w = 0.5 * (s + 1), 0.5 * w
    quad = np.einsum("k,knij->nij", w, so3.exp(s[:, None, None] * v[None]))
    np.testing.assert_allclose(so3.dexp(v), quad, atol=1e-14)


def test_hat_vee_round_trip(rng):
    v = rng.normal(size=(10, 3))
    K = so3.hat(v)
    np.testing.assert_array_equal(np.swapaxes(K, -1, -2), -K)
    np.testing.assert_array_equal(so3.vee(K), v)
    y = rng.normal(size=(10, 3))
    np.testing.assert_allclose(np.einsum("nij,nj->ni", K, y), np.cross(v, y), atol=1e-15)


def _central_difference(f, v, h=1e-6):
    cols = []
    for k in range(3):
        e = np.zeros(3)
        e[k] = h
        cols.append((f(v + e) - f(v - e)) / (2 * h))
    return np.stack(cols, axis=-1)


JACOBIANS = [
    (so3.exp_jacobian, so3.exp),
    (so3.dexp_jacobian, so3.dexp),
    (so3.dexp_inv_jacobian, so3.dexp_inv),
]


@pytest.mark.parametrize("jac,fun", JACOBIANS)
def test_dual_jacobians_match_finite_differences(jac, fun, rng):
    vs = np.concatenate([np.zeros((1, 3)), [[1e-8, 0, 0]], rng.normal(size=(20, 3)),
                         [[0.0, 0.0, 2.0], [0.9, 0.0, 0.0], [0, 0, PI - 1e-3],
                          [0.0, 3.0, 3.0], [4.5, 0.0, 1.0]]])
    vs[2:22] *= 2.5 / np.linalg.norm(vs[2:22], axis=1, keepdims=True) * rng.uniform(
        0.05, 1, (20, 1))
    for v in vs:
        value, J = jac(v)
        np.testing.assert_array_equal(value, fun(v))  # dual values are the double results
        fd = _central_difference(fun, v)
        scale = max(1.0, np.abs(fd).max())
        assert np.abs(J - fd).max() <= 1e-7 * scale


def test_exp_jacobian_matches_analytic_form(rng):
    # d R / d v_k = [T(v) e_k]x R(v)   (notes, "T(v)")
    for v in [np.zeros(3), np.array([1e-9, 0, 0]), *rng.normal(size=(10, 3))]:
        R, J = so3.exp_jacobian(v)
        T = so3.dexp(v)
        analytic = np.stack([so3.hat(T[:, k]) @ R for k in range(3)], axis=-1)
        np.testing.assert_allclose(J, analytic, atol=1e-14)


def test_dexp_inv_jacobian_is_consistent_with_dexp(rng):
    # d(T^-1) = -T^-1 dT T^-1
    for v in rng.normal(size=(5, 3)):
        Ti, dTi = so3.dexp_inv_jacobian(v)
        T, dT = so3.dexp_jacobian(v)
        expected = -np.einsum("ij,jlk,lm->imk", Ti, dT, Ti)
        np.testing.assert_allclose(dTi, expected, atol=1e-13)


@given(arrays(np.float64, (3,), elements=st.floats(-3.0, 3.0)))
def test_exp_log_round_trip_property(v):
    a = np.linalg.norm(v)
    if a >= PI - 1e-6:
        return
    err = np.linalg.norm(so3.log(so3.exp(v)) - v)
    assert err <= 1e-14 * a


def test_batch_shapes_and_empty():
    v = np.zeros((2, 5, 3))
    assert so3.exp(v).shape == (2, 5, 3, 3)
    assert so3.log(so3.exp(v)).shape == (2, 5, 3)
    assert so3.exp(np.zeros((0, 3))).shape == (0, 3, 3)
    assert so3.dexp([0.0, 0.0, 0.0]).shape == (3, 3)
    R, T = so3.exp_and_dexp(np.zeros((4, 3)))
    assert R.shape == T.shape == (4, 3, 3)


def test_large_batch_parallel_equals_serial(rng):
    v = rng.normal(size=(40000, 3))
    big = so3.exp(v)
    small = np.concatenate([so3.exp(v[i:i + 1000]) for i in range(0, 40000, 1000)])
    np.testing.assert_array_equal(big, small)
    out = np.empty_like(big)
    assert so3.exp(v, out=out) is out
    np.testing.assert_array_equal(out, big)


# ---- error paths ------------------------------------------------------------------------

def test_wrong_shape_is_rejected():
    with pytest.raises(ValueError, match=r"`v` must have shape \(\.\.\., 3\), got \(4,\)"):
        so3.exp([1.0, 2.0, 3.0, 4.0])
    with pytest.raises(ValueError, match=r"`R` must have shape \(\.\.\., 3, 3\)"):
        so3.log(np.eye(4))
    with pytest.raises(ValueError, match=r"`K` must have shape"):
        so3.vee(np.zeros(3))


def test_non_finite_is_rejected():
    with pytest.raises(ValueError, match="`v` must contain only finite values"):
        so3.exp([np.nan, 0, 0])
    with pytest.raises(ValueError, match="`v` must contain only finite values"):
        so3.dexp([[0, 0, 0], [np.inf, 0, 0]])
    # so3.exp checks in its kernel pass: any row of a large batch, and |v|^2 overflow
    v = np.zeros((50000, 3))
    v[37777, 1] = -np.inf
    with pytest.raises(ValueError, match="`v` must contain only finite values"):
        so3.exp(v)
    for f in (so3.exp, so3.dexp, so3.exp_and_dexp, so3.exp_jacobian, so3.dexp_jacobian):
        with pytest.raises(ValueError, match=r"`v` must have \|v\| < 1.34e154 .* 1e\+200"):
            f([[0, 0, 1.0], [0, 1e200, 0]])
    # components above sqrt(DBL_MAX/3) whose |v|^2 is still finite are accepted
    assert np.isfinite(so3.dexp([1e154, 0, 0])).all()
    np.testing.assert_allclose(np.linalg.det(so3.exp([1e150, 0, 0])), 1.0, atol=1e-15)


def test_wrong_dtype_is_rejected():
    with pytest.raises(TypeError, match="`v` must be a real numeric array"):
        so3.exp(["a", "b", "c"])
    with pytest.raises(TypeError, match="`v` must be a real numeric array"):
        so3.exp(np.array([1j, 0, 0]))


def test_non_rotation_is_rejected():
    with pytest.raises(ValueError, match="`R` must hold rotation matrices"):
        so3.log(np.diag([1.0, 1.0, -1.0]))
    with pytest.raises(ValueError, match="`R` must hold rotation matrices"):
        so3.log(2 * np.eye(3))


def test_dexp_inv_singular_domain():
    with pytest.raises(ValueError, match=r"\|v\| < 2 pi"):
        so3.dexp_inv([2 * PI, 0, 0])
    with pytest.raises(ValueError, match=r"\|v\| < 2 pi"):
        so3.dexp_inv_jacobian([0, 7.0, 0])


def test_bad_out_and_angle():
    with pytest.raises(ValueError, match="`out` must be a writeable C-contiguous float64"):
        so3.exp(np.zeros((2, 3)), out=np.empty((3, 3)))
    with pytest.raises(ValueError, match="`angle` must be >= 0"):
        so3.coefficients(-1.0)
