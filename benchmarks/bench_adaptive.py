"""Work-precision of rotode's error-controlled methods against CyRK and SciPy, one process.

Run after ``python -m pip install ".[bench]"``:
    python benchmarks/bench_adaptive.py [--quick] [--plot FILE.png]
(``--plot`` draws the work-precision diagram of every tool and case, e.g. the README's
docs/figures/work-precision-adaptive.png; it needs matplotlib, the ``plot`` extra).

Three cases at T = 100 s (final-time orientation error in degrees):
  - the upright Lagrange top of Rucker 2018 sec. IV (I = diag(1, 1, 0.5), m = g = h = 1,
    com = +e3, w0 = (1.5, 0, 1)); reference: rotode's dop853 at rtol 1e-13, cross-checked
    against SciPy's DOP853 at rtol 1e-13 and against rotode's rk4 at dt = 1e-4;
  - the tumbling T-handle of Mizerski 2020 sec. 11 (I = (2.5, 1.4, 1.3), w0 = (0.01, 5, 0.01));
    reference: the exact solution `rotode.exact.free_rigid_body`;
  - the kinematics benchmark of Rucker 2018 (eq. 29); reference: magnus8 at dt = 1e-3.
For each tool and setting (tolerance ladder, or step ladder for the fixed-step methods) the best
of several wall times is measured; for each target accuracy 1e-4 .. 1e-10 deg the fastest
setting that reaches it is reported, with rotode's speed-up over CyRK's compiled DOP853
(``nbsolve_ivp`` with a numba right-hand side) and over ``scipy.integrate.solve_ivp(DOP853)``
with a NumPy right-hand side.
"""
import gc
import os
import sys
import time
from functools import partial

# OpenBLAS worker threads spin after a BLAS call (the references use numpy.linalg) and take a
# core from whichever tool is being timed on a small machine: one thread for every tool
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402
from scipy.integrate import solve_ivp  # noqa: E402

import rotode  # noqa: E402
from rotode.exact import free_rigid_body
from rotode.studies import (
    SEED004_A,
    SEED004_B,
    SEED004_PHASE,
    T_HANDLE,
    TOP_INERTIA,
    TOP_W0,
    numpy_quaternion_kinematics,
    numpy_rigid_body,
)

T = 100.0
TARGETS = (1e-4, 1e-6, 1e-8, 1e-10)
# half decades, the same ladder for every tool
RTOLS = tuple(10.0 ** (-k / 2) for k in range(6, 27))
PAIRS = ("dop853", "dopri5", "rkmk8", "rkmk5")


def angle_deg(q, r):
    q = np.asarray(q, dtype=float) / np.linalg.norm(q)
    r = np.asarray(r, dtype=float) / np.linalg.norm(r)
    return float(np.degrees(2 * np.arcsin(min(1.0, np.linalg.norm(
        rotode.quaternion.multiply(rotode.quaternion.conjugate(r), q)[1:])))))


def best_alternated(runs, repeat):
    """The best time of each of ``runs`` (callables) and its result, over `repeat` rounds that
    each run every callable once in turn: the tools compared in one case take turns, so a slow
    spell of the machine (another process, the clock) falls on all of them alike rather than on
    one tool's consecutive repeats. The garbage collector is off while they run, as in
    `timeit` (a collection inside a 0.1 ms run doubled it)."""
    times = [np.inf] * len(runs)
    outs = [None] * len(runs)
    enabled = gc.isenabled()
    gc.disable()
    try:
        for _ in range(repeat):
            for k, run in enumerate(runs):
                start = time.perf_counter()
                outs[k] = run()
                times[k] = min(times[k], time.perf_counter() - start)
    finally:
        if enabled:
            gc.enable()
    return list(zip(times, outs, strict=True))


# ---- right-hand sides for the peers ----------------------------------------------------------

def numpy_top(t, y):
    """Lagrange top, non-unit quaternion: q' = 1/2 q w, w' = I^-1 (tau - w x I w)."""
    q, w = y[:4], y[4:]
    n2 = q @ q
    s = 2.0 / n2
    d = np.array([-s * (q[1] * q[3] - q[0] * q[2]), -s * (q[2] * q[3] + q[0] * q[1]),
                  -(1.0 - s * (q[1] * q[1] + q[2] * q[2]))])       # R(q)^T (0, 0, -1)
    tau = np.array([-d[1], d[0], 0.0])                            # com x (m g d), com = e3
    Iw = TOP_INERTIA * w
    gyro = np.array([w[1] * Iw[2] - w[2] * Iw[1], w[2] * Iw[0] - w[0] * Iw[2],
                     w[0] * Iw[1] - w[1] * Iw[0]])
    dq = 0.5 * np.array([-q[1] * w[0] - q[2] * w[1] - q[3] * w[2],
                         q[0] * w[0] + q[2] * w[2] - q[3] * w[1],
                         q[0] * w[1] - q[1] * w[2] + q[3] * w[0],
                         q[0] * w[2] + q[1] * w[1] - q[2] * w[0]])
    return np.concatenate([dq, (tau - gyro) / TOP_INERTIA])


def numba_rhs():
    """The three right-hand sides compiled by numba, in CyRK's ``diffeq(t, y) -> dy`` form."""
    from numba import njit
    A, B, P = SEED004_A, SEED004_B, SEED004_PHASE.copy()
    Itop, Ith = TOP_INERTIA.copy(), T_HANDLE.copy()

    @njit(cache=True)
    def kin(t, q):
        dy = np.empty(4)
        w0 = A * np.sin(B * t + P[0])
        w1 = A * np.sin(B * t + P[1])
        w2 = A * np.sin(B * t + P[2])
        dy[0] = 0.5 * (-q[1] * w0 - q[2] * w1 - q[3] * w2)
        dy[1] = 0.5 * (q[0] * w0 + q[2] * w2 - q[3] * w1)
        dy[2] = 0.5 * (q[0] * w1 - q[1] * w2 + q[3] * w0)
        dy[3] = 0.5 * (q[0] * w2 + q[1] * w1 - q[2] * w0)
        return dy

    @njit(cache=True)
    def body(dy, y, inertia, t0, t1, t2):
        w0, w1, w2 = y[4], y[5], y[6]
        dy[0] = 0.5 * (-y[1] * w0 - y[2] * w1 - y[3] * w2)
        dy[1] = 0.5 * (y[0] * w0 + y[2] * w2 - y[3] * w1)
        dy[2] = 0.5 * (y[0] * w1 - y[1] * w2 + y[3] * w0)
        dy[3] = 0.5 * (y[0] * w2 + y[1] * w1 - y[2] * w0)
        i0, i1, i2 = inertia[0] * w0, inertia[1] * w1, inertia[2] * w2
        dy[4] = (t0 - (w1 * i2 - w2 * i1)) / inertia[0]
        dy[5] = (t1 - (w2 * i0 - w0 * i2)) / inertia[1]
        dy[6] = (t2 - (w0 * i1 - w1 * i0)) / inertia[2]

    @njit(cache=True)
    def top(t, y):
        dy = np.empty(7)
        s = 2.0 / (y[0] * y[0] + y[1] * y[1] + y[2] * y[2] + y[3] * y[3])
        d0 = -s * (y[1] * y[3] - y[0] * y[2])
        d1 = -s * (y[2] * y[3] + y[0] * y[1])
        body(dy, y, Itop, -d1, d0, 0.0)
        return dy

    @njit(cache=True)
    def thandle(t, y):
        dy = np.empty(7)
        body(dy, y, Ith, 0.0, 0.0, 0.0)
        return dy

    return {"kinematics": kin, "top": top, "T-handle": thandle}


# ---- the cases -------------------------------------------------------------------------------

