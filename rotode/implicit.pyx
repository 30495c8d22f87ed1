"""Implicit free-rigid-body integrators in exponential coordinates.

Mizerski 2020 (Mizerski, "motion of spinning bodies") secs. 7-10 and docs/implicit-midpoint.md.
Each step solves for the rotation vector v of the step, O_{n+1} = O_n R(v), with Newton's
method from v = 0 (or the plain fixed-point map), after splitting the step into sub-steps:
the longer of the largest one that satisfies a closed-form Kantorovich condition
(docs/implicit-midpoint.md sec. 4; Newton provably converges) and, for Newton, one that turns
the body `substep_angle` (less by the square root of the inertia ratio of an elongated body;
doc sec. 5), redone within the Kantorovich bound if Newton does not converge there.  The state
is y = [q (4), w_body (3)]; internally the body angular momentum L_b = I w is carried.
Torques enter by Strang splitting: half a kick L_b += h/2 tau, the free implicit step, half a
kick (doc sec. 6).

Methods (the residual F(v) = 0 each step, l = h L_b, A = I^-1):

==================== ================================================ =====================
``implicit_midpoint``  v = A R(-v/2) l                                   Mizerski 2020 sec. 7
``trapezoid``          v = 1/2 (A l + R(v) A R(-v) l)  (world rates)     Mizerski 2020 sec. 7
``object_trapezoid``   v = 1/2 (A l + A R(-v) l)       (body rates)      Mizerski 2020 sec. 7
==================== ================================================ =====================

`run` and `run_plan` follow docs/stepper-contract.md (their time loop is the one driver of
rotode/_driver.pyx; the methods and their residual variants are the registry's,
`rotode.methods`); `newton_trace` exposes one solve with its Kantorovich constants for tests and
for the convergence maps.
"""
import warnings

import numpy as np

from rotode import methods as _methods
from rotode._driver import outcome, per_body_counts
from rotode.torque import Constant as _Constant, Gravity as _Gravity, GravityGradient as _GG

from cpython.ref cimport PyObject
from libc.stdlib cimport malloc, free
from libc.math cimport sqrt, isfinite, NAN

from rotode._driver cimport (Stepper, ThinCall, advance_steps, drive, make_stepper,
                             thin_grid, thin_stepper_rows, STATUS_OK, KERNEL_IMPLICIT)
from rotode._engine cimport BlockRun
from rotode.dual cimport dual, seed_duals
from rotode.rhs cimport RigidBody
from rotode.torque cimport Torque
from rotode._validation import (as_choice, as_float_array, as_real, as_step_grid, as_workers,
                                check_nonzero_quaternions)
from rotode._runplan import Plan, RunOutput
from rotode.rhs import rigid_body_list

__all__ = ["METHODS", "run", "newton_trace", "max_step", "residual_jacobian"]

#: The methods this runner steps (from the registry, rotode.methods).
METHODS = tuple(name for name in _methods.names("rigid body")
                if _methods.get(name).code("rigid body") == KERNEL_IMPLICIT)
SOLVERS = ("newton", "fixed-point")
BOUNDS = ("inertia", "euclidean")
#: The registry's residual variants -> their codes (IMP_* of rotode/implicit.pxd, in the order
#: of rotode.methods.VARIANTS).
VARIANTS = {name: code for code, name in enumerate(_methods.VARIANTS)}
if len(VARIANTS) != IMP_VARIANTS:
    raise ImportError("rotode/implicit.pxd's residual variants are not rotode.methods.VARIANTS")

DEFAULT_TOL = 1e-15
DEFAULT_MAX_ITER = {"newton": 20, "fixed-point": 500}
DEFAULT_MAX_SUBSTEPS = 1_000_000
#: The angle of the rotation step (doc eq. (16), radians) per residual variant.  Newton
#: converged in 3-5 iterations at up to 1 rad on random bodies from spheres to rods of inertia
#: ratio 1e8; the midpoint rule's own error on an elongated body grows as the angle squared
#: (about angle^2 / 8 of the rate about its thin axis), so it takes a tenth of that (doc sec. 5).
#: (The registry's ``Method.defaults``.)
DEFAULT_SUBSTEP_ANGLE = {_methods.get(name).variant: _methods.get(name).defaults["substep_angle"]
                         for name in METHODS}
#: More sub-steps per step than this (largest body, on average over the run) warn.
WARN_SUBSTEPS = 1000


def _variant(method):
    """The residual code of an implicit registry method (ValueError for other names)."""
    spec = _methods.get(method, "rigid body")
    if spec.code("rigid body") != KERNEL_IMPLICIT:
        raise ValueError(f"`method` must be one of {METHODS}, got {method!r}")
    return VARIANTS[spec.variant]


# ---- steps (layer 2) -----------------------------------------------------------------------

cdef int _kick(PyObject* torque, bint w_dependent, const ImplicitBody* b, double t,
               const double* q, double h, double* L, long* nfev) noexcept nogil:
    """L_b <- L_b + h tau (the torque sub-flow with q frozen) (OUT: L[3], nfev).

    tau(t, q) (gravity, gravity gradient, constant torques: `Torque._uses_w` false) makes this
    the exact sub-flow; a torque that depends on w gets the explicit midpoint rule, second
    order (doc sec. 6).
    """
    cdef double w[3]
    cdef double tau[3]
    cdef double Lm[3]
    cdef int i, status
    mat3_vec(b.Iinv, L, w)
    status = (<Torque>torque).evaluate(t, q, w, tau)
    nfev[0] += 1
    if status != 0:
        return status        # the torque's code: -1, or a compiled torque's failure (the driver's)
    if w_dependent:
        for i in range(3):
            Lm[i] = L[i] + 0.5 * h * tau[i]
        mat3_vec(b.Iinv, Lm, w)
        status = (<Torque>torque).evaluate(t, q, w, tau)
        nfev[0] += 1
        if status != 0:
            return status
    for i in range(3):
        L[i] = L[i] + h * tau[i]
        if not isfinite(L[i]):
            return IMP_NONFINITE
    return IMP_OK


cdef int implicit_step(const ImplicitOptions* o, const ImplicitBody* b, PyObject* torque,
                       bint w_dependent, double t0, double t1, double* q, double* L,
                       ImplicitCounters* c, long* nfev) noexcept nogil:
    """One step t0 -> t1: Strang splitting kick(h/2), free step (sub-stepped), kick(h/2).

    Without torque (``torque == NULL``) this is the free step alone (OUT: q, L, c, nfev).
    """
    cdef double h = t1 - t0
    cdef int status
    if torque != NULL:
        status = _kick(torque, w_dependent, b, t0, q, 0.5 * h, L, nfev)
        if status != IMP_OK:
            return status
    status = implicit_free_step(o, b, h, q, L, c)
    if status != IMP_OK:
        return status
    if torque != NULL:
        status = _kick(torque, w_dependent, b, t1, q, 0.5 * h, L, nfev)
    return status


cdef void _store(const ImplicitBody* b, const double* q, const double* L, double* y,
                 double* w) noexcept nogil:
    """y = [q, A L], w = A L (OUT: y[7], w[3])."""
    cdef int i
    for i in range(4):
        y[i] = q[i]
    mat3_vec(b.Iinv, L, w)
    for i in range(3):
        y[4 + i] = w[i]


cdef struct ImpCfg:
    ImplicitOptions o
    const ImplicitBody* bodies     # one per body
    PyObject** torques             # borrowed Torque per body, NULL: torque-free
    const bint* w_dependent
    ImplicitCounters* counters     # (N,) (OUT)
    long* nfev                     # (N,) (OUT)
    const double* L0               # (N, 3) body angular momenta to continue from, or NULL
    double* L                      # (N, 3) final body angular momenta (OUT)


