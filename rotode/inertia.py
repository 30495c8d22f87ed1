"""Inertia tensors of rigid bodies: simple solids, compound bodies and principal axes.

Every tensor is a (..., 3, 3) array in the frame named by the function; leading batch axes
broadcast.  A solid's tensor is about its centre of mass in the solid's own frame (the axis of
symmetry is z); :func:`rotate_inertia` and :func:`parallel_axis` move it into a body frame and
:func:`compound` sums parts into one body (Mandre 2008 sec. 3).  :func:`principal_axes` finds the
frame in which the tensor is diagonal (Mandre 2008 sec. 7.1) and :func:`to_principal_frame` /
:func:`from_principal_frame` move a body state (orientation, body angular velocity, body
torque) into that frame and back.

Conventions: orientations map body to world (``x_world = R x_body``), quaternions are
scalar-first ``[w, x, y, z]`` with the Hamilton product.

References
----------
.. [003] I. Mandre, "Rigid body dynamics using Euler's equations, Runge-Kutta and quaternions"
   (2008; docs/references.md): sec. 3 (inertia tensor, ``I^W = A I A^T`` and the displaced tensor
   ``I + m((r.r)1 - r (x) r)``), sec. 7.1 (principal moments and axes).
.. [list] "List of moments of inertia" (Wikipedia), the table Mandre 2008 sec. 3 points to, for the
   closed forms of the solids.
"""

import functools
from typing import NamedTuple

import numpy as np

from rotode import quaternion as _quat
from rotode._docfill import docfiller
from rotode._validation import (
    as_float_array,
    as_inertia,
    as_positive_array,
    as_quaternions,
    as_symmetric,
    check_nonzero_quaternions,
    check_rotation_matrices,
    eigh_scaled,
    rotation_quaternions,
)

__all__ = [
    "box",
    "solid_cylinder",
    "hollow_cylinder",
    "solid_sphere",
    "hollow_sphere",
    "thin_rod",
    "ellipsoid",
    "cone",
    "rotate_inertia",
    "parallel_axis",
    "compound",
    "MassProperties",
    "principal_axes",
    "to_principal_frame",
    "from_principal_frame",
    "BodyState",
    "validate_inertia",
]


# --------------------------------------------------------------------------------------------
# private helpers
# --------------------------------------------------------------------------------------------

def _broadcast(**arrays):
    """Broadcast named arrays against each other; the error names every argument."""
    try:
        return np.broadcast_arrays(*arrays.values())
    except ValueError:
        shapes = ", ".join(f"`{k}` {np.shape(v)}" for k, v in arrays.items())
        raise ValueError(f"cannot broadcast the batch shapes of {shapes}") from None


def _finite(*names):
    """Decorator: run a tensor formula with overflow warnings off and raise a ValueError naming
    ``names`` if its result is not finite (inputs near the float limit)."""
    def wrap(f):
        @functools.wraps(f)
        def checked(*args, **kwargs):
            with np.errstate(over="ignore", invalid="ignore"):
                out = f(*args, **kwargs)
            parts = out if isinstance(out, tuple) else (out,)
            if not all(np.isfinite(p).all() for p in parts):
                given = " and ".join(f"`{n}`" for n in names)
                raise ValueError(f"{given} are too large: the result of {f.__name__} "
                                 "overflows (is not finite)")
            return out
        return checked
    return wrap


def _diagonal(ixx, iyy, izz):
    """(..., 3, 3) diagonal tensors from broadcastable diagonals."""
    ixx, iyy, izz = np.broadcast_arrays(ixx, iyy, izz)
    out = np.zeros(ixx.shape + (3, 3))
    out[..., 0, 0] = ixx
    out[..., 1, 1] = iyy
    out[..., 2, 2] = izz
    return out


def _positive(**arrays):
    """The named arrays checked positive (each error names its argument) and broadcast."""
    return _broadcast(**{k: as_positive_array(v, k) for k, v in arrays.items()})


