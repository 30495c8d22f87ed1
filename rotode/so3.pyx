"""The rotation group SO(3) in exponential coordinates, vectorised over batch dimensions.

A rotation vector ``v`` (axis times angle ``a = |v|``) gives the rotation matrix
``R(v) = exp([v]x)`` (Rodrigues).  ``T(v) = dexp(v)`` relates rates of change:
``d/dt R(v(t)) = [T(v) v']x R(v)``, so the world angular velocity is ``T(v) v'`` and the body
angular velocity ``T(-v) v'``; ``dexp_inv(v) = T(v)^-1`` inverts it.  All matrices map body to
world coordinates.

The kernels are ``noexcept nogil`` inline functions in ``rotode/so3.pxd`` for ``cimport``;
the functions here validate input and loop over the batch without the GIL (dask arrays:
block by block, a dask array out, `rotode._lazy`).

References
----------
.. [002] M. Mizerski, "Motion of spinning bodies", Roblox engineering blog, 2020
   (docs/references.md), secs. 2-4, and
   the formulas restated in docs/references.md.
"""
from math import prod

import numpy as np

from rotode._docfill import docfiller
from rotode._lazy import is_dask, map_blocks
from rotode._validation import (as_bool, as_float_array, batch_of, as_rotation_matrices,
                                check_out_overlap, output_array, project_rotations)
from rotode._loops import all_abs_below
from rotode._loops cimport (apply_unary, jacobian_unary, new_single, read_single, single_data,
                            unary_dual_kernel, use_threads)
from libc.math cimport fabs
from rotode.dual cimport dual
from rotode._rows cimport so3_exp_rows, so3_log_rows, rows_isa, rows_set_simd
from cython.parallel cimport prange

# the numpydoc blocks several docstrings here share (rotode._docfill)
_DOCS = {
    "jacobian_returns": """
Returns
-------
%(matrix)s : ndarray, shape (..., 3, 3)
    ``%(value)s``.
J : ndarray, shape (..., 3, 3, 3)
    ``%(derivative)s``.""",
    "examples": """
Examples
--------
>>> from rotode import so3""",
    "v": """
Parameters
----------
v : array_like, shape (..., 3)
    Rotation vectors.""",
    "raises_v": """
Raises
------
ValueError
    If ``v`` does not end in 3 components, is not finite, or ``|v|^2`` overflows.""",
    "v_2pi": """
Parameters
----------
v : array_like, shape (..., 3)
    Rotation vectors with ``|v| < 2 pi``.""",
    "mizerski": """
References
----------
.. [1] M. Mizerski, "Motion of spinning bodies", Roblox engineering blog, 2020, sec. 3
   (docs/references.md).""",
}


__all__ = ["hat", "vee", "exp", "log", "dexp", "dexp_inv", "exp_and_dexp", "coefficients",
           "exp_jacobian", "dexp_jacobian", "dexp_inv_jacobian"]

TWO_PI = 2.0 * np.pi
# |v|^2 of a vector whose components are all below this is finite: sqrt(DBL_MAX / 3)
COMPONENT_BOUND = 7.7e153
cdef double _COMPONENT_BOUND = COMPONENT_BOUND
# rows per parallel work item of so3.exp (72 kB of output)
cdef Py_ssize_t EXP_CHUNK = 1024
cdef object _ndarray = np.ndarray


cdef bint _lazy(object x):
    """True for a dask collection, whose blocks the kernel then runs on (`rotode._lazy`); an
    ndarray costs one comparison of its type."""
    return type(x) is not _ndarray and is_dask(x)


cdef object _jacobian(unary_dual_kernel f, object v, tuple out_trailing):
    cdef const double[:, ::1] vin = v.reshape(-1, 3)
    cdef Py_ssize_t k = prod(out_trailing)
    batch = batch_of(v, 1)
    val = np.empty(batch + out_trailing)
    jac = np.empty(batch + out_trailing + (3,))
    cdef double[:, ::1] valv = val.reshape(-1, k)
    cdef double[:, ::1] jacv = jac.reshape(-1, 3 * k)
    with nogil:
        jacobian_unary(f, vin, valv, jacv)
    return val, jac


