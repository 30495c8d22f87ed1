# The y0 sensitivity of a rigid body's error-controlled run in the specialised engine's own
# pass (rotode/_tangent.hpp: the state as dual numbers, the steps the plain run's, bit for bit),
# by a pair on the state or Runge-Kutta-Munthe-Kaas on the group.
# Its instantiations (every pair x instruction set) are compiled in this module only,
# beside the others (a build compiles one module per core), not inside rotode/dynamic.cpp;
# rotode/dynamic.pyx calls `tangent_body`.
from rotode._engine cimport EngineRun, RigidParams


# One body of a run of the pair `pair` (a PairId) on the rigid body of parameters p, on the
# state [q, w] or (rkmk) as Runge-Kutta-Munthe-Kaas on the group (resume: y0 is the row stored
# at the end of an accepted step of an earlier call), with its 6x6 y0 sensitivity at the saved
# slots (OUT: the run's rows and counters, sens[m * 36] as (slot, component, direction)), the
# dual arithmetic on the instruction set `isa` (a LaneIsa the CPU runs; the same bits on
# each); -1 when the pair is unknown.
cdef int tangent_body(int isa, int pair, bint rkmk, bint resume, const RigidParams* p,
                      EngineRun* run, double* sens) noexcept nogil


cdef extern from "_tangent_fixed.hpp" namespace "rotode" nogil:
    # one pass's directions: the d parts seeded into y0 [q, w] and the body's parameters
    cdef struct TangentSeeds:
        int ncols
        int ld
        int torque
        int diag
        double y0[7][7]
        double I[9][7]
        double Iinv[9][7]
        double mg[7]
        double com[3][7]
        double tau[3][7]


# One pass of a rigid body's fixed-grid run with `kernel` (LANES_RK3/RK4/AB3 of
# rotode/_lanes.hpp) on run.t[0..n] from run.y0, the parameters p with the directions of s: the
# tangent coordinates at the slots run.save (OUT: sens[m * 6 * s.ld], (slot, component,
# direction), the first s.ncols directions); ENGINE_OK or ENGINE_INTERRUPTED (polled by run.tick).
cdef int fixed_tangent_pass(int isa, int kernel, const RigidParams* p, const TangentSeeds* s,
                            bint normalize, EngineRun* run, double* sens) noexcept nogil
