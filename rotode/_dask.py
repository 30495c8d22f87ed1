"""Dask arrays in, dask arrays out: `rotode.integrate` on ensembles.

A dask array in ``y0`` (or in a model's per-body parameters) makes `rotode.integrate` build one
task per chunk of bodies; each task runs the ordinary batched compiled call on its NumPy blocks
(docs/scaling.md).  Because every body does exactly the arithmetic of a single run, the result
equals the NumPy batched run bit for bit for any chunking, any dask scheduler and any number of
workers.  (The kernels of `rotode.quaternion` and `rotode.so3` map over dask blocks by
themselves: `rotode._lazy`.)

`rotode.integration` imports this module, never the reverse: `rotode.integrate` hands itself to
`integrate` below (the NumPy call of the probe and of each task), and
`LazyIntegrationResult.compute` gathers the class of the probe's result.  Nothing here imports
dask until a dask array is seen: the core install does not need it
(``pip install "rotode[dask]"``).

A user's `rotode.ODE` is rebuilt in each task from its function, layout and the chunk's rows of
per-body ``params``.  Its function travels as a `ShippedFunction`: the object itself where the
task runs in this process (the threaded scheduler), and to another process (dask.distributed)
a Python function as pickle (cloudpickle) sends it, a numba ``cfunc`` as its Python source and
compile options, compiled again once per worker process; a ctypes function or
`scipy.LowLevelCallable` (an address valid in this process only) cannot be sent and raises a
TypeError saying so.
"""
from __future__ import annotations

from typing import Any, Generic, TypeVar

import numpy as np

from rotode._cfunc import ShippedFunction
from rotode._lazy import dask_array as _dask_array
from rotode._results import StateViews
from rotode._validation import is_dask
from rotode.events import as_events
from rotode.ode import ODE
from rotode.rhs import RigidBody

__all__ = ["has_dask", "integrate", "LazyIntegrationResult", "ShippedFunction"]

#: The class of the NumPy result (`rotode.IntegrationResult`) that `compute` gathers.
_Result = TypeVar("_Result")


def _per_body_fields(model):
    """The per-body arrays of `model` (name -> array with leading axis N, NumPy or dask) and a
    small recipe from which `_rebuild` makes the model of a chunk from NumPy blocks of them
    (the recipe holds only shared parameters: a task ships its own rows, not the ensemble's).
    A per-body torque gives its own parts (`Torque._chunk_split`), named ``torque:<name>``."""
    if is_dask(model) or isinstance(model, np.ndarray) and model.ndim == 2:
        return {"rates": model}, ("rates",)
    if isinstance(model, ODE):
        per_body = model.params is not None and model.params.ndim == 2
        return ({"params": model.params} if per_body else {}), (
            "ode", ShippedFunction(model.fun), model.n, model.quaternions,
            None if per_body else model.params, model.args, model.jac, model.jac_params)
    if not isinstance(model, RigidBody) or model.n_bodies is None:
        return {}, ("shared",)
    fields, shared = {}, {}
    inertia = model.inertia                   # (N, 3, 3), dask (N, 3) / (N, 3, 3), or shared
    (fields if is_dask(inertia) or np.ndim(inertia) == 3 else shared)["inertia"] = inertia
    tq = model.torque
    torque = None                             # (class, shared parameters, row placeholders)
    if tq is not None and tq.n_bodies is not None:
        per_body, tshared, placeholders = tq._chunk_split()
        fields.update({"torque:" + name: v for name, v in per_body.items()})
        torque = (type(tq), tshared, placeholders)
    else:
        shared["torque"] = tq
    return fields, ("rigid body", torque, shared, model.norm_gain, model.gyroscopic)


