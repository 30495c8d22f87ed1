"""Explicit rigid-body steppers: orientation q and body angular velocity w advanced together.

The runner of docs/stepper-contract.md for `rotode.RigidBody` models (one shared body or a
list of N bodies with their own inertia and torque): ``run`` and ``run_plan``, the facades'
entry (a `rotode._runplan.Plan`: error control, events, step records).  State
``y = [q (4), w_body (3)]`` (with ``force=``: ``[q, w, x (3), v (3)]``).  See
docs/methods-rigid-body.md for the equations.

The methods, their orders, their tableaux (exact rationals) and their properties (the kernel's
code, the options it takes, whether it keeps |q| by construction) are the registry's
(`rotode.methods`, docs/methods.md); this module implements the explicit rigid-body kernels of
the one kernel enum (rotode/_driver.pxd): Lie-Euler, Crouch-Grossman (any explicit tableau of at
most 3 stages), Runge-Kutta 3 and 4, Adams-Bashforth 3 and Runge-Kutta-Nystrom, as the
`Stepper` that the one time-loop driver (rotode/_driver.pyx) runs, and hands the embedded pairs
(on the state and on the rotation group) to the driver.  rk3, rk4, ab3, Lie-Euler and
Crouch-Grossman on bodies whose torque is compiled run in the lane kernels instead: blocks of
bodies in SIMD lanes, each body with its single run's bits (rotode/_lanes.hpp,
``rotode._lanes``; docs/architecture.md "The lane kernels"); so do the specialised engine's
error-controlled pairs, on the state and as rkmk3/5/8 on the rotation group, each lane adaptive
on its own and refilled from a queue of bodies (rotode/_lanes_erk.hpp, "The adaptive lanes").

Options (``options`` dict of `run`)
-----------------------------------
normalize : bool
    rk3, rk4, ab3, rkn4: divide q by |q| after every step (Lie-group methods keep |q| = 1).
restore_momentum : bool
    Mandre 2008 sec. 7.2, torque-free bodies only: after every step set w = I^-1 R(q)^T L with the
    world angular momentum L = R(q0) I w0 of the initial state.
torque_substeps : int
    Mandre 2008 sec. 7.3: the torque is evaluated once per grid step (at its start) and every
    stage of the ``torque_substeps`` sub-steps the step is cut into uses its extrapolation
    from the last ``torque_points`` (default 3, Mandre's 2008 formula; 1 = zero-order hold)
    main-step values.
torque_resets : array_like of float
    With ``torque_substeps``: times of torque discontinuities; the history is cleared at the
    first main step starting at or after each time.
torque_start : {"hold", "evaluate"}
    With ``torque_substeps``: while the history holds fewer than ``torque_points`` values (the
    first main steps and after a reset), "hold" (default) extrapolates from the values it has
    (zero-order hold, then linear), "evaluate" calls the torque at every stage as usual.  The
    single low-order start-up step limits the global order to 2 with "hold".
force, mass : callable F(t, x, v) -> (3,) or array (3,) or (N, 3); float or array (N,)
    rkn4 only: world force on the centre of mass (a constant per body with shape (N, 3)) and
    the mass (per body with shape (N,)); the state gains [x, v] (13 columns).
qdot0 : array_like, shape (N, 4) or (4,)
    rkn4 only: the initial q' (default 1/2 q0 * w0).  The state [q, w] keeps only the part of
    q' that is a rate (w = 2 vec(conj(q) q')/|q|^2); a run continued from the final
    ``stats["qdot"]`` of another is the same as one run over both grids, bit for bit.
"""
from types import SimpleNamespace

import numpy as np

from rotode import methods as _methods
from rotode import _lanes
from rotode import _tangent
from rotode._driver import Engine, algebra_atol, outcome, per_body_counts
from rotode._loops import TINY_NORM2, first_small_norm, largest
from rotode._validation import (as_bool_option, as_choice, call_vector,
                                as_float_array, as_int_option, as_rows, as_step_grid,
                                as_workers)
from rotode.rhs import rigid_body_list

from cpython.ref cimport PyObject
from libc.math cimport sqrt, NAN
from libc.stdlib cimport malloc, free
from libc.string cimport memset
from rotode.erk cimport ERK_MAX_STAGES, ERK_MAX_POWERS
from rotode._driver cimport (Engine, Stepper, ThinCall, advance_steps, drive, engine_single,
                             thin_call, thin_rows, thin_grid, thin_block_rows,
                             thin_stepper_rows, make_stepper, STATUS_OK, WORK_DOUBLES,
                             KERNEL_LIE_EULER, KERNEL_CG, KERNEL_RK3, KERNEL_RK4, KERNEL_AB3,
                             KERNEL_RKN4, KERNEL_ERK, KERNEL_RKMK)
from rotode._callback cimport call_vector3
from rotode.quaternion cimport quat_rotate
from rotode.rkmk cimport rkmk_rate, rkmk_retract, rkmk_base, rkmk_max_step_angle
from rotode.equations cimport FRAME_BODY
from rotode.rhs cimport RigidBody
from rotode.torque cimport Compiled, Constant, Gravity, GravityGradient, Sum, Torque
from rotode._engine cimport (BlockRun, EngineRun, RigidParams, rigid_erk_body, rigid_eval,
                             rigid_rkmk_body, ENGINE_OK,
                             TORQUE_NONE, TORQUE_GRAVITY, TORQUE_GRAVITY_AXIS, TORQUE_BODY,
                             TORQUE_WORLD, TORQUE_CALL, TORQUE_GG)
from rotode._tangent_engine cimport tangent_body, fixed_tangent_pass, TangentSeeds
from rotode._lanes_erk cimport rigid_erk_lanes, rigid_erk_fixed, rigid_erk_fixed_width
from rotode._lanes cimport (attach_erk_lanes, rigid_block, lanes_width, LANES_RK3, LANES_RK4,
                            LANES_AB3, LANES_CG,
                            LaneTableau, ISA_SCALAR, ISA_SSE2, ISA_AVX2, ISA_AVX512)
from rotode._codegen import pair_ids as _pair_ids, group_pair_ids as _group_pair_ids
from rotode._runplan import Plan, RunOutput

__all__ = ["METHODS", "KERNELS", "LIMITS", "run"]

#: The rigid-body methods this runner steps (from the registry, rotode.methods).
METHODS = _methods.names("rigid body", runner="dynamic")

#: Kernel names of the registry this runner steps -> their codes in the kernel enum
#: (rotode/_driver.pxd).
KERNELS = {name: code for name, code in _methods.kernel_codes("rigid body").items()
           if _methods.KERNELS["rigid body", name].runner == "dynamic"}

