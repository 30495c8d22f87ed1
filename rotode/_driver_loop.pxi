# The driver's loop over one body (included by rotode/_driver.pyx): the body's step state
# (`BodyRun`) set up from the run, the choice of its loop (`_one`), the loop over a fixed grid
# (`_body`: chunks of steps handed to the runner's `advance`, or a pair's fixed steps), the
# specialised engine's call (`_body_engine`), a block of bodies' run by a lane kernel
# (`_block`) and what the loops share: the first row, the
# check of a row, NaN after a failure.


cdef void _body_init(BodyRun* b, const Run* r, Py_ssize_t i, Clock* clk,
                     bint poller) noexcept nogil:
    """b: body i of the run r, polled on clk, its thread's clock (the loop fills the rest)."""
    cdef const Stepper* s = r.s
    b.s = s
    b.g = &r.g
    b.T = s.erk
    b.C = s.control
    b.i = i
    b.y0 = r.y0 + i * s.k0
    b.yo = r.yo + i * (r.g.m * s.k)
    b.wo = r.wo + i * (r.g.m * 3)
    b.status = &r.status[i]
    b.failed = &r.failed[i]
    b.fail_t = &r.fail_t[i]
    b.counts = &r.counts[3 * i]
    b.h_next = r.h_next + i if r.h_next != NULL else NULL
    b.tr = r.trace
    b.poll = r.poll
    b.clk = clk
    b.poller = poller
    b.began = False
    b.stores = 0
    b.rhs.f = s.deriv
    b.rhs.cfg = s.cfg
    b.rhs.i = i
    b.rhs.n = s.nz


cdef bint _buffers(BodyRun* b) noexcept nogil:
    """Point b's buffers into its own `small` storage or, for a larger state, row or scratch,
    into one heap block (OUT: b.work, z, ..., heap; False: no memory)."""
    cdef const Stepper* s = b.s
    cdef Py_ssize_t n = s.nz, k = s.k, nw = s.work_doubles, sz = n, rs = k + 3
    cdef double* p
    cdef bint pair = s.erk != NULL or s.trial != NULL
    b.heap = NULL
    if (nw <= WORK_DOUBLES and n <= STATE_MAX and k <= STATE_MAX
            and (n <= ERK_MAX_N or not pair)):
        p = b.small
        nw = WORK_DOUBLES
        n = ERK_MAX_N
        sz = STATE_MAX
        rs = STATE_MAX + 3
    else:
        if sz < STATE_MAX:
            sz = STATE_MAX
        b.heap = malloc((nw + 2 * sz + k + n * (ERK_MAX_STAGES + 12) + (EVENTS_MAX + 2) * rs)
                        * sizeof(double))
        if b.heap == NULL:
            return False
        p = <double*>b.heap
    b.work = p
    b.z = p + nw
    b.zd = b.z + sz
    b.row = b.zd + sz
    b.znew = b.row + sz if b.heap == NULL else b.row + k
    b.K = b.znew + n
    b.F = b.K + ERK_MAX_STAGES * n
    b.scratch = b.F + 7 * n
    b.ev_rows = b.scratch + 4 * n
    b.brent_rows = b.ev_rows + EVENTS_MAX * rs
    b.rs = rs
    b.rhs.work = <void*>b.work
    b.rhs.scratch = b.scratch
    return True


cdef void _one(const Run* r, Py_ssize_t i, Clock* clk, bint poller) noexcept nogil:
    """Body i of the run r, by the specialised engine, the controlled loop or the fixed grid's
    (OUT: its rows, status and counters)."""
    cdef BodyRun b
    _body_init(&b, r, i, clk, poller)
    if not _buffers(&b):
        _nan_rows(&b, 0)
        b.status[0] = STATUS_NO_MEMORY
        b.failed[0] = 0
        b.fail_t[0] = r.g.t[0]
        b.counts[0] = b.counts[1] = b.counts[2] = 0
        rotode_set_flag(&b.poll.stop)
        return
    if (r.adaptive and r.s.body != NULL and b.tr == NULL and b.h_next == NULL
            and (r.s.events == NULL or r.s.erk != NULL)):
        _body_engine(&b, r)
    elif r.adaptive:
        _body_adaptive(&b)
    else:
        _body(&b)
        b.fail_t[0] = r.g.t[b.failed[0]] if b.failed[0] >= 0 else r.g.t[0]
    free(b.heap)


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


