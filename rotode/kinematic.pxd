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
from libc.math cimport sqrt, fabs
from rotode.quaternion cimport quat_mul, quat_exp_pure, quat_exp_approx, quat_norm2
from rotode.equations cimport FRAME_BODY, FRAME_WORLD, quaternion_kinematics_rhs

# [NIRD]: the Magnus series converges while the rotation per step is below pi/sqrt(2).
cdef inline double magnus_bound() noexcept nogil:
    return 2.221441469079183  # pi / sqrt(2)


cdef inline void cross3(const double* a, const double* b, double* out) noexcept nogil:
    """out = a x b (OUT: out[3]; may not alias a or b)."""
    out[0] = a[1] * b[2] - a[2] * b[1]
    out[1] = a[2] * b[0] - a[0] * b[2]
    out[2] = a[0] * b[1] - a[1] * b[0]


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


cdef inline void magnus_ca_rotvec(const double* w0, const double* alpha, double h, int terms,
                                  int frame, double* om) noexcept nogil:
    """Magnus rotation vector for constant angular acceleration w(t0+s) = w0 + alpha s.

    World frame ([NIRD], plus the dt^5 and dt^6 parts of Omega_4 derived in
    docs/methods-kinematic.md):
        Omega_1 = h w0 + h^2/2 alpha
        Omega_2 = h^3/12 alpha x w0
        Omega_3 = h^5/240 alpha x (alpha x w0)
        Omega_4 = -h^5/720 |w0|^2 w0 x alpha - h^6/720 w0 x (alpha x (alpha x w0)) + O(h^7)
    Body frame: Omega_2 and Omega_4 change sign.  terms in 1..4 (OUT: om[3]).
    """
    cdef double sg = 1.0 if frame == FRAME_WORLD else -1.0
    cdef double h2 = h * h
    cdef double h3 = h2 * h
    cdef double c1[3]
    cdef double c2[3]
    cdef double c3[3]
    cdef double f
    cdef double n2 = w0[0] * w0[0] + w0[1] * w0[1] + w0[2] * w0[2]
    cdef int i
    for i in range(3):
        om[i] = h * w0[i] + 0.5 * h2 * alpha[i]
    if terms < 2:
        return
    cross3(alpha, w0, c1)                         # alpha x w0
    f = sg * h3 / 12.0
    for i in range(3):
        om[i] += f * c1[i]
    if terms < 3:
        return
    cross3(alpha, c1, c2)                         # alpha x (alpha x w0)
    f = h3 * h2 / 240.0
    for i in range(3):
        om[i] += f * c2[i]
    if terms < 4:
        return
    cross3(w0, c2, c3)                            # w0 x (alpha x (alpha x w0))
    f = -sg * h3 * h2 / 720.0
    # w0 x alpha = -c1
    for i in range(3):
        om[i] += f * (-n2 * c1[i] + h * c3[i])


cdef inline double magnus_ca_angle(const double* w0, const double* alpha,
                                   double h) noexcept nogil:
    """Upper bound |h| max(|w0|, |w0 + alpha h|) of the rotation angle int |w| over the step.

    |w| is convex along the segment w0 + alpha s, so its maximum is at an end.
    """
    cdef double a = w0[0] * w0[0] + w0[1] * w0[1] + w0[2] * w0[2]
    cdef double e0 = w0[0] + alpha[0] * h, e1 = w0[1] + alpha[1] * h, e2 = w0[2] + alpha[2] * h
    cdef double b = e0 * e0 + e1 * e1 + e2 * e2
    return fabs(h) * sqrt(a if a > b else b)


