"""``rotode.integrate``: run a native stepper over a time span, for one body or a batch.

The facade checks the user's input, builds the time grid (uniform steps of ``dt`` from
``t_span[0]``, shortened only to land on ``t_span[1]`` and on requested output times) and hands
the whole loop to a compiled *runner* (``rotode.kinematic``, ``rotode.dynamic`` or
``rotode.implicit``; docs/stepper-contract.md), which advances every body with the GIL released.
"""
from __future__ import annotations

import math
import numbers
import sys
import warnings
from typing import TYPE_CHECKING, Any, Literal, overload

import numpy as np
from scipy.spatial.transform import Rotation

from rotode import _dask, dynamic, implicit, kinematic, methods
from rotode import events as _events
from rotode._results import StateViews, rotations
from rotode._validation import (
    as_control,
    as_float_array,
    as_frame,
    as_positive_scalar,
    as_workers,
    check_nonzero_quaternions,
    python_override,
    rotation_quaternions,
)
from rotode.omega import AngularVelocity, Callable, Samples, as_source
from rotode.rhs import QuaternionKinematics, RigidBody

if TYPE_CHECKING:
    from numpy.typing import ArrayLike, NDArray

    from rotode._dask import LazyIntegrationResult
    from rotode._typing import DaskCollection, EventLike, Frame, Model

__all__ = ["integrate", "IntegrationResult", "METHODS", "methods_for"]


def runner_for(method, kind):
    """The compiled runner module that steps registry `method` for a model `kind`
    (`rotode.methods.Kernel.runner`)."""
    return _RUNNERS[method.runner(kind)]


_RUNNERS = {"kinematic": kinematic, "dynamic": dynamic, "implicit": implicit}


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
        non-unit methods, ``R(q) = R(q / |q|)``).
    w : ndarray, shape (n_t, 3) or (N, n_t, 3)
        BODY angular velocity at ``t`` (for kinematics in the world frame, ``w(t)`` rotated into
        the body frame).
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

    @property
    def rotation(self) -> Rotation | list[Rotation]:
        """``scipy.spatial.transform.Rotation`` of the orientations, shaped like ``q[..., 0]``
        (a batch on SciPy < 1.17, without N-D rotations: a list of one Rotation per body)."""
        return rotations(self.q)

    def __repr__(self) -> str:
        shape = "x".join(str(s) for s in self.y.shape)
        return (f"IntegrationResult(method={self.method!r}, y: {shape}, status={self.status}, "
                f"stats={self.stats!r})")


def _python_equations_error(model, name):
    """The TypeError for a Python subclass of `RigidBody` / `QuaternionKinematics` that
    overrides ``__call__``: the runners step the compiled equations of the base class (its
    inertia and torque, its angular-velocity source) and cannot call Python equations."""
    base = "RigidBody" if isinstance(model, RigidBody) else "QuaternionKinematics"
    instead = ("give the extra physics as a torque (a rotode.torque source, or a Python "
               "function tau(t, q, w), which rotode.integrate calls)" if base == "RigidBody"
               else "give the angular velocity as a rotode.omega source or a Python function "
               "w(t) (which rotode.integrate calls), or use a solver class such as "
               "rotode.Magnus4 with scipy.integrate.solve_ivp (it recovers w(t) from "
               "`__call__`)")
    return TypeError(
        f"`{name}` is a {type(model).__name__}, a Python subclass of rotode.{base} that "
        "overrides `__call__`; rotode's compiled steppers (rotode.integrate, the solver "
        f"classes) evaluate {base}'s own equations and cannot call it. Run it with "
        "rotode.solve_ivp or scipy.integrate.solve_ivp (method 'RK45', 'DOP853', 'Radau', "
        f"...: they call `__call__`), or {instead}")


def check_compiled_equations(model, name="model"):
    """TypeError (`_python_equations_error`) when ``model``, or an entry of a list of rigid
    bodies, is a Python subclass of a rotode model that overrides ``__call__`` (events follow
    the same rule, rotode/events.pyx, but are honoured: the driver can call a Python event)."""
    if isinstance(model, (RigidBody, QuaternionKinematics)):
        if python_override(type(model), "__call__"):
            raise _python_equations_error(model, name)
    elif isinstance(model, (list, tuple)):
        overriding = {cls for cls in {type(m) for m in model}
                      if issubclass(cls, RigidBody) and python_override(cls, "__call__")}
        if overriding:
            i = next(i for i, m in enumerate(model) if type(m) in overriding)
            raise _python_equations_error(model[i], f"{name}[{i}]")


