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
- `Callable` -- any Python function ``tau(t, q, w)`` (q is passed normalised to unit length).

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

from rotode._signature import ExtensionSignature as _ExtensionSignature
from rotode._validation import (
    as_body_index,
    as_callable_vector,
    as_float_array,
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

from libc.math cimport fabs, sqrt
from rotode.dual cimport *
from rotode.quaternion cimport quat_rotate, quat_conj, quat_norm2

__all__ = ["Torque", "Constant", "Gravity", "Callable", "as_torque"]


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
    source of body ``i`` of a per-body source.  The base class takes no constructor arguments.

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
    Constant, Gravity, Callable, as_torque, rotode.RigidBody

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
        return self

    cdef list per_body(self, Py_ssize_t n):
        cdef Py_ssize_t b
        if self.n_bodies is None:
            return [self] * n
        return [self.body(b) for b in range(n)]

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

    def _check(self, int status):
        if status == TORQUE_OK:
            return
        err, self.error = self.error, None
        raise err if err is not None else RuntimeError(
            f"{type(self).__name__} failed with status {status}")

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
        self._check(self.evaluate(tt, &qv[0], &wv[0], &o[0]))
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

    def _chunk_split(self):
        per_body, shared = {}, {}
        for name, value, dims in (("mass", self.mass, 1), ("g", self.g, 1), ("com", self.com, 2)):
            (per_body if np.ndim(value) == dims else shared)[name] = value
        return per_body, shared, {"mass": 1.0}

    @classmethod
    def _chunk_join(cls, values):
        return cls(values["mass"], values["g"], values["com"])

    cdef Torque body(self, Py_ssize_t i):
        if self._rows is None:
            return self
        return self._range(i, i + 1)[0]

    cdef list per_body(self, Py_ssize_t n):
        if self._rows is None:
            return [self] * n
        return self._range(0, n)

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


cdef class Callable(Torque):
    """Wrap a Python function ``tau(t, q, w) -> body torque, shape (3,)``.

    Parameters
    ----------
    function : callable
        ``tau(t, q, w)``: ``q`` is passed normalised to unit length (shape (4,)), ``w`` is the
        body angular velocity (shape (3,)); it returns three finite real numbers (body frame).

    Attributes
    ----------
    function : callable
    n_bodies : None

    Raises
    ------
    TypeError
        If ``function`` is not callable.

    See Also
    --------
    as_torque

    Notes
    -----
    Every evaluation takes the GIL.  Jacobians use central finite differences of this term (see
    the module notes).

    Examples
    --------
    A damping torque:

    >>> from rotode import torque
    >>> damping = torque.Callable(lambda t, q, w: -0.1 * w)
    >>> damping(0.0, [1.0, 0.0, 0.0, 0.0], [1.0, 2.0, 3.0])
    array([-0.1, -0.2, -0.3])
    """

    def __init__(self, function):
        if not callable(function):
            raise TypeError("torque.Callable: `function` must be callable tau(t, q, w), got "
                            f"{type(function).__name__}")
        self.function = function

    cdef int evaluate(self, double t, const double* q, const double* w,
                      double* tau) noexcept nogil:
        cdef double s
        with gil:
            try:
                s = 1.0 / sqrt(quat_norm2(q))
                qa = np.array([q[0] * s, q[1] * s, q[2] * s, q[3] * s])
                wa = np.array([w[0], w[1], w[2]])
                r = as_callable_vector(self.function(t, qa, wa), "torque callable", t,
                                       self.function)
                tau[0] = r[0]
                tau[1] = r[1]
                tau[2] = r[2]
            except BaseException as exc:   # Ctrl-C in user code too
                self.error = exc
                return TORQUE_ERROR
        return TORQUE_OK

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
