// Kutta's third-order method and the classical fourth-order Runge-Kutta method, once for every
// model and every path: the lane kernels (rotode/_lanes.hpp, V a lane vector), their dual-number
// sensitivities (rotode/_tangent_fixed.hpp, V a dual) and the one-body steps of the driver's
// loop and of `rotode.steps` (rotode/kinematic.pxd and rotode/dynamic.pxd `rk3_step`/`rk4_step`,
// V = double, through `kin_rk_step` and `call_rk_step` below).  Hairer, Norsett & Wanner,
// "Solving Ordinary Differential Equations I" (2nd ed., 1993), sec. II.1, Table 1.1 (Kutta's
// c = (0, 1/2, 1), a21 = 1/2, a31 = -1, a32 = 2, b = (1/6, 2/3, 1/6)) and eq. 1.8.
//
// A model M gives its state size n (static constexpr) and `rhs(node, y, dy)`, f at the step's
// node 0 (t0), 1 (t0 + h/2) or 2 (t0 + h) (it knows t0 and h, or the rates there).  Every
// lane, and a dual's value, does the operations of the double instance in the same order, so a
// lane's bits are its single run's (-ffp-contract=off, setup.py).
#pragma once

#include "_engine.hpp"
#include "_models.hpp"

namespace rotode {

namespace lanes {

// Kutta's third-order method from y, k1 = f(t0, y) given (OUT: yout[M::n]; yout may be y)
template <class M, class V>
ROTODE_INLINE void rk3_from(const M& f, double h, const V* y, const V* k1, V* yout) {
    constexpr int n = M::n;
    V k2[n], k3[n], z[n];
    for (int i = 0; i < n; ++i) z[i] = y[i] + 0.5 * h * k1[i];
    f.rhs(1, z, k2);
    for (int i = 0; i < n; ++i) z[i] = y[i] + h * (2.0 * k2[i] - k1[i]);
    f.rhs(2, z, k3);
    for (int i = 0; i < n; ++i) yout[i] = y[i] + h * (k1[i] + 4.0 * k2[i] + k3[i]) / 6.0;
}

template <class M, class V>
ROTODE_INLINE void rk3_lanes(const M& f, double h, const V* y, V* yout) {
    V k1[M::n];
    f.rhs(0, y, k1);
    rk3_from(f, h, y, k1, yout);
}

// The classical fourth-order method from y (OUT: yout[M::n]; yout may be y)
template <class M, class V>
ROTODE_INLINE void rk4_lanes(const M& f, double h, const V* y, V* yout) {
    constexpr int n = M::n;
    V k1[n], k2[n], k3[n], k4[n], z[n];
    f.rhs(0, y, k1);
    for (int i = 0; i < n; ++i) z[i] = y[i] + 0.5 * h * k1[i];
    f.rhs(1, z, k2);
    for (int i = 0; i < n; ++i) z[i] = y[i] + 0.5 * h * k2[i];
    f.rhs(1, z, k3);
    for (int i = 0; i < n; ++i) z[i] = y[i] + h * k3[i];
    f.rhs(2, z, k4);
    for (int i = 0; i < n; ++i)
        yout[i] = y[i] + h * (k1[i] + 2.0 * (k2[i] + k3[i]) + k4[i]) / 6.0;
}

}  // namespace lanes

// The variable-step Adams-Bashforth 3 weights (OUT: beta[3]): y1 = y0 + beta0 f0 + beta1 f_-1 +
// beta2 f_-2, beta_k the integral over [0, h] of the Lagrange basis on the nodes 0, -h1,
// -(h1 + h2) (h = t1 - t0, h1 = t0 - t_-1, h2 = t_-1 - t_-2, all signed; uniform steps give
// h (23, -16, 5) / 12); Hairer, Norsett & Wanner I, sec. III.5.  One formula for every model
// and path (the lanes, their duals, the one-body steps of the rigid body, of kinematics and of
// a user's equations).
inline void ab3_coefficients(double h, double h1, double h2, double* beta) {
    const double a = h1, bb = h1 + h2;
    const double i3 = h * h * h / 3.0, i2 = 0.5 * h * h;
    beta[0] = (i3 + (a + bb) * i2 + a * bb * h) / (a * bb);
    beta[1] = -(i3 + bb * i2) / (a * (bb - a));
    beta[2] = (i3 + a * i2) / (bb * (bb - a));
}

// The stages' equations of an rk3/rk4 step of quaternion kinematics at the rates of the step's
// nodes (node 0 w0 = w(t0), 1 wm = w(t0 + h/2), 2 w1 = w(t0 + h)): `kin_rhs` of
// rotode/_models.hpp, q' = 1/2 q (0, w) (body) or 1/2 (0, w) q (world), + c q with the norm gain
// p->gain (P: the lanes' parameters, or `KinGain` for one body)
template <bool World, bool Gain, class V, class P>
struct KinNodes {
    static constexpr int n = 4;
    const P* p;
    const V* w[3];
    ROTODE_INLINE void rhs(int node, const V* q, V* dq) const {
        kin_rhs<World, Gain>(*p, q, w[node], dq);
    }
};

struct KinGain {
    double gain;
};

template <bool World, bool Gain>
inline void kin_rk_t(int order, const double* q, const double* w0, const double* wm,
                     const double* w1, double h, double gain, double* out) {
    const KinGain g{gain};
    const KinNodes<World, Gain, double, KinGain> f{&g, {w0, wm, w1}};
    if (order == 3) lanes::rk3_lanes(f, h, q, out);
    else lanes::rk4_lanes(f, h, q, out);
}

// One step of rk3 (order 3) or rk4 (order 4) of quaternion kinematics (frame: 0 body, 1 world,
// rotode/equations.pxd FRAME_*) (OUT: out[4]; out may be q)
inline void kin_rk_step(int order, const double* q, const double* w0, const double* wm,
                        const double* w1, double h, int frame, double gain, double* out) {
    if (frame != 0) {
        if (gain != 0.0) kin_rk_t<true, true>(order, q, w0, wm, w1, h, gain, out);
        else kin_rk_t<true, false>(order, q, w0, wm, w1, h, gain, out);
    } else {
        if (gain != 0.0) kin_rk_t<false, true>(order, q, w0, wm, w1, h, gain, out);
        else kin_rk_t<false, false>(order, q, w0, wm, w1, h, gain, out);
    }
}

// f(t, y) of one body of 7 states through a pointer: 0, or a status that stops the step
typedef int (*StepRhs)(void* ctx, double t, const double* y, double* dy);

// A right-hand side reached through a pointer (the driver's rigid body, rotode/dynamic.pxd
// `body_rhs`): f at the node's time t0, t0 + 0.5 h or t0 + h; after a nonzero status no further
// evaluation (dy <- 0), the status kept for the step to return, as an early return would
struct CallModel {
    static constexpr int n = 7;
    StepRhs f;
    void* ctx;
    double t0, h;
    mutable int status;
    ROTODE_INLINE void rhs(int node, const double* y, double* dy) const {
        if (status != 0) {
            for (int i = 0; i < n; ++i) dy[i] = 0.0;
            return;
        }
        status = f(ctx, node == 0 ? t0 : node == 1 ? t0 + 0.5 * h : t0 + h, y, dy);
    }
};

// One step of rk3 (order 3, k1 = f(t0, y) given) or rk4 (order 4) on 7 states with f through
// a pointer (OUT: yout[7]; yout may be y): 0, or f's first nonzero status
inline int call_rk_step(int order, StepRhs f, void* ctx, double t0, double h, const double* y,
                        const double* k1, double* yout) {
    const CallModel m{f, ctx, t0, h, 0};
    if (order == 3) lanes::rk3_from(m, h, y, k1, yout);
    else lanes::rk4_lanes(m, h, y, yout);
    return m.status;
}

}  // namespace rotode
