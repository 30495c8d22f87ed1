# The driver's run (included by rotode/_driver.pyx): `drive` sets up the records of a run
# (events, step record), checks the stepper against the arrays, fills a `Run` and runs the
# bodies (`_one`) on the calling thread or over threads; `engine_single` runs one body by the
# specialised engine, and the thin call path (`thin_call`, `thin_rows`) checks and runs one
# body's plain call there; the polling of Python's signal handlers (Ctrl-C) every body shares.


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


cdef int _engine_tick(void* ctx) noexcept nogil:
    """The specialised engine's poll: `_tick` of the body's thread."""
    cdef Ticker* tk = <Ticker*>ctx
    return _tick(tk.clk, tk.p, tk.poller)


cdef struct _SinglePoll:
    # the poll of one body's run on the calling thread (`engine_single`, `thin_block_rows`)
    Poll p
    Clock clk
    Ticker tk


cdef void _single_poll(_SinglePoll* sp, list errors, int** countdown, void** tick_ctx) noexcept:
    """Set up the poll of a run on the calling thread, as `drive` polls its first thread
    (OUT: sp, the run's countdown and tick context; `_engine_tick` is its tick)."""
    sp.p.stop = 0
    sp.p.errors = <void*>errors
    sp.clk.stride = 1
    sp.clk.countdown = 1
    sp.clk.last_clock = _now()
    sp.clk.last_check = sp.clk.last_clock
    sp.tk.clk = &sp.clk
    sp.tk.p = &sp.p
    sp.tk.poller = True
    countdown[0] = &sp.clk.countdown
    tick_ctx[0] = <void*>&sp.tk


cdef int engine_single(body_fn body, const void* cfg, EngineRun* run) except? -2:
    """One body's run by the specialised engine on the calling thread, the GIL released and
    polled as `drive` polls (OUT: run); raises what a signal handler raised (Ctrl-C)."""
    cdef list errors = []
    cdef _SinglePoll sp
    cdef int st
    _single_poll(&sp, errors, &run.countdown, &run.tick_ctx)
    run.tick = _engine_tick
    run.on_step = NULL                  # (no events on these paths)
    run.hook_stores = 0
    with nogil:
        st = body(cfg, 0, run)
    if errors:
        raise errors[0]
    return st


# the thin path's checks read the general path's own thresholds (rtol's floor of 100 eps in
# `_validation.as_control`, the smallest |q|^2, the default step cap)
cdef double _EPS100 = 100 * np.finfo(float).eps
cdef double _TINY_NORM2 = TINY_NORM2
cdef Py_ssize_t[2] _SAVE_ENDS = [0, 1]
cdef long long _DEFAULT_MAX_STEPS = DEFAULT_MAX_STEPS


cdef object _FLOAT64 = np.float64


cdef inline bint _real(object x, double* out):
    """x as a double when it is a Python float, a NumPy float64 scalar or a Python int (not
    bool) (OUT: out)."""
    if type(x) is float or type(x) is _FLOAT64:
        out[0] = <double>x
        return True
    if type(x) is int:
        try:
            out[0] = <double>x
        except OverflowError:
            return False
        return True
    return False


cdef inline bint _thin_span(object t_span, double* t0, double* tf):
    """t_span as (t0, tf) when it is a tuple or list of two finite distinct Python numbers."""
    return ((type(t_span) is tuple or type(t_span) is list) and len(t_span) == 2
            and _real(t_span[0], t0) and _real(t_span[1], tf)
            and isfinite(t0[0]) and isfinite(tf[0]) and t0[0] != tf[0])


cdef const double* _thin_y0(object y0, int k, bint quaternion, ThinCall* c):
    """y0's k values when it is a float64 C-contiguous array of shape (k,) or a list or tuple
    of k Python numbers (copied into c.y0), all finite, with (`quaternion`) a first four of the
    norm `integrate` accepts; NULL otherwise."""
    cdef cnp.ndarray arr
    cdef const double* y
    cdef double n2
    cdef int j
    if not 1 <= k <= THIN_MAX_N or (quaternion and k < 4):
        return NULL
    if type(y0) is np.ndarray:
        arr = <cnp.ndarray>y0
        if not (cnp.PyArray_TYPE(arr) == cnp.NPY_DOUBLE and cnp.PyArray_NDIM(arr) == 1
                and cnp.PyArray_DIMS(arr)[0] == k and cnp.PyArray_IS_C_CONTIGUOUS(arr)):
            return NULL
        y = <const double*>cnp.PyArray_DATA(arr)
    elif (type(y0) is list or type(y0) is tuple) and len(y0) == k:
        for j in range(k):
            if not _real(y0[j], &c.y0[j]):
                return NULL
        y = c.y0
    else:
        return NULL
    for j in range(k):
        if not isfinite(y[j]):
            return NULL
    if quaternion:
        n2 = y[0] * y[0] + y[1] * y[1] + y[2] * y[2] + y[3] * y[3]
        if not (n2 > _TINY_NORM2 and isfinite(n2)):
            return NULL
    return y


cdef bint thin_call(object t_span, object y0, object rtol, object atol, int k, ThinCall* c,
                    EngineRun* run, object given=None):
    """The thin path's arguments (_driver.pxd): True when `run` is ready but for its rows."""
    cdef double t0 = 0.0, tf = 0.0, rt, at
    cdef const double* y
    cdef int j
    if not _thin_span(t_span, &t0, &tf):
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
    y = _thin_y0(y0, k, True, c) if k <= ERK_MAX_N else NULL
    if y == NULL:
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
    if given is not None:             # t_eval: the general path's grid and rows, as it runs them
        grid, save = given
        if (type(grid) is not np.ndarray or type(save) is not np.ndarray
                or grid.dtype != np.float64 or save.dtype != np.intp
                or not grid.flags.c_contiguous or not save.flags.c_contiguous
                or grid.shape[0] < 2 or save.shape[0] < 1
                or grid[0] != t0 or grid[grid.shape[0] - 1] != tf):
            return False
        run.t = <double*>cnp.PyArray_DATA(<cnp.ndarray>grid)
        run.n = grid.shape[0] - 1
        run.save = <Py_ssize_t*>cnp.PyArray_DATA(<cnp.ndarray>save)
        run.m = save.shape[0]
        run.t_eval = True
    return True


cdef object thin_rows(body_fn body, const void* cfg, int k, const ThinCall* c, EngineRun* run):
    """The rows of a thin call's run (_driver.pxd)."""
    cdef Py_ssize_t j
    y_out = np.empty((run.m, k))
    w_out = np.empty((run.m, 3))
    run.yo = <double*>cnp.PyArray_DATA(<cnp.ndarray>y_out)
    run.wo = <double*>cnp.PyArray_DATA(<cnp.ndarray>w_out)
    if engine_single(body, cfg, run) != STATUS_OK:
        return None
    if not run.t_eval:
        return np.array([c.grid[0], c.grid[1]]), y_out, w_out
    t = np.empty(run.m)
    cdef double* tv = <double*>cnp.PyArray_DATA(<cnp.ndarray>t)
    for j in range(run.m):
        tv[j] = run.t[run.save[j]]
    return t, y_out, w_out


cdef object _uniform_grid(double t0, double tf, double h, Py_ssize_t every):
    """`_plan.time_grid`'s grid without t_eval, point for point, and its saved indices (every
    `every`-th point and the last), or None where that function raises (more than 2e8 steps, a
    grid that does not advance)."""
    cdef double direction = 1.0 if tf > t0 else -1.0, length = fabs(tf - t0)
    cdef double ratio = length / h
    cdef Py_ssize_t n, j, size, m
    if not ratio <= 2e8:
        return None
    n = <Py_ssize_t>floor(ratio)
    # t0 + direction dt j, and tf: in place of the last point when it is tf to round-off
    size = n + 1 if n > 0 and fabs(tf - (t0 + direction * h * <double>n)) <= 1e-9 * h else n + 2
    grid = np.empty(size)
    cdef double* g = <double*>cnp.PyArray_DATA(<cnp.ndarray>grid)
    for j in range(n + 1):
        g[j] = t0 + direction * h * <double>j
    g[size - 1] = tf
    for j in range(size - 1):
        if not direction * (g[j + 1] - g[j]) > 0.0:    # (dt below the floats' spacing)
            return None
    m = (size - 1) // every + (2 if (size - 1) % every else 1)     # (and the last point)
    save = np.empty(m, dtype=np.intp)
    cdef Py_ssize_t* sv = <Py_ssize_t*>cnp.PyArray_DATA(<cnp.ndarray>save)
    for j in range(m):
        sv[j] = j * every
    sv[m - 1] = size - 1
    return grid, save


def uniform_grid(double t0, double tf, double dt, Py_ssize_t every):
    """`_plan.time_grid` of a checked span (t0 != tf), step (> 0) and save_every (>= 1)
    without t_eval, compiled: ``(grid, save)``, or None where that function raises (its
    Python code then says why)."""
    return _uniform_grid(t0, tf, dt, every)


cdef object thin_grid(object t_span, object dt, object save_every, object y0, int k,
                      bint quaternion, ThinCall* c, BlockRun* run, object given):
    """The thin path's fixed grid (_driver.pxd): `_plan.time_grid` of t_span, dt and
    save_every without t_eval, point for point, or `given`, that function's grid of a call
    with t_eval."""
    cdef double t0 = 0.0, tf = 0.0, h = 0.0
    cdef Py_ssize_t every
    cdef const double* y
    if given is not None:
        return _given_grid(given, y0, k, quaternion, c, run)
    if not _thin_span(t_span, &t0, &tf) or not _real(dt, &h) or not (0.0 < h < INFINITY):
        return None
    if save_every is None:
        every = 1
    elif type(save_every) is int and 1 <= save_every <= PY_SSIZE_T_MAX:
        every = save_every
    else:
        return None
    y = _thin_y0(y0, k, quaternion, c)
    if y == NULL:
        return None
    got = _uniform_grid(t0, tf, h, every)
    if got is None:
        return None
    grid, save = got
    run.t = <double*>cnp.PyArray_DATA(<cnp.ndarray>grid)
    run.n = grid.shape[0] - 1
    run.save = <Py_ssize_t*>cnp.PyArray_DATA(<cnp.ndarray>save)
    run.m = save.shape[0]
    run.nb = 1
    run.y0 = y
    return grid, save


cdef object _given_grid(object given, object y0, int k, bint quaternion, ThinCall* c,
                        BlockRun* run):
    """`thin_grid` of a grid and saved indices made by `_plan.time_grid` (OUT: c, run)."""
    grid, save = given
    grid = np.ascontiguousarray(grid, dtype=np.float64)
    save = np.ascontiguousarray(save, dtype=np.intp)
    cdef const double* y = _thin_y0(y0, k, quaternion, c)
    if y == NULL or grid.shape[0] < 2 or save.shape[0] < 1:
        return None
    run.t = <double*>cnp.PyArray_DATA(<cnp.ndarray>grid)
    run.n = grid.shape[0] - 1
    run.save = <Py_ssize_t*>cnp.PyArray_DATA(<cnp.ndarray>save)
    run.m = save.shape[0]
    run.nb = 1
    run.y0 = y
    return grid, save


cdef object thin_block_rows(block_fn block, const void* cfg, int k, object grid, BlockRun* run):
    """The rows of a thin fixed-step call's run (_driver.pxd)."""
    cdef list errors = []
    cdef _SinglePoll sp
    cdef int status = STATUS_OK
    cdef Py_ssize_t failed = -1
    cdef long long counts[3]
    t, save = grid
    y_out = np.empty((run.m, k))
    w_out = np.empty((run.m, 3))
    run.yo = <double*>cnp.PyArray_DATA(<cnp.ndarray>y_out)
    run.wo = <double*>cnp.PyArray_DATA(<cnp.ndarray>w_out)
    run.status = &status
    run.failed = &failed
    counts[0] = counts[1] = counts[2] = 0
    run.counts = counts
    run.nsub = NULL
    run.angle = NULL
    _single_poll(&sp, errors, &run.countdown, &run.tick_ctx)
    run.tick = _engine_tick
    with nogil:
        block(cfg, 0, run)
    if errors:
        raise errors[0]
    if status != STATUS_OK:
        return None
    return (t if run.m == run.n + 1 else t[save]), y_out, w_out


cdef object thin_stepper_rows(const Stepper* s, object grid, BlockRun* run):
    """The rows of a thin fixed-step call's run by the driver's loop (_driver.pxd)."""
    cdef list errors = []
    cdef _SinglePoll sp
    cdef Run r
    cdef int status = STATUS_OK
    cdef Py_ssize_t failed = -1
    cdef double fail_t = 0.0
    cdef long long counts[3]
    t, save = grid
    _check_run(s, 1, s.k0, NULL)
    y_out = np.empty((run.m, s.k))
    w_out = np.empty((run.m, 3))
    r.s = s
    r.g.t = run.t
    r.g.n = run.n
    r.g.m = run.m
    r.g.save = run.save
    r.y0 = run.y0
    r.yo = <double*>cnp.PyArray_DATA(<cnp.ndarray>y_out)
    r.wo = <double*>cnp.PyArray_DATA(<cnp.ndarray>w_out)
    r.status = &status
    r.failed = &failed
    r.fail_t = &fail_t
    r.counts = counts
    r.h_next = NULL
    r.trace = NULL
    r.adaptive = False
    _single_poll(&sp, errors, &run.countdown, &run.tick_ctx)     # (the run's: unused here)
    r.poll = &sp.p
    with nogil:
        _one(&r, 0, &sp.clk, True)
    if errors:
        raise errors[0]
    if status != STATUS_OK:
        return None
    return (t if run.m == run.n + 1 else t[save]), y_out, w_out


cdef tuple drive(const Stepper* s, object t, object save, object y0, int workers,
                 object steps=None, bint h_next=False, object events=None):
    # steps: a rotode._runplan.StepRequest (one body, adaptive), h_next: return each body's
    # proposal for its next step, events: a rotode._runplan.EventRequest (adaptive); the
    # occurrences and steps go to growable records of the driver's own, handed back after the
    # run as the `Records` of the returned tuple (see _driver.pxd).  Every record is the
    # driver's (malloc), freed here whatever happens (errors, interrupts).
    cdef EventSet es
    cdef Trace tr
    cdef void* evp[EVENTS_MAX]
    cdef Py_ssize_t nbodies = len(y0)
    event_record = step_record = None
    _events_clear(&es)
    _trace_clear(&tr)
    try:
        _events_set_up(&es, evp, s, events, nbodies)
        _trace_set_up(&tr, s, steps)
        proposals = np.zeros(nbodies) if h_next else None
        out = _run(s, t, save, y0, workers, &tr if steps is not None else NULL, proposals,
                   &es if es.n else NULL)
        if es.n:
            event_record = _event_output(&es, nbodies, s.k)
        if steps is not None:
            step_record = _trace_output(&tr, s.k, s.nz)
    finally:
        _events_free(&es, nbodies)
        _trace_free(&tr)
    return out + (Records(event_record, step_record, proposals),)


cdef int _check_run(const Stepper* s, Py_ssize_t nbodies, Py_ssize_t k0,
                    const Trace* trp) except -1:
    """Check the stepper against the run's inputs: nbodies rows of k0 values in y0."""
    cdef bint adaptive = s.control != NULL
    if (s.nz < 1 or k0 != s.k0 or s.work_doubles < 0
            or (s.erk != NULL and s.deriv == NULL)
            or (adaptive and s.erk == NULL and (s.trial == NULL or s.dense == NULL
                                                or s.first == NULL))
            or (s.trial != NULL and trp != NULL and trp.dense)
            or (trp != NULL and (not adaptive or nbodies != 1))):
        raise ValueError("the stepper does not match its arrays")
    return 0


cdef tuple _run(const Stepper* s, object t, object save, object y0, int workers, Trace* trp,
                object h_next, EventSet* es):
    """Every body of y0 over the grid t (see _driver.pxd): (y_out, w_out, status, failed,
    counts, fail_t)."""
    cdef const double[::1] tv = t
    cdef const Py_ssize_t[::1] sv = save
    cdef const double[:, ::1] yv = y0
    cdef Py_ssize_t nbodies = yv.shape[0], m = sv.shape[0], i
    _check_run(s, nbodies, yv.shape[1], trp)
    y_out = np.empty((nbodies, m, s.k))
    w_out = np.empty((nbodies, m, 3))
    status = np.zeros(nbodies, dtype=np.intc)
    failed = np.zeros(nbodies, dtype=np.intp)
    counts = np.zeros((nbodies, 3), dtype=np.int64)
    fail_t = np.zeros(nbodies)
    out = (y_out, w_out, status, failed, counts, fail_t)
    # (the arrays just made: their data pointers, without a typed view's set-up per array)
    cdef double* yo = <double*>cnp.PyArray_DATA(<cnp.ndarray>y_out)
    cdef double* wo = <double*>cnp.PyArray_DATA(<cnp.ndarray>w_out)
    cdef int* stv = <int*>cnp.PyArray_DATA(<cnp.ndarray>status)
    cdef double[::1] hv
    cdef Stepper with_events             # (the stepper, copied to carry the events)
    cdef list errors = []
    cdef Poll p
    cdef Run r
    if nbodies == 0:
        return out
    if es != NULL:
        with_events = s[0]
        with_events.events = es
        s = &with_events
    r.s = s
    r.g.t = &tv[0]
    r.g.n = tv.shape[0] - 1
    r.g.m = m
    r.g.save = &sv[0] if m else NULL
    r.y0 = &yv[0, 0]
    r.yo = yo if m else NULL
    r.wo = wo if m else NULL
    r.status = stv
    r.failed = <Py_ssize_t*>cnp.PyArray_DATA(<cnp.ndarray>failed)
    r.fail_t = <double*>cnp.PyArray_DATA(<cnp.ndarray>fail_t)
    r.counts = <long long*>cnp.PyArray_DATA(<cnp.ndarray>counts)
    r.h_next = NULL
    if h_next is not None:
        hv = h_next
        r.h_next = &hv[0]
    r.trace = trp
    r.poll = &p
    r.adaptive = s.control != NULL
    p.stop = 0
    p.errors = <void*>errors
    _run_bodies(&r, nbodies, workers)
    if errors:
        raise errors[0]
    for i in range(nbodies):
        if stv[i] == STATUS_NO_MEMORY:
            raise MemoryError("the run's record of steps or event occurrences could not grow "
                              f"(body {i}): out of memory")
    return out


