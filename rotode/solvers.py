"""rotode's native fixed-step methods as ``scipy.integrate.OdeSolver`` subclasses.

``solve_ivp(rhs, t_span, y0, method=rotode.Magnus4, step=0.01)`` advances with the same compiled
step as ``rotode.integrate(..., method="magnus4", dt=0.01)`` and on the same grid (uniform steps
from ``t0``, the last one shortened to land on ``tf``), so both give the same numbers.

How the solver gets what it needs from ``fun``:

- `rotode.QuaternionKinematics`: its angular-velocity source, frame and norm gain are used
  directly (the source is evaluated at the method's nodes, in C).
- `rotode.RigidBody`: its inertia and torque are used directly (state ``[q, w_body]``).
- any other callable with a 4-component state is taken to be quaternion kinematics
  ``q' = 1/2 q (x) w(t) (+ c q)``; the body angular velocity is recovered as
  ``w(t) = 2 vec(q^-1 fun(t, q))`` at the step's starting ``q`` (exact for such equations, as
  ``w`` does not depend on ``q``; the ``c q`` norm term drops out).  Pass ``frame="world"``
  if ``fun`` is ``1/2 w (x) q``: then ``w = 2 vec(fun(t, q) q^-1)``.

Steps are fixed: ``rtol``/``atol`` do not apply.  Dense output (``t_eval`` between steps,
``dense_output=True``) is a cubic Hermite interpolant of the state between steps, built from
``fun`` at both ends.  The multistep ``ab3`` has no solver class (use `rotode.integrate`).
"""
import numpy as np
from scipy.integrate import DenseOutput, OdeSolver

from rotode import integration, methods, quaternion
from rotode.omega import Callable
from rotode.rhs import QuaternionKinematics, RigidBody

__all__ = [
    "LieEuler", "Exp2", "MagnusCA", "Magnus2", "Magnus4", "Magnus6", "Magnus8",
    "CG1", "CG2", "CG3", "RK3", "RK4", "RKN4",
    "ImplicitMidpoint", "Trapezoid", "ObjectTrapezoid",
]


class _HermiteOutput(DenseOutput):
    """Cubic Hermite interpolant of the state over one step."""

    def __init__(self, t_old, t, y_old, y, f_old, f):
        super().__init__(t_old, t)
        self.h = t - t_old
        self.y_old, self.y = y_old, y
        self.f_old, self.f = f_old, f

    def _call_impl(self, t):
        s = (np.asarray(t, dtype=float) - self.t_old) / self.h
        h00 = 1.0 - s * s * (3.0 - 2.0 * s)   # 2s^3 - 3s^2 + 1
        h10 = s * (1.0 - s) ** 2
        h01 = s * s * (3.0 - 2.0 * s)
        h11 = s * s * (s - 1.0)
        # the end points come out exactly (h00 = 0, h01 = 1 at s = 1), so that t_eval on the step
        # grid gets integrate's bits
        y = (np.multiply.outer(self.y_old, h00) + np.multiply.outer(self.y, h01)
             + self.h * (np.multiply.outer(self.f_old, h10) + np.multiply.outer(self.f, h11)))
        return y


class _RateFromKinematics:
    """w(t) recovered from a kinematic right-hand side at a reference quaternion."""

    def __init__(self, fun, frame):
        self.fun = fun
        self.world = frame == "world"
        self.q = None

    def __call__(self, t):
        q = self.q
        dq = np.asarray(self.fun(t, q.copy()), dtype=float)
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
        cls.__doc__ = (cls.__doc__ or spec.title).rstrip() + _TEMPLATE.format(
            method=spec.name, reference=spec.reference, extra=only)

    def __init__(self, fun, t0, y0, t_bound, step=None, dt=None, vectorized=False,
                 frame=None, **options):
        if step is None:
            step = dt
        elif dt is not None:
            raise TypeError("give `step` or its alias `dt`, not both")
        if step is None:
            raise TypeError(f"{type(self).__name__} takes fixed steps: pass step=...")
        self._recover = None
        if isinstance(fun, (QuaternionKinematics, RigidBody)):
            model = fun
        elif callable(fun) and np.size(y0) == 4:
            self._recover = _RateFromKinematics(fun, frame or "body")
            model = Callable(self._recover)
            frame = frame or "body"
        else:
            raise TypeError(
                f"{type(self).__name__} needs `fun` to be a rotode.QuaternionKinematics, a "
                "rotode.RigidBody, or quaternion kinematics fun(t, q) with a 4-component state")
        super().__init__(fun, t0, y0, t_bound, vectorized, support_complex=False)
        kind, runner_model, implied = integration._classify(model, frame)
        for key, value in implied.items():
            options.setdefault(key, value)
        self._runner = integration.runner_for(methods.get(self._method), kind)
        self._model = runner_model
        self._options = options
        self._grid, _ = integration._time_grid((t0, t_bound), step, None, None)
        self._k = 0
        self._y_old = None
        self._t_old_step = None
        # internal state carried from step to step, so that the numbers are integrate's bit
        # for bit: rkn4's q' and the implicit methods' body angular momentum
        self._carry = {}

    def _step_impl(self):
        k = self._k
        grid = np.ascontiguousarray(self._grid[k:k + 2])
        if self._recover is not None:
            self._recover.q = self.y.copy()
        options = dict(self._options)
        options.update(self._carry)
        y_out, _, stats = self._runner.run(self._method, self._model,
                                           np.ascontiguousarray(self.y[None, :]), grid,
                                           np.array([1], dtype=np.intp), options, 1)
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
        f_old = np.asarray(self.fun(self._t_old_step, self._y_old), dtype=float)
        f = np.asarray(self.fun(self.t, self.y), dtype=float)
        return _HermiteOutput(self._t_old_step, self.t, self._y_old, self.y, f_old, f)


_TEMPLATE = """

As a ``solve_ivp`` method: fixed steps, the same compiled step as `rotode.integrate` with
``method="{method}"`` ({reference}{extra}).

Parameters
----------
fun : rotode.QuaternionKinematics, rotode.RigidBody or callable
    See the module docstring for how the angular velocity is obtained.
t0, y0, t_bound, vectorized
    As for every ``OdeSolver``.
step : float
    The step size (``dt`` is an alias); the last step is shortened to land on ``t_bound``.
frame : {{"body", "world"}}, optional
    Frame of a plain callable's kinematics.
**options
    Method options of `rotode.integrate`.
"""


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


class ImplicitMidpoint(NativeSolver):
    """Implicit midpoint rule for the free rigid body."""


class Trapezoid(NativeSolver):
    """World-frame trapezoidal rule for the rigid body."""


class ObjectTrapezoid(NativeSolver):
    """Body-frame trapezoidal rule for the rigid body."""
