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
import numbers
import types

import numpy as np

from rotode._signature import ExtensionSignature as _ExtensionSignature
from rotode._validation import (TINY_NORM2, as_choice, as_float_array, as_inertia,
                                as_positive_scalar, as_real, check_nonzero_quaternions)

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


def _direction_of(v):
    """``v / |v|`` of a finite nonzero vector, scaled first (no overflow of |v|^2)."""
    top = float(np.abs(v).max())
    if not top > 0:
        return None
    u = v / top
    return u / np.linalg.norm(u)


def _unit(x, name):
    v = as_float_array(x, name, (3,), batch=False)
    u = _direction_of(v)
    if u is None:
        raise ValueError(f"`{name}` must be a nonzero vector")
    return u


cdef class Event:
    """Base class of the events ``g(t, y, w)``; subclasses override the nogil ``evaluate``.

    Parameters
    ----------
    terminal : bool or int, optional
        Stop at the first (True) or k-th occurrence; False (default) records only.
    direction : {-1, 0, 1}, optional
        Record only the crossings where g decreases (-1), increases (+1), or all (0, default).

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

    def __init__(self, terminal=False, direction=0):
        self.error = None
        self.terminal = _terminal(terminal)
        self.direction = _direction(direction)
        self.needs_w = True

    cdef double evaluate(self, double t, const double* y, int k,
                         const double* w) noexcept nogil:
        return NAN

    def __call__(self, t, y):
        """g at time t and state y (``[q]`` or ``[q, w_body]``), as SciPy's events take it."""
        cdef cnp.ndarray a
        cdef const double* p = NULL
        cdef double n2, tt, g
        cdef double w[3]
        cdef int k = 0, i
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
        g = self.evaluate(tt, p, k, w)
        if self.error is not None:
            err, self.error = self.error, None
            raise err
        if g != g:                                             # (NaN: say why)
            raise _nan_error(self, tt, k)
        return g

    def __repr__(self):
        return (f"{type(self).__name__}(terminal={self.terminal}, "
                f"direction={self.direction})")


cdef inline double _unit_cos(const double* q, const double* b, const double* a) noexcept nogil:
    """(R(q) b) . a for unit b, a and any nonzero q (quat_rotate normalises)."""
    cdef double v[3]
    quat_rotate(q, b, v)
    return v[0] * a[0] + v[1] * a[1] + v[2] * a[2]


cdef class AxisAngle(Event):
    """The angle between a body axis and a world axis crosses ``angle`` (radians).

    Parameters
    ----------
    body_axis : array_like, shape (3,)
        Nonzero axis ``b`` in body coordinates (normalised here).
    world_axis : array_like, shape (3,)
        Nonzero axis ``a`` in world coordinates (normalised here).
    angle : float
        The angle in [0, pi].
    terminal, direction : optional
        As for `Event` (default False and 0).

    Attributes
    ----------
    angle : float

    Raises
    ------
    ValueError
        For a zero axis or an angle outside [0, pi].

    See Also
    --------
    RotationAngle

    Notes
    -----
    ``g = cos(angle) - (R(q) b) . a``: g increases with the angle, so ``direction=+1`` marks the
    axis moving away past ``angle`` (a top falling past a tilt), -1 coming back.

    Examples
    --------
    >>> from rotode import events
    >>> tilt = events.AxisAngle([0, 0, 1], [0, 0, 1], 0.5, terminal=True, direction=1)
    >>> round(tilt(0.0, [1.0, 0.0, 0.0, 0.0]), 6)     # upright: cos(0.5) - 1
    -0.122417
    """

    def __init__(self, body_axis, world_axis, angle, terminal=False, direction=0):
        super().__init__(terminal, direction)
        b = _unit(body_axis, "body_axis")
        a = _unit(world_axis, "world_axis")
        angle = as_positive_scalar(angle, "angle", allow_zero=True)
        if angle > np.pi:
            raise ValueError(f"`angle` must be in [0, pi], got {angle!r}")
        for i in range(3):
            self._b[i] = b[i]
            self._a[i] = a[i]
        self._cos = cos(angle)
        self.angle = angle
        self.needs_w = False

    cdef double evaluate(self, double t, const double* y, int k,
                         const double* w) noexcept nogil:
        return self._cos - _unit_cos(y, self._b, self._a)

    def __repr__(self):
        return (f"AxisAngle(body_axis={[self._b[i] for i in range(3)]}, world_axis="
                f"{[self._a[i] for i in range(3)]}, angle={self.angle!r}, "
                f"terminal={self.terminal}, direction={self.direction})")


