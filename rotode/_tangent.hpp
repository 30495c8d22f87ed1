// The state and its tangent in one error-controlled run of the specialised engine (issue 30,
// docs/sensitivity.md): `erk_tangent_body<P>(g, run, sens)` is `erk_body<P>` of
// rotode/_engine.hpp on the model g with the state carried as dual numbers (rotode/_dual.hpp;
// the loop's model `TangentModel`: one loop for both), whose d parts
// are the derivative of the state with respect to up to ROTODE_DUAL_N directions of the initial
// state.  Forward mode through the discrete map (internal differentiation: Bock 1981; Hairer,
// Norsett & Wanner I, 2nd ed., sec. II.6): every stage, the dense output and the store act on
// duals, so the d parts are the tangent Y carried by the same stages (Y' = J(t, y) Y).
//
// The steps are the primal run's: the value part of every dual operation is the double
// operation on the value parts, to the bit, so the stage values, the error estimate (computed
// on the value parts alone, with the engine's own `error_norm`) and hence the accepted steps
// and the stored rows are the plain run's bits (tests/test_sensitivity.py compares them).  The
// sensitivities do not enter the error norm.  A rejected trial step costs its dual stages too
// (few at the tolerances where sensitivities are asked for).
//
// The rigid body on duals is `rigid_rhs<T, Diag, Gain>` of rotode/_models.hpp with V = dual
// (one source with the double model: its value part is that model's f, bit for bit), its torque
// kind, inertia shape and gain chosen at run time (`DualRigid`), and the loop is compiled once
// per pair and instruction set (`ROTODE_TANGENT_ENTRY`): the dual arithmetic is vector code
// (rotode/_dual.hpp), one AVX-512 register per dual (`dual`) on the machines that have it, two
// AVX2 registers (`dual2`) or four 2-vectors (`dual4`, the baseline) elsewhere.
#pragma once

#include <cmath>
#include <cstddef>
#include <utility>

#include "_dual.hpp"
#include "_engine.hpp"
#include "_lanes.hpp"
#include "_models.hpp"

