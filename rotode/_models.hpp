// The rigid body as a compile-time model of the specialised engine (rotode/_engine.hpp), and the
// dispatch from run-time choices (pair, torque kind, inertia shape) to one instantiation.
//
// The equations are those of rotode/equations.pxd (`rigid_body_rhs`: Rucker 2018 eqs. 22-23 for
// a non-unit quaternion with the norm gain, Euler's equations w' = I^-1 (tau - w x I w)) and of
// the torque sources of rotode/torque.pyx (`Gravity`: tau = m g com x R(q)^T (-e_z); `Constant`
// in the body or the world frame), written with the same products in the same order, so that one
// evaluation gives the bits of the Cython kernels (tests/test_engine.py compares them).  A
// principal-axes inertia (diagonal I and I^-1) leaves out the products by its zero entries,
// which changes a sum only in the sign of an exact zero.
//
// Conventions: q scalar first [w, x, y, z], Hamilton product, q maps body to world, w in the
// body frame; q of any nonzero length (R(q) = R(q / |q|)).
#pragma once

#include <cmath>
#include <cstddef>
#include <type_traits>

#include "_engine.hpp"
#include "_rkmk.hpp"
#include "_tableaux.hpp"
#include "_trig.hpp"

#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpsabi"      // lane vectors (rotode/_lanes.hpp) only inlined
#endif

