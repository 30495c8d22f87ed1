"""Events on the rotation group: functions whose sign changes stop or mark an integration.

``rotode.integrate(..., rtol=..., events=[...])`` evaluates them without the GIL on the dense
output of every accepted step and locates each sign change of ``g`` inside the step to the
spacing of floats (Brent's method, as SciPy's ``brentq``), as ``scipy.integrate.solve_ivp``
does with its event functions.  Each event has SciPy's attributes: ``terminal`` (False, True,
or a count k: stop at the k-th occurrence, SciPy >= 1.11) and ``direction`` (+1: only where g
increases, -1: decreases, 0: both).  An event that is zero at ``t0`` and moves away from zero
in its direction is recorded at ``t0``, as in SciPy.

Every event is also a plain callable ``event(t, y)`` on the state vector (``[q]`` or ``[q, w]``)
with ``terminal`` and ``direction``, so the same objects work with ``scipy.integrate.solve_ivp``
(the body angular velocity ``w`` of a kinematic run is not in its state ``y = [q]``: the
events that read it, ``Component("w", i)`` and `KineticEnergy`, raise a ValueError there and
need `rotode.integrate` / `rotode.solve_ivp`, which supply ``w``).  A Python function
``g(t, y)`` becomes a `PythonEvent` (called with the GIL, slower: about 0.3 us per evaluation
besides the function's own time, about five evaluations per located event), and so does a
Python subclass of an event that overrides ``__call__``: rotode then calls its ``__call__``,
as SciPy does.  ``terminal`` and ``direction`` are read as SciPy reads them (``terminal=None``
is False, an integral float such as 1.0 its integer).

An event that stays exactly 0 over an interval (``Component("w", 0)`` of a body spinning about
its symmetry axis) has no sign change and is not recorded; SciPy records it at every step
there (its test ``g <= 0 <= g_new`` holds at 0).
"""
import inspect
import numbers

import numpy as np

from rotode._docfill import SHARED_DOCS, docfiller, fill
from rotode._signature import ExtensionSignature as _ExtensionSignature
from rotode._validation import (TINY_NORM2, as_body_index, as_choice, as_float_array,
                                as_inertia, as_real, as_rows, check_nonzero_quaternions,
                                common_bodies, is_dask, python_override,
                                rotation_quaternions)

cimport cython
from libc.math cimport NAN, sqrt, fabs, cos, isfinite
from libc.string cimport memcpy
cimport numpy as cnp
from rotode.quaternion cimport quat_rotate

cdef double _TINY_NORM2 = TINY_NORM2

__all__ = ["Event", "AxisAngle", "Component", "RotationAngle", "KineticEnergy",
           "PythonEvent", "as_events"]


def _shown(value):
    return repr(value) if isinstance(value, (int, float, str)) and len(repr(value)) <= 40 \
        else type(value).__name__


def _terminal(terminal, name="terminal"):
    """The count of a ``terminal`` attribute as SciPy (>= 1.11) reads it: None, False or 0
    record only, True or an integral number k > 0 (1.0 included) stop at the k-th occurrence
    (here k <= 2**31 - 1); anything else is a ValueError naming `name`."""
    if terminal is None:
        return 0
    if isinstance(terminal, (bool, np.bool_)):
        return int(bool(terminal))
    if isinstance(terminal, (int, np.integer)):
        if 0 <= terminal <= 2 ** 31 - 1:
            return int(terminal)
    elif isinstance(terminal, (numbers.Real, np.floating)):
        try:
            v = float(terminal)
        except (OverflowError, ValueError, TypeError):
            v = NAN
        if isfinite(v) and 0 <= v <= 2 ** 31 - 1 and v == int(v) and terminal == int(v):
            return int(v)
    raise ValueError(f"`{name}` must be a bool or an integer in [0, 2**31 - 1] (or, as SciPy "
                     f"takes them, None for False and an integral float), got "
                     f"{_shown(terminal)}")


def _direction(direction, name="direction"):
    number = isinstance(direction, (int, float, np.number))
    if isinstance(direction, (bool, np.bool_)) or not number or direction not in (-1, 0, 1):
        raise ValueError(f"`{name}` must be -1, 0 or 1, got {_shown(direction)}")
    return int(direction)


cdef bint _unit_into(const double* v, int n, double* out) noexcept:
    """out = v / |v| for a finite nonzero v of n entries, scaled first (no overflow of |v|^2);
    False for a zero vector.  One body's parameters and every row of per-body ones go through
    this same loop, so that body i of a per-body event has the bits of its one-body event."""
    cdef double top = 0.0, s = 0.0
    cdef int j
    for j in range(n):
        if fabs(v[j]) > top:
            top = fabs(v[j])
    if not top > 0.0:
        return False
    for j in range(n):
        out[j] = v[j] / top
    for j in range(n):
        s = s + out[j] * out[j]
    s = sqrt(s)
    for j in range(n):
        out[j] = out[j] / s
    return True


cdef int _unit_row(const double* v, int k, double* out, str message, Py_ssize_t i,
                   object n) except -1:
    """`_unit_into` of row i of a parameter, raising ValueError(message) for a zero row (the
    body named when the event is per-body: ``n`` not None)."""
    if not _unit_into(v, k, out):
        raise ValueError(message + (f" (body {i})" if n is not None else ""))
    return 0


