"""Error-controlled integration (rtol/atol): the embedded pairs BS3, DOPRI5 and DOP853 stepped by
the driver, against SciPy's solve_ivp (same controller), exact solutions and their own orders."""
import numpy as np
import pytest
from scipy.integrate import solve_ivp

import rotode
from rotode import methods
from rotode.exact import free_rigid_body

ADAPTIVE = [m for m in methods.names() if methods.get(m).adaptive]
ADAPTIVE_RB = [m for m in ADAPTIVE if "rigid body" in methods.get(m).models]
W = rotode.omega.Sinusoid(amplitude=np.pi / 2, rate=2 * np.pi / 10,
                          phase=[0, 2 * np.pi / 3, 4 * np.pi / 3])     # Rucker 2018 benchmark
THANDLE = np.array([2.5, 1.4, 1.3])
Y_TH = np.array([1.0, 0, 0, 0, 0.01, 5.0, 0.01])


def angle(q, r):
    """Angle (rad) between the rotations of quaternions q and r (any length)."""
    q = q / np.linalg.norm(q, axis=-1, keepdims=True)
    r = r / np.linalg.norm(r, axis=-1, keepdims=True)
    return 2 * np.arcsin(np.minimum(1.0, np.linalg.norm(
        rotode.quaternion.multiply(rotode.quaternion.conjugate(r), q)[..., 1:], axis=-1)))


def thandle_exact(t):
    return free_rigid_body(THANDLE, Y_TH[4:], t, q0=Y_TH[:4])


@pytest.fixture(scope="module")
def kin_reference():
    return rotode.integrate(W, (0, 10), [1, 0, 0, 0], method="magnus8", dt=1e-3).q[-1]


def test_the_registry_marks_the_pairs_adaptive():
    assert set(ADAPTIVE) == {"bs3", "dopri5", "dop853", "rkmk3", "rkmk5", "rkmk8", "magnus6",
                             "magnus8"}
    for m in ADAPTIVE:
        expected = ({"kinematics"} if m.startswith("magnus")
                    else {"kinematics", "rigid body", "ode"})
        assert set(methods.get(m).models) == expected


@pytest.mark.parametrize("method, order", [("bs3", 3), ("dopri5", 5), ("dop853", 8),
                                           ("rkmk3", 3), ("rkmk5", 5), ("rkmk8", 8)])
def test_fixed_steps_converge_at_the_order(method, order, kin_reference):
    """With ``dt=`` the pairs are fixed-step methods of their order (the rigid body, a
    nonlinear problem; on the linear kinematic equation DOPRI5 even shows order 6)."""
    body = rotode.RigidBody(THANDLE)
    ref = free_rigid_body(THANDLE, Y_TH[4:], 5.0, q0=Y_TH[:4])[1]
    ns = [10, 14, 20] if order == 8 else [25, 50, 100, 200]
    errs = [np.linalg.norm(rotode.integrate(body, (0, 5), Y_TH, method=method,
                                            dt=5 / n).w[-1] - ref) for n in ns]
    slope = -np.polyfit(np.log(ns), np.log(errs), 1)[0]
    assert abs(slope - order) < 0.5, (slope, errs)
    ns = [15, 20, 30] if order == 8 else [50, 100, 200]
    errs = [angle(rotode.integrate(W, (0, 10), [1, 0, 0, 0], method=method, dt=10 / n).q[-1],
                  kin_reference) for n in ns]
    slope = -np.polyfit(np.log(ns), np.log(errs), 1)[0]
    assert order - 0.4 < slope < order + 1.4, (slope, errs)


@pytest.mark.parametrize("method, scipy_method", [("bs3", "RK23"), ("dopri5", "RK45"),
                                                  ("dop853", "DOP853")])
@pytest.mark.parametrize("case", ["kinematics", "rigid body"])
def test_same_steps_and_answer_as_scipy(method, scipy_method, case):
    rtol, atol = 1e-8, 1e-10
    if case == "kinematics":
        model = rotode.QuaternionKinematics(W)
        y0, span = np.array([1.0, 0, 0, 0]), (0, 10)
    else:
        model = rotode.RigidBody([1, 1, 0.5], torque=rotode.torque.Gravity(1.0, 1.0, [0, 0, 1]))
        y0, span = np.array([1.0, 0, 0, 0, 1.5, 0, 1]), (0, 10)
    res = rotode.integrate(model, span, y0, method=method, rtol=rtol, atol=atol)
    ref = solve_ivp(model, span, y0, method=scipy_method, rtol=rtol, atol=atol)
    assert res.success and ref.success
    n_scipy = len(ref.t) - 1
    assert abs(res.stats["n_steps"] - n_scipy) <= 0.05 * n_scipy, (res.stats, n_scipy)
    assert np.abs(res.y[-1] - ref.y[:, -1]).max() < 10 * rtol * np.abs(ref.y).max()


