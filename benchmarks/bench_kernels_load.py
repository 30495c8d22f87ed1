"""Batch kernels on 10^6 rows against SciPy's Rotation, with the machine quiet and with one
core kept busy by another process (issue 31: the batch kernels' OpenMP loops take their work in
chunks as threads come free, so a busy core costs its share, not half the run).

    python benchmarks/bench_kernels_load.py [--rows 1000000] [--rounds 7]

For each kernel: the minimum over `--rounds` alternated rounds (rotode, SciPy) of the call's
wall time, first with nothing else running in this script, then with a busy-loop process
started beside it (one core of the two busy). Prints ms and the speed-up over SciPy; the `out=`
rows write into a preallocated array (SciPy has no such form: its column is the allocating
call), and the last row is the cost of a fresh n x 3 x 3 output alone (page faults).
"""
import argparse
import subprocess
import sys
import time

import numpy as np
from scipy.spatial.transform import Rotation

from rotode import quaternion, so3


def cases(n, rng):
    v = rng.normal(size=(n, 3))
    p = rng.normal(size=(n, 4))
    q = rng.normal(size=(n, 4))
    p /= np.linalg.norm(p, axis=1)[:, None]
    q /= np.linalg.norm(q, axis=1)[:, None]
    R = Rotation.from_rotvec(v).as_matrix()
    rp, rq = Rotation.from_quat(p, scalar_first=True), Rotation.from_quat(q, scalar_first=True)
    out9, out4, out3 = np.empty((n, 3, 3)), np.empty((n, 4)), np.empty((n, 3))
    return [
        ("so3.exp(v)", lambda: so3.exp(v), lambda: Rotation.from_rotvec(v).as_matrix()),
        ("so3.exp(v, out=R)", lambda: so3.exp(v, out=out9),
         lambda: Rotation.from_rotvec(v).as_matrix()),
        ("so3.log(R)", lambda: so3.log(R), lambda: Rotation.from_matrix(R).as_rotvec()),
        ("so3.log(R, out=v)", lambda: so3.log(R, out=out3),
         lambda: Rotation.from_matrix(R).as_rotvec()),
        ("quaternion.multiply", lambda: quaternion.multiply(p, q), lambda: rp * rq),
        ("multiply(out=)", lambda: quaternion.multiply(p, q, out=out4), lambda: rp * rq),
        ("quaternion.rotate", lambda: quaternion.rotate(p, v), lambda: rp.apply(v)),
        ("rotate(out=)", lambda: quaternion.rotate(p, v, out=out3), lambda: rp.apply(v)),
        ("quaternion.to_matrix", lambda: quaternion.to_matrix(p), lambda: rp.as_matrix()),
        ("to_matrix(out=)", lambda: quaternion.to_matrix(p, out=out9), lambda: rp.as_matrix()),
        # what the fresh output array costs: NumPy allocating and first touching n x 9 doubles
        # (its page faults), which every allocating call above (SciPy's too) pays
        ("np.empty((n,3,3)) touched", lambda: np.empty((n, 3, 3)).fill(0.0),
         lambda: np.empty((n, 3, 3)).fill(0.0)),
    ]


def measure(fns, rounds):
    best = [np.inf, np.inf]
    for _ in range(rounds):
        for k, f in enumerate(fns):
            t0 = time.perf_counter()
            f()
            best[k] = min(best[k], time.perf_counter() - t0)
    return best


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=10**6)
    ap.add_argument("--rounds", type=int, default=7)
    args = ap.parse_args()
    table = cases(args.rows, np.random.default_rng(0))
    for _, ours, scipy in table:        # warm: the thread team, the first page faults
        ours()
        scipy()
    for label, busy in (("quiet", False), ("one core busy", True)):
        proc = (subprocess.Popen([sys.executable, "-c", "while True: pass"]) if busy else None)
        try:
            time.sleep(0.5 if busy else 0.0)
            print(f"-- {label}")
            for name, ours, scipy in table:
                a, b = measure((ours, scipy), args.rounds)
                print(f"{name:26s} {a * 1e3:8.1f} ms   SciPy {b * 1e3:8.1f} ms   {b / a:6.1f}x",
                      flush=True)
        finally:
            if proc is not None:
                proc.kill()
                proc.wait()


if __name__ == "__main__":
    main()
