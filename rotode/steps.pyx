"""Single steps of the kinematic methods over arrays of bodies, for callers owning the loop.

Game engines and controllers advance their own clock and know w (and possibly alpha or the rates
at quadrature nodes) at each tick.  Each function here advances one step of size ``dt`` for one
body (q of shape (4,)) or many (q of shape (N, 4)), with the GIL released, using the kernels of
rotode/kinematic.pxd (the same arithmetic as `rotode.kinematic.run`; the functions are the
registry's methods marked `rotode.methods.Method.step`, each stepped with the registry's data):

>>> import numpy as np
>>> from rotode import steps
>>> q = np.tile([1.0, 0.0, 0.0, 0.0], (3, 1))
>>> w = np.array([[0.0, 0.0, 1.0]] * 3)
>>> alpha = np.zeros((3, 3))
>>> _ = steps.magnus_ca(q, w, alpha, 0.01, out=q)   # in place, no allocation
>>> np.round(q[0], 6).tolist()
[0.999988, 0.0, 0.0, 0.005]

Rates are arrays of shape (3,) (shared by all bodies) or (N, 3); ``out`` (float64,
C-contiguous, the shape of q) may be q itself, and when it is given nothing is allocated.
Angular velocities are in the frame named by ``frame`` ("body": q' = 1/2 q w, "world":
q' = 1/2 w q).  ``NODES`` gives the fractions of the step at which ``magnus2``/``magnus4``/
``magnus6``/``magnus8``, ``cg2``/``cg3`` and ``rk3``/``rk4`` expect their rates.
"""
import numpy as np

from rotode import methods as _methods
from rotode._docfill import docfiller
from rotode._validation import (as_choice, as_float_array, as_frame, as_int,
                                as_positive_scalar, as_real, check_out_overlap)

from libc.math cimport isfinite
from rotode._driver cimport (KERNEL_CG, KERNEL_EXP2, KERNEL_MAGNUS_CA, KERNEL_MAGNUS,
                             KERNEL_RK3, KERNEL_RK4)
from rotode.kinematic cimport (apply_rotvec, lie_euler_rotvec, exp2_rotvec, MagnusCaFactors,
                               magnus_ca_factors, magnus_ca_rotvec_with,
                               magnus_ca_angle, magnus_bound, magnus4_rotvec, magnus6_rotvec,
                               magnus8_rotvec, rk3_step, rk4_step)

# the methods with a single-step function here (the registry's `Method.step`), in its order
_NAMES = tuple(name for name in _methods.names("kinematics") if _methods.get(name).step)
__all__ = [*_NAMES, "NODES"]


def _nodes(name):
    """Distinct fractions of the step at which a method evaluates w (from the registry)."""
    spec = _methods.get(name, "kinematics")
    return spec.nodes or tuple(dict.fromkeys(spec.tableau.doubles[2]))


#: Fractions of the step at which the multi-node steps expect their rates (the functions whose
#: kernel reads w at nodes of the step other than its start alone).
NODES = {name: _nodes(name) for name in _NAMES
         if _methods.get(name).code("kinematics") in (KERNEL_CG, KERNEL_MAGNUS, KERNEL_RK3,
                                                      KERNEL_RK4)
         and _nodes(name) != (0.0,)}


cdef struct StepSpec:
    int kernel               # KERNEL_* of rotode/_driver.pxd (the registry's Method.code)
    int stages               # cg: weights; magnus: Gauss nodes
    bint group               # |q| kept by construction: takes `exp` (else `norm_gain`)
    double b[4]              # cg: weights (doubles of the registry's exact tableau)


cdef struct StepCall:
    # one call of a step function on n rows: the method, its rates (up to 4 arrays, each a
    # (3,) row shared by every row of q, stride 0, or one per row, stride 3), the step and the
    # options (frame, approximate exponential, magnus_ca's terms, the norm gain)
    const StepSpec* sp
    const double* wp[4]
    Py_ssize_t ws[4]
    Py_ssize_t nr
    double dt
    int fr
    bint ap
    int terms
    double gain
    MagnusCaFactors ca      # magnus_ca: the factors of dt (`magnus_ca_rotvec_with`)