cdef inline int _store_first(BodyRun* b, double t, double* yo, double* wo) noexcept nogil:
    """The row at t0 (OUT: yo, wo): the stored state, or y0 itself when the stepper says so
    (y0_row)."""
    cdef const Stepper* s = b.s
    cdef int st = s.store(s.cfg, b.i, t, b.z, yo, wo, <void*>b.work)
    cdef int c
    if st == STATUS_OK and s.y0_row:
        for c in range(s.k):
            yo[c] = b.y0[c]
        for c in range(3):
            wo[c] = b.y0[4 + c]
    return st


cdef void _nan_rows(BodyRun* b, Py_ssize_t slot) noexcept nogil:
    """NaN in the output rows from `slot` on: after a failure, never silently wrong numbers."""
    cdef int c
    while slot < b.g.m:
        for c in range(b.s.k):
            b.yo[slot * b.s.k + c] = NAN
        for c in range(3):
            b.wo[3 * slot + c] = NAN
        slot += 1


cdef int _body(BodyRun* b) noexcept nogil:
    """The whole time loop of body b.i on the grid (OUT: its rows, status; failed[0] and
    counts[0]: the grid indices between which a failure happened)."""
    cdef const Stepper* s = b.s
    cdef const Grid* g = b.g
    cdef Clock* clk = b.clk
    cdef Py_ssize_t i = b.i
    cdef double* z = b.z
    cdef double* yo = b.yo
    cdef double* wo = b.wo
    cdef long long* last = b.counts
    cdef bint have_f = False
    cdef Py_ssize_t j = 0, jend, jr, slot = 0, fail = -1
    cdef int st, c
    b.began = not rotode_load_flag(&b.poll.stop)
    st = s.begin(s.cfg, i, b.y0, z, <void*>b.work) if b.began else STATUS_INTERRUPTED
    if st == STATUS_OK and g.m > 0 and g.save[0] == 0:
        st = _store_first(b, g.t[0], yo, wo)
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
            st = s.advance(s.cfg, i, g.t, j, jend, z, <void*>b.work, &jr)
        else:
            jr = j
            while jr < jend:
                st = _erk_fixed(b, g.t[jr], g.t[jr + 1], &have_f)
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
        if (clk.countdown <= 0 and _tick(clk, b.poll, b.poller)) or rotode_load_flag(
                &b.poll.stop):
            st = STATUS_INTERRUPTED
            fail = j
            last[0] = j
            break
        if slot < g.m and g.save[slot] == j:
            st = s.store(s.cfg, i, g.t[j], z, &yo[slot * s.k], &wo[3 * slot], <void*>b.work)
            if st == STATUS_OK:
                st = _check_row(&yo[slot * s.k], s.k, &wo[3 * slot])
            if st != STATUS_OK:
                fail = j - 1
                last[0] = j
                break
            slot += 1
    _nan_rows(b, slot)
    if s.end != NULL and b.began:
        s.end(s.cfg, i, st, z, <void*>b.work)
    if st == STATUS_SOURCE_ERROR:     # a Python error: the caller raises it, stop the others
        rotode_set_flag(&b.poll.stop)
    b.status[0] = st
    b.failed[0] = fail
    return st


cdef int _erk_fixed(BodyRun* b, double t0, double t1, bint* have_f) noexcept nogil:
    """One fixed step t0 -> t1 of an explicit Runge-Kutta pair; its FSAL stage is kept for the
    next (IN/OUT: b.z, b.K; have_f: K[0] is f(t0, z))."""
    cdef const Stepper* s = b.s
    cdef double* z = b.z
    cdef double* K = b.K
    cdef int st, k
    if not have_f[0]:
        st = s.deriv(s.cfg, b.i, t0, z, K, <void*>b.work)
        if st != STATUS_OK:
            return st
    st = erk_step(b.T, &b.rhs, t0, t1 - t0, t0 + (t1 - t0), z, K, b.znew)
    if st == STATUS_OK:
        st = s.deriv(s.cfg, b.i, t1, b.znew, K, <void*>b.work)   # f(t1, y1): the next K[0]
    have_f[0] = st == STATUS_OK
    for k in range(s.nz):
        z[k] = b.znew[k]
    if have_f[0] and s.accept != NULL:
        s.accept(s.cfg, b.i, z, K, <void*>b.work)
    return st


cdef void _body_engine(BodyRun* b, const Run* r) noexcept nogil:
    """Body b.i of the run r by the specialised engine (`Stepper.body`), with the driver's
    grid, control, polling and status contract (OUT: as `_body_adaptive`)."""
    cdef const Stepper* s = b.s
    cdef const Grid* g = b.g
    cdef EngineRun run
    cdef Ticker tk
    cdef int st
    cdef Py_ssize_t c
    tk.clk = b.clk
    tk.p = b.poll
    tk.poller = b.poller
    _engine_run(r, b.i, &tk, &run)
    st = STATUS_OK
    if s.events != NULL:
        _events_reset(b)
    if rotode_load_flag(&b.poll.stop):
        st = STATUS_INTERRUPTED
    elif s.events != NULL:              # the driver's events on the engine's steps
        st = _engine_events_start(b, &run)
    if st != STATUS_OK:
        for c in range(g.m * s.k):
            b.yo[c] = NAN
        for c in range(g.m * 3):
            b.wo[c] = NAN
    else:
        st = s.body(s.cfg, b.i, &run)
    if st == STATUS_SOURCE_ERROR or st == STATUS_NO_MEMORY:    # (the caller raises)
        rotode_set_flag(&b.poll.stop)
    b.status[0] = st
    b.failed[0] = run.accepted if st != STATUS_OK and st != STATUS_TERMINATED else -1
    b.fail_t[0] = run.t_end
    b.counts[0] = run.accepted
    b.counts[1] = run.rejected
    b.counts[2] = run.nfev
    if s.events != NULL:
        _engine_events_end(b, st, run.t_end)


cdef int _engine_events_start(BodyRun* b, EngineRun* run) noexcept nogil:
    """The driver's state of body b.i for its events on the engine's steps, as
    `_adaptive_start` makes it: the stepper's state at t0 (`begin`), g there (OUT: b.z, t,
    t_prev, g_old; run's hook, its count of rows stored).  After `_events_reset`."""
    cdef const Stepper* s = b.s
    cdef int st
    b.t = b.g.t[0]
    b.t_prev = NAN
    b.nfev = b.stores = 0
    st = s.begin(s.cfg, b.i, b.y0, b.z, <void*>b.work)
    if st == STATUS_OK:
        st = _event_values(b, b.t, b.z, b.row, b.wrow, b.g_old, -1, False)
    run.on_step = _engine_events
    run.step_ctx = <void*>b
    run.hook_stores = b.stores
    return st


