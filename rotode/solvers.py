"""rotode's native fixed-step methods as ``scipy.integrate.OdeSolver`` subclasses.

``solve_ivp(rhs, t_span, y0, method=rotode.Magnus4, step=0.01)`` advances with the same compiled
step as ``rotode.integrate(..., method="magnus4", dt=0.01)`` and on the same grid (uniform steps
from ``t0``, the last one shortened to land on ``tf``), so both give the same numbers.

How the solver gets what it needs from ``fun``:

- `rotode.QuaternionKinematics`: its angular-velocity source, frame and norm gain are used
  directly (the source is evaluated at the method's nodes, in C).
- `rotode.RigidBody`: its inertia and torque are used directly (state ``[q, w_body]``).
- a Python subclass of either that overrides ``__call__``: a `QuaternionKinematics` is taken
  as a plain callable (below, in its ``frame``), so its ``__call__`` is what runs; a
  `RigidBody` is refused with a TypeError (the steppers need its inertia and torque, and
  cannot call Python equations: give the extra physics as a torque).
- any other callable with a 4-component state is taken to be quaternion kinematics
  ``q' = 1/2 q (x) w(t) (+ c q)``; the body angular velocity is recovered as
  ``w(t) = 2 vec(q^-1 fun(t, q))`` at the step's starting ``q`` (exact for such equations, as
  ``w`` does not depend on ``q``; the ``c q`` norm term drops out).  Pass ``frame="world"``
  if ``fun`` is ``1/2 w (x) q``: then ``w = 2 vec(fun(t, q) q^-1)``.

With ``step=`` (or ``dt=``) the steps are fixed and ``rtol``/``atol`` do not apply; dense output
(``t_eval`` between steps, ``dense_output=True``) is then a cubic Hermite interpolant of the state
between steps, built from ``fun`` at both ends.  The methods with an error estimate (`RKMK5`,
`RKMK8`, `Magnus6`, `Magnus8`) take ``rtol``/``atol``/``first_step``/``max_step`` instead, as
SciPy's solvers do: the compiled driver advances a chunk of steps at a time (its controller,
its step sequence: ``rotode.integrate``'s), and ``step()`` hands them out one by one.  Each
chunk continues the last one with its bits: the controller's proposal for the next step, the
pair's first stage as the last accept left it, and the base orientation that accept made (the
stored row retracted, the ``resume`` of the run's plan), so the steps and the states are
``rotode.integrate``'s bit for bit (for a rotode model; a plain callable's ``w`` is recovered
at each chunk's start, to round-off).  Their dense output stays on the group (a unit quaternion
at every time).  For `RKMK5`/`RKMK8` it is the pair's continuous extension mapped onto the
group, ``q_n exp(v(theta)/2)``, evaluated with NumPy (integrate's values to a few ulp,
~4e-16).  For `Magnus6`/`Magnus8` it is what ``rotode.integrate`` gives at ``t_eval`` and
events inside a step: the step's Magnus formula over ``[t_n, t]`` from the step's start,
``q_n exp(Omega(t_n, t)/2)`` (body frame; ``exp(Omega/2) q_n`` in the world frame), evaluated
by the compiled driver once per call for all the requested times from the step's own start
(``resume``): integrate's ``t_eval`` values bit for bit.  Event times located by SciPy's
``brentq`` on it differ from rotode's own root finder by a few ulp.  The multistep ``ab3``
has no solver class (use `rotode.integrate`).
"""
import collections

import numpy as np
from scipy.integrate import DenseOutput, OdeSolver

from rotode import _plan, kinematic, methods, quaternion
from rotode._dense import Hermite, StepInterpolant
from rotode._runplan import Plan, StepRequest
from rotode._validation import (
    DEFAULT_MAX_STEPS,
    Control,
    as_control,
    as_frame,
    complex_values_error,
    python_override,
)
from rotode.omega import Callable
from rotode.rhs import QuaternionKinematics, RigidBody

