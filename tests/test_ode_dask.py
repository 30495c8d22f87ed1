"""rotode.ODE ensembles on dask (rotode/_dask.py): one task per chunk of bodies.

Reference: the NumPy batched run of the same bodies and each body's single run, bit for bit,
for a Python function and a numba cfunc, per-body ``params`` as NumPy or dask rows, on the
threaded scheduler and on a LocalCluster of two worker processes (where a numba cfunc is
compiled again from its Python source, and a ctypes function is refused).
"""
import numpy as np
import pytest

import rotode
from rotode._dask import ShippedFunction

da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")

N = 24


def rigid_source():
    """A rigid body [q, w] under a constant body torque, p = [I1, I2, I3, tau1, tau2, tau3]
    (principal axes), scalar code that numba compiles and Python runs.  (Made inside a
    function, so that cloudpickle sends it by value to another process.)"""
    def rigid(t, y, dy, p):
        q0, q1, q2, q3 = y[0], y[1], y[2], y[3]
        wx, wy, wz = y[4], y[5], y[6]
        dy[0] = 0.5 * (-q1 * wx - q2 * wy - q3 * wz)
        dy[1] = 0.5 * (q0 * wx + q2 * wz - q3 * wy)
        dy[2] = 0.5 * (q0 * wy - q1 * wz + q3 * wx)
        dy[3] = 0.5 * (q0 * wz + q1 * wy - q2 * wx)
        dy[4] = (p[3] - (p[2] - p[1]) * wy * wz) / p[0]
        dy[5] = (p[4] - (p[0] - p[2]) * wz * wx) / p[1]
        dy[6] = (p[5] - (p[1] - p[0]) * wx * wy) / p[2]
        return 0
    return rigid


def python_fun():
    rigid = rigid_source()

    def fun(t, y, p):
        out = [0.0] * 7
        rigid(t, y.tolist(), out, p.tolist())
        return np.array(out)
    return fun


def cfunc():
    numba = pytest.importorskip("numba")
    return numba.cfunc(rotode.ODE.signature)(rigid_source())


def ensemble(n=N, seed=3):
    rng = np.random.default_rng(seed)
    P = np.column_stack([1.0 + rng.random((n, 3)), 0.1 * rng.normal(size=(n, 3))])
    y0 = np.column_stack([rng.normal(size=(n, 4)), rng.normal(size=(n, 3))])
    y0[:, :4] /= np.linalg.norm(y0[:, :4], axis=1, keepdims=True)
    return P, y0


CASES = [("rkmk8", dict(rtol=1e-9, atol=1e-11)), ("dop853", dict(rtol=1e-8, atol=1e-10)),
         ("rk4", dict(dt=0.05))]


def _check(lazy, ref, scheduler="threads"):
    assert isinstance(lazy, rotode.LazyIntegrationResult) and lazy.w is None
    out = lazy.compute(scheduler=scheduler)
    np.testing.assert_array_equal(out.y, ref.y)
    np.testing.assert_array_equal(out.q, ref.q)
    assert out.w is None and out.quaternions == (0,) and out.success
    assert out.stats["n_steps"] == ref.stats["n_steps"]
    np.testing.assert_array_equal(out.stats["per_body"]["n_steps"],
                                  ref.stats["per_body"]["n_steps"])
    return out


@pytest.mark.parametrize("kind", ["python", "numba"])
@pytest.mark.parametrize("method, step", CASES)
def test_dask_ode_equals_numpy_and_single_runs(kind, method, step):
    fun = python_fun() if kind == "python" else cfunc()
    P, y0 = ensemble()
    t_eval = [0.0, 1.5, 3.0]
    ref = rotode.integrate(rotode.ODE(fun, n=7, quaternions=[0], params=P), (0, 3), y0,
                           method=method, t_eval=t_eval, **step)
    # y0 chunked in 5s, the per-body params a dask array chunked otherwise (rechunked to y0's)
    model = rotode.ODE(fun, n=7, quaternions=[0], params=da.from_array(P, chunks=(7, 6)))
    lazy = rotode.integrate(model, (0, 3), da.from_array(y0, chunks=(5, 7)), method=method,
                            t_eval=t_eval, **step)
    assert lazy.y.chunks[0] == (5, 5, 5, 5, 4) and lazy.q.shape == (N, 3, 4)
    out = _check(lazy, ref)
    for i in (0, 7, N - 1):                 # each body: its single run's bits
        one = rotode.integrate(rotode.ODE(fun, n=7, quaternions=[0], params=P[i]), (0, 3),
                               y0[i], method=method, t_eval=t_eval, **step)
        np.testing.assert_array_equal(out.y[i], one.y)