def _rebuild(recipe, blocks, model=None):
    """The model of a chunk: `recipe` of `_per_body_fields` with NumPy `blocks` (or `model`
    itself when nothing is per body)."""
    if recipe[0] == "shared":
        return model
    if recipe[0] == "rates":
        return blocks["rates"]
    if recipe[0] == "ode":
        _, fun, n, quaternions, params, args, jac, jac_params = recipe
        return ODE(fun.fun, n=n, quaternions=quaternions,
                   params=blocks["params"] if "params" in blocks else params, args=args,
                   jac=jac, jac_params=jac_params)
    _, torque, shared, norm_gain, gyroscopic = recipe
    if torque is None:
        source = shared["torque"]
    else:
        cls, tshared, _ = torque
        source = cls._chunk_join({**tshared, **{name[7:]: v for name, v in blocks.items()
                                                if name.startswith("torque:")}})
    inertia = blocks["inertia"] if "inertia" in blocks else shared["inertia"]
    return RigidBody(inertia, torque=source, norm_gain=norm_gain, gyroscopic=gyroscopic)


#: options of `integrate` that may hold one row per body (name: their number of dimensions)
PER_BODY_OPTIONS = {"force": 2, "mass": 1, "qdot0": 2}


def has_dask(model, y0, options=None):
    """True when `y0`, a rate array, a per-body parameter of `model` or a per-body option is a
    dask array."""
    if is_dask(y0) or is_dask(model):
        return True
    if options and any(is_dask(options.get(name)) for name in PER_BODY_OPTIONS):
        return True
    if isinstance(model, ODE):
        return is_dask(model.params)
    lazy = getattr(model, "_lazy", None)         # a per-body RigidBody holding dask arrays
    return lazy is not None and getattr(model, "n_bodies", None) is not None and lazy()


def _dummy(model, fields, recipe, y0):
    """A one-body stand-in with the structure of `model` (per-body values replaced by valid
    placeholders) and a valid state, for checking the call before any task runs.  A user's
    `ODE` is checked on the first body itself (its row of ``y0`` and of per-body ``params``):
    the equations of a placeholder state (zeros) may well divide by zero."""
    if recipe[0] == "ode":
        first = {name: v[:1] for name, v in fields.items() if not name.startswith("event")}
        y, first = _first(y0, first)
        options = {name: first.pop(name) for name in list(first) if name.startswith("option:")}
        return _rebuild(recipe, first, model), y, options
    k = int(y0.shape[1])
    placeholders = {"inertia": 1.0, "option:mass": 1.0}
    if recipe[0] == "rigid body" and recipe[1] is not None:
        placeholders.update({"torque:" + name: v for name, v in recipe[1][2].items()})
    blocks = {}
    for name, v in fields.items():
        if name.startswith("event"):
            continue
        shape = (1,) + tuple(np.shape(v)[1:])
        blocks[name] = (np.broadcast_to(np.eye(3), shape).copy() if name == "inertia"
                        and len(shape) == 3 else np.full(shape, placeholders.get(name, 0.0)))
    y = np.zeros((1, k))
    y[0, 0] = 1.0
    options = {name: blocks.pop(name) for name in list(blocks) if name.startswith("option:")}
    return _rebuild(recipe, blocks, model), y, options


def _first(y0, fields):
    """The first body's row of `y0` and of each per-body field, as NumPy arrays (one
    ``dask.compute``: a chunk's inputs, not its run)."""
    import dask
    y, first = dask.compute(y0[:1], fields)
    return (np.asarray(y, dtype=np.float64),
            {name: np.ascontiguousarray(v) for name, v in first.items()})


