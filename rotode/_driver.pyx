"""The one time-loop driver of the fixed-grid methods and their status contract.

`drive` (cimport-able, rotode/_driver.pxd) runs a runner's `Stepper` over bodies and grid steps;
`outcome` turns the per-body status codes into the ``status``/``message`` every runner reports
(re-raising a Python error stored in a source).  docs/architecture.md draws the layers.
"""
import numpy as np

from rotode import methods as _methods
from rotode.events import _nan_error

from cpython.exc cimport PyErr_CheckSignals
from cpython.pyport cimport PY_SSIZE_T_MAX
from cython.parallel cimport prange, threadid
from libc.math cimport NAN, INFINITY, fabs, fmin, fmax, pow, nextafter, sqrt, isfinite
from libc.stdlib cimport malloc, calloc, realloc, free
from libc.string cimport memcpy
from posix.time cimport clock_gettime, timespec, CLOCK_MONOTONIC
cimport numpy as cnp
from rotode._loops cimport thread_count
from rotode.events cimport Event
from rotode._engine cimport EngineRun
from rotode.erk cimport (ERK, ERK_MAX_STAGES, ERK_MAX_N, ERK_MAX_POWERS, ERK_STANDARD,
                         ERK_DOP853, erk_step, erk_error_norm, erk_initial_step,
                         erk_dense_prepare, erk_dense)

cdef extern from *:
    """
    static inline int rotode_load_flag(const int* p) {
        return __atomic_load_n(p, __ATOMIC_RELAXED);
    }
    static inline void rotode_set_flag(int* p) { __atomic_store_n(p, 1, __ATOMIC_RELAXED); }
    """
    int rotode_load_flag(const int* p) noexcept nogil
    void rotode_set_flag(int* p) noexcept nogil

cnp.import_array()

__all__ = ["STATUS", "Kernel", "Engine", "outcome", "algebra_atol", "per_body_counts"]

# the one kernel enum (rotode/_driver.pxd) and the ERK pair kinds (rotode/erk.pxd) are the
# registry's codes
_methods.check_kernel_enum(Kernel)
if ((ERK_STANDARD, ERK_DOP853, ERK_MAX_STAGES, ERK_MAX_POWERS)
        != (_methods.PairKind.STANDARD.value, _methods.PairKind.DOP853.value,
            _methods.ERK_STAGES, _methods.MAX_POWERS)):
    raise ImportError("rotode/erk.pxd's pair kinds and sizes are not rotode.methods' PairKind, "
                      "ERK_STAGES and MAX_POWERS")

#: Public names of the status codes (docs/architecture.md, "status contract").
STATUS = {
    "ok": STATUS_OK, "nonfinite": STATUS_NONFINITE, "source_error": STATUS_SOURCE_ERROR,
    "unavailable": STATUS_UNAVAILABLE, "interrupted": STATUS_INTERRUPTED,
    "not_converged": STATUS_NOT_CONVERGED, "nonfinite_iterate": STATUS_NONFINITE_ITERATE,
    "too_many_substeps": STATUS_TOO_MANY_SUBSTEPS, "rotation_bound": STATUS_ROTATION_BOUND,
    "step_too_small": STATUS_STEP_TOO_SMALL, "max_steps": STATUS_MAX_STEPS,
    "terminated": STATUS_TERMINATED,
}

_REASONS = {
    STATUS_NONFINITE: "the state became non-finite (NaN or inf; step too large?)",
    STATUS_UNAVAILABLE: "a source could not provide a value",
    STATUS_INTERRUPTED: "the run was interrupted",
    STATUS_NOT_CONVERGED: "the implicit solve did not converge in `max_iter` iterations",
    STATUS_NONFINITE_ITERATE: "a non-finite iterate, state or Jacobian appeared",
    STATUS_TOO_MANY_SUBSTEPS: "the step needs more sub-steps than `max_substeps`",
    STATUS_ROTATION_BOUND: "the rotation over the step reached the bound of the method",
    STATUS_STEP_TOO_SMALL: "the required step size fell below the spacing of floats near t",
    STATUS_MAX_STEPS: "`max_steps` steps were taken before reaching the end",
    STATUS_NO_MEMORY: "a record of the run could not grow (out of memory)",
    STATUS_TERMINATED: "A termination event occurred.",
}

# Step-size controller of SciPy's explicit Runge-Kutta methods (Hairer, Norsett & Wanner 1993,
# sec. II.4): safety factor and limits of one step's change.
cdef double SAFETY = 0.9
cdef double MIN_FACTOR = 0.2
cdef double MAX_FACTOR = 10.0

cdef double POLL_SECONDS = 0.05      # signal checks at most this often (calling thread only)
cdef Py_ssize_t TRACE_FIRST = 64     # first rows of a step record (doubled when full)
cdef Py_ssize_t EVENTS_FIRST = 16    # first occurrences of a body's event record (doubled)


cdef struct Poll:
    # shared by the threads of a run, written only to stop it (its own cache lines)
    char pad0[64]
    int stop             # set: every body stops at its next tick (STATUS_INTERRUPTED)
    char pad1[60]
    void* errors         # borrowed list receiving the exception of a signal handler


cdef struct Clock:
    # one per thread (64 bytes, no false sharing): when to look at the clock and the stop flag
    int stride           # steps between ticks (adapts so that ticks are ~1-10 ms apart)
    int countdown
    double last_clock    # time of the last tick
    double last_check    # time of the last signal check (calling thread)
    char pad[40]


cdef inline double _now() noexcept nogil:
    cdef timespec ts
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return ts.tv_sec + 1e-9 * ts.tv_nsec


cdef void _check_signals(Poll* p) noexcept nogil:
    """Run Python's signal handlers; an exception they raise stops the run."""
    with gil:
        try:
            PyErr_CheckSignals()
        except BaseException as exc:
            (<list>p.errors).append(exc)
            rotode_set_flag(&p.stop)


cdef bint _tick(Clock* clk, Poll* p, bint poller) noexcept nogil:
    """Every `stride` steps of a thread: read the clock (the stride doubles while ticks come
    faster than 1 ms, halves when slower than 10 ms), check signals every POLL_SECONDS on the
    calling thread, and say whether the run must stop."""
    cdef double now = _now(), gap = now - clk.last_clock
    clk.last_clock = now
    if gap < 1e-3 and clk.stride < 65536:
        clk.stride *= 2
    elif gap > 1e-2 and clk.stride > 1:
        clk.stride //= 2
    clk.countdown = clk.stride
    if poller and now - clk.last_check >= POLL_SECONDS:
        clk.last_check = now
        _check_signals(p)
    return rotode_load_flag(&p.stop)


cdef inline int _check_row(const double* y, int k, const double* w) noexcept nogil:
    """STATUS_NONFINITE when an output row holds NaN or inf."""
    cdef int c
    for c in range(k):
        if not (y[c] - y[c] == 0.0):
            return STATUS_NONFINITE
    for c in range(3):
        if not (w[c] - w[c] == 0.0):
            return STATUS_NONFINITE
    return STATUS_OK


cdef inline int _store_first(const Stepper* s, Py_ssize_t i, double t, const double* y0,
                             const double* z, double* yo, double* wo,
                             double* work) noexcept nogil:
    """The row at t0: the stored state, or y0 itself when the stepper says so (y0_row)."""
    cdef int st = s.store(s.cfg, i, t, z, yo, wo, <void*>work)
    cdef int c
    if st == STATUS_OK and s.y0_row:
        for c in range(s.k):
            yo[c] = y0[c]
        for c in range(3):
            wo[c] = y0[4 + c]
    return st


