// Forward-mode dual numbers for rotode ([DUAL], "Automatically Computing the Derivatives of a
// Vector Field using Dual Numbers").
//
// A dual number carries a value v and ROTODE_DUAL_N tangent components d[0..N-1]; arithmetic
// follows (x, y)(a, b) = (xa, ya + xb) and every elementary function f is extended by
// f(x, y) = (f(x), f'(x) y).  Seeding d[j] = 1 on input j and evaluating a kernel once yields
// the j-th column of its Jacobian for every j < N at the cost of one evaluation.
//
// The value part of every operation is computed by exactly the same floating-point expression
// as the plain double code path, so the value of a dual evaluation is bit-for-bit the double
// result (tested).  For generic code, each elementary function is also provided as a double
// overload in namespace rotode, so that one Cython fused-type kernel (`real` = double | dual)
// calls `sin(x)`, `sqrt(x)`, ... and resolves to the right overload in each specialisation.
//
// Layout and arithmetic: [v, d0 .. d6] are 8 consecutive doubles, and every operation acts on
// them as one GCC vector of 8 (`dual_vec`: one AVX-512 register, two AVX2 or four SSE2 ones,
// whatever the function it is inlined into is compiled for), the value lane then set to the
// double operation's result where the vector formula would give another (a product's
// a.v b.v + a.v b.v, a sum with a constant).  The same operations in every lane, whatever the
// width: the tangents' bits do not depend on the instruction set either.  Quotients multiply
// the tangents by the reciprocal of the divisor (one division per quotient, not eight).
// Every operator is always inlined: an out-of-line call per operation cost more than the
// operation.
#ifndef ROTODE_DUAL_HPP
#define ROTODE_DUAL_HPP

#include <cmath>

#define ROTODE_DUAL_N 7

#if defined(__GNUC__)
#define ROTODE_DUAL_INLINE inline __attribute__((always_inline))
#else
#define ROTODE_DUAL_INLINE inline
#endif

namespace rotode {

// the 8 doubles of a dual as one vector (unaligned: a dual is only 8-byte aligned in memory)
typedef double dual_vec __attribute__((vector_size(64), aligned(8)));

// A dual number: the value and its tangent parts, [v, d0 .. d6].
struct dual {
    double v;
    double d[ROTODE_DUAL_N];

