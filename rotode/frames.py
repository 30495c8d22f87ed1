"""Transform hierarchies with velocities and accelerations, in n dimensions.

A :class:`Transform` ``A = (T, R, S)`` maps child coordinates to parent coordinates,
``A(x) = R S x + T``, with ``R`` in SO(n) and a scale ``S > 0``; its linear part is
``J = R S``.  A :class:`DynamicTransform` adds the motion of the child relative to the parent:
``v = dT/dt``, ``a = dv/dt``, the angular velocity ``omega`` defined by
``dR/dt = omega R`` and the angular acceleration ``alpha = d omega/dt``.  ``omega`` and
``alpha`` are skew-symmetric n x n matrices *in the parent basis* (the "spatial" angular
velocity of the child relative to the parent); in 3-D they are given and returned as vectors
(``omega x y = omega_matrix @ y``), in 2-D as scalars (``[[0, -w], [w, 0]]``).

Composition ``A3 = A2 @ A1`` (``A1`` is applied first) puts a child ``A1`` under a parent
``A2``; with the dynamics this converts local (relative to the parent) to global (relative to
the world) velocities and accelerations, and :func:`global_to_local` goes back.  The same
algebra converts instantaneous changes (impulses), gives the inertial accelerations
(centrifugal, Coriolis, Euler) seen in a moving frame, and drives the right-hand sides
:class:`MovingFrameParticle` and :class:`MovingFrameRigidBody` for ``solve_ivp``.

Every object may carry leading batch axes (arrays of transforms); all operations broadcast
them without Python loops.  Objects are immutable.

References
----------
.. [001] "The Dynamics of a Transform Hierarchy", web article (docs/references.md):
   transforms, composition,
   inverse and identity; dynamics of the composition, inverse and identity; local and global
   dynamics; local and global deltas; counteracting the inherited effect from the parent;
   Newtonian mechanics (inertial forces in n-D, 3-D and 2-D).
"""

import functools
from typing import NamedTuple

import numpy as np

from rotode import quaternion as _quat
from rotode._docfill import docfiller
from rotode._validation import (
    as_bool,
    as_choice,
    as_float_array,
    as_int,
    as_positive_array,
    as_positive_scalar,
    as_real,
    check_nonzero_quaternions,
    complex_values_error,
    rotation_quaternions,
)

__all__ = [
    "Transform",
    "DynamicTransform",
    "Delta",
    "InertialAccelerations",
    "planar_rotation",
    "local_to_global",
    "global_to_local",
    "chain_local_to_global",
    "chain_global_to_local",
    "inherited_delta",
    "cancel_inherited",
    "inertial_accelerations",
    "local_acceleration",
    "MovingFrameParticle",
    "MovingFrameRigidBody",
]

# Rotation matrices must be orthonormal to this (same tolerance as the quaternion facade).
_ROTATION_ATOL = 1e-6
# Skew-symmetry tolerance relative to the largest entry: far above round-off of products of a
# few rotations, far below a real symmetric part.
_SKEW_RTOL = 1e-9


# --------------------------------------------------------------------------------------------
# small array helpers (batched linear algebra on trailing axes)
# --------------------------------------------------------------------------------------------

def _mv(M, x):
    """Batched matrix-vector product ``M x`` with broadcasting of the batch axes."""
    return np.matmul(M, x[..., None])[..., 0]


def _mT(M):
    return np.swapaxes(M, -1, -2)


def _comm(a, b):
    """Matrix commutator (the Lie bracket of so(n)): ``[a, b] = a b - b a``."""
    return a @ b - b @ a


def _batch_shape(name_shapes):
    try:
        return np.broadcast_shapes(*(s for _, s in name_shapes))
    except ValueError:
        shapes = ", ".join(f"`{k}` {s}" for k, s in name_shapes)
        raise ValueError(f"batch shapes do not broadcast: {shapes}") from None


def _batch_index(index, shape):
    """An index into the batch axes only: the Ellipsis is spelled out so that the trailing
    (coordinate) axes can be appended safely."""
    index = index if isinstance(index, tuple) else (index,)
    for i in index:
        ok = (i is None or i is Ellipsis or isinstance(i, slice)
              or (isinstance(i, (int, np.integer)) and not isinstance(i, (bool, np.bool_)))
              or (isinstance(i, np.ndarray) and i.dtype.kind in "iub"))
        if not ok:
            raise TypeError("a batch index must be an integer, a slice, an ellipsis, None or an "
                            f"integer or boolean array, got {type(i).__name__}")
    used = sum(i is not None and i is not Ellipsis for i in index)
    if used > len(shape):
        raise IndexError(f"too many indices for a batch of shape {shape}")
    ellipses = [k for k, i in enumerate(index) if i is Ellipsis]
    if len(ellipses) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    if ellipses:
        k = ellipses[0]
        return index[:k] + (slice(None),) * (len(shape) - used) + index[k + 1:]
    return index + (slice(None),) * (len(shape) - used)


def _take(array, index, shape):
    """``array[index]`` with an IndexError that names the batch shape."""
    try:
        return array[index]
    except IndexError:
        raise IndexError(f"index out of range for a batch of shape {shape}") from None


def _dim_and_shape(dim, shape):
    """``identity``'s dimension (an integer >= 1) and batch shape (integers >= 0), checked."""
    dim = as_int(dim, "dim", 1)
    if isinstance(shape, (int, np.integer)) and not isinstance(shape, (bool, np.bool_)):
        shape = (shape,)
    if not isinstance(shape, (tuple, list)):
        raise TypeError(f"`shape` must be a tuple of integers, got {type(shape).__name__}")
    shape = tuple(as_int(s, "shape", 0) for s in shape)
    size = (dim + 1) * dim
    for s in shape:
        size *= s
    if size > 2 ** 31:
        raise ValueError(f"`dim` = {dim if dim < 10 ** 9 else 'huge'} and `shape` give more "
                         "than 2**31 entries: too large")
    return dim, shape


def _check_rotations(R, name):
    """Reject matrices that are not in SO(n) to ``_ROTATION_ATOL``."""
    n = R.shape[-1]
    if not R.size:
        return R
    with np.errstate(over="ignore", invalid="ignore"):   # huge entries: reported below
        err = np.abs(R @ _mT(R) - np.eye(n)).max(axis=(-2, -1))
        det = np.linalg.det(R)
    err = np.where(np.isnan(err), np.inf, err)
    bad = (err > _ROTATION_ATOL) | (det <= 0)
    if np.any(bad):
        raise ValueError(
            f"`{name}` must hold rotation matrices (orthonormal to {_ROTATION_ATOL:g}, det +1); "
            f"worst |R R^T - 1| = {np.max(err):.3g}, min det = {np.min(det):.3g}")
    return R


def _hat3(w):
    z = np.zeros(w.shape[:-1])
    x, y, zz = w[..., 0], w[..., 1], w[..., 2]
    return np.stack([np.stack([z, -zz, y], -1), np.stack([zz, z, -x], -1),
                     np.stack([-y, x, z], -1)], -2)


def _hat2(w):
    z = np.zeros_like(w)
    return np.stack([np.stack([z, -w], -1), np.stack([w, z], -1)], -2)


def _skew(x, n, name, skew):
    """Angular quantity -> (..., n, n) skew matrix; ``None`` -> zero matrix of shape (n, n).

    Natural forms: a scalar (...) in 2-D, a vector (..., 3) in 3-D, a matrix otherwise or
    when ``skew`` is true.
    """
    skew = as_bool(skew, "skew")
    if x is None:
        return np.zeros((n, n))
    if not skew and n == 2:
        w = as_float_array(x, name)
        return _hat2(w)
    if not skew and n == 3:
        return _hat3(as_float_array(x, name, (3,)))
    W = as_float_array(x, name, (n, n))
    if W.size:
        scale = np.abs(W).max()
        with np.errstate(over="ignore"):
            asym = np.abs(W + _mT(W)).max()
        if asym > _SKEW_RTOL * scale:
            raise ValueError(f"`{name}` must hold skew-symmetric {n} x {n} matrices; "
                             f"max |W + W^T| = {asym:.3g}")
    return 0.5 * (W - _mT(W))