cdef object _matrix_jacobian(object facade, unary_dual_kernel f, object v):
    """The 3x3 matrices of the kernel f at the rotation vectors v and their derivatives
    (`_jacobian`); for dask input, `facade` mapped over the blocks."""
    if _lazy(v):
        return map_blocks(facade, "(3)->(3,3),(3,3,3)", (v,))
    return _jacobian(f, _vectors(v), (3, 3))


def _vectors(v, name="v", rotation=True):
    """``v`` as a float64 (..., 3) array; ``rotation``: finite, with ``|v|^2`` representable."""
    if not rotation:
        return as_float_array(v, name, (3,))
    v = as_float_array(v, name, (3,), finite=False)
    if not all_abs_below(v.reshape(-1), COMPONENT_BOUND):  # one pass; rare slow path below
        _reject_rotation_vectors(v, name)
    return v


def _reject_rotation_vectors(v, name):
    """Raise for non-finite ``v`` or ``|v|^2`` overflow (|v| >= 1.34e154); return otherwise."""
    if not np.isfinite(v).all():
        raise ValueError(f"`{name}` must contain only finite values (no NaN or inf)")
    with np.errstate(over="ignore"):
        x = np.einsum("...i,...i->...", v, v)
    if not np.isfinite(x).all():
        raise ValueError(f"`{name}` must have |{name}| < 1.34e154 (|{name}|^2 overflows); "
                         f"largest component magnitude {float(np.max(np.abs(v)))!r}")


def _inside_dexp_inv_domain(v):
    a = np.sqrt(np.einsum("...i,...i->...", v, v))
    if np.any(a >= TWO_PI * (1 - 1e-12)):
        raise ValueError("`v` must satisfy |v| < 2 pi: T(v) is singular at |v| = 2 pi "
                         f"(largest |v| = {np.max(a)!r})")


@docfiller(_DOCS)
def hat(v):
    """Cross-product matrices ``[v]x`` of vectors: ``[v]x y = v x y``.

    Parameters
    ----------
    v : array_like, shape (..., 3)
        Vectors (any finite values).

    Returns
    -------
    ndarray, shape (..., 3, 3)
        The skew-symmetric matrices ``[[0, -z, y], [z, 0, -x], [-y, x, 0]]``.

    Raises
    ------
    ValueError
        If ``v`` does not end in 3 components or is not finite.

    See Also
    --------
    vee, exp

    %(examples)s
    >>> so3.hat([1.0, 2.0, 3.0])
    array([[ 0., -3.,  2.],
           [ 3.,  0., -1.],
           [-2.,  1.,  0.]])
    """
    if _lazy(v):
        return map_blocks(hat, "(3)->(3,3)", (v,))
    v = _vectors(v, rotation=False)
    return apply_unary(so3_hat[double], v, 1, (3, 3))


@docfiller(_DOCS)
def vee(K):
    """Vectors of the skew-symmetric part of matrices; the inverse of `hat`.

    Parameters
    ----------
    K : array_like, shape (..., 3, 3)
        Matrices; only their skew-symmetric part ``(K - K^T)/2`` is read.

    Returns
    -------
    ndarray, shape (..., 3)
        ``v`` with ``[v]x = (K - K^T)/2``.

    Raises
    ------
    ValueError
        If ``K`` does not end in (3, 3) or is not finite.

    See Also
    --------
    hat

    %(examples)s
    >>> so3.vee([[0.0, -3.0, 2.0], [3.0, 0.0, -1.0], [-2.0, 1.0, 0.0]])
    array([1., 2., 3.])
    """
    if _lazy(K):
        return map_blocks(vee, "(3,3)->(3)", (K,))
    K = as_float_array(K, "K", (3, 3))
    return apply_unary(so3_vee[double], K, 2, (3,))


def exp(v, out=None):
    """Rotation matrices ``R(v)`` of rotation vectors (Rodrigues' formula).

    Parameters
    ----------
    v : array_like, shape (..., 3)
        Rotation vectors (axis times angle in radians).
    out : ndarray, shape (..., 3, 3), optional
        C-contiguous float64 array to write into (no allocation); returned.  It may not
        overlap ``v`` (ValueError).  Its contents are unspecified if a ValueError is raised
        for non-finite ``v``.  Default: a new array.

    Returns
    -------
    ndarray, shape (..., 3, 3)
        ``R(v) = exp([v]x)``, mapping body to world coordinates (``out`` when given).

    Raises
    ------
    ValueError
        If ``v`` does not have shape (..., 3), has NaN or infinite components, or a vector
        longer than 1.34e154 (``|v|^2`` overflows); if ``out`` has the wrong shape or layout
        or overlaps ``v``.
    TypeError
        If ``v`` is not a real numeric array.

    See Also
    --------
    log, dexp, exp_and_dexp, exp_jacobian, rotode.quaternion.exp

    Notes
    -----
    ``R(v) = 1 + S1(a) [v]x + S2(a) [v]x^2``, ``S1 = sin(a)/a``, ``S2 = (1 - cos a)/a^2``,
    ``a = |v|``.  Coefficients come from Taylor polynomials for ``a <= 1``, the double-angle
    identity ``R(v) = R(v/2)^2`` for ``1 < a <= 2``, the same polynomials at the complement
    ``pi/2 - a/2`` of the half angle for ``2 < a <= 4``, and the library sine and cosine
    above (rotode/_rodrigues.hpp); they agree with high-precision values to a few ulp.  The batch
    loop has no branches, so the compiler vectorises it; on x86 an AVX2 or AVX-512F build of it
    is chosen at run time by the CPU's instruction sets.  Every row gets the same bits as the
    scalar kernel ``so3_exp`` that Cython code can ``cimport``.  Large batches run in parallel.

    References
    ----------
    .. [1] M. Mizerski, "Motion of spinning bodies", Roblox engineering blog, 2020, sec. 2
       (docs/references.md).

    Examples
    --------
    >>> import numpy as np
    >>> from rotode import so3
    >>> np.round(so3.exp([0, 0, np.pi / 2]), 12) + 0.0   # quarter turn about z
    array([[ 0., -1.,  0.],
           [ 1.,  0.,  0.],
           [ 0.,  0.,  1.]])
    """
    cdef double w[3]
    if out is None and read_single(v, 1, 3, w) and fabs(w[0]) < _COMPONENT_BOUND \
            and fabs(w[1]) < _COMPONENT_BOUND and fabs(w[2]) < _COMPONENT_BOUND:
        out = new_single(2, 3)      # one rotation: the scalar kernel (same bits as the rows)
        so3_exp[double](w, single_data(out))
        return out
    if _lazy(v):
        return map_blocks(exp, "(3)->(3,3)", (v,), {"out": out})
    # finiteness is checked by the kernel itself, in the same pass (one read of v, not two)
    v = as_float_array(v, "v", (3,), finite=False)
    cdef const double[:, ::1] vin = v.reshape(-1, 3)
    given = out is not None
    out = output_array(out, batch_of(v, 1) + (3, 3))
    if given:                               # (the rows of R would overwrite v unread)
        check_out_overlap(out, [v], ("v",))
    cdef double[:, ::1] R = out.reshape(-1, 9)
    cdef Py_ssize_t n = vin.shape[0]
    cdef Py_ssize_t chunks = (n + EXP_CHUNK - 1) // EXP_CHUNK
    cdef Py_ssize_t c, start, bad = 0
    # so3_exp_rows of rotode/_rows.hpp: branch-free blocks, vectorised (AVX2 or AVX-512 where
    # the CPU has them); the same bits as the scalar kernel so3_exp
    for c in prange(chunks, nogil=True, schedule="dynamic", use_threads_if=use_threads(n)):
        start = c * EXP_CHUNK
        if not so3_exp_rows(&vin[start, 0], &R[start, 0], min(EXP_CHUNK, n - start)):
            bad += 1
    if bad:
        _reject_rotation_vectors(v, "v")
    return out


