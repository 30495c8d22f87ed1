"""The engine against its peers: rotode's error-controlled ``integrate`` per call and per step,
beside CyRK's ``cysolve_ivp``, a hand-written C++ DOP853 and CyRK's ``nbsolve_ivp``.

Run from the clone's root after building rotode (``python setup.py build_ext --inplace``, or
``python -m pip install ".[bench]"``; CyRK and numba are the ``bench`` extra):

    python benchmarks/bench_engine.py [--quick] [--json FILE] [--compare FILE]

The compiled peers are built at run time (benchmarks/engine/build.py, cached in the temporary
directory; the first run takes about 20 s more): the C++ loop (benchmarks/engine/*.hpp,
engine.cpp) with rotode's own compile flags, read from setup.py's ``COMPILE_ARGS``, and again
with ``-march=native``; CyRK's ``cysolve_ivp`` with Cython right-hand sides
(benchmarks/engine/cyrk_rhs.pyx).  All of them integrate the same equations as rotode's models
(one evaluation is rotode's to the bit) with DOP853 and SciPy's step-size controller, so they
take the same steps; the script checks that first.

Three cases of benchmarks/bench_adaptive.py, T = 100 s, atol = rtol / 100:
  - the upright Lagrange top (Rucker 2018 sec. IV: I = diag(1, 1, 0.5), m g h = 1, gravity along
    world -z, the centre of mass on body +e3, w0 = (1.5, 0, 1));
  - the T-handle (torque-free, I = (2.5, 1.4, 1.3), w0 = (0.01, 5, 0.01));
  - Rucker's kinematics (body rate w_i = pi/2 sin(2 pi t / 10 + phase_i), phases 0, 2pi/3, 4pi/3).
rotode runs ``integrate(model, (0, T), y0, method=m, rtol=rtol, atol=rtol / 100)`` (only the
final state kept, its default) for dop853 and the case's other high-order methods.

How it measures: one process; at each setting every tool runs in turn, A B C ... A B C ..., each
turn a batch of runs lasting about 2 ms (the C++ loop repeats the run inside one ctypes call, so
the ~1 us of ctypes is not counted), and a tool's time per run is the minimum over the turns.
OpenBLAS is held to one thread.  The table's ratios are speed-ups: how many times less time the
tool takes than rotode's dop853.

Per-call and per-step costs: the time of a run is nearly ``per_call + per_step * attempted``,
with ``attempted`` the accepted plus the rejected steps.  A straight line through the
half-decade ladder rtol = 1e-5, 10^-5.5, ..., 1e-11 (13 runs from about 200 to 1000 attempted
steps on the top; Theil-Sen, the median of the slopes between pairs of runs, so that a run the
machine disturbed does not tilt it) gives both: the slope is the cost of one step (its
stages, error estimate and control), the intercept the cost of the call itself (argument
checks, set-up, the first evaluations, building the result).  The one-step call is measured
directly: a span of 1e-3 s at rtol 1e-5, which DOP853 covers with one step (the table says how
many steps each tool took).

Last, the per-call and per-step cost of every rotode method, error-controlled (rtol 1e-5 ..
1e-11 by decades) and fixed-step (dt = T/1000 .. T/8000, only the final state kept), on the top
and on the kinematics.  ``--quick`` takes 4 turns instead of 12 (about 15 s in all on 2 cores,
20 s without).  ``--json FILE`` writes every measurement; ``--compare FILE`` prints this run's
per-call and per-step costs beside those of an earlier ``--json`` file (the engine before and
after a change).
"""
import json
import os
import sys
import time
from datetime import datetime, timezone
from functools import partial
from pathlib import Path

# OpenBLAS worker threads spin after a BLAS call and take a core from whichever tool is timed
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))                  # the clone's rotode (built in place) first
sys.path.insert(0, str(ROOT / "benchmarks"))

import numpy as np  # noqa: E402
from bench_adaptive import angle_deg, numba_rhs  # noqa: E402
from docs_numbers import load, machine  # noqa: E402
from engine import build  # noqa: E402

import rotode  # noqa: E402
from rotode.exact import free_rigid_body  # noqa: E402
from rotode.rhs import check_inertia  # noqa: E402
from rotode.studies import (  # noqa: E402
    SEED004_A,
    SEED004_B,
    SEED004_PHASE,
    T_HANDLE,
    TOP_INERTIA,
    TOP_W0,
)

