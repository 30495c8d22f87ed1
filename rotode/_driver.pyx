"""The one time-loop driver of the fixed-grid methods and their status contract.

`drive` (cimport-able, rotode/_driver.pxd) runs a runner's `Stepper` over bodies and grid steps;
`outcome` turns the per-body status codes into the ``status``/``message`` every runner reports
(re-raising a Python error stored in a source).  docs/architecture.md draws the layers.

This file holds the driver's state (`Run`: a run's arrays; `BodyRun`: one body's step state,
passed by pointer to every part of the loop) and its Python functions; the parts of the loop
are included, one concern each:

- ``_driver_run.pxi``: `drive` (its records set up and freed, the threads over bodies),
  `engine_single` and the thin call path (`thin_call`, `thin_rows`), the polling of signals;
- ``_driver_loop.pxi``: one body's set-up, the fixed-grid loop, the specialised engine's call;
- ``_driver_control.pxi``: the error-controlled loop (start, trial steps and controller,
  outputs by dense output, accept, end);
- ``_driver_events.pxi``: the events of a step and their roots (Brent's method);
- ``_driver_trace.pxi``: the record of every step;
- ``_driver_pair.pxi``: `Engine`, a registry method's pair and its step size control.
"""
import numpy as np

from rotode import methods as _methods
from rotode._loops import TINY_NORM2
from rotode._runplan import EventRecord, Records, StepRecord
from rotode._validation import DEFAULT_MAX_STEPS
from rotode.events import _nan_error
from rotode.torque import _REASONS as _TORQUE_REASONS

from cpython.exc cimport PyErr_CheckSignals
from cpython.pyport cimport PY_SSIZE_T_MAX
from cython.parallel cimport prange, threadid
from libc.math cimport NAN, INFINITY, fabs, floor, fmax, nextafter, sqrt, isfinite
from libc.stdlib cimport malloc, calloc, realloc, free
from libc.string cimport memcpy
from posix.time cimport clock_gettime, timespec, CLOCK_MONOTONIC
cimport numpy as cnp
from rotode._loops cimport thread_count
from rotode.events cimport Event
from rotode.torque cimport TORQUE_FAILED, TORQUE_NONFINITE
from rotode._engine cimport EngineRun, EngineStep, clip_step, decide_step, cbool
from rotode.rkmk cimport rkmk_step_angle
from rotode.erk cimport (ERK, ErkRhs, ErkTol, ERK_MAX_STAGES, ERK_MAX_N, ERK_MAX_POWERS,
                         ERK_STANDARD, ERK_DOP853, erk_step, erk_error_norm, erk_initial_step,
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
    "terminated": STATUS_TERMINATED, "torque_failed": STATUS_TORQUE_FAILED,
    "torque_nonfinite": STATUS_TORQUE_NONFINITE,
}

# a compiled torque's failure codes reach the driver unchanged through the runners
if (STATUS_TORQUE_FAILED, STATUS_TORQUE_NONFINITE) != (TORQUE_FAILED, TORQUE_NONFINITE):
    raise ImportError("rotode/_driver.pxd's STATUS_TORQUE_* are not rotode/torque.pxd's codes")

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
    STATUS_TORQUE_FAILED: _TORQUE_REASONS[TORQUE_FAILED],
    STATUS_TORQUE_NONFINITE: _TORQUE_REASONS[TORQUE_NONFINITE],
}

# The step-size controller of SciPy's explicit Runge-Kutta methods (Hairer, Norsett & Wanner
# 1993, sec. II.4: safety factor 0.9, one step's change within 0.2 .. 10) is rotode/_engine.hpp's
# `clip_step` and `decide_step`, which every compiled loop shares.

cdef double POLL_SECONDS = 0.05      # signal checks at most this often (calling thread only)
cdef Py_ssize_t TRACE_FIRST = 64     # first rows of a step record (doubled when full)
cdef Py_ssize_t EVENTS_FIRST = 16    # first occurrences of a body's event record (doubled)


cdef enum:
    # the buffers of a small body (`BodyRun.small`): work, z, znew, zd, K, F, scratch, row,
    # the events' rows and Brent's
    SMALL_DOUBLES = (WORK_DOUBLES + 3 * STATE_MAX + ERK_MAX_STAGES * ERK_MAX_N + 12 * ERK_MAX_N
                     + (EVENTS_MAX + 2) * (STATE_MAX + 3))


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


cdef struct Ticker:
    # the specialised engine's poll of one body (`_engine_tick`): its thread's clock
    Clock* clk
    Poll* p
    bint poller


