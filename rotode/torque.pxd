# Torque sources tau(t, q, w) for the rigid-body right-hand sides (layer 3 objects).
#
# q is the orientation as a nonzero quaternion of ANY length (R(q) = R(q/|q|), Rucker 2018 eq. 13),
# w the body angular velocity; the result is the torque in BODY coordinates.  Because torques
# depend on the state, a source has two C entry points: `evaluate` (doubles) and
# `evaluate_dual` (dual numbers, for exact Jacobians).  The base class implements
# `evaluate_dual` by central finite differences of `evaluate` (used for Python callables and for
# Cython subclasses that only override `evaluate`); C sources override it with the same fused
# kernel as `evaluate`.  Status codes: 0 ok, -1 Python error stored in `error` (as in
# rotode/omega.pxd), and the two failures of a compiled function (`Compiled`, or a part of a
# `Sum`), which the driver reports with the body and time under the same codes
# (rotode/_driver.pxd's STATUS_TORQUE_FAILED and STATUS_TORQUE_NONFINITE).
from cpython.ref cimport PyObject
from rotode.dual cimport dual

cdef enum:
    TORQUE_OK = 0
    TORQUE_ERROR = -1
    TORQUE_FAILED = -11        # a compiled torque function returned nonzero
    TORQUE_NONFINITE = -12     # a compiled torque function gave a NaN or inf torque

# The C signature of a compiled torque function (`Compiled`): q the orientation (unit, scalar
# first, body to world), w the body angular velocity, out the body torque (OUT: out[3]), p the
# body's parameters (`Compiled.params`' row; NULL without params).  Return 0; any other value
# stops the body's run, reported with its time.
ctypedef int (*torque_fn)(double t, const double* q, const double* w, double* out,
                          const double* p) noexcept nogil


cdef class Torque:
    cdef public object error
    cdef readonly object n_bodies      # None: one source; N: per-body parameters (rows)
    cdef Torque body(self, Py_ssize_t i)                              # the source of body i
    cdef list per_body(self, Py_ssize_t n)         # the sources of bodies 0..n-1
    cdef list _range(self, Py_ssize_t start, Py_ssize_t stop)     # those of start..stop-1
    cdef int evaluate(self, double t, const double* q, const double* w,
                      double* tau) noexcept nogil                      # OUT: tau[3]
    cdef int evaluate_dual(self, double t, const dual* q, const dual* w,
                           dual* tau) noexcept nogil                   # OUT: tau[3]


cdef class Constant(Torque):
    cdef double _tau[3]
    cdef readonly str frame
    cdef bint _world
    cdef object _rows                  # per-body: tau (N, 3) (NumPy or dask), else None


cdef class Gravity(Torque):
    cdef double _mg, _mass, _g
    cdef double _com[3]
    cdef object _rows                  # per-body: (mass (N,), g (N,), com (N, 3)), else None
    cdef list _range(self, Py_ssize_t start, Py_ssize_t stop)


cdef class Callable(Torque):
    cdef readonly object function


cdef class Compiled(Torque):
    cdef torque_fn _f
    cdef readonly object fun           # the user's function object (kept alive)
    cdef object _params                # (m,) or (N, m) float64 (NumPy or dask), or None
    cdef const double* _p              # this source's row of _params, or NULL


cdef class GravityGradient(Torque):
    cdef double _k                     # 3 n^2
    cdef double _n, _u0, _inc, _raan
    cdef double _I[9]                  # inertia, row-major
    cdef double _P[3]                  # unit vectors of the orbit plane in the world: to the
    cdef double _Q[3]                  # ascending node, and 90 deg ahead along the motion
    cdef object _rows                  # per-body: the parameters' arrays (dict), else None
    cdef list _range(self, Py_ssize_t start, Py_ssize_t stop)
    # its orbit and inertia (a one-body source's) into caller memory (OUT: k, n, u0, P[3], Q[3],
    # I[9])
    cdef void orbit(self, double* k, double* n, double* u0, double* P, double* Q,
                    double* I) noexcept


cdef class Sum(Torque):
    cdef readonly tuple parts
    cdef Py_ssize_t _count
    cdef PyObject** _ptr               # the parts (borrowed from `parts`), for the nogil loop
