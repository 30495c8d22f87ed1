"""Native kinematic steppers: integrate q under a known angular velocity w(t).

The runner of docs/stepper-contract.md for `rotode.integrate`: ``METHODS``,
``run(method, model, y0, t, save, options, workers)`` and ``run_plan(plan)``, the facades'
entry (a `rotode._runplan.Plan`: error control, events, step records).  The step kernels live in
rotode/kinematic.pxd (cimport-able); this module holds the kinematic `Stepper` that the one
time-loop driver (rotode/_driver.pyx) runs: the loop over bodies is outermost (threads over
bodies, each body runs its whole time loop with stack scratch), so N single runs and one batched
run do identical arithmetic, whatever the number of workers.

The methods, their data (Crouch-Grossman weights and nodes, Gauss nodes, pairs) and their
properties (the kernel's code, the options it takes, whether it keeps |q| by construction) come
from the registry `rotode.methods`; this module implements the kinematic kernels of the one
kernel enum (rotode/_driver.pxd): the Crouch-Grossman product, exp2, the Magnus methods,
Runge-Kutta and Adams-Bashforth on the quaternion (equations and references in
docs/methods-kinematic.md), and the embedded pairs the driver steps, on the quaternion and (the
Runge-Kutta-Munthe-Kaas methods, rotode/rkmk.pxd) on the rotation vector of each step.  The
fixed-step rk3, rk4, ab3, lie_euler, cg1, cg2, cg3, exp2, magnus2-magnus8 and magnus_ca under a
rate whose model is compiled (constant rates, `rotode.omega.Constant`, `rotode.omega.Sinusoid`;
exp2 and magnus_ca with w' of the source or 0) run in the lane kernels instead: blocks of
bodies in SIMD lanes, each body with its single run's bits, `_step`'s operations in its order
(rotode/_lanes.hpp `KinLaneModel`, `KinStepModel`; ``rotode._lanes``; docs/architecture.md "The
lane kernels").
"""
import numpy as np

from rotode import _lanes
from rotode import methods as _methods
from rotode._codegen import pair_ids as _pair_ids, group_pair_ids as _group_pair_ids
from rotode._runplan import Plan, RunOutput
from rotode._driver import Engine, algebra_atol, outcome, per_body_counts
from rotode.omega import AngularVelocity as _PyAngularVelocity
from rotode._loops import TINY_NORM2, all_finite, first_small_norm, largest
from rotode._validation import (as_bool_option, as_choice, as_float_array, as_frame,
                                as_int_option, as_positive_scalar, as_step_grid, as_workers)

from cpython.ref cimport PyObject
from libc.math cimport floor, fabs, fmax, fmin, pow, sqrt
from rotode.erk cimport ERK_MAX_STAGES, ERK_MAX_POWERS
from rotode._driver cimport (Control, Engine, Stepper, ThinCall, advance_steps, drive,
                             thin_call, thin_rows, thin_grid, thin_block_rows,
                             thin_stepper_rows, make_stepper,
                             STATUS_OK,
                             STATUS_UNAVAILABLE, STATUS_ROTATION_BOUND,
                             STATUS_TOO_MANY_SUBSTEPS, WORK_DOUBLES, KERNEL_CG, KERNEL_EXP2,
                             KERNEL_MAGNUS_CA, KERNEL_MAGNUS, KERNEL_RK3, KERNEL_RK4,
                             KERNEL_AB3, KERNEL_ERK, KERNEL_RKMK)

if sizeof(KinWork) > WORK_DOUBLES * sizeof(double):
    raise ImportError("rotode.kinematic: the per-body scratch exceeds the driver's WORK_DOUBLES")
if (ENGINE_ROTATION_BOUND != STATUS_ROTATION_BOUND
        or ENGINE_TOO_MANY_SUBSTEPS != STATUS_TOO_MANY_SUBSTEPS):
    raise ImportError("rotode.kinematic: the lane kernels' status codes are not the driver's")
from rotode.omega cimport AngularVelocity, Samples, Sinusoid
from rotode.omega cimport Constant as ConstantRate
from rotode._engine cimport (BlockRun, EngineRun, KinParams, kin_erk_body, kin_eval,
                             kin_rkmk_body, ENGINE_ROTATION_BOUND, ENGINE_TOO_MANY_SUBSTEPS,
                             OMEGA_CONSTANT, OMEGA_SINUSOID)
from rotode._lanes_erk_kin cimport (MagnusMethod, kin_erk_lanes, kin_magnus_lanes, kin_erk_fixed,
                                    kin_erk_fixed_width)
from rotode._lanes cimport (KinLaneMethod, attach_erk_lanes, kin_block, lanes_width, LANES_RK3,
                            LANES_RK4,
                            LANES_AB3, LANES_CG, LANES_EXP2, LANES_MAGNUS, LANES_MAGNUS_CA,
                            ISA_SCALAR, ISA_SSE2,
                            ISA_AVX2, ISA_AVX512)
from libc.stdlib cimport malloc, free
from rotode.quaternion cimport quat_rotate, quat_conj
from rotode.equations cimport FRAME_WORLD, quaternion_kinematics_rhs
from rotode.rkmk cimport (rkmk_rate, rkmk_angular_velocity, rkmk_retract, rkmk_base,
                          rkmk_max_step_angle)

__all__ = ["METHODS", "KERNELS", "LIMITS", "run"]

#: The methods this runner steps (from the registry, rotode.methods).
METHODS = _methods.names("kinematics", runner="kinematic")

#: Kernel names of the registry -> their codes in the kernel enum (rotode/_driver.pxd).
KERNELS = _methods.kernel_codes("kinematics")

#: The most stages and nodes each kernel holds (the registry's `Kernel.limits`; every entry is
#: checked against them when it is made).
LIMITS = _methods.kernel_limits("kinematics", "kinematic")

cdef enum:
    RATE_ZERO = 0     # constant per-body rates: w' = 0
    RATE_SOURCE = 1   # w'(t) from the source's evaluate_rate
    RATE_FD = 2       # source without a rate: w' ~ (w(t + h) - w(t)) / h over the step
    RATE_ALPHA = 3    # option alpha (N, 3): constant angular acceleration per body

#: magnus_ca with substep=True: the most sub-steps one grid step may take.
MAX_SUBSTEPS = MAGNUS_MAX_SUBSTEPS


cdef struct KinCfg:
    int kernel, frame, terms, rate_mode, stages
    bint is_source, approx, normalize, substep, needs_w0, carry
    # the source's w jumps (a zero-order hold): a rate read at the end of a step is not the
    # next step's rate at its start, so none is carried from one step to the next
    bint jumps
    bint local               # the state is the rotation vector v from qb (rkmk, adaptive magnus)
    # local: y0 is the row stored at the end of an accepted step of an earlier call (`resume`
    # option): qb is that row retracted, as the step's accept made it, not y0/|y0|
    bint resume
    double gain, t_start
    double b[4]              # cg: weights
    double c[4]              # cg: nodes; magnus: Gauss nodes
    int estages              # adaptive magnus: nodes of the embedded Magnus method
    double ec[4]
    PyObject* src            # borrowed AngularVelocity (is_source)
    const double* wconst     # (N, 3) constant rates (not is_source)
    const double* alpha      # (N, 3) angular accelerations (RATE_ALPHA)
    Py_ssize_t* nfev         # per-body counters (OUT)
    Py_ssize_t* nrate
    Py_ssize_t* nsub
    double* fail_angle
    # the specialised engine (rotode/_models.hpp): the pair's id and the bodies' parameters
    int pair
    const KinParams* params  # one shared (a source) or one per body (constant rates)
    bint params_shared
    # the lane kernels (rotode/_lanes.hpp): the instruction set (ISA_*), the kernel (LANES_*),
    # the method's data of those but rk3/rk4, and per body the lanes its block ran in (OUT)
    int isa
    int lane_kernel
    KinLaneMethod lane_method
    int* lanes_used
    # adaptive magnus6/magnus8 in the specialised engine and its lanes (rotode/_lanes_magnus.hpp)
    bint magnus_engine
    MagnusMethod magnus


