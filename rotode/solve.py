"""Facade helpers around ``solve_ivp``: solutions to rotations, and re-anchored exp-coordinates.

- `as_rotation` turns a ``solve_ivp`` solution (or raw states) of any rotode right-hand side
  into a ``scipy.spatial.transform.Rotation``.
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

from rotode._validation import (
    as_choice,
    as_float_array,
    as_positive_scalar,
    check_nonzero_quaternions,
)
from rotode.rhs import ExpCoordKinematics, ExpCoordRigidBody

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

__all__ = ["as_rotation", "solve_expcoord"]

_KINDS = ("quaternion", "expcoord", "matrix", "euler_xyz")
_AUTO = {4: "quaternion", 7: "quaternion", 8: "quaternion", 3: "expcoord", 6: "expcoord",
         9: "matrix", 12: "matrix"}


def as_rotation(sol_or_states: Any, kind: str = "auto", t: ArrayLike | None = None) -> Rotation:
    """Rotations from a ``solve_ivp`` solution or from states.

    Parameters
    ----------
    sol_or_states : OdeResult or array_like, shape (n,) or (n, k)
        A solution (its ``y``; a `solve_expcoord` result uses its stored orientations) or states
        stored as columns like ``sol.y``.
    kind : {"auto", "quaternion", "expcoord", "matrix", "euler_xyz"}, optional
        Default "auto". How the leading components encode the orientation: a quaternion of any
        nonzero length (first 4), a rotation vector (first 3, identity base), a row-major matrix
        (first 9, projected onto SO(3)) or intrinsic XYZ Euler angles (first 3). "auto" decides
        from n: 4, 7, 8 -> quaternion; 3, 6 -> expcoord; 9, 12 -> matrix (Euler angles need an
        explicit kind).
    t : float or array_like, optional
        Times at which to evaluate a solution's dense output (``sol.sol``, from
        ``dense_output=True``) instead of its stored states: the orientation at any time (on the
        group for `rotode.RKMK5`/`rotode.RKMK8`).

    Returns
    -------
    scipy.spatial.transform.Rotation
        One rotation per output time (a single rotation for a 1-D state or a scalar ``t``).

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
