# The one time-loop driver of rotode's fixed-grid methods (docs/architecture.md).
#
# A runner (kinematic.pyx, dynamic.pyx, implicit.pyx, ode.pyx) describes its method by a
# `Stepper`: four `noexcept nogil` callbacks on a per-body internal state z and a per-body
# scratch `work` (`Stepper.work_doubles` doubles, cast by the runner to its own struct), plus
# the runner's read-only configuration `cfg`.  The state has no size cap: up to STATE_MAX
# values (ERK_MAX_N for a pair) and WORK_DOUBLES of scratch live on the driver's stack, larger
# ones in one heap block per body.  `drive` owns everything else, once for every method:
# the loop over bodies (outermost, OpenMP over bodies, so batches are bit-identical to single
# runs whatever the thread count), the loop over grid steps, the output at `save` slots, the
# non-finite check after every step, NaN from a failure on, interrupt polling (Ctrl-C within
# ~50 ms on the calling thread), the stop of every body after a Python error, and the status
# codes below (`status_message` turns them into the result's message).

from rotode.erk cimport ERK, ERK_MAX_N, erk_rhs
from rotode._engine cimport BlockRun, EngineRun
from libc.math cimport INFINITY, nextafter

cdef enum:
    STATUS_OK = 0
    STATUS_TERMINATED = 1            # adaptive: a terminal event stopped the body (a success)
    STATUS_NONFINITE = 2             # the state became NaN or inf (reported, states NaN after)
    STATUS_SOURCE_ERROR = -1         # a Python error is stored in a source (re-raised)
    STATUS_UNAVAILABLE = -2          # a source cannot provide a value (e.g. no w')
    STATUS_INTERRUPTED = -3          # stopped: Ctrl-C, or another body's Python error
    STATUS_NOT_CONVERGED = -4        # an implicit solve did not converge in `max_iter`
    STATUS_NONFINITE_ITERATE = -5    # an implicit solve met a non-finite iterate or Jacobian
    STATUS_TOO_MANY_SUBSTEPS = -6    # a step needs more sub-steps than allowed
    STATUS_ROTATION_BOUND = -7       # magnus_ca: rotation per step beyond pi/sqrt(2)
    STATUS_STEP_TOO_SMALL = -8       # adaptive: the step fell below 10 ulp of t
    STATUS_MAX_STEPS = -9            # adaptive: `max_steps` accepted steps without reaching tf
    STATUS_NO_MEMORY = -10           # a record of the driver could not grow (MemoryError)
    STATUS_TORQUE_FAILED = -11       # a compiled torque returned nonzero (rotode/torque.pxd)
    STATUS_TORQUE_NONFINITE = -12    # a compiled torque gave a NaN or inf torque

# The compiled step kernels: the one enum that every runner (kinematic.pyx, dynamic.pyx,
# implicit.pyx) and rotode/steps.pyx switch on.  The registry (rotode.methods) names them:
# KERNEL_<NAME> has the value rotode.methods.KERNEL_NAMES.index(name), and a method's
# `Method.code(model)` is what a runner stores and switches on.  Cython exposes the enum to
# Python as rotode._driver.Kernel, which rotode._driver checks against the registry when it is
# imported (`rotode.methods.check_kernel_enum`).
cpdef enum Kernel:
    KERNEL_CG = 0                # Crouch-Grossman product of exponentials (both models)
    KERNEL_EXP2 = 1              # kinematics: Rucker 2018 eq. 28
    KERNEL_MAGNUS_CA = 2         # kinematics: Magnus series for constant angular acceleration
    KERNEL_MAGNUS = 3            # kinematics: Gauss-Legendre Magnus methods (1 to 4 nodes)
    KERNEL_RK3 = 4               # vector-space Runge-Kutta on the quaternion
    KERNEL_RK4 = 5
    KERNEL_AB3 = 6               # variable-step Adams-Bashforth 3
    KERNEL_ERK = 7               # an embedded pair on the state (rotode/erk.pxd), the driver's
    KERNEL_RKMK = 8              # the same pair on the rotation vector (rotode/rkmk.pxd)
    KERNEL_LIE_EULER = 9         # rigid body: Lie-Euler
    KERNEL_RKN4 = 10             # rigid body: Runge-Kutta-Nystrom (Mandre 2008)
    KERNEL_IMPLICIT = 11         # rigid body: Mizerski 2020's implicit solves (rotode.implicit)