namespace rotode {

enum TorqueKind {
    TORQUE_NONE = 0,
    TORQUE_GRAVITY = 1,       // m g com x R(q)^T (-e_z)
    TORQUE_BODY = 2,          // constant, body frame
    TORQUE_WORLD = 3,         // constant, world frame: R(q)^T tau
    TORQUE_GRAVITY_AXIS = 4,  // Gravity with com = (0, 0, h): the products by its zeros left out
    TORQUE_CALL = 5,          // any other compiled source, evaluated through RigidParams.call
    TORQUE_GG = 6,            // GravityGradient: 3 n^2 o3 x (I o3) on a circular orbit (time-
                              // dependent: the one-body engine and the adaptive lanes only)
};

// A compiled torque source tau(t, q, w) evaluated through a pointer (TORQUE_CALL): the source
// `src` (a rotode.torque.Torque, borrowed) and the function that calls its nogil `evaluate`
// (rotode/dynamic.pyx `_torque_call`): q the orientation (any nonzero length), w the body rate,
// OUT: tau[3] in the body frame; 0, or the source's failure status (rotode/torque.pxd:
// TORQUE_FAILED, TORQUE_NONFINITE), which stops the body with that status.
typedef int (*TorqueCall)(void* src, double t, const double* q, const double* w, double* tau);

// One body's parameters (filled from a rotode.RigidBody by rotode/dynamic.pyx).
struct RigidParams {
    double I[9], Iinv[9];     // row-major
    double gain;              // norm gain (Rucker 2018 eq. 23)
    int gyroscopic;           // keep w x I w
    int torque;               // TorqueKind
    double mg;                // Gravity: m g
    double com[3];            // Gravity: pivot to centre of mass, body frame
    double tau[3];            // Constant: the torque in its frame
    TorqueCall call;          // TORQUE_CALL: the source's evaluation, and the source
    void* src;
    long long* evals;         // TORQUE_CALL: OUT, += 1 per evaluation (NULL: not counted); a
                              // failing stage ends a step early, so the pair's count of s per
                              // attempt is not the sources' count
    double gg_k, gg_n, gg_u0; // GravityGradient: 3 n^2, n, u0 (rotode/torque.pyx's _k, _n, _u0)
    double gg_P[3], gg_Q[3];  // GravityGradient: the orbit plane's axes (_P, _Q)
    double gg_I[9];           // GravityGradient: its inertia, row-major (_I)
};

namespace models {

// x in every lane of V (V = double: x itself; a class such as rotode/_dual.hpp's dual: V(x);
// a GCC vector type of rotode/_lanes.hpp: x broadcast, the operators of such types acting lane
// by lane) (OUT: v)
template <class V>
ROTODE_INLINE void splat(V& v, double x) {
    if constexpr (std::is_same_v<V, double> || std::is_class_v<V>) {
        v = V(x);
    } else {
        for (int i = 0; i < int(sizeof(V) / sizeof(double)); ++i) v[i] = x;
    }
}

// out = M x, row-major 3x3; Diag: M diagonal, the zero products left out.  M's entries are V
// or constants (double) of a V state.
template <bool Diag, class U, class V>
ROTODE_INLINE void mat3_vec(const U* M, const V* x, V* out) {
    if constexpr (Diag) {
        out[0] = M[0] * x[0];
        out[1] = M[4] * x[1];
        out[2] = M[8] * x[2];
    } else {
        out[0] = M[0] * x[0] + M[1] * x[1] + M[2] * x[2];
        out[1] = M[3] * x[0] + M[4] * x[1] + M[5] * x[2];
        out[2] = M[6] * x[0] + M[7] * x[1] + M[8] * x[2];
    }
}

// R(q)^T v for any nonzero q: quat_rotate(conj(q), v) of rotode/quaternion.pxd (v: V, or a
// constant of a V state)
template <class V, class U>
ROTODE_INLINE void world_to_body(const V* q, const U* v, V* out) {
    const V q0 = q[0], q1 = -q[1], q2 = -q[2], q3 = -q[3];
    const V s = 2.0 / (q0 * q0 + q1 * q1 + q2 * q2 + q3 * q3);
    const V c0 = q2 * v[2] - q3 * v[1];
    const V c1 = q3 * v[0] - q1 * v[2];
    const V c2 = q1 * v[1] - q2 * v[0];
    out[0] = v[0] + s * (q0 * c0 + q2 * c2 - q3 * c1);
    out[1] = v[1] + s * (q0 * c1 + q3 * c0 - q1 * c2);
    out[2] = v[2] + s * (q0 * c2 + q1 * c1 - q2 * c0);
}

}  // namespace models

// The torque of kind T on a body of parameters p (a RigidParams, or rotode/_lanes.hpp's
// RigidLanes: one body per lane) at orientation q (OUT: tau[3]).  V is double, a lane vector or
// a dual number (rotode/_tangent.hpp); every lane, and a dual's value, does the operations of
// the double instance, in the same order.
template <int T, class P, class V>
ROTODE_INLINE void rigid_torque(const P& p, const V* q, V* tau) {
    using models::splat;
    if constexpr (T == TORQUE_NONE) {
        splat(tau[0], 0.0);
        splat(tau[1], 0.0);
        splat(tau[2], 0.0);
    } else if constexpr (T == TORQUE_GRAVITY) {
        typedef std::remove_cv_t<decltype(p.mg)> S;        // the parameters' type
        S down[3];
        V d[3];
        splat(down[0], 0.0);
        splat(down[1], 0.0);
        down[2] = -p.mg;
        models::world_to_body(q, down, d);
        tau[0] = p.com[1] * d[2] - p.com[2] * d[1];
        tau[1] = p.com[2] * d[0] - p.com[0] * d[2];
        tau[2] = p.com[0] * d[1] - p.com[1] * d[0];
    } else if constexpr (T == TORQUE_GRAVITY_AXIS) {
        // d = R(q)^T (0, 0, -m g) without its z component (world_to_body with v0 = v1 = 0)
        const V q0 = q[0], q1 = -q[1], q2 = -q[2], q3 = -q[3];
        const std::remove_cv_t<decltype(p.mg)> v2 = -p.mg;
        const V s = 2.0 / (q0 * q0 + q1 * q1 + q2 * q2 + q3 * q3);
        const V c0 = q2 * v2, c1 = -(q1 * v2);
        const V d0 = s * (q0 * c0 - q3 * c1), d1 = s * (q0 * c1 + q3 * c0);
        tau[0] = -(p.com[2] * d1);
        tau[1] = p.com[2] * d0;
        splat(tau[2], 0.0);
    } else if constexpr (T == TORQUE_BODY) {
        tau[0] = p.tau[0];
        tau[1] = p.tau[1];
        tau[2] = p.tau[2];
    } else {
        static_assert(T == TORQUE_WORLD, "TORQUE_CALL is evaluated by the models (rigid_call), "
                      "TORQUE_GG by rigid_torque_at");
        models::world_to_body(q, p.tau, tau);
    }
}

// TORQUE_GG's torque at time t (double, or one per lane) and orientation q (OUT: tau[3]):
// rotode/torque.pyx `gravity_gradient_torque`'s operations in its order, the sine and cosine
// of the argument of latitude by rotode/_trig.hpp `sin_cos` (which that function calls too),
// so every lane has the one-body bits.  P as in `rigid_torque`.
template <class P, class Tt, class V>
ROTODE_INLINE void gravity_gradient(const P& p, const Tt& t, const V* q, V* tau) {
    typedef decltype(p.gg_u0 + p.gg_n * t) S;      // double, or the lanes' vector
    const S u = p.gg_u0 + p.gg_n * t;
    S su, cu, nadir[3];
    sin_cos(u, su, cu);
    for (int i = 0; i < 3; ++i) nadir[i] = -(cu * p.gg_P[i] + su * p.gg_Q[i]);
    V o[3], io[3];
    models::world_to_body(q, nadir, o);
    models::mat3_vec<false>(p.gg_I, o, io);
    tau[0] = p.gg_k * (o[1] * io[2] - o[2] * io[1]);
    tau[1] = p.gg_k * (o[2] * io[0] - o[0] * io[2]);
    tau[2] = p.gg_k * (o[0] * io[1] - o[1] * io[0]);
}

// The torque of kind T at time t: `rigid_torque`, or TORQUE_GG's `gravity_gradient` (OUT: tau)
template <int T, class P, class Tt, class V>
ROTODE_INLINE void rigid_torque_at(const P& p, const Tt& t, const V* q, V* tau) {
    if constexpr (T == TORQUE_GG) {
        gravity_gradient(p, t, q, tau);
    } else {
        (void)t;
        rigid_torque<T>(p, q, tau);
    }
}

// TORQUE_CALL's torque at (t, q, w) through the source's pointer (OUT: tau[3]): its status
ROTODE_INLINE int rigid_call(const RigidParams& p, double t, const double* q, const double* w,
                             double* tau) {
    if (p.evals != nullptr) ++*p.evals;
    return p.call(p.src, t, q, w, tau);
}

// Euler's equations w' = I^-1 (tau - w x I w) (Mandre 2008 sec. 6; without w x I w when
// p.gyroscopic is 0, sec. 7.6): rotode/equations.pxd `euler_rhs` (OUT: dw[3]).  V and p as in
// `rigid_torque`.
template <bool Diag, class P, class V>
ROTODE_INLINE void rigid_euler(const P& p, const V* w, const V* tau, V* dw) {
    if (p.gyroscopic) {
        V Iw[3], r[3];
        models::mat3_vec<Diag>(p.I, w, Iw);
        r[0] = tau[0] - (w[1] * Iw[2] - w[2] * Iw[1]);
        r[1] = tau[1] - (w[2] * Iw[0] - w[0] * Iw[2]);
        r[2] = tau[2] - (w[0] * Iw[1] - w[1] * Iw[0]);
        models::mat3_vec<Diag>(p.Iinv, r, dw);
    } else {
        models::mat3_vec<Diag>(p.Iinv, tau, dw);
    }
}

// q' = 1/2 q (0, w) (body) or 1/2 (0, w) q (world), + c q with the norm gain (Gain; without it
// c = 0 x (1 - |q|^2) adds +-0, which changes no nonzero rate): Rucker 2018 eqs. 20-23 as
// rotode/equations.pxd `quaternion_kinematics_rhs` (OUT: dq[4]).  One source for the
// specialised engine's model below (V = double) and the lane kernels of rotode/_lanes.hpp (V a
// lane vector, p one body per lane).
template <bool World, bool Gain, class P, class V>
ROTODE_INLINE void kin_rhs(const P& p, const V* q, const V* w, V* dq) {
    V r[4];
    if constexpr (World) {      // (0, w) q
        r[0] = -w[0] * q[1] - w[1] * q[2] - w[2] * q[3];
        r[1] = w[0] * q[0] + w[1] * q[3] - w[2] * q[2];
        r[2] = -w[0] * q[3] + w[1] * q[0] + w[2] * q[1];
        r[3] = w[0] * q[2] - w[1] * q[1] + w[2] * q[0];
    } else {                    // q (0, w)
        r[0] = -q[1] * w[0] - q[2] * w[1] - q[3] * w[2];
        r[1] = q[0] * w[0] + q[2] * w[2] - q[3] * w[1];
        r[2] = q[0] * w[1] - q[1] * w[2] + q[3] * w[0];
        r[3] = q[0] * w[2] + q[1] * w[1] - q[2] * w[0];
    }
    if constexpr (Gain) {
        const V c = p.gain * (1.0 - (q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]));
        for (int i = 0; i < 4; ++i) dq[i] = 0.5 * r[i] + c * q[i];
    } else {
        for (int i = 0; i < 4; ++i) dq[i] = 0.5 * r[i];
    }
}