def _natural(W):
    """Inverse of :func:`_skew`: scalar in 2-D, vector in 3-D, the matrix otherwise."""
    n = W.shape[-1]
    if n == 2:
        return W[..., 1, 0].copy()
    if n == 3:
        return np.stack([W[..., 2, 1], W[..., 0, 2], W[..., 1, 0]], -1)
    return np.array(W)


def _vector(x, n, name):
    if x is None:
        return np.zeros(n)
    return as_float_array(x, name, (n,))


def planar_rotation(angle):
    """2-D rotation matrices ``[[cos, -sin], [sin, cos]]`` of angles.

    Parameters
    ----------
    angle : array_like, shape (...)
        Angles in radians (counter-clockwise).

    Returns
    -------
    ndarray, shape (..., 2, 2)

    See Also
    --------
    Transform

    Examples
    --------
    >>> import numpy as np
    >>> from rotode.frames import planar_rotation
    >>> planar_rotation(np.pi / 2).round(12) + 0.0
    array([[ 0., -1.],
           [ 1.,  0.]])
    """
    th = as_float_array(angle, "angle")
    c, s = np.cos(th), np.sin(th)
    return np.stack([np.stack([c, -s], -1), np.stack([s, c], -1)], -2)


# --------------------------------------------------------------------------------------------
# Transform
# --------------------------------------------------------------------------------------------

class Transform:
    """Similarity transform ``x -> R S x + T`` from child to parent coordinates ([DTH]).

    Parameters
    ----------
    translation : array_like, shape (..., n)
        ``T``, the child's origin in parent coordinates; fixes the dimension ``n``.
    rotation : array_like, shape (..., n, n) or, for n = 3, (..., 4), or Rotation, optional
        ``R`` in SO(n) (orthonormal to 1e-6, det +1), or in 3-D a nonzero scalar-first
        quaternion ``[w, x, y, z]`` (normalised) or a ``scipy.spatial.transform.Rotation``
        (SciPy's ``as_quat()`` is scalar LAST: pass the Rotation itself, or
        ``as_quat(scalar_first=True)``).  Default: identity.
    scale : array_like, shape (...), optional
        ``S > 0``, one factor for all axes (a per-axis scale does not survive composition,
        [DTH] "Composition of Transforms").  Default 1.

    See Also
    --------
    DynamicTransform, planar_rotation

    Notes
    -----
    Group structure ([DTH]): ``(T2, R2, S2) o (T1, R1, S1) = (R2 S2 T1 + T2, R2 R1, S2 S1)``,
    identity ``(0, 1, 1)``, inverse ``(-R^T T / S, R^T, 1 / S)``.  Leading batch axes of the
    three components broadcast; the transform's ``shape`` is the broadcast batch shape.

    Examples
    --------
    >>> import numpy as np
    >>> from rotode.frames import Transform, planar_rotation
    >>> turret = Transform([0.0, 1.0], planar_rotation(np.pi / 2))
    >>> tank = Transform([10.0, 0.0], scale=2.0)
    >>> (tank @ turret).apply([1.0, 0.0]).round(12).tolist()
    [10.0, 4.0]
    >>> (tank @ tank.inverse()).translation.tolist()
    [0.0, 0.0]
    """

    __slots__ = ("_T", "_R", "_S")
    __array_ufunc__ = None  # make ``ndarray @ Transform`` defer to us (and fail clearly)

    def __init__(self, translation, rotation=None, scale=1.0):
        T = as_float_array(translation, "translation")
        if T.ndim < 1 or np.ndim(translation) < 1 or T.shape[-1] < 1:
            raise ValueError(f"`translation` must have shape (..., n), got {np.shape(translation)}")
        n = T.shape[-1]
        if rotation is None:
            R = np.eye(n)
        else:
            R = as_float_array(rotation_quaternions(rotation), "rotation")
            if n == 3 and R.shape[-1:] == (4,):
                R = _quat.to_matrix(check_nonzero_quaternions(R, "rotation"))
            elif R.ndim < 2 or R.shape[-2:] != (n, n):
                also = " or (..., 4) (quaternions)" if n == 3 else ""
                raise ValueError(f"`rotation` must have shape (..., {n}, {n}){also} to match "
                                 f"`translation` (n = {n}), got {R.shape}")
            else:
                R = _check_rotations(R, "rotation")
        S = as_positive_array(scale, "scale")
        self._set(T, R, S)

    def _set(self, T, R, S):
        shape = _batch_shape([("translation", T.shape[:-1]), ("rotation", R.shape[:-2]),
                              ("scale", S.shape)])
        n = T.shape[-1]
        self._T = np.broadcast_to(T, shape + (n,))
        self._R = np.broadcast_to(R, shape + (n, n))
        self._S = np.broadcast_to(S, shape)

    @classmethod
    def _from_parts(cls, T, R, S):
        obj = cls.__new__(cls)
        obj._set(np.asarray(T, float), np.asarray(R, float), np.asarray(S, float))
        return obj

    @classmethod
    def identity(cls, dim, shape=()):
        """The identity ``(0, 1, 1)`` in ``dim`` dimensions, broadcast to batch ``shape``."""
        dim, shape = _dim_and_shape(dim, shape)
        return cls._from_parts(np.zeros(shape + (dim,)), np.eye(dim), np.ones(shape))

    # -- components --------------------------------------------------------------------------
    @property
    def translation(self):
        """``T``, shape (..., n)."""
        return self._T

    @property
    def rotation(self):
        """``R``, shape (..., n, n)."""
        return self._R

    @property
    def scale(self):
        """``S``, shape (...)."""
        return self._S

    @property
    def dim(self):
        """The dimension ``n`` of the space."""
        return self._T.shape[-1]

    @property
    def shape(self):
        """Batch shape."""
        return self._S.shape

    def __len__(self):
        if not self.shape:
            raise TypeError("a single transform has no len()")
        return self.shape[0]

    def __getitem__(self, index):
        index = _batch_index(index, self.shape)
        return type(self)._from_parts(_take(self._T, index + (slice(None),), self.shape),
                                      _take(self._R, index + (slice(None), slice(None)),
                                            self.shape),
                                      _take(self._S, index, self.shape))

    @property
    def linear(self):
        """The linear part (Jacobian) ``J = R S``, shape (..., n, n)."""
        return self._R * self._S[..., None, None]

    @property
    def quaternion(self):
        """Scalar-first unit quaternions (``w >= 0``) of the rotation; 3-D only."""
        if self.dim != 3:
            raise ValueError(f"quaternions describe 3-D rotations; this transform is {self.dim}-D")
        return _quat.from_matrix(np.array(self._R))

    def as_matrix(self):
        """Augmented matrix ``[[R S, T], [0, 1]]``, shape (..., n + 1, n + 1)."""
        n = self.dim
        out = np.zeros(self.shape + (n + 1, n + 1))
        out[..., :n, :n] = self.linear
        out[..., :n, n] = self._T
        out[..., n, n] = 1.0
        return out

    # -- group structure ---------------------------------------------------------------------
    def _check_dim(self, other, what="compose"):
        if not isinstance(other, (Transform, DynamicTransform)):
            raise TypeError(f"`other` must be a Transform or DynamicTransform to {what} with, "
                            f"got {type(other).__name__}")
        if other.dim != self.dim:
            raise ValueError(f"cannot {what} transforms of dimension {self.dim} and {other.dim}")

    def compose(self, other):
        """``self o other``: apply ``other`` (child to self's child frame) first.

        A :class:`DynamicTransform` argument gives a :class:`DynamicTransform` (``self`` is
        then treated as static).
        """
        self._check_dim(other)
        if isinstance(other, DynamicTransform):
            return DynamicTransform.from_transform(self).compose(other)
        T = _mv(self.linear, other._T) + self._T
        return Transform._from_parts(T, self._R @ other._R, self._S * other._S)

    def __matmul__(self, other):
        return self.compose(other)

    def inverse(self):
        """``(-R^T T / S, R^T, 1 / S)`` ([DTH], "Inverse Transform")."""
        Ri = _mT(self._R)
        Si = 1.0 / self._S
        return Transform._from_parts(-_mv(Ri, self._T) * Si[..., None], Ri, Si)

    # -- action ------------------------------------------------------------------------------
    def apply(self, points):
        """Map points from child to parent coordinates: ``R S x + T``, (..., n) -> (..., n)."""
        x = as_float_array(points, "points", (self.dim,))
        _batch_shape([("transform", self.shape), ("points", x.shape[:-1])])
        return _mv(self.linear, x) + self._T

    __call__ = apply

    def apply_vector(self, vectors):
        """Map displacement vectors (no translation): ``R S v``, (..., n) -> (..., n)."""
        x = as_float_array(vectors, "vectors", (self.dim,))
        _batch_shape([("transform", self.shape), ("vectors", x.shape[:-1])])
        return _mv(self.linear, x)

    def __repr__(self):
        return f"Transform(dim={self.dim}, shape={self.shape})"


