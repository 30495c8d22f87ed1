# Implicit free-rigid-body steps in exponential coordinates (layer 1 kernels and layer 2 steps).
#
# Mizerski 2020 secs. 7-10 and docs/implicit-midpoint.md (the derivations, constants and the
# Kantorovich bound this file cites as "doc eq. (n)").  Notation: I the body inertia, A = I^-1,
# lam = lambda_min(I), L_b the body angular momentum at the start of a (sub-)step, l = h L_b for
# a (sub-)step h, v the rotation vector of the step (O_{n+1} = O_n R(v), L_b <- R(-v) L_b).
#
#   method               residual F(v) = 0                                    doc eq.
#   implicit midpoint    F = v - A R(-v/2) l                                  (4)
#   trapezoid (world)    F = v - 1/2 A l - 1/2 R(v) A R(-v) l                 (6)
#   object trapezoid     F = v - 1/2 A l - 1/2 A R(-v) l                      (7)
#
# Every kernel is `noexcept nogil`, allocation-free, inputs first and outputs last (OUT).
# Star cimport: Cython only sees the non-member dual operators (double * dual, ...) this way.
from rotode.dual cimport *
from rotode.so3 cimport so3_exp, so3_exp_and_dexp
from rotode.quaternion cimport quat_mul, quat_exp_pure
from rotode.equations cimport mat3_vec
from libc.math cimport INFINITY

cdef extern from "<math.h>" nogil:
    double sqrt(double)
    double fabs(double)
    double copysign(double, double)
    bint isfinite(double)

# the residual variants, in the order of rotode.methods.VARIANTS (a registry entry's `variant`)
cdef enum:
    IMP_MIDPOINT = 0
    IMP_TRAPEZOID = 1
    IMP_OBJECT_TRAPEZOID = 2
    IMP_VARIANTS = 3             # how many

cdef enum:
    SOLVER_NEWTON = 0
    SOLVER_FIXED_POINT = 1

cdef enum:
    BOUND_INERTIA = 0            # doc eq. (13): norm sqrt(x.I x), beta = 1 (default)
    BOUND_EUCLIDEAN = 1          # doc eq. (14): Euclidean norm, Mizerski's dt |L| <= C lam form

cdef enum:
    IMP_OK = 0
    IMP_SOURCE_ERROR = -1        # a Python error is stored in the torque source
    IMP_NOT_CONVERGED = -4       # the iteration did not reach `tol` in `max_iter` iterations
    IMP_NONFINITE = -5           # a non-finite iterate or state
    IMP_TOO_MANY_SUBSTEPS = -6   # the Kantorovich bound asks for more than `max_substeps`


cdef struct ImplicitBody:
    # per-body constants (filled by the driver)
    double I[9]        # inertia, row-major
    double Iinv[9]     # A = I^-1, row-major
    double lam         # smallest principal moment lambda_min(I)


cdef struct ImplicitOptions:
    int method         # IMP_*
    int solver         # SOLVER_*
    int bound          # BOUND_*
    double tol         # stop when the (predicted) next correction is <= tol |v|
    int max_iter
    long max_substeps
    double substep_angle   # doc eq. (16); 0: Kantorovich sub-steps only


cdef struct ImplicitCounters:
    long substeps        # sub-steps taken
    long iterations      # total iterations
    int max_iterations   # largest iteration count of one solve
    double residual      # largest final residual |F(v)|
    long retries         # sub-steps beyond the Kantorovich bound redone within it


# ---- small linear algebra ------------------------------------------------------------------

cdef inline void imp_mat_t_vec(const real* M, const real* x, real* out) noexcept nogil:
    """out = M^T x, M row-major 3x3 (OUT: out[3])."""
    out[0] = M[0] * x[0] + M[3] * x[1] + M[6] * x[2]
    out[1] = M[1] * x[0] + M[4] * x[1] + M[7] * x[2]
    out[2] = M[2] * x[0] + M[5] * x[1] + M[8] * x[2]


cdef inline void imp_rmat_vec(const real* M, const real* x, real* out) noexcept nogil:
    """out = M x, M row-major 3x3 of `real` (OUT: out[3])."""
    out[0] = M[0] * x[0] + M[1] * x[1] + M[2] * x[2]
    out[1] = M[3] * x[0] + M[4] * x[1] + M[5] * x[2]
    out[2] = M[6] * x[0] + M[7] * x[1] + M[8] * x[2]