cdef class Component(Event):
    """A component of the output crosses ``value``: ``g = component - value``.

    Parameters
    ----------
    name : {"q", "w", "y"}
        ``"q"``: the quaternion as integrated; ``"w"``: the BODY angular velocity; ``"y"``: any
        entry of the state row.
    index : int
        Index into it: 0-3 for ``"q"``, 0-2 for ``"w"``, 0-12 for ``"y"``.
    value : float, optional
        The level (default 0).
    terminal, direction : optional
        As for `Event` (default False and 0).

    Attributes
    ----------
    name : str
    index : int
    value : float

    Raises
    ------
    ValueError
        For an unknown ``name`` or an index out of range.

    See Also
    --------
    KineticEnergy

    Examples
    --------
    >>> from rotode import events
    >>> spin = events.Component("w", 2, value=0.5)
    >>> spin(0.0, [1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0])     # w_z - 0.5 on a state [q, w]
    0.5
    """

    def __init__(self, name, index, value=0.0, terminal=False, direction=0):
        super().__init__(terminal, direction)
        sizes = {"q": 4, "w": 3, "y": 13}
        as_choice(name, "name", ("q", "w", "y"))
        if isinstance(index, (bool, np.bool_)) or not isinstance(index, (int, np.integer)) \
                or not 0 <= index < sizes[name]:
            shown = repr(index) if isinstance(index, (int, float, str)) and \
                len(repr(index)) <= 40 else type(index).__name__
            raise ValueError(f"`index` of {name!r} must be an integer in [0, {sizes[name]}), "
                             f"got {shown}")
        v = as_real(value, "value")
        self.name = name
        self.index = int(index)
        self.value = v
        self._which = ("q", "w", "y").index(name)
        self.needs_w = name == "w"

    cdef double evaluate(self, double t, const double* y, int k,
                         const double* w) noexcept nogil:
        if self._which == 1:
            return w[self.index] - self.value
        if self.index >= k:
            return NAN
        return y[self.index] - self.value

    def __repr__(self):
        return (f"Component({self.name!r}, {self.index}, value={self.value}, "
                f"terminal={self.terminal}, direction={self.direction})")


cdef class RotationAngle(Event):
    """The rotation angle from a reference orientation crosses ``angle`` (radians).

    Parameters
    ----------
    reference : array_like, shape (4,)
        The reference orientation ``r``, a nonzero quaternion (normalised here).
    angle : float
        The angle in [0, pi].
    terminal, direction : optional
        As for `Event` (default False and 0).

    Attributes
    ----------
    angle : float

    Raises
    ------
    ValueError
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
    """

    def __init__(self, reference, angle, terminal=False, direction=0):
        super().__init__(terminal, direction)
        r = as_float_array(reference, "reference", (4,), batch=False)
        u = _direction_of(r)
        if u is None:
            raise ValueError("`reference` must be a nonzero quaternion")
        angle = as_positive_scalar(angle, "angle", allow_zero=True)
        if angle > np.pi:
            raise ValueError(f"`angle` must be in [0, pi], got {angle!r}")
        for i in range(4):
            self._r[i] = u[i]
        self._cos_half = cos(0.5 * angle)
        self.angle = angle
        self.needs_w = False

    cdef double evaluate(self, double t, const double* y, int k,
                         const double* w) noexcept nogil:
        cdef double d = (self._r[0] * y[0] + self._r[1] * y[1] + self._r[2] * y[2]
                         + self._r[3] * y[3])     # (r^* q)_w
        cdef double n = sqrt(y[0] * y[0] + y[1] * y[1] + y[2] * y[2] + y[3] * y[3])
        return self._cos_half - fabs(d) / n

    def __repr__(self):
        return (f"RotationAngle(reference={[self._r[i] for i in range(4)]}, "
                f"angle={self.angle!r}, terminal={self.terminal}, "
                f"direction={self.direction})")


