"""Vectorised drivers shared by the kernel facades (see _loops.pxd)."""
import os
from math import prod

import numpy as np

cimport numpy as cnp
from cython.parallel cimport prange
from libc.math cimport INFINITY, fabs, isfinite

from rotode.dual cimport dual, seed_duals

cnp.import_array()

# |q|^2 at or below this makes 2/|q|^2 overflow or lose all precision: such a quaternion is
# treated as zero (rejected) by every facade.
TINY_NORM2 = 1e-300
cdef double _TINY_NORM2 = TINY_NORM2

# Batches at least this long are split over OpenMP threads.
cdef Py_ssize_t PARALLEL_MIN_ROWS = 1 << 14

# GNU OpenMP (libgomp) cannot start a team of threads in a process forked from one in which it
# had started a team: the child inherits the record of a thread pool whose threads do not exist
# and waits for them forever.  Every parallel loop of rotode asks `thread_count`/`use_threads`
# first; in such a child they answer "one thread", so the work runs serially instead of hanging
# (multiprocessing's "fork" start method, asv's forked benchmark processes, ...).
cdef bint _teams_started = False
cdef bint _forked_after_teams = False


def _after_fork_in_child():
    global _forked_after_teams
    _forked_after_teams = _forked_after_teams or _teams_started


os.register_at_fork(after_in_child=_after_fork_in_child)


def threads_available():
    """False in a process forked after rotode ran threads (rotode then runs serially)."""
    return not _forked_after_teams


cdef int thread_count(int requested) noexcept nogil:
    """The number of threads a parallel loop asking for ``requested`` may use (>= 1)."""
    global _teams_started
    if requested <= 1 or _forked_after_teams:
        return 1
    _teams_started = True
    return requested


cdef bint use_threads(Py_ssize_t n) noexcept nogil:
    """Whether a batch of ``n`` rows runs on the default team of threads."""
    global _teams_started
    if n < PARALLEL_MIN_ROWS or _forked_after_teams:
        return False
    _teams_started = True
    return True


cdef void map_unary(unary_kernel f, const double[:, ::1] x, double[:, ::1] out) noexcept nogil:
    """out[i] = f(x[i]) for every row i (OUT: out)."""
    cdef Py_ssize_t i, n = x.shape[0]
    if not use_threads(n):      # no OpenMP region for short batches (~1 us to enter one)
        for i in range(n):
            f(&x[i, 0], &out[i, 0])
        return
    for i in prange(n, schedule="dynamic", chunksize=1024):
        f(&x[i, 0], &out[i, 0])


cdef void map_binary(binary_kernel f, const double[:, ::1] a, const double[:, ::1] b,
                     double[:, ::1] out) noexcept nogil:
    """out[i] = f(a[i], b[i]) for every row i (OUT: out)."""
    cdef Py_ssize_t i, n = a.shape[0]
    if not use_threads(n):
        for i in range(n):
            f(&a[i, 0], &b[i, 0], &out[i, 0])
        return
    for i in prange(n, schedule="dynamic", chunksize=1024):
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
    return all_abs_below(x, INFINITY)  # |x| < inf is false exactly for NaN and +-inf


def all_abs_below(const double[::1] x, double bound):
    """True when every |x[i]| < bound (false for NaN), in one parallel pass."""
    cdef Py_ssize_t i, n = x.shape[0]
    cdef int bad = 0
    if not use_threads(n):          # short buffers: no OpenMP region at all (~1 us to enter)
        for i in range(n):
            if not (x[i] < bound and -x[i] < bound):
                return False
        return True
    for i in prange(n, nogil=True, schedule="dynamic", chunksize=4096):
        if not (x[i] < bound and -x[i] < bound):
            bad += 1
    return bad == 0


cdef object apply_unary(unary_kernel f, object x, int ndim_in, tuple out_trailing):
    """Apply ``f`` to each element of a C-contiguous float64 batch whose elements are its
    last ``ndim_in`` dimensions; returns a new array of shape batch + out_trailing."""
    batch = x.shape[:x.ndim - ndim_in]
    cdef Py_ssize_t n = prod(batch), k_out = prod(out_trailing)
    cdef const double[:, ::1] xin = x.reshape(n, -1) if n else np.empty((0, 1))
    out = np.empty(batch + out_trailing)
    if n:
        map_unary(f, xin, out.reshape(n, k_out))
    return out


cdef object apply_binary(binary_kernel f, object a, int ka, object b, int kb,
                         tuple out_trailing):
    """Apply ``f`` row-wise to two batches of vectors (last dims ka, kb) broadcast together."""
    batch = a.shape[:a.ndim - 1]
    if b.shape[:b.ndim - 1] != batch:
        batch = np.broadcast_shapes(batch, b.shape[:b.ndim - 1])
    cdef Py_ssize_t n = prod(batch), k_out = prod(out_trailing)
    out = np.empty(batch + out_trailing)
    if n == 0:
        return out
    cdef const double[:, ::1] ain = np.ascontiguousarray(
        np.broadcast_to(a, batch + (ka,))).reshape(n, ka)
    cdef const double[:, ::1] bin = np.ascontiguousarray(
        np.broadcast_to(b, batch + (kb,))).reshape(n, kb)
    map_binary(f, ain, bin, out.reshape(n, k_out))
    return out