cdef int _begin(const void* c, Py_ssize_t i, const double* y0, double* z,
                void* work) noexcept nogil:
    """z = [q / |q|, L_b = I w0], or, continuing a run (L0), [q, L0] as they are."""
    cdef const ImpCfg* g = <const ImpCfg*>c
    cdef double s = 1.0 / sqrt(y0[0] * y0[0] + y0[1] * y0[1] + y0[2] * y0[2] + y0[3] * y0[3])
    cdef int k
    if g.L0 != NULL:
        s = 1.0
    for k in range(4):
        z[k] = y0[k] * s
    if g.L0 != NULL:
        for k in range(3):
            z[4 + k] = g.L0[3 * i + k]
    else:
        mat3_vec(g.bodies[i].I, &y0[4], &z[4])
    g.counters[i].substeps = 0
    g.counters[i].iterations = 0
    g.counters[i].max_iterations = 0
    g.counters[i].residual = 0.0
    g.counters[i].retries = 0
    g.nfev[i] = 0
    return STATUS_OK


cdef int _step(const void* c, Py_ssize_t i, double t0, double t1, double* z,
               void* work) noexcept nogil:
    cdef const ImpCfg* g = <const ImpCfg*>c
    return implicit_step(&g.o, &g.bodies[i], g.torques[i], g.w_dependent[i], t0, t1, z, &z[4],
                         &g.counters[i], &g.nfev[i])


cdef int _advance(const void* c, Py_ssize_t i, const double* t, Py_ssize_t j0,
                  Py_ssize_t j1, double* z, void* work, Py_ssize_t* j) noexcept nogil:
    return advance_steps(_step, 7, c, i, t, j0, j1, z, work, j)


cdef void _end(const void* c, Py_ssize_t i, int status, const double* z,
               void* work) noexcept nogil:
    """The final body angular momentum, carried by `rotode.solvers` from step to step."""
    cdef const ImpCfg* g = <const ImpCfg*>c
    cdef int k
    for k in range(3):
        g.L[3 * i + k] = z[4 + k] if status == STATUS_OK else NAN


cdef int _store_row(const void* c, Py_ssize_t i, double t, const double* z, double* y,
                    double* w, void* work) noexcept nogil:
    _store(&(<const ImpCfg*>c).bodies[i], z, &z[4], y, w)
    return STATUS_OK


# ---- facade (layer 4) ----------------------------------------------------------------------

def _options(options):
    """Pop the implicit options; TypeError naming any key left over."""
    options = dict(options or {})
    solver = as_choice(options.pop("solver", "newton"), "solver", SOLVERS)
    tol = as_real(options.pop("tol", DEFAULT_TOL), "tol")
    if not 0.0 < tol < 1.0:
        raise ValueError(f"`tol` must be in (0, 1), got {tol!r}")
    bound = as_choice(options.pop("bound", "euclidean"), "bound", BOUNDS)
    max_iter = options.pop("max_iter", DEFAULT_MAX_ITER[solver])
    max_substeps = options.pop("max_substeps", DEFAULT_MAX_SUBSTEPS)
    angle = options.pop("substep_angle", None)      # None: the method's default
    if angle is not None:
        angle = as_real(angle, "substep_angle")
        if not 0.0 <= angle <= np.pi:
            raise ValueError(f"`substep_angle` must be in [0, pi] (radians; 0: Kantorovich "
                             f"sub-steps only), got {angle!r}")
    for name, val in (("max_iter", max_iter), ("max_substeps", max_substeps)):
        if isinstance(val, bool) or not isinstance(val, (int, np.integer)) or val < 1:
            raise ValueError(f"`{name}` must be an integer >= 1, got {val!r}")
    if max_iter > 1000:
        raise ValueError(f"`max_iter` must be <= 1000, got {max_iter!r}")
    if max_substeps > 2 ** 31 - 1:
        raise ValueError("`max_substeps` must be <= 2**31 - 1")
    if options:
        raise TypeError(f"unexpected option(s) for the implicit methods: "
                        f"{', '.join(sorted(options))}")
    return solver, tol, int(max_iter), int(max_substeps), BOUNDS.index(bound), angle