def _classify(model, frame):
    """(kind, runner model, options implied by the model) from what the user passed (a model
    that overrides ``__call__`` in Python is refused before: `check_compiled_equations`)."""
    if isinstance(model, RigidBody):
        kind = "rigid body"
    elif isinstance(model, (list, tuple)) and model and all(
            isinstance(m, RigidBody) for m in model):
        kind = "rigid body"
        model = list(model)
    elif isinstance(model, QuaternionKinematics):
        if frame is not None and as_frame(frame) != as_frame(model.frame):
            raise ValueError(f"`frame`={frame!r} contradicts the model's frame {model.frame!r}")
        implied = {"frame": model.frame}
        if model.norm_gain != 0.0:   # only the RK methods on non-unit quaternions take a gain
            implied["norm_gain"] = model.norm_gain
        return "kinematics", model.omega, implied
    elif isinstance(model, AngularVelocity) or callable(model):
        return "kinematics", as_source(model, "model"), {"frame": _frame_or_body(frame)}
    else:
        if isinstance(model, (str, bytes)) or model is None:
            raise TypeError(
                "`model` must be an angular velocity (rotode.omega source, array (3,) or "
                "(N, 3) of constant rates, or a callable w(t)), a rotode.QuaternionKinematics, "
                f"a rotode.RigidBody or a list of RigidBody; got {type(model).__name__}")
        w = as_float_array(model, "model")
        if w.shape == (3,):
            return "kinematics", as_source(w, "model"), {"frame": _frame_or_body(frame)}
        if w.ndim == 2 and w.shape[1] == 3:
            return "kinematics", np.ascontiguousarray(w), {"frame": _frame_or_body(frame)}
        raise ValueError("`model` as constant angular velocities must have shape (3,) or "
                         f"(N, 3), got {w.shape}")
    if frame is not None:
        raise ValueError("`frame` applies to kinematics only; a rigid body's state carries the "
                         "BODY angular velocity")
    return kind, model, {}


def _frame_or_body(frame):
    """``frame`` checked ("body" or "world"), or "body" when it is None."""
    if frame is None:
        return "body"
    as_frame(frame)
    return frame


#: Keys the facades pass to the runners themselves; a user's option of that name is unknown.
INTERNAL_OPTIONS = ("control", "trace", "h_next", "events", "resume", "stops")


def check_option_names(options):
    """TypeError for an option the runners reserve for the facades (``trace``, ...)."""
    for key in INTERNAL_OPTIONS:
        if key in options:
            hint = (" (error control: rtol, atol, first_step, max_step, max_steps)"
                    if key == "control" else "")
            raise TypeError(f"unknown option `{key}`{hint}")


def _state_width(kind, options):
    if kind == "kinematics":
        return (4,)
    return (7, 13) if options.get("force") is not None else (7,)


def _span(t_span):
    """(t0, tf) as finite distinct floats."""
    try:
        t0, tf = t_span
        t0, tf = float(t0), float(tf)
    except OverflowError:      # an integer beyond the float range
        raise ValueError(f"`t_span` must be finite, got {t_span!r}") from None
    except (TypeError, ValueError):
        raise ValueError(f"`t_span` must be a pair (t0, tf) of real numbers, got {t_span!r}") \
            from None
    if not (math.isfinite(t0) and math.isfinite(tf)):
        raise ValueError(f"`t_span` must be finite, got {(t0, tf)!r}")
    if t0 == tf:
        raise ValueError("`t_span` must have t0 != tf")
    return t0, tf


