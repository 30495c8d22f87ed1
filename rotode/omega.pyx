"""Angular-velocity sources w(t) for the kinematic right-hand sides.

A source is a ``cdef`` object whose C method ``evaluate(t, w)`` fills ``w[3]`` without the GIL
(``evaluate_rate(t, dw)`` gives w'(t) for steppers that need it).  The frame of w is set by the
right-hand side that uses the source (``frame="body"`` or ``"world"``).

- `Constant` -- a constant vector;
- `Sinusoid` -- ``w_i(t) = amplitude_i sin(rate t + phase_i)``, the benchmark of Rucker 2018
  (eq. 29: amplitude pi/2, rate 2 pi/10, phases 0, 2 pi/3, 4 pi/3);
- `Samples` -- gyroscope samples interpolated in C (piecewise linear, or a not-a-knot cubic
  spline whose coefficients are computed once at construction);
- `Callable` -- any Python function ``w(t)`` (slow path: the GIL is taken for every call).

`as_source` turns an array (-> `Constant`) or a callable (-> `Callable`) into a source.

Cython users subclass `AngularVelocity` (``from rotode.omega cimport AngularVelocity``) and
override ``cdef int evaluate(self, double t, double* w) noexcept nogil`` (return 0 on success).
A Python subclass of any source that overrides ``__call__`` (or ``derivative``) is honoured:
`as_source` wraps it in a `Callable`, so every right-hand side and stepper calls its Python
``__call__`` for w(t) (with the GIL, as for any Python function) and its ``derivative`` for
w'(t) where that is overridden too (else w' is unavailable, as for a Python function), never
the compiled ``evaluate`` of its base class.
"""

import numpy as np
from scipy.interpolate import CubicSpline

from rotode._docfill import SHARED_DOCS, fill
from rotode._signature import ExtensionSignature as _ExtensionSignature
from rotode._validation import (as_choice, as_float_array, as_real, call_vector,
                                python_override)

cimport cython
from libc.math cimport sin, cos
from rotode._callback cimport call_vector3

__all__ = ["AngularVelocity", "Constant", "Sinusoid", "Samples", "Callable", "as_source"]


cdef class AngularVelocity:
    """Base class of angular-velocity sources ``w(t)`` (Cython subclasses override ``evaluate``).

    Calling a source from Python, ``source(t)``, returns w(t) as a NumPy array of shape (3,);
    ``source.derivative(t)`` returns w'(t) where the source provides it.  The base class takes no
    constructor arguments; the compiled ``evaluate`` of a subclass fills ``w[3]`` without the GIL.

    Attributes
    ----------
    error : Exception or None
        The exception of a failed evaluation in compiled code, held until the caller (a
        right-hand side or a stepper) raises it; None otherwise.

    See Also
    --------
    Constant, Sinusoid, Samples, Callable, as_source

    Examples
    --------
    >>> from rotode import omega
    >>> source = omega.Sinusoid(amplitude=1.0, rate=2.0)
    >>> isinstance(source, omega.AngularVelocity), source(0.0).tolist()
    (True, [0.0, 0.0, 0.0])
    >>> source.derivative(0.0).tolist()          # w'(0) = amplitude * rate
    [2.0, 2.0, 2.0]
    """

    # inspect.signature of the class (its constructor) and of an instance (its __call__),
    # read from the embedded signature lines (rotode/_signature.py)
    __signature__ = _ExtensionSignature()

    cdef int evaluate(self, double t, double* w) noexcept nogil:
        with gil:
            self.error = NotImplementedError(
                f"{type(self).__name__} does not implement `evaluate`")
        return SOURCE_ERROR

    cdef int evaluate_rate(self, double t, double* dw) noexcept nogil:
        return SOURCE_UNAVAILABLE

    cdef int evaluate_before(self, double t, double* w) noexcept nogil:
        return self.evaluate(t, w)

    cdef int evaluate_rate_before(self, double t, double* dw) noexcept nogil:
        return self.evaluate_rate(t, dw)

    def _check(self, int status, str what):
        if status == SOURCE_OK:
            return
        if status == SOURCE_UNAVAILABLE:
            raise NotImplementedError(f"{type(self).__name__} does not provide {what}")
        err, self.error = self.error, None
        if err is None:
            err = RuntimeError(f"{type(self).__name__} failed with status {status}")
        raise err

    def __call__(self, t):
        """w(t) as an array of shape (3,) (rad/s, in the frame of the right-hand side using it)."""
        cdef double tt = as_real(t, "t")
        out = np.empty(3)
        cdef double[::1] o = out
        self._check(self.evaluate(tt, &o[0]), "w(t)")
        return out

    def derivative(self, t):
        """w'(t) as an array of shape (3,) (raises NotImplementedError if unavailable)."""
        cdef double tt = as_real(t, "t")
        out = np.empty(3)
        cdef double[::1] o = out
        self._check(self.evaluate_rate(tt, &o[0]), "w'(t)")
        return out


