"""The one time-loop driver of the fixed-grid methods and their status contract.

`drive` (cimport-able, rotode/_driver.pxd) runs a runner's `Stepper` over bodies and grid steps;
`outcome` turns the per-body status codes into the ``status``/``message`` every runner reports
(re-raising a Python error stored in a source).  docs/architecture.md draws the layers.
"""
from cpython.exc cimport PyErr_CheckSignals
from cython.parallel cimport prange, threadid
from libc.math cimport NAN
from posix.time cimport clock_gettime, timespec, CLOCK_MONOTONIC
from rotode._loops cimport thread_count

cdef extern from *:
    """
    static inline int rotode_load_flag(const int* p) {
        return __atomic_load_n(p, __ATOMIC_RELAXED);
    }
    static inline void rotode_set_flag(int* p) { __atomic_store_n(p, 1, __ATOMIC_RELAXED); }
    """
    int rotode_load_flag(const int* p) noexcept nogil
    void rotode_set_flag(int* p) noexcept nogil

__all__ = ["STATUS", "outcome"]

#: Public names of the status codes (docs/architecture.md, "status contract").
STATUS = {
    "ok": STATUS_OK, "nonfinite": STATUS_NONFINITE, "source_error": STATUS_SOURCE_ERROR,
    "unavailable": STATUS_UNAVAILABLE, "interrupted": STATUS_INTERRUPTED,
    "not_converged": STATUS_NOT_CONVERGED, "nonfinite_iterate": STATUS_NONFINITE_ITERATE,
    "too_many_substeps": STATUS_TOO_MANY_SUBSTEPS, "rotation_bound": STATUS_ROTATION_BOUND,
}

_REASONS = {
    STATUS_NONFINITE: "the state became non-finite (NaN or inf; step too large?)",
    STATUS_UNAVAILABLE: "a source could not provide a value",
    STATUS_INTERRUPTED: "the run was interrupted",
    STATUS_NOT_CONVERGED: "the implicit solve did not converge in `max_iter` iterations",
    STATUS_NONFINITE_ITERATE: "a non-finite iterate, state or Jacobian appeared",
    STATUS_TOO_MANY_SUBSTEPS: "the step needs more sub-steps than `max_substeps`",
    STATUS_ROTATION_BOUND: "the rotation over the step reached the bound of the method",
}

cdef double POLL_SECONDS = 0.05      # signal checks at most this often (calling thread only)


cdef struct Poll:
    int stop             # set: every body stops at its next step (STATUS_INTERRUPTED)
    int stride           # steps between clock reads (adapts to the step cost)
    int countdown
    double last_clock    # last clock read
    double last_check    # last signal check
    void* errors         # borrowed list receiving the exception of a signal handler


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


cdef inline void _poll(Poll* p) noexcept nogil:
    """Called every step on the calling thread: a clock read every `stride` steps (the stride
    doubles while steps are cheap, halves while they are slow), signals every POLL_SECONDS."""
    cdef double now, gap
    p.countdown -= 1
    if p.countdown > 0:
        return
    now = _now()
    gap = now - p.last_clock
    p.last_clock = now
    if gap < 1e-3 and p.stride < 65536:
        p.stride *= 2
    elif gap > 1e-2 and p.stride > 1:
        p.stride //= 2
    p.countdown = p.stride
    if now - p.last_check >= POLL_SECONDS:
        p.last_check = now
        _check_signals(p)


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


