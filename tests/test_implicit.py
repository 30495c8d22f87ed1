"""rotode.implicit: implicit midpoint, trapezoid and object trapezoid (Mizerski 2020 secs. 7-11).

References are independent of the module: the exact torque-free motion (rotode.exact), a tight
DOP853 run of the rigid-body right-hand side, dual-number Jacobians, closed-form invariants and
the Kantorovich majorant sequence (docs/implicit-midpoint.md sec. 4).
"""
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from reference import qmat
from scipy.integrate import solve_ivp

import rotode
from rotode import implicit
from rotode.exact import free_rigid_body
from rotode.torque import Gravity

THANDLE = np.array([2.5, 1.4, 1.3])
METHODS = implicit.METHODS


def rotation(rng):
    q = rng.normal(size=4)
    return qmat(q / np.linalg.norm(q))


def state(q0, w0):
    return np.concatenate([q0, w0])[None, :]


def run(method, body, y0, t, options=None, workers=1, save=None):
    y0 = np.atleast_2d(np.asarray(y0, dtype=float))
    t = np.asarray(t, dtype=float)
    save = np.arange(len(t)) if save is None else np.asarray(save, dtype=np.intp)
    return implicit.run(method, body, y0, t, save, options or {}, workers)


def energy(Im, w):
    Im = np.asarray(Im)
    if Im.ndim == 1:
        return 0.5 * np.sum(Im * w * w, axis=-1)
    return 0.5 * np.einsum("...i,ij,...j->...", w, Im, w)


def qdist(a, b):
    """Distance between orientations, blind to the quaternion sign."""
    return np.minimum(np.abs(a - b).max(axis=-1), np.abs(a + b).max(axis=-1))


def slope(hs, errs):
    return np.polyfit(np.log(hs), np.log(errs), 1)[0]


# ---- convergence order against the exact solution ------------------------------------------

@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("inertia_kind", ["principal", "full"])
def test_order_two_against_exact(method, inertia_kind, rng):
    Im = THANDLE if inertia_kind == "principal" else (
        lambda P: P @ np.diag(THANDLE) @ P.T)(rotation(rng))
    w0 = np.array([0.4, 2.0, -0.3])
    q0 = np.array([0.9, 0.1, -0.3, 0.2])
    q0 /= np.linalg.norm(q0)
    t_end = 2.0
    q_ex, w_ex = free_rigid_body(Im, w0, t_end, q0)
    body = rotode.RigidBody(Im)
    hs, errs = [], []
    for n in (40, 80, 160, 320):
        t = np.linspace(0.0, t_end, n + 1)
        y, w, stats = run(method, body, state(q0, w0), t, save=[n])
        assert stats["status"] == 0
        errs.append(max(qdist(y[0, 0, :4], q_ex), np.abs(w[0, 0] - w_ex).max()))
        hs.append(t_end / n)
    assert abs(slope(hs, errs) - 2.0) < 0.2, errs
    assert errs[-1] < 1e-3


# ---- symmetry, invariants ------------------------------------------------------------------

@pytest.mark.parametrize("method", METHODS)
def test_symmetric_forward_backward(method, rng):
    """One step with dt then one with -dt (decreasing grid) returns the state (Mizerski 2020,
    sec. 7).

    (Within the Kantorovich bound: largest-first sub-steps are not symmetric.)"""
    body = rotode.RigidBody(THANDLE)
    for _ in range(5):
        q0 = rng.normal(size=4)
        q0 /= np.linalg.norm(q0)
        w0 = rng.normal(size=3) * 3
        dt = 0.02
        y1, _, s1 = run(method, body, state(q0, w0), [0.0, dt], save=[1])
        y2, _, s2 = run(method, body, y1[:, 0], [dt, 0.0], save=[1])
        assert s1["n_substeps"] == s2["n_substeps"] == 1
        assert np.abs(y1[0, 0, :4] - q0).max() > 1e-3
        assert np.abs(y2[0, 0, :4] - q0).max() < 1e-13
        assert np.abs(y2[0, 0, 4:] - w0).max() < 1e-13