def _zero_dim(value):
    """Whether ``value`` has no dimensions (False for a ragged nested sequence, which
    `rotode._validation.as_rows` then names)."""
    try:
        return np.ndim(value) == 0
    except ValueError:
        return False


def _per_body(named):
    """``(N or None, {name: float64 array})`` of parameters given once (shape ``trailing``) or
    once per body (leading axis N): ``named`` maps a name to ``(value, trailing)``; the
    arrays are broadcast to (N, *trailing) (or kept as given for one body).  A dask array is
    refused (a per-body event's parameters are NumPy; rotode splits them per chunk)."""
    rows, counts = {}, {}
    for name, (value, trailing) in named.items():
        if is_dask(value):
            raise TypeError(f"`{name}` must be a NumPy array (a dask run splits an event's "
                            "per-body parameters over its chunks itself), got a dask array")
        if not trailing and _zero_dim(value):          # one number: a real scalar
            rows[name], counts[name] = np.array(as_real(value, name)), None
        else:
            rows[name], counts[name] = as_rows(value, name, trailing)
    n = common_bodies(counts)
    if n is not None:
        for name, (_, trailing) in named.items():
            if counts[name] is None:
                rows[name] = np.broadcast_to(rows[name], (n, *trailing))
            rows[name] = np.ascontiguousarray(rows[name])
    return n, rows


def _check_angles(angle, n):
    """``angle`` in [0, pi] (ValueError naming it otherwise), as float64 (n,) or ()."""
    a = np.asarray(angle, dtype=np.float64)
    if not np.all((a >= 0) & (a <= np.pi)):
        bad = a[~((a >= 0) & (a <= np.pi))].reshape(-1)[0]
        each = " for every body" if n is not None else ""
        raise ValueError(f"`angle` must be in [0, pi]{each}, got {float(bad)!r}")
    return a


cdef class Event:
    """Base class of the events ``g(t, y, w)``; subclasses override the nogil ``evaluate``.

    Parameters
    ----------
    terminal : bool or int, optional
        Stop at the first (True) or k-th occurrence; False (default) records only.
    direction : {-1, 0, 1}, optional
        Record only the crossings where g decreases (-1), increases (+1), or all (0, default).
    block : int, optional
        In a user's state (`rotode.ODE`): the number of the quaternion block the event reads as
        its ``q`` (0 for the first of the ODE's ``quaternions``; default 0).  Only for an ODE.
    rate : int, optional
        In a user's state: the index in ``y`` where that block's body angular velocity starts
        (3 values), for the events that read ``w`` (``Component("w", i)``, `KineticEnergy`),
        which an ODE run requires.  Only for an ODE.

    Attributes
    ----------
    terminal : int
        0: record only; k > 0: stop at the k-th occurrence.
    direction : int
    needs_w : bool
        Whether ``evaluate`` reads the body angular velocity ``w`` (True unless a subclass
        sets it False in its constructor; False for `AxisAngle`, `RotationAngle`, the ``"q"``
        and ``"y"`` components and Python functions).  A kinematic run computes ``w`` from its
        rate source only for the events that need it.
    error : Exception or None
        The exception of a failed evaluation in compiled code, held until the caller raises it.

    n_bodies : int or None
        N for an event with per-body parameters (a batch of N bodies: body i reads row i,
        ``event[i]`` is its one-body event), else None (the same event for every body).

    Raises
    ------
    ValueError
        For a ``terminal`` that is not a bool or an integer in [0, 2**31 - 1], or a
        ``direction`` other than -1, 0, 1.

    See Also
    --------
    AxisAngle, Component, RotationAngle, KineticEnergy, PythonEvent, rotode.integrate

    Examples
    --------
    Stop a turn about z at a quarter turn:

    >>> import numpy as np, rotode
    >>> from rotode import events
    >>> quarter = events.RotationAngle([1, 0, 0, 0], np.pi / 2, terminal=True)
    >>> res = rotode.integrate([0.0, 0.0, 1.0], (0, 10), [1, 0, 0, 0], method="rkmk5",
    ...                        rtol=1e-10, atol=1e-12, events=quarter)
    >>> res.status, round(res.t_stop, 9)
    (1, 1.570796327)
    """

    # inspect.signature of the class (its constructor) and of an instance (its __call__),
    # read from the embedded signature lines (rotode/_signature.py)
    __signature__ = _ExtensionSignature()

    def __init__(self, terminal=False, direction=0, block=None, rate=None):
        self.error = None
        self.terminal = _terminal(terminal)
        self.direction = _direction(direction)
        self.needs_w = True
        self.n_bodies = None
        self.block = _place(block, "block")
        self.rate = _place(rate, "rate")

    cdef double evaluate(self, double t, const double* y, int k,
                         const double* w) noexcept nogil:
        return NAN

    cdef double evaluate_body(self, Py_ssize_t i, double t, const double* y, int k,
                              const double* w) noexcept nogil:
        return self.evaluate(t, y, k, w)

    def __call__(self, t, y, body=None):
        """g at time t and state y (``[q]`` or ``[q, w_body]``), as SciPy's events take it;
        ``body``: the index of the body of a per-body event (required there; SciPy never
        passes it)."""
        cdef cnp.ndarray a
        cdef const double* p = NULL
        cdef double n2, tt, g
        cdef double w[3]
        cdef int k = 0, i
        cdef Py_ssize_t b = 0
        if body is not None or self.n_bodies is not None:
            b = _body_index(self, body)
        if isinstance(t, float) and type(y) is np.ndarray:   # SciPy's calls: no conversion
            a = <cnp.ndarray>y
            k = <int>cnp.PyArray_DIM(a, 0) if cnp.PyArray_NDIM(a) == 1 else 0
            if ((k == 4 or k == 7) and cnp.PyArray_TYPE(a) == cnp.NPY_DOUBLE
                    and cnp.PyArray_IS_C_CONTIGUOUS(a)):
                p = <const double*>cnp.PyArray_DATA(a)
                n2 = p[0] * p[0] + p[1] * p[1] + p[2] * p[2] + p[3] * p[3]
                for i in range(4, k):
                    n2 = n2 + 0.0 * p[i]                       # (NaN for a non-finite w)
                if not (n2 > _TINY_NORM2 and isfinite(n2)):    # (the checks below say why)
                    p = NULL
        if p != NULL:
            tt = <double>t
        else:
            tt = as_real(t, "t")
            a = as_float_array(y, "y")                         # (C-contiguous float64)
            if (<object>a).shape not in ((4,), (7,)):
                raise ValueError(f"`y` must be a state [q] of shape (4,) or [q, w] of shape "
                                 f"(7,), got shape {(<object>a).shape}")
            check_nonzero_quaternions(a[None, :4], "y (quaternion part y[:4])")
            k = <int>a.shape[0]
            p = <const double*>cnp.PyArray_DATA(a)
        w[0] = p[4] if k == 7 else NAN
        w[1] = p[5] if k == 7 else NAN
        w[2] = p[6] if k == 7 else NAN
        g = self.evaluate_body(b, tt, p, k, w)
        if self.error is not None:
            err, self.error = self.error, None
            raise err
        if g != g:                                             # (NaN: say why)
            raise _nan_error(self, tt, k)
        return g

    def __repr__(self):
        return (f"{type(self).__name__}(terminal={self.terminal}, "
                f"direction={self.direction}{_placed(self)})")


def _place(value, name):
    """`block` or `rate` of an event: None or an integer >= 0."""
    if value is None:
        return None
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) \
            or value < 0:
        raise ValueError(f"`{name}` must be an integer >= 0 or None, got {_shown(value)}")
    return int(value)


def _placed(event):
    """The ``block``/``rate`` of an event's repr (empty when neither is set)."""
    return "".join(f", {name}={value}" for name, value in
                   (("block", event.block), ("rate", event.rate)) if value is not None)


def _body_index(event, body):
    """The body index ``body`` given to a call of `event` (per-body: required, in range)."""
    if event.n_bodies is None:
        if isinstance(body, (bool, np.bool_)) or not isinstance(body, (int, np.integer)) \
                or body < 0:
            raise TypeError(f"`body` must be an integer >= 0 (a body index), got "
                            f"{_shown(body)}")
        return int(body)          # (a subclass's `evaluate_body` may read it)
    if body is None:
        raise ValueError(f"{_event_repr(event)} holds per-body parameters for "
                         f"{event.n_bodies} bodies: call it with body=i, or take event[i]")
    return as_body_index(body, event.n_bodies, type(event).__name__)


def _restore(cls, params, terminal, direction, extra, block=None, rate=None):
    """A built-in event from `_Parameters.__reduce__`."""
    cdef _Parameters e = cls.__new__(cls)
    e.error = None
    e.terminal = terminal
    e.direction = direction
    e.block = block
    e.rate = rate
    e._set_params(params)
    e._set_extra(extra)
    return e


def _column_property(j, doc):
    """A read-only property of a built-in event: its parameter j (`_Parameters._column`)."""
    return property(lambda self: self._column(j), doc=doc)


# the sections that the built-in events' docstrings share (rotode._docfill)
_DOCS = {
    "options": """
        terminal, direction, block, rate : optional
            As for `Event` (default False, 0, and None: the run's own ``q`` and ``w``).""",
    "n_bodies": """
        n_bodies : int or None
            N for a per-body event, else None.""",
    "angle_event": """
        %(options)s

        Attributes
        ----------
        angle : float or ndarray
        %(n_bodies)s

        Raises
        ------
        ValueError""",
    "examples": """
        Examples
        --------
        >>> from rotode import events""",
}


cdef class _Parameters(Event):
    """Base of the built-in events: one body's parameters, or one row of them per body.

    A subclass lays its parameters out as `_width` doubles (``_p`` for one body, the rows of
    ``_table`` per body) and overrides ``evaluate_body``; ``event[i]`` is the one-body event of
    row i (the same bits), and a dask run hands each chunk of bodies its rows
    (`_chunk_split`, `_chunk_join`).
    """

    def _set_params(self, params):
        """Parameters of shape (_width,) (one body) or (N, _width) (per body)."""
        cdef int j
        a = np.ascontiguousarray(params, dtype=np.float64)
        self._width = <int>a.shape[a.ndim - 1]
        if self._width > EVENT_PARAMS:
            raise ValueError("too many parameters for a built-in event")
        if a.ndim == 1:
            for j in range(self._width):
                self._p[j] = a[j]
            self._rows = NULL
            self._table = None
            self.n_bodies = None
        else:
            for j in range(EVENT_PARAMS):
                self._p[j] = NAN
            self._table = a
            self._rows = <const double*>cnp.PyArray_DATA(<cnp.ndarray>a)
            self.n_bodies = int(a.shape[0])

    def _params(self):
        """The parameters: (_width,) or (N, _width) (a copy)."""
        if self._table is not None:
            return self._table.copy()
        return np.array([self._p[j] for j in range(self._width)])

    def _column(self, int j):
        """Parameter j: a float, or (N,) for per-body parameters."""
        if self._table is not None:
            return self._table[:, j].copy()
        return self._p[j]

    def _extra(self):
        """What a subclass holds besides its parameters (`Component`: its name and index)."""
        return ()

    def _set_extra(self, extra):
        self.needs_w = False

    def _set_rows(self, table, n):
        """The parameters from the rows ``table`` (m, _width): one per body for N = n bodies, or
        its row 0 for one body (n None); then what the class holds besides (`_set_extra`)."""
        self._set_params(table if n is not None else table[0])
        self._set_extra(self._extra())

    def _clone(self, params):
        """An event of this class with these parameters, the same terminal and direction."""
        return _restore(type(self), params, self.terminal, self.direction, self._extra(),
                        self.block, self.rate)

    def __getitem__(self, i):
        """Body ``i`` of a per-body event (``n_bodies`` is not None), as a one-body event (the
        same numbers as that body of a batched run)."""
        b = as_body_index(i, self.n_bodies, f"this {type(self).__name__}")
        return self._clone(self._table[b])

    def __reduce__(self):
        return (_restore, (type(self), self._params(), self.terminal, self.direction,
                           self._extra(), self.block, self.rate))

    def _chunk_split(self):
        """A per-body event in parts, for chunks of bodies (rotode/_dask.py): its per-body
        arrays (name -> (N, ...)) and a one-body template; ``template._chunk_join(blocks)``
        is the event of a chunk from NumPy blocks of the arrays."""
        return {"table": self._table}, self._clone(self._table[0])

    def _chunk_join(self, blocks):
        return self._clone(blocks["table"])

    cdef double evaluate(self, double t, const double* y, int k,
                         const double* w) noexcept nogil:
        if self._rows != NULL:          # (per body: which body's parameters is not said)
            return NAN
        return self.evaluate_body(0, t, y, k, w)

    def _per_body_repr(self):
        return (f"{type(self).__name__}(<per-body parameters of {self.n_bodies} bodies>, "
                f"terminal={self.terminal}, direction={self.direction}{_placed(self)})")


cdef inline double _unit_cos(const double* q, const double* b, const double* a) noexcept nogil:
    """(R(q) b) . a for unit b, a and any nonzero q (quat_rotate normalises)."""
    cdef double v[3]
    quat_rotate(q, b, v)
    return v[0] * a[0] + v[1] * a[1] + v[2] * a[2]


# (a filled-in docstring, whose first line is the signature embedsignature would write)
@cython.embedsignature(False)
cdef class AxisAngle(_Parameters):
    __doc__ = fill("AxisAngle(body_axis, world_axis, angle, terminal=False, direction=0, "
                   """block=None, rate=None)

    The angle between a body axis and a world axis crosses ``angle`` (radians).

    ``g = cos(angle) - (R(q) b) . a`` for unit ``b`` (body) and ``a`` (world): g increases with
    the angle, so ``direction=+1`` marks the axis moving away past ``angle`` (a top falling past
    a tilt), -1 coming back.

    Parameters
    ----------
    body_axis, world_axis : array_like, shape (3,) or (N, 3)
        Nonzero axes (normalised here); with a leading axis N, one per body.
    angle : float or array_like, shape (N,)
        In [0, pi]; one per body with a leading axis N.  Any parameter given per body makes a
        per-body event (``n_bodies`` = N) for runs of N bodies: body i of the batch reads row
        i (the others are shared).
    %(angle_event)s
        For a zero axis or an angle outside [0, pi], or per-body rows that do not agree in N.

    See Also
    --------
    RotationAngle

    %(examples)s
    >>> tilt = events.AxisAngle([0, 0, 1], [0, 0, 1], 0.5, terminal=True, direction=1)
    >>> round(tilt(0.0, [1.0, 0.0, 0.0, 0.0]), 6)     # upright: cos(0.5) - 1
    -0.122417
    """, _DOCS)

    def __init__(self, body_axis, world_axis, angle, terminal=False, direction=0, block=None,
                 rate=None):
        super().__init__(terminal, direction, block, rate)
        n, rows = _per_body({"body_axis": (body_axis, (3,)), "world_axis": (world_axis, (3,)),
                             "angle": (angle, ())})
        angles = _check_angles(rows["angle"], n)
        b = rows["body_axis"].reshape(-1, 3)
        a = rows["world_axis"].reshape(-1, 3)
        th = angles.reshape(-1)
        m = b.shape[0]
        table = np.empty((m, 8))
        cdef double[:, ::1] tv = table
        cdef const double[:, ::1] bv = b, av = a
        cdef const double[::1] thv = th
        cdef Py_ssize_t i
        for i in range(m):
            _unit_row(&bv[i, 0], 3, &tv[i, 0], "`body_axis` must be a nonzero vector", i, n)
            _unit_row(&av[i, 0], 3, &tv[i, 3], "`world_axis` must be a nonzero vector", i, n)
            tv[i, 6] = cos(thv[i])
            tv[i, 7] = thv[i]
        self._set_rows(table, n)

    angle = _column_property(7, "The angle (radians): a float, or (N,) per body.")

    cdef double evaluate_body(self, Py_ssize_t i, double t, const double* y, int k,
                              const double* w) noexcept nogil:
        cdef const double* p = event_params(self, i)
        return p[6] - _unit_cos(y, p, &p[3])

    def __repr__(self):
        if self.n_bodies is not None:
            return self._per_body_repr()
        return (f"AxisAngle(body_axis={[self._p[i] for i in range(3)]}, world_axis="
                f"{[self._p[3 + i] for i in range(3)]}, angle={self.angle!r}, "
                f"terminal={self.terminal}, direction={self.direction}{_placed(self)})")


# (a filled-in docstring, whose first line is the signature embedsignature would write)
@cython.embedsignature(False)
cdef class Component(_Parameters):
    __doc__ = fill("Component(name, index, value=0.0, terminal=False, direction=0, block=None, "
                   """rate=None)

    A component of the output crosses ``value``: ``g = component - value``.

    Parameters
    ----------
    name : {"q", "w", "y"}
        ``"q"``: the quaternion as integrated; ``"w"``: the BODY angular velocity; ``"y"``: any
        entry of the state row.
    index : int
        Index into it: 0-3 for ``"q"``, 0-2 for ``"w"``, any entry of the state for ``"y"``
        (checked against the state when the event runs).
    value : float or array_like, shape (N,), optional
        The level (default 0); with a leading axis N, one per body (a per-body event,
        ``n_bodies`` = N: body i of a batch of N reads row i).
    %(options)s

    Attributes
    ----------
    name : str
    index : int
    value : float or ndarray
    %(n_bodies)s

    Raises
    ------
    ValueError
        For an unknown ``name`` or an index out of range.

    See Also
    --------
    KineticEnergy

    %(examples)s
    >>> spin = events.Component("w", 2, value=0.5)
    >>> spin(0.0, [1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0])     # w_z - 0.5 on a state [q, w]
    0.5
    """, _DOCS)

    def __init__(self, name, index, value=0.0, terminal=False, direction=0, block=None,
                 rate=None):
        super().__init__(terminal, direction, block, rate)
        sizes = {"q": 4, "w": 3, "y": 2 ** 31 - 1}      # (y: checked against the state)
        as_choice(name, "name", ("q", "w", "y"))
        if isinstance(index, (bool, np.bool_)) or not isinstance(index, (int, np.integer)) \
                or not 0 <= index < sizes[name]:
            shown = repr(index) if isinstance(index, (int, float, str)) and \
                len(repr(index)) <= 40 else type(index).__name__
            raise ValueError(f"`index` of {name!r} must be an integer in [0, {sizes[name]}), "
                             f"got {shown}")
        if name == "y" and (block is not None or rate is not None):
            raise ValueError("`block` and `rate` place the events that read q or w; "
                             "Component('y', index) reads the state's own entry `index`")
        n, rows = _per_body({"value": (value, ())})
        self._set_extra((name, int(index)))
        self._set_params(rows["value"].reshape(-1, 1) if n is not None
                         else rows["value"].reshape(1))

    value = _column_property(0, "The value crossed: a float, or (N,) per body.")

    def _extra(self):
        return (self.name, self.index)

    def _set_extra(self, extra):
        self.name, self.index = extra
        self._which = ("q", "w", "y").index(self.name)
        self.needs_w = self.name == "w"

    cdef double evaluate_body(self, Py_ssize_t i, double t, const double* y, int k,
                              const double* w) noexcept nogil:
        cdef double v = event_params(self, i)[0]
        if self._which == 1:
            return w[self.index] - v
        if self.index >= k:
            return NAN
        return y[self.index] - v

    def __repr__(self):
        if self.n_bodies is not None:
            return (f"Component({self.name!r}, {self.index}, value=<{self.n_bodies} bodies>, "
                    f"terminal={self.terminal}, direction={self.direction}{_placed(self)})")
        return (f"Component({self.name!r}, {self.index}, value={self.value}, "
                f"terminal={self.terminal}, direction={self.direction}{_placed(self)})")


# (a filled-in docstring, whose first line is the signature embedsignature would write)
@cython.embedsignature(False)
cdef class RotationAngle(_Parameters):
    __doc__ = fill("RotationAngle(reference, angle, terminal=False, direction=0, block=None, "
                   """rate=None)

    The rotation angle from a reference orientation crosses ``angle`` (radians).

    Parameters
    ----------
    reference : array_like, shape (4,) or (N, 4), or Rotation
        The reference orientation ``r``: nonzero scalar-first quaternion(s) ``[w, x, y, z]``
        (normalised here), or a ``scipy.spatial.transform.Rotation`` (stacked: one per body).
        SciPy's default ``as_quat()`` is scalar LAST and would name another reference: pass
        the Rotation.
    angle : float or array_like, shape (N,)
        The angle in [0, pi]; one per body with a leading axis N.  A per-body reference or
        angle makes a per-body event (``n_bodies`` = N): body i of a batch reads row i.
    %(angle_event)s
        For a zero quaternion or an angle outside [0, pi].

    See Also
    --------
    AxisAngle, rotode.quaternion.angle_between

    Notes
    -----
    ``g = cos(angle/2) - |(r^* q)_w|`` for unit ``r`` and ``q``, increasing with the angle.

    Examples
    --------
    >>> import numpy as np
    >>> from rotode import events
    >>> quarter = events.RotationAngle([1, 0, 0, 0], np.pi / 2)
    >>> eighth_turn = [np.cos(np.pi / 8), 0.0, 0.0, np.sin(np.pi / 8)]
    >>> round(quarter(0.0, eighth_turn), 6)           # cos(pi/4) - cos(pi/8)
    -0.216773
    """, _DOCS)

    def __init__(self, reference, angle, terminal=False, direction=0, block=None,
                 rate=None):
        super().__init__(terminal, direction, block, rate)
        n, rows = _per_body({"reference": (rotation_quaternions(reference), (4,)),
                             "angle": (angle, ())})
        angles = _check_angles(rows["angle"], n)
        r = rows["reference"].reshape(-1, 4)
        th = angles.reshape(-1)
        m = r.shape[0]
        table = np.empty((m, 6))
        cdef double[:, ::1] tv = table
        cdef const double[:, ::1] rv = r
        cdef const double[::1] thv = th
        cdef Py_ssize_t i
        for i in range(m):
            _unit_row(&rv[i, 0], 4, &tv[i, 0], "`reference` must be a nonzero quaternion", i, n)
            tv[i, 4] = cos(0.5 * thv[i])
            tv[i, 5] = thv[i]
        self._set_rows(table, n)

    angle = _column_property(5, "The angle (radians): a float, or (N,) per body.")

    cdef double evaluate_body(self, Py_ssize_t i, double t, const double* y, int k,
                              const double* w) noexcept nogil:
        cdef const double* r = event_params(self, i)
        cdef double d = r[0] * y[0] + r[1] * y[1] + r[2] * y[2] + r[3] * y[3]     # (r^* q)_w
        cdef double n = sqrt(y[0] * y[0] + y[1] * y[1] + y[2] * y[2] + y[3] * y[3])
        return r[4] - fabs(d) / n

    def __repr__(self):
        if self.n_bodies is not None:
            return self._per_body_repr()
        return (f"RotationAngle(reference={[self._p[i] for i in range(4)]}, "
                f"angle={self.angle!r}, terminal={self.terminal}, "
                f"direction={self.direction}{_placed(self)})")


def _inertia_rows(inertia):
    """Inertia tensors (m, 3, 3) and N (None: one tensor) from (3,), (3, 3), (N, 3) moments or
    (N, 3, 3) tensors, checked as `rotode.RigidBody` checks them (the same messages)."""
    if is_dask(inertia):
        raise TypeError("`inertia` must be a NumPy array (a dask run splits an event's "
                        "per-body parameters over its chunks itself), got a dask array")
    arr = as_float_array(inertia, "inertia", (), finite=False)
    if arr.shape in ((3,), (3, 3)):
        return as_inertia(arr, "inertia")[None], None
    if arr.ndim == 2 and arr.shape[1] == 3 and arr.shape[0] > 0:
        arr = as_float_array(arr, "inertia")
        if not np.all(arr > 0):
            raise ValueError("`inertia` principal moments must be positive for every body")
        full = np.zeros((arr.shape[0], 3, 3))
        idx = np.arange(3)
        full[:, idx, idx] = arr
        return as_inertia(full, "inertia"), arr.shape[0]
    if arr.ndim == 3 and arr.shape[1:] == (3, 3) and arr.shape[0] > 0:
        return as_inertia(arr, "inertia"), arr.shape[0]
    raise ValueError(f"`inertia` must have shape (3,) (principal moments) or (3, 3), or per body "
                     f"(N, 3) or (N, 3, 3), got {arr.shape}")


