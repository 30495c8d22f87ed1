// The Gauss-Legendre Magnus methods of orders 4, 6 and 8 in so(3) and magnus_ca's series for a
// constant angular acceleration, once for every path: the driver's one-body steps and
// `rotode.steps` (rotode/kinematic.pxd declares the double instances `magnus4_rotvec`,
// `magnus6_rotvec`, `magnus8_rotvec`, `magnus_ca_rotvec`, `magnus_ca_angle`) and the SIMD
// lanes (rotode/_lanes.hpp `KinStepModel::magnus` and `magnus_ca`, V a lane vector).  Each
// lane does the operations of the double instance in the same order, so that a lane's bits are
// its single run's (-ffp-contract=off, setup.py).
//
// From the rates w_i at the step's Gauss nodes, Omega is the rotation vector of the step:
// q(t0 + h) = exp(Omega/2) q(t0) with w in the world frame, q(t0) exp(Omega/2) in the body
// frame.  The step h is a double (every lane's step the same: the fixed-step lanes) or a lane
// vector (each lane its own: the adaptive lanes, rotode/_lanes_magnus.hpp).  References:
// Iserles & Norsett, "On the solution of linear differential equations in Lie groups", Phil.
// Trans. R. Soc. A 357 (1999) 983-1019 (order 4); Blanes, Casas & Ros, "Improved high order
// integrators based on the Magnus expansion", BIT 40 (2000) 434-450, and
// Blanes, Casas, Oteo & Ros, "The Magnus expansion and some of its applications", Phys. Rep.
// 470 (2009) 151-238, eq. 4.8 and sec. 5.3 (orders 6 and 8); the equations, in the notation
// below, are in docs/methods-kinematic.md.
#pragma once

#include <cmath>

namespace rotode {

namespace magnus {

// out = a x b
template <class V>
inline void cross3(const V* a, const V* b, V* out) {
    out[0] = a[1] * b[2] - a[2] * b[1];
    out[1] = a[2] * b[0] - a[0] * b[2];
    out[2] = a[0] * b[1] - a[1] * b[0];
}

// Fourth order, two nodes c = 1/2 -+ sqrt(3)/6: Omega = h/2 (w1 + w2) - sqrt(3)/12 h^2 w1 x w2
// in the world frame, + in the body frame (OUT: om[3])
template <class V, class H>
inline void order4(const V* w1, const V* w2, const H& h, bool world, V* om) {
    const H f = (world ? -0.14433756729740643 : 0.14433756729740643) * h * h;
    V c[3];
    cross3(w1, w2, c);
    for (int i = 0; i < 3; ++i) om[i] = 0.5 * h * (w1[i] + w2[i]) + f * c[i];
}

// Sixth order, three nodes c = 1/2 - sqrt(15)/10, 1/2, 1/2 + sqrt(15)/10.  With a_i = s w_i
// (s = +1 world, -1 body) and the moments B0 = (5 (a1 + a3) + 8 a2)/18,
// B1 = sqrt(15)/36 (a3 - a1), B2 = (a1 + a3)/24:
//     O2 = h^2 B1 x (3/2 B0 - 6 B2)
//     Omega = s (h B0 + O2 + h^2 B0 x (B0 x (h/2 B2 - O2/60)) + 3h/5 B1 x O2)   (OUT: om[3])
template <class V, class H>
inline void order6(const V* w1, const V* w2, const V* w3, const H& h, bool world, V* om) {
    const double s = world ? 1.0 : -1.0;
    V b0[3], b1[3], b2[3], o2[3], u[3], v[3], x[3], y[3];
    for (int i = 0; i < 3; ++i) {
        b0[i] = s * (5.0 * (w1[i] + w3[i]) + 8.0 * w2[i]) / 18.0;
        b1[i] = s * 0.10758287072798381 * (w3[i] - w1[i]);
        b2[i] = s * (w1[i] + w3[i]) / 24.0;
    }
    const H h2 = h * h;
    for (int i = 0; i < 3; ++i) u[i] = 1.5 * b0[i] - 6.0 * b2[i];
    cross3(b1, u, o2);
    for (int i = 0; i < 3; ++i) {
        o2[i] = o2[i] * h2;
        u[i] = 0.5 * h * b2[i] - o2[i] / 60.0;
    }
    cross3(b0, u, v);
    cross3(b0, v, x);
    cross3(b1, o2, y);
    for (int i = 0; i < 3; ++i) om[i] = s * (h * b0[i] + o2[i] + h2 * x[i] + 0.6 * h * y[i]);
}

// Eighth order, four nodes 1/2 - v1, 1/2 - v2, 1/2 + v2, 1/2 + v1 (rates a1..a4) with
// v1, v2 = sqrt((3 +- 2 sqrt(6/5))/7)/2: the moments B0..B3 of s a_i from the Gauss weights,
// then Omega from the seven commutator terms Q1..Q7 (OUT: om[3])
template <class V, class H>
inline void order8(const V* a1, const V* a2, const V* a3, const V* a4, const H& h, bool world,
                   V* om) {
    const double s = world ? 1.0 : -1.0;
    const double v1 = 0.43056815579702629, v2 = 0.16999052179242813;
    const double g1 = 0.34785484513745385, g2 = 0.65214515486254614;
    V B0[3], B1[3], B2[3], B3[3];
    for (int i = 0; i < 3; ++i) {
        const V S1 = s * (a1[i] + a4[i]);
        const V S2 = s * (a2[i] + a3[i]);
        const V R1 = s * (a4[i] - a1[i]);
        const V R2 = s * (a3[i] - a2[i]);
        B0[i] = 0.5 * (g1 * S1 + g2 * S2);
        B1[i] = 0.5 * (v1 * g1 * R1 + v2 * g2 * R2);
        B2[i] = 0.5 * (v1 * v1 * g1 * S1 + v2 * v2 * g2 * S2);
        B3[i] = 0.5 * (v1 * v1 * v1 * g1 * R1 + v2 * v2 * v2 * g2 * R2);
    }
    const H h2 = h * h;
    const H h3 = h2 * h;
    V Q1[3], Q2[3], Q3[3], Q4[3], Q5[3], Q6[3], Q7[3], u[3], v[3], x[3];
    for (int i = 0; i < 3; ++i) {
        u[i] = -7.6 * B0[i] + 24.0 * B2[i];
        v[i] = 12.6 * B0[i] - 84.0 * B2[i];
        x[i] = -5.0 / 28.0 * B1[i] + B3[i];
    }
    cross3(u, B3, Q1);
    cross3(v, x, Q2);
    for (int i = 0; i < 3; ++i) u[i] = B2[i] + h * (61.0 / 588.0 * Q1[i] - Q2[i] / 12.0);
    cross3(B0, u, v);
    for (int i = 0; i < 3; ++i) u[i] = 19.0 / 28.0 * B0[i] - 15.0 / 7.0 * B2[i];
    cross3(u, v, Q3);
    for (int i = 0; i < 3; ++i) u[i] = 20.0 / 7.0 * Q1[i] + 10.0 * Q2[i];
    cross3(B3, u, Q4);
    cross3(B2, Q1, v);
    for (int i = 0; i < 3; ++i) u[i] = -6025.0 / 4116.0 * B0[i] + 2875.0 / 343.0 * B2[i];
    cross3(u, v, Q5);
    for (int i = 0; i < 3; ++i) u[i] = 20.0 / 7.0 * (Q3[i] + Q4[i]) + 820.0 / 189.0 * h * Q5[i];
    cross3(B3, u, Q6);
    for (int i = 0; i < 3; ++i) u[i] = Q3[i] - Q4[i] / 3.0 + h * Q5[i];
    cross3(B0, u, v);
    cross3(B0, v, Q7);
    for (int i = 0; i < 3; ++i)
        om[i] = s * (h * B0[i] + h2 * (Q1[i] + Q2[i]) + h3 * (Q3[i] + Q4[i])
                     + h3 * h * (Q5[i] + Q6[i]) - h3 * h2 * Q7[i] / 42.0);
}

// The step size's factors of magnus_ca's terms (`constant_acceleration` below): h, h^2/2 and
// the coefficients of terms 2, 3, 4 (the frame's sign in 2 and 4). `CaStep` computes each one
// where a term reads it (a step of the driver, whose size changes); `CaFactors` holds them,
// computed once for the rows of one size (rotode/steps.pyx: the factors' division per row was
// a quarter of a batch magnus_ca step). The same expressions: the same bits.
struct CaStep {
    double h, sg;
    double h2_2() const { return 0.5 * (h * h); }
    double f2() const { return sg * (h * h * h) / 12.0; }
    double f3() const { return (h * h * h) * (h * h) / 240.0; }
    double f4() const { return -sg * (h * h * h) * (h * h) / 720.0; }
};
struct CaFactors {
    double h, h2_2_, f2_, f3_, f4_;
    double h2_2() const { return h2_2_; }
    double f2() const { return f2_; }
    double f3() const { return f3_; }
    double f4() const { return f4_; }
};
inline CaFactors ca_factors(double h, bool world, int terms) {
    const CaStep k{h, world ? 1.0 : -1.0};
    return CaFactors{h, k.h2_2(), terms >= 2 ? k.f2() : 0.0, terms >= 3 ? k.f3() : 0.0,
                     terms >= 4 ? k.f4() : 0.0};
}

// magnus_ca: the Magnus rotation vector for a constant angular acceleration over the step,
// w(t0 + s) = w0 + alpha s, in the world frame ([NIRD], with the h^5 and h^6 parts of Omega_4
// derived in docs/methods-kinematic.md):
//     Omega_1 = h w0 + h^2/2 alpha
//     Omega_2 = h^3/12 alpha x w0
//     Omega_3 = h^5/240 alpha x (alpha x w0)
//     Omega_4 = -h^5/720 |w0|^2 w0 x alpha - h^6/720 w0 x (alpha x (alpha x w0)) + O(h^7)
// the body frame's Omega_2 and Omega_4 with the opposite sign; the first `terms` (1 .. 4) of
// them, from the step's factors `k` (a CaStep or CaFactors) (OUT: om[3])
template <class V, class K>
inline void constant_acceleration(const V* w0, const V* alpha, const K& k, int terms, V* om) {
    V c1[3], c2[3], c3[3];
    const V n2 = w0[0] * w0[0] + w0[1] * w0[1] + w0[2] * w0[2];
    for (int i = 0; i < 3; ++i) om[i] = k.h * w0[i] + k.h2_2() * alpha[i];
    if (terms < 2) return;
    cross3(alpha, w0, c1);                        // alpha x w0
    double f = k.f2();
    for (int i = 0; i < 3; ++i) om[i] = om[i] + f * c1[i];
    if (terms < 3) return;
    cross3(alpha, c1, c2);                        // alpha x (alpha x w0)
    f = k.f3();
    for (int i = 0; i < 3; ++i) om[i] = om[i] + f * c2[i];
    if (terms < 4) return;
    cross3(w0, c2, c3);                           // w0 x (alpha x (alpha x w0))
    f = k.f4();
    for (int i = 0; i < 3; ++i) om[i] = om[i] + f * (-n2 * c1[i] + k.h * c3[i]);  // w0 x alpha = -c1
}

template <class V>
inline void constant_acceleration(const V* w0, const V* alpha, double h, int terms, bool world,
                                  V* om) {
    constant_acceleration(w0, alpha, CaStep{h, world ? 1.0 : -1.0}, terms, om);
}

// |w0|^2 and |w0 + alpha h|^2, the squared rates at the ends of a magnus_ca step (OUT: a, b)
template <class V>
inline void end_rates2(const V* w0, const V* alpha, double h, V& a, V& b) {
    a = w0[0] * w0[0] + w0[1] * w0[1] + w0[2] * w0[2];
    const V e0 = w0[0] + alpha[0] * h, e1 = w0[1] + alpha[1] * h, e2 = w0[2] + alpha[2] * h;
    b = e0 * e0 + e1 * e1 + e2 * e2;
}

// the upper bound |h| max(|w0|, |w0 + alpha h|) of the rotation angle over the step from the
// squared end rates (|w| is convex along the segment w0 + alpha s: its maximum is at an end)
inline double ca_angle(double a, double b, double h) {
    return std::fabs(h) * std::sqrt(a > b ? a : b);
}

}  // namespace magnus

// [NIRD]: the Magnus series converges while the rotation per step is below pi/sqrt(2)
inline double magnus_bound() { return 2.221441469079183; }

// magnus_ca with substep=True: the most equal sub-steps one grid step may take
constexpr long MAGNUS_MAX_SUBSTEPS = 1000000;

// The double instances (frame: rotode/equations.pxd's FRAME_BODY 0 or FRAME_WORLD 1)
inline void magnus4_rotvec(const double* w1, const double* w2, double h, int frame, double* om) {
    magnus::order4(w1, w2, h, frame == 1, om);
}
inline void magnus6_rotvec(const double* w1, const double* w2, const double* w3, double h,
                           int frame, double* om) {
    magnus::order6(w1, w2, w3, h, frame == 1, om);
}
inline void magnus8_rotvec(const double* a1, const double* a2, const double* a3,
                           const double* a4, double h, int frame, double* om) {
    magnus::order8(a1, a2, a3, a4, h, frame == 1, om);
}
inline void magnus_ca_rotvec(const double* w0, const double* alpha, double h, int terms,
                             int frame, double* om) {
    magnus::constant_acceleration(w0, alpha, h, terms, frame == 1, om);
}
// the factors of a step size h in the frame `frame` for `terms` terms, and the step's rotation
// vector from them
// (the same bits as magnus_ca_rotvec)
inline magnus::CaFactors magnus_ca_factors(double h, int frame, int terms) {
    return magnus::ca_factors(h, frame == 1, terms);
}
inline void magnus_ca_rotvec_with(const double* w0, const double* alpha,
                                  const magnus::CaFactors& k, int terms, double* om) {
    magnus::constant_acceleration(w0, alpha, k, terms, om);
}
inline double magnus_ca_angle(const double* w0, const double* alpha, double h) {
    double a, b;
    magnus::end_rates2(w0, alpha, h, a, b);
    return magnus::ca_angle(a, b, h);
}

}  // namespace rotode