cdef class Constant(AngularVelocity):
    """Constant angular velocity.

    Parameters
    ----------
    w : array_like, shape (3,)
        The angular velocity in rad/s (its frame is set by the right-hand side using it).

    Attributes
    ----------
    w : ndarray, shape (3,)
        The angular velocity (a copy).

    See Also
    --------
    as_source, Sinusoid

    Examples
    --------
    >>> from rotode import omega
    >>> source = omega.Constant([0.0, 0.0, 1.0])
    >>> source(2.5), source.derivative(2.5)
    (array([0., 0., 1.]), array([0., 0., 0.]))
    """

    def __init__(self, w):
        w = as_float_array(w, "w", (3,), batch=False)
        for i in range(3):
            self._w[i] = w[i]

    @property
    def w(self):
        return np.array([self._w[0], self._w[1], self._w[2]])

    cdef int evaluate(self, double t, double* w) noexcept nogil:
        w[0] = self._w[0]
        w[1] = self._w[1]
        w[2] = self._w[2]
        return SOURCE_OK

    cdef int evaluate_rate(self, double t, double* dw) noexcept nogil:
        dw[0] = 0.0
        dw[1] = 0.0
        dw[2] = 0.0
        return SOURCE_OK

    def __repr__(self):
        return f"Constant(w={self.w.tolist()})"


def _vector3(x, name):
    """A scalar broadcast to 3 components, or an array of shape (3,)."""
    arr = as_float_array(x, name)
    if arr.ndim == 0:
        return np.broadcast_to(arr, (3,))
    if arr.shape != (3,):
        raise ValueError(f"`{name}` must be a scalar or have shape (3,), got {arr.shape}")
    return arr


