# The error-controlled pairs on queues of rigid bodies in SIMD lanes (rotode/_lanes_erk.hpp):
# each lane with its own t, h, decision, counters and status, refilled from the queue when its
# body ends, every body its single run's bits.  Its instantiations (torque kind x inertia shape x
# instruction set) are compiled in this module only, beside the others; rotode/dynamic.pyx calls
# `rigid_erk_lanes`.
from rotode._engine cimport EngineRun, RigidParams


# The runs of the queue runs[0 .. nb - 1] (parameters p[0 .. nb - 1], or p[0] for every body
# when shared) with the pair `pair` (a PairId) on the instruction set isa (supported by the
# CPU), as `rigid_erk_body` runs each, or with rkmk as `rigid_rkmk_body(pair, p, resume, run)`
# (OUT: each run's rows and counters); returns the lanes the queue ran in (1: body by body,
# the same bits).
cdef int rigid_erk_lanes(int isa, int pair, bint rkmk, bint resume, const RigidParams* p,
                         bint shared, EngineRun* runs, Py_ssize_t nb) noexcept nogil
