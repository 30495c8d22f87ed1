"""``rotode.integrate``: run a native stepper over a time span, for one body or a batch.

The facade checks the user's input, builds the time grid (uniform steps of ``dt`` from
``t_span[0]``, shortened only to land on ``t_span[1]`` and on requested output times) and hands
the whole loop, as a typed plan (`rotode._runplan.Plan`: the checked grid, options, error
control and events), to a compiled *runner* (``rotode.kinematic``, ``rotode.dynamic`` or
``rotode.implicit``; docs/stepper-contract.md), which advances every body with the GIL released
and returns the rows, the stats and the event records (`rotode._runplan.RunOutput`).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Concatenate, Literal, ParamSpec, Protocol, overload

import numpy as np
from scipy.spatial.transform import Rotation

from rotode import _dask, _sensitivity, methods
from rotode import events as _events
from rotode._plan import (
    check_compiled_equations,
    check_option_names,
    ode_views,
    runner_for,
    thin_fixed,
    thin_kinematics,
    thin_run,
    thin_samples_plan,
    thin_sensitivity,
)
from rotode._plan import classify as _classify
from rotode._plan import event_request as _event_request
from rotode._plan import event_results as _event_results
from rotode._plan import output_grid as _output_grid
from rotode._plan import sample_grid as _sample_grid
from rotode._plan import state_width as _state_width
from rotode._plan import time_grid as _time_grid
from rotode._results import StateViews, rotations
from rotode._runplan import Plan
from rotode._validation import (
    as_control,
    as_float_array,
    as_workers,
    check_nonzero_quaternions,
    rotation_quaternions,
)
from rotode.ode import ODE
from rotode.omega import Callable, Samples

if TYPE_CHECKING:
    from collections.abc import Callable as Function
    from collections.abc import Sequence

    from numpy.typing import ArrayLike, NDArray

    from rotode._dask import LazyIntegrationResult
    from rotode._typing import DaskCollection, EventLike, Frame, Model

__all__ = ["integrate", "IntegrationResult", "METHODS", "methods_for"]


def methods_for(kind):
    """Method names available for a model kind ("kinematics" or "rigid body"), sorted."""
    return tuple(sorted(methods.names(kind)))


#: Every method name `integrate` knows.
METHODS = tuple(sorted(methods.REGISTRY))


class IntegrationResult(StateViews):
    """What `integrate` returns.

    Parameters
    ----------
    t, y, w, stats, method, t_events, y_events, t_stop, y_final, w_final
        The attributes below of the same names (``status`` and ``message`` come from
        ``stats["status"]`` and ``stats["message"]``); ``t_events``, ``y_events``,
        ``t_stop``, ``y_final`` and ``w_final`` are optional (default None).  `integrate`
        builds the result.

    Attributes
    ----------
    t : ndarray, shape (n_t,)
        Output times.  A single body stopped by a terminal event ends at the event, as
        ``solve_ivp``'s result does: without ``t_eval`` ``t = [t0, t_stop]``; with it, the
        requested times up to ``t_stop``.  A batch keeps the shared grid (see ``status``).
    y : ndarray, shape (n_t, k) or (N, n_t, k)
        States at ``t``: one ROW per time (the batch axis first for batched runs), the
        transpose of SciPy's ``OdeResult.y`` of shape (k, n_t); ``res.y.T`` of one body is
        SciPy's layout.  ``rotode.as_rotation(res)`` or ``res.rotation`` gives the
        orientations.
    q : ndarray, shape (n_t, 4) or (N, n_t, 4)
        Orientation quaternions (scalar first, body to world; any nonzero length for the
        non-unit methods, ``R(q) = R(q / |q|)``).  For an `ODE`, its quaternion block, or
        with several blocks all of them, shape (n_t, B, 4) or (N, n_t, B, 4).
    w : ndarray, shape (n_t, 3) or (N, n_t, 3), or None
        BODY angular velocity at ``t`` (for kinematics in the world frame, ``w(t)`` rotated into
        the body frame); None for an `ODE`, whose state carries its own rates.
    quaternions : tuple of int or None
        For an `ODE`: where its quaternion blocks start in ``y``.
    p, v : ndarray or None
        Position and velocity (world) when the state carries translation (``rkn4`` with a force).
    stats : dict
        ``n_steps`` (steps), ``nfev`` (evaluations of w(t) or of the torque), with error
        control ``n_rejected`` (rejected steps) and ``nfev_pair`` (evaluations of the pair's
        right-hand side), and method-specific counters (Newton iterations, sub-steps, ...).
        For a batch each counter is the LARGEST over the bodies (the run's critical path),
        and ``stats["per_body"]`` holds arrays of shape (N,), one entry per body:
        ``n_steps``, ``nfev`` and, with error control, ``n_rejected`` and ``nfev_pair``
        (their sums are the batch's totals).  Body i's entries equal the counters of its
        single run.
    nfev : int
        ``stats["nfev"]``.
    status : int
        0 when every step succeeded, 1 when a terminal event stopped a body (one body: its
        output ends at the stop; in a batch, that body's outputs after its stop are NaN and
        ``y_final`` holds its state at the stop); otherwise ``message`` says why and the
        states from the failed step on are NaN.
    t_events, y_events : list or None
        With ``events``: per event (in the order given) the times (n_e,) and output rows
        (n_e, k) where it occurred, as ``solve_ivp`` returns them; for a batch, one such list
        per body.
    t_stop : float, ndarray or None
        With ``events``: the time at which a terminal event stopped each body (NaN: it ran to
        the end).
    y_final, w_final : ndarray or None
        With ``events``: each body's state (k,) or (N, k) and body angular velocity (3,) or
        (N, 3) where its run ended: at ``t_stop`` for a body stopped by a terminal event, at
        ``tf`` otherwise, NaN for a body whose run failed (``q_final`` is the quaternion part).
        For one body stopped by an event they are its last output row.  The table of what a
        stopped run returns, one body and batch: docs/events.md, "What a stopped run
        returns".
    message : str
    success : bool
        ``status`` is 0 or 1.
    method : str
    rotation : scipy.spatial.transform.Rotation or list of them
        The orientations as SciPy rotations.
    sensitivity : dict or None
        With ``sensitivity=``: per parameter the derivative of the computed state at every
        output time, in tangent coordinates (docs/sensitivity.md): ``"y0"`` of shape
        (n_t, n, n) (n = 3 for kinematics, 6 for a rigid body: ``dtheta`` of the right
        perturbation ``q exp(dtheta/2)`` in the body frame, then ``dw``), a rigid body's
        ``"q0"`` and ``"w0"`` of shape (n_t, 6, 3) (the columns 0-2 and 3-5 of ``"y0"``),
        ``"inertia"`` of shape (n_t, 6, 3) (the principal moments); a batch adds its axis
        first.  None otherwise.

    See Also
    --------
    integrate, LazyIntegrationResult

    Examples
    --------
    >>> import rotode
    >>> res = rotode.integrate([0.0, 0.0, 1.0], (0, 1), [1, 0, 0, 0], method="lie_euler",
    ...                        dt=0.25)
    >>> res.t.tolist(), res.y.shape, res.status, res.success
    ([0.0, 0.25, 0.5, 0.75, 1.0], (5, 4), 0, True)
    >>> round(float(res.rotation[-1].magnitude()), 12)      # 1 rad about z
    1.0
    """

    t: NDArray[np.float64]
    y: NDArray[np.float64]
    w: NDArray[np.float64]
    stats: dict[str, Any]
    method: str
    status: int
    message: str
    success: bool
    t_events: list[Any] | None
    y_events: list[Any] | None
    t_stop: float | NDArray[np.float64] | None
    y_final: NDArray[np.float64] | None
    w_final: NDArray[np.float64] | None

    def __init__(self, t: NDArray[np.float64], y: NDArray[np.float64], w: NDArray[np.float64],
                 stats: dict[str, Any], method: str, t_events: list[Any] | None = None,
                 y_events: list[Any] | None = None,
                 t_stop: float | NDArray[np.float64] | None = None,
                 y_final: NDArray[np.float64] | None = None,
                 w_final: NDArray[np.float64] | None = None) -> None:
        self.t = t
        self.y = y
        self.w = w
        self.stats = stats
        self.method = method
        self.status = int(stats.get("status", 0))
        self.message = stats.get("message", "The integration finished.")
        self.success = self.status in (0, 1)          # 1: a terminal event (as in SciPy)
        self.t_events = t_events
        self.y_events = y_events
        self.t_stop = t_stop
        self.y_final = y_final
        self.w_final = w_final
        self.quaternions: tuple[int, ...] | None = None     # (an ODE's: set by `integrate`)
        self.sensitivity: dict[str, NDArray[np.float64]] | None = None   # (set by `integrate`)

    @property
    def rotation(self) -> Rotation | list[Rotation]:
        """``scipy.spatial.transform.Rotation`` of the orientations, shaped like ``q[..., 0]``
        (a batch on SciPy < 1.17, without N-D rotations: a list of one Rotation per body)."""
        return rotations(self.q)

    def __repr__(self) -> str:
        shape = "x".join(str(s) for s in self.y.shape)
        return (f"IntegrationResult(method={self.method!r}, y: {shape}, status={self.status}, "
                f"stats={self.stats!r})")


def _as_workers(workers):
    """``workers`` of `integrate`: None -> 1, else as `as_workers` (-1: every core)."""
    return 1 if workers is None else as_workers(workers)


_P = ParamSpec("_P")


class _LazyOnDask(Protocol[_P]):
    """`integrate` as type checkers see it.  Its parameters after ``model, t_span, y0``
    (``_P``) are the function's own, written once on it; the overloads say what ``y0``
    changes: a dask collection gives a `LazyIntegrationResult`, anything else an
    `IntegrationResult`."""

    @overload
    def __call__(self, model: Model, t_span: ArrayLike, y0: DaskCollection, *args: _P.args,
                 **kwargs: _P.kwargs) -> LazyIntegrationResult[IntegrationResult]: ...

    @overload
    def __call__(self, model: Model, t_span: ArrayLike, y0: ArrayLike, *args: _P.args,
                 **kwargs: _P.kwargs) -> IntegrationResult: ...


def _lazy_on_dask(f: Function[Concatenate[Model, ArrayLike, Any, _P], object]
                  ) -> _LazyOnDask[_P]:
    """`integrate` itself (nothing changes at run time), typed as `_LazyOnDask`."""
    return f  # type: ignore[return-value]


@_lazy_on_dask
def integrate(model: Model, t_span: ArrayLike, y0: Any,
              method: str = "rk4", dt: float | Literal["samples"] | None = None, *,
              rtol: float | None = None, atol: float | ArrayLike | None = None,
              first_step: float | None = None, max_step: float | None = None,
              max_steps: int | None = None, frame: Frame | None = None,
              t_eval: ArrayLike | None = None, save_every: int | None = None,
              workers: int | None = 1, events: EventLike | None = None,
              max_events: int | None = None, sensitivity: Sequence[str] | None = None,
              **options: Any) -> IntegrationResult | LazyIntegrationResult[IntegrationResult]:
    """Integrate orientation kinematics or rigid-body dynamics with a native fixed-step method.

    The whole time loop runs in compiled code with the GIL released; a batch of bodies is
    advanced in one call (over several cores with ``workers``), each body doing exactly the
    arithmetic of a single run.

    Parameters
    ----------
    model : see below
        What to integrate:

        - **kinematics** with a known angular velocity: a `rotode.omega` source
          (``Sinusoid``, ``Samples``, ...), a callable ``w(t)``, a constant ``(3,)`` rate, an
          ``(N, 3)`` array of constant per-body rates, or a `rotode.QuaternionKinematics`
          (whose ``frame`` and ``norm_gain`` are used); state ``q`` (4).
        - **rigid-body dynamics**: a `rotode.RigidBody` (inertia, torque, norm gain; with
          per-body parameters, ``n_bodies`` = N, one inertia/torque per row of ``y0``) or a
          list of N ``RigidBody``; state ``[q, w_body]`` (7), or 13 with ``[p, v]`` when
          ``rkn4`` is given a ``force``.

        A Python subclass of a source (`rotode.omega`, `rotode.torque`) that overrides
        ``__call__`` is evaluated through that ``__call__``, like a Python callable; a Python
        subclass of ``RigidBody`` or ``QuaternionKinematics`` that overrides ``__call__`` is
        refused with a TypeError (the steppers run the base class's equations; use
        `rotode.solve_ivp`, or give the extra physics as a torque or a ``w(t)``).
    t_span : (t0, tf)
        Integration interval; ``tf < t0`` integrates backwards.
    y0 : array_like, shape (k,) or (N, k), or Rotation
        Initial state(s); quaternions scalar first, ``[w, x, y, z]``, any nonzero length.
        For kinematics a ``scipy.spatial.transform.Rotation`` (single or stacked: N bodies)
        is the state itself; a rigid body's state is ``rotode.state(rotation, w_body)``.
        SciPy's default ``Rotation.as_quat()`` is scalar LAST: an array from it runs a
        different attitude (no check can tell the orders apart); pass the Rotation itself or
        ``as_quat(scalar_first=True)``.  A dask array (or
        per-body model parameters that are dask arrays) runs one task per chunk of bodies and
        returns a `rotode.LazyIntegrationResult` of dask arrays, equal to the NumPy run
        bit for bit (docs/scaling.md).
    method : str, optional
        A method of the registry for the model's kind: ``rotode.methods.names("kinematics")``
        or ``rotode.methods.names("rigid body")`` (table in docs/methods.md; the equations
        and references of each family in ``docs/``).  Default "rk4".
    dt : float or "samples", optional
        Step size (> 0) of a fixed-step run: required by the methods without an error
        estimate; the error-controlled methods (``rotode.methods.get(m).adaptive``) take
        ``rtol``/``atol`` instead and step with ``dt`` only when it is given.  Steps are
        uniform from ``t0``; the step that crosses ``tf`` or an output time is shortened to
        land on it.  ``"samples"``: step from sample time to sample time of a
        `rotode.omega.Samples` angular velocity (gyroscope data; its ``times``, i.e. corrected
        by its clock ``offset``), and onto ``t0``, ``tf`` and ``t_eval``.
    rtol : float, optional
        Relative tolerance of an error-controlled run (no ``dt``), as in SciPy's
        ``solve_ivp``: default 1e-3; a value below ``100 eps`` is raised to ``100 eps`` with a
        warning.
    atol : float or array_like, shape (k,), optional
        Absolute tolerance, one value or one per state component (>= 0); default 1e-6.
    first_step : float, optional
        First step of an error-controlled run (> 0, within the span); default: chosen from
        the problem as SciPy chooses it.
    max_step : float, optional
        Largest step of an error-controlled run (> 0); default: no limit.
    max_steps : int, optional
        Accepted steps per body of an error-controlled run (>= 1) before it stops with a
        failure status; default 10_000_000.
    frame : {"body", "world"}, optional
        Frame of the angular velocity (kinematics only; default "body").
    rtol, atol : float, optional
        Error control instead of ``dt`` (the error-controlled methods, docs/methods.md):
        relative and absolute tolerance, as SciPy's ``solve_ivp`` takes them; the defaults are
        SciPy's, ``rtol=1e-3`` and ``atol=1e-6`` (``atol`` may also hold one value per state
        column).  A component's error is held below ``atol + rtol |y|``: for the quaternion,
        whose components are at most 1, the default ``atol`` dominates every ``rtol`` below
        1e-6, so a tighter ``rtol`` needs a tighter ``atol`` too (e.g. ``rtol=1e-9,
        atol=1e-12``).
    first_step, max_step, max_steps : optional
        The first step size and the largest one (as SciPy's), and the most accepted steps per
        body (default 10^7), for error-controlled runs.
    t_eval : array_like, optional
        Output times (monotonic, inside ``t_span``); the grid is refined to land on them, so
        the states there are the method's own (no interpolation).
    save_every : int, optional
        Without ``t_eval``: keep every k-th grid state (and the last); default every step.
    workers : int, optional
        Threads over the bodies of a batch (default 1; -1: all cores); results do not depend
        on it.
    events : rotode.events.Event, callable or sequence of them, optional
        Error-controlled runs only: functions ``g`` whose sign changes are located on the dense
        output of every step (`rotode.events`; a Python ``g(t, y)`` with SciPy's
        ``terminal``/``direction`` attributes works too, slower). A terminal event stops its
        body; ``t_events``, ``y_events``, ``t_stop`` and ``y_final`` of the result say where
        and in which state (one body's output ends there, as ``solve_ivp``'s; a batch keeps
        its grid, NaN after each body's stop: `IntegrationResult`).
    max_events : int, optional
        Occurrences kept per body and event (default: all of them, for one body as for each
        body of a batch; for a dask ``y0``, 16, the width of its NaN-padded arrays); with
        ``max_events`` the first ones are kept and a ``RuntimeWarning`` says when some were
        dropped (``stats["n_events"]`` counts them all).
    sensitivity : sequence of str, optional
        Parameters to differentiate the computed solution by (``res.sensitivity``): ``"y0"``
        (every model); a rigid body's parts of it alone, ``"q0"`` (the three directions
        ``dtheta0`` of the initial orientation) and ``"w0"`` (the initial body rate), which
        cost fewer directions than ``"y0"``; its ``"inertia"`` (the principal moments, or the six
        components of a non-diagonal tensor) and its torque's ``"torque"``, ``"mass"``,
        ``"g"``, ``"com"``, ``"mean_motion"``, ``"argument_of_latitude"``,
        ``"inclination"``, ``"raan"`` (`rotode.torque.GravityGradient`, whose torque
        ``"inertia"`` moves too); a kinematics rate's ``"omega"`` (a constant rate), ``"bias"`` and
        ``"scale"`` (`rotode.omega.Samples`) or ``"amplitude"``, ``"rate"`` and ``"phase"``
        (`rotode.omega.Sinusoid`); a `rotode.ODE`'s ``"params"``.  The derivative is that of
        the computed solution with its accepted steps held fixed (forward mode through the
        discrete map; docs/sensitivity.md), for the methods whose registry entry says so
        (``rotode.methods.get(m).sensitivity(kind, parameter)``).
        Not with ``events``, dask input or the torque options.
    **options
        Method options, e.g. ``norm_gain``, ``normalize`` (RK methods), ``terms``, ``exp``,
        ``alpha`` (``magnus_ca``), ``solver``, ``tol``, ``max_iter``, ``bound``,
        ``substep_angle``, ``max_substeps`` (implicit methods, `rotode.implicit.run`),
        ``force``, ``mass`` (``rkn4``), ``restore_momentum``, ``torque_substeps``.  Unknown
        options raise ``TypeError``.

    Returns
    -------
    IntegrationResult
        ``t``, ``y``, ``q``, ``w`` (body frame), ``stats``, ``status``, ``message``,
        ``rotation`` (a ``scipy.spatial.transform.Rotation``).  For dask input, a
        `rotode.LazyIntegrationResult` of dask arrays (its ``compute()`` gives the
        `IntegrationResult`).

    Raises
    ------
    TypeError
        For a model it cannot integrate (a Python subclass of ``RigidBody`` overriding
        ``__call__``), a method that is not a string, a missing ``dt`` for a fixed-step method
        or an unknown option.
    ValueError
        For an unknown method for the model's kind, ``dt`` together with ``rtol``/``atol``,
        tolerances given to a method without an error estimate, events without error control,
        shapes that do not match, zero or non-finite quaternions, invalid times, or a
        ``sensitivity`` request that is not supported (an unknown parameter: the message lists
        the valid ones; a method without sensitivities: it lists those with them).

    See Also
    --------
    solve_ivp : SciPy's interface, compiled for rotode's models.
    IntegrationResult, rotode.methods, rotode.events, rotode.steps

    Examples
    --------
    >>> import numpy as np, rotode
    >>> res = rotode.integrate([0.0, 0.0, np.pi], (0, 1), [1, 0, 0, 0], method="magnus4",
    ...                        dt=0.1)
    >>> np.round(np.abs(res.q[-1]), 12).tolist()   # half a turn about z
    [0.0, 0.0, 0.0, 1.0]

    A batch of rigid bodies under error control:

    >>> top = rotode.RigidBody([1.0, 1.0, 0.5], torque=rotode.torque.Gravity(1.0, 1.0, [0, 0, 1]))
    >>> y0 = np.tile([1.0, 0.0, 0.0, 0.0, 1.5, 0.0, 1.0], (3, 1))
    >>> res = rotode.integrate(top, (0, 2), y0, method="rkmk5", rtol=1e-8, atol=1e-10,
    ...                        t_eval=[1.0, 2.0])
    >>> res.success, res.q.shape
    (True, (3, 2, 4))
    """
    # one body's common calls, straight into their kernels (the thin paths), where nothing
    # else is asked: under error control (no dt, save_every), or at fixed steps
    thin = (first_step is None and max_step is None and max_steps is None
            and events is None and max_events is None and workers == 1)
    if thin and dt is None and save_every is None:
        res = _thin(model, t_span, y0, method, rtol, atol, frame, options, sensitivity, t_eval)
        if res is not None:
            return res
    elif thin and dt is not None and rtol is None and atol is None:
        res = _thin_fixed(model, t_span, y0, method, dt, save_every, frame, options,
                          sensitivity, t_eval)
        if res is not None:
            return res
    check_compiled_equations(model)      # (before dask: a chunk rebuilds the base class)
    y0_rotation = isinstance(y0, Rotation)
    y0 = rotation_quaternions(y0)        # (a Rotation: its scalar-first quaternions)
    if _dask.has_dask(model, y0, options):   # an ensemble on dask: one task per chunk of bodies
        _sensitivity.refuse_dask(sensitivity)
        return _dask.integrate(integrate, model, t_span, y0, dict(
            method=method, dt=dt, rtol=rtol, atol=atol, first_step=first_step,
            max_step=max_step, max_steps=max_steps, frame=frame, t_eval=t_eval,
            save_every=save_every, workers=workers, events=events, max_events=max_events,
            **options))
    if not isinstance(method, str):
        raise TypeError(f"`method` must be a string, got {type(method).__name__}")
    name = method.lower()
    kind, runner_model, implied = _classify(model, frame)
    for key, value in implied.items():
        options.setdefault(key, value)
    spec = methods.REGISTRY.get(name) if isinstance(name, str) else None
    if spec is None or kind not in spec.kernels:
        other = "rigid body" if kind == "kinematics" else "kinematics"
        hint = f" ({name!r} is a {other} method)" if spec is not None else ""
        raise ValueError(f"unknown method {method!r} for {kind}{hint}; choose one of "
                         f"{methods_for(kind)}")
    runner = runner_for(spec, kind)
    samples = None
    if isinstance(dt, str):
        if dt != "samples":
            raise ValueError(f"`dt` must be a positive number or 'samples', got {dt!r}")
        # (a Python subclass of Samples overriding w(t) runs wrapped: its times still hold)
        samples = runner_model.function if isinstance(runner_model, Callable) else runner_model
        if not isinstance(samples, Samples):
            raise ValueError("dt='samples' steps on the sample times of a rotode.omega.Samples "
                             f"angular velocity; this model's is {type(runner_model).__name__}")
    check_option_names(options)
    sensitivity = _sensitivity.check_request(sensitivity, kind, name, options, events,
                                             runner_model)
    given = (rtol, atol, first_step, max_step, max_steps)
    adaptive = _check_steps(name, spec, kind, dt, given)
    widths = _state_width(kind, options, runner_model, y0)
    if y0_rotation and kind != "kinematics":
        raise TypeError("`y0` is a scipy Rotation, which holds the orientation alone; the state "
                        f"of a {kind} is [q, w_body]: give y0=rotode.state(rotation, w_body)")
    y0 = as_float_array(y0, "y0")
    if y0.ndim not in (1, 2) or y0.shape[y0.ndim - 1] not in widths:
        want = " or ".join(f"({w},) or (N, {w})" for w in widths)
        raise ValueError(f"`y0` for {kind} with method {name!r} must have shape {want}, "
                         f"got {y0.shape}")
    single = y0.ndim == 1
    Y0 = np.ascontiguousarray(y0.reshape(-1, y0.shape[y0.ndim - 1]))
    if Y0.shape[0] == 0:
        raise ValueError("`y0` must hold at least one body")
    if kind != "ode":                    # (an ODE's blocks: checked by its runner)
        check_nonzero_quaternions(Y0[:, :4], "y0 (quaternion part)")
    n_bodies = Y0.shape[0]
    if isinstance(runner_model, np.ndarray) and runner_model.shape[0] != n_bodies:
        raise ValueError(f"`model` holds {runner_model.shape[0]} per-body rates but `y0` "
                         f"{n_bodies} bodies")
    if isinstance(runner_model, list) and len(runner_model) != n_bodies:
        raise ValueError(f"`model` lists {len(runner_model)} rigid bodies but `y0` holds "
                         f"{n_bodies} states")
    evs = _events.as_events(events)
    if evs and not adaptive:
        raise ValueError("`events` are located on the dense output of the error-controlled "
                         "methods: give `rtol`/`atol` (no `dt`) with one of "
                         f"{tuple(m for m in methods.names(kind) if methods.get(m).adaptive)}")
    control = request = None
    if adaptive:
        grid, save = _output_grid(t_span, t_eval, save_every)
        control = as_control(*given, Y0.shape[1], abs(grid[-1] - grid[0]),
                             t_eval=t_eval is not None)
    elif samples is not None:
        grid, save = _sample_grid(samples, t_span, t_eval, save_every)
    else:
        grid, save = _time_grid(t_span, dt, t_eval, save_every)
    if evs:
        request = _event_request(evs, Y0.shape, max_events, runner_model)
    elif max_events is not None:
        raise ValueError("`max_events` needs `events`")
    plan = Plan(name, runner_model, Y0, grid, save, options, _as_workers(workers),
                control=control, events=request)
    plan = _sensitivity.prepare(plan, runner, kind, sensitivity)
    out = runner.run_plan(plan)
    y_out, w_out, stats = out.y, out.w, out.stats
    sens = _sensitivity.compute(_sensitivity.SensitivityRun(plan, runner, kind), sensitivity,
                                y_out)
    t_out = grid[save]
    t_events: Any = None                 # (the event records: set below when events ran)
    y_events = t_stop = y_final = w_final = t_events
    if evs:
        t_events, y_events, t_stop = _event_results(request, out.events, stats)
        y_final, w_final = out.events.y_stop, out.events.w_stop
    if single:
        del stats["per_body"]            # (a batch's: one body's counters are the totals)
        sens = None if sens is None else {k: v[0] for k, v in sens.items()}
        y_out, w_out = y_out[0], w_out[0]
        if "qdot" in stats:  # rkn4's final q'
            stats["qdot"] = stats["qdot"][0]
        if evs:
            t_events, y_events, t_stop = t_events[0], y_events[0], float(t_stop[0])
            y_final, w_final = y_final[0], w_final[0]
            stats["n_events"] = stats["n_events"][0]
            if np.isfinite(t_stop):
                t_out, y_out, w_out = _end_at_stop(t_out, y_out, w_out, t_stop, y_final,
                                                   w_final, t_eval is None,
                                                   1.0 if grid[-1] > grid[0] else -1.0)
    res = IntegrationResult(t_out, y_out, w_out, stats, name, t_events, y_events, t_stop,
                            y_final, w_final)
    res.sensitivity = sens
    return ode_views(res, runner_model) if kind == "ode" else res


def _thin(model, t_span, y0, method, rtol, atol, frame, options, sensitivity, t_eval):
    """`integrate`'s common call, one body under error control (with or without ``t_eval``),
    straight into the specialised engine (`_plan.thin_run`; with ``sensitivity=["y0"]``,
    `_plan.thin_sensitivity`): its result, or None for anything else (the general path runs
    it)."""
    if sensitivity is None:
        fast = thin_run(model, t_span, y0, method, rtol, atol, frame, options, t_eval)
        if fast is not None:
            res = IntegrationResult(*fast, method)
            return ode_views(res, model) if type(model) is ODE else res
    elif type(sensitivity) in (list, tuple) and list(sensitivity) == ["y0"]:
        fast = thin_sensitivity(model, t_span, y0, method, rtol, atol, frame, options, t_eval)
        if fast is not None:
            res = IntegrationResult(*fast[:4], method)
            res.sensitivity = {"y0": fast[4]}
            return res
    return None


def _thin_fixed(model, t_span, y0, method, dt, save_every, frame, options, sensitivity,
                t_eval):
    """`integrate`'s common fixed-step call of one body, straight into its kernel
    (`_plan.thin_fixed`); on gyroscope data (``dt="samples"``) with ``sensitivity`` too (a
    multiplicative EKF's propagation step): the thin samples run (`_plan.thin_samples_plan`)
    and its sensitivities from the general path's own functions on the same plan.  Its result,
    or None for anything else (the general path runs it, and raises for a bad request)."""
    if sensitivity is None:
        fast = thin_fixed(model, t_span, y0, method, dt, save_every, frame, options, t_eval)
        if fast is None:
            return None
        res = IntegrationResult(*fast, method)
        return ode_views(res, model) if type(model) is ODE else res
    if type(dt) is not str or type(method) is not str:
        return None
    try:
        names = _sensitivity.check_request(sensitivity, "kinematics", method.lower(), {}, None,
                                           thin_kinematics(model, frame)[0])
    except (AttributeError, KeyError, TypeError, ValueError):
        return None
    got = thin_samples_plan(model, t_span, y0, method, dt, save_every, frame, options, t_eval)
    if got is None:
        return None
    fast, plan = got
    res = IntegrationResult(*fast, method)
    sens = _sensitivity.compute(_sensitivity.SensitivityRun(plan, None, "kinematics"), names,
                                fast[1][None])
    res.sensitivity = {k: v[0] for k, v in sens.items()}
    return res


def _check_steps(name, spec, kind, dt, given):
    """Whether the run is error-controlled; ValueError/TypeError for a mix of ``dt`` and the
    error-control arguments ``given`` (rtol, atol, first_step, max_step, max_steps) that does
    not fit the method."""
    rtol, atol = given[:2]
    adaptive = dt is None and spec.adaptive
    if dt is not None and (rtol is not None or atol is not None):
        raise ValueError("give `dt` (fixed steps) or `rtol`/`atol` (error control), not both: "
                         f"drop `dt` to let {name!r} choose its steps")
    if dt is not None and any(c is not None for c in given[2:]):
        raise ValueError("`first_step`, `max_step` and `max_steps` apply to error-controlled "
                         "runs: drop `dt`")
    if not spec.adaptive and any(c is not None for c in given):
        raise ValueError(f"method {name!r} has no error estimate, so `rtol`/`atol` do not "
                         f"apply: give `dt`, or use one of "
                         f"{tuple(m for m in methods.names(kind) if methods.get(m).adaptive)}")
    if dt is None and not adaptive:
        raise TypeError(f"`dt` is required: {name!r} takes fixed steps (the error-controlled "
                        f"methods take `rtol`/`atol` instead)")
    return adaptive


def _end_at_stop(t, y, w, t_stop, y_final, w_final, default_grid, direction):
    """One body stopped by a terminal event at t_stop: its output ends there, as solve_ivp's
    does.  Without t_eval (rows at t0 and tf) the last row becomes the state at t_stop; with
    it, the requested times up to t_stop are kept (their rows were all computed)."""
    if default_grid:
        t = np.array([t[0], t_stop])
        y = np.stack([y[0], y_final])
        w = np.stack([w[0], w_final])
        return t, y, w
    keep = direction * (t - t_stop) <= 0
    return t[keep].copy(), y[keep].copy(), w[keep].copy()
