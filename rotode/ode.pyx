"""A user's own equations on the rotation group: `ODE`, and its runner for the driver.

A state ``y`` of n values holds any number of quaternion blocks (4 values each, scalar first,
body to world) at given offsets and Euclidean components elsewhere; ``y' = f(t, y)`` is the
user's function, written as for `scipy.integrate.solve_ivp`, in Python or compiled (C signature
in rotode/ode.pxd).  The generic methods of the registry run it through the one driver
(rotode/_driver.pyx), with nothing but ``f`` and the layout of the blocks:

- the embedded pairs (``bs3``, ``dopri5``, ``dop853``), ``rk3``/``rk4`` and the multistep ``ab3``
  (variable-step Adams-Bashforth 3, Kutta's RK3 start) on the state itself,
  each quaternion block projected to unit length after every step (``normalize=True``, the
  default; the ``step_process`` asked for in scipy/scipy#13497) or left as it is (Rucker's
  non-unit quaternion, whose equations must then hold for any |q|: Rucker 2018 eq. 23);
- Runge-Kutta-Munthe-Kaas (``rkmk3``, ``rkmk5``, ``rkmk8``; Munthe-Kaas 1998, 1999) on
  SO(3)^k x R^m: each block advances as ``q = q_n exp(v/2)`` with ``v' = T(-v)^-1 w`` (rotode/
  rkmk.pxd), the rest as a vector, so that every block stays a unit quaternion to round-off.
  The body angular velocity of a block is read from the user's own ``q'``:
  ``w = 2 vec(q^* q')``, the component of ``q'`` along ``q`` dropped (Rucker 2018, sec. III:
  the minimum-norm rate), which is right for ``q' = 1/2 q (0, w_body)`` and for
  ``q' = 1/2 (0, w_world) q`` alike (``q^* (0, w_world) q = (0, R^T w_world)``).

Munthe-Kaas, "Runge-Kutta methods on Lie groups", BIT 38 (1998) 92-111; "High order
Runge-Kutta methods on manifolds", Appl. Numer. Math. 29 (1999) 115-127.  Rucker, "Integrating
rotations using nonunit quaternions", IEEE Robotics and Automation Letters 3 (2018) 2979-2986.
"""
import numpy as np

from rotode import _cfunc, methods as _methods
from rotode._codegen import group_pair_ids as _group_pair_ids, pair_ids as _pair_ids
from rotode._driver import outcome, per_body_counts
from rotode._loops import TINY_NORM2, largest
from rotode._runplan import Plan, RunOutput
from rotode._validation import (DEFAULT_MAX_STEPS, as_bool_option, as_float_array,
                                as_step_grid, as_workers, check_nonzero_quaternions, is_dask)

cimport numpy as cnp
from libc.math cimport INFINITY, isfinite
from libc.stdint cimport uintptr_t
from rotode._engine cimport BlockRun, EngineRun
from rotode._driver cimport (Stepper, make_stepper, drive, advance_steps, engine_single, Engine,
                             ThinCall, thin_grid, thin_stepper_rows, STATUS_OK,
                             STATUS_SOURCE_ERROR, STATUS_UNAVAILABLE, STATUS_NONFINITE_ITERATE,
                             KERNEL_RKMK, KERNEL_AB3)
from rotode.dynamic cimport ab3_weights
from rotode.ode cimport ode_fn
from rotode.erk cimport ERK_MAX_STAGES, ERK_MAX_POWERS
from rotode.quaternion cimport quat_exp_pure, quat_mul
from rotode.rkmk cimport (rkmk_rate, rkmk_angular_velocity, rkmk_retract, rkmk_base,
                          rkmk_max_step_angle)
from rotode.equations cimport FRAME_BODY

cnp.import_array()

__all__ = ["ODE", "Equations", "run", "run_plan", "C_SIGNATURE", "METHODS", "KERNELS", "LIMITS"]

#: The registry's methods for a user's equations (``rotode.methods.names("ode")``).
METHODS = _methods.names("ode", runner="ode")

#: Kernel names of the registry this runner steps -> their codes in the kernel enum
#: (rotode/_driver.pxd): each is a tableau the driver steps (rotode/erk.pxd).
KERNELS = _methods.kernel_codes("ode")

#: The most stages each kernel holds (the registry's `Kernel.limits`, checked when an entry is
#: made).
LIMITS = _methods.kernel_limits("ode", "ode")
_methods.check_compiled("ode", {
    code: {"stages": ERK_MAX_STAGES, "powers": ERK_MAX_POWERS} for code in KERNELS.values()})

#: The C signature of a compiled right-hand side (rotode/ode.pxd).
C_SIGNATURE = "int (double, const double *, double *, const double *)"

# what `fun` may be, for the checks and messages of rotode/_cfunc.py
_SIGNATURE = _cfunc.CSignature(
    C_SIGNATURE, "int f(double t, const double* y, double* dydt, const double* p)", 3,
    "rotode.ODE", "a Python callable fun(t, y, *args) -> dydt, ")

# a class created by a class statement in Python (a cdef class is a static type)
_HEAPTYPE = 1 << 9
cdef enum:
    FUN_C = 0          # a C function pointer (numba cfunc, LowLevelCallable, ctypes)
    FUN_PYTHON = 1     # a Python callable, called with the GIL
    FUN_CYTHON = 2     # an `Equations` of a Cython subclass: its nogil `evaluate`


cdef class Equations:
    """Base class of a user's equations written in Cython: a ``cdef class`` deriving from it
    overrides the nogil method ``evaluate`` and an instance is the ``fun`` of `rotode.ODE`.

    ``cdef int evaluate(self, double t, const double* y, double* dydt, const double* p)
    noexcept nogil``: fill ``dydt`` (n values) from the state ``y`` (n values, each quaternion
    block scalar first, body to world) at time ``t``; ``p`` points at the body's parameters
    (the row of ``ODE.params``, NULL without them).  Return 0; any other value stops the
    body's run, reported with its time, as a compiled function's nonzero return is.  The
    runner calls it without the GIL, from several threads for a batch: it must not write
    to the object.  ``cimport`` it from ``rotode.ode`` (docs/ode.md).

    Parameters
    ----------
    (none: a subclass defines its own constructor.)

    Attributes
    ----------
    (none: a subclass holds its own data in C fields.)

    See Also
    --------
    rotode.ODE

    Notes
    -----
    A Python subclass cannot override a ``cdef`` method: `rotode.ODE` refuses one with a TypeError
    (give a Python function instead).  The base class's own ``evaluate`` returns 1.

    Examples
    --------
    .. code-block:: cython

        from rotode.ode cimport Equations

        cdef class Spin(Equations):          # q' = 1/2 q (0, w), w = (0, 0, p[0])
            cdef int evaluate(self, double t, const double* y, double* dydt,
                              const double* p) noexcept nogil:
                cdef double w = p[0]
                dydt[0] = -0.5 * y[3] * w
                dydt[1] = -0.5 * y[2] * w
                dydt[2] = 0.5 * y[1] * w
                dydt[3] = 0.5 * y[0] * w
                return 0

    ``rotode.ODE(Spin(), n=4, quaternions=[0], params=[2.0])``.
    """

    cdef int evaluate(self, double t, const double* y, double* dydt,
                      const double* p) noexcept nogil:
        return 1

    def __call__(self, t, y, p=None):
        """``dydt`` of ``evaluate`` at (t, y) with the parameters ``p`` (for a check; the
        runner calls ``evaluate`` itself)."""
        return ODE(self, n=np.size(y), params=p)(t, y)