cdef class Sinusoid(AngularVelocity):
    """``w_i(t) = amplitude_i * sin(rate * t + phase_i)`` (Rucker 2018 eq. 29).

    Parameters
    ----------
    amplitude : float or array_like, shape (3,)
        Amplitudes in rad/s (a scalar applies to all three components).
    rate : float
        Angular frequency in rad/s.
    phase : float or array_like, shape (3,), optional
        Phases in rad (default 0).

    Attributes
    ----------
    amplitude, phase : ndarray, shape (3,)
    rate : float

    Raises
    ------
    ValueError
        For shapes other than scalars or (3,), non-finite values, or ``amplitude * rate``
        overflowing.

    See Also
    --------
    Samples, Constant

    References
    ----------
    .. [1] C. Rucker, "Integrating Rotations using Non-Unit Quaternions", IEEE Robotics and
       Automation Letters 3(4), 2018, eq. 29.

    Examples
    --------
    The benchmark of Rucker 2018 (a = pi/2, b = 2 pi/10):

    >>> from math import pi
    >>> from rotode import omega
    >>> w = omega.Sinusoid(amplitude=pi/2, rate=2*pi/10, phase=[0, 2*pi/3, 4*pi/3])
    >>> w(0.0).round(6).tolist()
    [0.0, 1.36035, -1.36035]
    """

    def __init__(self, amplitude, rate, phase=0.0):
        a = _vector3(amplitude, "amplitude")
        p = _vector3(phase, "phase")
        r = as_float_array(rate, "rate", (), batch=False)
        self._rate = float(r.reshape(-1)[0])
        with np.errstate(over="ignore"):
            if not np.isfinite(a * self._rate).all():
                raise ValueError(f"`amplitude` times `rate` must be finite (w'(t) overflows), "
                                 f"got amplitude {a.tolist()} and rate {self._rate!r}")
        for i in range(3):
            self._amplitude[i] = a[i]
            self._phase[i] = p[i]

    @property
    def amplitude(self):
        return np.array([self._amplitude[i] for i in range(3)])

    @property
    def rate(self):
        return self._rate

    @property
    def phase(self):
        return np.array([self._phase[i] for i in range(3)])

    cdef int evaluate(self, double t, double* w) noexcept nogil:
        cdef int i
        for i in range(3):
            w[i] = self._amplitude[i] * sin(self._rate * t + self._phase[i])
        return SOURCE_OK

    cdef int evaluate_rate(self, double t, double* dw) noexcept nogil:
        cdef int i
        for i in range(3):
            dw[i] = self._amplitude[i] * self._rate * cos(self._rate * t + self._phase[i])
        return SOURCE_OK

    def __repr__(self):
        return (f"Sinusoid(amplitude={self.amplitude.tolist()}, rate={self._rate!r}, "
                f"phase={self.phase.tolist()})")