def _three_axes(mass, lengths, name, k):
    """``m/k diag(b^2 + c^2, a^2 + c^2, a^2 + b^2)`` of positive ``lengths`` (..., 3) named
    ``name`` (a box: full edges, k = 12; an ellipsoid: semi-axes, k = 5)."""
    m = as_positive_array(mass, "mass")
    s = as_positive_array(as_float_array(lengths, name, (3,)), name)
    m, _ = _broadcast(**{"mass": m, name: s[..., 0]})
    sq = s * s
    return _diagonal(m / k * (sq[..., 1] + sq[..., 2]), m / k * (sq[..., 0] + sq[..., 2]),
                     m / k * (sq[..., 0] + sq[..., 1]))


def _hollow(mass, radius, inner_radius, **more):
    """``mass``, ``inner_radius`` (default: ``radius``, a thin wall), ``radius`` and the
    positive arrays ``more`` checked and broadcast, with ``inner_radius <= radius``."""
    r2 = as_positive_array(radius, "radius")
    r1 = r2 if inner_radius is None else as_positive_array(inner_radius, "inner_radius",
                                                           allow_zero=True)
    m = as_positive_array(mass, "mass")
    out = _broadcast(mass=m, inner_radius=r1, radius=r2,
                     **{k: as_positive_array(v, k) for k, v in more.items()})
    if np.any(out[1] > out[2]):
        raise ValueError("`inner_radius` must be <= `radius`")
    return out


def _inertias(inertia, name):
    return as_float_array(inertia, name, (3, 3))


def _rotation_matrices(rotation, name):
    """Rotation matrices (..., 3, 3) from matrices, nonzero scalar-first quaternions (..., 4)
    or a scipy Rotation."""
    arr = as_float_array(rotation_quaternions(rotation), name)
    if arr.ndim >= 1 and arr.shape[-1] == 4:
        q = check_nonzero_quaternions(arr, name)
        return _quat.to_matrix(q)
    if arr.ndim < 2 or arr.shape[-2:] != (3, 3):
        raise ValueError(f"`{name}` must have shape (..., 3, 3) (matrices) or (..., 4) "
                         f"(quaternions), got {arr.shape}")
    return check_rotation_matrices(arr, name)


# --------------------------------------------------------------------------------------------
# solids about their centre of mass
# --------------------------------------------------------------------------------------------

#: The sections that close every solid's docstring, at its ``%(solid_sections)s`` (`_solid`).
_SOLID_SECTIONS = """
    Returns
    -------
    ndarray, shape (..., 3, 3)
        The tensor about the centre of mass, in the solid's own frame.

    See Also
    --------
    %(see_also)s

    Examples
    --------
    >>> from rotode import inertia
    >>> inertia.%(example)s
    %(shows)s
"""


def _solid(see_also, example, shows):
    """Decorator: fill the ``%(solid_sections)s`` of a solid's docstring (`_SOLID_SECTIONS`)
    with its See Also names, its example call ``inertia.<example>`` and what that shows."""
    return docfiller({"solid_sections": _SOLID_SECTIONS}, see_also=see_also, example=example,
                     shows=shows)


@_finite("mass", "size")
@_solid("solid_cylinder, ellipsoid, compound", "box(12.0, [1.0, 2.0, 3.0]).diagonal()",
        "array([13., 10.,  5.])")
def box(mass, size):
    """Inertia tensor of a solid cuboid about its centre, edges along the axes.

    ``m/12 diag(b^2 + c^2, a^2 + c^2, a^2 + b^2)`` (Mandre 2008 sec. 3 and the table it cites,
    [list]).

    Parameters
    ----------
    mass : array_like, shape (...)
        Mass, > 0.
    size : array_like, shape (..., 3)
        Full edge lengths ``(a, b, c)`` along x, y, z, > 0.

    %(solid_sections)s
    """
    return _three_axes(mass, size, "size", 12)


@_finite("mass", "radius", "height")
@_solid("hollow_cylinder, cone",
        "solid_cylinder(2.0, radius=0.5, height=1.0).diagonal().round(8)",
        "array([0.29166667, 0.29166667, 0.25      ])")
