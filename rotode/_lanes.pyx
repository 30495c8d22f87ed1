"""The instruction set of the lane kernels, chosen at run time.

rotode's fixed-step rk3, rk4, ab3, Lie-Euler and Crouch-Grossman (cg1, cg2, cg3, exp2) runs of
`rotode.RigidBody` models whose torque is compiled (none, `rotode.torque.Gravity`,
`rotode.torque.Constant`), and its fixed-step rk3, rk4, ab3, Lie-Euler, Crouch-Grossman
(cg1, cg2, cg3), exp2, magnus2-magnus8 and magnus_ca runs of `rotode.QuaternionKinematics`
under constant rates (per body, or a `rotode.omega.Constant`) or a `rotode.omega.Sinusoid`,
step blocks of bodies in the SIMD lanes of the CPU, one body per lane (rotode/_lanes.hpp):
every lane does the operations of the one-body instance in the same order, so each body's
result is its single run's, bit for bit, whatever the width, the block and the number of
threads.  The
error-controlled pairs (bs3, dopri5, dop853) and rkmk3/5/8 on such batches of either model
(without the norm gain) run in the adaptive lanes (rotode/_lanes_erk.hpp): 4 bodies at a time in
AVX2 registers where the set is "avx2" or "avx512", each lane with its own steps and refilled
from the queue, with the same promise.

The instruction set is the best one this CPU runs ("avx512", "avx2", else "sse2", the
baseline of x86-64), unless the environment variable ``ROTODE_SIMD`` names another when rotode
is imported, or `use` sets one:

- "off": the driver's step of one body at a time (rotode/dynamic.pxd, rotode/kinematic.pyx),
  as before the lanes;
- "scalar": the lane kernel's one-body instance, body by body;
- "sse2", "avx2", "avx512": blocks of 2, 4 or 8 bodies in 128-, 256- or 512-bit registers.

A run reports the set its blocks ran on in ``stats["simd"]``.
"""
import os
import warnings

__all__ = ["ISAS", "available", "width", "get", "use"]

#: The choices, lowest first.
ISAS = ("off", "scalar", "sse2", "avx2", "avx512")

_CODES = {"scalar": ISA_SCALAR, "sse2": ISA_SSE2, "avx2": ISA_AVX2, "avx512": ISA_AVX512}


def available():
    """The choices this CPU runs.

    Returns
    -------
    tuple of str
        The names of `ISAS` whose kernels run here, lowest first.

    Examples
    --------
    >>> from rotode import _lanes
    >>> _lanes.available()[:3]
    ('off', 'scalar', 'sse2')
    """
    return ("off",) + tuple(name for name, code in _CODES.items() if lanes_supported(code))


def width(name):
    """The bodies per block of an instruction set.

    Parameters
    ----------
    name : str
        One of `ISAS`.

    Returns
    -------
    int
        The lanes of a block (0 for "off": no block).

    Examples
    --------
    >>> from rotode import _lanes
    >>> _lanes.width("avx2")
    4
    """
    _check(name, ISAS)
    return lanes_width(_CODES[name]) if name != "off" else 0


def _check(name, names):
    if not isinstance(name, str) or name not in names:
        raise ValueError(f"instruction set must be one of {names}, got {name!r}")


def _default():
    """The best set this CPU runs, or ``ROTODE_SIMD``'s (a warning when it cannot run it)."""
    names = available()
    best = names[len(names) - 1]        # (no negative index: wraparound is off)
    asked = os.environ.get("ROTODE_SIMD", "").strip().lower()
    if not asked:
        return best
    if asked not in names:
        warnings.warn(f"ROTODE_SIMD={asked!r} is not one of {names} (the choices this "
                      f"CPU runs); using {best!r}", RuntimeWarning, stacklevel=2)
        return best
    return asked


_choice = _default()


def get():
    """The instruction set the lane kernels run on now.

    Returns
    -------
    str
        One of `available()`.

    Examples
    --------
    >>> from rotode import _lanes
    >>> _lanes.get() in _lanes.available()
    True
    """
    return _choice


def use(name):
    """Run the lane kernels on another instruction set from now on (tests, benchmarks).

    Parameters
    ----------
    name : str
        One of `available()`.

    Returns
    -------
    str
        The set chosen before, to restore it.

    Examples
    --------
    >>> from rotode import _lanes
    >>> before = _lanes.use("scalar")
    >>> _lanes.get()
    'scalar'
    >>> _lanes.use(before) == "scalar"
    True
    """
    global _choice
    _check(name, available())
    before, _choice = _choice, name
    return before


cdef extern from "_lanes.hpp" namespace "rotode" nogil:
    int lanes_block(int isa, int kernel, const RigidParams* p, bint shared, bint normalize,
                    const LaneTableau* tab, const KinLaneMethod* km, BlockRun* b)
    int lanes_block(int isa, int kernel, const KinParams* p, bint shared, bint normalize,
                    const LaneTableau* tab, const KinLaneMethod* km, BlockRun* b)


cdef int rigid_block(int isa, int kernel, const RigidParams* p, bint shared, bint normalize,
                     const LaneTableau* tab, BlockRun* b) noexcept nogil:
    return lanes_block(isa, kernel, p, shared, normalize, tab, NULL, b)


cdef int kin_block(int isa, int kernel, const KinParams* p, bint shared, bint normalize,
                   const KinLaneMethod* km, BlockRun* b) noexcept nogil:
    return lanes_block(isa, kernel, p, shared, normalize, NULL, km, b)


cdef object attach_erk_lanes(Stepper* sp, int* isa, int** lanes_out, object lanes_used,
                             bodies_fn bodies):
    cdef int[::1] lv = lanes_used
    name = get()
    if name == "off":
        return None
    isa[0] = _CODES[name]
    lanes_out[0] = &lv[0] if lv.shape[0] else NULL
    sp.bodies = bodies
    sp.lanes = lanes_width(isa[0])
    return name