def integrate(facade, model, t_span, y0, kwargs):
    """`rotode.integrate` on dask arrays (see the module docstring); `facade` is the NumPy
    `rotode.integrate`, `kwargs` its other arguments.  The call is checked once on a one-body
    stand-in (the probe), whose result's class `LazyIntegrationResult.compute` gathers."""
    da = _dask_array()
    fields, recipe = _per_body_fields(model)
    kwargs = dict(kwargs)
    for name, dims in PER_BODY_OPTIONS.items():       # rkn4's per-body force, mass, q'
        value = kwargs.get(name)
        if value is not None and not callable(value) and np.ndim(value) == dims:
            fields["option:" + name] = kwargs.pop(name)
    n_bodies = {name: int(np.shape(v)[0]) for name, v in fields.items()}
    if not is_dask(y0):
        y0 = np.asarray(y0)
        if y0.ndim != 2:
            raise ValueError("with per-body dask parameters `y0` must hold one state per body, "
                             f"shape (N, k), got {y0.shape}")
        chunks = next(v.chunks[0] for v in fields.values() if is_dask(v))
        y0 = da.from_array(y0, chunks=(chunks, -1))
    if y0.ndim != 2:
        raise ValueError(f"a dask `y0` must have shape (N, k) (one state per row), got "
                         f"{y0.shape}")
    if len(y0.chunks[1]) != 1:
        raise ValueError(f"`y0` is chunked along the state axis (chunks {y0.chunks[1]}): a "
                         "task needs whole states; rechunk it with y0.rechunk({1: -1})")
    if y0.dtype.kind not in "iuf":
        raise TypeError(f"`y0` must be a real numeric array, got dtype {y0.dtype}")
    N, k = (int(s) for s in y0.shape)
    for name, n in n_bodies.items():
        if n != N:
            what = (f"option `{name[7:]}`" if name.startswith("option:")
                    else f"the torque's per-body `{name[7:]}`" if name.startswith("torque:")
                    else f"the model's per-body `{name}`")
            raise ValueError(f"{what} holds {n} bodies but `y0` {N}")
    rows = y0.chunks[0]
    events = kwargs.get("events")
    event_recipe = None
    if events is not None:
        evs = as_events(events)
        event_fields, event_recipe = _event_fields(evs, N)
        fields.update(event_fields)
        kwargs["events"] = [e[0] if e.n_bodies is not None else e for e in evs]   # (probe)
    # the call checked once on a stand-in body: bad arguments raise now, not inside a task
    one_model, one_y0, dummy_options = _dummy(model, fields, recipe, y0)
    probe = facade(one_model, t_span, one_y0, **kwargs, **{
        name[7:]: value for name, value in dummy_options.items()})
    if events is not None:
        kwargs["events"] = event_recipe        # (each task makes its chunk's events)
    t = probe.t
    n_t = t.shape[0]
    n_ev = len(probe.t_events[0]) if probe.t_events is not None else 0
    cap = kwargs.get("max_events") or 16
    keys = [key for key, value in probe.stats.items() if _counter(value)]
    per_body = list(probe.stats["per_body"])
    # One blockwise layer: block i of y0 and of every per-body parameter (rechunked to y0's
    # chunks of bodies) -> one task, whose result (a dict of NumPy arrays in a 1-element
    # object array) the outputs below slice without running it again.
    args = [y0, "ij"]
    names = list(fields)
    for name in names:
        v = fields[name]
        arr = v if is_dask(v) else da.from_array(np.asarray(v), chunks=-1)
        arr = arr.rechunk((rows,) + tuple(-1 for _ in arr.shape[1:]))
        # the trailing axes of each field named apart (their sizes differ between fields)
        args += [arr, ("i",) + tuple(f"{name}:{d}" for d in range(1, arr.ndim))]
    shared = (model if recipe[0] == "shared" else None, kwargs)
    parts = da.blockwise(_run_block, "i", *args, names=names, facade=facade, recipe=recipe,
                         t_span=t_span, shared=shared, n_ev=n_ev, cap=cap, keys=keys,
                         adjust_chunks={"i": 1}, concatenate=True, dtype=object,
                         meta=np.empty((0,), dtype=object))
    dtype = np.result_type(*(np.asarray(probe.stats[key]).dtype for key in keys))
    layout = (rows, n_t, k, keys, dtype, n_ev if events is not None else None, cap, per_body,
              probe.w is not None)
    lazy = LazyIntegrationResult(t, probe.method, parts, layout, type(probe))
    lazy.quaternions = getattr(probe, "quaternions", None)      # (an ODE's blocks)
    return lazy