cdef class KineticEnergy(Event):
    """The rotational kinetic energy ``1/2 w . I w`` (body frame) crosses ``value``.

    Parameters
    ----------
    inertia : array_like, shape (3,) or (3, 3)
        The body's inertia tensor about its pivot or centre of mass, as for
        `rotode.RigidBody`: the principal moments (each > 0) or a symmetric positive definite
        matrix, whose principal moments satisfy the triangle inequality.
    value : float
        The energy level.
    terminal, direction : optional
        As for `Event` (default False and 0).

    Attributes
    ----------
    value : float

    Raises
    ------
    ValueError
        For an inertia that is not physical (naming ``inertia``) or of another shape.

    See Also
    --------
    Component, rotode.RigidBody.energy

    Examples
    --------
    >>> from rotode import events
    >>> energy = events.KineticEnergy([1.0, 1.0, 0.5], value=1.0)
    >>> energy(0.0, [1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0])   # 1/2 * 1 * 1^2 - 1
    -0.5
    """

    def __init__(self, inertia, value, terminal=False, direction=0):
        super().__init__(terminal, direction)
        inertia = as_inertia(inertia, "inertia")     # (RigidBody's check: the same message)
        if inertia.shape != (3, 3):
            raise ValueError(f"`inertia` must have shape (3,) (principal moments) or (3, 3), "
                             f"got {inertia.shape}")
        v = as_real(value, "value")
        for i in range(9):
            self._I[i] = inertia.reshape(-1)[i]
        self.value = v

    cdef double evaluate(self, double t, const double* y, int k,
                         const double* w) noexcept nogil:
        cdef double e = 0.0
        cdef int i, j
        for i in range(3):
            for j in range(3):
                e = e + w[i] * self._I[3 * i + j] * w[j]
        return 0.5 * e - self.value

    def __repr__(self):
        m = np.array([self._I[i] for i in range(9)]).reshape(3, 3)
        shown = np.diag(m).tolist() if np.count_nonzero(m - np.diag(np.diag(m))) == 0 \
            else m.tolist()
        return (f"KineticEnergy({shown}, value={self.value!r}, terminal={self.terminal}, "
                f"direction={self.direction})")


cdef class PythonEvent(Event):
    """A Python function ``g(t, y)`` with SciPy's ``terminal``/``direction`` attributes.

    Parameters
    ----------
    function : callable
        ``g(t, y)`` on the state row ``y`` (``[q]`` or ``[q, w_body]``), returning a finite real
        number.  It is called with the GIL; an exception in it stops the run and is re-raised
        in the caller.
    terminal, direction : optional
        As for `Event`; None (default) reads the function's own attributes (False and 0 when it
        has none).

    Attributes
    ----------
    function : callable

    Raises
    ------
    TypeError
        If ``function`` is not callable.

    See Also
    --------
    as_events

    Examples
    --------
    >>> from rotode import events
    >>> def crossing(t, y):
    ...     return y[0] - 0.5
    >>> crossing.terminal = True
    >>> event = events.PythonEvent(crossing)
    >>> event.terminal, event(0.0, [1.0, 0.0, 0.0, 0.0])
    (1, 0.5)
    """

    def __init__(self, function, terminal=None, direction=None):
        if not callable(function):
            raise TypeError(f"`function` must be callable g(t, y), got {type(function).__name__}")
        super().__init__(getattr(function, "terminal", False) if terminal is None else terminal,
                         getattr(function, "direction", 0) if direction is None else direction)
        self.function = function
        self.needs_w = False              # (it sees the row y only)

    cdef double evaluate(self, double t, const double* y, int k,
                         const double* w) noexcept nogil:
        cdef double g
        with gil:
            try:
                g = _event_value(self.function(t, _row_array(y, k)), self.function, t)
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


def _python_call(cls):
    """Whether ``cls`` (a subclass of `Event`) overrides ``__call__`` in Python."""
    for c in cls.__mro__:
        if "__call__" in vars(c):
            return not isinstance(vars(c)["__call__"], types.WrapperDescriptorType)
    return False


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

    Examples
    --------
    >>> from rotode import events
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
        if isinstance(e, Event) and not _python_call(type(e)):
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