# the smallest principal moment of each inertia met so far (its bytes -> the eigenvalue): a
# game loop's one-step calls on one body solve it once
cdef dict _SMALLEST = {}


cdef void _fill_body(RigidBody body, ImplicitBody* b):
    cdef int i
    for i in range(9):
        b.I[i] = body._I[i]
        b.Iinv[i] = body._Iinv[i]
    inertia = np.asarray(body.inertia)
    key = inertia.tobytes()
    lam = _SMALLEST.get(key)
    if lam is None:
        lam = float(np.linalg.eigvalsh(inertia)[0])
        if len(_SMALLEST) >= 1024:
            _SMALLEST.clear()
        _SMALLEST[key] = lam
    b.lam = lam


def run(method, model, y0, t, save, options=None, workers=1):
    """Advance N rigid bodies over the grid ``t`` with an implicit method (stepper contract).

    Parameters
    ----------
    method : {"implicit_midpoint", "trapezoid", "object_trapezoid"}
    model : rotode.RigidBody or list of N RigidBody
        Inertia and torque per body (``gyroscopic=False`` is rejected; ``norm_gain`` is not
        used: every step renormalises q).
    y0 : ndarray, shape (N, 7)
        Initial states [q (4), w_body (3)]; q is normalised.
    t : ndarray, shape (n + 1,)
        Strictly monotonic grid (decreasing integrates backwards).
    save : ndarray of intp, shape (m,)
        Strictly increasing indices into ``t`` of the states returned.
    options : dict
        ``solver`` ("newton" default, or "fixed-point", Mizerski 2020 sec. 8), ``tol`` (default
        1e-15: stop when the next correction is predicted below tol |v|), ``max_iter``
        (20 Newton, 500 fixed point), ``max_substeps`` (per step, default 1e6), ``bound``
        ("euclidean", default: Mizerski's form dt |L| <= C lambda_min, doc eq. (14), which keeps
        Mizerski 2020 sec. 11's one-step energy change <= 0.3 %; "inertia": the sharper Kantorovich
        bound in the norm sqrt(x.I x), doc eq. (13), ~1.6x longer sub-steps, <= 0.5 %; with
        Newton a sub-step is never shorter than the rotation step of doc eq. (16));
        ``substep_angle`` (radians in [0, pi]; default 0.025 for the midpoint, 0.25 for the
        trapezoids, `DEFAULT_SUBSTEP_ANGLE`): that step's angle, the rotation of one sub-step
        measured with the rate sqrt(|A L| |L| / lambda_min) (the body's own rate for a round
        body); smaller is more accurate for the midpoint rule on an elongated body, 0 leaves
        only the Kantorovich sub-steps;
        ``L0`` ((3,) or (N, 3)): continue a run from the body angular momenta ``stats["L"]`` of
        the run before (q is then taken as it is), so that a run split into pieces (the
        ``solve_ivp`` classes step one step at a time) gives the numbers of one run bit for bit.
    workers : int
        Threads over bodies; results do not depend on it (bit for bit).

    Returns
    -------
    y_out : ndarray, shape (N, m, 7)
    w_out : ndarray, shape (N, m, 3)
        Body angular velocities at ``t[save]``.
    stats : dict
        ``n_steps``, ``nfev`` (torque evaluations, largest per body), ``n_substeps`` (largest
        per body), ``newton_iter_mean`` and ``newton_iter_max`` (iterations per solve, also for
        the fixed point), ``residual_max`` (largest final |F(v)|), ``substep_retries``
        (largest per body: sub-steps beyond the Kantorovich bound whose Newton iteration did
        not converge, redone within it), ``status`` (0 ok) and ``message``; ``L`` (N, 3), the
        final body angular momenta (NaN after a failure); after a failure the states of that
        body are NaN from the failing step on.

    References
    ----------
    Mizerski 2020 secs. 7-10; docs/implicit-midpoint.md; docs/stepper-contract.md.
    """
    out = run_plan(Plan(method, model, y0, t, save, options, workers))
    return out.y, out.w, out.stats