@pytest.mark.parametrize("method", ADAPTIVE)
def test_tolerance_proportionality(method, kin_reference):
    rtols = 10.0 ** -np.arange(4, 13, 2)
    errs = [angle(rotode.integrate(W, (0, 10), [1, 0, 0, 0], method=method, rtol=r,
                                   atol=r * 1e-2).q[-1], kin_reference) for r in rtols]
    slopes = np.diff(np.log10(errs)) / np.diff(np.log10(rtols))
    assert np.all((slopes > 0.5) & (slopes < 1.5)), (slopes, errs)
    assert np.polyfit(np.log10(rtols), np.log10(errs), 1)[0] == pytest.approx(1.0, abs=0.3)
    if method not in ADAPTIVE_RB:
        return
    body = rotode.RigidBody(THANDLE)
    errs = [np.linalg.norm(rotode.integrate(body, (0, 20), Y_TH, method=method, rtol=r,
                                            atol=r * 1e-2).w[-1] - thandle_exact(20.0)[1])
            for r in rtols[:4]]
    assert np.polyfit(np.log10(rtols[:4]), np.log10(errs), 1)[0] == pytest.approx(1.0, abs=0.3)


@pytest.mark.parametrize("method", ADAPTIVE_RB)
def test_t_eval_is_served_by_dense_output_at_the_method_accuracy(method):
    body = rotode.RigidBody(THANDLE)
    ts = np.linspace(0, 20, 57)
    plain = rotode.integrate(body, (0, 20), Y_TH, method=method, rtol=1e-10, atol=1e-12)
    dense = rotode.integrate(body, (0, 20), Y_TH, method=method, rtol=1e-10, atol=1e-12,
                             t_eval=ts)
    # the outputs do not shorten the steps
    assert dense.stats["n_steps"] == plain.stats["n_steps"]
    np.testing.assert_array_equal(dense.y[-1], plain.y[-1])
    np.testing.assert_array_equal(dense.t, ts)
    q_ex, w_ex = thandle_exact(ts)
    assert np.abs(dense.w - w_ex).max() < 1e-7
    assert angle(dense.q, q_ex).max() < 1e-7


@pytest.mark.parametrize("method", ADAPTIVE_RB)
@pytest.mark.parametrize("workers", [1, 2])
def test_batched_equals_single_runs_bit_for_bit(method, workers):
    rng = np.random.default_rng(5)
    q0 = rng.normal(size=(6, 4))
    w0 = rng.normal(size=(6, 3)) * [1, 3, 0.5]
    y0 = np.hstack([q0 / np.linalg.norm(q0, axis=1)[:, None], w0])
    body = rotode.RigidBody(THANDLE)
    ts = np.linspace(0, 5, 11)
    batch = rotode.integrate(body, (0, 5), y0, method=method, rtol=1e-7, t_eval=ts,
                             workers=workers)
    steps = set()
    for i in range(6):
        one = rotode.integrate(body, (0, 5), y0[i], method=method, rtol=1e-7, t_eval=ts)
        np.testing.assert_array_equal(batch.y[i], one.y)
        steps.add(one.stats["n_steps"])
    assert len(steps) > 1                                  # each body chose its own steps
    assert batch.stats["n_steps"] == max(steps)


def test_defaults_and_the_fixed_step_path_are_distinct():
    res = rotode.integrate(W, (0, 10), [1, 0, 0, 0], method="dop853")   # SciPy's defaults
    tight = rotode.integrate(W, (0, 10), [1, 0, 0, 0], method="dop853", rtol=1e-3, atol=1e-6)
    np.testing.assert_array_equal(res.y, tight.y)
    assert res.t.tolist() == [0.0, 10.0] and "n_rejected" in res.stats
    fixed = rotode.integrate(W, (0, 10), [1, 0, 0, 0], method="dop853", dt=0.5)
    assert fixed.stats["n_steps"] == 20 and "n_rejected" not in fixed.stats