def _eval_times(t_eval, t0, tf):
    """`t_eval` as a checked float64 array (monotonic in the direction of t_span, inside)."""
    direction = 1.0 if tf > t0 else -1.0
    te = as_float_array(t_eval, "t_eval")
    if te.ndim != 1 or te.size == 0:
        raise ValueError(f"`t_eval` must be a non-empty 1-D array, got shape {te.shape}")
    steps = np.diff(te) * direction
    if np.any(steps <= 0):
        raise ValueError("`t_eval` must be strictly monotonic in the direction of `t_span`")
    lo, hi = min(t0, tf), max(t0, tf)
    if te.min() < lo or te.max() > hi:
        raise ValueError(f"`t_eval` must lie within `t_span` {(t0, tf)!r}")
    return te


def _output_grid(t_span, t_eval, save_every):
    """Error-controlled runs: the output times (t0, t_eval..., tf) and the indices to save
    (``t_eval``, or t0 and tf without it)."""
    t0, tf = _span(t_span)
    if save_every is not None:
        raise ValueError("`save_every` counts fixed steps: with error control give `t_eval`")
    if t_eval is None:
        return np.array([t0, tf]), np.array([0, 1], dtype=np.intp)
    te = _eval_times(t_eval, t0, tf)
    inner = te[(te != t0) & (te != tf)]
    grid = np.ascontiguousarray(np.concatenate([[t0], inner, [tf]]))
    direction = 1.0 if tf > t0 else -1.0
    save = np.searchsorted(direction * (grid - t0), direction * (te - t0)).astype(np.intp)
    return grid, save


def _time_grid(t_span, dt, t_eval, save_every, dt_name="dt", span_name="`t_span`"):
    """Grid (n+1,) and the indices to save; see `integrate` for the rules (``dt_name``,
    ``span_name``: the step's and the span's names in messages, as the caller wrote them)."""
    t0, tf = _span(t_span)
    dt = as_positive_scalar(dt, dt_name)
    direction = 1.0 if tf > t0 else -1.0
    length = abs(tf - t0)
    ratio = length / dt
    if ratio > 2e8:
        raise ValueError(f"`{dt_name}`={dt!r} needs {ratio:.3g} steps over t_span; the limit "
                         "is 2e8")
    n = int(np.floor(ratio))
    grid = t0 + direction * dt * np.arange(n + 1, dtype=np.float64)
    # The final point: tf itself, replacing the last uniform point when it is tf to round-off.
    if n > 0 and abs(tf - grid[n]) <= 1e-9 * dt:
        grid[n] = tf
    else:
        grid = np.append(grid, tf)
    _check_advancing(grid, direction, dt, dt_name, t_span, span_name)
    if t_eval is None:
        return grid, _every(grid.size, save_every)
    if save_every is not None:
        raise ValueError("give either `t_eval` or `save_every`, not both")
    te = _eval_times(t_eval, t0, tf)
    # Work on s = direction * (t - t0) >= 0, increasing.
    s_grid = direction * (grid - t0)
    s_eval = direction * (te - t0)
    pos = np.searchsorted(s_grid, s_eval)
    # a uniform grid point within tol of a requested time moves onto it (no sliver step);
    # t0 and tf never move: a time near them but not on them gets a step of its own
    tol = 1e-9 * min(dt, length)
    last = s_grid.size - 1
    # for each requested time, the grid point at pos (else pos - 1) that equals it or, inside
    # the grid, lies within tol of it (vectorised: a 1 kHz recording has 10^5 output times)
    cand = np.stack([pos, pos - 1])
    valid = (cand >= 0) & (cand <= last)
    c = np.clip(cand, 0, last)
    d = np.abs(s_grid[c] - s_eval)
    ok = valid & ((d == 0) | ((c > 0) & (c < last) & (d <= tol)))
    snapped = np.where(ok[0], c[0], np.where(ok[1], c[1], -1)).astype(np.intp)
    keep = snapped >= 0
    grid[snapped[keep]] = te[keep]
    extra = te[~keep]
    if extra.size:
        grid = np.concatenate([grid, extra])
        grid = grid[np.argsort(direction * (grid - t0), kind="stable")]
    s_grid = direction * (grid - t0)
    save = np.searchsorted(s_grid, direction * (te - t0)).astype(np.intp)
    return np.ascontiguousarray(grid), save


