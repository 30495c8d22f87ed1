"""Explicit rigid-body steppers: orientation q and body angular velocity w advanced together.

The runner of docs/stepper-contract.md for `rotode.RigidBody` models (one shared body or a list
of N bodies with their own inertia and torque).  State ``y = [q (4), w_body (3)]`` (with
``force=``: ``[q, w, x (3), v (3)]``).  See docs/methods-rigid-body.md for the equations.

========== ===== ============================================================================
method     order scheme
========== ===== ============================================================================
lie_euler  1     q1 = q0 exp(h w0/2), w1 = w0 + h w'(t0, q0, w0)
cg1        1     Crouch-Grossman, 1 stage (the same arithmetic as lie_euler)
exp2       2     exponential midpoint (CG = RKMK at order 2): a21 = 1/2, b = (0, 1)
cg2        2     Crouch-Grossman Heun: a21 = 1, b = (1/2, 1/2)
cg3        3     Crouch-Grossman 1993 3-stage method (Owren & Marthinsen 1999 Table 1)
rk3        3     Kutta's RK3 on the non-unit quaternion rigid body (Rucker 2018 sec. III)
rk4        4     classical RK4, idem
ab3        3     variable-step Adams-Bashforth 3, first two steps by rk3
rkn4       4     Runge-Kutta-Nystrom on q'' (Mandre 2008 sec. 6), + translation (sec. 5)
========== ===== ============================================================================

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
force, mass : callable F(t, x, v) -> (3,) or array (3,), float
    rkn4 only: world force on the centre of mass; the state gains [x, v] (13 columns).
qdot0 : array_like, shape (N, 4) or (4,)
    rkn4 only: the initial q' (default 1/2 q0 * w0).  The state [q, w] keeps only the part of
    q' that is a rate (w = 2 vec(conj(q) q')/|q|^2); a run continued from the final
    ``stats["qdot"]`` of another is the same as one run over both grids, bit for bit.
"""
from fractions import Fraction

import numpy as np

from rotode._validation import (as_callable_vector, as_float_array, as_positive_scalar,
                                as_step_grid, as_workers)
from rotode.rhs import rigid_body_list

from cpython.ref cimport PyObject
from cython.parallel cimport prange
from libc.math cimport sqrt, NAN
from libc.stdlib cimport malloc, free
from rotode._loops cimport thread_count
from rotode.quaternion cimport quat_rotate
from rotode.rhs cimport RigidBody

__all__ = ["METHODS", "TABLEAUX", "ORDERS", "run"]

METHODS = ("lie_euler", "exp2", "cg1", "cg2", "cg3", "rk3", "rk4", "ab3", "rkn4")

#: Theoretical orders of the methods.
ORDERS = {"lie_euler": 1, "exp2": 2, "cg1": 1, "cg2": 2, "cg3": 3, "rk3": 3, "rk4": 4,
          "ab3": 3, "rkn4": 4}

_F = Fraction
#: Butcher tableaux as exact fractions: ``a`` (rows of the strictly lower triangle), ``b``, ``c``.
#: The Crouch-Grossman kernels read their doubles from here; rk3/rk4 are hand-written kernels
#: whose tableaux are listed for reference.
TABLEAUX = {
    "cg1": {"a": ((),), "b": (_F(1),), "c": (_F(0),)},
    "exp2": {"a": ((), (_F(1, 2),)), "b": (_F(0), _F(1)), "c": (_F(0), _F(1, 2))},
    "cg2": {"a": ((), (_F(1),)), "b": (_F(1, 2), _F(1, 2)), "c": (_F(0), _F(1))},
    "cg3": {"a": ((), (_F(3, 4),), (_F(119, 216), _F(17, 108))),
            "b": (_F(13, 51), _F(-2, 3), _F(24, 17)),
            "c": (_F(0), _F(3, 4), _F(17, 24))},
    "rk3": {"a": ((), (_F(1, 2),), (_F(-1), _F(2))),
            "b": (_F(1, 6), _F(2, 3), _F(1, 6)), "c": (_F(0), _F(1, 2), _F(1))},
    "rk4": {"a": ((), (_F(1, 2),), (_F(0), _F(1, 2)), (_F(0), _F(0), _F(1))),
            "b": (_F(1, 6), _F(1, 3), _F(1, 3), _F(1, 6)),
            "c": (_F(0), _F(1, 2), _F(1, 2), _F(1))},
}