@pytest.mark.parametrize("kwargs, error, match", [
    ({"rtol": 0.0}, ValueError, "rtol"),
    ({"rtol": -1e-6}, ValueError, "rtol"),
    ({"rtol": float("nan")}, ValueError, "rtol"),
    ({"atol": -1.0}, ValueError, "atol"),
    ({"atol": float("nan")}, ValueError, "atol"),
    ({"atol": [1e-6, 1e-6]}, ValueError, "atol"),
    ({"first_step": 0.0}, ValueError, "first_step"),
    ({"first_step": 100.0}, ValueError, "first_step"),
    ({"max_step": -1.0}, ValueError, "max_step"),
    ({"max_steps": 0}, ValueError, "max_steps"),
    ({"dt": 0.1, "rtol": 1e-6}, ValueError, "not both"),
    ({"dt": 0.1, "first_step": 0.01}, ValueError, "drop `dt`"),
    ({"save_every": 2}, ValueError, "save_every"),
])
def test_bad_tolerances_are_refused(kwargs, error, match):
    with pytest.raises(error, match=match):
        rotode.integrate(W, (0, 10), [1, 0, 0, 0], method="dopri5", **kwargs)


def test_rtol_for_a_fixed_step_method_names_the_adaptive_ones():
    with pytest.raises(ValueError, match="no error estimate.*dop853"):
        rotode.integrate(W, (0, 1), [1, 0, 0, 0], method="rk4", rtol=1e-6)
    with pytest.raises(TypeError, match="`dt` is required"):
        rotode.integrate(W, (0, 1), [1, 0, 0, 0], method="rk4")


def test_tiny_rtol_is_raised_with_a_warning_as_in_scipy():
    with pytest.warns(UserWarning, match="rtol"):
        res = rotode.integrate(W, (0, 1), [1, 0, 0, 0], method="dop853", rtol=1e-20,
                               atol=1e-12)
    assert res.success


def test_failures_are_reported_never_silent():
    res = rotode.integrate(W, (0, 10), [1, 0, 0, 0], method="dopri5", rtol=1e-10,
                           max_steps=5)
    assert res.status == -1 and not res.success and "max_steps" in res.message
    assert np.isnan(res.y[-1]).all() and np.isfinite(res.y[0]).all()
    # a torque that overflows the state: every trial step is non-finite and rejected
    blow_up = rotode.RigidBody(THANDLE, torque=rotode.torque.Constant([0, 0, 1e308]))
    res = rotode.integrate(blow_up, (0, 10), [1, 0, 0, 0, 0, 0, 1.0], method="dop853",
                           rtol=1e-6)
    assert res.status == -1 and not res.success
    assert "spacing of floats" in res.message and np.isnan(res.y[-1]).all()


def test_the_norm_gain_applies_to_the_adaptive_kinematics():
    drift = rotode.integrate(W, (0, 50), [1, 0, 0, 0], method="dopri5", rtol=1e-5)
    held = rotode.integrate(rotode.QuaternionKinematics(W, norm_gain=1.0), (0, 50),
                            [1, 0, 0, 0], method="dopri5", rtol=1e-5)
    assert abs(np.linalg.norm(held.q[-1]) - 1) < abs(np.linalg.norm(drift.q[-1]) - 1)


# ---- Runge-Kutta-Munthe-Kaas (rotode/rkmk.pxd) ----------------------------------------------

RKMK = ["rkmk5", "rkmk8"]


@pytest.mark.parametrize("method", RKMK)
def test_rkmk_keeps_the_quaternion_unit(method):
    """|q| - 1 <= 1e-13 after 1e5 steps (each step multiplies by exp(v/2), a unit quaternion,
    and retracts the product's rounding); the pairs on the non-unit quaternion drift by
    orders of magnitude more over the same run."""
    res = rotode.integrate(W, (0, 100), [1.0, 0, 0, 0], method=method, dt=1e-3)
    assert res.stats["n_steps"] == 100_000
    assert np.abs(np.linalg.norm(res.q, axis=-1) - 1).max() <= 1e-13
    body = rotode.RigidBody([1, 1, 0.5], torque=rotode.torque.Gravity(1.0, 1.0, [0, 0, 1]))
    res = rotode.integrate(body, (0, 100), [1.0, 0, 0, 0, 1.5, 0, 1], method=method, dt=1e-3)
    assert np.abs(np.linalg.norm(res.q, axis=-1) - 1).max() <= 1e-13
    adaptive = rotode.integrate(body, (0, 100), [1.0, 0, 0, 0, 1.5, 0, 1], method=method,
                                rtol=1e-6, t_eval=np.linspace(0, 100, 201))
    assert np.abs(np.linalg.norm(adaptive.q, axis=-1) - 1).max() <= 1e-14  # dense output too
    drift = rotode.integrate(body, (0, 100), [1.0, 0, 0, 0, 1.5, 0, 1],
                             method="dop853" if method == "rkmk8" else "dopri5", rtol=1e-6)
    assert abs(np.linalg.norm(drift.q[-1]) - 1) > 1e-9