# --------------------------------------------------------------------------------------------
# DynamicTransform
# --------------------------------------------------------------------------------------------

class DynamicTransform:
    """A :class:`Transform` with velocity, acceleration, angular velocity and acceleration.

    Parameters
    ----------
    translation, rotation, scale
        As for :class:`Transform` (``rotation`` and ``scale`` optional, default the identity
        and 1; the scale is constant in time).
    velocity, acceleration : array_like, shape (..., n), optional
        ``v = dT/dt`` and ``a = d^2T/dt^2`` in parent coordinates.  Default 0.
    angular_velocity, angular_acceleration : array_like, optional
        ``omega`` with ``dR/dt = omega R`` and ``alpha = d omega/dt``, of the child relative
        to the parent, expressed in the parent basis: shape (...) in 2-D, (..., 3) in 3-D,
        (..., n, n) skew matrices otherwise.  Default 0.
    skew : bool, optional
        Pass the angular quantities as (..., n, n) skew-symmetric matrices in any dimension
        (default False).

    Attributes
    ----------
    transform : Transform
        The transform ``(T, R, S)`` without its dynamics.

    See Also
    --------
    Transform, local_to_global, global_to_local

    Notes
    -----
    [DTH], "Dynamics of the Composition": for ``A3 = A2 o A1``, with ``J2 = R2 S2``::

        v3 = v2 + J2 v1 + w2 J2 T1
        a3 = a2 + J2 a1 + (alpha2 + w2^2) J2 T1 + 2 w2 J2 v1
        w3 = w2 + R2 w1 R2^T
        alpha3 = alpha2 + R2 alpha1 R2^T + [w2, w3]

    "Dynamics of the Inverse": ``v' = J^-1 (w T - v)``,
    ``a' = J^-1 (alpha T - w^2 T + 2 w v - a)``, ``w' = -R^T w R``, ``alpha' = -R^T alpha R``.
    The identity has no dynamics.  In 3-D ``w^2 x = w x (w x x)``; in 2-D ``w^2 = -w^2 1``.

    Examples
    --------
    A wheel of radius 1 spinning at 2 rad/s on a cart moving at 3 m/s:

    >>> from rotode.frames import DynamicTransform
    >>> cart = DynamicTransform([0.0, 1.0], velocity=[3.0, 0.0])
    >>> wheel = DynamicTransform([0.0, 0.0], angular_velocity=-2.0)
    >>> rim = DynamicTransform([0.0, -1.0])          # the contact point, fixed to the wheel
    >>> (cart @ wheel @ rim).velocity.tolist()       # rolls without slipping for 3 m/s
    [1.0, 0.0]
    >>> (cart @ wheel @ rim).acceleration.tolist()   # centripetal, towards the hub
    [0.0, 4.0]
    """

    __slots__ = ("transform", "_v", "_a", "_w", "_al")
    __array_ufunc__ = None

    def __init__(self, translation, rotation=None, scale=1.0, velocity=None, acceleration=None,
                 angular_velocity=None, angular_acceleration=None, *, skew=False):
        self._init(Transform(translation, rotation, scale), velocity, acceleration,
                   angular_velocity, angular_acceleration, skew)

    def _init(self, transform, v, a, w, al, skew):
        n = transform.dim
        self._set(transform, _vector(v, n, "velocity"), _vector(a, n, "acceleration"),
                  _skew(w, n, "angular_velocity", skew),
                  _skew(al, n, "angular_acceleration", skew))

    def _set(self, transform, v, a, w, al):
        n = transform.dim
        shape = _batch_shape([("transform", transform.shape), ("velocity", v.shape[:-1]),
                              ("acceleration", a.shape[:-1]),
                              ("angular_velocity", w.shape[:-2]),
                              ("angular_acceleration", al.shape[:-2])])
        if shape != transform.shape:
            transform = Transform._from_parts(*(np.broadcast_to(x, shape + x.shape[len(
                transform.shape):]) for x in (transform._T, transform._R, transform._S)))
        self.transform = transform
        self._v = np.broadcast_to(v, shape + (n,))
        self._a = np.broadcast_to(a, shape + (n,))
        self._w = np.broadcast_to(w, shape + (n, n))
        self._al = np.broadcast_to(al, shape + (n, n))

    @classmethod
    def _from_parts(cls, transform, v, a, w, al):
        obj = cls.__new__(cls)
        obj._set(transform, v, a, w, al)
        return obj

    @classmethod
    def from_transform(cls, transform, velocity=None, acceleration=None, angular_velocity=None,
                       angular_acceleration=None, *, skew=False):
        """A :class:`DynamicTransform` from a :class:`Transform` and optional dynamics."""
        if not isinstance(transform, Transform):
            raise TypeError(f"`transform` must be a Transform, got {type(transform).__name__}")
        obj = cls.__new__(cls)
        obj._init(transform, velocity, acceleration, angular_velocity, angular_acceleration,
                  skew)
        return obj

    @classmethod
    def identity(cls, dim, shape=()):
        """The identity transform with null dynamics ([DTH], "Dynamics of the Identity")."""
        t = Transform.identity(dim, shape)
        n = t.dim
        return cls._from_parts(t, np.zeros(n), np.zeros(n), np.zeros((n, n)), np.zeros((n, n)))

    # -- components --------------------------------------------------------------------------
    translation = property(lambda self: self.transform.translation, doc="``T``, (..., n).")
    rotation = property(lambda self: self.transform.rotation, doc="``R``, (..., n, n).")
    scale = property(lambda self: self.transform.scale, doc="``S``, (...).")
    linear = property(lambda self: self.transform.linear, doc="``J = R S``, (..., n, n).")
    dim = property(lambda self: self.transform.dim, doc="Dimension ``n``.")
    shape = property(lambda self: self.transform.shape, doc="Batch shape.")
    velocity = property(lambda self: self._v, doc="``v = dT/dt``, (..., n), parent basis.")
    acceleration = property(lambda self: self._a, doc="``a = dv/dt``, (..., n), parent basis.")
    angular_velocity_matrix = property(
        lambda self: self._w, doc="``omega`` as a skew matrix (..., n, n), parent basis.")
    angular_acceleration_matrix = property(
        lambda self: self._al, doc="``alpha`` as a skew matrix (..., n, n), parent basis.")

    @property
    def angular_velocity(self):
        """``omega`` in parent basis: scalar (...) in 2-D, (..., 3) in 3-D, else matrices."""
        return _natural(self._w)

    @property
    def angular_acceleration(self):
        """``alpha`` in parent basis: scalar (...) in 2-D, (..., 3) in 3-D, else matrices."""
        return _natural(self._al)

    def __len__(self):
        return len(self.transform)

    def __getitem__(self, index):
        t = self.transform[index]
        index = _batch_index(index, self.shape)
        one, two = (slice(None),), (slice(None),) * 2
        return DynamicTransform._from_parts(t, self._v[index + one], self._a[index + one],
                                            self._w[index + two], self._al[index + two])

    def apply(self, points):
        """Map points from child to parent coordinates (see :meth:`Transform.apply`)."""
        return self.transform.apply(points)

    __call__ = apply

    def apply_vector(self, vectors):
        """Map displacement vectors with ``J = R S`` (see :meth:`Transform.apply_vector`)."""
        return self.transform.apply_vector(vectors)

    def as_matrix(self):
        """Augmented matrix of the transform, (..., n + 1, n + 1)."""
        return self.transform.as_matrix()

    def __repr__(self):
        return f"DynamicTransform(dim={self.dim}, shape={self.shape})"

    # -- group structure ---------------------------------------------------------------------
    def compose(self, other):
        """``self o other`` with dynamics: ``self`` is the parent ``A2``, ``other`` the child.

        Converts the child's local dynamics to dynamics relative to ``self``'s parent ([DTH],
        "Dynamics of the Composition"; formulas in the class notes).  A plain
        :class:`Transform` child is treated as at rest relative to ``self``.
        """
        self.transform._check_dim(other)
        if isinstance(other, Transform):
            other = DynamicTransform.from_transform(other)
        J2, R2, w2 = self.linear, self.rotation, self._w
        JT1 = _mv(J2, other.translation)
        Jv1 = _mv(J2, other._v)
        v3 = self._v + Jv1 + _mv(w2, JT1)
        a3 = (self._a + _mv(J2, other._a) + _mv(self._al + w2 @ w2, JT1)
              + 2.0 * _mv(w2, Jv1))
        w3 = w2 + R2 @ other._w @ _mT(R2)
        al3 = self._al + R2 @ other._al @ _mT(R2) + _comm(w2, w3)
        return DynamicTransform._from_parts(self.transform.compose(other.transform),
                                            v3, a3, w3, al3)

    def __matmul__(self, other):
        return self.compose(other)

    def __rmatmul__(self, other):
        if not isinstance(other, Transform):
            return NotImplemented
        return DynamicTransform.from_transform(other).compose(self)

    def inverse(self):
        """The parent relative to the child ([DTH], "Dynamics of the Inverse")."""
        R, T, w, al = self.rotation, self.translation, self._w, self._al
        Ji = _mT(R) / self.scale[..., None, None]
        wT = _mv(w, T)
        v = _mv(Ji, wT - self._v)
        a = _mv(Ji, _mv(al, T) - _mv(w, wT) + 2.0 * _mv(w, self._v) - self._a)
        return DynamicTransform._from_parts(self.transform.inverse(), v, a,
                                            -_mT(R) @ w @ R, -_mT(R) @ al @ R)

    # -- instantaneous changes (impulses), self = the parent's global dynamics A2 -----------
    def _deltas(self, dv, da, dw, dal, skew, batches=None):
        n = self.dim
        out = (_vector(dv, n, "velocity"), _vector(da, n, "acceleration"),
               _skew(dw, n, "angular_velocity", skew),
               _skew(dal, n, "angular_acceleration", skew))
        _batch_shape((batches or [("transform", self.shape)])
                     + [("velocity", out[0].shape[:-1]), ("acceleration", out[1].shape[:-1]),
                        ("angular_velocity", out[2].shape[:-2]),
                        ("angular_acceleration", out[3].shape[:-2])])
        return out

    def delta_local_to_global(self, velocity=None, acceleration=None, angular_velocity=None,
                              angular_acceleration=None, *, skew=False):
        """Global change of a child caused by a change of its local dynamics.

        ``self`` is the parent's global transform ``A2``; the arguments are instantaneous
        changes of the child's local ``v1, a1, omega1, alpha1`` ([DTH], "Global change in
        child due to local change in child")::

            dv3 = J2 dv1                 da3 = J2 da1 + 2 w2 dv3
            dw3 = R2 dw1 R2^T            dalpha3 = R2 dalpha1 R2^T + [w2, dw3]

        Returns
        -------
        Delta
            Changes of the child's global dynamics (angular parts in natural form).
        """
        dv1, da1, dw1, dal1 = self._deltas(velocity, acceleration, angular_velocity,
                                           angular_acceleration, skew)
        J2, R2, w2 = self.linear, self.rotation, self._w
        dv3 = _mv(J2, dv1)
        dw3 = R2 @ dw1 @ _mT(R2)
        return Delta.from_matrices(dv3, _mv(J2, da1) + 2.0 * _mv(w2, dv3), dw3,
                                   R2 @ dal1 @ _mT(R2) + _comm(w2, dw3))

    def delta_global_to_local(self, velocity=None, acceleration=None, angular_velocity=None,
                              angular_acceleration=None, *, skew=False):
        """Local change of a child that produces a given change of its global dynamics.

        The inverse of :meth:`delta_local_to_global` ([DTH], "Local change in child
        required to produce the given global change in child")::

            dv1 = J2^-1 dv3              da1 = J2^-1 (da3 - 2 w2 dv3)
            dw1 = R2^T dw3 R2            dalpha1 = R2^T (dalpha3 + [dw3, w2]) R2

        For a linear impulse ``dp`` on a body of mass ``m`` pass ``velocity=dp / m``: the local
        acceleration changes too (the Coriolis term depends on velocity).
        """
        dv3, da3, dw3, dal3 = self._deltas(velocity, acceleration, angular_velocity,
                                           angular_acceleration, skew)
        R2, w2 = self.rotation, self._w
        Ji = _mT(R2) / self.scale[..., None, None]
        return Delta.from_matrices(_mv(Ji, dv3), _mv(Ji, da3 - 2.0 * _mv(w2, dv3)),
                                   _mT(R2) @ dw3 @ R2, _mT(R2) @ (dal3 + _comm(dw3, w2)) @ R2)

    def add_delta(self, velocity=None, acceleration=None, angular_velocity=None,
                  angular_acceleration=None, *, skew=False):
        """The same transform with its dynamics changed by the given deltas.

        ``dt.add_delta(*delta)`` applies a :class:`Delta`.
        """
        dv, da, dw, dal = self._deltas(velocity, acceleration, angular_velocity,
                                       angular_acceleration, skew)
        return DynamicTransform._from_parts(self.transform, self._v + dv, self._a + da,
                                            self._w + dw, self._al + dal)


