"""Input checks shared by every facade: one place for every error message.

Nothing below the Python facade raises; these helpers turn bad input into a ``TypeError`` or
``ValueError`` that names the argument and the expected shape.
"""

import math
import numbers
import os
import warnings
from typing import NamedTuple

import numpy as np
from scipy.spatial.transform import Rotation

from rotode._loops import TINY_NORM2, all_finite, first_small_norm, step_grid_ok

__all__ = [
    "as_bool",
    "as_choice",
    "as_real",
    "as_int",
    "as_float_array",
    "as_callable_vector",
    "call_vector",
    "callable_name",
    "complex_values_error",
    "python_override",
    "as_positive_scalar",
    "as_rows",
    "as_body_index",
    "common_bodies",
    "is_dask",
    "check_nonzero_quaternions",
    "rotation_quaternions",
    "as_quaternions",
    "check_rotation_matrices",
    "as_rotation_matrices",
    "as_positive_array",
    "batch_of",
    "last_dim",
    "format_shape",
    "as_step_grid",
    "as_workers",
    "as_frame",
    "FRAMES",
    "as_inertia",
    "Control",
    "as_control",
    "check_out_overlap",
    "output_array",
    "as_bool_option",
    "as_int_option",
]


def _shown(value):
    """A short description of a bad value for a message: its repr when short, else its type
    (no addresses of functions, no pages of array)."""
    if isinstance(value, (str, bytes, bool, int, float, complex, np.generic)) or value is None:
        text = repr(value)
        if len(text) <= 60:
            return text
    return type(value).__name__


def as_bool(value, name):
    """An argument that must be True or False (TypeError naming it otherwise)."""
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"`{name}` must be a bool (True or False), got {_shown(value)}")
    return bool(value)


def as_bool_option(value, name):
    """A method option that must be True or False (TypeError naming it otherwise)."""
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"option `{name}` must be a bool (True or False), got {_shown(value)}")
    return bool(value)


def as_choice(value, name, choices, what="`{}`"):
    """One of the strings ``choices`` (ValueError naming the argument otherwise; arrays and
    other unhashable values included)."""
    if isinstance(value, str) and value in choices:
        return value
    shown = " or ".join(repr(c) for c in choices) if len(choices) <= 2 else \
        "one of " + ", ".join(repr(c) for c in choices)
    raise ValueError(f"{what.format(name)} must be {shown}, got {_shown(value)}")


def as_real(x, name, *, finite=True):
    """A real scalar (a Python or NumPy number, or a 0-d real array) as float; TypeError or
    ValueError naming the argument otherwise."""
    if type(x) is float and (not finite or math.isfinite(x)):      # the common case, fast
        return x
    if isinstance(x, np.ndarray) and x.ndim == 0 and x.dtype.kind in "iuf":
        x = x[()]
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, numbers.Real):
        raise TypeError(f"`{name}` must be a real number, got {_shown(x)}")
    try:
        x = float(x)
    except OverflowError:      # an integer beyond the float range
        x = math.inf
    if finite and not math.isfinite(x):
        raise ValueError(f"`{name}` must be a finite real number, got {x!r}")
    return x


def as_int(value, name, low=None, high=None):
    """An integer argument in [low, high] (TypeError or ValueError naming it)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise TypeError(f"`{name}` must be an integer, got {_shown(value)}")
    value = int(value)
    if (low is not None and value < low) or (high is not None and value > high):
        rng = (f">= {low}" if high is None else f"<= {high}" if low is None
               else f"in [{low}, {high}]")
        raise ValueError(f"`{name}` must be {rng}, got {value}")
    return value


def as_int_option(value, name, low, high=None):
    """An integer method option in [low, high] (TypeError or ValueError naming it)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise TypeError(f"option `{name}` must be an int, got {type(value).__name__}")
    value = int(value)
    if value < low or (high is not None and value > high):
        rng = f">= {low}" if high is None else f"in [{low}, {high}]"
        raise ValueError(f"option `{name}` must be {rng}, got {value}")
    return value

