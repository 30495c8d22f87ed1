# The lane kernels (rotode/_lanes.hpp): the fixed-step methods rk3, rk4 (and ab3, Lie-Euler and
# the Crouch-Grossman methods for rigid bodies) on blocks of rigid bodies or of quaternion
# kinematics, one body per SIMD lane, on the instruction set chosen at run time
# (rotode/_lanes.pyx, docs/architecture.md "The lane kernels").  Their instantiations are
# compiled in this module only; a runner calls `rigid_block` or `kin_block`.
from rotode._driver cimport Stepper, bodies_fn
from rotode._engine cimport BlockRun, KinParams, RigidParams

cdef extern from "_lanes.hpp" namespace "rotode" nogil:
    cdef enum:
        ISA_SCALAR
        ISA_SSE2
        ISA_AVX2
        ISA_AVX512
        LANES_RK3
        LANES_RK4
        LANES_AB3
        LANES_CG
        LANES_EXP2
        LANES_MAGNUS
        LANES_MAGNUS_CA

    # a Crouch-Grossman tableau of s <= 3 stages: a[i*3 + j] (strictly lower triangular), b
    ctypedef struct LaneTableau:
        int s
        double a[9]
        double b[3]
        double c[3]

    # a kinematic method of KinStepModel (LANES_AB3, LANES_CG, LANES_EXP2, LANES_MAGNUS on
    # kinematics): stages s (LANES_CG <= 3, LANES_MAGNUS <= 4), weights b and nodes c, the
    # approximate exp, w(t0) read, the last node's w carried, w' from the source (counted)
    ctypedef struct KinLaneMethod:
        int s
        double b[4]
        double c[4]
        bint approx
        bint needs_w0
        bint carry
        bint rate_source
        int terms
        bint substep

    # whether this CPU runs the instruction set (ISA_*); the bodies per block of one
    bint lanes_supported(int isa)
    int lanes_width(int isa)


# The fixed-grid run of the block b of b.nb bodies (parameters p[0 .. nb - 1], or p[0] for every
# body when shared) with kernel LANES_RK3, LANES_RK4, LANES_AB3 or LANES_CG (the Crouch-Grossman
# methods of the tableau tab, Lie-Euler that of cg1; tab unused by the others), q divided by |q|
# after every step with normalize, on the instruction set isa (supported by the CPU) (OUT: b's
# rows and counters); returns the lanes the block ran in (1: one body at a time, the same bits).
cdef int rigid_block(int isa, int kernel, const RigidParams* p, bint shared, bint normalize,
                     const LaneTableau* tab, BlockRun* b) noexcept nogil


# The same for quaternion kinematics under w(t) of KinParams (rotode/kinematic.pyx: rows of 4,
# no step after the last row): rk3, rk4, and with the method km (else unused) ab3, the
# Crouch-Grossman product of exponentials (LANES_CG: lie_euler, cg1, cg2, cg3), exp2
# (LANES_EXP2) and magnus2/magnus4/magnus6/magnus8 (LANES_MAGNUS); those four leave each body's
# w and w' evaluations in b.counts[3 l + 2] and b.counts[3 l + 1].
cdef int kin_block(int isa, int kernel, const KinParams* p, bint shared, bint normalize,
                   const KinLaneMethod* km, BlockRun* b) noexcept nogil


# A runner's error-controlled bodies in the adaptive lane kernels (rotode/_lanes_erk.hpp) on the
# instruction set of `rotode._lanes.get()`: sp.bodies = bodies (the runner's queue entry), sp.lanes
# that set's width, *isa its code, *lanes_out the first element of the int32 array lanes_used
# (the lanes of each body, written by the run; NULL when it is empty) (OUT: sp, isa, lanes_out);
# returns the set's name, or None for "off" (the runner's one body at a time, `Stepper.body`;
# "scalar" runs that too, by queues).
cdef object attach_erk_lanes(Stepper* sp, int* isa, int** lanes_out, object lanes_used,
                             bodies_fn bodies)
