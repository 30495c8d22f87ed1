// Runge-Kutta-Munthe-Kaas on the rotation group: the kernels of the algebra equation of one step
// and the change of local coordinates between steps, one C++ source for the driver's loop
// (rotode/rkmk.pxd declares them for rotode/dynamic.pyx and kinematic.pyx) and the specialised
// engine's Lie-group models (rotode/_models.hpp).
//
// Munthe-Kaas, "Runge-Kutta methods on Lie groups", BIT 38 (1998) 92-111, and "High order
// Runge-Kutta methods on manifolds", Appl. Numer. Math. 29 (1999) 115-127; Hairer, Lubich &
// Wanner, "Geometric Numerical Integration" (2nd ed., 2006), sec. IV.8.2, eq. (8.9).  A step
// from q_n writes
//     body frame  : q(t) = q_n exp(v(t)/2),  v' = T(-v)^-1 w_body   (q' = 1/2 q w_body)
//     world frame : q(t) = exp(v(t)/2) q_n,  v' = T(v)^-1 w_world    (q' = 1/2 w_world q)
// with v(t_n) = 0 and T(v) = dexp(v) (rotode/_rodrigues.hpp, Mizerski 2020 sec. 3; T(-v) is the
// right Jacobian of SO(3)); any explicit Runge-Kutta pair advances v (and the rigid body's w) as
// a vector ODE, and |q| stays 1 since exp(v/2) is a unit quaternion (q0 is normalised; the
// product's rounding is removed after each step by `rkmk_retract`).
//
// The operations are those of the Cython kernels they replace, in the same order (with
// -ffp-contract=off, setup.py): the same bits.  Templates over the value type T (double; the
// dual numbers of rotode/_dual.hpp compile too), as rotode/_rodrigues.hpp.  The helpers a stage
// evaluates are always inlined: a plain `inline` template is not inlined into a function
// compiled for another instruction set (GCC's target check), so the AVX-512 tangent entries
// called baseline (SSE2) copies of them through the PLT, half of an rkmk8 tangent step's time.
#pragma once

#include <cmath>

#include "_dual.hpp"
#include "_rodrigues.hpp"