def _check_advancing(grid, direction, dt, dt_name, t_span, span_name):
    """ValueError naming the step and the span when rounding leaves two grid times equal (or
    reversed): ``dt`` below the spacing of floats at those times, e.g. dt = 0.01 near 1e16."""
    steps = direction * np.diff(grid)
    if steps.size == 0 or steps.min() > 0:
        return
    j = int(np.argmax(steps <= 0))
    t = float(grid[j])
    raise ValueError(
        f"`{dt_name}`={dt!r} is below the spacing of floats near t = {t!r} ({np.spacing(t)!r}) "
        f"inside {span_name}={t_span!r}: the time grid would not advance; give a larger "
        f"`{dt_name}`, or times nearer 0 in {span_name}")


def _sample_grid(samples, t_span, t_eval, save_every):
    """``dt="samples"``: a grid on the sample times of `samples` inside ``t_span`` (with t0 and
    tf), refined to land on ``t_eval`` exactly; the indices to save as in `_time_grid`."""
    t0, tf = _span(t_span)
    direction = 1.0 if tf > t0 else -1.0
    times = np.asarray(samples.times, dtype=np.float64)
    s = direction * (times - t0)
    inner = times[(s > 0) & (s < direction * (tf - t0))]
    points = [np.array([t0]), inner, np.array([tf])]
    if t_eval is not None:
        if save_every is not None:
            raise ValueError("give either `t_eval` or `save_every`, not both")
        te = _eval_times(t_eval, t0, tf)
        points.append(te)
    grid = np.unique(np.concatenate(points))            # sorted, exact values, no duplicates
    if direction < 0:
        grid = grid[::-1].copy()
    if t_eval is not None:
        save = np.searchsorted(direction * (grid - t0), direction * (te - t0)).astype(np.intp)
        return np.ascontiguousarray(grid), save
    return np.ascontiguousarray(grid), _every(grid.size, save_every)


def _every(size, save_every):
    """Indices of every k-th point of a grid of `size` points (``save_every``, default 1) and
    its last one."""
    every = 1 if save_every is None else save_every
    if isinstance(every, (bool, np.bool_)) or not isinstance(every, numbers.Integral) \
            or every < 1:
        raise ValueError(f"`save_every` must be an integer >= 1, got {save_every!r}")
    save = np.arange(0, size, int(every), dtype=np.intp)
    if save[save.size - 1] != size - 1:
        save = np.append(save, size - 1)
    return save


def _as_workers(workers):
    """``workers`` of `integrate`: None -> 1, else as `as_workers` (-1: every core)."""
    return 1 if workers is None else as_workers(workers)


@overload
def integrate(model: Model, t_span: ArrayLike, y0: DaskCollection, method: str = ...,
              dt: float | Literal["samples"] | None = ..., *, rtol: float | None = ...,
              atol: float | ArrayLike | None = ..., first_step: float | None = ...,
              max_step: float | None = ..., max_steps: int | None = ...,
              frame: Frame | None = ..., t_eval: ArrayLike | None = ...,
              save_every: int | None = ..., workers: int | None = ...,
              events: EventLike | None = ..., max_events: int | None = ...,
              **options: Any) -> LazyIntegrationResult: ...


@overload
def integrate(model: Model, t_span: ArrayLike, y0: ArrayLike, method: str = ...,
              dt: float | Literal["samples"] | None = ..., *, rtol: float | None = ...,
              atol: float | ArrayLike | None = ..., first_step: float | None = ...,
              max_step: float | None = ..., max_steps: int | None = ...,
              frame: Frame | None = ..., t_eval: ArrayLike | None = ...,
              save_every: int | None = ..., workers: int | None = ...,
              events: EventLike | None = ..., max_events: int | None = ...,
              **options: Any) -> IntegrationResult: ...