def solid_cylinder(mass, radius, height):
    """Inertia tensor of a solid circular cylinder about its centre, axis along z.

    ``I_xx = I_yy = m (3 r^2 + h^2) / 12`` and ``I_zz = m r^2 / 2`` (Mandre 2008 sec. 3, [list]).

    Parameters
    ----------
    mass, radius, height : array_like, shape (...)
        Positive and broadcastable.

    %(solid_sections)s
    """
    m, r, h = _positive(mass=mass, radius=radius, height=height)
    side = m * (3 * r * r + h * h) / 12
    return _diagonal(side, side, m * r * r / 2)


@_finite("mass", "radius", "height")
@_solid("solid_cylinder",
        "hollow_cylinder(2.0, radius=0.5, height=1.0).diagonal().round(8)  # thin wall",
        "array([0.41666667, 0.41666667, 0.5       ])")
def hollow_cylinder(mass, radius, height, inner_radius=None):
    """Inertia tensor of a tube (thick-walled cylinder) about its centre, axis along z.

    With inner radius ``r1`` and outer radius ``r2``:
    ``I_xx = I_yy = m (3 (r1^2 + r2^2) + h^2) / 12`` and ``I_zz = m (r1^2 + r2^2) / 2``
    (Mandre 2008 sec. 3, [list]).

    Parameters
    ----------
    mass, radius, height : array_like, shape (...)
        Mass, outer radius and height, all > 0.
    inner_radius : array_like, shape (...), optional
        Inner radius with ``0 <= inner_radius <= radius``.  The default (``None``) is a thin
        wall, ``inner_radius = radius``: ``I_zz = m r^2``.

    %(solid_sections)s
    """
    m, r1, r2, h = _hollow(mass, radius, inner_radius, height=height)
    rr = r1 * r1 + r2 * r2
    side = m * (3 * rr + h * h) / 12
    return _diagonal(side, side, m * rr / 2)


@_finite("mass", "radius")
@_solid("hollow_sphere, ellipsoid", "solid_sphere(5.0, radius=1.0).diagonal()",
        "array([2., 2., 2.])")
def solid_sphere(mass, radius):
    """Inertia tensor ``(2/5) m r^2 1`` of a solid ball about its centre (Mandre 2008 sec. 3).

    Parameters
    ----------
    mass, radius : array_like, shape (...)
        Positive and broadcastable.

    %(solid_sections)s
    """
    m, r = _positive(mass=mass, radius=radius)
    i = 0.4 * m * r * r
    return _diagonal(i, i, i)


@_finite("mass", "radius")
@_solid("solid_sphere",
        "hollow_sphere(3.0, radius=1.0).diagonal()     # thin shell: (2/3) m r^2",
        "array([2., 2., 2.])")
def hollow_sphere(mass, radius, inner_radius=None):
    """Inertia tensor of a spherical shell about its centre.

    A thick shell with radii ``r1 <= r2`` has
    ``I = (2/5) m (r2^5 - r1^5) / (r2^3 - r1^3)``, evaluated in the factored form
    ``(2/5) m (r2^4 + r2^3 r1 + r2^2 r1^2 + r2 r1^3 + r1^4) / (r2^2 + r2 r1 + r1^2)``, which
    has no cancellation and tends to the thin-shell value ``(2/3) m r^2`` as ``r1 -> r2``
    (Mandre 2008 sec. 3, [list]).

    Parameters
    ----------
    mass, radius : array_like, shape (...)
        Mass and outer radius, > 0.
    inner_radius : array_like, shape (...), optional
        ``0 <= inner_radius <= radius``; the default (``None``) is a thin shell.

    %(solid_sections)s
    """
    m, r1, r2 = _hollow(mass, radius, inner_radius)
    num = r2**4 + r2**3 * r1 + r2**2 * r1**2 + r2 * r1**3 + r1**4
    i = 0.4 * m * num / (r2 * r2 + r2 * r1 + r1 * r1)
    return _diagonal(i, i, i)


@_finite("mass", "length")
@_solid("compound, parallel_axis", "thin_rod(12.0, length=1.0).diagonal()",
        "array([1., 1., 0.])")
