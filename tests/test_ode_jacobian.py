"""A user's Jacobians in the sensitivities of a user's equations (issue 30):
``rotode.ODE(fun, ..., jac=df/dy, jac_params=df/dparams)``.  With them a stage's tangent is
``J Y + J_p D`` exactly (rotode/_ode_sensitivity.py `_Equations.F`) in place of central
differences of ``fun``: against the replay by central differences, closed forms of a linear
``f``, the compiled rigid body's dual-number derivative, a wrong Jacobian, bad input, and a
run without sensitivities (unchanged)."""
import pickle

import numpy as np
import pytest
from scipy.spatial.transform import Rotation
from test_ode_sensitivity import INERTIA, Y0, P, rigid

import rotode


def _omega(w):
    """R(w) with 1/2 q (x) (0, w) = 1/2 R(w) q (right multiplication by the pure quaternion)."""
    wx, wy, wz = w
    return np.array([[0, -wx, -wy, -wz], [wx, 0, wz, -wy], [wy, -wz, 0, wx], [wz, wy, -wx, 0]])


def _left(q):
    """L(q) with q (x) r = L(q) r."""
    w, x, y, z = q
    return np.array([[w, -x, -y, -z], [x, w, -z, y], [y, z, w, -x], [z, -y, x, w]])


def _hat(w):
    return np.array([[0, -w[2], w[1]], [w[2], 0, -w[0]], [-w[1], w[0], 0]])


def rigid_jac(t, y, p):
    """df/dy (8, 8) of `test_ode_sensitivity.rigid`."""
    q, w, inertia = y[:4], y[4:7], p[:3]
    J = np.zeros((8, 8))
    J[:4, :4] = 0.5 * _omega(w)
    J[:4, 4:7] = 0.5 * _left(q)[:, 1:]
    J[4:7, 4:7] = -(_hat(w) @ np.diag(inertia) - _hat(inertia * w)) / inertia[:, None]
    J[7, 7] = -p[6]
    return J


def rigid_jac_params(t, y, p):
    """df/dp (8, 7) of `test_ode_sensitivity.rigid`: the moments, the torque, the decay."""
    w, inertia = y[4:7], p[:3]
    num = p[3:6] - np.cross(w, inertia * w)
    J = np.zeros((8, 7))
    for k in range(3):
        e = np.zeros(3)
        e[k] = 1.0
        J[4:7, k] = -w[k] * np.cross(w, e) / inertia - e * num[k] / inertia[k] ** 2
        J[4 + k, 3 + k] = 1.0 / inertia[k]
    J[7, 6] = -y[7]
    return J


def _model(jac=None, jac_params=None, p=P):
    return rotode.ODE(rigid, n=8, quaternions=[0], params=p, jac=jac, jac_params=jac_params)


def test_analytic_jacobians_match_central_differences_of_f():
    rng = np.random.default_rng(3)
    y = np.r_[Y0, 1.3] + 0.1 * rng.normal(size=8)
    for fn, width, move in ((rigid_jac, 8, "y"), (rigid_jac_params, 7, "p")):
        got = fn(0.0, y, P)
        for k in range(width):
            e = np.zeros(width)
            e[k] = 1e-6
            if move == "y":
                fd = (rigid(0.0, y + e, P) - rigid(0.0, y - e, P)) / 2e-6
            else:
                fd = (rigid(0.0, y, P + e) - rigid(0.0, y, P - e)) / 2e-6
            np.testing.assert_allclose(got[:, k], fd, rtol=0, atol=1e-8)


STEPS = {"rk4": {"dt": 0.05}, "ab3": {"dt": 0.02}, "dopri5": {"rtol": 1e-8, "atol": 1e-10},
         "dop853": {"rtol": 1e-9, "atol": 1e-11}, "rkmk5": {"dt": 0.05},
         "rkmk8": {"rtol": 1e-9, "atol": 1e-11}}