cdef void _set_options(ImpCfg* g, object spec, object solver, double tol, int max_iter,
                       int max_substeps, int bound, object angle):
    """The method's options in g (OUT: g.o), as `_options` returned them."""
    g.o.method = VARIANTS[spec.variant]
    g.o.solver = SOLVER_NEWTON if solver == "newton" else SOLVER_FIXED_POINT
    g.o.tol = tol
    g.o.max_iter = max_iter
    g.o.max_substeps = max_substeps
    g.o.bound = bound
    g.o.substep_angle = spec.defaults["substep_angle"] if angle is None else angle


cdef void _set_torque(RigidBody body, PyObject** tq, bint* wdep):
    """The body's torque, borrowed (NULL: torque-free), and whether it reads w (OUT)."""
    tq[0] = NULL
    wdep[0] = False
    if body.torque is not None:
        tq[0] = <PyObject*>body.torque
        wdep[0] = body.torque._uses_w()


def _stats(n, nfev, substeps, iterations, substeps_all, itmax, resmax, retries, result, L):
    """The stats of a run of n steps (the counters' largest and sums over the bodies; result:
    the status code and message)."""
    code, message = result
    return {
        "n_steps": int(n),
        "nfev": nfev,
        "n_substeps": substeps,
        "newton_iter_mean": float(iterations / substeps_all) if substeps_all else 0.0,
        "newton_iter_max": int(itmax),
        "residual_max": float(resmax),
        "substep_retries": int(retries),
        "status": code,
        "message": message,
        "L": L,
    }


def run_fixed_single(model, t_span, y0, method, dt, save_every, grid=None):
    """The common call of `rotode.integrate` with an implicit method on one rigid body (a game
    loop's frame) without the general path's set-up, or None.

    A `RigidBody` of one body with the gyroscopic term, torque-free or with a built-in
    `Constant`, `Gravity` or `GravityGradient` torque, ``y0`` a float64 array of shape (7,) or
    a list or tuple of 7 numbers, no option, ``t_span`` a pair of Python numbers, ``dt`` a
    Python number, ``save_every`` None or a Python int: the driver's fixed-grid loop is entered
    on `integrate`'s grid (`_driver.thin_grid`) as `run_plan` runs one body.  Anything else,
    any input `integrate` would refuse, a run that fails or one that warns of its sub-steps
    give None, and `integrate`'s general path.  Returns ``(t, y (m, 7), w (m, 3), stats)``.
    ``grid``: None, or `_plan.time_grid`'s grid and saved indices of a call with ``t_eval``
    (taken as they are).
    """
    cdef BlockRun run
    cdef ThinCall c
    cdef ImpCfg g
    cdef ImplicitBody bd
    cdef ImplicitCounters cn
    cdef PyObject* tq
    cdef bint wdep
    cdef long nfev = 0
    if (type(model) is not RigidBody or type(method) is not str
            or (<RigidBody>model).n_bodies is not None or not (<RigidBody>model).gyroscopic
            or not ((<RigidBody>model).torque is None
                    or type((<RigidBody>model).torque) in _THIN_TORQUES)):
        return None
    spec = _FIXED_SPECS.get(method)
    grid = (thin_grid(t_span, dt, save_every, y0, 7, True, &c, &run, grid)
            if spec is not None else None)
    if grid is None:
        return None
    L = np.empty((1, 3))
    cdef double[:, ::1] Lv = L
    g.L0 = NULL
    g.L = &Lv[0, 0]
    solver, tol, max_iter, max_substeps, bound, angle = _DEFAULT_OPTIONS
    _set_options(&g, spec, solver, tol, max_iter, max_substeps, bound, angle)
    cdef Stepper sp = make_stepper(&g, _begin, _advance, _store_row, _end, 7, 7, 7, True)
    sp.y0_row = True
    _fill_body(<RigidBody>model, &bd)
    _set_torque(<RigidBody>model, &tq, &wdep)
    g.bodies = &bd
    g.torques = &tq
    g.w_dependent = &wdep
    g.counters = &cn
    g.nfev = &nfev
    rows = thin_stepper_rows(&sp, grid, &run)
    if rows is None or (run.n and cn.substeps > WARN_SUBSTEPS * run.n):
        return None
    return rows + (_stats(run.n, nfev, cn.substeps, cn.iterations, cn.substeps,
                          cn.max_iterations, cn.residual, cn.retries, (0, "success"), L),)


