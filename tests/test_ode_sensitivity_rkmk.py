"""Sensitivities of a user's equations stepped on the group by the Runge-Kutta-Munthe-Kaas
pairs ``rkmk3``, ``rkmk5``, ``rkmk8`` (issue 30; rotode/_ode_sensitivity.py): the exact
derivatives of exp(v/2) and T(v)^-1 against central differences, the rigid body written as an
ODE against the built-in body's dual-number derivative on the same steps, central differences
of runs on the run's own steps (quaternion blocks among Euclidean states, two blocks), and the
closed form of a constant rate."""
import numpy as np
import pytest
from scipy.spatial.transform import Rotation

import rotode
from rotode import _ode_sensitivity as S
from rotode import _plan, _runplan, _sensitivity, _validation

RKMK = ["rkmk3", "rkmk5", "rkmk8"]
INERTIA = np.array([1.2, 1.7, 2.3])
Q0 = Rotation.from_rotvec([0.3, -0.5, 0.8]).as_quat(scalar_first=True)
Y0 = np.r_[Q0, 0.4, 1.1, -0.3]


def _hat(w):
    return np.array([[0, -w[2], w[1]], [w[2], 0, -w[0]], [-w[1], w[0], 0]])


def _dq(q, w):
    """q' = 1/2 q (0, w)."""
    return 0.5 * np.r_[-q[1:] @ w, q[0] * w + np.cross(q[1:], w)]


# ---- the derivatives of exp(v/2) and T(v)^-1 ---------------------------------------------------

SIZES = [0.0, 1e-3, 0.7, 1.9, 2.1, 2.4999, 2.5001, 3.0, 5.5]


@pytest.mark.parametrize("size", SIZES)
def test_dexp_inv_and_its_derivative(size):
    rng = np.random.default_rng(int(size * 1000))
    u = size * rng.normal(size=3) / 1.7
    u = size * u / np.linalg.norm(u) if size else u * 0.0
    w = rng.normal(size=3)
    du, dw = rng.normal(size=(3, 2)), rng.normal(size=(3, 2))
    val, d = S._dexp_inv(u, w, du, dw)
    # T(u) (the derivative of exp) applied to T(u)^-1 w gives w back
    a = np.linalg.norm(u)
    if a > 0.1:
        K = _hat(u)
        T = np.eye(3) + (1 - np.cos(a)) / a**2 * K + (a - np.sin(a)) / a**3 * K @ K
        np.testing.assert_allclose(T @ val, w, rtol=0, atol=1e-14 * (1 + a))
    else:
        want = w - 0.5 * np.cross(u, w) + np.cross(u, np.cross(u, w)) / 12
        np.testing.assert_allclose(val, want, rtol=0, atol=4e-15)
    e = 1e-6
    for j in range(2):
        want = (S._dexp_inv(u + e * du[:, j], w + e * dw[:, j], du, dw)[0]
                - S._dexp_inv(u - e * du[:, j], w - e * dw[:, j], du, dw)[0]) / (2 * e)
        np.testing.assert_allclose(d[:, j], want, rtol=0, atol=1e-8 * np.abs(want).max())


@pytest.mark.parametrize("x", [0.0, 0.3, 1.0, 4.0, 6.0, 6.25, 6.5, 12.0, 30.0])
def test_dexp_inv_coefficient_and_its_derivative(x):
    c, dc = S._dexp_inv_coefficient(x)
    if x:
        h = 0.5 * np.sqrt(x)
        np.testing.assert_allclose(c, (1 - h / np.tan(h)) / x, rtol=1e-12 if x > 0.1 else 1e-9)
    else:
        assert c == 1 / 12 and dc == 1 / 720
    e = 1e-5
    want = (S._dexp_inv_coefficient(x + e)[0] - S._dexp_inv_coefficient(x - e)[0]) / (2 * e)
    np.testing.assert_allclose(dc, want, rtol=1e-8)
    # the series and the closed form meet at x = 6.25, value and slope
    below, above = S._dexp_inv_coefficient(6.25), S._dexp_inv_coefficient(6.25 + 1e-13)
    np.testing.assert_allclose(above, below, rtol=1e-11)


@pytest.mark.parametrize("size", SIZES)
def test_exp_half_and_its_derivative(size):
    rng = np.random.default_rng(7 + int(size * 1000))
    v = rng.normal(size=3)
    v = size * v / np.linalg.norm(v)
    dv = rng.normal(size=(3, 2))
    e, de = S._exp_half(v, dv)
    a = 0.5 * np.linalg.norm(v)
    want = np.r_[np.cos(a), np.sin(a) * v / (2 * a)] if a else np.r_[1.0, 0, 0, 0]
    np.testing.assert_allclose(e, want, rtol=0, atol=3e-16)
    h = 1e-6
    for j in range(2):
        fd = (S._exp_half(v + h * dv[:, j], dv)[0] - S._exp_half(v - h * dv[:, j], dv)[0]) / (2 * h)
        np.testing.assert_allclose(de[:, j], fd, rtol=0, atol=1e-9)


