# Declarations of rotode/_rows.hpp: the batch loops of quaternion.multiply, quaternion.rotate,
# quaternion.to_matrix, so3.exp and so3.log over many rows, each compiled portable, AVX2 and
# AVX-512F and chosen at run time (Cython cannot attach a target instruction set to a
# function).  Every row has the bits of the scalar kernels of rotode/quaternion.pxd and
# rotode/so3.pxd.

cdef extern from "_rows.hpp" namespace "rotode" nogil:
    bint quat_mul_rows(const double* p, const double* q, double* out, Py_ssize_t n)
    bint quat_rotate_rows(const double* q, const double* v, double* out, Py_ssize_t n)
    bint quat_to_matrix_rows(const double* q, double* R, Py_ssize_t n)
    bint so3_exp_rows(const double* v, double* R, Py_ssize_t n)
    bint so3_log_rows(const double* R, double* v, Py_ssize_t n, int check)
    const char* rows_isa()
    void rows_set_simd(int level)