cdef int _body(const Stepper* s, const Grid* g, Py_ssize_t i, const double* y0, double* yo,
               double* wo, int* status, Py_ssize_t* failed, long long* last, Poll* p,
               Clock* clk, bint poller) noexcept nogil:
    """The whole time loop of body i (OUT: yo[m*k], wo[m*3], status[0]; failed[0] and
    last[0]: the grid indices between which a failure happened)."""
    cdef double work[WORK_DOUBLES]
    cdef double z[STATE_MAX]
    cdef double K[ERK_MAX_STAGES * ERK_MAX_N]
    cdef double znew[ERK_MAX_N]
    cdef bint have_f = False
    cdef Py_ssize_t j = 0, jend, jr, slot = 0, fail = -1
    cdef int st, c
    cdef bint began = not rotode_load_flag(&p.stop)
    st = s.begin(s.cfg, i, y0, z, <void*>work) if began else STATUS_INTERRUPTED
    if st == STATUS_OK and g.m > 0 and g.save[0] == 0:
        st = _store_first(s, i, g.t[0], y0, z, yo, wo, work)
        if st == STATUS_OK:
            slot = 1
    last[0] = g.n
    if st != STATUS_OK:
        fail = 0
        last[0] = 0
    # chunks of steps up to the next output slot or the next tick, each advanced by the
    # runner's own loop (its step inlined there)
    while st == STATUS_OK and j < g.n:
        if slot >= g.m and not s.to_end:
            break
        jend = g.save[slot] if slot < g.m else g.n
        if jend - j > clk.countdown:
            jend = j + clk.countdown
        if s.erk == NULL:
            st = s.advance(s.cfg, i, g.t, j, jend, z, <void*>work, &jr)
        else:
            jr = j
            while jr < jend:
                st = _erk_fixed(s, i, g.t[jr], g.t[jr + 1], z, K, znew, &have_f, work)
                for c in range(s.nz):
                    if st == STATUS_OK and not (z[c] - z[c] == 0.0):
                        st = STATUS_NONFINITE
                if st == STATUS_NONFINITE:    # found at its step: name that step alone
                    clk.countdown -= <int>(jr - j)
                    j = jr
                    jr += 1
                if st != STATUS_OK:
                    break
                jr += 1
        clk.countdown -= <int>(jr - j)
        if st == STATUS_NONFINITE:    # somewhere in steps j .. jr - 1: name the range
            fail = j
            last[0] = jr
            break
        j = jr
        if st != STATUS_OK:
            fail = j
            last[0] = j + 1
            break
        if (clk.countdown <= 0 and _tick(clk, p, poller)) or rotode_load_flag(&p.stop):
            st = STATUS_INTERRUPTED
            fail = j
            last[0] = j
            break
        if slot < g.m and g.save[slot] == j:
            st = s.store(s.cfg, i, g.t[j], z, &yo[slot * s.k], &wo[3 * slot], <void*>work)
            if st == STATUS_OK:
                st = _check_row(&yo[slot * s.k], s.k, &wo[3 * slot])
            if st != STATUS_OK:
                fail = j - 1
                last[0] = j
                break
            slot += 1
    while slot < g.m:                  # after a failure: NaN, never silently wrong numbers
        for c in range(s.k):
            yo[slot * s.k + c] = NAN
        for c in range(3):
            wo[3 * slot + c] = NAN
        slot += 1
    if s.end != NULL and began:
        s.end(s.cfg, i, st, z, <void*>work)
    if st == STATUS_SOURCE_ERROR:     # a Python error: the caller raises it, stop the others
        rotode_set_flag(&p.stop)
    status[0] = st
    failed[0] = fail
    return st


cdef struct Ticker:
    Clock* clk
    Poll* p
    bint poller


cdef int _engine_tick(void* ctx) noexcept nogil:
    """The specialised engine's poll: `_tick` of the body's thread."""
    cdef Ticker* tk = <Ticker*>ctx
    return _tick(tk.clk, tk.p, tk.poller)


cdef void _body_engine(const Stepper* s, const Grid* g, Py_ssize_t i, const double* y0,
                       double* yo, double* wo, int* status, Py_ssize_t* failed,
                       double* fail_t, long long* counts, Poll* p, Clock* clk,
                       bint poller) noexcept nogil:
    """Body i by the specialised engine (`Stepper.body`), with the driver's grid, control,
    polling and status contract (OUT: as `_body_adaptive`)."""
    cdef const Control* C = s.control
    cdef EngineRun run
    cdef Ticker tk
    cdef int st
    tk.clk = clk
    tk.p = p
    tk.poller = poller
    run.t = g.t
    run.n = g.n
    run.save = g.save
    run.m = g.m
    run.y0 = y0
    run.yo = yo
    run.wo = wo
    run.rtol = C.rtol
    run.atol = C.atol
    run.first_step = C.first_step
    run.max_step = C.max_step
    run.max_steps = C.max_steps
    run.t_eval = C.t_eval
    run.countdown = &clk.countdown
    run.tick = _engine_tick
    run.tick_ctx = <void*>&tk
    run.accepted = run.rejected = run.nfev = run.stores = 0
    run.t_end = g.t[0]
    cdef Py_ssize_t c
    if rotode_load_flag(&p.stop):
        st = STATUS_INTERRUPTED
        for c in range(g.m * s.k):
            yo[c] = NAN
        for c in range(g.m * 3):
            wo[c] = NAN
    else:
        st = s.body(s.cfg, i, &run)
    status[0] = st
    failed[0] = run.accepted if st != STATUS_OK else -1
    fail_t[0] = run.t_end
    counts[0] = run.accepted
    counts[1] = run.rejected
    counts[2] = run.nfev


cdef inline void _one(const Stepper* s, const Grid* g, Py_ssize_t i, const double* y0,
                      double* yo, double* wo, int* status, Py_ssize_t* failed, double* fail_t,
                      long long* counts, Poll* p, Clock* clk, bint poller,
                      bint adaptive, Trace* tr, double* h_next) noexcept nogil:
    if adaptive and s.body != NULL and tr == NULL and h_next == NULL and s.events == NULL:
        _body_engine(s, g, i, y0, yo, wo, status, failed, fail_t, counts, p, clk, poller)
    elif adaptive:
        _body_adaptive(s, g, i, y0, yo, wo, status, failed, fail_t, counts, p, clk, poller, tr,
                       h_next)
    else:
        _body(s, g, i, y0, yo, wo, status, failed, counts, p, clk, poller)
        fail_t[0] = g.t[failed[0]] if failed[0] >= 0 else g.t[0]


cdef int _erk_fixed(const Stepper* s, Py_ssize_t i, double t0, double t1, double* z,
                    double* K, double* znew, bint* have_f, double* work) noexcept nogil:
    """One fixed step of an explicit Runge-Kutta pair; its FSAL stage is kept for the next."""
    cdef const ERK* T = s.erk
    cdef int st, k
    if not have_f[0]:
        st = s.deriv(s.cfg, i, t0, z, K, <void*>work)
        if st != STATUS_OK:
            return st
    st = erk_step(T, s.deriv, s.cfg, i, <void*>work, s.nz, t0, t1 - t0, t0 + (t1 - t0), z, K,
                  znew)
    if st == STATUS_OK:
        st = s.deriv(s.cfg, i, t1, znew, K, <void*>work)      # f(t1, y1): the next K[0]
    have_f[0] = st == STATUS_OK
    for k in range(s.nz):
        z[k] = znew[k]
    if have_f[0] and s.accept != NULL:
        s.accept(s.cfg, i, z, K, <void*>work)
    return st