# (the overloads above carry the types: a dask ``y0`` gives a LazyIntegrationResult)
def integrate(model, t_span, y0, method="rk4", dt=None, *, rtol=None, atol=None,
              first_step=None, max_step=None, max_steps=None, frame=None, t_eval=None,
              save_every=None, workers=1, events=None, max_events=None, **options):
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
        shapes that do not match, zero or non-finite quaternions, or invalid times.

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
    check_compiled_equations(model)      # (before dask: a chunk rebuilds the base class)
    y0_rotation = isinstance(y0, Rotation)
    y0 = rotation_quaternions(y0)        # (a Rotation: its scalar-first quaternions)
    if _dask.has_dask(model, y0, options):   # an ensemble on dask: one task per chunk of bodies
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
    control = (rtol, atol, first_step, max_step, max_steps)
    adaptive = dt is None and spec.adaptive
    if dt is not None and (rtol is not None or atol is not None):
        raise ValueError("give `dt` (fixed steps) or `rtol`/`atol` (error control), not both: "
                         f"drop `dt` to let {name!r} choose its steps")
    if dt is not None and any(c is not None for c in control[2:]):
        raise ValueError("`first_step`, `max_step` and `max_steps` apply to error-controlled "
                         "runs: drop `dt`")
    if not spec.adaptive and any(c is not None for c in control):
        raise ValueError(f"method {name!r} has no error estimate, so `rtol`/`atol` do not "
                         f"apply: give `dt`, or use one of "
                         f"{tuple(m for m in methods.names(kind) if methods.get(m).adaptive)}")
    if dt is None and not adaptive:
        raise TypeError(f"`dt` is required: {name!r} takes fixed steps (the error-controlled "
                        f"methods take `rtol`/`atol` instead)")
    widths = _state_width(kind, options)
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
    if adaptive:
        grid, save = _output_grid(t_span, t_eval, save_every)
        options["control"] = as_control(*control, Y0.shape[1], abs(grid[-1] - grid[0]),
                                        t_eval=t_eval is not None)
    elif samples is not None:
        grid, save = _sample_grid(samples, t_span, t_eval, save_every)
    else:
        grid, save = _time_grid(t_span, dt, t_eval, save_every)
    if evs:
        options["events"] = _event_buffers(evs, Y0.shape, max_events)
    elif max_events is not None:
        raise ValueError("`max_events` needs `events`")
    y_out, w_out, stats = runner.run(name, runner_model, Y0, grid, save, options,
                                     _as_workers(workers))
    t_out = grid[save]
    t_events = y_events = t_stop = y_final = w_final = None
    if evs:
        t_events, y_events, t_stop = _event_results(options["events"], stats)
        y_final, w_final = options["events"]["y_stop"], options["events"]["w_stop"]
    if single:
        del stats["per_body"]            # (a batch's: one body's counters are the totals)
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
    return IntegrationResult(t_out, y_out, w_out, stats, name, t_events, y_events, t_stop,
                             y_final, w_final)


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


def _event_buffers(evs, shape, max_events):
    """The events of a run as the driver takes them (`_driver.drive`): the checked events and
    how many occurrences to keep per body and event."""
    n, k = shape
    if len(evs) > 16:
        raise ValueError(f"`events` may hold at most 16 events, got {len(evs)}")
    for j, e in enumerate(evs):
        if e.n_bodies is not None and e.n_bodies != n:
            raise ValueError(f"`events[{j}]` holds per-body parameters for {e.n_bodies} bodies "
                             f"but `y0` holds {n}" + (": take the event of one body, "
                                                      f"events[{j}][i]" if n == 1 else ""))
        if isinstance(e, _events.Component) and e.name in ("q", "y") and e.index >= k:
            raise ValueError(f"`events[{j}]` reads {e.name}[{e.index}] but the state has {k} "
                             "entries")
    if max_events is None:
        cap = None              # all of them, for one body as for each of a batch (as SciPy)
    elif isinstance(max_events, (bool, np.bool_)) or not isinstance(max_events, numbers.Integral) \
            or max_events < 1:
        raise ValueError(f"`max_events` must be an integer >= 1, got {max_events!r}")
    else:
        cap = min(int(max_events), sys.maxsize)   # (the driver's records grow as they fill)
    return {"objects": evs, "cap": cap}


def _event_results(buf, stats):
    """Per body, per event: the times and rows recorded (t_events, y_events), and t_stop."""
    stats["n_events"] = buf["count"]
    if buf["over"]:
        warnings.warn(f"an event occurred more than `max_events`={buf['cap']} times in a body; "
                      "only the first ones are kept (stats['n_events'] counts them all)",
                      RuntimeWarning, stacklevel=3)
    return buf["t"], buf["y"], buf["t_stop"]
