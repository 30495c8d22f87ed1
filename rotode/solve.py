"""Facade helpers around ``solve_ivp``: states from rotations, solutions to rotations, and
re-anchored exp-coordinates.

- `state` builds a quaternion state ``[q, w_body, ...]`` from a ``scipy.spatial.transform.Rotation``
  (or scalar-first quaternions) and the body angular velocity.
- `as_rotation` turns a ``solve_ivp`` solution, a `rotode.integrate` result (or raw states) of
  any rotode right-hand side into a ``scipy.spatial.transform.Rotation``.
- `solve_expcoord` integrates an exponential-coordinate right-hand side over arbitrarily many
  revolutions by re-anchoring the chart whenever |v| reaches pi (the chart itself is singular
  at |v| = 2 pi, Mizerski 2020 sec. 1 and docs/references.md).
"""
from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any

import numpy as np
from scipy.integrate import solve_ivp
from scipy.optimize import OptimizeResult
from scipy.spatial.transform import Rotation

from rotode._results import StateViews, rotations
from rotode._validation import (
    as_choice,
    as_float_array,
    as_positive_scalar,
    as_quaternions,
    check_nonzero_quaternions,
    is_dask,
)
from rotode.rhs import ExpCoordKinematics, ExpCoordRigidBody

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

__all__ = ["state", "as_rotation", "solve_expcoord"]

_KINDS = ("quaternion", "expcoord", "matrix", "euler_xyz")
_AUTO = {4: "quaternion", 7: "quaternion", 8: "quaternion", 3: "expcoord", 6: "expcoord",
         9: "matrix", 12: "matrix"}


def state(orientation: Any, w_body: ArrayLike | None = None, *,
          position: ArrayLike | None = None,
          velocity: ArrayLike | None = None) -> np.ndarray:
    """The state ``y0`` of a quaternion model from an orientation and velocities.

    A ``scipy.spatial.transform.Rotation`` carries no angular velocity, so it is the whole
    ``y0`` of kinematics only; a rigid body's state ``[q, w_body]`` is built here (rotode's
    quaternions are scalar first, ``[w, x, y, z]``: a Rotation is exported with SciPy's own
    ``as_quat(scalar_first=True)``).

    Parameters
    ----------
    orientation : scipy.spatial.transform.Rotation or array_like, shape (4,) or (N, 4)
        Body-to-world orientation(s): a single or stacked Rotation, or nonzero scalar-first
        quaternions.  SciPy's default ``Rotation.as_quat()`` is scalar LAST: an array from it
        runs a different attitude (no check can tell the two orders apart); pass the Rotation
        itself.
    w_body : array_like, shape (3,) or (N, 3), optional
        Angular velocity in the BODY frame (rad/s).  Without it the state is ``q`` alone.
    position, velocity : array_like, shape (3,) or (N, 3), optional
        World position and velocity of ``rkn4`` with a ``force`` (both or neither; they need
        ``w_body``).

    Returns
    -------
    ndarray, shape (k,) or (N, k)
        ``q`` (k = 4), ``[q, w_body]`` (k = 7) or ``[q, w_body, position, velocity]``
        (k = 13); one row per body when any argument holds N of them (the others are repeated).

    Raises
    ------
    ValueError
        For a zero or non-finite quaternion, rows that do not agree in N, ``position``
        without ``velocity`` (or either without ``w_body``).
    TypeError
        For an orientation that is neither a Rotation nor numeric.

    See Also
    --------
    as_rotation, rotode.integrate

    Examples
    --------
    >>> import numpy as np, rotode
    >>> from scipy.spatial.transform import Rotation
    >>> rotode.state(Rotation.from_euler("x", 90, degrees=True), [0.0, 0.0, 1.0]).round(6)
    array([0.707107, 0.707107, 0.      , 0.      , 0.      , 0.      , 1.      ])
    """
    q = as_quaternions(orientation, "orientation")
    if q.ndim > 2:
        raise ValueError(f"`orientation` must hold one orientation or a stack of them, shape "
                         f"(4,) or (N, 4), got {q.shape}")
    parts = [("orientation", q)]
    if w_body is None:
        if position is not None or velocity is not None:
            raise ValueError("`position` and `velocity` need `w_body` (the state is [q, "
                             "w_body, position, velocity])")
    else:
        parts.append(("w_body", w_body))
        if (position is None) != (velocity is None):
            raise ValueError("give both `position` and `velocity` (rkn4's state [q, w_body, "
                             "position, velocity]) or neither")
        if position is not None:
            parts += [("position", position), ("velocity", velocity)]
    rows = []
    for name, x in parts:
        a = x if name == "orientation" else as_float_array(x, name, (3,))
        if a.ndim > 2:
            width = a.shape[-1]
            raise ValueError(f"`{name}` must have shape ({width},) or (N, {width}), got {a.shape}")
        rows.append((name, a))
    counts = {name: a.shape[0] for name, a in rows if a.ndim == 2}
    if len(set(counts.values())) > 1:
        raise ValueError("the arguments must hold one row each or the same number N of rows, "
                         "got " + ", ".join(f"`{k}`: {v}" for k, v in counts.items()))
    if not counts:
        return np.concatenate([a for _, a in rows])
    n = next(iter(counts.values()))
    return np.concatenate([np.broadcast_to(a, (n, a.shape[-1])) for _, a in rows], axis=1)


def as_rotation(sol_or_states: Any, kind: str = "auto", t: ArrayLike | None = None) -> Rotation:
    """Rotations from a ``solve_ivp`` solution or from states.

    Parameters
    ----------
    sol_or_states : OdeResult, IntegrationResult, LazyIntegrationResult or array_like
        A ``solve_ivp`` solution (its ``y``, shape (k, n_t); a `solve_expcoord` result uses its
        stored orientations), a `rotode.integrate` result (its quaternions ``q``, rows at its
        times: ``y`` there is (n_t, k), or (N, n_t, k) for a batch; a dask result is computed)
        or states of shape (k,) or (k, n_t), stored as columns like ``sol.y``.
    kind : {"auto", "quaternion", "expcoord", "matrix", "euler_xyz"}, optional
        Default "auto".  How the leading components encode the orientation: a quaternion of
        any nonzero length (first 4), a rotation vector (first 3, identity base), a row-major
        matrix (first 9, projected onto SO(3)) or intrinsic XYZ Euler angles (first 3).
        "auto" decides from n: 4, 7, 8 -> quaternion; 3, 6 -> expcoord; 9, 12 -> matrix (Euler
        angles need an explicit kind).
    t : float or array_like, optional
        Times at which to evaluate a solution's dense output (``sol.sol``, from
        ``dense_output=True``) instead of its stored states: the orientation at any time (on the
        group for `rotode.RKMK5`/`rotode.RKMK8`).

    Returns
    -------
    scipy.spatial.transform.Rotation
        One rotation per output time (a single rotation for a 1-D state or a scalar ``t``);
        for a batch of `rotode.integrate`, shape (N, n_t).

    Raises
    ------
    ValueError
        For a ``kind`` that cannot be inferred or needs more components, a zero quaternion, a
        matrix that is not a rotation, or ``t`` without a dense output or outside its span.

    See Also
    --------
    rotode.quaternion.to_scipy, IntegrationResult.rotation

    Examples
    --------
    >>> import numpy as np, rotode
    >>> from scipy.integrate import solve_ivp
    >>> spin = rotode.QuaternionKinematics([0.0, 0.0, np.pi])
    >>> sol = solve_ivp(spin, (0, 1), [1, 0, 0, 0], rtol=1e-10, atol=1e-12, dense_output=True)
    >>> round(float(rotode.as_rotation(sol, t=0.5).magnitude()), 6)     # a quarter turn
    1.570796
    >>> len(rotode.as_rotation(sol)) == sol.y.shape[1]
    True
    """
    as_choice(kind, "kind", ("auto",) + _KINDS)
    if isinstance(sol_or_states, StateViews):      # rotode.integrate's results
        return _result_rotation(sol_or_states, kind, t)
    if t is not None:
        dense = getattr(sol_or_states, "sol", None)
        if dense is None:
            raise ValueError("`sol_or_states` must be a solution with dense output "
                             "(solve_ivp(..., dense_output=True)) when `t` is given, got "
                             f"{type(sol_or_states).__name__}")
        times = as_float_array(t, "t")
        if times.ndim > 1 or times.size == 0:
            raise ValueError(f"`t` must be a scalar or have shape (n,) with n >= 1, got "
                             f"{times.shape}")
        span: tuple[Any, Any] = (getattr(dense, "t_min", None), getattr(dense, "t_max", None))
        if None not in span:
            lo, hi = sorted(float(x) for x in span)
            if np.any(times < lo) or np.any(times > hi):
                raise ValueError(f"`t` must lie within the solution's span [{lo!r}, {hi!r}] "
                                 "(no extrapolation)")
        sol_or_states = dense(times)
    if hasattr(sol_or_states, "quaternion") and kind in ("auto", "quaternion"):
        return Rotation.from_quat(sol_or_states.quaternion, scalar_first=True)
    y = getattr(sol_or_states, "y", sol_or_states)
    y = as_float_array(y, "sol_or_states")
    if y.ndim not in (1, 2) or y.shape[0] == 0:
        raise ValueError(f"`sol_or_states` must have shape (n,) or (n, k) with n >= 1, got "
                         f"{y.shape}")
    single = y.ndim == 1
    Y = y.reshape(y.shape[0], -1)
    n = Y.shape[0]
    if kind == "auto":
        if n not in _AUTO:
            raise ValueError(f"cannot infer `kind` from a state of length {n} (states are "
                             f"columns, shape (n, k)); pass kind= one of {_KINDS}")
        kind = _AUTO[n]
    need = {"quaternion": 4, "expcoord": 3, "matrix": 9, "euler_xyz": 3}[kind]
    if n < need:
        raise ValueError(f"`sol_or_states` with kind={kind!r} needs at least {need} state "
                         f"components (rows), got {n}")
    if kind == "quaternion":
        q = check_nonzero_quaternions(np.ascontiguousarray(Y[:4].T),
                                      "sol_or_states (quaternion rows)")
        rot = Rotation.from_quat(q, scalar_first=True)
    elif kind == "expcoord":
        rot = Rotation.from_rotvec(Y[:3].T)
    elif kind == "matrix":
        M = Y[:9].T.reshape(-1, 3, 3)
        top = np.abs(M).max(axis=(1, 2), keepdims=True)
        if np.any(top > 1e150):      # the projection onto SO(3) ignores a positive scale
            M = M / top
        with np.errstate(over="ignore", invalid="ignore"):
            det = np.linalg.det(M)
        if not np.all(det > 0) or not np.isfinite(det).all():
            j = int(np.flatnonzero(~(det > 0) | ~np.isfinite(det))[0])
            raise ValueError(f"`sol_or_states` (matrix rows) column {j} is not a rotation: "
                             f"determinant {float(det[j])!r} (projection onto SO(3) needs a "
                             "finite determinant > 0)")
        rot = Rotation.from_matrix(M)
    else:
        rot = Rotation.from_euler("XYZ", Y[:3].T)
    return rot[0] if single else rot


