"""Native kinematic steppers: integrate q under a known angular velocity w(t).

Implements the runner of docs/stepper-contract.md for `rotode.integrate`: ``METHODS`` and
``run(method, model, y0, t, save, options, workers)``.  The step kernels live in
rotode/kinematic.pxd (cimport-able); this module holds the batched driver: the loop over bodies
is outermost (prange over bodies, each body runs its whole time loop with stack scratch), so N
single runs and one batched run do identical arithmetic, whatever the number of workers.

Methods (equations and references in docs/methods-kinematic.md):

- ``lie_euler`` -- exponential update 1 of Rucker 2018 (eq. 24, zero-order hold), order 1;
- ``exp2`` -- exponential update 2 of Rucker 2018 (eq. 28, uses w and w'), order 2;
- ``magnus_ca`` -- [NIRD]: constant angular acceleration over the step, Magnus terms 1..4;
- ``magnus2``, ``magnus4``, ``magnus6``, ``magnus8`` -- Gauss-Legendre Magnus integrators
  (1 to 4 nodes; Blanes, Casas & Ros 2000), order 2 to 8;
- ``cg1``, ``cg2``, ``cg3`` -- Crouch-Grossman methods (Crouch & Grossman 1993), order 1 to 3;
- ``rk3``, ``rk4``, ``ab3`` -- vector-space methods on non-unit quaternions (Rucker 2018 sec. III).
"""
from fractions import Fraction

import numpy as np

from rotode.omega import AngularVelocity as _PyAngularVelocity
from rotode._validation import as_positive_scalar, as_step_grid, as_workers

from cython.parallel cimport prange
from libc.math cimport NAN, floor
from rotode._loops cimport thread_count
from rotode.omega cimport AngularVelocity
from rotode.quaternion cimport quat_rotate, quat_conj
from rotode.rhs cimport FRAME_BODY, FRAME_WORLD, quaternion_kinematics_rhs

__all__ = ["METHODS", "run", "CG_TABLEAUS", "ORDERS"]

METHODS = ("lie_euler", "exp2", "magnus_ca", "magnus2", "magnus4", "magnus6", "magnus8",
           "cg1", "cg2", "cg3", "rk3", "rk4", "ab3")

# Global orders (magnus_ca: with the default terms=2 and an exact angular acceleration).
ORDERS = {"lie_euler": 1, "exp2": 2, "magnus_ca": 2, "magnus2": 2, "magnus4": 4, "magnus6": 6,
          "magnus8": 8, "cg1": 1, "cg2": 2, "cg3": 3, "rk3": 3, "rk4": 4, "ab3": 3}

_F = Fraction
# Crouch-Grossman tableaus (A, b, c) as exact rationals.  cg3 is the 3-stage method of Crouch &
# Grossman 1993 (also Owren & Marthinsen 1999, Table 1); cg2 is Heun's tableau (no extra
# condition below order 3); cg1 is the Lie-Euler method.
CG_TABLEAUS = {
    "cg1": (((_F(0),),), (_F(1),), (_F(0),)),
    "cg2": (((_F(0), _F(0)), (_F(1), _F(0))), (_F(1, 2), _F(1, 2)), (_F(0), _F(1))),
    "cg3": (((_F(0), _F(0), _F(0)), (_F(3, 4), _F(0), _F(0)), (_F(119, 216), _F(17, 108), _F(0))),
            (_F(13, 51), _F(-2, 3), _F(24, 17)), (_F(0), _F(3, 4), _F(17, 24))),
}

cdef enum:
    M_LIE_EULER = 0
    M_EXP2 = 1
    M_MAGNUS_CA = 2
    M_MAGNUS2 = 3
    M_MAGNUS4 = 4
    M_MAGNUS6 = 5
    M_MAGNUS8 = 6
    M_CG1 = 7
    M_CG2 = 8
    M_CG3 = 9
    M_RK3 = 10
    M_RK4 = 11
    M_AB3 = 12

cdef enum:
    RATE_ZERO = 0     # constant per-body rates: w' = 0
    RATE_SOURCE = 1   # w'(t) from the source's evaluate_rate
    RATE_FD = 2       # source without a rate: w' ~ (w(t + h) - w(t)) / h over the step
    RATE_ALPHA = 3    # option alpha (N, 3): constant angular acceleration per body