def _outputs(parts, layout):
    """The result's dask arrays, each a slice of the per-chunk results `parts`."""
    rows, n_t, k, keys, dtype, n_ev, cap, per_body, has_w = layout

    def pick(key, tail, dtype=float):
        return parts.map_blocks(_pick, key, chunks=(rows,) + tuple((d,) for d in tail),
                                new_axis=list(range(1, 1 + len(tail))), dtype=dtype,
                                meta=np.empty((0,) * (1 + len(tail)), dtype=dtype))
    out = {"y": pick("y", (n_t, k)), "w": pick("w", (n_t, 3)) if has_w else None,
           "status": pick("status", (), int)}
    # the counters of a chunk as one row per chunk
    table = parts.map_blocks(_pick, "stats", chunks=((1,) * len(rows), (len(keys),)),
                             new_axis=[1], dtype=dtype, meta=np.empty((0, 0), dtype=dtype))
    out["stats"] = {key: table[:, j] for j, key in enumerate(keys)}
    out["stats"]["per_body"] = {key: pick("per_body:" + key, (), np.int64) for key in per_body}
    if n_ev is not None:
        out.update(t_events=pick("t_events", (n_ev, cap)),
                   y_events=pick("y_events", (n_ev, cap, k)),
                   t_stop=pick("t_stop", ()), y_final=pick("y_final", (k,)),
                   w_final=pick("w_final", (3,)) if has_w else None)
        out["stats"]["n_events"] = pick("n_events", (n_ev,), np.int64)
    return out


def _event_fields(evs, n):
    """The per-body arrays of the events ``evs`` as fields of the blockwise call (name ->
    (N, ...) array) and a recipe from which `_chunk_events` makes a chunk's events: a per-body
    event ships its rows to each task (`rotode.events._Parameters._chunk_split`); a Python
    event that takes ``body`` gets the chunk's first body index (the field ``event:body``,
    0..N-1), so that it sees indices in the whole batch."""
    fields, recipe = {}, []
    for j, e in enumerate(evs):
        if e.n_bodies is not None:
            if e.n_bodies != n:
                raise ValueError(f"`events[{j}]` holds per-body parameters for {e.n_bodies} "
                                 f"bodies but `y0` holds {n}")
            per_body, template = e._chunk_split()
            fields.update({f"event{j}:{name}": v for name, v in per_body.items()})
            recipe.append(("per body", j, template))
        elif getattr(e, "takes_body", False):
            fields["event:body"] = np.arange(n)
            recipe.append(("body index", j, e))
        else:
            recipe.append(("shared", j, e))
    return fields, recipe


def _chunk_events(recipe, blocks):
    """The events of a chunk (`_event_fields`) from its NumPy blocks."""
    out = []
    for how, j, e in recipe:
        if how == "per body":
            prefix = f"event{j}:"
            out.append(e._chunk_join({name[len(prefix):]: v for name, v in blocks.items()
                                      if name.startswith(prefix)}))
        elif how == "body index":
            out.append(e._offset_by(int(blocks["event:body"][0])))
        else:
            out.append(e)
    return out


def _outcome(part):
    out = np.empty(1, dtype=object)
    out[0] = (part[0]["code"], part[0]["message"])
    return out


def _pick(part, key):
    return part[0][key]


def _run_block(y0, *params, names, facade, recipe, t_span, shared, n_ev, cap, keys):
    out = np.empty(1, dtype=object)
    out[0] = _run_chunk(facade, recipe, y0, dict(zip(names, params, strict=True)), t_span,
                        shared, n_ev, cap, keys)
    return out


def _counter(value):
    return np.ndim(value) == 0 and isinstance(value, (int, float, np.number))


