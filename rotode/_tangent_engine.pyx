"""The y0 sensitivity in the specialised engine's own pass, compiled apart.

rotode/_tangent.hpp instantiates the engine's error-controlled run of a rigid body on dual
numbers for every pair, on the state and on the group (Runge-Kutta-Munthe-Kaas), and every
instruction set (baseline, AVX2, AVX-512): a large block of object code.  This module holds
those instantiations alone, so that a build compiles them on one core while the other modules
compile on the others;
`rotode.dynamic` runs them through `tangent_body` (rotode/_tangent_engine.pxd).  The same for
the passes of a fixed-grid run (rk3, rk4, ab3) with directions of the initial state, the inertia
or a compiled torque's parameters (rotode/_tangent_fixed.hpp, `fixed_tangent_pass`).  Nothing here
is called from Python.
"""
from rotode._engine cimport EngineRun, RigidParams

__all__ = []


cdef extern from "_tangent.hpp" namespace "rotode" nogil:
    int rigid_tangent_body(int isa, int pair, bint rkmk, bint resume, const RigidParams* p,
                           EngineRun* run, double* sens)


cdef extern from "_tangent_fixed.hpp" namespace "rotode" nogil:
    int rigid_fixed_tangent(int isa, int kernel, const RigidParams* p, const TangentSeeds* s,
                            bint normalize, EngineRun* run, double* sens)


cdef int tangent_body(int isa, int pair, bint rkmk, bint resume, const RigidParams* p,
                      EngineRun* run, double* sens) noexcept nogil:
    return rigid_tangent_body(isa, pair, rkmk, resume, p, run, sens)


cdef int fixed_tangent_pass(int isa, int kernel, const RigidParams* p, const TangentSeeds* s,
                            bint normalize, EngineRun* run, double* sens) noexcept nogil:
    return rigid_fixed_tangent(isa, kernel, p, s, normalize, run, sens)