cdef int _engine_events(void* ctx, EngineStep* es) noexcept nogil:
    """The engine's hook after each accepted step (rotode/_engine.hpp `EngineRun.on_step`):
    the step's events by `_events_in_step` on the engine's own step, its stages and its
    interpolant's storage (the driver's dense output: the same arithmetic), then the
    stepper's `accept` on the driver's copy of the state, as `_accept`; a terminal event
    ends the body at its time, as `_terminate` (OUT: es.prepared, nfev, stores, t_stop; b).
    """
    cdef BodyRun* b = <BodyRun*>ctx
    cdef const Stepper* s = b.s
    cdef int st, c, j, n = s.nz
    cdef long long nfev0 = b.nfev, stores0 = b.stores
    cdef double* K = b.K
    cdef double* F = b.F
    b.t = es.t
    b.t_new = es.t_new
    b.h = es.h
    b.t_end = es.t_new
    b.prepared = False
    for c in range(n):
        b.z[c] = es.z[c]
        b.znew[c] = es.znew[c]
    if es.kstride == n:
        b.K = es.K
    else:                           # (a state sized at run time: its stages, packed)
        for j in range(b.T.s + 1):
            for c in range(n):
                b.K[j * n + c] = es.K[j * es.kstride + c]
    b.F = es.F
    st = _events_in_step(b)
    if st == STATUS_TERMINATED:
        st = _dense_at(b, b.t_end, b.zd)        # (the state there: the events' final row)
        for c in range(n):
            b.z[c] = b.zd[c]
        b.t = b.t_end
        if st == STATUS_OK:
            st = STATUS_TERMINATED
    elif st == STATUS_OK:
        for c in range(n):
            b.z[c] = b.znew[c]
            b.zd[c] = b.K[b.T.s * n + c]        # (the FSAL stage: a copy for `accept`)
        if s.accept != NULL:        # (the runner's copy of a Lie-group state's base)
            s.accept(s.cfg, b.i, b.z, b.zd, <void*>b.work)
        b.t_prev = b.t
        b.t = b.t_new
    b.K = K
    b.F = F
    es.prepared = b.prepared
    es.nfev = b.nfev - nfev0
    es.stores = b.stores - stores0
    es.t_stop = b.t_end
    return st


cdef void _engine_events_end(BodyRun* b, int st, double t_end) noexcept nogil:
    """Body b.i's events after the engine's run, as `_adaptive_end`: their counts, the time
    of a terminal one, the row where the run ended (OUT: the EventSet's count, t_stop,
    y_stop, w_stop)."""
    cdef const EventSet* E = b.s.events
    cdef int c
    for c in range(E.n):
        E.count[b.i * E.n + c] = b.occurrences[c]
    if st == STATUS_TERMINATED:
        E.t_stop[b.i] = t_end
    _store_final(b, st)


cdef void _engine_run(const Run* r, Py_ssize_t i, Ticker* tk, EngineRun* run) noexcept nogil:
    """Body i's EngineRun: the driver's grid, control and polling, its rows (OUT: run)."""
    cdef const Grid* g = &r.g
    cdef const Control* C = r.s.control
    run.t = g.t
    run.n = g.n
    run.save = g.save
    run.m = g.m
    run.y0 = r.y0 + i * r.s.k0
    run.yo = r.yo + i * (g.m * r.s.k) if g.m else NULL
    run.wo = r.wo + i * (g.m * 3) if g.m else NULL
    run.rtol = C.rtol
    run.atol = C.atol
    run.first_step = C.first_step
    run.max_step = C.max_step
    run.max_steps = C.max_steps
    run.t_eval = C.t_eval
    run.countdown = &tk.clk.countdown
    run.tick = _engine_tick
    run.tick_ctx = <void*>tk
    run.accepted = run.rejected = run.nfev = run.stores = run.hook_stores = 0
    run.on_step = NULL
    run.t_end = g.t[0]
    run.status = STATUS_INTERRUPTED