# (a filled-in docstring, whose first line is the signature embedsignature would write)
@cython.embedsignature(False)
cdef class KineticEnergy(_Parameters):
    __doc__ = fill("KineticEnergy(inertia, value, terminal=False, direction=0, block=None, "
                   """rate=None)

    The rotational kinetic energy ``1/2 w . I w`` (body frame) crosses ``value``.

    Parameters
    ----------
    inertia : array_like, shape (3,), (3, 3), (N, 3) or (N, 3, 3)
        The body's inertia tensor about its pivot or centre of mass, as for
        `rotode.RigidBody`: the principal moments (each > 0) or a symmetric positive definite
        matrix, whose principal moments satisfy the triangle inequality; with a leading axis
        N, one per body.
    value : float or array_like, shape (N,)
        The energy level; one per body with a leading axis N.  Per-body rows make a per-body
        event (``n_bodies`` = N): body i of a batch reads row i.
    %(options)s

    Attributes
    ----------
    value : float or ndarray
    %(n_bodies)s

    Raises
    ------
    ValueError
        For an inertia that is not physical (naming ``inertia``) or of another shape.

    See Also
    --------
    Component, rotode.RigidBody.energy

    %(examples)s
    >>> energy = events.KineticEnergy([1.0, 1.0, 0.5], value=1.0)
    >>> energy(0.0, [1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0])   # 1/2 * 1 * 1^2 - 1
    -0.5
    """, _DOCS)

    def __init__(self, inertia, value, terminal=False, direction=0, block=None,
                 rate=None):
        super().__init__(terminal, direction, block, rate)
        tensors, n_in = _inertia_rows(inertia)
        n, rows = _per_body({"value": (value, ())})
        n = common_bodies({"inertia": n_in, "value": n})
        m = 1 if n is None else n
        table = np.empty((m, 10))
        table[:, :9] = np.broadcast_to(tensors.reshape(-1, 9), (m, 9))
        table[:, 9] = np.broadcast_to(rows["value"].reshape(-1), (m,))
        self._set_rows(table, n)

    def _set_extra(self, extra):
        self.needs_w = True

    value = _column_property(9, "The energy crossed: a float, or (N,) per body.")

    cdef double evaluate_body(self, Py_ssize_t b, double t, const double* y, int k,
                              const double* w) noexcept nogil:
        cdef const double* p = event_params(self, b)    # I (9, row major), value
        cdef double e = 0.0
        cdef int i, j
        for i in range(3):
            for j in range(3):
                e = e + w[i] * p[3 * i + j] * w[j]
        return 0.5 * e - p[9]

    def __repr__(self):
        if self.n_bodies is not None:
            return self._per_body_repr()
        m = np.array([self._p[i] for i in range(9)]).reshape(3, 3)
        shown = np.diag(m).tolist() if np.count_nonzero(m - np.diag(np.diag(m))) == 0 \
            else m.tolist()
        return (f"KineticEnergy({shown}, value={self.value!r}, terminal={self.terminal}, "
                f"direction={self.direction}{_placed(self)})")


def _accepts_body(function):
    """Whether ``function`` takes a keyword argument named ``body`` (inspected once)."""
    try:
        parameters = inspect.signature(function).parameters
    except (TypeError, ValueError):      # (no signature: a builtin, or an odd callable)
        return False
    p = parameters.get("body")
    return p is not None and p.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD,
                                        inspect.Parameter.KEYWORD_ONLY)


# (a filled-in docstring, whose first line is the signature embedsignature would write)
@cython.embedsignature(False)
cdef class PythonEvent(Event):
    __doc__ = fill("""PythonEvent(function, terminal=None, direction=None)

    A Python function ``g(t, y)`` with SciPy's ``terminal``/``direction`` attributes, called
    with the GIL (an exception in it stops the run and is re-raised in the caller).

    A function that takes a keyword argument ``body`` (``g(t, y, body=0)``, found once by its
    signature) is called with ``body=i``, the index of the body in the batch of
    `rotode.integrate` (0 for one body; a dask run passes the index in the whole batch), so
    that it can read per-body parameters; SciPy, which calls ``g(t, y)``, leaves the default.

    Parameters
    ----------
    function : callable
        ``g(t, y)`` on the state row ``y`` (``[q]`` or ``[q, w_body]``), returning a finite real
        number.  It is called with the GIL; an exception in it stops the run and is re-raised
        in the caller.
    terminal, direction : optional
        As for `Event`; None (default) reads the function's own attributes (False and 0 when it
        has none).

    %(callable_wrapper)s

    %(examples)s
    >>> def crossing(t, y):
    ...     return y[0] - 0.5
    >>> crossing.terminal = True
    >>> event = events.PythonEvent(crossing)
    >>> event.terminal, event(0.0, [1.0, 0.0, 0.0, 0.0])
    (1, 0.5)
    """, {**SHARED_DOCS, **_DOCS, "see_also": "as_events"})

    def __init__(self, function, terminal=None, direction=None):
        if not callable(function):
            raise TypeError(f"`function` must be callable g(t, y), got {type(function).__name__}")
        super().__init__(getattr(function, "terminal", False) if terminal is None else terminal,
                         getattr(function, "direction", 0) if direction is None else direction)
        self.function = function
        self.needs_w = False              # (it sees the row y only)
        self._takes_body = _accepts_body(function)
        self._offset = 0

    @property
    def takes_body(self):
        """Whether the function is called with ``body=i`` (it takes a keyword ``body``)."""
        return self._takes_body

    def _offset_by(self, Py_ssize_t offset):
        """This event for a chunk of bodies starting at body ``offset`` of the batch."""
        cdef PythonEvent e = PythonEvent(self.function, self.terminal, self.direction)
        e._offset = self._offset + offset
        return e

    cdef double evaluate(self, double t, const double* y, int k,
                         const double* w) noexcept nogil:
        return self.evaluate_body(0, t, y, k, w)

    cdef double evaluate_body(self, Py_ssize_t i, double t, const double* y, int k,
                              const double* w) noexcept nogil:
        cdef double g
        with gil:
            try:
                if self._takes_body:
                    r = self.function(t, _row_array(y, k), body=i + self._offset)
                else:
                    r = self.function(t, _row_array(y, k))
                g = _event_value(r, self.function, t)
                return g
            except BaseException as exc:      # Ctrl-C in user code too
                self.error = exc
                return NAN

    def __repr__(self):
        return f"PythonEvent({self.function!r}, terminal={self.terminal}, " \
               f"direction={self.direction})"


