// The adaptive lane kernels: the error-controlled pairs (dop853, dopri5, bs3) on queues of rigid
// bodies, on the state [q, w] or as the Runge-Kutta-Munthe-Kaas methods rkmk8, rkmk5, rkmk3 (the
// pair on [v, w] of each step, q = qb exp(v/2)), and on queues of quaternion kinematics runs
// (the pair on q, or as RKMK on v), one body per SIMD lane, each lane with its own t, h,
// accepted or rejected trial step, counters and status (docs/architecture.md, "The adaptive
// lanes").
//
// `erk_lanes<P, L, C>` does for up to L bodies at a time what `erk_body<P>` of
// rotode/_engine.hpp does for one (its control flow replicated lane by lane, in the same order),
// and when a lane's body ends (at its t_end, or failing) the lane takes the queue's next body, so
// that a slow body does not hold the others.  What runs in lane vectors: the stage sums, the
// model's f (`rigid_rhs_at` and `kin_omega`/`kin_rhs` of rotode/_models.hpp, the templates the
// single body's `RigidBodyModel` and `KinematicsModel` call with double; for rkmk
// `RkmkLanes::rhs_at` and `KinRkmkLanes::rhs_at`, the operations of `RigidRkmkModel` and
// `KinRkmkModel`; a Sinusoid's sines lane by lane, libm's), the error estimate's terms (the
// scale, with rkmk's reference magnitudes, the weighted sums, their squares' sums), the dense
// output's coefficients and rkmk's re-anchoring after an accepted step (qb <- qb exp(v/2)
// retracted; for the kinematics also the FSAL stage's T(v) K0, its coefficients' polynomials).
// What runs lane by lane, with the scalar functions `erk_body` and its model call: a body's
// start (its first row, f(t0), `initial_step`), the norm's last sqrt and ratio, rkmk's step
// angle's sqrt and its cap, the controller's pow and clamps, the decision, the rows (the
// interpolant of `dense_eval` on the lane's coefficients, rkmk's q = qb exp(v/2) of each row),
// and rkmk's sin and cos beyond the polynomial ranges of exp(v/2), dexp^-1 and T(v), in the
// lanes that reach them.  With
// -ffp-contract=off every lane does erk_body's operations on its body in erk_body's order: each
// body's rows, t, status and counters are its single run's bits, whatever the width and the
// queue.
//
// Formulas: Hairer, Norsett & Wanner, "Solving Ordinary Differential Equations I" (2nd ed.,
// 1993), sec. II.4 (error norm, initial step, the controller), II.5 (DOPRI5 and its dense
// output), II.10 (DOP853, its 8(5,3) estimate and its extra-stage interpolant); Munthe-Kaas,
// "High order Runge-Kutta methods on manifolds", Appl. Numer. Math. 29 (1999) 115-127 (RKMK).
#pragma once

#include <cmath>
#include <cstddef>
#include <type_traits>
#include <utility>

#include "_lanes.hpp"

#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpsabi"      // vectors passed only to always-inline functions
#endif

