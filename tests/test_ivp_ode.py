"""rotode.solve_ivp on a user's state with quaternion blocks (``quaternions=``, or a rotode.ODE).

References: a constant body rate (q(t) = q0 exp(W t / 2) in closed form), SciPy's own DOP853 on
the same function (the same pair: the same steps when the blocks are left as integrated),
rotode.integrate on the same ODE (the same steps and bits), the unit norm of every block of the
dense output, and the event time of a closed form.
"""
import warnings

import numpy as np
import pytest
import scipy.integrate
from scipy.integrate._ivp.ivp import OdeResult as ScipyOdeResult

import rotode
from rotode import events

W = np.array([0.3, -0.4, 1.1])


def spin(t, y):
    """[x (3), q (4)]: x' = W (the rotation vector's integral), q' = 1/2 q (0, W)."""
    q = y[3:7]
    dq = 0.5 * np.array([-q[1:] @ W, *(q[0] * W + np.cross(q[1:], W))])
    return np.concatenate([W, dq])


def spin_exact(t):
    a = np.linalg.norm(W) * t / 2
    return np.array([np.cos(a), *(np.sin(a) * W / np.linalg.norm(W))])


Y0 = np.array([0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0])


def body(t, y, inertia):
    """A torque-free rigid body [q, w] (q' = 1/2 q (0, w), Euler's equations)."""
    q, w = y[:4], y[4:7]
    dq = 0.5 * np.array([-q[1:] @ w, *(q[0] * w + np.cross(q[1:], w))])
    return np.concatenate([dq, np.cross(inertia * w, w) / inertia])


INERTIA = np.array([1.0, 2.0, 3.0])
Y_BODY = np.array([1.0, 0.0, 0.0, 0.0, 0.1, 1.0, 0.1])


@pytest.mark.parametrize("method", ["RKMK8", "rkmk5", "DOP853", "RK45", "RK23"])
def test_result_and_closed_form(method):
    sol = rotode.solve_ivp(spin, (0, 10), Y0, method=method, rtol=1e-10, atol=1e-12,
                           quaternions=[3], dense_output=True)
    assert isinstance(sol, ScipyOdeResult) and sol.success and sol.status == 0
    assert sol.y.shape == (7, sol.t.size) and sol.t[0] == 0 and sol.t[-1] == 10
    q = sol.y[3:7]
    err = np.abs(q - np.array([spin_exact(t) for t in sol.t]).T).max()
    assert err < {"RK23": 1e-6}.get(method, 1e-8)
    assert np.abs(np.linalg.norm(q, axis=0) - 1).max() < 1e-14
    # the dense output: the rows at the steps' ends, every block unit inside the steps
    assert np.abs(sol.sol(sol.t) - sol.y).max() < 1e-13
    mid = 0.5 * (sol.t[1:] + sol.t[:-1])
    ym = sol.sol(mid)
    assert np.abs(np.linalg.norm(ym[3:7], axis=0) - 1).max() < 1e-14
    assert np.abs(ym[3:7] - np.array([spin_exact(t) for t in mid]).T).max() < \
        {"RK23": 1e-5, "RK45": 1e-7}.get(method, 1e-8)
    assert np.abs(ym[:3] - np.outer(W, mid)).max() < 1e-8
    assert sol.nfev > 0 and sol.njev == 0 and sol.nlu == 0


@pytest.mark.parametrize("method", ["rkmk8", "dop853", "rkmk5"])
def test_same_steps_as_integrate(method):
    """The steps of rotode.integrate on the same ODE, its final row bit for bit."""
    model = rotode.ODE(body, quaternions=[0], args=(INERTIA,))
    res = rotode.integrate(model, (0, 20), Y_BODY, method=method, rtol=1e-9, atol=1e-11)
    sol = rotode.solve_ivp(body, (0, 20), Y_BODY, method=method, rtol=1e-9, atol=1e-11,
                           quaternions=[0], args=(INERTIA,))
    assert sol.t.size == res.stats["n_steps"] + 1
    np.testing.assert_array_equal(sol.y[:, -1], res.y[-1])


def test_scipy_pair_left_as_integrated_takes_scipys_steps():
    """DOP853 on the state with the blocks left as integrated is SciPy's DOP853."""
    ref = scipy.integrate.solve_ivp(body, (0, 20), Y_BODY, method="DOP853", rtol=1e-8,
                                    atol=1e-10, args=(INERTIA,))
    sol = rotode.solve_ivp(body, (0, 20), Y_BODY, method="DOP853", rtol=1e-8, atol=1e-10,
                           args=(INERTIA,), quaternions=[0], normalize=False)
    # (the same steps to round-off: an error estimate of ~1e-10 from stage sums of ~1 is
    # summed in another order by NumPy, which moves the next step by ~1e-8 relative)
    assert sol.t.size == ref.t.size and sol.nfev == ref.nfev
    np.testing.assert_allclose(sol.t, ref.t, rtol=1e-6)
    np.testing.assert_allclose(sol.y, ref.y, rtol=0, atol=1e-7)   # (the tolerance)
    # projected after every step (the default): the blocks unit where SciPy's drift
    unit = rotode.solve_ivp(body, (0, 20), Y_BODY, method="DOP853", rtol=1e-8, atol=1e-10,
                            args=(INERTIA,), quaternions=[0])
    assert np.abs(np.linalg.norm(unit.y[:4], axis=0) - 1).max() < 1e-15
    assert np.abs(unit.y[:, -1] - ref.y[:, -1]).max() < 1e-6


def test_t_eval_rows_are_the_dense_output():
    te = np.linspace(0, 10, 23)
    for method in ("RKMK8", "DOP853"):
        sol = rotode.solve_ivp(spin, (0, 10), Y0, method=method, rtol=1e-10, atol=1e-12,
                               quaternions=[3], t_eval=te, dense_output=True)
        np.testing.assert_array_equal(sol.t, te)
        assert np.abs(sol.y - sol.sol(te)).max() < 1e-13
        assert sol.y.shape == (7, te.size)


def test_event_on_a_block_closed_form():
    """A body spinning about z: the angle between body x and world x reaches pi/2 at
    t = (pi/2) / |w|; the event reads the block at offset 3 (block 0 of the ODE)."""
    def about_z(t, y):
        q = y[3:7]
        w = np.array([0.0, 0.0, 0.5])
        dq = 0.5 * np.array([-q[1:] @ w, *(q[0] * w + np.cross(q[1:], w))])
        return np.concatenate([w, dq])

    quarter = events.AxisAngle([1, 0, 0], [1, 0, 0], np.pi / 2, terminal=True, block=0)
    level = events.Component("y", 2, value=0.25)          # x_z = 0.25 at t = 0.5
    for method in ("RKMK8", "DOP853"):
        sol = rotode.solve_ivp(about_z, (0, 10), Y0, method=method, rtol=1e-11, atol=1e-13,
                               quaternions=[3], events=[quarter, level])
        assert sol.status == 1
        assert abs(sol.t_events[0][0] - np.pi) < 1e-9
        assert abs(sol.t_events[1][0] - 0.5) < 1e-12
        assert sol.t[-1] == sol.t_events[0][0]
        assert sol.y_events[0].shape == (1, 7)


def test_event_reads_a_rate_in_the_state():
    """Component('w', i, rate=r) reads the body rate at y[r:r+3] of a user's state."""
    crossing = events.Component("w", 1, value=0.5, rate=4)
    sol = rotode.solve_ivp(body, (0, 20), Y_BODY, method="RKMK8", rtol=1e-10, atol=1e-12,
                           quaternions=[0], args=(INERTIA,), events=crossing,
                           dense_output=True)
    assert sol.t_events[0].size > 0
    for t in sol.t_events[0]:
        assert abs(sol.sol(t)[5] - 0.5) < 1e-9
    with pytest.raises(ValueError, match="rate="):
        rotode.solve_ivp(body, (0, 20), Y_BODY, method="RKMK8", quaternions=[0],
                         args=(INERTIA,), events=events.Component("w", 1, value=0.5))
    with pytest.raises(ValueError, match="block"):
        rotode.solve_ivp(body, (0, 20), Y_BODY, method="RKMK8", quaternions=[0],
                         args=(INERTIA,), events=events.AxisAngle([1, 0, 0], [1, 0, 0], 1.0,
                                                                  block=1))
    with pytest.raises(ValueError, match="user's state"):
        rotode.integrate(rotode.RigidBody(INERTIA), (0, 1), Y_BODY, method="dop853",
                         rtol=1e-6, events=events.AxisAngle([1, 0, 0], [1, 0, 0], 1.0,
                                                            block=0))


def test_python_event_sees_the_whole_state():
    def g(t, y):
        return y[0] - 1.0                          # x_x = W_x t = 1 at t = 1 / 0.3
    g.terminal = True
    sol = rotode.solve_ivp(spin, (0, 10), Y0, method="RKMK5", rtol=1e-10, atol=1e-12,
                           quaternions=[3], events=g)
    assert abs(sol.t_events[0][0] - 1 / 0.3) < 1e-10 and sol.status == 1


def test_fixed_steps_as_integrate():
    model = rotode.ODE(body, quaternions=[0], args=(INERTIA,))
    res = rotode.integrate(model, (0, 2), Y_BODY, method="rk4", dt=0.01)
    sol = rotode.solve_ivp(body, (0, 2), Y_BODY, method="rk4", step=0.01, quaternions=[0],
                           args=(INERTIA,), dense_output=True)
    assert sol.t.size == 201
    np.testing.assert_array_equal(sol.y[:, -1], res.y[-1])
    mid = 0.5 * (sol.t[1:] + sol.t[:-1])
    assert np.abs(np.linalg.norm(sol.sol(mid)[:4], axis=0) - 1).max() < 1e-15
    np.testing.assert_array_equal(sol.sol(sol.t[5]), sol.y[:, 5])
    te = [0.5, 1.234]
    part = rotode.solve_ivp(body, (0, 2), Y_BODY, method="rk4", dt=0.01, quaternions=[0],
                            args=(INERTIA,), t_eval=te)
    np.testing.assert_array_equal(part.t, te)


def test_a_rotode_ode_as_fun():
    model = rotode.ODE(spin, n=7, quaternions=[3])
    a = rotode.solve_ivp(model, (0, 5), Y0, method="RKMK8", rtol=1e-9, atol=1e-11)
    b = rotode.solve_ivp(spin, (0, 5), Y0, method="RKMK8", rtol=1e-9, atol=1e-11,
                         quaternions=[3])
    np.testing.assert_array_equal(a.y, b.y)
    with pytest.raises(TypeError, match="args"):
        rotode.solve_ivp(model, (0, 5), Y0, method="RKMK8", args=(1,))
    with pytest.raises(ValueError, match="contradicts"):
        rotode.solve_ivp(model, (0, 5), Y0, method="RKMK8", quaternions=[0])


def test_solver_classes_name_the_method():
    a = rotode.solve_ivp(spin, (0, 5), Y0, method=rotode.RKMK8, rtol=1e-9, atol=1e-11,
                         quaternions=[3])
    b = rotode.solve_ivp(spin, (0, 5), Y0, method=scipy.integrate.DOP853, rtol=1e-9,
                         atol=1e-11, quaternions=[3])
    c = rotode.solve_ivp(spin, (0, 5), Y0, method="DOP853", rtol=1e-9, atol=1e-11,
                         quaternions=[3])
    assert a.success and np.abs(np.linalg.norm(a.y[3:7], axis=0) - 1).max() < 1e-15
    np.testing.assert_array_equal(b.y, c.y)


def test_failures_reported():
    def nan_late(t, y):
        d = spin(t, y)
        if t > 2.0:
            d[0] = np.nan
        return d

    sol = rotode.solve_ivp(nan_late, (0, 5), Y0, method="RKMK8", rtol=1e-9, quaternions=[3])
    assert sol.status == -1 and not sol.success
    assert "non-finite" in sol.message and sol.t[-1] <= 2.0 + 1e-12
    assert np.isfinite(sol.y).all()

    def raising(t, y):
        if t > 1.0:
            raise KeyError("from fun")
        return spin(t, y)

    with pytest.raises(KeyError, match="from fun"):
        rotode.solve_ivp(raising, (0, 5), Y0, method="DOP853", quaternions=[3])


@pytest.mark.parametrize("kwargs, error, match", [
    (dict(method="Radau"), ValueError, "quaternion blocks"),
    (dict(method="LSODA"), ValueError, "quaternion blocks"),
    (dict(method="magnus4"), ValueError, "quaternion blocks"),
    (dict(method="rk4"), TypeError, "fixed steps"),
    (dict(method="rk4", step=0.1, rtol=1e-6), ValueError, "not both"),
    (dict(method="RKMK8", step=0.1, dt=0.1), TypeError, "alias"),
    (dict(method="RKMK8", quaternions=[3, 5]), ValueError, "overlap"),
    (dict(method="RKMK8", quaternions=[5]), ValueError, "does not fit"),
    (dict(method="RKMK8", y0=np.zeros((2, 7))), ValueError, "shape"),
    (dict(method="RKMK8", y0=np.zeros(7)), ValueError, "zero"),
    (dict(method="rkmk8", normalize=True), TypeError, "normalize"),
])
def test_bad_input(kwargs, error, match):
    kwargs = {"quaternions": [3], "y0": Y0, **kwargs}
    y0 = kwargs.pop("y0")
    with pytest.raises(error, match=match):
        rotode.solve_ivp(spin, (0, 1), y0, **kwargs)


def test_per_body_params_refused_and_unknown_options_warned():
    def f(t, y, p):
        return spin(t, y) * p[0]

    batch = rotode.ODE(f, n=7, quaternions=[3], params=np.ones((3, 1)))
    with pytest.raises(ValueError, match="per-body"):
        rotode.solve_ivp(batch, (0, 1), Y0, method="RKMK8")
    with pytest.warns(UserWarning, match="no effect"):
        rotode.solve_ivp(spin, (0, 1), Y0, method="RKMK8", quaternions=[3], jac=None)


def test_zero_span_and_no_blocks():
    sol = rotode.solve_ivp(spin, (1.0, 1.0), Y0, method="RKMK8", quaternions=[3])
    assert sol.success and sol.t.tolist() == [1.0, 1.0]          # (SciPy's own result)
    # quaternions=[]: rotode's loop with no block (the answers of SciPy's pair)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        a = rotode.solve_ivp(spin, (0, 3), Y0, method="RK45", quaternions=[], rtol=1e-8)
    b = scipy.integrate.solve_ivp(spin, (0, 3), Y0, method="RK45", rtol=1e-8)
    np.testing.assert_allclose(a.y, b.y, rtol=0, atol=1e-12)


def test_integrate_events_on_a_block_per_body():
    """rotode.integrate of a batch with per-body rates: a terminal event on block 0 stops each
    body at its own closed-form time, the others' rows intact."""
    def about_z(t, y, p):
        q = y[3:7]
        w = np.array([0.0, 0.0, p[0]])
        dq = 0.5 * np.array([-q[1:] @ w, *(q[0] * w + np.cross(q[1:], w))])
        return np.concatenate([w, dq])

    rates = np.array([[0.5], [1.0], [2.0]])
    model = rotode.ODE(about_z, n=7, quaternions=[3], params=rates)
    quarter = events.AxisAngle([1, 0, 0], [1, 0, 0], np.pi / 2, terminal=True, block=0)
    res = rotode.integrate(model, (0, 10), np.tile(Y0, (3, 1)), method="rkmk8", rtol=1e-11,
                           atol=1e-13, events=quarter, workers=2)
    np.testing.assert_allclose(res.t_stop, (np.pi / 2) / rates[:, 0], rtol=1e-10)
    assert res.status == 1
