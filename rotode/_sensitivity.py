"""Sensitivities of a computed attitude: ``rotode.integrate(..., sensitivity=[...])`` and
`propagate_covariance` (docs/sensitivity.md).

The derivative is that of the computed solution, the accepted steps held fixed (internal
differentiation: Bock 1981; Hairer, Norsett and Wanner I, sec. II.6), in tangent coordinates:
a quaternion is perturbed on the right, ``q exp(dtheta/2)`` with ``dtheta`` in the body frame
(the multiplicative-EKF error state), the body angular velocity additively.

- A rigid body (`rotode.RigidBody`), error-controlled on the specialised engine, ``"y0"``:
  the run itself carries the state as dual numbers (rotode/_tangent.hpp; `prepare` sets
  ``Plan.tangent``), its steps and rows the plain run's bits, bodies in parallel over
  ``workers``.
- Otherwise every step is taken again on dual numbers (rotode/_tangent.pyx), the state, the
  principal moments or a torque's parameters (``"torque"`` of `rotode.torque.Constant`;
  ``"mass"``, ``"g"``, ``"com"`` of `rotode.torque.Gravity`; ``"mean_motion"``,
  ``"argument_of_latitude"``, ``"inclination"``, ``"raan"`` of
  `rotode.torque.GravityGradient`, whose torque moves with ``"inertia"`` too) carrying up to
  ``rotode._tangent.DIRECTIONS`` directions at once; an
  error-controlled run's accepted steps come from a record of the run (rotode/_runplan.py
  `StepRequest`).
- Kinematics with a known angular velocity: every step of every method commutes with a
  rotation of q (a body-frame rate: ``q_n(c q_0) = c q_n(q_0)``; a world-frame rate:
  ``q_n(q_0 c) = q_n(q_0) c``), so the derivative of the discrete map is exact in closed form:
  ``R(q_0^-1 q_n)^T`` (body frame) or the identity (world frame).  The parameters of the
  rate (a constant rate ``"omega"``; a `rotode.omega.Samples` recording's ``"bias"`` and
  ``"scale"``) are carried through the exponentials of the Lie-group steps whose rotation
  vector is linear in the rate (rotode/_tangent.pyx `kinematics_rates`: the recursion of
  on-manifold preintegration, Forster et al. 2017 eq. 44).
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from rotode import _ode_sensitivity, _tangent, methods
from rotode import quaternion as _quaternion
from rotode._runplan import Plan, StepRequest
from rotode.omega import AngularVelocity, Constant, Samples, Sinusoid
from rotode.rhs import rigid_body_list

__all__ = ["PARAMETERS", "propagate_covariance"]

#: The parameters each model kind differentiates, with their number of directions.
PARAMETERS = {"kinematics": {"y0": 3, "omega": 3, "bias": 3, "scale": 3, "amplitude": 3,
                             "rate": 1, "phase": 3},
              "rigid body": {"y0": 6, "q0": 3, "w0": 3, "inertia": 3, "torque": 3, "mass": 1,
                             "g": 1, "com": 3, "mean_motion": 1, "argument_of_latitude": 1,
                             "inclination": 1, "raan": 1}}

#: A rigid body's parts of ``y0`` that can be asked for alone (fewer directions: a pass of the
#: replay carries up to ``rotode._tangent.DIRECTIONS`` of them): the orientation's tangent
#: directions dtheta0 (``"q0"``) and the body rate (``"w0"``), as y0's columns from this one.
Y0_PARTS = {"q0": 0, "w0": 3}


#: The options of an implicit rule a differentiated run takes (not ``L0``: a continued run).
IMPLICIT_OPTIONS = ("solver", "tol", "bound", "max_iter", "max_substeps", "substep_angle")


def _valid(kind, model):
    """The parameters a model of `kind` has (a kinematics rate: its source's; a rigid body:
    its torque's, when every body's torque is of one built-in kind; an ODE: its params)."""
    if kind == "ode":
        return ("y0",) if model.params is None else ("y0", "params")
    if kind == "rigid body":
        kinds = {type(b.torque) for b in (model if isinstance(model, list) else [model])}
        extra = _tangent.TORQUE_PARAMETERS.get(kinds.pop(), ()) if len(kinds) == 1 else ()
        return ("y0", *Y0_PARTS, "inertia") + extra
    if kind != "kinematics":
        return tuple(PARAMETERS.get(kind, {}))
    if isinstance(model, Samples):
        return ("y0", "bias", "scale")
    if isinstance(model, Sinusoid):
        return ("y0", "amplitude", "rate", "phase")
    if isinstance(model, (Constant, np.ndarray)):
        return ("y0", "omega")
    return ("y0",)


def _check_gravity_gradient_inertia(model):
    """ValueError when a `rotode.torque.GravityGradient` torque of a body holds an inertia
    other than the body's: the derivative by the ``inertia`` moves both (the torque depends on
    the body's mass distribution), which is only defined when they are one."""
    for b in (model if isinstance(model, list) else [model]):
        for g in _tangent.gravity_gradient_parts(b.torque):
            mine, its = np.asarray(b.inertia), np.asarray(g.inertia)
            if mine.shape != its.shape or not np.array_equal(mine, its):
                shown = mine.tolist() if mine.ndim == 2 else f"shape {mine.shape}"
                raise ValueError(
                    "`sensitivity` to 'inertia' needs the GravityGradient torque's `inertia` to "
                    f"be the body's ({shown}); the derivative moves both together")