def thin_rod(mass, length):
    """Inertia tensor ``diag(m L^2/12, m L^2/12, 0)`` of a thin rod along z about its centre.

    The tensor is singular (positive semi-definite): a rod on its own is not a valid rigid
    body for Euler's equations, but it is a valid part of a :func:`compound` body.

    Parameters
    ----------
    mass, length : array_like, shape (...)
        Positive and broadcastable.

    %(solid_sections)s
    """
    m, L = _positive(mass=mass, length=length)
    i = m * L * L / 12
    return _diagonal(i, i, np.zeros_like(i))


@_finite("mass", "semi_axes")
@_solid("solid_sphere, box", "ellipsoid(5.0, [1.0, 2.0, 3.0]).diagonal()",
        "array([13., 10.,  5.])")
def ellipsoid(mass, semi_axes):
    """Inertia tensor of a solid ellipsoid about its centre, semi-axes along x, y, z.

    ``m/5 diag(b^2 + c^2, a^2 + c^2, a^2 + b^2)`` (Mandre 2008 sec. 3, [list]).

    Parameters
    ----------
    mass : array_like, shape (...)
        Mass, > 0.
    semi_axes : array_like, shape (..., 3)
        Semi-axes ``(a, b, c)``, > 0.

    %(solid_sections)s
    """
    return _three_axes(mass, semi_axes, "semi_axes", 5)


@_finite("mass", "radius", "height")
@_solid("solid_cylinder", "cone(10.0, radius=1.0, height=4.0).diagonal()",
        "array([7.5, 7.5, 3. ])")
def cone(mass, radius, height):
    """Inertia tensor of a solid right circular cone about its centre of mass, axis along z.

    The centre of mass lies on the axis a quarter of the height above the base, so in this
    frame the base is at ``z = -h/4`` and the apex at ``z = 3h/4``.
    ``I_xx = I_yy = m (3 r^2 / 20 + 3 h^2 / 80)`` and ``I_zz = 3 m r^2 / 10``
    (Mandre 2008 sec. 3, [list]).

    Parameters
    ----------
    mass, radius, height : array_like, shape (...)
        Mass, base radius and height, all > 0.

    %(solid_sections)s
    """
    m, r, h = _positive(mass=mass, radius=radius, height=height)
    side = m * (3 * r * r / 20 + 3 * h * h / 80)
    return _diagonal(side, side, 0.3 * m * r * r)

# --------------------------------------------------------------------------------------------
# moving tensors between frames and summing parts
# --------------------------------------------------------------------------------------------

@_finite("inertia")
def rotate_inertia(inertia, rotation):
    """Express a tensor in a rotated frame: ``A I A^T`` (Mandre 2008 sec. 3, ``I^W = A I A^T``).

    Parameters
    ----------
    inertia : array_like, shape (..., 3, 3)
        Tensor in the part's (or body's) own frame.
    rotation : array_like, shape (..., 3, 3) or (..., 4), or Rotation
        Rotation matrix ``A``, nonzero scalar-first quaternion or
        ``scipy.spatial.transform.Rotation`` mapping the part's frame to the target frame (body
        to world for ``I^W``).

    Returns
    -------
    ndarray, shape (..., 3, 3)
        The same tensor in the target frame, about the same point.

    See Also
    --------
    parallel_axis, compound

    Examples
    --------
    A quarter turn about z swaps the x and y moments:

    >>> import numpy as np
    >>> from rotode import inertia
    >>> quarter_z = [np.cos(np.pi / 4), 0.0, 0.0, np.sin(np.pi / 4)]
    >>> inertia.rotate_inertia(np.diag([1.0, 2.0, 3.0]), quarter_z).diagonal().round(12)
    array([2., 1., 3.])
    """
    i = _inertias(inertia, "inertia")
    A = _rotation_matrices(rotation, "rotation")
    return np.einsum("...ij,...jk,...lk->...il", A, i, A)


