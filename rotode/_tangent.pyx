# The derivative of a computed rigid-body solution (issue 30, docs/sensitivity.md): forward mode
# through the discrete map (internal differentiation, Bock 1981; Hairer, Norsett & Wanner I,
# 2nd ed., sec. II.6).  One body's steps are given (a fixed grid, or the accepted steps of an
# error-controlled run, held fixed); each step is taken again with the state and, for the
# `inertia` parameter, the principal moments as dual numbers (rotode/_dual.hpp) whose d parts
# carry up to DUAL_N directions at once.  The value part is the step itself; the d parts are the
# step's Jacobian applied to the directions, i.e. the tangent Y carried by the same stages
# (Y' = J(t, y) Y + df/dp), with the method's dense output and its normalisation of q
# differentiated too.  At each output time the ambient tangent (dq, dw) becomes tangent
# coordinates: dtheta = 2 vec(q^-1 dq) (the right perturbation q exp(dtheta/2), body frame).
# Runge-Kutta-Munthe-Kaas (TAB_RKMK; Munthe-Kaas, BIT 38, 1998) steps [v, w] from the dual q_n
# (q = q_n exp(v/2), v' = T(-v)^-1 w), re-anchored and retracted after each step as
# rotode/dynamic.pyx does.  Adams-Bashforth 3 (TAB_AB3) carries its history of f on duals
# with the run's weights and Kutta start; rkn4 (`_rkn_sweep`) its state [q, q'].  The
# implicit rules of rotode/implicit.pyx
# (TAB_IMPLICIT, `_implicit_sweep`) take each sub-step's converged root from the run and its
# derivative by the implicit function theorem on the root's equation.  The y0 sensitivity
# of an error-controlled pair on the state whose torque the specialised engine compiles is
# carried by the run itself instead (rotode/_tangent.hpp); this replay serves every other
# supported run.
#
# Layers (docs/architecture.md): a runner; the stepping loops hold the GIL (the torque's dual
# evaluation is a method of the body); the facade (rotode/_sensitivity.py) loops over bodies.

import numpy as np

from rotode import methods as _methods

# Star cimport: Cython only sees the non-member dual operators (double * dual, ...) this way.
from rotode.dual cimport *
from rotode._rodrigues cimport so3_exp_coefficients
from rotode.so3 cimport so3_dexp_inv_apply, so3_dexp, so3_exp
from rotode.omega cimport AngularVelocity, SOURCE_UNAVAILABLE
from rotode.equations cimport (FRAME_BODY, euler_rhs, mat3_vec, quaternion_kinematics_rhs,
                               rkn4_stage_state)
from rotode.quaternion cimport (quat_conj, quat_exp_pure, quat_mul, quat_mul_vec, quat_norm2,
                                quat_to_matrix)
from rotode.rhs cimport RigidBody
from rotode.torque cimport Torque
from rotode.implicit cimport (ImplicitOptions, ImplicitBody, implicit_residual_jacobian,
                              implicit_solve, implicit_advance, imp_solve3,
                              kantorovich_max_step, rotation_max_step, IMP_OK, IMP_NONFINITE,
                              IMP_TOO_MANY_SUBSTEPS, IMP_MIDPOINT, IMP_TRAPEZOID,
                              IMP_OBJECT_TRAPEZOID, SOLVER_NEWTON, SOLVER_FIXED_POINT,
                              BOUND_INERTIA)
from libc.math cimport sqrt, fabs, copysign
from rotode import torque as _torque

cdef extern from "_rk.hpp" namespace "rotode" nogil:
    # the variable-step Adams-Bashforth 3 weights of every path (OUT: beta[3])
    void ab3_coefficients(double h, double h1, double h2, double* beta)


__all__ = ["rigid_body", "kinematics_rates", "KERNELS", "RATE_KERNELS", "TORQUE_PARAMETERS",
           "TENSOR", "DIRECTIONS"]

cdef enum:
    MAX_STAGES = 16          # a pair's stages, its FSAL stage and its dense-output stages
    NZ = 7                   # the state [q (4), w (3)]
    NT = 6                   # its tangent coordinates [dtheta (3), dw (3)]
    FIXED = -1               # Tab.kind of a method without dense output
    TAB_RK = 0               # Tab.kernel: an explicit Runge-Kutta tableau on the state
    TAB_LIE_EULER = 1        # q1 = q0 exp(h w0/2), w1 = w0 + h w'
    TAB_CG = 2               # Crouch-Grossman on SU(2) x R^3 (rotode/dynamic.pxd `cg_step`)
    TAB_RKMK = 3             # a tableau on [v, w] from q_n (Runge-Kutta-Munthe-Kaas)
    TAB_AB3 = 4              # variable-step Adams-Bashforth 3, Kutta's rk3 start
    TAB_IMPLICIT = 5         # the implicit rules of rotode/implicit.pyx (`_implicit_sweep`)
    TAB_RKN4 = 6             # Runge-Kutta-Nystrom on [q, q'] (`_rkn_sweep`)
    KIN_CG = 0               # kinematics: a product of exp(h b_s w(t0 + c_s h)) (lie_euler, cg*)
    KIN_EXP2 = 1             # kinematics: exp(h w(t0) + h^2/2 w'(t0))
    MAX_RATE_COLS = 9        # rate-parameter directions of one kinematics pass
    MAX_UNITS = 8            # torque-parameter directions of one pass (>= DUAL_N)
    TIMED = -2               # KinPass.sel of a frequency's column: dw/dp = t u(t)

#: The rigid-body kernels of the registry this module differentiates -> its code for them.
KERNELS = {"rk3": TAB_RK, "rk4": TAB_RK, "erk": TAB_RK, "lie_euler": TAB_LIE_EULER,
           "cg": TAB_CG, "rkmk": TAB_RKMK, "ab3": TAB_AB3, "implicit": TAB_IMPLICIT,
           "rkn4": TAB_RKN4}
#: Directions one pass carries (the d parts of a dual number).
DIRECTIONS = DUAL_N
#: The kinematics kernels whose rate parameters `kinematics_rates` differentiates -> its code.
RATE_KERNELS = {"cg": KIN_CG, "exp2": KIN_EXP2}


cdef struct Tab:
    int kernel               # TAB_*
    int s                    # stages of a step (K[s]: the FSAL stage of a pair)
    int kind                 # FIXED, or the PairKind of the dense output (0 standard, 1 dop853)
    int s_dense              # stages of the dense output (dop853: 16)
    int npow                 # a standard pair's powers of theta
    bint normalize           # q / |q| after each step (rk3, rk4 with `normalize`)
    double a[MAX_STAGES * MAX_STAGES]
    double b[MAX_STAGES]
    double c[MAX_STAGES]
    double dense[4 * MAX_STAGES]     # standard: P[j * 4 + p]; dop853: D[r * 16 + j]


cdef struct Body:
    # what a step reads besides the body object: the moments as duals (the `inertia`
    # parameter), or None (the body's own double inertia)
    bint principal
    dual I[3]
    # the `inertia` parameter of a full tensor: I and I^-1 as duals, directions the six
    # components [Ixx, Iyy, Izz, Ixy, Ixz, Iyz] (symmetric perturbations)
    bint full
    dual J[9]
    dual Jinv[9]
    # a torque parameter's directions: per direction the torque with that parameter's unit
    # (every built-in torque parameter enters linearly: dtau/dp_c = units[c](t, q, w)),
    # borrowed from a list the caller keeps alive
    int ntq
    void* units[MAX_UNITS]
    # Runge-Kutta-Munthe-Kaas (TAB_RKMK): the orientation q_n the step starts from
    bint rkmk
    dual qb[4]


cdef void _fill_tab(Tab* T, spec, bint normalize) except *:
    """The method `spec` (a registry `Method`) as the arrays of a `Tab` (OUT: T)."""
    cdef int i, j, r, p
    for i in range(MAX_STAGES * MAX_STAGES):
        T.a[i] = 0.0
    for i in range(MAX_STAGES):
        T.b[i] = 0.0
        T.c[i] = 0.0
    for i in range(4 * MAX_STAGES):
        T.dense[i] = 0.0
    T.kernel = KERNELS[spec.kernel("rigid body")]
    T.normalize = normalize
    T.kind = FIXED
    T.s = 1
    T.s_dense = 0
    T.npow = 0
    if T.kernel == TAB_AB3:
        spec = _methods.get("rk3")              # its first two steps: Kutta's rk3
    if spec.tableau is None:
        return
    a, b, c = spec.tableau.doubles
    T.s = len(b)
    for i in range(T.s):
        T.b[i] = b[i]
        T.c[i] = c[i]
        for j in range(i):
            T.a[i * MAX_STAGES + j] = a[i][j]
    emb = spec.embedded
    if emb is None:
        return
    dd = emb.doubles
    T.kind = emb.kind.value
    for j in range(T.s):                      # the FSAL row: b
        T.a[T.s * MAX_STAGES + j] = b[j]
    T.c[T.s] = 1.0
    if T.kind == 0:
        T.s_dense = T.s + 1
        T.npow = emb.powers
        for j, row in enumerate(dd["dense"]):
            for p, v in enumerate(row):
                T.dense[j * 4 + p] = v
    else:
        T.s_dense = T.s + 1 + len(dd["extra_a"])
        for r, row in enumerate(dd["extra_a"]):
            T.c[T.s + 1 + r] = dd["extra_c"][r]
            for j, v in enumerate(row):
                T.a[(T.s + 1 + r) * MAX_STAGES + j] = v
        for r, row in enumerate(dd["dense"]):
            for j, v in enumerate(row):
                T.dense[r * MAX_STAGES + j] = v


