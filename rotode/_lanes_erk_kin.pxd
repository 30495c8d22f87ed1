# The error-controlled pairs on queues of quaternion kinematics runs in SIMD lanes
# (rotode/_lanes_erk.hpp): each lane with its own t, h, decision, counters and status, refilled
# from the queue when its body ends, every body its single run's bits.  Its instantiations (rate
# kind x frame x pair, on q and as RKMK) are compiled in this module only; rotode/kinematic.pyx
# calls `kin_erk_lanes`.
from rotode._engine cimport EngineRun, KinParams


# The runs of the queue runs[0 .. nb - 1] (parameters p[0 .. nb - 1], or p[0] for every body
# when shared) with the pair `pair` (a PairId) on the instruction set isa (supported by the
# CPU), as `kin_erk_body` runs each, or with rkmk as `kin_rkmk_body(pair, p, resume, run)`
# (OUT: each run's rows and counters); returns the lanes the queue ran in (1: body by body,
# the same bits).
cdef int kin_erk_lanes(int isa, int pair, bint rkmk, bint resume, const KinParams* p,
                       bint shared, EngineRun* runs, Py_ssize_t nb) noexcept nogil
