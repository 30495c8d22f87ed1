"""Batches of a user's compiled equations with per-body parameters (rotode.ODE, params (N, m)):
every body of a batch of 200 spacecraft (benchmarks/spacecraft.py, each with its own inertia,
gains and wheel momenta) gives the bits of its single run, on 1 and 2 threads.
benchmarks/bench_ode_batch.py measures the speed-up of 10^4 of them on 2 threads.
"""

import benchmark_modules
import numpy as np
import pytest

import rotode

pytestmark = benchmark_modules.needs("spacecraft")
numba = pytest.importorskip("numba")

N = 200
T = 600.0          # the slew: the controller's busiest part


@pytest.fixture(scope="module")
def setup():
    sc = benchmark_modules.load("spacecraft")
    y0, P = sc.ensemble(N)
    return sc, sc.make_cfunc(), y0, P


def _run(sc, cfunc, y0, P, method, workers=1):
    kw = dict(rtol=1e-8, atol=sc.atol_of(1e-8)) if method != "rk4" else dict(dt=1.0)
    return rotode.integrate(rotode.ODE(cfunc, n=16, quaternions=[6], params=P), (0.0, T), y0,
                            method=method, t_eval=[T / 2, T], workers=workers, **kw)


@pytest.mark.parametrize("method", ["rkmk8", "dop853", "rk4"])
def test_every_body_is_its_single_run_on_1_and_2_workers(setup, method):
    sc, cfunc, y0, P = setup
    batches = {w: _run(sc, cfunc, y0, P, method, workers=w) for w in (1, 2)}
    for b in batches.values():
        assert b.success and b.y.shape == (N, 2, 16)
    np.testing.assert_array_equal(batches[1].y, batches[2].y)
    for i in range(N):
        one = _run(sc, cfunc, y0[i], P[i], method)
        np.testing.assert_array_equal(batches[2].y[i], one.y)
        if method != "rk4":
            assert batches[2].stats["per_body"]["n_steps"][i] == one.stats["n_steps"]
    # the parameters matter: the bodies end apart
    assert np.ptp(batches[1].y[:, :, 13:16], axis=0).max() > 0.1
