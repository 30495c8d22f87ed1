# Angular-velocity sources (layer 3 objects used by the right-hand sides of rotode.rhs).
#
# A source evaluates w(t) (and, where it can, w'(t)) into a caller-owned double[3].  The C-level
# methods are `noexcept nogil` and return a status so that native loops can call them without
# the GIL:  0 ok;  -1 a Python error was stored in `error` (the facade re-raises it);
# -2 the quantity is not available from this source.  A source implemented in Python (a callable)
# re-acquires the GIL inside `evaluate`.  Cython users subclass `AngularVelocity` and override
# `evaluate` (and `evaluate_rate`) to stay in C; see tests/test_sources.py for a downstream module.

cdef enum:
    SOURCE_OK = 0
    SOURCE_ERROR = -1
    SOURCE_UNAVAILABLE = -2


cdef class AngularVelocity:
    # Python exception raised inside `evaluate`/`evaluate_rate`, kept for the facade to re-raise.
    cdef public object error
    cdef int evaluate(self, double t, double* w) noexcept nogil     # OUT: w[3]
    cdef int evaluate_rate(self, double t, double* dw) noexcept nogil  # OUT: dw[3]
    # the limits from below, w(t-) and w'(t-): a step that ends at t forwards, or starts at t
    # backwards, reads these; they differ from evaluate/evaluate_rate only where w or w' jumps
    # at t (the base class returns evaluate/evaluate_rate)
    cdef int evaluate_before(self, double t, double* w) noexcept nogil     # OUT: w[3]
    cdef int evaluate_rate_before(self, double t, double* dw) noexcept nogil  # OUT: dw[3]


cdef class Constant(AngularVelocity):
    cdef double _w[3]


cdef class Sinusoid(AngularVelocity):
    cdef double _amplitude[3]
    cdef double _rate
    cdef double _phase[3]


cdef class Samples(AngularVelocity):
    cdef readonly object t
    cdef readonly object w
    cdef readonly str kind
    cdef readonly double offset
    cdef readonly object bias
    cdef readonly object scale
    cdef bint _hold
    cdef double _wlast[3]
    cdef const double[::1] _t
    cdef const double[:, :, ::1] _coef   # (m - 1, 4, 3): cubic in (t - t_i), highest power first
    cdef int locate(self, double t) noexcept nogil
    cdef void _value(self, int i, double t, double* w) noexcept nogil
    cdef void _slope(self, int i, double t, double* dw) noexcept nogil
    cdef int _outside(self, double t) noexcept nogil


cdef class Callable(AngularVelocity):
    cdef readonly object function
    cdef object _rate                  # w'(t) from Python (an overriding subclass's), or None
    cdef bint _has_rate
