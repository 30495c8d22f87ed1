# The error-controlled pairs on queues of quaternion kinematics runs in SIMD lanes
# (rotode/_lanes_erk.hpp): each lane with its own t, h, decision, counters and status, refilled
# from the queue when its body ends, every body its single run's bits.  Its instantiations (rate
# kind x frame x pair, on q and as RKMK) are compiled in this module only; rotode/kinematic.pyx
# calls `kin_erk_lanes`, and `kin_magnus_lanes` for the adaptive Magnus methods
# (rotode/_lanes_magnus.hpp).
from rotode._engine cimport BlockRun, EngineRun, KinParams


cdef extern from "_lanes_magnus.hpp" namespace "rotode" nogil:
    # An adaptive Magnus method: its Gauss nodes (3 or 4), those of its embedded method (2 or
    # 3), the controller's exponent -1 / (the estimate's order + 1)
    struct MagnusMethod:
        int stages, estages
        double c[4]
        double ec[4]
        double exponent


# The runs of the queue runs[0 .. nb - 1] (parameters p[0 .. nb - 1], or p[0] for every body
# when shared) with the pair `pair` (a PairId) on the instruction set isa (supported by the
# CPU), as `kin_erk_body` runs each, or with rkmk as `kin_rkmk_body(pair, p, resume, run)`
# (OUT: each run's rows and counters); returns the lanes the queue ran in (1: body by body,
# the same bits).
cdef int kin_erk_lanes(int isa, int pair, bint rkmk, bint resume, const KinParams* p,
                       bint shared, EngineRun* runs, Py_ssize_t nb) noexcept nogil


# The runs of the queue runs[0 .. nb - 1] (parameters as `kin_erk_lanes`) by the adaptive
# Magnus method m, as the driver's controlled loop runs each with rotode/kinematic.pyx's Magnus
# trial step, in the AVX2 lanes or body by body (isa ISA_SCALAR: body by body) (OUT: each run's
# rows and counters, evals[j]: body j's evaluations of w); returns the lanes the queue ran in.
cdef int kin_magnus_lanes(int isa, const MagnusMethod* m, bint resume, const KinParams* p,
                          bint shared, EngineRun* runs, Py_ssize_t nb,
                          Py_ssize_t* evals) noexcept nogil


# The bodies per block of `kin_erk_fixed` on the nb bodies p[0 .. nb - 1] (or p[0] for every body
# when shared) with the pair `pair` on the instruction set isa (4), 0 where it does not run them
# (more than one class, a norm gain, neither AVX2 nor AVX-512).
cdef int kin_erk_fixed_width(int isa, int pair, const KinParams* p, bint shared,
                             Py_ssize_t nb) noexcept nogil


# The fixed-grid run of the block b with the pair `pair` (on the state, or with rkmk as its
# Runge-Kutta-Munthe-Kaas method, resume as above; to_end: steps after the last row), every body
# as the driver's `_erk_fixed` steps it, bit for bit, 4 bodies at a time in the AVX2 lanes (OUT:
# b's rows, status, failed, counts[3 l]: the steps, counts[3 l + 1]: the rows stored,
# counts[3 l + 2]: the evaluations of f); returns the lanes it ran in.
cdef int kin_erk_fixed(int isa, int pair, bint rkmk, bint resume, bint to_end,
                       const KinParams* p, bint shared, BlockRun* b) noexcept nogil