namespace rotode {

// seeded directions of the rigid body's y0: [dtheta0 (3), dw0 (3)]
constexpr int TANGENT_DIRS = 6;

namespace tangent {

// The rigid body's seeded state: q0 and w0 with d part j < 3 the right perturbation
// dq = q0 (0, e_j / 2) and j >= 3 dw = e_(j - 3) (OUT: z[7])
template <class D>
ROTODE_INLINE void seed_rigid(const double* y0, D* z) {
    for (int k = 0; k < 7; ++k) z[k] = D(y0[k]);
    for (int j = 0; j < 3; ++j) {
        double v[3] = {0.0, 0.0, 0.0};
        v[j] = 0.5;
        // q0 (0, v)
        set_tangent(z[0], j, -y0[1] * v[0] - y0[2] * v[1] - y0[3] * v[2]);
        set_tangent(z[1], j, y0[0] * v[0] + y0[2] * v[2] - y0[3] * v[1]);
        set_tangent(z[2], j, y0[0] * v[1] - y0[1] * v[2] + y0[3] * v[0]);
        set_tangent(z[3], j, y0[0] * v[2] + y0[1] * v[1] - y0[2] * v[0]);
        set_tangent(z[4 + j], 3 + j, 1.0);
    }
}

// The tangent coordinates of a rigid body's dual state: dtheta = 2 vec(q^-1 dq) (q of any
// nonzero length: q^-1 = conj(q) / |q|^2), dw, of its first nc directions (OUT: out[6 * ld],
// row-major (component, direction), ld >= nc values per component)
template <class D>
ROTODE_INLINE void store_rigid(const D* z, double* out, int nc = TANGENT_DIRS,
                               int ld = TANGENT_DIRS) {
    const double q0 = value_of(z[0]), q1 = -value_of(z[1]), q2 = -value_of(z[2]),
                 q3 = -value_of(z[3]);
    const double n2 = q0 * q0 + q1 * q1 + q2 * q2 + q3 * q3;
    for (int j = 0; j < nc; ++j) {
        const double a0 = tangent_of(z[0], j), a1 = tangent_of(z[1], j),
                     a2 = tangent_of(z[2], j), a3 = tangent_of(z[3], j);
        // vec(conj(q) dq)
        const double u1 = q0 * a1 + q1 * a0 + q2 * a3 - q3 * a2;
        const double u2 = q0 * a2 - q1 * a3 + q2 * a0 + q3 * a1;
        const double u3 = q0 * a3 + q1 * a2 - q2 * a1 + q3 * a0;
        out[0 * ld + j] = 2.0 * u1 / n2;
        out[1 * ld + j] = 2.0 * u2 / n2;
        out[2 * ld + j] = 2.0 * u3 / n2;
        for (int k = 0; k < 3; ++k) out[(3 + k) * ld + j] = tangent_of(z[4 + k], j);
    }
}

inline void nan_rows(double* sens, std::ptrdiff_t from, std::ptrdiff_t to) {
    for (std::ptrdiff_t c = from * 36; c < to * 36; ++c) sens[c] = NAN;
}

}  // namespace tangent

// The rigid body's f on duals, the torque kind, inertia shape (`diag`) and norm gain of p (a
// RigidParams, or rotode/_tangent_fixed.hpp's parameters on duals) chosen at run time:
// `rigid_rhs` of rotode/_models.hpp on duals, each combination's (its value part is the double
// model's f, bit for bit) (OUT: dy[7]).
template <class P, class D>
ROTODE_INLINE void rigid_rhs_any(const P& p, bool diag, const D* y, D* dy) {
    const bool gain = p.gain != 0.0;
#define ROTODE_DUAL_RHS(T)                                                                 \
    if (diag) {                                                                            \
        if (gain) rigid_rhs<T, true, true>(p, y, dy);                                      \
        else rigid_rhs<T, true, false>(p, y, dy);                                          \
    } else {                                                                               \
        if (gain) rigid_rhs<T, false, true>(p, y, dy);                                     \
        else rigid_rhs<T, false, false>(p, y, dy);                                         \
    }                                                                                      \
    return;
    switch (p.torque) {
        case TORQUE_NONE: ROTODE_DUAL_RHS(TORQUE_NONE)
        case TORQUE_GRAVITY: ROTODE_DUAL_RHS(TORQUE_GRAVITY)
        case TORQUE_GRAVITY_AXIS: ROTODE_DUAL_RHS(TORQUE_GRAVITY_AXIS)
        case TORQUE_BODY: ROTODE_DUAL_RHS(TORQUE_BODY)
        // (TORQUE_CALL never comes here: rotode/dynamic.pyx `_engine_params(..., call=False)`)
        default: ROTODE_DUAL_RHS(TORQUE_WORLD)
    }
#undef ROTODE_DUAL_RHS
}

// The same at time t for a RigidParams, whose torque may also be TORQUE_GG (time-dependent:
// `rigid_rhs_at`) (OUT: dy[7])
template <class D>
ROTODE_INLINE void rigid_rhs_dual(const RigidParams& p, double t, const D* y, D* dy) {
    const bool diag = rigid_diagonal(&p);
    if (p.torque != TORQUE_GG) {
        rigid_rhs_any(p, diag, y, dy);
    } else if (diag) {
        if (p.gain != 0.0) rigid_rhs_at<TORQUE_GG, true, true>(p, t, y, dy);
        else rigid_rhs_at<TORQUE_GG, true, false>(p, t, y, dy);
    } else {
        if (p.gain != 0.0) rigid_rhs_at<TORQUE_GG, false, true>(p, t, y, dy);
        else rigid_rhs_at<TORQUE_GG, false, false>(p, t, y, dy);
    }
}

// The rows of a rigid body's tangent loop on the state [q, w] (RigidBodyModel's rows: they do
// not depend on the torque, inertia shape or gain) and its seeds (`tangent::seed_rigid`).
template <class D>
struct RigidRows {
    using value_type = D;
    static constexpr int n = 7;
    RigidParams p;

