# Event functions g(t, y, w) for the error-controlled runs (layer 3 objects, nogil).
#
# The driver evaluates them on the dense output of every accepted step, without the GIL, and
# locates a sign change of g inside the step (rotode/_driver.pyx).  y is the output row of the
# run ([q] for kinematics, [q, w_body] for the rigid body; q of any nonzero length), w the body
# angular velocity.  A downstream Cython class derives from `Event` and overrides `evaluate`
# (README, "Cython API"); status codes as in rotode/omega.pxd: `evaluate` returns NaN after
# storing a Python error in `error` (the Python-callable event), which stops the run and
# re-raises it in the caller; a NaN without a stored error stops it with a ValueError naming the
# event (its repr) and the time.  A subclass whose `evaluate` does not read w may set
# `needs_w = False` in its constructor (cheaper kinematic runs).

cdef class Event:
    cdef public object error
    cdef readonly int terminal     # 0: record only; k > 0: stop at the k-th occurrence
    cdef readonly int direction    # -1, 0 or +1: the sign of g' at the events recorded
    # False: `evaluate` never reads w (the driver may then skip computing the body angular
    # velocity of a kinematic run, a rate evaluation); True by default
    cdef readonly bint needs_w
    cdef double evaluate(self, double t, const double* y, int k,
                         const double* w) noexcept nogil


cdef class AxisAngle(Event):
    cdef readonly double angle
    cdef double _b[3]
    cdef double _a[3]
    cdef double _cos


cdef class Component(Event):
    cdef readonly str name
    cdef readonly int index
    cdef readonly double value
    cdef int _which


cdef class RotationAngle(Event):
    cdef readonly double angle
    cdef double _r[4]
    cdef double _cos_half


cdef class KineticEnergy(Event):
    cdef double _I[9]
    cdef readonly double value


cdef class PythonEvent(Event):
    cdef readonly object function