cdef enum:
    M_LIE_EULER = 0
    M_CG = 1
    M_RK3 = 2
    M_RK4 = 3
    M_AB3 = 4
    M_RKN4 = 5

cdef enum:
    BODY_OK = 0
    BODY_NONFINITE = 2

_METHOD_ID = {"lie_euler": M_LIE_EULER, "exp2": M_CG, "cg1": M_CG, "cg2": M_CG, "cg3": M_CG,
              "rk3": M_RK3, "rk4": M_RK4, "ab3": M_AB3, "rkn4": M_RKN4}
_LIE = ("lie_euler", "exp2", "cg1", "cg2", "cg3")


cdef struct RunCfg:
    int method
    CGTableau tab
    int substeps
    bint normalize
    bint restore
    const double* resets
    Py_ssize_t nres
    double direction
    int k              # columns of y0 / y_out: 7 or 13


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
            try:
                r = as_callable_vector(
                    self._function(t, np.array([x[0], x[1], x[2]]),
                                   np.array([v[0], v[1], v[2]])), "force callable", t)
                F[0] = r[0]
                F[1] = r[1]
                F[2] = r[2]
            except Exception as exc:
                self.error = exc
                return STEP_SOURCE_ERROR
        return STEP_OK


# ---- one body -----------------------------------------------------------------------------

cdef inline void _get_qw(const RunCfg* cfg, const double* z, double* q, double* w) noexcept nogil:
    """Orientation and body rate of the internal state (rkn4: w = 2 vec(conj(q) q')/|q|^2)."""
    cdef double qc[4]
    cdef double u[4]
    cdef double s
    cdef int i
    for i in range(4):
        q[i] = z[i]
    if cfg.method == M_RKN4:
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
    if cfg.method == M_RKN4:
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