    inline void seed(const double* y0, D* z) const { tangent::seed_rigid(y0, z); }
    inline void first_row(double t, const double* y0, const D* z, double* y, double* w,
                          double* sens) const {
        double zv[7];
        for (int i = 0; i < 7; ++i) zv[i] = value_of(z[i]);
        RigidBodyModel<TORQUE_NONE, true, false>{p}.first_row(t, y0, zv, y, w);
        tangent::store_rigid(z, sens);
    }
    inline void store(double t, const D* z, double* y, double* w, double* sens) const {
        double zv[7];
        for (int i = 0; i < 7; ++i) zv[i] = value_of(z[i]);
        RigidBodyModel<TORQUE_NONE, true, false>{p}.store(t, zv, y, w);
        tangent::store_rigid(z, sens);
    }
    ROTODE_INLINE void accept(D*, D*) const {}
    ROTODE_INLINE const double* ref() const { return nullptr; }
    ROTODE_INLINE double max_angle() const { return 0.0; }
};

// A rigid body on duals for the tangent loop, f(t, y, dy) by the function `rhs` (one compiled
// per instruction set, below).
template <class D>
struct DualRigid : RigidRows<D> {
    void (*rhs)(const RigidParams&, double, const D*, D*);

    ROTODE_INLINE void operator()(double t, const D* y, D* dy) const {
        rhs(this->p, t, y, dy);
    }
};

// The same with the torque kind and inertia shape known at compile time (no gain): f inlined
// into every stage, the stage values kept in registers across it.
template <int T, bool Diag>
struct DualRigidFixed : RigidRows<dual> {
    ROTODE_INLINE void operator()(double t, const dual* y, dual* dy) const {
        rigid_rhs_at<T, Diag, false>(p, t, y, dy);
    }
};

// Euler's equations on duals at time t and orientation q for the torque kind and inertia shape
// of p, chosen at run time (rigid_torque_at, rigid_euler of rotode/_models.hpp) (OUT: dw[3])
template <class D>
ROTODE_INLINE void rigid_euler_dual(const RigidParams& p, double t, const D* q, const D* w,
                                    D* dw) {
    D tau[3];
    switch (p.torque) {
        case TORQUE_GG: rigid_torque_at<TORQUE_GG>(p, t, q, tau); break;
        case TORQUE_NONE: rigid_torque<TORQUE_NONE>(p, q, tau); break;
        case TORQUE_GRAVITY: rigid_torque<TORQUE_GRAVITY>(p, q, tau); break;
        case TORQUE_GRAVITY_AXIS: rigid_torque<TORQUE_GRAVITY_AXIS>(p, q, tau); break;
        case TORQUE_BODY: rigid_torque<TORQUE_BODY>(p, q, tau); break;
        // (TORQUE_CALL never comes here: rotode/dynamic.pyx `_engine_params(..., call=False)`)
        default: rigid_torque<TORQUE_WORLD>(p, q, tau);
    }
    if (rigid_diagonal(&p)) rigid_euler<true>(p, w, tau, dw);
    else rigid_euler<false>(p, w, tau, dw);
}

// f of RigidRkmkModel (rotode/_models.hpp) on duals at the base qb: v' = T(-v)^-1 w and Euler's
// equations at q = qb exp(v/2), the torque kind and inertia shape of p chosen at run time
// (OUT: dz[6]).  A torque-free body's Euler equations do not read q: its 4 dual components
// (a Hamilton product and an exponential of duals, a third of f) are not formed then.
template <class D>
ROTODE_INLINE void rigid_rkmk_dual(const RigidParams& p, double t, const D* qb, const D* z,
                                   D* dz) {
    D q[4];
    if (p.torque != TORQUE_NONE) quat_times_exp(qb, z, 1.0, q);
    rkmk_rate(z, z + 3, RKMK_FRAME_BODY, dz);
    rigid_euler_dual(p, t, q, z + 3, dz + 3);
}

// RigidRkmkModel of rotode/_models.hpp on duals (Runge-Kutta-Munthe-Kaas: the state [v, w], v
// the rotation vector of the step from the base qb), f by the function `f` (`rigid_rkmk_dual`,
// one per instruction set, its group algebra and Euler's equations compiled into it once rather
// than into each of the pair's stages): the same operations in the same order (its value parts
// are that model's bits).  The base qb is dual too, and carries the tangent of the orientation
// from step to step.  Seeds: v's (the right perturbation q0 exp(dtheta/2) is qb exp(v/2) at
// v = dtheta, to first order) and w's; qb's are zero.
template <class D>
struct DualRkmkRigid {
    using value_type = D;
    static constexpr int n = 6;
    RigidParams p;
    bool resume;
    void (*f)(const RigidParams&, double, const D*, const D*, D*);
    mutable D qb[4];