cdef enum:
    WORK_DOUBLES = 256               # per-body scratch on the driver's stack (more: the heap)
    EVENTS_MAX = 16                  # events of one run
    STATE_MAX = 16                   # largest state z (and row) on the driver's stack

# z <- initial state of body i from its row y0 (OUT: z, work)
ctypedef int (*begin_fn)(const void* cfg, Py_ssize_t i, const double* y0, double* z,
                         void* work) noexcept nogil
# advance body i from t0 to t1 (IN/OUT: z, work)
ctypedef int (*step_fn)(const void* cfg, Py_ssize_t i, double t0, double t1, double* z,
                        void* work) noexcept nogil
# steps j0 -> j1 of the grid t (IN/OUT: z, work; OUT: j = where it stopped); a runner writes
# it as one call of `advance_steps` with its own step_fn, which the C compiler inlines
ctypedef int (*advance_fn)(const void* cfg, Py_ssize_t i, const double* t, Py_ssize_t j0,
                           Py_ssize_t j1, double* z, void* work,
                           Py_ssize_t* j) noexcept nogil
# output row y (k values) and body angular velocity w (3) at time t (OUT: y, w)
ctypedef int (*store_fn)(const void* cfg, Py_ssize_t i, double t, const double* z, double* y,
                         double* w, void* work) noexcept nogil
# after an accepted step of an embedded pair: move to new local coordinates (a Lie-group
# method: q_n <- q_n exp(v/2), v <- 0) and express the FSAL stage K0 = f(t, z) in them
# (IN/OUT: z, K0, work)
ctypedef void (*accept_fn)(const void* cfg, Py_ssize_t i, double* z, double* K0,
                           void* work) noexcept nogil
cdef struct Control:
    # step-size control of the adaptive methods (Hairer, Norsett & Wanner 1993 sec. II.4)
    double rtol
    const double* atol       # nz values
    const double* ref        # nz values: the error scale's floor of |z| (erk_error_norm)
    double first_step        # 0: chosen by the driver
    double max_step          # inf: none
    Py_ssize_t max_steps     # accepted steps per body before STATUS_MAX_STEPS
    # the output times are the caller's t_eval: as SciPy's solve_ivp, every accepted step
    # holding one (t0 in the first step, and a time on a step's end too) prepares its
    # interpolant, counted in nfev (DOP853: three evaluations); False: the rows at t0 and tf
    # of a run without t_eval, which need none
    bint t_eval


# An error-controlled method that is not an explicit Runge-Kutta pair (the adaptive Magnus
# methods): one trial step t -> t + h from z with its scaled error norm (OUT: znew, err;
# err < 1 accepts), the state at tt inside an accepted step (OUT: zout), the first step size
# (OUT: h).  The driver's controller, output, trace and status handling are shared.
ctypedef int (*trial_fn)(const void* cfg, Py_ssize_t i, double t, double h, const double* z,
                         double* znew, const Control* control, double* err,
                         void* work) noexcept nogil
ctypedef int (*dense_fn)(const void* cfg, Py_ssize_t i, double t, double h, const double* z,
                         const double* znew, double tt, double* zout,
                         void* work) noexcept nogil
ctypedef int (*first_fn)(const void* cfg, Py_ssize_t i, double t0, const double* z,
                         double direction, double span, const Control* control, double* h,
                         void* work) noexcept nogil