namespace rotode {
namespace lanes {

// the error's scale atol + max(|y|, |ynew|) rtol, or with a reference magnitude (Ref: a model's
// `ref()`, engine::tol_scale) atol + max(|y|, |ynew|, ref) rtol, lane by lane with std::fabs's
// and std::fmax's bits (the sign bit cleared; a NaN operand of the max gives the other; ref is
// not NaN) (OUT: out)
template <bool Ref, class V>
ROTODE_INLINE void error_scale(const V& atol, const V& y, const V& ynew, const V& rtol,
                               double ref, V& out) {
    if constexpr (width<V> == 1) {
        const double m = std::fmax(std::fabs(y), std::fabs(ynew));
        out = atol + (Ref ? std::fmax(m, ref) : m) * rtol;
    } else {
        typedef long long VI __attribute__((vector_size(sizeof(V))));
        const V a = (V)((VI)y & 0x7fffffffffffffffLL), b = (V)((VI)ynew & 0x7fffffffffffffffLL);
        V m = ((a > b) | (b != b)) ? a : b;
        if constexpr (Ref) {
            V r;
            models::splat(r, ref);
            m = (m > r) ? m : r;                    // (m NaN: ref, as std::fmax)
        }
        out = atol + m * rtol;
    }
}

// stage R's argument ys = y + h sum_{j<R} a_Rj K_j (h: one per lane)
template <class P, class V, int N, int R>
ROTODE_INLINE void stage_state_v(const V (*K)[N], const V& h, const V* y, V* ys) {
    for (int k = 0; k < N; ++k)
        ys[k] = y[k] + h * engine::wsum<engine::RowA<P, R>>(K, k, std::make_integer_sequence<int, R>{});
}

// stage J's time (t, h: one per lane): erk_body's, t + h where c = 1 (the trial's end) when
// `AtEnd` (the step's stages), else t + c h (the interpolant's extra stages, engine::dense_extra)
template <class P, bool AtEnd, int J, class V>
ROTODE_INLINE V stage_time_v(const V& t, const V& h) {
    if constexpr (AtEnd && P::c[J] == 1.0) return t + h;
    else return t + P::c[J] * h;
}

// the stages J... (arguments, then f at their times), in order
template <class P, bool AtEnd, class M, class V, int N, int... J>
ROTODE_INLINE void stages_v(const M& f, const V& t, const V& h, const V* y, V (*K)[N],
                            std::integer_sequence<int, J...>) {
    V ys[N];
    ((stage_state_v<P, V, N, J>(K, h, y, ys), f.rhs_at(stage_time_v<P, AtEnd, J>(t, h), ys, K[J])),
     ...);
}

template <int First, int... J>
constexpr auto offset_seq(std::integer_sequence<int, J...>) {
    return std::integer_sequence<int, (First + J)...>{};
}

// the dense output's coefficients of every lane's step (engine::dense_prepare's operations; h:
// one per lane) (OUT: F, and DOP853's extra stages in K)
template <class P, class M, class V, int N, int... R>
ROTODE_INLINE void dense_rows_v(const V (*K)[N], const V& h, V* F,
                                std::integer_sequence<int, R...>) {
    constexpr int S = P::kind == 0 ? P::s + 1 : P::s_dense;
    constexpr auto cols = std::make_integer_sequence<int, S>{};
    constexpr int first = P::kind == 0 ? 0 : 3;
    for (int k = 0; k < N; ++k) {
        if constexpr (P::kind == 0)
            ((F[(first + R) * N + k] = h * engine::wsum<engine::RowP<P, R>>(K, k, cols)), ...);
        else
            ((F[(first + R) * N + k] = h * engine::wsum<engine::RowD<P, R>>(K, k, cols)), ...);
    }
}

template <class P, class M, class V, int N>
ROTODE_INLINE void dense_prepare_v(const M& f, const V& t, const V& h, const V* y,
                                   const V* ynew, V (*K)[N], V* F) {
    if constexpr (P::kind == 0) {
        dense_rows_v<P, M>(K, h, F, std::make_integer_sequence<int, P::degree>{});
    } else {
        stages_v<P, false>(f, t, h, y, K, offset_seq<P::s + 1>(
                               std::make_integer_sequence<int, P::s_dense - P::s - 1>{}));
        for (int k = 0; k < N; ++k) {
            const V dy = ynew[k] - y[k];
            F[k] = dy;
            F[N + k] = h * K[0][k] - dy;
            F[2 * N + k] = 2.0 * dy - h * (K[P::s][k] + K[0][k]);
        }
        dense_rows_v<P, M>(K, h, F, std::make_integer_sequence<int, 4>{});
    }
}

// ---- Runge-Kutta-Munthe-Kaas in lanes -----------------------------------------------------
//
// Munthe-Kaas, "High order Runge-Kutta methods on manifolds", Appl. Numer. Math. 29 (1999)
// 115-127: a step from the base qb integrates the algebra equation v' = T(-v)^-1 w of
// q = qb exp(v/2), v(t_n) = 0, with the pair as a vector ODE, and re-anchors after each accepted
// step (rotode/_rkmk.hpp; `RigidRkmkModel` of rotode/_models.hpp, whose operations these are, in
// its order).  In vectors: every product and sum, and the polynomial ranges (the Taylor
// polynomials of exp(v/2) for |v/2|^2 <= 1, the series of dexp^-1's coefficient for |v|^2 <=
// 6.25); lane by lane, only in a lane that reaches them, the ranges beyond (std::sqrt, std::cos,
// std::sin, the functions the scalar model calls): each lane the scalar model's bits.  (exp(v/2)
// in lanes: `times_exp_v` of rotode/_lanes.hpp, which the Crouch-Grossman lanes share.)

// C(x) = (1 - (a/2) cot(a/2))/a^2, x = a^2, in every lane: rotode/_rodrigues.hpp
// `so3_dexp_inv_coefficient`, its series (`so3_dexp_inv_series`, the same template) for
// x <= 6.25, its closed form lane by lane above
template <class V>
ROTODE_INLINE V dexp_inv_coefficient_v(const V& x) {
    V c = so3_dexp_inv_series(x);
    const Mask<V> small = x <= 6.25;
    for (int l = 0; l < width<V>; ++l) {
        if (mask_at<V>(small, l)) continue;
        const double xl = get(x, l), h = 0.5 * std::sqrt(xl);
        set(c, l, (1.0 - h * std::cos(h) / std::sin(h)) / xl);
    }
    return c;
}

// v' = T(-v)^-1 w (body frame) or T(v)^-1 w (World) in every lane: rotode/_rkmk.hpp
// `rkmk_rate`, i.e. `so3_dexp_inv_apply` at -v or v (OUT: dv[3]; may not alias v or w)
template <bool World = false, class V>
ROTODE_INLINE void rkmk_rate_v(const V* v, const V* w, V* out) {
    V m[3];
    for (int i = 0; i < 3; ++i) m[i] = World ? v[i] : -v[i];
    const V x = m[0] * m[0] + m[1] * m[1] + m[2] * m[2];
    const V c = dexp_inv_coefficient_v(x);
    const V c0 = m[1] * w[2] - m[2] * w[1];
    const V c1 = m[2] * w[0] - m[0] * w[2];
    const V c2 = m[0] * w[1] - m[1] * w[0];
    out[0] = w[0] - 0.5 * c0 + c * (m[1] * c2 - m[2] * c1);
    out[1] = w[1] - 0.5 * c1 + c * (m[2] * c0 - m[0] * c2);
    out[2] = w[2] - 0.5 * c2 + c * (m[0] * c1 - m[1] * c0);
}

// S1, S2, S3 of T(v) from x = |v|^2 in every lane: rotode/_rodrigues.hpp `so3_coefficients`,
// its Taylor polynomials in vectors for x <= 1, the scalar function lane by lane above (the
// other ranges, NaN) (OUT: s1, s2, s3)
template <class V>
ROTODE_INLINE void so3_coefficients_v(const V& x, V& s1, V& s2, V& s3) {
    s1 = taylor_sinc(x);
    s2 = taylor_s2(x);
    s3 = taylor_s3(x);
    const Mask<V> small = x <= 1.0;
    for (int l = 0; l < width<V>; ++l) {
        if (mask_at<V>(small, l)) continue;
        double a, b, c;
        so3_coefficients(get(x, l), &a, &b, &c);
        set(s1, l, a);
        set(s2, l, b);
        set(s3, l, c);
    }
}

// w = T(-v) dv (body) or T(v) dv (World) in every lane: rotode/_rkmk.hpp
// `rkmk_angular_velocity`'s operations, `rkmk_t_apply` on the coefficients in lanes (OUT: w[3];
// may alias dv)
template <bool World, class V>
ROTODE_INLINE void rkmk_angular_velocity_v(const V* v, const V* dv, V* w) {
    const V x = v[0] * v[0] + v[1] * v[1] + v[2] * v[2];
    V s1, s2, s3;
    so3_coefficients_v(x, s1, s2, s3);
    if constexpr (!World) s2 = -s2;
    rkmk_t_apply(v, dv, s1, s2, s3, w);
}

// w(t) of kind W for the parameters p at the time t (V = double: kin_omega; else one per lane,
// a KinLanes) (OUT: w[3]): kin_omega's operations, a Sinusoid's sines lane by lane by libm, a
// lane whose argument equals the previous lane's taking its sine (the same bits: under a shared
// Sinusoid the bodies of rkmk and of the adaptive Magnus methods take the same steps, their
// steps not depending on q, so that the lanes' sines are one body's)
template <int W, class P, class V>
ROTODE_INLINE void kin_omega_lanes(const P& p, const V& t, V* w) {
    if constexpr (W == OMEGA_SINUSOID && width<V> > 1) {
        for (int i = 0; i < 3; ++i) {
            const V x = p.rate * t + p.phase[i];
            V sn = x;
            for (int l = 0; l < width<V>; ++l)
                set(sn, l, l > 0 && get(x, l) == get(x, l - 1) ? get(sn, l - 1)
                                                               : std::sin(get(x, l)));
            w[i] = p.amp[i] * sn;
        }
    } else {
        kin_omega<W>(p, t, w);
    }
}

// The lane models of `erk_lanes`: the bodies' parameters (`Params`; `gather` every lane's,
// `take(l, q)` lane l's), f in lanes at each lane's time (`rhs_at`; `timed`: whether f reads
// t), the scalar model `One` of a body's start and rows (`scalar`, `at`: lane l's), and after an
// accepted step (`accept`) what erk_body does with One's hooks (`accept`, `ref`, `max_angle`:
// rotode/_engine.hpp).

// The pair on the state [q, w] (RigidBodyModel): no hook.
template <int T, bool Diag, class V>
struct StateLanes : RigidLaneModel<T, Diag, false, V> {
    typedef RigidBodyModel<T, Diag, false> One;
    static constexpr int N = 7;
    static constexpr bool lie = false;          // no ref, no max_angle
    static constexpr bool timed = T == TORQUE_GG;
    ROTODE_INLINE void take(int l, const RigidParams& q) { set_params(this->p, l, q); }
    static One scalar(const RigidParams& q, bool) { return One{q}; }
    ROTODE_INLINE void started(int, const One&) {}
    ROTODE_INLINE One at(int, const RigidParams& q) const { return One{q}; }
    ROTODE_INLINE void accept(const Mask<V>&, V*, V*) {}
    // One's operator() at the lanes' times t
    ROTODE_INLINE void rhs_at(const V& t, const V* y, V* dy) const {
        rigid_rhs_at<T, Diag, false>(this->p, t, y, dy);
    }
};

// The bases of the rkmk lane models: one orientation qb per lane, the identity until a body
// begins there (`started`: the scalar model One that began it), and lane l's scalar model at
// its base (`at`, for its rows).  One: an aggregate {parameters P, resume, qb[4]}.
template <class One, class P, class V>
struct LaneBases {
    V qb[4];
    ROTODE_INLINE void identity() {
        for (int i = 0; i < 4; ++i) models::splat(qb[i], i == 0 ? 1.0 : 0.0);
    }
    ROTODE_INLINE void started(int l, const One& one) {
        for (int i = 0; i < 4; ++i) set(qb[i], l, one.qb[i]);
    }
    ROTODE_INLINE One at(int l, const P& q) const {
        One m{q, false, {}};
        for (int i = 0; i < 4; ++i) m.qb[i] = get(qb[i], l);
        return m;
    }
};

// The pair on [v, w] of each step (RigidRkmkModel): one base qb per lane, the error scale's
// reference magnitudes RKMK_REF, the largest angle of a step `rkmk_max_step_angle`.
template <int T, bool Diag, class V>
struct RkmkLanes : LaneBases<RigidRkmkModel<T, Diag>, RigidParams, V> {
    typedef RigidParams Params;
    typedef RigidRkmkModel<T, Diag> One;
    static constexpr int N = 6;
    static constexpr bool lie = true;
    static constexpr bool timed = T == TORQUE_GG;
    using LaneBases<One, Params, V>::qb;
    RigidLanes<V> p;
    ROTODE_INLINE void gather(const RigidParams* ps, bool shared, std::ptrdiff_t nb) {
        gather_params(ps, shared, nb, &p);
        this->identity();
    }
    ROTODE_INLINE void take(int l, const RigidParams& q) { set_params(p, l, q); }
    // One's operator() at the lanes' times t: v' = T(-v)^-1 w, w' from Euler's equations at
    // q = qb exp(v/2)
    ROTODE_INLINE void rhs_at(const V& t, const V* z, V* dz) const {
        V q[4], tau[3];
        if constexpr (T != TORQUE_NONE) times_exp_v(qb, z, 1.0, q);   // (no torque: q unused)
        rkmk_rate_v(z, z + 3, dz);
        rigid_torque_at<T>(p, t, q, tau);
        rigid_euler<Diag>(p, z + 3, tau, dz + 3);
    }
    static One scalar(const RigidParams& q, bool resume) { return One{q, resume, {}}; }
    // One's accept in the lanes of `acc`: qb <- qb exp(v/2) retracted, v <- 0, the FSAL
    // stage's v' <- w (IN/OUT: z, K0)
    ROTODE_INLINE void accept(const Mask<V>& acc, V* z, V* K0) {
        V q[4], zero;
        models::splat(zero, 0.0);
        times_exp_v(qb, z, 1.0, q);
        rkmk_retract(q);
        for (int i = 0; i < 4; ++i) qb[i] = acc ? q[i] : qb[i];
        for (int i = 0; i < 3; ++i) {
            z[i] = acc ? zero : z[i];
            K0[i] = acc ? z[3 + i] : K0[i];
        }
    }
};

// Quaternion kinematics, the pair on q (KinematicsModel, without the norm gain): q' =
// 1/2 q (0, w(t)) or 1/2 (0, w(t)) q (World), w(t) of kind W at each lane's stage times; no hook.
template <int W, bool World, class V>
struct KinStateLanes {
    typedef KinParams Params;
    typedef KinematicsModel<W, World, false> One;
    static constexpr int N = 4;
    static constexpr bool lie = false;
    static constexpr bool timed = W != OMEGA_CONSTANT;
    KinLanes<V> p;
    ROTODE_INLINE void gather(const KinParams* ps, bool shared, std::ptrdiff_t nb) {
        gather_params(ps, shared, nb, &p);
    }
    ROTODE_INLINE void take(int l, const KinParams& q) { set_params(p, l, q); }
    static One scalar(const KinParams& q, bool) { return One{q}; }
    ROTODE_INLINE void started(int, const One&) {}
    ROTODE_INLINE One at(int, const KinParams& q) const { return One{q}; }
    ROTODE_INLINE void accept(const Mask<V>&, V*, V*) {}
    ROTODE_INLINE void rhs_at(const V& t, const V* q, V* dq) const {
        V w[3];
        kin_omega_lanes<W>(p, t, w);
        kin_rhs<World, false>(p, q, w, dq);
    }
};

// Quaternion kinematics as Runge-Kutta-Munthe-Kaas (KinRkmkModel): the pair on v of each step,
// q = qb exp(v/2) or exp(v/2) qb (World), one base qb per lane, the reference magnitudes
// RKMK_REF and the largest angle of a step.
template <int W, bool World, class V>
struct KinRkmkLanes : LaneBases<KinRkmkModel<W, World>, KinParams, V> {
    typedef KinParams Params;
    typedef KinRkmkModel<W, World> One;
    static constexpr int N = 3;
    static constexpr bool lie = true;
    static constexpr bool timed = W != OMEGA_CONSTANT;
    using LaneBases<One, Params, V>::qb;
    KinLanes<V> p;
    ROTODE_INLINE void gather(const KinParams* ps, bool shared, std::ptrdiff_t nb) {
        gather_params(ps, shared, nb, &p);
        this->identity();
    }
    ROTODE_INLINE void take(int l, const KinParams& q) { set_params(p, l, q); }
    // One's operator(): v' = T(-v)^-1 w(t) (body) or T(v)^-1 w(t) (world)
    ROTODE_INLINE void rhs_at(const V& t, const V* v, V* dv) const {
        V w[3];
        kin_omega_lanes<W>(p, t, w);
        rkmk_rate_v<World>(v, w, dv);
    }
    static One scalar(const KinParams& q, bool resume) { return One{q, resume, {}}; }
    // One's accept in the lanes of `acc`: the FSAL stage T^-1 w becomes w
    // (`rkmk_angular_velocity`), qb <- q = qb exp(v/2) or exp(v/2) qb retracted, v <- 0
    // (IN/OUT: v, K0)
    ROTODE_INLINE void accept(const Mask<V>& acc, V* v, V* K0) {
        V w[3], e[4], q[4], zero;
        models::splat(zero, 0.0);
        rkmk_angular_velocity_v<World>(v, K0, w);
        exp_half_v(v, 1.0, e);
        if constexpr (World) rkmk_quat_mul(e, qb, q);
        else rkmk_quat_mul(qb, e, q);
        rkmk_retract(q);
        for (int i = 0; i < 4; ++i) qb[i] = acc ? q[i] : qb[i];
        for (int i = 0; i < 3; ++i) {
            K0[i] = acc ? w[i] : K0[i];
            v[i] = acc ? zero : v[i];
        }
    }
};

// One lane's body: its run and erk_body's loop variables.
struct LaneBody {
    EngineRun* r;            // NULL: the lane is idle
    double t, tf, direction, h_abs, min_step, t_new, h;
    std::ptrdiff_t slot;
    long long accepted, rejected, nfev, stores;
    bool retried, t0_requested, fresh, prepare;
    // the accepted step's hook (`EngineRun.on_step`, `lane_hook`): its status, where the step's
    // rows end (a terminal event's time, else t_new), whether it prepared the interpolant
    int hooked;
    double t_stop;
    bool hook_dense;
};

// The lanes' vectors: the state (N values), the trial state, the stages, the interpolant, the
// error control's tolerances, the trial step sizes.
template <class V, class P, int N>
struct LaneState {
    V z[N], znew[N];
    V K[P::s_dense][N];
    V F[7 * N];
    V atol[N], rtol, h;
    V t, t_new;              // each lane's step start and trial end (a time-dependent torque)
};

// the lane l of the vector array x (n values) (OUT: out)
template <class V>
ROTODE_INLINE void lane_of(const V* x, int n, int l, double* out) {
    for (int c = 0; c < n; ++c) out[c] = get(x[c], l);
}

// the end of lane l's body with status st (`engine::finish_run`, as erk_body ends: NaN rows
// from its slot, the counters, where it ended); the lane is idle after it
template <int K>
inline void end_body(LaneBody& b, int st) {
    engine::finish_run(*b.r, b, std::integral_constant<int, K>{}, st);
    b.r = nullptr;
}

// The first lines of every body's run in a lane (erk_body's, the adaptive Magnus loop's): its
// LaneBody from the run, the state from y0 by the scalar model `one` (OUT: z) and the row at
// t0 when the run stores it (unfinite: ENGINE_NONFINITE); returns the status.
template <class One>
inline int begin_body(const One& one, EngineRun* run, LaneBody& b, double* z) {
    constexpr int KW = One::k;
    EngineRun& r = *run;
    b = LaneBody{run, r.t[0], r.t[r.n], 0.0, 0.0, 0.0, 0.0, 0.0, 0, 0, 0, 0, 0,
                 false, false, true, false};
    b.direction = b.tf > b.t ? 1.0 : -1.0;
    b.t0_requested = r.t_eval && r.m > 0 && r.save[0] == 0;
    one.begin(r.y0, z);
    if (r.m > 0 && r.save[0] == 0) {
        one.first_row(b.t, r.y0, z, r.yo, r.wo);
        ++b.stores;
        if (!engine::finite(r.yo, std::integral_constant<int, KW>{})
            || !engine::finite(r.wo, std::integral_constant<int, 3>{}))
            return ENGINE_NONFINITE;
        b.slot = 1;
    }
    return ENGINE_OK;
}

// A body of the queue that a Ctrl-C ended before it began: ENGINE_INTERRUPTED, its rows NaN.
template <int K>
inline void interrupted_body(EngineRun* run, LaneBody& b) {
    b = LaneBody{run, run->t[0], 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0, 0, 0, 0, 0,
                 false, false, true, false};
    end_body<K>(b, ENGINE_INTERRUPTED);
}

// The start of a body's run in lane l (erk_body's lines before its loop, on the scalar model
// `one`, then its state and base in the lanes of f); false: it ended there (its status
// written, the lane idle).
template <class P, class LM, class V, int N>
inline bool start_body(LM& f, const typename LM::One& one, EngineRun* run, int l, LaneBody& b,
                       LaneState<V, P, N>& s) {
    constexpr int KW = LM::One::k;
    EngineRun& r = *run;
    double z[N], K0[N];
    int st = begin_body(one, run, b, z);
    if (st == ENGINE_OK) {
        one(b.t, z, K0);
        b.nfev += 1;
        if (r.first_step > 0.0) {
            b.h_abs = r.first_step;
        } else {
            b.nfev += 1;
            st = engine::initial_step<P>(one, b.t, z, K0, b.direction, std::fabs(b.tf - b.t), r,
                                         &b.h_abs);
        }
    }
    if (st != ENGINE_OK) {
        end_body<KW>(b, st);
        return false;
    }
    f.started(l, one);
    for (int c = 0; c < N; ++c) {
        set(s.z[c], l, z[c]);
        set(s.K[0][c], l, K0[c]);
        set(s.atol[c], l, r.atol[c]);
    }
    set(s.rtol, l, r.rtol);
    return true;
}

// Lane l's checks before a trial step (erk_body's loop head for a new step, then its trial's
// head) (OUT: the trial's t_new, h in the lane); false: its body ended (the lane idle).
template <int K>
inline bool before_trial(LaneBody& b, bool* stop) {
    EngineRun& r = *b.r;
    if (b.fresh) {
        if (!(b.direction * (b.tf - b.t) > 0.0)) {
            end_body<K>(b, ENGINE_OK);
            return false;
        }
        if (*stop || (--*r.countdown <= 0 && r.tick(r.tick_ctx))) {
            *stop = true;
            end_body<K>(b, ENGINE_INTERRUPTED);
            return false;
        }
        if (b.accepted >= r.max_steps) {
            end_body<K>(b, ENGINE_MAX_STEPS);
            return false;
        }
        b.min_step = engine::clip_step(b.t, b.direction, r.max_step, b.h_abs);
        b.retried = false;
        b.fresh = false;
    }
    if (b.h_abs < b.min_step) {
        end_body<K>(b, ENGINE_STEP_TOO_SMALL);
        return false;
    }
    engine::trial_end(b.t, b.tf, b.direction, b.h_abs, b.t_new, b.h);
    return true;
}

// erk_body's decision on lane l's trial of error `err` (Lie: its model's `max_angle()`, the
// trial's rotation `angle` rejected above it and the next step's growth capped by it, as the
// driver's `Stepper.max_angle`): the next h; false: rejected
template <class P, bool Lie>
inline bool decide(LaneBody& b, double err, double angle) {
    constexpr double exponent = -1.0 / (P::error_order + 1);
    return engine::decide_step(err, exponent, Lie ? angle : 0.0, Lie ? rkmk_max_step_angle() : 0.0,
                               b.h_abs, b.retried, b.rejected);
}

// The error norms of every lane's trial (engine::error_norm's terms in vectors, with the
// reference magnitudes `ref` (N values) or none; its last operations and a component of zero
// scale lane by lane) (OUT: err[L])
template <class P, bool Ref, class V, int N>
ROTODE_INLINE void error_norms(const LaneState<V, P, N>& s, const double* ref,
                               const LaneBody* lb, double* err) {
    constexpr int L = width<V>;
    constexpr auto all = std::make_integer_sequence<int, P::s + 1>{};
    V n5, n3;
    models::splat(n5, 0.0);
    models::splat(n3, 0.0);
    Mask<V> zero_scale = n5 != n5;                   // (no lane set)
    for (int k = 0; k < N; ++k) {
        V scale;
        error_scale<Ref>(s.atol[k], s.z[k], s.znew[k], s.rtol, Ref ? ref[k] : 0.0, scale);
        const V e5 = engine::wsum<engine::RowE<P>>(s.K, k, all) / scale;
        n5 = n5 + e5 * e5;
        if constexpr (P::kind == 1) {
            const V e3 = engine::wsum<engine::RowE3<P>>(s.K, k, all) / scale;
            n3 = n3 + e3 * e3;
        }
        zero_scale = zero_scale | (scale == 0.0);
    }
    for (int l = 0; l < L; ++l) {
        if (lb[l].r == nullptr) continue;
        const double h = lb[l].h;
        if (mask_at<V>(zero_scale, l)) {        // erk_body's own function on the lane's values
            double K[P::s + 1][N], y[N], ynew[N];
            for (int j = 0; j <= P::s; ++j) lane_of(s.K[j], N, l, K[j]);
            lane_of(s.z, N, l, y);
            lane_of(s.znew, N, l, ynew);
            double atol[N];
            lane_of(s.atol, N, l, atol);
            err[l] = engine::error_norm<P>(K, std::integral_constant<int, N>{}, y, ynew, h,
                                           get(s.rtol, l), atol, Ref ? ref : nullptr);
            continue;
        }
        const double a = get(n5, l), c = get(n3, l);
        if constexpr (P::kind == 0) {
            err[l] = std::fabs(h) * std::sqrt(a / N);
        } else {
            err[l] = (a == 0.0 && c == 0.0) ? 0.0
                                             : std::fabs(h) * a / std::sqrt((a + 0.01 * c) * N);
        }
    }
}

// after lane l's row (yrow, wrow) is written: its next slot, or false when the row is not
// finite (its body ended, ENGINE_NONFINITE, the lane idle)
template <int K>
inline bool row_stored(LaneBody& b, const double* yrow, const double* wrow) {
    if (!engine::finite(yrow, std::integral_constant<int, K>{})
        || !engine::finite(wrow, std::integral_constant<int, 3>{})) {
        end_body<K>(b, ENGINE_NONFINITE);
        return false;
    }
    ++b.slot;
    return true;
}

// lane l's accepted step taken, its rows written: t <- t_new
inline void step_taken(LaneBody& b) {
    b.t = b.t_new;
    ++b.accepted;
    b.fresh = true;
}

// whether lane l's accepted step writes a row from its interpolant (erk_body prepares it then;
// not when its hook prepared it)
inline bool wants_dense(const LaneBody& b) {
    const EngineRun& r = *b.r;
    const auto due = [&](std::ptrdiff_t slot) {
        return slot < r.m && b.direction * (r.t[r.save[slot]] - b.t_stop) <= 0.0;
    };
    if (b.hook_dense) return false;
    if (r.t_eval && (b.t0_requested || due(b.slot))) return true;
    for (std::ptrdiff_t slot = b.slot; due(slot); ++slot)
        if (r.t[r.save[slot]] != b.t_new) return true;
    return false;
}

// Lane l's accepted step, its state finite: the run's `on_step` hook (erk_body's, on the lane's
// step, its stages and an interpolant's storage HF of its own) (OUT: b.hooked, t_stop,
// hook_dense, nfev; HK, HF)
template <class P, class V, int N>
inline void lane_hook(int l, LaneBody& b, const LaneState<V, P, N>& s, double (*HK)[N],
                      double* HF) {
    double z[N], znew[N];
    lane_of(s.z, N, l, z);
    lane_of(s.znew, N, l, znew);
    for (int j = 0; j <= P::s; ++j) lane_of(s.K[j], N, l, HK[j]);
    EngineStep es{b.t, b.t_new, b.h, z, znew, &HK[0][0], N, HF, false, 0, 0, b.t_new};
    b.hooked = b.r->on_step(b.r->step_ctx, &es);
    b.nfev += es.nfev;
    b.r->hook_stores += es.stores;
    b.hook_dense = es.prepared;
    b.t_stop = es.t_stop;
}

// Lane l's accepted step (`finite`: its new state is finite): the rows it holds up to its
// t_stop (the interpolant the lanes prepared, or its hook's, HF), then the step taken, or the
// body ended at a terminal event (erk_body's lines after its trial loop; the caller moves the
// lane's state and FSAL stage); false: its body ended.
template <class P, class Model, class V, int N>
inline bool after_step(const Model& one, int l, bool finite, LaneBody& b,
                       const LaneState<V, P, N>& s, const double* HF) {
    constexpr int KW = Model::k;
    constexpr std::integral_constant<int, N> NN{};
    EngineRun& r = *b.r;
    double znew[N] = {}, z[N] = {}, zd[N], F[7 * N];
    if (!finite) {
        end_body<KW>(b, ENGINE_NONFINITE);
        return false;
    }
    if (b.hooked != ENGINE_OK && b.hooked != ENGINE_TERMINATED) {
        end_body<KW>(b, b.hooked);
        return false;
    }
    const bool due = b.slot < r.m && b.direction * (r.t[r.save[b.slot]] - b.t_stop) <= 0.0;
    if (due) lane_of(s.znew, N, l, znew);
    if (b.prepare) {
        b.nfev += P::s_dense - P::s - 1;
        lane_of(s.z, N, l, z);
        lane_of(s.F, 7 * N, l, F);
    } else if (b.hook_dense && due) {
        lane_of(s.z, N, l, z);
        for (int c = 0; c < 7 * N; ++c) F[c] = HF[c];
    }
    b.t0_requested = false;
    while (due && b.slot < r.m && b.direction * (r.t[r.save[b.slot]] - b.t_stop) <= 0.0) {
        const double tt = r.t[r.save[b.slot]];
        double* yrow = r.yo + b.slot * KW;
        double* wrow = r.wo + b.slot * 3;
        ++b.stores;
        if (tt == b.t_new) {
            one.store(tt, znew, yrow, wrow);
        } else {
            engine::dense_eval<P>((tt - b.t) / b.h, z, F, zd, NN);
            one.store(tt, zd, yrow, wrow);
        }
        if (!row_stored<KW>(b, yrow, wrow)) return false;
    }
    if (b.hooked == ENGINE_TERMINATED) {       // (erk_body's: the step counted, t = t_stop)
        b.t = b.t_stop;
        ++b.accepted;
        end_body<KW>(b, ENGINE_TERMINATED);
        return false;
    }
    step_taken(b);
    return true;
}

// the rotation of every lane's trial, |znew[0:3]| (erk_body's `angle` of a model with
// `max_angle()`: the sum in vectors, its correctly rounded std::sqrt lane by lane); 0 without
// (OUT: angle[L])
template <bool Lie, class V>
ROTODE_INLINE void trial_angles(const V* znew, double* angle) {
    V x;
    models::splat(x, 0.0);
    if constexpr (Lie) x = znew[0] * znew[0] + znew[1] * znew[1] + znew[2] * znew[2];
    for (int l = 0; l < width<V>; ++l) angle[l] = Lie ? std::sqrt(get(x, l)) : 0.0;
}

// The run of the queue of nb bodies runs[0 .. nb - 1] (parameters p[j], or p[0] for all when
// `shared`: one class, no norm gain) by the pair P, L at a time: erk_body's run of each body by
// the lane model C::model<V> (a class tag below: the rigid body on [q, w] or, as RKMK, on [v, w]
// of each step; the kinematics on q or on v; resume: an RKMK body's y0 an earlier call's row), a
// lane taking the queue's next body when its own ends.
template <class P, int L, class C>
ROTODE_INLINE void erk_lanes(const typename C::Params* p, bool shared, bool resume,
                             EngineRun* runs, std::ptrdiff_t nb) {
    using V = Lanes<L>;
    typedef typename C::template model<V> LM;
    constexpr int N = LM::N, KW = LM::One::k;
    LM f;
    LaneState<V, P, N> s;
    LaneBody lb[L];
    const typename C::Params* own[L];           // each lane's body's parameters (its rows)
    double err[L], angle[L];
    double HK[L][P::s_dense][N], HF[L][7 * N];  // each lane's step as its hook reads it
    V zero;
    models::splat(zero, 0.0);
    const Mask<V> none = zero != zero;          // no lane set
    bool stop = false;
    std::ptrdiff_t next = 0;
    f.gather(p, true, 1);                       // every lane valid before any body is in it
    for (int c = 0; c < N; ++c) {
        models::splat(s.z[c], 0.0);
        for (int j = 0; j < P::s_dense; ++j) models::splat(s.K[j][c], 0.0);
    }
    for (int c = 0; c < 7 * N; ++c) models::splat(s.F[c], 0.0);
    models::splat(s.t, 0.0);
    models::splat(s.t_new, 0.0);
    for (int l = 0; l < L; ++l) {
        lb[l].r = nullptr;
        own[l] = p;
    }
    // a lane without a body takes the queue's next one whose start does not end it
    const auto fill = [&](int l) {
        while (lb[l].r == nullptr && next < nb) {
            const typename C::Params& q = p[shared ? 0 : next];
            EngineRun* run = runs + next++;
            if (stop) {
                interrupted_body<KW>(run, lb[l]);
                continue;
            }
            if (start_body<P>(f, LM::scalar(q, resume), run, l, lb[l], s)) {
                f.take(l, q);
                own[l] = &q;
            }
        }
    };
    for (;;) {
        int live = 0;
        for (int l = 0; l < L; ++l) {
            for (;;) {
                fill(l);
                if (lb[l].r == nullptr || before_trial<KW>(lb[l], &stop)) break;
            }
            if (lb[l].r == nullptr) continue;
            ++live;
            lb[l].nfev += P::s;
            set(s.h, l, lb[l].h);
            if constexpr (LM::timed) {          // (f ignores t otherwise)
                set(s.t, l, lb[l].t);
                set(s.t_new, l, lb[l].t_new);
            }
        }
        if (live == 0) break;
        stages_v<P, true>(f, s.t, s.h, s.z, s.K,
                          offset_seq<1>(std::make_integer_sequence<int, P::s - 1>{}));
        for (int k = 0; k < N; ++k)
            s.znew[k] = s.z[k] + s.h * engine::wsum<engine::RowB<P>>(
                                        s.K, k, std::make_integer_sequence<int, P::s>{});
        f.rhs_at(s.t_new, s.znew, s.K[P::s]);   // FSAL: the next step's K[0]
        error_norms<P, LM::lie>(s, RKMK_REF, lb, err);
        trial_angles<LM::lie>(s.znew, angle);
        bool dense = false;
        Mask<V> accepted = none;
        Mask<V> finite = s.znew[0] - s.znew[0] == 0.0;
        for (int c = 1; c < N; ++c) finite = finite & (s.znew[c] - s.znew[c] == 0.0);
        for (int l = 0; l < L; ++l) {
            const bool ok = lb[l].r != nullptr && decide<P, LM::lie>(lb[l], err[l], angle[l]);
            set_mask<V>(accepted, l, ok);
            if (ok) {
                lb[l].hooked = ENGINE_OK;
                lb[l].t_stop = lb[l].t_new;
                lb[l].hook_dense = false;
                if (lb[l].r->on_step != nullptr && mask_at<V>(finite, l))
                    lane_hook<P>(l, lb[l], s, HK[l], HF[l]);      // (the driver's events)
                lb[l].prepare = (lb[l].hooked == ENGINE_OK
                                 || lb[l].hooked == ENGINE_TERMINATED) && wants_dense(lb[l]);
                dense = dense || lb[l].prepare;
            }
        }
        if (dense) dense_prepare_v<P>(f, s.t, s.h, s.z, s.znew, s.K, s.F);
        for (int l = 0; l < L; ++l)        // (the rows: lane l's scalar model, a copy)
            if (mask_at<V>(accepted, l))
                after_step<P>(f.at(l, *own[l]), l, mask_at<V>(finite, l), lb[l], s, HF[l]);
        for (int c = 0; c < N; ++c) {      // the accepted lanes' step taken (a lane whose body
            s.z[c] = accepted ? s.znew[c] : s.z[c];         // ended takes its next one's)
            s.K[0][c] = accepted ? s.K[P::s][c] : s.K[0][c];
        }
        f.accept(accepted, s.z, s.K[0]);   // (erk_body's model accept)
    }
}

// ---- The pairs at fixed steps in lanes ------------------------------------------------------
//
// A pair given `dt` steps the shared grid without its error estimate: the driver's `_body` with
// `_erk_fixed` (rotode/_driver_loop.pxi) on one body, f(t0, y0) once, then per step the stages
// 1 .. s-1 (`erk_step`), y1 = y0 + h sum b_j K_j, f(t1, y1) as the next step's K[0] and the
// model's accept (rkmk: the re-anchoring), the state's finite check after each step.  Here the
// bodies of a block step the grid together, every lane the driver's operations on its body in
// its order (the lane models of `erk_lanes`; `stages_v` forms a stage of c = 1 at t0 + h as
// `erk_step` is given it, t0 + (t1 - t0), and the FSAL stage at t1 as `_erk_fixed`), a lane that
// fails dropping out with the driver's status, step indices and NaN rows.

// the block's lanes' rows at `slot` from the state z (the driver's `store` and `_check_row` by
// lane l's scalar model; first: the row at t0, `first_row`, unchecked) (IN/OUT: alive, live,
// stores)
template <class LM, class V, class Params>
inline void pair_rows(const LM& f, const Params* const* own, const V* z, std::ptrdiff_t j,
                      std::ptrdiff_t slot, bool first, BlockRun* b, bool* alive, int* live,
                      long long* stores) {
    constexpr int N = LM::N, KW = LM::One::k;
    for (int l = 0; l < b->nb; ++l) {
        if (!alive[l]) continue;
        double zl[N];
        double* y = b->yo + (l * b->m + slot) * KW;
        double* w = b->wo + (l * b->m + slot) * 3;
        lane_of(z, N, l, zl);
        const auto one = f.at(l, *own[l]);
        ++stores[l];
        if (first) {
            one.first_row(b->t[j], b->y0 + KW * l, zl, y, w);
        } else {
            one.store(b->t[j], zl, y, w);
            if (!(engine::finite(y, std::integral_constant<int, KW>{})
                  && engine::finite(w, std::integral_constant<int, 3>{}))) {
                fail_lane<KW>(b, l, ENGINE_NONFINITE, j - 1, j, slot);
                alive[l] = false;
                --*live;
            }
        }
    }
}

// The fixed-grid run of a block of b->nb <= L bodies (parameters p[0 .. nb - 1], or p[0] for all
// when `shared`: one class, no norm gain) by the pair P on the lane model C::model<V> (as
// `erk_lanes`; resume: an RKMK body's y0 an earlier call's row), as the driver's `_body` runs
// each with `_erk_fixed` (chunks of steps up to the next row or the thread's next tick, the rows
// at t[save], NaN from a failure on, its status codes and step indices; without `to_end`, no
// step after the last row).  Each body's f evaluations in b->counts[3 l + 2], its rows in
// b->counts[3 l + 1] (the runner turns them into nfev).
template <class P, int L, class C>
ROTODE_INLINE void erk_fixed_block(const typename C::Params* p, bool shared, bool resume,
                                   bool to_end, BlockRun* b) {
    using V = Lanes<L>;
    typedef typename C::template model<V> LM;
    constexpr int N = LM::N, KW = LM::One::k;
    constexpr auto later = offset_seq<1>(std::make_integer_sequence<int, P::s - 1>{});
    constexpr auto all = std::make_integer_sequence<int, P::s>{};
    LM f;
    V z[N], znew[N], K[P::s][N];
    const typename C::Params* own[L];
    bool alive[L];
    long long evals[L] = {}, stores[L] = {};
    const std::ptrdiff_t nb = b->nb, n = b->n, m = b->m;
    int live = int(nb);
    f.gather(p, shared, nb);
    for (int l = 0; l < L; ++l) {           // (lanes past nb: the last body's, never stored)
        const std::ptrdiff_t i = l < nb ? l : nb - 1;
        own[l] = p + (shared ? 0 : i);
        const auto one = LM::scalar(*own[l], resume);
        double zl[N];
        one.begin(b->y0 + KW * i, zl);
        f.started(l, one);
        for (int c = 0; c < N; ++c) {
            set(z[c], l, zl[c]);
            for (int r = 0; r < P::s; ++r) set(K[r][c], l, 0.0);
        }
        alive[l] = l < nb;
        if (l < nb) {
            b->status[l] = ENGINE_OK;
            b->failed[l] = -1;
            b->counts[3 * l] = n;
        }
    }
    std::ptrdiff_t j = 0, slot = 0;
    if (m > 0 && b->save[0] == 0) {
        pair_rows(f, own, z, 0, 0, true, b, alive, &live, stores);
        slot = 1;
    }
    V all_lanes;
    models::splat(all_lanes, 0.0);
    const Mask<V> every = all_lanes == all_lanes;
    bool have_f = false;
    while (j < n && live > 0 && (to_end || slot < m)) {
        std::ptrdiff_t jend = slot < m ? b->save[slot] : n;
        if (jend - j > *b->countdown) jend = j + *b->countdown;
        for (std::ptrdiff_t jj = j; jj < jend; ++jj) {
            const double t0 = b->t[jj], t1 = b->t[jj + 1];
            V tv, hv, t1v;
            models::splat(tv, t0);
            models::splat(hv, t1 - t0);
            models::splat(t1v, t1);
            if (!have_f) {                  // f(t0, y0), the first step's K[0]
                f.rhs_at(tv, z, K[0]);
                have_f = true;
                for (int l = 0; l < nb; ++l) evals[l] += alive[l];
            }
            stages_v<P, true>(f, tv, hv, z, K, later);
            for (int k = 0; k < N; ++k)
                znew[k] = z[k] + hv * engine::wsum<engine::RowB<P>>(K, k, all);
            f.rhs_at(t1v, znew, K[0]);      // f(t1, y1): the next step's K[0]
            for (int k = 0; k < N; ++k) z[k] = znew[k];
            f.accept(every, z, K[0]);
            for (int l = 0; l < nb; ++l) {
                if (!alive[l]) continue;
                evals[l] += P::s;
                if (!finite_lane<N>(z, l)) {    // found at its step: that step alone
                    fail_lane<KW>(b, l, ENGINE_NONFINITE, jj, jj + 1, slot);
                    alive[l] = false;
                    --live;
                }
            }
        }
        *b->countdown -= int(jend - j);
        j = jend;
        if (live > 0 && *b->countdown <= 0 && b->tick(b->tick_ctx)) {
            for (int l = 0; l < nb; ++l)
                if (alive[l]) fail_lane<KW>(b, l, ENGINE_INTERRUPTED, j, j, slot);
            break;
        }
        if (slot < m && b->save[slot] == j) {
            pair_rows(f, own, z, j, slot, false, b, alive, &live, stores);
            ++slot;
        }
    }
    for (int l = 0; l < nb; ++l) {
        b->counts[3 * l + 1] = stores[l];
        b->counts[3 * l + 2] = evals[l];
    }
}

// The class tags of `erk_lanes`: the rigid body on [q, w] (`StateLanes`, of RigidBodyModel) or,
// as RKMK, on [v, w] of each step (`RkmkLanes`, of RigidRkmkModel), with torque kind T and
// inertia shape Diag; the kinematics on q (`KinStateLanes`, of KinematicsModel) or on v
// (`KinRkmkLanes`, of KinRkmkModel), with rate kind W in the body or the world frame.
template <int T, bool Diag, bool Rkmk>
struct RigidErkTag {
    typedef RigidParams Params;
    template <class V>
    using model = std::conditional_t<Rkmk, RkmkLanes<T, Diag, V>, StateLanes<T, Diag, V>>;
};

template <int W, bool World, bool Rkmk>
struct KinErkTag {
    typedef KinParams Params;
    template <class V>
    using model = std::conditional_t<Rkmk, KinRkmkLanes<W, World, V>, KinStateLanes<W, World, V>>;
};

// One function per instruction set and instantiation of `erk_lanes`, compiled for that target.
#define ROTODE_ERK_LANE_ENTRY(name, attrs, L)                                                \
    template <class P, class C>                                                              \
    attrs __attribute__((noinline)) void name(const typename C::Params* p, bool shared,      \
                                              bool resume, EngineRun* runs,                  \
                                              std::ptrdiff_t nb) {                           \
        erk_lanes<P, L, C>(p, shared, resume, runs, nb);                                     \
    }

// Only the AVX2 instance (4 lanes) is compiled, and it also serves AVX-512 machines: measured
// on 10^5 tops (docs/scaling.md), 8 lanes of AVX-512 ran 1.25x slower than 4 of AVX2 (the
// per-lane scalar work kept for bit-identity grows with the width) and 2 lanes of SSE2 gained
// 1.2x over one body at a time, while each instance costs about a minute of build time.
#ifdef ROTODE_LANES_X86
ROTODE_ERK_LANE_ENTRY(erk_avx2, __attribute__((target("avx2"))), 4)
#endif
#undef ROTODE_ERK_LANE_ENTRY

// The same for `erk_fixed_block` (the AVX2 instance alone, as the adaptive lanes').
#define ROTODE_ERK_FIXED_ENTRY(name, attrs, L)                                               \
    template <class P, class C>                                                              \
    attrs __attribute__((noinline)) void name(const typename C::Params* p, bool shared,      \
                                              bool resume, bool to_end, BlockRun* b) {       \
        erk_fixed_block<P, L, C>(p, shared, resume, to_end, b);                              \
    }
#ifdef ROTODE_LANES_X86
ROTODE_ERK_FIXED_ENTRY(erk_fixed_avx2, __attribute__((target("avx2"))), 4)
#endif
#undef ROTODE_ERK_FIXED_ENTRY

// the lanes of the adaptive kernel on the instruction set `isa`: 4 (AVX2 or AVX-512) or 1
inline int erk_lanes_width(int isa) {
#ifdef ROTODE_LANES_X86
    if (isa == ISA_AVX2 || isa == ISA_AVX512) return 4;
#endif
    (void)isa;
    return 1;
}

// A queue's bodies and parameters (`erk_lanes`'s arguments).
template <class Params>
struct LaneQueue {
    const Params* p;
    bool shared, resume;
    EngineRun* runs;
    std::ptrdiff_t nb;
};

template <class P, class C>
inline void erk_isa(int isa, const LaneQueue<typename C::Params>& q) {
#ifdef ROTODE_LANES_X86
    erk_avx2<P, C>(q.p, q.shared, q.resume, q.runs, q.nb);
#endif
    (void)isa, (void)q;
}

// The class tag of a queue's or block's class to `go` (a generic callable taking the tag: the
// adaptive queues' `erk_isa`, the fixed grid's `erk_fixed_isa`), one instantiation each.
template <bool Diag, bool Rkmk, class Go>
inline void erk_torque(int torque, Go&& go) {
    switch (torque) {
        case TORQUE_NONE: return go(RigidErkTag<TORQUE_NONE, Diag, Rkmk>{});
        case TORQUE_GRAVITY: return go(RigidErkTag<TORQUE_GRAVITY, Diag, Rkmk>{});
        case TORQUE_GRAVITY_AXIS: return go(RigidErkTag<TORQUE_GRAVITY_AXIS, Diag, Rkmk>{});
        case TORQUE_BODY: return go(RigidErkTag<TORQUE_BODY, Diag, Rkmk>{});
        case TORQUE_GG: return go(RigidErkTag<TORQUE_GG, Diag, Rkmk>{});
        // (TORQUE_CALL never comes here: `lanes_erk` runs it body by body, `lanes_erk_fixed`
        // declines it)
        default: return go(RigidErkTag<TORQUE_WORLD, Diag, Rkmk>{});
    }
}

template <class Go>
inline void erk_class(const RigidClass& c, bool rkmk, Go&& go) {
    with_bool(rkmk, [&](auto r) {
        with_bool(c.diag, [&](auto d) {
            erk_torque<decltype(d)::value, decltype(r)::value>(c.torque, go);
        });
    });
}

template <bool World, bool Rkmk, class Go>
inline void erk_omega(int omega, Go&& go) {
    if (omega == OMEGA_CONSTANT) go(KinErkTag<OMEGA_CONSTANT, World, Rkmk>{});
    else go(KinErkTag<OMEGA_SINUSOID, World, Rkmk>{});
}

template <class Go>
inline void erk_class(const KinClass& c, bool rkmk, Go&& go) {
    with_bool(rkmk, [&](auto r) {
        with_bool(c.world, [&](auto w) {
            erk_omega<decltype(w)::value, decltype(r)::value>(c.omega, go);
        });
    });
}

// A block's bodies and parameters (`erk_fixed_block`'s arguments).
template <class Params>
struct PairBlock {
    const Params* p;
    bool shared, resume, to_end;
    BlockRun* b;
};

template <class P, class C>
inline void erk_fixed_isa(int isa, const PairBlock<typename C::Params>& q) {
#ifdef ROTODE_LANES_X86
    erk_fixed_avx2<P, C>(q.p, q.shared, q.resume, q.to_end, q.b);
#endif
    (void)isa, (void)q;
}

}  // namespace lanes

// Whether the nb bodies p[0 .. nb - 1] (or p[0] alone when `shared`) are of one class that the
// pairs' lanes take: the same class, no norm gain, and for the rigid body no torque of kind
// TORQUE_CALL (a source called through its pointer counts its own evaluations: such a queue or
// block runs body by body).
template <class Params>
inline bool lanes_one_class(const Params* p, bool shared, std::ptrdiff_t nb) {
    using namespace lanes;
    const auto c = lane_class(p, LANES_RK3);
    bool same = !c.gain;
    if constexpr (std::is_same_v<Params, RigidParams>) same = same && c.torque != TORQUE_CALL;
    for (std::ptrdiff_t l = 1; l < nb && !shared; ++l)
        same = same && lane_class(p + l, LANES_RK3) == c;
    return same;
}

// Whether the adaptive lane kernels run the pair `pair` (a PairId): every pair of the registry's
// specialised engine (rotode/_tableaux.hpp), on the state or (rkmk) on [v, w] of each step.
inline bool lanes_erk_pair(int pair) { return pair >= 0 && pair < PAIR_COUNT; }

// The error-controlled runs of the queue of nb bodies runs[0 .. nb - 1] (parameters p[0 .. nb -
// 1], or p[0] for every body when `shared`) with the pair `pair`, on the state or, with `rkmk`,
// as the Runge-Kutta-Munthe-Kaas method of that pair (resume: as `rigid_rkmk_body`), on the
// instruction set `isa` (which the caller checked with `lanes_supported`).  Bodies of one class
// without a norm gain, with a pair the lanes run and more than half the lanes' worth of them,
// run in the 4 lanes of the AVX2 kernel where `isa` is AVX2 or AVX-512 (`lanes::erk_lanes`,
// `erk_lanes_width`); any other queue (a torque of kind TORQUE_CALL among them) runs body by
// body by `rigid_erk_body` or `rigid_rkmk_body` (the same bits).  Returns the lanes the queue
// ran in (1: one body at a time).  Params: RigidParams (the rigid body) or KinParams (the
// kinematics: `kin_erk_body`, `kin_rkmk_body` body by body).
template <class Params>
inline int lanes_erk(int isa, int pair, bool rkmk, bool resume, const Params* p, bool shared,
                     EngineRun* runs, std::ptrdiff_t nb) {
    using namespace lanes;
    constexpr bool rigid = std::is_same_v<Params, RigidParams>;
    const auto c = lane_class(p, LANES_RK3);
    const bool same = lanes_one_class(p, shared, nb);
    const int L = erk_lanes_width(isa);
    if (same && L > 1 && 2 * nb > L && lanes_erk_pair(pair)) {
        const LaneQueue<Params> q{p, shared, resume, runs, nb};
        with_pair(pair, [&](auto pair_tag) {
            erk_class(c, rkmk, [&](auto tag) {
                erk_isa<decltype(pair_tag), decltype(tag)>(isa, q);
            });
            return 0;
        });
        return L;
    }
    for (std::ptrdiff_t l = 0; l < nb; ++l) {
        const Params* b = p + (shared ? 0 : l);
        if constexpr (rigid) {
            if (rkmk) rigid_rkmk_body(pair, b, resume, runs + l);
            else rigid_erk_body(pair, b, runs + l);
        } else {
            if (rkmk) kin_rkmk_body(pair, b, resume, runs + l);
            else kin_erk_body(pair, b, runs + l);
        }
    }
    return 1;
}

// The bodies per block of the pairs' fixed-grid lanes (`lanes_erk_fixed`) on the nb bodies
// p[0 .. nb - 1] (or p[0] for every body when `shared`) with the pair `pair` on the instruction
// set `isa`, 0 where they do not run them: they take one class of bodies, without a norm gain or
// a torque of kind TORQUE_CALL, a pair of the engine's, on AVX2 or AVX-512 (4 lanes); any other
// run takes the driver's `_erk_fixed` body by body (the same bits).
template <class Params>
inline int lanes_erk_fixed_width(int isa, int pair, const Params* p, bool shared,
                                 std::ptrdiff_t nb) {
    using namespace lanes;
    if (nb < 1 || erk_lanes_width(isa) < 2 || !lanes_erk_pair(pair)) return 0;
    return lanes_one_class(p, shared, nb) ? erk_lanes_width(isa) : 0;
}

// The fixed-grid run of the block b (b->nb bodies, parameters p[0 .. nb - 1] or p[0] when
// `shared`, which `lanes_erk_fixed_width` accepted) with the pair `pair` on the state or, with
// `rkmk`, as its Runge-Kutta-Munthe-Kaas method (resume: as `rigid_rkmk_body`), in the 4 lanes of
// the AVX2 kernel (`lanes::erk_fixed_block`; to_end: steps after the last row, the rigid body's
// driver) (OUT: b's rows, status, failed, counts: [3 l] the steps, [3 l + 1] the rows stored,
// [3 l + 2] the f evaluations).  Returns the lanes the block ran in.
template <class Params>
inline int lanes_erk_fixed(int isa, int pair, bool rkmk, bool resume, bool to_end,
                           const Params* p, bool shared, BlockRun* b) {
    using namespace lanes;
    const auto c = lane_class(p, LANES_RK3);
    const PairBlock<Params> q{p, shared, resume, to_end, b};
    with_pair(pair, [&](auto pair_tag) {
        erk_class(c, rkmk, [&](auto tag) {
            erk_fixed_isa<decltype(pair_tag), decltype(tag)>(isa, q);
        });
        return 0;
    });
    return erk_lanes_width(isa);
}

}  // namespace rotode

#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif
