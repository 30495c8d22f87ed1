// The lane kernels: the fixed-step methods rk3, rk4, ab3, Lie-Euler and the Crouch-Grossman
// methods on blocks of rigid bodies or of quaternion kinematics, and exp2, the fixed-step
// Magnus methods (magnus2, magnus4, magnus6, magnus8) and magnus_ca on blocks of quaternion
// kinematics, one body per SIMD lane (docs/architecture.md, "The lane kernels").
//
// One source for every width.  A lane vector `Lanes<L>` is a GCC vector of L doubles (`double`
// itself for L = 1): its + - * / act lane by lane, IEEE-exact in every lane, and a double mixed
// with it is broadcast.  The steps (`rk3_lanes`, `rk4_lanes` of rotode/_rk.hpp, once for every
// model and path; `ab3_lanes`, the Lie-group steps here) and the
// equations (`rigid_rhs`, `kin_rhs` and `kin_omega` of rotode/_models.hpp, which the specialised
// engine's models also are) are templates over the value type, so lane l of an instance of L
// lanes does exactly the operations of the L = 1 instance on body l, in the same order: with
// -ffp-contract=off (setup.py; no FMA contraction, no reassociation without -ffast-math) its
// results are the L = 1 instance's bits whatever the width.  The L = 1 instance is the single
// body's path (rotode/dynamic.pyx and rotode/kinematic.pyx run every eligible rk3/rk4 body
// through this file), so a batch equals its single runs bit for bit.  The only functions outside
// + - * / are the square root of `normalize` (correctly rounded in scalar and vector code alike),
// the sine of `omega.Sinusoid` (libm's, called lane by lane) and, in the Lie-group steps, the
// square root, cosine and sine of exp(h w / 2) beyond its Taylor range (libm's, lane by lane,
// only in the lanes that reach it), all taken lane by lane.
//
// Widths by instruction set, chosen at run time (`lanes_supported`, `lanes_block`): "scalar"
// (L = 1), "sse2" (the baseline build, L = 2), "avx2" (L = 4) and "avx512" (L = 8): one
// register per vector (two registers per vector spill the stages to the stack and measured
// slower), the last two compiled with GCC's `target` attribute and run only where
// `__builtin_cpu_supports` says the CPU has them.
//
// Methods: Kutta's third-order method and the classical fourth-order Runge-Kutta method
// (Hairer, Norsett & Wanner, "Solving Ordinary Differential Equations I", 2nd ed., 1993, sec.
// II.1, Table 1.1 and eq. 1.8), rotode/_rk.hpp's templates, which rotode/dynamic.pxd and
// rotode/kinematic.pxd `rk3_step`/`rk4_step` call too; the variable-step Adams-Bashforth 3 of
// rotode/dynamic.pyx; the Crouch-Grossman methods of a run-time tableau (Crouch & Grossman 1993;
// Owren & Marthinsen 1999), Lie-Euler among them (cg1's tableau), with the operations of
// rotode/dynamic.pxd `cg_step`/`lie_euler_step`; on kinematics (`KinStepModel`) the operations
// of rotode/kinematic.pyx `_step` for ab3 (rk4's two starting steps, rotode/_rk.hpp
// `ab3_coefficients`), the product of exponentials of lie_euler/cg1/cg2/cg3, exp2 and the Magnus
// methods of one to four Gauss nodes (orders 4, 6, 8: rotode/_magnus.hpp, the driver's own
// templates; Blanes, Casas & Ros, BIT 40, 2000), exp exact or [NIRD]'s approximation
// (`apply_rotvec`), the cosine of `Sinusoid`'s w' and the square roots lane by lane.
#pragma once

#include <cmath>
#include <cstddef>
#include <type_traits>
#include <utility>

#include "_engine.hpp"
#include "_models.hpp"
#include "_magnus.hpp"
#include "_rk.hpp"

#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpsabi"      // vectors passed only to always-inline functions
#endif

