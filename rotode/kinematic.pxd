# Kinematic step kernels (layers 1-2): advance an orientation q under a KNOWN angular velocity.
#
# Every kernel is `noexcept nogil`, allocation-free, in double precision, inputs first and
# outputs last (OUT).  A "rotation vector" kernel (lie_euler, exp2, magnus*) only computes the
# rotation vector Omega of one step; `apply_rotvec` turns it into the update
#     body frame  : q_new = q (x) exp(Omega/2)      (q' = 1/2 q (x) w)
#     world frame : q_new = exp(Omega/2) (x) q      (q' = 1/2 w (x) q)
# so that a caller owning the time loop can combine them freely.  Magnus series are written for
# the world frame (R' = [w]x R, commutator = cross product); the body frame is the same series
# for the transposed equation (R^T)' = -[w]x R^T, i.e. Omega_body(w) = -Omega_world(-w): terms
# with an even number of w factors change sign (docs/methods-kinematic.md).
from libc.math cimport sqrt
from rotode.quaternion cimport quat_mul, quat_exp_pure, quat_exp_approx, quat_norm2
from rotode.equations cimport FRAME_BODY, FRAME_WORLD, quaternion_kinematics_rhs


cdef inline void apply_rotvec(const double* q, const double* v, int frame, bint approx,
                              double* out) noexcept nogil:
    """Rotate q by the rotation vector v: q exp(v/2) (body) or exp(v/2) q (world).

    `approx` uses [NIRD]'s trig-free normalised third-order exponential instead of the exact
    one (quaternion.pxd quat_exp_approx).  OUT: out[4]; may alias q.
    """
    cdef double x[3]
    cdef double e[4]
    cdef double r[4]
    x[0] = 0.5 * v[0]
    x[1] = 0.5 * v[1]
    x[2] = 0.5 * v[2]
    if approx:
        quat_exp_approx(x, e)
    else:
        quat_exp_pure(x, e)
    if frame == FRAME_BODY:
        quat_mul(q, e, r)
    else:
        quat_mul(e, q, r)
    out[0] = r[0]
    out[1] = r[1]
    out[2] = r[2]
    out[3] = r[3]


# ---- rotation vectors of one step ----------------------------------------------------------

cdef inline void lie_euler_rotvec(const double* w0, double h, double* om) noexcept nogil:
    """Rucker 2018 eq. 24 (zero-order hold): Omega = h w(t0) (OUT: om[3])."""
    om[0] = h * w0[0]
    om[1] = h * w0[1]
    om[2] = h * w0[2]


cdef inline void exp2_rotvec(const double* w0, const double* dw0, double h,
                             double* om) noexcept nogil:
    """Rucker 2018 eq. 28 as reconstructed: Omega = h w(t0) + h^2/2 w'(t0) (OUT: om[3]).

    The integral of the first-order Taylor polynomial of w over the step; the commutator term
    is O(h^3), so the update is second order (docs/methods-kinematic.md).
    """
    cdef double c = 0.5 * h * h
    om[0] = h * w0[0] + c * dw0[0]
    om[1] = h * w0[1] + c * dw0[1]
    om[2] = h * w0[2] + c * dw0[2]