def _result_rotation(res, kind, t):
    """`as_rotation` of a `rotode.integrate` result (NumPy or dask)."""
    if kind not in ("auto", "quaternion"):
        raise ValueError(f"`kind`={kind!r} does not apply to a rotode.integrate result, whose "
                         "states are quaternions: give kind='auto' or 'quaternion'")
    if t is not None:
        raise ValueError("`t` needs a solution with dense output; a rotode.integrate result "
                         "holds its states at its times `res.t`: request others with `t_eval`")
    q = res.q
    if is_dask(q):
        q = q.compute()
    q = check_nonzero_quaternions(np.ascontiguousarray(q, dtype=np.float64),
                                  "sol_or_states (its quaternions q: NaN rows are those after "
                                  "a failure, or after a body's terminal event in a batch)")
    return rotations(q)


def _compose(base, v, frame):
    """Orientation quaternion of chart point v: base * exp(v/2) (body) or exp(v/2) * base."""
    r = Rotation.from_rotvec(np.atleast_2d(v))
    b = Rotation.from_quat(base, scalar_first=True)
    rot = b * r if frame == "body" else r * b
    return rot.as_quat(scalar_first=True)


def _check_tolerances(options, n):
    """``rtol``, ``atol`` (scalars or (n,), >= 0), ``first_step`` (> 0) and ``max_step``
    (> 0, inf allowed) of the options handed on to ``solve_ivp``, checked with their names."""
    for key in ("rtol", "atol", "first_step", "max_step"):
        if key in options and options[key] is None:     # None: solve_ivp's default
            del options[key]
    for key in ("rtol", "atol"):
        if key not in options:
            continue
        v = as_float_array(options[key], key)
        if v.shape not in ((), (n,)):
            raise ValueError(f"`{key}` must be a scalar or have shape ({n},), got {v.shape}")
        if np.any(v < 0):
            raise ValueError(f"`{key}` must be >= 0, got {options[key]!r}")
    for key in ("first_step", "max_step"):
        value = options.get(key)
        if value is not None and not (key == "max_step" and isinstance(value, (int, float))
                                      and value == np.inf):
            as_positive_scalar(value, key)


def solve_expcoord(rhs: ExpCoordKinematics | ExpCoordRigidBody, t_span: ArrayLike,
                   y0: ArrayLike, **options: Any) -> OptimizeResult:
    """Integrate an exponential-coordinate right-hand side with chart re-anchoring.

    ``solve_ivp`` runs with a terminal event at |v| = pi; at the event the orientation
    O = O_base R(v) (body frame) or R(v) O_base (world frame) becomes the new base, v is reset
    to 0 (the angular velocity part of the state is kept: it is in the body frame), and the
    integration restarts.  Each chart stays far from the singularity |v| = 2 pi.

    Parameters
    ----------
    rhs : ExpCoordKinematics or ExpCoordRigidBody
        The right-hand side; its ``base`` is the initial orientation (it is restored on exit).
    t_span : 2-tuple of float
        Interval of integration (forward or backward).
    y0 : array_like
        Initial state (v, and w for a rigid body).
    **options
        Passed to ``solve_ivp`` (``method``, ``rtol``, ``atol``, ``t_eval``, ``jac`` ...);
        ``events`` and ``dense_output`` are not supported.

    Returns
    -------
    OptimizeResult
        ``t``, ``y`` (states in the chart active at each time), ``quaternion`` (k, 4) unit
        orientations, ``rotation`` (a ``Rotation``), ``bases`` (k, 4) chart bases,
        ``n_reanchor``, ``nfev``, ``njev``, ``nlu``, ``status``, ``message``, ``success``.

    Raises
    ------
    TypeError
        If ``rhs`` is not an `ExpCoordKinematics` or `ExpCoordRigidBody`.
    ValueError
        For ``events``, ``dense_output`` or ``vectorized``, ``|y0[:3]| >= 2 pi``, or invalid
        tolerances.

    See Also
    --------
    rotode.ExpCoordKinematics, rotode.ExpCoordRigidBody, as_rotation

    Examples
    --------
    Ten seconds at 1 rad/s re-anchor the chart three times:

    >>> import numpy as np, rotode
    >>> spin = rotode.ExpCoordKinematics([0.0, 0.0, 1.0])
    >>> sol = rotode.solve_expcoord(spin, (0, 10), [0.0, 0.0, 0.0], rtol=1e-10, atol=1e-12)
    >>> sol.n_reanchor, bool(np.allclose(sol.quaternion[-1], [np.cos(5), 0, 0, np.sin(5)]))
    (3, True)
    """
    if not isinstance(rhs, (ExpCoordKinematics, ExpCoordRigidBody)):
        raise TypeError("`rhs` must be an ExpCoordKinematics or ExpCoordRigidBody, got "
                        f"{type(rhs).__name__}")
    for key in ("events", "dense_output", "vectorized"):
        if options.get(key):
            raise ValueError(f"solve_expcoord does not support `{key}`")
    t0, tf = (float(x) for x in as_float_array(t_span, "t_span", (2,), batch=False))
    y = as_float_array(y0, "y0", (rhs.n,), batch=False).copy()
    top = float(np.abs(y[:3]).max())
    size = top * float(np.linalg.norm(y[:3] / top)) if top > 0 else 0.0
    if not size < 2 * np.pi:
        raise ValueError("`y0` rotation vector y0[:3] must satisfy |v| < 2 pi (the chart is "
                         f"singular at 2 pi), got |v| = {size!r}")
    _check_tolerances(options, rhs.n)
    t_eval = options.pop("t_eval", None)
    if t_eval is not None:
        t_eval = as_float_array(t_eval, "t_eval")
    direction = 1.0 if tf >= t0 else -1.0
    # re-anchoring changes the chart's base: do it on a private copy, so that the caller's
    # right-hand side (which other threads may be using) never changes
    rhs = copy.copy(rhs)
    frame = rhs.frame
    base0 = rhs.base

    def chart_limit(t, y):
        return y[0] * y[0] + y[1] * y[1] + y[2] * y[2] - np.pi * np.pi
    chart_limit.terminal = True  # type: ignore[attr-defined]
    chart_limit.direction = 1.0  # type: ignore[attr-defined]

    ts: list[Any] = []
    ys: list[Any] = []
    bases: list[Any] = []
    nfev = njev = nlu = n_reanchor = 0
    t = t0
    base = base0
    status, message = 0, ""
    while True:
        rhs.base = base
        seg_eval = None
        if t_eval is not None:
            keep = (direction * (t_eval - t) >= 0) & (direction * (tf - t_eval) >= 0)
            if ts:  # the restart point itself was already reported
                keep &= t_eval != t
            seg_eval = t_eval[keep]
        sol = solve_ivp(rhs, (t, tf), y, events=chart_limit, t_eval=seg_eval, **options)
        nfev += sol.nfev
        njev += sol.njev
        nlu += sol.nlu
        seg_t, seg_y = np.asarray(sol.t, float), np.asarray(sol.y, float).reshape(rhs.n, -1)
        if ts and t_eval is None and seg_t.size and seg_t[0] == t:
            seg_t, seg_y = seg_t[1:], seg_y[:, 1:]
        ts.append(seg_t)
        ys.append(seg_y)
        bases.append(np.tile(base, (seg_t.size, 1)))
        status, message = sol.status, sol.message
        if sol.status != 1:
            break
        t = float(sol.t_events[0][0])
        y_event = sol.y_events[0][0]
        base = _compose(base, y_event[:3], frame)[0]
        y = y_event.copy()
        y[:3] = 0.0
        n_reanchor += 1
        if t == tf:
            status, message = 0, "The solver successfully reached the end of the interval."
            break
    T = np.concatenate(ts)
    Y = np.concatenate(ys, axis=1)
    B = np.concatenate(bases, axis=0)
    Q = np.empty((T.size, 4))
    if T.size:
        rot = Rotation.from_quat(B, scalar_first=True)
        r = Rotation.from_rotvec(Y[:3].T)
        Q = (rot * r if frame == "body" else r * rot).as_quat(scalar_first=True)
    return OptimizeResult(t=T, y=Y, quaternion=Q,
                          rotation=Rotation.from_quat(Q, scalar_first=True) if T.size else None,
                          bases=B, n_reanchor=n_reanchor, nfev=nfev, njev=njev, nlu=nlu,
                          status=status, message=message, success=status >= 0)