__all__ = [
    "LieEuler", "Exp2", "MagnusCA", "Magnus2", "Magnus4", "Magnus6", "Magnus8",
    "CG1", "CG2", "CG3", "RK3", "RK4", "RKN4", "RKMK5", "RKMK8",
    "ImplicitMidpoint", "Trapezoid", "ObjectTrapezoid",
]

#: Steps the compiled driver takes per call when a solver class runs with error control.
CHUNK_STEPS = 64


class _GroupOutput(DenseOutput):
    """One step of a Runge-Kutta-Munthe-Kaas pair: the pair's continuous extension of
    ``[v, (w)]`` (Hairer, Norsett & Wanner 1993, sec. II.6) mapped to ``q_n exp(v/2)`` (body) or
    ``exp(v/2) q_n`` (world), so every interpolated orientation is a unit quaternion."""

    def __init__(self, t_old, t, q_old, z_old, F, kind, frame):
        super().__init__(t_old, t)
        self.q_old = q_old / np.linalg.norm(q_old)
        self.algebra = StepInterpolant(t_old, t, z_old, F, kind)
        self.world = frame == "world"

    def _call_impl(self, t):
        z = self.algebra(t)                       # (nz,) or (nz, m)
        v = np.moveaxis(z[:3], 0, -1)
        e = quaternion.exp(0.5 * v)
        q = quaternion.multiply(e, self.q_old) if self.world else \
            quaternion.multiply(self.q_old, e)
        q = np.moveaxis(q, -1, 0)
        return np.concatenate([q, z[3:]], axis=0) if z.shape[0] > 3 else q


#: ``atol`` that accepts every step (the values of `_MagnusOutput` do not depend on it).
_ANY_ATOL = np.full(4, 1e300)
_ANY_ATOL.flags.writeable = False


class _MagnusOutput(DenseOutput):
    """One accepted step of adaptive `Magnus6`/`Magnus8`, with ``rotode.integrate``'s values
    inside a step (its ``t_eval`` and events): the step's Magnus formula over ``[t_old, t]``
    applied to the step's starting orientation (``_magnus_dense`` in rotode/kinematic.pyx), a
    unit quaternion at every ``t``.

    A call runs the compiled driver from ``t_old`` once per side of ``t_old`` asked for: one
    step to the farthest requested time, the requested times its ``t_eval``, so that the
    driver's own dense evaluation serves them (the formula at ``t`` does not depend on the
    step's end).  The tolerance is left out of it (`_ANY_ATOL`: the step is accepted);
    only a rotation of more than pi from ``t_old``, far outside the step, splits the step.
    """

    def __init__(self, t_old, t, y_old, method, model, options, resume, recover, ref):
        super().__init__(t_old, t)
        self.y_old = np.ascontiguousarray(np.asarray(y_old, dtype=float)[None, :4])
        self.method, self.model = method, model      # (kinematics only: rotode.kinematic)
        self.options, self.resume = options, resume
        self.recover, self.ref = recover, ref    # a plain callable's w: at the chunk's q

    def _call_impl(self, t):
        x = np.atleast_1d(t)
        d = 1.0 if self.t > self.t_old else -1.0
        ahead = d * (x - self.t_old) >= 0.0           # (t_old itself: the stored start)
        if ahead.all():
            y = self._run(x, d)
        else:
            y = np.empty((4, x.size))
            if ahead.any():
                y[:, ahead] = self._run(x[ahead], d)
            y[:, ~ahead] = self._run(x[~ahead], -d)
        return y[:, 0] if np.ndim(t) == 0 else y

    def _run(self, x, d):
        """The states (4, m) at times x, all on the side d of t_old (or at it)."""
        if x.size == 1 or (d * np.diff(x) > 0.0).all():       # (the common case: as given)
            u, back = x, slice(None)
        else:
            u, back = np.unique(x, return_inverse=True)
            if d < 0.0:
                u = u[::-1]
                back = u.size - 1 - back
        t0 = self.t_old
        far = u[-1] if u[-1] != t0 else self.t        # (t_old alone: any step will do)
        lead = u[0] != t0
        grid = np.concatenate(([t0], u) if lead else (u,))
        if grid[-1] != far:
            grid = np.concatenate((grid, [far]))
        save = np.arange(lead, lead + u.size, dtype=np.intp)
        # one step to `far` (2 |far - t0|: clipped there), with a tolerance it always meets
        ctl = Control(1.0, _ANY_ATOL, 2.0 * abs(far - t0), np.inf, DEFAULT_MAX_STEPS, False)
        plan = Plan(self.method, self.model, self.y_old, np.ascontiguousarray(grid), save,
                    options=self.options, control=ctl, resume=self.resume)
        recover = self.recover
        if recover is not None:
            kept, recover.q = recover.q, self.ref
        try:
            out = kinematic.run_plan(plan)
        finally:
            if recover is not None:
                recover.q = kept
        y, stats = out.y, out.stats
        if stats.get("status", 0) != 0:
            raise RuntimeError(f"dense output at t in [{u.min()!r}, {u.max()!r}]: "
                               f"{stats.get('message', 'the step failed')}")
        return y[0, back].T