cdef enum:
    MAX_STEP_FUNCTIONS = 16

# the registry's data of each function, by name (_INDEX) into _SPECS
cdef StepSpec _SPECS[MAX_STEP_FUNCTIONS]
_INDEX = {}


def _fill_specs():
    cdef StepSpec* sp
    if len(_NAMES) > MAX_STEP_FUNCTIONS:
        raise ImportError("rotode.steps: more registry methods with a step function than "
                          "MAX_STEP_FUNCTIONS")
    for i, name in enumerate(_NAMES):
        spec = _methods.get(name, "kinematics")
        sp = &_SPECS[i]
        sp.kernel = spec.code("kinematics")
        sp.group = spec.group
        sp.stages = len(spec.nodes) if spec.nodes else 0
        if sp.kernel == KERNEL_CG:
            b = spec.tableau.doubles[1]
            if len(b) > 4:
                raise ImportError(f"rotode.steps: {name!r} has more than 4 stages")
            sp.stages = len(b)
            for j in range(len(b)):
                sp.b[j] = b[j]
        _INDEX[name] = i


_fill_specs()


cdef int _frame(object frame) except -1:
    return as_frame(frame)


cdef bint _approx(object exp) except -1:
    if type(exp) is str:
        if exp == "exact":
            return False
        if exp == "approx":
            return True
    return as_choice(exp, "exp", ("exact", "approx")) == "approx"


cdef object _array(object x, str name):
    """x as a float64 C-contiguous ndarray (no copy when it already is one)."""
    if type(x) is np.ndarray and x.dtype == np.float64 and x.flags.c_contiguous:
        return x
    return as_float_array(x, name, finite=False)   # (finiteness: checked row by row)