def run_plan(plan):
    """`run` of a `rotode._runplan.Plan`, the facades' entry; returns a
    `rotode._runplan.RunOutput`.  The implicit methods take fixed steps: a plan with error
    control, events, a step record or ``h_next`` raises ValueError.
    """
    method = plan.method
    spec = _methods.get(method, "rigid body")
    if spec.code("rigid body") != KERNEL_IMPLICIT:
        raise ValueError(f"method {method!r} is stepped by rotode.{spec.runner('rigid body')}, "
                         "not rotode.implicit")
    if (plan.control is not None or plan.events is not None or plan.steps is not None
            or plan.h_next):
        raise ValueError(f"method {method!r} has no error estimate (no `rtol`/`atol`)")
    options = dict(plan.options or {})
    L0 = options.pop("L0", None)
    solver, tol, max_iter, max_substeps, bound, angle = _options(options)
    Y = as_float_array(plan.y0, "y0", (7,))
    if Y.ndim != 2:
        raise ValueError(f"`y0` must have shape (N, 7), got {Y.shape}")
    if L0 is not None:
        L0 = as_float_array(L0, "L0", (3,))
        if L0.shape not in ((3,), (Y.shape[0], 3)):
            raise ValueError(f"option `L0` must have shape (3,) or (N, 3) = ({Y.shape[0]}, 3), "
                             f"got {L0.shape}")
        L0 = np.ascontiguousarray(np.broadcast_to(L0, (Y.shape[0], 3)))
    T, S = as_step_grid(plan.t, plan.save)
    workers = as_workers(plan.workers)
    cdef Py_ssize_t N = Y.shape[0], n = T.shape[0] - 1, i
    if N:
        check_nonzero_quaternions(np.ascontiguousarray(Y[:, :4]), "y0 (quaternion part)")
    bodies = rigid_body_list(plan.model, N)
    if len(bodies) == 1:
        bodies = bodies * N
    for i in range(N):
        if not (<RigidBody>bodies[i]).gyroscopic:
            raise ValueError("the implicit methods integrate the full Euler equations; "
                             "RigidBody(gyroscopic=False) is not supported")

    nfev = np.zeros(N, dtype=np.int_)
    cdef long[::1] nf = nfev
    L_out = np.empty((N, 3))
    cdef double[:, ::1] Lv = L_out
    cdef const double[:, ::1] L0v = L0 if L0 is not None else np.empty((1, 3))
    cdef ImpCfg g
    g.L0 = &L0v[0, 0] if L0 is not None else NULL
    g.L = &Lv[0, 0] if N else NULL
    _set_options(&g, spec, solver, tol, max_iter, max_substeps, bound, angle)
    cdef Stepper sp = make_stepper(&g, _begin, _advance, _store_row, _end, 7, 7, 7, True)
    sp.y0_row = True
    cdef ImplicitBody* bd = <ImplicitBody*>malloc(max(N, 1) * sizeof(ImplicitBody))
    cdef ImplicitCounters* cn = <ImplicitCounters*>malloc(max(N, 1) * sizeof(ImplicitCounters))
    cdef PyObject** tq = <PyObject**>malloc(max(N, 1) * sizeof(PyObject*))
    cdef bint* wdep = <bint*>malloc(max(N, 1) * sizeof(bint))
    if bd == NULL or cn == NULL or tq == NULL or wdep == NULL:
        free(bd)
        free(cn)
        free(tq)
        free(wdep)
        raise MemoryError()
    # one ImplicitBody per body keeps the loop trivial; its data (an eigen-solve for the
    # smallest moment) is computed once per run of equal models, not once per body
    try:
        for i in range(N):
            body = <RigidBody>bodies[i]
            if i > 0 and bodies[i] is bodies[i - 1]:
                bd[i] = bd[i - 1]
            else:
                _fill_body(body, &bd[i])
            _set_torque(body, &tq[i], &wdep[i])
        g.bodies = bd
        g.torques = tq
        g.w_dependent = wdep
        g.counters = cn
        g.nfev = &nf[0] if N else NULL
        y_out, w_out, statuses, failed, counts, _, _ = drive(&sp, T, S, Y, workers)
        subs = np.array([cn[i].substeps for i in range(N)], dtype=np.int64)
        iters = np.array([cn[i].iterations for i in range(N)], dtype=np.int64)
        itmax = max([cn[i].max_iterations for i in range(N)], default=0)
        resmax = max([cn[i].residual for i in range(N)], default=0.0)
        retries = max([cn[i].retries for i in range(N)], default=0)
    finally:
        free(bd)
        free(cn)
        free(tq)
        free(wdep)
    code, message = outcome(statuses, failed, T, [(<RigidBody>b).torque for b in bodies],
                            last=counts[:, 0])
    stats = _stats(n, int(nfev.max()) if N else 0, int(subs.max()) if N else 0,
                   int(iters.sum()), int(subs.sum()), itmax, resmax, retries, (code, message),
                   L_out)
    stats["per_body"] = per_body_counts(None, int(n), nfev)
    if N and n and subs.max() > WARN_SUBSTEPS * n:
        warnings.warn(
            f"{method}: {subs.max() / n:.3g} sub-steps per step on average: `dt` is long "
            "for this body's rates (a sub-step turns it at most `substep_angle`, less for an "
            "elongated body, or stays within the Kantorovich bound; "
            "docs/implicit-midpoint.md sec. 5); a shorter `dt` costs about the same and is "
            "more accurate", RuntimeWarning, stacklevel=3)
    return RunOutput(y_out, w_out, stats)