def _rows_isa(level=None):
    """The instruction set of so3.exp's and so3.log's batch loops ("avx512", "avx2" or
    "portable"; `quaternion._rows_isa` sets the same); for tests and benchmarks.

    ``level`` caps it: 0 portable, 1 AVX2, 2 AVX-512F (the default, as far as the CPU goes).
    """
    if level is not None:
        rows_set_simd(int(level))
    return rows_isa().decode()


@docfiller(_DOCS)
def log(R, project=False, out=None):
    """Rotation vectors (``|v| <= pi``) of rotation matrices.

    Parameters
    ----------
    R : array_like, shape (..., 3, 3)
        Rotation matrices (body to world).
    project : bool, optional
        First replace each matrix by the nearest rotation, as `rotode.quaternion.from_matrix`
        does (default False: a matrix that is not a rotation is an error).
    out : ndarray, shape (..., 3), optional
        C-contiguous float64 array to write into (no allocation); returned.  It may not overlap
        ``R`` (ValueError).  Its contents are unspecified if a ValueError is raised for ``R``.
        Default: a new array.

    Returns
    -------
    ndarray, shape (..., 3)
        ``v`` with ``exp(v) = R`` and ``|v| <= pi`` (at a half turn, one of the two vectors;
        ``out`` when given).

    Raises
    ------
    ValueError
        If a matrix is not orthonormal with determinant +1 to 1e-6 (``project=False``), or is
        too far from a rotation to project; if ``out`` has the wrong shape or layout or
        overlaps ``R``.

    See Also
    --------
    exp, rotode.quaternion.from_matrix

    Notes
    -----
    Through Shepperd's quaternion ``(w, u)``, ``w >= 0``: ``v = 2 atan2(|u|, w) u/|u|``, accurate
    near the identity and near a half turn.  The batch loop is vectorised (AVX2 or AVX-512
    where the CPU has them, chosen at run time; `rotode.quaternion` shares the choice), with
    the library's ``atan2`` per row, and checks that each matrix is a rotation
    (``|R^T R - 1| <= 1e-6`` entrywise, ``det R > 0``) in the same pass; every row gets the bits
    of the scalar kernel ``so3_log`` that Cython code can ``cimport``.

    References
    ----------
    .. [1] S. W. Shepperd, "Quaternion from rotation matrix", Journal of Guidance and Control
       1(3), 1978.

    %(examples)s
    >>> so3.log([[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])   # quarter turn about z
    array([0.        , 0.        , 1.57079633])
    """
    cdef double m[9]
    if _lazy(R):
        return map_blocks(log, "(3,3)->(3)", (R,), {"project": project, "out": out})
    cdef bint projected = as_bool(project, "project")
    if projected:
        R = np.ascontiguousarray(project_rotations(R, "R"))
    elif out is None and read_single(R, 2, 3, m) and _clearly_rotation(m):
        out = new_single(1, 3)
        so3_log[double](m, single_data(out))
        return out
    else:   # the rotation check runs in the loop (NumPy's checks of R cost 0.5 us per matrix)
        R = as_float_array(R, "R", (3, 3), finite=False)
    given = out is not None
    out = output_array(out, batch_of(R, 2) + (3,))
    if given:
        check_out_overlap(out, [R], ("R",))
    cdef const double[:, ::1] Rin = R.reshape(-1, 9)
    cdef double[:, ::1] vout = out.reshape(-1, 3)
    cdef bint ok
    with nogil:
        ok = _log_rows(Rin, vout, not projected)
    if not ok:
        as_rotation_matrices(R, "R")    # raises: non-finite, or the worst error and determinant
    return out


def _log_scalar(R):
    """so3.log of float64 (..., 3, 3) matrices by the scalar kernel ``so3_log`` row by row (no
    check); the reference of the vectorised loop, for tests."""
    return apply_unary(so3_log[double], np.ascontiguousarray(R, dtype=np.float64), 2, (3,))


cdef bint _log_rows(const double[:, ::1] R, double[:, ::1] v, bint check) noexcept nogil:
    """v[i] = so3_log(R[i]) for every row (so3_log_rows: vectorised, AVX2 or AVX-512 where the
    CPU has them; the same bits), in chunks of EXP_CHUNK rows, in parallel for large batches
    (OUT: v).  With ``check``, False if some matrix is not within 1e-6 of orthonormal with
    det > 0 (the test of `rotode._validation.check_rotation_matrices`, whose NumPy temporaries,
    einsum and det cost more than the logarithm itself)."""
    cdef Py_ssize_t c, start, n = R.shape[0], bad = 0
    cdef Py_ssize_t chunks = (n + EXP_CHUNK - 1) // EXP_CHUNK
    for c in prange(chunks, schedule="dynamic", use_threads_if=use_threads(n)):
        start = c * EXP_CHUNK
        if not so3_log_rows(&R[start, 0], &v[start, 0], min(EXP_CHUNK, n - start), check):
            bad += 1
    return bad == 0


cdef bint _clearly_rotation(const double* R) noexcept:
    """Orthonormal to 5e-7 with determinant > 0.5: well inside what `as_rotation_matrices`
    accepts (1e-6, det > 0), so the single-matrix path never accepts what it would refuse;
    matrices near the bound take the general path, which decides and words the error."""
    cdef int i, j, k
    cdef double g
    for i in range(3):
        for j in range(3):
            g = 0.0
            for k in range(3):
                g += R[3 * k + i] * R[3 * k + j]
            if fabs(g - (1.0 if i == j else 0.0)) > 5e-7:
                return False
    return (R[0] * (R[4] * R[8] - R[5] * R[7]) - R[1] * (R[3] * R[8] - R[5] * R[6])
            + R[2] * (R[3] * R[7] - R[4] * R[6])) > 0.5


@docfiller(_DOCS)
def dexp(v):
    """``T(v)``, the derivative of the exponential map (the left Jacobian of SO(3)).

    %(v)s

    Returns
    -------
    ndarray, shape (..., 3, 3)
        ``T(v)``: the world angular velocity of ``R(v(t))`` is ``T(v) v'``, the body one
        ``T(-v) v'``.

    %(raises_v)s

    See Also
    --------
    dexp_inv, exp_and_dexp, dexp_jacobian

    Notes
    -----
    ``T(v) = integral_0^1 R(s v) ds = 1 + S2 [v]x + S3 [v]x^2``, ``S3 = (a - sin a)/a^3``.
    ``dR(v) = [T(v) dv]x R(v)``; ``T(v) v = v``; ``T(v)^T = T(-v)``; ``R(v) T(-v) = T(v)``.

    References
    ----------
    .. [1] M. Mizerski, "Motion of spinning bodies", Roblox engineering blog, 2020, secs. 3-4
       (docs/references.md).

    Examples
    --------
    >>> import numpy as np
    >>> from rotode import so3
    >>> v = np.array([0.3, -0.2, 0.5])
    >>> np.allclose(so3.dexp(v) @ v, v)      # T(v) v = v
    True
    """
    if _lazy(v):
        return map_blocks(dexp, "(3)->(3,3)", (v,))
    v = _vectors(v)
    return apply_unary(so3_dexp[double], v, 1, (3, 3))