def test_dask_params_alone_shared_params_and_plain_fun():
    fun = cfunc()
    P, y0 = ensemble()
    kw = dict(method="rkmk5", rtol=1e-8, atol=1e-10)
    ref = rotode.integrate(rotode.ODE(fun, n=7, quaternions=[0], params=P), (0, 2), y0, **kw)
    # only the params are dask: y0 (NumPy) follows their chunks
    lazy = rotode.integrate(rotode.ODE(fun, n=7, quaternions=[0],
                                       params=da.from_array(P, chunks=(10, 6))), (0, 2), y0,
                            **kw)
    assert lazy.y.chunks[0] == (10, 10, 4)
    _check(lazy, ref)
    # shared params (m,), and a Python fun without params (args), with a dask y0
    shared = rotode.ODE(fun, n=7, quaternions=[0], params=P[0])
    _check(rotode.integrate(shared, (0, 2), da.from_array(y0, chunks=(9, 7)), **kw),
           rotode.integrate(shared, (0, 2), y0, **kw))
    py = python_fun()
    plain = rotode.ODE(lambda t, y, p: py(t, y, p), n=7, quaternions=[0], args=(P[1],))
    _check(rotode.integrate(plain, (0, 2), da.from_array(y0, chunks=(9, 7)), **kw),
           rotode.integrate(plain, (0, 2), y0, **kw))


def test_dask_ode_bad_input_and_failures():
    fun = cfunc()
    P, y0 = ensemble()
    with pytest.raises(ValueError, match="per-body `params` holds 24 bodies but `y0` 23"):
        rotode.integrate(rotode.ODE(fun, n=7, quaternions=[0], params=da.from_array(P)),
                         (0, 1), da.from_array(y0[:23]), method="rk4", dt=0.1)
    with pytest.raises(ValueError, match=r"dask `params` must be real, of shape \(N, m\)"):
        rotode.ODE(fun, n=7, params=da.ones((2, 3, 4)))
    with pytest.raises(ValueError, match="unknown method"):   # checked before any task runs
        rotode.integrate(rotode.ODE(fun, n=7, quaternions=[0], params=P), (0, 1),
                         da.from_array(y0), method="magnus4", dt=0.1)
    bad = P.copy()
    bad[13, 3] = np.nan                   # a NaN torque: that body's derivative is not finite
    lazy = rotode.integrate(rotode.ODE(fun, n=7, quaternions=[0], params=bad), (0, 1),
                            da.from_array(y0, chunks=(6, 7)), method="rk4", dt=0.1)
    status = lazy.status.compute(scheduler="threads")
    assert status[13] not in (0, 1) and not np.delete(status, 13).any()
    out = lazy.compute(scheduler="threads")
    assert not out.success and "bodies 12..17" in out.message and "non-finite" in out.message


def test_shipped_functions_pickle():
    cloudpickle = pytest.importorskip("cloudpickle")      # (as dask.distributed sends them)
    fun = cfunc()
    P, y0 = ensemble(4)
    # a numba cfunc travels as its Python source, compiled once per process and token
    again = cloudpickle.loads(cloudpickle.dumps(ShippedFunction(fun)))
    assert again.fun is not fun and again.fun.address != fun.address
    assert cloudpickle.loads(cloudpickle.dumps(ShippedFunction(fun))) is again
    runs = [rotode.integrate(rotode.ODE(f, n=7, quaternions=[0], params=P), (0, 2), y0,
                             method="dop853", rtol=1e-9) for f in (fun, again.fun)]
    np.testing.assert_array_equal(runs[0].y, runs[1].y)
    # a C address means nothing in another process: refused, saying what to do
    with pytest.raises(TypeError, match="cannot be sent to another process.*threaded"):
        cloudpickle.dumps(ShippedFunction(fun.ctypes))
    # ... but on threads a ctypes function runs (nothing is pickled)
    model = rotode.ODE(fun.ctypes, n=7, quaternions=[0], params=P)
    _check(rotode.integrate(model, (0, 2), da.from_array(y0, chunks=(2, 7)), method="dop853",
                            rtol=1e-9), runs[0])


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["python", "numba"])
def test_local_cluster_two_processes_same_bits(client, kind):
    fun = python_fun() if kind == "python" else cfunc()
    P, y0 = ensemble(200, seed=9)
    for method, step in CASES[:2]:
        ref = rotode.integrate(rotode.ODE(fun, n=7, quaternions=[0], params=P), (0, 3), y0,
                               method=method, **step)
        model = rotode.ODE(fun, n=7, quaternions=[0], params=da.from_array(P, chunks=50))
        lazy = rotode.integrate(model, (0, 3), da.from_array(y0, chunks=(50, 7)),
                                method=method, **step)
        out = lazy.compute()                     # the client is the default scheduler
        np.testing.assert_array_equal(out.y, ref.y)
        assert len(client.scheduler_info()["workers"]) == 2
    # the tasks ran in the workers (each compiled the cfunc once, or unpickled the function)
    pids = set(client.run(lambda: __import__("os").getpid()).values())
    assert len(pids) == 2 and __import__("os").getpid() not in pids


@pytest.mark.slow
def test_local_cluster_refuses_a_ctypes_function(client):
    fun = cfunc()
    P, y0 = ensemble(8)
    model = rotode.ODE(fun.ctypes, n=7, quaternions=[0], params=P)
    lazy = rotode.integrate(model, (0, 1), da.from_array(y0, chunks=(4, 7)), method="rk4",
                            dt=0.1)
    with pytest.raises(TypeError) as info:
        lazy.compute()
    # (distributed raises "Could not serialize ...", from rotode's TypeError that says why)
    chain, exc = [], info.value
    while exc is not None:
        chain.append(str(exc))
        exc = exc.__cause__ or exc.__context__
    assert any("cannot be sent to another process" in m for m in chain), chain