cdef KinCfg _SIZES                  # (its arrays' sizes, checked against the registry)
_methods.check_compiled("kinematics", {
    KERNEL_CG: {"stages": sizeof(_SIZES.b) // sizeof(double)},
    KERNEL_MAGNUS: {"nodes": min(sizeof(_SIZES.c), sizeof(_SIZES.ec)) // sizeof(double)},
    KERNEL_ERK: {"stages": ERK_MAX_STAGES, "powers": ERK_MAX_POWERS},
    KERNEL_RKMK: {"stages": ERK_MAX_STAGES, "powers": ERK_MAX_POWERS}})


cdef struct KinWork:
    double w0[3]             # w(t_j) when have0
    bint have0
    Py_ssize_t j             # steps taken
    double f0[4]             # ab3 history f_j, f_{j-1}, f_{j-2}
    double f1[4]
    double f2[4]
    double tp1, tp2          # ab3: start times of the two previous steps
    Py_ssize_t nfev, nrate, nsub
    double qb[4]             # rkmk: the orientation the step starts from (q = qb exp(v/2))


cdef inline int _omega(const KinCfg* g, Py_ssize_t i, KinWork* k, double tt,
                       double* w) noexcept nogil:
    """w(tt) of body i (OUT: w[3])."""
    cdef double s
    k.nfev += 1
    if g.is_source:
        return (<AngularVelocity>g.src).evaluate(tt, w)
    w[0] = g.wconst[3 * i]
    w[1] = g.wconst[3 * i + 1]
    w[2] = g.wconst[3 * i + 2]
    if g.rate_mode == RATE_ALPHA:
        s = tt - g.t_start
        w[0] = w[0] + g.alpha[3 * i] * s
        w[1] = w[1] + g.alpha[3 * i + 1] * s
        w[2] = w[2] + g.alpha[3 * i + 2] * s
    return STATUS_OK


cdef inline int _omega_side(const KinCfg* g, Py_ssize_t i, KinWork* k, double tt, bint below,
                            double* w) noexcept nogil:
    """w(tt) of body i, the limit from below when `below`: a step reads its own side of a
    sample time, below it when the step ends there forwards or starts there backwards (OUT)."""
    if below and g.is_source:
        k.nfev += 1
        return (<AngularVelocity>g.src).evaluate_before(tt, w)
    return _omega(g, i, k, tt, w)


cdef inline int _rate(const KinCfg* g, Py_ssize_t i, KinWork* k, double tt, bint below,
                      double* dw) noexcept nogil:
    """w'(tt) of body i for RATE_ZERO / RATE_SOURCE / RATE_ALPHA, the limit from below when
    `below` (`_omega_side`) (OUT: dw[3])."""
    if g.rate_mode == RATE_SOURCE:
        k.nrate += 1
        if below:
            return (<AngularVelocity>g.src).evaluate_rate_before(tt, dw)
        return (<AngularVelocity>g.src).evaluate_rate(tt, dw)
    if g.rate_mode == RATE_ALPHA:
        dw[0] = g.alpha[3 * i]
        dw[1] = g.alpha[3 * i + 1]
        dw[2] = g.alpha[3 * i + 2]
    else:
        dw[0] = 0.0
        dw[1] = 0.0
        dw[2] = 0.0
    return STATUS_OK


cdef inline int _step_rate(const KinCfg* g, Py_ssize_t i, KinWork* k, double t0, double h,
                           double* w1, double* dw) noexcept nogil:
    """w' over the step [t0, t0 + h] for exp2/magnus_ca: the forward difference
    (w(t0 + h) - w0)/h when the source has no rate (RATE_FD; w(t0 + h) left in w1),
    otherwise `_rate` at t0 (OUT: dw[3], w1[3])."""
    cdef int st, c
    if g.rate_mode != RATE_FD:
        return _rate(g, i, k, t0, h < 0.0, dw)
    st = _omega_side(g, i, k, t0 + h, h > 0.0, w1)
    for c in range(3):
        dw[c] = (w1[c] - k.w0[c]) / h
    return st


cdef inline void _carry_rate(const KinCfg* g, KinWork* k, const double* w1) noexcept nogil:
    """After a step: keep w(t0 + h) as the next step's w0 when `_step_rate` computed it."""
    k.have0 = g.rate_mode == RATE_FD and not g.jumps
    if k.have0:
        k.w0[0] = w1[0]
        k.w0[1] = w1[1]
        k.w0[2] = w1[2]


cdef int _begin(const void* cfg, Py_ssize_t i, const double* y0, double* q,
                void* work) noexcept nogil:
    cdef const KinCfg* g = <const KinCfg*>cfg
    cdef KinWork* k = <KinWork*>work
    cdef int c
    for c in range(4):
        q[c] = y0[c]
        k.qb[c] = y0[c]
        k.f0[c] = 0.0
        k.f1[c] = 0.0
        k.f2[c] = 0.0
    k.have0 = False
    k.j = 0
    k.tp1 = 0.0
    k.tp2 = 0.0
    k.nfev = 0
    k.nrate = 0
    k.nsub = 0
    if g.local:                       # z = v, the rotation vector from qb = q0/|q0|
        rkmk_base(k.qb, g.resume)
        q[0] = 0.0
        q[1] = 0.0
        q[2] = 0.0
    return STATUS_OK


cdef int _magnus_ca_substeps(const KinCfg* g, Py_ssize_t i, KinWork* k, double h,
                             const double* dw, double ang, double* q) noexcept nogil:
    """A magnus_ca step whose rotation angle bound `ang` reaches the series' bound: equal
    sub-steps of at most half the bound each, w0 advanced exactly, or the failure's status.
    (Out of `_magnus_ca`, so that the common step's calls are inlined into the loop.)"""
    cdef double w2[3]
    cdef double om[3]
    cdef double hs
    cdef Py_ssize_t sub, nsubs
    cdef int c
    if not (g.substep and ang < MAGNUS_MAX_SUBSTEPS * 0.5 * magnus_bound()):
        g.fail_angle[i] = ang
        return STATUS_TOO_MANY_SUBSTEPS if g.substep else STATUS_ROTATION_BOUND
    nsubs = <Py_ssize_t>floor(ang / (0.5 * magnus_bound())) + 1
    hs = h / nsubs
    k.nsub += nsubs
    for sub in range(nsubs):
        for c in range(3):
            w2[c] = k.w0[c] + dw[c] * (sub * hs)
        magnus_ca_rotvec(w2, dw, hs, g.terms, g.frame, om)
        apply_rotvec(q, om, g.frame, g.approx, q)
    return STATUS_OK


cdef inline int _magnus_ca(const KinCfg* g, Py_ssize_t i, KinWork* k, double t0, double h,
                           double* q) noexcept nogil:
    cdef double w1[3]
    cdef double dw[3]
    cdef double om[3]
    cdef double ang
    cdef int st = _step_rate(g, i, k, t0, h, w1, dw)
    if st != STATUS_OK:
        return st
    ang = magnus_ca_angle(k.w0, dw, h)
    if ang < magnus_bound():
        magnus_ca_rotvec(k.w0, dw, h, g.terms, g.frame, om)
        apply_rotvec(q, om, g.frame, g.approx, q)
    else:
        st = _magnus_ca_substeps(g, i, k, h, dw, ang, q)
        if st != STATUS_OK:
            return st
    _carry_rate(g, k, w1)
    return STATUS_OK


cdef inline int _step(const void* cfg, Py_ssize_t i, double t0, double t1, double* q,
                      void* work) noexcept nogil:
    cdef const KinCfg* g = <const KinCfg*>cfg
    cdef KinWork* k = <KinWork*>work
    cdef double ws[4][3]
    cdef double dw[3]
    cdef double om[3]
    cdef double cab[3]
    cdef double h = t1 - t0
    cdef double* wp
    cdef int st = STATUS_OK, c, s
    if not k.have0 and g.needs_w0:
        st = _omega_side(g, i, k, t0, h < 0.0, k.w0)
        if st != STATUS_OK:
            return st
        k.have0 = True
    if g.kernel == KERNEL_CG:
        # product of exponentials exp(h b_s w(t0 + c_s h)) (Crouch & Grossman 1993)
        # (w depends on t only: every stage's w first, then the product of exponentials)
        for s in range(g.stages):
            if g.c[s] != 0.0:
                st = _omega_side(g, i, k, t0 + g.c[s] * h, g.c[s] == 1.0 and h > 0.0, ws[s])
                if st != STATUS_OK:
                    return st
        for s in range(g.stages):
            wp = k.w0                 # c_s = 0: w(t0)
            if g.c[s] != 0.0:
                wp = ws[s]
            lie_euler_rotvec(wp, g.b[s] * h, om)
            apply_rotvec(q, om, g.frame, g.approx, q)
        k.have0 = g.carry             # c_s = 1: w at the step end is the next step's w0
        if g.carry:
            for c in range(3):
                k.w0[c] = ws[g.stages - 1][c]
    elif g.kernel == KERNEL_MAGNUS:
        for s in range(g.stages):
            st = _omega(g, i, k, t0 + g.c[s] * h, ws[s])
            if st != STATUS_OK:
                return st
        if g.stages == 1:
            lie_euler_rotvec(ws[0], h, om)
        elif g.stages == 2:
            magnus4_rotvec(ws[0], ws[1], h, g.frame, om)
        elif g.stages == 3:
            magnus6_rotvec(ws[0], ws[1], ws[2], h, g.frame, om)
        else:
            magnus8_rotvec(ws[0], ws[1], ws[2], ws[3], h, g.frame, om)
        apply_rotvec(q, om, g.frame, g.approx, q)
        k.have0 = False
    elif g.kernel == KERNEL_EXP2:
        st = _step_rate(g, i, k, t0, h, ws[0], dw)
        if st != STATUS_OK:
            return st
        exp2_rotvec(k.w0, dw, h, om)
        apply_rotvec(q, om, g.frame, g.approx, q)
        _carry_rate(g, k, ws[0])
    elif g.kernel == KERNEL_MAGNUS_CA:
        st = _magnus_ca(g, i, k, t0, h, q)
    elif g.kernel == KERNEL_AB3 and k.j >= 2:
        # on entry f0 = f_{j-1}, f1 = f_{j-2}
        for c in range(4):
            k.f2[c] = k.f1[c]
            k.f1[c] = k.f0[c]
        quaternion_kinematics_rhs(q, k.w0, g.frame, g.gain, k.f0)
        ab3_weights(h, t0 - k.tp1, k.tp1 - k.tp2, cab)
        for c in range(4):
            q[c] = q[c] + (cab[0] * k.f0[c] + cab[1] * k.f1[c] + cab[2] * k.f2[c])
        if g.normalize:
            normalize4(q)
        k.have0 = False
    else:   # rk3, rk4, and the two rk4 start-up steps of ab3
        if g.kernel == KERNEL_AB3:
            # start-up: keep f_j for the multistep formula, advance with RK4
            if k.j == 1:
                for c in range(4):
                    k.f1[c] = k.f0[c]
            quaternion_kinematics_rhs(q, k.w0, g.frame, g.gain, k.f0)
        st = _omega(g, i, k, t0 + 0.5 * h, ws[1])
        if st == STATUS_OK:
            st = _omega_side(g, i, k, t0 + h, h > 0.0, ws[2])
        if st != STATUS_OK:
            return st
        if g.kernel == KERNEL_RK3:
            rk3_step(q, k.w0, ws[1], ws[2], h, g.frame, g.gain, q)
        else:
            rk4_step(q, k.w0, ws[1], ws[2], h, g.frame, g.gain, q)
        if g.normalize:
            normalize4(q)
        for c in range(3):
            k.w0[c] = ws[2][c]
        k.have0 = not g.jumps
    if g.kernel == KERNEL_AB3:             # the multistep history: the two previous step starts
        k.tp2 = k.tp1
        k.tp1 = t0
        k.j += 1
    return st


cdef int _advance(const void* cfg, Py_ssize_t i, const double* t, Py_ssize_t j0,
                  Py_ssize_t j1, double* z, void* work, Py_ssize_t* j) noexcept nogil:
    # q and the scratch as locals over the chunk: the compiler keeps them in registers
    cdef KinWork k = (<KinWork*>work)[0]
    cdef double q[4]
    cdef int c, st
    for c in range(4):
        q[c] = z[c]
    st = advance_steps(_step, 4, cfg, i, t, j0, j1, q, &k, j)
    for c in range(4):
        z[c] = q[c]
    (<KinWork*>work)[0] = k
    return st


cdef int _deriv(const void* cfg, Py_ssize_t i, double t, const double* q, double* dq,
                void* work) noexcept nogil:
    """q' = 1/2 q w(t) (body) or 1/2 w(t) q (world), + the norm term (OUT: dq[4])."""
    cdef const KinCfg* g = <const KinCfg*>cfg
    cdef double w[3]
    cdef int st = _omega(g, i, <KinWork*>work, t, w)
    quaternion_kinematics_rhs(q, w, g.frame, g.gain, dq)
    return st


cdef int _deriv_rkmk(const void* cfg, Py_ssize_t i, double t, const double* v, double* dv,
                     void* work) noexcept nogil:
    """v' = T(-v)^-1 w(t) (body) or T(v)^-1 w(t) (world), rotode/rkmk.pxd (OUT: dv[3])."""
    cdef const KinCfg* g = <const KinCfg*>cfg
    cdef double w[3]
    cdef int st = _omega(g, i, <KinWork*>work, t, w)
    rkmk_rate(v, w, g.frame, dv)
    return st


cdef void _accept_local(const void* cfg, Py_ssize_t i, double* v, double* K0,
                        void* work) noexcept nogil:
    """After a step in local coordinates (adaptive Magnus, and rkmk after its FSAL stage):
    qb <- qb exp(v/2) (body) or exp(v/2) qb (world), retracted to |qb| = 1, and v <- 0
    (OUT: v, work)."""
    cdef const KinCfg* g = <const KinCfg*>cfg
    cdef KinWork* k = <KinWork*>work
    apply_rotvec(k.qb, v, g.frame, False, k.qb)
    rkmk_retract(k.qb)
    v[0] = 0.0
    v[1] = 0.0
    v[2] = 0.0


cdef void _accept_rkmk(const void* cfg, Py_ssize_t i, double* v, double* K0,
                       void* work) noexcept nogil:
    """After a step: qb <- qb exp(v/2) (body) or exp(v/2) qb (world), v <- 0; the FSAL
    stage T^-1(v) w(t) becomes w(t), the algebra rate at v = 0 (OUT: v, K0, work)."""
    rkmk_angular_velocity(v, K0, (<const KinCfg*>cfg).frame, K0)
    _accept_local(cfg, i, v, K0, work)


cdef int _magnus_omega(const KinCfg* g, Py_ssize_t i, KinWork* k, double t, double h,
                       double* om, double* low) noexcept nogil:
    """Omega of the Magnus step t -> t + h (magnus6 or magnus8, the fixed-step formulas) and,
    when low is not NULL, the embedded lower-order Magnus method (magnus4 or magnus6) on its
    own Gauss nodes: their difference sees the quadrature error of the integral of w, which
    a lower-order formula on the same nodes would not (a rate of fixed direction has no
    commutator terms), as well as the commutator terms (OUT: om[3], low[3])."""
    cdef double ws[4][3]
    cdef int st, s
    for s in range(g.stages):
        st = _omega(g, i, k, t + g.c[s] * h, ws[s])
        if st != STATUS_OK:
            return st
    if g.stages == 3:
        magnus6_rotvec(ws[0], ws[1], ws[2], h, g.frame, om)
    else:
        magnus8_rotvec(ws[0], ws[1], ws[2], ws[3], h, g.frame, om)
    if low == NULL:
        return STATUS_OK
    for s in range(g.estages):
        st = _omega(g, i, k, t + g.ec[s] * h, ws[s])
        if st != STATUS_OK:
            return st
    if g.estages == 2:
        magnus4_rotvec(ws[0], ws[1], h, g.frame, low)
    else:
        magnus6_rotvec(ws[0], ws[1], ws[2], h, g.frame, low)
    return STATUS_OK


cdef int _magnus_trial(const void* cfg, Py_ssize_t i, double t, double h, const double* z,
                       double* znew, const Control* C, double* err,
                       void* work) noexcept nogil:
    """A trial step of adaptive magnus6/magnus8 from qb (z = 0): znew = Omega, err = the RMS
    of (Omega - Omega_low) scaled by atol + rtol, an orientation error (OUT: znew, err)."""
    cdef double low[3]
    cdef double e, acc = 0.0
    cdef int c
    cdef int st = _magnus_omega(<const KinCfg*>cfg, i, <KinWork*>work, t, h, znew, low)
    if st != STATUS_OK:
        return st
    for c in range(3):
        e = (znew[c] - low[c]) / (C.atol[c] + fmax(fabs(znew[c]), C.ref[c]) * C.rtol)
        acc = acc + e * e
    err[0] = sqrt(acc / 3.0)
    return STATUS_OK


cdef int _magnus_dense(const void* cfg, Py_ssize_t i, double t, double h, const double* z,
                       const double* znew, double tt, double* zout,
                       void* work) noexcept nogil:
    """The state at tt inside the accepted step: the same Magnus formula over [t, tt] (its
    order, not an interpolant's; the controlled steps are not shortened) (OUT: zout)."""
    return _magnus_omega(<const KinCfg*>cfg, i, <KinWork*>work, t, tt - t, zout, NULL)


cdef int _magnus_first(const void* cfg, Py_ssize_t i, double t0, const double* z,
                       double direction, double span, const Control* C, double* h,
                       void* work) noexcept nogil:
    """First step: a rotation of 0.1 tol^(1/(p+1)) rad at the initial rate (p = 4 or 6, the
    estimate's order, tol = atol + rtol), within the span and max_step (OUT: h)."""
    cdef const KinCfg* g = <const KinCfg*>cfg
    cdef double w[3]
    cdef double rate, angle
    cdef int st = _omega(g, i, <KinWork*>work, t0, w)
    if st != STATUS_OK:
        return st
    rate = sqrt(w[0] * w[0] + w[1] * w[1] + w[2] * w[2])
    angle = 0.1 * pow(C.atol[0] + C.rtol, 1.0 / (5.0 if g.stages == 3 else 7.0))
    h[0] = fmin(span, C.max_step)
    if rate * h[0] > angle:
        h[0] = angle / rate
    return STATUS_OK


cdef int _engine_body(const void* cfg, Py_ssize_t i, EngineRun* run) noexcept nogil:
    """Body i's whole run by the specialised engine (rotode/_engine.hpp, _models.hpp): the
    pair on q' = f(t, q) with the tableau and w(t) known at compile time.  Every stored row
    evaluates w once more (its body rate), as `_store` does.  rkmk: the pair on the rotation
    vector v of each step (`kin_rkmk_body`); adaptive magnus6/magnus8: the driver's controlled
    loop with `_magnus_trial` (rotode/_lanes_magnus.hpp, one lane), counted as it counts."""
    cdef const KinCfg* g = <const KinCfg*>cfg
    cdef const KinParams* p = &g.params[0 if g.params_shared else i]
    cdef int st
    if g.magnus_engine:
        kin_magnus_lanes(ISA_SCALAR, &g.magnus, g.resume, p, True, run, 1, &g.nfev[i])
        g.nrate[i] = 0
        g.nsub[i] = 0
        return run.status
    if g.kernel == KERNEL_RKMK:
        st = kin_rkmk_body(g.pair, p, g.resume, run)
    else:
        st = kin_erk_body(g.pair, p, run)
    g.nfev[i] = run.nfev + run.stores + run.hook_stores
    g.nrate[i] = 0
    g.nsub[i] = 0
    return st


cdef void _erk_lanes(const void* cfg, Py_ssize_t i, EngineRun* runs, Py_ssize_t nb) noexcept nogil:
    """Bodies i .. i + nb - 1 by the adaptive lane kernel (rotode/_lanes_erk.hpp): the pair on
    q, or (rkmk) on the rotation vector v of each step, with w(t) known at compile time, one
    body per SIMD lane, each lane refilled from the queue when its body ends (adaptive
    magnus6/magnus8: rotode/_lanes_magnus.hpp); each body as `_engine_body` runs it, bit for
    bit, and counted as it counts."""
    cdef const KinCfg* g = <const KinCfg*>cfg
    cdef const KinParams* p = &g.params[0 if g.params_shared else i]
    cdef int lanes
    cdef Py_ssize_t j
    if g.magnus_engine:
        lanes = kin_magnus_lanes(g.isa, &g.magnus, g.resume, p, g.params_shared, runs, nb,
                                 &g.nfev[i])
    else:
        lanes = kin_erk_lanes(g.isa, g.pair, g.kernel == KERNEL_RKMK, g.resume, p,
                              g.params_shared, runs, nb)
    for j in range(nb):
        if not g.magnus_engine:
            g.nfev[i + j] = runs[j].nfev + runs[j].stores + runs[j].hook_stores
        g.nrate[i + j] = 0
        g.nsub[i + j] = 0
        g.lanes_used[i + j] = lanes


cdef void _lane_block(const void* cfg, Py_ssize_t i, BlockRun* run) noexcept nogil:
    """Bodies i .. i + run.nb - 1 by the lane kernel (rotode/_lanes.hpp): rk3, rk4, ab3, the
    Crouch-Grossman product, exp2, magnus2-magnus8 or magnus_ca on q with w(t) known at compile
    time, one body per SIMD lane.  The w evaluations are counted as `_step` and `_store` count
    them: for rk3/rk4 w(t0) once, then two per step taken (none after the last row); the other
    kernels count theirs (w and w') in counts[3 j + 2] and counts[3 j + 1], magnus_ca its
    sub-steps and a failed step's rotation angle in g's nsub and fail_angle."""
    cdef const KinCfg* g = <const KinCfg*>cfg
    cdef Py_ssize_t j, steps
    for j in range(run.nb):
        g.nsub[i + j] = 0
    run.nsub = &g.nsub[i]
    run.angle = &g.fail_angle[i]
    cdef int lanes = kin_block(g.isa, g.lane_kernel, &g.params[0 if g.params_shared else i],
                               g.params_shared, g.normalize, &g.lane_method, run)
    cdef bint first = run.m > 0 and run.save[0] == 0
    for j in range(run.nb):
        steps = run.counts[3 * j]               # (a failed body's: the steps it took)
        if run.status[j] == STATUS_OK:
            steps = run.save[run.m - 1] if run.m > 0 else 0
        g.nfev[i + j] = 2 * steps + (1 if steps > 0 or first else 0)
        g.nrate[i + j] = 0
        if g.lane_kernel != LANES_RK3 and g.lane_kernel != LANES_RK4:
            g.nfev[i + j] = run.counts[3 * j + 2]
            g.nrate[i + j] = run.counts[3 * j + 1]
            run.counts[3 * j + 1] = 0
            run.counts[3 * j + 2] = 0
        g.lanes_used[i + j] = lanes


cdef void _pair_block(const void* cfg, Py_ssize_t i, BlockRun* run) noexcept nogil:
    """Bodies i .. i + run.nb - 1 of a fixed-step pair (dop853, dopri5, bs3 given `dt` on q, or
    the rkmk methods on v) by the lanes of rotode/_lanes_erk.hpp (`erk_fixed_block`): the
    driver's `_erk_fixed` on each, w(t) known at compile time, one body per AVX2 lane, no step
    after the last row; the w evaluations counted as `_deriv` and `_store` count them (one per
    evaluation of f and one per row)."""
    cdef const KinCfg* g = <const KinCfg*>cfg
    cdef int lanes = kin_erk_fixed(g.isa, g.pair, g.kernel == KERNEL_RKMK, g.resume, False,
                                   &g.params[0 if g.params_shared else i], g.params_shared, run)
    cdef Py_ssize_t j
    for j in range(run.nb):
        g.nfev[i + j] = run.counts[3 * j + 1] + run.counts[3 * j + 2]
        g.nrate[i + j] = 0
        g.nsub[i + j] = 0
        run.counts[3 * j + 1] = 0
        run.counts[3 * j + 2] = 0
        g.lanes_used[i + j] = lanes


cdef int _store(const void* cfg, Py_ssize_t i, double t, const double* z, double* y,
                double* w, void* work) noexcept nogil:
    """q and the BODY angular velocity at t (OUT: y[4], w[3])."""
    cdef const KinCfg* g = <const KinCfg*>cfg
    cdef KinWork* k = <KinWork*>work
    cdef double qc[4]
    cdef int c, st
    if not k.have0 or g.kernel == KERNEL_ERK or g.local:
        st = _omega(g, i, k, t, k.w0)
        if st != STATUS_OK:
            return st
        k.have0 = not g.jumps         # (a backward step from t reads w(t-) instead)
    _store_q(cfg, i, t, z, y, w, work)
    if g.frame == FRAME_WORLD:
        quat_conj(y, qc)
        quat_rotate(qc, k.w0, w)
    else:
        for c in range(3):
            w[c] = k.w0[c]
    return STATUS_OK


cdef int _store_q(const void* cfg, Py_ssize_t i, double t, const double* z, double* y,
                  double* w, void* work) noexcept nogil:
    """q at t alone, w left as it is (`Stepper.store_row`: events that do not read w; `_store`
    adds w) (OUT: y[4])."""
    cdef const KinCfg* g = <const KinCfg*>cfg
    cdef KinWork* k = <KinWork*>work
    cdef int c
    if g.local:
        apply_rotvec(k.qb, z, g.frame, False, y)
    else:
        for c in range(4):
            y[c] = z[c]
    return STATUS_OK


cdef void _end(const void* cfg, Py_ssize_t i, int status, const double* q,
               void* work) noexcept nogil:
    cdef const KinCfg* g = <const KinCfg*>cfg
    cdef KinWork* k = <KinWork*>work
    g.nfev[i] = k.nfev
    g.nrate[i] = k.nrate
    g.nsub[i] = k.nsub


_NO_ROWS = np.zeros((1, 3))          # placeholder (read-only) when there are no such rows
_NO_ROWS.flags.writeable = False


def _as_rows(x, name, n, shared=False):
    """A float64 C-contiguous finite array of shape (n, 3) (shared: (3,) is every body's)."""
    arr = as_float_array(x, name, finite=False)
    want = f"(3,) or ({n}, 3)" if shared else f"({n}, 3)"
    if shared and arr.shape == (3,):
        arr = np.broadcast_to(arr, (n, 3))
    if arr.shape != (n, 3):
        raise ValueError(f"`{name}` must have shape {want}, got {arr.shape}")
    arr = np.ascontiguousarray(arr, dtype=np.float64)
    if not np.isfinite(arr).all():
        raise ValueError(f"`{name}` must contain only finite values (no NaN or inf)")
    return arr


#: Registry name -> PairId of the pairs the specialised engine runs (rotode/_tableaux.hpp).
ENGINE_PAIRS = _pair_ids()
#: The same for the Lie-group methods it runs (a pair on the rotation vector of each step,
#: rotode/_models.hpp `kin_rkmk_body`): their name -> the PairId of their pair.
ENGINE_GROUP_PAIRS = _group_pair_ids()


def _magnus_engine_methods():
    """The adaptive Magnus methods of the registry that rotode/_lanes_magnus.hpp runs (3 or 4
    Gauss nodes, the embedded method one fewer): name -> (nodes, the embedded method's nodes,
    the controller's exponent -1 / (the estimate's order + 1), as the driver's)."""
    out = {}
    for name in _methods.names("kinematics"):
        spec = _methods.get(name, "kinematics")
        if spec.code("kinematics") != KERNEL_MAGNUS or spec.embedded is None:
            continue
        nodes, enodes = tuple(spec.nodes), tuple(spec.embedded.nodes)
        if len(nodes) in (3, 4) and len(enodes) == len(nodes) - 1:
            out[name] = (nodes, enodes, _magnus_exponent(spec))
    return out


def _magnus_exponent(spec):
    """The step controller's exponent of an adaptive Magnus method, -1 / (the order of its
    error estimate + 1): the driver's and the engine's."""
    return -1.0 / (spec.embedded.error_order + 1)


#: Registry name -> (nodes, embedded nodes, exponent) of the adaptive Magnus methods that the
#: specialised engine and its lanes run (rotode/_lanes_magnus.hpp).
ENGINE_MAGNUS = _magnus_engine_methods()


cdef void _magnus_method(MagnusMethod* m, tuple data):
    """m from an `ENGINE_MAGNUS` entry (OUT: m)."""
    cdef int j
    nodes, enodes, m.exponent = data
    m.stages = len(nodes)
    m.estages = len(enodes)
    for j in range(4):
        m.c[j] = nodes[j] if j < m.stages else 0.0
        m.ec[j] = enodes[j] if j < m.estages else 0.0


#: False: every run takes the driver's loop (tests compare the two).
_USE_ENGINE = True
#: rotode._lanes' instruction sets -> their codes in rotode/_lanes.hpp (ISA_*).
_LANE_ISAS = {"scalar": ISA_SCALAR, "sse2": ISA_SSE2, "avx2": ISA_AVX2, "avx512": ISA_AVX512}


cdef bint _kin_params(object src, const double* w, int frame, double gain, KinParams* p):
    """The engine's parameters of a body (OUT: p): its source `src` (None: the constant rate
    `w`); False when the engine has no compiled model of the source."""
    cdef int c
    p.world = frame == FRAME_WORLD
    p.gain = gain
    p.rate = 0.0
    for c in range(3):
        p.w[c] = 0.0
        p.amp[c] = 0.0
        p.phase[c] = 0.0
    if src is None:
        p.omega = OMEGA_CONSTANT
        for c in range(3):
            p.w[c] = w[c]
    elif type(src) is ConstantRate:
        p.omega = OMEGA_CONSTANT
        for c in range(3):
            p.w[c] = (<ConstantRate>src)._w[c]
    elif type(src) is Sinusoid:
        p.omega = OMEGA_SINUSOID
        p.rate = (<Sinusoid>src)._rate
        for c in range(3):
            p.amp[c] = (<Sinusoid>src)._amplitude[c]
            p.phase[c] = (<Sinusoid>src)._phase[c]
    else:
        return False
    return True


def _engine_eval(model, int frame, double gain, double t, q):
    """q' = f(t, q) as the specialised engine evaluates it for the source `model` (tests: the
    C++ equations against the Cython kernels); None when it has no compiled model of it."""
    cdef KinParams p
    cdef double w[3]
    cdef const double[::1] qv = np.ascontiguousarray(q, dtype=np.float64)
    out = np.empty(4)
    cdef double[::1] ov = out
    w[0] = w[1] = w[2] = 0.0
    if qv.shape[0] != 4 or not _kin_params(model, w, frame, gain, &p):
        return None
    kin_eval(&p, t, &qv[0], &ov[0])
    return out


def run_single(model, t_span, y0, method, rtol, atol, frame, given=None):
    """The common kinematic call of `rotode.integrate` in a few microseconds, or None.

    One body, ``y0`` a float64 array of shape (4,), a `rotode.omega.Constant` or `Sinusoid`
    source, ``frame`` None, "body" or "world", a pair the engine runs (`ENGINE_PAIRS`, an
    rkmk method of `ENGINE_GROUP_PAIRS`, or an adaptive Magnus method of `ENGINE_MAGNUS`),
    ``t_span`` a pair of Python numbers,
    ``rtol``/``atol`` None or Python floats: as `rotode.dynamic.run_single`
    (anything else, refused input and failed runs give None, and `integrate`'s general path).
    Returns ``(t, y (m, 4), w (m, 3), stats)``: the rows at t0 and tf, or with `given` (as
    `rotode.dynamic.run_single`'s) at the requested times.
    """
    cdef KinParams p
    cdef KinCfg g
    cdef EngineRun run
    cdef ThinCall c
    cdef Py_ssize_t nfev = 0, nrate = 0, nsub = 0
    cdef double w[3]
    if not ((type(model) is Sinusoid or type(model) is ConstantRate) and type(method) is str
            and _USE_ENGINE and (frame is None or (type(frame) is str
                                 and (frame == "body" or frame == "world")))):
        return None
    pair = ENGINE_PAIRS.get(method)
    g.kernel = KERNEL_ERK
    g.resume = False
    g.magnus_engine = False
    if pair is None:
        pair = ENGINE_GROUP_PAIRS.get(method)
        g.kernel = KERNEL_RKMK
    magnus = ENGINE_MAGNUS.get(method) if pair is None else None
    if magnus is not None:            # adaptive magnus6/magnus8: rotode/_lanes_magnus.hpp
        _magnus_method(&g.magnus, magnus)
        g.magnus_engine = True
        g.kernel = KERNEL_MAGNUS
        pair = -1
    w[0] = w[1] = w[2] = 0.0
    if (pair is None or not thin_call(t_span, y0, rtol, atol, 4, &c, &run, given)
            or not _kin_params(model, w, FRAME_WORLD if frame == "world" else 0, 0.0, &p)):
        return None
    g.pair = pair
    g.params = &p
    g.params_shared = True
    g.nfev = &nfev
    g.nrate = &nrate
    g.nsub = &nsub
    rows = thin_rows(_engine_body, &g, 4, &c, &run)
    if rows is None:
        return None
    stats = {"n_steps": run.accepted, "nfev": nfev, "nrate": 0, "n_substeps": 0,
             "status": 0, "message": "success", "n_rejected": run.rejected,
             "nfev_pair": run.nfev}
    return rows + (stats,)


def run_fixed_single(model, t_span, y0, method, dt, save_every, frame, grid=None):
    """The common fixed-step kinematic call of `rotode.integrate` in a few microseconds, or
    None.

    One body, ``y0`` a float64 array of shape (4,) or a list or tuple of 4 numbers, a
    `rotode.omega.Constant` or `Sinusoid` source (a `Samples` source with ``dt="samples"``:
    `_samples_single`), ``frame`` None, "body" or "world", a
    fixed-step method of the lane kernels (`_lane_kernel`: rk3, rk4, ab3, the Crouch-Grossman
    methods, exp2, magnus2-magnus8, magnus_ca) or a pair at fixed steps (dop853, dopri5, bs3,
    rkmk8, rkmk5, rkmk3: the pairs' fixed-grid lanes, `_pair_block`) with no option,
    ``t_span`` a pair of Python numbers, ``dt`` a Python number, ``save_every`` None or a
    Python int: the lane kernel is entered directly on `integrate`'s grid
    (`_driver.thin_grid`), as `run_plan` runs one body there.  Anything else, any input
    `integrate` would refuse, the lanes off and a failed run give None, and `integrate`'s
    general path.  Returns ``(t, y (m, 4), w (m, 3), stats)``.
    ``grid``: None, or `_plan.time_grid`'s grid and saved indices of a call with ``t_eval``
    (taken as they are).
    """
    cdef KinCfg g
    cdef KinParams p
    cdef Stepper sp
    cdef BlockRun run
    cdef ThinCall c
    cdef Py_ssize_t counters[3]
    cdef double fail_angle = 0.0
    cdef int lanes_used = 1
    cdef double w[3]
    if not (type(method) is str
            and (frame is None or (type(frame) is str and (frame == "body" or frame == "world")))):
        return None
    if type(model) is Samples:
        return _samples_single(model, y0, method, frame, grid)
    if not (type(model) is Sinusoid or type(model) is ConstantRate):
        return None
    spec = _FIXED_SPECS.get(method)
    if spec is None:
        return None
    grid = thin_grid(t_span, dt, save_every, y0, 4, True, &c, &run, grid)
    if grid is None:
        return None
    _thin_cfg(&g, method, spec, frame, model, run.t[0], w, counters, &fail_angle)
    pair = _pair_id(g.kernel, method)
    if ((pair < 0 and (g.local or _lane_kernel(&g) < 0))
            or not _kin_params(model, w, g.frame, g.gain, &p)):
        return None
    g.params = &p
    g.params_shared = True
    g.pair = pair                   # (every field a hook reads set, as run_plan sets them)
    g.estages = 0
    sp.block = NULL
    if pair >= 0:                   # (the pairs' fixed-grid lanes, as run_plan attaches them)
        isa = _attach_pair_lanes(&sp, &g, 1, &lanes_used)
    else:
        isa = _attach_lanes(&sp, &g, &lanes_used)
    if sp.block == NULL:            # (the lanes off, or not taking the body)
        return None
    rows = thin_block_rows(sp.block, &g, 4, grid, &run)
    if rows is None:
        return None
    return rows + (_thin_stats(run.n, counters) | {"simd": isa if lanes_used > 1 else "scalar"},)


cdef object _samples_single(object model, object y0, str method, object frame, object grid):
    """`run_fixed_single` under a `Samples` rate (gyroscope data; ``dt="samples"``, `grid`
    `_plan.sample_grid`'s grid and saved indices, or None): the driver's fixed-grid loop over
    `run_plan`'s stepper for one body (the lane kernels do not interpolate samples), on the
    calling thread.  Every fixed-step method and the pairs at fixed steps; ``(t, y, w, stats)``
    as `run_plan` gives them, or None (the general path then runs, and raises its errors)."""
    cdef KinCfg g
    cdef Stepper sp
    cdef BlockRun run
    cdef ThinCall c
    cdef Py_ssize_t counters[3]
    cdef double fail_angle = 0.0
    cdef double w[3]
    spec = _FIXED_SPECS.get(method)
    if spec is None or grid is None:
        return None
    grid = thin_grid(None, None, None, y0, 4, True, &c, &run, grid)
    if grid is None:
        return None
    _thin_cfg(&g, method, spec, frame, model, run.t[0], w, counters, &fail_angle)
    sp = make_stepper(&g, _begin, _advance, _store, _end, 4, 4, 4, False)
    sp.store_row = _store_q
    g.pair = -1                     # (every field a hook reads set, as run_plan sets them)
    g.params = NULL
    g.params_shared = True
    held = _attach_kernel(&sp, &g, spec, None)       # (held: the pair's Engine, kept alive)
    rows = thin_stepper_rows(&sp, grid, &run)
    del held
    if rows is None:
        return None
    return rows + (_thin_stats(run.n, counters),)


cdef int _thin_cfg(KinCfg* g, object method, object spec, object frame, object model,
                   double t0, double* w, Py_ssize_t* counters, double* fail_angle) except -1:
    """The configuration of a thin fixed-step call of one body (`run_fixed_single`,
    `_samples_single`) as `run_plan` fills it for one body: its method, frame and source, no
    constant rows (w zeroed) and the counters (OUT: g, w[3], counters[3] zeroed: the w and w'
    evaluations and the sub-steps)."""
    _run_options(g, method, spec, _FRAME_OPTIONS[frame], False)
    _method_data(g, spec, None, False)
    _source_cfg(g, model, None, t0)
    w[0] = w[1] = w[2] = 0.0
    counters[0] = counters[1] = counters[2] = 0
    g.wconst = w                    # (for a source, run_plan's: no rows read)
    g.alpha = w
    g.t_start = t0
    g.nfev = &counters[0]
    g.nrate = &counters[1]
    g.nsub = &counters[2]
    g.fail_angle = fail_angle
    g.magnus_engine = False
    return 0


cdef dict _thin_stats(Py_ssize_t n, const Py_ssize_t* counters):
    """The stats of a thin fixed-step call's successful run of n steps (`run_plan`'s)."""
    return {"n_steps": n, "nfev": counters[0], "nrate": counters[1], "n_substeps": counters[2],
            "status": 0, "message": "success"}


# the fixed-step methods `run_fixed_single` may take (registry entries of rotode.kinematic),
# and the options `integrate` implies for each frame argument
_FIXED_SPECS = {name: _methods.get(name, "kinematics") for name in _methods.names("kinematics")
                if _methods.get(name).runner("kinematics") == "kinematic"}
_FRAME_OPTIONS = {None: {"frame": "body"}, "body": {"frame": "body"},
                  "world": {"frame": "world"}}


cdef object _run_options(KinCfg* g, object method, object spec, object options,
                         bint adaptive):
    """The options of `run` for `method` (`spec`, its registry entry), checked, for a run
    under error control or not (OUT: g's frame, exponential, norm gain, normalize, terms,
    substep): alpha."""
    takes = spec.options("kinematics")
    options = dict(options or {})
    g.kernel = spec.code("kinematics")
    g.frame = as_frame(options.pop("frame", "body"))
    g.approx = False
    if "exp" in takes:
        e = as_choice(options.pop("exp", "exact"), "exp", ("exact", "approx"), "option `{}`")
        g.approx = e == "approx"
    g.gain = 0.0
    g.normalize = False
    if not spec.group:
        # the same check (and message) as QuaternionKinematics(norm_gain=...)
        g.gain = as_positive_scalar(options.pop("norm_gain", 0.0), "norm_gain", allow_zero=True)
        g.normalize = as_bool_option(options.pop("normalize", False), "normalize")
        if g.normalize and "normalize" not in takes:
            raise TypeError(f"option `normalize` is not accepted by {method!r} (it would break "
                            "its error estimate and dense output): use `norm_gain`")
    if adaptive and not spec.adaptive:
        raise ValueError(f"method {method!r} has no error estimate (no `rtol`/`atol`)")
    g.terms = 2
    g.substep = False
    alpha = None
    if "terms" in takes:
        g.terms = as_int_option(options.pop("terms", 2), "terms", 1, 4)
    if "substep" in takes:
        g.substep = as_bool_option(options.pop("substep", False), "substep")
    if "alpha" in takes:
        alpha = options.pop("alpha", None)
    if options:
        raise TypeError(f"unknown option(s) for kinematic method {method!r}: "
                        f"{', '.join(sorted(map(str, options)))}")
    return alpha


cdef int _method_data(KinCfg* g, object spec, object control, object resume) except -1:
    """The method's data (OUT: g's stages, weights and nodes, local coordinates, resume)."""
    cdef int st
    # the method's data: Crouch-Grossman weights and nodes, or Gauss nodes
    g.stages = 0
    g.needs_w0 = g.kernel != KERNEL_MAGNUS
    g.carry = False
    g.local = g.kernel == KERNEL_RKMK or (g.kernel == KERNEL_MAGNUS and control is not None)
    g.resume = g.local and bool(resume)
    if g.kernel == KERNEL_CG:
        _, b, c = spec.tableau.doubles
        g.stages = len(b)
        g.needs_w0 = 0.0 in c
        g.carry = c[len(c) - 1] == 1.0
    elif g.kernel == KERNEL_MAGNUS:
        b, c = (), spec.nodes
        g.stages = len(c)
        g.estages = len(spec.embedded.nodes) if control is not None else 0
        for st in range(g.estages):
            g.ec[st] = spec.embedded.nodes[st]
    if g.kernel == KERNEL_CG or g.kernel == KERNEL_MAGNUS:
        for st in range(g.stages):
            g.b[st] = b[st] if b else 0.0
            g.c[st] = c[st]
    return 0


def _check_y0(y0):
    """y0 as a float64 C-contiguous (N, 4) array of finite nonzero quaternions."""
    y0 = np.asarray(y0)
    if y0.ndim != 2 or y0.shape[1] != 4:
        raise ValueError(f"`y0` must have shape (N, 4), got {y0.shape}")
    y0 = np.ascontiguousarray(y0, dtype=np.float64)
    if not all_finite(y0.reshape(-1)):
        raise ValueError("`y0` must contain only finite values (no NaN or inf)")
    if first_small_norm(y0, TINY_NORM2) >= 0:
        raise ValueError("`y0` must hold nonzero quaternions")
    return y0


cdef int _source_cfg(KinCfg* g, object src, object alpha, double t0) except -1:
    """The angular velocity's part of the configuration (OUT: g's source, whether it jumps,
    the carried w, the rate mode), src the run's source or None (constant rows)."""
    g.is_source = src is not None
    g.jumps = isinstance(src, Samples) and src.kind == "previous"
    g.carry = g.carry and not g.jumps
    g.src = <PyObject*>src
    return _rate_mode(g, src, alpha, t0)


cdef int _rate_mode(KinCfg* g, object src, object alpha, double t0) except -1:
    """How w' is obtained (OUT: g.rate_mode): alpha, the source's, finite differences or 0."""
    cdef int st
    g.rate_mode = RATE_ZERO
    cdef double probe[3]
    if alpha is not None:
        g.rate_mode = RATE_ALPHA
    elif src is not None and (g.kernel == KERNEL_EXP2 or g.kernel == KERNEL_MAGNUS_CA):
        st = (<AngularVelocity>src).evaluate_rate(t0, probe)
        if st == STATUS_OK:
            g.rate_mode = RATE_SOURCE
        elif st == STATUS_UNAVAILABLE:
            g.rate_mode = RATE_FD
        else:
            _raise_source(src)
    return 0


def _stats(method, t, code, message, status, failed, counts, counters, fail_angle):
    """The stats of `run` (counts: `drive`'s, None on a fixed grid; counters: the w and w'
    evaluations and sub-steps per body), after raising the ValueError of a rotation beyond
    magnus_ca's bound or of a source without a value."""
    nfev, nrate, nsub = counters[0], counters[1], counters[2]
    adaptive = counts is not None
    stats = {"n_steps": largest(counts[:, 0]) if adaptive else int(t.shape[0] - 1),
             "nfev": largest(nfev),
             "nrate": largest(nrate), "n_substeps": largest(nsub),
             "status": code, "message": message}
    if adaptive:
        stats["n_rejected"] = largest(counts[:, 1])
        stats["nfev_pair"] = largest(counts[:, 2])
    stats["per_body"] = per_body_counts(counts, stats["n_steps"], nfev)
    if code in (STATUS_ROTATION_BOUND, STATUS_TOO_MANY_SUBSTEPS):
        b = int(np.flatnonzero(status)[0])
        tb = float(t[failed[b]])
        if code == STATUS_TOO_MANY_SUBSTEPS:
            raise ValueError(f"{method}: the rotation over the step from t = {tb!r} (body {b}) "
                             f"is {fail_angle[b]:.6g} rad, more than MAX_SUBSTEPS = "
                             f"{MAX_SUBSTEPS} sub-steps of pi/(2 sqrt(2)) each")
        raise ValueError(
            f"{method}: the rotation over the step from t = {tb!r} (body {b}) is "
            f"{fail_angle[b]:.6g} rad, at or above the convergence bound pi/sqrt(2) = "
            f"2.2214 rad of the Magnus series ([NIRD]); use smaller steps or substep=True")
    if code == STATUS_UNAVAILABLE:
        b = int(np.flatnonzero(status)[0])
        raise ValueError(f"the angular velocity source could not provide a value at "
                         f"t = {float(t[failed[b]])!r}")
    return stats


def run(method, model, y0, t, save, options, workers=1):
    """Advance N orientations over the grid `t` under a known angular velocity.

    Parameters
    ----------
    method : str
        One of `METHODS`.
    model : rotode.omega.AngularVelocity or ndarray, shape (N, 3)
        w(t) shared by all bodies (called through its nogil ``evaluate``/``evaluate_rate``),
        or constant per-body rates.  Its frame is ``options["frame"]``.
    y0 : ndarray, shape (N, 4)
        Initial quaternions (scalar first, nonzero).
    t : ndarray, shape (n + 1,)
        Strictly monotonic finite grid; steps t[i] -> t[i+1].
    save : ndarray of intp, shape (m,)
        Strictly increasing indices into `t` of the states to keep.
    options : dict
        ``frame`` ("body" or "world", default "body"); ``exp`` ("exact" or "approx", the
        Lie-group methods); for ``magnus_ca``: ``terms`` (1, 2, 3 or 4, default 2), ``alpha``
        (N, 3) or (3,) angular accelerations (else w'(t) of the source; for an (N, 3)
        `model`, w(t) = model + alpha (t - t[0])), ``substep`` (default False: a step whose
        rotation reaches pi/sqrt(2) raises ValueError; True: it is split into equal sub-steps);
        for ``rk3``,
        ``rk4``, ``ab3``: ``norm_gain`` (default 0) and ``normalize`` (default False).
        Unknown keys raise TypeError.  (Error control, events and step records are pieces of
        a run's plan, not options: `run_plan`.)
    workers : int
        Threads over bodies; results do not depend on it.

    Returns
    -------
    y_out : ndarray, shape (N, m, 4)
    w_out : ndarray, shape (N, m, 3)
        BODY angular velocity at t[save].
    stats : dict
        ``n_steps``, ``nfev`` (w evaluations per body, including those at output times),
        ``nrate`` (w' evaluations per body), ``n_substeps``, ``status``, ``message``; the
        methods on the lane kernels (rk3, rk4, ab3, lie_euler, cg1, cg2, cg3, exp2,
        magnus2-magnus8 and magnus_ca without ``alpha``, on a fixed grid under constant rates,
        `Constant`, `Sinusoid`) report ``simd``,
        the instruction set of ``rotode._lanes`` their blocks ran on ("scalar": body by
        body); so do the error-controlled pairs and rkmk3/5/8 under those rates without the
        norm gain (the adaptive lanes: ``"avx2"``, their one kernel, on AVX-512 too).
    """
    out = run_plan(Plan(method, model, y0, t, save, options, workers))
    return out.y, out.w, out.stats


cdef tuple _attach_kernel(Stepper* sp, KinCfg* g, object spec, object control):
    """The method's kernel on the stepper: an error-controlled pair's `Engine` on q (ERK) or on
    v (RKMK), the adaptive Magnus methods' trial step, or nothing (the fixed-step kernels)
    (OUT: sp); returns (the Engine or None, which the run keeps alive, the control with the
    tolerances of the state the controller sees)."""
    engine = None
    if g.kernel == KERNEL_ERK:
        engine = Engine(spec, control, 4)
        (<Engine>engine).attach(sp, _deriv)
    elif g.kernel == KERNEL_RKMK:
        # the error of v, a rotation vector, scaled as an error |dv|/2 of a unit q: atol of
        # the quaternion's components, rtol relative to 1 (erk_error_norm)
        if control is not None:
            control = control._replace(atol=algebra_atol(control.atol))
        engine = Engine(spec, control, 3, ref=1.0)
        (<Engine>engine).attach(sp, _deriv_rkmk)
        sp.nz = 3
        sp.accept = _accept_rkmk
        sp.max_angle = rkmk_max_step_angle()
    elif g.kernel == KERNEL_MAGNUS and control is not None:
        # adaptive magnus6/magnus8: the driver's controller with the Magnus trial step and its
        # embedded Magnus method on its own nodes; the error of Omega scaled as for rkmk
        control = control._replace(atol=algebra_atol(control.atol))
        engine = Engine(spec, control, 3, ref=1.0)
        (<Engine>engine).attach_control(sp)
        sp.nz = 3
        sp.trial = _magnus_trial
        sp.dense = _magnus_dense
        sp.first = _magnus_first
        sp.exponent = _magnus_exponent(spec)
        sp.evals = g.stages + g.estages
        sp.accept = _accept_local
        sp.max_angle = rkmk_max_step_angle()
    return engine, control


def run_plan(plan):
    """`run` of a `rotode._runplan.Plan`, the facades' entry: with error control
    (``plan.control``), events, a step record, the proposals ``h_next``, a continued run
    (``resume``: rkmk and the adaptive Magnus methods start from the retraction of ``y0``)
    and the sample times of a `Samples` rate as step ends (``stops``).  Returns a
    `rotode._runplan.RunOutput`.
    """
    method = plan.method
    spec = _methods.get(method, "kinematics")
    cdef KinCfg g
    control = plan.control
    events = plan.events
    alpha = _run_options(&g, method, spec, plan.options, control is not None)
    _method_data(&g, spec, control, plan.resume)
    workers = as_workers(plan.workers)
    y0 = _check_y0(plan.y0)
    model = plan.model
    N = y0.shape[0]
    t, save = as_step_grid(plan.t, plan.save)
    src = model if isinstance(model, _PyAngularVelocity) else None
    wconst = _NO_ROWS if src is not None else _as_rows(model, "model", N)
    alpha_rows = _NO_ROWS if alpha is None else _as_rows(alpha, "alpha", N, shared=True)
    _source_cfg(&g, src, alpha, t[0])
    counters = np.zeros((3, N), dtype=np.intp)       # w and w' evaluations, sub-steps
    nfev, nrate, nsub = counters[0], counters[1], counters[2]
    fail_angle = np.zeros(N)
    cdef const double[:, ::1] wv = wconst
    cdef const double[::1] kv
    cdef const double[:, ::1] av = alpha_rows
    cdef Py_ssize_t[::1] nfv = nfev
    cdef Py_ssize_t[::1] nrv = nrate
    cdef Py_ssize_t[::1] nsv = nsub
    cdef double[::1] fav = fail_angle
    g.wconst = &wv[0, 0]
    g.alpha = &av[0, 0]
    g.t_start = t[0]
    g.nfev = &nfv[0] if N else NULL
    g.nrate = &nrv[0] if N else NULL
    g.nsub = &nsv[0] if N else NULL
    g.fail_angle = &fav[0] if N else NULL
    cdef Stepper sp = make_stepper(&g, _begin, _advance, _store, _end, 4, 4, 4, False)
    sp.store_row = _store_q
    g.pair = -1
    g.params = NULL
    g.params_shared = True
    _held, control = _attach_kernel(&sp, &g, spec, control)   # (_held: the Engine, kept alive)
    if control is not None and plan.stops and isinstance(src, Samples):
        # no controlled step crosses a sample time, where w or w' is not smooth: between two,
        # w is a polynomial of degree <= 3, which the Gauss rules of the Magnus methods
        # integrate exactly (a jump of a zero-order hold between the end of a step and its
        # outermost node would be seen by neither of their rules), and the pairs' error
        # estimates see no kink; a zero-order hold jumps there (`Stepper.stops_jump`)
        kv = src.times
        sp.stops = &kv[0]
        sp.n_stops = kv.shape[0]
        sp.stops_jump = g.jumps
    cdef KinParams* params = NULL
    lanes_used = np.ones(N, dtype=np.intc)
    cdef int[::1] luv = lanes_used
    isa = None
    # adaptive magnus6/magnus8 (3 or 4 nodes, the embedded method one fewer): the engine's
    # loop of rotode/_lanes_magnus.hpp for w(t) compiled, as the driver's with `_magnus_trial`
    g.magnus_engine = (g.kernel == KERNEL_MAGNUS and control is not None
                       and method in ENGINE_MAGNUS)
    if g.magnus_engine:
        _magnus_method(&g.magnus, ENGINE_MAGNUS[method])
    specialise = (_USE_ENGINE and control is not None and plan.steps is None
                  and not plan.h_next
                  and (_pair_id(g.kernel, method) >= 0
                       or (g.magnus_engine and events is None)))
    # the fixed-step kernels of the lanes on a fixed grid with w(t) compiled: the lane kernels
    lanes = control is None and not g.local and not g.jumps and _lane_kernel(&g) >= 0
    # a pair given dt (a fixed grid) with w(t) compiled: the pairs' fixed-grid lanes
    pair_lanes = (control is None and _USE_ENGINE and not g.jumps and plan.steps is None
                  and not plan.h_next and events is None and _pair_id(g.kernel, method) >= 0)
    try:
        if N > 0 and (specialise or lanes or pair_lanes):
            _compiled_params(&g, src, wconst, &params)
        if params != NULL and specialise:
            g.pair = _pair_id(g.kernel, method)
            sp.body = _engine_body
            isa = attach_erk_lanes(&sp, &g.isa, &g.lanes_used, lanes_used, _erk_lanes)
        elif params != NULL and lanes:
            isa = _attach_lanes(&sp, &g, &luv[0])
        elif params != NULL and pair_lanes:
            g.pair = _pair_id(g.kernel, method)
            isa = _attach_pair_lanes(&sp, &g, 1 if g.params_shared else N, &luv[0])
        yout, wout, status, failed, counts, fail_t, rec = drive(
            &sp, t, save, y0, workers, plan.steps, plan.h_next, events)
    finally:
        free(params)
    adaptive = control is not None
    sources = (src,) + (tuple(events.objects) if events is not None else ())
    code, message = outcome(status, failed, t, sources, fail_t=fail_t if adaptive else None,
                            last=None if adaptive else counts[:, 0])
    stats = _stats(method, t, code, message, status, failed, counts if adaptive else None,
                   counters, fail_angle)
    if isa is not None and not adaptive:
        stats["simd"] = isa if lanes_used.max() > 1 else "scalar"
    elif isa is not None and lanes_used.max() > 1:  # (the adaptive lanes ran: AVX2's)
        stats["simd"] = "avx2"
    return RunOutput(yout, wout, stats, rec.events, rec.steps, rec.h_next)


cdef int _compiled_params(KinCfg* g, object src, const double[:, ::1] wv,
                          KinParams** out) except -1:
    """The bodies' parameters for the compiled models (rotode/_models.hpp): one shared for a
    source, else one per row of the constant rates `wv`, malloc'ed (the caller frees *out) and
    set in g (params, params_shared); *out NULL when the source has none there."""
    cdef Py_ssize_t b_, n = 1 if src is not None else wv.shape[0]
    cdef KinParams* params = <KinParams*>malloc(n * sizeof(KinParams))
    out[0] = NULL
    if params == NULL:
        raise MemoryError()
    for b_ in range(n):
        if not _kin_params(src, &wv[b_ if src is None else 0, 0], g.frame, g.gain, &params[b_]):
            free(params)
            return 0
    out[0] = params
    g.params = params
    g.params_shared = src is not None
    return 0


cdef int _lane_kernel(const KinCfg* g) noexcept:
    """The lane kernel (LANES_*) of the run's fixed-step method, -1 if none: rk3, rk4, ab3
    (w' unused), the Crouch-Grossman product (lie_euler, cg1, cg2, cg3), exp2 (w' = 0 or the
    source's), the fixed-step Magnus methods (magnus2, magnus4, magnus6, magnus8: one to four
    Gauss nodes), magnus_ca (w' = 0 or the source's); the exponential exact or approximate."""
    if g.kernel == KERNEL_RK3 or g.kernel == KERNEL_RK4 or g.kernel == KERNEL_AB3:
        if g.rate_mode != RATE_ZERO:
            return -1
        return (LANES_RK3 if g.kernel == KERNEL_RK3
                else LANES_RK4 if g.kernel == KERNEL_RK4 else LANES_AB3)
    if g.kernel == KERNEL_CG and g.stages <= 3:      # KinStepModel::cg's stage arrays
        return LANES_CG
    if g.kernel == KERNEL_EXP2 and (g.rate_mode == RATE_ZERO or g.rate_mode == RATE_SOURCE):
        return LANES_EXP2
    if g.kernel == KERNEL_MAGNUS and g.stages <= 4:  # KinStepModel::magnus: 1 .. 4 nodes
        return LANES_MAGNUS
    if g.kernel == KERNEL_MAGNUS_CA and (g.rate_mode == RATE_ZERO or g.rate_mode == RATE_SOURCE):
        return LANES_MAGNUS_CA
    return -1


cdef void _lane_method(KinCfg* g) noexcept:
    """The method's data of the lane kernels but rk3/rk4 (OUT: g.lane_method)."""
    cdef int s
    g.lane_method.s = g.stages
    for s in range(<int>(sizeof(g.lane_method.c) // sizeof(double))):
        g.lane_method.b[s] = g.b[s] if s < g.stages else 0.0
        g.lane_method.c[s] = g.c[s] if s < g.stages else 0.0
    g.lane_method.approx = g.approx
    g.lane_method.needs_w0 = g.needs_w0
    g.lane_method.carry = g.carry
    g.lane_method.rate_source = g.rate_mode == RATE_SOURCE
    g.lane_method.terms = g.terms
    g.lane_method.substep = g.substep


cdef object _attach_lanes(Stepper* sp, KinCfg* g, int* lanes_used):
    """Run the blocks of the stepper by the lane kernels (rotode/_lanes.hpp) on the instruction
    set of `rotode._lanes.get()` (OUT: sp, g; lanes_used, per body, written by the run);
    returns that set's name, or None for "off" (the driver's step, body by body)."""
    name = _lanes.get()
    if name == "off":
        return None
    g.isa = _LANE_ISAS[name]
    g.lane_kernel = _lane_kernel(g)
    _lane_method(g)
    g.lanes_used = lanes_used
    sp.block = _lane_block
    sp.lanes = lanes_width(g.isa)
    return name


cdef int _pair_id(int kernel, object method):
    """The engine's pair id (`ENGINE_PAIRS`, `ENGINE_GROUP_PAIRS`) of `method` stepped by
    `kernel`: a pair on q, or rkmk's pair on v; -1 for any other method."""
    if kernel == KERNEL_ERK:
        return ENGINE_PAIRS.get(method, -1)
    if kernel == KERNEL_RKMK:
        return ENGINE_GROUP_PAIRS.get(method, -1)
    return -1


cdef object _attach_pair_lanes(Stepper* sp, KinCfg* g, Py_ssize_t nparams, int* lanes_used):
    """Run the blocks of a fixed-step pair (g.pair) by the pairs' fixed-grid lanes
    (rotode/_lanes_erk.hpp) on the instruction set of `rotode._lanes.get()` where they take the
    bodies (nparams: g.params' count) (OUT: sp, g; lanes_used, per body, written by the run);
    returns "avx2" (their kernel's), that set's name where they do not (the driver's
    `_erk_fixed` body by body: the same bits), or None for "off"."""
    name = _lanes.get()
    if name == "off":
        return None
    g.isa = _LANE_ISAS[name]
    cdef int width = kin_erk_fixed_width(g.isa, g.pair, g.params, g.params_shared, nparams)
    if width < 2:
        return name
    g.lanes_used = lanes_used
    sp.block = _pair_block
    sp.lanes = width
    return "avx2"


def _raise_source(src):
    err, src.error = src.error, None
    if err is None:
        err = RuntimeError(f"{type(src).__name__} failed")
    raise err