// [q, w_body]' of a rigid body under the body torque tau, with inertia shape Diag and, with Gain,
// the norm gain's term c q (without it, c = 0 x (1 - |q|^2) adds +-0, which changes no nonzero
// rate) (OUT: dy[7]).  One source for the specialised engine's models below (V = double) and the
// lane kernels of rotode/_lanes.hpp (V a lane vector, p one body per lane; p.gyroscopic the same
// in every lane).
template <bool Diag, bool Gain, class P, class V>
ROTODE_INLINE void rigid_rhs_tau(const P& p, const V* y, const V* tau, V* dy) {
    const V* w = y + 4;
    kin_rhs<false, Gain>(p, y, w, dy);     // q' = 1/2 q (0, w) + c q, c = gain (1 - |q|^2)
    rigid_euler<Diag>(p, w, tau, dy + 4);
}

// [q, w_body]' of a rigid body with torque kind T (not TORQUE_CALL), inertia shape Diag and,
// with Gain, the norm gain's term, at time t (double, or one per lane) (OUT: dy[7]):
// `rigid_rhs_tau` with the torque of kind T.
template <int T, bool Diag, bool Gain, class P, class Tt, class V>
ROTODE_INLINE void rigid_rhs_at(const P& p, const Tt& t, const V* y, V* dy) {
    V tau[3];
    rigid_torque_at<T>(p, t, y, tau);
    rigid_rhs_tau<Diag, Gain>(p, y, tau, dy);
}

