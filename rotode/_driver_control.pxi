# The driver's error-controlled loop (included by rotode/_driver.pyx): one body's run with
# steps chosen by the error estimate of a pair (rotode/erk.pxd) or of a method with its own
# trial step (`Stepper.trial`), SciPy's controller (Hairer, Norsett & Wanner 1993 sec. II.4),
# the outputs at the grid's times by dense output.  Its phases each take the body's step state
# (`BodyRun`): `_adaptive_start`, `_controlled_step` (trial steps until one is accepted),
# `_step_outputs` (events, rows inside the step), `_accept` or `_terminate`, `_adaptive_end`.


cdef int _body_adaptive(BodyRun* b) noexcept nogil:
    """Body b.i with error-controlled steps; the grid holds the output times only (OUT: its
    rows, status, counts [accepted, rejected, evaluations]; b.tr, when not NULL, every
    step)."""
    cdef int st = _adaptive_start(b)
    while st == STATUS_OK and b.direction * (b.tf - b.t) > 0.0:
        b.clk.countdown -= 1
        if b.clk.countdown <= 0 and _tick(b.clk, b.poll, b.poller):
            st = STATUS_INTERRUPTED
            break
        if b.accepted >= b.C.max_steps:
            st = STATUS_MAX_STEPS
            break
        st = _controlled_step(b)
        if st == STATUS_OK:
            st = _step_outputs(b)
        if st != STATUS_OK:
            break
        if b.terminated:
            st = _terminate(b)
            break
        st = _accept(b)
    _adaptive_end(b, st)
    return st


cdef int _adaptive_start(BodyRun* b) noexcept nogil:
    """Body b.i at t0: its state, its row there (and the step record's first), g of its
    events, a pair's first stage and the first step size (OUT: b, the counters from 0)."""
    cdef const Stepper* s = b.s
    cdef const Grid* g = b.g
    cdef const Control* C = b.C
    cdef int st, c
    b.pair = s.trial == NULL                # an explicit Runge-Kutta pair
    b.exponent = b.T.exponent if b.pair else s.exponent
    b.tol.rtol = C.rtol
    b.tol.atol = C.atol
    b.tol.ref = C.ref
    b.t = g.t[0]
    b.tf = g.t[g.n]
    b.direction = 1.0 if b.tf > b.t else -1.0
    b.h_abs = NAN                           # (no proposal after a failed start)
    b.angle = 0.0
    b.on_stop = False
    b.terminated = False
    b.t_prev = NAN
    b.slot = b.accepted = b.rejected = 0
    b.nfev = 0
    # t_eval holds t0: SciPy evaluates the first step's dense output for it
    b.t0_requested = C.t_eval and g.m > 0 and g.save[0] == 0
    for c in range(7 * s.nz):
        b.F[c] = 0.0
    if s.events != NULL:            # (counts and t_stop are reported whatever happens next)
        _events_reset(b)
    b.began = not rotode_load_flag(&b.poll.stop)
    st = s.begin(s.cfg, b.i, b.y0, b.z, <void*>b.work) if b.began else STATUS_INTERRUPTED
    if st == STATUS_OK and g.m > 0 and g.save[0] == 0:
        st = _store_first(b, b.t, b.yo, b.wo)
        if st == STATUS_OK:
            st = _check_row(b.yo, s.k, b.wo)
        if st == STATUS_OK:
            b.slot = 1
    if st == STATUS_OK and b.tr != NULL:
        b.tr.n = 1
        b.tr.t[0] = b.t
        st = _store_first(b, b.t, b.tr.y, b.tr.w)
    if st == STATUS_OK and s.events != NULL:
        st = _event_values(b, b.t, b.z, b.row, b.wrow, b.g_old, -1, False)
    if st == STATUS_OK and b.pair:
        if b.tr != NULL and b.tr.K0_in:     # (a continued run: the stage its accept left)
            for c in range(s.nz):
                b.K[c] = b.tr.K0[c]
        else:
            st = s.deriv(s.cfg, b.i, inside_from(s, b.t, b.direction), b.z, b.K, <void*>b.work)
            b.nfev += 1
    if st == STATUS_OK:
        st = _first_step(b)
    return st


cdef inline int _first_step(BodyRun* b) noexcept nogil:
    """The first step size (OUT: h_abs): the caller's, the pair's initial step (Hairer,
    Norsett & Wanner sec. II.4, one evaluation) or the method's own."""
    cdef const Control* C = b.C
    if C.first_step > 0.0:
        b.h_abs = C.first_step          # (the loop clips the step that would pass tf)
        return STATUS_OK
    if b.pair:
        b.nfev += 1
        return erk_initial_step(b.T, &b.rhs, b.t, b.z, b.K, b.direction, fabs(b.tf - b.t),
                                &b.tol, C.max_step, &b.h_abs)
    return b.s.first(b.s.cfg, b.i, b.t, b.z, b.direction, fabs(b.tf - b.t), C, &b.h_abs,
                     <void*>b.work)