@_finite("inertia", "mass", "offset")
def parallel_axis(inertia, mass, offset):
    """Displace a centre-of-mass tensor to another point (parallel-axis theorem).

    ``I_displaced = I_center + m ((r . r) 1 - r (x) r)`` (Mandre 2008 sec. 3), where ``r`` is the
    vector from the new reference point to the part's centre of mass, in the tensor's frame.

    Parameters
    ----------
    inertia : array_like, shape (..., 3, 3)
        Tensor about the part's centre of mass.
    mass : array_like, shape (...)
        Mass of the part, > 0.
    offset : array_like, shape (..., 3)
        ``r``: position of the part's centre of mass relative to the new reference point.

    Returns
    -------
    ndarray, shape (..., 3, 3)
        Tensor about the new reference point.

    See Also
    --------
    rotate_inertia, compound

    Examples
    --------
    A rod about one of its ends:

    >>> from rotode import inertia
    >>> rod = inertia.thin_rod(12.0, length=1.0)
    >>> inertia.parallel_axis(rod, 12.0, [0.0, 0.0, 0.5]).diagonal()    # m L^2 / 3
    array([4., 4., 0.])
    """
    i = _inertias(inertia, "inertia")
    m = as_positive_array(mass, "mass")
    r = as_float_array(offset, "offset", (3,))
    rr = np.einsum("...i,...i->...", r, r)
    shift = rr[..., None, None] * np.eye(3) - r[..., :, None] * r[..., None, :]
    i, m, shift = _broadcast(inertia=i, mass=m[..., None, None], offset=shift)
    return i + m * shift


class MassProperties(NamedTuple):
    """Mass, centre of mass and inertia tensor about the centre of mass of a body.

    A named tuple, what :func:`compound` returns.

    Parameters
    ----------
    mass : ndarray, shape (...)
        Total mass.
    center_of_mass : ndarray, shape (..., 3)
        In the body frame of the parts' positions.
    inertia : ndarray, shape (..., 3, 3)
        Tensor about the centre of mass, in that frame.

    See Also
    --------
    compound

    Examples
    --------
    >>> from rotode import inertia
    >>> dumbbell = inertia.compound([1.0, 1.0], [inertia.solid_sphere(1.0, 0.1)] * 2,
    ...                             positions=[[-1.0, 0.0, 0.0], [1.0, 0.0, 0.0]])
    >>> float(dumbbell.mass), dumbbell.center_of_mass, dumbbell.inertia.diagonal()
    (2.0, array([0., 0., 0.]), array([0.008, 2.008, 2.008]))
    """

    mass: np.ndarray
    center_of_mass: np.ndarray
    inertia: np.ndarray


