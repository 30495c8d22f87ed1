"""Sensitivities of a computed solution (``integrate(..., sensitivity=...)``, issue 30).

References independent of rotode/_tangent.pyx: the closed form of a constant rate, central
differences of fixed-step runs (no step control to perturb), a NumPy replay of DOPRI5 on the
accepted steps of an error-controlled run (the discrete map, steps frozen), the conservation of
|L|^2 of the torque-free body, and single runs for a batch.
"""
import numpy as np
import pytest
from scipy.linalg import expm
from scipy.spatial.transform import Rotation

import rotode
from rotode import _sensitivity, methods

rng = np.random.default_rng(30)
Q0 = Rotation.from_rotvec([0.3, -0.5, 0.8]).as_quat(scalar_first=True)
W0 = np.array([0.4, 1.1, -0.3])
TOP = rotode.RigidBody([1.2, 1.7, 2.3],
                       torque=rotode.torque.Gravity(1.0, 9.81, [0.02, -0.01, 0.3]))
INERTIA = [1.2, 1.7, 2.3]
RATE = rotode.omega.Sinusoid([0.5, -0.3, 0.8], 1.3, [0.1, 0.7, -0.4])


def _with(names, kind):
    return [m for m in methods.names(kind) if methods.get(m).sensitivity(kind)]


def _hat(w):
    return np.array([[0, -w[2], w[1]], [w[2], 0, -w[0]], [-w[1], w[0], 0]])


def _tangent(y, ref):
    """[dtheta, y[4:] - ref[4:]] of a row near ref (dtheta: q = q_ref exp(dtheta/2))."""
    rel = (Rotation.from_quat(ref[:4], scalar_first=True).inv()
           * Rotation.from_quat(y[:4], scalar_first=True))
    return np.r_[rel.as_rotvec(), y[4:] - ref[4:]]


def _perturbed(y0, j, eps):
    y = np.array(y0, dtype=float)
    if j < 3:
        e = np.zeros(3)
        e[j] = eps
        y[:4] = (Rotation.from_quat(y0[:4], scalar_first=True)
                 * Rotation.from_rotvec(e)).as_quat(scalar_first=True)
    else:
        y[4 + j - 3] += eps
    return y


def _fd(run, y0, n, eps=1e-6, inertia=False):
    """Central differences of run(y0 or moments) -> final row, in tangent coordinates."""
    ref = run(y0, INERTIA)
    cols = []
    for j in range(3 if inertia else n):
        d = []
        for s in (eps, -eps):
            if inertia:
                moments = list(INERTIA)
                moments[j] += s
                d.append(_tangent(run(y0, moments), ref))
            else:
                d.append(_tangent(run(_perturbed(y0, j, s), INERTIA), ref))
        cols.append((d[0] - d[1]) / (2 * eps))
    return np.array(cols).T


@pytest.mark.parametrize("method", ["lie_euler", "exp2", "magnus4", "cg3", "rkmk5"])
@pytest.mark.parametrize("frame", ["body", "world"])
def test_constant_rate_closed_form(method, frame):
    w, T = np.array([0.7, -1.2, 0.4]), 2.5
    res = rotode.integrate(w, (0, T), Q0, method=method, dt=0.1, frame=frame,
                           sensitivity=["y0"])
    phi = res.sensitivity["y0"]
    assert phi.shape == (res.t.shape[0], 3, 3)
    # a world-frame rate rotates q on the left: a body-frame perturbation stays as it is
    want = expm(-_hat(w) * T) if frame == "body" else np.eye(3)
    np.testing.assert_allclose(phi[-1], want, atol=1e-13)


def test_rigid_body_constant_spin_closed_form():
    # a spin about a principal axis keeps w: d dtheta(T) / d dtheta0 = exp(-[w]x T)
    w, T = np.array([0.0, 0.0, 1.3]), 3.0
    res = rotode.integrate(rotode.RigidBody(INERTIA), (0, T), np.r_[Q0, w],
                           method="lie_euler", dt=0.05, sensitivity=["y0"])
    np.testing.assert_allclose(res.sensitivity["y0"][-1][:3, :3], expm(-_hat(w) * T),
                               atol=1e-13)


