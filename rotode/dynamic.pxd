# Explicit rigid-body steppers (layer 2): one `noexcept nogil` step kernel per method.
#
# A body is described by a `BodyCtx` (inertia, its inverse, a borrowed pointer to its
# `rotode.torque.Torque` source or NULL, the norm gain of Rucker 2018 eq. 23, the gyroscopic
# switch) plus the torque history of Mandre 2008 sec. 7.3 when the torque is known only at main
# steps.  Every kernel advances ONE step of ONE body, is allocation-free (stack scratch only),
# takes its inputs first and writes its outputs last (OUT), and returns a status:
#   0 ok, -1 a Python error was stored in the torque (or force) source.
# Outputs may not alias inputs.  The batched driver lives in dynamic.pyx.
#
# State layouts:  y = [q (4), w_body (3)] for every method except rkn4, whose internal state is
# z = [q (4), q' (4)] (+ [x (3), v (3)] with a force), Mandre 2008 sec. 6.
from cpython.ref cimport PyObject
from rotode.quaternion cimport quat_mul, quat_mul_vec, quat_conj, quat_norm2
# quat_times_exp (out = q exp(c w / 2)): one C++ source with the engine's models (rotode/_rkmk.hpp)
from rotode.rkmk cimport quat_times_exp
from rotode.equations cimport (rigid_body_rhs, euler_rhs, quaternion_second_order_rhs, mat3_vec,
                               rkn4_stage_state)
from rotode.torque cimport Torque

cdef enum:
    STEP_OK = 0
    STEP_SOURCE_ERROR = -1


cdef struct BodyCtx:
    double I[9]            # body inertia, row-major
    double Iinv[9]         # its inverse
    PyObject* torque       # borrowed rotode.torque.Torque, NULL: torque-free
    double norm_gain       # Rucker 2018 eq. 23 (rk3, rk4, ab3 only)
    bint gyroscopic        # keep w x I w (Mandre 2008 sec. 7.6)
    # Mandre 2008 sec. 7.3: torque known only at main steps, extrapolated in between
    bint hold              # True: every stage uses the extrapolation polynomial
    int npoints            # history points used (1 zero-order hold, 2 linear, 3 Mandre 2008)
    bint eval_start        # evaluate at the stages while the history is incomplete
    int nh                 # points stored (<= npoints), newest first
    double ht[3]           # their times
    double hv[9]           # their torques (3 per point)
    long nfev              # torque evaluations


cdef class ForceSource:
    # World force F(t, x, v) on the centre of mass (Mandre 2008 sec. 5).
    cdef public object error
    cdef double _F[3]
    cdef object _function          # None: the constant _F
    cdef int evaluate(self, double t, const double* x, const double* v,
                      double* F) noexcept nogil        # OUT: F[3]


cdef struct ForceCtx:
    PyObject* source       # borrowed ForceSource, NULL: no translation
    bint constant          # True: F is the constant below (no call)
    double F[3]
    double inv_mass
    long nfev


cdef struct CGTableau:
    # Crouch-Grossman / explicit Runge-Kutta coefficients (s <= 3 stages), doubles of the
    # exact fractions of the registry (rotode.methods; dynamic.LIMITS checks s at import).
    int s
    double a[9]            # a[i*3 + j], strictly lower triangular
    double b[3]
    double c[3]


# ---- torque (sec. 7.3 history) ------------------------------------------------------------

cdef inline void torque_extrapolate(const BodyCtx* b, double t, double* tau) noexcept nogil:
    """Lagrange polynomial through the nh stored torques, evaluated at t (OUT: tau[3]).

    Three points give Mandre 2008 sec. 7.3: with nodes t0 - 2h, t0 - h, t0 and x = (t - t0)/h,
    d = 1/2 a (x + 1) x - b (x + 2) x + 1/2 c (x + 2)(x + 1) (the general-node form is used, so
    a shortened step keeps the formula exact for quadratics).
    """
    cdef double l0, l1, l2
    cdef int i
    if b.nh == 1:
        for i in range(3):
            tau[i] = b.hv[i]
    elif b.nh == 2:
        l0 = (t - b.ht[1]) / (b.ht[0] - b.ht[1])
        l1 = (t - b.ht[0]) / (b.ht[1] - b.ht[0])
        for i in range(3):
            tau[i] = l0 * b.hv[i] + l1 * b.hv[3 + i]
    else:
        l0 = (t - b.ht[1]) * (t - b.ht[2]) / ((b.ht[0] - b.ht[1]) * (b.ht[0] - b.ht[2]))
        l1 = (t - b.ht[0]) * (t - b.ht[2]) / ((b.ht[1] - b.ht[0]) * (b.ht[1] - b.ht[2]))
        l2 = (t - b.ht[0]) * (t - b.ht[1]) / ((b.ht[2] - b.ht[0]) * (b.ht[2] - b.ht[1]))
        for i in range(3):
            tau[i] = l0 * b.hv[i] + l1 * b.hv[3 + i] + l2 * b.hv[6 + i]


