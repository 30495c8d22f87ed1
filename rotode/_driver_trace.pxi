# The driver's record of every step (included by rotode/_driver.pyx): one body's accepted steps
# of an adaptive run (rotode.solve_ivp without t_eval, and its dense output), appended after
# each step, grown (realloc) as the run needs, handed back as arrays of the exact size, and
# freed by `drive` on every path.


cdef int _trace_step(BodyRun* b, double t_row, const double* zrow) noexcept nogil:
    """Append the accepted step t -> t_new to the record b.tr (and its interpolant when
    tr.F), its row at t_row (t_new, or the time of a terminal event inside the step, state
    zrow)."""
    cdef const Stepper* s = b.s
    cdef Trace* tr = b.tr
    cdef Py_ssize_t j = tr.n - 1               # the step's index
    cdef int st, c, n = s.nz
    if tr.n >= tr.cap:
        st = _trace_grow(tr, s.k, n)
        if st != STATUS_OK:
            return st
    if tr.F != NULL:
        st = _prepare_dense(b)
        if st != STATUS_OK:
            return st
        for c in range(n):
            tr.z[j * n + c] = b.z[c]
        for c in range(7 * n):
            tr.F[j * 7 * n + c] = b.F[c]
        tr.h[j] = b.h
    st = s.store(s.cfg, b.i, t_row, zrow, &tr.y[tr.n * s.k], &tr.w[3 * tr.n], <void*>b.work)
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


cdef void _trace_clear(Trace* tr) noexcept:
    """An empty record without memory (`_trace_free` may run on it)."""
    tr.cap = 0
    tr.n = 0
    tr.dense = False
    tr.t = NULL
    tr.y = NULL
    tr.w = NULL
    tr.z = NULL
    tr.F = NULL
    tr.h = NULL
    tr.K0_in = False
    tr.K0 = NULL


cdef int _trace_set_up(Trace* tr, const Stepper* s, object steps) except -1:
    """The record of `drive`'s `steps` (a StepRequest: `dense`, and `K0` the first stage or
    None), with room for its first rows (OUT: tr; nothing without one)."""
    cdef Py_ssize_t c
    if steps is None:
        return 0
    tr.dense = bool(steps.dense)
    tr.K0 = <double*>calloc(s.nz if s.nz > 0 else 1, sizeof(double))
    if tr.K0 == NULL:
        raise MemoryError()
    K0 = steps.K0
    if K0 is not None:
        K0 = np.ascontiguousarray(K0, dtype=np.float64)
        if K0.shape != (s.nz,) or s.erk == NULL:
            raise ValueError("the step record's K0 does not match the stepper")
        for c in range(s.nz):
            tr.K0[c] = K0[c]
        tr.K0_in = True
    if _trace_grow(tr, s.k, s.nz) != STATUS_OK:
        raise MemoryError()
    return 0


cdef void _trace_free(Trace* tr) noexcept:
    """Free the record's memory (any of it NULL)."""
    free(tr.t)
    free(tr.y)
    free(tr.w)
    free(tr.z)
    free(tr.F)
    free(tr.h)
    free(tr.K0)


cdef object _trace_output(const Trace* tr, int k, int nz):
    """The rows and steps written to tr, as a StepRecord of arrays of their exact sizes."""
    cdef Py_ssize_t n = tr.n, steps = tr.n - 1 if tr.n > 0 else 0
    if not tr.dense:
        return StepRecord(_copy_out(tr.t, n, 0), _copy_out(tr.y, n, k), _copy_out(tr.w, n, 3),
                          _copy_out(tr.K0, nz, 0))
    return StepRecord(_copy_out(tr.t, n, 0), _copy_out(tr.y, n, k), _copy_out(tr.w, n, 3),
                      _copy_out(tr.K0, nz, 0), _copy_out(tr.z, steps, nz),
                      _copy_out(tr.F, steps, 7 * nz), _copy_out(tr.h, steps, 0))
