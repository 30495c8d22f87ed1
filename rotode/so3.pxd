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
from rotode._rodrigues cimport (
    taylor_sinc, taylor_s2, taylor_s3, so3_exp_coefficients, rodrigues_double_angle, axis_matrix)
from rotode.quaternion cimport quat_from_matrix, atan_ratio


cdef inline void so3_coefficients(real x, real* s1, real* s2, real* s3) noexcept nogil:
    """S1(a), S2(a), S3(a) shared by R(v) and T(v), from x = a^2 (OUT: s1, s2, s3)."""
    cdef real t, P, Q, A, B, D
    if x <= 1.0:
        s1[0] = taylor_sinc(x)
        s2[0] = taylor_s2(x)
        s3[0] = taylor_s3(x)
    elif x <= 4.0:
        # R(v) = R(v/2)^2 and T(v) = (1 + R(v/2)) T(v/2)/2 with A = S1(a/2)/2,
        # B = S2(a/2)/4, D = S3(a/2)/4 (and S2(a/2)/2 = 2B):
        #   S1 = 2A (1 - B x),  S2 = 2B + A^2 - B^2 x,  S3 = D + A B + B/2 - B D x/2
        t = 0.25 * x
        P = taylor_sinc(t)
        Q = taylor_s2(t)
        rodrigues_double_angle(x, P, Q, s1, s2)
        A = 0.5 * P
        B = 0.25 * Q
        D = 0.25 * taylor_s3(t)
        s3[0] = D + A * B + 0.5 * B - 0.5 * B * D * x
    else:
        # same S1, S2 as so3_exp (bit for bit); S3 = (1 - S1)/x loses under one ulp for a > 2
        so3_exp_coefficients(x, s1, s2)
        s3[0] = (1.0 - s1[0]) / x
    return


cdef inline real so3_dexp_inv_coefficient(real x) noexcept nogil:
    """C(a) = (1 - (a/2) cot(a/2))/a^2 of T(v)^-1 from x = a^2 (a < 2 pi).

    For x <= 6.25 the series C = sum_{n>=1} |B_2n| x^(n-1)/(2n)! (Bernoulli numbers; all terms
    positive, so Horner has no cancellation) is used through n = 22 (truncation < 1e-19
    relative); above, the closed form, whose cancellation is below one ulp there.
    """
    cdef real h, c
    if x <= 6.25:
        c = 1.5174548844682903e-35
        c = 5.990671762482134e-34 + x * c
        c = 2.36502241570063e-32 + x * c
        c = 9.336734257095045e-31 + x * c
        c = 3.6859949406653103e-29 + x * c
        c = 1.455172475614865e-27 + x * c
        c = 5.744790668872202e-26 + x * c
        c = 2.267952452337683e-24 + x * c
        c = 8.953517427037546e-23 + x * c
        c = 3.534707039629467e-21 + x * c
        c = 1.3954464685812522e-19 + x * c
        c = 5.5090028283602295e-18 + x * c
        c = 2.174868698558062e-16 + x * c
        c = 8.586062056277845e-15 + x * c
        c = 3.3896802963225827e-13 + x * c
        c = 1.3382536530684679e-11 + x * c
        c = 5.284190138687493e-10 + x * c
        c = 2.08767569878681e-08 + x * c
        c = 8.267195767195768e-07 + x * c
        c = 3.306878306878307e-05 + x * c
        c = 0.001388888888888889 + x * c
        c = 0.08333333333333333 + x * c
        return c
    h = 0.5 * real_sqrt(x)
    return (1.0 - h * real_cos(h) / real_sin(h)) / x


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


cdef inline void so3_dexp_inv_apply(const real* v, const real* w, real* out) noexcept nogil:
    """T(v)^-1 w = w - v x w / 2 + C v x (v x w) without forming the matrix (OUT: out[3])."""
    cdef real x = v[0] * v[0] + v[1] * v[1] + v[2] * v[2]
    cdef real c = so3_dexp_inv_coefficient(x)
    cdef real c0 = v[1] * w[2] - v[2] * w[1]
    cdef real c1 = v[2] * w[0] - v[0] * w[2]
    cdef real c2 = v[0] * w[1] - v[1] * w[0]
    out[0] = w[0] - 0.5 * c0 + c * (v[1] * c2 - v[2] * c1)
    out[1] = w[1] - 0.5 * c1 + c * (v[2] * c0 - v[0] * c2)
    out[2] = w[2] - 0.5 * c2 + c * (v[0] * c1 - v[1] * c0)


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
