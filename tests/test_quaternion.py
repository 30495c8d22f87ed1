"""Quaternion kernels: identities, SciPy agreement, accuracy, Jacobians and error paths."""
import mpmath as mp
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from scipy.spatial.transform import Rotation

from rotode import quaternion as Q
from rotode import so3

PI = np.pi


def _random_quaternions(rng, n=200, scale=True):
    q = rng.normal(size=(n, 4))
    if scale:
        q *= rng.uniform(0.01, 100.0, size=(n, 1))
    return q


def _numpy_product(p, q):
    w1, v1 = p[..., :1], p[..., 1:]
    w2, v2 = q[..., :1], q[..., 1:]
    return np.concatenate([w1 * w2 - np.sum(v1 * v2, -1, keepdims=True),
                           w1 * v2 + w2 * v1 + np.cross(v1, v2)], axis=-1)


def test_hamilton_units():
    one, i, j, k = np.eye(4)
    np.testing.assert_array_equal(Q.multiply(i, j), k)
    np.testing.assert_array_equal(Q.multiply(j, k), i)
    np.testing.assert_array_equal(Q.multiply(k, i), j)
    np.testing.assert_array_equal(Q.multiply(i, i), -one)
    np.testing.assert_array_equal(Q.multiply(j, i), -k)


def test_product_matches_numpy_and_scipy(rng):
    p, q = _random_quaternions(rng), _random_quaternions(rng)
    np.testing.assert_allclose(Q.multiply(p, q), _numpy_product(p, q), rtol=1e-14,
                               atol=1e-12)
    pu = p / np.linalg.norm(p, axis=1, keepdims=True)
    qu = q / np.linalg.norm(q, axis=1, keepdims=True)
    ref = (Rotation.from_quat(pu, scalar_first=True) * Rotation.from_quat(
        qu, scalar_first=True)).as_matrix()
    np.testing.assert_allclose(Q.to_matrix(Q.multiply(pu, qu)), ref, atol=1e-14)


def test_product_broadcasts(rng):
    p = _random_quaternions(rng, 5)
    q = _random_quaternions(rng, 1)[0]
    np.testing.assert_allclose(Q.multiply(p, q), _numpy_product(p, q[None]), rtol=1e-14,
                               atol=1e-12)
    assert Q.multiply(np.ones((2, 1, 4)), np.ones((3, 4))).shape == (2, 3, 4)


def test_conjugate_norm_inverse(rng):
    q = _random_quaternions(rng)
    n2 = np.sum(q * q, axis=1)
    qq = Q.multiply(q, Q.conjugate(q))
    np.testing.assert_allclose(qq[:, 0], n2, rtol=1e-15)
    np.testing.assert_allclose(qq[:, 1:], 0.0, atol=1e-15 * n2.max())
    np.testing.assert_allclose(Q.norm(q), np.sqrt(n2), rtol=1e-15)
    ident = Q.multiply(q, Q.inverse(q))
    np.testing.assert_allclose(ident, np.tile([1.0, 0, 0, 0], (len(q), 1)), atol=1e-15)


def test_to_matrix_is_scale_invariant_and_orthonormal(rng):
    q = _random_quaternions(rng)
    R = Q.to_matrix(q)
    for a in [-3.0, 1e-3, 7.5e5]:
        np.testing.assert_allclose(Q.to_matrix(a * q), R, atol=1e-15)
    np.testing.assert_allclose(np.swapaxes(R, 1, 2) @ R, np.broadcast_to(np.eye(3), R.shape),
                               atol=1e-15)
    np.testing.assert_allclose(np.linalg.det(R), 1.0, atol=1e-15)
    ref = Rotation.from_quat(q, scalar_first=True).as_matrix()
    np.testing.assert_allclose(R, ref, atol=1e-15)


def test_rotate_equals_matrix_product(rng):
    q = _random_quaternions(rng)
    v = rng.normal(size=(len(q), 3))
    np.testing.assert_allclose(Q.rotate(q, v), np.einsum("nij,nj->ni", Q.to_matrix(q), v),
                               atol=1e-14)
    qu = q / np.linalg.norm(q, axis=1, keepdims=True)
    sandwich = Q.multiply(Q.multiply(qu, np.concatenate([np.zeros((len(q), 1)), v], 1)),
                          Q.conjugate(qu))
    np.testing.assert_allclose(Q.rotate(q, v), sandwich[:, 1:], atol=1e-14)


@pytest.mark.parametrize("angle", [0.0, 1e-9, 0.5, PI / 2, PI - 1e-7, PI])
def test_from_matrix_all_branches(angle, rng):
    # axes along each coordinate direction select each of Shepperd's four branches near pi
    axes = np.concatenate([np.eye(3), rng.normal(size=(20, 3))])
    axes /= np.linalg.norm(axes, axis=1, keepdims=True)
    R = so3.exp(angle * axes)
    q = Q.from_matrix(R)
    assert np.all(q[:, 0] >= 0)
    np.testing.assert_allclose(np.linalg.norm(q, axis=1), 1.0, rtol=1e-15)
    np.testing.assert_allclose(Q.to_matrix(q), R, atol=2e-15)
    ref = Rotation.from_matrix(R).as_quat(scalar_first=True, canonical=True)
    np.testing.assert_allclose(np.abs(np.sum(q * ref, axis=1)), 1.0, atol=1e-14)