cdef int _run_body(const RunCfg* cfg, const BodyCtx* tmpl, const ForceCtx* ftmpl,
                   const double* t, Py_ssize_t n, const Py_ssize_t* save, Py_ssize_t m,
                   const double* y0, const double* qdot0, double* yout, double* wout,
                   double* qdot, long* nfev, long* nfev_force) noexcept nogil:
    """Advance one body over the grid; returns its status.

    rkn4: ``qdot0`` (NULL: 1/2 q0 w0) is the initial q' and ``qdot`` (if not NULL) receives
    the final one (NaN after a failure).  OUT: yout[m*k], wout[m*3], qdot[4], nfev.
    """
    cdef BodyCtx b = tmpl[0]
    cdef ForceCtx f = ftmpl[0]
    cdef double z[14]
    cdef double znew[14]
    cdef double fh[3][7]
    cdef double hh[2]
    cdef double beta[3]
    cdef double L[3]
    cdef double q[4]
    cdef double w[3]
    cdef double v[3]
    cdef double tau[3]
    cdef double hs, ts, s
    cdef Py_ssize_t i, j = 0, r = 0, nab = 0, slot
    cdef int sub, c, st = STEP_OK, nz
    cdef bint rkn = cfg.method == M_RKN4
    nz = 14 if cfg.k == 13 else (8 if rkn else 7)
    b.nfev = 0
    b.nh = 0
    f.nfev = 0
    L[0] = 0.0
    L[1] = 0.0
    L[2] = 0.0
    hh[0] = 0.0
    hh[1] = 0.0
    # initial state
    for c in range(4):
        z[c] = y0[c]
    if rkn and qdot0 != NULL:
        for c in range(4):
            z[4 + c] = qdot0[c]
    else:
        _set_w(cfg, z, &y0[4])
    if cfg.k == 13:
        for c in range(6):
            z[8 + c] = y0[7 + c]
    if cfg.restore:
        mat3_vec(b.I, &y0[4], v)
        quat_rotate(y0, v, L)                   # L = R(q0) I w0 (any |q0|)
    if m > 0 and save[0] == 0:
        _store(cfg, z, yout, wout)
        j = 1
    for i in range(n):
        if b.hold:
            # Mandre 2008 sec. 7.3: one evaluation per main step, pushed into the history
            while r < cfg.nres and cfg.direction * (t[i] - cfg.resets[r]) >= 0.0:
                b.nh = 0
                r += 1
            _get_qw(cfg, z, q, w)
            st = body_torque_eval(&b, t[i], q, w, tau)
            if st != STEP_OK:
                break
            for c in range(2, 0, -1):
                b.ht[c] = b.ht[c - 1]
                b.hv[3 * c] = b.hv[3 * c - 3]
                b.hv[3 * c + 1] = b.hv[3 * c - 2]
                b.hv[3 * c + 2] = b.hv[3 * c - 1]
            b.ht[0] = t[i]
            b.hv[0] = tau[0]
            b.hv[1] = tau[1]
            b.hv[2] = tau[2]
            if b.nh < b.npoints:
                b.nh += 1
        hs = (t[i + 1] - t[i]) / cfg.substeps
        for sub in range(cfg.substeps):
            ts = t[i] + sub * hs
            if cfg.method == M_LIE_EULER:
                st = lie_euler_step(&b, ts, hs, z, znew)
            elif cfg.method == M_CG:
                st = cg_step(&cfg.tab, &b, ts, hs, z, znew)
            elif cfg.method == M_RK4:
                st = rk4_step(&b, ts, hs, z, znew)
            elif cfg.method == M_RK3:
                st = body_rhs(&b, ts, z, fh[0])
                if st == STEP_OK:
                    st = rk3_step(&b, ts, hs, z, fh[0], znew)
            elif cfg.method == M_AB3:
                slot = nab % 3
                st = body_rhs(&b, ts, z, fh[slot])
                if st == STEP_OK:
                    if nab < 2:
                        st = rk3_step(&b, ts, hs, z, fh[slot], znew)
                    else:
                        ab3_weights(hs, hh[0], hh[1], beta)
                        ab3_step(beta, z, fh[slot], fh[(nab + 2) % 3], fh[(nab + 1) % 3],
                                 znew)
                hh[1] = hh[0]
                hh[0] = hs
                nab += 1
            else:
                st = rkn4_step(&b, &f, ts, hs, z, znew)
            if st != STEP_OK:
                break
            for c in range(nz):
                z[c] = znew[c]
            if cfg.normalize:
                _get_qw(cfg, z, q, w)
                s = 1.0 / sqrt(quat_norm2(z))
                for c in range(4):
                    z[c] = z[c] * s
                if rkn:
                    _set_w(cfg, z, w)
            if cfg.restore:
                # Mandre 2008 sec. 7.2: w = I^-1 (conj(q) L q) = I^-1 R(q)^T L
                quat_conj(z, q)
                quat_rotate(q, L, v)
                mat3_vec(b.Iinv, v, w)
                _set_w(cfg, z, w)
        if st != STEP_OK:
            break
        for c in range(nz):
            if not (z[c] - z[c] == 0.0):     # NaN or inf
                st = BODY_NONFINITE
        if st != STEP_OK:
            break
        if j < m and save[j] == i + 1:
            _store(cfg, z, &yout[j * cfg.k], &wout[3 * j])
            j += 1
    # states from the failure on are NaN
    while j < m:
        for c in range(cfg.k):
            yout[j * cfg.k + c] = NAN
        for c in range(3):
            wout[3 * j + c] = NAN
        j += 1
    if rkn and qdot != NULL:
        for c in range(4):
            qdot[c] = z[4 + c] if st == STEP_OK else NAN
    nfev[0] = b.nfev
    nfev_force[0] = f.nfev
    return st


# ---- facade -------------------------------------------------------------------------------

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


def _bool_option(value, name):
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"option `{name}` must be a bool, got {type(value).__name__}")
    return bool(value)