# a body's whole error-controlled run in one call (the specialised engine, rotode/_engine.pxd),
# instead of the driver's own loop; the run's grid, control and polling are filled in by the
# driver (IN/OUT: run)
ctypedef int (*body_fn)(const void* cfg, Py_ssize_t i, EngineRun* run) noexcept nogil
# the whole fixed-grid run of the block of run.nb bodies from body i on (the lane kernels,
# rotode/_lanes.hpp), instead of the driver's loop over each; the grid, the block's rows and
# counters and the polling are filled in by the driver (IN/OUT: run)
ctypedef void (*block_fn)(const void* cfg, Py_ssize_t i, BlockRun* run) noexcept nogil
# the error-controlled runs of the nb bodies from body i on, as `body_fn` runs each, in SIMD
# lanes (the adaptive lane kernels, rotode/_lanes_erk.hpp); runs[j] is body i + j's (IN/OUT)
ctypedef void (*bodies_fn)(const void* cfg, Py_ssize_t i, EngineRun* runs,
                           Py_ssize_t nb) noexcept nogil
# after the last step (status: the body's status); counters, final states (may be NULL)
ctypedef void (*end_fn)(const void* cfg, Py_ssize_t i, int status, const double* z,
                        void* work) noexcept nogil


cdef struct Stepper:
    const void* cfg
    begin_fn begin
    advance_fn advance
    store_fn store
    # NULL, or `store` without the body angular velocity (w left as it is): the row alone,
    # for events that do not read w (a kinematic run's w costs a rate evaluation)
    store_fn store_row
    end_fn end
    int k0               # columns of y0
    int k                # columns of y_out
    int nz               # leading entries of z checked for finiteness after every step
    Py_ssize_t work_doubles  # the scratch `work` a body needs (make_stepper: WORK_DOUBLES)
    bint to_end          # True: step to the grid's end even after the last saved slot
    # True: a row at t0 is y0 itself (k0 == k, w = y0[4:7]) as in solve_ivp, not the state
    # read back (a normalised q, or w = I^-1 (I w0), would differ in the last bits)
    bint y0_row
    # An explicit Runge-Kutta pair (rotode/erk.pxd) instead of `step`: the driver steps
    # z' = deriv(t, z) (the first nz entries of z) itself; with `control` the steps are
    # chosen by the error estimate and the grid holds only the output times.
    const ERK* erk
    erk_rhs deriv
    const Control* control
    accept_fn accept     # NULL, or the re-anchoring of a Lie-group pair after each step
    const EventSet* events   # NULL, or the events located on each accepted step
    # instead of `erk` (adaptive runs only): a method with its own trial step and estimate
    trial_fn trial
    dense_fn dense
    first_fn first
    double exponent      # the controller's exponent -1/(order of the estimate + 1)
    # > 0: the largest rotation one controlled step may take (the methods whose
    # state is the rotation vector of the step: its chart, dexp^-1, is singular at 2 pi)
    double max_angle
    int angle_blocks     # the rotation vectors z[3j:3j+3], j < angle_blocks, it bounds (1)
    int evals            # right-hand-side evaluations per trial step (and per dense output)
    # True: `store` gives the row z[:k] and w = z[4:7] unchanged (the rigid body's pairs), so
    # that events read the state itself
    bint row_is_state
    # NULL, or n_stops ascending times that no controlled step crosses (a step that would ends
    # on the stop): where the equations are not smooth, e.g. the knots of sampled rates.  With
    # stops_jump the equations jump there (a zero-order hold): a pair's step that ends on a
    # stop evaluates its end just inside the step, and the next step starts with a fresh
    # f(t, y) instead of the FSAL stage
    const double* stops
    Py_ssize_t n_stops
    bint stops_jump
    # NULL, or the specialised engine's whole run of one body (adaptive runs without events,
    # step records or stops): the driver's loop is then not used
    body_fn body
    # NULL, or the run of a block of up to `lanes` bodies on a fixed grid (a runner sets it
    # only where the block gives each body its own run's bits): the driver's loop is then not used
    block_fn block
    int lanes
    # NULL, or `body` for queues of bodies in SIMD lanes (`lanes` of them at a time; a runner
    # sets it only where each body gets its `body` run's bits): used where `body` would be
    bodies_fn bodies


