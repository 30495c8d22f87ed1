"""Vectorised drivers shared by the kernel facades (see _loops.pxd)."""
import numpy as np

from cython.parallel cimport prange

from rotode.dual cimport dual, seed_duals

# Batches at least this long are split over OpenMP threads.
cdef Py_ssize_t PARALLEL_MIN_ROWS = 1 << 14


cdef void map_unary(unary_kernel f, const double[:, ::1] x, double[:, ::1] out) noexcept nogil:
    """out[i] = f(x[i]) for every row i (OUT: out)."""
    cdef Py_ssize_t i, n = x.shape[0]
    for i in prange(n, schedule="static", use_threads_if=n >= PARALLEL_MIN_ROWS):
        f(&x[i, 0], &out[i, 0])


cdef void map_binary(binary_kernel f, const double[:, ::1] a, const double[:, ::1] b,
                     double[:, ::1] out) noexcept nogil:
    """out[i] = f(a[i], b[i]) for every row i (OUT: out)."""
    cdef Py_ssize_t i, n = a.shape[0]
    for i in prange(n, schedule="static", use_threads_if=n >= PARALLEL_MIN_ROWS):
        f(&a[i, 0], &b[i, 0], &out[i, 0])


cdef void jacobian_unary(unary_dual_kernel f, const double[:, ::1] x, double[:, ::1] value,
                         double[:, ::1] jac) noexcept nogil:
    """Value and row-major Jacobian of a kernel R^m -> R^k by one dual evaluation per row.

    x: (n, m) with m <= DUAL_N; value: (n, k); jac: (n, k*m), jac[i, r*m + c] = d f_r / d x_c
    (OUT: value, jac).
    """
    cdef Py_ssize_t i, r, c, n = x.shape[0]
    cdef int m = <int>x.shape[1], k = <int>value.shape[1]
    cdef dual xin[8]
    cdef dual yout[16]
    for i in range(n):
        seed_duals(&x[i, 0], m, 0, xin)
        f(xin, yout)
        for r in range(k):
            value[i, r] = yout[r].v
            for c in range(m):
                jac[i, r * m + c] = yout[r].d[c]


def all_finite(const double[::1] x):
    """True when every element of a contiguous float64 buffer is finite (no temporaries)."""
    cdef Py_ssize_t i, n = x.shape[0]
    cdef int bad = 0
    for i in prange(n, nogil=True, schedule="static", use_threads_if=n >= PARALLEL_MIN_ROWS):
        if not (x[i] - x[i] == 0.0):  # false exactly for NaN and +-inf
            bad += 1
    return bad == 0


cdef object apply_unary(unary_kernel f, object x, int ndim_in, tuple out_trailing):
    """Apply ``f`` to each element of a C-contiguous float64 batch whose elements are its
    last ``ndim_in`` dimensions; returns a new array of shape batch + out_trailing."""
    batch = x.shape[:x.ndim - ndim_in]
    cdef Py_ssize_t n = int(np.prod(batch)), k_out = int(np.prod(out_trailing))
    cdef const double[:, ::1] xin = x.reshape(n, -1) if n else np.empty((0, 1))
    out = np.empty(batch + out_trailing)
    if n:
        map_unary(f, xin, out.reshape(n, k_out))
    return out


cdef object apply_binary(binary_kernel f, object a, int ka, object b, int kb,
                         tuple out_trailing):
    """Apply ``f`` row-wise to two batches of vectors (last dims ka, kb) broadcast together."""
    batch = np.broadcast_shapes(a.shape[:a.ndim - 1], b.shape[:b.ndim - 1])
    cdef Py_ssize_t n = int(np.prod(batch)), k_out = int(np.prod(out_trailing))
    out = np.empty(batch + out_trailing)
    if n == 0:
        return out
    cdef const double[:, ::1] ain = np.ascontiguousarray(
        np.broadcast_to(a, batch + (ka,))).reshape(n, ka)
    cdef const double[:, ::1] bin = np.ascontiguousarray(
        np.broadcast_to(b, batch + (kb,))).reshape(n, kb)
    map_binary(f, ain, bin, out.reshape(n, k_out))
    return out
