// Rodrigues' formula R(v) = cos(a) 1 + S1 [v]x + S2 v v^T, a = |v|, x = a^2, with
// S1 = sin(a)/a and S2 = (1 - cos a)/a^2, for rotode/so3.pxd and rotode/quaternion.pxd.
//
// Mizerski 2020 sec. 2 (restated in docs/references.md): the coefficients are even
// functions of a, so they are evaluated from x without a square root near 0.  Four ranges of x:
//   x <= 1       Taylor polynomials in x (degree 9, first omitted term < 2**-60 relative);
//   1 < x <= 4   the double-angle identity R(v) = R(v/2)^2 on the polynomials at x/4;
//   4 < x <= 16  the half angle h = a/2 through its complement e = pi/2 - h (|e| <= 0.58, formed
//                with pi/2 split into two doubles): sin h = cos e and cos h = sin e from the
//                same two polynomials at e^2, so cos h keeps full relative precision as a -> pi;
//   x > 16       the library sine and cosine of h.
// All three polynomial ranges evaluate the same pair (sinc, s2) at one argument t <= 1, which is
// what lets `rodrigues_select` below run branch-free: it computes every range's combination and
// selects, so the compiler vectorises the batch loop of so3.exp (`so3_exp_rows` of
// rotode/_rows.hpp), and it gives the same bits as the branching scalar code (same operations in
// the same order; tested).
//
// Everything is a template over the scalar type so that the double path and the dual-number
// path (rotode/_dual.hpp, forward-mode Jacobians) are one source.
#ifndef ROTODE_RODRIGUES_HPP
#define ROTODE_RODRIGUES_HPP

#include <cfloat>
#include <cmath>
#include <cstddef>

#include "_dual.hpp"

#if defined(__GNUC__)
#define ROTODE_ALWAYS_INLINE inline __attribute__((always_inline))
#else
#define ROTODE_ALWAYS_INLINE inline
#endif