class Delta(NamedTuple):
    """Instantaneous changes of velocity, acceleration, angular velocity and acceleration.

    A named tuple (unpack it into `DynamicTransform.add_delta`).  Angular parts are in natural
    form (scalar in 2-D, vector in 3-D, matrix otherwise).

    Parameters
    ----------
    velocity, acceleration : ndarray, shape (..., n)
    angular_velocity, angular_acceleration : ndarray
        Shape (...) in 2-D, (..., 3) in 3-D, (..., n, n) otherwise.

    See Also
    --------
    inherited_delta, cancel_inherited, DynamicTransform.add_delta

    Examples
    --------
    >>> import numpy as np
    >>> from rotode.frames import Delta
    >>> d = Delta.from_matrices(np.array([1.0, 0.0]), np.zeros(2),
    ...                         np.array([[0.0, -1.0], [1.0, 0.0]]), np.zeros((2, 2)))
    >>> d.velocity.tolist(), float(d.angular_velocity)
    ([1.0, 0.0], 1.0)
    """

    velocity: np.ndarray
    acceleration: np.ndarray
    angular_velocity: np.ndarray
    angular_acceleration: np.ndarray

    @classmethod
    def from_matrices(cls, dv, da, dw, dal):
        """A :class:`Delta` from vector and skew-matrix parts (matrices -> natural form)."""
        return cls(np.asarray(dv), np.asarray(da), _natural(dw), _natural(dal))


# --------------------------------------------------------------------------------------------
# local <-> global along hierarchies
# --------------------------------------------------------------------------------------------

#: Docstring blocks that the functions relating nodes share (``%(name)s``, `_shared_docs`).
_DOCS = {
    "relate_raises": """
        Raises
        ------
        TypeError
            If an argument is not a `DynamicTransform`.
        ValueError
            For transforms of different dimensions or batch shapes that do not broadcast.
    """,
    "chain_raises": """
        Raises
        ------
        TypeError
            If ``chain`` is not a sequence of `DynamicTransform`.
    """,
    # a change of the parent's global dynamics (inherited_delta, cancel_inherited)
    "change_parameters": """
        parent : DynamicTransform
            The parent's global dynamics ``A2`` before the change.
        child : DynamicTransform
            The child's local dynamics ``A1``.
        velocity, acceleration, angular_velocity, angular_acceleration : array_like, optional
            The changes of the parent's global dynamics (angular parts in natural form unless
            ``skew``).  Default 0.
        skew : bool, optional
            Pass the angular changes as (..., n, n) skew-symmetric matrices (default False).
    """,
    "change_raises": """
        Raises
        ------
        TypeError
            If ``parent`` or ``child`` is not a `DynamicTransform`.
        ValueError
            For shapes that do not match, or changes so large that the result overflows.
    """,
}
_shared_docs = docfiller(_DOCS)