# ---- the rigid body written as an ODE ---------------------------------------------------------

def rigid(t, y):
    """The torque-free rigid body of `INERTIA`: [q, w_body]."""
    w = y[4:]
    return np.r_[_dq(y[:4], w), -np.cross(w, INERTIA * w) / INERTIA]


def _plan_of(method, model, y0, t_eval, rtol, atol):
    grid, save = _plan.output_grid((0, 2.0), t_eval, None)
    control = _validation.as_control(rtol, atol, None, None, None, len(y0), 2.0, t_eval=True)
    return _runplan.Plan(method, model, np.asarray(y0, dtype=float)[None], grid, save, {}, 1,
                         control=control)


def _steps(runner, kind, plan, model):
    """The accepted step times of an error-controlled run (what the replay holds fixed)."""
    return _sensitivity._step_times(_sensitivity.SensitivityRun(plan, runner, kind), 0, model)


@pytest.mark.parametrize("method", RKMK)
@pytest.mark.parametrize("steps", [{"dt": 0.02}, {"rtol": 1e-9, "atol": 1e-11}])
def test_y0_matches_the_built_in_rigid_body(method, steps):
    """The same equations and the same steps (checked): the ODE's replay (central differences
    of f, exact derivatives of the group's maps) agrees with the rigid body's compiled
    dual-number derivative to 1e-8 relative (measured: below 4e-11), the outputs 0.3 and 1.1
    inside steps (dense output) and 2.0 at a step's end."""
    model = rotode.ODE(rigid, n=7, quaternions=[0])
    body = rotode.RigidBody(INERTIA)
    ts = [0.3, 1.1, 2.0]
    res = rotode.integrate(model, (0, 2), Y0, method=method, t_eval=ts, sensitivity=["y0"],
                           **steps)
    ref = rotode.integrate(body, (0, 2), Y0, method=method, t_eval=ts, sensitivity=["y0"],
                           **steps)
    if "rtol" in steps:
        mine = _steps(rotode.ode, "ode", _plan_of(method, model, Y0, ts, **steps), model)
        theirs = _steps(rotode.dynamic, "rigid body", _plan_of(method, body, Y0, ts, **steps),
                        body)
        # the same steps (their error norms differ by round-off: 1e-9 in the step times)
        np.testing.assert_allclose(mine, theirs, rtol=1e-8, atol=0)
        assert np.all(np.searchsorted(mine, ts[:2]) == np.searchsorted(mine, ts[:2], "right"))
    np.testing.assert_allclose(res.y, ref.y, rtol=0, atol=1e-13)
    got, want = res.sensitivity["y0"], ref.sensitivity["y0"]
    assert got.shape == (3, 6, 6)
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-8 * np.abs(want).max())


# ---- central differences of runs on the same steps -------------------------------------------

def mixed(t, y, p):
    """y = [a, q (4), w (3), b]: a quaternion block among Euclidean states, all coupled."""
    a, q, w, b = y[0], y[1:5], y[5:8], y[8]
    down = np.array([2 * (q[1] * q[3] - q[0] * q[2]), 2 * (q[2] * q[3] + q[0] * q[1]),
                     q[0] ** 2 - q[1] ** 2 - q[2] ** 2 + q[3] ** 2])   # R(q)^T e3
    dw = -p[0] * w + p[1] * np.cross([0.0, 0.0, 0.3], down) + 0.2 * a * np.array([1, -1, 0.5])
    return np.r_[-p[2] * a + q[3] * w[0], _dq(q, w), dw, np.sin(a) + p[3] * q[0] * q[1] - 0.3 * b]


def two_blocks(t, y, p):
    """y = [q1 (4), s, q2 (4)]: two quaternion blocks driving each other."""
    q1, s, q2 = y[:4], y[4], y[5:9]
    w1 = p[0] * q2[1:] + np.array([0.0, 0.3 * np.cos(t), s])
    w2 = np.array([p[1], s, 0.7 * q1[1]])
    return np.r_[_dq(q1, w1), -p[2] * s + q1[0] * q2[3], _dq(q2, w2)]


CASES = {
    "mixed": (mixed, 9, [1], np.r_[0.3, Q0, 0.4, 1.1, -0.3, -0.2], np.array([0.1, 2.0, 0.5, 0.8])),
    "two_blocks": (two_blocks, 9, [0, 5],
                   np.r_[Q0, 0.6, Rotation.from_rotvec([-1.0, 0.2, 0.4]).as_quat(
                       scalar_first=True)], np.array([1.3, 0.9, 0.4])),
}


def _layout(n, blocks):
    """Per tangent component: (block offset, axis) or (-1, index), in state order."""
    return S._components(tuple(blocks), n)


