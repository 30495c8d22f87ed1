// The lane kernels: the fixed-step methods rk3 and rk4 on blocks of rigid bodies, one body per
// SIMD lane (docs/architecture.md, "The lane kernels").
//
// One source for every width.  A lane vector `Lanes<L>` is a GCC vector of L doubles (`double`
// itself for L = 1): its + - * / act lane by lane, IEEE-exact in every lane, and a double mixed
// with it is broadcast.  The steps (`rk3_lanes`, `rk4_lanes`) and the equations
// (`rigid_rhs` of rotode/_models.hpp, which the specialised engine's model also is) are templates
// over the value type, so lane l of an instance of L lanes does exactly the operations of the
// L = 1 instance on body l, in the same order: with -ffp-contract=off (setup.py; no FMA
// contraction, no reassociation without -ffast-math) its results are the L = 1 instance's bits
// whatever the width.  The L = 1 instance is the single body's path (rotode/dynamic.pyx runs every
// eligible rk3/rk4 body through this file), so a batch equals its single runs bit for bit.  The
// only function outside + - * / is the square root of `normalize`, correctly rounded in scalar
// and vector code alike (taken lane by lane).
//
// Widths by instruction set, chosen at run time (`lanes_supported`, `lanes_block`): "scalar"
// (L = 1), "sse2" (the baseline build, L = 2), "avx2" (L = 4) and "avx512" (L = 8): one
// register per vector (two registers per vector spill the stages to the stack and measured
// slower), the last two compiled with GCC's `target` attribute and run only where
// `__builtin_cpu_supports` says the CPU has them.
//
// Methods: Kutta's third-order method and the classical fourth-order Runge-Kutta method
// (Hairer, Norsett & Wanner, "Solving Ordinary Differential Equations I", 2nd ed., 1993, sec.
// II.1, Table 1.1 and eq. 1.8), with the operations of rotode/dynamic.pxd `rk3_step`/`rk4_step`.
#pragma once

#include <cmath>
#include <cstddef>
#include <type_traits>

#include "_engine.hpp"
#include "_models.hpp"

#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpsabi"      // vectors passed only to always-inline functions
#endif

namespace rotode {

// the instruction sets, in the order of `rotode._lanes.ISAS` (after "off")
enum LaneIsa { ISA_SCALAR = 0, ISA_SSE2 = 1, ISA_AVX2 = 2, ISA_AVX512 = 3, ISA_COUNT = 4 };
// the fixed-step kernels of the lane blocks
enum LaneKernel { LANES_RK3 = 0, LANES_RK4 = 1 };

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
};

// lane l <- p[l] for l < nb, the last body's values in the lanes after it (they are stepped,
// never stored)
template <class V>
ROTODE_INLINE void gather_params(const RigidParams* p, bool shared, std::ptrdiff_t nb,
                                 RigidLanes<V>* out) {
    for (int l = 0; l < width<V>; ++l) {
        const RigidParams& b = p[shared ? 0 : (l < nb ? l : nb - 1)];
        for (int c = 0; c < 9; ++c) {
            set(out->I[c], l, b.I[c]);
            set(out->Iinv[c], l, b.Iinv[c]);
        }
        set(out->gain, l, b.gain);
        set(out->mg, l, b.mg);
        for (int c = 0; c < 3; ++c) {
            set(out->com[c], l, b.com[c]);
            set(out->tau[c], l, b.tau[c]);
        }
    }
    out->gyroscopic = p[0].gyroscopic;
}