#: Default cap on the accepted steps of one body in an error-controlled run.
DEFAULT_MAX_STEPS = 10_000_000
_EPS = np.finfo(float).eps


class Control(NamedTuple):
    """The step size control of an error-controlled run, checked (`as_control`); a piece of a
    run's plan (`rotode._runplan.Plan.control`; `rotode._driver.Engine` reads it)."""

    rtol: float
    atol: np.ndarray       # (n,), one per component of the stepped state
    first_step: float      # 0: chosen from the problem, as SciPy chooses it
    max_step: float        # inf: no limit
    max_steps: int         # accepted steps per body before the run fails
    t_eval: bool           # the output times are the caller's (SciPy's count of evaluations)


def as_control(rtol, atol, first_step, max_step, max_steps, n, length, t_eval=False):
    """The `Control` ``(rtol, atol (n,), first_step, max_step, max_steps, t_eval)`` of an
    error-controlled run.

    As SciPy's ``solve_ivp``: ``rtol`` > 0 (below 100 eps it is raised to 100 eps with a
    warning), ``atol`` >= 0 a scalar or ``n`` values, ``first_step`` > 0 and within the span
    (None: chosen from the problem), ``max_step`` > 0 (None: no limit); ``max_steps`` caps the
    accepted steps per body (None: `DEFAULT_MAX_STEPS`).  ``t_eval``: the run's output times
    are the caller's ``t_eval`` (the driver then counts the dense output of every step holding
    one, as SciPy does; `rotode._driver` ``Control.t_eval``).
    """
    rtol = 1e-3 if rtol is None else as_positive_scalar(rtol, "rtol")
    if rtol < 100 * _EPS:
        warnings.warn(f"`rtol` is too low, setting it to {100 * _EPS}", stacklevel=3)
        rtol = 100 * _EPS
    atol = 1e-6 if atol is None else atol
    if type(atol) is float and atol >= 0.0 and atol != np.inf:      # the common case, fast
        a = np.full(n, atol)
    else:
        a = as_float_array(atol, "atol")
        if a.shape not in ((), (n,)):
            raise ValueError(f"`atol` must be a scalar or have shape ({n},), got {a.shape}")
        if np.any(a < 0):
            raise ValueError(f"`atol` must be >= 0, got {atol!r}")
        a = np.ascontiguousarray(np.broadcast_to(a, (n,)), dtype=np.float64)
    if first_step is None:
        first = 0.0
    else:
        first = as_positive_scalar(first_step, "first_step")
        if first > length:
            raise ValueError(f"`first_step`={first!r} exceeds the span {length!r}")
    top = np.inf
    if max_step is not None and not (isinstance(max_step, numbers.Real)
                                     and not isinstance(max_step, (bool, np.bool_))
                                     and max_step == np.inf or _beyond_float(max_step)):
        top = as_positive_scalar(max_step, "max_step")
    if max_steps is None:
        cap = DEFAULT_MAX_STEPS
    elif isinstance(max_steps, (bool, np.bool_)) or not isinstance(max_steps, numbers.Integral) \
            or max_steps < 1:
        raise ValueError(f"`max_steps` must be an integer >= 1, got {_shown(max_steps)}")
    else:
        cap = min(int(max_steps), 2 ** 62)      # more is no limit at all
    return Control(rtol, a, first, top, cap, bool(t_eval))


def output_array(out, shape):
    """A new float64 array of ``shape`` when ``out`` is None; else ``out`` itself, which must be
    a writeable C-contiguous float64 ndarray of exactly that shape (ValueError naming `out`)."""
    if out is None:
        return np.empty(shape)
    if not isinstance(out, np.ndarray) or out.dtype != np.float64 or out.shape != shape \
            or not out.flags.c_contiguous or not out.flags.writeable:
        raise ValueError(f"`out` must be a writeable C-contiguous float64 array of shape {shape}")
    return out