T = 100.0
TABLE_RTOLS = (1e-5, 1e-7, 1e-9, 1e-11)
# the fits' ladder: half decades from 1e-5 to 1e-11 (13 rungs, the table's among them)
LADDER = tuple(sorted({10.0 ** -k for k in range(5, 12)} | {10.0 ** -(k + 0.5)
                                                           for k in range(5, 11)}, reverse=True))
ONE_STEP_SPAN, ONE_STEP_RTOL = 1e-3, 1e-5
BATCH_SECONDS = 2e-3
DOP853_TOOLS = ("rotode dop853", "cysolve_ivp", "nbsolve_ivp", "C++ loop", "C++ native")


def atol_of(rtol):
    return rtol / 100


# ---- the cases -------------------------------------------------------------------------------

def inverse_principal(inertia):
    """The principal moments' inverses as rotode computes them (so the products agree)."""
    _, inv = check_inertia(inertia)
    assert np.count_nonzero(inv - np.diag(np.diag(inv))) == 0
    return np.diag(inv)


def cases():
    """name -> the rotode model, y0, the C++/Cython model and parameters, rotode's methods and
    the reference final quaternion (bench_adaptive.py's)."""
    gravity = rotode.torque.Gravity(1.0, 1.0, [0.0, 0.0, 1.0])
    top = rotode.RigidBody(TOP_INERTIA, torque=gravity)
    y_top = np.concatenate([[1.0, 0.0, 0.0, 0.0], TOP_W0])
    y_th = np.array([1.0, 0.0, 0.0, 0.0, 0.01, 5.0, 0.01])
    w = rotode.omega.Sinusoid(amplitude=SEED004_A, rate=SEED004_B, phase=SEED004_PHASE)
    return {
        "top": dict(
            title="upright Lagrange top", model=top, rhs=top, y0=y_top, cid=build.TOP,
            params=np.concatenate([TOP_INERTIA, inverse_principal(TOP_INERTIA), [1.0]]),
            methods=("dop853", "rkmk8"),
            ref=lambda: rotode.integrate(top, (0, T), y_top, method="dop853", rtol=1e-13,
                                         atol=1e-15).q[-1]),
        "T-handle": dict(
            title="T-handle (torque-free)", model=rotode.RigidBody(T_HANDLE),
            rhs=rotode.RigidBody(T_HANDLE), y0=y_th, cid=build.FREE_BODY,
            params=np.concatenate([T_HANDLE, inverse_principal(T_HANDLE)]),
            methods=("dop853", "rkmk8"),
            ref=lambda: free_rigid_body(T_HANDLE, y_th[4:], T, q0=y_th[:4])[0]),
        "kinematics": dict(
            title="Rucker's kinematics", model=w, rhs=rotode.QuaternionKinematics(w),
            y0=np.array([1.0, 0.0, 0.0, 0.0]), cid=build.KINEMATICS,
            params=np.concatenate([w.amplitude, [w.rate], w.phase]),
            methods=("dop853", "rkmk8", "magnus8"),
            ref=lambda: rotode.integrate(w, (0, T), [1.0, 0, 0, 0], method="magnus8",
                                         dt=1e-3).q[-1]),
    }


# ---- one tool on one setting -----------------------------------------------------------------

class Run:
    """A tool set up for one span and rtol: ``batch(k)`` times k runs (seconds per run);
    ``info()`` runs once more and returns its final state and step counts."""

    def __init__(self, call, info, batch=None):
        self.call, self.info = call, info
        self._batch = batch

    def batch(self, k):
        if self._batch is not None:
            start = time.perf_counter()
            self._batch(k)
            return (time.perf_counter() - start) / k
        call = self.call
        start = time.perf_counter()
        for _ in range(k):
            call()
        return (time.perf_counter() - start) / k


def rotode_run(case, method, span, rtol):
    call = partial(rotode.integrate, case["model"], span, case["y0"], method=method, rtol=rtol,
                   atol=atol_of(rtol))

    def info():
        res = call()
        s = res.stats
        return dict(y=res.y[-1], accepted=s["n_steps"], attempted=s["n_steps"] + s["n_rejected"],
                    ok=bool(res.success))

    return Run(call, info)


def cyrk_run(case, cy, span, rtol):
    call = partial(cy.solve, case["cid"], case["params"], span[0], span[1], case["y0"], rtol,
                   atol_of(rtol))

    def info():
        y, accepted, nfev, ok = call(count=True)
        # DOP853 evaluates f twice to start (f0 and the initial step's trial) and 12 times a step
        attempted = (nfev - 2) // 12 if (nfev - 2) % 12 == 0 else None
        return dict(y=y, accepted=accepted, attempted=attempted, ok=ok)

    return Run(call, info)


