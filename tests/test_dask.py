"""rotode.integrate and the kernels on dask arrays (docs/scaling.md).

Reference: the NumPy batched call on the same bodies, bit for bit, for any chunking and any
scheduler (threads, a LocalCluster of two worker processes), and after a worker dies mid-run.
"""
import os
import signal
import time

import numpy as np
import pytest

import rotode

da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")

N = 60


def _ensemble(n=N, seed=0):
    rng = np.random.default_rng(seed)
    inertia = np.array([1.0, 1.0, 0.5]) * (1.0 + 0.05 * rng.random((n, 3)))
    com = np.c_[np.zeros((n, 2)), 0.8 + 0.4 * rng.random(n)]
    y0 = np.tile([1.0, 0, 0, 0, 1.5, 0, 1.0], (n, 1))
    y0[:, 4:] += 0.2 * rng.normal(size=(n, 3))
    return inertia, com, y0


CASES = [("rk4", {"dt": 0.01}), ("rkmk8", {"rtol": 1e-9})]


@pytest.mark.parametrize("method, step", CASES)
@pytest.mark.parametrize("chunks", [1, 17, N])
def test_dask_equals_numpy_bit_for_bit(method, step, chunks):
    inertia, com, y0 = _ensemble()
    ref = rotode.integrate(rotode.RigidBody(inertia, torque=rotode.torque.Gravity(1.0, 9.81, com)),
                           (0, 4), y0, method=method, t_eval=[0, 2, 4], **step)
    # per-body parameters chunked differently from y0: rechunked to y0's chunks of bodies
    model = rotode.RigidBody(da.from_array(inertia, chunks=25),
                             torque=rotode.torque.Gravity(1.0, 9.81, da.from_array(com, 7)))
    res = rotode.integrate(model, (0, 4), da.from_array(y0, chunks=(chunks, 7)), method=method,
                           t_eval=[0, 2, 4], **step)
    assert res.y.chunks[0] == da.from_array(y0, chunks=(chunks, 7)).chunks[0]
    np.testing.assert_array_equal(res.t, ref.t)
    with dask.config.set(scheduler="threads"):
        q, w, status = dask.compute(res.q, res.w, res.status)
        out = res.compute()
    np.testing.assert_array_equal(q, ref.q)
    np.testing.assert_array_equal(w, ref.w)
    np.testing.assert_array_equal(status, 0)
    np.testing.assert_array_equal(out.y, ref.y)
    assert out.success and out.stats["n_steps"] == ref.stats["n_steps"]
    assert out.stats["nfev"] == ref.stats["nfev"]


def test_dask_kinematics_shared_source_and_per_body_rates():
    rng = np.random.default_rng(4)
    q0 = rng.normal(size=(30, 4))
    t = np.linspace(0, 2, 201)
    gyro = rotode.omega.Samples(t, np.c_[np.sin(t), np.cos(2 * t), 0.3 * t], kind="cubic")
    lazy = rotode.integrate(gyro, (0, 2), da.from_array(q0, chunks=(7, 4)), method="magnus4",
                            dt=0.01)
    np.testing.assert_array_equal(lazy.compute(scheduler="threads").y,
                                  rotode.integrate(gyro, (0, 2), q0, method="magnus4",
                                                   dt=0.01).y)
    rates = rng.normal(size=(30, 3))
    lazy = rotode.integrate(da.from_array(rates, chunks=11), (0, 2), q0, method="rkmk5",
                            rtol=1e-8)
    np.testing.assert_array_equal(lazy.compute(scheduler="threads").y,
                                  rotode.integrate(rates, (0, 2), q0, method="rkmk5",
                                                   rtol=1e-8).y)


def test_dask_per_body_force_and_mass():
    rng = np.random.default_rng(10)
    y0 = np.zeros((25, 13))
    y0[:, 0] = 1.0
    y0[:, 4:7] = rng.normal(size=(25, 3))
    y0[:, 10:13] = rng.normal(size=(25, 3))
    force, mass = rng.normal(size=(25, 3)), 1.0 + rng.random(25)
    body = rotode.RigidBody([1.0, 2.0, 2.5])
    ref = rotode.integrate(body, (0, 1), y0, method="rkn4", dt=0.01, force=force, mass=mass)
    res = rotode.integrate(body, (0, 1), da.from_array(y0, chunks=(6, 13)), method="rkn4",
                           dt=0.01, force=da.from_array(force, chunks=10), mass=mass)
    np.testing.assert_array_equal(res.compute(scheduler="threads").y, ref.y)
    with pytest.raises(ValueError, match="option `mass` holds 24 bodies but `y0` 25"):
        rotode.integrate(body, (0, 1), da.from_array(y0), method="rkn4", dt=0.01, force=force,
                         mass=mass[:24])


def test_dask_events_per_body():
    _, _, y0 = _ensemble(40, seed=5)
    top = rotode.RigidBody([1.0, 1.0, 0.5], torque=rotode.torque.Gravity(1.0, 1.0, [0, 0, 1]))
    tilt = rotode.events.AxisAngle([0, 0, 1], [0, 0, 1], np.radians(60), terminal=True,
                                   direction=+1)
    flip = rotode.events.Component("w", 1, 0.0)
    ref = rotode.integrate(top, (0, 50), y0, method="dop853", rtol=1e-9, events=[flip, tilt])
    res = rotode.integrate(top, (0, 50), da.from_array(y0, chunks=(13, 7)), method="dop853",
                           rtol=1e-9, events=[flip, tilt])
    out = res.compute(scheduler="threads")
    assert out.status == ref.status == 1
    np.testing.assert_array_equal(out.t_stop, ref.t_stop)
    np.testing.assert_array_equal(out.y, ref.y)
    for a, b in zip(out.t_events, ref.t_events, strict=True):
        for ea, eb in zip(a, b, strict=True):
            np.testing.assert_array_equal(ea, eb)
    stopped = np.isfinite(ref.t_stop)
    np.testing.assert_array_equal(res.status.compute(scheduler="threads"), stopped.astype(int))
    t_ev = res.t_events.compute(scheduler="threads")           # (N, 2, 16), NaN-padded
    np.testing.assert_array_equal(t_ev[3, 1, :1], ref.t_events[3][1][:1])


def test_dask_failure_is_reported_per_body():
    y0 = np.tile([1.0, 0, 0, 0, 0.1, 0.2, 0.3], (10, 1))
    y0[7, 4] = 1e200                          # overflows: that body fails
    res = rotode.integrate(rotode.RigidBody([1.0, 2.0, 2.5]), (0, 1),
                           da.from_array(y0, chunks=(4, 7)), method="rk4", dt=0.1)
    status = res.status.compute(scheduler="threads")
    assert status[7] not in (0, 1) and np.all(np.delete(status, 7) == 0)
    out = res.compute(scheduler="threads")
    assert not out.success and "bodies 4..7" in out.message
    assert not bool(res.success.compute(scheduler="threads"))


def test_dask_bad_input():
    inertia, _, y0 = _ensemble()
    with pytest.raises(ValueError, match=r"rechunk it with y0.rechunk\(\{1: -1\}\)"):
        rotode.integrate(rotode.RigidBody(inertia), (0, 1), da.from_array(y0, chunks=(10, 4)),
                         method="rk4", dt=0.1)
    with pytest.raises(ValueError, match="holds 60 bodies but `y0` 59"):
        rotode.integrate(rotode.RigidBody(da.from_array(inertia)), (0, 1),
                         da.from_array(y0[:59]), method="rk4", dt=0.1)
    gravity = rotode.torque.Gravity(1.0, 9.81, da.from_array(np.tile([0, 0, 0.5], (60, 1))))
    with pytest.raises(ValueError, match="torque's per-body `com` holds 60 bodies but `y0` 59"):
        rotode.integrate(rotode.RigidBody([1.0, 1.0, 0.5], torque=gravity), (0, 1),
                         da.from_array(y0[:59]), method="rk4", dt=0.1)
    with pytest.raises(ValueError, match=r"shape \(N, k\)"):
        rotode.integrate(rotode.RigidBody(inertia[0]), (0, 1), da.from_array(y0[0]),
                         method="rk4", dt=0.1)
    with pytest.raises(ValueError, match=r"per-body shape \(N, 3\) or \(N, 3, 3\)"):
        rotode.RigidBody(da.ones((5, 4)))
    # the call is checked before any task runs
    with pytest.raises(ValueError, match="unknown method"):
        rotode.integrate(rotode.RigidBody(inertia), (0, 1), da.from_array(y0), method="rk9",
                         dt=0.1)
    with pytest.raises(TypeError, match="`out` cannot be given with dask arrays"):
        rotode.so3.exp(da.zeros((4, 3)), out=np.empty((4, 3, 3)))


def test_dask_kernels_equal_numpy():
    rng = np.random.default_rng(6)
    p, q = rng.normal(size=(25, 4)), rng.normal(size=(25, 4))
    pd = da.from_array(p, chunks=(6, 4))
    Q = rotode.quaternion
    np.testing.assert_array_equal(Q.multiply(pd, q).compute(), Q.multiply(p, q))
    np.testing.assert_array_equal(Q.angle_between(pd, q[0]).compute(), Q.angle_between(p, q[0]))
    np.testing.assert_array_equal(Q.to_matrix(pd).compute(), Q.to_matrix(p))
    v = rng.normal(size=(25, 3))
    R, J = rotode.so3.exp_jacobian(da.from_array(v, chunks=(5, 3)))
    R0, J0 = rotode.so3.exp_jacobian(v)
    np.testing.assert_array_equal(R.compute(), R0)
    np.testing.assert_array_equal(J.compute(), J0)
    # angle_between: SciPy's magnitude of the relative rotation
    from scipy.spatial.transform import Rotation
    rel = Rotation.from_quat(p, scalar_first=True).inv() * Rotation.from_quat(q,
                                                                              scalar_first=True)
    np.testing.assert_allclose(Q.angle_between(p, q), rel.magnitude(), rtol=0, atol=1e-14)


def test_local_cluster_two_workers_same_bits(client):
    inertia, com, y0 = _ensemble(200, seed=7)
    model = rotode.RigidBody(inertia, torque=rotode.torque.Gravity(1.0, 9.81, com))
    for method, step in CASES:
        ref = rotode.integrate(model, (0, 3), y0, method=method, **step)
        dmodel = rotode.RigidBody(da.from_array(inertia, chunks=50),
                                  torque=rotode.torque.Gravity(1.0, 9.81, da.from_array(com, 50)))
        res = rotode.integrate(dmodel, (0, 3), da.from_array(y0, chunks=(50, 7)),
                               method=method, **step)
        out = res.compute()                          # the client is the default scheduler
        np.testing.assert_array_equal(out.y, ref.y)
        assert len(client.scheduler_info()["workers"]) == 2


def test_local_cluster_worker_killed_mid_run(client):
    inertia, com, y0 = _ensemble(2000, seed=8)
    model = rotode.RigidBody(inertia, torque=rotode.torque.Gravity(1.0, 9.81, com))
    ref = rotode.integrate(model, (0, 10), y0, method="rk4", dt=2e-3, t_eval=[0, 10])
    res = rotode.integrate(model, (0, 10), da.from_array(y0, chunks=(250, 7)), method="rk4",
                           dt=2e-3, t_eval=[0, 10])
    pids = client.run(os.getpid)
    future = client.compute(res.y)
    deadline = time.monotonic() + 30
    while not any(client.processing().values()) and time.monotonic() < deadline:
        time.sleep(0.01)
    busy = [addr for addr, keys in client.processing().items() if keys]
    assert busy, "no task started"
    os.kill(pids[busy[0]], signal.SIGKILL)                     # a worker dies mid-task
    y = future.result(timeout=120)
    np.testing.assert_array_equal(y, ref.y)
    deadline = time.monotonic() + 30
    while len(client.scheduler_info()["workers"]) < 2 and time.monotonic() < deadline:
        time.sleep(0.1)                          # (the nanny restarts it for the next tests)


def test_dask_persist_runs_each_chunk_once():
    calls = []

    def torque(t, q, w):
        calls.append(t)
        return np.zeros(3)

    y0 = np.tile([1.0, 0, 0, 0, 0.1, 0.2, 0.3], (10, 1))
    res = rotode.integrate(rotode.RigidBody([1.0, 2.0, 2.5], torque=torque), (0, 1),
                           da.from_array(y0, chunks=(4, 7)), method="rk4", dt=0.1)
    probe = len(calls)                       # the one-body check of the call: 10 steps x 4
    assert probe == 40
    with dask.config.set(scheduler="synchronous"):
        res.persist()
        assert len(calls) - probe == 10 * 40          # every body once
        out = res.compute()
        q, status = dask.compute(res.q, res.status)
    assert len(calls) - probe == 10 * 40               # nothing ran again
    np.testing.assert_array_equal(q, out.q)
    assert isinstance(res, rotode.LazyIntegrationResult) and not status.any()
