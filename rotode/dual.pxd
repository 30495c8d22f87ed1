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
    # the elementary functions, one template each over the scalar T (double or dual, deduced
    # from the argument; both arguments of real_atan2 of one type)
    T real_sqrt[T](T)
    T real_sin[T](T)
    T real_cos[T](T)
    T real_tan[T](T)
    T real_exp[T](T)
    T real_log[T](T)
    T real_atan[T](T)
    T real_atan2[T](T, T)
    T real_asin[T](T)
    T real_acos[T](T)
    T real_sinh[T](T)
    T real_cosh[T](T)
    T real_fabs[T](T)
    T real_pow[T](T, double)


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