cdef inline void imp_mat_mul(const double* A, const double* B, double* out) noexcept nogil:
    """out = A B for row-major 3x3 matrices (OUT: out[9]; may not alias)."""
    cdef int i, j
    for i in range(3):
        for j in range(3):
            out[3 * i + j] = (A[3 * i] * B[j] + A[3 * i + 1] * B[3 + j]
                              + A[3 * i + 2] * B[6 + j])


cdef inline void imp_cross_mat(const double* m, const double* T, double* out) noexcept nogil:
    """out = [m]x T: the cross product of m with every column of T (OUT: out[9])."""
    cdef int j
    for j in range(3):
        out[j] = m[1] * T[6 + j] - m[2] * T[3 + j]
        out[3 + j] = m[2] * T[j] - m[0] * T[6 + j]
        out[6 + j] = m[0] * T[3 + j] - m[1] * T[j]


cdef inline int imp_solve3(const double* J, const double* b, double* x) noexcept nogil:
    """Solve J x = b by the adjugate (Cramer); returns -1 for a singular J (OUT: x[3])."""
    cdef double c0 = J[4] * J[8] - J[5] * J[7]
    cdef double c1 = J[5] * J[6] - J[3] * J[8]
    cdef double c2 = J[3] * J[7] - J[4] * J[6]
    cdef double det = J[0] * c0 + J[1] * c1 + J[2] * c2
    if det == 0.0 or not isfinite(det):
        return -1
    det = 1.0 / det
    x[0] = det * (c0 * b[0] + (J[2] * J[7] - J[1] * J[8]) * b[1]
                  + (J[1] * J[5] - J[2] * J[4]) * b[2])
    x[1] = det * (c1 * b[0] + (J[0] * J[8] - J[2] * J[6]) * b[1]
                  + (J[2] * J[3] - J[0] * J[5]) * b[2])
    x[2] = det * (c2 * b[0] + (J[1] * J[6] - J[0] * J[7]) * b[1]
                  + (J[0] * J[4] - J[1] * J[3]) * b[2])
    return 0


cdef inline double imp_norm(const double* x) noexcept nogil:
    return sqrt(x[0] * x[0] + x[1] * x[1] + x[2] * x[2])


# ---- residuals and Jacobians ---------------------------------------------------------------

cdef inline void implicit_residual(int method, const double* Iinv, const double* l,
                                   const real* v, real* F) noexcept nogil:
    """F(v) of the method (doc eqs. (4), (6), (7)); fused so that duals give dF/dv (OUT: F[3]).

    Production code uses `implicit_residual_jacobian`; this generic form is the reference that
    the analytic Jacobian is tested against.
    """
    cdef real u[3]
    cdef real R[9]
    cdef real lr[3]
    cdef real m[3]
    cdef real g[3]
    cdef real a[3]
    cdef int i
    for i in range(3):
        lr[i] = l[i]
    if method == IMP_MIDPOINT:
        for i in range(3):
            u[i] = -0.5 * v[i]
        so3_exp(u, R)
        imp_rmat_vec(R, lr, m)                 # m = R(-v/2) l
        mat3_vec(Iinv, m, g)
        for i in range(3):
            F[i] = v[i] - g[i]
        return
    so3_exp(v, R)
    imp_mat_t_vec(R, lr, m)                    # m = R(-v) l = R(v)^T l
    mat3_vec(Iinv, m, g)                    # A R(-v) l
    if method == IMP_TRAPEZOID:
        imp_rmat_vec(R, g, a)                  # R(v) A R(-v) l
        for i in range(3):
            g[i] = a[i]
    for i in range(3):
        a[i] = Iinv[3 * i] * l[0] + Iinv[3 * i + 1] * l[1] + Iinv[3 * i + 2] * l[2]
        F[i] = v[i] - 0.5 * a[i] - 0.5 * g[i]