def _perturb(y0, comp, eps):
    y = np.array(y0, dtype=float)
    b, k = comp
    if b < 0:
        y[k] += eps
        return y
    e = np.zeros(3)
    e[k] = eps
    y[b:b + 4] = (Rotation.from_quat(y0[b:b + 4], scalar_first=True)
                  * Rotation.from_rotvec(e)).as_quat(scalar_first=True)
    return y


def _tangent(y, ref, comps):
    out = []
    for b, k in comps:
        if b < 0:
            out.append(y[k] - ref[k])
            continue
        rel = (Rotation.from_quat(ref[b:b + 4], scalar_first=True).inv()
               * Rotation.from_quat(y[b:b + 4], scalar_first=True))
        out.append(rel.as_rotvec()[k])
    return np.array(out)


def _on_grid(method, fun, n, blocks, y0, p, grid):
    """The last row of a run stepped exactly on `grid` (no error control)."""
    model = rotode.ODE(fun, n=n, quaternions=blocks, params=p)
    plan = _runplan.Plan(method, model, np.asarray(y0, dtype=float)[None], np.asarray(grid),
                         np.array([len(grid) - 1], dtype=np.intp), {}, 1)
    return rotode.ode.run_plan(plan).y[0, -1]


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("method", RKMK)
@pytest.mark.parametrize("adaptive", [False, True])
def test_against_central_differences_on_the_same_steps(case, method, adaptive):
    """y0 and params at tf against central differences of runs on the unperturbed run's own
    steps (the error-controlled run's accepted steps, or the fixed grid), to 1e-7 relative."""
    fun, n, blocks, y0, p = CASES[case]
    model = rotode.ODE(fun, n=n, quaternions=blocks, params=p)
    steps = {"rtol": 1e-7, "atol": 1e-9} if adaptive else {"dt": 0.05}
    res = rotode.integrate(model, (0, 2), y0, method=method, t_eval=[0.7, 2.0],
                           sensitivity=["y0", "params"], **steps)
    if adaptive:
        grid = _steps(rotode.ode, "ode", _plan_of(method, model, y0, [0.7, 2.0], **steps), model)
        assert len(grid) > 4
    else:
        grid = np.r_[np.arange(0, 2.0, 0.05), 2.0]
    comps = _layout(n, blocks)
    ref = _on_grid(method, fun, n, blocks, y0, p, grid)
    np.testing.assert_allclose(ref, res.y[-1], rtol=0, atol=1e-13)
    eps = 1e-6
    cols = [(_tangent(_on_grid(method, fun, n, blocks, _perturb(y0, c, eps), p, grid), ref, comps)
             - _tangent(_on_grid(method, fun, n, blocks, _perturb(y0, c, -eps), p, grid), ref,
                        comps)) / (2 * eps) for c in comps]
    want = np.array(cols).T
    got = res.sensitivity["y0"][-1]
    assert got.shape == (len(comps), len(comps))
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-7 * np.abs(want).max())
    cols = []
    for k in range(p.size):
        e = np.zeros(p.size)
        e[k] = eps
        cols.append((_tangent(_on_grid(method, fun, n, blocks, y0, p + e, grid), ref, comps)
                     - _tangent(_on_grid(method, fun, n, blocks, y0, p - e, grid), ref, comps))
                    / (2 * eps))
    want = np.array(cols).T
    np.testing.assert_allclose(res.sensitivity["params"][-1], want, rtol=0,
                               atol=1e-7 * np.abs(want).max())


# ---- a closed form ----------------------------------------------------------------------------

W = np.array([0.7, -1.3, 2.1])


def spin(t, y):
    return _dq(y, W)


@pytest.mark.parametrize("method", RKMK)
@pytest.mark.parametrize("steps", [{"dt": 0.1}, {"rtol": 1e-8, "atol": 1e-10}])
def test_constant_rate_closed_form(method, steps, monkeypatch):
    """q' = 1/2 q (0, w), w constant: d dtheta(T) / d dtheta0 = exp(-[w]x T), outputs inside
    steps and at their ends.  With central differences of f (the replay's own) to 1e-10
    (their round-off: measured 5e-11); with the exact directional derivative of this linear f
    in their place, the group's maps differentiated exactly, to 1e-13 (measured 1e-14)."""
    model = rotode.ODE(spin, n=4, quaternions=[0])
    T = np.array([0.45, 1.0, 2.0])
    want = np.array([Rotation.from_rotvec(-W * t).as_matrix() for t in T])
    res = rotode.integrate(model, (0, 2), Q0, method=method, t_eval=T, sensitivity=["y0"],
                           **steps)
    np.testing.assert_allclose(res.sensitivity["y0"], want, rtol=0, atol=1e-10)

    def exact(self, t, Z, D):
        return np.column_stack([spin(t, Z[:, j]) for j in range(Z.shape[1])])

    monkeypatch.setattr(S._Equations, "F", exact)
    res = rotode.integrate(model, (0, 2), Q0, method=method, t_eval=T, sensitivity=["y0"],
                           **steps)
    np.testing.assert_allclose(res.sensitivity["y0"], want, rtol=0, atol=1e-13)