cdef object _step(str method, object q, tuple rates, tuple names, object dt_, object out,
                  object frame, object exp, int terms, object gain_):
    cdef StepCall a
    cdef const StepSpec* sp = &_SPECS[<int>_INDEX[method]]
    cdef double dt = as_real(dt_, "dt")
    a.sp = sp
    a.dt = dt
    a.gain = 0.0
    if not (type(gain_) is float and gain_ == 0.0):      # (the default: nothing to check)
        a.gain = as_positive_scalar(gain_, "norm_gain", allow_zero=True)
    a.fr = _frame(frame)
    a.ap = _approx(exp) if sp.group else False
    a.terms = terms
    if sp.kernel == KERNEL_MAGNUS_CA:
        a.ca = magnus_ca_factors(dt, a.fr, terms)
    q = _array(q, "q")
    cdef Py_ssize_t n, nr = len(rates), r, i, c
    a.nr = nr
    if q.ndim == 1 and q.shape[0] == 4:
        n = 1
    elif q.ndim == 2 and q.shape[1] == 4:
        n = q.shape[0]
    else:
        raise ValueError(f"`q` must have shape (4,) or (N, 4), got {q.shape}")
    cdef const double** wp = a.wp
    cdef Py_ssize_t* wstride = a.ws
    cdef const double[::1] flat
    keep = []
    for r in range(nr):
        w = _array(rates[r], names[r])
        if w.ndim == 1 and w.shape[0] == 3:
            wstride[r] = 0
        elif w.ndim == 2 and w.shape[1] == 3 and w.shape[0] == n and q.ndim == 2:
            wstride[r] = 3
        else:
            want = "(3,)" if q.ndim == 1 else f"(3,) or ({n}, 3) (a row per row of `q`)"
            raise ValueError(f"`{names[r]}` must have shape {want}, got {w.shape}")
        keep.append(w)
        flat = w.reshape(-1)
        wp[r] = &flat[0]
    if out is None:
        out = np.empty_like(q)
    elif not (type(out) is np.ndarray and out.dtype == np.float64 and out.flags.c_contiguous
              and out.flags.writeable and out.shape == q.shape):
        raise ValueError(f"`out` must be a writeable C-contiguous float64 array of shape "
                         f"{q.shape}")
    else:
        # out may be q itself (each row is read before it is written), nothing else
        check_out_overlap(out, [q] + keep, ("q",) + tuple(names), same_ok=("q",))
    if n == 0:
        return out
    cdef const double[::1] qf = q.reshape(-1)
    cdef double[::1] of = out.reshape(-1)
    cdef const double* qp = &qf[0]
    cdef double* op = &of[0]
    cdef int bad = 0
    cdef Py_ssize_t badi = 0
    cdef double ang = 0.0
    if not isfinite(dt):
        raise ValueError(f"`dt` must be finite, got {dt!r}")
    with nogil:
        # pass 1: check everything before writing (out may alias q)
        for i in range(n):
            for c in range(4):
                if not isfinite(qp[4 * i + c]):
                    bad = 1
            for r in range(nr):
                for c in range(3):
                    if not isfinite(wp[r][wstride[r] * i + c]):
                        bad = 2 + r
            if bad:
                badi = i
                break
            if sp.kernel == KERNEL_MAGNUS_CA:
                ang = magnus_ca_angle(wp[0] + wstride[0] * i, wp[1] + wstride[1] * i, dt)
                if ang >= magnus_bound():
                    bad = -1
                    badi = i
                    break
        if not bad:
            if sp.kernel == KERNEL_MAGNUS_CA:
                for i in range(n):    # (its own loop: `_one`'s other kernels kept it out of line)
                    _one_magnus_ca(&a, qp + 4 * i, i, op + 4 * i)
            else:
                for i in range(n):
                    _one(&a, qp + 4 * i, i, op + 4 * i)
            for i in range(4 * n):        # finite input, huge |q| or |dt w|: an overflow
                if not isfinite(op[i]):
                    bad = -2
                    badi = i // 4
                    break
    if bad == -2:
        given = "`q`, the rates and `dt` are" if sp.group else \
            "`q`, the rates, `dt` and `norm_gain` are"
        raise ValueError(f"the step of body {badi} is not finite: {given} too large (|q| or "
                         "|dt w| overflows)")
    if bad == -1:
        raise ValueError(f"{method}: the rotation over the step of body {badi} is {ang:.6g} "
                         f"rad, at or above the convergence bound pi/sqrt(2) = 2.2214 rad "
                         f"([NIRD]); take smaller steps")
    if bad == 1:
        raise ValueError(f"`q` must contain only finite values (row {badi})")
    if bad:
        raise ValueError(f"`{names[bad - 2]}` must contain only finite values (row {badi})")
    return out


cdef inline void _one_magnus_ca(const StepCall* call, const double* q, Py_ssize_t i,
                                double* out) noexcept nogil:
    """Row i of a magnus_ca call (OUT: out)."""
    cdef double om[3]
    magnus_ca_rotvec_with(call.wp[0] + call.ws[0] * i, call.wp[1] + call.ws[1] * i, call.ca,
                          call.terms, om)
    apply_rotvec(q, om, call.fr, call.ap, out)