@pytest.mark.parametrize("method", list(STEPS))
@pytest.mark.parametrize("which", ["both", "jac"])
def test_jacobian_path_matches_the_difference_path(method, which):
    """The same run (the same steps) replayed with the user's Jacobians and with central
    differences of f: equal to 1e-9 relative (the differences' own error; measured 3e-13 to
    2e-11 for y0, 6e-11 to 1.2e-10 for params); with ``jac`` alone the parameter columns are
    central differences along the parameters (then 6e-11 to 7e-11 from the difference path)."""
    y0 = np.r_[Y0, 1.0]
    kw = {"t_eval": [0.0, 0.7, 1.5], "sensitivity": ["y0", "params"], **STEPS[method]}
    fd = rotode.integrate(_model(), (0, 1.5), y0, method=method, **kw)
    mine = rotode.integrate(
        _model(rigid_jac, rigid_jac_params if which == "both" else None), (0, 1.5), y0,
        method=method, **kw)
    np.testing.assert_array_equal(mine.y, fd.y)
    for name in ("y0", "params"):
        want = fd.sensitivity[name]
        np.testing.assert_allclose(mine.sensitivity[name], want, rtol=0,
                                   atol=1e-9 * np.abs(want).max())


# ---- a linear f: closed forms --------------------------------------------------------------

W = np.array([0.7, -1.3, 2.1])
A = np.array([[-0.3, 0.8], [-0.6, -0.5]])
Q0 = Rotation.from_rotvec([0.3, -0.5, 0.8]).as_quat(scalar_first=True)


def linear(t, y, p):
    """A constant body rate p in the block y[:4], and z' = A z for z = y[4:6]."""
    return np.r_[0.5 * _omega(p) @ y[:4], A @ y[4:]]


def linear_jac(t, y, p):
    J = np.zeros((6, 6))
    J[:4, :4] = 0.5 * _omega(p)
    J[4:, 4:] = A
    return J


def linear_jac_params(t, y, p):
    return np.vstack([0.5 * _left(y[:4])[:, 1:], np.zeros((2, 3))])


def _right_jacobian(phi):
    """J_r(phi) of SO(3): exp(phi + d) = exp(phi) exp(J_r(phi) d) to first order."""
    a = np.linalg.norm(phi)
    K = _hat(phi)
    return np.eye(3) - (1 - np.cos(a)) / a**2 * K + (a - np.sin(a)) / a**3 * K @ K


def _rk4_block(h, n):
    """rk4 on q' = 1/2 q (0, w) from q0: q_n = q0 p^n with p = sum_k z^k/k!, z = (0, h w/2);
    d dtheta_n / d dtheta_0 = R(p^n)^T (normalising p^n changes nothing)."""
    z = np.r_[0.0, 0.5 * h * W]
    p, term = np.r_[1.0, 0, 0, 0], np.r_[1.0, 0, 0, 0]
    for k in range(1, 5):
        term = _left(term) @ z / k
        p = p + term
    pn = np.r_[1.0, 0, 0, 0]
    for _ in range(n):
        pn = _left(pn) @ p
    return Rotation.from_quat(pn, scalar_first=True).inv().as_matrix()


