"""Adaptive batches now against an earlier build of rotode (issue 31: "dop853 and rkmk8 with
rtol 1e-9 on 10^5 tops with dispersed initial rates: at least 4x today's batched throughput",
"today" being the code the issue was written against).

    python benchmarks/bench_batch_history.py --tree PATH [--bodies 20000] [--rounds 3]

PATH is another checkout of rotode, built in place (``python setup.py build_ext --inplace``),
e.g. ``git worktree add --detach /tmp/base fa15427`` (the commit before the engine rebuild,
whose outputs tests/test_golden_engine.py keeps).  The workload is
benchmarks/bench_scaling.py's ``--lanes-vs-off`` one: upright tops (I = diag(1, 1, 0.5),
gravity) with w0 = (0, 0, 5) + N(0, 0.5^2) per component, rtol 1e-9, atol 1e-11, the final state
only, one thread.  Each build runs in its own process (the two cannot share one); the builds
alternate, ``--rounds`` times, each process taking the minimum of two calls after a first one;
the table gives ns per attempted body-step (accepted + rejected) and the ratio.
"""
import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

CHILD = r"""
import json, sys, time
import numpy as np
import rotode
n, name, T = int(sys.argv[1]), sys.argv[2], float(sys.argv[3])
rng = np.random.default_rng(0)
y0 = np.tile([1.0, 0, 0, 0, 0, 0, 5.0], (n, 1))
y0[:, 4:] += rng.normal(scale=0.5, size=(n, 3))
top = rotode.RigidBody([1.0, 1.0, 0.5], torque=rotode.torque.Gravity(1.0, 9.81, [0, 0, 0.5]))
best = float("inf")
for i in range(3):
    t0 = time.perf_counter()
    res = rotode.integrate(top, (0, T), y0, method=name, rtol=1e-9, atol=1e-11, t_eval=[T],
                           workers=1)
    if i:
        best = min(best, time.perf_counter() - t0)
pb = res.stats["per_body"]
work = int(np.sum(pb["n_steps"]) + np.sum(pb["n_rejected"]))
print(json.dumps({"seconds": best, "work": work, "simd": res.stats.get("simd", "-")}))
"""


def run(tree, n, name, T):
    env = dict(os.environ, PYTHONPATH=str(tree), OMP_NUM_THREADS="1")
    out = subprocess.run([sys.executable, "-c", CHILD, str(n), name, str(T)], env=env,
                         cwd=str(tree), capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tree", required=True, help="the earlier checkout, built in place")
    ap.add_argument("--bodies", type=int, default=20000)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    trees = {"then": Path(args.tree).resolve(), "now": ROOT}
    print(f"{args.bodies} dispersed tops, rtol 1e-9, one thread; ns per attempted body-step, "
          f"the minimum over {args.rounds} alternated rounds")
    for name in ("dop853", "rkmk8"):
        for T in (1.0, 10.0):
            best, work, simd = {}, {}, "-"
            for _ in range(args.rounds):
                for label, tree in trees.items():
                    r = run(tree, args.bodies, name, T)
                    best[label] = min(best.get(label, float("inf")), r["seconds"])
                    work[label] = r["work"]
                    simd = r["simd"] if label == "now" else simd
            ns = {k: best[k] / work[k] * 1e9 for k in best}
            same = "the same steps" if work["then"] == work["now"] else (
                f"steps {work['then']} then, {work['now']} now")
            print(f"{name}, T = {T:g}: then {ns['then']:.1f} ns, now ({simd}) {ns['now']:.1f} "
                  f"ns per body-step; throughput {ns['then'] / ns['now']:.2f}x ({same})")


if __name__ == "__main__":
    main()