def cases():
    w = rotode.omega.Sinusoid(amplitude=SEED004_A, rate=SEED004_B, phase=SEED004_PHASE)
    top = rotode.RigidBody(TOP_INERTIA, torque=rotode.torque.Gravity(1.0, 1.0, [0, 0, 1]))
    y_top = np.concatenate([[1.0, 0, 0, 0], TOP_W0])
    y_th = np.array([1.0, 0, 0, 0, 0.01, 5.0, 0.01])
    ref_kin = rotode.integrate(w, (0, T), [1, 0, 0, 0], method="magnus8", dt=1e-3).q[-1]
    ref_top = rotode.integrate(top, (0, T), y_top, method="dop853", rtol=1e-13,
                               atol=1e-15).q[-1]
    check = solve_ivp(numpy_top, (0, T), y_top, method="DOP853", rtol=1e-13, atol=1e-15)
    check2 = rotode.integrate(top, (0, T), y_top, method="rk4", dt=1e-4).q[-1]
    print(f"Lagrange top reference: |rotode dop853 - SciPy DOP853| = "
          f"{angle_deg(ref_top, check.y[:4, -1]):.1e} deg, |dop853 - rk4 (dt 1e-4)| = "
          f"{angle_deg(ref_top, check2):.1e} deg")
    ref_th = free_rigid_body(T_HANDLE, y_th[4:], T, q0=y_th[:4])[0]
    return {
        "kinematics": dict(model=w, y0=np.array([1.0, 0, 0, 0]), ref=ref_kin,
                           numpy=numpy_quaternion_kinematics, fixed=("magnus8", "magnus6"),
                           adaptive=PAIRS + ("magnus8", "magnus6")),
        "top": dict(model=top, y0=y_top, ref=ref_top, numpy=numpy_top, fixed=("rk4",),
                    adaptive=PAIRS),
        "T-handle": dict(model=rotode.RigidBody(T_HANDLE), y0=y_th, ref=ref_th,
                         numpy=lambda t, y: numpy_rigid_body(t, y, T_HANDLE), fixed=("rk4",),
                         adaptive=PAIRS),
    }


def measure(case, nb, repeat):
    """rows (tool, setting, seconds, error deg) for one case: rotode's and CyRK's settings timed
    in alternated rounds (`best_alternated`), SciPy's (10-100x slower) once each."""
    run = partial(rotode.integrate, case["model"], (0, T), case["y0"])
    timed = []                      # (tool, setting, callable, final quaternion of a result)
    for method in case["adaptive"]:
        for rtol in RTOLS:
            timed.append((f"rotode {method}", f"rtol {rtol:.1e}",
                          partial(run, method=method, rtol=rtol, atol=rtol * 1e-3),
                          lambda res: res.q[-1] if res.success else None))
    for method in case["fixed"]:
        for n in (1000, 2000, 4000, 8000, 16000, 32000):
            timed.append((f"rotode {method} (fixed dt)", f"dt {T / n:.3g}",
                          partial(run, method=method, dt=T / n, save_every=10**9),
                          lambda res: res.q[-1]))
    if nb is not None:
        from CyRK import nbsolve_ivp
        for rtol in RTOLS:
            cyrk = partial(nbsolve_ivp, nb, (0.0, T), case["y0"], rtol=rtol, atol=rtol * 1e-3,
                           rk_method=2, warnings=False)
            cyrk()                                          # compile for this signature
            timed.append(("CyRK DOP853 (numba)", f"rtol {rtol:.1e}", cyrk,
                          lambda res: res.y[:4, -1] if res.success else None))
    rows = []
    for (tool, setting, _, final), (sec, res) in zip(
            timed, best_alternated([t[2] for t in timed], repeat), strict=True):
        q = final(res)
        if q is not None:
            rows.append((tool, setting, sec, angle_deg(q, case["ref"])))
    for rtol in RTOLS:
        [(sec, res)] = best_alternated([partial(solve_ivp, case["numpy"], (0, T), case["y0"],
                                                method="DOP853", rtol=rtol,
                                                atol=rtol * 1e-3)], 1)
        rows.append(("SciPy DOP853 (NumPy rhs)", f"rtol {rtol:.1e}", sec,
                     angle_deg(res.y[:4, -1], case["ref"])))
    return rows


def fastest(rows, prefix, target, exact=False):
    ok = [r for r in rows if (r[0] == prefix if exact else r[0].startswith(prefix))
          and r[3] <= target]
    return min(ok, key=lambda r: r[2]) if ok else None


def plot(results, path):
    """Work-precision diagram: final error against wall time, one panel per case."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(results), figsize=(5.2 * len(results), 4.6))
    # the peers in black and grey; rotode's tools in tab10 without its grey (index 7), so that
    # no rotode curve shares the SciPy curve's colour, and fixed steps dash-dotted (not dotted)
    styles = {"CyRK": ("k", "s", "--"), "SciPy": ("0.5", "^", ":")}
    colours = [c for i, c in enumerate(plt.get_cmap("tab10").colors) if i != 7]
    every = list(dict.fromkeys(r[0] for rows in results.values() for r in rows
                               if r[0].startswith("rotode")))
    for ax, (name, rows) in zip(axes, results.items(), strict=True):
        tools = list(dict.fromkeys(r[0] for r in rows))
        for tool in tools:
            pts = sorted((r[2], r[3]) for r in rows if r[0] == tool and r[3] > 0)
            if not pts:
                continue
            k = every.index(tool) if tool in every else 0
            colour, marker, line = styles.get(
                tool.split()[0], (colours[k % len(colours)], "o", "-." if "fixed" in tool else "-"))
            ax.loglog([p[0] * 1e3 for p in pts], [p[1] for p in pts], line, color=colour,
                      marker=marker, ms=3.5, lw=1.2, label=tool.replace("rotode ", ""))
        for target in TARGETS:
            ax.axhline(target, color="0.85", lw=0.6, zorder=0)
        ax.set_title(f"{name} (T = {T:g} s)")
        ax.set_xlabel("wall time per run (ms)")
        ax.set_ylabel("final orientation error (deg)")
        ax.grid(True, which="major", alpha=0.3)
    handles, labels = [], []
    for ax in axes:
        for h, lab in zip(*ax.get_legend_handles_labels(), strict=True):
            if lab not in labels:
                handles.append(h)
                labels.append(lab)
    fig.legend(handles, labels, loc="center left", bbox_to_anchor=(1.0, 0.5), frameon=False)
    fig.tight_layout()
    fig.savefig(path, dpi=110, bbox_inches="tight")
    print(f"\nwrote {path}")


def main(quick=False, plot_path=None):
    try:
        nbs = numba_rhs()
    except ImportError:
        nbs = {}
        print("(CyRK/numba not installed: python -m pip install '.[bench]')")
    repeat = 3 if quick else 7
    results = {}
    for name, case in cases().items():
        rows = results[name] = measure(case, nbs.get(name), repeat)
        print(f"\n{name}: fastest setting reaching each final-time accuracy (T = {T:g} s)")
        print(f"  {'target':>8}  {'rotode':>34}  {'CyRK DOP853':>24}  {'SciPy DOP853':>22}  "
              f"{'vs CyRK':>8}  {'vs SciPy':>8}")
        print("  (rotode: " + ", ".join(dict.fromkeys(r[0][7:].split()[0] for r in rows
                                                      if r[0].startswith("rotode"))) + ")")
        for target in TARGETS:
            r = fastest(rows, "rotode", target)
            label = "" if r is None else r[0][7:].split()[0] + ", "
            c = fastest(rows, "CyRK", target)
            s = fastest(rows, "SciPy", target)

            def cell(x):
                return "-" if x is None else f"{x[2] * 1e3:7.3f} ms ({x[1]})"

            vs_c = "-" if r is None or c is None else f"{c[2] / r[2]:.2f}x"
            vs_s = "-" if r is None or s is None else f"{s[2] / r[2]:.0f}x"
            mine = cell(r).replace("(", "(" + label)
            print(f"  {target:8.0e}  {mine:>34}  {cell(c):>24}  {cell(s):>22}  "
                  f"{vs_c:>8}  {vs_s:>8}")
        print("  each rotode method at its fastest setting (ms; x = CyRK's time / this one's):")
        for tool in dict.fromkeys(r[0] for r in rows if r[0].startswith("rotode")):
            cells = []
            for target in TARGETS:
                r, c = fastest(rows, tool, target, exact=True), fastest(rows, "CyRK", target)
                cells.append("-" if r is None else f"{r[2] * 1e3:.3f}" + (
                    "" if c is None else f" ({c[2] / r[2]:.1f}x)"))
            print(f"    {tool[7:]:<18}" + "".join(f"{x:>17}" for x in cells))


    if plot_path:
        plot(results, plot_path)


if __name__ == "__main__":
    args = sys.argv[1:]
    main(quick="--quick" in args,
         plot_path=args[args.index("--plot") + 1] if "--plot" in args else None)
