# Event functions g(t, y, w) for the error-controlled runs (layer 3 objects, nogil).
#
# The driver evaluates them on the dense output of every accepted step, without the GIL, and
# locates a sign change of g inside the step (rotode/_driver_events.pxi).  y is the output row of
# the run ([q] for kinematics, [q, w_body] for the rigid body; q of any nonzero length), w the
# body angular velocity.  A downstream Cython class derives from `Event` and overrides `evaluate`
# (README, "Cython API"); status codes as in rotode/omega.pxd: `evaluate` returns NaN after
# storing a Python error in `error` (the Python-callable event), which stops the run and
# re-raises it in the caller; a NaN without a stored error stops it with a ValueError naming the
# event (its repr) and the time.  A subclass whose `evaluate` does not read w may set
# `needs_w = False` in its constructor (cheaper kinematic runs).  The driver calls
# `evaluate_body(i, ...)` with the index i of the body in the run (0 for one body); its default
# is `evaluate`, so a subclass with per-body parameters overrides `evaluate_body` instead.

cdef enum:
    EVENT_PARAMS = 10     # doubles of one body's parameters of a built-in event (KineticEnergy)


cdef class Event:
    cdef public object error
    cdef readonly int terminal     # 0: record only; k > 0: stop at the k-th occurrence
    cdef readonly int direction    # -1, 0 or +1: the sign of g' at the events recorded
    # False: `evaluate` never reads w (the driver may then skip computing the body angular
    # velocity of a kinematic run, a rate evaluation); True by default
    cdef readonly bint needs_w
    # None: the same parameters for every body; N: per-body parameters, for runs of N bodies
    cdef readonly object n_bodies
    # in a user's state (rotode.ODE): which quaternion block the event reads (None: the first)
    # and where that block's body angular velocity starts in y (None: the run's own w)
    cdef readonly object block
    cdef readonly object rate
    cdef double evaluate(self, double t, const double* y, int k,
                         const double* w) noexcept nogil
    # g of body i of the run (0 for one body; the driver calls this one): `evaluate` unless a
    # subclass with per-body parameters overrides it
    cdef double evaluate_body(self, Py_ssize_t i, double t, const double* y, int k,
                              const double* w) noexcept nogil


cdef class _Parameters(Event):
    # a built-in event's parameters (its own layout of _width doubles): one body's in _p, or
    # per-body rows (n_bodies, _width) in _table, whose data _rows points to
    cdef double _p[EVENT_PARAMS]
    cdef const double* _rows
    cdef int _width
    cdef object _table


cdef inline const double* event_params(_Parameters e, Py_ssize_t i) noexcept nogil:
    """The parameters of body i of a built-in event."""
    if e._rows == NULL:
        return &e._p[0]
    return e._rows + i * e._width


cdef class AxisAngle(_Parameters):
    pass


cdef class Component(_Parameters):
    cdef readonly str name
    cdef readonly int index
    cdef int _which


cdef class RotationAngle(_Parameters):
    pass


cdef class KineticEnergy(_Parameters):
    pass


cdef class PythonEvent(Event):
    cdef readonly object function
    cdef bint _takes_body          # the function takes a keyword `body` (the body index)
    cdef Py_ssize_t _offset        # added to the body index (a dask chunk's first body)