cdef class Samples(AngularVelocity):
    """Sampled angular velocity (gyroscope data), interpolated in C.

    Parameters
    ----------
    t : array_like, shape (m,)
        Strictly increasing sample times, m >= 2 (m >= 4 for ``kind="cubic"``).
    w : array_like, shape (m, 3)
        Samples of w(t) in rad/s.
    kind : {"linear", "cubic", "previous"}, optional
        Piecewise-linear interpolation (default; O(h^2) error), the not-a-knot cubic spline of
        ``scipy.interpolate.CubicSpline`` (O(h^4) error, also near the ends, unlike the natural
        spline whose zero end curvature costs O(h^2) there), or a zero-order hold
        ("previous": each sample holds until the next one, as a gyroscope that reports the
        rate over the interval it starts; ``scipy.interpolate.interp1d(kind="previous")``).
        Coefficients are computed once at construction; evaluation is a binary search and a
        Horner step in C.
    offset : float, optional
        Clock offset of the gyroscope (default 0): its timestamps ``t`` read ``t_ref + offset``
        on the reference clock's time ``t_ref``, so ``w(t_ref)`` is the samples' value at
        ``t_ref + offset`` (a gyroscope whose clock runs 5 ms ahead: ``offset=0.005``).
    bias : float or array_like, shape (3,), optional
        Gyroscope bias in rad/s, subtracted from every sample (default 0).
    scale : float or array_like, shape (3,), optional
        Per-axis scale factor, applied after the bias (default 1): the rate is
        ``scale * (interp(w)(t) - bias)``, componentwise.  Both are parameters that
        ``rotode.integrate(..., sensitivity=["bias", "scale"])`` differentiates
        (docs/sensitivity.md).

    Attributes
    ----------
    t, w : ndarray
        Read-only copies of the samples.
    kind : str
    offset : float
    bias, scale : ndarray, shape (3,)
    times : ndarray, shape (m,)
        The sample times on the reference clock, ``t - offset``.

    Raises
    ------
    ValueError
        For times that are not strictly increasing, too few samples, shapes that do not match,
        non-finite values or interpolation slopes that overflow.

    See Also
    --------
    rotode.integrate : ``dt="samples"`` steps on the sample times.

    Notes
    -----
    The bias and scale are applied to the samples before the interpolant is built: every
    interpolant here is linear in the samples and reproduces constants, so this is the
    corrected interpolant ``scale * (interp(w) - bias)`` (to round-off), and a corrected
    recording costs nothing per evaluation.

    Evaluating outside ``[t[0], t[-1]] - offset`` is an error (no silent extrapolation).  The
    ``source(t)`` and ``source.derivative(t)`` at a sample time give the interval to its right
    (the last sample: of the last interval; the derivative of "previous" is zero).  The fixed-step
    kinematic methods read each step's own side of a sample time: a step that ends on one
    (forwards) or starts on one (backwards) reads the interval to its left, so a zero-order
    hold integrated with ``dt="samples"`` by ``lie_euler``, ``exp2``, ``magnus_ca``, ``cg*`` or
    a Magnus method is the product of the per-sample exponentials in either direction.
    ``rotode.integrate(..., dt="samples")`` steps exactly on the sample times, and adaptive
    ``magnus6``/``magnus8`` never step across one.

    Examples
    --------
    >>> import numpy as np
    >>> from rotode import omega
    >>> t = np.linspace(0.0, 1.0, 5)
    >>> gyro = omega.Samples(t, np.column_stack([t, 0 * t, 0 * t]))   # w_x(t) = t
    >>> gyro(0.3), gyro.derivative(0.3)
    (array([0.3, 0. , 0. ]), array([1., 0., 0.]))
    """

    def __init__(self, t, w, kind="linear", offset=0.0, bias=0.0, scale=1.0):
        t = as_float_array(t, "t", (), batch=True)
        if t.ndim != 1 or t.shape[0] < 2:
            raise ValueError(f"`t` must have shape (m,) with m >= 2, got {t.shape}")
        w = as_float_array(w, "w", (3,))
        if w.shape != (t.shape[0], 3):
            raise ValueError(f"`w` must have shape (m, 3) = ({t.shape[0]}, 3) to match `t`, "
                             f"got {w.shape}")
        if not np.all(np.diff(t) > 0):
            raise ValueError("`t` must be strictly increasing")
        as_choice(kind, "kind", ("linear", "cubic", "previous"))
        offset = as_real(offset, "offset")
        bias = np.array(_vector3(bias, "bias"))
        scale = np.array(_vector3(scale, "scale"))
        m = t.shape[0]
        with np.errstate(over="ignore", invalid="ignore"):
            wc = w if not (bias.any() or (scale != 1.0).any()) else scale * (w - bias)
            slopes = np.diff(wc, axis=0) / np.diff(t)[:, None]
            shifted = t - offset
        if not (np.isfinite(slopes).all() and np.isfinite(shifted).all()
                and np.isfinite(wc).all()):
            raise ValueError("`w` and `t` must give finite interpolation slopes and times "
                             "(differences of samples overflow or are not representable)")
        coef = np.zeros((m - 1, 4, 3))
        if kind == "previous":
            coef[:, 3, :] = wc[:m - 1]
        elif kind == "linear":
            coef[:, 2, :] = slopes
            coef[:, 3, :] = wc[:m - 1]
        else:
            if m < 4:
                raise ValueError(f"`kind='cubic'` needs at least 4 samples, got {m}")
            with np.errstate(over="ignore", invalid="ignore"):
                coef[...] = np.moveaxis(CubicSpline(t, wc, bc_type="not-a-knot").c, 0, 1)
            if not np.isfinite(coef).all():
                raise ValueError("`w` and `t` must give a finite cubic spline (its coefficients "
                                 "overflow)")
        # private read-only copies: changing the caller's arrays later changes nothing here
        t, w = t.copy(), w.copy()
        self.offset = float(offset)
        shifted = t - self.offset if self.offset != 0.0 else t
        t.flags.writeable = w.flags.writeable = coef.flags.writeable = False
        shifted.flags.writeable = bias.flags.writeable = scale.flags.writeable = False
        self.t = t
        self.w = w
        self.bias = bias
        self.scale = scale
        self.kind = kind
        self._hold = kind == "previous"
        for i in range(3):
            self._wlast[i] = wc[m - 1, i]
        self._t = shifted
        self._coef = coef

    @property
    def times(self):
        """The sample times on the reference clock, ``t - offset`` (``dt="samples"`` steps
        on them).
        """
        return np.asarray(self._t)

    def __reduce__(self):
        return Samples, (self.t, self.w, self.kind, self.offset, self.bias, self.scale)

    cdef int locate(self, double t) noexcept nogil:
        """Index i of the interval [t_i, t_i+1) holding t (-1 outside the samples).

        A pure function of t (no search hint kept between calls, so results never depend on
        call history or threads): at a sample time t_k the interval to its right is used
        (the last sample belongs to the last interval), so the derivative of ``kind="linear"``
        there is the right-hand slope."""
        cdef const double[::1] ts = self._t
        cdef int n = ts.shape[0], lo, hi, mid
        if not (ts[0] <= t <= ts[n - 1]):
            return -1
        lo = 0
        hi = n - 1
        while hi - lo > 1:        # invariant ts[lo] <= t <= ts[hi]
            mid = (lo + hi) // 2
            if ts[mid] <= t:
                lo = mid
            else:
                hi = mid
        return lo

    cdef int _outside(self, double t) noexcept nogil:
        with gil:
            self.error = ValueError(
                f"Samples: t = {t!r} is outside the sampled interval "
                f"[{self.t[0]!r}, {self.t[self.t.shape[0] - 1]!r}] (no extrapolation)")
        return SOURCE_ERROR

    cdef void _value(self, int i, double t, double* w) noexcept nogil:
        """The interpolant of interval i at t (OUT: w[3])."""
        cdef double s = t - self._t[i]
        cdef int k
        for k in range(3):
            w[k] = ((self._coef[i, 0, k] * s + self._coef[i, 1, k]) * s
                    + self._coef[i, 2, k]) * s + self._coef[i, 3, k]

    cdef void _slope(self, int i, double t, double* dw) noexcept nogil:
        """The derivative of the interpolant of interval i at t (OUT: dw[3])."""
        cdef double s = t - self._t[i]
        cdef int k
        for k in range(3):
            dw[k] = (3.0 * self._coef[i, 0, k] * s + 2.0 * self._coef[i, 1, k]) * s \
                + self._coef[i, 2, k]

    cdef int evaluate(self, double t, double* w) noexcept nogil:
        cdef int i = self.locate(t), k, m = self._t.shape[0]
        if i < 0:
            return self._outside(t)
        if self._hold and t == self._t[m - 1]:       # the last sample holds from its time on
            for k in range(3):
                w[k] = self._wlast[k]
            return SOURCE_OK
        self._value(i, t, w)
        return SOURCE_OK

    cdef int evaluate_rate(self, double t, double* dw) noexcept nogil:
        cdef int i = self.locate(t)
        if i < 0:
            return self._outside(t)
        self._slope(i, t, dw)
        return SOURCE_OK

    cdef int evaluate_before(self, double t, double* w) noexcept nogil:
        """w(t-): at a sample time the interval to its left (a zero-order hold's previous
        sample), the last sample time included."""
        cdef int i = self.locate(t)
        if i < 0:
            return self._outside(t)
        if i > 0 and t == self._t[i]:
            i -= 1
        self._value(i, t, w)
        return SOURCE_OK

    cdef int evaluate_rate_before(self, double t, double* dw) noexcept nogil:
        """w'(t-): at a sample time the slope of the interval to its left."""
        cdef int i = self.locate(t)
        if i < 0:
            return self._outside(t)
        if i > 0 and t == self._t[i]:
            i -= 1
        self._slope(i, t, dw)
        return SOURCE_OK

    def __repr__(self):
        return f"Samples(<{self.t.shape[0]} samples>, kind={self.kind!r})"


# (a filled-in docstring, whose first line is the signature embedsignature would write)
@cython.embedsignature(False)
cdef class Callable(AngularVelocity):
    __doc__ = fill("""Callable(function)

    Wrap a Python function ``w(t) -> array_like of shape (3,)``.

    Parameters
    ----------
    function : callable
        ``w(t)``, returning three finite real numbers (rad/s).

    %(callable_wrapper)s

    Notes
    -----
    Every evaluation takes the GIL and checks the result's shape and finiteness (complex
    values are a TypeError naming the function); a wrong result or an exception inside the
    function is re-raised by the caller (the right-hand side).  ``evaluate_rate`` is not
    available (steppers needing w' must use a C source), except for a wrapped Python subclass
    of a source that overrides ``derivative`` (`as_source`).

    Examples
    --------
    >>> from rotode import omega
    >>> source = omega.Callable(lambda t: [0.0, 0.0, t])
    >>> source(2.0)
    array([0., 0., 2.])
    """, {**SHARED_DOCS, "see_also": "as_source"})

    def __init__(self, function):
        if not callable(function):
            raise TypeError("omega.Callable: `function` must be callable w(t), got "
                            f"{type(function).__name__}")
        self.function = function
        self._rate = None
        self._has_rate = False

    cdef int evaluate(self, double t, double* w) noexcept nogil:
        with gil:
            err = call_vector3(call_vector, self.function, "angular-velocity callable", t, (),
                               w)
            if err is None:
                return SOURCE_OK
            self.error = err
            return SOURCE_ERROR

    cdef int evaluate_rate(self, double t, double* dw) noexcept nogil:
        if not self._has_rate:
            return SOURCE_UNAVAILABLE
        with gil:
            err = call_vector3(call_vector, self._rate, "angular-velocity derivative", t, (),
                               dw)
            if err is None:
                return SOURCE_OK
            self.error = err
            return SOURCE_ERROR

    def __repr__(self):
        return f"Callable({self.function!r})"


def as_source(omega, name="omega"):
    """An `AngularVelocity` from a source, an array of shape (3,) or a callable ``w(t)``.

    Parameters
    ----------
    omega : AngularVelocity, array_like of shape (3,) or callable
        A source is returned as it is; an array becomes a `Constant`, a callable a `Callable`.
        A Python subclass of a source that overrides ``__call__`` or ``derivative`` becomes a
        `Callable` of it (its Python methods give w and w', not its base's compiled
        ``evaluate``).
    name : str, optional
        The argument's name in error messages (default "omega").

    Returns
    -------
    AngularVelocity

    Raises
    ------
    TypeError
        For None, a string or another object that is none of the above.
    ValueError
        For an array that does not have shape (3,) or is not finite.

    See Also
    --------
    Constant, Callable

    Examples
    --------
    >>> from rotode import omega
    >>> omega.as_source([0.0, 0.0, 1.0])
    Constant(w=[0.0, 0.0, 1.0])
    """
    cdef Callable wrapped
    if isinstance(omega, AngularVelocity):
        cls = type(omega)
        if not (python_override(cls, "__call__") or python_override(cls, "derivative")):
            return omega
        wrapped = Callable(omega)
        if python_override(cls, "derivative"):
            wrapped._rate = omega.derivative
            wrapped._has_rate = True
        return wrapped
    if callable(omega):
        return Callable(omega)
    if isinstance(omega, (str, bytes)) or omega is None:
        raise TypeError(f"`{name}` must be an AngularVelocity source, an array of shape (3,) "
                        f"or a callable w(t), got {type(omega).__name__}")
    return Constant(as_float_array(omega, name, (3,), batch=False))


def __dir__():
    """The public names, ``__all__`` (not the imported helpers)."""
    return list(__all__)