cdef inline void magnus4_rotvec(const double* w1, const double* w2, double h, int frame,
                                double* om) noexcept nogil:
    """Fourth-order Magnus, two Gauss-Legendre nodes c = 1/2 -+ sqrt(3)/6 (OUT: om[3]).

    World: Omega = h/2 (w1 + w2) - sqrt(3)/12 h^2 w1 x w2 (Iserles & Norsett 1999; Blanes et
    al. 2009 eq. 4.8); body frame: + sqrt(3)/12 h^2 w1 x w2.
    """
    cdef double c[3]
    cdef double f = (-0.14433756729740643 if frame == FRAME_WORLD else 0.14433756729740643) * h * h
    cross3(w1, w2, c)
    om[0] = 0.5 * h * (w1[0] + w2[0]) + f * c[0]
    om[1] = 0.5 * h * (w1[1] + w2[1]) + f * c[1]
    om[2] = 0.5 * h * (w1[2] + w2[2]) + f * c[2]


cdef inline void magnus6_formula(const double* b0, const double* b1, const double* b2, double h,
                                 double s, double* om) noexcept nogil:
    """The sixth-order Magnus formula of `magnus6_rotvec` on the moments b0, b1, b2 (already
    multiplied by s) (OUT: om[3])."""
    cdef double o2[3]
    cdef double u[3]
    cdef double v[3]
    cdef double x[3]
    cdef double y[3]
    cdef int i
    cdef double h2 = h * h
    for i in range(3):
        u[i] = 1.5 * b0[i] - 6.0 * b2[i]
    cross3(b1, u, o2)
    for i in range(3):
        o2[i] *= h2
        u[i] = 0.5 * h * b2[i] - o2[i] / 60.0
    cross3(b0, u, v)
    cross3(b0, v, x)
    cross3(b1, o2, y)
    for i in range(3):
        om[i] = s * (h * b0[i] + o2[i] + h2 * x[i] + 0.6 * h * y[i])


cdef inline void magnus6_moments(const double* w1, const double* w2, const double* w3,
                                 double s, double* b0, double* b1, double* b2) noexcept nogil:
    """The moments B0, B1, B2 of w over the step from three Gauss nodes, times s (OUT)."""
    cdef int i
    for i in range(3):
        b0[i] = s * (5.0 * (w1[i] + w3[i]) + 8.0 * w2[i]) / 18.0
        b1[i] = s * 0.10758287072798381 * (w3[i] - w1[i])
        b2[i] = s * (w1[i] + w3[i]) / 24.0


cdef inline void magnus6_rotvec(const double* w1, const double* w2, const double* w3, double h,
                                int frame, double* om) noexcept nogil:
    """Sixth-order Magnus, three Gauss-Legendre nodes c = 1/2 - sqrt(15)/10, 1/2, 1/2 +
    sqrt(15)/10 (Blanes, Casas & Ros 2000; Blanes et al. 2009 sec. 5.3), in so(3) (OUT: om[3]).

    With moments B0 = (5(a1 + a3) + 8 a2)/18, B1 = sqrt(15)/36 (a3 - a1), B2 = (a1 + a3)/24:
        O2 = h^2 B1 x (3/2 B0 - 6 B2)
        Omega = h B0 + O2 + h^2 B0 x (B0 x (h/2 B2 - O2/60)) + 3h/5 B1 x O2
    in the world frame, evaluated on a_i = s w_i with s = +1 (world) or -1 (body) and
    multiplied by s (`magnus6_formula`).
    """
    cdef double s = 1.0 if frame == FRAME_WORLD else -1.0
    cdef double b0[3]
    cdef double b1[3]
    cdef double b2[3]
    magnus6_moments(w1, w2, w3, s, b0, b1, b2)
    magnus6_formula(b0, b1, b2, h, s, om)


