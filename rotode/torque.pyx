"""Torque sources tau(t, q, w) for `RigidBody` and the other rigid-body right-hand sides.

Every source returns the torque in BODY coordinates, given the time, the orientation q (a
nonzero quaternion of any length: R(q) = R(q/|q|), Rucker 2018 eq. 13) and the body angular
velocity w.

- `Constant` -- a constant torque given in the body or in the world frame;
- `Gravity` -- a heavy (Lagrange) top about a fixed pivot: world z points up, gravity is
  ``-g e_z``, ``com`` is the pivot-to-centre-of-mass vector in body coordinates, so
  ``tau = m g com x (R(q)^T (-e_z))`` and the potential energy is ``m g (R(q) com) . e_z``
  (Rucker 2018 sec. IV with com = h e_3; Rucker writes ``+m g h [e_3]x R^T e_3``, i.e. gravity
  along +z -- flip the sign of ``g`` or ``com`` to reproduce that convention exactly);
- `GravityGradient` -- the gravity-gradient torque of a circular orbit, ``3 n^2 o3 x (I o3)``
  (Hughes 1986, ch. 8; Markley & Crassidis 2014, sec. 3.3.6.1);
- `Compiled` -- a C function ``int tau(double t, const double* q, const double* w, double* out,
  const double* p)`` (a numba ``cfunc``, a `scipy.LowLevelCallable`, a ctypes function), called
  without the GIL, with parameters shared or one row per body;
- `Callable` -- any Python function ``tau(t, q, w)`` (q is passed normalised to unit length);
- `Sum` -- the sum of torques, ``a + b`` or ``sum([a, b, c])``.

Jacobians: C sources differentiate exactly with dual numbers from the same kernel; a
`Callable` (and a Cython subclass that overrides only ``evaluate``) is differentiated by central
finite differences of the torque term only (step ``6e-6 max(1, |x|)``, error ~1e-10 relative),
the rest of the Jacobian stays exact.

Cython users subclass `Torque` (``from rotode.torque cimport Torque``) and override
``cdef int evaluate(self, double t, const double* q, const double* w, double* tau)
noexcept nogil``, and ``evaluate_dual`` for exact Jacobians.  A Python subclass of any source
that overrides ``__call__`` is honoured: `as_torque` wraps it in a `Callable`, so every
right-hand side and stepper calls its Python ``__call__(t, q, w)`` (with the GIL, q normalised,
Jacobians by finite differences, as for any Python function), never the compiled ``evaluate``
of its base class; its ``potential_energy`` still gives the energy's potential.  Such an
override receives no body index, so a per-body source that overrides ``__call__`` is refused
(TypeError).
"""
import numpy as np

from rotode import _cfunc
from rotode._docfill import SHARED_DOCS, fill
from rotode._signature import ExtensionSignature as _ExtensionSignature
from rotode._validation import (
    as_body_index,
    call_vector,
    as_float_array,
    as_inertia,
    as_quaternions,
    as_real,
    check_nonzero_quaternions,
    as_frame,
    as_positive_scalar,
    as_rows,
    common_bodies,
    is_dask,
    python_override,
)

from cpython.ref cimport PyObject
cimport cython
from libc.math cimport cos, fabs, isfinite, sin, sqrt
from libc.stdint cimport uintptr_t
from libc.stdlib cimport malloc, free
from rotode._callback cimport call_vector3
from rotode.dual cimport *
from rotode.equations cimport mat3_vec
from rotode.quaternion cimport quat_rotate, quat_conj, quat_norm2


cdef extern from "_trig.hpp" namespace "rotode" nogil:
    # sin(x), cos(x) with the operations of the lanes' vector instance (rotode/_trig.hpp)
    void sin_cos_d(double x, double* s, double* c)

__all__ = ["Torque", "Constant", "Gravity", "GravityGradient", "Compiled", "Callable", "Sum",
           "as_torque"]

# the reasons of the failures of a compiled torque, as the runners report them with the body
# and time (rotode/_driver.pyx reports its STATUS_TORQUE_* codes with these texts)
_REASONS = {
    TORQUE_FAILED: "the torque returned a nonzero status",
    TORQUE_NONFINITE: "the torque returned a non-finite value (NaN or inf)",
}


# ---- kernels ------------------------------------------------------------------------------

cdef inline void world_to_body(const real* q, const double* v, real* out) noexcept nogil:
    """R(q)^T v for any nonzero q (OUT: out[3])."""
    cdef real qc[4]
    cdef real vr[3]
    quat_conj(q, qc)
    vr[0] = v[0]
    vr[1] = v[1]
    vr[2] = v[2]
    quat_rotate(qc, vr, out)


cdef inline void gravity_torque(const real* q, double mg, const double* com,
                                real* tau) noexcept nogil:
    """tau = m g com x R(q)^T (-e_z) (heavy top about its pivot, body frame) (OUT: tau[3])."""
    cdef double down[3]
    cdef real d[3]
    down[0] = 0.0
    down[1] = 0.0
    down[2] = -mg
    world_to_body(q, down, d)
    tau[0] = com[1] * d[2] - com[2] * d[1]
    tau[1] = com[2] * d[0] - com[0] * d[2]
    tau[2] = com[0] * d[1] - com[1] * d[0]


cdef inline void gravity_gradient_torque(const real* q, double t, double k, double n,
                                         double u0, const double* P, const double* Q,
                                         const double* I, real* tau) noexcept nogil:
    """tau = 3 n^2 o3 x (I o3), o3 = R(q)^T (-r) the nadir in the body, r = cos(u) P + sin(u) Q
    the unit position at the argument of latitude u = u0 + n t (Hughes 1986, ch. 8; Markley &
    Crassidis 2014, sec. 3.3.6.1) (OUT: tau[3])."""
    cdef double u = u0 + n * t
    cdef double cu, su
    sin_cos_d(u, &su, &cu)      # (not libm's: the SIMD lanes compute these bits, _models.hpp)
    cdef double nadir[3]
    cdef real o[3]
    cdef real io[3]
    nadir[0] = -(cu * P[0] + su * Q[0])
    nadir[1] = -(cu * P[1] + su * Q[1])
    nadir[2] = -(cu * P[2] + su * Q[2])
    world_to_body(q, nadir, o)
    mat3_vec(I, o, io)
    tau[0] = k * (o[1] * io[2] - o[2] * io[1])
    tau[1] = k * (o[2] * io[0] - o[0] * io[2])
    tau[2] = k * (o[0] * io[1] - o[1] * io[0])


# ---- classes ------------------------------------------------------------------------------

def _compiled_name(cls):
    """The name of the nearest compiled (Cython) class of a torque class."""
    for c in cls.__mro__:
        if "__pyx_vtable__" in vars(c):
            return c.__name__
    return "Torque"


cdef class Torque:
    """Base class of torque sources ``tau(t, q, w)`` (Cython subclasses override ``evaluate``).

    ``source(t, q, w)`` evaluates the body torque from Python (shape (3,)); ``source[i]`` is the
    source of body ``i`` of a per-body source; ``a + b`` (and ``sum([a, b, ...])``) is their
    `Sum`.  The base class takes no constructor arguments.

    Attributes
    ----------
    n_bodies : int or None
        None for one source; N when the parameters are given per body (one row per body of a
        batch run by a `rotode.RigidBody` with N states).
    error : Exception or None
        The exception of a failed evaluation in compiled code, held until the caller (a
        right-hand side or a stepper) raises it; None otherwise.

    See Also
    --------
    Constant, Gravity, GravityGradient, Compiled, Callable, Sum, as_torque, rotode.RigidBody

    Examples
    --------
    >>> from rotode import torque
    >>> source = torque.Gravity(mass=1.0, g=9.81, com=[0.0, 0.0, 0.5])
    >>> isinstance(source, torque.Torque), source.n_bodies
    (True, None)
    """

    # inspect.signature of the class (its constructor) and of an instance (its __call__),
    # read from the embedded signature lines (rotode/_signature.py)
    __signature__ = _ExtensionSignature()

    cdef int evaluate(self, double t, const double* q, const double* w,
                      double* tau) noexcept nogil:
        with gil:
            self.error = NotImplementedError(
                f"{type(self).__name__} does not implement `evaluate`")
        return TORQUE_ERROR

    cdef int evaluate_dual(self, double t, const dual* q, const dual* w,
                           dual* tau) noexcept nogil:
        # Central finite differences of `evaluate` with respect to the 7 inputs (q, w), chained
        # with the input tangents: d tau = sum_j (d tau/d x_j) d x_j.
        cdef double x[7]
        cdef double xp[7]
        cdef double f0[3]
        cdef double fp[3]
        cdef double fm[3]
        cdef double h
        cdef int i, j, k, status
        for i in range(4):
            x[i] = q[i].v
        for i in range(3):
            x[4 + i] = w[i].v
        status = self.evaluate(t, x, &x[4], f0)
        if status != TORQUE_OK:
            return status
        for k in range(3):
            tau[k] = dual(f0[k])
        for j in range(7):
            for i in range(7):
                xp[i] = x[i]
            h = 6e-6 * (fabs(x[j]) if fabs(x[j]) > 1.0 else 1.0)
            xp[j] = x[j] + h
            status = self.evaluate(t, xp, &xp[4], fp)
            if status != TORQUE_OK:
                return status
            xp[j] = x[j] - h
            status = self.evaluate(t, xp, &xp[4], fm)
            if status != TORQUE_OK:
                return status
            for k in range(3):
                for i in range(DUAL_N):
                    tau[k].d[i] = tau[k].d[i] + (fp[k] - fm[k]) / (2.0 * h) * (
                        q[j].d[i] if j < 4 else w[j - 4].d[i])
        return TORQUE_OK

    cdef Torque body(self, Py_ssize_t i):
        if self.n_bodies is None:
            return self
        return self._range(i, i + 1)[0]

    cdef list per_body(self, Py_ssize_t n):
        if self.n_bodies is None:
            return [self] * n
        return self._range(0, n)

    cdef list _range(self, Py_ssize_t start, Py_ssize_t stop):
        """The one-body sources of bodies start..stop-1 of a source with per-body parameters
        (`n_bodies` not None), which a subclass with such parameters overrides (`body` and
        `per_body` read it); this one gives the source itself for each."""
        return [self] * (stop - start)

    def _chunk_split(self):
        """A per-body source in parts, for chunks of bodies (rotode/_dask.py): its per-body
        parameters (name -> array with a leading axis N, NumPy or dask), its shared ones (name
        -> value) and, per per-body parameter, a row value that makes a valid one-body source
        (0 when not named); ``type(self)._chunk_join({**shared, **blocks})`` makes the source
        of a chunk from NumPy blocks of the per-body parameters."""
        raise TypeError(f"per-body {type(self).__name__} sources cannot be split in chunks")

    def __getitem__(self, i):
        """The source of body ``i`` of a per-body source (``n_bodies`` is not None)."""
        return self.body(as_body_index(i, self.n_bodies, type(self).__name__, self._lazy()))

    def _lazy(self):
        return False

    def _single(self, what):
        if self.n_bodies is not None:
            raise ValueError(f"{type(self).__name__} holds per-body parameters for "
                             f"{self.n_bodies} bodies: {what} needs one body's source "
                             "(take it with source[i]) or rotode.integrate with N states")

    def _check(self, int status, t=None):
        if status == TORQUE_OK:
            return
        err, self.error = self.error, None
        if err is not None:
            raise err
        if status in _REASONS:
            raise ValueError(f"{type(self).__name__}: {_REASONS[status]} at t = {t!r}")
        raise RuntimeError(f"{type(self).__name__} failed with status {status}")

    def _uses_w(self):
        """False when the torque depends on t and q only (an implicit method's torque kick
        is then its exact sub-flow, rotode/implicit.pyx)."""
        return True

    def __add__(self, other):
        """``a + b``: the `Sum` of this torque and another (a `Torque` or a Python callable
        ``tau(t, q, w)``)."""
        if isinstance(other, Torque) or callable(other):
            return Sum(self, other)
        return NotImplemented

    def __radd__(self, other):
        """``b + a`` for a Python callable ``b``; ``0 + a`` is ``a`` (so that ``sum([a, b])``
        is ``a + b``)."""
        if isinstance(other, Torque) or callable(other):
            return Sum(other, self)
        if type(other) is int and other == 0:
            return self
        return NotImplemented

    def __call__(self, t, q, w):
        """The body torque ``tau(t, q, w)``, shape (3,), for one orientation ``q`` (4,) and body
        angular velocity ``w`` (3,).
        """
        cdef double tt = as_real(t, "t")
        self._single("evaluating it")
        qa = as_quaternions(q, "q", batch=False)
        wa = as_float_array(w, "w", (3,), batch=False)
        out = np.empty(3)
        cdef const double[::1] qv = qa, wv = wa
        cdef double[::1] o = out
        self._check(self.evaluate(tt, &qv[0], &wv[0], &o[0]), t)
        return out

    def potential_energy(self, q):
        """Potential energy of a conservative torque at orientation ``q``, or None."""
        return None


cdef class Constant(Torque):
    """Constant torque ``tau`` given in ``frame`` "body" or "world".

    Parameters
    ----------
    tau : array_like, shape (3,) or (N, 3)
        The torque (N m).  Shape (3,) is one body's torque; (N, 3) (NumPy or dask) one torque
        per body of a batch (``n_bodies`` = N, e.g. dispersed disturbance torques of an
        ensemble; used through a `rotode.RigidBody` with N states).
    frame : {"body", "world"}, optional
        Frame of ``tau`` (default "body").  A world-frame torque is rotated into the body:
        ``R(q)^T tau``.

    Attributes
    ----------
    tau : ndarray, shape (3,) or (N, 3)
    frame : str
    n_bodies : int or None
        None for one torque, N for one per body.

    Raises
    ------
    ValueError
        For a shape other than (3,) or (N, 3), non-finite values or an unknown frame.

    See Also
    --------
    Gravity, Callable, as_torque

    Examples
    --------
    A world-frame torque about z seen by a body turned a quarter turn about x:

    >>> import numpy as np
    >>> from rotode import torque
    >>> source = torque.Constant([0.0, 0.0, 1.0], frame="world")
    >>> q = [np.cos(np.pi / 4), np.sin(np.pi / 4), 0.0, 0.0]
    >>> source(0.0, q, [0.0, 0.0, 0.0]).round(12) + 0.0
    array([0., 1., 0.])
    """

    def __init__(self, tau, frame="body"):
        rows, n = as_rows(tau, "tau", (3,))
        as_frame(frame)
        self.frame = frame
        self._world = frame == "world"
        self.n_bodies = n
        self._rows = rows if n is not None else None
        for i in range(3):
            self._tau[i] = rows[i] if n is None else np.nan

    @property
    def tau(self):
        """The torque, shape (3,), or (N, 3) for a per-body source."""
        if self._rows is not None:
            return self._rows
        return np.array([self._tau[0], self._tau[1], self._tau[2]])

    def _lazy(self):
        return is_dask(self._rows)

    def _uses_w(self):
        return False

    def _chunk_split(self):
        return {"tau": self._rows}, {"frame": self.frame}, {}

    @classmethod
    def _chunk_join(cls, values):
        return cls(values["tau"], values["frame"])

    cdef Torque body(self, Py_ssize_t i):
        if self._rows is None:
            return self
        cdef Constant c = Constant.__new__(Constant)
        cdef const double[:, ::1] r = self._rows
        c.frame = self.frame
        c._world = self._world
        c.n_bodies = None
        c._rows = None
        c._tau[0] = r[i, 0]
        c._tau[1] = r[i, 1]
        c._tau[2] = r[i, 2]
        return c

    cdef list per_body(self, Py_ssize_t n):
        if self._rows is None:
            return [self] * n
        cdef const double[:, ::1] r = self._rows
        cdef Py_ssize_t b
        cdef Constant c
        out = [None] * n
        for b in range(n):
            c = Constant.__new__(Constant)
            c.frame = self.frame
            c._world = self._world
            c._tau[0] = r[b, 0]
            c._tau[1] = r[b, 1]
            c._tau[2] = r[b, 2]
            out[b] = c
        return out

    cdef int evaluate(self, double t, const double* q, const double* w,
                      double* tau) noexcept nogil:
        if self._world:
            world_to_body(q, self._tau, tau)
        else:
            tau[0] = self._tau[0]
            tau[1] = self._tau[1]
            tau[2] = self._tau[2]
        return TORQUE_OK

    cdef int evaluate_dual(self, double t, const dual* q, const dual* w,
                           dual* tau) noexcept nogil:
        if self._world:
            world_to_body(q, self._tau, tau)
        else:
            tau[0] = dual(self._tau[0])
            tau[1] = dual(self._tau[1])
            tau[2] = dual(self._tau[2])
        return TORQUE_OK

    def __repr__(self):
        if self._rows is not None:
            return f"Constant(tau=<{self.n_bodies} bodies>, frame={self.frame!r})"
        return f"Constant(tau={self.tau.tolist()}, frame={self.frame!r})"