@_finite("masses", "inertias", "positions")
def compound(masses, inertias, positions=None, rotations=None):
    """Mass properties of a body made of parts (Mandre 2008 sec. 3, sum over parts).

    ``I = sum_i [A_i I_i A_i^T + m_i ((r_i . r_i) 1 - r_i (x) r_i)]`` with ``r_i = p_i - c``
    the vector from the body's centre of mass ``c = sum m_i p_i / sum m_i`` to part ``i``'s.

    Parameters
    ----------
    masses : array_like, shape (..., k)
        Masses of the ``k`` parts, > 0.
    inertias : array_like, shape (..., k, 3, 3)
        Each part's tensor about its own centre of mass in its own frame (e.g. from
        :func:`box`).
    positions : array_like, shape (..., k, 3), optional
        Centres of mass of the parts in the body frame; default: all at the origin.
    rotations : array_like, shape (..., k, 3, 3) or (..., k, 4), optional
        Orientation of each part in the body frame (part to body); default: identity.

    Returns
    -------
    MassProperties
        ``mass`` (...), ``center_of_mass`` (..., 3) in the body frame, and ``inertia``
        (..., 3, 3) about the centre of mass in the body frame's axes.

    See Also
    --------
    MassProperties, parallel_axis, rotate_inertia

    Examples
    --------
    A dumbbell: two balls on the ends of a rod along x.

    >>> import numpy as np
    >>> from rotode import inertia as ri
    >>> R = [[0, 0, 1], [0, 1, 0], [-1, 0, 0]]   # rod axis z -> x
    >>> body = ri.compound(
    ...     [1.0, 1.0, 2.0],
    ...     [ri.solid_sphere(1.0, 0.1), ri.solid_sphere(1.0, 0.1), ri.thin_rod(2.0, 1.0)],
    ...     positions=[[-0.5, 0, 0], [0.5, 0, 0], [0, 0, 0]],
    ...     rotations=[np.eye(3), np.eye(3), R])
    >>> float(body.mass), body.center_of_mass.tolist()
    (4.0, [0.0, 0.0, 0.0])
    >>> np.round(body.inertia.diagonal(), 6).tolist()
    [0.008, 0.674667, 0.674667]
    """
    m = as_positive_array(masses, "masses")
    if m.ndim < 1 or m.shape[-1] == 0:
        raise ValueError(f"`masses` must have shape (..., k) with k >= 1 parts, got {m.shape}")
    k = m.shape[-1]
    i = as_float_array(inertias, "inertias")
    if i.ndim < 3 or i.shape[-3:] != (k, 3, 3):
        raise ValueError(f"`inertias` must have shape (..., {k}, 3, 3), one tensor per part of "
                         f"`masses` (k = {k}), got {i.shape}")
    if rotations is not None:
        A = _rotation_matrices(rotations, "rotations")
        if A.shape[-3:-2] != (k,):
            raise ValueError(f"`rotations` must have shape (..., {k}, 3, 3) or (..., {k}, 4), "
                             f"got {np.shape(rotations)}")
        i = np.einsum("...ij,...jk,...lk->...il", A, i, A)
    p = (np.zeros((k, 3)) if positions is None
         else as_float_array(positions, "positions", (k, 3)))
    # the parts axis and the batch axes of the three arrays must broadcast together
    m, p_, _ = _broadcast(masses=m[..., None], positions=p, inertias=i[..., 0])
    m = m[..., 0]
    total = m.sum(axis=-1)
    c = np.einsum("...k,...ki->...i", m, p_) / total[..., None]
    r = p_ - c[..., None, :]
    rr = np.einsum("...ki,...ki->...k", r, r)
    shift = rr[..., None, None] * np.eye(3) - r[..., :, None] * r[..., None, :]
    return MassProperties(total, c, (i + m[..., None, None] * shift).sum(axis=-3))


# --------------------------------------------------------------------------------------------
# validation and principal axes
# --------------------------------------------------------------------------------------------

def validate_inertia(inertia, name="inertia"):
    """Check that tensors are physically valid inertia tensors and return them.

    A valid tensor is symmetric (to a relative 1e-10), positive definite, and its principal
    moments ``I1 <= I2 <= I3`` satisfy the triangle inequality ``I1 + I2 >= I3`` (up to a
    relative 1e-10; equality is a flat lamina).  The triangle inequality holds for every mass
    distribution because ``I_xx + I_yy - I_zz = 2 int z^2 dm >= 0`` in the principal frame
    (Mandre 2008 secs. 3 and 7.1).

    Parameters
    ----------
    inertia : array_like, shape (..., 3, 3)
    name : str, optional
        Argument name used in error messages (default "inertia").

    Returns
    -------
    ndarray, shape (..., 3, 3)
        The tensors as float64, exactly symmetrised.

    Raises
    ------
    ValueError
        Naming the argument and the failed condition (shape, finiteness, symmetry, positive
        definiteness, triangle inequality).

    See Also
    --------
    principal_axes, rotode.rhs.check_inertia

    Examples
    --------
    >>> import numpy as np
    >>> from rotode import inertia
    >>> inertia.validate_inertia(np.diag([2.0, 2.0, 3.0])).diagonal()
    array([2., 2., 3.])
    >>> inertia.validate_inertia(np.diag([1.0, 1.0, 3.0]))
    Traceback (most recent call last):
        ...
    ValueError: `inertia` violates the triangle inequality I1 + I2 >= I3 ...
    """
    return as_inertia(inertia, name, moments=False)


