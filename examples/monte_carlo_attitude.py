"""Monte Carlo attitude dispersion of an inertially pointed spacecraft, on dask.

An ensemble of spacecraft, each with its own inertia (+-5 % per axis about the nominal
diag(1200, 1000, 1500) kg m^2), residual body rates after detumbling (N(0, (2e-5 rad/s)^2) per
axis) and constant body-frame disturbance torques (N(0, (1e-4 N m)^2) per axis, solar pressure and
magnetic residuals), starts at the target attitude and drifts freely for 600 s.  The pointing
error at 60 s and 600 s is the rotation angle between each attitude and the target
(`rotode.quaternion.angle_between`), reduced to a histogram on the workers.

Run here (a LocalCluster of one single-threaded worker process per core):
    python -m pip install ".[dask,plot]"
    python examples/monte_carlo_attitude.py --bodies 1000000 --plot pointing.png
On a cluster (a running dask scheduler, e.g. from dask-jobqueue or `dask scheduler` +
`dask worker tcp://host:8786 --nthreads 1` on each core), point it there:
    python examples/monte_carlo_attitude.py --address tcp://host:8786 --bodies 100000000

Every body's numbers are those of `rotode.integrate` on NumPy arrays, bit for bit, whatever the
chunking or the cluster (docs/scaling.md).
"""
import argparse
import os
import time

import numpy as np

import rotode

NOMINAL = np.array([1200.0, 1000.0, 1500.0])       # kg m^2
T_END = 600.0


def ensemble(index, seed):
    """Initial states (n, 7), inertias (n, 3) and torques (n, 3) of the bodies `index`: one
    generator per chunk, seeded by the chunk's first body, so any chunking gives one ensemble
    per chunk size (reproducible for a given --chunk)."""
    rng = np.random.default_rng([seed, int(index[0]) if len(index) else 0])
    n = len(index)
    y0 = np.zeros((n, 7))
    y0[:, 0] = 1.0
    y0[:, 4:] = rng.normal(0.0, 2e-5, (n, 3))
    inertia = NOMINAL * rng.uniform(0.95, 1.05, (n, 3))
    torque = rng.normal(0.0, 1e-4, (n, 3))
    return y0, inertia, torque


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--bodies", type=int, default=100_000)
    p.add_argument("--chunk", type=int, default=50_000)
    p.add_argument("--address", default=None, help="a dask scheduler (default: a LocalCluster)")
    p.add_argument("--workers", type=int, default=os.cpu_count(),
                   help="LocalCluster worker processes (one thread each)")
    p.add_argument("--seed", type=int, default=2026)
    p.add_argument("--plot", default=None, help="save the pointing-error histogram here")
    a = p.parse_args()

    import dask
    import dask.array as da
    from dask.distributed import Client, LocalCluster

    if a.address:
        client = Client(a.address)
    else:
        client = Client(LocalCluster(n_workers=a.workers, threads_per_worker=1,
                                     dashboard_address=None))
    print(client)
    index = da.arange(a.bodies, chunks=a.chunk)
    # the ensemble is drawn on the workers, chunk by chunk: nothing of size N on this machine
    parts = [index.map_blocks(lambda i, k=k: ensemble(i, a.seed)[k], new_axis=1,
                              chunks=(index.chunks[0], (n,)), dtype=float)
             for k, n in ((0, 7), (1, 3), (2, 3))]
    y0, inertia, torque = parts
    spacecraft = rotode.RigidBody(inertia, torque=torque)          # per-body parameters
    res = rotode.integrate(spacecraft, (0, T_END), y0, method="rkmk8", rtol=1e-9,
                           t_eval=[0, 60, T_END])
    target = np.array([1.0, 0.0, 0.0, 0.0])
    err = np.degrees(rotode.quaternion.angle_between(res.q[:, 1:], target))   # (N, 2), lazy
    t = time.perf_counter()
    err = err.persist()             # integrated once; the errors stay on the workers
    top = 1.001 * float(err.max().compute())        # the histograms hold every body
    edges = np.linspace(0.0, top, 101)
    hist60, _ = da.histogram(err[:, 0], bins=edges)
    hist600, _ = da.histogram(err[:, 1], bins=edges)
    pct = da.percentile(err[:, 1], [50, 99])        # (merged per-chunk percentiles)
    hist60, hist600, mean600, pct, worst, ok = dask.compute(
        hist60, hist600, err[:, 1].mean(), pct, err[:, 1].max(), res.success)
    elapsed = time.perf_counter() - t
    assert hist60.sum() == hist600.sum() == a.bodies
    print(f"{a.bodies} spacecraft, {len(index.chunks[0])} chunks, {elapsed:.1f} s "
          f"({a.bodies / elapsed:,.0f} bodies/s); all succeeded: {bool(ok)}")
    print(f"pointing error at 600 s: mean {mean600:.3f} deg, median {pct[0]:.3f} deg, "
          f"99th percentile {pct[1]:.3f} deg, worst {worst:.3f} deg")
    if a.plot:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        centers = 0.5 * (edges[1:] + edges[:-1])
        fig, ax = plt.subplots(figsize=(6.4, 3.6))
        for h, label in ((hist60, "t = 60 s"), (hist600, "t = 600 s")):
            ax.step(centers, h / a.bodies / (edges[1] - edges[0]), where="mid", label=label)
        ax.set_xlabel("pointing error (deg)")
        ax.set_ylabel("probability density (1/deg)")
        ax.set_title(f"Attitude dispersion of {a.bodies:,} spacecraft (rotode on dask)")
        ax.legend()
        fig.tight_layout()
        fig.savefig(a.plot, dpi=120)
        print(f"saved {a.plot}")
    client.close()


if __name__ == "__main__":
    main()