@pytest.mark.parametrize("method", METHODS)
def test_world_angular_momentum_conserved(method, rng):
    """|L| and L itself (world) are conserved to round-off, also across Kantorovich sub-steps."""
    P = rotation(rng)
    Im = P @ np.diag(THANDLE) @ P.T
    body = rotode.RigidBody(Im)
    w0 = np.array([3.0, -8.0, 5.0])
    t = np.linspace(0, 20.0, 401)            # dt = 0.05 and, at dt = 2 below, sub-steps
    for grid in (t, np.linspace(0, 20.0, 11)):
        y, w, stats = run(method, body, state([1, 0, 0, 0], w0), grid)
        L = body.angular_momentum(y[0].T)
        L0 = L[:, 0]
        assert np.abs(L - L0[:, None]).max() < 1e-12 * np.linalg.norm(L0)
    assert stats["n_substeps"] > stats["n_steps"]


def test_object_trapezoid_conserves_energy_exactly():
    """(L1 - L0).v = 0 for v = h/2 A (L0 + L1), L1 = R(-v) L0: E1 = E0 (doc sec. 3)."""
    body = rotode.RigidBody(THANDLE)
    w0 = np.array([0.3, 4.0, 0.2])
    y, w, _ = run("object_trapezoid", body, state([1, 0, 0, 0], w0), np.linspace(0, 50, 501))
    E = energy(THANDLE, w[0])
    assert np.abs(E / E[0] - 1).max() < 1e-13


def _energy_drift(n_steps, dt):
    body = rotode.RigidBody(THANDLE)
    w0 = np.array([0.3, 5.0, 0.2])
    t = np.arange(n_steps + 1) * dt
    y, w, stats = run("implicit_midpoint", body, state([1, 0, 0, 0], w0), t)
    err = energy(THANDLE, w[0]) / energy(THANDLE, w0) - 1
    k = n_steps // 10
    return np.abs(err[:k]).max(), np.abs(err[-k:]).max(), err


def test_energy_bounded_no_drift_1e5_steps():
    first, last, err = _energy_drift(100_000, 0.05)
    assert first > 1e-6                       # the midpoint rule does not conserve E exactly
    assert last < 1.5 * first                 # ... but the error oscillates, it does not grow
    assert abs(np.polyfit(np.arange(err.size), err, 1)[0]) * err.size < 0.1 * first


def test_energy_bounded_no_drift_1e6_steps():
    first, last, err = _energy_drift(1_000_000, 0.05)
    assert last < 1.5 * first
    assert abs(np.polyfit(np.arange(err.size), err, 1)[0]) * err.size < 0.1 * first


# ---- Mizerski 2020 sec. 11: energy change of one (sub-stepped) step ------------------------------

def _seed11_energy_change(method, bound):
    body = rotode.RigidBody(THANDLE)
    g = np.linspace(-50, 50, 26)
    L = np.array([[a, b, 0.0] for a in g for b in g])
    y0 = np.zeros((len(L), 7))
    y0[:, 0] = 1
    y0[:, 4:] = L / THANDLE
    y, w, stats = run(method, body, y0, [0.0, 1.0], {"bound": bound}, save=[1])
    assert stats["status"] == 0
    E0 = energy(THANDLE, y0[:, 4:])
    return np.abs(energy(THANDLE, w[:, 0]) / E0 - 1).max(), stats


def test_seed11_energy_change_euclidean_bound():
    """Mizerski 2020 sec. 11: dt L up to 50 in the z = 0 plane, energy change <= 0.3 %.

    With Mizerski's form of the bound (dt |L| <= C lambda_min, doc eq. (14)), the default.
    """
    rel, stats = _seed11_energy_change("implicit_midpoint", "euclidean")
    assert rel <= 3e-3
    y0 = np.array([[1.0, 0, 0, 0, 20.0, -30.0, 0.0]])
    default = run("implicit_midpoint", rotode.RigidBody(THANDLE), y0, [0.0, 1.0], {}, save=[1])
    explicit = run("implicit_midpoint", rotode.RigidBody(THANDLE), y0, [0.0, 1.0],
                   {"bound": "euclidean"}, save=[1])
    np.testing.assert_array_equal(default[0], explicit[0])
    assert stats["n_substeps"] > 40


def test_seed11_energy_change_inertia_bound():
    """The sharper bound (doc eq. (13)) takes ~1.6x longer sub-steps; the change stays < 0.5 %."""
    rel, stats = _seed11_energy_change("implicit_midpoint", "inertia")
    rel_e, stats_e = _seed11_energy_change("implicit_midpoint", "euclidean")
    assert rel <= 5e-3
    assert stats["n_substeps"] < stats_e["n_substeps"]
    # trapezoid: similar size; object trapezoid: round-off (Mizerski 2020: "dramatically smaller")
    assert _seed11_energy_change("trapezoid", "inertia")[0] <= 3e-3
    assert _seed11_energy_change("object_trapezoid", "inertia")[0] < 1e-12


# ---- the Newton iteration --------------------------------------------------------------------

@pytest.mark.parametrize("method", METHODS)
def test_analytic_jacobian_matches_dual_numbers(method, rng):
    Im = (lambda P: P @ np.diag(THANDLE) @ P.T)(rotation(rng))
    for scale in (0.0, 1e-8, 0.3, 1.0, 2.5):
        for _ in range(4):
            v = rng.normal(size=3) * scale
            lv = rng.normal(size=3) * 2
            F, J, Jd = implicit.residual_jacobian(Im, lv, v, method)
            assert np.abs(J - Jd).max() < 1e-13 * max(1.0, np.abs(J).max())
            # and against central differences
            h = 1e-6
            Jfd = np.column_stack([
                (implicit.residual_jacobian(Im, lv, v + h * e, method)[0]
                 - implicit.residual_jacobian(Im, lv, v - h * e, method)[0]) / (2 * h)
                for e in np.eye(3)])
            assert np.abs(J - Jfd).max() < 1e-7


def _inorm(Im, x):
    return np.sqrt(np.einsum("...i,ij,...j->...", x, Im, x))


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("bound", ["inertia", "euclidean"])
def test_lipschitz_constant_of_the_jacobian(method, bound, rng):
    """||J(v) - J(u)|| <= K |v - u| in the documented norm, K from doc eqs. (11)-(14).

    The returned K includes beta >= 1; divide it out where it is not 1 (Euclidean bound)."""
    P = rotation(rng)
    Im = P @ np.diag([2.5, 1.4, 1.3]) @ P.T
    Ih = P @ np.diag(np.sqrt([2.5, 1.4, 1.3])) @ P.T       # Im^(1/2)
    Ihi = np.linalg.inv(Ih)
    worst = 0.0
    for _ in range(300):
        lv = rng.normal(size=3) * rng.uniform(0.1, 3)
        tr = implicit.newton_trace(Im, lv, 1e-9, method=method, bound=bound)
        inertia_norm = tr["norm"] == "inertia"
        x = np.linalg.norm(lv) / 1.3
        d = 1.0 if method == "trapezoid" else 0.5
        K = implicit.newton_trace(Im, lv, 1.0, method=method, bound=bound)["K"]
        if not inertia_norm:
            K = K * (1 - d * x) if d * x < 1 else {"implicit_midpoint": 0.375,
                                                    "object_trapezoid": 0.75,
                                                    "trapezoid": 2.5}[method] * x
        v = rng.normal(size=3) * rng.uniform(0, 3)
        u = v + rng.normal(size=3) * rng.choice([1e-3, 0.1, 1.0])
        Jv = implicit.residual_jacobian(Im, lv, v, method)[1]
        Ju = implicit.residual_jacobian(Im, lv, u, method)[1]
        if inertia_norm:
            lhs = np.linalg.norm(Ih @ (Jv - Ju) @ Ihi, 2)
            rhs = K * _inorm(Im, v - u)
        else:
            lhs = np.linalg.norm(Jv - Ju, 2)
            rhs = K * np.linalg.norm(v - u)
        worst = max(worst, lhs / rhs)
    assert worst <= 1.0 + 1e-12
    assert worst > (0.1 if method == "trapezoid" else 0.2)    # and not absurdly loose


def test_beta_is_one_in_the_inertia_norm(rng):
    """||J(0)^-1||_I = 1 for midpoint and object trapezoid (doc eq. (12))."""
    P = rotation(rng)
    Im = P @ np.diag(THANDLE) @ P.T
    Ih = P @ np.diag(np.sqrt(THANDLE)) @ P.T
    for method in ("implicit_midpoint", "object_trapezoid"):
        for _ in range(20):
            lv = rng.normal(size=3) * 5
            J0 = implicit.residual_jacobian(Im, lv, np.zeros(3), method)[1]
            B = Ih @ np.linalg.inv(J0) @ np.linalg.inv(Ih)
            assert abs(np.linalg.norm(B, 2) - 1.0) < 1e-12


def _majorant(K, eta, n):
    """Kantorovich's scalar Newton sequence for p(t) = K/2 t^2 - t + eta from t = 0."""
    t = [0.0]
    for _ in range(n):
        tk = t[-1]
        t.append(tk - (0.5 * K * tk * tk - tk + eta) / (K * tk - 1.0))
    return np.array(t)


moments = st.tuples(st.floats(0.2, 5.0), st.floats(0.2, 5.0), st.floats(0.0, 1.0)).map(
    lambda m: np.array([m[0], m[1], abs(m[0] - m[1])
                        + (0.02 + 0.96 * m[2]) * (m[0] + m[1] - abs(m[0] - m[1]))]))
vectors = st.tuples(*[st.floats(-1.0, 1.0)] * 3).map(np.array).filter(
    lambda x: np.linalg.norm(x) > 1e-3)


@given(m=moments, L=vectors, scale=st.floats(0.01, 100.0), frac=st.floats(0.01, 1.0),
       method=st.sampled_from(METHODS), bound=st.sampled_from(["inertia", "euclidean"]),
       sign=st.sampled_from([1.0, -1.0]))
def test_kantorovich_property(m, L, scale, frac, method, bound, sign):
    """Where the documented condition holds, Newton from 0 converges quadratically inside the
    documented radius and its steps are dominated by the Kantorovich majorant (doc sec. 4)."""
    Im = np.diag(m)
    L = L * scale
    dt = sign * frac * implicit.max_step(Im, L, method, bound)
    tr = implicit.newton_trace(Im, L, dt, method=method, bound=bound)
    assert tr["h"] <= 0.5 * (1 + 1e-12)
    assert tr["status"] == 0
    v = np.vstack([np.zeros(3), tr["iterates"]])
    norm = (lambda x: _inorm(Im, x)) if tr["norm"] == "inertia" else (
        lambda x: np.linalg.norm(x, axis=-1))
    assert np.all(norm(v) <= tr["radius"] * (1 + 1e-9) + 1e-300)
    steps = norm(np.diff(v, axis=0))
    tk = _majorant(tr["K"], tr["eta"], len(steps))
    assert np.all(steps <= np.diff(tk) * (1 + 1e-9) + 1e-15 * np.abs(v).max())
    # quadratic: |d_{k+1}| <= K/(2 (1 - K t_k)) |d_k|^2 (Newton-Kantorovich step bound)
    for k in range(len(steps) - 1):
        if steps[k] > 1e-7 * (norm(v[-1]) + 1e-300):
            c = tr["K"] / (2 * (1 - tr["K"] * tk[k + 1]))
            assert steps[k + 1] <= c * steps[k] ** 2 * (1 + 1e-6) + 1e-15
    assert tr["residual"] <= 1e-13 * max(1.0, np.abs(L * dt).max() / m.min())


def test_newton_iterations_and_fixed_point():
    """Newton takes <= 3 iterations at dt = 1/60; the fixed point converges to the same v."""
    L = THANDLE * np.array([0.3, 5.0, 0.2])
    tn = implicit.newton_trace(THANDLE, L, 1 / 60)
    tf = implicit.newton_trace(THANDLE, L, 1 / 60, solver="fixed-point")
    assert tn["status"] == 0 and tf["status"] == 0
    assert len(tn["iterates"]) <= 3
    assert len(tf["iterates"]) > len(tn["iterates"])
    assert np.abs(tn["iterates"][-1] - tf["iterates"][-1]).max() < 1e-15
    # a step far outside the bound: the fixed point diverges or stalls (Mizerski 2020 sec. 8)
    tf = implicit.newton_trace(THANDLE, [20.0, 20.0, 0.0], 1.0, solver="fixed-point",
                               max_iter=50)
    assert tf["status"] != 0


@pytest.mark.parametrize("method", METHODS)
def test_fixed_point_solver_in_run_matches_newton(method):
    body = rotode.RigidBody(THANDLE)
    y0 = state([1, 0, 0, 0], [0.3, 5.0, 0.2])
    t = np.linspace(0, 1, 61)
    yn, _, sn = run(method, body, y0, t)
    yf, _, sf = run(method, body, y0, t, {"solver": "fixed-point"})
    assert sf["status"] == 0
    assert np.abs(yn - yf).max() < 1e-13
    assert sf["newton_iter_mean"] > sn["newton_iter_mean"]


# ---- T-handle at game rates ----------------------------------------------------------------

def _flip_times(t, x):
    s = np.sign(x)
    i = np.flatnonzero(s[1:] != s[:-1])
    return t[i] - x[i] * (t[i + 1] - t[i]) / (x[i + 1] - x[i])


def test_thandle_dt_60hz_100s():
    """dt = 1/60 for 100 s near the intermediate axis: energy and Dzhanibekov flip times."""
    body = rotode.RigidBody(THANDLE)
    w0 = np.array([0.01, 5.0, 0.01])
    t = np.arange(6001) / 60.0
    y, w, stats = run("implicit_midpoint", body, state([1, 0, 0, 0], w0), t)
    assert stats["newton_iter_mean"] <= 3
    E = energy(THANDLE, w[0])
    assert np.abs(E / E[0] - 1).max() <= 1e-3
    _, w_ex = free_rigid_body(THANDLE, w0, t)
    f_num, f_ex = _flip_times(t, w[0, :, 1]), _flip_times(t, w_ex[:, 1])
    assert len(f_ex) >= 6 and len(f_num) == len(f_ex)
    half_period = np.diff(f_ex).mean()
    assert np.abs(f_num - f_ex).max() <= 0.01 * half_period
    assert np.all(np.abs(f_num - f_ex) <= 0.01 * f_ex)


# ---- torque by Strang splitting ------------------------------------------------------------

def _dop853(body, y0, t_end):
    sol = solve_ivp(body, (0, t_end), y0, method="DOP853", rtol=1e-13, atol=1e-13)
    y = sol.y[:, -1]
    return y[:4] / np.linalg.norm(y[:4]), y[4:]


@pytest.mark.parametrize("method", METHODS)
def test_strang_gravity_order_two(method):
    Im = np.array([1.2, 1.0, 0.6])
    body = rotode.RigidBody(Im, torque=Gravity(1.0, 9.81, [0.1, 0.05, 0.4]))
    q0 = np.array([np.cos(0.3), np.sin(0.3), 0, 0])
    w0 = np.array([0.5, -0.2, 6.0])
    t_end = 1.0
    q_ref, w_ref = _dop853(body, np.r_[q0, w0], t_end)
    hs, errs = [], []
    for n in (50, 100, 200, 400):
        y, w, stats = run(method, body, state(q0, w0), np.linspace(0, t_end, n + 1), save=[n])
        errs.append(max(qdist(y[0, 0, :4], q_ref), np.abs(w[0, 0] - w_ref).max()))
        hs.append(t_end / n)
    assert stats["nfev"] == 2 * n           # tau(t, q): one evaluation per half kick
    assert abs(slope(hs, errs) - 2.0) < 0.2, errs


def test_strang_velocity_dependent_torque_order_two():
    Im = THANDLE
    body = rotode.RigidBody(Im, torque=lambda t, q, w: -0.3 * w + np.array([0, 0, np.sin(t)]))
    q0 = np.array([1.0, 0, 0, 0])
    w0 = np.array([0.5, 3.0, 0.2])
    q_ref, w_ref = _dop853(body, np.r_[q0, w0], 1.0)
    hs, errs = [], []
    for n in (25, 50, 100, 200):
        y, w, stats = run("implicit_midpoint", body, state(q0, w0), np.linspace(0, 1, n + 1),
                          save=[n])
        errs.append(max(qdist(y[0, 0, :4], q_ref), np.abs(w[0, 0] - w_ref).max()))
        hs.append(1.0 / n)
    assert stats["nfev"] == 4 * n
    assert abs(slope(hs, errs) - 2.0) < 0.2, errs


def test_torque_errors_are_reraised():
    def bad(t, q, w):
        raise RuntimeError("boom")
    body = rotode.RigidBody(THANDLE, torque=bad)
    with pytest.raises(RuntimeError, match="boom"):
        run("implicit_midpoint", body, state([1, 0, 0, 0], [0, 1, 0]), [0, 0.1])


# ---- batching ------------------------------------------------------------------------------

@pytest.mark.parametrize("method", METHODS)
def test_batched_bit_identical(method, rng):
    N = 7
    bodies = [rotode.RigidBody(rng.uniform(1, 2, size=3),
                               torque=None if i % 2 else Gravity(1.0, 9.81, [0, 0, 0.2]))
              for i in range(N)]
    y0 = np.hstack([rng.normal(size=(N, 4)), rng.normal(size=(N, 3)) * 4])
    t = np.linspace(0, 2, 41)
    save = np.array([0, 10, 40])
    yb, wb, _ = run(method, bodies, y0, t, workers=1, save=save)
    y2, w2, _ = run(method, bodies, y0, t, workers=2, save=save)
    assert np.array_equal(yb, y2) and np.array_equal(wb, w2)
    for i in range(N):
        ys, ws, _ = run(method, bodies[i], y0[i:i + 1], t, save=save)
        assert np.array_equal(ys[0], yb[i]) and np.array_equal(ws[0], wb[i])


def test_shared_model_and_saves(rng):
    body = rotode.RigidBody(THANDLE)
    y0 = np.hstack([np.tile([1.0, 0, 0, 0], (3, 1)), rng.normal(size=(3, 3))])
    t = np.linspace(0, 1, 11)
    y, w, stats = run("implicit_midpoint", body, y0, t, save=[0, 5, 10])
    assert y.shape == (3, 3, 7) and w.shape == (3, 3, 3)
    assert np.allclose(y[:, 0], y0, rtol=0, atol=1e-15)
    assert np.array_equal(y[:, :, 4:], w)
    assert stats["n_steps"] == 10 and stats["status"] == 0


# ---- failures and bad input ----------------------------------------------------------------

def test_failure_reports_and_nans():
    body = rotode.RigidBody(THANDLE)
    y0 = state([1, 0, 0, 0], [0.3, 5.0, 0.2])
    t = np.linspace(0, 1, 11)
    y, w, stats = run("implicit_midpoint", body, y0, t, {"max_iter": 1})
    assert stats["status"] != 0 and "converge" in stats["message"]
    assert np.isnan(y[0, 1:]).all() and np.isfinite(y[0, 0]).all()
    y, w, stats = run("implicit_midpoint", body, state([1, 0, 0, 0], [0, 50, 0]), [0, 5.0],
                      {"max_substeps": 3})
    assert stats["status"] != 0 and "max_substeps" in stats["message"]
    assert np.isnan(y[0, 1]).all()


