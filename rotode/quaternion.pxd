# Quaternion kernels (layer 1): scalar-first [w, x, y, z], Hamilton product.
#
# Every kernel is a `noexcept nogil` inline function on raw pointers, written once in the fused
# scalar type `real` (double or dual, see rotode/dual.pxd) so that the same source gives values
# and forward-mode derivatives.  Inputs come first, outputs last (marked OUT); outputs must not
# alias inputs unless a kernel says so.  Nothing here validates: the Python facade in
# quaternion.pyx does.
# Star cimport: Cython only sees the non-member dual operators (double + dual, ...) this way.
from rotode.dual cimport *
from rotode._rodrigues cimport taylor_cos, taylor_sinc


# ---- products ---------------------------------------------------------------------------

cdef inline void quat_mul(const real* p, const real* q, real* out) noexcept nogil:
    """Hamilton product p * q (OUT: out[4]; may not alias p or q)."""
    out[0] = p[0] * q[0] - p[1] * q[1] - p[2] * q[2] - p[3] * q[3]
    out[1] = p[0] * q[1] + p[1] * q[0] + p[2] * q[3] - p[3] * q[2]
    out[2] = p[0] * q[2] - p[1] * q[3] + p[2] * q[0] + p[3] * q[1]
    out[3] = p[0] * q[3] + p[1] * q[2] - p[2] * q[1] + p[3] * q[0]


cdef inline void quat_mul_vec(const real* q, const real* v, real* out) noexcept nogil:
    """q * (0, v): product with a pure quaternion on the right (OUT: out[4])."""
    out[0] = -q[1] * v[0] - q[2] * v[1] - q[3] * v[2]
    out[1] = q[0] * v[0] + q[2] * v[2] - q[3] * v[1]
    out[2] = q[0] * v[1] - q[1] * v[2] + q[3] * v[0]
    out[3] = q[0] * v[2] + q[1] * v[1] - q[2] * v[0]


cdef inline void vec_mul_quat(const real* v, const real* q, real* out) noexcept nogil:
    """(0, v) * q: product with a pure quaternion on the left (OUT: out[4])."""
    out[0] = -v[0] * q[1] - v[1] * q[2] - v[2] * q[3]
    out[1] = v[0] * q[0] + v[1] * q[3] - v[2] * q[2]
    out[2] = -v[0] * q[3] + v[1] * q[0] + v[2] * q[1]
    out[3] = v[0] * q[2] - v[1] * q[1] + v[2] * q[0]


cdef inline void quat_conj(const real* q, real* out) noexcept nogil:
    """Conjugate [w, -x, -y, -z] (OUT: out[4]; may alias q)."""
    out[0] = q[0]
    out[1] = -q[1]
    out[2] = -q[2]
    out[3] = -q[3]


cdef inline real quat_norm2(const real* q) noexcept nogil:
    """Squared norm q . q = |q|^2."""
    return q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]


cdef inline void quat_inv(const real* q, real* out) noexcept nogil:
    """Inverse conj(q) / |q|^2 of a nonzero quaternion (OUT: out[4]; may alias q)."""
    cdef real s = 1.0 / quat_norm2(q)
    out[0] = q[0] * s
    out[1] = -q[1] * s
    out[2] = -q[2] * s
    out[3] = -q[3] * s


# ---- rotations --------------------------------------------------------------------------

cdef inline void quat_to_matrix(const real* q, real* R) noexcept nogil:
    """Row-major rotation matrix of ANY nonzero q: R(q) = R(q/|q|) (Rucker 2018 eq. 13).

    R = 1 + s (w [u]x + [u]x^2) with s = 2/|q|^2 and u the vector part (OUT: R[9]).
    """
    cdef real s = 2.0 / quat_norm2(q)
    cdef real wx = s * q[0] * q[1], wy = s * q[0] * q[2], wz = s * q[0] * q[3]
    cdef real xx = s * q[1] * q[1], xy = s * q[1] * q[2], xz = s * q[1] * q[3]
    cdef real yy = s * q[2] * q[2], yz = s * q[2] * q[3], zz = s * q[3] * q[3]
    R[0] = 1.0 - (yy + zz)
    R[1] = xy - wz
    R[2] = xz + wy
    R[3] = xy + wz
    R[4] = 1.0 - (xx + zz)
    R[5] = yz - wx
    R[6] = xz - wy
    R[7] = yz + wx
    R[8] = 1.0 - (xx + yy)


