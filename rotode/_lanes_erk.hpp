// The adaptive lane kernels: the error-controlled pairs (dop853, dopri5, bs3) on queues of rigid
// bodies, one body per SIMD lane, each lane with its own t, h, accepted or rejected trial step,
// counters and status (docs/architecture.md, "The lane kernels").
//
// `erk_lanes<P, L, T, Diag>` does for up to L bodies at a time what `erk_body<P>` of
// rotode/_engine.hpp does for one (its control flow replicated lane by lane, in the same order),
// and when a lane's body ends (at its t_end, or failing) the lane takes the queue's next body, so
// that a slow body does not hold the others.  What runs in lane vectors: the stage sums, the
// model's f (`rigid_rhs` of rotode/_models.hpp, the same template the single body's
// `RigidBodyModel` calls with double), the error estimate's terms (the scale, the weighted sums,
// their squares' sums) and the dense output's coefficients.  What runs lane by lane, with the
// scalar functions `erk_body` calls: a body's start (its first row, f(t0), `initial_step`), the
// norm's last sqrt and ratio, the controller's pow and clamps, the decision, the rows (the
// interpolant of `dense_eval` on the lane's coefficients).  With -ffp-contract=off every lane
// does erk_body's operations on its body in erk_body's order: each body's rows, t, status and
// counters are its single run's bits, whatever the width and the queue.
//
// Formulas: Hairer, Norsett & Wanner, "Solving Ordinary Differential Equations I" (2nd ed.,
// 1993), sec. II.4 (error norm, initial step, the controller), II.5 (DOPRI5 and its dense
// output), II.10 (DOP853, its 8(5,3) estimate and its extra-stage interpolant).
#pragma once

#include <cmath>
#include <cstddef>
#include <utility>

#include "_lanes.hpp"

#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpsabi"      // vectors passed only to always-inline functions
#endif

