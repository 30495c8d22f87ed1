"""``python -m rotode demo``: rotode's native methods on two real cases, checked and timed.

1. Known angular velocity: the benchmark of Rucker (2018), integrated by every kinematic method
   and by SciPy's ``solve_ivp``, against a high-accuracy reference run.
2. A free rigid body near its intermediate axis (the T-handle), integrated by the rigid-body
   methods and by the explicit Euler step of game engines, against the exact solution.
3. The exponential map: accuracy against SciPy, and speed on one and on a million rotations.

Every contender is timed with the same protocol (best of ``REPEAT`` calls, the first of which
warms up), and each table ends with its conclusion, computed from the rows above it. With
matplotlib installed the plots go to ``out_dir``.

References: C. Rucker, "Integrating Rotations using Non-Unit Quaternions", IEEE Robotics and
Automation Letters 3(4), 2018, eq. 29 (the benchmark); L. D. Landau and E. M. Lifshitz,
Mechanics, 3rd ed., sec. 37 (the exact free rigid body, `rotode.exact`).
"""
import os
import sys
import time
import timeit

import numpy as np
from scipy.integrate import solve_ivp

import rotode
from rotode import methods as _methods
from rotode.studies import (
    T_HANDLE,
    _pyplot,
    _save,
    angle_error_deg,
    best_time,
    numpy_quaternion_kinematics,
    seed004_omega,
    seed004_reference,
)

REPEAT = 3
WIDTH = 100
_CG = _methods.names(family="Crouch-Grossman")     # from the registry, by increasing order
KINEMATIC_FAMILIES = {
    "exponential updates": ("lie_euler", "exp2", "magnus_ca"),
    "Magnus (Gauss nodes)": _methods.names("kinematics", "magnus"),
    "Crouch-Grossman": _CG,
    "RK on non-unit q": ("rk3", "rk4", "ab3"),
}
RIGID_FAMILIES = {
    "Lie group": ("lie_euler", "exp2", _CG[-1]),
    "RK on q": ("rk4", "rkn4"),
    "implicit": ("implicit_midpoint", "trapezoid", "object_trapezoid"),
}
THANDLE_W0 = np.array([0.01, 5.0, 0.01])
# the baseline is drawn dashed on top, so a method that coincides with it stays visible
BASELINE_STYLE = dict(color="black", ls="--", lw=1.6, zorder=5)


def _say(text):
    """Print a paragraph wrapped to WIDTH columns."""
    import textwrap

    for para in text.split("\n"):
        print(textwrap.fill(para, WIDTH))


def _table(rows, header):
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    line = "  ".join(f"{{:<{w}}}" for w in widths)
    for r in [header, ["-" * w for w in widths], *rows]:
        print(line.format(*r).rstrip())


def _conclusion(text):
    _say("Conclusion: " + text)


def _progress(text):
    print(f"  ... {text}", file=sys.stderr, flush=True)