    ROTODE_INLINE void operator()(double t, const D* z, D* dz) const { f(p, t, qb, z, dz); }
    inline void seed(const double* y0, D* z) const {
        for (int i = 0; i < 4; ++i) qb[i] = D(y0[i]);
        rkmk_base(qb, resume);
        for (int i = 0; i < 6; ++i) z[i] = D(i < 3 ? 0.0 : y0[1 + i]);
        for (int j = 0; j < 6; ++j) set_tangent(z[j], j, 1.0);
    }
    // the state [q, w] of z on duals (OUT: x[7])
    ROTODE_INLINE void state(const D* z, D* x) const {
        quat_times_exp(qb, z, 1.0, x);
        for (int i = 0; i < 3; ++i) x[4 + i] = z[3 + i];
    }
    inline void first_row(double t, const double* y0, const D* z, double* y, double* w,
                          double* sens) const {
        D x[7];
        state(z, x);
        for (int i = 0; i < 7; ++i) y[i] = y0[i];       // y0 itself, as RigidRkmkModel's
        for (int i = 0; i < 3; ++i) w[i] = y0[4 + i];
        tangent::store_rigid(x, sens);
        (void)t;
    }
    inline void store(double, const D* z, double* y, double* w, double* sens) const {
        D x[7];
        state(z, x);
        for (int i = 0; i < 7; ++i) y[i] = value_of(x[i]);
        for (int i = 0; i < 3; ++i) w[i] = value_of(x[4 + i]);
        tangent::store_rigid(x, sens);
    }
    inline void accept(D* z, D* K0) const {
        rkmk_rebase(qb, z);
        for (int i = 0; i < 3; ++i) {
            z[i] = 0.0;
            K0[i] = z[3 + i];
        }
    }
    ROTODE_INLINE const double* ref() const { return RKMK_REF; }
    ROTODE_INLINE double max_angle() const { return rkmk_max_step_angle(); }
};

// A model on duals G as erk_body's model (rotode/_engine.hpp, `value_type` dual): its rows, and
// their 6x6 tangents at sens, sens + 36, ... in the order the loop stores them (the slots'
// order; NaN from the first slot the body did not reach).  G provides (rigid bodies:
// `RigidRows` below and its derived models)
//   static constexpr int n;                          the state's size (<= 7)
//   void operator()(double t, const dual* z, dual* dz) const;       f on duals
//   void seed(const double* y0, dual* z) const;      the seeded state (a Lie-group model also
//                                                     sets its base: a `mutable` member)
//   void first_row(double t, const double* y0, const dual* z, double* y, double* w,
//                  double* sens) const;              the row at t0 and its tangent
//   void store(double t, const dual* z, double* y, double* w, double* sens) const;
//   void accept(dual* z, dual* K0) const;            after each accepted step (erk_body's)
//   const double* ref() const;                       reference magnitudes, or nullptr
//   double max_angle() const;                        a Lie-group step's largest rotation, or 0
//                                                     (none)
template <class G>
struct TangentModel {
    using value_type = typename G::value_type;
    using D = value_type;
    static constexpr int n = G::n;
    static constexpr int k = 7;
    G g;
    double* sens;
    mutable double* next;       // the next row's tangent (the loop's copy advances it)