if (FUN_C, FUN_PYTHON) != (_cfunc.FUN_C, _cfunc.FUN_PYTHON):
    raise ImportError("rotode.ode's FUN_C/FUN_PYTHON are not rotode._cfunc's")


def _function(fun):
    """(kind, address or 0, the object to keep alive) of the right-hand side `fun`: a Cython
    `Equations`, else what rotode/_cfunc.py reads (a C function or a Python callable)."""
    if isinstance(fun, Equations):
        if all(c.__flags__ & _HEAPTYPE for c in type(fun).__mro__
               if issubclass(c, Equations) and c is not Equations) or type(fun) is Equations:
            raise TypeError("`fun`: a rotode.ode.Equations must be a Cython (cdef class) "
                            "subclass that overrides the nogil `evaluate`; a Python class "
                            "cannot: pass a Python function fun(t, y) instead")
        return FUN_CYTHON, 0, fun
    return _cfunc.address(fun, _SIGNATURE)


def _blocks(quaternions, n):
    """The offsets of the quaternion blocks, checked against n (None: not known yet)."""
    if quaternions is None:
        return ()
    if isinstance(quaternions, (int, np.integer)) and not isinstance(quaternions, bool):
        quaternions = (quaternions,)
    try:
        offs = tuple(int(o) for o in quaternions)
    except (TypeError, ValueError):
        raise TypeError("`quaternions` must be a sequence of ints (the index where each "
                        f"quaternion block starts), got {quaternions!r}") from None
    if any(isinstance(o, bool) or o != int(o) for o in quaternions):   # (0.5: no block)
        raise TypeError(f"`quaternions` must hold ints, got {quaternions!r}")
    offs_sorted = sorted(offs)
    for a, b in zip(offs_sorted, offs_sorted[1:]):
        if b - a < 4:
            raise ValueError(f"`quaternions`: the blocks at {a} and {b} overlap (each takes 4 "
                             "values)")
    for o in offs:
        if o < 0 or (n is not None and o + 4 > n):
            raise ValueError(f"`quaternions`: a block at {o} does not fit in a state of "
                             f"{n if n is not None else 'any'} values (0 <= start <= n - 4)")
    return tuple(offs_sorted)


class ODE:
    """A user's equations ``y' = f(t, y)`` whose state holds quaternion blocks.

    Parameters
    ----------
    fun : callable, numba cfunc, scipy.LowLevelCallable or ctypes function
        The right-hand side.  A Python callable is called as ``fun(t, y, *args)`` (``fun(t,
        y, p, *args)`` with ``params``: ``p`` the body's row) and returns ``dydt`` of n
        values, as `scipy.integrate.solve_ivp` calls it; a compiled one has the C signature
        ``int f(double t, const double* y, double* dydt, const double* p)``
        (`ODE.c_signature`; `ODE.signature` is numba's, for ``@numba.cfunc(ODE.signature)``),
        is called without the GIL and returns 0 (anything else stops the body's run with a
        failure status naming the body and time).  ``p`` points at the body's parameters
        (NULL without ``params``).
    n : int, optional
        The state size; default: the width of ``y0`` at the run.
    quaternions : int or sequence of int, optional
        Where each quaternion block starts (4 values, scalar first ``[w, x, y, z]``, the
        orientation mapping body to world); the blocks may not overlap.  Default: none.
    params : array_like, shape (m,) or (N, m), optional
        Parameters handed to ``fun``: one row shared by every body, or one row per body of a
        batch (N rows for the N rows of ``y0``).
    args : tuple, optional
        Extra arguments of a Python ``fun`` (as `scipy.integrate.solve_ivp`'s ``args``).
    jac : callable, optional
        The Jacobian ``df/dy`` (SciPy's ``jac`` convention), used only by sensitivities
        (``rotode.integrate(..., sensitivity=["y0", "params"])``, docs/sensitivity.md): a
        Python callable called as ``fun`` is, ``jac(t, y, *args)`` (``jac(t, y, p, *args)``
        with ``params``, ``p`` the body's row; ``args`` is empty for a compiled ``fun``),
        returning an ``(n, n)`` array ``J[i, k] = df_i/dy_k`` in the full state coordinates
        (a quaternion block's 4 components as they appear in ``y``).  Without it a stage's
        tangent is a central difference of ``fun`` (about 1e-10 relative).
    jac_params : callable, optional
        ``df/dparams``, called as ``jac``, returning an ``(n, m)`` array (m parameters);
        needs ``params``.  With ``jac`` but without ``jac_params``, the parameter columns'
        ``f_p dp`` is a central difference of ``fun`` along the parameters alone.

    Attributes
    ----------
    fun, n, quaternions, params, args, jac, jac_params
        The arguments, checked (``quaternions`` a sorted tuple; ``params`` a read-only
        float64 array or None).
    signature : numba signature
        ``intc(float64, CPointer(float64), CPointer(float64), CPointer(float64))``, for
        ``@numba.cfunc(rotode.ODE.signature)`` (reading it imports numba).
    c_signature : str
        The C signature, `C_SIGNATURE`, as a `scipy.LowLevelCallable` carries it.

    See Also
    --------
    rotode.integrate : runs it (``method`` one of ``rotode.methods.names("ode")``).
    rotode.solve_ivp : SciPy's interface, with ``quaternions=``.

    Notes
    -----
    **What a quaternion block's derivative must be.**  The group methods (``rkmk*``) read the
    body angular velocity of a block from ``fun``'s own ``q'`` as ``w = 2 vec(q^* q')``:
    write ``q' = 1/2 q (x) (0, w_body)`` or ``q' = 1/2 (0, w_world) (x) q`` (Hamilton product).
    A component of ``q'`` along ``q`` (a norm-keeping gain ``c q``, Rucker 2018 eq. 23) is
    dropped there, and so is anything else than a rotation rate: the block stays a unit
    quaternion.  The methods on the state (``dop853``, ``dopri5``, ``bs3``, ``rk3``, ``rk4``,
    ``ab3``) integrate ``q'`` as written and, with the option ``normalize=True`` (the default), put
    each block back on the unit sphere after every step (scipy/scipy#13497's request);
    ``normalize=False`` leaves it (then ``fun`` must hold for a quaternion of any length).

    **Failures** are reported, never silent: a compiled ``fun`` returning nonzero, a NaN or
    inf in ``dydt``, a Python exception (re-raised unchanged, KeyboardInterrupt too) stop
    the body at that step; its later rows are NaN and ``message`` names the body and time.

    **Jacobians** (``jac``, ``jac_params``) serve the sensitivities only: the run itself never
    calls them.  Their values are trusted (a wrong Jacobian gives wrong sensitivities); a
    result of another shape or with NaN or inf raises ValueError naming the function and the
    expected shape, and an exception of theirs propagates unchanged.

    References
    ----------
    H. Munthe-Kaas, "Runge-Kutta methods on Lie groups", BIT 38 (1998) 92-111.
    D. C. Rucker, "Integrating rotations using nonunit quaternions", IEEE Robotics and
    Automation Letters 3 (2018) 2979-2986, eqs. 22-23.

    Examples
    --------
    A rigid body spinning about a tilted axis, with a rotation-vector integral riding along:

    >>> import numpy as np, rotode
    >>> def f(t, y):
    ...     q, w = y[:4], y[4:7]
    ...     dq = 0.5 * np.array([-q[1:] @ w, *(q[0] * w + np.cross(q[1:], w))])
    ...     return np.concatenate([dq, np.zeros(3), w])
    >>> model = rotode.ODE(f, n=10, quaternions=[0])
    >>> y0 = np.array([1, 0, 0, 0, 0.0, 0.0, 1.0, 0, 0, 0])
    >>> res = rotode.integrate(model, (0, np.pi), y0, method="rkmk5", rtol=1e-10,
    ...                        atol=1e-12)
    >>> np.round(res.y[-1, :4], 9).tolist(), round(float(res.y[-1, 9]), 9)
    ([0.0, 0.0, 0.0, 1.0], 3.141592654)
    """

    signature = _cfunc.NumbaSignature(_SIGNATURE)
    c_signature = C_SIGNATURE

    def __init__(self, fun, n=None, quaternions=(), params=None, args=(), jac=None,
                 jac_params=None):
        self.kind, self.address, self.fun = _function(fun)
        for name, g in (("jac", jac), ("jac_params", jac_params)):
            if g is not None and not callable(g):
                raise TypeError(f"`{name}` must be a Python callable (df/d"
                                f"{'y' if name == 'jac' else 'params'}) or None, got "
                                f"{type(g).__name__}")
        if jac_params is not None and params is None:
            raise ValueError("`jac_params` (df/dparams, shape (n, m)) needs `params`")
        self.jac, self.jac_params = jac, jac_params
        if n is not None:
            if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
                raise ValueError(f"`n` must be a positive int (the state size), got {n!r}")
            n = int(n)
        self.n = n
        self.quaternions = _blocks(quaternions, n)
        if not isinstance(args, tuple):
            args = (args,)
        if args and self.kind != FUN_PYTHON:
            raise TypeError("`args` are passed to a Python `fun`; a compiled one takes its "
                            "data as `params`")
        self.args = args
        if is_dask(params):    # a dask ensemble's per-body rows: kept lazy (rotode/_dask.py)
            if params.ndim != 2 or params.dtype.kind not in "iuf":
                raise ValueError("dask `params` must be real, of shape (N, m) (one row per "
                                 f"body), got {params.shape} of dtype {params.dtype}")
        elif params is not None:
            params = as_float_array(params, "params", finite=False)
            if params.ndim not in (1, 2) or params.shape[params.ndim - 1] == 0:
                raise ValueError("`params` must have shape (m,) (shared) or (N, m) (one row "
                                 f"per body), m >= 1, got {params.shape}")
            params = np.ascontiguousarray(params)
            params.flags.writeable = False
        self.params = params
        self.error = None

    @property
    def n_bodies(self):
        """The bodies of per-body ``params`` (N), or None when they are shared."""
        return None if self.params is None or self.params.ndim == 1 else self.params.shape[0]

    @property
    def compiled(self):
        """True for a compiled ``fun`` (called without the GIL)."""
        return self.kind == FUN_C

    def __call__(self, t, y):
        """``fun(t, y)`` as the runner evaluates it (one body: the first row of ``params``),
        for `scipy.integrate.solve_ivp` or a check."""
        y = np.ascontiguousarray(as_float_array(y, "y", finite=False).reshape(-1))
        n = self.n if self.n is not None else y.shape[0]
        if y.shape != (n,):
            raise ValueError(f"`y` must have shape ({n},), got {y.shape}")
        return _evaluate(self, n, float(t), y)

    def __repr__(self):
        what = "compiled" if self.kind == FUN_C else "Python"
        return (f"ODE({what} fun, n={self.n}, quaternions={list(self.quaternions)}, "
                f"params={None if self.params is None else self.params.shape}"
                + (", jac" if self.jac is not None else "")
                + (", jac_params" if self.jac_params is not None else "") + ")")