def _ulps(got, exact):
    e = np.array([float(x) for x in exact])
    err = np.array([abs(mp.mpf(float(g)) - x) for g, x in zip(got, exact, strict=True)],
                   dtype=float)
    return err / np.spacing(np.abs(e))


def test_exp_coefficients_within_4_ulp():
    a = np.unique(np.concatenate([np.linspace(0, PI, 2001),
                                  [1e-8, 1 - 1e-12, 1.0, 1 + 1e-12, PI - 1e-9, PI]]))
    q = Q.exp(np.stack([a, 0 * a, 0 * a], axis=1))
    nz = a > 0
    with mp.workdps(60):  # other test modules may change the global precision
        cos_exact = [mp.cos(mp.mpf(x)) for x in a]
        sin_exact = [mp.sin(mp.mpf(x)) for x in a[nz]]
        assert _ulps(q[:, 0], cos_exact).max() <= 4
        assert _ulps(q[nz, 1], sin_exact).max() <= 4


def test_exp_log_round_trip(rng):
    x = rng.normal(size=(200, 3))
    x *= (PI - 1e-6) * rng.uniform(0, 1, (200, 1)) / np.linalg.norm(x, axis=1, keepdims=True)
    q = Q.exp(x)
    np.testing.assert_allclose(np.linalg.norm(q, axis=1), 1.0, rtol=1e-15)
    back = Q.log(q)
    np.testing.assert_allclose(back[:, 0], 0.0, atol=1e-15)
    np.testing.assert_allclose(back[:, 1:], x, atol=1e-14)
    # full quaternions: exp(log(q)) = q
    p = _random_quaternions(rng)
    err = np.linalg.norm(Q.exp(Q.log(p)) - p, axis=1) / np.linalg.norm(p, axis=1)
    assert err.max() <= 1e-14
    # q = exp(v/2) is the rotation R(v)
    np.testing.assert_allclose(Q.to_matrix(Q.exp(x / 2)), so3.exp(x), atol=1e-14)


def test_log_special_cases():
    np.testing.assert_array_equal(Q.log([1.0, 0, 0, 0]), [0.0, 0, 0, 0])
    np.testing.assert_allclose(Q.log([-2.0, 0, 0, 0]), [np.log(2.0), PI, 0, 0])
    np.testing.assert_allclose(Q.log([0.0, 0, 0, 1.0]), [0, 0, 0, PI / 2])
    tiny = np.array([1.0, 1e-200, 0, 0])
    np.testing.assert_array_equal(Q.log(tiny)[1], 1e-200)


def test_exp_approx_is_unit_and_within_one_percent_to_90_degrees():
    # [NIRD]: x = Omega/2, a rotation of up to 90 degrees per step is |x| <= pi/4
    u = np.array([1.0, -2.0, 2.0]) / 3.0
    for angle in np.linspace(0, PI / 2, 91):
        x = 0.5 * angle * u
        qa = Q.exp_approx(x)
        assert abs(np.linalg.norm(qa) - 1.0) < 1e-15
        assert np.linalg.norm(qa - Q.exp(x)) <= 0.01 * max(angle, 1e-300) or angle == 0
    # the third-order series, once normalised, only errs in the half angle:
    # atan((1 - a^2/6) a / (1 - a^2/2)) = a + a^3/3 + a^5/6 + ... vs tan: so the error is a^5/30
    e1 = np.linalg.norm(Q.exp_approx(1e-2 * u) - Q.exp(1e-2 * u))
    e2 = np.linalg.norm(Q.exp_approx(5e-3 * u) - Q.exp(5e-3 * u))
    assert 4.8 < np.log2(e1 / e2) < 5.2
    np.testing.assert_allclose(e1, 1e-10 / 30, rtol=1e-2)


def test_scipy_round_trip(rng):
    q = _random_quaternions(rng, 10, scale=False)
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    r = Q.to_scipy(q)
    np.testing.assert_allclose(r.as_matrix(), Q.to_matrix(q), atol=1e-15)
    np.testing.assert_allclose(Q.from_scipy(r), q, atol=1e-15)


