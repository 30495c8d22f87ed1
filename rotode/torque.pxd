# Torque sources tau(t, q, w) for the rigid-body right-hand sides (layer 3 objects).
#
# q is the orientation as a nonzero quaternion of ANY length (R(q) = R(q/|q|), Rucker 2018 eq. 13),
# w the body angular velocity; the result is the torque in BODY coordinates.  Because torques
# depend on the state, a source has two C entry points: `evaluate` (doubles) and
# `evaluate_dual` (dual numbers, for exact Jacobians).  The base class implements
# `evaluate_dual` by central finite differences of `evaluate` (used for Python callables and for
# Cython subclasses that only override `evaluate`); C sources override it with the same fused
# kernel as `evaluate`.  Status codes as in rotode/omega.pxd: 0 ok, -1 Python error stored in
# `error`.
from rotode.dual cimport dual

cdef enum:
    TORQUE_OK = 0
    TORQUE_ERROR = -1


cdef class Torque:
    cdef public object error
    cdef readonly object n_bodies      # None: one source; N: per-body parameters (rows)
    cdef Torque body(self, Py_ssize_t i)                              # the source of body i
    cdef list per_body(self, Py_ssize_t n)         # the sources of bodies 0..n-1
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