namespace rotode {
namespace lanes {

// the error's scale atol + max(|y|, |ynew|) rtol, lane by lane with std::fabs's and std::fmax's
// bits (the sign bit cleared; a NaN operand of the max gives the other) (OUT: out)
template <class V>
ROTODE_INLINE void error_scale(const V& atol, const V& y, const V& ynew, const V& rtol, V& out) {
    if constexpr (width<V> == 1) {
        out = atol + std::fmax(std::fabs(y), std::fabs(ynew)) * rtol;
    } else {
        typedef long long VI __attribute__((vector_size(sizeof(V))));
        const V a = (V)((VI)y & 0x7fffffffffffffffLL), b = (V)((VI)ynew & 0x7fffffffffffffffLL);
        out = atol + (((a > b) | (b != b)) ? a : b) * rtol;
    }
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

// stage R's argument ys = y + h sum_{j<R} a_Rj K_j (h: one per lane)
template <class P, class V, int N, int R>
ROTODE_INLINE void stage_state_v(const V (*K)[N], const V& h, const V* y, V* ys) {
    for (int k = 0; k < N; ++k)
        ys[k] = y[k] + h * engine::wsum<engine::RowA<P, R>>(K, k, std::make_integer_sequence<int, R>{});
}

// the stages J... (arguments, then f), in order
template <class P, class M, class V, int N, int... J>
ROTODE_INLINE void stages_v(const M& f, const V& h, const V* y, V (*K)[N],
                            std::integer_sequence<int, J...>) {
    V ys[N];
    ((stage_state_v<P, V, N, J>(K, h, y, ys), f.rhs(0, ys, K[J])), ...);
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
ROTODE_INLINE void dense_prepare_v(const M& f, const V& h, const V* y, const V* ynew,
                                   V (*K)[N], V* F) {
    if constexpr (P::kind == 0) {
        dense_rows_v<P, M>(K, h, F, std::make_integer_sequence<int, P::degree>{});
    } else {
        stages_v<P>(f, h, y, K,
                    offset_seq<P::s + 1>(std::make_integer_sequence<int, P::s_dense - P::s - 1>{}));
        for (int k = 0; k < N; ++k) {
            const V dy = ynew[k] - y[k];
            F[k] = dy;
            F[N + k] = h * K[0][k] - dy;
            F[2 * N + k] = 2.0 * dy - h * (K[P::s][k] + K[0][k]);
        }
        dense_rows_v<P, M>(K, h, F, std::make_integer_sequence<int, 4>{});
    }
}

// One lane's body: its run and erk_body's loop variables.
struct LaneBody {
    EngineRun* r;            // NULL: the lane is idle
    double t, tf, direction, h_abs, min_step, t_new, h;
    std::ptrdiff_t slot;
    long long accepted, rejected, nfev, stores;
    bool retried, t0_requested, fresh, prepare;
};

// The lanes' vectors: the state, the trial state, the stages, the interpolant, the error
// control's tolerances, the trial step sizes.
template <class V, class P>
struct LaneState {
    static constexpr int N = 7;
    V z[N], znew[N];
    V K[P::s_dense][N];
    V F[7 * N];
    V atol[N], rtol, h;
};

// the lane l of the vector array x (n values) (OUT: out)
template <class V>
ROTODE_INLINE void lane_of(const V* x, int n, int l, double* out) {
    for (int c = 0; c < n; ++c) out[c] = get(x[c], l);
}

// lane l's parameters from one body's
template <class V>
ROTODE_INLINE void set_params(RigidLanes<V>& q, int l, const RigidParams& b) {
    for (int c = 0; c < 9; ++c) {
        set(q.I[c], l, b.I[c]);
        set(q.Iinv[c], l, b.Iinv[c]);
    }
    set(q.gain, l, b.gain);
    set(q.mg, l, b.mg);
    for (int c = 0; c < 3; ++c) {
        set(q.com[c], l, b.com[c]);
        set(q.tau[c], l, b.tau[c]);
    }
    q.gyroscopic = b.gyroscopic;
}

// the end of lane l's body with status st (erk_body's last lines: NaN rows from its slot, the
// counters, where it ended); the lane is idle after it
template <int K>
inline void end_body(LaneBody& b, int st) {
    EngineRun& r = *b.r;
    for (std::ptrdiff_t slot = b.slot; slot < r.m; ++slot) {
        for (int k = 0; k < K; ++k) r.yo[slot * K + k] = NAN;
        for (int k = 0; k < 3; ++k) r.wo[slot * 3 + k] = NAN;
    }
    r.accepted = b.accepted;
    r.rejected = b.rejected;
    r.nfev = b.nfev;
    r.stores = b.stores;
    r.t_end = b.t;
    r.status = st;
    b.r = nullptr;
}

// The start of a body's run in lane l (erk_body's lines before its loop, on the scalar model
// `one`); false: it ended there (its status written, the lane idle).
template <class P, class Model, class V>
inline bool start_body(const Model& one, EngineRun* run, int l, LaneBody& b,
                       LaneState<V, P>& s) {
    constexpr int N = 7;
    EngineRun& r = *run;
    double z[N], K0[N];
    b = LaneBody{run, r.t[0], r.t[r.n], 0.0, 0.0, 0.0, 0.0, 0.0, 0, 0, 0, 0, 0,
                 false, false, true, false};
    b.direction = b.tf > b.t ? 1.0 : -1.0;
    b.t0_requested = r.t_eval && r.m > 0 && r.save[0] == 0;
    int st = ENGINE_OK;
    one.begin(r.y0, z);
    if (r.m > 0 && r.save[0] == 0) {
        one.first_row(b.t, r.y0, z, r.yo, r.wo);
        ++b.stores;
        if (!engine::finite(r.yo, std::integral_constant<int, 7>{})
            || !engine::finite(r.wo, std::integral_constant<int, 3>{}))
            st = ENGINE_NONFINITE;
        else
            b.slot = 1;
    }
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
        end_body<N>(b, st);
        return false;
    }
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
        b.min_step = 10.0 * std::fabs(std::nextafter(b.t, b.direction * INFINITY) - b.t);
        if (b.h_abs > r.max_step) b.h_abs = r.max_step;
        else if (b.h_abs < b.min_step) b.h_abs = b.min_step;
        b.retried = false;
        b.fresh = false;
    }
    if (b.h_abs < b.min_step) {
        end_body<K>(b, ENGINE_STEP_TOO_SMALL);
        return false;
    }
    b.t_new = b.t + b.h_abs * b.direction;
    if (b.direction * (b.t_new - b.tf) > 0.0) b.t_new = b.tf;
    b.h = b.t_new - b.t;
    b.h_abs = std::fabs(b.h);
    return true;
}

// erk_body's decision on lane l's trial of error `err`: the next h; false: rejected
template <class P>
inline bool decide(LaneBody& b, double err) {
    constexpr double exponent = -1.0 / (P::error_order + 1);
    using engine::MAX_FACTOR;
    using engine::MIN_FACTOR;
    using engine::SAFETY;
    if (err < 1.0) {
        double factor = err == 0.0
            ? MAX_FACTOR : std::fmin(MAX_FACTOR, SAFETY * std::pow(err, exponent));
        if (b.retried) factor = std::fmin(1.0, factor);
        b.h_abs = b.h_abs * factor;
        return true;
    }
    b.h_abs = b.h_abs * std::fmax(MIN_FACTOR, SAFETY * std::pow(err, exponent));
    b.retried = true;
    ++b.rejected;
    return false;
}

// The error norms of every lane's trial (engine::error_norm's terms in vectors, its last
// operations and a component of zero scale lane by lane) (OUT: err[L])
template <class P, class V>
ROTODE_INLINE void error_norms(const LaneState<V, P>& s, const LaneBody* lb, double* err) {
    constexpr int N = 7, L = width<V>;
    constexpr auto all = std::make_integer_sequence<int, P::s + 1>{};
    V n5, n3;
    models::splat(n5, 0.0);
    models::splat(n3, 0.0);
    Mask<V> zero_scale = n5 != n5;                   // (no lane set)
    for (int k = 0; k < N; ++k) {
        V scale;
        error_scale(s.atol[k], s.z[k], s.znew[k], s.rtol, scale);
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
                                           get(s.rtol, l), atol);
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

// whether lane l's accepted step writes a row from its interpolant (erk_body prepares it then)
inline bool wants_dense(const LaneBody& b) {
    const EngineRun& r = *b.r;
    const auto due = [&](std::ptrdiff_t slot) {
        return slot < r.m && b.direction * (r.t[r.save[slot]] - b.t_new) <= 0.0;
    };
    if (r.t_eval && (b.t0_requested || due(b.slot))) return true;
    for (std::ptrdiff_t slot = b.slot; due(slot); ++slot)
        if (r.t[r.save[slot]] != b.t_new) return true;
    return false;
}

// Lane l's accepted step (`finite`: its new state is finite): the rows it holds, then the step
// taken (erk_body's lines after its trial loop; the caller moves the lane's state and FSAL
// stage); false: its body ended.
template <class P, class Model, class V>
inline bool after_step(const Model& one, int l, bool finite, LaneBody& b,
                       const LaneState<V, P>& s) {
    constexpr int N = 7;
    constexpr std::integral_constant<int, N> NN{};
    constexpr std::integral_constant<int, 3> THREE{};
    EngineRun& r = *b.r;
    double znew[N] = {}, z[N] = {}, zd[N], F[7 * N];
    if (!finite) {
        end_body<N>(b, ENGINE_NONFINITE);
        return false;
    }
    const bool due = b.slot < r.m && b.direction * (r.t[r.save[b.slot]] - b.t_new) <= 0.0;
    if (due) lane_of(s.znew, N, l, znew);
    if (b.prepare) {
        b.nfev += P::s_dense - P::s - 1;
        lane_of(s.z, N, l, z);
        lane_of(s.F, 7 * N, l, F);
    }
    b.t0_requested = false;
    while (due && b.slot < r.m && b.direction * (r.t[r.save[b.slot]] - b.t_new) <= 0.0) {
        const double tt = r.t[r.save[b.slot]];
        double* yrow = r.yo + b.slot * N;
        double* wrow = r.wo + b.slot * 3;
        ++b.stores;
        if (tt == b.t_new) {
            one.store(tt, znew, yrow, wrow);
        } else {
            engine::dense_eval<P>((tt - b.t) / b.h, z, F, zd, NN);
            one.store(tt, zd, yrow, wrow);
        }
        if (!engine::finite(yrow, NN) || !engine::finite(wrow, THREE)) {
            end_body<N>(b, ENGINE_NONFINITE);
            return false;
        }
        ++b.slot;
    }
    b.t = b.t_new;
    ++b.accepted;
    b.fresh = true;
    return true;
}

// The run of the queue of nb bodies runs[0 .. nb - 1] (parameters p[j], or p[0] for all when
// `shared`: one class, no norm gain) by the pair P, L at a time: erk_body's run of each body,
// a lane taking the queue's next body when its own ends.
template <class P, int L, int T, bool Diag>
ROTODE_INLINE void erk_lanes(const RigidParams* p, bool shared, EngineRun* runs,
                             std::ptrdiff_t nb) {
    using V = Lanes<L>;
    typedef RigidBodyModel<T, Diag, false> Model;
    constexpr int N = 7;
    RigidLaneModel<T, Diag, false, V> f;
    LaneState<V, P> s;
    LaneBody lb[L];
    double err[L];
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
    for (int l = 0; l < L; ++l) lb[l].r = nullptr;
    // a lane without a body takes the queue's next one whose start does not end it
    const auto fill = [&](int l) {
        while (lb[l].r == nullptr && next < nb) {
            const RigidParams& q = p[shared ? 0 : next];
            EngineRun* run = runs + next++;
            if (stop) {
                lb[l] = LaneBody{run, run->t[0], 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0, 0, 0, 0, 0,
                                 false, false, true, false};
                end_body<N>(lb[l], ENGINE_INTERRUPTED);
                continue;
            }
            if (start_body<P>(Model{q}, run, l, lb[l], s)) set_params(f.p, l, q);
        }
    };
    for (;;) {
        int live = 0;
        for (int l = 0; l < L; ++l) {
            for (;;) {
                fill(l);
                if (lb[l].r == nullptr || before_trial<N>(lb[l], &stop)) break;
            }
            if (lb[l].r == nullptr) continue;
            ++live;
            lb[l].nfev += P::s;
            set(s.h, l, lb[l].h);
        }
        if (live == 0) break;
        stages_v<P>(f, s.h, s.z, s.K, offset_seq<1>(std::make_integer_sequence<int, P::s - 1>{}));
        for (int k = 0; k < N; ++k)
            s.znew[k] = s.z[k] + s.h * engine::wsum<engine::RowB<P>>(
                                        s.K, k, std::make_integer_sequence<int, P::s>{});
        f.rhs(0, s.znew, s.K[P::s]);            // FSAL: the next step's K[0]
        error_norms<P>(s, lb, err);
        bool dense = false;
        Mask<V> accepted = none;
        Mask<V> finite = s.znew[0] - s.znew[0] == 0.0;
        for (int c = 1; c < N; ++c) finite = finite & (s.znew[c] - s.znew[c] == 0.0);
        for (int l = 0; l < L; ++l) {
            const bool ok = lb[l].r != nullptr && decide<P>(lb[l], err[l]);
            set_mask<V>(accepted, l, ok);
            if (ok) {
                lb[l].prepare = wants_dense(lb[l]);
                dense = dense || lb[l].prepare;
            }
        }
        if (dense) dense_prepare_v<P>(f, s.h, s.z, s.znew, s.K, s.F);
        for (int l = 0; l < L; ++l)        // (store: a copy, the parameters unused)
            if (mask_at<V>(accepted, l))
                after_step<P>(Model{p[0]}, l, mask_at<V>(finite, l), lb[l], s);
        for (int c = 0; c < N; ++c) {      // the accepted lanes' step taken (a lane whose body
            s.z[c] = accepted ? s.znew[c] : s.z[c];         // ended takes its next one's)
            s.K[0][c] = accepted ? s.K[P::s][c] : s.K[0][c];
        }
    }
}

// One function per instruction set and instantiation of `erk_lanes`, compiled for that target.
#define ROTODE_ERK_LANE_ENTRY(name, attrs, L)                                                \
    template <class P, int T, bool Diag>                                                     \
    attrs __attribute__((noinline)) void name(const RigidParams* p, bool shared,             \
                                              EngineRun* runs, std::ptrdiff_t nb) {          \
        erk_lanes<P, L, T, Diag>(p, shared, runs, nb);                                       \
    }

// Only the AVX2 instance (4 lanes) is compiled, and it also serves AVX-512 machines: measured
// on 10^5 tops (docs/scaling.md), 8 lanes of AVX-512 ran 1.25x slower than 4 of AVX2 (the
// per-lane scalar work kept for bit-identity grows with the width) and 2 lanes of SSE2 gained
// 1.2x over one body at a time, while each instance costs about a minute of build time.
#ifdef ROTODE_LANES_X86
ROTODE_ERK_LANE_ENTRY(erk_avx2, __attribute__((target("avx2"))), 4)
#endif
#undef ROTODE_ERK_LANE_ENTRY

// the lanes of the adaptive kernel on the instruction set `isa`: 4 (AVX2 or AVX-512) or 1
inline int erk_lanes_width(int isa) {
#ifdef ROTODE_LANES_X86
    if (isa == ISA_AVX2 || isa == ISA_AVX512) return 4;
#endif
    (void)isa;
    return 1;
}

template <class P, int T, bool Diag>
inline void erk_isa(int isa, const RigidParams* p, bool shared, EngineRun* runs,
                    std::ptrdiff_t nb) {
#ifdef ROTODE_LANES_X86
    erk_avx2<P, T, Diag>(p, shared, runs, nb);
#endif
    (void)isa, (void)p, (void)shared, (void)runs, (void)nb;
}

template <class P, bool Diag>
inline void erk_torque(int isa, int torque, const RigidParams* p, bool shared, EngineRun* runs,
                       std::ptrdiff_t nb) {
    switch (torque) {
        case TORQUE_NONE: return erk_isa<P, TORQUE_NONE, Diag>(isa, p, shared, runs, nb);
        case TORQUE_GRAVITY: return erk_isa<P, TORQUE_GRAVITY, Diag>(isa, p, shared, runs, nb);
        case TORQUE_GRAVITY_AXIS:
            return erk_isa<P, TORQUE_GRAVITY_AXIS, Diag>(isa, p, shared, runs, nb);
        case TORQUE_BODY: return erk_isa<P, TORQUE_BODY, Diag>(isa, p, shared, runs, nb);
        default: return erk_isa<P, TORQUE_WORLD, Diag>(isa, p, shared, runs, nb);
    }
}

template <class P>
inline void erk_class(int isa, const RigidClass& c, const RigidParams* p, bool shared,
                      EngineRun* runs, std::ptrdiff_t nb) {
    if (c.diag) erk_torque<P, true>(isa, c.torque, p, shared, runs, nb);
    else erk_torque<P, false>(isa, c.torque, p, shared, runs, nb);
}

}  // namespace lanes

// Whether the adaptive lane kernels run the pair `pair` (a PairId): every pair of the registry's
// specialised engine (rotode/_tableaux.hpp).
inline bool lanes_erk_pair(int pair) { return pair >= 0 && pair < PAIR_COUNT; }

// The error-controlled runs of the queue of nb bodies runs[0 .. nb - 1] (parameters p[0 .. nb -
// 1], or p[0] for every body when `shared`) with the pair `pair`, on the instruction set `isa`
// (which the caller checked with `lanes_supported`).  Bodies of one class without a norm gain,
// with a pair the lanes run and more than half the lanes' worth of them, run in the 4 lanes of
// the AVX2 kernel where `isa` is AVX2 or AVX-512 (`lanes::erk_lanes`, `erk_lanes_width`); any
// other queue runs body by body by `rigid_erk_body` (the same bits).  Returns the lanes the
// queue ran in (1: one body at a time).
inline int lanes_erk(int isa, int pair, const RigidParams* p, bool shared, EngineRun* runs,
                     std::ptrdiff_t nb) {
    using namespace lanes;
    const RigidClass c = lane_class(p);
    bool same = !c.gain;
    for (std::ptrdiff_t l = 1; l < nb && !shared; ++l) same = same && lane_class(p + l) == c;
    const int L = erk_lanes_width(isa);
    if (same && L > 1 && 2 * nb > L && lanes_erk_pair(pair)) {
        switch (pair) {
#define ROTODE_ERK_LANE_CASE(id, P) \
            case id: erk_class<P>(isa, c, p, shared, runs, nb); break;
            ROTODE_PAIRS(ROTODE_ERK_LANE_CASE)
#undef ROTODE_ERK_LANE_CASE
        }
        return L;
    }
    for (std::ptrdiff_t l = 0; l < nb; ++l) rigid_erk_body(pair, p + (shared ? 0 : l), runs + l);
    return 1;
}

}  // namespace rotode

#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif
