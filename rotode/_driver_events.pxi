# The driver's events (included by rotode/_driver.pyx): g of the events at a state, their sign
# changes in an accepted step (SciPy's rule), each root located by Brent's method on the step's
# dense output to 4 ulp (`_event_root`), the occurrences recorded in time order in growable
# per-body records, and those records handed back as arrays after the run.

cdef int _event_values(BodyRun* b, double t, const double* z, double* row, double* wrow,
                       double* g, int only, bint keep_row) noexcept nogil:
    """g of every event (only: just that one) at the state z of time t (OUT: g, and row, wrow
    unless the stepper's row is its state and not keep_row)."""
    cdef const Stepper* s = b.s
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
            b.stores += 1
            st = s.store(s.cfg, b.i, t, z, row, wrow, <void*>b.work)
        else:
            st = s.store_row(s.cfg, b.i, t, z, row, wrow, <void*>b.work)
        if st != STATUS_OK:
            return st
    for e in range(only if only >= 0 else 0, only + 1 if only >= 0 else E.n):
        # (an event placed in a user's state reads its block and that block's rate)
        g[e] = (<Event>E.ev[e]).evaluate_body(b.i, t, y + E.q_at[e], s.k - E.q_at[e],
                                              y + E.w_at[e] if E.w_at[e] >= 0 else w)
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


cdef int _events_in_step(BodyRun* b) noexcept nogil:
    """Locate the events of the accepted step t -> t_new (SciPy's rule for a sign change and
    its direction; roots by Brent's method on the dense output to 4 ulp, `_event_root`),
    record them in time order and stop at a terminal one: t_end = its time, STATUS_TERMINATED
    (IN/OUT: g_prev and g_old become g(t) and g(t_new); occurrences)."""
    cdef const Stepper* s = b.s
    cdef const EventSet* E = s.events
    cdef double g_new[EVENTS_MAX]
    cdef double g_try[EVENTS_MAX]
    cdef double te[EVENTS_MAX]
    cdef double* rows = b.ev_rows               # the row at te[j] when found[j] (rs each)
    cdef bint found[EVENTS_MAX]
    cdef int order[EVENTS_MAX]
    cdef int at[EVENTS_MAX]                     # the slot of rows and found of te[j]
    cdef int e, j, m = 0, st, dirn, term, a
    st = _event_values(b, b.t_new, b.znew, b.row, b.wrow, g_new, -1, False)
    if st != STATUS_OK:
        return st
    for e in range(E.n):
        dirn = (<Event>E.ev[e]).direction
        if not (((b.g_old[e] <= 0.0 and g_new[e] >= 0.0) and dirn >= 0)
                or ((b.g_old[e] >= 0.0 and g_new[e] <= 0.0) and dirn <= 0)):
            continue
        if b.g_old[e] == 0.0 and g_new[e] == 0.0:
            continue                            # no crossing: g stays at zero
        st = _event_root(b, e, b.g_old[e], g_new[e], b.g_prev[e], g_try, &te[m],
                         &rows[m * b.rs], &found[m])
        if st != STATUS_OK:
            return st
        order[m] = e
        m += 1
    for e in range(E.n):
        b.g_prev[e] = b.g_old[e]
        b.g_old[e] = g_new[e]
    if m == 0:
        return STATUS_OK
    if s.trial == NULL:         # as SciPy: an active event prepares the step's interpolant
        st = _prepare_dense(b)
        if st != STATUS_OK:
            return st
    _time_order(m, 1.0 if b.h > 0 else -1.0, te, order, at)
    for j in range(m):
        e = order[j]
        a = at[j]
        if not found[a]:
            st = _dense_at(b, te[j], b.zd)
            b.stores += 1
            if st == STATUS_OK:
                st = s.store(s.cfg, b.i, te[j], b.zd, &rows[a * b.rs],
                             &rows[a * b.rs + s.k], <void*>b.work)
            if st != STATUS_OK:
                return st
        st = _record_occurrence(b, e, te[j], &rows[a * b.rs])
        if st != STATUS_OK:
            return st
        term = (<Event>E.ev[e]).terminal
        if term > 0 and b.occurrences[e] >= term:
            b.t_end = te[j]
            return STATUS_TERMINATED
    return STATUS_OK


cdef inline void _time_order(int m, double direction, double* te, int* order,
                             int* at) noexcept nogil:
    """Sort the m roots te (and their events `order`) in the direction of time, stably (OUT:
    at[j], the index that root j had)."""
    cdef int j, it, e, a
    cdef double c
    for j in range(m):
        at[j] = j
    for j in range(1, m):
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


cdef inline int _record_occurrence(BodyRun* b, int e, double te,
                                   const double* row) noexcept nogil:
    """Count an occurrence of event e at te and keep it (its row) while the record has room
    for cap (the record grows as needed) (OUT: occurrences[e], the record)."""
    cdef const EventSet* E = b.s.events
    cdef int k = b.s.k, q
    cdef long long slot = b.occurrences[e]
    cdef Py_ssize_t r
    b.occurrences[e] += 1
    if slot < E.cap:
        r = b.i * E.n + e                       # (body i's records: this thread's alone)
        if slot >= E.room[r]:
            if _event_grow(E, r, k) != STATUS_OK:
                return STATUS_NO_MEMORY
        E.t_ev[r][slot] = te
        for q in range(k):
            E.y_ev[r][slot * k + q] = row[q]
    return STATUS_OK


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


cdef struct Brent:
    # the state of Brent's method on one event's g in the accepted step: the current point
    # (xcur, fcur, the end of the bracket with the smaller |g|), the previous one, the other
    # end of the bracket (xblk), the last two steps, half the bracket, the closing width;
    # the rows of the last two points evaluated (the row at the root is then known)
    double xpre
    double fpre
    double xcur
    double fcur
    double xblk
    double fblk
    double spre
    double scur
    double sbis
    double delta
    double* rows             # two output rows (BodyRun.rs values each: the row, then w)
    double xrow[2]
    int n


cdef inline bint _brent_bracket(Brent* r) noexcept nogil:
    """The bracket after the last point: xblk on the other side of the sign change, xcur the
    end with the smaller |g| (OUT: sbis); True when it has closed (g == 0, or 4 ulp wide)."""
    if r.fpre != 0.0 and r.fcur != 0.0 and (r.fpre > 0.0) != (r.fcur > 0.0):
        r.xblk = r.xpre                         # the bracket: [xcur, xblk] (either order)
        r.fblk = r.fpre
        r.spre = r.xcur - r.xpre
        r.scur = r.spre
    if fabs(r.fblk) < fabs(r.fcur):             # xcur: the end with the smaller |g|
        r.xpre = r.xcur
        r.xcur = r.xblk
        r.xblk = r.xpre
        r.fpre = r.fcur
        r.fcur = r.fblk
        r.fblk = r.fpre
    r.sbis = 0.5 * (r.xblk - r.xcur)
    return r.fcur == 0.0 or fabs(r.sbis) <= r.delta


cdef inline void _brent_interpolate(Brent* r) noexcept nogil:
    """The next step scur from xcur (spre: the one before): the secant's or inverse quadratic
    interpolation's when it shrinks the bracket fast enough, else bisection."""
    cdef double stry, dpre, dblk, lim
    if fabs(r.spre) > r.delta and fabs(r.fcur) < fabs(r.fpre):
        if r.xpre == r.xblk:                    # secant
            stry = -r.fcur * (r.xcur - r.xpre) / (r.fcur - r.fpre)
        else:                                   # inverse quadratic interpolation (with the
            dpre = r.fpre - r.fcur              # slopes' divisions folded into one)
            dblk = r.fblk - r.fcur
            stry = (-r.fcur * (r.fblk * dblk * (r.xpre - r.xcur)
                               - r.fpre * dpre * (r.xblk - r.xcur))
                    / (dblk * dpre * (r.fblk - r.fpre)))
        lim = 3.0 * fabs(r.sbis) - r.delta
        if fabs(r.spre) < lim:
            lim = fabs(r.spre)
        if 2.0 * fabs(stry) < lim:              # (NaN or a long step: bisection)
            r.spre = r.scur
            r.scur = stry
            return
    r.spre = r.sbis
    r.scur = r.sbis


cdef inline int _brent_point(BodyRun* b, Brent* r, int e, double x, double* g,
                             double* fx) noexcept nogil:
    """g of event e at time x of the accepted step, on its dense output (OUT: fx; g[e]; the
    output row there, kept as the newer of the last two)."""
    cdef int c = r.n & 1, st
    r.n += 1
    r.xrow[c] = x
    st = _dense_at(b, x, b.zd)
    if st == STATUS_OK:
        st = _event_values(b, x, b.zd, &r.rows[c * b.rs], &r.rows[c * b.rs + b.s.k], g, e,
                           True)
    if st == STATUS_OK:
        fx[0] = g[e]
    return st


cdef int _event_root(BodyRun* b, int e, double g0, double g1, double g_prev, double* g_try,
                     double* root, double* row, bint* have_row) noexcept nogil:
    """The time in the accepted step t -> t_new at which event e changes sign, g(t) = g0 and
    g(t_new) = g1 having opposite signs or one of them zero (OUT: root; and when have_row,
    row[:k] and row[k:][:3]: the output row there, already computed).

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
    cdef double t = b.t, t_new = b.t_new
    cdef double p, lim, xnext = 0.0, fnext = 0.0, slope
    cdef int st, c, q
    cdef bint first = True, pending = False, tried = False, fast, alone
    cdef Brent r
    r.xpre = t
    r.fpre = g0
    r.xcur = t_new
    r.fcur = g1
    r.xblk = r.fblk = r.spre = r.scur = 0.0
    r.delta = 2.0 * 2.220446049250313e-16 * (1.0 + fmax(fabs(t), fabs(t_new)))
    r.n = 0
    r.rows = b.brent_rows
    have_row[0] = False
    if r.fpre == 0.0:
        root[0] = r.xpre
        return STATUS_OK
    for _ in range(200):
        if _brent_bracket(&r):
            break
        if pending:                             # the second point of a pair
            pending = False
            r.xpre = r.xcur
            r.fpre = r.fcur
            r.xcur = xnext
            r.fcur = fnext
            continue
        p = NAN
        if first and g_prev == g_prev:
            p = _quadratic_root(b.t_prev, g_prev, t, g0, t_new, g1)
            if p == p and 2.0 * fabs(p - r.xcur) < 3.0 * fabs(r.sbis) - r.delta:
                r.spre = r.scur
                r.scur = p - r.xcur
            else:
                p = NAN
        first = False
        if not p == p:
            _brent_interpolate(&r)
        slope = (r.fcur - r.fpre) / (r.xcur - r.xpre) if r.xcur != r.xpre else 0.0
        r.xpre = r.xcur
        r.fpre = r.fcur
        fast = (fabs(r.scur) > r.delta and r.scur * r.scur < r.delta * fabs(r.spre)
                and fabs(r.scur) + r.delta < 2.0 * fabs(r.sbis))
        alone = fast and not tried
        if alone:
            # converging fast enough that xcur + scur is within delta/2 of the root: that
            # point alone, accepted when g there puts the root within delta/2 of it by the
            # last secant's slope (g's rounding is then far below |g'| delta/2)
            tried = True
            r.xcur = r.xcur + r.scur
        elif fast:
            # still converging fast: the points delta/2 either side of xcur + scur, evaluated
            # back to back (independent, their latencies overlap), close the bracket at once
            lim = 0.5 * r.delta if r.scur > 0.0 else -0.5 * r.delta
            xnext = r.xcur + r.scur + lim
            r.xcur = r.xcur + r.scur - lim
            st = _brent_point(b, &r, e, r.xcur, g_try, &r.fcur)
            if st == STATUS_OK:
                st = _brent_point(b, &r, e, xnext, g_try, &fnext)
            if st != STATUS_OK:
                return st
            pending = True
            continue
        elif fabs(r.scur) > r.delta:
            r.xcur = r.xcur + r.scur
        else:
            r.xcur = r.xcur + (r.delta if r.sbis > 0.0 else -r.delta)
        st = _brent_point(b, &r, e, r.xcur, g_try, &r.fcur)
        if st != STATUS_OK:
            return st
        if alone:
            if r.fcur == 0.0 or fabs(r.fcur) < 0.5 * r.delta * fabs(slope):
                break
        elif fabs(r.xcur - r.xpre) < 1e-6 * fabs(b.h) and (
                r.fcur == 0.0 or fabs(r.fcur) < 0.5 * r.delta * fabs(
                    (r.fcur - r.fpre) / (r.xcur - r.xpre))):
            break                               # the same residual test, on a close secant
    root[0] = r.xcur
    for c in range(2 if r.n >= 2 else r.n):
        if r.xrow[c] == r.xcur:
            for q in range(b.rs):
                row[q] = r.rows[c * b.rs + q]
            have_row[0] = True
            break
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


cdef void _events_clear(EventSet* es) noexcept:
    """An EventSet without events or records (`_events_free` may run on it)."""
    es.n = 0
    es.t_ev = NULL
    es.y_ev = NULL
    es.room = NULL
    es.count = NULL
    es.t_stop = NULL
    es.y_stop = NULL
    es.w_stop = NULL


cdef int _events_set_up(EventSet* es, void** evp, const Stepper* s, object events,
                        Py_ssize_t nbodies) except -1:
    """The events of `drive`'s `events` (an EventRequest: its objects borrowed into evp,
    EVENTS_MAX, and its cap) and their records, one per body and event (OUT: es; es.n stays 0
    without events)."""
    cdef Py_ssize_t size, i
    objects = () if events is None else events.objects
    if not len(objects):
        return 0
    cap = events.cap
    if s.control == NULL or len(objects) > EVENTS_MAX or (cap is not None and cap < 1):
        raise ValueError("the events do not match the stepper")
    for i in range(len(objects)):
        if not isinstance(objects[i], Event):
            raise TypeError("events must be rotode.events.Event objects")
        evp[i] = <void*>objects[i]
    es.ev = evp
    es.n = len(objects)
    es.needs_w = any([(<Event>e).needs_w for e in objects])
    at = events.at if events.at is not None else ((0, -1),) * len(objects)
    for i in range(len(objects)):
        es.q_at[i], es.w_at[i] = at[i]
        if not (0 <= es.q_at[i] <= s.k - 4 and -1 <= es.w_at[i] <= s.k - 3):
            raise ValueError("the events' places do not match the stepper")
    es.cap = PY_SSIZE_T_MAX if cap is None else min(cap, PY_SSIZE_T_MAX)
    size = max(nbodies * es.n, 1)
    es.t_ev = <double**>calloc(size, sizeof(double*))
    es.y_ev = <double**>calloc(size, sizeof(double*))
    es.room = <Py_ssize_t*>calloc(size, sizeof(Py_ssize_t))
    es.count = <long long*>malloc(size * sizeof(long long))
    es.t_stop = <double*>malloc(max(nbodies, 1) * sizeof(double))
    es.y_stop = <double*>malloc(max(nbodies, 1) * s.k * sizeof(double))
    es.w_stop = <double*>malloc(max(nbodies, 1) * 3 * sizeof(double))
    if es.t_ev == NULL or es.y_ev == NULL or es.room == NULL or es.count == NULL \
            or es.t_stop == NULL or es.y_stop == NULL or es.w_stop == NULL:
        raise MemoryError()
    return 0


cdef void _events_free(EventSet* es, Py_ssize_t nbodies) noexcept:
    """Free the records of `_events_set_up` (any of them NULL)."""
    cdef Py_ssize_t i
    for i in range(nbodies * es.n if es.t_ev != NULL and es.y_ev != NULL else 0):
        free(es.t_ev[i])
        free(es.y_ev[i])
    free(es.t_ev)
    free(es.y_ev)
    free(es.room)
    free(es.count)
    free(es.t_stop)
    free(es.y_stop)
    free(es.w_stop)


cdef object _event_output(const EventSet* es, Py_ssize_t nbodies, int k):
    """The occurrences kept in es, as an EventRecord of arrays and lists (see _runplan)."""
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
    return EventRecord(count, t_all, y_all, t_stop, _copy_out(es.y_stop, nbodies, k),
                       _copy_out(es.w_stop, nbodies, 3), over)
