"""Right-hand sides for ``scipy.integrate.solve_ivp``: rotation kinematics and rigid bodies.

Every class here is a callable ``fun(t, y)`` for ``solve_ivp`` built on the nogil cores of
``rotode/rhs.pxd``; ``.jac(t, y)`` is the exact Jacobian obtained by evaluating the SAME core
with dual numbers ([DUAL]), so it can be passed as ``jac=rhs.jac`` to Radau, BDF and LSODA.

State layouts
-------------
=========================  ==================================  ====================================
class                      state y                             equations
=========================  ==================================  ====================================
`QuaternionKinematics`     q (4), any nonzero length           Rucker 2018 eqs. 20-23
`RigidBody`                q (4), w_body (3)                   Rucker 2018 eq. 22; Mandre 2008 s. 6
`ExpCoordKinematics`       v (3)                               Mizerski 2020 sec. 4
`ExpCoordRigidBody`        v (3), w_body (3)                   Mizerski 2020 secs. 4, 6
`QuaternionSecondOrder`    q (4), q' (4)                       Mandre 2008 sec. 6
`EulerAnglesXYZ`           intrinsic XYZ angles (3), w (3)     R = Rx(a) Ry(b) Rz(c)
`RotationMatrix`           R row-major (9), w_body (3)         R' = R [w]x
=========================  ==================================  ====================================

Calling conventions
-------------------
``rhs(t, y)`` accepts a 1-D state of any strides (SciPy passes non-contiguous columns) and a
2-D ``(n, k)`` array of k states as columns (``vectorized=True``); it returns a new array of the
same shape.  The hot path does no validation beyond the shape when ``y`` is a float64 buffer.
"""
import gc
import inspect

import numpy as np

from rotode._docfill import fill
from rotode._signature import ExtensionSignature as _ExtensionSignature
from rotode._validation import (as_body_index, as_bool, as_float_array, as_frame, as_inertia,
                                as_positive_scalar, as_quaternions, as_real,
                                check_nonzero_quaternions, common_bodies)
from rotode._validation import is_dask as _is_dask
from rotode.omega import as_source
from rotode.torque import _REASONS as _TORQUE_REASONS, as_torque

from cpython.buffer cimport (PyObject_GetBuffer, PyBuffer_Release, PyBUF_RECORDS_RO,
                             PyObject_CheckBuffer)
cimport numpy as cnp
from rotode.dual cimport *
from rotode.quaternion cimport quat_mul, quat_exp_pure, quat_from_matrix, quat_rotate

__all__ = ["RightHandSide", "QuaternionKinematics", "RigidBody", "ExpCoordKinematics",
           "ExpCoordRigidBody", "QuaternionSecondOrder", "EulerAnglesXYZ", "RotationMatrix",
           "check_inertia"]

cdef object _empty = np.empty
cdef object _ndarray = np.ndarray

# Fast path of __call__: NumPy's C API reads an exact float64 ndarray's data, shape and strides
# without the buffer protocol; anything else goes through the buffer protocol (and np.asarray).
cnp.import_array()


# ---- validation (facade helpers) ----------------------------------------------------------

def check_inertia(inertia):
    """Validate an inertia and invert it.

    Parameters
    ----------
    inertia : array_like, shape (3,) or (3, 3)
        Principal moments (each > 0), or a symmetric positive definite body-frame tensor; the
        principal moments must satisfy the triangle inequality ``I1 + I2 >= I3``.

    Returns
    -------
    I, I_inv : ndarray, shape (3, 3)
        The inertia tensor and its (symmetrised) inverse; a diagonal ``I`` is inverted entry by
        entry.

    Raises
    ------
    ValueError
        For another shape, non-finite entries, or a tensor that no mass distribution has (not
        symmetric, not positive definite, or violating the triangle inequality), naming
        ``inertia``.

    See Also
    --------
    rotode.inertia.validate_inertia, RigidBody

    Examples
    --------
    >>> import numpy as np
    >>> from rotode import rhs
    >>> I, I_inv = rhs.check_inertia([1.0, 2.0, 2.5])
    >>> np.diag(I_inv).tolist()
    [1.0, 0.5, 0.4]
    """
    Im = as_inertia(inertia)
    if Im.shape != (3, 3):
        raise ValueError(f"`inertia` must have shape (3,) (principal moments) or (3, 3), "
                         f"got {np.shape(inertia)}")
    if np.count_nonzero(Im - np.diag(np.diag(Im))) == 0:
        Iinv = np.diag(1.0 / np.diag(Im))
    else:
        Iinv = np.linalg.inv(Im)
        Iinv = 0.5 * (Iinv + Iinv.T)
    return Im, Iinv