cdef inline int _controlled_step(BodyRun* b) noexcept nogil:
    """Trial steps from t until one is accepted, each rejection shrinking h_abs (OUT: h, t_new,
    znew, err, on_stop; h_abs: the proposal for the next step; rejected).  The accepted state
    must be finite."""
    cdef const Stepper* s = b.s
    cdef double min_step = clip_step(b.t, b.direction, b.C.max_step, b.h_abs)
    cdef cbool after_reject = False         # a rejection before this acceptance
    cdef int st, c
    while True:
        if b.h_abs < min_step:
            return STATUS_STEP_TOO_SMALL
        st = _trial(b)
        if st != STATUS_OK:
            return st
        if s.max_angle > 0.0:               # the step's rotation (its local coordinates)
            b.angle = rkmk_step_angle(b.znew, s.angle_blocks)
        # SciPy's controller, the compiled loops' own (rotode/_engine.hpp `decide_step`)
        if decide_step(b.err, b.exponent, b.angle, s.max_angle, b.h_abs, after_reject,
                       b.rejected):
            break
    for c in range(s.nz):
        if not (b.znew[c] - b.znew[c] == 0.0):
            return STATUS_NONFINITE
    return STATUS_OK


cdef inline int _trial(BodyRun* b) noexcept nogil:
    """One trial step t -> t_new of size h_abs (clipped to tf and to the stops) (OUT: h,
    t_new, on_stop, znew, err; the pair's stages K with its FSAL stage)."""
    cdef const Stepper* s = b.s
    cdef const ERK* T = b.T
    cdef double t = b.t, t_new, h, t_in     # t_in: the time of the pair's stages at c = 1
    cdef int st
    t_new = t + b.h_abs * b.direction
    if b.direction * (t_new - b.tf) > 0.0:
        t_new = b.tf
    if s.n_stops > 0:
        t_new = clip_to_stop(s.stops, s.n_stops, t, t_new, b.direction, &b.on_stop)
    h = t_new - t
    b.t_new = t_new
    b.h = h
    b.h_abs = fabs(h)
    if not b.pair:
        b.nfev += s.evals
        return s.trial(s.cfg, b.i, t, h, b.z, b.znew, b.C, &b.err, <void*>b.work)
    b.nfev += T.s                           # stages 1..s-1 and the FSAL stage
    t_in = t_new
    if b.on_stop and s.stops_jump:          # the equations jump at t_new
        t_in = nextafter(t_new, t)
    st = erk_step(T, &b.rhs, t, h, t + h if t_in == t_new else t_in, b.z, b.K, b.znew)
    if st == STATUS_OK:
        st = s.deriv(s.cfg, b.i, t_in, b.znew, &b.K[T.s * s.nz], <void*>b.work)
    if st == STATUS_OK:
        b.err = erk_error_norm(T, s.nz, h, b.K, b.z, b.znew, &b.tol)
    return st


cdef inline int _step_outputs(BodyRun* b) noexcept nogil:
    """The accepted step's events (a terminal one ends the body: terminated, t_end) and its
    rows at the output times up to t_end, by dense output (OUT: the rows; slot)."""
    cdef const Stepper* s = b.s
    cdef const Grid* g = b.g
    cdef double tt
    cdef int st
    b.prepared = False
    b.t_end = b.t_new                       # a terminal event may end the body earlier
    if s.events != NULL:
        st = _events_in_step(b)
        if st == STATUS_TERMINATED:
            b.terminated = True
            st = STATUS_OK
        if st != STATUS_OK:
            return st
    if b.pair and b.C.t_eval and not b.prepared and (b.t0_requested or (
            b.slot < g.m and b.direction * (g.t[g.save[b.slot]] - b.t_end) <= 0.0)):
        # as SciPy: a step holding a requested time (t_new itself too) prepares its
        # interpolant, counted in nfev, whether or not the value needs it
        st = _prepare_dense(b)
        if st != STATUS_OK:
            return st
    b.t0_requested = False
    while b.slot < g.m and b.direction * (g.t[g.save[b.slot]] - b.t_end) <= 0.0:
        tt = g.t[g.save[b.slot]]
        st = _dense_at(b, tt, b.zd)
        if st != STATUS_OK:
            return st
        st = s.store(s.cfg, b.i, tt, b.zd, &b.yo[b.slot * s.k], &b.wo[3 * b.slot],
                     <void*>b.work)
        if st == STATUS_OK:
            st = _check_row(&b.yo[b.slot * s.k], s.k, &b.wo[3 * b.slot])
        if st != STATUS_OK:
            return st
        b.slot += 1
    return STATUS_OK


cdef int _terminate(BodyRun* b) noexcept nogil:
    """End the body at its terminal event's time t_end inside the accepted step (OUT: z, t,
    the step recorded; STATUS_TERMINATED)."""
    cdef int st, c
    st = _dense_at(b, b.t_end, b.zd)
    if st == STATUS_OK and b.tr != NULL:
        st = _trace_step(b, b.t_end, b.zd)
    for c in range(b.s.nz):
        b.z[c] = b.zd[c]
    b.t = b.t_end
    b.accepted += 1
    if st == STATUS_OK:
        st = STATUS_TERMINATED
    return st


