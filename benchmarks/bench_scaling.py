"""Body-steps per second per core of every method on batches (docs/scaling.md).

For each method of the registry: a batch of Lagrange tops (rigid body: I = diag(1, 1, 0.5),
m g h = 4.905, w0 = (0, 0, 5) + N(0, 0.5^2) rad/s per axis, so the bodies take different
steps under error control) or of orientations under dispersed constant body rates
(kinematics), integrated with ``workers=1`` (one core) and only the final state kept:
fixed-step methods with dt = 0.01, error-controlled ones at rtol 1e-9 (atol 1e-11) and again
given dt = 0.01 (the rows "name, dt": the pairs at fixed steps). A
body-step is one attempted step of one body (accepted or rejected). The minimum of
``--repeat`` runs is reported, with the SIMD instruction set the lanes ran on (``stats["simd"]``:
the lane kernels on the batches whose model they compile; "-": the one-body loop).

    python benchmarks/bench_scaling.py [--bodies 10000] [--repeat 3] [--markdown]
    python benchmarks/bench_scaling.py --lanes-vs-off [--bodies 20000] [--kinematics]
        [--methods dop853 rkmk8 ...] [--driver] [--sinusoid] [--fixed]

With ``--markdown`` it also prints the table of docs/scaling.md and the cost of 10^8 bodies on
100 nodes x 32 cores at the measured rates (a paper estimate: compute time only).  With
``--lanes-vs-off``: dop853 and rkmk8 (or ``--methods``) at rtol 1e-9 on the tops (with
``--kinematics``: on the orientations under dispersed constant rates) over 1 s and 10 s, the
lanes against one body at a time (``off``), the instruction sets alternated in one process; a
fixed-step method (and with ``--fixed`` a pair) at dt = 0.01; with ``--driver`` also the
driver's general loop of one body (the specialised engine off: what ran before a method had
its engine loop); with
``--sinusoid`` the kinematics under a shared ``Sinusoid([1, 0.5, 2], 3, [0, 0.4, 1.1])``
from dispersed orientations.
"""
import argparse
import time

import numpy as np

import rotode
from rotode import methods

TOP = rotode.RigidBody([1.0, 1.0, 0.5], torque=rotode.torque.Gravity(1.0, 9.81, [0, 0, 0.5]))
SINUSOID = rotode.omega.Sinusoid([1.0, 0.5, 2.0], 3.0, [0.0, 0.4, 1.1])   # --sinusoid
SKIP = {"rkn4"}                      # (its state carries q'; not a batch method of this table)


def states(kind, n, rng):
    """(model, y0) of n dispersed bodies of `kind`."""
    if kind == "rigid body":
        y0 = np.tile([1.0, 0, 0, 0, 0, 0, 5.0], (n, 1))
        y0[:, 4:] += rng.normal(scale=0.5, size=(n, 3))
        return TOP, y0
    w = rng.normal(scale=1.0, size=(n, 3))
    return w, np.tile([1.0, 0, 0, 0], (n, 1))


def one(kind, name, n, repeat, rng, fixed=False):
    """(seconds, body-steps, simd) of the fastest of `repeat` runs (fixed: an error-controlled
    pair given dt, at fixed steps)."""
    model, y0 = states(kind, n, rng)
    spec = methods.get(name)
    if spec.adaptive and not fixed:
        span, steps = (0.0, 10.0), {"rtol": 1e-9, "atol": 1e-11}
    else:
        span, steps = (0.0, 1.0 if kind == "rigid body" else 2.0), {"dt": 0.01}
    best = np.inf
    for _ in range(repeat):
        t0 = time.perf_counter()
        res = rotode.integrate(model, span, y0, method=name, t_eval=[span[1]], workers=1,
                               **steps)
        best = min(best, time.perf_counter() - t0)
    pb = res.stats["per_body"]
    work = int(np.sum(pb["n_steps"]) + np.sum(pb.get("n_rejected", 0)))
    return best, work, res.stats.get("simd", "-")


def lanes_vs_off(n, repeat, kind="rigid body", names=("dop853", "rkmk8"), driver=False,
                 sinusoid=False, fixed=False):
    """ns per body-step of batches of the methods `names`, `off` against the lane sets,
    alternated (sinusoid: the kinematics under the shared `SINUSOID` rate, dispersed q0;
    fixed: the pairs given dt = 0.01)."""
    from rotode import _lanes
    rng = np.random.default_rng(0)
    model, y0 = states(kind, n, rng)
    if sinusoid:
        model = SINUSOID
        y0 = rng.normal(size=(n, 4))
        y0 /= np.linalg.norm(y0, axis=1)[:, None]
    print(f"{kind}{' under a shared Sinusoid' if sinusoid else ''}, {n} bodies:")
    for name in names:
        for T in (1.0, 10.0):
            lanes_vs_off_one(_lanes, name, model, y0, T, repeat, driver, fixed)


def lanes_vs_off_one(_lanes, name, model, y0, T, repeat, driver=False, fixed=False):
    """One line of `lanes_vs_off`: method `name` over (0, T) (driver: also the driver's loop,
    "driver", the engine off; fixed: a pair given dt = 0.01)."""
    from rotode import dynamic, kinematic
    n = len(y0)
    best = {}
    steps = ({"rtol": 1e-9, "atol": 1e-11} if methods.get(name).adaptive and not fixed
             else {"dt": 0.01})
    sets = ("off",) + tuple(a for a in ("avx2", "avx512") if a in _lanes.available())
    for _ in range(repeat):
        for isa in (("driver",) if driver else ()) + sets:
            _lanes.use("off" if isa == "driver" else isa)
            dynamic._USE_ENGINE = kinematic._USE_ENGINE = isa != "driver"
            t0 = time.perf_counter()
            try:
                res = rotode.integrate(model, (0, T), y0, method=name, t_eval=[T], workers=1,
                                       **steps)
            finally:
                dynamic._USE_ENGINE = kinematic._USE_ENGINE = True
            best[isa] = min(best.get(isa, np.inf), time.perf_counter() - t0)
    _lanes.use("off" if "avx2" not in best else "avx2")
    pb = res.stats["per_body"]
    work = pb["n_steps"].sum() + pb.get("n_rejected", np.zeros(1)).sum()
    rates = ", ".join(f"{k} {v / work * 1e9:.1f} ns" for k, v in best.items())
    lanes = min((v for k, v in best.items() if k not in ("off", "driver")), default=np.nan)
    vs_driver = f", driver / lanes = {best['driver'] / lanes:.2f}x" if driver else ""
    print(f"{name}, T = {T:g}: {work / n:.1f} steps per body; per body-step {rates}; "
          f"off / lanes = {best['off'] / lanes:.2f}x{vs_driver}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bodies", type=int, default=10000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--markdown", action="store_true")
    ap.add_argument("--lanes-vs-off", action="store_true")
    ap.add_argument("--kinematics", action="store_true",
                    help="--lanes-vs-off on the kinematics batch instead of the tops")
    ap.add_argument("--methods", nargs="+", default=["dop853", "rkmk8"],
                    help="--lanes-vs-off: the methods to measure")
    ap.add_argument("--sinusoid", action="store_true",
                    help="--lanes-vs-off --kinematics: under a shared Sinusoid, dispersed q0")
    ap.add_argument("--driver", action="store_true",
                    help="--lanes-vs-off: also the driver's loop (the specialised engine off)")
    ap.add_argument("--fixed", action="store_true",
                    help="--lanes-vs-off: the pairs given dt = 0.01 (fixed steps)")
    args = ap.parse_args()
    if args.lanes_vs_off:
        return lanes_vs_off(args.bodies, args.repeat,
                            "kinematics" if args.kinematics else "rigid body", args.methods,
                            args.driver, args.sinusoid, args.fixed)
    rng = np.random.default_rng(0)
    rows = []
    for kind in ("rigid body", "kinematics"):
        for name in methods.names(kind):
            if name in SKIP or methods.get(name).kernel(kind) == "implicit":
                continue
            n = args.bodies if not methods.get(name).adaptive else max(args.bodies // 10, 100)
            # (a pair also given dt: at fixed steps, in the pairs' fixed-grid lanes)
            for fixed in (False, True) if methods.get(name).adaptive else (False,):
                n = args.bodies if fixed or not methods.get(name).adaptive else n
                sec, work, simd = one(kind, name, n, args.repeat, rng, fixed)
                rate = work / sec
                label = f"{name}, dt" if fixed else name
                rows.append((kind, label, simd, n, work / n, sec, rate))
                print(f"{kind:11s} {label:12s} {simd:7s} {n:6d} bodies {work / n:8.1f} "
                      f"steps/body {sec * 1e3:9.1f} ms  {rate / 1e6:8.2f} M body-steps/s/core"
                      f"  {1e9 / rate:8.1f} ns/body-step", flush=True)
    if args.markdown:
        print("\n| model | method | lanes | ns per body-step | M body-steps/s per core |")
        print("|---|---|---|---|---|")
        for kind, name, simd, _, _, _, rate in rows:
            shown = f"`{name[:-4]}`, dt" if name.endswith(", dt") else f"`{name}`"
            print(f"| {kind} | {shown} | {simd} | {1e9 / rate:.1f} | {rate / 1e6:.2f} |")
        print("\n10^8 bodies on 100 nodes x 32 cores (compute only, at the rates above):")
        for kind, name, _, _, per_body, _, rate in rows:
            if kind == "rigid body" and name in ("rk4", "dop853", "rkmk8"):
                work = 1e8 * (1000 if not methods.get(name).adaptive else per_body)
                print(f"  {name}: {work:.2g} body-steps / ({rate:.3g} x 3200) = "
                      f"{work / (rate * 3200):.2f} s, {work / rate / 3600:.2f} core-hours")


if __name__ == "__main__":
    main()