cdef inline Py_ssize_t stops_before(const double* stops, Py_ssize_t n, double t,
                                    bint inclusive) noexcept nogil:
    """How many of the ascending `stops` lie below t (at or below t when `inclusive`)."""
    cdef Py_ssize_t lo = 0, hi = n, mid
    while lo < hi:
        mid = (lo + hi) // 2
        if stops[mid] < t or (inclusive and stops[mid] == t):
            lo = mid + 1
        else:
            hi = mid
    return lo


cdef inline double clip_to_stop(const double* stops, Py_ssize_t n, double t, double t_new,
                                double direction, bint* on_stop) noexcept nogil:
    """t_new, or the first of the ascending `stops` strictly between t and t_new (OUT:
    on_stop, True when the result is a stop, t_new itself included)."""
    cdef Py_ssize_t k
    on_stop[0] = False
    if direction > 0.0:
        k = stops_before(stops, n, t, True)         # stops[k]: the first stop > t
        if k < n and stops[k] <= t_new:
            on_stop[0] = True
            return stops[k]
    else:
        k = stops_before(stops, n, t, False)        # stops[k - 1]: the last stop < t
        if k > 0 and stops[k - 1] >= t_new:
            on_stop[0] = True
            return stops[k - 1]
    return t_new


cdef inline double inside_from(const Stepper* s, double t, double direction) noexcept nogil:
    """The time at which a step from t reads its first stage: t, or the next float towards the
    step where the equations jump at t (a stop with `stops_jump`), so that the step reads its
    own side of the jump."""
    cdef Py_ssize_t k
    if not s.stops_jump:
        return t
    k = stops_before(s.stops, s.n_stops, t, False)  # stops[k]: the first stop >= t
    if k < s.n_stops and s.stops[k] == t:
        return nextafter(t, direction * INFINITY)
    return t


cdef inline int advance_steps(step_fn step, int nz, const void* cfg, Py_ssize_t i,
                              const double* t, Py_ssize_t j0, Py_ssize_t j1, double* z,
                              void* work, Py_ssize_t* j) noexcept nogil:
    """Steps j0 -> j1 of body i with `step`, stopping at the first failed step (OUT: z; j = j1,
    or the index of the step that failed).  A non-finite state is found at the end of the
    chunk (NaN and inf propagate through the steps; checking each step would cost ~10 % of a
    cheap step), reported as STATUS_NONFINITE with j = j1."""
    cdef Py_ssize_t jj
    cdef int st, c
    for jj in range(j0, j1):
        st = step(cfg, i, t[jj], t[jj + 1], z, work)
        if st != STATUS_OK:
            j[0] = jj
            return st
    j[0] = j1
    for c in range(nz):
        if not (z[c] - z[c] == 0.0):              # NaN or inf
            return STATUS_NONFINITE
    return STATUS_OK


cdef inline Stepper make_stepper(const void* cfg, begin_fn begin, advance_fn advance,
                                 store_fn store, end_fn end, int k0, int k, int nz,
                                 bint to_end) noexcept:
    """A `Stepper` from its parts (`end` may be NULL)."""
    cdef Stepper s
    s.cfg = cfg
    s.begin = begin
    s.advance = advance
    s.store = store
    s.store_row = NULL
    s.end = end
    s.k0 = k0
    s.k = k
    s.nz = nz
    s.work_doubles = WORK_DOUBLES
    s.to_end = to_end
    s.y0_row = False
    s.erk = NULL
    s.deriv = NULL
    s.control = NULL
    s.accept = NULL
    s.events = NULL
    s.trial = NULL
    s.dense = NULL
    s.first = NULL
    s.exponent = 0.0
    s.evals = 0
    s.max_angle = 0.0
    s.angle_blocks = 1
    s.row_is_state = False
    s.stops = NULL
    s.n_stops = 0
    s.stops_jump = False
    s.body = NULL
    s.block = NULL
    s.lanes = 1
    s.bodies = NULL
    return s