def test_to_matrix_jacobian(rng):
    for q in _random_quaternions(rng, 10):
        R, J = Q.to_matrix_jacobian(q)
        np.testing.assert_array_equal(R, Q.to_matrix(q))
        h = 1e-6 * np.linalg.norm(q)
        fd = np.stack([(Q.to_matrix(q + h * e) - Q.to_matrix(q - h * e)) / (2 * h)
                       for e in np.eye(4)], axis=-1)
        assert np.abs(J - fd).max() <= 1e-7 * max(1.0, np.abs(fd).max())
        # analytic: R = M(q)/|q|^2 with M quadratic -> dR = dM/|q|^2 - 2 R (q . dq)/|q|^2
        n2 = q @ q
        w, x, y, z = q
        M = lambda w, x, y, z: np.array([  # noqa: E731  (|q|^2 R(q) as a quadratic form)
            [w * w + x * x - y * y - z * z, 2 * (x * y - w * z), 2 * (x * z + w * y)],
            [2 * (x * y + w * z), w * w - x * x + y * y - z * z, 2 * (y * z - w * x)],
            [2 * (x * z - w * y), 2 * (y * z + w * x), w * w - x * x - y * y + z * z]])
        dM = np.stack([(M(*(q + e)) - M(*(q - e))) / 2 for e in np.eye(4)], axis=-1)  # exact
        analytic = dM / n2 - 2 * R[..., None] * q / n2
        np.testing.assert_allclose(J, analytic, atol=1e-14 / np.sqrt(n2) * 10)
        np.testing.assert_allclose(J @ q, 0.0, atol=1e-13)  # scale invariance


@given(arrays(np.float64, (4,), elements=st.floats(-1e3, 1e3)))
def test_to_matrix_from_matrix_property(q):
    if q @ q < 1e-12:
        return
    R = Q.to_matrix(q)
    p = Q.from_matrix(R)
    np.testing.assert_allclose(Q.to_matrix(p), R, atol=4e-15)
    qn = q / np.linalg.norm(q)
    assert abs(abs(p @ qn) - 1.0) < 1e-14


def test_large_batches_use_threads_consistently(rng):
    q = _random_quaternions(rng, 50000)
    v = rng.normal(size=(50000, 3))
    np.testing.assert_array_equal(Q.rotate(q, v)[:100], Q.rotate(q[:100], v[:100]))
    np.testing.assert_array_equal(Q.to_matrix(q)[-7:], Q.to_matrix(q[-7:]))


# ---- error paths ------------------------------------------------------------------------

def test_zero_quaternion_is_rejected():
    for f in (Q.inverse, Q.to_matrix, Q.log, Q.to_scipy):
        with pytest.raises(ValueError, match="`q` must hold nonzero quaternions"):
            f([0.0, 0.0, 0.0, 0.0])
    with pytest.raises(ValueError, match=r"entry \(1,\)"):
        Q.to_matrix([[1.0, 0, 0, 0], [0.0, 0, 0, 0]])
    with pytest.raises(ValueError, match="`q` must hold nonzero quaternions"):
        Q.rotate([1e-200, 0, 0, 0], [1.0, 0, 0])


def test_shapes_are_checked():
    with pytest.raises(ValueError, match=r"`q` must have shape \(\.\.\., 4\), got \(3,\)"):
        Q.to_matrix([1.0, 0, 0])
    with pytest.raises(ValueError, match=r"`p` must have shape \(\.\.\., 4\)"):
        Q.multiply([1.0, 0], [1.0, 0, 0, 0])
    with pytest.raises(ValueError, match="batch shapes of `p` .* and `q` .* do not broadcast"):
        Q.multiply(np.ones((2, 4)), np.ones((3, 4)))
    with pytest.raises(ValueError, match=r"`v` must have shape \(\.\.\., 3\)"):
        Q.rotate([1.0, 0, 0, 0], [1.0, 0])
    with pytest.raises(ValueError, match=r"`x` must have shape \(\.\.\., 3\)"):
        Q.exp_approx([0.1, 0.2])
    with pytest.raises(ValueError, match=r"shape \(4,\) or \(N, 4\)"):
        Q.to_scipy(np.ones((2, 2, 4)))
    with pytest.raises(ValueError, match="must be an array of shape"):
        Q.conjugate([[1.0, 0, 0, 0], [1.0, 0]])


def test_non_finite_and_types_are_rejected():
    with pytest.raises(ValueError, match="`q` must contain only finite values"):
        Q.to_matrix([np.nan, 0, 0, 1])
    with pytest.raises(ValueError, match="`q` must contain only finite values"):
        Q.conjugate([np.inf, 0, 0, 1])
    with pytest.raises(TypeError, match="`q` must be a real numeric array"):
        Q.conjugate(["w", "x", "y", "z"])
    with pytest.raises(TypeError, match="`rotation` must be a scipy Rotation"):
        Q.from_scipy(np.eye(3))
    with pytest.raises(ValueError, match="exp overflows"):
        Q.exp([1000.0, 0, 0, 0])
    for x in ([0.0, 1e200, 0.0], [0.0, 0.0, 1e200, 0.0]):  # |u|^2 overflows: no silent NaN
        with pytest.raises(ValueError, match=r"vector parts must have \|u\| < 1.34e154"):
            Q.exp(x)
    with pytest.raises(ValueError, match="`R` must hold rotation matrices"):
        Q.from_matrix(np.diag([-1.0, -1.0, -1.0]))
