# Runge-Kutta-Munthe-Kaas on the rotation group (layer 1 kernels): the algebra equation of one
# step and the change of local coordinates between steps.  Munthe-Kaas, "Runge-Kutta methods on
# Lie groups", BIT 38 (1998) 92-111, and "High order Runge-Kutta methods on manifolds", Appl.
# Numer. Math. 29 (1999) 115-127; Hairer, Lubich & Wanner, "Geometric Numerical Integration"
# (2nd ed., 2006), sec. IV.8.2, eq. (8.9).  A step from q_n writes
#     body frame  : q(t) = q_n exp(v(t)/2),  v' = T(-v)^-1 w_body   (q' = 1/2 q w_body)
#     world frame : q(t) = exp(v(t)/2) q_n,  v' = T(v)^-1 w_world    (q' = 1/2 w_world q)
# with v(t_n) = 0 and T(v) = dexp(v) of rotode/so3.pxd (Mizerski 2020 sec. 3; T(-v) is the
# right Jacobian of SO(3)); any explicit Runge-Kutta pair advances v (and the rigid body's w)
# as a vector ODE, and |q| stays 1 since exp(v/2) is a unit quaternion (q0 is normalised; the
# product's rounding is removed after each step by `rkmk_retract`).
#
# The kernels live in rotode/_rkmk.hpp: one C++ source for the driver's loop (through these
# declarations) and the specialised engine's Lie-group models (rotode/_models.hpp), so that the
# two give the same bits.  `frame` is rotode/equations.pxd's FRAME_BODY or FRAME_WORLD.

cdef extern from "_rkmk.hpp" namespace "rotode" nogil:
    # the largest rotation (rad) one controlled step may take in local coordinates: pi, half
    # way to the chart's singularity at 2 pi (events closer than that need `max_step`)
    double rkmk_max_step_angle()
    # the largest |z[3j:3j+3]| of a step's `blocks` rotation vectors, j < blocks (NaN if any is)
    double rkmk_step_angle(const double* z, int blocks)
    # q / |q| (IN/OUT: q[4], nonzero)
    void rkmk_unit(double* q)
    # q (3 - |q|^2)/2, one Newton step of |q| = 1 (IN/OUT: q[4], |q| = 1 + O(eps))
    void rkmk_retract(double* q)
    # the base of a run's first step from its y0: q/|q|, or y0 retracted when it is the row
    # stored at the end of an accepted step of an earlier call (resume) (IN/OUT: q[4])
    void rkmk_base(double* q, bint resume)
    # v' = T(-v)^-1 w (body) or T(v)^-1 w (world), |v| < 2 pi (OUT: dv[3])
    void rkmk_rate(const double* v, const double* w, int frame, double* dv)
    # the inverse of rkmk_rate: w = T(-v) dv (body) or T(v) dv (world) (OUT: w[3]; may alias dv)
    void rkmk_angular_velocity(const double* v, const double* dv, int frame, double* w)
    # out = q * exp(c w / 2): body-frame rotation of q by the angle c |w| (OUT: out[4])
    void quat_times_exp(const double* q, const double* w, double c, double* out)
