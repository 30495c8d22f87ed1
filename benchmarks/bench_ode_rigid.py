"""The built-in rigid body against the same equations written by the user (``rotode.ODE``).

Run from the clone's root after building rotode (numba is the ``bench`` extra):

    python benchmarks/bench_ode_rigid.py [--quick] [--json FILE]

The body (benchmarks/rigid_ode.py): principal inertia (1, 2, 2.5), a constant body torque
(0.05, -0.02, 0.1), w0 = (0.3, 1.1, -0.4), T = 20 s; the built-in ``rotode.RigidBody(I,
torque=rotode.torque.Constant(tau))`` against ``rotode.ODE(f, n=7, quaternions=[0], params=[I,
tau])`` with ``f`` a numba cfunc of the same formulas, for every method of
``rotode.methods.names("ode")`` (rtol 1e-10 and atol 1e-12, or dt = 1e-2 for rk3 and rk4;
``normalize=False`` for the methods on the state, as the built-in integrates q' as written).

Measured in one process, alternated turns (built-in, ODE, built-in, ...; each turn a batch of
runs of about 2 ms), the minimum of each: one body, only the final state kept (the built-in's
common call goes to its specialised engine), and a batch of 200 bodies (50 with ``--quick``)
with per-body inertia on one thread (the per-step cost; the per-call cost spread over the
bodies).  The ratio is the
ODE's time over the built-in's (the acceptance target: within 1.3x).  The largest difference
of the final states is printed beside (round-off: tests/test_ode_rigid_body.py).
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
import rigid_ode as rb  # noqa: E402
from bench_engine import Run, measure  # noqa: E402
from docs_numbers import load, machine  # noqa: E402

import rotode  # noqa: E402

INERTIA = np.array([1.0, 2.0, 2.5])
TORQUE = np.array([0.05, -0.02, 0.1])
Y0 = np.array([1.0, 0.0, 0.0, 0.0, 0.3, 1.1, -0.4])
T = 20.0
BOUND = 1.3


def batch(n, seed=3):
    """(y0 (n, 7), inertia (n, 3)): the body with its inertia and rates dispersed."""
    rng = np.random.default_rng(seed)
    inertia = INERTIA * (0.95 + 0.1 * rng.random((n, 3)))
    y0 = np.tile(Y0, (n, 1))
    y0[:, 4:] += 0.1 * rng.normal(size=(n, 3))
    return y0, inertia


def runs(cfunc, method, n):
    """{"built-in": Run, "ODE": Run} of `method` on one body (n = 1) or a batch of n."""
    kw, opts = rb.settings(method)
    if n == 1:
        y0, body, P = Y0, rb.built_in(INERTIA, TORQUE), rb.params(INERTIA, TORQUE)
    else:
        y0, inertia = batch(n)
        body = rotode.RigidBody(inertia, torque=rotode.torque.Constant(TORQUE))
        P = np.column_stack([inertia, np.tile(TORQUE, (n, 1))])
    model = rotode.ODE(cfunc, n=7, quaternions=[0], params=P)
    out = {}
    for name, m, o in (("built-in", body, {}), ("ODE", model, opts)):
        call = partial(rotode.integrate, m, (0.0, T), y0, method=method, **kw, **o)
        out[name] = Run(call, partial(lambda c: c(), call))
    return out


def main(quick=False, json_path=None):
    start = time.time()
    load_before = load()
    cfunc = rb.make_cfunc()
    repeat = 3 if quick else 9
    sizes = (1, 50) if quick else (1, 200)
    when = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    print(f"# The rigid body: built-in vs a user's ODE (numba cfunc), T = {T:g} s ({when})\n")
    print(f"machine: {machine()}")
    print(f"load average before: {load_before}; {repeat} alternated turns, the minimum\n")
    print("| method | bodies | steps | built-in | ODE | ratio ODE / built-in | max |dy| |")
    print("|---|---|---|---|---|---|---|")
    rows = []
    for method in rotode.methods.names("ode"):
        for n in sizes:
            r = runs(cfunc, method, n)
            seconds = measure(r, repeat)
            a, b = r["built-in"].info(), r["ODE"].info()
            diff = float(np.abs(np.asarray(a.y) - np.asarray(b.y)).max())
            ratio = seconds["ODE"] / seconds["built-in"]
            steps = int(a.stats["n_steps"])
            rows.append(dict(method=method, bodies=n, steps=steps, ratio=ratio, max_diff=diff,
                             built_in=seconds["built-in"], ode=seconds["ODE"]))
            print(f"| {method} | {n} | {steps} | {seconds['built-in'] * 1e6:.0f} us | "
                  f"{seconds['ODE'] * 1e6:.0f} us | {ratio:.2f} "
                  f"({'ok' if ratio <= BOUND else 'ABOVE'} {BOUND}) | {diff:.1e} |")
    seconds = round(time.time() - start, 1)
    print(f"\nload average after: {load()}; {seconds:.0f} s in all")
    if json_path:
        out = dict(meta=dict(date=when, machine=machine(), load_before=load_before,
                             load_after=load(), seconds=seconds, repeat=repeat, bound=BOUND,
                             command="python benchmarks/bench_ode_rigid.py"
                             + (" --quick" if quick else "")), rows=rows)
        Path(json_path).write_text(json.dumps(out, indent=1))
        print(f"wrote {json_path}")
    return rows


def _option(args, flag):
    return args[args.index(flag) + 1] if flag in args else None


if __name__ == "__main__":
    args = sys.argv[1:]
    main(quick="--quick" in args, json_path=_option(args, "--json"))