cdef int _f(RigidBody body, const Body* p, double t, const dual* y, dual* dy) except? -99:
    """The stages' right-hand side on duals: [q, w]' (`_f_state`), or for Runge-Kutta-Munthe-Kaas
    [v, w]' = [T(-v)^-1 w, w'(qb exp(v/2), w)] (rotode/rkmk.pxd `rkmk_rate`, dynamic.pyx
    `_deriv_rkmk`; the dual dexp^-1 of rotode/so3.pxd, whose small-angle branch is its series)
    (OUT: dy[7], dy[6] = 0 for the algebra)."""
    cdef dual z[NZ]
    cdef dual dz[NZ]
    cdef dual m[3]
    cdef int k, st
    if not p.rkmk:
        return _f_state(body, p, t, y, dy)
    _times_exp(p.qb, y, 1.0, z)
    for k in range(3):
        z[4 + k] = y[3 + k]
        m[k] = -y[k]
    st = _f_state(body, p, t, z, dz)
    if st != 0:
        return st
    so3_dexp_inv_apply(m, &y[3], dy)
    for k in range(3):
        dy[3 + k] = dz[4 + k]
    dy[6] = dual(0.0)
    return 0


cdef int _f_state(RigidBody body, const Body* p, double t, const dual* y,
                  dual* dy) except? -99:
    """y' = f(t, y) of the rigid body on duals: rotode/equations.pxd `rigid_body_rhs` with the
    body's torque (`torque_dual`) and, for the `inertia` parameter, dual principal moments
    (OUT: dy[7]); the torque's status."""
    cdef dual tau[3]
    cdef dual Iw[3]
    cdef dual r[3]
    cdef const dual* w = &y[4]
    cdef int k
    cdef int st = body.torque_dual(t, y, w, tau)
    if st != 0:
        return st
    if p.ntq:
        st = _torque_directions(p, t, y, tau)
        if st != 0:
            return st
    quaternion_kinematics_rhs(y, w, FRAME_BODY, body.norm_gain, dy)
    if p.full:
        # w' = I^-1 (tau - w x I w) with I and I^-1 dual matrices
        for k in range(3):
            Iw[k] = p.J[3 * k] * w[0] + p.J[3 * k + 1] * w[1] + p.J[3 * k + 2] * w[2]
            r[k] = tau[k]
        if body.gyroscopic:
            r[0] = tau[0] - (w[1] * Iw[2] - w[2] * Iw[1])
            r[1] = tau[1] - (w[2] * Iw[0] - w[0] * Iw[2])
            r[2] = tau[2] - (w[0] * Iw[1] - w[1] * Iw[0])
        for k in range(3):
            dy[4 + k] = p.Jinv[3 * k] * r[0] + p.Jinv[3 * k + 1] * r[1] + p.Jinv[3 * k + 2] * r[2]
        return 0
    if not p.principal:
        euler_rhs(w, tau, body._I, body._Iinv, body.gyroscopic, &dy[4])
        return 0
    # Euler's equations with I = diag(I0, I1, I2) as duals: w' = (tau - w x I w) / I
    Iw[0] = p.I[0] * w[0]
    Iw[1] = p.I[1] * w[1]
    Iw[2] = p.I[2] * w[2]
    r[0] = tau[0]
    r[1] = tau[1]
    r[2] = tau[2]
    if body.gyroscopic:
        r[0] = tau[0] - (w[1] * Iw[2] - w[2] * Iw[1])
        r[1] = tau[1] - (w[2] * Iw[0] - w[0] * Iw[2])
        r[2] = tau[2] - (w[0] * Iw[1] - w[1] * Iw[0])
    dy[4] = r[0] / p.I[0]
    dy[5] = r[1] / p.I[1]
    dy[6] = r[2] / p.I[2]
    return 0


cdef int _torque_directions(const Body* p, double t, const dual* y, dual* tau) noexcept:
    """tau's d parts += dtau/dp_c, the unit torques at the value of the state (the torque
    is linear in its parameters) (IN/OUT: tau[3]); a unit's status."""
    cdef double q[4]
    cdef double w[3]
    cdef double tu[3]
    cdef int c, k, st
    for k in range(4):
        q[k] = y[k].v
    for k in range(3):
        w[k] = y[4 + k].v
    for c in range(p.ntq):
        st = (<Torque>p.units[c]).evaluate(t, q, w, tu)
        if st != 0:
            return st
        for k in range(3):
            tau[k].d[c] = tau[k].d[c] + tu[k]
    return 0


#: The torque parameters `rigid_body` differentiates: torque class -> names.
TORQUE_PARAMETERS = {_torque.Constant: ("torque",), _torque.Gravity: ("mass", "g", "com"),
                     _torque.GravityGradient: _torque._GG_SCALARS}


def gravity_gradient_parts(tq):
    """The `rotode.torque.GravityGradient` parts of the torque `tq` (itself, or a `Sum`'s):
    the built-in torques whose value depends on the body's inertia."""
    parts = tq.parts if isinstance(tq, _torque.Sum) else (tq,)
    return [p for p in parts if type(p) is _torque.GravityGradient]


def _inertia_units(tq, js, full):
    """The torques whose value is dtau/dI along the inertia directions `js` (the moment j, or
    with `full` the tensor component `TENSOR`[j]): those of the gravity-gradient parts of `tq`
    (which take the body's inertia: rotode/_sensitivity.py checks that they hold the body's),
    summed; [] when no part depends on the inertia."""
    gg = gravity_gradient_parts(tq)
    if not gg:
        return []
    units = []
    for j in js:
        a, b = TENSOR[j] if full else (j, j)
        E = np.zeros((3, 3))
        E[a, b] = E[b, a] = 1.0
        parts = [_torque._gravity_gradient_tangent(g, "inertia", E) for g in gg]
        units.append(parts[0] if len(parts) == 1 else _torque.Sum(*parts))
    return units


def _unit_torques(tq, name, js):
    """The torques whose value is dtau/dp_j of the parameter `name` of `tq`, j in `js`
    (Constant's and Gravity's parameters enter linearly: the torque at the unit parameter;
    GravityGradient's by its derivative, rotode/torque.pyx `_gravity_gradient_tangent`)."""
    if type(tq) is _torque.GravityGradient:
        return [_torque._gravity_gradient_tangent(tq, name)]
    if name == "torque":
        return [_torque.Constant(np.eye(3)[j], frame=tq.frame) for j in js]
    if name == "mass":
        return [_torque.Gravity(1.0, tq.g, tq.com)]
    if name == "g":
        return [_torque.Gravity(tq.mass, 1.0, tq.com)]
    return [_torque.Gravity(tq.mass, tq.g, np.eye(3)[j]) for j in js]


cdef void _times_exp(const dual* q, const dual* w, double c, dual* out) noexcept nogil:
    """out = q * exp(c w / 2) on duals (rotode/dynamic.pxd `quat_times_exp`; the coefficients
    of rotode/_rodrigues.hpp, whose small-angle branch is derivative-grade) (OUT: out[4])."""
    cdef dual x[3]
    cdef dual e[4]
    cdef dual x2, s1, s2
    x[0] = 0.5 * c * w[0]
    x[1] = 0.5 * c * w[1]
    x[2] = 0.5 * c * w[2]
    x2 = x[0] * x[0] + x[1] * x[1] + x[2] * x[2]
    so3_exp_coefficients(x2, &s1, &s2)
    e[0] = 1.0 - x2 * s2                      # cos|x| = 1 - |x|^2 (1 - cos|x|)/|x|^2
    e[1] = s1 * x[0]
    e[2] = s1 * x[1]
    e[3] = s1 * x[2]
    quat_mul(q, e, out)