@pytest.mark.parametrize("method", ["rk4", "rkmk5"])
def test_linear_closed_form(method):
    """Fixed steps h = 0.1 to T = 2: the block's y0 column is R(p^n)^T for rk4 (above) and
    exp(-[w]x T) for rkmk5 (exact for a constant rate), its params column T J_r(w T) for
    rkmk5; the Euclidean part's is the method's own linear map (the run from the unit
    vectors).  With the Jacobians to 1e-13 (measured 7e-16 to 1.1e-15); the central
    differences reach 1e-10 (measured 8e-13 to 9e-13 for y0, 3e-12 for rkmk5's params)."""
    T, h = 2.0, 0.1
    y0 = np.r_[Q0, 1.0, -0.5]
    want = np.zeros((5, 5))
    want[:3, :3] = (_rk4_block(h, 20) if method == "rk4"
                    else Rotation.from_rotvec(-W * T).as_matrix())
    for k in range(2):
        e = np.r_[Q0, 0.0, 0.0]
        e[4 + k] = 1.0
        want[3:, 3 + k] = rotode.integrate(rotode.ODE(linear, n=6, quaternions=[0], params=W),
                                           (0, T), e, method=method, dt=h).y[-1, 4:]
    errors = {}
    for jac, tol in ((None, 1e-10), (linear_jac, 1e-13)):
        model = rotode.ODE(linear, n=6, quaternions=[0], params=W, jac=jac,
                           jac_params=None if jac is None else linear_jac_params)
        res = rotode.integrate(model, (0, T), y0, method=method, dt=h, t_eval=[T],
                               sensitivity=["y0", "params"])
        got = res.sensitivity["y0"][-1]
        errors[jac is None] = np.abs(got - want).max()
        np.testing.assert_allclose(got, want, rtol=0, atol=tol)
        if method == "rkmk5":
            np.testing.assert_allclose(res.sensitivity["params"][-1][:3],
                                       T * _right_jacobian(W * T), rtol=0, atol=tol)
            np.testing.assert_allclose(res.sensitivity["params"][-1][3:], 0.0, atol=tol)
    assert errors[False] < 1e-13


# ---- the rigid body written as an ODE, its Jacobian against the compiled body --------------

def body(t, y):
    """The torque-free rigid body of `INERTIA`: [q, w_body] (no params)."""
    return rigid(t, np.r_[y, 0.0], np.r_[INERTIA, 0.0, 0.0, 0.0, 0.0])[:7]


def body_jac(t, y):
    return rigid_jac(t, np.r_[y, 0.0], np.r_[INERTIA, 0.0, 0.0, 0.0, 0.0])[:7, :7]


@pytest.mark.parametrize("method,options", [("rk4", {"normalize": False}), ("rkmk5", {})])
def test_rigid_body_jacobian_matches_the_compiled_body(method, options):
    """Fixed dt = 0.02: the ODE's replay with its analytic Jacobian against the compiled
    `rotode.RigidBody`'s dual-number y0 sensitivity, to 1e-11 relative (measured 4e-16 for
    rk4, 1.3e-15 for rkmk5; by central differences of f 4e-13 and 7e-13)."""
    model = rotode.ODE(body, n=7, quaternions=[0], jac=body_jac)
    ts = [0.3, 1.1, 2.0]
    res = rotode.integrate(model, (0, 2), Y0, method=method, dt=0.02, t_eval=ts,
                           sensitivity=["y0"], **options)
    ref = rotode.integrate(rotode.RigidBody(INERTIA), (0, 2), Y0, method=method, dt=0.02,
                           t_eval=ts, sensitivity=["y0"])
    np.testing.assert_allclose(res.y, ref.y, rtol=0, atol=1e-13)
    got, want = res.sensitivity["y0"], ref.sensitivity["y0"]
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-11 * np.abs(want).max())


# ---- a wrong Jacobian, bad input, no sensitivities -----------------------------------------

def test_a_wrong_jacobian_gives_wrong_sensitivities():
    """The Jacobian's values are trusted: a transposed one disagrees with the differences."""
    y0 = np.r_[Y0, 1.0]
    kw = {"method": "rk4", "dt": 0.05, "t_eval": [1.5], "sensitivity": ["y0"]}
    fd = rotode.integrate(_model(), (0, 1.5), y0, **kw).sensitivity["y0"]
    wrong = rotode.integrate(_model(lambda t, y, p: rigid_jac(t, y, p).T), (0, 1.5), y0,
                             **kw).sensitivity["y0"]
    assert np.abs(wrong - fd).max() > 1e-2 * np.abs(fd).max()


def test_bad_input():
    y0 = np.r_[Y0, 1.0]
    with pytest.raises(TypeError, match="`jac` must be a Python callable"):
        _model(jac=np.eye(8))
    with pytest.raises(TypeError, match="`jac_params` must be a Python callable"):
        _model(rigid_jac, jac_params="no")
    with pytest.raises(ValueError, match="`jac_params`.*needs `params`"):
        rotode.ODE(lambda t, y: y, n=8, quaternions=[0], jac_params=rigid_jac_params)
    cases = [(lambda t, y, p: np.zeros((8, 9)), None, r"`jac` must return .*shape \(8, 8\)"),
             (rigid_jac, lambda t, y, p: np.zeros(7), r"`jac_params` must return .*\(8, 7\)"),
             (lambda t, y, p: np.full((8, 8), np.nan), None, r"`jac` returned a non-finite"),
             (rigid_jac, lambda t, y, p: np.ones((8, 7), dtype=complex), "`jac_params`")]
    for jac, jac_params, message in cases:
        with pytest.raises(ValueError, match=message):
            rotode.integrate(_model(jac, jac_params), (0, 1), y0, method="rk4", dt=0.1,
                             sensitivity=["y0", "params"])


@pytest.mark.parametrize("method,steps", [("rk4", {"dt": 0.05}),
                                          ("rkmk5", {"rtol": 1e-8, "atol": 1e-10})])
def test_jacobian_changes_nothing_without_sensitivities(method, steps):
    """The run never calls the Jacobians: the same y, bit for bit."""
    calls = []

    def jac(t, y, p):
        calls.append(t)
        return rigid_jac(t, y, p)

    y0 = np.r_[Y0, 1.0]
    plain = rotode.integrate(_model(), (0, 1.5), y0, method=method, **steps)
    mine = rotode.integrate(_model(jac, rigid_jac_params), (0, 1.5), y0, method=method,
                            **steps)
    np.testing.assert_array_equal(mine.y, plain.y)
    np.testing.assert_array_equal(mine.t, plain.t)
    assert calls == []


def test_pickle_and_repr():
    model = pickle.loads(pickle.dumps(_model(rigid_jac, rigid_jac_params)))
    assert model.jac is rigid_jac and model.jac_params is rigid_jac_params
    assert repr(model).endswith("params=(7,), jac, jac_params)")
    assert repr(_model()).endswith("params=(7,))")


def test_per_body_params_reach_the_jacobians():
    """Per-body ``params`` (N, m): each body's Jacobians get its own row (batch = single runs,
    and the difference path to 1e-9)."""
    rng = np.random.default_rng(5)
    params = P * (1 + 0.05 * rng.normal(size=(3, P.size)))
    y0 = np.tile(np.r_[Y0, 1.0], (3, 1))
    kw = {"method": "dopri5", "rtol": 1e-8, "atol": 1e-10, "t_eval": [1.0],
          "sensitivity": ["y0", "params"]}
    res = rotode.integrate(_model(rigid_jac, rigid_jac_params, params), (0, 1), y0, **kw)
    fd = rotode.integrate(_model(p=params), (0, 1), y0, **kw)
    for i in range(3):
        one = rotode.integrate(_model(rigid_jac, rigid_jac_params, params[i]), (0, 1), y0[i],
                               **kw)
        for name in ("y0", "params"):
            np.testing.assert_array_equal(res.sensitivity[name][i], one.sensitivity[name])
            want = fd.sensitivity[name][i]
            np.testing.assert_allclose(one.sensitivity[name], want, rtol=0,
                                       atol=1e-9 * np.abs(want).max())


def test_a_dask_chunk_keeps_the_jacobians():
    """A dask ensemble rebuilds the ODE of each chunk from a recipe (rotode/_dask.py): the
    Jacobians travel with it."""
    from rotode import _dask
    params = np.tile(P, (2, 1))
    model = _model(rigid_jac, rigid_jac_params, params)
    fields, recipe = _dask._per_body_fields(model)
    chunk = _dask._rebuild(pickle.loads(pickle.dumps(recipe)), {"params": params[:1]})
    assert chunk.jac is rigid_jac and chunk.jac_params is rigid_jac_params
    np.testing.assert_array_equal(chunk.params, params[:1])