namespace rotode {

// rotode/equations.pxd's FRAME_BODY: w given in the body frame
constexpr int RKMK_FRAME_BODY = 0;

// The largest rotation (rad) one controlled step may take in local coordinates: pi, half way to
// the chart's singularity at 2 pi (dexp^-1 has poles at |v| = 2 pi k), which a rate the error
// estimate finds exact (a constant one) would otherwise reach.  Events closer than that need
// `max_step` (docs/events.md).
inline double rkmk_max_step_angle() { return 3.141592653589793; }

// The largest rotation |v_j| of a step's `blocks` rotation vectors z[3j:3j+3] (blocks >= 1; a
// NaN in any of them gives NaN): what a controlled step compares with rkmk_max_step_angle, so
// that no quaternion block of a state turns past the chart's bound in one step
inline double rkmk_step_angle(const double* z, int blocks) {
    double angle = std::sqrt(z[0] * z[0] + z[1] * z[1] + z[2] * z[2]);
    for (int j = 1; j < blocks; ++j) {
        const double* v = z + 3 * j;
        const double a = std::sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
        if (!(a <= angle)) angle = a;
    }
    return angle;
}

// q / |q| (the base of the first step) (IN/OUT: q[4], nonzero)
template <class T> inline void rkmk_unit(T* q) {
    T s = 1.0 / sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
    q[0] = q[0] * s;
    q[1] = q[1] * s;
    q[2] = q[2] * s;
    q[3] = q[3] * s;
}

// q (3 - |q|^2)/2: one Newton step of |q| = 1 (IN/OUT: q[4], |q| = 1 + O(eps)).  q_n exp(v/2)
// is a product of unit quaternions, but each product rounds: over 1e5 steps |q| - 1
// random-walks to ~1e-13.  This step removes the O(eps) excess quadratically (a change of
// ~1e-16, no square root), so |q| - 1 stays at round-off for any run length.
template <class T> inline void rkmk_retract(T* q) {
    T s = 1.5 - 0.5 * (q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
    q[0] = q[0] * s;
    q[1] = q[1] * s;
    q[2] = q[2] * s;
    q[3] = q[3] * s;
}

// The base of a run's first step from its y0 (IN/OUT: q[4], nonzero): q/|q|, or, when y0 is the
// row stored at the end of an accepted step of an earlier call (`resume`), that row retracted,
// as the step's accept made its base (a continued run keeps its bits).
template <class T> inline void rkmk_base(T* q, bool resume) {
    if (resume) rkmk_retract(q);
    else rkmk_unit(q);
}

// v' of the algebra equation: T(-v)^-1 w (body) or T(v)^-1 w (world) (OUT: dv[3]; may not
// alias v or w).  Valid for |v| < 2 pi (T^-1 is singular there); a step rotates by |v|.
template <class T>
ROTODE_ALWAYS_INLINE void rkmk_rate(const T* v, const T* w, int frame, T* dv) {
    if (frame == RKMK_FRAME_BODY) {
        T m[3];
        m[0] = -v[0];
        m[1] = -v[1];
        m[2] = -v[2];
        so3_dexp_inv_apply(m, w, dv);
    } else {
        so3_dexp_inv_apply(v, w, dv);
    }
}

// w = s1 dv + s2 v x dv + s3 v (v . dv), T(+-v) dv from T's coefficients, s2 of the frame's
// sign (`rkmk_angular_velocity`, and the adaptive lanes' with coefficients in lanes) (OUT: w[3];
// may alias dv)
template <class T>
inline void rkmk_t_apply(const T* v, const T* dv, const T& s1, const T& s2, const T& s3, T* w) {
    const T a0 = dv[0], a1 = dv[1], a2 = dv[2];
    const T c0 = v[1] * a2 - v[2] * a1;
    const T c1 = v[2] * a0 - v[0] * a2;
    const T c2 = v[0] * a1 - v[1] * a0;
    const T d = v[0] * a0 + v[1] * a1 + v[2] * a2;
    w[0] = s1 * a0 + s2 * c0 + s3 * d * v[0];
    w[1] = s1 * a1 + s2 * c1 + s3 * d * v[1];
    w[2] = s1 * a2 + s2 * c2 + s3 * d * v[2];
}

// The inverse of `rkmk_rate`: w = T(-v) dv (body) or T(v) dv (world) (OUT: w[3]; may alias dv):
// T(+-v) dv = S1 dv +- S2 v x dv + S3 v (v . dv)
template <class T>
inline void rkmk_angular_velocity(const T* v, const T* dv, int frame, T* w) {
    T x = v[0] * v[0] + v[1] * v[1] + v[2] * v[2];
    T s1, s2, s3;
    so3_coefficients(x, &s1, &s2, &s3);
    if (frame == RKMK_FRAME_BODY) s2 = -s2;
    rkmk_t_apply(v, dv, s1, s2, s3, w);
}

// e = exp(c w / 2), the unit quaternion of the rotation by the angle c |w| about w (OUT: e[4]):
// exp of the pure quaternion (0, x), x = c w / 2, is [cos a, x sin(a)/a], a = |x|, from the
// Taylor polynomials in a^2 for a^2 <= 1 ([NIRD] "Evaluating the Exponential Map");
// rotode/quaternion.pxd's quat_exp_pure, the same operations.
template <class T> ROTODE_ALWAYS_INLINE void quat_exp_half(const T* w, double c, T* e) {
    T x[3];
    x[0] = 0.5 * c * w[0];
    x[1] = 0.5 * c * w[1];
    x[2] = 0.5 * c * w[2];
    const T x2 = x[0] * x[0] + x[1] * x[1] + x[2] * x[2];
    T co, s;
    if (x2 <= 1.0) {
        co = taylor_cos(x2);
        s = taylor_sinc(x2);
    } else {
        const T a = sqrt(x2);
        co = cos(a);
        s = sin(a) / a;
    }
    e[0] = co;
    e[1] = s * x[0];
    e[2] = s * x[1];
    e[3] = s * x[2];
}

// The Hamilton product p q (OUT: out[4]; may not alias p or q): rotode/quaternion.pxd quat_mul
template <class T> ROTODE_ALWAYS_INLINE void rkmk_quat_mul(const T* p, const T* q, T* out) {
    out[0] = p[0] * q[0] - p[1] * q[1] - p[2] * q[2] - p[3] * q[3];
    out[1] = p[0] * q[1] + p[1] * q[0] + p[2] * q[3] - p[3] * q[2];
    out[2] = p[0] * q[2] - p[1] * q[3] + p[2] * q[0] + p[3] * q[1];
    out[3] = p[0] * q[3] + p[1] * q[2] - p[2] * q[1] + p[3] * q[0];
}

// out = q exp(c w / 2): the body-frame rotation of q by the angle c |w| (OUT: out[4]; may not
// alias q)
template <class T>
ROTODE_ALWAYS_INLINE void quat_times_exp(const T* q, const T* w, double c, T* out) {
    T e[4];
    quat_exp_half(w, c, e);
    rkmk_quat_mul(q, e, out);
}

// The base of the step after an accepted one: qb <- qb exp(v/2), retracted (`rkmk_retract`)
// (IN/OUT: qb[4])
template <class T> inline void rkmk_rebase(T* qb, const T* v) {
    T q[4];
    quat_times_exp(qb, v, 1.0, q);
    rkmk_retract(q);
    for (int i = 0; i < 4; ++i) qb[i] = q[i];
}

// out = exp(c w / 2) q: the world-frame rotation of q by the angle c |w| (OUT: out[4]; may not
// alias q)
template <class T>
ROTODE_ALWAYS_INLINE void exp_times_quat(const T* w, double c, const T* q, T* out) {
    T e[4];
    quat_exp_half(w, c, e);
    rkmk_quat_mul(e, q, out);
}

}  // namespace rotode