cdef object _row_array(const double* y, int k):
    """A new (k,) float64 array holding y[:k] (the row a Python event receives)."""
    cdef cnp.npy_intp n = k
    a = cnp.PyArray_EMPTY(1, &n, cnp.NPY_DOUBLE, 0)
    memcpy(cnp.PyArray_DATA(<cnp.ndarray>a), y, k * sizeof(double))
    return a


def _event_value(r, function, t):
    """The float an event function returned: a finite real scalar (a 0-d or one-element array
    included), else ValueError/TypeError naming the function."""
    if not isinstance(r, float):
        arr = np.asarray(r) if not isinstance(r, (str, bytes)) else np.asarray(None)
        if arr.dtype.kind not in "iuf" or arr.size != 1:
            kind = arr.dtype.kind
            if kind in "cb" and arr.size == 1:       # (a real number is asked for: say why)
                what = "a complex number" if kind == "c" else "a bool"
                shown = repr(r) if arr.ndim == 0 else ""
                what += f" {shown}" if 0 < len(shown) <= 40 else f" (an array of shape {arr.shape})"
            elif kind in "iufcb":
                what = f"an array of shape {arr.shape}"
            else:
                what = type(r).__name__
            raise TypeError(f"the event {function!r} must return a real number, got {what} "
                            f"at t = {t!r}")
        r = float(arr.reshape(-1)[0])
    if not isfinite(<double>r):
        value = "NaN" if r != r else repr(r)
        raise ValueError(f"the event {function!r} returned {value} at t = {t!r}")
    return r


def _compiled_base(cls):
    """The nearest compiled (cdef) class of ``cls`` (its own ``evaluate``, if any)."""
    for c in cls.__mro__:
        if "__pyx_vtable__" in vars(c):
            return c
    return Event


def _event_repr(event):
    try:
        return repr(event)
    except Exception:
        return f"<{type(event).__name__} object>"


def _nan_error(event, t, k):
    """The error of an event whose ``evaluate`` returned NaN without storing one, at time t on
    a row of k entries (k < 0: in rotode's driver, which supplies w)."""
    name = _event_repr(event)
    if _compiled_base(type(event)) is Event:
        return TypeError(f"the event {name} has no `evaluate`: rotode.events.Event is a base "
                         "class (derive a Cython class overriding `evaluate`, or give a Python "
                         "function g(t, y))")
    if isinstance(event, Component) and event.name == "y" and 0 <= k <= event.index:
        return ValueError(f"the event {name} reads y[{event.index}], out of range of the "
                          f"state y of {k} entries (t = {t!r})")
    if k == 4 and event.needs_w:
        return ValueError(f"the event {name} returned NaN at t = {t!r}: the state y = [q] of 4 "
                          "entries (quaternion kinematics) has no body angular velocity w, "
                          "which this event reads (needs_w); w is only in the rigid body's "
                          "state [q, w] of 7 entries. rotode.integrate and rotode.solve_ivp "
                          "supply w to the events of a kinematic run")
    return ValueError(f"the event {name} returned NaN at t = {t!r}")


@docfiller(_DOCS)
def as_events(events):
    """A tuple of `Event` from an event, a callable, or a sequence of them.

    Parameters
    ----------
    events : Event, callable, sequence of them, or None
        Compiled events are kept; a callable ``g(t, y)`` (or a Python subclass of an event that
        overrides ``__call__``) becomes a `PythonEvent` with its ``terminal`` and ``direction``.

    Returns
    -------
    tuple of Event
        Empty for None.

    Raises
    ------
    TypeError
        Naming the entry that is neither an event nor a callable, or an instance of the base
        class `Event` (which has no ``evaluate``).
    ValueError
        For a callable whose ``terminal`` or ``direction`` is invalid.

    See Also
    --------
    PythonEvent

    %(examples)s
    >>> found = events.as_events([events.Component("q", 0), lambda t, y: y[1]])
    >>> [type(e).__name__ for e in found]
    ['Component', 'PythonEvent']
    """
    if events is None:
        return ()
    if isinstance(events, Event) or callable(events):
        events = [events]
    try:
        items = list(events)
    except TypeError:
        raise TypeError(f"`events` must be an event, a callable or a sequence of them, got "
                        f"{type(events).__name__}") from None
    out = []
    for j, e in enumerate(items):
        if isinstance(e, Event) and not python_override(type(e), "__call__"):
            if _compiled_base(type(e)) is Event:
                raise TypeError(f"`events[{j}]` ({_event_repr(e)}) has no `evaluate`: "
                                "rotode.events.Event is a base class (derive a Cython class "
                                "overriding `evaluate`, override `__call__` in a Python "
                                "subclass, or give a Python function g(t, y))")
            out.append(e)
        elif callable(e):                 # (an Event whose __call__ is Python's: as SciPy)
            out.append(PythonEvent(
                e, _terminal(getattr(e, "terminal", None), f"events[{j}].terminal"),
                _direction(getattr(e, "direction", 0), f"events[{j}].direction")))
        else:
            raise TypeError(f"`events[{j}]` must be a rotode.events.Event or a callable "
                            f"g(t, y), got {type(e).__name__}")
    return tuple(out)


def __dir__():
    """The public names, ``__all__`` (not the imported helpers)."""
    return list(__all__)
