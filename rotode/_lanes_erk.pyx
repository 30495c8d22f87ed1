"""The error-controlled pairs on queues of rigid bodies in SIMD lanes, compiled apart.

rotode/_lanes_erk.hpp instantiates the adaptive lane kernel (`lanes_erk`: an embedded pair on 4
bodies at a time in AVX2 lanes, each lane with its own step size, decision and counters,
refilled from the queue when its body ends) for every pair, on the state and as the
Runge-Kutta-Munthe-Kaas method of the pair (rkmk3/5/8), torque kind and inertia shape.
This module holds those instantiations alone, so that a build compiles them on one core while
the other modules compile on the others; `rotode.dynamic` runs them through `rigid_erk_lanes`
(rotode/_lanes_erk.pxd).  Nothing here is called from Python.
"""
from rotode._engine cimport BlockRun, EngineRun, RigidParams
from rotode._lanes_erk_entries cimport lanes_erk, lanes_erk_fixed, lanes_erk_fixed_width

__all__ = []


cdef int rigid_erk_lanes(int isa, int pair, bint rkmk, bint resume, const RigidParams* p,
                         bint shared, EngineRun* runs, Py_ssize_t nb) noexcept nogil:
    return lanes_erk(isa, pair, rkmk, resume, p, shared, runs, nb)


cdef int rigid_erk_fixed_width(int isa, int pair, const RigidParams* p, bint shared,
                               Py_ssize_t nb) noexcept nogil:
    return lanes_erk_fixed_width(isa, pair, p, shared, nb)


cdef int rigid_erk_fixed(int isa, int pair, bint rkmk, bint resume, bint to_end,
                         const RigidParams* p, bint shared, BlockRun* b) noexcept nogil:
    return lanes_erk_fixed(isa, pair, rkmk, resume, to_end, p, shared, b)
