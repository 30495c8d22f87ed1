# The right-hand sides as cdef classes for solve_ivp (layer 4), wrapping the `nogil` cores of
# rotode/equations.pxd (cimported here, so `from rotode.rhs cimport quaternion_kinematics_rhs`
# keeps working).
# Star cimport: Cython only sees the non-member dual operators (double * dual, ...) this way.
from rotode.dual cimport *
from rotode.equations cimport *
from rotode.omega cimport AngularVelocity
from rotode.torque cimport Torque


# ---- objects ------------------------------------------------------------------------------

cdef class RightHandSide:
    cdef readonly int n                  # state dimension
    cdef int eval(self, double t, const double* y, double* dy)      # 0 ok, else status
    cdef int eval_dual(self, double t, const dual* y, dual* dy)
    cdef void raise_status(self, int status) except *


cdef class QuaternionKinematics(RightHandSide):
    cdef readonly AngularVelocity omega
    cdef int _frame
    cdef readonly double norm_gain


cdef class ExpCoordKinematics(RightHandSide):
    cdef readonly AngularVelocity omega
    cdef int _frame
    cdef double _base[4]


cdef class _Body(RightHandSide):
    cdef readonly object inertia
    cdef double _I[9]
    cdef double _Iinv[9]
    cdef readonly Torque torque
    cdef int _kind                       # the representation (rotode/rhs.pyx BODY_*)
    cdef int torque_value(self, double t, const double* q, const double* w, double* tau)
    cdef int torque_dual(self, double t, const dual* q, const dual* w, dual* tau)
    cdef void orientation_velocity(self, const double* y, double* q, double* w)  # OUT: q, w


cdef class RigidBody(_Body):
    cdef readonly double norm_gain
    cdef readonly bint gyroscopic
    cdef readonly object n_bodies        # None: one body; N: per-body parameters
    cdef object _rows                    # per body: (inertia (N, 3, 3), inverse) or dask


cdef class ExpCoordRigidBody(_Body):
    cdef double _base[4]


cdef class QuaternionSecondOrder(_Body):
    pass


cdef class EulerAnglesXYZ(_Body):
    pass


cdef class RotationMatrix(_Body):
    pass