cdef bint read_single(object x, int ndim, Py_ssize_t n, double* out) noexcept:
    """Copy ``x`` into ``out`` if it is a finite float64 array of shape (n,) (ndim 1) or
    (n, n) (ndim 2), in native byte order; any strides.  Return whether it was."""
    if type(x) is not cnp.ndarray:
        return False
    cdef cnp.ndarray a = <cnp.ndarray>x
    if (cnp.PyArray_TYPE(a) != cnp.NPY_DOUBLE or cnp.PyArray_NDIM(a) != ndim
            or not cnp.PyArray_ISNOTSWAPPED(a) or not cnp.PyArray_ISALIGNED(a)):
        return False
    cdef cnp.npy_intp* dims = cnp.PyArray_DIMS(a)
    cdef cnp.npy_intp* strides = cnp.PyArray_STRIDES(a)
    cdef char* data = cnp.PyArray_BYTES(a)
    if dims[0] != n or (ndim == 2 and dims[1] != n):
        return False
    cdef Py_ssize_t i, j, rows = n if ndim == 2 else 1
    cdef Py_ssize_t row_stride = strides[0] if ndim == 2 else 0
    cdef Py_ssize_t col_stride = strides[ndim - 1]
    for i in range(rows):
        for j in range(n):
            out[i * n + j] = (<double*>(data + i * row_stride + j * col_stride))[0]
            if not isfinite(out[i * n + j]):
                return False
    return True


cdef bint read_single_quaternion(object x, double* out) noexcept:
    """`read_single` for one nonzero quaternion (|q|^2 finite and above TINY_NORM2)."""
    if not read_single(x, 1, 4, out):
        return False
    cdef double n2 = out[0] * out[0] + out[1] * out[1] + out[2] * out[2] + out[3] * out[3]
    return n2 > _TINY_NORM2 and isfinite(n2)


cdef object new_single(int ndim, Py_ssize_t n):
    """A new C-contiguous float64 array of shape (n,) (ndim 1) or (n, n) (ndim 2)."""
    cdef cnp.npy_intp dims[2]
    dims[0] = n
    dims[1] = n
    return cnp.PyArray_EMPTY(ndim, dims, cnp.NPY_DOUBLE, 0)


cdef double* single_data(object a) noexcept:
    """The data pointer of an array made by `new_single`."""
    return <double*>cnp.PyArray_DATA(<cnp.ndarray>a)


def step_grid_ok(const double[::1] t, const Py_ssize_t[::1] save):
    """True when ``t`` is strictly monotonic and ``save`` holds strictly increasing indices
    into it (the checks of `rotode._validation.as_step_grid`, in one pass, no temporaries)."""
    cdef Py_ssize_t i, n = t.shape[0], m = save.shape[0]
    cdef double d
    cdef bint up = n < 2 or t[1] > t[0], ok = True
    with nogil:
        for i in range(1, n):
            d = t[i] - t[i - 1]
            if not (d > 0.0 if up else d < 0.0):
                ok = False
                break
    if not ok:
        return False
    if m and (save[0] < 0 or save[m - 1] >= n):
        return False
    for i in range(1, m):
        if save[i] <= save[i - 1]:
            return False
    return True


def snap_times(const double[::1] grid, const double[::1] te, double t0, double direction,
               double tol):
    """For each requested time ``te[k]``, the index of the grid point it lands on, or -1.

    ``grid`` and ``te`` are strictly monotonic in ``direction`` (+1 or -1) from ``t0``; on
    s = direction (t - t0), the candidates of te[k] are the first grid point at or after it
    (the index `numpy.searchsorted` gives), then the one before; a candidate is taken when it
    equals te[k], or lies inside the grid (neither end) within ``tol`` of it.  A grid point
    takes one requested time: of two within ``tol`` of the same point, the nearer (the first
    on a tie) lands on it and the other gets -1 (a point of its own).  What
    `rotode._plan.time_grid` snaps onto the requested times, in one merge of the two arrays
    (O(n + m); a 1 kHz recording has 10^5 output times).
    """
    cdef Py_ssize_t n = grid.shape[0], m = te.shape[0], last = n - 1, p = 0, k, c
    cdef Py_ssize_t holder = -1                    # the time that holds grid point c_held
    cdef Py_ssize_t c_held = -1
    out = np.empty(m, dtype=np.intp)
    cdef Py_ssize_t[::1] snapped = out
    cdef double se, d, d_held = 0.0
    with nogil:
        for k in range(m):
            se = direction * (te[k] - t0)
            while p < n and direction * (grid[p] - t0) < se:
                p += 1
            snapped[k] = -1
            for c in range(p, p - 2, -1):          # p, then p - 1
                if c < 0 or c > last:
                    continue
                d = fabs(direction * (grid[c] - t0) - se)
                if d == 0.0 or (0 < c < last and d <= tol):
                    if c == c_held:
                        if d >= d_held:
                            break                  # the earlier time keeps the point
                        snapped[holder] = -1
                    snapped[k] = c
                    holder, c_held, d_held = k, c, d
                    break
    return out