cdef inline void implicit_residual_jacobian(int method, const double* Iinv, const double* l,
                                            const double* v, double* F,
                                            double* J) noexcept nogil:
    """F(v) and its analytic Jacobian J = dF/dv (doc eqs. (5), (8), (9)) (OUT: F[3], J[9]).

    midpoint:          J = 1 - 1/2 A [m]x T(-v/2),                 m = R(-v/2) l
    object trapezoid:  J = 1 - 1/2 A [m]x T(-v),                   m = R(-v) l
    trapezoid:         J = 1 + 1/2 [z]x T(v) - 1/2 R(v) A [m]x T(-v),  z = R(v) A m
    using d(R(u) x) = -[R(u) x]x T(u) du and R(-u) = R(u)^T, T(-u) = T(u)^T.
    """
    cdef double u[3]
    cdef double R[9]
    cdef double T[9]
    cdef double Tt[9]
    cdef double m[3]
    cdef double g[3]
    cdef double z[3]
    cdef double a[3]
    cdef double C[9]
    cdef double D[9]
    cdef double E[9]
    cdef int i, j
    if method == IMP_MIDPOINT:
        for i in range(3):
            u[i] = -0.5 * v[i]
        so3_exp_and_dexp(u, R, T)              # R(-v/2), T(-v/2)
        imp_rmat_vec(R, l, m)
        mat3_vec(Iinv, m, g)
        for i in range(3):
            F[i] = v[i] - g[i]
        imp_cross_mat(m, T, C)                 # [m]x T(-v/2)
        imp_mat_mul(Iinv, C, D)
        for i in range(9):
            J[i] = -0.5 * D[i]
        J[0] += 1.0
        J[4] += 1.0
        J[8] += 1.0
        return
    so3_exp_and_dexp(v, R, T)                  # R(v), T(v)
    for i in range(3):
        for j in range(3):
            Tt[3 * i + j] = T[3 * j + i]       # T(-v)
    imp_mat_t_vec(R, l, m)                     # m = R(-v) l
    mat3_vec(Iinv, m, g)                    # A m
    mat3_vec(Iinv, l, a)                    # A l
    imp_cross_mat(m, Tt, C)                    # [m]x T(-v)
    imp_mat_mul(Iinv, C, D)                    # A [m]x T(-v)
    if method == IMP_OBJECT_TRAPEZOID:
        for i in range(3):
            F[i] = v[i] - 0.5 * a[i] - 0.5 * g[i]
        for i in range(9):
            J[i] = -0.5 * D[i]
    else:
        imp_rmat_vec(R, g, z)                  # z = R(v) A R(-v) l
        for i in range(3):
            F[i] = v[i] - 0.5 * a[i] - 0.5 * z[i]
        imp_mat_mul(R, D, E)                   # R(v) A [m]x T(-v)
        imp_cross_mat(z, T, C)                 # [z]x T(v)
        for i in range(9):
            J[i] = 0.5 * C[i] - 0.5 * E[i]
    J[0] += 1.0
    J[4] += 1.0
    J[8] += 1.0


cdef inline double implicit_residual_norm(int method, const double* Iinv, const double* l,
                                          const double* v) noexcept nogil:
    """|F(v)| (Euclidean), the final residual reported in the statistics."""
    cdef double F[3]
    implicit_residual(method, Iinv, l, v, F)
    return imp_norm(F)


# ---- the Kantorovich bound (doc sec. 4) ----------------------------------------------------

cdef inline double kantorovich_h(int method, int bound, const ImplicitBody* b, const double* l,
                                 double* K, double* eta) noexcept nogil:
    """Closed-form Kantorovich number h = beta K eta at v0 = 0 for l = h L_b (doc sec. 4).

    BOUND_INERTIA (midpoint and object trapezoid only), norm |x|_I = sqrt(x.I x), beta = 1
    (doc eqs. (12)-(13)):  K = c |l| / lam^(3/2),  eta = sqrt(l.A l).
    BOUND_EUCLIDEAN, x = |l| / lam < 1/d (doc eq. (14)):
        beta = 1/(1 - d x),  K = c x,  eta = beta |A l|.
    The Lipschitz constants c come from doc eqs. (10)-(11).
    Constants: c = 3/8, d = 1/2 (midpoint); c = 3/4, d = 1/2 (object trapezoid);
    c = 5/2, d = 1 (trapezoid, always Euclidean).  Newton from v = 0 converges when h <= 1/2.
    beta is folded into K (OUT: K <- beta K, eta), so h = K eta; +inf where no bound applies.
    """
    cdef double n = imp_norm(l)
    cdef double a[3]
    cdef double c, d, x, beta
    mat3_vec(b.Iinv, l, a)
    c = 0.375 if method == IMP_MIDPOINT else (0.75 if method == IMP_OBJECT_TRAPEZOID else 2.5)
    if bound == BOUND_INERTIA and method != IMP_TRAPEZOID:
        K[0] = c * n / (b.lam * sqrt(b.lam))
        eta[0] = sqrt(fabs(l[0] * a[0] + l[1] * a[1] + l[2] * a[2]))
        return K[0] * eta[0]
    d = 1.0 if method == IMP_TRAPEZOID else 0.5
    x = n / b.lam
    if not d * x < 1.0:
        K[0] = INFINITY
        eta[0] = INFINITY
        return INFINITY
    beta = 1.0 / (1.0 - d * x)
    K[0] = beta * c * x
    eta[0] = beta * imp_norm(a)
    return K[0] * eta[0]


