"""Quaternion algebra and rotations, vectorised over leading batch dimensions.

Conventions: scalar-first ``[w, x, y, z]``, Hamilton product (``i j = k``), and a quaternion
``q`` represents the rotation ``R(q)`` that maps body coordinates to world coordinates,
``v_world = q * v_body * conj(q)``.  Functions accept any nonzero quaternion, not only unit
ones: ``R(q) = R(q/|q|)`` (Rucker 2018 eq. 13).

The kernels are ``noexcept nogil`` inline functions in ``rotode/quaternion.pxd`` that other
Cython code can ``cimport``; the functions here validate their input, then loop over the batch
with the GIL released (dask arrays: block by block, a dask array out, `rotode._lazy`).

References
----------
.. [000] "Numerical Integration for Rotational Dynamics", web article (docs/references.md)
   (exponential map,
   trig-free approximation).
.. [004] C. Rucker, "Integrating Rotations using Non-Unit Quaternions", IEEE Robotics and
   Automation Letters 3(4), 2018, eq. 13.
"""
from math import prod

import numpy as np
from scipy.spatial.transform import Rotation

from rotode._docfill import docfiller
from rotode._lazy import is_dask, map_blocks
from rotode._validation import (as_bool, as_float_array, as_quaternions, batch_of,
                                as_rotation_matrices, check_out_overlap, last_dim, output_array,
                                project_rotations, rotation_quaternions)
from rotode._loops cimport (apply_unary, apply_binary, jacobian_unary, new_single,
                            read_single, read_single_quaternion, single_data, use_threads)
from rotode._rows cimport (quat_mul_rows, quat_rotate_rows, quat_to_matrix_rows, rows_isa,
                           rows_set_simd)
from rotode.dual cimport dual
from cython.parallel cimport prange

__all__ = ["multiply", "conjugate", "inverse", "rotate", "to_matrix", "from_matrix", "exp",
           "log", "exp_approx", "to_scipy", "from_scipy", "to_matrix_jacobian", "norm",
           "angle_between"]

# the numpydoc blocks several docstrings here share (rotode._docfill)
_DOCS = {
    "examples": """
Examples
--------
>>> from rotode import quaternion""",
    "raises_q": """
Raises
------
ValueError
    For a zero quaternion or non-finite input.""",
    "q": """
Parameters
----------
q : array_like, shape (..., 4)
    Nonzero quaternions (any length).""",
}


cdef object _ndarray = np.ndarray
# rows per work item of the batch loops of rotode/_rows.hpp (as so3.exp's)
cdef Py_ssize_t ROWS_CHUNK = 1024
# Whether those loops run on the team of threads for large batches (`_rows_threads`; default
# off): they move 56-104 bytes per row at a few ns of arithmetic, so one vectorised thread is
# near the memory's speed; on 2 cores a second thread was slower, by up to 2x when other
# processes held the cores (benchmarks/bench_kernels_load.py, issue 31).  The exception is a
# fresh output of more than 8 doubles a row (to_matrix without out=): the page faults of its
# first touch are kernel work that two threads split, and they dominate the call.
cdef bint ROWS_THREADS = False
cdef Py_ssize_t ROWS_FRESH_THREADED = 9
# the kernels of the batch loops (`_run_rows`)
cdef enum RowsKernel:
    MULTIPLY, ROTATE, TO_MATRIX


cdef bint _lazy(object x):
    """True for a dask collection, whose blocks the kernel then runs on (`rotode._lazy`); an
    ndarray costs one comparison of its type."""
    return type(x) is not _ndarray and is_dask(x)


def _quaternions(q, name):
    """Nonzero quaternions (..., 4) from an array or a scipy Rotation (scalar first)."""
    return as_quaternions(q, name)