def _dynamic(x, name):
    if not isinstance(x, DynamicTransform):
        raise TypeError(f"`{name}` must be a DynamicTransform, got {type(x).__name__}")
    return x


@_shared_docs
def local_to_global(parent, child):
    """Global dynamics of a child from its local dynamics: ``parent @ child`` ([DTH]).

    Parameters
    ----------
    parent : DynamicTransform
        The parent's global transform ``A2`` (relative to the world).
    child : DynamicTransform
        The child's local transform ``A1`` (relative to the parent).

    Returns
    -------
    DynamicTransform
        ``A3 = A2 o A1``, the child relative to the world.

    %(relate_raises)s

    See Also
    --------
    global_to_local, chain_local_to_global, DynamicTransform

    References
    ----------
    .. [DTH] "The Dynamics of a Transform Hierarchy", web article, "Dynamics of the
       Composition" (docs/references.md).

    Examples
    --------
    >>> from rotode.frames import DynamicTransform, local_to_global
    >>> cart = DynamicTransform([0.0, 1.0], velocity=[3.0, 0.0])
    >>> wheel = DynamicTransform([0.0, 0.0], angular_velocity=-2.0)     # on the cart
    >>> hub = local_to_global(cart, wheel)
    >>> hub.translation.tolist(), hub.velocity.tolist(), float(hub.angular_velocity)
    ([0.0, 1.0], [3.0, 0.0], -2.0)
    """
    return _dynamic(parent, "parent").compose(_dynamic(child, "child"))


@_shared_docs
def global_to_local(parent, child):
    """Local dynamics of a child from its global dynamics and the parent's ([DTH]).

    Evaluates [DTH]'s direct form of ``A1 = A2^-1 o A3`` ("Converting Global Dynamics To
    Local Dynamics")::

        v1 = J2^-1 (v3 - v2 - w2 (T3 - T2))
        a1 = J2^-1 (a3 - a2 - (alpha2 - w2^2)(T3 - T2) - 2 w2 (v3 - v2))
        w1 = R2^T (w3 - w2) R2
        alpha1 = R2^T (alpha3 - alpha2 + [w3, w2]) R2

    Parameters
    ----------
    parent : DynamicTransform
        The parent's global transform ``A2``.
    child : DynamicTransform
        The child's global transform ``A3``.

    Returns
    -------
    DynamicTransform
        ``A1``, the child relative to the parent.

    %(relate_raises)s

    See Also
    --------
    local_to_global, chain_global_to_local

    References
    ----------
    .. [DTH] "The Dynamics of a Transform Hierarchy", web article, "Converting Global Dynamics
       To Local Dynamics" (docs/references.md).

    Examples
    --------
    >>> from rotode.frames import DynamicTransform, global_to_local
    >>> cart = DynamicTransform([0.0, 1.0], velocity=[3.0, 0.0])
    >>> hub = DynamicTransform([0.0, 1.0], velocity=[3.0, 0.0], angular_velocity=-2.0)
    >>> wheel = global_to_local(cart, hub)
    >>> wheel.translation.tolist(), wheel.velocity.tolist(), float(wheel.angular_velocity)
    ([0.0, 0.0], [0.0, 0.0], -2.0)
    """
    A2, A3 = _dynamic(parent, "parent"), _dynamic(child, "child")
    A2.transform._check_dim(A3, "relate")
    R2, w2, al2 = A2.rotation, A2._w, A2._al
    Ji = _mT(R2) / A2.scale[..., None, None]
    d = A3.translation - A2.translation
    dv = A3._v - A2._v
    v1 = _mv(Ji, dv - _mv(w2, d))
    a1 = _mv(Ji, A3._a - A2._a - _mv(al2 - w2 @ w2, d) - 2.0 * _mv(w2, dv))
    w1 = _mT(R2) @ (A3._w - w2) @ R2
    al1 = _mT(R2) @ (A3._al - al2 + _comm(A3._w, w2)) @ R2
    t1 = Transform._from_parts(_mv(Ji, d), _mT(R2) @ A3.rotation, A3.scale / A2.scale)
    return DynamicTransform._from_parts(t1, v1, a1, w1, al1)


def _chain(chain):
    """The nodes of ``chain`` (a sequence of DynamicTransform), checked."""
    if isinstance(chain, (DynamicTransform, Transform, str, bytes)):
        raise TypeError("`chain` must be a sequence of DynamicTransform, got "
                        f"{type(chain).__name__}")
    try:
        items = list(chain)
    except TypeError:
        raise TypeError("`chain` must be a sequence of DynamicTransform, got "
                        f"{type(chain).__name__}") from None
    return [_dynamic(x, f"chain[{k}]") for k, x in enumerate(items)]


@_shared_docs
def chain_local_to_global(chain):
    """Global dynamics of every node along a path from the world to a leaf.

    Parameters
    ----------
    chain : sequence of DynamicTransform
        ``chain[0]`` relative to the world, ``chain[k]`` relative to ``chain[k - 1]``.

    Returns
    -------
    list of DynamicTransform
        ``out[k] = chain[0] o ... o chain[k]``, node ``k`` relative to the world, computed from
        the root towards the leaf as [DTH] describes.

    %(chain_raises)s

    See Also
    --------
    chain_global_to_local, local_to_global

    Examples
    --------
    >>> from rotode.frames import DynamicTransform, chain_local_to_global
    >>> cart = DynamicTransform([0.0, 1.0], velocity=[3.0, 0.0])
    >>> wheel = DynamicTransform([0.0, 0.0], angular_velocity=-2.0)
    >>> contact = DynamicTransform([0.0, -1.0])
    >>> [node.velocity.tolist() for node in chain_local_to_global([cart, wheel, contact])]
    [[3.0, 0.0], [3.0, 0.0], [1.0, 0.0]]
    """
    out = []
    for node in _chain(chain):
        out.append(node if not out else out[-1].compose(node))
    return out


@_shared_docs
def chain_global_to_local(chain):
    """Local dynamics of every node from the global dynamics of a path of nodes.

    Parameters
    ----------
    chain : sequence of DynamicTransform
        ``chain[k]`` is node ``k`` relative to the world; node ``k - 1`` is the parent of
        node ``k`` and node 0's parent is the world.

    Returns
    -------
    list of DynamicTransform
        ``out[k]`` is node ``k`` relative to node ``k - 1`` (:func:`global_to_local`).

    %(chain_raises)s

    See Also
    --------
    chain_local_to_global, global_to_local

    Examples
    --------
    >>> from rotode.frames import (DynamicTransform, chain_global_to_local,
    ...                            chain_local_to_global)
    >>> local = [DynamicTransform([0.0, 1.0], velocity=[3.0, 0.0]),
    ...          DynamicTransform([0.0, 0.0], angular_velocity=-2.0),
    ...          DynamicTransform([0.0, -1.0])]
    >>> back = chain_global_to_local(chain_local_to_global(local))
    >>> [node.translation.tolist() for node in back]
    [[0.0, 1.0], [0.0, 0.0], [0.0, -1.0]]
    """
    chain = _chain(chain)
    return chain[:1] + [global_to_local(p, c) for p, c in zip(chain[:-1], chain[1:],
                                                             strict=True)]


def _finite_delta(f):
    """Decorator: evaluate a change of dynamics with overflow warnings off; ValueError if the
    result is not finite (changes near the float limit)."""
    @functools.wraps(f)
    def checked(*args, **kwargs):
        with np.errstate(over="ignore", invalid="ignore"):
            out = f(*args, **kwargs)
        if not all(np.isfinite(part).all() for part in out):
            raise ValueError("the changes `velocity`, `acceleration`, `angular_velocity` and "
                             "`angular_acceleration` are too large: the result overflows (is "
                             "not finite)")
        return out
    return checked