def check_out_overlap(out, inputs, names, same_ok=()):
    """ValueError when ``out`` overlaps one of ``inputs`` (arrays, named by ``names``): a
    kernel writing ``out`` would change inputs it has not read yet.  An input named in
    ``same_ok`` may be ``out`` itself (the same memory, strides and shape: each row read
    before it is written), but not overlap it otherwise."""
    for x, name in zip(inputs, names, strict=True):
        if not (isinstance(x, np.ndarray) and np.may_share_memory(out, x)
                and np.shares_memory(out, x)):
            continue
        if name in same_ok:
            if (out.__array_interface__["data"][0] == x.__array_interface__["data"][0]
                    and out.strides == x.strides and out.shape == x.shape):
                continue
            raise ValueError(f"`out` overlaps `{name}` without being the same array: pass "
                             f"out={name} (in place) or memory apart from `{name}`")
        raise ValueError(f"`out` overlaps `{name}`: the result would overwrite its input "
                         f"before it is read; pass memory apart from `{name}`")


def _beyond_float(x):
    """True for a positive integer beyond the float range (a step bound that is no bound)."""
    return isinstance(x, numbers.Integral) and not isinstance(x, (bool, np.bool_)) \
        and x >= 2 ** 1024


#: Relative tolerance of the inertia checks (symmetry, positive definiteness, triangle
#: inequality), as a fraction of the tensor's largest entry or moment: far above the round-off
#: of a tensor assembled from a few parts (~1e-15), far below any physical asymmetry.
INERTIA_RTOL = 1e-10


def as_symmetric(i, name):
    """``(i + i^T)/2`` of float64 (..., 3, 3) tensors that are symmetric to `INERTIA_RTOL`
    relative to their largest entry; ValueError naming `name` otherwise."""
    if not i.size:
        return i
    scale = np.abs(i).max(axis=(-2, -1))
    with np.errstate(over="ignore"):     # |I - I^T| of entries near the float limit
        asym = np.abs(i - np.swapaxes(i, -1, -2)).max(axis=(-2, -1))
    bad = asym > INERTIA_RTOL * scale
    if np.any(bad):
        raise ValueError(f"`{name}` must be symmetric; max |I - I^T| = {np.max(asym[bad]):.3g} "
                         f"relative to max |I| = {np.max(scale[bad]):.3g}")
    with np.errstate(over="ignore"):
        sym = 0.5 * (i + np.swapaxes(i, -1, -2))
    if not all_finite(sym.reshape(-1)):      # entries near the float limit: halve first
        sym = 0.5 * i + 0.5 * np.swapaxes(i, -1, -2)
    return sym


def eigh_scaled(i, vectors=True):
    """``numpy.linalg.eigh`` (or ``eigvalsh``) of symmetric (..., 3, 3) matrices whose entries
    may lie near the float limit: those are scaled by an exact power of two first (the products
    inside the eigensolver would overflow), the others are passed on unchanged."""
    f = np.linalg.eigh if vectors else np.linalg.eigvalsh
    top = np.abs(i).max() if i.size else 0.0
    if top < 1e150:
        return f(i)
    _, e = np.frexp(np.abs(i).max(axis=(-2, -1), keepdims=True))
    out = f(np.ldexp(i, -e))
    if vectors:
        return np.ldexp(out[0], e[..., 0]), out[1]
    return np.ldexp(out, e[..., 0])


def eigvalsh_scaled(i):
    """`eigh_scaled` without the eigenvectors."""
    return eigh_scaled(i, vectors=False)


