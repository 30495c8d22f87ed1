"""Ensembles on dask: throughput of a LocalCluster against the single-process batched call.

Run after ``python -m pip install ".[dask]"``:
    python benchmarks/bench_dask.py [--bodies 1000000] [--chunk 62500] [--methods rk4 rkmk8]
                                    [--memory] [--overhead] [--address tcp://host:8786]

The ensemble: N heavy (Lagrange) tops about a pivot, world z up, I = diag(1, 1, 0.5) dispersed by
+-5 % per axis and body, m g h = 4.905 (m = 1, g = 9.81, h = 0.5), q0 = 1, w0 = (0, 0, 5) rad/s
+ N(0, 0.5^2) per axis (a counter-based formula of the body index: the same bodies on NumPy and
on dask), integrated for 10 s with ``rk4`` (dt = 0.01: 1000 steps) and ``rkmk8`` (rtol 1e-9),
output at t = 0 and 10 s, reduced on the workers to the mean final tilt.

Measured for each method:
  - single process: ``rotode.integrate(..., workers=C)`` on NumPy arrays (C = cores, the
    batched call's own threads);
  - dask: the same call with dask arrays (chunks of ``--chunk`` bodies, generated on the
    workers) on a LocalCluster of C single-threaded worker processes (or ``--address``).
Throughput is body-steps per second per core (rk4: N x 1000 steps; rkmk8: N x the largest step
count per body, the same count for both runs), and the dask/single ratio.  ``--memory`` runs
rkmk8 on N/4 and N bodies (same chunks) on fresh clusters and prints each worker's peak
resident memory (sampled every 10 ms): O(chunk) means equal peaks.  ``--overhead`` measures
the cost of one task (chunks of 10 bodies, 10 steps).
"""
import argparse
import os
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402

import rotode  # noqa: E402

T_END = 10.0
METHODS = {"rk4": {"dt": 0.01}, "rkmk8": {"rtol": 1e-9}}


def _u(i, k):
    """Counter-based uniforms in [0, 1) of body indices i (float64), stream k."""
    x = np.sin(i * (12.9898 + 7.233 * k) + 78.233 * k) * 43758.5453
    return x - np.floor(x)


def bodies(index):
    """Initial states (n, 7) and inertias (n, 3) of the bodies with these indices."""
    i = np.asarray(index, dtype=np.float64)
    n = i.shape[0]
    y0 = np.zeros((n, 7))
    y0[:, 0] = 1.0
    # Box-Muller from two counter streams per axis
    for a in range(3):
        u1, u2 = _u(i, 2 * a + 1), _u(i, 2 * a + 2)
        y0[:, 4 + a] = 0.5 * np.sqrt(-2 * np.log1p(-u1)) * np.cos(2 * np.pi * u2)
    y0[:, 6] += 5.0
    inertia = np.array([1.0, 1.0, 0.5]) * (0.95 + 0.1 * np.stack(
        [_u(i, 10 + a) for a in range(3)], axis=1))
    return y0, inertia


def model(inertia):
    return rotode.RigidBody(inertia, torque=rotode.torque.Gravity(1.0, 9.81, [0.0, 0.0, 0.5]))


def mean_tilt(q):
    """Mean angle (deg) between the body z axis and world z at the final time."""
    z = rotode.quaternion.rotate(q, np.array([0.0, 0.0, 1.0]))
    return np.degrees(np.arccos(np.clip(z[..., 2], -1, 1))).mean()


def single(n, method, cores):
    y0, inertia = bodies(np.arange(n))
    t = time.perf_counter()
    res = rotode.integrate(model(inertia), (0, T_END), y0, method=method, t_eval=[0, T_END],
                           workers=cores, **METHODS[method])
    tilt = mean_tilt(res.q[:, -1])
    return time.perf_counter() - t, res.stats["n_steps"], tilt


def on_dask(n, method, chunk, client):
    import dask.array as da
    index = da.arange(n, chunks=chunk, dtype=np.float64)
    y0 = index.map_blocks(lambda i: bodies(i)[0], new_axis=1, chunks=(index.chunks[0], (7,)),
                          dtype=float)
    inertia = index.map_blocks(lambda i: bodies(i)[1], new_axis=1,
                               chunks=(index.chunks[0], (3,)), dtype=float)
    t = time.perf_counter()
    res = rotode.integrate(model(inertia), (0, T_END), y0, method=method, t_eval=[0, T_END],
                           **METHODS[method])
    tilt = mean_tilt(res.q[:, -1])              # lazy: reduced on the workers
    steps = res.stats["n_steps"].max()
    tilt, steps = client.compute([tilt, steps], sync=True)
    return time.perf_counter() - t, int(steps), float(tilt)


def cluster(cores, address):
    from dask.distributed import Client, LocalCluster
    if address:
        return Client(address), None
    lc = LocalCluster(n_workers=cores, threads_per_worker=1, processes=True,
                      dashboard_address=None)
    return Client(lc), lc


def _start_sampler():
    """In a worker: sample its resident memory every 10 ms from now on (peak kept)."""
    import builtins
    import threading

    import psutil  # (a dependency of distributed)
    proc = psutil.Process()
    state = builtins.__dict__.setdefault("_rotode_bench_rss", {"peak": 0, "on": False})
    state["peak"] = proc.memory_info().rss
    if not state["on"]:
        state["on"] = True

        def loop():
            while True:
                state["peak"] = max(state["peak"], proc.memory_info().rss)
                time.sleep(0.01)
        threading.Thread(target=loop, daemon=True).start()
    return state["peak"]


def _peak():
    import builtins
    return builtins.__dict__["_rotode_bench_rss"]["peak"]


def rss_mb(client, fn):
    return sorted(v / 2**20 for v in client.run(fn).values())


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--bodies", type=int, default=1_000_000)
    p.add_argument("--chunk", type=int, default=62_500)
    p.add_argument("--methods", nargs="+", default=list(METHODS), choices=list(METHODS))
    p.add_argument("--cores", type=int, default=os.cpu_count())
    p.add_argument("--address", default=None, help="a dask scheduler instead of a LocalCluster")
    p.add_argument("--memory", action="store_true")
    p.add_argument("--overhead", action="store_true")
    a = p.parse_args()
    n, cores = a.bodies, a.cores
    print(f"{n} Lagrange tops for {T_END:g} s, chunks of {a.chunk}, {cores} cores")
    client, lc = cluster(cores, a.address)
    try:
        on_dask(1000, "rk4", 500, client)                    # workers import rotode
        for method in a.methods:
            ts, steps_s, tilt_s = single(n, method, cores)
            td, steps_d, tilt_d = on_dask(n, method, a.chunk, client)
            assert steps_s == steps_d and abs(tilt_s - tilt_d) < 1e-9, (tilt_s, tilt_d)
            rate_s = n * steps_s / ts / cores
            rate_d = n * steps_d / td / cores
            print(f"{method:6s} single process {ts:7.2f} s  {rate_s / 1e6:7.2f} M body-steps/s/core"
                  f" | dask {td:7.2f} s  {rate_d / 1e6:7.2f} M body-steps/s/core"
                  f" | dask/single {rate_d / rate_s:5.1%}  (mean tilt {tilt_d:.6f} deg)")
        if a.overhead:
            nb = 10_000
            y0, inertia = bodies(np.arange(nb))
            import dask.array as da
            t = time.perf_counter()
            rotode.integrate(model(inertia), (0, 0.1), y0, method="rk4", dt=0.01)
            t_np = time.perf_counter() - t
            lazy = rotode.integrate(model(da.from_array(inertia, chunks=10)), (0, 0.1),
                                    da.from_array(y0, chunks=(10, 7)), method="rk4", dt=0.01)
            t = time.perf_counter()
            client.compute(lazy.y.sum(), sync=True)
            t_da = time.perf_counter() - t
            print(f"task overhead: {(t_da - t_np / cores) / (nb // 10) * cores * 1e3:.2f} ms per "
                  f"task per core ({nb // 10} tasks of 10 bodies x 10 steps: {t_da:.2f} s on "
                  f"dask, {t_np:.3f} s as one NumPy call)")
    finally:
        client.close()
        if lc is not None:
            lc.close()
    if a.memory and not a.address:
        for m in (n // 4, n):
            client, lc = cluster(cores, None)
            try:
                on_dask(1000, "rk4", 500, client)           # workers import rotode
                base = rss_mb(client, _start_sampler)
                td, _, _ = on_dask(m, "rkmk8", a.chunk, client)
                peak = rss_mb(client, _peak)
                print(f"memory rkmk8 N = {m}: worker peak RSS {', '.join(f'{x:.0f}' for x in peak)}"
                      f" MB (before the run {', '.join(f'{x:.0f}' for x in base)} MB), "
                      f"{td:.1f} s")
            finally:
                client.close()
                lc.close()


if __name__ == "__main__":
    main()