namespace rotode {

// the instruction sets, in the order of `rotode._lanes.ISAS` (after "off")
enum LaneIsa { ISA_SCALAR = 0, ISA_SSE2 = 1, ISA_AVX2 = 2, ISA_AVX512 = 3, ISA_COUNT = 4 };
// the fixed-step kernels of the lane blocks (LANES_AB3 and LANES_CG: rigid bodies only;
// LANES_CG: the Crouch-Grossman methods of a `LaneTableau`, Lie-Euler that of cg1; on
// kinematics LANES_CG is the product of exponentials of a `KinLaneMethod`, LANES_AB3 its ab3,
// LANES_EXP2, LANES_MAGNUS and LANES_MAGNUS_CA: kinematics only)
enum LaneKernel {
    LANES_RK3 = 0, LANES_RK4 = 1, LANES_AB3 = 2, LANES_CG = 3, LANES_EXP2 = 4, LANES_MAGNUS = 5,
    LANES_MAGNUS_CA = 6
};

// A Crouch-Grossman tableau of s <= 3 stages (rotode/dynamic.pxd CGTableau's a and b: a[i*3 + j]
// strictly lower triangular; the nodes c are not needed, the compiled torques being autonomous)
struct LaneTableau {
    int s;
    double a[9];
    double b[3];
    double c[3];             // the stages' nodes (a time-dependent torque's stage times)
};

// A kinematic method of rotode/kinematic.pyx's `_step` in the lanes (KinCfg's data): the stages
// s with weights b and nodes c (LANES_CG: the Crouch-Grossman product, s <= 3; LANES_MAGNUS:
// the Gauss nodes of magnus2, magnus4, magnus6 or magnus8, s = 1 .. 4), exp(x) by [NIRD]'s
// trig-free approximation (approx), w(t0) read by the step (needs_w0), the last node's w
// carried as the next step's w(t0) (carry), w' from the source (rate_source: counted; else
// w' = 0); LANES_MAGNUS_CA: the series' terms (1 .. 4) and whether a step beyond the bound
// takes equal sub-steps (substep) or fails
struct KinLaneMethod {
    int s;
    double b[4], c[4];
    bool approx, needs_w0, carry, rate_source;
    int terms;
    bool substep;
};

// A block run's choices: p[0] for every body (shared), q / |q| after every step (normalize),
// the tableau of LANES_CG on rigid bodies (else unused), the kinematic method of the kernels
// that `KinStepModel` steps (else unused)
struct LaneCall {
    bool shared, normalize;
    const LaneTableau* tab;
    const KinLaneMethod* km;
};

namespace lanes {

template <int L>
struct LaneType {
    typedef double type __attribute__((vector_size(L * sizeof(double))));
};
template <>
struct LaneType<1> {
    typedef double type;
};
template <int L>
using Lanes = typename LaneType<L>::type;

template <class V> constexpr int width = int(sizeof(V) / sizeof(double));

ROTODE_INLINE double get(const double& v, int) { return v; }
ROTODE_INLINE void set(double& v, int, double x) { v = x; }
template <class V>
ROTODE_INLINE double get(const V& v, int l) { return v[l]; }
template <class V>
ROTODE_INLINE void set(V& v, int l, double x) { v[l] = x; }

// one body per lane: the parameters of RigidParams, lane l from body l
template <class V>
struct RigidLanes {
    V I[9], Iinv[9];
    V gain;
    int gyroscopic;
    V mg;
    V com[3];
    V tau[3];
    V gg_k, gg_n, gg_u0;        // TORQUE_GG
    V gg_P[3], gg_Q[3], gg_I[9];
};

// lane l <- one body's parameters
template <class V>
ROTODE_INLINE void set_params(RigidLanes<V>& q, int l, const RigidParams& b) {
    for (int c = 0; c < 9; ++c) {
        set(q.I[c], l, b.I[c]);
        set(q.Iinv[c], l, b.Iinv[c]);
        set(q.gg_I[c], l, b.gg_I[c]);
    }
    set(q.gain, l, b.gain);
    set(q.mg, l, b.mg);
    set(q.gg_k, l, b.gg_k);
    set(q.gg_n, l, b.gg_n);
    set(q.gg_u0, l, b.gg_u0);
    for (int c = 0; c < 3; ++c) {
        set(q.com[c], l, b.com[c]);
        set(q.tau[c], l, b.tau[c]);
        set(q.gg_P[c], l, b.gg_P[c]);
        set(q.gg_Q[c], l, b.gg_Q[c]);
    }
    q.gyroscopic = b.gyroscopic;
}

// lane l <- p[l] for l < nb, the last body's values in the lanes after it (they are stepped,
// never stored)
template <class V>
ROTODE_INLINE void gather_params(const RigidParams* p, bool shared, std::ptrdiff_t nb,
                                 RigidLanes<V>* out) {
    for (int l = 0; l < width<V>; ++l) set_params(*out, l, p[shared ? 0 : (l < nb ? l : nb - 1)]);
}

// one body per lane: the parameters of KinParams, lane l from body l
template <class V>
struct KinLanes {
    V gain;
    V w[3];
    V amp[3], rate, phase[3];
};

// lane l <- one body's parameters
template <class V>
ROTODE_INLINE void set_params(KinLanes<V>& q, int l, const KinParams& b) {
    set(q.gain, l, b.gain);
    set(q.rate, l, b.rate);
    for (int c = 0; c < 3; ++c) {
        set(q.w[c], l, b.w[c]);
        set(q.amp[c], l, b.amp[c]);
        set(q.phase[c], l, b.phase[c]);
    }
}

// lane l <- p[l] for l < nb, the last body's values in the lanes after it
template <class V>
ROTODE_INLINE void gather_params(const KinParams* p, bool shared, std::ptrdiff_t nb,
                                 KinLanes<V>* out) {
    for (int l = 0; l < width<V>; ++l) set_params(*out, l, p[shared ? 0 : (l < nb ? l : nb - 1)]);
}

// The rigid body in lanes (a `LaneModel`: the state's size n and the row's k, `gather(p, shared,
// nb)` its parameters, `begin(t0)` before the first step, `nodes(t0, h)` before a step,
// `rhs(node, y, dy)` at the step's node 0 (t0), 1 (t0 + h/2) or 2 (t0 + h), `accel(c, q, w,
// dw)` at t0 + c h (a Crouch-Grossman stage), `advanced()` after it, `row(z, w)` the body rate
// of the row of state z): `rigid_rhs_at` of rotode/_models.hpp.  Only TORQUE_GG reads the time:
// the step's start t0 + 0 h and its nodes as rotode/dynamic.pyx `_step` and rotode/_rk.hpp
// `CallModel` form them (the driver's loop: the same times, the same bits).
template <int T, bool Diag, bool Gain, class V>
struct RigidLaneModel {
    typedef RigidParams Params;
    static constexpr int n = 7, k = 7;
    RigidLanes<V> p;
    double ts = 0.0, hs = 0.0;      // the step's start and size (TORQUE_GG)
    ROTODE_INLINE void gather(const RigidParams* ps, bool shared, std::ptrdiff_t nb) {
        gather_params(ps, shared, nb, &p);
    }
    ROTODE_INLINE void begin(double) {}
    ROTODE_INLINE void nodes(double t0, double h) {
        if constexpr (T == TORQUE_GG) {
            ts = t0 + 0.0 * h;      // (the driver's t0 + sub h / substeps, sub = 0)
            hs = h;
        }
    }
    ROTODE_INLINE void advanced() {}
    ROTODE_INLINE void rhs(int node, const V* y, V* dy) const {
        if constexpr (T == TORQUE_GG) {
            const double t = node == 0 ? ts : node == 1 ? ts + 0.5 * hs : ts + hs;
            rigid_rhs_at<T, Diag, Gain>(p, t, y, dy);
        } else {
            (void)node;
            rigid_rhs<T, Diag, Gain>(p, y, dy);
        }
    }
    // w' = I^-1 (tau(t0 + c h, q) - w x I w) (rotode/dynamic.pxd `body_accel`; the Lie-group
    // kernels)
    ROTODE_INLINE void accel(double c, const V* q, const V* w, V* dw) const {
        V tau[3];
        rigid_torque_at<T>(p, ts + c * hs, q, tau);
        rigid_euler<Diag>(p, w, tau, dw);
    }
    ROTODE_INLINE void row(const V* z, V* w) const {
        for (int c = 0; c < 3; ++c) w[c] = z[4 + c];
    }
};

// Quaternion kinematics in lanes: `kin_rhs` with w(t) of `kin_omega` (rotode/_models.hpp), as
// rotode/kinematic.pyx steps rk3/rk4: w at the nodes t0, t0 + h/2 and t0 + h of each step, the
// last one carried as the next step's w(t0) (the first read at t[0]); a row's rate is the carried
// one (in the body frame: R(q)^T w with World).  A source shared by the block's bodies (one
// omega.Sinusoid) is evaluated once per node on the double instance and broadcast: the bits
// every lane would compute, with the sines of one body per block instead of one per lane.
template <int W, bool World, bool Gain, class V>
struct KinLaneModel {
    typedef KinParams Params;
    static constexpr int n = 4, k = 4;
    KinLanes<V> p;
    KinParams one;                  // the shared source's parameters (shared)
    bool shared;
    V w[3][3];                      // w at the step's nodes (w[0]: the carried one)
    ROTODE_INLINE void gather(const KinParams* ps, bool sh, std::ptrdiff_t nb) {
        gather_params(ps, sh, nb, &p);
        one = ps[0];
        shared = sh;
    }
    ROTODE_INLINE void omega(double t, V* wt) const {
        if (shared) {
            double w1[3];
            kin_omega<W>(one, t, w1);
            for (int c = 0; c < 3; ++c) models::splat(wt[c], w1[c]);
        } else {
            kin_omega<W>(p, t, wt);
        }
    }
    ROTODE_INLINE void begin(double t0) { omega(t0, w[0]); }
    ROTODE_INLINE void nodes(double t0, double h) {
        omega(t0 + 0.5 * h, w[1]);
        omega(t0 + h, w[2]);
    }
    ROTODE_INLINE void advanced() {
        for (int c = 0; c < 3; ++c) w[0][c] = w[2][c];
    }
    ROTODE_INLINE void rhs(int node, const V* q, V* dq) const {
        kin_rhs<World, Gain>(p, q, w[node], dq);
    }
    ROTODE_INLINE void row(const V* z, V* wb) const {
        if constexpr (World) {
            models::world_to_body(z, w[0], wb);
        } else {
            for (int c = 0; c < 3; ++c) wb[c] = w[0][c];
        }
    }
};

// The variable-step Adams-Bashforth 3 history of a block: the last three f (f[nab % 3] the
// newest), the two previous step sizes, the steps taken
template <class V, int N>
struct Ab3History {
    V f[3][N];
    double hh[2] = {0.0, 0.0};
    long long nab = 0;
};

// One step of ab3 from y (OUT: yout[M::n]; IN/OUT: a): rotode/dynamic.pyx `_step`'s, with Kutta's
// method (`rk3_from`) for the first two steps and the weights of rotode/_rk.hpp
// `ab3_coefficients` (the grid's, the same in every lane) after them.
template <class M, class V>
ROTODE_INLINE void ab3_lanes(const M& f, double h, Ab3History<V, M::n>& a, const V* y,
                             V* yout) {
    const int slot = int(a.nab % 3);
    V* f0 = a.f[slot];
    f.rhs(0, y, f0);
    if (a.nab < 2) {
        rk3_from(f, h, y, f0, yout);
    } else {
        const V* f1 = a.f[(a.nab + 2) % 3];
        const V* f2 = a.f[(a.nab + 1) % 3];
        double b[3];
        ab3_coefficients(h, a.hh[0], a.hh[1], b);
        for (int i = 0; i < M::n; ++i)
            yout[i] = y[i] + (b[0] * f0[i] + b[1] * f1[i] + b[2] * f2[i]);
    }
    a.hh[1] = a.hh[0];
    a.hh[0] = h;
    ++a.nab;
}

// q <- q / |q| (dynamic.pyx `_step` with `normalize`, kinematic.pxd `normalize4`:
// z * (1 / sqrt(|q|^2)))
template <class V>
ROTODE_INLINE void normalize_lanes(V* z) {
    const V n2 = z[0] * z[0] + z[1] * z[1] + z[2] * z[2] + z[3] * z[3];
    V r = n2;
    for (int l = 0; l < width<V>; ++l) set(r, l, std::sqrt(get(n2, l)));
    const V s = 1.0 / r;
    for (int i = 0; i < 4; ++i) z[i] = z[i] * s;
}

// a lane mask of V (bool for V = double, else an integer vector: -1 in a lane that is set)
template <class V>
using Mask = decltype(std::declval<V>() == std::declval<V>());

template <class V>
ROTODE_INLINE void set_mask(Mask<V>& m, int l, bool x) {
    if constexpr (width<V> == 1) m = x;
    else m[l] = x ? -1 : 0;
}

template <class V>
ROTODE_INLINE bool mask_at(const Mask<V>& m, int l) {
    if constexpr (width<V> == 1) return m;
    else return m[l] != 0;
}

// e = exp(c w / 2) in every lane: rotode/_rkmk.hpp `quat_exp_half`'s operations, the Taylor
// polynomials in vectors, and lane by lane, only in a lane beyond their range (|c w / 2|^2 > 1,
// or NaN), the scalar function's std::sqrt, std::cos and std::sin (OUT: e[4])
template <class V>
ROTODE_INLINE void exp_pure_v(const V* x, V* e);

template <class V>
ROTODE_INLINE void exp_half_v(const V* w, double c, V* e) {
    V x[3];
    x[0] = 0.5 * c * w[0];
    x[1] = 0.5 * c * w[1];
    x[2] = 0.5 * c * w[2];
    exp_pure_v(x, e);
}

// e = exp((0, x)) in every lane: rotode/quaternion.pxd `quat_exp_pure` (the operations of
// `exp_half_v` after its x) (OUT: e[4])
template <class V>
ROTODE_INLINE void exp_pure_v(const V* x, V* e) {
    const V x2 = x[0] * x[0] + x[1] * x[1] + x[2] * x[2];
    V co = taylor_cos(x2), s = taylor_sinc(x2);
    const Mask<V> small = x2 <= 1.0;              // (a NaN lane: not small, as the scalar test)
    for (int l = 0; l < width<V>; ++l) {
        if (mask_at<V>(small, l)) continue;
        const double a = std::sqrt(get(x2, l));
        set(co, l, std::cos(a));
        set(s, l, std::sin(a) / a);
    }
    e[0] = co;
    e[1] = s * x[0];
    e[2] = s * x[1];
    e[3] = s * x[2];
}

// e = [NIRD]'s trig-free normalised third-order exp((0, x)) in every lane: rotode/quaternion.pxd
// `quat_exp_approx`'s operations, the branch of each lane's |x|^2 (> 1e100: a and b scaled by
// 1 / |x|^2) chosen lane by lane, the square root lane by lane (OUT: e[4])
template <class V>
ROTODE_INLINE void exp_approx_v(const V* x, V* e) {
    const V x2 = x[0] * x[0] + x[1] * x[1] + x[2] * x[2];
    V a = 1.0 - 0.5 * x2, b = 1.0 - x2 / 6.0;
    for (int l = 0; l < width<V>; ++l) {
        const double y = get(x2, l);
        if (y > 1e100) {
            set(a, l, 1.0 / y - 0.5);
            set(b, l, 1.0 / y - 1.0 / 6.0);
        }
    }
    const V r2 = a * a + b * b * x2;
    V r = r2;
    for (int l = 0; l < width<V>; ++l) set(r, l, std::sqrt(get(r2, l)));
    const V n = 1.0 / r;
    e[0] = a * n;
    e[1] = b * n * x[0];
    e[2] = b * n * x[1];
    e[3] = b * n * x[2];
}

// out = q exp(c w / 2) in every lane: rotode/_rkmk.hpp `quat_times_exp` (OUT: out[4]; may not
// alias q)
template <class V>
ROTODE_INLINE void times_exp_v(const V* q, const V* w, double c, V* out) {
    V e[4];
    exp_half_v(w, c, e);
    rkmk_quat_mul(q, e, out);
}

// A Crouch-Grossman step on SU(2) x R^3 from y = [q, w] (OUT: yout[7]): rotode/dynamic.pxd
// `cg_step`'s operations in its order (Crouch & Grossman 1993; Owren & Marthinsen 1999),
//   Q_i = q0 exp(h a_i1 W_1 / 2) ... exp(h a_i,i-1 W_i-1 / 2),  W_i = w0 + h sum_j a_ij K_j,
//   K_i = w'(Q_i, W_i);  q1 = q0 exp(h b_1 W_1 / 2) ... exp(h b_s W_s / 2),
//   w1 = w0 + h sum_i b_i K_i,
// the factors of a zero coefficient skipped (the tableau's: the same in every lane).  Lie-Euler
// (`lie_euler_step`) is the tableau of cg1 (a = 0, b = 1): q0 exp(h w0 / 2), w0 + h K_1 with
// h * 1.0 = h, the same bits.
template <class M, class V>
ROTODE_INLINE void cg_lanes(const M& f, const LaneTableau& tab, double h, const V* y, V* yout) {
    V Q[4], tmp[4], W[9], K[9];
    for (int i = 0; i < tab.s; ++i) {
        for (int k = 0; k < 4; ++k) Q[k] = y[k];
        for (int k = 0; k < 3; ++k) W[3 * i + k] = y[4 + k];
        for (int j = 0; j < i; ++j) {
            const double coef = tab.a[3 * i + j];
            if (coef == 0.0) continue;
            times_exp_v(Q, &W[3 * j], h * coef, tmp);
            for (int k = 0; k < 4; ++k) Q[k] = tmp[k];
            for (int k = 0; k < 3; ++k) W[3 * i + k] = W[3 * i + k] + h * coef * K[3 * j + k];
        }
        f.accel(tab.c[i], Q, &W[3 * i], &K[3 * i]);
    }
    for (int k = 0; k < 4; ++k) Q[k] = y[k];
    for (int k = 0; k < 3; ++k) yout[4 + k] = y[4 + k];
    for (int i = 0; i < tab.s; ++i) {
        const double coef = tab.b[i];
        if (coef == 0.0) continue;
        times_exp_v(Q, &W[3 * i], h * coef, tmp);
        for (int k = 0; k < 4; ++k) Q[k] = tmp[k];
        for (int k = 0; k < 3; ++k) yout[4 + k] = yout[4 + k] + h * coef * K[3 * i + k];
    }
    for (int k = 0; k < 4; ++k) yout[k] = Q[k];
}

// the rotation of q by the rotation vector om in every lane: rotode/kinematic.pxd
// `apply_rotvec`, x = om / 2, q exp(x) (body) or exp(x) q (World), exp exact or approximate
// (OUT: out[4]; may not alias q)
template <bool World, class V>
ROTODE_INLINE void apply_rotvec_v(const V* q, const V* om, bool approx, V* out) {
    V x[3], e[4];
    for (int c = 0; c < 3; ++c) x[c] = 0.5 * om[c];
    if (approx) exp_approx_v(x, e);
    else exp_pure_v(x, e);
    if constexpr (World) rkmk_quat_mul(e, q, out);
    else rkmk_quat_mul(q, e, out);
}

// w'(t) of kind W in every lane: rotode/omega.pyx's `Sinusoid.evaluate_rate` (amp_i rate
// cos(rate t + phase_i), libm's cosine lane by lane) and `Constant`'s (0) (OUT: dw[3])
template <int W, class P, class V>
ROTODE_INLINE void kin_omega_rate(const P& p, double t, V* dw) {
    if constexpr (W == OMEGA_CONSTANT) {
        for (int c = 0; c < 3; ++c) models::splat(dw[c], 0.0);
    } else {
        for (int i = 0; i < 3; ++i) {
            const V x = p.rate * t + p.phase[i];
            V co = x;
            for (int l = 0; l < width<V>; ++l) set(co, l, std::cos(get(x, l)));
            dw[i] = p.amp[i] * p.rate * co;
        }
    }
}

// Quaternion kinematics in lanes as rotode/kinematic.pyx `_step` steps ab3, the Crouch-Grossman
// product of exponentials (lie_euler, cg1, cg2, cg3), exp2 and the fixed-step Magnus methods
// (magnus2, magnus4, magnus6, magnus8)
// (a `LaneModel` of its own step, `lazy`): its w(t0) read when the step or a row needs it and
// none is held (KinWork's have0), held after a step that carries it; the w and w' evaluations
// of one body counted as `_omega` and `_rate` count them (the block's bodies take the same
// steps: one count for the block, each lane's taken when it fails or ends).
template <int W, bool World, bool Gain, class V>
struct KinStepModel {
    typedef KinParams Params;
    static constexpr int n = 4, k = 4;
    static constexpr bool lazy = true;
    KinLanes<V> p;
    KinParams one;
    bool shared;
    V w0[3];                        // w(t0) when have0
    bool have0;
    long long nfev, nrate;
    long long j;                    // ab3: the steps taken, the last three f, the previous starts
    V f[3][4];
    double tp1, tp2;
    // magnus_ca: the lanes alive (`block_run`'s), each lane's sub-steps, and the lanes whose
    // last step failed (`failures`: their status and rotation angle; the step left them as
    // they were, as the driver's `advance_steps` leaves a body)
    static constexpr int L = width<V>;
    const bool* alive;
    std::ptrdiff_t nsub[L];
    bool failures;
    int status[L];
    double angle[L];
    ROTODE_INLINE void gather(const KinParams* ps, bool sh, std::ptrdiff_t nb) {
        gather_params(ps, sh, nb, &p);
        one = ps[0];
        shared = sh;
    }
    ROTODE_INLINE void omega(double t, V* wt) {
        ++nfev;
        if (shared) {
            double w1[3];
            kin_omega<W>(one, t, w1);
            for (int c = 0; c < 3; ++c) models::splat(wt[c], w1[c]);
        } else {
            kin_omega<W>(p, t, wt);
        }
    }
    ROTODE_INLINE void rate(const KinLaneMethod& m, double t, V* dw) {
        if (!m.rate_source) {
            for (int c = 0; c < 3; ++c) models::splat(dw[c], 0.0);
            return;
        }
        ++nrate;
        if (shared) {
            double d1[3];
            kin_omega_rate<W>(one, t, d1);
            for (int c = 0; c < 3; ++c) models::splat(dw[c], d1[c]);
        } else {
            kin_omega_rate<W>(p, t, dw);
        }
    }
    ROTODE_INLINE void begin(double) {
        have0 = false;
        nfev = nrate = j = 0;
        tp1 = tp2 = 0.0;
        failures = false;
        for (int l = 0; l < L; ++l) {
            nsub[l] = 0;
            status[l] = ENGINE_OK;
            angle[l] = 0.0;
        }
    }
    // before the row at t (`_store`): w(t) unless held
    ROTODE_INLINE void at_row(double t) {
        if (!have0) {
            omega(t, w0);
            have0 = true;
        }
    }
    ROTODE_INLINE void row(const V* z, V* wb) const {
        if constexpr (World) {
            models::world_to_body(z, w0, wb);
        } else {
            for (int c = 0; c < 3; ++c) wb[c] = w0[c];
        }
    }
    template <int K>
    ROTODE_INLINE void step(const LaneCall& o, double t0, double h, const V* q, V* qn) {
        const KinLaneMethod& m = *o.km;
        if (!have0 && (K != LANES_MAGNUS && (K != LANES_CG || m.needs_w0))) {
            omega(t0, w0);
            have0 = true;
        }
        if constexpr (K == LANES_AB3) ab3(t0, h, q, qn);
        else if constexpr (K == LANES_CG) cg(m, t0, h, q, qn);
        else if constexpr (K == LANES_EXP2) exp2(m, t0, h, q, qn);
        else if constexpr (K == LANES_MAGNUS_CA) magnus_ca(m, t0, h, q, qn);
        else magnus(m, t0, h, q, qn);
    }
    // `_step`'s ab3: two rk4 steps (f_j kept), then the variable-step weights of
    // rotode/_rk.hpp `ab3_coefficients` on the grid's previous starts (the same in every lane)
    ROTODE_INLINE void ab3(double t0, double h, const V* q, V* qn) {
        if (j >= 2) {
            for (int c = 0; c < 4; ++c) {
                f[2][c] = f[1][c];
                f[1][c] = f[0][c];
            }
            kin_rhs<World, Gain>(p, q, w0, f[0]);
            double b[3];
            ab3_coefficients(h, t0 - tp1, tp1 - tp2, b);
            for (int c = 0; c < 4; ++c)
                qn[c] = q[c] + (b[0] * f[0][c] + b[1] * f[1][c] + b[2] * f[2][c]);
            have0 = false;
        } else {
            if (j == 1)
                for (int c = 0; c < 4; ++c) f[1][c] = f[0][c];
            kin_rhs<World, Gain>(p, q, w0, f[0]);
            V wm[3], w1[3];
            omega(t0 + 0.5 * h, wm);
            omega(t0 + h, w1);
            const KinNodes<World, Gain, V, KinLanes<V>> nodes{&p, {w0, wm, w1}};
            rk4_lanes(nodes, h, q, qn);
            for (int c = 0; c < 3; ++c) w0[c] = w1[c];
            have0 = true;
        }
        tp2 = tp1;
        tp1 = t0;
        ++j;
    }
    // `_step`'s Crouch-Grossman product: every stage's w (c_s != 0), then the product of
    // exp(h b_s w_s / 2) (c_s = 0: w(t0)); the last node's w carried when it is the step's end
    ROTODE_INLINE void cg(const KinLaneMethod& m, double t0, double h, const V* q, V* qn) {
        V ws[3][3], om[3], a[4], b[4];
        for (int s = 0; s < m.s; ++s)
            if (m.c[s] != 0.0) omega(t0 + m.c[s] * h, ws[s]);
        for (int c = 0; c < 4; ++c) a[c] = q[c];
        for (int s = 0; s < m.s; ++s) {
            const V* wp = m.c[s] != 0.0 ? ws[s] : w0;
            const double hb = m.b[s] * h;
            for (int c = 0; c < 3; ++c) om[c] = hb * wp[c];
            apply_rotvec_v<World>(a, om, m.approx, b);
            for (int c = 0; c < 4; ++c) a[c] = b[c];
        }
        for (int c = 0; c < 4; ++c) qn[c] = a[c];
        have0 = m.carry;
        if (m.carry)
            for (int c = 0; c < 3; ++c) w0[c] = ws[m.s - 1][c];
    }
    // `_step`'s exp2: Omega = h w(t0) + h^2/2 w'(t0) (rotode/kinematic.pxd `exp2_rotvec`)
    ROTODE_INLINE void exp2(const KinLaneMethod& m, double t0, double h, const V* q, V* qn) {
        V dw[3], om[3];
        rate(m, t0, dw);
        const double c2 = 0.5 * h * h;
        for (int c = 0; c < 3; ++c) om[c] = h * w0[c] + c2 * dw[c];
        apply_rotvec_v<World>(q, om, m.approx, qn);
        have0 = false;
    }
    // `_step`'s fixed-step Magnus methods of one to four Gauss nodes (rotode/kinematic.pxd
    // `lie_euler_rotvec`; orders 4, 6 and 8: rotode/_magnus.hpp, the driver's own formulas)
    ROTODE_INLINE void magnus(const KinLaneMethod& m, double t0, double h, const V* q, V* qn) {
        V ws[4][3], om[3];
        for (int s = 0; s < m.s; ++s) omega(t0 + m.c[s] * h, ws[s]);
        if (m.s == 1) {
            for (int c = 0; c < 3; ++c) om[c] = h * ws[0][c];
        } else if (m.s == 2) {
            magnus::order4(ws[0], ws[1], h, World, om);
        } else if (m.s == 3) {
            magnus::order6(ws[0], ws[1], ws[2], h, World, om);
        } else {
            magnus::order8(ws[0], ws[1], ws[2], ws[3], h, World, om);
        }
        apply_rotvec_v<World>(q, om, m.approx, qn);
        have0 = false;
    }
    // `_step`'s magnus_ca (rotode/kinematic.pyx `_magnus_ca`): w' at t0 (0 or the source's),
    // Omega of rotode/_magnus.hpp `constant_acceleration` in every lane; a lane whose rotation
    // angle bound reaches pi/sqrt(2) takes its equal sub-steps by the double instance, lane by
    // lane (substep), or fails with the driver's status and its angle
    ROTODE_INLINE void magnus_ca(const KinLaneMethod& m, double t0, double h, const V* q, V* qn) {
        V dw[3], om[3], a, b;
        rate(m, t0, dw);
        magnus::end_rates2(w0, dw, h, a, b);
        magnus::constant_acceleration(w0, dw, h, m.terms, World, om);
        apply_rotvec_v<World>(q, om, m.approx, qn);
        have0 = false;
        const double bound = magnus_bound();
        for (int l = 0; l < L; ++l) {
            const double ang = magnus::ca_angle(get(a, l), get(b, l), h);
            if (ang < bound || !alive[l]) continue;
            if (m.substep && ang < MAGNUS_MAX_SUBSTEPS * 0.5 * bound) {
                double w2[3], d[3], o[3], z[4], zn[4];
                const std::ptrdiff_t ns = std::ptrdiff_t(std::floor(ang / (0.5 * bound))) + 1;
                const double hs = h / double(ns);
                nsub[l] += ns;
                for (int c = 0; c < 3; ++c) d[c] = get(dw[c], l);
                for (int c = 0; c < 4; ++c) z[c] = get(q[c], l);
                for (std::ptrdiff_t sub = 0; sub < ns; ++sub) {
                    for (int c = 0; c < 3; ++c) w2[c] = get(w0[c], l) + d[c] * (double(sub) * hs);
                    magnus::constant_acceleration(w2, d, hs, m.terms, World, o);
                    apply_rotvec_v<World>(z, o, m.approx, zn);
                    for (int c = 0; c < 4; ++c) z[c] = zn[c];
                }
                for (int c = 0; c < 4; ++c) set(qn[c], l, z[c]);
            } else {
                for (int c = 0; c < 4; ++c) set(qn[c], l, get(q[c], l));
                status[l] = m.substep ? ENGINE_TOO_MANY_SUBSTEPS : ENGINE_ROTATION_BOUND;
                angle[l] = ang;
                failures = true;
            }
        }
    }
};

// rows k wide from `slot` on NaN
template <int K>
ROTODE_INLINE void nan_rows(const BlockRun* b, int l, std::ptrdiff_t slot) {
    for (; slot < b->m; ++slot) {
        for (int c = 0; c < K; ++c) b->yo[(l * b->m + slot) * K + c] = NAN;
        for (int c = 0; c < 3; ++c) b->wo[(l * b->m + slot) * 3 + c] = NAN;
    }
}

// lane l of the n values z is finite (the driver's check: z - z == 0)
template <int N, class V>
ROTODE_INLINE bool finite_lane(const V* z, int l) {
    bool ok = true;
    for (int c = 0; c < N; ++c) ok = ok && (get(z[c], l) - get(z[c], l) == 0.0);
    return ok;
}

// Lane l fails with `status` between grid steps j and last (the driver's `_body`: failed = j,
// counts[0] = last, NaN rows from `slot` on).
template <int K>
ROTODE_INLINE void fail_lane(const BlockRun* b, int l, int status, std::ptrdiff_t j,
                             std::ptrdiff_t last, std::ptrdiff_t slot) {
    b->status[l] = status;
    b->failed[l] = j;
    b->counts[3 * l] = last;
    nan_rows<K>(b, l, slot);
}

// whether the lane model M steps itself (`KinStepModel`: its `step`, `at_row` and counters)
template <class M, class = void>
constexpr bool lazy_of = false;
template <class M>
constexpr bool lazy_of<M, std::void_t<decltype(M::lazy)>> = M::lazy;
template <class M>
constexpr bool is_lazy = lazy_of<M>;

// lane l's w and w' evaluations (a lazy model's, when the lane fails or ends) in counts[3 l + 2]
// and counts[3 l + 1], which the fixed-grid driver does not read (the runner takes them)
template <class M>
ROTODE_INLINE void note_counts(const M& f, BlockRun* b, int l) {
    if constexpr (is_lazy<M>) {
        b->counts[3 * l + 1] = f.nrate;
        b->counts[3 * l + 2] = f.nfev;
        if (b->nsub) b->nsub[l] = f.nsub[l];
        if (b->angle) b->angle[l] = f.angle[l];
    }
}

// The block's lanes' rows at `slot` from the state z (the driver's `store` and `_check_row`):
// a lane whose row is not finite fails (first: the row at t0, never checked) (IN/OUT: alive,
// live).
template <class M, class V>
ROTODE_INLINE void store_rows(M& f, const V* z, std::ptrdiff_t j, std::ptrdiff_t slot,
                              bool first, BlockRun* b, bool* alive, int* live) {
    constexpr int K = M::k;
    V w[3];
    if constexpr (is_lazy<M>) f.at_row(b->t[j]);
    f.row(z, w);
    for (int l = 0; l < b->nb; ++l) {
        if (!alive[l]) continue;
        double* y = b->yo + (l * b->m + slot) * K;
        double* wo = b->wo + (l * b->m + slot) * 3;
        for (int c = 0; c < K; ++c) y[c] = get(z[c], l);
        for (int c = 0; c < 3; ++c) wo[c] = get(w[c], l);
        if (!first && !(finite_lane<K>(z, l) && finite_lane<3>(w, l))) {
            fail_lane<K>(b, l, ENGINE_NONFINITE, j - 1, j, slot);
            note_counts(f, b, l);
            alive[l] = false;
            --*live;
        }
    }
}

// Lane l's state from the block's y0 and its counters (OUT: z, alive; b's status, failed, counts)
template <int K, class V>
ROTODE_INLINE void start_lanes(BlockRun* b, V* z, bool* alive) {
    for (int l = 0; l < width<V>; ++l) {
        const std::ptrdiff_t nb = b->nb;
        const double* y0 = b->y0 + K * (l < nb ? l : nb - 1);
        for (int c = 0; c < K; ++c) set(z[c], l, y0[c]);
        alive[l] = l < nb;
        if (l < nb) {
            b->status[l] = ENGINE_OK;
            b->failed[l] = -1;
            b->counts[3 * l] = b->n;
        }
    }
}

// The whole fixed-grid run of a block of b->nb <= L bodies of one class (the lane model M:
// the model kind, torque or rate kind, frame, gain, ...) with kernel K, as the driver's `_body`
// runs one body: chunks of steps up to the next output slot or the thread's next tick, the
// non-finite check after each chunk, the rows at t[save], NaN from a failure on, the same status
// codes and step indices; without `to_end` (the kinematic stepper), no step after the last row.
template <int L, int K, class M>
ROTODE_INLINE void block_run(M& f, const LaneCall& o, bool to_end, BlockRun* b) {
    using V = Lanes<L>;
    static_assert(M::n == M::k, "a lane model's row is its state");
    V z[M::n], zn[M::n];
    Ab3History<V, M::n> ab3;
    bool alive[L];
    const std::ptrdiff_t nb = b->nb, n = b->n, m = b->m;
    std::ptrdiff_t j = 0, slot = 0;
    int live = int(nb);
    start_lanes<M::k>(b, z, alive);
    if constexpr (is_lazy<M>) f.alive = alive;
    f.begin(b->t[0]);
    if (m > 0 && b->save[0] == 0) {         // the row at t0: y0 itself (rigid: Stepper.y0_row)
        store_rows(f, z, 0, 0, true, b, alive, &live);
        slot = 1;
    }
    while (j < n && live > 0 && (to_end || slot < m)) {
        std::ptrdiff_t jend = slot < m ? b->save[slot] : n;
        if (jend - j > *b->countdown) jend = j + *b->countdown;
        for (std::ptrdiff_t jj = j; jj < jend; ++jj) {
            const double t0 = b->t[jj], h = b->t[jj + 1] - t0;
            if constexpr (is_lazy<M>) {
                f.template step<K>(o, t0, h, z, zn);
                if (f.failures) {            // lanes whose step failed: found at that step
                    f.failures = false;
                    for (int l = 0; l < nb; ++l) {
                        if (!alive[l] || f.status[l] == ENGINE_OK) continue;
                        fail_lane<M::k>(b, l, f.status[l], jj, jj + 1, slot);
                        note_counts(f, b, l);
                        alive[l] = false;
                        --live;
                    }
                }
            } else {
                f.nodes(t0, h);
                if constexpr (K == LANES_RK4) rk4_lanes(f, h, z, zn);
                else if constexpr (K == LANES_AB3) ab3_lanes(f, h, ab3, z, zn);
                else if constexpr (K == LANES_CG) cg_lanes(f, *o.tab, h, z, zn);
                else rk3_lanes(f, h, z, zn);
            }
            for (int c = 0; c < M::n; ++c) z[c] = zn[c];
            if (o.normalize) normalize_lanes(z);
            if constexpr (!is_lazy<M>) f.advanced();
        }
        *b->countdown -= int(jend - j);
        for (int l = 0; l < nb; ++l) {
            if (alive[l] && !finite_lane<M::n>(z, l)) {   // somewhere in steps j .. jend - 1
                fail_lane<M::k>(b, l, ENGINE_NONFINITE, j, jend, slot);
                note_counts(f, b, l);
                alive[l] = false;
                --live;
            }
        }
        j = jend;
        if (live > 0 && *b->countdown <= 0 && b->tick(b->tick_ctx)) {
            for (int l = 0; l < nb; ++l) {
                if (!alive[l]) continue;
                fail_lane<M::k>(b, l, ENGINE_INTERRUPTED, j, j, slot);
                note_counts(f, b, l);
            }
            return;
        }
        if (slot < m && b->save[slot] == j) {
            store_rows(f, z, j, slot, false, b, alive, &live);
            ++slot;
        }
    }
    for (int l = 0; l < nb; ++l)
        if (alive[l]) note_counts(f, b, l);
}

// the class of a body: its torque kind, inertia shape, gain and gyroscopic switch
struct RigidClass {
    int torque;
    bool diag, gain, gyroscopic;
    bool operator==(const RigidClass& o) const {
        return torque == o.torque && diag == o.diag && gain == o.gain
               && gyroscopic == o.gyroscopic;
    }
};

// (the Lie-group kernels do not read the norm gain: one class with and without it)
inline RigidClass lane_class(const RigidParams* p, int kernel = LANES_RK3) {
    return {p->torque, rigid_diagonal(p), p->gain != 0.0 && kernel != LANES_CG,
            p->gyroscopic != 0};
}

// the class of a kinematic body: its rate kind, frame and gain
struct KinClass {
    int omega;
    bool world, gain;
    bool operator==(const KinClass& o) const {
        return omega == o.omega && world == o.world && gain == o.gain;
    }
};

inline KinClass lane_class(const KinParams* p, int) {
    return {p->omega, p->world != 0, p->gain != 0.0};
}

// The run of a block of bodies of one class in the lane model C::model<V> of L lanes: its
// parameters gathered, then `block_run`.  C: a class tag (`RigidTag`, `KinTag`).
template <int L, int K, class C>
ROTODE_INLINE void block_class(const typename C::Params* p, const LaneCall& o, BlockRun* b) {
    typename C::template model<Lanes<L>> f;
    f.gather(p, o.shared, b->nb);
    block_run<L, K>(f, o, C::to_end, b);
}

template <int T, bool Diag, bool Gain>
struct RigidTag {
    typedef RigidParams Params;
    static constexpr bool to_end = true;
    template <class V> using model = RigidLaneModel<T, Diag, Gain, V>;
};

// (Step: the kernels of `KinStepModel`, else rk3/rk4's `KinLaneModel`)
template <int W, bool World, bool Gain, bool Step = false>
struct KinTag {
    typedef KinParams Params;
    static constexpr bool to_end = false;       // rotode/kinematic.pyx: no step after the last row
    template <class V>
    using model = std::conditional_t<Step, KinStepModel<W, World, Gain, V>,
                                     KinLaneModel<W, World, Gain, V>>;
};

// One function per instruction set and instantiation of `block_class`, compiled for that
// target (every function it calls is inlined into it); `noinline`: apart from the baseline
// code that chooses it.
#define ROTODE_LANE_ENTRY(name, attrs, L)                                                    \
    template <int K, class C>                                                                \
    attrs __attribute__((noinline)) void name(const typename C::Params* p, const LaneCall& o, \
                                              BlockRun* b) {                                 \
        block_class<L, K, C>(p, o, b);                                                       \
    }

ROTODE_LANE_ENTRY(run_scalar, , 1)
ROTODE_LANE_ENTRY(run_sse2, , 2)
#if defined(__x86_64__) && defined(__GNUC__)
#define ROTODE_LANES_X86 1
ROTODE_LANE_ENTRY(run_avx2, __attribute__((target("avx2"))), 4)
ROTODE_LANE_ENTRY(run_avx512, __attribute__((target("avx512f"))), 8)
#endif
#undef ROTODE_LANE_ENTRY

// the run-time choices (instruction set, kernel, class) to one of those functions
template <int K, class C>
inline void block_isa(int isa, const typename C::Params* p, const LaneCall& o,
                      BlockRun* b) {
    switch (isa) {
        case ISA_SSE2: return run_sse2<K, C>(p, o, b);
#ifdef ROTODE_LANES_X86
        case ISA_AVX2: return run_avx2<K, C>(p, o, b);
        case ISA_AVX512: return run_avx512<K, C>(p, o, b);
#endif
        default: return run_scalar<K, C>(p, o, b);
    }
}

template <int K, int T>
inline void block_diag(int isa, const RigidClass& c, const RigidParams* p,
                       const LaneCall& o, BlockRun* b) {
    with_bool(c.diag, [&](auto diag) {
        constexpr bool Diag = decltype(diag)::value;
        if constexpr (K == LANES_CG) block_isa<K, RigidTag<T, Diag, false>>(isa, p, o, b);
        else with_bool(c.gain, [&](auto gain) {
            block_isa<K, RigidTag<T, Diag, decltype(gain)::value>>(isa, p, o, b);
        });
    });
}

template <int K>
inline void block_torque(int isa, const RigidClass& c, const RigidParams* p,
                         const LaneCall& o, BlockRun* b) {
    switch (c.torque) {
        case TORQUE_NONE: return block_diag<K, TORQUE_NONE>(isa, c, p, o, b);
        case TORQUE_GRAVITY:
            return block_diag<K, TORQUE_GRAVITY>(isa, c, p, o, b);
        case TORQUE_GRAVITY_AXIS:
            return block_diag<K, TORQUE_GRAVITY_AXIS>(isa, c, p, o, b);
        case TORQUE_BODY: return block_diag<K, TORQUE_BODY>(isa, c, p, o, b);
        case TORQUE_GG: return block_diag<K, TORQUE_GG>(isa, c, p, o, b);
        // (TORQUE_CALL never comes here: rotode/dynamic.pyx `_engine_params(..., call=False)`)
        default: return block_diag<K, TORQUE_WORLD>(isa, c, p, o, b);
    }
}

inline void block_any(int isa, int kernel, const RigidClass& c, const RigidParams* p,
                      const LaneCall& o, BlockRun* b) {
    if (kernel == LANES_RK4) block_torque<LANES_RK4>(isa, c, p, o, b);
    else if (kernel == LANES_AB3) block_torque<LANES_AB3>(isa, c, p, o, b);
    else if (kernel == LANES_CG) block_torque<LANES_CG>(isa, c, p, o, b);
    else block_torque<LANES_RK3>(isa, c, p, o, b);
}

// (the Lie-group kernels take no norm gain: their runs' is 0)
template <int K, int W>
inline void kin_frame(int isa, const KinClass& c, const KinParams* p,
                      const LaneCall& o, BlockRun* b) {
    constexpr bool step = K != LANES_RK3 && K != LANES_RK4;
    with_bool(c.world, [&](auto world) {
        constexpr bool World = decltype(world)::value;
        if constexpr (K != LANES_RK3 && K != LANES_RK4 && K != LANES_AB3)
            block_isa<K, KinTag<W, World, false, true>>(isa, p, o, b);
        else with_bool(c.gain, [&](auto gain) {
            block_isa<K, KinTag<W, World, decltype(gain)::value, step>>(isa, p, o, b);
        });
    });
}

template <int K>
inline void kin_omega_kind(int isa, const KinClass& c, const KinParams* p,
                           const LaneCall& o, BlockRun* b) {
    if (c.omega == OMEGA_CONSTANT) kin_frame<K, OMEGA_CONSTANT>(isa, c, p, o, b);
    else kin_frame<K, OMEGA_SINUSOID>(isa, c, p, o, b);
}

inline void block_any(int isa, int kernel, const KinClass& c, const KinParams* p,
                      const LaneCall& o, BlockRun* b) {
    switch (kernel) {
        case LANES_RK4: return kin_omega_kind<LANES_RK4>(isa, c, p, o, b);
        case LANES_AB3: return kin_omega_kind<LANES_AB3>(isa, c, p, o, b);
        case LANES_CG: return kin_omega_kind<LANES_CG>(isa, c, p, o, b);
        case LANES_EXP2: return kin_omega_kind<LANES_EXP2>(isa, c, p, o, b);
        case LANES_MAGNUS: return kin_omega_kind<LANES_MAGNUS>(isa, c, p, o, b);
        case LANES_MAGNUS_CA: return kin_omega_kind<LANES_MAGNUS_CA>(isa, c, p, o, b);
        default: return kin_omega_kind<LANES_RK3>(isa, c, p, o, b);
    }
}

// the columns of a row of y0 and of the output of each model kind
inline int lane_cols(const RigidParams*) { return 7; }
inline int lane_cols(const KinParams*) { return 4; }

constexpr int LANES[ISA_COUNT] = {1, 2, 4, 8};

}  // namespace lanes

// Whether this CPU runs the instruction set `isa` (a LaneIsa).
inline bool lanes_supported(int isa) {
    if (isa == ISA_SCALAR || isa == ISA_SSE2) return true;
#ifdef ROTODE_LANES_X86
    __builtin_cpu_init();
    if (isa == ISA_AVX2) return __builtin_cpu_supports("avx2");
    if (isa == ISA_AVX512) return __builtin_cpu_supports("avx512f");
#endif
    return false;
}

// The bodies per block of the instruction set `isa` (0 for an unknown one).
inline int lanes_width(int isa) {
    return isa >= 0 && isa < ISA_COUNT ? lanes::LANES[isa] : 0;
}

// The fixed-grid run of the block `b` (b->nb bodies, parameters p[0 .. nb - 1], or p[0] for
// every body when `shared`: RigidParams or KinParams) with `kernel` (a LaneKernel; LANES_CG with
// the tableau `tab`, rigid bodies only), on the instruction set `isa` (which the caller checked
// with `lanes_supported`), q / |q| after every step with `normalize`.  A block whose bodies
// share one class and fill more than half of its lanes runs in the lanes of `isa`; any other
// block runs each body on its own (the scalar instance: the same bits).  Returns the lanes the
// block ran in (1: one body at a time).
template <class P>
inline int lanes_block(int isa, int kernel, const P* p, bool shared, bool normalize,
                       const LaneTableau* tab, const KinLaneMethod* km, BlockRun* b) {
    using namespace lanes;
    const auto c = lane_class(p, kernel);
    bool same = true;
    for (std::ptrdiff_t l = 1; l < b->nb && !shared; ++l)
        same = same && lane_class(p + l, kernel) == c;
    const int L = lanes_width(isa), k = lane_cols(p);
    if (same && L > 1 && 2 * b->nb > L) {
        block_any(isa, kernel, c, p, LaneCall{shared, normalize, tab, km}, b);
        return L;
    }
    for (std::ptrdiff_t l = 0; l < b->nb; ++l) {
        BlockRun one = *b;
        one.nb = 1;
        one.y0 = b->y0 + k * l;
        one.yo = b->yo + k * b->m * l;
        one.wo = b->wo + 3 * b->m * l;
        one.status = b->status + l;
        one.failed = b->failed + l;
        one.counts = b->counts + 3 * l;
        one.nsub = b->nsub ? b->nsub + l : nullptr;
        one.angle = b->angle ? b->angle + l : nullptr;
        const P* pl = p + (shared ? 0 : l);
        const LaneCall o{true, normalize, tab, km};
        block_any(ISA_SCALAR, kernel, lane_class(pl, kernel), pl, o, &one);
    }
    return 1;
}

}  // namespace rotode

#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif
