"""The plan of a run, shared by the facades (`rotode.integrate`, `rotode.solve_ivp`, the
solver classes of `rotode.solvers`): the kind of a model and what the runner steps, the checks
of their common arguments, the runner of a method, the time grid and the events' request and
results.  The plan itself is a `rotode._runplan.Plan`, which a runner's ``run_plan`` takes.

It knows the models and the runners below it and none of the facades above it, which import it
(docs/architecture.md).
"""
import math
import numbers
import sys
import warnings

import numpy as np

from rotode import dynamic, implicit, kinematic, ode
from rotode import events as _events
from rotode._driver import uniform_grid
from rotode._loops import eval_times_fault, merge_times, snap_times
from rotode._runplan import EventRequest, Plan
from rotode._validation import as_float_array, as_frame, as_positive_scalar, python_override
from rotode.omega import AngularVelocity, Samples, as_source
from rotode.rhs import QuaternionKinematics, RigidBody

__all__ = ["thin_run", "thin_fixed", "thin_sensitivity", "runner_for",
           "check_compiled_equations", "classify", "frame_or_body", "RESERVED_OPTIONS",
           "check_option_names", "state_width", "as_span", "as_eval_times",
           "output_grid", "time_grid", "sample_grid", "event_request", "event_results"]


def _thin_output(t_span, t_eval):
    """The output grid and saved indices of a thin call with ``t_eval`` (`output_grid`), None
    without it, or False for a ``t_eval`` that `output_grid` refuses (the general path then
    raises its error)."""
    if t_eval is None:
        return None
    try:
        return output_grid(t_span, t_eval, None)
    except (TypeError, ValueError):
        return False


def thin_run(model, t_span, y0, method, rtol, atol, frame, options, t_eval=None):
    """`integrate`'s common call of one body under error control, run by the specialised
    engine without the general path's set-up (`dynamic.run_single`, `kinematic.run_single`):
    ``(t, y, w, stats)``, or None when the call is anything else (the general path runs it).
    With ``t_eval``, the rows at those times (`output_grid`'s grid, as the general path runs
    it).  A user's `ode.ODE` takes `ode.run_single` (its result then needs `ode_views`), with
    no option but ``normalize`` (none for its Lie-group methods, which refuse it) and no
    ``t_eval``; the built-in models with none."""
    given = _thin_output(t_span, t_eval)
    if given is False:
        return None
    if type(model) is ode.ODE:
        if (given is not None or frame is not None or not options.keys() <= {"normalize"}
                or ("normalize" in options and type(method) is str
                    and method in ode.ENGINE_GROUP_PAIRS)):
            return None
        return ode.run_single(model, t_span, y0, method, rtol, atol,
                              options.get("normalize", True))
    if frame is None and not options:
        fast = dynamic.run_single(model, t_span, y0, method, rtol, atol, given=given)
        if fast is not None:
            return fast
    if options:
        return None
    model, frame = thin_kinematics(model, frame)
    return kinematic.run_single(model, t_span, y0, method, rtol, atol, frame, given)


def thin_kinematics(model, frame):
    """The rate source and frame the thin kinematic paths take for `model`, as `classify` reads
    it: a `QuaternionKinematics` without a norm gain unwrapped (its source and its frame, with
    ``frame`` None or the same), a float64 array of shape (3,) of finite rates as a `Constant`;
    anything else as it is (the runner declines what it does not take)."""
    if type(model) is QuaternionKinematics:
        if model.norm_gain == 0.0 and (frame is None or frame == model.frame):
            return model.omega, model.frame
    elif type(model) is np.ndarray and model.shape == (3,) and model.dtype == np.float64:
        try:
            return as_source(model, "model"), frame
        except ValueError:          # (not finite: the general path raises it)
            pass
    return model, frame


def thin_fixed(model, t_span, y0, method, dt, save_every, frame, options, t_eval=None):
    """`integrate`'s common fixed-step call of one body (``dt`` given), run by the lane kernel
    of its method without the general path's set-up (`dynamic.run_fixed_single`,
    `kinematic.run_fixed_single`; a user's `ode.ODE` by the driver's loop,
    `ode.run_fixed_single`, its result then needing `ode_views`): ``(t, y, w, stats)``, or
    None when the call is anything else (the general path runs it).  No option (an ODE's
    ``normalize`` aside).  With ``t_eval`` the grid is `time_grid`'s, made here (a grid it
    refuses: None, and the general path raises its error)."""
    if type(dt) is str:
        return _thin_samples(model, t_span, y0, method, dt, save_every, frame, options, t_eval)
    grid = None
    if t_eval is not None:
        try:
            grid = time_grid(t_span, dt, t_eval, save_every)
        except (TypeError, ValueError):
            return None
    if type(model) is ode.ODE:
        if frame is not None or not options.keys() <= {"normalize"}:
            return None
        return ode.run_fixed_single(model, t_span, y0, method, dt, save_every,
                                    options.get("normalize", True), grid=grid)
    if options:
        return None
    if type(model) is RigidBody:
        if frame is not None:
            return None
        fast = dynamic.run_fixed_single(model, t_span, y0, method, dt, save_every, grid=grid)
        return fast if fast is not None else implicit.run_fixed_single(
            model, t_span, y0, method, dt, save_every, grid=grid)
    model, frame = thin_kinematics(model, frame)
    return kinematic.run_fixed_single(model, t_span, y0, method, dt, save_every, frame,
                                      grid=grid)


def _thin_samples(model, t_span, y0, method, dt, save_every, frame, options, t_eval):
    """`thin_fixed` of ``dt="samples"``: one body under a `Samples` rate (gyroscope data, or a
    `QuaternionKinematics` of one without a norm gain) on `sample_grid`'s grid, by
    `kinematic.run_fixed_single`; None for anything else."""
    got = _samples_grid(model, t_span, dt, save_every, frame, options, t_eval)
    if got is None:
        return None
    model, frame, grid = got
    return kinematic.run_fixed_single(model, t_span, y0, method, dt, save_every, frame,
                                      grid=grid)


def _samples_grid(model, t_span, dt, save_every, frame, options, t_eval):
    """What a thin ``dt="samples"`` call steps: ``(source, frame, (grid, save))``, the
    `Samples` source and frame `thin_kinematics` reads and `sample_grid`'s grid, or None for
    anything else (an option, another model, a grid `sample_grid` refuses)."""
    if dt != "samples" or options:
        return None
    model, frame = thin_kinematics(model, frame)
    if type(model) is not Samples:
        return None
    try:
        return model, frame, sample_grid(model, t_span, t_eval, save_every)
    except (TypeError, ValueError):
        return None


def thin_samples_plan(model, t_span, y0, method, dt, save_every, frame, options, t_eval=None):
    """`thin_fixed` of a ``dt="samples"`` call asking for sensitivities (gyroscope data, one
    body): ``((t, y, w, stats), plan)``, the thin run and the `Plan` of the general path's
    run (its method, rate, y0 (1, 4), grid, saved indices and frame), from which
    `_sensitivity.compute` gives the same sensitivities; None for anything else."""
    got = _samples_grid(model, t_span, dt, save_every, frame, options, t_eval)
    if got is None or type(method) is not str:
        return None
    source, frame, (grid, save) = got
    fast = kinematic.run_fixed_single(source, t_span, y0, method, dt, save_every, frame,
                                      grid=(grid, save))
    if fast is None:
        return None
    y0 = np.asarray(y0, dtype=np.float64).reshape(1, 4)
    return fast, Plan(method.lower(), source, y0, grid, save,
                      {"frame": "body" if frame is None else frame})


def thin_sensitivity(model, t_span, y0, method, rtol, atol, frame, options, t_eval=None):
    """`thin_run` of a call with ``sensitivity=["y0"]``: a rigid body's pair on the state in
    the engine pass that carries the 6x6 y0 sensitivity (`dynamic.run_single`'s `tangent`):
    ``(t, y, w, stats, S)``, S (m, 6, 6) at the m output times, or None for anything else."""
    given = _thin_output(t_span, t_eval)
    if frame is not None or options or given is False:
        return None
    return dynamic.run_single(model, t_span, y0, method, rtol, atol, tangent=True, given=given)


def runner_for(method, kind):
    """The compiled runner module that steps registry `method` for a model `kind`
    (`rotode.methods.Kernel.runner`)."""
    return _RUNNERS[method.runner(kind)]


_RUNNERS = {"kinematic": kinematic, "dynamic": dynamic, "implicit": implicit, "ode": ode}


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


