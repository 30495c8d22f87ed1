"""``rotode.solve_ivp``: ``scipy.integrate.solve_ivp`` with rotode's compiled loop.

Same signature and the same ``OdeResult`` as SciPy's function.  When ``fun`` is a rotode model
(`rotode.QuaternionKinematics` or `rotode.RigidBody`) and ``method`` is "RK23", "RK45" or
"DOP853" (`COMPILED_METHODS`, without ``args``), the whole integration runs in compiled code
with the GIL released, events included (`rotode.events`, or Python functions called with the
GIL): the pairs, the step-size controller, the initial step, the error norms and the dense
output are those of SciPy (Hairer, Norsett & Wanner, *Solving Ordinary Differential
Equations I*, 2nd ed. 1993, secs. II.4-II.10; rotode/erk.pxd), so the steps agree with SciPy's
and the answers agree to the tolerance.  Anything else is handed to
``scipy.integrate.solve_ivp`` unchanged, so the answers are SciPy's: so is a Python subclass of
a rotode model that overrides ``__call__`` (SciPy calls its ``__call__``; the compiled loop
would run the base class's equations).
"""
from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.integrate
from scipy.integrate import OdeSolution
from scipy.integrate._ivp.ivp import OdeResult as _ScipyOdeResult
from scipy.spatial.transform import Rotation

from rotode import _plan, methods, solvers
from rotode import events as _events
from rotode._dense import BlockLayout, BlockSteps, Hermite, StepInterpolant, Steps
from rotode._loops import checked_function
from rotode._runplan import Plan, StepRequest
from rotode._validation import (
    as_bool,
    as_control,
    as_float_array,
    check_nonzero_quaternions,
    python_override,
)
from rotode.ode import ODE
from rotode.rhs import QuaternionKinematics, RigidBody
from rotode.solvers import NativeSolver

if TYPE_CHECKING:
    from numpy.typing import ArrayLike, NDArray

    from rotode._typing import EventLike

__all__ = ["solve_ivp", "COMPILED_METHODS"]

#: SciPy method names that run in rotode's compiled loop -> the registry methods that run them
#: (`rotode.methods.Method.scipy`).
COMPILED_METHODS = {m.scipy: m.name for m in methods.REGISTRY.values() if m.scipy}

_SUCCESS = "The solver successfully reached the end of the integration interval."


class OdeResult(_ScipyOdeResult):
    """The result of `solve_ivp`: SciPy's fields (``t``, ``y``, ``sol``, ``t_events``,
    ``y_events``, ``nfev``, ``njev``, ``nlu``, ``status``, ``message``, ``success``).

    A subclass of SciPy's own ``OdeResult`` (a ``scipy.optimize.OptimizeResult``: a dict whose
    keys are also attributes), so ``isinstance(sol, scipy.integrate._ivp.ivp.OdeResult)``
    holds; the calls that `solve_ivp` hands to SciPy return SciPy's result with its values
    unchanged, in this class.  The annotations below are for type checkers.
    """

    t: NDArray[np.float64]
    y: NDArray[np.float64]
    sol: OdeSolution | None
    t_events: list[NDArray[np.float64]] | None
    y_events: list[NDArray[np.float64]] | None
    nfev: int
    njev: int
    nlu: int
    status: int
    message: str
    success: bool


def _compiled(fun, method, events, args):
    """The registry method that runs this call in compiled code, or None (SciPy runs it)."""
    if args is not None:
        return None
    if not isinstance(fun, (QuaternionKinematics, RigidBody)):
        return None
    if python_override(type(fun), "__call__"):     # Python equations: SciPy calls them
        return None
    if not isinstance(method, str):
        return None
    return COMPILED_METHODS.get(method)


def _zero_span(t_span):
    """True when t_span is a pair of equal finite numbers (any other pair: `_span` checks)."""
    try:
        t0, tf = t_span
        t0, tf = float(t0), float(tf)
    except (TypeError, ValueError, OverflowError):
        return False
    return t0 == tf and np.isfinite(t0)