cdef inline int body_torque_eval(BodyCtx* b, double t, const double* q, const double* w,
                                 double* tau) noexcept nogil:
    """Evaluate the body's torque source at (t, q, w) (OUT: tau[3]); counts nfev."""
    b.nfev += 1
    if b.torque == NULL:
        tau[0] = 0.0
        tau[1] = 0.0
        tau[2] = 0.0
        return STEP_OK
    return (<Torque>b.torque).evaluate(t, q, w, tau)


cdef inline int body_torque(BodyCtx* b, double t, const double* q, const double* w,
                            double* tau) noexcept nogil:
    """Torque seen by a stage: the source, or the sec. 7.3 extrapolation (OUT: tau[3])."""
    if b.hold and (b.nh == b.npoints or not b.eval_start):
        torque_extrapolate(b, t, tau)
        return STEP_OK
    return body_torque_eval(b, t, q, w, tau)


cdef inline int body_rhs(BodyCtx* b, double t, const double* y, double* dy) noexcept nogil:
    """Non-unit quaternion rigid body (Rucker 2018 eqs. 22-23 + Euler) (OUT: dy[7])."""
    cdef double tau[3]
    cdef int st = body_torque(b, t, y, &y[4], tau)
    if st != STEP_OK:
        return st
    rigid_body_rhs(y, tau, b.I, b.Iinv, b.norm_gain, b.gyroscopic, dy)
    return STEP_OK


cdef inline int body_accel(BodyCtx* b, double t, const double* q, const double* w,
                           double* dw) noexcept nogil:
    """Euler's equations w' = I^-1 (tau - w x I w) with the body torque (OUT: dw[3])."""
    cdef double tau[3]
    cdef int st = body_torque(b, t, q, w, tau)
    if st != STEP_OK:
        return st
    euler_rhs(w, tau, b.I, b.Iinv, b.gyroscopic, dw)
    return STEP_OK


# ---- Lie-group methods ----------------------------------------------------------------------

cdef inline int lie_euler_step(BodyCtx* b, double t, double h, const double* y,
                               double* yout) noexcept nogil:
    """Lie-Euler: q1 = q0 exp(h w0 / 2), w1 = w0 + h w'(t, q0, w0) (OUT: yout[7])."""
    cdef double dw[3]
    cdef int st = body_accel(b, t, y, &y[4], dw)
    if st != STEP_OK:
        return st
    quat_times_exp(y, &y[4], h, yout)
    yout[4] = y[4] + h * dw[0]
    yout[5] = y[5] + h * dw[1]
    yout[6] = y[6] + h * dw[2]
    return STEP_OK