def _run_chunk(facade, recipe, y0, params, t_span, shared, n_ev, cap, keys):
    """One task: the NumPy batched call on a chunk of bodies, its outputs as arrays."""
    model, kwargs = shared
    kwargs = dict(kwargs)
    blocks, event_blocks = {}, {}
    for name, v in params.items():
        if name.startswith("option:"):
            kwargs[name[7:]] = np.ascontiguousarray(v)
        elif name.startswith("event"):
            event_blocks[name] = np.ascontiguousarray(v)
        else:
            blocks[name] = np.ascontiguousarray(v)
    model = _rebuild(recipe, blocks, model)
    if kwargs.get("events") is not None:
        kwargs["events"] = _chunk_events(kwargs["events"], event_blocks)
        kwargs["max_events"] = cap
    res = facade(model, t_span, np.ascontiguousarray(y0, dtype=np.float64), **kwargs)
    c = y0.shape[0]
    status = np.zeros(c, dtype=int)
    out = {"y": res.y, "w": res.w, "message": res.message, "code": res.status}
    if res.status not in (0, 1):
        status[~np.isfinite(res.y[:, -1]).all(axis=1)] = res.status
    out["stats"] = np.array([[res.stats.get(key, 0) for key in keys]])
    out.update({"per_body:" + key: v for key, v in res.stats["per_body"].items()})
    if kwargs.get("events") is not None:
        t_ev = np.full((c, n_ev, cap), np.nan)
        y_ev = np.full((c, n_ev, cap, y0.shape[1]), np.nan)
        for i in range(c):
            for e in range(n_ev):
                m = res.t_events[i][e].shape[0]
                t_ev[i, e, :m] = res.t_events[i][e]
                y_ev[i, e, :m] = res.y_events[i][e]
        stopped = np.isfinite(res.t_stop)
        status[stopped & (status == 0)] = 1
        out.update(t_events=t_ev, y_events=y_ev, n_events=np.asarray(res.stats["n_events"]),
                   t_stop=np.asarray(res.t_stop, dtype=float), y_final=res.y_final,
                   w_final=res.w_final)
    out["status"] = status
    return out