// Kutta's third-order method from y (OUT: yout[7]): rotode/dynamic.pxd rk3_step's operations
template <int T, bool Diag, bool Gain, class V>
ROTODE_INLINE void rk3_lanes(const RigidLanes<V>& p, double h, const V* y, V* yout) {
    V k1[7], k2[7], k3[7], z[7];
    rigid_rhs<T, Diag, Gain>(p, y, k1);
    for (int i = 0; i < 7; ++i) z[i] = y[i] + 0.5 * h * k1[i];
    rigid_rhs<T, Diag, Gain>(p, z, k2);
    for (int i = 0; i < 7; ++i) z[i] = y[i] + h * (2.0 * k2[i] - k1[i]);
    rigid_rhs<T, Diag, Gain>(p, z, k3);
    for (int i = 0; i < 7; ++i) yout[i] = y[i] + h * (k1[i] + 4.0 * k2[i] + k3[i]) / 6.0;
}

// The classical fourth-order method from y (OUT: yout[7]): rotode/dynamic.pxd rk4_step's
template <int T, bool Diag, bool Gain, class V>
ROTODE_INLINE void rk4_lanes(const RigidLanes<V>& p, double h, const V* y, V* yout) {
    V k1[7], k2[7], k3[7], k4[7], z[7];
    rigid_rhs<T, Diag, Gain>(p, y, k1);
    for (int i = 0; i < 7; ++i) z[i] = y[i] + 0.5 * h * k1[i];
    rigid_rhs<T, Diag, Gain>(p, z, k2);
    for (int i = 0; i < 7; ++i) z[i] = y[i] + 0.5 * h * k2[i];
    rigid_rhs<T, Diag, Gain>(p, z, k3);
    for (int i = 0; i < 7; ++i) z[i] = y[i] + h * k3[i];
    rigid_rhs<T, Diag, Gain>(p, z, k4);
    for (int i = 0; i < 7; ++i)
        yout[i] = y[i] + h * (k1[i] + 2.0 * (k2[i] + k3[i]) + k4[i]) / 6.0;
}

// q <- q / |q| (dynamic.pyx `_step` with `normalize`: z * (1 / sqrt(|q|^2)))
template <class V>
ROTODE_INLINE void normalize_lanes(V* z) {
    const V n2 = z[0] * z[0] + z[1] * z[1] + z[2] * z[2] + z[3] * z[3];
    V r = n2;
    for (int l = 0; l < width<V>; ++l) set(r, l, std::sqrt(get(n2, l)));
    const V s = 1.0 / r;
    for (int i = 0; i < 4; ++i) z[i] = z[i] * s;
}

template <class V>
ROTODE_INLINE void nan_rows(const BlockRun* b, int l, std::ptrdiff_t slot) {
    for (; slot < b->m; ++slot) {
        for (int c = 0; c < 7; ++c) b->yo[(l * b->m + slot) * 7 + c] = NAN;
        for (int c = 0; c < 3; ++c) b->wo[(l * b->m + slot) * 3 + c] = NAN;
    }
}

// lane l's state is finite (the driver's check after a chunk of steps: z - z == 0)
template <class V>
ROTODE_INLINE bool finite_lane(const V* z, int l) {
    bool ok = true;
    for (int c = 0; c < 7; ++c) ok = ok && (get(z[c], l) - get(z[c], l) == 0.0);
    return ok;
}

// Lane l fails with `status` between grid steps j and last (the driver's `_body`: failed = j,
// counts[0] = last, NaN rows from `slot` on).
template <class V>
ROTODE_INLINE void fail_lane(const BlockRun* b, int l, int status, std::ptrdiff_t j,
                             std::ptrdiff_t last, std::ptrdiff_t slot) {
    b->status[l] = status;
    b->failed[l] = j;
    b->counts[3 * l] = last;
    nan_rows<V>(b, l, slot);
}

