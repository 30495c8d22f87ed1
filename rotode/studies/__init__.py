"""The published numerical studies, reproduced: ``python -m rotode study NAME``.

Each study computes its data with rotode (and the baselines it compares against), writes one CSV
per table into the output directory (``./rotode-studies/`` by default) and, when matplotlib is
installed, the figure(s) beside them.  ``quick=True`` runs reduced sizes (what the tests use to
assert the published qualitative claims).

==================  =============================================================================
study               what it reproduces
==================  =============================================================================
rucker-benchmark    Rucker 2018 figs. 2-5: angular error vs time and vs step size for the
                    exponential updates, RK3, RK4, AB3; quaternion norm drift with and without
                    norm control
lagrange-top        Rucker 2018 figs. 7-10: angular error, energy and world-z momentum drift vs step
                    size for non-unit quaternions, step-wise normalised quaternions, XYZ Euler
                    angles and rotation matrices with Gram-Schmidt (all with RK4)
energy-map          Mizerski 2020 sec. 11: relative energy change of one step over the
                    dt L_x - dt L_y plane for implicit midpoint, trapezoid and object trapezoid
newton-map          Mizerski 2020 sec. 8: iterations of the simple (fixed-point) iteration vs Newton
                    over the same plane
work-precision      error vs run time for every method on the Rucker 2018 benchmark, against
                    solve_ivp with a NumPy right-hand side (and numpy-quaternion when installed)
==================  =============================================================================
"""
import csv
import os
import time

import numpy as np
from scipy.integrate import solve_ivp

import rotode
from rotode import methods, omega, torque

__all__ = ["STUDIES", "run_study", "write_csv", "angle_error_deg", "best_time",
           "numpy_quaternion_kinematics", "numpy_rigid_body", "seed004_omega"]

# Rucker 2018 eq. 29 benchmark: w(t) = A sin(B t + phase_i) in the body frame, T = 100 s.
SEED004_A, SEED004_B = np.pi / 2, 2 * np.pi / 10
SEED004_PHASE = np.array([0.0, 2 * np.pi / 3, 4 * np.pi / 3])
# Rucker 2018 sec. IV Lagrange top.
TOP_INERTIA = np.array([1.0, 1.0, 0.5])
TOP_W0 = np.array([1.5, 0.0, 1.0])
# Mizerski 2020 sec. 11 T-handle.
T_HANDLE = np.array([2.5, 1.4, 1.3])

STUDIES = {}


def _study(name):
    def register(function):
        STUDIES[name] = function
        return function
    return register


def write_csv(path, header, columns):
    """Write equal-length columns under ``header`` to ``path`` (a CSV with a header row).

    Numbers are written with ``repr`` (round-trip exact); other values as text.
    """
    columns = [list(c) for c in columns]
    with open(path, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(header)
        for row in zip(*columns, strict=True):
            writer.writerow([repr(float(x)) if isinstance(x, (int, float, np.number))
                             else str(x) for x in row])


def _pyplot():
    try:
        import matplotlib
    except ImportError:
        return None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _save(fig, path):
    from matplotlib.ticker import NullFormatter

    for ax in fig.axes:
        if ax.get_xscale() == "log":
            ax.xaxis.set_minor_formatter(NullFormatter())
        ax.grid(True, which="major", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    import matplotlib.pyplot as plt

    plt.close(fig)


def angle_error_deg(q, q_ref):
    """Angle (degrees) of the rotation between quaternions q and q_ref (any nonzero lengths)."""
    q = np.asarray(q, dtype=float)
    q_ref = np.asarray(q_ref, dtype=float)
    qn = q / np.linalg.norm(q, axis=-1, keepdims=True)
    rn = q_ref / np.linalg.norm(q_ref, axis=-1, keepdims=True)
    c = np.abs(np.sum(qn * rn, axis=-1))
    # |vec(conj(r) q)| = sin(angle / 2), accurate for small angles where the dot product is not.
    s = np.linalg.norm(rn[..., :1] * qn[..., 1:] - qn[..., :1] * rn[..., 1:]
                       - np.cross(rn[..., 1:], qn[..., 1:]), axis=-1)
    return np.degrees(2.0 * np.arctan2(s, c))


def seed004_omega():
    """The Rucker 2018 eq. 29 angular velocity (body frame) as a compiled source."""
    return omega.Sinusoid(amplitude=SEED004_A, rate=SEED004_B, phase=SEED004_PHASE)


def seed004_reference(t, frame="body"):
    """Unit quaternions of the Rucker 2018 benchmark at times t (DOP853, rtol 1e-13); ``frame``
    says in which frame w(t) is read (Rucker 2018 uses body rates)."""
    rhs = rotode.QuaternionKinematics(seed004_omega(), frame=frame)
    sol = solve_ivp(rhs, (0.0, float(np.max(t))), [1.0, 0.0, 0.0, 0.0], method="DOP853",
                    rtol=1e-13, atol=1e-14, t_eval=t)
    q = sol.y.T
    return q / np.linalg.norm(q, axis=1, keepdims=True)


# ---- Rucker 2018 sec. IV: Lagrange top --------------------------------------------------------

def _rk4_path(f, y0, dt, n_steps, post=None):
    """Classical RK4 with a fixed step on ``f(t, y)``; ``post`` projects after each step."""
    y = np.array(y0, dtype=float)
    out = np.empty((n_steps + 1, y.size))
    out[0] = y
    h2 = 0.5 * dt
    for i in range(n_steps):
        t = i * dt
        k1 = f(t, y)
        k2 = f(t + h2, y + h2 * k1)
        k3 = f(t + h2, y + h2 * k2)
        k4 = f(t + dt, y + dt * k3)
        y = y + (dt / 6.0) * (k1 + 2.0 * k2 + 2.0 * k3 + k4)
        if post is not None:
            y = post(y)
        out[i + 1] = y
    return out


def _normalise_quaternion(y):
    y = y.copy()
    y[:4] /= np.linalg.norm(y[:4])
    return y


def _gram_schmidt(y):
    """Re-orthonormalise the rows of the row-major rotation matrix y[:9] (Gram-Schmidt)."""
    y = y.copy()
    R = y[:9].reshape(3, 3)
    r0 = R[0] / np.linalg.norm(R[0])
    r1 = R[1] - np.dot(r0, R[1]) * r0
    r1 /= np.linalg.norm(r1)
    r2 = R[2] - np.dot(r0, R[2]) * r0 - np.dot(r1, R[2]) * r1
    r2 /= np.linalg.norm(r2)
    y[:9] = np.concatenate([r0, r1, r2])
    return y


TOP_FORMULATIONS = ("nonunit-quaternion", "normalised-quaternion", "euler-xyz",
                    "matrix-gram-schmidt")
_TOP_STYLE = {"nonunit-quaternion": "-", "normalised-quaternion": "--", "euler-xyz": "-.",
              "matrix-gram-schmidt": ":"}


def lagrange_top_run(formulation, dt, t_end=100.0):
    """RK4 on the Lagrange top in one orientation formulation; returns (t, Rotation, model, Y)."""
    gravity = torque.Gravity(mass=1.0, g=1.0, com=[0.0, 0.0, 1.0])
    n = int(round(t_end / dt))
    if formulation in ("nonunit-quaternion", "normalised-quaternion"):
        model = rotode.RigidBody(TOP_INERTIA, torque=gravity)
        y0 = np.concatenate([[1.0, 0.0, 0.0, 0.0], TOP_W0])
        post = _normalise_quaternion if formulation == "normalised-quaternion" else None
        kind = "quaternion"
    elif formulation == "euler-xyz":
        model = rotode.EulerAnglesXYZ(TOP_INERTIA, torque=gravity)
        y0 = np.concatenate([[0.0, 0.0, 0.0], TOP_W0])
        post, kind = None, "euler_xyz"
    elif formulation == "matrix-gram-schmidt":
        model = rotode.RotationMatrix(TOP_INERTIA, torque=gravity)
        y0 = np.concatenate([np.eye(3).ravel(), TOP_W0])
        post, kind = _gram_schmidt, "matrix"
    else:
        raise ValueError(f"unknown formulation {formulation!r}; choose one of {TOP_FORMULATIONS}")
    Y = _rk4_path(model, y0, dt, n, post)
    t = dt * np.arange(n + 1)
    return t, rotode.as_rotation(Y.T, kind=kind), model, Y


def lagrange_top_reference(t):
    """Unit quaternions of the Lagrange top at times t (DOP853, rtol 1e-13, quaternion form)."""
    model = rotode.RigidBody(TOP_INERTIA, torque=torque.Gravity(1.0, 1.0, [0.0, 0.0, 1.0]))
    y0 = np.concatenate([[1.0, 0.0, 0.0, 0.0], TOP_W0])
    sol = solve_ivp(model, (0.0, float(np.max(t))), y0, method="DOP853", rtol=1e-13,
                    atol=1e-13, t_eval=t)
    q = sol.y[:4].T
    return q / np.linalg.norm(q, axis=1, keepdims=True)


@_study("lagrange-top")
def lagrange_top(quick=False):
    """Rucker 2018 figs. 7-10 (RK4; error over time at dt = 0.1, then scaling with step size)."""
    t_end = 100.0
    steps = [0.4, 0.2, 0.1, 0.05] if quick else [0.4, 0.2, 0.1, 0.05, 0.025, 0.0125]
    t_series = 0.1 * np.arange(int(round(t_end / 0.1)) + 1)
    ref_series = lagrange_top_reference(t_series)
    series = {"time [s]": t_series}
    for form in TOP_FORMULATIONS:
        _, rot, _, _ = lagrange_top_run(form, 0.1, t_end)
        series[form] = angle_error_deg(rot.as_quat(scalar_first=True), ref_series)
    ref_end = lagrange_top_reference(np.array([0.0, t_end]))[1]
    scaling = {"step [s]": np.array(steps)}
    for form in TOP_FORMULATIONS:
        err, energy, momentum = [], [], []
        for dt in steps:
            _, rot, model, Y = lagrange_top_run(form, dt, t_end)
            err.append(angle_error_deg(rot[len(rot) - 1].as_quat(scalar_first=True), ref_end))
            E = model.energy(Y[[0, len(Y) - 1]].T)
            Lz = model.angular_momentum(Y[[0, len(Y) - 1]].T)[2]
            energy.append(100.0 * abs(E[1] - E[0]) / abs(E[0]))
            momentum.append(100.0 * abs(Lz[1] - Lz[0]) / abs(Lz[0]))
        scaling[f"{form} error [deg]"] = np.array(err)
        scaling[f"{form} energy drift [%]"] = np.array(energy)
        scaling[f"{form} z-momentum drift [%]"] = np.array(momentum)
    return {"error-vs-time": series, "drift-vs-step": scaling}


def _plot_lagrange_top(data, out_dir, plt):
    s = data["error-vs-time"]
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    for form in TOP_FORMULATIONS:
        ax.semilogy(s["time [s]"][1:], s[form][1:], _TOP_STYLE[form], label=form)
    ax.set(xlabel="time [s]", ylabel="angular error [deg]",
           title="Lagrange top, RK4, dt = 0.1 s (Rucker 2018 fig. 7)")
    ax.legend()
    _save(fig, os.path.join(out_dir, "lagrange-top-error-vs-time.png"))
    d = data["drift-vs-step"]
    for key, label, fig_no in (("error [deg]", "angular error at t = 100 s [deg]", 8),
                               ("energy drift [%]", "energy drift at t = 100 s [%]", 9),
                               ("z-momentum drift [%]", "world-z momentum drift [%]", 10)):
        fig, ax = plt.subplots(figsize=(6.4, 4.2))
        for form in TOP_FORMULATIONS:
            ax.loglog(d["step [s]"], d[f"{form} {key}"], "o" + _TOP_STYLE[form], label=form)
        ax.set(xlabel="step size [s]", ylabel=label,
               title=f"Lagrange top, RK4 (Rucker 2018 fig. {fig_no})")
        ax.legend()
        slug = key.split(" [")[0].replace(" ", "-")
        _save(fig, os.path.join(out_dir, f"lagrange-top-{slug}-vs-step.png"))


# ---- Rucker 2018 sec. III: the benchmark ------------------------------------------------------

RUCKER_METHODS = ("lie_euler", "exp2", "rk3", "rk4", "ab3")
RUCKER_LABELS = {"lie_euler": "exponential update 1", "exp2": "exponential update 2",
                 "rk3": "non-unit RK3", "rk4": "non-unit RK4", "ab3": "non-unit AB3"}


def seed004_run(method, dt, t_end=100.0, **options):
    """rotode.integrate on the Rucker 2018 benchmark from q = 1 (body-frame w)."""
    return rotode.integrate(seed004_omega(), (0.0, t_end), [1.0, 0.0, 0.0, 0.0], method=method,
                            dt=dt, **options)


@_study("rucker-benchmark")
def rucker_benchmark(quick=False):
    """Rucker 2018 figs. 2-5 (error over time at dt = 0.1; error and norm drift vs step size)."""
    t_end = 100.0
    steps = [0.5, 0.2, 0.1, 0.05, 0.02] if quick else [1.0, 0.5, 0.2, 0.1, 0.05, 0.02, 0.01]
    res = {m: seed004_run(m, 0.1, t_end) for m in RUCKER_METHODS}
    t = res["rk4"].t
    ref = seed004_reference(t)
    over_time = {"time [s]": t}
    for m in RUCKER_METHODS:
        over_time[m] = angle_error_deg(res[m].q, ref)
    ref_end = ref[len(ref) - 1]
    vs_step = {"step [s]": np.array(steps)}
    for m in RUCKER_METHODS:
        vs_step[m] = np.array([angle_error_deg(seed004_run(m, h, t_end).q[-1], ref_end)
                               for h in steps])
    drift_time = {"time [s]": t}
    drift_step = {"step [s]": np.array(steps)}
    for m in ("rk3", "rk4", "ab3"):
        for gain in (0.0, 0.1):
            key = f"{m} c={gain:g}"
            drift_time[key] = np.abs(np.linalg.norm(  # AB3 blows up at dt = 1: inf/NaN
                seed004_run(m, 0.1, t_end, norm_gain=gain).q, axis=1) - 1.0)
            drift_step[key] = np.array([
                np.abs(np.linalg.norm(seed004_run(m, h, t_end, norm_gain=gain).q, axis=1)
                       - 1.0).max() for h in steps])
    return {"error-vs-time": over_time, "error-vs-step": vs_step,
            "norm-drift-vs-time": drift_time, "norm-drift-vs-step": drift_step}


def _plot_rucker(data, out_dir, plt):
    s = data["error-vs-time"]
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    for m in RUCKER_METHODS:
        ax.loglog(s["time [s]"][1:], s[m][1:], label=RUCKER_LABELS[m])
    ax.set(xlabel="time [s]", ylabel="angular error [deg]",
           title="Rucker 2018 benchmark, dt = 0.1 s (fig. 2)")
    ax.legend()
    _save(fig, os.path.join(out_dir, "rucker-benchmark-error-vs-time.png"))
    s = data["error-vs-step"]
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    for m in RUCKER_METHODS:
        ax.loglog(s["step [s]"], s[m], "o-", label=RUCKER_LABELS[m])
    ax.set(xlabel="step size [s]", ylabel="angular error at t = 100 s [deg]",
           title="Rucker 2018 benchmark, error scaling (fig. 3)")
    ax.legend()
    _save(fig, os.path.join(out_dir, "rucker-benchmark-error-vs-step.png"))
    for table, xlabel, fig_no in (("norm-drift-vs-time", "time [s]", 4),
                                  ("norm-drift-vs-step", "step [s]", 5)):
        s = data[table]
        fig, ax = plt.subplots(figsize=(6.4, 4.2))
        x = s[xlabel]
        for key in s:
            if key == xlabel:
                continue
            style = "--" if key.endswith("c=0.1") else "-"
            mask = x > 0
            ax.loglog(x[mask], np.maximum(s[key][mask], 1e-17), style + ("o" if fig_no == 5
                                                                          else ""), label=key)
        ax.set(xlabel=xlabel.replace("[s]", "[s]"), ylabel="| |q| - 1 |"
               + (" (max over 100 s)" if fig_no == 5 else ""),
               title=f"Rucker 2018 benchmark, quaternion norm drift (fig. {fig_no})")
        ax.legend(fontsize=8)
        _save(fig, os.path.join(out_dir, f"rucker-benchmark-{table}.png"))


# ---- Mizerski 2020 secs. 8 and 11: energy and Newton maps --------------------------------

IMPLICIT_METHODS = ("implicit_midpoint", "trapezoid", "object_trapezoid")


def _plane(n, extent=50.0):
    """dt L_b on an n x n grid of the z = 0 plane, |components| <= extent (0 excluded)."""
    g = np.linspace(-extent, extent, n)
    Lx, Ly = np.meshgrid(g, g, indexing="xy")
    return g, Lx, Ly


@_study("energy-map")
def energy_map(quick=False):
    """Mizerski 2020 sec. 11: relative energy change of ONE step (dt = 1) with dt L_b in the z = 0
    plane, T-handle (2.5, 1.4, 1.3), Kantorovich sub-steps on."""
    n = 11 if quick else 41
    g, Lx, Ly = _plane(n)
    L = np.column_stack([Lx.ravel(), Ly.ravel(), np.zeros(Lx.size)])
    keep = np.linalg.norm(L, axis=1) > 0
    L = L[keep]
    w0 = L / T_HANDLE
    y0 = np.column_stack([np.tile([1.0, 0.0, 0.0, 0.0], (len(L), 1)), w0])
    body = rotode.RigidBody(T_HANDLE)
    e0 = body.energy(y0.T)
    table = {"dt Lx": Lx.ravel()[keep], "dt Ly": Ly.ravel()[keep]}
    for m in IMPLICIT_METHODS:
        res = rotode.integrate(body, (0.0, 1.0), y0, method=m, dt=1.0)
        e1 = body.energy(res.y[:, -1, :].T)
        table[m] = np.abs(e1 - e0) / e0
    return {"relative-energy-change": table}


@_study("newton-map")
def newton_map(quick=False):
    """Mizerski 2020 sec. 8: iterations to converge from v = 0 for ONE implicit-midpoint solve with
    dt L_b in the z = 0 plane (no sub-steps): the simple iteration vs Newton.  Points where an
    iteration does not converge within ``max_iter`` = 50 are recorded as NaN."""
    from rotode.implicit import newton_trace

    n = 11 if quick else 41
    g, Lx, Ly = _plane(n, extent=10.0 if quick else 20.0)
    L = np.column_stack([Lx.ravel(), Ly.ravel(), np.zeros(Lx.size)])
    table = {"dt Lx": L[:, 0], "dt Ly": L[:, 1]}
    for solver in ("fixed-point", "newton"):
        counts = np.empty(len(L))
        for i, dtl in enumerate(L):
            tr = newton_trace(T_HANDLE, dtl, 1.0, solver=solver, max_iter=50)
            counts[i] = len(tr["iterates"]) if tr["status"] == 0 else np.nan
        table[f"{solver} iterations"] = counts
    table["kantorovich h <= 1/2"] = np.array(
        [float(newton_trace(T_HANDLE, dtl, 1.0, max_iter=1)["h"] <= 0.5) for dtl in L])
    return {"iterations": table}


def _plot_newton_map(data, out_dir, plt):
    _plot_map(data["iterations"], ("fixed-point iterations", "newton iterations"),
              os.path.join(out_dir, "newton-map.png"),
              "Iterations of one implicit-midpoint solve from v = 0 (Mizerski 2020 sec. 8)",
              "iterations (blank: no convergence)", log=False, plt=plt)


def _plot_map(table, columns, out_path, title, cbar, log=True, plt=None):
    from matplotlib.colors import LogNorm

    x, y = table["dt Lx"], table["dt Ly"]
    fig, axes = plt.subplots(1, len(columns), figsize=(4.2 * len(columns), 3.8), squeeze=False)
    vals = np.concatenate([np.asarray(table[c], dtype=float) for c in columns])
    pos = vals[vals > 0]
    norm = LogNorm(vmin=max(pos.min(), 1e-16), vmax=pos.max()) if log and pos.size else None
    for ax, c in zip(axes[0], columns, strict=True):
        v = np.asarray(table[c], dtype=float)
        sc = ax.scatter(x, y, c=np.maximum(v, 1e-16) if log else v, norm=norm, s=12,
                        marker="s", cmap="viridis")
        ax.set(xlabel="dt L_x", ylabel="dt L_y", title=c, aspect="equal")
        fig.colorbar(sc, ax=ax, label=cbar)
    fig.suptitle(title)
    _save(fig, out_path)


def _plot_energy_map(data, out_dir, plt):
    _plot_map(data["relative-energy-change"], IMPLICIT_METHODS,
              os.path.join(out_dir, "energy-map.png"),
              "One step, T-handle (2.5, 1.4, 1.3): relative energy change (Mizerski 2020 sec. 11)",
              "|E1 - E0| / E0", plt=plt)


# ---- work-precision ----------------------------------------------------------------------------

# Crouch-Grossman methods from the registry, by order (the first is lie_euler's arithmetic)
_CG = methods.names(family="Crouch-Grossman")
KINEMATIC_WP = ("lie_euler", "exp2", *methods.names("kinematics", "magnus"), *_CG[1:],
                "rk3", "rk4", "ab3")
RIGID_WP = ("lie_euler", "exp2", _CG[-1], "rk4", "rkn4", "implicit_midpoint", "trapezoid")


def best_time(run, repeat=3):
    """(best wall time over `repeat` calls of run(), the last result)."""
    best, out = np.inf, None
    for _ in range(repeat):
        start = time.perf_counter()
        out = run()
        best = min(best, time.perf_counter() - start)
    return best, out


# ---- NumPy baselines (every speed comparison of the project uses these) ----------------------

def numpy_quaternion_kinematics(t, q):
    """q' = 1/2 q * w (body frame), w of Rucker 2018 eq. 29, written out by hand (a strong
    baseline)."""
    w = SEED004_A * np.sin(SEED004_B * t + SEED004_PHASE)
    return 0.5 * np.array([
        -q[1] * w[0] - q[2] * w[1] - q[3] * w[2],
        q[0] * w[0] + q[2] * w[2] - q[3] * w[1],
        q[0] * w[1] - q[1] * w[2] + q[3] * w[0],
        q[0] * w[2] + q[1] * w[1] - q[2] * w[0]])


def numpy_rigid_body(t, y, inertia=T_HANDLE):
    """Torque-free rigid body with principal moments: [q' ; I^-1 (-w x I w)]."""
    q, w = y[:4], y[4:]
    Iw = inertia * w
    gyro = np.array([w[1] * Iw[2] - w[2] * Iw[1], w[2] * Iw[0] - w[0] * Iw[2],
                     w[0] * Iw[1] - w[1] * Iw[0]])
    dq = 0.5 * np.array([
        -q[1] * w[0] - q[2] * w[1] - q[3] * w[2],
        q[0] * w[0] + q[2] * w[2] - q[3] * w[1],
        q[0] * w[1] - q[1] * w[2] + q[3] * w[0],
        q[0] * w[2] + q[1] * w[1] - q[2] * w[0]])
    return np.concatenate([dq, -gyro / inertia])


def _numpy_quaternion_rows(t_end, steps):
    """numpy-quaternion's integrate_angular_velocity (when installed) on the Rucker 2018 case."""
    try:
        import quaternion as npq
    except ImportError:
        return []
    rows = []
    # numpy-quaternion integrates R' = 1/2 w R: w(t) read as a WORLD-frame rate
    ref = seed004_reference(np.array([0.0, t_end]), frame="world")[1]
    for tol in ([1e-8, 1e-10] if steps else [1e-8, 1e-10, 1e-12]):
        def run(tol=tol):
            w = lambda t: SEED004_A * np.sin(SEED004_B * t + SEED004_PHASE)  # noqa: E731
            return npq.integrate_angular_velocity(w, 0.0, t_end, R0=npq.one, tolerance=tol)
        elapsed, (_, R) = best_time(run, 1)
        q = npq.as_float_array(R[len(R) - 1])
        rows.append(("numpy-quaternion (world-frame w)", tol, elapsed,
                     float(angle_error_deg(q, ref))))
    return rows


@_study("work-precision")
def work_precision(quick=False):
    """Error at t_end against run time, for every method and the SciPy/NumPy baselines."""
    repeat = 1 if quick else 3
    t_end = 20.0 if quick else 100.0
    ref = seed004_reference(np.array([0.0, t_end]))[1]
    dts = [0.1, 0.03] if quick else [0.2, 0.1, 0.05, 0.02, 0.01, 0.005, 0.002]
    rows = []
    for m in KINEMATIC_WP:
        for dt in dts:
            elapsed, res = best_time(lambda m=m, dt=dt: seed004_run(m, dt, t_end), repeat)
            rows.append((m, dt, elapsed, float(angle_error_deg(res.q[-1], ref))))
    for rtol in ([1e-6, 1e-9] if quick else [1e-5, 1e-7, 1e-9, 1e-11, 1e-13]):
        elapsed, sol = best_time(lambda rtol=rtol: solve_ivp(
            numpy_quaternion_kinematics, (0.0, t_end), [1.0, 0, 0, 0], method="DOP853", rtol=rtol,
            atol=rtol * 1e-2), repeat)
        rows.append(("solve_ivp DOP853 + NumPy", rtol, elapsed,
                     float(angle_error_deg(sol.y[:, -1], ref))))
    rows.extend(_numpy_quaternion_rows(t_end, quick))
    kin = {"method": [r[0] for r in rows], "step or tol": [r[1] for r in rows],
           "time [s]": [r[2] for r in rows], "error [deg]": [r[3] for r in rows]}
    # Rigid body: the T-handle against the exact solution.
    from rotode.exact import free_rigid_body

    w0 = np.array([0.05, 5.0, 0.05])
    y0 = np.concatenate([[1.0, 0.0, 0.0, 0.0], w0])
    t_rb = 10.0 if quick else 50.0
    q_ref = free_rigid_body(T_HANDLE, w0, np.array([t_rb]), q0=[1.0, 0, 0, 0])[0][0]
    body = rotode.RigidBody(T_HANDLE)
    rb_dts = [0.02, 0.01] if quick else [0.05, 0.02, 0.01, 0.005, 0.002, 0.001]
    rows = []
    for m in RIGID_WP:
        for dt in rb_dts:
            elapsed, res = best_time(lambda m=m, dt=dt: rotode.integrate(
                body, (0.0, t_rb), y0, method=m, dt=dt, save_every=10**9), repeat)
            rows.append((m, dt, elapsed, float(angle_error_deg(res.q[-1], q_ref))))
    for rtol in ([1e-6, 1e-9] if quick else [1e-5, 1e-7, 1e-9, 1e-11, 1e-13]):
        elapsed, sol = best_time(lambda rtol=rtol: solve_ivp(
            numpy_rigid_body, (0.0, t_rb), y0, method="DOP853", rtol=rtol, atol=rtol * 1e-2),
            repeat)
        rows.append(("solve_ivp DOP853 + NumPy", rtol, elapsed,
                     float(angle_error_deg(sol.y[:4, -1], q_ref))))
    rb = {"method": [r[0] for r in rows], "step or tol": [r[1] for r in rows],
          "time [s]": [r[2] for r in rows], "error [deg]": [r[3] for r in rows]}
    return {"rucker-benchmark": kin, "t-handle": rb}


def _plot_work_precision(data, out_dir, plt):
    for table, title in (("rucker-benchmark", "Rucker 2018 benchmark, error at t_end"),
                         ("t-handle", "T-handle vs exact solution")):
        d = data[table]
        names = list(dict.fromkeys(d["method"]))
        fig, ax = plt.subplots(figsize=(8.6, 4.8))
        colors = plt.get_cmap("tab20").colors
        for k, name in enumerate(names):
            idx = [i for i, m in enumerate(d["method"]) if m == name]
            style = "s--" if " " in name else "o-"
            ax.loglog([d["time [s]"][i] for i in idx],
                      [max(d["error [deg]"][i], 1e-14) for i in idx], style, label=name, ms=4,
                      color=colors[k % len(colors)])
        ax.set(xlabel="run time [s]", ylabel="angular error [deg]", title=title)
        ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.01, 0.5))
        _save(fig, os.path.join(out_dir, f"work-precision-{table}.png"))


@_study("events")
def events_study(quick=False):
    """Events on the rotation group (docs/events.md): a Lagrange top below its sleeping speed
    falls past 60 degrees of tilt (a terminal event), and the T-handle's Dzhanibekov flips (the
    sign changes of w_y) against the exact solution."""
    from scipy.optimize import brentq

    import rotode
    from rotode.exact import free_rigid_body

    top = rotode.RigidBody(TOP_INERTIA, torque=rotode.torque.Gravity(1.0, 1.0, [0, 0, 1]))
    y0 = np.array([1.0, 0, 0, 0, 0.3, 0.0, 3.0])    # w_z = 3 < 4: the upright top is unstable
    tilt = rotode.events.AxisAngle([0, 0, 1], [0, 0, 1], np.radians(60), terminal=True,
                                   direction=+1)
    ts = np.linspace(0.0, 30.0, 601 if quick else 3001)
    res = rotode.integrate(top, (0, 30), y0, method="rkmk8", rtol=1e-10, atol=1e-12,
                           events=tilt, t_eval=ts)
    # (one body's output ends at its stop: the requested times up to t_stop)
    z = rotode.quaternion.rotate(res.q, [0.0, 0.0, 1.0])
    tilt_deg = np.degrees(np.arccos(np.clip(z[:, 2], -1, 1)))
    t_end = 40.0 if quick else 100.0
    w0 = np.array([0.01, 5.0, 0.01])
    flips = rotode.integrate(rotode.RigidBody(T_HANDLE), (0, t_end), np.r_[1.0, 0, 0, 0, w0],
                             method="rkmk8", rtol=1e-12, atol=1e-14,
                             events=[rotode.events.Component("w", 1, 0.0, direction=-1),
                                     rotode.events.Component("w", 1, 0.0, direction=+1)])
    grid = np.linspace(0, t_end, int(20 * t_end) + 1)
    wy = free_rigid_body(T_HANDLE, w0, grid)[1][:, 1]
    idx = np.flatnonzero(np.sign(wy[:-1]) * np.sign(wy[1:]) < 0)
    exact = np.array([brentq(lambda t: free_rigid_body(T_HANDLE, w0, t)[1][1], grid[k],
                             grid[k + 1], xtol=1e-14) for k in idx])
    found = np.sort(np.concatenate(flips.t_events))
    return {"tilt": {"time [s]": res.t, "tilt [deg]": tilt_deg,
                     "stop [s]": np.full(res.t.size, res.t_stop)},
            "flips": {"rotode [s]": found, "exact [s]": exact[:len(found)],
                      "difference [s]": found - exact[:len(found)]},
            "wy": {"time [s]": grid, "w_y [rad/s]": wy}}


def _plot_events(data, out_dir, plt):
    fig, (a, b) = plt.subplots(1, 2, figsize=(11, 3.8))
    tl = data["tilt"]
    a.plot(tl["time [s]"], tl["tilt [deg]"], color="tab:blue", label="tilt of the top's axis")
    a.axhline(60, color="0.6", ls=":", label="60 deg (terminal event)")
    a.axvline(tl["stop [s]"][0], color="tab:red", ls="--",
              label=f"stopped at t = {tl['stop [s]'][0]:.4f} s")
    a.set(xlabel="time [s]", ylabel="tilt [deg]", title="A Lagrange top falls (rkmk8)")
    a.legend(fontsize=8)
    w = data["wy"]
    b.plot(w["time [s]"], w["w_y [rad/s]"], color="0.4", lw=1, label="exact w_y")
    f = data["flips"]
    b.plot(f["rotode [s]"], np.zeros(len(f["rotode [s]"])), "o", color="tab:red", ms=5,
           label=f"{len(f['rotode [s]'])} sign changes located "
                 f"(max |dt| = {np.abs(f['difference [s]']).max():.1e} s)")
    b.set(xlabel="time [s]", ylabel="w_y [rad/s]", title="Dzhanibekov flips of the T-handle")
    b.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.17), ncol=2)
    _save(fig, os.path.join(out_dir, "events.png"))


_PLOTS = {"lagrange-top": _plot_lagrange_top, "rucker-benchmark": _plot_rucker,
          "energy-map": _plot_energy_map, "work-precision": _plot_work_precision,
          "newton-map": _plot_newton_map, "events": _plot_events}


DEFAULT_STUDY_DIR = "rotode-studies"


def run_study(name, out_dir=None, quick=False, plot=True, progress=print):
    """Run study ``name``; write its CSV tables (and figures) to ``out_dir``; return the data.

    Parameters
    ----------
    name : str
        One of `STUDIES`.
    out_dir : str, optional
        Output directory (created if needed); default ``rotode-studies`` in the current
        directory. The committed figures are regenerated only on purpose, with
        ``out_dir="docs/figures"``.
    quick : bool
        Reduced sizes (for tests and smoke runs).
    plot : bool
        Write PNG figures when matplotlib is installed.
    progress : callable or None
        Called with a line of text as the study proceeds.
    """
    if name not in STUDIES:
        raise ValueError(f"unknown study {name!r}; choose one of {sorted(STUDIES)}")
    out_dir = out_dir or DEFAULT_STUDY_DIR
    os.makedirs(out_dir, exist_ok=True)
    start = time.perf_counter()
    if progress:
        progress(f"{name}: running{' (quick sizes)' if quick else ''} ...")
    with np.errstate(over="ignore", invalid="ignore"):
        data = STUDIES[name](quick=quick)
    for table, columns in data.items():
        path = os.path.join(out_dir, f"{name}-{table}.csv")
        write_csv(path, list(columns), list(columns.values()))
        if progress:
            progress(f"wrote {path}")
    plt = _pyplot() if plot else None
    if plt is not None and name in _PLOTS:
        _PLOTS[name](data, out_dir, plt)
        if progress:
            progress(f"wrote the {name} figures to {out_dir}")
    elif plot and progress:
        progress("matplotlib is not installed: CSV only (pip install 'rotode[plot]')")
    if progress:
        progress(f"{name}: {time.perf_counter() - start:.1f} s")
    return data