cdef class Gravity(Torque):
    """Gravity on a top about a fixed pivot: ``tau = m g com x R(q)^T (-e_z)`` (body frame).

    Parameters
    ----------
    mass : float or array_like, shape (N,)
        Mass m > 0.
    g : float or array_like, shape (N,)
        Gravitational acceleration (>= 0), acting along -z of the world.
    com : array_like, shape (3,) or (N, 3)
        Pivot-to-centre-of-mass vector in body coordinates (``[0, 0, h]`` for a Lagrange top).

    Any parameter given per body (NumPy or dask, leading axis N) makes a per-body source
    (``n_bodies`` = N) for a `rotode.RigidBody` with N states; the others are shared.

    Attributes
    ----------
    mass, g : float or ndarray
    com : ndarray, shape (3,) or (N, 3)
    n_bodies : int or None

    Raises
    ------
    ValueError
        For ``mass <= 0``, ``g < 0``, shapes that do not match, non-finite values or a torque
        that overflows.

    See Also
    --------
    Constant, rotode.RigidBody

    Notes
    -----
    Rucker 2018 sec. IV: ``w' = I^-1(-w x I w + m g h e_3 x R^T e_3)`` with ``I`` about the
    pivot; the potential energy ``m g (R com) . e_z`` makes ``1/2 w.I w + V`` and the world-z
    angular momentum ``(R I w) . e_z`` invariants (the inertia passed to the right-hand side must
    be the one about the pivot).  Rucker writes gravity along +z: flip the sign of ``g`` or
    ``com`` to reproduce that convention exactly.

    References
    ----------
    .. [1] C. Rucker, "Integrating Rotations using Non-Unit Quaternions", IEEE Robotics and
       Automation Letters 3(4), 2018, sec. IV.

    Examples
    --------
    A top tilted a quarter turn about x feels a torque about its x axis:

    >>> import numpy as np
    >>> from rotode import torque
    >>> top = torque.Gravity(mass=1.0, g=9.81, com=[0.0, 0.0, 0.5])
    >>> q = [np.cos(np.pi / 4), np.sin(np.pi / 4), 0.0, 0.0]
    >>> top(0.0, q, [0.0, 0.0, 0.0]).round(12) + 0.0
    array([4.905, 0.   , 0.   ])
    >>> float(top.potential_energy([1.0, 0.0, 0.0, 0.0]))      # upright: m g h
    4.905
    """

    def __init__(self, mass, g, com):
        ndims = [np.ndim(x) if is_dask(x) else as_float_array(x, name, finite=False).ndim
                 for x, name in ((mass, "mass"), (g, "g"), (com, "com"))]
        if ndims == [0, 0, 1]:
            m = as_positive_scalar(mass, "mass")
            gg = as_positive_scalar(g, "g", allow_zero=True)
            com = as_float_array(com, "com", (3,), batch=False)
            with np.errstate(over="ignore"):
                if not np.isfinite(m * gg * com).all():
                    raise ValueError("`mass` * `g` * `com` must be finite (the torque "
                                     f"overflows), got mass {m!r}, g {gg!r}, com {com.tolist()}")
            self._mg = m * gg
            for i in range(3):
                self._com[i] = com[i]
            self._mass = m
            self._g = gg
            self.n_bodies = None
            self._rows = None
            return
        ms, nm = as_rows(mass, "mass")
        gs, ng = as_rows(g, "g")
        cs, nc = as_rows(com, "com", (3,))
        n = common_bodies({"mass": nm, "g": ng, "com": nc})
        if not is_dask(ms) and not np.all(ms > 0):
            raise ValueError("`mass` must be > 0 for every body")
        if not is_dask(gs) and not np.all(gs >= 0):
            raise ValueError("`g` must be >= 0 for every body")
        if not (is_dask(ms) or is_dask(gs) or is_dask(cs)):
            with np.errstate(over="ignore", invalid="ignore"):
                if not np.isfinite(np.reshape(ms * gs, (-1, 1)) * np.reshape(cs, (-1, 3))).all():
                    raise ValueError("`mass` * `g` * `com` must be finite for every body (the "
                                     "torque overflows)")
        self.n_bodies = n
        self._rows = (ms, gs, cs)
        self._mg = self._mass = self._g = np.nan
        for i in range(3):
            self._com[i] = np.nan

    @property
    def mass(self):
        """Mass ``m``: a float, or the per-body array."""
        return self._mass if self._rows is None else self._rows[0]

    @property
    def g(self):
        """Gravitational acceleration ``g``: a float, or the per-body array."""
        return self._g if self._rows is None else self._rows[1]

    @property
    def com(self):
        """Pivot-to-centre-of-mass vector, shape (3,), or (3,) / (N, 3) per body."""
        if self._rows is not None:
            return self._rows[2]
        return np.array([self._com[0], self._com[1], self._com[2]])

    def _lazy(self):
        return self._rows is not None and any(is_dask(r) for r in self._rows)

    def _uses_w(self):
        return False

    def _chunk_split(self):
        per_body, shared = {}, {}
        for name, value, dims in (("mass", self.mass, 1), ("g", self.g, 1), ("com", self.com, 2)):
            (per_body if np.ndim(value) == dims else shared)[name] = value
        return per_body, shared, {"mass": 1.0}

    @classmethod
    def _chunk_join(cls, values):
        return cls(values["mass"], values["g"], values["com"])

    cdef list _range(self, Py_ssize_t start, Py_ssize_t stop):
        """The one-body sources of bodies start..stop-1 (parameters broadcast per body)."""
        ms, gs, cs = self._rows
        # a shared parameter is one row (index 0 for every body)
        cdef const double[:, ::1] mv = np.ascontiguousarray(np.reshape(ms, (-1, 1)))
        cdef const double[:, ::1] gv = np.ascontiguousarray(np.reshape(gs, (-1, 1)))
        cdef const double[:, ::1] cv = np.ascontiguousarray(np.reshape(cs, (-1, 3)))
        cdef Py_ssize_t b, mi, gi, ci
        cdef int k
        cdef Gravity c
        out = [None] * (stop - start)
        for b in range(start, stop):
            mi = b if mv.shape[0] > 1 else 0
            gi = b if gv.shape[0] > 1 else 0
            ci = b if cv.shape[0] > 1 else 0
            c = Gravity.__new__(Gravity)
            c._mass = mv[mi, 0]
            c._g = gv[gi, 0]
            c._mg = c._mass * c._g
            for k in range(3):
                c._com[k] = cv[ci, k]
            out[b - start] = c
        return out

    cdef int evaluate(self, double t, const double* q, const double* w,
                      double* tau) noexcept nogil:
        gravity_torque(q, self._mg, self._com, tau)
        return TORQUE_OK

    cdef int evaluate_dual(self, double t, const dual* q, const dual* w,
                           dual* tau) noexcept nogil:
        gravity_torque(q, self._mg, self._com, tau)
        return TORQUE_OK

    def potential_energy(self, q):
        """``m g (R(q) com) . e_z`` for q of shape (4,) or (4, k) (any nonzero length)."""
        self._single("the potential energy")
        q = as_float_array(q, "q")
        if q.ndim not in (1, 2) or q.shape[0] != 4:
            raise ValueError(f"`q` must have shape (4,) or (4, k), got {q.shape}")
        check_nonzero_quaternions(q.T, "q")
        n2 = np.sum(q * q, axis=0)
        w, x, y, z = q
        # third row of R(q) = R(q/|q|)
        r20 = 2.0 * (x * z - w * y) / n2
        r21 = 2.0 * (y * z + w * x) / n2
        r22 = 1.0 - 2.0 * (x * x + y * y) / n2
        c = self.com
        return self._mg * (r20 * c[0] + r21 * c[1] + r22 * c[2])

    def __repr__(self):
        if self._rows is not None:
            return f"Gravity(<per-body parameters of {self.n_bodies} bodies>)"
        return f"Gravity(mass={self._mass!r}, g={self._g!r}, com={self.com.tolist()})"