def as_inertia(inertia, name="inertia", *, moments=True, triangle=True):
    """Physically valid inertia tensors as float64 ``(..., 3, 3)``, exactly symmetrised.

    The one inertia check of every entry point (`rotode.RigidBody`, `rotode.exact`,
    `rotode.inertia.validate_inertia`, the moving frames).  A valid tensor is symmetric (to
    `INERTIA_RTOL` relative to its largest entry), positive definite, and its principal moments
    ``I1 <= I2 <= I3`` satisfy the triangle inequality ``I1 + I2 >= I3`` (to `INERTIA_RTOL`
    relative; equality is a flat lamina), which every mass distribution meets because
    ``I_xx + I_yy - I_zz = 2 int z^2 dm >= 0`` in the principal frame (Mandre 2008 secs. 3,
    7.1).  With ``moments=True`` a shape (3,) is taken as the principal moments
    (a diagonal tensor).  ``triangle=False`` skips the triangle inequality, for closed forms
    that hold for any positive moments (`rotode.exact`).

    Raises
    ------
    ValueError
        Naming the argument and the failed condition.
    """
    arr = as_float_array(inertia, name, (), finite=False)
    if moments and arr.shape == (3,):
        arr = as_float_array(arr, name, (3,), batch=False)
        if not np.all(arr > 0):
            raise ValueError(f"`{name}` principal moments must be positive, got {arr.tolist()} "
                             "(each must be > 0)")
        i = np.diag(arr)
    else:
        if arr.ndim < 2 or arr.shape[-2:] != (3, 3):
            shapes = "(3,) (principal moments) or (3, 3)" if moments else "(..., 3, 3)"
            raise ValueError(f"`{name}` must have shape {shapes}, got {arr.shape}")
        i = as_float_array(arr, name, (3, 3))
    if not i.size:
        return i
    i = as_symmetric(i, name)
    eig = eigvalsh_scaled(i)
    top = np.abs(eig).max(axis=-1)
    not_pd = ~(eig[..., 0] > INERTIA_RTOL * top)
    if np.any(not_pd):
        raise ValueError(f"`{name}` must be positive definite; smallest principal moment "
                         f"{np.min(eig[..., 0][not_pd]):.6g} (principal moments "
                         f"{eig[not_pd][0].tolist()})")
    excess = eig[..., 2] - eig[..., 0] - eig[..., 1]
    bad = (excess > INERTIA_RTOL * eig[..., 2]) & triangle
    if np.any(bad):
        m = eig[bad][0]
        raise ValueError(f"`{name}` violates the triangle inequality I1 + I2 >= I3 of its "
                         f"principal moments: {m[0]:.6g} + {m[1]:.6g} < {m[2]:.6g} (no mass "
                         "distribution has them)")
    return i

#: Frame names, in the order of the FRAME_BODY = 0, FRAME_WORLD = 1 codes of
#: rotode/equations.pxd.
FRAMES = ("body", "world")


def as_frame(frame, name="frame"):
    """The code of a frame name (0 "body", 1 "world"); ValueError naming `name` otherwise."""
    if isinstance(frame, str) and frame in FRAMES:
        return FRAMES.index(frame)
    raise ValueError(f"`{name}` must be 'body' or 'world', got {frame!r}")


def format_shape(trailing):
    """Human form of an expected shape with a leading batch: ``(..., 3, 3)``."""
    return "(..., " + ", ".join(str(d) for d in trailing) + ")" if trailing else "(...)"


