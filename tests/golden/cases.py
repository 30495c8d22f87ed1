"""The cases of the golden-engine test: every method of the registry on every model kind it
integrates, as ONE list that both `tests/golden/make_golden.py` (which saves their outputs to
tests/data/golden_engine.npz) and `tests/test_golden_engine.py` (which re-runs them and
compares) import.

A `Case` names its method, model, initial state(s) and options; `run` calls `rotode.integrate`
and `record` turns the result into flat arrays (output rows, body rates, times, every counter of
``stats``, the events).  `save` and `load` store those arrays of all cases in one ``.npz``: an
index (JSON) and the values of all cases concatenated, one array of floats and one of integers.

The cases are short (spans of 2 s, a few output rows) and well conditioned (the T-handle spins
about its unstable axis, but over 2 s a perturbation grows by a factor of about 6 only), so that
a change of round-off in the engine changes the outputs by round-off, not more.
"""
from __future__ import annotations

import dataclasses
import json

import numpy as np

import rotode
from rotode import events as ev
from rotode import methods

KIN, RB = "kinematics", "rigid body"
SPAN = (0.0, 2.0)
BACK = (2.0, 0.0)
T_EVAL = (0.25, 0.777, 1.5, 2.0)        # 0.777 is off the grids of dt = 0.1 and 0.02
T_EVAL_BACK = (1.5, 0.777, 0.0)
TOLS = {"tol6": (("rtol", 1e-6), ("atol", 1e-8)), "tol10": (("rtol", 1e-10), ("atol", 1e-12))}
DT_KIN, DT_RB = 0.1, 0.02


# ---- models ----------------------------------------------------------------------------------

def w_python(t):
    """A Python angular velocity w(t) (no w'(t): exp2 and magnus_ca take their fallback)."""
    return [0.8 * np.sin(1.3 * t), 0.5 * np.cos(0.7 * t), 0.3 + 0.2 * t]


def tau_python(t, q, w):
    """A Python torque (body frame): damping and a time-dependent term."""
    return [-0.1 * w[0], -0.05 * w[1] + 0.02 * np.sin(t), -0.1 * w[2] + 0.05 * q[1]]


def force_python(t, x, v):
    """A Python force on the centre of mass (world frame), for rkn4."""
    return [0.0, -0.3 * x[1], -9.81 - 0.1 * v[2]]


def g_python(t, y):
    """A Python event: the scalar part of q crosses 0.9."""
    return y[0] - 0.9


_TS = np.linspace(0.0, 2.0, 12)          # sample times, not on the grid of dt = 0.1
_WS = np.column_stack([1.5 * np.sin(2.0 * _TS), 0.5 + 0.3 * np.cos(3.0 * _TS), 0.2 * _TS - 0.1])
_BENCH = rotode.omega.Sinusoid(amplitude=np.pi / 2, rate=2 * np.pi / 10,
                               phase=[0.0, 2 * np.pi / 3, 4 * np.pi / 3])   # Rucker 2018
_TOP_TORQUE = rotode.torque.Gravity(1.0, 1.0, [0, 0, 1])
_THANDLE = rotode.RigidBody([2.5, 1.4, 1.3])
_TORQUE_WORLD = rotode.RigidBody([1.0, 2.0, 2.5],
                                 torque=rotode.torque.Constant([0.1, -0.2, 0.3], frame="world"))
_TOP = rotode.RigidBody([1.0, 1.0, 0.5], torque=_TOP_TORQUE)

#: name -> the model argument of rotode.integrate
MODELS = {
    # kinematics: a known angular velocity
    "sinusoid": _BENCH,
    "constant": np.array([0.3, -1.1, 2.0]),
    "constant-fast": np.array([2.3, 0.4, 0.0]),     # > pi/sqrt(2) rad per step of 1 s
    "constant-tilted": 1.3 * np.array([np.sin(np.radians(50.0)), 0.0,
                                       np.cos(np.radians(50.0))]),
    "python": w_python,
    "samples-linear": rotode.omega.Samples(_TS, _WS, kind="linear"),
    "samples-previous": rotode.omega.Samples(_TS, _WS, kind="previous"),
    "samples-cubic": rotode.omega.Samples(_TS, _WS, kind="cubic"),
    "rates-3": np.array([[0.3, -1.1, 2.0], [1.5, 0.2, -0.4], [-0.7, 0.9, 0.1]]),
    # rigid bodies
    "thandle": _THANDLE,
    "torque-body": rotode.RigidBody([1.0, 2.0, 2.5],
                                    torque=rotode.torque.Constant([0.1, -0.2, 0.3])),
    "torque-world": _TORQUE_WORLD,
    "torque-python": rotode.RigidBody([1.0, 2.0, 2.5], torque=tau_python),
    "top": _TOP,
    "top-gain": rotode.RigidBody([1.0, 1.0, 0.5], torque=_TOP_TORQUE, norm_gain=0.5),
    "no-gyroscopic": rotode.RigidBody([1.0, 2.0, 2.5],
                                      torque=rotode.torque.Constant([0.1, -0.2, 0.3]),
                                      gyroscopic=False),
    # (3, 3) would be one inertia tensor: three bodies give theirs as (3, 3, 3) diagonal tensors
    "top-per-body": rotode.RigidBody(
        [np.diag(d) for d in ([1.0, 1.0, 0.5], [1.1, 0.95, 0.5], [1.0, 1.05, 0.55])],
        torque=rotode.torque.Gravity([1.0, 1.3, 0.8], 9.81, [[0, 0, 1.0], [0, 0, 0.9],
                                                               [0.05, 0, 1.1]])),
    "bodies-list": [_THANDLE, _TORQUE_WORLD, _TOP],
}

_Q_TILTED = [0.9, 0.1, -0.3, 0.2]
#: name -> y0 (one row: a single body; rows: a batch)
Y0 = {
    "q1": [1.0, 0.0, 0.0, 0.0],
    "q-tilted": _Q_TILTED,                            # not of unit length
    "q3": [[1.0, 0.0, 0.0, 0.0], _Q_TILTED, [0.0, 0.6, 0.0, -0.8]],
    "thandle": [1.0, 0.0, 0.0, 0.0, 0.01, 5.0, 0.01],
    "body": [1.0, 0.0, 0.0, 0.0, 0.4, -0.7, 1.1],
    "top": [1.0, 0.0, 0.0, 0.0, 1.5, 0.0, 1.0],
    "top-3": [[1.0, 0.0, 0.0, 0.0, 1.5, 0.0, 1.0],
              [0.99, 0.1, 0.0, 0.0, 1.6, 0.2, 1.0],
              [1.0, 0.0, 0.0, 0.0, 1.2, -0.1, 1.5]],
    "list-3": [[1.0, 0.0, 0.0, 0.0, 0.01, 5.0, 0.01],
               [1.0, 0.0, 0.0, 0.0, 0.4, -0.7, 1.1],
               [1.0, 0.0, 0.0, 0.0, 1.5, 0.0, 1.0]],
    "rkn4": [1.0, 0.0, 0.0, 0.0, 0.01, 5.0, 0.01, 0.0, 0.0, 0.0, 1.0, 0.0, 2.0],
    "rkn4-3": [[1.0, 0.0, 0.0, 0.0, 1.5, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 2.0],
               [0.99, 0.1, 0.0, 0.0, 1.6, 0.2, 1.0, 0.5, 0.0, 0.0, 0.0, 1.0, 0.0],
               [1.0, 0.0, 0.0, 0.0, 1.2, -0.1, 1.5, 0.0, 0.0, 1.0, -1.0, 0.0, 0.5]],
}

#: name -> the `events` argument
EVENTS = {
    "w1-crossing": ev.Component("w", 1, value=-0.3),
    "tilt-terminal": ev.AxisAngle([0, 0, 1], [0, 0, 1], np.radians(60.0), terminal=True,
                                  direction=1),
    "python": g_python,
    "crossing-and-tilt": [ev.Component("w", 1, value=-0.3),
                          ev.AxisAngle([0, 0, 1], [0, 0, 1], np.radians(60.0), terminal=True,
                                       direction=1)],
    "cone": ev.AxisAngle([0, 0, 1], [0, 0, 1], np.radians(60.0)),
}


# ---- the cases -------------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class Case:
    """One call of `rotode.integrate`: ``integrate(MODELS[model], span, Y0[y0],
    method=method, events=EVENTS[events], **dict(options))``.  ``per_body`` names the options
    that hold one row per body (sliced for the single runs of a batch)."""

    id: str
    method: str
    model: str
    y0: str
    options: tuple = ()
    span: tuple = SPAN
    events: str | None = None
    per_body: tuple = ()

    @property
    def n_bodies(self):
        """Rows of y0 for a batch, None for one body."""
        y0 = np.asarray(Y0[self.y0])
        return y0.shape[0] if y0.ndim == 2 else None

    def run(self, y0=None, **extra):
        """`rotode.integrate` on this case (``y0``: another initial state; ``extra``: e.g.
        ``workers``)."""
        kwargs = dict(self.options, **extra)
        if self.events is not None:
            kwargs["events"] = EVENTS[self.events]
        return rotode.integrate(MODELS[self.model], self.span,
                                np.array(Y0[self.y0] if y0 is None else y0),
                                method=self.method, **kwargs)

    def run_single(self, i):
        """Body ``i`` of a batched case, run alone (its own model, y0 row and options)."""
        model = MODELS[self.model]
        if isinstance(model, list) or (isinstance(model, np.ndarray) and model.ndim == 2):
            model = model[i]
        elif isinstance(model, rotode.RigidBody) and model.n_bodies is not None:
            model = model[i]
        kwargs = dict(self.options)
        for name in self.per_body:
            kwargs[name] = np.asarray(kwargs[name])[i]
        if self.events is not None:
            kwargs["events"] = EVENTS[self.events]
        return rotode.integrate(model, self.span, np.array(Y0[self.y0])[i], method=self.method,
                                **kwargs)


def _opts(**kw):
    return tuple(kw.items())


def _kinematic_cases(m):
    spec = methods.get(m)
    kernel = spec.kernel(KIN)
    out = []

    def case(tag, model, y0="q1", **kw):
        out.append(Case(f"{m}|kin|{model}|{tag}", m, model, y0, **kw))

    sources = ("sinusoid", "constant", "python", "samples-linear", "samples-previous",
               "samples-cubic")
    # fixed steps (the error-controlled methods too: with dt they step as fixed-step methods)
    for src in sources:
        for frame in ("body", "world"):
            case(f"{frame}|dt|t_eval", src, options=_opts(frame=frame, dt=DT_KIN, t_eval=T_EVAL))
    case("body|dt|every5", "sinusoid", options=_opts(dt=DT_KIN, save_every=5))
    case("world|dt|backward", "sinusoid", "q-tilted",
         options=_opts(frame="world", dt=DT_KIN, t_eval=T_EVAL_BACK), span=BACK)
    case("body|dt=samples|t_eval", "samples-previous",
         options=_opts(dt="samples", t_eval=T_EVAL))
    case("world|dt=samples", "samples-linear", options=_opts(frame="world", dt="samples"))
    # method options
    if kernel in ("cg", "exp2", "magnus_ca", "magnus"):
        case("body|dt|exp=approx", "sinusoid", options=_opts(dt=DT_KIN, t_eval=T_EVAL,
                                                              exp="approx"))
    if kernel == "magnus_ca":
        for terms in (1, 3, 4):
            case(f"world|dt|terms={terms}", "sinusoid",
                 options=_opts(frame="world", dt=DT_KIN, t_eval=T_EVAL, terms=terms))
        case("body|dt|alpha", "constant", options=_opts(dt=DT_KIN, t_eval=T_EVAL,
                                                        alpha=(0.1, 0.2, -0.3)))
        case("body|dt=1|substep", "constant-fast", options=_opts(dt=1.0, substep=True))
    if kernel in ("rk3", "rk4", "ab3", "erk"):
        case("body|dt|norm_gain", "sinusoid", "q-tilted",
             options=_opts(dt=DT_KIN, t_eval=T_EVAL, norm_gain=0.5))
    if kernel in ("rk3", "rk4", "ab3"):
        case("world|dt|normalize", "sinusoid", "q-tilted",
             options=_opts(frame="world", dt=DT_KIN, t_eval=T_EVAL, normalize=True))
    # batches: shared source, and constant per-body rates
    case("body|dt|t_eval|batch", "sinusoid", "q3", options=_opts(dt=DT_KIN, t_eval=T_EVAL))
    case("world|dt|batch", "rates-3", "q3", options=_opts(frame="world", dt=DT_KIN,
                                                          save_every=5))
    if not spec.adaptive:
        return out
    # error control
    for src in sources:
        for frame in ("body", "world"):
            for tol, tol_opts in TOLS.items():
                case(f"{frame}|{tol}|t_eval", src, options=(("frame", frame),) + tol_opts
                     + (("t_eval", T_EVAL),))
    for src in ("sinusoid", "samples-previous"):
        for frame in ("body", "world"):
            for tol, tol_opts in TOLS.items():
                case(f"{frame}|{tol}", src, options=(("frame", frame),) + tol_opts)
    case("body|tol6|first_step,max_step", "sinusoid",
         options=TOLS["tol6"] + _opts(first_step=0.01, max_step=0.3, t_eval=T_EVAL))
    case("world|tol10|backward", "sinusoid", "q-tilted",
         options=TOLS["tol10"] + _opts(frame="world", t_eval=T_EVAL_BACK), span=BACK)
    case("body|default-tol", "python", options=())
    if kernel == "erk":
        case("body|tol6|norm_gain", "sinusoid", "q-tilted",
             options=TOLS["tol6"] + _opts(norm_gain=0.5, t_eval=T_EVAL))
    case("body|tol10|events", "constant-tilted", options=TOLS["tol10"] + _opts(max_step=0.5),
         span=(0.0, 6.0), events="cone")
    case("body|tol6|t_eval|batch", "sinusoid", "q3", options=TOLS["tol6"] + _opts(t_eval=T_EVAL))
    case("world|tol10|batch", "rates-3", "q3", options=TOLS["tol10"] + _opts(frame="world"))
    case("body|tol10|events|batch", "rates-3", "q3",
         options=TOLS["tol10"] + _opts(max_step=0.5, t_eval=T_EVAL), events="cone")
    return out