#: The most stages each kernel holds (the registry's `Kernel.limits`; every entry is checked
#: against them when it is made).
LIMITS = _methods.kernel_limits("rigid body", "dynamic")
cdef CGTableau _SIZES              # (its arrays' sizes, checked against the registry)
_methods.check_compiled("rigid body", {
    KERNEL_CG: {"stages": min(sizeof(_SIZES.b), sizeof(_SIZES.c), sizeof(_SIZES.a) // 3)
                // sizeof(double)},
    KERNEL_ERK: {"stages": ERK_MAX_STAGES, "powers": ERK_MAX_POWERS},
    KERNEL_RKMK: {"stages": ERK_MAX_STAGES, "powers": ERK_MAX_POWERS}})


cdef struct RunCfg:
    int kernel         # KERNEL_* (rotode/_driver.pxd)
    CGTableau tab
    int substeps
    bint normalize
    bint restore
    # rkmk: y0 is the row stored at the end of an accepted step of an earlier call (`resume`):
    # qb is that row retracted, as the step's accept made it, not y0/|y0|
    bint resume
    const double* resets
    Py_ssize_t nres
    double direction
    int k              # columns of y0 / y_out: 7 or 13
    int nz             # internal state size
    const BodyCtx* bodies   # one per body, or one shared (shared)
    bint shared
    const ForceCtx* force    # one per body, or one shared (force_shared)
    bint force_shared
    const double* qdot0     # (N, 4) initial q' (rkn4) or NULL
    double* qdot            # (N, 4) final q' (rkn4) (OUT)
    long* nfev              # (N,) torque evaluations (OUT)
    # the specialised engine (rotode/_models.hpp): the pair's id and each body's parameters
    int pair
    const RigidParams* params   # one per body, or one shared (shared)
    double* tangent         # NULL, or (N, m, 6, 6) the y0 sensitivity (Plan.tangent) (OUT)
    long* nfev_force        # (N,) force evaluations (OUT)
    # the lane kernels (rotode/_lanes.hpp): the instruction set (ISA_*), LANES_RK3/RK4/AB3/CG
    # (with LANES_CG its tableau: tab's, or cg1's for lie_euler), its stages (torque evaluations
    # per step; ab3: after its two Kutta steps, 1), and per body the lanes its block ran in (OUT)
    int isa
    int lane_kernel
    LaneTableau lane_tab
    int stages
    int* lanes_used


cdef struct DynWork:
    BodyCtx b
    ForceCtx f
    double fh[3][7]    # ab3 history of right-hand sides
    double hh[2]       # ab3: the two previous step sizes
    double L[3]        # restore_momentum: world angular momentum
    Py_ssize_t r       # torque resets passed
    Py_ssize_t nab     # ab3 steps taken
    double qb[4]       # rkmk: the orientation the step starts from

if sizeof(DynWork) > WORK_DOUBLES * sizeof(double):
    raise ImportError("rotode.dynamic: the per-body scratch exceeds the driver's WORK_DOUBLES")


# ---- force source -------------------------------------------------------------------------

cdef class ForceSource:
    """World force on the centre of mass: a constant (3,) or a callable ``F(t, x, v)``."""

    def __init__(self, force):
        self.error = None
        if callable(force):
            self._function = force
            return
        F = as_float_array(force, "force", (3,), batch=False)
        self._function = None
        for i in range(3):
            self._F[i] = F[i]

    cdef int evaluate(self, double t, const double* x, const double* v,
                      double* F) noexcept nogil:
        if self._function is None:
            F[0] = self._F[0]
            F[1] = self._F[1]
            F[2] = self._F[2]
            return STEP_OK
        with gil:
            err = call_vector3(call_vector, self._function, "force callable", t,
                               ((x[0], x[1], x[2]), (v[0], v[1], v[2])), F)
            if err is None:
                return STEP_OK
            self.error = err
            return STEP_SOURCE_ERROR


# ---- one body -----------------------------------------------------------------------------

cdef inline void _get_qw(const RunCfg* cfg, const double* z, double* q, double* w) noexcept nogil:
    """Orientation and body rate of the internal state (rkn4: w = 2 vec(conj(q) q')/|q|^2)."""
    cdef double qc[4]
    cdef double u[4]
    cdef double s
    cdef int i
    for i in range(4):
        q[i] = z[i]
    if cfg.kernel == KERNEL_RKN4:
        quat_conj(z, qc)
        quat_mul(qc, &z[4], u)
        s = 2.0 / quat_norm2(z)
        w[0] = s * u[1]
        w[1] = s * u[2]
        w[2] = s * u[3]
    else:
        w[0] = z[4]
        w[1] = z[5]
        w[2] = z[6]


cdef inline void _set_w(const RunCfg* cfg, double* z, const double* w) noexcept nogil:
    """Write the body rate into the internal state (rkn4: q' = 1/2 q w) (OUT: z)."""
    cdef int i
    if cfg.kernel == KERNEL_RKN4:
        quat_mul_vec(z, w, &z[4])
        for i in range(4):
            z[4 + i] = 0.5 * z[4 + i]
    else:
        z[4] = w[0]
        z[5] = w[1]
        z[6] = w[2]


cdef inline void _store(const RunCfg* cfg, const double* z, double* yo,
                        double* wo) noexcept nogil:
    """Internal state -> [q, w (, x, v)] row and w row (OUT: yo[k], wo[3])."""
    cdef int i
    _get_qw(cfg, z, yo, &yo[4])
    for i in range(3):
        wo[i] = yo[4 + i]
    if cfg.k == 13:
        for i in range(6):
            yo[7 + i] = z[8 + i]


cdef int _begin(const void* c, Py_ssize_t i, const double* y0, double* z,
                void* work) noexcept nogil:
    cdef const RunCfg* cfg = <const RunCfg*>c
    cdef DynWork* d = <DynWork*>work
    cdef double v[3]
    cdef int k
    d.b = cfg.bodies[0 if cfg.shared else i]
    d.f = cfg.force[0 if cfg.force_shared else i]
    d.b.nfev = 0
    d.b.nh = 0
    d.f.nfev = 0
    d.r = 0
    d.nab = 0
    for k in range(3):
        d.L[k] = 0.0
    d.hh[0] = 0.0
    d.hh[1] = 0.0
    for k in range(4):
        z[k] = y0[k]
    if cfg.kernel == KERNEL_RKN4 and cfg.qdot0 != NULL:
        for k in range(4):
            z[4 + k] = cfg.qdot0[4 * i + k]
    else:
        _set_w(cfg, z, &y0[4])
    if cfg.k == 13:
        for k in range(6):
            z[8 + k] = y0[7 + k]
    if cfg.restore:
        mat3_vec(d.b.I, &y0[4], v)
        quat_rotate(y0, v, d.L)                   # L = R(q0) I w0 (any |q0|)
    if cfg.kernel == KERNEL_RKMK:                      # z = [v, w], v = 0 from qb = q0/|q0|
        for k in range(4):
            d.qb[k] = y0[k]
        rkmk_base(d.qb, cfg.resume)
        for k in range(3):
            z[k] = 0.0
            z[3 + k] = y0[4 + k]
    return STATUS_OK


cdef int _step(const void* c, Py_ssize_t i, double t0, double t1, double* z,
               void* work) noexcept nogil:
    """One main step t0 -> t1 (``torque_substeps`` method steps) (IN/OUT: z)."""
    cdef const RunCfg* cfg = <const RunCfg*>c
    cdef DynWork* d = <DynWork*>work
    cdef BodyCtx* b = &d.b
    cdef double znew[14]
    cdef double beta[3]
    cdef double q[4]
    cdef double w[3]
    cdef double v[3]
    cdef double tau[3]
    cdef double hs, ts, s
    cdef Py_ssize_t slot
    cdef int sub, k, st = STATUS_OK
    cdef bint rkn = cfg.kernel == KERNEL_RKN4
    if b.hold:
        # Mandre 2008 sec. 7.3: one evaluation per main step, pushed into the history
        while d.r < cfg.nres and cfg.direction * (t0 - cfg.resets[d.r]) >= 0.0:
            b.nh = 0
            d.r += 1
        _get_qw(cfg, z, q, w)
        st = body_torque_eval(b, t0, q, w, tau)
        if st != STATUS_OK:
            return st
        for k in range(2, 0, -1):
            b.ht[k] = b.ht[k - 1]
            b.hv[3 * k] = b.hv[3 * k - 3]
            b.hv[3 * k + 1] = b.hv[3 * k - 2]
            b.hv[3 * k + 2] = b.hv[3 * k - 1]
        b.ht[0] = t0
        b.hv[0] = tau[0]
        b.hv[1] = tau[1]
        b.hv[2] = tau[2]
        if b.nh < b.npoints:
            b.nh += 1
    hs = (t1 - t0) / cfg.substeps
    for sub in range(cfg.substeps):
        ts = t0 + sub * hs
        if cfg.kernel == KERNEL_LIE_EULER:
            st = lie_euler_step(b, ts, hs, z, znew)
        elif cfg.kernel == KERNEL_CG:
            st = cg_step(&cfg.tab, b, ts, hs, z, znew)
        elif cfg.kernel == KERNEL_RK4:
            st = rk4_step(b, ts, hs, z, znew)
        elif cfg.kernel == KERNEL_RK3:
            st = body_rhs(b, ts, z, d.fh[0])
            if st == STATUS_OK:
                st = rk3_step(b, ts, hs, z, d.fh[0], znew)
        elif cfg.kernel == KERNEL_AB3:
            slot = d.nab % 3
            st = body_rhs(b, ts, z, d.fh[slot])
            if st == STATUS_OK:
                if d.nab < 2:
                    st = rk3_step(b, ts, hs, z, d.fh[slot], znew)
                else:
                    ab3_weights(hs, d.hh[0], d.hh[1], beta)
                    ab3_step(beta, z, d.fh[slot], d.fh[(d.nab + 2) % 3],
                             d.fh[(d.nab + 1) % 3], znew)
            d.hh[1] = d.hh[0]
            d.hh[0] = hs
            d.nab += 1
        else:
            st = rkn4_step(b, &d.f, ts, hs, z, znew)
        if st != STATUS_OK:
            return st
        for k in range(cfg.nz):
            z[k] = znew[k]
        if cfg.normalize:
            _get_qw(cfg, z, q, w)
            s = 1.0 / sqrt(quat_norm2(z))
            for k in range(4):
                z[k] = z[k] * s
            if rkn:
                _set_w(cfg, z, w)
        if cfg.restore:
            # Mandre 2008 sec. 7.2: w = I^-1 (conj(q) L q) = I^-1 R(q)^T L
            quat_conj(z, q)
            quat_rotate(q, d.L, v)
            mat3_vec(b.Iinv, v, w)
            _set_w(cfg, z, w)
    return STATUS_OK


cdef int _advance(const void* c, Py_ssize_t i, const double* t, Py_ssize_t j0,
                  Py_ssize_t j1, double* z, void* work, Py_ssize_t* j) noexcept nogil:
    return advance_steps(_step, (<const RunCfg*>c).nz, c, i, t, j0, j1, z, work, j)


cdef int _deriv(const void* c, Py_ssize_t i, double t, const double* z, double* dz,
                void* work) noexcept nogil:
    """[q, w]' of the non-unit quaternion rigid body (Rucker 2018 eqs. 22-23, Euler) (OUT)."""
    return body_rhs(&(<DynWork*>work).b, t, z, dz)


cdef int _deriv_rkmk(const void* c, Py_ssize_t i, double t, const double* z, double* dz,
                     void* work) noexcept nogil:
    """[v, w]' of a Runge-Kutta-Munthe-Kaas step from qb: v' = T(-v)^-1 w, w' from Euler's
    equations at q = qb exp(v/2) (rotode/rkmk.pxd) (OUT: dz[6])."""
    cdef DynWork* d = <DynWork*>work
    cdef double q[4]
    quat_times_exp(d.qb, z, 1.0, q)
    rkmk_rate(z, &z[3], FRAME_BODY, dz)
    return body_accel(&d.b, t, q, &z[3], &dz[3])


cdef void _accept_rkmk(const void* c, Py_ssize_t i, double* z, double* K0,
                       void* work) noexcept nogil:
    """After a step: qb <- qb exp(v/2) (retracted to |qb| = 1 to round-off), v <- 0; the FSAL
    stage's v' becomes w itself (T = 1 at v = 0), its w' is kept (q differs by ~1e-16 from
    the one it was evaluated at; recomputing it would cost a torque evaluation per step)
    (OUT: z, K0, work)."""
    cdef DynWork* d = <DynWork*>work
    cdef double q[4]
    cdef int k
    quat_times_exp(d.qb, z, 1.0, q)
    rkmk_retract(q)
    for k in range(4):
        d.qb[k] = q[k]
    for k in range(3):
        z[k] = 0.0
        K0[k] = z[3 + k]


cdef int _engine_body(const void* c, Py_ssize_t i, EngineRun* run) noexcept nogil:
    """Body i's whole run by the specialised engine (rotode/_engine.hpp, _models.hpp): the
    pair on [q, w]' = f, or (rkmk) on [v, w]' of each step's local coordinates, with the
    tableau and the torque known at compile time."""
    cdef const RunCfg* cfg = <const RunCfg*>c
    cdef const RigidParams* p = &cfg.params[0 if cfg.shared else i]
    cdef RigidParams own
    cdef int st
    if p.torque == TORQUE_CALL:         # the source's own count (a body's copy: no sharing)
        own = p[0]
        own.evals = <long long*>&cfg.nfev[i]
        cfg.nfev[i] = 0
        p = &own
    if cfg.kernel == KERNEL_RKMK:
        st = rigid_rkmk_body(cfg.pair, p, cfg.resume, run)
    else:
        st = rigid_erk_body(cfg.pair, p, run)
    if p.torque != TORQUE_CALL:
        cfg.nfev[i] = run.nfev
    return st


cdef void _lane_block(const void* c, Py_ssize_t i, BlockRun* run) noexcept nogil:
    """Bodies i .. i + run.nb - 1 by the lane kernel (rotode/_lanes.hpp): rk3, rk4, ab3 on
    [q, w], or the Crouch-Grossman methods and Lie-Euler on SU(2) x R^3, with the torque known
    at compile time, one body per SIMD lane."""
    cdef const RunCfg* cfg = <const RunCfg*>c
    cdef int lanes = rigid_block(cfg.isa, cfg.lane_kernel, &cfg.params[0 if cfg.shared else i],
                                 cfg.shared, cfg.normalize, &cfg.lane_tab, run)
    cdef Py_ssize_t j, steps
    for j in range(run.nb):
        steps = run.counts[3 * j]                             # (counts[0]: the steps taken)
        cfg.nfev[i + j] = cfg.stages * steps
        if cfg.lane_kernel == LANES_AB3:                       # Kutta's two, then one each
            cfg.nfev[i + j] = 3 * min(steps, 2) + max(steps - 2, 0)
        cfg.lanes_used[i + j] = lanes


cdef void _erk_lanes(const void* c, Py_ssize_t i, EngineRun* runs, Py_ssize_t nb) noexcept nogil:
    """Bodies i .. i + nb - 1 by the adaptive lane kernel (rotode/_lanes_erk.hpp): the pair on
    [q, w], or (rkmk) on [v, w] of each step, with the torque known at compile time, one body
    per SIMD lane, each lane refilled from the queue when its body ends; each body as
    `_engine_body` runs it, bit for bit."""
    cdef const RunCfg* cfg = <const RunCfg*>c
    cdef int lanes = rigid_erk_lanes(cfg.isa, cfg.pair, cfg.kernel == KERNEL_RKMK, cfg.resume,
                                     &cfg.params[0 if cfg.shared else i], cfg.shared, runs, nb)
    cdef Py_ssize_t j
    for j in range(nb):
        cfg.nfev[i + j] = runs[j].nfev
        cfg.lanes_used[i + j] = lanes


cdef void _pair_block(const void* c, Py_ssize_t i, BlockRun* run) noexcept nogil:
    """Bodies i .. i + run.nb - 1 of a fixed-step pair (dop853, dopri5, bs3 given `dt`, or the
    rkmk methods) by the lanes of rotode/_lanes_erk.hpp (`erk_fixed_block`): the driver's
    `_erk_fixed` on each, the torque known at compile time, one body per AVX2 lane, steps to the
    grid's end; nfev: each body's evaluations of f (the torque's, as `body_rhs` counts them)."""
    cdef const RunCfg* cfg = <const RunCfg*>c
    cdef int lanes = rigid_erk_fixed(cfg.isa, cfg.pair, cfg.kernel == KERNEL_RKMK, cfg.resume,
                                     True, &cfg.params[0 if cfg.shared else i], cfg.shared, run)
    cdef Py_ssize_t j
    for j in range(run.nb):
        cfg.nfev[i + j] = run.counts[3 * j + 2]
        run.counts[3 * j + 1] = 0
        run.counts[3 * j + 2] = 0
        cfg.lanes_used[i + j] = lanes


cdef int _tangent_body(const void* c, Py_ssize_t i, EngineRun* run) noexcept nogil:
    """Body i's whole run by the specialised engine with its y0 sensitivity in the same pass
    (rotode/_tangent.hpp: the state as dual numbers, the steps the plain run's, bit for bit)
    (OUT: cfg.tangent[i])."""
    cdef const RunCfg* cfg = <const RunCfg*>c
    cdef int st = tangent_body(cfg.isa, cfg.pair, cfg.kernel == KERNEL_RKMK, cfg.resume,
                               &cfg.params[0 if cfg.shared else i], run,
                               cfg.tangent + i * run.m * 36)
    cfg.nfev[i] = run.nfev
    return st


cdef int _store_row(const void* c, Py_ssize_t i, double t, const double* z, double* y,
                    double* w, void* work) noexcept nogil:
    cdef int k
    if (<const RunCfg*>c).kernel == KERNEL_RKMK:
        quat_times_exp((<DynWork*>work).qb, z, 1.0, y)
        for k in range(3):
            y[4 + k] = z[3 + k]
            w[k] = z[3 + k]
        return STATUS_OK
    _store(<const RunCfg*>c, z, y, w)
    return STATUS_OK


cdef void _end(const void* c, Py_ssize_t i, int status, const double* z,
               void* work) noexcept nogil:
    cdef const RunCfg* cfg = <const RunCfg*>c
    cdef DynWork* d = <DynWork*>work
    cdef int k
    if cfg.kernel == KERNEL_RKN4:
        for k in range(4):
            cfg.qdot[4 * i + k] = z[4 + k] if status == STATUS_OK else NAN
    cfg.nfev[i] = d.b.nfev
    cfg.nfev_force[i] = d.f.nfev


# ---- facade -------------------------------------------------------------------------------

#: Registry name -> PairId of the pairs the specialised engine runs (rotode/_tableaux.hpp).
ENGINE_PAIRS = _pair_ids()
#: The same for the Lie-group methods it runs (a pair on the rotation vector of each step,
#: rotode/_models.hpp `rigid_rkmk_body`): their name -> the PairId of their pair.
ENGINE_GROUP_PAIRS = _group_pair_ids()
#: False: every run takes the driver's loop (tests compare the two).
_USE_ENGINE = True
#: rotode._lanes' instruction sets -> their codes in rotode/_lanes.hpp (ISA_*).
_LANE_ISAS = {"scalar": ISA_SCALAR, "sse2": ISA_SSE2, "avx2": ISA_AVX2, "avx512": ISA_AVX512}


cdef int _torque_call(void* src, double t, const double* q, const double* w,
                      double* tau) noexcept nogil:
    """TORQUE_CALL's evaluation (rotode/_models.hpp `rigid_call`): the source's own."""
    return (<Torque>(<PyObject*>src)).evaluate(t, q, w, tau)


cdef bint _compiled_source(object tq):
    """Whether the torque `tq` evaluates in compiled code only: a built-in source (not a Python
    subclass), a `Compiled` function, or a `Sum` of such parts (no Python callable)."""
    if type(tq) is Sum:
        return all([_compiled_source(part) for part in (<Sum>tq).parts])
    return type(tq) in (Gravity, Constant, GravityGradient, Compiled)


cdef bint _engine_params(RigidBody body, RigidParams* p, bint call=False, bint timed=False):
    """The engine's parameters of `body` (OUT: p); False when its torque has no compiled
    model there (a callable, a Python subclass, a held torque history).  With `call` or `timed`,
    a one-body `GravityGradient` is TORQUE_GG (its time-dependent formula compiled in: the
    engine's models, the adaptive and the fixed-step lanes, the engine's tangent models of
    rotode/_tangent.hpp); with `call`, any other compiled source (`_compiled_source`:
    `Compiled`, a `Sum`) is a TORQUE_CALL, evaluated through its pointer (the one-body
    engine's models only; the tangent models and the fixed-step tangent passes of
    rotode/_tangent_fixed.hpp do not have it, nor do the passes have TORQUE_GG)."""
    cdef int i
    cdef object tq = body.torque
    cdef GravityGradient gg
    p.call = _torque_call
    p.src = NULL
    p.evals = NULL
    for i in range(9):
        p.I[i] = body._I[i]
        p.Iinv[i] = body._Iinv[i]
    p.mg = p.gg_k = p.gg_n = p.gg_u0 = 0.0
    for i in range(3):
        p.com[i] = p.tau[i] = p.gg_P[i] = p.gg_Q[i] = 0.0
    for i in range(9):
        p.gg_I[i] = 0.0
    p.gain = body.norm_gain
    p.gyroscopic = body.gyroscopic
    if tq is None:
        p.torque = TORQUE_NONE
    elif type(tq) is Gravity:
        p.torque = TORQUE_GRAVITY
        p.mg = (<Gravity>tq)._mg
        for i in range(3):
            p.com[i] = (<Gravity>tq)._com[i]
        if p.com[0] == 0.0 and p.com[1] == 0.0:      # a top: the centre of mass on body z
            p.torque = TORQUE_GRAVITY_AXIS
    elif type(tq) is Constant:
        p.torque = TORQUE_WORLD if (<Constant>tq)._world else TORQUE_BODY
        for i in range(3):
            p.tau[i] = (<Constant>tq)._tau[i]
    elif (call or timed) and type(tq) is GravityGradient and (<GravityGradient>tq)._rows is None:
        p.torque = TORQUE_GG                         # (time-dependent)
        gg = <GravityGradient>tq
        gg.orbit(&p.gg_k, &p.gg_n, &p.gg_u0, p.gg_P, p.gg_Q, p.gg_I)
    elif call and _compiled_source(tq):
        p.torque = TORQUE_CALL
        p.src = <void*>tq                            # (borrowed: the model holds it)
    else:
        return False
    return True


cdef void _fill_body(BodyCtx* b, RigidBody body, bint hold, int npoints, bint eval_start):
    cdef int i
    for i in range(9):
        b.I[i] = body._I[i]
        b.Iinv[i] = body._Iinv[i]
    if body.torque is None:
        b.torque = NULL
    else:
        b.torque = <PyObject*>body.torque
    b.norm_gain = body.norm_gain
    b.gyroscopic = body.gyroscopic
    b.hold = hold
    b.npoints = npoints
    b.eval_start = eval_start
    b.nh = 0
    b.nfev = 0
    for i in range(3):
        b.ht[i] = 0.0
    for i in range(9):
        b.hv[i] = 0.0


def _engine_eval(RigidBody model, double t, y):
    """f(t, y) of `model` as the specialised engine evaluates it (tests: the C++ equations
    against the Cython kernels of `RigidBody.__call__`); None when the engine has no model of
    its torque."""
    cdef RigidParams p
    cdef const double[::1] yv = np.ascontiguousarray(y, dtype=np.float64)
    out = np.empty(7)
    cdef double[::1] ov = out
    if yv.shape[0] != 7 or not _engine_params(model, &p, True):
        return None
    if rigid_eval(&p, t, &yv[0], &ov[0]) != 0:
        raise ValueError(f"the torque {model.torque!r} failed at t = {t}")
    return out


def run_single(model, t_span, y0, method, rtol, atol, tangent=False, given=None):
    """The common call of `rotode.integrate` in a few microseconds, or None.

    One body, ``y0`` a float64 array of shape (7,), a `RigidBody` whose torque the specialised
    engine compiles, a pair it runs (`ENGINE_PAIRS`, or an rkmk method of
    `ENGINE_GROUP_PAIRS`: the pair on the rotation vector of each step), ``t_span`` a pair of
    Python numbers, ``rtol``/``atol`` None or Python floats, no other argument: the engine is
    entered directly, with the checks `integrate` would make on these inputs
    (`_driver.thin_call`).
    Anything else, any input those checks would refuse, and a run that fails return None:
    `integrate` then takes its general path, which gives the same result or raises its error
    (so the messages live in one place).  Returns ``(t, y (m, 7), w (m, 3), stats)`` of the
    rows at t0 and tf (m = 2), or with `given` (`_plan.output_grid`'s grid and saved indices of
    a call with ``t_eval``) at the requested times; with `tangent` (``sensitivity=["y0"]``),
    ``(t, y, w, stats, S)``, S (m, 6, 6) the y0 sensitivity of the rows (`_tangent_body`).
    """
    cdef RigidParams p
    cdef RunCfg cfg
    cdef EngineRun run
    cdef ThinCall c
    cdef long nfev = 0
    cdef double[:, :, ::1] sv
    if type(model) is not RigidBody or type(method) is not str or not _USE_ENGINE:
        return None
    pair = ENGINE_PAIRS.get(method)
    cfg.kernel = KERNEL_ERK
    cfg.resume = False
    if pair is None:
        pair = ENGINE_GROUP_PAIRS.get(method)
        cfg.kernel = KERNEL_RKMK
    if (pair is None or (<RigidBody>model).n_bodies is not None
            or not thin_call(t_span, y0, rtol, atol, 7, &c, &run, given)
            or not _engine_params(<RigidBody>model, &p, not tangent, True)):
        return None
    cfg.pair = pair
    cfg.params = &p
    cfg.shared = True
    cfg.nfev = &nfev
    sens = None
    if tangent:
        sens = np.empty((run.m, 6, 6))
        sv = sens
        cfg.tangent = &sv[0, 0, 0]
        cfg.isa = _LANE_ISAS.get(_lanes.get(), ISA_SCALAR)
    rows = thin_rows(_tangent_body if tangent else _engine_body, &cfg, 7, &c, &run)
    if rows is None:
        return None
    stats = {"n_steps": run.accepted, "n_main_steps": run.accepted, "nfev": run.nfev,
             "status": 0, "message": "success", "n_rejected": run.rejected,
             "nfev_pair": run.nfev}
    return rows + (stats, sens) if tangent else rows + (stats,)


def _taking(option):
    """The names of the methods that take `option` (the registry's), quoted, for a message."""
    return " and ".join(map(repr, _methods.taking(option, "rigid body")))


#: The fixed-step kernels whose sensitivity passes are compiled (rotode/_tangent_fixed.hpp):
#: their codes -> the lane kernels' (the steps the passes take on duals).
_FIXED_TANGENT = {KERNEL_RK3: LANES_RK3, KERNEL_RK4: LANES_RK4, KERNEL_AB3: LANES_AB3}


cdef struct FixedPass:
    int isa
    int kernel
    bint normalize
    const RigidParams* p
    const TangentSeeds* s
    double* sens


cdef int _fixed_pass_body(const void* c, Py_ssize_t i, EngineRun* run) noexcept nogil:
    """One sensitivity pass of a fixed-grid run (`fixed_tangent`) (OUT: its sens)."""
    cdef const FixedPass* f = <const FixedPass*>c
    return fixed_tangent_pass(f.isa, f.kernel, f.p, f.s, f.normalize, run, f.sens)


cdef void _fixed_seeds(RigidBody body, const RigidParams* p, const double* y0, list cols,
                       int c0, int c1, bint full, TangentSeeds* s) except *:
    """The directions of columns c0..c1-1 of `cols` as seeds (rotode/_tangent.pyx `_seed`'s and
    `_seed_tensor`'s directions, and the torque parameters' of `_unit_torques`) (OUT: s)."""
    cdef int c, d, j, k
    cdef double dq[4]
    memset(s, 0, sizeof(TangentSeeds))
    s.ncols = c1 - c0
    s.torque = p.torque
    s.diag = not full
    for k in range(9):
        if k % 4 and (p.I[k] != 0.0 or p.Iinv[k] != 0.0):
            s.diag = False
    Iinv = np.asarray(<double[:9]>body._Iinv).reshape(3, 3)
    for c in range(c0, c1):
        kind, j = cols[c]
        d = c - c0
        if kind == "y0" and j >= 3:
            s.y0[1 + j][d] = 1.0
        elif kind == "y0":          # dq = q0 (0, e_j / 2)
            dq[0] = -0.5 * y0[1 + j]
            dq[1 + j] = 0.5 * y0[0]
            dq[1 + (j + 1) % 3] = 0.5 * y0[1 + (j + 2) % 3]
            dq[1 + (j + 2) % 3] = -0.5 * y0[1 + (j + 1) % 3]
            for k in range(4):
                s.y0[k][d] = dq[k]
        elif kind == "inertia" and full:
            a, b = _tangent.TENSOR[j]
            E = np.zeros((3, 3))
            E[a, b] = E[b, a] = 1.0
            dinv = -(Iinv @ E @ Iinv)
            for k in range(9):
                s.I[k][d] = E.flat[k]
                s.Iinv[k][d] = dinv.flat[k]
        elif kind == "inertia":
            s.I[4 * j][d] = 1.0
            s.Iinv[4 * j][d] = -(p.Iinv[4 * j] * p.Iinv[4 * j])
        elif kind == "torque":
            s.tau[j][d] = 1.0
        elif kind == "mass":
            s.mg[d] = body.torque.g
        elif kind == "g":
            s.mg[d] = body.torque.mass
        else:                       # "com" (the general gravity torque: x and y move too)
            s.com[j][d] = 1.0
            s.torque = TORQUE_GRAVITY


def fixed_tangent(method, RigidBody body, y0, t, save, list cols, bint normalize=False,
                  bint full=False, out=None):
    """The derivative of one body's fixed-grid run by compiled dual-number passes, or None.

    rotode/_tangent.pyx `rigid_body`'s result (its directions, passes and tangent
    coordinates), from the steps of the run itself on duals (rotode/_tangent_fixed.hpp) for a
    method whose rigid-body kernel is rk3, rk4 or ab3 and a body whose torque the specialised
    engine compiles; None for anything else (the caller replays).

    Parameters
    ----------
    method : str
        A registry method.
    body : rotode.RigidBody
        One body (no per-body parameters).
    y0 : ndarray, shape (7,)
        Its initial state [q, w_body].
    t : ndarray, shape (n + 1,)
        The grid.
    save : ndarray of int, shape (m,)
        The output slots: indices into `t`.
    cols : list of (str, int)
        The directions, as `rotode._tangent.rigid_body` takes them.
    normalize : bool, optional
        The run normalises q after each step.
    full : bool, optional
        The ``inertia`` directions are the six tensor components.
    out : ndarray, shape (m, 6, len(cols)), optional
        Where to write the result (C-contiguous float64).

    Returns
    -------
    ndarray, shape (m, 6, len(cols)), or None
        `out` when given.
    """
    cdef RigidParams p
    cdef TangentSeeds s
    cdef EngineRun run
    cdef FixedPass fp
    cdef double[:, :, ::1] ov
    cdef int c0 = 0, c1, ncols = len(cols), st
    code = KERNELS.get(_methods.get(method, "rigid body").kernel("rigid body"))
    kernel = _FIXED_TANGENT.get(code)
    if (kernel is None or not _USE_ENGINE or body.n_bodies is not None
            or not _engine_params(body, &p)):
        return None
    cdef const double[::1] tv = np.ascontiguousarray(t, dtype=np.float64)
    cdef const Py_ssize_t[::1] sv = np.ascontiguousarray(save, dtype=np.intp)
    cdef const double[::1] yv = np.ascontiguousarray(y0, dtype=np.float64)
    if out is None:
        out = np.empty((sv.shape[0], 6, ncols))
    ov = out
    if sv.shape[0] == 0 or ncols == 0:
        return out
    run.t = &tv[0]
    run.n = tv.shape[0] - 1
    run.save = &sv[0]
    run.m = sv.shape[0]
    run.y0 = &yv[0]
    fp.isa = _LANE_ISAS.get(_lanes.get(), ISA_SCALAR)
    fp.kernel = kernel
    fp.normalize = normalize
    fp.p = &p
    fp.s = &s
    # passes of <= DUAL_N directions, any parameters together: a direction's d part depends on
    # its own seeds alone (every dual operation acts lane by lane), so a pass's grouping does not
    # change its bits; but "com" (the general gravity torque, `_fixed_seeds`) has its own passes
    while c0 < ncols:
        c1 = c0 + 1
        while (c1 < ncols and c1 - c0 < _tangent.DIRECTIONS
               and (cols[c1][0] == "com") == (cols[c0][0] == "com")):
            c1 += 1
        _fixed_seeds(body, &p, &yv[0], cols, c0, c1, full, &s)
        s.ld = ncols
        fp.sens = &ov[0, 0, c0]
        st = engine_single(_fixed_pass_body, &fp, &run)
        if st != ENGINE_OK:
            body.raise_status(st)
        c0 = c1
    return out


def run(method, model, y0, t, save, options=None, workers=1):
    """Advance N rigid bodies over the grid ``t``, keeping the states at ``t[save]``.

    Parameters
    ----------
    method : str
        One of `METHODS`.
    model : rotode.RigidBody or list of RigidBody
        One body shared by all rows of ``y0``, or one per row (own inertia and torque).
    y0 : array_like, shape (N, 7) or (N, 13)
        Initial states [q, w_body] (+ [x, v] with ``force``); q nonzero, any length.
    t : array_like, shape (n + 1,)
        Strictly monotonic grid; the steps are t[i] -> t[i + 1] (any spacing).
    save : array_like of int, shape (m,)
        Strictly increasing indices into ``t`` of the states to return.
    options : dict, optional
        Method options (see the module docstring); unknown keys raise TypeError.  (Error
        control, events and step records are pieces of a run's plan, not options:
        `run_plan`.)
    workers : int, optional
        Threads over bodies; the results do not depend on it.

    Returns
    -------
    y_out : ndarray, shape (N, m, k)
    w_out : ndarray, shape (N, m, 3)
        Body angular velocity at ``t[save]``.
    stats : dict
        ``n_steps`` (method steps per body, sub-steps included), ``n_main_steps``,
        ``nfev`` (torque evaluations per body), ``nfev_force`` (rkn4 with force), ``status``
        (0 ok, 2 the state became non-finite: those states are NaN), ``message``, and for
        rkn4 ``qdot`` (N, 4), the final q' of each body (see the option ``qdot0``); with
        error control ``n_rejected`` and ``nfev_pair`` (right-hand-side evaluations of the
        pair, counted as SciPy counts them); rk3, rk4, ab3 and the Lie-Euler and Crouch-Grossman
        kernels with compiled torques (none, `Gravity`, `Constant`) run in the lane kernels
        (rotode/_lanes.hpp) and report ``simd``, the instruction set of ``rotode._lanes`` their
        blocks ran on ("scalar": body by body).

    Notes
    -----
    Equations, tableaux and references: docs/methods-rigid-body.md.  Errors raised by torque or
    force callables are re-raised unchanged.
    """
    out = run_plan(Plan(method, model, y0, t, save, options, workers))
    return out.y, out.w, out.stats


cdef void _attach_engine(Stepper* sp, RunCfg* cfg, str method, RigidParams* params,
                         object tangent) except *:
    """The specialised engine as `sp.body` on the bodies' compiled `params` (OUT: sp, cfg);
    with `tangent` (Plan.tangent, an (N, m, 6, 6) float64 array) the engine that carries the
    y0 sensitivity in the same pass, its dual arithmetic on the instruction set of
    `rotode._lanes.get()` (the same bits on every set)."""
    cdef double[:, :, :, ::1] tv
    cfg.pair = ENGINE_PAIRS[method] if method in ENGINE_PAIRS else ENGINE_GROUP_PAIRS[method]
    cfg.params = params
    sp.body = _engine_body
    if tangent is not None:
        tv = tangent
        cfg.tangent = &tv[0, 0, 0, 0] if tv.shape[0] * tv.shape[1] else NULL
        cfg.isa = _LANE_ISAS.get(_lanes.get(), ISA_SCALAR)
        sp.body = _tangent_body


def tangent_ready(plan):
    """Whether `run_plan` carries the 6x6 y0 sensitivity of `plan` in its own pass
    (`Plan.tangent`): an error-controlled run of a pair the specialised engine runs (on the
    state, or rkmk on the group), on bodies whose torque it compiles, without events, step
    records or step proposals, the state [q, w] (no options).

    Parameters
    ----------
    plan : rotode._runplan.Plan
        A rigid-body run.

    Returns
    -------
    bool
    """
    cdef RigidParams p
    if not (_USE_ENGINE and plan.control is not None and plan.steps is None
            and not plan.h_next and plan.events is None
            and (plan.method in ENGINE_PAIRS or plan.method in ENGINE_GROUP_PAIRS)
            and not plan.options and np.shape(plan.y0)[1] == 7):
        return False
    models = rigid_body_list(plan.model, np.shape(plan.y0)[0])
    return all([_engine_params(mdl, &p, False, True) for mdl in models])


def run_fixed_single(model, t_span, y0, method, dt, save_every, grid=None):
    """The common fixed-step call of `rotode.integrate` on a rigid body in a few microseconds,
    or None.

    One body, ``y0`` a float64 array of shape (7,) or a list or tuple of 7 numbers, a
    `RigidBody` whose torque the lane kernels compile, a fixed-step method of theirs (rk3,
    rk4, ab3, lie_euler, the Crouch-Grossman methods) with no option, ``t_span`` a pair of
    Python numbers, ``dt`` a Python number, ``save_every`` None or a Python int: the lane
    kernel is entered directly on `integrate`'s grid (`_driver.thin_grid`), as `run_plan`
    runs one body there; the pairs at fixed steps (dop853, dopri5, bs3, rkmk8, rkmk5, rkmk3) by
    the pairs' fixed-grid lanes (`_pair_block`); rkn4 (torque-free or a built-in `Constant`,
    `Gravity` or `GravityGradient` torque) by the driver's fixed-grid loop
    (`_driver.thin_stepper_rows`).
    Anything else, any input `integrate` would refuse, the lanes off and a failed run give
    None, and `integrate`'s general path.  Returns ``(t, y (m, 7), w (m, 3), stats)``.
    ``grid``: None, or `_plan.time_grid`'s grid and saved indices of a call with ``t_eval``
    (taken as they are).
    """
    cdef RunCfg cfg
    cdef RigidParams p
    cdef BodyCtx body
    cdef ForceCtx force
    cdef Stepper sp
    cdef BlockRun run
    cdef ThinCall c
    cdef long nfev = 0, nfevf = 0
    cdef int lanes_used = 1
    cdef double qdot[4]
    if (type(model) is not RigidBody or type(method) is not str
            or (<RigidBody>model).n_bodies is not None):
        return None
    spec = _FIXED_SPECS.get(method)
    rkn4 = spec is None and method == _RKN4_NAME and (<RigidBody>model).gyroscopic and (
        (<RigidBody>model).torque is None or type((<RigidBody>model).torque) in _THIN_TORQUES)
    pair = _FIXED_PAIRS.get(method, -1) if spec is None else -1
    if spec is None and not rkn4 and pair < 0:
        return None
    grid = thin_grid(t_span, dt, save_every, y0, 7, True, &c, &run, grid)
    if grid is None or not (rkn4 or _engine_params(<RigidBody>model, &p, False, True)):
        return None
    if rkn4:
        spec = _RKN4_SPEC
    elif pair >= 0:
        spec = _methods.get(method, "rigid body")
    _fill_cfg(&cfg, spec, spec.code("rigid body"), _PLAIN_OPTIONS,
              1.0 if run.t[1] > run.t[0] else -1.0, False)
    _cfg_links(&cfg, NULL, 0, True, True, NULL, qdot, &nfev, &nfevf)   # (as run_plan's)
    cdef int[1] no_lanes = [1]
    cfg.lanes_used = no_lanes
    _fill_body(&body, <RigidBody>model, False, 0, False)
    cfg.bodies = &body
    _no_force(&force)
    cfg.force = &force
    if rkn4:        # (the driver's fixed-grid loop over `_advance`, as run_plan's stepper)
        sp = make_stepper(&cfg, _begin, _advance, _store_row, _end, 7, 7, cfg.nz, True)
        sp.y0_row = True
        rows = thin_stepper_rows(&sp, grid, &run)
        if rows is None:
            return None
        return rows + ({"n_steps": run.n, "n_main_steps": run.n, "nfev": nfev, "status": 0,
                        "message": "success", "qdot": np.array([qdot[0], qdot[1], qdot[2],
                                                                qdot[3]])},)
    sp.block = NULL
    if pair >= 0:      # (the pairs' fixed-grid lanes, as run_plan attaches them)
        cfg.pair = pair
        isa = _attach_pair_lanes(&sp, &cfg, &p, 1, &lanes_used)
    else:
        isa = _attach_lanes(&sp, &cfg, &p, &lanes_used)
    if sp.block == NULL:            # (the lanes off, or not taking the body)
        return None
    rows = thin_block_rows(sp.block, &cfg, 7, grid, &run)
    if rows is None:
        return None
    stats = {"n_steps": run.n, "n_main_steps": run.n, "nfev": nfev, "status": 0,
             "message": "success", "simd": isa if lanes_used > 1 else "scalar"}
    return rows + (stats,)


def run_plan(plan):
    """`run` of a `rotode._runplan.Plan`, the facades' entry: with error control
    (``plan.control``, the error-controlled methods), events, a step record (one body), the
    proposals ``h_next`` and a continued run (``resume``, rkmk: ``y0`` is the row stored at the
    end of an accepted step, whose retraction is the orientation the next step starts from).
    Returns a `rotode._runplan.RunOutput`.
    """
    method = plan.method
    spec = _methods.get(method, "rigid body")
    if spec.runner("rigid body") != "dynamic":
        raise ValueError(f"method {method!r} is stepped by rotode.{spec.runner('rigid body')}, "
                         "not rotode.dynamic")
    cdef int code = spec.code("rigid body")
    control = plan.control
    events = plan.events
    o = _run_options(method, spec, plan.options, control is not None)
    k = o.k
    workers = as_workers(plan.workers)

    y0, N, n_fctx, qdot0 = _rows(o, plan.y0)
    t, save = as_step_grid(plan.t, plan.save)
    models = rigid_body_list(plan.model, N)
    for i, mdl in enumerate(models):
        if o.restore and mdl.torque is not None:
            raise ValueError("option `restore_momentum` (Mandre 2008 sec. 7.2) needs torque-free "
                             f"bodies; model {i} has torque {mdl.torque!r}")
        if code == KERNEL_RKN4 and not mdl.gyroscopic:
            raise ValueError(f"{method!r} integrates the second-order equation with the "
                             "gyroscopic term; `gyroscopic=False` is not supported")
    direction = 1.0 if t.shape[0] < 2 or t[1] > t[0] else -1.0
    resets_arr = np.ascontiguousarray(np.sort(o.resets * direction) * direction)

    cdef RunCfg cfg
    cdef const double[::1] resv = resets_arr
    _fill_cfg(&cfg, spec, code, o, direction, plan.resume)
    cdef Py_ssize_t nmod = len(models), b_
    cdef ForceCtx* fctx = NULL

    n = t.shape[0] - 1
    nfev = np.zeros(N, dtype=np.int64)
    nfevf = np.zeros(N, dtype=np.int64)
    qdot = np.empty((N, 4))
    cdef double[:, ::1] qdv = qdot
    cdef const double[:, ::1] qd0v = qdot0 if qdot0 is not None else np.empty((1, 4))
    cdef long[::1] nv = nfev
    cdef long[::1] nfv = nfevf
    _cfg_links(&cfg, &resv[0] if resets_arr.shape[0] else NULL, resets_arr.shape[0],
               nmod == 1, n_fctx == 1, &qd0v[0, 0] if qdot0 is not None else NULL,
               &qdv[0, 0] if N else NULL, &nv[0] if N else NULL, &nfv[0] if N else NULL)
    cdef Stepper sp = make_stepper(&cfg, _begin, _advance, _store_row, _end, k, k, cfg.nz, True)
    sp.y0_row = True
    specialise = False
    if code == KERNEL_ERK:
        engine = Engine(spec, control, 7)
        (<Engine>engine).attach(&sp, _deriv)
        sp.row_is_state = k == 7 and cfg.kernel != KERNEL_RKN4      # (`_store`: z[:7] as it is)
        specialise = (_USE_ENGINE and control is not None and plan.steps is None
                      and not plan.h_next and method in ENGINE_PAIRS)
    elif code == KERNEL_RKMK:
        # v's error scaled as an error |dv|/2 of a unit q (rotode/kinematic.pyx, erk_error_norm)
        if control is not None:
            control = control._replace(atol=algebra_atol(control.atol))
        engine = Engine(spec, control, 6, ref=[1.0, 1.0, 1.0, 0.0, 0.0, 0.0])
        (<Engine>engine).attach(&sp, _deriv_rkmk)
        sp.accept = _accept_rkmk
        sp.max_angle = rkmk_max_step_angle()
        specialise = (_USE_ENGINE and control is not None and plan.steps is None
                      and not plan.h_next and method in ENGINE_GROUP_PAIRS and k == 7)
    adaptive = control is not None
    cdef BodyCtx* ctx = <BodyCtx*>malloc(nmod * sizeof(BodyCtx))
    cdef RigidParams* params = NULL
    if ctx == NULL:
        raise MemoryError()
    lanes_used = np.ones(N, dtype=np.intc)
    cdef int[::1] luv = lanes_used
    isa = None
    try:
        lanes = code in _LANE_CODES and (
            not adaptive and k == 7 and not (o.hold or o.restore))
        # a pair given dt (a fixed grid), the torque compiled: the pairs' fixed-grid lanes
        pair_lanes = (not adaptive and k == 7 and not (o.hold or o.restore) and _USE_ENGINE
                      and plan.steps is None and not plan.h_next
                      and _pair_id(code, method) >= 0)
        if specialise or lanes or pair_lanes:
            _compiled_params(models, &params, specialise and plan.tangent is None,
                             lanes or pair_lanes or specialise)
        if plan.tangent is not None and (params == NULL or not specialise):
            raise ValueError("Plan.tangent needs a run that `tangent_ready` accepts")
        if params != NULL and specialise:
            _attach_engine(&sp, &cfg, method, params, plan.tangent)
            if plan.tangent is None and not _any_call(params, nmod):
                isa = attach_erk_lanes(&sp, &cfg.isa, &cfg.lanes_used, lanes_used, _erk_lanes)
        elif params != NULL and lanes:
            isa = _attach_lanes(&sp, &cfg, params, &luv[0])
        elif params != NULL and pair_lanes:
            cfg.pair = _pair_id(code, method)
            isa = _attach_pair_lanes(&sp, &cfg, params, nmod, &luv[0])
        fctx = _force_contexts(n_fctx, o.fsrc, o.forces, o.masses)
        cfg.force = fctx
        for b_ in range(nmod):
            _fill_body(&ctx[b_], models[b_], o.hold, o.npoints, o.start == "evaluate")
        cfg.bodies = ctx
        y_out, w_out, status, failed, counts, fail_t, rec = drive(
            &sp, t, save, y0, workers, plan.steps, plan.h_next, events)
    finally:
        free(ctx)
        free(fctx)
        free(params)
    sources = ([mdl.torque for mdl in models] + [o.fsrc]
               + (list(events.objects) if events is not None else []))
    status_code, message = outcome(status, failed, t, sources,
                                   fail_t=fail_t if adaptive else None,
                                   last=None if adaptive else counts[:, 0])
    stats = _stats(status_code, message, n, o.substeps, nfev, counts if adaptive else None)
    if o.fsrc is not None:
        stats["nfev_force"] = largest(nfevf)
    if code == KERNEL_RKN4:
        stats["qdot"] = qdot
    if isa is not None and not adaptive:
        stats["simd"] = isa if N and lanes_used.max() > 1 else "scalar"
    elif isa is not None and N and lanes_used.max() > 1:     # (the adaptive lanes ran: AVX2's)
        stats["simd"] = "avx2"
    return RunOutput(y_out, w_out, stats, rec.events, rec.steps, rec.h_next)


cdef int _compiled_params(list models, RigidParams** out, bint call, bint timed) except -1:
    """Every body's parameters for the compiled models (rotode/_models.hpp), malloc'ed (the
    caller frees *out): 1, or 0 (out NULL) when a torque has none there (a callable, a Python
    subclass; with `call` or `timed` a GravityGradient is TORQUE_GG, with `call` the other
    compiled sources are TORQUE_CALL: `_engine_params`)."""
    cdef Py_ssize_t b_, nmod = len(models)
    cdef RigidParams* params = <RigidParams*>malloc(nmod * sizeof(RigidParams))
    out[0] = NULL
    if params == NULL:
        raise MemoryError()
    for b_ in range(nmod):
        if not _engine_params(models[b_], &params[b_], call, timed):
            free(params)
            return 0
    out[0] = params
    return 1


cdef object _attach_lanes(Stepper* sp, RunCfg* cfg, RigidParams* params, int* lanes_used):
    """Run the blocks of the stepper by the lane kernels (rotode/_lanes.hpp) on the instruction
    set of `rotode._lanes.get()` (OUT: sp, cfg; lanes_used, per body, written by the run);
    returns that set's name, or None for "off" (the driver's step, body by body)."""
    cdef int i_
    name = _lanes.get()
    if name == "off":
        return None
    cfg.isa = _LANE_ISAS[name]
    cfg.lane_kernel = (LANES_RK4 if cfg.kernel == KERNEL_RK4 else
                       LANES_AB3 if cfg.kernel == KERNEL_AB3 else LANES_RK3)
    cfg.stages = 4 if cfg.kernel == KERNEL_RK4 else 3
    if cfg.kernel == KERNEL_LIE_EULER or cfg.kernel == KERNEL_CG:
        # Lie-Euler: cg1's tableau (a = 0, b = 1: the same operations, h * 1.0 = h)
        cfg.lane_kernel = LANES_CG
        cfg.lane_tab.s = cfg.tab.s if cfg.kernel == KERNEL_CG else 1
        for i_ in range(9):
            cfg.lane_tab.a[i_] = cfg.tab.a[i_] if cfg.kernel == KERNEL_CG else 0.0
        for i_ in range(3):
            cfg.lane_tab.b[i_] = cfg.tab.b[i_] if cfg.kernel == KERNEL_CG else float(i_ == 0)
            cfg.lane_tab.c[i_] = cfg.tab.c[i_] if cfg.kernel == KERNEL_CG else 0.0
        cfg.stages = cfg.lane_tab.s
    cfg.params = params
    cfg.lanes_used = lanes_used
    sp.block = _lane_block
    sp.lanes = lanes_width(cfg.isa)
    return name


cdef bint _any_call(const RigidParams* params, Py_ssize_t n):
    """Whether a body's torque is a TORQUE_CALL (its batch runs body by body: `_engine_body`
    counts each source's evaluations, which the lane kernels do not)."""
    cdef Py_ssize_t i
    for i in range(n):
        if params[i].torque == TORQUE_CALL:
            return True
    return False


cdef int _pair_id(int code, object method):
    """The engine's pair id (`ENGINE_PAIRS`, `ENGINE_GROUP_PAIRS`) of `method` stepped by the
    kernel `code`: a pair on the state, or rkmk's pair on [v, w]; -1 for any other method."""
    if code == KERNEL_ERK:
        return ENGINE_PAIRS.get(method, -1)
    if code == KERNEL_RKMK:
        return ENGINE_GROUP_PAIRS.get(method, -1)
    return -1


cdef object _attach_pair_lanes(Stepper* sp, RunCfg* cfg, RigidParams* params, Py_ssize_t nmod,
                               int* lanes_used):
    """Run the blocks of a fixed-step pair (cfg.pair) by the pairs' fixed-grid lanes
    (rotode/_lanes_erk.hpp) on the instruction set of `rotode._lanes.get()` where they take the
    bodies (OUT: sp, cfg; lanes_used, per body, written by the run); returns "avx2" (their
    kernel's), that set's name where they do not (the driver's `_erk_fixed` body by body: the
    same bits), or None for "off"."""
    name = _lanes.get()
    if name == "off":
        return None
    cfg.isa = _LANE_ISAS[name]
    cdef int width = rigid_erk_fixed_width(cfg.isa, cfg.pair, params, nmod == 1, nmod)
    if width < 2:
        return name
    cfg.params = params
    cfg.lanes_used = lanes_used
    sp.block = _pair_block
    sp.lanes = width
    return "avx2"


def _run_options(method, spec, options, adaptive):
    """The options of `run` for `method` (`spec`, its registry entry), checked for a run under
    error control (`adaptive`) or not: a namespace of normalize, restore, the torque's hold
    (hold, substeps, npoints, resets, start), the force (fsrc, forces, n_force, masses,
    n_mass), qdot0 and k, the columns of y0 (7, or 13 with a force)."""
    takes = spec.options("rigid body")
    opts = dict(options or {})
    normalize = as_bool_option(opts.pop("normalize", False), "normalize")
    restore = as_bool_option(opts.pop("restore_momentum", False), "restore_momentum")
    substeps = opts.pop("torque_substeps", None)
    npoints = opts.pop("torque_points", None)
    resets = opts.pop("torque_resets", None)
    start = opts.pop("torque_start", None)
    force = opts.pop("force", None)
    mass = opts.pop("mass", None)
    qdot0 = opts.pop("qdot0", None)
    if opts:
        raise TypeError(f"unknown option(s) for method {method!r}: {sorted(opts)}")
    if adaptive and not spec.adaptive:
        raise ValueError(f"method {method!r} has no error estimate (no `rtol`/`atol`)")
    if spec.kernel_info("rigid body").pair and (normalize or restore or substeps is not None):
        raise TypeError(f"options `normalize`, `restore_momentum` and `torque_substeps` are not "
                        f"accepted by {method!r} (the driver steps its embedded pair on "
                        "[q, w])")
    if qdot0 is not None and "qdot0" not in takes:
        raise TypeError(f"option `qdot0` is only accepted by "
                        f"{_taking('qdot0')}, not {method!r}")
    if normalize and "normalize" not in takes:
        raise TypeError(f"option `normalize` is not accepted by the Lie-group method "
                        f"{method!r} (it keeps |q| = 1 by construction)")
    hold = substeps is not None
    if hold:
        substeps = as_int_option(substeps, "torque_substeps", 1, 2 ** 31 - 1)
        npoints = as_int_option(3 if npoints is None else npoints, "torque_points", 1, 3)
        start = as_choice("hold" if start is None else start, "torque_start",
                          ("hold", "evaluate"), "option `{}`")
    else:
        substeps = 1
        if npoints is not None or resets is not None or start is not None:
            raise TypeError("options `torque_points`, `torque_resets` and `torque_start` need "
                            "`torque_substeps`")
        npoints = 0
    if resets is None:
        resets_arr = np.empty(0)
    else:
        resets_arr = as_float_array(resets, "torque_resets").reshape(-1)
    fsrc, forces, n_force, masses, n_mass = _force_option(method, takes, force, mass)
    return SimpleNamespace(
        normalize=normalize, restore=restore, hold=hold, substeps=substeps, npoints=npoints,
        resets=resets_arr, start=start, fsrc=fsrc, forces=forces, n_force=n_force,
        masses=masses, n_mass=n_mass, qdot0=qdot0, k=13 if fsrc is not None else 7)


def _rows(o, y0):
    """y0 and the per-body rows of the options `o` checked: (y0 (N, k), N, the number of
    force contexts (1: one shared), qdot0 (N, 4) or None)."""
    k = o.k
    y0 = as_float_array(y0, "y0")
    if y0.ndim != 2 or y0.shape[1] != k:
        extra = " (with `force`: [q, w, x, v])" if k == 13 else ""
        raise ValueError(f"`y0` must have shape (N, {k}){extra}, got {y0.shape}")
    N = y0.shape[0]
    n_fctx = 1
    if o.fsrc is not None:
        for name, n_rows in (("force", o.n_force), ("mass", o.n_mass)):
            if n_rows is not None and n_rows != N:
                raise ValueError(f"option `{name}` holds {n_rows} per-body rows but `y0` {N} "
                                 "bodies")
        if o.n_force is not None or o.n_mass is not None:
            n_fctx = N
    qdot0 = o.qdot0
    if qdot0 is not None:
        qdot0 = as_float_array(qdot0, "qdot0", (4,))
        if qdot0.shape not in ((4,), (N, 4)):
            raise ValueError(f"option `qdot0` must have shape (4,) or (N, 4) = ({N}, 4), got "
                             f"{qdot0.shape}")
        qdot0 = np.ascontiguousarray(np.broadcast_to(qdot0, (N, 4)))
    if first_small_norm(y0, TINY_NORM2) >= 0:
        raise ValueError("`y0` quaternion parts must be nonzero")
    return y0, N, n_fctx, qdot0


def _force_option(method, takes, force, mass):
    """The options `force` and `mass`, checked: (the ForceSource or None, the force rows and
    their per-body count (None: one shared), the masses and their per-body count)."""
    if force is None and mass is None:
        return None, None, None, None, None
    if "force" not in takes:
        raise TypeError(f"options `force` and `mass` are only accepted by "
                        f"{_taking('force')}, not {method!r}")
    if force is None:
        raise ValueError("option `mass` needs `force`")
    if mass is None:
        raise ValueError("option `force` needs `mass` (the body's mass, > 0)")
    masses, n_mass = as_rows(mass, "mass")
    if not np.all(masses > 0):
        raise ValueError("option `mass` must be > 0 (for every body)")
    if callable(force):
        return ForceSource(force), None, None, masses, n_mass
    forces, n_force = as_rows(force, "force", (3,))
    return ForceSource(forces if n_force is None else forces[0]), forces, n_force, masses, n_mass


cdef int _fill_cfg(RunCfg* cfg, object spec, int code, object o, double direction,
                   bint resume) except -1:
    """The run's configuration from its method, options and whether it continues an earlier
    run (the rest: `run_plan`) (OUT: cfg)."""
    cdef int i_, j_
    cfg.kernel = code
    cfg.substeps = o.substeps
    cfg.normalize = o.normalize
    cfg.restore = o.restore
    cfg.resume = code == KERNEL_RKMK and resume
    cfg.direction = direction
    cfg.k = o.k
    cfg.nz = 14 if o.k == 13 else (8 if code == KERNEL_RKN4 else (
        6 if code == KERNEL_RKMK else 7))
    cfg.tab.s = 0
    if code == KERNEL_CG:
        a, b, c = spec.tableau.doubles
        cfg.tab.s = len(b)
        for i_ in range(9):
            cfg.tab.a[i_] = 0.0
        for i_ in range(cfg.tab.s):
            cfg.tab.b[i_] = b[i_]
            cfg.tab.c[i_] = c[i_]
            for j_ in range(i_):
                cfg.tab.a[3 * i_ + j_] = a[i_][j_]
    return 0


cdef void _cfg_links(RunCfg* cfg, const double* resets, Py_ssize_t nres, bint shared,
                     bint force_shared, const double* qdot0, double* qdot, long* nfev,
                     long* nfev_force) noexcept:
    """The run's links and counters beside `_fill_cfg`'s choices, every other RunCfg field a
    hook reads, set in this one place for `run_plan` and `run_fixed_single`: the torque's reset
    times, whether the bodies share one model and one force, rkn4's q' at t0 (NULL: from w)
    and at the end, the evaluation counters; no force yet (`_force_contexts`, `_no_force`), no
    engine pair, parameters, tangent or lanes (the `_attach_*` functions set them) (OUT:
    cfg)."""
    cfg.nres = nres
    cfg.resets = resets if nres else NULL
    cfg.shared = shared
    cfg.force_shared = force_shared
    cfg.force = NULL
    cfg.qdot0 = qdot0
    cfg.qdot = qdot
    cfg.nfev = nfev
    cfg.nfev_force = nfev_force
    cfg.pair = -1
    cfg.params = NULL
    cfg.tangent = NULL
    cfg.isa = ISA_SCALAR
    cfg.lanes_used = NULL


cdef void _no_force(ForceCtx* f) noexcept:
    """A force context without a force (OUT: f)."""
    f.source = NULL
    f.constant = False
    f.F[0] = 0.0
    f.F[1] = 0.0
    f.F[2] = 0.0
    f.inv_mass = 0.0
    f.nfev = 0


cdef ForceCtx* _force_contexts(Py_ssize_t n_fctx, ForceSource fsrc, object forces,
                               object masses) except NULL:
    """One force context shared by every body, or one per body (per-body force or mass
    rows), malloc'ed (the caller frees it): none without a force source."""
    cdef ForceCtx* fctx = <ForceCtx*>malloc(n_fctx * sizeof(ForceCtx))
    cdef const double[:, ::1] fv
    cdef const double[::1] mv
    cdef Py_ssize_t b_
    cdef int i_
    if fctx == NULL:
        raise MemoryError()
    for b_ in range(n_fctx):
        _no_force(&fctx[b_])
    if fsrc is None:
        return fctx
    try:
        fv = np.ascontiguousarray(np.reshape(forces, (-1, 3))) if forces is not None \
            else np.zeros((1, 3))
        mv = np.ascontiguousarray(np.reshape(masses, -1))
    except BaseException:
        free(fctx)
        raise
    for b_ in range(n_fctx):
        fctx[b_].source = <PyObject*>fsrc
        fctx[b_].constant = fsrc._function is None
        for i_ in range(3):
            fctx[b_].F[i_] = fv[b_ if fv.shape[0] > 1 else 0, i_]
        fctx[b_].inv_mass = 1.0 / mv[b_ if mv.shape[0] > 1 else 0]
    return fctx


def _stats(status_code, message, n, substeps, nfev, counts):
    """The stats of `run` common to its methods (counts: `drive`'s, None on a fixed grid)."""
    stats = {"n_steps": int(n * substeps), "n_main_steps": int(n),
             "nfev": largest(nfev), "status": status_code, "message": message}
    if counts is not None:
        stats["n_steps"] = stats["n_main_steps"] = largest(counts[:, 0])
        stats["n_rejected"] = largest(counts[:, 1])
        stats["nfev_pair"] = largest(counts[:, 2])
    stats["per_body"] = per_body_counts(counts, stats["n_steps"], nfev)
    return stats


# the kernels of the fixed-step lanes (`_attach_lanes`), the methods of theirs `run_fixed_single`
# takes (registry entries of rotode.dynamic) and the options of a call that gives none
_LANE_CODES = (KERNEL_RK3, KERNEL_RK4, KERNEL_AB3, KERNEL_LIE_EULER, KERNEL_CG)
_FIXED_SPECS = {name: _methods.get(name, "rigid body") for name in _methods.names("rigid body")
                if _methods.get(name).runner("rigid body") == "dynamic"
                and _methods.get(name).code("rigid body") in _LANE_CODES}
_PLAIN_OPTIONS = _run_options(*next(iter(_FIXED_SPECS.items())), None, False)
# the pairs given dt, by their pair ids (the pairs' fixed-grid lanes: `run_fixed_single`)
_FIXED_PAIRS = {**ENGINE_PAIRS, **ENGINE_GROUP_PAIRS}
# the second-order method on q (the driver's loop: `run_fixed_single` with a compiled torque)
_RKN4_SPEC = next(_methods.get(name) for name in _methods.names("rigid body")
                  if _methods.get(name).runner("rigid body") == "dynamic"
                  and _methods.get(name).code("rigid body") == KERNEL_RKN4)
_RKN4_NAME = _RKN4_SPEC.name
_THIN_TORQUES = (Constant, Gravity, GravityGradient)
