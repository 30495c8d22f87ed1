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
// them as one GCC vector of 8 (`dual_vec`: one AVX-512 register; without AVX-512 such a vector
// has no register mode and lives in memory, hence `dualp<H>` below for the tangent entries of
// the other sets), the value lane then set to the
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

// The elementary functions under the names rotode/dual.pxd gives them (`real_sin`, ...), as
// templates over the scalar (double or dual): Cython declares each once, for its fused `real`,
// and writes a call rotode::real_sin<T>(x) with T the argument's type.
#define ROTODE_REAL_FUNCTION(f) \
    template <class T> ROTODE_DUAL_INLINE T real_##f(const T& x) { return f(x); }
ROTODE_REAL_FUNCTION(sqrt)
ROTODE_REAL_FUNCTION(sin)
ROTODE_REAL_FUNCTION(cos)
ROTODE_REAL_FUNCTION(tan)
ROTODE_REAL_FUNCTION(exp)
ROTODE_REAL_FUNCTION(log)
ROTODE_REAL_FUNCTION(atan)
ROTODE_REAL_FUNCTION(asin)
ROTODE_REAL_FUNCTION(acos)
ROTODE_REAL_FUNCTION(sinh)
ROTODE_REAL_FUNCTION(cosh)
ROTODE_REAL_FUNCTION(fabs)
#undef ROTODE_REAL_FUNCTION
template <class T> ROTODE_DUAL_INLINE T real_atan2(const T& y, const T& x) { return atan2(y, x); }
template <class T> ROTODE_DUAL_INLINE T real_pow(const T& x, double p) { return pow(x, p); }

// ---- dualp<H>: the same number in H vectors ------------------------------------------------
// A `dual` is one 64-byte vector, one register where AVX-512 is, but GCC has no 512-bit mode
// on other instruction sets: such a vector lives in memory there, and every operation on it
// goes through the stack piece by piece (the AVX2 sensitivity passes took 15-20x the plain
// run). `dualp<H>` holds the same 8 doubles, [v, d0 .. d6], as H vectors of 8/H: `dual2` (two
// 4-vectors, two ymm registers on AVX2) for the AVX2 tangent entries, `dual4` (four
// 2-vectors: SSE2, NEON) for the baseline ones (rotode/_tangent.hpp). Every lane does a
// `dual` operation's arithmetic in that operation's order (a product's value a.v b.v, its
// tangents a.d b.v + a.v b.d; a quotient's by the divisor's reciprocal), so the types give
// the same bits.
template <int H>
struct DualPart {
    typedef double type __attribute__((vector_size(64 / H)));
    typedef long long index __attribute__((vector_size(64 / H)));
};

template <int H>
struct dualp {
    typedef typename DualPart<H>::type part;
    static constexpr int L = 8 / H;             // lanes per part
    part p[H];

    dualp() {
        for (int i = 0; i < H; ++i) p[i] = part{};
    }
    dualp(double x) {
        p[0] = part{x};
        for (int i = 1; i < H; ++i) p[i] = part{};
    }
    dualp& operator=(double x) {
        p[0] = part{x};
        for (int i = 1; i < H; ++i) p[i] = part{};
        return *this;
    }
};
typedef dualp<2> dual2;
typedef dualp<4> dual4;

// the value part, and tangent component j (j < ROTODE_DUAL_N), read and written
template <int H> ROTODE_DUAL_INLINE double value_of(const dualp<H>& x) { return x.p[0][0]; }
template <int H> ROTODE_DUAL_INLINE double value(const dualp<H>& x) { return x.p[0][0]; }
template <int H> ROTODE_DUAL_INLINE double tangent_of(const dualp<H>& x, int j) {
    return x.p[(j + 1) / dualp<H>::L][(j + 1) % dualp<H>::L];
}
template <int H> ROTODE_DUAL_INLINE void set_tangent(dualp<H>& x, int j, double d) {
    x.p[(j + 1) / dualp<H>::L][(j + 1) % dualp<H>::L] = d;
}
ROTODE_DUAL_INLINE double tangent_of(const dual& x, int j) { return x.d[j]; }
ROTODE_DUAL_INLINE void set_tangent(dual& x, int j, double d) { x.d[j] = d; }

namespace dualh {
// x in every lane (a two-operand shuffle: `splat` of dualv says why)
template <int H>
ROTODE_DUAL_INLINE typename DualPart<H>::type splat(double x) {
    typedef typename DualPart<H>::type V;
    typedef typename DualPart<H>::index I;
    const V t = {x};
#if defined(__clang__)
    if constexpr (H == 2) return __builtin_shufflevector(t, t, 0, 0, 0, 0);
    else return __builtin_shufflevector(t, t, 0, 0);
#else
    if constexpr (H == 2) return __builtin_shuffle(t, t, I{0, 0, 0, 0});
    else return __builtin_shuffle(t, t, I{0, 0});
#endif
}
// x with its lane 0 taken from y
template <int H>
ROTODE_DUAL_INLINE typename DualPart<H>::type with_value(typename DualPart<H>::type x,
                                                         typename DualPart<H>::type y) {
#if defined(__clang__)
    if constexpr (H == 2) return __builtin_shufflevector(x, y, 4, 1, 2, 3);
    else return __builtin_shufflevector(x, y, 2, 1);
#else
    typedef typename DualPart<H>::index I;
    if constexpr (H == 2) return __builtin_shuffle(x, y, I{4, 1, 2, 3});
    else return __builtin_shuffle(x, y, I{2, 1});
#endif
}
// r.p[0] with its value lane set to v (IN/OUT: r)
template <int H> ROTODE_DUAL_INLINE dualp<H> valued(dualp<H> r, double v) {
    r.p[0] = with_value<H>(r.p[0], splat<H>(v));
    return r;
}
}  // namespace dualh
static_assert(sizeof(dual2) == sizeof(dual) && sizeof(dual4) == sizeof(dual), "8 doubles");

template <int H>
ROTODE_DUAL_INLINE dualp<H> chain(const dualp<H>& x, double fv, double fp) {
    const auto s = dualh::splat<H>(fp);
    dualp<H> r;
    for (int i = 0; i < H; ++i) r.p[i] = s * x.p[i];
    return dualh::valued(r, fv);
}

template <int H> ROTODE_DUAL_INLINE dualp<H> operator-(const dualp<H>& a) {
    dualp<H> r;
    for (int i = 0; i < H; ++i) r.p[i] = -a.p[i];
    return r;
}
template <int H>
ROTODE_DUAL_INLINE dualp<H> operator+(const dualp<H>& a, const dualp<H>& b) {
    dualp<H> r;
    for (int i = 0; i < H; ++i) r.p[i] = a.p[i] + b.p[i];
    return r;
}
template <int H> ROTODE_DUAL_INLINE dualp<H> operator+(const dualp<H>& a, double b) {
    return dualh::valued(a, value(a) + b);
}
template <int H> ROTODE_DUAL_INLINE dualp<H> operator+(double a, const dualp<H>& b) {
    return dualh::valued(b, a + value(b));
}
template <int H>
ROTODE_DUAL_INLINE dualp<H> operator-(const dualp<H>& a, const dualp<H>& b) {
    dualp<H> r;
    for (int i = 0; i < H; ++i) r.p[i] = a.p[i] - b.p[i];
    return r;
}
template <int H> ROTODE_DUAL_INLINE dualp<H> operator-(const dualp<H>& a, double b) {
    return dualh::valued(a, value(a) - b);
}
template <int H> ROTODE_DUAL_INLINE dualp<H> operator-(double a, const dualp<H>& b) {
    return dualh::valued(-b, a - value(b));
}
template <int H>
ROTODE_DUAL_INLINE dualp<H> operator*(const dualp<H>& a, const dualp<H>& b) {
    const auto sb = dualh::splat<H>(value(b)), sa = dualh::splat<H>(value(a));
    const auto p0 = a.p[0] * sb;                       // lane 0: a.v b.v
    dualp<H> r;
    r.p[0] = dualh::with_value<H>(p0 + sa * b.p[0], p0);
    for (int i = 1; i < H; ++i) r.p[i] = a.p[i] * sb + sa * b.p[i];
    return r;
}
template <int H> ROTODE_DUAL_INLINE dualp<H> operator*(const dualp<H>& a, double b) {
    const auto s = dualh::splat<H>(b);
    dualp<H> r;
    for (int i = 0; i < H; ++i) r.p[i] = a.p[i] * s;
    return r;
}
template <int H> ROTODE_DUAL_INLINE dualp<H> operator*(double a, const dualp<H>& b) {
    const auto s = dualh::splat<H>(a);
    dualp<H> r;
    for (int i = 0; i < H; ++i) r.p[i] = s * b.p[i];
    return r;
}
template <int H>
ROTODE_DUAL_INLINE dualp<H> operator/(const dualp<H>& a, const dualp<H>& b) {
    const double q = value(a) / value(b), rb = 1.0 / value(b);
    const auto sq = dualh::splat<H>(q), sr = dualh::splat<H>(rb);
    dualp<H> r;
    for (int i = 0; i < H; ++i) r.p[i] = (a.p[i] - sq * b.p[i]) * sr;
    return dualh::valued(r, q);
}
template <int H> ROTODE_DUAL_INLINE dualp<H> operator/(const dualp<H>& a, double b) {
    const auto s = dualh::splat<H>(b);
    dualp<H> r;
    for (int i = 0; i < H; ++i) r.p[i] = a.p[i] / s;
    return r;
}
template <int H> ROTODE_DUAL_INLINE dualp<H> operator/(double a, const dualp<H>& b) {
    const double q = a / value(b), c = -q / value(b);
    return dualh::valued(c * b, q);
}

template <int H> ROTODE_DUAL_INLINE bool operator<(const dualp<H>& a, double b) {
    return value(a) < b;
}
template <int H> ROTODE_DUAL_INLINE bool operator<=(const dualp<H>& a, double b) {
    return value(a) <= b;
}
template <int H> ROTODE_DUAL_INLINE bool operator>(const dualp<H>& a, double b) {
    return value(a) > b;
}
template <int H> ROTODE_DUAL_INLINE bool operator>=(const dualp<H>& a, double b) {
    return value(a) >= b;
}
template <int H> ROTODE_DUAL_INLINE bool operator==(const dualp<H>& a, double b) {
    return value(a) == b;
}
template <int H> ROTODE_DUAL_INLINE bool operator!=(const dualp<H>& a, double b) {
    return value(a) != b;
}
template <int H> ROTODE_DUAL_INLINE bool operator<(const dualp<H>& a, const dualp<H>& b) {
    return value(a) < value(b);
}
template <int H> ROTODE_DUAL_INLINE bool operator<=(const dualp<H>& a, const dualp<H>& b) {
    return value(a) <= value(b);
}
template <int H> ROTODE_DUAL_INLINE bool operator>(const dualp<H>& a, const dualp<H>& b) {
    return value(a) > value(b);
}
template <int H> ROTODE_DUAL_INLINE bool operator>=(const dualp<H>& a, const dualp<H>& b) {
    return value(a) >= value(b);
}

template <int H> ROTODE_DUAL_INLINE dualp<H> sqrt(const dualp<H>& x) {
    const double s = std::sqrt(value(x));
    return chain(x, s, 0.5 / s);
}
template <int H> ROTODE_DUAL_INLINE dualp<H> sin(const dualp<H>& x) {
    return chain(x, std::sin(value(x)), std::cos(value(x)));
}
template <int H> ROTODE_DUAL_INLINE dualp<H> cos(const dualp<H>& x) {
    return chain(x, std::cos(value(x)), -std::sin(value(x)));
}
template <int H> ROTODE_DUAL_INLINE dualp<H> tan(const dualp<H>& x) {
    const double t = std::tan(value(x));
    return chain(x, t, 1.0 + t * t);
}
template <int H> ROTODE_DUAL_INLINE dualp<H> exp(const dualp<H>& x) {
    const double e = std::exp(value(x));
    return chain(x, e, e);
}
template <int H> ROTODE_DUAL_INLINE dualp<H> log(const dualp<H>& x) {
    return chain(x, std::log(value(x)), 1.0 / value(x));
}
template <int H> ROTODE_DUAL_INLINE dualp<H> atan(const dualp<H>& x) {
    return chain(x, std::atan(value(x)), 1.0 / (1.0 + value(x) * value(x)));
}
template <int H> ROTODE_DUAL_INLINE dualp<H> fabs(const dualp<H>& x) {
    return value(x) < 0.0 ? -x : x;
}
template <int H>
ROTODE_DUAL_INLINE dualp<H> atan2(const dualp<H>& y, const dualp<H>& x) {
    const double r2 = value(x) * value(x) + value(y) * value(y);
    const auto sx = dualh::splat<H>(value(x)), sy = dualh::splat<H>(value(y));
    const auto s = dualh::splat<H>(1.0 / r2);
    dualp<H> r;
    for (int i = 0; i < H; ++i) r.p[i] = (sx * y.p[i] - sy * x.p[i]) * s;
    return dualh::valued(r, std::atan2(value(y), value(x)));
}
template <int H> ROTODE_DUAL_INLINE dualp<H> asin(const dualp<H>& x) {
    return chain(x, std::asin(value(x)), 1.0 / std::sqrt(1.0 - value(x) * value(x)));
}
template <int H> ROTODE_DUAL_INLINE dualp<H> acos(const dualp<H>& x) {
    return chain(x, std::acos(value(x)), -1.0 / std::sqrt(1.0 - value(x) * value(x)));
}
template <int H> ROTODE_DUAL_INLINE dualp<H> sinh(const dualp<H>& x) {
    return chain(x, std::sinh(value(x)), std::cosh(value(x)));
}
template <int H> ROTODE_DUAL_INLINE dualp<H> cosh(const dualp<H>& x) {
    return chain(x, std::cosh(value(x)), std::sinh(value(x)));
}
template <int H> ROTODE_DUAL_INLINE dualp<H> pow(const dualp<H>& x, double p) {
    const double y = std::pow(value(x), p);
    return chain(x, y, p * std::pow(value(x), p - 1.0));
}

}  // namespace rotode

#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif

#endif  // ROTODE_DUAL_HPP