cdef inline void _one(const StepCall* call, const double* q, Py_ssize_t i,
                      double* out) noexcept nogil:
    """Row i of the call (every kernel but magnus_ca's): one step of q with its rates
    (OUT: out)."""
    cdef const StepSpec* sp = call.sp
    cdef Py_ssize_t nr = call.nr
    cdef double dt = call.dt, gain = call.gain
    cdef int fr = call.fr
    cdef bint ap = call.ap
    cdef double om[3]
    cdef const double* a = call.wp[0] + call.ws[0] * i
    cdef const double* b = call.wp[1] + call.ws[1] * i if nr > 1 else a
    cdef const double* c = call.wp[2] + call.ws[2] * i if nr > 2 else a
    cdef const double* d = call.wp[3] + call.ws[3] * i if nr > 3 else a
    cdef const double* w[4]
    cdef int r
    if sp.kernel == KERNEL_RK3:
        rk3_step(q, a, b, c, dt, fr, gain, out)
        return
    if sp.kernel == KERNEL_RK4:
        rk4_step(q, a, b, c, dt, fr, gain, out)
        return
    if sp.kernel == KERNEL_CG:
        # product of exponentials of dt b_i w(t0 + c_i dt) (w does not depend on q)
        w[0] = a
        w[1] = b
        w[2] = c
        w[3] = d
        lie_euler_rotvec(a, sp.b[0] * dt, om)
        apply_rotvec(q, om, fr, ap, out)
        for r in range(1, sp.stages):
            lie_euler_rotvec(w[r], sp.b[r] * dt, om)
            apply_rotvec(out, om, fr, ap, out)
        return
    if sp.kernel == KERNEL_EXP2:
        exp2_rotvec(a, b, dt, om)
    elif sp.stages == 1:          # KERNEL_MAGNUS with 1 to 4 Gauss nodes
        lie_euler_rotvec(a, dt, om)
    elif sp.stages == 2:
        magnus4_rotvec(a, b, dt, fr, om)
    elif sp.stages == 3:
        magnus6_rotvec(a, b, c, dt, fr, om)
    else:
        magnus8_rotvec(a, b, c, d, dt, fr, om)
    apply_rotvec(q, om, fr, ap, out)


# the numpydoc blocks the step functions' docstrings share (rotode._docfill)
_DOCS = {
    "parameters": """
Parameters
----------
q : array_like, shape (4,) or (N, 4)
    Orientations (scalar first, body to world, any nonzero length) at the start of
    the step.  Each rate below is one row per body, shape (N, 3), or one row for all
    bodies, shape (3,).""",
    "dt_out_frame": """
dt : float
    Step size (may be negative: a step backwards).
out : ndarray, optional
    Output (float64, C-contiguous, the shape of ``q``); may be ``q`` itself (in place).
    Nothing is allocated then.  Default: a new array.
frame : {"body", "world"}, optional
    Frame of the angular velocities (default "body": ``q' = 1/2 q w``; "world":
    ``q' = 1/2 w q``).""",
    "exp": """
exp : {"exact", "approx"}, optional
    The exact quaternion exponential (default) or [NIRD]'s trig-free normalised
    approximation `rotode.quaternion.exp_approx`.""",
    "norm_gain": """
norm_gain : float, optional
    Norm-control gain ``c >= 0`` of ``q' = 1/2 q w + c (1 - |q|^2) q`` (default 0).""",
    "options_exp": "%(dt_out_frame)s\n%(exp)s",
    "options_gain": "%(dt_out_frame)s\n%(norm_gain)s",
    "step": """
%(parameters)s
%(parameters_of)s

%(returns)s
%(see_also)s""",
    "rk": """
%(parameters)s
w0, w_mid, w1 : array_like, shape (3,) or (N, 3)
    Angular velocities at the start, middle and end of the step.
%(options_gain)s

%(returns)s
%(see_also)s

Notes
-----""",
    "rk_references": """
References
----------
%(rucker)s, sec. III.

%(example)s""",
    "returns": """
Returns
-------
ndarray, shape of ``q``
    The orientations at ``t0 + dt`` (``out`` when given).

Raises
------
ValueError
    For shapes that do not match, non-finite input, an ``out`` of the wrong kind or one
    overlapping an input other than ``q``, or a step that overflows; nothing is written
    then.

See Also
--------""",
    "example": """
Examples
--------
>>> from rotode import steps
>>> q0, w = [1.0, 0.0, 0.0, 0.0], [0.0, 0.0, 1.0]   # a turn about z at 1 rad/s""",
    "rucker": """
.. [1] C. Rucker, "Integrating Rotations using Non-Unit Quaternions", IEEE Robotics and
   Automation Letters 3(4), 2018""",
}