def _int_option(value, name, low, high=None):
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"option `{name}` must be an int, got {type(value).__name__}")
    value = int(value)
    if value < low or (high is not None and value > high):
        rng = f">= {low}" if high is None else f"in [{low}, {high}]"
        raise ValueError(f"option `{name}` must be {rng}, got {value}")
    return value


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
        Method options (see the module docstring); unknown keys raise TypeError.
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
        rkn4 ``qdot`` (N, 4), the final q' of each body (see the option ``qdot0``).

    Notes
    -----
    Equations, tableaux and references: docs/methods-rigid-body.md.  Errors raised by torque or
    force callables are re-raised unchanged.
    """
    if method not in METHODS:
        raise ValueError(f"`method` must be one of {METHODS}, got {method!r}")
    opts = dict(options or {})
    normalize = _bool_option(opts.pop("normalize", False), "normalize")
    restore = _bool_option(opts.pop("restore_momentum", False), "restore_momentum")
    substeps = opts.pop("torque_substeps", None)
    npoints = opts.pop("torque_points", None)
    resets = opts.pop("torque_resets", None)
    start = opts.pop("torque_start", None)
    force = opts.pop("force", None)
    mass = opts.pop("mass", None)
    qdot0 = opts.pop("qdot0", None)
    if opts:
        raise TypeError(f"unknown option(s) for method {method!r}: {sorted(opts)}")
    if qdot0 is not None and method != "rkn4":
        raise TypeError(f"option `qdot0` is only accepted by 'rkn4', not {method!r}")
    if normalize and method in _LIE:
        raise TypeError(f"option `normalize` is not accepted by the Lie-group method "
                        f"{method!r} (it keeps |q| = 1 by construction)")
    hold = substeps is not None
    if hold:
        substeps = _int_option(substeps, "torque_substeps", 1)
        npoints = _int_option(3 if npoints is None else npoints, "torque_points", 1, 3)
        start = "hold" if start is None else start
        if start not in ("hold", "evaluate"):
            raise ValueError(f"option `torque_start` must be 'hold' or 'evaluate', got {start!r}")
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
    if force is not None or mass is not None:
        if method != "rkn4":
            raise TypeError(f"options `force` and `mass` are only accepted by 'rkn4', "
                            f"not {method!r}")
        if force is None:
            raise ValueError("option `mass` needs `force`")
        if mass is None:
            raise ValueError("option `force` needs `mass` (the body's mass, > 0)")
        mass = as_positive_scalar(mass, "mass")
        fsrc = ForceSource(force)
    else:
        fsrc = None
    k = 13 if fsrc is not None else 7
    workers = as_workers(workers)

    y0 = as_float_array(y0, "y0")
    if y0.ndim != 2 or y0.shape[1] != k:
        extra = " (with `force`: [q, w, x, v])" if k == 13 else ""
        raise ValueError(f"`y0` must have shape (N, {k}){extra}, got {y0.shape}")
    N = y0.shape[0]
    if qdot0 is not None:
        qdot0 = as_float_array(qdot0, "qdot0", (4,))
        if qdot0.shape not in ((4,), (N, 4)):
            raise ValueError(f"option `qdot0` must have shape (4,) or (N, 4) = ({N}, 4), got "
                             f"{qdot0.shape}")
        qdot0 = np.ascontiguousarray(np.broadcast_to(qdot0, (N, 4)))
    n2 = np.einsum("ij,ij->i", y0[:, :4], y0[:, :4])
    if np.any(~(n2 > 1e-300)):
        raise ValueError("`y0` quaternion parts must be nonzero")
    t, save = as_step_grid(t, save)
    models = rigid_body_list(model, N)
    for i, mdl in enumerate(models):
        if restore and mdl.torque is not None:
            raise ValueError("option `restore_momentum` (Mandre 2008 sec. 7.2) needs torque-free "
                             f"bodies; model {i} has torque {mdl.torque!r}")
        if method == "rkn4" and not mdl.gyroscopic:
            raise ValueError("'rkn4' integrates the second-order equation with the gyroscopic "
                             "term; `gyroscopic=False` is not supported")
    direction = 1.0 if t.shape[0] < 2 or t[1] > t[0] else -1.0
    resets_arr = np.ascontiguousarray(np.sort(resets_arr * direction) * direction)

    cdef RunCfg cfg
    cdef int i_, j_
    cfg.method = _METHOD_ID[method]
    cfg.substeps = substeps
    cfg.normalize = normalize
    cfg.restore = restore
    cfg.nres = resets_arr.shape[0]
    cfg.direction = direction
    cfg.k = k
    cfg.tab.s = 0
    if method in TABLEAUX and cfg.method == M_CG:
        tab = TABLEAUX[method]
        cfg.tab.s = len(tab["b"])
        for i_ in range(9):
            cfg.tab.a[i_] = 0.0
        for i_ in range(cfg.tab.s):
            cfg.tab.b[i_] = float(tab["b"][i_])
            cfg.tab.c[i_] = float(tab["c"][i_])
            for j_ in range(i_):
                cfg.tab.a[3 * i_ + j_] = float(tab["a"][i_][j_])
    cdef const double[::1] resv = resets_arr
    cfg.resets = &resv[0] if cfg.nres else NULL

    cdef Py_ssize_t nmod = len(models), b_, n = t.shape[0] - 1, m = save.shape[0]
    cdef BodyCtx* ctx = <BodyCtx*>malloc(nmod * sizeof(BodyCtx))
    if ctx == NULL:
        raise MemoryError()
    cdef ForceCtx fctx
    fctx.source = NULL
    fctx.constant = False
    fctx.F[0] = 0.0
    fctx.F[1] = 0.0
    fctx.F[2] = 0.0
    if fsrc is not None:
        fctx.source = <PyObject*>fsrc
        fctx.constant = fsrc._function is None
        for i_ in range(3):
            fctx.F[i_] = fsrc._F[i_]
    fctx.inv_mass = 1.0 / mass if fsrc is not None else 0.0
    fctx.nfev = 0

    y_out = np.empty((N, m, k))
    w_out = np.empty((N, m, 3))
    nfev = np.zeros(N, dtype=np.int64)
    nfevf = np.zeros(N, dtype=np.int64)
    status = np.zeros(N, dtype=np.intc)
    qdot = np.empty((N, 4))
    cdef double[:, ::1] qdv = qdot
    cdef const double[:, ::1] qd0v = qdot0 if qdot0 is not None else np.empty((0, 4))
    cdef bint has_qdot0 = qdot0 is not None
    cdef const double[:, ::1] y0v = y0
    cdef const double[::1] tv = t
    cdef const Py_ssize_t[::1] sv = save
    cdef double[:, :, ::1] yv = y_out
    cdef double[:, :, ::1] wv = w_out
    cdef long[::1] nv = nfev
    cdef long[::1] nfv = nfevf
    cdef int[::1] stv = status
    cdef const Py_ssize_t* savep = &sv[0] if m else NULL
    cdef bint shared = nmod == 1
    cdef int nthreads = thread_count(workers)
    cdef Py_ssize_t nb = N
    try:
        for b_ in range(nmod):
            _fill_body(&ctx[b_], models[b_], hold, npoints, start == "evaluate")
        if nb:
            for b_ in prange(nb, nogil=True, schedule="static", num_threads=nthreads):
                stv[b_] = _run_body(&cfg, &ctx[0 if shared else b_], &fctx, &tv[0], n, savep,
                                    m, &y0v[b_, 0], &qd0v[b_, 0] if has_qdot0 else NULL,
                                    &yv[b_, 0, 0] if m else NULL, &wv[b_, 0, 0] if m else NULL,
                                    &qdv[b_, 0], &nv[b_], &nfv[b_])
    finally:
        free(ctx)

    stats = {"n_steps": int(n * substeps), "n_main_steps": int(n),
             "nfev": int(nfev.max()) if N else 0, "status": 0, "message": "success"}
    if fsrc is not None:
        stats["nfev_force"] = int(nfevf.max()) if N else 0
    if method == "rkn4":
        stats["qdot"] = qdot
    if np.any(status == STEP_SOURCE_ERROR):
        sources = [mdl.torque for mdl in models] + [fsrc]
        for src in sources:
            if src is not None and src.error is not None:
                err, src.error = src.error, None
                raise err
        raise RuntimeError(f"rotode.dynamic.run({method!r}): a torque or force source failed "
                           "without an error")
    if np.any(status != 0):
        bad = int(np.argmax(status != 0))
        stats["status"] = int(status[bad])
        stats["message"] = (f"the state of body {bad} became non-finite (NaN or inf); its "
                            "states from then on are NaN (step too large?)")
    return y_out, w_out, stats