def _rotation_state(rotation, fun):
    """``y0`` given as a scipy Rotation: the scalar-first quaternions for a rotode
    `QuaternionKinematics`, else a TypeError saying what to give."""
    if isinstance(fun, QuaternionKinematics):
        return rotation.as_quat(scalar_first=True)
    if isinstance(fun, RigidBody):
        raise TypeError("`y0` is a scipy Rotation, which holds the orientation alone; a "
                        "RigidBody's state is [q, w_body]: give y0=rotode.state(rotation, "
                        "w_body)")
    raise TypeError("`y0` is a scipy Rotation, but `fun` is not a rotode quaternion model, "
                    "whose state order rotode knows: give the array `fun` takes, "
                    "rotation.as_quat(scalar_first=True) for [w, x, y, z] or "
                    "rotation.as_quat() for SciPy's [x, y, z, w]")


def _bad_value(value, t):
    """Raise for a value of ``fun`` that SciPy would mis-report: None (TypeError) or an array
    holding NaN or inf (ValueError), naming the time; return for any other value (SciPy says
    what is wrong with it, if anything)."""
    if isinstance(t, np.floating):
        t = float(t)
    if value is None:
        raise TypeError(f"`fun` returned None at t = {t!r}; it must return dy/dt, an "
                        "array shaped like y")
    arr = np.asarray(value)
    if arr.dtype.kind in "fc" and not np.isfinite(arr).all():
        raise ValueError(f"`fun` returned non-finite values at t = {t!r}: SciPy's step-size "
                         "control cannot recover from them")


def _checked(fun, on_bad=_bad_value):
    """``fun`` for SciPy's loop, every value checked: ``on_bad(value, t)`` for a value that is
    not a finite float array or list (`rotode._loops.checked_function`, in C)."""
    return checked_function(fun, on_bad)


class _CheckedStart:
    """Mixin of SciPy's explicit Runge-Kutta solvers: their first value f(t0, y0) checked.  A
    NaN there makes the initial step NaN and SciPy's step loop endless (SciPy 1.17); every later
    bad value ends the run with status -1, which `_solve_in_scipy` examines."""

    def __init__(self, fun, t0, y0, t_bound, **options):
        super().__init__(fun, t0, y0, t_bound, **options)
        if not np.isfinite(self.f).all():
            raise _StartError(t0)


class _StartError(Exception):
    """f(t0, y0) was not finite (`_CheckedStart`; args: t0): `_solve_in_scipy` names it."""


class _RK23(_CheckedStart, scipy.integrate.RK23):
    """SciPy's RK23, its first value checked (`_CheckedStart`)."""


class _RK45(_CheckedStart, scipy.integrate.RK45):
    """SciPy's RK45, its first value checked (`_CheckedStart`)."""


class _DOP853(_CheckedStart, scipy.integrate.DOP853):
    """SciPy's DOP853, its first value checked (`_CheckedStart`)."""


#: SciPy's solvers whose handling of a bad value of ``fun`` (None, NaN, inf) shows in the
#: result, status -1, or as an exception (Radau, BDF), and which therefore run ``fun`` as it is
#: and are examined after the run (`_solve_in_scipy`); the explicit Runge-Kutta ones check
#: f(t0, y0) first, where a NaN would not end.  Every other solver (LSODA: success on NaN, no
#: end on inf; a user's OdeSolver) has every value checked.
_AFTER_THE_RUN = {"RK23": _RK23, "RK45": _RK45, "DOP853": _DOP853,
                  "Radau": scipy.integrate.Radau, "BDF": scipy.integrate.BDF}
for _cls in (scipy.integrate.RK23, scipy.integrate.RK45, scipy.integrate.DOP853,
             scipy.integrate.Radau, scipy.integrate.BDF):
    _AFTER_THE_RUN[_cls] = _AFTER_THE_RUN[_cls.__name__]
del _cls