cdef int _rk_stages(const Tab* T, RigidBody body, const Body* p, double t, double h,
                    double t_end, const dual* z, dual (*K)[NZ], int r0, int r1) except? -99:
    """Stages r0..r1-1 of an explicit tableau, K_r = f(t + c_r h, z + h sum_j a_rj K_j) (the
    stages with c = 1 at t_end) (OUT: K[r0:r1])."""
    cdef dual ys[NZ]
    cdef dual acc
    cdef int r, j, k, st
    cdef double tr
    for r in range(r0, r1):
        for k in range(NZ):
            acc = dual(0.0)
            for j in range(r):
                if T.a[r * MAX_STAGES + j] != 0.0:
                    acc = acc + T.a[r * MAX_STAGES + j] * K[j][k]
            ys[k] = z[k] + h * acc
        tr = t_end if T.c[r] == 1.0 else t + T.c[r] * h
        st = _f(body, p, tr, ys, K[r])
        if st != 0:
            return st
    return 0


cdef int _rk_step(const Tab* T, RigidBody body, const Body* p, double t, double h,
                  double t_end, const dual* z, dual (*K)[NZ], dual* znew) except? -99:
    """One step of an explicit tableau on the state, K[0] = f(t, z) included (OUT: K, znew)."""
    cdef dual acc
    cdef int j, k
    cdef int st = _f(body, p, t, z, K[0])
    if st == 0:
        st = _rk_stages(T, body, p, t, h, t_end, z, K, 1, T.s)
    if st != 0:
        return st
    for k in range(NZ):
        acc = dual(0.0)
        for j in range(T.s):
            if T.b[j] != 0.0:
                acc = acc + T.b[j] * K[j][k]
        znew[k] = z[k] + h * acc
    return 0


cdef int _cg_step(const Tab* T, RigidBody body, const Body* p, double t, double h,
                  const dual* z, dual* znew) except? -99:
    """Crouch-Grossman (Lie-Euler: its one-stage tableau) on duals, as rotode/dynamic.pxd
    `cg_step`: Q_i = q0 prod_j exp(h a_ij W_j / 2), W_i = w0 + h sum_j a_ij K_j, K_i the
    angular acceleration at (Q_i, W_i); q1 = q0 prod_i exp(h b_i W_i / 2) (OUT: znew)."""
    cdef dual Q[4]
    cdef dual tmp[4]
    cdef dual W[MAX_STAGES][3]
    cdef dual K[MAX_STAGES][3]
    cdef dual y[NZ]
    cdef dual dy[NZ]
    cdef double coef
    cdef int i, j, k, st
    for i in range(T.s):
        for k in range(4):
            Q[k] = z[k]
        for k in range(3):
            W[i][k] = z[4 + k]
        for j in range(i):
            coef = T.a[i * MAX_STAGES + j]
            if coef != 0.0:
                _times_exp(Q, W[j], h * coef, tmp)
                for k in range(4):
                    Q[k] = tmp[k]
                for k in range(3):
                    W[i][k] = W[i][k] + h * coef * K[j][k]
        for k in range(4):
            y[k] = Q[k]
        for k in range(3):
            y[4 + k] = W[i][k]
        st = _f(body, p, t + T.c[i] * h, y, dy)
        if st != 0:
            return st
        for k in range(3):
            K[i][k] = dy[4 + k]
    for k in range(4):
        Q[k] = z[k]
    for k in range(3):
        znew[4 + k] = z[4 + k]
    for i in range(T.s):
        coef = T.b[i]
        if coef != 0.0:
            _times_exp(Q, W[i], h * coef, tmp)
            for k in range(4):
                Q[k] = tmp[k]
            for k in range(3):
                znew[4 + k] = znew[4 + k] + h * coef * K[i][k]
    for k in range(4):
        znew[k] = Q[k]
    return 0


cdef void _dense_rows(const Tab* T, double h, const dual* z, const dual* znew,
                      dual (*K)[NZ], dual (*F)[NZ]) noexcept:
    """The interpolant's rows F of an accepted step (rotode/erk.pxd, HNW sec. II.6 and II.10),
    every stage of K filled (OUT: F[0..6])."""
    cdef dual acc, dy
    cdef int r, j, k
    if T.kind == 0:
        for r in range(T.npow):
            for k in range(NZ):
                acc = dual(0.0)
                for j in range(T.s_dense):
                    if T.dense[j * 4 + r] != 0.0:
                        acc = acc + T.dense[j * 4 + r] * K[j][k]
                F[r][k] = h * acc
        return
    for k in range(NZ):
        dy = znew[k] - z[k]
        F[0][k] = dy
        F[1][k] = h * K[0][k] - dy
        F[2][k] = 2.0 * dy - h * (K[T.s][k] + K[0][k])
    for r in range(4):
        for k in range(NZ):
            acc = dual(0.0)
            for j in range(T.s_dense):
                if T.dense[r * MAX_STAGES + j] != 0.0:
                    acc = acc + T.dense[r * MAX_STAGES + j] * K[j][k]
            F[3 + r][k] = h * acc


cdef void _dense_eval(const Tab* T, double x, const dual* z, dual (*F)[NZ],
                      dual* out) noexcept:
    """The interpolant at t + x h (OUT: out[7])."""
    cdef dual acc
    cdef double pw, u = 1.0 - x
    cdef int r, k
    for k in range(NZ):
        acc = dual(0.0)
        if T.kind == 0:
            pw = 1.0
            for r in range(T.npow):
                pw = pw * x
                acc = acc + F[r][k] * pw
        else:
            for r in range(7):
                acc = (acc + F[6 - r][k]) * (x if r % 2 == 0 else u)
        out[k] = z[k] + acc


cdef void _store(const dual* z, int ncols, double* out) noexcept:
    """Tangent coordinates of the d parts of z: dtheta = 2 vec(q^-1 dq), dw (OUT: out[6, ncols],
    row-major)."""
    cdef double qc[4]
    cdef double dq[4]
    cdef double u[4]
    cdef double n2
    cdef int j, k
    for k in range(4):
        qc[k] = z[k].v
    n2 = quat_norm2(qc)
    quat_conj(qc, qc)
    for j in range(ncols):
        for k in range(4):
            dq[k] = z[k].d[j]
        quat_mul(qc, dq, u)
        for k in range(3):
            out[k * ncols + j] = 2.0 * u[1 + k] / n2
            out[(3 + k) * ncols + j] = z[4 + k].d[j]


cdef void _normalize(dual* z) noexcept:
    """q <- q / |q| on duals (its derivative included) (IN/OUT: z[0:4])."""
    cdef dual s = 1.0 / real_sqrt(quat_norm2(z))
    cdef int k
    for k in range(4):
        z[k] = z[k] * s


cdef struct Ab3:
    # the history of a variable-step Adams-Bashforth 3 run (rotode/dynamic.pyx `_step`): the
    # last three f on duals (f[nab % 3] the newest), the two previous step sizes, steps taken
    dual f[3][NZ]
    double hh[2]
    long nab


cdef int _ab3_step(const Tab* T, RigidBody body, const Body* p, Ab3* H, double t, double h,
                   double t_end, const dual* z, dual (*K)[NZ], dual* znew) except? -99:
    """One step of variable-step Adams-Bashforth 3 on duals, the operations of the run
    (rotode/dynamic.pyx `_step`, rotode/_lanes.hpp `ab3_lanes`): f_n = f(t, z) joins the
    history; the first two steps are Kutta's rk3 (T holds its tableau), then
    y1 = y0 + beta0 f_n + beta1 f_(n-1) + beta2 f_(n-2) with the weights of the grid's step
    sizes (rotode/_rk.hpp `ab3_coefficients`, the formula of every path; Hairer, Norsett &
    Wanner I, 2nd ed., sec. III.5, the variable-step Adams methods) (IN/OUT: H; OUT: K,
    znew)."""
    cdef int slot = H.nab % 3, j, k
    cdef int s1 = (H.nab + 2) % 3, s2 = (H.nab + 1) % 3
    cdef double b[3]
    cdef dual acc
    cdef int st = _f(body, p, t, z, H.f[slot])
    if st != 0:
        return st
    if H.nab < 2:
        for k in range(NZ):
            K[0][k] = H.f[slot][k]
        st = _rk_stages(T, body, p, t, h, t_end, z, K, 1, T.s)
        if st != 0:
            return st
        for k in range(NZ):
            acc = dual(0.0)
            for j in range(T.s):
                acc = acc + T.b[j] * K[j][k]
            znew[k] = z[k] + h * acc
    else:
        ab3_coefficients(h, H.hh[0], H.hh[1], b)
        for k in range(NZ):
            znew[k] = z[k] + (b[0] * H.f[slot][k] + b[1] * H.f[s1][k] + b[2] * H.f[s2][k])
    H.hh[1] = H.hh[0]
    H.hh[0] = h
    H.nab += 1
    return 0


cdef int _step(const Tab* T, RigidBody body, const Body* p, Ab3* H, double t, double h,
               double t_end, dual* z, dual (*K)[NZ], dual* znew) except? -99:
    """One step of the kernel of T from z (IN/OUT: H, the ab3 history; OUT: K, znew)."""
    if T.kernel == TAB_RK or T.kernel == TAB_RKMK:
        return _rk_step(T, body, p, t, h, t_end, z, K, znew)
    if T.kernel == TAB_AB3:
        return _ab3_step(T, body, p, H, t, h, t_end, z, K, znew)
    return _cg_step(T, body, p, t, h, z, znew)


cdef void _anchor(Body* p, dual* z, bint first, dual* x) noexcept:
    """The stepped state from the row z = [q, w]: z itself, or for Runge-Kutta-Munthe-Kaas
    x = [v = 0, w] from qb = q/|q| (the first step) or q retracted, q (3 - |q|^2)/2 (the
    driver's `rkmk_base` and `rkmk_retract`, on duals) (OUT: x, p.qb)."""
    cdef dual s
    cdef int k
    if not p.rkmk:
        for k in range(NZ):
            x[k] = z[k]
        return
    if first:
        s = 1.0 / real_sqrt(quat_norm2(z))
    else:
        s = 1.5 - 0.5 * quat_norm2(z)
    for k in range(4):
        p.qb[k] = z[k] * s
    for k in range(3):
        x[k] = dual(0.0)
        x[3 + k] = z[4 + k]
    x[6] = dual(0.0)


cdef void _row(const Body* p, const dual* x, dual* z) noexcept:
    """The row [q, w] of a stepped state x: x itself, or [qb exp(v/2), w] (OUT: z[7])."""
    cdef int k
    if not p.rkmk:
        for k in range(NZ):
            z[k] = x[k]
        return
    _times_exp(p.qb, x, 1.0, z)
    for k in range(3):
        z[4 + k] = x[3 + k]


cdef int _sweep(const Tab* T, RigidBody body, Body* p, const double[::1] ts,
                const double[::1] tout, dual* z, int ncols, double[:, :, ::1] out) except? -99:
    """The steps ts[i] -> ts[i + 1] from the row z, storing the tangent at every time of tout
    (each a step's end or, for a pair, inside a step: its dense output) (IN/OUT: z; OUT:
    out)."""
    cdef dual x[NZ]
    cdef dual xnew[NZ]
    cdef dual xd[NZ]
    cdef dual zd[NZ]
    cdef dual K[MAX_STAGES][NZ]
    cdef dual F[7][NZ]
    cdef Py_ssize_t n = ts.shape[0] - 1, m = tout.shape[0], i, slot = 0
    cdef double t, tn, h, d = 1.0 if n == 0 or ts[n] >= ts[0] else -1.0
    cdef int st
    cdef bint prepared
    cdef Ab3 H
    H.nab = 0
    H.hh[0] = 0.0
    H.hh[1] = 0.0
    while slot < m and tout[slot] == ts[0]:
        _store(z, ncols, &out[slot, 0, 0])
        slot += 1
    for i in range(n):
        t = ts[i]
        tn = ts[i + 1]
        h = tn - t
        _anchor(p, z, i == 0, x)
        st = _step(T, body, p, &H, t, h, tn, x, K, xnew)
        if st != 0:
            return st
        prepared = False
        while slot < m and d * (tout[slot] - tn) < 0.0:
            if not prepared:
                if T.kind == FIXED:
                    return -98          # an output inside a fixed step: not a grid time
                st = _rk_stages(T, body, p, t, h, tn, x, K, T.s, T.s_dense)
                if st != 0:
                    return st
                _dense_rows(T, h, x, xnew, K, F)
                prepared = True
            _dense_eval(T, (tout[slot] - t) / h, x, F, xd)
            _row(p, xd, zd)
            _store(zd, ncols, &out[slot, 0, 0])
            slot += 1
        _row(p, xnew, z)
        if T.normalize:
            _normalize(z)
        while slot < m and d * (tout[slot] - tn) <= 0.0:
            _store(z, ncols, &out[slot, 0, 0])
            slot += 1
    return 0


cdef void _seed(const double* y0, list cols, int c0, int c1, dual* z, Body* p) except *:
    """The initial duals of the columns c0..c1-1: a `y0` direction j < 3 is dq = q0 (0, e_j/2),
    j >= 3 is dw = e_(j-3); an `inertia` direction k seeds the moment I_k (IN/OUT: p)."""
    cdef int k, c, j
    cdef double e[4]
    cdef double dq[4]
    for k in range(NZ):
        z[k] = dual(y0[k])
    for c in range(c0, c1):
        kind, j = cols[c]
        if kind == "inertia" and p.full:
            continue                 # seeded in p.J, p.Jinv (`_seed_tensor`)
        if kind == "inertia":
            p.I[j].d[c - c0] = 1.0
        elif kind != "y0":
            continue                 # a torque parameter: its directions enter by the torque
        elif j >= 3:
            z[4 + j - 3].d[c - c0] = 1.0
        else:
            e[0] = 0.0
            e[1] = 0.0
            e[2] = 0.0
            e[3] = 0.0
            e[1 + j] = 0.5
            quat_mul(y0, e, dq)
            for k in range(4):
                z[k].d[c - c0] = dq[k]


#: The components of a full inertia tensor's directions: (row, column) of each.
TENSOR = ((0, 0), (1, 1), (2, 2), (0, 1), (0, 2), (1, 2))


cdef void _seed_tensor(RigidBody body, list cols, int c0, int c1, Body* p) except *:
    """I and I^-1 as duals, the directions the tensor components of columns c0..c1-1:
    dI = E (E_ab = E_ba = 1), dI^-1 = -I^-1 E I^-1 (OUT: p.J, p.Jinv)."""
    cdef int c, k, a, b
    Iinv = np.asarray(<double[:9]>body._Iinv).reshape(3, 3)
    for k in range(9):
        p.J[k] = dual(body._I[k])
        p.Jinv[k] = dual(body._Iinv[k])
    for c in range(c0, c1):
        a, b = TENSOR[cols[c][1]]
        E = np.zeros((3, 3))
        E[a, b] = E[b, a] = 1.0
        dinv = -(Iinv @ E @ Iinv)
        for k in range(9):
            p.J[k].d[c - c0] = E.flat[k]
            p.Jinv[k].d[c - c0] = dinv.flat[k]


def rigid_body(method, RigidBody body, y0, ts, tout, cols, normalize=False, full=False,
               options=None):
    """The derivative of one body's computed solution with the steps `ts` held fixed.

    Parameters
    ----------
    method : str
        A registry method whose rigid-body kernel is one of `KERNELS`.
    body : rotode.RigidBody
        One body (no per-body parameters).
    y0 : ndarray, shape (7,)
        Its initial state [q, w_body].
    ts : ndarray, shape (n + 1,)
        The step times (the grid of a fixed-step run, or the accepted steps of an
        error-controlled one).
    tout : ndarray, shape (m,)
        Output times: step ends, or times inside a step of a pair (its dense output).
    cols : list of (str, int)
        The directions: ``("y0", j)`` (j < 3: dtheta_j, else dw_(j-3)), ``("inertia", k)``
        (the principal moment k; with ``full``, the tensor component `TENSOR`[k]), or
        component j of a parameter of the body's torque (`TORQUE_PARAMETERS`).
    normalize : bool, optional
        The method normalises q after each step.
    full : bool, optional
        The ``inertia`` directions are the six components of the tensor (default False: the
        principal moments of a diagonal inertia).
    options : dict, optional
        The run's method options (an implicit rule's ``solver``, ``tol``, ``bound``,
        ``max_iter``, ``max_substeps``, ``substep_angle``: its sub-steps and roots are
        the run's; default None).

    Returns
    -------
    ndarray, shape (m, 6, len(cols))
        d[dtheta, dw](tout) / d(direction), in tangent coordinates.
    """
    cdef Tab T
    cdef Body p
    cdef Imp P
    cdef dual z[NZ]
    cdef const double[::1] y0v = np.ascontiguousarray(y0, dtype=float)
    cdef const double[::1] tsv = np.ascontiguousarray(ts, dtype=float)
    cdef const double[::1] tov = np.ascontiguousarray(tout, dtype=float)
    cdef int c0 = 0, c1, ncols = len(cols), k, st
    _fill_tab(&T, _methods.get(method, "rigid body"), normalize)
    setup = _implicit_setup(method, body, options) if T.kernel == TAB_IMPLICIT else None
    out = np.empty((tov.shape[0], NT, ncols))
    while c0 < ncols:
        # one pass: at most DUAL_N directions of one parameter (a parameter's columns do not
        # depend on which others are asked for: only the `inertia` passes take dual moments)
        c1 = c0 + 1
        while c1 < ncols and c1 - c0 < DUAL_N and cols[c1][0] == cols[c0][0]:
            c1 += 1
        part = np.zeros((tov.shape[0], NT, c1 - c0))
        p.full = full and cols[c0][0] == "inertia"
        p.principal = cols[c0][0] == "inertia" and not full
        p.rkmk = T.kernel == TAB_RKMK
        if p.full:
            _seed_tensor(body, cols, c0, c1, &p)
        js = [cols[c][1] for c in range(c0, c1)]
        if cols[c0][0] == "inertia":
            units = _inertia_units(body.torque, js, full)
        elif cols[c0][0] != "y0":
            units = _unit_torques(body.torque, cols[c0][0], js)
        else:
            units = []
        p.ntq = len(units)
        for k in range(p.ntq):
            p.units[k] = <void*>units[k]
        for k in range(3):
            p.I[k] = dual(body._I[4 * k])
        _seed(&y0v[0], cols, c0, c1, z, &p)
        if setup is not None:
            _imp_fill(&P, body, &p, setup)
            st = _implicit_sweep(body, &p, &P, tsv, tov, z, c1 - c0, part)
        elif T.kernel == TAB_RKN4:
            st = _rkn_sweep(body, &p, normalize, tsv, tov, z, c1 - c0, part)
        else:
            st = _sweep(&T, body, &p, tsv, tov, z, c1 - c0, part)
        if st == -98:
            raise ValueError("an output time inside a fixed step")
        if st != 0:
            body.raise_status(st)
        out[:, :, c0:c1] = part
        c0 = c1
    return out