def refuse_dask(sensitivity):
    """ValueError for a ``sensitivity`` request with dask input."""
    if sensitivity is not None:
        raise ValueError("`sensitivity` is not supported with dask input; run the chunks as "
                         "NumPy arrays")


def check_request(sensitivity, kind, name, options, events, model=None):
    """The parameter names of a ``sensitivity`` request for `model` (the runner's), checked
    (ValueError for an unknown name, a method or option whose run is not differentiated,
    events), or None."""
    if sensitivity is None:
        return None
    if events is not None:
        raise ValueError("`sensitivity` with `events` is not supported: a terminal event ends "
                         "a run at a time that depends on the parameters")
    if isinstance(sensitivity, str):
        sensitivity = [sensitivity]
    names = list(sensitivity)
    valid = _valid(kind, model)
    what = kind if kind != "kinematics" else f"kinematics with {type(model).__name__} rates"
    for p in names:
        if not isinstance(p, str) or p not in valid:
            raise ValueError(f"unknown sensitivity parameter {p!r} for {what}; the valid ones "
                             f"are {valid}")
    if len(set(names)) != len(names) or not names:
        raise ValueError(f"`sensitivity` must name distinct parameters among {valid}, "
                         f"got {sensitivity!r}")
    for p in names:
        q = "y0" if p in Y0_PARTS else p            # (the registry's parameter of a part of y0)
        if not methods.get(name).sensitivity(kind, q):
            ok = tuple(m for m in methods.names(kind) if methods.get(m).sensitivity(kind, q))
            raise ValueError(f"method {name!r} does not support the sensitivity to {p!r} for "
                             f"{kind}; the methods that do are {ok}")
    if kind == "rigid body" and "inertia" in names:
        _check_gravity_gradient_inertia(model)
    allowed = ("frame", "norm_gain", "normalize")
    if kind == "rigid body" and methods.get(name).runner(kind) == "implicit":
        allowed += IMPLICIT_OPTIONS          # the run's sub-steps and roots, replayed as they are
    extra = sorted(k for k in options if k not in allowed)
    if extra:
        raise ValueError(f"`sensitivity` does not differentiate the option(s) {extra}")
    return tuple(names)