cdef int _body_adaptive(const Stepper* s, const Grid* g, Py_ssize_t i, const double* y0,
                        double* yo, double* wo, int* status, Py_ssize_t* failed,
                        double* fail_t, long long* counts, Poll* p, Clock* clk,
                        bint poller, Trace* tr, double* h_next) noexcept nogil:
    """Body i with error-controlled steps; the grid holds the output times only (OUT: counts
    [accepted, rejected, evaluations]; tr, when not NULL, every step)."""
    cdef const ERK* T = s.erk
    cdef const Control* C = s.control
    cdef double work[WORK_DOUBLES]
    cdef double z[STATE_MAX]
    cdef double znew[ERK_MAX_N]
    cdef double zd[STATE_MAX]
    cdef double K[ERK_MAX_STAGES * ERK_MAX_N]
    cdef double F[7 * ERK_MAX_N]
    cdef double t = g.t[0], tf = g.t[g.n], direction, h, h_abs, t_new, err, factor, tt
    cdef double min_step
    cdef Py_ssize_t slot = 0, accepted = 0, rejected = 0
    cdef long long nfev = 0
    cdef double t_end, angle = 0.0
    cdef double g_old[EVENTS_MAX]
    cdef double g_prev[EVENTS_MAX]              # g at the previous step's start (t_prev)
    cdef double t_prev = NAN
    cdef long long occurrences[EVENTS_MAX]
    cdef double row[STATE_MAX]
    cdef double wrow[3]
    cdef bint terminated = False
    cdef int st, c, n = s.nz
    cdef bint pair = s.trial == NULL                # an explicit Runge-Kutta pair
    cdef double exponent = T.exponent if pair else s.exponent
    cdef bint ok, prepared
    cdef bint on_stop = False                      # the step ends on one of s.stops
    cdef double t_in                               # the time of the pair's stages at c = 1
    # t_eval holds t0: SciPy evaluates the first step's dense output for it
    cdef bint t0_requested = C.t_eval and g.m > 0 and g.save[0] == 0
    direction = 1.0 if tf > t else -1.0
    for c in range(7 * ERK_MAX_N):
        F[c] = 0.0
    if s.events != NULL:            # (counts and t_stop are reported whatever happens next)
        s.events.t_stop[i] = NAN
        for c in range(s.events.n):
            occurrences[c] = 0
            g_prev[c] = NAN
    cdef bint began = not rotode_load_flag(&p.stop)
    st = s.begin(s.cfg, i, y0, z, <void*>work) if began else STATUS_INTERRUPTED
    if st == STATUS_OK and g.m > 0 and g.save[0] == 0:
        st = _store_first(s, i, t, y0, z, yo, wo, work)
        if st == STATUS_OK:
            st = _check_row(yo, s.k, wo)
        if st == STATUS_OK:
            slot = 1
    if st == STATUS_OK and tr != NULL:
        tr.n = 1
        tr.t[0] = t
        st = _store_first(s, i, t, y0, z, tr.y, tr.w, work)
    if st == STATUS_OK and s.events != NULL:
        st = _event_values(s, i, t, z, row, wrow, g_old, -1, work, False)
    if st == STATUS_OK and pair:
        if tr != NULL and tr.K0_in:         # (a continued run: the stage its accept left)
            for c in range(n):
                K[c] = tr.K0[c]
        else:
            st = s.deriv(s.cfg, i, inside_from(s, t, direction), z, K, <void*>work)
            nfev += 1
    if st == STATUS_OK:
        if C.first_step > 0.0:
            h_abs = C.first_step        # (the loop clips the step that would pass tf)
        elif pair:
            nfev += 1
            st = erk_initial_step(T, s.deriv, s.cfg, i, <void*>work, n, t, z, K, direction,
                                  fabs(tf - t), C.rtol, C.atol, C.ref, C.max_step, &h_abs)
        else:
            st = s.first(s.cfg, i, t, z, direction, fabs(tf - t), C, &h_abs, <void*>work)
    while st == STATUS_OK and direction * (tf - t) > 0.0:
        clk.countdown -= 1
        if clk.countdown <= 0 and _tick(clk, p, poller):
            st = STATUS_INTERRUPTED
            break
        if accepted >= C.max_steps:
            st = STATUS_MAX_STEPS
            break
        min_step = 10.0 * fabs(nextafter(t, direction * INFINITY) - t)
        if h_abs > C.max_step:
            h_abs = C.max_step
        elif h_abs < min_step:
            h_abs = min_step
        ok = False
        while True:
            if h_abs < min_step:
                st = STATUS_STEP_TOO_SMALL
                break
            t_new = t + h_abs * direction
            if direction * (t_new - tf) > 0.0:
                t_new = tf
            if s.n_stops > 0:
                t_new = clip_to_stop(s.stops, s.n_stops, t, t_new, direction, &on_stop)
            h = t_new - t
            h_abs = fabs(h)
            if pair:
                nfev += T.s                        # stages 1..s-1 and the FSAL stage
                t_in = t_new
                if on_stop and s.stops_jump:       # the equations jump at t_new
                    t_in = nextafter(t_new, t)
                st = erk_step(T, s.deriv, s.cfg, i, <void*>work, n, t, h,
                              t + h if t_in == t_new else t_in, z, K, znew)
                if st == STATUS_OK:
                    st = s.deriv(s.cfg, i, t_in, znew, &K[T.s * n], <void*>work)
                if st == STATUS_OK:
                    err = erk_error_norm(T, n, h, K, z, znew, C.rtol, C.atol, C.ref)
            else:
                nfev += s.evals
                st = s.trial(s.cfg, i, t, h, z, znew, C, &err, <void*>work)
            if st != STATUS_OK:
                break
            if s.max_angle > 0.0:
                angle = sqrt(znew[0] * znew[0] + znew[1] * znew[1] + znew[2] * znew[2])
                if angle > s.max_angle:           # too far for the step's local coordinates
                    h_abs = h_abs * fmax(MIN_FACTOR, SAFETY * s.max_angle / angle)
                    ok = True
                    rejected += 1
                    continue
            if err < 1.0:
                factor = MAX_FACTOR if err == 0.0 else fmin(MAX_FACTOR,
                                                            SAFETY * pow(err, exponent))
                if ok:                    # (ok marks a rejection before this acceptance)
                    factor = fmin(1.0, factor)
                if s.max_angle > 0.0 and angle * factor > s.max_angle:
                    factor = s.max_angle / angle      # (a rate that the estimate finds exact)
                h_abs = h_abs * factor
                break
            h_abs = h_abs * fmax(MIN_FACTOR, SAFETY * pow(err, exponent))
            ok = True
            rejected += 1
        if st != STATUS_OK:
            break
        for c in range(n):
            if not (znew[c] - znew[c] == 0.0):
                st = STATUS_NONFINITE
        if st != STATUS_OK:
            break
        prepared = False
        t_end = t_new                             # a terminal event may end the body earlier
        if s.events != NULL:
            st = _events_in_step(s, T, i, t, h, t_new, z, znew, K, F, &prepared, &nfev,
                                 g_old, t_prev, g_prev, occurrences, zd, row, wrow, &t_end,
                                 work)
            if st == STATUS_TERMINATED:
                terminated = True
                st = STATUS_OK
            if st != STATUS_OK:
                break
        if pair and C.t_eval and not prepared and (t0_requested or (
                slot < g.m and direction * (g.t[g.save[slot]] - t_end) <= 0.0)):
            # as SciPy: a step holding a requested time (t_new itself too) prepares its
            # interpolant, counted in nfev, whether or not the value needs it
            st = _prepare_dense(s, T, i, t, h, z, znew, K, F, &prepared, &nfev, work)
            if st != STATUS_OK:
                break
        t0_requested = False
        while slot < g.m and direction * (g.t[g.save[slot]] - t_end) <= 0.0:
            tt = g.t[g.save[slot]]
            st = _dense_at(s, T, i, t, h, t_new, z, znew, K, F, &prepared, &nfev, tt, zd,
                           work)
            if st != STATUS_OK:
                break
            st = s.store(s.cfg, i, tt, zd, &yo[slot * s.k], &wo[3 * slot], <void*>work)
            if st == STATUS_OK:
                st = _check_row(&yo[slot * s.k], s.k, &wo[3 * slot])
            if st != STATUS_OK:
                break
            slot += 1
        if st != STATUS_OK:
            break
        if terminated:
            st = _dense_at(s, T, i, t, h, t_new, z, znew, K, F, &prepared, &nfev, t_end, zd,
                           work)
            if st == STATUS_OK and tr != NULL:
                st = _trace_step(s, T, tr, i, t, h, t_new, z, znew, K, F, &prepared, &nfev,
                                 t_end, zd, work)
            for c in range(n):
                z[c] = zd[c]
            t = t_end
            accepted += 1
            if st == STATUS_OK:
                st = STATUS_TERMINATED
            break
        if tr != NULL:
            st = _trace_step(s, T, tr, i, t, h, t_new, z, znew, K, F, &prepared, &nfev, t_new,
                             znew, work)
            if st != STATUS_OK:
                break
        for c in range(n):
            z[c] = znew[c]
            if pair:
                K[c] = K[T.s * n + c]            # FSAL: f(t_new, y_new) starts the next step
        if s.accept != NULL:
            s.accept(s.cfg, i, z, K, <void*>work)
        if pair and on_stop and s.stops_jump and t_new != tf:   # f after the jump, not FSAL
            nfev += 1
            st = s.deriv(s.cfg, i, nextafter(t_new, direction * INFINITY), z, K, <void*>work)
            if st != STATUS_OK:
                break
        t_prev = t
        t = t_new
        accepted += 1
    while slot < g.m:
        for c in range(s.k):
            yo[slot * s.k + c] = NAN
        for c in range(3):
            wo[3 * slot + c] = NAN
        slot += 1
    if s.end != NULL and began:
        s.end(s.cfg, i, st, z, <void*>work)
    if st == STATUS_SOURCE_ERROR or st == STATUS_NO_MEMORY:   # (the caller raises)
        rotode_set_flag(&p.stop)
    status[0] = st
    if s.events != NULL:
        for c in range(s.events.n):
            s.events.count[i * s.events.n + c] = occurrences[c]
        if st == STATUS_TERMINATED:
            s.events.t_stop[i] = t
        _store_final(s, i, st, t, z, work)
    failed[0] = accepted if st != STATUS_OK and st != STATUS_TERMINATED else -1
    fail_t[0] = t
    counts[0] = accepted
    counts[1] = rejected
    counts[2] = nfev
    if h_next != NULL:
        h_next[0] = h_abs
    if tr != NULL and pair:
        for c in range(n):
            tr.K0[c] = K[c]
    return st


cdef void _store_final(const Stepper* s, Py_ssize_t i, int st, double t, const double* z,
                       double* work) noexcept nogil:
    """Body i's row where its run ended (t: tf, or a terminal event's time; z the state
    there) into the events' final rows; NaN after a failure (OUT: y_stop, w_stop)."""
    cdef double* y = &s.events.y_stop[i * s.k]
    cdef double* w = &s.events.w_stop[3 * i]
    cdef int c
    if st == STATUS_OK or st == STATUS_TERMINATED:
        if s.store(s.cfg, i, t, z, y, w, <void*>work) == STATUS_OK:
            return
    for c in range(s.k):
        y[c] = NAN
    for c in range(3):
        w[c] = NAN


cdef inline int _prepare_dense(const Stepper* s, const ERK* T, Py_ssize_t i, double t,
                               double h, const double* z, const double* znew, double* K,
                               double* F, bint* prepared, long long* nfev,
                               double* work) noexcept nogil:
    """The pair's interpolant of the accepted step, once per step (DOP853: its three extra
    stages, counted in nfev) (OUT: F; prepared, nfev)."""
    cdef int st
    if prepared[0]:
        return STATUS_OK
    nfev[0] += T.s_dense - T.s - 1 if T.s_dense > T.s else 0
    st = erk_dense_prepare(T, s.deriv, s.cfg, i, <void*>work, s.nz, t, h, z, znew, K, F)
    prepared[0] = st == STATUS_OK
    return st