// The whole fixed-grid run of a block of b->nb <= L bodies of one class (torque kind T, inertia
// shape Diag, Gain, gyroscopic) with kernel K, as the driver's `_body` runs one body: chunks of
// steps up to the next output slot or the thread's next tick, the non-finite check after each
// chunk, the rows at t[save], NaN from a failure on, the same status codes and step indices.
template <int L, int K, int T, bool Diag, bool Gain>
ROTODE_INLINE void block_run(const RigidParams* p, bool shared, bool normalize, BlockRun* b) {
    using V = Lanes<L>;
    RigidLanes<V> P;
    V z[7], zn[7];
    bool alive[L];
    const std::ptrdiff_t nb = b->nb, n = b->n, m = b->m;
    std::ptrdiff_t j = 0, slot = 0;
    gather_params<V>(p, shared, nb, &P);
    for (int l = 0; l < L; ++l) {
        const double* y0 = b->y0 + 7 * (l < nb ? l : nb - 1);
        for (int c = 0; c < 7; ++c) set(z[c], l, y0[c]);
        alive[l] = l < nb;
        if (l < nb) {
            b->status[l] = ENGINE_OK;
            b->failed[l] = -1;
            b->counts[3 * l] = n;
        }
    }
    if (m > 0 && b->save[0] == 0) {         // the row at t0 is y0 itself (Stepper.y0_row)
        for (int l = 0; l < nb; ++l) {
            for (int c = 0; c < 7; ++c) b->yo[l * m * 7 + c] = b->y0[7 * l + c];
            for (int c = 0; c < 3; ++c) b->wo[l * m * 3 + c] = b->y0[7 * l + 4 + c];
        }
        slot = 1;
    }
    int live = int(nb);
    while (j < n && live > 0) {
        std::ptrdiff_t jend = slot < m ? b->save[slot] : n;
        if (jend - j > *b->countdown) jend = j + *b->countdown;
        for (std::ptrdiff_t jj = j; jj < jend; ++jj) {
            const double h = b->t[jj + 1] - b->t[jj];
            if constexpr (K == LANES_RK4) rk4_lanes<T, Diag, Gain>(P, h, z, zn);
            else rk3_lanes<T, Diag, Gain>(P, h, z, zn);
            for (int c = 0; c < 7; ++c) z[c] = zn[c];
            if (normalize) normalize_lanes(z);
        }
        *b->countdown -= int(jend - j);
        for (int l = 0; l < nb; ++l) {
            if (alive[l] && !finite_lane(z, l)) {   // somewhere in steps j .. jend - 1
                fail_lane<V>(b, l, ENGINE_NONFINITE, j, jend, slot);
                alive[l] = false;
                --live;
            }
        }
        j = jend;
        if (live > 0 && *b->countdown <= 0 && b->tick(b->tick_ctx)) {
            for (int l = 0; l < nb; ++l)
                if (alive[l]) fail_lane<V>(b, l, ENGINE_INTERRUPTED, j, j, slot);
            return;
        }
        if (slot < m && b->save[slot] == j) {
            for (int l = 0; l < nb; ++l) {
                if (!alive[l]) continue;
                for (int c = 0; c < 7; ++c) b->yo[(l * m + slot) * 7 + c] = get(z[c], l);
                for (int c = 0; c < 3; ++c) b->wo[(l * m + slot) * 3 + c] = get(z[4 + c], l);
            }
            ++slot;
        }
    }
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

inline RigidClass rigid_class(const RigidParams* p) {
    return {p->torque, rigid_diagonal(p), p->gain != 0.0, p->gyroscopic != 0};
}

// One function per instruction set and instantiation of `block_run`, compiled for that
// target (every function it calls is inlined into it); `noinline`: apart from the baseline
// code that chooses it.
#define ROTODE_LANE_ENTRY(name, attrs, L)                                                    \
    template <int K, int T, bool Diag, bool Gain>                                            \
    attrs __attribute__((noinline)) void name(const RigidParams* p, bool shared,             \
                                              bool normalize, BlockRun* b) {                 \
        block_run<L, K, T, Diag, Gain>(p, shared, normalize, b);                             \
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
template <int K, int T, bool Diag, bool Gain>
inline void block_isa(int isa, const RigidParams* p, bool shared, bool normalize, BlockRun* b) {
    switch (isa) {
        case ISA_SSE2: return run_sse2<K, T, Diag, Gain>(p, shared, normalize, b);
#ifdef ROTODE_LANES_X86
        case ISA_AVX2: return run_avx2<K, T, Diag, Gain>(p, shared, normalize, b);
        case ISA_AVX512: return run_avx512<K, T, Diag, Gain>(p, shared, normalize, b);
#endif
        default: return run_scalar<K, T, Diag, Gain>(p, shared, normalize, b);
    }
}

template <int K, int T, bool Diag>
inline void block_gain(int isa, const RigidClass& c, const RigidParams* p, bool shared,
                       bool normalize, BlockRun* b) {
    if (c.gain) block_isa<K, T, Diag, true>(isa, p, shared, normalize, b);
    else block_isa<K, T, Diag, false>(isa, p, shared, normalize, b);
}

template <int K, int T>
inline void block_diag(int isa, const RigidClass& c, const RigidParams* p, bool shared,
                       bool normalize, BlockRun* b) {
    if (c.diag) block_gain<K, T, true>(isa, c, p, shared, normalize, b);
    else block_gain<K, T, false>(isa, c, p, shared, normalize, b);
}

template <int K>
inline void block_torque(int isa, const RigidClass& c, const RigidParams* p, bool shared,
                         bool normalize, BlockRun* b) {
    switch (c.torque) {
        case TORQUE_NONE: return block_diag<K, TORQUE_NONE>(isa, c, p, shared, normalize, b);
        case TORQUE_GRAVITY:
            return block_diag<K, TORQUE_GRAVITY>(isa, c, p, shared, normalize, b);
        case TORQUE_GRAVITY_AXIS:
            return block_diag<K, TORQUE_GRAVITY_AXIS>(isa, c, p, shared, normalize, b);
        case TORQUE_BODY: return block_diag<K, TORQUE_BODY>(isa, c, p, shared, normalize, b);
        default: return block_diag<K, TORQUE_WORLD>(isa, c, p, shared, normalize, b);
    }
}

inline void block_any(int isa, int kernel, const RigidClass& c, const RigidParams* p,
                      bool shared, bool normalize, BlockRun* b) {
    if (kernel == LANES_RK4) block_torque<LANES_RK4>(isa, c, p, shared, normalize, b);
    else block_torque<LANES_RK3>(isa, c, p, shared, normalize, b);
}

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
// every body when `shared`) with `kernel` (a LaneKernel), on the instruction set `isa` (which
// the caller checked with `lanes_supported`).  A block whose bodies share one class and fill
// more than half of its lanes runs in the lanes of `isa`; any other block runs each body on
// its own (the scalar instance: the same bits).  Returns the lanes the block ran in (1: one
// body at a time).
inline int lanes_block(int isa, int kernel, const RigidParams* p, bool shared, bool normalize,
                       BlockRun* b) {
    using namespace lanes;
    const lanes::RigidClass c = rigid_class(p);
    bool same = true;
    for (std::ptrdiff_t l = 1; l < b->nb && !shared; ++l) same = same && rigid_class(p + l) == c;
    const int L = lanes_width(isa);
    if (same && L > 1 && 2 * b->nb > L) {
        block_any(isa, kernel, c, p, shared, normalize, b);
        return L;
    }
    for (std::ptrdiff_t l = 0; l < b->nb; ++l) {
        BlockRun one = *b;
        one.nb = 1;
        one.y0 = b->y0 + 7 * l;
        one.yo = b->yo + 7 * b->m * l;
        one.wo = b->wo + 3 * b->m * l;
        one.status = b->status + l;
        one.failed = b->failed + l;
        one.counts = b->counts + 3 * l;
        const RigidParams* pl = p + (shared ? 0 : l);
        block_any(ISA_SCALAR, kernel, rigid_class(pl), pl, true, normalize, &one);
    }
    return 1;
}

}  // namespace rotode

#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif
