# SO(3) kernels (layer 1): rotation vectors (exponential coordinates), Rodrigues' formula, the
# derivative of the exponential T(v) = dexp(v) and its inverse, and the logarithm.
#
# Notation of Mizerski 2020 secs. 2-3 (restated in docs/references.md): v a rotation
# vector, a = |v|, x = a^2, K = [v]x,
#     R(v)      = 1 + S1 K + S2 K^2,     S1 = sin(a)/a,  S2 = (1 - cos a)/a^2
#     T(v)      = 1 + S2 K + S3 K^2,     S3 = (a - sin a)/a^3
#     T(v)^-1   = 1 - K/2 + C K^2,       C  = (1 - (a/2) cot(a/2))/a^2
# Matrices are row-major 3x3 (9 doubles).  Since K^2 = v v^T - x 1, every matrix above is
# (alpha 1 + beta K + gamma v v^T) and is assembled by `axis_matrix`.
#
# Coefficients are evaluated in four ranges of x (Mizerski 2020 sec. 2, thresholds moved for double
# precision; the S1, S2 part lives in rotode/_rodrigues.hpp):  x <= 1: Taylor polynomials in x
# (no square root, exact at 0, differentiable with duals; first omitted term < 2**-60);
# 1 < x <= 4: the double-angle identities R(v) = R(v/2)^2 and T(v) = (1 + R(v/2)) T(v/2)/2
# applied to the coefficients at a/2;  4 < x <= 16: the half angle through its complement
# pi/2 - a/2 and the same polynomials;  x > 16: the library sine and cosine.  Above x = 4,
# S3 = (1 - S1)/x, where the cancellation in a - sin a costs less than one ulp.
# Star cimport: Cython only sees the non-member dual operators (double + dual, ...) this way.
from rotode.dual cimport *
# so3_coefficients (S1, S2, S3), so3_dexp_inv_coefficient (C) and so3_dexp_inv_apply (T(v)^-1 w)
# live in rotode/_rodrigues.hpp, one C++ source for these kernels and the specialised engine's
# Lie-group models (rotode/_rkmk.hpp); cimported here so that `from rotode.so3 cimport` finds them.
from rotode._rodrigues cimport (
    so3_exp_coefficients, axis_matrix, so3_coefficients, so3_dexp_inv_coefficient,
    so3_dexp_inv_apply)
from rotode.quaternion cimport quat_from_matrix, atan_ratio


# ---- matrices ---------------------------------------------------------------------------

cdef inline void so3_hat(const real* v, real* K) noexcept nogil:
    """Cross-product matrix [v]x, so that [v]x y = v x y (OUT: K[9])."""
    K[0] = 0.0
    K[1] = -v[2]
    K[2] = v[1]
    K[3] = v[2]
    K[4] = 0.0
    K[5] = -v[0]
    K[6] = -v[1]
    K[7] = v[0]
    K[8] = 0.0


cdef inline void so3_vee(const real* K, real* v) noexcept nogil:
    """Inverse of hat for the skew part of K: v = ((K21 - K12), (K02 - K20), (K10 - K01))/2."""
    v[0] = 0.5 * (K[7] - K[5])
    v[1] = 0.5 * (K[2] - K[6])
    v[2] = 0.5 * (K[3] - K[1])


cdef inline void so3_exp(const real* v, real* R) noexcept nogil:
    """Rodrigues' formula R(v) = cos(a) 1 + S1 [v]x + S2 v v^T (OUT: R[9]).

    Notes eq. "R(v)"; Mizerski 2020 sec. 2.  cos(a) = 1 - S2 x.
    """
    cdef real x = v[0] * v[0] + v[1] * v[1] + v[2] * v[2]
    cdef real s1, s2
    so3_exp_coefficients(x, &s1, &s2)
    axis_matrix(v, 1.0 - s2 * x, s1, s2, R)


cdef inline void so3_dexp(const real* v, real* T) noexcept nogil:
    """T(v) = dexp(v) = S1 1 + S2 [v]x + S3 v v^T (OUT: T[9]); Mizerski 2020 sec. 3."""
    cdef real x = v[0] * v[0] + v[1] * v[1] + v[2] * v[2]
    cdef real s1, s2, s3
    so3_coefficients(x, &s1, &s2, &s3)
    axis_matrix(v, s1, s2, s3, T)


cdef inline void so3_exp_and_dexp(const real* v, real* R, real* T) noexcept nogil:
    """R(v) and T(v) from one set of coefficients (Mizerski 2020 sec. 3) (OUT: R[9], T[9])."""
    cdef real x = v[0] * v[0] + v[1] * v[1] + v[2] * v[2]
    cdef real s1, s2, s3
    so3_coefficients(x, &s1, &s2, &s3)
    axis_matrix(v, 1.0 - s2 * x, s1, s2, R)
    axis_matrix(v, s1, s2, s3, T)


cdef inline void so3_dexp_inv(const real* v, real* Ti) noexcept nogil:
    """T(v)^-1 = (1 - C x) 1 - [v]x/2 + C v v^T for |v| < 2 pi (OUT: Ti[9])."""
    cdef real x = v[0] * v[0] + v[1] * v[1] + v[2] * v[2]
    cdef real c = so3_dexp_inv_coefficient(x)
    cdef real minus_half = -0.5
    axis_matrix(v, 1.0 - c * x, minus_half, c, Ti)


cdef inline void so3_log(const real* R, real* v) noexcept nogil:
    """Rotation vector of a rotation matrix, |v| <= pi (OUT: v[3]).

    Through the unit quaternion q = (w, u), w >= 0, of Shepperd's method: v = 2 atan2(|u|, w)
    u/|u|, accurate near 0 (series of atan(t)/t) and near pi (w -> 0, no division by sin).
    """
    cdef real q[4]
    cdef real f
    quat_from_matrix(R, q)
    f = 2.0 * atan_ratio(q[1] * q[1] + q[2] * q[2] + q[3] * q[3], q[0])
    v[0] = f * q[1]
    v[1] = f * q[2]
    v[2] = f * q[3]