cdef extern from "_magnus.hpp" namespace "rotode" nogil:
    # [NIRD]: the Magnus series converges while the rotation per step is below pi/sqrt(2)
    double magnus_bound()
    # magnus_ca with substep=True: the most equal sub-steps one grid step may take
    long MAGNUS_MAX_SUBSTEPS
    # magnus_ca ([NIRD]; the h^5 and h^6 parts of Omega_4 in docs/methods-kinematic.md): the
    # step's rotation vector for w(t0 + s) = w0 + alpha s from its first `terms` (1 .. 4)
    # terms, in the frame `frame` (body: Omega_2 and Omega_4 change sign) (OUT: om[3]); and
    # the upper bound |h| max(|w0|, |w0 + alpha h|) of the step's rotation angle (|w| is
    # convex along the segment, its maximum at an end)
    void magnus_ca_rotvec(const double* w0, const double* alpha, double h, int terms,
                          int frame, double* om)
    # the same from the factors of the step size, computed once for the rows or steps of one
    # size (`magnus_ca_factors`: h, h^2/2 and the terms' coefficients; the same bits)
    cdef cppclass MagnusCaFactors "rotode::magnus::CaFactors":
        double h
    MagnusCaFactors magnus_ca_factors(double h, int frame, int terms)
    void magnus_ca_rotvec_with(const double* w0, const double* alpha, const MagnusCaFactors& k,
                               int terms, double* om)
    double magnus_ca_angle(const double* w0, const double* alpha, double h)
    # Gauss-Legendre Magnus methods in so(3) from the rates at the step's two, three or four
    # Gauss nodes (rotode/_magnus.hpp, which the SIMD lanes step too: Iserles & Norsett 1999;
    # Blanes, Casas & Ros 2000; Blanes et al. 2009 eq. 4.8, sec. 5.3): the step's rotation
    # vector in the frame `frame` (OUT: om[3])
    void magnus4_rotvec(const double* w1, const double* w2, double h, int frame, double* om)
    void magnus6_rotvec(const double* w1, const double* w2, const double* w3, double h,
                        int frame, double* om)
    void magnus8_rotvec(const double* a1, const double* a2, const double* a3,
                        const double* a4, double h, int frame, double* om)


# ---- vector-space steps on non-unit quaternions (Rucker 2018 sec. III) -------------------------

cdef extern from "_rk.hpp" namespace "rotode" nogil:
    # one step of rk3 (order 3) or rk4 (order 4) at the given rates of the step's nodes: the
    # templates every path steps (rotode/_rk.hpp) (OUT: out[4]; out may be q)
    void kin_rk_step(int order, const double* q, const double* w0, const double* wm,
                     const double* w1, double h, int frame, double gain, double* out)
    # the variable-step Adams-Bashforth 3 weights (OUT: beta[3])
    void ab3_coefficients(double h, double h1, double h2, double* beta)


cdef inline void rk3_step(const double* q, const double* w0, const double* wm, const double* w1,
                          double h, int frame, double gain, double* out) noexcept nogil:
    """Kutta's third-order RK (c = 0, 1/2, 1; b = 1/6, 2/3, 1/6) on q' = 1/2 q w + c q, with
    w(t0), w(t0 + h/2), w(t0 + h) given (rotode/_rk.hpp, the lane kernels' own steps).

    OUT: out[4]; may alias q.
    """
    kin_rk_step(3, q, w0, wm, w1, h, frame, gain, out)


cdef inline void rk4_step(const double* q, const double* w0, const double* wm, const double* w1,
                          double h, int frame, double gain, double* out) noexcept nogil:
    """Classical RK4 on q' = 1/2 q w + c q (w(t + h/2) used by stages 2 and 3; rotode/_rk.hpp,
    the lane kernels' own steps).

    OUT: out[4]; may alias q.
    """
    kin_rk_step(4, q, w0, wm, w1, h, frame, gain, out)


cdef inline void ab3_weights(double h, double h1, double h2, double* c) noexcept nogil:
    """Variable-step Adams-Bashforth 3 weights (OUT: c[3]): rotode/_rk.hpp
    `ab3_coefficients`, the one formula of every path.

    y1 = y0 + c0 f0 + c1 f_-1 + c2 f_-2 with c_k the integral over [0, h] of the
    Lagrange basis on the nodes 0, -h1, -(h1 + h2) (h = t1 - t0, h1 = t0 - t_-1,
    h2 = t_-1 - t_-2, all signed).  Uniform steps give h (23, -16, 5) / 12.
    """
    ab3_coefficients(h, h1, h2, c)


cdef inline void normalize4(double* q) noexcept nogil:
    """q <- q / |q| (in place)."""
    cdef double n = 1.0 / sqrt(quat_norm2(q))
    q[0] *= n
    q[1] *= n
    q[2] *= n
    q[3] *= n