def as_float_array(x, name, trailing=(), *, finite=True, batch=True):
    """Return ``x`` as a C-contiguous float64 array whose shape ends with ``trailing``.

    Parameters
    ----------
    x : array_like
        The input.
    name : str
        Argument name used in error messages.
    trailing : tuple of int
        Required trailing dimensions, e.g. ``(4,)`` for quaternions or ``(3, 3)`` for matrices.
    finite : bool
        Reject NaN and infinity.
    batch : bool
        Allow leading batch dimensions; otherwise the shape must equal ``trailing``.

    Raises
    ------
    TypeError
        If ``x`` is not real numeric (strings, objects, complex numbers, booleans).
    ValueError
        If the shape does not match or values are not finite.
    """
    def expected():
        return format_shape(trailing) if batch else str(tuple(trailing))

    if x is None:
        raise TypeError(f"`{name}` must be a real numeric array, got None")
    try:
        arr = np.asarray(x)
    except Exception:  # ragged nested sequences and the like
        what = "a real array" if not trailing and batch else f"an array of shape {expected()}"
        raise ValueError(f"`{name}` must be {what}, got a ragged nested {type(x).__name__} "
                         "(rows of different lengths)") from None
    if arr.dtype == object:
        try:
            arr = arr.astype(np.float64)
        except OverflowError:      # an integer beyond the float range
            raise ValueError(f"`{name}` must contain only finite values, got an integer beyond "
                             "the float range") from None
        except (TypeError, ValueError):
            if isinstance(x, Rotation):
                raise TypeError(
                    f"`{name}` must be a real numeric array, got a scipy.spatial.transform."
                    "Rotation: rotode takes a Rotation where an orientation is expected (`y0` "
                    "of kinematics, event references, frames, quaternion arguments); a rigid "
                    "body's state is rotode.state(rotation, w_body)") from None
            raise TypeError(f"`{name}` must be a real numeric array, got dtype object") from None
    if arr.dtype.kind not in "iuf":
        raise TypeError(f"`{name}` must be a real numeric array, got dtype {arr.dtype}")
    nt = len(trailing)
    shape_ok = arr.ndim >= nt and tuple(arr.shape[arr.ndim - nt:]) == tuple(trailing)
    if not batch:
        shape_ok = shape_ok and arr.ndim == nt
    if not shape_ok:
        raise ValueError(f"`{name}` must have shape {expected()}, got {arr.shape}")
    arr = np.asarray(arr, dtype=np.float64, order="C")  # keeps 0-d (ascontiguousarray: >= 1-d)
    if finite and not all_finite(arr.reshape(-1)):
        raise ValueError(f"`{name}` must contain only finite values (no NaN or inf)")
    return arr


def is_dask(x):
    """True for a dask collection (``dask.array.Array``, ...), without importing dask."""
    return getattr(type(x), "__dask_graph__", None) is not None


def as_rows(x, name, trailing=()):
    """A parameter given once or once per body: ``(array, N)`` for shape ``(N, *trailing)``,
    ``(array, None)`` for shape ``trailing`` (float64 NumPy, finite).

    A dask array is kept lazy (its values are checked where its blocks are used); it must have
    the per-body shape ``(N, *trailing)``.
    """
    nt = len(trailing)
    want = str((*trailing,)) + " or " + str(("N", *trailing)).replace("'", "")
    if is_dask(x):
        if x.ndim != nt + 1 or tuple(x.shape[1:]) != tuple(trailing):
            raise ValueError(f"`{name}` as a dask array must have the per-body shape "
                             f"{str(('N', *trailing)).replace(chr(39), '')}, got {x.shape}")
        if x.dtype.kind not in "iuf":
            raise TypeError(f"`{name}` must be a real numeric array, got dtype {x.dtype}")
        return x, int(x.shape[0])
    arr = as_float_array(x, name, ())
    if tuple(arr.shape) == tuple(trailing):
        return arr, None
    if arr.ndim == nt + 1 and tuple(arr.shape[1:]) == tuple(trailing) and arr.shape[0] > 0:
        return arr, int(arr.shape[0])
    raise ValueError(f"`{name}` must have shape {want}, got {arr.shape}")


def common_bodies(named_counts):
    """The body count N shared by per-body parameters (``{name: N or None}``), or None."""
    counts = {name: n for name, n in named_counts.items() if n is not None}
    if len(set(counts.values())) > 1:
        raise ValueError("per-body parameters must all hold the same number of bodies, got "
                         + ", ".join(f"`{k}`: {v}" for k, v in counts.items()))
    return next(iter(counts.values()), None)