def kinematics_case(dt=0.05, t_end=100.0):
    """Every kinematic method on Rucker's benchmark at one step size, plus solve_ivp."""
    t_out = np.linspace(0.0, t_end, 201)
    ref = seed004_reference(t_out)
    rhs = rotode.QuaternionKinematics(seed004_omega(), frame="body")
    check = solve_ivp(rhs, (0.0, t_end), [1.0, 0, 0, 0], method="DOP853", rtol=1e-12,
                      atol=1e-13, t_eval=t_out).y.T
    ref_accuracy = angle_error_deg(check, ref).max()
    n_steps = int(round(t_end / dt))
    _say(f"\n1. Known angular velocity (gyroscope kinematics). Benchmark of Rucker (2018, eq. "
         f"29): body rate w_i(t) = (pi/2) sin(2 pi t / 10 + phase_i), phases 0, 2pi/3, 4pi/3, "
         f"from the identity for {t_end:g} s. It has no closed form: the reference is "
         f"solve_ivp(DOP853) at rtol 1e-13 on rotode's compiled right-hand side, which a run "
         f"at rtol 1e-12 matches to {ref_accuracy:.0e} deg. Every rotode method takes "
         f"{n_steps} steps of {dt:g} s; the baseline is solve_ivp(DOP853, rtol 1e-10) with a "
         f"NumPy right-hand side. Times are the best of {REPEAT} calls for every row.")
    rows, curves, results = [], {}, {}
    for family, methods in KINEMATIC_FAMILIES.items():
        for m in methods:
            _progress(f"kinematics: {m}")
            elapsed, res = best_time(lambda m=m: rotode.integrate(
                seed004_omega(), (0.0, t_end), [1.0, 0, 0, 0], method=m, dt=dt, t_eval=t_out),
                REPEAT)
            err = angle_error_deg(res.q, ref)
            drift = np.abs(np.linalg.norm(res.q, axis=1) - 1.0).max()
            curves[m] = err
            results[m] = (err[-1], drift, elapsed)
            rows.append([m, family, f"{err[-1]:.1e}", f"{drift:.0e}", f"{elapsed * 1e3:.2f}"])
    _progress("kinematics: solve_ivp DOP853 + NumPy")
    elapsed, sol = best_time(lambda: solve_ivp(
        numpy_quaternion_kinematics, (0.0, t_end), [1.0, 0, 0, 0], method="DOP853", rtol=1e-10,
        atol=1e-12, t_eval=t_out), REPEAT)
    err = angle_error_deg(sol.y.T, ref)
    drift = np.abs(np.linalg.norm(sol.y, axis=0) - 1.0).max()
    curves["solve_ivp DOP853 (NumPy)"] = err
    base = (err[-1], drift, elapsed)
    rows.append(["solve_ivp DOP853", f"NumPy, {sol.nfev} calls", f"{err[-1]:.1e}",
                 f"{drift:.0e}", f"{elapsed * 1e3:.2f}"])
    _table(rows, ["method", "family", "end error [deg]", "max ||q| - 1|", "time [ms]"])

    better = {m: r for m, r in results.items() if r[0] <= base[0]}
    best = min(better, key=lambda m: better[m][2]) if better else \
        min(results, key=lambda m: results[m][0])
    e, _, t = results[best]
    lie = max(r[1] for m, r in results.items() if not m.startswith(("rk", "ab")))
    rk = {m: results[m][1] for m in ("rk3", "rk4", "ab3")}
    _conclusion(
        f"{best} reaches {e:.1e} deg in {t * 1e3:.2f} ms; solve_ivp(DOP853) with a NumPy "
        f"right-hand side reaches {base[0]:.1e} deg in {base[2] * 1e3:.1f} ms, so {best} is "
        f"{base[2] / t:.0f}x faster and {base[0] / e:.0f}x more accurate. Methods that update "
        f"by a rotation keep |q| = 1 to {lie:.0e}; RK on non-unit quaternions lets the norm "
        f"drift (rk3 {rk['rk3']:.0e}, ab3 {rk['ab3']:.0e}), which does not change the rotation "
        "(R(q) = R(q/|q|), Rucker eq. 13).")
    return t_out, curves