cdef int _dense_at(const Stepper* s, const ERK* T, Py_ssize_t i, double t, double h,
                   double t_new, const double* z, const double* znew, double* K, double* F,
                   bint* prepared, long long* nfev, double tt, double* zd,
                   double* work) noexcept nogil:
    """The state at tt inside the accepted step t -> t_new (OUT: zd; prepared, nfev)."""
    cdef int c, st
    if tt == t_new:
        for c in range(s.nz):
            zd[c] = znew[c]
        return STATUS_OK
    if s.trial != NULL:
        nfev[0] += s.evals
        return s.dense(s.cfg, i, t, h, z, znew, tt, zd, <void*>work)
    st = _prepare_dense(s, T, i, t, h, z, znew, K, F, prepared, nfev, work)
    if st != STATUS_OK:
        return st
    erk_dense(T, s.nz, (tt - t) / h, z, F, zd)
    return STATUS_OK


cdef int _event_values(const Stepper* s, Py_ssize_t i, double t, const double* z, double* row,
                       double* wrow, double* g, int only, double* work,
                       bint keep_row) noexcept nogil:
    """g of every event (only: just that one) at the state z of time t (OUT: g, and row, wrow
    unless the stepper's row is its state and not keep_row)."""
    cdef const EventSet* E = s.events
    cdef const double* y = row
    cdef const double* w = wrow
    cdef int e, c, st
    if s.row_is_state:
        if keep_row:
            for c in range(s.k):
                row[c] = z[c]
            for c in range(3):
                wrow[c] = z[4 + c]
        else:
            y = z
            w = &z[4]
    else:
        if E.needs_w or s.store_row == NULL:
            st = s.store(s.cfg, i, t, z, row, wrow, <void*>work)
        else:
            st = s.store_row(s.cfg, i, t, z, row, wrow, <void*>work)
        if st != STATUS_OK:
            return st
    for e in range(only if only >= 0 else 0, only + 1 if only >= 0 else E.n):
        g[e] = (<Event>E.ev[e]).evaluate_body(i, t, y, s.k, w)
        if g[e] != g[e]:
            _event_nan(E.ev[e], t)             # (a Python event stored its error already)
            return STATUS_SOURCE_ERROR
    return STATUS_OK


cdef void _event_nan(void* ev, double t) noexcept nogil:
    """An event returned NaN: unless it stored its own error (a Python event), store a
    ValueError naming it and the time, which the caller raises (`outcome`)."""
    with gil:
        if (<Event>ev).error is None:
            try:
                (<Event>ev).error = _nan_error(<Event>ev, t, -1)
            except BaseException as exc:     # (its repr failed past the fallback: say that)
                (<Event>ev).error = exc


cdef enum:
    ROW = STATE_MAX + 3             # an output row and its body angular velocity


cdef inline double _quadratic_root(double t_prev, double g_prev, double t, double g0,
                                   double t_new, double g1) noexcept nogil:
    """The root inside (t, t_new) of the parabola through (t_prev, g_prev), (t, g0) and
    (t_new, g1), g0 and g1 of opposite signs (NaN when rounding leaves none there)."""
    cdef double h = t_new - t, s01 = (g1 - g0) / h
    cdef double c = (s01 - (g0 - g_prev) / (t - t_prev)) / (t_new - t_prev)
    cdef double b = s01 - c * h                 # g0 + b u + c u^2, u = x - t
    cdef double d = b * b - 4.0 * c * g0, q, u
    if not d >= 0.0:
        return NAN
    q = -0.5 * (b + (sqrt(d) if b >= 0.0 else -sqrt(d)))
    if q != 0.0:
        u = g0 / q                              # (the two roots: g0 / q and q / c)
        if 0.0 < u / h < 1.0:
            return t + u
    if c != 0.0:
        u = q / c
        if 0.0 < u / h < 1.0:
            return t + u
    return NAN


cdef inline int _root_point(const Stepper* s, const ERK* T, Py_ssize_t i, double t, double h,
                            double t_new, const double* z, const double* znew, double* K,
                            double* F, bint* prepared, long long* nfev, int e, double x,
                            double* zd, double* row, double* g, double* work) noexcept nogil:
    """g of event e at time x of the accepted step, on its dense output (OUT: g[e]; row[:k]
    and row[STATE_MAX:][:3], the output row there)."""
    cdef int st = _dense_at(s, T, i, t, h, t_new, z, znew, K, F, prepared, nfev, x, zd, work)
    if st != STATUS_OK:
        return st
    return _event_values(s, i, x, zd, row, &row[STATE_MAX], g, e, work, True)


cdef int _event_root(const Stepper* s, const ERK* T, Py_ssize_t i, double t, double h,
                     double t_new, const double* z, const double* znew, double* K, double* F,
                     bint* prepared, long long* nfev, int e, double g0, double g1,
                     double t_prev, double g_prev, double* zd, double* g_try, double* root,
                     double* row, bint* have_row, double* work) noexcept nogil:
    """The time in the accepted step t -> t_new at which event e changes sign, g(t) = g0 and
    g(t_new) = g1 having opposite signs or one of them zero (OUT: root; and when have_row,
    row[:k] and row[STATE_MAX:][:3]: the output row there, already computed).

    Brent's method (Algorithms for Minimization without Derivatives, 1973, ch. 4; the form of
    SciPy's brentq) on the dense output: inverse quadratic or linear interpolation inside the
    bracket, bisection when that does not shrink it fast enough, and every new point at least
    2 ulp (of 1 + |t|) from the last one, so that the bracket closes to 4 ulp; the root is the
    end with the smaller |g|, or a point where g == 0.  Once the iteration converges fast, its
    next point is accepted alone when g there puts the root within 1 ulp of it by the last
    secant's slope (a residual test; else two points 1 ulp either side of the next estimate
    close the bracket).  Its first point is the root of the
    parabola through the previous step's start (t_prev, g_prev; NaN: none) and the two ends
    when that is close enough to the end with the smaller |g|, else the secant's (a long step
    across a curved g: about one evaluation fewer)."""
    cdef double xpre = t, fpre = g0, xcur = t_new, fcur = g1, xblk = 0.0, fblk = 0.0
    cdef double spre = 0.0, scur = 0.0, sbis, stry, dpre, dblk, p, lim
    cdef double delta = 2.0 * 2.220446049250313e-16 * (1.0 + fmax(fabs(t), fabs(t_new)))
    cdef double rows[2 * ROW]                   # the rows of the last two points evaluated
    cdef double xrow[2]
    cdef double xnext = 0.0, fnext = 0.0, slope
    cdef int st, c, q, n = 0
    cdef bint first = True, pending = False, tried = False, fast, alone
    have_row[0] = False
    if fpre == 0.0:
        root[0] = xpre
        return STATUS_OK
    for _ in range(200):
        if fpre != 0.0 and fcur != 0.0 and (fpre > 0.0) != (fcur > 0.0):
            xblk = xpre                         # the bracket: [xcur, xblk] (either order)
            fblk = fpre
            spre = xcur - xpre
            scur = spre
        if fabs(fblk) < fabs(fcur):             # xcur: the end with the smaller |g|
            xpre = xcur
            xcur = xblk
            xblk = xpre
            fpre = fcur
            fcur = fblk
            fblk = fpre
        sbis = 0.5 * (xblk - xcur)
        if fcur == 0.0 or fabs(sbis) <= delta:  # (the bracket is at most 4 ulp wide)
            break
        if pending:                             # the second point of a pair
            pending = False
            xpre = xcur
            fpre = fcur
            xcur = xnext
            fcur = fnext
            continue
        p = NAN
        if first and g_prev == g_prev:
            p = _quadratic_root(t_prev, g_prev, t, g0, t_new, g1)
            stry = p - xcur
            if p == p and 2.0 * fabs(stry) < 3.0 * fabs(sbis) - delta:
                spre = scur
                scur = stry
            else:
                p = NAN
        first = False
        if p == p:
            pass
        elif fabs(spre) > delta and fabs(fcur) < fabs(fpre):
            if xpre == xblk:                    # secant
                stry = -fcur * (xcur - xpre) / (fcur - fpre)
            else:                               # inverse quadratic interpolation (with the
                dpre = fpre - fcur              # slopes' divisions folded into one)
                dblk = fblk - fcur
                stry = (-fcur * (fblk * dblk * (xpre - xcur) - fpre * dpre * (xblk - xcur))
                        / (dblk * dpre * (fblk - fpre)))
            lim = 3.0 * fabs(sbis) - delta
            if fabs(spre) < lim:
                lim = fabs(spre)
            if 2.0 * fabs(stry) < lim:          # (NaN or a long step: bisection)
                spre = scur
                scur = stry
            else:
                spre = sbis
                scur = sbis
        else:
            spre = sbis
            scur = sbis
        slope = (fcur - fpre) / (xcur - xpre) if xcur != xpre else 0.0
        xpre = xcur
        fpre = fcur
        fast = (fabs(scur) > delta and scur * scur < delta * fabs(spre)
                and fabs(scur) + delta < 2.0 * fabs(sbis))
        alone = fast and not tried
        if alone:
            # converging fast enough that xcur + scur is within delta/2 of the root: that
            # point alone, accepted when g there puts the root within delta/2 of it by the
            # last secant's slope (g's rounding is then far below |g'| delta/2)
            tried = True
            xcur = xcur + scur
        elif fast:
            # still converging fast: the points delta/2 either side of xcur + scur, evaluated
            # back to back (independent, their latencies overlap), close the bracket at once
            lim = 0.5 * delta if scur > 0.0 else -0.5 * delta
            xnext = xcur + scur + lim
            xcur = xcur + scur - lim
            for q in range(2):
                c = n & 1
                n += 1
                xrow[c] = xcur if q == 0 else xnext
                st = _root_point(s, T, i, t, h, t_new, z, znew, K, F, prepared, nfev, e,
                                 xrow[c], zd, &rows[c * ROW], g_try, work)
                if st != STATUS_OK:
                    return st
                if q == 0:
                    fcur = g_try[e]
                else:
                    fnext = g_try[e]
            pending = True
            continue
        elif fabs(scur) > delta:
            xcur = xcur + scur
        else:
            xcur = xcur + (delta if sbis > 0.0 else -delta)
        c = n & 1
        n += 1
        st = _root_point(s, T, i, t, h, t_new, z, znew, K, F, prepared, nfev, e, xcur, zd,
                         &rows[c * ROW], g_try, work)
        if st != STATUS_OK:
            return st
        xrow[c] = xcur
        fcur = g_try[e]
        if alone:
            if fcur == 0.0 or fabs(fcur) < 0.5 * delta * fabs(slope):
                break
        elif fabs(xcur - xpre) < 1e-6 * fabs(h) and (
                fcur == 0.0 or fabs(fcur) < 0.5 * delta * fabs((fcur - fpre) / (xcur - xpre))):
            break                               # the same residual test, on a close secant
    root[0] = xcur
    for c in range(2 if n >= 2 else n):
        if xrow[c] == xcur:
            for q in range(ROW):
                row[q] = rows[c * ROW + q]
            have_row[0] = True
            break
    return STATUS_OK


