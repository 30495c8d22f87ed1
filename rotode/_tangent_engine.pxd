# The y0 sensitivity of a rigid body's error-controlled run in the specialised engine's own
# pass (rotode/_tangent.hpp: the state as dual numbers, the steps the plain run's, bit for bit).
# Its instantiations (every pair x torque kind x inertia shape) are compiled in this module only,
# beside the others (a build compiles one module per core), not inside rotode/dynamic.cpp;
# rotode/dynamic.pyx calls `tangent_body`.
from rotode._engine cimport EngineRun, RigidParams


# One body of a run of the pair `pair` (a PairId) on the rigid body of parameters p, with its
# 6x6 y0 sensitivity at the saved slots (OUT: the run's rows and counters, sens[m * 36] as
# (slot, component, direction)); -1 when the pair is unknown.
cdef int tangent_body(int pair, const RigidParams* p, EngineRun* run,
                      double* sens) noexcept nogil