def classify(model, frame):
    """(kind, runner model, options implied by the model) from what the user passed (a model
    that overrides ``__call__`` in Python is refused before: `check_compiled_equations`)."""
    if isinstance(model, ode.ODE):
        if frame is not None:
            raise ValueError("`frame` does not apply to an ODE: a user's equations say the frame "
                             "of their rates themselves")
        return "ode", model, {}
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
        return "kinematics", as_source(model, "model"), {"frame": frame_or_body(frame)}
    else:
        if isinstance(model, (str, bytes)) or model is None:
            raise TypeError(
                "`model` must be an angular velocity (rotode.omega source, array (3,) or "
                "(N, 3) of constant rates, or a callable w(t)), a rotode.QuaternionKinematics, "
                f"a rotode.RigidBody or a list of RigidBody; got {type(model).__name__}")
        w = as_float_array(model, "model")
        if w.shape == (3,):
            return "kinematics", as_source(w, "model"), {"frame": frame_or_body(frame)}
        if w.ndim == 2 and w.shape[1] == 3:
            return "kinematics", np.ascontiguousarray(w), {"frame": frame_or_body(frame)}
        raise ValueError("`model` as constant angular velocities must have shape (3,) or "
                         f"(N, 3), got {w.shape}")
    if frame is not None:
        raise ValueError("`frame` applies to kinematics only; a rigid body's state carries the "
                         "BODY angular velocity")
    return kind, model, {}


def frame_or_body(frame):
    """``frame`` checked ("body" or "world"), or "body" when it is None."""
    if frame is None:
        return "body"
    as_frame(frame)
    return frame


#: Names of pieces of a run's plan (`rotode._runplan.Plan`: its control, events, step record,
#: ...), which the facades build from their own arguments: no method option has one of these
#: names, and a user's option of that name is refused as unknown, with a hint.
RESERVED_OPTIONS = ("control", "trace", "h_next", "events", "resume", "stops")


def check_option_names(options):
    """TypeError for an option named as a piece of the plan (``trace``, ...)."""
    for key in RESERVED_OPTIONS:
        if key in options:
            hint = (" (error control: rtol, atol, first_step, max_step, max_steps)"
                    if key == "control" else "")
            raise TypeError(f"unknown option `{key}`{hint}")


def state_width(kind, options, model=None, y0=None):
    """The widths a row of ``y0`` may have for a model `kind` (an ODE: its ``n``, or any)."""
    if kind == "ode":
        return (model.n,) if model.n is not None else (np.shape(y0)[-1:] or (4,))
    if kind == "kinematics":
        return (4,)
    return (7, 13) if options.get("force") is not None else (7,)


def ode_views(res, model):
    """`integrate`'s result of an ODE: its quaternion blocks (``q``), no ``w`` (a user's state
    carries its own rates)."""
    res.w = res.w_final = None
    res.quaternions = model.quaternions
    return res


def as_span(t_span):
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


def as_eval_times(t_eval, t0, tf):
    """`t_eval` as a checked C-contiguous float64 array (monotonic in the direction of t_span,
    inside)."""
    te = as_float_array(t_eval, "t_eval")
    if te.ndim != 1 or te.size == 0:
        raise ValueError(f"`t_eval` must be a non-empty 1-D array, got shape {te.shape}")
    te = np.ascontiguousarray(te)
    fault = eval_times_fault(te, t0, tf)
    if fault == 1:
        raise ValueError("`t_eval` must be strictly monotonic in the direction of `t_span`")
    if fault == 2:
        raise ValueError(f"`t_eval` must lie within `t_span` {(t0, tf)!r}")
    return te


def output_grid(t_span, t_eval, save_every):
    """Error-controlled runs: the output times (t0, t_eval..., tf) and the indices to save
    (``t_eval``, or t0 and tf without it)."""
    t0, tf = as_span(t_span)
    if save_every is not None:
        raise ValueError("`save_every` counts fixed steps: with error control give `t_eval`")
    if t_eval is None:
        return np.array([t0, tf]), np.array([0, 1], dtype=np.intp)
    te = as_eval_times(t_eval, t0, tf)
    # te is strictly monotonic inside t_span: only its first time can be t0 and only its last
    # tf; the others lie strictly between, each its own output time
    first, last = bool(te[0] == t0), bool(te[-1] == tf)
    inner = te[int(first):te.size - int(last)]
    grid = np.empty(inner.size + 2)
    grid[0], grid[-1] = t0, tf
    grid[1:-1] = inner
    return grid, np.arange(int(not first), te.size + int(not first), dtype=np.intp)


