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
from libc.math cimport sqrt
from rotode.so3 cimport so3_coefficients, so3_dexp_inv_apply
from rotode.equations cimport FRAME_BODY


cdef inline double rkmk_max_step_angle() noexcept nogil:
    """The largest rotation (rad) one controlled step may take in local coordinates: pi, half
    way to the chart's singularity at 2 pi (dexp^-1 has poles at |v| = 2 pi k), which a rate
    the error estimate finds exact (a constant one) would otherwise reach.  Events closer than
    that need `max_step` (docs/events.md)."""
    return 3.141592653589793


cdef inline void rkmk_unit(double* q) noexcept nogil:
    """q / |q| (the base of the first step) (IN/OUT: q[4], nonzero)."""
    cdef double s = 1.0 / sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3])
    q[0] = q[0] * s
    q[1] = q[1] * s
    q[2] = q[2] * s
    q[3] = q[3] * s


cdef inline void rkmk_retract(double* q) noexcept nogil:
    """q (3 - |q|^2)/2: one Newton step of |q| = 1 (IN/OUT: q[4], |q| = 1 + O(eps)).

    q_n exp(v/2) is a product of unit quaternions, but each product rounds: over 1e5 steps
    |q| - 1 random-walks to ~1e-13.  This step removes the O(eps) excess quadratically
    (a change of ~1e-16, no square root), so |q| - 1 stays at round-off for any run length.
    """
    cdef double s = 1.5 - 0.5 * (q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3])
    q[0] = q[0] * s
    q[1] = q[1] * s
    q[2] = q[2] * s
    q[3] = q[3] * s


cdef inline void rkmk_base(double* q, bint resume) noexcept nogil:
    """The base of a run's first step from its y0 (IN/OUT: q[4], nonzero): q/|q|, or, when
    y0 is the row stored at the end of an accepted step of an earlier call (`resume`), that
    row retracted, as the step's accept made its base (a continued run keeps its bits)."""
    if resume:
        rkmk_retract(q)
    else:
        rkmk_unit(q)


cdef inline void rkmk_rate(const double* v, const double* w, int frame,
                           double* dv) noexcept nogil:
    """v' of the algebra equation: T(-v)^-1 w (body) or T(v)^-1 w (world) (OUT: dv[3]).

    Valid for |v| < 2 pi (T^-1 is singular there); a step rotates by |v|.
    """
    cdef double m[3]
    if frame == FRAME_BODY:
        m[0] = -v[0]
        m[1] = -v[1]
        m[2] = -v[2]
        so3_dexp_inv_apply(m, w, dv)
    else:
        so3_dexp_inv_apply(v, w, dv)


cdef inline void rkmk_angular_velocity(const double* v, const double* dv, int frame,
                                       double* w) noexcept nogil:
    """The inverse of `rkmk_rate`: w = T(-v) dv (body) or T(v) dv (world) (OUT: w[3]; may
    alias dv)."""
    cdef double x = v[0] * v[0] + v[1] * v[1] + v[2] * v[2]
    cdef double s1, s2, s3, d, c0, c1, c2, a0, a1, a2
    so3_coefficients(x, &s1, &s2, &s3)
    if frame == FRAME_BODY:
        s2 = -s2
    # T(+-v) dv = S1 dv +- S2 v x dv + S3 v (v . dv)  (so3.pxd so3_dexp)
    a0 = dv[0]
    a1 = dv[1]
    a2 = dv[2]
    c0 = v[1] * a2 - v[2] * a1
    c1 = v[2] * a0 - v[0] * a2
    c2 = v[0] * a1 - v[1] * a0
    d = v[0] * a0 + v[1] * a1 + v[2] * a2
    w[0] = s1 * a0 + s2 * c0 + s3 * d * v[0]
    w[1] = s1 * a1 + s2 * c1 + s3 * d * v[1]
    w[2] = s1 * a2 + s2 * c2 + s3 * d * v[2]