@docfiller(_DOCS, see_also="exp2, magnus2, rotode.LieEuler", parameters_of="""
        w : array_like, shape (3,) or (N, 3)
            Angular velocity at the start of the step.
        %(options_exp)s""")
def lie_euler(q, w, dt, out=None, *, frame="body", exp="exact"):
    """One Lie-Euler step ``q exp(dt w / 2)`` (zero-order hold on ``w``).

    %(step)s

    Notes
    -----
    First order for a varying ``w``; exact for a constant one.

    References
    ----------
    %(rucker)s, eq. 24.

    %(example)s
    >>> steps.lie_euler(q0, w, 0.1).round(8)
    array([0.99875026, 0.        , 0.        , 0.04997917])
    """
    return _step("lie_euler", q, (w,), ("w",), dt, out, frame, exp, 2, 0.0)


@docfiller(_DOCS, see_also="lie_euler, magnus_ca, rotode.Exp2", parameters_of="""
        w : array_like, shape (3,) or (N, 3)
            Angular velocity at the start of the step.
        dw : array_like, shape (3,) or (N, 3)
            Its derivative ``w'`` at the start of the step.
        %(options_exp)s""")
def exp2(q, w, dw, dt, out=None, *, frame="body", exp="exact"):
    """Second-order exponential update with ``Omega = dt w + dt^2/2 w'``.

    %(step)s

    References
    ----------
    %(rucker)s, eq. 28 (reconstructed: docs/methods-kinematic.md).

    %(example)s
    >>> steps.exp2(q0, w, [0.0, 0.0, 0.0], 0.1).round(8)
    array([0.99875026, 0.        , 0.        , 0.04997917])
    """
    return _step("exp2", q, (w, dw), ("w", "dw"), dt, out, frame, exp, 2, 0.0)


@docfiller(_DOCS, see_also="exp2, magnus4, rotode.MagnusCA", parameters_of="""
        w : array_like, shape (3,) or (N, 3)
            Angular velocity at the start of the step.
        alpha : array_like, shape (3,) or (N, 3)
            Angular acceleration, constant over the step.
        %(dt_out_frame)s
        terms : {1, 2, 3, 4}, optional
            Terms of the Magnus series (default 2).
        %(exp)s""")
def magnus_ca(q, w, alpha, dt, out=None, *, frame="body", terms=2, exp="exact"):
    """One Magnus step under constant angular acceleration ([NIRD]).

    %(step)s

    Notes
    -----
    ``w(t0 + s) = w + alpha s`` over the step; ``Omega = Omega_1 + ... + Omega_terms`` (local
    errors O(dt^3), O(dt^5), O(dt^5), O(dt^7) for 1 to 4 terms).  The series converges while a
    body's rotation over the step is below ``pi/sqrt(2)``: at or above it, ValueError before
    anything is written.

    References
    ----------
    .. [NIRD] "Numerical Integration for Rotational Dynamics", web article (docs/references.md).
    .. [1] W. Magnus, "On the exponential solution of differential equations for a linear
       operator", Communications on Pure and Applied Mathematics 7(4), 1954.

    %(example)s
    >>> steps.magnus_ca(q0, w, [0.0, 0.0, 0.0], 0.1).round(8)
    array([0.99875026, 0.        , 0.        , 0.04997917])
    """
    if not (type(terms) is int and 1 <= terms <= 4):
        terms = as_int(terms, "terms", 1, 4)
    return _step("magnus_ca", q, (w, alpha), ("w", "alpha"), dt, out, frame, exp, terms, 0.0)