cdef inline void quat_rotate(const real* q, const real* v, real* out) noexcept nogil:
    """R(q) v for any nonzero q, without forming R (OUT: out[3]; may not alias v).

    v' = v + s (w (u x v) + u x (u x v)), s = 2/|q|^2 (Rucker 2018 eq. 13 applied to a vector).
    """
    cdef real s = 2.0 / quat_norm2(q)
    cdef real c0 = q[2] * v[2] - q[3] * v[1]
    cdef real c1 = q[3] * v[0] - q[1] * v[2]
    cdef real c2 = q[1] * v[1] - q[2] * v[0]
    out[0] = v[0] + s * (q[0] * c0 + q[2] * c2 - q[3] * c1)
    out[1] = v[1] + s * (q[0] * c1 + q[3] * c0 - q[1] * c2)
    out[2] = v[2] + s * (q[0] * c2 + q[1] * c1 - q[2] * c0)


cdef inline void quat_from_matrix(const real* R, real* q) noexcept nogil:
    """Unit quaternion with w >= 0 of a row-major rotation matrix (OUT: q[4]).

    Shepperd's method: the largest of 4w^2, 4x^2, 4y^2, 4z^2 is taken from the diagonal, the
    others from the off-diagonal sums/differences, so no branch divides by a small number.  The
    result is normalised, which also projects a slightly non-orthogonal R onto a rotation.
    """
    cdef real t = R[0] + R[4] + R[8]
    cdef real s, n
    if t >= R[0] and t >= R[4] and t >= R[8]:
        s = 2.0 * real_sqrt(1.0 + t)
        q[0] = 0.25 * s
        q[1] = (R[7] - R[5]) / s
        q[2] = (R[2] - R[6]) / s
        q[3] = (R[3] - R[1]) / s
    elif R[0] >= R[4] and R[0] >= R[8]:
        s = 2.0 * real_sqrt(1.0 + R[0] - R[4] - R[8])
        q[0] = (R[7] - R[5]) / s
        q[1] = 0.25 * s
        q[2] = (R[1] + R[3]) / s
        q[3] = (R[2] + R[6]) / s
    elif R[4] >= R[8]:
        s = 2.0 * real_sqrt(1.0 + R[4] - R[0] - R[8])
        q[0] = (R[2] - R[6]) / s
        q[1] = (R[1] + R[3]) / s
        q[2] = 0.25 * s
        q[3] = (R[5] + R[7]) / s
    else:
        s = 2.0 * real_sqrt(1.0 + R[8] - R[0] - R[4])
        q[0] = (R[3] - R[1]) / s
        q[1] = (R[2] + R[6]) / s
        q[2] = (R[5] + R[7]) / s
        q[3] = 0.25 * s
    n = 1.0 / real_sqrt(quat_norm2(q))
    if q[0] < 0.0:
        n = -n
    q[0] = q[0] * n
    q[1] = q[1] * n
    q[2] = q[2] * n
    q[3] = q[3] * n


# ---- exponential and logarithm ----------------------------------------------------------

cdef inline void quat_exp_pure(const real* x, real* out) noexcept nogil:
    """exp of the pure quaternion (0, x): [cos a, x sin(a)/a], a = |x| (OUT: out[4]).

    [NIRD] "Evaluating the Exponential Map".  For a^2 <= 1 both coefficients come from
    their Taylor polynomials in a^2 (no square root, exact at 0, differentiable with duals).
    """
    cdef real x2 = x[0] * x[0] + x[1] * x[1] + x[2] * x[2]
    cdef real c, s, a
    if x2 <= 1.0:
        c = taylor_cos(x2)
        s = taylor_sinc(x2)
    else:
        a = real_sqrt(x2)
        c = real_cos(a)
        s = real_sin(a) / a
    out[0] = c
    out[1] = s * x[0]
    out[2] = s * x[1]
    out[3] = s * x[2]


cdef inline void quat_exp(const real* q, real* out) noexcept nogil:
    """exp of a full quaternion: e^w exp((0, u)) (OUT: out[4]; may not alias q)."""
    cdef real e = real_exp(q[0])
    quat_exp_pure(&q[1], out)
    out[0] = e * out[0]
    out[1] = e * out[1]
    out[2] = e * out[2]
    out[3] = e * out[3]


cdef inline real atan_ratio(real s2, real w) noexcept nogil:
    """atan2(s, w)/s for s = sqrt(s2) >= 0 and (s, w) != 0.

    For w > 0 and t^2 = s2/w^2 <= 1e-2 it uses atan(t)/t = sum_k (-t^2)^k/(2k+1) through
    k = 8 (truncation t^18/19 < 1e-19), which needs no square root and is exact at s = 0; the
    crossover is kept high so that dual-number derivatives are accurate too.
    """
    cdef real t2, s
    if w > 0.0 and s2 <= 1e-2 * (w * w):
        t2 = s2 / (w * w)
        return (1.0 - t2 * (1.0 / 3.0 - t2 * (0.2 - t2 * (1.0 / 7.0 - t2 * (1.0 / 9.0 - t2 * (
            1.0 / 11.0 - t2 * (1.0 / 13.0 - t2 * (1.0 / 15.0 - t2 / 17.0)))))))) / w
    if s2 == 0.0:  # negative real quaternion: angle pi about an undefined axis
        return s2  # exactly 0 (returned as `real`)
    s = real_sqrt(s2)
    return real_atan2(s, w) / s


cdef inline void quat_log(const real* q, real* out) noexcept nogil:
    """log of a nonzero quaternion: [log|q|, u atan2(|u|, w)/|u|] (OUT: out[4]).

    A negative real quaternion has no unique logarithm; the rotation about x by pi is returned.
    """
    cdef real s2 = q[1] * q[1] + q[2] * q[2] + q[3] * q[3]
    cdef real f = atan_ratio(s2, q[0])
    out[0] = 0.5 * real_log(q[0] * q[0] + s2)
    if s2 == 0.0 and q[0] < 0.0:
        out[1] = <real>3.141592653589793
        out[2] = <real>0.0
        out[3] = <real>0.0
        return
    out[1] = f * q[1]
    out[2] = f * q[2]
    out[3] = f * q[3]


cdef inline void quat_exp_approx(const real* x, real* out) noexcept nogil:
    """[NIRD]'s trig-free normalised third-order exp of the pure quaternion (0, x).

    exp(X) ~ [(1 - |X|^2/2) + (1 - |X|^2/6) X] / sqrt((1 - |X|^2/2)^2 + (1 - |X|^2/6)^2 |X|^2)
    ([NIRD] "Evaluating the Exponential Map"); always a unit quaternion (OUT: out[4]).
    """
    cdef real x2 = x[0] * x[0] + x[1] * x[1] + x[2] * x[2]
    cdef real a, b, n
    if x2 > 1e100:  # b^2 x2 ~ x2^3/36 would overflow (|x| > 1e51): a and b scaled by 1/x2
        a = 1.0 / x2 - 0.5
        b = 1.0 / x2 - 1.0 / 6.0
    else:
        a = 1.0 - 0.5 * x2
        b = 1.0 - x2 / 6.0
    n = 1.0 / real_sqrt(a * a + b * b * x2)
    out[0] = a * n
    out[1] = b * n * x[0]
    out[2] = b * n * x[1]
    out[3] = b * n * x[2]
