# The entries of rotode/_lanes_erk.hpp, one overload per parameter type (rigid bodies,
# quaternion kinematics), declared once for the two modules that instantiate them apart:
# rotode/_lanes_erk.pyx (RigidParams) and rotode/_lanes_erk_kin.pyx (KinParams).  Only those two
# cimport this file (every module that does compiles the lane kernels' templates).
from rotode._engine cimport BlockRun, EngineRun, KinParams, RigidParams


cdef extern from "_lanes_erk.hpp" namespace "rotode" nogil:
    int lanes_erk(int isa, int pair, bint rkmk, bint resume, const RigidParams* p, bint shared,
                  EngineRun* runs, Py_ssize_t nb)
    int lanes_erk(int isa, int pair, bint rkmk, bint resume, const KinParams* p, bint shared,
                  EngineRun* runs, Py_ssize_t nb)
    int lanes_erk_fixed_width(int isa, int pair, const RigidParams* p, bint shared, Py_ssize_t nb)
    int lanes_erk_fixed_width(int isa, int pair, const KinParams* p, bint shared, Py_ssize_t nb)
    int lanes_erk_fixed(int isa, int pair, bint rkmk, bint resume, bint to_end,
                        const RigidParams* p, bint shared, BlockRun* b)
    int lanes_erk_fixed(int isa, int pair, bint rkmk, bint resume, bint to_end,
                        const KinParams* p, bint shared, BlockRun* b)