// the same for the kinds that do not read t (all but TORQUE_GG): the callers without stage
// times (the fixed-step lanes, the tangent models)
template <int T, bool Diag, bool Gain, class P, class V>
ROTODE_INLINE void rigid_rhs(const P& p, const V* y, V* dy) {
    static_assert(T != TORQUE_GG, "TORQUE_GG reads t: rigid_rhs_at");
    rigid_rhs_at<T, Diag, Gain>(p, 0.0, y, dy);
}

// [q, w_body]' of a rigid body with torque kind T, inertia shape Diag and, with Gain, the norm
// gain's term: `rigid_rhs` on one body's parameters.
template <int T, bool Diag, bool Gain>
struct RigidBodyModel {
    static constexpr int n = 7;     // state [q (4), w (3)]
    static constexpr int k = 7;     // output row: the state itself
    RigidParams p;                  // by value: the loop's copy, which no store aliases

    // (TORQUE_CALL: the source's status, which may stop the body; else void, which cannot)
    ROTODE_INLINE auto operator()(double t, const double* y, double* dy) const {
        if constexpr (T == TORQUE_CALL) {
            double tau[3];
            const int st = rigid_call(p, t, y, y + 4, tau);
            if (st == 0) rigid_rhs_tau<Diag, Gain>(p, y, tau, dy);
            return st;
        } else {
            rigid_rhs_at<T, Diag, Gain>(p, t, y, dy);
        }
    }

    inline void begin(const double* y0, double* z) const {
        for (int i = 0; i < n; ++i) z[i] = y0[i];
    }
    inline void first_row(double, const double* y0, const double*, double* y, double* w) const {
        for (int i = 0; i < k; ++i) y[i] = y0[i];       // y0 itself, as solve_ivp's first row
        for (int i = 0; i < 3; ++i) w[i] = y0[4 + i];
    }
    inline void store(double, const double* z, double* y, double* w) const {
        for (int i = 0; i < k; ++i) y[i] = z[i];
        for (int i = 0; i < 3; ++i) w[i] = z[4 + i];
    }
};

// y' = f evaluated once by the model (tests: the C++ equations against the Cython kernels)
template <int T, bool Diag>
inline int rigid_eval_t(const RigidParams* p, double t, const double* y, double* dy) {
    if (p->gain != 0.0) return engine::eval(RigidBodyModel<T, Diag, true>{*p}, t, y, dy);
    return engine::eval(RigidBodyModel<T, Diag, false>{*p}, t, y, dy);
}

template <class P, int T, bool Diag>
inline int rigid_run_t(const RigidParams* p, EngineRun* run) {
    if (p->gain != 0.0) return erk_body<P>(RigidBodyModel<T, Diag, true>{*p}, run);
    return erk_body<P>(RigidBodyModel<T, Diag, false>{*p}, run);
}

template <class P, bool Diag>
inline int rigid_run_torque(const RigidParams* p, EngineRun* run) {
    switch (p->torque) {
        case TORQUE_NONE: return rigid_run_t<P, TORQUE_NONE, Diag>(p, run);
        case TORQUE_GRAVITY: return rigid_run_t<P, TORQUE_GRAVITY, Diag>(p, run);
        case TORQUE_GRAVITY_AXIS: return rigid_run_t<P, TORQUE_GRAVITY_AXIS, Diag>(p, run);
        case TORQUE_BODY: return rigid_run_t<P, TORQUE_BODY, Diag>(p, run);
        case TORQUE_CALL: return rigid_run_t<P, TORQUE_CALL, Diag>(p, run);
        case TORQUE_GG: return rigid_run_t<P, TORQUE_GG, Diag>(p, run);
        default: return rigid_run_t<P, TORQUE_WORLD, Diag>(p, run);
    }
}

