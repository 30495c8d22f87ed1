# The equations of motion as `noexcept nogil` cores (layer 1, docs/architecture.md): quaternion
# and exponential-coordinate kinematics, Euler's equations, the rigid body in several
# coordinates, the frame codes and the small 3x3 product they share.
#
# Every core is a small inline function in the fused scalar `real` (double for values, dual for
# exact Jacobians), allocation-free, inputs first and outputs last (OUT), so that the native
# steppers (kinematic.pxd, dynamic.pxd, implicit.pxd) and downstream Cython reuse them without
# the Python-facing classes of rotode.rhs (which cimport them from here).
# Star cimport: Cython only sees the non-member dual operators (double * dual, ...) this way.
from rotode.dual cimport *
from rotode.quaternion cimport quat_mul, quat_mul_vec, vec_mul_quat, quat_norm2, quat_conj
from rotode.so3 cimport so3_dexp_inv_apply

cdef enum:
    FRAME_BODY = 0
    FRAME_WORLD = 1

cdef enum:
    RHS_OK = 0
    RHS_SOURCE_ERROR = -1      # a Python error is stored in the omega/torque source
    RHS_GIMBAL_LOCK = -3       # Euler angles at cos(beta) = 0
    RHS_PER_BODY = -4          # a model of N bodies' parameters evaluated as one body


cdef inline void mat3_vec(const double* M, const real* x, real* out) noexcept nogil:
    """out = M x for a row-major 3x3 double matrix (OUT: out[3])."""
    out[0] = M[0] * x[0] + M[1] * x[1] + M[2] * x[2]
    out[1] = M[3] * x[0] + M[4] * x[1] + M[5] * x[2]
    out[2] = M[6] * x[0] + M[7] * x[1] + M[8] * x[2]


cdef inline void quaternion_kinematics_rhs(const real* q, const real* w, int frame,
                                           double gain, real* dq) noexcept nogil:
    """q' = 1/2 q * w (body) or 1/2 w * q (world) + c q, c = gain (1 - q.q) (OUT: dq[4]).

    Rucker 2018 eqs. 20-23: the minimum-norm derivative of a non-unit quaternion plus a multiple
    of q (the kernel of W), here used as a norm-drift controller.
    """
    cdef real c = gain * (1.0 - quat_norm2(q))
    cdef int i
    if frame == FRAME_BODY:
        quat_mul_vec(q, w, dq)
    else:
        vec_mul_quat(w, q, dq)
    for i in range(4):
        dq[i] = 0.5 * dq[i] + c * q[i]


cdef inline void euler_rhs(const real* w, const real* tau, const double* inertia,
                           const double* inertia_inv, bint gyroscopic, real* dw) noexcept nogil:
    """Euler's equations w' = I^-1 (tau - w x I w) (Mandre 2008 sec. 6) (OUT: dw[3]).

    ``gyroscopic=False`` drops w x I w (Mandre 2008 sec. 7.6).
    """
    cdef real Iw[3]
    cdef real r[3]
    if gyroscopic:
        mat3_vec(inertia, w, Iw)
        r[0] = tau[0] - (w[1] * Iw[2] - w[2] * Iw[1])
        r[1] = tau[1] - (w[2] * Iw[0] - w[0] * Iw[2])
        r[2] = tau[2] - (w[0] * Iw[1] - w[1] * Iw[0])
        mat3_vec(inertia_inv, r, dw)
    else:
        mat3_vec(inertia_inv, tau, dw)


cdef inline void rigid_body_rhs(const real* y, const real* tau, const double* inertia,
                                const double* inertia_inv, double gain, bint gyroscopic,
                                real* dy) noexcept nogil:
    """State [q (4), w_body (3)]: q' by Rucker 2018 eq. 22-23, w' by Euler (OUT: dy[7])."""
    quaternion_kinematics_rhs(y, &y[4], FRAME_BODY, gain, dy)
    euler_rhs(&y[4], tau, inertia, inertia_inv, gyroscopic, &dy[4])


cdef inline void expcoord_kinematics_rhs(const real* v, const real* w, int frame,
                                         real* dv) noexcept nogil:
    """v' = T(v)^-1 w_world or T(-v)^-1 w_body (Mizerski 2020 sec. 4; notes "T(v)") (OUT: dv[3]).

    Chart: world frame O = R(v) O_base, body frame O = O_base R(v).
    """
    cdef real mv[3]
    if frame == FRAME_WORLD:
        so3_dexp_inv_apply(v, w, dv)
    else:
        mv[0] = -v[0]
        mv[1] = -v[1]
        mv[2] = -v[2]
        so3_dexp_inv_apply(mv, w, dv)


cdef inline void expcoord_rigid_body_rhs(const real* y, const real* tau, const double* inertia,
                                         const double* inertia_inv, real* dy) noexcept nogil:
    """State [v (3), w_body (3)], O = O_base R(v): v' = T(-v)^-1 w, Euler for w' (OUT: dy[6])."""
    expcoord_kinematics_rhs(y, &y[3], FRAME_BODY, dy)
    euler_rhs(&y[3], tau, inertia, inertia_inv, True, &dy[3])