cdef int _events_in_step(const Stepper* s, const ERK* T, Py_ssize_t i, double t, double h,
                         double t_new, const double* z, const double* znew, double* K,
                         double* F, bint* prepared, long long* nfev, double* g_old,
                         double t_prev, double* g_prev, long long* occurrences, double* zd,
                         double* row, double* wrow, double* t_end,
                         double* work) noexcept nogil:
    """Locate the events of the accepted step t -> t_new (SciPy's rule for a sign change and
    its direction; roots by Brent's method on the dense output to 4 ulp, `_event_root`),
    record them in time order and stop at a terminal one: t_end = its time, STATUS_TERMINATED
    (IN/OUT: g_prev and g_old become g(t) and g(t_new); occurrences)."""
    cdef const EventSet* E = s.events
    cdef double g_new[EVENTS_MAX]
    cdef double g_try[EVENTS_MAX]
    cdef double te[EVENTS_MAX]
    cdef double rows[EVENTS_MAX * ROW]          # the row at te[j] when found[j]
    cdef bint found[EVENTS_MAX]
    cdef int order[EVENTS_MAX]
    cdef int at[EVENTS_MAX]                     # the slot of rows and found of te[j]
    cdef int e, j, m = 0, st, it, dirn, term, q, a
    cdef double c, direction = 1.0 if h > 0 else -1.0
    cdef long long slot
    cdef Py_ssize_t b
    st = _event_values(s, i, t_new, znew, row, wrow, g_new, -1, work, False)
    if st != STATUS_OK:
        return st
    for e in range(E.n):
        dirn = (<Event>E.ev[e]).direction
        if not (((g_old[e] <= 0.0 and g_new[e] >= 0.0) and dirn >= 0)
                or ((g_old[e] >= 0.0 and g_new[e] <= 0.0) and dirn <= 0)):
            continue
        if g_old[e] == 0.0 and g_new[e] == 0.0:
            continue                            # no crossing: g stays at zero
        st = _event_root(s, T, i, t, h, t_new, z, znew, K, F, prepared, nfev, e, g_old[e],
                         g_new[e], t_prev, g_prev[e], zd, g_try, &te[m], &rows[m * ROW],
                         &found[m], work)
        if st != STATUS_OK:
            return st
        order[m] = e
        m += 1
    for e in range(E.n):
        g_prev[e] = g_old[e]
        g_old[e] = g_new[e]
    if m == 0:
        return STATUS_OK
    if s.trial == NULL:         # as SciPy: an active event prepares the step's interpolant
        st = _prepare_dense(s, T, i, t, h, z, znew, K, F, prepared, nfev, work)
        if st != STATUS_OK:
            return st
    for j in range(m):
        at[j] = j
    for j in range(1, m):                       # the occurrences in time order
        e = order[j]
        c = te[j]
        a = at[j]
        it = j
        while it > 0 and direction * (te[it - 1] - c) > 0.0:
            te[it] = te[it - 1]
            order[it] = order[it - 1]
            at[it] = at[it - 1]
            it -= 1
        te[it] = c
        order[it] = e
        at[it] = a
    for j in range(m):
        e = order[j]
        a = at[j]
        if not found[a]:
            st = _dense_at(s, T, i, t, h, t_new, z, znew, K, F, prepared, nfev, te[j], zd,
                           work)
            if st == STATUS_OK:
                st = s.store(s.cfg, i, te[j], zd, &rows[a * ROW], &rows[a * ROW + STATE_MAX],
                             <void*>work)
            if st != STATUS_OK:
                return st
        slot = occurrences[e]
        occurrences[e] += 1
        if slot < E.cap:
            b = i * E.n + e                     # (body i's records: this thread's alone)
            if slot >= E.room[b]:
                st = _event_grow(E, b, s.k)
                if st != STATUS_OK:
                    return st
            E.t_ev[b][slot] = te[j]
            for q in range(s.k):
                E.y_ev[b][slot * s.k + q] = rows[a * ROW + q]
        term = (<Event>E.ev[e]).terminal
        if term > 0 and occurrences[e] >= term:
            t_end[0] = te[j]
            return STATUS_TERMINATED
    return STATUS_OK


cdef int _trace_step(const Stepper* s, const ERK* T, Trace* tr, Py_ssize_t i, double t,
                     double h, double t_new, const double* z, const double* znew, double* K,
                     double* F, bint* prepared, long long* nfev, double t_row,
                     const double* zrow, double* work) noexcept nogil:
    """Append the accepted step t -> t_new to `tr` (and its interpolant when tr.F), its row
    at t_row (t_new, or the time of a terminal event inside the step, state zrow)."""
    cdef Py_ssize_t j = tr.n - 1               # the step's index
    cdef int st, c, n = s.nz
    if tr.n >= tr.cap:
        st = _trace_grow(tr, s.k, n)
        if st != STATUS_OK:
            return st
    if tr.F != NULL:
        st = _prepare_dense(s, T, i, t, h, z, znew, K, F, prepared, nfev, work)
        if st != STATUS_OK:
            return st
        for c in range(n):
            tr.z[j * n + c] = z[c]
        for c in range(7 * n):
            tr.F[j * 7 * n + c] = F[c]
        tr.h[j] = h
    st = s.store(s.cfg, i, t_row, zrow, &tr.y[tr.n * s.k], &tr.w[3 * tr.n], <void*>work)
    if st == STATUS_OK:
        st = _check_row(&tr.y[tr.n * s.k], s.k, &tr.w[3 * tr.n])
    tr.t[tr.n] = t_row
    tr.n += 1
    return st


cdef int _grow(void** p, Py_ssize_t items, Py_ssize_t size) noexcept nogil:
    """Make the malloc'ed block p[0] (or NULL) hold `items` items of `size` bytes (IN/OUT:
    p; left as it was, with STATUS_NO_MEMORY, when that fails)."""
    cdef void* q
    if items > PY_SSIZE_T_MAX // size:
        return STATUS_NO_MEMORY
    q = realloc(p[0], <size_t>(items * size))
    if q == NULL:
        return STATUS_NO_MEMORY
    p[0] = q
    return STATUS_OK