# ---- the runner ------------------------------------------------------------------------------

cdef struct OdeCfg:
    # one run of a user's equations, shared read-only by the threads
    int kind                 # FUN_C or FUN_PYTHON
    ode_fn f                 # FUN_C: the function
    void* model              # the ODE (borrowed): a Python fun, and where its error goes
    void* eq                 # FUN_CYTHON: its Equations object (borrowed)
    int n                    # state size
    int nq                   # quaternion blocks
    const int* qoff          # (nq,) where each starts in y
    int nrest                # the other components
    const int* rest          # (nrest,) their indices in y
    bint group               # rkmk: z = [v_1, ..., v_nq, y[rest]] (3 nq + nrest values)
    bint normalize           # the methods on the state: unit blocks after every step
    bint ab3                 # the multistep ab3 (`_advance_ab3`), not a tableau
    bint resume              # rkmk: y0 is the row stored at the end of an accepted step
    const double* p          # parameters: shared (m,) or per body (N, m), or NULL
    Py_ssize_t m
    bint shared
    long long* nfev          # (N,) evaluations of fun per body
    int nz
    int pair                 # the specialised engine's PairId (-1: the driver's loop)


# the reasons of the statuses a user's fun causes (`outcome`)
_REASONS = {
    STATUS_UNAVAILABLE: "`fun` returned a nonzero status",
    STATUS_NONFINITE_ITERATE: "`fun` returned a non-finite derivative (NaN or inf)",
}


cdef int _py_eval(const OdeCfg* g, Py_ssize_t i, double t, const double* y,
                  double* dy) noexcept with gil:
    """A Python fun's dydt at (t, y) (OUT: dy); an exception is stored on the model (the
    first one of a run) for the caller to raise: STATUS_SOURCE_ERROR."""
    model = <object>g.model
    cdef Py_ssize_t k, n = g.n
    cdef double[::1] yv
    cdef const double[::1] dv
    try:
        y_arr = np.empty(n)
        yv = y_arr
        for k in range(n):
            yv[k] = y[k]
        if g.p != NULL:
            p_arr = np.asarray(<const double[:g.m]>(g.p if g.shared else g.p + i * g.m))
            out = model.fun(t, y_arr, p_arr, *model.args)
        else:
            out = model.fun(t, y_arr, *model.args)
        d = np.asarray(out)
        if d.dtype.kind not in "fiub" or d.size != n:
            raise ValueError(f"`fun` must return {n} real values (dydt), got "
                             f"{type(out).__name__} of shape {d.shape} and dtype {d.dtype}")
        dv = np.ascontiguousarray(d.reshape(n), dtype=np.float64)
        for k in range(n):
            dy[k] = dv[k]
        return STATUS_OK
    except BaseException as exc:
        if model.error is None:
            model.error = exc
        return STATUS_SOURCE_ERROR


cdef inline int _f(const OdeCfg* g, Py_ssize_t i, double t, const double* y,
                   double* dy) noexcept nogil:
    """fun(t, y) of body i (OUT: dy[n]), its nonzero return and a non-finite dydt reported."""
    cdef int st, k
    cdef const double* p = g.p
    g.nfev[i] += 1
    if g.kind != FUN_PYTHON:
        if p != NULL and not g.shared:
            p = p + i * g.m
        if g.kind == FUN_C:
            if g.f(t, y, dy, p) != 0:
                return STATUS_UNAVAILABLE
        elif (<Equations>g.eq).evaluate(t, y, dy, p) != 0:
            return STATUS_UNAVAILABLE
    else:
        st = _py_eval(g, i, t, y, dy)
        if st != STATUS_OK:
            return st
    for k in range(g.n):
        if not (dy[k] - dy[k] == 0.0):
            return STATUS_NONFINITE_ITERATE
    return STATUS_OK