def _parent_change(parent, child, velocity, acceleration, angular_velocity,
                   angular_acceleration, skew):
    """``A2``, ``A1`` and the parent's changes ``(dv, da, dw, dalpha)`` (matrices) checked
    against both, for :func:`inherited_delta` and :func:`cancel_inherited`."""
    A2, A1 = _dynamic(parent, "parent"), _dynamic(child, "child")
    A2.transform._check_dim(A1, "relate")
    return A2, A1, A2._deltas(velocity, acceleration, angular_velocity, angular_acceleration,
                              skew, [("parent", A2.shape), ("child", A1.shape)])


@_finite_delta
@_shared_docs
def inherited_delta(parent, child, velocity=None, acceleration=None, angular_velocity=None,
                    angular_acceleration=None, *, skew=False):
    """Change of a child's global dynamics when its parent's global dynamics change.

    [DTH], "Global change in child due to global change in parent" (the child's local
    dynamics unchanged)::

        dv3 = dv2 + dw2 J2 T1
        da3 = da2 + (dalpha2 + dw2 w2 + w2 dw2 + dw2^2) J2 T1 + 2 dw2 J2 v1
        dw3 = dw2
        dalpha3 = dalpha2 + [dw2, w3 - w2]

    Parameters
    ----------
    %(change_parameters)s

    Returns
    -------
    Delta
        The changes of the child's global dynamics.

    %(change_raises)s

    See Also
    --------
    cancel_inherited, Delta

    References
    ----------
    .. [DTH] "The Dynamics of a Transform Hierarchy", web article, "Global change in child due
       to global change in parent" (docs/references.md).

    Examples
    --------
    The cart brakes to a stop; the contact point of its wheel changes speed with it:

    >>> from rotode.frames import DynamicTransform, inherited_delta
    >>> cart = DynamicTransform([0.0, 1.0], velocity=[3.0, 0.0])
    >>> seat = DynamicTransform([0.0, 0.5])
    >>> inherited_delta(cart, seat, velocity=[-3.0, 0.0]).velocity.tolist()
    [-3.0, 0.0]
    """
    A2, A1, (dv2, da2, dw2, dal2) = _parent_change(parent, child, velocity, acceleration,
                                                   angular_velocity, angular_acceleration, skew)
    J2, R2, w2 = A2.linear, A2.rotation, A2._w
    JT1 = _mv(J2, A1.translation)
    dv3 = dv2 + _mv(dw2, JT1)
    da3 = (da2 + _mv(dal2 + dw2 @ w2 + w2 @ dw2 + dw2 @ dw2, JT1)
           + 2.0 * _mv(dw2, _mv(J2, A1._v)))
    dal3 = dal2 + _comm(dw2, R2 @ A1._w @ _mT(R2))
    return Delta.from_matrices(dv3, da3, dw2 + 0.0 * w2, dal3)


@_finite_delta
@_shared_docs
def cancel_inherited(parent, child, velocity=None, acceleration=None, angular_velocity=None,
                     angular_acceleration=None, *, skew=False):
    """Local change of a child that cancels what it inherits from a change of its parent.

    After the parent's global dynamics change by the given deltas, adding the returned
    :class:`Delta` to the child's local dynamics (``child.add_delta(*delta)``) leaves the
    child's global dynamics as they were: the car crashes, its passengers fly on ([DTH],
    "Counteracting the Inherited Effect from the Parent").  Grandchildren follow automatically.

    For a change of the parent's velocity alone this is [DTH]'s
    ``dv1 = -J2^-1 dv`` and ``da1 = 2 J2^-1 w2 dv``; in general it is evaluated exactly as
    ``global_to_local(A2 + delta, A2 o A1) - A1``.

    Parameters
    ----------
    %(change_parameters)s

    Returns
    -------
    Delta
        Changes to add to the child's local dynamics.

    %(change_raises)s

    See Also
    --------
    inherited_delta, DynamicTransform.add_delta

    References
    ----------
    .. [DTH] "The Dynamics of a Transform Hierarchy", web article, "Counteracting the Inherited
       Effect from the Parent" (docs/references.md).

    Examples
    --------
    The cart stops; the passenger keeps flying forwards at 3 m/s relative to the world:

    >>> from rotode.frames import DynamicTransform, cancel_inherited
    >>> cart = DynamicTransform([0.0, 1.0], velocity=[3.0, 0.0])
    >>> passenger = DynamicTransform([0.0, 0.5])
    >>> cancel_inherited(cart, passenger, velocity=[-3.0, 0.0]).velocity.tolist()
    [3.0, 0.0]
    """
    A2, A1, (dv, da, dw, dal) = _parent_change(parent, child, velocity, acceleration,
                                               angular_velocity, angular_acceleration, skew)
    changed = DynamicTransform._from_parts(A2.transform, A2._v + dv, A2._a + da, A2._w + dw,
                                           A2._al + dal)
    new = global_to_local(changed, A2.compose(A1))
    return Delta.from_matrices(new._v - A1._v, new._a - A1._a, new._w - A1._w,
                               new._al - A1._al)


# --------------------------------------------------------------------------------------------
# inertial accelerations
# --------------------------------------------------------------------------------------------

class InertialAccelerations(NamedTuple):
    """Inertial ("fictitious") accelerations in a moving frame, in the frame's basis.

    A named tuple: ``frame = -J^-1 a2`` (the frame's own acceleration), ``centrifugal =
    -w~^2 T1``, ``coriolis = -2 w~ v1``, ``euler = -alpha~ T1`` ([DTH], "Newtonian
    Mechanics").

    Parameters
    ----------
    frame, centrifugal, coriolis, euler : ndarray, shape (..., n)
        The four terms.

    See Also
    --------
    inertial_accelerations, local_acceleration

    Examples
    --------
    >>> from rotode.frames import DynamicTransform, inertial_accelerations
    >>> spin = DynamicTransform([0.0, 0.0, 0.0], angular_velocity=[0.0, 0.0, 1.0])
    >>> terms = inertial_accelerations(spin, [1.0, 0.0, 0.0], [0.0, 1.0, 0.0])
    >>> terms.centrifugal.tolist(), terms.coriolis.tolist(), terms.total.tolist()
    ([1.0, -0.0, -0.0], [2.0, -0.0, -0.0], [3.0, -0.0, -0.0])
    """

    frame: np.ndarray
    centrifugal: np.ndarray
    coriolis: np.ndarray
    euler: np.ndarray

    @property
    def total(self):
        """Sum of the four terms."""
        return self.frame + self.centrifugal + self.coriolis + self.euler


def inertial_accelerations(parent, position, velocity):
    """Inertial accelerations of a point moving in a moving frame ([DTH]).

    With the frame's dynamics expressed in its own basis, ``a~ = J2^-1 a2``,
    ``w~ = J2^-1 w2 J2 = R2^T w2 R2`` and ``alpha~ = R2^T alpha2 R2``, a point at ``T1`` with
    velocity ``v1`` (both in the frame's coordinates) has the local acceleration
    ``a1 = F~/m - a~ - alpha~ T1 - w~^2 T1 - 2 w~ v1``.  In 3-D the terms read
    ``-w x (w x r)``, ``-2 w x v``, ``-alpha x r``; in 2-D ``w^2 r``, ``-2 w v_perp``,
    ``-alpha r_perp`` with ``(x, y)_perp = (-y, x)``.

    Parameters
    ----------
    parent : DynamicTransform
        The moving frame's global dynamics ``A2`` (relative to an inertial frame).
    position, velocity : array_like, shape (..., n)
        ``T1`` and ``v1``: the point's position and velocity relative to the frame, in the
        frame's coordinates.

    Returns
    -------
    InertialAccelerations
        The four terms, each (..., n), in the frame's basis and units.

    Raises
    ------
    TypeError
        If ``parent`` is not a `DynamicTransform`.
    ValueError
        For shapes that do not match the frame's dimension or batch shape.

    See Also
    --------
    local_acceleration, MovingFrameParticle

    References
    ----------
    .. [DTH] "The Dynamics of a Transform Hierarchy", web article, "Newtonian Mechanics"
       (docs/references.md).

    Examples
    --------
    >>> from rotode.frames import DynamicTransform, inertial_accelerations
    >>> spin = DynamicTransform([0.0, 0.0, 0.0], angular_velocity=[0.0, 0.0, 1.0])
    >>> inertial_accelerations(spin, [1.0, 0.0, 0.0], [0.0, 0.0, 0.0]).total.tolist()
    [1.0, -0.0, -0.0]
    """
    A2 = _dynamic(parent, "parent")
    n = A2.dim
    r = as_float_array(position, "position", (n,))
    v = as_float_array(velocity, "velocity", (n,))
    _batch_shape([("parent", A2.shape), ("position", r.shape[:-1]),
                  ("velocity", v.shape[:-1])])
    R2 = A2.rotation
    w = _mT(R2) @ A2._w @ R2
    al = _mT(R2) @ A2._al @ R2
    frame = -_mv(_mT(R2), A2._a) / A2.scale[..., None]
    return InertialAccelerations(np.broadcast_to(frame, np.broadcast_shapes(
        frame.shape, r.shape)).copy(), -_mv(w, _mv(w, r)), -2.0 * _mv(w, v), -_mv(al, r))


def local_acceleration(parent, position, velocity, force=None, mass=1.0, *,
                       force_frame="parent"):
    """Acceleration of a point mass relative to a moving frame, in the frame's coordinates.

    ``a1 = F~/m + inertial terms`` ([DTH], "Newtonian Mechanics - Force to
    Acceleration"), see :func:`inertial_accelerations`.

    Parameters
    ----------
    parent : DynamicTransform
        The frame's global dynamics.
    position, velocity : array_like, shape (..., n)
        Relative to the frame, in its coordinates.
    force : array_like, shape (..., n), optional
        Applied force.  Default none.
    mass : float, optional
        > 0 (default 1).
    force_frame : {"parent", "world"}, optional
        Basis of ``force``: the frame's own (``F~``, default) or the inertial world's (``F``,
        converted with ``J2^-1``).

    Returns
    -------
    ndarray, shape (..., n)
        ``a1``, in the frame's basis.

    Raises
    ------
    ValueError
        For ``mass <= 0``, an unknown ``force_frame`` or shapes that do not match.

    See Also
    --------
    inertial_accelerations, MovingFrameParticle

    Examples
    --------
    A point at rest in a frame spinning about z, under gravity along the frame's -z:

    >>> from rotode.frames import DynamicTransform, local_acceleration
    >>> spin = DynamicTransform([0.0, 0.0, 0.0], angular_velocity=[0.0, 0.0, 1.0])
    >>> local_acceleration(spin, [1.0, 0.0, 0.0], [0.0, 0.0, 0.0], force=[0.0, 0.0, -9.81])
    array([ 1.  ,  0.  , -9.81])
    """
    mass = as_positive_scalar(mass, "mass")
    as_choice(force_frame, "force_frame", ("parent", "world"))
    acc = inertial_accelerations(parent, position, velocity).total
    if force is None:
        return acc
    F = as_float_array(force, "force", (parent.dim,))
    _batch_shape([("parent", parent.shape), ("position", np.shape(position)[:-1]),
                  ("velocity", np.shape(velocity)[:-1]), ("force", F.shape[:-1])])
    if force_frame == "world":
        F = _mv(_mT(parent.rotation), F) / parent.scale[..., None]
    return acc + F / mass


# --------------------------------------------------------------------------------------------
# right-hand sides for solve_ivp
# --------------------------------------------------------------------------------------------

def _frame_at(parent, t):
    A = parent(t) if callable(parent) and not isinstance(parent, DynamicTransform) else parent
    if not isinstance(A, DynamicTransform):
        raise TypeError("`parent` must be a DynamicTransform or a callable t -> "
                        f"DynamicTransform, got {type(A).__name__}")
    if A.shape != ():
        raise ValueError(f"`parent` must be a single DynamicTransform, got batch shape {A.shape}")
    return A


def _returned(value, name, shape, t):
    """What a user's ``force``/``torque`` callable returned, checked: a finite real array that
    broadcasts to ``shape`` (k, n)."""
    try:
        arr = np.asarray(value)
        is_complex = arr.dtype.kind == "c"
        if not is_complex:
            arr = arr.astype(float, copy=False)
    except (TypeError, ValueError):
        raise TypeError(f"the `{name}` callable must return a real array of shape "
                        f"({shape[1]},) or {shape}, got {type(value).__name__} at t = {t!r}") \
            from None
    if is_complex:
        raise complex_values_error(f"the `{name}` callable", arr, t)
    try:
        np.broadcast_to(arr, shape)
    except ValueError:
        raise ValueError(f"the `{name}` callable must return shape ({shape[1]},) or {shape}, "
                         f"got {arr.shape} at t = {t!r}") from None
    if not np.isfinite(arr).all():
        raise ValueError(f"the `{name}` callable returned a non-finite value at t = {t!r}")
    return arr


def _state(y, size, name="y"):
    """``y`` of shape (size,) or (size, k) as a float array of shape (k, size), and k or None."""
    y = as_float_array(y, name)
    if y.ndim not in (1, 2) or y.shape[0] != size:
        raise ValueError(f"`{name}` must have shape ({size},) or ({size}, k), got {y.shape}")
    return (y[:, None] if y.ndim == 1 else y).T, y.ndim == 1


class MovingFrameParticle:
    """``fun(t, y)`` for ``solve_ivp``: a point mass described in a moving frame.

    The state ``y = [x, v]`` holds the position and velocity relative to the frame, in the
    frame's coordinates (2n values).  The right-hand side is ``dx/dt = v``,
    ``dv/dt = F~/m + inertial accelerations`` ([DTH], "Newtonian Mechanics"), so the
    integrator sees the centrifugal, Coriolis, Euler and frame-acceleration terms without the
    user deriving them.

    Parameters
    ----------
    parent : DynamicTransform or callable
        The frame's global dynamics, or a function ``t -> DynamicTransform`` giving them at
        time ``t``.  A constant :class:`DynamicTransform` stands for a frame whose dynamics in
        its own basis (``a~, w~, alpha~``) are constant, e.g. a planet spinning at a constant
        rate about a fixed axis (only these enter the right-hand side).
    force : callable, optional
        ``force(t, x, v) -> F`` with ``x, v`` of shape (..., n) (k rows when called
        vectorised) returning (..., n).  Default: no applied force.
    mass : float, optional
        > 0 (default 1).
    force_frame : {"parent", "world"}, optional
        Basis of the returned force (default "parent"; see :func:`local_acceleration`).

    See Also
    --------
    MovingFrameRigidBody, local_acceleration

    Notes
    -----
    ``__call__`` accepts ``y`` of shape (2n,) with any strides, and (2n, k) for
    ``solve_ivp(..., vectorized=True)``; it returns the same shape.

    Examples
    --------
    A particle at rest in the world, seen from a frame spinning at 1 rad/s about z, circles
    backwards:

    >>> import numpy as np
    >>> from scipy.integrate import solve_ivp
    >>> from rotode.frames import DynamicTransform, MovingFrameParticle
    >>> spin = DynamicTransform(np.zeros(3), angular_velocity=[0.0, 0.0, 1.0])
    >>> rhs = MovingFrameParticle(spin)
    >>> y0 = rhs.local_state(spin, [1.0, 0.0, 0.0], [0.0, 0.0, 0.0])
    >>> y0.tolist()
    [1.0, 0.0, 0.0, 0.0, -1.0, 0.0]
    >>> sol = solve_ivp(rhs, (0, 1), y0, rtol=1e-10, atol=1e-12)
    >>> bool(np.allclose(sol.y[:3, -1], [np.cos(1), -np.sin(1), 0], atol=1e-8))
    True
    """

    def __init__(self, parent, force=None, mass=1.0, *, force_frame="parent"):
        if not (isinstance(parent, DynamicTransform) or callable(parent)):
            raise TypeError("`parent` must be a DynamicTransform or a callable t -> "
                            f"DynamicTransform, got {type(parent).__name__}")
        if isinstance(parent, DynamicTransform):
            _frame_at(parent, 0.0)
        if force is not None and not callable(force):
            raise TypeError(f"`force` must be callable force(t, x, v), got {type(force).__name__}")
        as_choice(force_frame, "force_frame", ("parent", "world"))
        self.parent = parent
        self.force = force
        self.mass = as_positive_scalar(mass, "mass")
        self.force_frame = force_frame
        self.dim = parent.dim if isinstance(parent, DynamicTransform) else None

    def __call__(self, t, y):
        """``dy/dt = [v, a1]`` at time ``t`` for ``y`` of shape (2n,) or (2n, k)."""
        t = as_real(t, "t")
        A2 = _frame_at(self.parent, t)
        n = A2.dim
        Y, single = _state(y, 2 * n)
        x, v = Y[:, :n], Y[:, n:]
        F = None if self.force is None else _returned(self.force(t, x, v), "force", x.shape, t)
        acc = local_acceleration(A2, x, v, F, self.mass, force_frame=self.force_frame)
        out = np.concatenate([v, np.broadcast_to(acc, v.shape)], axis=1).T
        return out[:, 0].copy() if single else np.ascontiguousarray(out)

    @staticmethod
    def local_state(parent, position, velocity):
        """State ``[x, v]`` relative to the frame from a world position and velocity.

        ``x = A2^-1(p)`` and ``v = J2^-1 (v_world - v2 - w2 (p - T2))`` ([DTH],
        global-to-local velocity).  ``parent`` is the frame's :class:`DynamicTransform` at
        that instant.
        """
        A2 = _dynamic(parent, "parent")
        n = A2.dim
        p = as_float_array(position, "position", (n,))
        vw = as_float_array(velocity, "velocity", (n,))
        child = DynamicTransform(p, velocity=vw, rotation=np.eye(n))
        local = global_to_local(A2, child)
        return np.concatenate([local.translation, local.velocity], axis=-1)

    @staticmethod
    def world_state(parent, y):
        """World position and velocity ``(p, v_world)`` of a state ``y = [x, v]``."""
        A2 = _dynamic(parent, "parent")
        n = A2.dim
        y = as_float_array(y, "y", (2 * n,))
        g = A2.compose(DynamicTransform(y[..., :n], velocity=y[..., n:]))
        return np.array(g.translation), np.array(g.velocity)


class MovingFrameRigidBody:
    """``fun(t, y)`` for ``solve_ivp``: a rigid body described in a moving 3-D frame.

    State (13 values): ``y = [x (3), v (3), q (4), w (3)]`` with ``x, v`` the centre of mass
    relative to the frame in the frame's coordinates, ``q`` the scalar-first quaternion of the
    body's orientation relative to the frame (body to frame) and ``w`` the body's absolute
    (inertial) angular velocity in the body frame.  Then Euler's equations keep their inertial
    form, ``I dw/dt = tau - w x (I w)`` (Mandre 2008 sec. 6), the translation follows
    :class:`MovingFrameParticle`, and the relative orientation moves with the relative angular
    velocity ``R1 w - w~2`` (parent basis; [DTH] global-to-local ``w1 = R2^T (w3 - w2) R2``
    with ``w3 = R2 R1 w``): ``dq/dt = q * (0, w - R1^T w~2) / 2``.

    Parameters
    ----------
    parent : DynamicTransform or callable
        3-D frame, as for :class:`MovingFrameParticle`.
    inertia : array_like, shape (3, 3)
        Body-frame inertia tensor about the centre of mass (validated with
        :func:`rotode.inertia.validate_inertia`).
    mass : float, optional
        > 0 (default 1).
    force : callable, optional
        ``force(t, x, v, q, w) -> F`` in the frame's basis, arrays with leading axis k when
        vectorised.  Default: none.
    torque : callable, optional
        ``torque(t, x, v, q, w) -> tau`` in the body frame.  Default: none.

    Attributes
    ----------
    parent, inertia, mass, force, torque
        The constructor's arguments (``inertia`` validated).

    Raises
    ------
    TypeError
        For a ``parent`` that is neither a `DynamicTransform` nor callable, or a ``force`` or
        ``torque`` that is not callable.
    ValueError
        For a frame that is not 3-D, an inertia that is not physical or ``mass <= 0``.

    See Also
    --------
    MovingFrameParticle, rotode.RigidBody

    References
    ----------
    .. [DTH] "The Dynamics of a Transform Hierarchy", web article, "Newtonian Mechanics"
       (docs/references.md).
    .. [1] I. Mandre, "Rigid body dynamics using Euler's equations, Runge-Kutta and
       quaternions", web note, 2008, sec. 6 (docs/references.md).

    Examples
    --------
    A body at rest in the world, spinning with a frame that turns at 1 rad/s about z: it circles
    the frame's origin backwards and does not turn relative to the frame:

    >>> import numpy as np
    >>> from rotode.frames import DynamicTransform, MovingFrameRigidBody
    >>> spin = DynamicTransform(np.zeros(3), angular_velocity=[0.0, 0.0, 1.0])
    >>> body = MovingFrameRigidBody(spin, np.diag([1.0, 2.0, 3.0]), mass=2.0)
    >>> y = np.r_[1.0, 0.0, 0.0, 0.0, -1.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0]
    >>> body(0.0, y).round(12) + 0.0
    array([ 0., -1.,  0., -1.,  0.,  0.,  0.,  0.,  0.,  0.,  0.,  0.,  0.])
    """

    def __init__(self, parent, inertia, mass=1.0, force=None, torque=None):
        from rotode.inertia import validate_inertia

        if not (isinstance(parent, DynamicTransform) or callable(parent)):
            raise TypeError("`parent` must be a DynamicTransform or a callable t -> "
                            f"DynamicTransform, got {type(parent).__name__}")
        if isinstance(parent, DynamicTransform):
            _frame_at(parent, 0.0)
            if parent.dim != 3:
                raise ValueError(f"`parent` must be 3-D for a rigid body, got {parent.dim}-D")
        for name, f in (("force", force), ("torque", torque)):
            if f is not None and not callable(f):
                raise TypeError(f"`{name}` must be callable, got {type(f).__name__}")
        self.parent = parent
        self.inertia = validate_inertia(inertia, "inertia")
        if self.inertia.shape != (3, 3):
            raise ValueError(f"`inertia` must have shape (3, 3), got {self.inertia.shape}")
        self._inv = np.linalg.inv(self.inertia)
        self.mass = as_positive_scalar(mass, "mass")
        self.force = force
        self.torque = torque

    def __call__(self, t, y):
        """``dy/dt`` at time ``t`` for ``y`` of shape (13,) or (13, k)."""
        t = as_real(t, "t")
        A2 = _frame_at(self.parent, t)
        if A2.dim != 3:
            raise ValueError(f"`parent` must be 3-D for a rigid body, got {A2.dim}-D")
        Y, single = _state(y, 13)
        x, v, q, w = Y[:, :3], Y[:, 3:6], Y[:, 6:10], Y[:, 10:]
        check_nonzero_quaternions(q, "y (quaternion part y[6:10])")
        args = (t, x, v, q, w)
        F = None if self.force is None else _returned(self.force(*args), "force", x.shape, t)
        acc = np.broadcast_to(local_acceleration(A2, x, v, F, self.mass), x.shape)
        tau = np.zeros_like(w) if self.torque is None else np.broadcast_to(
            _returned(self.torque(*args), "torque", w.shape, t), w.shape)
        Iw = w @ self.inertia.T
        wdot = (tau - np.cross(w, Iw)) @ self._inv.T
        R2 = A2.rotation
        w2 = _natural(_mT(R2) @ A2._w @ R2)           # frame's rate in its own basis
        R1 = _quat.to_matrix(q)
        rel = w - _mv(_mT(R1), np.broadcast_to(w2, w.shape))  # body-frame relative rate
        qdot = 0.5 * _quat.multiply(q, np.concatenate([np.zeros((len(q), 1)), rel], axis=1))
        out = np.concatenate([v, acc, qdot, wdot], axis=1).T
        return out[:, 0].copy() if single else np.ascontiguousarray(out)


def __dir__():
    """The public names, ``__all__`` (not the imported helpers)."""
    return list(__all__)