cdef int _trace_grow(Trace* tr, int k, int nz) noexcept nogil:
    """Twice the rows of the step record (TRACE_FIRST at first) (IN/OUT: tr)."""
    cdef Py_ssize_t cap = TRACE_FIRST if tr.cap < TRACE_FIRST else 2 * tr.cap
    if tr.cap > PY_SSIZE_T_MAX // 2:
        return STATUS_NO_MEMORY
    if (_grow(<void**>&tr.t, cap, sizeof(double)) != STATUS_OK
            or _grow(<void**>&tr.y, cap, k * sizeof(double)) != STATUS_OK
            or _grow(<void**>&tr.w, cap, 3 * sizeof(double)) != STATUS_OK):
        return STATUS_NO_MEMORY
    if tr.dense and (_grow(<void**>&tr.z, cap, nz * sizeof(double)) != STATUS_OK
                     or _grow(<void**>&tr.F, cap, 7 * nz * sizeof(double)) != STATUS_OK
                     or _grow(<void**>&tr.h, cap, sizeof(double)) != STATUS_OK):
        return STATUS_NO_MEMORY
    tr.cap = cap
    return STATUS_OK


cdef int _event_grow(const EventSet* E, Py_ssize_t b, int k) noexcept nogil:
    """Room for more occurrences in record b (body i, event e: b = i n + e) of E: twice as
    many (EVENTS_FIRST at first), at most E.cap.  Only the thread running body i calls it."""
    cdef Py_ssize_t room = E.room[b]
    room = EVENTS_FIRST if room < EVENTS_FIRST else (
        E.cap if room > E.cap // 2 else 2 * room)
    if room > E.cap:
        room = E.cap
    if (_grow(<void**>&E.t_ev[b], room, sizeof(double)) != STATUS_OK
            or _grow(<void**>&E.y_ev[b], room, k * sizeof(double)) != STATUS_OK):
        return STATUS_NO_MEMORY
    E.room[b] = room
    return STATUS_OK


cdef int engine_single(body_fn body, const void* cfg, EngineRun* run) except -2:
    """One body's run by the specialised engine on the calling thread, the GIL released and
    polled as `drive` polls (OUT: run); raises what a signal handler raised (Ctrl-C)."""
    cdef list errors = []
    cdef Poll p
    cdef Clock clk
    cdef Ticker tk
    cdef int st
    p.stop = 0
    p.errors = <void*>errors
    clk.stride = 1
    clk.countdown = 1
    clk.last_clock = _now()
    clk.last_check = clk.last_clock
    tk.clk = &clk
    tk.p = &p
    tk.poller = True
    run.countdown = &clk.countdown
    run.tick = _engine_tick
    run.tick_ctx = <void*>&tk
    with nogil:
        st = body(cfg, 0, run)
    if errors:
        raise errors[0]
    return st


cdef double _EPS100 = 100 * 2.220446049250313e-16
cdef double _TINY_NORM2 = 1e-300                 # (rotode._loops.TINY_NORM2)
cdef Py_ssize_t[2] _SAVE_ENDS = [0, 1]
cdef long long _DEFAULT_MAX_STEPS = 10_000_000   # (rotode._validation.DEFAULT_MAX_STEPS)


cdef inline bint _real(object x, double* out):
    """x as a double when it is a Python float or int (not bool) (OUT: out)."""
    if type(x) is float:
        out[0] = <double>x
        return True
    if type(x) is int:
        try:
            out[0] = <double>x
        except OverflowError:
            return False
        return True
    return False


cdef bint thin_call(object t_span, object y0, object rtol, object atol, int k, ThinCall* c,
                    EngineRun* run):
    """The thin path's arguments (_driver.pxd): True when `run` is ready but for its rows."""
    cdef double t0, tf, rt, at, n2
    cdef cnp.ndarray arr
    cdef const double* y
    cdef int j
    if not ((type(t_span) is tuple or type(t_span) is list) and len(t_span) == 2
            and _real(t_span[0], &t0) and _real(t_span[1], &tf)
            and isfinite(t0) and isfinite(tf) and t0 != tf):
        return False
    if rtol is None:
        rt = 1e-3
    elif type(rtol) is float and rtol >= _EPS100 and rtol != INFINITY:
        rt = rtol
    else:
        return False                  # (below 100 eps: the general path warns)
    if atol is None:
        at = 1e-6
    elif type(atol) is float and atol >= 0.0 and atol != INFINITY:
        at = atol
    else:
        return False
    if not (type(y0) is np.ndarray and k <= ERK_MAX_N):
        return False
    arr = <cnp.ndarray>y0
    if not (cnp.PyArray_TYPE(arr) == cnp.NPY_DOUBLE and cnp.PyArray_NDIM(arr) == 1
            and cnp.PyArray_DIMS(arr)[0] == k and cnp.PyArray_IS_C_CONTIGUOUS(arr)):
        return False
    y = <const double*>cnp.PyArray_DATA(arr)
    for j in range(k):
        if not isfinite(y[j]):
            return False
    n2 = y[0] * y[0] + y[1] * y[1] + y[2] * y[2] + y[3] * y[3]
    if not (n2 > _TINY_NORM2 and isfinite(n2)):
        return False
    c.grid[0] = t0
    c.grid[1] = tf
    for j in range(k):
        c.atol[j] = at
    run.t = c.grid
    run.n = 1
    run.save = _SAVE_ENDS
    run.m = 2
    run.y0 = y
    run.rtol = rt
    run.atol = c.atol
    run.first_step = 0.0
    run.max_step = INFINITY
    run.max_steps = _DEFAULT_MAX_STEPS
    run.t_eval = False
    return True


cdef object thin_rows(body_fn body, const void* cfg, int k, const ThinCall* c, EngineRun* run):
    """The rows of a thin call's run (_driver.pxd)."""
    y_out = np.empty((2, k))
    w_out = np.empty((2, 3))
    run.yo = <double*>cnp.PyArray_DATA(<cnp.ndarray>y_out)
    run.wo = <double*>cnp.PyArray_DATA(<cnp.ndarray>w_out)
    if engine_single(body, cfg, run) != STATUS_OK:
        return None
    return np.array([c.grid[0], c.grid[1]]), y_out, w_out


cdef int drive(const Stepper* s, object t, object save, object y0, object y_out, object w_out,
               object status, object failed, int workers, object counts=None,
               object fail_t=None, object trace=None, object h_next=None,
               object events=None) except -1:
    # events: {"objects": tuple of Event, "cap": occurrences kept per body and event, None:
    # all} (adaptive runs); the occurrences go to growable records of the driver's own, and
    # after the run the dict receives "count" ((N, n) int64: every occurrence, also those
    # beyond cap), "t_stop" ((N,): the time of a terminal event, NaN without one), "t" and
    # "y" (per body, per event: the kept times (c,) and rows (c, k), c = min(count, cap)),
    # "over" (some count exceeds cap) and "y_stop" (N, k), "w_stop" (N, 3): each body's row
    # where its run ended (at t_stop or tf; NaN after a failure).  trace: {"dense": bool},
    # see _driver.pxd.  Every record is the driver's (malloc), freed here whatever happens
    # (errors, interrupts).
    cdef EventSet es
    cdef EventSet* esp = NULL
    cdef Trace tr
    cdef Trace* trp = NULL
    cdef void* evp[EVENTS_MAX]
    cdef Py_ssize_t nbodies, size = 0, i
    es.t_ev = NULL
    es.y_ev = NULL
    es.room = NULL
    es.count = NULL
    es.t_stop = NULL
    es.y_stop = NULL
    es.w_stop = NULL
    tr.cap = 0
    tr.n = 0
    tr.dense = False
    tr.t = NULL
    tr.y = NULL
    tr.w = NULL
    tr.z = NULL
    tr.F = NULL
    tr.h = NULL
    objects = () if events is None else events["objects"]
    if len(objects):
        cap = events.get("cap")
        nbodies = len(y0)
        if s.control == NULL or len(objects) > EVENTS_MAX or (cap is not None and cap < 1):
            raise ValueError("the events do not match the stepper")
        for i in range(len(objects)):
            if not isinstance(objects[i], Event):
                raise TypeError("events must be rotode.events.Event objects")
            evp[i] = <void*>objects[i]
        es.ev = evp
        es.n = len(objects)
        es.needs_w = any([(<Event>e).needs_w for e in objects])
        es.cap = PY_SSIZE_T_MAX if cap is None else min(cap, PY_SSIZE_T_MAX)
        size = nbodies * es.n
    tr.K0_in = False
    for i in range(ERK_MAX_N):
        tr.K0[i] = 0.0
    if trace is not None:
        tr.dense = bool(trace.get("dense", False))
        K0 = trace.get("K0")
        if K0 is not None:
            K0 = np.ascontiguousarray(K0, dtype=np.float64)
            if K0.shape != (s.nz,) or s.erk == NULL:
                raise ValueError("the trace's K0 does not match the stepper")
            for i in range(s.nz):
                tr.K0[i] = K0[i]
            tr.K0_in = True
        trp = &tr
    try:
        if len(objects):
            es.t_ev = <double**>calloc(max(size, 1), sizeof(double*))
            es.y_ev = <double**>calloc(max(size, 1), sizeof(double*))
            es.room = <Py_ssize_t*>calloc(max(size, 1), sizeof(Py_ssize_t))
            es.count = <long long*>malloc(max(size, 1) * sizeof(long long))
            es.t_stop = <double*>malloc(max(nbodies, 1) * sizeof(double))
            es.y_stop = <double*>malloc(max(nbodies, 1) * s.k * sizeof(double))
            es.w_stop = <double*>malloc(max(nbodies, 1) * 3 * sizeof(double))
            if es.t_ev == NULL or es.y_ev == NULL or es.room == NULL or es.count == NULL \
                    or es.t_stop == NULL or es.y_stop == NULL or es.w_stop == NULL:
                raise MemoryError()
            esp = &es
        if trp != NULL and _trace_grow(trp, s.k, s.nz) != STATUS_OK:
            raise MemoryError()
        _drive(s, t, save, y0, y_out, w_out, status, failed, workers, counts, fail_t, trp,
               h_next, esp)
        if esp != NULL:
            _event_output(esp, nbodies, s.k, events)
        if trp != NULL:
            _trace_output(trp, s.k, s.nz, trace)
    finally:
        for i in range(size if es.t_ev != NULL and es.y_ev != NULL else 0):
            free(es.t_ev[i])
            free(es.y_ev[i])
        free(es.t_ev)
        free(es.y_ev)
        free(es.room)
        free(es.count)
        free(es.t_stop)
        free(es.y_stop)
        free(es.w_stop)
        free(tr.t)
        free(tr.y)
        free(tr.w)
        free(tr.z)
        free(tr.F)
        free(tr.h)
    return 0


cdef object _copy_out(const double* p, Py_ssize_t rows, Py_ssize_t cols):
    """A new (rows,) (cols 0) or (rows, cols) array holding the doubles at p."""
    cdef cnp.npy_intp dims[2]
    dims[0] = rows
    dims[1] = cols
    a = cnp.PyArray_EMPTY(1 if cols == 0 else 2, dims, cnp.NPY_DOUBLE, 0)
    if rows > 0:
        memcpy(cnp.PyArray_DATA(<cnp.ndarray>a), p,
               rows * (1 if cols == 0 else cols) * sizeof(double))
    return a


cdef int _trace_output(const Trace* tr, int k, int nz, dict trace) except -1:
    """The rows and steps written to tr as arrays of their exact sizes in `trace`."""
    cdef Py_ssize_t n = tr.n, steps = tr.n - 1 if tr.n > 0 else 0
    trace["n"] = n
    trace["K0"] = _copy_out(tr.K0, nz, 0)
    trace["t"] = _copy_out(tr.t, n, 0)
    trace["y"] = _copy_out(tr.y, n, k)
    trace["w"] = _copy_out(tr.w, n, 3)
    if tr.dense:
        trace["z"] = _copy_out(tr.z, steps, nz)
        trace["F"] = _copy_out(tr.F, steps, 7 * nz)
        trace["h"] = _copy_out(tr.h, steps, 0)
    return 0


cdef int _event_output(const EventSet* es, Py_ssize_t nbodies, int k,
                       dict events) except -1:
    """The occurrences kept in es as arrays and lists in `events` (see `drive`)."""
    cdef cnp.npy_intp dims[2]
    cdef Py_ssize_t i, c, b
    cdef int e
    cdef bint over = False
    cdef list t_all = [], y_all = [], te, ye
    dims[0] = nbodies
    dims[1] = es.n
    count = cnp.PyArray_EMPTY(2, dims, cnp.NPY_INT64, 0)
    memcpy(cnp.PyArray_DATA(<cnp.ndarray>count), es.count, nbodies * es.n * sizeof(long long))
    t_stop = cnp.PyArray_EMPTY(1, dims, cnp.NPY_DOUBLE, 0)
    memcpy(cnp.PyArray_DATA(<cnp.ndarray>t_stop), es.t_stop, nbodies * sizeof(double))
    for i in range(nbodies):
        te = []
        ye = []
        for e in range(es.n):
            b = i * es.n + e
            c = es.count[b]
            if c > es.cap:
                over = True
                c = es.cap
            te.append(_copy_out(es.t_ev[b], c, 0))
            ye.append(_copy_out(es.y_ev[b], c, k))
        t_all.append(te)
        y_all.append(ye)
    events["count"] = count
    events["t_stop"] = t_stop
    events["y_stop"] = _copy_out(es.y_stop, nbodies, k)
    events["w_stop"] = _copy_out(es.w_stop, nbodies, 3)
    events["t"] = t_all
    events["y"] = y_all
    events["over"] = over
    return 0


cdef int _drive(const Stepper* s, object t, object save, object y0, object y_out,
                object w_out, object status, object failed, int workers, object counts,
                object fail_t, Trace* trp, object h_next, EventSet* es) except -1:
    cdef const double[::1] tv = t
    cdef const Py_ssize_t[::1] sv = save
    cdef const double[:, ::1] yv = y0
    cdef double[:, :, ::1] yo = y_out
    cdef double[:, :, ::1] wo = w_out
    cdef int[::1] stv = status
    cdef Py_ssize_t[::1] fv = failed
    cdef Py_ssize_t nbodies = yv.shape[0], i
    if counts is None:
        counts = np.zeros((nbodies, 3), dtype=np.int64)
    if fail_t is None:
        fail_t = np.zeros(nbodies)
    cdef long long[:, ::1] cv = counts
    cdef double[::1] ftv = fail_t
    cdef bint adaptive = s.control != NULL
    cdef Grid g
    cdef list errors = []
    cdef Poll p
    cdef Clock clocks[64]
    cdef int tid
    cdef int nthreads = thread_count(workers)
    if (s.nz > STATE_MAX or yv.shape[1] != s.k0 or yo.shape[2] != s.k
            or (s.erk != NULL and (s.nz > ERK_MAX_N or s.deriv == NULL))
            or (s.trial != NULL and s.nz > ERK_MAX_N)
            or (adaptive and s.erk == NULL and (s.trial == NULL or s.dense == NULL
                                                or s.first == NULL))
            or (s.trial != NULL and trp != NULL and trp.dense)
            or cv.shape[1] != 3
            or (trp != NULL and (not adaptive or nbodies != 1))):
        raise ValueError("the stepper does not match its arrays")
    cdef double[::1] hv
    cdef double* hp = NULL
    if h_next is not None:
        hv = h_next
        if hv.shape[0] != nbodies:
            raise ValueError("the stepper does not match its arrays")
        if nbodies:
            hp = &hv[0]
    cdef Stepper with_events             # (the stepper, copied to carry the events)
    if es != NULL:
        with_events = s[0]
        with_events.events = es
        s = &with_events
    if nbodies == 0:
        return 0
    g.t = &tv[0]
    g.n = tv.shape[0] - 1
    g.m = sv.shape[0]
    g.save = &sv[0] if g.m else NULL
    cdef Py_ssize_t ky = g.m * s.k, kw = g.m * 3
    cdef double* yop = &yo[0, 0, 0] if g.m else NULL
    cdef double* wop = &wo[0, 0, 0] if g.m else NULL
    p.stop = 0
    p.errors = <void*>errors
    nthreads = min(nthreads, 64)
    for tid in range(64):
        clocks[tid].stride = 1
        clocks[tid].countdown = 1
        clocks[tid].last_clock = _now() if tid < nthreads else 0.0
        clocks[tid].last_check = clocks[tid].last_clock
    if nthreads == 1 or nbodies < 2:
        with nogil:
            for i in range(nbodies):
                _one(s, &g, i, &yv[i, 0], yop + i * ky, wop + i * kw, &stv[i], &fv[i], &ftv[i],
                     &cv[i, 0], &p, &clocks[0], True, adaptive, trp,
                     hp + i if hp != NULL else NULL)
    else:
        for i in prange(nbodies, nogil=True, num_threads=nthreads, schedule="static"):
            tid = threadid()
            _one(s, &g, i, &yv[i, 0], yop + i * ky, wop + i * kw, &stv[i], &fv[i], &ftv[i],
                 &cv[i, 0], &p, &clocks[tid], tid == 0, adaptive, NULL,
                 hp + i if hp != NULL else NULL)
    if errors:
        raise errors[0]
    for i in range(nbodies):
        if stv[i] == STATUS_NO_MEMORY:
            raise MemoryError("the run's record of steps or event occurrences could not grow "
                              f"(body {i}): out of memory")
    return 0


# the pairs of the registry already converted to an ERK struct, by method name, and the
# error-scale floors (read-only arrays) by (n, ref)
_PAIRS = {}
_REFS = {}


cdef class Engine:
    """A registry method's embedded pair for the driver, with its step-size control.

    Parameters
    ----------
    spec : rotode.methods.Method
        A method with a pair kernel, ``erk`` or ``rkmk`` (tableau and `Embedded` data of either
        `rotode.methods.PairKind`), or one with its own trial step (no tableau).
    control : tuple or None
        ``(rtol, atol, first_step, max_step, max_steps)`` as checked by
        `rotode._validation.as_control` (``atol`` an array of ``n`` values), or None for fixed
        steps on the grid.
    n : int
        State size (the atol values and the RMS norm).
    ref : array_like, optional
        ``n`` floors of the error scale's ``|z|`` (default 0: SciPy's scale); 1 for the
        rotation-vector components of a Runge-Kutta-Munthe-Kaas state.
    """

    def __init__(self, spec, control, int n, ref=None):
        cdef ERK* T = &self.erk
        cdef int r, j
        self._set_control(control, n, ref)
        if spec.tableau is None:          # a method with its own trial step (attach_control)
            return
        done = _PAIRS.get(spec.name)
        if done is not None and (<Engine>done)._spec is spec:
            self.erk = (<Engine>done).erk          # the registry's pair, converted once
            return
        self._spec = spec
        a, b, c = spec.tableau.doubles
        emb = spec.embedded.doubles
        # (the entry was checked against these sizes when it was made: rotode.methods)
        standard = spec.embedded.kind == _methods.PairKind.STANDARD
        s = len(b)
        extra = emb["extra_a"]
        if (s + 1 + len(extra) > ERK_MAX_STAGES or n > ERK_MAX_N
                or spec.embedded.powers > ERK_MAX_POWERS):
            raise ValueError(f"method {spec.name!r} exceeds the compiled pair's sizes")
        for r in range(ERK_MAX_STAGES * ERK_MAX_STAGES):
            T.a[r] = 0.0
        for r in range(ERK_MAX_STAGES):
            T.b[r] = 0.0
            T.c[r] = 0.0
            T.e[r] = 0.0
            T.e3[r] = 0.0
        for r in range(ERK_MAX_POWERS * ERK_MAX_STAGES):
            T.dense[r] = 0.0
        T.kind = ERK_STANDARD if standard else ERK_DOP853
        T.s = s
        T.s_dense = s + 1 + len(extra)
        T.npow = spec.embedded.powers
        T.exponent = -1.0 / (spec.embedded.error_order + 1)
        for r in range(s):
            T.b[r] = b[r]
            T.c[r] = c[r]
            for j in range(r):
                T.a[r * ERK_MAX_STAGES + j] = a[r][j]
        T.c[s] = 1.0
        for r in range(len(extra)):
            T.c[s + 1 + r] = emb["extra_c"][r]
            for j in range(len(extra[r])):
                T.a[(s + 1 + r) * ERK_MAX_STAGES + j] = extra[r][j]
        for j in range(len(emb["e"])):
            T.e[j] = emb["e"][j]
        if emb["e3"] is not None:
            for j in range(len(emb["e3"])):
                T.e3[j] = emb["e3"][j]
        dense = emb["dense"]
        for r in range(len(dense)):
            for j in range(len(dense[r])):
                if standard:
                    T.dense[r * ERK_MAX_POWERS + j] = dense[r][j]   # P[stage][power]
                else:
                    T.dense[r * ERK_MAX_STAGES + j] = dense[r][j]   # D[row][stage]
        T.ncols = 0                    # the stages that the dense output's sums read
        for j in range(s + 1 if standard else T.s_dense):
            for r in range(ERK_MAX_POWERS):
                if (T.dense[j * ERK_MAX_POWERS + r] if standard else
                        T.dense[r * ERK_MAX_STAGES + j]) != 0.0:
                    T.cols[T.ncols] = j
                    T.ncols += 1
                    break
        for r in range(ERK_MAX_STAGES):
            T.nacols[r] = 0
            for j in range(r):
                if T.a[r * ERK_MAX_STAGES + j] != 0.0:
                    T.acols[r * ERK_MAX_STAGES + T.nacols[r]] = j
                    T.nacols[r] += 1
        _PAIRS[spec.name] = self

    cdef _set_control(self, object control, int n, object ref):
        self.adaptive = control is not None
        cdef const double[::1] av
        if self.adaptive:
            rtol, atol, first_step, max_step, max_steps = control[:5]
            self.control.t_eval = len(control) > 5 and bool(control[5])
            if not (isinstance(atol, np.ndarray) and atol.shape == (n,)
                    and atol.dtype == np.float64 and atol.flags.c_contiguous):
                atol = np.ascontiguousarray(np.broadcast_to(atol, (n,)), dtype=np.float64)
            self._atol = atol
            av = self._atol
            self.control.rtol = rtol
            self.control.atol = &av[0]
            key = (n, ref if ref is None or isinstance(ref, float) else tuple(ref))
            self._ref = _REFS.get(key)
            if self._ref is None:
                self._ref = np.ascontiguousarray(np.broadcast_to(0.0 if ref is None else ref,
                                                                 (n,)), dtype=np.float64)
                self._ref.flags.writeable = False
                _REFS[key] = self._ref
            av = self._ref
            self.control.ref = &av[0]
            self.control.first_step = first_step
            self.control.max_step = max_step
            self.control.max_steps = max_steps

    cdef void attach(self, Stepper* s, erk_rhs deriv) noexcept:
        s.erk = &self.erk
        s.deriv = deriv
        s.control = &self.control if self.adaptive else NULL

    cdef void attach_control(self, Stepper* s) noexcept:
        s.control = &self.control if self.adaptive else NULL


def outcome(status, failed, t, sources=(), reasons=None, fail_t=None, last=None):
    """``(status, message)`` of a run from its per-body codes (the status contract).

    A body whose source stored a Python error (``STATUS_SOURCE_ERROR``) makes this raise that
    error unchanged; otherwise the first failed body names the step, its time and the reason
    (`reasons` overrides the default texts per code), and the result reports its code.  With
    `fail_t` (adaptive runs) every failure is reported as status -1, as `solve_ivp` does;
    `last` (fixed grids: ``counts[:, 0]`` of `drive`) bounds the steps where it happened.
    """
    cdef const int[::1] sv
    cdef Py_ssize_t b
    cdef bint stopped = False
    if isinstance(status, np.ndarray) and status.dtype == np.intc and status.ndim == 1:
        sv = np.ascontiguousarray(status)          # the drivers' own array: scan it in C
        for b in range(sv.shape[0]):
            if sv[b] == STATUS_TERMINATED:
                stopped = True
            elif sv[b] != STATUS_OK:
                break
        else:
            if stopped:
                return STATUS_TERMINATED, _REASONS[STATUS_TERMINATED]
            return STATUS_OK, "success"
    status = np.asarray(status)
    bad = np.flatnonzero((status != STATUS_OK) & (status != STATUS_TERMINATED))
    if bad.size == 0:
        if np.any(status == STATUS_TERMINATED):
            return STATUS_TERMINATED, _REASONS[STATUS_TERMINATED]
        return STATUS_OK, "success"
    if np.any(status == STATUS_SOURCE_ERROR):
        for src in sources:
            err = getattr(src, "error", None) if src is not None else None
            if err is not None:
                src.error = None
                raise err
        raise RuntimeError("a source reported an error without storing it")
    k = int(bad[0])
    code = int(status[k])
    j = int(failed[k])
    reason = (reasons or {}).get(code) or _REASONS.get(code, f"failure (code {code})")
    if fail_t is not None:                    # adaptive: the step that failed started at t
        where = f"step {j} (t = {float(fail_t[k])!r})"
        code = -1
    else:                                     # fixed grid: steps j .. end - 1
        end = max(j + 1, min(int(last[k]), len(t) - 1)) if last is not None else j + 1
        end = min(end, len(t) - 1)
        steps = f"step {j}" if end <= j + 1 else f"steps {j} to {end - 1}"
        where = (f"{steps} (t = {float(t[j])!r} to {float(t[end])!r})" if end > j
                 else f"step {j} (t = {float(t[j])!r})")
    return code, f"body {k}, {where}: {reason}; its states from there on are NaN"


def algebra_atol(atol):
    """The absolute tolerances of a Lie-group state ``[v (3), rest]`` from those of ``[q (4),
    rest]``: each component of the rotation vector v gets the smallest of q's (an error dv is
    an error |dv|/2 of a unit q), the rest keep theirs."""
    cdef const double[::1] a = atol
    cdef Py_ssize_t i, n = a.shape[0]
    cdef double m = a[0]
    for i in range(1, 4):
        if a[i] < m:
            m = a[i]
    out = np.empty(n - 1)
    cdef double[::1] o = out
    for i in range(3):
        o[i] = m
    for i in range(4, n):
        o[i - 1] = a[i]
    return out


def per_body_counts(counts, n_steps, nfev):
    """The per-body counters of a run (its stats' ``"per_body"``), as int64 arrays (N,):
    ``n_steps`` (``counts[:, 0]`` of an error-controlled run; else ``n_steps``, the grid's
    steps, for every body), ``nfev`` (the runner's evaluations per body) and, with ``counts``
    (N, 3) of an error-controlled run (`drive`), ``n_rejected`` and ``nfev_pair``."""
    nfev = np.asarray(nfev, dtype=np.int64)
    n = nfev.shape[0]
    if counts is None:
        return {"n_steps": np.full(n, n_steps, dtype=np.int64), "nfev": nfev.copy()}
    return {"n_steps": counts[:, 0].copy(), "n_rejected": counts[:, 1].copy(),
            "nfev": nfev.copy(), "nfev_pair": counts[:, 2].copy()}