cdef struct EventSet:
    # the events of an adaptive run (rotode/events.pxd) and where their occurrences go: one
    # growable record per body and event, written (and grown) only by the thread running the
    # body, owned and freed by `drive`
    void** ev                # n borrowed rotode.events.Event objects
    int n
    Py_ssize_t cap           # occurrences kept per body and event (PY_SSIZE_T_MAX: all)
    double** t_ev            # (N n) per body and event: the kept times (room,), or NULL
    double** y_ev            # (N n) per body and event: the kept output rows (room, k), or NULL
    Py_ssize_t* room         # (N n) occurrences each record has room for
    long long* count         # (N, n) occurrences (also those beyond cap)
    double* t_stop           # (N,) time of the terminal event, NaN without one
    double* y_stop           # (N, k) each body's row where its run ended (at t_stop or tf;
    double* w_stop           # (N, 3) NaN after a failure) and its body angular velocity
    bint needs_w             # some event reads the body angular velocity (Event.needs_w)
    int q_at[EVENTS_MAX]     # per event: the offset in the row of what it reads as [q, ...]
    int w_at[EVENTS_MAX]     # per event: where it reads w in the row (-1: the run's w)


cdef struct Trace:
    # every accepted step of one body's adaptive run (rotode.solve_ivp without t_eval, and
    # its dense output): row 0 is t0, row j + 1 the end of step j.  Owned by `drive`, which
    # grows it (realloc) as the run needs and frees it on every path.
    Py_ssize_t cap           # rows available in t, y, w; steps available in z, F, h
    Py_ssize_t n             # rows written (OUT)
    bint dense               # also z, F and h
    double* t                # (cap,)
    double* y                # (cap, k) the stored rows
    double* w                # (cap, 3)
    double* z                # (cap, nz) the state at each step's start (dense), or NULL
    double* F                # (cap, 7 nz) each step's dense-output coefficients, or NULL
    # (cap,) each step's size (dense; a step cut by a terminal event keeps its
    # interpolant over the whole step), or NULL
    double* h
    # a pair's first stage f(t0, z0) (K0_in: given, as a run continued from the end of an
    # earlier one has it after its accept hook, instead of evaluated); OUT: the first stage
    # of the step after the last one
    bint K0_in
    double* K0           # (nz,)


cdef struct Grid:
    const double* t      # n + 1 times
    Py_ssize_t n
    const Py_ssize_t* save   # m strictly increasing indices into t
    Py_ssize_t m


# Run `s` over the grid t (n + 1,) with output slots `save` (m,) for the bodies of y0
# (N, k0); returns (y_out, w_out, status, failed, counts, fail_t, records): the rows y_out
# (N, m, k) and body angular velocities w_out (N, m, 3), status (N,) int32, failed (N,) intp
# (the failing step, -1), counts (N, 3) int64 (adaptive: accepted and rejected steps,
# right-hand-side evaluations of the embedded pair, counted as SciPy counts them; a fixed
# grid: counts[:, 0] bounds the steps where a failure happened, `outcome`'s `last`), fail_t
# (N,) (the time of a failure) and a rotode._runplan.Records of what was asked for, each None
# otherwise.  `steps` (one body, adaptive): a StepRequest; the record of every step comes back
# as a StepRecord: arrays t (n,), y (n, k), w (n, 3) and, when dense, z (n - 1, nz),
# F (n - 1, 7 nz), h (n - 1,) (the record grows as the run needs, so the run is made
# once), and K0 (nz,) the first stage of the step after the last one (a pair's; given in the
# request, the run starts with it instead of evaluating it: a run continued with the same
# bits).  `h_next`: Records.h_next (N,) holds each body's proposal for the step after its last
# one (an adaptive run continued from there takes the same steps).  `events` (adaptive): an
# EventRequest (the Event objects, the occurrences kept per body and event or None: all); the
# occurrences come back as an EventRecord (counts, times and rows, t_stop, and the final rows
# y_stop, w_stop).  Raises the KeyboardInterrupt (or other exception of a signal handler)
# caught while polling, and MemoryError when a record cannot grow.
cdef tuple drive(const Stepper* s, object t, object save, object y0, int workers,
                 object steps=*, bint h_next=*, object events=*)


