// The derivative of a rigid body's fixed-grid run (issue 30, docs/sensitivity.md): the steps of
// rk3, rk4 or ab3 on the grid t[0..n] taken again with the state and the body's parameters as
// dual numbers (rotode/_dual.hpp), whose d parts carry up to ROTODE_DUAL_N directions: of the
// initial state (tangent coordinates), of the inertia (principal moments or tensor components)
// or of a compiled torque's parameters (Constant's torque, Gravity's mass, g and centre of
// mass).  Forward mode through the discrete map (internal differentiation: Bock 1981; Hairer,
// Norsett & Wanner I, 2nd ed., sec. II.6), compiled instead of rotode/_tangent.pyx's replay,
// whose passes and results it reproduces to round-off (tests/test_sensitivity_fixed.py).
//
// One source with the runs themselves: the steps are rotode/_rk.hpp's `rk3_lanes` and
// `rk4_lanes`, rotode/_lanes.hpp's `ab3_lanes`, and the equations `rigid_rhs` of rotode/_models.hpp, each a
// template over the value type, here instantiated on duals whose parameters are duals too
// (`DualRigidParams`): the value part of every dual operation is the double operation, so the
// value parts are the plain run's bits (the L = 1 lane instance: the single body's path).
//
// The loop is compiled per kernel and instruction set with f through a pointer (one per set:
// the torque kind, inertia shape and gain chosen at run time) and, on AVX-512, per torque kind
// and inertia shape with f inlined (bodies without a norm gain), as rotode/_tangent.hpp's
// error-controlled loop is; the results are the same bits on every set.
#pragma once

#include <cmath>
#include <cstddef>

#include <type_traits>

#include "_dual.hpp"
#include "_engine.hpp"
#include "_lanes.hpp"
#include "_models.hpp"
#include "_tangent.hpp"

#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpsabi"      // vectors passed only to always-inline functions
#endif

