"""Sensitivities of a user's equations, ``rotode.integrate(ODE, ..., sensitivity=["y0",
"params"])`` (issue 30): against the built-in rigid body's exact (dual-number) derivative of
the same equations, central differences of fixed-step runs, and single runs for a batch."""
import numpy as np
import pytest
from scipy.spatial.transform import Rotation

import rotode
from rotode import methods

INERTIA = np.array([1.2, 1.7, 2.3])
Y0 = np.r_[Rotation.from_rotvec([0.3, -0.5, 0.8]).as_quat(scalar_first=True), 0.4, 1.1, -0.3]


def rigid(t, y, p):
    """A rigid body under a constant body torque p[3:6], moments p[0:3], plus a decaying
    scalar y[7]' = -p[6] y[7]."""
    q, w = y[:4], y[4:7]
    dq = 0.5 * np.r_[-q[1:] @ w, q[0] * w + np.cross(q[1:], w)]
    inertia = p[:3]
    dw = (p[3:6] - np.cross(w, inertia * w)) / inertia
    return np.r_[dq, dw, -p[6] * y[7]]


P = np.r_[INERTIA, 0.05, -0.1, 0.2, 0.7]


def ode(p=P):
    return rotode.ODE(rigid, n=8, quaternions=[0], params=p)


def _tangent(y, ref):
    rel = (Rotation.from_quat(ref[:4], scalar_first=True).inv()
           * Rotation.from_quat(y[:4], scalar_first=True))
    return np.r_[rel.as_rotvec(), y[4:] - ref[4:]]


def supported():
    return [m for m in methods.names("ode") if methods.get(m).sensitivity("ode", "params")]


def test_registry():
    assert set(supported()) == set(methods.names("ode"))
    assert {"rkmk3", "rkmk5", "rkmk8", "ab3", "dop853"} <= set(supported())


@pytest.mark.parametrize("method,steps", [("rk4", {"dt": 0.02}), ("ab3", {"dt": 0.02}),
                                          ("dop853", {"rtol": 1e-9, "atol": 1e-11}),
                                          ("dopri5", {"rtol": 1e-8, "atol": 1e-10})])
def test_y0_matches_the_built_in_rigid_body(method, steps):
    """The same equations as `rotode.RigidBody` (torque-free part of P): the ODE's replay by
    central differences of f agrees with the rigid body's dual-number derivative to 1e-8."""
    p = np.r_[INERTIA, 0.0, 0.0, 0.0, 0.7]
    y0 = np.r_[Y0, 1.0]
    ts = [0.3, 1.1, 2.0]
    res = rotode.integrate(ode(p), (0, 2), y0, method=method, t_eval=ts, normalize=False,
                           sensitivity=["y0"], **steps)
    body = rotode.integrate(rotode.RigidBody(INERTIA), (0, 2), Y0, method=method, t_eval=ts,
                            sensitivity=["y0"], **steps)
    got = res.sensitivity["y0"]
    assert got.shape == (3, 7, 7)
    want = body.sensitivity["y0"]
    np.testing.assert_allclose(got[:, :6, :6], want, rtol=0, atol=1e-8 * np.abs(want).max())
    # the decay is linear in y[7]: the computed solution's derivative is y_n[7] / y0[7]
    # exactly, for any method (and near exp(-0.7 t), to the method's error)
    np.testing.assert_allclose(got[:, 6, 6], res.y[:, 7] / y0[7], rtol=1e-8)
    np.testing.assert_allclose(got[:, 6, 6], np.exp(-0.7 * np.array(ts)), rtol=1e-5)


@pytest.mark.parametrize("method", supported())
def test_params_against_central_differences(method):
    """Fixed steps: central differences of runs on the same grid, to 1e-7.  Error control
    (the steps move under a perturbation): runs at a tolerance tight for the pair's order,
    to 1e-5 (bs3, third order: rtol 1e-9, to 1e-4).  The group pairs (rkmk*) on a fixed grid
    (their error-controlled runs: tests/test_ode_sensitivity_rkmk.py)."""
    adaptive = methods.get(method).adaptive and not method.startswith("rkmk")
    rtol = 1e-9 if method == "bs3" else 1e-11
    steps = {"rtol": rtol, "atol": rtol / 100} if adaptive else {"dt": 0.05}
    eps, tol = ((3e-4, 1e-4) if method == "bs3" else (1e-4, 1e-5)) if adaptive else (1e-6, 1e-7)
    y0 = np.r_[Y0, 1.0]

    def run(p):
        return rotode.integrate(ode(p), (0, 1.5), y0, method=method, t_eval=[1.5],
                                **steps).y[-1]

    res = rotode.integrate(ode(), (0, 1.5), y0, method=method, t_eval=[0.0, 0.7, 1.5],
                           sensitivity=["params", "y0"], **steps)
    S = res.sensitivity["params"]
    assert S.shape == (3, 7, 7) and res.sensitivity["y0"].shape == (3, 7, 7)
    np.testing.assert_array_equal(S[0], 0.0)
    ref = run(P)
    cols = []
    for k in range(P.size):
        e = np.zeros(P.size)
        e[k] = eps
        cols.append((_tangent(run(P + e), ref) - _tangent(run(P - e), ref)) / (2 * eps))
    want = np.array(cols).T
    np.testing.assert_allclose(S[-1], want, rtol=0, atol=tol * np.abs(want).max())


def test_batch_with_per_body_params_equals_single_runs():
    rng = np.random.default_rng(5)
    params = P * (1 + 0.05 * rng.normal(size=(3, P.size)))
    y0 = np.tile(np.r_[Y0, 1.0], (3, 1))
    res = rotode.integrate(ode(params), (0, 1), y0, method="dopri5", rtol=1e-8, atol=1e-10,
                           t_eval=[0.5, 1.0], sensitivity=["y0", "params"])
    for i in range(3):
        one = rotode.integrate(ode(params[i]), (0, 1), y0[i], method="dopri5", rtol=1e-8,
                               atol=1e-10, t_eval=[0.5, 1.0], sensitivity=["y0", "params"])
        for name in ("y0", "params"):
            np.testing.assert_array_equal(res.sensitivity[name][i], one.sensitivity[name])


def test_bad_requests():
    y0 = np.r_[Y0, 1.0]
    plain = rotode.ODE(lambda t, y: rigid(t, y, P), n=8, quaternions=[0])
    with pytest.raises(ValueError, match=r"'params'.*\('y0',\)"):
        rotode.integrate(plain, (0, 1), y0, method="rk4", dt=0.1, sensitivity=["params"])
    with pytest.raises(ValueError, match=r"'inertia'.*\('y0', 'params'\)"):
        rotode.integrate(ode(), (0, 1), y0, method="rkmk5", rtol=1e-6, sensitivity=["inertia"])
