// The specialised loop of rotode's error-controlled embedded pairs: one body, one pair, one
// model, all known at compile time (docs/architecture.md, "The specialised engine"); a model's
// state size may be known at run time only (a user's equations, rotode/_ode_model.hpp), its
// arrays then sized by a compile-time cap.
//
// `erk_body<P, M>(model, run)` integrates y' = f(t, y) of the model `M` with the pair `P` (a
// struct of rotode/_tableaux.hpp, generated from the registry) over one body's span, writing the
// rows the run asks for.  It does what the driver's `_body_adaptive` (rotode/_driver_control.pxi)
// does for a pair on the state, to the same arithmetic, with the tableau as compile-time
// constants (every stage sum unrolled over its nonzero coefficients) and the model's equations
// inlined into the stages instead of a call through a function pointer and a virtual torque call
// per evaluation.  Events are located by the driver's own code on each accepted step, through
// the run's `on_step` hook (a terminal one ends the body there); what it does not do (step
// records, sample-time stops) stays with the driver; rotode/dynamic.pyx, kinematic.pyx and
// ode.pyx choose.
// A model's f may fail (return a nonzero status, as a user's function may): the body then
// stops where the driver's loop stops, with that status.
//
// Formulas: Hairer, Norsett & Wanner, "Solving Ordinary Differential Equations I" (2nd ed.,
// 1993), sec. II.4 (error norm, initial step, the controller as SciPy's `_ivp.rk`: safety 0.9,
// factors 0.2..10, no increase right after a rejection), II.5 (DOPRI5 and its dense output),
// II.10 (DOP853, its 8(5,3) estimate and its extra-stage interpolant).
//
// Bits: every sum adds the products of the nonzero coefficients in stage order, the first one
// standing alone; the driver's loops add the same products, plus the exact zeros of the
// tableau, to an accumulator that starts at +0.0.  With -ffp-contract=off (setup.py) the two
// agree to the last bit except for the sign of an exact zero (a sum whose every product is 0),
// which no later operation of the step turns into a different nonzero value.
#pragma once

#include <cmath>
#include <cstddef>
#include <type_traits>
#include <utility>

// the stage functions and the model's equations are inlined into the loop whatever the compiler's
// size heuristics say (an out-of-line f costs ~20 % of a DOP853 step on the rigid body)
#if defined(__GNUC__) || defined(__clang__)
#define ROTODE_INLINE inline __attribute__((always_inline))
#else
#define ROTODE_INLINE inline
#endif