def as_body_index(i, n_bodies, what, lazy=False):
    """Index ``i`` (an integer, negative from the end) of a body of a per-body model or source
    `what` holding ``n_bodies`` (None: one body's parameters, not indexable), as 0..N-1."""
    if n_bodies is None:
        raise TypeError(f"{what} holds one body's parameters; only a per-body one "
                        "(n_bodies = N) can be indexed")
    if isinstance(i, (bool, np.bool_)) or not isinstance(i, (int, np.integer)):
        raise TypeError(f"a body index must be an integer, got {type(i).__name__}")
    if not -n_bodies <= i < n_bodies:
        raise IndexError(f"body index {i} out of range for {n_bodies} bodies")
    if lazy:
        raise ValueError(f"{what} holds dask arrays: index it after computing them "
                         "(rotode.integrate does this per chunk)")
    return int(i) % n_bodies


def as_positive_scalar(x, name, *, allow_zero=False):
    """A finite real scalar > 0 (or >= 0 with ``allow_zero``), as float."""
    if type(x) is float and 0.0 < x < math.inf:      # the common case, fast
        return x
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, numbers.Real):
        raise TypeError(f"`{name}` must be a real number, got {type(x).__name__}")
    try:
        x = float(x)
    except OverflowError:      # an integer beyond the float range
        x = float("inf")
    if not np.isfinite(x) or x < 0 or (x == 0 and not allow_zero):
        bound = ">= 0" if allow_zero else "> 0"
        raise ValueError(f"`{name}` must be finite and {bound}, got {x!r}")
    return x


def check_nonzero_quaternions(q, name):
    """Reject zero (or overflowing) quaternions in an array of shape (..., 4)."""
    if (q.ndim == 2 and q.shape[1] == 4 and q.dtype == np.float64
            and first_small_norm(q, TINY_NORM2) < 0):
        return q
    n2 = np.einsum("...i,...i->...", q, q)
    bad = ~(n2 > TINY_NORM2) | ~np.isfinite(n2)
    if np.any(bad):
        where = np.argwhere(np.atleast_1d(bad))[0]
        raise ValueError(
            f"`{name}` must hold nonzero quaternions with a finite norm; "
            f"entry {tuple(int(i) for i in where)} has |q|^2 = {np.atleast_1d(n2)[tuple(where)]!r}"
        )
    return q


def rotation_quaternions(x):
    """The scalar-first quaternions ``[w, x, y, z]`` of a ``scipy.spatial.transform.Rotation``,
    shape (4,) or (..., 4), by SciPy's own export ``as_quat(scalar_first=True)``; anything
    else unchanged.  (A scalar-last array, SciPy's default ``as_quat()``, cannot be told apart
    from a scalar-first one: only a Rotation carries its convention.)"""
    if isinstance(x, Rotation):
        return x.as_quat(scalar_first=True)
    return x


def as_quaternions(x, name, *, batch=True):
    """Nonzero scalar-first quaternions as float64, shape (..., 4) (``batch=False``: (4,)),
    from an array or a ``scipy.spatial.transform.Rotation`` (`rotation_quaternions`);
    TypeError/ValueError naming ``name`` otherwise."""
    q = as_float_array(rotation_quaternions(x), name, (4,), batch=batch)
    return check_nonzero_quaternions(q, name)


def check_rotation_matrices(R, name, atol=1e-6):
    """Reject matrices that are not orthonormal with determinant +1 (to ``atol``)."""
    with np.errstate(over="ignore", invalid="ignore"):   # huge entries: reported below
        gram = np.einsum("...ki,...kj->...ij", R, R)
        err = np.abs(gram - np.eye(3)).max(axis=(-2, -1)) if R.size else np.zeros(R.shape[:-2])
        det = np.linalg.det(R) if R.size else np.ones(R.shape[:-2])
    err = np.where(np.isnan(err), np.inf, err)
    bad = (err > atol) | (det <= 0)
    if np.any(bad):
        raise ValueError(
            f"`{name}` must hold rotation matrices (orthonormal to {atol:g}, det +1); "
            f"worst |R^T R - 1| = {np.max(err):.3g}, min det = {np.min(det):.3g}"
        )
    return R