@pytest.mark.parametrize("method", _with(None, "rigid body"))
@pytest.mark.parametrize("param", ["y0", "inertia"])
def test_rigid_body_against_finite_differences(method, param):
    y0 = np.r_[Q0, W0]
    options = {"normalize": True} if method in ("rk3", "rk4") else {}

    def run(y, moments):
        body = rotode.RigidBody(moments, torque=TOP.torque)
        return rotode.integrate(body, (0, 1.5), y, method=method, dt=0.05, **options).y[-1]

    res = rotode.integrate(TOP, (0, 1.5), y0, method=method, dt=0.05, sensitivity=[param],
                           **options)
    got = res.sensitivity[param][-1]
    want = _fd(run, y0, 6, inertia=param == "inertia")
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-7 * np.abs(want).max())


def _gravity(name, value):
    p = {"mass": 1.3, "g": 9.81, "com": np.array([0.02, -0.01, 0.3])}
    p[name] = value
    return rotode.torque.Gravity(p["mass"], p["g"], p["com"])


TORQUE_CASES = [("mass", 1.3, _gravity), ("g", 9.81, _gravity),
                ("com", np.array([0.02, -0.01, 0.3]), _gravity),
                ("torque", np.array([0.3, -0.2, 0.5]),
                 lambda name, v: rotode.torque.Constant(v, frame="body")),
                ("torque", np.array([0.3, -0.2, 0.5]),
                 lambda name, v: rotode.torque.Constant(v, frame="world"))]


@pytest.mark.parametrize("method", [m for m in methods.names("rigid body")
                                    if methods.get(m).sensitivity("rigid body", "mass")])
@pytest.mark.parametrize("case", range(len(TORQUE_CASES)))
def test_torque_parameters_against_finite_differences(method, case):
    """Every method x built-in torque parameter: central differences of fixed-step runs to
    1e-7; an error-controlled method (whose steps move under a perturbation) at rtol 1e-11
    against central differences of runs at that tolerance, to 1e-5."""
    name, value, make = TORQUE_CASES[case]
    y0 = np.r_[Q0, W0]
    options = {"normalize": True} if method in ("rk3", "rk4") else {}
    adaptive = methods.get(method).adaptive
    steps = {"rtol": 1e-11, "atol": 1e-13} if adaptive else {"dt": 0.05}
    eps, tol = (1e-4, 1e-5) if adaptive else (1e-6, 1e-7)
    base = rotode.integrate(rotode.RigidBody(INERTIA, torque=make(name, value)), (0, 1.5), y0,
                            method=method, sensitivity=[name], **steps, **options)
    got = base.sensitivity[name][-1]

    def run(v):
        body = rotode.RigidBody(INERTIA, torque=make(name, v))
        return rotode.integrate(body, (0, 1.5), y0, method=method, **steps, **options).y[-1]

    ref = run(value)
    cols = []
    for j in range(np.size(value)):
        e = np.zeros(np.size(value))
        e[j] = eps
        v = np.atleast_1d(np.asarray(value, dtype=float))
        plus, minus = v + e, v - e
        if np.ndim(value) == 0:
            plus, minus = float(plus[0]), float(minus[0])
        cols.append((_tangent(run(plus), ref) - _tangent(run(minus), ref)) / (2 * eps))
    want = np.array(cols).T
    assert got.shape == want.shape == (6, np.size(value))
    np.testing.assert_allclose(got, want, rtol=0, atol=tol * np.abs(want).max())


def test_torque_parameters_name_the_valid_ones():
    y0 = np.r_[Q0, W0]
    with pytest.raises(ValueError, match=r"'mass'.*\('y0', 'q0', 'w0', 'inertia', 'torque'\)"):
        rotode.integrate(rotode.RigidBody(INERTIA, torque=rotode.torque.Constant([1.0, 0, 0])),
                         (0, 1), y0, method="rk4", dt=0.1, sensitivity=["mass"])
    with pytest.raises(ValueError, match=r"'com'.*\('y0', 'q0', 'w0', 'inertia'\)"):
        rotode.integrate(rotode.RigidBody(INERTIA), (0, 1), y0, method="rk4", dt=0.1,
                         sensitivity=["com"])
    res = rotode.integrate(TOP, (0, 1), y0, method="rk4", dt=0.1,
                           sensitivity=["y0", "mass", "g", "com", "inertia"])
    assert [v.shape for v in res.sensitivity.values()] == [(11, 6, 6), (11, 6, 1), (11, 6, 1),
                                                           (11, 6, 3), (11, 6, 3)]
    # m and g enter as their product: d/dm = (g/m) d/dg
    np.testing.assert_allclose(res.sensitivity["mass"] * 1.0, res.sensitivity["g"] * 9.81,
                               rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("method", _with(None, "kinematics"))
@pytest.mark.parametrize("frame", ["body", "world"])
def test_kinematics_against_finite_differences(method, frame):
    def run(y, _):
        return rotode.integrate(RATE, (0, 2.0), y, method=method, dt=0.05, frame=frame).y[-1]

    res = rotode.integrate(RATE, (0, 2.0), Q0, method=method, dt=0.05, frame=frame,
                           sensitivity="y0")
    want = _fd(run, Q0, 3)
    np.testing.assert_allclose(res.sensitivity["y0"][-1], want, rtol=0, atol=1e-7)


def _dopri5_map(y0, ts, tout):
    """NumPy DOPRI5 on the steps ts with its dense output at tout (the discrete map)."""
    a, b, c = methods.get("dopri5").tableau.doubles
    P = np.array(methods.get("dopri5").embedded.doubles["dense"])
    y, rows, k = np.array(y0, dtype=float), [], 0
    for t, tn in zip(ts[:-1], ts[1:], strict=True):
        h, K = tn - t, []
        for i in range(7):
            ys = y + h * sum(a[i][j] * K[j] for j in range(i)) if i < 6 else \
                y + h * sum(b[j] * K[j] for j in range(6))
            K.append(TOP(t + c[i] * h if i < 6 else tn, ys))
        ynew = y + h * sum(b[j] * K[j] for j in range(6))
        while k < len(tout) and tout[k] <= tn:
            x = (tout[k] - t) / h
            rows.append(ynew if tout[k] == tn else
                        y + h * sum(np.array(K)[j] * np.polyval(np.r_[P[j][::-1], 0], x)
                                    for j in range(7)))
            k += 1
        y = ynew
    return np.array(rows)


def test_adaptive_run_is_the_derivative_of_its_discrete_map():
    y0, tout = np.r_[Q0, W0], np.array([0.37, 1.1, 2.0])
    res = rotode.integrate(TOP, (0, 2.0), y0, method="dopri5", rtol=1e-6, atol=1e-8,
                           t_eval=tout, sensitivity=["y0"])
    grid, save = rotode._plan.output_grid((0, 2.0), tout, None)
    control = rotode._validation.as_control(1e-6, 1e-8, None, None, None, 7, 2.0, t_eval=True)
    plan = rotode._runplan.Plan("dopri5", TOP, y0[None], grid, save, {}, 1, control=control)
    run = _sensitivity.SensitivityRun(plan, rotode.dynamic, "rigid body")
    ts = _sensitivity._step_times(run, 0, TOP)
    assert len(ts) > 5                    # several steps, the outputs inside them
    np.testing.assert_allclose(_dopri5_map(y0, ts, tout), res.y, rtol=0, atol=1e-13)

    def frozen(y):
        return _dopri5_map(y, ts, tout)

    ref = frozen(y0)
    for j in range(6):
        d = [frozen(_perturbed(y0, j, s)) for s in (1e-6, -1e-6)]
        for m in range(len(tout)):
            col = (_tangent(d[0][m], ref[m]) - _tangent(d[1][m], ref[m])) / 2e-6
            np.testing.assert_allclose(res.sensitivity["y0"][m][:, j], col, rtol=0,
                                       atol=1e-7 * max(1.0, np.abs(col).max()))


def test_tight_tolerance_matches_the_variational_solution():
    y0 = np.r_[Q0, W0]
    fine = rotode.integrate(TOP, (0, 2.0), y0, method="rk4", dt=1e-3, sensitivity=["y0"])
    for method in ("dop853", "dopri5"):
        res = rotode.integrate(TOP, (0, 2.0), y0, method=method, rtol=1e-11, atol=1e-12,
                               sensitivity=["y0", "inertia"])
        np.testing.assert_allclose(res.sensitivity["y0"][-1], fine.sensitivity["y0"][-1],
                                   rtol=0, atol=1e-8)


def test_torque_free_invariant_gradient_is_transported():
    # |L|^2 = w^T I^2 w is conserved: its gradient at T times Phi(T) is its gradient at 0
    body = rotode.RigidBody(INERTIA)
    y0 = np.r_[Q0, W0]
    res = rotode.integrate(body, (0, 10.0), y0, method="dop853", rtol=1e-12, atol=1e-12,
                           t_eval=[2.0, 5.0, 10.0], sensitivity=["y0"])
    I2 = np.diag(INERTIA) ** 2

    def grad(w):
        return np.r_[np.zeros(3), 2 * I2 @ w]

    for m in range(3):
        np.testing.assert_allclose(grad(res.y[m, 4:]) @ res.sensitivity["y0"][m], grad(W0),
                                   rtol=0, atol=1e-9)
        assert abs(np.linalg.det(res.sensitivity["y0"][m]) - 1.0) < 1e-8


def test_batch_equals_single_runs_bit_for_bit():
    moments = np.array([[1.2, 1.7, 2.3], [1.0, 1.5, 2.0], [2.0, 2.5, 3.0], [1.0, 1.0, 1.5]])
    Y0 = np.c_[np.tile(Q0, (4, 1)), rng.normal(size=(4, 3))]
    batch = rotode.integrate(rotode.RigidBody(moments), (0, 2.0), Y0, method="dop853",
                             rtol=1e-8, atol=1e-10, t_eval=[0.5, 2.0], workers=2,
                             sensitivity=["y0", "inertia"])
    assert batch.sensitivity["y0"].shape == (4, 2, 6, 6)
    assert batch.sensitivity["inertia"].shape == (4, 2, 6, 3)
    for i in range(4):
        one = rotode.integrate(rotode.RigidBody(moments[i]), (0, 2.0), Y0[i], method="dop853",
                               rtol=1e-8, atol=1e-10, t_eval=[0.5, 2.0],
                               sensitivity=["inertia", "y0"])
        for p in ("y0", "inertia"):
            assert np.array_equal(batch.sensitivity[p][i], one.sensitivity[p])


def test_propagate_covariance():
    res = rotode.integrate(TOP, (0, 1.0), np.r_[Q0, W0], method="rk4", dt=0.01,
                           sensitivity=["y0"])
    P0 = np.diag([1e-4, 2e-4, 3e-4, 1e-3, 1e-3, 2e-3])
    P = rotode.propagate_covariance(res, P0)
    phi = res.sensitivity["y0"]
    np.testing.assert_allclose(P[-1], phi[-1] @ P0 @ phi[-1].T, rtol=1e-15)
    with pytest.raises(ValueError, match=r"`P0` must have shape \(6, 6\)"):
        rotode.propagate_covariance(res, np.eye(3))
    plain = rotode.integrate(TOP, (0, 1.0), np.r_[Q0, W0], method="rk4", dt=0.01)
    assert plain.sensitivity is None
    with pytest.raises(ValueError, match="no 'y0' sensitivity"):
        rotode.propagate_covariance(plain, P0)


def test_bad_input():
    y0 = np.r_[Q0, W0]
    with pytest.raises(ValueError, match=r"unknown sensitivity parameter 'spin'.*\('y0', "
                                         r"'q0', 'w0', 'inertia', 'mass', 'g', 'com'\)"):
        rotode.integrate(TOP, (0, 1), y0, method="rk4", dt=0.1, sensitivity=["spin"])
    with pytest.raises(ValueError, match=r"parameter 'inertia' for kinematics.*\('y0',"):
        rotode.integrate(RATE, (0, 1), Q0, method="rk4", dt=0.1, sensitivity=["inertia"])
    with pytest.raises(ValueError, match="method 'rk4' does not support the sensitivity to "
                                         "'amplitude' for kinematics; the methods that do are "
                                         r"\('lie_euler', 'exp2', 'cg1'"):
        rotode.integrate(RATE, (0, 1), Q0, method="rk4", dt=0.1, sensitivity=["amplitude"])
    with pytest.raises(ValueError, match=r"does not differentiate the option\(s\) "
                                         r"\['force', 'mass'\]"):
        rotode.integrate(TOP, (0, 1), y0, method="rkn4", dt=0.1, force=[0, 0, 1.0], mass=2.0,
                         sensitivity=["y0"])
    with pytest.raises(ValueError, match=r"does not differentiate the option\(s\) \['L0'\]"):
        rotode.integrate(TOP, (0, 1), y0, method="implicit_midpoint", dt=0.1, L0=[0, 0, 1.0],
                         sensitivity=["y0"])
    with pytest.raises(ValueError, match="does not differentiate the option"):
        rotode.integrate(TOP, (0, 1), y0, method="rk4", dt=0.1, torque_substeps=2,
                         sensitivity=["y0"])
    with pytest.raises(ValueError, match="with `events` is not supported"):
        rotode.integrate(TOP, (0, 1), y0, method="dopri5", rtol=1e-6, sensitivity=["y0"],
                         events=rotode.events.Component("q", 0))
    # a full tensor: six directions (tests below); a diagonal one: the three moments
    full = rotode.integrate(rotode.RigidBody([[2.0, 0.1, 0], [0.1, 2.0, 0], [0, 0, 3.0]]),
                            (0, 1), y0, method="rk4", dt=0.1, sensitivity=["inertia"])
    assert full.sensitivity["inertia"].shape == (11, 6, 6)


def test_dask_input_is_refused():
    da = pytest.importorskip("dask.array")
    with pytest.raises(ValueError, match="`sensitivity` is not supported with dask input"):
        rotode.integrate(TOP, (0, 1), da.from_array(np.tile(np.r_[Q0, W0], (2, 1))),
                         method="rk4", dt=0.1, sensitivity=["y0"])


@pytest.mark.parametrize("method", ["bs3", "dopri5", "dop853", "rkmk3", "rkmk5", "rkmk8"])
def test_one_pass_primal_is_the_plain_run_bit_for_bit(method):
    # the engine carries the tangent in the run's own pass (rotode/_tangent.hpp): the same
    # steps and rows as the plain run, and the tangent of the dual-number replay of its steps
    # (rotode/_tangent.pyx, an independent implementation of the same discrete map)
    y0, tout = np.r_[Q0, W0], [0.0, 0.37, 1.1, 2.0]
    kw = dict(method=method, rtol=1e-9, atol=1e-11, t_eval=tout)
    plan = rotode._runplan.Plan(method, TOP, y0[None], *rotode._plan.output_grid((0, 2.0), tout,
                                                                                 None),
                                {}, 1, control=rotode._validation.as_control(
                                    1e-9, 1e-11, None, None, None, 7, 2.0, t_eval=True))
    assert rotode.dynamic.tangent_ready(plan)
    one = rotode.integrate(TOP, (0, 2.0), y0, sensitivity=["y0"], **kw)
    plain = rotode.integrate(TOP, (0, 2.0), y0, **kw)
    assert np.array_equal(one.y, plain.y) and np.array_equal(one.w, plain.w)
    assert one.stats["nfev"] == plain.stats["nfev"]
    assert one.stats["n_steps"] == plain.stats["n_steps"]
    replay = _sensitivity._rigid(_sensitivity.SensitivityRun(plan, rotode.dynamic,
                                                             "rigid body"), ("y0",), one.y[None])
    np.testing.assert_allclose(one.sensitivity["y0"], replay["y0"][0], rtol=0, atol=1e-12)
    np.testing.assert_allclose(one.sensitivity["y0"][0], np.eye(6), rtol=0, atol=1e-15)


def test_one_pass_batch_over_workers_equals_single_runs_bit_for_bit():
    moments = np.array([[1.2, 1.7, 2.3], [1.0, 1.5, 2.0], [2.0, 2.5, 3.0]])
    Y0 = np.c_[np.tile(Q0, (3, 1)), rng.normal(size=(3, 3))]
    kw = dict(method="dop853", rtol=1e-8, atol=1e-10, t_eval=[0.5, 2.0], sensitivity=["y0"])
    bodies = [rotode.RigidBody(m, torque=TOP.torque) for m in moments]
    batch = rotode.integrate(bodies, (0, 2.0), Y0, workers=2, **kw)
    for i in range(3):
        one = rotode.integrate(rotode.RigidBody(moments[i], torque=TOP.torque), (0, 2.0), Y0[i],
                               **kw)
        assert np.array_equal(batch.sensitivity["y0"][i], one.sensitivity["y0"])
        assert np.array_equal(batch.y[i], one.y)


@pytest.mark.parametrize("method", ["rkmk3", "rkmk5", "rkmk8"])
def test_rkmk_constant_spin_closed_form(method):
    # a torque-free spin about a principal axis: w stays, d dtheta(T) / d dtheta0 = exp(-[w]x T)
    w, T = np.array([0.0, 0.0, 1.3]), 3.0
    for kw in (dict(dt=0.1), dict(rtol=1e-10, atol=1e-12)):
        res = rotode.integrate(rotode.RigidBody(INERTIA), (0, T), np.r_[Q0, w], method=method,
                               sensitivity=["y0"], **kw)
        np.testing.assert_allclose(res.sensitivity["y0"][-1][:3, :3], expm(-_hat(w) * T),
                                   rtol=0, atol=1e-13)


@pytest.mark.parametrize("method", ["rkmk5", "rkmk8"])
def test_rkmk_adaptive_against_the_one_pass_pair(method):
    # on the group or on the state, tight tolerances: the same derivative of the flow
    y0 = np.r_[Q0, W0]
    got = rotode.integrate(TOP, (0, 2.0), y0, method=method, rtol=1e-11, atol=1e-12,
                           t_eval=[0.7, 2.0], sensitivity=["y0"]).sensitivity["y0"]
    want = rotode.integrate(TOP, (0, 2.0), y0, method="dop853", rtol=1e-12, atol=1e-13,
                            t_eval=[0.7, 2.0], sensitivity=["y0"]).sensitivity["y0"]
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-7)


def test_per_body_torque_parameters_equal_single_runs():
    masses = [1.0, 1.5, 0.7]
    body = rotode.RigidBody(INERTIA, torque=rotode.torque.Gravity(masses, 9.81, [0, 0, 0.3]))
    y0 = np.tile(np.r_[Q0, W0], (3, 1))
    y0[:, 4:] += rng.normal(scale=0.2, size=(3, 3))
    res = rotode.integrate(body, (0, 1), y0, method="cg3", dt=0.05, sensitivity=["mass", "com"])
    for i, m in enumerate(masses):
        one = rotode.RigidBody(INERTIA, torque=rotode.torque.Gravity(m, 9.81, [0, 0, 0.3]))
        single = rotode.integrate(one, (0, 1), y0[i], method="cg3", dt=0.05,
                                  sensitivity=["mass", "com"])
        for p in ("mass", "com"):
            np.testing.assert_array_equal(res.sensitivity[p][i], single.sensitivity[p])


TENSOR = np.array([[1.2, 0.1, -0.05], [0.1, 1.7, 0.08], [-0.05, 0.08, 2.3]])


@pytest.mark.parametrize("method", [m for m in _with(None, "rigid body")
                                    if not methods.get(m).adaptive] + ["dop853", "rkmk8"])
def test_full_inertia_tensor_against_finite_differences(method):
    """A non-diagonal inertia: ``"inertia"`` is (n_t, 6, 6), with respect to [Ixx, Iyy, Izz,
    Ixy, Ixz, Iyz] (symmetric perturbations); central differences of fixed-step runs to 1e-7,
    error-controlled runs at rtol 1e-11 to 1e-5."""
    y0 = np.r_[Q0, W0]
    options = {"normalize": True} if method in ("rk3", "rk4") else {}
    adaptive = methods.get(method).adaptive
    steps = {"rtol": 1e-11, "atol": 1e-13} if adaptive else {"dt": 0.05}
    eps, tol = (1e-4, 1e-5) if adaptive else (1e-6, 1e-7)

    def run(inertia):
        body = rotode.RigidBody(inertia, torque=TOP.torque)
        return rotode.integrate(body, (0, 1.5), y0, method=method, **steps, **options)

    got = rotode.integrate(rotode.RigidBody(TENSOR, torque=TOP.torque), (0, 1.5), y0,
                           method=method, sensitivity=["inertia", "y0"], **steps, **options)
    S = got.sensitivity["inertia"]
    assert S.shape == (got.t.shape[0], 6, 6)
    ref = run(TENSOR).y[-1]
    cols = []
    for a, b in ((0, 0), (1, 1), (2, 2), (0, 1), (0, 2), (1, 2)):
        E = np.zeros((3, 3))
        E[a, b] = E[b, a] = eps
        cols.append((_tangent(run(TENSOR + E).y[-1], ref)
                     - _tangent(run(TENSOR - E).y[-1], ref)) / (2 * eps))
    want = np.array(cols).T
    np.testing.assert_allclose(S[-1], want, rtol=0, atol=tol * np.abs(want).max())


@pytest.mark.parametrize("kw", [dict(method="rk4", dt=0.01), dict(method="ab3", dt=0.01),
                                dict(method="cg3", dt=0.01), dict(method="rkmk8", dt=0.05),
                                dict(method="implicit_midpoint", dt=0.01),
                                dict(method="dop853", rtol=1e-10, atol=1e-12),
                                dict(method="rkmk5", rtol=1e-10, atol=1e-12)])
def test_parts_of_y0_are_its_columns(kw):
    """``"q0"`` and ``"w0"`` are y0's columns 0-2 and 3-5 (fewer directions per pass): the same
    bits where both come from one kind of pass (the fixed grid's passes and replay, the pairs
    on the state), to round-off where y0 rides in an rkmk run's own pass and the parts in the
    replay (same steps, the orientation's tangent by another order of operations); a batch
    per body; and ``"w0"`` with ``"inertia"`` fits in one pass of seven directions."""
    y0 = np.r_[Q0, W0]
    full = rotode.integrate(TOP, (0, 1.0), y0, t_eval=[0.5, 1.0], sensitivity=["y0", "inertia"],
                            **kw)
    parts = rotode.integrate(TOP, (0, 1.0), y0, t_eval=[0.5, 1.0],
                             sensitivity=["w0", "inertia", "q0"], **kw)
    Y = full.sensitivity["y0"]
    assert parts.sensitivity["q0"].shape == parts.sensitivity["w0"].shape == (2, 6, 3)
    assert np.array_equal(parts.y, full.y)
    assert np.array_equal(parts.sensitivity["inertia"], full.sensitivity["inertia"])
    if kw["method"] == "rkmk5":
        np.testing.assert_allclose(parts.sensitivity["q0"], Y[..., :3], rtol=0, atol=1e-12)
        np.testing.assert_allclose(parts.sensitivity["w0"], Y[..., 3:], rtol=0, atol=1e-12)
    else:
        assert np.array_equal(parts.sensitivity["q0"], Y[..., :3])
        assert np.array_equal(parts.sensitivity["w0"], Y[..., 3:])
    batch = rotode.integrate(TOP, (0, 1.0), np.stack([y0, y0 * [1, 1, 1, 1, 2, 1, 1]]),
                             t_eval=[0.5, 1.0], sensitivity=["w0"], **kw)
    assert batch.sensitivity["w0"].shape == (2, 2, 6, 3)
    assert np.array_equal(batch.sensitivity["w0"][0], parts.sensitivity["w0"])


def test_parts_of_y0_are_refused_where_y0_is_not_theirs():
    """``"q0"``/``"w0"`` are a rigid body's; kinematics (whose y0 is the orientation alone)
    and a user's ODE list their own parameters."""
    with pytest.raises(ValueError, match=r"unknown sensitivity parameter 'w0' for kinematics"):
        rotode.integrate(RATE, (0, 1), Q0, method="rk4", dt=0.1, sensitivity=["w0"])
    with pytest.raises(ValueError, match="distinct parameters"):
        rotode.integrate(TOP, (0, 1), np.r_[Q0, W0], method="rk4", dt=0.1,
                         sensitivity=["w0", "w0"])