# ---- the implicit rules: the implicit function theorem on each step's Newton system --------
# A step of rotode/implicit.pyx is Strang's splitting, half a kick L_b += h/2 tau, the free
# implicit step in sub-steps, half a kick (Mizerski 2020 secs. 7-10; docs/implicit-midpoint.md
# secs. 5-6).  A sub-step s solves F(v; l, A) = 0 for the rotation vector v (l = s L_b,
# A = I^-1; midpoint F = v - A R(-v/2) l), then q <- q exp(v/2) / |.|, L_b <- R(-v) L_b.  The
# run's converged v is taken as it is (the run's own Newton iteration, on the values); its
# derivative is that of the root, dv = -F_v^-1 (F_l dl + F_A dA) (the implicit function
# theorem; Hairer, Norsett & Wanner I, 2nd ed., sec. II.6 on the internal differentiation of
# implicit methods), F_v the analytic Jacobian of rotode/implicit.pxd
# `implicit_residual_jacobian` and F_l dl + F_A dA the d parts of F on duals at v held.  The
# sub-step sizes are the run's: its bounds (the Kantorovich step, doc eq. (15), or the rotation
# step, doc eq. (16)) as functions of L_b on duals, the last what remains of h.  Every value
# part is reset to the run's own double operations, so the sub-steps and roots are the run's.


cdef struct Imp:
    ImplicitOptions o
    ImplicitBody b           # the run's doubles
    dual I[9]                # I and A = I^-1 on duals (the inertia directions)
    dual A[9]
    dual lam                 # lambda_min(I), d lam = e^T dI e (e its eigenvector)
    bint kicks               # a torque: Strang splitting
    bint wdep                # the torque depends on w: the explicit midpoint kick


cdef void _set_v(dual* z, const double* v, int n) noexcept:
    """The value parts of z[:n] <- v (IN/OUT: z)."""
    cdef int k
    for k in range(n):
        z[k].v = v[k]


cdef void _dmat_vec(const dual* M, const dual* x, dual* out) noexcept:
    """out = M x, M row-major 3x3 of duals (OUT: out[3])."""
    cdef int k
    for k in range(3):
        out[k] = M[3 * k] * x[0] + M[3 * k + 1] * x[1] + M[3 * k + 2] * x[2]


cdef void _rmat_vec(const double* R, bint transpose, const dual* x, dual* out) noexcept:
    """out = R x (or R^T x), R row-major 3x3 of doubles (OUT: out[3])."""
    cdef int k
    for k in range(3):
        if transpose:
            out[k] = R[k] * x[0] + R[3 + k] * x[1] + R[6 + k] * x[2]
        else:
            out[k] = R[3 * k] * x[0] + R[3 * k + 1] * x[1] + R[3 * k + 2] * x[2]


cdef dual _imp_bound(const Imp* P, const dual* L, bint rotation) noexcept:
    """A sub-step bound at L_b on duals: rotode/implicit.pxd `rotation_max_step` (rotation)
    or `kantorovich_max_step` (Mizerski 2020 sec. 10; docs/implicit-midpoint.md eqs. (15),
    (16))."""
    cdef dual a[3]
    cdef dual nL, na, x, h
    cdef double c = 0.375 if P.o.method == IMP_MIDPOINT else (
        0.75 if P.o.method == IMP_OBJECT_TRAPEZOID else 2.5)
    cdef double d = 1.0 if P.o.method == IMP_TRAPEZOID else 0.5
    _dmat_vec(P.A, L, a)
    nL = real_sqrt(L[0] * L[0] + L[1] * L[1] + L[2] * L[2])
    na = real_sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2])
    if rotation:
        return P.o.substep_angle / real_sqrt(na * nL / P.lam)
    if P.o.bound == BOUND_INERTIA and P.o.method != IMP_TRAPEZOID:
        x = L[0] * a[0] + L[1] * a[1] + L[2] * a[2]          # l.A l
        h = c * nL / (P.lam * real_sqrt(P.lam)) * real_sqrt(x)
        return real_sqrt(0.5 / h)
    x = nL / P.lam
    return 0.7071067811865476 / (real_sqrt(c * x * na) + d * x * 0.7071067811865476)


cdef void _imp_residual(const Imp* P, const dual* l, const double* v, dual* F) noexcept:
    """F(v; l, A) of the rule with v held (doc eqs. (4), (6), (7); rotode/implicit.pxd
    `implicit_residual`): its d parts are F_l dl + F_A dA (OUT: F[3])."""
    cdef double u[3]
    cdef double R[9]
    cdef dual m[3]
    cdef dual g[3]
    cdef dual a[3]
    cdef int k
    if P.o.method == IMP_MIDPOINT:
        for k in range(3):
            u[k] = -0.5 * v[k]
        so3_exp(u, R)
        _rmat_vec(R, False, l, m)              # R(-v/2) l
        _dmat_vec(P.A, m, g)
        for k in range(3):
            F[k] = v[k] - g[k]
        return
    so3_exp(v, R)
    _rmat_vec(R, True, l, m)                   # R(-v) l
    _dmat_vec(P.A, m, g)
    if P.o.method == IMP_TRAPEZOID:
        _rmat_vec(R, False, g, a)              # R(v) A R(-v) l
        for k in range(3):
            g[k] = a[k]
    _dmat_vec(P.A, l, a)
    for k in range(3):
        F[k] = v[k] - 0.5 * a[k] - 0.5 * g[k]


cdef int _imp_root(const Imp* P, const dual* l, const double* v, int ncols,
                   dual* vd) noexcept:
    """The root v of the run with its derivative by the implicit function theorem,
    dv = -F_v^-1 (F_l dl + F_A dA), F_v analytic (rotode/implicit.pxd
    `implicit_residual_jacobian`, doc eqs. (5), (8), (9)); -5 for a singular F_v
    (OUT: vd[3])."""
    cdef double lv[3]
    cdef double F[3]
    cdef double J[9]
    cdef double b[3]
    cdef double x[3]
    cdef dual Fd[3]
    cdef int c, k
    for k in range(3):
        lv[k] = l[k].v
    implicit_residual_jacobian(P.o.method, P.b.Iinv, lv, v, F, J)
    _imp_residual(P, l, v, Fd)
    for k in range(3):
        vd[k] = dual(v[k])
    for c in range(ncols):
        for k in range(3):
            b[k] = Fd[k].d[c]
        if imp_solve3(J, b, x) != 0:
            return IMP_NONFINITE
        for k in range(3):
            vd[k].d[c] = -x[k]
    return IMP_OK


cdef void _imp_advance(const double* v, const dual* vd, dual* q, dual* L) noexcept:
    """q <- q exp(v/2) / |.|, L_b <- R(-v) L_b on duals, the value parts by the run's own
    function (rotode/implicit.pxd `implicit_advance`) (IN/OUT: q[4], L[3])."""
    cdef double qv[4]
    cdef double Lv[3]
    cdef dual hd[3]
    cdef dual ed[4]
    cdef dual qd[4]
    cdef dual Rd[9]
    cdef dual s
    cdef int k
    for k in range(4):
        qv[k] = q[k].v
    for k in range(3):
        Lv[k] = L[k].v
        hd[k] = 0.5 * vd[k]
    implicit_advance(v, qv, Lv)
    quat_exp_pure(hd, ed)
    quat_mul(q, ed, qd)
    s = 1.0 / real_sqrt(quat_norm2(qd))
    for k in range(4):
        q[k] = qd[k] * s
    so3_exp(vd, Rd)
    _dmat_t_vec(Rd, L, hd)
    for k in range(3):
        L[k] = hd[k]
    _set_v(q, qv, 4)
    _set_v(L, Lv, 3)


cdef void _dmat_t_vec(const dual* M, const dual* x, dual* out) noexcept:
    """out = M^T x, M row-major 3x3 of duals (OUT: out[3]; may not alias x)."""
    cdef int k
    for k in range(3):
        out[k] = M[k] * x[0] + M[3 + k] * x[1] + M[6 + k] * x[2]


