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
#ifndef ROTODE_DUAL_HPP
#define ROTODE_DUAL_HPP

#include <cmath>

#define ROTODE_DUAL_N 7

namespace rotode {

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

// chain rule helper: result value fv, derivative scale fp (f'(x)), applied to x's tangents
inline dual chain(const dual& x, double fv, double fp) {
    dual r(fv);
    for (int i = 0; i < ROTODE_DUAL_N; ++i) r.d[i] = fp * x.d[i];
    return r;
}

// ---- arithmetic ------------------------------------------------------------------------
inline dual operator-(const dual& a) {
    dual r(-a.v);
    for (int i = 0; i < ROTODE_DUAL_N; ++i) r.d[i] = -a.d[i];
    return r;
}
inline dual operator+(const dual& a, const dual& b) {
    dual r(a.v + b.v);
    for (int i = 0; i < ROTODE_DUAL_N; ++i) r.d[i] = a.d[i] + b.d[i];
    return r;
}
inline dual operator+(const dual& a, double b) {
    dual r(a.v + b);
    for (int i = 0; i < ROTODE_DUAL_N; ++i) r.d[i] = a.d[i];
    return r;
}
inline dual operator+(double a, const dual& b) {
    dual r(a + b.v);
    for (int i = 0; i < ROTODE_DUAL_N; ++i) r.d[i] = b.d[i];
    return r;
}
inline dual operator-(const dual& a, const dual& b) {
    dual r(a.v - b.v);
    for (int i = 0; i < ROTODE_DUAL_N; ++i) r.d[i] = a.d[i] - b.d[i];
    return r;
}
inline dual operator-(const dual& a, double b) {
    dual r(a.v - b);
    for (int i = 0; i < ROTODE_DUAL_N; ++i) r.d[i] = a.d[i];
    return r;
}
inline dual operator-(double a, const dual& b) {
    dual r(a - b.v);
    for (int i = 0; i < ROTODE_DUAL_N; ++i) r.d[i] = -b.d[i];
    return r;
}
inline dual operator*(const dual& a, const dual& b) {
    dual r(a.v * b.v);
    for (int i = 0; i < ROTODE_DUAL_N; ++i) r.d[i] = a.d[i] * b.v + a.v * b.d[i];
    return r;
}
inline dual operator*(const dual& a, double b) {
    dual r(a.v * b);
    for (int i = 0; i < ROTODE_DUAL_N; ++i) r.d[i] = a.d[i] * b;
    return r;
}
inline dual operator*(double a, const dual& b) {
    dual r(a * b.v);
    for (int i = 0; i < ROTODE_DUAL_N; ++i) r.d[i] = a * b.d[i];
    return r;
}
inline dual operator/(const dual& a, const dual& b) {
    // (x, y)/(a, b) = (x/a, (y a - x b)/a^2), written as (y - (x/a) b)/a
    const double q = a.v / b.v;
    dual r(q);
    for (int i = 0; i < ROTODE_DUAL_N; ++i) r.d[i] = (a.d[i] - q * b.d[i]) / b.v;
    return r;
}
inline dual operator/(const dual& a, double b) {
    dual r(a.v / b);
    for (int i = 0; i < ROTODE_DUAL_N; ++i) r.d[i] = a.d[i] / b;
    return r;
}
inline dual operator/(double a, const dual& b) {
    const double q = a / b.v;
    dual r(q);
    for (int i = 0; i < ROTODE_DUAL_N; ++i) r.d[i] = -q * b.d[i] / b.v;
    return r;
}

// ---- comparisons act on the value part ------------------------------------------------
inline bool operator<(const dual& a, double b) { return a.v < b; }
inline bool operator<=(const dual& a, double b) { return a.v <= b; }
inline bool operator>(const dual& a, double b) { return a.v > b; }
inline bool operator>=(const dual& a, double b) { return a.v >= b; }
inline bool operator==(const dual& a, double b) { return a.v == b; }
inline bool operator!=(const dual& a, double b) { return a.v != b; }
inline bool operator<(const dual& a, const dual& b) { return a.v < b.v; }
inline bool operator<=(const dual& a, const dual& b) { return a.v <= b.v; }
inline bool operator>(const dual& a, const dual& b) { return a.v > b.v; }
inline bool operator>=(const dual& a, const dual& b) { return a.v >= b.v; }

// ---- elementary functions, double and dual overloads ----------------------------------
inline double value(double x) { return x; }
inline double value(const dual& x) { return x.v; }

inline double sqrt(double x) { return std::sqrt(x); }
inline dual sqrt(const dual& x) {
    const double s = std::sqrt(x.v);
    return chain(x, s, 0.5 / s);
}
inline double sin(double x) { return std::sin(x); }
inline dual sin(const dual& x) { return chain(x, std::sin(x.v), std::cos(x.v)); }
inline double cos(double x) { return std::cos(x); }
inline dual cos(const dual& x) { return chain(x, std::cos(x.v), -std::sin(x.v)); }
inline double tan(double x) { return std::tan(x); }
inline dual tan(const dual& x) {
    const double t = std::tan(x.v);
    return chain(x, t, 1.0 + t * t);
}
inline double exp(double x) { return std::exp(x); }
inline dual exp(const dual& x) {
    const double e = std::exp(x.v);
    return chain(x, e, e);
}
inline double log(double x) { return std::log(x); }
inline dual log(const dual& x) { return chain(x, std::log(x.v), 1.0 / x.v); }
inline double atan(double x) { return std::atan(x); }
inline dual atan(const dual& x) { return chain(x, std::atan(x.v), 1.0 / (1.0 + x.v * x.v)); }
inline double fabs(double x) { return std::fabs(x); }
inline dual fabs(const dual& x) { return x.v < 0.0 ? -x : x; }
inline double atan2(double y, double x) { return std::atan2(y, x); }
inline dual atan2(const dual& y, const dual& x) {
    // d atan2(y, x) = (x dy - y dx) / (x^2 + y^2)
    const double r2 = x.v * x.v + y.v * y.v;
    dual r(std::atan2(y.v, x.v));
    for (int i = 0; i < ROTODE_DUAL_N; ++i) r.d[i] = (x.v * y.d[i] - y.v * x.d[i]) / r2;
    return r;
}
inline dual atan2(const dual& y, double x) { return atan2(y, dual(x)); }
inline dual atan2(double y, const dual& x) { return atan2(dual(y), x); }
inline double asin(double x) { return std::asin(x); }
inline dual asin(const dual& x) { return chain(x, std::asin(x.v), 1.0 / std::sqrt(1.0 - x.v * x.v)); }
inline double acos(double x) { return std::acos(x); }
inline dual acos(const dual& x) { return chain(x, std::acos(x.v), -1.0 / std::sqrt(1.0 - x.v * x.v)); }
inline double sinh(double x) { return std::sinh(x); }
inline dual sinh(const dual& x) { return chain(x, std::sinh(x.v), std::cosh(x.v)); }
inline double cosh(double x) { return std::cosh(x); }
inline dual cosh(const dual& x) { return chain(x, std::cosh(x.v), std::sinh(x.v)); }
inline double pow(double x, double p) { return std::pow(x, p); }
inline dual pow(const dual& x, double p) {
    const double y = std::pow(x.v, p);
    return chain(x, y, p * std::pow(x.v, p - 1.0));
}

}  // namespace rotode

#endif  // ROTODE_DUAL_HPP