def _rigid_body_cases(m):
    spec = methods.get(m)
    kernel = spec.kernel(RB)
    out = []

    def case(tag, model, y0, **kw):
        out.append(Case(f"{m}|rb|{model}|{tag}", m, model, y0, **kw))

    explicit = kernel not in ("implicit",)
    singles = [("thandle", "thandle"), ("torque-body", "body"), ("torque-world", "body"),
               ("torque-python", "body"), ("top", "top"), ("top-gain", "top")]
    if explicit and kernel != "rkn4":
        singles.append(("no-gyroscopic", "body"))
    for model, y0 in singles:
        case("dt|t_eval", model, y0, options=_opts(dt=DT_RB, t_eval=T_EVAL))
    case("dt|every20", "thandle", "thandle", options=_opts(dt=DT_RB, save_every=20))
    case("dt|backward", "top", "top", options=_opts(dt=DT_RB, t_eval=T_EVAL_BACK), span=BACK)
    # method options
    if kernel in ("rk3", "rk4", "ab3", "rkn4"):
        case("dt|normalize", "top", "top", options=_opts(dt=DT_RB, t_eval=T_EVAL,
                                                         normalize=True))
    if kernel in ("lie_euler", "cg", "rk3", "rk4", "ab3", "rkn4"):
        case("dt|restore_momentum", "thandle", "thandle",
             options=_opts(dt=DT_RB, t_eval=T_EVAL, restore_momentum=True))
        case("dt|torque_substeps", "top", "top",
             options=_opts(dt=0.1, t_eval=T_EVAL, torque_substeps=4))
        case("dt|torque_substeps,points=2,evaluate,resets", "torque-python", "body",
             options=_opts(dt=0.1, t_eval=T_EVAL, torque_substeps=3, torque_points=2,
                           torque_start="evaluate", torque_resets=(1.0,)))
    if kernel == "rkn4":
        case("dt|force", "thandle", "rkn4", options=_opts(dt=DT_RB, t_eval=T_EVAL,
                                                          force=(0.0, 0.0, -9.81), mass=2.0))
        case("dt|force-python", "top", "rkn4", options=_opts(dt=DT_RB, t_eval=T_EVAL,
                                                             force=force_python, mass=0.5))
        case("dt|qdot0", "top", "top", options=_opts(dt=DT_RB, t_eval=T_EVAL,
                                                     qdot0=(0.1, 0.7, 0.0, 0.5)))
        case("dt|force|batch", "top", "rkn4-3",
             options=_opts(dt=DT_RB, t_eval=T_EVAL, force=((0.0, 0.0, -9.81), (1.0, 0.0, 0.0),
                                                           (0.0, 0.5, -1.0)),
                           mass=(2.0, 1.0, 0.5)), per_body=("force", "mass"))
    if kernel == "implicit":
        case("dt|fixed-point", "top", "top", options=_opts(dt=DT_RB, t_eval=T_EVAL,
                                                           solver="fixed-point"))
        case("dt|bound=inertia", "thandle", "thandle",
             options=_opts(dt=0.1, t_eval=T_EVAL, bound="inertia"))
        case("dt|substep_angle=0", "thandle", "thandle",
             options=_opts(dt=0.1, t_eval=T_EVAL, substep_angle=0.0))
        case("dt|tol,max_iter", "torque-python", "body",
             options=_opts(dt=DT_RB, t_eval=T_EVAL, tol=1e-12, max_iter=30))
    # batches: one shared body, per-body parameters, a list of bodies
    case("dt|t_eval|batch", "top", "top-3", options=_opts(dt=DT_RB, t_eval=T_EVAL))
    case("dt|batch", "top-per-body", "top-3", options=_opts(dt=DT_RB, save_every=20))
    case("dt|t_eval|batch", "bodies-list", "list-3", options=_opts(dt=DT_RB, t_eval=T_EVAL))
    if not spec.adaptive:
        return out
    # error control
    for model, y0 in (("thandle", "thandle"), ("torque-world", "body"),
                      ("torque-python", "body"), ("top", "top"), ("top-gain", "top"),
                      ("no-gyroscopic", "body")):
        for tol, tol_opts in TOLS.items():
            case(f"{tol}|t_eval", model, y0, options=tol_opts + _opts(t_eval=T_EVAL))
    for model, y0 in (("thandle", "thandle"), ("top", "top")):
        for tol, tol_opts in TOLS.items():
            case(tol, model, y0, options=tol_opts)
    case("tol6|first_step,max_step", "top", "top",
         options=TOLS["tol6"] + _opts(first_step=0.01, max_step=0.1, t_eval=T_EVAL))
    case("tol10|backward", "top", "top", options=TOLS["tol10"] + _opts(t_eval=T_EVAL_BACK),
         span=BACK)
    case("default-tol", "thandle", "thandle", options=())
    case("tol10|t_eval|events", "top", "top", options=TOLS["tol10"] + _opts(t_eval=T_EVAL),
         events="w1-crossing")
    case("tol6|t_eval|terminal", "top", "top", options=TOLS["tol6"] + _opts(t_eval=T_EVAL),
         events="tilt-terminal")
    case("tol6|terminal", "top", "top", options=TOLS["tol6"], events="tilt-terminal")
    case("tol6|python-event", "torque-python", "body", options=TOLS["tol6"], events="python")
    case("tol6|t_eval|batch", "top", "top-3", options=TOLS["tol6"] + _opts(t_eval=T_EVAL))
    case("tol10|batch", "top-per-body", "top-3", options=TOLS["tol10"])
    case("tol6|t_eval|batch", "bodies-list", "list-3", options=TOLS["tol6"] + _opts(t_eval=T_EVAL))
    case("tol10|t_eval|events|batch", "top-per-body", "top-3",
         options=TOLS["tol10"] + _opts(t_eval=T_EVAL), events="crossing-and-tilt")
    return out