def test_bad_input():
    body = rotode.RigidBody(THANDLE)
    y0 = state([1, 0, 0, 0], [0, 1, 0])
    t = [0.0, 0.1]
    with pytest.raises(ValueError, match="positive definite"):
        rotode.RigidBody([[1, 0, 0], [0, -1, 0], [0, 0, 1]])
    with pytest.raises(ValueError, match="inertia"):
        implicit.newton_trace([1.0, -2.0, 1.0], [1, 0, 0], 0.1)
    with pytest.raises(ValueError, match="dt"):
        implicit.newton_trace(THANDLE, [1, 0, 0], 0.0)
    with pytest.raises(ValueError, match="dt"):
        implicit.newton_trace(THANDLE, [1, 0, 0], np.inf)
    with pytest.raises(ValueError, match="finite"):
        run("implicit_midpoint", body, state([1, 0, 0, 0], [0, np.nan, 0]), t)
    with pytest.raises(ValueError, match="nonzero"):
        run("implicit_midpoint", body, state([0, 0, 0, 0], [0, 1, 0]), t)
    with pytest.raises(ValueError, match="solver"):
        run("implicit_midpoint", body, y0, t, {"solver": "broyden"})
    with pytest.raises(ValueError, match="bound"):
        run("implicit_midpoint", body, y0, t, {"bound": "loose"})
    with pytest.raises(TypeError, match="unexpected option"):
        run("implicit_midpoint", body, y0, t, {"frame": "body"})
    with pytest.raises(ValueError, match="tol"):
        run("implicit_midpoint", body, y0, t, {"tol": 0.0})
    with pytest.raises(ValueError, match="max_iter"):
        run("implicit_midpoint", body, y0, t, {"max_iter": 0})
    with pytest.raises(ValueError, match="method"):
        run("rk4", body, y0, t)
    with pytest.raises(ValueError, match="monotonic"):
        run("implicit_midpoint", body, y0, [0.0, 0.1, 0.1])
    with pytest.raises(ValueError, match="gyroscopic"):
        run("implicit_midpoint", rotode.RigidBody(THANDLE, gyroscopic=False), y0, t)
    with pytest.raises(TypeError, match="model"):
        run("implicit_midpoint", rotode.ExpCoordRigidBody(THANDLE), y0, t)
    with pytest.raises(ValueError, match="N = 1"):
        run("implicit_midpoint", [body, body], y0, t)
    with pytest.raises(ValueError, match="shape"):
        run("implicit_midpoint", body, np.zeros((1, 6)), t)
    with pytest.raises(ValueError, match="workers"):
        run("implicit_midpoint", body, y0, t, workers=0)


# ---- the demo helper -----------------------------------------------------------------------

def test_thandle_comparison():
    from rotode.studies.thandle import explicit_euler, thandle_comparison
    r = thandle_comparison(t_end=40.0)
    assert r["intermediate_axis"] == 1 and r["t"].shape == (2401,)
    ee, im, ex = r["explicit_euler"], r["implicit_midpoint"], r["exact"]
    assert np.abs(ex["rel_energy_error"]).max() < 1e-12
    assert np.abs(im["rel_energy_error"]).max() < 1e-3
    assert np.abs(ee["rel_energy_error"]).max() > 0.05     # the game-engine step gains energy
    assert len(ex["flip_times"]) == len(im["flip_times"]) == 3
    assert np.abs(im["flip_times"] - ex["flip_times"]).max() < 0.05
    # explicit Euler is first order (independent check of the demo's baseline)
    w0 = np.array([0.3, 2.0, 0.2])
    _, w_ex = free_rigid_body(THANDLE, w0, 1.0)
    errs = [np.abs(explicit_euler(THANDLE, w0, [1, 0, 0, 0], 1.0 / n, n)[1][-1] - w_ex).max()
            for n in (100, 200, 400)]
    assert abs(slope([1e-2, 5e-3, 2.5e-3], errs) - 1.0) < 0.2
    with pytest.raises(ValueError, match="dt"):
        thandle_comparison(t_end=1.0, dt=0.0)
    with pytest.raises(ValueError, match="t_end"):
        thandle_comparison(t_end=-1.0)
