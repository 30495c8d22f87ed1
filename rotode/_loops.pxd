# Vectorised drivers (layer 3 helpers): apply a per-element kernel over a batch of rows with
# the GIL released, in parallel (OpenMP) for large batches.  Results do not depend on the
# number of threads: every row is computed by the same kernel independently.  Every parallel
# loop of rotode takes its thread count from `thread_count` or `use_threads` (fork safety).
from rotode.dual cimport dual

ctypedef void (*unary_kernel)(const double*, double*) noexcept nogil
ctypedef void (*binary_kernel)(const double*, const double*, double*) noexcept nogil
ctypedef void (*unary_dual_kernel)(const dual*, dual*) noexcept nogil


cdef int thread_count(int requested) noexcept nogil
cdef bint use_threads(Py_ssize_t n) noexcept nogil

cdef void map_unary(unary_kernel f, const double[:, ::1] x, double[:, ::1] out) noexcept nogil
cdef void map_binary(binary_kernel f, const double[:, ::1] a, const double[:, ::1] b,
                     double[:, ::1] out) noexcept nogil
cdef void jacobian_unary(unary_dual_kernel f, const double[:, ::1] x, double[:, ::1] value,
                         double[:, ::1] jac) noexcept nogil

cdef object apply_unary(unary_kernel f, object x, int ndim_in, tuple out_trailing)
cdef object apply_binary(binary_kernel f, object a, int ka, object b, int kb,
                         tuple out_trailing)

# Single-rotation fast path (shapes (4,), (3,), (3, 3)): the facades skip the batch machinery
# when every input is one valid float64 array.  `read_single` copies such an input into `out`
# and says whether it qualified; anything else (other dtypes, shapes, lists, non-finite or
# invalid values) takes the general path, which gives the same results and raises the errors.
cdef bint read_single(object x, int ndim, Py_ssize_t n, double* out) noexcept
cdef bint read_single_quaternion(object x, double* out) noexcept
cdef object new_single(int ndim, Py_ssize_t n)
cdef double* single_data(object a) noexcept