def _solve_in_scipy(fun, method, call):
    """``call(fun, method)`` (SciPy's solve_ivp) with the values of ``fun`` checked.

    SciPy mis-reports some bad values of ``fun`` (measured with SciPy 1.17): RK45, DOP853,
    RK23 and Radau shrink the step on NaN, inf or None to status -1, "Required step size is
    less than spacing between numbers", hiding the cause (and the Runge-Kutta ones loop without
    end on NaN at t0); LSODA reports success (status 0) on NaN or None and loops without end on
    inf; BDF and Radau raise an unrelated IndexError or ValueError.  Checking every value costs
    SciPy's cheapest loops a measurable share (benchmarks/bench_solve_ivp.py), so the solvers whose
    failure is visible (`_AFTER_THE_RUN`) run ``fun`` unchecked, at SciPy's speed, and only a
    run that failed (status -1, or an exception) is run again with every value checked, to name
    the value and the time (TypeError for None, ValueError for NaN or inf); when that run finds
    none, SciPy's own result or exception stands.  The other solvers check every value."""
    key = method if isinstance(method, str) or method in _AFTER_THE_RUN else None
    solver = _AFTER_THE_RUN.get(key) if key is not None else None
    if solver is None or not callable(fun):
        return call(_checked(fun) if callable(fun) else fun, method)
    try:
        sol = call(fun, solver)
    except _StartError as start:
        _find_bad_value(fun, method, call)
        raise ValueError(f"`fun` returned non-finite values at t = {start.args[0]!r}") from None
    except Exception:
        _find_bad_value(fun, method, call)
        raise
    if sol.status == -1:
        _find_bad_value(fun, method, call)
    return sol


def _find_bad_value(fun, method, call):
    """Run ``call`` again with every value of ``fun`` checked (its warnings silenced: the first
    run gave them); raise the error of the first bad value, or return when there is none."""
    found = []

    def on_bad(value, t):
        try:
            _bad_value(value, t)
        except (TypeError, ValueError) as exc:
            found.append(exc)
            raise

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            call(_checked(fun, on_bad), method)
    except Exception:
        if not found:
            return
    if found:
        raise found[0].with_traceback(None) from None


#: SciPy's solver classes whose pairs rotode runs on a user's state (by class).
_SCIPY_PAIRS = {scipy.integrate.RK23: "bs3", scipy.integrate.RK45: "dopri5",
                scipy.integrate.DOP853: "dop853"}
#: SciPy's own method names (its ``solve_ivp`` string table), sorted
_SCIPY_METHODS = sorted(scipy.integrate._ivp.ivp.METHODS)


def _rotode_method(fun, name, args):
    """``method`` given as a string that SciPy does not know but rotode's registry does (a
    method's name or its solver class's, in any case, e.g. "RKMK8", "rkmk8", "Magnus8",
    "dop853"): for a rotode model, whose own quaternion rotode knows, SciPy's name of the pair
    or the solver class of `rotode.solvers` (as if given); for any other ``fun``, and for a
    method that does not integrate the model, ValueError saying what to give.  Any other
    string is returned unchanged (SciPy's own error names its methods)."""
    if name in _SCIPY_METHODS:
        return name
    spec = methods.REGISTRY.get(name.lower())
    if spec is None:
        try:
            spec = methods.by_solver(name, ignore_case=True)
        except LookupError:
            return name
    if (isinstance(fun, (QuaternionKinematics, RigidBody)) and args is None
            and not python_override(type(fun), "__call__")):
        kind = "rigid body" if isinstance(fun, RigidBody) else "kinematics"
        if kind not in spec.kernels:
            raise ValueError(f"`method`={name!r} (rotode's {spec.name}) does not integrate a "
                             f"{type(fun).__name__}; rotode.methods.names({kind!r}) lists "
                             "those that do")
        if spec.scipy is not None:
            return spec.scipy           # SciPy's name of the pair: rotode's compiled loop
        if spec.solver is not None:
            return getattr(solvers, spec.solver)
        raise ValueError(f"`method`={name!r}: rotode's {spec.name} has no OdeSolver class for "
                         f"solve_ivp; run it with rotode.integrate(fun, t_span, y0, "
                         f"method={spec.name!r})")
    if "ode" in spec.kernels:
        raise ValueError(f"`method`={name!r} is rotode's {spec.name} ({spec.title}), which "
                         "keeps quaternion blocks on the group: give `quaternions=` (the index "
                         "where each quaternion of the state starts), or one of SciPy's "
                         f"methods {_SCIPY_METHODS}")
    raise ValueError(f"`method`={name!r} is rotode's {spec.name} ({spec.title}), which "
                     "integrates rotode's models (rotode.RigidBody, rotode.QuaternionKinematics) "
                     "only; for this `fun` use one of SciPy's methods "
                     f"{_SCIPY_METHODS}")