@docfiller(_DOCS, see_also="magnus4, lie_euler, rotode.Magnus2", parameters_of="""
        w_mid : array_like, shape (3,) or (N, 3)
            Angular velocity at the middle of the step.
        %(options_exp)s""")
def magnus2(q, w_mid, dt, out=None, *, frame="body", exp="exact"):
    """Exponential midpoint step ``q exp(dt w(t0 + dt/2) / 2)`` (second order).

    %(step)s

    References
    ----------
    .. [1] S. Blanes, F. Casas, J. A. Oteo and J. Ros, "The Magnus expansion and some of its
       applications", Physics Reports 470, 2009.

    %(example)s
    >>> steps.magnus2(q0, w, 0.1).round(8)
    array([0.99875026, 0.        , 0.        , 0.04997917])
    """
    return _step("magnus2", q, (w_mid,), ("w_mid",), dt, out, frame, exp, 2, 0.0)


@docfiller(_DOCS, see_also="magnus2, magnus6, rotode.Magnus4", parameters_of="""
        w1, w2 : array_like, shape (3,) or (N, 3)
            Angular velocities at ``t0 + NODES["magnus4"][k] dt``.
        %(options_exp)s""")
def magnus4(q, w1, w2, dt, out=None, *, frame="body", exp="exact"):
    """Fourth-order Magnus step on two Gauss-Legendre nodes.

    %(step)s

    References
    ----------
    .. [1] S. Blanes, F. Casas, J. A. Oteo and J. Ros, "The Magnus expansion and some of its
       applications", Physics Reports 470, 2009.

    %(example)s
    >>> steps.magnus4(q0, w, w, 0.1).round(8)
    array([0.99875026, 0.        , 0.        , 0.04997917])
    """
    return _step("magnus4", q, (w1, w2), ("w1", "w2"), dt, out, frame, exp, 2, 0.0)


@docfiller(_DOCS, see_also="magnus4, magnus8, rotode.Magnus6", parameters_of="""
        w1, w2, w3 : array_like, shape (3,) or (N, 3)
            Angular velocities at ``t0 + NODES["magnus6"][k] dt``.
        %(options_exp)s""")
def magnus6(q, w1, w2, w3, dt, out=None, *, frame="body", exp="exact"):
    """Sixth-order Magnus step on three Gauss-Legendre nodes.

    %(step)s

    References
    ----------
    .. [1] S. Blanes, F. Casas, J. A. Oteo and J. Ros, "The Magnus expansion and some of its
       applications", Physics Reports 470, 2009.

    %(example)s
    >>> steps.magnus6(q0, w, w, w, 0.1).round(8)
    array([0.99875026, 0.        , 0.        , 0.04997917])
    """
    return _step("magnus6", q, (w1, w2, w3), ("w1", "w2", "w3"), dt, out, frame, exp, 2, 0.0)


@docfiller(_DOCS, see_also="magnus6, rotode.Magnus8", parameters_of="""
        w1, w2, w3, w4 : array_like, shape (3,) or (N, 3)
            Angular velocities at ``t0 + NODES["magnus8"][k] dt``.
        %(options_exp)s""")
def magnus8(q, w1, w2, w3, w4, dt, out=None, *, frame="body", exp="exact"):
    """Eighth-order Magnus step on four Gauss-Legendre nodes.

    %(step)s

    References
    ----------
    .. [1] S. Blanes, F. Casas, J. A. Oteo and J. Ros, "The Magnus expansion and some of its
       applications", Physics Reports 470, 2009.

    %(example)s
    >>> steps.magnus8(q0, w, w, w, w, 0.1).round(8)
    array([0.99875026, 0.        , 0.        , 0.04997917])
    """
    return _step("magnus8", q, (w1, w2, w3, w4), ("w1", "w2", "w3", "w4"), dt, out, frame, exp, 2,
                 0.0)


@docfiller(_DOCS, see_also="cg3, rotode.CG2", parameters_of="""
        w0 : array_like, shape (3,) or (N, 3)
            Angular velocity at the start of the step.
        w1 : array_like, shape (3,) or (N, 3)
            Angular velocity at the end of the step.
        %(options_exp)s""")
def cg2(q, w0, w1, dt, out=None, *, frame="body", exp="exact"):
    """Crouch-Grossman step of order 2 (Heun's tableau): ``q exp(dt/2 w0) exp(dt/2 w1)``.

    %(step)s

    Notes
    -----
    The product is written for the body frame; it reverses in the world frame.

    References
    ----------
    .. [1] P. E. Crouch and R. Grossman, "Numerical integration of ordinary differential
       equations on manifolds", Journal of Nonlinear Science 3, 1993.

    %(example)s
    >>> steps.cg2(q0, w, w, 0.1).round(8)
    array([0.99875026, 0.        , 0.        , 0.04997917])
    """
    return _step("cg2", q, (w0, w1), ("w0", "w1"), dt, out, frame, exp, 2, 0.0)


@docfiller(_DOCS, see_also="cg2, rotode.CG3", parameters_of="""
        w1, w2, w3 : array_like, shape (3,) or (N, 3)
            Angular velocities at ``t0 + NODES["cg3"][k] dt``, nodes (0, 3/4, 17/24).
        %(options_exp)s""")
def cg3(q, w1, w2, w3, dt, out=None, *, frame="body", exp="exact"):
    """Crouch-Grossman step of order 3: the product of ``exp(dt b_i w(t0 + c_i dt) / 2)``.

    %(step)s

    References
    ----------
    .. [1] P. E. Crouch and R. Grossman, "Numerical integration of ordinary differential
       equations on manifolds", Journal of Nonlinear Science 3, 1993.

    %(example)s
    >>> steps.cg3(q0, w, w, w, 0.1).round(8)
    array([0.99875026, 0.        , 0.        , 0.04997917])
    """
    return _step("cg3", q, (w1, w2, w3), ("w1", "w2", "w3"), dt, out, frame, exp, 2, 0.0)


@docfiller(_DOCS, see_also="rk4, rotode.RK3")
def rk3(q, w0, w_mid, w1, dt, out=None, *, frame="body", norm_gain=0.0):
    """Kutta's third-order Runge-Kutta step on the non-unit quaternion equation.

    %(rk)s
    The quaternion is not renormalised: its length drifts by O(dt^4) per step unless
    ``norm_gain`` pulls it back to 1.

    %(rk_references)s
    >>> steps.rk3(q0, w, w, w, 0.1).round(8)
    array([0.99875   , 0.        , 0.        , 0.04997917])
    """
    return _step("rk3", q, (w0, w_mid, w1), ("w0", "w_mid", "w1"), dt, out, frame, "exact", 2,
                 norm_gain)


@docfiller(_DOCS, see_also="rk3, rotode.RK4")
def rk4(q, w0, w_mid, w1, dt, out=None, *, frame="body", norm_gain=0.0):
    """Classical fourth-order Runge-Kutta step on the non-unit quaternion equation.

    %(rk)s
    ``q' = 1/2 q w + c (1 - |q|^2) q`` with ``c = norm_gain``; the quaternion is not
    renormalised.

    %(rk_references)s
    >>> steps.rk4(q0, w, w, w, 0.1).round(8)
    array([0.99875026, 0.        , 0.        , 0.04997917])
    """
    return _step("rk4", q, (w0, w_mid, w1), ("w0", "w_mid", "w1"), dt, out, frame, "exact", 2,
                 norm_gain)


def __dir__():
    """The public names, ``__all__`` (not the imported helpers)."""
    return list(__all__)


for _name in _NAMES:                 # a registry entry with `step` has its function here
    if not callable(globals().get(_name)):
        raise ImportError(f"rotode.steps: no function for the registry's method {_name!r}")