def _kinematics(y0, y, frame):
    """d dtheta(t) / d dtheta0 of kinematics with a known rate from y0 (N, 4), rows y
    (N, m, 4)."""
    N, m = y.shape[:2]
    if frame == "world":
        return np.broadcast_to(np.eye(3), (N, m, 3, 3)).copy()
    # dtheta(t) = R(t)^T R(0) dtheta0: the body frame at 0 seen from the body frame at t (the
    # rate's part of the motion is the same for both), R of the rows (any nonzero length)
    R0 = _quaternion.to_matrix(np.ascontiguousarray(y0, dtype=float))
    R = _quaternion.to_matrix(np.ascontiguousarray(y, dtype=float))
    return np.matmul(np.swapaxes(R, -1, -2), R0[:, None])


def _rate_columns(model, p):
    """(C, sel, aux) of the parameter `p` of the rate `model`: dw/dp[:, j] = C[:, j] +
    u_sel[j](t) e_sel[j] with u the auxiliary source `aux` (rotode/_tangent.pyx)."""
    if p == "omega":
        return np.eye(3), [-1, -1, -1], None
    if p == "bias":                  # w = scale (interp(w) - bias)
        return -np.diag(model.scale), [-1, -1, -1], None
    if p == "scale":
        unscaled = Samples(model.t, model.w, model.kind, model.offset, bias=model.bias)
        return np.zeros((3, 3)), [0, 1, 2], unscaled
    # Sinusoid, w_k = a_k sin(r t + phi_k): dw/da = sin(r t + phi), dw/dphi = a cos(r t + phi)
    # (the rate a quarter period ahead), dw/dr = t a cos(r t + phi)
    if p == "amplitude":
        return np.zeros((3, 3)), [0, 1, 2], Sinusoid(1.0, model.rate, model.phase)
    ahead = Sinusoid(model.amplitude, model.rate, model.phase + 0.5 * np.pi)
    if p == "phase":
        return np.zeros((3, 3)), [0, 1, 2], ahead
    return np.zeros((3, 1)), [-2], ahead


def _rates(plan, p):
    """(N, m, 3, n_p) d dtheta / d p of the kinematics run `plan` for the rate parameter
    `p`."""
    spec = methods.get(plan.method)
    kernel = spec.kernel("kinematics")
    b = c = ()
    if kernel == "cg":
        _, b, c = spec.tableau.doubles
    frame = plan.options.get("frame", "body")
    model = plan.model
    source = model if isinstance(model, AngularVelocity) else None
    C, sel, aux = _rate_columns(model, p)
    ts = np.asarray(plan.t, dtype=float)
    N = plan.y0.shape[0]
    out = np.empty((N, len(plan.save), 3, len(sel)))
    for i in range(N):
        if i > 0 and source is not None and frame == "body":
            out[i] = out[0]          # (a shared body-frame rate: the same derivative)
            continue
        wconst = model[i] if source is None else np.zeros(3)
        out[i] = _tangent.kinematics_rates(kernel, (b, c), frame, (source, aux, wconst), C,
                                           sel, plan.y0[i], ts, plan.save)
    return out


def _step_times(run, i, body):
    """The accepted steps of body i's error-controlled run (a record of its run)."""
    plan = run.plan
    out = run.runner.run_plan(Plan(plan.method, body, plan.y0[i:i + 1], plan.t, plan.save,
                                   plan.options, 1, control=plan.control, steps=StepRequest()))
    return out.steps.t


def _full_tensor(bodies):
    """True when some body's inertia is not diagonal: ``"inertia"`` is then with respect to
    the six tensor components [Ixx, Iyy, Izz, Ixy, Ixz, Iyz] of every body."""
    for body in bodies:
        inertia = np.asarray(body.inertia)
        if np.count_nonzero(inertia - np.diag(np.diagonal(inertia, axis1=-2, axis2=-1))):
            return True
    return False


def _counts(names, full):
    """The number of directions of each parameter of `names` of a rigid body."""
    return [6 if p == "inertia" and full else PARAMETERS["rigid body"][p] for p in names]


def prepare(plan, runner, kind, names):
    """`plan` with ``tangent`` set when its runner carries the y0 sensitivity in the run's own
    pass (a rigid body's error-controlled run on the specialised engine, ``"y0"`` asked for:
    rotode/_tangent.hpp), else `plan` itself."""
    if (names is None or "y0" not in names or kind != "rigid body"
            or not getattr(runner, "tangent_ready", lambda plan: False)(plan)):
        return plan
    m = np.asarray(plan.t)[plan.save].shape[0]
    return replace(plan, tangent=np.empty((plan.y0.shape[0], m, 6, 6)))


def _replay(run, names):
    """(N, m, 6, n_p) of the parameters `names` by the dual-number replay of each body's steps
    (rotode/_tangent.pyx), or for a fixed grid the runner's compiled passes where it has them
    (rotode/dynamic.pyx `fixed_tangent`), the columns in the order of `names`."""
    plan = run.plan
    N = plan.y0.shape[0]
    bodies = rigid_body_list(plan.model, N)          # (one shared body, or one per row)
    full = "inertia" in names and _full_tensor(bodies)
    cols = [("y0", Y0_PARTS[p] + j) if p in Y0_PARTS else (p, j)
            for p, n in zip(names, _counts(names, full), strict=True) for j in range(n)]
    t = np.asarray(plan.t, dtype=float)
    tout = t[plan.save]
    out = np.empty((N, tout.shape[0], 6, len(cols)))
    for i in range(N):
        body = bodies[i if len(bodies) == N else 0]
        normalize = bool(plan.options.get("normalize", False))
        got = None
        if plan.control is None and hasattr(run.runner, "fixed_tangent"):
            got = run.runner.fixed_tangent(plan.method, body, plan.y0[i], t, plan.save, cols,
                                           normalize, full, out=out[i])
        if got is None:
            ts = t if plan.control is None else _step_times(run, i, body)
            out[i] = _tangent.rigid_body(plan.method, body, plan.y0[i], ts, tout, cols,
                                         normalize=normalize, full=full,
                                         options=plan.options)
    return out, full


def _rigid(run, names, y):
    """Per parameter (N, m, 6, n_p) of a rigid-body run: y0 from the run itself when it
    carried it (``plan.tangent``), the rest by `_replay`."""
    tangent = run.plan.tangent
    rest = [p for p in names if tangent is None or p != "y0"]
    parts = []
    if rest:
        out, full = _replay(run, rest)
        parts = np.split(out, np.cumsum(_counts(rest, full))[:-1], axis=3)
    got = dict(zip(rest, parts, strict=True))
    if tangent is not None:
        got["y0"] = tangent
    bad = ~np.isfinite(y).all(axis=2)
    for p in names:
        got[p][bad] = np.nan
    return {p: got[p] for p in names}


def _ode(run, names, y):
    """Per parameter (N, m, n_t, n_p) of a user's equations (rotode/_ode_sensitivity.py)."""
    plan = run.plan
    model = plan.model
    N, n = plan.y0.shape
    count = _ode_sensitivity.sizes(model, n)
    cols = [(p, j) for p in names for j in range(count[p])]
    t = np.asarray(plan.t, dtype=float)
    tout = t[plan.save]
    out = np.empty((N, tout.shape[0], count["y0"], len(cols)))
    params = model.params
    for i in range(N):
        p = None if params is None else (params if params.ndim == 1 else params[i])
        ts = t
        if plan.control is not None:
            one = model if params is None or params.ndim == 1 else type(model)(
                model.fun, n=model.n, quaternions=model.quaternions, params=p, args=model.args)
            ts = _step_times(run, i, one)
        out[i] = _ode_sensitivity.replay(plan.method, model, plan.y0[i], p, ts, tout, cols,
                                         bool(plan.options.get("normalize", True)))
    parts = np.split(out, np.cumsum([count[p] for p in names])[:-1], axis=3)
    bad = ~np.isfinite(y).all(axis=2)
    got = dict(zip(names, parts, strict=True))
    for p in names:
        got[p][bad] = np.nan
    return got


class SensitivityRun:
    """What `compute` reads of a run: its ``plan`` (`rotode._runplan.Plan`), ``runner`` (the
    module that stepped it) and model ``kind``."""

    def __init__(self, plan, runner, kind):
        self.plan = plan
        self.runner = runner
        self.kind = kind


def compute(run, names, y):
    """``{name: (N, m, n_tan, n_p)}`` for the rows y (N, m, k) of a run (`SensitivityRun`);
    None when `names` is None."""
    if names is None:
        return None
    if run.kind == "ode":
        return _ode(run, names, y)
    if run.kind == "kinematics":
        bad = ~np.isfinite(y).all(axis=2)
        got = {}
        for p in names:
            got[p] = (_kinematics(run.plan.y0, y, run.plan.options.get("frame", "body"))
                      if p == "y0" else _rates(run.plan, p))
            got[p][bad] = np.nan
        return got
    return _rigid(run, names, y)


def propagate_covariance(res, P0):
    """Propagate a covariance of the initial state along a run: ``Phi P0 Phi^T``.

    Parameters
    ----------
    res : rotode.IntegrationResult
        A result of `rotode.integrate` with ``sensitivity=["y0"]`` (``res.sensitivity["y0"]``
        of shape (n_t, n, n), or (N, n_t, n, n) for a batch).
    P0 : array_like, shape (n, n) or (N, n, n)
        The covariance of the initial state in tangent coordinates (``dtheta`` of the right
        perturbation ``q exp(dtheta/2)``, body frame, then ``dw`` for a rigid body): one for
        every body, or one per body.

    Returns
    -------
    ndarray, shape (n_t, n, n) or (N, n_t, n, n)
        The covariance at every output time, to first order: ``Phi(t) P0 Phi(t)^T`` with
        ``Phi = res.sensitivity["y0"]``.

    Raises
    ------
    ValueError
        If the result holds no ``y0`` sensitivity or ``P0`` has the wrong shape.

    See Also
    --------
    rotode.integrate

    Notes
    -----
    The linear propagation of the multiplicative extended Kalman filter (Markley 2003): the
    error state of the attitude is ``dtheta`` in the body frame, and ``Phi`` is the exact
    derivative of the computed solution (docs/sensitivity.md).

    References
    ----------
    .. [1] F. L. Markley, "Attitude error representations for Kalman filtering", J. Guidance,
       Control, and Dynamics 26(2), 2003.

    Examples
    --------
    >>> import numpy as np, rotode
    >>> res = rotode.integrate([0.0, 0.0, 1.0], (0, 1), [1, 0, 0, 0], method="rk4", dt=0.1,
    ...                        sensitivity=["y0"])
    >>> P = rotode.propagate_covariance(res, np.diag([1e-4, 1e-4, 4e-4]))
    >>> P.shape, bool(np.allclose(np.trace(P[-1]), 6e-4))
    ((11, 3, 3), True)
    """
    sens = getattr(res, "sensitivity", None)
    if not sens or "y0" not in sens:
        raise ValueError("`res` holds no 'y0' sensitivity: run rotode.integrate with "
                         "sensitivity=['y0']")
    phi = np.asarray(sens["y0"])
    n = phi.shape[-1]
    P0 = np.asarray(P0, dtype=float)
    batch = phi.ndim == 4
    if not (P0.shape == (n, n) or (batch and P0.shape == (phi.shape[0], n, n))):
        want = f"({n}, {n})" + (f" or ({phi.shape[0]}, {n}, {n})" if batch else "")
        raise ValueError(f"`P0` must have shape {want}, got {P0.shape}")
    if P0.ndim == 3:
        P0 = P0[:, None]
    return phi @ P0 @ np.swapaxes(phi, -1, -2)
