# Dual numbers ([DUAL]) for forward-mode derivatives of rotode kernels.
#
# `real` is the fused scalar type every generic kernel is written in: its `double`
# specialisation is the production path and its `dual` specialisation yields Jacobians from the
# same source.  The C++ type lives in _dual.hpp; arithmetic, comparisons and the elementary
# functions are overloaded there for both `double` and `dual`; generic code calls them as
# `real_sin(x)`, `real_sqrt(x)`, ... (prefixed so that `from rotode.dual cimport *`, which Cython
# needs to see the non-member operators such as `double - dual`, never shadows facade names
# like `exp` and `log`).

cdef extern from "_dual.hpp" namespace "rotode" nogil:
    const int DUAL_N "ROTODE_DUAL_N"

    cdef cppclass dual:
        double v
        double d[7]
        dual()
        dual(double)
        dual& operator=(double)
        dual operator-()
        dual operator+(dual)
        dual operator+(double)
        dual operator-(dual)
        dual operator-(double)
        dual operator*(dual)
        dual operator*(double)
        dual operator/(dual)
        dual operator/(double)
        bint operator==(double)
        bint operator!=(double)
        bint operator<(dual)
        bint operator<(double)
        bint operator<=(dual)
        bint operator<=(double)
        bint operator>(dual)
        bint operator>(double)
        bint operator>=(dual)
        bint operator>=(double)

    dual operator+(double, dual)
    dual operator-(double, dual)
    dual operator*(double, dual)
    dual operator/(double, dual)

    double value(double)
    double value(dual)
    double real_sqrt "rotode::sqrt"(double)
    dual real_sqrt "rotode::sqrt"(dual)
    double real_sin "rotode::sin"(double)
    dual real_sin "rotode::sin"(dual)
    double real_cos "rotode::cos"(double)
    dual real_cos "rotode::cos"(dual)
    double real_tan "rotode::tan"(double)
    dual real_tan "rotode::tan"(dual)
    double real_exp "rotode::exp"(double)
    dual real_exp "rotode::exp"(dual)
    double real_log "rotode::log"(double)
    dual real_log "rotode::log"(dual)
    double real_atan "rotode::atan"(double)
    dual real_atan "rotode::atan"(dual)
    double real_atan2 "rotode::atan2"(double, double)
    dual real_atan2 "rotode::atan2"(dual, dual)
    dual real_atan2 "rotode::atan2"(dual, double)
    dual real_atan2 "rotode::atan2"(double, dual)
    double real_asin "rotode::asin"(double)
    dual real_asin "rotode::asin"(dual)
    double real_acos "rotode::acos"(double)
    dual real_acos "rotode::acos"(dual)
    double real_sinh "rotode::sinh"(double)
    dual real_sinh "rotode::sinh"(dual)
    double real_cosh "rotode::cosh"(double)
    dual real_cosh "rotode::cosh"(dual)
    double real_fabs "rotode::fabs"(double)
    dual real_fabs "rotode::fabs"(dual)
    double real_pow "rotode::pow"(double, double)
    dual real_pow "rotode::pow"(dual, double)


ctypedef fused real:
    double
    dual


cdef inline void seed_duals(const double* x, int n, int offset, dual* out) noexcept nogil:
    """Set out[i] = x[i] + eps_(offset + i) (tangent `offset + i` seeded with 1)."""
    cdef int i
    for i in range(n):
        out[i] = dual(x[i])
        if 0 <= offset + i < DUAL_N:
            out[i].d[offset + i] = 1.0


cdef inline void dual_values(const dual* x, int n, double* out) noexcept nogil:
    """Value parts of n duals (OUT: out[n])."""
    cdef int i
    for i in range(n):
        out[i] = x[i].v


cdef inline void dual_tangents(const dual* x, int n, int m, double* out) noexcept nogil:
    """Row-major (n, m) Jacobian block from the first m tangents of n duals (OUT: out[n*m])."""
    cdef int i, j
    for i in range(n):
        for j in range(m):
            out[i * m + j] = x[i].d[j]
