"""The error-controlled pairs on queues of quaternion kinematics runs in SIMD lanes, compiled apart.

rotode/_lanes_erk.hpp's adaptive lane kernel (`lanes_erk`: an embedded pair on 4 bodies at a
time in AVX2 lanes, each lane with its own step size, decision and counters, refilled from the
queue when its body ends) instantiated for the kinematics q' = 1/2 q (0, w(t)) with w(t) of
`rotode.omega.Constant` or `rotode.omega.Sinusoid` (or per-body constant rates), in the body or
the world frame, for every pair, on q and as the Runge-Kutta-Munthe-Kaas method of the pair
(rkmk3/5/8), and rotode/_lanes_magnus.hpp's adaptive Magnus methods (magnus6, magnus8 under
error control) on the same queues.  This module holds those instantiations alone, beside
rotode._lanes_erk's rigid-body ones, so that a build compiles the two on two cores;
`rotode.kinematic` runs them through `kin_erk_lanes` and `kin_magnus_lanes`
(rotode/_lanes_erk_kin.pxd).  Nothing here is called from Python.
"""
from rotode._engine cimport BlockRun, EngineRun, KinParams
from rotode._lanes_erk_entries cimport lanes_erk, lanes_erk_fixed, lanes_erk_fixed_width

__all__ = []


cdef extern from "_lanes_magnus.hpp" namespace "rotode" nogil:
    int lanes_magnus(int isa, const MagnusMethod& m, bint resume, const KinParams* p,
                     bint shared, EngineRun* runs, Py_ssize_t nb, Py_ssize_t* evals)


cdef int kin_erk_lanes(int isa, int pair, bint rkmk, bint resume, const KinParams* p,
                       bint shared, EngineRun* runs, Py_ssize_t nb) noexcept nogil:
    return lanes_erk(isa, pair, rkmk, resume, p, shared, runs, nb)


cdef int kin_magnus_lanes(int isa, const MagnusMethod* m, bint resume, const KinParams* p,
                          bint shared, EngineRun* runs, Py_ssize_t nb,
                          Py_ssize_t* evals) noexcept nogil:
    return lanes_magnus(isa, m[0], resume, p, shared, runs, nb, evals)


cdef int kin_erk_fixed_width(int isa, int pair, const KinParams* p, bint shared,
                             Py_ssize_t nb) noexcept nogil:
    return lanes_erk_fixed_width(isa, pair, p, shared, nb)


cdef int kin_erk_fixed(int isa, int pair, bint rkmk, bint resume, bint to_end,
                       const KinParams* p, bint shared, BlockRun* b) noexcept nogil:
    return lanes_erk_fixed(isa, pair, rkmk, resume, to_end, p, shared, b)