def _ode_of(fun, quaternions, args):
    """The `rotode.ODE` that rotode's loop runs for this call: ``fun`` itself when it is one,
    else ``fun`` with its ``quaternions`` and ``args`` (None: no ``quaternions``, SciPy's
    call)."""
    if isinstance(fun, ODE):
        if args is not None:
            raise TypeError("`args`: a rotode.ODE holds its own (rotode.ODE(fun, args=...))")
        if quaternions is not None and ODE(fun.fun, fun.n, quaternions,
                                           fun.params).quaternions != fun.quaternions:
            raise ValueError(f"`quaternions`={quaternions!r} contradicts the ODE's blocks "
                             f"{list(fun.quaternions)}")
        return fun
    if quaternions is None:
        return None
    return ODE(fun, quaternions=quaternions, args=() if args is None else args)


def _ode_method(method):
    """The registry method that runs ``method`` on a user's state (SciPy's names of its pairs,
    rotode's names in any case, rotode's and SciPy's solver classes), or ValueError."""
    name = None
    if isinstance(method, str):
        name = COMPILED_METHODS.get(method, method.lower())
    elif method in _SCIPY_PAIRS:
        name = _SCIPY_PAIRS[method]
    elif issubclass(method, NativeSolver):
        name = method._method
    spec = methods.REGISTRY.get(name) if name is not None else None
    if spec is None or "ode" not in spec.kernels:
        shown = method if isinstance(method, str) else method.__name__
        raise ValueError(
            f"`method`={shown!r} does not run a state with quaternion blocks; with "
            "`quaternions` (or a rotode.ODE) choose 'RK23', 'RK45' or 'DOP853' (SciPy's "
            "pairs, each block projected to unit length after every step) or one of rotode's "
            f"{list(methods.names('ode'))} (the 'rkmk*' keep the blocks on the group); "
            "SciPy's other solvers run `fun` as it is without `quaternions`")
    return spec


def _ode_options(options, spec):
    """(step, control, method options) of a call on a user's state from ``**options``; the
    keys it does not know are SciPy's warning."""
    step, dt = options.pop("step", None), options.pop("dt", None)
    if step is not None and dt is not None:
        raise TypeError("give `step` or its alias `dt`, not both")
    step = dt if step is None else step
    control = [options.pop(key, None) for key in ("rtol", "atol", "first_step", "max_step",
                                                  "max_steps")]
    own = {"normalize": options.pop("normalize")} if "normalize" in options else {}
    if options:
        warnings.warn("The following arguments have no effect for a chosen solver: "
                      f"{', '.join(f'`{x}`' for x in options)}.", stacklevel=3)
    if step is None and not spec.adaptive:
        raise TypeError(f"method {spec.name!r} takes fixed steps: pass step=... (or dt=...)")
    if step is not None and any(c is not None for c in control):
        raise ValueError("give `step` (fixed steps) or `rtol`/`atol`/`first_step`/`max_step`/"
                         "`max_steps` (error control), not both")
    return step, control, own


def _solve_ode(model, t_span, y0, method, t_eval, dense_output, events, options):
    """`solve_ivp` of a user's state with quaternion blocks (`rotode.ODE`) in rotode's loop."""
    spec = _ode_method(method)
    if isinstance(y0, Rotation):
        raise TypeError("`y0` is a scipy Rotation, but the state of `fun` is its own: give "
                        "the array, each quaternion block rotation.as_quat(scalar_first=True)")
    y = as_float_array(y0, "y0")
    if y.ndim != 1 or y.shape[0] == 0 or (model.n is not None and y.shape != (model.n,)):
        want = f"({model.n},)" if model.n is not None else "(n,)"
        raise ValueError(f"`y0` must have shape {want}, got {y.shape}")
    if model.n_bodies not in (None, 1):
        raise ValueError(f"the ODE holds per-body `params` of {model.n_bodies} bodies; "
                         "solve_ivp runs one: integrate the batch with rotode.integrate")
    n = y.shape[0]
    if _zero_span(t_span):           # no step: SciPy's own result (one evaluation of fun)
        return OdeResult(scipy.integrate.solve_ivp(model, t_span, y, t_eval=t_eval,
                                                   dense_output=dense_output, events=events))
    dense_output = as_bool(dense_output, "dense_output")
    step, control, own = _ode_options(options, spec)
    t0, tf = _plan.as_span(t_span)
    evs = _events.as_events(events)
    Y0 = np.ascontiguousarray(y[None, :])
    runner = _plan.runner_for(spec, "ode")
    normalize = own.get("normalize", True)
    if step is not None:
        if evs:
            raise ValueError("`events` are located on the dense output of the error-controlled "
                             "methods: drop `step`")
        grid, save = _plan.time_grid((t0, tf), step, t_eval, None, dt_name="step")
        every = np.arange(grid.shape[0])
        out = runner.run_plan(Plan(spec.name, model, Y0, grid, every, options=own))
        rows = out.y[0]
        out = out.__class__(rows[save][None], out.w, out.stats,
                            steps=_Rows(grid, rows) if t_eval is None else None)
        steps = None
        if dense_output and int(out.stats["status"]) == 0:
            layout = BlockLayout(model.quaternions, n, False, normalize)

            def make(j):
                return Hermite(grid[j], grid[j + 1], rows[j], rows[j + 1],
                               model(grid[j], rows[j]), model(grid[j + 1], rows[j + 1]))

            steps = BlockSteps(grid, make, layout, rows)
        return _result(out, grid, save, t_eval, steps, None, events)
    rtol, atol, first, top, cap = control
    grid, save = _plan.output_grid((t0, tf), t_eval, None)
    if t_eval is None:
        save = np.zeros(0, dtype=np.intp)
    ctl = as_control(rtol, atol, first, top, cap, n, abs(tf - t0), t_eval=t_eval is not None)
    request = _plan.event_request(evs, Y0.shape, None, model) if evs else None
    out = runner.run_plan(Plan(spec.name, model, Y0, grid, save, options=own, control=ctl,
                               events=request, stops=False,
                               steps=StepRequest(dense_output)
                               if t_eval is None or dense_output else None))
    record = out.steps
    steps = None
    if dense_output and record is not None and record.n > 1:
        layout = BlockLayout(model.quaternions, n, spec.group, normalize)
        nz = record.z.shape[1]
        F = record.F.reshape(-1, 7, nz)
        kind = spec.embedded.kind

        def make(j):
            return StepInterpolant(record.t[j], record.t[j + 1], record.z[j], F[j], kind,
                                   record.h[j])

        steps = BlockSteps(record.t, make, layout, record.y)
    return _result(out, grid, save, t_eval, steps, request, events)


class _Rows:
    """Every row of a fixed-step run as `_result` reads a step record (``t``, ``y``), the rows
    after a failure left out (the run ends at the last state reached, as SciPy's)."""

    def __init__(self, t, y):
        keep = np.isfinite(y).all(axis=1)
        self.t, self.y = t[keep], y[keep]


def solve_ivp(fun: Callable[..., Any], t_span: ArrayLike, y0: ArrayLike,
              method: str | type[scipy.integrate.OdeSolver] = "RK45",
              t_eval: ArrayLike | None = None, dense_output: bool = False,
              events: EventLike | None = None, vectorized: bool = False,
              args: tuple[Any, ...] | None = None, *,
              quaternions: int | Sequence[int] | None = None, **options: Any) -> OdeResult:
    """Solve an initial value problem as ``scipy.integrate.solve_ivp`` does, in compiled code
    for rotode models and for a user's state with quaternion blocks (``quaternions=``).

    Parameters
    ----------
    fun : callable
        The right-hand side ``fun(t, y)``.  A `rotode.QuaternionKinematics` (state ``q``, 4) or
        `rotode.RigidBody` (state ``[q, w_body]``, 7) with ``method`` "RK23", "RK45" or
        "DOP853" runs in rotode's compiled loop, unless it is a Python subclass overriding
        ``__call__`` (SciPy then runs it, calling that ``__call__``: SciPy's result on the same
        object); anything else runs in SciPy, at SciPy's speed, its values checked: ``None``
        or non-finite derivatives raise a TypeError/ValueError naming the time, where SciPy
        would end with a misleading step-size failure, report success (LSODA on NaN) or not
        end (LSODA on inf, RK45 on NaN at ``t0``).  RK23, RK45, DOP853, Radau and BDF run
        ``fun`` unchecked after its first value and, only when the run fails (status -1 or
        an exception), run once more with every value checked to name the cause; LSODA and
        other solvers check every value.
    y0 : array_like, shape (n,), or Rotation
        As for ``scipy.integrate.solve_ivp``.  For a `rotode.QuaternionKinematics` a single
        ``scipy.spatial.transform.Rotation`` is the state (rotode's quaternions are scalar
        first, ``[w, x, y, z]``; SciPy's default ``as_quat()`` is scalar LAST and would run a
        different attitude); a `rotode.RigidBody`'s state is ``rotode.state(rotation,
        w_body)``.  For any other ``fun`` a Rotation is refused (its order is ``fun``'s).
    t_span, method, t_eval, dense_output, events, vectorized, args
        As for ``scipy.integrate.solve_ivp``, with its defaults (``method="RK45"``,
        ``dense_output=False``, ``vectorized=False``, the others optional, None).
        ``events`` may be `rotode.events` objects (compiled, nogil) or SciPy event functions
        ``g(t, y)`` (with their ``terminal`` and ``direction``); they are located on the same
        dense output as in SciPy.  ``args`` hands the call to SciPy (with rotode's right-hand
        side inside SciPy's loop).  For a rotode model, ``method`` may also name a rotode
        method or its solver class by a string, in any case ("RKMK8", "rkmk8", "Magnus8";
        the same as passing `rotode.RKMK8`, `rotode.Magnus8`; "dop853" is "DOP853"); for any
        other ``fun`` such a name is a ValueError saying what to give (``quaternions=``).
    quaternions : int or sequence of int, optional
        Where each quaternion block of ``fun``'s state starts (4 values, scalar first, body
        to world; keyword only).  Given (``[]`` too), or with ``fun`` a `rotode.ODE`, the
        call runs in rotode's loop as a `rotode.ODE` (``fun(t, y, *args)``, Python or
        compiled; docs/ode.md): ``method`` is "RK23", "RK45", "DOP853" (or SciPy's classes
        of these; each block projected to unit length after every step, or left as
        integrated with ``normalize=False``) or a method of ``rotode.methods.names("ode")``
        in any case, e.g. "RKMK8" (or ``rotode.RKMK8``): Runge-Kutta-Munthe-Kaas on the
        group, each block's body rate read from ``fun``'s q' as ``w = 2 vec(q^* q')``, so
        ``q' = 1/2 q (x) (0, w_body)`` or ``1/2 (0, w_world) (x) q``.  The fixed-step
        methods ("rk3", "rk4", "ab3") take ``step=`` (or ``dt=``).  ``sol`` is then on the group:
        every block a unit quaternion at every time (``q_n exp(v(t)/2)`` for "RKMK*", the
        pair's interpolant projected for the others, a cubic Hermite interpolant projected
        for fixed steps).  `rotode.events` read block ``block`` (default the first) and a
        body rate at ``rate`` of the state.  Any other ``method`` is a ValueError (SciPy's
        solvers do not keep the blocks: call without ``quaternions`` to run them as they
        are).
    **options
        ``rtol``, ``atol``, ``first_step``, ``max_step`` as in SciPy (compiled path; a
        user's state also takes ``max_steps``, ``normalize``, and ``step``/``dt``); other
        keys are passed to SciPy's solver, or, in the compiled path, ignored with SciPy's
        warning "The following arguments have no effect for a chosen solver".

    Returns
    -------
    OdeResult
        (a subclass of SciPy's ``OdeResult``; SciPy's own values when SciPy runs the call.)
        ``t``, ``y`` (shape (n, n_points)), ``sol`` (an ``OdeSolution`` when
        ``dense_output``), ``t_events``, ``y_events`` (as SciPy's: None without events,
        ``[]`` with ``events=[]``, every occurrence kept, and ``y_events[i]`` of shape (0,)
        for an event that never occurred; the run ends at a terminal event with ``status``
        1), ``nfev``
        (right-hand-side evaluations, counted as SciPy counts them), ``njev``, ``nlu`` (0),
        ``status`` (0, or -1 when a step failed), ``message``, ``success``.

    See Also
    --------
    scipy.integrate.solve_ivp, integrate, rotode.events

    Notes
    -----
    Without ``t_eval`` the result holds every accepted step, as SciPy's does; with it, the
    states at ``t_eval`` come from each step's continuous extension, as in SciPy.  The compiled
    path counts a right-hand-side evaluation as SciPy does (one for ``f(t0, y0)``, one for the
    initial step unless ``first_step`` is given, ``s`` per attempted step, DOP853's three
    extra stages per step whose dense output SciPy evaluates: every step with
    ``dense_output``, and otherwise every step holding a ``t_eval`` time (``t0`` and a time
    on the step's end included) or an event's sign change).  A failure (step size below the spacing
    of floats, a non-finite state) gives ``status`` -1 and a message naming the time, and the
    result ends at the last accepted step.  A zero-length ``t_span`` (t0 == tf) takes no step:
    the call goes to SciPy, whose result it is.

    Examples
    --------
    >>> import numpy as np, rotode
    >>> top = rotode.RigidBody([1, 1, 0.5], torque=rotode.torque.Gravity(1.0, 1.0, [0, 0, 1]))
    >>> sol = rotode.solve_ivp(top, (0, 10), [1, 0, 0, 0, 1.5, 0, 1], method="DOP853",
    ...                        rtol=1e-10, atol=1e-12, dense_output=True)
    >>> sol.success, sol.y.shape[0], sol.sol(2.5).shape
    (True, 7, (7,))

    A function written for SciPy, its quaternion at ``y[3:7]`` kept on the group:

    >>> def f(t, y):                  # y = [x (3), q (4)]: a constant body rate and its integral
    ...     w, q = np.array([0.0, 0.0, 1.0]), y[3:]
    ...     dq = 0.5 * np.array([-q[1:] @ w, *(q[0] * w + np.cross(q[1:], w))])
    ...     return np.concatenate([w, dq])
    >>> sol = rotode.solve_ivp(f, (0, np.pi), [0, 0, 0, 1, 0, 0, 0], method="RKMK8",
    ...                        rtol=1e-10, atol=1e-12, quaternions=[3], dense_output=True)
    >>> np.round(sol.y[3:, -1], 9).tolist(), round(float(np.linalg.norm(sol.sol(1.0)[3:])), 15)
    ([0.0, 0.0, 0.0, 1.0], 1.0)
    """
    if not callable(fun):
        raise TypeError(f"`fun` must be callable fun(t, y), got {type(fun).__name__}")
    if not (isinstance(method, str) or (isinstance(method, type)
                                        and issubclass(method, scipy.integrate.OdeSolver))):
        raise TypeError("`method` must be a string or an OdeSolver subclass, got "
                        f"{type(method).__name__}")
    ode_model = _ode_of(fun, quaternions, args)
    if ode_model is not None:          # a state with quaternion blocks: rotode's loop
        return _solve_ode(ode_model, t_span, y0, method, t_eval, dense_output, events,
                          options)
    if isinstance(y0, Rotation):
        y0 = _rotation_state(y0, fun)
    if isinstance(method, str):
        method = _rotode_method(fun, method, args)
    name = _compiled(fun, method, events, args)
    evs = _events.as_events(events) if name is not None else ()
    if name is None:
        def call(f, m):
            return scipy.integrate.solve_ivp(f, t_span, y0, method=m, t_eval=t_eval,
                                             dense_output=dense_output, events=events,
                                             vectorized=vectorized, args=args, **options)
        if isinstance(method, type) and issubclass(method, NativeSolver):
            # (rotode's solver classes read the model, and check it)
            return OdeResult(call(fun, method))
        return OdeResult(_solve_in_scipy(fun, method, call))
    kind, model, implied = _plan.classify(fun, None)
    spec = methods.get(name, kind)
    width = 4 if kind == "kinematics" else 7
    y = as_float_array(y0, "y0")
    if y.shape != (width,):
        raise ValueError(f"`y0` of a {type(fun).__name__} must have shape ({width},), got "
                         f"{y.shape}")
    check_nonzero_quaternions(y[None, :4], "y0 (quaternion part)")
    if _zero_span(t_span):      # no step: SciPy's own result, its numbers exactly (t = [t0,
        # t0], or [] with t_eval; one evaluation of fun; a constant dense output)
        return OdeResult(scipy.integrate.solve_ivp(fun, t_span, y0, method=method,
                                                   t_eval=t_eval, dense_output=dense_output,
                                                   events=events, vectorized=vectorized,
                                                   **options))
    dense_output = as_bool(dense_output, "dense_output")
    control = {key: options.pop(key, None) for key in ("rtol", "atol", "first_step",
                                                       "max_step")}
    if options:
        warnings.warn("The following arguments have no effect for a chosen solver: "
                      f"{', '.join(f'`{x}`' for x in options)}.", stacklevel=2)
    t0, tf = _plan.as_span(t_span)
    grid, save = _plan.output_grid((t0, tf), t_eval, None)
    if t_eval is None:
        save = np.zeros(0, dtype=np.intp)
    ctl = as_control(control["rtol"], control["atol"], control["first_step"],
                     control["max_step"], None, width, abs(tf - t0), t_eval=t_eval is not None)
    runner = _plan.runner_for(spec, kind)
    Y0 = np.ascontiguousarray(y[None, :])
    request = _plan.event_request(evs, Y0.shape, None) if evs else None   # all, as SciPy
    # every step (the driver grows the record) unless only t_eval's rows are asked for; the
    # sample times of a Samples rate are no step ends (SciPy's steps cross them)
    plan = Plan(name, model, Y0, grid, save, options=implied, control=ctl, events=request,
                steps=StepRequest(dense_output) if t_eval is None or dense_output else None,
                stops=False)
    out = runner.run_plan(plan)
    record = out.steps
    steps = None
    if dense_output and record is not None and record.n > 1:
        assert spec.embedded is not None        # (COMPILED_METHODS are embedded pairs)
        steps = Steps(record.t, record.z, record.F.reshape(-1, 7, width), spec.embedded.kind,
                      record.h)
    return _result(out, grid, save, t_eval, steps, request, events)


def _result(out, grid, save, t_eval, steps, request, events):
    """The `OdeResult` of a compiled run: its steps (no ``t_eval``) or the rows at ``t_eval``
    (a failed run ends at the last state reached, as SciPy's), ``steps`` the interpolants of
    an ``OdeSolution`` (None: no dense output), the events SciPy's way."""
    y_out, stats = out.y, out.stats
    status = int(stats["status"])
    record: Any = out.steps
    if t_eval is None:
        ts, ys = record.t, record.y.T.copy()
    else:
        ts = np.asarray(grid[save], dtype=float)
        ys = y_out[0].T.copy()
        if status != 0:                 # SciPy ends at the last state reached (or the event)
            keep = np.isfinite(ys).all(axis=0)
            ts, ys = ts[keep], ys[:, keep]
    sol = OdeSolution(steps.t, steps) if steps is not None else None
    t_events = y_events = None
    if request is not None:
        t_ev, y_ev, _ = _plan.event_results(request, out.events, stats)
        # as SciPy: np.asarray of each event's list of rows, (0,) when it never occurred
        t_events, y_events = t_ev[0], [y if len(y) else np.empty(0) for y in y_ev[0]]
    elif events is not None:
        t_events, y_events = [], []           # (events=[]: SciPy's empty lists)
    nfev = stats["nfev_pair"] if "nfev_pair" in stats else stats["nfev"]
    return OdeResult(t=ts, y=ys, sol=sol, t_events=t_events, y_events=y_events,
                     nfev=int(nfev), njev=0, nlu=0, status=status,
                     message=_SUCCESS if status == 0 else stats["message"],
                     success=status >= 0)