cdef int _body(const Stepper* s, const Grid* g, Py_ssize_t i, const double* y0, double* yo,
               double* wo, int* status, Py_ssize_t* failed, Poll* p,
               bint poller) noexcept nogil:
    """The whole time loop of body i (OUT: yo[m*k], wo[m*3], status[0], failed[0])."""
    cdef double work[WORK_DOUBLES]
    cdef double z[STATE_MAX]
    cdef Py_ssize_t j, slot = 0, fail = -1
    cdef int st, c
    st = s.begin(s.cfg, i, y0, z, <void*>work)
    if st == STATUS_OK and g.m > 0 and g.save[0] == 0:
        st = s.store(s.cfg, i, g.t[0], z, yo, wo, <void*>work)
        if st == STATUS_OK:
            slot = 1
    if st != STATUS_OK:
        fail = 0
    else:
        for j in range(g.n):
            if slot >= g.m and not s.to_end:
                break
            if rotode_load_flag(&p.stop):
                st = STATUS_INTERRUPTED
            else:
                if poller:
                    _poll(p)
                st = s.step(s.cfg, i, g.t[j], g.t[j + 1], z, <void*>work)
                if st == STATUS_OK:
                    for c in range(s.nz):
                        if not (z[c] - z[c] == 0.0):      # NaN or inf
                            st = STATUS_NONFINITE
            if st == STATUS_OK and slot < g.m and g.save[slot] == j + 1:
                st = s.store(s.cfg, i, g.t[j + 1], z, &yo[slot * s.k], &wo[3 * slot],
                             <void*>work)
                if st == STATUS_OK:
                    st = _check_row(&yo[slot * s.k], s.k, &wo[3 * slot])
                if st == STATUS_OK:
                    slot += 1
            if st != STATUS_OK:
                fail = j
                break
    while slot < g.m:                  # after a failure: NaN, never silently wrong numbers
        for c in range(s.k):
            yo[slot * s.k + c] = NAN
        for c in range(3):
            wo[3 * slot + c] = NAN
        slot += 1
    if s.end != NULL:
        s.end(s.cfg, i, st, z, <void*>work)
    if st == STATUS_SOURCE_ERROR:     # a Python error: the caller raises it, stop the others
        rotode_set_flag(&p.stop)
    status[0] = st
    failed[0] = fail
    return st


cdef int drive(const Stepper* s, object t, object save, object y0, object y_out, object w_out,
               object status, object failed, int workers) except -1:
    cdef const double[::1] tv = t
    cdef const Py_ssize_t[::1] sv = save
    cdef const double[:, ::1] yv = y0
    cdef double[:, :, ::1] yo = y_out
    cdef double[:, :, ::1] wo = w_out
    cdef int[::1] stv = status
    cdef Py_ssize_t[::1] fv = failed
    cdef Py_ssize_t nbodies = yv.shape[0], i
    cdef Grid g
    cdef list errors = []
    cdef Poll p
    cdef int nthreads = thread_count(workers)
    if s.nz > STATE_MAX or yv.shape[1] != s.k0 or yo.shape[2] != s.k:
        raise ValueError("the stepper does not match its arrays")
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
    p.stride = 1
    p.countdown = 1
    p.last_clock = _now()
    p.last_check = p.last_clock
    p.errors = <void*>errors
    if nthreads == 1 or nbodies < 2:
        with nogil:
            for i in range(nbodies):
                _body(s, &g, i, &yv[i, 0], yop + i * ky, wop + i * kw, &stv[i], &fv[i], &p,
                      True)
    else:
        for i in prange(nbodies, nogil=True, num_threads=nthreads, schedule="static"):
            _body(s, &g, i, &yv[i, 0], yop + i * ky, wop + i * kw, &stv[i], &fv[i], &p,
                  threadid() == 0)
    if errors:
        raise errors[0]
    return 0


def outcome(status, failed, t, sources=(), reasons=None):
    """``(status, message)`` of a run from its per-body codes (the status contract).

    A body whose source stored a Python error (``STATUS_SOURCE_ERROR``) makes this raise that
    error unchanged; otherwise the first failed body names the step, its time and the reason
    (`reasons` overrides the default texts per code), and the result reports its code.
    """
    import numpy as np
    status = np.asarray(status)
    bad = np.flatnonzero(status != STATUS_OK)
    if bad.size == 0:
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
    span = (f"t = {float(t[j])!r} to {float(t[j + 1])!r}" if j + 1 < len(t)
            else f"t = {float(t[j])!r}")
    return code, f"body {k}, step {j} ({span}): {reason}; its states from there on are NaN"
