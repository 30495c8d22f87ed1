// The specialised loop of rotode's error-controlled embedded pairs: one body, one pair, one
// model, all known at compile time (docs/architecture.md, "The specialised engine").
//
// `erk_body<P, M>(model, run)` integrates y' = f(t, y) of the model `M` with the pair `P` (a
// struct of rotode/_tableaux.hpp, generated from the registry) over one body's span, writing the
// rows the run asks for.  It does what the driver's `_body_adaptive` (rotode/_driver_control.pxi)
// does for a pair on the state, to the same arithmetic, with the tableau as compile-time
// constants (every stage sum unrolled over its nonzero coefficients) and the model's equations
// inlined into the stages instead of a call through a function pointer and a virtual torque call
// per evaluation.  What it does not do (events, step records, sample-time stops, a Lie-group
// re-anchoring) stays with the driver; rotode/dynamic.pyx and kinematic.pyx choose.
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
#include <utility>

// the stage functions and the model's equations are inlined into the loop whatever the compiler's
// size heuristics say (an out-of-line f costs ~20 % of a DOP853 step on the rigid body)
#if defined(__GNUC__) || defined(__clang__)
#define ROTODE_INLINE inline __attribute__((always_inline))
#else
#define ROTODE_INLINE inline
#endif

namespace rotode {

// status codes: rotode/_driver.pxd's
enum EngineStatus {
    ENGINE_OK = 0,
    ENGINE_NONFINITE = 2,
    ENGINE_INTERRUPTED = -3,
    ENGINE_STEP_TOO_SMALL = -8,
    ENGINE_MAX_STEPS = -9,
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
    // OUT: counters, where the run ended and its status
    long long accepted, rejected, nfev;
    long long stores;        // rows written by the model's store/first_row (kinematics: each
                             // evaluates w(t) once more, counted by the runner)
    double t_end;
    int status;
};

namespace engine {

constexpr double SAFETY = 0.9, MIN_FACTOR = 0.2, MAX_FACTOR = 10.0;

// sum_j W(j) K[j][k] over the compile-time stage indices J... with a nonzero weight, in order
// (0.0 when every weight is zero)
template <class W, int N, int... J>
ROTODE_INLINE double wsum(const double (*K)[N], int k, std::integer_sequence<int, J...>) {
    double acc = 0.0;
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
template <class P, int N, int R>
ROTODE_INLINE void stage_state(const double (*K)[N], double h, const double* y, double* ys) {
    for (int k = 0; k < N; ++k)
        ys[k] = y[k] + h * wsum<RowA<P, R>>(K, k, std::make_integer_sequence<int, R>{});
}

// stages 1..s-1 and y_new; the stages with c = 1 are evaluated at t + h (the driver's t_end)
template <class P, class M, int... R>
ROTODE_INLINE void step_stages(const M& f, double t, double h, const double* y,
                        double (*K)[M::n], std::integer_sequence<int, R...>) {
    double ys[M::n];
    ((stage_state<P, M::n, R + 1>(K, h, y, ys),
      f(P::c[R + 1] == 1.0 ? t + h : t + P::c[R + 1] * h, ys, K[R + 1])),
     ...);
}

// the scaled RMS norm of the local error estimate (erk_error_norm of rotode/erk.pxd)
template <class P, int N>
ROTODE_INLINE double error_norm(const double (*K)[N], const double* y, const double* ynew, double h,
                         double rtol, const double* atol) {
    constexpr auto all = std::make_integer_sequence<int, P::s + 1>{};
    double n5 = 0.0, n3 = 0.0;
    bool zero_scale = false;
    double e5s[N], e3s[N];
    for (int k = 0; k < N; ++k) {
        const double scale = atol[k] + std::fmax(std::fabs(y[k]), std::fabs(ynew[k])) * rtol;
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
            const double scale = atol[k] + std::fmax(std::fabs(y[k]), std::fabs(ynew[k])) * rtol;
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
template <int N>
inline double rms(const double* x, const double* scale) {
    double acc = 0.0;
    for (int k = 0; k < N; ++k)
        if (scale[k] != 0.0) acc = acc + (x[k] / scale[k]) * (x[k] / scale[k]);
    return std::sqrt(acc / N);
}

// HNW sec. II.4's first step, as SciPy's select_initial_step (erk_initial_step)
template <class P, class M>
inline double initial_step(const M& f, double t0, const double* y0, const double* f0,
                           double direction, double length, const EngineRun& r) {
    constexpr int N = M::n;
    double scale[N], y1[N], f1[N], diff[N];
    for (int k = 0; k < N; ++k) scale[k] = r.atol[k] + std::fabs(y0[k]) * r.rtol;
    const double d0 = rms<N>(y0, scale), d1 = rms<N>(f0, scale);
    double h0 = (d0 < 1e-5 || d1 < 1e-5) ? 1e-6 : 0.01 * d0 / d1;
    h0 = std::fmin(h0, length);
    for (int k = 0; k < N; ++k) y1[k] = y0[k] + h0 * direction * f0[k];
    f(t0 + h0 * direction, y1, f1);
    for (int k = 0; k < N; ++k) diff[k] = f1[k] - f0[k];
    const double d2 = rms<N>(diff, scale) / h0;
    const double h1 = (d1 <= 1e-15 && d2 <= 1e-15)
        ? std::fmax(1e-6, h0 * 1e-3)
        : std::pow(0.01 / std::fmax(d1, d2), 1.0 / (P::error_order + 1));
    return std::fmin(std::fmin(100.0 * h0, h1), std::fmin(length, r.max_step));
}

// The interpolant of an accepted step t -> t + h (OUT: F, and DOP853's extra stages in K).
template <class P, class M, int... R>
inline void dense_extra(const M& f, double t, double h, const double* y, double (*K)[M::n],
                        std::integer_sequence<int, R...>) {
    double ys[M::n];
    ((stage_state<P, M::n, P::s + 1 + R>(K, h, y, ys),
      f(t + P::c[P::s + 1 + R] * h, ys, K[P::s + 1 + R])),
     ...);
}

template <class P, int N, int... R>
inline void dense_rows(const double (*K)[N], double h, double* F,
                       std::integer_sequence<int, R...>) {
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

template <class P, class M>
inline void dense_prepare(const M& f, double t, double h, const double* y, const double* ynew,
                          double (*K)[M::n], double* F) {
    constexpr int N = M::n;
    if constexpr (P::kind == 0) {
        dense_rows<P, N>(K, h, F, std::make_integer_sequence<int, P::degree>{});
    } else {
        dense_extra<P>(f, t, h, y, K, std::make_integer_sequence<int, P::s_dense - P::s - 1>{});
        for (int k = 0; k < N; ++k) {
            const double dy = ynew[k] - y[k];
            F[k] = dy;
            F[N + k] = h * K[0][k] - dy;
            F[2 * N + k] = 2.0 * dy - h * (K[P::s][k] + K[0][k]);
        }
        dense_rows<P, N>(K, h, F, std::make_integer_sequence<int, 4>{});
    }
}

// the interpolant at t + x h (OUT: out)
template <class P, int N>
inline void dense_eval(double x, const double* y, const double* F, double* out) {
    if constexpr (P::kind == 0) {
        for (int k = 0; k < N; ++k) {
            double acc = 0.0, p = 1.0;
            for (int r = 0; r < P::degree; ++r) {
                p = p * x;
                acc = acc + F[r * N + k] * p;
            }
            out[k] = y[k] + acc;
        }
    } else {
        const double u = 1.0 - x;
        for (int k = 0; k < N; ++k) {
            double acc = 0.0;
            for (int r = 0; r < 7; ++r) acc = (acc + F[(6 - r) * N + k]) * (r % 2 == 0 ? x : u);
            out[k] = y[k] + acc;
        }
    }
}

template <int N>
ROTODE_INLINE bool finite(const double* x) {
    bool ok = true;
    for (int k = 0; k < N; ++k) ok = ok && (x[k] - x[k] == 0.0);
    return ok;
}

}  // namespace engine

// One body of an error-controlled run of the pair P on the model M.  M provides
//   static constexpr int n, k;            state size, output row width
//   void operator()(double t, const double* y, double* dy) const;   y' = f(t, y)
//   void begin(const double* y0, double* z) const;                  the state from a row
//   void first_row(double t0, const double* y0, const double* z0, double* y, double* w) const;
//                                                                   the row at t0
//   void store(double t, const double* z, double* y, double* w) const;  a row of the state
template <class P, class M>
int erk_body(const M& model, EngineRun* run) {
    using namespace engine;
    constexpr int N = M::n, KW = M::k;
    constexpr int S = P::s_dense;
    EngineRun& r = *run;
    const M f = model;          // local copies: no store of the loop aliases them
    double atol[N];
    for (int k = 0; k < N; ++k) atol[k] = r.atol[k];
    const double rtol = r.rtol, max_step = r.max_step;
    double z[N], znew[N], zd[N];
    double K[S][N];
    double F[7 * N];
    double t = r.t[0];
    const double tf = r.t[r.n];
    const double direction = tf > t ? 1.0 : -1.0;
    constexpr double exponent = -1.0 / (P::error_order + 1);
    std::ptrdiff_t slot = 0;
    long long accepted = 0, rejected = 0, nfev = 0, stores = 0;
    int st = ENGINE_OK;
    bool t0_requested = r.t_eval && r.m > 0 && r.save[0] == 0;
    double h_abs;
    for (int k = 0; k < 7 * N; ++k) F[k] = 0.0;
    f.begin(r.y0, z);
    if (r.m > 0 && r.save[0] == 0) {
        f.first_row(t, r.y0, z, r.yo, r.wo);
        ++stores;
        if (!finite<KW>(r.yo) || !finite<3>(r.wo)) st = ENGINE_NONFINITE;
        else slot = 1;
    }
    if (st == ENGINE_OK) {
        f(t, z, K[0]);
        nfev += 1;
        if (r.first_step > 0.0) {
            h_abs = r.first_step;
        } else {
            nfev += 1;
            h_abs = initial_step<P>(f, t, z, K[0], direction, std::fabs(tf - t), r);
        }
    }
    while (st == ENGINE_OK && direction * (tf - t) > 0.0) {
        if (--*r.countdown <= 0 && r.tick(r.tick_ctx)) {
            st = ENGINE_INTERRUPTED;
            break;
        }
        if (accepted >= r.max_steps) {
            st = ENGINE_MAX_STEPS;
            break;
        }
        const double min_step = 10.0 * std::fabs(std::nextafter(t, direction * INFINITY) - t);
        if (h_abs > max_step) h_abs = max_step;
        else if (h_abs < min_step) h_abs = min_step;
        bool retried = false;
        double t_new, h;
        for (;;) {
            if (h_abs < min_step) {
                st = ENGINE_STEP_TOO_SMALL;
                break;
            }
            t_new = t + h_abs * direction;
            if (direction * (t_new - tf) > 0.0) t_new = tf;
            h = t_new - t;
            h_abs = std::fabs(h);
            nfev += P::s;
            step_stages<P>(f, t, h, z, K, std::make_integer_sequence<int, P::s - 1>{});
            for (int k = 0; k < N; ++k)
                znew[k] = z[k] + h * wsum<RowB<P>>(K, k, std::make_integer_sequence<int, P::s>{});
            f(t_new, znew, K[P::s]);                 // FSAL: the next step's K[0]
            const double err = error_norm<P, N>(K, z, znew, h, rtol, atol);
            if (err < 1.0) {
                double factor = err == 0.0
                    ? MAX_FACTOR : std::fmin(MAX_FACTOR, SAFETY * std::pow(err, exponent));
                if (retried) factor = std::fmin(1.0, factor);
                h_abs = h_abs * factor;
                break;
            }
            h_abs = h_abs * std::fmax(MIN_FACTOR, SAFETY * std::pow(err, exponent));
            retried = true;
            ++rejected;
        }
        if (st != ENGINE_OK) break;
        if (!finite<N>(znew)) {
            st = ENGINE_NONFINITE;
            break;
        }
        bool prepared = false;
        if (r.t_eval && (t0_requested
                         || (slot < r.m && direction * (r.t[r.save[slot]] - t_new) <= 0.0))) {
            // as SciPy: a step holding a requested time prepares its interpolant (in nfev)
            dense_prepare<P>(f, t, h, z, znew, K, F);
            nfev += P::s_dense - P::s - 1;
            prepared = true;
        }
        t0_requested = false;
        while (slot < r.m && direction * (r.t[r.save[slot]] - t_new) <= 0.0) {
            const double tt = r.t[r.save[slot]];
            double* yrow = r.yo + slot * KW;
            double* wrow = r.wo + slot * 3;
            ++stores;
            if (tt == t_new) {
                f.store(tt, znew, yrow, wrow);
            } else {
                if (!prepared) {
                    dense_prepare<P>(f, t, h, z, znew, K, F);
                    nfev += P::s_dense - P::s - 1;
                    prepared = true;
                }
                dense_eval<P, N>((tt - t) / h, z, F, zd);
                f.store(tt, zd, yrow, wrow);
            }
            if (!finite<KW>(yrow) || !finite<3>(wrow)) {
                st = ENGINE_NONFINITE;
                break;
            }
            ++slot;
        }
        if (st != ENGINE_OK) break;
        for (int k = 0; k < N; ++k) {
            z[k] = znew[k];
            K[0][k] = K[P::s][k];
        }
        t = t_new;
        ++accepted;
    }
    for (; slot < r.m; ++slot) {
        for (int k = 0; k < KW; ++k) r.yo[slot * KW + k] = NAN;
        for (int k = 0; k < 3; ++k) r.wo[slot * 3 + k] = NAN;
    }
    r.accepted = accepted;
    r.rejected = rejected;
    r.nfev = nfev;
    r.stores = stores;
    r.t_end = t;
    r.status = st;
    return st;
}

}  // namespace rotode
