"""Users' own equations: rotode's ``ODE`` against CyRK and SciPy on a 16-state spacecraft.

Run from the clone's root after building rotode (``python setup.py build_ext --inplace``; CyRK
and numba are the ``bench`` extra):

    python benchmarks/bench_ode.py [--quick] [--json FILE] [--reference]

The problem (benchmarks/spacecraft.py): a spacecraft in a 7000 km, 51.6 deg, slightly eccentric
orbit (two-body), its attitude under the gravity-gradient torque, a full inertia tensor and
three reaction wheels driven by a smooth PD law to the LVLH (nadir-pointing) frame, slewing
40 deg in the first minutes and tracking for the rest of T = 3600 s; y = [r, v, q, w, h] (16,
km, km/s, scalar-first body-to-world q, rad/s, N m s).  The measure is the final attitude's
error, the angle (deg) of q_ref^-1 q.

The same equations, written once (``spacecraft.rhs_source``), run as
  - a numba ``cfunc`` with rotode's C signature: ``rotode.ODE(f_c, n=16, quaternions=[6],
    params=p)`` through ``rotode.integrate`` (rkmk8, dop853, dopri5);
  - a numba ``njit`` function through CyRK's ``nbsolve_ivp`` (DOP853, RK45);
  - plain Python through ``scipy.integrate.solve_ivp`` (DOP853) and rotode's Python path
    (``rotode.ODE(f_py, ..., args=(p,))`` with rkmk8 and dop853, and ``rotode.solve_ivp(...,
    method="RKMK8", quaternions=[6])``);
and, in Cython (benchmarks/engine/cyrk_spacecraft.pyx, built at run time by
benchmarks/engine/build.py), through CyRK's C++ ``cysolve_ivp`` (DOP853, RK45).  The script
first checks that one evaluation of each version equals the numba one (random states).  The
rotode rows run where ``rotode.ODE`` exists (users' equations); without it the peers run alone.

Tolerances: ``rtol`` over a ladder, ``atol = rtol * spacecraft.SCALE`` per component (7000 km,
7.5 km/s, 1, 1e-2 rad/s, 10 N m s: each block's size, so that a component crossing zero, r_z or
a q_i, is not held far tighter than its block), the same vector for every tool.

Reference: SciPy's DOP853 at rtol 1e-13 (atol 1e-13 * SCALE), cross-checked against SciPy's
Radau at rtol 1e-13 (another method: implicit, order 5), SciPy's DOP853 with the largest step
halved, and CyRK's RK45 at rtol 1e-13 (where built); the agreements are printed and stored with
it in benchmarks/results/spacecraft_reference.json (``--reference`` recomputes it; it is also
recomputed when the problem's y0, parameters, T or SCALE changed).

Timing: one process; at each rtol every tool runs in turn, each turn a batch of runs lasting
about 2 ms (one run for the slower Python ones), and a tool's time per run is the minimum over
the turns (bench_engine.py's `measure`).  For each target error 1e-4, 1e-6, 1e-8 deg a tool's
time is that of its cheapest measured rtol whose error is within the target (no
interpolation: the ladder is in quarter decades, half decades with ``--quick``).  The ratios
are speed-ups (the peer's time / rotode's).  ``--quick`` (about 40 s on 2 cores, the first run
about 20 s more to build the Cython module) uses half decades and fewer turns, and runs the
Python tools on whole decades only.
"""
import json
import os
import sys
import time
from datetime import datetime, timezone
from functools import partial
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))                  # the clone's rotode (built in place) first
sys.path.insert(0, str(ROOT / "benchmarks"))

import numpy as np  # noqa: E402
import spacecraft as sc  # noqa: E402
from bench_engine import Run, measure  # noqa: E402
from docs_numbers import load, machine  # noqa: E402
from engine import build  # noqa: E402
from scipy.integrate import solve_ivp  # noqa: E402

import rotode  # noqa: E402

T = sc.T_END
REFERENCE = ROOT / "benchmarks" / "results" / "spacecraft_reference.json"
REFERENCE_RTOL = 1e-13
TARGETS = (1e-4, 1e-6, 1e-8)
#: the rtol ladders: from 1e-3 to 1e-11, quarter decades (half with --quick)
LADDER = tuple(10.0 ** -(k / 4) for k in range(12, 45))
QUICK_LADDER = tuple(10.0 ** -(k / 2) for k in range(6, 23))
#: the rotode methods on the compiled right-hand side, and on the Python one
ROTODE_C = ("rkmk8", "dop853", "dopri5")
ROTODE_PY = ("rkmk8", "dop853")


def problem():
    return sc.initial_state(), sc.params()


def on_grid(rtol, per_decade):
    """Whether log10(rtol) is a multiple of 1/per_decade (1: whole decades, 2: half)."""
    x = np.log10(rtol) * per_decade
    return abs(x - round(x)) < 1e-6


def final_state(res):
    """The final state of a rotode result (``y_final``, else the last row of ``y``)."""
    y = getattr(res, "y_final", None)
    return np.asarray(res.y[-1] if y is None else y, dtype=float)


# ---- the reference ---------------------------------------------------------------------------

def _key(y0, p):
    return dict(T=T, y0=y0.tolist(), params=p.tolist(), scale=sc.SCALE.tolist())


def compute_reference(cy=None):
    """SciPy DOP853 at rtol 1e-13 and its cross-checks: {q, y, checks {name: deg}, ...}."""
    y0, p = problem()
    rtol, atol = REFERENCE_RTOL, sc.atol_of(REFERENCE_RTOL)
    main = solve_ivp(sc.py_fun, (0.0, T), y0, method="DOP853", rtol=rtol, atol=atol, args=(p,))
    q = main.y[6:10, -1]
    half = float(np.max(np.diff(main.t))) / 2
    others = {
        "SciPy Radau, rtol 1e-13": lambda: solve_ivp(
            sc.py_fun, (0.0, T), y0, method="Radau", rtol=rtol, atol=atol, args=(p,)).y[:, -1],
        f"SciPy DOP853, rtol 1e-13, max_step {half:.2f} s (half its largest step)":
            lambda: solve_ivp(sc.py_fun, (0.0, T), y0, method="DOP853", rtol=rtol, atol=atol,
                              args=(p,), max_step=half).y[:, -1],
    }
    if cy is not None:
        others["CyRK cysolve_ivp RK45, rtol 1e-13"] = \
            lambda: cy.solve(p, 0.0, T, y0, rtol, atol, "RK45")[0]
    checks = {name: sc.angle_deg(f()[6:10], q) for name, f in others.items()}
    return dict(_key(y0, p), q=q.tolist(), y=main.y[:, -1].tolist(), steps=int(main.t.size - 1),
                method="scipy.integrate.solve_ivp(spacecraft.py_fun, method='DOP853', "
                       "rtol=1e-13, atol=1e-13 * spacecraft.SCALE)",
                checks=checks, command="python benchmarks/bench_ode.py --reference",
                date=datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"))


def reference(cy=None, recompute=False):
    """The cached reference (benchmarks/results/spacecraft_reference.json), recomputed and
    written when asked or when the problem changed."""
    y0, p = problem()
    if REFERENCE.exists() and not recompute:
        ref = json.loads(REFERENCE.read_text())
        # (to 1e-14: another libm may round y0's sines a unit in the last place apart)
        if all(k in ref and np.allclose(ref[k], v, rtol=1e-14, atol=0)
               for k, v in _key(y0, p).items()):
            return ref
        print("(the cached reference is of another problem: recomputing it)")
    ref = compute_reference(cy)
    REFERENCE.parent.mkdir(parents=True, exist_ok=True)
    REFERENCE.write_text(json.dumps(ref, indent=1) + "\n")
    print(f"wrote {REFERENCE.relative_to(ROOT)}")
    return ref


# ---- the tools -------------------------------------------------------------------------------

def _info(y, steps=None, ok=True):
    return dict(y=np.asarray(y, dtype=float), steps=steps, ok=bool(ok))


def rotode_run(model, method, y0, rtol):
    call = partial(rotode.integrate, model, (0.0, T), y0, method=method, rtol=rtol,
                   atol=sc.atol_of(rtol))

    def info():
        res = call()
        stats = getattr(res, "stats", None) or {}
        return _info(final_state(res), stats.get("n_steps"), getattr(res, "success", True))

    return Run(call, info)


def rotode_solve_ivp_run(p, y0, rtol):
    call = partial(rotode.solve_ivp, sc.py_fun, (0.0, T), y0, method="RKMK8", rtol=rtol,
                   atol=sc.atol_of(rtol), quaternions=[sc.QUATERNION], args=(p,))

    def info():
        sol = call()
        return _info(sol.y[:, -1], sol.t.size - 1, sol.success)

    return Run(call, info)


def cysolve_run(cy, method, p, y0, rtol):
    call = partial(cy.solve, p, 0.0, T, y0, rtol, sc.atol_of(rtol), method)

    def info():
        y, steps, _, ok = call()
        return _info(y, steps, ok)

    return Run(call, info)


def nbsolve_run(diffeq, rk_method, p, y0, rtol):
    from CyRK import nbsolve_ivp
    call = partial(nbsolve_ivp, diffeq, (0.0, T), y0, args=(p,), rtol=rtol,
                   atols=sc.atol_of(rtol), rk_method=rk_method, warnings=False)

    def info():
        res = call()
        return _info(res.y[:, -1], res.t.size - 1, res.success)

    return Run(call, info)


def scipy_run(p, y0, rtol):
    call = partial(solve_ivp, sc.py_fun, (0.0, T), y0, method="DOP853", rtol=rtol,
                   atol=sc.atol_of(rtol), args=(p,))

    def info():
        sol = call()
        return _info(sol.y[:, -1], sol.t.size - 1, sol.success)

    return Run(call, info)


def peers_available():
    """What can run here: {"cyrk": the Cython module, "numba": the njit diffeq, "cfunc": the
    cfunc, "rotode": whether rotode.ODE exists}."""
    peers = {"rotode": hasattr(rotode, "ODE")}
    try:
        peers["cyrk"] = build.cyrk("cyrk_spacecraft", verbose=True)
    except build.BuildError as exc:
        print(f"(cysolve_ivp not built: {exc})")
    try:
        import CyRK  # noqa: F401 (nbsolve_ivp)
        import numba  # noqa: F401
        peers["numba"] = sc.make_nbsolve_diffeq()
        peers["cfunc"] = sc.make_cfunc()
    except ImportError:
        print("(numba/CyRK not installed: python -m pip install '.[bench]')")
    if not peers["rotode"]:
        print("(rotode.ODE does not exist in this build: rotode's rows are left out)")
    return peers


def tools(peers):
    """(compiled, python): name -> a function rtol -> Run, each in the order of alternation."""
    y0, p = problem()
    compiled, python = {}, {}
    if peers["rotode"] and "cfunc" in peers:
        model = rotode.ODE(peers["cfunc"], n=sc.N_STATE, quaternions=[sc.QUATERNION], params=p)
        for m in ROTODE_C:
            compiled[f"rotode {m}"] = partial(rotode_run, model, m, y0)
    if "cyrk" in peers:
        for m in ("DOP853", "RK45"):
            compiled[f"cysolve_ivp {m}"] = partial(cysolve_run, peers["cyrk"], m, p, y0)
    if "numba" in peers:
        for m, k in (("DOP853", 2), ("RK45", 1)):
            compiled[f"nbsolve_ivp {m}"] = partial(nbsolve_run, peers["numba"], k, p, y0)
    if peers["rotode"]:
        model = rotode.ODE(sc.py_fun, n=sc.N_STATE, quaternions=[sc.QUATERNION], args=(p,))
        for m in ROTODE_PY:
            python[f"rotode {m} (py)"] = partial(rotode_run, model, m, y0)
        python["rotode.solve_ivp RKMK8 (py)"] = partial(rotode_solve_ivp_run, p, y0)
    python["scipy DOP853 (py)"] = partial(scipy_run, p, y0)
    return compiled, python


def usable(make, rtol):
    """The tools that run at all (a rotode method this build lacks is left out, said once)."""
    out = {}
    for name, f in make.items():
        try:
            run = f(rtol)
            run.call()
            out[name] = f
        except (TypeError, ValueError, NotImplementedError) as exc:
            print(f"({name} left out: {type(exc).__name__}: {exc})")
    return out


# ---- measuring -------------------------------------------------------------------------------

def sweep(compiled, python, ladder, python_rtols, repeat, ref_q):
    """Rows {tool, rtol, seconds, error_deg, norm_drift, steps, ok} over the ladder."""
    rows = []
    for rtol in ladder:
        make = dict(compiled)
        if rtol in python_rtols:
            make.update(python)
        runs = {name: f(rtol) for name, f in make.items()}
        seconds = measure(runs, repeat)
        for name, run in runs.items():
            info = run.info()
            q = info["y"][6:10]
            rows.append(dict(tool=name, rtol=rtol, seconds=seconds[name], ok=info["ok"],
                             steps=None if info["steps"] is None else int(info["steps"]),
                             error_deg=sc.angle_deg(q, ref_q),
                             norm_drift=float(np.linalg.norm(q) - 1.0)))
    return rows


def fastest(rows, tool, target):
    """The cheapest measured run of ``tool`` whose error is within ``target`` (or None)."""
    ok = [r for r in rows if r["tool"] == tool and r["ok"] and r["error_deg"] <= target]
    return min(ok, key=lambda r: r["seconds"]) if ok else None


def check_evaluations(peers, n=100):
    """max relative difference of one evaluation, each version against the numba njit one,
    over n random states (|rel| = |a - b| / max(|b|, 1e-300), over all components)."""
    core = sc.make_njit()
    rng = np.random.default_rng(20261126)
    y0, p = problem()
    worst = {}
    sig_ptr = None
    if "cfunc" in peers:
        import ctypes
        sig_ptr = ctypes.POINTER(ctypes.c_double)
        cf = peers["cfunc"].ctypes
    for _ in range(n):
        y = y0 * (1 + 0.3 * rng.normal(size=16)) + 0.1 * rng.normal(size=16) * sc.SCALE
        t = rng.uniform(0.0, T)
        want = np.empty(16)
        core(t, y, want, p)
        got = {"python": sc.py_fun(t, y, p)}
        if sig_ptr is not None:
            out = np.empty(16)
            cf(t, y.ctypes.data_as(sig_ptr), out.ctypes.data_as(sig_ptr),
               p.ctypes.data_as(sig_ptr))
            got["cfunc"] = out
        if "cyrk" in peers:
            got["cython"] = peers["cyrk"].rhs(p, t, y)
        for name, g in got.items():
            rel = float(np.max(np.abs(g - want) / np.maximum(np.abs(want), 1e-300)))
            worst[name] = max(worst.get(name, 0.0), rel)
    return worst


# ---- printing --------------------------------------------------------------------------------

def us(seconds):
    x = seconds * 1e6
    return f"{x / 1e3:.1f} ms" if x >= 1e4 else (f"{x:.0f} us" if x >= 100 else f"{x:.1f} us")


def print_curves(rows, names):
    print("\n## Work-precision: final-attitude error (deg) and time per run, by rtol\n")
    for name in names:
        mine = [r for r in rows if r["tool"] == name]
        cells = "  ".join(f"{r['rtol']:.0e}: {r['error_deg']:.1e} {us(r['seconds'])}"
                          + ("" if r["ok"] else " FAILED")
                          for r in mine if on_grid(r["rtol"], 2))
        print(f"  {name:<28} {cells}")


def target_table(rows, names):
    """{target: {tool: row or None}}, and prints the table of times."""
    table = {t: {n: fastest(rows, n, t) for n in names} for t in TARGETS}
    print("\n## Fastest setting reaching each target (cheapest measured rtol)\n")
    print("| tool | " + " | ".join(f"<= {t:.0e} deg" for t in TARGETS) + " |")
    print("|---|" + "---|" * len(TARGETS))
    for n in names:
        cells = []
        for t in TARGETS:
            r = table[t][n]
            cells.append("not reached" if r is None else
                         f"{us(r['seconds'])} (rtol {r['rtol']:.1e}, {r['error_deg']:.1e})")
        print(f"| {n} | " + " | ".join(cells) + " |")
    return table


def best_of(table, target, names):
    rs = [(n, table[target][n]) for n in names if table[target].get(n) is not None]
    return min(rs, key=lambda x: x[1]["seconds"]) if rs else (None, None)


def ratios(table, compiled_names, python_names):
    """The acceptance ratios: {target: {label: (value, bound)}} (peer's time / rotode's)."""
    rc = [n for n in compiled_names if n.startswith("rotode")]
    rp = [n for n in python_names if n.startswith("rotode")]
    cy = [n for n in compiled_names if n.startswith("cysolve_ivp")]
    out = {}
    for t in TARGETS:
        row = {}
        rn, r = best_of(table, t, rc)
        pn, pr = best_of(table, t, rp)
        pairs = [(f"nbsolve_ivp DOP853 / {rn}", table[t].get("nbsolve_ivp DOP853"), r, 1.5),
                 (f"fastest cysolve_ivp / {rn}", best_of(table, t, cy)[1], r, 1.0),
                 (f"scipy DOP853 (py) / {pn}", table[t].get("scipy DOP853 (py)"), pr, 1.3)]
        for label, peer, mine, bound in pairs:
            if peer is not None and mine is not None:
                row[label] = (peer["seconds"] / mine["seconds"], bound)
        out[t] = row
    return out


def print_ratios(rat):
    print("\n## Speed-ups at equal accuracy (the peer's time / rotode's fastest; bound)\n")
    if not any(rat.values()):
        print("  (no rotode rows: rotode.ODE is not in this build)")
    for t, row in rat.items():
        for label, (value, bound) in row.items():
            verdict = "ok" if value >= bound else "BELOW"
            print(f"  <= {t:.0e} deg: {label}: {value:.2f}x (>= {bound:g}: {verdict})")


def print_norms(rows, rtols):
    names = ["scipy DOP853 (py)", "rotode rkmk8 (py)", "rotode.solve_ivp RKMK8 (py)",
             "rotode rkmk8", "nbsolve_ivp DOP853", "cysolve_ivp DOP853"]
    at = {(r["tool"], r["rtol"]): r for r in rows}
    print("\n## |q| - 1 at T\n")
    print("| tool | " + " | ".join(f"rtol {r:.0e}" for r in rtols) + " |")
    print("|---|" + "---|" * len(rtols))
    for n in names:
        if any((n, r) in at for r in rtols):
            print(f"| {n} | " + " | ".join(
                f"{at[(n, r)]['norm_drift']:.1e}" if (n, r) in at else "-" for r in rtols) + " |")


# ---- main ------------------------------------------------------------------------------------

def main(quick=False, json_path=None, recompute=False):
    start = time.time()
    load_before = load()
    peers = peers_available()
    ref = reference(peers.get("cyrk"), recompute=recompute)
    when = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    ladder = QUICK_LADDER if quick else LADDER
    python_rtols = [r for r in ladder if on_grid(r, 1)] if quick else ladder
    repeat = 3 if quick else 7
    print(f"# Users' equations: a 16-state spacecraft, T = {T:g} s ({when})\n")
    print(f"machine: {machine()}")
    print(f"load average before: {load_before}; {repeat} alternated turns, the minimum")
    print(f"atol = rtol * {sc.SCALE.tolist()}")
    print("\n## Validation\n")
    for name, rel in check_evaluations(peers).items():
        print(f"  one evaluation, {name} vs numba njit: max relative difference {rel:.1e} "
              "(100 random states)")
    print(f"  reference: {ref['method']} ({ref['steps']} steps), final attitude; agreement:")
    for name, deg in ref["checks"].items():
        print(f"    {name}: {deg:.1e} deg")

    compiled, python = tools(peers)
    compiled, python = usable(compiled, ladder[0]), usable(python, ladder[0])
    rows = sweep(compiled, python, ladder, python_rtols, repeat, ref["q"])
    names = list(compiled) + list(python)
    print_curves(rows, names)
    table = target_table(rows, names)
    rat = ratios(table, list(compiled), list(python))
    print_ratios(rat)
    print_norms(rows, [r for r in python_rtols if on_grid(r, 1) and round(np.log10(r)) % 2 == 0])
    seconds = round(time.time() - start, 1)
    print(f"\nload average after: {load()}; {seconds:.0f} s in all")
    if json_path:
        out = dict(meta=dict(date=when, machine=machine(), load_before=load_before,
                             load_after=load(), seconds=seconds, repeat=repeat,
                             command="python benchmarks/bench_ode.py"
                                     + (" --quick" if quick else ""),
                             T=T, scale=sc.SCALE.tolist(), rotode_ode=peers["rotode"]),
                   reference=ref, rows=rows,
                   targets={f"{t:g}": {n: r for n, r in row.items()} for t, row in table.items()},
                   ratios={f"{t:g}": {k: dict(value=v, bound=b) for k, (v, b) in row.items()}
                           for t, row in rat.items()})
        Path(json_path).write_text(json.dumps(out, indent=1))
        print(f"wrote {json_path}")


def _option(args, flag):
    return args[args.index(flag) + 1] if flag in args else None


if __name__ == "__main__":
    args = sys.argv[1:]
    main(quick="--quick" in args, json_path=_option(args, "--json"),
         recompute="--reference" in args)