cdef int _imp_free(const Imp* P, int ncols, double h, dual* q, dual* L) noexcept:
    """The free step of h in the run's sub-steps (rotode/implicit.pxd `implicit_free_step`,
    its decisions on the values), each sub-step and root on duals (IN/OUT: q[4], L[3]); the
    run's status."""
    cdef double Lv[3]
    cdef double l[3]
    cdef double v[3]
    cdef double remaining = h, s, smax, lim, res = 0.0
    cdef dual rem = dual(h)
    cdef dual sd
    cdef dual ld[3]
    cdef dual vd[3]
    cdef int it = 0, status, k
    cdef long n = 0
    cdef bint beyond, rotation
    while remaining != 0.0:
        for k in range(3):
            Lv[k] = L[k].v
        smax = kantorovich_max_step(P.o.method, P.o.bound, &P.b, Lv)
        if not smax > 0.0:
            return IMP_NONFINITE
        lim = smax
        rotation = False
        if P.o.solver == SOLVER_NEWTON and P.o.substep_angle > 0.0:
            s = rotation_max_step(&P.b, Lv, P.o.substep_angle)
            if s > lim:
                lim = s
                rotation = True
        n += 1
        if n > P.o.max_substeps:
            return IMP_TOO_MANY_SUBSTEPS
        while True:
            s = remaining if fabs(remaining) <= lim else copysign(lim, remaining)
            beyond = fabs(s) > smax
            for k in range(3):
                l[k] = s * Lv[k]
            status = implicit_solve(&P.o, &P.b, l, v, &it, &res, beyond, NULL)
            if status == IMP_OK or not beyond:
                break
            lim = smax
            rotation = False
        if status != IMP_OK:
            return status
        if s == remaining:
            sd = rem                          # the last sub-step: what remains of h
        else:
            sd = _imp_bound(P, L, rotation)
            if s < 0.0:
                sd = -1.0 * sd
        sd.v = s
        remaining = 0.0 if s == remaining else remaining - s
        rem = rem - sd
        rem.v = remaining
        for k in range(3):
            ld[k] = sd * L[k]
        status = _imp_root(P, ld, v, ncols, vd)
        if status != IMP_OK:
            return status
        _imp_advance(v, vd, q, L)
    return IMP_OK


cdef int _imp_torque(RigidBody body, const Body* p, double t, const dual* y,
                     dual* tau) except? -99:
    """tau(t, q, w) on duals with the torque parameters' directions (OUT: tau[3])."""
    cdef int st = body.torque_dual(t, y, &y[4], tau)
    if st == 0 and p.ntq:
        st = _torque_directions(p, t, y, tau)
    return st


cdef int _imp_torque_at(RigidBody body, const Body* p, const Imp* P, double t,
                        const double* qv, const double* Lv, dual* y, const dual* L,
                        dual* tau, double* tv) except? -99:
    """The torque at the state (q, L_b): its value parts the run's (tv: the torque at
    w = I^-1 Lv) and on duals at w = A L (y[:4] = q given; OUT: y[4:], tau[3], tv[3])."""
    cdef double wv[3]
    mat3_vec(P.b.Iinv, Lv, wv)
    cdef int st = (<Torque>body.torque).evaluate(t, qv, wv, tv)
    if st != 0:
        return st
    _dmat_vec(P.A, L, &y[4])
    return _imp_torque(body, p, t, y, tau)


cdef int _imp_kick(RigidBody body, const Body* p, const Imp* P, double t, double h, dual* q,
                   dual* L) except? -99:
    """L_b <- L_b + h tau (rotode/implicit.pyx `_kick`: tau at w = A L_b, or the explicit
    midpoint rule for a torque that depends on w) on duals, the value parts the run's
    (IN/OUT: L[3])."""
    cdef double qv[4]
    cdef double tv[3]
    cdef double Lv[3]
    cdef double Lh[3]
    cdef dual y[NZ]
    cdef dual tau[3]
    cdef dual Lm[3]
    cdef int k, st
    for k in range(4):
        qv[k] = q[k].v
        y[k] = q[k]
    for k in range(3):
        Lv[k] = L[k].v
    st = _imp_torque_at(body, p, P, t, qv, Lv, y, L, tau, tv)
    if st != 0:
        return st
    if P.wdep:
        for k in range(3):
            Lm[k] = L[k] + 0.5 * h * tau[k]
            Lh[k] = Lv[k] + 0.5 * h * tv[k]
        st = _imp_torque_at(body, p, P, t, qv, Lh, y, Lm, tau, tv)
        if st != 0:
            return st
    for k in range(3):
        L[k] = L[k] + h * tau[k]
        L[k].v = Lv[k] + h * tv[k]
    return 0


cdef void _imp_row(const Imp* P, const dual* q, const dual* L, dual* z) noexcept:
    """The row [q, A L_b] of the run (rotode/implicit.pyx `_store`) (OUT: z[7])."""
    cdef double Lv[3]
    cdef double w[3]
    cdef int k
    for k in range(4):
        z[k] = q[k]
    for k in range(3):
        Lv[k] = L[k].v
    _dmat_vec(P.A, L, &z[4])
    mat3_vec(P.b.Iinv, Lv, w)
    _set_v(&z[4], w, 3)


cdef int _implicit_sweep(RigidBody body, const Body* p, const Imp* P, const double[::1] ts,
                         const double[::1] tout, dual* z, int ncols,
                         double[:, :, ::1] out) except? -99:
    """The steps ts[i] -> ts[i + 1] of an implicit rule from the row z (rotode/implicit.pyx
    `_begin`: q / |q|, L_b = I w0), storing the tangent at every time of tout (grid times)
    (OUT: out; rows NaN from a failing step on, as the run's)."""
    cdef dual q[4]
    cdef dual L[3]
    cdef dual s
    cdef double qv[4]
    cdef double Lv[3]
    cdef double w0[3]
    cdef double sv = 1.0 / sqrt(z[0].v * z[0].v + z[1].v * z[1].v + z[2].v * z[2].v
                                + z[3].v * z[3].v)
    cdef Py_ssize_t n = ts.shape[0] - 1, m = tout.shape[0], i, slot = 0
    cdef double t, tn, h, d = 1.0 if n == 0 or ts[n] >= ts[0] else -1.0
    cdef int k, st = 0
    s = 1.0 / real_sqrt(quat_norm2(z))
    for k in range(4):
        qv[k] = z[k].v * sv
        q[k] = z[k] * s
    for k in range(3):
        w0[k] = z[4 + k].v
    _set_v(q, qv, 4)
    _dmat_vec(P.I, &z[4], L)
    mat3_vec(P.b.I, w0, Lv)
    _set_v(L, Lv, 3)
    _imp_row(P, q, L, z)
    while slot < m and tout[slot] == ts[0]:
        _store(z, ncols, &out[slot, 0, 0])
        slot += 1
    for i in range(n):
        t = ts[i]
        tn = ts[i + 1]
        h = tn - t
        if slot < m and d * (tout[slot] - tn) < 0.0:
            return -98                  # an output inside a step: not a grid time
        if P.kicks:
            st = _imp_kick(body, p, P, t, 0.5 * h, q, L)
        if st == 0:
            st = _imp_free(P, ncols, h, q, L)
        if st == 0 and P.kicks:
            st = _imp_kick(body, p, P, tn, 0.5 * h, q, L)
        if st != 0:
            np.asarray(out)[slot:] = np.nan     # the run's rows are NaN from here on
            return 0
        _imp_row(P, q, L, z)
        while slot < m and d * (tout[slot] - tn) <= 0.0:
            _store(z, ncols, &out[slot, 0, 0])
            slot += 1
    return 0


def _implicit_setup(method, RigidBody body, options):
    """(the run's options as rotode/implicit.pyx `run_plan` reads them, lambda_min(I), its
    eigenvector) of an implicit rule."""
    from rotode import implicit as _implicit
    spec = _methods.get(method, "rigid body")
    options = dict(options or {})
    options.pop("normalize", None)
    solver, tol, max_iter, max_substeps, bound, angle = _implicit._options(options)
    angle = spec.defaults["substep_angle"] if angle is None else angle
    _, vecs = np.linalg.eigh(np.asarray(body.inertia, dtype=float))
    lam = float(np.linalg.eigvalsh(np.asarray(body.inertia))[0])
    return ((_implicit.VARIANTS[spec.variant], solver == "newton", tol, max_iter, max_substeps,
             bound, angle), lam, vecs[:, 0])