cdef struct Run:
    # One run of `drive`: the stepper, the grid and every body's arrays (body i's at its row
    # i), shared read-only by the threads; each body writes its own rows.
    const Stepper* s
    Grid g
    const double* y0         # (N, k0)
    double* yo               # (N, m, k) output rows (NULL when m == 0)
    double* wo               # (N, m, 3) body angular velocities (NULL when m == 0)
    int* status              # (N,)
    Py_ssize_t* failed       # (N,)
    double* fail_t           # (N,)
    long long* counts        # (N, 3)
    double* h_next           # (N,), or NULL
    Trace* trace             # the step record of a run of one body, or NULL
    Poll* poll
    bint adaptive            # error-controlled steps (s.control)


cdef struct BodyRun:
    # The step state of one body's run: what the loop, the controller, the dense output, the
    # event-root search and the step record share, in one struct on the stack of the thread
    # running the body (`_one`), passed to each of them by pointer.
    # -- the runner's scratch (cast by the runner to its own struct) and the buffers: the
    # state, the trial step's state, a state inside the step, the pair's stages (FSAL stage
    # first), the step's interpolant, the pair kernels' scratch, an output row, the events'
    # rows (EVENTS_MAX of rs = k + 3 values: the row, then w) and Brent's two rows.  They point
    # into `small` (a state of up to ERK_MAX_N values, STATE_MAX without a pair) or into
    # `heap`, one block per body (`_buffers`).
    double* work
    double* z
    double* znew
    double* zd
    double* K
    double* F
    double* scratch
    double* row
    double* ev_rows
    double* brent_rows
    Py_ssize_t rs
    void* heap
    double small[SMALL_DOUBLES]
    # -- the body and where its results go (`_body_init`)
    const Stepper* s
    const Grid* g
    const ERK* T             # s.erk: the explicit Runge-Kutta pair, or NULL
    const Control* C         # s.control: the step size control, or NULL (a fixed grid)
    Py_ssize_t i             # the body
    const double* y0         # its initial row (k0)
    double* yo               # its output rows (m, k) and body angular velocities (m, 3)
    double* wo
    int* status              # OUT: its status, the step where it failed and the time there,
    Py_ssize_t* failed       # and its counters (accepted and rejected steps, evaluations; on
    double* fail_t           # a fixed grid counts[0]: the grid index after the failure)
    long long* counts
    double* h_next           # OUT: the step size proposed after the last step, or NULL
    Trace* tr                # the step record, or NULL
    Poll* poll
    Clock* clk               # the polling clock of the body's thread
    bint poller              # the calling thread: it runs Python's signal handlers
    bint began               # `begin` was called (then `end` is called too)
    ErkRhs rhs               # the pair kernels' f(t, z): s.deriv on (cfg, i, work), nz values
    ErkTol tol               # the error scale of C (error-controlled runs)
    # -- the controlled loop's step t -> t_new = t + h; h_abs: |h| while the step is tried,
    # then the proposal for the next one
    bint pair                # an explicit Runge-Kutta pair (else a method with s.trial)
    double exponent          # the controller's exponent -1/(order of the estimate + 1)
    double t
    double tf
    double direction
    double h
    double h_abs
    double t_new
    double err               # the trial step's scaled error norm (< 1 accepts)
    double angle             # its largest rotation (when s.max_angle > 0: rkmk_step_angle)
    bint on_stop             # the step ends on one of s.stops
    bint prepared            # the step's interpolant F is ready
    bint t0_requested        # t_eval holds t0 (the first step prepares its interpolant)
    Py_ssize_t slot          # the next output slot
    Py_ssize_t accepted
    Py_ssize_t rejected
    long long nfev           # right-hand-side evaluations, counted as SciPy counts them
    long long stores         # rows with w its events' code stored (`store`, not `store_row`)
    # -- events: where the accepted step ends (a terminal event's time, else t_new), g at the
    # step's start and at the previous step's start t_prev (NaN: none), each event's
    # occurrences, and an output row's scratch
    double t_end
    bint terminated
    double t_prev
    double g_old[EVENTS_MAX]
    double g_prev[EVENTS_MAX]
    long long occurrences[EVENTS_MAX]
    double wrow[3]


include "_driver_run.pxi"
include "_driver_loop.pxi"
include "_driver_control.pxi"
include "_driver_events.pxi"
include "_driver_trace.pxi"
include "_driver_pair.pxi"


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
