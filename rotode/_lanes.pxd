# The lane kernels (rotode/_lanes.hpp): the fixed-step methods rk3 and rk4 on blocks of rigid
# bodies, one body per SIMD lane, on the instruction set chosen at run time (rotode/_lanes.pyx,
# docs/architecture.md "The lane kernels").  Their instantiations are compiled in this module
# only; a runner calls `rigid_block`.
from rotode._engine cimport BlockRun, RigidParams

cdef extern from "_lanes.hpp" namespace "rotode" nogil:
    cdef enum:
        ISA_SCALAR
        ISA_SSE2
        ISA_AVX2
        ISA_AVX512
        LANES_RK3
        LANES_RK4

    # whether this CPU runs the instruction set (ISA_*); the bodies per block of one
    bint lanes_supported(int isa)
    int lanes_width(int isa)


# The fixed-grid run of the block b of b.nb bodies (parameters p[0 .. nb - 1], or p[0] for every
# body when shared) with kernel LANES_RK3 or LANES_RK4, q divided by |q| after every step with
# normalize, on the instruction set isa (supported by the CPU) (OUT: b's rows and counters);
# returns the lanes the block ran in (1: one body at a time, the same bits).
cdef int rigid_block(int isa, int kernel, const RigidParams* p, bint shared, bint normalize,
                     BlockRun* b) noexcept nogil