class LazyIntegrationResult(StateViews, Generic[_Result]):
    """What `rotode.integrate` returns for dask input: the fields of `IntegrationResult` as
    dask arrays chunked like ``y0`` along the bodies (nothing runs until they are computed).

    Parameters
    ----------
    t, method, parts, layout, result
        The output times, the method's name, the dask array of per-chunk results, their
        layout and the class of the NumPy result that `compute` gathers
        (`IntegrationResult`); `rotode.integrate` builds the result.

    Attributes
    ----------
    t : ndarray, shape (n_t,)
        Output times (known in advance).
    y, q, w, p, v : dask arrays, shape (N, n_t, ...)
    status : dask array of int, shape (N,)
        Per body: 0 ran to the end, 1 stopped by a terminal event, otherwise the failure code
        of its chunk's run (`IntegrationResult.status`).
    stats : dict of dask arrays
        Each counter once per chunk (shape (n_chunks,)), as the chunk's batched run reports it;
        ``stats["per_body"]``: the per-body counters of `IntegrationResult`, shape (N,), equal
        to those of the NumPy run.
    t_events, y_events : dask arrays or None
        With ``events``: per body and event, the first ``max_events`` (default 16) times
        (N, n_events, max_events) and rows (..., k), NaN-padded; ``stats["n_events"]`` (N,
        n_events) counts every occurrence; ``t_stop`` (N,), ``y_final`` (N, k) and
        ``w_final`` (N, 3) as in `IntegrationResult` (the rows after a body's stop are NaN,
        its state at the stop is in ``y_final``; docs/events.md, "What a stopped run
        returns").

    Notes
    -----
    Each of these arrays reads the same per-chunk tasks: compute them together
    (``dask.compute(res.q, res.w)``, `persist`, or `compute` for a NumPy `IntegrationResult`)
    to run every chunk once.

    See Also
    --------
    rotode.integrate, IntegrationResult

    Examples
    --------
    >>> import numpy as np, dask.array as da, rotode
    >>> y0 = da.from_array(np.tile([1.0, 0.0, 0.0, 0.0], (4, 1)), chunks=(2, 4))
    >>> lazy = rotode.integrate([0.0, 0.0, 1.0], (0, 1), y0, method="magnus4", dt=0.1)
    >>> lazy
    LazyIntegrationResult(method='magnus4', y: 4x11x4 in 2 chunks)
    >>> lazy.q.chunks[0], lazy.compute().q.shape
    ((2, 2), (4, 11, 4))
    """

    def __init__(self, t, method, parts, layout, result):
        self.t = t
        self.method = method
        self._result = result
        self.quaternions = None      # (an ODE's blocks: set by `integrate`)
        self._set(parts, layout)

    def _set(self, parts, layout):
        self._parts = parts
        self._layout = layout
        self._rows = layout[0]
        out = _outputs(parts, layout)
        self.y, self.w, self.status, self.stats = out["y"], out["w"], out["status"], out["stats"]
        self.t_events = out.get("t_events")
        self.y_events = out.get("y_events")
        self.t_stop = out.get("t_stop")
        self.y_final = out.get("y_final")
        self.w_final = out.get("w_final")

    @property
    def success(self):
        """A lazy boolean: every body ran to its end or to a terminal event."""
        return ((self.status == 0) | (self.status == 1)).all()

    def _arrays(self):
        names = ["y", "w", "status", "t_events", "y_events", "t_stop", "y_final", "w_final"]
        return {n: getattr(self, n) for n in names if getattr(self, n) is not None}

    def persist(self, **kwargs: Any) -> LazyIntegrationResult[_Result]:
        """Run every chunk once (``dask.persist``) and keep the results in memory (on the
        workers with dask.distributed); every array then reads them.  Returns self."""
        import dask
        (parts,) = dask.persist(self._parts, **kwargs)
        self._set(parts, self._layout)
        return self

    def compute(self, **kwargs: Any) -> _Result:
        """Run every chunk once and gather an `IntegrationResult` (NumPy, all bodies)."""
        import dask
        arrays = self._arrays()
        outcome = self._parts.map_blocks(_outcome, dtype=object)
        values = dask.compute(*arrays.values(), self.stats, outcome, **kwargs)
        got = dict(zip(arrays, values[:-2], strict=True))
        stats, outcome = values[-2:]
        codes = [c for c, _ in outcome]
        messages = [m for _, m in outcome]
        stats = {key: (np.asarray(v).max().item() if key not in ("n_events", "per_body")
                       else v) for key, v in stats.items()}
        code, message = 0, "success"
        starts = np.concatenate([[0], np.cumsum(self._rows)])
        for j, c in enumerate(codes):
            if c == 1 and code == 0:
                code, message = 1, messages[j]
            elif c not in (0, 1):
                code = int(c)
                message = (f"bodies {starts[j]}..{starts[j + 1] - 1} (chunk {j}; its body "
                           f"numbers count from {starts[j]}): {messages[j]}")
                break
        stats["status"] = code
        stats["message"] = message
        t_events = y_events = t_stop = None
        if "t_events" in got:
            n = stats["n_events"]
            cap = got["t_events"].shape[2]
            kept = np.minimum(n, cap)
            t_events = [[got["t_events"][i, e, :kept[i, e]] for e in range(n.shape[1])]
                        for i in range(n.shape[0])]
            y_events = [[got["y_events"][i, e, :kept[i, e]] for e in range(n.shape[1])]
                        for i in range(n.shape[0])]
            t_stop = got["t_stop"]
        res = self._result(self.t, got["y"], got.get("w"), stats, self.method, t_events,
                           y_events, t_stop, got.get("y_final"), got.get("w_final"))
        if self.quaternions is not None:
            res.quaternions = self.quaternions
        return res

    def __repr__(self):
        shape = "x".join(str(s) for s in self.y.shape)
        return (f"LazyIntegrationResult(method={self.method!r}, y: {shape} in "
                f"{len(self._rows)} chunks)")