cdef inline void _exp_right(const double* qb, const double* v, double* q) noexcept nogil:
    """q = qb exp(v/2): the block at the rotation vector v of the step from qb (OUT: q[4])."""
    cdef double x[3]
    cdef double e[4]
    x[0] = 0.5 * v[0]
    x[1] = 0.5 * v[1]
    x[2] = 0.5 * v[2]
    quat_exp_pure(x, e)
    quat_mul(qb, e, q)


cdef inline void _body_rate(const double* q, const double* dq, double* w) noexcept nogil:
    """w = 2 vec(q^* q') of a unit q: the body angular velocity of q' = 1/2 q (0, w) (the
    component of q' along q, the scalar part, is dropped) (OUT: w[3])."""
    w[0] = 2.0 * (q[0] * dq[1] - q[1] * dq[0] - q[2] * dq[3] + q[3] * dq[2])
    w[1] = 2.0 * (q[0] * dq[2] - q[2] * dq[0] - q[3] * dq[1] + q[1] * dq[3])
    w[2] = 2.0 * (q[0] * dq[3] - q[3] * dq[0] - q[1] * dq[2] + q[2] * dq[1])


cdef int _begin(const void* c, Py_ssize_t i, const double* y0, double* z,
                void* work) noexcept nogil:
    """z from the body's row y0 (rkmk: v = 0 from the unit base of each block) (OUT)."""
    cdef const OdeCfg* g = <const OdeCfg*>c
    cdef double* qb = <double*>work
    cdef int b, k
    if not g.group:
        for k in range(g.n):
            z[k] = y0[k]
        if g.normalize:
            for b in range(g.nq):
                rkmk_base(&z[g.qoff[b]], False)
        if g.ab3:
            qb[0] = 0.0                     # (no step taken: the multistep history is empty)
        return STATUS_OK
    for b in range(g.nq):
        for k in range(4):
            qb[4 * b + k] = y0[g.qoff[b] + k]
        rkmk_base(&qb[4 * b], g.resume)
        z[3 * b] = z[3 * b + 1] = z[3 * b + 2] = 0.0
    for k in range(g.nrest):
        z[3 * g.nq + k] = y0[g.rest[k]]
    return STATUS_OK


cdef inline void _row(const OdeCfg* g, const double* z, const double* qb,
                      double* y) noexcept nogil:
    """The state y of the algebra state z of a Runge-Kutta-Munthe-Kaas step (OUT: y[n])."""
    cdef int b, k
    for b in range(g.nq):
        _exp_right(&qb[4 * b], &z[3 * b], &y[g.qoff[b]])
    for k in range(g.nrest):
        y[g.rest[k]] = z[3 * g.nq + k]


cdef int _deriv(const void* c, Py_ssize_t i, double t, const double* z, double* dz,
                void* work) noexcept nogil:
    """y' = fun(t, y) on the state (OUT: dz[n])."""
    return _f(<const OdeCfg*>c, i, t, z, dz)


cdef int _deriv_rkmk(const void* c, Py_ssize_t i, double t, const double* z, double* dz,
                     void* work) noexcept nogil:
    """z' of a Runge-Kutta-Munthe-Kaas step: each block's v' = T(-v)^-1 w with w read from
    fun's q' at q = qb exp(v/2), the rest's own derivative (OUT: dz[nz])."""
    cdef const OdeCfg* g = <const OdeCfg*>c
    cdef double* qb = <double*>work
    cdef double* y = qb + 4 * g.nq
    cdef double* dy = y + g.n
    cdef double w[3]
    cdef int b, k, st
    _row(g, z, qb, y)
    st = _f(g, i, t, y, dy)
    if st != STATUS_OK:
        return st
    for b in range(g.nq):
        _body_rate(&y[g.qoff[b]], &dy[g.qoff[b]], w)
        rkmk_rate(&z[3 * b], w, FRAME_BODY, &dz[3 * b])
    for k in range(g.nrest):
        dz[3 * g.nq + k] = dy[g.rest[k]]
    return STATUS_OK


cdef void _accept_rkmk(const void* c, Py_ssize_t i, double* z, double* K0,
                       void* work) noexcept nogil:
    """After a step: each qb <- qb exp(v/2) (retracted to |qb| = 1 to round-off), v <- 0, and
    the FSAL stage's v' = T(-v)^-1 w becomes w, the algebra rate at v = 0 (OUT: z, K0)."""
    cdef const OdeCfg* g = <const OdeCfg*>c
    cdef double* qb = <double*>work
    cdef double q[4]
    cdef int b, k
    for b in range(g.nq):
        rkmk_angular_velocity(&z[3 * b], &K0[3 * b], FRAME_BODY, &K0[3 * b])
        _exp_right(&qb[4 * b], &z[3 * b], q)
        rkmk_retract(q)
        for k in range(4):
            qb[4 * b + k] = q[k]
        z[3 * b] = z[3 * b + 1] = z[3 * b + 2] = 0.0


cdef void _accept_unit(const void* c, Py_ssize_t i, double* z, double* K0,
                       void* work) noexcept nogil:
    """After a step on the state: each block q <- q / |q| (OUT: z; the FSAL stage is kept:
    it differs from f at the unit q by the step's error in |q|)."""
    cdef const OdeCfg* g = <const OdeCfg*>c
    cdef int b
    for b in range(g.nq):
        rkmk_base(&z[g.qoff[b]], False)


cdef int _store(const void* c, Py_ssize_t i, double t, const double* z, double* y,
                double* w, void* work) noexcept nogil:
    """The output row y (n values) of z (with `normalize`, every block projected, as the
    state is after each step: a row at a step's end and one interpolated inside it alike);
    w (3) is 0: a user's state says its own rates."""
    cdef const OdeCfg* g = <const OdeCfg*>c
    cdef int k
    w[0] = w[1] = w[2] = 0.0
    if g.group:
        _row(g, z, <const double*>work, y)
        return STATUS_OK
    for k in range(g.n):
        y[k] = z[k]
    if g.normalize:
        for k in range(g.nq):
            rkmk_base(&y[g.qoff[k]], False)
    return STATUS_OK


cdef int _advance_none(const void* c, Py_ssize_t i, const double* t, Py_ssize_t j0,
                       Py_ssize_t j1, double* z, void* work, Py_ssize_t* j) noexcept nogil:
    """(never called: the one-step methods of a user's equations are tableaux the driver
    steps)"""
    j[0] = j0
    return STATUS_UNAVAILABLE


# ab3's per-body work: [steps taken, t of the previous step's start, t of the one before,
# f at the last three step starts (3 n), the start-up's stages and argument (3 n)]
cdef enum:
    AB3_HEAD = 3