def batch_of(arr, ntrailing):
    """Leading (batch) shape of ``arr`` without its last ``ntrailing`` dimensions.

    Compiled modules are built with ``wraparound=False``, so they call this instead of
    slicing shapes with negative indices.
    """
    return tuple(arr.shape[: arr.ndim - ntrailing])


def last_dim(arr):
    """Size of the last dimension of ``arr`` (0-d arrays: None)."""
    return arr.shape[-1] if arr.ndim else None


#: How far the singular values of a matrix may be from 1 for `project_rotations` to accept it
#: as a noisy rotation (10 %: an IMU's or a camera's orientation estimate, not a shear).
PROJECT_TOL = 0.1


def project_rotations(R, name):
    """The nearest rotation matrices (Frobenius norm: ``U V^T`` of the SVD ``R = U S V^T``;
    Higham, *SIAM J. Sci. Stat. Comput.* 7, 1986) of float64 (..., 3, 3) matrices that are
    rotations up to noise; ValueError naming `name` for a reflection (det <= 0) or singular
    values more than `PROJECT_TOL` from 1."""
    R = as_float_array(R, name, (3, 3))
    if not R.size:
        return R
    with np.errstate(over="ignore", invalid="ignore"):   # huge entries: reported below
        U, S, Vt = np.linalg.svd(R)
        P = U @ Vt
        det = np.linalg.det(R)
    bad = (det <= 0) | (np.abs(S - 1.0).max(axis=-1) > PROJECT_TOL)
    if np.any(bad):
        j = int(np.flatnonzero(np.ravel(bad))[0])
        k = tuple(int(i) for i in np.unravel_index(j, np.shape(det)))
        d = float(np.ravel(det)[j])
        sv = S.reshape(-1, 3)[j]
        where = f"`{name}` entry {k}" if k else f"`{name}`"
        raise ValueError(f"{where} is too far from a rotation to project it: "
                         f"determinant {d:.3g}, singular values "
                         f"{[float(f'{x:.3g}') for x in sv]} "
                         f"(a rotation has 1, 1, 1; accepted: within {PROJECT_TOL} of 1, "
                         "determinant > 0)")
    return np.ascontiguousarray(P)


def as_rotation_matrices(R, name):
    """``R`` as a C-contiguous float64 array of rotation matrices, shape (..., 3, 3)."""
    return check_rotation_matrices(as_float_array(R, name, (3, 3)), name)


def as_positive_array(x, name, *, allow_zero=False):
    """``x`` as a float64 array (any shape) of finite values > 0 (or >= 0 with ``allow_zero``)."""
    arr = as_float_array(x, name)
    bad = arr < 0 if allow_zero else arr <= 0
    if np.any(bad):
        bound = ">= 0" if allow_zero else "> 0"
        raise ValueError(f"`{name}` must be {bound}, got {arr[bad].reshape(-1)[0]!r}")
    return arr


def callable_name(function):
    """A short name of a user's callable for a message: a function's qualified name, or the
    class of a callable object (no address)."""
    name = getattr(function, "__qualname__", None)
    if isinstance(name, str):
        return f"`{name}`"
    return f"({type(function).__name__} object)"


def complex_values_error(subject, value, t):
    """The TypeError for a user callable (``subject``, e.g. "the torque callable `f`") that
    returned complex values: rotode refuses them rather than drop their imaginary parts
    (NumPy's cast would, with a ComplexWarning)."""
    arr = np.asarray(value)
    shown = arr.tolist() if arr.size <= 9 else f"of shape {arr.shape}"
    return TypeError(f"{subject} returned complex values {shown} at t = {t!r}; it must return "
                     "real numbers (rotode never drops an imaginary part)")


#: Py_TPFLAGS_HEAPTYPE: set on classes made by a ``class`` statement, not on compiled types.
_HEAPTYPE = 1 << 9