# One body's run by `body` (the specialised engine) on the calling thread, polled as `drive`
# polls; returns its status, raises what a signal handler raised
cdef int engine_single(body_fn body, const void* cfg, EngineRun* run) except? -2


# The arguments of the thin call path (`rotode.integrate`'s common call, docs/architecture.md):
# the output grid (t0, tf), the tolerances the run reads and y0 when it came as a list or tuple
# (of at most THIN_MAX_N values: a fixed-step call of a user's state)
cdef enum:
    THIN_MAX_N = 64
cdef struct ThinCall:
    double grid[2]
    double atol[ERK_MAX_N]
    double y0[THIN_MAX_N]


# Fill `run` from t_span, y0 (k values), rtol and atol when they are of the simple forms the thin
# path takes and pass integrate's checks (OUT: c, run; the output rows are the caller's); False
# otherwise (the general path then runs, and raises its errors).  `given`: the output grid and
# saved indices `_plan.output_grid` made of t_span and t_eval (the caller keeps it alive), or
# None for the rows at t0 and tf.
cdef bint thin_call(object t_span, object y0, object rtol, object atol, int k, ThinCall* c,
                    EngineRun* run, object given=*)


# The run `thin_call` prepared, by `body` on the calling thread: ``(t, y (m, k), w (m, 3))`` of
# its m saved rows, or None when it failed (the general path then runs it again and reports the
# failure)
cdef object thin_rows(body_fn body, const void* cfg, int k, const ThinCall* c, EngineRun* run)


# A fixed-step call of one body on the thin path: `integrate`'s grid of t_span and dt (a Python
# float or int) and its saved rows (save_every None or a Python int), y0 as in `thin_call` (k <=
# THIN_MAX_N values; its first four a nonzero quaternion when `quaternion`), in `run` (OUT: c,
# run; the rows are the caller's); returns (the grid (n + 1,), the saved indices (m,)), or None
# for anything `_plan.time_grid` would refuse or handles otherwise (the general path then
# runs, and raises its errors); `given`: None, or that grid and those indices already made by
# `_plan.time_grid` (a call with t_eval), then taken as they are
cdef object thin_grid(object t_span, object dt, object save_every, object y0, int k,
                      bint quaternion, ThinCall* c, BlockRun* run, object given)


# The run `thin_grid` prepared, by the lane kernel `block` on the calling thread, polled as
# `drive` polls: ``(t, y (m, k), w (m, 3))`` of the saved rows, or None when it failed (the
# general path then runs it again and reports the failure); `grid` is thin_grid's
cdef object thin_block_rows(block_fn block, const void* cfg, int k, object grid, BlockRun* run)


# The same by the driver's own fixed-grid loop over the stepper `s` (no lane kernel: a user's
# equations), as `drive` runs one body on the calling thread
cdef object thin_stepper_rows(const Stepper* s, object grid, BlockRun* run)


cdef class Engine:
    # The explicit Runge-Kutta pair of a registry method (doubles) and, for an adaptive run,
    # its step-size control; `attach` makes a Stepper use them with the runner's f(t, z).
    cdef ERK erk
    cdef Control control
    cdef readonly bint adaptive
    cdef object _atol
    cdef object _ref
    cdef object _spec
    cdef void attach(self, Stepper* s, erk_rhs deriv) noexcept
    cdef void attach_control(self, Stepper* s) noexcept
    cdef _set_control(self, object control, int n, object ref)