cdef int _ab3_step(const void* c, Py_ssize_t i, double t0, double t1, double* z,
                   void* work) noexcept nogil:
    """One step t0 -> t1 of variable-step Adams-Bashforth 3 (`ab3_weights`, the integrals of
    the Lagrange basis on the last three step starts), the first two steps by Kutta's
    third-order method (`rotode.dynamic`'s start, so the rigid body written as an ODE gives
    its bits; the history then holds f at their starts); each block projected after the step
    with `normalize` (IN/OUT: z, work)."""
    cdef const OdeCfg* g = <const OdeCfg*>c
    cdef double* W = <double*>work
    cdef Py_ssize_t n = g.n, k, taken = <Py_ssize_t>W[0]
    cdef double* F = W + AB3_HEAD
    cdef double* f0 = F + (taken % 3) * n
    cdef double* k2 = F + 3 * n
    cdef double* k3 = k2 + n
    cdef double* ys = k3 + n
    cdef double h = t1 - t0
    cdef double cab[3]
    cdef const double* f1
    cdef const double* f2
    cdef int st = _f(g, i, t0, z, f0), b
    if st != STATUS_OK:
        return st
    if taken >= 2:
        f1 = F + ((taken + 2) % 3) * n
        f2 = F + ((taken + 1) % 3) * n
        ab3_weights(h, t0 - W[1], W[1] - W[2], cab)
        for k in range(n):
            z[k] = z[k] + (cab[0] * f0[k] + cab[1] * f1[k] + cab[2] * f2[k])
    else:          # the start: Kutta's third-order method, as the rigid body's ab3 starts
        for k in range(n):
            ys[k] = z[k] + 0.5 * h * f0[k]
        st = _f(g, i, t0 + 0.5 * h, ys, k2)
        for k in range(n):
            ys[k] = z[k] + h * (2.0 * k2[k] - f0[k])
        if st == STATUS_OK:
            st = _f(g, i, t1, ys, k3)
        if st != STATUS_OK:
            return st
        for k in range(n):
            z[k] = z[k] + h * (f0[k] + 4.0 * k2[k] + k3[k]) / 6.0
    if g.normalize:
        for b in range(g.nq):
            rkmk_base(&z[g.qoff[b]], False)
    W[2] = W[1]
    W[1] = t0
    W[0] = taken + 1
    return STATUS_OK


cdef int _advance_ab3(const void* c, Py_ssize_t i, const double* t, Py_ssize_t j0,
                      Py_ssize_t j1, double* z, void* work, Py_ssize_t* j) noexcept nogil:
    """Steps j0 -> j1 of ab3 (`_ab3_step`) (IN/OUT: z, work; OUT: j)."""
    return advance_steps(_ab3_step, (<const OdeCfg*>c).n, c, i, t, j0, j1, z, work, j)


cdef _set_fun(OdeCfg* g, model, const double* p, Py_ssize_t m, bint shared):
    """The function and parameters of a run of `model` (OUT: g's kind, f, model, eq, p, m,
    shared): p the (m,) shared row or the (N, m) rows of the bodies (NULL: none)."""
    g.kind = model.kind
    g.f = <ode_fn><uintptr_t>model.address
    g.model = <void*>model
    g.eq = <void*>model.fun
    g.p = p
    g.m = m
    g.shared = shared


def _evaluate(model, int n, double t, y):
    """fun(t, y) of body 0 as the runner calls it (`ODE.__call__`)."""
    cdef OdeCfg g
    cdef long long nfev = 0
    cdef const double[::1] yv = y
    cdef const double[:, ::1] pv
    out = np.empty(n)
    cdef double[::1] ov = out
    _set_fun(&g, model, NULL, 0, True)
    g.n = n
    g.nfev = &nfev
    if model.params is not None:
        pv = np.atleast_2d(model.params)
        _set_fun(&g, model, &pv[0, 0], pv.shape[1], True)
    cdef int st = _f(&g, 0, t, &yv[0], &ov[0])
    if st == STATUS_SOURCE_ERROR:
        err, model.error = model.error, None
        raise err
    if st != STATUS_OK:
        raise ValueError(f"{_REASONS[st]} at t = {t!r}")
    return out


def _options(method, spec, options):
    """normalize from the options of `run` (TypeError for any other)."""
    opts = dict(options or {})
    normalize = opts.pop("normalize", None)
    if opts:
        raise TypeError(f"unknown option(s) for method {method!r} on an ODE: {sorted(opts)}")
    if normalize is not None and spec.group:
        raise TypeError(f"option `normalize` is not accepted by the Lie-group method "
                        f"{method!r} (it keeps every quaternion block unit by construction)")
    return True if normalize is None else as_bool_option(normalize, "normalize")


def run(method, model, y0, t, save, options=None, workers=1):
    """Advance N states of a user's `ODE` over the grid ``t``, keeping the rows at ``t[save]``.

    Parameters
    ----------
    method : str
        A method of the registry for ``"ode"`` (`METHODS`).
    model : ODE
    y0 : array_like, shape (N, n)
        Initial states; every quaternion block nonzero (any length: each block starts at its
        unit quaternion).
    t : array_like, shape (n_grid + 1,)
        The grid of a fixed-step run.
    save : array_like of int, shape (m,)
        Strictly increasing indices into ``t`` of the rows to return.
    options : dict, optional
        ``normalize`` (the methods on the state: put each block back on the unit sphere after
        every step; default True).  (Error control and events are pieces of a run's plan:
        `run_plan`.)
    workers : int, optional
        Threads over bodies; the results do not depend on it.

    Returns
    -------
    y_out : ndarray, shape (N, m, n)
    w_out : ndarray, shape (N, m, 3)
        Zeros: the state of a user's equations carries its own rates.
    stats : dict
        ``n_steps``, ``nfev`` (evaluations of ``fun``, the largest per body), ``status``,
        ``message``, ``per_body``; with error control ``n_rejected`` and ``nfev_pair``.
    """
    out = run_plan(Plan(method, model, y0, t, save, options, workers))
    return out.y, out.w, out.stats