cdef inline int cg_step(const CGTableau* tab, BodyCtx* b, double t, double h, const double* y,
                        double* yout) noexcept nogil:
    """Crouch-Grossman step (Crouch & Grossman 1993; Owren & Marthinsen 1999) (OUT: yout[7]).

    On G = SU(2) x R^3 with q' = q (w/2), w' = f(t, q, w):
      Q_i = q0 exp(h a_i1 W_1 / 2) ... exp(h a_i,i-1 W_i-1 / 2),  W_i = w0 + h sum_j a_ij K_j,
      K_i = f(t + c_i h, Q_i, W_i);
      q1 = q0 exp(h b_1 W_1 / 2) ... exp(h b_s W_s / 2),  w1 = w0 + h sum_i b_i K_i.
    Factors with a zero coefficient are skipped (exp(0) = 1).
    """
    cdef double Q[4]
    cdef double tmp[4]
    cdef double W[9]
    cdef double K[9]
    cdef double coef
    cdef int i, j, k, st
    for i in range(tab.s):
        for k in range(4):
            Q[k] = y[k]
        for k in range(3):
            W[3 * i + k] = y[4 + k]
        for j in range(i):
            coef = tab.a[3 * i + j]
            if coef != 0.0:
                quat_times_exp(Q, &W[3 * j], h * coef, tmp)
                for k in range(4):
                    Q[k] = tmp[k]
                for k in range(3):
                    W[3 * i + k] = W[3 * i + k] + h * coef * K[3 * j + k]
        st = body_accel(b, t + tab.c[i] * h, Q, &W[3 * i], &K[3 * i])
        if st != STEP_OK:
            return st
    for k in range(4):
        Q[k] = y[k]
    for k in range(3):
        yout[4 + k] = y[4 + k]
    for i in range(tab.s):
        coef = tab.b[i]
        if coef != 0.0:
            quat_times_exp(Q, &W[3 * i], h * coef, tmp)
            for k in range(4):
                Q[k] = tmp[k]
            for k in range(3):
                yout[4 + k] = yout[4 + k] + h * coef * K[3 * i + k]
    for k in range(4):
        yout[k] = Q[k]
    return STEP_OK


# ---- Runge-Kutta on the non-unit quaternion rigid body (Rucker 2018 sec. III) ------------------

cdef extern from "_rk.hpp" namespace "rotode" nogil:
    # f(t, y) of one body through a pointer (0, or a status that stops the step)
    ctypedef int (*StepRhs)(void* ctx, double t, const double* y, double* dy) noexcept nogil
    # one step of rk3 (order 3, k1 given) or rk4 (order 4) on 7 states: the templates every
    # path steps (rotode/_rk.hpp) (OUT: yout[7]); 0 or f's first nonzero status
    int call_rk_step(int order, StepRhs f, void* ctx, double t0, double h, const double* y,
                     const double* k1, double* yout)
    # the variable-step Adams-Bashforth 3 weights (OUT: beta[3])
    void ab3_coefficients(double h, double h1, double h2, double* beta)


cdef inline int _step_rhs(void* b, double t, const double* y, double* dy) noexcept nogil:
    return body_rhs(<BodyCtx*>b, t, y, dy)


cdef inline int rk3_step(BodyCtx* b, double t, double h, const double* y, const double* k1,
                         double* yout) noexcept nogil:
    """Kutta's third-order method; k1 = f(t, y) is passed in (OUT: yout[7]).

    c = (0, 1/2, 1), a21 = 1/2, a31 = -1, a32 = 2, b = (1/6, 2/3, 1/6) (rotode/_rk.hpp, the
    lane kernels' own step).
    """
    return call_rk_step(3, _step_rhs, b, t, h, y, k1, yout)


cdef inline int rk4_step(BodyCtx* b, double t, double h, const double* y,
                         double* yout) noexcept nogil:
    """Classical fourth-order Runge-Kutta on [q, w] (rotode/_rk.hpp, the lane kernels' own
    step) (OUT: yout[7])."""
    return call_rk_step(4, _step_rhs, b, t, h, y, NULL, yout)


cdef inline void ab3_weights(double h, double h1, double h2, double* beta) noexcept nogil:
    """Variable-step Adams-Bashforth 3 weights (OUT: beta[3]): rotode/_rk.hpp
    `ab3_coefficients`, the one formula of every path.

    y1 = y0 + beta0 f0 + beta1 f_-1 + beta2 f_-2 with beta_k the integral over [0, h] of the
    Lagrange basis on the nodes 0, -h1, -(h1 + h2) (h = t1 - t0, h1 = t0 - t_-1,
    h2 = t_-1 - t_-2, all signed).  Uniform steps give h (23, -16, 5) / 12.
    """
    ab3_coefficients(h, h1, h2, beta)


cdef inline void ab3_step(const double* beta, const double* y, const double* f0,
                          const double* f1, const double* f2, double* yout) noexcept nogil:
    """y1 = y0 + beta0 f0 + beta1 f1 + beta2 f2 (f_k at t0, t_-1, t_-2) (OUT: yout[7])."""
    cdef int i
    for i in range(7):
        yout[i] = y[i] + (beta[0] * f0[i] + beta[1] * f1[i] + beta[2] * f2[i])


# ---- Runge-Kutta-Nystrom on the second-order quaternion equation (Mandre 2008 sec. 6) ----------

