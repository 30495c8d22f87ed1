"""The built-in rigid body written as a user's equations (benchmarks/rigid_ode.py, a numba
cfunc through `rotode.ODE`, params = inertia and a constant body torque) gives the results of
`rotode.RigidBody` to round-off with every generic method of ``rotode.methods.names("ode")``
(each one also runs the rigid body), one body and a batch with per-body parameters alike.

benchmarks/bench_ode_rigid.py measures the time of the two (the ratio ODE / built-in).
"""

import benchmark_modules
import numpy as np
import pytest

import rotode

pytestmark = benchmark_modules.needs("rigid_ode")
numba = pytest.importorskip("numba")

INERTIA = np.array([1.0, 2.0, 2.5])
TORQUE = np.array([0.05, -0.02, 0.1])
Y0 = np.array([1.0, 0.0, 0.0, 0.0, 0.3, 1.1, -0.4])
T = 10.0
T_EVAL = np.linspace(0.0, T, 21)
METHODS = [m for m in rotode.methods.names("ode") if m in rotode.methods.names("rigid body")]


@pytest.fixture(scope="module")
def rb():
    module = benchmark_modules.load("rigid_ode")
    module.cfunc = module.make_cfunc()
    return module


def test_every_generic_method_runs_the_rigid_body():
    assert set(METHODS) == set(rotode.methods.names("ode"))


def test_the_cfunc_is_the_built_in_right_hand_side(rb, rng):
    body = rb.built_in(INERTIA, TORQUE)
    model = rotode.ODE(rb.cfunc, n=7, quaternions=[0], params=rb.params(INERTIA, TORQUE))
    for _ in range(20):
        y = rng.normal(size=7)
        np.testing.assert_allclose(model(0.0, y), body(0.0, y), rtol=1e-15, atol=1e-16)


@pytest.mark.parametrize("method", METHODS)
def test_the_ode_gives_the_built_in_results(rb, method):
    kw, opts = rb.settings(method)
    ref = rotode.integrate(rb.built_in(INERTIA, TORQUE), (0.0, T), Y0, method=method,
                           t_eval=T_EVAL, **kw)
    model = rotode.ODE(rb.cfunc, n=7, quaternions=[0], params=rb.params(INERTIA, TORQUE))
    res = rotode.integrate(model, (0.0, T), Y0, method=method, t_eval=T_EVAL, **kw, **opts)
    assert ref.success and res.success
    err = np.abs(res.y - ref.y).max()
    assert err < 1e-12, (method, err)
    if rotode.methods.get(method).adaptive:
        assert res.stats["n_steps"] == ref.stats["n_steps"]


@pytest.mark.parametrize("method", ["rkmk8", "dop853", "rk4"])
def test_a_batch_with_per_body_inertia(rb, method):
    rng = np.random.default_rng(5)
    n = 16
    inertia = INERTIA * (0.95 + 0.1 * rng.random((n, 3)))
    y0 = np.tile(Y0, (n, 1))
    y0[:, 4:] += 0.1 * rng.normal(size=(n, 3))
    kw, opts = rb.settings(method)
    ref = rotode.integrate(rotode.RigidBody(inertia, torque=rotode.torque.Constant(TORQUE)),
                           (0.0, T), y0, method=method, t_eval=T_EVAL, **kw)
    P = np.column_stack([inertia, np.tile(TORQUE, (n, 1))])
    res = rotode.integrate(rotode.ODE(rb.cfunc, n=7, quaternions=[0], params=P), (0.0, T), y0,
                           method=method, t_eval=T_EVAL, workers=2, **kw, **opts)
    assert np.abs(res.y - ref.y).max() < 1e-12
