# The error-controlled pairs on queues of rigid bodies in SIMD lanes (rotode/_lanes_erk.hpp):
# each lane with its own t, h, decision, counters and status, refilled from the queue when its
# body ends, every body its single run's bits.  Its instantiations (torque kind x inertia shape x
# instruction set) are compiled in this module only, beside the others; rotode/dynamic.pyx calls
# `rigid_erk_lanes`.
from rotode._engine cimport BlockRun, EngineRun, RigidParams


# The runs of the queue runs[0 .. nb - 1] (parameters p[0 .. nb - 1], or p[0] for every body
# when shared) with the pair `pair` (a PairId) on the instruction set isa (supported by the
# CPU), as `rigid_erk_body` runs each, or with rkmk as `rigid_rkmk_body(pair, p, resume, run)`
# (OUT: each run's rows and counters); returns the lanes the queue ran in (1: body by body,
# the same bits).
cdef int rigid_erk_lanes(int isa, int pair, bint rkmk, bint resume, const RigidParams* p,
                         bint shared, EngineRun* runs, Py_ssize_t nb) noexcept nogil


# The bodies per block of `rigid_erk_fixed` on the nb bodies p[0 .. nb - 1] (or p[0] for every body
# when shared) with the pair `pair` on the instruction set isa (4), 0 where it does not run them
# (more than one class, a norm gain, neither AVX2 nor AVX-512).
cdef int rigid_erk_fixed_width(int isa, int pair, const RigidParams* p, bint shared,
                               Py_ssize_t nb) noexcept nogil


# The fixed-grid run of the block b with the pair `pair` (on the state, or with rkmk as its
# Runge-Kutta-Munthe-Kaas method, resume as above; to_end: steps after the last row), every body
# as the driver's `_erk_fixed` steps it, bit for bit, 4 bodies at a time in the AVX2 lanes (OUT:
# b's rows, status, failed, counts[3 l]: the steps, counts[3 l + 1]: the rows stored,
# counts[3 l + 2]: the evaluations of f); returns the lanes it ran in.
cdef int rigid_erk_fixed(int isa, int pair, bint rkmk, bint resume, bint to_end,
                         const RigidParams* p, bint shared, BlockRun* b) noexcept nogil