cdef inline int second_order_eval(BodyCtx* b, double t, const double* z,
                                  double* dz) noexcept nogil:
    """q'' of Mandre 2008 sec. 6 at z = [q, q'] (OUT: dz[8]; dz[4:] = q'')."""
    cdef double w[3]
    cdef double qc[4]
    cdef double u[4]
    cdef double tau[3]
    cdef int st
    quat_conj(z, qc)
    quat_mul(qc, &z[4], u)
    w[0] = 2.0 * u[1]
    w[1] = 2.0 * u[2]
    w[2] = 2.0 * u[3]
    st = body_torque(b, t, z, w, tau)
    if st != STEP_OK:
        return st
    quaternion_second_order_rhs(z, tau, b.I, b.Iinv, dz)
    return STEP_OK


cdef inline int force_eval(ForceCtx* f, double t, const double* x, const double* v,
                           double* a) noexcept nogil:
    """Acceleration F(t, x, v) / m of the centre of mass (OUT: a[3])."""
    cdef int st = STEP_OK
    f.nfev += 1
    if f.constant:
        a[0] = f.F[0]
        a[1] = f.F[1]
        a[2] = f.F[2]
    else:
        st = (<ForceSource>f.source).evaluate(t, x, v, a)
    a[0] = a[0] * f.inv_mass
    a[1] = a[1] * f.inv_mass
    a[2] = a[2] * f.inv_mass
    return st


cdef inline int rkn4_step(BodyCtx* b, ForceCtx* f, double t, double h, const double* z,
                          double* zout) noexcept nogil:
    """Mandre 2008 sec. 6 RKN4 on z = [q, q'] (+ [x, v] when f.source != NULL) (OUT: zout).

    k1 = g(t, q0, p0), k2 = g(t + h/2, q0 + h/2 p0 + h^2/8 k1, p0 + h/2 k1),
    k3 = g(t + h/2, q0 + h/2 p0 + h^2/8 k1, p0 + h/2 k2), k4 = g(t + h, q0 + h p0 + h^2/2 k3,
    p0 + h k3); q1 = q0 + h p0 + h^2/6 (k1 + k2 + k3), p1 = p0 + h/6 (k1 + 2 k2 + 2 k3 + k4).
    The translation (Mandre 2008 sec. 5) uses the same stages with g = F(t, x, v)/m.  zout has 8
    (no force) or 14 entries.
    """
    cdef double k[4][8]
    cdef double a[4][3]
    cdef double zs[8]
    cdef double xs[3]
    cdef double vs[3]
    cdef double dz[8]
    cdef double cq, cp, tc
    cdef int s, i, st
    cdef bint trans = f != NULL and f.source != NULL
    for s in range(4):
        if s == 0:
            cq = 0.0
            tc = 0.0
        elif s == 3:
            cq = h
            tc = h
        else:
            cq = 0.5 * h
            tc = 0.5 * h
        rkn4_stage_state(z, k[0 if s < 3 else 2], k[s - 1 if s > 0 else 0], cq, s, zs)
        cp = 0.5 * cq * cq
        st = second_order_eval(b, t + tc, zs, dz)
        if st != STEP_OK:
            return st
        for i in range(4):
            k[s][i] = dz[4 + i]
        if trans:
            for i in range(3):
                xs[i] = z[8 + i] + cq * z[11 + i]
                vs[i] = z[11 + i]
            if s > 0:
                for i in range(3):
                    xs[i] = xs[i] + cp * a[0 if s < 3 else 2][i]
                    vs[i] = vs[i] + cq * a[s - 1][i]
            st = force_eval(f, t + tc, xs, vs, a[s])
            if st != STEP_OK:
                return st
    for i in range(4):
        zout[i] = z[i] + h * z[4 + i] + h * h * (k[0][i] + k[1][i] + k[2][i]) / 6.0
        zout[4 + i] = z[4 + i] + h * (k[0][i] + 2.0 * (k[1][i] + k[2][i]) + k[3][i]) / 6.0
    if trans:
        for i in range(3):
            zout[8 + i] = z[8 + i] + h * z[11 + i] + h * h * (a[0][i] + a[1][i] + a[2][i]) / 6.0
            zout[11 + i] = z[11 + i] + h * (a[0][i] + 2.0 * (a[1][i] + a[2][i]) + a[3][i]) / 6.0
    return STEP_OK