cdef inline double kantorovich_max_step(int method, int bound, const ImplicitBody* b,
                                        const double* L) noexcept nogil:
    """Largest |h| with h(h L) <= 1/2 (doc eq. (15)); +inf for L = 0.

    Inertia norm: h(s L) = s^2 h(L), so s = sqrt(1 / (2 h(L))).
    Euclidean: h(s L) = c s^2 x |A L| / (1 - d s x)^2 with x = |L| / lam, so
        s = sqrt(1/2) / (sqrt(c x |A L|) + d x sqrt(1/2)).
    """
    cdef double K, eta, h, x, c, d
    cdef double a[3]
    if bound == BOUND_INERTIA and method != IMP_TRAPEZOID:
        h = kantorovich_h(method, bound, b, L, &K, &eta)
        if h == 0.0:
            return INFINITY
        return sqrt(0.5 / h)
    x = imp_norm(L) / b.lam
    if x == 0.0:
        return INFINITY
    c = 0.375 if method == IMP_MIDPOINT else (0.75 if method == IMP_OBJECT_TRAPEZOID else 2.5)
    d = 1.0 if method == IMP_TRAPEZOID else 0.5
    mat3_vec(b.Iinv, L, a)
    return 0.7071067811865476 / (sqrt(c * x * imp_norm(a)) + d * x * 0.7071067811865476)


cdef inline double rotation_max_step(const ImplicitBody* b, const double* L,
                                     double angle) noexcept nogil:
    """Largest |h| with h sqrt(|A L| |L| / lam) <= angle (doc eq. (16)); +inf for L = 0.

    |A L| is the body's rate (h |A L| the angle it turns in a sub-step) and |L| / lam the
    fastest rate its inertia allows for this |L|; their geometric mean is |A L| for a round
    body (a sub-step turns it at most `angle`) and exceeds it by the square root of the
    inertia ratio for an elongated one, where the midpoint rule's local error in exponential
    coordinates carries that ratio (doc sec. 5).
    """
    cdef double a[3]
    cdef double r
    mat3_vec(b.Iinv, L, a)
    r = sqrt(imp_norm(a) * imp_norm(L) / b.lam)
    if not r > 0.0:
        return INFINITY
    return angle / r


# ---- the solve -----------------------------------------------------------------------------

cdef inline int implicit_solve(const ImplicitOptions* o, const ImplicitBody* b, const double* l,
                               double* v, int* iterations, double* residual, bint monitor,
                               double* trace) noexcept nogil:
    """Solve F(v) = 0 from v = 0 by Newton (Mizerski 2020, sec. 8) or the fixed-point map
    v <- v - F(v).

    Stops when the correction d_k, or the next one predicted from the observed rate
    (max(|d_k|^3 / |d_{k-1}|^2, 2 c |l|/lam |d_k|^2) for Newton, r/(1 - r) |d_k| with
    r = |d_k|/|d_{k-1}| for the fixed point), is at most tol |v|.  `monitor` (a sub-step
    beyond the Kantorovich bound, doc sec. 5): give up with IMP_NOT_CONVERGED as soon as a
    correction after the second is no smaller than the one before (no convergence proven
    there, so none assumed).  `trace` (NULL or room for 3 * max_iter doubles) receives the
    iterates v_1, v_2, ... (OUT: v[3], iterations, residual, trace).
    """
    cdef double F[3]
    cdef double J[9]
    cdef double d[3]
    cdef double dn, dprev = 0.0, vn, pred, r
    cdef int k, i
    cdef bint newton = o.solver == SOLVER_NEWTON
    cdef double kl = (0.75 if o.method == IMP_MIDPOINT else (
        1.5 if o.method == IMP_OBJECT_TRAPEZOID else 5.0)) * imp_norm(l) / b.lam
    v[0] = 0.0
    v[1] = 0.0
    v[2] = 0.0
    iterations[0] = 0
    residual[0] = 0.0
    for k in range(o.max_iter):
        if newton:
            implicit_residual_jacobian(o.method, b.Iinv, l, v, F, J)
            if imp_solve3(J, F, d) != 0:
                return IMP_NONFINITE
        else:
            implicit_residual(o.method, b.Iinv, l, v, d)
        for i in range(3):
            v[i] = v[i] - d[i]
        iterations[0] = k + 1
        if trace != NULL:
            for i in range(3):
                trace[3 * k + i] = v[i]
        dn = imp_norm(d)
        vn = imp_norm(v)
        if not (isfinite(dn) and isfinite(vn)):
            return IMP_NONFINITE
        if dn <= o.tol * vn:
            break
        if monitor and k > 1 and dn >= dprev:
            residual[0] = implicit_residual_norm(o.method, b.Iinv, l, v)
            return IMP_NOT_CONVERGED
        if k > 0 and dprev > 0.0:
            if newton:
                # observed quadratic rate, floored by the a-priori one: |d_{k+1}| <~
                # ||F'^-1|| K/2 |d_k|^2 with K = c |l| / lam (doc eq. (11)), ||F'^-1|| <= ~2
                # inside the bound; the floor guards against an accidentally good first step
                r = dn / dprev
                pred = r * r * dn
                if pred < kl * dn * dn:
                    pred = kl * dn * dn
            else:
                r = dn / dprev
                pred = r / (1.0 - r) * dn if r < 1.0 else dn
            if pred <= o.tol * vn:
                break
        dprev = dn
    else:
        residual[0] = implicit_residual_norm(o.method, b.Iinv, l, v)
        return IMP_NOT_CONVERGED
    residual[0] = implicit_residual_norm(o.method, b.Iinv, l, v)
    return IMP_OK