def principal_axes(inertia):
    """Principal moments and right-handed principal axes of symmetric tensors (Mandre 2008 7.1).

    Solves ``(I - I_k 1) n_k = 0`` with ``|n_k| = 1`` and ``n1 x n2 = n3``.  Mandre's (2008) direct
    route (roots of the characteristic cubic, then one linear solve per root) loses all
    accuracy when two moments are (nearly) equal; a symmetric eigensolver
    (``numpy.linalg.eigh``) returns an orthonormal basis of every eigenspace instead, so the
    result is stable for repeated moments.  Signs are then fixed so that ``B[k, k] >= 0`` where
    possible (a diagonal tensor with sorted moments gives the identity), and the axis with the
    smallest ``|B[k, k]|`` is negated if needed to make ``det B = +1``.

    Parameters
    ----------
    inertia : array_like, shape (..., 3, 3)
        Symmetric tensors (positive definiteness is not required; use
        :func:`validate_inertia` for that).

    Returns
    -------
    moments : ndarray, shape (..., 3)
        Principal moments ``I1 <= I2 <= I3``.
    axes : ndarray, shape (..., 3, 3)
        ``B`` whose columns are the principal axes ``n1, n2, n3`` in the original frame:
        ``I = B diag(moments) B^T``, ``B^T B = 1``, ``det B = +1``.  ``B`` maps principal-frame
        coordinates to the original frame (Mandre 2008 sec. 7.1).

    See Also
    --------
    to_principal_frame, validate_inertia

    Examples
    --------
    >>> import numpy as np
    >>> from rotode.inertia import principal_axes
    >>> moments, B = principal_axes([[2.0, 1.0, 0.0], [1.0, 2.0, 0.0], [0.0, 0.0, 5.0]])
    >>> moments.tolist()
    [1.0, 3.0, 5.0]
    >>> bool(np.isclose(np.linalg.det(B), 1.0))
    True
    """
    i = as_symmetric(as_float_array(inertia, "inertia", (3, 3)), "inertia")
    moments, B = eigh_scaled(i)
    diag = np.diagonal(B, axis1=-2, axis2=-1)
    B = B * np.where(diag < 0, -1.0, 1.0)[..., None, :]
    det = np.linalg.det(B) if B.size else np.ones(B.shape[:-2])
    weakest = np.argmin(np.abs(np.diagonal(B, axis1=-2, axis2=-1)), axis=-1)
    flip = np.where((det < 0)[..., None] & (np.arange(3) == weakest[..., None]), -1.0, 1.0)
    return moments, B * flip[..., None, :]


class BodyState(NamedTuple):
    """Orientation (body to world quaternion), body angular velocity and body torque.

    A named tuple, what :func:`to_principal_frame` and :func:`from_principal_frame` return;
    entries not given to the conversion are ``None``.

    Parameters
    ----------
    orientation : ndarray, shape (..., 4), or None
        Body-to-world quaternions (scalar first).
    angular_velocity : ndarray, shape (..., 3), or None
        Body angular velocity.
    torque : ndarray, shape (..., 3), or None
        Body torque.

    See Also
    --------
    to_principal_frame, from_principal_frame

    Examples
    --------
    >>> from rotode.inertia import BodyState
    >>> BodyState([1.0, 0.0, 0.0, 0.0], None, None).angular_velocity is None
    True
    """

    orientation: np.ndarray | None
    angular_velocity: np.ndarray | None
    torque: np.ndarray | None


def _axes(axes):
    B = as_float_array(axes, "axes", (3, 3))
    return check_rotation_matrices(B, "axes")


def _body_vectors(x, name):
    return None if x is None else as_float_array(x, name, (3,))


def _state_parts(axes, orientation, angular_velocity, torque):
    """``B``, ``q``, ``w``, ``tau`` checked, their batch shapes broadcasting together."""
    B = _axes(axes)
    q = None
    if orientation is not None:
        q = as_quaternions(orientation, "orientation")
    w = _body_vectors(angular_velocity, "angular_velocity")
    t = _body_vectors(torque, "torque")
    batches = {"axes": B.shape[:-2]}
    for name, x in (("orientation", q), ("angular_velocity", w), ("torque", t)):
        if x is not None:
            batches[name] = x.shape[:-1]
    try:
        np.broadcast_shapes(*batches.values())
    except ValueError:
        shapes = ", ".join(f"`{k}` {v}" for k, v in batches.items())
        raise ValueError(f"cannot broadcast the batch shapes of {shapes}") from None
    return B, q, w, t