inline bool rigid_diagonal(const RigidParams* p) {
    for (int i = 0; i < 9; ++i)
        if (i % 4 != 0 && (p->I[i] != 0.0 || p->Iinv[i] != 0.0)) return false;
    return true;
}

template <class P>
inline int rigid_run_pair(const RigidParams* p, EngineRun* run) {
    return rigid_diagonal(p) ? rigid_run_torque<P, true>(p, run)
                             : rigid_run_torque<P, false>(p, run);
}

// One body of an error-controlled rigid-body run with the pair `pair` (a PairId of
// rotode/_tableaux.hpp); -1 for an unknown pair (the caller checks before).
inline int rigid_erk_body(int pair, const RigidParams* p, EngineRun* run) {
    return with_pair(pair, [&](auto pair_tag) {
        using P = decltype(pair_tag);
        return rigid_run_pair<P>(p, run);
    });
}

// ---- kinematics with a known angular velocity ---------------------------------------------

enum OmegaKind {
    OMEGA_CONSTANT = 0,       // w (a rotode.omega.Constant, or a body's row of constant rates)
    OMEGA_SINUSOID = 1,       // w_i = amp_i sin(rate t + phase_i) (rotode.omega.Sinusoid)
};

// One body's parameters (filled by rotode/kinematic.pyx).
struct KinParams {
    int omega;                // OmegaKind
    int world;                // w given in the world frame
    double gain;              // norm gain (Rucker 2018 eq. 23)
    double w[3];              // OMEGA_CONSTANT
    double amp[3], rate, phase[3];   // OMEGA_SINUSOID
};

namespace models {

// sin(x) (V = double), or sin of every lane of x, taken lane by lane: the libm function of the
// scalar code in every lane, whatever the width (no vector variant of sin is ever used)
// (OUT: r; no vector is returned by value: the lane vectors stay in always-inline functions)
template <class V>
ROTODE_INLINE void sin_lanes(const V& x, V& r) {
    if constexpr (std::is_same_v<V, double>) {
        r = std::sin(x);
    } else {
        r = x;
        for (int i = 0; i < int(sizeof(V) / sizeof(double)); ++i) r[i] = std::sin(x[i]);
    }
}

}  // namespace models

// w(t) of kind W for a body of parameters p (a KinParams, or rotode/_lanes.hpp's KinLanes: one
// body per lane) at the time t (double, or one per lane: the adaptive lanes) (OUT: w[3]):
// rotode/omega.pyx's `Constant` and `Sinusoid` (amp_i sin(rate t + phase_i)), with the same
// operations in every lane.
template <int W, class P, class Tt, class V>
ROTODE_INLINE void kin_omega(const P& p, const Tt& t, V* w) {
    if constexpr (W == OMEGA_CONSTANT) {
        (void)t;
        w[0] = p.w[0];
        w[1] = p.w[1];
        w[2] = p.w[2];
    } else {
        for (int i = 0; i < 3; ++i) {
            V s;
            models::sin_lanes(p.rate * t + p.phase[i], s);
            w[i] = p.amp[i] * s;
        }
    }
}

// q' = 1/2 q (0, w(t)) (body) or 1/2 (0, w(t)) q (world), + c q with the norm gain: `kin_rhs`
// with w(t) of `kin_omega`, on one body's parameters.
template <int W, bool World, bool Gain>
struct KinematicsModel {
    static constexpr int n = 4;     // state q
    static constexpr int k = 4;     // output row q (and w in the body frame beside it)
    KinParams p;

    ROTODE_INLINE void omega(double t, double* w) const { kin_omega<W>(p, t, w); }

    ROTODE_INLINE void operator()(double t, const double* q, double* dq) const {
        double w[3];
        omega(t, w);
        kin_rhs<World, Gain>(p, q, w, dq);
    }

    inline void begin(const double* y0, double* z) const {
        for (int i = 0; i < n; ++i) z[i] = y0[i];
    }
    // q and the BODY angular velocity at t (kinematic.pyx `_store`: one evaluation of w)
    inline void store(double t, const double* z, double* y, double* w) const {
        double w0[3];
        for (int i = 0; i < k; ++i) y[i] = z[i];
        omega(t, w0);
        if constexpr (World) {
            models::world_to_body(y, w0, w);
        } else {
            for (int i = 0; i < 3; ++i) w[i] = w0[i];
        }
    }
    inline void first_row(double t, const double*, const double* z, double* y, double* w) const {
        store(t, z, y, w);
    }
};