def all_cases():
    """Every case, in registry order: each method on each model kind it integrates."""
    out = []
    for m in methods.REGISTRY:
        if KIN in methods.get(m).models:
            out += _kinematic_cases(m)
        if RB in methods.get(m).models:
            out += _rigid_body_cases(m)
    return out


CASES = all_cases()
assert len({c.id for c in CASES}) == len(CASES), "case ids must be unique"


# ---- what is saved -----------------------------------------------------------------------------

def record(res):
    """The outputs of a result as flat ``{name: value}``: ``t``, ``y``, ``w``, every entry of
    ``stats`` (``stats.NAME``; ``per_body.NAME`` for a batch), and with events ``t_events.J``,
    ``y_events.J`` (one body) or ``t_events.I.J``, ``y_events.I.J`` (body I of a batch),
    ``t_stop``, ``y_final`` and ``w_final``.  Values are float or integer arrays, or strings.
    ``stats["simd"]`` (the instruction set the lane kernels ran on) is left out: it is the
    machine's, and the numbers are the same on every one (tests/test_simd_batch.py)."""
    out = {"t": res.t, "y": res.y, "w": res.w}
    for key, value in res.stats.items():
        if key == "simd":
            continue
        if key == "per_body":
            out.update({f"per_body.{k}": v for k, v in value.items()})
        else:
            out[f"stats.{key}"] = value
    if res.t_events is not None:
        if res.y.ndim == 3:
            for i, (te, ye) in enumerate(zip(res.t_events, res.y_events, strict=True)):
                for j, (a, b) in enumerate(zip(te, ye, strict=True)):
                    out[f"t_events.{i}.{j}"], out[f"y_events.{i}.{j}"] = a, b
        else:
            for j, (a, b) in enumerate(zip(res.t_events, res.y_events, strict=True)):
                out[f"t_events.{j}"], out[f"y_events.{j}"] = a, b
        out["t_stop"], out["y_final"], out["w_final"] = res.t_stop, res.y_final, res.w_final
    return {k: v if isinstance(v, str) else np.asarray(v) for k, v in out.items()}