def rigid_body_case(dt=1 / 60, t_end=100.0):
    """Rigid-body methods on the T-handle at a game frame rate, against the exact solution."""
    from rotode.exact import free_rigid_body
    from rotode.studies.thandle import explicit_euler, flip_times

    body = rotode.RigidBody(T_HANDLE)
    y0 = np.concatenate([[1.0, 0.0, 0.0, 0.0], THANDLE_W0])
    n = int(round(t_end / dt))
    t = dt * np.arange(n + 1)
    q_ex, w_ex = free_rigid_body(T_HANDLE, THANDLE_W0, t, q0=[1.0, 0, 0, 0])
    e0 = body.energy(y0)
    L0 = np.linalg.norm(body.angular_momentum(y0))
    flips_ex = flip_times(t, w_ex[:, 1])
    moments = ", ".join(f"{x:g}" for x in T_HANDLE)
    w0 = ", ".join(f"{x:g}" for x in THANDLE_W0)
    _say(f"\n2. Free rigid body near its intermediate axis (a T-handle: principal moments "
         f"{moments}; w0 = ({w0}) rad/s), which flips over every "
         f"{np.diff(flips_ex).mean():.1f} s (Dzhanibekov effect). The reference is exact: "
         f"rotode.exact.free_rigid_body (Jacobi elliptic "
         f"functions; Landau and Lifshitz, Mechanics, sec. 37). {n} steps of 1/{round(1 / dt)} "
         f"s, a game frame rate, for {t_end:g} s; the baseline is the explicit Euler step of "
         f"game engines in a NumPy loop. Best of {REPEAT} calls for every row.")
    rows, series, results = [], {"exact": (w_ex[:, 1], np.zeros_like(t))}, {}

    def row(name, family, q, w, elapsed):
        y = np.concatenate([q, w], axis=1).T
        de = np.abs(body.energy(y) / e0 - 1)
        dL = np.abs(np.linalg.norm(body.angular_momentum(y), axis=0) / L0 - 1)
        flips = flip_times(t, w[:, 1])
        k = min(len(flips), len(flips_ex))
        shift = np.abs(flips[:k] - flips_ex[:k]).max() if k else np.nan
        err = angle_error_deg(q[-1], q_ex[-1])
        results[name] = (err, de.max(), dL.max(), len(flips), shift, elapsed)
        rows.append([name, family, f"{err:.1e}", f"{de.max():.0e}", f"{dL.max():.0e}",
                     f"{shift:.2f}", f"{elapsed * 1e3:.1f}"])
        series[name] = (w[:, 1], body.energy(y) / e0 - 1)

    _progress("rigid body: explicit Euler (NumPy loop)")
    elapsed, (q, w) = best_time(lambda: explicit_euler(T_HANDLE, THANDLE_W0, y0[:4], dt, n),
                                REPEAT)
    row("explicit Euler", "NumPy loop", q, w, elapsed)
    for family, methods in RIGID_FAMILIES.items():
        for m in methods:
            _progress(f"rigid body: {m}")
            elapsed, res = best_time(lambda m=m: rotode.integrate(
                body, (0.0, t_end), y0, method=m, dt=dt), REPEAT)
            row(m, family, res.q, res.w, elapsed)
    _table(rows, ["method", "family", "end error [deg]", "max |dE/E|", "max |dL/L|",
                  "flip error [s]", "time [ms]"])

    rotode_rows = {m: r for m, r in results.items() if m != "explicit Euler"}
    best = min(rotode_rows, key=lambda m: rotode_rows[m][0])
    euler = results["explicit Euler"]
    flips_ok = all(r[3] == len(flips_ex) for r in results.values())
    momentum = [m for m, r in rotode_rows.items() if r[2] < 1e-12]
    both = [m for m, r in rotode_rows.items() if r[1] < 1e-12 and r[2] < 1e-12]
    _conclusion(
        f"{best} ends {rotode_rows[best][0]:.1e} deg from the exact orientation in "
        f"{rotode_rows[best][5] * 1e3:.1f} ms; explicit Euler ends {euler[0]:.0f} deg off in "
        f"{euler[5] * 1e3:.0f} ms ({euler[0] / rotode_rows[best][0]:.0f}x the error, "
        f"{euler[5] / rotode_rows[best][5]:.0f}x the time). "
        + (f"Every method sees all {len(flips_ex)} flips. " if flips_ok else "")
        + f"{', '.join(momentum)} keep |L| to round-off"
        + (f", and {', '.join(both)} the energy too." if both else "."))
    return t, series


def exp_case():
    """exp/log accuracy against SciPy, and speed on one and on a million rotation vectors."""
    from scipy.spatial.transform import Rotation

    from rotode import quaternion, so3

    rng = np.random.default_rng(0)
    axes = rng.normal(size=(200_000, 3))
    axes /= np.linalg.norm(axes, axis=1, keepdims=True)
    _say("\n3. The exponential map R(v) of rotation vectors v (Rodrigues' formula with "
         "polynomial coefficients) and its inverse, against SciPy's Rotation: 200 000 random "
         "axes per angle range.")
    rows, worst = [], 0.0
    for lo, hi in [(0, 1e-6), (1e-6, 1.0), (1.0, 3.0), (3.0, np.pi - 1e-6)]:
        v = axes * rng.uniform(lo, hi, (len(axes), 1))
        back = so3.log(so3.exp(v))
        rel = np.linalg.norm(back - v, axis=1) / np.linalg.norm(v, axis=1)
        dev = np.abs(so3.exp(v) - Rotation.from_rotvec(v).as_matrix()).max()
        worst = max(worst, dev)
        rows.append([f"{lo:.0e} .. {hi:.4g}", f"{rel.max():.1e}", f"{dev:.1e}"])
    _table(rows, ["angle [rad]", "max rel. error of log(exp(v))", "max |R - R_scipy|"])
    _conclusion(f"rotode and SciPy agree to {worst:.0e} (a few units of round-off) at every "
                "angle, near 0 and near a half turn included.")

    v = np.random.default_rng(1).normal(size=(1_000_000, 3))
    out = np.empty((v.shape[0], 3, 3))
    isa = so3._rows_isa()

    def portable():
        so3._rows_isa(0)
        try:
            return so3.exp(v)
        finally:
            so3._rows_isa(2)

    runs = {f"so3.exp(v) ({isa} loop)": lambda: so3.exp(v),
            f"so3.exp(v, out=R) ({isa} loop)": lambda: so3.exp(v, out=out),
            "so3.exp(v) (portable loop)": portable,
            "SciPy Rotation.from_rotvec(v).as_matrix()": lambda: Rotation.from_rotvec(v)
            .as_matrix()}
    # rounds that time every variant once, so that all see the same machine state
    best = dict.fromkeys(runs, np.inf)
    for _ in range(7):
        for name, run in runs.items():
            best[name] = min(best[name], best_time(run, 1)[0])
    t_scipy = best["SciPy Rotation.from_rotvec(v).as_matrix()"]
    print("\nOne million rotation vectors to matrices (best of 7 interleaved rounds)")
    _table([[name, f"{t * 1e3:.1f}", f"{t_scipy / t:.1f}x"] for name, t in best.items()],
           ["call", "time [ms]", "speed-up vs SciPy"])
    first = next(iter(best))
    _conclusion(f"so3.exp is {t_scipy / best[first]:.1f}x faster than SciPy on a million "
                f"rotations ({t_scipy / best[f'so3.exp(v, out=R) ({isa} loop)']:.1f}x into a "
                "reused array).")

    p, q = np.array([0.9, 0.1, -0.3, 0.2]), np.array([0.5, 0.5, 0.5, 0.5])
    w, R = np.array([0.3, -1.2, 2.0]), so3.exp([0.3, -1.2, 2.0])
    P, Qr = Rotation.from_quat(p, scalar_first=True), Rotation.from_quat(q, scalar_first=True)
    single = [("quaternion.multiply(p, q)", lambda: quaternion.multiply(p, q), "p * q",
               lambda: P * Qr),
              ("quaternion.rotate(q, v)", lambda: quaternion.rotate(q, w), "q.apply(v)",
               lambda: Qr.apply(w)),
              ("quaternion.to_matrix(q)", lambda: quaternion.to_matrix(q), "q.as_matrix()",
               lambda: Qr.as_matrix()),
              ("so3.exp(v)", lambda: so3.exp(w), "from_rotvec(v).as_matrix()",
               lambda: Rotation.from_rotvec(w).as_matrix()),
              ("so3.log(R)", lambda: so3.log(R), "from_matrix(R).as_rotvec()",
               lambda: Rotation.from_matrix(R).as_rotvec())]

    def per_call(f):
        return min(timeit.repeat(f, number=2000, repeat=7)) / 2000

    rows, ratios, times = [], [], []
    for name, f, sname, g in single:
        a, b = per_call(f), per_call(g)
        ratios.append(b / a)
        times.append(a)
        rows.append([name, f"{a * 1e6:.2f}", sname, f"{b * 1e6:.2f}", f"{b / a:.0f}x"])
    print("\nOne rotation per call, as in a control loop (SciPy's Rotation objects made "
          "beforehand)")
    _table(rows, ["rotode call", "time [us]", "SciPy Rotation", "time [us]", "speed-up"])
    _conclusion(f"on one rotation rotode's calls took {min(times) * 1e6:.2f}-"
                f"{max(times) * 1e6:.2f} us here, {min(ratios):.0f}-{max(ratios):.0f}x faster than "
                "the same SciPy call.")


def _styles(families):
    """A distinct (colour, marker, line style) per method; one line style per family."""
    import matplotlib

    colours = matplotlib.colormaps["tab20"].colors
    lines = ["-", "--", ":", "-."]
    markers = ["o", "s", "^", "D"]
    style = {}
    for k, methods in enumerate(families.values()):
        for j, m in enumerate(methods):
            style[m] = dict(color=colours[(8 * k + 2 * j) % 20], ls=lines[k % 4],
                            marker=markers[j % 4], markevery=0.1, ms=4, lw=1.2)
    return style


def _plots(out_dir, kinematics, rigid):
    plt = _pyplot()
    if plt is None:
        print("\n(matplotlib is not installed, so no plots: python -m pip install matplotlib)")
        return
    os.makedirs(out_dir, exist_ok=True)
    t, curves = kinematics
    style = _styles(KINEMATIC_FAMILIES)
    fig, ax = plt.subplots(figsize=(9.0, 4.8))
    for name, err in curves.items():
        kw = style.get(name, BASELINE_STYLE)
        ax.semilogy(t[1:], np.maximum(err[1:], 1e-16), label=name, **kw)
    ax.set(xlabel="time t [s]", ylabel="angular error [deg] (log scale)",
           title="Rucker (2018) benchmark, dt = 0.05 s: error against the reference")
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    _save(fig, os.path.join(out_dir, "demo-kinematics-error.png"))

    t, series = rigid
    style = _styles(RIGID_FAMILIES)
    fig, ax = plt.subplots(figsize=(9.0, 4.8))
    for name, (_, de) in series.items():
        if name == "exact":
            continue
        kw = style.get(name, BASELINE_STYLE)
        ax.semilogy(t[1:], np.maximum(np.abs(de[1:]), 1e-17), label=name, **kw)
    ax.set(xlabel="time t [s]", ylabel="|E(t)/E(0) - 1| (log scale)",
           title="T-handle at dt = 1/60 s: relative energy error")
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    _save(fig, os.path.join(out_dir, "demo-rigid-body-energy.png"))

    fig, ax = plt.subplots(figsize=(9.0, 4.0))
    for name, kw in [("exact", dict(color="black", lw=2.2)),
                     ("explicit Euler", dict(color="tab:red", ls="--", lw=1.2)),
                     ("implicit_midpoint", dict(color="tab:blue", ls=":", lw=1.6))]:
        ax.plot(t, series[name][0], label=name, **kw)
    ax.set(xlabel="time t [s]", ylabel="w_y, intermediate axis [rad/s]",
           title="Dzhanibekov flips of the T-handle, dt = 1/60 s")
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    _save(fig, os.path.join(out_dir, "demo-rigid-body-flips.png"))
    print(f"\nPlots written to {os.path.abspath(out_dir)}/demo-*.png")


def demo(out_dir="rotode-demo", plots=True):
    """Run the three cases, print their tables and conclusions, write the plots; return 0."""
    start = time.perf_counter()
    _say("rotode demo: rotations integrated by compiled methods, checked against exact or "
         "high-accuracy references and timed beside SciPy.")
    kinematics = kinematics_case()
    rigid = rigid_body_case()
    exp_case()
    if plots:
        _plots(out_dir, kinematics, rigid)
    print(f"\ndemo finished in {time.perf_counter() - start:.1f} s")
    return 0