def run_plan(plan):
    """`run` of a `rotode._runplan.Plan` (error control, events, ``resume``): a
    `rotode._runplan.RunOutput`."""
    method, model = plan.method, plan.model
    spec = _methods.get(method, "ode")
    normalize = _options(method, spec, plan.options)
    control, resume = plan.control, plan.resume
    workers = as_workers(plan.workers)
    y0 = as_float_array(plan.y0, "y0")
    n = model.n if model.n is not None else (y0.shape[1] if y0.ndim == 2 else -1)
    if y0.ndim != 2 or y0.shape[1] != n:
        raise ValueError(f"`y0` must have shape (N, {n}) for this ODE, got {y0.shape}")
    N = y0.shape[0]
    blocks = _blocks(model.quaternions, n)
    for b in blocks:
        check_nonzero_quaternions(y0[:, b:b + 4], f"y0 (the quaternion block at {b})")
    params = model.params
    if params is not None and params.ndim == 2 and params.shape[0] != N:
        raise ValueError(f"`params` holds {params.shape[0]} per-body rows but `y0` {N} bodies")
    t, save = as_step_grid(plan.t, plan.save)
    cdef int code = spec.code("ode")
    group = code == KERNEL_RKMK
    nfev = np.zeros(N, dtype=np.int64)
    cdef OdeCfg cfg
    _fill_cfg(&cfg, model, n, _layout(blocks, n), nfev, group, normalize, resume)
    cfg.nz = 3 * cfg.nq + cfg.nrest if group else n
    cfg.ab3 = code == KERNEL_AB3
    cdef Stepper sp = make_stepper(&cfg, _begin, _advance_ab3 if cfg.ab3 else _advance_none,
                                   _store, NULL, n, n, cfg.nz, True)
    sp.work_doubles = (4 * cfg.nq + 2 * n if group else
                       AB3_HEAD + 6 * n if cfg.ab3 else 1)
    sp.y0_row = False
    if cfg.ab3:
        pass                        # (a multistep method: no tableau, its own steps)
    elif group:
        if control is not None:     # v's error as an error |dv|/2 of a unit q (as kinematics)
            atol = np.array(control[1], dtype=float)
            rest = _layout(blocks, n)[2][:cfg.nrest]
            control = control[:1] + (_algebra_atol(atol, blocks, rest),) + control[2:]
        ref = np.zeros(cfg.nz)
        ref[:3 * cfg.nq] = 1.0
        engine = Engine(spec, control, cfg.nz, ref=ref)
        (<Engine>engine).attach(&sp, _deriv_rkmk)
        sp.accept = _accept_rkmk
        sp.max_angle = rkmk_max_step_angle() if cfg.nq else 0.0
        sp.angle_blocks = max(cfg.nq, 1)
    else:
        engine = Engine(spec, control, cfg.nz)
        (<Engine>engine).attach(&sp, _deriv)
        if cfg.normalize and cfg.nq:
            sp.accept = _accept_unit
    _engine_attach(&sp, &cfg, method, control, plan)
    model.error = None
    y_out, w_out, status, failed, counts, fail_t, rec = drive(&sp, t, save, y0, workers,
                                                              plan.steps, plan.h_next,
                                                              plan.events)
    adaptive = control is not None
    try:
        sources = [model] + (list(plan.events.objects) if plan.events is not None else [])
        code_, message = outcome(status, failed, t, sources, reasons=_REASONS,
                                 fail_t=fail_t if adaptive else None,
                                 last=None if adaptive else counts[:, 0])
    finally:
        model.error = None
    n_steps = t.shape[0] - 1
    stats = {"n_steps": int(n_steps), "n_main_steps": int(n_steps), "nfev": largest(nfev),
             "status": code_, "message": message}
    if adaptive:
        stats["n_steps"] = stats["n_main_steps"] = largest(counts[:, 0])
        stats["n_rejected"] = largest(counts[:, 1])
        stats["nfev_pair"] = largest(counts[:, 2])
    stats["per_body"] = per_body_counts(counts if adaptive else None, stats["n_steps"], nfev)
    return RunOutput(y_out, w_out, stats, rec.events, rec.steps, rec.h_next)


# the layouts of the states run so far, (blocks, n) -> (qoff, rest): read-only intc arrays of
# the blocks' offsets and of the other components (each at least one entry, for its pointer)
_LAYOUTS = {}


def _layout(blocks, n):
    """The (cached) layout of a state of n values with quaternion blocks at `blocks`."""
    key = (blocks, n)
    layout = _LAYOUTS.get(key)
    if layout is None:
        in_block = np.zeros(n, dtype=bool)
        for b in blocks:
            in_block[b:b + 4] = True
        rest = np.flatnonzero(~in_block)
        layout = (np.array(blocks or (0,), dtype=np.intc), len(blocks),
                  np.array(rest if len(rest) else (0,), dtype=np.intc), len(rest))
        for a in layout[::2]:
            a.flags.writeable = False
        if len(_LAYOUTS) >= 64:
            _LAYOUTS.clear()
        _LAYOUTS[key] = layout
    return layout


cdef int _fill_cfg(OdeCfg* cfg, object model, int n, tuple layout, object nfev, bint group,
                   bint normalize, bint resume) except -1:
    """cfg of a run of `model` (its function, parameters and layout, `_layout`) over bodies
    counting their evaluations in `nfev` (N,) (OUT: every field but nz and pair)."""
    cdef const double[:, ::1] pv
    _set_fun(cfg, model, NULL, 0, True)
    cfg.n = n
    cfg.qoff = <const int*>cnp.PyArray_DATA(<cnp.ndarray>layout[0])
    cfg.nq = layout[1]
    cfg.rest = <const int*>cnp.PyArray_DATA(<cnp.ndarray>layout[2])
    cfg.nrest = layout[3]
    cfg.group = group
    cfg.normalize = normalize and not group
    cfg.resume = resume and group
    cfg.nfev = <long long*>cnp.PyArray_DATA(<cnp.ndarray>nfev) if len(nfev) else NULL
    params = model.params
    if params is not None:
        pv = np.atleast_2d(params)
        _set_fun(cfg, model, &pv[0, 0], pv.shape[1], params.ndim == 1)
    return 0


def _algebra_atol(atol, blocks, rest):
    """The absolute tolerances of z = [v_1, ..., v_nq, y[rest]] from those of y: each block's
    rotation vector gets the smallest of its quaternion's (an error dv is an error |dv|/2 of
    a unit q), the rest keep theirs."""
    out = [np.full(3, atol[b:b + 4].min()) for b in blocks]
    out.append(atol[rest])
    return np.ascontiguousarray(np.concatenate(out))


# ---- the specialised engine (rotode/_ode_model.hpp) -------------------------------------------
# The embedded pairs on the state run each body's whole error-controlled loop in one call of
# the engine (docs/architecture.md, "The specialised engine") instead of the driver's loop,
# with the same steps and bits: `_engine_attach` makes `run_plan`'s stepper use it (the driver
# still runs the bodies, threads, output and statuses), `run_single` is `integrate`'s thin call
# path.

cdef extern from "_ode_model.hpp" namespace "rotode" nogil:
    cdef enum:
        ODE_CAP

    cdef struct OdeBody:
        ode_fn fn
        int (*py)(const void* ctx, Py_ssize_t i, double t, const double* y,
                  double* dy) noexcept nogil
        const void* ctx
        Py_ssize_t i
        const double* p
        int n
        int nq
        const int* qoff
        bint normalize
        long long* nfev
        const int* rest
        int nrest
        bint resume

    # one body of a pair's run on a user's equations (pair: a PairId; -1 when unknown)
    int ode_erk_body(int pair, const OdeBody* b, EngineRun* run)
    # the same for a Runge-Kutta-Munthe-Kaas method, the pair of its tableau (b.nq >= 1)
    int ode_rkmk_body(int pair, const OdeBody* b, EngineRun* run)


#: Registry name -> PairId of the pairs the specialised engine runs on a user's equations.
ENGINE_PAIRS = {name: pair for name, pair in _pair_ids().items() if name in METHODS}
#: The same for the Lie-group methods it runs (the pair of the same tableau on each step's
#: local coordinates, rotode/_ode_model.hpp `OdeRkmkModel`): their name -> that pair's PairId.
ENGINE_GROUP_PAIRS = {name: pair for name, pair in _group_pair_ids().items() if name in METHODS}
#: The largest state the engine runs; a larger one takes the driver's loop.
ENGINE_CAP = ODE_CAP
#: False: every run takes the driver's loop (tests compare the two).
_USE_ENGINE = True