cdef inline int _accept(BodyRun* b) noexcept nogil:
    """Move to the end of the accepted step (OUT: z, t, t_prev, the FSAL stage K[0]; the
    step recorded)."""
    cdef const Stepper* s = b.s
    cdef int st, c, n = s.nz
    if b.tr != NULL:
        st = _trace_step(b, b.t_new, b.znew)
        if st != STATUS_OK:
            return st
    for c in range(n):
        b.z[c] = b.znew[c]
        if b.pair:
            b.K[c] = b.K[b.T.s * n + c]      # FSAL: f(t_new, y_new) starts the next step
    if s.accept != NULL:
        s.accept(s.cfg, b.i, b.z, b.K, <void*>b.work)
    if b.pair and b.on_stop and s.stops_jump and b.t_new != b.tf:   # f after the jump
        b.nfev += 1
        st = s.deriv(s.cfg, b.i, nextafter(b.t_new, b.direction * INFINITY), b.z, b.K,
                     <void*>b.work)
        if st != STATUS_OK:
            return st
    b.t_prev = b.t
    b.t = b.t_new
    b.accepted += 1
    return STATUS_OK


cdef void _adaptive_end(BodyRun* b, int st) noexcept nogil:
    """Body b.i's end with status st: NaN rows after a failure, the runner's `end`, the
    events' counts and final row, the counters and the next step's proposal (OUT: status,
    failed, fail_t, counts, h_next; the record's K0)."""
    cdef const Stepper* s = b.s
    cdef int c
    _nan_rows(b, b.slot)
    if s.end != NULL and b.began:
        s.end(s.cfg, b.i, st, b.z, <void*>b.work)
    if st == STATUS_SOURCE_ERROR or st == STATUS_NO_MEMORY:   # (the caller raises)
        rotode_set_flag(&b.poll.stop)
    b.status[0] = st
    if s.events != NULL:
        for c in range(s.events.n):
            s.events.count[b.i * s.events.n + c] = b.occurrences[c]
        if st == STATUS_TERMINATED:
            s.events.t_stop[b.i] = b.t
        _store_final(b, st)
    b.failed[0] = b.accepted if st != STATUS_OK and st != STATUS_TERMINATED else -1
    b.fail_t[0] = b.t
    b.counts[0] = b.accepted
    b.counts[1] = b.rejected
    b.counts[2] = b.nfev
    if b.h_next != NULL:
        b.h_next[0] = b.h_abs
    if b.tr != NULL and b.pair:
        for c in range(s.nz):
            b.tr.K0[c] = b.K[c]


cdef inline int _prepare_dense(BodyRun* b) noexcept nogil:
    """The pair's interpolant of the accepted step, once per step (DOP853: its three extra
    stages, counted in nfev) (OUT: F; prepared, nfev)."""
    cdef const ERK* T = b.T
    cdef int st
    if b.prepared:
        return STATUS_OK
    b.nfev += T.s_dense - T.s - 1 if T.s_dense > T.s else 0
    st = erk_dense_prepare(T, &b.rhs, b.t, b.h, b.z, b.znew, b.K, b.F)
    b.prepared = st == STATUS_OK
    return st


cdef int _dense_at(BodyRun* b, double tt, double* zout) noexcept nogil:
    """The state at tt inside the accepted step t -> t_new (OUT: zout; prepared, nfev)."""
    cdef const Stepper* s = b.s
    cdef int c, st
    if tt == b.t_new:
        for c in range(s.nz):
            zout[c] = b.znew[c]
        return STATUS_OK
    if s.trial != NULL:
        b.nfev += s.evals
        return s.dense(s.cfg, b.i, b.t, b.h, b.z, b.znew, tt, zout, <void*>b.work)
    st = _prepare_dense(b)
    if st != STATUS_OK:
        return st
    erk_dense(b.T, s.nz, (tt - b.t) / b.h, b.z, b.F, zout)
    return STATUS_OK


cdef void _events_reset(BodyRun* b) noexcept nogil:
    """Body b.i's events before its run: no occurrences, no stop, no g before t0 (OUT:
    occurrences, g_prev; the EventSet's t_stop)."""
    cdef int c
    b.s.events.t_stop[b.i] = NAN
    for c in range(b.s.events.n):
        b.occurrences[c] = 0
        b.g_prev[c] = NAN


cdef void _store_final(BodyRun* b, int st) noexcept nogil:
    """Body b.i's row where its run ended (t: tf, or a terminal event's time; z the state
    there) into the events' final rows; NaN after a failure (OUT: y_stop, w_stop)."""
    cdef const Stepper* s = b.s
    cdef double* y = &s.events.y_stop[b.i * s.k]
    cdef double* w = &s.events.w_stop[3 * b.i]
    cdef int c
    if st == STATUS_OK or st == STATUS_TERMINATED:
        if s.store(s.cfg, b.i, b.t, b.z, y, w, <void*>b.work) == STATUS_OK:
            return
    for c in range(s.k):
        y[c] = NAN
    for c in range(3):
        w[c] = NAN