def nbsolve_run(case, nb, span, rtol):
    from CyRK import nbsolve_ivp
    call = partial(nbsolve_ivp, nb, span, case["y0"], rtol=rtol, atol=atol_of(rtol),
                   rk_method=2, warnings=False)

    def info():
        res = call()
        return dict(y=res.y[:, -1], accepted=res.t.size - 1, attempted=None,
                    ok=bool(res.success))

    return Run(call, info)


def loop_run(case, loop, span, rtol):
    run = loop.prepare(case["cid"], case["params"], span, case["y0"], rtol, atol_of(rtol))

    def info():
        y, (accepted, rejected, _), status = run(1)
        return dict(y=y, accepted=accepted, attempted=accepted + rejected, ok=status == 0)

    return Run(lambda: run(1), info, batch=run)


def tools(case, peers):
    """name -> a function (span, rtol) -> Run, in the order of the alternation."""
    out = {f"rotode {m}": partial(rotode_run, case, m) for m in case["methods"]}
    if "cyrk" in peers:
        out["cysolve_ivp"] = partial(cyrk_run, case, peers["cyrk"])
    if case["name"] in peers.get("numba", {}):
        out["nbsolve_ivp"] = partial(nbsolve_run, case, peers["numba"][case["name"]])
    for name in ("C++ loop", "C++ native"):
        if name in peers:
            out[name] = partial(loop_run, case, peers[name])
    return out


def measure(runs, repeat):
    """Seconds per run of each Run: alternated batches of about BATCH_SECONDS, the minimum."""
    number = {}
    for name, run in runs.items():
        run.call()                                   # warm (numba compiles on its first call)
        once = min(run.batch(1) for _ in range(2))
        number[name] = int(min(10_000, max(1, round(BATCH_SECONDS / max(once, 1e-9)))))
    best = dict.fromkeys(runs, np.inf)
    for _ in range(repeat):
        for name, run in runs.items():
            best[name] = min(best[name], run.batch(number[name]))
    return best


def measure_case(case, peers, repeat):
    """Rows {rtol, tool, seconds, accepted, attempted, error_deg, ...} over the ladder, the
    one-step call of each tool, and the reference."""
    make = tools(case, peers)
    ref = case["ref"]()
    rows = []
    for rtol in LADDER:
        runs = {name: f((0.0, T), rtol) for name, f in make.items()}
        seconds = measure(runs, repeat)
        for name, run in runs.items():
            info = run.info()
            rows.append(dict(rtol=rtol, tool=name, seconds=seconds[name], y=info["y"].tolist(),
                             accepted=int(info["accepted"]), attempted=info["attempted"],
                             ok=info["ok"], error_deg=angle_deg(info["y"][:4], ref)))
    runs = {name: f((0.0, ONE_STEP_SPAN), ONE_STEP_RTOL) for name, f in make.items()}
    seconds = measure(runs, repeat)
    one = {}
    for name, run in runs.items():
        info = run.info()
        one[name] = dict(seconds=seconds[name], accepted=int(info["accepted"]),
                         attempted=info["attempted"])
    return dict(rows=rows, one_step=one)


# ---- checks, fits, tables --------------------------------------------------------------------

def check_table(loop):
    """The C++ coefficients against rotode's registry, bit for bit."""
    spec = rotode.methods.get("dop853")
    tab, emb = spec.tableau, spec.embedded
    a = np.zeros((12, 12))
    for i, row in enumerate(tab.a):
        a[i, :len(row)] = [float(x) for x in row]
    want = (a, [float(x) for x in tab.b], [float(x) for x in tab.c],
            [float(x) for x in emb.e[:12]], [float(x) for x in emb.e3[:12]])
    same = all(np.array_equal(g, w) for g, w in zip(loop.table(), want, strict=True))
    zero_fsal = float(emb.e[12]) == 0.0 and float(emb.e3[12]) == 0.0
    return same and zero_fsal


def check_rhs(case, loop, n=200):
    """max |f_C++(t, y) - f_rotode(t, y)| over n random states and times."""
    rng = np.random.default_rng(20261125)
    worst = 0.0
    for _ in range(n):
        y = rng.normal(size=case["y0"].size)
        t = rng.uniform(0.0, T)
        worst = max(worst, float(np.max(np.abs(loop.rhs(case["cid"], case["params"], t, y)
                                                - case["rhs"](t, y)))))
    return worst


def step_check(rows, tool, against="rotode dop853"):
    """How `tool` agrees with `against` over the ladder: same accepted/attempted counts, and
    the largest final-state difference."""
    mine = {r["rtol"]: r for r in rows if r["tool"] == tool}
    ref = {r["rtol"]: r for r in rows if r["tool"] == against}
    acc = sum(mine[k]["accepted"] == ref[k]["accepted"] for k in ref)
    att = sum(mine[k]["attempted"] == ref[k]["attempted"] for k in ref
              if mine[k]["attempted"] is not None)
    known = sum(mine[k]["attempted"] is not None for k in ref)
    diff = max(float(np.max(np.abs(np.subtract(mine[k]["y"], ref[k]["y"])))) for k in ref)
    return dict(rungs=len(ref), same_accepted=acc, same_attempted=att, attempted_known=known,
                max_state_diff=diff)


def fit(rows, tool, steps_from=None):
    """(per call, per attempted step) seconds: a line through time against attempted steps.
    ``steps_from``: take the step counts of another tool (for one that does not report its
    rejected steps; used only where its accepted steps are the same)."""
    mine = [r for r in rows if r["tool"] == tool]
    if steps_from is not None:
        other = {r["rtol"]: r["attempted"] for r in rows if r["tool"] == steps_from}
        steps = [other[r["rtol"]] for r in mine]
    else:
        steps = [r["attempted"] for r in mine]
    if len(mine) < 2 or any(s is None for s in steps):
        return None
    return line(steps, [r["seconds"] for r in mine])


def line(x, y):
    """(intercept, slope) of a straight line through the points (x, y), robust to a run that
    the machine disturbed (Theil-Sen: the median of the slopes between pairs of points, then
    the median of y - slope x)."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    i, j = np.triu_indices(len(x), 1)
    keep = x[j] != x[i]
    slope = float(np.median((y[j] - y[i])[keep] / (x[j] - x[i])[keep]))
    return float(np.median(y - slope * x)), slope


def us(seconds):
    x = seconds * 1e6
    return f"{x:.0f} us" if x >= 100 else f"{x:.1f} us"


def print_case(name, case, result, names):
    rows, one = result["rows"], result["one_step"]
    at = {(r["rtol"], r["tool"]): r for r in rows}
    rotode_names = [n for n in names if n.startswith("rotode")]
    peers = [n for n in names if not n.startswith("rotode")]
    print(f"\n### {case['title']} ({name}), T = {T:g} s, atol = rtol/100\n")
    head = (["rtol", "DOP853 steps (acc/att)"] + [f"{n} [acc/att]" if n != "rotode dop853"
                                                  else n for n in rotode_names]
            + peers + ["cysolve_ivp / fastest rotode (>= 1.5)",
                       "fastest rotode / C++ loop (<= 1.25)"])
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    notes = []
    for rtol in TABLE_RTOLS:
        base = at[(rtol, "rotode dop853")]
        cells = [f"{rtol:.0e}", f"{base['accepted']}/{base['attempted']}"]
        for n in rotode_names:
            r = at[(rtol, n)]
            cells.append(us(r["seconds"]) + ("" if n == "rotode dop853" else
                                             f" [{r['accepted']}/{r['attempted']}]"))
        for n in peers:
            r = at[(rtol, n)]
            flag = ""
            if n in DOP853_TOOLS and r["accepted"] != base["accepted"]:
                flag = "*"
                notes.append(f"{n} at rtol {rtol:.0e}: {r['accepted']} accepted steps")
            cells.append(f"{us(r['seconds'])} ({base['seconds'] / r['seconds']:.2f}x){flag}")
        fastest = min(rotode_names, key=lambda n: at[(rtol, n)]["seconds"])
        tf = at[(rtol, fastest)]["seconds"]
        label = fastest.split()[1]
        cells.append("-" if "cysolve_ivp" not in names else
                     f"{at[(rtol, 'cysolve_ivp')]['seconds'] / tf:.2f}x ({label})")
        cells.append("-" if "C++ loop" not in names else
                     f"{tf / at[(rtol, 'C++ loop')]['seconds']:.2f}x ({label})")
        print("| " + " | ".join(cells) + " |")
    print("\n(x) = rotode dop853's time / the tool's: how many times faster the tool is; "
          "[acc/att] = accepted/attempted steps.")
    for note in notes:
        print(f"* {note} (rotode dop853: the DOP853 steps column)")

    print("\nfinal orientation error (deg) against the reference:")
    for n in names:
        errs = "  ".join(f"{at[(rtol, n)]['error_deg']:.1e}" for rtol in TABLE_RTOLS)
        print(f"  {n:<16} {errs}")

    print("\n| tool | per call | per attempted step | one-step call (1e-3 s) |")
    print("|---|---|---|---|")
    fits = {}
    for n in names:
        # nbsolve_ivp reports no rejected steps; where its accepted steps are rotode's
        # (checked above), it took rotode's attempted ones too: SciPy's controller
        steps_from = "rotode dop853" if n == "nbsolve_ivp" else None
        f = fits[n] = fit(rows, n, steps_from)
        o = one[n]
        cell = "-" if f is None else f"{us(f[0])} | {f[1] * 1e9:.0f} ns"
        plural = "s" if o["accepted"] > 1 else ""
        print(f"| {n} | {cell} | {us(o['seconds'])} ({o['accepted']} step{plural}) |")
    return fits


def print_validation(name, case, result, loop):
    rows = result["rows"]
    print(f"  {name}:" + ("" if loop is None else " C++ rhs vs rotode's, max |diff| over 200 "
                          f"random states: {check_rhs(case, loop):.1e}"))
    for tool in DOP853_TOOLS[1:]:
        if not any(r["tool"] == tool for r in rows):
            continue
        c = step_check(rows, tool)
        att = (f", attempted {c['same_attempted']}/{c['attempted_known']}"
               if c["attempted_known"] else ", attempted not reported")
        print(f"    {tool:<12} vs rotode dop853: same accepted steps at {c['same_accepted']}/"
              f"{c['rungs']} rtols{att}; final states within {c['max_state_diff']:.1e}")


# ---- every rotode method ---------------------------------------------------------------------

FIXED_STEPS = (1000, 2000, 4000, 8000)


def method_costs(case, repeat):
    """Per-call and per-step cost of every rotode method for the case's model kind."""
    kind = "rigid body" if isinstance(case["model"], rotode.RigidBody) else "kinematics"
    out = {}
    # (an error-controlled method also given dt: its row "name, dt", at fixed steps)
    names = [(m, rotode.methods.get(m).adaptive) for m in rotode.methods.names(kind)]
    for label, adaptive in names + [(f"{m}, dt", False) for m, a in names if a]:
        method = label.removesuffix(", dt")
        runs, steps = {}, {}
        try:
            if adaptive:
                for rtol in TABLE_RTOLS:
                    runs[rtol] = rotode_run(case, method, (0.0, T), rtol)
                    steps[rtol] = runs[rtol].info()["attempted"]
                one = rotode_run(case, method, (0.0, ONE_STEP_SPAN), ONE_STEP_RTOL)
            else:
                for n in FIXED_STEPS:
                    call = partial(rotode.integrate, case["model"], (0.0, T), case["y0"],
                                   method=method, dt=T / n, save_every=n)
                    call()
                    runs[n], steps[n] = Run(call, None), n
                call = partial(rotode.integrate, case["model"], (0.0, ONE_STEP_SPAN), case["y0"],
                               method=method, dt=ONE_STEP_SPAN)
                one = Run(call, None)
        except (TypeError, ValueError) as exc:
            out[label] = dict(error=str(exc))
            continue
        runs["one"] = one
        seconds = measure(runs, repeat)
        x = [steps[k] for k in steps]
        intercept, slope = line(x, [seconds[k] for k in steps])
        out[label] = dict(adaptive=adaptive, per_call=float(intercept), per_step=float(slope),
                           one_step=seconds["one"], steps=x)
    return out


def print_methods(name, costs):
    print(f"\n#### every method, {name} (adaptive: rtol 1e-5..1e-11; fixed: "
          f"{', '.join(f'T/{n}' for n in FIXED_STEPS)})\n")
    print("| method | kind | per call | per attempted step | one-step call |")
    print("|---|---|---|---|---|")
    for method, c in costs.items():
        if "error" in c:
            print(f"| {method} | - | {c['error']} | | |")
            continue
        print(f"| {method} | {'adaptive' if c['adaptive'] else 'fixed'} | {us(c['per_call'])} | "
              f"{c['per_step'] * 1e9:.0f} ns | {us(c['one_step'])} |")


def print_compare(before, after):
    print("\n## before -> after (per call, per attempted step)\n")
    print("| case | tool | per call before | after | per step before | after | step ratio |")
    print("|---|---|---|---|---|---|---|")
    pairs = []
    for name, case in after["cases"].items():
        for tool, f in case["fits"].items():
            old = before.get("cases", {}).get(name, {}).get("fits", {}).get(tool)
            pairs.append((name, tool, old, f))
        for method, c in case.get("methods", {}).items():
            old = before.get("cases", {}).get(name, {}).get("methods", {}).get(method)
            if "error" not in c and old and "error" not in old:
                pairs.append((name, f"rotode {method} (every method)", (old["per_call"],
                              old["per_step"]), (c["per_call"], c["per_step"])))
    for name, tool, old, new in pairs:
        if old is None or new is None:
            continue
        print(f"| {name} | {tool} | {us(old[0])} | {us(new[0])} | {old[1] * 1e9:.0f} ns | "
              f"{new[1] * 1e9:.0f} ns | {old[1] / new[1]:.2f}x |")


# ---- main ------------------------------------------------------------------------------------

def peers_available(verbose=True):
    peers = {}
    for name, native in (("C++ loop", False), ("C++ native", True)):
        try:
            peers[name] = build.loop(native=native, verbose=verbose)
        except build.BuildError as exc:
            print(f"({name} not built: {exc})")
    try:
        peers["cyrk"] = build.cyrk(verbose=verbose)
    except build.BuildError as exc:
        print(f"(cysolve_ivp not built: {exc})")
    try:
        import CyRK  # noqa: F401 (nbsolve_ivp)
        peers["numba"] = numba_rhs()
    except ImportError:
        print("(numba/CyRK not installed: python -m pip install '.[bench]')")
    return peers


def main(quick=False, json_path=None, compare=None):
    repeat = 4 if quick else 12
    start = time.time()
    load_before = load()
    peers = peers_available()
    when = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    print(f"# The engine against its peers ({when})\n")
    print(f"machine: {machine()}")
    print(f"load average before: {load_before}; repeats: {repeat} alternated batches of "
          f"~{BATCH_SECONDS * 1e3:g} ms each, the minimum")
    if "C++ loop" in peers:
        print(f"C++ loop flags (rotode's setup.py COMPILE_ARGS): "
              f"{' '.join(peers['C++ loop'].flags)} (C++ native: + -march=native)")
    allc = cases()
    results = {}
    for name, case in allc.items():
        case["name"] = name
        results[name] = measure_case(case, peers, repeat)

    loop = peers.get("C++ loop")
    print("\n## Validation\n")
    if loop is not None:
        print(f"  C++ DOP853 coefficients == rotode.methods' dop853, bit for bit: "
              f"{check_table(loop)}")
    for name, case in allc.items():
        print_validation(name, case, results[name], loop)

    print("\n## Time per run")
    out = {"meta": dict(date=when, machine=machine(), load_before=load_before,
                        command="python benchmarks/bench_engine.py" + (" --quick" if quick else ""),
                        repeat=repeat, ladder=LADDER, table_rtols=TABLE_RTOLS,
                        flags=loop.flags if loop is not None else None),
           "cases": {}}
    for name, case in allc.items():
        names = list(tools(case, peers))
        fits = print_case(name, case, results[name], names)
        out["cases"][name] = dict(rows=results[name]["rows"], one_step=results[name]["one_step"],
                                  fits=fits)
    print("\n## Every rotode method")
    for name in ("top", "kinematics"):
        costs = method_costs(allc[name], repeat)
        print_methods(name, costs)
        out["cases"][name]["methods"] = costs
    out["meta"]["load_after"] = load()
    out["meta"]["seconds"] = round(time.time() - start, 1)
    print(f"\nload average after: {out['meta']['load_after']}; "
          f"{out['meta']['seconds']:.0f} s in all")
    if compare:
        print_compare(json.loads(Path(compare).read_text()), out)
    if json_path:
        Path(json_path).write_text(json.dumps(out, indent=1))
        print(f"wrote {json_path}")


def _option(args, flag):
    return args[args.index(flag) + 1] if flag in args else None


if __name__ == "__main__":
    args = sys.argv[1:]
    main(quick="--quick" in args, json_path=_option(args, "--json"),
         compare=_option(args, "--compare"))