    dual() : v(0.0) { for (int i = 0; i < ROTODE_DUAL_N; ++i) d[i] = 0.0; }
    dual(double x) : v(x) { for (int i = 0; i < ROTODE_DUAL_N; ++i) d[i] = 0.0; }
    dual& operator=(double x) {
        v = x;
        for (int i = 0; i < ROTODE_DUAL_N; ++i) d[i] = 0.0;
        return *this;
    }
};
static_assert(sizeof(dual) == sizeof(dual_vec), "dual: 8 doubles");

// the value part (rotode/_engine.hpp's loop reads it where it decides: the error norm, the
// step's rotation, the finiteness checks)
inline double value_of(const dual& x) { return x.v; }

#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpsabi"      // vectors passed only to always-inline functions
#endif

namespace dualv {
ROTODE_DUAL_INLINE dual_vec load(const dual& a) {
    dual_vec x;
    __builtin_memcpy(&x, static_cast<const void*>(&a), sizeof x);
    return x;
}
ROTODE_DUAL_INLINE dual make(dual_vec x) {
    dual r;
    __builtin_memcpy(static_cast<void*>(&r), &x, sizeof x);
    return r;
}
// x in every lane.  Written as a two-operand shuffle of {x, 0, ..}: GCC lowers a function's
// vector constructors for the function's own instruction set before it is inlined, so
// `dual_vec{x, x, ..}` in these always-inline helpers (compiled for the baseline) reached the
// AVX-512 entries as eight masked broadcasts and seven mask loads; the shuffle stays one
// `vbroadcastsd` (one per half or quarter on AVX2 and SSE2, as before).  The same value.
ROTODE_DUAL_INLINE dual_vec splat(double x) {
    const dual_vec t = {x};
#if defined(__clang__)
    return __builtin_shufflevector(t, t, 0, 0, 0, 0, 0, 0, 0, 0);
#else
    typedef long long index_vec __attribute__((vector_size(64)));
    return __builtin_shuffle(t, t, index_vec{0, 0, 0, 0, 0, 0, 0, 0});
#endif
}
// x with its lane 0 (the value) taken from y
ROTODE_DUAL_INLINE dual_vec with_value(dual_vec x, dual_vec y) {
#if defined(__clang__)
    return __builtin_shufflevector(x, y, 8, 1, 2, 3, 4, 5, 6, 7);
#else
    typedef long long index_vec __attribute__((vector_size(64)));
    return __builtin_shuffle(x, y, index_vec{8, 1, 2, 3, 4, 5, 6, 7});
#endif
}
// the dual of tangents x's lanes 1..7 and value v
ROTODE_DUAL_INLINE dual make(dual_vec x, double v) { return make(with_value(x, splat(v))); }
}  // namespace dualv

// chain rule helper: result value fv, derivative scale fp (f'(x)), applied to x's tangents
ROTODE_DUAL_INLINE dual chain(const dual& x, double fv, double fp) {
    return dualv::make(dualv::splat(fp) * dualv::load(x), fv);
}

// ---- arithmetic ------------------------------------------------------------------------
ROTODE_DUAL_INLINE dual operator-(const dual& a) { return dualv::make(-dualv::load(a)); }
ROTODE_DUAL_INLINE dual operator+(const dual& a, const dual& b) {
    return dualv::make(dualv::load(a) + dualv::load(b));
}
ROTODE_DUAL_INLINE dual operator+(const dual& a, double b) {
    return dualv::make(dualv::load(a), a.v + b);
}
ROTODE_DUAL_INLINE dual operator+(double a, const dual& b) {
    return dualv::make(dualv::load(b), a + b.v);
}
ROTODE_DUAL_INLINE dual operator-(const dual& a, const dual& b) {
    return dualv::make(dualv::load(a) - dualv::load(b));
}
ROTODE_DUAL_INLINE dual operator-(const dual& a, double b) {
    return dualv::make(dualv::load(a), a.v - b);
}
ROTODE_DUAL_INLINE dual operator-(double a, const dual& b) {
    return dualv::make(-dualv::load(b), a - b.v);
}
ROTODE_DUAL_INLINE dual operator*(const dual& a, const dual& b) {
    const dual_vec p = dualv::load(a) * dualv::splat(b.v);     // lane 0: a.v b.v
    return dualv::make(dualv::with_value(p + dualv::splat(a.v) * dualv::load(b), p));
}
ROTODE_DUAL_INLINE dual operator*(const dual& a, double b) {
    return dualv::make(dualv::load(a) * dualv::splat(b));
}
ROTODE_DUAL_INLINE dual operator*(double a, const dual& b) {
    return dualv::make(dualv::splat(a) * dualv::load(b));
}
ROTODE_DUAL_INLINE dual operator/(const dual& a, const dual& b) {
    // (x, y)/(a, b) = (x/a, (y a - x b)/a^2), written as (y - (x/a) b)/a
    const double q = a.v / b.v, r = 1.0 / b.v;
    return dualv::make((dualv::load(a) - dualv::splat(q) * dualv::load(b)) * dualv::splat(r), q);
}
ROTODE_DUAL_INLINE dual operator/(const dual& a, double b) {
    return dualv::make(dualv::load(a) / dualv::splat(b));
}
ROTODE_DUAL_INLINE dual operator/(double a, const dual& b) {
    const double q = a / b.v, c = -q / b.v;
    return dualv::make(dualv::splat(c) * dualv::load(b), q);
}

// ---- comparisons act on the value part ------------------------------------------------
ROTODE_DUAL_INLINE bool operator<(const dual& a, double b) { return a.v < b; }
ROTODE_DUAL_INLINE bool operator<=(const dual& a, double b) { return a.v <= b; }
ROTODE_DUAL_INLINE bool operator>(const dual& a, double b) { return a.v > b; }
ROTODE_DUAL_INLINE bool operator>=(const dual& a, double b) { return a.v >= b; }
ROTODE_DUAL_INLINE bool operator==(const dual& a, double b) { return a.v == b; }
ROTODE_DUAL_INLINE bool operator!=(const dual& a, double b) { return a.v != b; }
ROTODE_DUAL_INLINE bool operator<(const dual& a, const dual& b) { return a.v < b.v; }
ROTODE_DUAL_INLINE bool operator<=(const dual& a, const dual& b) { return a.v <= b.v; }
ROTODE_DUAL_INLINE bool operator>(const dual& a, const dual& b) { return a.v > b.v; }
ROTODE_DUAL_INLINE bool operator>=(const dual& a, const dual& b) { return a.v >= b.v; }

// ---- elementary functions, double and dual overloads ----------------------------------
ROTODE_DUAL_INLINE double value(double x) { return x; }
ROTODE_DUAL_INLINE double value(const dual& x) { return x.v; }

ROTODE_DUAL_INLINE double sqrt(double x) { return std::sqrt(x); }
ROTODE_DUAL_INLINE dual sqrt(const dual& x) {
    const double s = std::sqrt(x.v);
    return chain(x, s, 0.5 / s);
}
ROTODE_DUAL_INLINE double sin(double x) { return std::sin(x); }
ROTODE_DUAL_INLINE dual sin(const dual& x) { return chain(x, std::sin(x.v), std::cos(x.v)); }
ROTODE_DUAL_INLINE double cos(double x) { return std::cos(x); }
ROTODE_DUAL_INLINE dual cos(const dual& x) { return chain(x, std::cos(x.v), -std::sin(x.v)); }
ROTODE_DUAL_INLINE double tan(double x) { return std::tan(x); }
ROTODE_DUAL_INLINE dual tan(const dual& x) {
    const double t = std::tan(x.v);
    return chain(x, t, 1.0 + t * t);
}
ROTODE_DUAL_INLINE double exp(double x) { return std::exp(x); }
ROTODE_DUAL_INLINE dual exp(const dual& x) {
    const double e = std::exp(x.v);
    return chain(x, e, e);
}
ROTODE_DUAL_INLINE double log(double x) { return std::log(x); }
ROTODE_DUAL_INLINE dual log(const dual& x) { return chain(x, std::log(x.v), 1.0 / x.v); }
ROTODE_DUAL_INLINE double atan(double x) { return std::atan(x); }
ROTODE_DUAL_INLINE dual atan(const dual& x) { return chain(x, std::atan(x.v), 1.0 / (1.0 + x.v * x.v)); }
ROTODE_DUAL_INLINE double fabs(double x) { return std::fabs(x); }
ROTODE_DUAL_INLINE dual fabs(const dual& x) { return x.v < 0.0 ? -x : x; }
ROTODE_DUAL_INLINE double atan2(double y, double x) { return std::atan2(y, x); }
ROTODE_DUAL_INLINE dual atan2(const dual& y, const dual& x) {
    // d atan2(y, x) = (x dy - y dx) / (x^2 + y^2)
    const double r2 = x.v * x.v + y.v * y.v;
    const dual_vec d = dualv::splat(x.v) * dualv::load(y) - dualv::splat(y.v) * dualv::load(x);
    return dualv::make(d * dualv::splat(1.0 / r2), std::atan2(y.v, x.v));
}
ROTODE_DUAL_INLINE dual atan2(const dual& y, double x) { return atan2(y, dual(x)); }
ROTODE_DUAL_INLINE dual atan2(double y, const dual& x) { return atan2(dual(y), x); }
ROTODE_DUAL_INLINE double asin(double x) { return std::asin(x); }
ROTODE_DUAL_INLINE dual asin(const dual& x) { return chain(x, std::asin(x.v), 1.0 / std::sqrt(1.0 - x.v * x.v)); }
ROTODE_DUAL_INLINE double acos(double x) { return std::acos(x); }
ROTODE_DUAL_INLINE dual acos(const dual& x) { return chain(x, std::acos(x.v), -1.0 / std::sqrt(1.0 - x.v * x.v)); }
ROTODE_DUAL_INLINE double sinh(double x) { return std::sinh(x); }
ROTODE_DUAL_INLINE dual sinh(const dual& x) { return chain(x, std::sinh(x.v), std::cosh(x.v)); }
ROTODE_DUAL_INLINE double cosh(double x) { return std::cosh(x); }
ROTODE_DUAL_INLINE dual cosh(const dual& x) { return chain(x, std::cosh(x.v), std::sinh(x.v)); }
ROTODE_DUAL_INLINE double pow(double x, double p) { return std::pow(x, p); }
ROTODE_DUAL_INLINE dual pow(const dual& x, double p) {
    const double y = std::pow(x.v, p);
    return chain(x, y, p * std::pow(x.v, p - 1.0));
}

}  // namespace rotode

#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif

#endif  // ROTODE_DUAL_HPP