def time_grid(t_span, dt, t_eval, save_every, dt_name="dt", span_name="`t_span`"):
    """Grid (n+1,) and the indices to save; see `integrate` for the rules (``dt_name``,
    ``span_name``: the step's and the span's names in messages, as the caller wrote them)."""
    t0, tf = as_span(t_span)
    dt = as_positive_scalar(dt, dt_name)
    direction = 1.0 if tf > t0 else -1.0
    length = abs(tf - t0)
    ratio = length / dt
    if ratio > 2e8:
        raise ValueError(f"`{dt_name}`={dt!r} needs {ratio:.3g} steps over t_span; the limit "
                         "is 2e8")
    if t_eval is None and (save_every is None or (type(save_every) is int and save_every >= 1)):
        got = uniform_grid(t0, tf, dt, 1 if save_every is None else save_every)
        if got is not None:      # (None: the code below raises, and says why)
            return got
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
    te = as_eval_times(t_eval, t0, tf)
    # a uniform grid point within tol of a requested time moves onto it (no sliver step; one
    # requested time per point); t0 and tf never move: a time near them but not on them gets a
    # step of its own
    tol = 1e-9 * min(dt, length)
    snapped = snap_times(grid, te, t0, direction, tol)
    keep = snapped >= 0
    if keep.all():
        # every requested time on a grid point of its own: they are the saved ones
        grid[snapped] = te
        return grid, snapped
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


def sample_grid(samples, t_span, t_eval, save_every):
    """``dt="samples"``: a grid on the sample times of `samples` inside ``t_span`` (with t0 and
    tf), refined to land on ``t_eval`` exactly; the indices to save as in `time_grid`."""
    t0, tf = as_span(t_span)
    direction = 1.0 if tf > t0 else -1.0
    times = np.asarray(samples.times, dtype=np.float64)
    s = direction * (times - t0)
    inner = times[(s > 0) & (s < direction * (tf - t0))]
    # t0, the sample times strictly between t0 and tf (Samples holds them strictly
    # increasing), tf: strictly monotonic in the direction of t_span
    grid = np.empty(inner.size + 2)
    grid[0], grid[-1] = t0, tf
    grid[1:-1] = inner if direction > 0 else inner[::-1]
    if t_eval is None:
        return grid, _every(grid.size, save_every)
    if save_every is not None:
        raise ValueError("give either `t_eval` or `save_every`, not both")
    te = as_eval_times(t_eval, t0, tf)
    # the union with the requested times, each time once (np.unique's grid), and where each
    # requested time is in it
    return merge_times(grid, te, direction)


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


def event_request(evs, shape, max_events, model=None):
    """The events of a run as its plan holds them (`rotode._runplan.EventRequest`): the checked
    events, how many occurrences to keep per body and event, and, in a user's state
    (``model`` a `rotode.ODE`), where each reads its quaternion block and rate."""
    n, k = shape
    if len(evs) > 16:
        raise ValueError(f"`events` may hold at most 16 events, got {len(evs)}")
    at = _event_places(evs, k, model)
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
    return EventRequest(tuple(evs), cap, at)


def _event_places(evs, k, model):
    """Per event, (offset of the quaternion block it reads, offset of the body rate it reads or
    -1) in a row of k values: for a user's state (`rotode.ODE`) from each event's ``block``
    and ``rate`` (None: every event reads the run's own q and w, and may not be placed)."""
    if not isinstance(model, ode.ODE):
        for j, e in enumerate(evs):
            if e.block is not None or e.rate is not None:
                raise ValueError(f"`events[{j}]`: `block` and `rate` place an event in a user's "
                                 "state (a rotode.ODE); this model's state is its own")
        return None
    at = []
    for j, e in enumerate(evs):
        if isinstance(e, _events.PythonEvent) or (isinstance(e, _events.Component)
                                                   and e.name == "y"):
            at.append((0, -1))                # (the whole row)
            continue
        block = 0 if e.block is None else e.block
        if block >= len(model.quaternions):
            raise ValueError(f"`events[{j}]` reads quaternion block {block} but the ODE has "
                             f"{len(model.quaternions)} ({list(model.quaternions)})")
        rate = -1
        if e.needs_w:
            if e.rate is None:
                raise ValueError(f"`events[{j}]` reads the body angular velocity: give its "
                                 "place in the state, rate=<index of w in y>")
            rate = e.rate
            if rate + 3 > k:
                raise ValueError(f"`events[{j}]`: rate={rate} does not fit in a state of {k} "
                                 "values")
        at.append((model.quaternions[block], rate))
    return tuple(at)


def event_results(request, record, stats):
    """Per body, per event: the times and rows recorded (t_events, y_events), and t_stop, from
    a run's `EventRecord` (its counts go to ``stats["n_events"]``) for its `EventRequest`."""
    stats["n_events"] = record.count
    if record.over:
        warnings.warn(f"an event occurred more than `max_events`={request.cap} times in a "
                      "body; only the first ones are kept (stats['n_events'] counts them all)",
                      RuntimeWarning, stacklevel=3)
    return record.t, record.y, record.t_stop