namespace rotode {

// pi/2 = PIO2_HI + PIO2_LO to about 2**-107 (Cody and Waite's argument reduction)
const double PIO2_HI = 1.5707963267948966;
const double PIO2_LO = 6.123233995736766e-17;

// ---- Taylor polynomials in x = a^2 (valid for x <= 1) ---------------------------------------

// cos(a), degree 9, truncation < 2**-60
template <class T> ROTODE_ALWAYS_INLINE T taylor_cos(T x) {
    return 1.0 - x * (0.5 - x * (0.041666666666666664 - x * (0.001388888888888889 - x * (
        2.48015873015873e-05 - x * (2.755731922398589e-07 - x * (2.08767569878681e-09 - x * (
            1.1470745597729725e-11 - x * (4.779477332387385e-14
                                          - x * 1.5619206968586225e-16))))))));
}

// sin(a)/a = sum_k (-x)^k/(2k+1)!, k <= 9
template <class T> ROTODE_ALWAYS_INLINE T taylor_sinc(T x) {
    return 1.0 - x * (0.16666666666666666 - x * (0.008333333333333333 - x * (
        0.0001984126984126984 - x * (2.7557319223985893e-06 - x * (
            2.505210838544172e-08 - x * (1.6059043836821613e-10 - x * (
                7.647163731819816e-13 - x * (2.8114572543455206e-15
                                             - x * 8.22063524662433e-18))))))));
}

// (1 - cos a)/a^2 = sum_k (-x)^k/(2k+2)!, k <= 9
template <class T> ROTODE_ALWAYS_INLINE T taylor_s2(T x) {
    return 0.5 - x * (0.041666666666666664 - x * (0.001388888888888889 - x * (
        2.48015873015873e-05 - x * (2.755731922398589e-07 - x * (2.08767569878681e-09 - x * (
            1.1470745597729725e-11 - x * (4.779477332387385e-14 - x * (
                1.5619206968586225e-16 - x * 4.110317623312165e-19))))))));
}

// (a - sin a)/a^3 = sum_k (-x)^k/(2k+3)!, k <= 9
template <class T> ROTODE_ALWAYS_INLINE T taylor_s3(T x) {
    return 0.16666666666666666 - x * (0.008333333333333333 - x * (0.0001984126984126984 - x * (
        2.7557319223985893e-06 - x * (2.505210838544172e-08 - x * (
            1.6059043836821613e-10 - x * (7.647163731819816e-13 - x * (
                2.8114572543455206e-15 - x * (8.22063524662433e-18
                                              - x * 1.9572941063391263e-20))))))));
}

// The same four polynomials on dual numbers by the chain rule, P(x) = (P(x.v), P'(x.v) x.d):
// the value by the double polynomial above (the plain run's bits), the derivative by the
// derivative polynomial in doubles (its coefficients k a_k exact to rounding), then one
// scaling of the tangents.  Evaluating P on duals term by term cost a product of duals per
// term (about five vector instructions each); these overloads are chosen over the templates
// for `dual` arguments wherever the templates call them (the tangents of the RKMK and Lie
// group steps, the Jacobians of the kernels), and change the tangents by rounding only.
ROTODE_ALWAYS_INLINE double taylor_cos_derivative(double x) {
    return -0.5 + x * (0.08333333333333333 + x * (-0.004166666666666667 + x * (
        9.92063492063492e-05 + x * (-1.3778659611992946e-06 + x * (1.252605419272086e-08 + x * (
            -8.029521918410807e-11 + x * (3.823581865909908e-13
                                          + x * -1.4057286271727603e-15)))))));
}
ROTODE_ALWAYS_INLINE double taylor_sinc_derivative(double x) {
    return -0.16666666666666666 + x * (0.016666666666666666 + x * (-0.0005952380952380953 + x * (
        1.1022927689594357e-05 + x * (-1.252605419272086e-07 + x * (9.635426302092969e-10 + x * (
            -5.353014612273871e-12 + x * (2.2491658034764165e-14
                                          + x * -7.398571721961897e-17)))))));
}
ROTODE_ALWAYS_INLINE double taylor_s2_derivative(double x) {
    return -0.041666666666666664 + x * (0.002777777777777778 + x * (-7.440476190476191e-05 + x * (
        1.1022927689594355e-06 + x * (-1.043837849393405e-08 + x * (6.882447358637835e-11 + x * (
            -3.3456341326711696e-13 + x * (1.249536557486898e-15
                                           + x * -3.6992858609809485e-18)))))));
}
ROTODE_ALWAYS_INLINE double taylor_s3_derivative(double x) {
    return -0.008333333333333333 + x * (0.0003968253968253968 + x * (-8.267195767195768e-06 + x * (
        1.0020843354176688e-07 + x * (-8.029521918410807e-10 + x * (4.58829823909189e-12 + x * (
            -1.9680200780418645e-14 + x * (6.576508197299464e-17
                                           + x * -1.7615646957052136e-19)))))));
}
ROTODE_ALWAYS_INLINE dual taylor_cos(dual x) {
    return chain(x, taylor_cos(x.v), taylor_cos_derivative(x.v));
}
ROTODE_ALWAYS_INLINE dual taylor_sinc(dual x) {
    return chain(x, taylor_sinc(x.v), taylor_sinc_derivative(x.v));
}
ROTODE_ALWAYS_INLINE dual taylor_s2(dual x) { return chain(x, taylor_s2(x.v), taylor_s2_derivative(x.v)); }
ROTODE_ALWAYS_INLINE dual taylor_s3(dual x) { return chain(x, taylor_s3(x.v), taylor_s3_derivative(x.v)); }
template <int H> ROTODE_ALWAYS_INLINE dualp<H> taylor_cos(dualp<H> x) {
    return chain(x, taylor_cos(value(x)), taylor_cos_derivative(value(x)));
}
template <int H> ROTODE_ALWAYS_INLINE dualp<H> taylor_sinc(dualp<H> x) {
    return chain(x, taylor_sinc(value(x)), taylor_sinc_derivative(value(x)));
}
template <int H> ROTODE_ALWAYS_INLINE dualp<H> taylor_s2(dualp<H> x) {
    return chain(x, taylor_s2(value(x)), taylor_s2_derivative(value(x)));
}
template <int H> ROTODE_ALWAYS_INLINE dualp<H> taylor_s3(dualp<H> x) {
    return chain(x, taylor_s3(value(x)), taylor_s3_derivative(value(x)));
}

// ---- the ranges of Rodrigues' coefficients --------------------------------------------------

// 1 < x <= 4 from P = sinc, Q = s2 at x/4: with A = S1(a/2)/2 = P/2 and B = S2(a/2)/4 = Q/4,
// R(v) = R(v/2)^2 gives S1 = 2A (1 - B x) and S2 = 2B + A^2 - B^2 x.
template <class T>
ROTODE_ALWAYS_INLINE void rodrigues_double_angle(T x, T P, T Q, T* s1, T* s2) {
    T A = 0.5 * P;
    T B = 0.25 * Q;
    *s1 = 2.0 * A * (1.0 - B * x);
    *s2 = 2.0 * B + A * A - B * B * x;
}

// e = pi/2 - a/2; PIO2_HI - a/2 is exact for 1 <= a/2 <= pi (Sterbenz)
template <class T> ROTODE_ALWAYS_INLINE T half_angle_complement(T a) {
    return (PIO2_HI - 0.5 * a) + PIO2_LO;
}

// 4 < x <= 16 from P = sinc, Q = s2 at t = e^2: sin(a/2) = cos e = 1 - t Q and
// cos(a/2) = sin e = e P; S1 = 2 (sin(a/2)/a) cos(a/2), S2 = 2 (sin(a/2)/a)^2.
template <class T>
ROTODE_ALWAYS_INLINE void rodrigues_complement(T a, T e, T t, T P, T Q, T* s1, T* s2) {
    T g = (1.0 - t * Q) / a;
    *s1 = 2.0 * g * (e * P);
    *s2 = 2.0 * g * g;  // 2 sin^2(a/2)/a^2: no cancellation
}

// x > 16 from the library sine and cosine of a/2
template <class T> inline void rodrigues_large(T x, T* s1, T* s2) {
    T a = sqrt(x);
    T g = sin(0.5 * a) / a;
    *s1 = 2.0 * g * cos(0.5 * a);
    *s2 = 2.0 * g * g;
}

// S1(a), S2(a) from x = a^2 (OUT: s1, s2); for double and dual
template <class T> inline void so3_exp_coefficients(T x, T* s1, T* s2) {
    if (x <= 1.0) {
        *s1 = taylor_sinc(x);
        *s2 = taylor_s2(x);
    } else if (x <= 4.0) {
        T t = 0.25 * x;
        rodrigues_double_angle(x, taylor_sinc(t), taylor_s2(t), s1, s2);
    } else if (x <= 16.0) {
        T a = sqrt(x);
        T e = half_angle_complement(a);
        T t = e * e;
        rodrigues_complement(a, e, t, taylor_sinc(t), taylor_s2(t), s1, s2);
    } else {
        rodrigues_large(x, s1, s2);
    }
}

// S1(a), S2(a), S3(a) = (a - sin a)/a^3 shared by R(v) and T(v) = dexp(v), from x = a^2
// (OUT: s1, s2, s3); for double and dual.  x <= 1: the Taylor polynomials; 1 < x <= 4:
// R(v) = R(v/2)^2 and T(v) = (1 + R(v/2)) T(v/2)/2 with A = S1(a/2)/2, B = S2(a/2)/4,
// D = S3(a/2)/4 (and S2(a/2)/2 = 2B):
//     S1 = 2A (1 - B x),  S2 = 2B + A^2 - B^2 x,  S3 = D + A B + B/2 - B D x/2;
// above, S1 and S2 of `so3_exp_coefficients` (bit for bit) and S3 = (1 - S1)/x, which loses
// under one ulp for a > 2 (Mizerski 2020 secs. 2-3; rotode/so3.pxd).
template <class T> inline void so3_coefficients(T x, T* s1, T* s2, T* s3) {
    if (x <= 1.0) {
        *s1 = taylor_sinc(x);
        *s2 = taylor_s2(x);
        *s3 = taylor_s3(x);
    } else if (x <= 4.0) {
        T t = 0.25 * x;
        T P = taylor_sinc(t);
        T Q = taylor_s2(t);
        rodrigues_double_angle(x, P, Q, s1, s2);
        T A = 0.5 * P;
        T B = 0.25 * Q;
        T D = 0.25 * taylor_s3(t);
        *s3 = D + A * B + 0.5 * B - 0.5 * B * D * x;
    } else {
        so3_exp_coefficients(x, s1, s2);
        *s3 = (1.0 - *s1) / x;
    }
}

// Estrin's scheme for the polynomial sum_{k<N} c[k] x^k of degree 20 or 21 (N = 21, 22): pairs
// c[2k] + c[2k+1] x, then pairs of those with x^2, x^4, x^8, x^16 (for double, the duals and the
// lanes' vectors)
template <int N, class T> ROTODE_ALWAYS_INLINE T estrin_21(const double (&c)[N], const T& x) {
    static_assert(N == 21 || N == 22, "a polynomial of degree 20 or 21");
    const T x2 = x * x;
    const T x4 = x2 * x2;
    const T x8 = x4 * x4;
    const T x16 = x8 * x8;
    const T q0 = (c[0] + c[1] * x) + (c[2] + c[3] * x) * x2;
    const T q1 = (c[4] + c[5] * x) + (c[6] + c[7] * x) * x2;
    const T q2 = (c[8] + c[9] * x) + (c[10] + c[11] * x) * x2;
    const T q3 = (c[12] + c[13] * x) + (c[14] + c[15] * x) * x2;
    const T q4 = (c[16] + c[17] * x) + (c[18] + c[19] * x) * x2;
    const T r0 = q0 + q1 * x4, r1 = q2 + q3 * x4;
    T r2;
    if constexpr (N == 22) r2 = q4 + (c[20] + c[21] * x) * x4;
    else r2 = q4 + c[20] * x4;
    return (r0 + r1 * x8) + r2 * x16;
}

// C(a) = (1 - (a/2) cot(a/2))/a^2 of T(v)^-1 = 1 - K/2 + C K^2 from x = a^2 (a < 2 pi); for
// double, dual and the lanes' vectors (rotode/_lanes_erk.hpp).  For x <= 6.25 the series
// C = sum_{n>=1} |B_2n| x^(n-1)/(2n)! (Bernoulli numbers) through n = 22 (truncation < 1e-19
// relative), evaluated by Estrin's scheme (Estrin, "Organization of computer systems: the fixed
// plus variable structure computer", Proc. Western Joint Computer Conference, 1960; Knuth, TAOCP
// vol. 2, 3rd ed., sec. 4.6.4): pairs a_2k + a_2k+1 x, then pairs of those with x^2, x^4, x^8,
// x^16.  Its chain of dependent operations is 5 multiply-adds deep where Horner's is 21 (the
// series was the largest single cost of an RKMK step: every evaluation of f calls it); all
// terms are positive, so neither scheme has cancellation, and both round within a few ulp.

// |B_2n|/(2n)!, n = 1..22: the coefficients of that series
constexpr double SO3_DEXP_INV_SERIES[22] = {
    0.08333333333333333, 0.001388888888888889, 3.306878306878307e-05, 8.267195767195768e-07,
    2.08767569878681e-08, 5.284190138687493e-10, 1.3382536530684679e-11, 3.3896802963225827e-13,
    8.586062056277845e-15, 2.174868698558062e-16, 5.5090028283602295e-18,
    1.3954464685812522e-19, 3.534707039629467e-21, 8.953517427037546e-23, 2.267952452337683e-24,
    5.744790668872202e-26, 1.455172475614865e-27, 3.6859949406653103e-29, 9.336734257095045e-31,
    2.36502241570063e-32, 5.990671762482134e-34, 1.5174548844682903e-35};

// (n - 1) |B_2n|/(2n)!, n = 2..22: those of its derivative
constexpr double SO3_DEXP_INV_SERIES_DERIVATIVE[21] = {
    0.001388888888888889, 6.613756613756614e-05, 2.48015873015873e-06, 8.35070279514724e-08,
    2.6420950693437467e-09, 8.029521918410807e-11, 2.372776207425808e-12, 6.868849645022276e-14,
    1.9573818287022555e-15, 5.5090028283602297e-17, 1.5349911154393775e-18,
    4.241648447555361e-20, 1.163957265514881e-21, 3.1751334332727565e-23, 8.617186003308303e-25,
    2.328275960983784e-26, 6.266191399131027e-28, 1.6806121662771081e-29,
    4.4935425898311966e-31, 1.1981343524964268e-32, 3.1866552573834097e-34};

template <class T> ROTODE_ALWAYS_INLINE T so3_dexp_inv_series(const T& x) {
    return estrin_21(SO3_DEXP_INV_SERIES, x);
}

// d/dx of so3_dexp_inv_series: sum_{n>=2} (n - 1) |B_2n| x^(n-2)/(2n)! through n = 22, by the
// same Estrin scheme on doubles
ROTODE_ALWAYS_INLINE double so3_dexp_inv_series_derivative(double x) {
    return estrin_21(SO3_DEXP_INV_SERIES_DERIVATIVE, x);
}

// the series on a dual by the chain rule (as the Taylor polynomials above)
ROTODE_ALWAYS_INLINE dual so3_dexp_inv_series(const dual& x) {
    return chain(x, so3_dexp_inv_series(x.v), so3_dexp_inv_series_derivative(x.v));
}
template <int H>
ROTODE_ALWAYS_INLINE dualp<H> so3_dexp_inv_series(const dualp<H>& x) {
    return chain(x, so3_dexp_inv_series(value(x)), so3_dexp_inv_series_derivative(value(x)));
}

template <class T> ROTODE_ALWAYS_INLINE T so3_dexp_inv_coefficient(T x) {
    if (x <= 6.25) return so3_dexp_inv_series(x);
    T h = 0.5 * sqrt(x);
    return (1.0 - h * cos(h) / sin(h)) / x;
}

// T(v)^-1 w = w - v x w / 2 + C v x (v x w) without forming the matrix (OUT: out[3]; may not
// alias v or w); for double and dual
template <class T> ROTODE_ALWAYS_INLINE void so3_dexp_inv_apply(const T* v, const T* w, T* out) {
    T x = v[0] * v[0] + v[1] * v[1] + v[2] * v[2];
    T c = so3_dexp_inv_coefficient(x);
    T c0 = v[1] * w[2] - v[2] * w[1];
    T c1 = v[2] * w[0] - v[0] * w[2];
    T c2 = v[0] * w[1] - v[1] * w[0];
    out[0] = w[0] - 0.5 * c0 + c * (v[1] * c2 - v[2] * c1);
    out[1] = w[1] - 0.5 * c1 + c * (v[2] * c0 - v[0] * c2);
    out[2] = w[2] - 0.5 * c2 + c * (v[0] * c1 - v[1] * c0);
}

// The same for x <= 16 without branches: every range's combination, then a selection (values
// of the unselected ranges may be inf or NaN, e.g. at x = 0, and are discarded).
ROTODE_ALWAYS_INLINE void rodrigues_select(double x, double* s1, double* s2) {
    double a = std::sqrt(x);
    double e = half_angle_complement(a);
    bool small = x <= 1.0;
    bool middle = x <= 4.0;
    double t = small ? x : (middle ? 0.25 * x : e * e);
    double P = taylor_sinc(t);
    double Q = taylor_s2(t);
    double d1, d2, c1, c2;
    rodrigues_double_angle(x, P, Q, &d1, &d2);
    rodrigues_complement(a, e, t, P, Q, &c1, &c2);
    *s1 = small ? P : (middle ? d1 : c1);
    *s2 = small ? Q : (middle ? d2 : c2);
}

// M = alpha 1 + beta [v]x + gamma v v^T (OUT: M[9], row-major)
template <class T>
ROTODE_ALWAYS_INLINE void axis_matrix(const T* v, T alpha, T beta, T gamma, T* M) {
    T bx = beta * v[0], by = beta * v[1], bz = beta * v[2];
    T gx = gamma * v[0], gy = gamma * v[1], gz = gamma * v[2];
    M[0] = alpha + gx * v[0];
    M[1] = gx * v[1] - bz;
    M[2] = gx * v[2] + by;
    M[3] = gy * v[0] + bz;
    M[4] = alpha + gy * v[1];
    M[5] = gy * v[2] - bx;
    M[6] = gz * v[0] - by;
    M[7] = gz * v[1] + bx;
    M[8] = alpha + gz * v[2];
}

}  // namespace rotode

#endif  // ROTODE_RODRIGUES_HPP