class _RateFromKinematics:
    """w(t) recovered from a kinematic right-hand side at a reference quaternion."""

    def __init__(self, fun, frame):
        self.fun = fun
        self.world = frame == "world"
        self.q = None

    def __call__(self, t):
        q = self.q
        r = self.fun(t, q.copy())
        try:
            dq = np.asarray(r)
            is_complex = dq.dtype.kind == "c"
            if not is_complex:
                dq = dq.astype(float, copy=False)
        except (TypeError, ValueError):
            raise TypeError(f"`fun` must return dq/dt as a real array of shape (4,), got "
                            f"{type(r).__name__} at t = {t!r}") from None
        if is_complex:
            raise complex_values_error("`fun`", dq, t)
        if dq.shape != (4,):
            raise ValueError(f"`fun` must return dq/dt of shape (4,), got shape {dq.shape} at "
                             f"t = {t!r}")
        if not np.isfinite(dq).all():
            raise ValueError(f"`fun` returned a non-finite value {dq.tolist()} at t = {t!r}")
        inv = quaternion.inverse(q)
        u = quaternion.multiply(dq, inv) if self.world else quaternion.multiply(inv, dq)
        return 2.0 * u[1:]


class NativeSolver(OdeSolver):
    """Fixed-step solver running one native step of ``rotode.integrate``'s method at a time.

    Each subclass is one registry method (`rotode.methods`, found by the class name): its
    ``order`` and the common parameter section of its docstring come from the registry entry.
    """

    _method = None

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        spec = methods.by_solver(cls.__name__)
        cls._method = spec.name
        cls.order = spec.order
        only = "" if len(spec.models) > 1 else f"; {spec.models[0]} only"
        if spec.adaptive:
            control = ("Without ``step``: error control as in SciPy's solvers (an estimate "
                       f"of order {spec.embedded.error_order}); defaults as `rotode.integrate`'s.")
            how = "fixed steps, or error control (``rtol``)"
            step_default = "Default: error control instead."
            step_raise = ""
            run = "rtol=1e-8, atol=1e-10"
        else:
            control = "Not used: fixed steps only (ValueError with ``step``)."
            how = "fixed steps"
            step_default = "Required."
            step_raise = ", or no ``step``"
            run = "step=0.01"
        example = (_KINEMATICS_EXAMPLE if "kinematics" in spec.models
                   else _RIGID_BODY_EXAMPLE).format(cls=cls.__name__, how=run)
        cls.__doc__ = (cls.__doc__ or spec.title).rstrip() + _TEMPLATE.format(
            method=spec.name, reference=spec.reference, extra=only, control=control, how=how,
            order=spec.order, step_default=step_default, step_raise=step_raise,
            example=example)

    def __init__(self, fun, t0, y0, t_bound, step=None, dt=None, vectorized=False,
                 frame=None, rtol=None, atol=None, first_step=None, max_step=None, **options):
        step_name = "step"
        if step is None:
            step, step_name = dt, "dt"
        elif dt is not None:
            raise TypeError("give `step` or its alias `dt`, not both")
        _plan.check_option_names(options)
        spec = methods.get(self._method)
        control = (rtol, atol, first_step, max_step)
        if step is None and not spec.adaptive:
            raise TypeError(f"{type(self).__name__} takes fixed steps: pass step=...")
        if step is not None and any(c is not None for c in control):
            raise ValueError(f"give {type(self).__name__} `step` (fixed steps) or `rtol`/`atol` "
                             "(error control), not both")
        self._recover = None
        native = isinstance(fun, (QuaternionKinematics, RigidBody))
        if native and python_override(type(fun), "__call__"):
            if isinstance(fun, RigidBody):
                _plan.check_compiled_equations(fun, "fun")          # (refused)
            # kinematics whose __call__ is Python's: w(t) recovered from it, as for a callable
            if frame is not None and as_frame(frame) != fun.frame:
                raise ValueError(f"`frame`={frame!r} contradicts the model's frame "
                                 f"{fun.frame!r}")
            frame, native = fun.frame, False
        if native:
            model = fun
        elif callable(fun):
            frame = _plan.frame_or_body(frame)
            if np.shape(y0) != (4,):
                raise TypeError(
                    f"{type(self).__name__} needs `fun` to be a rotode.QuaternionKinematics, a "
                    "rotode.RigidBody, or quaternion kinematics fun(t, q) with `y0` of shape "
                    f"(4,); got a plain callable with `y0` of shape {np.shape(y0)}")
            self._recover = _RateFromKinematics(fun, frame)
            model = Callable(self._recover)
        else:
            raise TypeError(
                f"{type(self).__name__} needs `fun` to be a rotode.QuaternionKinematics, a "
                "rotode.RigidBody, or quaternion kinematics fun(t, q) with a 4-component state; "
                f"got {type(fun).__name__}")
        super().__init__(fun, t0, y0, t_bound, vectorized, support_complex=False)
        kind, runner_model, implied = _plan.classify(model, frame)
        self._kind = kind
        widths = _plan.state_width(kind, options)
        if self.y.shape[0] not in widths:
            want = " or ".join(f"({w},)" for w in widths)
            raise ValueError(f"`y0` of a {type(fun).__name__} must have shape {want} for "
                             f"{type(self).__name__}, got {self.y.shape}")
        for key, value in implied.items():
            options.setdefault(key, value)
        self._runner = _plan.runner_for(methods.get(self._method), kind)
        self._model = runner_model
        self._options = options
        self._adaptive = step is None
        if self._adaptive:
            self._spec = spec
            self._frame = options.get("frame", "body")
            n = self.y.size
            as_control(rtol, atol, first_step, max_step, None, n, abs(t_bound - t0))  # checks
            self._control = control
            self._steps = collections.deque()
            self._h_next = None
            self._K0 = None                  # the first stage of the next chunk's first step
            self._step_done = None
        else:
            self._grid, _ = _plan.time_grid((t0, t_bound), step, None, None,
                                            dt_name=step_name, span_name="(`t0`, `t_bound`)")
        self._k = 0
        self._y_old = None
        self._t_old_step = None
        # internal state carried from step to step, so that the numbers are integrate's bit
        # for bit: rkn4's q' and the implicit methods' body angular momentum
        self._carry = {}

    def _chunk(self):
        """Advance up to `CHUNK_STEPS` error-controlled steps in compiled code and queue them."""
        n = self.y.size
        pair = self._spec.tableau is not None
        nz = n - 1 if self._spec.group else n     # rkmk, adaptive Magnus: [v, (w)]
        # a later chunk continues the run with its bits: the pair's first stage as the last
        # step left it, and (rkmk, adaptive magnus) the base orientation its accept made
        # (`resume`: the stored row retracted, not normalised)
        resume = self._h_next is not None
        record = StepRequest(pair, self._K0 if resume else None)   # (at most CHUNK_STEPS)
        ref = None
        if self._recover is not None:
            ref = self._recover.q = self.y.copy()
        rtol, atol, first, top = self._control
        span = abs(self.t_bound - self.t)
        if resume:
            first = self._h_next             # continue with the proposal: the same steps
        ctl = as_control(rtol, atol, first, top, CHUNK_STEPS, n,
                         max(span, first if first is not None else 0.0))
        out = self._runner.run_plan(Plan(
            self._method, self._model, np.ascontiguousarray(self.y[None, :]),
            np.array([self.t, self.t_bound]), np.zeros(0, dtype=np.intp), options=self._options,
            control=ctl, steps=record, h_next=True, resume=resume))
        stats, steps = out.stats, out.steps
        taken = steps.n - 1
        self.nfev += int(stats.get("nfev_pair", 0))
        start = self.y[:4].copy()            # (the row the chunk starts from, as given)
        for j in range(taken):
            self._steps.append((steps.t[j + 1], steps.y[j + 1].copy(),
                                start if j == 0 else steps.y[j, :4],
                                steps.z[j].copy() if pair else None,
                                steps.F[j].reshape(7, nz).copy() if pair else None, ref,
                                resume or j > 0))
        self._h_next = float(out.h_next[0])
        self._K0 = steps.K0 if pair else None
        if stats.get("status", 0) != 0 and taken < CHUNK_STEPS:
            self._steps.append(stats.get("message", "the step failed"))

    def _step_impl(self):
        if self._adaptive:
            if not self._steps:
                self._chunk()
            item = self._steps.popleft()
            if isinstance(item, str):
                return False, item
            self._y_old, self._t_old_step = self.y, self.t
            self.t, self.y = float(item[0]), item[1]
            self._step_done = item
            return True, None
        k = self._k
        grid = np.ascontiguousarray(self._grid[k:k + 2])
        if self._recover is not None:
            self._recover.q = self.y.copy()
        out = self._runner.run_plan(Plan(
            self._method, self._model, np.ascontiguousarray(self.y[None, :]), grid,
            np.array([1], dtype=np.intp), options=dict(self._options, **self._carry)))
        y_out, stats = out.y, out.stats
        if stats.get("status", 0) != 0:
            return False, stats.get("message", "the step failed")
        for key, option in (("qdot", "qdot0"), ("L", "L0")):
            if key in stats:
                self._carry[option] = stats[key]
        self._y_old, self._t_old_step = self.y, self.t
        self._k = k + 1
        self.t = float(grid[1])
        self.y = y_out[0, 0].copy()
        self.nfev += int(stats.get("nfev", 0))
        return True, None

    def _dense_output_impl(self):
        if self._adaptive:
            t_new, _, q_old, z_old, F, ref, later = self._step_done
            if F is None:                # adaptive Magnus: its own formula inside the step
                return _MagnusOutput(self._t_old_step, t_new, q_old, self._method, self._model,
                                     self._options, later, self._recover, ref)
            if not self._spec.group:                 # a pair on the state
                return StepInterpolant(self._t_old_step, t_new, z_old, F, self._spec.embedded.kind)
            return _GroupOutput(self._t_old_step, t_new, q_old, z_old, F,
                                self._spec.embedded.kind, self._frame)
        f_old = np.asarray(self.fun(self._t_old_step, self._y_old), dtype=float)
        f = np.asarray(self.fun(self.t, self.y), dtype=float)
        return Hermite(self._t_old_step, self.t, self._y_old, self.y, f_old, f)