def save(path, records, meta):
    """Write ``{case id: record}`` to `path` (.npz): ``index`` (JSON: per case and name the kind
    "f" float, "i" integer or "s" string, the shape and the offset into ``floats`` or
    ``ints``, or the string), ``floats`` and ``ints``."""
    index, floats, ints = {}, [], []
    n_f = n_i = 0
    for cid, rec in records.items():
        entry = {}
        for name, value in rec.items():
            if isinstance(value, str):
                entry[name] = ["s", value]
            elif value.dtype.kind in "iub":
                entry[name] = ["i", list(value.shape), n_i]
                ints.append(value.astype(np.int64).ravel())
                n_i += value.size
            elif value.dtype.kind == "f":
                entry[name] = ["f", list(value.shape), n_f]
                floats.append(value.astype(np.float64).ravel())
                n_f += value.size
            else:
                raise TypeError(f"{cid}: {name} has dtype {value.dtype}")
        index[cid] = entry
    np.savez_compressed(
        path, index=np.array(json.dumps({"meta": meta, "cases": index})),
        floats=np.concatenate(floats) if floats else np.empty(0),
        ints=np.concatenate(ints) if ints else np.empty(0, dtype=np.int64))


def load(path):
    """``(meta, {case id: record})`` as `save` wrote them."""
    with np.load(path) as data:
        index = json.loads(str(data["index"]))
        floats, ints = data["floats"], data["ints"]
    records = {}
    for cid, entry in index["cases"].items():
        rec = {}
        for name, spec in entry.items():
            if spec[0] == "s":
                rec[name] = spec[1]
                continue
            kind, shape, offset = spec
            size = int(np.prod(shape, dtype=np.int64))
            src = floats if kind == "f" else ints
            rec[name] = src[offset:offset + size].reshape(shape)
        records[cid] = rec
    return index["meta"], records


def scale(ref):
    """The size against which differences of the float array `ref` are measured: per column
    (last axis) of an array of rows, else over the array, its largest finite magnitude, at
    least 1 (quaternion entries are O(1); rates, positions and times may be larger)."""
    a = np.abs(np.where(np.isfinite(ref), ref, 0.0))
    if a.ndim >= 2:
        return np.maximum(1.0, a.reshape(-1, a.shape[-1]).max(axis=0, initial=0.0))
    return np.maximum(1.0, a.max(initial=0.0))


#: The test's tolerance: floats equal to RTOL relative, RTOL * scale absolute.
RTOL = 1e-14


def is_counter(name, value):
    """True for the counters of ``stats`` (integers, and ``newton_iter_mean``, a ratio of
    counts), False for the outputs (times, states, rates, events, final ``qdot``/``L``), the
    diagnostic ``residual_max`` and the message."""
    return name == "stats.newton_iter_mean" or (not isinstance(value, str)
                                                 and value.dtype.kind in "iub")


def relative_difference(ref, new, names=None):
    """The largest ``|new - ref| / scale(ref)`` over the float entries (those in `names`, by
    default all) of two records with the same names and shapes (0 where both are NaN, inf where
    one is NaN or the shapes differ)."""
    worst = 0.0
    for name, a in ref.items():
        b = new.get(name)
        if isinstance(a, str) or a.dtype.kind != "f" or (names is not None and name not in names):
            continue
        if b is None or b.shape != a.shape:
            return np.inf
        if a.size == 0:
            continue
        if not np.array_equal(np.isnan(a), np.isnan(b)):
            return np.inf
        d = np.where(np.isnan(a), 0.0, np.abs(b - a)) / scale(a)
        worst = max(worst, float(d.max()))
    return worst
