"""Batches of users' equations: 10^4 spacecraft, per-body parameters, on 1 and 2 threads.

Run from the clone's root after building rotode (numba is the ``bench`` extra):

    python benchmarks/bench_ode_batch.py [--quick] [--json FILE] [--bodies N] [--workers W]

The problem: the 16-state spacecraft of benchmarks/spacecraft.py (two-body orbit, gravity
gradient, full inertia, three reaction wheels under a PD law to LVLH), its right-hand side a
numba ``cfunc`` through ``rotode.ODE(f, n=16, quaternions=[6], params=P)`` with one parameter
row per body (`spacecraft.ensemble`: the inertia scaled by 0.5 .. 1.5 and turned a few degrees, the
loop's natural frequency 0.02 .. 0.04 rad/s, hence the gains; the wheels' initial momenta
dispersed), ``rkmk8`` at rtol 1e-8 (atol = rtol * spacecraft.SCALE) over T = 3600 s, only the
final state kept.

Measured: the batch's time with ``workers=1`` and with ``workers=2`` (or ``--workers``),
alternated turns in one process, the minimum of each; the ratio is the speed-up (target
>= 1.8x for 2 workers).  Checked: the two batches give the same bits, and a sample of bodies
(every body with ``--check-all``) equals its single run.  ``--quick``: 2000 bodies, 2 turns.
"""
import json
import os
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))                  # the clone's rotode (built in place) first
sys.path.insert(0, str(ROOT / "benchmarks"))

import numpy as np  # noqa: E402
import spacecraft as sc  # noqa: E402
from docs_numbers import load, machine  # noqa: E402

import rotode  # noqa: E402

METHOD, RTOL = "rkmk8", 1e-8


def model(cfunc, P):
    return rotode.ODE(cfunc, n=sc.N_STATE, quaternions=[sc.QUATERNION], params=P)


def run(cfunc, y0, P, workers, t_end=sc.T_END):
    return rotode.integrate(model(cfunc, P), (0.0, t_end), y0, method=METHOD, rtol=RTOL,
                            atol=sc.atol_of(RTOL), t_eval=[t_end], workers=workers)


def single_runs_agree(cfunc, y0, P, batch, bodies):
    """The bodies whose batch row differs from their single run (none expected)."""
    return [int(i) for i in bodies
            if not np.array_equal(run(cfunc, y0[i], P[i], 1).y, batch.y[i])]


def main(n=10_000, workers=2, repeat=3, json_path=None, check_all=False):
    start = time.time()
    load_before = load()
    cfunc = sc.make_cfunc()
    y0, P = sc.ensemble(n)
    when = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    print(f"# {n} spacecraft, per-body parameters, {METHOD} rtol {RTOL:g}, T = {sc.T_END:g} s "
          f"({when})\n")
    print(f"machine: {machine()}; {os.cpu_count()} cores")
    print(f"load average before: {load_before}; {repeat} alternated turns, the minimum")
    results, best = {}, {1: np.inf, workers: np.inf}
    run(cfunc, y0[:8], P[:8], 1)                                   # (numba compiles here)
    for _ in range(repeat):
        for w in best:
            t0 = time.perf_counter()
            results[w] = run(cfunc, y0, P, w)
            best[w] = min(best[w], time.perf_counter() - t0)
    same = np.array_equal(results[1].y, results[workers].y)
    bodies = np.arange(n) if check_all else np.unique(np.linspace(0, n - 1, 50).astype(int))
    differ = single_runs_agree(cfunc, y0, P, results[1], bodies)
    steps = results[1].stats["per_body"]["n_steps"]
    speedup = best[1] / best[workers]
    print(f"\nsteps per body: {int(np.min(steps))} .. {int(np.max(steps))} "
          f"(mean {float(np.mean(steps)):.0f}); all succeeded: {bool(results[1].success)}")
    for w, s in best.items():
        print(f"workers={w}: {s:.3f} s ({s / n * 1e6:.1f} us per body)")
    print(f"speed-up workers={workers} / workers=1: {speedup:.2f}x (target >= 1.8x for 2: "
          f"{'ok' if speedup >= 1.8 else 'BELOW'})")
    print(f"workers=1 and workers={workers} bit for bit: {same}; single runs of "
          f"{len(bodies)} bodies bit for bit: {not differ}" + (f" (differ: {differ})"
                                                              if differ else ""))
    seconds = round(time.time() - start, 1)
    print(f"load average after: {load()}; {seconds:.0f} s in all")
    if json_path:
        out = dict(meta=dict(date=when, machine=machine(), cores=os.cpu_count(),
                             load_before=load_before, load_after=load(), seconds=seconds,
                             repeat=repeat, command="python benchmarks/bench_ode_batch.py"
                             + ("" if n == 10_000 else f" --bodies {n}")),
                   bodies=n, method=METHOD, rtol=RTOL, T=sc.T_END,
                   seconds={str(w): s for w, s in best.items()}, speedup=speedup,
                   workers=workers, bits_equal=same, singles_checked=len(bodies),
                   singles_differ=differ, steps_mean=float(np.mean(steps)))
        Path(json_path).write_text(json.dumps(out, indent=1))
        print(f"wrote {json_path}")
    return speedup, same, differ


def _option(args, flag, default=None):
    return args[args.index(flag) + 1] if flag in args else default


if __name__ == "__main__":
    args = sys.argv[1:]
    quick = "--quick" in args
    main(n=int(_option(args, "--bodies", 2000 if quick else 10_000)),
         workers=int(_option(args, "--workers", 2)), repeat=2 if quick else 3,
         json_path=_option(args, "--json"), check_all="--check-all" in args)