cdef inline void quaternion_velocity(const real* q, const real* p, real* w) noexcept nogil:
    """Body angular velocity w = 2 vec(conj(q) * q') of a unit quaternion (OUT: w[3])."""
    cdef real qc[4]
    cdef real u[4]
    quat_conj(q, qc)
    quat_mul(qc, p, u)
    w[0] = 2.0 * u[1]
    w[1] = 2.0 * u[2]
    w[2] = 2.0 * u[3]


cdef inline void quaternion_second_order_rhs(const real* y, const real* tau,
                                             const double* inertia, const double* inertia_inv,
                                             real* dy) noexcept nogil:
    """State [q, p = q']: q'' = p conj(q) p + 1/2 q * [I^-1 (tau - 4 u x I u)], u = vec(conj(q) p).

    Mandre 2008 sec. 6 (second-order form; assumes |q| = 1, which the flow preserves) (OUT: dy[8]).
    """
    cdef real w[3]
    cdef real a[3]
    cdef real qc[4]
    cdef real t1[4]
    cdef real t2[4]
    cdef int i
    quaternion_velocity(y, &y[4], w)              # w = 2 u
    euler_rhs(w, tau, inertia, inertia_inv, True, a)   # I^-1 (tau - w x I w), w x I w = 4 u x I u
    quat_conj(y, qc)
    quat_mul(qc, &y[4], t1)                      # conj(q) p
    quat_mul(&y[4], t1, t2)                      # p conj(q) p
    quat_mul_vec(y, a, t1)                       # q * (0, a)
    for i in range(4):
        dy[i] = y[4 + i]
        dy[4 + i] = t2[i] + 0.5 * t1[i]


cdef inline int euler_xyz_rates(const real* e, const real* w, real* de) noexcept nogil:
    """Rates of intrinsic XYZ Euler angles (R = Rx(a) Ry(b) Rz(c)) from body w (OUT: de[3]).

    w = a' [cb cc, -cb sc, sb] + b' [sc, cc, 0] + c' [0, 0, 1], solved for (a', b', c'); returns
    RHS_GIMBAL_LOCK when |cos b| < 1e-12 (the map is singular there).
    """
    cdef real cb = real_cos(e[1]), sb = real_sin(e[1])
    cdef real cc = real_cos(e[2]), sc = real_sin(e[2])
    cdef real u
    if cb < 1e-12 and cb > -1e-12:
        return RHS_GIMBAL_LOCK
    u = (w[0] * cc - w[1] * sc) / cb
    de[0] = u
    de[1] = w[0] * sc + w[1] * cc
    de[2] = w[2] - sb * u
    return RHS_OK


cdef inline void euler_xyz_to_quat(const real* e, real* q) noexcept nogil:
    """Unit quaternion of R = Rx(a) Ry(b) Rz(c) (OUT: q[4])."""
    cdef real ca = real_cos(0.5 * e[0]), sa = real_sin(0.5 * e[0])
    cdef real cb = real_cos(0.5 * e[1]), sb = real_sin(0.5 * e[1])
    cdef real cc = real_cos(0.5 * e[2]), sc = real_sin(0.5 * e[2])
    cdef real qa[4]
    cdef real qb[4]
    cdef real t[4]
    cdef real qc[4]
    qa[0] = ca
    qa[1] = sa
    qa[2] = 0.0
    qa[3] = 0.0
    qb[0] = cb
    qb[1] = 0.0
    qb[2] = sb
    qb[3] = 0.0
    qc[0] = cc
    qc[1] = 0.0
    qc[2] = 0.0
    qc[3] = sc
    quat_mul(qa, qb, t)
    quat_mul(t, qc, q)


cdef inline void rotation_matrix_rhs(const real* R, const real* w, real* dR) noexcept nogil:
    """R' = R [w]x for body w, R row-major 3x3 (OUT: dR[9])."""
    cdef int i
    for i in range(3):
        dR[3 * i + 0] = R[3 * i + 1] * w[2] - R[3 * i + 2] * w[1]
        dR[3 * i + 1] = R[3 * i + 2] * w[0] - R[3 * i + 0] * w[2]
        dR[3 * i + 2] = R[3 * i + 0] * w[1] - R[3 * i + 1] * w[0]


cdef inline void rkn4_stage_state(const real* z, const real* k_pos, const real* k_vel, double cq,
                                  int s, real* zs) noexcept nogil:
    """Stage s's argument of the RKN4 step (Mandre 2008 sec. 5) for the quaternion block
    [q, p = q'] of z: q0 + cq p0 and p0 at stage 0, then + (cq^2/2) k_pos and + cq k_vel, with
    k_pos = k1 (stages 2, 3) or k3 (stage 4) and k_vel = the previous stage's k (OUT: zs[8])."""
    cdef double cp
    cdef int i
    for i in range(4):
        zs[i] = z[i] + cq * z[4 + i]
        zs[4 + i] = z[4 + i]
    if s > 0:
        cp = 0.5 * cq * cq
        for i in range(4):
            zs[i] = zs[i] + cp * k_pos[i]
            zs[4 + i] = zs[4 + i] + cq * k_vel[i]