def _moved(axes, orientation, angular_velocity, torque, inverse):
    """The body state in the principal frame of ``axes`` ``B`` (``q * q_B``, ``B^T x``) or,
    ``inverse``, back from it (``q * conj(q_B)``, ``B x``)."""
    B, q, w, t = _state_parts(axes, orientation, angular_velocity, torque)
    if q is not None:
        q_B = _quat.from_matrix(B)
        q = _quat.multiply(q, _quat.conjugate(q_B) if inverse else q_B)
    rows = "...ij,...j->...i" if inverse else "...ji,...j->...i"
    return BodyState(q,
                     None if w is None else np.einsum(rows, B, w),
                     None if t is None else np.einsum(rows, B, t))


def to_principal_frame(axes, orientation=None, angular_velocity=None, torque=None):
    """Move a body state into the principal frame found by :func:`principal_axes`.

    With ``B`` the principal axes (columns in the old body frame), a body point
    ``x = B x'``, so ``omega' = B^T omega``, ``tau' = B^T tau`` and, since the orientation
    maps body to world, ``A' = A B`` and ``q' = q * q_B`` (Hamilton product) with
    ``q_B`` the quaternion of ``B``.

    Mandre 2008 sec. 7.1 writes ``A' = B A`` and ``q' = matrix2quatern(B) * q``; that is the
    rule for an orientation that maps world to body.  Under rotode's body-to-world convention
    the factor goes on the right, which keeps world positions and world angular velocity
    unchanged (tested).

    Parameters
    ----------
    axes : array_like, shape (..., 3, 3)
        Principal axes ``B`` (det +1), e.g. the second output of :func:`principal_axes`.
    orientation : array_like, shape (..., 4), or Rotation, optional
        Body-to-world unit quaternions (scalar first) or a ``scipy.spatial.transform.Rotation``
        in the old body frame.
    angular_velocity : array_like, shape (..., 3), optional
        Angular velocity in the old body frame.
    torque : array_like, shape (..., 3), optional
        Torque in the old body frame.

    Returns
    -------
    BodyState
        The given quantities in the principal frame (``None`` where not given).

    See Also
    --------
    principal_axes, from_principal_frame

    Examples
    --------
    >>> import numpy as np
    >>> from rotode import inertia
    >>> moments, B = inertia.principal_axes(np.diag([3.0, 1.0, 2.0]))
    >>> state = inertia.to_principal_frame(B, orientation=[1.0, 0.0, 0.0, 0.0],
    ...                                    angular_velocity=[1.0, 0.0, 0.0])
    >>> moments, state.orientation, state.angular_velocity
    (array([1., 2., 3.]), array([0.5, 0.5, 0.5, 0.5]), array([0., 0., 1.]))
    """
    return _moved(axes, orientation, angular_velocity, torque, inverse=False)


def from_principal_frame(axes, orientation=None, angular_velocity=None, torque=None):
    """Inverse of :func:`to_principal_frame`: ``q = q' * conj(q_B)``, ``omega = B omega'``.

    Parameters
    ----------
    axes : array_like, shape (..., 3, 3)
        Principal axes ``B`` (det +1).
    orientation : array_like, shape (..., 4), optional
        Body-to-world quaternions of the principal frame.
    angular_velocity, torque : array_like, shape (..., 3), optional
        In the principal frame.

    Returns
    -------
    BodyState
        The given quantities in the original body frame (Mandre 2008 sec. 7.1).

    See Also
    --------
    to_principal_frame

    Examples
    --------
    >>> import numpy as np
    >>> from rotode import inertia
    >>> _, B = inertia.principal_axes(np.diag([3.0, 1.0, 2.0]))
    >>> state = inertia.to_principal_frame(B, [1.0, 0.0, 0.0, 0.0], [1.0, 0.0, 0.0])
    >>> back = inertia.from_principal_frame(B, *state)
    >>> back.orientation, back.angular_velocity, back.torque
    (array([1., 0., 0., 0.]), array([1., 0., 0.]), None)
    """
    return _moved(axes, orientation, angular_velocity, torque, inverse=True)


def __dir__():
    """The public names, ``__all__`` (not the imported helpers)."""
    return list(__all__)