@docfiller(_DOCS)
def dexp_inv(v):
    """Inverse of `dexp`: ``T(v)^-1`` for ``|v| < 2 pi``.

    %(v_2pi)s

    Returns
    -------
    ndarray, shape (..., 3, 3)
        ``T(v)^-1 = 1 - [v]x/2 + C(a) [v]x^2``, ``C = (1 - (a/2) cot(a/2))/a^2``: the rate of the
        rotation vector is ``v' = T(v)^-1 w_world``.

    Raises
    ------
    ValueError
        If ``|v| >= 2 pi``, where ``T(v)`` is singular, or ``v`` is not finite.

    See Also
    --------
    dexp, dexp_inv_jacobian, coefficients

    %(mizerski)s

    Examples
    --------
    >>> import numpy as np
    >>> from rotode import so3
    >>> v = np.array([0.3, -0.2, 0.5])
    >>> np.allclose(so3.dexp_inv(v) @ so3.dexp(v), np.eye(3))
    True
    """
    if _lazy(v):
        return map_blocks(dexp_inv, "(3)->(3,3)", (v,))
    v = _vectors(v)
    _inside_dexp_inv_domain(v)
    return apply_unary(so3_dexp_inv[double], v, 1, (3, 3))


@docfiller(_DOCS)
def exp_and_dexp(v):
    """``R(v)`` and ``T(v)`` together, from shared coefficients.

    %(v)s

    Returns
    -------
    R, T : ndarray, shape (..., 3, 3)
        ``exp(v)`` and ``dexp(v)``, the same values as the two functions give.

    %(raises_v)s

    See Also
    --------
    exp, dexp

    %(mizerski)s

    Examples
    --------
    >>> import numpy as np
    >>> from rotode import so3
    >>> R, T = so3.exp_and_dexp([0.3, -0.2, 0.5])
    >>> np.array_equal(R, so3.exp([0.3, -0.2, 0.5])), T.shape
    (True, (3, 3))
    """
    if _lazy(v):
        return map_blocks(exp_and_dexp, "(3)->(3,3),(3,3)", (v,))
    v = _vectors(v)
    cdef const double[:, ::1] vin = v.reshape(-1, 3)
    R = np.empty(batch_of(v, 1) + (3, 3))
    T = np.empty(batch_of(v, 1) + (3, 3))
    cdef double[:, ::1] Rv = R.reshape(-1, 9)
    cdef double[:, ::1] Tv = T.reshape(-1, 9)
    cdef Py_ssize_t i, n = vin.shape[0]
    for i in prange(n, nogil=True, schedule="dynamic", chunksize=1024,
                    use_threads_if=use_threads(n)):
        so3_exp_and_dexp(&vin[i, 0], &Rv[i, 0], &Tv[i, 0])
    return R, T


@docfiller(_DOCS)
def coefficients(angle):
    """The scalar coefficients ``S1, S2, S3, C`` of the SO(3) formulas at angles ``a >= 0``.

    Parameters
    ----------
    angle : array_like
        Angles ``a = |v|`` in radians, ``0 <= a < 1.3e154``, any shape.

    Returns
    -------
    S1, S2, S3, C : ndarray, shape of ``angle``
        ``S1 = sin(a)/a``, ``S2 = (1 - cos a)/a^2``, ``S3 = (a - sin a)/a^3`` and
        ``C = (1 - (a/2) cot(a/2))/a^2`` (NaN for ``a >= 2 pi``), computed by the same branches
        as the matrix kernels (Taylor polynomials near 0); for accuracy tests and for building
        other formulas.

    Raises
    ------
    ValueError
        For a negative, non-finite or too large angle.

    See Also
    --------
    exp, dexp, dexp_inv

    %(examples)s
    >>> S1, S2, S3, C = so3.coefficients([0.0, 1.0])
    >>> S1.round(6).tolist(), S2.round(6).tolist(), C.round(6).tolist()
    ([1.0, 0.841471], [0.5, 0.459698], [0.083333, 0.084756])
    """
    if _lazy(angle):
        return map_blocks(coefficients, "()->(),(),(),()", (angle,))
    a = as_float_array(angle, "angle", ())
    if np.any(a < 0):
        raise ValueError("`angle` must be >= 0")
    if not all_abs_below(a.reshape(-1), 1.3e154):
        raise ValueError(f"`angle` must be < 1.3e154 (its square overflows), got "
                         f"{float(np.max(a))!r}")
    cdef double[::1] x = (a * a).ravel()
    out = np.empty((4,) + a.shape)
    cdef double[:, ::1] o = out.reshape(4, -1) if a.size else np.empty((4, 0))
    cdef Py_ssize_t i
    with nogil:
        for i in range(x.shape[0]):
            so3_coefficients(x[i], &o[0, i], &o[1, i], &o[2, i])
            o[3, i] = so3_dexp_inv_coefficient(x[i])
    out[3] = np.where(a >= TWO_PI, np.nan, out[3])   # (0-d input: out[3] is a scalar)
    return out[0], out[1], out[2], out[3]