cdef void _queue(const Run* r, Py_ssize_t i0, Py_ssize_t nb, Clock* clk,
                 bint poller) noexcept nogil:
    """Bodies i0 .. i0 + nb - 1 (nb <= QUEUE_BODIES) of r by the stepper's `bodies` (the
    adaptive lanes), with `_body_engine`'s grid, control, polling, events and status contract
    (OUT: their rows, status, failed, fail_t, counts)."""
    cdef EngineRun runs[QUEUE_BODIES]
    cdef int begun[QUEUE_BODIES]
    cdef BodyRun* br = NULL             # (with events: each body's driver state, on the heap)
    cdef Ticker tk
    cdef Py_ssize_t i, j, c
    cdef const Stepper* s = r.s
    cdef bint stop = rotode_load_flag(&r.poll.stop)
    tk.clk = clk
    tk.p = r.poll
    tk.poller = poller
    for j in range(nb):
        _engine_run(r, i0 + j, &tk, &runs[j])
        begun[j] = STATUS_INTERRUPTED if stop else STATUS_OK
    if s.events != NULL:
        br = <BodyRun*>malloc(nb * sizeof(BodyRun))
        for j in range(nb):
            if br == NULL:
                begun[j] = STATUS_NO_MEMORY
                continue
            _body_init(&br[j], r, i0 + j, clk, poller)
            if not _buffers(&br[j]):
                begun[j] = STATUS_NO_MEMORY
                continue
            _events_reset(&br[j])
            if begun[j] == STATUS_OK:
                begun[j] = _engine_events_start(&br[j], &runs[j])
            if begun[j] != STATUS_OK:   # (the lanes run it to no avail, without its events)
                runs[j].on_step = NULL
    if not stop:
        s.bodies(s.cfg, i0, runs, nb)
    for j in range(nb):
        i = i0 + j
        if begun[j] != STATUS_OK:
            runs[j].status = begun[j]
            runs[j].accepted = runs[j].rejected = runs[j].nfev = 0
            runs[j].t_end = r.g.t[0]
            for c in range(r.g.m * s.k):
                runs[j].yo[c] = NAN
            for c in range(r.g.m * 3):
                runs[j].wo[c] = NAN
        if runs[j].status == STATUS_SOURCE_ERROR or runs[j].status == STATUS_NO_MEMORY:
            rotode_set_flag(&r.poll.stop)
        if br != NULL and begun[j] != STATUS_NO_MEMORY:
            _engine_events_end(&br[j], runs[j].status, runs[j].t_end)
            free(br[j].heap)
        r.status[i] = runs[j].status
        r.failed[i] = (runs[j].accepted if runs[j].status != STATUS_OK
                       and runs[j].status != STATUS_TERMINATED else -1)
        r.fail_t[i] = runs[j].t_end
        r.counts[3 * i] = runs[j].accepted
        r.counts[3 * i + 1] = runs[j].rejected
        r.counts[3 * i + 2] = runs[j].nfev
    free(br)


cdef void _block(const Run* r, Py_ssize_t i0, Py_ssize_t nb, Clock* clk,
                 bint poller) noexcept nogil:
    """Bodies i0 .. i0 + nb - 1 of r by the stepper's `block` (a lane kernel), with the
    driver's grid, polling and status contract of a fixed grid (OUT: their rows, status,
    failed, counts[0], fail_t)."""
    cdef const Stepper* s = r.s
    cdef const Grid* g = &r.g
    cdef BlockRun run
    cdef Ticker tk
    cdef Py_ssize_t i, c
    tk.clk = clk
    tk.p = r.poll
    tk.poller = poller
    run.t = g.t
    run.n = g.n
    run.save = g.save
    run.m = g.m
    run.nb = nb
    run.y0 = r.y0 + i0 * s.k0
    run.yo = r.yo + i0 * (g.m * s.k) if g.m else NULL
    run.wo = r.wo + i0 * (g.m * 3) if g.m else NULL
    run.status = &r.status[i0]
    run.failed = &r.failed[i0]
    run.counts = &r.counts[3 * i0]
    run.countdown = &clk.countdown
    run.tick = _engine_tick
    run.tick_ctx = <void*>&tk
    run.nsub = NULL
    run.angle = NULL
    if rotode_load_flag(&r.poll.stop):
        for i in range(i0, i0 + nb):
            r.status[i] = STATUS_INTERRUPTED
            r.failed[i] = 0
            r.counts[3 * i] = 0
        for c in range(nb * g.m * s.k):
            run.yo[c] = NAN
        for c in range(nb * g.m * 3):
            run.wo[c] = NAN
    else:
        s.block(s.cfg, i0, &run)
    for i in range(i0, i0 + nb):
        r.fail_t[i] = g.t[r.failed[i]] if r.failed[i] >= 0 else g.t[0]