cdef enum:
    ST_OK = 0
    ST_SOURCE = -1
    ST_UNAVAILABLE = -2
    ST_BOUND = -4     # magnus_ca: rotation per step reached pi/sqrt(2)

# Gauss-Legendre nodes on [0, 1]
cdef double GL2_1 = 0.21132486540518713, GL2_2 = 0.78867513459481287
cdef double GL3_1 = 0.11270166537925831, GL3_3 = 0.88729833462074169
cdef double GL4_1 = 0.069431844202973713, GL4_2 = 0.33000947820757187
cdef double GL4_3 = 0.66999052179242813, GL4_4 = 0.93056815579702629
# cg3 weights and nodes (CG_TABLEAUS["cg3"] in double)
cdef double CG3_B1 = 13.0 / 51.0, CG3_B2 = -2.0 / 3.0, CG3_B3 = 24.0 / 17.0
cdef double CG3_C2 = 0.75, CG3_C3 = 17.0 / 24.0


cdef class _Driver:
    """All inputs of one batched run; `body(i)` advances body i over the whole grid."""
    cdef int method, frame, terms, rate_mode, is_source
    cdef bint approx, normalize, substep
    cdef double gain
    cdef AngularVelocity src
    cdef const double[:, ::1] wconst
    cdef const double[:, ::1] alpha
    cdef const double[:, ::1] y0
    cdef const double[::1] t
    cdef const Py_ssize_t[::1] save
    cdef double[:, :, ::1] yout
    cdef double[:, :, ::1] wout
    cdef Py_ssize_t[::1] nfev
    cdef Py_ssize_t[::1] nrate
    cdef Py_ssize_t[::1] nsub
    cdef int[::1] status
    cdef double[::1] fail_t
    cdef double[::1] fail_angle

    cdef inline int omega(self, Py_ssize_t i, double tt, double* w) noexcept nogil:
        """w(tt) of body i (OUT: w[3])."""
        cdef double s
        self.nfev[i] += 1
        if self.is_source:
            return self.src.evaluate(tt, w)
        w[0] = self.wconst[i, 0]
        w[1] = self.wconst[i, 1]
        w[2] = self.wconst[i, 2]
        if self.rate_mode == RATE_ALPHA:
            s = tt - self.t[0]
            w[0] = w[0] + self.alpha[i, 0] * s
            w[1] = w[1] + self.alpha[i, 1] * s
            w[2] = w[2] + self.alpha[i, 2] * s
        return ST_OK

    cdef inline int step_rate(self, Py_ssize_t i, double t0, double h, const double* w0,
                              double* w1, double* dw) noexcept nogil:
        """w' over the step [t0, t0 + h] for exp2/magnus_ca: the forward difference
        (w(t0 + h) - w0)/h when the source has no rate (RATE_FD; w(t0 + h) left in w1),
        otherwise `rate` at t0 (OUT: dw[3], w1[3])."""
        cdef int st, c
        if self.rate_mode != RATE_FD:
            return self.rate(i, t0, dw)
        st = self.omega(i, t0 + h, w1)
        for c in range(3):
            dw[c] = (w1[c] - w0[c]) / h
        return st

    cdef inline bint carry_rate(self, double* w0, const double* w1) noexcept nogil:
        """After a step: keep w(t0 + h) as the next step's w0 when `step_rate` computed it."""
        if self.rate_mode != RATE_FD:
            return False
        w0[0] = w1[0]
        w0[1] = w1[1]
        w0[2] = w1[2]
        return True

    cdef inline int rate(self, Py_ssize_t i, double tt, double* dw) noexcept nogil:
        """w'(tt) of body i for RATE_ZERO / RATE_SOURCE / RATE_ALPHA (OUT: dw[3])."""
        if self.rate_mode == RATE_SOURCE:
            self.nrate[i] += 1
            return self.src.evaluate_rate(tt, dw)
        if self.rate_mode == RATE_ALPHA:
            dw[0] = self.alpha[i, 0]
            dw[1] = self.alpha[i, 1]
            dw[2] = self.alpha[i, 2]
        else:
            dw[0] = 0.0
            dw[1] = 0.0
            dw[2] = 0.0
        return ST_OK

    cdef inline void record(self, Py_ssize_t i, Py_ssize_t k, const double* q,
                            const double* w) noexcept nogil:
        """Store q and the BODY angular velocity at output slot k."""
        cdef double qc[4]
        cdef double wb[3]
        cdef int c
        for c in range(4):
            self.yout[i, k, c] = q[c]
        if self.frame == FRAME_WORLD:
            quat_conj(q, qc)
            quat_rotate(qc, w, wb)
        else:
            wb[0] = w[0]
            wb[1] = w[1]
            wb[2] = w[2]
        for c in range(3):
            self.wout[i, k, c] = wb[c]

    cdef int body(self, Py_ssize_t i) noexcept nogil:
        cdef Py_ssize_t n = self.t.shape[0] - 1, m = self.save.shape[0], j, k = 0, sub, nsubs
        cdef double q[4]
        cdef double w0[3]        # w(t_j) when have0
        cdef double w1[3]
        cdef double w2[3]
        cdef double w3[3]
        cdef double w4[3]
        cdef double dw[3]
        cdef double om[3]
        cdef double f0[4]        # ab3 history f_j, f_{j-1}, f_{j-2}
        cdef double f1[4]
        cdef double f2[4]
        cdef double cab[3]
        cdef double t0, h, hs, ang
        cdef bint have0 = False
        cdef int st = ST_OK, c
        for c in range(4):
            q[c] = self.y0[i, c]
            f0[c] = 0.0
            f1[c] = 0.0
            f2[c] = 0.0
        if m > 0 and self.save[0] == 0:
            st = self.omega(i, self.t[0], w0)
            if st != ST_OK:
                return self.fail(i, 0, st, self.t[0])
            have0 = True
            self.record(i, 0, q, w0)
            k = 1
        for j in range(n):
            if k >= m:
                break
            t0 = self.t[j]
            h = self.t[j + 1] - t0
            if not have0 and self.method not in (M_MAGNUS2, M_MAGNUS4, M_MAGNUS6, M_MAGNUS8):
                st = self.omega(i, t0, w0)
                if st != ST_OK:
                    return self.fail(i, k, st, t0)
                have0 = True
            if self.method == M_LIE_EULER or self.method == M_CG1:
                lie_euler_rotvec(w0, h, om)
                apply_rotvec(q, om, self.frame, self.approx, q)
                have0 = False
            elif self.method == M_EXP2:
                st = self.step_rate(i, t0, h, w0, w1, dw)
                if st != ST_OK:
                    return self.fail(i, k, st, t0)
                exp2_rotvec(w0, dw, h, om)
                apply_rotvec(q, om, self.frame, self.approx, q)
                have0 = self.carry_rate(w0, w1)
            elif self.method == M_MAGNUS_CA:
                st = self.step_rate(i, t0, h, w0, w1, dw)
                if st != ST_OK:
                    return self.fail(i, k, st, t0)
                ang = magnus_ca_angle(w0, dw, h)
                if ang < magnus_bound():
                    magnus_ca_rotvec(w0, dw, h, self.terms, self.frame, om)
                    apply_rotvec(q, om, self.frame, self.approx, q)
                elif self.substep:
                    # equal sub-steps of at most half the bound each, w0 advanced exactly
                    nsubs = <Py_ssize_t>floor(ang / (0.5 * magnus_bound())) + 1
                    hs = h / nsubs
                    self.nsub[i] += nsubs
                    for sub in range(nsubs):
                        for c in range(3):
                            w2[c] = w0[c] + dw[c] * (sub * hs)
                        magnus_ca_rotvec(w2, dw, hs, self.terms, self.frame, om)
                        apply_rotvec(q, om, self.frame, self.approx, q)
                else:
                    self.fail_angle[i] = ang
                    return self.fail(i, k, ST_BOUND, t0)
                have0 = self.carry_rate(w0, w1)
            elif self.method == M_MAGNUS2:
                st = self.omega(i, t0 + 0.5 * h, w1)
                if st != ST_OK:
                    return self.fail(i, k, st, t0)
                lie_euler_rotvec(w1, h, om)
                apply_rotvec(q, om, self.frame, self.approx, q)
                have0 = False
            elif self.method == M_MAGNUS4:
                st = self.omega(i, t0 + GL2_1 * h, w1)
                if st == ST_OK:
                    st = self.omega(i, t0 + GL2_2 * h, w2)
                if st != ST_OK:
                    return self.fail(i, k, st, t0)
                magnus4_rotvec(w1, w2, h, self.frame, om)
                apply_rotvec(q, om, self.frame, self.approx, q)
                have0 = False
            elif self.method == M_MAGNUS6:
                st = self.omega(i, t0 + GL3_1 * h, w1)
                if st == ST_OK:
                    st = self.omega(i, t0 + 0.5 * h, w2)
                if st == ST_OK:
                    st = self.omega(i, t0 + GL3_3 * h, w3)
                if st != ST_OK:
                    return self.fail(i, k, st, t0)
                magnus6_rotvec(w1, w2, w3, h, self.frame, om)
                apply_rotvec(q, om, self.frame, self.approx, q)
                have0 = False
            elif self.method == M_MAGNUS8:
                st = self.omega(i, t0 + GL4_1 * h, w1)
                if st == ST_OK:
                    st = self.omega(i, t0 + GL4_2 * h, w2)
                if st == ST_OK:
                    st = self.omega(i, t0 + GL4_3 * h, w3)
                if st == ST_OK:
                    st = self.omega(i, t0 + GL4_4 * h, w4)
                if st != ST_OK:
                    return self.fail(i, k, st, t0)
                magnus8_rotvec(w1, w2, w3, w4, h, self.frame, om)
                apply_rotvec(q, om, self.frame, self.approx, q)
                have0 = False
            elif self.method == M_CG2:
                st = self.omega(i, t0 + h, w1)
                if st != ST_OK:
                    return self.fail(i, k, st, t0)
                lie_euler_rotvec(w0, 0.5 * h, om)
                apply_rotvec(q, om, self.frame, self.approx, q)
                lie_euler_rotvec(w1, 0.5 * h, om)
                apply_rotvec(q, om, self.frame, self.approx, q)
                w0[0] = w1[0]
                w0[1] = w1[1]
                w0[2] = w1[2]
            elif self.method == M_CG3:
                st = self.omega(i, t0 + CG3_C2 * h, w1)
                if st == ST_OK:
                    st = self.omega(i, t0 + CG3_C3 * h, w2)
                if st != ST_OK:
                    return self.fail(i, k, st, t0)
                lie_euler_rotvec(w0, CG3_B1 * h, om)
                apply_rotvec(q, om, self.frame, self.approx, q)
                lie_euler_rotvec(w1, CG3_B2 * h, om)
                apply_rotvec(q, om, self.frame, self.approx, q)
                lie_euler_rotvec(w2, CG3_B3 * h, om)
                apply_rotvec(q, om, self.frame, self.approx, q)
                have0 = False
            elif self.method == M_RK3 or self.method == M_RK4 or (self.method == M_AB3 and j < 2):
                if self.method == M_AB3:
                    # start-up: keep f_j for the multistep formula, advance with RK4
                    if j == 1:
                        for c in range(4):
                            f1[c] = f0[c]
                    quaternion_kinematics_rhs(q, w0, self.frame, self.gain, f0)
                st = self.omega(i, t0 + 0.5 * h, w1)
                if st == ST_OK:
                    st = self.omega(i, t0 + h, w2)
                if st != ST_OK:
                    return self.fail(i, k, st, t0)
                if self.method == M_RK3:
                    rk3_step(q, w0, w1, w2, h, self.frame, self.gain, q)
                else:
                    rk4_step(q, w0, w1, w2, h, self.frame, self.gain, q)
                if self.normalize:
                    normalize4(q)
                w0[0] = w2[0]
                w0[1] = w2[1]
                w0[2] = w2[2]
            else:  # M_AB3, j >= 2: on entry f0 = f_{j-1}, f1 = f_{j-2}
                for c in range(4):
                    f2[c] = f1[c]
                    f1[c] = f0[c]
                quaternion_kinematics_rhs(q, w0, self.frame, self.gain, f0)
                ab3_weights(h, t0 - self.t[j - 1], self.t[j - 1] - self.t[j - 2], cab)
                for c in range(4):
                    q[c] = q[c] + (cab[0] * f0[c] + cab[1] * f1[c] + cab[2] * f2[c])
                if self.normalize:
                    normalize4(q)
                have0 = False
            if self.save[k] == j + 1:
                if not have0:
                    st = self.omega(i, self.t[j + 1], w0)
                    if st != ST_OK:
                        return self.fail(i, k, st, self.t[j + 1])
                    have0 = True
                self.record(i, k, q, w0)
                k += 1
        return ST_OK

    cdef int fail(self, Py_ssize_t i, Py_ssize_t k, int st, double tt) noexcept nogil:
        """Fill the outputs from slot k on with NaN; remember where it failed."""
        cdef Py_ssize_t kk
        cdef int c
        for kk in range(k, self.save.shape[0]):
            for c in range(4):
                self.yout[i, kk, c] = NAN
            for c in range(3):
                self.wout[i, kk, c] = NAN
        self.status[i] = st
        self.fail_t[i] = tt
        return st