cdef inline void magnus8_moments(const double* a1, const double* a2, const double* a3,
                                 const double* a4, double s, double* B0, double* B1,
                                 double* B2, double* B3) noexcept nogil:
    """The moments B0..B3 of w over the step from the four GL4 nodes, times s (OUT)."""
    # GL4 data: half-distances v1 > v2 from the midpoint and weights (sum 2) of the two pairs
    cdef double v1 = 0.43056815579702629, v2 = 0.16999052179242813
    cdef double g1 = 0.34785484513745385, g2 = 0.65214515486254614
    cdef double S1, S2, R1, R2
    cdef int i
    for i in range(3):
        S1 = s * (a1[i] + a4[i])
        S2 = s * (a2[i] + a3[i])
        R1 = s * (a4[i] - a1[i])
        R2 = s * (a3[i] - a2[i])
        B0[i] = 0.5 * (g1 * S1 + g2 * S2)
        B1[i] = 0.5 * (v1 * g1 * R1 + v2 * g2 * R2)
        B2[i] = 0.5 * (v1 * v1 * g1 * S1 + v2 * v2 * g2 * S2)
        B3[i] = 0.5 * (v1 * v1 * v1 * g1 * R1 + v2 * v2 * v2 * g2 * R2)


cdef inline void magnus8_formula(const double* B0, const double* B1, const double* B2,
                                 const double* B3, double h, double s,
                                 double* om) noexcept nogil:
    """Omega of `magnus8_rotvec` from the moments (already multiplied by s) (OUT: om[3])."""
    cdef double Q1[3]
    cdef double Q2[3]
    cdef double Q3[3]
    cdef double Q4[3]
    cdef double Q5[3]
    cdef double Q6[3]
    cdef double Q7[3]
    cdef double u[3]
    cdef double v[3]
    cdef double x[3]
    cdef double h2 = h * h
    cdef double h3 = h2 * h
    cdef int i
    for i in range(3):
        u[i] = -7.6 * B0[i] + 24.0 * B2[i]
        v[i] = 12.6 * B0[i] - 84.0 * B2[i]
        x[i] = -5.0 / 28.0 * B1[i] + B3[i]
    cross3(u, B3, Q1)
    cross3(v, x, Q2)
    for i in range(3):
        u[i] = B2[i] + h * (61.0 / 588.0 * Q1[i] - Q2[i] / 12.0)
    cross3(B0, u, v)
    for i in range(3):
        u[i] = 19.0 / 28.0 * B0[i] - 15.0 / 7.0 * B2[i]
    cross3(u, v, Q3)
    for i in range(3):
        u[i] = 20.0 / 7.0 * Q1[i] + 10.0 * Q2[i]
    cross3(B3, u, Q4)
    cross3(B2, Q1, v)
    for i in range(3):
        u[i] = -6025.0 / 4116.0 * B0[i] + 2875.0 / 343.0 * B2[i]
    cross3(u, v, Q5)
    for i in range(3):
        u[i] = 20.0 / 7.0 * (Q3[i] + Q4[i]) + 820.0 / 189.0 * h * Q5[i]
    cross3(B3, u, Q6)
    for i in range(3):
        u[i] = Q3[i] - Q4[i] / 3.0 + h * Q5[i]
    cross3(B0, u, v)
    cross3(B0, v, Q7)
    for i in range(3):
        om[i] = s * (h * B0[i] + h2 * (Q1[i] + Q2[i]) + h3 * (Q3[i] + Q4[i])
                     + h3 * h * (Q5[i] + Q6[i]) - h3 * h2 * Q7[i] / 42.0)


cdef inline void magnus8_rotvec(const double* a1, const double* a2, const double* a3,
                                const double* a4, double h, int frame,
                                double* om) noexcept nogil:
    """Eighth-order Magnus, four Gauss-Legendre nodes (Blanes, Casas & Ros 2000, BIT 40), in
    so(3) (OUT: om[3]).  Nodes 1/2 - v1, 1/2 - v2, 1/2 + v2, 1/2 + v1 (order a1..a4) with
    v1, v2 = sqrt((3 +- 2 sqrt(6/5))/7)/2; equations in docs/methods-kinematic.md.
    """
    cdef double s = 1.0 if frame == FRAME_WORLD else -1.0
    cdef double B0[3]
    cdef double B1[3]
    cdef double B2[3]
    cdef double B3[3]
    magnus8_moments(a1, a2, a3, a4, s, B0, B1, B2, B3)
    magnus8_formula(B0, B1, B2, B3, h, s, om)


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