cdef bint _run_rows(RowsKernel kernel, const double* a, const double* b, double* out,
                    Py_ssize_t n, Py_ssize_t ka, Py_ssize_t kb, Py_ssize_t kout,
                    bint threads) noexcept nogil:
    """One of the batch loops of rotode/_rows.hpp over ``n`` rows (rows of ``ka``, ``kb`` and
    ``kout`` doubles; ``b`` unused by TO_MATRIX) in chunks of ROWS_CHUNK rows, in parallel for
    large batches if ``threads`` (OUT: out).  False if some input is not finite or (ROTATE,
    TO_MATRIX) some quaternion is zero."""
    cdef Py_ssize_t c, start, m, chunks = (n + ROWS_CHUNK - 1) // ROWS_CHUNK, bad = 0
    for c in prange(chunks, schedule="dynamic", use_threads_if=threads and use_threads(n)):
        start = c * ROWS_CHUNK
        m = min(ROWS_CHUNK, n - start)
        if kernel == MULTIPLY:
            if not quat_mul_rows(a + ka * start, b + kb * start, out + kout * start, m):
                bad += 1
        elif kernel == ROTATE:
            if not quat_rotate_rows(a + ka * start, b + kb * start, out + kout * start, m):
                bad += 1
        elif not quat_to_matrix_rows(a + ka * start, out + kout * start, m):
            bad += 1
    return bad == 0


cdef tuple _batch(tuple a, tuple b):
    """The broadcast batch shape of two batch shapes (equal ones without NumPy's call, which
    costs microseconds: a kernel call on a few rows is that long)."""
    return a if a == b else np.broadcast_shapes(a, b)


def _rows(x, batch, k, n):
    """The (n, k) C-contiguous rows of the C-contiguous ``x`` broadcast to ``batch + (k,)``."""
    if x.shape != batch + (k,):
        x = np.ascontiguousarray(np.broadcast_to(x, batch + (k,)))
    return x.reshape(n, k)


cdef tuple _apply_rows(RowsKernel kernel, object a, Py_ssize_t ka, object b, Py_ssize_t kb,
                       tuple trailing, object out, tuple names):
    """The batch loop ``kernel`` (a RowsKernel) on ``a`` (..., ka) and ``b`` (..., kb; None for
    TO_MATRIX), broadcast, into ``out`` (None: a new array) of shape batch + ``trailing``, and
    whether every input was valid (`_run_rows`)."""
    batch = batch_of(a, 1) if b is None else _batch(batch_of(a, 1), batch_of(b, 1))
    cdef bint fresh = out is None
    out = output_array(out, batch + trailing)
    if not fresh:           # (a new array overlaps nothing)
        check_out_overlap(out, [a] if b is None else [a, b], names)
    cdef Py_ssize_t n = prod(batch), kout = prod(trailing)
    if n == 0:
        return out, True
    cdef const double[:, ::1] av = _rows(a, batch, ka, n)
    cdef const double[:, ::1] bv = av if b is None else _rows(b, batch, kb, n)
    cdef double[:, ::1] ov = out.reshape(n, kout)
    cdef bint ok, threads = ROWS_THREADS or (fresh and kout >= ROWS_FRESH_THREADED)
    with nogil:
        ok = _run_rows(kernel, &av[0, 0], &bv[0, 0], &ov[0, 0], n, ka, kb, kout, threads)
    return out, ok


def _rows_threads(on=None):
    """Whether the batch loops of multiply, rotate and to_matrix always run on OpenMP threads
    for large batches (default False: only to_matrix into a new array; see ROWS_THREADS); ``on``
    sets it.  For tests and benchmarks."""
    global ROWS_THREADS
    if on is not None:
        ROWS_THREADS = bool(on)
    return ROWS_THREADS


def _rows_isa(level=None):
    """The instruction set of the batch loops of multiply, rotate, to_matrix and so3.log
    ("avx512", "avx2" or "portable"); for tests.  ``level`` caps it: 0 portable, 1 AVX2, 2
    (default) the best the CPU has."""
    if level is not None:
        rows_set_simd(int(level))
    return rows_isa().decode()


def _broadcast_error(name_a, a, name_b, b):
    if a.shape[:a.ndim - 1] == b.shape[:b.ndim - 1]:
        return
    try:
        np.broadcast_shapes(batch_of(a, 1), batch_of(b, 1))
    except ValueError:
        raise ValueError(f"batch shapes of `{name_a}` {batch_of(a, 1)} and `{name_b}` "
                         f"{batch_of(b, 1)} do not broadcast") from None


def multiply(p, q, out=None):
    """Hamilton product ``p * q``.

    Parameters
    ----------
    p, q : array_like, shape (..., 4)
        Quaternions ``[w, x, y, z]`` (any length); batch dimensions broadcast.
    out : ndarray, shape (..., 4), optional
        C-contiguous float64 array to write into (no allocation); returned.  It may not overlap
        ``p`` or ``q`` (ValueError).  Default: a new array.

    Returns
    -------
    ndarray, shape (..., 4)
        ``p q``; a single product of two (4,) inputs has shape (4,) (``out`` when given).

    Raises
    ------
    ValueError
        If an input does not end in 4 components, is not finite, or the batch shapes do not
        broadcast; if ``out`` has the wrong shape or layout or overlaps an input.

    See Also
    --------
    conjugate, inverse, rotate

    Notes
    -----
    ``(a, u)(b, v) = (ab - u.v, a v + b u + u x v)``.  The rotation of a product is the product
    of the rotations: ``R(p q) = R(p) R(q)``.  The batch loop is vectorised (AVX2 or AVX-512
    where the CPU has them, chosen at run time); every row gets the bits of the scalar kernel
    ``quat_mul`` that Cython code can ``cimport``.

    Examples
    --------
    >>> import numpy as np
    >>> from rotode import quaternion
    >>> quaternion.multiply([0, 1, 0, 0], [0, 0, 1, 0])   # i j = k
    array([0., 0., 0., 1.])
    """
    cdef double a[4]
    cdef double b[4]
    if out is None and read_single(p, 1, 4, a) and read_single(q, 1, 4, b):  # no batch set-up
        out = new_single(1, 4)
        quat_mul[double](a, b, single_data(out))
        return out
    if _lazy(p) or _lazy(q):
        return map_blocks(multiply, "(4),(4)->(4)", (p, q), {"out": out})
    # non-finite components are found by the loop itself, in the same pass
    p = as_float_array(p, "p", (4,), finite=False)
    q = as_float_array(q, "q", (4,), finite=False)
    _broadcast_error("p", p, "q", q)
    out, ok = _apply_rows(MULTIPLY, p, 4, q, 4, (4,), out, ("p", "q"))
    if not ok:
        as_float_array(p, "p", (4,))
        as_float_array(q, "q", (4,))    # (one of them raises)
        raise ValueError("`p` and `q` must contain only finite values")
    return out


@docfiller(_DOCS)
def conjugate(q):
    """Conjugate ``[w, -x, -y, -z]`` of quaternions.

    Parameters
    ----------
    q : array_like, shape (..., 4)
        Quaternions (any length, zero included).

    Returns
    -------
    ndarray, shape (..., 4)
        ``conj(q)``; for a unit quaternion the inverse rotation.

    See Also
    --------
    inverse, multiply

    %(examples)s
    >>> quaternion.conjugate([1.0, 2.0, 3.0, 4.0])
    array([ 1., -2., -3., -4.])
    """
    cdef double a[4]
    if read_single(q, 1, 4, a):
        out = new_single(1, 4)
        quat_conj[double](a, single_data(out))
        return out
    if _lazy(q):
        return map_blocks(conjugate, "(4)->(4)", (q,))
    q = as_float_array(q, "q", (4,))
    return apply_unary(quat_conj[double], q, 1, (4,))


@docfiller(_DOCS)
def norm(q):
    """Euclidean norm ``|q|`` of quaternions.

    Parameters
    ----------
    q : array_like, shape (..., 4)
        Quaternions.

    Returns
    -------
    ndarray, shape (...)
        ``sqrt(w^2 + x^2 + y^2 + z^2)``, without overflow for large entries (the quaternion is
        scaled by its largest entry when ``|q|^2`` overflows).

    See Also
    --------
    inverse

    %(examples)s
    >>> quaternion.norm([[1.0, 2.0, 2.0, 0.0], [0.0, 0.0, 0.0, 3.0]])
    array([3., 3.])
    """
    if _lazy(q):
        return map_blocks(norm, "(4)->()", (q,))
    q = as_float_array(q, "q", (4,))
    with np.errstate(over="ignore"):
        n = np.sqrt(np.einsum("...i,...i->...", q, q))
    if not np.isfinite(n).all():              # |q|^2 overflows: scale by the largest entry
        top = np.abs(q).max(axis=q.ndim - 1, keepdims=True)
        n = top[..., 0] * np.sqrt(np.einsum("...i,...i->...", q / top, q / top))
    return n


def angle_between(p, q):
    """Angle (radians, in [0, pi]) of the rotation between orientations ``p`` and ``q``.

    Parameters
    ----------
    p, q : array_like, shape (..., 4)
        Nonzero quaternions (any length); batch dimensions broadcast.

    Returns
    -------
    ndarray, shape (...)
        The angle of ``R(p)^T R(q)``, i.e. of ``r = conj(p) q``: ``2 atan2(|vec r|, |r_w|)``,
        accurate for small angles too (a pointing error); the same for ``q`` and ``-q``, and
        equal to ``(Rotation(p).inv() * Rotation(q)).magnitude()`` of SciPy.

    Raises
    ------
    ValueError
        For a zero quaternion, non-finite input or batch shapes that do not broadcast.

    See Also
    --------
    multiply, conjugate

    Examples
    --------
    >>> import numpy as np
    >>> from rotode import quaternion
    >>> half_turn = [0.0, 0.0, 0.0, 1.0]
    >>> float(quaternion.angle_between([1, 0, 0, 0], half_turn)) == np.pi
    True
    """
    if _lazy(p) or _lazy(q):
        return map_blocks(angle_between, "(4),(4)->()", (p, q))
    p = _quaternions(p, "p")
    q = _quaternions(q, "q")
    _broadcast_error("p", p, "q", q)
    r = apply_binary(quat_mul[double], apply_unary(quat_conj[double], p, 1, (4,)), 4, q, 4,
                     (4,))
    return 2.0 * np.arctan2(np.sqrt(np.einsum("...i,...i->...", r[..., 1:], r[..., 1:])),
                            np.abs(r[..., 0]))


@docfiller(_DOCS)
def inverse(q):
    """Inverse ``conj(q) / |q|^2`` of nonzero quaternions.

    %(q)s

    Returns
    -------
    ndarray, shape (..., 4)
        ``q^-1``, with ``q q^-1 = [1, 0, 0, 0]``.

    %(raises_q)s

    See Also
    --------
    conjugate, multiply

    %(examples)s
    >>> quaternion.inverse([0.0, 0.0, 0.0, 2.0])
    array([ 0. , -0. , -0. , -0.5])
    """
    cdef double a[4]
    if read_single_quaternion(q, a):
        out = new_single(1, 4)
        quat_inv[double](a, single_data(out))
        return out
    if _lazy(q):
        return map_blocks(inverse, "(4)->(4)", (q,))
    q = _quaternions(q, "q")
    return apply_unary(quat_inv[double], q, 1, (4,))


def rotate(q, v, out=None):
    """Rotate vectors by the rotation of ``q``: ``R(q) v``.

    Parameters
    ----------
    q : array_like, shape (..., 4)
        Nonzero quaternions (need not be unit: ``R(q) = R(q/|q|)``, Rucker 2018 eq. 13),
        orientations mapping body to world coordinates.
    v : array_like, shape (..., 3)
        Vectors (body coordinates for an orientation ``q``); batch dimensions broadcast with
        those of ``q``.
    out : ndarray, shape (..., 3), optional
        C-contiguous float64 array to write into (no allocation); returned.  It may not overlap
        ``q`` or ``v`` (ValueError).  Default: a new array.

    Returns
    -------
    ndarray, shape (..., 3)
        ``q v conj(q) / |q|^2`` (world coordinates; ``out`` when given).

    Raises
    ------
    ValueError
        For a zero quaternion, non-finite input or batch shapes that do not broadcast; if
        ``out`` has the wrong shape or layout or overlaps an input (its contents are then
        unspecified if the error is about ``q``).

    See Also
    --------
    to_matrix, multiply

    Notes
    -----
    The batch loop is vectorised (AVX2 or AVX-512 where the CPU has them, chosen at run time)
    and checks the quaternions in the same pass; every row gets the bits of the scalar kernel
    ``quat_rotate`` that Cython code can ``cimport``.

    References
    ----------
    .. [1] C. Rucker, "Integrating Rotations using Non-Unit Quaternions", IEEE Robotics and
       Automation Letters 3(4), 2018, eq. 13.

    Examples
    --------
    >>> import numpy as np
    >>> from rotode import quaternion
    >>> quarter_turn_z = [np.cos(np.pi / 4), 0.0, 0.0, np.sin(np.pi / 4)]
    >>> quaternion.rotate(quarter_turn_z, [1.0, 0.0, 0.0]).round(12)
    array([0., 1., 0.])
    """
    cdef double a[4]
    cdef double b[3]
    if out is None and read_single_quaternion(q, a) and read_single(v, 1, 3, b):
        out = new_single(1, 3)
        quat_rotate[double](a, b, single_data(out))
        return out
    if _lazy(q) or _lazy(v):
        return map_blocks(rotate, "(4),(3)->(3)", (q, v), {"out": out})
    # zero quaternions and non-finite input are found by the loop itself, in the same pass
    q = as_float_array(rotation_quaternions(q), "q", (4,), finite=False)
    v = as_float_array(v, "v", (3,), finite=False)
    _broadcast_error("q", q, "v", v)
    out, ok = _apply_rows(ROTATE, q, 4, v, 3, (3,), out, ("q", "v"))
    if not ok:
        as_quaternions(q, "q")
        as_float_array(v, "v", (3,))    # (one of them raises)
        raise ValueError("`q` must hold nonzero quaternions and `v` finite values")
    return out


@docfiller(_DOCS)
def to_matrix(q, out=None):
    """Rotation matrices of nonzero quaternions.

    %(q)s
    out : ndarray, shape (..., 3, 3), optional
        C-contiguous float64 array to write into (no allocation); returned.  It may not overlap
        ``q`` (ValueError).  Default: a new array.

    Returns
    -------
    ndarray, shape (..., 3, 3)
        ``R(q)``, which maps body to world coordinates (``out`` when given).

    Raises
    ------
    ValueError
        For a zero quaternion or non-finite input; if ``out`` has the wrong shape or layout or
        overlaps ``q`` (its contents are then unspecified if the error is about ``q``).

    See Also
    --------
    from_matrix, to_matrix_jacobian, rotate

    Notes
    -----
    ``R(q) = 1 + s (w [u]x + [u]x^2)`` with ``s = 2/|q|^2``, which equals the matrix of
    ``q/|q|`` for any nonzero ``q`` (Rucker 2018 eq. 13).  The batch loop is vectorised (AVX2 or
    AVX-512 where the CPU has them, chosen at run time) and checks the quaternions in the same
    pass; every row gets the bits of the scalar kernel ``quat_to_matrix`` that Cython code can
    ``cimport``.

    References
    ----------
    .. [1] C. Rucker, "Integrating Rotations using Non-Unit Quaternions", IEEE Robotics and
       Automation Letters 3(4), 2018, eq. 13.

    %(examples)s
    >>> quaternion.to_matrix([0.0, 0.0, 0.0, 2.0])   # half a turn about z, not unit
    array([[-1.,  0.,  0.],
           [ 0., -1.,  0.],
           [ 0.,  0.,  1.]])
    """
    cdef double a[4]
    if out is None and read_single_quaternion(q, a):
        out = new_single(2, 3)
        quat_to_matrix[double](a, single_data(out))
        return out
    if _lazy(q):
        return map_blocks(to_matrix, "(4)->(3,3)", (q,), {"out": out})
    q = as_float_array(rotation_quaternions(q), "q", (4,), finite=False)
    out, ok = _apply_rows(TO_MATRIX, q, 4, None, 0, (3, 3), out, ("q",))
    if not ok:
        as_quaternions(q, "q")          # raises
        raise ValueError("`q` must hold nonzero quaternions with a finite norm")
    return out


@docfiller(_DOCS)
def from_matrix(R, project=False):
    """Unit quaternions (``w >= 0``) of rotation matrices.

    Shepperd's method picks the numerically largest of ``w, x, y, z`` from the diagonal, so all
    branches (angles near 0 and near pi) are accurate; the result is normalised.

    Parameters
    ----------
    R : array_like, shape (..., 3, 3)
        Rotation matrices (body to world).
    project : bool, optional
        First replace each matrix by the nearest rotation (``U V^T`` of its SVD), as SciPy's
        ``Rotation.from_matrix`` accepts noisy matrices: for orientation estimates that are not
        exactly orthonormal (default False: such a matrix is an error).

    Returns
    -------
    ndarray, shape (..., 4)
        Unit quaternions ``[w, x, y, z]`` with ``w >= 0``.

    Raises
    ------
    ValueError
        If a matrix is not orthonormal with determinant +1 to 1e-6 (``project=False``), or is
        too far from a rotation to project (a reflection, or singular values more than
        `rotode._validation.PROJECT_TOL` from 1).

    See Also
    --------
    to_matrix, rotode.so3.log

    References
    ----------
    .. [1] S. W. Shepperd, "Quaternion from rotation matrix", Journal of Guidance and Control
       1(3), 1978.

    %(examples)s
    >>> quaternion.from_matrix([[0, -1, 0], [1, 0, 0], [0, 0, 1]])   # a quarter turn about z
    array([0.70710678, 0.        , 0.        , 0.70710678])
    """
    if _lazy(R):
        return map_blocks(from_matrix, "(3,3)->(4)", (R,), {"project": project})
    R = project_rotations(R, "R") if as_bool(project, "project") else \
        as_rotation_matrices(R, "R")
    return apply_unary(quat_from_matrix[double], R, 2, (4,))


def exp(x):
    """Quaternion exponential.

    Parameters
    ----------
    x : array_like, shape (..., 3) or (..., 4)
        Pure quaternions given by their vector part (shape (..., 3)), or full quaternions.

    Returns
    -------
    ndarray, shape (..., 4)
        ``exp((0, x)) = [cos|x|, x sin|x|/|x|]`` (a unit quaternion), or
        ``exp((w, u)) = e^w exp((0, u))``.

    Raises
    ------
    ValueError
        For a last dimension other than 3 or 4, non-finite input, or an argument whose
        exponential overflows.

    See Also
    --------
    log, exp_approx, rotode.so3.exp

    Notes
    -----
    A rotation by the rotation vector ``phi`` is ``exp(phi/2)`` ([NIRD]).  Small arguments
    use Taylor polynomials in ``|x|^2`` (exact at 0, no square root).

    References
    ----------
    .. [NIRD] "Numerical Integration for Rotational Dynamics", web article (docs/references.md).

    Examples
    --------
    >>> import numpy as np
    >>> from rotode import quaternion
    >>> quaternion.exp([0.0, 0.0, np.pi / 4])   # a quarter turn about z: exp(phi / 2)
    array([0.70710678, 0.        , 0.        , 0.70710678])
    """
    if _lazy(x):
        return map_blocks(exp, "(3)->(4)", (x,))
    x = as_float_array(x, "x")
    if last_dim(x) == 4:
        out = apply_unary(quat_exp[double], x, 1, (4,))
    elif last_dim(x) == 3:
        out = apply_unary(quat_exp_pure[double], x, 1, (4,))
    else:
        raise ValueError(f"`x` must have shape (..., 3) (vector parts) or (..., 4), "
                         f"got {x.shape}")
    if not np.isfinite(out).all():
        _reject_exp_argument(x)
    return out


def _reject_exp_argument(x):
    """Raise for the finite ``x`` whose exponential is not finite."""
    u = x[..., x.shape[x.ndim - 1] - 3:]  # (no negative indices: wraparound is off)
    with np.errstate(over="ignore"):
        if not np.isfinite(np.einsum("...i,...i->...", u, u)).all():
            raise ValueError("`x` vector parts must have |u| < 1.34e154 (|u|^2 overflows)")
    raise ValueError("`x` real parts are too large: exp overflows")


@docfiller(_DOCS)
def log(q):
    """Quaternion logarithm of nonzero quaternions.

    %(q)s

    Returns
    -------
    ndarray, shape (..., 4)
        ``log(q) = [log|q|, u atan2(|u|, w)/|u|]``; for a unit quaternion the real part is 0 and
        the vector part is half the rotation vector.  A negative real quaternion has no unique
        logarithm: the vector part ``[pi, 0, 0]`` is returned.

    %(raises_q)s

    See Also
    --------
    exp, rotode.so3.log

    Notes
    -----
    Accurate near the identity (series of ``atan(t)/t``) and near a half turn.

    Examples
    --------
    >>> import numpy as np
    >>> from rotode import quaternion
    >>> quaternion.log([np.cos(np.pi / 4), 0.0, 0.0, np.sin(np.pi / 4)])
    array([0.        , 0.        , 0.        , 0.78539816])
    """
    if _lazy(q):
        return map_blocks(log, "(4)->(4)", (q,))
    q = _quaternions(q, "q")
    return apply_unary(quat_log[double], q, 1, (4,))


@docfiller(_DOCS)
def exp_approx(x):
    """[NIRD]'s trig-free, normalised third-order exponential of pure quaternions.

    Parameters
    ----------
    x : array_like, shape (..., 3)
        Vector parts; for a rotation-vector update ``q' = exp(Omega/2) q`` pass ``Omega/2``.

    Returns
    -------
    ndarray, shape (..., 4)
        ``[(1 - |x|^2/2), (1 - |x|^2/6) x] / sqrt((1 - |x|^2/2)^2 + (1 - |x|^2/6)^2 |x|^2)``,
        always a unit quaternion.

    Raises
    ------
    ValueError
        For input not of shape (..., 3), non-finite input, or ``|x|^2`` overflowing.

    See Also
    --------
    exp

    Notes
    -----
    [NIRD] states an error below 1 % for rotations up to 90 degrees per step, i.e.
    ``|x| <= pi/4``.

    References
    ----------
    .. [NIRD] "Numerical Integration for Rotational Dynamics", web article (docs/references.md).

    %(examples)s
    >>> quaternion.exp_approx([0.0, 0.0, 0.1])   # exp gives [0.99500417, 0, 0, 0.09983342]
    array([0.99500413, 0.        , 0.        , 0.09983375])
    """
    if _lazy(x):
        return map_blocks(exp_approx, "(3)->(4)", (x,))
    x = as_float_array(x, "x", (3,))
    with np.errstate(over="ignore"):
        if not np.isfinite(np.einsum("...i,...i->...", x, x)).all():   # |x|^2 overflows
            _reject_exp_argument(x)
    return apply_unary(quat_exp_approx[double], x, 1, (4,))


@docfiller(_DOCS)
def to_scipy(q):
    """``scipy.spatial.transform.Rotation`` of scalar-first quaternions.

    Parameters
    ----------
    q : array_like, shape (4,) or (N, 4)
        Nonzero quaternions ``[w, x, y, z]`` (any length; SciPy normalises them).

    Returns
    -------
    scipy.spatial.transform.Rotation
        One rotation, or a stack of N.

    Raises
    ------
    ValueError
        For a zero quaternion, non-finite input or more than one batch dimension.

    See Also
    --------
    from_scipy

    %(examples)s
    >>> float(quaternion.to_scipy([0.0, 0.0, 0.0, 1.0]).magnitude())   # half a turn
    3.141592653589793
    """
    q = _quaternions(q, "q")
    if q.ndim > 2:
        raise ValueError(f"`q` must have shape (4,) or (N, 4) for a Rotation, got {q.shape}")
    return Rotation.from_quat(q, scalar_first=True)


def from_scipy(rotation):
    """Scalar-first unit quaternions of a ``scipy.spatial.transform.Rotation``.

    Parameters
    ----------
    rotation : scipy.spatial.transform.Rotation
        One rotation or a stack of them.

    Returns
    -------
    ndarray, shape (4,) or (N, 4)
        ``rotation.as_quat(scalar_first=True)``.

    Raises
    ------
    TypeError
        If ``rotation`` is not a ``Rotation``.

    See Also
    --------
    to_scipy

    Examples
    --------
    >>> from scipy.spatial.transform import Rotation
    >>> from rotode import quaternion
    >>> quaternion.from_scipy(Rotation.from_rotvec([0.0, 0.0, 3.141592653589793]))
    array([6.123234e-17, 0.000000e+00, 0.000000e+00, 1.000000e+00])
    """
    if not isinstance(rotation, Rotation):
        raise TypeError(f"`rotation` must be a scipy Rotation, got {type(rotation).__name__}")
    return rotation.as_quat(scalar_first=True)


@docfiller(_DOCS)
def to_matrix_jacobian(q):
    """Rotation matrix and its derivative with respect to ``q``, by dual numbers.

    Parameters
    ----------
    q : array_like, shape (..., 4)
        Nonzero quaternions.

    Returns
    -------
    R : ndarray, shape (..., 3, 3)
        ``to_matrix(q)``, the same values (the dual numbers' value parts).
    J : ndarray, shape (..., 3, 3, 4)
        ``J[..., i, j, k] = d R_ij / d q_k`` from one forward-mode evaluation of the same
        kernel ([DUAL]).  ``J q = 0``: ``R`` does not depend on the scale of ``q``.

    %(raises_q)s

    See Also
    --------
    to_matrix

    Notes
    -----
    The derivative of ``2/|q|^2`` involves ``|q|^4``, which overflows or underflows long before
    ``|q|^2`` does; each ``q`` is therefore differentiated at ``q / 2^e`` with ``|q / 2^e|`` in
    [0.5, 1) (an exact scaling, so ``R`` is unchanged) and ``J`` is scaled back by ``2^-e``.

    References
    ----------
    .. [1] A. Griewank and A. Walther, Evaluating Derivatives: Principles and Techniques of
       Algorithmic Differentiation, 2nd ed., SIAM, 2008 (forward mode).
    .. [DUAL] "Automatically Computing the Derivatives of a Vector Field using Dual Numbers",
       web article (docs/references.md).

    Examples
    --------
    >>> import numpy as np
    >>> from rotode import quaternion
    >>> q = np.array([0.5, 0.5, -0.5, 0.5])
    >>> R, J = quaternion.to_matrix_jacobian(q)
    >>> R.shape, J.shape, np.allclose(J @ q, 0.0)
    ((3, 3), (3, 3, 4), True)
    """
    if _lazy(q):
        return map_blocks(to_matrix_jacobian, "(4)->(3,3),(3,3,4)", (q,))
    q = _quaternions(q, "q")
    _, exponent = np.frexp(np.sqrt(np.einsum("...i,...i->...", q, q)))
    q = np.ldexp(q, -exponent[..., None])          # exact: |q| in [0.5, 1)
    cdef const double[:, ::1] qin = q.reshape(-1, 4)
    batch = batch_of(q, 1)
    R = np.empty(batch + (3, 3))
    J = np.empty(batch + (3, 3, 4))
    cdef double[:, ::1] Rv = R.reshape(-1, 9)
    cdef double[:, ::1] Jv = J.reshape(-1, 36)
    with nogil:
        jacobian_unary(quat_to_matrix[dual], qin, Rv, Jv)
    return R, np.ldexp(J, -exponent[..., None, None, None])


def __dir__():
    """The public names, ``__all__`` (not the imported helpers)."""
    return list(__all__)