cdef int _run_bodies(const Run* r, Py_ssize_t nbodies, int workers) except -1:
    """The bodies of r on the calling thread, or over `workers` threads (one clock each)."""
    cdef Clock clocks[64]
    cdef int tid
    cdef Py_ssize_t i
    cdef int nthreads = min(thread_count(workers), 64)
    for tid in range(64):
        clocks[tid].stride = 1
        clocks[tid].countdown = 1
        clocks[tid].last_clock = _now() if tid < nthreads else 0.0
        clocks[tid].last_check = clocks[tid].last_clock
    if r.s.block != NULL and not r.adaptive and r.s.lanes >= 1:
        _run_blocks(r, nbodies, nthreads, clocks)
    elif (r.s.bodies != NULL and r.adaptive and r.s.body != NULL and r.trace == NULL
          and r.h_next == NULL and (r.s.events == NULL or r.s.erk != NULL)):
        _run_queues(r, nbodies, nthreads, clocks)
    elif nthreads == 1 or nbodies < 2:
        with nogil:
            for i in range(nbodies):
                _one(r, i, &clocks[0], True)
    else:
        # (a step record is of one body: r.trace is NULL here)
        for i in prange(nbodies, nogil=True, num_threads=nthreads, schedule="static"):
            tid = threadid()
            _one(r, i, &clocks[tid], tid == 0)
    return 0


# blocks a thread takes at a time (`_run_blocks`): 16 blocks of 8 tops over 1000 steps are
# ~2 ms of work, so the schedule's cost is negligible and the chunks are many
cdef enum:
    BLOCK_CHUNK = 16
    # the bodies of a queue of the adaptive lanes (`_run_queues`): 8 queues of 8 lanes' worth,
    # the slow bodies of a queue overlapping the others' in the refilled lanes
    QUEUE_BODIES = 64


cdef void _run_blocks(const Run* r, Py_ssize_t nbodies, int nthreads,
                      Clock* clocks) noexcept:
    """The bodies of r in blocks of r.s.lanes (the stepper's `block`), on the calling thread or
    over nthreads threads (a block on one thread: its bodies are consecutive).  Threads take
    chunks of BLOCK_CHUNK blocks as they finish (dynamic schedule): a thread whose core is
    shared with another process takes fewer, instead of holding the run up with its half of a
    static split (a body's result does not depend on the thread that runs it)."""
    cdef Py_ssize_t L = r.s.lanes, nblocks = (nbodies + L - 1) // L, ib
    cdef int tid
    if nthreads == 1 or nblocks < 2:
        with nogil:
            for ib in range(nblocks):
                _block(r, ib * L, min(L, nbodies - ib * L), &clocks[0], True)
    else:
        for ib in prange(nblocks, nogil=True, num_threads=nthreads, schedule="dynamic",
                         chunksize=BLOCK_CHUNK):
            tid = threadid()
            _block(r, ib * L, min(L, nbodies - ib * L), &clocks[tid], tid == 0)


cdef void _run_queues(const Run* r, Py_ssize_t nbodies, int nthreads,
                      Clock* clocks) noexcept:
    """The bodies of r in queues of up to QUEUE_BODIES (the stepper's `bodies`: error-controlled
    runs in SIMD lanes, a lane refilled from its queue when its body ends), on the calling
    thread or over nthreads threads (dynamic schedule, one queue at a time)."""
    cdef Py_ssize_t nq = (nbodies + QUEUE_BODIES - 1) // QUEUE_BODIES, iq
    cdef int tid
    if nthreads == 1 or nq < 2:
        with nogil:
            for iq in range(nq):
                _queue(r, iq * QUEUE_BODIES, min(<Py_ssize_t>QUEUE_BODIES,
                                                 nbodies - iq * QUEUE_BODIES), &clocks[0], True)
    else:
        for iq in prange(nq, nogil=True, num_threads=nthreads, schedule="dynamic"):
            tid = threadid()
            _queue(r, iq * QUEUE_BODIES, min(<Py_ssize_t>QUEUE_BODIES,
                                             nbodies - iq * QUEUE_BODIES), &clocks[tid], tid == 0)


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