def _pop_bool(options, name, default):
    v = options.pop(name, default)
    if not isinstance(v, (bool, np.bool_)):
        raise TypeError(f"option `{name}` must be True or False, got {v!r}")
    return bool(v)


def _frame_code(frame):
    if frame == "body":
        return FRAME_BODY
    if frame == "world":
        return FRAME_WORLD
    raise ValueError(f"option `frame` must be 'body' or 'world', got {frame!r}")


def _as_rows(x, name, n):
    """A float64 C-contiguous finite array of shape (n, 3)."""
    arr = np.asarray(x)
    if arr.dtype.kind not in "iuf":
        raise TypeError(f"`{name}` must be a real numeric array of shape ({n}, 3), "
                        f"got dtype {arr.dtype}")
    if arr.shape != (n, 3):
        raise ValueError(f"`{name}` must have shape ({n}, 3), got {arr.shape}")
    arr = np.ascontiguousarray(arr, dtype=np.float64)
    if not np.isfinite(arr).all():
        raise ValueError(f"`{name}` must contain only finite values (no NaN or inf)")
    return arr


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
        (N, 3) angular accelerations (else w'(t) of the source; for an (N, 3) `model`, w(t) =
        model + alpha (t - t[0])), ``substep`` (default False: a step whose rotation reaches
        pi/sqrt(2) raises ValueError; True: it is split into equal sub-steps); for ``rk3``,
        ``rk4``, ``ab3``: ``norm_gain`` (default 0) and ``normalize`` (default False).
        Unknown keys raise TypeError.
    workers : int
        Threads over bodies; results do not depend on it.

    Returns
    -------
    y_out : ndarray, shape (N, m, 4)
    w_out : ndarray, shape (N, m, 3)
        BODY angular velocity at t[save].
    stats : dict
        ``n_steps``, ``nfev`` (w evaluations per body, including those at output times),
        ``nrate`` (w' evaluations per body), ``n_substeps``, ``status``, ``message``.
    """
    if method not in METHODS:
        raise ValueError(f"`method` must be one of {METHODS}, got {method!r}")
    options = dict(options or {})
    cdef _Driver d = _Driver()
    d.method = METHODS.index(method)
    d.frame = _frame_code(options.pop("frame", "body"))
    lie = method not in ("rk3", "rk4", "ab3")
    d.approx = False
    if lie:
        e = options.pop("exp", "exact")
        if e not in ("exact", "approx"):
            raise ValueError(f"option `exp` must be 'exact' or 'approx', got {e!r}")
        d.approx = e == "approx"
    d.gain = 0.0
    d.normalize = False
    if not lie:
        # the same check (and message) as QuaternionKinematics(norm_gain=...)
        d.gain = as_positive_scalar(options.pop("norm_gain", 0.0), "norm_gain", allow_zero=True)
        d.normalize = _pop_bool(options, "normalize", False)
    d.terms = 2
    d.substep = False
    alpha = None
    if method == "magnus_ca":
        terms = options.pop("terms", 2)
        if terms not in (1, 2, 3, 4) or isinstance(terms, bool):
            raise ValueError(f"option `terms` must be 1, 2, 3 or 4, got {terms!r}")
        d.terms = int(terms)
        d.substep = _pop_bool(options, "substep", False)
        alpha = options.pop("alpha", None)
    if options:
        raise TypeError(f"unknown option(s) for kinematic method {method!r}: "
                        f"{', '.join(sorted(map(str, options)))}")
    workers = as_workers(workers)
    y0 = np.asarray(y0)
    if y0.ndim != 2 or y0.shape[1] != 4:
        raise ValueError(f"`y0` must have shape (N, 4), got {y0.shape}")
    y0 = np.ascontiguousarray(y0, dtype=np.float64)
    if not np.isfinite(y0).all():
        raise ValueError("`y0` must contain only finite values (no NaN or inf)")
    if np.any(np.einsum("ij,ij->i", y0, y0) <= 1e-300):
        raise ValueError("`y0` must hold nonzero quaternions")
    N = y0.shape[0]
    t, save = as_step_grid(t, save)
    if isinstance(model, _PyAngularVelocity):
        d.is_source = 1
        d.src = model
        d.wconst = np.zeros((1, 3))
    else:
        d.is_source = 0
        d.wconst = _as_rows(model, "model", N)
    d.rate_mode = RATE_ZERO
    d.alpha = np.zeros((1, 3))
    cdef double probe[3]
    cdef int st
    if alpha is not None:
        d.alpha = _as_rows(alpha, "alpha", N)
        d.rate_mode = RATE_ALPHA
    elif d.is_source and method in ("exp2", "magnus_ca"):
        st = d.src.evaluate_rate(t[0], probe)
        if st == ST_OK:
            d.rate_mode = RATE_SOURCE
        elif st == ST_UNAVAILABLE:
            d.rate_mode = RATE_FD
        else:
            _raise_source(d.src)
    m = save.shape[0]
    yout = np.empty((N, m, 4))
    wout = np.empty((N, m, 3))
    d.y0 = y0
    d.t = t
    d.save = save
    d.yout = yout
    d.wout = wout
    nfev = np.zeros(N, dtype=np.intp)
    nrate = np.zeros(N, dtype=np.intp)
    nsub = np.zeros(N, dtype=np.intp)
    status = np.zeros(N, dtype=np.intc)
    fail_t = np.zeros(N)
    fail_angle = np.zeros(N)
    d.nfev = nfev
    d.nrate = nrate
    d.nsub = nsub
    d.status = status
    d.fail_t = fail_t
    d.fail_angle = fail_angle
    cdef Py_ssize_t i, nb = N
    cdef int nw = thread_count(int(workers))
    if nw == 1 or nb < 2:
        with nogil:
            for i in range(nb):
                d.body(i)
    else:
        for i in prange(nb, nogil=True, num_threads=nw, schedule="static"):
            d.body(i)
    bad = np.flatnonzero(status)
    stats = {"n_steps": int(t.shape[0] - 1), "nfev": int(nfev.max()) if N else 0,
             "nrate": int(nrate.max()) if N else 0, "n_substeps": int(nsub.max()) if N else 0,
             "status": 0, "message": "success"}
    if bad.size:
        b = bad[0]
        if status[b] == ST_SOURCE:
            _raise_source(d.src)
        if status[b] == ST_BOUND:
            raise ValueError(
                f"magnus_ca: the rotation over the step from t = {float(fail_t[b])!r} "
                f"(body {b}) is "
                f"{fail_angle[b]:.6g} rad, at or above the convergence bound pi/sqrt(2) = "
                f"2.2214 rad of the Magnus series ([NIRD]); use smaller steps or "
                f"substep=True")
        raise ValueError(f"the angular velocity source could not provide a value at "
                         f"t = {fail_t[b]!r} (status {status[b]})")
    return yout, wout, stats


def _raise_source(src):
    err, src.error = src.error, None
    if err is None:
        err = RuntimeError(f"{type(src).__name__} failed")
    raise err