@docfiller(_DOCS)
def exp_jacobian(v):
    """``R(v)`` and its derivative ``J[..., i, j, k] = d R_ij / d v_k`` by dual numbers.

    %(v)s

    Returns
    -------
    R : ndarray, shape (..., 3, 3)
        ``exp(v)``, the same values.
    J : ndarray, shape (..., 3, 3, 3)
        ``d R_ij / d v_k``; analytically ``[T(v) e_k]x R(v)``.

    %(raises_v)s

    See Also
    --------
    exp, dexp_jacobian

    %(mizerski)s
    .. [2] A. Griewank and A. Walther, Evaluating Derivatives: Principles and Techniques of
       Algorithmic Differentiation, 2nd ed., SIAM, 2008 (forward mode, [DUAL]).

    Examples
    --------
    >>> import numpy as np
    >>> from rotode import so3
    >>> v = np.array([0.3, -0.2, 0.5])
    >>> R, J = so3.exp_jacobian(v)
    >>> np.allclose(J[..., 2], so3.hat(so3.dexp(v)[:, 2]) @ R)
    True
    """
    return _matrix_jacobian(exp_jacobian, so3_exp[dual], v)


@docfiller(_DOCS, matrix="T", value="dexp(v)", derivative="d T_ij / d v_k")
def dexp_jacobian(v):
    """``T(v)`` and its derivative ``d T_ij / d v_k`` by dual numbers.

    %(v)s

    %(jacobian_returns)s

    %(raises_v)s

    See Also
    --------
    dexp, exp_jacobian, dexp_inv_jacobian

    %(examples)s
    >>> T, J = so3.dexp_jacobian([0.3, -0.2, 0.5])
    >>> T.shape, J.shape
    ((3, 3), (3, 3, 3))
    """
    return _matrix_jacobian(dexp_jacobian, so3_dexp[dual], v)


@docfiller(_DOCS, matrix="Tinv", value="dexp_inv(v)", derivative="d (T^-1)_ij / d v_k")
def dexp_inv_jacobian(v):
    """``T(v)^-1`` and its derivative ``d (T^-1)_ij / d v_k`` by dual numbers, for ``|v| < 2 pi``.

    %(v_2pi)s

    %(jacobian_returns)s

    Raises
    ------
    ValueError
        If ``|v| >= 2 pi`` or ``v`` is not finite.

    See Also
    --------
    dexp_inv, dexp_jacobian

    Examples
    --------
    >>> import numpy as np
    >>> from rotode import so3
    >>> Tinv, J = so3.dexp_inv_jacobian([0.3, -0.2, 0.5])
    >>> np.allclose(Tinv @ so3.dexp([0.3, -0.2, 0.5]), np.eye(3)), J.shape
    (True, (3, 3, 3))
    """
    if _lazy(v):
        return map_blocks(dexp_inv_jacobian, "(3)->(3,3),(3,3,3)", (v,))
    v = _vectors(v)
    _inside_dexp_inv_domain(v)
    return _jacobian(so3_dexp_inv[dual], v, (3, 3))


def __dir__():
    """The public names, ``__all__`` (not the imported helpers)."""
    return list(__all__)