def eval_times_fault(const double[::1] te, double t0, double tf):
    """What is wrong with requested output times ``te`` for a run from t0 to tf: 0 nothing
    (strictly monotonic in the direction of tf - t0, inside [t0, tf]), 1 not strictly
    monotonic, 2 outside the span (in one pass, without NumPy's temporaries)."""
    cdef Py_ssize_t i, n = te.shape[0]
    cdef double lo = t0 if t0 < tf else tf, hi = tf if t0 < tf else t0
    cdef bint up = tf > t0
    for i in range(1, n):
        if not (te[i] > te[i - 1] if up else te[i] < te[i - 1]):
            return 1
    for i in range(n):
        if not (lo <= te[i] <= hi):
            return 2
    return 0


def merge_times(const double[::1] a, const double[::1] b, double direction):
    """The union of two time arrays strictly monotonic in ``direction`` (+1 or -1), in that
    order, each time once, and the index of each ``b[k]`` in it: ``np.unique`` of the two
    (reversed for -1) and `numpy.searchsorted` in one merge (O(n + m))."""
    cdef Py_ssize_t n = a.shape[0], m = b.shape[0], i = 0, j = 0, o = 0
    grid = np.empty(n + m)
    save = np.empty(m, dtype=np.intp)
    cdef double[::1] g = grid
    cdef Py_ssize_t[::1] sv = save
    with nogil:
        while i < n or j < m:
            if j == m or (i < n and direction * a[i] < direction * b[j]):
                g[o] = a[i]
                i += 1
            else:
                if i < n and a[i] == b[j]:
                    i += 1                         # the same time in both: once
                g[o] = b[j]
                sv[j] = o
                j += 1
            o += 1
    return grid[:o], save


def first_small_norm(const double[:, :] q, double tiny):
    """Index of the first row whose squared norm (over its first 4 entries) is <= tiny or not
    finite, or -1 (the check of `rotode._validation.check_nonzero_quaternions`)."""
    cdef Py_ssize_t i, n = q.shape[0]
    cdef double s
    for i in range(n):
        s = q[i, 0] * q[i, 0] + q[i, 1] * q[i, 1] + q[i, 2] * q[i, 2] + q[i, 3] * q[i, 3]
        if not (s > tiny and s < INFINITY):
            return i
    return -1


def largest(x):
    """``int(x.max())`` of a 1-D integer array, 0 when empty (a run's per-body counters; one
    body, the common case, without NumPy's reduction machinery)."""
    n = x.shape[0]
    if n == 0:
        return 0
    if n == 1:
        return int(x[0])
    return int(x.max())


cdef bint _finite_doubles(const double* p, Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t i
    cdef double s = 0.0
    for i in range(n):
        s = s + 0.0 * p[i]          # NaN as soon as one entry is NaN or inf
    return s == 0.0


cdef bint _finite_value(object value) noexcept:
    """True when ``value`` (what a right-hand side returned) is a C-contiguous float64 or
    complex128 array, or a list or tuple of real numbers, all finite; False otherwise (None,
    NaN, inf, or another kind of value, which the caller examines)."""
    cdef cnp.ndarray a
    cdef Py_ssize_t i, n
    cdef int typ
    if value is None:
        return False
    if type(value) is np.ndarray:
        a = <cnp.ndarray>value
        typ = cnp.PyArray_TYPE(a)
        if not cnp.PyArray_IS_C_CONTIGUOUS(a) or (typ != cnp.NPY_DOUBLE
                                                  and typ != cnp.NPY_CDOUBLE):
            return False
        n = cnp.PyArray_SIZE(a) * (2 if typ == cnp.NPY_CDOUBLE else 1)
        return _finite_doubles(<const double*>cnp.PyArray_DATA(a), n)
    if type(value) is list or type(value) is tuple:
        n = len(value)
        for i in range(n):
            item = value[i]
            if isinstance(item, float):      # (numpy.float64 too)
                if not isfinite(<double>item):
                    return False
            elif not isinstance(item, int):
                return False
        return True
    return False


def finite_value(value):
    """True when ``value`` is a C-contiguous float64 or complex128 array, or a list or tuple
    of real numbers, all finite; False otherwise (None, NaN, inf, or another kind of value)."""
    return _finite_value(value)


def checked_function(function, on_bad):
    """``function(t, y, *args)`` for SciPy's ``solve_ivp`` loop, every value checked:
    ``on_bad(value, t)`` is called for a value that `finite_value` does not pass (it raises for
    None, NaN or inf and returns for a value of another kind, e.g. an integer array).  The
    wrapper and the check of the common values run in C (tens of ns per evaluation)."""
    def checked(t, y, *args):
        value = function(t, y, *args) if args else function(t, y)
        if not _finite_value(value):
            on_bad(value, t)
        return value
    return checked