# ---- test and analysis helpers -------------------------------------------------------------

cdef ImplicitBody _body_from_inertia(inertia) except *:
    cdef ImplicitBody b
    _fill_body(RigidBody(inertia), &b)
    return b


def _vec3(x, name):
    return as_float_array(x, name, (3,), batch=False)


def _nonzero_dt(dt):
    try:
        dt = float(dt)
    except (TypeError, ValueError):
        raise TypeError(f"`dt` must be a float, got {type(dt).__name__}") from None
    if not np.isfinite(dt) or dt == 0.0:
        raise ValueError(f"`dt` must be finite and nonzero, got {dt!r}")
    return dt


def max_step(inertia, L_b, method="implicit_midpoint", bound="euclidean"):
    """Largest |dt| for which the Kantorovich condition h <= 1/2 holds (doc eq. (15)).

    Parameters
    ----------
    inertia : array_like, shape (3,) or (3, 3)
    L_b : array_like, shape (3,)
        Body angular momentum.
    method : str
        One of `METHODS`.
    bound : {"inertia", "euclidean"}
        Which closed-form bound (doc eqs. (13), (14)); the trapezoid always uses "euclidean".
    """
    code = _variant(method)
    *_, bd, _ = _options({"bound": bound})
    cdef ImplicitBody b = _body_from_inertia(inertia)
    cdef double[::1] L = _vec3(L_b, "L_b")
    return float(kantorovich_max_step(code, bd, &b, &L[0]))


