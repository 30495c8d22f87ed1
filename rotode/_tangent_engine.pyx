"""The y0 sensitivity in the specialised engine's own pass, compiled apart.

rotode/_tangent.hpp instantiates the engine's error-controlled run of a rigid body on dual
numbers for every pair, torque kind and inertia shape: the largest block of object code in
rotode.  This module holds those instantiations alone, so that
a build compiles them on one core while the other modules compile on the others;
`rotode.dynamic` runs them through `tangent_body` (rotode/_tangent_engine.pxd).  Nothing here
is called from Python.
"""
from rotode._engine cimport EngineRun, RigidParams

__all__ = []


cdef extern from "_tangent.hpp" namespace "rotode" nogil:
    int rigid_tangent_body(int pair, const RigidParams* p, EngineRun* run, double* sens)


cdef int tangent_body(int pair, const RigidParams* p, EngineRun* run,
                      double* sens) noexcept nogil:
    return rigid_tangent_body(pair, p, run, sens)
