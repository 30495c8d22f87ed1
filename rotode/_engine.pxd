# The specialised engine (rotode/_engine.hpp, _models.hpp, _tableaux.hpp): a pair's whole
# error-controlled run of one body with the tableau and the model known at compile time.  The
# driver (`_body_engine`, rotode/_driver_loop.pxi) calls it through `Stepper.body` instead of
# its own loop where a runner found the (pair, model) eligible (docs/architecture.md, "The
# specialised engine").

from libcpp cimport bool as cbool

cdef extern from "_engine.hpp" namespace "rotode::engine" nogil:
    # the controller every loop shares (rotode/_engine.hpp): h_abs clipped into [10 ulp(t),
    # max_step] before a step's first trial (returns that smallest step), and the decision on
    # a trial of scaled error `err` (true: accepted, h_abs the next proposal; false: rejected,
    # h_abs the retry's, `retried` set, `rejected` counted; max_angle > 0: the step-angle bound)
    double clip_step(double t, double direction, double max_step, double& h_abs)
    cbool decide_step(double err, double exponent, double angle, double max_angle,
                      double& h_abs, cbool& retried, Py_ssize_t& rejected)

cdef extern from "_engine.hpp" namespace "rotode" nogil:
    cdef enum:
        ENGINE_OK
        ENGINE_TERMINATED
        ENGINE_NONFINITE
        ENGINE_INTERRUPTED
        ENGINE_TOO_MANY_SUBSTEPS
        ENGINE_ROTATION_BOUND
        ENGINE_STEP_TOO_SMALL
        ENGINE_MAX_STEPS

    # an accepted step handed to a run's `on_step` hook (IN: t .. F; OUT: prepared, nfev,
    # stores, t_stop)
    cdef struct EngineStep:
        double t
        double t_new
        double h
        const double* z
        const double* znew
        double* K
        Py_ssize_t kstride
        double* F
        cbool prepared
        long long nfev
        long long stores
        double t_stop

    cdef struct EngineRun:
        const double* t
        Py_ssize_t n
        const Py_ssize_t* save
        Py_ssize_t m
        const double* y0
        double* yo
        double* wo
        double rtol
        const double* atol
        double first_step
        double max_step
        long long max_steps
        bint t_eval
        int* countdown
        int (*tick)(void*) noexcept nogil
        void* tick_ctx
        int (*on_step)(void*, EngineStep*) noexcept nogil
        void* step_ctx
        long long accepted
        long long rejected
        long long nfev
        long long stores
        long long hook_stores
        double t_end
        int status

    # a block of bodies' fixed-grid run (the lane kernels, rotode/_lanes.hpp)
    cdef struct BlockRun:
        const double* t
        Py_ssize_t n
        const Py_ssize_t* save
        Py_ssize_t m
        Py_ssize_t nb
        const double* y0
        double* yo
        double* wo
        int* status
        Py_ssize_t* failed
        long long* counts
        int* countdown
        int (*tick)(void*) noexcept nogil
        void* tick_ctx
        Py_ssize_t* nsub
        double* angle


cdef extern from "_models.hpp" namespace "rotode" nogil:
    cdef enum:
        TORQUE_NONE
        TORQUE_GRAVITY
        TORQUE_BODY
        TORQUE_WORLD
        TORQUE_GRAVITY_AXIS
        TORQUE_CALL
        TORQUE_GG
        PAIR_COUNT

    # a compiled torque source evaluated through a pointer (TORQUE_CALL): 0 or its status
    ctypedef int (*TorqueCall)(void* src, double t, const double* q, const double* w,
                               double* tau) noexcept nogil

    cdef struct RigidParams:
        double I[9]
        double Iinv[9]
        double gain
        int gyroscopic
        int torque
        double mg
        double com[3]
        double tau[3]
        TorqueCall call
        void* src
        long long* evals
        double gg_k, gg_n, gg_u0
        double gg_P[3]
        double gg_Q[3]
        double gg_I[9]

    # one body of a pair's run on the rigid body (pair: a PairId; -1 when unknown)
    int rigid_erk_body(int pair, const RigidParams* p, EngineRun* run)
    # one evaluation of the model's f(t, y) (OUT: dy[7]): 0, or a TORQUE_CALL source's status
    int rigid_eval(const RigidParams* p, double t, const double* y, double* dy)

    cdef enum:
        OMEGA_CONSTANT
        OMEGA_SINUSOID

    cdef struct KinParams:
        int omega
        int world
        double gain
        double w[3]
        double amp[3]
        double rate
        double phase[3]

    # one body of a pair's run on the kinematics (pair: a PairId; -1 when unknown)
    int kin_erk_body(int pair, const KinParams* p, EngineRun* run)
    # one evaluation of q' = f(t, q) (OUT: dq[4])
    void kin_eval(const KinParams* p, double t, const double* q, double* dq)

    # Runge-Kutta-Munthe-Kaas (the pair `pair` on the rotation vector of each step,
    # rotode/_rkmk.hpp): one body of a rigid-body or kinematics run; resume: y0 is the row
    # stored at the end of an accepted step of an earlier call (its base is y0 retracted); -1
    # for an unknown pair
    int rigid_rkmk_body(int pair, const RigidParams* p, bint resume, EngineRun* run)
    int kin_rkmk_body(int pair, const KinParams* p, bint resume, EngineRun* run)