@pytest.mark.parametrize("method, order", [("rkmk5", 5), ("rkmk8", 8)])
@pytest.mark.parametrize("frame", ["body", "world"])
def test_rkmk_order_in_both_frames(method, order, frame):
    """The algebra equation v' = T(-v)^-1 w (body) / T(v)^-1 w (world) of either frame gives
    the method's order on the benchmark (reference: magnus8 with tiny steps)."""
    ref = rotode.integrate(W, (0, 10), [1, 0, 0, 0], method="magnus8", dt=1e-3,
                           frame=frame).q[-1]
    ns = [15, 20, 30] if order == 8 else [50, 100, 200]
    errs = [angle(rotode.integrate(W, (0, 10), [1, 0, 0, 0], method=method, dt=10 / n,
                                   frame=frame).q[-1], ref) for n in ns]
    slope = -np.polyfit(np.log(ns), np.log(errs), 1)[0]
    assert order - 0.4 < slope < order + 1.4, (slope, errs)


@pytest.mark.parametrize("method", RKMK)
def test_rkmk_reaches_the_lagrange_top_and_thandle_at_tight_tolerances(method):
    """Against the exact T-handle: final angle error below 1e-9 rad at rtol 1e-12 (the
    separatrix amplifies errors), and the Lagrange top agrees with DOP853 at rtol 1e-13."""
    q_ex = thandle_exact(10.0)[0]
    res = rotode.integrate(rotode.RigidBody(THANDLE), (0, 10), Y_TH, method=method,
                           rtol=1e-12, atol=1e-14)
    assert angle(res.q[-1], q_ex) < 1e-9 and res.stats["n_rejected"] <= 5
    top = rotode.RigidBody([1, 1, 0.5], torque=rotode.torque.Gravity(1.0, 1.0, [0, 0, 1]))
    y0 = [1.0, 0, 0, 0, 1.5, 0, 1]
    ref = rotode.integrate(top, (0, 20), y0, method="dop853", rtol=1e-13, atol=1e-15)
    res = rotode.integrate(top, (0, 20), y0, method=method, rtol=1e-10, atol=1e-12)
    assert angle(res.q[-1], ref.q[-1]) < 1e-7
    np.testing.assert_allclose(res.w[-1], ref.w[-1], atol=1e-7)


def test_rkmk_takes_no_quaternion_norm_options():
    with pytest.raises(TypeError, match="norm_gain"):
        rotode.integrate(W, (0, 1), [1, 0, 0, 0], method="rkmk5", rtol=1e-6, norm_gain=1.0)
    with pytest.raises(TypeError, match="normalize"):
        rotode.integrate(rotode.RigidBody(THANDLE), (0, 1), Y_TH, method="rkmk8", rtol=1e-6,
                         normalize=True)


# ---- adaptive Magnus (an embedded lower-order Magnus method on its own Gauss nodes) -----------

MAGNUS = ["magnus6", "magnus8"]


@pytest.mark.parametrize("method", MAGNUS)
@pytest.mark.parametrize("frame", ["body", "world"])
def test_adaptive_magnus_meets_the_tolerance_in_both_frames(method, frame):
    ref = rotode.integrate(W, (0, 10), [1, 0, 0, 0], method="magnus8", dt=1e-3,
                           frame=frame).q[-1]
    errs, evals = [], []
    for rtol in (1e-6, 1e-8, 1e-10):
        res = rotode.integrate(W, (0, 10), [1, 0, 0, 0], method=method, rtol=rtol,
                               atol=rtol * 1e-3, frame=frame)
        assert res.success and res.stats["n_rejected"] <= 3
        errs.append(angle(res.q[-1], ref))
        evals.append(res.nfev)
        # no extra w(t) evaluations: the nodes of each trial step (the method's and its
        # embedded method's), the first step's w(t0) and the outputs' w
        spec = rotode.methods.get(method)
        n_nodes = len(spec.nodes) + len(spec.embedded.nodes)
        trials = res.stats["n_steps"] + res.stats["n_rejected"]
        assert res.nfev == n_nodes * trials + 1 + 2
    assert all(e < 10 * r for e, r in zip(errs, (1e-6, 1e-8, 1e-10), strict=True))
    assert evals[0] < evals[1] < evals[2]