cdef inline void implicit_advance(const double* v, double* q, double* L) noexcept nogil:
    """One sub-step's update from its root v: q <- q exp(v/2) / |.| (the quaternion of R(v),
    renormalised), L_b <- R(-v) L_b = R(v)^T L_b (IN/OUT: q[4], L[3])."""
    cdef double half[3]
    cdef double e[4]
    cdef double qn[4]
    cdef double R[9]
    cdef double Ln[3]
    cdef double nrm
    cdef int i
    for i in range(3):
        half[i] = 0.5 * v[i]
    quat_exp_pure(half, e)
    quat_mul(q, e, qn)
    nrm = 1.0 / sqrt(qn[0] * qn[0] + qn[1] * qn[1] + qn[2] * qn[2] + qn[3] * qn[3])
    for i in range(4):
        q[i] = qn[i] * nrm
    so3_exp(v, R)
    imp_mat_t_vec(R, L, Ln)
    for i in range(3):
        L[i] = Ln[i]


cdef inline int implicit_free_step(const ImplicitOptions* o, const ImplicitBody* b, double h,
                                   double* q, double* L, ImplicitCounters* c) noexcept nogil:
    """Advance q (unit, body to world) and L = L_b by h in sub-steps (doc sec. 5).

    Each sub-step is the longer of the Kantorovich step (Mizerski 2020 sec. 10, doc eq. (15):
    Newton provably converges) and, for Newton, the rotation step (doc eq. (16)), until the
    step is consumed.  A sub-step beyond the Kantorovich bound whose Newton iteration does
    not converge is redone at the Kantorovich step.  q <- q exp(v/2) (quaternion of R(v)),
    L_b <- R(-v) L_b (OUT: q[4], L[3], c).
    """
    cdef double remaining = h, s, smax, lim
    cdef double l[3]
    cdef double v[3]
    cdef double res = 0.0
    cdef int it = 0, status, i
    cdef long n = 0
    cdef bint beyond
    while remaining != 0.0:
        smax = kantorovich_max_step(o.method, o.bound, b, L)
        if not smax > 0.0:
            return IMP_NONFINITE
        lim = smax
        if o.solver == SOLVER_NEWTON and o.substep_angle > 0.0:
            s = rotation_max_step(b, L, o.substep_angle)
            if s > lim:
                lim = s
        n += 1
        if n > o.max_substeps:
            return IMP_TOO_MANY_SUBSTEPS
        while True:
            s = remaining if fabs(remaining) <= lim else copysign(lim, remaining)
            beyond = fabs(s) > smax
            for i in range(3):
                l[i] = s * L[i]
            status = implicit_solve(o, b, l, v, &it, &res, beyond, NULL)
            if status == IMP_OK or not beyond:
                break
            c.retries += 1                  # not converging beyond the bound: within it
            lim = smax
        remaining = 0.0 if s == remaining else remaining - s
        c.substeps += 1
        c.iterations += it
        if it > c.max_iterations:
            c.max_iterations = it
        if res > c.residual or res != res:
            c.residual = res
        if status != IMP_OK:
            return status
        implicit_advance(v, q, L)
    return IMP_OK
