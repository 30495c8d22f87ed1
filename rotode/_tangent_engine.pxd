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