template <class P, int W, bool World>
inline int kin_run_t(const KinParams* p, EngineRun* run) {
    if (p->gain != 0.0) return erk_body<P>(KinematicsModel<W, World, true>{*p}, run);
    return erk_body<P>(KinematicsModel<W, World, false>{*p}, run);
}

template <class P>
inline int kin_run_pair(const KinParams* p, EngineRun* run) {
    if (p->omega == OMEGA_CONSTANT)
        return p->world ? kin_run_t<P, OMEGA_CONSTANT, true>(p, run)
                        : kin_run_t<P, OMEGA_CONSTANT, false>(p, run);
    return p->world ? kin_run_t<P, OMEGA_SINUSOID, true>(p, run)
                    : kin_run_t<P, OMEGA_SINUSOID, false>(p, run);
}

// One body of an error-controlled kinematics run with the pair `pair` (-1: unknown pair).
inline int kin_erk_body(int pair, const KinParams* p, EngineRun* run) {
    return with_pair(pair, [&](auto pair_tag) {
        using P = decltype(pair_tag);
        return kin_run_pair<P>(p, run);
    });
}

// ---- Runge-Kutta-Munthe-Kaas: a pair on the rotation vector of each step ------------------
//
// Munthe-Kaas, "Runge-Kutta methods on Lie groups", BIT 38 (1998) 92-111; Hairer, Lubich &
// Wanner, "Geometric Numerical Integration" (2nd ed., 2006), sec. IV.8.2: a step from the base
// qb integrates the algebra equation of v, q = qb exp(v/2) (body frame) or exp(v/2) qb (world),
// v(t_n) = 0, with the pair as a vector ODE (rotode/_rkmk.hpp).  After each accepted step the
// model re-anchors (`accept`): qb <- q(t_n+1), retracted to |qb| = 1, and v <- 0; the engine's
// loop holds the model by value, so the base is a `mutable` member of its copy.  What the
// driver's loop does for these methods (rotode/dynamic.pyx and kinematic.pyx `_deriv_rkmk`,
// `_accept_rkmk`, `_store_row`/`_store`; `Stepper.max_angle`, the error scale's `ref`) the
// models do with the same operations in the same order: the same steps and bits.

// the reference magnitudes of the error scale: 1 for the rotation vector (an error dv is an error
// |dv|/2 of a unit q, whatever |v|), 0 for the rest (SciPy's scale)
constexpr double RKMK_REF[6] = {1.0, 1.0, 1.0, 0.0, 0.0, 0.0};

// The rigid body: state z = [v (3), w_body (3)], output rows [q, w] (7) with
// q = qb exp(v/2) (norm gain not used: |q| = 1 by construction).
//   f: v' = T(-v)^-1 w, w' from Euler's equations at q = qb exp(v/2) with torque kind T
//   accept: qb <- qb exp(v/2) retracted, v <- 0; the FSAL stage's v' becomes w itself (T = 1
//     at v = 0), its w' is kept (q differs by ~1e-16 from the one it was evaluated at)
template <int T, bool Diag>
struct RigidRkmkModel {
    static constexpr int n = 6;     // state [v (3), w (3)]
    static constexpr int k = 7;     // output row [q (4), w (3)]
    RigidParams p;
    bool resume;                    // y0 is an earlier call's row: its base is y0 retracted
    mutable double qb[4];           // the base of the current step

    // (TORQUE_CALL: the source's status, which may stop the body; else void, which cannot)
    ROTODE_INLINE auto operator()(double t, const double* z, double* dz) const {
        double q[4], tau[3];
        quat_times_exp(qb, z, 1.0, q);
        rkmk_rate(z, z + 3, RKMK_FRAME_BODY, dz);
        if constexpr (T == TORQUE_CALL) {
            const int st = rigid_call(p, t, q, z + 3, tau);
            if (st == 0) rigid_euler<Diag>(p, z + 3, tau, dz + 3);
            return st;
        } else {
            rigid_torque_at<T>(p, t, q, tau);
            rigid_euler<Diag>(p, z + 3, tau, dz + 3);
        }
    }
    ROTODE_INLINE const double* ref() const { return RKMK_REF; }
    ROTODE_INLINE double max_angle() const { return rkmk_max_step_angle(); }