namespace rotode {

// One pass's directions: the d parts seeded into the initial state [q, w] and the parameters
// (rotode/dynamic.pyx `_fixed_seeds` fills them; zero where a direction does not act).
struct TangentSeeds {
    int ncols;                          // directions in this pass (<= ROTODE_DUAL_N)
    int ld;                             // values per component of a slot's output (>= ncols)
    int torque;                         // the torque kind the pass evaluates (a TorqueKind)
    int diag;                           // I and I^-1 diagonal in value and in every direction
    double y0[7][ROTODE_DUAL_N];
    double I[9][ROTODE_DUAL_N];
    double Iinv[9][ROTODE_DUAL_N];
    double mg[ROTODE_DUAL_N];
    double com[3][ROTODE_DUAL_N];
    double tau[3][ROTODE_DUAL_N];
};

// RigidParams on duals (D: `dual`, or `dualp<H>` of rotode/_dual.hpp): the body's parameters
// with a pass's directions in their d parts.
template <class D>
struct DualRigidParamsT {
    D I[9], Iinv[9];
    double gain;
    int gyroscopic;
    int torque;
    bool diag;                          // I and I^-1 diagonal (TangentSeeds::diag)
    D mg;
    D com[3], tau[3];
};
typedef DualRigidParamsT<dual> DualRigidParams;

namespace tangent {

template <class D = dual>
ROTODE_INLINE D seeded(double v, const double* d) {
    D x(v);
    for (int j = 0; j < ROTODE_DUAL_N; ++j) set_tangent(x, j, d[j]);
    return x;
}

// x as the dual type D (the same value and tangents)
template <class D>
ROTODE_INLINE D as_dual(const dual& x) {
    if constexpr (std::is_same_v<D, dual>) return x;
    else return seeded<D>(x.v, x.d);
}

// p's parameters as the dual type D
template <class D>
inline DualRigidParamsT<D> params_as(const DualRigidParams& p) {
    DualRigidParamsT<D> q;
    for (int i = 0; i < 9; ++i) {
        q.I[i] = as_dual<D>(p.I[i]);
        q.Iinv[i] = as_dual<D>(p.Iinv[i]);
    }
    q.gain = p.gain;
    q.gyroscopic = p.gyroscopic;
    q.torque = p.torque;
    q.diag = p.diag;
    q.mg = as_dual<D>(p.mg);
    for (int i = 0; i < 3; ++i) {
        q.com[i] = as_dual<D>(p.com[i]);
        q.tau[i] = as_dual<D>(p.tau[i]);
    }
    return q;
}

inline DualRigidParams seed_params(const RigidParams& p, const TangentSeeds& s) {
    DualRigidParams q;
    for (int i = 0; i < 9; ++i) {
        q.I[i] = seeded(p.I[i], s.I[i]);
        q.Iinv[i] = seeded(p.Iinv[i], s.Iinv[i]);
    }
    q.gain = p.gain;
    q.gyroscopic = p.gyroscopic;
    q.torque = s.torque;
    q.diag = s.diag != 0;
    q.mg = seeded(p.mg, s.mg);
    for (int i = 0; i < 3; ++i) {
        q.com[i] = seeded(p.com[i], s.com[i]);
        q.tau[i] = seeded(p.tau[i], s.tau[i]);
    }
    return q;
}

// q <- q / |q| on duals: rotode/_lanes.hpp `normalize_lanes`' operations (the same value bits)
template <class D>
ROTODE_INLINE void normalize_dual(D* z) {
    const D n2 = z[0] * z[0] + z[1] * z[1] + z[2] * z[2] + z[3] * z[3];
    const D s = 1.0 / sqrt(n2);
    for (int i = 0; i < 4; ++i) z[i] = z[i] * s;
}

// The rigid body on dual parameters as a lane model of rotode/_lanes.hpp (autonomous: the
// node is not read), f by the function `f`.
template <class D>
struct FixedRigid {
    using value_type = D;
    static constexpr int n = 7;
    DualRigidParamsT<D> p;
    void (*f)(const DualRigidParamsT<D>&, const D*, D*);
    ROTODE_INLINE void rhs(int, const D* y, D* dy) const { f(p, y, dy); }
};

// The same with the torque kind and inertia shape known at compile time (no gain).
template <int T, bool Diag>
struct FixedRigidInline {
    using value_type = dual;
    static constexpr int n = 7;
    DualRigidParams p;
    ROTODE_INLINE void rhs(int, const dual* y, dual* dy) const {
        rigid_rhs<T, Diag, false>(p, y, dy);
    }
};

// The pass: the grid's steps from the seeded y0, the tangent coordinates of the state at the
// saved slots (OUT: sens[slot * 6 * ld + component * ld + direction], direction < ncols; NaN
// after an interruption, which returns ENGINE_INTERRUPTED).  K: a LaneKernel.
template <int K, class M>
ROTODE_INLINE int fixed_pass(const M& f, const TangentSeeds& s, bool normalize, EngineRun* run,
                             double* sens) {
    EngineRun& r = *run;
    using D = typename M::value_type;
    const int nc = s.ncols, ld = s.ld;
    D z[7], zn[7];
    lanes::Ab3History<D, 7> ab3;
    for (int k = 0; k < 7; ++k) z[k] = seeded<D>(r.y0[k], s.y0[k]);
    std::ptrdiff_t slot = 0;
    int st = ENGINE_OK;
    if (r.m > 0 && r.save[0] == 0) store_rigid(z, sens + 6 * ld * slot++, nc, ld);
    for (std::ptrdiff_t j = 0; j < r.n && slot < r.m; ++j) {
        if (--*r.countdown <= 0 && r.tick(r.tick_ctx)) {
            st = ENGINE_INTERRUPTED;
            break;
        }
        const double h = r.t[j + 1] - r.t[j];
        if constexpr (K == LANES_RK4) lanes::rk4_lanes(f, h, z, zn);
        else if constexpr (K == LANES_AB3) lanes::ab3_lanes(f, h, ab3, z, zn);
        else lanes::rk3_lanes(f, h, z, zn);
        for (int k = 0; k < 7; ++k) z[k] = zn[k];
        if (normalize) normalize_dual(z);
        if (r.save[slot] == j + 1) store_rigid(z, sens + 6 * ld * slot++, nc, ld);
    }
    for (; slot < r.m; ++slot)
        for (int c = 0; c < 6; ++c)
            for (int j = 0; j < nc; ++j) sens[(slot * 6 + c) * ld + j] = NAN;
    r.status = st;
    return st;
}

}  // namespace tangent

// The pass compiled per instruction set (`attrs`), every kernel, f through a pointer, on the
// dual type D that set keeps in registers (rotode/_dual.hpp `dualp`; the same bits on each).
#define ROTODE_FIXED_ENTRY(name, attrs, D)                                                    \
    attrs __attribute__((noinline)) static void name##_rhs(const DualRigidParamsT<D>& p,     \
                                                           const D* y, D* dy) {               \
        rigid_rhs_any(p, p.diag, y, dy);                                                      \
    }                                                                                         \
    template <int K>                                                                          \
    attrs __attribute__((noinline)) int name(const DualRigidParams* p, const TangentSeeds* s, \
                                             bool normalize, EngineRun* run, double* sens) {  \
        return tangent::fixed_pass<K>(                                                        \
            tangent::FixedRigid<D>{tangent::params_as<D>(*p), &name##_rhs}, *s, normalize,   \
            run, sens);                                                                       \
    }

ROTODE_FIXED_ENTRY(fixed_baseline, , dual4)
#if defined(__x86_64__) && defined(__GNUC__)
#define ROTODE_FIXED_X86 1
ROTODE_FIXED_ENTRY(fixed_avx2, __attribute__((target("avx2"))), dual2)
ROTODE_FIXED_ENTRY(fixed_avx512, __attribute__((target("avx512f"))), dual)

template <int K, int T, bool Diag>
__attribute__((target("avx512f"), noinline)) int fixed_avx512_inline(
        const DualRigidParams* p, const TangentSeeds* s, bool normalize, EngineRun* run,
        double* sens) {
    return tangent::fixed_pass<K>(tangent::FixedRigidInline<T, Diag>{*p}, *s, normalize, run,
                                  sens);
}

template <int K, bool Diag>
inline int fixed_avx512_torque(const DualRigidParams* p, const TangentSeeds* s, bool normalize,
                               EngineRun* run, double* sens) {
    switch (p->torque) {
        case TORQUE_NONE:
            return fixed_avx512_inline<K, TORQUE_NONE, Diag>(p, s, normalize, run, sens);
        case TORQUE_GRAVITY:
            return fixed_avx512_inline<K, TORQUE_GRAVITY, Diag>(p, s, normalize, run, sens);
        case TORQUE_GRAVITY_AXIS:
            return fixed_avx512_inline<K, TORQUE_GRAVITY_AXIS, Diag>(p, s, normalize, run,
                                                                    sens);
        case TORQUE_BODY:
            return fixed_avx512_inline<K, TORQUE_BODY, Diag>(p, s, normalize, run, sens);
        // (TORQUE_CALL never comes here: rotode/dynamic.pyx `_engine_params(..., call=False)`)
        default: return fixed_avx512_inline<K, TORQUE_WORLD, Diag>(p, s, normalize, run, sens);
    }
}
#endif
#undef ROTODE_FIXED_ENTRY

template <int K>
inline int fixed_isa(int isa, const DualRigidParams* p, const TangentSeeds* s, bool normalize,
                     EngineRun* run, double* sens) {
#if ROTODE_FIXED_X86
    if (isa == ISA_AVX512 && p->gain == 0.0)
        return p->diag ? fixed_avx512_torque<K, true>(p, s, normalize, run, sens)
                       : fixed_avx512_torque<K, false>(p, s, normalize, run, sens);
    if (isa == ISA_AVX512) return fixed_avx512<K>(p, s, normalize, run, sens);
    if (isa == ISA_AVX2) return fixed_avx2<K>(p, s, normalize, run, sens);
#endif
    (void)isa;
    return fixed_baseline<K>(p, s, normalize, run, sens);
}

// One pass of a rigid body's fixed-grid run with `kernel` (LANES_RK3, LANES_RK4 or LANES_AB3)
// on the grid run->t[0..n] from run->y0, the body's parameters p with the directions of `s`:
// the tangent coordinates at the slots run->save[0..m-1] (OUT: sens[m * 6 * s->ld], (slot,
// component, direction), the first s->ncols directions of each), the dual arithmetic on the instruction set `isa` (a LaneIsa the CPU
// runs; the same bits on each).  Polls run->tick every *run->countdown steps; returns
// ENGINE_OK, or ENGINE_INTERRUPTED (the rest NaN).
inline int rigid_fixed_tangent(int isa, int kernel, const RigidParams* p, const TangentSeeds* s,
                               bool normalize, EngineRun* run, double* sens) {
    const DualRigidParams q = tangent::seed_params(*p, *s);
    if (kernel == LANES_RK4) return fixed_isa<LANES_RK4>(isa, &q, s, normalize, run, sens);
    if (kernel == LANES_AB3) return fixed_isa<LANES_AB3>(isa, &q, s, normalize, run, sens);
    return fixed_isa<LANES_RK3>(isa, &q, s, normalize, run, sens);
}

}  // namespace rotode

#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif
