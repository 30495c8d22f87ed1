"""
A Monte Carlo ensemble on dask
==============================

An inertially pointed spacecraft drifts after detumbling: residual body rates and small
disturbance torques (solar pressure, magnetic residuals) turn it away from its target, and the
inertia is known only to a few per cent. A Monte Carlo ensemble of such spacecraft gives the
distribution of the pointing error. :func:`rotode.integrate` runs the same call on
`dask <https://docs.dask.org>`_ arrays: one task per chunk of bodies, on the cores of a laptop
or on the workers of a cluster, each body with the bits of its NumPy run.

This needs ``pip install ".[dask]"``. A script that starts a ``LocalCluster`` must guard its
main code with ``if __name__ == "__main__":`` (dask starts its worker processes by importing
the script again). ``examples/monte_carlo_attitude.py`` is the same study as a command-line
program that also connects to a running cluster (``--address tcp://host:8786``).
"""

# %%
# The ensemble and the run
# ------------------------
# 20 000 spacecraft with inertia ``diag(1200, 1000, 1500)`` kg m^2 dispersed by +-5 % per axis,
# residual rates of N(0, (2e-5 rad/s)^2) per axis and constant body torques of
# N(0, (1e-4 N m)^2) per axis, all starting at the target attitude. Everything per body is a
# dask array chunked like ``y0``: 4 chunks of 5000 bodies, 4 tasks. The pointing errors stay on
# the workers (``persist``); only their largest value, the histograms and two percentiles come
# back.
import dask.array as da
import matplotlib.pyplot as plt
import numpy as np
from dask.distributed import Client, LocalCluster

import rotode


def main():
    cluster = LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address=None)
    client = Client(cluster)                   # or Client("tcp://scheduler:8786") on a cluster
    n, chunk = 20_000, 5_000
    rng = np.random.default_rng(0)
    y0 = np.zeros((n, 7))
    y0[:, 0] = 1.0
    y0[:, 4:] = rng.normal(0.0, 2e-5, (n, 3))
    inertia = np.array([1200.0, 1000.0, 1500.0]) * rng.uniform(0.95, 1.05, (n, 3))
    torque = rng.normal(0.0, 1e-4, (n, 3))
    spacecraft = rotode.RigidBody(da.from_array(inertia, chunks=(chunk, 3)),
                                  torque=da.from_array(torque, chunks=(chunk, 3)))
    res = rotode.integrate(spacecraft, (0, 600), da.from_array(y0, chunks=(chunk, 7)),
                           method="rkmk8", rtol=1e-9, t_eval=[0, 60, 600])   # lazy
    error = np.degrees(rotode.quaternion.angle_between(res.q[:, 1:], [1.0, 0, 0, 0]))
    error = error.persist()                    # integrate once; the errors stay on the workers
    top = float(error.max().compute()) * 1.001                 # every body inside the bins
    edges = np.linspace(0.0, top, 81)
    h60, _ = da.histogram(error[:, 0], bins=edges)
    h600, _ = da.histogram(error[:, 1], bins=edges)
    h60, h600, pct, ok = da.compute(h60, h600, da.percentile(error[:, 1], [50, 99]),
                                    res.success)
    assert ok and h600.sum() == n and h60.sum() == n            # all bodies counted
    print(f"{n} spacecraft, {error.npartitions} tasks: pointing error at 600 s, median "
          f"{pct[0]:.2f} deg, 99th percentile {pct[1]:.2f} deg, largest {top / 1.001:.2f} deg")
    client.close()
    cluster.close()
    return edges, h60, h600


# %%
# Run it
# ------
if __name__ == "__main__":
    edges, h60, h600 = main()
    fig, ax = plt.subplots(figsize=(7.5, 3.8))
    ax.stairs(h60, edges, fill=True, alpha=0.5, color="tab:blue", label="t = 60 s")
    ax.stairs(h600, edges, fill=True, alpha=0.5, color="tab:red", label="t = 600 s")
    ax.set(xlabel="pointing error [deg]", ylabel="spacecraft",
           title="Monte Carlo of a drifting spacecraft: 20 000 bodies on dask")
    ax.legend()
    fig.tight_layout()