    inline void begin(const double* y0, double* z) const {
        for (int i = 0; i < 4; ++i) qb[i] = y0[i];
        rkmk_base(qb, resume);
        for (int i = 0; i < 3; ++i) {
            z[i] = 0.0;
            z[3 + i] = y0[4 + i];
        }
    }
    inline void first_row(double, const double* y0, const double*, double* y, double* w) const {
        for (int i = 0; i < k; ++i) y[i] = y0[i];       // y0 itself, as the driver's y0_row
        for (int i = 0; i < 3; ++i) w[i] = y0[4 + i];
    }
    inline void store(double, const double* z, double* y, double* w) const {
        quat_times_exp(qb, z, 1.0, y);
        for (int i = 0; i < 3; ++i) {
            y[4 + i] = z[3 + i];
            w[i] = z[3 + i];
        }
    }
    inline void accept(double* z, double* K0) const {
        rkmk_rebase(qb, z);
        for (int i = 0; i < 3; ++i) {
            z[i] = 0.0;
            K0[i] = z[3 + i];
        }
    }
};

template <class P, int T>
inline int rigid_rkmk_t(const RigidParams* p, bool resume, EngineRun* run) {
    if (rigid_diagonal(p))
        return erk_body<P>(RigidRkmkModel<T, true>{*p, resume, {}}, run);
    return erk_body<P>(RigidRkmkModel<T, false>{*p, resume, {}}, run);
}

template <class P>
inline int rigid_rkmk_pair(const RigidParams* p, bool resume, EngineRun* run) {
    switch (p->torque) {
        case TORQUE_NONE: return rigid_rkmk_t<P, TORQUE_NONE>(p, resume, run);
        case TORQUE_GRAVITY: return rigid_rkmk_t<P, TORQUE_GRAVITY>(p, resume, run);
        case TORQUE_GRAVITY_AXIS: return rigid_rkmk_t<P, TORQUE_GRAVITY_AXIS>(p, resume, run);
        case TORQUE_BODY: return rigid_rkmk_t<P, TORQUE_BODY>(p, resume, run);
        case TORQUE_CALL: return rigid_rkmk_t<P, TORQUE_CALL>(p, resume, run);
        case TORQUE_GG: return rigid_rkmk_t<P, TORQUE_GG>(p, resume, run);
        default: return rigid_rkmk_t<P, TORQUE_WORLD>(p, resume, run);
    }
}

// One body of an error-controlled Runge-Kutta-Munthe-Kaas rigid-body run with the pair `pair`
// (a PairId: the pair on the state whose tableau it applies to v); resume: y0 is the row stored
// at the end of an accepted step of an earlier call; -1 for an unknown pair.
inline int rigid_rkmk_body(int pair, const RigidParams* p, bool resume, EngineRun* run) {
    return with_pair(pair, [&](auto pair_tag) {
        using P = decltype(pair_tag);
        return rigid_rkmk_pair<P>(p, resume, run);
    });
}

// Quaternion kinematics with w(t) of kind W: state z = v (3), output rows q (4) with
// q = qb exp(v/2) (body frame) or exp(v/2) qb (World), and the body angular velocity.
//   f: v' = T(-v)^-1 w(t) (body) or T(v)^-1 w(t) (world)
//   accept: the FSAL stage T^-1 w(t) becomes w(t) (`rkmk_angular_velocity`, the algebra rate
//     at v = 0), then qb <- q(t_n+1) retracted and v <- 0 (kinematic.pyx `_accept_rkmk`)
template <int W, bool World>
struct KinRkmkModel {
    static constexpr int n = 3;     // state v
    static constexpr int k = 4;     // output row q (and w in the body frame beside it)
    static constexpr int frame = World ? 1 : RKMK_FRAME_BODY;
    KinParams p;
    bool resume;
    mutable double qb[4];

    ROTODE_INLINE void operator()(double t, const double* v, double* dv) const {
        double w[3];
        kin_omega<W>(p, t, w);
        rkmk_rate(v, w, frame, dv);
    }
    ROTODE_INLINE const double* ref() const { return RKMK_REF; }
    ROTODE_INLINE double max_angle() const { return rkmk_max_step_angle(); }

