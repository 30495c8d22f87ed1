"""The spinning T-handle (Dzhanibekov effect) three ways: explicit Euler, implicit midpoint, exact.

Helper for the demo (Mizerski 2020 secs. 11-12): the "game engine" explicit Euler step against the
implicit midpoint rule of `rotode.implicit` and the exact torque-free motion of `rotode.exact`.
Pure NumPy and rotode: plotting is left to the caller.
"""
import numpy as np

from rotode import implicit
from rotode._validation import as_float_array, as_positive_scalar
from rotode.exact import free_rigid_body
from rotode.rhs import RigidBody

__all__ = ["thandle_comparison", "flip_times", "explicit_euler"]

THANDLE_INERTIA = (2.5, 1.4, 1.3)


def flip_times(t, x):
    """Times where ``x`` changes sign (linear interpolation between samples)."""
    t = np.asarray(t, dtype=float)
    x = np.asarray(x, dtype=float)
    s = np.sign(x)
    i = np.flatnonzero(s[1:] * s[:-1] < 0)
    return t[i] - x[i] * (t[i + 1] - t[i]) / (x[i + 1] - x[i])


def explicit_euler(inertia, w0, q0, dt, n):
    """The "game engine" step: explicit Euler on Euler's equations and on q' = 1/2 q w.

    w_{k+1} = w_k + dt I^-1 (-w_k x I w_k),  q_{k+1} = normalise(q_k + dt/2 q_k * (0, w_k)).
    Principal moments ``inertia`` (3,).  Returns q (n+1, 4) and w (n+1, 3) (body frame).
    """
    inertia = np.asarray(inertia, dtype=float)
    q = np.empty((n + 1, 4))
    w = np.empty((n + 1, 3))
    q[0] = np.asarray(q0, dtype=float) / np.linalg.norm(q0)
    w[0] = w0
    for k in range(n):
        wk, qk = w[k], q[k]
        w[k + 1] = wk - dt * np.cross(wk, inertia * wk) / inertia
        dq = 0.5 * np.array([
            -qk[1] * wk[0] - qk[2] * wk[1] - qk[3] * wk[2],
            qk[0] * wk[0] + qk[2] * wk[2] - qk[3] * wk[1],
            qk[0] * wk[1] + qk[3] * wk[0] - qk[1] * wk[2],
            qk[0] * wk[2] + qk[1] * wk[1] - qk[2] * wk[0]])
        qn = qk + dt * dq
        q[k + 1] = qn / np.linalg.norm(qn)
    return q, w


def thandle_comparison(t_end=100.0, dt=1 / 60, w0=(0.01, 5.0, 0.01), inertia=THANDLE_INERTIA):
    """Energy and intermediate-axis rate of a T-handle by explicit Euler, implicit midpoint, exact.

    Parameters
    ----------
    t_end : float
        Duration (s), > 0.
    dt : float
        Step (s), > 0 (1/60: a game frame).
    w0 : array_like, shape (3,)
        Initial body angular velocity; the default spins at 5 rad/s about the intermediate axis
        (index 1 of the default moments) with a small perturbation.
    inertia : array_like, shape (3,)
        Principal moments; default the T-handle (2.5, 1.4, 1.3) of Mizerski 2020 sec. 8.

    Returns
    -------
    dict
        ``t`` (n+1,); for each of ``"explicit_euler"``, ``"implicit_midpoint"``, ``"exact"`` a
        dict with ``energy`` (n+1,), ``rel_energy_error`` (n+1,), ``w_intermediate`` (n+1,)
        (body rate about the intermediate axis, whose sign changes are the Dzhanibekov flips),
        ``w`` (n+1, 3), ``q`` (n+1, 4) and ``flip_times``; plus ``intermediate_axis`` (index).
    """
    t_end = as_positive_scalar(t_end, "t_end")
    dt = as_positive_scalar(dt, "dt")
    inertia = as_float_array(inertia, "inertia", (3,), batch=False)
    w0 = as_float_array(w0, "w0", (3,), batch=False)
    body = RigidBody(inertia)
    n = int(np.ceil(t_end / dt - 1e-9))
    t = np.arange(n + 1) * dt
    q0 = np.array([1.0, 0.0, 0.0, 0.0])
    mid = int(np.argsort(inertia)[1])

    def summary(q, w):
        E = 0.5 * np.sum(inertia * w * w, axis=1)
        return {"q": q, "w": w, "energy": E, "rel_energy_error": E / E[0] - 1.0,
                "w_intermediate": w[:, mid], "flip_times": flip_times(t, w[:, mid])}

    qe, we = explicit_euler(inertia, w0, q0, dt, n)
    y, wi, stats = implicit.run("implicit_midpoint", body, np.r_[q0, w0][None, :], t,
                                np.arange(n + 1, dtype=np.intp), {}, 1)
    if stats["status"] != 0:
        raise RuntimeError(stats["message"])
    qx, wx = free_rigid_body(inertia, w0, t, q0)
    return {"t": t, "intermediate_axis": mid,
            "explicit_euler": summary(qe, we),
            "implicit_midpoint": summary(y[0, :, :4], wi[0]),
            "exact": summary(qx, wx)}