cdef void _imp_fill(Imp* P, RigidBody body, const Body* p, tuple setup) except *:
    """The Imp of one pass: the run's options and body, I, A and lambda_min on duals (the
    pass's inertia directions, if any)."""
    cdef int k, a, b
    cdef double e[3]
    opts, lam, vec = setup
    for k in range(3):
        e[k] = vec[k]
    P.o.method, newton, P.o.tol, P.o.max_iter, P.o.max_substeps, P.o.bound, angle = opts
    P.o.solver = SOLVER_NEWTON if newton else SOLVER_FIXED_POINT
    P.o.substep_angle = angle
    for k in range(9):
        P.b.I[k] = body._I[k]
        P.b.Iinv[k] = body._Iinv[k]
        P.I[k] = dual(body._I[k])
        P.A[k] = dual(body._Iinv[k])
    P.b.lam = lam
    if p.full:
        for k in range(9):
            P.I[k] = p.J[k]
            P.A[k] = p.Jinv[k]
    elif p.principal:
        for k in range(3):
            P.I[4 * k] = p.I[k]
            P.A[4 * k] = 1.0 / p.I[k]
    P.lam = dual(0.0)
    for a in range(3):
        for b in range(3):
            P.lam = P.lam + (e[a] * e[b]) * P.I[3 * a + b]
    P.lam.v = lam
    for k in range(9):
        P.I[k].v = body._I[k]
        P.A[k].v = body._Iinv[k]
    P.kicks = body.torque is not None
    P.wdep = P.kicks and body.torque._uses_w()


# ---- Runge-Kutta-Nystrom on the second-order quaternion equation (rkn4) --------------------
# The run (rotode/dynamic.pyx, rotode/dynamic.pxd `rkn4_step`; Mandre 2008 sec. 6) steps
# z = [q, p = q'] (8) by a Nystrom method on q'' = p conj(q) p + 1/2 q (0, w'), w = 2 vec(conj(q)
# p), w' = I^-1 (tau - w x I w); its rows are [q, 2 vec(conj(q) p) / |q|^2].  The same stages
# on duals (w' by `_f_state`: the dual moments, the torque's dual and its parameters'
# directions), normalize and its rate kept (q' = 1/2 q w) as the run does.

cdef enum:
    NR = 8                   # the rkn4 state [q, q']


cdef int _rkn_g(RigidBody body, const Body* p, double t, const dual* z,
                dual* g) except? -99:
    """q'' at z = [q, q'] on duals (rotode/dynamic.pxd `second_order_eval`, rotode/equations.pxd
    `quaternion_second_order_rhs`) (OUT: g[4])."""
    cdef dual y[NZ]
    cdef dual dy[NZ]
    cdef dual qc[4]
    cdef dual u[4]
    cdef dual t2[4]
    cdef dual t1[4]
    cdef int k, st
    quat_conj(z, qc)
    quat_mul(qc, &z[4], u)                     # conj(q) p
    for k in range(4):
        y[k] = z[k]
    for k in range(3):
        y[4 + k] = 2.0 * u[1 + k]
    st = _f_state(body, p, t, y, dy)
    if st != 0:
        return st
    quat_mul(&z[4], u, t2)                     # p conj(q) p
    quat_mul_vec(z, &dy[4], t1)                # q (0, w')
    for k in range(4):
        g[k] = t2[k] + 0.5 * t1[k]
    return 0


cdef int _rkn_step(RigidBody body, const Body* p, double t, double h, dual* z) except? -99:
    """One step of Mandre 2008 sec. 6 RKN4 on duals, the stages of rotode/dynamic.pxd
    `rkn4_step` (IN/OUT: z[8])."""
    cdef dual k[4][4]
    cdef dual zs[NR]
    cdef double cq, tc
    cdef int s, i, st
    for s in range(4):
        cq = 0.0 if s == 0 else (h if s == 3 else 0.5 * h)
        tc = cq
        rkn4_stage_state(z, k[0 if s < 3 else 2], k[s - 1 if s > 0 else 0], cq, s, zs)
        st = _rkn_g(body, p, t + tc, zs, k[s])
        if st != 0:
            return st
    for i in range(4):
        zs[i] = z[i] + h * z[4 + i] + h * h * (k[0][i] + k[1][i] + k[2][i]) / 6.0
        zs[4 + i] = z[4 + i] + h * (k[0][i] + 2.0 * (k[1][i] + k[2][i]) + k[3][i]) / 6.0
    for i in range(NR):
        z[i] = zs[i]
    return 0


cdef void _rkn_row(const dual* z, dual* y) noexcept:
    """The row [q, w = 2 vec(conj(q) q') / |q|^2] (rotode/dynamic.pyx `_get_qw`) (OUT: y[7])."""
    cdef dual qc[4]
    cdef dual u[4]
    cdef dual s = 2.0 / quat_norm2(z)
    cdef int k
    quat_conj(z, qc)
    quat_mul(qc, &z[4], u)
    for k in range(4):
        y[k] = z[k]
    for k in range(3):
        y[4 + k] = s * u[1 + k]


cdef void _rkn_set_w(dual* z, const dual* w) noexcept:
    """q' = 1/2 q (0, w) (rotode/dynamic.pyx `_set_w`) (IN/OUT: z[8])."""
    cdef int k
    quat_mul_vec(z, w, &z[4])
    for k in range(4):
        z[4 + k] = 0.5 * z[4 + k]


cdef int _rkn_sweep(RigidBody body, const Body* p, bint normalize, const double[::1] ts,
                    const double[::1] tout, dual* y, int ncols,
                    double[:, :, ::1] out) except? -99:
    """The rkn4 steps ts[i] -> ts[i + 1] from the row y = [q, w] (q' = 1/2 q w), storing the
    tangent at every time of tout (grid times) (OUT: out)."""
    cdef dual z[NR]
    cdef dual r[NZ]
    cdef Py_ssize_t n = ts.shape[0] - 1, m = tout.shape[0], i, slot = 0
    cdef double d = 1.0 if n == 0 or ts[n] >= ts[0] else -1.0
    cdef int k, st
    for k in range(4):
        z[k] = y[k]
    _rkn_set_w(z, &y[4])
    _rkn_row(z, r)
    while slot < m and tout[slot] == ts[0]:
        _store(r, ncols, &out[slot, 0, 0])
        slot += 1
    for i in range(n):
        if slot < m and d * (tout[slot] - ts[i + 1]) < 0.0:
            return -98                  # an output inside a step: not a grid time
        st = _rkn_step(body, p, ts[i], ts[i + 1] - ts[i], z)
        if st != 0:
            return st
        _rkn_row(z, r)
        if normalize:
            _normalize(z)
            _rkn_set_w(z, &r[4])
            _rkn_row(z, r)
        while slot < m and d * (tout[slot] - ts[i + 1]) <= 0.0:
            _store(r, ncols, &out[slot, 0, 0])
            slot += 1
    return 0


# ---- kinematics: the parameters of the rate ---------------------------------------------
# A Lie-group kinematics step multiplies q by exponentials of rotation vectors that are linear
# in the rate, Omega = sum of h_s w(t_s) (and exp2's h^2/2 w'(t0)), so the derivative of the
# computed q_n with respect to a parameter p of the rate is carried factor by factor, exactly
# (to round-off) for the discrete map: with the right perturbation q exp(dtheta/2),
#     body frame,  q <- q exp(Omega/2):   dtheta <- R(Omega)^T dtheta + J_r(Omega) dOmega/dp
#     world frame, q <- exp(Omega/2) q:   dtheta <- dtheta + R(q)^T J_r(Omega) dOmega/dp
# with J_r(v) = T(-v) the right Jacobian of SO(3) (rotode/so3.pxd `so3_dexp`; Sola, Deray and
# Atchuthan, "A micro Lie theory for state estimation in robotics", 2018, eq. 143), the
# recursion of on-manifold preintegration (Forster, Carlone, Dellaert and Scaramuzza, IEEE
# T-RO 33(1), 2017, eq. 44 and appendix A) for any such product of exponentials.  The rate's
# derivative is affine in an auxiliary source u(t): dw/dp[:, j] = C[:, j] + u_sel(j)(t) e_sel(j)
# (a bias or a constant rate: C alone; a per-axis scale or amplitude: u = the rate at unit
# scale; a phase: u = the rate a quarter period ahead), or t u(t) (a frequency).


cdef struct KinPass:
    int kernel               # KIN_CG or KIN_EXP2
    int stages
    bint world
    int ncols
    double b[4]
    double c[4]
    double C[3 * MAX_RATE_COLS]      # C[k * ncols + j]
    int sel[MAX_RATE_COLS]           # the axis whose u a column reads, or -1
    double wc[3]                     # a constant rate (no source)


cdef int _src_eval(AngularVelocity src, double t, bint below, bint slope,
                   double* out) except -1:
    """w(t), or w'(t) when `slope`, of `src`, the limit from below when `below`; -2 when it
    gives no w' (OUT: out[3])."""
    cdef int st
    if slope:
        st = src.evaluate_rate_before(t, out) if below else src.evaluate_rate(t, out)
        if st == SOURCE_UNAVAILABLE:
            return -2
    else:
        st = src.evaluate_before(t, out) if below else src.evaluate(t, out)
    src._check(st, "w(t)")
    return 0