    // q = qb exp(v/2) or exp(v/2) qb (kinematic.pxd `apply_rotvec`, exact exponential)
    ROTODE_INLINE void rotate(const double* v, double* q) const {
        if constexpr (World) {
            exp_times_quat(v, 1.0, qb, q);
        } else {
            quat_times_exp(qb, v, 1.0, q);
        }
    }
    inline void begin(const double* y0, double* z) const {
        for (int i = 0; i < 4; ++i) qb[i] = y0[i];
        rkmk_base(qb, resume);
        for (int i = 0; i < 3; ++i) z[i] = 0.0;
    }
    // q and the BODY angular velocity at t (kinematic.pyx `_store`: one evaluation of w)
    inline void store(double t, const double* z, double* y, double* w) const {
        double w0[3];
        rotate(z, y);
        kin_omega<W>(p, t, w0);
        if constexpr (World) {
            models::world_to_body(y, w0, w);
        } else {
            for (int i = 0; i < 3; ++i) w[i] = w0[i];
        }
    }
    inline void first_row(double t, const double*, const double* z, double* y, double* w) const {
        store(t, z, y, w);
    }
    inline void accept(double* v, double* K0) const {
        double q[4];
        rkmk_angular_velocity(v, K0, frame, K0);
        rotate(v, q);
        rkmk_retract(q);
        for (int i = 0; i < 4; ++i) qb[i] = q[i];
        for (int i = 0; i < 3; ++i) v[i] = 0.0;
    }
};

template <class P>
inline int kin_rkmk_pair(const KinParams* p, bool resume, EngineRun* run) {
    if (p->omega == OMEGA_CONSTANT)
        return p->world
            ? erk_body<P>(KinRkmkModel<OMEGA_CONSTANT, true>{*p, resume, {}}, run)
            : erk_body<P>(KinRkmkModel<OMEGA_CONSTANT, false>{*p, resume, {}}, run);
    return p->world ? erk_body<P>(KinRkmkModel<OMEGA_SINUSOID, true>{*p, resume, {}}, run)
                    : erk_body<P>(KinRkmkModel<OMEGA_SINUSOID, false>{*p, resume, {}}, run);
}

// One body of an error-controlled Runge-Kutta-Munthe-Kaas kinematics run with the pair `pair`
// (as `rigid_rkmk_body`; -1: unknown pair).
inline int kin_rkmk_body(int pair, const KinParams* p, bool resume, EngineRun* run) {
    return with_pair(pair, [&](auto pair_tag) {
        using P = decltype(pair_tag);
        return kin_rkmk_pair<P>(p, resume, run);
    });
}

// One evaluation f(t, q) of the kinematics (OUT: dq[4]).
inline void kin_eval(const KinParams* p, double t, const double* q, double* dq) {
    const bool g = p->gain != 0.0;
    if (p->omega == OMEGA_CONSTANT) {
        if (p->world) return g ? KinematicsModel<OMEGA_CONSTANT, true, true>{*p}(t, q, dq)
                               : KinematicsModel<OMEGA_CONSTANT, true, false>{*p}(t, q, dq);
        return g ? KinematicsModel<OMEGA_CONSTANT, false, true>{*p}(t, q, dq)
                 : KinematicsModel<OMEGA_CONSTANT, false, false>{*p}(t, q, dq);
    }
    if (p->world) return g ? KinematicsModel<OMEGA_SINUSOID, true, true>{*p}(t, q, dq)
                           : KinematicsModel<OMEGA_SINUSOID, true, false>{*p}(t, q, dq);
    return g ? KinematicsModel<OMEGA_SINUSOID, false, true>{*p}(t, q, dq)
             : KinematicsModel<OMEGA_SINUSOID, false, false>{*p}(t, q, dq);
}

// One evaluation f(t, y) of the rigid body (OUT: dy[7]): 0, or a TORQUE_CALL source's status.
inline int rigid_eval(const RigidParams* p, double t, const double* y, double* dy) {
    const bool d = rigid_diagonal(p);
    switch (p->torque) {
#define ROTODE_EVAL_CASE(T) \
        case T: \
            return d ? rigid_eval_t<T, true>(p, t, y, dy) : rigid_eval_t<T, false>(p, t, y, dy);
        ROTODE_EVAL_CASE(TORQUE_NONE)
        ROTODE_EVAL_CASE(TORQUE_GRAVITY)
        ROTODE_EVAL_CASE(TORQUE_GRAVITY_AXIS)
        ROTODE_EVAL_CASE(TORQUE_BODY)
        ROTODE_EVAL_CASE(TORQUE_CALL)
        ROTODE_EVAL_CASE(TORQUE_GG)
#undef ROTODE_EVAL_CASE
        default: return d ? rigid_eval_t<TORQUE_WORLD, true>(p, t, y, dy)
                          : rigid_eval_t<TORQUE_WORLD, false>(p, t, y, dy);
    }
}

}  // namespace rotode

#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif
