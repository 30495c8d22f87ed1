# Declarations of rotode/_rodrigues.hpp: the Taylor polynomials of the sine family, Rodrigues'
# coefficients S1 = sin(a)/a, S2 = (1 - cos a)/a^2 from x = a^2 (and S3 of dexp, C of its
# inverse and the product T(v)^-1 w), the matrix
# alpha 1 + beta [v]x + gamma v v^T, and the coefficients' branch-free form that the batch loop
# of so3.exp (rotode/_rows.hpp) vectorises.
#
# They live in C++ so that one source serves the scalar kernels (double and dual, through the
# overloads below) and the batch loop, which is compiled three times (portable, AVX2, AVX-512F)
# and chosen at run time; Cython cannot attach a target instruction set to a function.
from rotode.dual cimport dual

cdef extern from "_rodrigues.hpp" namespace "rotode" nogil:
    double taylor_cos(double x)
    dual taylor_cos(dual x)
    double taylor_sinc(double x)
    dual taylor_sinc(dual x)
    double taylor_s2(double x)
    dual taylor_s2(dual x)
    double taylor_s3(double x)
    dual taylor_s3(dual x)

    void rodrigues_double_angle(double x, double P, double Q, double* s1, double* s2)
    void rodrigues_double_angle(dual x, dual P, dual Q, dual* s1, dual* s2)
    void so3_exp_coefficients(double x, double* s1, double* s2)
    void so3_exp_coefficients(dual x, dual* s1, dual* s2)

    void so3_coefficients(double x, double* s1, double* s2, double* s3)
    void so3_coefficients(dual x, dual* s1, dual* s2, dual* s3)
    double so3_dexp_inv_coefficient(double x)
    dual so3_dexp_inv_coefficient(dual x)
    void so3_dexp_inv_apply(const double* v, const double* w, double* out)
    void so3_dexp_inv_apply(const dual* v, const dual* w, dual* out)

    void axis_matrix(const double* v, double alpha, double beta, double gamma, double* M)
    void axis_matrix(const dual* v, dual alpha, dual beta, dual gamma, dual* M)