cdef int _kin_eval(const KinPass* P, AngularVelocity src, AngularVelocity aux, double t,
                   bint below, bint slope, double* w, double* u) except -1:
    """w(t) (or w'(t) when `slope`), the limit from below when `below` (the runner's own side
    of a sample time, rotode/kinematic.pyx `_omega_side`), and the auxiliary u there; -2 when
    the source gives no w' (OUT: w[3], u[3])."""
    cdef int k
    for k in range(3):
        w[k] = 0.0 if slope else P.wc[k]
        u[k] = 0.0
    if src is not None and _src_eval(src, t, below, slope, w) == -2:
        return -2
    if aux is not None and _src_eval(aux, t, below, slope, u) == -2:
        return -2
    return 0


cdef void _kin_dw(const KinPass* P, double t, const double* u, const double* du,
                  double weight, bint slope, double* dO) noexcept:
    """dO += weight * dw/dp at t, dw/dp[:, j] = C[:, j] + u_sel(j) e_sel(j) (sel(j) = -2: t u,
    a frequency's column), or with `slope` its time derivative (du_sel(j) e_sel(j); u + t du)
    (IN/OUT: dO[3 * ncols])."""
    cdef int k, j
    for j in range(P.ncols):
        for k in range(3):
            if not slope:
                dO[k * P.ncols + j] += weight * P.C[k * P.ncols + j]
                if P.sel[j] == k:
                    dO[k * P.ncols + j] += weight * u[k]
                elif P.sel[j] == TIMED:
                    dO[k * P.ncols + j] += weight * (t * u[k])
            elif P.sel[j] == k:
                dO[k * P.ncols + j] += weight * du[k]
            elif P.sel[j] == TIMED:
                dO[k * P.ncols + j] += weight * (u[k] + t * du[k])


cdef void _kin_factor(const KinPass* P, const double* om, const double* dO, double* q,
                      double* th) noexcept:
    """One factor exp(om/2) of the step: q and the tangent th (3 x ncols) advanced
    (IN/OUT: q[4], th)."""
    cdef double R[9]
    cdef double J[9]
    cdef double A[9]
    cdef double m[3]
    cdef double Rq[9]
    cdef double e[4]
    cdef double qn[4]
    cdef double x[3]
    cdef double tmp[3 * MAX_RATE_COLS]
    cdef int k, r, j, n = P.ncols
    for k in range(3):
        m[k] = -om[k]
    so3_exp(m, R)                    # R(om)^T = R(-om)
    so3_dexp(m, J)                   # J_r(om) = T(-om)
    for k in range(3):
        x[k] = 0.5 * om[k]
    quat_exp_pure(x, e)
    if P.world:
        quat_to_matrix(q, Rq)        # A = R(q)^T J_r (R of the normalised q)
        for k in range(3):
            for r in range(3):
                A[3 * k + r] = (Rq[k] * J[r] + Rq[3 + k] * J[3 + r] + Rq[6 + k] * J[6 + r])
        for j in range(n):
            for k in range(3):
                th[k * n + j] += (A[3 * k] * dO[j] + A[3 * k + 1] * dO[n + j]
                                  + A[3 * k + 2] * dO[2 * n + j])
        quat_mul(e, q, qn)
    else:
        for j in range(n):
            for k in range(3):
                tmp[k * n + j] = (R[3 * k] * th[j] + R[3 * k + 1] * th[n + j]
                                  + R[3 * k + 2] * th[2 * n + j]
                                  + J[3 * k] * dO[j] + J[3 * k + 1] * dO[n + j]
                                  + J[3 * k + 2] * dO[2 * n + j])
        for k in range(3 * n):
            th[k] = tmp[k]
        quat_mul(q, e, qn)
    for k in range(4):
        q[k] = qn[k]


cdef int _kin_step(const KinPass* P, AngularVelocity src, AngularVelocity aux, double t0,
                   double h, double* q, double* th) except -1:
    """One step t0 -> t0 + h of the kernel, with the runner's stage times and sides
    (rotode/kinematic.pyx `_step`) (IN/OUT: q[4], th[3 x ncols])."""
    cdef double w[3]
    cdef double u[3]
    cdef double w1[3]
    cdef double u1[3]
    cdef double om[3]
    cdef double dO[3 * MAX_RATE_COLS]
    cdef double hs
    cdef int s, k
    if P.kernel == KIN_CG:
        for s in range(P.stages):
            _kin_eval(P, src, aux, t0 + P.c[s] * h,
                      (P.c[s] == 0.0 and h < 0.0) or (P.c[s] == 1.0 and h > 0.0), False, w, u)
            hs = P.b[s] * h
            for k in range(3):
                om[k] = hs * w[k]
            for k in range(3 * P.ncols):
                dO[k] = 0.0
            _kin_dw(P, t0 + P.c[s] * h, u, u, hs, False, dO)
            _kin_factor(P, om, dO, q, th)
        return 0
    # exp2: Omega = h w(t0) + h^2/2 w'(t0), w' the source's or a forward difference
    _kin_eval(P, src, aux, t0, h < 0.0, False, w, u)
    for k in range(3 * P.ncols):
        dO[k] = 0.0
    _kin_dw(P, t0, u, u, h, False, dO)
    if _kin_eval(P, src, aux, t0, h < 0.0, True, w1, u1) == -2:
        # (no source with a frequency parameter lacks w': TIMED columns never come here)
        _kin_eval(P, src, aux, t0 + h, h > 0.0, False, w1, u1)
        for k in range(3):
            w1[k] = (w1[k] - w[k]) / h
            u1[k] = (u1[k] - u[k]) / h
    hs = 0.5 * h * h
    for k in range(3):
        om[k] = h * w[k] + hs * w1[k]
    _kin_dw(P, t0, u, u1, hs, True, dO)
    _kin_factor(P, om, dO, q, th)
    return 0


def kinematics_rates(kernel, tableau, frame, rates, C, sel, y0, ts, save):
    """The derivative of one body's computed orientation with respect to parameters of its
    angular velocity, the steps `ts` held fixed.

    Parameters
    ----------
    kernel : str
        A key of `RATE_KERNELS` (the registry's kinematics kernel).
    tableau : (sequence of float, sequence of float)
        The Crouch-Grossman weights b and nodes c (``"cg"``; empty for ``"exp2"``).
    frame : {"body", "world"}
        The frame of the rate.
    rates : (AngularVelocity or None, AngularVelocity or None, array_like (3,))
        The rate w(t) (None: the constant rate, the third item), and the auxiliary source
        u(t) of the scale columns (None: none).
    C : array_like, shape (3, n_p)
        The constant part of dw/dp.
    sel : sequence of int, length n_p
        Per column the axis of u it reads (-1: none; -2: the column is t u(t)).
    y0 : array_like, shape (4,)
        The initial quaternion (nonzero).
    ts : ndarray, shape (n + 1,)
        The step times.
    save : ndarray of int
        The indices of `ts` of the output rows.

    Returns
    -------
    ndarray, shape (len(save), 3, n_p)
        d dtheta(ts[save]) / dp in the body frame (right perturbation q exp(dtheta/2)).
    """
    cdef KinPass P
    cdef const double[::1] tsv = np.ascontiguousarray(ts, dtype=float)
    cdef double q[4]
    cdef double th[3 * MAX_RATE_COLS]
    cdef Py_ssize_t i, slot = 0
    cdef int k, j
    cdef double[:, :, ::1] ov
    b, c = tableau
    source, aux, wconst = rates
    Cv = np.ascontiguousarray(C, dtype=float)
    P.kernel = RATE_KERNELS[kernel]
    P.world = frame == "world"
    P.ncols = Cv.shape[1]
    if P.ncols > MAX_RATE_COLS or len(b) > 4:
        raise ValueError("too many rate-parameter directions or stages for one pass")
    P.stages = len(b)
    for k in range(P.stages):
        P.b[k] = b[k]
        P.c[k] = c[k]
    for k in range(3 * P.ncols):
        P.C[k] = Cv.reshape(-1)[k]
        th[k] = 0.0
    for k in range(P.ncols):
        P.sel[k] = sel[k]
    for k in range(3):
        P.wc[k] = wconst[k]
    for k in range(4):
        q[k] = y0[k]
    cdef const Py_ssize_t[::1] sv = np.ascontiguousarray(save, dtype=np.intp)
    out = np.empty((sv.shape[0], 3, P.ncols))
    ov = out
    for i in range(tsv.shape[0]):
        if i > 0:
            _kin_step(&P, source, aux, tsv[i - 1], tsv[i] - tsv[i - 1], q, th)
        while slot < sv.shape[0] and sv[slot] == i:
            for k in range(3):                # (the row in place: no array made per row)
                for j in range(P.ncols):
                    ov[slot, k, j] = th[k * P.ncols + j]
            slot += 1
    return out