def _compiled_class(cls):
    return "__pyx_vtable__" in vars(cls) or not cls.__flags__ & _HEAPTYPE


def python_override(cls, name):
    """Whether attribute ``name`` of ``cls`` is a Python subclass's own (a ``class`` statement
    defines it) rather than a compiled (Cython) base's: rotode's compiled loops call the base's
    C method, so such an override must be called through Python (or refused) instead."""
    for c in cls.__mro__:
        if name in vars(c):
            value = vars(c)[name]
            return not _compiled_class(c) and not any(
                vars(b).get(name) is value for b in cls.__mro__ if _compiled_class(b))
    return False


def as_callable_vector(value, what, t, function=None):
    """Check what a user callable returned: a finite float64 array of shape (3,).

    ``what`` names the callable in the message (e.g. ``"torque callable"``), ``function`` is
    the callable itself (named in the message about complex values).
    """
    try:
        r = np.asarray(value)
        is_complex = r.dtype.kind == "c"
        if not is_complex:
            r = r.astype(np.float64, copy=False)
    except (TypeError, ValueError, OverflowError):
        raise TypeError(f"the {what} must return a real array of shape (3,), got "
                        f"{_shown(value)} at t = {t!r}") from None
    if is_complex:
        raise complex_values_error(f"the {what} {callable_name(function)}", r, t)
    if r.shape != (3,):
        raise ValueError(f"the {what} must return shape (3,), got {r.shape} at t = {t!r}")
    if not np.isfinite(r).all():
        raise ValueError(f"the {what} returned a non-finite value {r.tolist()} at t = {t!r}")
    return r


def call_vector(function, what, t, *rows):
    """``function(t, *rows)`` with each row (a sequence of floats) passed as a new float64 array,
    its result checked by `as_callable_vector` (``what`` names the function in messages)."""
    arrays = [np.array(row, dtype=np.float64) for row in rows]
    return as_callable_vector(function(t, *arrays), what, t, function)


def as_step_grid(t, save):
    """The time grid and output indices a stepper runner takes (docs/stepper-contract.md).

    ``t``: finite, shape (n + 1,), strictly monotonic (either direction); ``save``: strictly
    increasing indices into ``t``.  Returns C-contiguous float64 ``t`` and intp ``save``.
    """
    t = as_float_array(t, "t")
    if t.ndim != 1 or t.shape[0] < 1:
        raise ValueError(f"`t` must have shape (n + 1,) with n >= 0, got {t.shape}")
    save = np.ascontiguousarray(save, dtype=np.intp)
    if save.ndim == 1 and step_grid_ok(t, save):
        return t, save
    steps = np.diff(t)
    if steps.size and not (np.all(steps > 0) or np.all(steps < 0)):
        raise ValueError("`t` must be strictly monotonic (every step t[i+1] - t[i] nonzero "
                         "and of one sign)")
    raise ValueError(f"`save` must be strictly increasing indices into `t` "
                     f"(0 .. {t.shape[0] - 1}), shape (m,)")


def available_cores():
    """The number of cores this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def as_workers(workers):
    """A thread count: an integer >= 1, or -1 for every available core (as in SciPy).

    More threads than available cores would only add overhead (results never depend on the
    thread count), and thousands of them can exhaust memory: such a request is clamped to the
    number of cores, with a warning.
    """
    if type(workers) is int and workers == 1:      # the default: no need to ask the system
        return 1
    if isinstance(workers, (bool, np.bool_)) or not isinstance(workers, numbers.Integral):
        raise TypeError(f"`workers` must be an integer, got {type(workers).__name__}")
    workers, cores = int(workers), available_cores()
    if workers == -1:
        return cores
    if workers < 1:
        raise ValueError(f"`workers` must be >= 1, or -1 for every core, got {workers}")
    if workers > cores:
        warnings.warn(f"`workers`={workers} is more than the {cores} available cores; "
                      f"using {cores}", RuntimeWarning, stacklevel=3)
        return cores
    return workers