def newton_trace(inertia, L_b, dt, method="implicit_midpoint", solver="newton", tol=DEFAULT_TOL,
                 max_iter=None, bound="euclidean"):
    """One implicit solve for l = dt L_b from v = 0, with its iterates and Kantorovich constants.

    Parameters
    ----------
    inertia : array_like, shape (3,) or (3, 3)
        Principal moments or SPD body inertia.
    L_b : array_like, shape (3,)
        Body angular momentum at the start of the step.
    dt : float
        Step (nonzero, either sign).  No sub-stepping is done here.
    method : str
        One of `METHODS`.
    solver : {"newton", "fixed-point"}
    tol, max_iter, bound
        As in `run`.

    Returns
    -------
    dict with ``iterates`` (k, 3) (v_1 ... v_k), ``status`` (0 converged), ``residual``,
    ``h`` (Kantorovich number), ``K`` and ``eta`` (beta folded into K, doc eq. (14)),
    ``radius`` ((1 - sqrt(1 - 2h)) / K when h <= 1/2, else nan), ``norm`` ("inertia":
    |x| = sqrt(x.I x), or "euclidean" for the trapezoid) and ``max_step`` (doc eq. (15)).
    """
    code = _variant(method)
    solver, tol, mi, _, bd, _ = _options({"solver": solver, "tol": tol, "bound": bound,
                                          **({"max_iter": max_iter} if max_iter is not None
                                             else {})})
    dt = _nonzero_dt(dt)
    cdef ImplicitBody b = _body_from_inertia(inertia)
    cdef double[::1] L = _vec3(L_b, "L_b")
    cdef ImplicitOptions o
    o.method = code
    o.solver = SOLVER_NEWTON if solver == "newton" else SOLVER_FIXED_POINT
    o.tol = tol
    o.max_iter = mi
    o.max_substeps = 1
    o.bound = bd
    o.substep_angle = 0.0
    cdef double[::1] lv = np.asarray(L) * dt
    trace = np.zeros((mi, 3))
    cdef double[:, ::1] tr = trace
    cdef double v[3]
    cdef double res = 0.0, K = 0.0, eta = 0.0, h
    cdef int it = 0, status
    status = implicit_solve(&o, &b, &lv[0], v, &it, &res, False, &tr[0, 0])
    h = kantorovich_h(o.method, bd, &b, &lv[0], &K, &eta)
    # h = 1/2 up to rounding at dt = max_step: the radius is then 1/K
    radius = (1.0 - np.sqrt(max(0.0, 1.0 - 2.0 * h))) / K if h <= 0.5 + 1e-12 and K > 0 else (
        0.0 if K == 0 else np.nan)
    return {"iterates": trace[:it].copy(), "status": int(status), "residual": float(res),
            "h": float(h), "K": float(K), "eta": float(eta), "radius": float(radius),
            "norm": "euclidean" if code == IMP_TRAPEZOID or bd else "inertia",
            "max_step": float(kantorovich_max_step(o.method, bd, &b, &L[0]))}


def residual_jacobian(inertia, l_vec, v, method="implicit_midpoint"):
    """F(v), the analytic Jacobian and the dual-number Jacobian of `implicit_residual`.

    For tests of doc eqs. (5), (8), (9).  Returns (F, J_analytic, J_dual), J of shape (3, 3).
    """
    cdef RigidBody rb = RigidBody(inertia)
    cdef double[::1] lv = _vec3(l_vec, "l_vec")
    cdef double[::1] vv = _vec3(v, "v")
    F = np.empty(3)
    J = np.empty((3, 3))
    Jd = np.empty((3, 3))
    cdef double[::1] Fv = F
    cdef double[:, ::1] Jv = J
    cdef double[:, ::1] Jdv = Jd
    cdef dual vd[3]
    cdef dual Fd[3]
    cdef int i, j, code = _variant(method)
    implicit_residual_jacobian(code, rb._Iinv, &lv[0], &vv[0], &Fv[0], &Jv[0, 0])
    seed_duals(&vv[0], 3, 0, vd)
    implicit_residual(code, rb._Iinv, &lv[0], vd, Fd)
    for i in range(3):
        for j in range(3):
            Jdv[i, j] = Fd[i].d[j]
    return F, J, Jd


# the implicit methods `run_fixed_single` takes (registry entries), their default options, and
# the built-in torques it takes (compiled: no Python error can come from them)
_FIXED_SPECS = {name: _methods.get(name, "rigid body") for name in METHODS}
_DEFAULT_OPTIONS = _options({})
_THIN_TORQUES = (_Constant, _Gravity, _GG)