@pytest.mark.parametrize("method", MAGNUS)
def test_adaptive_magnus_outputs_are_magnus_steps_at_the_method_accuracy(method):
    ts = np.linspace(0, 10, 41)
    plain = rotode.integrate(W, (0, 10), [1, 0, 0, 0], method=method, rtol=1e-10, atol=1e-13)
    dense = rotode.integrate(W, (0, 10), [1, 0, 0, 0], method=method, rtol=1e-10, atol=1e-13,
                             t_eval=ts)
    assert dense.stats["n_steps"] == plain.stats["n_steps"]
    np.testing.assert_array_equal(dense.q[-1], plain.q[-1])
    ref = rotode.integrate(W, (0, 10), [1, 0, 0, 0], method="magnus8", dt=1e-3, t_eval=ts)
    assert angle(dense.q, ref.q).max() < 1e-9
    assert np.abs(np.linalg.norm(dense.q, axis=-1) - 1).max() < 1e-15


@pytest.mark.parametrize("method", MAGNUS)
@pytest.mark.parametrize("workers", [1, 2])
def test_adaptive_magnus_batch_equals_single_runs(method, workers):
    rates = np.random.default_rng(2).normal(size=(5, 3)) * [3, 1, 0.3]
    q0 = np.tile([1.0, 0, 0, 0], (5, 1))
    batch = rotode.integrate(rates, (0, 5), q0, method=method, rtol=1e-8, workers=workers,
                             t_eval=[0, 2.5, 5])
    steps = set()
    for i in range(5):
        one = rotode.integrate(rates[i], (0, 5), q0[i], method=method, rtol=1e-8,
                               t_eval=[0, 2.5, 5])
        np.testing.assert_array_equal(batch.y[i], one.y)
        steps.add(one.stats["n_steps"])
        # constant rate: the exact answer is one rotation
        exact = rotode.quaternion.multiply(q0[i], rotode.quaternion.exp(np.r_[0, rates[i] * 2.5]))
        assert angle(one.q[-1], exact) < 1e-12
    assert len(steps) > 1


def test_fixed_step_magnus_is_unchanged_by_error_control():
    """``dt=`` keeps the fixed-step kernel: the same bits as the step-by-step solver class."""
    from scipy.integrate import solve_ivp
    sol = solve_ivp(rotode.QuaternionKinematics(W), (0, 10), [1.0, 0, 0, 0],
                    method=rotode.Magnus8, step=0.05)
    res = rotode.integrate(W, (0, 10), [1.0, 0, 0, 0], method="magnus8", dt=0.05)
    np.testing.assert_array_equal(sol.y.T, res.q)


TOP = rotode.RigidBody([1, 1, 0.5], torque=rotode.torque.Gravity(1.0, 1.0, [0, 0, 1]))
Y_TOP = np.array([1.0, 0, 0, 0, 1.5, 0, 1])


@pytest.fixture(scope="module")
def top_reference():
    """The upright Lagrange top at t = 20 s, two ways: DOP853 at rtol 1e-13 and rkmk8 at
    rtol 1e-13 agree to ~1e-12 rad."""
    a = rotode.integrate(TOP, (0, 20), Y_TOP, method="dop853", rtol=1e-13, atol=1e-15)
    b = rotode.integrate(TOP, (0, 20), Y_TOP, method="rkmk8", rtol=1e-13, atol=1e-15)
    assert angle(a.q[-1], b.q[-1]) < 1e-11
    return a.q[-1]


@pytest.mark.parametrize("method", ADAPTIVE_RB)
def test_tolerance_proportionality_on_the_lagrange_top(method, top_reference):
    rtols = 10.0 ** -np.arange(4, 11, 2)
    errs = [angle(rotode.integrate(TOP, (0, 20), Y_TOP, method=method, rtol=r,
                                   atol=r * 1e-2).q[-1], top_reference) for r in rtols]
    slopes = np.diff(np.log10(errs)) / np.diff(np.log10(rtols))
    assert np.all((slopes > 0.5) & (slopes < 1.5)), (slopes, errs)
    assert np.polyfit(np.log10(rtols), np.log10(errs), 1)[0] == pytest.approx(1.0, abs=0.3)


@pytest.mark.parametrize("method, order", [("rkmk3", 3), ("rkmk5", 5), ("rkmk8", 8)])
def test_rkmk_order_on_the_lagrange_top(method, order, top_reference):
    ns = {3: [400, 800, 1600], 5: [200, 400, 800], 8: [100, 140, 200]}[order]
    errs = [angle(rotode.integrate(TOP, (0, 20), Y_TOP, method=method, dt=20 / n).q[-1],
                  top_reference) for n in ns]
    slope = -np.polyfit(np.log(ns), np.log(errs), 1)[0]
    assert order - 0.4 < slope < order + 1.4, (slope, errs)    # (rkmk8: 8.9, pre-asymptotic)