# ---- gravity gradient -------------------------------------------------------------------

_GG_SCALARS = ("mean_motion", "argument_of_latitude", "inclination", "raan")


def _sin_cos(x):
    """``(sin x, cos x)`` of a float64 array by rotode/_trig.hpp `sin_cos`, the pair that
    `GravityGradient` evaluates (tests: its accuracy against exact values)."""
    cdef const double[::1] xv = np.ascontiguousarray(x, dtype=np.float64).reshape(-1)
    s = np.empty(xv.shape[0])
    c = np.empty(xv.shape[0])
    cdef double[::1] sv = s
    cdef double[::1] cv = c
    cdef Py_ssize_t i
    for i in range(xv.shape[0]):
        sin_cos_d(xv[i], &sv[i], &cv[i])
    return s.reshape(np.shape(x)), c.reshape(np.shape(x))


def _gg_inertia(inertia):
    """The inertia of a `GravityGradient`: ``(I, N)``, I (3, 3) shared or (N, 3, 3) per body
    (checked as `rotode.RigidBody` checks it), or a dask (N, 3) / (N, 3, 3) kept lazy."""
    if is_dask(inertia):
        if not (inertia.ndim == 2 and inertia.shape[1] == 3
                or inertia.ndim == 3 and tuple(inertia.shape[1:]) == (3, 3)):
            raise ValueError("`inertia` as a dask array must have the per-body shape (N, 3) or "
                             f"(N, 3, 3), got {inertia.shape}")
        return inertia, int(inertia.shape[0])
    arr = as_float_array(inertia, "inertia", (), finite=False)
    if arr.shape in ((3,), (3, 3)):
        return as_inertia(arr, "inertia"), None
    if arr.ndim == 2 and arr.shape[1] == 3 and arr.shape[0] > 0:
        if not np.all(arr > 0):
            raise ValueError("`inertia` principal moments must be positive for every body")
        full = np.zeros((arr.shape[0], 3, 3))
        idx = np.arange(3)
        full[:, idx, idx] = arr
        return np.ascontiguousarray(as_inertia(full, "inertia")), arr.shape[0]
    if arr.ndim == 3 and arr.shape[1:] == (3, 3) and arr.shape[0] > 0:
        return np.ascontiguousarray(as_inertia(arr, "inertia")), arr.shape[0]
    raise ValueError("`inertia` must have shape (3,) (principal moments), (3, 3), or per body "
                     f"(N, 3) or (N, 3, 3), got {arr.shape}")


cdef void _gg_fill(GravityGradient c, const double* I, double n, double u0, double inc,
                   double raan) noexcept:
    """One body's parameters of `c` (the only place they are set, so that a body of a batch
    and its single source hold the same bits)."""
    cdef int k
    for k in range(9):
        c._I[k] = I[k]
    c._n = n
    c._k = 3.0 * n * n
    c._u0 = u0
    c._inc = inc
    c._raan = raan
    c._P[0] = cos(raan)             # the ascending node
    c._P[1] = sin(raan)
    c._P[2] = 0.0
    c._Q[0] = -sin(raan) * cos(inc)     # 90 degrees ahead of it in the orbit plane
    c._Q[1] = cos(raan) * cos(inc)
    c._Q[2] = sin(inc)
    c.n_bodies = None
    c._rows = None


cdef class GravityGradient(Torque):
    """The gravity-gradient torque of a circular orbit, ``tau = 3 n^2 o3 x (I o3)`` (body frame).

    The body's centre of mass moves on a circular orbit of mean motion ``n`` (rad/s); ``o3`` is
    the unit vector from the body towards the centre of the Earth (the nadir), in body
    coordinates.  The world frame is the inertial one (e.g. ECI); the orbit is given by its
    inclination ``i``, its right ascension of the ascending node ``raan`` and the argument of
    latitude ``u0`` at ``t = 0`` (the angle from the ascending node to the body, along the
    motion), so that at time ``t`` the unit position vector in the world is

    ``r(t) = cos(u) P + sin(u) Q``,  ``u = u0 + n t``,

    with ``P = (cos raan, sin raan, 0)`` (towards the ascending node) and
    ``Q = (-sin raan cos i, cos raan cos i, sin i)``; the nadir is ``o3 = R(q)^T (-r(t))``.

    Parameters
    ----------
    inertia : array_like, shape (3,), (3, 3), (N, 3) or (N, 3, 3)
        The body's inertia about its centre of mass in body coordinates (principal moments or
        the tensor; checked as `rotode.RigidBody` checks it).  It should be the inertia of the
        `rotode.RigidBody` it drives.
    mean_motion : float or array_like, shape (N,)
        The orbit's angular rate ``n = sqrt(mu / r^3)`` > 0 (rad/s).
    argument_of_latitude : float or array_like, shape (N,), optional
        ``u0``, the body's angle from the ascending node at ``t = 0`` (rad; default 0).
    inclination : float or array_like, shape (N,), optional
        ``i``, the angle between the orbit plane and the world x-y plane (rad; default 0: the
        orbit lies in the x-y plane, moving counter-clockwise about +z).
    raan : float or array_like, shape (N,), optional
        The right ascension of the ascending node, from world x about world z (rad; default 0).

    Any parameter given per body (NumPy or dask, leading axis N) makes a per-body source
    (``n_bodies`` = N) for a `rotode.RigidBody` with N states; the others are shared.

    Attributes
    ----------
    inertia : ndarray, shape (3, 3) or (N, 3, 3)
    mean_motion, argument_of_latitude, inclination, raan : float or ndarray
    n_bodies : int or None

    Raises
    ------
    ValueError
        For an invalid inertia, ``mean_motion <= 0``, non-finite values or per-body parameters
        of different lengths.

    See Also
    --------
    Gravity, Sum, rotode.RigidBody

    Notes
    -----
    The torque of a point-mass Earth on a body small against its orbit radius ``r``, to first
    order in the body's size: ``tau = (3 mu / r^3) o3 x (I o3)`` (Hughes 1986, ch. 8; Markley &
    Crassidis 2014, sec. 3.3.6.1, with ``o3`` their nadir unit vector ``n_B``); on a circular
    orbit ``mu / r^3 = n^2``.  In the local-vertical local-horizontal frame (body z to nadir,
    body x along the velocity, body y against the orbit normal) an attitude at rest in that
    frame, ``w_body = (0, -n, 0)``, is an equilibrium, and with ``I_y > I_x > I_z`` a small
    pitch oscillates with the angular frequency ``n sqrt(3 (I_x - I_z) / I_y)`` (Hughes 1986,
    ch. 8).  The torque does not depend on ``w``: an implicit method's torque kick is exact.

    References
    ----------
    .. [1] P. C. Hughes, Spacecraft Attitude Dynamics, Wiley, 1986, ch. 8.
    .. [2] F. L. Markley and J. L. Crassidis, Fundamentals of Spacecraft Attitude Determination
       and Control, Springer, 2014, sec. 3.3.6.1.

    Examples
    --------
    A satellite along the local vertical (body z to nadir at ``t = 0``) feels no torque;
    pitched by 0.1 rad about body y it feels a restoring torque about y:

    >>> import numpy as np
    >>> from rotode import quaternion, torque
    >>> n = 1.1e-3
    >>> gg = torque.GravityGradient([90.0, 100.0, 40.0], mean_motion=n)
    >>> lvlh = quaternion.from_matrix([[0.0, 0.0, -1.0], [1.0, 0.0, 0.0], [0.0, -1.0, 0.0]])
    >>> bool(np.abs(gg(0.0, lvlh, [0.0, -n, 0.0])).max() < 1e-20)
    True
    >>> pitched = quaternion.multiply(lvlh, [np.cos(0.05), 0.0, np.sin(0.05), 0.0])
    >>> (gg(0.0, pitched, [0.0, -n, 0.0]) / n**2).round(6) + 0.0
    array([  0.    , -14.9002,   0.    ])
    """

    def __init__(self, inertia, mean_motion, argument_of_latitude=0.0, inclination=0.0,
                 raan=0.0):
        I, n_i = _gg_inertia(inertia)
        values, counts = {"inertia": I}, {"inertia": n_i}
        for name, value in zip(_GG_SCALARS, (mean_motion, argument_of_latitude, inclination,
                                             raan)):
            values[name], counts[name] = as_rows(value, name)
        mm = values["mean_motion"]
        if not is_dask(mm) and not np.all(mm > 0):
            got = f"got {mm.tolist()!r}" if mm.ndim == 0 else "not for every body"
            raise ValueError(f"`mean_motion` must be > 0, {got}")
        n = common_bodies(counts)
        cdef const double[::1] iv
        if n is None:
            iv = np.ascontiguousarray(I).reshape(9)
            _gg_fill(self, &iv[0], float(mm), float(values["argument_of_latitude"]),
                     float(values["inclination"]), float(values["raan"]))
            return
        self.n_bodies = n
        self._rows = {name: (float(v) if counts[name] is None and name != "inertia" else v)
                      for name, v in values.items()}
        self._n = self._k = self._u0 = self._inc = self._raan = np.nan

    def _param(self, name, value):
        return value if self._rows is None else self._rows[name]

    @property
    def inertia(self):
        """The inertia tensor, shape (3, 3), or the per-body array."""
        if self._rows is not None:
            return self._rows["inertia"]
        return np.array([self._I[k] for k in range(9)]).reshape(3, 3)

    @property
    def mean_motion(self):
        """The orbit's rate ``n`` (rad/s): a float, or the per-body array."""
        return self._param("mean_motion", self._n)

    @property
    def argument_of_latitude(self):
        """``u0`` (rad) at ``t = 0``: a float, or the per-body array."""
        return self._param("argument_of_latitude", self._u0)

    @property
    def inclination(self):
        """The orbit's inclination (rad): a float, or the per-body array."""
        return self._param("inclination", self._inc)

    @property
    def raan(self):
        """The right ascension of the ascending node (rad): a float, or the per-body array."""
        return self._param("raan", self._raan)

    def _lazy(self):
        return self._rows is not None and any(is_dask(v) for v in self._rows.values())

    def _uses_w(self):
        return False

    def _chunk_split(self):
        per_body, shared = {}, {}
        for name, v in self._rows.items():
            pb = is_dask(v) or np.ndim(v) == (3 if name == "inertia" else 1)
            (per_body if pb else shared)[name] = v
        full = "inertia" in per_body and np.ndim(per_body["inertia"]) == 3
        return per_body, shared, {"mean_motion": 1.0, "inertia": np.eye(3) if full else 1.0}

    @classmethod
    def _chunk_join(cls, values):
        return cls(values["inertia"], *(values[name] for name in _GG_SCALARS))

    cdef void orbit(self, double* k, double* n, double* u0, double* P, double* Q,
                    double* I) noexcept:
        cdef int i
        k[0] = self._k
        n[0] = self._n
        u0[0] = self._u0
        for i in range(3):
            P[i] = self._P[i]
            Q[i] = self._Q[i]
        for i in range(9):
            I[i] = self._I[i]

    cdef list _range(self, Py_ssize_t start, Py_ssize_t stop):
        """The one-body sources of bodies start..stop-1 (a shared parameter is one row, index
        0 for every body)."""
        cdef const double[:, ::1] iv = np.ascontiguousarray(
            np.reshape(self._rows["inertia"], (-1, 9)))
        cdef const double[:, ::1] sv = np.ascontiguousarray(np.stack(np.broadcast_arrays(
            *[np.reshape(self._rows[name], (-1,)) for name in _GG_SCALARS]), axis=1))
        cdef Py_ssize_t b, r
        cdef GravityGradient c
        out = [None] * (stop - start)
        for b in range(start, stop):
            r = b if sv.shape[0] > 1 else 0
            c = GravityGradient.__new__(GravityGradient)
            _gg_fill(c, &iv[b if iv.shape[0] > 1 else 0, 0], sv[r, 0], sv[r, 1], sv[r, 2],
                     sv[r, 3])
            out[b - start] = c
        return out

    cdef int evaluate(self, double t, const double* q, const double* w,
                      double* tau) noexcept nogil:
        gravity_gradient_torque(q, t, self._k, self._n, self._u0, self._P, self._Q, self._I,
                                tau)
        return TORQUE_OK

    cdef int evaluate_dual(self, double t, const dual* q, const dual* w,
                           dual* tau) noexcept nogil:
        gravity_gradient_torque(q, t, self._k, self._n, self._u0, self._P, self._Q, self._I,
                                tau)
        return TORQUE_OK

    def __repr__(self):
        if self._rows is not None:
            return f"GravityGradient(<per-body parameters of {self.n_bodies} bodies>)"
        return (f"GravityGradient(inertia={self.inertia.tolist()}, mean_motion={self._n!r}, "
                f"argument_of_latitude={self._u0!r}, inclination={self._inc!r}, "
                f"raan={self._raan!r})")


cdef class _GravityGradientTangent(Torque):
    """The derivative of a `GravityGradient`'s torque along one direction of its parameters,
    at a given state: ``dtau = dk o3 x (I o3) + k (do3 x (I o3) + o3 x (I do3 + dI o3))``,
    ``do3 = R(q)^T dnadir``, ``dnadir = -(du (-sin(u) P + cos(u) Q) + cos(u) dP + sin(u) dQ)``,
    ``du = du0 + dn t`` (`gravity_gradient_torque` differentiated by hand).  A unit of the
    dual-number replay (rotode/_tangent.pyx `_torque_directions`)."""

    cdef double _k, _n, _u0         # the source's values (GravityGradient's fields)
    cdef double _P[3]
    cdef double _Q[3]
    cdef double _I[9]
    cdef double _dk, _dn, _du0      # the direction
    cdef double _dP[3]
    cdef double _dQ[3]
    cdef double _dI[9]

    cdef int evaluate(self, double t, const double* q, const double* w,
                      double* tau) noexcept nogil:
        cdef double u = self._u0 + self._n * t, du = self._du0 + self._dn * t
        cdef double cu, su
        cdef double nadir[3]
        cdef double dnadir[3]
        cdef double o[3]
        cdef double dov[3]
        cdef double io[3]
        cdef double dio[3]
        cdef double eo[3]
        cdef int k
        sin_cos_d(u, &su, &cu)
        for k in range(3):
            nadir[k] = -(cu * self._P[k] + su * self._Q[k])
            dnadir[k] = -(du * (cu * self._Q[k] - su * self._P[k]) + cu * self._dP[k]
                          + su * self._dQ[k])
        world_to_body(q, nadir, o)
        world_to_body(q, dnadir, dov)
        mat3_vec(self._I, o, io)
        mat3_vec(self._I, dov, dio)
        mat3_vec(self._dI, o, eo)
        for k in range(3):
            dio[k] = dio[k] + eo[k]
        tau[0] = (self._dk * (o[1] * io[2] - o[2] * io[1])
                  + self._k * (dov[1] * io[2] - dov[2] * io[1] + o[1] * dio[2] - o[2] * dio[1]))
        tau[1] = (self._dk * (o[2] * io[0] - o[0] * io[2])
                  + self._k * (dov[2] * io[0] - dov[0] * io[2] + o[2] * dio[0] - o[0] * dio[2]))
        tau[2] = (self._dk * (o[0] * io[1] - o[1] * io[0])
                  + self._k * (dov[0] * io[1] - dov[1] * io[0] + o[0] * dio[1] - o[1] * dio[0]))
        return TORQUE_OK


def _gravity_gradient_tangent(GravityGradient gg, name, dI=None):
    """The torque ``dtau/dp`` of one parameter direction of the one-body `gg` (a private
    helper of the sensitivities, rotode/_tangent.pyx).

    Parameters
    ----------
    gg : GravityGradient
        One body's source (no per-body parameters).
    name : str
        ``"inertia"`` (the direction `dI`, a (3, 3) symmetric matrix) or one of
        `_GG_SCALARS`.
    dI : array_like, shape (3, 3), optional
        The inertia's direction (``name == "inertia"`` only).

    Returns
    -------
    Torque
        Its ``evaluate(t, q, w)`` is the derivative of ``gg``'s torque at that state.
    """
    if gg._rows is not None:
        raise ValueError("gravity_gradient_tangent takes a one-body GravityGradient")
    cdef _GravityGradientTangent u = _GravityGradientTangent.__new__(_GravityGradientTangent)
    cdef int k
    cdef double si = sin(gg._inc), ci = cos(gg._inc), sr = sin(gg._raan), cr = cos(gg._raan)
    gg.orbit(&u._k, &u._n, &u._u0, u._P, u._Q, u._I)
    u.n_bodies = None
    u._dk = u._dn = u._du0 = 0.0
    for k in range(3):
        u._dP[k] = u._dQ[k] = 0.0
    for k in range(9):
        u._dI[k] = 0.0
    if name == "inertia":
        E = np.ascontiguousarray(dI, dtype=float).reshape(9)
        for k in range(9):
            u._dI[k] = E[k]
    elif name == "mean_motion":             # k = 3 n^2, u = u0 + n t
        u._dk = 6.0 * gg._n
        u._dn = 1.0
    elif name == "argument_of_latitude":
        u._du0 = 1.0
    elif name == "inclination":             # Q = (-sin raan cos i, cos raan cos i, sin i)
        u._dQ[0] = sr * si
        u._dQ[1] = -cr * si
        u._dQ[2] = ci
    elif name == "raan":                    # P = (cos raan, sin raan, 0)
        u._dP[0] = -sr
        u._dP[1] = cr
        u._dQ[0] = -cr * ci
        u._dQ[1] = -sr * ci
    else:
        raise ValueError(f"unknown GravityGradient parameter {name!r}; the valid ones are "
                         f"{('inertia',) + _GG_SCALARS}")
    return u


# ---- compiled functions -----------------------------------------------------------------

#: The C signature of a compiled torque function (rotode/torque.pxd's `torque_fn`).
C_SIGNATURE = "int (double, const double *, const double *, double *, const double *)"

# what `Compiled` accepts, for the checks and messages of rotode/_cfunc.py
_SIGNATURE = _cfunc.CSignature(
    C_SIGNATURE, "int tau(double t, const double* q, const double* w, double* out, "
    "const double* p)", 4, "rotode.torque.Compiled", python="rotode.torque.Callable")


def _compiled_params(params):
    """``(params, N)``: None, a read-only float64 copy of shape (m,) (shared, N None) or
    (N, m) (one row per body), or a dask (N, m) kept lazy."""
    if params is None:
        return None, None
    if is_dask(params):
        if params.ndim != 2 or params.shape[1] == 0:
            raise ValueError("`params` as a dask array must have the per-body shape (N, m), "
                             f"m >= 1, got {params.shape}")
        return params, int(params.shape[0])
    arr = as_float_array(params, "params", finite=False)
    if arr.ndim not in (1, 2) or arr.shape[arr.ndim - 1] == 0 or arr.shape[0] == 0:
        raise ValueError("`params` must have shape (m,) (shared) or (N, m) (one row per body), "
                         f"m >= 1, got {arr.shape}")
    arr = np.array(arr, dtype=np.float64, order="C", copy=True)
    arr.flags.writeable = False
    return arr, (int(arr.shape[0]) if arr.ndim == 2 else None)


cdef Compiled _compiled_row(Compiled src, Py_ssize_t i):
    """The one-body source of row i of a per-body `Compiled` (its function, that row)."""
    cdef Compiled c = Compiled.__new__(Compiled)
    cdef const double[:, ::1] pv = src._params
    c._f = src._f
    c.fun = src.fun
    c._params = src._params[i]
    c._p = &pv[i, 0]
    c.n_bodies = None
    return c


def _compiled_restore(shipped, params):
    """A `Compiled` torque unpickled (`Compiled.__reduce__`)."""
    return Compiled(shipped.fun, params)


cdef class Compiled(Torque):
    """A torque written as a C function: a numba ``cfunc``, a `scipy.LowLevelCallable` or a
    ctypes function, called without the GIL.

    Parameters
    ----------
    fun : numba cfunc, scipy.LowLevelCallable or ctypes function
        ``int tau(double t, const double* q, const double* w, double* out, const double* p)``
        (`Compiled.c_signature`; `Compiled.signature` is numba's, for
        ``@numba.cfunc(rotode.torque.Compiled.signature)``): ``q`` the orientation (4, a unit
        quaternion, scalar first, body to world), ``w`` the body angular velocity (3), ``out``
        the torque in body coordinates (3, OUT), ``p`` the body's parameters (NULL without
        ``params``).  It returns 0; anything else stops the body's run.
    params : array_like, shape (m,) or (N, m), optional
        Parameters handed to ``function``: one row shared by every body, or one row per body
        (``n_bodies`` = N; body ``i`` of a batch gets row ``i``; NumPy or dask).  A copy is
        kept.

    Attributes
    ----------
    fun : object
        The function as given (kept alive while the source is).
    params : ndarray or None
        The parameters (read-only), or None.
    signature : numba signature
        ``intc(float64, CPointer(float64), CPointer(float64), CPointer(float64),
        CPointer(float64))`` (reading it imports numba).
    c_signature : str
        `C_SIGNATURE`, as a `scipy.LowLevelCallable` carries it.
    n_bodies : int or None
        N for per-body ``params``, else None.

    Raises
    ------
    TypeError
        For anything else than a compiled function of the signature (a Python callable: use
        `Callable`), naming the expected signature.
    ValueError
        For ``params`` of another shape.

    See Also
    --------
    Callable : a Python function (called with the GIL).
    rotode.ODE : a user's whole equations, compiled the same way.

    Notes
    -----
    ``q`` is passed normalised to unit length (the state's quaternion may drift from it).
    **Failures** are reported, never silent: a nonzero return or a NaN or inf in ``out``
    stops that body at that step (its later rows are NaN; the other bodies of a batch run on)
    and the result's ``message`` names the body, the time and the reason ("the torque returned
    a nonzero status", "the torque returned a non-finite value").  Evaluated from Python
    (``source(t, q, w)``) a failure raises ValueError.  Jacobians (``RigidBody.jac``, the
    implicit methods) use central finite differences of this torque, as for `Callable`.  The
    source pickles when ``fun`` does (a ctypes function or a numba ``cfunc`` does not;
    dask's threads need no pickling).

    Examples
    --------
    A damping torque ``-c w`` in C, through ctypes (the same with numba:
    ``@numba.cfunc(torque.Compiled.signature)``):

    >>> import ctypes
    >>> import numpy as np
    >>> from rotode import torque
    >>> double_p = ctypes.POINTER(ctypes.c_double)
    >>> proto = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_double, double_p, double_p, double_p,
    ...                          double_p)
    >>> def damping(t, q, w, out, p):
    ...     for k in range(3):
    ...         out[k] = -p[0] * w[k]
    ...     return 0
    >>> source = torque.Compiled(proto(damping), params=[0.1])
    >>> source(0.0, [1.0, 0.0, 0.0, 0.0], [1.0, 2.0, 3.0])
    array([-0.1, -0.2, -0.3])
    """

    signature = _cfunc.NumbaSignature(_SIGNATURE)
    c_signature = C_SIGNATURE

    def __init__(self, fun, params=None):
        _, address, self.fun = _cfunc.address(fun, _SIGNATURE, python=False)
        self._f = <torque_fn><uintptr_t>address
        self._params, self.n_bodies = _compiled_params(params)
        cdef const double[::1] pv
        self._p = NULL
        if self._params is not None and self.n_bodies is None:
            pv = self._params
            self._p = &pv[0]

    @property
    def params(self):
        """The parameters, shape (m,) or (N, m) (read-only), or None."""
        return self._params

    def _lazy(self):
        return is_dask(self._params)

    def _chunk_split(self):
        return {"params": self._params}, {"fun": _cfunc.ShippedFunction(self.fun)}, {}

    @classmethod
    def _chunk_join(cls, values):
        return cls(values["fun"].fun, values["params"])

    def __reduce__(self):
        # (a numba cfunc travels as its Python source, compiled again in another process; a C
        # address is refused there: `_cfunc.ShippedFunction`)
        return _compiled_restore, (_cfunc.ShippedFunction(self.fun), self._params)

    cdef Torque body(self, Py_ssize_t i):
        if self.n_bodies is None:
            return self
        return _compiled_row(self, i)

    cdef list per_body(self, Py_ssize_t n):
        if self.n_bodies is None:
            return [self] * n
        cdef Py_ssize_t b
        return [_compiled_row(self, b) for b in range(n)]

    cdef int evaluate(self, double t, const double* q, const double* w,
                      double* tau) noexcept nogil:
        cdef double qn[4]
        cdef double s
        if self._f == NULL:
            return TORQUE_FAILED
        s = 1.0 / sqrt(quat_norm2(q))
        qn[0] = q[0] * s
        qn[1] = q[1] * s
        qn[2] = q[2] * s
        qn[3] = q[3] * s
        if self._f(t, qn, w, tau, self._p) != 0:
            return TORQUE_FAILED
        if not (isfinite(tau[0]) and isfinite(tau[1]) and isfinite(tau[2])):
            return TORQUE_NONFINITE
        return TORQUE_OK

    def __repr__(self):
        name = getattr(self.fun, "__name__", type(self.fun).__name__)
        if self._params is None:
            what = "None"
        elif self.n_bodies is not None:
            what = f"<{self.n_bodies} bodies>"
        else:
            what = repr(self._params.tolist())
        return f"Compiled({name}, params={what})"


# ---- sums -------------------------------------------------------------------------------

cdef Sum _new_sum(tuple parts, object n_bodies):
    """A `Sum` of checked torques (the parts' pointers in C for the nogil loop)."""
    cdef Sum s = Sum.__new__(Sum)
    _sum_set(s, parts, n_bodies)
    return s


cdef void _sum_set(Sum s, tuple parts, object n_bodies) except *:
    cdef Py_ssize_t k
    cdef PyObject** ptr = <PyObject**>malloc(max(len(parts), 1) * sizeof(PyObject*))
    if ptr == NULL:
        raise MemoryError()
    for k in range(len(parts)):
        ptr[k] = <PyObject*>parts[k]          # borrowed: `parts` holds them
    free(s._ptr)
    s._ptr = ptr
    s.parts = parts
    s._count = len(parts)
    s.n_bodies = n_bodies


cdef int _sum_failed(PyObject* s, PyObject* part, int status) noexcept nogil:
    """A part's failure as the sum's: a Python error moves to the sum, where the caller looks
    for it.  Bodies on several threads share the part: between a thread's failed call and its
    move here, another thread's move may already have taken the part's error (its own or this
    one's); the sum then holds an error already, which an empty part must not clear."""
    if status == TORQUE_ERROR:
        with gil:
            if (<Torque>part).error is not None:
                (<Torque>s).error = (<Torque>part).error
                (<Torque>part).error = None
    return status


cdef inline int _part_evaluate(PyObject* part, double t, const real* q, const real* w,
                               real* tau) noexcept nogil:
    """A part's torque in the scalar type of the evaluation (value, or dual for .jac)."""
    if real is double:
        return (<Torque>part).evaluate(t, q, w, tau)
    else:
        return (<Torque>part).evaluate_dual(t, q, w, tau)


cdef inline int _sum_evaluate(Sum s, double t, const real* q, const real* w,
                              real* tau) noexcept nogil:
    """`Sum.evaluate` and `Sum.evaluate_dual`: the parts' torques added in their order."""
    cdef real part[3]
    cdef Py_ssize_t k
    cdef int st
    if real is double:
        tau[0] = tau[1] = tau[2] = 0.0
    else:
        tau[0] = tau[1] = tau[2] = dual(0.0)
    if s._count == 0:
        return TORQUE_OK
    st = _part_evaluate(s._ptr[0], t, q, w, tau)
    if st != TORQUE_OK:
        return _sum_failed(<PyObject*>s, s._ptr[0], st)
    for k in range(1, s._count):
        st = _part_evaluate(s._ptr[k], t, q, w, part)
        if st != TORQUE_OK:
            return _sum_failed(<PyObject*>s, s._ptr[k], st)
        tau[0] = tau[0] + part[0]
        tau[1] = tau[1] + part[1]
        tau[2] = tau[2] + part[2]
    return TORQUE_OK


cdef class Sum(Torque):
    """The sum of torques, ``tau = tau_1 + tau_2 + ...`` (body frame); ``a + b`` and
    ``sum([a, b, c])`` make one.

    Parameters
    ----------
    *parts : Torque, array_like, callable
        The torques (anything `as_torque` takes but None); a `Sum` among them contributes its
        parts.  Parts with per-body parameters must hold the same number of bodies N; the sum
        is then per body (``n_bodies`` = N; body ``i`` sums the parts' bodies ``i``).

    Attributes
    ----------
    parts : tuple of Torque
    n_bodies : int or None

    Raises
    ------
    TypeError
        Without parts, or for a part `as_torque` refuses or None.
    ValueError
        For per-body parts of different lengths.

    See Also
    --------
    as_torque

    Notes
    -----
    The parts are evaluated in order and added left to right, ``(tau_1 + tau_2) + tau_3``;
    compiled parts are summed without the GIL.  A part's failure is the sum's (its Python
    error is re-raised, a compiled part's status reported).  The potential energy is the sum
    of the parts' when every part has one, else None.

    Examples
    --------
    Gravity on a top and a constant body torque:

    >>> import numpy as np
    >>> from rotode import torque
    >>> total = torque.Gravity(1.0, 9.81, [0.0, 0.0, 0.5]) + torque.Constant([0.0, 0.0, 0.1])
    >>> total
    Sum(Gravity(mass=1.0, g=9.81, com=[0.0, 0.0, 0.5]), Constant(tau=[0.0, 0.0, 0.1], frame='body'))
    >>> q = [np.cos(np.pi / 4), np.sin(np.pi / 4), 0.0, 0.0]
    >>> total(0.0, q, [0.0, 0.0, 0.0]).round(12) + 0.0
    array([4.905, 0.   , 0.1  ])
    """

    def __init__(self, *parts):
        flat = []
        for k, part in enumerate(parts):
            tq = as_torque(part, f"parts[{k}]")
            if tq is None:
                raise TypeError(f"Sum: `parts[{k}]` is None (a torque-free part adds nothing; "
                                "leave it out)")
            flat.extend(tq.parts if type(tq) is Sum else (tq,))
        if not flat:
            raise TypeError("Sum needs at least one torque")
        n = common_bodies({f"parts[{k}]": p.n_bodies for k, p in enumerate(flat)})
        _sum_set(self, tuple(flat), n)

    def __dealloc__(self):
        free(self._ptr)

    def __reduce__(self):
        return type(self), self.parts

    def _lazy(self):
        return any(p._lazy() for p in self.parts)

    def _uses_w(self):
        return any(p._uses_w() for p in self.parts)

    def _chunk_split(self):
        per_body, recipe, placeholders = {}, [], {}
        for k, part in enumerate(self.parts):
            if part.n_bodies is None:
                recipe.append((None, part))
                continue
            pb, shared, ph = part._chunk_split()
            per_body.update({f"{k}:{name}": v for name, v in pb.items()})
            placeholders.update({f"{k}:{name}": v for name, v in ph.items()})
            recipe.append((type(part), shared))
        return per_body, {"parts": tuple(recipe)}, placeholders

    @classmethod
    def _chunk_join(cls, values):
        parts = []
        for k, (kind, shared) in enumerate(values["parts"]):
            prefix = f"{k}:"
            parts.append(shared if kind is None else kind._chunk_join(
                {**shared, **{name[len(prefix):]: v for name, v in values.items()
                              if name.startswith(prefix)}}))
        return cls(*parts)

    cdef Torque body(self, Py_ssize_t i):
        if self.n_bodies is None:
            return self
        return _new_sum(tuple([(<Torque>p).body(i) for p in self.parts]), None)

    cdef list per_body(self, Py_ssize_t n):
        if self.n_bodies is None:
            return [self] * n
        cdef Py_ssize_t b
        columns = [(<Torque>p).per_body(n) for p in self.parts]
        return [_new_sum(tuple([c[b] for c in columns]), None) for b in range(n)]

    cdef int evaluate(self, double t, const double* q, const double* w,
                      double* tau) noexcept nogil:
        return _sum_evaluate(self, t, q, w, tau)

    cdef int evaluate_dual(self, double t, const dual* q, const dual* w,
                           dual* tau) noexcept nogil:
        return _sum_evaluate(self, t, q, w, tau)

    def potential_energy(self, q):
        """The sum of the parts' potential energies at ``q``, or None when a part has none."""
        self._single("the potential energy")
        energies = [p.potential_energy(q) for p in self.parts]
        if any(e is None for e in energies):
            return None
        return sum(energies[1:], energies[0])

    def __repr__(self):
        if self.n_bodies is not None:
            return f"Sum(<{len(self.parts)} parts, per-body parameters of {self.n_bodies} bodies>)"
        return f"Sum({', '.join(map(repr, self.parts))})"


# (a filled-in docstring, whose first line is the signature embedsignature would write)
@cython.embedsignature(False)
cdef class Callable(Torque):
    __doc__ = fill("""Callable(function)

    Wrap a Python function ``tau(t, q, w) -> body torque, shape (3,)``.

    Parameters
    ----------
    function : callable
        ``tau(t, q, w)``: ``q`` is passed normalised to unit length (shape (4,)), ``w`` is the
        body angular velocity (shape (3,)); it returns three finite real numbers (body frame).

    %(callable_wrapper)s

    Notes
    -----
    Every evaluation takes the GIL.  Jacobians use central finite differences of this term (see
    the module notes).  ``n_bodies`` is None: the function serves every body.

    Examples
    --------
    A damping torque:

    >>> from rotode import torque
    >>> damping = torque.Callable(lambda t, q, w: -0.1 * w)
    >>> damping(0.0, [1.0, 0.0, 0.0, 0.0], [1.0, 2.0, 3.0])
    array([-0.1, -0.2, -0.3])
    """, {**SHARED_DOCS, "see_also": "as_torque"})

    def __init__(self, function):
        if not callable(function):
            raise TypeError("torque.Callable: `function` must be callable tau(t, q, w), got "
                            f"{type(function).__name__}")
        self.function = function

    cdef int evaluate(self, double t, const double* q, const double* w,
                      double* tau) noexcept nogil:
        cdef double s = 1.0 / sqrt(quat_norm2(q))
        with gil:
            err = call_vector3(call_vector, self.function, "torque callable", t,
                               ((q[0] * s, q[1] * s, q[2] * s, q[3] * s), (w[0], w[1], w[2])),
                               tau)
            if err is None:
                return TORQUE_OK
            self.error = err
            return TORQUE_ERROR

    def potential_energy(self, q):
        """The potential energy of a wrapped `Torque` (a Python subclass overriding
        ``__call__``, see `as_torque`): its own ``potential_energy``; None for a function."""
        if isinstance(self.function, Torque):
            return self.function.potential_energy(q)
        return None

    def __repr__(self):
        return f"Callable({self.function!r})"


def as_torque(torque, name="torque"):
    """A `Torque` from None, a source, an array or a callable.

    Parameters
    ----------
    torque : Torque, array_like, callable or None
        None (torque-free) gives None; a source is returned as it is; an array (body frame,
        (3,), or (N, 3) per body) becomes a `Constant`; a callable ``tau(t, q, w)`` a
        `Callable`.  A Python subclass of a source that overrides ``__call__`` becomes a
        `Callable` of it (its ``__call__`` gives the torque, not its base's compiled
        ``evaluate``).
    name : str, optional
        The argument's name in error messages (default "torque").

    Returns
    -------
    Torque or None

    Raises
    ------
    TypeError
        For a string, or a Python subclass overriding ``__call__`` with per-body parameters (its
        ``__call__`` receives no body index).
    ValueError
        For an array of the wrong shape or with non-finite values.

    See Also
    --------
    Constant, Callable

    Examples
    --------
    >>> from rotode import torque
    >>> torque.as_torque([0.0, 0.0, 1.0])
    Constant(tau=[0.0, 0.0, 1.0], frame='body')
    >>> torque.as_torque(None) is None
    True
    """
    if torque is None:
        return None
    if isinstance(torque, Torque):
        if not python_override(type(torque), "__call__"):
            return torque
        if torque.n_bodies is not None:
            raise TypeError(
                f"`{name}` is a {type(torque).__name__}, a Python subclass of "
                f"rotode.torque.{_compiled_name(type(torque))} that overrides `__call__`, with "
                f"per-body parameters for {torque.n_bodies} bodies: its `__call__(t, q, w)` "
                "receives no body index. Give one source per body (a list of rotode.RigidBody, "
                "one per body), or a compiled source (a Cython subclass of rotode.torque.Torque "
                "overriding `evaluate`)")
        return Callable(torque)
    if callable(torque):
        return Callable(torque)
    if isinstance(torque, (str, bytes)):
        raise TypeError(f"`{name}` must be a Torque source, an array of shape (3,) or (N, 3) or a "
                        f"callable tau(t, q, w), got {type(torque).__name__}")
    rows, _ = as_rows(torque, name, (3,))
    return Constant(rows, "body")


def __dir__():
    """The public names, ``__all__`` (not the imported helpers)."""
    return list(__all__)