cdef int _engine_py(const void* c, Py_ssize_t i, double t, const double* y,
                    double* dy) noexcept nogil:
    """dydt of a fun that is not a C pointer, for the engine: a Cython `Equations`'s
    `evaluate` (its nonzero return STATUS_UNAVAILABLE, as `_f`), or a Python fun's `_py_eval`
    (the GIL taken there)."""
    cdef const OdeCfg* g = <const OdeCfg*>c
    cdef const double* p = g.p
    if g.kind == FUN_CYTHON:
        if p != NULL and not g.shared:
            p = p + i * g.m
        if (<Equations>g.eq).evaluate(t, y, dy, p) != 0:
            return STATUS_UNAVAILABLE
        return STATUS_OK
    return _py_eval(g, i, t, y, dy)


cdef int _engine_body(const void* c, Py_ssize_t i, EngineRun* run) noexcept nogil:
    """Body i's whole run by the specialised engine (`Stepper.body`)."""
    cdef const OdeCfg* g = <const OdeCfg*>c
    cdef OdeBody b
    b.fn = g.f if g.kind == FUN_C else NULL
    b.py = _engine_py
    b.ctx = c
    b.i = i
    b.p = g.p
    if b.p != NULL and not g.shared:
        b.p = b.p + i * g.m
    b.n = g.n
    b.nq = g.nq
    b.qoff = g.qoff
    b.normalize = g.normalize
    b.nfev = &g.nfev[i]
    b.rest = g.rest
    b.nrest = g.nrest
    b.resume = g.resume
    if g.group:
        return ode_rkmk_body(g.pair, &b, run)
    return ode_erk_body(g.pair, &b, run)


cdef int _engine_attach(Stepper* sp, OdeCfg* cfg, object method, object control,
                        object plan) except -1:
    """The engine for `run_plan`'s stepper (OUT: sp.body, cfg.pair) where it runs the run: a
    pair on the state, or a Runge-Kutta-Munthe-Kaas method on a state with quaternion blocks,
    under error control, a state of at most ODE_CAP values, no step record or step proposals
    (those keep the driver's loop; events are the driver's, on the engine's steps)."""
    cfg.pair = -1
    if (_USE_ENGINE and control is not None and cfg.n <= ODE_CAP
            and plan.steps is None and not plan.h_next):
        if not cfg.group:
            pair = ENGINE_PAIRS.get(method)
        else:               # (without a block, the driver's loop: its max_angle is then off)
            pair = ENGINE_GROUP_PAIRS.get(method) if cfg.nq else None
        if pair is not None:
            cfg.pair = pair
            sp.body = _engine_body
    return 0


# the thin path's checks read the general path's own thresholds (rtol's floor of 100 eps in
# `_validation.as_control`, the smallest |q|^2, the default step cap)
cdef double _EPS100 = 100 * np.finfo(float).eps
cdef double _TINY_NORM2 = TINY_NORM2
cdef Py_ssize_t[2] _SAVE_ENDS = [0, 1]
cdef long long _DEFAULT_MAX_STEPS = DEFAULT_MAX_STEPS


cdef inline bint _thin_real(object x, double* out):
    """x as a finite double when it is a Python float or int (not bool) (OUT: out)."""
    if type(x) is float:
        out[0] = <double>x
    elif type(x) is int and -2 ** 1023 < x < 2 ** 1023:
        out[0] = <double>x
    else:
        return False
    return isfinite(out[0])


cdef bint _thin_tolerances(object rtol, object atol, int n, EngineRun* run, double* atols):
    """rtol and atol of the thin path when of its simple forms and within `as_control`'s
    checks (OUT: run.rtol, atols[n]): None or a Python float, atol also a float64 array of n
    finite values >= 0."""
    cdef cnp.ndarray arr
    cdef const double* a
    cdef double at = 1e-6
    cdef int k
    if rtol is None:
        run.rtol = 1e-3
    elif type(rtol) is float and rtol >= _EPS100 and rtol != INFINITY:
        run.rtol = rtol
    else:
        return False                  # (below 100 eps: the general path warns)
    if type(atol) is float and atol >= 0.0 and atol != INFINITY:
        at = atol
    elif type(atol) is np.ndarray:
        arr = <cnp.ndarray>atol
        if not (cnp.PyArray_TYPE(arr) == cnp.NPY_DOUBLE and cnp.PyArray_NDIM(arr) == 1
                and cnp.PyArray_DIMS(arr)[0] == n and cnp.PyArray_IS_C_CONTIGUOUS(arr)):
            return False
        a = <const double*>cnp.PyArray_DATA(arr)
        for k in range(n):
            if not (a[k] >= 0.0 and a[k] != INFINITY):
                return False
            atols[k] = a[k]
        return True
    elif atol is not None:
        return False
    for k in range(n):
        atols[k] = at
    return True


cdef int _thin_blocks(object model, const double* y, int n, int* qoff):
    """The number of the model's quaternion blocks, or -1 unless each lies inside the n values
    y with a nonzero finite |q|^2, as `run_plan` checks them (OUT: their offsets in qoff, when
    not NULL)."""
    cdef double n2
    cdef int o, nq = 0
    for off in model.quaternions:
        o = off
        if o + 4 > n:
            return -1
        n2 = y[o] * y[o] + y[o + 1] * y[o + 1] + y[o + 2] * y[o + 2] + y[o + 3] * y[o + 3]
        if not (n2 > _TINY_NORM2 and isfinite(n2)):
            return -1
        if qoff != NULL:
            qoff[nq] = o
        nq += 1
    return nq


cdef bint _thin_state(object model, object y0, OdeCfg* cfg, int* qoff):
    """y0 and the model's layout when the thin path takes them (OUT: cfg's state fields,
    qoff): y0 a float64 array (n,) of finite values, n <= ODE_CAP, each block inside it with a
    nonzero finite |q|^2, as `run_plan` checks them."""
    cdef cnp.ndarray arr
    cdef const double* y
    cdef int n, k
    if type(y0) is not np.ndarray:
        return False
    arr = <cnp.ndarray>y0
    if not (cnp.PyArray_TYPE(arr) == cnp.NPY_DOUBLE and cnp.PyArray_NDIM(arr) == 1
            and cnp.PyArray_IS_C_CONTIGUOUS(arr)):
        return False
    n = <int>min(cnp.PyArray_DIMS(arr)[0], ODE_CAP + 1)
    if n < 1 or n > ODE_CAP or (model.n is not None and model.n != n):
        return False
    y = <const double*>cnp.PyArray_DATA(arr)
    for k in range(n):
        if not isfinite(y[k]):
            return False
    cfg.nq = _thin_blocks(model, y, n, qoff)
    if cfg.nq < 0:
        return False
    cfg.n = cfg.nz = n
    cfg.qoff = qoff
    return True


cdef void _thin_algebra(OdeCfg* cfg, int* rest, const double* atols, double* zatol):
    """The layout and tolerances of a Runge-Kutta-Munthe-Kaas run on the thin path, as
    `_layout` and `_algebra_atol` make them for `run_plan` (OUT: cfg's rest, nrest and nz,
    rest[n], zatol[nz]): each block's rotation vector with the smallest atol of its
    quaternion, the other components in their order with theirs."""
    cdef int b, k, j
    cdef double a
    cdef bint in_block[ODE_CAP]
    for k in range(cfg.n):
        in_block[k] = False
    for b in range(cfg.nq):
        a = atols[cfg.qoff[b]]
        for k in range(4):
            in_block[cfg.qoff[b] + k] = True
            a = min(a, atols[cfg.qoff[b] + k])
        for k in range(3):
            zatol[3 * b + k] = a
    j = 0
    for k in range(cfg.n):
        if not in_block[k]:
            rest[j] = k
            zatol[3 * cfg.nq + j] = atols[k]
            j += 1
    cfg.rest = rest
    cfg.nrest = j
    cfg.nz = 3 * cfg.nq + j


def run_fixed_single(model, t_span, y0, method, dt, save_every, normalize=True, grid=None):
    """The common fixed-step call of `rotode.integrate` on an `ODE` without its general path's
    set-up, or None.

    One body, a compiled or Cython ``fun`` with no per-body ``params``, ``y0`` a float64 array
    of shape (n,) or a list or tuple of n numbers (n <= 64), a fixed-step method on the state
    (rk3, rk4, ab3, or a pair at fixed steps: not a Lie-group method), ``t_span`` a pair of
    Python numbers, ``dt`` a Python number, ``save_every`` None or a Python int, ``normalize``
    a Python bool: the driver's fixed-grid loop is entered on `integrate`'s grid
    (`_driver.thin_grid`) as `run_plan` runs one body.  Anything else, any input `integrate`
    would refuse and a run that fails give None, and `integrate`'s general path.  Returns
    ``(t, y (m, n), w (m, 3), stats)``.
    ``grid``: None, or `_plan.time_grid`'s grid and saved indices of a call with ``t_eval``
    (taken as they are).
    """
    cdef OdeCfg cfg
    cdef BlockRun run
    cdef ThinCall c
    cdef int n
    if (type(model) is not ODE or type(method) is not str or model.kind == FUN_PYTHON
            or model.n_bodies is not None or type(normalize) is not bool):
        return None
    spec = _FIXED_SPECS.get(method)
    n = model.n if model.n is not None else (len(y0) if type(y0) in (list, tuple, np.ndarray)
                                             and np.ndim(y0) == 1 else 0)
    blocks = model.quaternions
    grid = (thin_grid(t_span, dt, save_every, y0, n, False, &c, &run, grid)
            if spec is not None else None)
    if grid is None:
        return None
    if _thin_blocks(model, run.y0, n, NULL) < 0:
        return None
    nfev = np.zeros(1, dtype=np.int64)
    cdef int code = spec.code("ode")
    _fill_cfg(&cfg, model, n, _layout(blocks, n), nfev, False, normalize, False)
    cfg.nz = n
    cfg.ab3 = code == KERNEL_AB3
    cfg.pair = -1
    cdef Stepper sp = make_stepper(&cfg, _begin, _advance_ab3 if cfg.ab3 else _advance_none,
                                   _store, NULL, n, n, cfg.nz, True)
    sp.work_doubles = AB3_HEAD + 6 * n if cfg.ab3 else 1
    sp.y0_row = False
    engine = None
    if not cfg.ab3:
        engine = Engine(spec, None, cfg.nz)
        (<Engine>engine).attach(&sp, _deriv)
        if cfg.normalize and cfg.nq:
            sp.accept = _accept_unit
    model.error = None
    try:
        rows = thin_stepper_rows(&sp, grid, &run)
    finally:
        model.error = None
    if rows is None:
        return None
    stats = {"n_steps": run.n, "n_main_steps": run.n, "nfev": int(nfev[0]), "status": 0,
             "message": "success"}
    return rows + (stats,)


def run_single(model, t_span, y0, method, rtol, atol, normalize=True):
    """The common call of `rotode.integrate` on an `ODE` in a few microseconds, or None.

    One body, a compiled or Cython ``fun`` with no per-body ``params``, ``y0`` a float64 array
    of shape (n,) (n <= `ENGINE_CAP`), a pair the engine runs (`ENGINE_PAIRS`, or on a state
    with quaternion blocks a Lie-group method of `ENGINE_GROUP_PAIRS`, ``normalize`` then
    ignored: `rotode._plan.thin_run` declines the option for it), ``t_span`` a pair of
    Python numbers, ``rtol`` None or a Python float, ``atol`` None, a Python float or a
    float64 array of n values, ``normalize`` a Python bool, no other argument: the engine is
    entered directly, with the
    checks `integrate` would make on these inputs.  Anything else, any input those checks
    would refuse, and a run that fails return None: `integrate` then takes its general path,
    which gives the same result or raises its error.  Returns ``(t, y (2, n), w (2, 3),
    stats)`` of the rows at t0 and tf.
    """
    cdef OdeCfg cfg
    cdef EngineRun run
    cdef double grid[2]
    cdef double atols[ODE_CAP]
    cdef int qoff[ODE_CAP]
    cdef int rest[ODE_CAP]
    cdef double zatol[ODE_CAP]
    cdef long long nfev = 0
    cdef const double[::1] pv
    if (type(model) is not ODE or type(method) is not str or not _USE_ENGINE
            or model.kind == FUN_PYTHON or model.n_bodies is not None
            or type(normalize) is not bool):
        return None
    pair = ENGINE_PAIRS.get(method)
    cdef bint group = pair is None
    if group:
        pair = ENGINE_GROUP_PAIRS.get(method)
    if (pair is None or not (type(t_span) is tuple or type(t_span) is list)
            or len(t_span) != 2 or not _thin_real(t_span[0], &grid[0])
            or not _thin_real(t_span[1], &grid[1]) or grid[0] == grid[1]
            or not _thin_state(model, y0, &cfg, qoff)
            or not _thin_tolerances(rtol, atol, cfg.n, &run, atols)
            or (group and cfg.nq == 0)):
        return None
    _set_fun(&cfg, model, NULL, 0, True)
    cfg.group = group
    cfg.resume = False
    cfg.normalize = normalize and not group
    if group:
        _thin_algebra(&cfg, rest, atols, zatol)
    cfg.nfev = &nfev
    cfg.pair = pair
    if model.params is not None:
        pv = model.params
        _set_fun(&cfg, model, &pv[0], pv.shape[0], True)
    y_out = np.empty((2, cfg.n))
    w_out = np.empty((2, 3))
    run.t = grid
    run.n = 1
    run.save = _SAVE_ENDS
    run.m = 2
    run.y0 = <const double*>cnp.PyArray_DATA(<cnp.ndarray>y0)
    run.yo = <double*>cnp.PyArray_DATA(<cnp.ndarray>y_out)
    run.wo = <double*>cnp.PyArray_DATA(<cnp.ndarray>w_out)
    run.atol = &atols[0]
    if group:
        run.atol = &zatol[0]
    run.first_step = 0.0
    run.max_step = INFINITY
    run.max_steps = _DEFAULT_MAX_STEPS
    run.t_eval = False
    if engine_single(_engine_body, &cfg, &run) != STATUS_OK:
        return None
    stats = {"n_steps": run.accepted, "n_main_steps": run.accepted, "nfev": nfev,
             "status": 0, "message": "success", "n_rejected": run.rejected,
             "nfev_pair": run.nfev}
    return np.array([grid[0], grid[1]]), y_out, w_out, stats


# the fixed-step methods on the state that `run_fixed_single` takes (registry entries)
_FIXED_SPECS = {name: _methods.get(name, "ode") for name in METHODS
                if not _methods.get(name).group}