namespace rotode {

// f(std::true_type{}) or f(std::false_type{}) as b is true or false: a run-time flag to the
// compile-time one that f reads as `decltype(tag)::value` (the dispatch of flags to the
// instantiations of a template)
template <class F> ROTODE_INLINE decltype(auto) with_bool(bool b, F&& f) {
    if (b) return f(std::true_type{});
    return f(std::false_type{});
}

// status codes: rotode/_driver.pxd's (a model's f may also return any nonzero status of the
// driver, e.g. -2 STATUS_UNAVAILABLE, which stops the body with that status)
enum EngineStatus {
    ENGINE_OK = 0,
    ENGINE_TERMINATED = 1,
    ENGINE_NONFINITE = 2,
    ENGINE_INTERRUPTED = -3,
    ENGINE_TOO_MANY_SUBSTEPS = -6,
    ENGINE_ROTATION_BOUND = -7,
    ENGINE_STEP_TOO_SMALL = -8,
    ENGINE_MAX_STEPS = -9,
};

// An accepted step as a loop hands it to its run's `on_step` hook (the driver's events,
// rotode/_driver_loop.pxi `_engine_events`): the step t -> t_new from z to znew, its stages and
// its interpolant's storage, which the hook may fill (the driver's own dense output, the same
// arithmetic), and where a terminal event ends the body.
struct EngineStep {
    double t, t_new, h;
    const double* z;         // the state at t (the model's coordinates)
    const double* znew;      // and at t_new
    double* K;               // the stages, kstride apart: K[0] = f(t, z) .. K[s] = f(t_new, znew),
    std::ptrdiff_t kstride;  // with room for the interpolant's extra stages
    double* F;               // the interpolant's coefficients (7 rows of the state size)
    bool prepared;           // OUT: F holds this step's interpolant
    long long nfev;          // OUT: evaluations of f the hook made (its interpolant's stages)
    long long stores;        // OUT: rows with w the hook's model wrote (kinematics: one w(t) each)
    double t_stop;           // OUT, with ENGINE_TERMINATED: where the body ends, in (t, t_new]
};

// One body's run: what it reads, what it writes, and its counters (by pointer, one struct).
struct EngineRun {
    // the output grid: t[0] = t0, t[n] = tf; rows at t[save[0..m-1]]
    const double* t;
    std::ptrdiff_t n;
    const std::ptrdiff_t* save;
    std::ptrdiff_t m;
    const double* y0;        // the body's initial row (k values)
    double* yo;              // OUT: m rows of k
    double* wo;              // OUT: m rows of 3 (body angular velocity)
    // error control (HNW sec. II.4; rotode._validation.as_control)
    double rtol;
    const double* atol;      // one per state component
    double first_step;       // 0: chosen by `initial_step`
    double max_step;
    long long max_steps;
    bool t_eval;             // the rows are the caller's t_eval (SciPy's nfev accounting)
    // interrupt polling: every *countdown-th step, tick(tick_ctx) != 0 stops the body
    int* countdown;
    int (*tick)(void*);
    void* tick_ctx;
    // NULL, or called after each accepted step before its rows (`erk_body` alone; the lanes
    // and the other loops are not given one): ENGINE_OK, ENGINE_TERMINATED (the body ends at
    // its t_stop) or a failure status, which stops the body
    int (*on_step)(void*, EngineStep*);
    void* step_ctx;
    // OUT: counters, where the run ended and its status
    long long accepted, rejected, nfev;
    long long stores;        // rows written by the model's store/first_row (kinematics: each
                             // evaluates w(t) once more, counted by the runner)
    long long hook_stores;   // rows with w the hook wrote (kinematics: counted as `stores`)
    double t_end;
    int status;
};

// A block of bodies' whole run on a fixed grid (the lane kernels, rotode/_lanes.hpp): what it
// reads and writes, by pointer, for nb bodies whose rows and counters are consecutive.
struct BlockRun {
    const double* t;         // the grid: n + 1 times; rows at t[save[0..m-1]]
    std::ptrdiff_t n;
    const std::ptrdiff_t* save;
    std::ptrdiff_t m;
    std::ptrdiff_t nb;       // bodies in the block
    const double* y0;        // nb initial rows of 7
    double* yo;              // OUT: nb x m rows of 7
    double* wo;              // OUT: nb x m rows of 3 (body angular velocity)
    // OUT, per body: status, the grid step a failure was found after (-1: none) and counts[3 l],
    // the step it was found by (the driver's fixed-grid `last`: the steps taken)
    int* status;
    std::ptrdiff_t* failed;
    long long* counts;
    // interrupt polling: after every *countdown steps, tick(tick_ctx) != 0 stops the block
    int* countdown;
    int (*tick)(void*);
    void* tick_ctx;
    // OUT, per body, NULL when unused (kinematics' magnus_ca): the sub-steps taken and the
    // rotation angle of the step that failed
    std::ptrdiff_t* nsub;
    double* angle;
};

namespace engine {

constexpr double SAFETY = 0.9, MIN_FACTOR = 0.2, MAX_FACTOR = 10.0;

// Before a step's first trial (SciPy's `RungeKutta._step_impl`): the smallest step at t,
// 10 ulp(t) towards the end, with h_abs clipped into [min_step, max_step]; returns min_step
ROTODE_INLINE double clip_step(double t, double direction, double max_step, double& h_abs) {
    const double min_step = 10.0 * std::fabs(std::nextafter(t, direction * INFINITY) - t);
    if (h_abs > max_step) h_abs = max_step;
    else if (h_abs < min_step) h_abs = min_step;
    return min_step;
}

// A trial's end from t: t_new = t + h_abs direction, not past tf; h = t_new - t, h_abs = |h|
ROTODE_INLINE void trial_end(double t, double tf, double direction, double& h_abs,
                             double& t_new, double& h) {
    t_new = t + h_abs * direction;
    if (direction * (t_new - tf) > 0.0) t_new = tf;
    h = t_new - t;
    h_abs = std::fabs(h);
}

// The controller's decision on a trial step of scaled error norm `err` (the driver's
// rotode/_driver_control.pxi, SciPy's `RungeKutta._step_impl`; Hairer, Norsett & Wanner I,
// sec. II.4): true, accepted, with h_abs the next step's proposal; false, rejected (++rejected,
// retried), with h_abs the retry's.  After a rejection in the same step (`retried`) the step
// does not grow.  max_angle > 0 (a Lie-group model, the driver's `Stepper.max_angle`): a trial
// turning by `angle` more than that is rejected, and the next step's growth is capped by it (a
// rate the estimate finds exact); 0: no bound.  Every loop (one body, lanes, duals) decides here.
template <class Count>
ROTODE_INLINE bool decide_step(double err, double exponent, double angle, double max_angle,
                               double& h_abs, bool& retried, Count& rejected) {
    if (max_angle > 0.0 && angle > max_angle) {     // too far for the step's coordinates
        h_abs = h_abs * std::fmax(MIN_FACTOR, SAFETY * max_angle / angle);
        retried = true;
        ++rejected;
        return false;
    }
    if (err < 1.0) {
        double factor = err == 0.0
            ? MAX_FACTOR : std::fmin(MAX_FACTOR, SAFETY * std::pow(err, exponent));
        if (retried) factor = std::fmin(1.0, factor);
        if (max_angle > 0.0 && angle * factor > max_angle) factor = max_angle / angle;
        h_abs = h_abs * factor;
        return true;
    }
    h_abs = h_abs * std::fmax(MIN_FACTOR, SAFETY * std::pow(err, exponent));
    retried = true;
    ++rejected;
    return false;
}

// A model's sizes.  A model of a compile-time size gives `n` and `k` (static constexpr): its
// sizes are std::integral_constant values, so that every loop over the state has a
// compile-time trip count wherever it is compiled.  A model whose size is known at run time
// (a user's equations) gives `cap` (static constexpr, the arrays' size) and `size()` and
// `width()` (the state size <= cap and the output row's width).
template <class M, class = void>
struct Sizes {
    static constexpr int cap = M::n;
    static constexpr std::integral_constant<int, M::n> n(const M&) { return {}; }
    static constexpr std::integral_constant<int, M::k> k(const M&) { return {}; }
};
template <class M>
struct Sizes<M, std::void_t<decltype(std::declval<const M&>().size())>> {
    static constexpr int cap = M::cap;
    static int n(const M& f) { return f.size(); }
    static int k(const M& f) { return f.width(); }
};

// f(t, y) into dy: its status (a model's f returning void cannot fail: 0, known at compile
// time, so the checks of its status compile to nothing)
template <class M, class V>
ROTODE_INLINE int eval(const M& f, double t, const V* y, V* dy) {
    if constexpr (std::is_void_v<decltype(f(t, y, dy))>) {
        f(t, y, dy);
        return 0;
    } else {
        return f(t, y, dy);
    }
}

// after an accepted step, the model's `accept(z, K0)` (a projection of the state, the FSAL
// stage K0 of the next step beside it), when it has one
template <class M, class V = double, class = void>
struct HasAccept : std::false_type {};
template <class M, class V>
struct HasAccept<M, V, std::void_t<decltype(std::declval<const M&>().accept(
                           std::declval<V*>(), std::declval<V*>()))>> : std::true_type {};

// The value type of a model's state: double, or the model's `value_type` (rotode/_tangent.hpp:
// dual numbers, whose value parts are the double model's bits and decide the steps)
template <class M, class = void>
struct ValueType {
    using type = double;
};
template <class M>
struct ValueType<M, std::void_t<typename M::value_type>> {
    using type = typename M::value_type;
};

template <class M, class = void>
struct HasUnreached : std::false_type {};
template <class M>
struct HasUnreached<M, std::void_t<decltype(std::declval<const M&>().unreached(
                           std::ptrdiff_t(0), std::ptrdiff_t(0)))>> : std::true_type {};

ROTODE_INLINE double value_of(double x) { return x; }

// the value parts of x[0..N-1] (OUT: out)
template <class V, class Nt>
ROTODE_INLINE void values(const V* x, double* out, Nt N) {
    for (int k = 0; k < N; ++k) out[k] = value_of(x[k]);
}

// the model's reference magnitudes `ref()` (a pointer to n values), when it has them: component k
// is then scaled by atol_k + rtol max(|y_k|, |ynew_k|, ref_k), as the driver's erk_error_norm
// with `ERKTol.ref` (a Lie-group state's rotation vector, whose size says nothing of the error
// an absolute rtol allows); nullptr otherwise (max(|y_k|, |ynew_k|), no extra operation)
template <class M, class = void>
struct HasRef : std::false_type {};
template <class M>
struct HasRef<M, std::void_t<decltype(std::declval<const M&>().ref())>> : std::true_type {};
template <class M>
ROTODE_INLINE const double* model_ref(const M& f) {
    if constexpr (HasRef<M>::value) return f.ref();
    else return nullptr;
}

// the model's largest rotation of one step, `max_angle()` (a Lie-group model's local
// coordinates, the first three state components a rotation vector), when it has one
template <class M, class = void>
struct HasMaxAngle : std::false_type {};
template <class M>
struct HasMaxAngle<M, std::void_t<decltype(std::declval<const M&>().max_angle())>>
    : std::true_type {};

// the rotation of a Lie-group model's trial step that `max_angle()` bounds: the model's own
// `step_angle(z)` (a state with several rotation vectors: the largest), else |z[0:3]|
template <class M, class = void>
struct HasStepAngle : std::false_type {};
template <class M>
struct HasStepAngle<M, std::void_t<decltype(std::declval<const M&>().step_angle(
    static_cast<const double*>(nullptr)))>> : std::true_type {};
template <class M>
ROTODE_INLINE double step_angle(const M& f, const double* z) {
    if constexpr (HasStepAngle<M>::value) return f.step_angle(z);
    else return std::sqrt(z[0] * z[0] + z[1] * z[1] + z[2] * z[2]);
}

// sum_j W(j) K[j][k] over the compile-time stage indices J... with a nonzero weight, in order
// (0.0 when every weight is zero)
// V: double, or a lane vector of doubles (rotode/_lanes_erk.hpp), each lane adding the same
// products in the same order
template <class W, class V, int N, int... J>
ROTODE_INLINE V wsum(const V (*K)[N], int k, std::integer_sequence<int, J...>) {
    V acc{};                                       // (+0.0 in every lane)
    bool first = true;
    ((W::at(J) != 0.0
          ? (first ? (void)(acc = W::at(J) * K[J][k], first = false)
                   : (void)(acc = acc + W::at(J) * K[J][k]))
          : (void)0),
     ...);
    return acc;
}

template <class P, int R> struct RowA {
    static constexpr double at(int j) { return P::a[R][j]; }
};
template <class P> struct RowB {
    static constexpr double at(int j) { return P::b[j]; }
};
template <class P> struct RowE {
    static constexpr double at(int j) { return P::e[j]; }
};
template <class P> struct RowE3 {
    static constexpr double at(int j) { return P::e3[j]; }
};
template <class P, int R> struct RowP {      // a standard pair's dense output, power R
    static constexpr double at(int j) { return P::dense[j][R]; }
};
template <class P, int R> struct RowD {      // DOP853's dense output, row 3 + R
    static constexpr double at(int j) { return P::dense[R][j]; }
};

// ys = y + h sum_{j<R} a_Rj K_j (stage R's argument)
template <class P, int N, int R, class Nt, class V>
ROTODE_INLINE void stage_state(const V (*K)[N], Nt n, double h, const V* y, V* ys) {
    for (int k = 0; k < n; ++k)
        ys[k] = y[k] + h * wsum<RowA<P, R>>(K, k, std::make_integer_sequence<int, R>{});
}

// stages 1..s-1; the stages with c = 1 are evaluated at t + h (the driver's t_end); the first
// nonzero status of f stops them (returned)
template <class P, class M, int C, class Nt, class V, int... R>
ROTODE_INLINE int step_stages(const M& f, Nt n, double t, double h, const V* y, V (*K)[C],
                              std::integer_sequence<int, R...>) {
    V ys[C];
    int st = 0;
    (void)((stage_state<P, C, R + 1>(K, n, h, y, ys),
            (st = eval(f, P::c[R + 1] == 1.0 ? t + h : t + P::c[R + 1] * h, ys, K[R + 1]))
                == 0)
           && ...);
    return st;
}

// atol + rtol max(|a|, |b|), or max(|a|, |b|, ref) with a reference magnitude (`model_ref`)
ROTODE_INLINE double tol_scale(double atol, double a, double b, double rtol, const double* ref,
                               int k) {
    const double m = std::fmax(std::fabs(a), std::fabs(b));
    return atol + (ref != nullptr ? std::fmax(m, ref[k]) : m) * rtol;
}

// the scaled RMS norm of the local error estimate (erk_error_norm of rotode/erk.pxd; ref: the
// model's reference magnitudes, `model_ref`)
template <class P, int C, class Nt>
ROTODE_INLINE double error_norm(const double (*K)[C], Nt N, const double* y, const double* ynew,
                                double h, double rtol, const double* atol,
                                const double* ref = nullptr) {
    constexpr auto all = std::make_integer_sequence<int, P::s + 1>{};
    double n5 = 0.0, n3 = 0.0;
    bool zero_scale = false;
    double e5s[C], e3s[C];
    for (int k = 0; k < N; ++k) {
        const double scale = tol_scale(atol[k], y[k], ynew[k], rtol, ref, k);
        e5s[k] = wsum<RowE<P>>(K, k, all);
        e3s[k] = P::kind == 1 ? wsum<RowE3<P>>(K, k, all) : 0.0;
        zero_scale = zero_scale || scale == 0.0;
        const double e5 = e5s[k] / scale, e3 = e3s[k] / scale;
        n5 = n5 + e5 * e5;
        n3 = n3 + e3 * e3;
    }
    if (zero_scale) {       // a component exactly 0 at both ends: its estimate must be too
        n5 = n3 = 0.0;
        for (int k = 0; k < N; ++k) {
            const double scale = tol_scale(atol[k], y[k], ynew[k], rtol, ref, k);
            if (scale == 0.0) {
                if (e5s[k] == 0.0 && e3s[k] == 0.0) continue;
                return INFINITY;
            }
            const double e5 = e5s[k] / scale, e3 = e3s[k] / scale;
            n5 = n5 + e5 * e5;
            n3 = n3 + e3 * e3;
        }
    }
    if (P::kind == 0) return std::fabs(h) * std::sqrt(n5 / N);
    if (n5 == 0.0 && n3 == 0.0) return 0.0;
    return std::fabs(h) * n5 / std::sqrt((n5 + 0.01 * n3) * N);
}

// the RMS of x / scale, a zero-scale component counted as 0
template <class Nt>
inline double rms(const double* x, const double* scale, Nt N) {
    double acc = 0.0;
    for (int k = 0; k < N; ++k)
        if (scale[k] != 0.0) acc = acc + (x[k] / scale[k]) * (x[k] / scale[k]);
    return std::sqrt(acc / N);
}

// HNW sec. II.4's first step, as SciPy's select_initial_step (erk_initial_step) (OUT: h; the
// status of its evaluation of f)
template <class P, class M>
inline int initial_step(const M& f, double t0, const double* y0, const double* f0,
                        double direction, double length, const EngineRun& r, double* h) {
    constexpr int C = Sizes<M>::cap;
    const auto N = Sizes<M>::n(f);
    double scale[C], y1[C], f1[C], diff[C];
    const double* ref = model_ref(f);
    for (int k = 0; k < N; ++k)
        scale[k] = r.atol[k] + (ref != nullptr ? std::fmax(std::fabs(y0[k]), ref[k])
                                               : std::fabs(y0[k])) * r.rtol;
    const double d0 = rms(y0, scale, N), d1 = rms(f0, scale, N);
    double h0 = (d0 < 1e-5 || d1 < 1e-5) ? 1e-6 : 0.01 * d0 / d1;
    h0 = std::fmin(h0, length);
    for (int k = 0; k < N; ++k) y1[k] = y0[k] + h0 * direction * f0[k];
    const int st = eval(f, t0 + h0 * direction, y1, f1);
    if (st != 0) return st;
    for (int k = 0; k < N; ++k) diff[k] = f1[k] - f0[k];
    const double d2 = rms(diff, scale, N) / h0;
    const double h1 = (d1 <= 1e-15 && d2 <= 1e-15)
        ? std::fmax(1e-6, h0 * 1e-3)
        : std::pow(0.01 / std::fmax(d1, d2), 1.0 / (P::error_order + 1));
    *h = std::fmin(std::fmin(100.0 * h0, h1), std::fmin(length, r.max_step));
    return 0;
}

// The interpolant of an accepted step t -> t + h (OUT: F, and DOP853's extra stages in K; the
// first nonzero status of f).
template <class P, class M, int C, class Nt, class V, int... R>
inline int dense_extra(const M& f, Nt n, double t, double h, const V* y, V (*K)[C],
                       std::integer_sequence<int, R...>) {
    V ys[C];
    int st = 0;
    (void)((stage_state<P, C, P::s + 1 + R>(K, n, h, y, ys),
            (st = eval(f, t + P::c[P::s + 1 + R] * h, ys, K[P::s + 1 + R])) == 0)
           && ...);
    return st;
}

template <class P, int C, class Nt, class V, int... R>
inline void dense_rows(const V (*K)[C], Nt N, double h, V* F, std::integer_sequence<int, R...>) {
    constexpr int S = P::kind == 0 ? P::s + 1 : P::s_dense;
    constexpr auto cols = std::make_integer_sequence<int, S>{};
    constexpr int first = P::kind == 0 ? 0 : 3;
    for (int k = 0; k < N; ++k) {
        if constexpr (P::kind == 0)
            ((F[(first + R) * N + k] = h * wsum<RowP<P, R>>(K, k, cols)), ...);
        else
            ((F[(first + R) * N + k] = h * wsum<RowD<P, R>>(K, k, cols)), ...);
    }
}

template <class P, class M, int C, class V>
inline int dense_prepare(const M& f, double t, double h, const V* y, const V* ynew, V (*K)[C],
                         V* F) {
    const auto N = Sizes<M>::n(f);
    if constexpr (P::kind == 0) {
        dense_rows<P>(K, N, h, F, std::make_integer_sequence<int, P::degree>{});
    } else {
        const int st = dense_extra<P>(f, N, t, h, y, K,
                                      std::make_integer_sequence<int, P::s_dense - P::s - 1>{});
        if (st != 0) return st;
        for (int k = 0; k < N; ++k) {
            const V dy = ynew[k] - y[k];
            F[k] = dy;
            F[N + k] = h * K[0][k] - dy;
            F[2 * N + k] = 2.0 * dy - h * (K[P::s][k] + K[0][k]);
        }
        dense_rows<P>(K, N, h, F, std::make_integer_sequence<int, 4>{});
    }
    return 0;
}

// the interpolant at t + x h (OUT: out)
template <class P, class Nt, class V>
inline void dense_eval(double x, const V* y, const V* F, V* out, Nt N) {
    if constexpr (P::kind == 0) {
        for (int k = 0; k < N; ++k) {
            V acc{};
            double p = 1.0;
            for (int r = 0; r < P::degree; ++r) {
                p = p * x;
                acc = acc + F[r * N + k] * p;
            }
            out[k] = y[k] + acc;
        }
    } else {
        const double u = 1.0 - x;
        for (int k = 0; k < N; ++k) {
            V acc{};
            for (int r = 0; r < 7; ++r) acc = (acc + F[(6 - r) * N + k]) * (r % 2 == 0 ? x : u);
            out[k] = y[k] + acc;
        }
    }
}

// whether x[0..N-1] are all finite (of a model's dual numbers: their value parts)
template <class V, class Nt>
ROTODE_INLINE bool finite(const V* x, Nt N) {
    bool ok = true;
    for (int k = 0; k < N; ++k) {
        const double v = value_of(x[k]);
        ok = ok && (v - v == 0.0);
    }
    return ok;
}

// The double model of a model M on another value type V (its f on the value parts, with zero
// tangents: V's value parts are the double model's bits), for `initial_step`.
template <class M, class V>
struct ValuesOf {
    static constexpr int n = M::n;
    static constexpr int k = M::k;
    const M* f;