def _per_body_inertia(inertia):
    """Inertia given once or per body: ``((I, I_inv), N or None)``; I of shape (3, 3) or
    (N, 3, 3) (checked), or the dask array itself (N, 3) / (N, 3, 3) with I_inv None."""
    if _is_dask(inertia):
        if not (inertia.ndim == 2 and inertia.shape[1] == 3
                or inertia.ndim == 3 and inertia.shape[1:] == (3, 3)):
            raise ValueError("`inertia` as a dask array must have the per-body shape (N, 3) or "
                             f"(N, 3, 3), got {inertia.shape}")
        return (inertia, None), int(inertia.shape[0])
    arr = as_float_array(inertia, "inertia", (), finite=False)
    if arr.shape in ((3,), (3, 3)):
        Im, Iinv = check_inertia(arr)
        return (Im, Iinv), None
    if arr.ndim == 2 and arr.shape[1] == 3 and arr.shape[0] > 0:
        if not np.all(arr > 0):
            raise ValueError("`inertia` principal moments must be positive for every body")
        full = np.zeros((arr.shape[0], 3, 3))
        idx = np.arange(3)
        full[:, idx, idx] = arr
        Im = as_inertia(full, "inertia")
        Iinv = np.zeros_like(Im)
        Iinv[:, idx, idx] = 1.0 / arr
        return (np.ascontiguousarray(Im), Iinv), arr.shape[0]
    if arr.ndim == 3 and arr.shape[1:] == (3, 3) and arr.shape[0] > 0:
        Im = np.ascontiguousarray(as_inertia(arr, "inertia"))
        # the inverse of each row as `check_inertia` takes it for one body (same bits)
        Iinv = np.linalg.inv(Im)
        Iinv = 0.5 * (Iinv + np.swapaxes(Iinv, 1, 2))
        d = np.diagonal(Im, axis1=1, axis2=2)
        diagonal = np.count_nonzero((Im - d[:, :, None] * np.eye(3)).reshape(-1, 9), axis=1) == 0
        idx = np.arange(3)
        rows = np.flatnonzero(diagonal)
        Iinv[rows] = 0.0
        Iinv[rows[:, None], idx, idx] = 1.0 / d[rows]
        return (Im, np.ascontiguousarray(Iinv)), arr.shape[0]
    raise ValueError("`inertia` must have shape (3,) (principal moments), (3, 3), or per body "
                     f"(N, 3) or (N, 3, 3), got {arr.shape}")


def rigid_body_list(model, n):
    """The per-body models of a rigid-body runner: ``[model]`` for one shared `RigidBody`, or
    the list itself when it holds exactly one `RigidBody` per body (``n`` bodies)."""
    if isinstance(model, RigidBody):
        nb = (<RigidBody>model).n_bodies
        if nb is not None and nb != n:
            raise ValueError(f"`model` holds per-body parameters for {nb} bodies but `y0` "
                             f"holds {n} states")
        return model.bodies()
    if isinstance(model, (list, tuple)):
        if len(model) != n:
            raise ValueError(f"`model` must hold one RigidBody per body: N = {n} bodies in "
                             f"`y0`, got {len(model)} models")
        for i, body in enumerate(model):
            if not isinstance(body, RigidBody):
                raise TypeError(f"`model[{i}]` must be a rotode.RigidBody, got "
                                f"{type(body).__name__}")
        return list(model)
    raise TypeError(f"`model` must be a rotode.RigidBody or a list of them, got "
                    f"{type(model).__name__}")


def _frame(frame):
    return as_frame(frame)


def _unit_quaternion(q, name):
    q = as_quaternions(q, name, batch=False)
    return q / np.sqrt(q @ q)


# the base orientation of an exponential-coordinate chart (ExpCoordKinematics,
# ExpCoordRigidBody): a unit quaternion, the identity at first
cdef inline void _identity(double* base):
    base[0] = 1.0
    base[1] = 0.0
    base[2] = 0.0
    base[3] = 0.0


cdef object _base_array(const double* base):
    return np.array([base[i] for i in range(4)])


cdef int _set_base(double* base, object q) except -1:
    q = _unit_quaternion(q, "base")
    for i in range(4):
        base[i] = q[i]
    return 0


# ---- base object --------------------------------------------------------------------------

cdef class RightHandSide:
    """Base of every right-hand side: calling conventions and the dual-number Jacobian.

    Subclasses implement ``eval`` (doubles) and ``eval_dual`` (dual numbers) by calling one
    fused core; everything else (strides, vectorisation, Jacobian chunks) lives here.  The base
    class takes no constructor arguments and cannot be evaluated itself.

    Attributes
    ----------
    n : int
        The state dimension.

    See Also
    --------
    QuaternionKinematics, RigidBody

    References
    ----------
    .. [1] A. Griewank and A. Walther, Evaluating Derivatives: Principles and Techniques of
       Algorithmic Differentiation, 2nd ed., SIAM, 2008 (forward mode, used by ``jac``).

    Examples
    --------
    >>> import rotode
    >>> body = rotode.RigidBody([1.0, 2.0, 3.0])
    >>> isinstance(body, rotode.rhs.RightHandSide), body.n
    (True, 7)
    >>> body.jac(0.0, [1, 0, 0, 0, 0.1, 1.0, 0.1]).shape
    (7, 7)
    """

    # inspect.signature of the class (its constructor) and of an instance (its __call__),
    # read from the embedded signature lines (rotode/_signature.py)
    __signature__ = _ExtensionSignature()

    cdef int eval(self, double t, const double* y, double* dy):
        raise NotImplementedError

    cdef int eval_dual(self, double t, const dual* y, dual* dy):
        raise NotImplementedError

    def _sources(self):
        return ()

    cdef void raise_status(self, int status) except *:
        if status == RHS_PER_BODY:
            raise ValueError(f"this {type(self).__name__} holds per-body parameters for "
                             f"{self.n_bodies} bodies: evaluating it needs one body (take it "
                             "with model[i]), or give rotode.integrate N states")
        if status == RHS_GIMBAL_LOCK:
            raise ValueError(f"{type(self).__name__}: gimbal lock, cos(beta) = 0; XYZ Euler "
                             "angles are singular there (use quaternions)")
        for src in self._sources():
            if src is not None and src.error is not None:
                err, src.error = src.error, None
                raise err
        if status in _TORQUE_REASONS:            # a compiled torque's failure
            raise ValueError(f"{type(self).__name__}: {_TORQUE_REASONS[status]}")
        raise RuntimeError(f"{type(self).__name__}: evaluation failed with status {status}")

    def _coerce(self, y):
        # complex, boolean and text input is refused, never cast (no silent loss of parts)
        arr = as_float_array(y, "y", (), finite=False)
        if arr.ndim not in (1, 2) or arr.shape[0] != self.n:
            raise ValueError(f"`y` must have shape ({self.n},) or ({self.n}, k), "
                             f"got {arr.shape}")
        return arr

    def __call__(self, t, y):
        """Evaluate y' = f(t, y) for a state (n,) or states as columns (n, k)."""
        cdef double tt = t if isinstance(t, float) else as_real(t, "t")
        cdef Py_buffer view
        cdef double buf[16]
        cdef double res[16]
        cdef double* dst
        cdef Py_buffer oview
        cdef Py_ssize_t i, j, k, s0, s1
        cdef int status = 0, n = self.n
        cdef bint ok
        cdef cnp.ndarray a, fresh
        cdef cnp.npy_intp dim = n
        cdef char* data
        if type(y) is _ndarray:
            a = <cnp.ndarray>y
            if (cnp.PyArray_NDIM(a) == 1 and cnp.PyArray_DIMS(a)[0] == n
                    and cnp.PyArray_TYPE(a) == cnp.NPY_DOUBLE and cnp.PyArray_ISNOTSWAPPED(a)):
                fresh = cnp.PyArray_EMPTY(1, &dim, cnp.NPY_DOUBLE, 0)
                out = fresh
                dst = <double*>cnp.PyArray_DATA(fresh)
                data = <char*>cnp.PyArray_DATA(a)
                s0 = cnp.PyArray_STRIDES(a)[0]
                if s0 == sizeof(double):
                    status = self.eval(tt, <double*>data, dst)
                else:
                    for i in range(n):
                        buf[i] = (<double*>(data + i * s0))[0]
                    status = self.eval(tt, buf, dst)
                if status != 0:
                    self.raise_status(status)
                return out
        if not PyObject_CheckBuffer(y):
            return self(tt, self._coerce(y))
        PyObject_GetBuffer(y, &view, PyBUF_RECORDS_RO)
        ok = (view.format != NULL and view.format[0] == b'd' and view.format[1] == 0
              and (view.ndim == 1 or view.ndim == 2) and view.shape[0] == n)
        if not ok:
            PyBuffer_Release(&view)
            return self(tt, self._coerce(y))
        try:
            s0 = view.strides[0]
            if view.ndim == 1:
                out = _empty(n)
                PyObject_GetBuffer(out, &oview, PyBUF_RECORDS_RO)
                dst = <double*>oview.buf
                if s0 == sizeof(double):
                    status = self.eval(tt, <double*>view.buf, dst)
                else:
                    for i in range(n):
                        buf[i] = (<double*>(<char*>view.buf + i * s0))[0]
                    status = self.eval(tt, buf, dst)
                PyBuffer_Release(&oview)
            else:
                k = view.shape[1]
                s1 = view.strides[1]
                out = _empty((n, k))
                PyObject_GetBuffer(out, &oview, PyBUF_RECORDS_RO)
                dst = <double*>oview.buf
                for j in range(k):
                    for i in range(n):
                        buf[i] = (<double*>(<char*>view.buf + i * s0 + j * s1))[0]
                    status = self.eval(tt, buf, res)
                    if status != 0:
                        break
                    for i in range(n):
                        dst[i * k + j] = res[i]
                PyBuffer_Release(&oview)
        finally:
            PyBuffer_Release(&view)
        if status != 0:
            self.raise_status(status)
        return out

    def jac(self, t, y):
        """Exact Jacobian df/dy (n, n) from dual numbers through the same core as ``__call__``.

        Tangents are seeded in chunks of at most 7 (the dual width), so 8- and 12-state systems
        take two evaluations.
        """
        cdef double tt = t if isinstance(t, float) else as_real(t, "t")
        cdef const double[:] yv
        arr = y
        if not (isinstance(y, np.ndarray) and y.dtype == np.float64 and y.ndim == 1
                and y.shape[0] == self.n):
            arr = self._coerce(y)
            if arr.ndim != 1:
                raise ValueError(f"`y` must have shape ({self.n},) for the Jacobian, "
                                 f"got {arr.shape}")
        yv = arr
        cdef int n = self.n, i, j, c0, m, status = 0
        cdef dual yd[16]
        cdef dual dyd[16]
        J = np.empty((n, n))
        cdef double[:, ::1] Jv = J
        c0 = 0
        while c0 < n:
            m = min(DUAL_N, n - c0)
            for i in range(n):
                yd[i] = dual(yv[i])
            for j in range(m):
                yd[c0 + j].d[j] = 1.0
            status = self.eval_dual(tt, yd, dyd)
            if status != 0:
                self.raise_status(status)
            for i in range(n):
                for j in range(m):
                    Jv[i, c0 + j] = dyd[i].d[j]
            c0 += m
        return J


# ---- kinematics ---------------------------------------------------------------------------

cdef inline int _omega(AngularVelocity omega, double t, real* wr):
    """w(t) of the source in the scalar type of the evaluation (value, or dual for .jac)."""
    cdef double w[3]
    cdef int status = omega.evaluate(t, w)
    if status != 0:
        return status
    wr[0] = w[0]
    wr[1] = w[1]
    wr[2] = w[2]
    return 0


cdef int _quaternion_kinematics(QuaternionKinematics self, double t, const real* y,
                                real* dy):
    cdef real wr[3]
    cdef int status = _omega(self.omega, t, wr)
    if status != 0:
        return status
    quaternion_kinematics_rhs(y, wr, self._frame, self.norm_gain, dy)
    return RHS_OK


cdef class QuaternionKinematics(RightHandSide):
    """Non-unit quaternion kinematics ``q' = 1/2 q w (+ c q)`` for a prescribed angular velocity.

    Parameters
    ----------
    omega : AngularVelocity, array_like (3,) or callable
        The angular velocity w(t): a source from `rotode.omega`, a constant vector, or a Python
        function ``w(t)``.
    frame : {"body", "world"}, optional
        Frame of w: ``q' = 1/2 q w`` (body, default) or ``1/2 w q`` (world).
    norm_gain : float, optional
        ``k >= 0`` of the norm controller ``c = k (1 - q.q)`` (Rucker 2018 eq. 23); 0 (default)
        leaves |q| free (the rotation ``R(q) = R(q/|q|)`` is unaffected by |q|, Rucker 2018 eq. 13).

    Attributes
    ----------
    omega : rotode.omega.AngularVelocity
        The source (``omega`` as `rotode.omega.as_source` made it).
    frame : str
    norm_gain : float
    n : int
        4.

    Raises
    ------
    TypeError, ValueError
        For an ``omega`` that is not a source, a (3,) vector or a callable; an unknown frame; a
        negative or non-finite gain.

    See Also
    --------
    ExpCoordKinematics, rotode.integrate, rotode.solve_ivp

    Notes
    -----
    State q (4), any nonzero length.  ``q' = 1/2 q (0, w) + c q`` (Rucker 2018 eqs. 20-22): the
    minimum-norm derivative plus a multiple of the kernel vector q.

    References
    ----------
    .. [1] C. Rucker, "Integrating Rotations using Non-Unit Quaternions", IEEE Robotics and
       Automation Letters 3(4), 2018, eqs. 13, 20-23.

    Examples
    --------
    >>> from math import pi
    >>> from scipy.integrate import solve_ivp
    >>> import rotode
    >>> rhs = rotode.QuaternionKinematics([0.0, 0.0, pi], frame="body")
    >>> sol = solve_ivp(rhs, (0, 1), [1, 0, 0, 0], rtol=1e-10, atol=1e-12)
    >>> abs(sol.y[:, -1]).round(6).tolist()   # half a turn about z
    [0.0, 0.0, 0.0, 1.0]
    """

    def __init__(self, omega, frame="body", norm_gain=0.0):
        self.n = 4
        self.omega = as_source(omega)
        self._frame = _frame(frame)
        self.norm_gain = as_positive_scalar(norm_gain, "norm_gain", allow_zero=True)

    @property
    def frame(self):
        """The frame of the angular velocity, "body" or "world"."""
        return "body" if self._frame == FRAME_BODY else "world"

    def _sources(self):
        return (self.omega,)

    cdef int eval(self, double t, const double* y, double* dy):
        return _quaternion_kinematics(self, t, y, dy)

    cdef int eval_dual(self, double t, const dual* y, dual* dy):
        return _quaternion_kinematics(self, t, y, dy)

    def __repr__(self):
        return (f"QuaternionKinematics({self.omega!r}, frame={self.frame!r}, "
                f"norm_gain={self.norm_gain!r})")


cdef int _expcoord_kinematics(ExpCoordKinematics self, double t, const real* y, real* dy):
    cdef real wr[3]
    cdef int status = _omega(self.omega, t, wr)
    if status != 0:
        return status
    expcoord_kinematics_rhs(y, wr, self._frame, dy)
    return RHS_OK


cdef class ExpCoordKinematics(RightHandSide):
    """Exponential-coordinate kinematics ``v' = dexp_inv(+-v) w``.

    Parameters
    ----------
    omega : AngularVelocity, array_like (3,) or callable
        The angular velocity w(t).
    frame : {"body", "world"}, optional
        Frame of w (default "body").  World: ``O = R(v) O_base`` and ``v' = T(v)^-1 w``; body:
        ``O = O_base R(v)`` and ``v' = T(-v)^-1 w``.

    Attributes
    ----------
    omega : rotode.omega.AngularVelocity
    frame : str
    base : ndarray, shape (4,)
        The chart's base orientation ``O_base`` (a unit quaternion; settable).
    n : int
        3.

    Raises
    ------
    TypeError, ValueError
        For an ``omega`` that is not a source, a (3,) vector or a callable, or an unknown frame.

    See Also
    --------
    rotode.solve_expcoord, QuaternionKinematics, rotode.so3.dexp_inv

    Notes
    -----
    State v (3).  The chart is singular at |v| = 2 pi: use `rotode.solve_expcoord`, which
    re-anchors ``base`` whenever |v| reaches pi.

    References
    ----------
    .. [1] M. Mizerski, "Motion of spinning bodies", Roblox engineering blog, 2020, sec. 4
       (docs/references.md).

    Examples
    --------
    >>> import numpy as np
    >>> from scipy.integrate import solve_ivp
    >>> from rotode import rhs
    >>> kin = rhs.ExpCoordKinematics([0.0, 0.0, np.pi])
    >>> sol = solve_ivp(kin, (0, 0.5), [0.0, 0.0, 0.0], rtol=1e-10, atol=1e-12)
    >>> sol.y[:, -1].round(8)                    # a quarter turn about z
    array([0.        , 0.        , 1.57079633])
    """

    def __init__(self, omega, frame="body"):
        self.n = 3
        self.omega = as_source(omega)
        self._frame = _frame(frame)
        _identity(self._base)

    @property
    def frame(self):
        """The frame of the angular velocity, "body" or "world"."""
        return "body" if self._frame == FRAME_BODY else "world"

    @property
    def base(self):
        """Base orientation of the chart (unit quaternion, scalar first)."""
        return _base_array(self._base)

    @base.setter
    def base(self, q):
        _set_base(self._base, q)

    def _sources(self):
        return (self.omega,)

    cdef int eval(self, double t, const double* y, double* dy):
        return _expcoord_kinematics(self, t, y, dy)

    cdef int eval_dual(self, double t, const dual* y, dual* dy):
        return _expcoord_kinematics(self, t, y, dy)

    def __repr__(self):
        return f"ExpCoordKinematics({self.omega!r}, frame={self.frame!r})"


# ---- rigid bodies -------------------------------------------------------------------------

cdef class _Body(RightHandSide):
    """Shared parts of the rigid-body right-hand sides: inertia, torque, invariants; the
    constructor, y' and the orientation of the representations other than `RigidBody` (their
    class attribute ``_representation``: the kind, BODY_*, and the size of the state)."""

    def __init__(self, inertia, torque=None):
        self._kind, self.n = self._representation
        if self._kind == BODY_EXPCOORD:
            _identity((<ExpCoordRigidBody>self)._base)
        self._init_body(inertia, torque)

    def _init_body(self, inertia, torque):
        tq = as_torque(torque)
        if tq is not None and tq.n_bodies is not None:
            raise ValueError(f"`torque` holds per-body parameters for {tq.n_bodies} bodies; "
                             f"{type(self).__name__} is one body's right-hand side (per-body "
                             "parameters: rotode.RigidBody with rotode.integrate)")
        Im, Iinv = check_inertia(inertia)
        self.inertia = Im
        for i in range(3):
            for j in range(3):
                self._I[3 * i + j] = Im[i, j]
                self._Iinv[3 * i + j] = Iinv[i, j]
        self.torque = tq

    def _sources(self):
        return (self.torque,)

    cdef int torque_value(self, double t, const double* q, const double* w, double* tau):
        if self.torque is None:
            tau[0] = 0.0
            tau[1] = 0.0
            tau[2] = 0.0
            return 0
        return self.torque.evaluate(t, q, w, tau)

    cdef int torque_dual(self, double t, const dual* q, const dual* w, dual* tau):
        if self.torque is None:
            tau[0] = dual(0.0)
            tau[1] = dual(0.0)
            tau[2] = dual(0.0)
            return 0
        return self.torque.evaluate_dual(t, q, w, tau)

    cdef int eval(self, double t, const double* y, double* dy):
        return _body_rhs(self, t, y, dy)

    cdef int eval_dual(self, double t, const dual* y, dual* dy):
        return _body_rhs(self, t, y, dy)

    cdef void orientation_velocity(self, const double* y, double* q, double* w):
        _body_orientation(self, y, q, w)

    def __repr__(self):
        return f"{type(self).__name__}(inertia={self.inertia.tolist()}, torque={self.torque!r})"

    def _invariants(self, y):
        arr = self._coerce(y)
        if not np.isfinite(arr).all():
            raise ValueError("`y` must contain only finite values (no NaN or inf)")
        single = arr.ndim == 1
        cols = arr.reshape(self.n, -1)
        k = cols.shape[1]
        Q = np.empty((4, k))
        L = np.empty((3, k))
        E = np.empty(k)
        cdef double buf[16]
        cdef double q[4]
        cdef double w[3]
        cdef double Iw[3]
        cdef double Lw[3]
        cdef const double[:, :] c = cols
        cdef int i, j
        for j in range(k):
            for i in range(self.n):
                buf[i] = c[i, j]
            self.orientation_velocity(buf, q, w)
            mat3_vec(self._I, w, Iw)
            quat_rotate(q, Iw, Lw)
            E[j] = 0.5 * (w[0] * Iw[0] + w[1] * Iw[1] + w[2] * Iw[2])
            for i in range(3):
                L[i, j] = Lw[i]
            for i in range(4):
                Q[i, j] = q[i]
        check_nonzero_quaternions(Q.T, "y (orientation part)")
        if self.torque is not None:
            V = self.torque.potential_energy(Q)
            if V is not None:
                E = E + V
        if single:
            return E[0], L[:, 0]
        return E, L

    def energy(self, y):
        """Total energy 1/2 w.I w (+ the potential of a `Gravity` torque).

        ``y`` of shape (n,) gives a float, (n, k) (e.g. ``sol.y``) an array of shape (k,).
        Torques without a potential contribute nothing (the kinetic energy is returned).
        """
        return self._invariants(y)[0]

    def angular_momentum(self, y):
        """World-frame angular momentum L = R I w, shape (3,) or (3, k)."""
        return self._invariants(y)[1]


cdef inline int _body_torque(_Body body, double t, const real* q, const real* w, real* tau):
    """The body's torque in the scalar type of the evaluation (value, or dual for .jac)."""
    if real is double:
        return body.torque_value(t, q, w, tau)
    else:
        return body.torque_dual(t, q, w, tau)


cdef int _rigid_body(RigidBody self, double t, const real* y, real* dy):
    cdef real tau[3]
    cdef int status
    if self._rows is not None:
        return RHS_PER_BODY
    status = _body_torque(self, t, y, &y[4], tau)
    if status != 0:
        return status
    rigid_body_rhs(y, tau, self._I, self._Iinv, self.norm_gain, self.gyroscopic, dy)
    return RHS_OK


cdef class RigidBody(_Body):
    """Rigid body with a non-unit quaternion: state ``[q (4), w_body (3)]``.

    Parameters
    ----------
    inertia : array_like, shape (3,), (3, 3), (N, 3) or (N, 3, 3)
        Principal moments, or a symmetric positive definite body-frame inertia (checked); with
        a leading axis N, one inertia per body (a (3, 3) array is one tensor: give three
        bodies' moments as (3, 3, 3) tensors).
    torque : Torque, array_like (3,) or (N, 3), callable or None, optional
        Body torque tau(t, q, w): a `rotode.torque` source (shared, or per body when its
        parameters are), a constant body vector (or one per body), a Python function
        ``tau(t, q, w)``, or None (default: torque-free).
    norm_gain : float, optional
        Norm controller gain of Rucker 2018 eq. 23 (default 0: none).
    gyroscopic : bool, optional
        Keep the gyroscopic term w x I w (default True, physical); False drops it as many game
        engines do (Mandre 2008 sec. 7.6).

    Attributes
    ----------
    inertia : ndarray, shape (3, 3) or (N, 3, 3)
        The checked inertia tensor(s).
    torque : rotode.torque.Torque or None
    norm_gain : float
    gyroscopic : bool
    n : int
        7.
    n_bodies : int or None
        N when the inertia or the torque is given per body (an ensemble of N dispersed bodies,
        for `rotode.integrate` with N states; ``model[i]`` is body i), else None.  Per-body
        parameters may be dask arrays (chunked along N; ``rotode.integrate`` then returns dask
        arrays, docs/scaling.md).

    Raises
    ------
    ValueError
        For an inertia that is not physical, per-body parameters whose counts differ, or a
        negative gain.

    See Also
    --------
    QuaternionSecondOrder, ExpCoordRigidBody, rotode.integrate, rotode.solve_ivp

    Notes
    -----
    ``q' = 1/2 q w + k (1 - q.q) q`` (Rucker 2018 eqs. 22-23),
    ``I w' + w x I w = tau`` (Euler's equations, Mandre 2008 sec. 6).
    The torque receives q as stored (any length; sources use ``R(q) = R(q/|q|)``).  Evaluating a
    per-body model needs one body (``model[i]``).

    References
    ----------
    .. [1] C. Rucker, "Integrating Rotations using Non-Unit Quaternions", IEEE Robotics and
       Automation Letters 3(4), 2018, eqs. 22-23.
    .. [2] I. Mandre, "Rigid body dynamics using Euler's equations, Runge-Kutta and
       quaternions", web note, 2008, secs. 6, 7.6 (docs/references.md).

    Examples
    --------
    >>> import numpy as np, rotode
    >>> body = rotode.RigidBody([1.0, 2.0, 3.0])
    >>> y = np.array([1.0, 0.0, 0.0, 0.0, 0.1, 1.0, 0.1])     # [q, w_body]
    >>> body(0.0, y).round(8)
    array([ 0.        ,  0.05      ,  0.5       ,  0.05      , -0.1       ,
            0.01      , -0.03333333])
    >>> round(float(body.energy(y)), 12), body.angular_momentum(y)
    (1.02, array([0.1, 2. , 0.3]))
    >>> ensemble = rotode.RigidBody([[1.0, 1.0, 0.5], [1.0, 2.0, 3.0]])   # one body per row
    >>> ensemble.n_bodies, ensemble[1].inertia.diagonal()
    (2, array([1., 2., 3.]))
    """

    def __init__(self, inertia, torque=None, norm_gain=0.0, gyroscopic=True):
        self.n = 7
        self.norm_gain = as_positive_scalar(norm_gain, "norm_gain", allow_zero=True)
        self.gyroscopic = as_bool(gyroscopic, "gyroscopic")
        tq = as_torque(torque)
        n_tq = tq.n_bodies if tq is not None else None
        if not _is_dask(inertia):
            inertia = as_float_array(inertia, "inertia", finite=False)
        one = not _is_dask(inertia) and (np.ndim(inertia) <= 1 or np.shape(inertia) == (3, 3))
        if one and n_tq is None:          # (3, 3) is one tensor; 3 bodies' moments: (3, 3, 3)
            self._init_body(inertia, tq)
            self.n_bodies = None
            self._rows = None
            return
        rows, n_in = _per_body_inertia(inertia)
        self.n_bodies = common_bodies({"inertia": n_in, "torque": n_tq})
        self.torque = tq
        self._rows = rows
        self.inertia = rows[0]
        for i in range(9):
            self._I[i] = np.nan
            self._Iinv[i] = np.nan

    def __getitem__(self, i):
        """Body ``i`` of a per-body model (``n_bodies`` is not None), as a one-body
        `RigidBody` (the same numbers as that body in a batched run)."""
        b = as_body_index(i, self.n_bodies, "this RigidBody", self._lazy())
        Is = self._rows[0]
        tq = self.torque
        return RigidBody(Is if Is.ndim == 2 else Is[b],
                         torque=tq[b] if tq is not None and tq.n_bodies is not None else tq,
                         norm_gain=self.norm_gain, gyroscopic=self.gyroscopic)

    def _lazy(self):
        return self._rows is not None and (_is_dask(self._rows[0])
                                           or (self.torque is not None and self.torque._lazy()))

    def bodies(self):
        """The one-body models: ``[self]``, or the N bodies of a per-body model."""
        if self._rows is None:
            return [self]
        if self._lazy():
            raise ValueError("this RigidBody holds dask arrays; rotode.integrate runs it chunk "
                             "by chunk (docs/scaling.md)")
        Is, Iinvs = self._rows
        N = self.n_bodies
        # 10^5-10^6 small objects: the cyclic collector would re-scan them as they are made
        # (5x the cost); they hold no cycles
        collecting = gc.isenabled()
        gc.disable()
        try:
            return self._make_bodies(Is, Iinvs, N)
        finally:
            if collecting:
                gc.enable()

    def _make_bodies(self, Is, Iinvs, Py_ssize_t N):
        cdef Py_ssize_t b
        cdef int k
        cdef const double[:, :, ::1] iv
        cdef const double[:, :, ::1] jv
        cdef bint shared_I = Is.ndim == 2
        if not shared_I:
            iv = Is
            jv = Iinvs
        tq = self.torque
        torques = (<Torque>tq).per_body(N) if tq is not None else [None] * N
        views = list(Is) if not shared_I else None
        out = [None] * N
        cdef RigidBody body
        for b in range(N):
            body = RigidBody.__new__(RigidBody)
            body.n = 7
            body.norm_gain = self.norm_gain
            body.gyroscopic = self.gyroscopic
            body.n_bodies = None
            body._rows = None
            if shared_I:
                body.inertia = Is
                for k in range(9):
                    body._I[k] = Is[k // 3, k % 3]
                    body._Iinv[k] = Iinvs[k // 3, k % 3]
            else:
                body.inertia = views[b]
                for k in range(9):
                    body._I[k] = iv[b, k // 3, k % 3]
                    body._Iinv[k] = jv[b, k // 3, k % 3]
            body.torque = torques[b]
            out[b] = body
        return out

    cdef int eval(self, double t, const double* y, double* dy):
        return _rigid_body(self, t, y, dy)

    cdef int eval_dual(self, double t, const dual* y, dual* dy):
        return _rigid_body(self, t, y, dy)

    cdef void orientation_velocity(self, const double* y, double* q, double* w):
        cdef int i
        for i in range(4):
            q[i] = y[i]
        for i in range(3):
            w[i] = y[4 + i]

    def __repr__(self):
        if self._rows is not None:
            return (f"RigidBody(<per-body parameters of {self.n_bodies} bodies>, "
                    f"torque={self.torque!r}, norm_gain={self.norm_gain!r}, "
                    f"gyroscopic={self.gyroscopic!r})")
        return (f"RigidBody(inertia={self.inertia.tolist()}, torque={self.torque!r}, "
                f"norm_gain={self.norm_gain!r}, gyroscopic={self.gyroscopic!r})")


cdef void _expcoord_orientation(const double* base, const real* v, real* q) noexcept nogil:
    """q = base * exp(v/2) (body-anchored chart O = O_base R(v)) (OUT: q[4])."""
    cdef real h[3]
    cdef real e[4]
    cdef real b[4]
    cdef int i
    for i in range(3):
        h[i] = 0.5 * v[i]
    for i in range(4):
        b[i] = base[i]
    quat_exp_pure(h, e)
    quat_mul(b, e, q)


# the state representations of `_Body`'s subclasses other than RigidBody (`_Body._kind`)
cdef enum:
    BODY_EXPCOORD = 1           # [v (3), w_body (3)], q = base exp(v/2)
    BODY_SECOND_ORDER = 2       # [q (4), q' (4)], w = 2 vec(conj(q) q')
    BODY_EULER_XYZ = 3          # [a, b, c, w_body (3)]
    BODY_ROTATION_MATRIX = 4    # [R row-major (9), w_body (3)]


cdef void _body_orientation(_Body self, const real* y, real* q, real* w):
    """The orientation q and body angular velocity w of a state y of the representation
    ``self._kind`` (OUT: q[4], w[3])."""
    cdef int i
    if self._kind == BODY_SECOND_ORDER:
        for i in range(4):
            q[i] = y[i]
        quaternion_velocity(y, &y[4], w)
        return
    if self._kind == BODY_EXPCOORD:
        _expcoord_orientation((<ExpCoordRigidBody>self)._base, y, q)
    elif self._kind == BODY_EULER_XYZ:
        euler_xyz_to_quat(y, q)
    else:
        quat_from_matrix(y, q)
    for i in range(3):
        w[i] = y[self.n - 3 + i]


cdef int _body_rhs(_Body self, double t, const real* y, real* dy):
    """y' of the representation ``self._kind``: the torque at the state's orientation and rate
    (`_body_orientation`), then the representation's equations (rotode/equations.pxd)."""
    cdef real tau[3]
    cdef real q[4]
    cdef real w[3]
    cdef int status
    _body_orientation(self, y, q, w)
    status = _body_torque(self, t, q, w, tau)
    if status != 0:
        return status
    if self._kind == BODY_EXPCOORD:
        expcoord_rigid_body_rhs(y, tau, self._I, self._Iinv, dy)
    elif self._kind == BODY_SECOND_ORDER:
        quaternion_second_order_rhs(y, tau, self._I, self._Iinv, dy)
    elif self._kind == BODY_EULER_XYZ:
        status = euler_xyz_rates(y, &y[3], dy)
        if status != 0:
            return status
        euler_rhs(&y[3], tau, self._I, self._Iinv, True, &dy[3])
    else:
        rotation_matrix_rhs(y, &y[9], dy)
        euler_rhs(&y[9], tau, self._I, self._Iinv, True, &dy[9])
    return RHS_OK


# the sections that the docstrings of the representations share (`_body_doc`)
_BODY_DOCS = {
    "body_parameters": """
Parameters
----------
inertia : array_like, shape (3,) or (3, 3)
    Principal moments or a symmetric positive definite inertia.
torque : Torque, array_like (3,), callable or None, optional
    Body torque (see `RigidBody`); it receives %(receives)s.

Attributes
----------
inertia : ndarray, shape (3, 3)
torque : rotode.torque.Torque or None
n : int
    %(n)s, the size of the state.""",
    "body_raises": """
Raises
------
ValueError
    For an inertia that is not physical%(raises)s.

See Also
--------""",
    "body": "%(body_parameters)s\n\n%(body_raises)s",
    "raises": "",
}


def _body_doc(doc, **values):
    """The docstring ``doc`` of a representation with the shared sections (`_BODY_DOCS`) and
    its own ``values`` filled in."""
    return inspect.cleandoc(fill(doc, {**_BODY_DOCS, **values}))


cdef class ExpCoordRigidBody(_Body):
    __doc__ = _body_doc("""
    Rigid body in exponential coordinates: state ``[v (3), w_body (3)]``, ``O = O_base R(v)``.

    %(body_parameters)s
    base : ndarray, shape (4,)
        The chart's base orientation (settable).
    frame : str
        "body" (the chart is anchored in the body).

    %(body_raises)s
    RigidBody, rotode.solve_expcoord

    Notes
    -----
    ``v' = T(-v)^-1 w`` (Mizerski 2020 sec. 4), ``I w' + w x I w = tau`` (Mandre 2008 sec. 6).
    Singular at |v| = 2 pi: integrate long runs with `rotode.solve_expcoord` (chart
    re-anchoring).

    References
    ----------
    .. [1] M. Mizerski, "Motion of spinning bodies", Roblox engineering blog, 2020, secs. 4, 6
       (docs/references.md).

    Examples
    --------
    >>> from rotode import rhs
    >>> body = rhs.ExpCoordRigidBody([1.0, 2.0, 3.0])
    >>> body(0.0, [0.0, 0.0, 0.0, 0.0, 0.0, 1.0])      # spinning about z from the base
    array([0., 0., 1., 0., 0., 0.])
    """, n="6", receives="the orientation ``base * exp(v/2)``")
    _representation = (BODY_EXPCOORD, 6)

    @property
    def frame(self):
        """The chart's frame, always "body": ``O = O_base R(v)`` is anchored in the body."""
        return "body"

    @property
    def base(self):
        """Base orientation of the chart (unit quaternion, scalar first)."""
        return _base_array(self._base)

    @base.setter
    def base(self, q):
        _set_base(self._base, q)


cdef class QuaternionSecondOrder(_Body):
    __doc__ = _body_doc("""
    Second-order quaternion form of the rigid body: state ``[q (4), q' (4)]``.

    %(body)s
    RigidBody

    Notes
    -----
    ``q'' = q' conj(q) q' + 1/2 q [I^-1 (tau - 4 (conj(q) q') x I (conj(q) q'))]``
    (Mandre 2008 sec. 6), valid for |q| = 1 and ``q.q' = 0``, which the exact flow preserves;
    start from ``q' = 1/2 q w0`` with a unit q.

    References
    ----------
    .. [1] I. Mandre, "Rigid body dynamics using Euler's equations, Runge-Kutta and
       quaternions", web note, 2008, sec. 6 (docs/references.md).

    Examples
    --------
    >>> from rotode import rhs
    >>> body = rhs.QuaternionSecondOrder([1.0, 1.0, 1.0])
    >>> body(0.0, [1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.5])   # q' = 1/2 q (0, 0, 0, 1)
    array([ 0.  ,  0.  ,  0.  ,  0.5 , -0.25,  0.  ,  0.  ,  0.  ])
    """, n="8", receives="q and ``w = 2 vec(conj(q) q')``")
    _representation = (BODY_SECOND_ORDER, 8)


cdef class EulerAnglesXYZ(_Body):
    __doc__ = _body_doc("""
    Rigid body with intrinsic XYZ Euler angles: state ``[a, b, c, w_body (3)]``.

    %(body)s
    RigidBody, RotationMatrix

    Notes
    -----
    ``R = Rx(a) Ry(b) Rz(c)`` (SciPy ``Rotation.from_euler("XYZ", [a, b, c])``).  The angle rates
    are singular at ``cos(b) = 0``.  For the comparison studies of Rucker 2018 sec. IV.

    References
    ----------
    .. [1] C. Rucker, "Integrating Rotations using Non-Unit Quaternions", IEEE Robotics and
       Automation Letters 3(4), 2018, sec. IV.

    Examples
    --------
    >>> from rotode import rhs
    >>> body = rhs.EulerAnglesXYZ([1.0, 1.0, 1.0])
    >>> body(0.0, [0.0, 0.0, 0.0, 0.0, 0.0, 1.0])      # spinning about z: c' = 1
    array([0., 0., 1., 0., 0., 0.])
    """, n="6", receives="the quaternion of the angles",
                        raises="; when evaluated at gimbal lock (``cos(b) = 0``)")
    _representation = (BODY_EULER_XYZ, 6)


cdef class RotationMatrix(_Body):
    __doc__ = _body_doc("""
    Rigid body with a rotation matrix: state ``[R row-major (9), w_body (3)]``, ``R' = R [w]x``.

    %(body)s
    RigidBody, EulerAnglesXYZ

    Notes
    -----
    No orthogonalisation is done by the right-hand side; the comparison studies of Rucker 2018,
    sec. IV, apply Gram-Schmidt between steps.

    References
    ----------
    .. [1] C. Rucker, "Integrating Rotations using Non-Unit Quaternions", IEEE Robotics and
       Automation Letters 3(4), 2018, sec. IV.

    Examples
    --------
    >>> import numpy as np
    >>> from rotode import rhs
    >>> body = rhs.RotationMatrix([1.0, 1.0, 1.0])
    >>> body(0.0, np.r_[np.eye(3).ravel(), 0.0, 0.0, 1.0])[:9].reshape(3, 3)   # R [w]x
    array([[ 0., -1.,  0.],
           [ 1.,  0.,  0.],
           [ 0.,  0.,  0.]])
    """, n="12", receives="the unit quaternion of the nearest rotation (Shepperd's method)")
    _representation = (BODY_ROTATION_MATRIX, 12)


def __dir__():
    """The public names, ``__all__`` (not the imported helpers)."""
    return list(__all__)