    ROTODE_INLINE void operator()(double t, const D* z, D* dz) const { g(t, z, dz); }
    inline void begin(const double* y0, D* z) const { g.seed(y0, z); }
    inline void first_row(double t, const double* y0, const D* z, double* y,
                          double* w) const {
        g.first_row(t, y0, z, y, w, next);
        next += 36;
    }
    inline void store(double t, const D* z, double* y, double* w) const {
        g.store(t, z, y, w, next);
        next += 36;
    }
    ROTODE_INLINE void accept(D* z, D* K0) const { g.accept(z, K0); }
    ROTODE_INLINE const double* ref() const { return g.ref(); }
    ROTODE_INLINE double max_angle() const { return g.max_angle(); }
    inline void unreached(std::ptrdiff_t slot, std::ptrdiff_t m) const {
        tangent::nan_rows(sens, slot, m);
    }
};

// One body of an error-controlled run of the pair P on a model on duals G, with its 6x6 y0
// sensitivity at every saved slot (OUT: sens[m * 36], row-major (slot, component, direction),
// NaN where the run did not reach): erk_body's loop itself, on `TangentModel`.
template <class P, class G>
ROTODE_INLINE int erk_tangent_body(const G& model, EngineRun* run, double* sens) {
    return erk_body<P>(TangentModel<G>{model, sens, sens}, run);
}

// The entries are `flatten`: erk_body (not inline itself) and everything it calls are compiled
// into each entry, with its instruction set (a call to erk_body would run the dual arithmetic
// on the baseline set: 2.8x the plain run -> 7.7x for dop853, measured).
// The loop is compiled per pair and instruction set with the rigid body's f on duals chosen at
// run time (`rigid_rhs_dual`, `rigid_rkmk_dual`: one per instruction set, called through a
// pointer; their variants inlined into every stage of every pair would multiply the object
// code); and, on AVX-512, the pairs on the state also per torque kind and inertia shape with f
// inlined (`DualRigidFixed`: ~1.4x faster per step than the call, whose arguments go through
// memory; bodies without a norm gain).  Each set computes on the dual type it keeps in
// registers (the last argument: a 64-byte vector has a register mode only with AVX-512); the
// results are the same bits on every set and either way (the same operations in every lane).
#define ROTODE_TANGENT_ENTRY(name, attrs, D)                                                   \
    attrs __attribute__((noinline)) static void name##_rhs(const RigidParams& p, double t,    \
                                                           const D* y, D* dy) {                \
        rigid_rhs_dual(p, t, y, dy);                                                           \
    }                                                                                          \
    attrs __attribute__((noinline)) static void name##_rkmk_f(                                 \
            const RigidParams& p, double t, const D* qb, const D* z, D* dz) {                 \
        rigid_rkmk_dual(p, t, qb, z, dz);                                                      \
    }                                                                                          \
    template <class P>                                                                         \
    attrs __attribute__((noinline, flatten)) int name(const RigidParams* p, EngineRun* run,   \
                                             double* sens) {                                   \
        return erk_tangent_body<P>(DualRigid<D>{{*p}, &name##_rhs}, run, sens);                \
    }                                                                                          \
    template <class P>                                                                         \
    attrs __attribute__((noinline, flatten)) int name##_rkmk(const RigidParams* p,           \
                                                             bool resume,                      \
                                                    EngineRun* run, double* sens) {            \
        return erk_tangent_body<P>(DualRkmkRigid<D>{*p, resume, &name##_rkmk_f, {}}, run,      \
                                   sens);                                                      \
    }

ROTODE_TANGENT_ENTRY(tangent_baseline, , dual4)
#if defined(__x86_64__) && defined(__GNUC__)
#define ROTODE_TANGENT_X86 1
ROTODE_TANGENT_ENTRY(tangent_avx2, __attribute__((target("avx2"))), dual2)
ROTODE_TANGENT_ENTRY(tangent_avx512, __attribute__((target("avx512f"))), dual)

template <class P, int T, bool Diag>
__attribute__((target("avx512f"), noinline, flatten)) int tangent_avx512_fixed(
        const RigidParams* p, EngineRun* run, double* sens) {
    return erk_tangent_body<P>(DualRigidFixed<T, Diag>{{*p}}, run, sens);
}

template <class P, bool Diag>
inline int tangent_avx512_torque(const RigidParams* p, EngineRun* run, double* sens) {
    switch (p->torque) {
        case TORQUE_NONE: return tangent_avx512_fixed<P, TORQUE_NONE, Diag>(p, run, sens);
        case TORQUE_GRAVITY: return tangent_avx512_fixed<P, TORQUE_GRAVITY, Diag>(p, run, sens);
        case TORQUE_GRAVITY_AXIS:
            return tangent_avx512_fixed<P, TORQUE_GRAVITY_AXIS, Diag>(p, run, sens);
        case TORQUE_BODY: return tangent_avx512_fixed<P, TORQUE_BODY, Diag>(p, run, sens);
        case TORQUE_GG: return tangent_avx512_fixed<P, TORQUE_GG, Diag>(p, run, sens);
        // (TORQUE_CALL never comes here: rotode/dynamic.pyx `_engine_params(..., call=False)`)
        default: return tangent_avx512_fixed<P, TORQUE_WORLD, Diag>(p, run, sens);
    }
}

template <class P>
inline int tangent_x86(int isa, const RigidParams* p, EngineRun* run, double* sens) {
    if (isa == ISA_AVX512 && p->gain == 0.0)
        return rigid_diagonal(p) ? tangent_avx512_torque<P, true>(p, run, sens)
                                 : tangent_avx512_torque<P, false>(p, run, sens);
    if (isa == ISA_AVX512) return tangent_avx512<P>(p, run, sens);
    if (isa == ISA_AVX2) return tangent_avx2<P>(p, run, sens);
    return tangent_baseline<P>(p, run, sens);
}

template <class P>
inline int tangent_x86_rkmk(int isa, const RigidParams* p, bool resume, EngineRun* run,
                            double* sens) {
    if (isa == ISA_AVX512) return tangent_avx512_rkmk<P>(p, resume, run, sens);
    if (isa == ISA_AVX2) return tangent_avx2_rkmk<P>(p, resume, run, sens);
    return tangent_baseline_rkmk<P>(p, resume, run, sens);
}
#endif
#undef ROTODE_TANGENT_ENTRY

// One body of an error-controlled rigid-body run with the pair `pair` (a PairId) on the state
// [q, w] (rkmk false), or of the Runge-Kutta-Munthe-Kaas method on that pair (rkmk true;
// resume: y0 is the row stored at the end of an accepted step of an earlier call), and its 6x6
// y0 sensitivity at the saved slots (OUT: sens[m * 36]), on the instruction set `isa` (a
// LaneIsa of rotode/_lanes.hpp that the CPU runs: ISA_AVX2, ISA_AVX512, or the baseline for
// the others); -1 for an unknown pair.
inline int rigid_tangent_body(int isa, int pair, bool rkmk, bool resume, const RigidParams* p,
                              EngineRun* run, double* sens) {
    return with_pair(pair, [&](auto pair_tag) {
        using P = decltype(pair_tag);
#if ROTODE_TANGENT_X86
        return rkmk ? tangent_x86_rkmk<P>(isa, p, resume, run, sens)
                    : tangent_x86<P>(isa, p, run, sens);
#else
        return rkmk ? tangent_baseline_rkmk<P>(p, resume, run, sens)
                    : tangent_baseline<P>(p, run, sens);
#endif
    });
}

}  // namespace rotode