    inline int operator()(double t, const double* y, double* dy) const {
        V z[n], dz[n];
        for (int i = 0; i < n; ++i) z[i] = V(y[i]);
        const int st = eval(*f, t, z, dz);
        values(dz, dy, std::integral_constant<int, n>{});
        return st;
    }
    inline const double* ref() const { return model_ref(*f); }
};

// `error_norm` of stages and states of value type V: on their value parts
template <class P, int C, class Nt, class V>
ROTODE_INLINE double error_norm_of(const V (*K)[C], Nt N, const V* y, const V* ynew, double h,
                                   double rtol, const double* atol, const double* ref) {
    if constexpr (std::is_same_v<V, double>) {
        return error_norm<P>(K, N, y, ynew, h, rtol, atol, ref);
    } else {
        double Kv[P::s + 1][C], yv[C], ynv[C];
        for (int j = 0; j <= P::s; ++j) values(K[j], Kv[j], N);
        values(y, yv, N);
        values(ynew, ynv, N);
        return error_norm<P>(Kv, N, yv, ynv, h, rtol, atol, ref);
    }
}

// One body's loop state: the state at t and the trial step's end, the stages (with room for
// the interpolant's), the interpolant's coefficients, and the counters.
template <class V, int C, int S>
struct ErkState {
    V z[C], znew[C], zd[C];
    V K[S][C];
    V F[7 * C];
    double t, h_abs;
    std::ptrdiff_t slot;
    long long accepted, rejected, nfev, stores;
};

// The body's start: its state, the row at t0 when asked for, f(t0) and the first step (OUT: s;
// a nonzero status ends the body)
template <class P, class M, class St>
ROTODE_INLINE int erk_begin(const M& f, EngineRun& r, St& s, double direction, double tf) {
    using V = typename ValueType<M>::type;
    constexpr int C = Sizes<M>::cap;
    const auto N = Sizes<M>::n(f);
    const auto KW = Sizes<M>::k(f);
    int st = ENGINE_OK;
    for (int k = 0; k < 7 * N; ++k) s.F[k] = V{};
    f.begin(r.y0, s.z);
    if (r.m > 0 && r.save[0] == 0) {
        f.first_row(s.t, r.y0, s.z, r.yo, r.wo);
        ++s.stores;
        if (!finite(r.yo, KW) || !finite(r.wo, std::integral_constant<int, 3>{}))
            st = ENGINE_NONFINITE;
        else
            s.slot = 1;
    }
    if (st != ENGINE_OK) return st;
    st = eval(f, s.t, s.z, s.K[0]);
    s.nfev += 1;
    if (st != ENGINE_OK) return st;
    if (r.first_step > 0.0) {
        s.h_abs = r.first_step;
        return ENGINE_OK;
    }
    s.nfev += 1;
    const double length = std::fabs(tf - s.t);
    if constexpr (std::is_same_v<V, double>) {
        return initial_step<P>(f, s.t, s.z, s.K[0], direction, length, r, &s.h_abs);
    } else {
        double zv[C], kv[C];
        values(s.z, zv, N);
        values(s.K[0], kv, N);
        return initial_step<P>(ValuesOf<M, V>{&f}, s.t, zv, kv, direction, length, r, &s.h_abs);
    }
}

// Trial steps from s.t until one is accepted (OUT: t_new, h, the stages and s.znew; s.h_abs the
// next step's size): ENGINE_OK, or the status that ends the body
template <class P, class M, class St, class Nt>
ROTODE_INLINE int erk_attempt(const M& f, const EngineRun& r, St& s, Nt N, double direction,
                              double tf, const double* atol, double& t_new, double& h) {
    using V = typename ValueType<M>::type;
    constexpr int C = Sizes<M>::cap;
    constexpr double exponent = -1.0 / (P::error_order + 1);
    const double min_step = clip_step(s.t, direction, r.max_step, s.h_abs);
    bool retried = false;
    for (;;) {
        if (s.h_abs < min_step) return ENGINE_STEP_TOO_SMALL;
        trial_end(s.t, tf, direction, s.h_abs, t_new, h);
        s.nfev += P::s;
        int st = step_stages<P>(f, N, s.t, h, s.z, s.K,
                                std::make_integer_sequence<int, P::s - 1>{});
        if (st != ENGINE_OK) return st;
        for (int k = 0; k < N; ++k)
            s.znew[k] = s.z[k] + h * wsum<RowB<P>>(s.K, k,
                                                   std::make_integer_sequence<int, P::s>{});
        st = eval(f, t_new, s.znew, s.K[P::s]);      // FSAL: the next step's K[0]
        if (st != ENGINE_OK) return st;
        const double err = error_norm_of<P>(s.K, N, s.z, s.znew, h, r.rtol, atol,
                                            model_ref(f));
        double angle = 0.0, max_angle = 0.0;
        if constexpr (HasMaxAngle<M>::value) {     // the driver's `Stepper.max_angle`
            max_angle = f.max_angle();
            if constexpr (std::is_same_v<V, double>) {
                angle = step_angle(f, s.znew);
            } else {
                double zv[C];
                values(s.znew, zv, N);
                angle = step_angle(f, zv);
            }
        }
        if (decide_step(err, exponent, angle, max_angle, s.h_abs, retried, s.rejected))
            return ENGINE_OK;
    }
}

// The run's hook on the accepted step s.t -> t_new (a double state only: the models on other
// value types run without events), then the step's rows up to t_stop, by its interpolant where
// they fall inside it (OUT: hooked, the hook's status, and t_stop): ENGINE_OK, or the status
// that ends the body
template <class P, class M, class St, class Nt, class Kt>
ROTODE_INLINE int erk_rows(const M& f, EngineRun& r, St& s, Nt N, Kt KW, double direction,
                           double t_new, double h, bool& t0_requested, int& hooked,
                           double& t_stop) {
    using V = typename ValueType<M>::type;
    constexpr int C = Sizes<M>::cap;
    bool prepared = false;
    t_stop = t_new;                                // a terminal event may end the body earlier
    hooked = ENGINE_OK;
    if constexpr (std::is_same_v<V, double>) {
        if (r.on_step != nullptr) {
            EngineStep es{s.t, t_new, h, s.z, s.znew, &s.K[0][0], C, s.F, false, 0, 0, t_new};
            hooked = r.on_step(r.step_ctx, &es);
            s.nfev += es.nfev;
            r.hook_stores += es.stores;
            prepared = es.prepared;
            t_stop = es.t_stop;
            if (hooked != ENGINE_OK && hooked != ENGINE_TERMINATED) return hooked;
        }
    }
    if (r.t_eval && !prepared
        && (t0_requested || (s.slot < r.m && direction * (r.t[r.save[s.slot]] - t_stop) <= 0.0))) {
        // as SciPy: a step holding a requested time prepares its interpolant (in nfev)
        s.nfev += P::s_dense - P::s - 1;
        const int st = dense_prepare<P>(f, s.t, h, s.z, s.znew, s.K, s.F);
        if (st != ENGINE_OK) return st;
        prepared = true;
    }
    t0_requested = false;
    while (s.slot < r.m && direction * (r.t[r.save[s.slot]] - t_stop) <= 0.0) {
        const double tt = r.t[r.save[s.slot]];
        double* yrow = r.yo + s.slot * KW;
        double* wrow = r.wo + s.slot * 3;
        ++s.stores;
        if (tt == t_new) {
            f.store(tt, s.znew, yrow, wrow);
        } else {
            if (!prepared) {
                s.nfev += P::s_dense - P::s - 1;
                const int st = dense_prepare<P>(f, s.t, h, s.z, s.znew, s.K, s.F);
                if (st != ENGINE_OK) return st;
                prepared = true;
            }
            dense_eval<P>((tt - s.t) / h, s.z, s.F, s.zd, N);
            f.store(tt, s.zd, yrow, wrow);
        }
        if (!finite(yrow, KW) || !finite(wrow, std::integral_constant<int, 3>{}))
            return ENGINE_NONFINITE;
        ++s.slot;
    }
    return ENGINE_OK;
}

// A body's end with status st: NaN rows (KW wide) from the first slot it did not reach, its
// counters, where it ended (OUT: r); b is its loop state (`ErkState`, the lanes' `LaneBody`:
// slot, accepted, rejected, nfev, stores, t)
template <class B, class Kt>
ROTODE_INLINE void finish_run(EngineRun& r, const B& b, Kt KW, int st) {
    for (std::ptrdiff_t slot = b.slot; slot < r.m; ++slot) {
        for (int k = 0; k < KW; ++k) r.yo[slot * KW + k] = NAN;
        for (int k = 0; k < 3; ++k) r.wo[slot * 3 + k] = NAN;
    }
    r.accepted = b.accepted;
    r.rejected = b.rejected;
    r.nfev = b.nfev;
    r.stores = b.stores;
    r.t_end = b.t;
    r.status = st;
}

// The body's end: `finish_run`, and the model's own rows beyond the slots reached (OUT: r)
template <class M, class St, class Kt>
ROTODE_INLINE void erk_finish(const M& f, EngineRun& r, St& s, Kt KW, int st) {
    finish_run(r, s, KW, st);
    if constexpr (HasUnreached<M>::value) f.unreached(s.slot, r.m);
}

}  // namespace engine

// One body of an error-controlled run of the pair P on the model M.  M provides
//   static constexpr int n, k;            state size, output row width
//     or static constexpr int cap; int size() const; int width() const;
//                                         the same known at run time (size() <= cap)
//   using value_type = V;                 optional: the state's value type (default double;
//                                         rotode/_tangent.hpp's dual numbers: the loop's
//                                         decisions read their value parts, and without events)
//   void operator()(double t, const double* y, double* dy) const;   y' = f(t, y) (V* for V)
//     or int operator()(...) const;       the same with a status: nonzero stops the body
//                                         with that status
//   void begin(const double* y0, double* z) const;                  the state from a row
//   void first_row(double t0, const double* y0, const double* z0, double* y, double* w) const;
//                                                                   the row at t0
//   void store(double t, const double* z, double* y, double* w) const;  a row of the state
//   void accept(double* z, double* K0) const;    optional: after each accepted step (z its end,
//                                         K0 the FSAL stage), as the driver's `Stepper.accept`
//                                         (a Lie-group model re-anchors there: its base is a
//                                         `mutable` member of the loop's copy)
//   const double* ref() const;            optional: reference magnitudes of the error scale
//                                         (`model_ref`, the driver's `ERKTol.ref`)
//   double max_angle() const;             optional: the largest rotation of an accepted step,
//                                         as the driver's `Stepper.max_angle` (a larger one is
//                                         rejected, and the next step's growth capped)
//   double step_angle(const double* z) const;  optional, with max_angle: that rotation of the
//                                         trial step z (`step_angle`; without it |z[0:3]|)
// The run's `on_step` (when not NULL) sees each accepted step before its rows; rows then go up
// to the hook's t_stop, and a terminal hook (ENGINE_TERMINATED) ends the body there, the step
// counted as accepted, with run.t_end = t_stop.
//   void unreached(std::ptrdiff_t slot, std::ptrdiff_t m) const;  optional: the rows slot..m-1
//                                         were not reached (after the loop's NaN rows)
template <class P, class M>
int erk_body(const M& model, EngineRun* run) {
    using namespace engine;
    using V = typename ValueType<M>::type;
    constexpr int C = Sizes<M>::cap;
    EngineRun& r = *run;
    const M f = model;          // local copies: no store of the loop aliases them
    const auto N = Sizes<M>::n(f);
    const auto KW = Sizes<M>::k(f);
    double atol[C];
    for (int k = 0; k < N; ++k) atol[k] = r.atol[k];
    ErkState<V, C, P::s_dense> s;
    s.t = r.t[0];
    s.h_abs = 0.0;
    s.slot = 0;
    s.accepted = s.rejected = s.nfev = s.stores = 0;
    const double tf = r.t[r.n];
    const double direction = tf > s.t ? 1.0 : -1.0;
    bool t0_requested = r.t_eval && r.m > 0 && r.save[0] == 0;
    int st = erk_begin<P>(f, r, s, direction, tf);
    while (st == ENGINE_OK && direction * (tf - s.t) > 0.0) {
        if (--*r.countdown <= 0 && r.tick(r.tick_ctx)) {
            st = ENGINE_INTERRUPTED;
            break;
        }
        if (s.accepted >= r.max_steps) {
            st = ENGINE_MAX_STEPS;
            break;
        }
        double t_new, h, t_stop;
        int hooked;
        st = erk_attempt<P>(f, r, s, N, direction, tf, atol, t_new, h);
        if (st != ENGINE_OK) break;
        if (!finite(s.znew, N)) {
            st = ENGINE_NONFINITE;
            break;
        }
        st = erk_rows<P>(f, r, s, N, KW, direction, t_new, h, t0_requested, hooked, t_stop);
        if (st != ENGINE_OK) break;
        if (hooked == ENGINE_TERMINATED) {         // (the hook keeps the state at t_stop)
            s.t = t_stop;
            ++s.accepted;
            st = ENGINE_TERMINATED;
            break;
        }
        for (int k = 0; k < N; ++k) {
            s.z[k] = s.znew[k];
            s.K[0][k] = s.K[P::s][k];
        }
        if constexpr (HasAccept<M, V>::value) f.accept(s.z, s.K[0]);
        s.t = t_new;
        ++s.accepted;
    }
    erk_finish(f, r, s, KW, st);
    return st;
}

}  // namespace rotode