_TEMPLATE = """

As a ``solve_ivp`` method: {how}, the same compiled steps as `rotode.integrate` with
``method="{method}"`` ({reference}{extra}).

Parameters
----------
fun : rotode.QuaternionKinematics, rotode.RigidBody or callable
    See the module docstring for how the angular velocity is obtained.
t0, y0, t_bound, vectorized
    As for every ``OdeSolver`` (``vectorized``, default False, is not used).
step : float, optional
    The step size; the last step is shortened to land on ``t_bound``.  {step_default}
dt : float, optional
    An alias of ``step`` (give one of them).
frame : {{"body", "world"}}, optional
    Frame of a plain callable's kinematics (default "body").
rtol, atol, first_step, max_step : optional
    {control}
**options
    Method options of `rotode.integrate`.

Attributes
----------
order : int
    The method's order ({order}).

Raises
------
TypeError
    For a ``fun`` the solver cannot read (see the module docstring){step_raise}.
ValueError
    For ``step`` together with ``rtol``/``atol``, or a state of the wrong shape.

See Also
--------
rotode.integrate, rotode.solve_ivp, rotode.methods

References
----------
{reference} (docs/references.md).

Examples
--------
>>> import numpy as np, rotode
>>> from scipy.integrate import solve_ivp
{example}
"""

_KINEMATICS_EXAMPLE = """\
>>> spin = rotode.QuaternionKinematics([0.0, 0.0, np.pi])
>>> sol = solve_ivp(spin, (0, 1), [1.0, 0.0, 0.0, 0.0], method=rotode.{cls}, {how})
>>> sol.status, bool(np.allclose(np.abs(sol.y[:, -1]), [0, 0, 0, 1], atol=1e-4))  # half a turn
(0, True)"""

_RIGID_BODY_EXAMPLE = """\
>>> body = rotode.RigidBody([1.0, 2.0, 3.0])
>>> sol = solve_ivp(body, (0, 1), [1.0, 0.0, 0.0, 0.0, 0.1, 1.0, 0.1],
...                 method=rotode.{cls}, {how})
>>> energy = body.energy(sol.y)                         # torque-free: conserved
>>> sol.status, bool(abs(energy[-1] - energy[0]) < 1e-6)
(0, True)"""


class LieEuler(NativeSolver):
    """Lie-Euler exponential update."""


class Exp2(NativeSolver):
    """Second-order exponential update (the rigid body: exponential midpoint)."""


class MagnusCA(NativeSolver):
    """Magnus expansion for constant angular acceleration over the step; the acceleration is
    the source's rate at the step start."""


class Magnus2(NativeSolver):
    """Midpoint Magnus method."""


class Magnus4(NativeSolver):
    """Fourth-order Magnus method (two Gauss nodes)."""


class Magnus6(NativeSolver):
    """Sixth-order Magnus method (three Gauss nodes)."""


class Magnus8(NativeSolver):
    """Eighth-order Magnus method (four Gauss nodes)."""


class CG1(NativeSolver):
    """Crouch-Grossman method of order 1."""


class CG2(NativeSolver):
    """Crouch-Grossman method of order 2 (Heun's tableau)."""


class CG3(NativeSolver):
    """Crouch-Grossman method of order 3."""


class RK3(NativeSolver):
    """Third-order Runge-Kutta on non-unit quaternions."""


class RK4(NativeSolver):
    """Classical Runge-Kutta on non-unit quaternions."""


class RKN4(NativeSolver):
    """Runge-Kutta-Nystrom on the second-order quaternion equation."""


class RKMK5(NativeSolver):
    """Runge-Kutta-Munthe-Kaas with the Dormand-Prince 5(4) pair, on the rotation group."""


class RKMK8(NativeSolver):
    """Runge-Kutta-Munthe-Kaas with the Dormand-Prince 8(5,3) pair, on the rotation group."""


class ImplicitMidpoint(NativeSolver):
    """Implicit midpoint rule for the free rigid body."""


class Trapezoid(NativeSolver):
    """World-frame trapezoidal rule for the rigid body."""


class ObjectTrapezoid(NativeSolver):
    """Body-frame trapezoidal rule for the rigid body."""


def __dir__():
    """The public names, ``__all__`` (not the imported helpers)."""
    return list(__all__)
